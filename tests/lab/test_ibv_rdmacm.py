"""An RC connection through rdma_cm (pytest_rdma.ibv.rdmacm) and one SEND over it, in the lab.

    ./pytest-rdma lab --dev rxe0 --dev siw0 -- tests/lab/test_ibv_rdmacm.py -p no:xdist

iWARP (siw) connects QPs only through the connection manager, between IP addresses. The lab
puts each device on a dummy netdev without an IPv4 address, so the test gives the netdev one
(198.18.0.0/15, the range RFC 2544 sets aside for testing network devices) for its duration, as
a /32: the connection is between that address and itself, inside the VM's own kernel.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any, Callable

import pytest

from pytest_rdma.ibv import abi, binding, lib, rdmacm
from pytest_rdma.ibv.enums import VALUES as V
from pytest_rdma.ibv.rdmacm_abi import VALUES as CM
from pytest_rdma.ibv.rdmacm_abi import rdma_cm_event, rdma_cm_id, rdma_conn_param, rdma_event_channel

PORT = 1
TEST_ADDRESSES = {"rxe": "198.18.0.1", "siw": "198.18.1.1"}
CM_PORT = 18515
TIMEOUT = 30.0


def _run(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def address(device: str) -> Iterator[str]:
    """An IPv4 address of the device's netdev, added (and removed afterwards) if it has none."""
    if not os.path.exists("/dev/infiniband/rdma_cm"):
        _run("modprobe", "rdma_ucm")
    netdev = json.loads(_run("rdma", "-j", "link", "show", f"{device}/{PORT}"))[0]["netdev"]
    shown = json.loads(_run("ip", "-j", "-4", "addr", "show", "dev", netdev))
    existing = [info["local"] for entry in shown for info in entry.get("addr_info", [])]
    if existing:
        yield existing[0]
        return
    added = TEST_ADDRESSES["siw" if device.startswith("siw") else "rxe"]
    _run("ip", "addr", "add", f"{added}/32", "dev", netdev)
    try:
        yield added
    finally:
        _run("ip", "addr", "del", f"{added}/32", "dev", netdev)


def ok(raw: lib.Raw, what: str) -> Any:
    assert raw.value == 0, f"{what} failed: {raw}"
    return raw.value


def made(raw: lib.Raw, what: str) -> int:
    assert raw.value, f"{what} failed: {raw}"
    return raw.value


class Events:
    """rdma_get_cm_event on one channel, polled with a timeout so a lost event fails instead of hanging."""

    def __init__(self, channel: int) -> None:
        self.channel = channel
        self.poller = select.poll()
        self.poller.register(rdma_event_channel.from_address(channel).fd, select.POLLIN)

    def next(self, expected: str) -> int:
        """The id of the next event, which must be `expected` with status 0 (acked before returning)."""
        if not self.poller.poll(int(TIMEOUT * 1000)):
            raise AssertionError(f"no rdma_cm event within {TIMEOUT} s (waiting for {expected})")
        event = ctypes.c_void_p()
        ok(rdmacm.call("rdma_get_cm_event", self.channel, ctypes.byref(event)), "rdma_get_cm_event")
        got = rdma_cm_event.from_address(event.value)
        kind, status, cm_id = got.event, got.status, got.id
        ok(rdmacm.call("rdma_ack_cm_event", event.value), "rdma_ack_cm_event")
        name = rdmacm.call("rdma_event_str", kind).value.decode()
        assert (name, status) == (expected, 0), f"got {name} (status {status}), expected {expected}"
        return cm_id


def _poll_one(cq: int) -> abi.ibv_wc:
    wc = abi.ibv_wc()
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        raw = binding.call("ibv_poll_cq", cq, 1, wc)
        assert raw.value >= 0, raw
        if raw.value == 1:
            return wc
        time.sleep(0.001)
    raise AssertionError(f"no completion within {TIMEOUT} s")


def test_rc_connection_through_rdma_cm_moves_one_send(device: str, address: str) -> None:
    with ExitStack() as stack:
        # Freed in reverse order; a void function's None is success, any other value is checked.
        def later(call: Callable[..., lib.Raw], name: str, obj: int) -> int:
            stack.callback(lambda: ok(call(name, obj), name) if name not in _VOID else call(name, obj))
            return obj

        channel = later(
            rdmacm.call, "rdma_destroy_event_channel", made(rdmacm.call("rdma_create_event_channel"), "channel")
        )
        events = Events(channel)
        listen, client = ctypes.c_void_p(), ctypes.c_void_p()
        ok(rdmacm.call("rdma_create_id", channel, ctypes.byref(listen), None, CM["RDMA_PS_TCP"]), "rdma_create_id")
        later(rdmacm.call, "rdma_destroy_id", listen.value)
        ok(rdmacm.call("rdma_bind_addr", listen.value, rdmacm.ipv4(address, CM_PORT)), "rdma_bind_addr")
        ok(rdmacm.call("rdma_listen", listen.value, 1), "rdma_listen")

        ok(rdmacm.call("rdma_create_id", channel, ctypes.byref(client), None, CM["RDMA_PS_TCP"]), "rdma_create_id")
        later(rdmacm.call, "rdma_destroy_id", client.value)
        dst = rdmacm.ipv4(address, CM_PORT)
        ok(rdmacm.call("rdma_resolve_addr", client.value, None, dst, 5000), "rdma_resolve_addr")
        events.next("RDMA_CM_EVENT_ADDR_RESOLVED")
        ok(rdmacm.call("rdma_resolve_route", client.value, 5000), "rdma_resolve_route")
        events.next("RDMA_CM_EVENT_ROUTE_RESOLVED")

        # The address resolved to the lab's device: librdmacm opened its own context on it.
        verbs = rdma_cm_id.from_address(client.value).verbs
        dev = abi.ibv_device.from_address(abi.ibv_context.from_address(verbs).device)
        assert dev.name.decode() == device

        pd = later(binding.call, "ibv_dealloc_pd", made(binding.call("ibv_alloc_pd", verbs), "ibv_alloc_pd"))
        cqs = [
            later(binding.call, "ibv_destroy_cq", made(binding.call("ibv_create_cq", verbs, 8, None, None, 0), "cq"))
            for _ in range(2)
        ]
        message = b"over rdma_cm"
        src, dst_buf = ctypes.create_string_buffer(message, 64), ctypes.create_string_buffer(64)
        access = V["IBV_ACCESS_LOCAL_WRITE"]
        mrs = [
            abi.ibv_mr.from_address(
                later(binding.call, "ibv_dereg_mr", made(binding.call("ibv_reg_mr", pd, buf, 64, access), "mr"))
            )
            for buf in (src, dst_buf)
        ]

        def qp_attr(cq: int) -> abi.ibv_qp_init_attr:
            attr = abi.ibv_qp_init_attr(send_cq=cq, recv_cq=cq, qp_type=V["IBV_QPT_RC"])
            attr.cap.max_send_wr = attr.cap.max_recv_wr = 4
            attr.cap.max_send_sge = attr.cap.max_recv_sge = 1
            return attr

        ok(rdmacm.call("rdma_create_qp", client.value, pd, qp_attr(cqs[0])), "rdma_create_qp (client)")
        later(rdmacm.call, "rdma_destroy_qp", client.value)
        params = rdma_conn_param(responder_resources=1, initiator_depth=1, retry_count=7, rnr_retry_count=7)
        ok(rdmacm.call("rdma_connect", client.value, params), "rdma_connect")

        server = events.next("RDMA_CM_EVENT_CONNECT_REQUEST")
        later(rdmacm.call, "rdma_destroy_id", server)
        ok(rdmacm.call("rdma_create_qp", server, pd, qp_attr(cqs[1])), "rdma_create_qp (server)")
        later(rdmacm.call, "rdma_destroy_qp", server)
        # A receive is posted before the peer may send (iWARP has no RNR retry).
        recv_sge = abi.ibv_sge(addr=ctypes.addressof(dst_buf), length=64, lkey=mrs[1].lkey)
        recv_wr = abi.ibv_recv_wr(wr_id=2, sg_list=ctypes.addressof(recv_sge), num_sge=1)
        bad = ctypes.c_void_p()
        server_qp = rdma_cm_id.from_address(server).qp
        ok(binding.call("ibv_post_recv", server_qp, recv_wr, ctypes.byref(bad)), "ibv_post_recv")
        ok(rdmacm.call("rdma_accept", server, params), "rdma_accept")
        established = {events.next("RDMA_CM_EVENT_ESTABLISHED") for _ in range(2)}
        assert established == {client.value, server}

        send_sge = abi.ibv_sge(addr=ctypes.addressof(src), length=len(message), lkey=mrs[0].lkey)
        send_wr = abi.ibv_send_wr(wr_id=1, sg_list=ctypes.addressof(send_sge), num_sge=1)
        send_wr.opcode, send_wr.send_flags = V["IBV_WR_SEND"], V["IBV_SEND_SIGNALED"]
        client_qp = rdma_cm_id.from_address(client.value).qp
        raw = binding.call("ibv_post_send", client_qp, send_wr, ctypes.byref(bad))
        assert raw == lib.Raw(0, 0, "provider:post_send"), raw
        sent, received = _poll_one(cqs[0]), _poll_one(cqs[1])
        assert (sent.status, sent.opcode) == (V["IBV_WC_SUCCESS"], V["IBV_WC_SEND"])
        assert (received.status, received.opcode, received.byte_len) == (
            V["IBV_WC_SUCCESS"],
            V["IBV_WC_RECV"],
            len(message),
        )
        assert dst_buf.raw[: len(message)] == message

        ok(rdmacm.call("rdma_disconnect", client.value), "rdma_disconnect")
        # On IB/RoCE the passive side answers the DREQ with its own rdma_disconnect (the DREP),
        # and only then does the active side see DISCONNECTED.
        disconnected: set[int] = set()
        while len(disconnected) < 2:
            disconnected.add(events.next("RDMA_CM_EVENT_DISCONNECTED"))
            if disconnected == {server}:
                ok(rdmacm.call("rdma_disconnect", server), "rdma_disconnect (server)")
        assert disconnected == {client.value, server}


_VOID = {"rdma_destroy_event_channel", "rdma_destroy_qp"}
