"""Warm starts: one process imports pytest and its plugins once, then forks a ready copy of itself per pytest run.

Why: under TCG a pytest start in the lab VM costs about 5.8 s before it collects anything, 4 s of it Python's own
start and the imports of pytest, its plugins and ours (measured in the VM: `python -c pass` 0.6 s, `import
pytest_rdma.plugin` 3.6 s). The lab starts pytest several times per boot (a run per device, again after a crash)
and the lab's own tests start it about seventy times. Each start here costs a fork instead, and the imports of the
first one are made while the devices are being created.

What a run gets is what `python -m pytest ARGS` would give it: its own process (its pid is the one the running file
and a kernel fault's report name), the caller's standard streams, working directory and environment, `sys.path` as
`-m` makes it (the directory first, then PYTHONPATH), `sys.argv`, and an exit status that is the process's own (a
signal that kills the run kills it: the caller sees it as it would see a child's). The server only imports: no
pytest configuration, no plugin registration, nothing of a run is made before the fork.

What stays a cold start: a command that is not `PYTHON -m pytest ARGS` with the server's own Python, the runs as
nobody (a user's process from its very start), xdist's workers (execnet starts them).

Roles: `serve` is the server (`python -m pytest_rdma.lab.warm SOCKET [PLUGIN...]`: the plugins the runs leave
out); `WarmPytest` starts it and runs pytest through it from Python (the in-VM runner); lab/warm_client.py is the
same from a command line (the lab's tests hand it to pytester in place of `python -m pytest`).

The protocol: the caller connects and sends one JSON request (argv, cwd, env) with its three standard streams'
descriptors; it may then send signal numbers (one byte each), which are passed on to the run. The server answers one
line, "exit N", once the run has ended (N < 0: killed by signal -N). A caller that goes away (pytester's timeout
kills it) takes its run with it: SIGKILL.
"""

from __future__ import annotations

import array
import atexit
import importlib
import io
import json
import os
import runpy
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from pytest_rdma.lab.warm_client import request_run, wait_end

_REQUEST_LIMIT = 1 << 22  # an environment and argv, as JSON: far below this
READY = b"ready\n"


def runs_warm(argv: Sequence[str], python: str) -> list[str] | None:
    """pytest's arguments when `argv` is `python -m pytest ARGS` with this Python; None for anything else (pure)."""
    if len(argv) >= 3 and argv[0] == python and argv[1] == "-m" and argv[2] == "pytest":
        return list(argv[3:])
    if len(argv) >= 2 and argv[0] == python and argv[1] == "-mpytest":
        return list(argv[2:])
    return None


def rewritten_packages(distributions: Iterable[tuple[Iterable[str], Iterable[str]]]) -> set[str]:
    """The top-level names pytest may rewrite the asserts of (pure): each pytest plugin distribution's (given as its
    files and its pytest11 modules) top-level modules and packages, and its entry points' own packages."""
    names = set()
    for files, modules in distributions:
        modules = list(modules)
        if not modules:
            continue
        names |= {module.partition(".")[0] for module in modules}
        for file in files:
            parts = file.replace("\\", "/").split("/")
            if parts[-1].endswith(".py") and not parts[0].endswith((".dist-info", ".egg-info", ".data")) and parts[0]:
                names.add(parts[0].removesuffix(".py"))
    # An editable install's finder is imported by site, before any run, and pytest leaves it alone.
    return {name for name in names if not name.startswith("__editable__")}


def preload(left_out: Collection[str] = ()) -> list[str]:
    """Import what a pytest run imports (pytest, its built-in plugins, the installed plugins and ours), then forget
    the plugins' own packages again: pytest rewrites their asserts as it imports them, which it cannot do to a module
    imported before (it warns), and which of them it rewrites depends on the run (`-p`, the directory's metadata). So
    a run imports those itself, on top of everything they import from elsewhere (the standard library, pluggy,
    execnet, allure's commons...), which stays loaded. Not the plugins `left_out` (entry point names: the runs'
    `-p no:NAME`), whose imports would only delay the first run. What failed to import."""
    import pytest  # noqa: F401 - the import is the point
    from _pytest.config import default_plugins

    names = [f"_pytest.{name}" for name in default_plugins]
    plugins: list[tuple[list[str], list[str]]] = []
    try:
        from importlib.metadata import distributions

        for distribution in distributions():
            entries = [entry for entry in distribution.entry_points if entry.group == "pytest11"]
            if entries:
                plugins.append(([str(file) for file in distribution.files or ()], [entry.module for entry in entries]))
                names += [entry.module for entry in entries if entry.name not in left_out]
    except Exception:  # noqa: BLE001 - a broken distribution: its run says so, cold
        pass
    failed = []
    for name in dict.fromkeys([*names, "pytest_rdma.plugin"]):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the run imports it again and reports it as pytest would
            failed.append(name)
    forgotten = rewritten_packages([*plugins, ([], ["pytest_rdma.plugin"])])
    for name in [name for name in sys.modules if name.partition(".")[0] in forgotten]:
        del sys.modules[name]
    return failed


def _standard_streams() -> None:
    """New sys.stdin/stdout/stderr over descriptors 0, 1 and 2 (just replaced), as Python's start makes them: the
    server's encoding and error handlers (its start had the run's locale and PYTHON* settings, starts_differently),
    stdout buffered by line on a terminal only, stderr always, and written through where PYTHONUNBUFFERED is set."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        before = getattr(sys, f"__{name}__")
        try:
            binary = open(fd, "rb" if fd == 0 else "wb", closefd=False)  # noqa: SIM115 - it is the process's stream
        except OSError:  # a closed descriptor, as Python leaves it: None
            setattr(sys, name, None)
            setattr(sys, f"__{name}__", None)
            continue
        stream = io.TextIOWrapper(
            binary,
            encoding=getattr(before, "encoding", None),
            errors=getattr(before, "errors", None),
            line_buffering=fd == 2 or (fd == 1 and (unbuffered or os.isatty(fd))),
            write_through=unbuffered and fd != 0,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


# What Python reads from the environment only as it starts: a run whose environment says otherwise than the server's
# starts cold (the forked child execs `python -m pytest`), so that it gets what its own start would have given it.
# PYTHONPATH is put into sys.path by the child; PYTHONUNBUFFERED and PYTHONDONTWRITEBYTECODE are set by it too.
_READ_BY_THE_CHILD = ("PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONBREAKPOINT")


def starts_differently(run_env: dict[str, str], server_env: dict[str, str]) -> list[str]:
    """The variables Python reads at its start whose values differ between the run's and the server's environments
    (pure): any PYTHON* but those the child sets itself, and the locale's, which decides the streams' encoding."""
    names = {name for name in (*run_env, *server_env) if name.startswith("PYTHON") or name in ("LANG", "LANGUAGE")}
    names |= {name for name in (*run_env, *server_env) if name.startswith("LC_")}
    differ = [name for name in sorted(names - set(_READ_BY_THE_CHILD)) if run_env.get(name) != server_env.get(name)]
    server_path = [entry for entry in server_env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    run_path = [entry for entry in run_env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    if run_path[len(run_path) - len(server_path) :] != server_path:
        differ.append("PYTHONPATH")  # the preloaded modules came from the server's path: the run's must end with it
    return differ


def _become_run(request: dict, fds: list[int]) -> None:
    """In the forked child: take the caller's streams, directory, environment and arguments, and run pytest.
    Never returns: the process ends as `python -m pytest` would (atexit handlers run, streams flushed)."""
    code = 1
    try:
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        env = request["env"]
        cold = starts_differently(env, _SERVER_ENV)
        os.environ.clear()
        os.environ.update(env)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if cold:
            os.execv(sys.executable, [sys.executable, "-m", "pytest", *request["args"]])
        server_path = len([entry for entry in _SERVER_ENV.get("PYTHONPATH", "").split(os.pathsep) if entry])
        run_path = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
        # `python -m` puts the working directory first, then PYTHONPATH (the server's own entries are its last ones).
        sys.path[:] = [os.getcwd(), *run_path[: len(run_path) - server_path], *sys.path[1:]]
        sys.argv[:] = ["-m", *request["args"]]
        sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
        _standard_streams()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        runpy.run_module("pytest", run_name="__main__", alter_sys=True)  # what `python -m pytest` runs, as it runs it
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # noqa: BLE001 - as Python's own top level: the traceback, then status 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()
        finally:
            os._exit(code)


def _status_line(status: int) -> bytes:
    """The answer: the run's exit code as subprocess gives it (minus the signal that killed it)."""
    return f"exit {os.waitstatus_to_exitcode(status)}\n".encode()


def _mind(connection: socket.socket, request: dict, fds: list[int]) -> None:
    """In a child of the server: fork the run, pass the caller's signals on to it, answer its end. Never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the server ignores its children's ends; this one waits for its run
    pid = os.fork()
    if pid == 0:
        connection.close()
        _become_run(request, fds)
    for fd in fds:
        os.close(fd)
    ended = os.pidfd_open(pid)
    while True:
        ready, _, _ = select.select([connection.fileno(), ended], [], [])
        if ended in ready:
            _, status = os.waitpid(pid, 0)
            try:
                connection.sendall(_status_line(status))
            except OSError:
                pass
            os._exit(0)
        data = connection.recv(64)
        if not data:  # the caller went away: so does its run
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os._exit(0)
        for number in data:
            os.kill(pid, number)


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    """One request: its JSON (up to a newline) and the three descriptors that came with its first bytes."""
    fds = array.array("i")
    data, ancillary, _, _ = connection.recvmsg(_REQUEST_LIMIT, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    while not data.endswith(b"\n"):
        more = connection.recv(_REQUEST_LIMIT)
        if not more:
            raise ConnectionError("the request ended before its end of line")
        data += more
    return json.loads(data), list(fds)


_SERVER_ENV: dict[str, str] = {}


def serve(path: str, left_out: Collection[str] = ()) -> None:
    """The server: preload, say READY on stdout, then fork a run for each caller until stdin closes."""
    global _SERVER_ENV
    _SERVER_ENV = dict(os.environ)
    failed = preload(left_out)
    if failed:
        print(f"warm: not preloaded (a run imports them itself): {', '.join(failed)}", file=sys.stderr, flush=True)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the minders end on their own: nobody waits for them
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    try:
        while True:
            # Stdin is the starter's pipe: its end (the starter's process ended) ends the server.
            ready, _, _ = select.select([listener.fileno(), 0], [], [])
            if 0 in ready and not os.read(0, 64):
                return
            if listener.fileno() not in ready:
                continue
            connection, _ = listener.accept()
            try:
                request, fds = _receive(connection)
            except (OSError, ValueError, ConnectionError) as error:
                print(f"warm: a request could not be read: {error}", file=sys.stderr, flush=True)
                connection.close()
                continue
            if os.fork() == 0:
                listener.close()
                _mind(connection, request, fds)
            connection.close()
            for fd in fds:
                os.close(fd)
    finally:
        listener.close()
        Path(path).unlink(missing_ok=True)


def cold_run(argv: list[str], cwd: str, env: dict[str, str], stdout: int | None = None) -> int:
    """`argv` as a subprocess (its output to `stdout`, both streams, when given); its exit code."""
    if stdout is None:
        return subprocess.run(argv, cwd=cwd, env=env, check=False).returncode
    return subprocess.run(argv, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.STDOUT, check=False).returncode


class WarmPytest:
    """The server, started at once (its imports go on while the caller does other work), and the runs through it.

    A run through it is a run of `python -m pytest`; any other command, or a server that did not start, runs as a
    subprocess (said once, with why). `READY_LIMIT_S` bounds the wait for a server whose preload hung."""

    READY_LIMIT_S = 120.0

    def __init__(self, python: str, directory: Path, left_out: Sequence[str] = ()) -> None:
        self.python = python
        self.path = str(directory / f"warm-{os.getpid()}.sock")
        self.why_cold = ""
        self._ready: bool | None = None
        self._ready_lock = threading.Lock()  # the runs side by side ask at once; one reads the server's answer
        self._process: subprocess.Popen | None = None
        try:
            self._process = subprocess.Popen(
                [python, "-m", "pytest_rdma.lab.warm", self.path, *left_out],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd="/",  # not the caller's directory: sys.path[0], from which the server's imports would come
            )
        except OSError as error:
            self.why_cold = f"the warm-start server did not start: {error}"
            self._ready = False

    def ready(self) -> bool:
        """Whether runs go through the server: it said READY (waited for here, once)."""
        with self._ready_lock:
            if self._ready is None:
                assert self._process is not None and self._process.stdout is not None
                ends = select.select([self._process.stdout], [], [], self.READY_LIMIT_S)[0]
                said = self._process.stdout.readline() if ends else b""
                self._ready = said == READY
                if not self._ready:
                    self.why_cold = f"the warm-start server was not ready ({said!r} in {self.READY_LIMIT_S:.0f} s)"
            return self._ready

    def run(self, argv: list[str], cwd: str, env: dict[str, str], stdout: int | None = None) -> int:
        """`argv` run to its end, warm when it is `python -m pytest`; its exit code as subprocess.run gives it."""
        args = runs_warm(argv, self.python)
        if args is None or not self.ready():
            return cold_run(argv, cwd, env, stdout)
        streams = [0, 1, 2] if stdout is None else [0, stdout, stdout]  # as a subprocess would inherit them
        try:
            connection = request_run(self.path, args, cwd, env, streams)
        except OSError as error:
            self.why_cold, self._ready = f"the warm-start server could not be reached: {error}", False
            return cold_run(argv, cwd, env, stdout)
        return wait_end(connection)

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()  # the server's end; it removes its socket
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m pytest_rdma.lab.warm SOCKET [PLUGIN-LEFT-OUT...]", file=sys.stderr)
        return 2
    serve(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
