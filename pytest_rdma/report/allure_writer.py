"""Allure results written from the records, by the one process that writes results: --rdma-allure DIR.

Under xdist every record reaches the controller (results.py), so one writer there writes every
result once, a crashed worker's check included. Each result is written as its record arrives
(`<uuid>-result.json`, plus its attachments), so an interrupted run keeps the finished checks.
The results and attachments are written by allure-python-commons' `AllureFileLogger` (the writer
allure-pytest uses), each result named by its own uuid (ResultFiles); the manifests and the
environment files are ours: Allure's results format has neither.

Nothing it did not write is removed. Each file is listed in its device's manifest
(`pytest-rdma-files-<device>.txt`) before it is written, so an interrupted run leaves no file of
ours unlisted; the next run of that device removes what its manifest lists, and nothing else (Allure
takes two results of one check as a retry): another tool's results and another device's run in the
same folder stay. It also writes, per device, `pytest-rdma-environment-<device>.json`: the device's
identity (driver, node type, transport, firmware, vendor and part, kernel, rdma-core), which
`pytest-rdma report` turns into one Allure environment per driver (allure_config.py). A device the
run names is written there at the start, so a device that exercised nothing is still named to the
report's gate (allure_gate.py). Each result quotes its cited section from the man page where it is
installed here (manpages.py).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO, TypedDict

import pytest
from allure_commons import model2 as model
from allure_commons.logger import AllureFileLogger

from pytest_rdma.report.allure_config import env_id, environment_file
from pytest_rdma.report.allure_model import PAIR_SIDES, convert, document, pair_files
from pytest_rdma.report.jsonfile import load
from pytest_rdma.report.manpages import passage
from pytest_rdma.report.profile import Requirement
from pytest_rdma.report.record import Identity, Record
from pytest_rdma.report.results import Results

MANIFEST_PREFIX = "pytest-rdma-files"


def result_file(result: model.TestResult) -> str:
    return str(model.TEST_CASE_PATTERN.format(prefix=result.uuid))


class ResultFiles(AllureFileLogger):
    """allure-python-commons' file writer, but a result's file is named by the result's own uuid.

    AllureFileLogger names each result file by a fresh uuid it draws while writing; a manifest lists
    a file before it is written (a killed run leaves nothing of ours unlisted), so the name must be
    known first. The JSON is the logger's own (model2 as attr.asdict, empty values left out), written
    through its atomic `report_attached_data` (a temporary file, then a rename).
    """

    def report_result(self, result: model.TestResult) -> None:
        self.report_attached_data(json.dumps(document(result), ensure_ascii=False), result_file(result))


def manifest_file(device: str) -> str:
    """The manifest of one device's run; a run without a device has one of its own."""
    return f"{MANIFEST_PREFIX}-{env_id(device)}.txt" if device else f"{MANIFEST_PREFIX}.txt"


class RunEnvironment(TypedDict, total=False):
    """The run's devices, written with the Allure results (allure_config.read_environment reads them)."""

    schema_version: int
    devices: dict[str, Identity]
    profile: dict[str, list[Requirement]]  # device -> its required capabilities (at the end of the run)


def listed(directory: Path, device: str) -> list[str]:
    """The files a device's earlier run wrote in directory, from its manifest (plain names in it only)."""
    try:
        lines = (directory / manifest_file(device)).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [name for name in lines if name and name == Path(name).name and not name.startswith(".")]


def forget(directory: Path, device: str) -> int:
    """Remove what the device's earlier run wrote (and the temporary files of a killed one); how many."""
    names = listed(directory, device)
    removed = 0
    for path in (*(directory / name for name in names), *temporaries(directory, set(names))):
        try:
            path.unlink()
            removed += 1
        except FileNotFoundError:
            pass
    for name in (manifest_file(device), environment_file(device)):
        (directory / name).unlink(missing_ok=True)
    return removed


def temporaries(directory: Path, names: set[str]) -> list[Path]:
    """The temporary files a killed run left of these names: `.NAME.tmpPID` (ours) and `NAME.tmp` (the logger's).

    One listing of the directory for all of them: a glob per name was a listing per name, quadratic in a
    reused folder of a whole catalogue's results.
    """
    if not names:
        return []
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.endswith(".tmp") and entry[: -len(".tmp")] in names:
            found.append(directory / entry)
        elif entry.startswith(".") and ".tmp" in entry and entry[1 : entry.rindex(".tmp")] in names:
            found.append(directory / entry)
    return found


def write_json(path: Path, data: Mapping[str, object]) -> None:
    temporary = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        temporary.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)  # a half-written file would read as a broken result
        raise


class Profiled(Protocol):
    """What the writer needs of the terminal's summary: each device's required capabilities, at the end."""

    profile: dict[str, list[Requirement]]


@dataclass
class KnownProfile:
    """The profile of a run that has ended, as its results file gives it."""

    profile: dict[str, list[Requirement]]


class AllureWriter:
    def __init__(self, directory: Path, results: Results, reproducers: Path, summary: Profiled | None = None) -> None:
        self.directory = directory
        self.results = results
        self.reproducers = reproducers
        self.summary = summary  # its profile: the devices' required capabilities (after its sessionfinish)
        self._deferred: list[Record] = []  # records without a device, until the run's devices are known
        self._devices: dict[str, Identity] = {}
        self._manifests: dict[str, TextIO] = {}  # device -> its manifest, open for appending
        self._files: ResultFiles | None = None  # made at the session's start, which makes the directory

    def pytest_rdma_record(self, record: Record) -> None:
        self.append(record)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.start()

    def start(self) -> None:
        """The directory made, each named device's earlier results gone and the device named."""
        try:
            self._files = ResultFiles(self.directory)  # makes the directory
            for device in self.results.devices:
                self._start(device)
            if not self.results.devices:
                self._start("")
        except OSError as error:
            self._failed(error)

    def _failed(self, error: OSError, at_end: bool = False) -> None:
        """No more results here (a full disk, a removed directory): the ones written before stay readable."""
        self.results.output_failures.failed(
            "--rdma-allure", self.directory, error, "the results written before are kept there", at_end
        )

    def _start(self, device: str) -> None:
        """The device's earlier results go; a new manifest; the device named in its environment file."""
        forget(self.directory, device)
        self._manifests[device] = open(self.directory / manifest_file(device), "w", encoding="utf-8")  # noqa: SIM115
        if device:
            self._devices.setdefault(device, {})
            self._write_environment(device)

    def _write_environment(self, device: str) -> None:
        environment: RunEnvironment = {"schema_version": 1, "devices": {device: self._devices[device]}}
        profile = self.summary.profile.get(device) if self.summary is not None else None
        if profile:
            environment["profile"] = {device: profile}
        write_json(self.directory / environment_file(device), environment)

    def append(self, record: Record) -> None:
        if self.results.output_failures.has_failed("--rdma-allure"):
            return
        try:
            self._append(record)
        except OSError as error:
            self._failed(error)

    def _append(self, record: Record) -> None:
        device = record.get("device")
        if not device:
            self._deferred.append(record)
            return
        if device not in self._manifests:  # a device the run did not name up front (a test of one's own)
            self._start(device)
        identity = record.get("identity") or self.results.identities.get(device)
        if identity and not self._devices.get(device):
            self._devices[device] = dict(identity)
            self._write_environment(device)
        self.write(record, [device])

    def write(self, record: Record, owners: list[str]) -> None:
        """Write the record's result and attachments, each listed first in its owners' manifests."""
        _, quote = passage(str(record.get("ref") or ""), str(record.get("claim_text") or ""))
        # The check's own end when its record has one: results written after the run (the lab's, on the
        # host) keep the run's timeline.
        stop_ms = int(float(record.get("stop") or time.time()) * 1000)
        converted = convert(
            record,
            stop_ms=stop_ms,
            python_text=self.python_text(record),
            quote=quote,
            pair_texts=self.pair_texts(record),
        )
        for owner in owners:
            manifest = self._manifests[owner]
            manifest.writelines(f"{name}\n" for name in [*converted.attachments, result_file(converted.result)])
            manifest.flush()
        files = self._files or ResultFiles(self.directory)
        for name, attachment in converted.attachments.items():
            files.report_attached_data(attachment.content, name)
        files.report_result(converted.result)

    def pair_texts(self, record: Record) -> dict[str, str]:
        """A two-host reproducer's programs, each from its own file; none when one cannot be read (the
        record's c_text, both in one, is attached then)."""
        files = pair_files(record.get("reproducer") or {})
        if not files:
            return {}
        try:
            return {side: (self.reproducers / files[side]).read_text(encoding="utf-8") for side in PAIR_SIDES}
        except OSError:
            return {}

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
        self.finish()

    def finish(self) -> None:
        """The checks without a device written for every device, the environment files with the profile."""
        try:
            if not self.results.output_failures.has_failed("--rdma-allure"):
                self._finish()
        except OSError as error:
            self._failed(error, at_end=True)
        finally:
            for manifest in self._manifests.values():
                manifest.close()

    def _finish(self) -> None:
        only = next(iter(self._devices.items())) if len(self._devices) == 1 else None
        # A check without a device belongs to every device of the run: a run of any of them replaces it.
        owners = [device for device in self._manifests if device] or [""]
        if "" in owners and "" not in self._manifests:
            self._start("")
        for record in self._deferred:
            if only is not None:
                record = {**record, "driver": only[1].get("driver", "")}
            self.write(record, owners)
        self._deferred.clear()
        # The required capabilities are known at the end of the run (the summary's profile): each device's
        # environment file is written again with its own.
        if self.summary is not None and self.summary.profile:
            for device in self._devices:
                self._write_environment(device)


def write_from_results(results_file: Path, directory: Path, reproducers: Path, devices: list[str]) -> list[str]:
    """The Allure results of a run that has ended, written from its results file (the final document, or
    the lines of a cut-short run): the same files the run's own --rdma-allure writes.

    The lab writes its Allure results this way, on the host after the VM stops: in the VM every file is
    an emulated CPU's work (about 6 ms per check under TCG, benchmarks/), and a VM killed mid-run would
    take the ones it had not yet handed over. `devices`: the devices the run named, each named to the
    report's gate even when it ran no check. Returns the lines saying what could not be written.
    """
    document = load(results_file)
    named = dict.fromkeys([*devices, *(document.get("devices") or {})])
    results = Results(tuple(named))
    results.identities.update(document.get("devices") or {})
    writer = AllureWriter(directory, results, reproducers, KnownProfile(dict(document.get("profile") or {})))
    writer.start()
    for record in document.get("results") or []:
        writer.append(record)
    writer.finish()
    return list(results.output_failures.lines.values())
