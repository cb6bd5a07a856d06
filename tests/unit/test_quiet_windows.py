"""Waiting for what must not come (host only): one window for both CQs, and a poll every 10 ms in it.

The call layer and the traffic are replaced by recorders: these tests are about how long our code waits and
what it looks at, not about any provider.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_rdma.kinds import wr
from pytest_rdma.kinds.traffic import Traffic


class Raised(Exception):
    pass


def _scenario(found: dict[str, list[dict[str, Any]]], waits: list[tuple[str, float]]) -> Any:
    def poll(cq: str, count: int, timeout: float, *, expect_none: bool = False) -> list[dict[str, Any]]:
        waits.append((cq, timeout))
        time.sleep(timeout)
        return found.get(cq, [])

    def deviation(expected: str, observed: str, *_: Any, **__: Any) -> Exception:
        return Raised(f"{expected}: {observed}")

    log = [SimpleNamespace(index=7)]
    check = SimpleNamespace(calls=SimpleNamespace(log=log), deviation=deviation)
    pair = SimpleNamespace(send_cq="send_cq", recv_cq="recv_cq")
    return SimpleNamespace(check=check, traffic=SimpleNamespace(poll=poll), pair=pair)


def test_both_cqs_share_one_window() -> None:
    waits: list[tuple[str, float]] = []
    began = time.monotonic()
    wr._nothing_completes(_scenario({}, waits), "nothing completes", wait=0.3)
    assert time.monotonic() - began < 0.5  # one window, not one per CQ
    assert [cq for cq, _ in waits] == ["send_cq", "recv_cq"] and waits[1][1] < 0.05


def test_a_completion_on_the_second_cq_in_the_window_is_the_deviation() -> None:
    wc = {"wr_id": 0x5E7D, "status": 0, "poll_call": 7}
    with pytest.raises(Raised, match="the responder's CQ gave a completion"):
        wr._nothing_completes(_scenario({"recv_cq": [wc]}, []), "nothing completes", wait=0.1)


class EmptyPolls:
    """Stands in for Calls: every ibv_poll_cq finds nothing; counts them."""

    def __init__(self) -> None:
        self.polls = 0
        self.log: list[Any] = []

    def invoke(self, verb: str, args: dict[str, Any] | None = None, **_: Any) -> Any:
        self.polls += 1
        return SimpleNamespace(value=0, outs={"wc": []}, index=self.polls, ok=True)


def test_a_quiet_window_polls_every_10_ms_until_it_has_passed() -> None:
    calls = EmptyPolls()
    traffic = Traffic(SimpleNamespace(calls=calls))
    traffic._collapse = lambda call: None  # type: ignore[method-assign]
    began = time.monotonic()
    assert traffic.poll("cq", 1, 0.2, expect_none=True) == []  # type: ignore[arg-type]
    assert 0.2 <= time.monotonic() - began < 0.4
    assert 5 <= calls.polls <= 25  # about 20, not the hundreds of a tight loop
