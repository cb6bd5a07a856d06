"""lab/warm.py and lab/warm_client.py: pytest forked from a process that imported it, as `python -m pytest` runs.

The server and its runs are real processes here (no device is needed: the runs are pytest sessions of their own
test files), compared with the cold start they stand for.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_rdma.lab import warm, warm_client

CLIENT = str(Path(warm_client.__file__))

PROBE = """
import os, sys

def test_probe():
    print("PROBE", os.getcwd(), os.getcwd() in sys.path, os.environ.get("PROBE_VALUE"), sys.flags.hash_randomization,
          sys.argv[0].endswith(os.path.join("pytest", "__main__.py")))

def test_rewritten():
    values = [1, 2]
    assert values == [1, 3]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[warm.WarmPytest]:
    starter = warm.WarmPytest(sys.executable, tmp_path_factory.mktemp("warm"))
    assert starter.ready(), starter.why_cold
    yield starter
    starter.close()
    assert not Path(starter.path).exists(), "the server removes its socket as it ends"


def probe_file(directory: Path) -> None:
    """PROBE in a directory below `directory`: pytest puts that one on sys.path, `python -m` the working one."""
    (directory / "tests").mkdir()
    (directory / "tests" / "test_probe.py").write_text(PROBE)


def run(server: warm.WarmPytest | None, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """pytest on `args` in `cwd`, through the client (warm) or as `python -m pytest` (cold)."""
    environ = {key: value for key, value in os.environ.items() if key != warm_client.SOCKET_ENV}
    environ.update(env)
    if server is None:
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    else:
        environ[warm_client.SOCKET_ENV] = server.path
        argv = [sys.executable, "-S", CLIENT, "-p", "no:cacheprovider", *args]
    return subprocess.run(argv, cwd=cwd, env=environ, capture_output=True, text=True, timeout=120, check=False)


def test_a_warm_run_is_the_cold_run_it_stands_for(server: warm.WarmPytest, tmp_path: Path) -> None:
    probe_file(tmp_path)
    warm_run = run(server, tmp_path, "-s", "-q", PROBE_VALUE="seen")
    cold_run = run(None, tmp_path, "-s", "-q", PROBE_VALUE="seen")
    assert warm_run.returncode == cold_run.returncode == pytest.ExitCode.TESTS_FAILED
    probe = f"PROBE {tmp_path} True seen 1 True"
    assert probe in warm_run.stdout and probe in cold_run.stdout, warm_run.stdout
    # The test file's assert was rewritten (its values shown), and no plugin was imported too early to be.
    assert "assert [1, 2] == [1, 3]" in warm_run.stdout
    assert "PytestAssertRewriteWarning" not in warm_run.stdout + warm_run.stderr
    assert "deprecated" not in warm_run.stderr

    def lines(out: str) -> list[str]:
        return [line for line in out.splitlines() if " in " not in line]  # the summary line's duration differs

    assert lines(warm_run.stdout) == lines(cold_run.stdout)


def test_a_run_killed_by_a_signal_ends_its_client_the_same_way(server: warm.WarmPytest, tmp_path: Path) -> None:
    (tmp_path / "test_crash.py").write_text("import os, signal\ndef test_crash():\n    os.kill(os.getpid(), 11)\n")
    assert run(server, tmp_path).returncode == -signal.SIGSEGV
    # From Python, as the lab's runner starts its runs: minus the signal, as subprocess.run gives it.
    assert server.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider"], str(tmp_path), dict(os.environ)) == (
        -signal.SIGSEGV
    )


def test_an_environment_that_changes_pythons_start_gets_a_cold_start(server: warm.WarmPytest, tmp_path: Path) -> None:
    probe_file(tmp_path)
    cold = run(server, tmp_path, "-s", "-q", PYTHONHASHSEED="0", PROBE_VALUE="x")
    assert f"PROBE {tmp_path} True x 0 True" in cold.stdout, cold.stdout  # the seed of its own start
    assert warm.starts_differently({"PYTHONHASHSEED": "0"}, {}) == ["PYTHONHASHSEED"]
    assert warm.starts_differently({"LC_ALL": "C"}, {"LC_ALL": "C.UTF-8"}) == ["LC_ALL"]
    assert warm.starts_differently({"PYTHONPATH": "/mine:/srv", "PYTHONUNBUFFERED": "1"}, {"PYTHONPATH": "/srv"}) == []
    assert warm.starts_differently({"PYTHONPATH": "/mine"}, {"PYTHONPATH": "/srv"}) == ["PYTHONPATH"]


def test_a_client_killed_takes_its_run_and_a_signal_is_passed_on(server: warm.WarmPytest, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    (tmp_path / "test_wait.py").write_text(
        f"import os, time\ndef test_wait():\n    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(60)\n"
    )
    environ = dict(os.environ, **{warm_client.SOCKET_ENV: server.path})

    def started() -> tuple[subprocess.Popen[bytes], int]:
        pid_file.unlink(missing_ok=True)
        client = subprocess.Popen(
            [sys.executable, "-S", CLIENT, "-p", "no:cacheprovider"], cwd=tmp_path, env=environ, stdout=subprocess.PIPE
        )
        for _ in range(600):
            if pid_file.exists() and pid_file.read_text():
                return client, int(pid_file.read_text())
            time.sleep(0.05)
        raise AssertionError("the run never started")

    client, pid = started()
    assert pid != client.pid, "the run is the server's fork, not the client"
    client.send_signal(signal.SIGINT)  # Ctrl-C reaches pytest: it stops as interrupted
    assert client.wait(timeout=30) == pytest.ExitCode.INTERRUPTED
    assert client.stdout is not None and b"KeyboardInterrupt" in client.stdout.read()

    client, pid = started()
    client.kill()
    client.wait()
    for _ in range(200):
        if not Path(f"/proc/{pid}").exists():
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"the run {pid} outlived its killed client")


def test_without_a_server_the_client_is_a_cold_start(tmp_path: Path) -> None:
    probe_file(tmp_path)
    environ = dict(os.environ, PROBE_VALUE="alone", **{warm_client.SOCKET_ENV: str(tmp_path / "nobody-here.sock")})
    done = subprocess.run(
        [sys.executable, "-S", CLIENT, "-p", "no:cacheprovider", "-s"], cwd=tmp_path, env=environ, capture_output=True
    )
    assert done.returncode == pytest.ExitCode.TESTS_FAILED
    assert f"PROBE {tmp_path} True alone 1 True".encode() in done.stdout


def test_what_runs_warm_and_what_pytest_would_rewrite() -> None:
    assert warm.runs_warm(["/py", "-m", "pytest", "-k", "x"], "/py") == ["-k", "x"]
    assert warm.runs_warm(["/py", "-mpytest"], "/py") == []
    assert warm.runs_warm(["setpriv", "/py", "-m", "pytest"], "/py") is None  # the runs as nobody stay cold
    assert warm.runs_warm(["/other", "-m", "pytest"], "/py") is None
    files = [
        "xdist/plugin.py",
        "xdist/__init__.py",
        "pytest_xdist-3.8.dist-info/RECORD",
        "_helper.py",
        "__editable___x.py",
    ]
    assert warm.rewritten_packages([(files, ["xdist.plugin"]), (["requests/api.py"], [])]) == {"xdist", "_helper"}
    assert warm_client.exit_code(b"exit 3\n") == 3 and warm_client.exit_code(b"exit -11\n") == -11
    with pytest.raises(ConnectionError):
        warm_client.exit_code(b"nonsense\n")


def test_the_preload_keeps_what_pytest_does_not_rewrite_and_leaves_out_what_the_runs_leave_out() -> None:
    code = (
        "import sys\nfrom pytest_rdma.lab import warm\nwarm.preload(sys.argv[1:])\n"
        "print(*(name in sys.modules for name in ('_pytest.python', 'pluggy', 'pytest_rdma', 'xdist', 'execnet')))"
    )
    everything = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    # pytest and what the plugins import from elsewhere stay; the plugins' own packages are the runs' to import.
    assert everything == ["True", "True", "False", "False", "True"]
    left_out = subprocess.run(
        [sys.executable, "-c", code, "xdist", "xdist.looponfail"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert left_out == ["True", "True", "False", "False", "False"]  # xdist's execnet: not imported for nothing
