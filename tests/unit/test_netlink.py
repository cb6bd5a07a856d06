"""Parsing the kernel's per-object RDMA netlink dumps, from bytes laid out as the kernel sends them (pure)."""

from __future__ import annotations

import errno
import struct

import pytest

from pytest_rdma.provider import netlink as nl

OURS, OTHER = 4242, 977
ATTR_RES_LQPN = 21  # <rdma/rdma_netlink.h>; the reader does not need it


def u32(kind: int, value: int) -> bytes:
    return nl._attr(kind, struct.pack("I", value))


def text(kind: int, value: str) -> bytes:
    return nl._attr(kind, value.encode() + b"\0")


def message(payload: bytes, kind: int = (nl.RDMA_NL_NLDEV << 10) | nl.RDMA_NLDEV_CMD_RES_QP_GET) -> bytes:
    body = struct.pack("IHHII", 16 + len(payload), kind, 0x2, 1, 0) + payload  # NLM_F_MULTI, as a dump
    return body + b"\0" * (-len(body) % 4)


def qp_entry(lqpn: int, pid: int | None = None, kern_name: str = "") -> bytes:
    fields = u32(ATTR_RES_LQPN, lqpn)
    fields += u32(nl.ATTR_RES_PID, pid) if pid is not None else text(nl.ATTR_RES_KERN_NAME, kern_name)
    return nl._attr(nl.ATTR_RES_QP_ENTRY, fields)


def qp_dump_message(*entries: bytes) -> bytes:
    head = u32(nl.ATTR_DEV_INDEX, 1) + text(nl.ATTR_DEV_NAME, "rxe0")
    return message(head + nl._attr(nl.ATTR_RES_QP, b"".join(entries)))


DONE = struct.pack("IHHII", 20, nl.NLMSG_DONE, 0x2, 1, 0) + struct.pack("i", 0)


def test_counts_only_the_objects_of_the_given_process_across_messages() -> None:
    # A dump may come in several messages, each holding part of the table: all of them count.
    first = qp_dump_message(qp_entry(1, kern_name="rdma_rxe"), qp_entry(17, OURS), qp_entry(18, OTHER))
    second = qp_dump_message(qp_entry(19, OURS))
    replies, done = nl.parse_replies(first + second + DONE)
    assert done and len(replies) == 2
    assert nl.owned_by(replies, nl.ATTR_RES_QP, nl.ATTR_RES_QP_ENTRY, OURS) == 2
    assert nl.owned_by(replies, nl.ATTR_RES_QP, nl.ATTR_RES_QP_ENTRY, OTHER) == 1


def test_kernel_objects_have_no_owner_and_are_never_counted() -> None:
    replies, _ = nl.parse_replies(qp_dump_message(qp_entry(1, kern_name="rdma_rxe")))
    assert nl.owned_by(replies, nl.ATTR_RES_QP, nl.ATTR_RES_QP_ENTRY, 0) == 0


def test_other_tables_in_the_reply_are_not_read_as_this_kind() -> None:
    replies, _ = nl.parse_replies(qp_dump_message(qp_entry(17, OURS)))
    assert nl.owned_by(replies, nl.ATTR_RES_PD, nl.ATTR_RES_PD_ENTRY, OURS) == 0


def test_a_dump_without_done_is_not_finished() -> None:
    replies, done = nl.parse_replies(qp_dump_message(qp_entry(17, OURS)))
    assert not done and len(replies) == 1


def test_an_error_answer_raises_with_its_reason() -> None:
    error = struct.pack("IHHII", 36, nl.NLMSG_ERROR, 0, 1, 0) + struct.pack("i", -errno.EINVAL) + b"\0" * 16
    with pytest.raises(nl.NetlinkUnavailable, match="Invalid argument"):
        nl.parse_replies(error)


def test_every_summary_kind_the_leak_guard_reports_has_a_per_object_dump() -> None:
    # The names match the summary's (pd, cq, qp, mr, ctx, cm_id, srq), so reports read the same.
    assert set(nl.OBJECT_DUMPS) == {"pd", "cq", "qp", "mr", "ctx", "cm_id", "srq"}


class FakeSocket:
    def close(self) -> None:
        pass


class FakeKernel:
    """nldev as ProcessCounter sees it: a device listing and one dump per kind, answered by index."""

    def __init__(self) -> None:
        self.devices = {"rxe0": 1, "siw0": 2}
        self.held = {("rxe0", "qp"): 2}  # objects of this process
        self.no_dump = {"srq"}  # kinds this kernel has no dump for
        self.asked: list[str] = []
        self.sockets = 0

    def open(self) -> FakeSocket:
        self.sockets += 1
        return FakeSocket()

    def exchange(self, sock: object, command: int, payload: bytes = b"", dump: bool = True, seq: int = 1):
        if command == nl.RDMA_NLDEV_CMD_GET:
            self.asked.append("listing")
            return [
                {nl.ATTR_DEV_NAME: name.encode() + b"\0", nl.ATTR_DEV_INDEX: u32(0, index)[4:]}
                for name, index in self.devices.items()
            ]
        index = struct.unpack_from("I", payload, 4)[0]
        kind = next(k for k, (cmd, _, _) in nl.OBJECT_DUMPS.items() if cmd == command)
        name = next((n for n, i in self.devices.items() if i == index), None)
        self.asked.append(kind)
        if name is None or kind in self.no_dump:
            raise nl.NetlinkUnavailable("RDMA netlink refused the request: No such device")
        _, table, entry = nl.OBJECT_DUMPS[kind]
        entries = b"".join(nl._attr(entry, u32(nl.ATTR_RES_PID, OURS)) for _ in range(self.held.get((name, kind), 0)))
        return [{table: entries}]


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> FakeKernel:
    fake = FakeKernel()
    monkeypatch.setattr(nl, "_open", fake.open)
    monkeypatch.setattr(nl, "_exchange", fake.exchange)
    return fake


def test_a_kept_counter_lists_the_devices_once_and_then_only_dumps(kernel: FakeKernel) -> None:
    counter = nl.ProcessCounter(OURS)
    assert counter(("rxe0",))["rxe0"]["qp"] == 2
    assert kernel.asked[0] == "listing" and "srq" in kernel.asked
    kernel.asked.clear()
    kernel.held[("rxe0", "qp")] = 3
    assert counter(("rxe0",))["rxe0"]["qp"] == 3
    # No listing, no second socket, and no more asking for the kind this kernel cannot dump.
    assert kernel.asked == [k for k in nl.OBJECT_DUMPS if k != "srq"] and kernel.sockets == 1
    assert "srq" not in counter(("rxe0",))["rxe0"]


def test_a_device_made_again_is_found_by_its_new_index(kernel: FakeKernel) -> None:
    counter = nl.ProcessCounter(OURS)
    counter(("rxe0",))
    kernel.devices["rxe0"] = 7  # removed and created again: a new index
    kernel.asked.clear()
    assert counter(("rxe0",))["rxe0"]["qp"] == 2
    assert kernel.asked.count("listing") == 1 and kernel.sockets == 2


def test_a_device_the_kept_listing_lacks_is_looked_up_again(kernel: FakeKernel) -> None:
    counter = nl.ProcessCounter(OURS)
    counter(("rxe0",))
    kernel.devices["rxe1"] = 3
    kernel.held[("rxe1", "pd")] = 1
    assert counter(("rxe1",)) == {"rxe1": {**{k: 0 for k in nl.OBJECT_DUMPS if k != "srq"}, "pd": 1}}
    assert counter(("nosuch",)) == {}  # a device no listing has: nothing, as process_counts() says
