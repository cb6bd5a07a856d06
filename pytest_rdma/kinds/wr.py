"""Work request API and extended CQ kinds: the data path reached through ibv_wr_* and ibv_start_poll.

- wr-transfer: WRs built between ibv_wr_start and ibv_wr_complete (on a QP made by ibv_create_qp_ex
  with the send_ops_flags of its opcodes) complete as ibv_post_send's WRs of the same opcodes do:
  ibv_wr_complete returns 0, each completion carries its wr_id and opcode, the data arrives intact.
  With `hold`, no completion comes before ibv_wr_complete; with `count`, several WRs form one batch;
  `setter` picks the DATA setter (ibv_wr_set_sge by default).
- wr-abort: the WRs built since ibv_wr_start and discarded by ibv_wr_abort never complete and place
  nothing; a batch completed afterwards yields only its own WR.
- cq-ex-poll: the completions of ibv_post_send's WRs read through an extended CQ (ibv_start_poll,
  ibv_next_poll, the ibv_wc_read_* accessors, ibv_end_poll) carry the fields ibv_poll_cq would give.

They are kinds of their own because the calls differ from ibv_post_send / ibv_poll_cq: a WR is a
sequence of builder and setter calls with fields of struct ibv_qp_ex written before the builder,
and a completion is an iteration state read field by field. What each opcode does is still
ibv_post_send's tables["opcodes"]; the expected completion fields are datapath's.
"""

from __future__ import annotations

import errno
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pytest_rdma.calls.marshal import read_object
from pytest_rdma.calls.readback import handle, number
from pytest_rdma.calls.record import Call, Handle
from pytest_rdma.calls.values import flag_expr, flag_value
from pytest_rdma.catalogue.model import Tables, Value
from pytest_rdma.kinds.calls import prepare
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.datapath import (
    IMM,
    QUIET,
    RECV_ID,
    SEND_ID,
    PairParams,
    Scenario,
    _expect_data,
    _recv_fields,
    _send_fields,
    opcode_name,
    status_name,
)
from pytest_rdma.kinds.registry import kind
from pytest_rdma.kinds.traffic import TIMEOUT, UD_GRH, PairOptions, field
from pytest_rdma.observations import FieldValue, Placed, Returned
from pytest_rdma.outcomes import CheckTimeout

if TYPE_CHECKING:
    from typing_extensions import Unpack


@dataclass(frozen=True, kw_only=True)
class WrTransferParams(PairParams):
    size: int = 64  # bytes per WR
    count: int = 1  # WRs in the batch
    setter: str = "ibv_wr_set_sge"  # the DATA setter
    pieces: int = 1  # the pieces a *_list setter gives
    hold: bool = False  # nothing completes before ibv_wr_complete


@dataclass(frozen=True, kw_only=True)
class WrAbortParams(PairParams):
    size: int = 64


@dataclass(frozen=True, kw_only=True)
class CqExPollParams(PairParams):
    size: int = 64  # bytes per WR
    count: int = 1  # WRs posted, completions iterated


ABORTED_ID = 0xAB0D  # the wr_id of a WR that ibv_wr_abort discards: it must never come back
CQ_EX_FIELDS = "IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP"
WR_REF = "ibv_wr_post(3) USAGE"
POLL_REF = "ibv_create_cq_ex(3) DESCRIPTION"


def _tables(check: Check) -> Tables:
    return check.catalogue["ibv_wr_complete"].tables


def _build(
    check: Check,
    params: PairParams,
    *,
    size: int,
    count: int,
    sges: int = 1,
    inline: bool = False,
    **pair: Unpack[PairOptions],
) -> Scenario:
    """The scenario's pair and buffers for `count` WRs of `size` bytes each, side by side in the buffers."""
    scenario = Scenario(check, params)
    scenario.build(size=size * count, sges=sges, inline=inline, pair_options=pair)
    scenario.size = size  # per WR: what each completion reports
    return scenario


def _post_recvs(scenario: Scenario, count: int) -> None:
    """One receive per WR, each into its own slice of the remote buffer."""
    if not scenario.op.get("consumes_recv"):
        return
    t, check, size = scenario.traffic, scenario.check, scenario.size
    room = size + (UD_GRH if scenario.ud else 0)
    wrs = [
        {"wr_id": RECV_ID + i, "sg_list": (t.sge(scenario.remote, room, i * size),), "num_sge": 1} for i in range(count)
    ]
    call = t.post_recv(scenario.pair.receiver, wrs)
    if not call.ok:
        raise check.failure(call, "valid receive WRs are posted", ref="ibv_post_recv(3) RETURN VALUE")


def _wr(scenario: Scenario, index: int, wr_id: int, setter: str, pieces: int) -> None:
    """One WR: the opcode's builder (wr_id and wr_flags written first), the UD address, the DATA setter."""
    check, t, pair = scenario.check, scenario.traffic, scenario.pair
    qpx = pair.sender_qpx
    builder = _tables(check)["builders"][scenario.opcode]
    size, offset = scenario.size, index * scenario.size
    args: dict[str, Value] = {"qp": qpx}
    if scenario.op.get("remote"):
        args["rkey"] = field(scenario.remote, "rkey", check)
        args["remote_addr"] = field(scenario.remote, "addr", check, offset)
    if scenario.op.get("imm"):
        args["imm_data"] = socket.htonl(IMM)
    if scenario.opcode == "IBV_WR_ATOMIC_CMP_AND_SWP":
        args.update(compare=scenario.params.compare_add, swap=scenario.params.swap)
    if scenario.opcode == "IBV_WR_ATOMIC_FETCH_AND_ADD":
        args["add"] = scenario.params.compare_add
    check.calls.invoke(builder, args, sets={"qp.wr_id": wr_id, "qp.wr_flags": "IBV_SEND_SIGNALED"})
    if scenario.ud:
        check.calls.invoke(
            "ibv_wr_set_ud_addr",
            {
                "qp": qpx,
                "ah": pair.ah,
                "remote_qpn": field(pair.receiver, "qp_num", check),
                "remote_qkey": pair.qkey,
            },
        )
    parts = [size // pieces + (1 if i < size % pieces else 0) for i in range(pieces)]
    starts = [offset + sum(parts[:i]) for i in range(pieces)]
    if setter == "ibv_wr_set_sge":
        data = {"lkey": field(scenario.local, "lkey", check), "addr": field(scenario.local, "addr", check, offset)}
        check.calls.invoke(setter, {"qp": qpx, **data, "length": size})
    elif setter == "ibv_wr_set_sge_list":
        sg = tuple(t.sge(scenario.local, n, at) for n, at in zip(parts, starts))
        check.calls.invoke(setter, {"qp": qpx, "num_sge": pieces, "sg_list": sg})
    elif setter == "ibv_wr_set_inline_data":
        check.calls.invoke(setter, {"qp": qpx, "addr": field(scenario.local, "addr", check, offset), "length": size})
    elif setter == "ibv_wr_set_inline_data_list":
        bufs = tuple({"addr": field(scenario.local, "addr", check, at), "length": n} for n, at in zip(parts, starts))
        check.calls.invoke(setter, {"qp": qpx, "num_buf": pieces, "buf_list": bufs})
    else:
        raise ValueError(f"unknown DATA setter {setter!r}")


def _pair_options(check: Check, scenario_opcode: str) -> PairOptions:
    return {"send_ops_flags": _tables(check)["send_ops"][scenario_opcode]}


def _nothing_completes(scenario: Scenario, why: str, wait: float = QUIET) -> None:
    """Neither CQ holds a completion for `wait` seconds (a completion that comes is the deviation).

    One window for both: a completion stays in its CQ until polled, so the second CQ, polled once the first one's
    window has passed, shows whatever came to it in that time (each CQ waited out in turn gave the second one twice
    the window, and the check one second more)."""
    check, t, pair = scenario.check, scenario.traffic, scenario.pair
    ends = time.monotonic() + wait
    for cq, side in ((pair.send_cq, "requester"), (pair.recv_cq, "responder")):
        found = t.poll(cq, 1, max(0.0, ends - time.monotonic()), expect_none=True)
        if found:
            wc = found[0]
            poll = next(c for c in check.calls.log if c.index == wc["poll_call"])
            raise check.deviation(
                why,
                f"the {side}'s CQ gave a completion (wr_id {wc['wr_id']:#x}, status {status_name(int(wc['status']))})",
                FieldValue("wc.0.wr_id", int(wc["wr_id"])),
                poll,
                ref=WR_REF,
            )


def _complete(scenario: Scenario) -> None:
    check = scenario.check
    done = check.calls.invoke("ibv_wr_complete", {"qp": scenario.pair.sender_qpx})
    if not done.ok:
        raise check.failure(
            done, "ibv_wr_complete returns 0 for a batch of valid WRs", ref="ibv_wr_post(3) RETURN VALUE"
        )


def _expect_completions(scenario: Scenario, count: int, first_id: int = SEND_ID) -> None:
    t, pair = scenario.traffic, scenario.pair
    sent = t.poll(pair.send_cq, count)
    for i, wc in enumerate(sent):
        want = _send_fields(scenario)
        want["wr_id"] = first_id + i
        scenario.expect_wc(wc, want, "send")
    if scenario.op.get("consumes_recv"):
        for i, wc in enumerate(t.poll(pair.recv_cq, count)):
            want = _recv_fields(scenario)
            want["wr_id"] = RECV_ID + i
            scenario.expect_wc(wc, want, "receive")


def _expect_all_data(scenario: Scenario, count: int) -> None:
    size = scenario.size
    scenario.size = size * count
    try:
        _expect_data(scenario)
    finally:
        scenario.size = size


@kind("wr-transfer", params=WrTransferParams)
def wr_transfer(check: Check) -> None:
    """WRs built with ibv_wr_* and posted by ibv_wr_complete complete as their ibv_post_send counterparts."""
    p = check.params(WrTransferParams)
    prepare(check)
    size, count, setter = p.size, p.count, p.setter
    pieces = p.pieces if setter.endswith("_list") else 1
    opcode = str(check.spec["vars"].get("opcode") or p.opcode)  # IBV_WR_*
    scenario = _build(
        check,
        p,
        size=size,
        count=count,
        sges=pieces,
        inline=setter.startswith("ibv_wr_set_inline"),
        **_pair_options(check, opcode),
    )
    _post_recvs(scenario, count)
    check.calls.invoke("ibv_wr_start", {"qp": scenario.pair.sender_qpx})
    for i in range(count):
        _wr(scenario, i, SEND_ID + i, setter, pieces)
    if p.hold:
        _nothing_completes(scenario, "no WR of the batch executes before ibv_wr_complete")
    _complete(scenario)
    _expect_completions(scenario, count)
    _expect_all_data(scenario, count)


@kind("wr-abort", params=WrAbortParams)
def wr_abort(check: Check) -> None:
    """The WRs discarded by ibv_wr_abort never complete; the next batch completes with its own WR only."""
    p = check.params(WrAbortParams)
    prepare(check)
    size = p.size
    opcode = str(check.spec["vars"].get("opcode") or p.opcode)  # IBV_WR_*
    scenario = _build(check, p, size=size, count=1, **_pair_options(check, opcode))
    _post_recvs(scenario, 1)
    qpx = scenario.pair.sender_qpx
    check.calls.invoke("ibv_wr_start", {"qp": qpx})
    _wr(scenario, 0, ABORTED_ID, "ibv_wr_set_sge", 1)
    check.calls.invoke("ibv_wr_abort", {"qp": qpx})
    _nothing_completes(scenario, "a WR discarded by ibv_wr_abort never completes")
    placed = scenario.traffic.content(scenario.remote, size)
    if scenario.op.get("data") in ("recv", "remote") and placed != bytes(size):
        first = next(i for i, byte in enumerate(placed) if byte)
        raise check.deviation(
            "a WR discarded by ibv_wr_abort places no data",
            f"byte {first} of the target changed",
            Placed(first, scenario.remote.name, size),
            check.calls.log[-1],
            ref=WR_REF,
        )
    check.calls.invoke("ibv_wr_start", {"qp": qpx})
    _wr(scenario, 0, SEND_ID, "ibv_wr_set_sge", 1)
    _complete(scenario)
    _expect_completions(scenario, 1)
    _expect_all_data(scenario, 1)


# -- extended CQs -----------------------------------------------------------------------------------
def _collapse_enoent(check: Check, call: Call) -> None:
    """Consecutive ENOENT answers of ibv_start_poll on one CQ are one record (the program loops anyway)."""
    log = check.calls.log
    if len(log) >= 2:
        before = log[-2]
        if before.verb == call.verb and before.args[0] == call.args[0] and before.value == errno.ENOENT:
            log[-2:] = [replace(call, index=before.index, repeat=before.repeat + 1)]


def _start(check: Check, cqx: Handle) -> Call:
    """ibv_start_poll, again while it answers ENOENT, until the deadline."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        call = check.calls.invoke("ibv_start_poll", {"cq": cqx}, phase="poll")
        if call.value != errno.ENOENT or time.monotonic() > deadline:
            if call.value == errno.ENOENT:
                raise CheckTimeout(f"no completion on {cqx.name} within {TIMEOUT:.0f} s (ibv_start_poll: ENOENT)")
            return call
        _collapse_enoent(check, check.calls.log[-1])
        time.sleep(0.0005)


def _read(check: Check, cqx: Handle, poll: Call, want: Mapping[str, Value], side: str) -> None:
    """The current completion's fields (status and wr_id of the struct, the rest by accessor) are `want`'s."""
    current = read_object(cqx)
    for name in ("status", "wr_id"):
        given = want[name]
        wanted = flag_value(given) if isinstance(given, str) else given  # a name: its value
        if int(current[name]) != wanted:
            shown: str | int = status_name(int(current[name])) if name == "status" else f"{int(current[name]):#x}"
            raise check.deviation(
                f"the {side} completion's {name} is {want[name]}",
                f"{cqx.name}->{name} = {shown}",
                FieldValue(f"cq.{name}", int(current[name])),
                poll,
                ref=POLL_REF,
            )
    for name, wanted in want.items():
        if name in ("status", "wr_id"):
            continue
        read = check.calls.invoke(f"ibv_wc_read_{name}", {"cq": cqx}, phase="poll")
        got = int(read.value or 0)
        if name == "wc_flags":
            bits = flag_expr(wanted).value if isinstance(wanted, str) else number(wanted, name)
            ok = got & bits == bits
        else:
            ok = got == (flag_value(wanted) if isinstance(wanted, str) else wanted)
        if not ok:
            shown = opcode_name(got) if name == "opcode" else got
            raise check.deviation(
                f"ibv_wc_read_{name} of the {side} completion gives {wanted}",
                f"it gives {shown}",
                FieldValue("ret", got),
                read,
                ref=POLL_REF,
            )


def _iterate(check: Check, cqx: Handle, wants: Sequence[Mapping[str, Value]], side: str) -> None:
    """Read len(wants) completions with start/next_poll (an ENOENT from next_poll ends an iteration
    early: the rest had not arrived); after the last, next_poll answers ENOENT; end_poll once."""
    taken = 0
    while taken < len(wants):
        poll = _start(check, cqx)
        if not poll.ok:
            raise check.failure(poll, "ibv_start_poll returns 0 once a completion is queued", ref=POLL_REF)
        while True:
            _read(check, cqx, poll, wants[taken], side)
            taken += 1
            poll = check.calls.invoke("ibv_next_poll", {"cq": cqx}, phase="poll")
            if poll.value == errno.ENOENT:
                break
            if not poll.ok:
                raise check.failure(poll, "ibv_next_poll returns 0 or ENOENT", ref=POLL_REF)
            if taken == len(wants):
                raise check.deviation(
                    f"ibv_next_poll answers ENOENT after the {side} side's {len(wants)} completion(s)",
                    f"it returned 0: one more completion (wr_id {int(read_object(cqx)['wr_id']):#x})",
                    Returned(),
                    poll,
                    ref=POLL_REF,
                )
        check.calls.invoke("ibv_end_poll", {"cq": cqx}, phase="poll")


@kind("cq-ex-poll", params=CqExPollParams)
def cq_ex_poll(check: Check) -> None:
    """Completions read through an extended CQ's iterator and accessors carry the fields of the WRs."""
    p = check.params(CqExPollParams)
    prepare(check)
    size, count = p.size, p.count
    scenario = _build(check, p, size=size, count=count, cq_wc_flags=CQ_EX_FIELDS)
    _post_recvs(scenario, count)
    wrs = []
    for i in range(count):
        scenario.size = size
        wr = scenario.send_wr(remote_offset=i * size)
        wr["wr_id"] = SEND_ID + i
        wr["sg_list"] = (scenario.traffic.sge(scenario.local, size, i * size),) if size else ()
        wrs.append(wr)
    call = scenario.traffic.post_send(scenario.pair.sender, wrs)
    if not call.ok:
        raise check.failure(call, f"valid {scenario.opcode} WRs are posted", ref="ibv_post_send(3) RETURN VALUE")
    if count > 1:
        time.sleep(0.2)  # let the batch complete, so that ibv_next_poll has completions to move to
    sends = [{**_send_fields(scenario), "wr_id": SEND_ID + i} for i in range(count)]
    # Built with cq_wc_flags: the pair's CQs are extended CQs.
    _iterate(check, handle(scenario.pair.send_cqx, "the send CQ ex"), sends, "send")
    if scenario.op.get("consumes_recv"):
        recvs = [{**_recv_fields(scenario), "wr_id": RECV_ID + i} for i in range(count)]
        _iterate(check, handle(scenario.pair.recv_cqx, "the receive CQ ex"), recvs, "receive")
    _expect_all_data(scenario, count)
