"""Asynchronous events of a device context, and the claim kind that a CQ overrun raises one.

- take_async_event: waits (bounded) on the context's async fd for an event of one type naming one
  object, acknowledging every event it takes at once (an unacknowledged event makes its object's
  destroy wait forever). The SRQ limit kind (srq.py) reads its event with it too.
- cq-overrun: a CQ that more completions reach than it holds, none polled, is reported with
  IBV_EVENT_CQ_ERR naming that CQ (ibv_get_async_event(3)). Signalled RDMA WRITEs of a connected
  pair fill the sender's small CQ; the event must come within TIMEOUT.
"""

from __future__ import annotations

import select
import time
from collections.abc import Mapping
from typing import TypedDict, cast

from pytest_rdma.calls.marshal import read_object
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.catalogue.derived import reported_outside
from pytest_rdma.catalogue.model import Need
from pytest_rdma.ibv.enums import ENUMS
from pytest_rdma.kinds.calls import prepare
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.datapath import PairParams, Scenario
from pytest_rdma.kinds.registry import kind
from pytest_rdma.kinds.traffic import TIMEOUT
from pytest_rdma.observations import FieldValue, MissingAsyncEvent
from pytest_rdma.outcomes import NotExercised

CQ_ERR = "IBV_EVENT_CQ_ERR"
OVERRUN_CQE = 2  # the CQ asked for: as small as a provider makes one
MAX_POSTED = 8  # the pair's send queue: a CQ that holds more than this minus one is not overrun here
# The member of ibv_async_event.element an event's type selects (ibv_get_async_event(3)); the
# acknowledgement hands the same member back.
_ELEMENT = {"CQ": "cq", "SRQ": "srq", "WQ": "wq", "QP": "qp", "PATH": "qp", "COMM": "qp", "SQ": "qp"}


class AsyncEvent(TypedDict):
    """struct ibv_async_event as ibv_get_async_event wrote it (read back)."""

    event_type: int
    element: Mapping[str, int]  # the member its type selects: an object's address, or port_num


def event_name(value: int) -> str:
    return {v: k for k, v in ENUMS["ibv_event_type"].items()}.get(value, str(value))


def element_member(name: str) -> str:
    """The member of ibv_async_event.element that an event of this type fills (port_num for port events)."""
    return next((m for prefix, m in _ELEMENT.items() if name.startswith(f"IBV_EVENT_{prefix}")), "port_num")


def take_async_event(
    check: Check, context: Handle, wanted: str, subject: Handle, wait: float, seen: list[str] | None = None
) -> Call | None:
    """The ibv_get_async_event call that took an event `wanted` naming `subject`, if one comes within `wait` s.

    Every other event taken meanwhile is named in `seen`: "no event at all" and "other events" are
    different observations (a C reproducer can judge only the first by the async fd alone).
    """
    fd = int(read_object(context)["async_fd"])
    deadline = time.monotonic() + wait
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        got = check.calls.invoke("ibv_get_async_event", {"context": context})
        if not got.ok:
            raise check.failure(
                got, "ibv_get_async_event returns the pending event", ref="ibv_get_async_event(3) RETURN VALUE"
            )
        event = cast(AsyncEvent, got.outs["event"])
        outside = reported_outside("ibv_async_event", event)
        if outside:
            raise check.deviation(
                "an async event's type is one of enum ibv_event_type",
                f"event_type {outside[1]:#x}",
                FieldValue("event.event_type", outside[1]),
                got,
                ref="ibv_get_async_event(3) DESCRIPTION",
            )
        name = event_name(int(event["event_type"]))
        member = element_member(name)
        element = event["element"][member]
        check.calls.invoke(
            "ibv_ack_async_event",
            {"event": {"event_type": name, f"element.{member}": subject if element == subject.address else element}},
        )
        if name == wanted and element == subject.address:
            return got
        if seen is not None:
            seen.append(name if element == subject.address else f"{name} (another object)")


@kind("cq-overrun", params=PairParams)
def cq_overrun(check: Check) -> None:
    """More completions than the sender's CQ holds, none polled: IBV_EVENT_CQ_ERR naming that CQ."""
    p = check.params(PairParams)
    prepare(check)
    scenario = Scenario(check, p)  # params opcode: IBV_WR_RDMA_WRITE, which needs no receive
    scenario.build(size=16, pair_options={"send_cqe": OVERRUN_CQE})
    cq = scenario.pair.send_cq
    holds = int(read_object(cq)["cqe"])
    count = holds + 1
    if count > MAX_POSTED:
        raise NotExercised(f"the smallest CQ this provider made holds {holds} completions: more than the pair posts")
    wrs = [{**scenario.send_wr(), "wr_id": 0x100 + index} for index in range(count)]
    posted = scenario.traffic.post_send(scenario.pair.sender, wrs)
    if not posted.ok:
        raise check.failure(posted, f"{count} signalled RDMA WRITEs are posted", ref="ibv_post_send(3) RETURN VALUE")
    context = check.resource(Need("context"))
    seen: list[str] = []
    if take_async_event(check, context, CQ_ERR, cq, TIMEOUT, seen) is None:
        raise check.deviation(
            f"{CQ_ERR} naming the CQ once {count} completions reach a CQ that holds {holds}",
            f"no such event within {TIMEOUT:.0f} s" + (f"; events that came: {', '.join(seen)}" if seen else ""),
            MissingAsyncEvent(tuple(seen)),
            posted,
            ref="ibv_get_async_event(3) DESCRIPTION",
        )
