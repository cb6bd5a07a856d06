"""A device's identity without the rest of a test session (for the report header and the CLI)."""

from __future__ import annotations

from functools import cache

from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.provider.device import DeviceUnderTest
from pytest_rdma.provider.identity import DeviceIdentity

# Identities already read by a device opened for another reason (the start's port check), by device name.
_known: dict[str, DeviceIdentity] = {}


def remember(identity: DeviceIdentity) -> None:
    """Keep an identity read from an opened device, so that describe need not open the device again."""
    _known[identity.name] = identity


def known(name: str) -> DeviceIdentity | None:
    """The identity of a device this process has opened already (the start's port check), without opening it."""
    return _known.get(name)


@cache
def describe(name: str) -> DeviceIdentity:
    if name in _known:
        return _known[name]
    from pytest_rdma.verbs import CATALOGUE

    dut = DeviceUnderTest(name, Catalogue.of(CATALOGUE), usable=False)
    try:
        return dut.identity
    finally:
        dut.close()
