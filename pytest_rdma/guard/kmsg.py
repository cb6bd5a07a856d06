"""The kernel log (/dev/kmsg): records, their classification, and a reader that marks and scans.

Pure parts (`parse_record`, `classify`, `faults`) are tested on any host; the reader needs a readable
/dev/kmsg (root, or kernel.dmesg_restrict=0).
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass

KMSG = "/dev/kmsg"
READ_SIZE = 8192  # a read smaller than the record fails with EINVAL; records are at most ~1 KiB
LOG_USER = 1

# Kinds of kernel fault, checked in this order: lockdep and KASAN reports also begin with
# "WARNING:" / "BUG:", and the more specific kind is the more useful one to report.
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "lockdep",
        re.compile(
            r"possible circular locking|inconsistent lock state|possible recursive locking"
            r"|suspicious RCU usage"
        ),
    ),
    ("kasan", re.compile(r"\bKASAN\b")),
    ("bug", re.compile(r"^(BUG:|kernel BUG at\b)")),
    ("oops", re.compile(r"^(Oops\b|general protection fault\b)")),
    ("warning", re.compile(r"^WARNING:")),
)

# The shape of a WARN() report, as kernel/panic.c prints it: a cut-here line, then on x86 the
# warning's message, then "WARNING: CPU: n PID: n at file:line function+0x../0x.. [module]"; where
# the architecture has no trapping WARN the message comes right after the WARNING line instead.
# Then "Modules linked in:", the CPU and registers, the call trace and an end-trace line.
CUT_HERE = re.compile(r"^-+\[ cut here \]-+$")
WARN_HEADLINE = re.compile(r"^WARNING: CPU: \d+ PID: \d+ at ")
# Where the report's own lines start after the headline; a message never runs past them.
REPORT_BODY = re.compile(
    r"^(Modules linked in:|CPU: \d+ PID: \d+|Hardware name:|RIP:|Call Trace:"
    r"|---\[ end trace)"
)
MESSAGE_LINES = 4  # a WARN's message is a line or two; more means the lines belong to something else


@dataclass(frozen=True)
class Record:
    facility: int
    level: int
    seq: int
    text: str

    @property
    def from_user_space(self) -> bool:
        # The kernel never lets user space log with the kernel's facility (0).
        return self.facility == LOG_USER


def _unescape(text: str) -> str:
    # /dev/kmsg escapes non-printable bytes as \xNN.
    return re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def parse_record(raw: bytes) -> Record | None:
    """One /dev/kmsg record: "prio,seq,usec,flags[,...];text" then " KEY=value" lines."""
    line = raw.decode("utf-8", errors="replace").split("\n", 1)[0]
    header, sep, text = line.partition(";")
    fields = header.split(",")
    if not sep or len(fields) < 3 or not fields[0].isdigit() or not fields[1].isdigit():
        return None
    prio = int(fields[0])
    return Record(facility=prio >> 3, level=prio & 7, seq=int(fields[1]), text=_unescape(text))


def classify(text: str) -> str:
    """The kind of kernel fault a log line reports ("warning", "bug", ...), or "" for none."""
    stripped = text.strip()
    for kind, pattern in PATTERNS:
        if pattern.search(stripped):
            return kind
    return ""


# The drivers a fault report can name, by the provider names the checks' devices have (netlink's driver
# id): each one's kernel module, as a report's lines tag a function of it ("rxe_requester+0x../0x.. [rdma_rxe]"),
# and its functions' prefix (a built-in driver's functions carry no module tag).
DRIVER_MODULES = {"rxe": ("rdma_rxe", "rxe_"), "siw": ("siw", "siw_")}
_MODULES_LINKED_IN = re.compile(r"^Modules linked in:")  # every loaded module: names no culprit


def _naming(module: str, prefix: str) -> re.Pattern[str]:
    return re.compile(rf"\[{re.escape(module)}\]|\b{re.escape(prefix)}\w*\+0x|\bdrivers/infiniband/sw/{prefix[:-1]}/")


_DRIVER_NAMING = {driver: _naming(module, prefix) for driver, (module, prefix) in DRIVER_MODULES.items()}


def drivers_named(report: list[Record]) -> frozenset[str]:
    """The drivers of DRIVER_MODULES a fault report's lines name: its headline, RIP or call trace in one of
    their functions or source files (pure). "Modules linked in:" lists every loaded module and names none."""
    texts = [record.text.strip() for record in report]
    return frozenset(
        driver
        for driver, naming in _DRIVER_NAMING.items()
        if any(naming.search(text) for text in texts if not _MODULES_LINKED_IN.match(text))
    )


@dataclass(frozen=True)
class Fault:
    """One kernel fault report: its headline record and, for a WARN(), the message it carried; `drivers`, those
    of DRIVER_MODULES its lines name (drivers_named), none when it names no driver's code."""

    kind: str
    headline: Record
    message: tuple[Record, ...] = ()
    drivers: frozenset[str] = frozenset()

    @property
    def records(self) -> tuple[Record, ...]:
        return (self.headline, *self.message)

    @property
    def summary(self) -> str:
        return "; ".join(record.text.strip() for record in self.records)


def _is_plain(record: Record) -> bool:
    return not classify(record.text) and not CUT_HERE.match(record.text.strip())


def _message(records: list[Record], at: int) -> tuple[Record, ...]:
    """The free text of the WARN() whose WARNING line is records[at], or () if it has none."""
    before = records[max(0, at - MESSAGE_LINES - 1) : at]
    cuts = [i for i, record in enumerate(before) if CUT_HERE.match(record.text.strip())]
    if cuts:
        lines = before[cuts[-1] + 1 :]
        if lines and all(_is_plain(record) for record in lines):
            return tuple(lines)
    after: list[Record] = []
    for record in records[at + 1 : at + 1 + MESSAGE_LINES]:
        if REPORT_BODY.match(record.text.strip()):
            return tuple(after)
        if not _is_plain(record):
            return ()  # another report began: nothing here is known to be this warning's
        after.append(record)
    return ()  # no end of the report in sight: these lines are not the warning's


def faults(records: list[Record]) -> list[Fault]:
    """The kernel fault reports among `records`, in order, each with what identifies it.

    Only headlines are faults: a report's other lines (registers, call trace, cut-here and
    end-trace lines) are not reports of their own, and are left out of the excerpt.
    """
    headlines = [at for at, record in enumerate(records) if classify(record.text)]
    found = []
    for index, at in enumerate(headlines):
        record = records[at]
        message = _message(records, at) if WARN_HEADLINE.match(record.text.strip()) else ()
        # A report runs from its cut-here line (or headline) to the next report's; its lines say whose it is.
        start = min([at, *(records.index(line) for line in message)])
        end = headlines[index + 1] if index + 1 < len(headlines) else len(records)
        found.append(Fault(classify(record.text), record, message, drivers_named(records[start:end])))
    return found


def concerns(fault: Fault, drivers: frozenset[str]) -> bool:
    """Whether `fault` may be of a check on devices of `drivers` (pure): unless its report names only other
    drivers' code. A report that names no driver is everyone's (another driver's run beside this one, in the
    same kernel, cannot be told from this one's); one whose drivers are not known (empty) takes every fault."""
    return not fault.drivers or not drivers or bool(fault.drivers & drivers)


def readable() -> bool:
    try:
        fd = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    os.close(fd)
    return True


class KmsgReader:
    """An open /dev/kmsg: `mark()` skips to the end, `scan()` returns the records since."""

    def __init__(self) -> None:
        self.fd = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
        self.lost = False

    def mark(self) -> None:
        os.lseek(self.fd, 0, os.SEEK_END)
        self.lost = False

    def scan(self) -> list[Record]:
        records: list[Record] = []
        while True:
            try:
                raw = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                return records
            except OSError as exc:
                if exc.errno == errno.EPIPE:
                    # The ring buffer overwrote records we had not read; the read position has
                    # moved on to the oldest one left, so keep reading and say so.
                    self.lost = True
                    continue
                raise
            if not raw:
                return records
            record = parse_record(raw)
            if record is not None:
                records.append(record)

    def close(self) -> None:
        os.close(self.fd)
