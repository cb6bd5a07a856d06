"""Traffic between two connected QPs: the data path's one engine.

A `Pair` is two QPs, each with its own CQ, connected the way the transport connects them: on
InfiniBand and RoCE each is walked to RTS with the other's QP number and GID, as ibv_modify_qp's
table requires; on iWARP through rdma_cm (the QPs are ours; rdma_connect and rdma_accept name
them by conn_param.qp_num). Both QPs are on the device under test (loopback), or, for a
two-device check, the receiver and everything it uses are on the peer (--rdma-peer): made inside
`check.on("peer")`, so they come from the peer's context. Every call goes through the check's
call layer, so the pair's setup is in the reproducer too.

Buffers are registered memory regions; a source buffer holds a seeded payload (the seed is in
the case). Completions are polled until they come or a deadline passes: no check hangs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypedDict, cast

from pytest_rdma.calls.readback import handle, made
from pytest_rdma.calls.record import Call, Field, Handle, Struct
from pytest_rdma.catalogue.derived import REPORTED_ENUMS, reported_outside
from pytest_rdma.catalogue.model import IB_TRANSPORTS, Buffer, Cap, Dev, Need, Value
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.state_machine import StateMachine, move
from pytest_rdma.observations import FieldValue, Returned
from pytest_rdma.outcomes import CheckTimeout, NotExercised, Unsupported
from pytest_rdma.provider.device import Device
from pytest_rdma.provider.network import ipv4_of, others_on_netdev, sockaddr

TIMEOUT = 10.0  # seconds a completion or a connection event may take
MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
UD_GRH = 40  # a UD receive buffer starts with room for the GRH (ibv_post_recv(3) NOTES)
CM_PORT = 18515


class Completion(TypedDict, total=False):
    """A work completion: struct ibv_wc as ibv_poll_cq wrote it, and the poll that found it."""

    wr_id: int
    status: int
    opcode: int
    vendor_err: int
    byte_len: int
    imm_data: int  # also invalidated_rkey
    qp_num: int
    src_qp: int
    wc_flags: int
    pkey_index: int
    slid: int
    sl: int
    dlid_path_bits: int
    poll_call: int  # the index of the ibv_poll_cq call in the check's log


class PairOptions(TypedDict, total=False):
    """What the ibv_wr_* and extended-CQ kinds ask of Traffic.pair besides the QP type."""

    send_ops_flags: str
    cq_wc_flags: str
    send_cqe: int
    shared_cq: Handle  # every queue of the pair completes on this one CQ
    cq_channel: Handle  # both CQs of the pair deliver their events to this one completion channel


# A work request (or an SGE) as a post passes it: struct fields by dotted path.
WorkRequest = dict[str, Value]


def is_itself(peer: Device, dut: Device) -> bool:
    """The peer is the device under test: the same name and the same GID. A device of the same name on another
    host (--rdma-peer-host) has its own GID, on its own wire NIC."""
    return peer.name == dut.name and peer.fact("gid") == dut.fact("gid")


@dataclass
class Pair:
    """Two connected QPs: the sender (requester) and the receiver (responder), and their CQs."""

    qp_type: str
    sender: Handle
    receiver: Handle
    send_cq: Handle
    recv_cq: Handle
    ah: Handle | None = None  # UD: the address handle of the receiver's port
    qkey: int = 0x1234
    channel: Handle | None = None  # the completion channel of the receiver's CQ, when asked for
    send_cqx: Handle | None = None  # with cq_wc_flags: the extended CQs behind send_cq and recv_cq
    recv_cqx: Handle | None = None
    sender_qpx: Handle | None = None  # with send_ops_flags: the sender as struct ibv_qp_ex (the ibv_wr_* handle)


def field(handle: Handle, path: str, check: Check, offset: int = 0) -> Field:
    """A field of an object the check holds, kept by name for the reproducer (qp0->qp_num)."""
    read = cast("Mapping[str, int]", check.calls.struct(handle))  # an object's struct: its fields by name
    return Field(int(read[path]) + offset, handle.name, path, offset)


class Traffic:
    """Pairs, buffers, posts and completions for one check."""

    def __init__(self, check: Check) -> None:
        self.check = check
        self.calls = check.calls
        self.listeners = 0  # rdma_cm listeners bound so far: each pair's keeps its port until the teardown

    # -- pairs -------------------------------------------------------------------------------
    def pair(
        self,
        qp_type: str,
        *,
        cap: Mapping[str, int] | None = None,
        sq_sig_all: int = 0,
        overrides: Mapping[str, Value] | None = None,
        recv_channel: bool = False,
        send_ops_flags: str | None = None,
        cq_wc_flags: str | None = None,
        srq: Handle | None = None,
        send_cqe: int | None = None,
        peer: bool = False,
        shared_cq: Handle | None = None,
        cq_channel: Handle | None = None,
    ) -> Pair:
        """Two QPs of `qp_type` connected to each other (overrides: QP attributes for the walk, e.g. rnr_retry).

        With `send_ops_flags` the sender is made by ibv_create_qp_ex asking for those WR types (for the
        ibv_wr_* API); with `cq_wc_flags` both CQs are extended CQs (ibv_create_cq_ex) reporting those fields.
        With `srq`, the receiver takes its receives from that shared receive queue; `send_cqe` asks
        for the sender's CQ to hold that many completions (a CQ to overrun). With `peer`, the receiver,
        its CQ and its channel are the peer device's (and `srq`, if given, must be too). With `shared_cq`,
        both QPs' send and receive queues complete on that one CQ (made by the caller) instead of their own.
        With `cq_channel`, both CQs are made on that one completion channel (of the tested device).
        """
        check = self.check
        if check.dut.transport == "iwarp" and qp_type != "IBV_QPT_RC":
            raise Unsupported(
                f"transport = iwarp: iWARP connects only reliable connections, not {qp_type}",
                Cap("transport", "transport", IB_TRANSPORTS),  # what advertises UC and UD (pytest_rdma.capabilities)
            )
        if peer:
            self.require_peer()
        sides = {"send": "dut", "recv": "peer" if peer else "dut"}
        cqs: dict[str, Handle] = {}
        cqxs = {}
        channel = None
        if recv_channel:
            with check.on(sides["recv"]):
                channel = check.resource(Need("comp_channel"))
        for role in ("send", "recv"):
            if shared_cq is not None:
                cqs[role] = shared_cq
                continue
            spec: dict[str, Value] = {"channel": channel} if role == "recv" and channel is not None else {}
            if cq_channel is not None:
                spec["channel"] = cq_channel
            if role == "send" and send_cqe is not None:
                spec["cqe"] = send_cqe
            with check.on(sides[role]):
                if cq_wc_flags:
                    spec = {f"cq_attr.{k}": v for k, v in spec.items()}
                    cqxs[role] = check.resource(
                        Need("cq_ex", spec={**spec, "cq_attr.wc_flags": cq_wc_flags}, label=f"pair-{role}")
                    )
                    converted = self.calls.invoke("ibv_cq_ex_to_cq", {"cq": cqxs[role]}, phase="setup")
                    cqs[role] = made(converted)  # the CQ of a CQ ex: a pointer it always returns
                else:
                    cqs[role] = check.resource(Need("cq", spec=spec, label=f"pair-{role}"))
        qps = {}
        for role in ("send", "recv"):
            if role == "send" and send_ops_flags:
                qps[role] = self._qp_ex(qp_type, cqs[role], cap, sq_sig_all, send_ops_flags)
                continue
            spec = {
                "qp_type": qp_type,
                "qp_init_attr.send_cq": cqs[role],
                "qp_init_attr.recv_cq": cqs[role],
                "qp_init_attr.sq_sig_all": sq_sig_all,
            }
            if cap:
                spec.update({f"qp_init_attr.cap.{k}": v for k, v in cap.items()})
            if srq is not None and role == "recv":
                spec["qp_init_attr.srq"] = srq
            with check.on(sides[role]):
                qps[role] = check.resource(Need("qp", spec=spec, label=f"pair-{role}"))
        pair = Pair(qp_type, qps["send"], qps["recv"], cqs["send"], cqs["recv"], channel=channel)
        pair.send_cqx, pair.recv_cqx = cqxs.get("send"), cqxs.get("recv")
        if send_ops_flags:
            qpx = self.calls.invoke("ibv_qp_to_qp_ex", {"qp": pair.sender}, phase="setup").result
            pair.sender_qpx = handle(qpx, "the QP ex")  # of a QP made by ibv_create_qp_ex: never NULL
        # The pair's QPs grant every remote access the device has: a check about a region's access
        # then sees the region's rules at work, not the QP's.
        access = ["IBV_ACCESS_LOCAL_WRITE", "IBV_ACCESS_REMOTE_WRITE", "IBV_ACCESS_REMOTE_READ"]
        if check.number("attr.atomic_cap"):  # an enum ibv_atomic_cap
            access.append("IBV_ACCESS_REMOTE_ATOMIC")
        overrides = {"qp_access_flags": " | ".join(access), **(overrides or {})}
        if check.dut.transport == "iwarp":
            self._walk(pair.sender, qp_type, None, "INIT", overrides)
            with check.on(sides["recv"]):
                self._walk(pair.receiver, qp_type, None, "INIT", overrides)
            self.connect_cm(pair, peer)
        else:
            # Each end's address vector names the other end's GID and LID (its own, on loopback).
            self._walk(pair.sender, qp_type, pair.receiver, "RTS", overrides, to=sides["recv"])
            with check.on(sides["recv"]):
                self._walk(pair.receiver, qp_type, pair.sender, "RTS", overrides, to="dut")
        if qp_type == "IBV_QPT_UD":
            # The sender's address handle, on the sender's PD, for the receiver's port.
            to = sides["recv"]
            pair.ah = check.resource(
                Need("ah", spec={"attr.grh.dgid": Dev(f"{to}.gid"), "attr.dlid": Dev(f"{to}.port.lid")}, label="pair")
            )
        return pair

    def require_peer(self) -> None:
        """Not exercised unless a peer was given that is another device of the same transport."""
        dut, peer = self.check.dut, self.check.device("peer")
        if is_itself(peer, dut):
            raise NotExercised(f"the peer is {dut.name} itself: give --rdma-peer another device")
        if peer.transport != dut.transport:
            raise NotExercised(
                f"the peer {peer.name} is {peer.transport}, {dut.name} is {dut.transport}: "
                "traffic needs two devices of one transport"
            )

    def _qp_ex(
        self, qp_type: str, cq: Handle, cap: Mapping[str, int] | None, sq_sig_all: int, send_ops_flags: str
    ) -> Handle:
        """A QP made by ibv_create_qp_ex asking for the WR types of `send_ops_flags`."""
        check = self.check
        attrs: dict[str, Value] = {
            "qp_type": qp_type,
            "send_cq": cq,
            "recv_cq": cq,
            "sq_sig_all": sq_sig_all,
            "comp_mask": "IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS",
            "send_ops_flags": send_ops_flags,
            **{f"cap.{k}": v for k, v in (cap or {}).items()},
        }
        call = self.calls.invoke("ibv_create_qp_ex", {"qp_init_attr_ex": attrs}, phase="setup")
        if call.ok:
            return made(call)
        why = check.catalogue["ibv_create_qp_ex"].tables.get("not_supported", {}).get(call.errno_name)
        if why:
            raise Unsupported(f"ibv_create_qp_ex answered {call.errno_name}: {why}")
        # ibv_wr_post(3) USAGE: a QP that does not support every WR type asked for is not created.
        raise NotExercised(
            f"ibv_create_qp_ex refused send_ops_flags {send_ops_flags} (errno {call.errno_name}): the page lets a "
            "provider refuse WR types its QPs do not support (ibv_wr_post(3) USAGE)"
        )

    def _walk(
        self,
        qp: Handle,
        qp_type: str,
        peer: Handle | None,
        target: str,
        overrides: Mapping[str, Value] | None,
        to: str = "dut",
    ) -> None:
        """Walk `qp` to `target`; its address vector (if the walk sets one) names device `to`'s port."""
        check = self.check
        machine = StateMachine.of(check.catalogue, "qp")
        for before, after, flags in machine.path_to(target, {machine.walk["type_var"]: qp_type}):
            fields: dict[str, Value] = {}
            if peer is not None and "IBV_QP_DEST_QPN" in flags:
                fields["dest_qp_num"] = field(peer, "qp_num", check)
            if "IBV_QP_RQ_PSN" in flags:
                # A responder expects the PSN its requester starts from: both ends use the table's sq_psn.
                fields["rq_psn"] = machine.attr_values(("IBV_QP_SQ_PSN",), before, after)["sq_psn"]
            if "IBV_QP_AV" in flags:
                av = machine.attr_values(("IBV_QP_AV",), before, after)["ah_attr"]
                if not isinstance(av, Mapping):
                    raise TypeError(f"the walk table's ah_attr is a struct's fields, not {av!r}")
                fields["ah_attr"] = {
                    **av,
                    "grh.dgid": Dev(f"{to}.gid"),
                    "dlid": Dev(f"{to}.port.lid"),
                }
            for name, value in (overrides or {}).items():
                if any(name in machine.attr_values((flag,), before, after) for flag in flags):
                    fields[name] = value
            move(check, qp, machine, before, after, flags, target=f"{target} (a connected pair)", fields=fields)

    # -- iWARP: rdma_cm ----------------------------------------------------------------------
    def address(self, side: str = "dut") -> str:
        """An IPv4 address of the device's network interface: rdma_cm connects IP addresses."""
        device = self.check.device(side)
        memo = device.memo
        if "ipv4" not in memo:
            memo["ipv4"] = ipv4_of(device.name, device.port_num)
        if not memo["ipv4"]:
            raise NotExercised(
                f"{device.name}'s network interface has no IPv4 address, which rdma_cm needs "
                "to connect iWARP QPs (give it one, e.g. ip addr add ADDRESS dev NETDEV)"
            )
        return str(memo["ipv4"])

    def connect_cm(self, pair: Pair, peer: bool = False) -> None:
        """Connect the pair's QPs through rdma_cm: a listener, a client, and the QPs named by their numbers.

        The listener is bound to the receiver's device's address; with a peer, the client is bound to
        the device under test's (rdma_cm picks the device by the address: unbound, it would take the
        peer's own, which is local too)."""
        calls = self.calls
        address = self.address("peer" if peer else "dut")
        source = {"src_addr": sockaddr(self.address(), 0)} if peer else {}
        channel = self._channel("")
        # A listener on another host waits for its events there, on a channel of its own.
        where = self.check.device("peer").end.at if peer else ""
        listening = self._channel(where) if where else channel
        # A check of several iWARP pairs (a channel's CQs) binds a port each: its listeners live until the
        # teardown, and rdma_cm refuses a second bind of one address and port. Downward, away from the user
        # fixtures' CM_PORT + 1.
        address_value = sockaddr(address, CM_PORT - self.listeners)
        self.listeners += 1
        listen = self._cm_id(listening)
        self._cm_ok(calls.invoke("rdma_bind_addr", {"id": listen, "addr": address_value}, phase="setup"))
        self._cm_ok(calls.invoke("rdma_listen", {"id": listen}, phase="setup"))
        client = self._cm_id(channel)
        self._cm_ok(
            calls.invoke("rdma_resolve_addr", {"id": client, **source, "dst_addr": address_value}, phase="setup")
        )
        self._event(channel, "RDMA_CM_EVENT_ADDR_RESOLVED")
        self._cm_ok(calls.invoke("rdma_resolve_route", {"id": client}, phase="setup"))
        self._event(channel, "RDMA_CM_EVENT_ROUTE_RESOLVED")
        param = {"responder_resources": 1, "initiator_depth": 1, "retry_count": 7, "rnr_retry_count": 7}
        self._cm_ok(
            calls.invoke(
                "rdma_connect",
                {"id": client, "conn_param": {**param, "qp_num": field(pair.sender, "qp_num", self.check)}},
                phase="setup",
            )
        )
        request, server = self._event(listening, "RDMA_CM_EVENT_CONNECT_REQUEST", keep=True)
        self.calls.adopt(server, "rdma_destroy_id")
        self._cm_ok(
            calls.invoke(
                "rdma_accept",
                {"id": server, "conn_param": {**param, "qp_num": field(pair.receiver, "qp_num", self.check)}},
                phase="setup",
            )
        )
        self._cm_ok(calls.invoke("rdma_ack_cm_event", {"event": request}, phase="setup"))
        # Both ends hear ESTABLISHED: twice on one channel, once on each of two.
        self._event(listening, "RDMA_CM_EVENT_ESTABLISHED")
        self._event(channel, "RDMA_CM_EVENT_ESTABLISHED")

    def _shared(self) -> str:
        """Why rdma_cm may have connected other devices: one of this host's ends shares its interface ("" if not)."""
        ends = [self.check.device("dut"), *([self.check.peer] if self.check.peer is not None else [])]
        for device in ends:
            if device.end.at:  # a peer on another host: its interfaces are not this host's
                continue
            netdev, others = others_on_netdev(device.name)
            if others:
                return (
                    f"; {device.name}'s network interface {netdev} also carries {', '.join(others)}, and rdma_cm binds "
                    "an address to the first RDMA device on its interface: give each device an interface of its own"
                )
        return ""

    def _channel(self, at: str) -> Handle:
        """An rdma_cm event channel in the process `at` ("" this one)."""
        call = self.calls.invoke("rdma_create_event_channel", phase="setup", at=at)
        if not call.ok:
            raise NotExercised(f"rdma_create_event_channel failed (errno {call.errno_name}): is rdma_ucm loaded?")
        return made(call)

    def _cm_id(self, channel: Handle) -> Handle:
        call = self.calls.invoke("rdma_create_id", {"channel": channel}, phase="setup")
        self._cm_ok(call)
        return self.calls.out_handle(call, "id", "cm_id", "struct rdma_cm_id *", "rdma_destroy_id")

    def _cm_ok(self, call: Call) -> None:
        if not call.ok:
            raise NotExercised(
                f"could not connect the pair through rdma_cm: {call.verb} failed (errno {call.errno_name})"
            )

    def _event(self, channel: Handle, expected: str, keep: bool = False) -> tuple[Handle, Handle]:
        """Wait (bounded) for the channel's next event, which must be `expected`; acked unless `keep`."""
        if not self.calls.readable(channel, TIMEOUT):
            raise NotExercised(
                f"no rdma_cm event within {TIMEOUT:.0f} s while connecting the pair ({expected}){self._shared()}"
            )
        call = self.calls.invoke("rdma_get_cm_event", {"channel": channel}, phase="setup")
        self._cm_ok(call)
        event = self.calls.out_handle(call, "event", "cm_event", "struct rdma_cm_event *")
        facts = cast("Mapping[str, int]", self.calls.struct(event))  # struct rdma_cm_event: its fields
        from pytest_rdma.ibv.rdmacm_abi import VALUES

        names = {value: name for name, value in VALUES.items() if name.startswith("RDMA_CM_EVENT_")}
        got = names.get(int(facts["event"]), str(facts["event"]))
        server = Handle(f"{event.name}->id", "cm_id", "struct rdma_cm_id *", int(facts["id"] or 0), at=event.at)
        if not keep:
            self.calls.invoke("rdma_ack_cm_event", {"event": event}, phase="setup")
        if got != expected or facts["status"]:
            raise NotExercised(f"rdma_cm answered {got} (status {facts['status']}) where the pair needed {expected}")
        return event, server

    # -- buffers -------------------------------------------------------------------------------
    def mr(self, size: int, access: str, label: str, seed: int | None = None) -> Handle:
        """A registered buffer of `size` bytes (a seeded payload when `seed` is given)."""
        return self.check.resource(
            Need("mr", spec={"length": max(size, 1), "access": access, "addr": Buffer(max(size, 1), seed)}, label=label)
        )

    def sge(self, mr: Handle, length: int, offset: int = 0, lkey: Value = None) -> WorkRequest:
        return {
            "addr": field(mr, "addr", self.check, offset),
            "length": length,
            "lkey": lkey if lkey is not None else field(mr, "lkey", self.check),
        }

    def content(self, mr: Handle, length: int, offset: int = 0) -> bytes:
        return self.calls.content(mr, length, offset)

    # -- posting and polling ------------------------------------------------------------------
    def post_recv(self, qp: Handle, wrs: Sequence[Mapping[str, Value]]) -> Call:
        return self.calls.invoke("ibv_post_recv", {"qp": qp, "wr": tuple(wrs)})

    def post_srq_recv(self, srq: Handle, wrs: Sequence[Mapping[str, Value]]) -> Call:
        return self.calls.invoke("ibv_post_srq_recv", {"srq": srq, "wr": tuple(wrs)})

    def post_send(self, qp: Handle, wrs: Sequence[Mapping[str, Value]]) -> Call:
        return self.calls.invoke("ibv_post_send", {"qp": qp, "wr": tuple(wrs)})

    def poll(self, cq: Handle, count: int, timeout: float = TIMEOUT, *, expect_none: bool = False) -> list[Completion]:
        """`count` completions of `cq`, polled until they come; CheckTimeout if the deadline passes first.

        With `expect_none`, polls for `timeout` and returns what arrived (nothing, when the device conforms).
        """
        found: list[Completion] = []
        deadline = time.monotonic() + timeout
        while len(found) < count or expect_none:
            call = self.calls.invoke("ibv_poll_cq", {"cq": cq, "num_entries": max(count - len(found), 1)}, phase="poll")
            if call.value and int(call.value) < 0:
                raise self.check.deviation(
                    "ibv_poll_cq returns the number of completions (never negative on a healthy CQ)",
                    f"it returned {call.value!s}",
                    Returned(int(call.value)),
                    call,
                    ref="ibv_poll_cq(3) RETURN VALUE",
                )
            got = int(call.value or 0)
            wcs = cast("list[Struct]", call.outs["wc"])  # the out array of struct ibv_wc, read back
            self._inside_enums(call, wcs[:got])
            found += cast("list[Completion]", [dict(wc, poll_call=call.index) for wc in wcs[:got]])
            if got == 0:
                self._collapse(call)
                if time.monotonic() > deadline:
                    if expect_none:
                        return found
                    raise CheckTimeout(
                        f"{len(found)} of {count} completions arrived on {cq.name} within {timeout:.0f} s"
                    )
                # Waiting for what must not come, a completion stays in the CQ until polled: a poll every
                # 10 ms sees it as a tight loop does, without keeping a vCPU busy for the whole window.
                time.sleep(0.01 if expect_none else 0.0005)
        return found

    def _inside_enums(self, call: Call, wcs: Sequence[Struct]) -> None:
        """Every completion read lies inside the enums verbs.h gives its status, opcode and wc_flags."""
        for index, wc in enumerate(wcs):
            outside = reported_outside("ibv_wc", wc)
            if outside:
                field, value = outside
                raise self.check.deviation(
                    f"a completion's {field} is one of enum {REPORTED_ENUMS['ibv_wc'][field]}",
                    f"completion {index} reports {field} {value:#x}",
                    FieldValue(f"wc.{index}.{field}", value),
                    call,
                    ref="ibv_poll_cq(3) DESCRIPTION",
                )

    def _collapse(self, call: Call) -> None:
        """Consecutive empty polls of one CQ are one record: the C reproducer polls in a loop anyway."""
        log = self.calls.log
        if len(log) >= 2:
            before = log[-2]
            if before.verb == call.verb and before.args[0] == call.args[0] and not before.value:
                log[-2:] = [replace(call, index=before.index, repeat=before.repeat + 1)]

    def mtu(self) -> int:
        return MTU_BYTES.get(self.check.number("port.active_mtu"), 256)  # an enum ibv_mtu
