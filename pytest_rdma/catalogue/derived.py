"""Claims derived from the catalogue's own data: every enum's outside (issue 25, item 3).

Every input of a verb that draws from an enum of verbs.h gets a claim "enum-outside", written by
no one: a scalar parameter whose `flags` names the enum, and a field of an input struct that
verbs.h types by an enum (FIELD_ENUMS, by struct). For an enum, a value one past its largest
member and a large one; for a set of flags (an enum named *_flags or *_mask), the verb's default
with the lowest bit above the documented ones (a range the header reserves for optional flags,
IBV_ACCESS_OPTIONAL_RANGE, counts as documented) and with bit 31. Each case is run the way the verb
refuses: the kind "refused" with that one argument changed (the call fails with EINVAL where the
page lists it, else with an errno the page lists, or any where it names none; a creating verb makes
nothing, as the leak guard sees); a mover's field (ibv_modify_qp's attr) by the state-table rule
"enum-outside", on the first move that takes its mask bit, the object read back unchanged; a send
WR's field by "post-refused", in a list, *bad_wr at it. Output fields a query writes get
"enum-inside"; a completion's and an async event's enum fields are judged on every one read
(REPORTED_ENUMS, reported_outside).

census() lists every enum-typed argument and field with the reason no derived claim judges it,
where none does: a hand-written claim already sets it outside its enum (its id keeps it), a
mask bit the default leaves off gates it, the verb cannot fail, or NOT_DERIVED names why.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pytest_rdma.catalogue.model import (
    IB_TRANSPORTS,
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

# The fields of verbs.h's input structs that take an enum's members (the header types some by the
# enum, and names it in a comment beside a uint32_t for the rest: "Use enum ibv_...").
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
    "ibv_wq_attr": {
        "attr_mask": "ibv_wq_attr_mask",
        "wq_state": "ibv_wq_state",
        "curr_wq_state": "ibv_wq_state",
        "flags": "ibv_wq_flags",
        "flags_mask": "ibv_wq_flags",
    },
    "ibv_cq_init_attr_ex": {
        "wc_flags": "ibv_create_cq_wc_flags",
        "comp_mask": "ibv_cq_init_attr_mask",
        "flags": "ibv_create_cq_attr_flags",
    },
    "ibv_ah_attr": {"static_rate": "ibv_rate"},
    "ibv_qp_attr": {
        "qp_state": "ibv_qp_state",
        "cur_qp_state": "ibv_qp_state",
        "path_mtu": "ibv_mtu",
        "path_mig_state": "ibv_mig_state",
        "qp_access_flags": "ibv_access_flags",
        "ah_attr.static_rate": "ibv_rate",
        "alt_ah_attr.static_rate": "ibv_rate",
    },
    "ibv_send_wr": {"opcode": "ibv_wr_opcode", "send_flags": "ibv_send_flags"},
    "ibv_ops_wr": {"opcode": "ibv_ops_wr_opcode"},
    "ibv_mw_bind": {"send_flags": "ibv_send_flags", "bind_info.mw_access_flags": "ibv_access_flags"},
    "ibv_flow_attr": {"type": "ibv_flow_attr_type", "flags": "ibv_flow_flags"},
    "ibv_flow_action_esp_attr": {
        "comp_mask": "ibv_flow_action_esp_mask",
        "keymat_proto": "ibv_flow_action_esp_keymat",
        "replay_proto": "ibv_flow_action_esp_replay",
    },
    "ibv_counter_attach_attr": {"counter_desc": "ibv_counter_description"},
    "ibv_xrcd_init_attr": {"comp_mask": "ibv_xrcd_init_attr_mask"},
    "ibv_qp_open_attr": {"comp_mask": "ibv_qp_open_attr_mask", "qp_type": "ibv_qp_type"},
    "ibv_modify_cq_attr": {"attr_mask": "ibv_cq_attr_mask"},
    "ibv_parent_domain_init_attr": {"comp_mask": "ibv_parent_domain_init_attr_mask"},
}

# Fields a mask of the same struct gates: without the bit the provider must not read them, so their
# outside says nothing unless the verb's default sets it. (mask field, bit) by field.
FIELD_GATES: Mapping[str, Mapping[str, tuple[str, str]]] = {
    "ibv_qp_init_attr_ex": {
        "send_ops_flags": ("comp_mask", "IBV_QP_INIT_ATTR_SEND_OPS_FLAGS"),
        "create_flags": ("comp_mask", "IBV_QP_INIT_ATTR_CREATE_FLAGS"),
    },
    "ibv_wq_init_attr": {"create_flags": ("comp_mask", "IBV_WQ_INIT_ATTR_FLAGS")},
    "ibv_wq_attr": {
        "curr_wq_state": ("attr_mask", "IBV_WQ_ATTR_CURR_STATE"),
        "flags": ("attr_mask", "IBV_WQ_ATTR_FLAGS"),
        "flags_mask": ("attr_mask", "IBV_WQ_ATTR_FLAGS"),
    },
    "ibv_cq_init_attr_ex": {"flags": ("comp_mask", "IBV_CQ_INIT_ATTR_MASK_FLAGS")},
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
    "ibv_qp_attr": {"qp_state": "ibv_qp_state", "cur_qp_state": "ibv_qp_state"},
    "ibv_qp_init_attr": {"qp_type": "ibv_qp_type"},
}

# What a provider reports in the records the data-path kinds read anyway (a completion polled, an async
# event taken): each of these fields must lie inside its enum, judged on every record read
# (reported_outside), not by a claim of its own. A completion in error is valid only in wr_id, status,
# qp_num and vendor_err (ibv_poll_cq(3) DESCRIPTION): its other fields are judged only on success.
REPORTED_ENUMS: Mapping[str, Mapping[str, str]] = {
    "ibv_wc": {"status": "ibv_wc_status", "opcode": "ibv_wc_opcode", "wc_flags": "ibv_wc_flags"},
    "ibv_async_event": {"event_type": "ibv_event_type"},
}
_SUCCESS = {"ibv_wc": ("status", VALUES["IBV_WC_SUCCESS"])}

# Structs a caller never fills: objects libibverbs made and owns, whose enum-typed fields (an ibv_qp's
# state and qp_type, an ibv_mw's type) the library writes and no verb reads from the caller.
OBJECTS = frozenset({"ibv_device", "ibv_qp", "ibv_mw", "ibv_wq", "ibv_cq_ex"})

# Enum-typed inputs and outputs no derived claim judges, each with where it is (or why it cannot be) judged.
NOT_DERIVED: Mapping[tuple[str, str], str] = {
    ("ibv_query_qp", "attr_mask"): "ibv_query_qp(3) DESCRIPTION: the mask is a hint of what to read at least",
    ("ibv_modify_qp", "attr_mask"): "claim 'unknown-mask-bits' (state-table) sets bits beside the mask's flags",
    ("ibv_ack_async_event", "event.event_type"): "the event ibv_get_async_event wrote, handed back: not an input",
    ("ibv_create_ah_from_wc", "wc.status"): "a completion ibv_poll_cq wrote, handed back: not an input",
    ("ibv_create_ah_from_wc", "wc.opcode"): "a completion ibv_poll_cq wrote, handed back: not an input",
    ("ibv_init_ah_from_wc", "wc.status"): "a completion ibv_poll_cq wrote, handed back: not an input",
    ("ibv_init_ah_from_wc", "wc.opcode"): "a completion ibv_poll_cq wrote, handed back: not an input",
    ("ibv_modify_qp", "attr.alt_ah_attr.static_rate"): "read only under IBV_QP_ALT_PATH, which alt-path's "
    "capability gate decides (IBV_DEVICE_AUTO_PATH_MIG)",
    ("ibv_query_qp", "attr.path_mtu"): "set by INIT>RTR only: a query of a new QP reads no value the page defines",
    ("ibv_query_qp", "attr.path_mig_state"): "meaningful with automatic path migration only (IBV_QP_PATH_MIG_STATE)",
    **{
        (verb, f"{param}.{field}"): f"judged on every {struct} a check reads (REPORTED_ENUMS): no claim of its own"
        for verb, param, struct in (
            ("ibv_poll_cq", "wc", "ibv_wc"),
            ("ibv_get_async_event", "event", "ibv_async_event"),
        )
        for field in REPORTED_ENUMS[struct]
    },
    ("ibv_post_srq_ops", "wr.opcode"): "on the basic SRQ the catalogue makes, every opcode is refused "
    "(needs-tag-matching-srq): an opcode outside the enum could not be told from that refusal",
    **{
        ("ibv_modify_flow_action_esp", f"esp.{field}"): "needs an ESP action, which no check can create here "
        "(ibv_create_flow_action_esp's claim 'creates-action'): the same fields' outsides are "
        "ibv_create_flow_action_esp's"
        for field in ("comp_mask", "keymat_proto", "replay_proto")
    },
    ("ibv_post_srq_ops", "bad_wr.opcode"): "an output pointer into the caller's list: not a field written",
    ("ibv_query_gid_table", "entries.gid_type"): "an array the verb fills, read back as raw bytes: the same "
    "entry's gid_type is judged by ibv_query_gid_ex's enum-inside",
    ("ibv_post_send", "bad_wr.opcode"): "an output pointer into the caller's list: not a field written",
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


def reported_outside(struct: str, record: Mapping[str, object]) -> tuple[str, int] | None:
    """The first field of a record the provider wrote (REPORTED_ENUMS) outside its enum, with its value."""
    gate = _SUCCESS.get(struct)
    for field, enum in REPORTED_ENUMS[struct].items():
        if gate and field != gate[0] and record.get(gate[0]) != gate[1]:
            continue
        value = record.get(field)
        if isinstance(value, int) and is_outside(enum, value):
            return field, value
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


def _probed(verb: Verb, path: str, enum: str) -> str:
    """The id of a claim of the verb that already calls it with `path` outside the enum ("" if none)."""
    for claim in verb.claims:
        given = _flat(claim.call).get(path)
        if given is None:
            continue
        values = list(_axis_values(claim, given.name)) if isinstance(given, Var) else [given]
        for value in values:
            if isinstance(value, Flags):
                if any(isinstance(bit, Var) for bit in value.bits):
                    return claim.id  # bits from an axis: undocumented ones, by the claim's purpose
                value = numeric(value)
            number = numeric(value) if isinstance(value, (int, str)) else None
            if number is not None and is_outside(enum, number):
                return claim.id
    return ""


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


@dataclass(frozen=True)
class EnumField:
    """An enum-typed argument or struct field a verb reads (`in`) or writes (`out`), and why no derived
    claim judges it (`skip`, "" where one does)."""

    path: str  # the argument, or the dotted field under it ("attr.path_mtu")
    enum: str
    default: Value
    size: int  # bytes of the C field
    direction: str
    skip: str = ""


def census(verb: Verb) -> Iterator[EnumField]:
    """Every enum-typed argument and struct field of the verb the catalogue names, in parameter order."""
    for param in verb.params:
        if "*" not in param.ctype:
            if param.direction != "out" and param.flags in ENUMS:
                yield _judged(verb, EnumField(param.name, param.flags, param.default, 4, "in"))
            continue
        struct = _struct_name(param.ctype)
        if struct in OBJECTS:
            continue
        direction = "out" if param.direction == "out" else "in"
        table = OUT_FIELD_ENUMS if direction == "out" else FIELD_ENUMS
        defaults = _flat(param.default) if isinstance(param.default, Mapping) else {}
        for field, enum in table.get(struct, {}).items():
            if enum not in ENUMS:
                continue
            path = f"{param.name}.{field}"
            found = EnumField(path, enum, defaults.get(field, 0), _field_bytes(struct, field), direction)
            gate = FIELD_GATES.get(struct, {}).get(field)
            if direction == "in" and gate and not (numeric(defaults.get(gate[0], 0)) or 0) & VALUES[gate[1]]:
                found = dataclasses.replace(found, skip=f"read only under {gate[0]} bit {gate[1]}, off by default")
            yield _judged(verb, found)


def _judged(verb: Verb, found: EnumField) -> EnumField:
    """The field with the reason no derived claim judges it, where there is one."""
    if found.skip:
        return found
    why = NOT_DERIVED.get((verb.name, found.path), "")
    if not why and found.direction == "in":
        if verb.returns in (RETURNS_VOID, RETURNS_VALUE):
            why = "the verb cannot fail (it returns nothing or a value, not a status): nothing to refuse"
        else:
            probing = _probed(verb, found.path, found.enum)
            why = f"claim {probing!r} sets it outside the enum" if probing else ""
    return dataclasses.replace(found, skip=why)


def derived_claims(verb: Verb) -> tuple[Claim, ...]:
    """The verb's claims derived from its enum-typed inputs and outputs."""
    fields = list(census(verb))
    inputs = [f for f in fields if f.direction == "in" and not f.skip]
    outputs = [f for f in fields if f.direction == "out" and not f.skip]
    return (*_outside_claims(verb, inputs), *_inside_claims(outputs))


def _struct_name(ctype: str) -> str:
    return ctype.replace("const ", "").replace("struct ", "").replace("*", "").strip()


def _headers(fields: list[EnumField]) -> tuple[Source, ...]:
    return tuple(
        Source("header", f"verbs.h enum {enum.removeprefix('anon:')}") for enum in dict.fromkeys(f.enum for f in fields)
    )


def _inside_claims(outputs: list[EnumField]) -> tuple[Claim, ...]:
    """What the verb writes into an output struct's enum-typed fields lies inside each enum."""
    if not outputs:
        return ()
    rows = tuple((f.path, _allowed(f.enum)) for f in outputs)
    return (
        Claim(
            INSIDE,
            "succeeds",
            "what the provider reports in a field verbs.h types by an enum is one of its members (a set of "
            "flags: no bit beside the documented ones)",
            "DESCRIPTION",
            over={("field", "allowed"): rows},
            variant="{field}",
            expect=(Expect("{field}", "inside", Var("allowed")),),
            also=_headers(outputs),
        ),
    )


def _allowed(enum: str) -> object:
    """What a reported value of the enum may be: its members, or (a flag set) its documented bits."""
    return documented_bits(enum) if is_flag_set(enum) else tuple(sorted(set(ENUMS[enum].values())))


def _outside_rows(inputs: list[EnumField]) -> tuple[tuple[str, str, Value], ...]:
    return tuple((f.path, name, value) for f in inputs for name, value in outside_values(f.enum, f.default, f.size))


def _outside_claims(verb: Verb, inputs: list[EnumField]) -> tuple[Claim, ...]:
    """Every enum-typed input given a value outside its enum: refused, in the way the verb refuses."""
    if not inputs:
        return ()
    if "walk" in verb.tables:
        return _mover_claims(verb, inputs)
    posted = [f for f in inputs if f.path.startswith(f"{WR_PARAM}.") and verb.name == POST_SEND]
    called = [f for f in inputs if f not in posted]
    claims = []
    if called:
        claims.append(_refused_claim(verb, called))
    if posted:
        claims.append(_posted_claim(posted))
    return tuple(claims)


def _refused_claim(verb: Verb, inputs: list[EnumField]) -> Claim:
    """The call with one input outside its enum fails (EINVAL where the page lists it), and a creating
    verb makes nothing (the leak guard sees an object it made)."""
    listed = {error.errno for error in verb.errors}
    return Claim(
        CLAIM,
        "refused",
        "an input outside the enum verbs.h gives for it (a value past its members, a flag bit beside the "
        "documented ones) is refused, and a creating verb makes nothing",
        "DESCRIPTION",
        over={("field", "outside", "value"): _outside_rows(inputs)},
        variant="{field}-{outside}",
        call={"{field}": Var("value")},
        errnos=("EINVAL",) if "EINVAL" in listed else (),
        needs=_shared_needs(verb, {f.path.split(".")[0] for f in inputs}),
        also=_headers(inputs),
    )


POST_SEND, WR_PARAM = "ibv_post_send", "wr"


def _posted_claim(inputs: list[EnumField]) -> Claim:
    """A send WR with one field outside its enum, in the middle of a list: the post fails with *bad_wr at
    it and only the WRs before it posted; or (the page lets a provider find a bad WR when it executes it)
    the post takes it, which decides nothing."""
    rows = tuple(
        (f.path.removeprefix(f"{WR_PARAM}."), name, numeric(value) or 0)
        for f in inputs
        for name, value in outside_values(f.enum, f.default or _SEND_DEFAULTS.get(f.path, 0), f.size)
    )
    return Claim(
        CLAIM,
        "post-refused",
        "a send WR with a field outside the enum verbs.h gives for it (an opcode past its members, a send "
        "flag beside the documented ones) is not posted: the post fails with *bad_wr at it",
        "RETURN VALUE",
        over={"qp_type": ("IBV_QPT_RC",), ("field", "outside", "value"): rows},
        variant="{qp_type}-{field}-{outside}",
        params={"queue": "send", "problem": "outside", "field": Var("field"), "value": Var("value"), "bad": 1},
        also=_headers(inputs),
    )


# The send WR's fields as the data-path kinds post them (ibv_post_send's wr has no catalogue default).
_SEND_DEFAULTS: Mapping[str, Value] = {"wr.opcode": "IBV_WR_SEND", "wr.send_flags": "IBV_SEND_SIGNALED"}


def _mover_claims(verb: Verb, inputs: list[EnumField]) -> tuple[Claim, ...]:
    """A mover's field counts only under its mask bit and on a move that takes it: the state-table kind
    walks a fresh object to the first step that takes the bit and gives the field outside its enum there,
    and judges the call refused and the object read back unchanged."""
    walk = verb.tables["walk"]
    attr = f"{walk['attr_param']}."
    known = {(field, bad) for _, field, bad, *_ in verb.tables.get("out_of_range", ())}
    rows = []
    for f in inputs:
        if not f.path.startswith(attr):
            continue
        field = f.path.removeprefix(attr)
        flag = next(flag for flag, values in walk["values"].items() if field.split(".")[0] in values)
        default = walk["values"][flag].get(field, 0)
        for name, value in outside_values(f.enum, default, f.size):
            number = numeric(value) or 0
            if (field, number) not in known:
                rows.append((flag, field, name, number))
    if not rows:
        return ()
    return (
        Claim(
            CLAIM,
            "state-table",
            "an attribute outside the enum verbs.h gives for it (a value past its members, a flag bit beside "
            "the documented ones), under its mask bit on a move that takes it, makes the attributes invalid: "
            "the call fails and modifies nothing",
            "NOTES",
            params={"rule": "enum-outside", "outside": tuple(rows)},
            transports=IB_TRANSPORTS,  # the walk's required attributes are the IB state table's
            also=_headers(inputs),
        ),
    )
