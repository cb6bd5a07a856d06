"""The ``static inline`` verbs and macros of the installed verbs.h, transcribed to run through ctypes.

A C program never calls these in libibverbs: the header's code is compiled into it. To observe
a provider as such a program does, each one is repeated here step for step: the same op pointer,
the same checks in the same order, the same errno or return value where the header answers by
itself. Each mirror returns (C value, route); binding.call adds errno.

Most follow four patterns, kept as tables:

- CONTEXT_OPS: ``obj->context->ops.OP(...)``, unchecked (ibv_post_send, ibv_poll_cq, ...);
- OBJECT_OPS: a function pointer of the object itself, unchecked (ibv_wr_*, ibv_wc_read_*, ...);
- EXTENDED_OPS: ``verbs_get_ctx_op(ctx, OP)`` then the op, else errno = EOPNOTSUPP and NULL, or
  return EOPNOTSUPP, as each inline does;
- the rest, which route or check something first, are functions below and in mirrors_special.

"Unchecked" means the header calls the pointer without looking: where it is NULL, lib.WouldCrash
is raised instead of jumping to address 0.
"""

from __future__ import annotations

import ctypes
import errno
import functools
from typing import Any, Callable, Optional

from pytest_rdma.ibv import abi, cdecl
from pytest_rdma.ibv.lib import WouldCrash, address, c_args, owner

Result = tuple[Any, str]  # (C return value, route)
Mirror = Callable[..., Result]

# Each mirror's prototype as verbs.h declares the inline (checked against it by gcc in
# tests/unit/test_ibv_lib.py); for a macro, the function it stands for.
INLINE: dict[str, str] = {}
MIRRORS: dict[str, Mirror] = {}
# Where the gcc check must name another symbol than the verb (the macro's inline body).
CHECK_AS: dict[str, str] = {}

# verbs.h: #define __VERBS_ABI_IS_EXTENDED ((void *)UINTPTR_MAX)
ABI_IS_EXTENDED = (1 << (8 * ctypes.sizeof(ctypes.c_void_p))) - 1


def register(name: str, prototype: str) -> Callable[[Mirror], Mirror]:
    """Record `fn` as the mirror of verb `name`, whose header prototype is `prototype`."""

    def wrap(fn: Mirror) -> Mirror:
        INLINE[name] = prototype
        MIRRORS[name] = fn
        return fn

    return wrap


@functools.cache
def _functype(prototype: str) -> tuple[cdecl.Signature, Any]:
    sig = cdecl.signature(prototype)
    return sig, sig.functype(use_errno=True)


def call_pointer(prototype: str, fn_address: int, args: tuple[Any, ...], verb: str) -> Any:
    """Call the C function at `fn_address` with the type `prototype`; its C value."""
    sig, functype = _functype(prototype)
    return functype(fn_address)(*c_args(sig.argtypes, args, verb))


def read(cls: Any, pointer: Any, verb: str, what: str) -> Any:
    """``*pointer`` as `cls`; reading through NULL is where a C program would crash."""
    where = address(pointer)
    if not where:
        raise WouldCrash(verb, what)
    return cls.from_address(where)


def context_of(cls: Any, obj: Any, verb: str) -> int:
    """``obj->context`` of an object whose struct starts with (or has) a `context` member."""
    ctx = read(cls, obj, verb, f"{cls.__name__} pointer").context
    if not ctx:
        raise WouldCrash(verb, f"{cls.__name__}->context")
    return ctx


def verbs_get_ctx(ctx: int) -> Optional[int]:
    """verbs.h verbs_get_ctx(): the verbs_context in front of `ctx`, if the context is extended."""
    if abi.ibv_context.from_address(ctx).abi_compat != ABI_IS_EXTENDED:
        return None
    return ctx - abi.verbs_context.context.offset


def verbs_get_ctx_op(ctx: int, op: str) -> tuple[Optional[abi.verbs_context], str]:
    """verbs.h verbs_get_ctx_op(): (the verbs_context, "") or (None, why the header says no).

    The header collapses three reasons into one NULL; the reason is kept for the route.
    """
    vctx = verbs_get_ctx(ctx)
    if vctx is None:
        return None, "context not extended"
    table = abi.verbs_context.from_address(vctx)
    # vctx->sz < sizeof(*vctx) - offsetof(struct verbs_context, op): the provider's library
    # predates this op (the table grows towards lower addresses).
    if table.sz < ctypes.sizeof(abi.verbs_context) - getattr(abi.verbs_context, op).offset:
        return None, f"verbs_context.sz={table.sz} lacks {op}"
    if not getattr(table, op):
        return None, f"no {op} op"
    return table, ""


def call_extended(table: abi.verbs_context, op: str, args: tuple[Any, ...], verb: str) -> Any:
    """Call op `op` of verbs_context `table`."""
    return call_pointer(abi.verbs_context._c_[op], getattr(table, op), args, verb)


def eopnotsupp_null(reason: str) -> Result:
    """The header's ``errno = EOPNOTSUPP; return NULL;``."""
    ctypes.set_errno(errno.EOPNOTSUPP)
    return None, f"libibverbs:{reason}"


# --- obj->context->ops.OP(...), unchecked -------------------------------------------------------

# verb: (op of ibv_context_ops, struct of the first argument)
CONTEXT_OPS: dict[str, tuple[str, Any]] = {
    "ibv_post_send": ("post_send", abi.ibv_qp),
    "ibv_post_recv": ("post_recv", abi.ibv_qp),
    "ibv_post_srq_recv": ("post_srq_recv", abi.ibv_srq),
    "ibv_poll_cq": ("poll_cq", abi.ibv_cq),
    "ibv_req_notify_cq": ("req_notify_cq", abi.ibv_cq),
    "ibv_dealloc_mw": ("dealloc_mw", abi.ibv_mw),
}


def _context_op(verb: str, op: str, cls: Any) -> Mirror:
    def mirror(*args: Any) -> Result:
        ops = abi.ibv_context.from_address(context_of(cls, args[0] if args else None, verb)).ops
        fn = getattr(ops, op)
        if not fn:
            raise WouldCrash(verb, f"ops.{op}")
        return call_pointer(abi.ibv_context_ops._c_[op], fn, args, verb), f"provider:{op}"

    mirror.__doc__ = f"verbs.h {verb}: {cls.__name__}->context->ops.{op}(...)."
    return mirror


for _verb, (_op, _cls) in CONTEXT_OPS.items():
    register(_verb, abi.ibv_context_ops._c_[_op])(_context_op(_verb, _op, _cls))


# --- a function pointer of the object itself, unchecked ----------------------------------------

# verb: (struct, its function pointer member, which argument is the object)
OBJECT_OPS: dict[str, tuple[Any, str, int]] = {
    **{f"ibv_{field}": (abi.ibv_qp_ex, field, 0) for field in abi.ibv_qp_ex._c_ if field.startswith("wr_")},
    "ibv_start_poll": (abi.ibv_cq_ex, "start_poll", 0),
    "ibv_next_poll": (abi.ibv_cq_ex, "next_poll", 0),
    "ibv_end_poll": (abi.ibv_cq_ex, "end_poll", 0),
    **{f"ibv_wc_{field}": (abi.ibv_cq_ex, field, 0) for field in abi.ibv_cq_ex._c_ if field.startswith("read_")},
    # The header reads the invalidated rkey through read_imm_data: one op, two meanings.
    "ibv_wc_read_invalidated_rkey": (abi.ibv_cq_ex, "read_imm_data", 0),
    "ibv_post_wq_recv": (abi.ibv_wq, "post_recv", 0),
    "ibv_memcpy_to_dm": (abi.ibv_dm, "memcpy_to_dm", 0),
    "ibv_memcpy_from_dm": (abi.ibv_dm, "memcpy_from_dm", 1),
}
# The inline's own prototype where it differs in spelling from the pointer's.
_OBJECT_PROTOTYPES = {"ibv_wc_read_invalidated_rkey": "uint32_t (struct ibv_cq_ex *)"}


def _object_op(verb: str, cls: Any, field: str, index: int) -> Mirror:
    route = f"provider:{'ibv_wq.' if cls is abi.ibv_wq else ''}{field}"

    def mirror(*args: Any) -> Result:
        obj = args[index] if len(args) > index else None
        fn = getattr(read(cls, obj, verb, f"{cls.__name__} pointer"), field)
        if not fn:
            raise WouldCrash(verb, f"{cls.__name__}->{field}")
        return call_pointer(cls._c_[field], fn, args, verb), route

    mirror.__doc__ = f"verbs.h {verb}: {cls.__name__}->{field}(...)."
    return mirror


for _verb, (_cls, _field, _index) in OBJECT_OPS.items():
    register(_verb, _OBJECT_PROTOTYPES.get(_verb, _cls._c_[_field]))(_object_op(_verb, _cls, _field, _index))


# --- verbs_get_ctx_op(ctx, OP) ? vctx->OP(...) : EOPNOTSUPP -------------------------------------

# verb: (op of verbs_context, struct of the first argument (None: it is the context), on a
# missing op: "null" = errno = EOPNOTSUPP, return NULL; "ret" = return EOPNOTSUPP)
EXTENDED_OPS: dict[str, tuple[str, Any, str]] = {
    "ibv_create_flow": ("ibv_create_flow", abi.ibv_qp, "null"),
    "ibv_destroy_flow": ("ibv_destroy_flow", abi.ibv_flow, "ret"),
    "ibv_create_flow_action_esp": ("create_flow_action_esp", None, "null"),
    "ibv_modify_flow_action_esp": ("modify_flow_action_esp", abi.ibv_flow_action, "ret"),
    "ibv_destroy_flow_action": ("destroy_flow_action", abi.ibv_flow_action, "ret"),
    "ibv_open_xrcd": ("open_xrcd", None, "null"),
    "ibv_advise_mr": ("advise_mr", abi.ibv_pd, "ret"),
    "ibv_alloc_dm": ("alloc_dm", None, "null"),
    "ibv_free_dm": ("free_dm", abi.ibv_dm, "ret"),
    "ibv_alloc_null_mr": ("alloc_null_mr", abi.ibv_pd, "null"),
    "ibv_reg_dm_mr": ("reg_dm_mr", abi.ibv_pd, "null"),
    "ibv_create_cq_ex": ("create_cq_ex", None, "null"),
    "ibv_modify_cq": ("modify_cq", abi.ibv_cq, "ret"),
    "ibv_get_srq_num": ("get_srq_num", abi.ibv_srq, "ret"),
    "ibv_alloc_td": ("alloc_td", None, "null"),
    "ibv_dealloc_td": ("dealloc_td", abi.ibv_td, "ret"),
    "ibv_alloc_parent_domain": ("alloc_parent_domain", None, "null"),
    "ibv_query_rt_values_ex": ("query_rt_values", None, "ret"),
    "ibv_open_qp": ("open_qp", None, "null"),
    "ibv_modify_qp_rate_limit": ("modify_qp_rate_limit", abi.ibv_qp, "ret"),
    "ibv_modify_wq": ("modify_wq", abi.ibv_wq, "ret"),
    "ibv_destroy_wq": ("destroy_wq", abi.ibv_wq, "ret"),
    "ibv_create_rwq_ind_table": ("create_rwq_ind_table", None, "null"),
    "ibv_destroy_rwq_ind_table": ("destroy_rwq_ind_table", abi.ibv_rwq_ind_table, "ret"),
    "ibv_create_counters": ("create_counters", None, "null"),
    "ibv_destroy_counters": ("destroy_counters", abi.ibv_counters, "ret"),
    "ibv_attach_counters_point_flow": ("attach_counters_point_flow", abi.ibv_counters, "ret"),
    "ibv_read_counters": ("read_counters", abi.ibv_counters, "ret"),
}


def context_arg(cls: Any, first: Any, verb: str) -> int:
    """The ibv_context an inline looks its op up in: the first argument, or its ->context."""
    if cls is None:
        ctx = address(first)
        if not ctx:
            raise WouldCrash(verb, "context")
        return ctx
    return context_of(cls, first, verb)


def _extended_op(verb: str, op: str, cls: Any, missing: str) -> Mirror:
    def mirror(*args: Any) -> Result:
        table, reason = verbs_get_ctx_op(context_arg(cls, args[0] if args else None, verb), op)
        if table is None:
            if missing == "null":
                return eopnotsupp_null(reason)
            return errno.EOPNOTSUPP, f"libibverbs:{reason}"
        return call_extended(table, op, args, verb), f"provider:{op}"

    mirror.__doc__ = f"verbs.h {verb}: verbs_get_ctx_op(ctx, {op}), else EOPNOTSUPP ({missing})."
    return mirror


for _verb, (_op, _cls, _missing) in EXTENDED_OPS.items():
    register(_verb, abi.verbs_context._c_[_op])(_extended_op(_verb, _op, _cls, _missing))


def op_owner(context: Any, op: str) -> Optional[str]:
    """The shared object whose code op `op` of `context` runs (verbs_context first, then ops).

    A route "provider:<op>" says the header called through the context's op pointer; this says
    whose code that pointer runs. With rdma-core's libibverbs every verbs_context op is filled,
    with a dummy of libibverbs that answers EOPNOTSUPP where the provider has none, and some ops
    are libibverbs' own wrappers or ibv_cmd_* helpers; so the owner is libibverbs.so.1 there.
    """
    ctx = address(context)
    if not ctx:
        return None
    vctx = verbs_get_ctx(ctx)
    if vctx is not None and op in abi.verbs_context._c_:
        return owner(getattr(abi.verbs_context.from_address(vctx), op))
    # An op of the object itself (ibv_cq_ex.start_poll) is in neither table: its owner is not looked up.
    return owner(getattr(abi.ibv_context.from_address(ctx).ops, op, None))
