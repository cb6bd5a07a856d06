"""Claims derived from the catalogue's own data: every enum's outside (issue 25, item 3).

Every input of a verb that draws from an enum of verbs.h gets a claim "enum-outside", written by
no one: a scalar parameter whose `flags` names the enum, and a field of an input struct that
verbs.h types by an enum (FIELD_ENUMS, by struct). For an enum, a value one past its largest
member and a large one; for a set of flags (an enum named *_flags or *_mask), the verb's default
with the lowest bit above the documented ones (a range the header reserves for optional flags,
IBV_ACCESS_OPTIONAL_RANGE, counts as documented) and with bit 31. Each case is the kind
"refused" with that one argument changed: the call fails with EINVAL where the page lists it
(else with an errno the page lists, or any where it names none), and a creating verb makes
nothing (the leak guard sees an object it made).

Left out, each for a reason: a path some claim of the verb already sets outside its enum (the
hand-written unknown-bits and out-of-range claims keep their ids); the movers (ibv_modify_qp,
...), whose fields count only under their mask bit and on a transition that takes them, which
the state-table kind's rules walk; verbs that cannot fail (void, or returning a value, not a
status); and the inputs EXEMPT names, where the page says the outside is not refused.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator, Mapping

from pytest_rdma.catalogue.model import (
    RETURNS_VALUE,
    RETURNS_VOID,
    Cap,
    Claim,
    Expect,
    Flags,
    Source,
    Value,
    Var,
    Verb,
)
from pytest_rdma.ibv import abi
from pytest_rdma.ibv.enums import DEFINES, ENUMS, VALUES

CLAIM = "enum-outside"
INSIDE = "enum-inside"
LARGE = 0x7FFFFFFF  # the largest value a 32-bit field of either sign holds
BIT31 = 31

# The fields of verbs.h's input structs that take an enum's members (the header types some by
# the enum, and names it in a comment beside a uint32_t for the rest: "Use enum ibv_...").
FIELD_ENUMS: Mapping[str, Mapping[str, str]] = {
    "ibv_qp_init_attr": {"qp_type": "ibv_qp_type"},
    "ibv_qp_init_attr_ex": {
        "qp_type": "ibv_qp_type",
        "comp_mask": "ibv_qp_init_attr_mask",
        "create_flags": "ibv_qp_create_flags",
        "send_ops_flags": "ibv_qp_create_send_ops_flags",
    },
    "ibv_srq_init_attr_ex": {"srq_type": "ibv_srq_type", "comp_mask": "ibv_srq_init_attr_mask"},
    "ibv_wq_init_attr": {
        "wq_type": "ibv_wq_type",
        "comp_mask": "ibv_wq_init_attr_mask",
        "create_flags": "ibv_wq_flags",
    },
    "ibv_cq_init_attr_ex": {
        "wc_flags": "ibv_create_cq_wc_flags",
        "comp_mask": "ibv_cq_init_attr_mask",
        "flags": "ibv_create_cq_attr_flags",
    },
    "ibv_ah_attr": {"static_rate": "ibv_rate"},
    "ibv_mw_bind": {"send_flags": "ibv_send_flags", "bind_info.mw_access_flags": "ibv_access_flags"},
    "ibv_flow_attr": {"type": "ibv_flow_attr_type", "flags": "ibv_flow_flags"},
    "ibv_xrcd_init_attr": {"comp_mask": "ibv_xrcd_init_attr_mask"},
    "ibv_qp_open_attr": {"comp_mask": "ibv_qp_open_attr_mask"},
    "ibv_modify_cq_attr": {"attr_mask": "ibv_cq_attr_mask"},
    "ibv_parent_domain_init_attr": {"comp_mask": "ibv_parent_domain_init_attr_mask"},
}

# Fields an input struct's comp_mask gates: without the bit the provider must not read them, so their
# outside says nothing unless the verb's default sets it.
FIELD_GATES: Mapping[str, Mapping[str, str]] = {
    "ibv_qp_init_attr_ex": {
        "send_ops_flags": "IBV_QP_INIT_ATTR_SEND_OPS_FLAGS",
        "create_flags": "IBV_QP_INIT_ATTR_CREATE_FLAGS",
    },
    "ibv_wq_init_attr": {"create_flags": "IBV_WQ_INIT_ATTR_FLAGS"},
    "ibv_cq_init_attr_ex": {"flags": "IBV_CQ_INIT_ATTR_MASK_FLAGS"},
}

# The fields of verbs.h's output structs that report an enum's members: what a provider writes
# there must lie inside the enum (a flag set: no bit beside the documented ones).
OUT_FIELD_ENUMS: Mapping[str, Mapping[str, str]] = {
    "ibv_port_attr": {
        "state": "ibv_port_state",
        "max_mtu": "ibv_mtu",
        "active_mtu": "ibv_mtu",
        "port_cap_flags": "ibv_port_cap_flags",
        "link_layer": "anon:IBV_LINK_LAYER_UNSPECIFIED",
    },
    "ibv_device_attr": {"atomic_cap": "ibv_atomic_cap", "device_cap_flags": "ibv_device_cap_flags"},
    "ibv_gid_entry": {"gid_type": "ibv_gid_type"},
}

# Inputs whose outside the page does not refuse: (verb, path) -> where it says so.
EXEMPT: Mapping[tuple[str, str], str] = {
    ("ibv_query_qp", "attr_mask"): "ibv_query_qp(3) DESCRIPTION: the mask is a hint of what to read at least",
}


def is_flag_set(enum: str) -> bool:
    """An enum whose members are OR-ed together (its name says so: *_flags, *_mask)."""
    return enum.endswith(("_flags", "_mask"))


def documented_bits(enum: str) -> int:
    """Every bit a member of the flag set uses, and a range verbs.h reserves for optional flags."""
    members = ENUMS[enum]
    bits = 0
    for value in members.values():
        bits |= value
    common = os.path.commonprefix(list(members))
    prefix = common[: common.rfind("_") + 1]
    return bits | DEFINES.get(f"{prefix}OPTIONAL_RANGE", 0)


def numeric(value: Value) -> int | None:
    """A catalogue value as the number it stands for, where it is one (flag names, numbers, Flags)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Flags):
        total = sum(VALUES.get(name, 0) for name in value.names)
        for bit in value.bits:
            if not isinstance(bit, int):
                return None
            total |= 1 << bit
        return total
    if isinstance(value, str):
        total = 0
        for part in (p.strip() for p in value.split("|")):
            if part in VALUES:
                total |= VALUES[part]
                continue
            try:
                total |= int(part, 0)
            except ValueError:
                return None
        return total
    return None


def is_outside(enum: str, value: int) -> bool:
    if is_flag_set(enum):
        return bool(value & ~documented_bits(enum))
    return value not in ENUMS[enum].values()


def _axis_values(claim: Claim, name: str) -> Iterator[object]:
    """Every value the claim's axis `name` takes (alone, or zipped with others: a row's item)."""
    for key, values in claim.over.items():
        if key == name:
            yield from values
        elif isinstance(key, tuple) and name in key:
            yield from (row[key.index(name)] for row in values if isinstance(row, tuple))


def _probed(verb: Verb, path: str, enum: str) -> bool:
    """Whether a claim of the verb already calls it with `path` outside the enum."""
    for claim in verb.claims:
        given = _flat(claim.call).get(path)
        if given is None:
            continue
        values = list(_axis_values(claim, given.name)) if isinstance(given, Var) else [given]
        for value in values:
            if isinstance(value, Flags):
                if any(isinstance(bit, Var) for bit in value.bits):
                    return True  # bits from an axis: undocumented ones, by the claim's purpose
                value = numeric(value)
            number = numeric(value) if isinstance(value, (int, str)) else None
            if number is not None and is_outside(enum, number):
                return True
    return False


def _flat(call: Mapping[str, Value], prefix: str = "") -> dict[str, Value]:
    """A call's arguments by dotted path ({"attr": {"comp_mask": 1}} -> {"attr.comp_mask": 1})."""
    out: dict[str, Value] = {}
    for key, value in call.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{path}."))
        out[path] = value
    return out


def _field_bytes(struct: str, path: str) -> int:
    """The size of a (dotted) field of a verbs.h struct, from the ctypes binding; 4 where unknown."""
    kind: object = getattr(abi, struct, None)
    for name in path.split("."):
        kind = {field[0]: field[1] for field in getattr(kind, "_fields_", ())}.get(name)
    return ctypes.sizeof(kind) if isinstance(kind, type) and issubclass(kind, ctypes._SimpleCData) else 4


def _with_bit(default: Value, bit: int) -> Value:
    """The default with one more bit: written as flag names and a bit number where the default is names."""
    if isinstance(default, str) and numeric(default) is not None:
        return Flags(tuple(p.strip() for p in default.split("|") if p.strip() in VALUES), bits=(bit,))
    return (numeric(default) or 0) | (1 << bit)


def outside_values(enum: str, default: Value, size: int = 4) -> list[tuple[str, Value]]:
    """(case name, value) pairs outside `enum`: past its members, or beside its documented bits."""
    if is_flag_set(enum):
        known = documented_bits(enum)
        width = min(size * 8, 32)
        bits = [("bit-beyond", known.bit_length())] if known.bit_length() < width else []
        if width == 32 and known.bit_length() != BIT31 and not known & (1 << BIT31):
            bits.append(("bit31", BIT31))
        return [(name, _with_bit(default, bit)) for name, bit in bits]
    largest = max(ENUMS[enum].values())
    large = LARGE if size >= 4 else (1 << (size * 8)) - 1  # a narrower field's largest value
    cases: list[tuple[str, Value]] = [("beyond", largest + 1)]
    if large > largest + 1:
        cases.append(("large", large))
    return cases


def _shared_needs(verb: Verb, params: set[str]) -> tuple[Cap, ...]:
    """What every hand-written refusal of these parameters needs the device to advertise (ibv_create_flow:
    flow steering): a derived refusal of the same parameters is checked on the same devices."""
    shared: tuple[Cap, ...] | None = None
    for claim in verb.claims:
        if claim.kind == "refused" and {key.split(".")[0] for key in claim.call} & params:
            shared = claim.needs if shared is None else tuple(cap for cap in shared if cap in claim.needs)
    return shared or ()


def _inputs(verb: Verb) -> Iterator[tuple[str, str, Value, int]]:
    """(path, enum, default, field size) of every enum-typed input of the verb."""
    for param in verb.params:
        if param.direction == "out":
            continue
        if "*" not in param.ctype:
            if param.flags in ENUMS:
                yield param.name, param.flags, param.default, 4
            continue
        struct = _struct_name(param.ctype)
        defaults = _flat(param.default) if isinstance(param.default, Mapping) else {}
        gates = FIELD_GATES.get(struct, {})
        for field, enum in FIELD_ENUMS.get(struct, {}).items():
            if field in gates and not (numeric(defaults.get("comp_mask", 0)) or 0) & VALUES[gates[field]]:
                continue
            if enum in ENUMS:
                yield f"{param.name}.{field}", enum, defaults.get(field, 0), _field_bytes(struct, field)


def derived_claims(verb: Verb) -> tuple[Claim, ...]:
    """The verb's claims derived from its enum-typed inputs and outputs."""
    return (*_outside_claims(verb), *_inside_claims(verb))


def _struct_name(ctype: str) -> str:
    return ctype.replace("const ", "").replace("struct ", "").replace("*", "").strip()


def _inside_claims(verb: Verb) -> tuple[Claim, ...]:
    """What the verb writes into an output struct's enum-typed fields lies inside each enum."""
    rows: list[tuple[str, object]] = []
    enums: list[str] = []
    for param in verb.params:
        if param.direction != "out" or "*" not in param.ctype:
            continue
        for field, enum in OUT_FIELD_ENUMS.get(_struct_name(param.ctype), {}).items():
            allowed = documented_bits(enum) if is_flag_set(enum) else tuple(sorted(set(ENUMS[enum].values())))
            rows.append((f"{param.name}.{field}", allowed))
            enums.append(enum)
    if not rows:
        return ()
    return (
        Claim(
            INSIDE,
            "succeeds",
            "what the provider reports in a field verbs.h types by an enum is one of its members (a set of "
            "flags: no bit beside the documented ones)",
            "DESCRIPTION",
            over={("field", "allowed"): tuple(rows)},
            variant="{field}",
            expect=(Expect("{field}", "inside", Var("allowed")),),
            also=tuple(Source("header", f"verbs.h enum {enum.removeprefix('anon:')}") for enum in dict.fromkeys(enums)),
        ),
    )


def _outside_claims(verb: Verb) -> tuple[Claim, ...]:
    """Every enum-typed input given a value outside its enum: refused (none for a mover or a verb that cannot fail)."""
    if verb.returns in (RETURNS_VOID, RETURNS_VALUE) or "walk" in verb.tables:
        return ()
    rows: list[tuple[str, str, Value]] = []
    enums: list[str] = []
    for path, enum, default, size in _inputs(verb):
        if (verb.name, path) in EXEMPT or _probed(verb, path, enum):
            continue
        for name, value in outside_values(enum, default, size):
            rows.append((path, name, value))
        if enum not in enums:
            enums.append(enum)
    if not rows:
        return ()
    listed = {error.errno for error in verb.errors}
    return (
        Claim(
            CLAIM,
            "refused",
            "an input outside the enum verbs.h gives for it (a value past its members, a flag bit beside the "
            "documented ones) is refused, and a creating verb makes nothing",
            "DESCRIPTION",
            over={("field", "outside", "value"): tuple(rows)},
            variant="{field}-{outside}",
            call={"{field}": Var("value")},
            errnos=("EINVAL",) if "EINVAL" in listed else (),
            needs=_shared_needs(verb, {path.split(".")[0] for path, _, _ in rows}),
            also=tuple(Source("header", f"verbs.h enum {enum}") for enum in enums),
        ),
    )
