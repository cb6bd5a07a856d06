"""The files by which the lab and the pytest runs in its VM carry a run across a guest kernel fault.

Stdlib only: the in-VM runner (lab/guest.py) reads them before it imports anything of pytest, the plugin
(report/resume.py) and the host (lab/fault.py) through this one module.
- `results/<device>/running.json` (RUNNING_ENV names it to the plugin): the check in progress;
- `results/<device>/resume.jsonl` (RESUME_ENV): the records of the boots before, the fault's included;
- `results/lab-runs.json`: the device runs that ended in a boot before, with their exit codes;
- `results/lab-one-after-another`: left by the host when a kernel fault ended runs side by side and its report
  named none of their processes; the boots after run the devices one after the other (lab/guest.py).
"""

from __future__ import annotations

import json
from pathlib import Path

RUNNING_ENV = "PYTEST_RDMA_LAB_RUNNING"
RESUME_ENV = "PYTEST_RDMA_LAB_RESUME"
RUNNING_FILE = "running.json"
RESUME_FILE = "resume.jsonl"
RUNS_FILE = "lab-runs.json"
ONE_AFTER_ANOTHER_FILE = "lab-one-after-another"


def running_checks(results: Path) -> list[Path]:
    """The running files left in the results directory: checks a VM stopped during."""
    return sorted(results.glob(f"*/{RUNNING_FILE}"))


def forget_boots(results: Path) -> None:
    """A new lab run starts from nothing: no running check, no resume file, no device run ended."""
    for path in [
        *running_checks(results),
        *results.glob(f"*/{RESUME_FILE}"),
        results / RUNS_FILE,
        results / ONE_AFTER_ANOTHER_FILE,
    ]:
        path.unlink(missing_ok=True)


def running_entry(running: Path) -> dict:
    """What the running file says ({} when it is being written, or gone)."""
    try:
        entry = json.loads(running.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return entry if isinstance(entry, dict) else {}


def _entry_number(running: Path, key: str) -> int:
    """A number the running file gives (0: not said, or the file being written, or gone)."""
    try:
        return int(running_entry(running).get(key) or 0)
    except (TypeError, ValueError):
        return 0


def pid_of(running: Path) -> int:
    """The process that runs the check in the running file (0: unknown)."""
    return _entry_number(running, "pid")


def limit_of(running: Path) -> int:
    """The hang limit the running file gives its check (0: none, or unknown)."""
    return _entry_number(running, "limit")


def overdue(running: Path, now: float) -> bool:
    """Whether the check in the running file has run past its limit (the file's mtime is its start)."""
    limit = limit_of(running)
    started = started_at(running)
    return limit > 0 and started > 0 and now - started > limit


def started_at(running: Path) -> float:
    try:
        return running.stat().st_mtime
    except OSError:
        return 0.0


def ended_runs(results: Path) -> dict[str, int]:
    """Device runs that ended in an earlier boot of this lab run, with their exit codes."""
    try:
        return {str(label): int(code) for label, code in json.loads((results / RUNS_FILE).read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def run_ended(results: Path, label: str, code: int) -> None:
    runs = ended_runs(results)
    runs[label] = code
    (results / RUNS_FILE).write_text(json.dumps(runs, sort_keys=True) + "\n")


def resumed(results: Path) -> bool:
    """Whether this is a boot after a kernel fault: a device run ended before, or one has records to resume."""
    return bool(ended_runs(results)) or any(results.glob(f"*/{RESUME_FILE}"))


def resumed_nodeids(run_dir: Path) -> list[str]:
    """The checks a device's run already has a record of (its resume file): deselected in the next boot."""
    found = []
    try:
        text = (run_dir / RESUME_FILE).read_text(encoding="utf-8")
    except OSError:
        return []
    for line in text.splitlines():
        nodeid = json.loads(line).get("nodeid") if line.strip() else None
        if nodeid:
            found.append(str(nodeid))
    return found
