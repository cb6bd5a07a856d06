"""The verb catalogue: one declarative description per verb, from its man page.

Every claim paraphrases its source in our own words and cites the page section (and, where
the page relies on it, the IBTA table or the kernel rule it comes from). Checks are
generated from these entries: a claim names its kind (pytest_rdma/kinds) and gives the data
the kind needs. A parameter's `default` is how a check passes it when the claim does not say
otherwise; a verb whose contract produces a resource and names its destructor is the one way
the suite makes that resource.

This module is data: it imports only the catalogue's vocabulary (pytest_rdma.catalogue.model).

Contents, by object family (each a "# --- N. name" section; a module-level table is defined
in the section of the first entry that uses it, the QP-type tables above them all):

    1. device, context and ports    devices, contexts, ports, GIDs, P_Keys, async events
    2. PD and memory                PD, TD, parent domain, MR, MW, device memory
    3. CQ and completion channels   CQs, resizing, notification, completion channels
    4. SRQ                          SRQs, XRC domains, tag matching, posting to an SRQ
    5. QP                           create, modify (and det_modify_qp), query, destroy;
                                    data ordering, pacing, ECE; receive WQs, RSS tables
    6. work requests                post_send/recv, poll_cq, the ibv_wr_* API, polling a CQ_EX
    7. address handles, multicast and flows
                                    AHs, multicast, flow steering, ESP flow actions, counters
    8. rdma_cm                      librdmacm, to connect an iWARP RC pair
    9. helpers                      rates, strings, fork support, importing objects
"""

from __future__ import annotations

from pytest_rdma.catalogue.model import (
    IB_TRANSPORTS,
    RETURNS_COUNT,
    RETURNS_ERRNO,
    RETURNS_NEG_CODE,
    RETURNS_NEG_ERRNO,
    RETURNS_POINTER,
    RETURNS_VALUE,
    RETURNS_VOID,
    Arg,
    Array,
    Buffer,
    Cap,
    Claim,
    Contract,
    Dev,
    Error,
    Expect,
    Flags,
    Need,
    Opcode,
    Param,
    Ref,
    Resource,
    Source,
    Step,
    Transition,
    Value,
    Var,
    Verb,
)

CONTEXT = Param("context", "struct ibv_context *", default=Need("context"))
_RC, _UC, _UD = "IBV_QPT_RC", "IBV_QPT_UC", "IBV_QPT_UD"

# What advertises each QP type (an unsupported verdict names the attribute). iWARP defines
# only reliable connections (RFC 5040); UC, UD and raw packet QPs are InfiniBand transport
# services (IBTA Vol. 1, 9.8.1), and a raw packet QP also needs an Ethernet port.
_QP_TYPE_NEEDS = {
    "IBV_QPT_RC": (),
    "IBV_QPT_UC": (Cap("transport", "transport", IB_TRANSPORTS),),
    "IBV_QPT_UD": (Cap("transport", "transport", IB_TRANSPORTS),),
    "IBV_QPT_RAW_PACKET": (Cap("transport", "transport", ("roce",)), Cap("attr_ex.raw_packet_caps")),
}
_QP_TYPES = tuple(_QP_TYPE_NEEDS)
_IBTA_QP_TABLE = Source("ibta", "IBTA Vol. 1 r1.7 §11.2.5.2 (QP state transition properties)")
_IWARP_RC_ONLY = Source("iwarp", "RFC 5040 (iWARP defines reliable connections only)")
_KERNEL_QP_TABLE = Source("kernel", "drivers/infiniband/core/verbs.c qp_state_table, ib_modify_qp_is_ok()")


# --- 1. device, context and ports ---------------------------------------------------------------------------
# Devices, contexts, ports, GIDs and P_Keys, the context's async events.
ibv_get_device_list = Verb(
    name="ibv_get_device_list",
    man="ibv_get_device_list(3)",
    prototype="struct ibv_device **ibv_get_device_list(int *num_devices);",
    returns=RETURNS_POINTER,
    summary="list the RDMA devices present; NULL with errno on failure, an empty list when none",
    params=(Param("num_devices", "int *", "out", nullable=True, doc="set to the number of devices"),),
    errors=(
        Error("EPERM", "permission denied", untestable="the suite runs as root; it cannot drop the right to list"),
        Error("ENOSYS", "no kernel RDMA support", untestable="the suite needs a kernel with RDMA to run at all"),
        Error("ENOMEM", "out of memory", untestable="cannot exhaust memory safely on a shared lab VM"),
    ),
    claims=(
        Claim(
            "lists-device",
            "succeeds",
            "the device under test is in the returned list, once, and every name is distinct",
            "RETURN VALUE",
            variant="device-under-test",
            expect=(Expect("ret.names", "has-once", Dev("name")), Expect("ret.names", "distinct")),
        ),
        Claim(
            "num-devices-optional",
            "succeeds",
            "num_devices may be NULL: the list is still returned and holds the device under test",
            "DESCRIPTION",
            variant="num_devices-NULL",
            call={"num_devices": 0},
            expect=(Expect("ret.names", "has-once", Dev("name")),),
            layer="libibverbs",
        ),
        Claim(
            "no-warning-without-env",
            "untestable",
            "only with IBV_SHOW_WARNINGS set does a kernel device without a user-space driver print a warning",
            "NOTES",
            untestable="needs a kernel verbs device whose provider library is absent, and the stderr of a fresh "
            "process",
        ),
        Claim(
            "static-link-needs-providers",
            "untestable",
            "a statically linked program that did not link its providers in always gets an empty list",
            "STATIC LINKING",
            untestable="needs a statically linked C program; the suite runs through the shared library",
        ),
    ),
    contract=Contract(produces=(Resource("device_list"),), destroyed_by="ibv_free_device_list"),
    undefined=("a num_devices pointer that is neither NULL nor writable",),
)

ibv_free_device_list = Verb(
    name="ibv_free_device_list",
    man="ibv_get_device_list(3)",
    prototype="void ibv_free_device_list(struct ibv_device **list);",
    returns=RETURNS_VOID,
    summary="free a list returned by ibv_get_device_list",
    params=(Param("list", "struct ibv_device **"),),
    claims=(
        Claim(
            "opened-devices-survive",
            "untestable",
            "a device opened before its list is freed stays usable; the list's other entries do not",
            "NOTES",
            untestable="the catalogue has no value for one entry of a returned list; the suite's own context, "
            "opened from the session's list, relies on the first half every run",
        ),
    ),
    contract=Contract(destroys=(Resource("device_list", role="list"),)),
    undefined=(
        "using an entry of a freed list that was not opened before the free",
        "freeing the same list twice",
        "freeing NULL (libibverbs 44 reads list[0])",
    ),
)

ibv_get_device_name = Verb(
    name="ibv_get_device_name",
    man="ibv_get_device_name(3)",
    prototype="const char *ibv_get_device_name(struct ibv_device *device);",
    returns=RETURNS_VALUE,
    summary="the kernel name of a device (e.g. mlx5_0), or NULL",
    params=(Param("device", "struct ibv_device *", default=Need("device")),),
    claims=(
        Claim(
            "names-the-device",
            "succeeds",
            "the name of the device under test is the name it was chosen by (what the kernel calls it)",
            "DESCRIPTION, RETURN VALUE",
            variant="device-under-test",
            expect=(Expect("ret", "==", Dev("name")),),
            layer="libibverbs",
        ),
    ),
    undefined=("a device pointer of a freed list that was not opened",),
)

ibv_get_device_guid = Verb(
    name="ibv_get_device_guid",
    man="ibv_get_device_guid(3)",
    prototype="__be64 ibv_get_device_guid(struct ibv_device *device);",
    returns=RETURNS_VALUE,
    summary="the device's GUID, in network byte order (the page writes uint64_t; verbs.h __be64)",
    params=(Param("device", "struct ibv_device *", default=Need("device")),),
    claims=(
        Claim(
            "same-as-node-guid",
            "relation",
            "the GUID is the node_guid ibv_query_device reports, byte for byte (both in network order)",
            "DESCRIPTION, RETURN VALUE",
            steps=(Step("ibv_get_device_guid", name="guid"), Step("ibv_query_device", name="q")),
            params={"relations": (("guid:ret", "==", "q:device_attr.node_guid"),)},
            also=(Source("man", "ibv_query_device(3)", "DESCRIPTION"),),
        ),
    ),
    contract=Contract(requires=(Resource("device", role="device"),)),
    undefined=("a device pointer of a freed list that was not opened",),
)

ibv_get_device_index = Verb(
    name="ibv_get_device_index",
    man="ibv_get_device_index(3)",
    prototype="int ibv_get_device_index(struct ibv_device *device);",
    returns=RETURNS_VALUE,
    summary="the kernel's stable index of the device, or -1 where the kernel has no device indexes",
    params=(Param("device", "struct ibv_device *", default=Need("device")),),
    claims=(
        Claim(
            "index-or-minus-one",
            "succeeds",
            "the answer is an index (0 or more) or -1, nothing else",
            "RETURN VALUE",
            variant="device-under-test",
            expect=(Expect("ret", ">=", -1),),
        ),
        Claim(
            "stable",
            "relation",
            "the index is stable: asking twice gives the same answer",
            "DESCRIPTION",
            steps=(Step("ibv_get_device_index", name="first"), Step("ibv_get_device_index", name="again")),
            params={"relations": (("first:ret", "==", "again:ret"),)},
            layer="kernel",
        ),
    ),
    contract=Contract(requires=(Resource("device", role="device"),)),
)

ibv_open_device = Verb(
    name="ibv_open_device",
    man="ibv_open_device(3)",
    prototype="struct ibv_context *ibv_open_device(struct ibv_device *device);",
    returns=RETURNS_POINTER,
    summary="open a device and return its verbs context, or NULL",
    params=(Param("device", "struct ibv_device *", default=Need("device"), doc="an entry of ibv_get_device_list()"),),
    claims=(
        Claim(
            "independent-contexts",
            "succeeds",
            "a second context on the same device works on its own and closing it leaves the first usable",
            "DESCRIPTION",
            variant="second-context",
            params={
                "then": (
                    Step("ibv_alloc_pd", {"context": Ref("call")}, name="second_pd"),
                    Step("ibv_dealloc_pd", {"pd": Ref("second_pd")}),
                    Step("ibv_close_device", {"context": Ref("call")}),
                    Step("ibv_alloc_pd", {"context": Need("context")}),
                )
            },
        ),
        Claim(
            "context-of-the-device",
            "succeeds",
            "the new context belongs to the device it was opened on and offers at least one completion vector",
            "DESCRIPTION",
            variant="device-under-test",
            expect=(Expect("ret.device", "==", Arg("device")), Expect("ret.num_comp_vectors", ">=", 1)),
            also=(Source("man", "ibv_create_cq(3)", "DESCRIPTION"),),
        ),
    ),
    contract=Contract(
        requires=(Resource("device", role="device"),), produces=(Resource("context"),), destroyed_by="ibv_close_device"
    ),
    undefined=("opening an entry of a freed list that was not opened before the free",),
)

ibv_close_device = Verb(
    name="ibv_close_device",
    man="ibv_open_device(3)",
    prototype="int ibv_close_device(struct ibv_context *context);",
    returns=RETURNS_COUNT,
    summary="close a verbs context; 0 on success, -1 on failure",
    params=(Param("context", "struct ibv_context *"),),
    claims=(
        Claim(
            "close-returns-zero",
            "succeeds",
            "closing a context that holds no object returns 0",
            "RETURN VALUE",
            variant="fresh-context",
            steps=(Step("ibv_open_device", name="opened"),),
            call={"context": Ref("opened")},
            expect=(Expect("ret", "==", 0),),
        ),
        Claim(
            "close-keeps-objects",
            "untestable",
            "closing a context does not free the objects made from it: the application frees them first",
            "NOTES",
            untestable="what stays allocated is user-space memory of libibverbs and the provider, which no verb "
            "reports; the objects themselves must not be used after the close",
        ),
        Claim(
            "disassociated-destroy",
            "untestable",
            "with RDMAV_ALLOW_DISASSOC_DESTROY set, destroy verbs report success instead of EIO once the device "
            "was disassociated",
            "NOTES",
            untestable="needs the device removed under an open context, and the variable set before the first "
            "ibv_get_device_list of a fresh process",
        ),
    ),
    contract=Contract(destroys=(Resource("context", role="context"),)),
    undefined=(
        "using any object of a context after ibv_close_device",
        "closing the same context twice",
        "ibv_get_cq_event or ibv_get_async_event concurrently with a destroy verb while "
        "RDMAV_ALLOW_DISASSOC_DESTROY is set",
    ),
)

ibv_query_device = Verb(
    name="ibv_query_device",
    man="ibv_query_device(3)",
    prototype="int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr);",
    returns=RETURNS_ERRNO,
    summary="read the device's attributes and resource limits",
    params=(CONTEXT, Param("device_attr", "struct ibv_device_attr *", "out")),
    claims=(
        Claim(
            "limits-nonzero",
            "relation",
            "every resource the fixtures need has a maximum of at least one, and there is a port",
            "DESCRIPTION",
            steps=(Step("ibv_query_device", name="q"),),
            params={
                "root": "q:device_attr",
                "relations": (
                    ("max_qp", ">=", 1),
                    ("max_qp_wr", ">=", 1),
                    ("max_sge", ">=", 1),
                    ("max_cq", ">=", 1),
                    ("max_cqe", ">=", 1),
                    ("max_mr", ">=", 1),
                    ("max_pd", ">=", 1),
                    ("max_mr_size", ">=", 4096),
                    ("phys_port_cnt", ">=", 1),
                    ("max_srq", "0=>0", "max_srq_wr"),
                ),
            },
        ),
        Claim(
            "capabilities-consistent",
            "relation",
            "a capability and its limits agree: a device that advertises memory windows can make one, SRQ and "
            "multicast limits are 0 together, and atomic_cap is an ibv_atomic_cap value (at most IBV_ATOMIC_GLOB)",
            "DESCRIPTION",
            steps=(Step("ibv_query_device", name="q"),),
            params={
                "root": "q:device_attr",
                "relations": (
                    ("max_mw", "0=>0", "device_cap_flags&IBV_DEVICE_MEM_WINDOW"),
                    ("max_srq", "0=>0", "max_srq_sge"),
                    ("max_mcast_grp", "0=>0", "max_mcast_qp_attach"),
                    ("max_mcast_grp", "0=>0", "max_total_mcast_qp_attach"),
                    ("atomic_cap", "<=", 2),
                ),
            },
            also=(Source("ibta", "IBTA Vol. 1 r1.7, the Query HCA verb (the limit of each resource)"),),
        ),
        Claim(
            "maxima-reachable",
            "untestable",
            "the maxima are upper limits that memory, permissions or other users may keep out of reach",
            "NOTES",
            untestable="a permission, not a promise: the limit claims of ibv_query_device_ex(3) excuse a failure "
            "at the maximum for lack of memory and check that one above it is refused",
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
    undefined=("querying a closed context",),
)

_SMALL_CAP = {"max_send_wr": 1, "max_recv_wr": 1, "max_send_sge": 1, "max_recv_sge": 1, "max_inline_data": 0}

_AT_LIMIT_EXCUSE = ("ENOMEM", "ibv_query_device(3) NOTES lets a resource at the maximum fail for lack of memory")

# Every field of struct ibv_device_attr, which ibv_device_attr_ex.orig_attr embeds: (the name a
# case id uses, the C field). The ids keep the names the first catalogue gave them.
_DEVICE_ATTR_FIELDS = (
    ("fw_version", "fw_ver"),
    ("node_guid", "node_guid"),
    ("sys_image_guid", "sys_image_guid"),
    ("max_mr_size", "max_mr_size"),
    ("page_size_cap", "page_size_cap"),
    ("vendor_id", "vendor_id"),
    ("vendor_part_id", "vendor_part_id"),
    ("hw_ver", "hw_ver"),
    ("max_qp", "max_qp"),
    ("max_qp_wr", "max_qp_wr"),
    ("device_cap_flags", "device_cap_flags"),
    ("max_sge", "max_sge"),
    ("max_sge_rd", "max_sge_rd"),
    ("max_cq", "max_cq"),
    ("max_cqe", "max_cqe"),
    ("max_mr", "max_mr"),
    ("max_pd", "max_pd"),
    ("max_qp_rd_atom", "max_qp_rd_atom"),
    ("max_ee_rd_atom", "max_ee_rd_atom"),
    ("max_res_rd_atom", "max_res_rd_atom"),
    ("max_qp_init_rd_atom", "max_qp_init_rd_atom"),
    ("max_ee_init_rd_atom", "max_ee_init_rd_atom"),
    ("atomic_caps", "atomic_cap"),
    ("max_ee", "max_ee"),
    ("max_rdd", "max_rdd"),
    ("max_mw", "max_mw"),
    ("max_raw_ipv6_qp", "max_raw_ipv6_qp"),
    ("max_raw_ethy_qp", "max_raw_ethy_qp"),
    ("max_mcast_grp", "max_mcast_grp"),
    ("max_qp_mcast_attach", "max_mcast_qp_attach"),
    ("max_total_mcast_qp_attach", "max_total_mcast_qp_attach"),
    ("max_ah", "max_ah"),
    ("max_fmr", "max_fmr"),
    ("max_map_per_fmr", "max_map_per_fmr"),
    ("max_srq", "max_srq"),
    ("max_srq_wr", "max_srq_wr"),
    ("max_srq_sge", "max_srq_sge"),
    ("max_pkeys", "max_pkeys"),
    ("local_ca_ack_delay", "local_ca_ack_delay"),
    ("phys_port_cnt", "phys_port_cnt"),
)

# ibv_query_device_ex's ODP fields: their names in struct ibv_device_attr_ex (the capability is _ODP, below).
_ODP_FIELDS = {
    "odp_caps.general_odp_caps": "odp_caps.general_caps",
    "odp_caps.per_transport_caps.rc_odp_caps": "odp_caps.per_transport_caps.rc_odp_caps",
    "odp_caps.per_transport_caps.uc_odp_caps": "odp_caps.per_transport_caps.uc_odp_caps",
    "odp_caps.per_transport_caps.ud_odp_caps": "odp_caps.per_transport_caps.ud_odp_caps",
}
_QUERY_EX = (Step("ibv_query_device_ex", name="q"),)

ibv_query_device_ex = Verb(
    name="ibv_query_device_ex",
    man="ibv_query_device_ex(3)",
    prototype="int ibv_query_device_ex(struct ibv_context *context, "
    "const struct ibv_query_device_ex_input *input, struct ibv_device_attr_ex *attr);",
    returns=RETURNS_ERRNO,
    summary="read the device attributes plus the extended ones (orig_attr holds ibv_query_device's)",
    params=(
        CONTEXT,
        Param(
            "input",
            "const struct ibv_query_device_ex_input *",
            nullable=True,
            doc="reserved for extensions: no comp_mask bit is defined yet",
        ),
        Param("attr", "struct ibv_device_attr_ex *", "out"),
    ),
    # The page has no ERRORS section; it returns 0 or an errno.
    claims=(
        Claim(
            "orig-attr-equals-query-device",
            "relation",
            "orig_attr holds exactly what ibv_query_device returns",
            "DESCRIPTION",
            layer="libibverbs",
            over={("field", "cfield"): _DEVICE_ATTR_FIELDS},
            variant="orig_attr.{field}",
            steps=(Step("ibv_query_device", name="plain"), Step("ibv_query_device_ex", name="ex")),
            params={
                "root": "plain:device_attr",
                "relations": (("plain:device_attr.{cfield}", "==", "ex:attr.orig_attr.{cfield}"),),
            },
        ),
        Claim(
            "zero-means-unsupported",
            "relation",
            "a capability reported as 0 (unsupported) leaves its dependent fields at 0, and ranges are ordered",
            "DESCRIPTION",
            steps=_QUERY_EX,
            params={
                "root": "q:attr",
                "relations": (
                    ("tso_caps.max_tso", "0=>0", "tso_caps.supported_qpts"),
                    ("rss_caps.supported_qpts", "0=>0", "rss_caps.max_rwq_indirection_tables"),
                    ("rss_caps.supported_qpts", "0=>0", "rss_caps.rx_hash_fields_mask"),
                    ("packet_pacing_caps.qp_rate_limit_max", "0=>0", "packet_pacing_caps.supported_qpts"),
                    ("packet_pacing_caps.qp_rate_limit_min", "<=", "packet_pacing_caps.qp_rate_limit_max"),
                    ("tm_caps.max_num_tags", "0=>0", "tm_caps.flags"),
                ),
            },
        ),
        Claim(
            "timestamp-zero-means-unsupported",
            "gated",
            "completion_timestamp_mask is 0 exactly when completion "
            "timestamps are unsupported: a CQ asking for them fails then, and works otherwise",
            "DESCRIPTION",
            variant="completion_timestamp_mask-vs-cq_ex_completion_timestamp",
            call={"cq_attr.wc_flags": "IBV_WC_EX_WITH_COMPLETION_TIMESTAMP", "cq_attr.cqe": 8},
            params={"gate": Cap("attr_ex.completion_timestamp_mask"), "verb": "ibv_create_cq_ex"},
        ),
        Claim(
            "odp-support-bit",
            "relation",
            "without IBV_ODP_SUPPORT no transport advertises on-demand paging",
            "DESCRIPTION",
            steps=_QUERY_EX,
            params={
                "root": "q:attr",
                "fields": _ODP_FIELDS,
                "relations": tuple(
                    ("odp_caps.general_odp_caps&IBV_ODP_SUPPORT", "0=>0", f"odp_caps.per_transport_caps.{t}_odp_caps")
                    for t in ("rc", "uc", "ud")
                ),
            },
        ),
        Claim(
            "phys-port-cnt-ex",
            "relation",
            "phys_port_cnt_ex extends phys_port_cnt: never smaller",
            "DESCRIPTION",
            steps=_QUERY_EX,
            params={"root": "q:attr", "relations": (("phys_port_cnt_ex", ">=", "orig_attr.phys_port_cnt"),)},
        ),
        Claim(
            "limits-sane",
            "relation",
            "the resource limits are at least one",
            "NOTES",
            steps=_QUERY_EX,
            params={
                "root": "q:attr",
                "relations": tuple(
                    (f"orig_attr.{f}", ">=", 1)
                    for f in ("max_qp_wr", "max_sge", "max_cqe", "max_qp", "max_cq", "max_pd")
                ),
            },
        ),
        Claim(
            "limits-honoured",
            "limit",
            "the maxima are upper limits: a resource at the maximum can be created "
            "when memory allows (NOTES lets it fail for lack of resources), one above it is refused",
            "NOTES",
            over={
                ("what", "verb", "arg", "limit", "qp_type", "needs"): (
                    ("cq", "ibv_create_cq", "cqe", "max_cqe", "", ()),
                    ("qp-RC", "ibv_create_qp", "qp_init_attr.cap.max_send_wr", "max_qp_wr", "IBV_QPT_RC", ()),
                    (
                        "qp-UD",
                        "ibv_create_qp",
                        "qp_init_attr.cap.max_send_wr",
                        "max_qp_wr",
                        "IBV_QPT_UD",
                        _QP_TYPE_NEEDS["IBV_QPT_UD"],
                    ),
                    ("qp-RC", "ibv_create_qp", "qp_init_attr.cap.max_send_sge", "max_sge", "IBV_QPT_RC", ()),
                    (
                        "qp-UD",
                        "ibv_create_qp",
                        "qp_init_attr.cap.max_send_sge",
                        "max_sge",
                        "IBV_QPT_UD",
                        _QP_TYPE_NEEDS["IBV_QPT_UD"],
                    ),
                    ("srq", "ibv_create_srq", "srq_init_attr.attr.max_wr", "max_srq_wr", "", (Cap("attr.max_srq"),)),
                    ("srq", "ibv_create_srq", "srq_init_attr.attr.max_sge", "max_srq_sge", "", (Cap("attr.max_srq"),)),
                ),
                "where": ("at", "above"),
            },
            variant="{what}-{limit}-{where}",
            params={
                "target": {"verb": "{verb}", "limit": "{limit}", "needs": Var("needs")},
                "excused": (_AT_LIMIT_EXCUSE,),
                "at": {"{arg}": Dev("attr.{limit}")},
                "above": {"{arg}": Dev("attr.{limit}", plus=1)},
            },
        ),
        Claim(
            "input-comp-mask-rejected",
            "refused",
            "input is for future extensions: a comp_mask bit the library does not know is refused",
            "DESCRIPTION",
            layer="libibverbs",
            over={"bit": (0, 1, 31)},
            variant="input-comp_mask-bit{bit}",
            call={"input": {"comp_mask": Flags(bits=(Var("bit"),))}},
        ),
        Claim(
            "input-optional",
            "succeeds",
            "input may be NULL or carry no extension (comp_mask 0)",
            "DESCRIPTION",
            over={("name", "input"): (("NULL", None), ("comp_mask-0", {"comp_mask": 0}))},
            variant="input-{name}",
            call={"input": Var("input")},
            layer="libibverbs",
        ),
        Claim(
            "pci-write-end-padding",
            "gated",
            "a device that advertises IBV_DEVICE_PCI_WRITE_END_PADDING creates a "
            "QP with IBV_QP_CREATE_PCI_WRITE_END_PADDING",
            "DESCRIPTION",
            variant="RC-QP-with-end-padding",
            call={
                "qp_init_attr_ex.create_flags": "IBV_QP_CREATE_PCI_WRITE_END_PADDING",
                "qp_init_attr_ex.cap": _SMALL_CAP,
            },
            params={
                "gate": Cap("attr_ex.device_cap_flags_ex&IBV_DEVICE_PCI_WRITE_END_PADDING"),
                "only": "advertised",
                "verb": "ibv_create_qp_ex",
            },
        ),
        Claim(
            "comp-mask-marks-fields",
            "untestable",
            "attr->comp_mask says which extended fields are valid",
            "DESCRIPTION",
            untestable="no extended field has a comp_mask bit in verbs.h 44 (libibverbs leaves it "
            "0), so there is nothing to compare it with",
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
    undefined=("an attr buffer smaller than the struct ibv_device_attr_ex of the installed verbs.h",),
)

ibv_query_rt_values_ex = Verb(
    name="ibv_query_rt_values_ex",
    man="ibv_query_rt_values_ex(3)",
    prototype="int ibv_query_rt_values_ex(struct ibv_context *context, struct ibv_values_ex *values);",
    returns=RETURNS_ERRNO,
    summary="read real-time values of the device (its raw clock); comp_mask says which, in and out",
    params=(
        CONTEXT,
        Param(
            "values",
            "struct ibv_values_ex *",
            "inout",
            default={"comp_mask": "IBV_VALUES_MASK_RAW_CLOCK"},
            flags="ibv_values_mask",
        ),
    ),
    claims=(
        Claim(
            "raw-clock",
            "succeeds",
            "asking for the raw clock fills it and marks it, and only it, in comp_mask",
            "DESCRIPTION, NOTES",
            variant="IBV_VALUES_MASK_RAW_CLOCK",
            needs=(Cap("attr_ex.hca_core_clock"),),
            expect=(Expect("values.comp_mask", "==", "IBV_VALUES_MASK_RAW_CLOCK"),),
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider has no query_rt_values op (libibverbs' default answers EOPNOTSUPP)"
        }
    },
)

ibv_query_port = Verb(
    name="ibv_query_port",
    man="ibv_query_port(3)",
    prototype="int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr);",
    returns=RETURNS_ERRNO,
    summary="read the attributes of one port (numbered from 1)",
    params=(
        CONTEXT,
        Param("port_num", "uint8_t", default=Dev("port_num")),
        Param("port_attr", "struct ibv_port_attr *", "out"),
    ),
    claims=(
        Claim(
            "port-bounds",
            "index-bounds",
            "ports are numbered 1..phys_port_cnt: those answer, port 0 and phys_port_cnt+1 fail",
            "DESCRIPTION",
            params={"length": "attr.phys_port_cnt", "base": 1, "index": "port_num"},
        ),
        Claim(
            "attributes-in-range",
            "relation",
            "the port reports values of their enums (state, MTUs, link layer), an active MTU not above the "
            "maximum, a GID table and a maximum message size",
            "DESCRIPTION",
            steps=(Step("ibv_query_port", name="q"),),
            params={
                "root": "q:port_attr",
                "relations": (
                    ("state", "<=", 5),
                    ("max_mtu", ">=", 1),
                    ("max_mtu", "<=", 5),
                    ("active_mtu", ">=", 1),
                    ("active_mtu", "<=", "max_mtu"),
                    ("link_layer", "<=", 2),
                    ("gid_tbl_len", ">=", 1),
                    ("max_msg_sz", ">=", 1),
                ),
            },
        ),
        Claim(
            "pkey-table",
            "relation",
            "an InfiniBand-transport port has a P_Key table (at least the default P_Key)",
            "DESCRIPTION",
            steps=(Step("ibv_query_port", name="q"),),
            params={"root": "q:port_attr", "relations": (("pkey_tbl_len", ">=", 1),)},
            transports=IB_TRANSPORTS,
            also=(Source("ibta", "IBTA Vol. 1 r1.7, partitioning (every port holds the default P_Key)"),),
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
    undefined=("a port_attr buffer smaller than struct ibv_port_attr",),
)

ibv_query_gid = Verb(
    name="ibv_query_gid",
    man="ibv_query_gid(3)",
    prototype="int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid);",
    returns=RETURNS_COUNT,
    summary="read entry `index` of a port's GID table; 0 on success, -1 on error",
    params=(
        CONTEXT,
        Param("port_num", "uint8_t", default=Dev("port_num")),
        Param("index", "int", default=Dev("gid_index")),
        Param("gid", "union ibv_gid *", "out"),
    ),
    claims=(
        Claim(
            "index-bounds",
            "index-bounds",
            "indexes 0..gid_tbl_len-1 of the port answer; gid_tbl_len and -1 fail with -1",
            "DESCRIPTION, RETURN VALUE",
            params={"length": "port.gid_tbl_len", "base": 0, "index": "index"},
        ),
        Claim(
            "bad-port",
            "refused",
            "a port outside 1..phys_port_cnt fails with -1",
            "RETURN VALUE",
            over={("where", "port"): (("port-0", 0), ("beyond-last", Dev("attr.phys_port_cnt", plus=1)))},
            variant="{where}",
            call={"port_num": Var("port")},
            layer="kernel",
        ),
        Claim(
            "same-as-gid-ex",
            "relation",
            "the GID read is the gid of the entry ibv_query_gid_ex returns for the same port and index",
            "DESCRIPTION",
            steps=(Step("ibv_query_gid", name="plain"), Step("ibv_query_gid_ex", name="ex")),
            params={"relations": (("plain:gid", "==", "ex:entry.gid"),)},
            layer="libibverbs",
            also=(Source("man", "ibv_query_gid_ex(3)", "ARGUMENTS"),),
        ),
        Claim(
            "default-gid",
            "succeeds",
            "on an InfiniBand-transport port, entry 0 holds the port's default GID (not all zeroes)",
            "DESCRIPTION",
            variant="index-0",
            call={"index": 0},
            expect=(Expect("gid", "!=", bytes(16)),),
            transports=IB_TRANSPORTS,
            layer="kernel",
            also=(Source("ibta", "IBTA Vol. 1 r1.7, GID usage (GID index 0 holds the port's default GID)"),),
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)

ibv_query_gid_ex = Verb(
    name="ibv_query_gid_ex",
    man="ibv_query_gid_ex(3)",
    prototype="int ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index, "
    "struct ibv_gid_entry *entry, uint32_t flags);",
    returns=RETURNS_ERRNO,
    summary="read one GID table entry with its type and net device; ENODATA for an empty entry",
    params=(
        CONTEXT,
        Param("port_num", "uint32_t", default=Dev("port_num")),
        Param("gid_index", "uint32_t", default=Dev("gid_index")),
        Param("entry", "struct ibv_gid_entry *", "out"),
        Param("flags", "uint32_t", default=0, doc="must be 0 for now"),
    ),
    errors=(
        Error(
            "ENODATA",
            "gid_index is inside the port's table but the entry holds no GID",
            untestable="no device fact says which entry is empty, and the catalogue has no value for 'the first "
            "empty entry' (ibv_query_gid_table returns only valid ones)",
        ),
    ),
    claims=(
        Claim(
            "entry-fields",
            "succeeds",
            "a valid entry holds the GID, echoes the index and port asked for, and has a documented GID type",
            "ARGUMENTS",
            variant="gid-under-test",
            expect=(
                Expect("entry.gid", "==", Dev("gid")),
                Expect("entry.gid_index", "==", Arg("gid_index")),
                Expect("entry.port_num", "==", Arg("port_num")),
                Expect("entry.gid_type", "in", ("IBV_GID_TYPE_IB", "IBV_GID_TYPE_ROCE_V1", "IBV_GID_TYPE_ROCE_V2")),
            ),
        ),
        Claim(
            "gid-type-of-link",
            "succeeds",
            "a RoCE port's GIDs are of a RoCE type, and only those have a net "
            "device (ndev_ifindex is 0 when there is none)",
            "ARGUMENTS",
            variant="gid-under-test",
            transports=IB_TRANSPORTS,
            expect=(
                Expect("entry.gid_type", "!=", "IBV_GID_TYPE_IB", transports=("roce",)),
                Expect("entry.ndev_ifindex", "nonzero", transports=("roce",)),
                Expect("entry.gid_type", "==", "IBV_GID_TYPE_IB", transports=("ib",)),
                Expect("entry.ndev_ifindex", "zero", transports=("ib",)),
            ),
        ),
        Claim(
            "flags-must-be-zero",
            "refused",
            "flags is for future fields and must be 0: any bit set is refused",
            "ARGUMENTS",
            over={"bit": (0, 1, 31)},
            variant="flags-bit{bit}",
            call={"flags": Flags(bits=(Var("bit"),))},
            errnos=("*",),
            layer="kernel",
        ),
        Claim(
            "beyond-the-table",
            "refused",
            "an index at or past the table's length fails (ENODATA is for an "
            "empty entry inside the table; the page names no errno for this)",
            "ERRORS",
            variant="gid_tbl_len",
            call={"gid_index": Dev("port.gid_tbl_len")},
            errnos=("*",),
            layer="kernel",
        ),
        Claim(
            "bad-port",
            "refused",
            "a port outside 1..phys_port_cnt fails (the page names no errno)",
            "ARGUMENTS",
            over={("where", "port"): (("port-0", 0), ("beyond-last", Dev("attr.phys_port_cnt", plus=1)))},
            variant="{where}",
            call={"port_num": Var("port")},
            errnos=("*",),
            layer="kernel",
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)

# Room for the whole table of the port under test (the valid entries of all ports, on a one-port device).
_GID_TABLE_ROOM = Dev("port.gid_tbl_len")
_GID_TABLE_LARGE = 4096  # more room than any table needs: 128 KiB of entries

ibv_query_gid_table = Verb(
    name="ibv_query_gid_table",
    man="ibv_query_gid_table(3)",
    prototype="ssize_t ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, "
    "size_t max_entries, uint32_t flags);",
    returns=RETURNS_NEG_ERRNO,
    summary="the valid GID entries of all ports; their number, or a negative errno",
    params=(
        CONTEXT,
        Param(
            "entries",
            "struct ibv_gid_entry *",
            default=Buffer(Dev("port.gid_tbl_len", times=32)),
            doc="room for max_entries entries (32 bytes each)",
        ),
        Param("max_entries", "size_t", default=_GID_TABLE_ROOM),
        Param("flags", "uint32_t", default=0, doc="must be 0 for now"),
    ),
    claims=(
        Claim(
            "counts-valid-entries",
            "succeeds",
            "with room enough the call returns how many valid entries it "
            "wrote: at least the GID under test, at most max_entries",
            "DESCRIPTION, RETURN VALUE",
            variant="room-for-gid_tbl_len",
            expect=(Expect("ret", ">=", 1), Expect("ret", "<=", Arg("max_entries"))),
        ),
        Claim(
            "more-room-than-needed",
            "succeeds",
            "an array larger than the valid entries need is fine: the page asks only that it hold them all",
            "DESCRIPTION",
            variant="room-for-4096",
            layer="libibverbs",
            call={"entries": Buffer(_GID_TABLE_LARGE * 32), "max_entries": _GID_TABLE_LARGE},
            expect=(Expect("ret", ">=", 1),),
        ),
        Claim(
            "too-small",
            "refused",
            "when there are more valid entries than max_entries the call fails (here: "
            "none fit in 0, and the device has its GID under test)",
            "DESCRIPTION",
            variant="max_entries-0",
            call={"max_entries": 0},
            layer="kernel",
        ),
        Claim(
            "flags-must-be-zero",
            "refused",
            "flags is for future fields and must be 0: any bit set is refused",
            "ARGUMENTS",
            over={"bit": (0, 1, 31)},
            variant="flags-bit{bit}",
            call={"flags": Flags(bits=(Var("bit"),))},
            layer="kernel",
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
    undefined=("a max_entries larger than the entries array",),
)

ibv_query_pkey = Verb(
    name="ibv_query_pkey",
    man="ibv_query_pkey(3)",
    prototype="int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey);",
    returns=RETURNS_COUNT,
    summary="read entry `index` of a port's P_Key table (network byte order); 0 or -1",
    params=(
        CONTEXT,
        Param("port_num", "uint8_t", default=Dev("port_num")),
        Param("index", "int", default=0),
        Param("pkey", "__be16 *", "out"),
    ),
    claims=(
        Claim(
            "index-bounds",
            "index-bounds",
            "indexes 0..pkey_tbl_len-1 of the port answer; pkey_tbl_len and -1 fail with -1",
            "DESCRIPTION, RETURN VALUE",
            params={"length": "port.pkey_tbl_len", "base": 0, "index": "index"},
        ),
        Claim(
            "default-pkey",
            "succeeds",
            "a RoCE port's entry 0 is the default P_Key 0xffff (full membership; the same bytes in either order)",
            "DESCRIPTION",
            variant="index-0",
            call={"index": 0},
            expect=(Expect("pkey", "==", 0xFFFF),),
            transports=("roce",),
            layer="kernel",
            also=(Source("ibta", "IBTA Vol. 1 Annex A16 (RoCE): the port uses the default P_Key"),),
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)

ibv_get_pkey_index = Verb(
    name="ibv_get_pkey_index",
    man="ibv_get_pkey_index(3)",
    prototype="int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey);",
    returns=RETURNS_COUNT,
    summary="the index of a P_Key (network byte order) in the port's P_Key table; -1 on error",
    params=(CONTEXT, Param("port_num", "uint8_t", default=Dev("port_num")), Param("pkey", "__be16", default=0xFFFF)),
    claims=(
        Claim(
            "finds-entry-0",
            "succeeds",
            "the P_Key of entry 0, as ibv_query_pkey reads it, is found at index 0",
            "DESCRIPTION",
            variant="pkey-of-index-0",
            transports=IB_TRANSPORTS,
            layer="libibverbs",
            steps=(Step("ibv_query_pkey", {"index": 0}, name="entry0"),),
            call={"pkey": Ref("entry0", "pkey")},
            expect=(Expect("ret", "==", 0),),
        ),
        Claim(
            "absent-pkey",
            "refused",
            "a P_Key the table does not hold gives -1 (0x0000 is never a valid P_Key)",
            "RETURN VALUE",
            variant="pkey-0x0000",
            call={"pkey": 0},
            transports=IB_TRANSPORTS,
            layer="libibverbs",
            also=(Source("ibta", "IBTA Vol. 1 r1.7, partitioning (P_Key 0x0000 is invalid)"),),
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)

# The context's async events: entries only (their claims need events, left to the data-path checks).
ibv_get_async_event = Verb(
    name="ibv_get_async_event",
    man="ibv_get_async_event(3)",
    prototype="int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event);",
    returns=RETURNS_COUNT,
    summary="wait for (block on) the next asynchronous event of a context; 0, or -1 with read(2)'s errno",
    params=(
        CONTEXT,
        Param(
            "event",
            "struct ibv_async_event *",
            "out",
            doc="event_type, and the element (cq, qp, srq, wq or port_num) its type selects",
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),),
        produces=(Resource("async_event"),),
        destroyed_by="ibv_ack_async_event",
    ),
    claims=(
        Claim(
            "cq-overrun-reported",
            "cq-overrun",
            "a CQ that more completions reach than it holds, none of them polled, is reported as IBV_EVENT_CQ_ERR "
            "naming that CQ",
            "DESCRIPTION",
            over={"qp_type": (_RC,)},
            variant="{qp_type}-rdma-writes-one-past-the-cq",
            params={"opcode": "IBV_WR_RDMA_WRITE"},
        ),
        Claim(
            "cq-at-capacity-no-overrun",
            "capacity",
            "a CQ that exactly as many completions reach as its cqe reports, none polled, is not overrun: no "
            "IBV_EVENT_CQ_ERR, every completion is polled in order with its wr_id, and the CQ completes WRs again",
            "DESCRIPTION",
            also=(Source("man", "ibv_create_cq(3)", "NOTES"),),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_RDMA_WRITE"),)},
            variant="{qp_type}-rdma-writes-to-cqe",
            params={"queue": "cq", "size": 4},
        ),
    ),
    undefined=(
        "calling with a closed context",
        "destroying an object whose events were obtained but not acknowledged, from the only thread "
        "(the destroy waits for the acknowledgement forever)",
    ),
)

ibv_ack_async_event = Verb(
    name="ibv_ack_async_event",
    man="ibv_get_async_event(3)",
    prototype="void ibv_ack_async_event(struct ibv_async_event *event);",
    returns=RETURNS_VOID,
    summary="acknowledge an event ibv_get_async_event returned (destroying its object waits for this)",
    params=(Param("event", "struct ibv_async_event *"),),
    contract=Contract(destroys=(Resource("async_event", role="event"),)),
    undefined=(
        "acknowledging an event twice, or one not returned by ibv_get_async_event",
        "acknowledging after the event's object was destroyed",
    ),
)


# --- 2. PD and memory ---------------------------------------------------------------------------------------
# Protection domains, thread domains and parent domains, memory regions, memory windows, device memory.
# A creating verb's refusals followed by the normal use of the device (kind "failure-path"): the
# kernel's bug reports for rxe and siw cluster on these paths (issue 25, item 4); the guards judge them.
_FAILURE_PATHS = Source(
    "kernel",
    "drivers/infiniband/core/uverbs_cmd.c and rdma_core.c: a failed create unwinds what it made (uobject aborted)",
)

ibv_alloc_pd = Verb(
    name="ibv_alloc_pd",
    man="ibv_alloc_pd(3)",
    prototype="struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);",
    returns=RETURNS_POINTER,
    summary="allocate a protection domain; NULL on failure",
    params=(CONTEXT,),
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after a documented refusal, the same request made right is served: the PD is allocated, used and "
            "freed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS,),
            variant="unprovoked",
            params={
                "unprovoked": "the page names no cause (RETURN VALUE: NULL if the request fails) and the verb takes "
                "nothing but the context; what fails it is the device's max_pd PDs all allocated or the kernel out "
                "of memory (uverbs' ENOMEM), neither made by a check on a shared host"
            },
        ),
        Claim(
            "distinct-pds",
            "distinct",
            "each call returns a new PD with its own handle, and ibv_dealloc_pd of an unused PD returns 0",
            "DESCRIPTION, RETURN VALUE",
            variant="x16",
            params={"count": 16, "value": "ret.handle"},
        ),
        Claim(
            "of-the-context",
            "succeeds",
            "the PD belongs to the context it was allocated for",
            "DESCRIPTION",
            variant="context-under-test",
            expect=(Expect("ret.context", "==", Need("context")),),
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),),
        produces=(Resource("pd"),),
        destroyed_by="ibv_dealloc_pd",
        makes=True,
    ),
    undefined=("allocating on a closed context",),
)

ibv_dealloc_pd = Verb(
    name="ibv_dealloc_pd",
    man="ibv_alloc_pd(3)",
    prototype="int ibv_dealloc_pd(struct ibv_pd *pd);",
    returns=RETURNS_ERRNO,
    summary="free a protection domain; 0 or an errno (EBUSY while anything uses it)",
    params=(Param("pd", "struct ibv_pd *", default=Need("pd")),),
    claims=(
        Claim(
            "busy-with-mr",
            "refused",
            "freeing a PD that a memory region still uses fails with EBUSY, and the PD stays usable",
            "DESCRIPTION",
            errnos=("EBUSY",),
            steps=(Step("ibv_reg_mr", {"pd": Need("pd")}),),
            params={"then": (Step("ibv_reg_mr", {"pd": Need("pd")}),)},
        ),
        Claim(
            "busy-then-still-usable",
            "refused",
            "after a free refused with EBUSY (an MR still uses the PD), a region is registered on the PD, and "
            "once both regions are deregistered the PD frees with 0",
            "NOTES",
            errnos=("EBUSY",),
            steps=(Step("ibv_reg_mr", {"pd": Need("pd")}, name="region"),),
            params={
                "then": (
                    Step("ibv_reg_mr", {"pd": Need("pd")}, name="again"),
                    Step("ibv_dereg_mr", {"mr": Ref("region")}),
                    Step("ibv_dereg_mr", {"mr": Ref("again")}),
                    Step("ibv_dealloc_pd", {"pd": Need("pd")}),
                )
            },
        ),
        Claim(
            "busy-with-qp",
            "refused",
            "freeing a PD that a QP still uses fails with EBUSY, and the PD stays usable",
            "DESCRIPTION",
            errnos=("EBUSY",),
            steps=(Step("ibv_create_qp", {"pd": Need("pd")}),),
            params={"then": (Step("ibv_reg_mr", {"pd": Need("pd")}),)},
        ),
        Claim(
            "busy-with-srq",
            "refused",
            "freeing a PD that an SRQ still uses fails with EBUSY, and the PD stays usable",
            "NOTES",
            errnos=("EBUSY",),
            needs=(Cap("attr.max_srq"),),
            steps=(Step("ibv_create_srq", {"pd": Need("pd")}),),
            params={"then": (Step("ibv_reg_mr", {"pd": Need("pd")}),)},
        ),
        Claim(
            "busy-with-mw",
            "refused",
            "freeing a PD that a memory window still uses fails with EBUSY, and the PD stays usable",
            "NOTES",
            errnos=("EBUSY",),
            needs=(Cap("attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW"),),
            steps=(Step("ibv_alloc_mw", {"pd": Need("pd")}),),
            params={"then": (Step("ibv_reg_mr", {"pd": Need("pd")}),)},
        ),
        Claim(
            "frees-unused",
            "succeeds",
            "freeing a PD nothing uses returns 0",
            "RETURN VALUE",
            variant="fresh-pd",
            expect=(Expect("ret", "==", 0),),
        ),
        Claim(
            "busy-with-ah",
            "refused",
            "freeing a PD that an address handle still uses fails with EBUSY, and the PD stays usable",
            "DESCRIPTION",
            errnos=("EBUSY",),
            transports=IB_TRANSPORTS,
            steps=(Step("ibv_create_ah", {"pd": Need("pd")}),),
            params={"then": (Step("ibv_reg_mr", {"pd": Need("pd")}),)},
            also=(Source("man", "ibv_create_ah(3)", "DESCRIPTION"),),
        ),
    ),
    errors=(
        Error(
            "EBUSY",
            "the PD is still in use",
            covered_by=("busy-with-mr", "busy-with-qp", "busy-with-srq", "busy-with-mw", "busy-with-ah"),
        ),
    ),
    contract=Contract(destroys=(Resource("pd", role="pd"),)),
    undefined=(
        "freeing a PD twice",
        "using a PD after it was freed",
        "freeing a parent domain while objects made on it exist",
    ),
)

ibv_alloc_td = Verb(
    name="ibv_alloc_td",
    man="ibv_alloc_td(3)",
    prototype="struct ibv_td *ibv_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *init_attr);",
    returns=RETURNS_POINTER,
    summary="allocate a thread domain (objects under it may skip locking); NULL with errno on failure",
    params=(CONTEXT, Param("init_attr", "struct ibv_td_init_attr *", default={"comp_mask": 0})),
    claims=(
        Claim(
            "allocates",
            "succeeds",
            "a thread domain is allocated for the context",
            "DESCRIPTION",
            variant="comp_mask-0",
            expect=(Expect("ret.context", "==", Need("context")),),
        ),
        Claim(
            "in-a-parent-domain",
            "succeeds",
            "a thread domain can go into a parent domain, which then makes objects (a CQ-backed QP)",
            "DESCRIPTION",
            variant="parent-domain-qp",
            params={
                "then": (
                    Step("ibv_alloc_parent_domain", {"attr.td": Ref("call")}, name="parent"),
                    Step("ibv_create_qp", {"pd": Ref("parent")}),
                )
            },
        ),
        Claim(
            "thread-safety",
            "untestable",
            "objects are safe for use from many threads by default, with or without a thread domain",
            "DESCRIPTION",
            untestable="needs concurrent traffic from several threads; the lack of a race is not observable "
            "by a single check",
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),),
        produces=(Resource("td"),),
        destroyed_by="ibv_dealloc_td",
        makes=True,
    ),
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider has no thread domains (libibverbs' default alloc_td answers EOPNOTSUPP)"
        }
    },
    undefined=("using objects made under a thread domain from several threads at once",),
)

ibv_dealloc_td = Verb(
    name="ibv_dealloc_td",
    man="ibv_alloc_td(3)",
    prototype="int ibv_dealloc_td(struct ibv_td *td);",
    returns=RETURNS_ERRNO,
    summary="free a thread domain; 0 or an errno",
    params=(Param("td", "struct ibv_td *", default=Need("td")),),
    claims=(
        Claim(
            "frees-unused",
            "succeeds",
            "freeing a thread domain nothing uses returns 0",
            "RETURN VALUE",
            variant="fresh-td",
            expect=(Expect("ret", "==", 0),),
        ),
    ),
    contract=Contract(requires=(Resource("td", role="td"),), destroys=(Resource("td", role="td"),)),
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider has no thread domains (libibverbs' default dealloc_td answers EOPNOTSUPP)"
        }
    },
    undefined=(
        "freeing a thread domain twice",
        "freeing a thread domain while objects made under it exist (the page asks to destroy them first)",
    ),
)

ibv_alloc_parent_domain = Verb(
    name="ibv_alloc_parent_domain",
    man="ibv_alloc_parent_domain(3)",
    prototype="struct ibv_pd *ibv_alloc_parent_domain(struct ibv_context *context, "
    "struct ibv_parent_domain_init_attr *attr);",
    returns=RETURNS_POINTER,
    summary="a parent domain (a PD extended with a thread domain, allocators); freed with ibv_dealloc_pd",
    params=(
        CONTEXT,
        Param(
            "attr",
            "struct ibv_parent_domain_init_attr *",
            default={"pd": Need("pd"), "td": None, "comp_mask": 0},
            flags="ibv_parent_domain_init_attr_mask",
            doc="pd is required; td optional; comp_mask for the rest",
        ),
    ),
    claims=(
        Claim(
            "allocates",
            "succeeds",
            "a parent domain over a PD is a new struct ibv_pd of the same context",
            "DESCRIPTION",
            variant="over-a-pd",
            expect=(Expect("ret.context", "==", Need("context")),),
        ),
        Claim(
            "interchangeable-with-pd",
            "succeeds",
            "the parent domain works wherever a PD does: an MR registers and a QP is created on it",
            "DESCRIPTION",
            variant="mr-and-qp",
            params={"then": (Step("ibv_reg_mr", {"pd": Ref("call")}), Step("ibv_create_qp", {"pd": Ref("call")}))},
        ),
        Claim(
            "pd-required",
            "refused",
            "attr.pd cannot be NULL",
            "DESCRIPTION, ARGUMENTS",
            variant="pd-NULL",
            call={"attr.pd": None},
        ),
        Claim(
            "unknown-comp-mask",
            "refused",
            "comp_mask bits outside enum ibv_parent_domain_init_attr_mask are refused",
            "ARGUMENTS",
            over={"bit": (2, 3, 31)},
            variant="comp_mask-bit{bit}",
            steps=(Step("ibv_alloc_parent_domain"),),
            call={"attr.comp_mask": Flags(bits=(Var("bit"),))},
        ),
        Claim(
            "allocators",
            "untestable",
            "with IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS the provider takes the "
            "buffers of objects made on the parent domain from alloc and gives them back through free",
            "ARGUMENTS",
            untestable="needs C callbacks that count their calls; the catalogue has no value for a callback",
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"), Resource("pd", role="attr.pd")),
        produces=(Resource("parent_domain"),),
        destroyed_by="ibv_dealloc_pd",
        makes=True,
    ),
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider has no parent domains (libibverbs' default "
            "alloc_parent_domain answers EOPNOTSUPP)"
        }
    },
    undefined=(
        "an alloc callback that returns memory not zeroed or that fork may copy",
        "ibv_unimport_pd on a parent domain",
    ),
)

ibv_reg_mr = Verb(
    name="ibv_reg_mr",
    man="ibv_reg_mr(3)",
    prototype="struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);",
    returns=RETURNS_POINTER,
    summary="register a memory region with the given access; NULL on failure",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param("addr", "void *", default=Buffer(Var("length"))),
        Param("length", "size_t", default=Var("length")),
        Param("access", "int", default="IBV_ACCESS_LOCAL_WRITE", flags="ibv_access_flags"),
    ),
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after each of its documented refusals, the same request made right is served: the object is "
            "created, used and destroyed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS,),
        ),
        Claim(
            "registers",
            "succeeds",
            "a registration with local write access succeeds and reports the length asked for; ibv_dereg_mr returns 0",
            "DESCRIPTION, RETURN VALUE",
            over={"length": (1, 4096, 65536 + 3)},
            variant="length-{length}",
            expect=(Expect("ret.length", "==", Arg("length")),),
            params={"then": (Step("ibv_dereg_mr", {"mr": Ref("call")}),)},
        ),
        Claim(
            "remote-write-needs-local-write",
            "refused",
            "REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE is refused",
            "DESCRIPTION",
            over={
                ("name", "access"): (
                    ("REMOTE_WRITE", "IBV_ACCESS_REMOTE_WRITE"),
                    ("REMOTE_ATOMIC", "IBV_ACCESS_REMOTE_ATOMIC"),
                    ("REMOTE_WRITE+REMOTE_READ", "IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ"),
                )
            },
            variant="{name}-without-LOCAL_WRITE",
            call={"access": Var("access")},
        ),
        Claim(
            "memlock-limit",
            "refused",
            "for a process without CAP_IPC_LOCK, a registration that pins more memory than its RLIMIT_MEMLOCK "
            "allows fails (NULL) with ENOMEM",
            "RETURN VALUE",
            variant="one-page-over",
            call={"addr": Buffer(Dev("process.over_memlock")), "length": Dev("process.over_memlock")},
            errnos=("ENOMEM",),
            when=(Cap("process.unprivileged"), Cap("process.memlock")),
            also=(
                Source(
                    "kernel",
                    "drivers/infiniband/core/umem.c ib_umem_get(): pinned pages over RLIMIT_MEMLOCK without "
                    "CAP_IPC_LOCK are refused with ENOMEM (siw: siw_umem_get() keeps the same rule)",
                ),
            ),
            layer="kernel",
        ),
        Claim(
            "describes-the-buffer",
            "succeeds",
            "the MR reports the buffer, the length and the PD it was registered with",
            "DESCRIPTION, RETURN VALUE",
            variant="4096-bytes",
            expect=(
                Expect("ret.addr", "==", Arg("addr")),
                Expect("ret.length", "==", Arg("length")),
                Expect("ret.pd", "==", Arg("pd")),
            ),
        ),
        Claim(
            "documented-access",
            "succeeds",
            "access 0 (local read only) and each combination of documented flags "
            "that keeps the local-write rule register",
            "DESCRIPTION",
            over={
                ("name", "access", "needs"): (
                    ("0", 0, ()),
                    ("REMOTE_READ", "IBV_ACCESS_REMOTE_READ", ()),
                    ("LOCAL_WRITE+REMOTE_WRITE", "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE", ()),
                    (
                        "LOCAL_WRITE+REMOTE_WRITE+REMOTE_READ",
                        "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ",
                        (),
                    ),
                    (
                        "LOCAL_WRITE+REMOTE_ATOMIC",
                        "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC",
                        (Cap("attr.atomic_cap"),),
                    ),
                    (
                        "LOCAL_WRITE+MW_BIND",
                        "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND",
                        (Cap("attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW"),),
                    ),
                    ("LOCAL_WRITE+ZERO_BASED", "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED", ()),
                )
            },
            variant="access-{name}",
            needs=Var("needs"),
            call={"access": Var("access")},
        ),
        Claim(
            "relaxed-ordering-is-a-hint",
            "succeeds",
            "IBV_ACCESS_RELAXED_ORDERING allows the system to reorder: "
            "a registration asking for it succeeds whether or not the device reorders",
            "DESCRIPTION",
            variant="LOCAL_WRITE+RELAXED_ORDERING",
            call={"access": "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING"},
            layer="libibverbs",
            also=(Source("header", "verbs.h: IBV_ACCESS_OPTIONAL_RANGE flags may be ignored"),),
        ),
        Claim(
            "undocumented-access-bits",
            "refused",
            "an access bit that is no documented flag (nor in the optional range) makes the registration fail",
            "DESCRIPTION",
            over={"bit": (10, 15, 19, 30, 31)},
            variant="LOCAL_WRITE+bit{bit}",
            call={"access": Flags(("IBV_ACCESS_LOCAL_WRITE",), bits=(Var("bit"),))},
            layer="kernel",
            also=(Source("kernel", "drivers/infiniband/core/uverbs_cmd.c ib_check_mr_access()"),),
        ),
        Claim(
            "on-demand-paging",
            "gated",
            "IBV_ACCESS_ON_DEMAND makes an on-demand-paging MR where the device "
            "advertises ODP, and is refused where it does not",
            "DESCRIPTION",
            variant="LOCAL_WRITE+ON_DEMAND",
            call={"access": "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND"},
            params={"gate": Cap("attr_ex.odp_caps.general_caps&IBV_ODP_SUPPORT")},
            layer="kernel",
            also=(Source("man", "ibv_query_device_ex(3)", "DESCRIPTION"),),
        ),
        Claim(
            "implicit-odp",
            "gated",
            "addr 0, length SIZE_MAX and IBV_ACCESS_ON_DEMAND register the whole address "
            "space where implicit ODP is advertised",
            "DESCRIPTION",
            variant="addr-0-length-SIZE_MAX",
            call={
                "addr": None,
                "length": 0xFFFFFFFFFFFFFFFF,
                "access": "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND",
            },
            params={"gate": Cap("attr_ex.odp_caps.general_caps&IBV_ODP_SUPPORT_IMPLICIT"), "only": "advertised"},
            layer="kernel",
        ),
        Claim(
            "local-read-and-keys",
            "untestable",
            "local read is always granted, the lkey serves in local SGEs and "
            "the rkey in remote operations, and remote access needs the remote flags",
            "DESCRIPTION, RETURN VALUE",
            untestable="needs posted work requests and completions: data path",
        ),
    ),
    contract=Contract(
        requires=(Resource("pd", role="pd"),), produces=(Resource("mr"),), destroyed_by="ibv_dereg_mr", makes=True
    ),
    tables={"vars": {"length": 4096}},
    undefined=(
        "changing or unmapping a registered buffer while the device may access it",
        "IBV_ACCESS_HUGETLB on memory that is not all huge pages (a promise of the application)",
    ),
)

ibv_reg_mr_iova = Verb(
    name="ibv_reg_mr_iova",
    man="ibv_reg_mr(3)",
    prototype="struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, "
    "int access);",
    returns=RETURNS_POINTER,
    summary="register memory whose keys address it from a chosen virtual base (hca_va; the header calls it iova)",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param("addr", "void *", default=Buffer(8192)),
        Param("length", "size_t", default=8192),
        Param("hca_va", "uint64_t", default=0x10000000),
        Param("access", "int", default="IBV_ACCESS_LOCAL_WRITE", flags="ibv_access_flags"),
    ),
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after each of its documented refusals, the same request made right is served: the object is "
            "created, used and destroyed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS,),
        ),
        Claim(
            "registers",
            "succeeds",
            "a registration with a chosen base address describes the host buffer (addr, length) in the MR",
            "DESCRIPTION",
            over={"hca_va": (0x10000000, 0)},
            variant="hca_va-{hca_va}",
            call={"hca_va": Var("hca_va")},
            expect=(Expect("ret.addr", "==", Arg("addr")), Expect("ret.length", "==", Arg("length"))),
            params={"then": (Step("ibv_dereg_mr", {"mr": Ref("call")}),)},
        ),
        Claim(
            "addressing",
            "untestable",
            "through the keys, byte hca_va+k is the k-th byte of the buffer; hca_va 0 works as IBV_ACCESS_ZERO_BASED",
            "DESCRIPTION",
            untestable="needs RDMA traffic: data path",
        ),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("mr"),), destroyed_by="ibv_dereg_mr"),
)

ibv_reg_dmabuf_mr = Verb(
    name="ibv_reg_dmabuf_mr",
    man="ibv_reg_mr(3)",
    prototype="struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, "
    "int fd, int access);",
    returns=RETURNS_POINTER,
    summary="register part of a dma-buf (fd) as an MR; NULL on failure",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param("offset", "uint64_t", default=0),
        Param("length", "size_t", default=4096),
        Param("iova", "uint64_t", default=0),
        Param("fd", "int", default=-1, doc="a dma-buf file descriptor"),
        Param("access", "int", default="IBV_ACCESS_LOCAL_WRITE", flags="ibv_access_flags"),
    ),
    claims=(
        Claim(
            "not-a-dmabuf",
            "refused",
            "a descriptor that is no dma-buf is refused",
            "DESCRIPTION",
            variant="fd--1",
            call={"fd": -1},
            layer="kernel",
        ),
        Claim(
            "registers-dmabuf",
            "untestable",
            "a dma-buf range registers; iova must share the page offset of "
            "offset, and only LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC and RELAXED_ORDERING are "
            "accepted",
            "DESCRIPTION",
            untestable="needs a dma-buf exporter (udmabuf or a GPU driver) and a value "
            "for its descriptor; the catalogue has neither",
        ),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("mr"),), destroyed_by="ibv_dereg_mr"),
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider cannot register dma-bufs (libibverbs' default reg_dmabuf_mr answers EOPNOTSUPP)"
        }
    },
    undefined=("closing or truncating the dma-buf while the MR exists",),
)

_REREG_INPUT = Expect("ret", "==", "IBV_REREG_MR_ERR_INPUT")
_STILL_REGISTERED = {"then": (Step("ibv_dereg_mr", {"mr": Need("mr")}),)}

ibv_rereg_mr = Verb(
    name="ibv_rereg_mr",
    man="ibv_rereg_mr(3)",
    prototype="int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length, "
    "int access);",
    returns=RETURNS_NEG_CODE,
    summary="change an MR's translation, PD or access; 0, or an enum ibv_rereg_mr_err_code saying if the MR is valid",
    params=(
        Param("mr", "struct ibv_mr *", default=Need("mr")),
        Param("flags", "int", default="IBV_REREG_MR_CHANGE_ACCESS", flags="ibv_rereg_mr_flags"),
        Param("pd", "struct ibv_pd *", nullable=True),
        Param("addr", "void *", nullable=True),
        Param("length", "size_t", default=0),
        Param("access", "int", default="IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ", flags="ibv_access_flags"),
    ),
    errors=(
        Error(
            "errno",
            "IBV_REREG_MR_ERR_INPUT: libibverbs found the input invalid; the old MR is still valid",
            covered_by=(
                "unknown-flags",
                "access-without-change-access",
                "translation-needs-range",
                "only-registered-mrs",
            ),
        ),
        Error(
            "errno",
            "IBV_REREG_MR_ERR_CMD: the command failed; the MR must not be used, only deregistered",
            untestable="no input is known to make a provider's rereg_mr command fail while libibverbs accepts it",
        ),
        Error(
            "errno",
            "IBV_REREG_MR_ERR_DONT_FORK_NEW / DO_FORK_OLD / CMD_AND_DO_FORK_NEW: madvise on the new or "
            "old range failed with fork support on",
            untestable="madvise cannot be made to fail on a mapped range",
        ),
    ),
    claims=(
        Claim(
            "changes-access",
            "succeeds",
            "changing only the access flags succeeds and keeps the MR's range and PD",
            "DESCRIPTION",
            variant="LOCAL_WRITE-to-LOCAL_WRITE+REMOTE_READ",
            steps=(Step("ibv_reg_mr", name="region"),),
            call={"mr": Ref("region")},
            expect=(Expect("region.ret.length", "==", 4096), Expect("region.ret.pd", "==", Need("pd"))),
        ),
        Claim(
            "changes-pd",
            "succeeds",
            "IBV_REREG_MR_CHANGE_PD moves the MR to the given PD",
            "DESCRIPTION",
            variant="to-a-second-pd",
            steps=(Step("ibv_reg_mr", name="region"),),
            call={
                "mr": Ref("region"),
                "flags": "IBV_REREG_MR_CHANGE_PD",
                "pd": Need("pd", label="second"),
                "access": 0,
            },
            expect=(Expect("region.ret.pd", "==", Need("pd", label="second")),),
        ),
        Claim(
            "changes-translation",
            "succeeds",
            "IBV_REREG_MR_CHANGE_TRANSLATION moves the MR to the new address and length",
            "DESCRIPTION",
            variant="to-an-8k-buffer",
            steps=(Step("ibv_reg_mr", name="region"),),
            call={
                "mr": Ref("region"),
                "flags": "IBV_REREG_MR_CHANGE_TRANSLATION",
                "addr": Buffer(8192),
                "length": 8192,
                "access": 0,
            },
            expect=(Expect("region.ret.addr", "==", Arg("addr")), Expect("region.ret.length", "==", 8192)),
        ),
        Claim(
            "unknown-flags",
            "refused",
            "a flags bit beyond the three defined is an input error; the MR stays valid (it deregisters)",
            "RETURN VALUE, DESCRIPTION",
            over={"bit": (3, 4, 30)},
            variant="flags-bit{bit}",
            call={"flags": Flags(bits=(Var("bit"),)), "access": 0},
            expect=(_REREG_INPUT,),
            layer="libibverbs",
            params=_STILL_REGISTERED,
        ),
        Claim(
            "access-without-change-access",
            "refused",
            "access is only for IBV_REREG_MR_CHANGE_ACCESS: access "
            "flags without it are an input error, and the MR stays valid",
            "DESCRIPTION, RETURN VALUE",
            variant="CHANGE_PD-with-access",
            call={"flags": "IBV_REREG_MR_CHANGE_PD", "pd": Need("pd"), "access": "IBV_ACCESS_LOCAL_WRITE"},
            expect=(_REREG_INPUT,),
            layer="libibverbs",
            params=_STILL_REGISTERED,
        ),
        Claim(
            "translation-needs-range",
            "refused",
            "IBV_REREG_MR_CHANGE_TRANSLATION without an address or a length is an input error, and the MR stays valid",
            "DESCRIPTION, RETURN VALUE",
            over={("what", "addr", "length"): (("addr-NULL", None, 4096), ("length-0", Buffer(4096), 0))},
            variant="{what}",
            call={
                "flags": "IBV_REREG_MR_CHANGE_TRANSLATION",
                "addr": Var("addr"),
                "length": Var("length"),
                "access": 0,
            },
            expect=(_REREG_INPUT,),
            layer="libibverbs",
            params=_STILL_REGISTERED,
        ),
        Claim(
            "only-registered-mrs",
            "refused",
            "a null MR cannot be re-registered: an input error, and it still deregisters",
            "DESCRIPTION",
            variant="null-mr",
            steps=(Step("ibv_alloc_null_mr", name="null"),),
            call={"mr": Ref("null")},
            expect=(_REREG_INPUT,),
            layer="libibverbs",
            params={"then": (Step("ibv_dereg_mr", {"mr": Ref("null")}),)},
            also=(Source("man", "ibv_alloc_null_mr(3)", "DESCRIPTION"),),
        ),
        Claim(
            "dereg-after-failure",
            "untestable",
            "even after a failure the MR is deregistered with ibv_dereg_mr",
            "NOTES",
            untestable="shown by every refusal claim here, whose MR deregisters afterwards",
        ),
    ),
    contract=Contract(requires=(Resource("mr", role="mr"),)),
    # libibverbs' default rereg_mr sets errno EOPNOTSUPP, and ibv_rereg_mr reports IBV_REREG_MR_ERR_CMD.
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider cannot re-register (libibverbs' default rereg_mr sets EOPNOTSUPP)"
        }
    },
    undefined=(
        "using the MR, other than to deregister it, after IBV_REREG_MR_ERR_CMD or IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW",
        "re-registering while work requests use the MR",
    ),
)

_ODP = Cap("attr_ex.odp_caps.general_caps&IBV_ODP_SUPPORT")
_ODP_ACCESS = "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND"
_MR_SGE = {"addr": Ref("region", "addr"), "length": 4096, "lkey": Ref("region", "lkey")}  # the step "region"

ibv_advise_mr = Verb(
    name="ibv_advise_mr",
    man="ibv_advise_mr(3)",
    prototype="int ibv_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, "
    "struct ibv_sge *sg_list, uint32_t num_sge);",
    returns=RETURNS_ERRNO,
    summary="advise the kernel about ranges of on-demand-paging MRs (prefetch); 0 or an errno",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param(
            "advice", "enum ibv_advise_mr_advice", default="IBV_ADVISE_MR_ADVICE_PREFETCH", flags="ibv_advise_mr_advice"
        ),
        Param("flags", "uint32_t", default="IBV_ADVISE_MR_FLAG_FLUSH", doc="0 or IBV_ADVISE_MR_FLAG_FLUSH"),
        Param("sg_list", "struct ibv_sge *", default=_MR_SGE),
        Param("num_sge", "uint32_t", default=1),
    ),
    errors=(
        Error(
            "EOPNOTSUPP",
            "libibverbs or the provider does not implement the verb",
            untestable="the answer of a device without the verb: checks report it as unsupported "
            "(tables['not_supported'])",
        ),
        Error(
            "ENOTSUP",
            "the advice is not supported (the same number as EOPNOTSUPP on Linux)",
            covered_by=("unknown-advice",),
        ),
        Error(
            "EFAULT",
            "a range lies outside its MR or the process, or an lkey is invalid or lacks write access",
            covered_by=("outside-the-mr",),
        ),
        Error("EINVAL", "the PD or the flags are invalid, or the range is a window's", covered_by=("unknown-flags",)),
        Error(
            "EPERM",
            "an lkey outside the caller's scope, or PREFETCH_WRITE on an MR without write access",
            covered_by=("write-needs-writable-mr",),
        ),
        Error("ENOENT", "the lkeys do not match the MRs", covered_by=("unknown-lkey",)),
        Error("ENOMEM", "not enough memory", untestable="cannot exhaust kernel memory safely on a shared lab VM"),
        Error(
            "ENOSYS",
            "old libibverbs answered this instead of EOPNOTSUPP",
            untestable="libibverbs 44 answers EOPNOTSUPP; only an older library gives ENOSYS",
        ),
    ),
    claims=(
        Claim(
            "prefetch",
            "succeeds",
            "prefetching a range of an on-demand-paging MR succeeds, for each advice, synchronous or not",
            "DESCRIPTION, NOTES",
            over={
                "advice": (
                    "IBV_ADVISE_MR_ADVICE_PREFETCH",
                    "IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE",
                    "IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT",
                ),
                ("sync", "flags"): (("flush", "IBV_ADVISE_MR_FLAG_FLUSH"), ("async", 0)),
            },
            variant="{advice}-{sync}",
            needs=(_ODP,),
            steps=(Step("ibv_reg_mr", {"access": _ODP_ACCESS}, name="region"),),
            call={"advice": Var("advice"), "flags": Var("flags")},
        ),
        Claim(
            "prefetch-needs-odp",
            "refused",
            "prefetch applies to on-demand-paging MRs only: the lkey of a pinned MR is refused",
            "ARGUMENTS",
            variant="pinned-mr",
            needs=(_ODP,),
            steps=(Step("ibv_reg_mr", name="region"),),
        ),
        Claim(
            "outside-the-mr",
            "refused",
            "a range running past the end of its MR fails with EFAULT",
            "RETURN VALUE",
            variant="4096-past-a-4096-byte-mr",
            needs=(_ODP,),
            errnos=("EFAULT",),
            steps=(Step("ibv_reg_mr", {"access": _ODP_ACCESS}, name="region"),),
            call={"sg_list.length": 8192},
        ),
        Claim(
            "unknown-flags",
            "refused",
            "flags other than IBV_ADVISE_MR_FLAG_FLUSH fail with EINVAL",
            "RETURN VALUE, ARGUMENTS",
            over={"bit": (1, 31)},
            variant="flags-bit{bit}",
            needs=(_ODP,),
            errnos=("EINVAL",),
            steps=(Step("ibv_reg_mr", {"access": _ODP_ACCESS}, name="region"),),
            call={"flags": Flags(bits=(Var("bit"),))},
        ),
        Claim(
            "write-needs-writable-mr",
            "refused",
            "PREFETCH_WRITE on an MR registered without write access fails with EPERM",
            "RETURN VALUE",
            variant="read-only-odp-mr",
            needs=(_ODP,),
            errnos=("EPERM",),
            steps=(Step("ibv_reg_mr", {"access": "IBV_ACCESS_ON_DEMAND"}, name="region"),),
            call={"advice": "IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE"},
        ),
        Claim(
            "unknown-lkey",
            "refused",
            "an lkey that matches no MR fails with ENOENT (or EFAULT, which the page also gives for an invalid lkey)",
            "RETURN VALUE",
            variant="lkey-0xffffffff",
            needs=(_ODP,),
            errnos=("ENOENT", "EFAULT"),
            steps=(Step("ibv_reg_mr", {"access": _ODP_ACCESS}, name="region"),),
            call={"sg_list.lkey": 0xFFFFFFFF},
        ),
        Claim(
            "unknown-advice",
            "refused",
            "an advice outside enum ibv_advise_mr_advice is not supported (ENOTSUP, the number of EOPNOTSUPP)",
            "RETURN VALUE",
            variant="advice-3",
            needs=(_ODP,),
            errnos=("EOPNOTSUPP",),
            steps=(Step("ibv_reg_mr", {"access": _ODP_ACCESS}, name="region"),),
            call={"advice": 3},
        ),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"), Resource("mr", role="sg_list.lkey"))),
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider does not implement ibv_advise_mr (the page's answer for an unsupported verb)"
        }
    },
    undefined=("advising a range that is unmapped meanwhile",),
)

ibv_alloc_null_mr = Verb(
    name="ibv_alloc_null_mr",
    man="ibv_alloc_null_mr(3)",
    prototype="struct ibv_mr *ibv_alloc_null_mr(struct ibv_pd *pd);",
    returns=RETURNS_POINTER,
    summary="an MR that discards writes and reads as zeroes, of the maximum length; freed with ibv_dereg_mr",
    params=(Param("pd", "struct ibv_pd *", default=Need("pd")),),
    claims=(
        Claim(
            "allocates",
            "succeeds",
            "a null MR of the maximum length is allocated on the PD, and deregisters with ibv_dereg_mr",
            "DESCRIPTION",
            variant="on-a-pd",
            expect=(Expect("ret.length", "==", 0xFFFFFFFFFFFFFFFF), Expect("ret.pd", "==", Need("pd"))),
            params={"then": (Step("ibv_dereg_mr", {"mr": Ref("call")}),)},
        ),
        Claim(
            "discards-and-reads-zero",
            "untestable",
            "data written to the null MR is dropped and data read from it is zero; only its lkey is valid",
            "DESCRIPTION",
            untestable="needs sends and receives: data path",
        ),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("mr"),), destroyed_by="ibv_dereg_mr"),
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider has no null MR (libibverbs' default answers EOPNOTSUPP; "
            "mlx5 gives the same number, ENOTSUP, without the device's key)"
        }
    },
    undefined=("binding a memory window to a null MR (the page calls it invalid)",),
)

ibv_dereg_mr = Verb(
    name="ibv_dereg_mr",
    man="ibv_reg_mr(3)",
    prototype="int ibv_dereg_mr(struct ibv_mr *mr);",
    returns=RETURNS_ERRNO,
    summary="deregister a memory region; 0 or an errno",
    params=(Param("mr", "struct ibv_mr *", default=Need("mr")),),
    claims=(
        Claim(
            "deregisters",
            "succeeds",
            "deregistering an MR nothing uses returns 0",
            "RETURN VALUE",
            variant="fresh-mr",
            expect=(Expect("ret", "==", 0),),
        ),
        Claim(
            "busy-with-bound-window",
            "untestable",
            "deregistering an MR that a memory window is bound to fails",
            "NOTES",
            untestable="binding a window needs a QP in RTS and the bind's completion: data path",
        ),
    ),
    contract=Contract(destroys=(Resource("mr", role="mr"),)),
    undefined=("deregistering twice", "using the keys of a deregistered MR"),
)

_MW = Cap("attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW")
_MW_TYPE_2 = Cap("attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW_TYPE_2A|IBV_DEVICE_MEM_WINDOW_TYPE_2B")

# Data-path window claims (kind "window", kinds/windows.py): what a refused access through a window
# completes with is the IBTA's rule (the pages give the statuses, not their causes).
_IBTA_MW = Source(
    "ibta",
    "IBTA Vol. 1 r1.7 ch. 10, memory windows (bind: C10-72 to C10-75; invalidation: o10-37.2) and "
    "§10.8.3 (a responder's access violation completes the requester with a remote access error)",
)
_MW_RW = ("IBV_WR_RDMA_WRITE", "IBV_WR_RDMA_READ")

ibv_alloc_mw = Verb(
    name="ibv_alloc_mw",
    man="ibv_alloc_mw(3)",
    prototype="struct ibv_mw *ibv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);",
    returns=RETURNS_POINTER,
    summary="allocate an unbound memory window of type 1 or 2; NULL on failure",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param("type", "enum ibv_mw_type", default="IBV_MW_TYPE_1", flags="ibv_mw_type"),
    ),
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after each of its documented refusals, the same request made right is served: the object is "
            "created, used and destroyed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS,),
        ),
        Claim(
            "allocates-type-1",
            "gated",
            "where the device advertises memory windows a type 1 window is allocated "
            "on the PD; where it does not, the call fails",
            "DESCRIPTION, RETURN VALUE",
            variant="IBV_MW_TYPE_1",
            params={
                "gate": _MW,
                "advertised": {
                    "expect": (
                        Expect("ret.type", "==", "IBV_MW_TYPE_1"),
                        Expect("ret.pd", "==", Need("pd")),
                        Expect("ret.context", "==", Need("context")),
                    )
                },
            },
            also=(Source("man", "ibv_query_device(3)", "DESCRIPTION"),),
        ),
        Claim(
            "allocates-type-2",
            "succeeds",
            "where the device advertises type 2A or 2B windows, a type 2 window is allocated",
            "DESCRIPTION",
            variant="IBV_MW_TYPE_2",
            needs=(_MW_TYPE_2,),
            call={"type": "IBV_MW_TYPE_2"},
            expect=(Expect("ret.type", "==", "IBV_MW_TYPE_2"),),
        ),
        Claim(
            "unknown-type",
            "refused",
            "a type other than 1 or 2 is refused",
            "DESCRIPTION",
            over={"type": (0, 3)},
            variant="type-{type}",
            needs=(_MW,),
            call={"type": Var("type")},
        ),
        Claim(
            "zero-length-unbinds",
            "window",
            "a type 1 window stays usable until a bind of length zero: after that its key lets the peer "
            "neither write nor read the range it covered",
            "DESCRIPTION",
            needs=(_MW,),
            transports=IB_TRANSPORTS,
            also=(_IBTA_MW,),
            over={"opcode": _MW_RW},
            variant="type-1-{opcode}-after-unbind",
            params={"type": 1, "then": "unbind", "where": "inside", "statuses": ("IBV_WC_REM_ACCESS_ERR",)},
        ),
        Claim(
            "dereg-refused-while-bound",
            "window",
            "a region with a window bound to it cannot be deregistered: ibv_dereg_mr fails",
            "NOTES",
            needs=(_MW,),
            over={"type": (1,)},
            variant="type-{type}-bound",
            params={"then": "dereg-region"},
        ),
    ),
    contract=Contract(
        requires=(Resource("pd", role="pd"),), produces=(Resource("mw"),), destroyed_by="ibv_dealloc_mw", makes=True
    ),
    tables={"not_supported": {"EOPNOTSUPP": "the provider has no alloc_mw op (verbs.h answers EOPNOTSUPP)"}},
    undefined=("using the rkey of a freed window",),
)

ibv_dealloc_mw = Verb(
    name="ibv_dealloc_mw",
    man="ibv_alloc_mw(3)",
    prototype="int ibv_dealloc_mw(struct ibv_mw *mw);",
    returns=RETURNS_ERRNO,
    summary="unbind (if bound) and free a memory window; 0 or an errno",
    params=(Param("mw", "struct ibv_mw *", default=Need("mw")),),
    claims=(
        Claim(
            "frees-unbound",
            "succeeds",
            "freeing an unbound window returns 0",
            "RETURN VALUE",
            variant="fresh-mw",
            needs=(_MW,),
            expect=(Expect("ret", "==", 0),),
        ),
        Claim(
            "frees-bound",
            "window",
            "freeing a bound window unbinds it: the key it was bound with no longer lets the peer write or "
            "read the range",
            "DESCRIPTION",
            needs=(_MW_TYPE_2,),
            transports=IB_TRANSPORTS,
            also=(_IBTA_MW,),
            over={"opcode": _MW_RW},
            variant="type-2-{opcode}-after-dealloc",
            params={"type": 2, "then": "dealloc", "where": "inside", "statuses": ("IBV_WC_REM_ACCESS_ERR",)},
        ),
    ),
    contract=Contract(requires=(Resource("mw", role="mw"),), destroys=(Resource("mw", role="mw"),)),
    undefined=("freeing a window twice",),
)

_BIND = {
    "wr_id": 7,
    "send_flags": "IBV_SEND_SIGNALED",
    "bind_info.mr": Need("mr"),
    "bind_info.addr": 0,
    "bind_info.length": 4096,
    "bind_info.mw_access_flags": "IBV_ACCESS_REMOTE_READ",
}

ibv_bind_mw = Verb(
    name="ibv_bind_mw",
    man="ibv_bind_mw(3)",
    prototype="int ibv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);",
    returns=RETURNS_ERRNO,
    summary="post a request to bind a type 1 window to part of an MR; on success mw->rkey is the new key",
    params=(
        Param("qp", "struct ibv_qp *", default=Need("qp"), doc="a UC, RC or XRC_SEND QP"),
        Param("mw", "struct ibv_mw *", default=Need("mw")),
        Param(
            "mw_bind",
            "struct ibv_mw_bind *",
            default=_BIND,
            flags="ibv_send_flags",
            doc="send_flags from ibv_send_flags; bind_info.mw_access_flags from ibv_access_flags",
        ),
    ),
    # The page names no errno. Binds that are posted complete on the send CQ: the data-path section
    # checks them (bind, rkey change, access through the window, unbind with length 0, QP types).
    claims=(
        Claim(
            "type-2-refused",
            "refused",
            "ibv_bind_mw binds type 1 windows: a type 2 window (bound by a work "
            "request) is refused before the provider",
            "NOTES",
            variant="IBV_MW_TYPE_2",
            needs=(_MW_TYPE_2,),
            call={"mw": Need("mw", spec={"type": "IBV_MW_TYPE_2"})},
            layer="libibverbs",
            also=(Source("header", "verbs.h ibv_bind_mw(): EINVAL unless the window is of type 1"),),
        ),
        Claim(
            "mr-of-another-pd",
            "refused",
            "the MR must be of the window's PD: one of another PD is refused",
            "DESCRIPTION",
            variant="mr-of-a-second-pd",
            needs=(_MW,),
            call={
                "mw_bind.bind_info.mr": Need("mr", spec={"pd": Need("pd", label="second")}),
                "mw_bind.bind_info.addr": 0,
            },
            layer="libibverbs",
            also=(
                Source(
                    "ibta", "IBTA Vol. 1 r1.7, memory windows: the window and the region are in one protection domain"
                ),
            ),
        ),
        Claim(
            "range-without-mr",
            "refused",
            "without an MR the bind is an unbind: an address or a length with no MR is refused",
            "DESCRIPTION",
            variant="mr-NULL-length-4096",
            needs=(_MW,),
            call={"mw_bind.bind_info.mr": None, "mw_bind.bind_info.addr": 0x1000},
            layer="libibverbs",
            also=(Source("header", "verbs.h ibv_bind_mw(): EINVAL for no MR with an address or length"),),
        ),
        Claim(
            "bind-grants-access",
            "window",
            "a type 1 bind posted by ibv_bind_mw completes with IBV_WC_BIND_MW, and the key it leaves in "
            "mw->rkey lets the peer write and read the bound range with the access the bind gave",
            "DESCRIPTION, RETURN VALUE",
            needs=(_MW,),
            over={"opcode": _MW_RW},
            variant="type-1-{opcode}-inside",
            params={"type": 1, "where": "inside", "seed": 21},
        ),
        Claim(
            "bound-range-only",
            "window",
            "the window's key covers the bound range only: an RDMA operation past its end, or running over "
            "it, fails with a remote access error although the region underneath is larger",
            "DESCRIPTION",
            needs=(_MW,),
            transports=IB_TRANSPORTS,
            also=(_IBTA_MW,),
            over={"opcode": _MW_RW, "where": ("outside", "across-end")},
            variant="type-1-{opcode}-{where}",
            params={"type": 1, "where": Var("where"), "statuses": ("IBV_WC_REM_ACCESS_ERR",)},
        ),
        Claim(
            "bound-access-only",
            "window",
            "the window grants the remote access its bind asked for and no other, even where the region "
            "grants more: a WRITE through a read-only window, a READ through a write-only one, fail",
            "DESCRIPTION",
            needs=(_MW,),
            transports=IB_TRANSPORTS,
            also=(_IBTA_MW,),
            over={
                ("opcode", "access"): (
                    ("IBV_WR_RDMA_WRITE", "IBV_ACCESS_REMOTE_READ"),
                    ("IBV_WR_RDMA_READ", "IBV_ACCESS_REMOTE_WRITE"),
                )
            },
            variant="type-1-{opcode}-window-{access}",
            params={
                "type": 1,
                "where": "inside",
                "access": Var("access"),
                "statuses": ("IBV_WC_REM_ACCESS_ERR",),
            },
        ),
    ),
    contract=Contract(
        requires=(Resource("qp", role="qp"), Resource("mw", role="mw"), Resource("mr", role="mw_bind.bind_info.mr"))
    ),
    undefined=(
        "using the new rkey remotely before the bind's completion, other than in a send ordered after "
        "the bind on the same QP",
        "binding a window to a null MR",
    ),
)

ibv_inc_rkey = Verb(
    name="ibv_inc_rkey",
    man="ibv_inc_rkey(3)",
    prototype="uint32_t ibv_inc_rkey(uint32_t rkey);",
    returns=RETURNS_VALUE,
    summary="a new rkey: the 8 low bits (the tag) plus one, the 24 index bits unchanged",
    params=(Param("rkey", "uint32_t"),),
    claims=(
        Claim(
            "increments-tag",
            "exact-table",
            "the low byte goes up by one and the upper 24 bits stay",
            "DESCRIPTION, NOTES",
            layer="libibverbs",
            params={"input": "rkey", "table": ((0x12345678, 0x12345679), (0, 1), (0xABCDEF00, 0xABCDEF01))},
        ),
        Claim(
            "tag-wraps",
            "exact-table",
            "a tag of 0xff wraps to 0 without carrying into the index bits",
            "NOTES",
            layer="libibverbs",
            params={"input": "rkey", "table": ((0x123456FF, 0x12345600), (0xFFFFFFFF, 0xFFFFFF00))},
        ),
        Claim(
            "key-for-a-bind",
            "window",
            "the incremented key serves as the new key of a type 2 window's bind: once that bind "
            "completes, the peer writes the bound range with it",
            "NOTES",
            needs=(Cap("attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW_TYPE_2A|IBV_DEVICE_MEM_WINDOW_TYPE_2B"),),
            over={"opcode": ("IBV_WR_RDMA_WRITE",)},
            variant="type-2-{opcode}",
            params={"type": 2, "where": "inside", "seed": 22},
            also=(Source("man", "ibv_post_send(3)", "DESCRIPTION"),),
        ),
    ),
)

_DM = Cap("attr_ex.max_dm_size")  # device memory: ibv_alloc_dm(3) NOTES bounds it by max_dm_size

_DM_LENGTH = 256
_DM_UNSUPPORTED = {"EOPNOTSUPP": "the provider has no device memory (libibverbs' default answers EOPNOTSUPP)"}

ibv_alloc_dm = Verb(
    name="ibv_alloc_dm",
    man="ibv_alloc_dm(3)",
    prototype="struct ibv_dm *ibv_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);",
    returns=RETURNS_POINTER,
    summary="allocate device memory (at most max_dm_size); NULL on failure",
    params=(
        CONTEXT,
        Param("attr", "struct ibv_alloc_dm_attr *", default={"length": _DM_LENGTH, "log_align_req": 0, "comp_mask": 0}),
    ),
    claims=(
        Claim(
            "allocates",
            "succeeds",
            "device memory is allocated for the context, with the handle an import uses",
            "DESCRIPTION, RETURN VALUE",
            variant="256-bytes",
            needs=(_DM,),
            expect=(Expect("ret.context", "==", Need("context")),),
        ),
        Claim(
            "aligned",
            "succeeds",
            "an alignment of the device address may be asked for (for atomics on it)",
            "DESCRIPTION",
            variant="log_align_req-3",
            needs=(_DM,),
            call={"attr.log_align_req": 3},
        ),
        Claim(
            "beyond-max-dm-size",
            "refused",
            "more than max_dm_size cannot be allocated",
            "NOTES",
            variant="max_dm_size+1",
            needs=(_DM,),
            call={"attr.length": Dev("attr_ex.max_dm_size", plus=1)},
            also=(Source("man", "ibv_query_device_ex(3)", "DESCRIPTION"),),
        ),
        Claim(
            "unknown-comp-mask",
            "refused",
            "comp_mask bits name no optional field yet: any is refused",
            "DESCRIPTION",
            over={"bit": (0, 1, 31)},
            variant="comp_mask-bit{bit}",
            needs=(_DM,),
            call={"attr.comp_mask": Flags(bits=(Var("bit"),))},
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),),
        produces=(Resource("dm"),),
        destroyed_by="ibv_free_dm",
        makes=True,
    ),
    tables={"not_supported": _DM_UNSUPPORTED},
)

ibv_free_dm = Verb(
    name="ibv_free_dm",
    man="ibv_alloc_dm(3)",
    prototype="int ibv_free_dm(struct ibv_dm *dm);",
    returns=RETURNS_ERRNO,
    summary="free device memory; 0 or an errno (it may fail while an MR uses it)",
    params=(Param("dm", "struct ibv_dm *", default=Need("dm")),),
    errors=(Error("EBUSY", "an MR still uses the device memory", covered_by=("busy-with-mr",)),),
    claims=(
        Claim(
            "frees-unused",
            "succeeds",
            "freeing device memory nothing uses returns 0",
            "RETURN VALUE",
            variant="fresh-dm",
            needs=(_DM,),
            expect=(Expect("ret", "==", 0),),
        ),
        Claim(
            "busy-with-mr",
            "refused",
            "freeing device memory an MR still uses fails with EBUSY, and the memory stays usable",
            "NOTES",
            needs=(_DM,),
            errnos=("EBUSY",),
            steps=(Step("ibv_reg_dm_mr"),),
            params={"then": (Step("ibv_memcpy_to_dm"),)},
        ),
    ),
    contract=Contract(requires=(Resource("dm", role="dm"),), destroys=(Resource("dm", role="dm"),)),
    tables={"not_supported": _DM_UNSUPPORTED},
    undefined=("freeing twice", "copying to or from freed device memory"),
)

# Both copies between host and device memory are bounded by the device memory alike (ibv_alloc_dm(3)).
_DM_COPY_CLAIMS = (
    Claim(
        "copies-inside",
        "succeeds",
        "a copy inside the device memory returns 0",
        "DESCRIPTION, RETURN VALUE",
        over={("where", "dm_offset", "length"): (("start", 0, 64), ("whole", 0, _DM_LENGTH), ("end", 192, 64))},
        variant="{where}",
        needs=(_DM,),
        call={"dm_offset": Var("dm_offset"), "length": Var("length")},
    ),
    Claim(
        "past-the-end",
        "refused",
        "a copy running past the end of the device memory fails",
        "DESCRIPTION",
        over={("where", "dm_offset", "length"): (("offset-252-length-8", 252, 8), ("length-260", 0, _DM_LENGTH + 4))},
        variant="{where}",
        needs=(_DM,),
        call={"dm_offset": Var("dm_offset"), "length": Var("length")},
    ),
)

ibv_memcpy_to_dm = Verb(
    name="ibv_memcpy_to_dm",
    man="ibv_alloc_dm(3)",
    prototype="int ibv_memcpy_to_dm(struct ibv_dm *dm, uint64_t dm_offset, const void *host_addr, size_t length);",
    returns=RETURNS_ERRNO,
    summary="copy host memory into device memory; 0 or the failure reason",
    params=(
        Param("dm", "struct ibv_dm *", default=Need("dm")),
        Param("dm_offset", "uint64_t", default=0),
        Param("host_addr", "const void *", default=Buffer(_DM_LENGTH)),
        Param("length", "size_t", default=64),
    ),
    claims=_DM_COPY_CLAIMS,
    contract=Contract(requires=(Resource("dm", role="dm"),)),
)

ibv_memcpy_from_dm = Verb(
    name="ibv_memcpy_from_dm",
    man="ibv_alloc_dm(3)",
    prototype="int ibv_memcpy_from_dm(void *host_addr, struct ibv_dm *dm, uint64_t dm_offset, size_t length);",
    returns=RETURNS_ERRNO,
    summary="copy device memory into host memory; 0 or the failure reason",
    params=(
        Param("host_addr", "void *", default=Buffer(_DM_LENGTH)),
        Param("dm", "struct ibv_dm *", default=Need("dm")),
        Param("dm_offset", "uint64_t", default=0),
        Param("length", "size_t", default=64),
    ),
    claims=(
        *_DM_COPY_CLAIMS,
        Claim(
            "round-trip",
            "untestable",
            "bytes copied to the device memory read back unchanged, also when the device wrote them through an MR",
            "DESCRIPTION",
            untestable="the catalogue has no value for a "
            "buffer with a pattern nor an expectation over buffer contents; device writes are data path",
        ),
    ),
    contract=Contract(requires=(Resource("dm", role="dm"),)),
)

ibv_reg_dm_mr = Verb(
    name="ibv_reg_dm_mr",
    man="ibv_alloc_dm(3)",
    prototype="struct ibv_mr *ibv_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset, size_t length, "
    "unsigned int access);",
    returns=RETURNS_POINTER,
    summary="register device memory as a zero-based MR; NULL on failure",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param("dm", "struct ibv_dm *", default=Need("dm")),
        Param("dm_offset", "uint64_t", default=0),
        Param("length", "size_t", default=_DM_LENGTH),
        Param(
            "access", "unsigned int", default="IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE", flags="ibv_access_flags"
        ),
    ),
    claims=(
        Claim(
            "registers",
            "succeeds",
            "device memory registers as a zero-based MR on the PD",
            "DESCRIPTION",
            variant="ZERO_BASED+LOCAL_WRITE",
            needs=(_DM,),
            expect=(Expect("ret.pd", "==", Need("pd")), Expect("ret.length", "==", Arg("length"))),
        ),
        Claim(
            "zero-based-required",
            "refused",
            "without IBV_ACCESS_ZERO_BASED the registration is refused",
            "DESCRIPTION",
            variant="LOCAL_WRITE-only",
            needs=(_DM,),
            call={"access": "IBV_ACCESS_LOCAL_WRITE"},
            layer="kernel",
        ),
        Claim(
            "inside-the-memory",
            "refused",
            "the registered range must lie inside the device memory",
            "DESCRIPTION",
            over={
                ("where", "dm_offset", "length"): (("offset-128-length-256", 128, _DM_LENGTH), ("offset-512", 512, 16))
            },
            variant="{where}",
            needs=(_DM,),
            call={"dm_offset": Var("dm_offset"), "length": Var("length")},
            layer="kernel",
        ),
        Claim(
            "offsets-from-start",
            "untestable",
            "SGEs on the MR address bytes by their offset from its start",
            "DESCRIPTION",
            untestable="needs posted work requests: data path",
        ),
    ),
    contract=Contract(
        requires=(Resource("pd", role="pd"), Resource("dm", role="dm")),
        produces=(Resource("mr"),),
        destroyed_by="ibv_dereg_mr",
    ),
    tables={"not_supported": _DM_UNSUPPORTED},
)


# --- 3. CQ and completion channels --------------------------------------------------------------------------
# Completion queues, their notification and completion channels.
ibv_create_cq = Verb(
    name="ibv_create_cq",
    man="ibv_create_cq(3)",
    prototype="struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context, "
    "struct ibv_comp_channel *channel, int comp_vector);",
    returns=RETURNS_POINTER,
    summary="create a CQ with at least cqe entries; NULL on failure",
    params=(
        CONTEXT,
        Param("cqe", "int", default=16),
        Param("cq_context", "void *", nullable=True),
        Param("channel", "struct ibv_comp_channel *", nullable=True),
        Param("comp_vector", "int", default=0),
    ),
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after each of its documented refusals, the same request made right is served: the object is "
            "created, used and destroyed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS, Source("man", "ibv_query_device(3)", "DESCRIPTION")),
            over={
                ("what", "cqe", "comp_vector"): (
                    ("cqe-above-max_cqe", Dev("attr.max_cqe", plus=1), 0),
                    ("comp_vector-past-last", 16, Dev("context.num_comp_vectors")),
                )
            },
            variant="after-{what}",
            call={"cqe": Var("cqe"), "comp_vector": Var("comp_vector")},
        ),
        Claim(
            "cqe-at-least-requested",
            "succeeds",
            "the CQ's cqe is at least the number of entries asked for",
            "DESCRIPTION, NOTES",
            over={"cqe": (1, 3, 100, 1000)},
            variant="cqe-{cqe}",
            call={"cqe": Var("cqe")},
            expect=(Expect("ret.cqe", ">=", Arg("cqe")),),
        ),
        Claim(
            "records-context-and-channel",
            "succeeds",
            "the CQ keeps the context, the user context pointer and the completion channel it was created with",
            "DESCRIPTION",
            variant="with-a-channel",
            call={"cq_context": 0x1234, "channel": Need("comp_channel")},
            expect=(
                Expect("ret.context", "==", Need("context")),
                Expect("ret.cq_context", "==", 0x1234),
                Expect("ret.channel", "==", Need("comp_channel")),
            ),
        ),
        Claim(
            "channel-optional",
            "succeeds",
            "the channel is optional: without one the CQ has none",
            "DESCRIPTION",
            variant="channel-NULL",
            expect=(Expect("ret.channel", "zero"),),
        ),
        Claim(
            "comp-vector-range",
            "index-bounds",
            "comp_vector runs from 0 to num_comp_vectors-1: both ends are "
            "accepted, -1 and num_comp_vectors are refused",
            "DESCRIPTION",
            params={"length": "context.num_comp_vectors", "base": 0, "index": "comp_vector"},
            layer="kernel",
        ),
        Claim(
            "shared-by-qps-and-channel",
            "shared-cq",
            "one CQ with a completion channel may serve the send and receive queues of several QPs: it takes "
            "each QP's completions, each naming its QP by qp_num, and its armed channel gets the event",
            "DESCRIPTION",
            also=(
                Source("man", "ibv_create_qp(3)", "DESCRIPTION"),
                Source("man", "ibv_poll_cq(3)", "DESCRIPTION"),
                Source("man", "ibv_req_notify_cq(3)", "DESCRIPTION"),
            ),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_UD, "IBV_WR_SEND"))},
            variant="{qp_type}-two-qps",
            params={"seed": 61},
        ),
        Claim(
            "channel-serves-two-cqs",
            "shared-channel",
            "one completion channel may serve several CQs: with the sender's and the receiver's CQ on one "
            "channel and both armed, a message gives one event for each, and each event names its own CQ",
            "DESCRIPTION",
            also=(
                Source("man", "ibv_create_comp_channel(3)", "NOTES"),
                Source("man", "ibv_get_cq_event(3)", "DESCRIPTION"),
                Source("man", "ibv_req_notify_cq(3)", "DESCRIPTION"),
            ),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_UD, "IBV_WR_SEND"))},
            variant="{qp_type}-{opcode}",
            params={"seed": 62},
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),),
        produces=(Resource("cq"),),
        destroyed_by="ibv_destroy_cq",
        makes=True,
    ),
    undefined=(
        "cqe below 1 (the page asks for at least cqe entries and says nothing of 0 or less)",
        "a channel of another context",
    ),
)

ibv_create_cq_ex = Verb(
    name="ibv_create_cq_ex",
    man="ibv_create_cq_ex(3)",
    prototype="struct ibv_cq_ex *ibv_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *cq_attr);",
    returns=RETURNS_POINTER,
    summary="create a CQ with extended attributes (which work completion fields it reports)",
    params=(
        CONTEXT,
        Param(
            "cq_attr",
            "struct ibv_cq_init_attr_ex *",
            default={"cqe": 16, "wc_flags": "IBV_WC_EX_WITH_BYTE_LEN", "comp_mask": 0},
            flags="ibv_create_cq_wc_flags",
            doc="wc_flags from ibv_create_cq_wc_flags; comp_mask ibv_cq_init_attr_mask; flags ibv_create_cq_attr_flags",
        ),
    ),
    errors=(
        Error(
            "ENOENT",
            "polling: no (more) completions; the CQ stays valid",
            untestable="ibv_start_poll's claim empty-is-enoent checks it",
        ),
    ),
    claims=(
        Claim(
            "creates",
            "succeeds",
            "an extended CQ is created for the context with at least cqe entries",
            "DESCRIPTION",
            over={"wc_flags": ("IBV_WC_EX_WITH_BYTE_LEN", "IBV_WC_STANDARD_FLAGS")},
            variant="{wc_flags}",
            call={"cq_attr.wc_flags": Var("wc_flags")},
            expect=(Expect("ret.cqe", ">=", 16), Expect("ret.context", "==", Need("context"))),
        ),
        Claim(
            "unknown-wc-flags",
            "refused",
            "wc_flags bits outside the defined set are refused, before the provider (libibverbs answers EOPNOTSUPP)",
            "DESCRIPTION",
            over={"bit": (12, 13, 40, 63)},
            variant="wc_flags-bit{bit}",
            errnos=("EOPNOTSUPP",),
            layer="libibverbs",
            call={"cq_attr.wc_flags": Flags(("IBV_WC_EX_WITH_BYTE_LEN",), bits=(Var("bit"),))},
        ),
        Claim(
            "unknown-comp-mask",
            "refused",
            "comp_mask bits outside enum ibv_cq_init_attr_mask are refused (a "
            "plain extended CQ is made first, so a refusal is not for lack of extended CQs)",
            "DESCRIPTION",
            over={"bit": (2, 3, 31)},
            variant="comp_mask-bit{bit}",
            steps=(Step("ibv_create_cq_ex"),),
            errnos=("EOPNOTSUPP", "EINVAL"),
            call={"cq_attr.comp_mask": Flags(bits=(Var("bit"),))},
        ),
        Claim(
            "unknown-create-flags",
            "refused",
            "flags outside enum ibv_create_cq_attr_flags are refused",
            "DESCRIPTION",
            over={"bit": (2, 3, 31)},
            variant="flags-bit{bit}",
            steps=(Step("ibv_create_cq_ex"),),
            errnos=("EOPNOTSUPP", "EINVAL"),
            call={"cq_attr.comp_mask": "IBV_CQ_INIT_ATTR_MASK_FLAGS", "cq_attr.flags": Flags(bits=(Var("bit"),))},
        ),
        Claim(
            "single-threaded",
            "succeeds",
            "IBV_CREATE_CQ_ATTR_SINGLE_THREADED is a promise of the application: the CQ is created",
            "DESCRIPTION",
            variant="SINGLE_THREADED",
            call={
                "cq_attr.comp_mask": "IBV_CQ_INIT_ATTR_MASK_FLAGS",
                "cq_attr.flags": "IBV_CREATE_CQ_ATTR_SINGLE_THREADED",
            },
        ),
        Claim(
            "on-a-parent-domain",
            "succeeds",
            "with IBV_CQ_INIT_ATTR_MASK_PD the CQ is made on a parent domain",
            "DESCRIPTION",
            variant="parent_domain",
            call={"cq_attr.comp_mask": "IBV_CQ_INIT_ATTR_MASK_PD", "cq_attr.parent_domain": Need("parent_domain")},
        ),
        Claim(
            "polling",
            "untestable",
            "completions are read with ibv_start_poll, ibv_next_poll and ibv_end_poll "
            "(ENOENT when there are none) and the fields wc_flags asked for",
            "DESCRIPTION",
            untestable="checked by the claims of ibv_start_poll (this page's iterator), which poll real completions",
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),),
        produces=(Resource("cq_ex"),),
        destroyed_by="ibv_destroy_cq",
        makes=True,
    ),
    tables={
        "not_supported": {"EOPNOTSUPP": "the provider has no create_cq_ex (libibverbs' default answers EOPNOTSUPP)"}
    },
    undefined=(
        "calling ibv_end_poll after ibv_start_poll failed",
        "reading a field wc_flags did not ask for",
        "reading completion fields after ibv_end_poll",
    ),
)

_CQ_STEP = Step("ibv_create_cq", {"cqe": 16}, name="made")  # a CQ whose struct later expectations read

ibv_resize_cq = Verb(
    name="ibv_resize_cq",
    man="ibv_resize_cq(3)",
    prototype="int ibv_resize_cq(struct ibv_cq *cq, int cqe);",
    returns=RETURNS_ERRNO,
    summary="resize a CQ to at least cqe entries (cq->cqe then holds the size); 0 or an errno",
    params=(Param("cq", "struct ibv_cq *", default=Ref("made")), Param("cqe", "int", default=64)),
    claims=(
        Claim(
            "grows",
            "succeeds",
            "growing a CQ succeeds and cq->cqe then reports at least the new size",
            "DESCRIPTION, NOTES",
            over={"cqe": (17, 256, 1000)},
            variant="16-to-{cqe}",
            steps=(_CQ_STEP,),
            call={"cqe": Var("cqe")},
            expect=(Expect("made.ret.cqe", ">=", Arg("cqe")),),
        ),
        Claim(
            "shrinks-at-least",
            "succeeds",
            "asking for fewer entries (none unpolled) succeeds and leaves at least that many: the CQ may keep its size",
            "DESCRIPTION",
            variant="256-to-32",
            steps=(Step("ibv_create_cq", {"cqe": 256}, name="made"),),
            call={"cqe": 32},
            expect=(Expect("made.ret.cqe", ">=", 32),),
        ),
        Claim(
            "beyond-max-cqe",
            "refused",
            "a size above the device's max_cqe is refused, and the CQ still resizes to a valid size afterwards",
            "DESCRIPTION",
            variant="max_cqe+1",
            steps=(_CQ_STEP,),
            call={"cqe": Dev("attr.max_cqe", plus=1)},
            params={"then": (Step("ibv_resize_cq", {"cq": Ref("made"), "cqe": 32}),)},
            also=(Source("ibta", "IBTA Vol. 1 r1.7, the Resize CQ verb (the size is bounded by the HCA's maximum)"),),
        ),
        Claim(
            "negative-size",
            "refused",
            "a negative size is refused",
            "DESCRIPTION",
            variant="cqe--1",
            steps=(_CQ_STEP,),
            call={"cqe": -1},
        ),
        Claim(
            "not-below-unpolled",
            "untestable",
            "the new size may not be below the number of completions waiting, and completions waiting survive a resize",
            "DESCRIPTION",
            untestable="needs completions in the CQ: data path",
        ),
    ),
    contract=Contract(requires=(Resource("cq", role="cq"),)),
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider cannot resize CQs (libibverbs' default resize_cq answers EOPNOTSUPP)"
        }
    },
    undefined=("resizing while another thread polls the CQ",),
)

ibv_modify_cq = Verb(
    name="ibv_modify_cq",
    man="ibv_modify_cq(3)",
    prototype="int ibv_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);",
    returns=RETURNS_ERRNO,
    summary="modify a CQ (its event moderation) as attr->attr_mask says; 0 or an errno",
    params=(
        Param("cq", "struct ibv_cq *", default=Need("cq")),
        Param(
            "attr",
            "struct ibv_modify_cq_attr *",
            flags="ibv_cq_attr_mask",
            default={"attr_mask": "IBV_CQ_ATTR_MODERATE", "moderate.cq_count": 1, "moderate.cq_period": 1},
            doc="attr_mask draws from enum ibv_cq_attr_mask",
        ),
    ),
    claims=(
        Claim(
            "moderates",
            "succeeds",
            "setting the moderation (completions per event, period) within the device's cq_mod_caps succeeds",
            "DESCRIPTION",
            variant="count-1-period-1",
            needs=(Cap("attr_ex.cq_mod_caps.max_cq_count"), Cap("attr_ex.cq_mod_caps.max_cq_period")),
            also=(Source("man", "ibv_query_device_ex(3)", "DESCRIPTION"),),
        ),
        Claim(
            "unknown-mask-bits",
            "refused",
            "attr_mask bits outside enum ibv_cq_attr_mask are refused",
            "DESCRIPTION",
            over={"bit": (1, 2, 31)},
            variant="attr_mask-bit{bit}",
            call={"attr.attr_mask": Flags(bits=(Var("bit"),))},
        ),
        Claim(
            "moderation-effect",
            "untestable",
            "with moderation an event waits for cq_count completions or cq_period microseconds",
            "DESCRIPTION",
            untestable="needs completion events and timing: data path",
        ),
    ),
    contract=Contract(requires=(Resource("cq", role="cq"),)),
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider cannot modify CQs (libibverbs' default modify_cq answers EOPNOTSUPP)"
        }
    },
)

ibv_destroy_cq = Verb(
    name="ibv_destroy_cq",
    man="ibv_create_cq(3)",
    prototype="int ibv_destroy_cq(struct ibv_cq *cq);",
    returns=RETURNS_ERRNO,
    summary="destroy a CQ; 0 or an errno (it fails while a QP uses the CQ)",
    params=(Param("cq", "struct ibv_cq *", default=Need("cq")),),
    errors=(Error("EBUSY", "a QP still uses the CQ", covered_by=("busy-with-qp",)),),
    claims=(
        Claim(
            "destroys-unused",
            "succeeds",
            "destroying a CQ nothing uses returns 0",
            "RETURN VALUE",
            variant="fresh-cq",
            expect=(Expect("ret", "==", 0),),
        ),
        Claim(
            "busy-with-qp",
            "refused",
            "destroying a CQ a QP still uses fails with EBUSY, and the CQ stays usable (another QP is created on it)",
            "NOTES",
            errnos=("EBUSY",),
            layer="kernel",
            steps=(Step("ibv_create_qp"),),
            params={"then": (Step("ibv_create_qp"),)},
            also=(Source("kernel", "drivers/infiniband/core/uverbs_std_types_cq.c: a CQ in use is busy"),),
        ),
        Claim(
            "busy-then-still-usable",
            "refused",
            "after a destroy refused with EBUSY (a QP still uses the CQ), the CQ is fully usable: it polls "
            "empty, is armed, and once its QP is destroyed it destroys with 0",
            "NOTES",
            errnos=("EBUSY",),
            layer="kernel",
            steps=(Step("ibv_create_qp", name="user"),),
            params={
                "then": (
                    Step("ibv_poll_cq", {"cq": Need("cq")}),
                    Step("ibv_req_notify_cq", {"cq": Need("cq"), "solicited_only": 0}),
                    Step("ibv_destroy_qp", {"qp": Ref("user")}),
                    Step("ibv_destroy_cq", {"cq": Need("cq")}),
                )
            },
            also=(Source("kernel", "drivers/infiniband/core/uverbs_std_types_cq.c: a CQ in use is busy"),),
        ),
        Claim(
            "extended-cq",
            "succeeds",
            "a CQ made by ibv_create_cq_ex is destroyed with ibv_destroy_cq, which returns 0",
            "RETURN VALUE",
            variant="from-ibv_create_cq_ex",
            call={"cq": Need("cq_ex")},
            expect=(Expect("ret", "==", 0),),
            also=(Source("man", "ibv_create_cq_ex(3)", "DESCRIPTION"),),
        ),
    ),
    contract=Contract(destroys=(Resource("cq", role="cq"),)),
    undefined=(
        "destroying a CQ twice",
        "polling or arming a destroyed CQ",
        "destroying a CQ whose completion or async events were obtained but not acknowledged, from the only "
        "thread (the destroy waits for the acknowledgements forever)",
    ),
)

ibv_create_comp_channel = Verb(
    name="ibv_create_comp_channel",
    man="ibv_create_comp_channel(3)",
    prototype="struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context);",
    returns=RETURNS_POINTER,
    summary="create a completion event channel (a file descriptor events arrive on); NULL on failure",
    params=(CONTEXT,),
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after a documented refusal, the same request made right is served: the channel is created, used and "
            "destroyed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS,),
            variant="unprovoked",
            params={
                "unprovoked": "the page names no cause (RETURN VALUE: NULL if the request fails) and the verb takes "
                "nothing but the context; what fails it is the process's file-descriptor limit (RLIMIT_NOFILE: the "
                "channel is a file) or the kernel out of memory, and lowering a limit of the process that runs the "
                "other checks would change them too"
            },
        ),
        Claim(
            "creates",
            "succeeds",
            "a channel is created for the context, with a file descriptor",
            "DESCRIPTION, NOTES",
            variant="context-under-test",
            expect=(Expect("ret.context", "==", Need("context")), Expect("ret.fd", ">=", 0)),
        ),
        Claim(
            "shared-by-cqs",
            "succeeds",
            "several CQs can use one channel",
            "NOTES",
            variant="two-cqs",
            params={
                "then": (
                    Step("ibv_create_cq", {"channel": Ref("call")}),
                    Step("ibv_create_cq", {"channel": Ref("call")}),
                )
            },
        ),
        Claim(
            "delivers-events",
            "untestable",
            "a completion event of a CQ on the channel makes its descriptor readable",
            "NOTES",
            untestable="needs completion events: data path",
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),),
        produces=(Resource("comp_channel"),),
        destroyed_by="ibv_destroy_comp_channel",
        makes=True,
    ),
)

ibv_destroy_comp_channel = Verb(
    name="ibv_destroy_comp_channel",
    man="ibv_create_comp_channel(3)",
    prototype="int ibv_destroy_comp_channel(struct ibv_comp_channel *channel);",
    returns=RETURNS_ERRNO,
    summary="destroy a completion channel; 0 or an errno (EBUSY while a CQ uses it)",
    params=(Param("channel", "struct ibv_comp_channel *", default=Need("comp_channel")),),
    errors=(Error("EBUSY", "a CQ still uses the channel", covered_by=("busy-with-cq",)),),
    claims=(
        Claim(
            "destroys-unused",
            "succeeds",
            "destroying a channel no CQ uses returns 0",
            "RETURN VALUE",
            variant="fresh-channel",
            expect=(Expect("ret", "==", 0),),
        ),
        Claim(
            "busy-with-cq",
            "refused",
            "destroying a channel a CQ still uses fails with EBUSY, and the channel stays usable",
            "NOTES",
            errnos=("EBUSY",),
            layer="libibverbs",
            steps=(Step("ibv_create_cq", {"channel": Need("comp_channel")}),),
            params={"then": (Step("ibv_create_cq", {"channel": Need("comp_channel")}),)},
        ),
        Claim(
            "busy-then-still-usable",
            "refused",
            "after a destroy refused with EBUSY (a CQ still uses the channel), its CQ is armed on it, and once "
            "that CQ is destroyed the channel destroys with 0",
            "NOTES",
            errnos=("EBUSY",),
            layer="libibverbs",
            steps=(Step("ibv_create_cq", {"channel": Need("comp_channel")}, name="user"),),
            params={
                "then": (
                    Step("ibv_req_notify_cq", {"cq": Ref("user"), "solicited_only": 0}),
                    Step("ibv_destroy_cq", {"cq": Ref("user")}),
                    Step("ibv_destroy_comp_channel", {"channel": Need("comp_channel")}),
                )
            },
        ),
        Claim(
            "free-after-its-cqs",
            "succeeds",
            "once its CQ is destroyed the channel destroys with 0",
            "NOTES",
            variant="after-destroying-its-cq",
            layer="libibverbs",
            steps=(
                Step("ibv_create_cq", {"channel": Need("comp_channel")}, name="user"),
                Step("ibv_destroy_cq", {"cq": Ref("user")}),
            ),
            expect=(Expect("ret", "==", 0),),
        ),
    ),
    contract=Contract(
        requires=(Resource("comp_channel", role="channel"),), destroys=(Resource("comp_channel", role="channel"),)
    ),
    undefined=("destroying twice", "using the channel's descriptor after the destroy"),
)

ibv_req_notify_cq = Verb(
    name="ibv_req_notify_cq",
    man="ibv_req_notify_cq(3)",
    prototype="int ibv_req_notify_cq(struct ibv_cq *cq, int solicited_only);",
    returns=RETURNS_ERRNO,
    summary="arm a CQ: its next completion (solicited or failed ones only, if asked) raises one event on its channel",
    params=(
        Param("cq", "struct ibv_cq *", default=Need("cq", spec={"channel": Need("comp_channel")})),
        Param("solicited_only", "int", default=0),
    ),
    claims=(
        Claim(
            "arms",
            "succeeds",
            "arming a CQ that has a completion channel returns 0, for any completion or for solicited ones only",
            "RETURN VALUE",
            over={"solicited_only": (0, 1)},
            variant="solicited_only-{solicited_only}",
            call={"solicited_only": Var("solicited_only")},
            expect=(Expect("ret", "==", 0),),
        ),
        Claim(
            "next-completion-event",
            "notify",
            "armed for any completion, the CQ raises one event on its channel when the next completion arrives",
            "DESCRIPTION",
            over={"qp_type": (_RC,)},
            variant="{qp_type}",
            params={"solicited_only": 0},
        ),
        Claim(
            "solicited-event",
            "notify",
            "armed for solicited completions only, a message sent with IBV_SEND_SOLICITED raises an event",
            "DESCRIPTION",
            over={"qp_type": (_RC,)},
            variant="{qp_type}",
            params={"solicited_only": 1, "solicited": True},
        ),
        Claim(
            "unsolicited-no-event",
            "notify",
            "armed for solicited completions only, a message sent without the solicited flag raises no event",
            "DESCRIPTION",
            over={"qp_type": (_RC,)},
            variant="{qp_type}",
            params={"solicited_only": 1, "solicited": False, "expect_event": False},
        ),
        Claim(
            "error-event",
            "notify",
            "armed for solicited completions only, an unsuccessful completion raises an event",
            "DESCRIPTION",
            over={"qp_type": (_RC,)},
            variant="{qp_type}",
            params={"solicited_only": 1, "solicited": False, "fault": "recv-too-small"},
        ),
    ),
    contract=Contract(requires=(Resource("cq", role="cq"), Resource("comp_channel", role="cq->channel"))),
    tables={"not_supported": {"EOPNOTSUPP": "the provider cannot arm CQs (libibverbs' default answers EOPNOTSUPP)"}},
    undefined=("arming a CQ that has no completion channel",),
)

ibv_get_cq_event = Verb(
    name="ibv_get_cq_event",
    man="ibv_get_cq_event(3)",
    prototype="int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context);",
    returns=RETURNS_COUNT,
    summary="wait for (block on) the next completion event of a channel; 0, or -1 with read(2)'s errno",
    params=(
        Param("channel", "struct ibv_comp_channel *", default=Need("comp_channel")),
        Param("cq", "struct ibv_cq **", "out"),
        Param("cq_context", "void **", "out"),
    ),
    claims=(
        Claim(
            "capacity-every-event-once",
            "capacity",
            "CQs sharing one channel, each armed and each given a completion, each add one event to it: "
            "ibv_get_cq_event returns one naming each CQ, none lost and none more, while none is acknowledged "
            "(the page asks only that every event be acknowledged, in any number a call); once acknowledged, "
            "each CQ holds its completion. What the pages promise is what is checked: they name no limit of "
            "events a channel holds",
            "DESCRIPTION",
            also=(Source("man", "ibv_req_notify_cq(3)", "DESCRIPTION"),),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_RDMA_WRITE"),)},
            variant="{qp_type}-4-cqs-unacknowledged",
            params={"queue": "channel", "size": 4},
        ),
    ),
    contract=Contract(requires=(Resource("comp_channel", role="channel"),)),
    undefined=("calling with a destroyed channel",),
)

ibv_ack_cq_events = Verb(
    name="ibv_ack_cq_events",
    man="ibv_get_cq_event(3)",
    prototype="void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);",
    returns=RETURNS_VOID,
    summary="acknowledge nevents completion events of a CQ (destroying the CQ waits for every one)",
    params=(Param("cq", "struct ibv_cq *", default=Need("cq")), Param("nevents", "unsigned int", default=1)),
    contract=Contract(requires=(Resource("cq", role="cq"),)),
    undefined=("acknowledging more events than were obtained", "acknowledging after the CQ was destroyed"),
)


# --- 4. SRQ -------------------------------------------------------------------------------------------------
# Shared receive queues, XRC domains and tag matching.
ibv_create_srq = Verb(
    name="ibv_create_srq",
    man="ibv_create_srq(3)",
    prototype="struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr);",
    returns=RETURNS_POINTER,
    summary="create a shared receive queue; its attr is rewritten with the actual sizes",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param("srq_init_attr", "struct ibv_srq_init_attr *", "inout", default={"attr": {"max_wr": 16, "max_sge": 1}}),
    ),
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after each of its documented refusals, the same request made right is served: the object is "
            "created, used and destroyed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS,),
        ),
        Claim(
            "sizes-at-least-requested",
            "succeeds",
            "the max_wr and max_sge written back into srq_init_attr are at least the request",
            "DESCRIPTION",
            needs=(Cap("attr.max_srq"),),
            over={("max_wr", "max_sge"): ((3, 1), (100, 2))},
            variant="max_wr-{max_wr}-max_sge-{max_sge}",
            call={"srq_init_attr.attr": {"max_wr": Var("max_wr"), "max_sge": Var("max_sge")}},
            expect=(
                Expect("srq_init_attr.attr.max_wr", ">=", Arg("srq_init_attr.attr.max_wr")),
                Expect("srq_init_attr.attr.max_sge", ">=", Arg("srq_init_attr.attr.max_sge")),
            ),
        ),
        Claim(
            "keeps-srq-context",
            "succeeds",
            "the new SRQ carries the srq_context it was created with",
            "DESCRIPTION",
            needs=(Cap("attr.max_srq"),),
            variant="srq_context-0x1234",
            layer="libibverbs",
            call={"srq_init_attr.srq_context": 0x1234},
            expect=(Expect("ret.srq_context", "==", 0x1234),),
        ),
        Claim(
            "srq-limit-not-a-creation-parameter",
            "succeeds",
            "srq_limit plays no part in creation: a nonzero value does not make the call fail",
            "DESCRIPTION",
            needs=(Cap("attr.max_srq"),),
            variant="srq_limit-4",
            call={"srq_init_attr.attr.srq_limit": 4},
        ),
        Claim(
            "sizes-above-limits-refused",
            "refused",
            "a size above the device's SRQ limits (max_srq_wr, max_srq_sge) is refused",
            "DESCRIPTION",
            needs=(Cap("attr.max_srq"),),
            over={("field", "limit"): (("max_wr", "max_srq_wr"), ("max_sge", "max_srq_sge"))},
            variant="{field}-above-{limit}",
            call={"srq_init_attr.attr.{field}": Dev("attr.{limit}", plus=1)},
            errnos=("EINVAL", "ENOMEM"),
            also=(Source("man", "ibv_query_device(3)", "DESCRIPTION"),),
        ),
        Claim(
            "refused-without-srq-support",
            "gated",
            "a device that reports max_srq 0 has no SRQs: creating one is refused",
            "DESCRIPTION",
            variant="max_srq-0",
            errnos=("EOPNOTSUPP", "ENOSYS"),
            params={"gate": Cap("attr.max_srq"), "only": "not-advertised"},
            also=(Source("man", "ibv_query_device(3)", "DESCRIPTION"),),
        ),
    ),
    errors=(
        Error(
            "EINVAL",
            "a requested size is above the device's SRQ limits (not on the page: the kernel driver's answer)",
            covered_by=("sizes-above-limits-refused",),
        ),
        Error("ENOMEM", "the SRQ cannot be allocated (not on the page)", covered_by=("sizes-above-limits-refused",)),
        Error(
            "EOPNOTSUPP",
            "the provider has no SRQs at all and libibverbs' default op answers (not on the page)",
            covered_by=("refused-without-srq-support",),
        ),
    ),
    contract=Contract(
        requires=(Resource("pd", role="pd"),), produces=(Resource("srq"),), destroyed_by="ibv_destroy_srq", makes=True
    ),
    undefined=("a NULL pd or srq_init_attr (libibverbs dereferences both)",),
)

# What advertises each feature (an unsupported verdict names the attribute).
_SRQS = Cap("attr.max_srq")

_XRC = Cap("attr.device_cap_flags&IBV_DEVICE_XRC")
_TAG_MATCHING = Cap("attr_ex.tm_caps.max_num_tags")

_XRC_SRQ = {
    "comp_mask": "IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ",
    "srq_type": "IBV_SRQT_XRC",
    "xrcd": Need("xrcd"),
    "cq": Need("cq"),
}

ibv_create_srq_ex = Verb(
    name="ibv_create_srq_ex",
    man="ibv_create_srq_ex(3)",
    prototype="struct ibv_srq *ibv_create_srq_ex(struct ibv_context *context, "
    "struct ibv_srq_init_attr_ex *srq_init_attr_ex);",
    returns=RETURNS_POINTER,
    summary="create a basic, XRC or tag-matching SRQ (comp_mask says which fields are valid); NULL on failure",
    params=(
        CONTEXT,
        Param(
            "srq_init_attr_ex",
            "struct ibv_srq_init_attr_ex *",
            "inout",
            default={
                "attr": {"max_wr": 16, "max_sge": 1},
                "comp_mask": "IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE",
                "srq_type": "IBV_SRQT_BASIC",
                "pd": Need("pd"),
            },
            flags="ibv_srq_init_attr_mask",
            doc="comp_mask draws from ibv_srq_init_attr_mask, srq_type from ibv_srq_type; attr is written back",
        ),
    ),
    errors=(
        Error(
            "EOPNOTSUPP",
            "a comp_mask bit outside the defined set, or a request beyond the basic path on a "
            "provider without the extended op (not on the page: libibverbs)",
            covered_by=("reserved-comp-mask-refused",),
        ),
        Error(
            "EINVAL",
            "the request lacks its PD, or an XRC request its XRC domain (not on the page: libibverbs' command layer)",
            covered_by=("missing-pd-refused", "xrc-needs-xrcd"),
        ),
        Error(
            "ENOMEM",
            "the SRQ cannot be allocated (not on the page)",
            untestable="cannot exhaust kernel or device memory safely on a shared lab VM",
        ),
    ),
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after each of its documented refusals, the same request made right is served: the object is "
            "created, used and destroyed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS,),
        ),
        Claim(
            "sizes-at-least-requested",
            "succeeds",
            "a basic SRQ is created and attr is written back with sizes at "
            "least the request (a PD-only or PD+TYPE(BASIC) request takes ibv_create_srq's path)",
            "DESCRIPTION",
            needs=(_SRQS,),
            over={
                ("mask", "comp_mask"): (
                    ("PD", "IBV_SRQ_INIT_ATTR_PD"),
                    ("PD+TYPE-basic", "IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE"),
                ),
                ("max_wr", "max_sge"): ((3, 1), (100, 2)),
            },
            variant="{mask}-max_wr-{max_wr}-max_sge-{max_sge}",
            call={
                "srq_init_attr_ex.comp_mask": Var("comp_mask"),
                "srq_init_attr_ex.attr": {"max_wr": Var("max_wr"), "max_sge": Var("max_sge")},
            },
            expect=(
                Expect("srq_init_attr_ex.attr.max_wr", ">=", Arg("srq_init_attr_ex.attr.max_wr")),
                Expect("srq_init_attr_ex.attr.max_sge", ">=", Arg("srq_init_attr_ex.attr.max_sge")),
            ),
        ),
        Claim(
            "reserved-comp-mask-refused",
            "refused",
            "comp_mask bits outside ibv_srq_init_attr_mask make the call fail",
            "DESCRIPTION",
            needs=(_SRQS,),
            over={"bit": (5, 6, 16, 31)},
            variant="comp_mask-bit{bit}",
            call={
                "srq_init_attr_ex.comp_mask": Flags(
                    ("IBV_SRQ_INIT_ATTR_PD", "IBV_SRQ_INIT_ATTR_TYPE"), bits=(Var("bit"),)
                )
            },
            errnos=("EOPNOTSUPP", "EINVAL"),
            layer="libibverbs",
        ),
        Claim(
            "missing-pd-refused",
            "refused",
            "a request that does not mark pd valid is refused: an SRQ belongs to a PD",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="comp_mask-TYPE-only",
            errnos=("EINVAL",),
            call={"srq_init_attr_ex.comp_mask": "IBV_SRQ_INIT_ATTR_TYPE"},
            layer="libibverbs",
        ),
        Claim(
            "xrc-needs-xrcd",
            "refused",
            "an XRC SRQ request that does not give its XRC domain is refused",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="XRC-without-XRCD",
            errnos=("EINVAL",),
            layer="libibverbs",
            call={
                "srq_init_attr_ex": {
                    "comp_mask": "IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_CQ",
                    "srq_type": "IBV_SRQT_XRC",
                    "cq": Need("cq"),
                }
            },
        ),
        Claim(
            "xrc-srq",
            "gated",
            "an XRC SRQ is created in an XRC domain with a CQ where the device advertises XRC, "
            "and it has an SRQ number",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="XRC-in-private-xrcd",
            call={"srq_init_attr_ex": _XRC_SRQ},
            params={
                "gate": _XRC,
                "only": "advertised",
                "advertised": {"then": (Step("ibv_get_srq_num", {"srq": Ref("call")}),)},
            },
        ),
        Claim(
            "tag-matching-srq",
            "gated",
            "a tag-matching SRQ is created where the device advertises tag matching, and refused where it does not",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="TM-16-tags",
            call={
                "srq_init_attr_ex": {
                    "comp_mask": "IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_CQ | "
                    "IBV_SRQ_INIT_ATTR_TM",
                    "srq_type": "IBV_SRQT_TM",
                    "cq": Need("cq"),
                    "tm_cap": {"max_num_tags": 16, "max_ops": 16},
                }
            },
            errnos=("EOPNOTSUPP", "EINVAL"),
            params={"gate": _TAG_MATCHING},
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"), Resource("pd", role="srq_init_attr_ex.pd")),
        produces=(Resource("srq"),),
        destroyed_by="ibv_destroy_srq",
    ),
    # verbs.h routes all but basic requests to the provider's create_srq_ex; libibverbs' default answers EOPNOTSUPP.
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider does not implement ibv_create_srq_ex's extended path (libibverbs' default op)"
        }
    },
    undefined=(
        "an srq_type outside enum ibv_srq_type",
        "a comp_mask bit set for xrcd or cq with a NULL pointer behind it (libibverbs dereferences it)",
    ),
)

_SRQ_RESIZE = Cap("attr.device_cap_flags&IBV_DEVICE_SRQ_RESIZE")

ibv_modify_srq = Verb(
    name="ibv_modify_srq",
    man="ibv_modify_srq(3)",
    prototype="int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask);",
    returns=RETURNS_ERRNO,
    summary="resize an SRQ or arm its limit (srq_attr_mask says which); nothing changes if any attribute is invalid",
    params=(
        Param("srq", "struct ibv_srq *", default=Need("srq")),
        Param("srq_attr", "struct ibv_srq_attr *", default={"srq_limit": 4}, doc="max_sge is ignored"),
        Param(
            "srq_attr_mask",
            "int",
            default="IBV_SRQ_LIMIT",
            flags="ibv_srq_attr_mask",
            doc="0 or an OR of IBV_SRQ_MAX_WR, IBV_SRQ_LIMIT",
        ),
    ),
    errors=(
        Error(
            "EINVAL",
            "an attribute is invalid: a limit above the SRQ's size, a size above the device's limit "
            "(not on the page: the driver's answer)",
            covered_by=("limit-above-size-refused", "max-wr-above-limit-refused"),
        ),
        Error("EOPNOTSUPP", "resizing is not supported by the device (not on the page)", covered_by=("resize-gated",)),
    ),
    claims=(
        Claim(
            "arm-limit",
            "succeeds",
            "IBV_SRQ_LIMIT with a limit below the SRQ's size is accepted",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="srq_limit-4",
        ),
        Claim(
            "zero-mask-accepted",
            "succeeds",
            "a mask of 0 is a valid request (it asks for no change), whatever the attributes hold",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="mask-0-attrs-9999",
            call={"srq_attr": {"max_wr": 9999, "srq_limit": 9999}, "srq_attr_mask": 0},
        ),
        Claim(
            "max-sge-ignored",
            "succeeds",
            "srq_attr.max_sge plays no part in a modify: any value is accepted",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="max_sge-0xffffffff-with-limit",
            call={"srq_attr": {"max_sge": 0xFFFFFFFF, "srq_limit": 2}},
        ),
        Claim(
            "limit-above-size-refused",
            "refused",
            "a limit larger than the SRQ can hold is an invalid attribute",
            "NOTES",
            needs=(_SRQS,),
            variant="srq_limit-max_srq_wr+1",
            errnos=("EINVAL",),
            call={"srq_attr": {"srq_limit": Dev("attr.max_srq_wr", plus=1)}},
            also=(
                Source(
                    "ibta",
                    "IBTA Vol. 1 §11.2.3 (Shared Receive Queue verbs, Modify SRQ: the limit may "
                    "not exceed the SRQ's size)",
                ),
            ),
        ),
        Claim(
            "max-wr-above-limit-refused",
            "refused",
            "resizing beyond the device's max_srq_wr is invalid; with a "
            "valid limit in the same call, nothing is applied (the read-back is ibv_query_srq's claim)",
            "NOTES",
            needs=(_SRQS,),
            variant="max_wr-max_srq_wr+1-with-limit-2",
            errnos=("EINVAL", "EOPNOTSUPP"),
            call={
                "srq_attr": {"max_wr": Dev("attr.max_srq_wr", plus=1), "srq_limit": 2},
                "srq_attr_mask": "IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT",
            },
        ),
        Claim(
            "resize-gated",
            "gated",
            "IBV_SRQ_MAX_WR grows the SRQ only where the device advertises "
            "IBV_DEVICE_SRQ_RESIZE; elsewhere it is refused",
            "NOTES",
            needs=(_SRQS,),
            variant="max_wr-200",
            call={"srq_attr": {"max_wr": 200}, "srq_attr_mask": "IBV_SRQ_MAX_WR"},
            errnos=("EINVAL", "EOPNOTSUPP"),
            params={
                "gate": _SRQ_RESIZE,
                "advertised": {
                    "then": (Step("ibv_query_srq", {"srq": Need("srq")}, name="q"),),
                    "expect": (Expect("q.srq_attr.max_wr", ">=", 200),),
                },
            },
        ),
        Claim(
            "limit-event-below",
            "srq-limit",
            "an armed limit raises IBV_EVENT_SRQ_LIMIT_REACHED on the context's async events, naming the SRQ, "
            "once fewer receives than the limit remain in it",
            "NOTES",
            needs=(_SRQS,),
            also=(Source("man", "ibv_get_async_event(3)", "DESCRIPTION"),),
            over={"qp_type": (_RC,)},
            variant="{qp_type}-posted-4-limit-3-down-to-2",
            params={"srq": True, "opcode": "IBV_WR_SEND", "posted": 4, "limit": 3, "until": "below"},
        ),
        Claim(
            "no-limit-event-at-limit",
            "srq-limit",
            "the limit event waits for the SRQ to drop below the limit: none while it still holds as many "
            "receives as the limit",
            "NOTES",
            needs=(_SRQS,),
            over={"qp_type": (_RC,)},
            variant="{qp_type}-posted-4-limit-3-down-to-3",
            params={"srq": True, "opcode": "IBV_WR_SEND", "posted": 4, "limit": 3, "until": "at"},
        ),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),)),
    undefined=(
        "mask bits other than IBV_SRQ_MAX_WR and IBV_SRQ_LIMIT (the page does not say)",
        "shrinking max_wr below the number of receives posted",
    ),
)

_MADE_SRQ = Step("ibv_create_srq", name="made")  # an SRQ whose written-back sizes later steps compare with

# What the SRQ reports before a modify. Where the query is not implemented the claim's own query says so
# (unsupported), so this one may fail.
_SRQ_BEFORE = Step("ibv_query_srq", {"srq": Ref("made")}, name="before", expect="any")

ibv_query_srq = Verb(
    name="ibv_query_srq",
    man="ibv_query_srq(3)",
    prototype="int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);",
    returns=RETURNS_ERRNO,
    summary="read an SRQ's size, SGE limit and armed limit (0: not armed)",
    params=(Param("srq", "struct ibv_srq *", default=Need("srq")), Param("srq_attr", "struct ibv_srq_attr *", "out")),
    errors=(
        Error(
            "EOPNOTSUPP",
            "the provider does not implement the query (libibverbs' default op answers; not on the page)",
            untestable="the not-implemented answer: where it comes, every claim of this verb is "
            "reported unsupported (tables['not_supported'])",
        ),
    ),
    claims=(
        Claim(
            "agrees-with-creation",
            "succeeds",
            "the sizes reported are the SRQ's real ones: those ibv_create_srq wrote back, at least the request",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="max_wr-16-max_sge-1",
            steps=(_MADE_SRQ,),
            call={"srq": Ref("made")},
            expect=(
                Expect("srq_attr.max_wr", ">=", 16),
                Expect("srq_attr.max_sge", ">=", 1),
                Expect(
                    "srq_attr.max_wr",
                    "==",
                    Ref("made", "srq_init_attr.attr.max_wr"),
                    ref="ibv_create_srq(3) DESCRIPTION",
                ),
                Expect(
                    "srq_attr.max_sge",
                    "==",
                    Ref("made", "srq_init_attr.attr.max_sge"),
                    ref="ibv_create_srq(3) DESCRIPTION",
                ),
            ),
        ),
        Claim(
            "fresh-srq-not-armed",
            "succeeds",
            "a new SRQ reports limit 0 (not armed), even when srq_limit was given at creation, where it plays no part",
            "NOTES",
            needs=(_SRQS,),
            over={"given": (0, 4)},
            variant="created-with-srq_limit-{given}",
            call={"srq": Need("srq", spec={"srq_init_attr.attr.srq_limit": Var("given")})},
            expect=(Expect("srq_attr.srq_limit", "==", 0),),
            also=(Source("man", "ibv_create_srq(3)", "DESCRIPTION"),),
        ),
        Claim(
            "limit-reads-back",
            "succeeds",
            "after ibv_modify_srq armed a limit, the query reports it",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="armed-at-3",
            steps=(Step("ibv_modify_srq", {"srq_attr": {"srq_limit": 3}}),),
            expect=(Expect("srq_attr.srq_limit", "==", 3),),
            also=(Source("man", "ibv_modify_srq(3)", "NOTES"),),
        ),
        Claim(
            "zero-mask-changes-nothing",
            "succeeds",
            "a modify with mask 0 changes neither the size nor the limit",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="after-mask-0-attrs-9999",
            steps=(
                _MADE_SRQ,
                _SRQ_BEFORE,
                Step(
                    "ibv_modify_srq",
                    {"srq": Ref("made"), "srq_attr": {"max_wr": 9999, "srq_limit": 9999}, "srq_attr_mask": 0},
                    expect="any",
                ),
            ),
            call={"srq": Ref("made")},
            expect=(
                Expect("srq_attr.max_wr", "==", Ref("before", "srq_attr.max_wr")),
                Expect("srq_attr.srq_limit", "==", Ref("before", "srq_attr.srq_limit")),
            ),
            also=(Source("man", "ibv_modify_srq(3)", "DESCRIPTION"),),
        ),
        Claim(
            "failed-modify-changes-nothing",
            "succeeds",
            "a modify refused for one invalid attribute applies none "
            "of the others: the size and the limit are unchanged",
            "NOTES",
            needs=(_SRQS,),
            variant="after-refused-max_wr-and-limit",
            steps=(
                _MADE_SRQ,
                _SRQ_BEFORE,
                Step(
                    "ibv_modify_srq",
                    {
                        "srq": Ref("made"),
                        "srq_attr": {"max_wr": Dev("attr.max_srq_wr", plus=1), "srq_limit": 2},
                        "srq_attr_mask": "IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT",
                    },
                    expect="fails",
                ),
            ),
            call={"srq": Ref("made")},
            expect=(
                Expect("srq_attr.max_wr", "==", Ref("before", "srq_attr.max_wr")),
                Expect("srq_attr.srq_limit", "==", Ref("before", "srq_attr.srq_limit")),
            ),
            also=(Source("man", "ibv_modify_srq(3)", "NOTES"),),
        ),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),)),
    tables={"not_supported": {"EOPNOTSUPP": "the provider does not implement ibv_query_srq (libibverbs' default op)"}},
    undefined=("querying a destroyed SRQ",),
)

ibv_get_srq_num = Verb(
    name="ibv_get_srq_num",
    man="ibv_get_srq_num(3)",
    prototype="int ibv_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);",
    returns=RETURNS_ERRNO,
    summary="the number of an XRC SRQ, which XRC senders name as remote_srqn",
    params=(Param("srq", "struct ibv_srq *", default=Need("srq")), Param("srq_num", "uint32_t *", "out")),
    errors=(
        Error(
            "EOPNOTSUPP",
            "the provider has no XRC (libibverbs' default op answers; not on the page)",
            untestable="reachable only on devices without XRC, where no XRC SRQ exists to ask about; asking about "
            "a basic SRQ is outside the page",
        ),
    ),
    claims=(
        Claim(
            "xrc-srq-has-number",
            "gated",
            "an XRC SRQ yields its number, which fits the 24 bits of an SRQ number",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="XRC-srq",
            steps=(Step("ibv_create_srq_ex", {"srq_init_attr_ex": _XRC_SRQ}, name="xsrq"),),
            call={"srq": Ref("xsrq")},
            also=(Source("ibta", "IBTA Vol. 1 Annex A14 (XRC: SRQ numbers are 24 bits)"),),
            params={
                "gate": _XRC,
                "only": "advertised",
                "advertised": {"expect": (Expect("srq_num", "in", (0, 1 << 24)),)},
            },
        ),
        Claim(
            "distinct-numbers",
            "gated",
            "two live XRC SRQs have different numbers",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="two-XRC-srqs-one-xrcd",
            steps=(
                Step("ibv_create_srq_ex", {"srq_init_attr_ex": _XRC_SRQ}, name="x1"),
                Step("ibv_create_srq_ex", {"srq_init_attr_ex": _XRC_SRQ}, name="x2"),
                Step("ibv_get_srq_num", {"srq": Ref("x1")}, name="n1"),
            ),
            call={"srq": Ref("x2")},
            params={
                "gate": _XRC,
                "only": "advertised",
                "advertised": {"expect": (Expect("srq_num", "!=", Ref("n1", "srq_num")),)},
            },
        ),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),)),
    tables={
        "not_supported": {"EOPNOTSUPP": "the provider does not implement ibv_get_srq_num (libibverbs' default op)"}
    },
    undefined=("calling it on an SRQ that is not an XRC SRQ (the page covers XRC SRQs only)",),
)

ibv_destroy_srq = Verb(
    name="ibv_destroy_srq",
    man="ibv_create_srq(3)",
    prototype="int ibv_destroy_srq(struct ibv_srq *srq);",
    returns=RETURNS_ERRNO,
    summary="destroy an SRQ; 0 or an errno (EBUSY while a QP uses it)",
    params=(Param("srq", "struct ibv_srq *", default=Need("srq")),),
    claims=(
        Claim(
            "destroy-returns-zero",
            "succeeds",
            "destroying an SRQ that no QP uses returns 0, and the SRQ no longer holds its PD",
            "RETURN VALUE",
            needs=(Cap("attr.max_srq"),),
            variant="unused",
            params={"then": (Step("ibv_dealloc_pd", {"pd": Need("pd")}),)},
        ),
        Claim(
            "busy-with-qp",
            "refused",
            "destroying an SRQ that a QP still uses fails with EBUSY, and the SRQ stays "
            "usable (another QP can still be created on it)",
            "NOTES",
            needs=(Cap("attr.max_srq"),),
            variant="RC-qp-on-srq",
            errnos=("EBUSY",),
            steps=(Step("ibv_create_qp", {"qp_init_attr.srq": Need("srq")}),),
            params={"then": (Step("ibv_create_qp", {"qp_init_attr.srq": Need("srq")}),)},
            also=(Source("kernel", "drivers/infiniband/core/verbs.c ib_destroy_srq_user(): EBUSY while usecnt"),),
        ),
        Claim(
            "busy-then-still-usable",
            "refused",
            "after a destroy refused with EBUSY (a QP still uses the SRQ), the SRQ is fully usable: a receive "
            "is posted to it, and once its QP is destroyed it destroys with 0",
            "NOTES",
            needs=(Cap("attr.max_srq"),),
            variant="RC-qp-on-srq",
            errnos=("EBUSY",),
            steps=(
                Step("ibv_create_qp", {"qp_init_attr.srq": Need("srq")}, name="user"),
                Step("ibv_reg_mr", {"pd": Need("pd")}, name="region"),
            ),
            params={
                "then": (
                    Step(
                        "ibv_post_srq_recv",
                        {"srq": Need("srq"), "wr": ({"wr_id": 1, "sg_list": (_MR_SGE,), "num_sge": 1},)},
                    ),
                    Step("ibv_destroy_qp", {"qp": Ref("user")}),
                    Step("ibv_destroy_srq", {"srq": Need("srq")}),
                )
            },
            also=(Source("kernel", "drivers/infiniband/core/verbs.c ib_destroy_srq_user(): EBUSY while usecnt"),),
        ),
    ),
    errors=(
        Error(
            "EBUSY",
            "a QP is still associated with the SRQ (NOTES; the errno is the kernel's)",
            covered_by=("busy-with-qp",),
        ),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),), destroys=(Resource("srq", role="srq"),)),
    undefined=(
        "destroying an SRQ twice",
        "using an SRQ after destroying it",
        "destroying an SRQ while another thread posts to it",
    ),
)

# An object of another protection domain than the QP's (kind "foreign-pd", kinds/relations.py).
_IBTA_PD = Source(
    "ibta",
    "IBTA Vol. 1 r1.7 ch. 10, protection domains: a QP may use memory regions, windows and address "
    "handles of its own PD only; the L_Key and R_Key checks include the PD",
)
_IBTA_MW_PD = Source(
    "ibta",
    "IBTA Vol. 1 r1.7 ch. 10, memory windows: a type 2 window is bound by a QP of its own PD, to a region "
    "of that PD (C10-72); a bind that breaks a rule completes with a memory window bind error",
)
_ACROSS_CONTEXTS = Source(
    "header",
    "verbs.h: every PD, MR, MW and AH belongs to one ibv_context (its context field), and a PD is allocated "
    "in one context; an object of a second context of the same device is therefore of another PD than any "
    "object of the first, and the PD rules judge it (the pages give a context no rule of its own)",
)
_IWARP_STAG = Source(
    "iwarp",
    "RFC 5040 (RDMAP), Terminate error codes: an STag not associated with the RDMAP stream (a region of another "
    "protection domain than the stream's QP) is a remote protection error",
)
_IWARP_WRITE_COMPLETION = Source(
    "iwarp",
    "RFC 5040 (RDMAP): an RDMA Write has no response message, so its requester's completion is local (the data "
    "left); a remote protection error comes back as a Terminate that moves the QP to error, whose outstanding "
    "RDMA Read is then flushed; the verbs pages tie no completion status to iWARP",
)

ibv_post_srq_recv = Verb(
    name="ibv_post_srq_recv",
    man="ibv_post_srq_recv(3)",
    prototype="int ibv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);",
    returns=RETURNS_ERRNO,
    summary="post a list of receive WRs to an SRQ; stops at the first that fails, named in *bad_wr",
    params=(
        Param("srq", "struct ibv_srq *", default=Need("srq")),
        Param("wr", "struct ibv_recv_wr *", doc="a list linked by next; sg_list/num_sge describe the buffers"),
        Param("bad_wr", "struct ibv_recv_wr **", "out"),
    ),
    errors=(
        Error(
            "EINVAL",
            "a WR has more SGEs than the SRQ allows (not on the page: the provider's answer)",
            untestable="left to the data-path section (post-refused: the failing WR and *bad_wr)",
        ),
        Error(
            "ENOMEM",
            "the SRQ is full (not on the page: the provider's answer)",
            covered_by=("over-max-wr-refused", "capacity-one-past-refused"),
        ),
    ),
    claims=(
        Claim(
            "consumed-by-attached-qp",
            "transfer",
            "a message to a QP attached to the SRQ takes a receive posted on the SRQ: the completion comes "
            "on the QP's receive CQ with that receive's wr_id, and the data is in its buffer",
            "DESCRIPTION",
            needs=(_SRQS,),
            also=(Source("man", "ibv_create_qp(3)", "DESCRIPTION"),),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"),)},
            variant="{qp_type}-{opcode}",
            params={"srq": True, "size": 64, "seed": 31},
        ),
        Claim(
            "over-max-wr-refused",
            "post-refused",
            "a list with one receive more than the SRQ holds (its max_wr) fails: an errno value, with "
            "*bad_wr at the first receive that did not fit",
            "DESCRIPTION, RETURN VALUE",
            needs=(_SRQS,),
            also=(Source("man", "ibv_create_srq(3)", "DESCRIPTION"),),
            over={"qp_type": (_RC,)},
            variant="{qp_type}-max_wr+1",
            params={"srq": True, "queue": "srq_recv", "problem": "over-max-wr", "must_fail": True},
        ),
        Claim(
            "lkey-of-another-pd",
            "foreign-pd",
            "a receive posted on the SRQ whose lkey names a region of another PD than the SRQ's completes "
            "with a local protection error, and no byte lands in that region",
            "DESCRIPTION",
            needs=(_SRQS,),
            also=(_IBTA_PD,),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"),)},
            variant="{qp_type}-{opcode}",
            params={"foreign": "recv-lkey", "side": "recv", "srq": True, "statuses": ("IBV_WC_LOC_PROT_ERR",)},
        ),
        Claim(
            "lkey-of-another-context",
            "foreign-pd",
            "a receive posted on the SRQ whose lkey names a region registered in a second context of the device "
            "(of neither the SRQ's PD nor the QP's) completes with a local protection error, and no byte lands there",
            "DESCRIPTION",
            needs=(_SRQS,),
            also=(_IBTA_PD, _ACROSS_CONTEXTS),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"),)},
            variant="{qp_type}-{opcode}",
            params={
                "foreign": "recv-lkey",
                "across": "context",
                "side": "recv",
                "srq": True,
                "statuses": ("IBV_WC_LOC_PROT_ERR",),
            },
        ),
        Claim(
            "capacity-one-past-refused",
            "capacity",
            "an SRQ filled to the max_wr it reports, in one list, refuses the one receive more: an errno value with "
            "*bad_wr at it; every receive before it completes (drained by SENDs to an attached QP) with its wr_id, "
            "the refused one never does, and the drained SRQ takes receives again",
            "RETURN VALUE",
            needs=(_SRQS,),
            also=(Source("man", "ibv_create_srq(3)", "DESCRIPTION"), Source("man", "ibv_query_srq(3)", "DESCRIPTION")),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"),)},
            variant="{qp_type}-max_wr+1",
            params={"queue": "srq_recv"},
        ),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),)),
    undefined=(
        "reusing a receive buffer before its completion was polled (NOTES)",
        "posting to a destroyed SRQ",
        "sg_list NULL with num_sge > 0",
    ),
)

_TAG_SYNC = {"wr_id": 9, "opcode": "IBV_WR_TAG_SYNC", "flags": 0}

ibv_post_srq_ops = Verb(
    name="ibv_post_srq_ops",
    man="ibv_post_srq_ops(3)",
    prototype="int ibv_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *wr, struct ibv_ops_wr **bad_wr);",
    returns=RETURNS_ERRNO,
    summary="add, delete or synchronise tag-matching entries of a tag-matching SRQ; *bad_wr names the first refused",
    params=(
        Param("srq", "struct ibv_srq *", default=Need("srq")),
        Param(
            "wr",
            "struct ibv_ops_wr *",
            default=_TAG_SYNC,
            flags="ibv_ops_wr_opcode",
            doc="opcode from ibv_ops_wr_opcode, flags from ibv_ops_flags; tm.handle is written by TAG_ADD",
        ),
        Param("bad_wr", "struct ibv_ops_wr **", "out"),
    ),
    errors=(
        Error(
            "EINVAL",
            "the SRQ is not a tag-matching SRQ or the opcode is unknown (not on the page: mlx5)",
            covered_by=("needs-tag-matching-srq",),
        ),
        Error(
            "EOPNOTSUPP",
            "the provider has no tag matching (libibverbs' default answers; not on the page)",
            covered_by=("needs-tag-matching-srq",),
        ),
        Error(
            "ENOMEM",
            "the tag list or the operation queue is full (not on the page: mlx5)",
            untestable="left to the data-path section: filling the list takes signalled TAG_ADDs and their completions",
        ),
    ),
    claims=(
        Claim(
            "needs-tag-matching-srq",
            "refused",
            "the operations configure a tag-matching SRQ: on a basic SRQ they are refused",
            "DESCRIPTION",
            needs=(_SRQS,),
            variant="TAG_SYNC-on-basic-srq",
            errnos=("EINVAL", "EOPNOTSUPP"),
        ),
        Claim(
            "tag-list-operations",
            "untestable",
            "TAG_ADD returns a handle, TAG_DEL removes an entry, TAG_SYNC "
            "updates the unexpected counter; signalled operations complete on the SRQ's CQ",
            "DESCRIPTION",
            untestable="needs completions: left to the data-path section",
        ),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),)),
    undefined=("TAG_DEL with a handle that TAG_ADD never returned or that was already deleted",),
)

_O_CREAT, _O_EXCL = 0o100, 0o200  # <fcntl.h> on Linux: ibv_open_xrcd(3) takes open(2)'s flags

ibv_open_xrcd = Verb(
    name="ibv_open_xrcd",
    man="ibv_open_xrcd(3)",
    prototype="struct ibv_xrcd *ibv_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *xrcd_init_attr);",
    returns=RETURNS_POINTER,
    summary="open (or create) an XRC domain, private (fd -1) or shared through a file's inode; NULL on failure",
    params=(
        CONTEXT,
        Param(
            "xrcd_init_attr",
            "struct ibv_xrcd_init_attr *",
            default={"comp_mask": "IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS", "fd": -1, "oflags": _O_CREAT},
            flags="ibv_xrcd_init_attr_mask",
            doc="comp_mask from ibv_xrcd_init_attr_mask (the page omits it; libibverbs needs FD and OFLAGS); "
            "oflags (the page's oflag) takes O_CREAT and O_EXCL",
        ),
    ),
    errors=(
        Error(
            "EOPNOTSUPP",
            "the device has no XRC, or comp_mask has an undefined bit (not on the page: libibverbs)",
            covered_by=("private-xrcd", "reserved-comp-mask-refused"),
        ),
        Error(
            "EINVAL",
            "comp_mask lacks FD or OFLAGS (libibverbs), or O_CREAT|O_EXCL for an inode that already has "
            "an XRCD (kernel); not on the page",
            covered_by=("comp-mask-needs-fd-and-oflags",),
        ),
        Error("EBADF", "fd is not an open file (not on the page: the kernel's answer)", covered_by=("bad-fd-refused",)),
        Error(
            "EAGAIN",
            "the inode has no XRCD yet and O_CREAT is not given (not on the page: the kernel's answer)",
            untestable="needs a file descriptor of a file the check creates, which catalogue values cannot express yet",
        ),
    ),
    claims=(
        Claim(
            "private-xrcd",
            "gated",
            "with fd -1 and O_CREAT a private XRC domain is created (where the device "
            "advertises XRC; elsewhere refused), and ibv_close_xrcd of it returns 0",
            "DESCRIPTION",
            variant="fd-minus-1-O_CREAT",
            errnos=("EOPNOTSUPP",),
            params={"gate": _XRC, "advertised": {"then": (Step("ibv_close_xrcd", {"xrcd": Ref("call")}),)}},
        ),
        Claim(
            "comp-mask-needs-fd-and-oflags",
            "refused",
            "fd and oflags are the domain's identity: a request that does not mark both valid is refused",
            "DESCRIPTION",
            needs=(_XRC,),
            over={
                ("mask", "comp_mask"): (
                    ("FD-only", "IBV_XRCD_INIT_ATTR_FD"),
                    ("OFLAGS-only", "IBV_XRCD_INIT_ATTR_OFLAGS"),
                )
            },
            variant="comp_mask-{mask}",
            call={"xrcd_init_attr.comp_mask": Var("comp_mask")},
            errnos=("EINVAL",),
            layer="libibverbs",
        ),
        Claim(
            "reserved-comp-mask-refused",
            "refused",
            "comp_mask bits outside ibv_xrcd_init_attr_mask are refused",
            "DESCRIPTION",
            needs=(_XRC,),
            over={"bit": (2, 31)},
            variant="comp_mask-bit{bit}",
            call={
                "xrcd_init_attr.comp_mask": Flags(
                    ("IBV_XRCD_INIT_ATTR_FD", "IBV_XRCD_INIT_ATTR_OFLAGS"), bits=(Var("bit"),)
                )
            },
            errnos=("EOPNOTSUPP", "EINVAL"),
            layer="libibverbs",
        ),
        Claim(
            "bad-fd-refused",
            "refused",
            "fd must be an open file (or -1): a descriptor that is not open is refused",
            "DESCRIPTION",
            needs=(_XRC,),
            variant="fd-1000000",
            call={"xrcd_init_attr.fd": 1000000},
            errnos=("EBADF",),
            layer="kernel",
        ),
        Claim(
            "inode-shared",
            "untestable",
            "opening with the same file twice shares one XRC domain; O_CREAT|O_EXCL "
            "then fails, and without O_CREAT a file with no domain fails",
            "DESCRIPTION",
            untestable="needs file descriptors of files the check creates, which catalogue values cannot express yet",
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),),
        produces=(Resource("xrcd"),),
        destroyed_by="ibv_close_xrcd",
        makes=True,
    ),
    tables={"not_supported": {"EOPNOTSUPP": "the provider does not implement XRC domains (libibverbs' default op)"}},
)

_USECOUNT = "drivers/infiniband/core: a destroy while another object holds a use count returns EBUSY"

_XRC_RECV_QP = {
    "qp_init_attr_ex": {
        "qp_type": "IBV_QPT_XRC_RECV",
        "comp_mask": "IBV_QP_INIT_ATTR_XRCD",
        "xrcd": Need("xrcd"),
        "cap": {"max_send_wr": 0, "max_recv_wr": 0, "max_send_sge": 0, "max_recv_sge": 0, "max_inline_data": 0},
    }
}

ibv_close_xrcd = Verb(
    name="ibv_close_xrcd",
    man="ibv_open_xrcd(3)",
    prototype="int ibv_close_xrcd(struct ibv_xrcd *xrcd);",
    returns=RETURNS_ERRNO,
    summary="close an XRC domain handle (the last close destroys the domain); EBUSY while objects use it",
    params=(Param("xrcd", "struct ibv_xrcd *", default=Need("xrcd")),),
    errors=(
        Error(
            "EBUSY",
            "an XRC SRQ or an XRC receive QP still uses the domain (NOTES; the errno is the kernel's)",
            covered_by=("busy-with-srq", "busy-with-qp"),
        ),
    ),
    claims=(
        Claim(
            "close-returns-zero",
            "succeeds",
            "closing an unused private XRC domain returns 0",
            "RETURN VALUE",
            needs=(_XRC,),
            variant="private-unused",
        ),
        Claim(
            "busy-with-srq",
            "refused",
            "closing a domain an XRC SRQ still uses fails with EBUSY, and the domain stays usable",
            "NOTES",
            needs=(_XRC, _SRQS),
            variant="XRC-srq-in-domain",
            errnos=("EBUSY",),
            steps=(Step("ibv_create_srq_ex", {"srq_init_attr_ex": _XRC_SRQ}),),
            params={"then": (Step("ibv_create_srq_ex", {"srq_init_attr_ex": _XRC_SRQ}),)},
            also=(Source("kernel", _USECOUNT),),
        ),
        Claim(
            "busy-with-qp",
            "refused",
            "closing a domain an XRC receive QP still uses fails with EBUSY, and the domain stays usable",
            "NOTES",
            needs=(_XRC,),
            variant="XRC_RECV-qp-in-domain",
            errnos=("EBUSY",),
            steps=(Step("ibv_create_qp_ex", _XRC_RECV_QP),),
            params={"then": (Step("ibv_create_qp_ex", _XRC_RECV_QP),)},
            also=(Source("kernel", _USECOUNT),),
        ),
    ),
    contract=Contract(requires=(Resource("xrcd", role="xrcd"),), destroys=(Resource("xrcd", role="xrcd"),)),
    undefined=("closing an XRC domain twice", "using an XRC domain after closing it"),
)


# --- 5. QP --------------------------------------------------------------------------------------------------
# Queue pairs: create, modify (and DET's det_modify_qp), query, destroy; data ordering, pacing, ECE;
# receive work queues and RSS indirection tables.

# Requests off the usual powers of two, so rounding up is visible; all within any sane device's limits.
_QP_CAP_REQUEST = (
    ("max_send_wr", 3),
    ("max_recv_wr", 5),
    ("max_send_sge", 2),
    ("max_recv_sge", 2),
    ("max_inline_data", 17),
)

_INLINE_EXCUSE = (
    "field",
    "max_inline_data",
    "*",
    "no attribute advertises an inline-data limit, so refusing 17 bytes breaks no promise",
)


def _cap_writeback(attr: str, verb: str, query_ref: str) -> dict[str, object]:
    """The data of a "cap is written back, at least the request, and ibv_query_qp agrees" claim."""
    return {
        "call": {f"{attr}.qp_type": Var("qp_type"), f"{attr}.cap": _SMALL_CAP, f"{attr}.cap.{{field}}": Var("request")},
        "expect": (
            Expect(f"{attr}.cap.{{field}}", ">=", Arg(f"{attr}.cap.{{field}}")),
            Expect("q.init_attr.cap.{field}", "==", Ref("call", f"{attr}.cap.{{field}}"), ref=query_ref),
        ),
        "params": {
            "then": (Step("ibv_query_qp", {"qp": Ref("call"), "attr_mask": "IBV_QP_CAP"}, name="q"),),
            "excused": (_INLINE_EXCUSE, _AT_LIMIT_EXCUSE),
        },
        "needs": (),
    }


def _unique_axis(types: tuple[str, ...]) -> tuple[tuple[object, ...], ...]:
    """(qp_type, case name, types to cycle through): one case per type, then one mixing them all."""
    return (*((t, t.removeprefix("IBV_QPT_"), ()) for t in types), (types[0], "mixed", types))


ibv_create_qp = Verb(
    name="ibv_create_qp",
    man="ibv_create_qp(3)",
    prototype="struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);",
    returns=RETURNS_POINTER,
    summary="create a QP on a PD (the suite's way to make a QP); NULL on failure",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param(
            "qp_init_attr",
            "struct ibv_qp_init_attr *",
            "inout",
            default={
                "send_cq": Need("cq"),
                "recv_cq": Need("cq"),
                "qp_type": Var("qp_type"),
                "cap": {"max_send_wr": 4, "max_recv_wr": 4, "max_send_sge": 1, "max_recv_sge": 1},
            },
            doc="cap is written back",
        ),
    ),
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after each of its documented refusals, the same request made right is served: the object is "
            "created, used and destroyed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS,),
        ),
        Claim(
            "cap-writeback",
            "succeeds",
            "cap is rewritten with the actual capacities, each at least the request; ibv_query_qp agrees",
            "DESCRIPTION",
            over={"qp_type": _QP_TYPES, ("field", "request"): _QP_CAP_REQUEST},
            variant="{qp_type}-{field}-{request}",
            **_cap_writeback("qp_init_attr", "ibv_create_qp", "ibv_query_qp(3) DESCRIPTION"),
        ),
        Claim(
            "srq-ignores-recv-caps",
            "succeeds",
            "with an SRQ, max_recv_wr and max_recv_sge are ignored",
            "NOTES",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD")},
            variant="{qp_type}-recv-caps-above-limits",
            needs=(Cap("attr.max_srq"),),
            call={
                "qp_init_attr.srq": Need("srq"),
                "qp_init_attr.cap": {
                    **_SMALL_CAP,
                    "max_recv_wr": Dev("attr.max_qp_wr", times=4),
                    "max_recv_sge": Dev("attr.max_sge", plus=5),
                },
            },
        ),
        Claim(
            "srq-only-rc-ud",
            "refused",
            "asking for a QP type other than RC or UD with an SRQ fails",
            "NOTES",
            over={"qp_type": ("IBV_QPT_UC", "IBV_QPT_RAW_PACKET")},
            variant="{qp_type}-with-srq",
            needs=(Cap("attr.max_srq"),),
            call={"qp_init_attr.srq": Need("srq"), "qp_init_attr.cap": _SMALL_CAP},
        ),
        Claim(
            "qp-num-unique",
            "distinct",
            "each QP has a valid qp_num unique among live QPs",
            "RETURN VALUE",
            over={("qp_type", "name", "cycle"): _unique_axis(("IBV_QPT_RC", "IBV_QPT_UD"))},
            variant="{name}-x64",
            call={
                "pd": Need("pd", label="shared"),
                "qp_init_attr.send_cq": Need("cq", label="shared"),
                "qp_init_attr.recv_cq": Need("cq", label="shared"),
                "qp_init_attr.cap": _SMALL_CAP,
            },
            expect=(Expect("ret.qp_num", "in", (2, 1 << 24), transports=IB_TRANSPORTS),),
            params={"count": 64, "value": "ret.qp_num", "cycle": Var("cycle"), "cycle_needs": _QP_TYPE_NEEDS},
        ),
        Claim(
            "creates-qp-in-reset",
            "succeeds",
            "a valid request returns a QP in RESET with the type and qp_context asked for and no SRQ",
            "DESCRIPTION",
            over={"qp_type": _QP_TYPES},
            variant="{qp_type}-context-0x55",
            layer="libibverbs",
            call={"qp_init_attr.qp_context": 0x55},
            expect=(
                Expect("ret.state", "==", "IBV_QPS_RESET"),
                Expect("ret.qp_type", "==", Var("qp_type")),
                Expect("ret.qp_context", "==", 0x55),
                Expect("ret.srq", "zero"),
            ),
        ),
        Claim(
            "undefined-qp-type-refused",
            "refused",
            "qp_type must be one of the page's QP types: a value outside enum ibv_qp_type is refused",
            "DESCRIPTION",
            over={"type": (0, 1, 5, 6, 7, 11)},
            variant="qp_type-{type}",
            call={"qp_init_attr.qp_type": Var("type")},
            errnos=("EINVAL",),
            layer="libibverbs",
        ),
        Claim(
            "cap-above-limit-refused",
            "refused",
            "a capacity above the device's limit for it is refused",
            "DESCRIPTION",
            over={
                ("field", "limit"): (
                    ("max_send_wr", "max_qp_wr"),
                    ("max_recv_wr", "max_qp_wr"),
                    ("max_send_sge", "max_sge"),
                    ("max_recv_sge", "max_sge"),
                )
            },
            variant="RC-{field}-above-{limit}",
            call={"qp_init_attr.cap.{field}": Dev("attr.{limit}", plus=1)},
            errnos=("EINVAL", "ENOMEM"),
            also=(Source("man", "ibv_query_device(3)", "DESCRIPTION"),),
        ),
        Claim(
            "iwarp-types-refused",
            "refused",
            "an iWARP device, which defines only reliable connections, refuses an unreliable connected or datagram QP",
            "DESCRIPTION",
            over={"type": ("IBV_QPT_UC", "IBV_QPT_UD")},
            variant="{type}-on-iwarp",
            transports=("iwarp",),
            call={"qp_init_attr.qp_type": Var("type")},
            errnos=("EOPNOTSUPP", "EINVAL"),
            also=(_IWARP_RC_ONLY,),
        ),
    ),
    errors=(
        Error(
            "EINVAL",
            "a value is invalid: an undefined QP type (libibverbs), a capacity above the device's limit, "
            "an SRQ with a QP type other than RC or UD (NOTES); the page names no errno",
            covered_by=("undefined-qp-type-refused", "cap-above-limit-refused", "srq-only-rc-ud"),
        ),
        Error(
            "EOPNOTSUPP",
            "the device does not offer the QP type (not on the page: the driver's answer)",
            covered_by=("iwarp-types-refused",),
        ),
        Error(
            "EPERM",
            "a raw packet QP without CAP_NET_RAW (not on the page: the kernel's answer)",
            untestable="the suite runs as root; dropping CAP_NET_RAW would affect the whole session's process",
        ),
        Error(
            "ENOMEM",
            "the QP cannot be allocated (not on the page)",
            untestable="cannot exhaust kernel or device memory safely on a shared lab VM",
        ),
    ),
    contract=Contract(
        requires=(Resource("pd", role="pd"), Resource("cq", role="qp_init_attr.send_cq")),
        produces=(Resource("qp", state="RESET"),),
        destroyed_by="ibv_destroy_qp",
        makes=True,
    ),
    tables={"vars": {"qp_type": "IBV_QPT_RC"}, "needs": {"qp_type": _QP_TYPE_NEEDS}},
    undefined=(
        "send_cq or recv_cq NULL (libibverbs dereferences them)",
        "qp_init_attr NULL",
        "IBV_QPT_DRIVER without its vendor's setup (vendor-specific meaning)",
        "a CQ or SRQ of another device context than the PD's (neither the page nor verbs.h says; the command "
        "goes to the PD's context, whose kernel file looks each handle number up among its own objects, so "
        "another context's CQ names whatever this one holds under that number, or nothing)",
        "an SRQ of another PD than the QP's (the page says neither that it is refused nor whose PD then "
        "checks a receive's lkey; ibv_post_srq_recv's lkey-of-another-pd claim uses a region of neither)",
    ),
)

_CREATE_QP_EX_MASK = "IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS"
_CREATE_QP_EX_ON_IWARP = Source(
    "header",
    "verbs.h ibv_create_qp_ex(): comp_mask IBV_QP_INIT_ATTR_PD alone goes to ibv_create_qp; any other answers "
    "EOPNOTSUPP where the provider has no create_qp_ex (rdma-core providers/siw/siw.c: siw_context_ops has none)",
)

# A receive-side-scaling QP: a raw packet QP that receives through an indirection table of WQs, hashing
# IPv4 addresses with a Toeplitz key; it has no receive queue of its own (libibverbs refuses one).
_RSS_QP = {
    "qp_type": "IBV_QPT_RAW_PACKET",
    "recv_cq": None,
    "rwq_ind_tbl": Need("rwq_ind_table"),
    "comp_mask": "IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH",
    "cap": {"max_send_wr": 0, "max_recv_wr": 0, "max_send_sge": 0, "max_recv_sge": 0, "max_inline_data": 0},
    "rx_hash_conf": {
        "rx_hash_function": "IBV_RX_HASH_FUNC_TOEPLITZ",
        "rx_hash_key_len": 40,
        "rx_hash_key": Array(bytes(range(1, 41))),
        "rx_hash_fields_mask": "IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4",
    },
}
_RSS_NEEDS = (
    *_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"],
    Cap("attr_ex.max_wq_type_rq"),
    Cap("attr_ex.rss_caps.max_rwq_indirection_table_size"),
)

ibv_create_qp_ex = Verb(
    name="ibv_create_qp_ex",
    man="ibv_create_qp_ex(3)",
    prototype="struct ibv_qp *ibv_create_qp_ex(struct ibv_context *context, "
    "struct ibv_qp_init_attr_ex *qp_init_attr_ex);",
    returns=RETURNS_POINTER,
    summary="create a QP from extended init attributes (comp_mask says which are valid); NULL on failure",
    params=(
        CONTEXT,
        Param(
            "qp_init_attr_ex",
            "struct ibv_qp_init_attr_ex *",
            "inout",
            default={
                "send_cq": Need("cq"),
                "recv_cq": Need("cq"),
                "qp_type": Var("qp_type"),
                "cap": {"max_send_wr": 4, "max_recv_wr": 4, "max_send_sge": 1, "max_recv_sge": 1},
                "pd": Need("pd"),
                # More than IBV_QP_INIT_ATTR_PD, so the call reaches the provider's create_qp_ex:
                # with PD alone verbs.h routes it to ibv_create_qp.
                "comp_mask": _CREATE_QP_EX_MASK,
                "create_flags": 0,
            },
            flags="ibv_qp_init_attr_mask",
            doc="comp_mask draws from ibv_qp_init_attr_mask; create_flags from ibv_qp_create_flags; "
            "cap is written back",
        ),
    ),
    # The page has no ERRORS section: it only says NULL is returned on failure.
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after each of its documented refusals, the same request made right is served: the object is "
            "created, used and destroyed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS, _CREATE_QP_EX_ON_IWARP),
            # The defaults' CREATE_FLAGS bit reaches the provider's create_qp_ex, which siw's has not
            # (verbs.h answers EOPNOTSUPP): on iWARP the request made right is the PD-only one, which
            # verbs.h hands to ibv_create_qp (the pd-only-is-create-qp claim).
            params={"iwarp_call": {"qp_init_attr_ex.comp_mask": "IBV_QP_INIT_ATTR_PD"}},
        ),
        Claim(
            "cap-writeback",
            "succeeds",
            "the cap struct is rewritten with the QP's actual capacities, each at "
            "least the request, and ibv_query_qp reports the same values",
            "DESCRIPTION",
            over={"qp_type": _QP_TYPES, ("field", "request"): _QP_CAP_REQUEST},
            variant="{qp_type}-{field}-{request}",
            **_cap_writeback("qp_init_attr_ex", "ibv_create_qp_ex", "ibv_query_qp(3) DESCRIPTION"),
        ),
        Claim(
            "cap-writeback-at-limit",
            "succeeds",
            "the same holds for a request at the device maximum (a field naming an ibv_device_attr limit)",
            "DESCRIPTION",
            over={
                "qp_type": _QP_TYPES,
                ("field", "limit"): (
                    ("max_send_wr", "max_qp_wr"),
                    ("max_recv_wr", "max_qp_wr"),
                    ("max_send_sge", "max_sge"),
                    ("max_recv_sge", "max_sge"),
                ),
            },
            variant="{qp_type}-{field}-at-{limit}",
            **{
                **_cap_writeback("qp_init_attr_ex", "ibv_create_qp_ex", "ibv_query_qp(3) DESCRIPTION"),
                "call": {
                    "qp_init_attr_ex.qp_type": Var("qp_type"),
                    "qp_init_attr_ex.cap": _SMALL_CAP,
                    "qp_init_attr_ex.cap.{field}": Dev("attr.{limit}"),
                },
            },
        ),
        Claim(
            "srq-ignores-recv-caps",
            "succeeds",
            "with an SRQ, max_recv_wr and max_recv_sge are ignored (even values above the device limits)",
            "NOTES",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD")},
            variant="{qp_type}-recv-caps-above-limits",
            needs=(Cap("attr.max_srq"),),
            call={
                "qp_init_attr_ex.srq": Need("srq"),
                "qp_init_attr_ex.cap": {
                    **_SMALL_CAP,
                    "max_recv_wr": Dev("attr.max_qp_wr", times=4),
                    "max_recv_sge": Dev("attr.max_sge", plus=5),
                },
            },
        ),
        Claim(
            "unknown-comp-mask",
            "refused",
            "comp_mask bits outside ibv_qp_init_attr_mask make the call fail",
            "DESCRIPTION",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"), "bit": (7, 8, 16, 31)},
            variant="{qp_type}-comp_mask-bit{bit}",
            call={
                "qp_init_attr_ex.comp_mask": Flags(("IBV_QP_INIT_ATTR_PD",), bits=(Var("bit"),)),
                "qp_init_attr_ex.cap": _SMALL_CAP,
            },
        ),
        Claim(
            "unknown-create-flags",
            "refused",
            "create_flags bits outside ibv_qp_create_flags make the call fail",
            "DESCRIPTION",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"), "bit": (0, 2, 5, 12, 31)},
            variant="{qp_type}-create_flags-bit{bit}",
            call={"qp_init_attr_ex.create_flags": Flags(bits=(Var("bit"),)), "qp_init_attr_ex.cap": _SMALL_CAP},
        ),
        Claim(
            "source-qpn-ud-only",
            "refused",
            "IBV_QP_CREATE_SOURCE_QPN is for UD QPs only: other QP types are refused",
            "NOTES",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UC", "IBV_QPT_RAW_PACKET")},
            variant="{qp_type}-with-source-qpn",
            call={
                "qp_init_attr_ex.create_flags": "IBV_QP_CREATE_SOURCE_QPN",
                "qp_init_attr_ex.source_qpn": 0x1234,
                "qp_init_attr_ex.cap": _SMALL_CAP,
            },
        ),
        Claim(
            "qp-num-unique",
            "distinct",
            "each created QP has a valid qp_num, unique among live QPs (on IB "
            "transport: 24 bits and not the special QP0/QP1)",
            "RETURN VALUE",
            over={("qp_type", "name", "cycle"): _unique_axis(_QP_TYPES)},
            variant="{name}-x64",
            call={
                "qp_init_attr_ex.pd": Need("pd", label="shared"),
                "qp_init_attr_ex.send_cq": Need("cq", label="shared"),
                "qp_init_attr_ex.recv_cq": Need("cq", label="shared"),
                "qp_init_attr_ex.cap": _SMALL_CAP,
            },
            expect=(Expect("ret.qp_num", "in", (2, 1 << 24), transports=IB_TRANSPORTS),),
            params={"count": 64, "value": "ret.qp_num", "cycle": Var("cycle"), "cycle_needs": _QP_TYPE_NEEDS},
        ),
        Claim(
            "send-ops-iterator",
            "untestable",
            "with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS the QP exposes the ibv_qp_ex send-ops iterator",
            "NOTES",
            untestable="covered by the ibv_wr_* data-path claims, which post through it",
        ),
        Claim(
            "pd-only-is-create-qp",
            "succeeds",
            "with comp_mask exactly IBV_QP_INIT_ATTR_PD the request is an "
            "ordinary one (verbs.h hands it to ibv_create_qp), so it works wherever ibv_create_qp does",
            "DESCRIPTION",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD")},
            variant="{qp_type}-comp_mask-PD",
            layer="libibverbs",
            call={"qp_init_attr_ex.comp_mask": "IBV_QP_INIT_ATTR_PD"},
            expect=(Expect("ret.state", "==", "IBV_QPS_RESET"), Expect("ret.qp_type", "==", Var("qp_type"))),
        ),
        Claim(
            "missing-pd-refused",
            "refused",
            "the PD is given through pd with IBV_QP_INIT_ATTR_PD: a request without that bit has no PD and is refused",
            "DESCRIPTION",
            variant="RC-comp_mask-CREATE_FLAGS-only",
            call={"qp_init_attr_ex.comp_mask": "IBV_QP_INIT_ATTR_CREATE_FLAGS"},
            errnos=("EINVAL",),
            layer="libibverbs",
        ),
        Claim(
            "xrc-recv-needs-xrcd",
            "refused",
            "an XRC receive QP lives in an XRC domain: one asked for without IBV_QP_INIT_ATTR_XRCD is refused",
            "DESCRIPTION",
            variant="XRC_RECV-comp_mask-PD-CREATE_FLAGS",
            call={"qp_init_attr_ex.qp_type": "IBV_QPT_XRC_RECV"},
            errnos=("EINVAL",),
            layer="libibverbs",
        ),
        Claim(
            "send-ops-flags-accepted",
            "succeeds",
            "a QP asked for with send_ops_flags (SEND and RDMA_WRITE) is created, for use with the send-ops iterator",
            "NOTES",
            variant="RC-SEND-RDMA_WRITE",
            call={
                "qp_init_attr_ex.comp_mask": "IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS",
                "qp_init_attr_ex.send_ops_flags": "IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE",
            },
        ),
        Claim(
            "xrc-types",
            "gated",
            "an XRC send QP (on a PD) and an XRC receive QP (in an XRC domain) are created "
            "where the device advertises XRC",
            "DESCRIPTION",
            over={
                ("qp_type", "attrs"): (
                    ("IBV_QPT_XRC_SEND", {"comp_mask": "IBV_QP_INIT_ATTR_PD", "cap": _SMALL_CAP}),
                    (
                        "IBV_QPT_XRC_RECV",
                        {
                            "comp_mask": "IBV_QP_INIT_ATTR_XRCD",
                            "xrcd": Need("xrcd"),
                            "cap": {"max_send_wr": 0, "max_recv_wr": 0, "max_send_sge": 0, "max_recv_sge": 0},
                        },
                    ),
                )
            },
            variant="{qp_type}",
            call={"qp_init_attr_ex": Var("attrs")},
            params={"gate": Cap("attr.device_cap_flags&IBV_DEVICE_XRC"), "only": "advertised"},
        ),
        Claim(
            "create-flags-gated",
            "gated",
            "a raw packet QP creation flag works only where the device advertises the matching raw packet capability",
            "DESCRIPTION",
            over={
                ("flag", "cap"): (
                    ("SCATTER_FCS", "IBV_RAW_PACKET_CAP_SCATTER_FCS"),
                    ("CVLAN_STRIPPING", "IBV_RAW_PACKET_CAP_CVLAN_STRIPPING"),
                )
            },
            variant="RAW_PACKET-{flag}",
            errnos=("EINVAL", "EOPNOTSUPP"),
            call={
                "qp_init_attr_ex.qp_type": "IBV_QPT_RAW_PACKET",
                "qp_init_attr_ex.cap": _SMALL_CAP,
                "qp_init_attr_ex.create_flags": "IBV_QP_CREATE_{flag}",
            },
            needs=_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"],
            params={"gate": Cap("attr_ex.raw_packet_caps&{cap}")},
        ),
        Claim(
            "rss-qp",
            "gated",
            "a receive-side-scaling QP is created on an indirection table with a hash "
            "configuration where the device advertises the Toeplitz hash",
            "DESCRIPTION",
            variant="RAW_PACKET-on-1-WQ-table-toeplitz-ipv4",
            needs=_RSS_NEEDS,
            call={"qp_init_attr_ex": _RSS_QP},
            params={"gate": Cap("attr_ex.rss_caps.rx_hash_function&IBV_RX_HASH_FUNC_TOEPLITZ"), "only": "advertised"},
        ),
        Claim(
            "ind-table-excludes-receive-queue",
            "refused",
            "a QP that receives through an indirection table has "
            "no receive queue of its own: asking for receive WRs as well is refused",
            "DESCRIPTION",
            variant="RAW_PACKET-on-table-max_recv_wr-1",
            needs=_RSS_NEEDS,
            errnos=("EINVAL",),
            layer="libibverbs",
            # _RSS_QP["cap"] is the dict written in _RSS_QP above (its values are typed as any Value).
            call={"qp_init_attr_ex": {**_RSS_QP, "cap": {**_RSS_QP["cap"], "max_recv_wr": 1}}},  # type: ignore[dict-item]
        ),
        Claim(
            "tso-header-gated",
            "gated",
            "max_tso_header is accepted on a raw packet QP where the device advertises TSO (tso_caps.max_tso)",
            "DESCRIPTION",
            variant="RAW_PACKET-max_tso_header-64",
            errnos=("EINVAL", "EOPNOTSUPP"),
            needs=_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"],
            call={
                "qp_init_attr_ex.qp_type": "IBV_QPT_RAW_PACKET",
                "qp_init_attr_ex.cap": _SMALL_CAP,
                "qp_init_attr_ex.comp_mask": "IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER",
                "qp_init_attr_ex.max_tso_header": 64,
            },
            params={"gate": Cap("attr_ex.tso_caps.max_tso")},
        ),
    ),
    errors=(
        Error(
            "EINVAL",
            "no PD for a type that needs one, no XRC domain for an XRC receive QP, an undefined comp_mask "
            "or create_flags bit, source_qpn on a non-UD QP (NOTES); the page names no errno",
            covered_by=(
                "missing-pd-refused",
                "xrc-recv-needs-xrcd",
                "unknown-comp-mask",
                "unknown-create-flags",
                "source-qpn-ud-only",
                "ind-table-excludes-receive-queue",
            ),
        ),
        Error(
            "EOPNOTSUPP",
            "the provider has no extended create (verbs.h / libibverbs' default op) or does not "
            "support a requested flag (not on the page)",
            covered_by=("unknown-comp-mask", "unknown-create-flags", "create-flags-gated"),
        ),
        Error(
            "EPERM",
            "a raw packet QP or IBV_QP_CREATE_SOURCE_QPN without CAP_NET_RAW (not on the page: the kernel's answer)",
            untestable="the suite runs as root; dropping CAP_NET_RAW would affect the whole session's process",
        ),
        Error(
            "ENOMEM",
            "the QP cannot be allocated (not on the page)",
            untestable="cannot exhaust kernel or device memory safely on a shared lab VM",
        ),
    ),
    contract=Contract(
        requires=(
            Resource("context", role="context"),
            Resource("pd", role="qp_init_attr_ex.pd"),
            Resource("cq", role="qp_init_attr_ex.send_cq"),
        ),
        produces=(Resource("qp", state="RESET"),),
        destroyed_by="ibv_destroy_qp",
    ),
    undefined=(
        "calling an ibv_wr_* builder that send_ops_flags did not ask for (a NULL function pointer)",
        "send_cq or recv_cq NULL without an indirection table (libibverbs dereferences them)",
    ),
    tables={
        "vars": {"qp_type": "IBV_QPT_RC"},
        "needs": {"qp_type": _QP_TYPE_NEEDS},
        # verbs.h: the inline answers EOPNOTSUPP itself when the provider has no create_qp_ex.
        "not_supported": {
            "EOPNOTSUPP": "the provider does not implement ibv_create_qp_ex (verbs.h answers EOPNOTSUPP)"
        },
    },
)

_OPEN_MASK = "IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE | IBV_QP_OPEN_ATTR_CONTEXT"

ibv_open_qp = Verb(
    name="ibv_open_qp",
    man="ibv_open_qp(3)",
    prototype="struct ibv_qp *ibv_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *qp_open_attr);",
    returns=RETURNS_POINTER,
    summary="open a handle to an existing shareable (XRC receive) QP by number through its XRC domain",
    params=(
        CONTEXT,
        Param(
            "qp_open_attr",
            "struct ibv_qp_open_attr *",
            default={
                "comp_mask": _OPEN_MASK,
                "qp_num": 0,
                "xrcd": Need("xrcd"),
                "qp_context": 0x99,
                "qp_type": "IBV_QPT_XRC_RECV",
            },
            flags="ibv_qp_open_attr_mask",
            doc="comp_mask from ibv_qp_open_attr_mask (libibverbs needs NUM, XRCD and TYPE); the page's struct "
            "listing garbles the xrcd member",
        ),
    ),
    errors=(
        Error(
            "EINVAL",
            "no QP of that number and type exists in the domain (NOTES), or comp_mask lacks NUM, XRCD "
            "or TYPE (libibverbs)",
            covered_by=("missing-qp-refused", "wrong-type-refused", "comp-mask-needs-num-xrcd-type"),
        ),
        Error(
            "EOPNOTSUPP",
            "the device has no XRC (libibverbs' default op; not on the page)",
            untestable="the not-implemented answer: every claim needs an XRC domain, so on such a device each is "
            "reported unsupported naming IBV_DEVICE_XRC",
        ),
    ),
    claims=(
        Claim(
            "opens-existing",
            "gated",
            "an XRC receive QP is opened by number through its domain: the handle has "
            "that number, type and the qp_context given",
            "DESCRIPTION, RETURN VALUE",
            variant="XRC_RECV-by-number",
            steps=(Step("ibv_create_qp_ex", _XRC_RECV_QP, name="tgt"),),
            call={"qp_open_attr.qp_num": Ref("tgt", "qp_num")},
            params={
                "gate": _XRC,
                "only": "advertised",
                "advertised": {
                    "expect": (
                        Expect("ret.qp_num", "==", Ref("tgt", "ret.qp_num")),
                        Expect("ret.qp_type", "==", "IBV_QPT_XRC_RECV"),
                        Expect("ret.qp_context", "==", 0x99),
                    )
                },
            },
        ),
        Claim(
            "missing-qp-refused",
            "refused",
            "a number with no QP in the domain fails",
            "NOTES",
            needs=(_XRC,),
            variant="qp_num-0x123456-in-empty-domain",
            call={"qp_open_attr.qp_num": 0x123456},
            errnos=("EINVAL",),
            layer="kernel",
        ),
        Claim(
            "wrong-type-refused",
            "refused",
            "an existing QP asked for with another type fails",
            "NOTES",
            needs=(_XRC,),
            variant="XRC_RECV-asked-as-RC",
            steps=(Step("ibv_create_qp_ex", _XRC_RECV_QP, name="tgt"),),
            call={"qp_open_attr": {"qp_num": Ref("tgt", "qp_num"), "qp_type": "IBV_QPT_RC"}},
            errnos=("EINVAL",),
            layer="kernel",
        ),
        Claim(
            "comp-mask-needs-num-xrcd-type",
            "refused",
            "a request that does not mark qp_num, xrcd and qp_type valid cannot name a QP and is refused",
            "DESCRIPTION",
            needs=(_XRC,),
            over={
                ("without", "comp_mask"): (
                    ("TYPE", "IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD"),
                    ("NUM", "IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE"),
                )
            },
            variant="without-{without}",
            steps=(Step("ibv_create_qp_ex", _XRC_RECV_QP, name="tgt"),),
            call={"qp_open_attr": {"qp_num": Ref("tgt", "qp_num"), "comp_mask": Var("comp_mask")}},
            errnos=("EINVAL",),
            layer="libibverbs",
        ),
        Claim(
            "destroy-drops-one-reference",
            "gated",
            "ibv_destroy_qp of an opened handle returns 0 and leaves the QP "
            "itself alive (its creator can still query it)",
            "DESCRIPTION",
            variant="close-opened-handle",
            steps=(Step("ibv_create_qp_ex", _XRC_RECV_QP, name="tgt"),),
            call={"qp_open_attr.qp_num": Ref("tgt", "qp_num")},
            params={
                "gate": _XRC,
                "only": "advertised",
                "advertised": {
                    "then": (Step("ibv_destroy_qp", {"qp": Ref("call")}), Step("ibv_query_qp", {"qp": Ref("tgt")}))
                },
            },
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"), Resource("xrcd", role="qp_open_attr.xrcd")),
        produces=(Resource("qp"),),
        destroyed_by="ibv_destroy_qp",
    ),
    tables={"not_supported": {"EOPNOTSUPP": "the provider does not implement ibv_open_qp (libibverbs' default op)"}},
    undefined=("a NULL or closed xrcd with IBV_QP_OPEN_ATTR_XRCD set", "posting on an opened XRC receive handle"),
)

_MQP = "ibv_modify_qp(3)"

# ibv_modify_qp(3) NOTES, the tables: the attributes that must be given on each step
# Reset -> Init -> RTR -> RTS, per QP transport service type (IBV_QP_STATE included).
_MODIFY_QP_REQUIRED = {
    "RC": {
        "RESET>INIT": ("IBV_QP_STATE", "IBV_QP_PKEY_INDEX", "IBV_QP_PORT", "IBV_QP_ACCESS_FLAGS"),
        "INIT>RTR": (
            "IBV_QP_STATE",
            "IBV_QP_AV",
            "IBV_QP_PATH_MTU",
            "IBV_QP_DEST_QPN",
            "IBV_QP_RQ_PSN",
            "IBV_QP_MAX_DEST_RD_ATOMIC",
            "IBV_QP_MIN_RNR_TIMER",
        ),
        "RTR>RTS": (
            "IBV_QP_STATE",
            "IBV_QP_SQ_PSN",
            "IBV_QP_MAX_QP_RD_ATOMIC",
            "IBV_QP_RETRY_CNT",
            "IBV_QP_RNR_RETRY",
            "IBV_QP_TIMEOUT",
        ),
    },
    "UC": {
        "RESET>INIT": ("IBV_QP_STATE", "IBV_QP_PKEY_INDEX", "IBV_QP_PORT", "IBV_QP_ACCESS_FLAGS"),
        "INIT>RTR": ("IBV_QP_STATE", "IBV_QP_AV", "IBV_QP_PATH_MTU", "IBV_QP_DEST_QPN", "IBV_QP_RQ_PSN"),
        "RTR>RTS": ("IBV_QP_STATE", "IBV_QP_SQ_PSN"),
    },
    "UD": {
        "RESET>INIT": ("IBV_QP_STATE", "IBV_QP_PKEY_INDEX", "IBV_QP_PORT", "IBV_QP_QKEY"),
        "INIT>RTR": ("IBV_QP_STATE",),
        "RTR>RTS": ("IBV_QP_STATE", "IBV_QP_SQ_PSN"),
    },
    "RAW_PACKET": {
        "RESET>INIT": ("IBV_QP_STATE", "IBV_QP_PORT"),
        "INIT>RTR": ("IBV_QP_STATE",),
        "RTR>RTS": ("IBV_QP_STATE",),
    },
}

# What the IB QP state machine ALSO accepts (optional attributes) on the same steps. The page
# does not list these; paraphrased from the IBTA QP state transition table as the Linux kernel
# encodes it (qp_state_table). Anything neither required nor optional on a step is not allowed.
_MODIFY_QP_OPTIONAL = {
    "RC": {
        "RESET>INIT": (),
        "INIT>RTR": ("IBV_QP_ALT_PATH", "IBV_QP_ACCESS_FLAGS", "IBV_QP_PKEY_INDEX"),
        "RTR>RTS": (
            "IBV_QP_CUR_STATE",
            "IBV_QP_ALT_PATH",
            "IBV_QP_ACCESS_FLAGS",
            "IBV_QP_MIN_RNR_TIMER",
            "IBV_QP_PATH_MIG_STATE",
        ),
    },
    "UC": {
        "RESET>INIT": (),
        "INIT>RTR": ("IBV_QP_ALT_PATH", "IBV_QP_ACCESS_FLAGS", "IBV_QP_PKEY_INDEX"),
        "RTR>RTS": ("IBV_QP_CUR_STATE", "IBV_QP_ALT_PATH", "IBV_QP_ACCESS_FLAGS", "IBV_QP_PATH_MIG_STATE"),
    },
    "UD": {
        "RESET>INIT": (),
        "INIT>RTR": ("IBV_QP_PKEY_INDEX", "IBV_QP_QKEY"),
        "RTR>RTS": ("IBV_QP_CUR_STATE", "IBV_QP_QKEY"),
    },
    "RAW_PACKET": {"RESET>INIT": (), "INIT>RTR": (), "RTR>RTS": ("IBV_QP_RATE_LIMIT",)},
}

# Legal state changes (same source). RESET -> ERR is absent from the kernel's table, so it is
# neither promised nor checked; every other state reaches RESET and ERR.
_QP_LEGAL_MOVES = {
    "RESET": ("RESET", "INIT"),
    "INIT": ("RESET", "INIT", "RTR", "ERR"),
    "RTR": ("RESET", "RTS", "ERR"),
    "RTS": ("RESET", "RTS", "SQD", "ERR"),
    "SQD": ("RESET", "RTS", "SQD", "ERR"),
    "SQE": ("RESET", "RTS", "ERR"),
    "ERR": ("RESET", "ERR"),
}

# Values out of each attribute's range: (mask flag, ibv_qp_attr field, bad value[, the name the
# case id gives the field]). A string value names a device limit (`limits` below), optionally +1.
_MODIFY_QP_OUT_OF_RANGE = (
    ("IBV_QP_PORT", "port_num", "phys_port_cnt+1"),
    ("IBV_QP_PORT", "port_num", 0),
    ("IBV_QP_PKEY_INDEX", "pkey_index", "pkey_tbl_len"),
    ("IBV_QP_PATH_MTU", "path_mtu", 0),
    ("IBV_QP_PATH_MTU", "path_mtu", 6),
    ("IBV_QP_TIMEOUT", "timeout", 32),
    ("IBV_QP_RETRY_CNT", "retry_cnt", 8),
    ("IBV_QP_RNR_RETRY", "rnr_retry", 8),
    ("IBV_QP_MIN_RNR_TIMER", "min_rnr_timer", 32),
    ("IBV_QP_MAX_QP_RD_ATOMIC", "max_rd_atomic", "max_qp_init_rd_atom+1"),
    ("IBV_QP_MAX_DEST_RD_ATOMIC", "max_dest_rd_atomic", "max_qp_rd_atom+1"),
    ("IBV_QP_AV", "ah_attr.grh.sgid_index", "gid_tbl_len", "ah_attr.sgid_index"),
    ("IBV_QP_AV", "ah_attr.port_num", "phys_port_cnt+1"),
)

# A loopback address vector to this very port, its GRH from the device's own GID.
_LOOPBACK_AV = {
    "is_global": 1,
    "dlid": Dev("port.lid"),
    "sl": 0,
    "port_num": Dev("port_num"),
    "grh.dgid": Dev("gid"),
    "grh.sgid_index": Dev("gid_index"),
    "grh.hop_limit": 64,
}

# The valid value of each attribute: distinctive, so a failed call that still applied some
# of them shows in the next read-back (none equals what a fresh QP reports).
_QP_ATTR_VALUES: dict[str, dict[str, Value]] = {
    "IBV_QP_STATE": {"qp_state": "{to}"},
    "IBV_QP_CUR_STATE": {"cur_qp_state": "{from}"},
    "IBV_QP_EN_SQD_ASYNC_NOTIFY": {"en_sqd_async_notify": 1},
    "IBV_QP_ACCESS_FLAGS": {
        "qp_access_flags": "IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ"
    },
    "IBV_QP_PKEY_INDEX": {"pkey_index": 0},
    "IBV_QP_PORT": {"port_num": Dev("port_num")},
    "IBV_QP_QKEY": {"qkey": 0x1234},
    "IBV_QP_AV": {"ah_attr": _LOOPBACK_AV},
    "IBV_QP_PATH_MTU": {"path_mtu": Dev("port.active_mtu")},
    "IBV_QP_TIMEOUT": {"timeout": 14},
    "IBV_QP_RETRY_CNT": {"retry_cnt": 6},
    "IBV_QP_RNR_RETRY": {"rnr_retry": 5},
    "IBV_QP_RQ_PSN": {"rq_psn": 0x1A2B},
    "IBV_QP_MAX_QP_RD_ATOMIC": {"max_rd_atomic": 1},
    "IBV_QP_ALT_PATH": {
        "alt_ah_attr": _LOOPBACK_AV,
        "alt_port_num": Dev("port_num"),
        "alt_pkey_index": 0,
        "alt_timeout": 14,
    },
    "IBV_QP_MIN_RNR_TIMER": {"min_rnr_timer": 12},
    "IBV_QP_SQ_PSN": {"sq_psn": 0x2B3C},
    "IBV_QP_MAX_DEST_RD_ATOMIC": {"max_dest_rd_atomic": 1},
    "IBV_QP_PATH_MIG_STATE": {"path_mig_state": "IBV_MIG_MIGRATED"},
    "IBV_QP_CAP": {"cap": {"max_send_wr": 4, "max_recv_wr": 4, "max_send_sge": 1, "max_recv_sge": 1}},
    "IBV_QP_DEST_QPN": {"dest_qp_num": Ref("self", "qp_num")},  # loopback: the QP talks to itself
    "IBV_QP_RATE_LIMIT": {"rate_limit": 0},
}
_QP_MASK_FLAGS = tuple(_QP_ATTR_VALUES)
_QP_QUERY_ALL = " | ".join(flag for flag in _QP_MASK_FLAGS if flag != "IBV_QP_RATE_LIMIT")
_AV_FIELDS = ("dlid", "sl", "src_path_bits", "static_rate", "is_global", "port_num")
_GRH_FIELDS = ("grh.dgid", "grh.sgid_index", "grh.hop_limit", "grh.traffic_class", "grh.flow_label")

# What a read-back compares: the state and every attribute. pyverbs' alt_ah_attr getter
# copied port_num from ah_attr; alt_port_num holds the alternate port, so it is left out.
_QP_SNAPSHOT_FIELDS = (
    "qp_state",
    "cur_qp_state",
    "path_mtu",
    "path_mig_state",
    "qkey",
    "rq_psn",
    "sq_psn",
    "dest_qp_num",
    "qp_access_flags",
    "pkey_index",
    "alt_pkey_index",
    "en_sqd_async_notify",
    "sq_draining",
    "max_rd_atomic",
    "max_dest_rd_atomic",
    "min_rnr_timer",
    "port_num",
    "timeout",
    "retry_cnt",
    "rnr_retry",
    "alt_port_num",
    "alt_timeout",
    "rate_limit",
    *(f"ah_attr.{f}" for f in _AV_FIELDS + _GRH_FIELDS),
    *(f"alt_ah_attr.{f}" for f in _AV_FIELDS + _GRH_FIELDS if f != "port_num"),
    *(f"cap.{f}" for f in ("max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data")),
)
_IB_ONLY = {"transports": IB_TRANSPORTS, "also": (_IBTA_QP_TABLE, _KERNEL_QP_TABLE)}

ibv_modify_qp = Verb(
    name="ibv_modify_qp",
    man=_MQP,
    prototype="int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);",
    returns=RETURNS_ERRNO,
    summary="change the attributes of a QP, and with them its state",
    params=(
        Param("qp", "struct ibv_qp *", "in", default=Need("qp"), doc="the QP to modify"),
        Param("attr", "struct ibv_qp_attr *", "in", default={}, doc="new values; only fields attr_mask names"),
        Param("attr_mask", "int", "in", default=0, flags="ibv_qp_attr_mask", doc="0 or an OR of IBV_QP_* bits"),
    ),
    errors=(
        Error(
            "errno",
            "any attribute or the mask is invalid (NOTES); the page names no specific errno",
            covered_by=(
                "required-attrs",
                "forbidden-attrs",
                "illegal-transitions",
                "unknown-mask-bits",
                "out-of-range",
                "resize-cap",
                "alt-path",
                "grh-required",
            ),
        ),
    ),
    claims=(
        Claim(
            "minimal-attrs",
            "state-table",
            "each step Reset>Init>RTR>RTS succeeds with exactly the required "
            "attributes of the QP type, and the QP is then in the new state",
            "NOTES",
            params={"rule": "minimal"},
            **_IB_ONLY,
        ),
        Claim(
            "required-attrs",
            "state-table",
            "a step missing one required attribute fails and leaves the QP untouched",
            "NOTES",
            params={"rule": "without-required"},
            **_IB_ONLY,
        ),
        Claim(
            "optional-attrs",
            "state-table",
            "an attribute the state machine allows on a step may be added to the required set",
            "NOTES",
            params={"rule": "optional"},
            **_IB_ONLY,
        ),
        Claim(
            "forbidden-attrs",
            "state-table",
            "an attribute that is neither required nor allowed on a step makes "
            "the mask invalid: the call fails and modifies nothing",
            "NOTES",
            params={"rule": "forbidden"},
            **_IB_ONLY,
        ),
        Claim(
            "illegal-transitions",
            "state-table",
            "a state change the QP state machine does not have is rejected and modifies nothing",
            "NOTES",
            params={"rule": "illegal"},
            **_IB_ONLY,
        ),
        Claim(
            "to-reset",
            "state-table",
            "a QP in any state can be moved to Reset",
            "DESCRIPTION",
            params={"rule": "to-state", "target": "RESET"},
            also=(_IBTA_QP_TABLE,),
        ),
        Claim(
            "to-err",
            "state-table",
            "a QP in Init, RTR, RTS or Error can be moved to Error",
            "DESCRIPTION",
            params={"rule": "to-state", "target": "ERR"},
            also=(_IBTA_QP_TABLE,),
        ),
        Claim(
            "zero-mask",
            "state-table",
            "attr_mask may be 0: in a state the QP may stay in (all but RTR) the call succeeds and changes nothing",
            "DESCRIPTION",
            params={"rule": "zero-mask"},
            also=(_IBTA_QP_TABLE,),
        ),
        Claim(
            "unknown-mask-bits",
            "state-table",
            "a mask bit outside the documented flags makes the mask invalid: the call fails and modifies nothing",
            "DESCRIPTION, NOTES",
            params={"rule": "unknown-bits", "bits": (21, 22, 23, 24, 26, 30), "step": "RESET>INIT"},
            layer="kernel",
            also=(Source("kernel", "drivers/infiniband/core/uverbs_cmd.c modify_qp()"),),
        ),
        Claim(
            "out-of-range",
            "state-table",
            "an attribute value out of its range is invalid: the call fails and modifies nothing",
            "NOTES",
            params={"rule": "out-of-range"},
            **_IB_ONLY,
        ),
        Claim(
            "resize-cap",
            "state-table",
            "IBV_QP_CAP (resizing) works only on devices that advertise IBV_DEVICE_RESIZE_MAX_WR",
            "NOTES",
            layer="kernel",
            params={
                "rule": "resize-cap",
                "gate": Cap("attr.device_cap_flags&IBV_DEVICE_RESIZE_MAX_WR"),
                "grown": {
                    "max_send_wr": 8,
                    "max_recv_wr": 8,
                    "max_send_sge": 1,
                    "max_recv_sge": 1,
                    "max_inline_data": 0,
                },
            },
            **_IB_ONLY,
        ),
        Claim(
            "alt-path",
            "state-table",
            "IBV_QP_ALT_PATH works only on devices that advertise IBV_DEVICE_AUTO_PATH_MIG",
            "NOTES",
            params={
                "rule": "alt-path",
                "gate": Cap("attr.device_cap_flags&IBV_DEVICE_AUTO_PATH_MIG"),
                "reflect": ("alt_port_num", "alt_pkey_index", "alt_timeout"),
            },
            **_IB_ONLY,
        ),
        Claim(
            "grh-required",
            "state-table",
            "where the port sets IBV_QPF_GRH_REQUIRED, an address vector without a GRH is refused",
            "NOTES",
            params={"rule": "grh-required", "gate": Cap("port.flags&IBV_QPF_GRH_REQUIRED")},
            **_IB_ONLY,
        ),
        Claim(
            "state-outside-enum-refused",
            "refused",
            "a qp_state outside enum ibv_qp_state makes the attributes invalid: the call fails",
            "NOTES",
            over={"value": (7, 42)},
            variant="RC-in-RESET-qp_state-{value}",
            call={"attr": {"qp_state": Var("value")}, "attr_mask": "IBV_QP_STATE"},
            errnos=("EINVAL",),
            layer="kernel",
            also=(
                Source(
                    "kernel", "drivers/infiniband/core/uverbs_cmd.c modify_qp(): a state beyond IB_QPS_ERR is EINVAL"
                ),
            ),
        ),
        Claim(
            "rts-to-rts-optional",
            "succeeds",
            "in RTS an attribute the state machine allows there can be changed "
            "(RTS to RTS), and ibv_query_qp then reports it",
            "DESCRIPTION",
            over={
                ("qp_type", "field", "flag", "value"): (
                    ("IBV_QPT_RC", "min_rnr_timer", "IBV_QP_MIN_RNR_TIMER", 20),
                    ("IBV_QPT_UD", "qkey", "IBV_QP_QKEY", 0x2222),
                )
            },
            variant="{qp_type}-{field}-{value}",
            call={
                "qp": Need("qp", state="RTS", spec={"qp_type": Var("qp_type")}),
                "attr": {"qp_state": "IBV_QPS_RTS", "{field}": Var("value")},
                "attr_mask": "IBV_QP_STATE | {flag}",
            },
            params={
                "then": (
                    Step(
                        "ibv_query_qp",
                        {"qp": Need("qp", state="RTS", spec={"qp_type": Var("qp_type")}), "attr_mask": "{flag}"},
                        name="q",
                    ),
                )
            },
            expect=(Expect("q.attr.{field}", "==", Var("value"), ref="ibv_query_qp(3) NOTES"),),
            **_IB_ONLY,
        ),
    ),
    contract=Contract(
        requires=(Resource("qp", role="qp"),),
        moves=(
            Transition("qp", "RESET", "INIT"),
            Transition("qp", "INIT", "RTR"),
            Transition("qp", "RTR", "RTS"),
            Transition("qp", "any", "RESET"),
            Transition("qp", "any", "ERR"),
        ),
    ),
    tables={
        "qp_types": ("RC", "UC", "UD", "RAW_PACKET"),
        "walk": {
            "path": ("RESET", "INIT", "RTR", "RTS"),
            "state_flag": "IBV_QP_STATE",
            "state_field": "qp_state",
            "state_enum": "ibv_qp_state",
            "through": {"ERR": "RTS"},  # Error is reached from RTS
            "type_var": "qp_type",
            "required": _MODIFY_QP_REQUIRED,
            "values": _QP_ATTR_VALUES,
            "object_param": "qp",
            "attr_param": "attr",
            "mask_param": "attr_mask",
        },
        "optional": _MODIFY_QP_OPTIONAL,
        "legal_moves": _QP_LEGAL_MOVES,
        # States a check can start from (SQD/SQE need traffic or a drain: not reached here).
        "start_states": ("RESET", "INIT", "RTR", "RTS", "ERR"),
        "mask_flags": _QP_MASK_FLAGS,
        # IBV_QP_CAP and IBV_QP_ALT_PATH depend on advertised capabilities: their own claims cover them.
        "capability_flags": ("IBV_QP_CAP", "IBV_QP_ALT_PATH"),
        # An optional attribute that is meaningful only with a capability.
        "flag_needs": {
            "IBV_QP_PATH_MIG_STATE": (Cap("attr.device_cap_flags&IBV_DEVICE_AUTO_PATH_MIG"),),
            "IBV_QP_RATE_LIMIT": (Cap("attr_ex.packet_pacing_caps.qp_rate_limit_max"),),
        },
        "out_of_range": _MODIFY_QP_OUT_OF_RANGE,
        "limits": {
            "phys_port_cnt": "attr.phys_port_cnt",
            "pkey_tbl_len": "port.pkey_tbl_len",
            "gid_tbl_len": "port.gid_tbl_len",
            "max_qp_rd_atom": "attr.max_qp_rd_atom",
            "max_qp_init_rd_atom": "attr.max_qp_init_rd_atom",
        },
        # Fields that are 8 or 16 bits wide in struct ibv_qp_attr / ibv_ah_attr.
        "field_max": {
            "port_num": 0xFF,
            "max_rd_atomic": 0xFF,
            "max_dest_rd_atomic": 0xFF,
            "pkey_index": 0xFFFF,
            "ah_attr.grh.sgid_index": 0xFF,
            "ah_attr.port_num": 0xFF,
        },
        "states": {f"IBV_QPS_{s}": i for i, s in enumerate(("RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"))},
        "snapshot": {
            "verb": "ibv_query_qp",
            "object_param": "qp",
            "args": {"attr_mask": _QP_QUERY_ALL},
            "out": "attr",
            "fields": _QP_SNAPSHOT_FIELDS,
            "global_only": {"ah_attr": "is_global", "alt_ah_attr": "is_global"},
        },
    },
)

_DET = "det_modify_qp(3)"

det_modify_qp = Verb(
    name="det_modify_qp",
    man=_DET,
    prototype=(
        "int det_modify_qp(struct det_qp * const qp, const struct det_qp_mod * const qp_mod, "
        "struct det_qp_attr * const qp_attr);"
    ),
    returns=RETURNS_ERRNO,
    summary="change a DET queue pair's attributes and move it to a new state",
    family="det",
    counterpart="ibv_modify_qp",
    params=(
        Param("qp", "struct det_qp * const", "in", doc="an existing queue pair"),
        Param("qp_mod", "const struct det_qp_mod * const", "in", doc="the new state and attributes"),
        Param(
            "qp_attr",
            "struct det_qp_attr * const",
            "out",
            nullable=True,
            doc="optional: receives the attributes actually in effect",
        ),
    ),
    errors=(
        Error(
            "EAGAIN",
            "another thread is modifying the QP (kernel-mode callers only)",
            untestable="applies to kernel-mode callers only; pytest-rdma calls from user mode",
        ),
        Error(
            "EBUSY",
            "the requested send or receive queue size is below the work requests queued",
            covered_by=("shrink-below-queued",),
        ),
        Error("EDQUOT", "the attributes would exceed the system's pinned-page quota", covered_by=("pinned-quota",)),
        Error("EFAULT", "an invalid address was passed (user-mode callers only)", covered_by=("bad-address",)),
        Error("EINVAL", "an invalid parameter was passed", covered_by=("invalid-param",)),
        Error(
            "ENOMEM",
            "not enough memory to modify the QP",
            untestable="memory exhaustion cannot be provoked deterministically",
        ),
        Error("EPERM", "the requested state transition is not permitted", covered_by=("illegal-transition",)),
    ),
    claims=(
        Claim(
            "moves-state",
            "counterpart",
            "on success the QP is in the state qp_mod requested",
            "DESCRIPTION",
            params={"variants": ("to-each-state",), "counterpart_claim": "minimal-attrs"},
        ),
        Claim(
            "reports-actual-attrs",
            "counterpart",
            "when qp_attr is given it receives the attributes in effect, "
            "which may differ from those requested; NULL is allowed",
            "ARGUMENTS, DESCRIPTION",
            params={"variants": ("qp_attr-given", "qp_attr-NULL")},
        ),
        Claim(
            "illegal-transition",
            "counterpart",
            "a transition that is not permitted fails with EPERM",
            "RETURN VALUES",
            params={"variants": ("EPERM",), "counterpart_claim": "illegal-transitions"},
        ),
        Claim(
            "invalid-param",
            "counterpart",
            "an invalid parameter fails with EINVAL",
            "RETURN VALUES",
            params={"variants": ("EINVAL",), "counterpart_claim": "out-of-range"},
        ),
        Claim(
            "shrink-below-queued",
            "counterpart",
            "shrinking a queue below its queued work requests fails with EBUSY",
            "RETURN VALUES",
            params={"variants": ("send-queue", "recv-queue")},
        ),
        Claim(
            "pinned-quota",
            "counterpart",
            "attributes beyond the pinned-page quota fail with EDQUOT",
            "RETURN VALUES",
            params={"variants": ("EDQUOT",)},
        ),
        Claim(
            "bad-address",
            "counterpart",
            "an invalid qp_mod or qp_attr address fails with EFAULT",
            "RETURN VALUES",
            params={"variants": ("qp_mod", "qp_attr")},
        ),
    ),
    contract=Contract(requires=(Resource("det_qp", role="qp"),), moves=(Transition("det_qp", "any", "requested"),)),
)

ibv_query_qp = Verb(
    name="ibv_query_qp",
    man="ibv_query_qp(3)",
    prototype="int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, "
    "struct ibv_qp_init_attr *init_attr);",
    returns=RETURNS_ERRNO,
    summary="read a QP's current attributes and its init attributes; attr_mask is a minimum hint",
    params=(
        Param("qp", "struct ibv_qp *", default=Need("qp", spec={"qp_type": Var("qp_type")})),
        Param("attr", "struct ibv_qp_attr *", "out"),
        Param("attr_mask", "int", default="IBV_QP_STATE", flags="ibv_qp_attr_mask", doc="at least these"),
        Param("init_attr", "struct ibv_qp_init_attr *", "out"),
    ),
    claims=(
        Claim(
            "fresh-qp",
            "succeeds",
            "a new QP reads back in RESET with the qp_type and sq_sig_all it was created with",
            "DESCRIPTION",
            over={"qp_type": _QP_TYPES},
            variant="{qp_type}-after-create",
            call={"qp": Need("qp", spec={"qp_type": Var("qp_type"), "qp_init_attr.sq_sig_all": 1})},
            expect=(
                Expect("attr.qp_state", "==", "IBV_QPS_RESET"),
                Expect("init_attr.qp_type", "==", Var("qp_type")),
                Expect("init_attr.sq_sig_all", "==", 1),
            ),
        ),
        Claim(
            "reports-state-set",
            "succeeds",
            "after ibv_modify_qp moved a QP to a state, ibv_query_qp reports that "
            "state (checks that read a QP back rely on it)",
            "DESCRIPTION",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"), "state": ("INIT", "RTR", "RTS", "ERR")},
            variant="{qp_type}-in-{state}",
            call={"qp": Need("qp", state="{state}", spec={"qp_type": Var("qp_type")})},
            expect=(Expect("attr.qp_state", "==", "IBV_QPS_{state}"),),
        ),
        Claim(
            "init-attr-reports-creation",
            "succeeds",
            "init_attr reports what the QP was created with: its qp_context, CQs and (no) SRQ",
            "DESCRIPTION",
            over={"qp_type": ("IBV_QPT_RC",)},
            variant="{qp_type}-context-0x77",
            steps=(Step("ibv_create_qp", {"qp_init_attr.qp_context": 0x77}, name="made"),),
            call={"qp": Ref("made")},
            expect=(
                Expect("init_attr.qp_context", "==", 0x77),
                Expect("init_attr.send_cq", "==", Ref("made", "ret.send_cq")),
                Expect("init_attr.recv_cq", "==", Ref("made", "ret.recv_cq")),
                Expect("init_attr.srq", "zero"),
            ),
        ),
        Claim(
            "mask-is-a-hint",
            "succeeds",
            "attr_mask only names the minimum to report: asking for any one attribute is a valid query",
            "NOTES",
            over={
                ("name", "flag"): tuple(
                    (f.removeprefix("IBV_QP_"), f) for f in _QP_MASK_FLAGS if f != "IBV_QP_RATE_LIMIT"
                )
            },
            variant="RC-in-RESET-{name}",
            call={"attr_mask": Var("flag")},
        ),
        Claim(
            "updates-cached-state",
            "untestable",
            "a query that includes IBV_QP_STATE refreshes the state the QP "
            "object caches (after the device moved it by itself)",
            "DESCRIPTION",
            untestable="needs an error completion to move the QP without ibv_modify_qp: left to the data-path section",
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"vars": {"qp_type": "IBV_QPT_RC"}},
    undefined=(
        "reading attributes never set for the QP's type and state (their values are unspecified)",
        "expecting qp_state, path_mig_state, sq_draining or ah_attr (with APM) to be equal across calls",
    ),
)

ibv_destroy_qp = Verb(
    name="ibv_destroy_qp",
    man="ibv_create_qp(3)",
    prototype="int ibv_destroy_qp(struct ibv_qp *qp);",
    returns=RETURNS_ERRNO,
    summary="destroy a QP; 0 or an errno",
    params=(Param("qp", "struct ibv_qp *", default=Need("qp", spec={"qp_type": Var("qp_type")})),),
    claims=(
        Claim(
            "destroy-returns-zero",
            "succeeds",
            "destroying an idle QP (no multicast attachment) returns 0",
            "RETURN VALUE",
            over={"qp_type": _QP_TYPES},
            variant="{qp_type}-fresh",
        ),
        Claim(
            "destroy-fails-mcast-attached",
            "refused",
            "destroy fails while the QP is attached to a multicast group, and succeeds after detaching",
            "NOTES",
            over={"qp_type": ("IBV_QPT_UD",)},
            variant="{qp_type}-attached-to-ff0e::1234",
            needs=(Cap("attr.max_mcast_grp"), Cap("attr.max_mcast_qp_attach")),
            steps=(
                Step(
                    "ibv_attach_mcast",
                    {
                        "qp": Need("qp", spec={"qp_type": Var("qp_type")}),
                        "gid": {"raw": bytes.fromhex("ff0e" + "00" * 12 + "1234")},
                        "lid": 0,
                    },
                ),
            ),
            params={
                "then": (
                    Step(
                        "ibv_detach_mcast",
                        {
                            "qp": Need("qp", spec={"qp_type": Var("qp_type")}),
                            "gid": {"raw": bytes.fromhex("ff0e" + "00" * 12 + "1234")},
                            "lid": 0,
                        },
                    ),
                    Step("ibv_destroy_qp", {"qp": Need("qp", spec={"qp_type": Var("qp_type")})}),
                )
            },
        ),
        Claim(
            "destroy-in-any-state",
            "succeeds",
            "a QP is destroyed with 0 whatever its state",
            "DESCRIPTION",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"), "state": ("INIT", "RTR", "RTS", "ERR")},
            variant="{qp_type}-in-{state}",
            call={"qp": Need("qp", state="{state}", spec={"qp_type": Var("qp_type")})},
        ),
        Claim(
            "releases-pd-and-cq",
            "succeeds",
            "once the QP is destroyed its CQ and its PD are no longer held: both are destroyed with 0",
            "DESCRIPTION",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD")},
            variant="{qp_type}-then-cq-and-pd",
            params={"then": (Step("ibv_destroy_cq", {"cq": Need("cq")}), Step("ibv_dealloc_pd", {"pd": Need("pd")}))},
            also=(Source("man", "ibv_create_cq(3)", "RETURN VALUE"), Source("man", "ibv_alloc_pd(3)", "DESCRIPTION")),
        ),
    ),
    errors=(
        Error(
            "EBUSY",
            "the QP is still attached to a multicast group (NOTES; the errno is the kernel's)",
            covered_by=("destroy-fails-mcast-attached",),
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),), destroys=(Resource("qp", role="qp"),)),
    undefined=(
        "destroying a QP twice",
        "using a QP after destroying it",
        "destroying a QP while another thread posts or polls for it",
    ),
)

ibv_query_qp_data_in_order = Verb(
    name="ibv_query_qp_data_in_order",
    man="ibv_query_qp_data_in_order(3)",
    prototype="int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);",
    returns=RETURNS_VALUE,
    summary="1 when the data of one WQE of kind op lands in order at this QP's side, else 0 (never an error)",
    params=(
        Param("qp", "struct ibv_qp *", default=Need("qp", spec={"qp_type": Var("qp_type")})),
        Param("op", "enum ibv_wr_opcode", default="IBV_WR_RDMA_WRITE", flags="ibv_wr_opcode"),
        Param("flags", "uint32_t", default=0, doc="must be 0"),
    ),
    claims=(
        Claim(
            "answers-zero-or-one",
            "relation",
            "the answer is 1 or 0, for any QP and each of the three operation kinds the page defines it for",
            "RETURN VALUE",
            over={
                "qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"),
                "state": ("RESET", "INIT"),
                ("kind", "op"): (
                    ("RDMA_READ", "IBV_WR_RDMA_READ"),
                    ("RDMA_WRITE", "IBV_WR_RDMA_WRITE"),
                    ("SEND", "IBV_WR_SEND"),
                ),
            },
            variant="{qp_type}-in-{state}-{kind}",
            steps=(
                Step(
                    "ibv_query_qp_data_in_order",
                    {"qp": Need("qp", state="{state}", spec={"qp_type": Var("qp_type")}), "op": Var("op")},
                    name="r",
                    expect="any",
                ),
            ),
            params={"relations": (("r:ret", ">=", 0), ("r:ret", "<=", 1))},
        ),
        Claim(
            "reader-sees-whole-wqe",
            "untestable",
            "when 1, a CPU reader that sees the last byte of one WQE's data has seen all of it",
            "NOTES",
            untestable="needs RDMA writes and a polling reader: left to the data-path section",
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"vars": {"qp_type": "IBV_QPT_RC"}, "needs": {"qp_type": _QP_TYPE_NEEDS}},
    undefined=(
        "flags other than 0",
        "op values other than RDMA_READ, RDMA_WRITE and SEND",
        "using the answer to order different WQEs",
    ),
)

_PACING = Cap("attr_ex.packet_pacing_caps.qp_rate_limit_max")

ibv_modify_qp_rate_limit = Verb(
    name="ibv_modify_qp_rate_limit",
    man="ibv_modify_qp_rate_limit(3)",
    prototype="int ibv_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr);",
    returns=RETURNS_ERRNO,
    summary="set a QP's packet pacing: a maximum send rate in kbps (0: unlimited), burst and typical packet sizes",
    params=(
        Param("qp", "struct ibv_qp *", default=Need("qp", spec={"qp_type": Var("qp_type")})),
        Param(
            "attr",
            "struct ibv_qp_rate_limit_attr *",
            default={"rate_limit": Dev("attr_ex.packet_pacing_caps.qp_rate_limit_min")},
            doc="rate_limit kbps, max_burst_sz and typical_pkt_sz bytes (0: the device's default); comp_mask, "
            "which the page omits, must be 0",
        ),
    ),
    errors=(
        Error("EINVAL", "invalid arguments", covered_by=("rate-above-maximum-refused", "burst-without-rate-refused")),
        Error("EOPNOTSUPP", "the device does not implement packet pacing", covered_by=("refused-without-pacing",)),
        Error("ENOSYS", "the same, from old libibverbs", covered_by=("refused-without-pacing",)),
    ),
    claims=(
        Claim(
            "refused-without-pacing",
            "gated",
            "a device that advertises no packet pacing refuses the call as not implemented",
            "ERRORS",
            variant="RC-rate-1000kbps",
            errnos=("EOPNOTSUPP", "ENOSYS"),
            call={"attr.rate_limit": 1000},
            params={"gate": _PACING, "only": "not-advertised"},
        ),
        Claim(
            "rate-in-range",
            "gated",
            "a rate inside the advertised range, or 0 (no limit), is accepted on a QP in "
            "RTS; zero burst and packet sizes take the device's defaults",
            "DESCRIPTION",
            over={
                ("rate", "value"): (
                    ("min", Dev("attr_ex.packet_pacing_caps.qp_rate_limit_min")),
                    ("max", Dev("attr_ex.packet_pacing_caps.qp_rate_limit_max")),
                    ("unlimited", 0),
                )
            },
            variant="RAW_PACKET-in-RTS-rate-{rate}",
            call={
                "qp": Need("qp", state="RTS", spec={"qp_type": "IBV_QPT_RAW_PACKET"}),
                "attr": {"rate_limit": Var("value"), "max_burst_sz": 0, "typical_pkt_sz": 0},
            },
            needs=_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"],
            params={"gate": _PACING, "only": "advertised"},
        ),
        Claim(
            "rate-above-maximum-refused",
            "refused",
            "a rate above the advertised maximum is an invalid argument",
            "ERRORS",
            variant="RAW_PACKET-in-RTS-rate-max+1",
            errnos=("EINVAL",),
            needs=(_PACING, *_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"]),
            call={
                "qp": Need("qp", state="RTS", spec={"qp_type": "IBV_QPT_RAW_PACKET"}),
                "attr.rate_limit": Dev("attr_ex.packet_pacing_caps.qp_rate_limit_max", plus=1),
            },
        ),
        Claim(
            "burst-without-rate-refused",
            "refused",
            "burst and packet sizes shape a rate: given without one (rate 0) they are invalid arguments",
            "DESCRIPTION, ERRORS",
            variant="RAW_PACKET-rate-0-burst-1000",
            errnos=("EINVAL",),
            needs=(_PACING, *_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"]),
            call={
                "qp": Need("qp", state="RTS", spec={"qp_type": "IBV_QPT_RAW_PACKET"}),
                "attr": {"rate_limit": 0, "max_burst_sz": 1000},
            },
        ),
        Claim(
            "rate-enforced",
            "untestable",
            "while work is queued the QP sends no faster than rate_limit",
            "DESCRIPTION",
            untestable="needs timed traffic: left to the data-path section",
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"vars": {"qp_type": "IBV_QPT_RC"}, "needs": {"qp_type": _QP_TYPE_NEEDS}},
    undefined=("a QP in a state other than RTS (the page does not say)",),
)

_ECE_NOT_SUPPORTED = {
    "EOPNOTSUPP": "libibverbs or the provider does not support ECE (the page's meaning of EOPNOTSUPP)"
}

# Where the query fails (no ECE), the set that follows carries vendor 0 and is answered EOPNOTSUPP: unsupported.
_QUERY_ECE_FIRST = Step("ibv_query_ece", {"qp": Need("qp")}, name="e0", expect="any")
_AS_QUERIED = {"vendor_id": Ref("e0", "ece.vendor_id"), "options": Ref("e0", "ece.options")}

ibv_set_ece = Verb(
    name="ibv_set_ece",
    man="ibv_set_ece(3)",
    prototype="int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece);",
    returns=RETURNS_ERRNO,
    summary="set the enhanced connection establishment (ECE) options a QP uses while it is configured",
    params=(
        Param("qp", "struct ibv_qp *", default=Need("qp")),
        Param(
            "ece",
            "struct ibv_ece *",
            "inout",
            default={"vendor_id": 0, "options": 0, "comp_mask": 0},
            doc="vendor_id (IEEE OUI), options (vendor specific), comp_mask; the accepted options are written back",
        ),
    ),
    errors=(
        Error("EOPNOTSUPP", "libibverbs or the provider does not support ECE", covered_by=("vendor-zero-refused",)),
        Error("EINVAL", "the ECE options are invalid", covered_by=("vendor-zero-refused", "unknown-comp-mask-refused")),
        Error(
            "EINVAL",
            "the QP is invalid",
            untestable="an invalid QP is a stale or forged pointer: passing one is undefined behaviour",
        ),
    ),
    claims=(
        Claim(
            "vendor-zero-refused",
            "refused",
            "a vendor_id of 0 names no vendor: the request is refused (libibverbs answers before the provider)",
            "RETURN VALUE",
            variant="vendor_id-0",
            layer="libibverbs",
            errnos=("EOPNOTSUPP", "EINVAL"),
        ),
        Claim(
            "own-options-accepted",
            "succeeds",
            "on a fresh RC QP, setting back the vendor and options ibv_query_ece reports is accepted",
            "DESCRIPTION",
            variant="RC-in-RESET-query-then-set",
            steps=(_QUERY_ECE_FIRST,),
            call={"ece": _AS_QUERIED},
        ),
        Claim(
            "unknown-comp-mask-refused",
            "refused",
            "comp_mask says which fields are valid and no bit is defined: a set bit makes the options invalid",
            "RETURN VALUE",
            variant="comp_mask-bit0",
            steps=(_QUERY_ECE_FIRST,),
            call={"ece": {**_AS_QUERIED, "comp_mask": 1}},
            errnos=("EINVAL",),
        ),
        Claim(
            "used-while-configured",
            "untestable",
            "the options set take part in the later modify stages of the QP",
            "DESCRIPTION",
            untestable="observable only through a peer negotiating ECE over rdma_cm",
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"not_supported": _ECE_NOT_SUPPORTED},
    undefined=("setting options after the QP reached RTR or RTS (the page does not say)",),
)

ibv_query_ece = Verb(
    name="ibv_query_ece",
    man="ibv_query_ece(3)",
    prototype="int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece);",
    returns=RETURNS_ERRNO,
    summary="read a QP's current ECE state: vendor_id, options, comp_mask",
    params=(Param("qp", "struct ibv_qp *", default=Need("qp")), Param("ece", "struct ibv_ece *", "out")),
    errors=(
        Error(
            "EOPNOTSUPP",
            "libibverbs or the provider does not support ECE (the page repeats ibv_set_ece's text)",
            untestable="the not-implemented answer: where it comes, the claims are reported unsupported "
            "(tables['not_supported'])",
        ),
        Error(
            "EINVAL",
            "the QP or the ECE options are invalid",
            untestable="nothing a query is given can be invalid short of a forged pointer (undefined behaviour)",
        ),
    ),
    claims=(
        Claim(
            "reports-vendor",
            "succeeds",
            "a supporting provider reports its vendor id (an IEEE OUI, nonzero) and no comp_mask bit",
            "DESCRIPTION",
            variant="RC-in-RESET",
            expect=(Expect("ece.vendor_id", "nonzero"), Expect("ece.comp_mask", "==", 0)),
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"not_supported": _ECE_NOT_SUPPORTED},
)

_WQS = Cap("attr_ex.max_wq_type_rq")

_WQ_CAP = "attr_ex.raw_packet_caps&{cap}"
_WQ_FLAGS = (
    ("CVLAN_STRIPPING", "IBV_RAW_PACKET_CAP_CVLAN_STRIPPING"),
    ("SCATTER_FCS", "IBV_RAW_PACKET_CAP_SCATTER_FCS"),
    ("DELAY_DROP", "IBV_RAW_PACKET_CAP_DELAY_DROP"),
)

ibv_create_wq = Verb(
    name="ibv_create_wq",
    man="ibv_create_wq(3)",
    prototype="struct ibv_wq *ibv_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr);",
    returns=RETURNS_POINTER,
    summary="create a work queue (a receive queue for RSS); max_wr and max_sge are written back; NULL on failure",
    params=(
        CONTEXT,
        Param(
            "wq_init_attr",
            "struct ibv_wq_init_attr *",
            "inout",
            default={
                "wq_context": 0x42,
                "wq_type": "IBV_WQT_RQ",
                "max_wr": 16,
                "max_sge": 1,
                "pd": Need("pd"),
                "cq": Need("cq"),
                "comp_mask": 0,
                "create_flags": 0,
            },
            flags="ibv_wq_init_attr_mask",
            doc="comp_mask from ibv_wq_init_attr_mask, create_flags from ibv_wq_flags, wq_type from ibv_wq_type",
        ),
    ),
    errors=(
        Error(
            "EOPNOTSUPP",
            "the provider has no WQs (libibverbs' default op), or create_flags has an undefined bit (not on the page)",
            covered_by=("creates-wq", "reserved-create-flags-refused"),
        ),
        Error(
            "EINVAL",
            "comp_mask has an undefined bit (not on the page: libibverbs' command layer)",
            covered_by=("reserved-comp-mask-refused",),
        ),
    ),
    claims=(
        Claim(
            "creates-wq",
            "gated",
            "a receive WQ is created where the device advertises WQs (refused elsewhere), "
            "with sizes at least the request and the wq_context and type given",
            "DESCRIPTION",
            variant="RQ-16x1",
            errnos=("EOPNOTSUPP",),
            params={
                "gate": _WQS,
                "advertised": {
                    "expect": (
                        Expect("wq_init_attr.max_wr", ">=", 16),
                        Expect("wq_init_attr.max_sge", ">=", 1),
                        Expect("ret.wq_context", "==", 0x42),
                        Expect("ret.wq_type", "==", "IBV_WQT_RQ"),
                    )
                },
            },
        ),
        Claim(
            "reserved-create-flags-refused",
            "refused",
            "create_flags bits outside ibv_wq_flags are refused",
            "DESCRIPTION",
            needs=(_WQS,),
            over={"bit": (4, 16, 31)},
            variant="create_flags-bit{bit}",
            call={"wq_init_attr": {"comp_mask": "IBV_WQ_INIT_ATTR_FLAGS", "create_flags": Flags(bits=(Var("bit"),))}},
            errnos=("EOPNOTSUPP", "EINVAL"),
            layer="libibverbs",
        ),
        Claim(
            "reserved-comp-mask-refused",
            "refused",
            "comp_mask bits outside ibv_wq_init_attr_mask are refused",
            "DESCRIPTION",
            needs=(_WQS,),
            over={"bit": (1, 31)},
            variant="comp_mask-bit{bit}",
            call={"wq_init_attr.comp_mask": Flags(bits=(Var("bit"),))},
            errnos=("EINVAL", "EOPNOTSUPP"),
            layer="libibverbs",
        ),
        Claim(
            "flags-gated",
            "gated",
            "a creation flag works only where the device advertises the matching raw packet capability",
            "DESCRIPTION",
            needs=(_WQS,),
            over={("flag", "cap"): _WQ_FLAGS},
            variant="{flag}",
            errnos=("EOPNOTSUPP", "EINVAL"),
            call={"wq_init_attr": {"comp_mask": "IBV_WQ_INIT_ATTR_FLAGS", "create_flags": "IBV_WQ_FLAGS_{flag}"}},
            params={"gate": Cap(_WQ_CAP)},
        ),
        Claim(
            "receives-steered-traffic",
            "untestable",
            "receives posted on the WQ are consumed by traffic steered to it",
            "DESCRIPTION",
            untestable="needs traffic: left to the data-path section",
        ),
    ),
    contract=Contract(
        requires=(
            Resource("context", role="context"),
            Resource("pd", role="wq_init_attr.pd"),
            Resource("cq", role="wq_init_attr.cq"),
        ),
        produces=(Resource("wq", state="RESET"),),
        destroyed_by="ibv_destroy_wq",
        makes=True,
    ),
    tables={"not_supported": {"EOPNOTSUPP": "the provider has no work queues (libibverbs' default op)"}},
    undefined=("a NULL pd or cq",),
)

_TO_RDY = Step("ibv_modify_wq", {"wq": Need("wq")})

ibv_modify_wq = Verb(
    name="ibv_modify_wq",
    man="ibv_modify_wq(3)",
    prototype="int ibv_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);",
    returns=RETURNS_ERRNO,
    summary="change a WQ's state (RESET, RDY, ERR) or flags, as wq_attr->attr_mask says",
    params=(
        Param("wq", "struct ibv_wq *", default=Need("wq")),
        Param(
            "wq_attr",
            "struct ibv_wq_attr *",
            default={"attr_mask": "IBV_WQ_ATTR_STATE", "wq_state": "IBV_WQS_RDY"},
            flags="ibv_wq_attr_mask",
            doc="attr_mask from ibv_wq_attr_mask; wq_state/curr_wq_state from ibv_wq_state; flags from ibv_wq_flags",
        ),
    ),
    errors=(
        Error(
            "EINVAL",
            "attr_mask has an undefined bit (libibverbs), or the current state given is not the WQ's (not on the page)",
            covered_by=("reserved-attr-mask-refused", "wrong-current-state-refused"),
        ),
        Error(
            "EOPNOTSUPP",
            "flags_mask has an undefined bit (not on the page: libibverbs)",
            covered_by=("reserved-flags-refused",),
        ),
    ),
    claims=(
        Claim(
            "reset-to-rdy",
            "succeeds",
            "a new WQ (in RESET) moves to RDY with IBV_WQ_ATTR_STATE (the state the "
            "WQ object then holds: there is no query verb)",
            "DESCRIPTION",
            needs=(_WQS,),
            variant="RESET>RDY",
            expect=(Expect("wq.state", "==", "IBV_WQS_RDY"),),
        ),
        Claim(
            "rdy-to-err",
            "succeeds",
            "a WQ in RDY moves to ERR",
            "DESCRIPTION",
            needs=(_WQS,),
            variant="RDY>ERR",
            steps=(_TO_RDY,),
            call={"wq_attr.wq_state": "IBV_WQS_ERR"},
            expect=(Expect("wq.state", "==", "IBV_WQS_ERR"),),
        ),
        Claim(
            "rdy-to-reset",
            "succeeds",
            "a WQ in RDY moves back to RESET",
            "DESCRIPTION",
            needs=(_WQS,),
            variant="RDY>RESET",
            steps=(_TO_RDY,),
            call={"wq_attr.wq_state": "IBV_WQS_RESET"},
            expect=(Expect("wq.state", "==", "IBV_WQS_RESET"),),
        ),
        Claim(
            "err-to-reset",
            "succeeds",
            "a WQ in ERR moves back to RESET",
            "DESCRIPTION",
            needs=(_WQS,),
            variant="ERR>RESET",
            steps=(_TO_RDY, Step("ibv_modify_wq", {"wq_attr.wq_state": "IBV_WQS_ERR"})),
            call={"wq_attr.wq_state": "IBV_WQS_RESET"},
            expect=(Expect("wq.state", "==", "IBV_WQS_RESET"),),
        ),
        Claim(
            "wrong-current-state-refused",
            "refused",
            "curr_wq_state asserts the current state: a wrong one makes the call fail",
            "DESCRIPTION",
            needs=(_WQS,),
            variant="RESET-claimed-RDY",
            errnos=("EINVAL",),
            call={
                "wq_attr": {
                    "attr_mask": "IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE",
                    "wq_state": "IBV_WQS_RDY",
                    "curr_wq_state": "IBV_WQS_RDY",
                }
            },
        ),
        Claim(
            "reserved-attr-mask-refused",
            "refused",
            "attr_mask bits outside ibv_wq_attr_mask are refused",
            "DESCRIPTION",
            needs=(_WQS,),
            over={"bit": (3, 31)},
            variant="attr_mask-bit{bit}",
            call={"wq_attr.attr_mask": Flags(("IBV_WQ_ATTR_STATE",), bits=(Var("bit"),))},
            errnos=("EINVAL",),
            layer="libibverbs",
        ),
        Claim(
            "reserved-flags-refused",
            "refused",
            "flags_mask bits outside ibv_wq_flags are refused",
            "DESCRIPTION",
            needs=(_WQS,),
            over={"bit": (4, 31)},
            variant="flags_mask-bit{bit}",
            call={
                "wq_attr": {
                    "attr_mask": "IBV_WQ_ATTR_FLAGS",
                    "flags_mask": Flags(bits=(Var("bit"),)),
                    "flags": Flags(bits=(Var("bit"),)),
                }
            },
            errnos=("EOPNOTSUPP", "EINVAL"),
            layer="libibverbs",
        ),
        Claim(
            "flags-gated",
            "gated",
            "changing a flag works only where the device advertises the matching raw packet capability",
            "DESCRIPTION",
            needs=(_WQS,),
            over={("flag", "cap"): _WQ_FLAGS[:2]},
            variant="{flag}",
            errnos=("EOPNOTSUPP", "EINVAL"),
            call={
                "wq_attr": {
                    "attr_mask": "IBV_WQ_ATTR_FLAGS",
                    "flags_mask": "IBV_WQ_FLAGS_{flag}",
                    "flags": "IBV_WQ_FLAGS_{flag}",
                }
            },
            params={"gate": Cap(_WQ_CAP)},
        ),
        Claim(
            "err-flushes",
            "untestable",
            "moving a WQ with posted receives to ERR flushes them",
            "DESCRIPTION",
            untestable="needs completions: left to the data-path section",
        ),
    ),
    contract=Contract(
        requires=(Resource("wq", role="wq"),),
        moves=(Transition("wq", "RESET", "RDY"), Transition("wq", "any", "ERR"), Transition("wq", "any", "RESET")),
    ),
    undefined=("a wq_state of IBV_WQS_UNKNOWN or outside enum ibv_wq_state",),
)

_RSS = Cap("attr_ex.rss_caps.max_rwq_indirection_table_size")

ibv_destroy_wq = Verb(
    name="ibv_destroy_wq",
    man="ibv_create_wq(3)",
    prototype="int ibv_destroy_wq(struct ibv_wq *wq);",
    returns=RETURNS_ERRNO,
    summary="destroy a WQ; 0 or an errno",
    params=(Param("wq", "struct ibv_wq *", default=Need("wq")),),
    claims=(
        Claim(
            "destroy-returns-zero",
            "succeeds",
            "destroying an unused WQ returns 0, and the WQ no longer holds its CQ",
            "RETURN VALUE",
            needs=(_WQS,),
            variant="unused",
            params={"then": (Step("ibv_destroy_cq", {"cq": Need("cq")}),)},
        ),
        Claim(
            "busy-in-table",
            "refused",
            "destroying a WQ that an indirection table still holds fails with EBUSY, "
            "and the WQ stays usable (it still moves to RDY)",
            "RETURN VALUE",
            needs=(_WQS, _RSS),
            variant="WQ-in-1-entry-table",
            errnos=("EBUSY",),
            steps=(Step("ibv_create_rwq_ind_table"),),
            params={"then": (_TO_RDY,)},
            also=(Source("kernel", _USECOUNT),),
        ),
    ),
    errors=(
        Error(
            "EBUSY",
            "an indirection table still holds the WQ (not on the page: the kernel's use count)",
            covered_by=("busy-in-table",),
        ),
    ),
    contract=Contract(requires=(Resource("wq", role="wq"),), destroys=(Resource("wq", role="wq"),)),
    undefined=("destroying a WQ twice", "using a WQ after destroying it"),
)

_WQ_TABLE = {"ind_tbl": Array(tuple(Need("wq", label=f"w{i}") for i in range(4))), "log_ind_tbl_size": 2}

ibv_create_rwq_ind_table = Verb(
    name="ibv_create_rwq_ind_table",
    man="ibv_create_rwq_ind_table(3)",
    prototype="struct ibv_rwq_ind_table *ibv_create_rwq_ind_table(struct ibv_context *context, "
    "struct ibv_rwq_ind_table_init_attr *init_attr);",
    returns=RETURNS_POINTER,
    summary="create an indirection table of 2^log_ind_tbl_size receive WQs, for an RSS QP; NULL on failure",
    params=(
        CONTEXT,
        Param(
            "init_attr",
            "struct ibv_rwq_ind_table_init_attr *",
            default={"log_ind_tbl_size": 0, "ind_tbl": Array((Need("wq"),)), "comp_mask": 0},
            flags="ibv_ind_table_init_attr_mask",
            doc="ind_tbl points at 1 << log_ind_tbl_size WQ pointers; comp_mask from ibv_ind_table_init_attr_mask",
        ),
    ),
    errors=(
        Error(
            "EOPNOTSUPP",
            "the provider has no indirection tables (libibverbs' default op; not on the page)",
            covered_by=("refused-without-wqs",),
        ),
        Error(
            "EINVAL",
            "comp_mask is not 0 (libibverbs' command layer), or the table is larger than the device "
            "allows (kernel); not on the page",
            covered_by=("reserved-comp-mask-refused",),
        ),
    ),
    claims=(
        Claim(
            "creates-table",
            "gated",
            "a table of 2^n WQs is created where the device advertises indirection tables",
            "DESCRIPTION",
            needs=(_WQS,),
            over={("entries", "table"): (("1-WQ", {}), ("4-WQs", _WQ_TABLE))},
            variant="{entries}",
            call={"init_attr": Var("table")},
            params={"gate": _RSS, "only": "advertised"},
        ),
        Claim(
            "repeated-entries",
            "gated",
            "one WQ may fill several entries of a table",
            "DESCRIPTION",
            needs=(_WQS,),
            variant="one-WQ-twice",
            call={"init_attr": {"log_ind_tbl_size": 1, "ind_tbl": Array((Need("wq"), Need("wq")))}},
            params={"gate": _RSS, "only": "advertised"},
        ),
        Claim(
            "reserved-comp-mask-refused",
            "refused",
            "comp_mask bits outside ibv_ind_table_init_attr_mask (none is defined) are refused",
            "DESCRIPTION",
            needs=(_WQS, _RSS),
            over={"bit": (0, 31)},
            variant="comp_mask-bit{bit}",
            call={"init_attr.comp_mask": Flags(bits=(Var("bit"),))},
            errnos=("EINVAL", "EOPNOTSUPP"),
            layer="libibverbs",
        ),
        Claim(
            "refused-without-wqs",
            "gated",
            "a device with no WQs (max_wq_type_rq 0) has no indirection tables: the call is refused",
            "DESCRIPTION",
            variant="no-WQs-NULL-table",
            needs=(Cap("attr_ex.max_wq_type_rq", "zero"),),
            call={"init_attr.ind_tbl": None},
            errnos=("EOPNOTSUPP",),
            params={"gate": _RSS, "only": "not-advertised"},
        ),
        Claim(
            "serves-rss-qp",
            "untestable",
            "the table is given to ibv_create_qp_ex to spread incoming packets over its WQs",
            "NOTES",
            untestable="creating the QP is ibv_create_qp_ex's rss-qp claim; spreading "
            "packets needs traffic: left to the data-path section",
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"), Resource("wq", role="init_attr.ind_tbl")),
        produces=(Resource("rwq_ind_table"),),
        destroyed_by="ibv_destroy_rwq_ind_table",
        makes=True,
    ),
    tables={"not_supported": {"EOPNOTSUPP": "the provider has no indirection tables (libibverbs' default op)"}},
    undefined=(
        "ind_tbl holding fewer than 1 << log_ind_tbl_size valid WQ pointers (libibverbs reads every slot)",
        "a table larger than rss_caps.max_rwq_indirection_table_size: its size is a device fact, and a "
        "table of that many entries is not a value the catalogue can write",
    ),
)

ibv_destroy_rwq_ind_table = Verb(
    name="ibv_destroy_rwq_ind_table",
    man="ibv_create_rwq_ind_table(3)",
    prototype="int ibv_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);",
    returns=RETURNS_ERRNO,
    summary="destroy an indirection table; 0 or an errno",
    params=(Param("rwq_ind_table", "struct ibv_rwq_ind_table *", default=Need("rwq_ind_table")),),
    errors=(
        Error(
            "EBUSY",
            "an RSS QP still uses the table (not on the page: the kernel's use count)",
            covered_by=("busy-with-qp",),
        ),
    ),
    claims=(
        Claim(
            "destroy-returns-zero",
            "succeeds",
            "destroying an unused table returns 0, after which its WQ can be destroyed",
            "RETURN VALUE",
            needs=(_WQS, _RSS),
            variant="1-WQ-table",
            params={"then": (Step("ibv_destroy_wq", {"wq": Need("wq")}),)},
        ),
        Claim(
            "busy-with-qp",
            "refused",
            "destroying a table an RSS QP still uses fails with EBUSY, and the table "
            "stays usable (another RSS QP can be created on it)",
            "RETURN VALUE",
            needs=(*_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"], _WQS, _RSS),
            variant="table-under-RSS-QP",
            errnos=("EBUSY",),
            steps=(Step("ibv_create_qp_ex", {"qp_init_attr_ex": _RSS_QP}),),
            params={"then": (Step("ibv_create_qp_ex", {"qp_init_attr_ex": _RSS_QP}),)},
            also=(Source("kernel", _USECOUNT),),
        ),
    ),
    contract=Contract(
        requires=(Resource("rwq_ind_table", role="rwq_ind_table"),),
        destroys=(Resource("rwq_ind_table", role="rwq_ind_table"),),
    ),
    undefined=("destroying a table twice",),
)


# --- 6. work requests ---------------------------------------------------------------------------------------
# Posting sends and receives, polling, the ibv_wr_* API, polling an extended CQ.
# LOCAL_INV and SEND_WITH_INV belong to the memory management extensions the device advertises.
_MW_MGT = Cap("attr.device_cap_flags&IBV_DEVICE_MEM_MGT_EXTENSIONS")

# The calls a data-path check makes (pytest_rdma/kinds/traffic.py builds their work requests).
# What each opcode does (ibv_post_send(3) DESCRIPTION; the completion opcodes of ibv_poll_cq(3)):
# whether it consumes a receive at the peer, the completions it yields, where its data goes
# (recv: into the peer's receive buffer; remote: into the peer's memory; local: back from it),
# and the remote access the target's memory region must grant.
_OPCODES: dict[str, Opcode] = {
    "IBV_WR_SEND": {"send_wc": "IBV_WC_SEND", "recv_wc": "IBV_WC_RECV", "consumes_recv": True, "data": "recv"},
    "IBV_WR_SEND_WITH_IMM": {
        "send_wc": "IBV_WC_SEND",
        "recv_wc": "IBV_WC_RECV",
        "consumes_recv": True,
        "data": "recv",
        "imm": True,
    },
    "IBV_WR_RDMA_WRITE": {"send_wc": "IBV_WC_RDMA_WRITE", "data": "remote", "remote": "IBV_ACCESS_REMOTE_WRITE"},
    "IBV_WR_RDMA_WRITE_WITH_IMM": {
        "send_wc": "IBV_WC_RDMA_WRITE",
        "recv_wc": "IBV_WC_RECV_RDMA_WITH_IMM",
        "consumes_recv": True,
        "data": "remote",
        "imm": True,
        "remote": "IBV_ACCESS_REMOTE_WRITE",
    },
    "IBV_WR_RDMA_READ": {"send_wc": "IBV_WC_RDMA_READ", "data": "local", "remote": "IBV_ACCESS_REMOTE_READ"},
    "IBV_WR_ATOMIC_CMP_AND_SWP": {
        "send_wc": "IBV_WC_COMP_SWAP",
        "data": "atomic",
        "remote": "IBV_ACCESS_REMOTE_ATOMIC",
    },
    "IBV_WR_ATOMIC_FETCH_AND_ADD": {
        "send_wc": "IBV_WC_FETCH_ADD",
        "data": "atomic",
        "remote": "IBV_ACCESS_REMOTE_ATOMIC",
    },
    # Memory windows (kinds/windows.py): a bind and a local invalidation act on the poster's own
    # window and move no data; a SEND_WITH_INV is a SEND whose receive also invalidates the key it names.
    "IBV_WR_BIND_MW": {"send_wc": "IBV_WC_BIND_MW", "data": "none"},
    "IBV_WR_LOCAL_INV": {"send_wc": "IBV_WC_LOCAL_INV", "data": "none"},
    "IBV_WR_SEND_WITH_INV": {
        "send_wc": "IBV_WC_SEND",
        "recv_wc": "IBV_WC_RECV",
        "consumes_recv": True,
        "data": "recv",
        "invalidates": True,
    },
}
_PLAIN_OPS = (
    (_RC, "IBV_WR_SEND"),
    (_RC, "IBV_WR_RDMA_WRITE"),
    (_RC, "IBV_WR_RDMA_READ"),
    (_UC, "IBV_WR_SEND"),
    (_UC, "IBV_WR_RDMA_WRITE"),
    (_UD, "IBV_WR_SEND"),
)
_IMM_OPS = (
    (_RC, "IBV_WR_SEND_WITH_IMM"),
    (_RC, "IBV_WR_RDMA_WRITE_WITH_IMM"),
    (_UC, "IBV_WR_SEND_WITH_IMM"),
    (_UC, "IBV_WR_RDMA_WRITE_WITH_IMM"),
    (_UD, "IBV_WR_SEND_WITH_IMM"),
)
_ATOMIC_OPS = ((_RC, "IBV_WR_ATOMIC_CMP_AND_SWP"), (_RC, "IBV_WR_ATOMIC_FETCH_AND_ADD"))
_STREAM_SIZES = (1, "mtu-1", "mtu", "mtu+1", "4*mtu+7", 65536, "max_msg")
_RFC5040_ERRORS = Source(
    "iwarp",
    "RFC 5040 §7 (RDMAP error management: an access error at the data sink is "
    "reported with a Terminate message and the stream is closed)",
)
_IBTA_ERRORS = Source("ibta", "IBTA Vol. 1 r1.7 §9.7.5.2 and §10.8.3 (responder errors, completion status)")

ibv_post_send = Verb(
    name="ibv_post_send",
    man="ibv_post_send(3)",
    prototype="int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);",
    returns=RETURNS_ERRNO,
    summary="post a linked list of work requests to a QP's send queue; *bad_wr names the first not posted",
    params=(
        Param("qp", "struct ibv_qp *"),
        Param("wr", "struct ibv_send_wr *", doc="a list linked through next; sg_list gathers each WR's data"),
        Param("bad_wr", "struct ibv_send_wr **", "out", doc="on failure, the first WR that was not posted"),
    ),
    errors=(
        Error(
            "errno",
            "a WR the QP cannot take (the page names no specific errno)",
            covered_by=("bad-wr-first-failing", "inline-over-limit", "reset-refused", "capacity-one-past-refused"),
        ),
    ),
    claims=(
        Claim(
            "opcode-completes",
            "transfer",
            "a valid SEND, RDMA WRITE or RDMA READ completes on the requester with "
            "its opcode and wr_id (and, for a SEND, on the responder), and the data arrives intact",
            "DESCRIPTION",
            over={("qp_type", "opcode"): _PLAIN_OPS},
            variant="{qp_type}-{opcode}",
            params={"size": 64, "seed": 11},
        ),
        Claim(
            "immediate-completes",
            "transfer",
            "SEND_WITH_IMM and RDMA_WRITE_WITH_IMM deliver the 32-bit immediate: "
            "the responder's completion carries it with IBV_WC_WITH_IMM",
            "DESCRIPTION",
            transports=IB_TRANSPORTS,
            over={("qp_type", "opcode"): _IMM_OPS},
            variant="{qp_type}-{opcode}",
            params={"size": 64, "seed": 12},
        ),
        Claim(
            "atomics-complete",
            "transfer",
            "compare-and-swap and fetch-and-add complete on an RC QP of a device that advertises atomic operations",
            "DESCRIPTION",
            transports=IB_TRANSPORTS,
            needs=(Cap("attr.atomic_cap"),),
            over={("qp_type", "opcode"): _ATOMIC_OPS},
            variant="{qp_type}-{opcode}",
            params={"size": 8, "compare_add": 1, "swap": 2},
        ),
        Claim(
            "data-integrity",
            "transfer",
            "every byte that arrives is the byte sent, for messages around the path "
            "MTU and up to the port's maximum message size",
            "DESCRIPTION",
            over={
                ("qp_type", "opcode"): (
                    (_RC, "IBV_WR_SEND"),
                    (_RC, "IBV_WR_RDMA_WRITE"),
                    (_RC, "IBV_WR_RDMA_READ"),
                    (_UC, "IBV_WR_RDMA_WRITE"),
                ),
                "size": _STREAM_SIZES,
            },
            variant="{qp_type}-{opcode}-{size}",
            params={"seed": 13},
        ),
        Claim(
            "ud-up-to-mtu",
            "transfer",
            "a UD SEND of up to the path MTU arrives intact, after the 40 bytes the receive buffer keeps for the GRH",
            "DESCRIPTION",
            transports=IB_TRANSPORTS,
            over={"qp_type": (_UD,), "size": (1, "mtu-1", "mtu")},
            variant="{qp_type}-{size}",
            params={"opcode": "IBV_WR_SEND", "seed": 14},
        ),
        Claim(
            "between-devices",
            "transfer",
            "a valid SEND, RDMA WRITE or RDMA READ from a QP of the device under test to a QP of a second "
            "device (--rdma-peer) completes on both sides with its opcode and wr_id, and the data arrives intact",
            "DESCRIPTION",
            over={
                ("qp_type", "opcode", "size"): (
                    *((qp_type, opcode, "4*mtu+7") for qp_type, opcode in _PLAIN_OPS if qp_type != _UD),
                    (_UD, "IBV_WR_SEND", "mtu"),
                )
            },
            variant="{qp_type}-{opcode}",
            params={"peer": True, "seed": 17},
        ),
        Claim(
            "immediate-between-devices",
            "transfer",
            "the 32-bit immediate of SEND_WITH_IMM and RDMA_WRITE_WITH_IMM reaches the second device's "
            "completion with IBV_WC_WITH_IMM",
            "DESCRIPTION",
            transports=IB_TRANSPORTS,
            over={("qp_type", "opcode"): _IMM_OPS},
            variant="{qp_type}-{opcode}",
            params={"peer": True, "size": 64, "seed": 18},
        ),
        Claim(
            "atomics-between-devices",
            "transfer",
            "compare-and-swap and fetch-and-add complete on memory of a second device, on a device that "
            "advertises atomic operations",
            "DESCRIPTION",
            transports=IB_TRANSPORTS,
            needs=(Cap("attr.atomic_cap"),),
            over={("qp_type", "opcode"): _ATOMIC_OPS},
            variant="{qp_type}-{opcode}",
            params={"peer": True, "size": 8, "compare_add": 1, "swap": 2},
        ),
        Claim(
            "zero-length",
            "transfer",
            "a SEND or RDMA WRITE of zero bytes is valid and completes",
            "DESCRIPTION",
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_RC, "IBV_WR_RDMA_WRITE"), (_UC, "IBV_WR_SEND"))},
            variant="{qp_type}-{opcode}",
            params={"size": 0},
        ),
        Claim(
            "gathers-sges",
            "transfer",
            "a WR gathers its data from several scatter/gather entries, in order",
            "DESCRIPTION",
            needs=(Cap("attr.max_sge"),),
            over={"qp_type": (_RC,), "sges": (2, 3)},
            variant="{qp_type}-{sges}-sges",
            params={"opcode": "IBV_WR_SEND", "size": 300, "sges": Var("sges"), "seed": 15},
        ),
        Claim(
            "inline-within-limit",
            "transfer",
            "with IBV_SEND_INLINE a message up to max_inline_data is sent from "
            "the caller's buffer at post time (the lkey is not needed) and arrives intact",
            "DESCRIPTION",
            over={"qp_type": (_RC, _UD), "size": (16, 64)},
            variant="{qp_type}-{size}",
            params={"opcode": "IBV_WR_SEND", "size": Var("size"), "inline": True, "seed": 16},
        ),
        Claim(
            "bad-wr-first-failing",
            "post-refused",
            "when a post fails, it returns an errno value and *bad_wr points at the first WR that could not be posted",
            "RETURN VALUE",
            over={"qp_type": (_RC,), ("problem", "bad"): (("sge-over-max", 0), ("sge-over-max", 1))},
            variant="{qp_type}-{problem}-at-{bad}",
            params={"queue": "send", "problem": Var("problem"), "bad": Var("bad"), "count": 3},
        ),
        Claim(
            "inline-over-limit",
            "post-refused",
            "a post refusing inline data longer than the QP's max_inline_data "
            "returns an errno value with *bad_wr at that WR",
            "DESCRIPTION",
            over={"qp_type": (_RC,)},
            variant="{qp_type}",
            params={"queue": "send", "problem": "inline-over-max", "bad": 0, "count": 1},
        ),
        Claim(
            "reset-refused",
            "post-refused",
            "a QP in RESET cannot take send WRs: the post fails at the first one",
            "DESCRIPTION",
            transports=IB_TRANSPORTS,
            also=(_IBTA_QP_TABLE,),
            over={"qp_type": (_RC, _UD)},
            variant="{qp_type}",
            params={"queue": "send", "problem": "state-reset", "bad": 0, "count": 2, "must_fail": True},
        ),
        Claim(
            "capacity-one-past-refused",
            "capacity",
            "a send queue filled to the max_send_wr it reports, in one list with nothing polled, refuses the one "
            "WR more: an errno value with *bad_wr at it; every WR before it completes with its wr_id, the refused "
            "one never does, and the drained queue takes WRs again",
            "RETURN VALUE",
            also=(Source("man", "ibv_create_qp(3)", "DESCRIPTION"), Source("man", "ibv_query_qp(3)", "DESCRIPTION")),
            over={
                ("qp_type", "opcode"): ((_RC, "IBV_WR_RDMA_WRITE"), (_UC, "IBV_WR_RDMA_WRITE"), (_UD, "IBV_WR_SEND"))
            },
            variant="{qp_type}-max_send_wr+1",
            params={"queue": "send"},
        ),
        Claim(
            "remote-access-enforced",
            "access-fault",
            "an RDMA WRITE, READ or atomic to memory registered without "
            "the matching remote access flag fails with a remote access error",
            "DESCRIPTION",
            also=(_IBTA_ERRORS,),
            transports=IB_TRANSPORTS,
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_RDMA_WRITE"), (_RC, "IBV_WR_RDMA_READ"))},
            variant="{qp_type}-{opcode}-without-its-access",
            params={"fault": "remote-no-access", "statuses": ("IBV_WC_REM_ACCESS_ERR",)},
        ),
        Claim(
            "remote-access-between-devices",
            "access-fault",
            "an RDMA WRITE or READ to a second device's memory registered without the matching remote "
            "access flag fails with a remote access error",
            "DESCRIPTION",
            also=(_IBTA_ERRORS,),
            transports=IB_TRANSPORTS,
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_RDMA_WRITE"), (_RC, "IBV_WR_RDMA_READ"))},
            variant="{qp_type}-{opcode}-without-its-access",
            params={"peer": True, "fault": "remote-no-access", "statuses": ("IBV_WC_REM_ACCESS_ERR",)},
        ),
        Claim(
            "atomic-access-enforced",
            "access-fault",
            "an atomic to memory registered without REMOTE_ATOMIC fails with a remote access error",
            "DESCRIPTION",
            transports=IB_TRANSPORTS,
            also=(_IBTA_ERRORS,),
            needs=(Cap("attr.atomic_cap"),),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_ATOMIC_FETCH_AND_ADD"),)},
            variant="{qp_type}-{opcode}-without-its-access",
            params={"fault": "remote-no-access", "size": 8, "statuses": ("IBV_WC_REM_ACCESS_ERR",)},
        ),
        Claim(
            "rkey-enforced",
            "access-fault",
            "an RDMA operation with an rkey the target did not hand out, or beyond "
            "the target region, fails with a remote access error",
            "DESCRIPTION",
            also=(_IBTA_ERRORS,),
            transports=IB_TRANSPORTS,
            over={
                "qp_type": (_RC,),
                ("opcode", "fault"): (
                    ("IBV_WR_RDMA_WRITE", "bad-rkey"),
                    ("IBV_WR_RDMA_READ", "bad-rkey"),
                    ("IBV_WR_RDMA_WRITE", "out-of-bounds"),
                    ("IBV_WR_RDMA_READ", "out-of-bounds"),
                ),
            },
            variant="{qp_type}-{opcode}-{fault}",
            params={"fault": Var("fault"), "statuses": ("IBV_WC_REM_ACCESS_ERR",)},
        ),
        Claim(
            "access-error-terminates",
            "access-fault",
            "on iWARP, an RDMA WRITE or READ the target may not serve "
            "(its region lacks the remote access flag, or the STag is not one it handed out) places no data and "
            "terminates the connection: the requester's QP leaves RTS",
            "DESCRIPTION",
            transports=("iwarp",),
            also=(_RFC5040_ERRORS,),
            over={
                "qp_type": (_RC,),
                ("opcode", "fault"): (
                    ("IBV_WR_RDMA_WRITE", "remote-no-access"),
                    ("IBV_WR_RDMA_READ", "remote-no-access"),
                    ("IBV_WR_RDMA_WRITE", "bad-rkey"),
                    ("IBV_WR_RDMA_READ", "bad-rkey"),
                ),
            },
            variant="{qp_type}-{opcode}-{fault}",
            params={"fault": Var("fault"), "terminates": True},
        ),
        Claim(
            "lkey-enforced",
            "access-fault",
            "a gather entry with an lkey the device did not hand out fails with a local protection error",
            "DESCRIPTION",
            also=(_IBTA_ERRORS,),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_RC, "IBV_WR_RDMA_WRITE"))},
            variant="{qp_type}-{opcode}-bad-lkey",
            params={"fault": "bad-lkey", "statuses": ("IBV_WC_LOC_PROT_ERR",)},
        ),
        Claim(
            "lkey-of-another-pd",
            "foreign-pd",
            "a gather (or a READ's scatter) entry whose lkey names a region of another PD than the QP's "
            "completes with a local protection error, and no byte moves",
            "DESCRIPTION",
            also=(_IBTA_PD, _IBTA_ERRORS),
            over={
                ("qp_type", "opcode"): (
                    (_RC, "IBV_WR_SEND"),
                    (_RC, "IBV_WR_RDMA_WRITE"),
                    (_RC, "IBV_WR_RDMA_READ"),
                    (_UD, "IBV_WR_SEND"),
                )
            },
            variant="{qp_type}-{opcode}",
            params={"foreign": "lkey", "statuses": ("IBV_WC_LOC_PROT_ERR",), "seed": 41},
        ),
        Claim(
            "rkey-of-another-pd",
            "foreign-pd",
            "an RDMA WRITE or READ whose rkey names a region of another PD than the responding QP's fails "
            "with a remote access error, and no byte moves",
            "DESCRIPTION",
            also=(_IBTA_PD, _IBTA_ERRORS, _IWARP_STAG, _IWARP_WRITE_COMPLETION),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_RDMA_WRITE"), (_RC, "IBV_WR_RDMA_READ"))},
            variant="{qp_type}-{opcode}",
            params={
                "foreign": "rkey",
                "statuses": ("IBV_WC_REM_ACCESS_ERR",),
                "iwarp_statuses": ("IBV_WC_REM_ACCESS_ERR", "IBV_WC_WR_FLUSH_ERR"),
                "seed": 43,
            },
        ),
        Claim(
            "rkey-of-another-pd-between-devices",
            "foreign-pd",
            "an RDMA WRITE or READ to a second device (--rdma-peer) whose rkey names a region of another PD of "
            "the peer than its responding QP's fails with a remote access error, and no byte moves",
            "DESCRIPTION",
            also=(_IBTA_PD, _IBTA_ERRORS, _IWARP_STAG, _IWARP_WRITE_COMPLETION),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_RDMA_WRITE"), (_RC, "IBV_WR_RDMA_READ"))},
            variant="{qp_type}-{opcode}",
            params={
                "peer": True,
                "foreign": "rkey",
                "statuses": ("IBV_WC_REM_ACCESS_ERR",),
                "iwarp_statuses": ("IBV_WC_REM_ACCESS_ERR", "IBV_WC_WR_FLUSH_ERR"),
                "seed": 44,
            },
        ),
        Claim(
            "atomic-rkey-of-another-pd",
            "foreign-pd",
            "an atomic whose rkey names a region of another PD than the responding QP's fails with a "
            "remote access error, and the requester's buffer receives nothing",
            "DESCRIPTION",
            also=(_IBTA_PD, _IBTA_ERRORS),
            transports=IB_TRANSPORTS,
            needs=(Cap("attr.atomic_cap"),),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_ATOMIC_FETCH_AND_ADD"),)},
            variant="{qp_type}-{opcode}",
            params={"foreign": "rkey", "size": 8, "statuses": ("IBV_WC_REM_ACCESS_ERR",), "seed": 47},
        ),
        Claim(
            "ah-of-another-pd",
            "foreign-pd",
            "a UD send through an address handle of another PD than the QP's completes in error (a local "
            "QP operation or protection error: the pages tie no status to this cause), and nothing arrives",
            "DESCRIPTION",
            also=(_IBTA_PD, Source("man", "ibv_create_ah(3)", "DESCRIPTION")),
            transports=IB_TRANSPORTS,
            over={("qp_type", "opcode"): ((_UD, "IBV_WR_SEND"),)},
            variant="{qp_type}-{opcode}",
            params={"foreign": "ah", "statuses": ("IBV_WC_LOC_QP_OP_ERR", "IBV_WC_LOC_PROT_ERR"), "seed": 53},
        ),
        Claim(
            "lkey-of-another-context",
            "foreign-pd",
            "a gather (or a READ's scatter) entry whose lkey names a region registered in a second context of the "
            "device completes with a local protection error, and no byte moves",
            "DESCRIPTION",
            also=(_IBTA_PD, _IBTA_ERRORS, _ACROSS_CONTEXTS),
            over={
                ("qp_type", "opcode"): (
                    (_RC, "IBV_WR_SEND"),
                    (_RC, "IBV_WR_RDMA_WRITE"),
                    (_RC, "IBV_WR_RDMA_READ"),
                    (_UD, "IBV_WR_SEND"),
                )
            },
            variant="{qp_type}-{opcode}",
            params={"foreign": "lkey", "across": "context", "statuses": ("IBV_WC_LOC_PROT_ERR",), "seed": 61},
        ),
        Claim(
            "rkey-of-another-context",
            "foreign-pd",
            "an RDMA WRITE or READ whose rkey names a region registered in a second context of the device (not the "
            "responding QP's) fails with a remote access error, and no byte moves",
            "DESCRIPTION",
            also=(_IBTA_PD, _IBTA_ERRORS, _ACROSS_CONTEXTS, _IWARP_STAG, _IWARP_WRITE_COMPLETION),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_RDMA_WRITE"), (_RC, "IBV_WR_RDMA_READ"))},
            variant="{qp_type}-{opcode}",
            params={
                "foreign": "rkey",
                "across": "context",
                "statuses": ("IBV_WC_REM_ACCESS_ERR",),
                "iwarp_statuses": ("IBV_WC_REM_ACCESS_ERR", "IBV_WC_WR_FLUSH_ERR"),
                "seed": 67,
            },
        ),
        Claim(
            "atomic-rkey-of-another-context",
            "foreign-pd",
            "an atomic whose rkey names a region registered in a second context of the device fails with a "
            "remote access error, and the requester's buffer receives nothing",
            "DESCRIPTION",
            also=(_IBTA_PD, _IBTA_ERRORS, _ACROSS_CONTEXTS),
            transports=IB_TRANSPORTS,
            needs=(Cap("attr.atomic_cap"),),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_ATOMIC_FETCH_AND_ADD"),)},
            variant="{qp_type}-{opcode}",
            params={
                "foreign": "rkey",
                "across": "context",
                "size": 8,
                "statuses": ("IBV_WC_REM_ACCESS_ERR",),
                "seed": 71,
            },
        ),
        Claim(
            "ah-of-another-context",
            "foreign-pd",
            "a UD send through an address handle created in a second context of the device completes in error (a "
            "local QP operation or protection error: the pages tie no status to this cause), and nothing arrives",
            "DESCRIPTION",
            also=(_IBTA_PD, Source("man", "ibv_create_ah(3)", "DESCRIPTION"), _ACROSS_CONTEXTS),
            transports=IB_TRANSPORTS,
            over={("qp_type", "opcode"): ((_UD, "IBV_WR_SEND"),)},
            variant="{qp_type}-{opcode}",
            params={
                "foreign": "ah",
                "across": "context",
                "statuses": ("IBV_WC_LOC_QP_OP_ERR", "IBV_WC_LOC_PROT_ERR"),
                "seed": 73,
            },
        ),
        Claim(
            "bind-mw-region-of-another-pd",
            "foreign-pd-bind",
            "an IBV_WR_BIND_MW work request binding a type 2 window to a region of another PD than the window's "
            "and the QP's completes with a memory window bind error",
            "DESCRIPTION",
            needs=(_MW_TYPE_2,),
            also=(_IBTA_MW_PD, Source("man", "ibv_alloc_mw(3)", "DESCRIPTION")),
            variant="RC-type-2",
            params={"foreign": "mr", "statuses": ("IBV_WC_MW_BIND_ERR",)},
        ),
        Claim(
            "bind-mw-window-of-another-pd",
            "foreign-pd-bind",
            "an IBV_WR_BIND_MW work request binding a type 2 window of another PD than the QP's completes with "
            "a memory window bind error",
            "DESCRIPTION",
            needs=(_MW_TYPE_2,),
            also=(_IBTA_MW_PD, Source("man", "ibv_alloc_mw(3)", "DESCRIPTION")),
            variant="RC-type-2",
            params={"foreign": "mw", "statuses": ("IBV_WC_MW_BIND_ERR",)},
        ),
        Claim(
            "bind-mw-region-of-another-context",
            "foreign-pd-bind",
            "an IBV_WR_BIND_MW work request binding a type 2 window to a region registered in a second context "
            "of the device completes with a memory window bind error",
            "DESCRIPTION",
            needs=(_MW_TYPE_2,),
            also=(_IBTA_MW_PD, Source("man", "ibv_alloc_mw(3)", "DESCRIPTION"), _ACROSS_CONTEXTS),
            variant="RC-type-2",
            params={"foreign": "mr", "across": "context", "statuses": ("IBV_WC_MW_BIND_ERR",)},
        ),
        Claim(
            "bind-mw-window-of-another-context",
            "foreign-pd-bind",
            "an IBV_WR_BIND_MW work request binding a type 2 window allocated in a second context of the device "
            "completes with a memory window bind error",
            "DESCRIPTION",
            needs=(_MW_TYPE_2,),
            also=(_IBTA_MW_PD, Source("man", "ibv_alloc_mw(3)", "DESCRIPTION"), _ACROSS_CONTEXTS),
            variant="RC-type-2",
            params={"foreign": "mw", "across": "context", "statuses": ("IBV_WC_MW_BIND_ERR",)},
        ),
        Claim(
            "bind-mw-completes",
            "window",
            "an IBV_WR_BIND_MW work request binds a type 2 window to the range of its bind_info: it "
            "completes with IBV_WC_BIND_MW and the key in bind_mw.rkey then lets the peer write and read that range",
            "DESCRIPTION",
            needs=(_MW_TYPE_2,),
            over={"opcode": _MW_RW},
            variant="RC-type-2-{opcode}-inside",
            params={"type": 2, "where": "inside", "seed": 23},
            also=(Source("man", "ibv_alloc_mw(3)", "DESCRIPTION"),),
        ),
        Claim(
            "bind-mw-range-only",
            "window",
            "a type 2 window's key does not reach past the range its bind gave",
            "DESCRIPTION",
            needs=(_MW_TYPE_2,),
            transports=IB_TRANSPORTS,
            also=(_IBTA_MW,),
            over={"opcode": ("IBV_WR_RDMA_WRITE",)},
            variant="RC-type-2-{opcode}-outside",
            params={"type": 2, "where": "outside", "statuses": ("IBV_WC_REM_ACCESS_ERR",)},
        ),
        Claim(
            "local-inv-revokes",
            "window",
            "IBV_WR_LOCAL_INV on the window's key completes with IBV_WC_LOCAL_INV; afterwards the key "
            "grants nothing: the peer's RDMA operation with it fails with a remote access error",
            "DESCRIPTION",
            needs=(_MW_TYPE_2, _MW_MGT),
            transports=IB_TRANSPORTS,
            also=(Source("man", "ibv_alloc_mw(3)", "DESCRIPTION"), _IBTA_MW),
            over={"opcode": _MW_RW},
            variant="RC-type-2-{opcode}-after-local-inv",
            params={"type": 2, "then": "local-inv", "where": "inside", "statuses": ("IBV_WC_REM_ACCESS_ERR",)},
        ),
        Claim(
            "send-with-inv-reported",
            "window",
            "an IBV_WR_SEND_WITH_INV naming the peer's window key is received with IBV_WC_WITH_INV set and "
            "that key in invalidated_rkey",
            "DESCRIPTION",
            needs=(_MW_TYPE_2, _MW_MGT),
            also=(Source("man", "ibv_poll_cq(3)", "DESCRIPTION"),),
            over={"type": (2,)},
            variant="RC-type-{type}",
            params={"then": "send-with-inv", "report": True, "probe": False},
        ),
        Claim(
            "send-with-inv-revokes",
            "window",
            "once a SEND_WITH_INV naming the peer's window key is received, the key grants nothing: an "
            "RDMA operation with it fails with a remote access error",
            "DESCRIPTION",
            needs=(_MW_TYPE_2, _MW_MGT),
            transports=IB_TRANSPORTS,
            also=(Source("man", "ibv_alloc_mw(3)", "DESCRIPTION"), _IBTA_MW),
            over={"opcode": _MW_RW},
            variant="RC-type-2-{opcode}-after-send-with-inv",
            params={"type": 2, "then": "send-with-inv", "where": "inside", "statuses": ("IBV_WC_REM_ACCESS_ERR",)},
        ),
    ),
    tables={"opcodes": _OPCODES},
)

ibv_post_recv = Verb(
    name="ibv_post_recv",
    man="ibv_post_recv(3)",
    prototype="int ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);",
    returns=RETURNS_ERRNO,
    summary="post a linked list of receive work requests; *bad_wr names the first not posted",
    params=(
        Param("qp", "struct ibv_qp *"),
        Param("wr", "struct ibv_recv_wr *", doc="a list linked through next; sg_list scatters what arrives"),
        Param("bad_wr", "struct ibv_recv_wr **", "out"),
    ),
    errors=(
        Error(
            "errno",
            "a WR the QP cannot take (the page names no specific errno)",
            covered_by=("bad-wr-first-failing", "capacity-one-past-refused"),
        ),
    ),
    claims=(
        Claim(
            "bad-wr-first-failing",
            "post-refused",
            "when a post fails, it returns an errno value and *bad_wr points "
            "at the first receive WR that could not be posted",
            "RETURN VALUE",
            over={"qp_type": (_RC,), "bad": (0, 1)},
            variant="{qp_type}-sge-over-max-at-{bad}",
            params={"queue": "recv", "problem": "sge-over-max", "bad": Var("bad"), "count": 3},
        ),
        Claim(
            "err-flushes-outstanding",
            "flush",
            "moving the QP to Error completes every receive it still holds with "
            "IBV_WC_WR_FLUSH_ERR, in the order they were posted",
            "DESCRIPTION",
            over={"qp_type": (_RC, _UD)},
            variant="{qp_type}",
            params={"count": 3},
        ),
        Claim(
            "too-small-fails",
            "access-fault",
            "a message longer than the receive buffer completes the receive with a local length error",
            "DESCRIPTION",
            also=(_IBTA_ERRORS,),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"),)},
            variant="{qp_type}",
            params={"fault": "recv-too-small", "side": "recv", "statuses": ("IBV_WC_LOC_LEN_ERR",)},
        ),
        Claim(
            "lkey-of-another-pd",
            "foreign-pd",
            "a receive whose lkey names a region of another PD than the QP's completes with a local "
            "protection error, and no byte lands in that region",
            "DESCRIPTION",
            also=(_IBTA_PD, _IBTA_ERRORS),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_UD, "IBV_WR_SEND"))},
            variant="{qp_type}-{opcode}",
            params={"foreign": "recv-lkey", "side": "recv", "statuses": ("IBV_WC_LOC_PROT_ERR",), "seed": 59},
        ),
        Claim(
            "lkey-of-another-context",
            "foreign-pd",
            "a receive whose lkey names a region registered in a second context of the device completes with a "
            "local protection error, and no byte lands in that region",
            "DESCRIPTION",
            also=(_IBTA_PD, _IBTA_ERRORS, _ACROSS_CONTEXTS),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_UD, "IBV_WR_SEND"))},
            variant="{qp_type}-{opcode}",
            params={
                "foreign": "recv-lkey",
                "across": "context",
                "side": "recv",
                "statuses": ("IBV_WC_LOC_PROT_ERR",),
                "seed": 79,
            },
        ),
        Claim(
            "capacity-one-past-refused",
            "capacity",
            "a receive queue filled to the max_recv_wr it reports, in one list, refuses the one WR more: an errno "
            "value with *bad_wr at it; every receive before it completes (drained by SENDs) with its wr_id, the "
            "refused one never does, and the drained queue takes receives again",
            "RETURN VALUE",
            also=(Source("man", "ibv_create_qp(3)", "DESCRIPTION"), Source("man", "ibv_query_qp(3)", "DESCRIPTION")),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_UC, "IBV_WR_SEND"), (_UD, "IBV_WR_SEND"))},
            variant="{qp_type}-max_recv_wr+1",
            params={"queue": "recv"},
        ),
    ),
)

ibv_poll_cq = Verb(
    name="ibv_poll_cq",
    man="ibv_poll_cq(3)",
    prototype="int ibv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);",
    returns=RETURNS_COUNT,
    summary="take up to num_entries completions from a CQ; their number, or a negative value on failure",
    params=(
        Param("cq", "struct ibv_cq *"),
        Param("num_entries", "int", default=1),
        Param("wc", "struct ibv_wc *", "out", count="num_entries"),
    ),
    claims=(
        Claim(
            "empty-returns-zero",
            "succeeds",
            "polling a CQ with nothing in it returns 0",
            "RETURN VALUE",
            variant="fresh-cq",
            call={"cq": Need("cq")},
            expect=(Expect("ret", "==", 0),),
        ),
        Claim(
            "zero-entries",
            "succeeds",
            "num_entries 0 returns 0",
            "DESCRIPTION",
            variant="num_entries-0",
            call={"cq": Need("cq"), "num_entries": 0},
            expect=(Expect("ret", "==", 0),),
        ),
    ),
)

# A QP made with ibv_create_qp_ex and IBV_QP_INIT_ATTR_SEND_OPS_FLAGS is posted to by builder calls
# between ibv_wr_start and ibv_wr_complete (or ibv_wr_abort): a builder starts a WR (wr_id and
# wr_flags are read from struct ibv_qp_ex when it is called), setters give its data and address.
# The claims (kinds/wr.py) build each WR the way ibv_post_send's table says the opcode behaves and
# expect what ibv_post_send's claims expect. The builders and setters themselves return nothing.
_WR_PAGE = "ibv_wr_post(3)"

ibv_qp_to_qp_ex = Verb(
    name="ibv_qp_to_qp_ex",
    man=_WR_PAGE,
    prototype="struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp);",
    returns=RETURNS_POINTER,
    summary="the extended QP (the ibv_wr_* handle) of a QP created with ibv_create_qp_ex (the page's EXAMPLE)",
    params=(Param("qp", "struct ibv_qp *"),),
)

_QPX = Param("qp", "struct ibv_qp_ex *", doc="ibv_qp_to_qp_ex of a QP created with send_ops_flags")


def _wr_void(name: str, params: tuple[Param, ...], summary: str, **more: object) -> Verb:
    """A builder or setter: void, its effect seen only at ibv_wr_complete and in the completions."""
    shown = ", ".join(f"{p.ctype}{'' if p.ctype.endswith('*') else ' '}{p.name}" for p in (_QPX, *params))
    return Verb(
        name=name,
        man=_WR_PAGE,
        prototype=f"void {name}({shown});",
        returns=RETURNS_VOID,
        summary=summary,
        params=(_QPX, *params),
        contract=Contract(requires=(Resource("qp", role="qp"),)),
        **more,
    )


# Each builder: (name, its parameters after qp, the opcode of ibv_post_send it stands for, what it does).
_WR_BUILDERS = (
    ("ibv_wr_send", (), "IBV_WR_SEND", "start a SEND; its data comes from the DATA setter that follows"),
    (
        "ibv_wr_send_imm",
        (Param("imm_data", "__be32"),),
        "IBV_WR_SEND_WITH_IMM",
        "start a SEND that also delivers 32 bits of immediate data (network order)",
    ),
    (
        "ibv_wr_send_inv",
        (Param("invalidate_rkey", "uint32_t"),),
        "IBV_WR_SEND_WITH_INV",
        "start a SEND after which the responder invalidates the MR or MW of invalidate_rkey",
    ),
    (
        "ibv_wr_send_tso",
        (Param("hdr", "void *"), Param("hdr_sz", "uint16_t"), Param("mss", "uint16_t")),
        "IBV_WR_TSO",
        "start a TCP segmentation offload send (UD, raw packet): hdr is put before each mss-sized segment",
    ),
    (
        "ibv_wr_rdma_write",
        (Param("rkey", "uint32_t"), Param("remote_addr", "uint64_t")),
        "IBV_WR_RDMA_WRITE",
        "start an RDMA WRITE to remote_addr under rkey",
    ),
    (
        "ibv_wr_rdma_write_imm",
        (Param("rkey", "uint32_t"), Param("remote_addr", "uint64_t"), Param("imm_data", "__be32")),
        "IBV_WR_RDMA_WRITE_WITH_IMM",
        "start an RDMA WRITE that also consumes a receive at the responder, carrying imm_data",
    ),
    (
        "ibv_wr_rdma_read",
        (Param("rkey", "uint32_t"), Param("remote_addr", "uint64_t")),
        "IBV_WR_RDMA_READ",
        "start an RDMA READ from remote_addr under rkey into the DATA setter's buffers",
    ),
    (
        "ibv_wr_atomic_cmp_swp",
        (
            Param("rkey", "uint32_t"),
            Param("remote_addr", "uint64_t"),
            Param("compare", "uint64_t"),
            Param("swap", "uint64_t"),
        ),
        "IBV_WR_ATOMIC_CMP_AND_SWP",
        "start a 64-bit compare-and-swap at remote_addr; the old value lands in the DATA setter's buffer",
    ),
    (
        "ibv_wr_atomic_fetch_add",
        (Param("rkey", "uint32_t"), Param("remote_addr", "uint64_t"), Param("add", "uint64_t")),
        "IBV_WR_ATOMIC_FETCH_AND_ADD",
        "start a 64-bit fetch-and-add at remote_addr; the old value lands in the DATA setter's buffer",
    ),
    (
        "ibv_wr_bind_mw",
        (
            Param("mw", "struct ibv_mw *"),
            Param("rkey", "uint32_t"),
            Param("bind_info", "const struct ibv_mw_bind_info *"),
        ),
        "IBV_WR_BIND_MW",
        "bind a type 2 memory window with a new rkey, as bind_info describes (no setter follows)",
    ),
    (
        "ibv_wr_local_inv",
        (Param("invalidate_rkey", "uint32_t"),),
        "IBV_WR_LOCAL_INV",
        "invalidate the type 2 memory window of invalidate_rkey (no setter follows)",
    ),
)

# The builder of each opcode (the table of WORK REQUESTS) and the send_ops_flags bit that asks for it.
_WR_BUILDER_OF = {opcode: name for name, _, opcode, _ in _WR_BUILDERS}
_SEND_OPS_BIT = {
    "IBV_WR_SEND": "IBV_QP_EX_WITH_SEND",
    "IBV_WR_SEND_WITH_IMM": "IBV_QP_EX_WITH_SEND_WITH_IMM",
    "IBV_WR_RDMA_WRITE": "IBV_QP_EX_WITH_RDMA_WRITE",
    "IBV_WR_RDMA_WRITE_WITH_IMM": "IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM",
    "IBV_WR_RDMA_READ": "IBV_QP_EX_WITH_RDMA_READ",
    "IBV_WR_ATOMIC_CMP_AND_SWP": "IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP",
    "IBV_WR_ATOMIC_FETCH_AND_ADD": "IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD",
}
_WR_TABLES = {"builders": _WR_BUILDER_OF, "send_ops": _SEND_OPS_BIT}

ibv_wr_start = _wr_void(
    "ibv_wr_start",
    (),
    "open the QP's critical region: the WRs built until ibv_wr_complete or ibv_wr_abort form one batch",
    claims=(
        Claim(
            "nothing-runs-before-complete",
            "wr-transfer",
            "a WR built after ibv_wr_start does not execute before ibv_wr_complete: neither CQ "
            "sees a completion until then, and afterwards both do",
            "USAGE",
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"),)},
            variant="{qp_type}-{opcode}",
            params={"size": 64, "seed": 21, "hold": True},
        ),
    ),
    tables=_WR_TABLES,
)

# The WRs a batch may hold, as ibv_post_send's opcodes (its tables["opcodes"] says how each completes).
_WR_OPS = (
    (_RC, "IBV_WR_SEND"),
    (_RC, "IBV_WR_RDMA_WRITE"),
    (_RC, "IBV_WR_RDMA_READ"),
    (_UC, "IBV_WR_SEND"),
    (_UC, "IBV_WR_RDMA_WRITE"),
    (_UD, "IBV_WR_SEND"),
)
_WR_IMM_OPS = (
    (_RC, "IBV_WR_SEND_WITH_IMM"),
    (_RC, "IBV_WR_RDMA_WRITE_WITH_IMM"),
    (_UC, "IBV_WR_RDMA_WRITE_WITH_IMM"),
    (_UD, "IBV_WR_SEND_WITH_IMM"),
)

ibv_wr_complete = Verb(
    name="ibv_wr_complete",
    man=_WR_PAGE,
    prototype="int ibv_wr_complete(struct ibv_qp_ex *qp);",
    returns=RETURNS_ERRNO,
    summary="post the batch built since ibv_wr_start; 0, or an errno value and nothing of the batch posted",
    params=(_QPX,),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    errors=(
        Error(
            "errno",
            "a WR of the batch the QP cannot take (an invalid argument to a builder or setter); "
            "the page names no specific errno",
            untestable="the page asks applications not to build failing WRs and leaves which ones fail to "
            "the provider (RETURN VALUE)",
        ),
    ),
    claims=(
        Claim(
            "posts-like-ibv_post_send",
            "wr-transfer",
            "a batch of one WR built with the opcode's builder and ibv_wr_set_sge returns 0 and completes "
            "as ibv_post_send's WR of that opcode does: the requester's completion with its wr_id and "
            "opcode, the responder's for a SEND, and the data placed intact",
            "USAGE",
            also=(Source("man", "ibv_post_send(3)", "DESCRIPTION"),),
            over={("qp_type", "opcode"): _WR_OPS},
            variant="{qp_type}-{opcode}",
            params={"size": 64, "seed": 22},
        ),
        Claim(
            "immediate-like-ibv_post_send",
            "wr-transfer",
            "ibv_wr_send_imm and ibv_wr_rdma_write_imm deliver their immediate: the responder's completion "
            "carries it with IBV_WC_WITH_IMM",
            "WORK REQUESTS",
            transports=IB_TRANSPORTS,
            over={("qp_type", "opcode"): _WR_IMM_OPS},
            variant="{qp_type}-{opcode}",
            params={"size": 64, "seed": 23},
        ),
        Claim(
            "atomics-like-ibv_post_send",
            "wr-transfer",
            "ibv_wr_atomic_cmp_swp and ibv_wr_atomic_fetch_add complete on an RC QP of a device that "
            "advertises atomic operations",
            "WORK REQUESTS",
            transports=IB_TRANSPORTS,
            needs=(Cap("attr.atomic_cap"),),
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_ATOMIC_CMP_AND_SWP"), (_RC, "IBV_WR_ATOMIC_FETCH_AND_ADD"))},
            variant="{qp_type}-{opcode}",
            params={"size": 8, "compare_add": 1, "swap": 2},
        ),
        Claim(
            "data-setters",
            "wr-transfer",
            "each DATA setter gives the WR its data: a list of SGEs is gathered in order, inline data "
            "(one buffer or a list) is copied at the call, and the bytes arrive intact",
            "DATA transfer setters",
            over={
                ("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_RC, "IBV_WR_RDMA_WRITE"), (_UD, "IBV_WR_SEND")),
                "setter": ("ibv_wr_set_sge_list", "ibv_wr_set_inline_data", "ibv_wr_set_inline_data_list"),
            },
            variant="{qp_type}-{opcode}-{setter}",
            params={"size": 48, "seed": 24, "setter": Var("setter"), "pieces": 3},
        ),
        Claim(
            "several-wrs-one-batch",
            "wr-transfer",
            "the builder and setter pair may be repeated within one region: every WR of the batch "
            "completes, in the order built, each with its own wr_id",
            "USAGE",
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_RC, "IBV_WR_RDMA_WRITE"))},
            variant="{qp_type}-{opcode}-x3",
            params={"size": 64, "seed": 25, "count": 3},
        ),
    ),
    tables=_WR_TABLES,
)
ibv_wr_abort = _wr_void(
    "ibv_wr_abort",
    (),
    "close the critical region discarding every WR built since ibv_wr_start",
    claims=(
        Claim(
            "discards-the-batch",
            "wr-abort",
            "the WRs built since ibv_wr_start are discarded by ibv_wr_abort: no completion comes on "
            "either side, and a batch completed afterwards yields only its own WR",
            "USAGE",
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_RC, "IBV_WR_RDMA_WRITE"))},
            variant="{qp_type}-{opcode}",
            params={"size": 64, "seed": 26},
        ),
    ),
    tables=_WR_TABLES,
)
_wr_builders = {
    name: _wr_void(name, params, f"{summary} ({opcode} of ibv_post_send)")
    for name, params, opcode, summary in _WR_BUILDERS
}

ibv_wr_send = _wr_builders["ibv_wr_send"]
ibv_wr_send_imm = _wr_builders["ibv_wr_send_imm"]
ibv_wr_send_inv = _wr_builders["ibv_wr_send_inv"]
ibv_wr_send_tso = _wr_builders["ibv_wr_send_tso"]
ibv_wr_rdma_write = _wr_builders["ibv_wr_rdma_write"]
ibv_wr_rdma_write_imm = _wr_builders["ibv_wr_rdma_write_imm"]
ibv_wr_rdma_read = _wr_builders["ibv_wr_rdma_read"]
ibv_wr_atomic_cmp_swp = _wr_builders["ibv_wr_atomic_cmp_swp"]
ibv_wr_atomic_fetch_add = _wr_builders["ibv_wr_atomic_fetch_add"]
ibv_wr_bind_mw = _wr_builders["ibv_wr_bind_mw"]
ibv_wr_local_inv = _wr_builders["ibv_wr_local_inv"]

# The setters: (name, parameters after qp, what they attach to the WR just built).
_WR_SETTERS = (
    (
        "ibv_wr_set_sge",
        (Param("lkey", "uint32_t"), Param("addr", "uint64_t"), Param("length", "uint32_t")),
        "DATA: one buffer (as a one-entry ibv_wr_set_sge_list)",
    ),
    (
        "ibv_wr_set_sge_list",
        (Param("num_sge", "size_t"), Param("sg_list", "const struct ibv_sge *")),
        "DATA: several buffers, gathered (or scattered) in order",
    ),
    (
        "ibv_wr_set_inline_data",
        (Param("addr", "void *"), Param("length", "size_t")),
        "DATA: one buffer copied during the call (as IBV_SEND_INLINE; SEND and RDMA WRITE only)",
    ),
    (
        "ibv_wr_set_inline_data_list",
        (Param("num_buf", "size_t"), Param("buf_list", "const struct ibv_data_buf *")),
        "DATA: several buffers copied during the call, concatenated",
    ),
    (
        "ibv_wr_set_ud_addr",
        (Param("ah", "struct ibv_ah *"), Param("remote_qpn", "uint32_t"), Param("remote_qkey", "uint32_t")),
        "QP: the destination of a UD WR (mandatory on UD)",
    ),
    (
        "ibv_wr_set_xrc_srqn",
        (Param("remote_srqn", "uint32_t"),),
        "QP: the destination SRQ of an XRC send WR (mandatory on XRC_SEND)",
    ),
)

_wr_setters = {name: _wr_void(name, params, summary) for name, params, summary in _WR_SETTERS}

ibv_wr_set_sge = _wr_setters["ibv_wr_set_sge"]
ibv_wr_set_sge_list = _wr_setters["ibv_wr_set_sge_list"]
ibv_wr_set_inline_data = _wr_setters["ibv_wr_set_inline_data"]
ibv_wr_set_inline_data_list = _wr_setters["ibv_wr_set_inline_data_list"]
ibv_wr_set_ud_addr = _wr_setters["ibv_wr_set_ud_addr"]
ibv_wr_set_xrc_srqn = _wr_setters["ibv_wr_set_xrc_srqn"]

# ibv_start_poll takes the first completion (0) or answers ENOENT; ibv_next_poll the next ones; the
# ibv_wc_read_* accessors read the current one (status and wr_id are fields of struct ibv_cq_ex);
# ibv_end_poll closes the iteration, once, after a start_poll that returned 0.
_CQX = Param("cq", "struct ibv_cq_ex *")
_CQ_PAGE = "ibv_create_cq_ex(3)"

ibv_cq_ex_to_cq = Verb(
    name="ibv_cq_ex_to_cq",
    man=_CQ_PAGE,
    prototype="struct ibv_cq *ibv_cq_ex_to_cq(struct ibv_cq_ex *cq);",
    returns=RETURNS_POINTER,
    summary="verbs.h's cast: the extended CQ as the struct ibv_cq the other verbs (a QP's send_cq) take",
    params=(_CQX,),
)

ibv_start_poll = Verb(
    name="ibv_start_poll",
    man=_CQ_PAGE,
    prototype="int ibv_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr);",
    returns=RETURNS_ERRNO,
    summary="take the CQ's first completion: 0, ENOENT when there is none, or another errno value",
    params=(_CQX, Param("attr", "struct ibv_poll_cq_attr *", default={"comp_mask": 0})),
    errors=(
        Error("ENOENT", "no completion to take (the CQ stays valid)", covered_by=("empty-is-enoent",)),
        Error(
            "errno",
            "another failure: the iteration must not go on (the page names no specific errno)",
            untestable="no setup that makes a healthy CQ fail to poll is known",
        ),
    ),
    claims=(
        Claim(
            "empty-is-enoent",
            "refused",
            "ibv_start_poll on a CQ with no completion returns ENOENT",
            "DESCRIPTION",
            variant="fresh-cq_ex",
            call={"cq": Need("cq_ex")},
            errnos=("ENOENT",),
        ),
        Claim(
            "reads-the-completion",
            "cq-ex-poll",
            "after a WR completes, ibv_start_poll returns 0 and the current completion reads as the "
            "WR's: status and wr_id, and through the accessors wc_flags asked for its opcode, byte_len, "
            "qp_num, wc_flags and immediate; ibv_next_poll then returns ENOENT and ibv_end_poll ends the "
            "iteration",
            "DESCRIPTION",
            also=(Source("man", "ibv_poll_cq(3)", "DESCRIPTION"),),
            over={
                ("qp_type", "opcode"): (
                    (_RC, "IBV_WR_SEND"),
                    (_RC, "IBV_WR_SEND_WITH_IMM"),
                    (_RC, "IBV_WR_RDMA_WRITE_WITH_IMM"),
                    (_RC, "IBV_WR_RDMA_READ"),
                    (_UD, "IBV_WR_SEND"),
                )
            },
            variant="{qp_type}-{opcode}",
            transports=IB_TRANSPORTS,
            params={"size": 64, "seed": 27},
        ),
        Claim(
            "iterates-several",
            "cq-ex-poll",
            "with several completions queued, ibv_start_poll takes the first and ibv_next_poll each "
            "following one, in order, then returns ENOENT",
            "DESCRIPTION",
            over={("qp_type", "opcode"): ((_RC, "IBV_WR_RDMA_WRITE"),)},
            variant="{qp_type}-{opcode}-x3",
            params={"size": 64, "seed": 28, "count": 3},
        ),
    ),
    tables={"not_supported": ibv_create_cq_ex.tables["not_supported"]},
)
ibv_next_poll = Verb(
    name="ibv_next_poll",
    man=_CQ_PAGE,
    prototype="int ibv_next_poll(struct ibv_cq_ex *cq);",
    returns=RETURNS_ERRNO,
    summary="move to the next completion: 0, ENOENT when there is none, or another errno value",
    params=(_CQX,),
    errors=(
        Error(
            "ENOENT",
            "no further completion",
            untestable="checked by ibv_start_poll's claims (reads-the-completion, iterates-several)",
        ),
    ),
)
ibv_end_poll = Verb(
    name="ibv_end_poll",
    man=_CQ_PAGE,
    prototype="void ibv_end_poll(struct ibv_cq_ex *cq);",
    returns=RETURNS_VOID,
    summary="end an iteration that ibv_start_poll began with 0",
    params=(_CQX,),
)


def _wc_read(field: str, ctype: str) -> Verb:
    name = f"ibv_wc_read_{field}"
    return Verb(
        name=name,
        man=_CQ_PAGE,
        prototype=f"{ctype} {name}(struct ibv_cq_ex *cq);",
        returns=RETURNS_VALUE,
        summary=f"the current completion's {field} (valid between start_poll and end_poll)",
        params=(_CQX,),
    )


ibv_wc_read_opcode = _wc_read("opcode", "enum ibv_wc_opcode")
ibv_wc_read_byte_len = _wc_read("byte_len", "uint32_t")
ibv_wc_read_wc_flags = _wc_read("wc_flags", "unsigned int")
ibv_wc_read_qp_num = _wc_read("qp_num", "uint32_t")
ibv_wc_read_imm_data = _wc_read("imm_data", "__be32")
ibv_wc_read_src_qp = _wc_read("src_qp", "uint32_t")
ibv_wc_read_vendor_err = _wc_read("vendor_err", "uint32_t")


# --- 7. address handles, multicast and flows ----------------------------------------------------------------
# Address handles, multicast groups, flow steering, flow actions and the counters attached to flows.
_GRH_REQUIRED = Cap("port.flags&IBV_QPF_GRH_REQUIRED")

_AH_ATTR = {**_LOOPBACK_AV, "static_rate": "IBV_RATE_MAX"}
_IWARP_NO_DATAGRAMS = Source("iwarp", "RFC 5040 (iWARP defines reliable connections only: no datagram addressing)")

ibv_create_ah = Verb(
    name="ibv_create_ah",
    man="ibv_create_ah(3)",
    prototype="struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);",
    returns=RETURNS_POINTER,
    summary="create an address handle (UD addressing) on a PD; NULL on failure",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param("attr", "struct ibv_ah_attr *", default=_AH_ATTR, doc="the address vector; static_rate from ibv_rate"),
    ),
    errors=(
        Error(
            "EINVAL",
            "the port requires a GRH and is_global is 0 (NOTES), or the port does not exist (not on the "
            "page: the kernel's answer)",
            covered_by=("grh-required", "port-beyond-last-refused"),
        ),
        Error(
            "EOPNOTSUPP",
            "the provider has no address handles (libibverbs' default op; not on the page)",
            covered_by=("iwarp-has-none",),
        ),
        Error(
            "ENOMEM",
            "the AH cannot be allocated (not on the page)",
            untestable="cannot exhaust kernel or device memory safely on a shared lab VM",
        ),
    ),
    claims=(
        Claim(
            "failure-then-normal-use",
            "failure-path",
            "after each of its documented refusals, the same request made right is served: the object is "
            "created, used and destroyed with 0, with no object left behind and no kernel warning",
            "RETURN VALUE",
            also=(_FAILURE_PATHS,),
        ),
        Claim(
            "creates-ah",
            "succeeds",
            "a valid address vector (this port, a GRH from the port's own GID, the maximum "
            "static rate) yields an AH, and ibv_destroy_ah of it returns 0",
            "DESCRIPTION, NOTES",
            variant="loopback-with-grh-static_rate-MAX",
            transports=IB_TRANSPORTS,
            params={"then": (Step("ibv_destroy_ah", {"ah": Ref("call")}),)},
        ),
        Claim(
            "grh-required",
            "refused",
            "where the port sets IBV_QPF_GRH_REQUIRED, an AH without a GRH is refused",
            "NOTES",
            variant="is_global-0",
            transports=IB_TRANSPORTS,
            needs=(_GRH_REQUIRED,),
            errnos=("EINVAL",),
            call={"attr.is_global": 0},
            layer="kernel",
        ),
        Claim(
            "port-beyond-last-refused",
            "refused",
            "port_num names a physical port: one beyond the last is refused",
            "DESCRIPTION",
            variant="port_num-phys_port_cnt+1",
            transports=IB_TRANSPORTS,
            errnos=("EINVAL",),
            call={"attr.port_num": Dev("attr.phys_port_cnt", plus=1)},
            layer="kernel",
        ),
        Claim(
            "iwarp-has-none",
            "refused",
            "an iWARP device has no datagram service and so no address handles: creating one is refused",
            "DESCRIPTION",
            variant="iwarp",
            transports=("iwarp",),
            errnos=("EOPNOTSUPP", "EINVAL"),
            also=(_IWARP_NO_DATAGRAMS,),
        ),
        Claim(
            "addresses-ud-sends",
            "untestable",
            "a UD send through the AH reaches the port it addresses",
            "DESCRIPTION",
            untestable="needs traffic: left to the data-path section",
        ),
    ),
    contract=Contract(
        requires=(Resource("pd", role="pd"),), produces=(Resource("ah"),), destroyed_by="ibv_destroy_ah", makes=True
    ),
    tables={"not_supported": {"EOPNOTSUPP": "the provider has no address handles (libibverbs' default op)"}},
    undefined=("is_global 1 with an all-zero dgid",),
)

_MGID = bytes.fromhex("ff0e" + "00" * 12 + "1234")  # a multicast GID (ff0e::1234)


def _be32(value: int) -> int:
    """A __be32 field's value as a little-endian host stores it (the lab's hosts are x86)."""
    return int.from_bytes(value.to_bytes(4, "big"), "little")


_PEER_GID = bytes.fromhex("fe800000000000000002c9fffe123456")  # a sender's GID, as a received GRH carries it

_IPV6_GRH = {
    "version_tclass_flow": _be32((6 << 28) | (5 << 20) | 0x12345),
    "hop_limit": 9,
    "sgid": _PEER_GID,
    "dgid": Dev("gid"),
}
_WITH_GRH = {"wc_flags": "IBV_WC_GRH", "slid": 0x12, "sl": 3, "dlid_path_bits": 1}

# Every field given: a struct argument given in part is merged into the parameter's default.
_ZERO_GRH = {"version_tclass_flow": 0, "paylen": 0, "next_hdr": 0, "hop_limit": 0, "sgid": bytes(16), "dgid": bytes(16)}
_ROCE_V2, _IB_NEXT_HDR, _UDP = ("roce",), 0x1B, 17  # next_hdr: 0x1b for IB and RoCE v1, UDP for RoCE v2

ibv_create_ah_from_wc = Verb(
    name="ibv_create_ah_from_wc",
    man="ibv_create_ah_from_wc(3)",
    prototype="struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, "
    "uint8_t port_num);",
    returns=RETURNS_POINTER,
    summary="create an AH that answers the sender of a UD receive (ibv_init_ah_from_wc, then ibv_create_ah)",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param("wc", "struct ibv_wc *", default=_WITH_GRH),
        Param("grh", "struct ibv_grh *", default={**_IPV6_GRH, "next_hdr": _UDP}),
        Param("port_num", "uint8_t", default=Dev("port_num")),
    ),
    errors=(
        Error(
            "EINVAL",
            "ibv_init_ah_from_wc fails on a multicast destination, or ibv_create_ah refuses the result "
            "(not on the page)",
            covered_by=("fails-when-init-fails",),
        ),
        Error(
            "EPROTONOSUPPORT",
            "the GRH area holds no known header (not on the page: libibverbs)",
            covered_by=("fails-when-init-fails",),
        ),
    ),
    claims=(
        Claim(
            "creates-from-grh",
            "succeeds",
            "a receive's completion and GRH (RoCE v2, to this port's GID) yield an AH",
            "DESCRIPTION",
            variant="ipv6-udp-to-own-gid",
            transports=_ROCE_V2,
            # From this port's own GID, as a loopback receive's GRH is: on RoCE v2 the kernel resolves
            # the sender's MAC, which for an address no host answers fails (ETIMEDOUT on a veth; a
            # dummy netdev resolves anything), so the sender must be one the network knows.
            call={"grh.sgid": Dev("gid")},
        ),
        Claim(
            "fails-when-init-fails",
            "refused",
            "when the address vector cannot be derived no AH is created",
            "DESCRIPTION",
            transports=IB_TRANSPORTS,
            layer="libibverbs",
            over={
                ("header", "grh", "errno"): (
                    ("dgid-ff0e::1234", {**_IPV6_GRH, "next_hdr": _IB_NEXT_HDR, "dgid": _MGID}, "EINVAL"),
                    ("all-zero", _ZERO_GRH, "EPROTONOSUPPORT"),
                )
            },
            variant="{header}",
            call={"grh": Var("grh")},
            errnos=("{errno}",),
        ),
        Claim(
            "answers-real-receive",
            "untestable",
            "the AH made from a real UD receive reaches its sender",
            "DESCRIPTION",
            untestable="needs traffic: left to the data-path section",
        ),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("ah"),), destroyed_by="ibv_destroy_ah"),
    undefined=("destroying the AH while WRs that use it are outstanding",),
)

ibv_init_ah_from_wc = Verb(
    name="ibv_init_ah_from_wc",
    man="ibv_create_ah_from_wc(3)",
    prototype="int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc, "
    "struct ibv_grh *grh, struct ibv_ah_attr *ah_attr);",
    returns=RETURNS_COUNT,
    summary="fill an address vector that answers the sender of a UD receive (its completion and GRH); 0 or -1",
    params=(
        CONTEXT,
        Param("port_num", "uint8_t", default=Dev("port_num")),
        Param(
            "wc",
            "struct ibv_wc *",
            default={"wc_flags": 0, "slid": 0x12, "sl": 3, "dlid_path_bits": 1},
            doc="a UD receive's completion (slid, sl, dlid_path_bits, wc_flags)",
        ),
        Param("grh", "struct ibv_grh *", default={}, doc="the 40 bytes at the start of the receive buffer"),
        Param("ah_attr", "struct ibv_ah_attr *", "out"),
    ),
    errors=(
        Error(
            "EINVAL",
            "the GRH's destination is a multicast GID (not on the page: libibverbs)",
            covered_by=("multicast-destination-refused",),
        ),
        Error(
            "EPROTONOSUPPORT",
            "the GRH area holds neither an IPv6/IB nor a RoCE v2 IPv4 header (not on the page: libibverbs)",
            covered_by=("unknown-header-refused",),
        ),
    ),
    claims=(
        Claim(
            "without-grh",
            "succeeds",
            "without IBV_WC_GRH the result is a local address vector built from the "
            "completion: no GRH, the sender's LID, SL and path bits, this port",
            "DESCRIPTION",
            variant="wc-slid-0x12-sl-3",
            transports=IB_TRANSPORTS,
            layer="libibverbs",
            expect=(
                Expect("ah_attr.is_global", "==", 0),
                Expect("ah_attr.dlid", "==", 0x12),
                Expect("ah_attr.sl", "==", 3),
                Expect("ah_attr.src_path_bits", "==", 1),
                Expect("ah_attr.port_num", "==", Dev("port_num")),
            ),
        ),
        Claim(
            "grh-answers-sender-roce-v2",
            "succeeds",
            "with a GRH the result is global and points back at the "
            "sender's GID, with the GRH's hop limit, traffic class and flow label (a RoCE v2 GRH naming this "
            "port's GID as destination)",
            "DESCRIPTION",
            variant="ipv6-udp-to-own-gid",
            transports=_ROCE_V2,
            layer="libibverbs",
            call={"wc": _WITH_GRH, "grh": {**_IPV6_GRH, "next_hdr": _UDP}},
            expect=(
                Expect("ah_attr.is_global", "==", 1),
                Expect("ah_attr.grh.dgid", "==", _PEER_GID),
                Expect("ah_attr.grh.hop_limit", "==", 9),
                Expect("ah_attr.grh.traffic_class", "==", 5),
                Expect("ah_attr.grh.flow_label", "==", 0x12345),
                Expect("ah_attr.dlid", "==", 0x12),
            ),
        ),
        Claim(
            "grh-answers-sender-ib",
            "succeeds",
            "the same for an InfiniBand GRH (next header 0x1b)",
            "DESCRIPTION",
            variant="ib-grh-to-own-gid",
            transports=("ib",),
            layer="libibverbs",
            call={"wc": _WITH_GRH, "grh": {**_IPV6_GRH, "next_hdr": _IB_NEXT_HDR}},
            expect=(
                Expect("ah_attr.is_global", "==", 1),
                Expect("ah_attr.grh.dgid", "==", _PEER_GID),
                Expect("ah_attr.grh.hop_limit", "==", 9),
                Expect("ah_attr.grh.traffic_class", "==", 5),
                Expect("ah_attr.grh.flow_label", "==", 0x12345),
            ),
        ),
        Claim(
            "multicast-destination-refused",
            "refused",
            "a GRH whose destination is a multicast GID names no local GID to answer from: the call fails",
            "DESCRIPTION",
            variant="dgid-ff0e::1234",
            transports=IB_TRANSPORTS,
            layer="libibverbs",
            errnos=("EINVAL",),
            call={"wc": _WITH_GRH, "grh": {**_IPV6_GRH, "next_hdr": _IB_NEXT_HDR, "dgid": _MGID}},
        ),
        Claim(
            "unknown-header-refused",
            "refused",
            "a GRH area that holds no header the library knows makes the call fail",
            "DESCRIPTION",
            transports=IB_TRANSPORTS,
            layer="libibverbs",
            errnos=("EPROTONOSUPPORT",),
            over={("header", "grh"): (("all-zero", _ZERO_GRH), ("ipv6-next-header-tcp", {**_IPV6_GRH, "next_hdr": 6}))},
            variant="{header}",
            call={"wc": _WITH_GRH, "grh": Var("grh")},
        ),
        Claim(
            "answers-real-receive",
            "untestable",
            "an address vector made from a real UD receive reaches its sender",
            "NOTES",
            untestable="needs traffic: left to the data-path section",
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
    undefined=("grh pointing at fewer than 40 readable bytes", "a wc that is not a UD receive's completion"),
)

ibv_destroy_ah = Verb(
    name="ibv_destroy_ah",
    man="ibv_create_ah(3)",
    prototype="int ibv_destroy_ah(struct ibv_ah *ah);",
    returns=RETURNS_ERRNO,
    summary="destroy an address handle; 0 or an errno (NOTES)",
    params=(Param("ah", "struct ibv_ah *", default=Need("ah")),),
    claims=(
        Claim(
            "destroy-returns-zero",
            "succeeds",
            "destroying an unused AH returns 0, and the AH no longer holds its PD",
            "NOTES",
            variant="unused",
            transports=IB_TRANSPORTS,
            params={"then": (Step("ibv_dealloc_pd", {"pd": Need("pd")}),)},
        ),
    ),
    contract=Contract(requires=(Resource("ah", role="ah"),), destroys=(Resource("ah", role="ah"),)),
    undefined=(
        "destroying an AH that a posted, not yet completed WR uses",
        "destroying an AH twice",
        "using an AH after destroying it",
    ),
)

_MCAST_GID = {"raw": bytes.fromhex("ff0e" + "00" * 12 + "1234")}  # ff0e::1234, a multicast GID
_MCAST_CAPS = (Cap("attr.max_mcast_grp"), Cap("attr.max_mcast_qp_attach"))
_MCAST_QP = Need("qp", spec={"qp_type": "IBV_QPT_UD"})
_MCAST_KERNEL = Source(
    "kernel",
    "drivers/infiniband/core/verbs.c ib_attach_mcast()/ib_detach_mcast(): UD only, "
    "a multicast GID (and on IB a multicast LID), else EINVAL",
)

ibv_attach_mcast = Verb(
    name="ibv_attach_mcast",
    man="ibv_attach_mcast(3)",
    prototype="int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);",
    returns=RETURNS_ERRNO,
    summary="attach a UD QP to a multicast group",
    params=(
        Param("qp", "struct ibv_qp *", default=_MCAST_QP),
        Param("gid", "const union ibv_gid *", default=_MCAST_GID),
        Param("lid", "uint16_t", default=0, doc="the multicast LID (IB); RoCE ignores it"),
    ),
    errors=(
        Error(
            "EINVAL",
            "the QP is not UD (NOTES), or gid is not a multicast GID (not on the page: the kernel)",
            covered_by=("only-ud", "unicast-gid-refused", "unicast-lid-refused"),
        ),
        Error(
            "EOPNOTSUPP",
            "the provider has no multicast (libibverbs' default op; not on the page)",
            untestable="the not-implemented answer: where it comes, the claims are reported unsupported "
            "(tables['not_supported'])",
        ),
    ),
    claims=(
        Claim(
            "attach-ud",
            "succeeds",
            "a UD QP is attached to a multicast group, and detached again with 0",
            "DESCRIPTION",
            variant="UD-ff0e::1234",
            needs=_MCAST_CAPS,
            transports=IB_TRANSPORTS,
            params={"then": (Step("ibv_detach_mcast"),)},
        ),
        Claim(
            "attach-twice-accepted",
            "succeeds",
            "attaching a QP to a group it is already in succeeds (the QP still gets one copy of each message)",
            "NOTES",
            variant="UD-ff0e::1234-twice",
            needs=_MCAST_CAPS,
            transports=IB_TRANSPORTS,
            steps=(Step("ibv_attach_mcast"),),
            params={"then": (Step("ibv_detach_mcast"),)},
        ),
        Claim(
            "only-ud",
            "refused",
            "only UD QPs may be attached to multicast groups",
            "NOTES",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UC")},
            variant="{qp_type}",
            call={"qp": Need("qp", spec={"qp_type": Var("qp_type")})},
            errnos=("EINVAL",),
            layer="kernel",
            also=(_MCAST_KERNEL,),
        ),
        Claim(
            "unicast-gid-refused",
            "refused",
            "gid names a multicast group: a unicast GID is refused",
            "DESCRIPTION",
            variant="UD-fe80::1",
            needs=_MCAST_CAPS,
            transports=IB_TRANSPORTS,
            errnos=("EINVAL",),
            call={"gid": {"raw": bytes.fromhex("fe80" + "00" * 13 + "01")}},
            layer="kernel",
            also=(_MCAST_KERNEL,),
        ),
        Claim(
            "unicast-lid-refused",
            "refused",
            "on InfiniBand, lid names a multicast LID: a unicast one is refused",
            "DESCRIPTION",
            variant="UD-lid-1",
            needs=_MCAST_CAPS,
            transports=("ib",),
            errnos=("EINVAL",),
            call={"lid": 1},
            layer="kernel",
            also=(_MCAST_KERNEL,),
        ),
        Claim(
            "receives-group-traffic",
            "untestable",
            "an attached QP receives one copy of each message sent to the group, however often it was attached",
            "DESCRIPTION, NOTES",
            untestable="needs traffic: left to the data-path section",
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"not_supported": {"EOPNOTSUPP": "the provider has no multicast (libibverbs' default op)"}},
    undefined=("sending to a group on InfiniBand without a subnet administrator join (NOTES)",),
)

ibv_detach_mcast = Verb(
    name="ibv_detach_mcast",
    man="ibv_attach_mcast(3)",
    prototype="int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);",
    returns=RETURNS_ERRNO,
    summary="detach a UD QP from a multicast group",
    params=(
        Param("qp", "struct ibv_qp *", default=_MCAST_QP),
        Param("gid", "const union ibv_gid *", default=_MCAST_GID),
        Param("lid", "uint16_t", default=0),
    ),
    errors=(
        Error(
            "EINVAL",
            "the QP is not attached to that group (not on the page: the kernel's answer)",
            covered_by=("not-attached-refused",),
        ),
        Error(
            "EOPNOTSUPP",
            "the provider has no multicast (libibverbs' default op; not on the page)",
            untestable="the not-implemented answer: where it comes, the claims are reported unsupported "
            "(tables['not_supported'])",
        ),
    ),
    claims=(
        Claim(
            "detach-attached",
            "succeeds",
            "detaching an attached QP returns 0, after which the QP can be destroyed",
            "DESCRIPTION",
            variant="UD-ff0e::1234",
            needs=_MCAST_CAPS,
            transports=IB_TRANSPORTS,
            steps=(Step("ibv_attach_mcast"),),
            params={"then": (Step("ibv_destroy_qp", {"qp": _MCAST_QP}),)},
            also=(Source("man", "ibv_create_qp(3)", "NOTES"),),
        ),
        Claim(
            "not-attached-refused",
            "refused",
            "detaching a QP from a group it is not in is refused",
            "DESCRIPTION",
            variant="UD-never-attached",
            needs=_MCAST_CAPS,
            transports=IB_TRANSPORTS,
            errnos=("EINVAL",),
            layer="kernel",
            also=(_MCAST_KERNEL,),
        ),
        Claim(
            "no-traffic-after-detach",
            "untestable",
            "after detaching, messages to the group no longer arrive",
            "DESCRIPTION",
            untestable="needs traffic: left to the data-path section",
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"not_supported": {"EOPNOTSUPP": "the provider has no multicast (libibverbs' default op)"}},
    undefined=("detaching once after attaching twice (the page does not say)",),
)

# A rule that any steering device accepts: match one destination MAC exactly (the page's EXAMPLE, L2 only).
_ETH_DST_MAC = (
    "ibv_flow_spec_eth",
    {"type": "IBV_FLOW_SPEC_ETH", "val.dst_mac": bytes.fromhex("661122334455"), "mask.dst_mac": b"\xff" * 6},
)
_FLOW_RULE = {
    "type": "IBV_FLOW_ATTR_NORMAL",
    "priority": 0,
    "port": Dev("port_num"),
    "flags": 0,
    "num_of_specs": 1,
    "specs": (_ETH_DST_MAC,),
}
_STEERING = Cap("attr.device_cap_flags&IBV_DEVICE_MANAGED_FLOW_STEERING")
_DONT_TRAP = "IBV_FLOW_ATTR_FLAGS_DONT_TRAP"

ibv_create_flow = Verb(
    name="ibv_create_flow",
    man="ibv_create_flow(3)",
    prototype="struct ibv_flow *ibv_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr);",
    returns=RETURNS_POINTER,
    summary="attach a steering rule (attr + specs) to a UD or RAW_PACKET QP; NULL with errno on failure",
    params=(
        Param(
            "qp",
            "struct ibv_qp *",
            default=Need("qp", spec={"qp_type": Var("qp_type")}),
            doc="UD or RAW_PACKET; with EGRESS only names the device",
        ),
        Param(
            "flow_attr",
            "struct ibv_flow_attr *",
            default=_FLOW_RULE,
            flags="ibv_flow_flags",
            doc="flags draw from ibv_flow_flags; type from ibv_flow_attr_type; specs follow the header",
        ),
    ),
    errors=(
        Error(
            "EINVAL",
            "the flow specification, the QP or the priority is invalid",
            covered_by=("qp-type-not-allowed", "invalid-rules"),
        ),
        Error(
            "ENOMEM",
            "not enough memory to create the rule",
            untestable="cannot exhaust kernel or device memory safely on a shared lab VM",
        ),
        Error("ENXIO", "the device does not support device managed flow steering", covered_by=("no-steering-errno",)),
        Error(
            "EPERM",
            "no permission to add the rule",
            untestable="the lab runs as root and the page does not say which rules need privilege",
        ),
    ),
    claims=(
        Claim(
            "no-steering-errno",
            "gated",
            "on a device that does not advertise IBV_DEVICE_MANAGED_FLOW_STEERING the call fails with ENXIO",
            "ERRORS, NOTES",
            over={"qp_type": ("IBV_QPT_UD", "IBV_QPT_RAW_PACKET")},
            variant="{qp_type}-valid-rule-without-steering",
            errnos=("ENXIO",),
            params={"gate": _STEERING, "only": "not-advertised"},
        ),
        Claim(
            "qp-type-not-allowed",
            "refused",
            "rules attach only to UD and RAW_PACKET QPs: other QP types are refused as invalid",
            "NOTES, ERRORS",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UC")},
            variant="{qp_type}-qp-not-allowed",
            errnos=("EINVAL", "ENXIO"),
        ),
        Claim(
            "invalid-rules",
            "refused",
            "an invalid specification list, flag/type combination or flag is refused "
            "with EINVAL; DONT_TRAP goes only with rule type NORMAL",
            "ERRORS, NOTES",
            over={
                "qp_type": ("IBV_QPT_UD", "IBV_QPT_RAW_PACKET"),
                ("rule", "change"): (
                    (
                        "dont-trap-with-ALL_DEFAULT",
                        {"type": "IBV_FLOW_ATTR_ALL_DEFAULT", "flags": _DONT_TRAP, "num_of_specs": 0, "specs": ()},
                    ),
                    (
                        "dont-trap-with-MC_DEFAULT",
                        {"type": "IBV_FLOW_ATTR_MC_DEFAULT", "flags": _DONT_TRAP, "num_of_specs": 0, "specs": ()},
                    ),
                    (
                        "dont-trap-with-SNIFFER",
                        {"type": "IBV_FLOW_ATTR_SNIFFER", "flags": _DONT_TRAP, "num_of_specs": 0, "specs": ()},
                    ),
                    ("fewer-specs-than-declared", {"num_of_specs": 2}),
                    ("unknown-flag-bit31", {"flags": Flags(bits=(31,))}),
                    ("port-0", {"port": 0}),
                    ("port-beyond-last", {"port": Dev("attr.phys_port_cnt", plus=1)}),
                ),
            },
            variant="{qp_type}-{rule}",
            needs=(_STEERING,),
            errnos=("EINVAL",),
            call={"flow_attr": Var("change")},
        ),
        Claim(
            "create-valid",
            "gated",
            "a valid rule (the page's L2 example, and NORMAL with DONT_TRAP) is created "
            "on a steering device and destroyed with 0",
            "DESCRIPTION, NOTES",
            over={
                "qp_type": ("IBV_QPT_UD", "IBV_QPT_RAW_PACKET"),
                ("rule", "change"): (("eth-dst-mac", {}), ("dont-trap-with-NORMAL", {"flags": _DONT_TRAP})),
            },
            variant="{qp_type}-{rule}",
            call={"flow_attr": Var("change")},
            params={
                "gate": _STEERING,
                "only": "advertised",
                "advertised": {"then": (Step("ibv_destroy_flow", {"flow_id": Ref("call")}),)},
            },
        ),
        Claim(
            "egress-qp-only-names-device",
            "untestable",
            "with EGRESS the QP only identifies the device",
            "NOTES",
            untestable="observing which QP egress actions use needs traffic through a steering device",
        ),
        Claim(
            "unknown-spec-type-refused",
            "refused",
            "a specification of a type the header does not define is refused as an invalid specification",
            "ERRORS",
            over={"qp_type": ("IBV_QPT_UD", "IBV_QPT_RAW_PACKET")},
            variant="{qp_type}-spec-type-0x22",
            needs=(_STEERING,),
            errnos=("EINVAL",),
            layer="libibverbs",
            call={"flow_attr.specs": (("ibv_flow_spec_eth", {**_ETH_DST_MAC[1], "type": 0x22}),)},
        ),
        Claim(
            "steers-matching-packets",
            "untestable",
            "a packet that matches a rule is delivered to the rule's QP "
            "(the lower priority number winning, DONT_TRAP passing it on)",
            "DESCRIPTION",
            untestable="needs traffic: left to the data-path section",
        ),
    ),
    contract=Contract(
        requires=(Resource("qp", role="qp"),), produces=(Resource("flow"),), destroyed_by="ibv_destroy_flow", makes=True
    ),
    tables={"vars": {"qp_type": "IBV_QPT_UD"}},
)

ibv_destroy_flow = Verb(
    name="ibv_destroy_flow",
    man="ibv_create_flow(3)",
    prototype="int ibv_destroy_flow(struct ibv_flow *flow_id);",
    returns=RETURNS_ERRNO,
    summary="remove a steering rule; 0 or an errno",
    params=(Param("flow_id", "struct ibv_flow *", default=Need("flow", spec={"qp_type": Var("qp_type")})),),
    errors=(
        Error(
            "EINVAL",
            "flow_id is invalid",
            untestable="an invalid flow_id is a stale or forged pointer: passing one is undefined behaviour",
        ),
        Error(
            "ENOMEM",
            "not enough memory to destroy the rule",
            untestable="cannot exhaust memory safely on a shared lab VM",
        ),
    ),
    claims=(
        Claim(
            "destroy-returns-zero",
            "succeeds",
            "destroying a rule just created returns 0",
            "RETURN VALUE",
            over={"qp_type": ("IBV_QPT_UD", "IBV_QPT_RAW_PACKET")},
            variant="{qp_type}-eth-dst-mac",
            needs=(_STEERING,),
        ),
    ),
    contract=Contract(requires=(Resource("flow", role="flow_id"),), destroys=(Resource("flow", role="flow_id"),)),
)

_ESP_NOT_SUPPORTED = {"EOPNOTSUPP": "the provider or the kernel does not implement ESP flow actions"}
_ESP_STRUCTS = (
    "needs the ESP attributes and key material behind pointers of the attribute struct, which catalogue "
    "values cannot lay out yet; no device attribute advertises ESP offload either"
)

ibv_create_flow_action_esp = Verb(
    name="ibv_create_flow_action_esp",
    man="ibv_create_flow_action(3)",
    prototype="struct ibv_flow_action *ibv_create_flow_action_esp(struct ibv_context *ctx, "
    "struct ibv_flow_action_esp_attr *esp);",
    returns=RETURNS_POINTER,
    summary="create an IPsec ESP flow action (decrypt or encrypt after a steering match); NULL on failure",
    params=(
        Param("ctx", "struct ibv_context *", default=Need("context")),
        Param(
            "esp",
            "struct ibv_flow_action_esp_attr *",
            default={"comp_mask": 0},
            flags="ibv_flow_action_esp_mask",
            doc="the page's struct names are swapped with the header's: the argument is ibv_flow_action_esp_attr, "
            "whose esp_attr member points at ibv_flow_action_esp",
        ),
    ),
    errors=(
        Error(
            "EOPNOTSUPP",
            "no ESP offload here (libibverbs' default op, or the provider/kernel), or a comp_mask bit "
            "other than ESN (not on the page)",
            covered_by=("reserved-comp-mask-refused",),
        ),
        Error(
            "EINVAL",
            "invalid key material or attribute combination (not on the page: the kernel's answer)",
            untestable=_ESP_STRUCTS,
        ),
    ),
    claims=(
        Claim(
            "reserved-comp-mask-refused",
            "refused",
            "only IBV_FLOW_ACTION_ESP_MASK_ESN is a comp_mask bit: others are refused",
            "ARGUMENTS",
            over={"bit": (1, 31)},
            variant="comp_mask-bit{bit}",
            call={"esp.comp_mask": Flags(bits=(Var("bit"),))},
            errnos=("EOPNOTSUPP", "EINVAL"),
        ),
        Claim(
            "creates-action",
            "untestable",
            "with valid AES-GCM key material an ESP action is created, and it can "
            "serve several steering rules through IBV_FLOW_SPEC_ACTION_HANDLE",
            "DESCRIPTION",
            untestable=_ESP_STRUCTS,
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="ctx"),),
        produces=(Resource("flow_action"),),
        destroyed_by="ibv_destroy_flow_action",
    ),
    tables={"not_supported": _ESP_NOT_SUPPORTED},
    undefined=("keymat_ptr or replay_ptr pointing at fewer bytes than keymat_len or replay_len",),
)

ibv_modify_flow_action_esp = Verb(
    name="ibv_modify_flow_action_esp",
    man="ibv_create_flow_action(3)",
    prototype="int ibv_modify_flow_action_esp(struct ibv_flow_action *action, struct ibv_flow_action_esp_attr *esp);",
    returns=RETURNS_ERRNO,
    summary="change an ESP action's parameters for every rule using it; on failure the old ones stay",
    params=(
        Param("action", "struct ibv_flow_action *"),
        Param(
            "esp",
            "struct ibv_flow_action_esp_attr *",
            default={"comp_mask": "IBV_FLOW_ACTION_ESP_MASK_ESN", "esn": 1},
            flags="ibv_flow_action_esp_mask",
            doc="NULL members keep their current values",
        ),
    ),
    errors=(
        Error(
            "EOPNOTSUPP",
            "a comp_mask bit other than ESN, or no ESP support (not on the page)",
            untestable="needs an ESP action, which no check can create here (see ibv_create_flow_action_esp)",
        ),
    ),
    claims=(
        Claim(
            "modify-esn",
            "untestable",
            "the ESN of an existing action can be updated; a failed modify leaves the "
            "old parameters in force for every rule",
            "DESCRIPTION, RETURN VALUE",
            untestable="needs an ESP action (" + _ESP_STRUCTS + ") and IPsec traffic to observe the parameters",
        ),
    ),
    contract=Contract(requires=(Resource("flow_action", role="action"),)),
)

ibv_destroy_flow_action = Verb(
    name="ibv_destroy_flow_action",
    man="ibv_create_flow_action(3)",
    prototype="int ibv_destroy_flow_action(struct ibv_flow_action *action);",
    returns=RETURNS_ERRNO,
    summary="destroy a flow action; 0 or an errno",
    params=(Param("action", "struct ibv_flow_action *"),),
    errors=(
        Error(
            "EBUSY",
            "a steering rule still uses the action (not on the page: the kernel's use count)",
            untestable="needs an ESP action, which no check can create here (see ibv_create_flow_action_esp)",
        ),
    ),
    claims=(
        Claim(
            "destroy-returns-zero",
            "untestable",
            "an action no rule uses is destroyed and the call returns 0",
            "RETURN VALUE",
            untestable="needs an ESP action (" + _ESP_STRUCTS + ")",
        ),
    ),
    contract=Contract(
        requires=(Resource("flow_action", role="action"),), destroys=(Resource("flow_action", role="action"),)
    ),
    undefined=("destroying an action twice",),
)

_COUNTERS_UNSUPPORTED = {"EOPNOTSUPP": "the device does not support counters (the page's answer for it)"}

ibv_create_counters = Verb(
    name="ibv_create_counters",
    man="ibv_create_counters(3)",
    prototype="struct ibv_counters *ibv_create_counters(struct ibv_context *context, "
    "struct ibv_counters_init_attr *init_attr);",
    returns=RETURNS_POINTER,
    summary="create a counters handle to attach to flows (and other objects); NULL with errno on failure",
    params=(CONTEXT, Param("init_attr", "struct ibv_counters_init_attr *", default={"comp_mask": 0})),
    errors=(
        Error(
            "EOPNOTSUPP",
            "the device does not support counters",
            untestable="the answer of a device without counters: every counters check reports it as unsupported "
            "(tables['not_supported'])",
        ),
        Error(
            "ENOSYS",
            "old libibverbs answered this instead of EOPNOTSUPP",
            untestable="libibverbs 44 answers EOPNOTSUPP; only an older library gives ENOSYS",
        ),
        Error(
            "ENOMEM", "not enough memory for the object", untestable="cannot exhaust memory safely on a shared lab VM"
        ),
    ),
    claims=(
        Claim(
            "creates",
            "succeeds",
            "a counters handle is created for the context",
            "DESCRIPTION",
            variant="comp_mask-0",
            expect=(Expect("ret.context", "==", Need("context")),),
        ),
        Claim(
            "unknown-comp-mask",
            "refused",
            "comp_mask names no optional field yet: any bit is refused (the "
            "device's EOPNOTSUPP counts as a refusal once a plain create succeeded)",
            "ARGUMENTS",
            over={"bit": (0, 1, 31)},
            variant="comp_mask-bit{bit}",
            steps=(Step("ibv_create_counters"),),
            errnos=("EINVAL", "EOPNOTSUPP"),
            call={"init_attr.comp_mask": Flags(bits=(Var("bit"),))},
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),),
        produces=(Resource("counters"),),
        destroyed_by="ibv_destroy_counters",
        makes=True,
    ),
    tables={"not_supported": _COUNTERS_UNSUPPORTED},
)

_COUNTED_FLOW_NEEDS = (
    Cap("attr.device_cap_flags&IBV_DEVICE_MANAGED_FLOW_STEERING"),
    *_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"],
)

# Counters bound to a flow: PACKETS statically attached at index 0, then a raw-packet flow that counts.
_COUNTED_FLOW = (
    Step("ibv_attach_counters_point_flow"),
    Step(
        "ibv_create_flow",
        {
            "qp": Need("qp", spec={"qp_type": "IBV_QPT_RAW_PACKET"}),
            "flow_attr": {
                "num_of_specs": 2,
                "specs": (
                    _ETH_DST_MAC,
                    (
                        "ibv_flow_spec_counter_action",
                        {"type": "IBV_FLOW_SPEC_ACTION_COUNT", "counters": Need("counters")},
                    ),
                ),
            },
        },
        name="flow",
    ),
)

ibv_attach_counters_point_flow = Verb(
    name="ibv_attach_counters_point_flow",
    man="ibv_attach_counters_point_flow(3)",
    prototype="int ibv_attach_counters_point_flow(struct ibv_counters *counters, struct ibv_counter_attach_attr *attr, "
    "struct ibv_flow *flow);",
    returns=RETURNS_ERRNO,
    summary="define which value (packets, bytes) counters collect at an index, for a flow (NULL: the next one made)",
    params=(
        Param("counters", "struct ibv_counters *", default=Need("counters")),
        Param(
            "attr",
            "struct ibv_counter_attach_attr *",
            flags="ibv_counter_description",
            default={"counter_desc": "IBV_COUNTER_PACKETS", "index": 0, "comp_mask": 0},
        ),
        Param("flow", "struct ibv_flow *", nullable=True, doc="NULL for a static attach"),
    ),
    errors=(
        Error("EINVAL", "invalid arguments", covered_by=("unknown-comp-mask",)),
        Error(
            "ENOTSUP",
            "counter_desc is not supported on the object (the number of EOPNOTSUPP on Linux)",
            covered_by=("unknown-description",),
        ),
        Error(
            "EBUSY",
            "the counters are already bound to a flow: no further static attach",
            covered_by=("busy-when-bound",),
        ),
        Error("ENOMEM", "not enough memory", untestable="cannot exhaust memory safely on a shared lab VM"),
    ),
    claims=(
        Claim(
            "static-attach",
            "succeeds",
            "a static attach (flow NULL) of packets or bytes at an index succeeds",
            "DESCRIPTION",
            over={"desc": ("IBV_COUNTER_PACKETS", "IBV_COUNTER_BYTES"), "index": (0, 1)},
            variant="{desc}-at-{index}",
            call={"attr.counter_desc": Var("desc"), "attr.index": Var("index")},
        ),
        Claim(
            "unknown-comp-mask",
            "refused",
            "comp_mask bits name no optional field: an attach with one is an "
            "invalid argument (or, as the device may say, unsupported)",
            "ERRORS, ARGUMENTS",
            over={"bit": (0, 31)},
            variant="comp_mask-bit{bit}",
            errnos=("EINVAL", "EOPNOTSUPP"),
            call={"attr.comp_mask": Flags(bits=(Var("bit"),))},
        ),
        Claim(
            "unknown-description",
            "refused",
            "a counter_desc outside enum ibv_counter_description is not supported: ENOTSUP",
            "ERRORS",
            variant="counter_desc-2",
            errnos=("EOPNOTSUPP", "EINVAL"),
            call={"attr.counter_desc": 2},
        ),
        Claim(
            "busy-when-bound",
            "refused",
            "once the counters are bound to a flow, a further static attach fails with EBUSY",
            "ERRORS, DESCRIPTION",
            variant="after-a-counted-flow",
            needs=_COUNTED_FLOW_NEEDS,
            errnos=("EBUSY",),
            steps=_COUNTED_FLOW,
            call={"attr.index": 1},
        ),
        Claim(
            "counting",
            "untestable",
            "bound counters count the matching traffic, and several attaches or flows on one index add up",
            "DESCRIPTION",
            untestable="needs traffic through a counted flow: data path",
        ),
    ),
    contract=Contract(requires=(Resource("counters", role="counters"),)),
    tables={"not_supported": _COUNTERS_UNSUPPORTED},
    undefined=("attaching to a flow of another context",),
)

ibv_read_counters = Verb(
    name="ibv_read_counters",
    man="ibv_read_counters(3)",
    prototype="int ibv_read_counters(struct ibv_counters *counters, uint64_t *counters_value, uint32_t ncounters, "
    "uint32_t flags);",
    returns=RETURNS_ERRNO,
    summary="read the counters' values into counters_value, by attach index; 0 or an errno",
    params=(
        Param("counters", "struct ibv_counters *", default=Need("counters")),
        Param("counters_value", "uint64_t *", "out"),
        Param("ncounters", "uint32_t", default=1),
        Param("flags", "uint32_t", default=0, flags="ibv_read_counters_flags"),
    ),
    claims=(
        Claim(
            "reads-from-zero",
            "succeeds",
            "counters bound to a flow read, hardware or cached, and start at zero (no traffic yet)",
            "DESCRIPTION",
            over={"flags": (0, "IBV_READ_COUNTERS_ATTR_PREFER_CACHED")},
            variant="flags-{flags}",
            needs=_COUNTED_FLOW_NEEDS,
            steps=_COUNTED_FLOW,
            call={"flags": Var("flags")},
            expect=(Expect("counters_value", "==", 0),),
            also=(Source("man", "ibv_create_counters(3)", "DESCRIPTION"),),
        ),
        Claim(
            "unknown-flags",
            "refused",
            "flags outside enum ibv_read_counters_flags are refused",
            "ARGUMENTS",
            over={"bit": (1, 31)},
            variant="flags-bit{bit}",
            needs=_COUNTED_FLOW_NEEDS,
            steps=_COUNTED_FLOW,
            call={"flags": Flags(bits=(Var("bit"),))},
            layer="kernel",
        ),
        Claim(
            "by-index",
            "untestable",
            "values land at the indexes the attaches chose, and grow with traffic",
            "DESCRIPTION",
            untestable="needs traffic through a counted flow: data path",
        ),
    ),
    contract=Contract(requires=(Resource("counters", role="counters"),)),
    tables={"not_supported": _COUNTERS_UNSUPPORTED},
    undefined=("ncounters larger than the counters_value array",),
)

ibv_destroy_counters = Verb(
    name="ibv_destroy_counters",
    man="ibv_create_counters(3)",
    prototype="int ibv_destroy_counters(struct ibv_counters *counters);",
    returns=RETURNS_ERRNO,
    summary="release a counters handle; 0 or an errno",
    params=(Param("counters", "struct ibv_counters *", default=Need("counters")),),
    errors=(
        Error(
            "EINVAL",
            "an invalid parameter",
            untestable="the only invalid parameter is a bad pointer, which is undefined behaviour",
        ),
    ),
    claims=(
        Claim(
            "destroys-unbound",
            "succeeds",
            "destroying counters bound to nothing returns 0",
            "RETURN VALUE",
            variant="fresh-counters",
            expect=(Expect("ret", "==", 0),),
        ),
    ),
    contract=Contract(
        requires=(Resource("counters", role="counters"),), destroys=(Resource("counters", role="counters"),)
    ),
    tables={"not_supported": _COUNTERS_UNSUPPORTED},
    undefined=("destroying counters still bound to an object (the page asks to detach them first)", "destroying twice"),
)


# --- 8. rdma_cm ---------------------------------------------------------------------------------------------
# librdmacm: how an iWARP RC pair is connected (the verbs cannot do it alone). Family "rdmacm":
# no claims of its own here; the data-path checks call these through the same call layer. Each int-returning
# one gives 0, or -1 with errno set (each page's RETURN VALUE): RETURNS_COUNT, as ibv_close_device, not
# RETURNS_ERRNO, which read a failure's -1 as a broken convention and EPERM.
_RDMACM = "rdma_cm(7)"
rdma_create_event_channel = Verb(
    name="rdma_create_event_channel",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_POINTER,
    prototype="struct rdma_event_channel *rdma_create_event_channel(void);",
    summary="open a channel for connection events",
    contract=Contract(produces=(Resource("event_channel"),), destroyed_by="rdma_destroy_event_channel"),
)
rdma_destroy_event_channel = Verb(
    name="rdma_destroy_event_channel",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_VOID,
    prototype="void rdma_destroy_event_channel(struct rdma_event_channel *channel);",
    summary="close a connection event channel",
    params=(Param("channel", "struct rdma_event_channel *"),),
    contract=Contract(destroys=(Resource("event_channel", role="channel"),)),
)
rdma_create_id = Verb(
    name="rdma_create_id",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context, "
    "enum rdma_port_space ps);",
    summary="make a connection identifier (0, or -1 with errno)",
    params=(
        Param("channel", "struct rdma_event_channel *"),
        Param("id", "struct rdma_cm_id **", "out"),
        Param("context", "void *"),
        Param("ps", "enum rdma_port_space", default="RDMA_PS_TCP"),
    ),
)
rdma_destroy_id = Verb(
    name="rdma_destroy_id",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_destroy_id(struct rdma_cm_id *id);",
    summary="release a connection identifier",
    params=(Param("id", "struct rdma_cm_id *"),),
    contract=Contract(destroys=(Resource("cm_id", role="id"),)),
)
rdma_bind_addr = Verb(
    name="rdma_bind_addr",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr);",
    summary="bind to an address",
    params=(Param("id", "struct rdma_cm_id *"), Param("addr", "struct sockaddr *")),
)
rdma_listen = Verb(
    name="rdma_listen",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_listen(struct rdma_cm_id *id, int backlog);",
    summary="listen for connection requests",
    params=(Param("id", "struct rdma_cm_id *"), Param("backlog", "int", default=1)),
)
rdma_resolve_addr = Verb(
    name="rdma_resolve_addr",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr, "
    "int timeout_ms);",
    summary="resolve a destination address to an RDMA device (an event follows)",
    params=(
        Param("id", "struct rdma_cm_id *"),
        Param("src_addr", "struct sockaddr *"),
        Param("dst_addr", "struct sockaddr *"),
        Param("timeout_ms", "int", default=5000),
    ),
)
rdma_resolve_route = Verb(
    name="rdma_resolve_route",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms);",
    summary="resolve the route to the destination (an event follows)",
    params=(Param("id", "struct rdma_cm_id *"), Param("timeout_ms", "int", default=5000)),
)
rdma_connect = Verb(
    name="rdma_connect",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);",
    summary="connect; the QP named by conn_param->qp_num is the local end",
    params=(Param("id", "struct rdma_cm_id *"), Param("conn_param", "struct rdma_conn_param *")),
)
rdma_accept = Verb(
    name="rdma_accept",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);",
    summary="accept a connection request on the QP named by conn_param->qp_num",
    params=(Param("id", "struct rdma_cm_id *"), Param("conn_param", "struct rdma_conn_param *")),
)
rdma_disconnect = Verb(
    name="rdma_disconnect",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_disconnect(struct rdma_cm_id *id);",
    summary="disconnect (the QPs move to Error)",
    params=(Param("id", "struct rdma_cm_id *"),),
)
rdma_get_cm_event = Verb(
    name="rdma_get_cm_event",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event);",
    summary="take the next connection event (blocks unless the channel's fd is ready)",
    params=(Param("channel", "struct rdma_event_channel *"), Param("event", "struct rdma_cm_event **", "out")),
)
rdma_ack_cm_event = Verb(
    name="rdma_ack_cm_event",
    man=_RDMACM,
    family="rdmacm",
    returns=RETURNS_COUNT,
    prototype="int rdma_ack_cm_event(struct rdma_cm_event *event);",
    summary="release a connection event",
    params=(Param("event", "struct rdma_cm_event *"),),
)


# --- 9. helpers ---------------------------------------------------------------------------------------------
# Rates, strings, fork support, importing objects from another process.
_RATE_MULT = (
    ("IBV_RATE_2_5_GBPS", 1),
    ("IBV_RATE_5_GBPS", 2),
    ("IBV_RATE_10_GBPS", 4),
    ("IBV_RATE_20_GBPS", 8),
    ("IBV_RATE_30_GBPS", 12),
    ("IBV_RATE_40_GBPS", 16),
    ("IBV_RATE_60_GBPS", 24),
    ("IBV_RATE_80_GBPS", 32),
    ("IBV_RATE_120_GBPS", 48),
)

ibv_rate_to_mult = Verb(
    name="ibv_rate_to_mult",
    man="ibv_rate_to_mult(3)",
    prototype="int ibv_rate_to_mult(enum ibv_rate rate);",
    returns=RETURNS_VALUE,
    summary="the multiple of 2.5 Gbit/s that an IBV_RATE_* value stands for, or -1",
    params=(Param("rate", "enum ibv_rate", flags="ibv_rate"),),
    claims=(
        Claim(
            "multiple-of-2-5",
            "exact-table",
            "a rate that is a whole multiple of 2.5 Gbit/s converts to that multiple",
            "DESCRIPTION",
            layer="libibverbs",
            params={"input": "rate", "table": _RATE_MULT},
        ),
    ),
    # The later lane families transmit at 14.0625, 25.78125, 53.125 or 106.25 Gbit/s per lane, no
    # whole multiple of 2.5: what those rates convert to is not said (libibverbs 44 answers -1 for
    # FDR and EDR, 11 for IBV_RATE_28_GBPS, and the round-number quotient for HDR and NDR).
    undefined=(
        "a rate whose transmission rate is not a whole multiple of 2.5 Gbit/s (FDR, EDR, HDR, NDR lanes)",
        "IBV_RATE_MAX or a value outside enum ibv_rate (libibverbs 44 answers -1)",
    ),
)

mult_to_ibv_rate = Verb(
    name="mult_to_ibv_rate",
    man="ibv_rate_to_mult(3)",
    prototype="enum ibv_rate mult_to_ibv_rate(int mult);",
    returns=RETURNS_VALUE,
    summary="the IBV_RATE_* value for a multiple of 2.5 Gbit/s",
    params=(Param("mult", "int"),),
    claims=(
        Claim(
            "inverse",
            "exact-table",
            "a multiple of 2.5 Gbit/s converts back to its IBV_RATE_* value",
            "DESCRIPTION",
            layer="libibverbs",
            params={"input": "mult", "table": tuple((mult, rate) for rate, mult in _RATE_MULT)},
        ),
    ),
    undefined=("a multiple no rate of the 2.5 Gbit/s lane family has (libibverbs 44 answers IBV_RATE_MAX for most)",),
)

# ibv_rate_to_mbps(3): a rate converts to the number of Mbit/s it stands for. For the lanes after
# QDR the IBTA signalling rate per lane is not the round number in the enumerator's name (FDR
# 14.0625, EDR 25.78125, HDR 53.125, NDR 106.25 Gbaud), and libibverbs answers that rate.
_IBTA_LANE_RATES = Source(
    "ibta",
    "IBTA Vol. 2 r1.4 (physical layer): signalling rate per lane of SDR, DDR, QDR, "
    "FDR, EDR, HDR and NDR links, times 1, 2, 4, 8 or 12 lanes",
)
_RATE_MBPS_NOMINAL = (
    ("IBV_RATE_2_5_GBPS", 2500),
    ("IBV_RATE_5_GBPS", 5000),
    ("IBV_RATE_10_GBPS", 10000),
    ("IBV_RATE_20_GBPS", 20000),
    ("IBV_RATE_30_GBPS", 30000),
    ("IBV_RATE_40_GBPS", 40000),
    ("IBV_RATE_60_GBPS", 60000),
    ("IBV_RATE_80_GBPS", 80000),
    ("IBV_RATE_120_GBPS", 120000),
)
_RATE_MBPS_LANES = (
    ("IBV_RATE_14_GBPS", 14062),
    ("IBV_RATE_56_GBPS", 56250),
    ("IBV_RATE_112_GBPS", 112500),
    ("IBV_RATE_168_GBPS", 168750),
    ("IBV_RATE_25_GBPS", 25781),
    ("IBV_RATE_100_GBPS", 103125),
    ("IBV_RATE_200_GBPS", 206250),
    ("IBV_RATE_300_GBPS", 309375),
    ("IBV_RATE_28_GBPS", 28125),
    ("IBV_RATE_50_GBPS", 53125),
    ("IBV_RATE_400_GBPS", 425000),
    ("IBV_RATE_600_GBPS", 637500),
    ("IBV_RATE_800_GBPS", 850000),
    ("IBV_RATE_1200_GBPS", 1275000),
)

ibv_rate_to_mbps = Verb(
    name="ibv_rate_to_mbps",
    man="ibv_rate_to_mbps(3)",
    prototype="int ibv_rate_to_mbps(enum ibv_rate rate);",
    returns=RETURNS_VALUE,
    summary="the Mbit/s an IBV_RATE_* value stands for",
    params=(Param("rate", "enum ibv_rate", flags="ibv_rate"),),
    claims=(
        Claim(
            "sdr-ddr-qdr",
            "exact-table",
            "a rate of the 2.5 Gbit/s lane family converts to its Mbit/s (5 Gbit/s is 5000)",
            "DESCRIPTION",
            layer="libibverbs",
            params={"input": "rate", "table": _RATE_MBPS_NOMINAL},
        ),
        Claim(
            "later-lanes-signalling",
            "exact-table",
            "a rate of the FDR, EDR, HDR or NDR lane families converts to "
            "the transmission (signalling) rate of its lanes in Mbit/s, not the round number of its name",
            "DESCRIPTION",
            layer="libibverbs",
            also=(_IBTA_LANE_RATES,),
            params={"input": "rate", "table": _RATE_MBPS_LANES},
        ),
    ),
    undefined=("IBV_RATE_MAX or a value outside enum ibv_rate (libibverbs 44 answers -1)",),
)

mbps_to_ibv_rate = Verb(
    name="mbps_to_ibv_rate",
    man="ibv_rate_to_mbps(3)",
    prototype="enum ibv_rate mbps_to_ibv_rate(int mbps);",
    returns=RETURNS_VALUE,
    summary="the IBV_RATE_* value for a number of Mbit/s",
    params=(Param("mbps", "int"),),
    claims=(
        Claim(
            "inverse",
            "exact-table",
            "each rate's Mbit/s converts back to that rate (5000 is IBV_RATE_5_GBPS)",
            "DESCRIPTION",
            layer="libibverbs",
            also=(_IBTA_LANE_RATES,),
            params={
                "input": "mbps",
                "table": tuple((mbps, rate) for rate, mbps in _RATE_MBPS_NOMINAL + _RATE_MBPS_LANES),
            },
        ),
    ),
    undefined=("a number of Mbit/s that is no rate's exact value, e.g. 100000 (libibverbs 44 answers IBV_RATE_MAX)",),
)

_EVENT_TYPES = tuple(
    name
    for name in (
        "IBV_EVENT_CQ_ERR",
        "IBV_EVENT_QP_FATAL",
        "IBV_EVENT_QP_REQ_ERR",
        "IBV_EVENT_QP_ACCESS_ERR",
        "IBV_EVENT_COMM_EST",
        "IBV_EVENT_SQ_DRAINED",
        "IBV_EVENT_PATH_MIG",
        "IBV_EVENT_PATH_MIG_ERR",
        "IBV_EVENT_DEVICE_FATAL",
        "IBV_EVENT_PORT_ACTIVE",
        "IBV_EVENT_PORT_ERR",
        "IBV_EVENT_LID_CHANGE",
        "IBV_EVENT_PKEY_CHANGE",
        "IBV_EVENT_SM_CHANGE",
        "IBV_EVENT_SRQ_ERR",
        "IBV_EVENT_SRQ_LIMIT_REACHED",
        "IBV_EVENT_QP_LAST_WQE_REACHED",
        "IBV_EVENT_CLIENT_REREGISTER",
        "IBV_EVENT_GID_CHANGE",
        "IBV_EVENT_WQ_FATAL",
    )
)

_STRINGS_PAGE = "ibv_event_type_str(3)"


def _enum_string_verb(name: str, enum: str, param: str, values: tuple[str, ...], extra: tuple[Claim, ...] = ()) -> Verb:
    """A *_str helper: every value of its enum has a text of its own, the same text each time."""
    return Verb(
        name=name,
        man=_STRINGS_PAGE,
        prototype=f"const char *{name}(enum {enum} {param});",
        returns=RETURNS_VALUE,
        summary=f"a constant string describing an enum {enum} value",
        params=(Param(param, f"enum {enum}", default=Var(param), flags=enum),),
        claims=(
            Claim(
                "describes-each-value",
                "succeeds",
                "each value has a non-empty description, the same text when asked again (a constant string)",
                "RETURN VALUE",
                over={param: values},
                variant=f"{{{param}}}",
                expect=(Expect("ret", "nonzero"), Expect("again", "==", Ref("call"))),
                params={"then": (Step(name, {param: Var(param)}, name="again"),)},
                layer="libibverbs",
            ),
            Claim(
                "distinct-descriptions",
                "distinct",
                "different values have different descriptions",
                "DESCRIPTION, RETURN VALUE",
                variant=f"all-{len(values)}",
                layer="libibverbs",
                expect=(Expect("ret", "nonzero"),),
                params={"count": len(values), "value": "ret", "cycle": values, "cycle_var": param},
            ),
            *extra,
        ),
        tables={"vars": {param: values[0]}},
        undefined=("modifying the returned string", 'a value outside the enum (libibverbs 44 answers "unknown")'),
    )


ibv_event_type_str = _enum_string_verb("ibv_event_type_str", "ibv_event_type", "event_type", _EVENT_TYPES)

_NODE_TYPES = (
    "IBV_NODE_UNKNOWN",
    "IBV_NODE_CA",
    "IBV_NODE_SWITCH",
    "IBV_NODE_ROUTER",
    "IBV_NODE_RNIC",
    "IBV_NODE_USNIC",
    "IBV_NODE_USNIC_UDP",
    "IBV_NODE_UNSPECIFIED",
)

ibv_node_type_str = _enum_string_verb("ibv_node_type_str", "ibv_node_type", "node_type", _NODE_TYPES)

_PORT_STATES = (
    "IBV_PORT_NOP",
    "IBV_PORT_DOWN",
    "IBV_PORT_INIT",
    "IBV_PORT_ARMED",
    "IBV_PORT_ACTIVE",
    "IBV_PORT_ACTIVE_DEFER",
)

ibv_port_state_str = _enum_string_verb(
    "ibv_port_state_str",
    "ibv_port_state",
    "port_state",
    _PORT_STATES,
    extra=(
        Claim(
            "describes-the-port",
            "succeeds",
            "the state ibv_query_port reports for the port under test has a description",
            "RETURN VALUE",
            variant="port-under-test",
            call={"port_state": Dev("port.state")},
            expect=(Expect("ret", "nonzero"),),
            layer="libibverbs",
        ),
    ),
)

_FRESH_PROCESS = (
    "fork support is process-wide and permanent: whether ibv_fork_init succeeds depends on "
    "whether this process registered memory before, so it needs a fresh process (the suite "
    "has no kind that runs calls in one)"
)

ibv_fork_init = Verb(
    name="ibv_fork_init",
    man="ibv_fork_init(3)",
    prototype="int ibv_fork_init(void);",
    returns=RETURNS_ERRNO,
    summary="make libibverbs safe across fork(); 0, or EINVAL once memory was registered",
    errors=(
        Error("EINVAL", "memory was registered before the call, so fork is no longer safe", untestable=_FRESH_PROCESS),
    ),
    claims=(
        Claim(
            "init-in-a-fresh-process",
            "untestable",
            "in a process that registered nothing, the call returns 0 "
            "(and again on a second call), and registration still works afterwards",
            "DESCRIPTION, RETURN VALUE",
            untestable=_FRESH_PROCESS,
        ),
        Claim(
            "too-late",
            "untestable",
            "after a memory registration the call returns EINVAL",
            "RETURN VALUE",
            untestable=_FRESH_PROCESS,
        ),
        Claim(
            "environment",
            "untestable",
            "RDMAV_FORK_SAFE or IBV_FORK_SAFE in the environment act as the call",
            "NOTES",
            untestable="the variables are read by the first ibv_get_device_list of a process: " + _FRESH_PROCESS,
        ),
        Claim(
            "huge-pages",
            "untestable",
            "RDMAV_HUGEPAGES_SAFE makes registrations check the page size, needed for huge pages with fork support",
            "NOTES",
            untestable="needs configured huge pages and " + _FRESH_PROCESS,
        ),
        Claim(
            "fork-keeps-data",
            "untestable",
            "with fork support a fork() does not corrupt registered memory of the parent",
            "DESCRIPTION",
            untestable="needs traffic after a fork on a kernel without copy-on-fork",
        ),
    ),
    undefined=("calling fork() while another thread is inside a verbs call",),
)

ibv_is_fork_initialized = Verb(
    name="ibv_is_fork_initialized",
    man="ibv_is_fork_initialized(3)",
    prototype="enum ibv_fork_status ibv_is_fork_initialized(void);",
    returns=RETURNS_VALUE,
    summary="whether fork support is enabled, disabled, or unneeded (the kernel copies DMA pages on fork)",
    claims=(
        Claim(
            "one-of-three",
            "succeeds",
            "the answer is IBV_FORK_DISABLED, IBV_FORK_ENABLED or IBV_FORK_UNNEEDED",
            "RETURN VALUE",
            variant="this-process",
            layer="libibverbs",
            expect=(Expect("ret", "in", ("IBV_FORK_DISABLED", "IBV_FORK_ENABLED", "IBV_FORK_UNNEEDED")),),
        ),
        Claim(
            "unneeded-first",
            "untestable",
            "where the kernel copies DMA pages on fork the answer is "
            "IBV_FORK_UNNEEDED, whether or not ibv_fork_init was called",
            "NOTES",
            untestable="no device attribute reports the kernel's copy-on-fork (libibverbs asks RDMA netlink), "
            "and the ibv_fork_init half needs a fresh process",
        ),
    ),
)

ibv_import_device = Verb(
    name="ibv_import_device",
    man="ibv_import_device(3)",
    prototype="struct ibv_context *ibv_import_device(int cmd_fd);",
    returns=RETURNS_POINTER,
    summary="a context over a duplicate of another context's command FD; NULL on failure",
    params=(Param("cmd_fd", "int", default=-1, doc="a dup() of a context's cmd_fd; the new context owns it"),),
    claims=(
        Claim(
            "not-a-descriptor",
            "refused",
            "a number that is no open file descriptor (let alone a dup of a context's command FD) gives NULL",
            "DESCRIPTION, RETURN VALUE",
            variant="cmd_fd--1",
            call={"cmd_fd": -1},
            layer="libibverbs",
        ),
        Claim(
            "imports-a-dup",
            "untestable",
            "a dup of an open context's cmd_fd gives a second context on the same "
            "device, which works and is closed with ibv_close_device (which may close the FD)",
            "DESCRIPTION",
            untestable="needs a duplicate of a context's cmd_fd whose ownership passes to the new context; the "
            "catalogue has no value for a duplicated descriptor yet (the import of PDs, MRs and DMs is checked "
            "on the suite's own context)",
        ),
    ),
    contract=Contract(produces=(Resource("context"),), destroyed_by="ibv_close_device"),
    tables={
        "not_supported": {
            "EOPNOTSUPP": "the provider cannot import a context (libibverbs answers "
            "EOPNOTSUPP without an import_context op)"
        }
    },
    undefined=(
        "passing the original cmd_fd rather than a duplicate (two contexts would close one descriptor)",
        "using the imported descriptor after closing the imported context",
    ),
)

_IMPORT_UNSUPPORTED = {"EOPNOTSUPP": "the provider has no import op (libibverbs' default answers EOPNOTSUPP)"}
_BAD_HANDLE = 0xFFFFFFFF  # no kernel object of this context has that handle

ibv_import_pd = Verb(
    name="ibv_import_pd",
    man="ibv_import_pd(3)",
    prototype="struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle);",
    returns=RETURNS_POINTER,
    summary="a PD object for the kernel PD with handle pd_handle in context; NULL on failure",
    params=(CONTEXT, Param("pd_handle", "uint32_t", default=Ref("original", "handle"))),
    claims=(
        Claim(
            "imports-the-pd",
            "succeeds",
            "importing a live PD's handle gives a PD with that handle, usable where "
            "a PD is (an MR registers on it), and unimporting it leaves the original PD alive",
            "DESCRIPTION",
            variant="own-context",
            steps=(Step("ibv_alloc_pd", name="original"),),
            expect=(
                Expect("ret.handle", "==", Ref("original", "handle")),
                Expect("ret.context", "==", Need("context")),
            ),
            params={
                "then": (
                    Step("ibv_reg_mr", {"pd": Ref("call")}, name="mr"),
                    Step("ibv_dereg_mr", {"mr": Ref("mr")}),
                    Step("ibv_unimport_pd", {"pd": Ref("call")}),
                    Step("ibv_reg_mr", {"pd": Ref("original")}),
                )
            },
        ),
        Claim(
            "unknown-handle",
            "refused",
            "a handle that names no PD of the context gives NULL",
            "DESCRIPTION, RETURN VALUE",
            variant="handle-0xffffffff",
            call={"pd_handle": _BAD_HANDLE},
            layer="kernel",
        ),
        Claim(
            "dealloc-through-import",
            "succeeds",
            "ibv_dealloc_pd on the imported PD destroys the kernel object: "
            "its handle no longer imports, and the original may then only be unimported",
            "DESCRIPTION",
            variant="own-context",
            steps=(Step("ibv_alloc_pd", name="original"),),
            params={
                "then": (
                    Step("ibv_dealloc_pd", {"pd": Ref("call")}),
                    Step("ibv_import_pd", {"pd_handle": Ref("original", "handle")}, expect="fails"),
                    Step("ibv_unimport_pd", {"pd": Ref("original")}),
                )
            },
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),), produces=(Resource("pd"),), destroyed_by="ibv_unimport_pd"
    ),
    tables={"not_supported": _IMPORT_UNSUPPORTED},
    undefined=(
        "using a PD object (original or imported) after the kernel PD was freed through another one, "
        "except to unimport it",
    ),
)

ibv_unimport_pd = Verb(
    name="ibv_unimport_pd",
    man="ibv_import_pd(3)",
    prototype="void ibv_unimport_pd(struct ibv_pd *pd);",
    returns=RETURNS_VOID,
    summary="release an imported PD object without touching the kernel PD",
    params=(Param("pd", "struct ibv_pd *"),),
    contract=Contract(destroys=(Resource("pd", role="pd"),)),
    undefined=("unimporting twice", "unimporting a parent domain (mlx5 44 asserts)"),
)

ibv_import_mr = Verb(
    name="ibv_import_mr",
    man="ibv_import_mr(3)",
    prototype="struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle);",
    returns=RETURNS_POINTER,
    summary="an MR object for the kernel MR with handle mr_handle in pd's context; NULL on failure",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param("mr_handle", "uint32_t", default=Ref("original", "handle")),
    ),
    claims=(
        Claim(
            "same-region",
            "succeeds",
            "the imported MR is the same kernel MR: same handle, keys and length, "
            "and unimporting it leaves the original registered",
            "DESCRIPTION",
            variant="own-context",
            steps=(Step("ibv_reg_mr", {"pd": Need("pd")}, name="original"),),
            expect=(
                Expect("ret.handle", "==", Ref("original", "handle")),
                Expect("ret.lkey", "==", Ref("original", "lkey")),
                Expect("ret.rkey", "==", Ref("original", "rkey")),
                Expect("ret.length", "==", Ref("original", "length")),
            ),
            params={
                "then": (Step("ibv_unimport_mr", {"mr": Ref("call")}), Step("ibv_dereg_mr", {"mr": Ref("original")}))
            },
        ),
        Claim(
            "addr-is-null",
            "succeeds",
            "the addr of an imported MR does not apply: it is NULL",
            "NOTES",
            variant="own-context",
            steps=(Step("ibv_reg_mr", {"pd": Need("pd")}, name="original"),),
            expect=(Expect("ret.addr", "zero"),),
        ),
        Claim(
            "unknown-handle",
            "refused",
            "a handle that names no MR of the context gives NULL",
            "DESCRIPTION, RETURN VALUE",
            variant="handle-0xffffffff",
            call={"mr_handle": _BAD_HANDLE},
            layer="kernel",
        ),
        Claim(
            "dereg-through-import",
            "succeeds",
            "ibv_dereg_mr on the imported MR destroys the kernel MR: its handle "
            "no longer imports, and the original may then only be unimported",
            "DESCRIPTION",
            variant="own-context",
            steps=(Step("ibv_reg_mr", {"pd": Need("pd")}, name="original"),),
            params={
                "then": (
                    Step("ibv_dereg_mr", {"mr": Ref("call")}),
                    Step("ibv_import_mr", {"mr_handle": Ref("original", "handle")}, expect="fails"),
                    Step("ibv_unimport_mr", {"mr": Ref("original")}),
                )
            },
        ),
    ),
    contract=Contract(
        requires=(Resource("pd", role="pd"),), produces=(Resource("mr"),), destroyed_by="ibv_unimport_mr"
    ),
    tables={"not_supported": _IMPORT_UNSUPPORTED},
    undefined=(
        "using an MR object after the kernel MR was deregistered through another one, except to unimport it",
        "reading through the imported MR's addr (NULL)",
    ),
)

ibv_unimport_mr = Verb(
    name="ibv_unimport_mr",
    man="ibv_import_mr(3)",
    prototype="void ibv_unimport_mr(struct ibv_mr *mr);",
    returns=RETURNS_VOID,
    summary="release an imported MR object without touching the kernel MR",
    params=(Param("mr", "struct ibv_mr *"),),
    contract=Contract(destroys=(Resource("mr", role="mr"),)),
    undefined=("unimporting twice",),
)

ibv_import_dm = Verb(
    name="ibv_import_dm",
    man="ibv_import_dm(3)",
    prototype="struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle);",
    returns=RETURNS_POINTER,
    summary="a DM object for the device memory with handle dm_handle in context; NULL with errno on failure",
    params=(CONTEXT, Param("dm_handle", "uint32_t", default=Ref("original", "handle"))),
    claims=(
        Claim(
            "same-memory",
            "succeeds",
            "the imported DM has the original's handle, and unimporting it leaves the "
            "original allocated (it still copies and frees)",
            "DESCRIPTION",
            variant="own-context",
            needs=(_DM,),
            steps=(Step("ibv_alloc_dm", name="original"),),
            expect=(Expect("ret.handle", "==", Ref("original", "handle")),),
            params={
                "then": (
                    Step("ibv_unimport_dm", {"dm": Ref("call")}),
                    Step("ibv_memcpy_to_dm", {"dm": Ref("original")}),
                    Step("ibv_free_dm", {"dm": Ref("original")}),
                )
            },
        ),
        Claim(
            "unknown-handle",
            "refused",
            "a handle that names no DM gives NULL and sets errno",
            "RETURN VALUE",
            variant="handle-0xffffffff",
            call={"dm_handle": _BAD_HANDLE},
            layer="kernel",
        ),
        Claim(
            "free-through-import",
            "succeeds",
            "ibv_free_dm on the imported DM frees the device memory: its handle "
            "no longer imports, and the original may then only be unimported",
            "DESCRIPTION",
            variant="own-context",
            needs=(_DM,),
            steps=(Step("ibv_alloc_dm", name="original"),),
            params={
                "then": (
                    Step("ibv_free_dm", {"dm": Ref("call")}),
                    Step("ibv_import_dm", {"dm_handle": Ref("original", "handle")}, expect="fails"),
                    Step("ibv_unimport_dm", {"dm": Ref("original")}),
                )
            },
        ),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"),), produces=(Resource("dm"),), destroyed_by="ibv_unimport_dm"
    ),
    tables={"not_supported": _IMPORT_UNSUPPORTED},
    undefined=("using a DM object after the memory was freed through another one, except to unimport it",),
)

ibv_unimport_dm = Verb(
    name="ibv_unimport_dm",
    man="ibv_import_dm(3)",
    prototype="void ibv_unimport_dm(struct ibv_dm *dm);",
    returns=RETURNS_VOID,
    summary="release an imported DM object without freeing the device memory",
    params=(Param("dm", "struct ibv_dm *"),),
    contract=Contract(destroys=(Resource("dm", role="dm"),)),
    undefined=("unimporting twice",),
)


# Every Verb defined above, in the order of this file.
CATALOGUE: tuple[Verb, ...] = tuple(value for value in list(globals().values()) if isinstance(value, Verb))
