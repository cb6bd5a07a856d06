"""The peer host's side of a two-device check (--rdma-peer-host): sent there by execnet's remote_exec.

It opens the peer device with the suite's own call layer (so pytest-rdma must be installed on that
host, for the Python the gateway spec names) and then serves requests, one at a time, until told
to close: make a call (`perform`, the same function a local call runs), lay out a buffer, read an
object's struct or a region's bytes, wait for an event channel. Every request carries a number,
echoed in its answer, so an answer that comes after the check gave up on it is told apart.
At close it compares its process's verbs objects on the device with what it had after opening.
"""

from __future__ import annotations

import os
import socket
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, cast

from pytest_rdma.calls.ends import LOCAL, new_buffer, perform
from pytest_rdma.calls.record import Handle, Resolved
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.guard.leaks import difference, own_counts
from pytest_rdma.peer.wire import Answer, Opened, Wire, decode, encode
from pytest_rdma.provider.device import DeviceNotUsable, DeviceUnderTest

if TYPE_CHECKING:  # the channel execnet's remote_exec hands this module, never imported at run time
    from execnet import Channel


class Agent:
    """One session's peer device and the buffers laid out for the current check."""

    def __init__(self, device: DeviceUnderTest, catalogue: Catalogue) -> None:
        self.device = device
        self.catalogue = catalogue
        self.buffers: dict[str, Handle] = {}
        self.start = own_counts([device.name])

    def opened(self) -> Opened:
        device = self.device
        return {
            "facts": encode(dict(device.facts)),
            "identity": device.identity.as_dict(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "ipv4": str(device.memo.get("ipv4") or ""),
            "context": encode(device.context),
            "device": encode(device.device),
        }

    def handle(self, op: str, args: list[Wire]) -> Wire:
        ops: Mapping[str, Callable[..., Wire]] = {
            "perform": self.perform,
            "buffer": self.buffer,
            "struct": lambda handle: encode(LOCAL.struct(self.local(handle))),
            "content": lambda handle, offset, length: LOCAL.content(self.local(handle), offset, length),
            "readable": lambda handle, timeout: LOCAL.readable(self.local(handle), timeout),
            "release": self.release,
        }
        return ops[op](*args)

    def local(self, wire: Wire) -> Handle:
        return cast(Handle, decode(wire))

    def perform(self, verb: str, resolved: Wire, written: Wire) -> Wire:
        values = cast("dict[str, Resolved]", decode(resolved))
        sets = cast("tuple[tuple[str, Resolved], ...]", decode(written))
        done = perform(self.catalogue.by_name[verb], values, sets)
        answer: Answer = {
            "shown": encode(done.shown),
            "value": done.value,
            "errno": done.errno,
            "route": done.route,
            "ok": done.ok,
            "problem": done.problem,
            "outs": encode(done.outs),
            "owner": done.owner,
        }
        return answer

    def buffer(self, name: str, size: int, seed: int | None) -> Wire:
        self.buffers[name] = new_buffer(name, size, seed)
        return encode(self.buffers[name])

    def release(self) -> Wire:
        """The check is over: its buffers go (its regions were deregistered first)."""
        self.buffers.clear()
        return None

    def close(self) -> Wire:
        """What this process left on the device since it opened it, then the device closed."""
        left = difference(own_counts([self.device.name]), self.start)
        self.buffers.clear()
        self.device.close()
        return cast(Wire, left)


def serve(channel: Channel) -> None:
    """Open the device the first message names, answer requests until "close" or the channel ends."""
    from pytest_rdma.generate import active

    asked = channel.receive()
    catalogue = active()
    try:
        device = DeviceUnderTest(
            asked["device"], catalogue, port=asked["port"], gid_index=asked["gid_index"], role="peer"
        )
    except DeviceNotUsable as exc:
        channel.send(("refused", f"{socket.gethostname()}: {exc}"))
        return
    agent = Agent(device, catalogue)
    channel.send(("opened", agent.opened()))
    while True:
        try:
            number, op, args = channel.receive()
        except EOFError:
            agent.close()
            return
        if op == "close":
            channel.send((number, "ok", agent.close()))
            return
        try:
            channel.send((number, "ok", agent.handle(op, args)))
        except Exception:  # the answer says what went wrong on this end; the session goes on
            channel.send((number, "error", traceback.format_exc(limit=6)))


if __name__ == "__channelexec__":
    serve(channel)  # type: ignore[name-defined]  # noqa: F821  # execnet's global in a remote_exec'd module
