"""The capabilities a driver can be required to have (`--rdma-require`, an expectations file's `require`).

Each name maps to what the device advertises it by: the attributes (and the transport) that the
catalogue's claims already name in their `needs`, so a check that is unsupported for lack of one
says exactly the attribute a requirement names. A name may also stand for a QP type: a check of
that type exercises it. A device that does not advertise a required capability fails the run at
each check unsupported for its lack ("required, not advertised: attr.max_srq = 0").

Data and lookups only: no pytest, no device.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_rdma.catalogue.model import IB_TRANSPORTS, Cap


@dataclass(frozen=True)
class Capability:
    """One name of the vocabulary: the attributes that advertise it, and the QP type it is, if one."""

    name: str
    caps: tuple[Cap, ...]  # all of them advertised: the capability is
    says: str  # what it is, in words (the README's table)
    qp_type: str = ""  # "IBV_QPT_UD": a check of a QP of this type exercises it

    @property
    def attributes(self) -> str:
        """The attributes that advertise it, as a person reads them (the README's table)."""
        if not self.caps:
            return "none: every verbs device has it"
        return " and ".join(
            f"transport in {'/'.join(cap.values)}" if cap.test == "transport" else f"{cap.attr} != 0"
            for cap in self.caps
        )


def _flag(name: str) -> Cap:
    return Cap(f"attr.device_cap_flags&{name}")


_IB_TRANSPORT = Cap("transport", "transport", IB_TRANSPORTS)

VOCABULARY: tuple[Capability, ...] = (
    Capability("rc", (), "reliable connected QPs", "IBV_QPT_RC"),
    Capability("uc", (_IB_TRANSPORT,), "unreliable connected QPs (InfiniBand transport)", "IBV_QPT_UC"),
    Capability("ud", (_IB_TRANSPORT,), "unreliable datagram QPs (InfiniBand transport)", "IBV_QPT_UD"),
    Capability("xrc", (_flag("IBV_DEVICE_XRC"),), "extended reliable connected QPs and XRC domains"),
    Capability(
        "raw_packet",
        (Cap("transport", "transport", ("roce",)), Cap("attr_ex.raw_packet_caps")),
        "raw packet QPs (an Ethernet port)",
        "IBV_QPT_RAW_PACKET",
    ),
    Capability("srq", (Cap("attr.max_srq"),), "shared receive queues"),
    Capability("srq_resize", (_flag("IBV_DEVICE_SRQ_RESIZE"),), "resizing a shared receive queue"),
    Capability("mw1", (_flag("IBV_DEVICE_MEM_WINDOW"),), "memory windows (type 1)"),
    Capability(
        "mw2",
        (_flag("IBV_DEVICE_MEM_WINDOW_TYPE_2A|IBV_DEVICE_MEM_WINDOW_TYPE_2B"),),
        "memory windows of type 2 (2A or 2B)",
    ),
    Capability("mem_mgt", (_flag("IBV_DEVICE_MEM_MGT_EXTENSIONS"),), "memory management extensions"),
    Capability("atomics", (Cap("attr.atomic_cap"),), "atomic operations (compare-and-swap, fetch-and-add)"),
    Capability("odp", (Cap("attr_ex.odp_caps.general_caps&IBV_ODP_SUPPORT"),), "on-demand paging"),
    Capability(
        "odp_implicit",
        (Cap("attr_ex.odp_caps.general_caps&IBV_ODP_SUPPORT_IMPLICIT"),),
        "implicit on-demand paging (the whole address space)",
    ),
    Capability("flow", (_flag("IBV_DEVICE_MANAGED_FLOW_STEERING"),), "flow steering rules (ibv_create_flow)"),
    Capability("mcast", (Cap("attr.max_mcast_grp"), Cap("attr.max_mcast_qp_attach")), "multicast groups for UD QPs"),
    Capability("dm", (Cap("attr_ex.max_dm_size"),), "device memory (ibv_alloc_dm)"),
    Capability("wq", (Cap("attr_ex.max_wq_type_rq"),), "work queues (ibv_create_wq)"),
    Capability(
        "rss",
        (Cap("attr_ex.max_wq_type_rq"), Cap("attr_ex.rss_caps.max_rwq_indirection_table_size")),
        "receive side scaling (indirection tables of WQs)",
    ),
    Capability("pacing", (Cap("attr_ex.packet_pacing_caps.qp_rate_limit_max"),), "packet pacing (QP rate limits)"),
    Capability("tso", (Cap("attr_ex.tso_caps.max_tso"),), "TCP segmentation offload"),
    Capability("tm", (Cap("attr_ex.tm_caps.max_num_tags"),), "tag matching"),
    Capability(
        "cq_moderation",
        (Cap("attr_ex.cq_mod_caps.max_cq_count"), Cap("attr_ex.cq_mod_caps.max_cq_period")),
        "CQ moderation (ibv_modify_cq)",
    ),
    Capability("core_clock", (Cap("attr_ex.hca_core_clock"),), "the device's core clock (completion timestamps)"),
    Capability("apm", (_flag("IBV_DEVICE_AUTO_PATH_MIG"),), "automatic path migration"),
    Capability("resize_max_wr", (_flag("IBV_DEVICE_RESIZE_MAX_WR"),), "resizing a QP's work requests"),
    Capability(
        "pci_write_end_padding",
        (Cap("attr_ex.device_cap_flags_ex&IBV_DEVICE_PCI_WRITE_END_PADDING"),),
        "padding of PCI writes to the cache line's end",
    ),
)
BY_NAME: Mapping[str, Capability] = {capability.name: capability for capability in VOCABULARY}
NAMES = tuple(BY_NAME)


class UnknownCapability(ValueError):
    """A name the vocabulary does not have; its text lists the names it has."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown capability {name!r} (known: {', '.join(NAMES)})")
        self.name = name


def lookup(name: str) -> Capability:
    """The capability of that name (case and spaces ignored), or UnknownCapability naming the known ones."""
    found = BY_NAME.get(name.strip().lower())
    if found is None:
        raise UnknownCapability(name.strip())
    return found


def names(values: Iterable[str]) -> tuple[str, ...]:
    """Names given repeated or comma separated ("srq,mw2"), checked, in order, once each."""
    flat = [lookup(part).name for value in values for part in value.split(",") if part.strip()]
    return tuple(dict.fromkeys(flat))


_NAMING = ("needs", "only_if", "vars", "params", "call")


def needed(spec: Mapping[str, object]) -> tuple[set[Cap], set[str]]:
    """What a case's spec needs the device to advertise (its needs, a state's only_if, a gate it needs
    advertised), and the QP types it makes. A gate whose both sides the case checks is no need."""
    caps: set[Cap] = set()
    qp_types: set[str] = set()
    params = spec.get("params")
    gate_needed = isinstance(params, Mapping) and params.get("only") == "advertised"
    # Only where a case names what it needs and the QP it makes: its expectations and steps are
    # most of a spec and name neither (a walk of them all cost more than the rest of a record).
    for part in _NAMING:
        if part in spec:
            _note(part, spec[part], gate_needed, caps, qp_types)
    return caps, qp_types


def _note(key: str, value: object, gate_needed: bool, caps: set[Cap], qp_types: set[str]) -> None:
    """`value`, found under `key` (a mapping's key, or for a sequence's item the sequence's), noted in `caps` or
    `qp_types` if it is one; then every entry of a mapping and item of a sequence, likewise. A plain recursion,
    not a generator of the pairs: it runs for every check's record, and a generator per level cost twice."""
    if isinstance(value, Cap):
        if key in ("needs", "only_if") or (key == "gate" and gate_needed):
            caps.add(value)
    elif isinstance(value, str):
        if value.startswith("IBV_QPT_") and key.rsplit(".", 1)[-1] == "qp_type":
            qp_types.add(value)
    elif isinstance(value, Mapping):
        for inner_key, inner in value.items():
            _note(str(inner_key), inner, gate_needed, caps, qp_types)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _note(key, item, gate_needed, caps, qp_types)


# Each name with its QP type and its attributes as a set, made once: of_spec runs for every check's record,
# and making a set of each name's attributes there, per check, was most of its time.
_TESTED = tuple((capability.name, capability.qp_type, frozenset(capability.caps)) for capability in VOCABULARY)


def of_spec(spec: Mapping[str, object]) -> tuple[str, ...]:
    """The names of the vocabulary a case's check exercises when it runs: a record's `capabilities`."""
    caps, qp_types = needed(spec)
    if not caps and not qp_types:
        return ()  # most checks: every name is a QP type or has attributes, so none is exercised
    return tuple(
        name
        for name, qp_type, attributes in _TESTED
        if (qp_type and qp_type in qp_types) or (attributes and not qp_type and attributes <= caps)
    )


def lacking(cap: Cap | None, required: Iterable[str], related: Iterable[str] = ()) -> tuple[str, ...]:
    """The required names that `cap` (what a check was unsupported for lack of) advertises.

    One attribute may advertise several names (the transport: UC and UD); the check's own
    (`related`, a record's capabilities) are meant, when it has any of them.
    """
    matching = [name for name in required if name in BY_NAME and cap is not None and cap in BY_NAME[name].caps]
    own = [name for name in matching if name in set(related)]
    return tuple(own or matching)
