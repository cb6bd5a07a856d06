"""The device's network side: the IPv4 address rdma_cm connects, and librdmacm's own context.

iWARP QPs are connected only through rdma_cm, which names endpoints by IP address: the address
of the network interface under the device's port. librdmacm opens a verbs context of its own
for a device the first time an id binds to that device's address, and keeps it until the
process ends; `warm_rdmacm` makes that happen once, when the device is opened, so the context
belongs to the session and is not counted against the first check that connects.
"""

from __future__ import annotations

import json
import socket
import subprocess
from typing import TypedDict, Union

from pytest_rdma.calls.invoke import Calls


class _AddrInfo(TypedDict, total=False):
    local: str  # the address


class _Entry(TypedDict, total=False):
    """One entry of `rdma -j link show` (a port) or of `ip -j addr show` (an interface): the keys read here."""

    ifname: str  # the RDMA device (rdma link) or the interface (ip addr)
    netdev: str  # the port's network interface
    addr_info: list[_AddrInfo]  # the interface's addresses


def ipv4_of(device: str, port: int) -> str:
    """The first IPv4 address of the network interface under an RDMA device's port ("" if none)."""
    netdev = _json(["rdma", "-j", "link", "show", f"{device}/{port}"])
    name = netdev[0].get("netdev", "") if netdev else ""
    if not name:
        return ""
    shown = _json(["ip", "-j", "-4", "addr", "show", "dev", name])
    found = [info["local"] for entry in shown for info in entry.get("addr_info", [])]
    return found[0] if found else ""


def others_on_netdev(device: str, links: list[_Entry] | None = None) -> tuple[str, list[str]]:
    """The network interface under `device` and the other RDMA devices on it (`rdma link`'s ports).

    rdma_cm binds an address to the first RDMA device on the address's interface, whichever the caller
    meant: a second device on the interface (rxe beside an iWARP device, say) takes the other's connections."""
    found = _json(["rdma", "-j", "link", "show"]) if links is None else links
    netdevs = {entry.get("netdev", "") for entry in found if entry.get("ifname") == device} - {""}
    netdev = min(netdevs) if netdevs else ""
    others = {entry.get("ifname", "") for entry in found if netdev and entry.get("netdev") == netdev} - {device, ""}
    return netdev, sorted(others)


def _json(argv: list[str]) -> list[_Entry]:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False).stdout
        return json.loads(out or "[]")
    except (OSError, ValueError, subprocess.SubprocessError):
        return []


def sockaddr(address: str, port: int) -> dict[str, Union[int, str]]:
    """A struct sockaddr_in as a catalogue value, passed where rdma_cm takes a struct sockaddr *."""
    return {
        "$struct": "sockaddr_in",
        "sin_family": socket.AF_INET,
        "sin_port": socket.htons(port),
        "sin_addr.s_addr": int.from_bytes(socket.inet_aton(address), "little"),
    }


def warm_rdmacm(calls: Calls, address: str) -> None:
    """Bind a throwaway rdma_cm id to `address` (librdmacm opens its context of the device), then free it."""
    channel = calls.invoke("rdma_create_event_channel", phase="setup")
    if not channel.ok:
        return  # rdma_ucm not loaded: a check that needs rdma_cm says so itself
    made = calls.invoke("rdma_create_id", {"channel": channel.result}, phase="setup")
    if made.ok:
        cm_id = calls.out_handle(made, "id", "cm_id", "struct rdma_cm_id *")
        calls.invoke("rdma_bind_addr", {"id": cm_id, "addr": sockaddr(address, 0)}, phase="setup")
        calls.invoke("rdma_destroy_id", {"id": cm_id}, phase="setup")
    calls.invoke("rdma_destroy_event_channel", {"channel": channel.result}, phase="setup")
