"""A deviation is reported as what it is, not as a Python traceback.

A `Deviation` already carries everything a reader needs: the page and section, what was
expected, what the device did and a reproducer. pytest would also render the traceback of
every frame from the test function down to the `raise`, reading and parsing each frame's
source file: in the lab, where those files sit on a 9p share under an emulated CPU, that
cost about 0.8 s per deviation, more than the check itself (benchmarks/, issue 6). So the
failure's representation is the deviation's own text and the place it was raised.

`--tb=long` or `--full-trace` bring pytest's traceback back, for debugging a check.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _pytest._code.code import ReprFileLocation, TerminalRepr
from _pytest._io import TerminalWriter

from pytest_rdma.outcomes import Deviation


class DeviationRepr(TerminalRepr):
    """The failure text of a deviation: its message, where it was raised, and added sections."""

    def __init__(self, deviation: Deviation, path: str, lineno: int) -> None:
        self.text = str(deviation)
        # The one line JUnit's message and pytest's short summary show.
        self.reprcrash = ReprFileLocation(path, lineno, f"Deviation: {deviation.expected} | "
                                                        f"observed: {deviation.observed}")
        self.sections: list[tuple[str, str, str]] = []

    def addsection(self, name: str, content: str, sep: str = "-") -> None:
        self.sections.append((name, content, sep))

    def toterminal(self, tw: TerminalWriter) -> None:
        for line in self.text.splitlines():
            tw.line(line, red=True, bold=True)
        tw.line(f"{self.reprcrash.path}:{self.reprcrash.lineno}: raised here")
        for name, content, sep in self.sections:
            tw.sep(sep, name)
            tw.line(content)


def raised_at(excinfo: pytest.ExceptionInfo[BaseException]) -> tuple[str, int]:
    """The innermost frame's file and line, read from the traceback object (no file access)."""
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename, tb.tb_lineno


def wants_traceback(config: pytest.Config) -> bool:
    return config.getoption("tbstyle", "auto") == "long" or bool(config.getoption("fulltrace", False))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport | None:
    excinfo = call.excinfo
    if excinfo is None or not isinstance(excinfo.value, Deviation) or wants_traceback(item.config):
        return None
    # pytest takes a call whose excinfo is not an ExceptionInfo as the representation itself.
    # The hook's own `call` keeps the exception, which xfail handling (waivers) and the
    # recorder read.
    plain: Any = copy.copy(call)
    plain.excinfo = DeviationRepr(excinfo.value, *raised_at(excinfo))
    return pytest.TestReport.from_item_and_call(item, plain)
