"""A ctypes binding of libibverbs (libibverbs.so.1): the suite's lowest call layer.

A conformance suite must see what a C program sees: a verb's raw return value (sign included),
errno right after a failed call, the `*bad_wr` a post verb hands back, and which layer answered.
That last point matters because about half the documented verbs are not functions of the library
at all but ``static inline`` code (or macros) in <infiniband/verbs.h>, compiled into the caller:

- some call straight through a provider's op pointer (ibv_post_send -> ``qp->context->ops.post_send``);
- some look the op up in struct verbs_context first and answer by themselves when the provider
  lacks it (ibv_create_cq_ex sets errno = EOPNOTSUPP and returns NULL; ibv_modify_cq returns
  EOPNOTSUPP), or route the call to another verb (ibv_create_qp_ex with comp_mask ==
  IBV_QP_INIT_ATTR_PD calls ibv_create_qp; ibv_query_device_ex falls back to ibv_query_device);
- the rest are exported functions of libibverbs.

Modules, one role each:

- ``enums``: every enum and needed #define of the installed verbs.h, as data.
- ``cdecl``: C prototypes written as text, turned into ctypes types (and checked by gcc in tests).
- ``abi``: ctypes Structure/Union classes named and laid out as in verbs.h.
- ``lib``: the library and the table of its exported, documented verbs.
- ``mirrors`` (tables: op pointers called unchecked or after verbs_get_ctx_op) and
  ``mirrors_special`` (the inlines that check or route first): Python transcriptions of the
  header's inline verbs and macros.
- ``binding``: ``call(name, *args) -> Raw``, the one entry point, whose ``route`` says who
  answered: "libibverbs" (an exported function), "provider:<op>" (an op pointer, as the header's
  inline calls it) or "libibverbs:<reason>" (the inline itself).
- ``rdmacm`` and ``rdmacm_abi``: a minimal binding of librdmacm.so.1 for RC connections through
  rdma_cm, which iWARP (siw) needs.

With rdma-core's libibverbs every verbs_context op is filled (a dummy of libibverbs answers
EOPNOTSUPP where the provider has none), so "provider:<op>" names the pointer the header called,
and ``mirrors.op_owner()`` tells whose code it runs (dladdr: the provider's .so or libibverbs).

Only the standard library is used, and nothing here opens a device on import.
"""
