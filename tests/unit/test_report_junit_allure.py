"""JUnit XML and Allure results carry the driver of every result."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from report_helpers import make_project


def test_junit_has_driver_properties_per_test_and_per_suite(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester)
    pytester.runpytest_subprocess("-n", "2", "--rdma-expectations", str(expect), "--junitxml", "j.xml")
    suite = ET.parse(pytester.path / "j.xml").getroot().find("testsuite")
    assert suite is not None
    suite_props = {p.get("name"): p.get("value") for p in suite.find("properties") or []}
    assert suite_props["rdma.rxe0.driver"] == "rxe" and suite_props["rdma.siw0.transport"] == "iw"
    assert suite_props["rdma.drivers"] == "rxe,siw"
    name = "test_ibv_demo[siw0-keeps-promise-deviant]"
    case = next(c for c in suite.iter("testcase") if c.get("name") == name)
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["rdma.driver"] == "siw"
    assert (props["rdma.verb"], props["rdma.claim"]) == ("ibv_demo", "keeps-promise")


def _allure_results(directory) -> dict[str, dict]:
    results = {}
    for path in directory.glob("*-result.json"):
        data = json.loads(path.read_text())
        results[data["name"]] = data
    return results


def test_allure_suites_steps_environment_and_categories(pytester: pytest.Pytester,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    expect = make_project(pytester, waivers={})
    monkeypatch.setenv("DEMO_RC_ONLY", "crash")
    pytester.runpytest_subprocess("-n", "1", "--rdma-expectations", str(expect), "--alluredir", "allure")
    results = _allure_results(pytester.path / "allure")
    assert len(results) == 8, "the crashed check has a result too (written by the controller)"
    deviant = results["test_ibv_demo[siw0-keeps-promise-deviant]"]
    labels = {label["name"]: label["value"] for label in deviant["labels"]}
    suites = (labels["parentSuite"], labels["suite"], labels["subSuite"])
    assert suites == ("siw", "ibv_demo", "keeps-promise")
    assert deviant["status"] == "failed"
    (step,) = deviant["steps"]
    assert step["name"] == "ibv_demo: keeps-promise-deviant"
    assert {"name": "device", "value": "siw0"} in step["parameters"]
    (result_step,) = step["steps"]
    assert result_step["name"] == "result: deviates from ibv_demo(3) RETURN VALUE"
    assert {"name": "observed", "value": "returned 0"} in result_step["parameters"]
    conforming = results["test_ibv_demo[rxe0-keeps-promise-conforming]"]
    assert conforming["steps"][0]["steps"][0]["name"] == "result: conforms"
    crash = next(r for r in results.values() if r["name"].endswith("[rxe0-keeps-promise-rc-only]"))
    assert crash["status"] == "broken" and "crashed" in crash["statusDetails"]["message"]
    environment = (pytester.path / "allure" / "environment.properties").read_text().splitlines()
    assert "drivers=rxe,siw" in environment and "siw0.node_type=RNIC" in environment
    categories = {c["name"] for c in json.loads((pytester.path / "allure" / "categories.json").read_text())}
    assert {"deviates", "waived (expected deviation)", "unsupported", "crash", "timeout"} <= categories


def test_no_reporter_files_unless_asked(pytester: pytest.Pytester) -> None:
    expect = make_project(pytester)
    pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect))
    assert sorted(p.name for p in pytester.path.iterdir() if p.is_file()) == ["conftest.py", "test_demo.py"]
