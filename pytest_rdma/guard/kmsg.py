"""The kernel log (/dev/kmsg): records, their classification, and a reader that marks and scans.

Pure parts (`parse_record`, `classify`) are tested on any host; the reader needs a readable
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
    ("lockdep", re.compile(r"possible circular locking|inconsistent lock state|possible recursive locking"
                           r"|suspicious RCU usage")),
    ("kasan", re.compile(r"\bKASAN\b")),
    ("bug", re.compile(r"^(BUG:|kernel BUG at\b)")),
    ("oops", re.compile(r"^(Oops\b|general protection fault\b)")),
    ("warning", re.compile(r"^WARNING:")),
)


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
