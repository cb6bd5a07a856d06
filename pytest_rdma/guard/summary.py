"""Findings onto reports (where checks run) and into the terminal summary (where results are shown)."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from pytest_rdma.guard.findings import FINDINGS_KEY, KERNEL_LOG_FIELD, LEAK_FIELD, leak_text


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.when == "teardown":
        # Plain data on report.__dict__ travels from xdist workers to the controller.
        findings = item.stash.get(FINDINGS_KEY, {})
        report.__dict__.update(findings)
    return report


class GuardSummary:
    """Lists every check a guard found something about, whatever the mode, at the end of the run."""

    def __init__(self, notes: list[str]) -> None:
        self.notes = notes
        self.found: list[tuple[str, str]] = []

    def pytest_report_header(self) -> list[str]:
        return self.notes

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        leak = report.__dict__.get(LEAK_FIELD)
        if leak:
            self.found.append((report.nodeid, f"leak: {leak_text(leak)}"))
        kernel = report.__dict__.get(KERNEL_LOG_FIELD)
        if kernel:
            origin = " (written from user space)" if kernel.get("from_user_space") else ""
            kinds = "/".join(kernel["kinds"])
            self.found.append((report.nodeid, f"kernel {kinds}{origin}: {kernel['lines'][0]}"))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.found:
            return
        terminalreporter.section("rdma guards: leaks and kernel faults")
        for nodeid, what in self.found:
            terminalreporter.write_line(f"{nodeid}: {what}")
