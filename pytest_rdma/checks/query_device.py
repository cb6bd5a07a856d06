"""Check kinds for device attributes (ibv_query_device_ex(3), ibv_query_device(3), ibv_query_port(3)).

`attr-relation` is generic: a claim lists (left, op, right) relations over the attributes a
query returns, so a new verb whose page promises relations between its fields reuses it.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any, Callable

from pytest_rdma.catalogue.model import Claim, Verb
from pytest_rdma.checks.registry import Case, check_kind
from pytest_rdma.checks.support import (
    NotExposed,
    attempt,
    errno_name,
    errno_of,
    qp_type_value,
    read_path,
    reproducer,
)
from pytest_rdma.outcomes import Blocked, Deviation, Unsupported

U32_MAX = (1 << 32) - 1

# What each `source` re-queries (fresh, not the session's cached copy) and its reproducer line.
SOURCES: dict[str, tuple[Callable[[Any], Any], str]] = {
    "query_device": (lambda dut: dut.ctx.query_device(), "attr = ctx.query_device()"),
    "query_device_ex": (lambda dut: dut.ctx.query_device_ex(), "attr = ctx.query_device_ex()"),
    "query_port": (lambda dut: dut.ctx.query_port(dut.port), "attr = ctx.query_port(1)"),
}


def _implies_zero(left: int, right: int) -> bool:
    return left != 0 or right == 0


OPS: dict[str, tuple[Callable[[int, int], bool], str]] = {
    ">=": (operator.ge, ">="),
    "<=": (operator.le, "<="),
    ">": (operator.gt, ">"),
    "==": (operator.eq, "=="),
    "0=>0": (_implies_zero, "-zero-implies-zero-"),
}


def _read(obj: Any, path: str) -> Any:
    try:
        return read_path(obj, path)
    except NotExposed as exc:
        raise Blocked(str(exc)) from exc


@check_kind("attr-relation")
class AttrRelation:
    """A relation between fields of a query's result (or a field and a constant) holds."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for left, op, right in claim.params["relations"]:
            variant = f"{left}{OPS[op][1]}{right}".replace("&", "-and-")
            yield Case(
                verb.name,
                claim.id,
                claim.kind,
                variant,
                {
                    "source": claim.params["source"],
                    "left": left,
                    "op": op,
                    "right": right,
                    "ref": f"{verb.man} {claim.section}",
                },
            )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        query, line = SOURCES[p["source"]]
        attr = query(dut)
        left = _read(attr, p["left"])
        right = p["right"] if isinstance(p["right"], int) else _read(attr, p["right"])
        if not OPS[p["op"]][0](left, right):
            shown = "if it is 0 then" if p["op"] == "0=>0" else p["op"]
            raise Deviation(
                p["ref"],
                f"{p['left']} {shown} {p['right']}" + (" is 0" if p["op"] == "0=>0" else ""),
                f"{p['left']} = {left}, {p['right']} = {right}",
                {},
                reproducer(dut.name, f"{line}\nprint(attr)"),
            )


@check_kind("attr-ex-orig-equals")
class OrigEqualsQueryDevice:
    """ibv_device_attr_ex.orig_attr.<field> equals ibv_query_device's <field>."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for field in claim.params["fields"]:
            yield Case(verb.name, claim.id, claim.kind, f"orig_attr.{field}", {"field": field})

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        field = case.params["field"]
        plain = _read(dut.ctx.query_device(), field)
        extended = _read(dut.ctx.query_device_ex().orig_attr, field)
        if plain != extended:
            raise Deviation(
                "ibv_query_device_ex(3) DESCRIPTION",
                f"orig_attr.{field} == ibv_query_device {field}",
                f"ibv_query_device: {plain!r}, ibv_query_device_ex orig_attr: {extended!r}",
                {},
                reproducer(
                    dut.name,
                    "a, x = ctx.query_device(), ctx.query_device_ex()\n"
                    f"print(a.{field}, x.orig_attr.{field})",
                ),
            )


def _cq_ex_completion_timestamp(dut: Any, res: Any) -> tuple[Any, str]:
    import pyverbs.enums as e
    from pyverbs.cq import CQEX, CqInitAttrEx

    def make() -> Any:
        return res.adopt(CQEX(dut.ctx, CqInitAttrEx(cqe=8, wc_flags=e.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)))

    return make, (
        "from pyverbs.cq import CQEX, CqInitAttrEx\n"
        "CQEX(ctx, CqInitAttrEx(cqe=8, wc_flags=e.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP))"
    )


PROBES: dict[str, Callable[[Any, Any], tuple[Any, str]]] = {
    "cq_ex_completion_timestamp": _cq_ex_completion_timestamp,
}


@check_kind("zero-means-unsupported")
class ZeroMeansUnsupported:
    """A field documented as "0 = unsupported": the feature it gates fails when 0 and works otherwise."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        yield Case(
            verb.name,
            claim.id,
            claim.kind,
            f"{claim.params['field']}-vs-{claim.params['probe']}",
            dict(claim.params),
        )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        field = case.params["field"]
        value = _read(dut.ctx.query_device_ex(), field)
        make, text = PROBES[case.params["probe"]](dut, res)
        _, exc = attempt(make)
        script = reproducer(dut.name, f"print('{field}', ctx.query_device_ex().{field})\n{text}")
        if value == 0 and exc is None:
            raise Deviation(
                "ibv_query_device_ex(3) DESCRIPTION",
                f"{field} = 0 means unsupported, so {case.params['probe']} fails",
                "it succeeded",
                {field: value},
                script,
            )
        if value != 0 and exc is not None:
            raise Deviation(
                "ibv_query_device_ex(3) DESCRIPTION",
                f"{field} = {value:#x} advertises support, so {case.params['probe']} works",
                f"it failed: {errno_name(errno_of(exc))}",
                {field: value},
                script,
            )


def _limit_factory(
    dut: Any, res: Any, resource: str, limit: str, qp_type: int, value: int
) -> tuple[Any, str]:
    """A callable creating `resource` with its `limit` set to `value`, and the reproducer text."""
    from pyverbs.cq import CQ
    from pyverbs.qp import QP, QPCap, QPInitAttr
    from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

    if resource == "cq":
        return (lambda: res.adopt(CQ(dut.ctx, value))), f"from pyverbs.cq import CQ\nCQ(ctx, {value})"
    if resource == "srq":
        wr, sge = (value, 1) if limit == "max_srq_wr" else (1, value)
        return (lambda: res.adopt(SRQ(res.pd(), SrqInitAttr(SrqAttr(max_wr=wr, max_sge=sge))))), (
            "from pyverbs.pd import PD\nfrom pyverbs.srq import SRQ, SrqAttr, SrqInitAttr\n"
            f"SRQ(PD(ctx), SrqInitAttr(SrqAttr(max_wr={wr}, max_sge={sge})))"
        )
    if limit == "max_qp_wr":
        cap = {"max_send_wr": value, "max_recv_wr": 1, "max_send_sge": 1, "max_recv_sge": 1}
    else:
        cap = {"max_send_wr": 1, "max_recv_wr": 1, "max_send_sge": value, "max_recv_sge": 1}

    def make() -> Any:
        cq = res.cq()
        return res.adopt(QP(res.pd(), QPInitAttr(qp_type=qp_type, scq=cq, rcq=cq, cap=QPCap(**cap))))

    return make, (
        "from pyverbs.pd import PD\nfrom pyverbs.cq import CQ\n"
        "from pyverbs.qp import QP, QPCap, QPInitAttr\ncq = CQ(ctx, 16)\n"
        f"QP(PD(ctx), QPInitAttr(qp_type={qp_type}, scq=cq, rcq=cq, cap=QPCap(**{cap!r})))"
    )


@check_kind("limit-honoured")
class LimitHonoured:
    """A resource at the advertised maximum is created (memory allowing); one above it is refused."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for resource, limit in claim.params["limits"]:
            types = claim.params["qp_types"] if resource == "qp" else ("",)
            for qp_type in types:
                for where in ("at", "above"):
                    prefix = f"{resource}-{qp_type}" if qp_type else resource
                    yield Case(
                        verb.name,
                        claim.id,
                        claim.kind,
                        f"{prefix}-{limit}-{where}",
                        {"resource": resource, "limit": limit, "qp_type": qp_type, "where": where},
                    )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        qp_type = qp_type_value(p["qp_type"]) if p["qp_type"] else 0
        if qp_type:
            dut.require_qp_type(qp_type)
        if p["resource"] == "srq" and dut.attr.max_srq <= 0:
            raise Unsupported("device advertises max_srq = 0 (no SRQs)")
        maximum = getattr(dut.attr, p["limit"])
        value = maximum if p["where"] == "at" else maximum + 1
        if value > U32_MAX or (p["resource"] == "cq" and value > (1 << 31) - 1):
            raise Unsupported(f"{p['limit']} = {maximum}: no larger request fits the C type")
        make, text = _limit_factory(dut, res, p["resource"], p["limit"], qp_type, value)
        script = reproducer(dut.name, text)
        created, exc = attempt(make)
        ref = "ibv_query_device_ex(3) NOTES"
        if p["where"] == "above" and exc is None:
            raise Deviation(
                ref,
                f"{p['limit']} = {maximum} is an upper limit: {value} is refused",
                f"a {p['resource']} with {value} was created",
                {},
                script,
            )
        if p["where"] == "at" and exc is not None:
            import errno

            if errno_of(exc) == errno.ENOMEM:
                raise Unsupported(
                    f"{p['resource']} at {p['limit']} = {maximum} failed with ENOMEM "
                    "(NOTES permits running out of host memory)"
                )
            raise Deviation(
                ref,
                f"a {p['resource']} at the advertised {p['limit']} = {maximum} is created",
                f"creation failed: {errno_name(errno_of(exc))}",
                {},
                script,
            )
        if p["where"] == "at" and p["resource"] == "cq" and created.cqe < value:
            raise Deviation("ibv_create_cq(3) NOTES", f"cqe >= {value}", f"cqe = {created.cqe}", {}, script)


@check_kind("input-comp-mask-rejected")
class InputCompMaskRejected:
    """ibv_query_device_ex with input->comp_mask carrying an undefined bit fails."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for bit in claim.params["bits"]:
            yield Case(verb.name, claim.id, claim.kind, f"input-comp_mask-bit{bit}", {"bit": bit})

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        from pyverbs.device import QueryDeviceExInput

        mask = 1 << int(case.params["bit"])
        try:
            query_input = QueryDeviceExInput(mask)
        except AttributeError as exc:
            # pyverbs 44's QueryDeviceExInput.__init__ writes a field it does not have.
            raise Blocked(
                f"this pyverbs cannot build an ibv_query_device_ex_input with a comp_mask ({exc})"
            ) from exc
        _, err = attempt(lambda: dut.ctx.query_device_ex(query_input))
        if err is None:
            raise Deviation(
                "ibv_query_device_ex(3) DESCRIPTION",
                f"input comp_mask {mask:#x} (no bit is defined) is refused",
                "the query succeeded",
                {},
                reproducer(
                    dut.name,
                    f"from pyverbs.device import QueryDeviceExInput\n"
                    f"print(ctx.query_device_ex(QueryDeviceExInput({mask:#x})))",
                ),
            )
