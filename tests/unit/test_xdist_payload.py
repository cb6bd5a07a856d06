"""Under xdist a worker sends what a check is about (its CheckInfo) with the check's setup report only: the
controller keeps it for the call and teardown, so each report is serialised and read back smaller. The records
the controller writes are the same as a run without xdist writes."""

from __future__ import annotations

import json

import pytest
from report_helpers import make_project

from pytest_rdma.report.record import REPORT_KEY

SEEN = f"""

import json, os


def pytest_runtest_logreport(report):
    data = report.__dict__.get({REPORT_KEY!r})
    if data is not None and os.environ.get("PYTEST_XDIST_WORKER") is None:
        with open("phases.jsonl", "a") as seen:
            seen.write(json.dumps([report.nodeid, report.when, "info" in data]) + "\\n")
"""

# What a record holds that may differ between two runs of the same checks.
VARYING = ("duration", "worker", "start", "stop", "reproducer")


def comparable(path: str) -> dict[str, dict]:
    records = json.loads(open(path).read())["results"]
    return {r["nodeid"]: {k: v for k, v in r.items() if k not in VARYING} for r in records}


def test_a_worker_sends_the_checks_info_once_and_the_records_are_whole(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The inner run's controller is told from its workers by PYTEST_XDIST_WORKER, which this test inherits
    # when the plugin's own tests run under xdist: without it, the inner controller would count as a worker.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    expect = make_project(pytester)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + SEEN)
    common = ("-p", "no:cacheprovider", "--rdma-expectations", str(expect), "-k", "not blocked")
    pytester.runpytest_subprocess("-n", "2", *common, "--rdma-json", "x.json")
    phases = [json.loads(line) for line in (pytester.path / "phases.jsonl").read_text().splitlines()]
    assert phases and {when for _, when, _ in phases} == {"setup", "call", "teardown"}
    assert all(has_info == (when == "setup") for _, when, has_info in phases), phases
    (pytester.path / "phases.jsonl").unlink()
    pytester.runpytest_subprocess("-p", "no:xdist", *common, "--rdma-json", "serial.json")
    serial, xdist = comparable(str(pytester.path / "serial.json")), comparable(str(pytester.path / "x.json"))
    assert serial == xdist
    assert all(record["stable_id"] and record["identity"] for record in xdist.values())
