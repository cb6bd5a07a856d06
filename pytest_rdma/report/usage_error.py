"""A run stopped by a usage error still writes the reports it was asked for, saying why.

A CI job whose device name is wrong must show a failed run on its dashboard, not "no report":
the JUnit files (--rdma-junit and pytest's own --junitxml) get one testcase in error with the
message, and the JSON results (--rdma-json) a document with no results and `usage_error`
(docs/results-schema.md). A path the error is about is not written (it cannot be), and a report
that cannot be written is left: the usage error itself is what the user sees.
"""

from __future__ import annotations

import datetime as dt
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_rdma import settings
from pytest_rdma.report import jsonfile, junit

# The paths a usage error is about (outputs.py puts them here): a report of that error cannot go there.
REFUSED = pytest.StashKey[tuple[Path, ...]]()

CLASSNAME = "pytest-rdma"
CASE = "usage-error"


def junit_document(message: str) -> ET.Element:
    """One testsuite holding one testcase in error: the usage error."""
    root = ET.Element("testsuites", name="pytest-rdma", tests="1", failures="0", errors="1")
    suite = ET.SubElement(
        root, "testsuite", name="pytest-rdma", tests="1", failures="0", errors="1", skipped="0", time="0.000"
    )
    case = ET.SubElement(suite, "testcase", classname=CLASSNAME, name=CASE, time="0.000000")
    error = ET.SubElement(case, "error", type="usage error", message=junit.xml_text(message))
    error.text = junit.xml_text(f"pytest-rdma stopped before any check ran: {message}")
    return root


def json_document(message: str, strict: bool) -> jsonfile.Document:
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    document = jsonfile.final_document(
        jsonfile.session_facts(now, strict, []),
        [],
        {},
        exitstatus=int(pytest.ExitCode.USAGE_ERROR),
        finished=now,
        unfinished=[],
    )
    document["usage_error"] = message
    return document


def _paths(config: pytest.Config) -> tuple[Path | None, Path | None, Path | None]:
    """--rdma-junit, --junitxml and --rdma-json, as far as they can be read."""
    options = config.stash.get(settings.SETTINGS, None)
    junit_path: Path | None
    json_path: Path | None
    if options is not None:
        junit_path, json_path = options.junit, options.json
    else:
        junit_text, json_text = settings.output_text(config, "junit"), settings.output_text(config, "json")
        junit_path = Path(junit_text) if junit_text else None
        json_path = Path(json_text) if json_text else None
    xmlpath = getattr(config.option, "xmlpath", None)
    return junit_path, Path(xmlpath) if xmlpath else None, json_path


def write_reports(config: pytest.Config, error: pytest.UsageError) -> list[Path]:
    """Write the reports asked for, but not to a path the error is about; the paths written."""
    message = " ".join(str(error).split())
    refused = {path.absolute() for path in config.stash.get(REFUSED, ())}
    junit_path, xml_path, json_path = _paths(config)
    written: list[Path] = []
    for path in dict.fromkeys(p for p in (junit_path, xml_path) if p is not None):
        if path.absolute() in refused:
            continue
        try:
            junit.write(path, junit_document(message))
            written.append(path)
        except OSError:
            continue
    if json_path is not None and json_path.absolute() not in refused:
        document = json_document(message, bool(config.getoption("rdma_strict", None)))
        try:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            jsonfile.write(json_path, document)
            # An earlier run's lines beside it would read as this run's: the lines say the same.
            lines = jsonfile.lines_path(json_path)
            if lines.absolute() not in refused:
                session = {"type": "session", **jsonfile.session_facts(document["started"], document["strict"], [])}
                session["usage_error"] = message
                lines.write_text(json.dumps(session, sort_keys=True) + "\n", encoding="utf-8")
            written.append(json_path)
        except OSError:
            pass
    return written
