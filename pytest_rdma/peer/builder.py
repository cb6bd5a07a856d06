"""The peer host's side of --rdma-confirm for a two-host reproducer: sent there by execnet's remote_exec.

It receives the receiving side's C program, builds it with that host's compiler and runs it on a
port of the system's choosing (port 0: the program prints "LISTENING PORT"), sends that port back so
the sending side can connect, and then the program's exit status and last lines. Standard library
only, and nothing of the session's: its own channel beside the peer agent's, one program, then gone.
Every wait has a limit, and a program still running at the end is killed.
"""

from __future__ import annotations

import select
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the channel execnet's remote_exec hands this module, never imported at run time
    from execnet import Channel

LISTEN_SECONDS = 30.0  # from the program's start to its LISTENING line (it opens the device first)


def _tail(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-6:])[-600:]


def build_and_run(channel: Channel) -> None:
    """Build the program the first message carries, run it, say its port, then how it ended.

    Each answer is (word, value, text): ("not built", None, why), ("listening", port, ""), then
    ("ran", exit status or None, its last lines)."""
    asked = channel.receive()
    host = socket.gethostname()
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        said = f"no C compiler on the peer host {host}: install gcc and libibverbs-dev there"
        channel.send(("not built", None, said))
        return
    with tempfile.TemporaryDirectory(prefix="rdma-repro-pair-") as scratch:
        source, program = Path(scratch) / "receiver.c", Path(scratch) / "receiver"
        source.write_text(asked["text"], encoding="utf-8")
        try:
            built = subprocess.run(
                [compiler, "-pipe", "-o", str(program), str(source), *asked["link"]],
                capture_output=True, text=True, timeout=asked["build_seconds"], check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            said = f"the peer host {host} did not build it within {asked['build_seconds']} s"
            channel.send(("not built", None, said))
            return
        if built.returncode != 0:
            first = next((line for line in built.stderr.splitlines() if "error" in line), built.stderr.strip())
            channel.send(("not built", None, f"on the peer host {host}: {first[:300]}"))
            return
        running = subprocess.Popen(
            [str(program), "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
        )
        try:
            channel.send(_listening(running))
            try:
                out, _ = running.communicate(timeout=asked["run_seconds"])
            except subprocess.TimeoutExpired:
                running.kill()
                out, _ = running.communicate()
                channel.send(("ran", None, f"still running after {asked['run_seconds']} s (killed)"))
                return
            channel.send(("ran", running.returncode, _tail(out)))
        finally:
            if running.poll() is None:
                running.kill()
                running.wait()


def _listening(running: subprocess.Popen[str]) -> tuple[str, object, str]:
    """("listening", port, "") once the program says so; ("ran", status, its output) if it ends first."""
    assert running.stdout is not None  # piped above
    said: list[str] = []
    deadline = time.monotonic() + LISTEN_SECONDS
    while time.monotonic() < deadline:
        if not select.select([running.stdout], [], [], max(deadline - time.monotonic(), 0))[0]:
            break
        line = running.stdout.readline()
        if not line:
            return ("ran", running.wait(), _tail("".join(said)))
        said.append(line)
        if line.startswith("LISTENING "):
            return ("listening", int(line.split()[1]), "")
    running.kill()
    return ("ran", None, f"no LISTENING line within {LISTEN_SECONDS:.0f} s: {_tail(''.join(said))}")


if __name__ == "__channelexec__":
    build_and_run(channel)  # type: ignore[name-defined]  # noqa: F821  # execnet's global in a remote_exec'd module
