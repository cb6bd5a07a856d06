"""What every `pytest-rdma` command does with bad input: one line on stderr, exit status 2.

A traceback or a usage screen buries the one thing the user needs: what is wrong with what they
gave, and what to give instead. Commands parse with `Parser` and raise `InputError` for input
they cannot use; `fail()` prints it. This module imports nothing of the package, so any command
module can use it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

EXIT_BAD_INPUT = 2  # argparse's own status for a usage error


class InputError(Exception):
    """Input a command cannot use; the message says what is wrong and what to do, in one line."""


def one_line(text: str) -> str:
    return " ".join(text.split())


def fail(prog: str, error: Exception | str) -> int:
    """Print `prog: error` as one line on stderr; the status to exit with."""
    print(f"{prog}: {one_line(str(error))}", file=sys.stderr)
    return EXIT_BAD_INPUT


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming --help, not the usage screen."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {one_line(message)}; see '{self.prog} --help'\n")


def version() -> str:
    """pytest-rdma's version, as installed (importlib.metadata)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("pytest-rdma")
    except PackageNotFoundError:
        return "unknown (not installed: run from a source tree)"


def lab_command() -> str:
    """How this user starts the lab: `./pytest-rdma lab` in a checkout (the package runs from a source tree
    with the bootstrap script beside it), else the installed `pytest-rdma lab`."""
    tree = Path(__file__).resolve().parent.parent
    return (
        "./pytest-rdma lab"
        if (tree / "pytest-rdma").is_file() and (tree / "pyproject.toml").is_file()
        else "pytest-rdma lab"
    )
