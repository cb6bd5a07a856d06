"""What a driver must support: --rdma-require and the expectations file's `require`, through a run.

The demo project (report_helpers) runs the real plugin, recorder and reporters without a device;
its siw0 check "unreached" is made unsupported for `attr.max_srq = 0` (DEMO_UNREACHED=no-srq).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from report_helpers import make_project, node, records

from pytest_rdma.expectations import parse, read
from pytest_rdma.report.allure_config import REQUIRED_VARIABLE, environments, merged_devices, merged_profiles
from pytest_rdma.report.profile import Requirements, profile
from pytest_rdma.report.waivers import draft

SLICE = ("-p", "no:xdist", "-k", "conforming or unreached")


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DEMO_UNREACHED", "no-srq")  # siw0 only: rxe0's is "not exercised" whatever this says
    return make_project(pytester, waivers={})


def run(pytester: pytest.Pytester, expect: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        *SLICE,
        "--rdma-expectations",
        str(expect),
        "--rdma-json",
        "r.json",
        "--rdma-junit",
        "j.xml",
        "--rdma-allure",
        "allure",
        *args,
    )


def test_without_a_requirement_an_unsupported_check_does_not_fail(pytester: pytest.Pytester, project: Path) -> None:
    result = run(pytester, project)
    assert result.ret == pytest.ExitCode.OK
    found = records(pytester.path / "r.json")[node("siw0", "unreached")]
    assert (found["outcome"], found["pytest_outcome"], found.get("required")) == ("unsupported", "skipped", None)
    assert json.loads((pytester.path / "r.json").read_text())["profile"] == {}


def test_a_required_capability_the_device_lacks_fails_the_run_naming_the_attribute(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = run(pytester, project, "--rdma-require", "srq")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2, skipped=1, failed=1)  # pytest's own count (and --junitxml) says so too
    said = "required, not advertised: attr.max_srq = 0 (srq, required by command line --rdma-require)"
    result.stdout.fnmatch_lines(
        [
            f"*{said}*",
            "rxe0: required capabilities:",
            "  srq * not exercised: no check of this run needs it*",
            "siw0: required capabilities:",
            "  srq * FAILS: 1 checks unsupported: required, not advertised: attr.max_srq = 0 ?command line*",
            "siw0: FAILS: 1 unsupported but required (srq)",
        ]
    )
    document = json.loads((pytester.path / "r.json").read_text())
    found = records(pytester.path / "r.json")[node("siw0", "unreached")]
    assert (found["outcome"], found["pytest_outcome"]) == ("unsupported", "failed")
    assert found["required"] == {
        "capability": "srq",
        "source": "command line --rdma-require",
        "advertised": "attr.max_srq = 0",
    }
    assert [(e["capability"], e["status"], e["failed"]) for e in document["profile"]["siw0"]] == [("srq", "failed", 1)]
    assert document["profile"]["rxe0"][0]["status"] == "not exercised"
    # JUnit: a failure of its own type, and the profile among the device's testsuite properties.
    suites = {s.get("name"): s for s in ET.parse(pytester.path / "j.xml").getroot()}
    siw = suites["siw0 (siw)"]
    assert siw.get("failures") == "1"
    failure = siw.find("testcase/failure[@type='required']")
    assert failure is not None and failure.get("message") == said
    props = {p.get("name"): p.get("value") for p in siw.findall("properties/property")}
    assert props["require.srq"] == "failed: attr.max_srq = 0 (command line --rdma-require)"
    # Allure: a failed result, labelled, and the profile beside the devices.
    results = [json.loads(p.read_text()) for p in (pytester.path / "allure").glob("*-result.json")]
    (failed,) = [r for r in results if r["status"] == "failed"]
    assert failed["statusDetails"]["message"] == said
    assert {"name": "required", "value": "srq"} in failed["labels"]
    allure = pytester.path / "allure"
    environment = json.loads((allure / "pytest-rdma-environment-siw0.json").read_text())  # one file a device
    assert environment["profile"]["siw0"][0]["status"] == "failed"
    # `pytest-rdma report` shows it among each driver's environment variables.
    drivers = environments(merged_devices([allure]), merged_profiles([allure]))
    shown = drivers["siw"]["variables"][REQUIRED_VARIABLE]
    assert shown == "srq failed: attr.max_srq = 0 (command line --rdma-require)"
    assert drivers["rxe"]["variables"][REQUIRED_VARIABLE] == "srq not exercised (command line --rdma-require)"


def test_a_required_capability_from_the_driver_s_file_fails_only_that_driver(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "siw.toml").write_text('driver = "siw"\n\nrequire = ["srq", "rc"]\n')
    result = run(pytester, project)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*required, not advertised: attr.max_srq = 0 (srq, required by siw.toml:3)*"])
    document = json.loads((pytester.path / "r.json").read_text())
    assert list(document["profile"]) == ["siw0"]
    assert [e["source"] for e in document["profile"]["siw0"]] == ["siw.toml:3", "siw.toml:3"]


def test_a_required_capability_that_is_advertised_changes_nothing(pytester: pytest.Pytester, project: Path) -> None:
    result = run(pytester, project, "--rdma-require", "ud,mw2")
    assert result.ret == pytest.ExitCode.OK
    found = records(pytester.path / "r.json")[node("siw0", "unreached")]
    assert found["pytest_outcome"] == "skipped" and found.get("required") is None


def test_an_unknown_capability_is_a_usage_error_naming_the_known_ones(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest(*SLICE, "--rdma-require", "srq", "--rdma-require", "wings")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: rdma_require = 'srq,wings' (command line --rdma-require): "
            "unknown capability 'wings' (known: rc, uc, *)"
        ]
    )
    assert "Traceback" not in result.stderr.str()


def test_the_environment_requires_too(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RDMA_REQUIRE", "srq")
    result = run(pytester, project)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*(srq, required by environment RDMA_REQUIRE)*"])


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ('driver = "siw"\nrequire = ["srq", "wings"]\n', 2, "require: unknown capability 'wings' (known: rc, uc, ud,"),
        ('require = "srq"\n', 1, "'require' must be a list of capability names"),
        ("require = [1]\n", 1, "'require' must be a list of capability names"),
        ('requires = ["srq"]\n', 1, "unknown key 'requires' (allowed: driver, require, [[waiver]])"),
    ],
)
def test_a_malformed_require_names_file_and_line(text: str, line: int, says: str) -> None:
    with pytest.raises(pytest.UsageError) as raised:
        parse(text, Path("/x/siw.toml"))
    assert str(raised.value).startswith(f"/x/siw.toml:{line}: malformed expectations file: ")
    assert says in str(raised.value)


def test_the_file_s_require_list_is_read_with_its_driver_and_line() -> None:
    waivers, required = read('# siw\ndriver = "siw"\nrequire = ["SRQ", "ud", "srq"]\n', Path("/x/siw-extra.toml"))
    assert waivers == []
    assert [(r.name, r.driver, r.where) for r in required] == [
        ("srq", "siw", "siw-extra.toml:3"),
        ("ud", "siw", "siw-extra.toml:3"),
    ]


def test_a_capability_held_is_one_a_check_needing_it_reached() -> None:
    from pytest_rdma.expectations import Expectations

    requirements = Requirements(("srq", "ud", "mw1"), "command line --rdma-require", Expectations())
    group = [
        {"device": "rxe0", "driver": "rxe", "outcome": "conforms", "capabilities": ["rc", "srq"]},
        {"device": "rxe0", "driver": "rxe", "outcome": "not exercised", "capabilities": ["ud"]},
    ]
    found = {e["capability"]: e for e in profile(group, requirements)["rxe0"]}
    assert (found["srq"]["status"], found["srq"]["exercised"]) == ("held", 1)
    assert found["ud"]["status"] == "not exercised" and "none of its 1 checks" in found["ud"]["why"]
    assert found["mw1"]["status"] == "not exercised" and "no check of this run needs it" in found["mw1"]["why"]


def test_waivers_drafts_the_require_list_from_what_the_runs_exercised(tmp_path: Path) -> None:
    results = [
        {"driver": "siw", "outcome": "conforms", "stable_id": "a", "capabilities": ["srq", "rc"]},
        {"driver": "siw", "outcome": "waived", "stable_id": "b", "capabilities": ["atomics"], "observation": {"x": 1}},
        {"driver": "siw", "outcome": "unsupported", "stable_id": "c", "capabilities": ["ud"]},
        {"driver": "siw", "outcome": "not exercised", "stable_id": "d", "capabilities": ["mw1"]},
        {"driver": "rxe", "outcome": "conforms", "stable_id": "e", "capabilities": ["uc"]},
    ]
    text = draft("siw", [{"results": results}])
    assert 'require = ["rc", "srq", "atomics"]' in text.splitlines()
    waivers, required = read(text, tmp_path / "siw.toml")  # the draft is a valid expectations file
    assert [r.name for r in required] == ["rc", "srq", "atomics"] and len(waivers) == 1


def test_the_report_s_quality_gate_and_categories_count_a_required_capability_not_advertised() -> None:
    from pytest_rdma.report.allure_config import CATEGORIES, config_module

    text = config_module("r", {}, None)
    gate = text[text.index("qualityGate") : text.index("plugins")]
    assert 'label.name === "required"' in gate  # a failed result labelled `required` fails the gate
    (category,) = [c for c in CATEGORIES if c["id"] == "required"]
    assert category["matchers"] == {"labels": {"required": ".+"}}
