"""A lab run that survives its guest kernel: which check is running, and the records of the boots before.

Only in the lab (the in-VM runner sets the two variables below; lab/fault.py is the host's half):
- `RunningCheck`, in the process that runs the checks (the xdist worker, else the only one), writes the
  check about to start, what it is about and how long it may take to `PYTEST_RDMA_LAB_RUNNING` on the
  results share before its setup begins. A kernel fault stops the VM before anything else can be said:
  this file is how the host knows which check it cost;
- `Resumed`, where results are written, replays the records of the boots before this one
  (`PYTEST_RDMA_LAB_RESUME`: the checks that finished, and the host's record of the check that faulted)
  through `pytest_rdma_record` at the session's start, so this run's JSON, JUnit, Allure and terminal
  summary are the device's whole run; the runner deselects those checks, so none runs twice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_rdma.expectations import Expectations
from pytest_rdma.outcomes import CRASH, DEVIATES, WAIVED
from pytest_rdma.report.jsonfile import load
from pytest_rdma.report.phase import device_of, is_rdma_item, item_info
from pytest_rdma.report.record import CheckInfo, Record, applied, crash_waived, mismatched
from pytest_rdma.report.results import Results
from pytest_rdma.report.terminal import failing
from pytest_rdma.resume_files import RESUME_ENV, RUNNING_ENV
from pytest_rdma.settings import Settings


def running_entry(nodeid: str, info: CheckInfo, limit: int, pid: int) -> dict[str, object]:
    """The running file's content (pure): the check, what it is about, its hang limit (0: none), and the process
    that runs it, which a kernel report names ("PID: n"): with device runs side by side, the host tells by it
    whose check a fault was (lab/fault.py)."""
    return {"nodeid": nodeid, "info": dict(info), "limit": limit, "pid": pid}


class RunningCheck:
    """Writes each check's start to the running file, through the share, before its setup."""

    def __init__(self, path: Path, settings: Settings) -> None:
        self.path = path
        # An exploration (--rdma-explore) runs inside the first check of a device: its seconds are the check's.
        self.limit = settings.hang_limit + settings.explore if settings.hang_limit else 0
        self._fd: int | None = None  # the file, open for the whole run (write)

    @staticmethod
    def identity(item: pytest.Item) -> dict[str, str] | None:
        """The check's device's identity when this process has opened the device already (the start's port
        check does): the lab's record of a fault in a device's first check then still names its driver, whose
        waivers judge it."""
        from pytest_rdma.provider.describe import known  # the device layer, imported by then
        from pytest_rdma.provider.identity import record_fields

        found = known(device_of(item))
        return record_fields(found) if found is not None else None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> None:
        info: CheckInfo = item_info(item, self.identity(item)) if is_rdma_item(item) else {"nodeid": item.nodeid}
        self.write(
            (json.dumps(running_entry(item.nodeid, info, self.limit, os.getpid()), sort_keys=True) + "\n").encode()
        )

    def write(self, data: bytes) -> None:
        """The file's content replaced in place, through one descriptor kept open, and synced: the host must read it
        even when the kernel stops a moment later. An open and a close per check were each a round trip through
        the share (2.3 ms of a check under TCG, against 0.4 ms for the write in place; the fsync adds 0.6 ms).
        Between the write and the truncation a longer entry's tail may show: the host takes a file it cannot read
        for one being written (resume_files.limit_of), as it did the empty file that opening it for writing made."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o666)
        os.pwrite(self._fd, data, 0)
        os.ftruncate(self._fd, len(data))
        os.fsync(self._fd)

    def pytest_unconfigure(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def resumed_records(path: Path) -> list[Record]:
    """The records a resumed run replays: those of the resume file, each node id once (the last one)."""
    records = {record["nodeid"]: record for record in load(path)["results"] if record.get("nodeid")}
    return list(records.values())


class Resumed:
    """Replays the boots before this one into every reporter; their failures count in this run's exit code."""

    def __init__(self, records: list[Record], results: Results) -> None:
        self.records = records
        self.results = results

    @pytest.hookimpl(trylast=True)  # after every reporter opened its output at the session's start
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        expectations = self.results.expectations
        if expectations is not None:  # a kernel fault's or a crash's record is judged by the waivers of this run
            self.records = [judged(record, expectations) for record in self.records]
        for record in self.records:
            self.results.records.append(record)
            if record.get("identity") and record.get("device"):
                self.results.identities.setdefault(record["device"], record["identity"])  # type: ignore[arg-type]
            if self.results.hook is not None:
                self.results.hook.pytest_rdma_record(record=record)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        # pytest's own counts and --junitxml know only this boot's tests; a faulted check of a test that is not
        # an rdma check (a device's summary omits it) would otherwise be seen only in the exit code.
        if not self.records:
            return
        failed = [record for record in self.records if failing(record)]
        terminalreporter.write_sep("=", "rdma: results of the lab's boots before this one")
        terminalreporter.write_line(
            f"{len(self.records)} replayed (every reporter of this run has them), {len(failed)} failing:"
        )
        for record in failed:
            terminalreporter.write_line(f"  {record['outcome']:<10} {record['nodeid']}: {record.get('reason', '')}")

    @pytest.hookimpl(tryfirst=True)  # before the reporters write the exit status down
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if session.exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            return
        if any(failing(record) for record in self.records):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif self.records:
            session.exitstatus = pytest.ExitCode.OK  # every check of the device ran before this boot


def with_fault_waiver(record: Record, expectations: Expectations) -> Record:
    """The lab's record of a check whose kernel fault ended the VM (lab/fault.py), judged by the waivers of its
    driver (pure): a waiver of exactly that fault waives it; one of another fault says "mismatch"."""
    kind = record.get("observation", {}).get("kernel_fault")
    if record.get("outcome") != DEVIATES or not isinstance(kind, str) or not record.get("driver"):
        return record
    waiver = expectations.find(record)
    if waiver is None or not waiver.waived_kernel_fault:
        return record
    if waiver.waived_kernel_fault != kind:
        return {**record, "waiver": mismatched(waiver.as_dict())}
    return {
        **record,
        "outcome": WAIVED,
        "pytest_outcome": "xfailed",
        "reason": f"waived: {waiver.reason}",
        "waiver": applied(waiver.as_dict()),
    }


def with_crash_waiver(record: Record, expectations: Expectations) -> Record:
    """The lab's record of a check pytest died in (lab/crash.py), judged by the waivers of its driver (pure): a
    waiver of a crash (observed = { crash = true }) waives it, as results.py waives an xdist worker's."""
    if record.get("outcome") != CRASH or not record.get("driver"):
        return record
    waiver = expectations.find(record)
    if waiver is None or not waiver.waives_crash:
        return record
    waived: Record = {**record, **crash_waived(record.get("reason", ""), waiver.as_dict())}
    return {**waived, "pytest_outcome": "xfailed", "reason": f"waived: {waiver.reason}"}


def judged(record: Record, expectations: Expectations) -> Record:
    """A record the lab made of a check it lost (a kernel fault, a crash), judged by this run's waivers."""
    return with_crash_waiver(with_fault_waiver(record, expectations), expectations)


def register(config: pytest.Config, settings: Settings, results: Results | None) -> None:
    """The running file where checks run, the replay where results are written; only when the lab asks."""
    running = os.environ.get(RUNNING_ENV)
    if running:
        config.pluginmanager.register(RunningCheck(Path(running), settings), "rdma-running-check")
        if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
            # Where the checks run (the worker, or a run without xdist), its own pytest runs (a lab test's inner
            # run) must not write the file: a fault during them is the check's that started them. An xdist
            # controller keeps it for its workers.
            os.environ.pop(RUNNING_ENV)
    # Read once and taken out: a check's own pytest run (a lab test's inner run) inherits the environment, and
    # must not replay this run's records into its results. Workers need it not: results are written here.
    resume = os.environ.pop(RESUME_ENV, None)
    if resume and results is not None:
        config.pluginmanager.register(Resumed(resumed_records(Path(resume)), results), "rdma-resumed")
