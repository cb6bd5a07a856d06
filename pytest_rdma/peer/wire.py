"""What crosses the channel to the peer host: the call layer's values as execnet's plain data.

execnet carries only builtins (numbers, text, bytes, lists, tuples, dicts), so each of the call
layer's own types travels as a tuple tagged with its name, and a plain tuple as ("tuple", items).
A Handle travels without what keeps its memory alive: that stays with the process that holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, cast

from pytest_rdma.calls.record import ArrayArg, CValue, Field, Handle, OutArg, Shown, StructArg, Sym
from pytest_rdma.catalogue.model import Array

Wire = object  # what execnet's serializer takes: builtins, nested


class Opened(TypedDict):
    """The peer's answer to opening its device: what a Device is read from here."""

    facts: Wire
    identity: dict[str, str]
    host: str
    pid: int
    ipv4: str
    context: Wire
    device: Wire


class Answer(TypedDict):
    """One call as the peer made it (calls.ends.Performed), its values encoded."""

    shown: Wire
    value: CValue
    errno: int
    route: str
    ok: bool | None
    problem: str
    outs: Wire
    owner: str


def encode(value: object) -> Wire:
    """A resolved, shown or read-back value as builtins."""
    if isinstance(value, Handle):
        return ("Handle", value.name, value.kind, value.ctype, value.address, value.size, value.seed, value.alive)
    if isinstance(value, Sym):
        return ("Sym", value.value, value.text)
    if isinstance(value, Field):
        return ("Field", value.value, value.handle, value.path, value.offset)
    if isinstance(value, Array):
        return ("Array", value.items if isinstance(value.items, bytes) else encode(value.items))
    if isinstance(value, StructArg):
        return ("StructArg", value.ctype, encode(value.fields), value.stands_in)
    if isinstance(value, ArrayArg):
        return ("ArrayArg", value.ctype, encode(value.items), value.chained)
    if isinstance(value, OutArg):
        return ("OutArg", value.ctype)
    if isinstance(value, Mapping):
        return {str(key): encode(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return ("tuple", [encode(item) for item in value])
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)  # an IntEnum (socket.AF_INET in a sockaddr) too: execnet serializes exact types only
    if value is None or isinstance(value, (bool, str, bytes, float)):
        return value
    raise TypeError(f"{type(value).__name__} cannot cross to the peer host")


def decode(value: Wire, at: str = "", known: Mapping[str, Handle] | None = None) -> object:
    """The value `encode` made; Handles say they live `at`, and a Handle named in `known` is that object
    (so that marking an object destroyed marks the one the check holds)."""
    if isinstance(value, tuple):
        tag, *rest = value
        if tag == "Handle":
            name, kind, ctype, address, size, seed, alive = rest
            if known is not None and name in known:
                return known[name]
            return Handle(name, kind, ctype, address, size=size, seed=seed, alive=alive, at=at)
        if tag == "Sym":
            return Sym(*rest)
        if tag == "Field":
            return Field(*rest)
        if tag == "Array":
            items = rest[0]
            return Array(items if isinstance(items, bytes) else cast(tuple[object, ...], decode(items, at, known)))
        if tag == "StructArg":
            return StructArg(rest[0], cast("tuple[tuple[str, Shown], ...]", decode(rest[1], at, known)), rest[2])
        if tag == "ArrayArg":
            return ArrayArg(rest[0], cast("tuple[StructArg, ...]", decode(rest[1], at, known)), rest[2])
        if tag == "OutArg":
            return OutArg(rest[0])
        if tag == "tuple":
            return tuple(decode(item, at, known) for item in rest[0])
        raise ValueError(f"unknown value on the peer channel: {tag!r}")
    if isinstance(value, dict):
        return {key: decode(item, at, known) for key, item in value.items()}
    if isinstance(value, list):
        return [decode(item, at, known) for item in value]
    return value
