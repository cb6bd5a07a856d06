"""Confirming a two-host deviation outside Python: its pair of C programs, built and run on both hosts.

The receiving side goes to the peer's host through the session's execnet gateway (peer/builder.py
builds it there with that host's compiler and runs it on a free port), the sending side is built and
run here and connects to it; the sending side's exit status is the verdict, as a single-host
reproducer's is (report/confirm.py). Every wait has a limit: the peer host's build, its program's
start, the sending side's run, and the receiving side's end.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_rdma.cbuild import BUILD_SECONDS, link_flags
from pytest_rdma.peer import builder
from pytest_rdma.peer.remote import RemoteEnd
from pytest_rdma.report.confirm import RUN_SECONDS, VERDICTS, Confirmation, build_program, confirm
from pytest_rdma.report.record import Reproducer
from pytest_rdma.running import Run

if TYPE_CHECKING:
    import execnet  # imported where a pair is confirmed across two hosts: most runs have no peer host

# The peer host's build and its program's start, beyond which the pair is "not built".
START_SECONDS = BUILD_SECONDS + builder.LISTEN_SECONDS + 30
# The verdict when the receiving side never listened: the peer host's word ("ran": it ended first).
STARTED = {"not built": "not built", "timed out": "timed out", "ran": "setup failed", "gone": "setup failed"}


def address_of(spec: str) -> str:
    """The address the sending side connects to: the host of the gateway spec (this host's for popen)."""
    import execnet

    found = execnet.XSpec(spec)
    if found.ssh:
        return str(found.ssh).split()[-1].rpartition("@")[2]
    if found.socket:
        return str(found.socket).rpartition(":")[0] or "127.0.0.1"
    return "127.0.0.1"


def confirm_run(run: Run, folder: Path, reproducer: Reproducer) -> Confirmation:
    """A reproducer's verdict: its pair across the two hosts when its peer was on another, else its one program."""
    peer_end = run.peer_device.end if run.peer_device is not None else None
    if "pair" in reproducer and isinstance(peer_end, RemoteEnd):
        pair = reproducer["pair"]
        return confirm_pair(peer_end, folder / pair["receiver"], folder / pair["sender"])
    return confirm(folder / reproducer["c"])


def confirm_pair(end: RemoteEnd, receiver: Path, sender: Path) -> Confirmation:
    """Build and run both sides; the sending side's verdict, and what backs it from both hosts."""
    if end.lost:
        return {"verdict": "not built", "detail": end.lost}
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return {"verdict": "not built", "detail": "no C compiler: install gcc and libibverbs-dev"}
    text = receiver.read_text(encoding="utf-8")
    import execnet

    try:
        channel = end.gateway.remote_exec(builder)
        channel.send(
            {"text": text, "link": link_flags(text), "build_seconds": BUILD_SECONDS, "run_seconds": RUN_SECONDS}
        )
    except (OSError, EOFError, execnet.HostNotFound, execnet.RemoteError) as exc:
        return {"verdict": "not built", "detail": f"the peer host ({end.spec}) is out of reach: {exc}"}
    try:
        return _run_both(channel, compiler, sender, address_of(end.spec))
    finally:
        channel.close()


def _run_both(channel: execnet.Channel, compiler: str, sender: Path, address: str) -> Confirmation:
    with tempfile.TemporaryDirectory(prefix="rdma-repro-pair-") as scratch:
        program = Path(scratch) / "sender"
        not_built = build_program(compiler, sender, program)
        if not_built is not None:
            return not_built
        said, port, output = _receive(channel, START_SECONDS, "build and start the receiving side")
        if said != "listening":
            return {"verdict": STARTED.get(said, "setup failed"), "detail": output[:300]}
        started = time.monotonic()
        try:
            ran = subprocess.run(
                [str(program), address, str(port)], capture_output=True, text=True, timeout=RUN_SECONDS, check=False
            )
        except subprocess.TimeoutExpired:
            return {"verdict": "timed out", "detail": f"the sending side still ran after {RUN_SECONDS} s"}
        seconds = round(time.monotonic() - started, 2)
    _, status, there = _receive(channel, RUN_SECONDS, "end the receiving side")
    last = ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else ""
    receiving = there.strip().splitlines()[-1] if there.strip() else ""
    verdict = VERDICTS.get(ran.returncode, f"exit {ran.returncode}") if ran.returncode >= 0 else "crashed"
    return {
        "verdict": verdict,
        "exit": ran.returncode,
        "seconds": seconds,
        "detail": f"{last} (the receiving side on {address}: exit {status}, {receiving})"[:300],
    }


def _receive(channel: execnet.Channel, seconds: float, what: str) -> tuple[str, object, str]:
    """The peer host's next word, or ("lost", None, why) when it does not come in time or cannot."""
    try:
        said, value, output = channel.receive(seconds)
    except channel.TimeoutError:
        return "timed out", None, f"the peer host did not {what} within {seconds:.0f} s"
    except channel.RemoteError as exc:  # the builder itself failed there: its last line says why
        said = str(exc).strip().splitlines()
        return "gone", None, f"on the peer host: {said[-1] if said else 'the build failed'}"
    except (EOFError, OSError) as exc:
        return "gone", None, f"the peer host is gone: {exc or type(exc).__name__}"
    return str(said), value, str(output)
