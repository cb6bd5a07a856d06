"""A two-device check's peer is the device under test itself only when it has its name and its GID: the same
name on another host (--rdma-peer-host, `pytest-rdma lab --hosts 2`) is another device on another wire NIC."""

from __future__ import annotations

from typing import Any, cast

from pytest_rdma.kinds.traffic import is_itself
from pytest_rdma.provider.device import Device

GID_HOST_1 = bytes.fromhex("fe800000000000005054ff00000201")
GID_HOST_2 = bytes.fromhex("fe800000000000005054ff00000202")


class Opened:
    def __init__(self, name: str, gid: bytes) -> None:
        self.name, self.gid = name, gid

    def fact(self, path: str) -> Any:
        return {"gid": self.gid}[path]


def device(name: str, gid: bytes) -> Device:
    return cast(Device, Opened(name, gid))


def test_the_same_name_and_gid_is_the_device_itself() -> None:
    assert is_itself(device("rxe0", GID_HOST_1), device("rxe0", GID_HOST_1))


def test_the_same_name_on_another_host_is_another_device() -> None:
    assert not is_itself(device("rxe0", GID_HOST_2), device("rxe0", GID_HOST_1))


def test_another_name_is_another_device() -> None:
    assert not is_itself(device("rxe0p", GID_HOST_1), device("rxe0", GID_HOST_1))
