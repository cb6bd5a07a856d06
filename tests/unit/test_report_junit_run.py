"""Our JUnit file (--rdma-junit) from a run of the demo project, its path by ini and env, and no file unasked."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from report_helpers import make_project


def suites(path: Path) -> dict[str, ET.Element]:
    return {suite.get("name") or "": suite for suite in ET.parse(path).getroot().iter("testsuite")}


def properties(element: ET.Element) -> dict[str, str]:
    return {p.get("name") or "": p.get("value") or "" for p in element.find("properties") or []}


def test_one_testsuite_per_device_and_a_testcase_per_check(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester)  # the deviations are waived
    pytester.runpytest_subprocess("-n", "2", "--rdma-expectations", str(expect), "--rdma-junit", "out/j.xml")
    root = ET.parse(pytester.path / "out" / "j.xml").getroot()
    # junit-10.xsd gives <testsuites> no skipped count: each <testsuite> has one.
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == ("testsuites", "10", "0", "0")
    found = suites(pytester.path / "out" / "j.xml")
    assert sorted(found) == ["rxe0 (rxe)", "siw0 (siw)"]
    siw = found["siw0 (siw)"]
    assert (siw.get("tests"), siw.get("skipped")) == ("5", "3")
    assert properties(siw)["transport"] == "iw" and properties(siw)["driver"] == "siw"
    cases = {case.get("name"): case for case in siw.iter("testcase")}
    assert sorted(cases) == [
        f"keeps-promise[{v}]" for v in ("blocked", "conforming", "deviant", "rc-only", "unreached")
    ]
    assert {case.get("classname") for case in cases.values()} == {"siw.ibv_demo"}, "dashboards group: driver, verb"
    waived = cases["keeps-promise[deviant]"]
    skipped = waived.find("skipped")
    assert skipped is not None and skipped.get("type") == "waived"
    props = properties(waived)
    assert (props["driver"], props["device"], props["verb"], props["claim"], props["outcome"]) == (
        "siw",
        "siw0",
        "ibv_demo",
        "keeps-promise",
        "waived",
    )
    assert (props["source"], props["decided_by"], props["stable_id"]) == (
        "ibv_demo(3) RETURN VALUE",
        "provider",
        "test_ibv_demo[keeps-promise-deviant]",
    )
    assert props["claim_text"] == "a mask with an undefined bit is refused with EINVAL"
    assert props["reproducer_c"] == "siw0/ibv_demo.keeps-promise-deviant.c"
    unsupported = cases["keeps-promise[rc-only]"].find("skipped")
    assert unsupported is not None and unsupported.get("message") == "unsupported: attr.max_qp_wr = 0"
    unreached = found["rxe0 (rxe)"].find(".//testcase[@name='keeps-promise[unreached]']/skipped")
    assert unreached is not None and unreached.get("type") == "not-exercised"
    assert cases["keeps-promise[conforming]"].find("skipped") is None
    assert cases["keeps-promise[conforming]"].find("failure") is None


def test_the_junit_path_from_the_ini_file_and_the_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    expect = make_project(pytester, waivers={})
    pytester.makeini("[pytest]\nrdma_catalogue_extra = rdma_demo:VERBS\nrdma_junit = from-ini.xml\n")
    monkeypatch.setenv("RDMA_JUNIT", "from-env.xml")
    # The environment wins over the ini file (a CI's variable over a checked-in file).
    pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "rxe0 and deviant")
    assert (pytester.path / "from-env.xml").exists() and not (pytester.path / "from-ini.xml").exists()
    failure = ET.parse(pytester.path / "from-env.xml").find(".//testcase/failure")
    assert failure is not None and failure.get("type") == "deviation"
    monkeypatch.delenv("RDMA_JUNIT")
    pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "-k", "rxe0 and conforming")
    assert (pytester.path / "from-ini.xml").exists()


def test_no_reporter_files_unless_asked(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={})
    project = sorted(p.name for p in pytester.path.iterdir())
    pytester.runpytest(
        "-p", "no:xdist", "-p", "no:cacheprovider", "--rdma-expectations", str(expect), "-k", "not deviant"
    )
    assert sorted(p.name for p in pytester.path.iterdir()) == project
    # A deviation's reproducers are written wherever it is reported: that is what they are for.
    pytester.runpytest("-p", "no:xdist", "-p", "no:cacheprovider", "--rdma-expectations", str(expect))
    assert sorted(p.name for p in pytester.path.iterdir()) == sorted([*project, "rdma-reproducers"])
