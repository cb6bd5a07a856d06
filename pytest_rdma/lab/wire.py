"""Inside each VM of a two-host lab (`pytest-rdma lab --hosts 2`): the wire NIC, its devices, the peer's server.

Each VM has one virtio NIC on the wire (a QEMU socket netdev joining the two VMs, lab/hosts.py), found by
the MAC the host gave it; each device (rxe0, siw0) is bound to a link of its own on that NIC (a macvlan),
with an address of its own, so every packet between the two ends crosses the wire, and rdma_cm, which picks the
RDMA device by an IP address's network interface, finds exactly one device there. Host 2 serves:
execnet's own socket server (execnet/script/socketserver.py) on the wire NIC's address, which the run in
host 1 reaches with `--rdma-peer-host socket=ADDR:PORT` exactly as a user's spec would, and a control port
on which host 1 says when its runs are done (then host 2 compares its devices' resource counts with those
at the start and answers with the lines it printed).
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

# RFC 2544's test range, a /24 of its own beside the single-host lab's (guest.LAB_NETWORK, PEER_NETWORK).
WIRE_NETWORK = "198.18.2.{}"
# Device i's own link on the wire (a macvlan of the wire NIC) is in its own /24: 198.18.<FIRST_NET + i>.<host>.
DEVICE_NETWORK = "198.18.{}.{}"
FIRST_NET = 3
SERVER_PORT = 8888  # execnet's socket server on host 2 (its script's own default)
CONTROL_PORT = 8889  # host 1 says "done" there; host 2 answers with its resource lines
READY = "ready"
DONE = "done"
CONNECT_S = 600.0  # how long host 1 waits for host 2's server (both boot at once; host 2 may build siw.ko)
ANSWER_S = 20.0  # how long host 1 waits for host 2's resource lines once it said done


def wire_mac(host: int) -> str:
    """The wire NIC's MAC of host 1 or 2 (pure): locally administered, apart from guest.lab_mac's."""
    return f"02:00:c6:12:ff:{host:02x}"


def wire_address(host: int) -> str:
    return WIRE_NETWORK.format(host)


def host_name(host: int) -> str:
    """The name VM `host` gives itself (pure): both would be virtme-ng's, and a record names each end by it."""
    return f"lab-host{host}"


def peer_host_spec(address: str, port: int = SERVER_PORT) -> str:
    """The execnet gateway spec of host 2's server: what a user would give --rdma-peer-host (pure)."""
    return f"socket={address}:{port}"


def link_mac(net: int, host: int) -> str:
    """Host `host`'s MAC on a device's link (pure): siw's GID is its netdev's MAC, which must name one device."""
    return f"02:00:c6:12:{net:02x}:{host:02x}"


def device_link(device: str) -> str:
    """The netdev `device` is bound to on the wire (pure): at most 15 characters for a device's name of 10."""
    return f"{device}-wire"


def wire_commands(devices: list[str], netdev: str, address: str) -> list[tuple[str, ...]]:
    """The commands that put `address` on the wire NIC and bind each device to a link of its own on it (pure).

    Not all on the NIC itself: rdma_cm binds an address to the first RDMA device on its network interface
    (6.1's cma_acquire_dev_by_src_ip()), so with rxe0 and siw0 on one NIC siw0's rdma_cm connections went to
    rxe0, registered first (an IB CM exchange whose passive side waited for an RTU: no ESTABLISHED). Each
    device's link is a macvlan of the NIC (rxe refuses a VLAN netdev, EPERM) with its own MAC and /24, which
    rxe's GID table does not take in (a sibling, not an upper device of rxe's netdev); host 2 gives each
    device the same /24. The other host's MAC on it is a permanent neighbour: the links share the wire's
    broadcast, where any of a host's interfaces may answer an ARP request for another's address, and rxe
    takes a packet only on its own netdev."""
    host = int(address.rsplit(".", 1)[1])
    other = 3 - host
    commands: list[tuple[str, ...]] = [
        ("ip", "link", "set", netdev, "up"),
        ("ip", "addr", "add", f"{address}/24", "dev", netdev),
    ]
    for index, name in enumerate(devices):
        net, link = FIRST_NET + index, device_link(name)
        commands += [
            ("ip", "link", "add", "link", netdev, "name", link, "address", link_mac(net, host), "type", "macvlan")
            + ("mode", "bridge"),
            ("ip", "link", "set", link, "up"),
            ("ip", "addr", "add", f"{DEVICE_NETWORK.format(net, host)}/24", "dev", link),
            ("ip", "neigh", "add", DEVICE_NETWORK.format(net, other), "lladdr", link_mac(net, other), "dev", link)
            + ("nud", "permanent"),
        ]
    for name in devices:
        kind = "siw" if name.startswith("siw") else "rxe"
        commands.append(("rdma", "link", "add", name, "type", kind, "netdev", device_link(name)))
    return commands


def netdev_of(mac: str, net: Path = Path("/sys/class/net")) -> str | None:
    """The netdev whose address is `mac`, or None."""
    for entry in sorted(net.iterdir()):
        try:
            if (entry / "address").read_text().strip().lower() == mac.lower():
                return entry.name
        except OSError:
            continue
    return None


def execnet_server_script() -> Path:
    """execnet's socket server, run as a script (it serves one gateway after another)."""
    import execnet

    return Path(execnet.__file__).parent / "script" / "socketserver.py"


def _server_listens(port: int) -> bool:
    """Whether something in this VM listens on TCP `port` (/proc/net/tcp, state 0A)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) > 3 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
            return True
    return False


def serve(plan: dict, count: Callable[[], dict], report: Callable[[dict, dict], list[str]]) -> int:
    """Host 2's whole run: execnet's server on the wire until host 1 says done (or goes); 0, or 3 if it leaked.

    `count` reads the devices' resource counts, `report` turns before and after into printed lines."""
    address = plan["wire"]["address"]
    results = Path(plan["results"])
    server = subprocess.Popen(
        [plan["python"], str(execnet_server_script()), f"{address}:{SERVER_PORT}"],
        cwd=plan["cwd"],
        stdout=(results / "execnet-server.log").open("w"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while not _server_listens(SERVER_PORT) and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if not _server_listens(SERVER_PORT):
        print(f"lab: peer host: execnet's socket server did not start (see {results}/execnet-server.log)", flush=True)
        server.kill()
        return 3
    before = count()
    print(f"lab: peer host: execnet's socket server on {peer_host_spec(address)}", flush=True)
    control = socket.create_server((address, CONTROL_PORT))
    control.settimeout(plan.get("timeout", 3600.0))
    lines: list[str] = []
    try:
        connection, _ = control.accept()
        with connection:
            connection.sendall(f"{READY}\n".encode())
            connection.settimeout(plan.get("timeout", 3600.0))
            said = connection.makefile("r").readline().strip()
            if said != DONE:
                print("lab: peer host: host 1 went away before it said done", flush=True)
            server.terminate()
            server.wait(timeout=30)
            after = count()
            lines = report(before, after)
            (results / "resources.json").write_text(json.dumps({"before": before, "after": after}, indent=1) + "\n")
            connection.sendall("".join(f"{line}\n" for line in lines).encode())
    except (TimeoutError, OSError) as exc:
        print(f"lab: peer host: no word from host 1 ({exc}); stopping", flush=True)
    finally:
        if server.poll() is None:
            server.kill()
        control.close()
    for line in lines:
        print(f"lab: peer host: {line}", flush=True)
    return 1 if any("LEAKED" in line for line in lines) else 0


class PeerControl:
    """Host 1's side of the control port: wait until host 2 serves, then say done and read its lines."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.connection: socket.socket | None = None

    def wait_ready(self, limit: float = CONNECT_S) -> str:
        """ "" once host 2's execnet server listens, else why not."""
        deadline = time.monotonic() + limit
        last = "nothing tried"
        while time.monotonic() < deadline:
            try:
                connection = socket.create_connection((self.address, CONTROL_PORT), timeout=5)
                connection.settimeout(limit)
                if connection.makefile("r").readline().strip() == READY:
                    self.connection = connection
                    return ""
                connection.close()
                last = "it closed the control connection"
            except OSError as exc:
                last = str(exc)
            time.sleep(1)
        return f"host 2 ({self.address}) did not serve within {limit:.0f} s: {last}"

    def done(self, limit: float = ANSWER_S) -> list[str]:
        """Tell host 2 the runs are over; the resource lines it answers (or one saying it did not)."""
        if self.connection is None:
            return []
        try:
            self.connection.settimeout(limit)
            self.connection.sendall(f"{DONE}\n".encode())
            answer = self.connection.makefile("r").read()
        except OSError as exc:
            return [f"peer host {self.address}: no resource counts came back ({exc or 'timed out'})"]
        finally:
            self.connection.close()
        lines = [line for line in answer.splitlines() if line.strip()]
        return [f"peer host {self.address}: {line}" for line in lines] or [
            f"peer host {self.address}: no resource counts came back (it closed the connection)"
        ]
