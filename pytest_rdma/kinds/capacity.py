"""Queue capacity: a queue filled to exactly the size it reports, then one more.

- capacity: a send queue, receive queue or SRQ asked for `size` entries reports what it holds (the
  provider may round up: ibv_create_qp(3) and ibv_create_srq(3) write the actual size back, and the
  query reports it); a list of that many WRs plus one, posted in one call with nothing polled, is
  refused at the one more (a positive errno, `*bad_wr` at it); every WR before it completes, each
  with its wr_id, and the refused one never does; the queue then takes and completes a WR again.
  With queue "cq", a CQ is filled to exactly its cqe, none polled: no IBV_EVENT_CQ_ERR (the one more
  is the cq-overrun kind's, events.py), every completion is there in order, and the CQ still works.
  With queue "channel", `size` CQs share one completion channel, each armed and each given one
  completion: ibv_get_cq_event returns one event for each, none acknowledged meanwhile, and no more;
  then each is acknowledged and each CQ holds its completion (ibv_get_cq_event(3), ibv_req_notify_cq(3)).

The list is posted in one call because a provider executes what a post hands it at once: WRs posted
one call at a time would drain the send queue while it is being filled (a receive queue or an SRQ
would not drain, but one shape for every queue keeps their verdicts comparable).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from pytest_rdma.calls.invoke import out_address
from pytest_rdma.calls.marshal import read_object
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.catalogue.model import Need, Value
from pytest_rdma.kinds.calls import prepare
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.datapath import QUIET, PairParams, Scenario
from pytest_rdma.kinds.events import CQ_ERR, take_async_event
from pytest_rdma.kinds.registry import kind
from pytest_rdma.kinds.traffic import TIMEOUT, WorkRequest
from pytest_rdma.observations import BadWr, CqEvent, EventCq, FieldValue, Problem, Returned
from pytest_rdma.outcomes import CheckTimeout, NotExercised

FIRST_ID = 0xCA00  # the wr_id of the queue's first WR; the n-th carries FIRST_ID + n
MAX_FILL = 1 << 12  # a queue reporting more entries than this is more than the check posts
DRAIN_ROOM = 64  # the CQs that take a drain's completions: more than a small queue's batch
QUEUES = {
    "send": ("ibv_post_send(3)", "max_send_wr"),
    "recv": ("ibv_post_recv(3)", "max_recv_wr"),
    "srq_recv": ("ibv_post_srq_recv(3)", "max_wr"),
}


@dataclass(frozen=True, kw_only=True)
class CapacityParams(PairParams):
    """A capacity claim's data, beside its pair's."""

    queue: str  # "send", "recv", "srq_recv": the queue filled; "cq": the completion queue; "channel": its events
    size: int = 4  # the entries the queue is asked for (what it reports back is what counts); channel: its CQs


@kind("capacity", params=CapacityParams)
def capacity(check: Check) -> None:
    """A queue filled to the size it reports takes no more: the one more refused at *bad_wr, nothing dropped."""
    prepare(check)
    wanted = check.params(CapacityParams)
    if wanted.queue in ("cq", "channel"):
        (_cq_capacity if wanted.queue == "cq" else _channel_capacity)(check, wanted)
        return
    man, cap = QUEUES[wanted.queue]
    scenario = Scenario(check, wanted)
    if wanted.queue == "srq_recv":
        scenario.srq = check.resource(Need("srq", spec={"srq_init_attr.attr.max_wr": wanted.size}, label="capacity"))
    scenario.build(size=16, queue_size=wanted.size, pair_options={"send_cqe": DRAIN_ROOM})
    holds = _reported(check, scenario, wanted.queue)
    if holds > MAX_FILL:
        raise NotExercised(f"the queue reports {cap} = {holds}: more WRs than this check posts ({MAX_FILL})")
    wrs = [_wr(scenario, wanted.queue, index) for index in range(holds + 1)]
    posted = _post(scenario, wanted.queue, wrs)
    ref = f"{man} RETURN VALUE"
    what = f"a list of {holds + 1} WRs to a queue that reports {cap} = {holds}"
    if posted.ok:
        # A provider that executes WRs while the list is still being written (siw's kernel thread
        # takes an SQE as soon as it is valid) frees room during the post: the one more then fits.
        # All of them completing says so; fewer is a WR the queue took and dropped.
        try:
            _drain(scenario, wanted.queue, holds + 1, FIRST_ID, man)
        except CheckTimeout as lost:
            raise check.deviation(
                f"{what} is refused at the last, or every WR it takes completes",
                f"the post returned 0, then {lost}",
                Returned(),
                posted,
                ref=ref,
            ) from None
        raise NotExercised(
            f"{what} was taken whole and all {holds + 1} completed: the provider executed WRs while the list "
            "was posted, so the queue was never full"
        )
    if posted.problem:
        raise check.deviation("a positive errno value", posted.outcome_text(), Problem(posted.problem), posted, ref=ref)
    # *bad_wr as the call layer reads it back: {"index": n} (an element of the list posted), or None.
    got = cast("Mapping[str, int]", posted.outs.get("bad_wr") or {}).get("index")
    if got != holds:
        raise check.deviation(
            f"{what} fails at WR {holds}, the one past the queue's size: *bad_wr points at it",
            f"errno {posted.errno_name}; *bad_wr {'is NULL' if got is None else f'points at WR {got}'}",
            BadWr(got),
            posted,
            ref=ref,
        )
    _drain(scenario, wanted.queue, holds, FIRST_ID, man)
    again = _wr(scenario, wanted.queue, holds + 1)
    reposted = _post(scenario, wanted.queue, [again])
    if not reposted.ok:
        raise check.failure(reposted, "the drained queue takes a WR again", ref=ref)
    _drain(scenario, wanted.queue, 1, FIRST_ID + holds + 1, man)


def _reported(check: Check, scenario: Scenario, queue: str) -> int:
    """What the queue holds as the provider reports it: the QP's cap (ibv_query_qp), the SRQ's max_wr."""
    if queue == "srq_recv":
        assert scenario.srq is not None  # made above for this queue
        call = check.calls.invoke("ibv_query_srq", {"srq": scenario.srq}, phase="readback")
        if call.ok:
            return int(cast("Mapping[str, int]", call.outs["srq_attr"])["max_wr"])  # struct ibv_srq_attr
        # Where the query is not implemented (siw), the size ibv_create_srq wrote back (ibv_create_srq(3)).
        made = next(call for call in check.calls.log if call.result is scenario.srq)
        return int(cast("Mapping[str, Mapping[str, int]]", made.outs["srq_init_attr"])["attr"]["max_wr"])
    qp = scenario.pair.sender if queue == "send" else scenario.pair.receiver
    call = check.calls.invoke("ibv_query_qp", {"qp": qp, "attr_mask": "IBV_QP_CAP"}, phase="readback")
    if not call.ok:
        raise check.failure(call, "ibv_query_qp reports the QP's capacities", ref="ibv_query_qp(3) RETURN VALUE")
    return int(cast("Mapping[str, Mapping[str, int]]", call.outs["init_attr"])["cap"][QUEUES[queue][1]])


def _wr(scenario: Scenario, queue: str, index: int) -> WorkRequest:
    if queue == "send":
        return {**scenario.send_wr(), "wr_id": FIRST_ID + index}
    sge = scenario.traffic.sge(scenario.remote, scenario.room)
    return {"wr_id": FIRST_ID + index, "sg_list": (sge,), "num_sge": 1}


def _post(scenario: Scenario, queue: str, wrs: list[WorkRequest]) -> Call:
    t = scenario.traffic
    if queue == "send":
        return t.post_send(scenario.pair.sender, wrs)
    if queue == "recv":
        return t.post_recv(scenario.pair.receiver, wrs)
    assert scenario.srq is not None  # made for this queue
    return t.post_srq_recv(scenario.srq, wrs)


def _drain(scenario: Scenario, queue: str, count: int, first_id: int, man: str) -> None:
    """The `count` WRs posted (wr_ids from `first_id`) complete, in order, and nothing more does.

    A receive queue drains by messages: SENDs from the sender, in batches its send queue holds."""
    t, pair = scenario.traffic, scenario.pair
    cq = pair.send_cq if queue == "send" else pair.recv_cq
    side = "send" if queue == "send" else "receive"
    if queue != "send":
        batch = max(1, min(_reported(scenario.check, scenario, "send"), 8))
        for start in range(0, count, batch):
            sends = [{**scenario.send_wr(), "wr_id": start + i} for i in range(min(batch, count - start))]
            call = t.post_send(pair.sender, sends)
            if not call.ok:
                raise scenario.check.failure(call, "the SENDs that drain the receives are posted", ref=man)
            t.poll(pair.send_cq, len(sends))
    found = t.poll(cq, count)
    for index, wc in enumerate(found):
        scenario.expect_wc(wc, {"status": "IBV_WC_SUCCESS", "wr_id": first_id + index}, side)
    extra = t.poll(cq, 1, QUIET, expect_none=True)
    if extra:
        raise scenario.check.deviation(
            f"the {count} WRs posted complete and nothing more: the refused one is not executed",
            f"a further completion came, wr_id {extra[0].get('wr_id', 0):#x}",
            FieldValue("wc.0.wr_id", extra[0].get("wr_id")),
            scenario.check.calls.log[-1],
            ref=f"{man} RETURN VALUE",
        )


def _cq_capacity(check: Check, wanted: CapacityParams) -> None:
    """A CQ filled to exactly its cqe by signalled WRITEs, none polled: no overrun, all there, still usable."""
    scenario = Scenario(check, wanted)  # params opcode: IBV_WR_RDMA_WRITE, which needs no receive
    scenario.build(size=16, queue_size=16, pair_options={"send_cqe": wanted.size})
    cq = scenario.pair.send_cq
    holds = int(read_object(cq)["cqe"])
    room = _reported(check, scenario, "send")
    if holds > room:
        raise NotExercised(f"the CQ holds {holds} completions, more than the sender's send queue ({room})")
    wrs: list[Mapping[str, Value]] = [{**scenario.send_wr(), "wr_id": FIRST_ID + i} for i in range(holds)]
    posted = scenario.traffic.post_send(scenario.pair.sender, wrs)
    if not posted.ok:
        raise check.failure(posted, f"{holds} signalled RDMA WRITEs are posted", ref="ibv_post_send(3) RETURN VALUE")
    context = check.resource(Need("context"))
    overrun = take_async_event(check, context, CQ_ERR, cq, QUIET)
    if overrun is not None:
        raise check.deviation(
            f"no {CQ_ERR}: {holds} completions reach a CQ whose cqe is {holds}",
            f"{CQ_ERR} came for the CQ",
            Returned(),
            overrun,
            ref="ibv_create_cq(3) NOTES",
        )
    _drain(scenario, "send", holds, FIRST_ID, "ibv_create_cq(3) NOTES")
    again = scenario.traffic.post_send(scenario.pair.sender, [{**scenario.send_wr(), "wr_id": FIRST_ID + holds}])
    if not again.ok:
        raise check.failure(again, "the drained CQ's QP takes a WR again", ref="ibv_post_send(3) RETURN VALUE")
    _drain(scenario, "send", 1, FIRST_ID + holds, "ibv_create_cq(3) NOTES")


def _channel_capacity(check: Check, wanted: CapacityParams) -> None:
    """`size` armed CQs on one channel, one completion each, no event acknowledged: one event each, and no more."""
    channel = check.resource(Need("comp_channel"))
    cqs = [
        check.resource(Need("cq", spec={"channel": Need("comp_channel")}, label=f"channel-{index}"))
        for index in range(wanted.size)
    ]
    scenario = Scenario(check, wanted)  # params opcode: IBV_WR_RDMA_WRITE, which needs no receive
    scenario.build(size=16, pair_options={"shared_cq": cqs[0]})
    senders = [scenario.pair.sender, *(scenario.traffic.pair(scenario.qp_type, shared_cq=cq).sender for cq in cqs[1:])]
    for cq in cqs:
        armed = check.calls.invoke("ibv_req_notify_cq", {"cq": cq, "solicited_only": 0})
        if not armed.ok:
            raise check.failure(armed, "ibv_req_notify_cq arms each CQ", ref="ibv_req_notify_cq(3) RETURN VALUE")
    for index, sender in enumerate(senders):
        posted = scenario.traffic.post_send(sender, [{**scenario.send_wr(), "wr_id": FIRST_ID + index}])
        if not posted.ok:
            raise check.failure(posted, "a signalled RDMA WRITE is posted", ref="ibv_post_send(3) RETURN VALUE")
    taken: list[int] = []
    try:
        _take_each(check, channel, cqs, taken)
    finally:
        # Acknowledged only now (ibv_get_cq_event(3) lets acknowledgements wait, and batch), and always:
        # a CQ with an event taken and not acknowledged cannot be destroyed (ibv_destroy_cq waits for it).
        for cq in cqs:
            if taken.count(cq.address):
                check.calls.invoke("ibv_ack_cq_events", {"cq": cq, "nevents": taken.count(cq.address)})
    for index, cq in enumerate(cqs):
        (wc,) = scenario.traffic.poll(cq, 1)
        scenario.expect_wc(wc, {"status": "IBV_WC_SUCCESS", "wr_id": FIRST_ID + index}, f"send on {cq.name}")


def _take_each(check: Check, channel: Handle, cqs: list[Handle], taken: list[int]) -> None:
    """One event from the channel for each CQ, and no more; none acknowledged (`taken` lists whose came)."""
    expected = {cq.address: cq for cq in cqs}
    ref = "ibv_get_cq_event(3) DESCRIPTION"
    what = f"{len(cqs)} armed CQs of one channel, one completion each, events not acknowledged"
    while True:
        if not check.calls.readable(channel, TIMEOUT if len(taken) < len(cqs) else QUIET):
            if len(taken) == len(cqs):
                return
            missing = [cq.name for cq in cqs if cq.address not in taken]
            raise check.deviation(
                f"{what}: ibv_get_cq_event returns an event for each CQ",
                f"{len(taken)} events came within {TIMEOUT:.0f} s; none for {', '.join(missing)}",
                CqEvent(False),
                check.calls.log[-1],
                ref=ref,
            )
        got = check.calls.invoke("ibv_get_cq_event", {"channel": channel})
        if not got.ok:
            raise check.failure(
                got, "ibv_get_cq_event returns the pending event", ref="ibv_get_cq_event(3) RETURN VALUE"
            )
        named = out_address(got, "cq")
        if named in expected:
            taken.append(named)  # to acknowledge, whatever is judged of it
        if named not in expected or taken.count(named) > 1:
            raise check.deviation(
                f"{what}: one event for each CQ and no more (each was armed once)",
                "an event names a CQ "
                + ("that already had its event" if named in expected else "that is not one of them"),
                EventCq(named),
                got,
                ref="ibv_req_notify_cq(3) DESCRIPTION",
            )
