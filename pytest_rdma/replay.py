"""Replay a recorded check: the Python reproducer's engine.

A reproducer script holds the record of a check's calls as JSON (render.python_script) and
calls `replay(device, calls, ...)`: the same verbs, through the same call layer, with objects
referred to by the names the record gave them. It prints each call and returns the exit
status the C reproducer would: 0 when the decisive call shows the observation again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from pytest_rdma.calls.invoke import Calls, out_address
from pytest_rdma.calls.marshal import read_object
from pytest_rdma.calls.record import Call, Handle, Readback, Sym, result_name
from pytest_rdma.calls.render import RecordedCall, step_line
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Array, Buffer, Need, Ref, Value
from pytest_rdma.observations import from_dict
from pytest_rdma.provider.device import DeviceUnderTest
from pytest_rdma.verbs import CATALOGUE


def decode(value: object) -> Value:
    """JSON of render.encode (`Encoded`) -> a catalogue value the call layer resolves."""
    if isinstance(value, Mapping):
        if "$handle" in value:
            return Ref(value["$handle"])
        if "$field" in value:
            return Ref(*value["$field"])  # handle, path and, for an address inside it, the offset
        if "$bytes" in value:
            return bytes.fromhex(value["$bytes"])
        if "$buffer" in value:
            return Buffer(int(value["$buffer"]), value.get("$seed"))
        if "$result" in value:
            return Ref(result_name(value["$result"]))
        if "$array" in value:
            items = decode(value["$array"])
            return Array(items if isinstance(items, bytes) else tuple(cast("tuple[Value, ...]", items)))  # a list's
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return tuple(decode(item) for item in value)
    return value


class ReplayScope:
    """Resolves the record's names: the session's device and context, and every object made since."""

    def __init__(self, device: str, peer: str = "") -> None:
        catalogue = self.catalogue = Catalogue.of(CATALOGUE)
        self.dut = DeviceUnderTest(device, catalogue)
        self.named: dict[str, Handle] = {"ctx": self.dut.context, "device": self.dut.device}
        # A two-device check's record names the peer's context peer_ctx (provider.device's role "peer").
        self.peer = DeviceUnderTest(peer, catalogue, role="peer") if peer else None
        if self.peer is not None:
            self.named.update({"peer_ctx": self.peer.context, "peer_device": self.peer.device})
        self.returned: dict[str, int] = {}  # r12: what the replay's call [12] returned (not a pointer)
        self.calls = Calls(catalogue.by_name, self)

    def fact(self, path: str) -> Readback:
        return self.dut.fact(path)

    def resource(self, need: Need) -> Handle:
        return self.dut.resource(need)

    def buffer(self, size: int, seed: int | None = None) -> Handle:
        return self.calls.buffer(size, seed)

    def struct(self, handle: Handle) -> Readback:
        return read_object(handle)

    def step(self, name: str) -> Call:
        if name in self.returned:
            value = self.returned[name]
            return Call(-1, "", (), value, Sym(value, name), 0, "", True)
        if name not in self.named and "->" in name:  # a field of a named object: a7_event->id
            base, field = name.split("->", 1)
            address = int(read_object(self.named[base])[field] or 0)
            self.named[name] = Handle(name, "object", "void *", address)
        handle = self.named[name]
        return Call(-1, "", (), handle.address, handle, 0, "", True)


def out_handles(call: Call, outs_as: Mapping[str, str], ctypes: Mapping[str, str]) -> dict[str, Handle]:
    """The objects a call returned through `struct X **` out parameters (rdma_create_id's id, rdma_get_cm_event's
    event), under the names the reproducer's later calls give them. `ctypes` are the verb's parameter
    types: a handle has the type pointed to, so that a later call can read its fields (a13_event->id)."""
    return {
        name: Handle(name, "object", ctypes[param].rstrip().removesuffix("*").rstrip(), out_address(call, param))
        for param, name in outs_as.items()
    }


def replay(
    device: str,
    calls: Sequence[RecordedCall],
    *,
    decisive: int | None = None,
    observation: Mapping[str, object] | None = None,
    peer: str = "",
) -> int:
    """Replay `calls` on `device`; 0 when the decisive call shows `observation` (as results write it) again."""
    expected = from_dict(observation) if observation else None
    scope = ReplayScope(device, peer)
    verdict: bool | None = None
    named: dict[str, Call] = {}
    pending: Call | None = None
    try:
        for record in calls:
            call = scope.calls.invoke(
                record["verb"],
                {k: decode(v) for k, v in record["args"].items()},
                phase=record["phase"],
                sets={k: decode(v) for k, v in record.get("sets", {}).items()},
            )
            print(f"[{record['index']}] {step_line(call)}")
            if record.get("outs_as"):
                ctypes = {param.name: param.ctype for param in scope.catalogue[record["verb"]].params}
                scope.named.update(out_handles(call, record["outs_as"], ctypes))
            if isinstance(call.value, int) and not isinstance(call.result, Handle):
                scope.returned[result_name(record["index"])] = call.value
            if record.get("as") and isinstance(call.result, Handle):
                scope.named[cast(str, record["as"])] = call.result  # a name: tested just above
            elif record.get("as") and record["phase"] == "setup":
                print(f"SETUP FAILED at [{record['index']}] {record['verb']}")
                return 2
            if record.get("step"):
                named[cast(str, record["step"])] = call  # a name: tested just above
            if record["index"] == decisive:
                pending = call
        if pending is not None and expected is not None:  # judged once every call ran: it may read a later step
            verdict = expected.replayed(pending, named)
    finally:
        scope.calls.close()
        if scope.peer is not None:
            scope.peer.close()
        scope.dut.close()
    if verdict is None:
        print("DONE: compare the results printed above with the observation")
        return 3
    print("REPRODUCED" if verdict else "NOT REPRODUCED")
    return 0 if verdict else 1
