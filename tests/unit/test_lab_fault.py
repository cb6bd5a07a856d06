"""A guest kernel fault costs the check in progress, not the run: the pure parts on the host.

The console's report of the fault, the faulting check's record and the resume file (lab/fault.py), and the
plugin's half (report/resume.py) on the reporting self-tests' demo project: the running file written before
each check, the records of the boots before replayed into every reporter, their failures in the exit code.
The lab test that faults a real guest kernel is tests/host_lab/test_kernel_fault.py.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from report_helpers import make_project, node

from pytest_rdma import resume_files
from pytest_rdma.lab import fault
from pytest_rdma.outcomes import CONFORMS, DEVIATES

BOOT = [
    "[    0.000000] Linux version 6.1.0-56-amd64",
    "[    0.512000] BUG: a boot-time report that is not this fault's",
]
OOPS = [
    "[   41.100000] BUG: unable to handle page fault for address: ffffffffc0a51e40",
    "[   41.100100] #PF: supervisor read access in kernel mode",
    "[   41.100200] PGD 1e0c067 P4D 1e0c067 PUD 1e0e067 PMD 0",
    "[   41.100300] Oops: 0000 [#1] PREEMPT SMP NOPTI",
    "[   41.100400] CPU: 0 PID: 512 Comm: python3 Not tainted 6.1.0-56-amd64 #1  Debian 6.1.140-1",
    "[   41.100500] RIP: 0010:rxe_requester+0x2a1/0x1420 [rdma_rxe]",
    "[   41.100600] Call Trace:",
    "[   41.100700]  <TASK>",
    "[   41.100800]  rxe_post_send+0x3c0/0x540 [rdma_rxe]",
    "[   41.100900]  </TASK>",
    "[   41.101000] ---[ end trace 0000000000000000 ]---",
    "[   41.101100] Kernel panic - not syncing: Fatal exception",
    "[   41.101200] Kernel Offset: 0x1c000000 from 0xffffffff81000000",
    "[   41.101300] ---[ end Kernel panic - not syncing: Fatal exception ]---",
]


def test_the_report_of_an_oops_runs_from_its_bug_line_to_the_end_of_the_panic() -> None:
    # Boot lines with a BUG of their own, pytest's lines, then the Oops and its panic.
    console = ["lab: rxe0 ready at guest uptime 9.1 s", "test_x.py::test_a PASSED", *BOOT, *OOPS, "virtme-ng: exit"]
    kind, report = fault.kernel_report(console)
    assert kind == "oops"
    assert report[0] == "BUG: unable to handle page fault for address: ffffffffc0a51e40"
    assert report[-1] == "---[ end Kernel panic - not syncing: Fatal exception ]---"
    assert len(report) == len(OOPS) and "rxe_post_send+0x3c0/0x540 [rdma_rxe]" in " ".join(report)


def test_a_panic_without_an_oops_is_reported_from_its_trigger() -> None:
    console = [
        "[   12.000000] sysrq: Trigger a crash",
        "[   12.000100] Kernel panic - not syncing: sysrq triggered crash",
        "[   12.000200] CPU: 1 PID: 300 Comm: python3",
        "[   12.000300] ---[ end Kernel panic - not syncing: sysrq triggered crash ]---",
    ]
    kind, report = fault.kernel_report(console)
    assert kind == "panic" and report[0] == "sysrq: Trigger a crash" and len(report) == 4


def test_no_panic_on_the_console_is_no_report() -> None:
    assert fault.kernel_report([*BOOT, "lab: rxe0 ready at guest uptime 9.1 s", "[   50.000000] rdma_rxe: loaded"]) == (
        "",
        [],
    )


# The 6.1 console of an Oops the kernel survived (rxe, test_ibv_post_send[rxe0-enum-outside-RC-opcode-large], booted
# without oops=panic): its first line after pytest's progress mark, the rest of the report (shortened), then nothing.
SURVIVED = """s[   66.531794] BUG: unable to handle page fault for address: 00000013c04c71c8
[   66.532097] #PF: supervisor read access in kernel mode
[   66.532389] Oops: 0000 [#1] PREEMPT SMP NOPTI
[   66.532491] CPU: 1 PID: 186 Comm: python Not tainted 6.1.0-56-amd64 #1  Debian 6.1.192-2
[   66.533009] RIP: 0010:req_next_wqe+0xb9/0x1b0 [rdma_rxe]
[   66.533009] Call Trace:
[   66.533009]  <TASK>
[   66.533009]  rxe_requester+0xb6/0xe40 [rdma_rxe]
[   66.533009]  rxe_do_task+0x86/0x110 [rdma_rxe]
[   66.533009]  rxe_post_send+0x28d/0x4b0 [rdma_rxe]
[   66.533009]  </TASK>
[   66.533009] ---[ end trace 0000000000000000 ]---
[   66.533009] note: python[186] exited with irqs disabled
virtio_loop: Unexpected poll revents 11"""


def test_an_oops_without_a_panic_is_reported_from_its_bug_line() -> None:
    console = [*BOOT, "lab: rxe0 ready at guest uptime 26.3 s", "1 worker [4 items]", "", *SURVIVED.splitlines()]
    kind, report = fault.kernel_report(console)
    assert kind == "oops"
    assert report[0] == "BUG: unable to handle page fault for address: 00000013c04c71c8"
    assert "RIP: 0010:req_next_wqe+0xb9/0x1b0 [rdma_rxe]" in report
    assert report[-1] == "note: python[186] exited with irqs disabled"


def test_a_long_report_keeps_its_beginning_and_the_panics_last_line() -> None:
    long = [*OOPS[:7], *(f"[   41.1007{i:02d}]  frame_{i}+0x1/0x2" for i in range(200)), *OOPS[7:]]
    kind, report = fault.kernel_report(long)
    assert len(report) == fault.REPORT_LINES and report[-1].startswith("---[ end Kernel panic")


def _record(nodeid: str, outcome: str = CONFORMS) -> dict[str, Any]:
    return {
        "nodeid": nodeid,
        "device": "rxe0",
        "driver": "rxe",
        "identity": {"driver": "rxe", "kernel": "6.1.0-56-amd64"},
        "stable_id": nodeid,
        "outcome": outcome,
    }


def _lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps({"type": "result", **r}) + "\n" for r in records))


def _running(run_dir: Path, nodeid: str) -> Path:
    path = run_dir / resume_files.RUNNING_FILE
    info = {"nodeid": nodeid, "device": "rxe0", "driver": "", "identity": None, "stable_id": "test_b", "verb": "v"}
    path.write_text(json.dumps({"nodeid": nodeid, "info": info, "limit": 300}))
    return path


def test_the_faulting_check_is_recorded_once_beside_the_checks_before_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "rxe0"
    run_dir.mkdir()
    _lines(run_dir / "results.jsonl", [_record("t.py::test_a")])
    oops = fault.Fault("oops", [line.split("] ", 1)[1] for line in OOPS], 3.5, 300)
    record = fault.record_fault(_running(run_dir, "t.py::test_b"), oops)
    assert record["outcome"] == DEVIATES and record["driver"] == "rxe"  # the identity of the records before
    assert record["observation"] == {"kernel_fault": "oops", "console": oops.report}
    assert record["observed"].startswith("guest kernel oops: BUG: unable to handle page fault")
    assert record["kernel_log"]["kinds"] == ["oops"] and record["stable_id"] == "test_b"
    assert not (run_dir / resume_files.RUNNING_FILE).exists()
    assert resume_files.resumed_nodeids(run_dir) == ["t.py::test_a", "t.py::test_b"]
    # The run's own lines hold them all too, should the lab stop here.
    kept = [json.loads(line)["nodeid"] for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert kept == ["t.py::test_a", "t.py::test_b"]
    # A second fault, in the next boot, whose run replayed the two and ran one more check.
    _lines(run_dir / "results.jsonl", [_record("t.py::test_a"), record, _record("t.py::test_c")])
    fault.record_fault(_running(run_dir, "t.py::test_d"), fault.Fault("hang", [], 301.0, 300))
    assert resume_files.resumed_nodeids(run_dir) == ["t.py::test_a", "t.py::test_b", "t.py::test_c", "t.py::test_d"]


def test_a_hang_is_said_with_its_limit() -> None:
    record = fault.fault_record({"nodeid": "t.py::x", "info": {}}, fault.Fault("hang", [], 301.0, 300), [])
    assert "did not finish in 300 s (--rdma-hang-limit)" in record["reason"]
    assert record["observation"] == {"kernel_fault": "hang", "console": []}


def test_a_check_past_its_limit_is_overdue(tmp_path: Path) -> None:
    running = _running(tmp_path, "t.py::test_b")
    started = running.stat().st_mtime
    assert not resume_files.overdue(running, started + 299)
    assert resume_files.overdue(running, started + 301)
    running.write_text(json.dumps({"nodeid": "t.py::test_b", "limit": 0}))
    assert not resume_files.overdue(running, started + 10_000)  # 0: no limit


def test_a_new_lab_run_forgets_the_boots_of_the_one_before(tmp_path: Path) -> None:
    (tmp_path / "rxe0").mkdir()
    resume_files.run_ended(tmp_path, "rxe0", 1)
    assert resume_files.ended_runs(tmp_path) == {"rxe0": 1}
    _running(tmp_path / "rxe0", "t.py::x")
    (tmp_path / "rxe0" / resume_files.RESUME_FILE).write_text("")
    assert resume_files.resumed(tmp_path)
    resume_files.forget_boots(tmp_path)
    assert not list(tmp_path.glob("*/*")) and resume_files.ended_runs(tmp_path) == {}
    assert not resume_files.resumed(tmp_path)  # the lab's first boot
    (tmp_path / "siw0").mkdir()
    (tmp_path / "siw0" / resume_files.RESUME_FILE).write_text("")  # a run another run's fault cut short
    assert resume_files.resumed(tmp_path)


def run_demo(pytester: pytest.Pytester, expect: Path, selected: str, *args: str) -> pytest.RunResult:
    """One boot's pytest run of the demo project, without xdist, as the lab's runner starts it."""
    return pytester.runpytest_subprocess(
        "-p", "no:xdist", "-p", "no:cacheprovider", "--rdma-expectations", str(expect), "-k", selected, *args
    )


def test_the_running_file_names_the_device_once_the_run_has_opened_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault in a device's first check has no record before it to take the driver from: the running file gives
    it, from the identity read when the run's start opened the device (its port check)."""
    expect = make_project(pytester)
    conftest = pytester.path / "conftest.py"
    opened = "def pytest_configure(config):\n    remember(IDENTITIES['rxe0'])  # as plugin.validate_ports does\n"
    imports = "from pytest_rdma.provider.describe import remember\n"
    conftest.write_text(imports + conftest.read_text() + "\n\n" + opened)
    running = pytester.path / "running.json"
    monkeypatch.setenv(resume_files.RUNNING_ENV, str(running))
    assert run_demo(pytester, expect, "rxe0 and conforming").ret == 0
    entry = json.loads(running.read_text())
    assert isinstance(entry["pid"], int) and entry["pid"] not in (0, os.getpid())  # its check's process: pytest's
    info = entry["info"]
    assert (info["driver"], info["identity"]["driver"], info["identity"]["name"]) == ("rxe", "rxe", "rxe0")


def test_a_resumed_run_replays_the_boots_before_and_runs_only_the_rest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plugin's half, on the demo project: the first boot's running file names the check in progress;
    the next boot's results hold the records of the boots before (the fault's included) and its own, each
    check once, in JSON and JUnit, and the replayed deviation fails the run."""
    expect = make_project(pytester)
    running = pytester.path / "running.json"
    monkeypatch.setenv(resume_files.RUNNING_ENV, str(running))
    first = run_demo(pytester, expect, "rxe0 and conforming", "--rdma-json", "first.json")
    assert first.ret == 0, first.stdout.str()
    entry = json.loads(running.read_text())
    assert entry["nodeid"] == node("rxe0", "conforming") and entry["limit"] == 300
    assert entry["info"]["stable_id"] == "test_ibv_demo[keeps-promise-conforming]"
    before = json.loads((pytester.path / "first.json").read_text())["results"]
    faulted = fault.fault_record(
        {"nodeid": node("rxe0", "blocked"), "info": {"device": "rxe0", "stable_id": "b"}},
        fault.Fault("oops", ["BUG: unable to handle page fault"], 1.0, 300),
        before,
    )
    resume = pytester.path / "resume.jsonl"
    _lines(resume, [*before, faulted])
    monkeypatch.setenv(resume_files.RESUME_ENV, str(resume))
    deselected = [f"--deselect={r['nodeid']}" for r in [*before, faulted]]
    second = run_demo(pytester, expect, "rxe0", "--rdma-json", "results.json", "--rdma-junit", "junit.xml", *deselected)
    assert second.ret == pytest.ExitCode.TESTS_FAILED, second.stdout.str()
    # pytest's own counts know only this boot: the terminal says what was replayed, and what of it fails.
    second.stdout.fnmatch_lines(
        [
            f"{len(before) + 1} replayed*, 1 failing:",
            "  deviates*test_ibv_demo?rxe0-keeps-promise-blocked?: kernel fault: *",
        ]
    )
    results = json.loads((pytester.path / "results.json").read_text())
    nodeids = [r["nodeid"] for r in results["results"]]
    rxe0 = {node("rxe0", b) for b in ("conforming", "deviant", "rc-only", "unreached", "blocked")}
    assert sorted(nodeids) == sorted(rxe0), "every check of the device once"
    assert results["exitstatus"] == 1
    assert {r["nodeid"]: r["outcome"] for r in results["results"]}[node("rxe0", "blocked")] == DEVIATES
    junit = (pytester.path / "junit.xml").read_text()
    assert junit.count("<testcase") == len(rxe0) and "guest kernel oops" in junit
    # All of the device's checks already recorded: nothing left to run, and the replayed deviation still counts.
    _lines(resume, results["results"])
    everything = [f"--deselect={nodeid}" for nodeid in nodeids]
    third = run_demo(pytester, expect, "rxe0", "--rdma-json", "third.json", *everything)
    assert third.ret == pytest.ExitCode.TESTS_FAILED, third.stdout.str()
    assert len(json.loads((pytester.path / "third.json").read_text())["results"]) == len(rxe0)
    assert os.environ[resume_files.RESUME_ENV] == str(resume)


def test_a_checks_own_pytest_run_inherits_neither_lab_variable(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lab test starts a pytest run of its own: had it inherited the resume file, every inner run after a
    reboot would replay the outer run's records into its results (CI at 8c95856: 23 lab tests failed so)."""
    resume = pytester.path / "resume.jsonl"
    _lines(resume, [])
    monkeypatch.setenv(resume_files.RESUME_ENV, str(resume))
    monkeypatch.setenv(resume_files.RUNNING_ENV, str(pytester.path / "running.json"))
    pytester.makepyfile(
        test_inner=f"""
        import os

        def test_sees_no_lab_variable():
            assert {resume_files.RESUME_ENV!r} not in os.environ
            assert {resume_files.RUNNING_ENV!r} not in os.environ
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider", "--rdma-json", "out.json")
    result.assert_outcomes(passed=1)


def test_ending_a_hung_vm_kills_what_runs_below_virtme_ng() -> None:
    """vng forks QEMU: killed alone it would leave QEMU running, and the console's pipe open."""
    from pytest_rdma.lab import vm

    proc = subprocess.Popen(["sh", "-c", "sleep 60 & wait"], stdout=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not vm.descendants(proc.pid):
        assert time.monotonic() < deadline, "sh started no child"
        time.sleep(0.05)
    below = vm.descendants(proc.pid)
    vm.kill_tree(proc)
    proc.wait(timeout=10)  # killed, or ended when its child was (the order of the kills)
    # Nothing below holds the pipe any more: its end of file comes at once, not when `sleep 60` ends.
    assert proc.stdout is not None and select.select([proc.stdout], [], [], 5)[0], f"{below} still hold the pipe"
    assert proc.stdout.read() == b""


def test_the_running_file_is_rewritten_in_place_whole_each_time(tmp_path: Path) -> None:
    """One descriptor for the run: each check's entry replaces the one before, a shorter one leaving no tail of the
    longer (the host reads it as JSON, and its mtime as the check's start)."""
    from types import SimpleNamespace

    from pytest_rdma.report.resume import RunningCheck

    running = tmp_path / "running.json"
    writer = RunningCheck(running, SimpleNamespace(hang_limit=0, explore=0))  # type: ignore[arg-type]
    writer.write(b'{"nodeid": "a-long-node-id-of-the-first-check", "limit": 30}\n')
    first = running.stat().st_mtime_ns
    time.sleep(0.01)
    writer.write(b'{"nodeid": "b", "limit": 0}\n')
    assert json.loads(running.read_text()) == {"nodeid": "b", "limit": 0}
    assert running.stat().st_mtime_ns > first
    writer.pytest_unconfigure()
    assert writer._fd is None


def _running_in(run_dir: Path, nodeid: str, pid: int) -> Path:
    run_dir.mkdir(exist_ok=True)
    path = _running(run_dir, nodeid)
    path.write_text(json.dumps({**json.loads(path.read_text()), "pid": pid}))
    return path


def test_the_fault_of_runs_side_by_side_is_the_check_whose_process_the_report_names(tmp_path: Path) -> None:
    report = [line.split("] ", 1)[1] for line in OOPS]  # "CPU: 0 PID: 512 Comm: python3"
    rxe = _running_in(tmp_path / "rxe0", "t.py::test_b[rxe0]", 512)
    siw = _running_in(tmp_path / "siw0", "t.py::test_b[siw0]", 513)
    assert fault.reported_pid(report) == 512
    assert fault.whose_fault([(rxe, 512), (siw, 513)], report) == [rxe]
    assert fault.whose_fault([(rxe, 611), (siw, 612)], report) == []  # a kernel thread's, or another process's
    assert fault.whose_fault([(siw, 0)], report) == [siw]  # one run at a time: the check in progress, as before
    assert fault.reported_pid(["BUG: kernel NULL pointer dereference"]) == 0


def test_a_run_another_runs_fault_cut_short_keeps_its_finished_checks_and_runs_its_check_again(tmp_path: Path) -> None:
    siw = _running_in(tmp_path / "siw0", "t.py::test_c[siw0]", 513)
    _lines(tmp_path / "siw0" / "results.jsonl", [_record("t.py::test_a[siw0]"), _record("t.py::test_b[siw0]")])
    assert fault.keep_finished(siw) == "t.py::test_c[siw0]"
    assert not siw.exists()
    assert resume_files.resumed_nodeids(tmp_path / "siw0") == ["t.py::test_a[siw0]", "t.py::test_b[siw0]"]


def _console(path: Path, pid: int) -> Path:
    path.write_text("\n".join([*BOOT, "lab: rxe0, siw0 ready at guest uptime 9.1 s", *OOPS]).replace("512", str(pid)))
    return path


def test_the_host_records_the_named_runs_fault_and_keeps_the_others_checks(tmp_path: Path) -> None:
    from pytest_rdma.lab import _record_faults, vm

    rxe = _running_in(tmp_path / "rxe0", "t.py::test_b[rxe0]", 512)
    siw = _running_in(tmp_path / "siw0", "t.py::test_c[siw0]", 513)
    _lines(tmp_path / "siw0" / "results.jsonl", [_record("t.py::test_a[siw0]")])
    lines = _record_faults(tmp_path, _console(tmp_path / "console.log", 512), 0, vm.VMRun(None, None, []))
    assert len(lines) == 1 and "t.py::test_b[rxe0]: kernel fault: guest kernel oops" in lines[0]
    assert not rxe.exists() and not siw.exists()
    assert resume_files.resumed_nodeids(tmp_path / "rxe0") == ["t.py::test_b[rxe0]"]
    assert resume_files.resumed_nodeids(tmp_path / "siw0") == ["t.py::test_a[siw0]"]  # test_c runs again
    assert not (tmp_path / resume_files.ONE_AFTER_ANOTHER_FILE).exists()


def test_a_fault_that_names_no_running_process_is_no_checks_and_the_runs_go_one_after_the_other(
    tmp_path: Path,
) -> None:
    from pytest_rdma.lab import _record_faults, vm

    rxe = _running_in(tmp_path / "rxe0", "t.py::test_b[rxe0]", 512)
    siw = _running_in(tmp_path / "siw0", "t.py::test_c[siw0]", 513)
    lines = _record_faults(tmp_path, _console(tmp_path / "console.log", 99), 0, vm.VMRun(None, None, []))
    assert len(lines) == 1 and "t.py::test_b[rxe0], t.py::test_c[siw0]" in lines[0]
    assert "one after the other" in lines[0]
    assert not rxe.exists() and not siw.exists()
    assert resume_files.resumed_nodeids(tmp_path / "rxe0") == [] == resume_files.resumed_nodeids(tmp_path / "siw0")
    assert (tmp_path / resume_files.ONE_AFTER_ANOTHER_FILE).exists()
    resume_files.forget_boots(tmp_path)  # a new lab run goes side by side again
    assert not (tmp_path / resume_files.ONE_AFTER_ANOTHER_FILE).exists()
