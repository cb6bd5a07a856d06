"""Where a call is made: an `End` is a process that holds verbs objects and calls libibverbs there.

A check's calls are made on the end that holds their objects: this process (`LOCAL`), or, for a
two-device check whose peer is on another host (--rdma-peer-host), the process the peer host runs
for the session (pytest_rdma.peer.remote: the same `perform` there, reached through execnet).
Every object and buffer says where it lives (`Handle.at`), so `Calls` sends each call where its
arguments are; what a call was given and returned comes back as the same plain record either way.
"""

from __future__ import annotations

import ctypes
import mmap
import select
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, cast

from pytest_rdma.calls.convention import judge
from pytest_rdma.calls.marshal import Marshalled, marshal, parse_ctype, read_object, read_struct, struct_class
from pytest_rdma.calls.payload import payload
from pytest_rdma.calls.record import CValue, Handle, Readback, Resolved, Shown
from pytest_rdma.calls.values import number
from pytest_rdma.catalogue.model import Verb
from pytest_rdma.ibv import binding, mirrors, rdmacm

# Fields of an object argument written just before a call ("param.field", value): Call.sets.
Written = tuple[tuple[str, Resolved], ...]


class EndLost(RuntimeError):
    """The end's process is gone or stopped answering: its objects cannot be reached any more."""


@dataclass
class Performed:
    """One call as an end made it: what the record needs, before the check numbers and names it."""

    shown: list[tuple[str, Shown]]
    value: CValue
    errno: int
    route: str
    ok: bool | None
    problem: str
    outs: dict[str, Readback] = field(default_factory=dict)
    owner: str = ""


class End(Protocol):
    """A process where verbs objects live and verbs are called."""

    at: str  # what the Handles it holds carry: "" this process, "peer" the peer host's

    def perform(self, verb: Verb, resolved: Mapping[str, Resolved], written: Written) -> Performed: ...

    def buffer(self, name: str, size: int, seed: int | None) -> Handle: ...

    def struct(self, handle: Handle) -> Readback: ...

    def content(self, handle: Handle, offset: int, length: int) -> bytes: ...

    def readable(self, handle: Handle, timeout: float) -> bool: ...

    def release(self) -> None: ...


_OWNERS: dict[tuple[int, str], str] = {}


def context_of(args: Mapping[str, Resolved]) -> int:
    """The ibv_context a call's first object argument belongs to (0 if none).

    Read before the call: a destroy verb frees the object it is given.
    """
    for value in args.values():
        if isinstance(value, Handle) and value.kind != "buffer":
            return value.address if value.kind == "context" else int(read_object(value).get("context") or 0)
    return 0


def op_owner(route: str, context: int) -> str:
    """Whose code a provider op ran: the file name of the shared object (dladdr), memoised per context.

    libibverbs fills the ops a provider lacks with its own defaults (EOPNOTSUPP), so "provider:<op>"
    alone cannot say whether the provider decided; this can.
    """
    op = route.split(":", 1)[1]
    if not context:
        return ""
    key = (context, op)
    if key not in _OWNERS:
        found = mirrors.op_owner(context, op) or ""
        _OWNERS[key] = found.rsplit("/", 1)[-1]
    return _OWNERS[key]


def _count(value: Resolved) -> int:
    return max(int(cast(int, number(value)) or 0), 0)  # a count parameter's value: a number (or None)


def _read_out(verb: Verb, name: str, obj: object, marshalled: Marshalled) -> Readback:
    """An out parameter as plain data; a `struct X **` naming an element of an array argument becomes its index."""
    ctype = parse_ctype(verb.param(name).ctype)
    if ctype.aggregate and ctype.pointers == 2:
        address = cast(ctypes.c_void_p, obj).value  # the cell marshal allocated for a `struct X **`
        index = marshalled.index_in(ctype.base, address)
        return {"index": index} if index is not None else ({"address": address} if address else None)
    return read_struct(obj)


def _store(verb: Verb, resolved: Mapping[str, Resolved], path: str, value: Resolved) -> None:
    """Write one field of the object passed as a parameter (path "param.field")."""
    name, _, member = path.partition(".")
    handle = resolved.get(name)
    if not isinstance(handle, Handle) or not member or "." in member:
        raise LookupError(f"{verb.name}: {path!r} is not a field of an object argument")
    obj = struct_class(parse_ctype(handle.ctype).base).from_address(handle.address)
    setattr(obj, member, int(cast(int, number(value))))  # a field written before the call: a number


def perform(verb: Verb, resolved: Mapping[str, Resolved], written: Written) -> Performed:
    """Marshal the resolved arguments, call the verb in this process, judge and read back what it gave."""
    for path, value in written:
        _store(verb, resolved, path, value)
    counts = {p.name: _count(resolved.get(p.count)) for p in verb.params if p.count}
    marshalled = marshal([(p.name, p.ctype, p.direction, counts.get(p.name)) for p in verb.params], resolved)
    # Only a header inline (a mirror) calls through a provider op; its object may be freed by the call.
    context = context_of(resolved) if verb.name in binding.MIRRORS else 0
    raw = (rdmacm.call if verb.family == "rdmacm" else binding.call)(verb.name, *marshalled.cargs)
    judged = judge(verb.returns, raw.value, raw.errno)
    return Performed(
        shown=list(marshalled.shown),
        value=raw.value,
        errno=judged.errno if judged.ok is False else raw.errno,
        route=raw.route,
        ok=judged.ok,
        problem=judged.problem,
        outs={name: _read_out(verb, name, obj, marshalled) for name, obj in marshalled.outs.items()},
        owner=op_owner(raw.route, context) if raw.route.startswith("provider:") else "",
    )


def new_buffer(name: str, size: int, seed: int | None) -> Handle:
    """Page-aligned memory (an anonymous mapping), zeroed or filled from `seed`, freed with its Handle."""
    memory = mmap.mmap(-1, max(size, 1))
    if seed is not None:
        memory[:size] = payload(seed, size)
    address = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    return Handle(name, "buffer", "void *", address, size=size, keep=memory, seed=seed)


def memory_of(handle: Handle, offset: int, length: int) -> bytes:
    """`length` bytes of a registered region (an MR's addr) or a buffer, from `offset`."""
    base = handle.address if handle.kind == "buffer" else int(read_object(handle)["addr"])
    return ctypes.string_at(base + offset, length)


def fd_readable(handle: Handle, timeout: float) -> bool:
    """Whether the fd of a channel object (a completion or rdma_cm event channel) is readable within `timeout`."""
    fd = int(read_object(handle)["fd"])
    return bool(select.select([fd], [], [], timeout)[0])


class LocalEnd:
    """This process: calls made here, objects at their addresses here."""

    at = ""

    def perform(self, verb: Verb, resolved: Mapping[str, Resolved], written: Written) -> Performed:
        return perform(verb, resolved, written)

    def buffer(self, name: str, size: int, seed: int | None) -> Handle:
        return new_buffer(name, size, seed)

    def struct(self, handle: Handle) -> Readback:
        return cast(Readback, read_object(handle))

    def content(self, handle: Handle, offset: int, length: int) -> bytes:
        return memory_of(handle, offset, length)

    def readable(self, handle: Handle, timeout: float) -> bool:
        return fd_readable(handle, timeout)

    def release(self) -> None:
        """Nothing: a buffer here is freed with its Handle."""


LOCAL = LocalEnd()
