"""Kernel faults: the kernel log is marked before each check and scanned after it.

A WARNING, BUG, Oops, KASAN or lockdep report that appears between the start of a check's
setup and the end of its teardown is attached to that check. With several xdist workers the
log is shared, so a fault is attached to whichever checks were running when it appeared.
Several runs at once on devices of different drivers (the lab runs its runs as nobody side by side)
share it too: a report whose lines name only another driver's code (kmsg.drivers_named) is that
driver's run's, and one that names no driver is attributed to every check running then, and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Generator

import pytest

from pytest_rdma.guard.after_teardown import AfterTeardown
from pytest_rdma.guard.findings import (
    KERNEL_LOG_FIELD,
    KERNEL_LOG_SCANNED_KEY,
    MARK_EXPECTED,
    WAIVED_FAULT_KEY,
    KernelFault,
    KernelLogFinding,
    attach,
    conclude,
)
from pytest_rdma.guard.kmsg import Fault, KmsgReader, concerns, faults

LINES_KEPT = 20


NAMES_NO_DRIVER = "its report names no driver's code: attributed to every check running when it was logged"


def describe(found: list[Fault]) -> str:
    kinds = sorted({fault.kind for fault in found})
    named = "" if any(fault.drivers for fault in found) else f" ({NAMES_NO_DRIVER})"
    return f"kernel fault ({', '.join(kinds)}) logged during this check: {found[0].summary}{named}"


def drivers_named(found: list[Fault]) -> list[str]:
    return sorted({driver for fault in found for driver in fault.drivers})


class KernelLogGuard(AfterTeardown):
    def __init__(self, mode: str, reader: KmsgReader, drivers: Callable[[], frozenset[str]] = frozenset) -> None:
        """`drivers` says which drivers this run's devices have; asked only once a fault is seen."""
        self.mode = mode
        self.reader = reader
        self._drivers_of_run = drivers
        self._drivers: frozenset[str] | None = None

    def run_drivers(self) -> frozenset[str]:
        if self._drivers is None:
            self._drivers = self._drivers_of_run()
        return self._drivers

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        self.reader.mark()
        return (yield)

    def _check(self, item: pytest.Item, teardown_failed: bool) -> None:
        found = faults(self.reader.scan())
        item.stash[KERNEL_LOG_SCANNED_KEY] = True
        if found:
            found = [fault for fault in found if concerns(fault, self.run_drivers())]
        if not found:
            return
        # Each fault's headline, then the message a WARN() carried (kmsg.faults).
        kept = [(fault.kind, record) for fault in found for record in fault.records][:LINES_KEPT]
        value: KernelLogFinding = {
            "kinds": sorted({fault.kind for fault in found}),
            "lines": [record.text for _, record in kept],
            "from_user_space": all(fault.headline.from_user_space for fault in found),
            "lost": self.reader.lost,
            "drivers": drivers_named(found),
        }
        text = "\n".join(f"[{kind}] {record.text}" for kind, record in kept)
        if not value["drivers"]:
            text += f"\n({NAMES_NO_DRIVER})"
        attach(item, KERNEL_LOG_FIELD, value, "rdma kernel log", text)
        waived = item.stash.get(WAIVED_FAULT_KEY, "")
        expected = item.get_closest_marker(MARK_EXPECTED) is not None or set(value["kinds"]) == {waived}
        conclude(item, self.mode, KernelFault(describe(found)), teardown_failed, expected)

    def pytest_unconfigure(self) -> None:
        self.reader.close()
