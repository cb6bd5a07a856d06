"""The two-host lab: `pytest-rdma lab --hosts 2` boots two VMs joined by a wire.

Host 2 boots first: its QEMU listens on a TCP port of this machine (`-netdev socket,listen=`), which is
the wire; host 1's QEMU connects to it, so each VM's virtio NIC sees the other's frames and nothing else.
In each VM the devices (rxe0, siw0) are bound to that NIC (lab/wire.py). Host 2 runs execnet's socket
server on the wire; host 1 runs the checks, each device's with `--rdma-peer DEVICE --rdma-peer-host
socket=ADDR:PORT`, so every two-device check has its receiving side on host 2, across the wire, reached as
a user's gateway spec reaches a second server. Each host may boot its own kernel (`--kernel` once: both;
twice: host 1, then host 2). Host 1's results are where a one-host run writes them; host 2's console, its
execnet server's log and its resource counts in results/peer-host/.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pytest_rdma import lab
from pytest_rdma.lab import matrix, wire
from pytest_rdma.lab.prereqs import LabError, Log

MAX_HOSTS = 2
PEER_RESULTS = "peer-host"  # host 2's directory in the results
WIRE = "wire"  # the QEMU netdev's id
HOST2_GRACE_S = 120.0  # how long host 2 may take to stop after host 1's run ended, before it is killed


@dataclass(frozen=True)
class TwoHosts:
    kernels: tuple[str | None, str | None]  # host 1's and host 2's release (None: the lab's default)
    port: int  # the wire: the TCP port on 127.0.0.1 host 2's QEMU listens on


def plan(hosts: int, kernels: list[str] | None, port: int | None) -> TwoHosts | None:
    """The two hosts asked for, None for the one-host lab, or a LabError naming what to give instead."""
    if hosts not in (1, MAX_HOSTS):
        raise LabError(f"--hosts {hosts}: the lab boots 1 host, or 2 joined by a wire; give --hosts 2 or leave it out")
    if hosts == 1:
        if port is not None:
            raise LabError("--wire-port joins two hosts: give it with --hosts 2")
        return None
    given = [name.strip() for value in kernels or [] for name in value.split(",")]
    if len(given) > MAX_HOSTS or matrix.ALL in given:
        raise LabError(
            "with --hosts 2, give --kernel once (both hosts boot it) or twice (host 1's, then host 2's), "
            "each a release as uname -r prints it"
        )
    names = matrix.releases(given, []) if given else []  # a name that is no release: the matrix's own message
    per_host: list[str | None] = [*(names * 2 if len(names) == 1 else names)] or [None, None]
    return TwoHosts((per_host[0], per_host[1]), free_port(port))


def free_port(port: int | None) -> int:
    """`port` if nothing on this machine listens on it, or a free one the system gives when None."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port or 0))
        except OverflowError:
            raise LabError(f"--wire-port {port} is no TCP port; give one from 1024 to 65535") from None
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise LabError(f"--wire-port {port}: {exc.strerror}; give another port or leave it out") from None
            raise LabError(
                f"--wire-port {port} is in use on this machine (another lab's wire?); give a free port, "
                "or leave --wire-port out and the lab takes one"
            ) from None
        return int(probe.getsockname()[1])


def wire_opts(host: int, port: int) -> list[str]:
    """QEMU's arguments for host 1's or host 2's NIC on the wire (pure): host 2 listens, host 1 connects."""
    end = f"listen=127.0.0.1:{port}" if host == 2 else f"connect=127.0.0.1:{port}"
    return ["-netdev", f"socket,id={WIRE},{end}", "-device", f"virtio-net-pci,netdev={WIRE},mac={wire.wire_mac(host)}"]


def listening(port: int, tables: tuple[Path, ...] = (Path("/proc/net/tcp"),)) -> bool:
    """Whether something on this machine listens on 127.0.0.1:`port` (host 2's QEMU, once it started)."""
    local = f"0100007F:{port:04X}"
    for table in tables:
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) > 3 and fields[1] == local and fields[3] == "0A":
                return True
    return False


def qemu_of(port: int) -> int | None:
    """The process id of host 2's QEMU (the one listening on the wire's `port`), or None."""
    wanted = f"listen=127.0.0.1:{port}".encode()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if wanted in command and b"qemu-system" in command.split(b"\0", 1)[0]:
            return int(entry.name)
    return None


def requests(base: lab.LabRequest, hosts: TwoHosts) -> tuple[lab.LabRequest, lab.LabRequest]:
    """Host 1's and host 2's lab requests (pure)."""
    address1, address2 = wire.wire_address(1), wire.wire_address(2)
    first = dataclasses.replace(
        base,
        kernel=hosts.kernels[0],
        qemu_opts=wire_opts(1, hosts.port),
        plan_extra={
            **base.plan_extra,
            "wire": {"mac": wire.wire_mac(1), "address": address1, "hostname": wire.host_name(1)},
            "peer_host": wire.peer_host_spec(address2),
            "peer_address": address2,
            # The checks about an unprivileged process need no second host: the one-host lab runs them.
            "unprivileged": False,
        },
    )
    second = dataclasses.replace(
        base,
        kernel=hosts.kernels[1],
        results=base.results / PEER_RESULTS,
        pytest_args=[],
        report_args=[],
        allure=False,
        html=False,
        qemu_opts=wire_opts(2, hosts.port),
        plan_extra={
            "wire": {"mac": wire.wire_mac(2), "address": address2, "hostname": wire.host_name(2)},
            "serve": True,
            "timeout": base.timeout,
        },
    )
    return first, second


def run(base: lab.LabRequest, hosts: TwoHosts, log: Log = print) -> int:
    """Boot host 2, then host 1 once host 2's end of the wire listens; host 1's exit code (or host 2's)."""
    first, second = requests(base, hosts)
    log(
        f"lab: two hosts joined by a wire (127.0.0.1:{hosts.port}): host 1 {hosts.kernels[0] or 'default kernel'} "
        f"runs the checks, host 2 {hosts.kernels[1] or 'default kernel'} serves their peers "
        f"({wire.peer_host_spec(wire.wire_address(2))}); host 2's console in {second.results.resolve()}"
    )
    second_code: list[int] = []
    second_errors: list[str] = []
    host2 = threading.Thread(
        target=lambda: second_code.append(lab.run(second, lambda line: log(f"[host 2] {line}"), second_errors)),
        daemon=True,
    )
    host2.start()
    deadline = time.monotonic() + base.timeout
    while host2.is_alive() and not listening(hosts.port) and time.monotonic() < deadline:
        time.sleep(0.2)
    if not listening(hosts.port):
        host2.join(timeout=HOST2_GRACE_S)
        why = second_errors[0].splitlines()[0] if second_errors else "its QEMU never listened on the wire"
        print(f"lab: error: host 2 did not boot: {why}", file=sys.stderr)
        return second_code[0] if second_code and second_code[0] else lab.EXIT_LAB_FAILED
    code = lab.run(first, log)
    host2.join(timeout=HOST2_GRACE_S)
    if host2.is_alive():
        pid = qemu_of(hosts.port)
        log(f"lab: host 2 did not stop {HOST2_GRACE_S:.0f} s after host 1's run; killing its QEMU ({pid})")
        if pid is not None:
            os.kill(pid, 9)
        host2.join(timeout=30)
    ended = second_code[0] if second_code else None
    if ended not in (0, None) and code == 0:
        print(f"lab: host 2 exited {ended} (see {second.results.resolve()}/lab-console.log)", file=sys.stderr)
        return ended
    return code
