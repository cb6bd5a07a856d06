"""Fixtures: the device under test, opened once per session and device.

`rdma_dut` is session-scoped and parametrized by device (plugin.pytest_generate_tests), so a
check that uses it runs once per --rdma-dev and its id names the device. A check's own
resources are made by the check itself, the one way the catalogue gives (kinds/check.py).

`rdma_peer` is the second device of --rdma-peer, opened once per session by the first check
that sends to it (running.run_case asks for it only then), None when no peer was given; with
--rdma-peer-host it is opened on that host, by a process the execnet gateway starts there.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_rdma import generate, settings
from pytest_rdma.peer.remote import PeerHostError, RemotePeer
from pytest_rdma.provider.device import Device, DeviceUnderTest
from pytest_rdma.selection import no_device_error

# What the peer host's process left on its device at the end of the run (empty: it freed everything).
PEER_LEFT = pytest.StashKey[dict[str, dict[str, int]]]()


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
def rdma_peer(request: pytest.FixtureRequest) -> Iterator[Device | None]:
    """The opened peer device (--rdma-peer), or None: a two-device check is then not exercised."""
    options = settings.get(request.config)
    if not options.peer:
        yield None
        return
    if not options.peer_host:
        peer = DeviceUnderTest(
            options.peer, generate.active(), port=options.port, gid_index=options.gid_index, role="peer"
        )
        yield peer
        peer.close()
        return
    try:
        remote = RemotePeer.open(options.peer_host, options.peer, port=options.port, gid_index=options.gid_index)
    except PeerHostError as exc:
        pytest.fail(str(exc), pytrace=False)
    yield remote
    remote.close()
    request.config.stash[PEER_LEFT] = remote.left


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Objects the peer host's process left on its device fail the run, as a leak here does."""
    if session.config.stash.get(PEER_LEFT, {}) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    left = config.stash.get(PEER_LEFT, None)
    if left is None:
        return
    options = settings.get(config)
    if not left:
        terminalreporter.write_line(f"rdma: peer {options.peer} on {options.peer_host}: every object freed")
        return
    shown = "; ".join(
        f"{device}: " + ", ".join(f"{k} {n:+d}" for k, n in kinds.items()) for device, kinds in left.items()
    )
    terminalreporter.write_line(
        f"rdma: peer {options.peer} on {options.peer_host}: its process left objects after the run ({shown})", red=True
    )
