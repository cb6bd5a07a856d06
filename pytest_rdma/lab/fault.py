"""A guest kernel fault or hang costs the check in progress, not the run: the host's half.

The VM's half (report/resume.py) writes each check's start to `results/<device>/running.json`
before the check runs. An Oops ends the VM at once (the kernel's `oops=panic`, with virtme-ng's
`panic=-1` and QEMU's `-no-reboot`); its report is on the console, which the runner keeps quiet
otherwise (an Oops and a panic print verbosely). A check that runs past its limit is a hang: the
host kills the VM (vm.run), as it does a VM still alive 60 s after an Oops line. Either way
the VM gives no exit code back, and while a running file is left, the lab:

- makes the record of that check (outcome deviates; its observation: the kind of fault and the kernel's
  report from the console, the lines from the BUG/Oops or the panic to the end of its trace);
- puts it, with the records of every check that finished before, in `results/<device>/resume.jsonl`
  (and in the run's own .jsonl, which then holds them all, should the lab stop here);
- boots again: the runner deselects the checks of resume.jsonl and the run replays their records into
  every reporter, so the device's results are whole; devices whose runs ended before are not run again.

With device runs side by side (lab/guest.py), a check is running in each when the kernel stops. The kernel's
report names the process it was in ("CPU: 1 PID: 187 Comm: python"), and each running file its check's process:
the fault is the check's whose process it names (`whose_fault`). The other runs lose nothing: their finished
checks are kept for the next boot as the faulted run's are (`keep_finished`), and the check they were in runs
again. A report that names none of their processes (a fault in a kernel thread) is no check's: each runs again, and
the boots after run the devices one after the other, where the check in progress is the only one.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from pytest_rdma import resume_files
from pytest_rdma.lab import vm
from pytest_rdma.outcomes import DEVIATES
from pytest_rdma.report.jsonfile import load
from pytest_rdma.report.record import Record
from pytest_rdma.resume_files import RESUME_FILE
from pytest_rdma.shapes import Json

# printk's time stamp, which starts a kernel line: also where a line of pytest's had left the cursor ("s[  66.5] BUG").
KERNEL_STAMP = re.compile(r"\[\s*\d+\.\d{6}\]\s?")
PANIC = re.compile(r"Kernel panic - not syncing")
PANIC_END = re.compile(r"---\[ end Kernel panic")
OOPS = re.compile(r"\b(Oops|general protection fault|kernel BUG at)\b")
HEADLINE = re.compile(r"(BUG: |sysrq: Trigger a crash|Unable to handle kernel)")
HEADLINE_BEFORE_OOPS = 8  # "BUG: unable to handle page fault" comes four lines before its "Oops:"
REPORT_LINES = 80
REPORTED_PID = re.compile(r"\bCPU: \d+ PID: (\d+)\b")  # the process a BUG, Oops or WARNING came in
OOPS_BEFORE_PANIC = 400  # lines between an Oops and its panic at most (registers, a call trace, modules)


def kernel_lines(console: list[str]) -> list[str]:
    """The kernel's lines among the console's, without their time stamps (pure)."""
    found = [(line, KERNEL_STAMP.search(line)) for line in console]
    return [line[stamp.end() :].rstrip() for line, stamp in found if stamp is not None]


def kernel_report(console: list[str]) -> tuple[str, list[str]]:
    """The kind of fault ("oops", "bug", "panic"; "" for none) and the kernel's report of it, from the console
    lines of one boot (pure), at most REPORT_LINES (its first ones, and its last line).

    After a panic: the last panic's report, from the BUG/Oops line that began it to the end of the panic (the
    console may hold the boot's log again before it). Without one (a kernel that hung in its Oops): from the
    first BUG/Oops line the kernel printed once the runner was ready, when the console is quiet but for
    those, to the console's end."""
    kernel = kernel_lines(console)
    panics = [at for at, line in enumerate(kernel) if PANIC.search(line) and not PANIC_END.search(line)]
    if not panics:
        ready = max((at for at, line in enumerate(console) if vm.GUEST_READY.match(line)), default=0)
        quiet = kernel_lines(console[ready:])
        starts = [at for at, line in enumerate(quiet) if HEADLINE.search(line) or OOPS.search(line)]
        if not starts:
            return "", []
        report = quiet[starts[0] :]
        return ("oops" if any(OOPS.search(line) for line in report) else "bug"), _capped(report)
    panic = panics[-1]
    ends = [at for at, line in enumerate(kernel) if at >= panic and PANIC_END.search(line)]
    end = ends[0] if ends else len(kernel) - 1
    oopses = [at for at in range(panic) if OOPS.search(kernel[at])]
    kind, start = "panic", panic
    if oopses and panic - oopses[-1] <= OOPS_BEFORE_PANIC:
        kind, start = "oops", oopses[-1]
    headlines = [at for at in range(max(0, start - HEADLINE_BEFORE_OOPS), start) if HEADLINE.search(kernel[at])]
    if headlines:
        start = headlines[-1]  # the nearest: the one that began this report
        kind = "bug" if kind == "panic" and "BUG: " in kernel[start] else kind
    return kind, _capped(kernel[start : end + 1])


def _capped(report: list[str]) -> list[str]:
    return report if len(report) <= REPORT_LINES else [*report[: REPORT_LINES - 1], report[-1]]


def reported_pid(report: list[str]) -> int:
    """The process the kernel's report says it was in (pure; 0: none said)."""
    for line in report:
        found = REPORTED_PID.search(line)
        if found:
            return int(found.group(1))
    return 0


def whose_fault(running: list[tuple[Path, int]], report: list[str]) -> list[Path]:
    """Of the running files (each with the process of its check), those whose check the kernel fault is (pure):
    the only one; or, with runs side by side, the one whose process the report names; none when it names none."""
    if len(running) == 1:
        return [running[0][0]]
    pid = reported_pid(report)
    return [path for path, check_pid in running if pid and check_pid == pid]


@dataclass(frozen=True)
class Fault:
    """What ended the VM during a check: its kind ("oops", "bug", "panic", "hang") and the kernel's report."""

    kind: str
    report: list[str]
    seconds: float  # from the check's start to the VM's end
    limit: int  # the check's hang limit (0: none)

    def headline(self) -> str:
        if self.kind == "hang":
            return f"the check did not finish in {self.limit} s (--rdma-hang-limit): the guest hung"
        first = self.report[0] if self.report else "no report reached the console"
        return f"guest kernel {self.kind}: {first}"


def running_check_record(entry: dict, before: list[Record]) -> Record:
    """What the lab knows of the check a running file names (pure): what it is about (its running entry), the
    device's identity from the records before it, how to run it again."""
    info = dict(entry.get("info") or {})
    nodeid = str(entry["nodeid"])
    device = str(info.get("device") or "")
    # The records before it; for a device's first check, what the running file says (report/resume.py).
    identity = next((r["identity"] for r in before if r.get("device") == device and r.get("identity")), None)
    identity = identity or info.get("identity")
    # What every record has (as results.py's record of a check it knows only by node id), then the check's own.
    known: Record = {"stable_id": nodeid, "test": nodeid.split("::")[-1].split("[")[0], "verb": "", "claim": ""}
    return {
        **known,
        **info,  # a CheckInfo, as report/resume.py wrote it
        "nodeid": nodeid,
        "device": device,
        "identity": identity,
        "driver": (identity or {}).get("driver", "") or str(info.get("driver") or ""),
        "when": "call",
        "rerun": f"python -m pytest -p no:xdist '{nodeid}'" + (f" --rdma-dev {device}" if device else ""),
        "worker": "lab",
    }


def fault_record(entry: dict, fault: Fault, before: list[Record]) -> Record:
    """The record of the check the fault cost (pure): a deviation whose observation is the kernel's report."""
    observed = "\n".join([fault.headline(), *fault.report[1:]]) if fault.report else fault.headline()
    record: Record = {
        **running_check_record(entry, before),
        "pytest_outcome": "failed",
        "outcome": DEVIATES,
        "duration": round(fault.seconds, 3),
        "reason": f"kernel fault: {fault.headline()}",
        "expected": "the check ends and the kernel goes on (no Oops, BUG, panic or hang)",
        "observed": observed,
        "observation": {"kernel_fault": fault.kind, "console": list[Json](fault.report)},
        "kernel_log": {
            "kinds": [fault.kind],
            "lines": fault.report[:20],
            "from_user_space": False,
            "lost": False,
        },
        "message": f"the guest kernel's {fault.kind} ended the lab VM during this check; the lab booted again "
        "and went on with the checks after it",
    }
    return record


def _records(path: Path) -> list[Record]:
    try:
        return load(path)["results"] if path.exists() else []
    except (OSError, ValueError):
        return []


def run_lines(run_dir: Path) -> list[Path]:
    """The .jsonl files the device's run writes (its --rdma-json's lines), the resume file aside."""
    return sorted(path for path in run_dir.glob("*.jsonl") if path.name != RESUME_FILE)


def write_lines(path: Path, records: list[Record]) -> None:
    """Records as results lines (report/jsonfile.py's), written whole or not at all."""
    temporary = path.with_name(path.name + f".tmp{os.getpid()}")
    text = "".join(json.dumps({"type": "result", **record}, sort_keys=True) + "\n" for record in records)
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def known_records(run_dir: Path) -> dict[str, Record]:
    """The records a device's run has so far, by node id: those of the runs before (its resume file), then its own
    lines (a later record of a check replaces an earlier one)."""
    known: dict[str, Record] = {}
    for path in [run_dir / RESUME_FILE, *run_lines(run_dir)]:
        for record in _records(path):
            known[record["nodeid"]] = record
    return known


def keep_for_resume(run_dir: Path, known: dict[str, Record]) -> None:
    """The records, each check once, as the device's resume file and as its lines (should the lab stop here)."""
    records = list(known.values())
    write_lines(run_dir / RESUME_FILE, records)
    for lines in run_lines(run_dir):
        write_lines(lines, records)


def keep_finished(running: Path) -> str:
    """A run that another run's fault cut short: its finished checks kept for the next boot (as `record_fault` keeps
    the faulted run's) and its running file gone, so that the check it was in runs again; that check's node id."""
    nodeid = str(resume_files.running_entry(running).get("nodeid") or "")  # "": being written, its check not begun
    keep_for_resume(running.parent, known_records(running.parent))
    running.unlink(missing_ok=True)
    return nodeid


def record_fault(running: Path, fault: Fault) -> Record:
    """The faulting check's record, added to its device's resume file with every record before it (each check
    once: a record of the same check, written before the fault, is kept under the fault's), and to its lines."""
    run_dir = running.parent
    entry = json.loads(running.read_text(encoding="utf-8"))
    known = known_records(run_dir)
    earlier = known.pop(str(entry["nodeid"]), None)
    record = fault_record(entry, fault, list(known.values()))
    if earlier is not None:  # the fault came after the check's record (its last teardown): both count
        record = {**earlier, **{key: value for key, value in record.items() if key not in ("duration", "worker")}}  # type: ignore[typeddict-item]
    known[record["nodeid"]] = record
    keep_for_resume(run_dir, known)
    running.unlink()
    return record
