"""The JSON results file (schema: docs/results-schema.md).

Written in two forms, only by the controller (workers' records arrive there on their reports):
- while running, `<PATH>l` (results.json -> results.jsonl): a "session" line, then one "result"
  line per finished check, flushed at once, so an interrupted run keeps every finished result;
- at the end, PATH: one JSON document with the devices, the per-driver counts and all results
  in collection order, written to a temporary file and renamed so readers never see half a file.
  After Ctrl-C it holds the checks that finished; checks cut short are listed as `unfinished`.

A run that never reached its end (killed, or its VM killed) leaves only the lines;
`pytest-rdma finish PATH.jsonl` makes the final document from them (`finish_main`). A final
document left by an earlier run is removed at the start, so it is never mistaken for this run's.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import platform
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TypedDict, cast

import pytest

from pytest_rdma.command_line import InputError, Parser, fail
from pytest_rdma.report import schema
from pytest_rdma.report.profile import Requirement
from pytest_rdma.report.record import SCHEMA_VERSION, Identity, Record, WaiverRecord
from pytest_rdma.report.redact import redact
from pytest_rdma.report.results import Results, counts
from pytest_rdma.report.terminal import Summary
from pytest_rdma.writable import FILE, problem


class Tool(TypedDict):
    """The versions that wrote a results file."""

    name: str
    version: str
    pytest: str
    python: str


class SessionFacts(TypedDict, total=False):
    """The session fields (docs/results-schema.md): the first line of the .jsonl, the top of the document."""

    schema_version: int
    tool: Tool
    started: str
    argv: list[str]
    strict: bool
    expectations: list[str]


class Document(SessionFacts, total=False):
    """The final results document (or one read back from the lines of a cut-short run)."""

    finished: str | None
    exitstatus: int | None
    devices: dict[str, Identity]
    summary: dict[str, dict[str, dict[str, int]]]  # driver -> verb -> outcome -> number of checks
    results: list[Record]
    unfinished: list[str]
    waivers: dict[str, list[WaiverRecord]]  # stale and refused (expectations.review)
    usage_error: str  # the run stopped on this usage error before any check (report/usage_error.py)
    profile: dict[str, list[Requirement]]  # device -> its required capabilities and how each held


def lines_path(path: Path) -> Path:
    return path.with_name(path.name + "l") if path.suffix == ".json" else path.with_name(path.name + ".jsonl")


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


@functools.cache  # asked per results file: a scan of the installed distributions each time (0.1 s under TCG)
def _tool_version() -> str:
    try:
        from importlib.metadata import version

        return version("pytest-rdma")
    except Exception:  # noqa: BLE001 - running from a source tree without metadata
        return "unknown"


def session_facts(started: str, strict: bool, expectations: list[str]) -> SessionFacts:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {
            "name": "pytest-rdma",
            "version": _tool_version(),
            "pytest": pytest.__version__,
            "python": platform.python_version(),
        },
        "started": started,
        # As everything in the results: no path of this machine (report/redact.py).
        "argv": [redact(arg) for arg in sys.argv[1:]],
        "strict": strict,
        "expectations": [redact(path) for path in expectations],
    }


class JsonResults:
    def __init__(self, path: Path, results: Results, summary: Summary, expectations: list[str]) -> None:
        self.path = path
        self.results = results
        self.summary = summary
        self.strict = summary.strict
        self.expectations = expectations
        self.started = _now()
        self.order: dict[str, int] = {}
        self._lines: IO[str] | None = None

    def session_facts(self) -> SessionFacts:
        return session_facts(self.started, self.strict, self.expectations)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.unlink(missing_ok=True)
            self._lines = lines_path(self.path).open("w", encoding="utf-8")
        except OSError as error:
            self._lines_failed(error)
            return
        self._write({"type": "session", **self.session_facts()})

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        # Without xdist the controller collects; the final file then keeps collection order.
        self.order = {item.nodeid: index for index, item in enumerate(items)}

    def pytest_rdma_record(self, record: Record) -> None:
        self.append(record)

    def append(self, record: Record) -> None:
        self._write({"type": "result", **record})

    def _write(self, line: Mapping[str, object]) -> None:
        if self._lines is None:
            return
        try:
            self._lines.write(json.dumps(line, sort_keys=True) + "\n")
            self._lines.flush()
        except OSError as error:
            self._lines_failed(error)

    def _lines_failed(self, error: OSError) -> None:
        """No more lines (a line after a cut-short one would make the file unreadable); the document may still
        be written at the end, from the records kept in memory."""
        if self._lines is not None:
            try:
                self._lines.close()  # the file is closed even when its last flush fails again
            except OSError:
                pass
            self._lines = None
        lines = lines_path(self.path)
        self.results.output_failures.failed(
            "--rdma-json",
            lines,
            error,
            f"the lines written before are kept ('pytest-rdma finish {lines}' makes a results document from them)",
        )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._lines is not None:
            try:
                self._lines.close()
            except OSError as error:
                self._lines = None
                self.results.output_failures.failed(
                    "--rdma-json", lines_path(self.path), error, "the lines written before are kept", at_end=True
                )
            self._lines = None
        records = sorted(
            self.results.records, key=lambda r: (self.order.get(r["nodeid"], len(self.order)), r["nodeid"])
        )
        document = final_document(
            self.session_facts(),
            records,
            self.results.identities,
            exitstatus=int(session.exitstatus),
            finished=_now(),
            unfinished=self.results.unfinished,
        )
        document["waivers"] = self.summary.waivers
        document["profile"] = self.summary.profile
        try:
            write(self.path, document)
        except OSError as error:
            lines = lines_path(self.path)
            self.results.output_failures.failed(
                "--rdma-json",
                self.path,
                error,
                f"the results lines are kept in {lines} ('pytest-rdma finish {lines}' makes the document from them)",
                at_end=True,
            )


def final_document(
    session: SessionFacts,
    records: list[Record],
    devices: dict[str, Identity],
    exitstatus: int | None,
    finished: str | None,
    unfinished: list[str],
) -> Document:
    document: Document = {
        **session,
        "finished": finished,
        "exitstatus": exitstatus,
        "devices": devices,
        "summary": counts(records),
        "results": records,
    }
    if unfinished:
        document["unfinished"] = list(unfinished)
    return document


def dumps(document: Mapping[str, object]) -> str:
    """The document as JSON text: a key per line at the top, and each list of results one result per
    line (grep finds a check's whole record). json's C encoder writes only unindented text; indenting
    the whole document took seconds at the end of a lab run of the catalogue."""

    def value(item: object) -> str:
        if isinstance(item, list) and item and all(isinstance(entry, dict) for entry in item):
            return "[\n" + ",\n".join(f"  {json.dumps(entry, sort_keys=True)}" for entry in item) + "\n ]"
        return json.dumps(item, sort_keys=True)

    return "{\n" + ",\n".join(f" {json.dumps(key)}: {value(document[key])}" for key in sorted(document)) + "\n}\n"


def write(path: Path, document: Document) -> None:
    """Write to a temporary name and rename: readers see no file or a whole one (a half-written
    temporary file, on a full disk, is removed)."""
    temporary = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        temporary.write_text(dumps(document), encoding="utf-8")
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


def load(path: Path) -> Document:
    """A results file, final (.json) or, for an interrupted run, its lines (.jsonl)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        # json.loads gives the lines as written by JsonResults (read_results checked their shape).
        document: Document = {"results": [], "devices": {}}
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
        raise ValueError(
            f"{path}: results schema_version {document.get('schema_version')!r}, "
            f"this pytest-rdma reads {SCHEMA_VERSION}"
        )
    return document


def final_path(lines: Path) -> Path:
    """results.jsonl -> results.json (the inverse of lines_path)."""
    if lines.name.endswith(".json.jsonl"):
        return lines.with_name(lines.name[: -len(".jsonl")])
    return lines.with_name(lines.name[:-1]) if lines.suffix == ".jsonl" else lines.with_name(lines.name + ".json")


GIVE_RESULTS = "give a results file written by pytest --rdma-json PATH (or the .jsonl of a cut-short run)"


def read_results(path: Path) -> Document:
    """load(path) for a command: anything that is not a results file of this schema is an InputError
    whose one line says what is wrong with the file and what to give instead."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; {GIVE_RESULTS}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read it ({exc}); {GIVE_RESULTS}") from None
    if not text.strip():
        raise InputError(f"{path}: the file is empty; {GIVE_RESULTS}")
    if path.suffix == ".jsonl":
        _check_lines(path, text.splitlines())
    else:
        _check_document(path, text)
    try:
        return load(path)
    except (ValueError, AttributeError, TypeError, KeyError) as exc:
        raise InputError(f"{path}: not a results file this pytest-rdma can read ({exc}); {GIVE_RESULTS}") from None


def _check_schema(path: Path, version: object) -> None:
    if version != SCHEMA_VERSION:
        raise InputError(
            f"{path}: results of schema_version {version!r}; this pytest-rdma ({_tool_version()}) "
            f"reads version {SCHEMA_VERSION}: read it with the pytest-rdma that wrote it, or run the "
            f"checks again"
        )


def _check_document(path: Path, text: str) -> None:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); {GIVE_RESULTS}"
        ) from None
    if (
        not isinstance(document, dict)
        or "schema_version" not in document
        or not isinstance(document.get("results"), list)
    ):
        raise InputError(
            f"{path}: JSON, but not a pytest-rdma results document (no schema_version and results list); {GIVE_RESULTS}"
        )
    _check_schema(path, document["schema_version"])
    if not all(isinstance(record, dict) for record in document["results"]):
        raise InputError(f"{path}: its results are not all records (JSON objects); {GIVE_RESULTS}")
    try:
        schema.check_session(document)
    except schema.SchemaError as exc:
        raise InputError(f"{path}: {exc}") from None
    for index, record in enumerate(document["results"]):
        try:
            schema.check_record(record)
        except schema.SchemaError as exc:
            name = schema.record_name(record)
            raise InputError(f"{path}: results[{index}]{f' ({name})' if name else ''}: {exc}") from None


def _check_lines(path: Path, lines: list[str]) -> None:
    numbered = [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]
    for index, (number, line) in enumerate(numbered):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            if index == len(numbered) - 1 and index > 0:
                return  # the last line of a killed run may be cut short; load() ignores it
            raise InputError(
                f"{path}: line {number} is not JSON ({exc.msg}); the file is damaged, or not "
                f"results lines; {GIVE_RESULTS}"
            ) from None
        if not isinstance(entry, dict) or (index == 0 and entry.get("type") != "session"):
            raise InputError(
                f"{path}: not the lines of a pytest-rdma results file (line {number} is no "
                f"{'session' if index == 0 else 'result'} line); {GIVE_RESULTS}"
            )
        if index == 0:
            _check_schema(path, entry.get("schema_version"))
        _check_entry(path, number, index, entry)


def _check_entry(path: Path, number: int, index: int, entry: dict[str, object]) -> None:
    """One line against the schema: the session line first, then only result records."""
    kind = entry.get("type")
    try:
        if index == 0:
            schema.check_session(entry)
            return
        if kind != "result":
            raise schema.SchemaError(f"'type' is {kind!r}; give \"result\" (only line 1 is the session line)")
        schema.check_record(entry)
    except schema.SchemaError as exc:
        name = schema.record_name(entry)
        raise InputError(f"{path}: line {number}{f' ({name})' if name else ''}: {exc}") from None


def finish_main(argv: list[str]) -> int:
    """`pytest-rdma finish`: the final document of a run that never reached its end, from its lines."""
    parser = Parser(
        prog="pytest-rdma finish",
        description="Make the final results document (docs/results-schema.md) from the .jsonl lines of a run "
        "that was killed before its end. It holds every check whose line was written; exitstatus and "
        "finished are null.",
    )
    parser.add_argument("lines", type=Path, metavar="RESULTS.jsonl")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="RESULTS.json",
        help="where to write it (default: the lines file's name without the final 'l')",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing final document")
    options = parser.parse_args(argv)
    if options.lines.suffix != ".jsonl":
        return fail(
            parser.prog,
            f"{options.lines}: not a .jsonl file; finish reads the results lines a killed run "
            f"left (--rdma-json results.json writes them to results.jsonl)",
        )
    output = options.output or final_path(options.lines)
    try:
        lines = read_results(options.lines)
    except InputError as exc:
        return fail(parser.prog, exc)
    unwritable = problem(output, FILE, "results.json")
    if unwritable:
        return fail(parser.prog, f"{'-o ' if options.output else 'the final document '}{output}: {unwritable}")
    if output.exists() and not options.force:
        return fail(parser.prog, f"{output} exists (the run may have ended normally); --force replaces it")
    records = lines.pop("results")
    devices = lines.pop("devices")
    # cast: what is left of the lines' document, less the final file's own fields, is their session line.
    session = cast(SessionFacts, {key: value for key, value in lines.items() if key not in ("finished", "exitstatus")})
    try:
        write(output, final_document(session, records, devices, exitstatus=None, finished=None, unfinished=[]))
    except OSError as exc:
        return fail(parser.prog, f"cannot write {output} ({exc.strerror or exc}); give -o a path you can write")
    print(f"finish: {output}: {len(records)} results from {options.lines}")
    return 0
