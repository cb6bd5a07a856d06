"""Check kinds for ibv_modify_qp (and the blocked det_modify_qp): the QP state machine.

Expansion reads the entry's tables (pytest_rdma/verbs.py: required / optional attributes
per QP type and step, legal moves, out-of-range values), so the cases follow the data.
Every expected failure is followed by a full ibv_query_qp: a failed call that changed the
state or any attribute breaks the page's all-or-nothing promise (ibv_modify_qp(3) NOTES).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_rdma.catalogue.flags import FLAG_SETS
from pytest_rdma.catalogue.model import Claim, Verb
from pytest_rdma.checks.qp_states import MASK, PATH, QPDriver, changed, short, step_states
from pytest_rdma.checks.registry import Case, check_kind
from pytest_rdma.outcomes import Blocked, Unsupported

NOTES = "ibv_modify_qp(3) NOTES"
DESCRIPTION = "ibv_modify_qp(3) DESCRIPTION"
# States a check can start from (SQD/SQE need traffic or a drain: out of scope here).
START_STATES = ("RESET", "INIT", "RTR", "RTS", "ERR")
# IBV_QP_CAP and IBV_QP_ALT_PATH depend on advertised capabilities: their own claims cover them.
CAPABILITY_FLAGS = ("IBV_QP_CAP", "IBV_QP_ALT_PATH")
DEVICE_CAPS = FLAG_SETS["ibv_device_cap_flags"]
# Fields that are 8 or 16 bits wide in struct ibv_qp_attr / ibv_ah_attr.
FIELD_MAX = {"port_num": 0xFF, "max_rd_atomic": 0xFF, "max_dest_rd_atomic": 0xFF, "pkey_index": 0xFFFF,
             "ah_attr.sgid_index": 0xFF, "ah_attr.port_num": 0xFF}


# -- expansion helpers ---------------------------------------------------------------------
def _tables(verb: Verb) -> tuple[tuple[str, ...], tuple[str, ...], Mapping[str, Any], Mapping[str, Any]]:
    t = verb.tables
    return t["qp_types"], t["steps"], t["required"], t["optional"]


def _case(verb: Verb, claim: Claim, variant: str, **params: Any) -> Case:
    return Case(verb.name, claim.id, claim.kind, variant, params)


def forbidden_flags(verb: Verb, qp_type: str, step: str) -> tuple[str, ...]:
    """Mask flags neither required nor optional on `step` for `qp_type`, in mask order."""
    _types, _steps, required, optional = _tables(verb)
    allowed = set(required[qp_type][step]) | set(optional[qp_type][step]) | {"IBV_QP_STATE"}
    return tuple(f for f in MASK if f not in allowed and f not in CAPABILITY_FLAGS)


def illegal_moves(verb: Verb) -> list[tuple[str, str]]:
    legal = verb.tables["legal_moves"]
    return [(frm, to) for frm in START_STATES for to in PATH[1:] if to not in legal[frm]]


# -- run helpers ---------------------------------------------------------------------------
def _driver(case: Case, dut: Any, res: Any) -> QPDriver:
    return QPDriver(dut, res, case.params["qp_type"])


def _at_step(case: Case, dut: Any, res: Any) -> tuple[QPDriver, str, str]:
    """A QP of the case's type, walked to the state its step starts from; and the step's two states."""
    driver = _driver(case, dut, res)
    before, after = step_states(case.params["step"])
    driver.walk_to(before, case.params["required"])
    return driver, before, after


def expect_rejected(driver: QPDriver, flags: tuple[str, ...], fields: Mapping[str, Any], why: str,
                    extra_bits: int = 0, ref: str = NOTES) -> None:
    """The call must fail, and a full re-query must show nothing changed."""
    before = driver.snapshot()
    errno = driver.modify(flags, fields, extra_bits)
    after = driver.snapshot()
    diff = changed(before, after)
    if errno == 0:
        raise driver.deviation(ref, f"rejected: {why}", "ibv_modify_qp returned 0",
                               mask=_mask_text(flags, extra_bits), changed=diff or "nothing")
    if diff:
        raise driver.deviation(NOTES, "a failed call modifies nothing (QP state and every attribute)",
                               f"failed with errno {errno}, yet {len(diff)} attribute(s) changed",
                               mask=_mask_text(flags, extra_bits), changed=diff)


def expect_accepted(driver: QPDriver, flags: tuple[str, ...], fields: Mapping[str, Any], after_state: str,
                    ref: str = NOTES) -> dict[str, Any]:
    errno = driver.modify(flags, fields)
    if errno:
        raise driver.deviation(ref, f"succeeds and the QP is in {after_state}",
                               f"failed with errno {errno}", mask=_mask_text(flags))
    snap = driver.snapshot()
    state = driver.state()
    if state != after_state:
        raise driver.deviation(DESCRIPTION, f"the QP is in {after_state} after success",
                               f"ibv_query_qp reports {state}", mask=_mask_text(flags))
    return snap


def expect_reflected(driver: QPDriver, snap: Mapping[str, Any], fields: Mapping[str, Any]) -> None:
    """Values just set are what ibv_query_qp reports (DESCRIPTION: attributes are modified)."""
    wrong = {}
    for name, value in fields.items():
        if name in ("qp_state", "cur_qp_state", "cap"):
            continue
        if isinstance(value, dict):
            for sub, subvalue in value.items():
                key = f"{name}.{sub}"
                if key in snap and snap[key] != subvalue:
                    wrong[key] = f"set {subvalue!r}, query reports {snap[key]!r}"
        elif snap.get(name) != value:
            wrong[name] = f"set {value!r}, query reports {snap.get(name)!r}"
    if wrong:
        raise driver.deviation(DESCRIPTION, "the attributes given are those the QP then has",
                               f"{len(wrong)} attribute(s) differ after a successful call", attributes=wrong)


def _mask_text(flags: Iterable[str], extra_bits: int = 0) -> str:
    text = "|".join(short(f) for f in flags) or "0"
    return f"{text}|{extra_bits:#x}" if extra_bits else text


# -- kinds ---------------------------------------------------------------------------------
@check_kind("modify_qp_minimal")
class MinimalAttrs:
    """Each step with exactly the required attributes succeeds and sets them."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, steps, required, _opt = _tables(verb)
        for qp_type in qp_types:
            for step in steps:
                yield _case(verb, claim, f"{qp_type}-{step}", qp_type=qp_type, step=step,
                            flags=tuple(required[qp_type][step]), required=required)

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        driver, before, after = _at_step(case, dut, res)
        fields = driver.fields_for(p["flags"], before, after)
        snap = expect_accepted(driver, p["flags"], fields, after)
        expect_reflected(driver, snap, fields)


@check_kind("modify_qp_without_required")
class WithoutRequired:
    """A step missing one required attribute fails atomically."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, steps, required, _opt = _tables(verb)
        for qp_type in qp_types:
            for step in steps:
                flags = tuple(required[qp_type][step])
                for left_out in flags:
                    rest = tuple(f for f in flags if f != left_out)
                    if not rest:
                        continue  # leaving out the only attribute asks for nothing (see zero-mask)
                    yield _case(verb, claim, f"{qp_type}-{step}-without-{short(left_out)}", qp_type=qp_type,
                                step=step, flags=rest, left_out=left_out, required=required)

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        driver, before, after = _at_step(case, dut, res)
        expect_rejected(driver, p["flags"], driver.fields_for(p["flags"], before, after),
                        f"{short(p['left_out'])} is required on {p['qp_type']} {p['step']}")


@check_kind("modify_qp_optional")
class OptionalAttrs:
    """An attribute the state machine allows on a step is accepted with the required set."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, steps, required, optional = _tables(verb)
        for qp_type in qp_types:
            for step in steps:
                for flag in optional[qp_type][step]:
                    if flag in CAPABILITY_FLAGS:
                        continue
                    yield _case(verb, claim, f"{qp_type}-{step}-with-{short(flag)}", qp_type=qp_type,
                                step=step, flags=tuple(required[qp_type][step]) + (flag,), extra=flag,
                                required=required)

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        if p["extra"] == "IBV_QP_PATH_MIG_STATE":
            # path_mig_state is meaningful only with automatic path migration (the attr's comment).
            dut.require_cap(DEVICE_CAPS["IBV_DEVICE_AUTO_PATH_MIG"], "IBV_DEVICE_AUTO_PATH_MIG")
        if p["extra"] == "IBV_QP_RATE_LIMIT":
            caps = dut.attr_ex.packet_pacing_caps
            if not caps.qp_rate_limit_max:
                raise Unsupported("device reports no packet pacing "
                                  "(packet_pacing_caps.qp_rate_limit_max = 0)")
        driver, before, after = _at_step(case, dut, res)
        expect_accepted(driver, p["flags"], driver.fields_for(p["flags"], before, after), after,
                        ref=f"{NOTES}; IBTA QP state table")


@check_kind("modify_qp_forbidden")
class ForbiddenAttrs:
    """An attribute not allowed on a step makes the call fail atomically."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, steps, required, _opt = _tables(verb)
        for qp_type in qp_types:
            for step in steps:
                for flag in forbidden_flags(verb, qp_type, step):
                    yield _case(verb, claim, f"{qp_type}-{step}-with-{short(flag)}", qp_type=qp_type,
                                step=step, flags=tuple(required[qp_type][step]) + (flag,), extra=flag,
                                required=required)

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        driver, before, after = _at_step(case, dut, res)
        expect_rejected(driver, p["flags"], driver.fields_for(p["flags"], before, after),
                        f"{short(p['extra'])} is not allowed on {p['qp_type']} {p['step']}")


@check_kind("modify_qp_illegal_transition")
class IllegalTransition:
    """A state change the state machine lacks fails atomically (with the target's attributes)."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, _steps, required, _opt = _tables(verb)
        for qp_type in qp_types:
            for frm, to in illegal_moves(verb):
                into = f"{PATH[PATH.index(to) - 1]}>{to}"
                yield _case(verb, claim, f"{qp_type}-{frm}>{to}", qp_type=qp_type, start=frm, target=to,
                            flags=tuple(required[qp_type][into]), required=required)

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        driver = _driver(case, dut, res)
        driver.walk_to(p["start"], p["required"])
        expect_rejected(driver, p["flags"], driver.fields_for(p["flags"], p["start"], p["target"]),
                        f"{p['start']}>{p['target']} is not a QP state transition")


@check_kind("modify_qp_to_state")
class ToState:
    """From every state that has the move, IBV_QP_STATE alone reaches the target (RESET or ERR)."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, _steps, required, _opt = _tables(verb)
        target = claim.params["target"]
        for qp_type in qp_types:
            for frm in START_STATES:
                if target in verb.tables["legal_moves"][frm]:
                    yield _case(verb, claim, f"{qp_type}-{frm}>{target}", qp_type=qp_type, start=frm,
                                target=target, required=required)

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        driver = _driver(case, dut, res)
        driver.walk_to(p["start"], p["required"])
        flags = ("IBV_QP_STATE",)
        expect_accepted(driver, flags, driver.fields_for(flags, p["start"], p["target"]), p["target"],
                        ref=f"{DESCRIPTION}; IBTA QP state table")


@check_kind("modify_qp_zero_mask")
class ZeroMask:
    """attr_mask 0 succeeds and changes nothing, in every state the QP may stay in.

    A mask without IBV_QP_STATE asks to stay in the current state. The state machine has no
    RTR->RTR move, so in RTR a zero mask is an illegal transition (the page is silent there;
    the illegal-transitions claim covers RTR->RTR) and is not expanded here.
    """

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, _steps, required, _opt = _tables(verb)
        moves = verb.tables["legal_moves"]
        for qp_type in qp_types:
            for state in START_STATES:
                if state in moves[state]:
                    yield _case(verb, claim, f"{qp_type}-in-{state}", qp_type=qp_type, start=state,
                                required=required)

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        driver = _driver(case, dut, res)
        driver.walk_to(p["start"], p["required"])
        before = driver.snapshot()
        errno = driver.modify((), {})
        diff = changed(before, driver.snapshot())
        if errno or diff:
            raise driver.deviation(DESCRIPTION, "attr_mask 0 is accepted and modifies nothing",
                                   f"errno {errno}; changed: {diff or 'nothing'}")


@check_kind("modify_qp_unknown_bits")
class UnknownBits:
    """A mask bit outside ibv_qp_attr_mask makes an otherwise valid step fail atomically."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, _steps, required, _opt = _tables(verb)
        step = claim.params["step"]
        for qp_type in qp_types:
            for bit in claim.params["bits"]:
                yield _case(verb, claim, f"{qp_type}-{step}-bit{bit}", qp_type=qp_type, step=step, bit=bit,
                            flags=tuple(required[qp_type][step]), required=required)

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        driver, before, after = _at_step(case, dut, res)
        expect_rejected(driver, p["flags"], driver.fields_for(p["flags"], before, after),
                        f"bit {p['bit']} is not an ibv_qp_attr_mask flag", extra_bits=1 << p["bit"],
                        ref=f"{DESCRIPTION}, NOTES")


def resolve_bad_value(dut: Any, value: int | str) -> int:
    """An out-of-range value from the table: an int, or 'name' / 'name+1' of a device limit."""
    if isinstance(value, int):
        return value
    name, _, plus = value.partition("+")
    limits = {"phys_port_cnt": dut.attr.phys_port_cnt, "pkey_tbl_len": dut.port_attr.pkey_tbl_len,
              "gid_tbl_len": dut.port_attr.gid_tbl_len, "max_qp_rd_atom": dut.attr.max_qp_rd_atom,
              "max_qp_init_rd_atom": dut.attr.max_qp_init_rd_atom}
    return limits[name] + int(plus or 0)


@check_kind("modify_qp_out_of_range")
class OutOfRange:
    """A value out of its attribute's range fails atomically, on each step taking the attribute."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, steps, required, optional = _tables(verb)
        for qp_type in qp_types:
            for step in steps:
                for flag, field_name, bad in verb.tables["out_of_range"]:
                    flags = tuple(required[qp_type][step])
                    if flag not in flags:
                        if flag not in optional[qp_type][step]:
                            continue
                        flags += (flag,)
                    yield _case(verb, claim, f"{qp_type}-{step}-{field_name}={bad}", qp_type=qp_type,
                                step=step, flags=flags, field=field_name, bad=bad, required=required)

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        bad = resolve_bad_value(dut, p["bad"])
        if bad > FIELD_MAX.get(p["field"], 0xFFFFFFFF):
            raise Unsupported(f"{p['field']} cannot hold {p['bad']} = {bad}: the device's limit leaves no "
                              "out-of-range value of that width")
        driver, before, after = _at_step(case, dut, res)
        fields = driver.fields_for(p["flags"], before, after)
        top, _, sub = p["field"].partition(".")
        if sub:
            fields[top] = dict(fields[top], **{sub: bad})
        else:
            fields[top] = bad
        expect_rejected(driver, p["flags"], fields, f"{p['field']}={bad} ({p['bad']}) is out of range")


@check_kind("modify_qp_cap")
class ResizeCap:
    """IBV_QP_CAP in RTS: honoured where IBV_DEVICE_RESIZE_MAX_WR is advertised, else refused atomically."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, _steps, required, _opt = _tables(verb)
        for qp_type in qp_types:
            yield _case(verb, claim, f"{qp_type}-RTS-grow", qp_type=qp_type, required=required,
                        capability=claim.params["capability"])

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        driver = _driver(case, dut, res)
        driver.walk_to("RTS", p["required"])
        flags = ("IBV_QP_CAP",)
        grown = {"max_send_wr": 8, "max_recv_wr": 8, "max_send_sge": 1, "max_recv_sge": 1,
                 "max_inline_data": 0}
        advertised = bool(dut.attr.device_cap_flags & DEVICE_CAPS[p["capability"]])
        if not advertised:
            expect_rejected(driver, flags, {"cap": grown}, f"the device does not advertise {p['capability']}")
            return
        snap = expect_accepted(driver, flags, {"cap": grown}, "RTS")
        if snap["cap.max_send_wr"] < 8 or snap["cap.max_recv_wr"] < 8:
            raise driver.deviation(NOTES, "a device advertising IBV_DEVICE_RESIZE_MAX_WR grows the queues",
                                   f"cap after resize: send {snap['cap.max_send_wr']}, "
                                   f"recv {snap['cap.max_recv_wr']}")


@check_kind("modify_qp_alt_path")
class AltPath:
    """IBV_QP_ALT_PATH (RC/UC only): honoured where IBV_DEVICE_AUTO_PATH_MIG is advertised, else refused."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, steps, required, optional = _tables(verb)
        for qp_type in qp_types:
            for step in steps:
                if "IBV_QP_ALT_PATH" in optional[qp_type][step]:
                    yield _case(verb, claim, f"{qp_type}-{step}-with-ALT_PATH", qp_type=qp_type, step=step,
                                flags=tuple(required[qp_type][step]) + ("IBV_QP_ALT_PATH",),
                                required=required, capability=claim.params["capability"])

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        driver, before, after = _at_step(case, dut, res)
        fields = driver.fields_for(p["flags"], before, after)
        advertised = bool(dut.attr.device_cap_flags & DEVICE_CAPS[p["capability"]])
        if not advertised:
            expect_rejected(driver, p["flags"], fields, f"the device does not advertise {p['capability']}")
            return
        snap = expect_accepted(driver, p["flags"], fields, after)
        alt = {k: v for k, v in fields.items() if k in ("alt_port_num", "alt_pkey_index", "alt_timeout")}
        expect_reflected(driver, snap, alt)


@check_kind("modify_qp_grh_required")
class GrhRequired:
    """Where the port sets IBV_QPF_GRH_REQUIRED, INIT>RTR with a GRH-less address vector is refused."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        qp_types, _steps, required, _opt = _tables(verb)
        for qp_type in qp_types:
            if "IBV_QP_AV" in required[qp_type]["INIT>RTR"]:
                yield _case(verb, claim, f"{qp_type}-INIT>RTR-AV-without-GRH", qp_type=qp_type,
                            required=required, flags=tuple(required[qp_type]["INIT>RTR"]),
                            flag=claim.params["flag"])

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        if not dut.port_attr.flags & FLAG_SETS["ibv_port_flags"][p["flag"]]:
            raise Unsupported(f"port {dut.port} does not set {p['flag']} in ibv_port_attr.flags")
        driver = _driver(case, dut, res)
        driver.walk_to("INIT", p["required"])
        fields = driver.fields_for(p["flags"], "INIT", "RTR")
        fields["ah_attr"] = driver.av(is_global=0)
        expect_rejected(driver, p["flags"], fields, f"the port sets {p['flag']} and the AV has no GRH")


@check_kind("det_modify_qp")
class DetModifyQp:
    """det_modify_qp claims: generated for the record; they need a DET provider to run."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterable[Case]:
        for variant in claim.params.get("variants", ("",)):
            yield _case(verb, claim, variant, counterpart=verb.counterpart,
                        counterpart_claim=claim.params.get("counterpart_claim", ""))

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        # Reached only if generate.family_blocker ever stops blocking the family.
        raise Blocked(f"no DET runner: see {case.params['counterpart']} for the same semantics")
