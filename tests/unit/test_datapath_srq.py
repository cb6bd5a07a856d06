"""Data path with a shared receive queue: where receives go and how the SRQ's size is read (host only).

The call layer is replaced by a recorder of the invocations the kinds make: these tests are about
which verb our code calls with what, not about any provider.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pytest_rdma.calls.record import Handle
from pytest_rdma.kinds import datapath
from pytest_rdma.kinds.traffic import Traffic

SRQ = Handle("srq0", "srq", "struct ibv_srq *", 0x1000)


class Recorder:
    """Stands in for Calls: records each invocation and answers with the next prepared result."""

    def __init__(self, answers: list[Any] | None = None, log: list[Any] | None = None) -> None:
        self.invoked: list[tuple[str, dict[str, Any]]] = []
        self.answers = answers or []
        self.log = log or []

    def invoke(self, verb: str, args: dict[str, Any] | None = None, **_: Any) -> Any:
        self.invoked.append((verb, dict(args or {})))
        return self.answers.pop(0) if self.answers else SimpleNamespace(ok=True)


def _check(calls: Recorder) -> Any:
    return SimpleNamespace(calls=calls)


def test_srq_receives_are_posted_with_ibv_post_srq_recv() -> None:
    calls = Recorder()
    wr = {"wr_id": 1, "sg_list": (), "num_sge": 0}
    Traffic(_check(calls)).post_srq_recv(SRQ, [wr])
    assert calls.invoked == [("ibv_post_srq_recv", {"srq": SRQ, "wr": (wr,)})]


def test_srq_size_is_what_the_query_reports() -> None:
    # rxe rounds a requested 16 up to 31 and reports it only through ibv_query_srq.
    created = SimpleNamespace(result=SRQ, outs={"srq_init_attr": {"attr": {"max_wr": 16}}})
    calls = Recorder([SimpleNamespace(ok=True, outs={"srq_attr": {"max_wr": 31}})], [created])
    assert datapath._srq_max_wr(_check(calls), SRQ) == 31
    assert calls.invoked == [("ibv_query_srq", {"srq": SRQ})]


def test_srq_size_falls_back_to_what_create_wrote_back() -> None:
    # siw does not implement ibv_query_srq.
    created = SimpleNamespace(result=SRQ, outs={"srq_init_attr": {"attr": {"max_wr": 16}}})
    calls = Recorder([SimpleNamespace(ok=False, outs={})], [created])
    assert datapath._srq_max_wr(_check(calls), SRQ) == 16
