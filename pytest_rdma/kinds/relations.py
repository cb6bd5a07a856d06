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

Why kinds of their own: access-fault breaks a key or an access flag of a region of the QP's own
PD; here the key is valid, and the object it names is the wrong one. The failure paths reuse the
refused claims' data instead of writing each refusal twice.
"""

from __future__ import annotations

import dataclasses
import select
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import cast

from pytest_rdma.calls.invoke import out_address
from pytest_rdma.calls.marshal import read_object
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.cases import Case, axis_cases
from pytest_rdma.catalogue.model import Buffer, Claim, Dev, Need, Value, Verb
from pytest_rdma.kinds.calls import prepare
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.datapath import RECV_ID, SEND_ID, PairParams, Scenario, status_name, status_source
from pytest_rdma.kinds.registry import kind
from pytest_rdma.kinds.traffic import TIMEOUT, UD_GRH, Completion, field
from pytest_rdma.observations import CompletionStatus, CqEvent, Differs, EventCq, FieldValue, Placed
from pytest_rdma.outcomes import NotExercised

OTHER_PD = Need("pd", label="other")  # a second protection domain of the same context
LOCAL = "IBV_ACCESS_LOCAL_WRITE"
REMOTE_ALL = "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ"


@dataclass(frozen=True, kw_only=True)
class ForeignPdParams(PairParams):
    """A foreign-pd claim's data, beside its pair's (srq: the receiver takes its receives from an SRQ of its PD)."""

    foreign: str  # which object is of the other PD: "lkey", "recv-lkey", "rkey" or "ah"
    statuses: tuple[str, ...]  # the completion statuses the sources allow
    side: str = "send"  # whose completion carries the status: "send" or "recv"
    size: int = 64


@kind("foreign-pd", params=ForeignPdParams)
def foreign_pd(check: Check) -> None:
    """A work request with an object of another PD than its QP's completes in error and moves no byte."""
    prepare(check)
    p = check.params(ForeignPdParams)
    scenario = Scenario(check, p)
    remote_access = REMOTE_ALL + (" | IBV_ACCESS_REMOTE_ATOMIC" if "ATOMIC" in scenario.opcode else "")
    scenario.build(size=p.size, remote_access=remote_access)
    # Where the data would land, and how much of it must stay as it was (zero, or the seeded payload).
    foreign = _foreign_object(check, scenario, p, remote_access)
    target = scenario.local if scenario.op.get("data") == "local" else scenario.remote
    before = scenario.traffic.content(target, scenario.room if target is scenario.remote else p.size)
    scenario.post_recv()
    scenario.post_send(scenario.send_wr())
    cq = scenario.pair.send_cq if p.side == "send" else scenario.pair.recv_cq
    (wc,) = scenario.traffic.poll(cq, 1)
    got = status_name(int(wc["status"]))
    if got not in p.statuses:
        raise check.deviation(
            f"the {'send' if p.side == 'send' else 'receive'} completion's status is {' or '.join(p.statuses)} "
            f"(the {p.foreign} names {foreign.name}, of another PD)",
            f"status = {got} (vendor_err {wc.get('vendor_err')})",
            CompletionStatus("wc.0.status", int(wc["status"]), got),
            _poll_of(check, wc),
            ref=status_source(check),
        )
    _expect_unchanged(check, scenario, target, before)


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


def _region(check: Check, size: int, access: str, label: str, seed: int | None) -> Handle:
    """A registered buffer on the other PD (of the side `check.on` names)."""
    spec: dict[str, object] = {"pd": OTHER_PD, "length": size, "access": access, "addr": Buffer(size, seed)}
    return check.resource(Need("mr", spec=spec, label=label))


def _expect_unchanged(check: Check, scenario: Scenario, target: Handle, before: bytes) -> None:
    """The buffer the operation would have written reads back as it was before the post.

    Every such buffer starts zeroed (the payload is always the other end's), so the reproducer's
    condition, any byte non-zero, says the same."""
    now = scenario.traffic.content(target, len(before))
    if now == before:
        return
    first = next(i for i, (a, b) in enumerate(zip(now, before)) if a != b)
    raise check.deviation(
        "no byte moves: the buffer the operation would have written reads back unchanged",
        f"byte {first} of {target.name} changed ({before[first]:#04x} -> {now[first]:#04x})",
        Placed(first, target.name, len(before)),
        check.calls.log[-1],
        ref=status_source(check),
    )


def _poll_of(check: Check, wc: Completion) -> Call:
    return next(call for call in check.calls.log if call.index == wc["poll_call"])


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
    """A failure-path claim's data: none of its own (its cases are the verb's refused claims)."""


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
    """One case per case of each of the verb's refused claims, named after it, with this claim's words,
    and the claim's own cases where it gives a call of its own."""
    for refused in verb.claims:
        if refused.kind != "refused" or refused.untestable or not (refused.call or refused.steps):
            # A refusal of the verb's defaults themselves (no AH on iWARP) leaves no request made right.
            continue
        borrowed = dataclasses.replace(
            refused,
            id=claim.id,
            kind=claim.kind,
            says=claim.says,
            params={},
            also=(*refused.also, *claim.also),
            variant=f"after-{refused.id}" + (f"-{refused.variant}" if refused.variant else ""),
        )
        yield from axis_cases(verb, borrowed)
    if claim.call:
        # Refusals the verb's own claims do not make (a limit of ibv_query_device): the claim's call.
        yield from axis_cases(verb, claim)


@kind("failure-path", refusal_cases, params=FailurePathParams)
def failure_path(check: Check) -> None:
    """A refused creation, then the same verb with its defaults: it succeeds, is used and destroyed with 0."""
    prepare(check)
    refused = check.call()
    if not refused.failed:
        raise NotExercised(
            f"{refused.verb} succeeded {refused.outcome_text()}: no failure path was taken "
            "(the refused claim of the same name judges that)"
        )
    verb = check.verb
    made = check.calls.invoke(verb.name, {}, variables=verb.tables.get("vars", {}), phase="call")
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
class SharedCqParams(PairParams):
    """A shared-cq claim's data, beside its pair's."""

    size: int = 64


@kind("shared-cq", params=SharedCqParams)
def shared_cq(check: Check) -> None:
    """Both QPs of a pair complete on one CQ with a channel: each completion names its QP, the armed channel fires."""
    prepare(check)
    p = check.params(SharedCqParams)
    channel = check.resource(Need("comp_channel"))
    cq = check.resource(Need("cq", spec={"channel": Need("comp_channel")}, label="shared"))
    scenario = Scenario(check, p)
    scenario.build(size=p.size, pair_options={"shared_cq": cq})
    armed = check.calls.invoke("ibv_req_notify_cq", {"cq": cq, "solicited_only": 0})
    if not armed.ok:
        raise check.failure(armed, "ibv_req_notify_cq arms the shared CQ", ref="ibv_req_notify_cq(3) RETURN VALUE")
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
