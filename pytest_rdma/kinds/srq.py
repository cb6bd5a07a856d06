"""The SRQ's low watermark: an armed limit raises one asynchronous event, and only once it is crossed.

- srq-limit: receives are posted on an SRQ that a connected QP takes its receives from, the
  SRQ's limit is armed with ibv_modify_srq, and the peer's SENDs consume receives one at a time.
  While the SRQ still holds at least `limit` receives no IBV_EVENT_SRQ_LIMIT_REACHED may come
  (`until: "at"`); once it holds fewer, the event comes on the context's async fd, naming the
  SRQ (`until: "below"`). Every wait is bounded: QUIET for an event that must not come, TIMEOUT
  for one that must.

Why a kind of its own: the verdict is an asynchronous event of the device context, not a
completion of a CQ (notify) nor the result of the call (the calls kinds), and it depends on how
many receives the data path consumed after the arming.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.calls.values import flag_value
from pytest_rdma.catalogue.model import Need
from pytest_rdma.kinds.calls import prepare
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.datapath import QUIET, RECV_ID, SEND_ID, PairParams, Scenario
from pytest_rdma.kinds.events import take_async_event
from pytest_rdma.kinds.registry import kind
from pytest_rdma.kinds.traffic import TIMEOUT
from pytest_rdma.observations import FieldValue, MissingAsyncEvent

LIMIT_REACHED = "IBV_EVENT_SRQ_LIMIT_REACHED"
MESSAGE = 16


@dataclass(frozen=True, kw_only=True)
class SrqLimitParams(PairParams):
    limit: int  # the SRQ's limit, armed with ibv_modify_srq
    until: Literal["at", "below"]  # the SRQ consumed down to its limit (no event yet), or below it (the event)
    posted: int = 4  # receives posted on the SRQ before it is armed


class Watermark:
    """One case's SRQ, its pair, and the receives the peer has consumed."""

    def __init__(self, check: Check, params: SrqLimitParams) -> None:
        self.check = check
        self.scenario = Scenario(check, params)  # params srq: the receiver takes its receives from the SRQ
        self.scenario.build(size=MESSAGE)
        self.srq: Handle = self.scenario.srq  # type: ignore[assignment]
        self.context = check.resource(Need("context"))
        self.sent = 0
        self.last: Call | None = None

    def post(self, count: int) -> None:
        t, s = self.scenario.traffic, self.scenario
        wrs = [{"wr_id": RECV_ID + i, "sg_list": (t.sge(s.remote, MESSAGE),), "num_sge": 1} for i in range(count)]
        call = t.post_srq_recv(self.srq, wrs)
        if not call.ok:
            raise self.check.failure(call, f"{count} receives are posted on the SRQ", ref="ibv_post_srq_recv(3)")

    def arm(self, limit: int) -> None:
        call = self.check.calls.invoke(
            "ibv_modify_srq", {"srq": self.srq, "srq_attr": {"srq_limit": limit}, "srq_attr_mask": "IBV_SRQ_LIMIT"}
        )
        if not call.ok:
            raise self.check.failure(call, f"the SRQ's limit is armed at {limit}", ref="ibv_modify_srq(3) RETURN VALUE")

    def consume(self, count: int) -> None:
        """The peer's SENDs take `count` receives from the SRQ, each completing on both sides."""
        s, t = self.scenario, self.scenario.traffic
        for _ in range(count):
            s.post_send({**s.send_wr(), "wr_id": SEND_ID + self.sent})
            (sent,) = t.poll(s.pair.send_cq, 1)
            s.expect_wc(sent, {"status": "IBV_WC_SUCCESS", "wr_id": SEND_ID + self.sent}, "send")
            # Which of the SRQ's receives it took is not this claim's business: only that it took one.
            (got,) = t.poll(s.pair.recv_cq, 1)
            s.expect_wc(got, {"status": "IBV_WC_SUCCESS"}, "receive")
            self.sent += 1
        self.last = self.check.calls.log[-1]

    def limit_event(self, wait: float, seen: list[str] | None = None) -> Call | None:
        """The SRQ's limit event if it comes within `wait` seconds (every event taken is acknowledged)."""
        return take_async_event(self.check, self.context, LIMIT_REACHED, self.srq, wait, seen)


@kind("srq-limit", params=SrqLimitParams)
def srq_limit(check: Check) -> None:
    """An SRQ armed at a limit raises IBV_EVENT_SRQ_LIMIT_REACHED once it holds fewer receives, not before."""
    p = check.params(SrqLimitParams)
    prepare(check)
    posted, limit, until = p.posted, p.limit, p.until
    w = Watermark(check, p)
    w.post(posted)
    w.arm(limit)
    if until == "at":
        w.consume(posted - limit)
        early = w.limit_event(QUIET)
        if early is not None:
            raise check.deviation(
                f"no {LIMIT_REACHED} while the SRQ still holds {limit} receives (its limit)",
                f"the event came with {posted - w.sent} receives outstanding",
                FieldValue("event.event_type", flag_value(LIMIT_REACHED)),
                early,
                ref="ibv_modify_srq(3) NOTES",
            )
        return
    w.consume(posted - limit + 1)
    seen: list[str] = []
    if w.limit_event(TIMEOUT, seen) is None:
        assert w.last is not None
        raise check.deviation(
            f"{LIMIT_REACHED} on the context's async fd once fewer than {limit} receives are outstanding",
            f"no such event within {TIMEOUT:.0f} s of the SRQ dropping to {posted - w.sent} receives",
            MissingAsyncEvent(tuple(seen)) if seen else MissingAsyncEvent(outstanding=posted - w.sent),
            w.last,
            ref="ibv_modify_srq(3) NOTES",
        )
