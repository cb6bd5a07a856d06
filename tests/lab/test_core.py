"""The plugin core against real providers: run in the lab with rxe0 and siw0 present.

`pytest-rdma selftest` runs this directory inside the lab VM. Each test starts an inner
pytest session (pytester) with the plugin, as a user would.
"""

from __future__ import annotations

import subprocess

import pytest

from pytest_rdma.provider import netlink
from pytest_rdma.provider.identity import identify, sysfs_devices

LAB_DEVICES = {"rxe0": ("rxe", "CA", "roce"), "siw0": ("siw", "RNIC", "iw")}


@pytest.fixture(autouse=True, scope="module")
def _lab_devices_present() -> None:
    missing = set(LAB_DEVICES) - set(sysfs_devices())
    if missing:
        pytest.fail(f"these tests run in the lab (pytest-rdma selftest); missing devices: {sorted(missing)}")


def test_discovery_lists_lab_devices() -> None:
    assert set(LAB_DEVICES) <= set(sysfs_devices())


@pytest.mark.parametrize("name", sorted(LAB_DEVICES))
def test_driver_comes_from_the_kernel_not_the_name(name: str) -> None:
    driver, node_type, transport = LAB_DEVICES[name]
    renamed = f"dut{name[:3]}"
    subprocess.run(["rdma", "dev", "set", name, "name", renamed], check=True)
    try:
        identity = identify(renamed, 0, 0)
    finally:
        subprocess.run(["rdma", "dev", "set", renamed, "name", name], check=True)
    assert (identity.driver, identity.node_type, identity.transport) == (driver, node_type, transport)


def test_header_names_each_device_with_its_driver(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("--rdma-dev", "rxe0", "--rdma-dev", "siw0")
    result.assert_outcomes(passed=1)
    release = subprocess.run(["uname", "-r"], capture_output=True, text=True, check=True).stdout.strip()
    # The kernel's Debian package version follows its release (issue 27): "kernel=6.1.0-56-amd64 (6.1.192-2)".
    package = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", f"linux-image-{release}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    for name, (driver, node_type, transport) in LAB_DEVICES.items():
        result.stdout.fnmatch_lines(
            [
                f"rdma: {name}: driver={driver} node={node_type} transport={transport} fw=* vendor=0x*:* "
                f"kernel={release} ({package}) rdma-core=[0-9]*.[0-9]*"
            ]
        )


# A user's own test: the device under test, opened once per device, and its call layer.
FIXTURE_TEST = """
def test_pd_and_cq(rdma_dut):
    pd = rdma_dut.calls.invoke("ibv_alloc_pd", {"context": rdma_dut.context})
    cq = rdma_dut.calls.invoke("ibv_create_cq", {"context": rdma_dut.context, "cqe": 16})
    assert pd.ok and cq.ok
    assert rdma_dut.struct(cq.result)["cqe"] >= 16
    assert rdma_dut.calls.invoke("ibv_destroy_cq", {"cq": cq.result}).result == 0
    assert rdma_dut.calls.invoke("ibv_dealloc_pd", {"pd": pd.result}).result == 0

def test_names_its_driver(rdma_dut):
    assert rdma_dut.driver in ("rxe", "siw")
"""


def test_the_device_fixture_runs_per_device_and_leaves_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(FIXTURE_TEST)
    before = netlink.resource_counts()
    result = pytester.runpytest("--rdma-dev", "rxe0", "--rdma-dev", "siw0", "-v")
    after = netlink.resource_counts()
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*test_pd_and_cq?rxe0? PASSED*", "*test_pd_and_cq?siw0? PASSED*"])
    assert {dev: before[dev] for dev in LAB_DEVICES} == {dev: after[dev] for dev in LAB_DEVICES}


def test_unknown_device_is_one_usage_error_listing_devices(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("--rdma-dev", "mlx5_9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # The lab makes each device's peer too (rxe0p, siw0p: its two-device checks send to it).
    listed = "devices on this host: rxe0 (rxe), rxe0p (rxe), siw0 (siw), siw0p (siw)"
    result.stderr.fnmatch_lines([f"ERROR: unknown RDMA device mlx5_9: {listed}. Pass one with --rdma-dev NAME."])
    peer = pytester.runpytest_subprocess("--rdma-dev", "rxe0", "--rdma-peer", "mlx5_9")
    assert peer.ret == pytest.ExitCode.USAGE_ERROR
    peer.stderr.fnmatch_lines([f"ERROR: unknown RDMA device mlx5_9: {listed}. Pass one with --rdma-peer NAME."])
    assert "Traceback" not in result.stderr.str()


def test_missing_libibverbs_is_a_clear_message(pytester: pytest.Pytester) -> None:
    # Point the inner session at a library that is not there: what a host without rdma-core sees.
    pytester.makeconftest("import pytest_rdma.selection as selection\nselection.LIBRARY = 'libibverbs-absent.so.1'\n")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("--rdma-dev", "rxe0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: libibverbs-absent.so.1 (libibverbs) cannot be loaded: *apt-get install libibverbs1 ibverbs-providers*"]
    )
    assert "Traceback" not in result.stderr.str()
