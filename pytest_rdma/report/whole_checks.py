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

try:
    # The handler as set, for the test of whether ours still is (four times per check): signal.getsignal is this
    # plus a conversion to the Handlers enum, which for a function (ours) raises and catches a ValueError (Python
    # 3.11: 1.4 us against 0.01). No int is ever ours, so the test's answer is the same either way.
    from _signal import getsignal as _current_handler  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # not CPython
    _current_handler = signal.getsignal


class WholeChecks:
    """Holds a Ctrl-C while a flag says so. The handler stays installed from the first hold to the end
    of the session: swapping it in and out twice per check cost two sigaction calls and their enum
    conversions per hold, a millisecond per check under TCG. Outside a hold it hands the signal on at
    once to the handler it replaced, so Ctrl-C acts there as before."""

    def __init__(self) -> None:
        self._previous: Handler = None  # the handler ours replaced; None while ours is not installed
        self._holding = False
        self._held = False

    def _hold(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # only the main thread gets signals (and may install a handler)
        if _current_handler(signal.SIGINT) != self._on_ctrl_c:
            # First hold, or something replaced ours since (a check may set its own): take it over again.
            self._previous = signal.signal(signal.SIGINT, self._on_ctrl_c)
        if not self._holding:
            self._holding, self._held = True, False

    def _on_ctrl_c(self, signum: int, frame: FrameType | None) -> None:
        if not self._holding:
            self._pass_on(signum, frame)  # not inside a check's end: as if ours were not there
        elif not self._held:
            self._held = True
        else:
            self._release()  # the second Ctrl-C: now
            raise KeyboardInterrupt

    def _pass_on(self, signum: int, frame: FrameType | None) -> None:
        if callable(self._previous):
            self._previous(signum, frame)
        elif self._previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    def _release(self, act: bool = True) -> None:
        holding, held = self._holding, self._held
        self._holding = self._held = False
        if holding and held and act:
            self._pass_on(signal.SIGINT, None)

    def _uninstall(self) -> None:
        if self._previous is not None and threading.current_thread() is threading.main_thread():
            if signal.getsignal(signal.SIGINT) == self._on_ctrl_c:
                signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
        self._hold()  # released once the teardown report has gone round (below)
        return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        holding = self._holding
        self._hold()
        try:
            return (yield)
        finally:
            if report.when == "teardown" or not holding:
                self._release()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self._release(act=False)  # a check that never reported its teardown: stop holding, quietly
        self._uninstall()
