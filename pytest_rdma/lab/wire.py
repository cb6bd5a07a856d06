"""Inside each VM of a two-host lab (`pytest-rdma lab --hosts 2`): the wire NIC, its devices, the peer's server.

Each VM has one virtio NIC on the wire (a QEMU socket netdev joining the two VMs, lab/hosts.py), found by
the MAC the host gave it; the devices (rxe0, siw0) are bound to that NIC and nothing else, so every packet
between the two ends crosses the wire. Host 2 serves: execnet's own socket server (execnet/script/
socketserver.py) on the wire, which the run in host 1 reaches with `--rdma-peer-host socket=ADDR:PORT`
exactly as a user's spec would, and a control port on which host 1 says when its runs are done (then host 2
compares its devices' resource counts with those at the start and answers with the lines it printed).
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


def peer_host_spec(address: str, port: int = SERVER_PORT) -> str:
    """The execnet gateway spec of host 2's server: what a user would give --rdma-peer-host (pure)."""
    return f"socket={address}:{port}"


def wire_commands(devices: list[str], netdev: str, address: str) -> list[tuple[str, ...]]:
    """The commands that put `address` on the wire NIC and bind every device to it (pure).

    rxe and siw share the one NIC: each provider binds its own device to a netdev, and the two do not meet."""
    commands: list[tuple[str, ...]] = [
        ("ip", "link", "set", netdev, "up"),
        ("ip", "addr", "add", f"{address}/24", "dev", netdev),
    ]
    for name in devices:
        kind = "siw" if name.startswith("siw") else "rxe"
        commands.append(("rdma", "link", "add", name, "type", kind, "netdev", netdev))
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
