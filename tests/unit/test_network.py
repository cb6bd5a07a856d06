"""The device's network side read from `rdma link` (host only: the tool's JSON given as data)."""

from __future__ import annotations

from typing import cast

from pytest_rdma.provider.network import _Entry, others_on_netdev

# `rdma -j link show` on the two-VM lab before each device had a VLAN of its own: both on the wire NIC.
ONE_NIC = cast(
    "list[_Entry]",
    [
        {"ifindex": 1, "ifname": "rxe0", "port": 1, "state": "ACTIVE", "netdev": "ens4", "netdev_index": 3},
        {"ifindex": 2, "ifname": "siw0", "port": 1, "state": "ACTIVE", "netdev": "ens4", "netdev_index": 3},
    ],
)


def test_a_device_sharing_its_interface_is_named() -> None:
    """rdma_cm took siw0's address for rxe0, the first device on the NIC: the reason must say so."""
    assert others_on_netdev("siw0", ONE_NIC) == ("ens4", ["rxe0"])
    assert others_on_netdev("rxe0", ONE_NIC) == ("ens4", ["siw0"])


def test_a_device_alone_on_its_interface_shares_nothing() -> None:
    apart = [{**ONE_NIC[0], "netdev": "rxe0-wire"}, {**ONE_NIC[1], "netdev": "siw0-wire"}]
    assert others_on_netdev("siw0", cast("list[_Entry]", apart)) == ("siw0-wire", [])
    assert others_on_netdev("mlx5_0", ONE_NIC) == ("", [])  # not a device here: no interface, nothing shared
