"""An interrupted run keeps every finished check: in the lines, the final document and our JUnit file.

Host tests of the reporters (the lab test, tests/lab/test_interrupted.py, sends real signals
to a real run). Here the interruption is raised by a check itself: KeyboardInterrupt, which
is what pytest turns Ctrl-C into, and SIGKILL of its own process.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from report_helpers import CONFTEST

from pytest_rdma.cli import main as cli_main

TESTS = """
import os
import signal

import pytest

@pytest.mark.parametrize("rdma_dut", ["rxe0"], indirect=True)
@pytest.mark.parametrize("n", range(6))
def test_step(rdma_dut, n):
    if n == 3:
        STOP()
    if n == 2:
        pytest.skip("unsupported: IBV_QPT_UD")  # a skip of a test of its own: not the device's word
"""
INTERRUPT = TESTS.replace("STOP()", "raise KeyboardInterrupt")
KILL = TESTS.replace("STOP()", "os.kill(os.getpid(), signal.SIGKILL)")
FINISHED = [f"test_steps.py::test_step[{n}-rxe0]" for n in range(3)]
CUT_SHORT = "test_steps.py::test_step[3-rxe0]"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_ctrl_c_keeps_the_finished_checks_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_steps=INTERRUPT)
    result = pytester.runpytest_subprocess("-p", "no:xdist", "--rdma-json", "r.json", "--rdma-junit", "j.xml")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(passed=2, skipped=1)
    lines = _lines(pytester.path / "r.jsonl")
    assert [line["type"] for line in lines] == ["session", "result", "result", "result"]
    assert [line["nodeid"] for line in lines[1:]] == FINISHED
    document = json.loads((pytester.path / "r.json").read_text())
    assert document["exitstatus"] == 2
    assert [r["nodeid"] for r in document["results"]] == FINISHED
    assert [r["outcome"] for r in document["results"]] == ["conforms", "conforms", "not exercised"]
    # The check cut short after a passing setup is no result (least of all "conforms"): it is named.
    assert document["unfinished"] == [CUT_SHORT]
    suite = ET.parse(pytester.path / "j.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "rxe0 (rxe)"
    assert [f"test_steps.py::{c.get('name')}" for c in suite.iter("testcase")] == FINISHED
    assert (suite.get("tests"), suite.get("skipped")) == ("3", "1")
    props = {p.get("name"): p.get("value") for p in next(suite.iter("testcase")).iter("property")}
    assert props["driver"] == "rxe" and props["outcome"] == "conforms"


def test_killed_run_keeps_its_lines_and_finish_makes_the_document(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_steps=KILL)
    # Files an earlier run left: the killed run must not leave them to pass for its own.
    (pytester.path / "r.json").write_text('{"stale": true}')
    (pytester.path / "j.xml").write_text("<stale/>")
    result = pytester.runpytest_subprocess("-p", "no:xdist", "--rdma-json", "r.json", "--rdma-junit", "j.xml")
    assert result.ret == -9
    assert not (pytester.path / "r.json").exists() and not (pytester.path / "j.xml").exists()
    lines = _lines(pytester.path / "r.jsonl")
    assert [line.get("nodeid") for line in lines[1:]] == FINISHED
    assert cli_main(["finish", str(pytester.path / "r.jsonl")]) == 0
    assert "3 results" in capsys.readouterr().out
    document = json.loads((pytester.path / "r.json").read_text())
    assert [r["nodeid"] for r in document["results"]] == FINISHED
    assert (document["exitstatus"], document["finished"], document["schema_version"]) == (None, None, 2)
    assert document["summary"] == {"rxe": {"test_step": {"conforms": 2, "not exercised": 1}}}
    assert document["devices"]["rxe0"]["driver"] == "rxe"
    # An existing final document is never replaced unless asked.
    assert cli_main(["finish", str(pytester.path / "r.jsonl")]) == 2  # bad input: one line, exit 2


def test_lab_names_the_results_a_killed_vm_left(tmp_path: Path) -> None:
    from pytest_rdma.lab import kept_results

    assert kept_results(tmp_path) == f"no check finished: no results in {tmp_path}"
    lines = tmp_path / "rxe0" / "results.jsonl"
    lines.parent.mkdir()
    session = json.dumps({"type": "session", "schema_version": 2})
    result = json.dumps({"type": "result", "nodeid": "t::a", "outcome": "conforms"})
    lines.write_text(f"{session}\n{result}\n{result}\n" + result[:20])  # the VM died mid-line
    assert kept_results(tmp_path) == (
        f"results of the finished checks are kept in {lines} (2 finished checks); "
        "'pytest-rdma finish FILE.jsonl' makes the final results document from them"
    )
