"""The two-host lab's pieces that need no VM (host only): --hosts and --wire-port on bad input, the per-host
kernels, the wire's QEMU arguments, the commands that bind the devices to the wire NIC, host 1's peer arguments."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from pytest_rdma import lab
from pytest_rdma.cli import main
from pytest_rdma.lab import hosts, vm, wire
from pytest_rdma.lab.guest import peer_args
from pytest_rdma.lab.prereqs import Kernel, LabError

OLD, NEW = "6.1.0-56-amd64", "6.12.117+deb12-amd64"


def test_one_host_is_the_lab_as_before() -> None:
    assert hosts.plan(1, [OLD, NEW], None) is None  # the kernel matrix keeps its --kernel


def test_two_hosts_each_boot_the_kernel_given_for_it() -> None:
    assert hosts.plan(2, None, None).kernels == (None, None)  # type: ignore[union-attr]
    assert hosts.plan(2, [OLD], None).kernels == (OLD, OLD)  # type: ignore[union-attr]
    assert hosts.plan(2, [OLD, NEW], None).kernels == (OLD, NEW)  # type: ignore[union-attr]
    assert hosts.plan(2, [f"{NEW},{OLD}"], None).kernels == (NEW, OLD)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("count", "kernels", "says"),
    [
        (3, None, "--hosts 3: the lab boots 1 host, or 2 joined by a wire; give --hosts 2"),
        (0, None, "--hosts 0: the lab boots 1 host"),
        (2, [OLD, NEW, OLD], "give --kernel once (both hosts boot it) or twice"),
        (2, ["all"], "give --kernel once (both hosts boot it) or twice"),
        (2, ["not a kernel"], "--kernel 'not a kernel' is not a kernel release"),
    ],
)
def test_bad_hosts_or_kernels_are_one_line(count: int, kernels: list[str] | None, says: str) -> None:
    with pytest.raises(LabError, match=None) as raised:
        hosts.plan(count, kernels, None)
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_a_wire_port_in_use_is_refused_and_a_free_one_taken() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(LabError, match=f"--wire-port {port} is in use on this machine"):
            hosts.plan(2, None, port)
    assert hosts.plan(2, None, port).port == port  # type: ignore[union-attr]
    assert hosts.plan(2, None, None).port > 0  # type: ignore[union-attr]
    with pytest.raises(LabError, match="--wire-port joins two hosts: give it with --hosts 2"):
        hosts.plan(1, None, port)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--hosts", "3"], "lab: error: --hosts 3: the lab boots 1 host, or 2 joined by a wire; give --hosts 2"),
        (["--hosts", "2", "--wire-port", "70000"], "lab: error: --wire-port 70000 is no TCP port"),
    ],
)
def test_the_lab_command_says_bad_hosts_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str], says: str
) -> None:
    def never(*_: object) -> int:
        raise AssertionError("bad input booted a VM")

    # Were the input taken, the lab would boot VMs here, outside the machine's lab slots: it must not get there.
    monkeypatch.setattr(hosts, "run", never)
    monkeypatch.setattr(lab, "run", never)
    code = main(["lab", "--no-install", "--results", str(tmp_path), *argv])
    err = capsys.readouterr().err
    assert code == 4 and err.splitlines() == [err.strip()] and err.startswith(says), err
    assert not list(tmp_path.iterdir()), "nothing booted, nothing written"


def test_host_2_listens_on_the_wire_and_host_1_connects() -> None:
    assert hosts.wire_opts(2, 40123) == [
        "-netdev",
        "socket,id=wire,listen=127.0.0.1:40123",
        "-device",
        "virtio-net-pci,netdev=wire,mac=02:00:c6:12:ff:02",
    ]
    assert hosts.wire_opts(1, 40123)[1] == "socket,id=wire,connect=127.0.0.1:40123"


def test_the_wire_reaches_qemu_through_vng_before_its_command() -> None:
    argv = vm._vng_argv(
        Path("/vng"), Kernel("r", Path("/boot/vmlinuz-r")), False, [], "true", 2, "2G", qemu_opts=hosts.wire_opts(2, 9)
    )
    assert argv[-3] == "--qemu-opts=" + " ".join(hosts.wire_opts(2, 9)) and argv[-2:] == ["--exec", "true"]
    assert not any(
        "qemu-opts" in arg for arg in vm._vng_argv(Path("/vng"), Kernel("r", Path("/b")), False, [], "x", 1, "1G")
    )


def test_a_listening_port_is_read_from_the_tcp_table(tmp_path: Path) -> None:
    table = tmp_path / "tcp"
    header = "  sl  local_address rem_address   st tx_queue rx_queue\n"
    table.write_text(header + "   0: 0100007F:9CAB 00000000:0000 0A 00000000:00000000\n")
    assert hosts.listening(0x9CAB, (table,))
    table.write_text(header + "   0: 0100007F:9CAB 0100007F:1234 01 00000000:00000000\n")  # a connection, no listener
    assert not hosts.listening(0x9CAB, (table,))


def test_the_host_side_requests_give_each_vm_its_end() -> None:
    from pytest_rdma.lab import LabRequest

    base = LabRequest(devices=["rxe0", "siw0"], pytest_args=["-k", "between"], results=Path("/r"))
    first, second = hosts.requests(base, hosts.TwoHosts((OLD, NEW), 40000))
    assert (first.kernel, second.kernel) == (OLD, NEW)
    assert first.results == Path("/r") and second.results == Path("/r/peer-host")
    assert first.plan_extra["peer_host"] == "socket=198.18.2.2:8888" and second.plan_extra["serve"] is True
    assert second.pytest_args == [] and second.devices == ["rxe0", "siw0"]
    # Each VM names itself apart, so a record's two ends (dut_host, peer_host) are told apart.
    assert (first.plan_extra["wire"]["hostname"], second.plan_extra["wire"]["hostname"]) == ("lab-host1", "lab-host2")


def test_each_device_is_bound_to_a_link_of_its_own_on_the_wire_nic() -> None:
    """rxe0 and siw0 on the one NIC: rdma_cm took siw0's address for rxe0 and siw0's RC pair never connected."""
    commands = wire.wire_commands(["rxe0", "siw0"], "eth0", "198.18.2.1")
    assert commands == [
        ("ip", "link", "set", "eth0", "up"),
        ("ip", "addr", "add", "198.18.2.1/24", "dev", "eth0"),
        ("ip", "link", "add", "link", "eth0", "name", "rxe0-wire", "address", "02:00:c6:12:03:01", "type", "macvlan")
        + ("mode", "bridge"),
        ("ip", "link", "set", "rxe0-wire", "up"),
        ("ip", "addr", "add", "198.18.3.1/24", "dev", "rxe0-wire"),
        ("ip", "neigh", "add", "198.18.3.2", "lladdr", "02:00:c6:12:03:02", "dev", "rxe0-wire", "nud", "permanent"),
        ("ip", "link", "add", "link", "eth0", "name", "siw0-wire", "address", "02:00:c6:12:04:01", "type", "macvlan")
        + ("mode", "bridge"),
        ("ip", "link", "set", "siw0-wire", "up"),
        ("ip", "addr", "add", "198.18.4.1/24", "dev", "siw0-wire"),
        ("ip", "neigh", "add", "198.18.4.2", "lladdr", "02:00:c6:12:04:02", "dev", "siw0-wire", "nud", "permanent"),
        ("rdma", "link", "add", "rxe0", "type", "rxe", "netdev", "rxe0-wire"),
        ("rdma", "link", "add", "siw0", "type", "siw", "netdev", "siw0-wire"),
    ]
    bound = [argv[-1] for argv in commands if argv[0] == "rdma"]
    assert len(set(bound)) == len(bound), "two devices share a netdev: rdma_cm picks one of them for both"
    assert not any("vlan" in argv for argv in commands), "rxe refuses a VLAN netdev (EPERM)"
    macs = [argv[argv.index("address") + 1] for argv in commands if "address" in argv]
    assert len(set(macs)) == len(macs) and wire.wire_mac(1) not in macs, "siw's GID is its netdev's MAC"
    # Host 2 puts each device in the same /24, its neighbour there host 1's MAC on that link.
    second = wire.wire_commands(["rxe0", "siw0"], "ens4", "198.18.2.2")
    assert ("ip", "addr", "add", "198.18.4.2/24", "dev", "siw0-wire") in second
    assert ("ip", "neigh", "add", "198.18.4.1", "lladdr", macs[1], "dev", "siw0-wire", "nud", "permanent") in second


def test_the_wire_nic_is_found_by_its_mac(tmp_path: Path) -> None:
    for name, mac in (("lo", "00:00:00:00:00:00"), ("enp0s3", wire.wire_mac(1).upper())):
        (tmp_path / name).mkdir()
        (tmp_path / name / "address").write_text(mac + "\n")
    assert wire.netdev_of(wire.wire_mac(1), tmp_path) == "enp0s3"
    assert wire.netdev_of(wire.wire_mac(2), tmp_path) is None


def test_host_1_names_the_same_device_on_the_peer_host() -> None:
    spec = wire.peer_host_spec("198.18.2.2")
    assert peer_args(["siw0"], [], spec) == ["--rdma-peer=siw0", "--rdma-peer-host=socket=198.18.2.2:8888"]
    assert peer_args(["siw0"], ["--rdma-peer=siw1"], spec) == []
