"""Guard findings reach the JSON record and the JUnit file; a crashed or interrupted check keeps its facts there.

Pure reporting logic, on the host: the finding is attached through the guards' own path
(guard.findings.attach at teardown, copied onto the report by guard/summary.py), as the leak
and kernel-log guards do in the lab; only the measurement that would find it needs a device.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from report_helpers import TESTS, make_project, node, records

LEAK = {"rxe0": {"pd": 1}}
KERNEL = {
    "kinds": ["warning"],
    "lines": ["WARNING: CPU: 0 PID: 7 at demo", "demo warning 1234"],
    "from_user_space": True,
    "lost": False,
}

# The demo checks, plus a fixture that attaches a finding to the rxe0 deviant check at teardown.
FINDINGS_TESTS = (
    TESTS
    + f"""
import pytest

LEAK = {LEAK!r}
KERNEL = {KERNEL!r}


@pytest.fixture(autouse=True)
def guard_finding(request):
    yield
    from pytest_rdma.guard.findings import KERNEL_LOG_FIELD, LEAK_FIELD, attach

    if request.node.callspec.id == "rxe0-keeps-promise-deviant":
        attach(request.node, LEAK_FIELD, LEAK, "rdma leak", "rxe0: +1 pd")
        attach(request.node, KERNEL_LOG_FIELD, KERNEL, "rdma kernel log", "[warning] ...")
"""
)

# The demo checks, with a fixture whose teardown is interrupted (Ctrl-C) after rxe0's conforming check.
INTERRUPTED_TESTS = (
    TESTS
    + """
import pytest


@pytest.fixture(autouse=True)
def interrupt_teardown(request):
    yield
    if request.node.callspec.id == "rxe0-keeps-promise-conforming":
        raise KeyboardInterrupt
"""
)


def cases_of(path: Path, device: str) -> dict[str, ET.Element]:
    """The testcases of one device's testsuite, by name ("<claim>[<variant>]")."""
    suite = next(s for s in ET.parse(path).getroot().iter("testsuite") if s.get("name", "").startswith(device))
    return {case.get("name") or "": case for case in suite.iter("testcase")}


def properties(element: ET.Element) -> dict[str, str]:
    names = [p.get("name") or "" for p in element.find("properties") or []]
    assert len(names) == len(set(names)), f"each property once: {names}"
    return {p.get("name") or "": p.get("value") or "" for p in element.find("properties") or []}


@pytest.mark.parametrize("xdist", [["-p", "no:xdist"], ["-n", "2"]], ids=["serial", "xdist"])
def test_guard_findings_are_in_the_json_record_and_junit(pytester: pytest.Pytester, xdist: list[str]) -> None:
    expect = make_project(pytester, tests=FINDINGS_TESTS, waivers={})
    pytester.runpytest_subprocess(
        *xdist, "--rdma-expectations", str(expect), "--rdma-json", "r.json", "--rdma-junit", "j.xml"
    )
    found = records(pytester.path / "r.json")
    deviant = found[node("rxe0", "deviant")]
    assert (deviant["leak"], deviant["kernel_log"]) == (LEAK, KERNEL)
    # The finding does not change the outcome (report mode); fail mode is the guards' own teardown error.
    assert deviant["outcome"] == "deviates"
    others = [r for nodeid, r in found.items() if nodeid != deviant["nodeid"]]
    assert len(others) == 9 and all(r["leak"] is None and r["kernel_log"] is None for r in others)
    lines = [json.loads(line) for line in (pytester.path / "r.jsonl").read_text().splitlines()]
    assert next(line for line in lines if line.get("nodeid") == deviant["nodeid"])["leak"] == LEAK
    props = properties(cases_of(pytester.path / "j.xml", "rxe0")["keeps-promise[deviant]"])
    assert props["leak"] == "rxe0: +1 pd"
    # The WARNING line and the warning's message, which is what identifies it.
    assert props["kernel_log"] == (
        "warning (written from user space): WARNING: CPU: 0 PID: 7 at demo; demo warning 1234"
    )
    assert props["driver"] == "rxe" and props["outcome"] == "deviates"
    clean = properties(cases_of(pytester.path / "j.xml", "siw0")["keeps-promise[deviant]"])
    assert "leak" not in clean and "kernel_log" not in clean


def test_crashed_check_has_its_facts_in_junit(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(pytester, waivers={})
    monkeypatch.setenv("DEMO_RC_ONLY", "crash")  # rxe's rc-only case kills its worker; siw's is unsupported first
    pytester.runpytest_subprocess("-n", "1", "--rdma-expectations", str(expect), "--rdma-junit", "j.xml")
    case = cases_of(pytester.path / "j.xml", "rxe0")["keeps-promise[rc-only]"]
    assert case.get("classname") == "rxe.ibv_demo"
    props = properties(case)
    assert (props["device"], props["driver"], props["outcome"]) == ("rxe0", "rxe", "crash")
    assert (props["verb"], props["claim"], props["stable_id"]) == (
        "ibv_demo",
        "keeps-promise",
        "test_ibv_demo[keeps-promise-rc-only]",
    )
    error = case.find("error")
    assert error is not None and error.get("type") == "crash" and "crashed" in (error.get("message") or "")
    suite = next(s for s in ET.parse(pytester.path / "j.xml").getroot().iter("testsuite"))
    assert suite.get("name") == "rxe0 (rxe)" and properties(suite)["transport"] == "roce"


def test_check_whose_teardown_was_interrupted_keeps_its_junit_facts(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester, waivers={}, tests=INTERRUPTED_TESTS)
    # In a subprocess: in-process, the KeyboardInterrupt would end this session too.
    result = pytester.runpytest_subprocess(
        "-p", "no:xdist", "--rdma-expectations", str(expect), "--rdma-junit", "j.xml"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    # Its outcome was reported before the interruption, so it is a finished check, with its identity.
    (only,) = cases_of(pytester.path / "j.xml", "rxe0").values()
    props = properties(only)
    assert (only.get("name"), props["device"], props["driver"], props["outcome"]) == (
        "keeps-promise[conforming]",
        "rxe0",
        "rxe",
        "conforms",
    )
