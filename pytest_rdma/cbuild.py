"""How a deviation's C reproducer is built: one command, wherever it runs.

Shared by report/confirm.py (in the process that found the deviation) and lab/builds.py (the
lab's host, building for the VM). Kept apart from both packages: the lab's in-VM runner imports
the lab package at its start, and must not pay pytest's import there (report/ imports pytest).
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

BUILD_SECONDS = 120
# Set by the lab: a directory of the results share where the host builds programs for the VM
# (pytest_rdma/lab/builds.py). Unset, or without the host's `ready` in it: built where confirmed.
BUILDS_ENV = "PYTEST_RDMA_LAB_BUILDS"


def link_flags(c_text: str) -> list[str]:
    return ["-libverbs", "-lrdmacm"] if "<rdma/rdma_cma.h>" in c_text else ["-libverbs"]


def build_argv(compiler: str, c_file: Path, program: Path, c_text: str, shortcut: Sequence[str] = ()) -> list[str]:
    """The one build command of a reproducer, wherever it is built."""
    return [compiler, "-pipe", *shortcut, "-o", str(program), str(c_file), *link_flags(c_text)]


# A program's #include lines -> the same lines as a header, precompiled once per process (None: it
# could not be). Under the lab's emulated CPU the compiler spends about half a second of each
# reproducer's build parsing libibverbs' and libc's headers again; every reproducer starts with
# one of two include blocks (with or without librdmacm).
_PRECOMPILED: dict[str, Path | None] = {}


def include_block(c_text: str) -> str:
    return "".join(line + "\n" for line in c_text.splitlines() if line.startswith("#include "))


def precompiled(compiler: str, includes: str) -> Path | None:
    """A header of `includes` whose precompiled form (header.gch beside it) the compiler uses for
    `-include header`; None when it cannot be built (the program is then built from its own includes)."""
    if includes not in _PRECOMPILED:
        header = Path(tempfile.mkdtemp(prefix="rdma-repro-pch-")) / "includes.h"
        atexit.register(shutil.rmtree, header.parent, True)
        header.write_text(includes, encoding="utf-8")
        try:
            built = (
                subprocess.run(
                    [compiler, "-x", "c-header", "-o", f"{header}.gch", str(header)],
                    capture_output=True,
                    timeout=BUILD_SECONDS,
                    check=False,
                ).returncode
                == 0
            )
        except subprocess.TimeoutExpired:
            built = False
        _PRECOMPILED[includes] = header if built else None
    return _PRECOMPILED[includes]


def build(compiler: str, c_file: Path, program: Path, text: str) -> tuple[int, str]:
    """Build `c_file` (whose text is `text`) into `program`: the compiler's exit status and messages."""
    header = precompiled(compiler, include_block(text))
    # The same program either way: the header holds only its own #include lines, guarded.
    shortcut = ["-include", str(header)] if header else []
    try:
        built = subprocess.run(
            build_argv(compiler, c_file, program, text, shortcut),
            capture_output=True,
            text=True,
            timeout=BUILD_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return -1, f"the compiler took more than {BUILD_SECONDS} s"
    return built.returncode, built.stderr
