"""Deviations' C reproducers built on the host for the VM: the compiler at native speed.

Under the lab's emulated CPU (TCG) building one reproducer takes most of a second, about two
thirds of confirming a deviation (report/confirm.py); rxe has some sixty. The VM shares the
host's root, so the host's compiler, headers and libibverbs are the very files the VM would
use: a program built here is the program the VM would have built. The VM still runs it, on
its device, as the check that found the deviation.

The exchange is files in a directory of the results share (9p, which the VM sees without
caching): the VM writes NAME.c; the host answers with NAME.bin (when it built) and then NAME.out,
the compiler's exit status and messages as JSON, renamed into place so that it appears whole.
`ready` says the host is serving. A VM that finds no `ready` builds its programs itself.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

from pytest_rdma.cbuild import BUILD_SECONDS
from pytest_rdma.cbuild import build as build_c

DIRECTORY = ".builds"  # under the results directory
POLL_S = 0.02


class BuildService:
    """A host thread that builds every NAME.c that appears in `directory`, until stopped."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.built = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="rdma-builds", daemon=True)

    def start(self) -> None:
        compiler = shutil.which("cc") or shutil.which("gcc")
        if compiler is None:
            return  # no `ready`: the VM builds (and says there is no compiler) itself
        self.compiler = compiler
        self.directory.mkdir(parents=True, exist_ok=True)
        for stale in self.directory.iterdir():
            stale.unlink()
        (self.directory / "ready").write_text(compiler + "\n")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=BUILD_SECONDS)
        shutil.rmtree(self.directory, ignore_errors=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            for source in sorted(self.directory.glob("*.c")):
                if not source.with_suffix(".out").exists():
                    build(self.compiler, source)
                    self.built += 1
            self._stop.wait(POLL_S)


def build(compiler: str, source: Path) -> None:
    """Build `source` into NAME.bin; write NAME.out (JSON: returncode, stderr) last, whole."""
    program, answer = source.with_suffix(".bin"), source.with_suffix(".out")
    try:
        code, messages = build_c(compiler, source, program, source.read_text(encoding="utf-8"))
        result = {"returncode": code, "stderr": messages[-4000:]}
    except (OSError, UnicodeDecodeError) as exc:
        result = {"returncode": -1, "stderr": f"could not build {source.name}: {exc}"}
    partial = answer.with_suffix(".out.part")
    partial.write_text(json.dumps(result), encoding="utf-8")
    partial.rename(answer)
