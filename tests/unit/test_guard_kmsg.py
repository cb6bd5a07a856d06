"""Kernel log records and what counts as a kernel fault (pure; no /dev/kmsg needed)."""

from __future__ import annotations

import pytest

from pytest_rdma.guard.kernel_log import describe, faults
from pytest_rdma.guard.kmsg import classify, parse_record

# Lines as the kernel prints them (shapes from real reports; the details are made up).
FAULTS = {
    "WARNING: CPU: 1 PID: 312 at drivers/infiniband/sw/rxe/rxe_qp.c:123 rxe_qp_do_cleanup+0x5/0x9 [rdma_rxe]":
        "warning",
    "BUG: kernel NULL pointer dereference, address: 0000000000000008": "bug",
    "kernel BUG at mm/slub.c:379!": "bug",
    "Oops: 0000 [#1] PREEMPT SMP NOPTI": "oops",
    "general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP": "oops",
    "BUG: KASAN: use-after-free in siw_qp_llp_close+0x2a/0x90 [siw]": "kasan",
    "WARNING: possible circular locking dependency detected": "lockdep",
    "WARNING: inconsistent lock state": "lockdep",
    "WARNING: possible recursive locking detected": "lockdep",
}
HARMLESS = [
    "rdma_rxe: loaded",
    "siw: device registration error -23",
    "infiniband rxe0: set active",
    "a line that mentions a WARNING: in the middle",
    "audit: type=1400 msg=BUGS fixed",
    "",
]


@pytest.mark.parametrize("line, kind", FAULTS.items(), ids=FAULTS.values())
def test_fault_lines_are_classified(line: str, kind: str) -> None:
    assert classify(line) == kind


@pytest.mark.parametrize("line", HARMLESS)
def test_ordinary_lines_are_not_faults(line: str) -> None:
    assert classify(line) == ""


def test_record_header_gives_facility_level_and_sequence() -> None:
    record = parse_record(b"4,1234,5678901,-;WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x1\n SUBSYSTEM=x\n")
    assert record is not None
    assert (record.facility, record.level, record.seq) == (0, 4, 1234)
    assert record.text == "WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x1"
    assert not record.from_user_space


def test_user_space_records_are_told_apart() -> None:
    # Written to /dev/kmsg by a process: facility LOG_USER (1), so prio = 8 + level.
    record = parse_record(b"12,77,99,-;WARNING: written by a test\n")
    assert record is not None and record.from_user_space and record.level == 4


def test_escaped_bytes_are_decoded() -> None:
    record = parse_record(b"6,1,2,-;tab\\x09here\n")
    assert record is not None and record.text == "tab\there"


@pytest.mark.parametrize("raw", [b"", b"no header at all", b"x,y,z;text", b"6;too few fields"])
def test_malformed_records_are_ignored(raw: bytes) -> None:
    assert parse_record(raw) is None


def test_only_faults_are_kept_and_described_by_the_first() -> None:
    raws = (b"6,1,1,-;rdma_rxe: loaded", b"4,2,2,-;WARNING: CPU: 0 PID: 9 at a.c:1",
            b"3,3,3,-;BUG: KASAN: slab-out-of-bounds in f")
    records = [parse_record(raw) for raw in raws]
    found = faults([r for r in records if r is not None])
    assert [kind for kind, _ in found] == ["warning", "kasan"]
    assert describe(found) == ("kernel fault (kasan, warning) logged during this check: "
                               "WARNING: CPU: 0 PID: 9 at a.c:1")
