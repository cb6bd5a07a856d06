"""The Allure HTML report of an rxe run and a siw run together, opened in headless Chromium.

Needs node/npm (Allure 3 comes from npm) and Debian's chromium; no RDMA device: the results
come from the reporting self-test project (report_helpers), one run per driver, as the lab does.
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

from pytest_rdma.report.allure_html import build

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium() -> str:
    binary = shutil.which("chromium")
    if binary is None:
        pytest.skip("needs Debian's chromium to open the report: apt-get install chromium")
    if shutil.which("npm") is None:
        pytest.skip("needs Node.js and npm for the Allure 3 CLI: apt-get install nodejs npm")
    return binary


def rendered(binary: str, page: str, profile: Path, ready: str) -> str:
    """The DOM after the report's scripts ran, once it contains `ready`.

    Virtual time lets the single-page app settle; on a loaded machine its first paint may still
    miss the tree, so the page is loaded again (three tries) before the test looks at it.
    """
    dom = ""
    for attempt in range(3):
        done = subprocess.run([binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}{attempt}",
                               "--virtual-time-budget=20000", "--dump-dom", page],
                              capture_output=True, text=True, timeout=180, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        dom = done.stdout
        if ready in dom:
            break
    return dom


def text_of(dom: str) -> str:
    dom = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", dom)))


def test_report_shows_both_drivers_and_a_deviation(pytester: pytest.Pytester, tmp_path: Path) -> None:
    binary = chromium()
    expect = make_project(pytester, waivers={})
    for device in ("rxe0", "siw0"):
        pytester.runpytest("-p", "no:xdist", "--rdma-expectations", str(expect), "-k", device,
                           "--alluredir", f"allure-{device}")
    index = build([pytester.path / "allure-rxe0", pytester.path / "allure-siw0"], tmp_path / "report")

    main = rendered(binary, index.as_uri(), tmp_path / "profile1", 'data-testid="tree-section-title"')
    titles = re.findall(r'data-testid="tree-section-title"[^>]*>([^<]+)<', main)
    # Failures unfold the tree: driver, then verb, then claim.
    assert titles[0] in ("rxe", "siw") and {"rxe", "siw"} <= set(titles), titles
    assert titles[1:3] == ["ibv_demo", "keeps-promise"], titles

    results = json.loads((index.parent / "test-results.json").read_text())["byId"]
    deviant = next(key for key, test in results.items()
                   if test["name"] == "test_ibv_demo[siw0-keeps-promise-deviant]")
    assert results[deviant]["status"] == "failed"
    page = text_of(rendered(binary, f"{index.as_uri()}#{deviant}", tmp_path / "profile2", "deviation from"))
    assert "deviation from ibv_demo(3) RETURN VALUE" in page
    assert "expected: EINVAL for a bad mask observed: returned 0" in page
    assert "result: deviates from ibv_demo(3) RETURN VALUE" in page, "the check's step and its result"
    assert "parentSuite siw suite ibv_demo subSuite keeps-promise" in page
