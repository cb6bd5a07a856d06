"""A Ctrl-C while a finished check goes to the reporters: every reporter gets it, then the run stops."""

from __future__ import annotations

import os
import signal

import pytest

from pytest_rdma.report.results import Results, ctrl_c_after


def test_ctrl_c_between_two_reporters_waits_until_both_have_the_check() -> None:
    results = Results(("rxe0",))
    got: list[str] = []

    def json_lines(record: dict) -> None:
        got.append("json")
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C lands here, before the next reporter

    results.sinks += [json_lines, lambda record: got.append("allure")]
    phase = {"when": "call", "outcome": "conforms", "pytest_outcome": "passed"}
    results._pending["t::c"] = ({"nodeid": "t::c", "device": "rxe0"}, [phase], "main")
    with pytest.raises(KeyboardInterrupt):
        results._finish("t::c")
    assert got == ["json", "allure"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # pytest's own handling is back


def test_without_ctrl_c_nothing_is_raised_and_the_handler_is_restored() -> None:
    before = signal.getsignal(signal.SIGINT)
    with ctrl_c_after():
        pass
    assert signal.getsignal(signal.SIGINT) is before
