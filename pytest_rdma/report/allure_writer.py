"""Allure results written from the records, by the one process that writes results: --rdma-allure DIR.

Under xdist every record reaches the controller (results.py), so one writer there writes every
result once, a crashed worker's check included. Each result is written as its record arrives
(`<uuid>-result.json`, plus its attachments), so an interrupted run keeps the finished checks.
At the start the writer removes the results an earlier run left in DIR: Allure takes two
results of one check as a retry. It also writes `pytest-rdma-environment.json`: each device's
identity (driver, node type, transport, firmware, vendor and part, kernel, rdma-core), which
`pytest-rdma report` turns into one Allure environment per driver (allure_config.py). Each result
quotes its cited section from the man page where it is installed here (manpages.py).

A check that uses no device (its API family has no provider here) is counted under the run's
device when the run tested one device, as the lab's per-device runs do: its result says that
this driver's run could not check it, and two runs never give one check twice in one environment.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import pytest

from pytest_rdma.report.allure_config import ENVIRONMENT_FILE
from pytest_rdma.report.allure_model import convert
from pytest_rdma.report.manpages import passage
from pytest_rdma.report.profile import Requirement
from pytest_rdma.report.record import Identity, Record
from pytest_rdma.report.results import Results

if TYPE_CHECKING:
    from pytest_rdma.report.terminal import Summary

# What Allure reads from a results directory and an earlier run may have left there (a killed one, its
# half-written temporary files too).
STALE = (
    "*-result.json",
    "*-container.json",
    "*-attachment*",
    ENVIRONMENT_FILE,
    "environment.properties",
    "categories.json",
    "executor.json",
    ".*.tmp*",
)


class RunEnvironment(TypedDict, total=False):
    """The run's devices, written with the Allure results (allure_config.read_environment reads them)."""

    schema_version: int
    devices: dict[str, Identity]
    profile: dict[str, list[Requirement]]  # device -> its required capabilities (at the end of the run)


def clear(directory: Path) -> None:
    for pattern in STALE:
        for path in directory.glob(pattern):
            if path.is_file():
                path.unlink()


def write_json(path: Path, data: Mapping[str, object]) -> None:
    temporary = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        temporary.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)  # a half-written file would read as a broken result
        raise


class AllureWriter:
    def __init__(self, directory: Path, results: Results, reproducers: Path, summary: Summary | None = None) -> None:
        self.directory = directory
        self.results = results
        self.reproducers = reproducers
        self.summary = summary  # its profile: the devices' required capabilities (after its sessionfinish)
        self._deferred: list[Record] = []  # records without a device, until the run's devices are known
        self._devices: dict[str, Identity] = {}
        results.sinks.append(self.append)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            clear(self.directory)
        except OSError as error:
            self._failed(error)

    def _failed(self, error: OSError, at_end: bool = False) -> None:
        """No more results here (a full disk, a removed directory): the ones written before stay readable."""
        self.results.output_failures.failed(
            "--rdma-allure", self.directory, error, "the results written before are kept there", at_end
        )

    def append(self, record: Record) -> None:
        if self.results.output_failures.has_failed("--rdma-allure"):
            return
        try:
            self._append(record)
        except OSError as error:
            self._failed(error)

    def _append(self, record: Record) -> None:
        if not record.get("device"):
            self._deferred.append(record)
            return
        identity = record.get("identity") or self.results.identities.get(record["device"])
        if identity and record["device"] not in self._devices:
            self._devices[record["device"]] = dict(identity)
            write_json(self.directory / ENVIRONMENT_FILE, self.environment())
        self.write(record)

    def environment(self) -> RunEnvironment:
        environment: RunEnvironment = {"schema_version": 1, "devices": self._devices}
        if self.summary is not None and self.summary.profile:
            environment["profile"] = self.summary.profile
        return environment

    def write(self, record: Record) -> None:
        _, quote = passage(str(record.get("ref") or ""), str(record.get("claim_text") or ""))
        converted = convert(record, stop_ms=int(time.time() * 1000), python_text=self.python_text(record), quote=quote)
        for name, attachment in converted.attachments.items():
            (self.directory / name).write_bytes(attachment.content)
        write_json(self.directory / f"{converted.result['uuid']}-result.json", converted.result)

    def python_text(self, record: Record) -> str:
        """The Python reproducer, written by the process that ran the check, on this machine's disk."""
        relative = (record.get("reproducer") or {}).get("python")
        if not relative:
            return ""
        try:
            return (self.reproducers / relative).read_text(encoding="utf-8")
        except OSError:
            return ""

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.results.finish_pending()
        if self.results.output_failures.has_failed("--rdma-allure"):
            return
        try:
            self._finish()
        except OSError as error:
            self._failed(error, at_end=True)

    def _finish(self) -> None:
        only = next(iter(self._devices.items())) if len(self._devices) == 1 else None
        for record in self._deferred:
            if only is not None:
                record = {**record, "driver": only[1].get("driver", "")}
            self.write(record)
        self._deferred.clear()
        self.directory.mkdir(parents=True, exist_ok=True)
        write_json(self.directory / ENVIRONMENT_FILE, self.environment())
