"""A provider that kills pytest costs the check in progress, not the run: the lab's restart (lab/crash.py).

The runner's loop (guest.run_restarting) on the reporting self-tests' demo project, whose check aborts its
process on rxe0 when asked: the check is recorded as a crash, pytest starts again for the rest, and the last
run's reporters hold every check once. Pure runner logic on the host (no device; the lab test with a real
segfault is tests/lab/test_parallel.py).
"""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from report_helpers import VARIANTS, WAIVERS, make_project, node

from pytest_rdma import resume_files
from pytest_rdma.lab import crash, guest

ABORTING = node("rxe0", "rc-only")  # rc-only: unsupported on siw, and on rxe what DEMO_RC_ONLY says


def run_lab_way(pytester: pytest.Pytester, expect: Path, run_dir: Path, log: Path) -> int:
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *guest.xdist_args([])]
    argv += ["--rdma-expectations", str(expect), f"--rdma-json={run_dir}/results.json"]
    argv += [f"--rdma-junit={run_dir}/junit.xml"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pytester.path), os.environ.get("PYTHONPATH", "")]))
    return guest.run_restarting(guest.RunOutput(log), argv, str(pytester.path), env, run_dir, "demo")


def test_a_check_that_kills_pytest_is_recorded_as_a_crash_and_the_rest_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    expect = make_project(pytester)
    monkeypatch.setenv("DEMO_RC_ONLY", "abort")
    run_dir = pytester.mkdir("results")
    log = pytester.path / "lab-output.txt"
    code = run_lab_way(pytester, expect, run_dir, log)
    output = log.read_text()
    assert code == pytest.ExitCode.TESTS_FAILED, output
    assert f"lab: === demo: {ABORTING}: pytest died of SIGABRT while running this check" in output
    records = {r["nodeid"]: r for r in json.loads((run_dir / "results.json").read_text())["results"]}
    assert len(records) == 2 * len(VARIANTS), sorted(records)  # every check once: none lost, none twice
    crashed = records[ABORTING]
    assert crashed["outcome"] == "crash" and crashed["driver"] == "rxe" and crashed["worker"] == "lab"
    assert crashed["reason"] == "pytest died of SIGABRT while running this check"
    assert records[node("rxe0", "conforming")]["outcome"] == "conforms"
    assert records[node("siw0", "rc-only")]["outcome"] == "unsupported"  # a check after the crash, run
    junit = ET.parse(run_dir / "junit.xml").getroot()
    cases = list(junit.iter("testcase"))  # one <testsuite> per device
    assert len(cases) == 2 * len(VARIANTS)
    assert [case.get("name") for case in cases if case.find("error") is not None] == ["keeps-promise[rc-only]"]
    assert not (run_dir / resume_files.RUNNING_FILE).exists()


def test_a_waived_crash_is_waived_after_the_restart(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    waivers = dict(WAIVERS)
    waivers["rxe"] += """
[[waiver]]
id = "test_ibv_demo[keeps-promise-rc-only]"
reason = "rxe aborts here (known)"
link = "ibv_demo(3) RETURN VALUE"
observed = { crash = true }
"""
    expect = make_project(pytester, waivers=waivers)
    monkeypatch.setenv("DEMO_RC_ONLY", "abort")
    run_dir = pytester.mkdir("results")
    code = run_lab_way(pytester, expect, run_dir, pytester.path / "lab-output.txt")
    records = {r["nodeid"]: r for r in json.loads((run_dir / "results.json").read_text())["results"]}
    assert records[ABORTING]["outcome"] == "waived" and records[ABORTING]["waiver"]["status"] == "applied"
    assert records[ABORTING]["observation"] == {"crash": True}
    assert code == pytest.ExitCode.OK, (pytester.path / "lab-output.txt").read_text()


def test_a_death_outside_any_check_is_no_checks_crash(tmp_path: Path) -> None:
    """A running file whose check has its record already: the process died after it, which no check did."""
    running = tmp_path / resume_files.RUNNING_FILE
    running.write_text(json.dumps({"nodeid": "t.py::test_a", "info": {"device": "rxe0"}, "limit": 300}))
    (tmp_path / "results.jsonl").write_text(
        json.dumps({"type": "result", "nodeid": "t.py::test_a", "outcome": "conforms"}) + "\n"
    )
    assert crash.record_crash(running, 11) is None
    assert not (tmp_path / resume_files.RESUME_FILE).exists()


def test_a_signal_is_named() -> None:
    assert crash.signal_name(11) == "SIGSEGV" and crash.signal_name(6) == "SIGABRT"
    assert crash.signal_name(250) == "signal 250"
