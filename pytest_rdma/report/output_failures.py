"""An output that fails mid-run (a full disk, a removed directory, a permission change).

Its writer stops writing it and says so in one line naming the path and the system's error, never a
traceback; what it wrote before stays as it was and readable (a JSON lines file may end in a cut-short
line, which every reader skips, and `pytest-rdma finish` makes the document from it). The checks go
on: their verdicts still reach the terminal and the outputs that work. The run then exits 3 (pytest's
"internal error"): its results are incomplete, so neither a pass (0) nor a verdict on the driver (1).
An interrupted run (2) keeps its status.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from pathlib import Path

import pytest

EXIT_OUTPUT_FAILED = pytest.ExitCode.INTERNAL_ERROR
# The statuses an output failure replaces: a result that would otherwise read as a complete run's.
REPLACED = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


class OutputFailures:
    """The outputs that failed in this run, one line each; registered where results are written."""

    def __init__(self) -> None:
        self.lines: dict[str, str] = {}  # output (its option) -> the line said
        # Where reproducers go: a check's record names its failed file relative to it (workers write them).
        self.reproducers: Path | str = "--rdma-reproducers"
        self._terminal: pytest.TerminalReporter | None = None

    def failed(self, output: str, path: Path | str, error: OSError, kept: str, at_end: bool = False) -> None:
        """Say once that `output` (its option, e.g. --rdma-json) failed at `path`; `kept` says what remains;
        `at_end`: it failed at the session's end, when no check is left to go on."""
        target = error.filename or path
        self.say(output, f"{path}: cannot write {target} ({error.strerror or error}); {kept}", at_end)

    def say(self, output: str, what: str, at_end: bool = False) -> None:
        """Say once, in one line, that `output` failed: `what` names the path, the error and what is kept."""
        if output in self.lines:
            return
        line = f"{output} {what}" + ("" if at_end else "; the checks go on")
        self.lines[output] = line
        if self._terminal is not None:
            self._terminal.ensure_newline()
            self._terminal.write_line(f"ERROR: {line}", red=True, bold=True)
        else:
            print(f"ERROR: {line}", file=sys.stderr)

    def has_failed(self, output: str) -> bool:
        return output in self.lines

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._terminal = session.config.pluginmanager.get_plugin("terminalreporter")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, None, None]:
        self._exit_status(session)  # before the writers: the JSON document gives the run's status
        yield
        self._exit_status(session)  # an output that failed at the end (the final document, the JUnit file)

    def _exit_status(self, session: pytest.Session) -> None:
        if self.lines and session.exitstatus in REPLACED:
            session.exitstatus = EXIT_OUTPUT_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.lines:
            terminalreporter.write_line(
                f"rdma: {len(self.lines)} output(s) failed during the run ({', '.join(self.lines)}): the results "
                f"there are incomplete; exit status {int(EXIT_OUTPUT_FAILED)}",
                red=True,
            )
