"""The device under test: an open verbs context and what the device advertises.

One `DeviceUnderTest` per device per test session (per xdist worker). Checks read the
advertised capabilities from it to decide "unsupported" and allocate what they need
through a per-check `Resources`, which frees everything when the check ends.
"""

from __future__ import annotations

from typing import Any

from pytest_rdma.outcomes import Unsupported
from pytest_rdma.provider import pyverbs_env
from pytest_rdma.provider.identity import DeviceIdentity, identify

QP_TYPE_NAMES = {2: "RC", 3: "UC", 4: "UD", 8: "RAW_PACKET", 9: "XRC_SEND", 10: "XRC_RECV"}
# QP types probed at session start; "the QP types it can create" is what the device advertises.
PROBED_QP_TYPES = (2, 3, 4, 8)


def qp_type_name(qp_type: int) -> str:
    return QP_TYPE_NAMES.get(qp_type, str(qp_type))


class Resources:
    """Allocates verbs objects for one check and frees them, newest first, at close()."""

    def __init__(self, dut: DeviceUnderTest) -> None:
        self.dut = dut
        self._owned: list[Any] = []

    def adopt(self, obj: Any) -> Any:
        self._owned.append(obj)
        return obj

    def pd(self) -> Any:
        from pyverbs.pd import PD

        return self.adopt(PD(self.dut.ctx))

    def cq(self, cqe: int = 16) -> Any:
        from pyverbs.cq import CQ

        return self.adopt(CQ(self.dut.ctx, cqe, None, None, 0))

    def srq(self, max_wr: int = 16, max_sge: int = 1, pd: Any = None) -> Any:
        from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

        return self.adopt(SRQ(pd or self.pd(), SrqInitAttr(SrqAttr(max_wr=max_wr, max_sge=max_sge))))

    def mr(self, length: int = 4096, access: int | None = None, pd: Any = None) -> Any:
        import pyverbs.enums as e
        from pyverbs.mr import MR

        access = e.IBV_ACCESS_LOCAL_WRITE if access is None else access
        return self.adopt(MR(pd or self.pd(), length, access))

    def qp_init_attr(self, qp_type: int, cap: Any = None, srq: Any = None, cq: Any = None) -> Any:
        from pyverbs.qp import QPCap, QPInitAttr

        cq = cq or self.cq()
        return QPInitAttr(qp_type=qp_type, scq=cq, rcq=cq, srq=srq,
                          cap=cap or QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1))

    def qp(self, qp_type: int, cap: Any = None, srq: Any = None, pd: Any = None) -> Any:
        """A QP of `qp_type` in RESET, made with ibv_create_qp."""
        from pyverbs.qp import QP

        return self.adopt(QP(pd or self.pd(), self.qp_init_attr(qp_type, cap, srq)))

    def qp_ex(self, init_attr_ex: Any) -> Any:
        """A QP made with ibv_create_qp_ex from a QPInitAttrEx the caller filled in."""
        from pyverbs.qp import QP

        return self.adopt(QP(self.dut.ctx, init_attr_ex))

    def close(self) -> None:
        while self._owned:
            obj = self._owned.pop()
            try:
                obj.close()
            except Exception:  # noqa: BLE001 - teardown must free the rest; leaks are caught elsewhere
                pass


PORT_STATES = {0: "NOP", 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
IBV_PORT_ACTIVE = 4


class DeviceNotUsable(RuntimeError):
    """The chosen port or GID cannot carry traffic; the message names the option to change."""


def usable_port(ctx: Any, name: str, port: int, port_count: int) -> Any:
    """The port's attributes, if the device has that port and it is ACTIVE."""
    from pyverbs.pyverbs_error import PyverbsError

    try:
        attr = ctx.query_port(port)
    except PyverbsError as exc:
        raise DeviceNotUsable(f"{name} has no port {port} ({exc}): it has {port_count} port(s); "
                              "choose one with --rdma-port N") from None
    if attr.state != IBV_PORT_ACTIVE:
        state = PORT_STATES.get(attr.state, str(attr.state))
        raise DeviceNotUsable(f"{name} port {port} is not active (state {state}): bring its link up "
                              "(e.g. 'ip link set NETDEV up' for rxe/siw), or choose another port with --rdma-port N")
    return attr


def usable_gid(ctx: Any, name: str, port: int, gid_index: int) -> Any:
    """The GID at `gid_index`, if the table has a non-zero entry there (address vectors need one)."""
    from pyverbs.pyverbs_error import PyverbsError

    hint = (f"choose a populated index with --rdma-gid-index N "
            f"(see /sys/class/infiniband/{name}/ports/{port}/gids/)")
    try:
        gid = ctx.query_gid(port, gid_index)
    except PyverbsError as exc:
        raise DeviceNotUsable(f"{name} port {port} has no usable GID at index {gid_index} ({exc}): {hint}") from None
    if not str(gid.gid).replace(":", "").strip("0"):
        raise DeviceNotUsable(f"{name} port {port} has no usable GID at index {gid_index} (the entry is empty): "
                              f"{hint}")
    return gid


def check_usable(name: str, port: int, gid_index: int) -> None:
    """Raise DeviceNotUsable unless `name` has `port` ACTIVE with a GID at `gid_index` (checked once, at start)."""
    pyverbs_env.require()
    import pyverbs.device as d

    ctx = d.Context(name=name)
    try:
        usable_port(ctx, name, port, ctx.query_device().phys_port_cnt)
        usable_gid(ctx, name, port, gid_index)
    finally:
        ctx.close()


class DeviceUnderTest:
    def __init__(self, name: str, port: int = 1, gid_index: int = 0) -> None:
        pyverbs_env.require()
        import pyverbs.device as d

        self.name = name
        self.port = port
        self.gid_index = gid_index
        self.ctx = d.Context(name=name)
        self.attr = self.ctx.query_device()
        self.attr_ex = self.ctx.query_device_ex()
        try:
            self.port_attr = usable_port(self.ctx, name, port, self.attr.phys_port_cnt)
            self.gid = usable_gid(self.ctx, name, port, gid_index)
        except DeviceNotUsable:
            self.ctx.close()
            raise
        self.identity: DeviceIdentity = identify(name, self.attr.vendor_id, self.attr.vendor_part_id,
                                                 self.attr.fw_version)
        self.qp_types = self._probe_qp_types()

    @property
    def driver(self) -> str:
        return self.identity.driver

    def _probe_qp_types(self) -> dict[int, str]:
        """Create one QP of each type: "" where it works, else why it did not."""
        from pyverbs.pyverbs_error import PyverbsError

        result: dict[int, str] = {}
        res = Resources(self)
        try:
            pd, cq = res.pd(), res.cq()
            for qp_type in PROBED_QP_TYPES:
                try:
                    from pyverbs.qp import QP

                    res.adopt(QP(pd, res.qp_init_attr(qp_type, cq=cq)))
                    result[qp_type] = ""
                except PyverbsError as exc:
                    result[qp_type] = f"ibv_create_qp({qp_type_name(qp_type)}) failed at session start: {exc}"
        finally:
            res.close()
        return result

    def creatable_qp_types(self) -> list[int]:
        return [qp_type for qp_type, why in self.qp_types.items() if not why]

    def require_qp_type(self, qp_type: int) -> None:
        why = self.qp_types.get(qp_type, f"QP type {qp_type_name(qp_type)} was not probed")
        if why:
            raise Unsupported(f"device cannot create {qp_type_name(qp_type)} QPs ({why})")

    def require_cap(self, flag: int, name: str) -> None:
        """Unsupported unless device_cap_flags (or the _ex flags) advertise `name`."""
        if not (self.attr.device_cap_flags & flag or self.attr_ex.device_cap_flags_ex & flag):
            raise Unsupported(f"device does not advertise {name} in device_cap_flags")

    def resources(self) -> Resources:
        return Resources(self)

    def close(self) -> None:
        self.ctx.close()
