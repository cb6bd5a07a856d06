"""The vocabulary of the verb catalogue (pytest_rdma/verbs.py).

Every record here is a small frozen dataclass of plain data: nothing imports pytest, ctypes
or libibverbs, so the catalogue can be loaded, validated and rendered (coverage, reports) on
a host with no RDMA stack at all.

A verb entry says how to call the verb (its parameters, with a default for each), what it
returns and how it fails, and what its page promises (claims). A claim names a kind (how
such a promise is checked) and gives the kind its data: the arguments that vary, what to
expect, which device capability it needs, which transports it applies to and which layer
decides it. Arguments are *values* (below): literals, flag names, or references resolved on
the device at run time, so a claim is data even when its argument depends on the device.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypedDict, Union, cast

# --- how a verb reports failure (each page's RETURN VALUE) -------------------------------
RETURNS_ERRNO = "errno"  # 0 on success, a positive errno value on failure
RETURNS_POINTER = "pointer"  # an object, or NULL with errno set
RETURNS_COUNT = "count"  # >= 0 on success (a count or an index), -1 (negative) on failure
RETURNS_NEG_ERRNO = "neg-errno"  # >= 0 on success, a negative errno value on failure
RETURNS_VOID = "void"  # cannot fail
RETURNS_VALUE = "value"  # a value that is not a status (a string, a rate, a GUID)
# 0 on success, a negative code of the page's own enum on failure (ibv_rereg_mr's
# ibv_rereg_mr_err_code); errno, when set, gives the cause. An expectation reads the code as "ret".
RETURNS_NEG_CODE = "neg-code"
RETURN_CONVENTIONS = (
    RETURNS_ERRNO,
    RETURNS_POINTER,
    RETURNS_COUNT,
    RETURNS_NEG_ERRNO,
    RETURNS_NEG_CODE,
    RETURNS_VOID,
    RETURNS_VALUE,
)
DIRECTIONS = ("in", "out", "inout")

# --- transports a rule applies to --------------------------------------------------------
# "roce" is the InfiniBand transport over Ethernet: IB rules (P_Keys, Q_Keys, the IB QP state
# table) apply to it; iWARP devices are judged by the verbs that iWARP defines, not by those.
TRANSPORTS = ("ib", "roce", "iwarp")
IB_TRANSPORTS = ("ib", "roce")

# --- the layer that decides a claim's outcome -------------------------------------------
# "libibverbs": the library or a static inline of verbs.h answers before any provider code;
# "kernel": uverbs or ib_core answers before the driver; "provider": the user-space provider
# or its kernel driver. Only the provider's verdicts count towards its score.
LAYERS = ("provider", "kernel", "libibverbs")

# --- where a rule comes from -------------------------------------------------------------
SOURCE_KINDS = ("man", "ibta", "iwarp", "kernel", "header")


@dataclass(frozen=True)
class Source:
    """A citation: a man page section, or the IBTA specification, the iWARP RFCs, the kernel."""

    kind: str  # one of SOURCE_KINDS
    ref: str  # "ibv_modify_qp(3)", "IBTA Vol. 1 r1.7 §11.2.5.2", "RFC 5040", "drivers/infiniband/core/verbs.c"
    section: str = ""  # for a man page: "NOTES", "DESCRIPTION", ...

    @property
    def text(self) -> str:
        return f"{self.ref} {self.section}".strip()


# --- values: what an argument, a struct field or an expectation is set to ---------------
@dataclass(frozen=True)
class Need:
    """A resource the call needs, made the one way the catalogue makes that kind.

    `spec` picks among the ways the maker can be parametrized (e.g. {"qp_type": "IBV_QPT_UD"});
    `state` asks for a resource moved to that state first (a QP in "RTS"). Two Needs with the
    same kind, spec, state and `label` in one check are the same object.
    """

    kind: str
    state: str = ""
    spec: Mapping[str, object] = field(default_factory=dict)
    label: str = ""


@dataclass(frozen=True)
class Dev:
    """A fact of the device under test, read at session start: `attr.max_qp_wr`, `port.active_mtu`.

    Roots: attr (ibv_device_attr), attr_ex (ibv_device_attr_ex), port (ibv_port_attr of the
    chosen port), gid (the chosen GID, raw), port_num, gid_index, name, context (what the
    opened struct ibv_context reports: num_comp_vectors). `times` and `plus`
    derive a value from it (a limit + 1 is out of range).
    """

    path: str
    plus: int = 0
    times: int = 1


@dataclass(frozen=True)
class Var:
    """The value of one of the claim's axes (`over`) for this case."""

    name: str


@dataclass(frozen=True)
class Arg:
    """What this call was given at an argument path: an expectation compares with it."""

    path: str


@dataclass(frozen=True)
class Ref:
    """The result of an earlier step of the same check, or a field of it: `Ref("qp", "qp_num")`."""

    step: str
    path: str = ""
    offset: int = 0  # bytes past a field that is an address (a replayed mr0->addr + 16)


@dataclass(frozen=True)
class Flags:
    """An OR of flag names and bit numbers: how a mask with an undefined bit is written."""

    names: tuple[str, ...] = ()
    bits: tuple[object, ...] = ()  # bit numbers (ints, or a Var of an axis)


@dataclass(frozen=True)
class Buffer:
    """Memory the check allocates (page aligned) and frees: `addr` of ibv_reg_mr.

    Zeroed, or with `seed` filled with a payload a C program regenerates from the same seed.
    """

    size: Union[int, Dev, Var]
    seed: int | None = None


@dataclass(frozen=True)
class Array:
    """Memory the check lays out for a struct member that points to it: a C array of `items`.

    A tuple of values (objects, numbers) becomes an array of pointers (`ind_tbl` of
    ibv_rwq_ind_table_init_attr, a table of WQs); bytes become a byte buffer (`rx_hash_key`).
    """

    items: Union[tuple[object, ...], bytes]


Value = object  # int | str (a literal, or IBV_* names joined by "|") | None | Need | Dev | Var | Arg | Ref | ...

# A case's axis values: axis name -> the value this case gives it.
Axes = Mapping[str, Value]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def substitute(data: object, values: Axes) -> object:
    """`data` with each Var of an axis replaced by its value and "{axis}" filled in strings.

    Dataclass values (Dev, Need, Expect, Step, ...) are rebuilt with their fields substituted,
    so "attr.{limit}" in a Dev path or a key "cap.{field}" follows the case.
    """
    # This runs for every value of every call of every check: plain values leave at once, and the
    # usual mappings are known by their exact type before isinstance asks the Mapping ABC.
    kind = type(data)
    if kind in _PLAIN:
        return data
    if isinstance(data, Var):
        return values[data.name] if data.name in values else data
    if isinstance(data, str):
        return _PLACEHOLDER.sub(lambda m: str(values[m[1]]) if m[1] in values else m[0], data) if "{" in data else data
    if kind is dict or kind is MappingProxyType or isinstance(data, Mapping):
        mapping = cast("Mapping[object, object]", data)  # mypy does not narrow by the exact-type tests
        return {substitute(key, values): substitute(value, values) for key, value in mapping.items()}
    if isinstance(data, tuple):
        return tuple(substitute(item, values) for item in data)
    if isinstance(data, list):
        return [substitute(item, values) for item in data]
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        changes = {f.name: substitute(getattr(data, f.name), values) for f in dataclasses.fields(data)}
        return dataclasses.replace(data, **changes)
    return data


_PLAIN = frozenset({int, float, bool, bytes, type(None)})  # values substitute returns as they are


# --- what a check expects ------------------------------------------------------------------
OPS = ("==", "!=", ">=", "<=", ">", "<", "0=>0", "in", "has-once", "distinct", "nonzero", "zero", "inside")


@dataclass(frozen=True)
class Expect:
    """A predicate over what a call returned or wrote: `left op right`.

    `left` is a path into the call's results: "ret" (the return value), "ret.cqe" (a field of the
    object returned), "<param>.<field>" (an out or inout parameter after the call), or
    "<step>.<path>" (a named step's result). `transports` limits it (e.g. 24-bit QP numbers on IB).
    """

    left: str
    op: str
    right: Value = None
    transports: tuple[str, ...] = TRANSPORTS
    ref: str = ""  # the source of this expectation when it is another page's (ibv_query_qp(3) DESCRIPTION)


@dataclass(frozen=True)
class Cap:
    """A capability the device advertises through its attributes: `attr.max_srq` nonzero.

    `test` is "nonzero" (the field, or the masked bits, are set), "zero", or "transport" (the
    device's transport is one of `values`). An unsupported verdict names exactly this.
    """

    attr: str  # "attr.max_srq", "attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW", "port.flags&..."
    test: str = "nonzero"
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    """One call a check makes besides (before or after) the claim's own call."""

    verb: str
    args: Mapping[str, Value] = field(default_factory=dict)
    name: str = ""  # later steps and expectations refer to its result as Ref(name)
    expect: str = "ok"  # "ok" (must succeed), "fails", or "any"
    errnos: tuple[str, ...] = ()  # with "fails": the errnos allowed


# --- a verb's description ------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """One C parameter: its name, C type, direction, and the value a check gives it by default.

    A pointer to a struct is given as a mapping of field paths to values
    ({"cap.max_send_wr": 4, "qp_type": Var("qp_type")}); an out struct is allocated by the
    call layer and read back after the call.
    """

    name: str
    ctype: str
    direction: str = "in"
    default: Value = None
    nullable: bool = False
    flags: str | None = None  # for a mask or enum: the enum of verbs.h it draws from
    doc: str = ""
    count: str = ""  # for an out array: the parameter that gives its number of entries (ibv_poll_cq's wc)


@dataclass(frozen=True)
class Error:
    """An errno the page lists, its condition, and the claims that provoke it (or why none can)."""

    errno: str
    when: str
    covered_by: tuple[str, ...] = ()  # claim ids of the same verb
    untestable: str = ""


@dataclass(frozen=True)
class Claim:
    """A testable promise of the page, paraphrased in our own words.

    `kind` names how it is checked (pytest_rdma.kinds); `over` gives the axes its cases span
    (each axis a tuple of values; a tuple of names as the key zips several axes) and `variant`
    the case name built from them ("{qp_type}-{field}"); `call` the arguments of the verb's
    call that differ from the defaults (keys may use "{axis}"); `expect` what must hold after
    it; `errnos` the errnos a refusal may carry; `needs` the capabilities the device must
    advertise; `steps` calls made before the claim's own call. Kind-specific data is in
    `params`. A claim no check can exercise has kind "untestable" and says why.
    """

    id: str
    kind: str
    says: str
    section: str  # the section of this verb's page, without the page name: "NOTES"
    over: Mapping[object, tuple[object, ...]] = field(default_factory=dict)
    variant: str = ""
    call: Mapping[str, Value] = field(default_factory=dict)
    expect: tuple[Expect, ...] = ()
    errnos: tuple[str, ...] = ()
    needs: tuple[Cap, ...] = ()
    # What the process running the check must be ("process.unprivileged"): not the device's word, so a
    # case whose `when` does not hold is not exercised in this run (the lab also runs unprivileged).
    when: tuple[Cap, ...] = ()
    steps: tuple[Step, ...] = ()
    params: Mapping[str, object] = field(default_factory=dict)
    also: tuple[Source, ...] = ()  # further sources (the IBTA table the page relies on, ...)
    transports: tuple[str, ...] = TRANSPORTS
    layer: str = "provider"
    untestable: str = ""


# --- tables a page gives, kept as data (Verb.tables) -------------------------------------------
class Walk(TypedDict):
    """How the mover verb (ibv_modify_qp) moves an object from state to state, one step at a time."""

    object_param: str  # the parameters that take the object, its attributes and the mask
    attr_param: str
    mask_param: str
    path: tuple[str, ...]  # the states in the order a fresh object passes them
    state_flag: str  # the mask flag that sets the state (IBV_QP_STATE): a move to a state off the path
    state_field: str  # the attribute field that holds the state, as a query reads it (qp_state)
    state_enum: str  # the C enum of the states (ibv_qp_state), as ibv/enums.py holds it
    through: Mapping[str, str]  # a state reached from another one off the path (ERR from RTS)
    type_var: str  # the variable that names the object's type (qp_type)
    required: Mapping[str, Mapping[str, tuple[str, ...]]]  # type -> "RESET>INIT" -> the required flags
    values: Mapping[str, Mapping[str, Value]]  # flag -> the attribute fields that give it a valid value


class Snapshot(TypedDict):
    """How the state table reads an object's attributes back (ibv_query_qp with these arguments)."""

    verb: str
    object_param: str
    out: str  # the out parameter the attributes are written to
    args: Mapping[str, Value]
    fields: tuple[str, ...]
    global_only: Mapping[str, str]  # a field read only when the flag named is set (ah_attr: is_global)


class Opcode(TypedDict, total=False):
    """A row of ibv_post_send's opcodes table: what a WR of that opcode does and completes as."""

    data: str  # where the data goes: "local", "remote", "atomic", "none", ...
    remote: str  # the access the remote MR needs (IBV_ACCESS_REMOTE_WRITE)
    send_wc: str  # the completion opcodes on each side
    recv_wc: str
    consumes_recv: bool
    imm: bool
    invalidates: bool


# An out-of-range case of the state table: (flag, field, bad value[, the field's name in words]).
OutOfRange = Union[tuple[str, str, Union[int, str]], tuple[str, str, Union[int, str], str]]


class Tables(TypedDict, total=False):
    """The tables a verb's entry may give (Verb.tables): each read by the code named."""

    vars: Mapping[str, Value]  # defaults of the variables its parameters' defaults use (calls/invoke.py)
    needs: Mapping[str, Mapping[str, tuple[Cap, ...]]]  # variable -> value -> what the device must advertise
    not_supported: Mapping[str, str]  # errno name -> why it means the device does not support the verb
    walk: Walk  # kinds/check.py: moving an object to a state
    qp_types: tuple[str, ...]  # kinds/state_table.py, the rest of ibv_modify_qp's table
    optional: Mapping[str, Mapping[str, tuple[str, ...]]]
    legal_moves: Mapping[str, tuple[str, ...]]
    start_states: tuple[str, ...]
    mask_flags: tuple[str, ...]
    capability_flags: tuple[str, ...]
    flag_needs: Mapping[str, tuple[Cap, ...]]
    out_of_range: tuple[OutOfRange, ...]
    limits: Mapping[str, str]  # a limit's name -> the device fact that gives it
    field_max: Mapping[str, int]
    states: Mapping[str, int]
    snapshot: Snapshot
    opcodes: Mapping[str, Opcode]  # kinds/datapath.py
    builders: Mapping[str, str]  # kinds/wr.py: opcode -> the ibv_wr_* verb that builds it
    send_ops: Mapping[str, str]  # opcode -> its IBV_QP_EX_WITH_* flag


@dataclass(frozen=True)
class Resource:
    """A resource a verb consumes or produces, optionally in a given state."""

    kind: str
    state: str | None = None
    role: str = ""  # the parameter it is passed as


@dataclass(frozen=True)
class Transition:
    resource: str
    before: str
    after: str


@dataclass(frozen=True)
class Contract:
    """The resources a verb requires, produces, moves between states and destroys.

    `destroyed_by` names the verb that frees what this one produces (the check that made it
    frees it so). `makes` marks the verb as the one way the suite creates that kind of resource
    when a check needs one (kinds/check.py): its parameters' defaults are the recipe.
    """

    requires: tuple[Resource, ...] = ()
    produces: tuple[Resource, ...] = ()
    moves: tuple[Transition, ...] = ()
    destroys: tuple[Resource, ...] = ()
    destroyed_by: str = ""
    makes: bool = False


@dataclass(frozen=True)
class Verb:
    name: str
    man: str  # the page that documents it: "ibv_modify_qp(3)"
    prototype: str
    returns: str  # one of RETURN_CONVENTIONS
    summary: str
    params: tuple[Param, ...] = ()
    errors: tuple[Error, ...] = ()
    claims: tuple[Claim, ...] = ()
    contract: Contract = Contract()
    family: str = "ibv"  # "ibv" (libibverbs) or another API family such as "det"
    counterpart: str = ""  # for another family: the ibv verb with the same semantics
    # Behaviour the page leaves undefined: never exercised, listed so a reader knows why.
    undefined: tuple[str, ...] = ()
    # Tables the page gives, kept as data (e.g. required attributes per QP type).
    tables: Tables = field(default_factory=Tables)

    def claim(self, claim_id: str) -> Claim:
        for claim in self.claims:
            if claim.id == claim_id:
                return claim
        raise KeyError(f"{self.name} has no claim {claim_id!r}")

    def param(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(f"{self.name} has no parameter {name!r}")

    def source(self, claim: Claim) -> Source:
        """The page section the claim cites."""
        return Source("man", self.man, claim.section)

    def sources(self, claim: Claim) -> tuple[Source, ...]:
        return (self.source(claim), *claim.also)
