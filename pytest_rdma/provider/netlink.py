"""A minimal reader of the kernel's RDMA netlink interface (NETLINK_RDMA, nldev).

Two facts the suite needs are only there: which kernel driver owns a device (software
devices such as rxe and siw have no parent device in sysfs to read it from), and the
resource counts (`rdma resource`) used to find leaks: per device, or per process. Reading them directly
avoids parsing the `rdma` tool's output and works without iproute2.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Collection, Iterator

NETLINK_RDMA = 20
RDMA_NL_NLDEV = 5
RDMA_NLDEV_CMD_GET = 1
RDMA_NLDEV_CMD_RES_GET = 9
RDMA_NLDEV_CMD_RES_QP_GET = 10
RDMA_NLDEV_CMD_RES_CM_ID_GET = 11
RDMA_NLDEV_CMD_RES_CQ_GET = 12
RDMA_NLDEV_CMD_RES_MR_GET = 13
RDMA_NLDEV_CMD_RES_PD_GET = 14
RDMA_NLDEV_CMD_GET_CHARDEV = 15
RDMA_NLDEV_CMD_RES_CTX_GET = 22
RDMA_NLDEV_CMD_RES_SRQ_GET = 23

ATTR_DEV_INDEX = 1
ATTR_DEV_NAME = 2
ATTR_FW_VERSION = 5
ATTR_RES_SUMMARY = 15
ATTR_RES_SUMMARY_ENTRY = 16
ATTR_RES_SUMMARY_ENTRY_NAME = 17
ATTR_RES_SUMMARY_ENTRY_CURR = 18
ATTR_RES_QP = 19
ATTR_RES_QP_ENTRY = 20
ATTR_RES_PID = 28
ATTR_RES_KERN_NAME = 29
ATTR_RES_CM_ID = 30
ATTR_RES_CM_ID_ENTRY = 31
ATTR_RES_CQ = 35
ATTR_RES_CQ_ENTRY = 36
ATTR_RES_MR = 40
ATTR_RES_MR_ENTRY = 41
ATTR_RES_PD = 46
ATTR_RES_PD_ENTRY = 47
ATTR_DEV_PROTOCOL = 67
ATTR_CHARDEV_TYPE = 69
ATTR_UVERBS_DRIVER_ID = 73
ATTR_RES_CTX = 86
ATTR_RES_CTX_ENTRY = 87
ATTR_RES_SRQ = 88
ATTR_RES_SRQ_ENTRY = 89

NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3
NLA_TYPE_MASK = 0x3FFF

# enum rdma_driver_id in <rdma/ib_user_ioctl_verbs.h>; the kernel ABI, stable by contract.
DRIVER_IDS = (
    "unknown",
    "mlx5",
    "mlx4",
    "cxgb3",
    "cxgb4",
    "mthca",
    "bnxt_re",
    "ocrdma",
    "nes",
    "irdma",
    "vmw_pvrdma",
    "qedr",
    "hns",
    "usnic",
    "rxe",
    "hfi1",
    "qib",
    "efa",
    "siw",
    "erdma",
    "mana",
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


def _open() -> socket.socket:
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    except (OSError, AttributeError) as exc:
        raise NetlinkUnavailable(f"RDMA netlink is not available: {exc}") from exc
    sock.bind((0, 0))
    return sock


def parse_replies(data: bytes) -> tuple[list[dict[int, bytes]], bool]:
    """One recv's worth of netlink messages: each reply's attributes, and whether the answer ended."""
    replies: list[dict[int, bytes]] = []
    offset = 0
    while offset + 16 <= len(data):
        length, kind, _flags, _seq, _pid = struct.unpack_from("IHHII", data, offset)
        if kind == NLMSG_DONE:
            return replies, True
        if kind == NLMSG_ERROR:
            (err,) = struct.unpack_from("i", data, offset + 16)
            if err:
                raise NetlinkUnavailable(f"RDMA netlink refused the request: {os.strerror(-err)}")
            return replies, True
        replies.append(dict(_attrs(data[offset + 16 : offset + length])))
        offset += (length + 3) & ~3
    return replies, False


def _exchange(
    sock: socket.socket, command: int, payload: bytes = b"", dump: bool = True, seq: int = 1
) -> list[dict[int, bytes]]:
    msg_type = (RDMA_NL_NLDEV << 10) | command
    flags = NLM_F_REQUEST | (NLM_F_DUMP if dump else 0)
    sock.send(struct.pack("IHHII", 16 + len(payload), msg_type, flags, seq, os.getpid()) + payload)
    replies: list[dict[int, bytes]] = []
    while True:
        more, done = parse_replies(sock.recv(1 << 16))
        replies += more
        if done or (not dump and replies):
            return replies


def _request(command: int, payload: bytes = b"", dump: bool = True) -> list[dict[int, bytes]]:
    """Send `command` (a dump, or one request with `payload` attributes); return each reply's attributes."""
    with _open() as sock:
        return _exchange(sock, command, payload, dump)


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


# Per-object dumps (`rdma resource show qp` etc.): summary name -> (command, table, entry).
# The kernel's summary counts per device; these list each object, and a user-space object
# carries the PID of the process that made it, so a process can count only its own.
OBJECT_DUMPS: dict[str, tuple[int, int, int]] = {
    "qp": (RDMA_NLDEV_CMD_RES_QP_GET, ATTR_RES_QP, ATTR_RES_QP_ENTRY),
    "cm_id": (RDMA_NLDEV_CMD_RES_CM_ID_GET, ATTR_RES_CM_ID, ATTR_RES_CM_ID_ENTRY),
    "cq": (RDMA_NLDEV_CMD_RES_CQ_GET, ATTR_RES_CQ, ATTR_RES_CQ_ENTRY),
    "mr": (RDMA_NLDEV_CMD_RES_MR_GET, ATTR_RES_MR, ATTR_RES_MR_ENTRY),
    "pd": (RDMA_NLDEV_CMD_RES_PD_GET, ATTR_RES_PD, ATTR_RES_PD_ENTRY),
    "ctx": (RDMA_NLDEV_CMD_RES_CTX_GET, ATTR_RES_CTX, ATTR_RES_CTX_ENTRY),
    "srq": (RDMA_NLDEV_CMD_RES_SRQ_GET, ATTR_RES_SRQ, ATTR_RES_SRQ_ENTRY),
}


def owned_by(replies: list[dict[int, bytes]], table: int, entry: int, pid: int) -> int:
    """How many objects in one device's dump replies belong to process `pid` (pure).

    A dump may span several messages, each with part of the table. Kernel objects carry a
    name (RDMA_NLDEV_ATTR_RES_KERN_NAME) instead of a PID and are never counted.
    """
    count = 0
    for attrs in replies:
        for kind, value in _attrs(attrs.get(table, b"")):
            if kind != entry:
                continue
            owner = dict(_attrs(value)).get(ATTR_RES_PID, b"")
            if len(owner) >= 4 and struct.unpack("I", owner[:4])[0] == pid:
                count += 1
    return count


def process_counts(pid: int | None = None, devices: Collection[str] | None = None) -> dict[str, dict[str, int]]:
    """Per device name: how many of each resource process `pid` (default: this one) holds.

    The same shape as resource_counts(), but blind to other processes: with several pytest
    workers on one device (xdist), or others on a shared machine, each sees only its own.
    The kernel dumps objects one device at a time (it wants the device index), so this costs
    one dump per device and kind. `devices` limits it to those names.
    """
    counter = ProcessCounter(pid)
    try:
        return counter(devices)
    finally:
        counter.close()


class ProcessCounter:
    """process_counts() for a caller that reads again and again: the leak guard reads after every check.

    It keeps one socket and the devices' indexes from its first listing, so a read is one dump per
    kind instead of a socket, a listing of every device and the dumps (under TCG the listing and the
    socket were a fifth of the guard's cost). A device named that the listing lacks, or a dump the
    kernel refuses (a device gone and made again has a new index), lists the devices again and
    reads once more; a kind the kernel still refuses right after a listing has no dump on this
    kernel (ctx and srq came late) and is not asked for again.
    """

    def __init__(self, pid: int | None = None) -> None:
        self._pid = pid  # None: whichever process reads (a forked child counts its own objects)
        self._sock: socket.socket | None = None
        self._owner = 0  # the process that opened the socket: a forked child opens its own
        self._indexes: dict[str, bytes] | None = None  # device name -> its ATTR_DEV_INDEX attribute
        self._no_dump: set[tuple[str, str]] = set()
        self._seq = 0

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock, self._indexes = None, None

    @property
    def pid(self) -> int:
        return os.getpid() if self._pid is None else self._pid

    def __call__(self, devices: Collection[str] | None = None) -> dict[str, dict[str, int]]:
        try:
            return self._read(devices)
        except _Stale:
            self.close()
            return self._read(devices)

    def _read(self, devices: Collection[str] | None) -> dict[str, dict[str, int]]:
        if self._sock is None or self._owner != os.getpid():
            self._sock, self._owner, self._indexes = _open(), os.getpid(), None
        fresh = self._indexes is None  # this read lists the devices: a refused dump is then the kernel's answer
        if self._indexes is None:
            self._indexes = self._listing()
        elif devices is not None and not set(devices) <= set(self._indexes):
            raise _Stale  # a device made since the listing (or none by that name: the new listing says)
        counts: dict[str, dict[str, int]] = {}
        for name, index in self._indexes.items():
            if devices is not None and name not in devices:
                continue
            per_device = counts.setdefault(name, {})
            for kind, (command, table, entry) in OBJECT_DUMPS.items():
                if (name, kind) in self._no_dump:
                    continue
                try:
                    replies = _exchange(self._sock, command, index, seq=self._next())
                except NetlinkUnavailable:
                    if not fresh:
                        raise _Stale from None
                    self._no_dump.add((name, kind))
                    continue
                per_device[kind] = owned_by(replies, table, entry, self.pid)
        return counts

    def _listing(self) -> dict[str, bytes]:
        assert self._sock is not None
        indexes: dict[str, bytes] = {}
        for attrs in _exchange(self._sock, RDMA_NLDEV_CMD_GET, seq=self._next()):
            if ATTR_DEV_NAME in attrs and len(attrs.get(ATTR_DEV_INDEX, b"")) >= 4:
                indexes[_text(attrs[ATTR_DEV_NAME])] = _attr(ATTR_DEV_INDEX, attrs[ATTR_DEV_INDEX][:4])
        return indexes

    def _next(self) -> int:
        self._seq += 1
        return self._seq


class _Stale(Exception):
    """The kept listing no longer fits the devices: list them again."""
