"""Fixtures: resources allocated from the device under test, and freed after use.

`rdma_dut` is session-scoped and parametrized by device (see plugin.pytest_generate_tests),
so a test that uses any of these runs once per --rdma-dev and its id names the device.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Callable

import pytest

from pytest_rdma.plugin import device_param, gid_index_of, port_of
from pytest_rdma.provider.device import DeviceUnderTest, Resources


@pytest.fixture(scope="session")
def rdma_dut(request: pytest.FixtureRequest) -> Iterator[DeviceUnderTest]:
    """The opened device under test, with what it advertises."""
    name = device_param(request)
    dut = DeviceUnderTest(name, port=port_of(request.config), gid_index=gid_index_of(request.config))
    yield dut
    dut.close()


@pytest.fixture
def rdma_resources(rdma_dut: DeviceUnderTest) -> Iterator[Resources]:
    """A per-test allocator; everything it made is freed when the test ends."""
    resources = rdma_dut.resources()
    yield resources
    resources.close()


@pytest.fixture
def rdma_pd(rdma_resources: Resources) -> Any:
    return rdma_resources.pd()


@pytest.fixture
def rdma_cq(rdma_resources: Resources) -> Any:
    return rdma_resources.cq()


@pytest.fixture
def rdma_qp_factory(rdma_resources: Resources) -> Callable[..., Any]:
    """Make QPs of a given type in RESET: `rdma_qp_factory(IBV_QPT_RC)`; unsupported types skip."""

    def make(qp_type: int, **kwargs: Any) -> Any:
        from pytest_rdma.outcomes import Unsupported

        try:
            rdma_resources.dut.require_qp_type(qp_type)
        except Unsupported as exc:
            pytest.skip(f"unsupported: {exc.capability}")
        return rdma_resources.qp(qp_type, **kwargs)

    return make
