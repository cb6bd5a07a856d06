"""A Ctrl-C never cuts a check in half once its call has ended: it waits for the check's teardown.

pytest prints a check's outcome when its call ends, but the check's JUnit properties, its record and
its Allure result are written when its teardown has been reported, by one plugin after another.
A Ctrl-C in that stretch left a check the terminal called finished without its driver in pytest's
JUnit file, or in the JSON lines but not in the Allure results. So from the start of a check's
teardown until every plugin has had its teardown report (and while any report is being handed
round), a first Ctrl-C is held and acted on right after; a second one interrupts at once, for a
teardown that hangs.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Generator
from types import FrameType
from typing import Optional, Union

import pytest

# What signal.signal takes and gives back: a function, SIG_DFL / SIG_IGN, or None (not set from Python).
Handler = Union[Callable[[int, Optional[FrameType]], object], int, None]


class WholeChecks:
    def __init__(self) -> None:
        self._previous: Handler = None  # the handler we replaced while holding; None when not holding
        self._held = False

    def _hold(self) -> None:
        if self._previous is not None or threading.current_thread() is not threading.main_thread():
            return  # already holding; or not the main thread, which alone gets signals
        self._held = False
        self._previous = signal.signal(signal.SIGINT, self._on_ctrl_c)

    def _on_ctrl_c(self, signum: int, frame: FrameType | None) -> None:
        if not self._held:
            self._held = True
            return
        self._release()  # the second Ctrl-C: now
        raise KeyboardInterrupt

    def _release(self, act: bool = True) -> None:
        previous, self._previous = self._previous, None
        if previous is None:
            return
        signal.signal(signal.SIGINT, previous)
        held, self._held = self._held, False
        if held and act:
            if callable(previous):
                previous(signal.SIGINT, None)
            else:
                raise KeyboardInterrupt

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
        self._hold()  # released once the teardown report has gone round (below)
        return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        holding = self._previous is not None
        self._hold()
        try:
            return (yield)
        finally:
            if report.when == "teardown" or not holding:
                self._release()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self._release(act=False)  # a check that never reported its teardown: stop holding, quietly
