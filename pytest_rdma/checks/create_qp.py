"""Check kinds for QP creation, query and destruction (ibv_create_qp_ex(3), ibv_create_qp(3),
ibv_query_qp(3)).

QPs are made either with ibv_create_qp_ex (pyverbs: QP(context, QPInitAttrEx)) or with
ibv_create_qp (QP(pd, QPInitAttr)); a claim's `api` param says which ("ex" / "legacy").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pytest_rdma.catalogue.model import Claim, Verb
from pytest_rdma.checks.registry import Case, check_kind
from pytest_rdma.checks.support import attempt, errno_name, errno_of, qp_type_value, reproducer
from pytest_rdma.outcomes import Deviation, Unsupported

CAP_FIELDS = ("max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data")
SMALL_CAP = {"max_send_wr": 1, "max_recv_wr": 1, "max_send_sge": 1, "max_recv_sge": 1, "max_inline_data": 0}
U32_MAX = (1 << 32) - 1


def _ref(verb: str, section: str) -> str:
    man = "ibv_create_qp(3)" if verb == "ibv_create_qp" else "ibv_create_qp_ex(3)"
    return f"{man} {section}"


def make_qp(
    dut: Any,
    res: Any,
    api: str,
    qp_type: int,
    cap: dict[str, int],
    *,
    srq: Any = None,
    comp_mask: int | None = None,
    create_flags: int = 0,
    source_qpn: int = 0,
    sq_sig_all: int = 0,
    pd_cq: tuple[Any, Any] | None = None,
) -> tuple[Any, Any]:
    """Create a QP and return (qp, the init attr object whose cap the verb rewrote)."""
    import pyverbs.enums as e
    from pyverbs.qp import QP, QPCap, QPInitAttr, QPInitAttrEx

    pd, cq = pd_cq or (res.pd(), res.cq())
    qp_cap = QPCap(**cap)
    if api == "legacy":
        init = QPInitAttr(qp_type=qp_type, scq=cq, rcq=cq, srq=srq, cap=qp_cap, sq_sig_all=sq_sig_all)
        return res.adopt(QP(pd, init)), init
    mask = e.IBV_QP_INIT_ATTR_PD if comp_mask is None else comp_mask
    init = QPInitAttrEx(
        qp_type=qp_type,
        scq=cq,
        rcq=cq,
        srq=srq,
        cap=qp_cap,
        pd=pd,
        comp_mask=mask,
        create_flags=create_flags,
        source_qpn=source_qpn,
        sq_sig_all=sq_sig_all,
    )
    return res.adopt(QP(dut.ctx, init)), init


def qp_script(
    device: str,
    api: str,
    qp_type: str,
    cap: dict[str, int],
    after: str,
    *,
    srq: bool = False,
    comp_mask: str = "e.IBV_QP_INIT_ATTR_PD",
    create_flags: str = "0",
    source_qpn: int = 0,
) -> str:
    """A reproducer that creates the same QP as make_qp and then runs `after` (qp, init in scope)."""
    srq_line = "srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=4, max_sge=1)))" if srq else "srq = None"
    if api == "legacy":
        create = (
            f"init = QPInitAttr(qp_type=e.IBV_QPT_{qp_type}, scq=cq, rcq=cq, srq=srq, cap=QPCap(**{cap!r}))\n"
            "qp = QP(pd, init)"
        )
    else:
        create = (
            f"init = QPInitAttrEx(qp_type=e.IBV_QPT_{qp_type}, scq=cq, rcq=cq, srq=srq, pd=pd,\n"
            f"                    cap=QPCap(**{cap!r}), comp_mask={comp_mask},\n"
            f"                    create_flags={create_flags}, source_qpn={source_qpn})\n"
            "qp = QP(ctx, init)"
        )
    body = f"pd, cq = PD(ctx), CQ(ctx, 16)\n{srq_line}\n{create}\n{after}"
    return reproducer(
        device,
        body,
        [
            "from pyverbs.pd import PD",
            "from pyverbs.cq import CQ",
            "from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr",
            "from pyverbs.qp import QP, QPCap, QPInitAttr, QPInitAttrEx",
        ],
    )


def _require_srq(dut: Any) -> None:
    if dut.attr.max_srq <= 0:
        raise Unsupported("device advertises max_srq = 0 (no SRQs)")


def _ok_or_notes(exc: BaseException, what: str) -> None:
    """ibv_query_device(3) NOTES lets a maximum-sized resource fail for lack of memory (only)."""
    import errno

    if errno_of(exc) == errno.ENOMEM:
        raise Unsupported(f"{what} failed with ENOMEM, which ibv_query_device(3) NOTES permits")


@check_kind("qp-cap-writeback")
class CapWriteback:
    """Each QP type x cap field: the cap written back is >= the request, and ibv_query_qp agrees."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        p = claim.params
        for qp_type in p["qp_types"]:
            for field in p["fields"]:
                request = p["request"][field]
                suffix = f"at-{request}" if isinstance(request, str) else str(request)
                yield Case(
                    verb.name,
                    claim.id,
                    claim.kind,
                    f"{qp_type}-{field}-{suffix}",
                    {"api": p["api"], "qp_type": qp_type, "field": field, "request": request},
                )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        import pyverbs.enums as e

        p = case.params
        qp_type = qp_type_value(p["qp_type"])
        dut.require_qp_type(qp_type)
        field = p["field"]
        value = getattr(dut.attr, p["request"]) if isinstance(p["request"], str) else int(p["request"])
        cap = dict(SMALL_CAP, **{field: value})
        after = (
            "print('written back', init.cap)\n"
            "attr, init_q = qp.query(e.IBV_QP_CAP)\nprint('ibv_query_qp', init_q.cap)"
        )
        script = qp_script(dut.name, p["api"], p["qp_type"], cap, after)
        created, exc = attempt(lambda: make_qp(dut, res, p["api"], qp_type, cap))
        if exc is not None:
            if isinstance(p["request"], str):
                _ok_or_notes(exc, f"a QP with {field} at the device maximum {value}")
            elif field == "max_inline_data":
                # No attribute advertises an inline limit, so refusing 17 bytes breaks no promise.
                raise Unsupported(f"device refused max_inline_data={value} and advertises no inline limit")
            raise Deviation(
                _ref(case.verb, "DESCRIPTION"),
                f"a QP with {field}={value} (within the device limits) is created",
                f"creation failed: {errno_name(errno_of(exc))}",
                {"exception": str(exc)},
                script,
            )
        qp, init = created
        written = getattr(init.cap, field)
        _, init_q = qp.query(e.IBV_QP_CAP)
        queried = getattr(init_q.cap, field)
        details = {"requested": value, "written back": written, "ibv_query_qp": queried}
        if written < value:
            raise Deviation(
                _ref(case.verb, "DESCRIPTION"),
                f"cap.{field} written back >= {value}",
                f"cap.{field} written back = {written}",
                details,
                script,
            )
        if queried != written:
            raise Deviation(
                "ibv_query_qp(3) DESCRIPTION",
                f"ibv_query_qp reports the QP's actual cap.{field} = {written} (the value written back)",
                f"ibv_query_qp reports cap.{field} = {queried}",
                details,
                script,
            )


@check_kind("qp-srq-ignores-recv-caps")
class SrqIgnoresRecvCaps:
    """With an SRQ, receive caps far above the device limits must not make creation fail."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for qp_type in claim.params["qp_types"]:
            yield Case(
                verb.name,
                claim.id,
                claim.kind,
                f"{qp_type}-recv-caps-above-limits",
                {"api": claim.params["api"], "qp_type": qp_type},
            )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        qp_type = qp_type_value(p["qp_type"])
        dut.require_qp_type(qp_type)
        _require_srq(dut)
        cap = dict(
            SMALL_CAP, max_recv_wr=min(dut.attr.max_qp_wr * 4, U32_MAX), max_recv_sge=dut.attr.max_sge + 5
        )
        srq = res.srq(4, 1)
        script = qp_script(dut.name, p["api"], p["qp_type"], cap, "print('created', qp.qp_num)", srq=True)
        _, exc = attempt(lambda: make_qp(dut, res, p["api"], qp_type, cap, srq=srq))
        if exc is not None:
            raise Deviation(
                _ref(case.verb, "NOTES"),
                "max_recv_wr/max_recv_sge are ignored with an SRQ, so the QP is created",
                f"creation failed: {errno_name(errno_of(exc))}",
                {"cap": cap, "device max_qp_wr": dut.attr.max_qp_wr, "device max_sge": dut.attr.max_sge},
                script,
            )


@check_kind("qp-rejects-bits")
class RejectsUnknownBits:
    """A comp_mask or create_flags bit the page does not define makes creation fail."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        p = claim.params
        for qp_type in p["qp_types"]:
            for bit in p["bits"]:
                yield Case(
                    verb.name,
                    claim.id,
                    claim.kind,
                    f"{qp_type}-{p['field']}-bit{bit}",
                    {"qp_type": qp_type, "field": p["field"], "bit": bit},
                )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        import pyverbs.enums as e

        p = case.params
        qp_type = qp_type_value(p["qp_type"])
        dut.require_qp_type(qp_type)
        bit = 1 << int(p["bit"])
        if p["field"] == "comp_mask":
            kwargs = {"comp_mask": e.IBV_QP_INIT_ATTR_PD | bit}
            text = {"comp_mask": f"e.IBV_QP_INIT_ATTR_PD | {bit:#x}"}
        else:
            kwargs = {
                "comp_mask": e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_CREATE_FLAGS,
                "create_flags": bit,
            }
            text = {
                "comp_mask": "e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_CREATE_FLAGS",
                "create_flags": f"{bit:#x}",
            }
        created, exc = attempt(lambda: make_qp(dut, res, "ex", qp_type, dict(SMALL_CAP), **kwargs))
        if exc is None:
            raise Deviation(
                "ibv_create_qp_ex(3) DESCRIPTION",
                f"{p['field']} bit {p['bit']} is not defined by the page, so creation fails",
                f"a QP was created (qp_num {created[0].qp_num})",
                {p["field"]: hex(bit)},
                qp_script(
                    dut.name,
                    "ex",
                    p["qp_type"],
                    dict(SMALL_CAP),
                    "print('created qp_num', qp.qp_num)",
                    **text,
                ),
            )


@check_kind("qp-source-qpn-scope")
class SourceQpnScope:
    """IBV_QP_CREATE_SOURCE_QPN on a QP type other than UD is refused."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for qp_type in claim.params["qp_types"]:
            yield Case(
                verb.name,
                claim.id,
                claim.kind,
                f"{qp_type}-with-source-qpn",
                {"qp_type": qp_type, "source_qpn": claim.params["source_qpn"]},
            )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        import pyverbs.enums as e

        p = case.params
        qp_type = qp_type_value(p["qp_type"])
        dut.require_qp_type(qp_type)
        created, exc = attempt(
            lambda: make_qp(
                dut,
                res,
                "ex",
                qp_type,
                dict(SMALL_CAP),
                comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_CREATE_FLAGS,
                create_flags=e.IBV_QP_CREATE_SOURCE_QPN,
                source_qpn=p["source_qpn"],
            )
        )
        if exc is None:
            raise Deviation(
                "ibv_create_qp_ex(3) NOTES",
                f"source_qpn is for UD only: a {p['qp_type']} QP asking for it is refused",
                f"a QP was created (qp_num {created[0].qp_num})",
                {},
                qp_script(
                    dut.name,
                    "ex",
                    p["qp_type"],
                    dict(SMALL_CAP),
                    "print('created', qp.qp_num)",
                    comp_mask="e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_CREATE_FLAGS",
                    create_flags="e.IBV_QP_CREATE_SOURCE_QPN",
                    source_qpn=p["source_qpn"],
                ),
            )


@check_kind("qp-num-unique")
class QpNumUnique:
    """Many live QPs (per type, and of mixed types): every qp_num valid and distinct."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        p = claim.params
        for qp_type in p["qp_types"]:
            yield Case(
                verb.name,
                claim.id,
                claim.kind,
                f"{qp_type}-x{p['count']}",
                {"api": p["api"], "qp_types": (qp_type,), "count": p["count"]},
            )
        yield Case(
            verb.name,
            claim.id,
            claim.kind,
            f"mixed-x{p['count']}",
            {"api": p["api"], "qp_types": tuple(p["qp_types"]), "count": p["count"], "mixed": True},
        )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        types = [qp_type_value(name) for name in p["qp_types"]]
        if p.get("mixed"):
            types = [t for t in types if t in dut.creatable_qp_types()]
            if len(types) < 2:
                raise Unsupported(
                    "device can create fewer than two of the QP types "
                    f"{', '.join(p['qp_types'])}, so there is no mix"
                )
        else:
            dut.require_qp_type(types[0])
        # rxe/mlx5 (IB transport) reserve QP0/QP1 and use 24-bit numbers; iWARP has no such rule.
        ib_transport = not dut.identity.transport.lower().startswith("iw")
        numbers: list[int] = []
        shared = (res.pd(), res.cq(64))  # one PD and CQ for all: only the QPs are under test
        for index in range(int(p["count"])):
            qp, _ = make_qp(dut, res, p["api"], types[index % len(types)], dict(SMALL_CAP), pd_cq=shared)
            numbers.append(qp.qp_num)
        bad = [n for n in numbers if ib_transport and not 2 <= n < (1 << 24)]
        dupes = sorted({n for n in numbers if numbers.count(n) > 1})
        if bad or dupes:
            kinds = ", ".join(p["qp_types"])
            raise Deviation(
                _ref(case.verb, "RETURN VALUE"),
                f"{p['count']} live QPs ({kinds}) have valid, distinct qp_num values",
                f"invalid: {bad[:8]}; duplicated: {dupes[:8]}",
                {"qp_nums": numbers},
                qp_script(
                    dut.name,
                    p["api"],
                    p["qp_types"][0],
                    dict(SMALL_CAP),
                    f"qps = [QP(pd, init) for _ in range({p['count']})]\n"
                    "print(sorted(q.qp_num for q in qps))",
                ),
            )


@check_kind("qp-destroy-ok")
class DestroyOk:
    """ibv_destroy_qp of a fresh QP (made with ibv_create_qp_ex) returns 0."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for qp_type in claim.params["qp_types"]:
            yield Case(verb.name, claim.id, claim.kind, f"{qp_type}-fresh", {"qp_type": qp_type})

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        qp_type = qp_type_value(case.params["qp_type"])
        dut.require_qp_type(qp_type)
        qp, _ = make_qp(dut, res, "ex", qp_type, dict(SMALL_CAP))
        _, exc = attempt(qp.close)  # pyverbs raises when ibv_destroy_qp returns non-zero
        if exc is not None:
            raise Deviation(
                "ibv_create_qp_ex(3) RETURN VALUE",
                "ibv_destroy_qp returns 0",
                f"it returned {errno_name(errno_of(exc))}",
                {},
                qp_script(dut.name, "ex", case.params["qp_type"], dict(SMALL_CAP), "qp.close()"),
            )


@check_kind("qp-destroy-mcast-busy")
class DestroyMcastBusy:
    """ibv_destroy_qp fails while a UD QP is attached to a multicast group, works after detach.

    pyverbs has no ibv_attach_mcast, so this kind drives libibverbs through ctypes (cverbs).
    """

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for qp_type in claim.params["qp_types"]:
            yield Case(
                verb.name,
                claim.id,
                claim.kind,
                f"{qp_type}-attached-to-{claim.params['mgid']}",
                {"qp_type": qp_type, "mgid": claim.params["mgid"], "mlid": claim.params["mlid"]},
            )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        from pytest_rdma.checks import cverbs

        p = case.params
        qp_type = qp_type_value(p["qp_type"])
        dut.require_qp_type(qp_type)
        if dut.attr.max_mcast_grp <= 0 or dut.attr.max_mcast_qp_attach <= 0:
            raise Unsupported(
                "device advertises no multicast groups (max_mcast_grp / max_qp_mcast_attach = 0)"
            )
        result = cverbs.destroy_while_attached(dut.name, qp_type, p["mgid"], p["mlid"])
        script = cverbs.reproducer(dut.name, qp_type, p["mgid"], p["mlid"])
        if result.attach_rc != 0:
            raise Deviation(
                "ibv_attach_mcast(3) RETURN VALUE",
                "a UD QP attaches to a multicast group on a device that advertises multicast",
                f"ibv_attach_mcast returned {errno_name(result.attach_rc)}",
                {},
                script,
            )
        if result.destroy_attached_rc == 0:
            raise Deviation(
                "ibv_create_qp_ex(3) NOTES",
                "ibv_destroy_qp fails while the QP is attached to a multicast group",
                "it returned 0 (the QP was destroyed while attached)",
                {},
                script,
            )
        if result.destroy_after_detach_rc != 0:
            raise Deviation(
                "ibv_create_qp_ex(3) RETURN VALUE",
                "after ibv_detach_mcast, ibv_destroy_qp returns 0",
                f"detach returned {errno_name(result.detach_rc) if result.detach_rc else 0}, "
                f"destroy returned {errno_name(result.destroy_after_detach_rc)}",
                {},
                script,
            )


@check_kind("qp-srq-type-restricted")
class SrqTypeRestricted:
    """ibv_create_qp with an SRQ fails for QP types other than RC and UD."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for qp_type in claim.params["qp_types"]:
            yield Case(verb.name, claim.id, claim.kind, f"{qp_type}-with-srq", {"qp_type": qp_type})

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        qp_type = qp_type_value(case.params["qp_type"])
        dut.require_qp_type(qp_type)
        _require_srq(dut)
        srq = res.srq(4, 1)
        created, exc = attempt(lambda: make_qp(dut, res, "legacy", qp_type, dict(SMALL_CAP), srq=srq))
        if exc is None:
            raise Deviation(
                "ibv_create_qp(3) NOTES",
                f"a {case.params['qp_type']} QP with an SRQ is refused (only RC and UD may use one)",
                f"a QP was created (qp_num {created[0].qp_num})",
                {},
                qp_script(
                    dut.name,
                    "legacy",
                    case.params["qp_type"],
                    dict(SMALL_CAP),
                    "print('created', qp.qp_num)",
                    srq=True,
                ),
            )


@check_kind("qp-query-fresh")
class QueryFresh:
    """ibv_query_qp of a new QP: state RESET, qp_type and sq_sig_all as created."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for qp_type in claim.params["qp_types"]:
            yield Case(verb.name, claim.id, claim.kind, f"{qp_type}-after-create", {"qp_type": qp_type})

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        import pyverbs.enums as e

        qp_type = qp_type_value(case.params["qp_type"])
        dut.require_qp_type(qp_type)
        qp, _ = make_qp(dut, res, "legacy", qp_type, dict(SMALL_CAP), sq_sig_all=1)
        attr, init = qp.query(e.IBV_QP_STATE)
        observed = {"qp_state": attr.qp_state, "qp_type": init.qp_type, "sq_sig_all": init.sq_sig_all}
        expected = {"qp_state": e.IBV_QPS_RESET, "qp_type": qp_type, "sq_sig_all": 1}
        if observed != expected:
            raise Deviation(
                "ibv_query_qp(3) DESCRIPTION",
                f"{expected}",
                f"{observed}",
                {},
                qp_script(
                    dut.name,
                    "legacy",
                    case.params["qp_type"],
                    dict(SMALL_CAP),
                    "a, i = qp.query(e.IBV_QP_STATE)\nprint(a.qp_state, i.qp_type, i.sq_sig_all)",
                ),
            )
