"""Drive one QP through the IB state machine, recording every ibv_modify_qp it makes.

`QPDriver` walks a QP to a given state with the minimal attributes of the catalogue's
table (ibv_modify_qp(3) NOTES), builds valid attribute values from what the device reports,
takes full ibv_query_qp snapshots, and renders the calls it made as a standalone pyverbs
script (the reproducer a Deviation carries). Fixtures and other kinds may reuse it.
pyverbs is imported lazily: this module is also imported on hosts without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_rdma.catalogue.flags import FLAG_SETS
from pytest_rdma.outcomes import Deviation

STATES: dict[str, int] = {name.removeprefix("IBV_QPS_"): v for name, v in FLAG_SETS["ibv_qp_state"].items()}
STATE_NAMES: dict[int, str] = {v: k for k, v in STATES.items()}
QP_TYPES: dict[str, int] = {name.removeprefix("IBV_QPT_"): v for name, v in FLAG_SETS["ibv_qp_type"].items()}
MASK: dict[str, int] = FLAG_SETS["ibv_qp_attr_mask"]
# Every standard attribute bit (ibv_query_qp takes the same mask): "query the QP in full".
QUERY_ALL = sum(v for name, v in MASK.items() if name != "IBV_QP_RATE_LIMIT")
PATH = ("RESET", "INIT", "RTR", "RTS")

# Distinctive, valid values: a failed call that still applied some of them shows up in the
# after-snapshot, because none equals what a fresh QP reports.
QKEY = 0x1234
RQ_PSN = 0x1A2B
SQ_PSN = 0x2B3C
TIMEOUT = 14
RETRY_CNT = 6
RNR_RETRY = 5
MIN_RNR_TIMER = 12
RD_ATOMIC = 1
HOP_LIMIT = 64
ACCESS = (FLAG_SETS["ibv_access_flags"]["IBV_ACCESS_LOCAL_WRITE"]
          | FLAG_SETS["ibv_access_flags"]["IBV_ACCESS_REMOTE_WRITE"]
          | FLAG_SETS["ibv_access_flags"]["IBV_ACCESS_REMOTE_READ"])

SCALAR_FIELDS = ("qp_state", "cur_qp_state", "path_mtu", "path_mig_state", "qkey", "rq_psn", "sq_psn",
                 "dest_qp_num", "qp_access_flags", "pkey_index", "alt_pkey_index", "en_sqd_async_notify",
                 "sq_draining", "max_rd_atomic", "max_dest_rd_atomic", "min_rnr_timer", "port_num", "timeout",
                 "retry_cnt", "rnr_retry", "alt_port_num", "alt_timeout", "rate_limit")
AV_FIELDS = ("dlid", "sl", "src_path_bits", "static_rate", "is_global", "port_num")
GRH_FIELDS = ("dgid", "sgid_index", "hop_limit", "traffic_class", "flow_label")
CAP_FIELDS = ("max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data")


def short(flag: str) -> str:
    return flag.removeprefix("IBV_QP_")


def step_states(step: str) -> tuple[str, str]:
    before, after = step.split(">")
    return before, after


@dataclass
class Call:
    """One ibv_modify_qp made on the QP: mask flags, extra raw bits, field values, result."""

    flags: tuple[str, ...]
    fields: dict[str, Any]
    extra_bits: int = 0
    errno: int | None = None  # 0 on success

    @property
    def mask(self) -> int:
        return sum(MASK[f] for f in set(self.flags)) | self.extra_bits


@dataclass
class QPDriver:
    dut: Any
    res: Any
    qp_type: str
    calls: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.dut.require_qp_type(QP_TYPES[self.qp_type])
        self.qp = self.res.qp(QP_TYPES[self.qp_type])
        self.qp_num: int = self.qp.qp_num

    # -- attribute values -------------------------------------------------------------
    def av(self, **overrides: Any) -> dict[str, Any]:
        """A loopback address vector to this very port (GRH from the device's own GID)."""
        av = {"port_num": self.dut.port, "is_global": 1, "dlid": self.dut.port_attr.lid, "sl": 0,
              "dgid": str(self.dut.gid), "sgid_index": self.dut.gid_index, "hop_limit": HOP_LIMIT}
        av.update(overrides)
        return av

    def value_of(self, flag: str, before: str, after: str) -> dict[str, Any]:
        """Valid fields for `flag` on the step before>after, from what the device reports."""
        name = short(flag)
        values: dict[str, dict[str, Any]] = {
            "STATE": {"qp_state": STATES[after]},
            "CUR_STATE": {"cur_qp_state": STATES[before]},
            "EN_SQD_ASYNC_NOTIFY": {"en_sqd_async_notify": 1},
            "ACCESS_FLAGS": {"qp_access_flags": ACCESS},
            "PKEY_INDEX": {"pkey_index": 0},
            "PORT": {"port_num": self.dut.port},
            "QKEY": {"qkey": QKEY},
            "AV": {"ah_attr": self.av()},
            "PATH_MTU": {"path_mtu": self.dut.port_attr.active_mtu},
            "TIMEOUT": {"timeout": TIMEOUT},
            "RETRY_CNT": {"retry_cnt": RETRY_CNT},
            "RNR_RETRY": {"rnr_retry": RNR_RETRY},
            "RQ_PSN": {"rq_psn": RQ_PSN},
            "MAX_QP_RD_ATOMIC": {"max_rd_atomic": RD_ATOMIC},
            "ALT_PATH": {"alt_ah_attr": self.av(), "alt_port_num": self.dut.port, "alt_pkey_index": 0,
                         "alt_timeout": TIMEOUT},
            "MIN_RNR_TIMER": {"min_rnr_timer": MIN_RNR_TIMER},
            "SQ_PSN": {"sq_psn": SQ_PSN},
            "MAX_DEST_RD_ATOMIC": {"max_dest_rd_atomic": RD_ATOMIC},
            "PATH_MIG_STATE": {"path_mig_state": FLAG_SETS["ibv_mig_state"]["IBV_MIG_MIGRATED"]},
            "CAP": {"cap": {"max_send_wr": 4, "max_recv_wr": 4, "max_send_sge": 1, "max_recv_sge": 1,
                            "max_inline_data": 0}},
            "DEST_QPN": {"dest_qp_num": self.qp_num},  # loopback: the QP talks to itself
            "RATE_LIMIT": {"rate_limit": 0},
        }
        return dict(values[name])

    def fields_for(self, flags: tuple[str, ...], before: str, after: str) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        for flag in flags:
            fields.update(self.value_of(flag, before, after))
        return fields

    # -- calls ------------------------------------------------------------------------
    def modify(self, flags: tuple[str, ...], fields: Mapping[str, Any], extra_bits: int = 0) -> int:
        """ibv_modify_qp; returns 0 or the errno, and records the call."""
        from pyverbs.pyverbs_error import PyverbsRDMAError

        call = Call(tuple(flags), dict(fields), extra_bits)
        self.calls.append(call)
        try:
            self.qp.modify(build_qp_attr(call.fields), call.mask)
            call.errno = 0
        except PyverbsRDMAError as exc:
            call.errno = exc.error_code
        return call.errno

    def step(self, flags: tuple[str, ...], before: str, after: str, **overrides: Any) -> int:
        fields = self.fields_for(flags, before, after)
        fields.update(overrides)
        return self.modify(flags, fields)

    def walk_to(self, state: str, required: Mapping[str, Mapping[str, tuple[str, ...]]]) -> None:
        """Move the fresh QP from RESET to `state` with the minimal attributes per step.

        ERR and SQD-free targets only: ERR is reached from RTS. A refused step means the
        device breaks the page's minimal-attribute promise, so it is reported as such.
        """
        target = "RTS" if state == "ERR" else state
        for before, after in zip(PATH, PATH[1:]):
            if PATH.index(before) >= PATH.index(target):
                break
            flags = required[self.qp_type][f"{before}>{after}"]
            errno = self.step(flags, before, after)
            if errno:
                raise self.deviation(
                    "ibv_modify_qp(3) NOTES",
                    f"{self.qp_type} {before}>{after} with its required attributes succeeds "
                    f"(needed to reach {state} before the check proper)",
                    f"failed with errno {errno} ({_strerror(errno)})")
        if state == "ERR":
            errno = self.step(("IBV_QP_STATE",), "RTS", "ERR")
            if errno:
                raise self.deviation("ibv_modify_qp(3) DESCRIPTION", "RTS>ERR succeeds",
                                     f"failed with errno {errno} ({_strerror(errno)})")

    # -- observation ------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """State and every attribute, from ibv_query_qp with all mask bits."""
        attr, _init = self.qp.query(QUERY_ALL)
        return snapshot_of(attr)

    def state(self) -> str:
        attr, _init = self.qp.query(MASK["IBV_QP_STATE"])
        return STATE_NAMES.get(attr.qp_state, str(attr.qp_state))

    def deviation(self, ref: str, expected: str, observed: str, **details: Any) -> Deviation:
        return Deviation(ref, expected, observed, dict(details), reproducer(self))


def snapshot_of(attr: Any) -> dict[str, Any]:
    snap: dict[str, Any] = {name: getattr(attr, name) for name in SCALAR_FIELDS}
    for av_name in ("ah_attr", "alt_ah_attr"):
        av = getattr(attr, av_name)
        for name in AV_FIELDS:
            # pyverbs' alt_ah_attr getter copies port_num from ah_attr; alt_port_num holds the
            # alternate port, so skipping it loses nothing and avoids a false "change".
            if (av_name, name) != ("alt_ah_attr", "port_num"):
                snap[f"{av_name}.{name}"] = getattr(av, name)
        if av.is_global:
            for name in GRH_FIELDS:
                snap[f"{av_name}.{name}"] = getattr(av, name)
    cap = attr.cap
    for name in CAP_FIELDS:
        snap[f"cap.{name}"] = getattr(cap, name)
    return snap


def changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, str]:
    """Attributes whose value differs, as 'old -> new' (the all-or-nothing verdict)."""
    return {key: f"{before.get(key)!r} -> {after.get(key)!r}"
            for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)}


def build_qp_attr(fields: Mapping[str, Any]) -> Any:
    from pyverbs.qp import QPAttr, QPCap

    attr = QPAttr()
    # QPAttr() pre-fills qp_state/port_num/path_mtu for RESET>INIT; start from zeros so only
    # the fields named below carry meaning (the mask decides what the provider reads).
    attr.qp_state, attr.cur_qp_state, attr.port_num, attr.path_mtu = 0, 0, 0, 0
    for name, value in fields.items():
        if name in ("ah_attr", "alt_ah_attr"):
            setattr(attr, name, build_ah_attr(value))
        elif name == "cap":
            setattr(attr, name, QPCap(**value))
        else:
            setattr(attr, name, value)
    return attr


def build_ah_attr(av: Mapping[str, Any]) -> Any:
    from pyverbs.addr import GID, AHAttr, GlobalRoute

    gr = None
    if av.get("is_global"):
        gr = GlobalRoute(dgid=GID(av["dgid"]), sgid_index=av["sgid_index"], hop_limit=av["hop_limit"])
    return AHAttr(dlid=av.get("dlid", 0), sl=av.get("sl", 0), is_global=av.get("is_global", 0),
                  port_num=av["port_num"], gr=gr)


def _strerror(errno: int) -> str:
    import os

    return os.strerror(errno) if errno > 0 else "?"


def reproducer(driver: QPDriver) -> str:
    """A standalone pyverbs script that replays every modify the driver made."""
    lines = [
        "#!/usr/bin/env python3",
        f'"""Reproducer (pytest-rdma): ibv_modify_qp on a {driver.qp_type} QP of {driver.dut.name}."""',
        "import pyverbs.enums as e",
        "from pyverbs.addr import GID, AHAttr, GlobalRoute",
        "from pyverbs.cq import CQ",
        "from pyverbs.device import Context",
        "from pyverbs.pd import PD",
        "from pyverbs.pyverbs_error import PyverbsRDMAError",
        "from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr",
        "",
        f"ctx = Context(name={driver.dut.name!r})",
        "pd = PD(ctx)",
        "cq = CQ(ctx, 16, None, None, 0)",
        f"qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_{driver.qp_type}, scq=cq, rcq=cq,",
        "                        cap=QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)))",
        "ALL = " + " | ".join(f"e.{name}" for name in MASK if name != "IBV_QP_RATE_LIMIT"),
        "",
        "",
        "def modify(mask, **fields):",
        "    attr = QPAttr()",
        "    attr.qp_state = attr.cur_qp_state = attr.port_num = attr.path_mtu = 0",
        "    for name, value in fields.items():",
        "        if name in ('ah_attr', 'alt_ah_attr'):",
        "            gr = GlobalRoute(dgid=GID(value['dgid']), sgid_index=value['sgid_index'],",
        "                             hop_limit=value['hop_limit']) if value.get('is_global') else None",
        "            value = AHAttr(dlid=value.get('dlid', 0), sl=value.get('sl', 0),",
        "                           is_global=value.get('is_global', 0), port_num=value['port_num'], gr=gr)",
        "        elif name == 'cap':",
        "            value = QPCap(**value)",
        "        setattr(attr, name, value)",
        "    try:",
        "        qp.modify(attr, mask)",
        "        return 0",
        "    except PyverbsRDMAError as exc:",
        "        return exc.error_code",
        "",
        "",
    ]
    for call in driver.calls:
        mask = " | ".join(f"e.{flag}" for flag in call.flags) or "0"
        if call.extra_bits:
            mask += f" | {call.extra_bits:#x}"
        args = ", ".join(f"{name}={_literal(driver, name, value)}" for name, value in call.fields.items())
        lines.append(f"print('modify({mask}) ->', modify({mask}{', ' if args else ''}{args}),"
                     f" '(pytest-rdma saw {call.errno})')")
    lines += [
        "attr, _ = qp.query(ALL)",
        "print('state now', attr.qp_state)",
        "print(attr)",
    ]
    return "\n".join(lines) + "\n"


def _literal(driver: QPDriver, name: str, value: Any) -> str:
    if name == "dest_qp_num" and value == driver.qp_num:
        return "qp.qp_num"
    return repr(value)
