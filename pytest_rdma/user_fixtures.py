"""Fixtures for tests of your own, with pyverbs: a context, a PD, a CQ, and factories for QPs,
MRs and connected pairs, on each device the run tests.

Every one of them rests on `rdma_dut`, so a test that uses any of them runs once per
--rdma-dev (its id names the device), is a check on that device under the leak and kernel-log
guards, and joins the per-driver report: passed is "conforms", a failed assertion a deviation
with its message. What they make is freed at teardown (a QP before its CQ and PD).

They make objects the catalogue's way: a CQ of the catalogue's default size, QP capabilities of
its IBV_QP_CAP values, and a QP moved to a state along ibv_modify_qp's `tables["walk"]` with the
required attributes of each step and their values (the same tables the generated checks walk).
A QP talks to itself (loopback) unless it is one end of a pair. A state the device cannot reach
that way makes the test "not exercised", saying which step failed.

pyverbs must match the installed rdma-core, so it comes from the distribution (python3-pyverbs);
without it a run whose tests use these fixtures is a usage error that names the package.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn, Protocol, cast

import pytest

from pytest_rdma.calls.values import flag_expr, is_flag_expr
from pytest_rdma.catalogue.model import Dev, Ref, substitute
from pytest_rdma.outcomes import NOT_EXERCISED, UNSUPPORTED
from pytest_rdma.user_claims import MARK, VERDICT_KEY, claim_of

if TYPE_CHECKING:
    from pytest_rdma.provider.device import DeviceUnderTest

FIXTURES = ("rdma_context", "rdma_pd", "rdma_cq", "rdma_qp", "rdma_mr", "rdma_pair")
PYVERBS_MISSING = (
    "the fixtures rdma_context, rdma_pd, rdma_cq, rdma_qp, rdma_mr and rdma_pair need pyverbs, which must match "
    "the installed rdma-core: install the distribution's package (Debian/Ubuntu: apt-get install python3-pyverbs; "
    "Fedora: dnf install python3-pyverbs) and run pytest with that Python (a venv made with --system-site-packages "
    "sees it)"
)
QP_TYPES = ("RC", "UC", "UD", "RAW_PACKET")


def pyverbs_missing() -> bool:
    return importlib.util.find_spec("pyverbs") is None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    uses = [item for item in items if set(FIXTURES) & set(getattr(item, "fixturenames", ()))]
    if uses and pyverbs_missing():
        raise pytest.UsageError(f"{uses[0].nodeid}: {PYVERBS_MISSING}")
    for item in items:
        claim_of(item)  # a malformed rdma_claim marker is a usage error before anything runs


@pytest.fixture(autouse=True)
def _rdma_claim_needs(request: pytest.FixtureRequest) -> None:
    """A test tied to a claim runs only where the device advertises what the claim needs;
    elsewhere it is unsupported, naming the attribute and its value (before its resources are made)."""
    if request.node.get_closest_marker(MARK) is None or "rdma_dut" not in request.fixturenames:
        return
    claim = claim_of(request.node)
    dut: DeviceUnderTest = request.getfixturevalue("rdma_dut")
    for cap in claim.needs if claim else ():
        why = dut.missing(cap)
        if why:
            skip(request, UNSUPPORTED, why)


def skip(request: pytest.FixtureRequest, outcome: str, reason: str) -> NoReturn:
    """Skip the test, recording why as an outcome of the suite's (the recorder reads it)."""
    request.node.stash[VERDICT_KEY] = (outcome, reason)
    pytest.skip(f"{outcome}: {reason}")


class NotReached(Exception):
    """The fixtures could not make what the test asked for: the test is not exercised, saying why."""


# -- the objects ---------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def rdma_context(rdma_dut: DeviceUnderTest) -> Iterator[object]:
    """A pyverbs Context of the device under test, opened once per device."""
    if pyverbs_missing():
        raise pytest.UsageError(PYVERBS_MISSING)
    from pyverbs.device import Context

    ctx = Context(name=rdma_dut.name)
    yield ctx
    ctx.close()


@pytest.fixture
def rdma_pd(rdma_context: object) -> Iterator[object]:
    """A protection domain, freed after the test."""
    from pyverbs.pd import PD

    pd = PD(rdma_context)
    yield pd
    pd.close()


@pytest.fixture
def rdma_cq(rdma_dut: DeviceUnderTest, rdma_context: object) -> Iterator[object]:
    """A completion queue of the catalogue's default size (ibv_create_cq's cqe), freed after the test."""
    from pyverbs.cq import CQ

    cq = CQ(rdma_context, _default(rdma_dut, "ibv_create_cq", "cqe", 16))
    yield cq
    cq.close()


@pytest.fixture
def rdma_mr(rdma_pd: object) -> Iterator[Callable[..., object]]:
    """make(size=4096, access="IBV_ACCESS_LOCAL_WRITE", pd=None): a registered region with a buffer of its own."""
    from pyverbs.mr import MR

    made: list[object] = []

    def make(size: int = 4096, access: int | str = "IBV_ACCESS_LOCAL_WRITE", pd: object | None = None) -> object:
        mr = MR(pd or rdma_pd, size, _flags(access))
        made.append(mr)
        return mr

    yield make
    for mr in reversed(made):
        mr.close()  # type: ignore[attr-defined]  # pyverbs objects close themselves


@pytest.fixture
def rdma_qp(
    request: pytest.FixtureRequest, rdma_dut: DeviceUnderTest, rdma_context: object, rdma_pd: object, rdma_cq: object
) -> Iterator[Callable[..., object]]:
    """make(qp_type="RC", state="RESET", caps=None, pd=None, cq=None): a QP in that state, walked there
    by ibv_modify_qp's state table; caps overrides the catalogue's IBV_QP_CAP values (max_send_wr, ...)."""
    made: list[object] = []

    def make(
        qp_type: str = "RC",
        state: str = "RESET",
        caps: Mapping[str, int] | None = None,
        pd: object | None = None,
        cq: object | None = None,
    ) -> object:
        try:
            qp = _create_qp(rdma_dut, pd or rdma_pd, cq or rdma_cq, qp_type, caps)
            made.append(qp)
            walk(rdma_dut, rdma_context, qp, qp_type, state, dest_qp_num=int(qp.qp_num))  # type: ignore[attr-defined]
            return qp
        except NotReached as exc:
            reason = str(exc)
        skip(request, NOT_EXERCISED, reason)  # outside the except: a skip need not chain what it came from

    yield make
    for qp in reversed(made):
        qp.close()  # type: ignore[attr-defined]


@dataclass
class Pair:
    """Two QPs of the device connected to each other: `a` sends to `b`, each with its own CQ.
    For UD, `ah` addresses `b` and `qkey` is the Q_Key both use."""

    qp_type: str
    a: object
    b: object
    cq_a: object
    cq_b: object
    pd: object
    ah: object | None = None
    qkey: int = 0


@pytest.fixture
def rdma_pair(
    request: pytest.FixtureRequest, rdma_dut: DeviceUnderTest, rdma_context: object, rdma_pd: object
) -> Iterator[Callable[..., Pair]]:
    """make(qp_type="RC", caps=None): two QPs in RTS connected to each other (RC, UC) or able to reach
    each other (UD, with an address handle). On iWARP, RC is connected through rdma_cm."""
    from pyverbs.cq import CQ

    made: list[object] = []

    def make(qp_type: str = "RC", caps: Mapping[str, int] | None = None) -> Pair:
        try:
            return connected(qp_type, caps)
        except NotReached as exc:
            reason = str(exc)
        skip(request, NOT_EXERCISED, reason)

    def connected(qp_type: str, caps: Mapping[str, int] | None) -> Pair:
        iwarp = rdma_dut.transport == "iwarp"
        if iwarp and qp_type != "RC":
            raise NotReached(f"iWARP connects only reliable connections (RC), not {qp_type}")
        cqe = _default(rdma_dut, "ibv_create_cq", "cqe", 16)
        cq_a, cq_b = CQ(rdma_context, cqe), CQ(rdma_context, cqe)
        made.extend((cq_a, cq_b))
        a = _create_qp(rdma_dut, rdma_pd, cq_a, qp_type, caps)
        made.append(a)
        b = _create_qp(rdma_dut, rdma_pd, cq_b, qp_type, caps)
        made.append(b)
        if iwarp:
            # iWARP QPs connect only through rdma_cm: walked to INIT, then connected by their numbers.
            walk(rdma_dut, rdma_context, a, qp_type, "INIT", dest_qp_num=0)
            walk(rdma_dut, rdma_context, b, qp_type, "INIT", dest_qp_num=0)
            made[:0] = connect_cm(rdma_dut, a, b)
        else:
            walk(rdma_dut, rdma_context, a, qp_type, "RTS", dest_qp_num=int(b.qp_num))  # type: ignore[attr-defined]
            walk(rdma_dut, rdma_context, b, qp_type, "RTS", dest_qp_num=int(a.qp_num))  # type: ignore[attr-defined]
        pair = Pair(qp_type, a, b, cq_a, cq_b, rdma_pd)
        if qp_type == "UD":
            from pyverbs.addr import AH

            values = cast("Mapping[str, Mapping[str, Mapping[str, object]]]", _walk_table(rdma_dut)["values"])
            av = cast("Mapping[str, object]", values["IBV_QP_AV"]["ah_attr"])
            pair.ah = AH(rdma_pd, attr=_address(rdma_dut, rdma_context, av))
            made.insert(0, pair.ah)
            pair.qkey = int(cast(int, values["IBV_QP_QKEY"]["qkey"]))
        return pair

    yield make
    # The connection first (rdma_cm's ids, then its channel), then the address handle and QPs, then the CQs.
    order = ("CMID", "CMEventChannel", "AH", "QP")
    for thing in sorted(
        reversed(made), key=lambda o: order.index(type(o).__name__) if type(o).__name__ in order else 9
    ):
        thing.close()  # type: ignore[attr-defined]


class _Event(Protocol):
    """A pyverbs CMEvent: what connect_cm does with one."""

    def ack_cm_event(self) -> None: ...


CM_PORT = 18516  # one above the catalogue's own (kinds/traffic.py), so the two never meet on a listener
CM_TIMEOUT_MS = 5000


def connect_cm(dut: DeviceUnderTest, a: object, b: object) -> list[object]:
    """Connect two QPs in INIT through rdma_cm, as the catalogue's traffic does: a listener on the
    device's IPv4 address, a client, and each QP named by its number. What was made, to close."""
    from pyverbs import cm_enums as cm
    from pyverbs.cmid import CMID, AddrInfo, CMEvent, CMEventChannel, ConnParam
    from pyverbs.pyverbs_error import PyverbsError

    from pytest_rdma.provider.network import ipv4_of

    address = ipv4_of(dut.name, int(cast(int, dut.fact("port_num"))))
    if not address:
        raise NotReached(f"{dut.name}'s network interface has no IPv4 address, which rdma_cm needs")
    made: list[object] = []

    def expect(channel: object, wanted: object) -> _Event:
        event = CMEvent(channel)
        got = event.event_type
        if got != wanted:
            event.ack_cm_event()
            raise PyverbsError(f"rdma_cm answered {type(wanted)(got)!s} where the pair needed {wanted!s}")  # type: ignore[call-arg]
        return event

    try:
        channel = CMEventChannel()
        made.append(channel)
        listen = CMID(creator=channel, port_space=cm.RDMA_PS_TCP)
        made.insert(0, listen)
        listen.bind_addr(
            AddrInfo(src=address, src_service=str(CM_PORT), port_space=cm.RDMA_PS_TCP, flags=cm.RAI_PASSIVE)
        )
        listen.listen()
        client = CMID(creator=channel, port_space=cm.RDMA_PS_TCP)
        made.insert(0, client)
        client.resolve_addr(AddrInfo(dst=address, dst_service=str(CM_PORT), port_space=cm.RDMA_PS_TCP), CM_TIMEOUT_MS)
        expect(channel, cm.RDMA_CM_EVENT_ADDR_RESOLVED).ack_cm_event()
        client.resolve_route(CM_TIMEOUT_MS)
        expect(channel, cm.RDMA_CM_EVENT_ROUTE_RESOLVED).ack_cm_event()
        client.connect(ConnParam(qp_num=int(a.qp_num)))  # type: ignore[attr-defined]
        request = expect(channel, cm.RDMA_CM_EVENT_CONNECT_REQUEST)
        server = CMID(creator=request, listen_id=listen)
        made.insert(0, server)
        server.accept(ConnParam(qp_num=int(b.qp_num)))  # type: ignore[attr-defined]
        request.ack_cm_event()
        for _ in range(2):
            expect(channel, cm.RDMA_CM_EVENT_ESTABLISHED).ack_cm_event()
    except PyverbsError as exc:
        for thing in made:
            thing.close()  # type: ignore[attr-defined]
        raise NotReached(f"could not connect the pair through rdma_cm ({exc})") from None
    return made


# -- the catalogue's way -------------------------------------------------------------------------
def _default(dut: DeviceUnderTest, verb: str, param: str, fallback: int) -> int:
    for p in dut.catalogue[verb].params:
        if p.name == param and isinstance(p.default, int):
            return p.default
    return fallback


def _flags(value: int | str) -> int:
    return value if isinstance(value, int) else flag_expr(value).value


def _walk_table(dut: DeviceUnderTest) -> Mapping[str, object]:
    return cast("Mapping[str, object]", dut.catalogue.mover("qp").tables["walk"])


def _create_qp(dut: DeviceUnderTest, pd: object, cq: object, qp_type: str, caps: Mapping[str, int] | None) -> object:
    from pyverbs.pyverbs_error import PyverbsRDMAError
    from pyverbs.qp import QP, QPCap, QPInitAttr

    if qp_type not in QP_TYPES:
        raise ValueError(f"qp_type {qp_type!r}: give one of {', '.join(QP_TYPES)}")
    values = cast("Mapping[str, Mapping[str, Mapping[str, int]]]", _walk_table(dut)["values"])
    cap = {**values["IBV_QP_CAP"]["cap"], **(caps or {})}
    init = QPInitAttr(qp_type=flag_expr(f"IBV_QPT_{qp_type}").value, scq=cq, rcq=cq, cap=QPCap(**cap))
    try:
        return QP(pd, init)
    except PyverbsRDMAError as exc:
        raise NotReached(f"ibv_create_qp of a {qp_type} QP with {cap} failed ({exc})") from None


def walk(dut: DeviceUnderTest, ctx: object, qp: object, qp_type: str, target: str, dest_qp_num: int) -> None:
    """Move a fresh QP to `target` as the catalogue's checks do: along the walk's path, each step with its
    required attributes and the table's values; the peer of a connected QP is `dest_qp_num`."""
    from pyverbs.pyverbs_error import PyverbsRDMAError
    from pyverbs.qp import QPAttr

    table = _walk_table(dut)
    path = cast("tuple[str, ...]", table["path"])
    through = cast("Mapping[str, str]", table.get("through", {})).get(target, target)
    if through not in path:
        raise ValueError(f"state {target!r}: give one of {', '.join((*path, *cast(Mapping, table['through'])))}")
    required = cast("Mapping[str, Mapping[str, tuple[str, ...]]]", table["required"])[qp_type]
    values = cast("Mapping[str, Mapping[str, object]]", table["values"])
    steps = [(b, a, required[f"{b}>{a}"]) for b, a in zip(path, path[1:]) if path.index(b) < path.index(through)]
    if through != target:
        steps.append((through, target, ("IBV_QP_STATE",)))
    for before, after, flags in steps:
        attr = QPAttr()
        mask = 0
        for flag in flags:
            mask |= flag_expr(flag).value
            fields = substitute(values[flag], {"from": f"IBV_QPS_{before}", "to": f"IBV_QPS_{after}"})
            for name, value in cast("Mapping[str, object]", fields).items():
                if name == "rq_psn":
                    # A responder expects the PSN its requester starts from, and every requester here (the QP
                    # itself, or the other end of a pair) starts from the table's sq_psn: as kinds/traffic.py does.
                    value = values["IBV_QP_SQ_PSN"]["sq_psn"]
                setattr(attr, name, _value(dut, ctx, value, dest_qp_num))
        try:
            qp.modify(attr, mask)  # type: ignore[attr-defined]
        except PyverbsRDMAError as exc:
            raise NotReached(
                f"could not reach {target}: ibv_modify_qp {before}>{after} with its required "
                f"attributes ({' | '.join(flags)}) failed ({exc})"
            ) from None


def _value(dut: DeviceUnderTest, ctx: object, value: object, dest_qp_num: int) -> object:
    if isinstance(value, Mapping):
        return _address(dut, ctx, value)
    if isinstance(value, Ref):  # the walk's only reference: the QP on the other end
        return dest_qp_num
    if isinstance(value, Dev):
        fact = dut.fact(value.path)
        return fact * value.times + value.plus if isinstance(fact, int) else fact
    if isinstance(value, str) and is_flag_expr(value):
        return flag_expr(value).value
    return value


def _address(dut: DeviceUnderTest, ctx: object, av: Mapping[str, object]) -> object:
    """The catalogue's address vector (its fields, `grh.*` in the global route) as a pyverbs AHAttr;
    its destination GID is the device's own (both ends are on it)."""
    from pyverbs.addr import AHAttr, GlobalRoute

    plain = {k: _value(dut, ctx, v, 0) for k, v in av.items() if not k.startswith("grh.")}
    route = {k[len("grh.") :]: v for k, v in av.items() if k.startswith("grh.")}
    gid = ctx.query_gid(int(cast(int, dut.fact("port_num"))), int(cast(int, dut.fact("gid_index"))))  # type: ignore[attr-defined]
    route = {k: (gid if k == "dgid" else _value(dut, ctx, v, 0)) for k, v in route.items()}
    return AHAttr(gr=GlobalRoute(**route), **plain)
