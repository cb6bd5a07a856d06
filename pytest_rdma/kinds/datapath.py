"""Data-path kinds: work requests on a connected pair, and the completions and data they yield.

- transfer: a valid WR of an opcode completes on both sides with the fields the pages give,
  and the bytes arrive intact (seeded payloads, sizes around the MTU);
- access-fault: a WR that breaks a protection or access rule completes with the error status
  the page (or the IBTA) gives for it;
- post-refused: a list of WRs with one the QP (or its SRQ) cannot take: the post returns a positive
  errno, *bad_wr names that WR, the WRs before it complete and none after it;
- flush: WRs outstanding when the QP moves to Error complete with IBV_WC_WR_FLUSH_ERR;
- notify: an armed CQ raises one event on its channel for the completion it was armed for,
  and none for one it was not.

With params "srq" the receiver takes its receives from a shared receive queue, posted there.
With params "peer" the receiver, its buffer and its queues are on a second device (--rdma-peer).

What each opcode does (which queue it consumes, which completion opcodes it yields, which
remote access it needs) is data: ibv_post_send's `tables["opcodes"]` in the catalogue.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Literal, TypedDict

from pytest_rdma.calls.invoke import out_address
from pytest_rdma.calls.readback import number, number_at
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.calls.values import flag_expr, flag_value
from pytest_rdma.catalogue.model import Need, Opcode, Value
from pytest_rdma.ibv.enums import ENUMS
from pytest_rdma.kinds.behaviours import Behaviours
from pytest_rdma.kinds.calls import prepare
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.registry import kind
from pytest_rdma.kinds.state_machine import StateMachine
from pytest_rdma.kinds.traffic import (
    TIMEOUT,
    UD_GRH,
    Completion,
    Pair,
    PairOptions,
    Traffic,
    WorkRequest,
    field,
)
from pytest_rdma.observations import (
    BadWr,
    CompletionStatus,
    CqEvent,
    Differs,
    Errno,
    EventCq,
    FieldValue,
    Placed,
    Problem,
    Returned,
    State,
)
from pytest_rdma.outcomes import NotExercised

SEND_ID, RECV_ID = 0x5E7D, 0x4ECF  # wr_ids a completion must carry back
IMM = 0x12345678
KEY_SHIFT = 0x5A5A00  # added to a real key to make one that no region has
# Seconds a check waits, once what it is judged against is there, for what must not come (an event, a
# completion), and for a CQ's event that must come once its completion is there: the provider raises that event
# as it writes the completion (rxe_cq_post, siw_sqe_complete/siw_rqe_complete call the CQ's comp_handler), so it
# is queued by then; a missing one costs 1 s, not a completion's TIMEOUT.
QUIET = 1.0
MAX_PAYLOAD = 1 << 22  # the largest message the lab registers (max_msg_sz may be 2^31)


@dataclass(frozen=True, kw_only=True)
class PairParams:
    """What a data-path claim may say about its pair (Scenario): every data-path kind's params have these."""

    opcode: str = "IBV_WR_SEND"  # IBV_WR_*, where the claim has no "opcode" axis
    peer: bool = False  # the receiver is on the second device (--rdma-peer), not on the device under test
    srq: bool = False  # the receiver takes its receives from a shared receive queue
    qp_attrs: Mapping[str, Value] | None = None  # attributes of the pair's QPs other than the defaults
    seed: int = 1  # of the payload
    compare_add: int = 0  # an atomic's operands
    swap: int = 0


@dataclass(frozen=True, kw_only=True)
class TransferParams(PairParams):
    size: int | str = 64  # bytes, or relative to the MTU ("2*mtu+1") or max_msg_sz
    sges: int = 1
    inline: bool = False


@dataclass(frozen=True, kw_only=True)
class AccessFaultParams(PairParams):
    fault: str  # which rule the WR breaks: a name of FAULTS
    size: int = 64
    side: Literal["send", "recv"] = "send"  # whose completion carries the status
    terminates: bool = False  # iWARP: judged by the data placed and the requester's QP, not the status
    statuses: tuple[str, ...] = ()  # the statuses the source gives for it


@dataclass(frozen=True, kw_only=True)
class PostRefusedParams(PairParams):
    queue: Literal["send", "recv", "srq_recv"]
    problem: str  # what the QP cannot take: a name of PROBLEMS
    count: int = 3  # WRs in the list
    bad: int = 1  # the one it cannot take
    must_fail: bool = False  # the page says the post itself fails (not a later completion)
    field: str = ""  # outside: the WR field given a value outside its enum (derived, catalogue/derived.py)
    value: int = 0  # outside: that value


@dataclass(frozen=True, kw_only=True)
class FlushParams(PairParams):
    count: int = 3


@dataclass(frozen=True, kw_only=True)
class NotifyParams(PairParams):
    solicited_only: int = 0  # ibv_req_notify_cq's argument
    solicited: bool = False  # the send asks for a solicited event
    fault: Literal["", "recv-too-small"] = ""  # the receive completes in error
    expect_event: bool = True


def opcode_of(check: Check, opcode: str) -> Opcode:
    return check.catalogue["ibv_post_send"].tables["opcodes"][opcode]


def size_of(check: Check, traffic: Traffic, size: Value) -> int:
    """A message size: bytes, or relative to the path MTU ("mtu-1", "2*mtu+1") or the port's max_msg_sz."""
    if isinstance(size, int):
        return size
    text = str(size)
    if text.startswith("max_msg"):
        maximum = check.number("port.max_msg_sz")
        if maximum > MAX_PAYLOAD:
            raise NotExercised(
                f"port.max_msg_sz = {maximum}: a message that large is more than this check registers "
                f"({MAX_PAYLOAD} bytes)"
            )
        return maximum
    return int(eval(text, {"__builtins__": {}}, {"mtu": traffic.mtu()}))  # noqa: S307 - catalogue data, not input


def status_name(value: int | None) -> str:
    return str(value) if value is None else {v: k for k, v in ENUMS["ibv_wc_status"].items()}.get(value, str(value))


def opcode_name(value: int | None) -> str:
    return str(value) if value is None else {v: k for k, v in ENUMS["ibv_wc_opcode"].items()}.get(value, str(value))


class Scenario:
    """One case's pair, buffers and work requests, built from the case's params."""

    def __init__(self, check: Check, params: PairParams) -> None:
        self.check = check
        self.params = params
        self.vars = check.spec["vars"]
        self.traffic = Traffic(check)
        # The axes, where the claim has them, give the opcode (IBV_WR_*) and the QP type (IBV_QPT_*).
        self.opcode = str(self.vars.get("opcode") or params.opcode)
        self.op = opcode_of(check, self.opcode)
        self.qp_type = str(self.vars.get("qp_type", "IBV_QPT_RC"))
        self.ud = self.qp_type == "IBV_QPT_UD"
        # params "peer": the receiver's end is on the second device; what it uses is made there.
        self.peer = params.peer
        self.receiver_side = "peer" if self.peer else "dut"
        if self.peer:
            self.traffic.require_peer()
        # params "srq": the receiver takes its receives from a shared receive queue, posted there.
        self.srq: Handle | None = None
        if params.srq:
            with check.on(self.receiver_side):
                self.srq = check.resource(Need("srq"))

    def build(
        self,
        *,
        size: int,
        sges: int = 1,
        inline: bool = False,
        recv_size: int | None = None,
        remote_access: str | None = None,
        recv_channel: bool = False,
        pair_options: PairOptions | None = None,
        queue_size: int = 8,
    ) -> None:
        """The pair, its buffers and their payloads; `pair_options` go to Traffic.pair (send_ops_flags, ...);
        `queue_size`: the max_send_wr and max_recv_wr both QPs ask for."""
        t = self.traffic
        cap = {"max_send_wr": queue_size, "max_recv_wr": queue_size, "max_send_sge": max(sges, 1), "max_recv_sge": 1}
        if inline:
            cap["max_inline_data"] = size
        self.pair: Pair = t.pair(
            self.qp_type,
            cap=cap,
            recv_channel=recv_channel,
            overrides=self.params.qp_attrs,
            srq=self.srq,
            peer=self.peer,
            **(pair_options or {}),
        )
        self.size = size
        seed = self.params.seed
        # The side the data starts on holds the payload: the local buffer, or the remote one for a READ.
        local_seed, remote_seed = (None, seed) if self.op.get("data") == "local" else (seed, None)
        self.local = t.mr(max(size, 8), "IBV_ACCESS_LOCAL_WRITE", "local", local_seed)
        access = (
            remote_access
            if remote_access is not None
            else " | ".join(["IBV_ACCESS_LOCAL_WRITE", *([self.op["remote"]] if self.op.get("remote") else [])])
        )
        room = (recv_size if recv_size is not None else size) + (UD_GRH if self.ud else 0)
        with self.check.on(self.receiver_side):
            self.remote = t.mr(max(room, 8), access, "remote", remote_seed)
        self.room = room

    def post_recv(self) -> None:
        if not self.op.get("consumes_recv"):
            return
        sg = (self.traffic.sge(self.remote, self.room),) if self.room else ()
        wr = {"wr_id": RECV_ID, "sg_list": sg, "num_sge": len(sg)}
        if self.srq is not None:
            call = self.traffic.post_srq_recv(self.srq, [wr])
            ref = "ibv_post_srq_recv(3) RETURN VALUE"
        else:
            call = self.traffic.post_recv(self.pair.receiver, [wr])
            ref = "ibv_post_recv(3) RETURN VALUE"
        if not call.ok:
            raise self.check.failure(call, "a valid receive WR is posted", ref=ref)

    def send_wr(
        self,
        *,
        sges: int = 1,
        flags: Sequence[str] = ("IBV_SEND_SIGNALED",),
        lkey: Value = None,
        rkey: Value = None,
        remote_offset: int = 0,
    ) -> WorkRequest:
        t, size = self.traffic, self.size
        pieces = [size // sges + (1 if i < size % sges else 0) for i in range(sges)] if size else []
        sg, offset = [], 0
        for piece in pieces:
            sg.append(t.sge(self.local, piece, offset, lkey))
            offset += piece
        wr: WorkRequest = {
            "wr_id": SEND_ID,
            "opcode": self.opcode,
            "sg_list": tuple(sg),
            "num_sge": len(sg),
            "send_flags": " | ".join(flags) or 0,
        }
        if self.op.get("imm"):
            wr["imm_data"] = socket.htonl(IMM)
        if self.op.get("remote") and "ATOMIC" not in self.opcode:
            wr["wr.rdma.remote_addr"] = field(self.remote, "addr", self.check, remote_offset)
            wr["wr.rdma.rkey"] = rkey if rkey is not None else field(self.remote, "rkey", self.check)
        if "ATOMIC" in self.opcode:
            wr["wr.atomic.remote_addr"] = field(self.remote, "addr", self.check, remote_offset)
            wr["wr.atomic.rkey"] = rkey if rkey is not None else field(self.remote, "rkey", self.check)
            wr["wr.atomic.compare_add"] = self.params.compare_add
            wr["wr.atomic.swap"] = self.params.swap
        if self.ud:
            wr["wr.ud.ah"] = self.pair.ah
            wr["wr.ud.remote_qpn"] = field(self.pair.receiver, "qp_num", self.check)
            wr["wr.ud.remote_qkey"] = self.pair.qkey
        return wr

    def post_send(self, wr: Mapping[str, Value]) -> None:
        call = self.traffic.post_send(self.pair.sender, [wr])
        if not call.ok:
            raise self.check.failure(call, f"a valid {self.opcode} WR is posted", ref="ibv_post_send(3) RETURN VALUE")

    def expect_wc(self, wc: Completion, fields: Mapping[str, Value], side: str) -> None:
        """Each field of a work completion is what the pages say it must be."""
        for name, want in fields.items():
            read = wc.get(name)
            got = read if isinstance(read, int) else None  # a field of struct ibv_wc: a number
            if name == "wc_flags":
                want_bits = flag_expr(want).value if isinstance(want, str) else number(want, name)
                if int(got or 0) & want_bits == want_bits:
                    continue
            elif isinstance(want, str):
                if got == flag_value(want):
                    continue
            elif got == want:
                continue
            # Every completion has a status and an opcode: a number there.
            shown = status_name(got) if name == "status" else opcode_name(got) if name == "opcode" else got
            raise self.check.deviation(
                f"the {side} completion's {name} is {want}",
                f"{name} = {shown}" + (f" (vendor_err {wc.get('vendor_err')})" if name == "status" else ""),
                FieldValue(f"wc.0.{name}", got),
                self.check.calls.log[_index_of(self.check, wc["poll_call"])],
                ref="ibv_poll_cq(3) DESCRIPTION",
            )


def _index_of(check: Check, call_index: int) -> int:
    return next(i for i, call in enumerate(check.calls.log) if call.index == call_index)


def _send_fields(scenario: Scenario) -> dict[str, Value]:
    fields: dict[str, Value] = {
        "status": "IBV_WC_SUCCESS",
        "wr_id": SEND_ID,
        "opcode": scenario.op["send_wc"],
        "qp_num": field(scenario.pair.sender, "qp_num", scenario.check).value,
    }
    if scenario.op.get("data") == "local":
        fields["byte_len"] = scenario.size
    return fields


def _recv_fields(scenario: Scenario) -> dict[str, Value]:
    sender = field(scenario.pair.sender, "qp_num", scenario.check).value
    fields: dict[str, Value] = {
        "status": "IBV_WC_SUCCESS",
        "wr_id": RECV_ID,
        "opcode": scenario.op["recv_wc"],
        "qp_num": field(scenario.pair.receiver, "qp_num", scenario.check).value,
    }
    if scenario.op.get("data") == "recv":
        fields["byte_len"] = scenario.size + (UD_GRH if scenario.ud else 0)
    if scenario.op.get("imm"):
        fields["wc_flags"] = "IBV_WC_WITH_IMM"
        fields["imm_data"] = socket.htonl(IMM)
    if scenario.ud:
        fields["src_qp"] = sender
        fields["wc_flags"] = "IBV_WC_GRH" + (" | IBV_WC_WITH_IMM" if scenario.op.get("imm") else "")
    return fields


def _expect_data(scenario: Scenario) -> None:
    """Every byte that arrived is the byte that was sent."""
    t, size, data = scenario.traffic, scenario.size, scenario.op.get("data")
    if not size or data not in ("recv", "remote", "local"):
        return
    offset = UD_GRH if scenario.ud and data == "recv" else 0
    source, target = (scenario.remote, scenario.local) if data == "local" else (scenario.local, scenario.remote)
    sent = t.content(source, size)
    got = t.content(target, size, offset)
    # A UC requester's completion says the message left, not that it was placed (UC has no acknowledgement),
    # so the target's memory is read again until it holds the message or the deadline passes: on 6.12 under
    # load rxe0's 64 KiB UC RDMA WRITE was compared while its later packets were still on their way.
    deadline = time.monotonic() + TIMEOUT
    while got != sent and data == "remote" and scenario.qp_type == "IBV_QPT_UC" and time.monotonic() < deadline:
        time.sleep(0.001)
        got = t.content(target, size, offset)
    if got != sent:
        first = next(i for i, (a, b) in enumerate(zip(got, sent)) if a != b)
        raise scenario.check.deviation(
            f"the {size} bytes that arrive are the bytes sent (seed {scenario.params.seed})",
            f"byte {first} differs ({got[first]:#04x}, sent {sent[first]:#04x})",
            Differs(first, target.name, offset, source.name, size),
            scenario.check.calls.log[-1],
            ref="ibv_post_send(3) DESCRIPTION",
        )


@kind("transfer", params=TransferParams)
def transfer(check: Check) -> None:
    """A valid work request completes on both sides with the fields the pages give, and the data arrives intact."""
    p = check.params(TransferParams)
    prepare(check)
    scenario = Scenario(check, p)
    size = size_of(check, scenario.traffic, check.spec["vars"].get("size", p.size))
    sges, inline = p.sges, p.inline
    scenario.build(size=size, sges=sges, inline=inline)
    scenario.post_recv()
    flags = ["IBV_SEND_SIGNALED", *(["IBV_SEND_INLINE"] if inline else [])]
    scenario.post_send(scenario.send_wr(sges=sges, flags=flags))
    (sent,) = scenario.traffic.poll(scenario.pair.send_cq, 1)
    scenario.expect_wc(sent, _send_fields(scenario), "send")
    if scenario.op.get("consumes_recv"):
        (received,) = scenario.traffic.poll(scenario.pair.recv_cq, 1)
        scenario.expect_wc(received, _recv_fields(scenario), "receive")
    _expect_data(scenario)


class WrongWr(TypedDict, total=False):
    """What an access fault changes in the WR it sends (Scenario.send_wr's arguments)."""

    lkey: Value
    rkey: Value
    remote_offset: int


# An access fault: builds the pair (`size` bytes) as the fault needs it, and says what of the WR is wrong.
Fault = Callable[[Scenario, int], WrongWr]
FAULTS: Behaviours[Fault] = Behaviours("fault")


@FAULTS.register("remote-no-access")
def _remote_no_access(scenario: Scenario, size: int) -> WrongWr:
    """The target region grants no remote access."""
    scenario.build(size=size, remote_access="IBV_ACCESS_LOCAL_WRITE")
    return {}


@FAULTS.register("recv-too-small")
def _recv_too_small(scenario: Scenario, size: int) -> WrongWr:
    """The receive buffer holds half the message."""
    scenario.build(size=size, recv_size=size // 2)
    return {}


# A key the device did not hand out: the real one moved far off, kept relative to it so that
# the reproducer's key is as wrong in its own run.
@FAULTS.register("bad-rkey")
def _bad_rkey(scenario: Scenario, size: int) -> WrongWr:
    scenario.build(size=size)
    return {"rkey": field(scenario.remote, "rkey", scenario.check, KEY_SHIFT)}


@FAULTS.register("bad-lkey")
def _bad_lkey(scenario: Scenario, size: int) -> WrongWr:
    scenario.build(size=size)
    return {"lkey": field(scenario.local, "lkey", scenario.check, KEY_SHIFT)}


@FAULTS.register("out-of-bounds")
def _out_of_bounds(scenario: Scenario, size: int) -> WrongWr:
    """The remote address runs over the region's end."""
    scenario.build(size=size)
    return {"remote_offset": max(scenario.room - size // 2, 8)}


@kind("access-fault", params=AccessFaultParams, behaviours=(FAULTS,))
def access_fault(check: Check) -> None:
    """A work request that breaks a protection or access rule completes with the status given for it."""
    p = check.params(AccessFaultParams)
    prepare(check)
    scenario = Scenario(check, p)
    size = p.size
    wrong = FAULTS[p.fault](scenario, size)
    scenario.post_recv()
    scenario.post_send(scenario.send_wr(**wrong))
    side = p.side
    cq = scenario.pair.send_cq if side == "send" else scenario.pair.recv_cq
    (wc,) = scenario.traffic.poll(cq, 1)
    if p.terminates:
        _expect_terminated(scenario, size)
        return
    statuses = p.statuses
    got = status_name(int(wc["status"]))
    if got not in statuses:
        raise check.deviation(
            f"the {'send' if side == 'send' else 'receive'} completion's status is {' or '.join(statuses)}",
            f"status = {got} (vendor_err {wc.get('vendor_err')})",
            CompletionStatus("wc.0.status", int(wc["status"]), got),
            check.calls.log[_index_of(check, wc["poll_call"])],
            ref=status_source(check),
        )


def _expect_terminated(scenario: Scenario, size: int) -> None:
    """iWARP: the refused operation placed no data, and the requester's QP left RTS (the Terminate).

    iWARP completes an RDMA WRITE once its data is handed to the stream, so the requester's
    completion status says nothing about the target's verdict; the memory and the QP do.
    """
    check, t = scenario.check, scenario.traffic
    target = scenario.remote if scenario.opcode == "IBV_WR_RDMA_WRITE" else scenario.local
    placed = t.content(target, size)
    if placed != bytes(size):
        first = next(i for i, byte in enumerate(placed) if byte)
        raise check.deviation(
            "the refused operation places no data",
            f"byte {first} of the target changed",
            Placed(first, target.name, size),
            check.calls.log[-1],
            ref=status_source(check),
        )
    deadline = time.monotonic() + TIMEOUT
    while True:
        read = check.calls.invoke(
            "ibv_query_qp", {"qp": scenario.pair.sender, "attr_mask": "IBV_QP_STATE"}, phase="readback"
        )
        state = number_at(read.outs["attr"], "qp_state") if read.ok else None  # struct ibv_qp_attr
        if state is not None and state != flag_value("IBV_QPS_RTS"):
            return
        if time.monotonic() > deadline:
            raise check.deviation(
                "the connection is terminated: the requester's QP leaves RTS",
                f"it is still in RTS after {TIMEOUT:.0f} s"
                if read.ok
                else f"ibv_query_qp failed: errno {read.errno_name}",
                State("RTS") if read.ok else Errno(read.errno_name),
                read,
                ref=status_source(check),
            )
        time.sleep(0.05)


def status_source(check: Check) -> str:
    """Who says how an error surfaces: the pages list statuses without tying them to causes, so a
    claim that cites the IBTA's error tables (or the iWARP RFCs) is judged against those."""
    cited = [source.text for source in check.case.sources if source.kind in ("ibta", "iwarp")]
    return cited[0] if cited else check.case.sources[0].text


@dataclass
class Refusal:
    """The list a refused post sends: `count` WRs, the one at `bad` with too many SGEs or inline data."""

    count: int
    bad: int
    too_many: int = 0  # SGEs of the bad WR (0: one)
    inline: WorkRequest = dataclass_field(default_factory=dict)  # what the bad WR carries beside the others


# What the QP cannot take: readies the pair (built, its QP `qp`) and says which list to post.
PostProblem = Callable[[Scenario, Handle, PostRefusedParams], Refusal]
PROBLEMS: Behaviours[PostProblem] = Behaviours("problem")


@PROBLEMS.register("over-max-wr")
def _over_max_wr(scenario: Scenario, qp: Handle, p: PostRefusedParams) -> Refusal:
    """One WR more than the queue holds, in one list: the WR past its max_wr is the refused one."""
    if p.queue != "srq_recv" or scenario.srq is None:
        raise ValueError("problem over-max-wr is written for queue srq_recv with params srq")
    count = _srq_max_wr(scenario.check, scenario.srq) + 1
    if count > 1 << 14:
        raise NotExercised(f"the SRQ holds {count - 1} WRs: a list longer than that is more than this check posts")
    return Refusal(count, count - 1)


@PROBLEMS.register("sge-over-max")
def _sge_over_max(scenario: Scenario, qp: Handle, p: PostRefusedParams) -> Refusal:
    """The bad WR has one SGE more than the queue's max_*_sge."""
    return Refusal(p.count, p.bad, too_many=_cap_of(scenario.check, qp, f"max_{p.queue}_sge") + 1)


@PROBLEMS.register("inline-over-max")
def _inline_over_max(scenario: Scenario, qp: Handle, p: PostRefusedParams) -> Refusal:
    """The bad WR carries one byte more inline than the QP's max_inline_data."""
    length = _cap_of(scenario.check, qp, "max_inline_data") + 1
    if length > 1 << 16:
        raise NotExercised(f"max_inline_data = {length - 1}: a longer inline message is more than this check sends")
    big = scenario.traffic.mr(length, "IBV_ACCESS_LOCAL_WRITE", "inline", seed=17)
    inline: WorkRequest = {
        "sg_list": (scenario.traffic.sge(big, length),),
        "num_sge": 1,
        "send_flags": "IBV_SEND_SIGNALED | IBV_SEND_INLINE",
    }
    return Refusal(p.count, p.bad, inline=inline)


@PROBLEMS.register("outside")
def _outside(scenario: Scenario, qp: Handle, p: PostRefusedParams) -> Refusal:
    """The bad WR has one field outside the enum verbs.h gives for it (an opcode, its send flags)."""
    if not p.field:
        raise ValueError("problem outside is written with params field and value")
    return Refusal(p.count, p.bad, inline={p.field: p.value})


@PROBLEMS.register("state-reset")
def _state_reset(scenario: Scenario, qp: Handle, p: PostRefusedParams) -> Refusal:
    """The QP is moved back to RESET first."""
    check = scenario.check
    machine = StateMachine.of(check.catalogue, "qp")
    moved = check.modify(qp, machine, "RTS", "RESET", (machine.state_flag,), phase="setup")
    if not moved.ok:
        raise NotExercised(f"could not move the QP to RESET (errno {moved.errno_name})")
    return Refusal(p.count, p.bad)


@kind("post-refused", params=PostRefusedParams, behaviours=(PROBLEMS,))
def post_refused(check: Check) -> None:
    """A post with a WR the QP cannot take: a positive errno, *bad_wr at that WR, and only the WRs before it posted."""
    p = check.params(PostRefusedParams)
    prepare(check)
    scenario = Scenario(check, p)
    queue, problem = p.queue, p.problem
    scenario.build(size=16)
    qp = scenario.pair.sender if queue == "send" else scenario.pair.receiver
    refusal = PROBLEMS[problem](scenario, qp, p)
    count, bad, too_many, inline = refusal.count, refusal.bad, refusal.too_many, refusal.inline
    wrs = []
    for index in range(count):
        sg = scenario.traffic.sge(scenario.local if queue == "send" else scenario.remote, 16)
        sges = (sg,) * (too_many if index == bad and too_many else 1)
        wr: WorkRequest = {"wr_id": 100 + index, "sg_list": sges, "num_sge": len(sges)}
        if index == bad and inline:
            wr.update(inline)
        wrs.append({**scenario.send_wr(), **wr} if queue == "send" else wr)
    if queue == "srq_recv":
        assert scenario.srq is not None
        call = scenario.traffic.post_srq_recv(scenario.srq, wrs)
    else:
        call = (scenario.traffic.post_send if queue == "send" else scenario.traffic.post_recv)(qp, wrs)
    ref = f"ibv_post_{queue}(3) RETURN VALUE"
    if call.ok and not p.must_fail:
        # The pages let a provider find a bad WR later, when it executes it: a post that takes it
        # says nothing about what a failing post returns.
        raise NotExercised(f"the post of WR {bad} ({problem}) succeeded: nothing failed at post time")
    if call.ok:
        raise check.deviation(
            f"WR {bad} of {count} is refused ({problem})", "the post returned 0", Returned(), call, ref=ref
        )
    if call.problem:
        raise check.deviation("a positive errno value", call.outcome_text(), Problem(call.problem), call, ref=ref)
    # *bad_wr as the call layer reads it back: {"index": n} (an element of the list posted), or None.
    got = number_at(call.outs["bad_wr"], "index") if call.outs.get("bad_wr") else None
    if got != bad:
        raise check.deviation(
            f"*bad_wr points at WR {bad}, the first that could not be posted",
            f"*bad_wr {'is NULL' if got is None else f'points at WR {got}'}",
            BadWr(got),
            call,
            ref=ref,
        )


def _srq_max_wr(check: Check, srq: Handle) -> int:
    """What the SRQ holds: its max_wr as ibv_query_srq reports it now; where the query is not
    implemented, the max_wr ibv_create_srq wrote back (ibv_create_srq(3): the actual size)."""
    call = check.calls.invoke("ibv_query_srq", {"srq": srq}, phase="readback")
    if call.ok:
        return number_at(call.outs["srq_attr"], "max_wr")  # struct ibv_srq_attr
    made = next(call for call in check.calls.log if call.result is srq)
    return number_at(made.outs["srq_init_attr"], "attr", "max_wr")


def _cap_of(check: Check, qp: Handle, key: str) -> int:
    call = check.calls.invoke("ibv_query_qp", {"qp": qp, "attr_mask": "IBV_QP_CAP"}, phase="readback")
    return number_at(call.outs["init_attr"], "cap", key) if call.ok else 0


@kind("flush", params=FlushParams)
def flush(check: Check) -> None:
    """Receives outstanding when the QP moves to Error all complete, in order, with IBV_WC_WR_FLUSH_ERR."""
    p = check.params(FlushParams)
    prepare(check)
    scenario = Scenario(check, p)
    count = p.count
    scenario.build(size=16)
    receiver = scenario.pair.receiver
    wrs = [
        {"wr_id": 200 + i, "sg_list": (scenario.traffic.sge(scenario.remote, 16),), "num_sge": 1} for i in range(count)
    ]
    call = scenario.traffic.post_recv(receiver, wrs)
    if not call.ok:
        raise check.failure(call, "the receive WRs are posted", ref="ibv_post_recv(3) RETURN VALUE")
    machine = StateMachine.of(check.catalogue, "qp")
    moved = check.modify(receiver, machine, "RTS", "ERR", (machine.state_flag,))
    if not moved.ok:
        raise check.failure(moved, "a QP in RTS moves to Error", ref="ibv_modify_qp(3) DESCRIPTION")
    found = scenario.traffic.poll(scenario.pair.recv_cq, count)
    for index, wc in enumerate(found):
        scenario.expect_wc(wc, {"status": "IBV_WC_WR_FLUSH_ERR", "wr_id": 200 + index}, "flushed receive")


@kind("notify", params=NotifyParams)
def notify(check: Check) -> None:
    """An armed CQ raises one event on its channel for what it was armed for, and none for anything else."""
    p = check.params(NotifyParams)
    prepare(check)
    scenario = Scenario(check, p)
    solicited_only, solicited, fault = p.solicited_only, p.solicited, p.fault
    scenario.build(size=16, recv_size=8 if fault == "recv-too-small" else None, recv_channel=True)
    cq = scenario.pair.recv_cq
    armed = check.calls.invoke("ibv_req_notify_cq", {"cq": cq, "solicited_only": solicited_only})
    if not armed.ok:
        raise check.failure(armed, "ibv_req_notify_cq arms the CQ", ref="ibv_req_notify_cq(3) RETURN VALUE")
    scenario.post_recv()
    flags = ["IBV_SEND_SIGNALED", *(["IBV_SEND_SOLICITED"] if solicited else [])]
    scenario.post_send(scenario.send_wr(flags=flags))
    channel = scenario.pair.channel
    assert channel is not None  # built with recv_channel=True
    if not p.expect_event:
        # The completion first, so that "no event" is about a completion that is there.
        completion = scenario.traffic.poll(cq, 1)[0]
        if check.calls.readable(channel, QUIET):
            got = _take_event(check, channel, cq)
            raise check.deviation(
                "no event: the CQ was armed for solicited completions only",
                f"an event came for a completion with status {status_name(completion['status'])}",
                CqEvent(True),
                got,
                ref="ibv_req_notify_cq(3) DESCRIPTION",
            )
        return
    # The completion first (up to TIMEOUT): "no event" is then about a completion that is there, and is
    # judged QUIET after it, as the provider queues the event with the completion.
    completion = scenario.traffic.poll(cq, 1)[0]
    if not check.calls.readable(channel, QUIET):
        raise check.deviation(
            "an event on the CQ's channel",
            f"a completion with status {status_name(completion['status'])} arrived and no event "
            f"came within {QUIET:.0f} s of it",
            CqEvent(False, completion["status"]),
            armed,
            ref="ibv_req_notify_cq(3) DESCRIPTION",
        )
    got = _take_event(check, channel, cq)
    named = out_address(got, "cq")
    if named != cq.address:
        raise check.deviation(
            "the event names the armed CQ",
            "it names another CQ",
            EventCq(named),
            got,
            ref="ibv_get_cq_event(3) DESCRIPTION",
        )


def _take_event(check: Check, channel: Handle, cq: Handle) -> Call:
    """Take the channel's event and acknowledge it at once: a CQ with an event taken and not
    acknowledged cannot be destroyed (ibv_destroy_cq waits for it), which would hang the teardown."""
    got = check.calls.invoke("ibv_get_cq_event", {"channel": channel})
    if not got.ok:
        raise check.failure(got, "ibv_get_cq_event returns the event", ref="ibv_get_cq_event(3) RETURN VALUE")
    check.calls.invoke("ibv_ack_cq_events", {"cq": cq, "nevents": 1})
    return got
