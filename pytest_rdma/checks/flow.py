"""Check kinds for flow steering rules (ibv_create_flow(3), ibv_destroy_flow).

Whether a device can steer is decided from what it advertises
(IBV_DEVICE_MANAGED_FLOW_STEERING), never from the errno a create returns: the checks that
need steering are unsupported without the flag, and the "no steering" errno check applies
only to devices that lack it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pytest_rdma.catalogue.model import Claim, Verb
from pytest_rdma.checks.registry import Case, check_kind
from pytest_rdma.checks.support import attempt, errno_name, errno_of, errno_value, qp_type_value, reproducer
from pytest_rdma.outcomes import Deviation, Unsupported

STEERING = "IBV_DEVICE_MANAGED_FLOW_STEERING"
# The page's EXAMPLE matches this destination MAC exactly.
SPECS = {"eth-dst-mac": {"dst_mac": "66:11:22:33:44:55", "dst_mac_mask": "ff:ff:ff:ff:ff:ff"}}


def advertises_steering(dut: Any) -> bool:
    import pyverbs.enums as e

    flag = e.IBV_DEVICE_MANAGED_FLOW_STEERING
    return bool(dut.attr.device_cap_flags & flag or dut.attr_ex.device_cap_flags_ex & flag)


def _require_steering(dut: Any) -> None:
    if not advertises_steering(dut):
        raise Unsupported(f"device does not advertise {STEERING}")


def rule_fields(dut: Any, rule: Mapping[str, Any]) -> dict[str, int]:
    """The numbers of a rule description (names of the catalogue's flag sets resolved)."""
    import pyverbs.enums as e

    flags = 0
    for name in rule.get("flags", ()):
        flags |= int(getattr(e, name))
    flags |= int(rule.get("raw_flags", 0))
    port = rule.get("port", dut.port)
    if port == "phys_port_cnt+1":
        port = dut.attr.phys_port_cnt + 1
    specs = tuple(rule.get("specs", ()))
    return {
        "flow_type": int(getattr(e, rule["type"])),
        "priority": int(rule.get("priority", 0)),
        "port": int(port),
        "flags": flags,
        "num_of_specs": int(rule.get("num_of_specs", len(specs))),
    }


def make_flow(dut: Any, res: Any, qp_type: int, rule: Mapping[str, Any]) -> Any:
    from pyverbs.flow import Flow, FlowAttr
    from pyverbs.spec import EthSpec

    qp = res.qp(qp_type)
    attr = FlowAttr(**rule_fields(dut, rule))
    for spec in rule.get("specs", ()):
        attr.specs.append(EthSpec(**SPECS[spec]))
    return res.adopt(Flow(qp, attr))


def flow_script(
    dut: Any, qp_type: str, rule: Mapping[str, Any], after: str = "flow.close(); print('destroyed')"
) -> str:
    fields = rule_fields(dut, rule)
    specs = "".join(f"attr.specs.append(EthSpec(**{SPECS[s]!r}))\n" for s in rule.get("specs", ()))
    body = (
        f"pd, cq = PD(ctx), CQ(ctx, 16)\n"
        f"qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_{qp_type}, scq=cq, rcq=cq))\n"
        f"attr = FlowAttr(**{fields!r})\n{specs}"
        "try:\n    flow = Flow(qp, attr)\nexcept Exception as exc:\n"
        "    print('ibv_create_flow failed:', exc); raise SystemExit(1)\n"
        f"{after}"
    )
    return reproducer(
        dut.name,
        body,
        [
            "from pyverbs.pd import PD",
            "from pyverbs.cq import CQ",
            "from pyverbs.qp import QP, QPInitAttr",
            "from pyverbs.flow import Flow, FlowAttr",
            "from pyverbs.spec import EthSpec",
        ],
    )


def _expect_failure(
    case: Case, dut: Any, res: Any, rule: Mapping[str, Any], allowed: tuple[str, ...], ref: str, why: str
) -> None:
    qp_type = qp_type_value(case.params["qp_type"])
    created, exc = attempt(lambda: make_flow(dut, res, qp_type, rule))
    script = flow_script(dut, case.params["qp_type"], rule)
    if exc is None:
        raise Deviation(
            ref,
            f"{why}: ibv_create_flow fails with {' or '.join(allowed)}",
            "the flow was created",
            {"rule": dict(rule)},
            script,
        )
    code = errno_of(exc)
    if code not in {errno_value(name) for name in allowed}:
        raise Deviation(
            ref,
            f"{why}: errno {' or '.join(allowed)}",
            f"errno {errno_name(code)}",
            {"rule": dict(rule), "exception": str(exc)},
            script,
        )


def _by_qp_type(verb: Verb, claim: Claim, label: str) -> Iterator[Case]:
    for qp_type in claim.params["qp_types"]:
        yield Case(
            verb.name, claim.id, claim.kind, f"{qp_type}-{label}", {"qp_type": qp_type, **claim.params}
        )


@check_kind("flow-errno-without-steering")
class ErrnoWithoutSteering:
    """On a device without managed flow steering, creating a valid rule fails with the documented errno."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        yield from _by_qp_type(verb, claim, "valid-rule-without-steering")

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        dut.require_qp_type(qp_type_value(case.params["qp_type"]))
        if advertises_steering(dut):
            raise Unsupported(
                f"device advertises {STEERING}; the no-steering errno applies only to devices without it"
            )
        _expect_failure(
            case,
            dut,
            res,
            case.params["rule"],
            (case.params["errno"],),
            "ibv_create_flow(3) ERRORS",
            f"the device does not advertise {STEERING}",
        )


@check_kind("flow-qp-type-rejected")
class QpTypeRejected:
    """A rule on a QP type the page does not allow (not UD / RAW_PACKET) is refused as invalid."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        yield from _by_qp_type(verb, claim, "qp-not-allowed")

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        dut.require_qp_type(qp_type_value(case.params["qp_type"]))
        # Without steering both documented conditions hold (bad QP, no steering): either errno conforms.
        allowed = (
            (case.params["errno"],)
            if advertises_steering(dut)
            else tuple(case.params["errno_without_steering"])
        )
        _expect_failure(
            case,
            dut,
            res,
            case.params["rule"],
            allowed,
            "ibv_create_flow(3) NOTES, ERRORS",
            f"a {case.params['qp_type']} QP cannot take steering rules",
        )


@check_kind("flow-invalid-rule")
class InvalidRule:
    """On a steering device, a malformed rule is refused with EINVAL."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        p = claim.params
        for qp_type in p["qp_types"]:
            for name, change in p["variants"].items():
                yield Case(
                    verb.name,
                    claim.id,
                    claim.kind,
                    f"{qp_type}-{name}",
                    {"qp_type": qp_type, "errno": p["errno"], "rule": {**p["base"], **change}},
                )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        dut.require_qp_type(qp_type_value(case.params["qp_type"]))
        _require_steering(dut)
        _expect_failure(
            case,
            dut,
            res,
            case.params["rule"],
            (case.params["errno"],),
            "ibv_create_flow(3) ERRORS, NOTES",
            "the rule is invalid",
        )


@check_kind("flow-create-destroy")
class CreateDestroy:
    """On a steering device a valid rule is created, and ibv_destroy_flow of it returns 0."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for qp_type in claim.params["qp_types"]:
            for name, rule in claim.params["variants"].items():
                yield Case(
                    verb.name, claim.id, claim.kind, f"{qp_type}-{name}", {"qp_type": qp_type, "rule": rule}
                )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        qp_type = qp_type_value(case.params["qp_type"])
        dut.require_qp_type(qp_type)
        _require_steering(dut)
        rule = case.params["rule"]
        script = flow_script(dut, case.params["qp_type"], rule)
        flow, exc = attempt(lambda: make_flow(dut, res, qp_type, rule))
        if exc is not None:
            raise Deviation(
                "ibv_create_flow(3) DESCRIPTION",
                f"a valid rule is created on a device advertising {STEERING}",
                f"creation failed: {errno_name(errno_of(exc))}",
                {"rule": dict(rule)},
                script,
            )
        _, exc = attempt(flow.close)
        if exc is not None:
            raise Deviation(
                "ibv_create_flow(3) RETURN VALUE",
                "ibv_destroy_flow returns 0",
                f"it returned {errno_name(errno_of(exc))}",
                {"rule": dict(rule)},
                script,
            )
