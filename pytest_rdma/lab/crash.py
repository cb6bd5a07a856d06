"""A provider that kills pytest costs the check in progress, not the run: the lab's restart, in the VM.

The lab runs each device's checks in one pytest process: an xdist worker for crash isolation cost a second
pytest start before the first check and a round trip to the controller per report. When that process dies
of a signal (a segfault or an abort in a provider's library), the running file (report/resume.py) still
names the check it died in, and the run's lines have no record of it. The runner (lab/guest.py) then:

- records that check as a crash (the process died of SIGNAL during it), with every record before it, in
  `results/<device>/resume.jsonl`, as the host does for a guest kernel fault (lab/fault.py);
- starts pytest again without the recorded checks; that run replays their records into every reporter
  (report/resume.py), where a waiver of the crash (`observed = { crash = true }`) waives it.

A death outside any check (its running check has a record already) is not a check's: it ends the run.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from pytest_rdma.lab.fault import keep_for_resume, known_records, running_check_record
from pytest_rdma.outcomes import CRASH
from pytest_rdma.report.record import Record
from pytest_rdma.resume_files import started_at


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def crash_record(entry: dict, signum: int, seconds: float, before: list[Record]) -> Record:
    """The record of the check whose process died (pure): a crash, as xdist's record of a lost worker is."""
    reason = f"pytest died of {signal_name(signum)} while running this check"
    return {
        **running_check_record(entry, before),
        "pytest_outcome": "failed",
        "outcome": CRASH,
        "duration": round(seconds, 3),
        "reason": reason,
        "message": f"{reason}; the lab recorded it and ran the checks after it in a new pytest process (Python's "
        "traceback of the crash, from faulthandler, is in the run's output)",
    }


def record_crash(running: Path, signum: int) -> Record | None:
    """The check pytest died in, recorded with every record before it for the next pytest run; None when the
    running file names no check without a record (the process died between checks or after the last)."""
    try:
        entry = json.loads(running.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    run_dir = running.parent
    known = known_records(run_dir)
    if str(entry.get("nodeid") or "") in known or not entry.get("nodeid"):
        return None
    record = crash_record(entry, signum, time.time() - started_at(running), list(known.values()))
    known[record["nodeid"]] = record
    keep_for_resume(run_dir, known)
    running.unlink()
    return record
