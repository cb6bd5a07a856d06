"""The device under test: an open verbs context, and what the device advertises.

One `DeviceUnderTest` per device per session (per xdist worker). It reads the device's facts
once, through the call layer: ibv_query_device, ibv_query_device_ex, ibv_query_port and the
chosen GID. Checks read their device-derived values from these facts (Dev("port.active_mtu")),
and "unsupported" is decided here from them alone: a claim needs a capability, the verdict
names the attribute and the value the device reports (`missing`). Nothing is probed by
creating objects: a device that advertises something and then fails to create it deviates.
"""

from __future__ import annotations

import ctypes
import socket
from typing import Protocol, TypedDict, cast

from pytest_rdma.calls.ends import LOCAL, End
from pytest_rdma.calls.invoke import Calls
from pytest_rdma.calls.marshal import read_object
from pytest_rdma.calls.record import Call, Handle, Readback, Struct
from pytest_rdma.calls.values import flag_expr, read_path
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Cap, Need
from pytest_rdma.ibv import abi
from pytest_rdma.ibv.enums import ENUMS
from pytest_rdma.provider.identity import DeviceIdentity, identify
from pytest_rdma.provider.network import ipv4_of, warm_rdmacm
from pytest_rdma.provider.process import process_facts

PORT_STATES = {0: "NOP", 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
IBV_PORT_ACTIVE = 4
LINK_LAYER_ETHERNET = 2
TRANSPORT_NAMES = {value: name for name, value in ENUMS["ibv_transport_type"].items()}


class Facts(TypedDict, total=False):
    """What a Dev path reads, by its root (read once, when the device is opened)."""

    name: str
    port_num: int
    gid_index: int
    process: dict[str, int]  # provider/process.py
    context: dict[str, int]  # what the opened struct ibv_context reports
    attr: Struct
    attr_ex: Struct  # {} where ibv_query_device_ex fails
    port: Struct
    gid: bytes  # the chosen GID, raw
    transport: str  # ib, roce, iwarp, ...


class DeviceNotUsable(RuntimeError):
    """The device cannot be opened, or its port or GID cannot carry traffic; the message says what to do."""


def _names(calls: Calls, listed: Call, count: int) -> dict[str, int]:
    """Device name -> struct ibv_device * of the list ibv_get_device_list returned."""
    array = (ctypes.c_void_p * count).from_address(cast(int, listed.value))  # the list: not NULL (listed.ok)
    found = {}
    for entry in array:
        address = cast(int, entry)  # one of the `count` entries before the list's NULL
        name = calls.invoke("ibv_get_device_name", {"device": Handle("dev", "device", "struct ibv_device *", address)})
        found[cast(bytes, name.value or b"").decode()] = address  # a const char *
    return found


def transport_of(transport_type: int, link_layer: int) -> str:
    """ib, roce, iwarp, or the header's name of another transport (usnic, unspecified)."""
    name = TRANSPORT_NAMES.get(transport_type, "IBV_TRANSPORT_UNKNOWN")
    if name == "IBV_TRANSPORT_IB":
        return "roce" if link_layer == LINK_LAYER_ETHERNET else "ib"
    if name == "IBV_TRANSPORT_IWARP":
        return "iwarp"
    return name.removeprefix("IBV_TRANSPORT_").lower()


class Device(Protocol):
    """What a check reads of a device it makes objects on: the device under test, or a two-device
    check's peer, opened in this process (DeviceUnderTest) or on another host (pytest_rdma.peer.remote)."""

    name: str
    port_num: int
    memo: dict[str, object]
    host: str  # the host it is on, as that host names itself
    identity: DeviceIdentity

    @property
    def end(self) -> End:
        """The process that holds the device's objects."""
        ...

    def fact(self, path: str) -> Readback: ...

    @property
    def transport(self) -> str: ...

    @property
    def driver(self) -> str: ...

    def missing(self, cap: Cap) -> str: ...

    def resource(self, need: Need) -> Handle: ...


class SessionDevice:
    """What every opened device answers from its facts and its session's objects, wherever it was opened
    (DeviceUnderTest in this process, peer.remote.RemotePeer on another host)."""

    facts: Facts
    identity: DeviceIdentity
    context: Handle
    device: Handle

    def fact(self, path: str) -> Readback:
        """A device fact by path: "attr.max_qp_wr", "port.flags&IBV_QPF_GRH_REQUIRED", "gid"."""
        return read_fact(self.facts, path)

    @property
    def transport(self) -> str:
        return str(self.facts["transport"])

    @property
    def driver(self) -> str:
        return self.identity.driver

    def missing(self, cap: Cap) -> str:
        """ "" when the device advertises `cap`, else the attribute and the value that say it does not."""
        return missing_in(self, cap)

    def resource(self, need: Need) -> Handle:
        """The session's context or device; a check's other resources are its own."""
        if need.kind == "context":
            return self.context
        if need.kind == "device":
            return self.device
        raise LookupError(f"the session has no {need.kind}: a check's resources make it")


class DeviceUnderTest(SessionDevice):
    """An opened device, its facts, and the capability test every "unsupported" goes through."""

    end: End = LOCAL  # opened in this process

    def __init__(
        self,
        name: str,
        catalogue: Catalogue,
        port: int = 1,
        gid_index: int = 0,
        *,
        usable: bool = True,
        role: str = "",
    ) -> None:
        """Open `name`; with `usable` (checks need it) the port must be ACTIVE and the GID populated.

        `role` prefixes the names of the session's objects ("peer" -> peer_ctx, peer_device), so that a
        check's record tells the peer's context from the device under test's, as its reproducers must.
        """
        self.name = name
        self.role = role
        self.host = socket.gethostname()
        prefix = f"{role}_" if role else ""
        self.port_num = port
        self.gid_index = gid_index
        self.catalogue = catalogue
        self.memo: dict[str, object] = {}  # what checks learned about this device once (e.g. read-back trust)
        self.calls = Calls(catalogue.by_name, self)  # the session's own calls (opening, facts, closing)
        listed = self.calls.invoke("ibv_get_device_list", phase="setup")
        if not listed.ok:
            raise DeviceNotUsable(f"ibv_get_device_list failed: errno {listed.errno_name}")
        self._list: Call | None = listed  # None once freed
        devices = _names(self.calls, listed, int(cast(int, listed.outs.get("num_devices") or 0)))  # an int *
        if name not in devices:
            self.close()
            raise DeviceNotUsable(f"libibverbs lists no device {name!r} (it lists: {', '.join(devices) or 'none'})")
        self.device = Handle(f"{prefix}device", "device", "struct ibv_device *", devices[name])
        opened = self.calls.invoke("ibv_open_device", {"device": self.device}, phase="setup")
        if not opened.ok:
            self.close()
            raise DeviceNotUsable(f"ibv_open_device({name}) failed: errno {opened.errno_name}")
        self.context = Handle(
            f"{prefix}ctx", "context", "struct ibv_context *", cast(Handle, opened.result).address
        )  # ok
        self.facts: Facts = {"name": name, "port_num": port, "gid_index": gid_index}
        self.facts["process"] = process_facts()
        opened_ctx = abi.ibv_context.from_address(self.context.address)
        self.facts["context"] = {"num_comp_vectors": int(opened_ctx.num_comp_vectors)}
        self.facts["attr"] = self._query("ibv_query_device", "device_attr")
        self.facts["attr_ex"] = self._query("ibv_query_device_ex", "attr", optional=True)
        self.facts["port"] = self._port(usable)
        self.facts["gid"] = self._gid() if usable else b""
        dev = abi.ibv_device.from_address(self.device.address)
        self.facts["transport"] = transport_of(
            int(dev.transport_type), int(cast(int, self.facts["port"]["link_layer"]))
        )
        if usable and self.transport == "iwarp":
            address = ipv4_of(name, port)
            self.memo["ipv4"] = address
            if address:
                warm_rdmacm(self.calls, address)
        attr = self.facts["attr"]
        self.identity: DeviceIdentity = identify(
            name, int(cast(int, attr["vendor_id"])), int(cast(int, attr["vendor_part_id"])), _text(attr["fw_ver"])
        )

    # -- facts -----------------------------------------------------------------------
    def _query(self, verb: str, out: str, optional: bool = False) -> dict[str, Readback]:
        call = self.calls.invoke(verb, {"context": self.context}, phase="setup")
        if not call.ok:
            if optional:
                return {}
            self.close()
            raise DeviceNotUsable(f"{verb} on {self.name} failed: errno {call.errno_name}")
        return dict(cast(Struct, call.outs[out]))  # an out struct reads back as a mapping of its fields

    def _port(self, usable: bool) -> dict[str, Readback]:
        call = self.calls.invoke("ibv_query_port", {"context": self.context, "port_num": self.port_num}, phase="setup")
        count = cast(int, self.facts["attr"]["phys_port_cnt"])
        if not call.ok:
            self.close()
            raise DeviceNotUsable(
                f"{self.name} has no port {self.port_num} (ibv_query_port: errno {call.errno_name}): it has "
                f"{count} port(s); choose one with --rdma-port N"
            )
        port = dict(cast(Struct, call.outs["port_attr"]))  # an out struct reads back as a mapping
        if usable and port["state"] != IBV_PORT_ACTIVE:
            self.close()
            state = PORT_STATES.get(cast(int, port["state"]), str(port["state"]))  # an enum ibv_port_state
            raise DeviceNotUsable(
                f"{self.name} port {self.port_num} is not active (state {state}): bring its link up (e.g. 'ip link "
                "set NETDEV up' for rxe/siw), or choose another port with --rdma-port N"
            )
        return port

    def _gid(self) -> bytes:
        hint = (
            f"choose a populated index with --rdma-gid-index N "
            f"(see /sys/class/infiniband/{self.name}/ports/{self.port_num}/gids/)"
        )
        call = self.calls.invoke(
            "ibv_query_gid",
            {"context": self.context, "port_num": self.port_num, "index": self.gid_index},
            phase="setup",
        )
        raw = cast(bytes, call.outs.get("gid", b"")) if call.ok else b""  # a union ibv_gid reads as its 16 bytes
        if not call.ok or not any(raw):
            self.close()
            why = f"errno {call.errno_name}" if not call.ok else "the entry is empty"
            raise DeviceNotUsable(
                f"{self.name} port {self.port_num} has no usable GID at index {self.gid_index} ({why}): {hint}"
            )
        return bytes(raw)

    def buffer(self, size: int, seed: int | None = None) -> Handle:
        return self.calls.buffer(size, seed)

    def step(self, name: str) -> Call:
        raise LookupError(f"no step {name!r} at session level")

    def struct(self, handle: Handle) -> Readback:
        return read_object(handle)

    def close(self) -> None:
        context = getattr(self, "context", None)
        if context is not None and context.alive:
            self.calls.invoke("ibv_close_device", {"context": context}, phase="teardown")
            context.alive = False
        listed: Call | None = getattr(self, "_list", None)  # unset when __init__ failed before the list
        if listed is not None and listed.ok:
            self.calls.invoke("ibv_free_device_list", {"list": listed.result}, phase="teardown")
            self._list = None


def end_facts(device: Device) -> dict[str, str]:
    """One end of a two-device check, as its record names it: host, device, driver, kernel, rdma-core."""
    identity = device.identity
    return {
        "host": device.host,
        "device": device.name,
        "driver": identity.driver,
        "kernel": identity.kernel,
        "rdma_core": identity.rdma_core,
    }


def read_fact(facts: Facts, path: str) -> Readback:
    """A device fact by path: "attr.max_qp_wr", "port.flags&IBV_QPF_GRH_REQUIRED", "gid"."""
    path, _, flag = path.partition("&")
    # Every fact is read-back data or a name or a number of ours: a Readback, whichever root `path` names.
    found = cast("dict[str, Readback]", facts)
    value = found[path] if path in found else cast(Readback, read_path(found, path))
    # flag: one name, or names joined by "|"; the field it masks is a number.
    return int(cast(int, value)) & flag_expr(flag).value if flag else value


def missing_in(device: SessionDevice, cap: Cap) -> str:
    """ "" when `device` advertises `cap`, else the attribute and the value that say it does not."""
    if cap.test == "transport":
        return "" if device.transport in cap.values else f"transport = {device.transport}"
    try:
        value = device.fact(cap.attr)
    except (KeyError, LookupError, AttributeError):
        return f"{cap.attr} is not reported by this device (ibv_query_device_ex did not fill it)"
    has = bool(value)
    if cap.test == "nonzero" and not has:
        return f"{cap.attr} = 0"
    if cap.test == "zero" and has:
        return f"{cap.attr} = {value:#x}" if isinstance(value, int) else f"{cap.attr} = {value!s}"
    return ""


def _text(value: Readback) -> str:
    raw = value if isinstance(value, (bytes, bytearray)) else str(value).encode()
    return bytes(raw).split(b"\0", 1)[0].decode(errors="replace")
