"""A minimal reader of the kernel's RDMA netlink interface (NETLINK_RDMA, nldev).

Two facts the suite needs are only there: which kernel driver owns a device (software
devices such as rxe and siw have no parent device in sysfs to read it from), and the
per-device resource counts (`rdma resource`) used to find leaks. Reading them directly
avoids parsing the `rdma` tool's output and works without iproute2.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterator

NETLINK_RDMA = 20
RDMA_NL_NLDEV = 5
RDMA_NLDEV_CMD_GET = 1
RDMA_NLDEV_CMD_RES_GET = 9
RDMA_NLDEV_CMD_GET_CHARDEV = 15

ATTR_DEV_INDEX = 1
ATTR_DEV_NAME = 2
ATTR_FW_VERSION = 5
ATTR_RES_SUMMARY = 15
ATTR_RES_SUMMARY_ENTRY = 16
ATTR_RES_SUMMARY_ENTRY_NAME = 17
ATTR_RES_SUMMARY_ENTRY_CURR = 18
ATTR_DEV_PROTOCOL = 67
ATTR_CHARDEV_TYPE = 69
ATTR_UVERBS_DRIVER_ID = 73

NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3
NLA_TYPE_MASK = 0x3FFF

# enum rdma_driver_id in <rdma/ib_user_ioctl_verbs.h>; the kernel ABI, stable by contract.
DRIVER_IDS = (
    "unknown", "mlx5", "mlx4", "cxgb3", "cxgb4", "mthca", "bnxt_re", "ocrdma", "nes",
    "irdma", "vmw_pvrdma", "qedr", "hns", "usnic", "rxe", "hfi1", "qib", "efa", "siw",
    "erdma", "mana",
)


class NetlinkUnavailable(OSError):
    """The kernel has no RDMA netlink (no ib_core loaded, or not Linux)."""


def _attrs(payload: bytes) -> Iterator[tuple[int, bytes]]:
    offset = 0
    while offset + 4 <= len(payload):
        length, kind = struct.unpack_from("HH", payload, offset)
        if length < 4:
            break
        yield kind & NLA_TYPE_MASK, payload[offset + 4 : offset + length]
        offset += (length + 3) & ~3


def _attr(kind: int, value: bytes) -> bytes:
    padded = value + b"\0" * (-len(value) % 4)
    return struct.pack("HH", 4 + len(value), kind) + padded


def _request(command: int, payload: bytes = b"", dump: bool = True) -> list[dict[int, bytes]]:
    """Send `command` (a dump, or one request with `payload` attributes); return each reply's attributes."""
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    except (OSError, AttributeError) as exc:
        raise NetlinkUnavailable(f"RDMA netlink is not available: {exc}") from exc
    with sock:
        sock.bind((0, 0))
        msg_type = (RDMA_NL_NLDEV << 10) | command
        flags = NLM_F_REQUEST | (NLM_F_DUMP if dump else 0)
        sock.send(struct.pack("IHHII", 16 + len(payload), msg_type, flags, 1, os.getpid()) + payload)
        replies: list[dict[int, bytes]] = []
        while True:
            data = sock.recv(1 << 16)
            offset = 0
            while offset + 16 <= len(data):
                length, kind, _flags, _seq, _pid = struct.unpack_from("IHHII", data, offset)
                if kind == NLMSG_DONE:
                    return replies
                if kind == NLMSG_ERROR:
                    (err,) = struct.unpack_from("i", data, offset + 16)
                    if err:
                        raise NetlinkUnavailable(f"RDMA netlink refused the request: {os.strerror(-err)}")
                    return replies
                replies.append(dict(_attrs(data[offset + 16 : offset + length])))
                offset += (length + 3) & ~3
            if not dump and replies:
                return replies


def _text(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode(errors="replace")


def device_facts() -> dict[str, dict[str, str]]:
    """Per device name: its kernel driver, transport protocol and firmware, as nldev says."""
    facts: dict[str, dict[str, str]] = {}
    for attrs in _request(RDMA_NLDEV_CMD_GET):
        if ATTR_DEV_NAME not in attrs:
            continue
        entry: dict[str, str] = {}
        driver = _uverbs_driver(attrs.get(ATTR_DEV_INDEX, b""))
        if driver:
            entry["driver"] = driver
        if ATTR_DEV_PROTOCOL in attrs:
            entry["protocol"] = _text(attrs[ATTR_DEV_PROTOCOL])
        if ATTR_FW_VERSION in attrs:
            entry["firmware"] = _text(attrs[ATTR_FW_VERSION])
        facts[_text(attrs[ATTR_DEV_NAME])] = entry
    return facts


def _uverbs_driver(dev_index: bytes) -> str:
    """The verbs driver id, which the kernel gives only with the device's uverbs char device."""
    if len(dev_index) < 4:
        return ""
    payload = _attr(ATTR_DEV_INDEX, dev_index[:4]) + _attr(ATTR_CHARDEV_TYPE, b"uverbs\0")
    try:
        replies = _request(RDMA_NLDEV_CMD_GET_CHARDEV, payload, dump=False)
    except NetlinkUnavailable:
        return ""
    for attrs in replies:
        if ATTR_UVERBS_DRIVER_ID in attrs:
            (driver_id,) = struct.unpack("I", attrs[ATTR_UVERBS_DRIVER_ID][:4])
            return DRIVER_IDS[driver_id] if driver_id < len(DRIVER_IDS) else f"driver-{driver_id}"
    return ""


def resource_counts() -> dict[str, dict[str, int]]:
    """Per device name: the kernel's current count of each resource (pd, cq, qp, mr, ctx...)."""
    counts: dict[str, dict[str, int]] = {}
    for attrs in _request(RDMA_NLDEV_CMD_RES_GET):
        if ATTR_DEV_NAME not in attrs or ATTR_RES_SUMMARY not in attrs:
            continue
        per_device: dict[str, int] = {}
        for kind, entry in _attrs(attrs[ATTR_RES_SUMMARY]):
            if kind != ATTR_RES_SUMMARY_ENTRY:
                continue
            fields = dict(_attrs(entry))
            name = _text(fields.get(ATTR_RES_SUMMARY_ENTRY_NAME, b""))
            current = fields.get(ATTR_RES_SUMMARY_ENTRY_CURR, b"")
            if name and len(current) >= 8:
                per_device[name] = struct.unpack("Q", current[:8])[0]
        counts[_text(attrs[ATTR_DEV_NAME])] = per_device
    return counts
