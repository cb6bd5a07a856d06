"""Check kinds for the verbs the fixtures rely on: device list/open, port/GID/P_Key tables,
PD, CQ, SRQ and MR creation.

`index-bounds` and `created-size-at-least` are driven by data (which Context method, which
attribute holds the table length; which resource and sizes), so a new verb description
with the same shape of promise needs no new code.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pytest_rdma.catalogue.model import Claim, Verb
from pytest_rdma.checks.registry import Case, check_kind
from pytest_rdma.checks.support import attempt, errno_name, errno_of, read_path, reproducer
from pytest_rdma.outcomes import Deviation, Unsupported

INDEX_VARIANTS = ("first", "last", "one-past-end", "before-first")


@check_kind("index-bounds")
class IndexBounds:
    """A table indexed from `base` with `length` entries: the ends answer, one beyond either end fails."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for where in INDEX_VARIANTS:
            yield Case(
                verb.name,
                claim.id,
                claim.kind,
                f"{claim.params['length'].split('.')[-1]}-{where}",
                {**claim.params, "where": where, "ref": f"{verb.man} {claim.section}"},
            )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        p = case.params
        owner, _, path = p["length"].partition(".")
        length = int(read_path(getattr(dut, owner), path))
        base = int(p["base"])
        index = {
            "first": base,
            "last": base + length - 1,
            "one-past-end": base + length,
            "before-first": base - 1,
        }[p["where"]]
        inside = p["where"] in ("first", "last")
        if inside and length == 0:
            raise Unsupported(f"the device reports {p['length']} = 0: there is no entry to read")
        args = (dut.port, index) if p["with_port"] else (index,)
        method = getattr(dut.ctx, p["method"])
        value, exc = attempt(lambda: method(*args))
        call = f"ctx.{p['method']}({', '.join(map(str, args))})"
        script = reproducer(dut.name, f"print({call})")
        details = {p["length"]: length, "index": index}
        if inside and exc is not None:
            raise Deviation(
                p["ref"],
                f"{call} succeeds (index inside the table)",
                f"it failed: {errno_name(errno_of(exc))}",
                details,
                script,
            )
        if not inside and exc is None:
            raise Deviation(
                p["ref"], f"{call} fails (index outside the table)", f"it returned {value}", details, script
            )


@check_kind("device-listed")
class DeviceListed:
    """ibv_get_device_list names the device under test exactly once, among distinct names."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        yield Case(verb.name, claim.id, claim.kind, "device-under-test", {})

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        from pyverbs.device import get_device_list

        names = [d.name.decode() if isinstance(d.name, bytes) else d.name for d in get_device_list()]
        if names.count(dut.name) != 1 or len(set(names)) != len(names):
            raise Deviation(
                "ibv_get_device_list(3) RETURN VALUE",
                f"{dut.name} listed once among distinct names",
                f"list: {names}",
                {},
                "import pyverbs.device as d\nprint([x.name for x in d.get_device_list()])\n",
            )


@check_kind("context-independent")
class ContextIndependent:
    """A second context on the device works, and closing it leaves the first context usable."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        yield Case(verb.name, claim.id, claim.kind, "second-context", {})

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        from pyverbs.device import Context
        from pyverbs.pd import PD

        script = reproducer(
            dut.name,
            "from pyverbs.pd import PD\nother = Context(name=ctx.name)\nPD(other).close()\n"
            "other.close()\nprint(ctx.query_device().max_qp, PD(ctx))",
        )
        other = Context(name=dut.name)
        try:
            _, exc = attempt(lambda: PD(other).close())
        finally:
            other.close()
        if exc is not None:
            raise Deviation(
                "ibv_open_device(3) DESCRIPTION",
                "a PD can be allocated on a second context",
                f"ibv_alloc_pd failed: {errno_name(errno_of(exc))}",
                {},
                script,
            )
        _, exc = attempt(lambda: (dut.ctx.query_device(), res.pd()))
        if exc is not None:
            raise Deviation(
                "ibv_open_device(3) DESCRIPTION",
                "the first context still works after the second is closed",
                f"it failed: {errno_name(errno_of(exc))}",
                {},
                script,
            )


def _make_sized(dut: Any, res: Any, resource: str, request: dict[str, int]) -> tuple[dict[str, int], str]:
    """Create `resource` with `request`; return its actual sizes and the reproducer body."""
    if resource == "cq":
        cq = res.cq(request["cqe"])
        return {"cqe": cq.cqe}, f"from pyverbs.cq import CQ\nprint(CQ(ctx, {request['cqe']}).cqe)"
    if dut.attr.max_srq <= 0:
        raise Unsupported("device advertises max_srq = 0 (no SRQs)")
    from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

    # ibv_create_srq(3) rewrites srq_init_attr->attr with the actual sizes: read them there.
    attr = SrqInitAttr(SrqAttr(max_wr=request["max_wr"], max_sge=request["max_sge"]))
    res.adopt(SRQ(res.pd(), attr))
    return (
        {"max_wr": attr.max_wr, "max_sge": attr.max_sge},
        "from pyverbs.pd import PD\nfrom pyverbs.srq import SRQ, SrqAttr, SrqInitAttr\n"
        f"a = SrqInitAttr(SrqAttr(max_wr={request['max_wr']}, "
        f"max_sge={request['max_sge']}))\n"
        "SRQ(PD(ctx), a)\nprint(a.max_wr, a.max_sge)",
    )


@check_kind("created-size-at-least")
class CreatedSizeAtLeast:
    """A created resource is at least as large as requested, in every sized field."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for request in claim.params["requests"]:
            label = "-".join(f"{k}-{v}" for k, v in request.items())
            yield Case(
                verb.name,
                claim.id,
                claim.kind,
                label,
                {
                    "resource": claim.params["resource"],
                    "request": dict(request),
                    "ref": f"{verb.man} {claim.section}",
                },
            )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        request = dict(case.params["request"])
        actual, body = _make_sized(dut, res, case.params["resource"], request)
        short = {k: actual[k] for k in request if actual[k] < request[k]}
        if short:
            raise Deviation(
                case.params["ref"], f"sizes >= {request}", f"sizes {actual}", {}, reproducer(dut.name, body)
            )


@check_kind("pd-distinct")
class PdDistinct:
    """Many PDs: each has its own handle, and deallocating each returns 0."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        yield Case(
            verb.name, claim.id, claim.kind, f"x{claim.params['count']}", {"count": claim.params["count"]}
        )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        from pyverbs.pd import PD

        count = int(case.params["count"])
        script = reproducer(
            dut.name,
            f"from pyverbs.pd import PD\npds = [PD(ctx) for _ in range({count})]\n"
            "print([p.handle for p in pds]); [p.close() for p in pds]",
        )
        pds = [PD(dut.ctx) for _ in range(count)]
        handles = [pd.handle for pd in pds]
        failures = []
        for pd in pds:
            _, exc = attempt(pd.close)
            if exc is not None:
                failures.append(errno_name(errno_of(exc)))
        if len(set(handles)) != count:
            raise Deviation(
                "ibv_alloc_pd(3) DESCRIPTION", f"{count} distinct PDs", f"handles {handles}", {}, script
            )
        if failures:
            raise Deviation(
                "ibv_alloc_pd(3) RETURN VALUE",
                "ibv_dealloc_pd of an unused PD returns 0",
                f"failures: {failures}",
                {},
                script,
            )


@check_kind("mr-basics")
class MrBasics:
    """ibv_reg_mr with local write access works, reports the requested length; dereg returns 0."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for length in claim.params["lengths"]:
            yield Case(verb.name, claim.id, claim.kind, f"length-{length}", {"length": length})

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        import pyverbs.enums as e
        from pyverbs.mr import MR

        length = int(case.params["length"])
        script = reproducer(
            dut.name,
            f"from pyverbs.pd import PD\nfrom pyverbs.mr import MR\n"
            f"mr = MR(PD(ctx), {length}, e.IBV_ACCESS_LOCAL_WRITE)\n"
            "print(mr.length, mr.lkey, mr.rkey); mr.close()",
        )
        mr, exc = attempt(lambda: MR(res.pd(), length, e.IBV_ACCESS_LOCAL_WRITE))
        if exc is not None:
            raise Deviation(
                "ibv_reg_mr(3) RETURN VALUE",
                f"a {length}-byte MR with local write is registered",
                f"it failed: {errno_name(errno_of(exc))}",
                {},
                script,
            )
        if mr.length != length:
            mr.close()
            raise Deviation(
                "ibv_reg_mr(3) DESCRIPTION", f"mr length {length}", f"mr length {mr.length}", {}, script
            )
        _, exc = attempt(mr.close)
        if exc is not None:
            raise Deviation(
                "ibv_reg_mr(3) RETURN VALUE",
                "ibv_dereg_mr returns 0",
                f"it returned {errno_name(errno_of(exc))}",
                {},
                script,
            )


@check_kind("mr-access-rejected")
class MrAccessRejected:
    """An access combination the page forbids makes ibv_reg_mr fail."""

    @staticmethod
    def expand(verb: Verb, claim: Claim) -> Iterator[Case]:
        for flags in claim.params["access"]:
            label = "+".join(name.removeprefix("IBV_ACCESS_") for name in flags)
            yield Case(
                verb.name, claim.id, claim.kind, f"{label}-without-LOCAL_WRITE", {"access": tuple(flags)}
            )

    @staticmethod
    def run(case: Case, dut: Any, res: Any) -> None:
        import pyverbs.enums as e
        from pyverbs.mr import MR

        access = 0
        for name in case.params["access"]:
            access |= int(getattr(e, name))
        mr, exc = attempt(lambda: res.adopt(MR(res.pd(), 4096, access)))
        if exc is None:
            raise Deviation(
                "ibv_reg_mr(3) DESCRIPTION",
                f"access {access:#x} without LOCAL_WRITE is refused",
                f"an MR was registered (lkey {mr.lkey:#x})",
                {},
                reproducer(
                    dut.name,
                    f"from pyverbs.pd import PD\nfrom pyverbs.mr import MR\n"
                    f"print(MR(PD(ctx), 4096, {access:#x}).lkey)",
                ),
            )
