"""A peer device on another host (--rdma-peer-host SPEC): opened there through an execnet gateway.

`RemotePeer.open` starts the gateway (an execnet spec: `ssh=root@host2//python=python3`, `popen`,
`socket=HOST:PORT`), sends pytest_rdma.peer.agent there with remote_exec, and has it open the
device. The result is a `Device` (provider/device.py) like an in-process peer: its facts, its
identity, its context; its `end` (a `RemoteEnd`) makes the calls on the objects that live there.

Every request waits at most REQUEST_TIMEOUT: a peer that hangs costs the check in progress a
timeout, one whose channel closed (the host or its process died) an error naming the peer host;
either way every later request fails at once (EndLost) instead of waiting again, so the check's
own objects here are still freed and the checks after it end at once.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

from pytest_rdma.calls.ends import EndLost, Performed
from pytest_rdma.calls.invoke import handles_in
from pytest_rdma.calls.record import Handle, Readback, Resolved, Shown
from pytest_rdma.catalogue.model import Verb
from pytest_rdma.outcomes import CheckTimeout
from pytest_rdma.peer import agent
from pytest_rdma.peer.wire import Answer, Opened, Wire, decode, encode
from pytest_rdma.provider.device import Facts, SessionDevice
from pytest_rdma.provider.identity import DeviceIdentity

if TYPE_CHECKING:
    import execnet  # imported where a peer host is asked for: most runs have none (3 ms of a start, more under TCG)

AT = "peer"  # Handle.at of the objects that live on the peer host
REQUEST_TIMEOUT = 30.0  # seconds one request may take there (a verb call, a read; a wait adds its own)
OPEN_TIMEOUT = 120.0  # starting the interpreter there (ssh, imports) and opening the device


class PeerHostError(RuntimeError):
    """The peer host could not be reached or its device opened; the message says which and why."""


class RemoteEnd:
    """The peer host's process, through the gateway's channel."""

    at = AT

    def __init__(self, spec: str, gateway: execnet.Gateway, channel: execnet.Channel) -> None:
        self.spec = spec
        self.gateway = gateway
        self.channel = channel
        self.numbers = itertools.count(1)
        self.lost = ""  # why the peer host is out of reach, once it is

    def request(self, op: str, *args: Wire, timeout: float = REQUEST_TIMEOUT) -> Wire:
        """The answer to one request, or CheckTimeout / EndLost naming the peer host."""
        if self.lost:
            raise EndLost(self.lost)
        import execnet  # already imported by the gateway: a name looked up

        number = next(self.numbers)
        try:
            self.channel.send((number, op, list(args)))
            while True:
                answered, status, payload = self.channel.receive(timeout)
                if answered == number:  # an earlier answer came after its check gave up on it
                    break
        except self.channel.TimeoutError:
            # Its answer may still come, or never: later requests do not wait on a peer that hung.
            self.lost = f"the peer host ({self.spec}) did not answer {op} within {timeout:.0f} s"
            raise CheckTimeout(self.lost) from None
        except (EOFError, OSError, self.channel.RemoteError, execnet.HostNotFound) as exc:
            said = str(exc).strip().splitlines()
            self.lost = f"the peer host ({self.spec}) is gone: {said[-1] if said else type(exc).__name__}"
            raise EndLost(self.lost) from None
        if status == "error":
            raise RuntimeError(f"on the peer host ({self.spec}): {payload}")
        return cast(Wire, payload)

    def perform(
        self, verb: Verb, resolved: Mapping[str, Resolved], written: tuple[tuple[str, Resolved], ...]
    ) -> Performed:
        known = {handle.name: handle for handle in handles_in(resolved)}
        done = cast(Answer, self.request("perform", verb.name, encode(resolved), encode(written)))
        return Performed(
            shown=cast("list[tuple[str, Shown]]", decode(done["shown"], AT, known)),
            value=done["value"],
            errno=done["errno"],
            route=done["route"],
            ok=done["ok"],
            problem=done["problem"],
            outs=cast("dict[str, Readback]", decode(done["outs"], AT, known)),
            owner=done["owner"],
        )

    def buffer(self, name: str, size: int, seed: int | None) -> Handle:
        return cast(Handle, decode(self.request("buffer", name, size, seed), AT))

    def struct(self, handle: Handle) -> Readback:
        return cast(Readback, decode(self.request("struct", encode(handle)), AT))

    def content(self, handle: Handle, offset: int, length: int) -> bytes:
        return cast(bytes, self.request("content", encode(handle), offset, length))

    def readable(self, handle: Handle, timeout: float) -> bool:
        return bool(self.request("readable", encode(handle), timeout, timeout=timeout + REQUEST_TIMEOUT))

    def release(self) -> None:
        self.request("release")

    def close(self) -> dict[str, dict[str, int]]:
        """Close the device there and the gateway; what the peer's process left on the device (empty: nothing)."""
        try:
            left = cast("dict[str, dict[str, int]]", self.request("close")) if not self.lost else {}
        finally:
            self.gateway.exit()
        return left


class RemotePeer(SessionDevice):
    """The peer device, opened on the host of a gateway spec: a provider.device.Device."""

    def __init__(self, end: RemoteEnd, name: str, port: int, opened: Opened) -> None:
        self.end = end
        self.name = name
        self.port_num = port
        self.facts = cast(Facts, decode(opened["facts"], AT))
        self.identity = DeviceIdentity(**opened["identity"])
        self.host = str(opened["host"])
        self.memo: dict[str, object] = {"ipv4": opened["ipv4"]}
        self.context = cast(Handle, decode(opened["context"], AT))
        self.device = cast(Handle, decode(opened["device"], AT))
        self.left: dict[str, dict[str, int]] = {}  # what the peer's process left on the device, after close()

    @classmethod
    def open(cls, spec: str, name: str, port: int = 1, gid_index: int = 0) -> RemotePeer:
        import execnet

        try:
            gateway = execnet.makegateway(spec)
        except Exception as exc:  # execnet raises what the transport does (ssh's exit, a refused socket)
            raise PeerHostError(f"--rdma-peer-host {spec}: the gateway did not start: {exc}") from None
        try:
            channel = gateway.remote_exec(agent)
            channel.send({"device": name, "port": port, "gid_index": gid_index})
            said, answer = channel.receive(OPEN_TIMEOUT)
        except Exception as exc:  # a timeout, the channel closing, the agent failing to import there
            gateway.exit()
            raise PeerHostError(
                f"--rdma-peer-host {spec}: the peer's process did not open {name} ({str(exc).strip()[-600:]}); "
                "pytest-rdma must be installed there for the gateway's python"
            ) from None
        if said != "opened":
            gateway.exit()
            raise PeerHostError(f"--rdma-peer-host {spec}: {answer}")
        return cls(RemoteEnd(spec, gateway, channel), name, port, cast(Opened, answer))

    def close(self) -> None:
        self.left = self.end.close()
