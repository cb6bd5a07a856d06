"""Concrete values <-> ctypes, by the C type of each parameter as the verb's entry spells it.

A struct parameter given as a mapping of dotted field paths is built into the abi's struct
(zeroed first, so only the fields named carry meaning) and passed by address; an out
parameter is allocated here and read back after the call into plain nested dicts, which is
what expectations and reports read. Pointers travel as addresses (ints), as the binding's
prototypes take them.
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pytest_rdma.calls.record import ArrayArg, Field, Handle, OutArg, StructArg, Sym
from pytest_rdma.calls.values import number
from pytest_rdma.catalogue.model import Array
from pytest_rdma.ibv import abi, rdmacm_abi

_SCALAR_OUTS = {
    "int": ctypes.c_int,
    "uint8_t": ctypes.c_uint8,
    "uint16_t": ctypes.c_uint16,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "__be64": ctypes.c_uint64,
    "size_t": ctypes.c_size_t,
}


@dataclass(frozen=True)
class CType:
    """A parameter's C type, parsed: `struct ibv_qp_attr *` -> base "ibv_qp_attr", 1 pointer."""

    text: str
    base: str  # "ibv_qp_attr", "int", "void", "char"
    aggregate: bool  # a struct or union
    pointers: int

    @property
    def c_name(self) -> str:
        """The aggregate's C spelling: "struct ibv_qp_attr" / "union ibv_gid"."""
        keyword = "union" if self.text.replace("const", "").strip().startswith("union") else "struct"
        return f"{keyword} {self.base}" if self.aggregate else self.base


def parse_ctype(text: str) -> CType:
    bare = " ".join(text.replace("const", " ").split())
    pointers = bare.count("*")
    words = bare.replace("*", " ").split()
    aggregate = words[0] in ("struct", "union")
    base = words[1] if aggregate else " ".join(words)
    return CType(text, base, aggregate, pointers)


def struct_class(name: str) -> Any:
    """The ctypes class of a struct of verbs.h (ibv/abi) or of rdma_cma.h (ibv/rdmacm_abi)."""
    for module in (abi, rdmacm_abi):
        found = getattr(module, name, None)
        if found is not None:
            return found
    raise LookupError(f"the ctypes binding has no struct {name} (pytest_rdma/ibv/abi, rdmacm_abi)")


def _items(value: Any) -> bool:
    """Whether a value is a list of structs (a tuple of field mappings)."""
    return isinstance(value, tuple) and bool(value) and all(isinstance(item, Mapping) for item in value)


def pointee(owner: Any, field: str) -> str | None:
    """The struct a pointer field points to, from the binding's record of its C type ("struct ibv_sge *")."""
    hint = getattr(type(owner), "_c_", {}).get(field, "")
    bare = hint.replace("const ", "").strip()
    if bare.startswith("struct ") and bare.endswith("*") and bare.count("*") == 1:
        return bare[len("struct ") : -1].strip()
    return None


def build_array(name: str, items: tuple[Mapping[str, Any], ...], keep: list[Any]) -> tuple[Any, ArrayArg]:
    """An array of abi structs filled from `items`; chained through `next` when the struct is a list node."""
    cls = struct_class(name)
    array = (cls * len(items))()
    records = []
    for element, fields in zip(array, items):
        _, shown = _filled(name, fields, element, keep)
        records.append(StructArg(f"struct {name}", shown))
    chained = getattr(cls, "_c_", {}).get("next", "") == f"struct {name} *"
    if chained:
        for element, following in zip(array, array[1:]):
            element.next = ctypes.addressof(following)
    keep.append(array)
    return array, ArrayArg(f"struct {name}", tuple(records), chained)


def array_memory(value: Array) -> Any:
    """The ctypes memory an Array lays out: pointers (addresses), or the bytes themselves."""
    if isinstance(value.items, bytes):
        return (ctypes.c_uint8 * max(len(value.items), 1)).from_buffer_copy(value.items.ljust(1, b"\0"))
    # Each item resolved: an object (Handle), a field of one or a number, whose number is an address.
    return (ctypes.c_void_p * max(len(value.items), 1))(
        *(cast("int | None", number(item)) or None for item in value.items)
    )


def _set_field(target: Any, path: str, value: Any, keep: list[Any]) -> Any:
    """Set one field by its dotted path; what the record shows for it (a list of structs: its ArrayArg)."""
    parts = path.split(".")
    for part in parts[:-1]:
        target = getattr(target, part)
    last = parts[-1]
    if value == () and pointee(target, last) is not None:
        setattr(target, last, None)  # an empty list of structs: a NULL pointer (a WR with no SGEs)
        return None
    if _items(value):
        name = pointee(target, last)
        if name is None:
            raise ValueError(f"{path} is not a pointer to a struct: cannot pass a list of structs")
        array, record = build_array(name, value, keep)
        setattr(target, last, ctypes.addressof(array))
        return record
    current = getattr(target, last)
    if isinstance(value, Array):
        # Memory a pointer member points to; `keep` holds it as long as the struct lives.
        memory = array_memory(value)
        keep.append(memory)
        setattr(target, last, ctypes.addressof(memory))
        return value
    if isinstance(value, (bytes, bytearray)) and isinstance(current, (ctypes.Array, ctypes.Structure, ctypes.Union)):
        # A raw GID, a MAC address: copied over the field's bytes.
        size = ctypes.sizeof(current)
        if len(value) > size:
            raise ValueError(f"{path}: {len(value)} bytes do not fit in {size}")
        ctypes.memmove(ctypes.addressof(current), bytes(value), len(value))
        return value
    setattr(target, last, number(value) if value is not None else 0)
    if type(value) is not int and isinstance(value, int) and not isinstance(value, bool):
        # What C got is a number: an IntEnum (socket.AF_INET in a sockaddr) is recorded as one, since its
        # repr (<AddressFamily.AF_INET: 2>) is neither C nor Python for the reproducers.
        return int(value)
    return value


TRAILING = "specs"  # a struct followed in memory by further structs, as ibv_flow_attr and its specs
AS_STRUCT = "$struct"  # a struct passed where the prototype names another (sockaddr_in as sockaddr)


def _filled(
    name: str, fields: Mapping[str, Any], into: Any, keep: list[Any]
) -> tuple[Any, tuple[tuple[str, Any], ...]]:
    """A struct filled from `fields` (the arrays it points to appended to `keep`), and its fields' record."""
    obj = into if into is not None else struct_class(name)()
    shown = []
    for path, value in fields.items():
        try:
            shown.append((path, _set_field(obj, path, value, keep)))
        except (AttributeError, TypeError, ValueError) as exc:
            raise LookupError(f"struct {name}: cannot set {path} = {value!r}: {exc}") from None
    return obj, tuple(shown)


def build_struct(name: str, fields: Mapping[str, Any]) -> tuple[Any, StructArg]:
    """A zeroed abi struct with `fields` set, and its record.

    A "specs" entry ((struct name, fields), ...) lays those structs out right after this one,
    in one buffer, and sets the `size` fields the flow API reads: each spec's own, and the
    head's as the size of the whole.
    """
    head_fields = {k: v for k, v in fields.items() if k != TRAILING}
    specs = tuple(fields.get(TRAILING, ()))
    keep: list[Any] = []
    if not specs:
        obj, shown = _filled(name, head_fields, None, keep)
        if keep:
            obj._pytest_rdma_keep = keep  # the arrays it points to must live as long as it does
        return obj, StructArg(f"struct {name}", shown)
    head_type = struct_class(name)
    spec_types = [struct_class(spec_name) for spec_name, _ in specs]
    total = ctypes.sizeof(head_type) + sum(ctypes.sizeof(t) for t in spec_types)
    memory = (ctypes.c_uint8 * total)()
    head, _ = _filled(name, head_fields, head_type.from_buffer(memory), keep)
    if "size" in dict(head_type._fields_) and "size" not in head_fields:
        head.size = total
    offset = ctypes.sizeof(head_type)
    for (spec_name, spec_fields), spec_type in zip(specs, spec_types):
        spec, _ = _filled(spec_name, spec_fields, spec_type.from_buffer(memory, offset), keep)
        if "size" in dict(spec_type._fields_) and "size" not in spec_fields:
            spec.size = ctypes.sizeof(spec_type)
        offset += ctypes.sizeof(spec_type)
    head._pytest_rdma_keep = [memory, *keep]  # the buffer must live as long as the struct that views it
    return head, StructArg(f"struct {name}", tuple(fields.items()))


def read_struct(obj: Any) -> Any:
    """A ctypes value as plain data: structs and unions -> dicts, byte arrays -> bytes."""
    if isinstance(obj, ctypes.Union) and obj._fields_ and _is_bytes(getattr(obj, obj._fields_[0][0])):
        return bytes(getattr(obj, obj._fields_[0][0]))  # a raw union (union ibv_gid): its bytes
    if isinstance(obj, (ctypes.Structure, ctypes.Union)):
        out: dict[str, Any] = {}
        for entry in obj._fields_:
            name = entry[0]
            value = read_struct(getattr(obj, name))
            if name in getattr(obj, "_anonymous_", ()) and isinstance(value, dict):
                out.update(value)  # an anonymous union's members are fields of the parent in C
            out[name] = value
        return out
    if isinstance(obj, ctypes.Array):
        if _is_bytes(obj):
            return bytes(obj)
        return [read_struct(item) for item in obj]
    if isinstance(obj, ctypes._SimpleCData):  # noqa: SLF001 - the one public-enough base of c_int & co
        return obj.value
    return obj


def _is_bytes(obj: Any) -> bool:
    return isinstance(obj, ctypes.Array) and obj._type_ in (ctypes.c_uint8, ctypes.c_char, ctypes.c_ubyte)


def read_object(handle: Handle) -> Any:
    """The C struct an object handle points to, as plain data (a CQ's cqe, a QP's qp_num)."""
    base = parse_ctype(handle.ctype).base
    return read_struct(struct_class(base).from_address(handle.address))


@dataclass
class Marshalled:
    """The C arguments of one call, what the record shows for each, and how to read outs back."""

    cargs: list[Any]
    shown: list[tuple[str, Any]]
    outs: dict[str, Any]  # param name -> ctypes object to read back after the call
    keep: list[Any]  # objects that must outlive the call
    arrays: dict[str, tuple[str, int, int, int]] = field(default_factory=dict)  # param -> (struct, base, size, n)

    def index_in(self, struct: str, address: int | None) -> int | None:
        """Which element of an array argument of `struct` an address points to (*bad_wr), or None."""
        for name, base, size, count in self.arrays.values():
            if name == struct and address and base <= address < base + size * count:
                return (address - base) // size
        return None


def marshal(params: list[tuple[Any, ...]], values: Mapping[str, Any]) -> Marshalled:
    """`params` are (name, ctype, direction[, entries of an out array]); `values` the resolved value of each."""
    result = Marshalled([], [], {}, [])
    for name, ctype_text, direction, *more in params:
        count = more[0] if more else None
        ctype = parse_ctype(ctype_text)
        value = values.get(name)
        if count is not None and direction == "out" and ctype.aggregate:
            array = (struct_class(ctype.base) * max(int(count), 1))()
            result.keep.append(array)
            result.outs[name] = array
            result.cargs.append(ctypes.addressof(array))
            result.shown.append((name, OutArg(f"{ctype.c_name}[{int(count)}]")))
            continue
        carg, shown = _one(name, ctype, direction, value, result)
        result.cargs.append(carg)
        result.shown.append((name, shown))
    return result


def _one(name: str, ctype: CType, direction: str, value: Any, result: Marshalled) -> tuple[Any, Any]:
    record: ArrayArg | StructArg  # what the record shows for an array of structs, or for a struct
    if ctype.pointers == 0:
        return number(value) if value is not None else 0, value if value is not None else 0
    if isinstance(value, Handle):
        return value.address, value
    if value is None and direction == "in":
        return None, None
    if ctype.aggregate and ctype.pointers == 1 and _items(value):
        array, record = build_array(ctype.base, value, result.keep)
        struct = struct_class(ctype.base)
        result.arrays[name] = (ctype.base, ctypes.addressof(array), ctypes.sizeof(struct), len(array))
        return ctypes.addressof(array), record
    if ctype.aggregate and ctype.pointers == 1:
        if isinstance(value, Mapping) or (value is None and direction != "in"):
            # A value may say which struct it really is: a sockaddr_in passed as a struct sockaddr *.
            fields = dict(value or {})
            stands_in = AS_STRUCT in fields
            obj, record = build_struct(str(fields.pop(AS_STRUCT, ctype.base)), fields)
            if stands_in:
                record = dataclasses.replace(record, stands_in=True)  # the replay must build the same struct
            result.keep.append(obj)
            if direction != "in":
                result.outs[name] = obj
            return ctypes.addressof(obj), record if value else OutArg(ctype.c_name)
    if direction == "out" and value is None:
        # A scalar or pointer written by the verb: int *, struct ibv_send_wr **, uint64_t *...
        cell = _SCALAR_OUTS.get(ctype.base, ctypes.c_void_p)() if ctype.pointers == 1 else ctypes.c_void_p()
        result.keep.append(cell)
        result.outs[name] = cell
        return ctypes.addressof(cell), OutArg(ctype.text.replace("*", "", 1).strip())
    if isinstance(value, (int, Sym, Field)):
        # An address given as a number (a deliberately bad pointer), or a field of an object (mr0->addr).
        return number(value), value
    raise LookupError(f"parameter {name} ({ctype.text}): cannot pass {value!r}")
