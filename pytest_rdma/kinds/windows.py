"""Memory windows on a connected pair: the bind, the key it yields, and what that key grants.

- window: the QP that owns a registered region binds a window to part of it (type 1 through
  ibv_bind_mw, type 2 through an IBV_WR_BIND_MW work request, its new key made with
  ibv_inc_rkey); the bind completes with IBV_WC_BIND_MW. Then, as the claim asks, the window
  is unbound (a type 1 bind of length 0), invalidated by its owner (IBV_WR_LOCAL_INV, which
  completes with IBV_WC_LOCAL_INV) or by the peer (IBV_WR_SEND_WITH_INV: the owner's receive
  completion carries IBV_WC_WITH_INV and the invalidated key), freed (ibv_dealloc_mw), or its
  region is deregistered (refused while the window is bound). Last the peer's RDMA WRITE or READ goes through the
  window's key, inside the bound range or across its end, and completes with the status the
  claim gives; when it succeeds the bytes are where the window put them.

Why a kind of its own: transfer and access-fault run one work request against a region with
the region's own key. A window claim is about a key that a bind produced, and about what the
target side did before the probe (a bind, its completion, an invalidation): a sequence of
work requests on both QPs, each with its own completion to judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Union

from pytest_rdma.calls.readback import number
from pytest_rdma.calls.record import Call, Field, Handle, Sym, result_name
from pytest_rdma.catalogue.model import Need, Value
from pytest_rdma.kinds.behaviours import Behaviours
from pytest_rdma.kinds.calls import prepare
from pytest_rdma.kinds.check import Check
from pytest_rdma.kinds.datapath import PairParams, Scenario, opcode_of, status_name, status_source
from pytest_rdma.kinds.registry import kind
from pytest_rdma.kinds.traffic import Completion, field
from pytest_rdma.observations import CompletionStatus, Differs, Returned

REGION = 8192  # the target region; the window covers part of it
WINDOW_OFFSET, WINDOW_LENGTH = 1024, 2048
PROBE = 64  # bytes the peer's RDMA operation moves
BIND_ID, UNBIND_ID, INV_ID, INV_RECV_ID = 0xB1D, 0xB1D0, 0x1A7, 0x1A70
# Where the probe lands, as an offset into the region: well inside the window, past its end
# (still inside the region), or starting inside and running over its end.
WHERE = {
    "inside": WINDOW_OFFSET + 512,
    "outside": WINDOW_OFFSET + WINDOW_LENGTH + 1024,
    "across-end": WINDOW_OFFSET + WINDOW_LENGTH - PROBE // 2,
}
# The region grants every remote access, so a refusal through the window is the window's.
REGION_ACCESS = "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND"


@dataclass(frozen=True, kw_only=True)
class WindowParams(PairParams):
    type: int = 1  # the window type: 1 or 2
    access: str = "IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ"  # what the bind grants
    where: str = "inside"  # where the probe lands: a name of WHERE
    statuses: tuple[str, ...] = ("IBV_WC_SUCCESS",)  # the probe's completion
    then: str = ""  # what follows the bind: a name of THEN ("": nothing)
    report: bool = False  # the claim is about what the invalidating receive says
    probe: bool = True  # the peer's RDMA operation through the key follows


class Window:
    """One case's pair, target region, window and its key."""

    def __init__(self, check: Check, params: WindowParams) -> None:
        self.check = check
        self.params = params
        self.vars = check.spec["vars"]
        self.scenario = Scenario(check, params)  # its opcode is the probe's
        self.type = number(self.vars.get("type", params.type), "the window type")  # 1 or 2 (an axis, or params)
        self.scenario.build(size=PROBE, remote_access=REGION_ACCESS, recv_size=REGION)
        self.pair = self.scenario.pair
        self.owner = self.pair.receiver  # binds, invalidates, and is the probe's target
        self.region: Handle = self.scenario.remote
        self.mw = check.resource(Need("mw", spec={"type": f"IBV_MW_TYPE_{self.type}"}))
        self.key: Union[Field, Sym, None] = None  # the key the window answers to (so C reads it too)

    def _range(self, length: int) -> dict[str, Value]:
        return {
            "mr": self.region,
            "addr": field(self.region, "addr", self.check, WINDOW_OFFSET),
            "length": length,
            "mw_access_flags": self.params.access if length else 0,
        }

    def bind(self) -> None:
        """Bind the window to the region's middle; its completion is IBV_WC_BIND_MW with the bind's wr_id."""
        self.post_bind()
        self.completes(self.pair.recv_cq, BIND_ID, "IBV_WR_BIND_MW", "bind", self.owner)

    def post_bind(self) -> None:
        """Post the bind of the window to the region's middle (its completion is the caller's to judge)."""
        check = self.check
        if self.type == 1:
            info = self._range(WINDOW_LENGTH)
            call = check.calls.invoke(
                "ibv_bind_mw",
                {
                    "qp": self.owner,
                    "mw": self.mw,
                    "mw_bind": {
                        "wr_id": BIND_ID,
                        "send_flags": "IBV_SEND_SIGNALED",
                        **{f"bind_info.{k}": v for k, v in info.items()},
                    },
                },
            )
            if not call.ok:
                raise check.failure(call, "the bind of a type 1 window is posted", ref="ibv_bind_mw(3) RETURN VALUE")
            # The page returns the new key in mw->rkey: read it there (the reproducer reads it there too).
            self.key = field(self.mw, "rkey", check)
        else:
            made = check.calls.invoke("ibv_inc_rkey", {"rkey": field(self.mw, "rkey", check)})
            # A type 2 window answers to the key its bind asked for (bind_mw.rkey): the result of
            # ibv_inc_rkey, which the reproducer keeps in its own variable.
            self.key = Sym(number(made.value, "ibv_inc_rkey's key"), result_name(made.index))  # a uint32_t
            self.post(
                self.owner,
                {
                    "wr_id": BIND_ID,
                    "opcode": "IBV_WR_BIND_MW",
                    "send_flags": "IBV_SEND_SIGNALED",
                    "num_sge": 0,
                    "bind_mw.mw": self.mw,
                    "bind_mw.rkey": self.key,
                    **{f"bind_mw.bind_info.{k}": v for k, v in self._range(WINDOW_LENGTH).items()},
                },
                "ibv_post_send(3) DESCRIPTION",
            )

    def post(self, qp: Handle, wr: Mapping[str, Value], ref: str) -> Call:
        call = self.scenario.traffic.post_send(qp, [wr])
        if not call.ok:
            raise self.check.failure(call, f"a valid {wr['opcode']} work request is posted", ref=ref)
        return call

    def completes(self, cq: Handle, wr_id: int, opcode: str, side: str, qp: Handle, **more: Value) -> Completion:
        """The next completion of `cq` is the successful one of `opcode` (its table row gives the WC opcode)."""
        (wc,) = self.scenario.traffic.poll(cq, 1)
        row = opcode_of(self.check, opcode)
        fields = {
            "status": "IBV_WC_SUCCESS",
            "wr_id": wr_id,
            "opcode": row["recv_wc" if side.endswith("receive") else "send_wc"],
            "qp_num": field(qp, "qp_num", self.check).value,
            **more,
        }
        self.scenario.expect_wc(wc, fields, side)
        return wc

    # -- what may happen between the bind and the probe -----------------------------------------
    def unbind(self) -> None:
        """Type 1: a bind of length 0 (the region named, as a bind needs) leaves the window bound to nothing."""
        call = self.check.calls.invoke(
            "ibv_bind_mw",
            {
                "qp": self.owner,
                "mw": self.mw,
                "mw_bind": {
                    "wr_id": UNBIND_ID,
                    "send_flags": "IBV_SEND_SIGNALED",
                    **{f"bind_info.{k}": v for k, v in self._range(0).items()},
                },
            },
        )
        if not call.ok:
            raise self.check.failure(
                call, "a zero-length bind (an unbind) is posted", ref="ibv_alloc_mw(3) DESCRIPTION"
            )
        self.completes(self.pair.recv_cq, UNBIND_ID, "IBV_WR_BIND_MW", "unbind", self.owner)
        self.key = field(self.mw, "rkey", self.check)  # the window's key now: it must grant nothing

    def local_inv(self) -> None:
        self.post(
            self.owner,
            {
                "wr_id": INV_ID,
                "opcode": "IBV_WR_LOCAL_INV",
                "send_flags": "IBV_SEND_SIGNALED",
                "num_sge": 0,
                "invalidate_rkey": self.key,
            },
            "ibv_post_send(3) DESCRIPTION",
        )
        self.completes(self.pair.recv_cq, INV_ID, "IBV_WR_LOCAL_INV", "local invalidate", self.owner)

    def send_with_inv(self) -> None:
        """The peer's SEND_WITH_INV: the owner's receive completion says which key it invalidated."""
        t = self.scenario.traffic
        landing = t.mr(PROBE, "IBV_ACCESS_LOCAL_WRITE", "landing")
        call = t.post_recv(self.owner, [{"wr_id": INV_RECV_ID, "sg_list": (t.sge(landing, PROBE),), "num_sge": 1}])
        if not call.ok:
            raise self.check.failure(call, "a valid receive WR is posted", ref="ibv_post_recv(3) RETURN VALUE")
        self.post(
            self.pair.sender,
            {
                "wr_id": INV_ID,
                "opcode": "IBV_WR_SEND_WITH_INV",
                "send_flags": "IBV_SEND_SIGNALED",
                "sg_list": (t.sge(self.scenario.local, 16),),
                "num_sge": 1,
                "invalidate_rkey": self.key,
            },
            "ibv_post_send(3) DESCRIPTION",
        )
        self.completes(self.pair.send_cq, INV_ID, "IBV_WR_SEND_WITH_INV", "send-with-invalidate", self.pair.sender)
        # What the receive says about the invalidation is a claim of its own ("report"): a claim
        # about the key's fate afterwards judges only that the receive completed.
        key = self.key
        assert key is not None  # set by bind()
        said = {"invalidated_rkey": int(key), "wc_flags": "IBV_WC_WITH_INV"} if self.params.report else {}
        self.completes(
            self.pair.recv_cq, INV_RECV_ID, "IBV_WR_SEND_WITH_INV", "invalidating receive", self.owner, **said
        )

    def dealloc(self) -> None:
        """Free the bound window; its key must grant nothing after (ibv_alloc_mw(3) DESCRIPTION)."""
        if self.type == 1:
            # A type 1 key lives in mw->rkey, which the reproducer could not read once the window is freed.
            raise ValueError("then dealloc is written for type 2 windows, whose key the check holds itself")
        call = self.check.calls.invoke("ibv_dealloc_mw", {"mw": self.mw})
        if not call.ok:
            raise self.check.failure(call, "a bound window is freed", ref="ibv_alloc_mw(3) RETURN VALUE")

    def dereg_region(self) -> None:
        """The region under a bound window cannot be deregistered (ibv_alloc_mw(3) NOTES)."""
        check = self.check
        call = check.calls.invoke("ibv_dereg_mr", {"mr": self.region})
        if call.ok:
            raise check.deviation(
                "ibv_dereg_mr fails: a window is bound to the region",
                "the region was deregistered (0)",
                Returned(),
                call,
                ref="ibv_alloc_mw(3) NOTES",
            )

    # -- the probe -------------------------------------------------------------------------------------
    def probe(self) -> None:
        """The peer's RDMA operation through the window's key completes as the claim says."""
        check, s = self.check, self.scenario
        offset = WHERE[str(self.vars.get("where", self.params.where))]
        s.post_send(s.send_wr(rkey=self.key, remote_offset=offset))
        (wc,) = s.traffic.poll(self.pair.send_cq, 1)
        statuses = self.params.statuses
        got = status_name(int(wc["status"]))
        if got not in statuses:
            index = next(i for i, c in enumerate(check.calls.log) if c.index == wc["poll_call"])
            raise check.deviation(
                f"the {s.opcode} through the window's key completes with {' or '.join(statuses)}",
                f"status = {got} (vendor_err {wc.get('vendor_err')})",
                CompletionStatus("wc.0.status", int(wc["status"]), got),
                check.calls.log[index],
                ref=status_source(check),
            )
        if got == "IBV_WC_SUCCESS":
            self.placed(offset)

    def placed(self, offset: int) -> None:
        """The bytes went through the window: to the region at the probe's offset, or back from it."""
        t, s = self.scenario.traffic, self.scenario
        writes = s.op.get("data") == "remote"
        sent = t.content(s.local, PROBE) if writes else t.content(self.region, PROBE, offset)
        got = t.content(self.region, PROBE, offset) if writes else t.content(s.local, PROBE)
        if got != sent:
            first = next(i for i, (a, b) in enumerate(zip(got, sent)) if a != b)
            target, source = (self.region, s.local) if writes else (s.local, self.region)
            raise self.check.deviation(
                f"the {PROBE} bytes the {s.opcode} moved through the window arrive intact",
                f"byte {first} differs ({got[first]:#04x}, sent {sent[first]:#04x})",
                Differs(first, target.name, offset if writes else 0, source.name, PROBE, 0 if writes else offset),
                self.check.calls.log[-1],
                ref="ibv_post_send(3) DESCRIPTION",
            )


# What follows the bind, by the claim's `then`: each says whether the key is probed after it.
THEN: Behaviours[Callable[[Window], bool]] = Behaviours("then")


@THEN.register("unbind")
def _unbind(w: Window) -> bool:
    w.unbind()
    return True


@THEN.register("local-inv")
def _local_inv(w: Window) -> bool:
    w.local_inv()
    return True


@THEN.register("send-with-inv")
def _send_with_inv(w: Window) -> bool:
    w.send_with_inv()
    return True


@THEN.register("dealloc")
def _dealloc(w: Window) -> bool:
    w.dealloc()
    return True


@THEN.register("dereg-region")
def _dereg_region(w: Window) -> bool:
    """The claim is the refusal itself: the window stays bound, nothing to probe."""
    w.dereg_region()
    return False


@kind("window", params=WindowParams, behaviours=(THEN,))
def window(check: Check) -> None:
    """A bound window's key grants the access of its bind, on its range only, until unbound or invalidated."""
    p = check.params(WindowParams)
    # The window's capability first: on a device without windows that is the verdict, whatever its transport.
    check.require(check.spec.get("needs", ()))
    prepare(check)
    then = str(check.spec["vars"].get("then", p.then))
    w = Window(check, p)
    w.bind()
    probed = THEN[then](w) if then else True
    if probed and p.probe:
        w.probe()
