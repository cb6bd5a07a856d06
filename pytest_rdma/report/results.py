"""The controller's view: every check's record, assembled from the reports that arrive.

Runs only where results are written (the controller under xdist, else the only process).
Each phase report carries a phase record (recorder.py); when a check's teardown report
arrives its record is complete and is handed to the sinks (JSON lines, summary, ...). A
crashed xdist worker sends no record for the phase it died in: the check's setup record, when
it arrived, says what the check was; otherwise its node id is looked up among the node ids
the catalogue's cases have on the devices of this run.
"""

from __future__ import annotations

from typing import Callable, TypedDict

import pytest

from pytest_rdma.cases import Case
from pytest_rdma.generate import active, expand
from pytest_rdma.report.output_failures import OutputFailures
from pytest_rdma.report.record import (
    CRASH_MARK,
    REPORT_KEY,
    CaseFacts,
    CheckInfo,
    Identity,
    Phase,
    Record,
    case_facts,
    classify,
    merge,
)

# A reporter's callback for each record as it is complete.
Sink = Callable[[Record], None]


class PhaseReport(TypedDict):
    """What a phase report carries on `report.__dict__[REPORT_KEY]` (recorder.py)."""

    info: CheckInfo
    phase: Phase


class Results:
    def __init__(self, devices: tuple[str, ...]) -> None:
        self.devices = devices
        self.records: list[Record] = []
        self.identities: dict[str, Identity] = {}
        self.sinks: list[Sink] = []
        self.output_failures = OutputFailures()  # the writers of the sinks say here when their output fails
        self.unfinished: list[str] = []  # checks cut short before pytest reported an outcome for them
        self._pending: dict[str, tuple[CheckInfo, list[Phase], str]] = {}
        self._by_name: dict[str, tuple[Case | None, str]] | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data: PhaseReport | None = report.__dict__.get(REPORT_KEY)
        worker = getattr(getattr(report, "node", None), "gateway", None)
        worker_id = getattr(worker, "id", None) or getattr(report, "worker_id", None) or "main"
        crashed = data is None and report.failed and CRASH_MARK in report.longreprtext
        if crashed:
            data = self._crash(report)
        if data is None:
            return
        info, phases, _ = self._pending.setdefault(report.nodeid, (data["info"], [], worker_id))
        phases.append(data["phase"])
        if data["info"].get("identity") and data["info"].get("device"):
            # Not None: the test above; mypy does not narrow a key through .get().
            self.identities.setdefault(data["info"]["device"], data["info"]["identity"])  # type: ignore[arg-type]
        if report.when == "teardown" or crashed:
            self._finish(report.nodeid)

    def _crash(self, report: pytest.TestReport) -> PhaseReport:
        pending = self._pending.get(report.nodeid)
        info = pending[0].copy() if pending else self._lookup(report.nodeid)
        if not info.get("identity") and info.get("device"):
            info["identity"] = self.identities.get(info["device"])
            info["driver"] = (info["identity"] or {}).get("driver", "")
        phase = classify(report, None, None, None)
        phase["rerun"] = f"python -m pytest -p no:xdist '{report.nodeid}'" + (
            f" --rdma-dev {info['device']}" if info.get("device") else ""
        )
        return {"info": info, "phase": phase}

    def _lookup(self, nodeid: str) -> CheckInfo:
        """What a check was, from its node id: the case whose id pytest gave it on one of our devices."""
        if self._by_name is None:
            self._by_name = {}
            for verb in active().verbs:
                for case in expand(verb):
                    for device in self.devices or ("",):
                        name = (
                            f"test_{case.verb}[{device}-{case.id}]"
                            if device and verb.family == "ibv"
                            else (f"test_{case.verb}[{case.id}]")
                        )
                        self._by_name[name] = (case, device)
        found, device = self._by_name.get(nodeid.rsplit("::", 1)[-1], (None, ""))
        facts: CaseFacts = (
            case_facts(found) if isinstance(found, Case) else {"stable_id": nodeid, "verb": "", "claim": ""}
        )
        return {"nodeid": nodeid, "device": device, "driver": "", "identity": None, **facts}

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
        for sink in self.sinks:
            sink(record)

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
