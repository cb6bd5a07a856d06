"""The inline verbs of verbs.h that check, route or clean up around their op: one function each.

These are where the header answers by itself (a route ``libibverbs:<reason>``): ibv_create_qp_ex
hands comp_mask == IBV_QP_INIT_ATTR_PD to ibv_create_qp; ibv_query_device_ex rejects a non-zero
input comp_mask with EINVAL and falls back to ibv_query_device when the op is missing or answers
EOPNOTSUPP/ENOSYS; ibv_bind_mw returns EINVAL/EPERM before the provider sees the bind; the
ibv_reg_mr macro picks ibv_reg_mr or ibv_reg_mr_iova2 from the access flags.
"""

from __future__ import annotations

import ctypes
import errno
from typing import Any, cast

from pytest_rdma.ibv import abi
from pytest_rdma.ibv.enums import VALUES
from pytest_rdma.ibv.lib import WouldCrash, address, c_call
from pytest_rdma.ibv.mirrors import (
    CHECK_AS,
    Result,
    call_extended,
    call_pointer,
    context_arg,
    context_of,
    eopnotsupp_null,
    read,
    register,
    verbs_get_ctx,
    verbs_get_ctx_op,
)

_U32 = 0xFFFFFFFF


def _int32(value: int) -> int:
    """C's (int) conversion of a 32-bit value."""
    value &= _U32
    return value - (1 << 32) if value & 0x80000000 else value


@register("ibv_create_qp_ex", "struct ibv_qp *(struct ibv_context *, struct ibv_qp_init_attr_ex *)")
def create_qp_ex(context: Any, qp_init_attr_ex: Any) -> Result:
    """comp_mask == IBV_QP_INIT_ATTR_PD exactly: ibv_create_qp(attr->pd, attr); else the op."""
    verb = "ibv_create_qp_ex"
    attr = read(abi.ibv_qp_init_attr_ex, qp_init_attr_ex, verb, "qp_init_attr_ex")
    if attr.comp_mask == VALUES["IBV_QP_INIT_ATTR_PD"]:
        # ibv_qp_init_attr is the head of ibv_qp_init_attr_ex: the header passes the same pointer.
        return c_call("ibv_create_qp", attr.pd, qp_init_attr_ex), "libibverbs:comp_mask==PD->ibv_create_qp"
    table, reason = verbs_get_ctx_op(context_arg(None, context, verb), "create_qp_ex")
    if table is None:
        return eopnotsupp_null(reason)
    return call_extended(table, "create_qp_ex", (context, qp_init_attr_ex), verb), "provider:create_qp_ex"


@register("ibv_create_srq_ex", "struct ibv_srq *(struct ibv_context *, struct ibv_srq_init_attr_ex *)")
def create_srq_ex(context: Any, srq_init_attr_ex: Any) -> Result:
    """Only PD (and TYPE == IBV_SRQT_BASIC) in comp_mask: ibv_create_srq(attr->pd, attr); else the op."""
    verb = "ibv_create_srq_ex"
    attr = read(abi.ibv_srq_init_attr_ex, srq_init_attr_ex, verb, "srq_init_attr_ex")
    mask, pd_bit, type_bit = attr.comp_mask, VALUES["IBV_SRQ_INIT_ATTR_PD"], VALUES["IBV_SRQ_INIT_ATTR_TYPE"]
    if (
        not (mask & ~(pd_bit | type_bit) & _U32)
        and mask & pd_bit
        and (not mask & type_bit or attr.srq_type == VALUES["IBV_SRQT_BASIC"])
    ):
        return c_call("ibv_create_srq", attr.pd, srq_init_attr_ex), "libibverbs:comp_mask PD/basic->ibv_create_srq"
    table, reason = verbs_get_ctx_op(context_arg(None, context, verb), "create_srq_ex")
    if table is None:
        return eopnotsupp_null(reason)
    return call_extended(table, "create_srq_ex", (context, srq_init_attr_ex), verb), "provider:create_srq_ex"


@register(
    "ibv_query_device_ex",
    "int (struct ibv_context *, const struct ibv_query_device_ex_input *, struct ibv_device_attr_ex *)",
)
def query_device_ex(context: Any, input: Any, attr: Any) -> Result:
    """EINVAL for input->comp_mask; the op with sizeof(attr); else (or on EOPNOTSUPP/ENOSYS) ibv_query_device."""
    verb = "ibv_query_device_ex"
    if address(input) and abi.ibv_query_device_ex_input.from_address(cast(int, address(input))).comp_mask:
        return errno.EINVAL, "libibverbs:input->comp_mask!=0"
    table, reason = verbs_get_ctx_op(context_arg(None, context, verb), "query_device_ex")
    if table is not None:
        size = ctypes.sizeof(abi.ibv_device_attr_ex)
        ret = call_extended(table, "query_device_ex", (context, input, attr, size), verb)
        if ret not in (errno.EOPNOTSUPP, errno.ENOSYS):
            return ret, "provider:query_device_ex"
        reason = f"query_device_ex returned {errno.errorcode[ret]}"
    target = address(attr)
    if not target:
        raise WouldCrash(verb, "attr (memset)")
    ctypes.memset(target, 0, ctypes.sizeof(abi.ibv_device_attr_ex))
    # &attr->orig_attr is attr itself: orig_attr is the first member.
    return c_call("ibv_query_device", context, target), f"libibverbs:{reason}->ibv_query_device"


@register("ibv_query_port", "int (struct ibv_context *, uint8_t, struct ibv_port_attr *)")
def query_port(context: Any, port_num: int, port_attr: Any) -> Result:
    """The macro ibv_query_port: the query_port op with sizeof(port_attr), else the exported compat call."""
    verb = "ibv_query_port"
    table, reason = verbs_get_ctx_op(context_arg(None, context, verb), "query_port")
    size = ctypes.sizeof(abi.ibv_port_attr)
    if table is None:
        target = address(port_attr)
        if not target:
            raise WouldCrash(verb, "port_attr (memset)")
        ctypes.memset(target, 0, size)
        return c_call("ibv_query_port", context, port_num, target), f"libibverbs:{reason}->ibv_query_port"
    return call_extended(table, "query_port", (context, port_num, port_attr, size), verb), "provider:query_port"


CHECK_AS["ibv_query_port"] = "___ibv_query_port"  # the macro's body; &ibv_query_port is the compat function


@register("ibv_close_xrcd", "int (struct ibv_xrcd *)")
def close_xrcd(xrcd: Any) -> Result:
    """verbs_get_ctx(xrcd->context)->close_xrcd(xrcd): neither the table nor the op is checked."""
    verb = "ibv_close_xrcd"
    vctx = verbs_get_ctx(context_of(abi.ibv_xrcd, xrcd, verb))
    if vctx is None:
        raise WouldCrash(verb, "verbs_context (the context is not extended)")
    table = abi.verbs_context.from_address(vctx)
    if not table.close_xrcd:
        raise WouldCrash(verb, "verbs_context->close_xrcd")
    return call_extended(table, "close_xrcd", (xrcd,), verb), "provider:close_xrcd"


@register("ibv_alloc_mw", "struct ibv_mw *(struct ibv_pd *, enum ibv_mw_type)")
def alloc_mw(pd: Any, mw_type: int) -> Result:
    """pd->context->ops.alloc_mw, or errno = EOPNOTSUPP and NULL when the provider has none."""
    verb = "ibv_alloc_mw"
    ops = abi.ibv_context.from_address(context_of(abi.ibv_pd, pd, verb)).ops
    if not ops.alloc_mw:
        return eopnotsupp_null("no alloc_mw op")
    return call_pointer(abi.ibv_context_ops._c_["alloc_mw"], ops.alloc_mw, (pd, mw_type), verb), "provider:alloc_mw"


@register("ibv_bind_mw", "int (struct ibv_qp *, struct ibv_mw *, struct ibv_mw_bind *)")
def bind_mw(qp: Any, mw: Any, mw_bind: Any) -> Result:
    """The header's three checks (type 1, mr vs range, same PD), then mw->context->ops.bind_mw."""
    verb = "ibv_bind_mw"
    window = read(abi.ibv_mw, mw, verb, "mw")
    info = read(abi.ibv_mw_bind, mw_bind, verb, "mw_bind").bind_info
    if window.type != VALUES["IBV_MW_TYPE_1"]:
        return errno.EINVAL, "libibverbs:mw->type!=IBV_MW_TYPE_1"
    if not info.mr and (info.addr or info.length):
        return errno.EINVAL, "libibverbs:no mr but addr/length"
    if info.mr and window.pd != abi.ibv_mr.from_address(info.mr).pd:
        return errno.EPERM, "libibverbs:mw->pd!=mr->pd"
    if not window.context:
        raise WouldCrash(verb, "mw->context")
    ops = abi.ibv_context.from_address(window.context).ops
    if not ops.bind_mw:
        raise WouldCrash(verb, "ops.bind_mw")
    return call_pointer(abi.ibv_context_ops._c_["bind_mw"], ops.bind_mw, (qp, mw, mw_bind), verb), "provider:bind_mw"


@register("ibv_inc_rkey", "uint32_t (uint32_t)")
def inc_rkey(rkey: int) -> Result:
    """Pure arithmetic in the header: the low 8 bits (the key's tag) plus one, wrapping."""
    rkey &= _U32
    return (rkey & ~0xFF & _U32) | ((rkey + 1) & 0xFF), "libibverbs:inline"


@register("ibv_cq_ex_to_cq", "struct ibv_cq *(struct ibv_cq_ex *)")
def cq_ex_to_cq(cq: Any) -> Result:
    """A cast in the header: struct ibv_cq is the head of struct ibv_cq_ex."""
    return address(cq), "libibverbs:cast"


@register("ibv_post_srq_ops", "int (struct ibv_srq *, struct ibv_ops_wr *, struct ibv_ops_wr **)")
def post_srq_ops(srq: Any, op: Any, bad_op: Any) -> Result:
    """The post_srq_ops op; without it the header sets *bad_op = op and returns EOPNOTSUPP."""
    verb = "ibv_post_srq_ops"
    table, reason = verbs_get_ctx_op(context_of(abi.ibv_srq, srq, verb), "post_srq_ops")
    if table is None:
        read(ctypes.c_void_p, bad_op, verb, "bad_op").value = address(op)
        return errno.EOPNOTSUPP, f"libibverbs:{reason}"
    return call_extended(table, "post_srq_ops", (srq, op, bad_op), verb), "provider:post_srq_ops"


_libc = ctypes.CDLL("libc.so.6")


@register("ibv_create_wq", "struct ibv_wq *(struct ibv_context *, struct ibv_wq_init_attr *)")
def create_wq(context: Any, wq_init_attr: Any) -> Result:
    """The create_wq op; on success the header itself sets wq_context and inits the WQ's mutex and cond."""
    verb = "ibv_create_wq"
    table, reason = verbs_get_ctx_op(context_arg(None, context, verb), "create_wq")
    if table is None:
        return eopnotsupp_null(reason)
    wq = call_extended(table, "create_wq", (context, wq_init_attr), verb)
    if wq:
        made = abi.ibv_wq.from_address(wq)
        made.wq_context = read(abi.ibv_wq_init_attr, wq_init_attr, verb, "wq_init_attr").wq_context
        made.events_completed = 0
        _libc.pthread_mutex_init(ctypes.c_void_p(wq + abi.ibv_wq.mutex.offset), None)
        _libc.pthread_cond_init(ctypes.c_void_p(wq + abi.ibv_wq.cond.offset), None)
    return wq, "provider:create_wq"


def _optional(access: int) -> bool:
    return bool(access & _U32 & VALUES["IBV_ACCESS_OPTIONAL_RANGE"])


@register("ibv_reg_mr", "struct ibv_mr *(struct ibv_pd *, void *, size_t, int)")
def reg_mr(pd: Any, addr: Any, length: int, access: int) -> Result:
    """The macro ibv_reg_mr, for a compile-time constant `access` (the usual case).

    Without optional access flags it calls the exported ibv_reg_mr; with one it calls
    ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, access). (A C program whose access is a
    variable always takes the second path: __builtin_constant_p is false there.)
    """
    if not _optional(access):
        return c_call("ibv_reg_mr", pd, addr, length, _int32(access)), "libibverbs:no optional access->ibv_reg_mr"
    iova = address(addr) or 0
    return (
        c_call("ibv_reg_mr_iova2", pd, addr, length, iova, access & _U32),
        "libibverbs:optional access->ibv_reg_mr_iova2",
    )


@register("ibv_reg_mr_iova", "struct ibv_mr *(struct ibv_pd *, void *, size_t, uint64_t, int)")
def reg_mr_iova(pd: Any, addr: Any, length: int, iova: int, access: int) -> Result:
    """The macro ibv_reg_mr_iova: as ibv_reg_mr, choosing ibv_reg_mr_iova or ibv_reg_mr_iova2."""
    if not _optional(access):
        route = "libibverbs:no optional access->ibv_reg_mr_iova"
        return c_call("ibv_reg_mr_iova", pd, addr, length, iova, _int32(access)), route
    route = "libibverbs:optional access->ibv_reg_mr_iova2"
    return c_call("ibv_reg_mr_iova2", pd, addr, length, iova, access & _U32), route


@register("ibv_query_gid_ex", "int (struct ibv_context *, uint32_t, uint32_t, struct ibv_gid_entry *, uint32_t)")
def query_gid_ex(context: Any, port_num: int, gid_index: int, entry: Any, flags: int) -> Result:
    """_ibv_query_gid_ex(..., sizeof(struct ibv_gid_entry)): the library answers, told the entry size."""
    size = ctypes.sizeof(abi.ibv_gid_entry)
    return c_call(
        "_ibv_query_gid_ex", context, port_num, gid_index, entry, flags, size
    ), "libibverbs:->_ibv_query_gid_ex"


@register("ibv_query_gid_table", "ssize_t (struct ibv_context *, struct ibv_gid_entry *, size_t, uint32_t)")
def query_gid_table(context: Any, entries: Any, max_entries: int, flags: int) -> Result:
    """_ibv_query_gid_table(..., sizeof(struct ibv_gid_entry))."""
    size = ctypes.sizeof(abi.ibv_gid_entry)
    value = c_call("_ibv_query_gid_table", context, entries, max_entries, flags, size)
    return value, "libibverbs:->_ibv_query_gid_table"
