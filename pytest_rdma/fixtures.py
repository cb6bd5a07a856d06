"""Fixtures: the device under test, opened once per session and device.

`rdma_dut` is session-scoped and parametrized by device (plugin.pytest_generate_tests), so a
check that uses it runs once per --rdma-dev and its id names the device. A check's own
resources are made by the check itself, the one way the catalogue gives (kinds/check.py).

`rdma_peer` is the second device of --rdma-peer, opened once per session by the first check
that sends to it (running.run_case asks for it only then), None when no peer was given.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_rdma import generate, settings
from pytest_rdma.provider.device import DeviceUnderTest
from pytest_rdma.selection import no_device_error


@pytest.fixture(scope="session")
def rdma_dut(request: pytest.FixtureRequest) -> Iterator[DeviceUnderTest]:
    """The opened device under test, with what it advertises."""
    name = getattr(request, "param", None)
    if name is None:
        # Reached only by a test of the user's own that asks for a device when none was named, on an xdist
        # worker (elsewhere the plugin stops the run first): one line, not the fixture's traceback.
        pytest.fail(f"this test uses the fixture rdma_dut, but {no_device_error()}", pytrace=False)
    options = settings.get(request.config)
    dut = DeviceUnderTest(name, generate.active(), port=options.port, gid_index=options.gid_index)
    yield dut
    dut.close()


@pytest.fixture(scope="session")
def rdma_peer(request: pytest.FixtureRequest) -> Iterator[DeviceUnderTest | None]:
    """The opened peer device (--rdma-peer), or None: a two-device check is then not exercised."""
    options = settings.get(request.config)
    if not options.peer:
        yield None
        return
    peer = DeviceUnderTest(options.peer, generate.active(), port=options.port, gid_index=options.gid_index, role="peer")
    yield peer
    peer.close()
