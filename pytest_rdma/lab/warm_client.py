"""`python -S warm_client.py ARGS`: `python -m pytest ARGS` run by the warm-start server (lab/warm.py).

The lab's own tests hand this command to pytester in place of `python -m pytest`: each inner run then costs a
fork of a process that has imported pytest and the plugins already, not a Python start and its imports. It is a
script of the standard library only, run without site (-S: 0.15 s of a start under TCG, not 0.6 s), and it exits
as the run did: its code, or the signal that killed the run. The caller's SIGINT and SIGTERM are passed on to the
run; a SIGKILL of this process (pytester's timeout) takes the run with it. Without a server (SOCKET_ENV unset, or
nobody answering) it becomes `python -m pytest ARGS` itself.

It is also the protocol's caller side, which lab/warm.py's WarmPytest uses from Python.
"""

from __future__ import annotations

import array
import json
import os
import signal
import socket
import sys
from collections.abc import Sequence

SOCKET_ENV = "PYTEST_RDMA_WARM_SOCKET"


def request_run(path: str, args: Sequence[str], cwd: str, env: dict[str, str], fds: Sequence[int]) -> socket.socket:
    """Ask the server at `path` for a run of pytest on `args`; the connection its end is read from."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
        payload = json.dumps({"args": list(args), "cwd": cwd, "env": env}).encode() + b"\n"
        connection.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    except OSError:
        connection.close()
        raise
    return connection


def exit_code(answer: bytes) -> int:
    """The server's answer as subprocess gives a child's end: the exit code, or minus the signal (pure)."""
    word, _, number = answer.decode(errors="replace").strip().partition(" ")
    if word == "exit" and number.lstrip("-").isdigit():
        return int(number)
    raise ConnectionError(f"the warm-start server answered {answer!r}")


def wait_end(connection: socket.socket) -> int:
    """The run's end, read from its connection (which is then closed)."""
    with connection:
        answer = b""
        while not answer.endswith(b"\n"):
            more = connection.recv(64)
            if not more:
                raise ConnectionError("the warm-start server ended before the run did")
            answer += more
    return exit_code(answer)


def main(args: list[str]) -> None:
    path = os.environ.get(SOCKET_ENV, "")
    try:
        connection = request_run(path, args, os.getcwd(), dict(os.environ), (0, 1, 2)) if path else None
    except OSError:
        connection = None
    if connection is None:  # no server: the cold start it stands for
        os.execv(sys.executable, [sys.executable, "-m", "pytest", *args])

    def pass_on(number: int, _frame: object) -> None:
        connection.send(bytes([number]))

    signal.signal(signal.SIGINT, pass_on)
    signal.signal(signal.SIGTERM, pass_on)
    code = wait_end(connection)
    sys.stdout.flush()
    if code < 0:  # died of a signal: so does this process, so that its parent sees the same end
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    main(sys.argv[1:])
