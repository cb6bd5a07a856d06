"""The lab's Allure report of an rxe0 + siw0 run, seen in a real browser (issue 12).

Runs on the host and boots the lab VM once (`pytest-rdma selftest` runs it with the other
host-side lab tests). `pytest-rdma lab` on a slice of the suite must, by default, leave per
device `junit.xml` (valid against Jenkins' JUnit schema) and Allure results, and one
single-file report, results/allure-report/index.html. Opened in headless Chromium, the report
shows both drivers' environments with their devices, the categories, a man page link and a
deviation's reproducers.

With PYTEST_RDMA_SCREENSHOTS=DIR it also saves what it saw (docs/allure-*.png in the README).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "unit"))  # the browser helpers and the JUnit schema test

from allure_browser import (  # noqa: E402
    categories,
    environments,
    needs_browser,
    open_result,
    pairs,
    report_page,
    select_environment,
)
from allure_records import find, record  # noqa: E402

from pytest_rdma.report.allure_model import title  # noqa: E402

DEVICES = ("rxe0", "siw0")
# Checks with waived deviations on both drivers, unsupported and not exercised ones, and checks of
# an API family with no provider (det_*): every kind of result the report has to tell apart.
SLICE = "ibv_create_flow or ibv_create_qp or det_modify_qp"
WAIT_S = 1800.0
WAIVED_ON_SIW = "test_ibv_create_qp[cap-writeback-RC-max_send_wr-3]"


@pytest.fixture(scope="module")
def lab_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    needs_browser()
    results = tmp_path_factory.mktemp("lab") / "results"
    argv = [
        sys.executable,
        "-m",
        "pytest_rdma.cli",
        "lab",
        "--no-install",
        "--results",
        str(results),
        "--timeout",
        str(WAIT_S),
        *(f"--dev={device}" for device in DEVICES),
    ]
    if os.environ.get("PYTEST_RDMA_LAB_CACHE"):
        argv += ["--cache", os.environ["PYTEST_RDMA_LAB_CACHE"]]
    argv += ["--", str(REPO / "suites"), "-k", SLICE]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=WAIT_S + 600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-5000:]
    return results, output


def test_the_lab_writes_junit_allure_results_and_the_report_by_default(lab_run: tuple[Path, str]) -> None:
    from test_junit import validate

    results, output = lab_run
    index = results / "allure-report" / "index.html"
    assert index.is_file() and "lab: Allure HTML report:" in output and "quality gate passed" in output
    assert (results / "allure-history.jsonl").is_file()
    for device in DEVICES:
        assert validate(results / device / "junit.xml") == []
        records = json.loads((results / device / "results.json").read_text())["results"]
        allure = [json.loads(p.read_text()) for p in (results / device / "allure").glob("*-result.json")]
        assert len(allure) == len(records) > 50
        keys = {(r["testCaseId"], json.dumps(r["parameters"])) for r in allure}
        assert len(keys) == len(allure), "no check is written twice: none shows as a retry"


def test_the_report_shows_both_drivers_categories_a_man_page_and_reproducers(
    lab_run: tuple[Path, str], tmp_path: Path
) -> None:
    results, _ = lab_run
    index = results / "allure-report" / "index.html"
    shots = Path(os.environ["PYTEST_RDMA_SCREENSHOTS"]) if os.environ.get("PYTEST_RDMA_SCREENSHOTS") else None
    with report_page(index, tmp_path / "profile") as page:
        overview = pairs(page, "report-variables")
        assert overview["device"] == "rxe0 (rxe) · siw0 (siw)" and overview["quality gate"] == "passed"
        assert page.get_by_test_id("tree-leaf-retries").count() == 0
        if shots:
            page.screenshot(path=str(shots / "allure-report.png"))
        assert {"rxe", "siw"} <= set(environments(page))
        rxe = select_environment(page, "rxe", "0xffffff:0")
        siw = select_environment(page, "siw", "0x626d74:1")
        for shown, device, transport in ((rxe, "rxe0", "roce"), (siw, "siw0", "iw")):
            assert shown["device"] == device and shown["transport"] == transport
            assert {"kernel", "rdma-core", "firmware", "vendor / part"} <= set(shown), shown
        select_environment(page, "All", "rxe0 (rxe)")
        shown = categories(page)
        for name in (
            "Waived deviation (known: reason and link)",
            "Unsupported (the device does not advertise the capability)",
        ):
            assert name in shown
        if shots:
            page.get_by_text("Waived deviation (known: reason and link)").click()
            page.screenshot(path=str(shots / "allure-categories.png"))
        # siw's waived deviation of ibv_create_qp (pytest_rdma/expectations/siw.toml): its man page
        # section and its reproducers.
        open_result(page, index, title(record(find(WAIVED_ON_SIW), "siw0")), "siw")
        man = page.locator('a[href="https://man7.org/linux/man-pages/man3/ibv_create_qp.3.html#DESCRIPTION"]')
        assert man.first.is_visible()
        assert page.get_by_text("reproducer (C): ").first.is_visible()
        assert page.get_by_text("reproducer (Python): ").first.is_visible()
        if shots:  # tall enough for the description, the verb calls and the attachments
            page.set_viewport_size({"width": 1400, "height": 1750})
            page.get_by_text("teardown: ").first.wait_for()
            page.screenshot(path=str(shots / "allure-result.png"))


# -- the same checks beside allure-pytest (--alluredir), on rxe0 (issue 26, item 1) --------------------------
BESIDE_SLICE = "ibv_create_qp and cap-writeback"  # waived on rxe (rxe-resources.toml), conforming and unsupported


@pytest.fixture(scope="module")
def alluredir_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lab run of rxe0 with allure-pytest's --alluredir beside the lab's own --rdma-allure, and its report."""
    needs_browser()
    results = tmp_path_factory.mktemp("lab-alluredir") / "results"
    argv = [sys.executable, "-m", "pytest_rdma.cli", "lab", "--no-install", "--no-html", "--results", str(results)]
    argv += ["--timeout", str(WAIT_S), "--dev=rxe0"]
    if os.environ.get("PYTEST_RDMA_LAB_CACHE"):
        argv += ["--cache", os.environ["PYTEST_RDMA_LAB_CACHE"]]
    argv += ["--", str(REPO / "suites"), "-k", BESIDE_SLICE, "--alluredir={results}/alluredir"]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=WAIT_S + 600, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-5000:]
    report = [sys.executable, "-m", "pytest_rdma.cli", "report", str(results / "rxe0" / "alluredir")]
    report += ["--output", str(results / "alluredir-report"), "--no-history"]
    built = subprocess.run(report, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0 and "quality gate passed" in built.stdout, built.stdout + built.stderr
    return results


def test_beside_allure_pytest_each_check_is_in_alluredir_once_as_ours(alluredir_run: Path) -> None:
    rxe0 = alluredir_run / "rxe0"
    records = json.loads((rxe0 / "results.json").read_text())["results"]
    ours = [json.loads(p.read_text()) for p in (rxe0 / "alluredir").glob("*-result.json")]
    lab_own = [json.loads(p.read_text()) for p in (rxe0 / "allure").glob("*-result.json")]
    assert len(ours) == len(lab_own) == len(records) > 5
    for result in ours:
        labels = {(label["name"], label["value"]) for label in result["labels"]}
        assert ("framework", "pytest-rdma") in labels and ("framework", "pytest") not in labels, result["name"]
        assert [p["name"] for p in result["parameters"]][-2:] == ["case", "device"], result["parameters"]
        assert all("Case(" not in p["value"] and len(p["value"]) < 120 for p in result["parameters"])
    keys = {(r["testCaseId"], json.dumps(r["parameters"])) for r in ours}
    assert len(keys) == len(ours), "no check is written twice"
    assert sorted(r["name"] for r in ours) == sorted(r["name"] for r in lab_own)


def test_beside_allure_pytest_the_report_reads_as_the_labs(alluredir_run: Path, tmp_path: Path) -> None:
    index = alluredir_run / "alluredir-report" / "index.html"
    shots = Path(os.environ["PYTEST_RDMA_SCREENSHOTS"]) if os.environ.get("PYTEST_RDMA_SCREENSHOTS") else None
    with report_page(index, tmp_path / "profile") as page:
        assert page.get_by_test_id("tree-leaf-retries").count() == 0
        rxe = select_environment(page, "rxe", "0xffffff:0")
        assert rxe["device"] == "rxe0" and rxe["transport"] == "roce"
        waived = json.loads((alluredir_run / "rxe0" / "results.json").read_text())["results"]
        (first,) = [r for r in waived if r["outcome"] == "waived"][:1]
        # The record's own title: a record read back from JSON has its params in key order, not the axes'.
        open_result(page, index, first["title"], "rxe")
        assert page.get_by_text("reproducer (C): ").first.is_visible()
        if shots:
            page.screenshot(path=str(shots / "allure-alluredir-result.png"))
