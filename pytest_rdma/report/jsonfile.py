"""The JSON results file (schema: docs/results-schema.md).

Written in two forms, only by the controller (workers' records arrive there on their reports):
- while running, `<PATH>l` (results.json -> results.jsonl): a "session" line, then one "result"
  line per finished check, flushed at once, so an interrupted run keeps every finished result;
- at the end, PATH: one JSON document with the devices, the per-driver counts and all results
  in collection order, written to a temporary file and renamed so readers never see half a file.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from pytest_rdma.report.record import SCHEMA_VERSION
from pytest_rdma.report.results import Results, counts


def lines_path(path: Path) -> Path:
    return path.with_name(path.name + "l") if path.suffix == ".json" else path.with_name(path.name + ".jsonl")


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _tool_version() -> str:
    try:
        from importlib.metadata import version

        return version("pytest-rdma")
    except Exception:  # noqa: BLE001 - running from a source tree without metadata
        return "unknown"


class JsonResults:
    def __init__(self, path: Path, results: Results, strict: bool, expectations: list[str]) -> None:
        self.path = path
        self.results = results
        self.strict = strict
        self.expectations = expectations
        self.started = _now()
        self.order: dict[str, int] = {}
        self._lines: IO[str] | None = None
        results.sinks.append(self.append)

    def session_facts(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "pytest-rdma", "version": _tool_version(), "pytest": pytest.__version__,
                     "python": platform.python_version()},
            "started": self.started,
            "argv": sys.argv[1:],
            "strict": self.strict,
            "expectations": self.expectations,
        }

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lines = lines_path(self.path).open("w", encoding="utf-8")
        self._write({"type": "session", **self.session_facts()})

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        # Without xdist the controller collects; the final file then keeps collection order.
        self.order = {item.nodeid: index for index, item in enumerate(items)}

    def append(self, record: dict[str, Any]) -> None:
        self._write({"type": "result", **record})

    def _write(self, line: dict[str, Any]) -> None:
        if self._lines is None:
            return
        self._lines.write(json.dumps(line, sort_keys=True) + "\n")
        self._lines.flush()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._lines is not None:
            self._lines.close()
            self._lines = None
        records = sorted(self.results.records, key=lambda r: (self.order.get(r["nodeid"], len(self.order)),
                                                               r["nodeid"]))
        document = {
            **self.session_facts(),
            "finished": _now(),
            "exitstatus": int(exitstatus),
            "devices": self.results.identities,
            "summary": counts(records),
            "results": records,
        }
        temporary = self.path.with_name(self.path.name + f".tmp{os.getpid()}")
        temporary.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        temporary.replace(self.path)


def load(path: Path) -> dict[str, Any]:
    """A results file, final (.json) or, for an interrupted run, its lines (.jsonl)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        document: dict[str, Any] = {"results": [], "devices": {}}
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                # The last line of a killed run may be cut short; everything before it counts.
                if number == len(text.splitlines()):
                    break
                raise
            kind = entry.pop("type", "result")
            if kind == "session":
                document.update(entry)
            else:
                document["results"].append(entry)
                if entry.get("identity") and entry.get("device"):
                    document["devices"].setdefault(entry["device"], entry["identity"])
        return document
    document = json.loads(text)
    if document.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: results schema_version {document.get('schema_version')!r}, "
                         f"this pytest-rdma reads {SCHEMA_VERSION}")
    return document
