"""Kernel faults: the kernel log is marked before each check and scanned after it.

A WARNING, BUG, Oops, KASAN or lockdep report that appears between the start of a check's
setup and the end of its teardown is attached to that check. With several xdist workers the
log is shared, so a fault is attached to whichever checks were running when it appeared.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from pytest_rdma.guard.after_teardown import AfterTeardown
from pytest_rdma.guard.findings import (
    KERNEL_LOG_FIELD,
    MARK_EXPECTED,
    KernelFault,
    KernelLogFinding,
    attach,
    conclude,
)
from pytest_rdma.guard.kmsg import Fault, KmsgReader, faults

LINES_KEPT = 20


def describe(found: list[Fault]) -> str:
    kinds = sorted({fault.kind for fault in found})
    return f"kernel fault ({', '.join(kinds)}) logged during this check: {found[0].summary}"


class KernelLogGuard(AfterTeardown):
    def __init__(self, mode: str, reader: KmsgReader) -> None:
        self.mode = mode
        self.reader = reader

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        self.reader.mark()
        return (yield)

    def _check(self, item: pytest.Item, teardown_failed: bool) -> None:
        found = faults(self.reader.scan())
        if not found:
            return
        # Each fault's headline, then the message a WARN() carried (kmsg.faults).
        kept = [(fault.kind, record) for fault in found for record in fault.records][:LINES_KEPT]
        value: KernelLogFinding = {
            "kinds": sorted({fault.kind for fault in found}),
            "lines": [record.text for _, record in kept],
            "from_user_space": all(fault.headline.from_user_space for fault in found),
            "lost": self.reader.lost,
        }
        text = "\n".join(f"[{kind}] {record.text}" for kind, record in kept)
        attach(item, KERNEL_LOG_FIELD, value, "rdma kernel log", text)
        expected = item.get_closest_marker(MARK_EXPECTED) is not None
        conclude(item, self.mode, KernelFault(describe(found)), teardown_failed, expected)

    def pytest_unconfigure(self) -> None:
        self.reader.close()
