"""What a guard found about one check, and how it is surfaced.

Findings travel on the teardown report as plain data (`report.__dict__`), which survives
xdist's serialisation, so the controller's reporters can show them:
- `rdma_leak`: {device: {resource: +n}} objects still counted by the kernel after the check;
- `rdma_kernel_log`: {"kinds": [...], "lines": [...], "lost": bool, "drivers": [...]} kernel fault
  records seen while the check ran.
In "fail" mode the finding is also raised at the end of teardown, so the check ends in a
teardown error whose message names the fault.
"""

from __future__ import annotations

from typing import TypedDict, Union

import pytest

# A check that provokes kernel log records on purpose still gets them attached, but does not fail.
MARK_EXPECTED = "rdma_kernel_log_expected"
LEAK_FIELD = "rdma_leak"
KERNEL_LOG_FIELD = "rdma_kernel_log"

# What the leak guard found: device -> resource kind -> objects still counted after the check.
Leak = dict[str, dict[str, int]]


class KernelLogFinding(TypedDict, total=False):
    """What the kernel-log guard found (docs/results-schema.md, `kernel_log`); the guard sets every key."""

    kinds: list[str]
    lines: list[str]
    from_user_space: bool
    lost: bool
    drivers: list[str]  # the drivers whose code the reports name; none: attributed to every check running then


# A guard's finding, as it goes on the teardown report and into the record.
Finding = Union[Leak, KernelLogFinding]
FINDINGS_KEY = pytest.StashKey[dict[str, Finding]]()
# The kernel fault a waiver of the check's driver records (expectations.py, `observed = { kernel_fault = KIND }`),
# set by the recorder at setup: a report of exactly that kind is the waived one, not the check's failure.
WAIVED_FAULT_KEY = pytest.StashKey[str]()
# Set when the kernel-log guard scanned the log for the check: without it, no finding says nothing of a waiver.
KERNEL_LOG_SCANNED_KEY = pytest.StashKey[bool]()


class ResourceLeak(Exception):
    """The kernel counts more verbs objects on the device after the check than before it."""


class KernelFault(Exception):
    """The kernel logged a WARNING, BUG, Oops, KASAN or lockdep report while the check ran."""


def attach(item: pytest.Item, field: str, value: Finding, title: str, text: str) -> None:
    """Keep the finding for the teardown report (see makereport in summary.py) and show it there."""
    item.stash.setdefault(FINDINGS_KEY, {})[field] = value
    item.add_report_section("teardown", title, text)


def conclude(item: pytest.Item, mode: str, error: Exception, teardown_failed: bool, expected: bool = False) -> None:
    """Raise `error` in fail mode, unless teardown already failed (its error stays the one shown)."""
    if mode == "fail" and not teardown_failed and not expected:
        raise error


def leak_text(leak: Leak) -> str:
    return "; ".join(
        f"{device}: " + ", ".join(f"+{n} {kind}" for kind, n in sorted(kinds.items()))
        for device, kinds in sorted(leak.items())
    )
