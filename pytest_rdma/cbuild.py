"""How a deviation's C reproducer is built: one command, wherever it runs.

Shared by report/confirm.py (in the process that found the deviation) and lab/builds.py (the
lab's host, building for the VM). Kept apart from both packages: the lab's in-VM runner imports
the lab package at its start, and must not pay pytest's import there (report/ imports pytest).
"""

from __future__ import annotations

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
