"""The controller's view: every check's record, assembled from the reports that arrive.

Runs only where results are written (the controller under xdist, else the only process).
Each phase report carries a phase record (recorder.py); when a check's teardown report
arrives its record is complete and is handed to every reporter through the `pytest_rdma_record`
hook (hooks.py): the built-in ones (JSON, JUnit, Allure, the terminal's summary) and any other. A
crashed xdist worker sends no record for the phase it died in: the check's setup record, when
it arrived, says what the check was; otherwise its node id is looked up among the node ids
the catalogue's cases have on the devices of this run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_rdma.report.output_failures import OutputFailures
from pytest_rdma.report.record import (
    CRASH_MARK,
    REPORT_KEY,
    CheckInfo,
    Identity,
    Phase,
    PhaseReport,
    Record,
    crash_phase,
    crash_waived,
    merge,
)

if TYPE_CHECKING:
    import pluggy

    from pytest_rdma.expectations import Expectations, Waiver


class Results:
    def __init__(
        self, devices: tuple[str, ...], hook: pluggy.HookRelay | None = None, expectations: Expectations | None = None
    ) -> None:
        self.devices = devices
        self.expectations = expectations  # a crash's waiver is found here, on the controller
        self._waived_crashes: dict[str, Waiver] = {}  # node id -> the waiver of its crash (pytest_handlecrashitem)
        self.records: list[Record] = []
        self.identities: dict[str, Identity] = {}
        self.hook = hook  # the session's hooks (config.hook): pytest_rdma_record reaches the reporters
        self.output_failures = OutputFailures()  # the reporters say here when their output fails
        self.unfinished: list[str] = []  # checks cut short before pytest reported an outcome for them
        self._pending: dict[str, tuple[CheckInfo, list[Phase], str]] = {}
        self._announced: dict[str, CheckInfo] = {}  # node id -> the check a worker runs next (recorder.py)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data: PhaseReport | None = report.__dict__.get(REPORT_KEY)
        crashed = (
            data is None
            and (report.failed or report.nodeid in self._waived_crashes)
            and CRASH_MARK in report.longreprtext
        )
        if crashed:
            data = self._crash(report)
        if data is None:
            return
        if "next" in data:
            self._announced[data["next"]["nodeid"]] = data["next"]
        # A worker sends what the check is about with its first phase only (recorder.py): the same for each phase.
        pending = self._pending.get(report.nodeid)
        if pending is None:
            first = data["info"] if "info" in data else self._known(report.nodeid)
            pending = self._pending[report.nodeid] = (first, [], worker_of(report))
        info, phases, _ = pending
        phases.append(data["phase"])
        if info.get("identity") and info.get("device"):
            # Not None: the test above; mypy does not narrow a key through .get().
            self.identities.setdefault(info["device"], info["identity"])  # type: ignore[arg-type]
        if report.when == "teardown" or crashed:
            self._announced.pop(report.nodeid, None)
            self._finish(report.nodeid)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: object) -> None:
        """xdist: a worker died in `crashitem`. Where the check's driver has a waiver of that crash
        (observed = { crash = true }), the report is waived as pytest's xfail waives a deviation: known,
        shown, not failing the run. Any other crash stays a failure."""
        if self.expectations is None:
            return
        info = self._known(crashitem)
        waiver = self.expectations.find(info) if info.get("driver") else None
        if waiver is not None and waiver.waives_crash:
            self._waived_crashes[crashitem] = waiver
            report.outcome = "skipped"
            report.wasxfail = f"waived: {waiver.reason}"  # pytest's own mark of an xfail

    def _known(self, nodeid: str) -> CheckInfo:
        """What the controller knows of a check whose worker died in it."""
        pending = self._pending.get(nodeid)
        info = pending[0].copy() if pending else self._announced.get(nodeid) or self._unknown(nodeid)
        if not info.get("identity") and info.get("device"):
            info["identity"] = self.identities.get(info["device"])
            info["driver"] = (info["identity"] or {}).get("driver", "")
        return info

    def _crash(self, report: pytest.TestReport) -> PhaseReport:
        info = self._known(report.nodeid)
        phase = crash_phase(report)
        waiver = self._waived_crashes.pop(report.nodeid, None)
        if waiver is not None:
            phase.update(crash_waived(phase["reason"], waiver.as_dict()))
        phase["rerun"] = f"python -m pytest -p no:xdist '{report.nodeid}'" + (
            f" --rdma-dev {info['device']}" if info.get("device") else ""
        )
        return {"info": info, "phase": phase}

    def _unknown(self, nodeid: str) -> CheckInfo:
        """A check no record of which arrived (its worker's first, dying in its setup): its node id, and
        the run's device when there is one only."""
        device = self.devices[0] if len(self.devices) == 1 else ""
        known: CheckInfo = {"nodeid": nodeid, "device": device, "driver": "", "identity": None}
        return {**known, "stable_id": nodeid, "verb": "", "claim": ""}

    def _finish(self, nodeid: str) -> None:
        info, phases, worker = self._pending.pop(nodeid)
        record = merge(info, phases, worker)
        self.records.append(record)
        if record.get("reproducer_error"):
            self.output_failures.say(
                "--rdma-reproducers",
                f"{self.output_failures.reproducers}: {record['reproducer_error']}; deviations from here on may "
                "have no reproducer files",
            )
        if self.hook is not None:
            self.hook.pytest_rdma_record(record=record)

    def finish_pending(self) -> None:
        """Checks cut short (Ctrl-C) count as pytest counts them.

        One whose outcome pytest reported (its call ran, or its setup failed or skipped) and whose
        teardown was cut short keeps that outcome. One cut short in its call, after a passing setup,
        has no outcome: pytest counts none, and a setup that passed says nothing about the device.
        It is listed as unfinished, never recorded as conforming.
        """
        for nodeid, (_, phases, _) in list(self._pending.items()):
            if any(phase["when"] != "setup" or phase["pytest_outcome"] != "passed" for phase in phases):
                self._finish(nodeid)
            else:
                del self._pending[nodeid]
                self.unfinished.append(nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.finish_pending()


def worker_of(report: pytest.TestReport) -> str:
    """The xdist worker a check ran on ("main" without xdist), read from its first phase's report only: the same
    for its other phases."""
    worker = getattr(getattr(report, "node", None), "gateway", None)
    return getattr(worker, "id", None) or getattr(report, "worker_id", None) or "main"


def by_driver(records: list[Record]) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(record.get("driver") or "no device", []).append(record)
    return groups


def counts(records: list[Record]) -> dict[str, dict[str, dict[str, int]]]:
    """driver -> verb -> outcome -> number of checks."""
    table: dict[str, dict[str, dict[str, int]]] = {}
    for driver, group in by_driver(records).items():
        for record in group:
            verb = record.get("verb") or record.get("test") or "?"
            cell = table.setdefault(driver, {}).setdefault(verb, {})
            cell[record["outcome"]] = cell.get(record["outcome"], 0) + 1
    return table
