"""A device's identity without the rest of a test session (for the report header and the CLI)."""

from __future__ import annotations

from functools import cache

from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.provider.device import DeviceUnderTest
from pytest_rdma.provider.identity import DeviceIdentity


@cache
def describe(name: str) -> DeviceIdentity:
    from pytest_rdma.verbs import CATALOGUE

    dut = DeviceUnderTest(name, Catalogue.of(CATALOGUE), usable=False)
    try:
        return dut.identity
    finally:
        dut.close()
