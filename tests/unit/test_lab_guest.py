"""The lab's in-guest decisions: xdist in pytest's argv, leftover resources (pure), and where a run's output goes."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from pytest_rdma.lab import guest
from pytest_rdma.lab.guest import LAB_SETTINGS, leftover, resource_report, xdist_args
from pytest_rdma.settings import OPTIONS


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["suites", "-k", "modify_qp"],
        ["-x", "--rdma-leaks=fail", "suites/test_verbs.py::test_ibv_alloc_pd"],
        ["-p", "no:randomly", "-k", "not -n"],  # a -k expression is not an option
    ],
    ids=["none", "slice", "options", "other-plugin"],
)
def test_lab_default_runs_checks_in_pytests_own_process_without_xdists_import(args: list[str]) -> None:
    # A crash costs its check all the same: the runner restarts pytest (guest.run_restarting, lab/crash.py).
    assert xdist_args(args) == ["-p", "no:xdist", "-p", "no:xdist.looponfail"]


@pytest.mark.parametrize(
    "args",
    [
        ["-n", "2"],
        ["-n2"],
        ["-nauto"],
        ["-n", "0"],
        ["--numprocesses=4"],
        ["--numprocesses", "auto"],
        ["--dist", "loadfile"],
        ["--dist=no"],
        ["-p", "no:xdist"],
        ["-pno:xdist"],
        ["--pdb"],
        ["--trace"],
        ["--tx", "popen"],
        ["--looponfail"],
    ],
)
def test_the_users_own_xdist_choice_is_kept(args: list[str]) -> None:
    assert xdist_args(["suites", *args]) == []


def test_nothing_about_xdist_without_xdist_installed() -> None:
    assert xdist_args([], xdist_available=False) == []


IDLE = {"rxe0": {"pd": 1, "cq": 1, "qp": 1, "mr": 0, "ctx": 0}}


def test_counts_back_to_start_are_reported_as_such() -> None:
    document, lines = resource_report(["rxe0"], IDLE, IDLE)
    assert document == {"before": IDLE, "after": IDLE, "leaked": {}}
    assert lines == ["rxe0: resource counts back to start"]


def test_objects_left_after_the_run_are_a_leak_of_that_device() -> None:
    after = {"rxe0": {**IDLE["rxe0"], "mr": 2, "ctx": 1}}
    document, lines = resource_report(["rxe0"], IDLE, after)
    assert document["leaked"] == {"rxe0": {"ctx": 1, "mr": 2}}
    assert lines[0].startswith("rxe0: LEAKED after the run: +1 ctx, +2 mr (rdma resource;")


def test_fewer_objects_than_at_the_start_is_not_this_runs_leak() -> None:
    assert leftover(IDLE, {"rxe0": {**IDLE["rxe0"], "pd": 0}}) == {}


def test_unreadable_counts_are_said_not_hidden() -> None:
    _, lines = resource_report(["siw0"], {}, {})
    assert lines == ["siw0: resource counts not readable (no RDMA netlink?)"]


def test_the_labs_settings_are_names_the_plugin_reads() -> None:
    """A misspelt name would be ignored in silence (the lab once set one nothing read)."""
    by_env = {option.env: option for option in OPTIONS}
    for name, value in LAB_SETTINGS.items():
        assert name in by_env, f"{name} is not the environment name of any pytest-rdma option"
        by_env[name].parse([value])  # and the value parses


def test_a_runs_reproducers_go_to_its_results_directory_unless_it_says_where(tmp_path) -> None:
    # CI's checkout is on a mount of its own, which the VM shares read-only: the plugin's default
    # (./rdma-reproducers in the working directory) stopped the lab's own tests with a usage error.
    run_dir = tmp_path / "rxe0"
    env = {"PATH": "/bin"}
    assert guest.output_env(["tests/lab", "-k", "x"], env, run_dir) == {
        "PATH": "/bin",
        "RDMA_REPRODUCERS": str(run_dir / "reproducers"),
    }
    assert env == {"PATH": "/bin"}  # the shared environment is not changed for the next run
    for args in (["--rdma-json=r.json"], ["--rdma-json", "r.json"], ["--rdma-reproducers=here"]):
        assert guest.output_env(args, env, run_dir) == env, args
    for name in ("RDMA_JSON", "RDMA_REPRODUCERS"):
        assert guest.output_env([], {name: "x"}, run_dir) == {name: "x"}


def test_a_runs_places_are_filled_in_its_arguments(tmp_path: Path) -> None:
    # The run as nobody fills them too: an unfilled "{results}" once sent its JUnit file to a
    # directory named so in the read-only checkout, and the self-test's lab step failed.
    args = ["--junitxml={results}/x.xml", "--rdma-allure={scratch}/allure", "-k", "{dev} and not {x}"]
    assert guest.placed(args, tmp_path / "r", tmp_path / "s", "rxe0") == [
        f"--junitxml={tmp_path}/r/x.xml",
        f"--rdma-allure={tmp_path}/s/allure",
        "-k",
        "rxe0 and not {x}",
    ]


def test_every_device_runs_as_nobody_even_after_one_failed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:

    ran: list[str] = []

    def run_one(plan: dict, device: str, *_: object) -> int:
        ran.append(device)
        return 1 if device == "rxe0" else 0

    monkeypatch.setattr(guest, "nobody_cannot_run", lambda plan: None)
    monkeypatch.setattr(guest, "unprivileged_run", run_one)
    code = guest.unprivileged_runs({"devices": ["rxe0", "siw0"]}, tmp_path, {}, False)
    assert sorted(ran) == ["rxe0", "siw0"]  # at once, each in its own thread
    assert code == 1


def test_the_run_as_nobody_does_not_explore_again(tmp_path: Path, pytester: pytest.Pytester) -> None:
    # An exploration of 300 s in root's run would otherwise be repeated, whole, by the run as nobody.
    from pytest_rdma import settings

    plan = {"python": "/usr/bin/python3", "pytest_args": ["--rdma-explore", "300", "-k", "memlock"]}
    argv = guest.nobody_argv(plan, "rxe0", tmp_path, False, "rdma_process")
    pytest_args = argv[argv.index("pytest") + 1 :]
    assert settings.read(pytester.parseconfig(*pytest_args)).explore == 0  # the parser the run will use
    assert argv[-2:] == ["-m", "rdma_process"] and "--rdma-dev=rxe0" in argv
    # Nor does it load Hypothesis's plugin for an exploration it does not make.
    plan["pytest_args"] = ["-k", "memlock"]
    argv = guest.nobody_argv(plan, "rxe0", tmp_path, False, "rdma_process")
    argv = guest.without_unasked_plugins(argv, {}, tmp_path)
    assert "no:hypothesispytest" in argv


def test_the_runs_as_nobody_go_side_by_side_each_with_its_own_output(tmp_path: Path) -> None:
    # The two devices' runs as nobody run at once; the first writes to the console, the second to its
    # lab-output.txt (shown after the first ends), so that their lines never mix.
    first_running = threading.Event()
    second_running = threading.Event()
    seen: dict[str, bool] = {}

    def first(output: guest.RunOutput) -> int:
        output.say("first's line")
        first_running.set()
        seen["the second ran beside the first"] = second_running.wait(10)
        return 0

    def second(output: guest.RunOutput) -> int:
        seen["the first ran beside the second"] = first_running.wait(10)
        second_running.set()
        output.say("second's line")
        return 1

    codes = guest.at_once([(first, tmp_path / "rxe0"), (second, tmp_path / "siw0")])
    assert codes == [0, 1]
    assert seen == {"the first ran beside the second": True, "the second ran beside the first": True}
    assert (tmp_path / "siw0" / guest.RUN_OUTPUT).read_text() == "second's line\n"


@pytest.mark.parametrize(
    ("plan", "runs", "cpus", "one_after_another", "expected"),
    [
        ({"pytest_args": []}, 2, 2, False, True),  # the README's command: rxe0 and siw0, a vCPU each
        ({"pytest_args": []}, 1, 2, False, False),  # nothing to go beside
        ({"pytest_args": []}, 2, 1, False, False),  # one vCPU
        ({"pytest_args": []}, 2, 2, True, False),  # after a fault no process of theirs was named in
        ({"pytest_args": ["-n", "2"]}, 2, 2, False, False),  # xdist's workers have the vCPUs
        ({"pytest_args": [], "peer_host": "lab-host2"}, 2, 2, False, False),  # the two-host lab
    ],
)
def test_device_runs_go_side_by_side_where_each_has_a_vcpu_and_nothing_else_asks(
    plan: dict, runs: int, cpus: int, one_after_another: bool, expected: bool
) -> None:
    assert guest.side_by_side(plan, runs, cpus, one_after_another) is expected


def test_a_boot_after_a_fault_adds_to_the_output_the_fault_kept_from_being_shown(tmp_path: Path) -> None:
    (tmp_path / "siw0").mkdir()
    (tmp_path / "siw0" / guest.RUN_OUTPUT).write_text("the first boot's line\n")  # the VM ended before it was shown

    def first(output: guest.RunOutput) -> int:
        return 0

    def second(output: guest.RunOutput) -> int:
        output.say("the second boot's line")
        return 0

    guest.at_once([(first, tmp_path / "rxe0"), (second, tmp_path / "siw0")], resumed=True)
    assert (tmp_path / "siw0" / guest.RUN_OUTPUT).read_text() == "the first boot's line\nthe second boot's line\n"
    guest.at_once([(first, tmp_path / "rxe0"), (second, tmp_path / "siw0")])  # a lab run's first boot starts anew
    assert (tmp_path / "siw0" / guest.RUN_OUTPUT).read_text() == "the second boot's line\n"


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_runs_output_reaches_its_file_through_a_pipe_and_its_exit_code_comes_back(tmp_path: Path) -> None:
    # pytest writes into a pipe that the runner copies: each of its writes and dup2() calls on a file of the
    # results share was a round trip to the host's virtio-fs daemon.
    log = tmp_path / guest.RUN_OUTPUT
    log.write_text("the runner's line\n")
    code = guest.RunOutput(log).run(
        _python(
            "import os, stat, sys; print('out', stat.S_ISFIFO(os.fstat(1).st_mode), flush=True);"
            "print('err', stat.S_ISFIFO(os.fstat(2).st_mode), file=sys.stderr, flush=True); sys.exit(3)"
        ),
        str(tmp_path),
        dict(os.environ),
    )
    assert code == 3
    assert log.read_text() == "the runner's line\nout True\nerr True\n"


def test_all_a_run_wrote_is_in_its_file_when_the_run_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The runner shows a side-by-side run's file once the run has returned (at_once): a copy still under way then
    # would cut its end off. The copying thread is slowed here, so that only waiting for it keeps the test green.
    copy = guest.RunOutput._copy

    def slow_copy(self: guest.RunOutput, read_end: int) -> None:
        time.sleep(0.5)
        copy(self, read_end)

    monkeypatch.setattr(guest.RunOutput, "_copy", slow_copy)
    log = tmp_path / "out.txt"
    assert guest.RunOutput(log).run(_python("print('x' * 1000)"), str(tmp_path), dict(os.environ)) == 0
    assert log.read_text() == "x" * 1000 + "\n"


def test_a_run_killed_by_a_signal_still_says_which(tmp_path: Path) -> None:
    # run_restarting tells a crash (a check that killed pytest) by the negative exit code.
    code = guest.RunOutput(tmp_path / "out.txt").run(
        _python("import os, signal; print('before', flush=True); os.kill(os.getpid(), signal.SIGSEGV)"),
        str(tmp_path),
        dict(os.environ),
    )
    assert code == -signal.SIGSEGV
    assert (tmp_path / "out.txt").read_text() == "before\n"


def test_the_consoles_run_is_copied_to_the_runners_standard_output(
    tmp_path: Path, capfd: pytest.CaptureFixture
) -> None:
    code = guest.RunOutput(None).run(_python("print('on the console')"), str(tmp_path), dict(os.environ))
    assert code == 0
    assert capfd.readouterr().out == "on the console\n"


def test_a_process_left_holding_the_pipe_does_not_keep_the_run_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process that outlives pytest with its output (a leftover daemon): the run ends with pytest, and what the
    # leftover writes later still reaches the file, as it did when it wrote there itself.
    monkeypatch.setattr(guest.RunOutput, "COPY_GRACE_S", 0.2)
    log = tmp_path / "out.txt"
    leftover = "import time; time.sleep(1.5); print('late', flush=True)"
    started = time.monotonic()
    code = guest.RunOutput(log).run(
        _python(f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {leftover!r}]); print('early')"),
        str(tmp_path),
        dict(os.environ),
    )
    assert code == 0 and time.monotonic() - started < 1.2
    deadline = time.monotonic() + 10
    while "late" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log.read_text() == "early\nlate\n"
