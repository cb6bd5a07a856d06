"""Typed readers of what the call layer read back from the device (a struct's fields, an out parameter,
a device fact): the shape a kind expects, checked, instead of a cast that would let a wrong one through."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_rdma.calls.record import Call, Handle, Readback, Struct


def number(value: object, what: str = "a value read back") -> int:
    """A number read back: a field of a struct, a device attribute, a verb's integer result."""
    if isinstance(value, int):
        return value
    raise TypeError(f"{what}: {value!r} is not a number")


def struct(value: object, what: str = "a value read back") -> Struct:
    """A C struct read back: its fields by name."""
    if isinstance(value, Mapping):
        return value
    raise TypeError(f"{what}: {value!r} is not a struct")


def at(value: Readback, *keys: str) -> Readback:
    """The field at `keys` of a struct read back (struct ibv_qp_init_attr: "cap", "max_send_wr")."""
    for depth, key in enumerate(keys):
        value = struct(value, ".".join(keys[:depth]) or "the struct read back")[key]
    return value


def number_at(value: Readback, *keys: str) -> int:
    """The number at `keys` of a struct read back."""
    return number(at(value, *keys), ".".join(keys))


def handle(value: object, what: str = "an object") -> Handle:
    """An object the check holds (a verb's result, a pair's QP ex): never NULL where this is asked."""
    if isinstance(value, Handle):
        return value
    raise TypeError(f"{what}: {value!r} is not an object the check holds")


def made(call: Call) -> Handle:
    """The object a successful producing call made (its result)."""
    return handle(call.result, f"what {call.verb} made")
