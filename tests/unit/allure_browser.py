"""The Allure report as a person sees it: opened in Debian's Chromium, driven by Playwright.

Shared by the host test of the report (tests/unit/test_allure_report.py) and the lab's
(tests/host_lab/test_allure_lab_report.py). Playwright's own browser download is never used:
it launches /usr/bin/chromium (apt-get install chromium) headless, with a fresh profile and
nothing that reaches the network. The report is one file, opened from disk.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 60_000  # a loaded machine, or the lab's, renders slowly


def needs_browser() -> None:
    """Skip, saying what to install, when the report cannot be built or opened here."""
    if not Path(CHROMIUM).exists():
        pytest.skip("needs Debian's chromium to open the report: apt-get install chromium")
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("needs Node.js and npm for the Allure 3 CLI: apt-get install nodejs npm")
    pytest.importorskip("playwright.sync_api", reason="needs playwright (pip install playwright; no browser download)")


@contextmanager
def report_page(index: Path, profile: Path, width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A page showing the report at `index`, its results tree drawn."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": width, "height": height},
        )
        context.set_default_timeout(TIMEOUT_MS)
        try:
            page = context.new_page()
            # Every request the page makes that is not to the report file itself or embedded data.
            page.outside_requests = []
            page.on(
                "request",
                lambda request: (
                    None
                    if request.url.startswith(("file:", "data:", "blob:"))
                    else page.outside_requests.append(request.url)
                ),
            )
            page.goto(index.as_uri())
            page.get_by_test_id("report-title").wait_for()
            page.get_by_test_id("tree-section").first.wait_for()
            yield page
        finally:
            context.close()


def pairs(page: Any, test_id: str) -> dict[str, str]:
    """A name/value panel (variables) as a dict: its text alternates names and values after a title and a count."""
    lines = [line.strip() for line in page.get_by_test_id(test_id).inner_text().splitlines() if line.strip()]
    body = lines[2:]  # "Variables", the count
    return dict(zip(body[::2], body[1::2]))


def environments(page: Any) -> list[str]:
    page.get_by_test_id("environment-picker-button").click()
    items = page.get_by_test_id("environment-picker-item")
    items.first.wait_for()
    names = [items.nth(i).inner_text().strip() for i in range(items.count())]
    page.keyboard.press("Escape")
    return names


def select_environment(page: Any, name: str, shows: str = "") -> dict[str, str]:
    """Show one environment (a driver, or "All"); its variables, once they show `shows`."""
    page.get_by_test_id("environment-picker-button").click()
    items = page.get_by_test_id("environment-picker-item")
    items.first.wait_for()
    next(items.nth(i) for i in range(items.count()) if items.nth(i).inner_text().strip() == name).click()
    page.get_by_test_id("report-variables").filter(has_text=shows or name).wait_for()
    return pairs(page, "report-variables")


def categories(page: Any) -> str:
    page.get_by_test_id("nav-tab-categories").click()
    page.get_by_text("Unsupported", exact=False).first.wait_for()
    return page.inner_text("body")


def result_id(index: Path, name: str, environment: str = "") -> str:
    """The report's id of the first result whose name contains `name` (in `environment`), from the report's index."""
    by_id = json.loads((index.parent / "test-results.json").read_text())["byId"]
    return next(
        key
        for key, result in by_id.items()
        if name in result["name"] and environment in ("", result.get("environment"))
    )


def open_result(page: Any, index: Path, name: str, environment: str = "") -> None:
    page.goto(f"{index.as_uri()}#{result_id(index, name, environment)}")
    page.get_by_test_id("test-result-tab-overview").wait_for()


def with_transition(page: Any, transition: str) -> dict[str, str]:
    """Filter the tree to results whose status changed since the previous run in this way ("fixed",
    "regressed", "new", "malfunctioned"); the environments left, each with its number of results."""
    page.get_by_test_id("transition-filter").click()
    page.get_by_test_id(f"{transition}-filter").click()
    page.keyboard.press("Escape")
    buttons = page.get_by_test_id("tree-section-env-button")
    buttons.first.wait_for()
    found = {}
    for i in range(buttons.count()):
        name, _, count = buttons.nth(i).inner_text().partition("\n")
        found[name.strip()] = count.strip()
    return found
