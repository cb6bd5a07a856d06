"""The Allure HTML report of an rxe run and a siw run together, as the lab builds it; a page opened in Chromium.

Needs node/npm (Allure 3 comes from npm), and Debian's chromium to open a page; no RDMA
device: the results come from the reporting self-test project (report_helpers), one run per
driver, as the lab does. The results are allure-pytest's own: since the reshape pytest-rdma
adds no Allure labels, so the report is not grouped by driver, verb and claim.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report_helpers import make_project

from pytest_rdma.report.allure_html import build, cache_dir

# Read before pytester points HOME at a scratch directory: the Allure CLI is installed once, there.
CACHE_BASE = cache_dir().parents[1]

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium() -> str:
    binary = shutil.which("chromium")
    if binary is None:
        pytest.skip("needs Debian's chromium to open the report: apt-get install chromium")
    return binary


def rendered(binary: str, page: str, profile: Path, ready: str) -> str:
    """The DOM after the report's scripts ran, once it contains `ready`.

    Virtual time lets the single-page app settle; on a loaded machine its first paint may still
    miss the tree, so the page is loaded again (three tries) before the test looks at it.
    """
    dom = ""
    for attempt in range(3):
        done = subprocess.run(
            [
                binary,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}{attempt}",
                "--virtual-time-budget=20000",
                "--dump-dom",
                page,
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        dom = done.stdout
        if ready in dom:
            break
    return dom


def text_of(dom: str) -> str:
    dom = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", dom)))


def built(pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The lab's way: one run per device with --alluredir, then one HTML report of both."""
    if shutil.which("npm") is None:
        pytest.skip("needs Node.js and npm for the Allure 3 CLI: apt-get install nodejs npm")
    monkeypatch.setenv("XDG_CACHE_HOME", str(CACHE_BASE))
    expect = make_project(pytester, waivers={})
    for device in ("rxe0", "siw0"):
        pytester.runpytest(
            "-p", "no:xdist", "--rdma-expectations", str(expect), "-k", device, "--alluredir", f"allure-{device}"
        )
    return build([pytester.path / "allure-rxe0", pytester.path / "allure-siw0"], tmp_path / "report")


def test_report_holds_both_runs_with_their_outcomes(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = built(pytester, tmp_path, monkeypatch)
    results = json.loads((index.parent / "test-results.json").read_text())["byId"]
    status = {test["name"]: test["status"] for test in results.values()}
    assert len(status) == 10
    for device in ("rxe0", "siw0"):
        assert status[f"test_ibv_demo[{device}-keeps-promise-deviant]"] == "failed"
        assert status[f"test_ibv_demo[{device}-keeps-promise-conforming]"] == "passed"
        assert status[f"test_ibv_demo[{device}-keeps-promise-blocked]"] == "skipped"
    assert status["test_ibv_demo[rxe0-keeps-promise-unreached]"] == "skipped"


def test_a_deviations_page_shows_what_was_expected_and_observed(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = chromium()
    index = built(pytester, tmp_path, monkeypatch)
    results = json.loads((index.parent / "test-results.json").read_text())["byId"]
    deviant = next(key for key, test in results.items() if test["name"] == "test_ibv_demo[siw0-keeps-promise-deviant]")
    page = text_of(rendered(binary, f"{index.as_uri()}#{deviant}", tmp_path / "profile", "observed:"))
    assert "expected: refused with EINVAL observed: ibv_demo succeeded -> 0" in page
