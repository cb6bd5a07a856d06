"""An interrupted run keeps every finished check on disk (Ctrl-C, or its process killed).

Each test starts a real run of the conformance suite on the lab device (an inner pytest process
with the lab's reporters: --rdma-json, --junitxml, --rdma-allure), waits until K checks have
finished, interrupts it and reads what it left:
- Ctrl-C (SIGINT): pytest ends the session (exit 2). The lines, the final JSON document and
  JUnit each hold exactly the checks pytest reported; the check cut short is in none of them.
- SIGKILL: no session end at all. The lines hold every finished check; no final document or
  JUnit file claims to be the run's; `pytest-rdma finish` makes the document from the lines.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_rdma.cli import main as cli_main
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report.record import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[2]
K = 5  # finished checks before the interruption
SLICE = "test_ibv_modify_qp"  # hundreds of checks: the run is far from its end when interrupted
OUTCOMES = {CONFORMS, DEVIATES, UNSUPPORTED, WAIVED, CRASH, TIMEOUT, ERROR}
# A -v line: the node id, then the outcome pytest reports for it.
VERBOSE_RESULT = re.compile(r"^(\S+::\S+) (PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)\b")
WAIT_S = 600.0  # for K checks under TCG with other VMs on the machine; far more than they need


def result_lines(path: Path) -> list[dict[str, Any]]:
    """The result lines written so far; the last one may be half written while the run goes on."""
    if not path.exists():
        return []
    lines = []
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            break
        if entry.get("type") == "result":
            lines.append(entry)
    return lines


def run_until(device: str, out: Path, sig: signal.Signals) -> tuple[int, str, float]:
    """Run the slice, send `sig` once K results are on disk; its exit code, -v output and seconds to exit."""
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-v",
        str(REPO / "suites"),
        "-k",
        SLICE,
        f"--rdma-dev={device}",
        f"--rdma-json={out / 'results.json'}",
        f"--junitxml={out / 'junit.xml'}",
        f"--rdma-allure={out / 'allure'}",
    ]
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_RDMA_LAB_MARKS"}
    env["PYTHONUNBUFFERED"] = "1"  # so that a killed run's output is all there up to the kill
    log = (out / "stdout.txt").open("w")
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + WAIT_S
    try:
        while len(result_lines(out / "results.jsonl")) < K:
            assert proc.poll() is None, f"the run ended before {K} results: {(out / 'stdout.txt').read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"fewer than {K} results after {WAIT_S:.0f} s"
            time.sleep(0.2)
        proc.send_signal(sig)
        sent = time.monotonic()
        code = proc.wait(timeout=120)
        return code, (out / "stdout.txt").read_text(), time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def reported(output: str) -> list[str]:
    """The checks pytest says finished (-v prints each with its outcome), in order, once each."""
    return list(dict.fromkeys(m.group(1) for line in output.splitlines() if (m := VERBOSE_RESULT.match(line))))


def assert_valid_lines(out: Path) -> list[dict[str, Any]]:
    raw = (out / "results.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in raw]  # every line whole and valid, the last one too
    assert entries[0]["type"] == "session" and entries[0]["schema_version"] == SCHEMA_VERSION
    results = entries[1:]
    assert all(entry["type"] == "result" and entry["outcome"] in OUTCOMES for entry in results)
    assert len({entry["nodeid"] for entry in results}) == len(results), "each check once"
    return results


def test_ctrl_c_keeps_every_finished_check(tmp_path: Path, device: str) -> None:
    code, output, exit_s = run_until(device, tmp_path, signal.SIGINT)
    assert code == pytest.ExitCode.INTERRUPTED, output[-3000:]
    finished = reported(output)
    assert len(finished) >= K
    results = assert_valid_lines(tmp_path)
    assert [r["nodeid"] for r in results] == finished
    # The session end ran: the final document holds the same checks, and names the one cut short.
    document = json.loads((tmp_path / "results.json").read_text())
    assert document["exitstatus"] == pytest.ExitCode.INTERRUPTED
    assert [r["nodeid"] for r in document["results"]] == finished
    assert len(document.get("unfinished", [])) <= 1 and not set(document.get("unfinished", [])) & set(finished)
    assert sum(n for verbs in document["summary"].values() for cell in verbs.values() for n in cell.values()) == len(
        finished
    )
    # JUnit, what a CI engineer reads: the finished checks, each named, with its driver; nothing else.
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    # pytest itself leaves an empty <testcase time="0.000"/> for the check Ctrl-C cut short: not a result.
    cases = [case for case in suite.iter("testcase") if case.get("name") is not None]
    assert [f"{c.get('classname', '').replace('.', '/')}.py::{c.get('name')}" for c in cases] == finished
    assert suite.get("tests") == str(len(finished))
    # pytest's --junitxml takes a testcase's properties from its teardown report: the check whose
    # teardown Ctrl-C cut short (the last one, its call already reported as passed) has none. It failed
    # once so, in a lab run. Every other testcase names its driver.
    driverless = [
        (case.get("name"), [p.get("name") for p in case.iter("property")], [child.tag for child in case])
        for case in cases
        if not any(p.get("name") == "rdma.driver" for p in case.iter("property"))
    ]
    assert [name for name, _, _ in driverless] in ([], [cases[-1].get("name")]), (
        f"testcases without rdma.driver (name, properties, children): {driverless}"
    )
    # The Allure writer writes a file per check as its record arrives: one for each finished check, each whole.
    allure = [json.loads(path.read_text()) for path in (tmp_path / "allure").glob("*-result.json")]
    assert len(allure) == len(finished)
    print(f"Ctrl-C after {len(finished)} checks: exit {code} {exit_s:.1f} s after the signal")


def test_killed_run_keeps_every_finished_check(tmp_path: Path, device: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, output, _ = run_until(device, tmp_path, signal.SIGKILL)
    assert code == -signal.SIGKILL
    results = assert_valid_lines(tmp_path)
    assert len(results) >= K
    finished = reported(output)
    # Every check with a line was reported; a reported one without a line can only be the last,
    # its teardown (where a check's record is completed) cut short by the kill.
    nodeids = [r["nodeid"] for r in results]
    assert nodeids == finished[: len(nodeids)] and len(finished) - len(nodeids) <= 1
    assert not (tmp_path / "results.json").exists() and not (tmp_path / "junit.xml").exists()
    assert cli_main(["finish", str(tmp_path / "results.jsonl")]) == 0
    capsys.readouterr()
    document = json.loads((tmp_path / "results.json").read_text())
    assert [r["nodeid"] for r in document["results"]] == nodeids and document["exitstatus"] is None
    assert document["devices"][device]["driver"] in ("rxe", "siw")
