"""Our Allure results beside allure-pytest's (--alluredir): each check once, ours, readable (issue 26, item 1).

A real pytest run under xdist with allure-pytest installed (the dev extra), on the demo checks of
test_allure_results.py (a deviation, a waiver, a crash that kills its worker, an error, a check
without a device) and a plain test of the user's own, which stays allure-pytest's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from allure_commons import model2
from test_allure_results import CONFTEST, TESTS, labels

from pytest_rdma.outcomes import CRASH, DEVIATES
from pytest_rdma.report import allure_gate
from pytest_rdma.report.allure_config import FRAMEWORK
from pytest_rdma.report.beside_allure_pytest import LeavingOursOut, is_ours

PLAIN = """
def test_plain():
    assert 1 + 1 == 2
"""


def test_a_result_is_ours_by_its_framework_label(tmp_path: Path) -> None:
    assert is_ours([("framework", "pytest"), ("framework", FRAMEWORK)])
    assert not is_ours([("framework", "pytest"), ("suite", FRAMEWORK)])
    writer = LeavingOursOut(tmp_path)
    writer.report_result(model2.TestResult(uuid="a", name="ours", labels=[model2.Label("framework", FRAMEWORK)]))
    writer.report_result(model2.TestResult(uuid="b", name="theirs", labels=[model2.Label("framework", "pytest")]))
    (written,) = [json.loads(path.read_text()) for path in tmp_path.glob("*-result.json")]
    assert written["name"] == "theirs"


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_demo=TESTS, test_plain=PLAIN)
    return pytester.runpytest_subprocess("-n", "1", "-p", "no:cacheprovider", *args)


def test_each_check_once_in_alluredir_with_readable_parameters(pytester: pytest.Pytester) -> None:
    out = pytester.path / "allure-results"
    result = run(pytester, "--alluredir", str(out))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    results = [json.loads(path.read_text()) for path in out.glob("*-result.json")]
    frameworks = [labels(r).get("framework") for r in results]
    ours = [r for r in results if labels(r).get("framework") == FRAMEWORK]
    # 3 cases x 2 devices and the check without a device, each once; the plain test is allure-pytest's.
    assert len(ours) == 7 and frameworks.count("pytest") == 1, [(r["name"], labels(r)) for r in results]
    (plain,) = [r for r in results if labels(r).get("framework") == "pytest"]
    assert plain["name"] == "test_plain" and plain["status"] == "passed"
    keys = {(r["testCaseId"], json.dumps(r["parameters"]), labels(r).get("driver")) for r in ours}
    assert len(keys) == len(ours), "no check twice"
    # The check that killed its worker: written by the controller, once.
    assert [labels(r)["device"] for r in ours if labels(r)["outcome"] == CRASH] == ["rxe0"]
    assert DEVIATES in {labels(r)["outcome"] for r in ours}
    # Readable parameters: the case's axes, the case and the device; never a repr of the Case.
    for r in ours:
        names = [p["name"] for p in r["parameters"]]
        assert names[-1] == "device" and all(len(p["value"]) < 120 for p in r["parameters"]), r["parameters"]
        assert not any("Case(" in p["value"] for p in r["parameters"])
    # The gate judges our checks in the shared folder, and names allure-pytest's as another tool's.
    found = allure_gate.survey([out], ["rxe0", "siw0"])
    assert found.checks() == 7 and not allure_gate.missing(found)


def test_rdma_allure_and_alluredir_each_get_every_check_once(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--alluredir", "theirs", "--rdma-allure", "ours")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    for folder in ("ours", "theirs"):
        found = allure_gate.survey([pytester.path / folder], ["rxe0", "siw0"])
        assert found.checks() == 7, folder
    plain = [p for p in (pytester.path / "theirs").glob("*-result.json") if "test_plain" in p.read_text()]
    assert len(plain) == 1 and not [p for p in (pytester.path / "ours").glob("*") if "test_plain" in p.read_text()]
