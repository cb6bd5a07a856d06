"""Kernel log records and what counts as a kernel fault (pure; no /dev/kmsg needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rdma.guard.kernel_log import NAMES_NO_DRIVER, describe, faults
from pytest_rdma.guard.kmsg import Record, classify, concerns, parse_record

# A real WARN() report, as /dev/kmsg gave it in the lab (kernel 6.1.0-56-amd64, x86_64, TCG) when
# the lab's module (pytest_rdma/lab/kwarn_ko) was loaded with nonce=first1234: one record a line.
REAL_WARNING = Path(__file__).parent / "data" / "kmsg-warn-6.1.0-56-amd64.txt"
REAL_HEADLINE = (
    "WARNING: CPU: 1 PID: 275 at /tmp/kwb/pytest_rdma_kwarn.c:24 pytest_rdma_kwarn_init+0x18/0x1000 [pytest_rdma_kwarn]"
)
REAL_MESSAGE = "pytest-rdma provoked warning first1234"

# Lines as the kernel prints them (shapes from real reports; the details are made up).
FAULTS = {
    "WARNING: CPU: 1 PID: 312 at drivers/infiniband/sw/rxe/rxe_qp.c:123 rxe_qp_do_cleanup+0x5/0x9 [rdma_rxe]": (
        "warning"
    ),
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
    raws = (
        b"6,1,1,-;rdma_rxe: loaded",
        b"4,2,2,-;WARNING: CPU: 0 PID: 9 at a.c:1",
        b"3,3,3,-;BUG: KASAN: slab-out-of-bounds in f",
    )
    records = [parse_record(raw) for raw in raws]
    found = faults([r for r in records if r is not None])
    assert [fault.kind for fault in found] == ["warning", "kasan"]
    assert describe(found) == (
        f"kernel fault (kasan, warning) logged during this check: WARNING: CPU: 0 PID: 9 at a.c:1 ({NAMES_NO_DRIVER})"
    )


def real_records() -> list[Record]:
    records = [parse_record(raw) for raw in REAL_WARNING.read_bytes().splitlines(keepends=True)]
    assert None not in records, "every line of the captured report is a /dev/kmsg record"
    return records  # type: ignore[return-value]


def test_real_warning_is_one_kernel_fault_with_its_message() -> None:
    records = real_records()
    assert records[0].text == "------------[ cut here ]------------"
    assert records[-1].text == "---[ end trace 0000000000000000 ]---"
    found = faults(records)
    # One report, not one per line of its registers and call trace.
    assert len(found) == 1
    fault = found[0]
    assert fault.kind == "warning" and fault.headline.text == REAL_HEADLINE
    assert [record.text for record in fault.message] == [REAL_MESSAGE]
    # Raised by kernel code: facility 0, which user space cannot log with.
    assert not any(record.from_user_space for record in fault.records)
    assert describe(found) == (
        f"kernel fault (warning) logged during this check: {REAL_HEADLINE}; {REAL_MESSAGE} ({NAMES_NO_DRIVER})"
    )


def test_only_the_headline_of_the_real_warning_is_classified() -> None:
    kinds = {record.text: classify(record.text) for record in real_records()}
    assert [text for text, kind in kinds.items() if kind] == [REAL_HEADLINE]


def test_message_after_the_headline_is_found_too() -> None:
    # Architectures without a trapping WARN() print the message after the WARNING line.
    records = real_records()
    cut, message, headline, *rest = records
    found = faults([cut, headline, message, *rest])
    assert [record.text for record in found[0].message] == [REAL_MESSAGE]


def test_warn_on_without_message_keeps_the_headline_alone() -> None:
    # WARN_ON(cond) prints no message: the next lines are the report's own, not a message.
    cut, _message, *rest = real_records()
    found = faults([cut, *rest])
    assert len(found) == 1 and found[0].message == () and found[0].summary == REAL_HEADLINE


def test_lines_around_an_unframed_warning_are_not_taken_for_its_message() -> None:
    # A WARNING line with no report around it (what user space can write): its neighbours are
    # unrelated records, so nothing is attached to it.
    raws = (
        b"6,1,1,-;rdma_rxe: loaded",
        b"12,2,2,-;WARNING: CPU: 0 PID: 9 at x",
        b"6,3,3,-;infiniband rxe0: set active",
    )
    found = faults([r for r in (parse_record(raw) for raw in raws) if r is not None])
    assert len(found) == 1 and found[0].message == ()


def test_lines_before_another_report_are_not_taken_for_the_warning_message() -> None:
    # Only the report's own body (Modules linked in:, registers, trace) closes a message; a line
    # followed by another fault's headline is not known to belong to this warning.
    raws = (
        b"4,1,1,-;WARNING: CPU: 0 PID: 9 at a.c:1 f+0x1/0x2",
        b"6,2,2,-;rxe0: some driver line",
        b"0,3,3,-;BUG: kernel NULL pointer dereference, address: 0000000000000008",
    )
    found = faults([r for r in (parse_record(raw) for raw in raws) if r is not None])
    assert [(fault.kind, fault.message) for fault in found] == [("warning", ()), ("bug", ())]


# A BUG in rxe's code, in the shape of a real report: "Modules linked in:" lists siw too (every loaded module).
RXE_BUG = (
    "BUG: kernel NULL pointer dereference, address: 0000000000000008",
    "Modules linked in: siw(OE) libcrc32c dummy rdma_rxe ib_uverbs ib_core",
    "RIP: 0010:rxe_completer+0x2a1/0xf90 [rdma_rxe]",
    "Call Trace:",
    " <TASK>",
    " do_task+0x61/0x1f0 [rdma_rxe]",
    " tasklet_action_common+0x113/0x120",
)
SIW_WARNING = (
    "WARNING: CPU: 0 PID: 88 at drivers/infiniband/sw/siw/siw_qp.c:101 siw_qp_llp_close+0x2a/0x90 [siw]",
    "Modules linked in: siw(OE) libcrc32c dummy rdma_rxe ib_uverbs ib_core",
    "Call Trace:",
)


def kernel_records(*lines: str) -> list[Record]:
    return [Record(facility=0, level=4, seq=seq, text=text) for seq, text in enumerate(lines)]


def test_a_fault_in_one_drivers_code_is_that_drivers_runs_only() -> None:
    # The lab runs rxe0 and siw0 at once in one kernel: a report whose RIP or call trace is in rxe's
    # module is not a fault of the siw0 check running then, nor siw's of an rxe0 check.
    rxe_bug, siw_warning = faults(kernel_records(*RXE_BUG, *SIW_WARNING))
    assert rxe_bug.drivers == {"rxe"} and siw_warning.drivers == {"siw"}
    assert concerns(rxe_bug, frozenset({"rxe"})) and not concerns(rxe_bug, frozenset({"siw"}))
    assert concerns(siw_warning, frozenset({"siw"})) and not concerns(siw_warning, frozenset({"rxe"}))
    # A run on both (or whose drivers are not known) keeps both.
    assert concerns(rxe_bug, frozenset({"rxe", "siw"})) and concerns(siw_warning, frozenset())
    assert NAMES_NO_DRIVER not in describe([rxe_bug])


def test_a_fault_that_names_no_driver_is_every_running_checks_and_says_so() -> None:
    # The real report (the lab's own module) lists rdma_rxe and siw only among the modules linked in.
    (fault,) = faults(real_records())
    assert fault.drivers == frozenset()
    assert concerns(fault, frozenset({"rxe"})) and concerns(fault, frozenset({"siw"}))
    assert describe([fault]).endswith(f"({NAMES_NO_DRIVER})")
