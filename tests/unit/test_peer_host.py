"""A peer on another host (--rdma-peer-host), its pieces that need no device (host only): the setting,
what crosses the channel, where a call is made, and what a peer that hangs or dies costs (a real
execnet gateway to another process of this host, running a stand-in that never answers or ends)."""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator, Mapping

import execnet
import pytest

from pytest_rdma.calls.ends import EndLost, Performed, Written
from pytest_rdma.calls.invoke import Calls
from pytest_rdma.calls.record import ArrayArg, Field, Handle, OutArg, Readback, Resolved, StructArg, Sym
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Array, Verb
from pytest_rdma.outcomes import CheckTimeout
from pytest_rdma.peer.remote import RemoteEnd
from pytest_rdma.peer.wire import decode, encode
from pytest_rdma.settings import _gateway
from pytest_rdma.verbs import CATALOGUE

VERBS = Catalogue.of(CATALOGUE)
SPEC = f"popen//python={sys.executable}"


def test_a_peer_host_is_an_execnet_gateway_spec() -> None:
    for spec in ("ssh=root@host2//python=python3", "popen", "socket=192.0.2.2:8888", f"popen//python={sys.executable}"):
        assert _gateway([spec]) == spec
    for bad in ("host2", "root@host2", "", "http://host2"):
        with pytest.raises(ValueError, match="not an execnet gateway spec"):
            _gateway([bad])


def test_a_peer_host_without_a_peer_device_is_one_usage_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    ran = pytester.runpytest_subprocess("--rdma-dev", "rxe0", "--rdma-peer-host", SPEC)
    assert ran.ret == pytest.ExitCode.USAGE_ERROR
    ran.stderr.fnmatch_lines(["*--rdma-peer-host popen*: give --rdma-peer NAME too, the device of that host*"])
    assert "Traceback" not in ran.stderr.str()


def test_what_a_call_carries_crosses_the_channel_unchanged() -> None:
    pd = Handle("pd1", "pd", "struct ibv_pd *", 2**63 + 8, seed=None)
    value = {
        "pd": pd,
        "flags": Sym(3, "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE"),
        "qp_num": Field(0x11, "qp0", "qp_num"),
        "wr": (StructArg("struct ibv_sge", (("addr", Field(8, "mr0", "addr", 16)), ("lkey", 7))),),
        "list": ArrayArg("struct ibv_send_wr", (StructArg("struct ibv_send_wr", (("wr_id", 1),)),), True),
        "out": OutArg("struct ibv_qp_attr"),
        "key": Array(b"\x01\x02"),
        "table": Array((pd, 4)),
        "gid": b"\xfe\x80" + bytes(14),
        "read": {"cap": {"max_send_wr": 8}, "list": [1, None, "x"]},
        "family": socket.AF_INET,  # an IntEnum (a sockaddr's, for rdma_cm on iWARP) crosses as its number
    }
    crossed = decode(execnet_roundtrip(encode(value)), at="peer")
    assert isinstance(crossed, dict)
    assert crossed["pd"] == Handle("pd1", "pd", "struct ibv_pd *", 2**63 + 8, at="peer")
    assert {key: item for key, item in crossed.items() if key not in ("pd", "table")} == {
        key: item for key, item in value.items() if key not in ("pd", "table")
    }
    # An object the check holds comes back as that object: marking it destroyed marks the check's.
    again = decode(encode((pd,)), at="peer", known={"pd1": pd})
    assert isinstance(again, tuple) and again[0] is pd
    with pytest.raises(TypeError, match="cannot cross"):
        encode(object())


def execnet_roundtrip(wire: object) -> object:
    """What the other end receives of `wire`: execnet's own serializer, both ways."""
    from execnet.gateway_base import dumps_internal, loads_internal

    return loads_internal(dumps_internal(wire))


class Recording:
    """An end that records what it was asked (the routing is pure logic: no device is called)."""

    def __init__(self, at: str) -> None:
        self.at = at
        self.asked: list[str] = []

    def perform(self, verb: Verb, resolved: Mapping[str, Resolved], written: Written) -> Performed:
        self.asked.append(verb.name)
        return Performed(shown=list(resolved.items()), value=0, errno=0, route="provider:x", ok=True, problem="")

    def buffer(self, name: str, size: int, seed: int | None) -> Handle:
        self.asked.append(f"buffer {name}")
        return Handle(name, "buffer", "void *", 0x1000, size=size, at=self.at)

    def struct(self, handle: Handle) -> Readback:
        self.asked.append(f"struct {handle.name}")
        return {"qp_num": 5}

    def content(self, handle: Handle, offset: int, length: int) -> bytes:
        return bytes(length)

    def readable(self, handle: Handle, timeout: float) -> bool:
        return True

    def release(self) -> None:
        self.asked.append("release")


def test_a_call_is_made_where_its_objects_live() -> None:
    calls = Calls(VERBS.by_name, scope=None)  # type: ignore[arg-type]  # the values below need no scope
    peer = Recording("peer")
    calls.attach(peer)
    qp = Handle("qp1", "qp", "struct ibv_qp *", 0x2000, at="peer")
    made = calls.invoke("ibv_dealloc_pd", {"pd": Handle("pd1", "pd", "struct ibv_pd *", 0x3000, at="peer")})
    assert peer.asked == ["ibv_dealloc_pd"] and made.at == "peer"
    assert calls.buffer(64, at="peer").at == "peer" and peer.asked[-1] == "buffer buf0"
    assert calls.struct(qp) == {"qp_num": 5}
    channel = calls.invoke("rdma_create_event_channel", at="peer")  # a call given no object: where it is told
    assert peer.asked[-1] == "rdma_create_event_channel"
    assert isinstance(channel.result, Handle) and channel.result.at == "peer"  # what it made lives there too
    with pytest.raises(LookupError, match="objects of two processes"):
        calls.invoke("ibv_dealloc_mw", {"mw": Handle("mw0", "mw", "struct ibv_mw *", 0x10)}, sets={"mw.handle": qp})
    with pytest.raises(LookupError, match="no end 'elsewhere'"):
        calls.invoke("rdma_create_event_channel", at="elsewhere")


# Stand-ins for the peer's process at the other end of a real gateway: one never answers, one ends.
HANGS = "while True:\n    channel.receive()\n"
ENDS = "channel.receive()\n"


@pytest.fixture
def gateway() -> Iterator[execnet.Gateway]:
    opened = execnet.makegateway(SPEC)
    yield opened
    opened.exit()


def test_a_peer_that_hangs_costs_the_request_a_timeout_naming_the_peer_host(gateway: execnet.Gateway) -> None:
    end = RemoteEnd(SPEC, gateway, gateway.remote_exec(HANGS))
    started = time.monotonic()
    with pytest.raises(CheckTimeout, match=r"the peer host \(popen.*\) did not answer struct within 1 s"):
        end.request("struct", None, timeout=1.0)
    assert time.monotonic() - started < 5
    started = time.monotonic()
    with pytest.raises(EndLost, match="did not answer struct"):  # the next request does not wait again
        end.request("release")
    assert time.monotonic() - started < 0.5


def test_a_peer_that_died_costs_the_request_an_error_and_later_ones_fail_at_once(gateway: execnet.Gateway) -> None:
    end = RemoteEnd(SPEC, gateway, gateway.remote_exec(ENDS))
    with pytest.raises(EndLost, match=r"the peer host \(popen.*\) is gone"):
        end.request("struct", None, timeout=10.0)
    started = time.monotonic()
    with pytest.raises(EndLost, match="is gone"):
        end.request("release")
    assert time.monotonic() - started < 0.5


ENDS = {
    "dut": {"host": "server1", "device": "mlx5_0", "driver": "mlx5", "kernel": "6.1.0-56-amd64", "rdma_core": "44.0"},
    "peer": {"host": "server2", "device": "rxe1", "driver": "rxe", "kernel": "6.12.117", "rdma_core": "50.0"},
}


def test_a_two_device_checks_junit_properties_and_allure_parameters_name_both_ends() -> None:
    from pytest_rdma.report.allure_model import parameters
    from pytest_rdma.report.junit import case_properties

    record = {"outcome": "conforms", "device": "mlx5_0", "driver": "mlx5", "stable_id": "test_x[y]", "ends": ENDS}
    properties = dict(case_properties(record))  # type: ignore[arg-type]  # the fields a record of this check has
    assert properties["peer_host"] == "server2" and properties["peer_kernel"] == "6.12.117"
    assert properties["dut_host"] == "server1" and properties["peer_rdma_core"] == "50.0"
    shown = {p.name: p.value for p in parameters(record)}  # type: ignore[arg-type]
    assert shown["peer end"] == "rxe1 on server2 (rxe, kernel 6.12.117, rdma-core 50.0)"
    assert shown["dut end"] == "mlx5_0 on server1 (mlx5, kernel 6.1.0-56-amd64, rdma-core 44.0)"
