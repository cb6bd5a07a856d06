"""Catalogue values -> the concrete values of one call.

The catalogue writes arguments as data (pytest_rdma.catalogue.model): flag names, device
facts (Dev), resources (Need), results of earlier steps (Ref), buffers. They are resolved
here, at run time, against a `Scope`: the device under test, the check's resources and the
calls it made so far. Flag names stay readable (`Sym`), so a reproducer shows
IBV_QP_STATE | IBV_QP_PORT, not 33.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Protocol, Union, cast, overload

from pytest_rdma.calls.record import Call, Field, Handle, Readback, Resolved, Sym
from pytest_rdma.catalogue.model import Arg, Array, Buffer, Dev, Flags, Need, Ref, Var
from pytest_rdma.ibv.constants import VALUES

# A flag expression as the catalogue writes it: IBV_* names (or numbers) joined by "|".
_NAME = r"(?:IBV|RDMA)_[A-Z0-9_]+"
_FLAG_EXPR = re.compile(rf"^\s*({_NAME}|0x[0-9a-fA-F]+|\d+)(\s*\|\s*({_NAME}|0x[0-9a-fA-F]+|\d+))*\s*$")


class Scope(Protocol):
    """What values are resolved against: the device, the check's resources and its steps."""

    def fact(self, path: str) -> Readback: ...

    def resource(self, need: Need) -> Handle: ...

    def buffer(self, size: int, seed: int | None = None) -> Handle: ...

    def step(self, name: str) -> Call: ...

    def struct(self, handle: Handle) -> Readback: ...


class Unresolved(LookupError):
    """A value names something this check does not have (a step, a flag): a catalogue mistake."""


def flag_value(name: str) -> int:
    try:
        return VALUES[name]
    except KeyError:
        raise Unresolved(f"unknown flag or enum member {name!r} (not in verbs.h)") from None


def flag_expr(text: str) -> Sym:
    """ "IBV_QP_STATE | IBV_QP_PORT" -> Sym(33, "IBV_QP_STATE | IBV_QP_PORT")."""
    value = 0
    for part in (p.strip() for p in text.split("|")):
        value |= int(part, 0) if part[0].isdigit() else flag_value(part)
    return Sym(value, " | ".join(p.strip() for p in text.split("|")))


def is_flag_expr(text: str) -> bool:
    return bool(_FLAG_EXPR.match(text)) and ("IBV_" in text or "RDMA_" in text)


def flags(value: Flags) -> Sym:
    raw = 0
    for bit in value.bits:
        raw |= 1 << int(cast(int, bit))  # a bit number: an int once substitute() put the axis's value in
    parts = list(value.names) + ([hex(raw)] if raw else [])
    return Sym(sum(flag_value(n) for n in value.names) | raw, " | ".join(parts) or "0")


def read_path(data: object, path: str) -> Resolved:
    """A dotted path into nested mappings (what marshal.read_struct gives) or attributes."""
    for part in [p for p in path.split(".") if p]:
        if isinstance(data, Mapping):
            if part not in data:
                raise Unresolved(f"no field {part!r} (has {', '.join(map(str, data))})")
            data = data[part]
        else:
            data = getattr(data, part)
    # Read-back data, a resolved value or a field of a record (a Handle's address): a resolved value.
    return cast(Resolved, data)


def resolve(value: object, scope: Scope) -> Resolved:
    """The concrete value of a catalogue value (recursively through mappings and tuples)."""
    if isinstance(value, Dev):
        base = scope.fact(value.path)
        return base * value.times + value.plus if isinstance(base, int) else base
    if isinstance(value, Need):
        return scope.resource(value)
    if isinstance(value, Ref):
        call = scope.step(value.step)
        if not value.path:
            return call.result
        root, _, rest = value.path.partition(".")
        if root in call.outs:
            return read_path(call.outs[root], rest)
        if isinstance(call.result, Handle):
            base = int(cast(int, read_path(scope.struct(call.result), value.path)))  # a field of the struct: a number
            return Field(base + value.offset, call.result.name, value.path, value.offset)
        return read_path(call.result, value.path)
    if isinstance(value, Flags):
        return flags(value)
    if isinstance(value, Buffer):
        return scope.buffer(int(cast(int, resolve(value.size, scope))), value.seed)  # a size (int, or a Dev fact)
    if isinstance(value, Array):
        return value if isinstance(value.items, bytes) else Array(tuple(resolve(item, scope) for item in value.items))
    if isinstance(value, str):
        return flag_expr(value) if is_flag_expr(value) else value
    if isinstance(value, Mapping):
        return {key: resolve(item, scope) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(resolve(item, scope) for item in value)
    if isinstance(value, (Var, Arg)):
        raise Unresolved(f"{value!r} reached the call layer unresolved (an axis the claim does not define)")
    return cast(Resolved, value)  # what is left is a literal: an int, bytes, None


@overload
def number(value: Union[Sym, Handle, Field]) -> int: ...


@overload
def number(value: object) -> object: ...


def number(value: object) -> object:
    """The number behind a resolved value (Sym -> int, Handle -> address); others as they are."""
    if isinstance(value, Sym):
        return value.value
    if isinstance(value, Handle):
        return value.address
    if isinstance(value, Field):
        return value.value
    return value
