"""Relations between objects: what one object may do with another, and the failure paths of creating verbs.

- foreign-pd: a work request uses an object of another protection domain than its QP's (the gather
  or scatter region's lkey, the responder's region named by an rkey, a UD send's address handle):
  the completion carries the error status given for it, and no byte moves (the buffer that would
  have been written reads back unchanged);
- shared-cq: one CQ with a completion channel serves the send and receive queues of both QPs of a
  pair: it takes each one's completion, naming its QP by qp_num, and its armed channel gets the event;
- failure-path: a creating verb's documented refusals (each of its "refused" claims, generated from
  them) followed by the normal use of the device: the same verb with its defaults succeeds, what
  it made is used and destroyed with 0. The guards (kernel log, leaks) watch the whole check, so a
  failure path that leaks or warns is a finding of this check.

- foreign-pd-bind: a type 2 window's bind work request (IBV_WR_BIND_MW) with a region, or a window,
  of another PD than the binding QP's: the bind completes with the error status given for it;

Both take `across`: "pd", the foreign object is of a second PD of the QP's own context; "context", of a
PD of a second context of the same device (Check.in_context): the rules are the PD's, which an object of
another context necessarily breaks, so the same statuses and the same unmoved bytes judge it.
- shared-channel: one completion channel serves the sender's and the receiver's CQ, both armed: one
  event for each, each naming its own CQ.

Why kinds of their own: access-fault breaks a key or an access flag of a region of the QP's own
PD; here the key is valid, and the object it names is the wrong one. The failure paths reuse the
refused claims' data instead of writing each refusal twice.
"""

from __future__ import annotations

import dataclasses
import select
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

from pytest_rdma.calls.invoke import out_address
from pytest_rdma.calls.marshal import read_object
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.cases import Case, axis_cases
from pytest_rdma.catalogue.derived import derived_claims
from pytest_rdma.catalogue.model import Buffer, Claim, Dev, Need, Value, Verb
from pytest_rdma.kinds.calls import prepare
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.datapath import RECV_ID, SEND_ID, PairParams, Scenario, status_name, status_source
from pytest_rdma.kinds.registry import kind
from pytest_rdma.kinds.traffic import TIMEOUT, UD_GRH, Completion, PairOptions, field
from pytest_rdma.kinds.windows import REGION, REGION_ACCESS, Window, WindowParams
from pytest_rdma.observations import CompletionStatus, CqEvent, Differs, EventCq, FieldValue, Placed
from pytest_rdma.outcomes import NotExercised

OTHER_PD = Need("pd", label="other")  # a second protection domain (of the context the check is in)
OTHER_CONTEXT = "other"  # the label of the second context a foreign object of `across="context"` is made in
ACROSS = ("pd", "context")
LOCAL = "IBV_ACCESS_LOCAL_WRITE"
REMOTE_ALL = "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ"


@dataclass(frozen=True, kw_only=True)
class ForeignPdParams(PairParams):
    """A foreign-pd claim's data, beside its pair's (srq: the receiver takes its receives from an SRQ of its PD)."""

    foreign: str  # which object is of the other PD: "lkey", "recv-lkey", "rkey" or "ah"
    statuses: tuple[str, ...]  # the completion statuses the sources allow
    # On iWARP, instead: the pages tie no status to iWARP; RFC 5040 reports a remote protection error by a
    # Terminate that moves the QP to error, which flushes the requester's outstanding READ (empty: the same).
    iwarp_statuses: tuple[str, ...] = ()
    side: str = "send"  # whose completion carries the status: "send" or "recv"
    size: int = 64
    across: str = "pd"  # "pd": the foreign object is of another PD of the QP's context; "context": of another context


@kind("foreign-pd", params=ForeignPdParams)
def foreign_pd(check: Check) -> None:
    """A work request with an object of another PD than its QP's completes in error and moves no byte."""
    prepare(check)
    p = check.params(ForeignPdParams)
    scenario = Scenario(check, p)
    remote_access = REMOTE_ALL + (" | IBV_ACCESS_REMOTE_ATOMIC" if "ATOMIC" in scenario.opcode else "")
    scenario.build(size=p.size, remote_access=remote_access)
    # Where the data would land, and how much of it must stay as it was (zero, or the seeded payload).
    with _across(check, p.across):
        foreign = _foreign_object(check, scenario, p, remote_access)
    target = scenario.local if scenario.op.get("data") == "local" else scenario.remote
    before = scenario.traffic.content(target, scenario.room if target is scenario.remote else p.size)
    scenario.post_recv()
    scenario.post_send(scenario.send_wr())
    cq = scenario.pair.send_cq if p.side == "send" else scenario.pair.recv_cq
    (wc,) = scenario.traffic.poll(cq, 1)
    got = status_name(int(wc["status"]))
    statuses = _statuses_of(check, scenario, p)
    if got not in statuses:
        # The status decides; what the refusal left behind is said beside it (a refusal is judged with it).
        raise check.deviation(
            f"the {'send' if p.side == 'send' else 'receive'} completion's status is {' or '.join(statuses)} "
            f"(the {p.foreign} names {foreign.name}, of another PD)",
            f"status = {got} (vendor_err {wc.get('vendor_err')}); {_first_changed(scenario, target, before)[1]}",
            CompletionStatus("wc.0.status", int(wc["status"]), got),
            _poll_of(check, wc),
            ref=status_source(check),
        )
    _expect_unchanged(check, scenario, target, before)


def _statuses_of(check: Check, scenario: Scenario, p: ForeignPdParams) -> tuple[str, ...]:
    """The statuses the requester's completion may carry on this device's transport.

    On iWARP an RDMA WRITE has no response (RFC 5040): its send completion says the data left, and
    siw completes it so (siw_qp_tx.c), whatever the Data Sink then answers by a Terminate; the
    evidence is then the bytes, which must stay unplaced."""
    if check.dut.transport != "iwarp" or not p.iwarp_statuses:
        return p.statuses
    unanswered = scenario.op.get("data") == "remote" and not scenario.op.get("consumes_recv")
    return (*p.iwarp_statuses, "IBV_WC_SUCCESS") if unanswered else p.iwarp_statuses


def _foreign_object(check: Check, scenario: Scenario, p: ForeignPdParams, remote_access: str) -> Handle:
    """Make the object of the other PD and put it where the claim says, in place of the pair's own."""
    size = max(p.size, 8)
    reads_remote = scenario.op.get("data") == "local"  # a READ or an atomic: the payload starts remote
    if p.foreign == "lkey":
        seed = None if reads_remote else p.seed
        scenario.local = _region(check, size, LOCAL, "foreign-local", seed)
        return scenario.local
    if p.foreign == "recv-lkey":
        with check.on(scenario.receiver_side):
            scenario.remote = _region(check, scenario.room, LOCAL, "foreign-recv", None)
        return scenario.remote
    if p.foreign == "rkey":
        seed = p.seed if reads_remote else None
        # A READ's or an atomic's payload is the target's; a WRITE's target starts zeroed.
        with check.on(scenario.receiver_side):
            scenario.remote = _region(check, scenario.room, remote_access, "foreign-remote", seed)
        return scenario.remote
    if p.foreign == "ah":
        if not scenario.ud:
            raise ValueError("foreign 'ah' is written for a UD pair (over qp_type UD)")
        to = scenario.receiver_side
        scenario.pair.ah = check.resource(
            Need(
                "ah",
                spec={"pd": OTHER_PD, "attr.grh.dgid": Dev(f"{to}.gid"), "attr.dlid": Dev(f"{to}.port.lid")},
                label="foreign",
            )
        )
        return scenario.pair.ah
    raise ValueError(f"foreign {p.foreign!r}: one of lkey, recv-lkey, rkey, ah")


@contextmanager
def _across(check: Check, across: str) -> Iterator[None]:
    """Where the foreign object is made: the check's own context, or a second one of the same device."""
    if across not in ACROSS:
        raise ValueError(f"across {across!r}: one of {', '.join(ACROSS)}")
    if across == "pd":
        yield
        return
    with check.in_context(OTHER_CONTEXT):
        yield


def _region(check: Check, size: int, access: str, label: str, seed: int | None) -> Handle:
    """A registered buffer on the other PD (of the side `check.on` names)."""
    spec: dict[str, object] = {"pd": OTHER_PD, "length": size, "access": access, "addr": Buffer(size, seed)}
    return check.resource(Need("mr", spec=spec, label=label))


def _first_changed(scenario: Scenario, target: Handle, before: bytes) -> tuple[int | None, str]:
    """The first byte of the buffer the operation would have written that no longer reads as it was (None when
    none moved), and that said: "no byte of X changed", or which byte did and how."""
    now = scenario.traffic.content(target, len(before))
    first = next((i for i, (a, b) in enumerate(zip(now, before)) if a != b), None)
    if first is None:
        return None, f"no byte of {target.name} changed"
    return first, f"byte {first} of {target.name} changed ({before[first]:#04x} -> {now[first]:#04x})"


def _expect_unchanged(check: Check, scenario: Scenario, target: Handle, before: bytes) -> None:
    """The buffer the operation would have written reads back as it was before the post.

    Every such buffer starts zeroed (the payload is always the other end's), so the reproducer's
    condition, any byte non-zero, says the same."""
    first, said = _first_changed(scenario, target, before)
    if first is None:
        return
    raise check.deviation(
        "no byte moves: the buffer the operation would have written reads back unchanged",
        said,
        Placed(first, target.name, len(before)),
        check.calls.log[-1],
        ref=status_source(check),
    )


def _poll_of(check: Check, wc: Completion) -> Call:
    return next(call for call in check.calls.log if call.index == wc["poll_call"])


# -- a window bound across protection domains -----------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ForeignBindParams(PairParams):
    """A foreign-pd-bind claim's data: which object of the type 2 bind is of another PD, and the statuses allowed."""

    foreign: str  # "mr": the region, of another PD than the window's and the QP's; "mw": the window, than the QP's
    statuses: tuple[str, ...]
    across: str = "pd"  # "pd": the foreign object is of another PD of the QP's context; "context": of another context


@kind("foreign-pd-bind", params=ForeignBindParams)
def foreign_pd_bind(check: Check) -> None:
    """A type 2 window's bind work request naming an object of another PD completes in error."""
    prepare(check)
    p = check.params(ForeignBindParams)
    w = Window(check, WindowParams(type=2, seed=p.seed))
    with check.on(w.scenario.receiver_side), _across(check, p.across):
        if p.foreign == "mr":
            w.region = _region(check, REGION, REGION_ACCESS, "foreign-bound", None)
            foreign = w.region
        elif p.foreign == "mw":
            w.mw = foreign = check.resource(Need("mw", spec={"pd": OTHER_PD, "type": "IBV_MW_TYPE_2"}, label="foreign"))
        else:
            raise ValueError(f"foreign {p.foreign!r}: one of mr, mw")
    w.post_bind()
    (wc,) = w.scenario.traffic.poll(w.pair.recv_cq, 1)
    # The window goes first, whatever the bind did: a bind that took hold ties the window to the region,
    # whose dereg is then refused (EINVAL), and teardown (newest first) would leak the region and its PD.
    freed = check.calls.invoke("ibv_dealloc_mw", {"mw": w.mw}, phase="teardown")
    got = status_name(int(wc["status"]))
    if got not in p.statuses:
        raise check.deviation(
            f"the bind's completion status is {' or '.join(p.statuses)} (the {p.foreign} {foreign.name} is of "
            "another PD)",
            f"status = {got} (vendor_err {wc.get('vendor_err')})",
            CompletionStatus("wc.0.status", int(wc["status"]), got),
            _poll_of(check, wc),
            ref=status_source(check),
        )
    if not freed.ok:
        raise check.failure(freed, "the window is deallocated", ref="ibv_alloc_mw(3) RETURN VALUE")


# -- failure paths -------------------------------------------------------------------------------

# How a made object is used once, by resource kind: the verb and the parameter that takes the object.
USE: Mapping[str, tuple[str, str, Mapping[str, Value]]] = {
    "pd": ("ibv_reg_mr", "pd", {}),
    "cq": ("ibv_poll_cq", "cq", {"num_entries": 1}),
    "qp": ("ibv_query_qp", "qp", {"attr_mask": "IBV_QP_STATE"}),
    "srq": ("ibv_query_srq", "srq", {}),
    "comp_channel": ("ibv_create_cq", "channel", {}),
}
# An object without a verb that uses it alone (a region, a window, an address handle): the device
# keeps answering its context.
SERVES: tuple[str, str, Mapping[str, Value]] = ("ibv_query_device", "context", {})


@dataclass(frozen=True)
class FailurePathParams:
    """A failure-path claim's data (its cases are the verb's refused claims). `unprovoked`: why no
    documented failure of the verb can be made from user space (the claim's one case says so, never a pass).
    `iwarp_call`: the arguments that make the request right on iWARP where the verb's defaults reach what
    iWARP providers do not implement (create_qp_ex's extended comp_mask: siw's provider has no create_qp_ex)."""

    unprovoked: str = ""
    iwarp_call: Mapping[str, Value] = dataclasses.field(default_factory=dict)


def _use(check: Check, kind_name: str, handle: Handle) -> Call:
    """Use the object once; where its own use is a verb the provider does not implement (the page's
    "not supported" answer), the device serving its context is the use."""
    use_verb, param, args = USE.get(kind_name, SERVES)
    arg: Value = handle if param != "context" else Need("context")
    used = check.calls.invoke(use_verb, {param: arg, **args}, phase="call")
    if used.failed and check.catalogue[use_verb].tables.get("not_supported", {}).get(used.errno_name):
        use_verb, param, args = SERVES
        used = check.calls.invoke(use_verb, {param: Need("context"), **args}, phase="call")
    return used


def refusal_cases(verb: Verb, claim: Claim) -> Iterator[Case]:
    """One case per case of each of the verb's refused claims (its own and those derived from its enums:
    catalogue/derived.py), named after it, with this claim's words, and the claim's own cases where it
    gives a call of its own or says why no failure can be provoked."""
    refusals = [c for c in (*verb.claims, *derived_claims(verb)) if c.kind == "refused" and not c.untestable]
    # A refusal of the verb's defaults themselves (no AH on iWARP) leaves no request made right, on its transports.
    unservable = {t for c in refusals if not (c.call or c.steps) for t in c.transports}
    for refused in refusals:
        transports = tuple(t for t in refused.transports if t not in unservable)
        if not (refused.call or refused.steps) or not transports:
            continue
        borrowed = dataclasses.replace(
            refused,
            id=claim.id,
            kind=claim.kind,
            says=claim.says,
            params={k: v for k, v in claim.params.items() if k != "unprovoked"},
            also=(*refused.also, *claim.also),
            variant=f"after-{refused.id}" + (f"-{refused.variant}" if refused.variant else ""),
            transports=transports,
        )
        yield from axis_cases(verb, borrowed)
    if claim.call or claim.params.get("unprovoked"):
        # Refusals the verb's own claims do not make (a limit of ibv_query_device): the claim's call.
        yield from axis_cases(verb, claim)


@kind("failure-path", refusal_cases, params=FailurePathParams)
def failure_path(check: Check) -> None:
    """A refused creation, then the same verb with its defaults: it succeeds, is used and destroyed with 0."""
    p = check.params(FailurePathParams)
    if p.unprovoked:
        raise NotExercised(f"no failure path of {check.verb.name} can be taken: {p.unprovoked}")
    prepare(check)
    refused = check.call()
    if not refused.failed:
        raise NotExercised(
            f"{refused.verb} succeeded {refused.outcome_text()}: no failure path was taken "
            "(the refused claim of the same name judges that)"
        )
    verb = check.verb
    right = p.iwarp_call if check.dut.transport == "iwarp" else {}
    made = check.calls.invoke(verb.name, right, variables=verb.tables.get("vars", {}), phase="call")
    if not made.ok:
        raise check.failure(made, f"after the refused call, {verb.name} with its defaults succeeds")
    handle = cast(Handle, made.result)  # a creating verb's success: the object
    kind_name = verb.contract.produces[0].kind
    used = _use(check, kind_name, handle)
    if used.failed:
        raise check.failure(used, f"the {kind_name} made after the refusal is usable: {used.verb} succeeds")
    destroyer = check.catalogue[verb.contract.destroyed_by]  # the one way it is freed
    role = destroyer.contract.destroys[0].role
    gone = check.calls.invoke(destroyer.name, {role: handle}, phase="call")
    if gone.failed:
        raise check.failure(gone, f"the {kind_name} made after the refusal is destroyed with 0")


# -- one CQ shared by several queues ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SharedParams(PairParams):
    """A shared-cq or shared-channel claim's data, beside its pair's."""

    size: int = 64


SHARED_CQ = Need("cq", spec={"channel": Need("comp_channel")}, label="shared")


def _shared_pair(check: Check, options: Callable[[Handle], PairOptions]) -> tuple[Scenario, Handle]:
    """A pair built around one completion channel (`options` puts it, or a CQ on it, into the pair), and
    the channel; the CQs it serves are armed by the caller, before anything is posted."""
    prepare(check)
    p = check.params(SharedParams)
    channel = check.resource(Need("comp_channel"))
    scenario = Scenario(check, p)
    scenario.build(size=p.size, pair_options=options(channel))
    return scenario, channel


def _arm(check: Check, cqs: Iterable[Handle], which: str) -> None:
    for cq in cqs:
        armed = check.calls.invoke("ibv_req_notify_cq", {"cq": cq, "solicited_only": 0})
        if not armed.ok:
            raise check.failure(armed, f"ibv_req_notify_cq arms {which}", ref="ibv_req_notify_cq(3) RETURN VALUE")


@kind("shared-cq", params=SharedParams)
def shared_cq(check: Check) -> None:
    """Both QPs of a pair complete on one CQ with a channel: each completion names its QP, the armed channel fires."""
    scenario, channel = _shared_pair(check, lambda _channel: {"shared_cq": check.resource(SHARED_CQ)})
    cq = check.resource(SHARED_CQ)  # the one made for the pair
    p = check.params(SharedParams)
    _arm(check, (cq,), "the shared CQ")
    scenario.post_recv()
    scenario.post_send(scenario.send_wr())
    # One completion a poll, so that each is wc[0] of its own poll (the reproducer's condition).
    found = [*scenario.traffic.poll(cq, 1), *scenario.traffic.poll(cq, 1)]
    owners = {SEND_ID: scenario.pair.sender, RECV_ID: scenario.pair.receiver}
    expected = set(owners)
    for wc in found:
        wr_id = int(wc["wr_id"])
        if wr_id not in expected:
            raise check.deviation(
                f"the shared CQ holds the send ({SEND_ID:#x}) and the receive ({RECV_ID:#x}) completion, once each",
                f"a completion with wr_id {wr_id:#x}",
                FieldValue("wc.0.wr_id", wr_id),
                _poll_of(check, wc),
                ref="ibv_poll_cq(3) DESCRIPTION",
            )
        expected.discard(wr_id)
    for wc in found:
        owner = owners[int(wc["wr_id"])]
        side = "send" if owner is scenario.pair.sender else "receive"
        fields = {"status": "IBV_WC_SUCCESS", "qp_num": field(owner, "qp_num", check).value}
        scenario.expect_wc(wc, fields, f"{side} (on the shared CQ)")
    _expect_event(check, channel, cq)
    sent = scenario.traffic.content(scenario.local, p.size)
    offset = UD_GRH if scenario.ud else 0
    got = scenario.traffic.content(scenario.remote, p.size, offset)
    if got != sent:
        first = next(i for i, (a, b) in enumerate(zip(got, sent)) if a != b)
        raise check.deviation(
            f"the {p.size} bytes that arrive are the bytes sent (seed {p.seed})",
            f"byte {first} differs ({got[first]:#04x}, sent {sent[first]:#04x})",
            Differs(first, scenario.remote.name, offset, scenario.local.name, p.size),
            check.calls.log[-1],
            ref="ibv_post_send(3) DESCRIPTION",
        )


def _expect_event(check: Check, channel: Handle, cq: Handle) -> None:
    """The armed shared CQ's channel has an event, and it names that CQ (acknowledged at once)."""
    fd = int(read_object(channel)["fd"])
    if not select.select([fd], [], [], TIMEOUT)[0]:
        raise check.deviation(
            "an event on the shared CQ's channel for the completions it took",
            f"no event came within {TIMEOUT:.0f} s",
            CqEvent(False),
            check.calls.log[-1],
            ref="ibv_req_notify_cq(3) DESCRIPTION",
        )
    got = check.calls.invoke("ibv_get_cq_event", {"channel": channel})
    if not got.ok:
        raise check.failure(got, "ibv_get_cq_event returns the event", ref="ibv_get_cq_event(3) RETURN VALUE")
    check.calls.invoke("ibv_ack_cq_events", {"cq": cq, "nevents": 1})
    named = out_address(got, "cq")
    if named != cq.address:
        raise check.deviation(
            "the event names the shared CQ", "it names another CQ", EventCq(named), got, ref="ibv_get_cq_event(3)"
        )


# -- one completion channel serving several CQs -------------------------------------------------------


@kind("shared-channel", params=SharedParams)
def shared_channel(check: Check) -> None:
    """The two CQs of a pair on one channel, both armed: one event each, each naming its own CQ."""
    scenario, channel = _shared_pair(check, lambda channel: {"cq_channel": channel})
    cqs = {scenario.pair.send_cq.address: scenario.pair.send_cq, scenario.pair.recv_cq.address: scenario.pair.recv_cq}
    _arm(check, cqs.values(), "each CQ")
    scenario.post_recv()
    scenario.post_send(scenario.send_wr())
    (sent,) = scenario.traffic.poll(scenario.pair.send_cq, 1)
    scenario.expect_wc(sent, {"status": "IBV_WC_SUCCESS"}, "send")
    (received,) = scenario.traffic.poll(scenario.pair.recv_cq, 1)
    scenario.expect_wc(received, {"status": "IBV_WC_SUCCESS"}, "receive")
    unnamed = dict(cqs)
    for _ in cqs:
        _expect_event_of(check, channel, unnamed)


def _expect_event_of(check: Check, channel: Handle, unnamed: dict[int, Handle]) -> None:
    """The channel has one more event, and it names one of the armed CQs that no event named yet
    (acknowledged at once on that CQ, so that its destruction does not wait for it)."""
    fd = int(read_object(channel)["fd"])
    if not select.select([fd], [], [], TIMEOUT)[0]:
        raise check.deviation(
            f"an event on the channel for each of its {len(unnamed)} armed CQ(s) still without one",
            f"no event came within {TIMEOUT:.0f} s",
            CqEvent(False),
            check.calls.log[-1],
            ref="ibv_req_notify_cq(3) DESCRIPTION",
        )
    got = check.calls.invoke("ibv_get_cq_event", {"channel": channel})
    if not got.ok:
        raise check.failure(got, "ibv_get_cq_event returns the event", ref="ibv_get_cq_event(3) RETURN VALUE")
    named = out_address(got, "cq")
    cq = unnamed.pop(named, None)
    check.calls.invoke("ibv_ack_cq_events", {"cq": cq or next(iter(unnamed.values())), "nevents": 1})
    if cq is None:
        raise check.deviation(
            "each event names one of the channel's armed CQs, each CQ once",
            "it names a CQ that is not one of them, or one an event already named",
            EventCq(named),
            got,
            ref="ibv_get_cq_event(3) DESCRIPTION",
        )
