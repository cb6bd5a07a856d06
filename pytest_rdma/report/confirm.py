"""Confirming a deviation outside Python: build its C reproducer and run it.

The program judges itself (calls/render.py): it exits 0 when the decisive call shows the
observation again, 1 when it does not, 2 when its setup failed, 3 when no automatic verdict
could be written for the observation. A deviation seen by the suite and again by a plain C
program against the installed libibverbs is not an artefact of the suite's own call layer.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import TypedDict

from pytest_rdma.cbuild import BUILD_SECONDS, BUILDS_ENV, build

VERDICTS = {0: "reproduced", 1: "not reproduced", 2: "setup failed", 3: "no automatic verdict"}
# Longer than the program's own alarm(120): a program that hangs ends by its alarm, which says so.
RUN_SECONDS = 150


class Confirmation(TypedDict, total=False):
    """A reproducer's verdict when built and run (`confirmed` in a record's reproducer)."""

    verdict: str
    detail: str
    seconds: float
    exit: int


BUILD_POLL_S = 0.01


def build_by_host(builds: Path, text: str, program: Path) -> tuple[int, str] | None:
    """Have the lab's host build `text` (pytest_rdma/lab/builds.py); None when it does not serve here."""
    if not (builds / "ready").exists():
        return None
    name = builds / uuid.uuid4().hex
    try:
        # Written aside and renamed: the host takes NAME.c as soon as it appears, which must be whole
        # (a half-written program compiles to nothing, and the link fails for want of main).
        partial = name.with_suffix(".part")
        partial.write_text(text, encoding="utf-8")
        partial.rename(name.with_suffix(".c"))
    except OSError:
        return None  # a run that may not write there (the lab's run as nobody) builds its own
    answer = name.with_suffix(".out")
    deadline = time.monotonic() + BUILD_SECONDS
    while not answer.exists():
        if time.monotonic() > deadline:
            return -1, f"the lab's host did not build it within {BUILD_SECONDS} s"
        time.sleep(BUILD_POLL_S)
    result = json.loads(answer.read_text(encoding="utf-8"))
    if result["returncode"] == 0:
        shutil.copyfile(name.with_suffix(".bin"), program)  # run from the VM's own disk, not the share
        program.chmod(0o755)
    for suffix in (".c", ".bin", ".out"):
        name.with_suffix(suffix).unlink(missing_ok=True)
    return int(result["returncode"]), str(result["stderr"])


def build_program(compiler: str, c_file: Path, program: Path) -> Confirmation | None:
    """Build `c_file` into `program` (by the lab's host-side builds when it has them); the "not built"
    confirmation naming the compiler's first error, or None when it built."""
    text = c_file.read_text(encoding="utf-8")
    builds = os.environ.get(BUILDS_ENV)
    built = build_by_host(Path(builds), text, program) if builds else None
    code, messages = built if built is not None else build(compiler, c_file, program, text)
    if code == 0:
        return None
    first = next((line for line in messages.splitlines() if "error" in line), messages.strip())
    return {"verdict": "not built", "detail": first[:300]}


def confirm(c_file: Path) -> Confirmation:
    """Build and run one C reproducer; its verdict ("reproduced", "not reproduced", ...) and what backs it."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return {"verdict": "not built", "detail": "no C compiler: install gcc and libibverbs-dev"}
    with tempfile.TemporaryDirectory(prefix="rdma-repro-") as scratch:
        program = Path(scratch) / "repro"
        not_built = build_program(compiler, c_file, program)
        if not_built is not None:
            return not_built
        started = time.monotonic()
        try:
            ran = subprocess.run([str(program)], capture_output=True, text=True, timeout=RUN_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            return {"verdict": "timed out", "detail": f"still running after {RUN_SECONDS} s"}
        seconds = round(time.monotonic() - started, 2)
    if ran.returncode < 0:
        name = signal.Signals(-ran.returncode).name
        verdict = "timed out" if name == "SIGALRM" else "crashed"
        return {"verdict": verdict, "detail": f"ended by {name}", "seconds": seconds}
    last = ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else ""
    return {
        "verdict": VERDICTS.get(ran.returncode, f"exit {ran.returncode}"),
        "exit": ran.returncode,
        "seconds": seconds,
        "detail": last[:300],
    }
