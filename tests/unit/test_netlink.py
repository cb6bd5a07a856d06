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
