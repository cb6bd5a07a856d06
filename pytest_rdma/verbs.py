"""The verb catalogue: one declarative description per verb, from its man page.

Every claim paraphrases its source in our own words and cites the page section (and, where
the page relies on it, the IBTA table or the kernel rule it comes from). Checks are
generated from these entries: a claim names its kind (pytest_rdma/kinds) and gives the data
the kind needs. A parameter's `default` is how a check passes it when the claim does not say
otherwise; a verb whose contract produces a resource and names its destructor is the one way
the suite makes that resource.

This module is data: it imports only the catalogue's vocabulary (pytest_rdma.catalogue.model).
"""

from __future__ import annotations

from pytest_rdma.catalogue.model import (
    IB_TRANSPORTS,
    RETURNS_COUNT,
    RETURNS_ERRNO,
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
    Param,
    Ref,
    Resource,
    Source,
    Step,
    Transition,
    Var,
    Verb,
)

CONTEXT = Param("context", "struct ibv_context *", default=Need("context"))

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

# --- section: device, port and GID verbs ------------------------------------------------------
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
    ),
    contract=Contract(produces=(Resource("device_list"),), destroyed_by="ibv_free_device_list"),
)

ibv_free_device_list = Verb(
    name="ibv_free_device_list",
    man="ibv_get_device_list(3)",
    prototype="void ibv_free_device_list(struct ibv_device **list);",
    returns=RETURNS_VOID,
    summary="free a list returned by ibv_get_device_list",
    params=(Param("list", "struct ibv_device **"),),
    contract=Contract(destroys=(Resource("device_list", role="list"),)),
)

ibv_get_device_name = Verb(
    name="ibv_get_device_name",
    man="ibv_get_device_name(3)",
    prototype="const char *ibv_get_device_name(struct ibv_device *device);",
    returns=RETURNS_VALUE,
    summary="the kernel name of a device (e.g. mlx5_0), or NULL",
    params=(Param("device", "struct ibv_device *", default=Need("device")),),
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
    ),
    contract=Contract(
        requires=(Resource("device", role="device"),), produces=(Resource("context"),), destroyed_by="ibv_close_device"
    ),
)

ibv_close_device = Verb(
    name="ibv_close_device",
    man="ibv_open_device(3)",
    prototype="int ibv_close_device(struct ibv_context *context);",
    returns=RETURNS_ERRNO,
    summary="close a verbs context; 0 on success",
    params=(Param("context", "struct ibv_context *"),),
    contract=Contract(destroys=(Resource("context", role="context"),)),
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
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
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
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
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
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
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
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)
# --- end section: device ----------------------------------------------------------------------

# --- section: ibv_modify_qp and det_modify_qp -------------------------------------------------
_MQP = "ibv_modify_qp(3)"

# ibv_modify_qp(3) NOTES, the tables: the attributes that must be given on each step
# Reset -> Init -> RTR -> RTS, per QP transport service type (IBV_QP_STATE included).
_MODIFY_QP_REQUIRED = {
    "RC": {
        "RESET>INIT": ("IBV_QP_STATE", "IBV_QP_PKEY_INDEX", "IBV_QP_PORT", "IBV_QP_ACCESS_FLAGS"),
        "INIT>RTR": ("IBV_QP_STATE", "IBV_QP_AV", "IBV_QP_PATH_MTU", "IBV_QP_DEST_QPN", "IBV_QP_RQ_PSN",
                     "IBV_QP_MAX_DEST_RD_ATOMIC", "IBV_QP_MIN_RNR_TIMER"),
        "RTR>RTS": ("IBV_QP_STATE", "IBV_QP_SQ_PSN", "IBV_QP_MAX_QP_RD_ATOMIC", "IBV_QP_RETRY_CNT",
                    "IBV_QP_RNR_RETRY", "IBV_QP_TIMEOUT"),
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
        "RTR>RTS": ("IBV_QP_CUR_STATE", "IBV_QP_ALT_PATH", "IBV_QP_ACCESS_FLAGS", "IBV_QP_MIN_RNR_TIMER",
                    "IBV_QP_PATH_MIG_STATE"),
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
_QP_ATTR_VALUES = {
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
    "qp_state", "cur_qp_state", "path_mtu", "path_mig_state", "qkey", "rq_psn", "sq_psn", "dest_qp_num",
    "qp_access_flags", "pkey_index", "alt_pkey_index", "en_sqd_async_notify", "sq_draining", "max_rd_atomic",
    "max_dest_rd_atomic", "min_rnr_timer", "port_num", "timeout", "retry_cnt", "rnr_retry", "alt_port_num",
    "alt_timeout", "rate_limit",
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
        Error("errno", "any attribute or the mask is invalid (NOTES); the page names no specific errno",
              covered_by=("required-attrs", "forbidden-attrs", "illegal-transitions", "unknown-mask-bits",
                          "out-of-range", "resize-cap", "alt-path", "grh-required")),
    ),
    claims=(
        Claim("minimal-attrs", "state-table", "each step Reset>Init>RTR>RTS succeeds with exactly the required "
              "attributes of the QP type, and the QP is then in the new state", "NOTES",
              params={"rule": "minimal"}, **_IB_ONLY),
        Claim("required-attrs", "state-table", "a step missing one required attribute fails and leaves the QP "
              "untouched", "NOTES", params={"rule": "without-required"}, **_IB_ONLY),
        Claim("optional-attrs", "state-table", "an attribute the state machine allows on a step may be added to "
              "the required set", "NOTES", params={"rule": "optional"}, **_IB_ONLY),
        Claim("forbidden-attrs", "state-table", "an attribute that is neither required nor allowed on a step makes "
              "the mask invalid: the call fails and modifies nothing", "NOTES", params={"rule": "forbidden"},
              **_IB_ONLY),
        Claim("illegal-transitions", "state-table", "a state change the QP state machine does not have is rejected "
              "and modifies nothing", "NOTES", params={"rule": "illegal"}, **_IB_ONLY),
        Claim("to-reset", "state-table", "a QP in any state can be moved to Reset", "DESCRIPTION",
              params={"rule": "to-state", "target": "RESET"}, also=(_IBTA_QP_TABLE,)),
        Claim("to-err", "state-table", "a QP in Init, RTR, RTS or Error can be moved to Error", "DESCRIPTION",
              params={"rule": "to-state", "target": "ERR"}, also=(_IBTA_QP_TABLE,)),
        Claim("zero-mask", "state-table", "attr_mask may be 0: in a state the QP may stay in (all but RTR) the "
              "call succeeds and changes nothing", "DESCRIPTION", params={"rule": "zero-mask"},
              also=(_IBTA_QP_TABLE,)),
        Claim("unknown-mask-bits", "state-table", "a mask bit outside the documented flags makes the mask "
              "invalid: the call fails and modifies nothing", "DESCRIPTION, NOTES",
              params={"rule": "unknown-bits", "bits": (21, 22, 23, 24, 26, 30), "step": "RESET>INIT"},
              layer="kernel", also=(Source("kernel", "drivers/infiniband/core/uverbs_cmd.c modify_qp()"),)),
        Claim("out-of-range", "state-table", "an attribute value out of its range is invalid: the call fails and "
              "modifies nothing", "NOTES", params={"rule": "out-of-range"}, **_IB_ONLY),
        Claim("resize-cap", "state-table", "IBV_QP_CAP (resizing) works only on devices that advertise "
              "IBV_DEVICE_RESIZE_MAX_WR", "NOTES", layer="kernel",
              params={"rule": "resize-cap", "gate": Cap("attr.device_cap_flags&IBV_DEVICE_RESIZE_MAX_WR"),
                      "grown": {"max_send_wr": 8, "max_recv_wr": 8, "max_send_sge": 1, "max_recv_sge": 1,
                                "max_inline_data": 0}},
              **_IB_ONLY),
        Claim("alt-path", "state-table", "IBV_QP_ALT_PATH works only on devices that advertise "
              "IBV_DEVICE_AUTO_PATH_MIG", "NOTES",
              params={"rule": "alt-path", "gate": Cap("attr.device_cap_flags&IBV_DEVICE_AUTO_PATH_MIG"),
                      "reflect": ("alt_port_num", "alt_pkey_index", "alt_timeout")},
              **_IB_ONLY),
        Claim("grh-required", "state-table", "where the port sets IBV_QPF_GRH_REQUIRED, an address vector "
              "without a GRH is refused", "NOTES",
              params={"rule": "grh-required", "gate": Cap("port.flags&IBV_QPF_GRH_REQUIRED")}, **_IB_ONLY),
        Claim("state-outside-enum-refused", "refused", "a qp_state outside enum ibv_qp_state makes the attributes "
              "invalid: the call fails", "NOTES", over={"value": (7, 42)}, variant="RC-in-RESET-qp_state-{value}",
              call={"attr": {"qp_state": Var("value")}, "attr_mask": "IBV_QP_STATE"}, errnos=("EINVAL",),
              layer="kernel", also=(Source("kernel", "drivers/infiniband/core/uverbs_cmd.c modify_qp(): a state "
                                                     "beyond IB_QPS_ERR is EINVAL"),)),
        Claim("rts-to-rts-optional", "succeeds", "in RTS an attribute the state machine allows there can be changed "
              "(RTS to RTS), and ibv_query_qp then reports it", "DESCRIPTION",
              over={("qp_type", "field", "flag", "value"): (
                  ("IBV_QPT_RC", "min_rnr_timer", "IBV_QP_MIN_RNR_TIMER", 20),
                  ("IBV_QPT_UD", "qkey", "IBV_QP_QKEY", 0x2222))},
              variant="{qp_type}-{field}-{value}",
              call={"qp": Need("qp", state="RTS", spec={"qp_type": Var("qp_type")}),
                    "attr": {"qp_state": "IBV_QPS_RTS", "{field}": Var("value")}, "attr_mask": "IBV_QP_STATE | {flag}"},
              params={"then": (Step("ibv_query_qp", {"qp": Need("qp", state="RTS", spec={"qp_type": Var("qp_type")}),
                                                     "attr_mask": "{flag}"}, name="q"),)},
              expect=(Expect("q.attr.{field}", "==", Var("value"), ref="ibv_query_qp(3) NOTES"),), **_IB_ONLY),
    ),
    contract=Contract(
        requires=(Resource("qp", role="qp"),),
        moves=(Transition("qp", "RESET", "INIT"), Transition("qp", "INIT", "RTR"),
               Transition("qp", "RTR", "RTS"), Transition("qp", "any", "RESET"),
               Transition("qp", "any", "ERR")),
    ),
    tables={
        "qp_types": ("RC", "UC", "UD", "RAW_PACKET"),
        "walk": {
            "path": ("RESET", "INIT", "RTR", "RTS"),
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
        "field_max": {"port_num": 0xFF, "max_rd_atomic": 0xFF, "max_dest_rd_atomic": 0xFF, "pkey_index": 0xFFFF,
                      "ah_attr.grh.sgid_index": 0xFF, "ah_attr.port_num": 0xFF},
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
    prototype=("int det_modify_qp(struct det_qp * const qp, const struct det_qp_mod * const qp_mod, "
               "struct det_qp_attr * const qp_attr);"),
    returns=RETURNS_ERRNO,
    summary="change a DET queue pair's attributes and move it to a new state",
    family="det",
    counterpart="ibv_modify_qp",
    params=(
        Param("qp", "struct det_qp * const", "in", doc="an existing queue pair"),
        Param("qp_mod", "const struct det_qp_mod * const", "in", doc="the new state and attributes"),
        Param("qp_attr", "struct det_qp_attr * const", "out", nullable=True,
              doc="optional: receives the attributes actually in effect"),
    ),
    errors=(
        Error("EAGAIN", "another thread is modifying the QP (kernel-mode callers only)",
              untestable="applies to kernel-mode callers only; pytest-rdma calls from user mode"),
        Error("EBUSY", "the requested send or receive queue size is below the work requests queued",
              covered_by=("shrink-below-queued",)),
        Error("EDQUOT", "the attributes would exceed the system's pinned-page quota", covered_by=("pinned-quota",)),
        Error("EFAULT", "an invalid address was passed (user-mode callers only)", covered_by=("bad-address",)),
        Error("EINVAL", "an invalid parameter was passed", covered_by=("invalid-param",)),
        Error("ENOMEM", "not enough memory to modify the QP",
              untestable="memory exhaustion cannot be provoked deterministically"),
        Error("EPERM", "the requested state transition is not permitted", covered_by=("illegal-transition",)),
    ),
    claims=(
        Claim("moves-state", "counterpart", "on success the QP is in the state qp_mod requested", "DESCRIPTION",
              params={"variants": ("to-each-state",), "counterpart_claim": "minimal-attrs"}),
        Claim("reports-actual-attrs", "counterpart", "when qp_attr is given it receives the attributes in effect, "
              "which may differ from those requested; NULL is allowed", "ARGUMENTS, DESCRIPTION",
              params={"variants": ("qp_attr-given", "qp_attr-NULL")}),
        Claim("illegal-transition", "counterpart", "a transition that is not permitted fails with EPERM",
              "RETURN VALUES", params={"variants": ("EPERM",), "counterpart_claim": "illegal-transitions"}),
        Claim("invalid-param", "counterpart", "an invalid parameter fails with EINVAL", "RETURN VALUES",
              params={"variants": ("EINVAL",), "counterpart_claim": "out-of-range"}),
        Claim("shrink-below-queued", "counterpart", "shrinking a queue below its queued work requests fails with "
              "EBUSY", "RETURN VALUES", params={"variants": ("send-queue", "recv-queue")}),
        Claim("pinned-quota", "counterpart", "attributes beyond the pinned-page quota fail with EDQUOT",
              "RETURN VALUES", params={"variants": ("EDQUOT",)}),
        Claim("bad-address", "counterpart", "an invalid qp_mod or qp_attr address fails with EFAULT",
              "RETURN VALUES", params={"variants": ("qp_mod", "qp_attr")}),
    ),
    contract=Contract(requires=(Resource("det_qp", role="qp"),), moves=(Transition("det_qp", "any", "requested"),)),
)
# --- end section: modify_qp -------------------------------------------------------------------

# --- section: QP creation, query and destruction ---------------------------------------------
_QP_CAP_FIELDS = ("max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data")
# Requests off the usual powers of two, so rounding up is visible; all within any sane device's limits.
_QP_CAP_REQUEST = (("max_send_wr", 3), ("max_recv_wr", 5), ("max_send_sge", 2), ("max_recv_sge", 2),
                   ("max_inline_data", 17))
_SMALL_CAP = {"max_send_wr": 1, "max_recv_wr": 1, "max_send_sge": 1, "max_recv_sge": 1, "max_inline_data": 0}
_INLINE_EXCUSE = ("field", "max_inline_data", "*",
                  "no attribute advertises an inline-data limit, so refusing 17 bytes breaks no promise")
_AT_LIMIT_EXCUSE = ("ENOMEM", "ibv_query_device(3) NOTES lets a resource at the maximum fail for lack of memory")


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


_CREATE_QP_EX_MASK = "IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS"


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
        Claim("cap-writeback", "succeeds", "cap is rewritten with the actual capacities, each at least the "
              "request; ibv_query_qp agrees", "DESCRIPTION",
              over={"qp_type": _QP_TYPES, ("field", "request"): _QP_CAP_REQUEST}, variant="{qp_type}-{field}-{request}",
              **_cap_writeback("qp_init_attr", "ibv_create_qp", "ibv_query_qp(3) DESCRIPTION")),
        Claim("srq-ignores-recv-caps", "succeeds", "with an SRQ, max_recv_wr and max_recv_sge are ignored",
              "NOTES", over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD")}, variant="{qp_type}-recv-caps-above-limits",
              needs=(Cap("attr.max_srq"),),
              call={"qp_init_attr.srq": Need("srq"), "qp_init_attr.cap": {
                  **_SMALL_CAP, "max_recv_wr": Dev("attr.max_qp_wr", times=4), "max_recv_sge": Dev("attr.max_sge", plus=5)}}),
        Claim("srq-only-rc-ud", "refused", "asking for a QP type other than RC or UD with an SRQ fails", "NOTES",
              over={"qp_type": ("IBV_QPT_UC", "IBV_QPT_RAW_PACKET")}, variant="{qp_type}-with-srq",
              needs=(Cap("attr.max_srq"),),
              call={"qp_init_attr.srq": Need("srq"), "qp_init_attr.cap": _SMALL_CAP}),
        Claim("qp-num-unique", "distinct", "each QP has a valid qp_num unique among live QPs", "RETURN VALUE",
              over={("qp_type", "name", "cycle"): _unique_axis(("IBV_QPT_RC", "IBV_QPT_UD"))}, variant="{name}-x64",
              call={"pd": Need("pd", label="shared"), "qp_init_attr.send_cq": Need("cq", label="shared"),
                    "qp_init_attr.recv_cq": Need("cq", label="shared"), "qp_init_attr.cap": _SMALL_CAP},
              expect=(Expect("ret.qp_num", "in", (2, 1 << 24), transports=IB_TRANSPORTS),),
              params={"count": 64, "value": "ret.qp_num", "cycle": Var("cycle"), "cycle_needs": _QP_TYPE_NEEDS}),
        Claim("creates-qp-in-reset", "succeeds", "a valid request returns a QP in RESET with the type and qp_context "
              "asked for and no SRQ", "DESCRIPTION", over={"qp_type": _QP_TYPES}, variant="{qp_type}-context-0x55",
              layer="libibverbs", call={"qp_init_attr.qp_context": 0x55},
              expect=(Expect("ret.state", "==", "IBV_QPS_RESET"), Expect("ret.qp_type", "==", Var("qp_type")),
                      Expect("ret.qp_context", "==", 0x55), Expect("ret.srq", "zero"))),
        Claim("undefined-qp-type-refused", "refused", "qp_type must be one of the page's QP types: a value outside "
              "enum ibv_qp_type is refused", "DESCRIPTION", over={"type": (0, 1, 5, 6, 7, 11)},
              variant="qp_type-{type}", call={"qp_init_attr.qp_type": Var("type")}, errnos=("EINVAL",),
              layer="libibverbs"),
        Claim("cap-above-limit-refused", "refused", "a capacity above the device's limit for it is refused",
              "DESCRIPTION", over={("field", "limit"): (("max_send_wr", "max_qp_wr"), ("max_recv_wr", "max_qp_wr"),
                                                        ("max_send_sge", "max_sge"), ("max_recv_sge", "max_sge"))},
              variant="RC-{field}-above-{limit}", call={"qp_init_attr.cap.{field}": Dev("attr.{limit}", plus=1)},
              errnos=("EINVAL", "ENOMEM"), also=(Source("man", "ibv_query_device(3)", "DESCRIPTION"),)),
        Claim("iwarp-types-refused", "refused", "an iWARP device, which defines only reliable connections, refuses "
              "an unreliable connected or datagram QP", "DESCRIPTION",
              over={"type": ("IBV_QPT_UC", "IBV_QPT_UD")}, variant="{type}-on-iwarp", transports=("iwarp",),
              call={"qp_init_attr.qp_type": Var("type")}, errnos=("EOPNOTSUPP", "EINVAL"),
              also=(_IWARP_RC_ONLY,)),
    ),
    errors=(
        Error("EINVAL", "a value is invalid: an undefined QP type (libibverbs), a capacity above the device's limit, "
              "an SRQ with a QP type other than RC or UD (NOTES); the page names no errno",
              covered_by=("undefined-qp-type-refused", "cap-above-limit-refused", "srq-only-rc-ud")),
        Error("EOPNOTSUPP", "the device does not offer the QP type (not on the page: the driver's answer)",
              covered_by=("iwarp-types-refused",)),
        Error("EPERM", "a raw packet QP without CAP_NET_RAW (not on the page: the kernel's answer)",
              untestable="the suite runs as root; dropping CAP_NET_RAW would affect the whole session's process"),
        Error("ENOMEM", "the QP cannot be allocated (not on the page)",
              untestable="cannot exhaust kernel or device memory safely on a shared lab VM"),
    ),
    contract=Contract(
        requires=(Resource("pd", role="pd"), Resource("cq", role="qp_init_attr.send_cq")),
        produces=(Resource("qp", state="RESET"),),
        destroyed_by="ibv_destroy_qp",
        makes=True,
    ),
    tables={"vars": {"qp_type": "IBV_QPT_RC"}, "needs": {"qp_type": _QP_TYPE_NEEDS}},
    undefined=("send_cq or recv_cq NULL (libibverbs dereferences them)", "qp_init_attr NULL",
               "IBV_QPT_DRIVER without its vendor's setup (vendor-specific meaning)"),
)

# A receive-side-scaling QP: a raw packet QP that receives through an indirection table of WQs, hashing
# IPv4 addresses with a Toeplitz key; it has no receive queue of its own (libibverbs refuses one).
_RSS_QP = {
    "qp_type": "IBV_QPT_RAW_PACKET", "recv_cq": None, "rwq_ind_tbl": Need("rwq_ind_table"),
    "comp_mask": "IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH",
    "cap": {"max_send_wr": 0, "max_recv_wr": 0, "max_send_sge": 0, "max_recv_sge": 0, "max_inline_data": 0},
    "rx_hash_conf": {"rx_hash_function": "IBV_RX_HASH_FUNC_TOEPLITZ", "rx_hash_key_len": 40,
                     "rx_hash_key": Array(bytes(range(1, 41))),
                     "rx_hash_fields_mask": "IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4"},
}
_RSS_NEEDS = (*_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"], Cap("attr_ex.max_wq_type_rq"),
              Cap("attr_ex.rss_caps.max_rwq_indirection_table_size"))

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
            doc="comp_mask draws from ibv_qp_init_attr_mask; create_flags from ibv_qp_create_flags; cap is written back",
        ),
    ),
    # The page has no ERRORS section: it only says NULL is returned on failure.
    claims=(
        Claim("cap-writeback", "succeeds", "the cap struct is rewritten with the QP's actual capacities, each at "
              "least the request, and ibv_query_qp reports the same values", "DESCRIPTION",
              over={"qp_type": _QP_TYPES, ("field", "request"): _QP_CAP_REQUEST}, variant="{qp_type}-{field}-{request}",
              **_cap_writeback("qp_init_attr_ex", "ibv_create_qp_ex", "ibv_query_qp(3) DESCRIPTION")),
        Claim("cap-writeback-at-limit", "succeeds", "the same holds for a request at the device maximum (a field "
              "naming an ibv_device_attr limit)", "DESCRIPTION",
              over={"qp_type": _QP_TYPES, ("field", "limit"): (("max_send_wr", "max_qp_wr"), ("max_recv_wr", "max_qp_wr"),
                                                               ("max_send_sge", "max_sge"), ("max_recv_sge", "max_sge"))},
              variant="{qp_type}-{field}-at-{limit}",
              **{**_cap_writeback("qp_init_attr_ex", "ibv_create_qp_ex", "ibv_query_qp(3) DESCRIPTION"),
                 "call": {"qp_init_attr_ex.qp_type": Var("qp_type"), "qp_init_attr_ex.cap": _SMALL_CAP,
                          "qp_init_attr_ex.cap.{field}": Dev("attr.{limit}")}}),
        Claim("srq-ignores-recv-caps", "succeeds", "with an SRQ, max_recv_wr and max_recv_sge are ignored (even "
              "values above the device limits)", "NOTES",
              over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD")}, variant="{qp_type}-recv-caps-above-limits",
              needs=(Cap("attr.max_srq"),),
              call={"qp_init_attr_ex.srq": Need("srq"), "qp_init_attr_ex.cap": {
                  **_SMALL_CAP, "max_recv_wr": Dev("attr.max_qp_wr", times=4), "max_recv_sge": Dev("attr.max_sge", plus=5)}}),
        Claim("unknown-comp-mask", "refused", "comp_mask bits outside ibv_qp_init_attr_mask make the call fail",
              "DESCRIPTION", over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"), "bit": (7, 8, 16, 31)},
              variant="{qp_type}-comp_mask-bit{bit}",
              call={"qp_init_attr_ex.comp_mask": Flags(("IBV_QP_INIT_ATTR_PD",), bits=(Var("bit"),)),
                    "qp_init_attr_ex.cap": _SMALL_CAP}),
        Claim("unknown-create-flags", "refused", "create_flags bits outside ibv_qp_create_flags make the call fail",
              "DESCRIPTION", over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"), "bit": (0, 2, 5, 12, 31)},
              variant="{qp_type}-create_flags-bit{bit}",
              call={"qp_init_attr_ex.create_flags": Flags(bits=(Var("bit"),)), "qp_init_attr_ex.cap": _SMALL_CAP}),
        Claim("source-qpn-ud-only", "refused", "IBV_QP_CREATE_SOURCE_QPN is for UD QPs only: other QP types are "
              "refused", "NOTES", over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UC", "IBV_QPT_RAW_PACKET")},
              variant="{qp_type}-with-source-qpn",
              call={"qp_init_attr_ex.create_flags": "IBV_QP_CREATE_SOURCE_QPN", "qp_init_attr_ex.source_qpn": 0x1234,
                    "qp_init_attr_ex.cap": _SMALL_CAP}),
        Claim("qp-num-unique", "distinct", "each created QP has a valid qp_num, unique among live QPs (on IB "
              "transport: 24 bits and not the special QP0/QP1)", "RETURN VALUE",
              over={("qp_type", "name", "cycle"): _unique_axis(_QP_TYPES)}, variant="{name}-x64",
              call={"qp_init_attr_ex.pd": Need("pd", label="shared"), "qp_init_attr_ex.send_cq": Need("cq", label="shared"),
                    "qp_init_attr_ex.recv_cq": Need("cq", label="shared"), "qp_init_attr_ex.cap": _SMALL_CAP},
              expect=(Expect("ret.qp_num", "in", (2, 1 << 24), transports=IB_TRANSPORTS),),
              params={"count": 64, "value": "ret.qp_num", "cycle": Var("cycle"), "cycle_needs": _QP_TYPE_NEEDS}),
        Claim("send-ops-iterator", "untestable", "with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS the QP exposes the "
              "ibv_qp_ex send-ops iterator", "NOTES",
              untestable="covered by the ibv_wr_* data-path claims, which post through it"),
        Claim("pd-only-is-create-qp", "succeeds", "with comp_mask exactly IBV_QP_INIT_ATTR_PD the request is an "
              "ordinary one (verbs.h hands it to ibv_create_qp), so it works wherever ibv_create_qp does",
              "DESCRIPTION", over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD")}, variant="{qp_type}-comp_mask-PD",
              layer="libibverbs", call={"qp_init_attr_ex.comp_mask": "IBV_QP_INIT_ATTR_PD"},
              expect=(Expect("ret.state", "==", "IBV_QPS_RESET"), Expect("ret.qp_type", "==", Var("qp_type")))),
        Claim("missing-pd-refused", "refused", "the PD is given through pd with IBV_QP_INIT_ATTR_PD: a request "
              "without that bit has no PD and is refused", "DESCRIPTION", variant="RC-comp_mask-CREATE_FLAGS-only",
              call={"qp_init_attr_ex.comp_mask": "IBV_QP_INIT_ATTR_CREATE_FLAGS"}, errnos=("EINVAL",),
              layer="libibverbs"),
        Claim("xrc-recv-needs-xrcd", "refused", "an XRC receive QP lives in an XRC domain: one asked for without "
              "IBV_QP_INIT_ATTR_XRCD is refused", "DESCRIPTION", variant="XRC_RECV-comp_mask-PD-CREATE_FLAGS",
              call={"qp_init_attr_ex.qp_type": "IBV_QPT_XRC_RECV"}, errnos=("EINVAL",), layer="libibverbs"),
        Claim("send-ops-flags-accepted", "succeeds", "a QP asked for with send_ops_flags (SEND and RDMA_WRITE) is "
              "created, for use with the send-ops iterator", "NOTES", variant="RC-SEND-RDMA_WRITE",
              call={"qp_init_attr_ex.comp_mask": "IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS",
                    "qp_init_attr_ex.send_ops_flags": "IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE"}),
        Claim("xrc-types", "gated", "an XRC send QP (on a PD) and an XRC receive QP (in an XRC domain) are created "
              "where the device advertises XRC", "DESCRIPTION",
              over={("qp_type", "attrs"): (
                  ("IBV_QPT_XRC_SEND", {"comp_mask": "IBV_QP_INIT_ATTR_PD", "cap": _SMALL_CAP}),
                  ("IBV_QPT_XRC_RECV", {"comp_mask": "IBV_QP_INIT_ATTR_XRCD", "xrcd": Need("xrcd"),
                                        "cap": {"max_send_wr": 0, "max_recv_wr": 0, "max_send_sge": 0,
                                                "max_recv_sge": 0}}))},
              variant="{qp_type}", call={"qp_init_attr_ex": Var("attrs")},
              params={"gate": Cap("attr.device_cap_flags&IBV_DEVICE_XRC"), "only": "advertised"}),
        Claim("create-flags-gated", "gated", "a raw packet QP creation flag works only where the device advertises "
              "the matching raw packet capability", "DESCRIPTION",
              over={("flag", "cap"): (("SCATTER_FCS", "IBV_RAW_PACKET_CAP_SCATTER_FCS"),
                                      ("CVLAN_STRIPPING", "IBV_RAW_PACKET_CAP_CVLAN_STRIPPING"))},
              variant="RAW_PACKET-{flag}", errnos=("EINVAL", "EOPNOTSUPP"),
              call={"qp_init_attr_ex.qp_type": "IBV_QPT_RAW_PACKET", "qp_init_attr_ex.cap": _SMALL_CAP,
                    "qp_init_attr_ex.create_flags": "IBV_QP_CREATE_{flag}"},
              needs=_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"], params={"gate": Cap("attr_ex.raw_packet_caps&{cap}")}),
        Claim("rss-qp", "gated", "a receive-side-scaling QP is created on an indirection table with a hash "
              "configuration where the device advertises the Toeplitz hash", "DESCRIPTION",
              variant="RAW_PACKET-on-1-WQ-table-toeplitz-ipv4", needs=_RSS_NEEDS,
              call={"qp_init_attr_ex": _RSS_QP},
              params={"gate": Cap("attr_ex.rss_caps.rx_hash_function&IBV_RX_HASH_FUNC_TOEPLITZ"),
                      "only": "advertised"}),
        Claim("ind-table-excludes-receive-queue", "refused", "a QP that receives through an indirection table has "
              "no receive queue of its own: asking for receive WRs as well is refused", "DESCRIPTION",
              variant="RAW_PACKET-on-table-max_recv_wr-1", needs=_RSS_NEEDS, errnos=("EINVAL",), layer="libibverbs",
              call={"qp_init_attr_ex": {**_RSS_QP, "cap": {**_RSS_QP["cap"], "max_recv_wr": 1}}}),
        Claim("tso-header-gated", "gated", "max_tso_header is accepted on a raw packet QP where the device advertises "
              "TSO (tso_caps.max_tso)", "DESCRIPTION", variant="RAW_PACKET-max_tso_header-64",
              errnos=("EINVAL", "EOPNOTSUPP"), needs=_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"],
              call={"qp_init_attr_ex.qp_type": "IBV_QPT_RAW_PACKET", "qp_init_attr_ex.cap": _SMALL_CAP,
                    "qp_init_attr_ex.comp_mask": "IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER",
                    "qp_init_attr_ex.max_tso_header": 64},
              params={"gate": Cap("attr_ex.tso_caps.max_tso")}),
    ),
    errors=(
        Error("EINVAL", "no PD for a type that needs one, no XRC domain for an XRC receive QP, an undefined comp_mask "
              "or create_flags bit, source_qpn on a non-UD QP (NOTES); the page names no errno",
              covered_by=("missing-pd-refused", "xrc-recv-needs-xrcd", "unknown-comp-mask", "unknown-create-flags",
                          "source-qpn-ud-only", "ind-table-excludes-receive-queue")),
        Error("EOPNOTSUPP", "the provider has no extended create (verbs.h / libibverbs' default op) or does not "
              "support a requested flag (not on the page)",
              covered_by=("unknown-comp-mask", "unknown-create-flags", "create-flags-gated")),
        Error("EPERM", "a raw packet QP or IBV_QP_CREATE_SOURCE_QPN without CAP_NET_RAW (not on the page: the "
              "kernel's answer)", untestable="the suite runs as root; dropping CAP_NET_RAW would affect the whole "
              "session's process"),
        Error("ENOMEM", "the QP cannot be allocated (not on the page)",
              untestable="cannot exhaust kernel or device memory safely on a shared lab VM"),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"), Resource("pd", role="qp_init_attr_ex.pd"),
                  Resource("cq", role="qp_init_attr_ex.send_cq")),
        produces=(Resource("qp", state="RESET"),),
        destroyed_by="ibv_destroy_qp",
    ),
    undefined=("calling an ibv_wr_* builder that send_ops_flags did not ask for (a NULL function pointer)",
               "send_cq or recv_cq NULL without an indirection table (libibverbs dereferences them)"),
    tables={
        "vars": {"qp_type": "IBV_QPT_RC"},
        "needs": {"qp_type": _QP_TYPE_NEEDS},
        # verbs.h: the inline answers EOPNOTSUPP itself when the provider has no create_qp_ex.
        "not_supported": {"EOPNOTSUPP": "the provider does not implement ibv_create_qp_ex (verbs.h answers EOPNOTSUPP)"},
    },
)

ibv_destroy_qp = Verb(
    name="ibv_destroy_qp",
    man="ibv_create_qp(3)",
    prototype="int ibv_destroy_qp(struct ibv_qp *qp);",
    returns=RETURNS_ERRNO,
    summary="destroy a QP; 0 or an errno",
    params=(Param("qp", "struct ibv_qp *", default=Need("qp", spec={"qp_type": Var("qp_type")})),),
    claims=(
        Claim("destroy-returns-zero", "succeeds", "destroying an idle QP (no multicast attachment) returns 0",
              "RETURN VALUE", over={"qp_type": _QP_TYPES}, variant="{qp_type}-fresh"),
        Claim("destroy-fails-mcast-attached", "refused", "destroy fails while the QP is attached to a multicast "
              "group, and succeeds after detaching", "NOTES",
              over={"qp_type": ("IBV_QPT_UD",)}, variant="{qp_type}-attached-to-ff0e::1234",
              needs=(Cap("attr.max_mcast_grp"), Cap("attr.max_mcast_qp_attach")),
              steps=(Step("ibv_attach_mcast", {"qp": Need("qp", spec={"qp_type": Var("qp_type")}),
                                               "gid": {"raw": bytes.fromhex("ff0e" + "00" * 12 + "1234")}, "lid": 0}),),
              params={"then": (
                  Step("ibv_detach_mcast", {"qp": Need("qp", spec={"qp_type": Var("qp_type")}),
                                            "gid": {"raw": bytes.fromhex("ff0e" + "00" * 12 + "1234")}, "lid": 0}),
                  Step("ibv_destroy_qp", {"qp": Need("qp", spec={"qp_type": Var("qp_type")})}),
              )}),
        Claim("destroy-in-any-state", "succeeds", "a QP is destroyed with 0 whatever its state", "DESCRIPTION",
              over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"), "state": ("INIT", "RTR", "RTS", "ERR")},
              variant="{qp_type}-in-{state}",
              call={"qp": Need("qp", state="{state}", spec={"qp_type": Var("qp_type")})}),
        Claim("releases-pd-and-cq", "succeeds", "once the QP is destroyed its CQ and its PD are no longer held: both "
              "are destroyed with 0", "DESCRIPTION", over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD")},
              variant="{qp_type}-then-cq-and-pd",
              params={"then": (Step("ibv_destroy_cq", {"cq": Need("cq")}), Step("ibv_dealloc_pd", {"pd": Need("pd")}))},
              also=(Source("man", "ibv_create_cq(3)", "RETURN VALUE"),
                    Source("man", "ibv_alloc_pd(3)", "DESCRIPTION"))),
    ),
    errors=(
        Error("EBUSY", "the QP is still attached to a multicast group (NOTES; the errno is the kernel's)",
              covered_by=("destroy-fails-mcast-attached",)),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),), destroys=(Resource("qp", role="qp"),)),
    undefined=("destroying a QP twice", "using a QP after destroying it",
               "destroying a QP while another thread posts or polls for it"),
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
        Claim("fresh-qp", "succeeds", "a new QP reads back in RESET with the qp_type and sq_sig_all it was "
              "created with", "DESCRIPTION", over={"qp_type": _QP_TYPES}, variant="{qp_type}-after-create",
              call={"qp": Need("qp", spec={"qp_type": Var("qp_type"), "qp_init_attr.sq_sig_all": 1})},
              expect=(Expect("attr.qp_state", "==", "IBV_QPS_RESET"), Expect("init_attr.qp_type", "==", Var("qp_type")),
                      Expect("init_attr.sq_sig_all", "==", 1))),
        Claim("reports-state-set", "succeeds", "after ibv_modify_qp moved a QP to a state, ibv_query_qp reports that "
              "state (checks that read a QP back rely on it)", "DESCRIPTION",
              over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"), "state": ("INIT", "RTR", "RTS", "ERR")},
              variant="{qp_type}-in-{state}",
              call={"qp": Need("qp", state="{state}", spec={"qp_type": Var("qp_type")})},
              expect=(Expect("attr.qp_state", "==", "IBV_QPS_{state}"),)),
        Claim("init-attr-reports-creation", "succeeds", "init_attr reports what the QP was created with: its "
              "qp_context, CQs and (no) SRQ", "DESCRIPTION", over={"qp_type": ("IBV_QPT_RC",)},
              variant="{qp_type}-context-0x77",
              steps=(Step("ibv_create_qp", {"qp_init_attr.qp_context": 0x77}, name="made"),), call={"qp": Ref("made")},
              expect=(Expect("init_attr.qp_context", "==", 0x77),
                      Expect("init_attr.send_cq", "==", Ref("made", "ret.send_cq")),
                      Expect("init_attr.recv_cq", "==", Ref("made", "ret.recv_cq")), Expect("init_attr.srq", "zero"))),
        Claim("mask-is-a-hint", "succeeds", "attr_mask only names the minimum to report: asking for any one "
              "attribute is a valid query", "NOTES",
              over={("name", "flag"): tuple((f.removeprefix("IBV_QP_"), f) for f in _QP_MASK_FLAGS
                                            if f != "IBV_QP_RATE_LIMIT")},
              variant="RC-in-RESET-{name}", call={"attr_mask": Var("flag")}),
        Claim("updates-cached-state", "untestable", "a query that includes IBV_QP_STATE refreshes the state the QP "
              "object caches (after the device moved it by itself)", "DESCRIPTION",
              untestable="needs an error completion to move the QP without ibv_modify_qp: left to the data-path "
              "section"),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"vars": {"qp_type": "IBV_QPT_RC"}},
    undefined=("reading attributes never set for the QP's type and state (their values are unspecified)",
               "expecting qp_state, path_mig_state, sq_draining or ah_attr (with APM) to be equal across calls"),
)

_MCAST_GID = {"raw": bytes.fromhex("ff0e" + "00" * 12 + "1234")}  # ff0e::1234, a multicast GID
_MCAST_CAPS = (Cap("attr.max_mcast_grp"), Cap("attr.max_mcast_qp_attach"))
_MCAST_QP = Need("qp", spec={"qp_type": "IBV_QPT_UD"})
_MCAST_KERNEL = Source("kernel", "drivers/infiniband/core/verbs.c ib_attach_mcast()/ib_detach_mcast(): UD only, "
                                 "a multicast GID (and on IB a multicast LID), else EINVAL")

ibv_attach_mcast = Verb(
    name="ibv_attach_mcast",
    man="ibv_attach_mcast(3)",
    prototype="int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);",
    returns=RETURNS_ERRNO,
    summary="attach a UD QP to a multicast group",
    params=(Param("qp", "struct ibv_qp *", default=_MCAST_QP),
            Param("gid", "const union ibv_gid *", default=_MCAST_GID),
            Param("lid", "uint16_t", default=0, doc="the multicast LID (IB); RoCE ignores it")),
    errors=(
        Error("EINVAL", "the QP is not UD (NOTES), or gid is not a multicast GID (not on the page: the kernel)",
              covered_by=("only-ud", "unicast-gid-refused", "unicast-lid-refused")),
        Error("EOPNOTSUPP", "the provider has no multicast (libibverbs' default op; not on the page)",
              untestable="the not-implemented answer: where it comes, the claims are reported unsupported "
              "(tables['not_supported'])"),
    ),
    claims=(
        Claim("attach-ud", "succeeds", "a UD QP is attached to a multicast group, and detached again with 0",
              "DESCRIPTION", variant="UD-ff0e::1234", needs=_MCAST_CAPS, transports=IB_TRANSPORTS,
              params={"then": (Step("ibv_detach_mcast"),)}),
        Claim("attach-twice-accepted", "succeeds", "attaching a QP to a group it is already in succeeds (the QP still "
              "gets one copy of each message)", "NOTES", variant="UD-ff0e::1234-twice", needs=_MCAST_CAPS,
              transports=IB_TRANSPORTS, steps=(Step("ibv_attach_mcast"),),
              params={"then": (Step("ibv_detach_mcast"),)}),
        Claim("only-ud", "refused", "only UD QPs may be attached to multicast groups", "NOTES",
              over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UC")}, variant="{qp_type}",
              call={"qp": Need("qp", spec={"qp_type": Var("qp_type")})}, errnos=("EINVAL",), layer="kernel",
              also=(_MCAST_KERNEL,)),
        Claim("unicast-gid-refused", "refused", "gid names a multicast group: a unicast GID is refused",
              "DESCRIPTION", variant="UD-fe80::1", needs=_MCAST_CAPS, transports=IB_TRANSPORTS, errnos=("EINVAL",),
              call={"gid": {"raw": bytes.fromhex("fe80" + "00" * 13 + "01")}}, layer="kernel", also=(_MCAST_KERNEL,)),
        Claim("unicast-lid-refused", "refused", "on InfiniBand, lid names a multicast LID: a unicast one is refused",
              "DESCRIPTION", variant="UD-lid-1", needs=_MCAST_CAPS, transports=("ib",), errnos=("EINVAL",),
              call={"lid": 1}, layer="kernel", also=(_MCAST_KERNEL,)),
        Claim("receives-group-traffic", "untestable", "an attached QP receives one copy of each message sent to the "
              "group, however often it was attached", "DESCRIPTION, NOTES",
              untestable="needs traffic: left to the data-path section"),
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
    params=(Param("qp", "struct ibv_qp *", default=_MCAST_QP),
            Param("gid", "const union ibv_gid *", default=_MCAST_GID),
            Param("lid", "uint16_t", default=0)),
    errors=(
        Error("EINVAL", "the QP is not attached to that group (not on the page: the kernel's answer)",
              covered_by=("not-attached-refused",)),
        Error("EOPNOTSUPP", "the provider has no multicast (libibverbs' default op; not on the page)",
              untestable="the not-implemented answer: where it comes, the claims are reported unsupported "
              "(tables['not_supported'])"),
    ),
    claims=(
        Claim("detach-attached", "succeeds", "detaching an attached QP returns 0, after which the QP can be destroyed",
              "DESCRIPTION", variant="UD-ff0e::1234", needs=_MCAST_CAPS, transports=IB_TRANSPORTS,
              steps=(Step("ibv_attach_mcast"),), params={"then": (Step("ibv_destroy_qp", {"qp": _MCAST_QP}),)},
              also=(Source("man", "ibv_create_qp(3)", "NOTES"),)),
        Claim("not-attached-refused", "refused", "detaching a QP from a group it is not in is refused",
              "DESCRIPTION", variant="UD-never-attached", needs=_MCAST_CAPS, transports=IB_TRANSPORTS,
              errnos=("EINVAL",), layer="kernel", also=(_MCAST_KERNEL,)),
        Claim("no-traffic-after-detach", "untestable", "after detaching, messages to the group no longer arrive",
              "DESCRIPTION", untestable="needs traffic: left to the data-path section"),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"not_supported": {"EOPNOTSUPP": "the provider has no multicast (libibverbs' default op)"}},
    undefined=("detaching once after attaching twice (the page does not say)",),
)
# --- end section: QP ----------------------------------------------------------------------------

# --- section: ibv_query_device_ex ---------------------------------------------------------------
# Every field of struct ibv_device_attr, which ibv_device_attr_ex.orig_attr embeds: (the name a
# case id uses, the C field). The ids keep the names the first catalogue gave them.
_DEVICE_ATTR_FIELDS = (
    ("fw_version", "fw_ver"), ("node_guid", "node_guid"), ("sys_image_guid", "sys_image_guid"),
    ("max_mr_size", "max_mr_size"), ("page_size_cap", "page_size_cap"), ("vendor_id", "vendor_id"),
    ("vendor_part_id", "vendor_part_id"), ("hw_ver", "hw_ver"), ("max_qp", "max_qp"), ("max_qp_wr", "max_qp_wr"),
    ("device_cap_flags", "device_cap_flags"), ("max_sge", "max_sge"), ("max_sge_rd", "max_sge_rd"),
    ("max_cq", "max_cq"), ("max_cqe", "max_cqe"), ("max_mr", "max_mr"), ("max_pd", "max_pd"),
    ("max_qp_rd_atom", "max_qp_rd_atom"), ("max_ee_rd_atom", "max_ee_rd_atom"),
    ("max_res_rd_atom", "max_res_rd_atom"), ("max_qp_init_rd_atom", "max_qp_init_rd_atom"),
    ("max_ee_init_rd_atom", "max_ee_init_rd_atom"), ("atomic_caps", "atomic_cap"), ("max_ee", "max_ee"),
    ("max_rdd", "max_rdd"), ("max_mw", "max_mw"), ("max_raw_ipv6_qp", "max_raw_ipv6_qp"),
    ("max_raw_ethy_qp", "max_raw_ethy_qp"), ("max_mcast_grp", "max_mcast_grp"),
    ("max_qp_mcast_attach", "max_mcast_qp_attach"), ("max_total_mcast_qp_attach", "max_total_mcast_qp_attach"),
    ("max_ah", "max_ah"), ("max_fmr", "max_fmr"), ("max_map_per_fmr", "max_map_per_fmr"), ("max_srq", "max_srq"),
    ("max_srq_wr", "max_srq_wr"), ("max_srq_sge", "max_srq_sge"), ("max_pkeys", "max_pkeys"),
    ("local_ca_ack_delay", "local_ca_ack_delay"), ("phys_port_cnt", "phys_port_cnt"),
)
_ODP = {
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
        Param("input", "const struct ibv_query_device_ex_input *", nullable=True,
              doc="reserved for extensions: no comp_mask bit is defined yet"),
        Param("attr", "struct ibv_device_attr_ex *", "out"),
    ),
    # The page has no ERRORS section; it returns 0 or an errno.
    claims=(
        Claim("orig-attr-equals-query-device", "relation", "orig_attr holds exactly what ibv_query_device returns",
              "DESCRIPTION", layer="libibverbs", over={("field", "cfield"): _DEVICE_ATTR_FIELDS},
              variant="orig_attr.{field}",
              steps=(Step("ibv_query_device", name="plain"), Step("ibv_query_device_ex", name="ex")),
              params={"root": "plain:device_attr",
                      "relations": (("plain:device_attr.{cfield}", "==", "ex:attr.orig_attr.{cfield}"),)}),
        Claim("zero-means-unsupported", "relation", "a capability reported as 0 (unsupported) leaves its dependent "
              "fields at 0, and ranges are ordered", "DESCRIPTION", steps=_QUERY_EX,
              params={"root": "q:attr", "relations": (
                  ("tso_caps.max_tso", "0=>0", "tso_caps.supported_qpts"),
                  ("rss_caps.supported_qpts", "0=>0", "rss_caps.max_rwq_indirection_tables"),
                  ("rss_caps.supported_qpts", "0=>0", "rss_caps.rx_hash_fields_mask"),
                  ("packet_pacing_caps.qp_rate_limit_max", "0=>0", "packet_pacing_caps.supported_qpts"),
                  ("packet_pacing_caps.qp_rate_limit_min", "<=", "packet_pacing_caps.qp_rate_limit_max"),
                  ("tm_caps.max_num_tags", "0=>0", "tm_caps.flags"),
              )}),
        Claim("timestamp-zero-means-unsupported", "gated", "completion_timestamp_mask is 0 exactly when completion "
              "timestamps are unsupported: a CQ asking for them fails then, and works otherwise", "DESCRIPTION",
              variant="completion_timestamp_mask-vs-cq_ex_completion_timestamp",
              call={"cq_attr.wc_flags": "IBV_WC_EX_WITH_COMPLETION_TIMESTAMP", "cq_attr.cqe": 8},
              params={"gate": Cap("attr_ex.completion_timestamp_mask"), "verb": "ibv_create_cq_ex"}),
        Claim("odp-support-bit", "relation", "without IBV_ODP_SUPPORT no transport advertises on-demand paging",
              "DESCRIPTION", steps=_QUERY_EX,
              params={"root": "q:attr", "fields": _ODP, "relations": tuple(
                  ("odp_caps.general_odp_caps&IBV_ODP_SUPPORT", "0=>0", f"odp_caps.per_transport_caps.{t}_odp_caps")
                  for t in ("rc", "uc", "ud"))}),
        Claim("phys-port-cnt-ex", "relation", "phys_port_cnt_ex extends phys_port_cnt: never smaller",
              "DESCRIPTION", steps=_QUERY_EX,
              params={"root": "q:attr", "relations": (("phys_port_cnt_ex", ">=", "orig_attr.phys_port_cnt"),)}),
        Claim("limits-sane", "relation", "the resource limits are at least one", "NOTES", steps=_QUERY_EX,
              params={"root": "q:attr", "relations": tuple(
                  (f"orig_attr.{f}", ">=", 1) for f in ("max_qp_wr", "max_sge", "max_cqe", "max_qp", "max_cq", "max_pd"))}),
        Claim("limits-honoured", "limit", "the maxima are upper limits: a resource at the maximum can be created "
              "when memory allows (NOTES lets it fail for lack of resources), one above it is refused", "NOTES",
              over={("what", "verb", "arg", "limit", "qp_type", "needs"): (
                  ("cq", "ibv_create_cq", "cqe", "max_cqe", "", ()),
                  ("qp-RC", "ibv_create_qp", "qp_init_attr.cap.max_send_wr", "max_qp_wr", "IBV_QPT_RC", ()),
                  ("qp-UD", "ibv_create_qp", "qp_init_attr.cap.max_send_wr", "max_qp_wr", "IBV_QPT_UD",
                   _QP_TYPE_NEEDS["IBV_QPT_UD"]),
                  ("qp-RC", "ibv_create_qp", "qp_init_attr.cap.max_send_sge", "max_sge", "IBV_QPT_RC", ()),
                  ("qp-UD", "ibv_create_qp", "qp_init_attr.cap.max_send_sge", "max_sge", "IBV_QPT_UD",
                   _QP_TYPE_NEEDS["IBV_QPT_UD"]),
                  ("srq", "ibv_create_srq", "srq_init_attr.attr.max_wr", "max_srq_wr", "", (Cap("attr.max_srq"),)),
                  ("srq", "ibv_create_srq", "srq_init_attr.attr.max_sge", "max_srq_sge", "", (Cap("attr.max_srq"),)),
              ), "where": ("at", "above")},
              variant="{what}-{limit}-{where}",
              params={"target": {"verb": "{verb}", "limit": "{limit}", "needs": Var("needs")},
                      "excused": (_AT_LIMIT_EXCUSE,),
                      "at": {"{arg}": Dev("attr.{limit}")}, "above": {"{arg}": Dev("attr.{limit}", plus=1)}}),
        Claim("input-comp-mask-rejected", "refused", "input is for future extensions: a comp_mask bit the library "
              "does not know is refused", "DESCRIPTION", layer="libibverbs",
              over={"bit": (0, 1, 31)}, variant="input-comp_mask-bit{bit}",
              call={"input": {"comp_mask": Flags(bits=(Var("bit"),))}}),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)

ibv_create_cq_ex = Verb(
    name="ibv_create_cq_ex",
    man="ibv_create_cq_ex(3)",
    prototype="struct ibv_cq_ex *ibv_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *cq_attr);",
    returns=RETURNS_POINTER,
    summary="create a CQ with extended attributes (which work completion fields it reports)",
    params=(CONTEXT, Param("cq_attr", "struct ibv_cq_init_attr_ex *", default={"cqe": 16})),
    contract=Contract(produces=(Resource("cq_ex"),), destroyed_by="ibv_destroy_cq"),
)
# --- end section: query_device_ex -------------------------------------------------------------

# --- section: ibv_create_flow, ibv_destroy_flow -----------------------------------------------
# A rule that any steering device accepts: match one destination MAC exactly (the page's EXAMPLE, L2 only).
_ETH_DST_MAC = ("ibv_flow_spec_eth", {"type": "IBV_FLOW_SPEC_ETH", "val.dst_mac": bytes.fromhex("661122334455"),
                                      "mask.dst_mac": b"\xff" * 6})
_FLOW_RULE = {"type": "IBV_FLOW_ATTR_NORMAL", "priority": 0, "port": Dev("port_num"), "flags": 0,
              "num_of_specs": 1, "specs": (_ETH_DST_MAC,)}
_STEERING = Cap("attr.device_cap_flags&IBV_DEVICE_MANAGED_FLOW_STEERING")
_FLOW_QP = {"qp": Need("qp", spec={"qp_type": Var("qp_type")})}
_DONT_TRAP = "IBV_FLOW_ATTR_FLAGS_DONT_TRAP"

ibv_create_flow = Verb(
    name="ibv_create_flow",
    man="ibv_create_flow(3)",
    prototype="struct ibv_flow *ibv_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr);",
    returns=RETURNS_POINTER,
    summary="attach a steering rule (attr + specs) to a UD or RAW_PACKET QP; NULL with errno on failure",
    params=(
        Param("qp", "struct ibv_qp *", default=Need("qp", spec={"qp_type": Var("qp_type")}),
              doc="UD or RAW_PACKET; with EGRESS only names the device"),
        Param("flow_attr", "struct ibv_flow_attr *", default=_FLOW_RULE, flags="ibv_flow_flags",
              doc="flags draw from ibv_flow_flags; type from ibv_flow_attr_type; specs follow the header"),
    ),
    errors=(
        Error("EINVAL", "the flow specification, the QP or the priority is invalid",
              covered_by=("qp-type-not-allowed", "invalid-rules")),
        Error("ENOMEM", "not enough memory to create the rule",
              untestable="cannot exhaust kernel or device memory safely on a shared lab VM"),
        Error("ENXIO", "the device does not support device managed flow steering", covered_by=("no-steering-errno",)),
        Error("EPERM", "no permission to add the rule",
              untestable="the lab runs as root and the page does not say which rules need privilege"),
    ),
    claims=(
        Claim("no-steering-errno", "gated", "on a device that does not advertise IBV_DEVICE_MANAGED_FLOW_STEERING "
              "the call fails with ENXIO", "ERRORS, NOTES",
              over={"qp_type": ("IBV_QPT_UD", "IBV_QPT_RAW_PACKET")}, variant="{qp_type}-valid-rule-without-steering",
              errnos=("ENXIO",), params={"gate": _STEERING, "only": "not-advertised"}),
        Claim("qp-type-not-allowed", "refused", "rules attach only to UD and RAW_PACKET QPs: other QP types are "
              "refused as invalid", "NOTES, ERRORS",
              over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UC")}, variant="{qp_type}-qp-not-allowed",
              errnos=("EINVAL", "ENXIO")),
        Claim("invalid-rules", "refused", "an invalid specification list, flag/type combination or flag is refused "
              "with EINVAL; DONT_TRAP goes only with rule type NORMAL", "ERRORS, NOTES",
              over={"qp_type": ("IBV_QPT_UD", "IBV_QPT_RAW_PACKET"), ("rule", "change"): (
                  ("dont-trap-with-ALL_DEFAULT", {"type": "IBV_FLOW_ATTR_ALL_DEFAULT", "flags": _DONT_TRAP,
                                                  "num_of_specs": 0, "specs": ()}),
                  ("dont-trap-with-MC_DEFAULT", {"type": "IBV_FLOW_ATTR_MC_DEFAULT", "flags": _DONT_TRAP,
                                                 "num_of_specs": 0, "specs": ()}),
                  ("dont-trap-with-SNIFFER", {"type": "IBV_FLOW_ATTR_SNIFFER", "flags": _DONT_TRAP,
                                              "num_of_specs": 0, "specs": ()}),
                  ("fewer-specs-than-declared", {"num_of_specs": 2}),
                  ("unknown-flag-bit31", {"flags": Flags(bits=(31,))}),
                  ("port-0", {"port": 0}),
                  ("port-beyond-last", {"port": Dev("attr.phys_port_cnt", plus=1)}),
              )}, variant="{qp_type}-{rule}", needs=(_STEERING,), errnos=("EINVAL",),
              call={"flow_attr": Var("change")}),
        Claim("create-valid", "gated", "a valid rule (the page's L2 example, and NORMAL with DONT_TRAP) is created "
              "on a steering device and destroyed with 0", "DESCRIPTION, NOTES",
              over={"qp_type": ("IBV_QPT_UD", "IBV_QPT_RAW_PACKET"), ("rule", "change"): (
                  ("eth-dst-mac", {}), ("dont-trap-with-NORMAL", {"flags": _DONT_TRAP}))},
              variant="{qp_type}-{rule}", call={"flow_attr": Var("change")},
              params={"gate": _STEERING, "only": "advertised",
                      "advertised": {"then": (Step("ibv_destroy_flow", {"flow_id": Ref("call")}),)}}),
        Claim("egress-qp-only-names-device", "untestable", "with EGRESS the QP only identifies the device", "NOTES",
              untestable="observing which QP egress actions use needs traffic through a steering device"),
        Claim("unknown-spec-type-refused", "refused", "a specification of a type the header does not define is "
              "refused as an invalid specification", "ERRORS", over={"qp_type": ("IBV_QPT_UD", "IBV_QPT_RAW_PACKET")},
              variant="{qp_type}-spec-type-0x22", needs=(_STEERING,), errnos=("EINVAL",), layer="libibverbs",
              call={"flow_attr.specs": (("ibv_flow_spec_eth", {**_ETH_DST_MAC[1], "type": 0x22}),)}),
        Claim("steers-matching-packets", "untestable", "a packet that matches a rule is delivered to the rule's QP "
              "(the lower priority number winning, DONT_TRAP passing it on)", "DESCRIPTION",
              untestable="needs traffic: left to the data-path section"),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),), produces=(Resource("flow"),),
                      destroyed_by="ibv_destroy_flow", makes=True),
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
        Error("EINVAL", "flow_id is invalid",
              untestable="an invalid flow_id is a stale or forged pointer: passing one is undefined behaviour"),
        Error("ENOMEM", "not enough memory to destroy the rule", untestable="cannot exhaust memory safely on a shared lab VM"),
    ),
    claims=(
        Claim("destroy-returns-zero", "succeeds", "destroying a rule just created returns 0", "RETURN VALUE",
              over={"qp_type": ("IBV_QPT_UD", "IBV_QPT_RAW_PACKET")}, variant="{qp_type}-eth-dst-mac",
              needs=(_STEERING,)),
    ),
    contract=Contract(requires=(Resource("flow", role="flow_id"),), destroys=(Resource("flow", role="flow_id"),)),
)
# --- end section: flow ------------------------------------------------------------------------

# --- section: PD, CQ, SRQ, MR ------------------------------------------------------------------
ibv_alloc_pd = Verb(
    name="ibv_alloc_pd",
    man="ibv_alloc_pd(3)",
    prototype="struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);",
    returns=RETURNS_POINTER,
    summary="allocate a protection domain; NULL on failure",
    params=(CONTEXT,),
    claims=(
        Claim("distinct-pds", "distinct", "each call returns a new PD with its own handle, and ibv_dealloc_pd of an "
              "unused PD returns 0", "DESCRIPTION, RETURN VALUE", variant="x16",
              params={"count": 16, "value": "ret.handle"}),
    ),
    contract=Contract(requires=(Resource("context", role="context"),), produces=(Resource("pd"),),
                      destroyed_by="ibv_dealloc_pd", makes=True),
)

ibv_dealloc_pd = Verb(
    name="ibv_dealloc_pd",
    man="ibv_alloc_pd(3)",
    prototype="int ibv_dealloc_pd(struct ibv_pd *pd);",
    returns=RETURNS_ERRNO,
    summary="free a protection domain; 0 or an errno (EBUSY while anything uses it)",
    params=(Param("pd", "struct ibv_pd *", default=Need("pd")),),
    claims=(
        Claim("busy-with-mr", "refused", "freeing a PD that a memory region still uses fails with EBUSY, and the "
              "PD stays usable", "DESCRIPTION", errnos=("EBUSY",),
              steps=(Step("ibv_reg_mr", {"pd": Need("pd")}),),
              params={"then": (Step("ibv_reg_mr", {"pd": Need("pd")}),)}),
        Claim("busy-with-qp", "refused", "freeing a PD that a QP still uses fails with EBUSY, and the PD stays "
              "usable", "DESCRIPTION", errnos=("EBUSY",),
              steps=(Step("ibv_create_qp", {"pd": Need("pd")}),),
              params={"then": (Step("ibv_reg_mr", {"pd": Need("pd")}),)}),
        Claim("busy-with-ah", "refused", "freeing a PD that an address handle still uses fails with EBUSY, and the "
              "PD stays usable", "DESCRIPTION", errnos=("EBUSY",), transports=IB_TRANSPORTS,
              steps=(Step("ibv_create_ah", {"pd": Need("pd")}),),
              params={"then": (Step("ibv_reg_mr", {"pd": Need("pd")}),)},
              also=(Source("man", "ibv_create_ah(3)", "DESCRIPTION"),)),
    ),
    errors=(Error("EBUSY", "the PD is still in use", covered_by=("busy-with-mr", "busy-with-qp", "busy-with-ah")),),
    contract=Contract(destroys=(Resource("pd", role="pd"),)),
)

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
        Claim("cqe-at-least-requested", "succeeds", "the CQ's cqe is at least the number of entries asked for",
              "DESCRIPTION, NOTES", over={"cqe": (1, 3, 100, 1000)}, variant="cqe-{cqe}",
              call={"cqe": Var("cqe")}, expect=(Expect("ret.cqe", ">=", Arg("cqe")),)),
    ),
    contract=Contract(requires=(Resource("context", role="context"),), produces=(Resource("cq"),),
                      destroyed_by="ibv_destroy_cq", makes=True),
)

ibv_destroy_cq = Verb(
    name="ibv_destroy_cq",
    man="ibv_create_cq(3)",
    prototype="int ibv_destroy_cq(struct ibv_cq *cq);",
    returns=RETURNS_ERRNO,
    summary="destroy a CQ; 0 or an errno",
    params=(Param("cq", "struct ibv_cq *"),),
    contract=Contract(destroys=(Resource("cq", role="cq"),)),
)

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
        Claim("sizes-at-least-requested", "succeeds", "the max_wr and max_sge written back into srq_init_attr are at "
              "least the request", "DESCRIPTION", needs=(Cap("attr.max_srq"),),
              over={("max_wr", "max_sge"): ((3, 1), (100, 2))}, variant="max_wr-{max_wr}-max_sge-{max_sge}",
              call={"srq_init_attr.attr": {"max_wr": Var("max_wr"), "max_sge": Var("max_sge")}},
              expect=(Expect("srq_init_attr.attr.max_wr", ">=", Arg("srq_init_attr.attr.max_wr")),
                      Expect("srq_init_attr.attr.max_sge", ">=", Arg("srq_init_attr.attr.max_sge")))),
        Claim("keeps-srq-context", "succeeds", "the new SRQ carries the srq_context it was created with",
              "DESCRIPTION", needs=(Cap("attr.max_srq"),), variant="srq_context-0x1234", layer="libibverbs",
              call={"srq_init_attr.srq_context": 0x1234}, expect=(Expect("ret.srq_context", "==", 0x1234),)),
        Claim("srq-limit-not-a-creation-parameter", "succeeds", "srq_limit plays no part in creation: a nonzero value "
              "does not make the call fail", "DESCRIPTION", needs=(Cap("attr.max_srq"),), variant="srq_limit-4",
              call={"srq_init_attr.attr.srq_limit": 4}),
        Claim("sizes-above-limits-refused", "refused", "a size above the device's SRQ limits (max_srq_wr, "
              "max_srq_sge) is refused", "DESCRIPTION", needs=(Cap("attr.max_srq"),),
              over={("field", "limit"): (("max_wr", "max_srq_wr"), ("max_sge", "max_srq_sge"))},
              variant="{field}-above-{limit}", call={"srq_init_attr.attr.{field}": Dev("attr.{limit}", plus=1)},
              errnos=("EINVAL", "ENOMEM"), also=(Source("man", "ibv_query_device(3)", "DESCRIPTION"),)),
        Claim("refused-without-srq-support", "gated", "a device that reports max_srq 0 has no SRQs: creating one "
              "is refused", "DESCRIPTION", variant="max_srq-0", errnos=("EOPNOTSUPP", "ENOSYS"),
              params={"gate": Cap("attr.max_srq"), "only": "not-advertised"},
              also=(Source("man", "ibv_query_device(3)", "DESCRIPTION"),)),
    ),
    errors=(
        Error("EINVAL", "a requested size is above the device's SRQ limits (not on the page: the kernel driver's "
              "answer)", covered_by=("sizes-above-limits-refused",)),
        Error("ENOMEM", "the SRQ cannot be allocated (not on the page)", covered_by=("sizes-above-limits-refused",)),
        Error("EOPNOTSUPP", "the provider has no SRQs at all and libibverbs' default op answers (not on the page)",
              covered_by=("refused-without-srq-support",)),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("srq"),),
                      destroyed_by="ibv_destroy_srq", makes=True),
    undefined=("a NULL pd or srq_init_attr (libibverbs dereferences both)",),
)

ibv_destroy_srq = Verb(
    name="ibv_destroy_srq",
    man="ibv_create_srq(3)",
    prototype="int ibv_destroy_srq(struct ibv_srq *srq);",
    returns=RETURNS_ERRNO,
    summary="destroy an SRQ; 0 or an errno (EBUSY while a QP uses it)",
    params=(Param("srq", "struct ibv_srq *", default=Need("srq")),),
    claims=(
        Claim("destroy-returns-zero", "succeeds", "destroying an SRQ that no QP uses returns 0, and the SRQ no longer "
              "holds its PD", "RETURN VALUE", needs=(Cap("attr.max_srq"),), variant="unused",
              params={"then": (Step("ibv_dealloc_pd", {"pd": Need("pd")}),)}),
        Claim("busy-with-qp", "refused", "destroying an SRQ that a QP still uses fails with EBUSY, and the SRQ stays "
              "usable (another QP can still be created on it)", "NOTES", needs=(Cap("attr.max_srq"),),
              variant="RC-qp-on-srq", errnos=("EBUSY",),
              steps=(Step("ibv_create_qp", {"qp_init_attr.srq": Need("srq")}),),
              params={"then": (Step("ibv_create_qp", {"qp_init_attr.srq": Need("srq")}),)},
              also=(Source("kernel", "drivers/infiniband/core/verbs.c ib_destroy_srq_user(): EBUSY while usecnt"),)),
    ),
    errors=(
        Error("EBUSY", "a QP is still associated with the SRQ (NOTES; the errno is the kernel's)",
              covered_by=("busy-with-qp",)),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),), destroys=(Resource("srq", role="srq"),)),
    undefined=("destroying an SRQ twice", "using an SRQ after destroying it",
               "destroying an SRQ while another thread posts to it"),
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
        Claim("registers", "succeeds", "a registration with local write access succeeds and reports the length "
              "asked for; ibv_dereg_mr returns 0", "DESCRIPTION, RETURN VALUE",
              over={"length": (1, 4096, 65536 + 3)}, variant="length-{length}",
              expect=(Expect("ret.length", "==", Arg("length")),),
              params={"then": (Step("ibv_dereg_mr", {"mr": Ref("call")}),)}),
        Claim("remote-write-needs-local-write", "refused", "REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE is "
              "refused", "DESCRIPTION",
              over={("name", "access"): (
                  ("REMOTE_WRITE", "IBV_ACCESS_REMOTE_WRITE"),
                  ("REMOTE_ATOMIC", "IBV_ACCESS_REMOTE_ATOMIC"),
                  ("REMOTE_WRITE+REMOTE_READ", "IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ"))},
              variant="{name}-without-LOCAL_WRITE", call={"access": Var("access")}),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("mr"),), destroyed_by="ibv_dereg_mr",
                      makes=True),
    tables={"vars": {"length": 4096}},
)

ibv_dereg_mr = Verb(
    name="ibv_dereg_mr",
    man="ibv_reg_mr(3)",
    prototype="int ibv_dereg_mr(struct ibv_mr *mr);",
    returns=RETURNS_ERRNO,
    summary="deregister a memory region; 0 or an errno",
    params=(Param("mr", "struct ibv_mr *"),),
    contract=Contract(destroys=(Resource("mr", role="mr"),)),
)
# --- end section: resources -------------------------------------------------------------------

# --- section: rates and strings ----------------------------------------------------------------
_RATE_MULT = (
    ("IBV_RATE_2_5_GBPS", 1), ("IBV_RATE_5_GBPS", 2), ("IBV_RATE_10_GBPS", 4), ("IBV_RATE_20_GBPS", 8),
    ("IBV_RATE_30_GBPS", 12), ("IBV_RATE_40_GBPS", 16), ("IBV_RATE_60_GBPS", 24), ("IBV_RATE_80_GBPS", 32),
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
        Claim("multiple-of-2-5", "exact-table", "a rate that is a whole multiple of 2.5 Gbit/s converts to that "
              "multiple", "DESCRIPTION", layer="libibverbs", params={"input": "rate", "table": _RATE_MULT}),
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
        Claim("inverse", "exact-table", "a multiple of 2.5 Gbit/s converts back to its IBV_RATE_* value",
              "DESCRIPTION", layer="libibverbs",
              params={"input": "mult", "table": tuple((mult, rate) for rate, mult in _RATE_MULT)}),
    ),
)
# --- end section: rates and strings ------------------------------------------------------------

# --- section: breadth A (device and context, ports and GIDs, PD/TD/parent domain, MR, MW, DM, CQ, channels,
# async events, counters, fork, import, rate and string helpers): entries added below this line -------------
# --- end section: breadth A -------------------------------------------------------------------------------

# --- section: breadth B (SRQ and XRC, QPs beyond the seeds, AH, multicast, WQ and RWQ tables, flow actions,
# ECE): entries added below this line ------------------------------------------------------------------------
# What advertises each feature of this section (an unsupported verdict names the attribute).
_SRQS = Cap("attr.max_srq")
_SRQ_RESIZE = Cap("attr.device_cap_flags&IBV_DEVICE_SRQ_RESIZE")
_XRC = Cap("attr.device_cap_flags&IBV_DEVICE_XRC")
_TAG_MATCHING = Cap("attr_ex.tm_caps.max_num_tags")
_WQS = Cap("attr_ex.max_wq_type_rq")
_RSS = Cap("attr_ex.rss_caps.max_rwq_indirection_table_size")
_PACING = Cap("attr_ex.packet_pacing_caps.qp_rate_limit_max")
_MCAST = (Cap("attr.max_mcast_grp"), Cap("attr.max_mcast_qp_attach"))
_GRH_REQUIRED = Cap("port.flags&IBV_QPF_GRH_REQUIRED")
_O_CREAT, _O_EXCL = 0o100, 0o200  # <fcntl.h> on Linux: ibv_open_xrcd(3) takes open(2)'s flags
_USECOUNT = "drivers/infiniband/core: a destroy while another object holds a use count returns EBUSY"

# --- SRQ: modify, query, number, extended creation, tag-matching operations --------------------------------
_XRC_SRQ = {
    "comp_mask": "IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ",
    "srq_type": "IBV_SRQT_XRC",
    "xrcd": Need("xrcd"),
    "cq": Need("cq"),
}
_MADE_SRQ = Step("ibv_create_srq", name="made")  # an SRQ whose written-back sizes later steps compare with
# What the SRQ reports before a modify. Where the query is not implemented the claim's own query says so
# (unsupported), so this one may fail.
_SRQ_BEFORE = Step("ibv_query_srq", {"srq": Ref("made")}, name="before", expect="any")

ibv_modify_srq = Verb(
    name="ibv_modify_srq",
    man="ibv_modify_srq(3)",
    prototype="int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask);",
    returns=RETURNS_ERRNO,
    summary="resize an SRQ or arm its limit (srq_attr_mask says which); nothing changes if any attribute is invalid",
    params=(
        Param("srq", "struct ibv_srq *", default=Need("srq")),
        Param("srq_attr", "struct ibv_srq_attr *", default={"srq_limit": 4}, doc="max_sge is ignored"),
        Param("srq_attr_mask", "int", default="IBV_SRQ_LIMIT", flags="ibv_srq_attr_mask",
              doc="0 or an OR of IBV_SRQ_MAX_WR, IBV_SRQ_LIMIT"),
    ),
    errors=(
        Error("EINVAL", "an attribute is invalid: a limit above the SRQ's size, a size above the device's limit "
              "(not on the page: the driver's answer)",
              covered_by=("limit-above-size-refused", "max-wr-above-limit-refused")),
        Error("EOPNOTSUPP", "resizing is not supported by the device (not on the page)", covered_by=("resize-gated",)),
    ),
    claims=(
        Claim("arm-limit", "succeeds", "IBV_SRQ_LIMIT with a limit below the SRQ's size is accepted", "DESCRIPTION",
              needs=(_SRQS,), variant="srq_limit-4"),
        Claim("zero-mask-accepted", "succeeds", "a mask of 0 is a valid request (it asks for no change), whatever the "
              "attributes hold", "DESCRIPTION", needs=(_SRQS,), variant="mask-0-attrs-9999",
              call={"srq_attr": {"max_wr": 9999, "srq_limit": 9999}, "srq_attr_mask": 0}),
        Claim("max-sge-ignored", "succeeds", "srq_attr.max_sge plays no part in a modify: any value is accepted",
              "DESCRIPTION", needs=(_SRQS,), variant="max_sge-0xffffffff-with-limit",
              call={"srq_attr": {"max_sge": 0xFFFFFFFF, "srq_limit": 2}}),
        Claim("limit-above-size-refused", "refused", "a limit larger than the SRQ can hold is an invalid attribute",
              "NOTES", needs=(_SRQS,), variant="srq_limit-max_srq_wr+1", errnos=("EINVAL",),
              call={"srq_attr": {"srq_limit": Dev("attr.max_srq_wr", plus=1)}},
              also=(Source("ibta", "IBTA Vol. 1 §11.2.3 (Shared Receive Queue verbs, Modify SRQ: the limit may "
                                   "not exceed the SRQ's size)"),)),
        Claim("max-wr-above-limit-refused", "refused", "resizing beyond the device's max_srq_wr is invalid; with a "
              "valid limit in the same call, nothing is applied (the read-back is ibv_query_srq's claim)", "NOTES",
              needs=(_SRQS,), variant="max_wr-max_srq_wr+1-with-limit-2", errnos=("EINVAL", "EOPNOTSUPP"),
              call={"srq_attr": {"max_wr": Dev("attr.max_srq_wr", plus=1), "srq_limit": 2},
                    "srq_attr_mask": "IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT"}),
        Claim("resize-gated", "gated", "IBV_SRQ_MAX_WR grows the SRQ only where the device advertises "
              "IBV_DEVICE_SRQ_RESIZE; elsewhere it is refused", "NOTES", needs=(_SRQS,), variant="max_wr-200",
              call={"srq_attr": {"max_wr": 200}, "srq_attr_mask": "IBV_SRQ_MAX_WR"}, errnos=("EINVAL", "EOPNOTSUPP"),
              params={"gate": _SRQ_RESIZE, "advertised": {
                  "then": (Step("ibv_query_srq", {"srq": Need("srq")}, name="q"),),
                  "expect": (Expect("q.srq_attr.max_wr", ">=", 200),)}}),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),)),
    undefined=("mask bits other than IBV_SRQ_MAX_WR and IBV_SRQ_LIMIT (the page does not say)",
               "shrinking max_wr below the number of receives posted"),
)

ibv_query_srq = Verb(
    name="ibv_query_srq",
    man="ibv_query_srq(3)",
    prototype="int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);",
    returns=RETURNS_ERRNO,
    summary="read an SRQ's size, SGE limit and armed limit (0: not armed)",
    params=(Param("srq", "struct ibv_srq *", default=Need("srq")), Param("srq_attr", "struct ibv_srq_attr *", "out")),
    errors=(
        Error("EOPNOTSUPP", "the provider does not implement the query (libibverbs' default op answers; not on the "
              "page)", untestable="the not-implemented answer: where it comes, every claim of this verb is "
              "reported unsupported (tables['not_supported'])"),
    ),
    claims=(
        Claim("agrees-with-creation", "succeeds", "the sizes reported are the SRQ's real ones: those ibv_create_srq "
              "wrote back, at least the request", "DESCRIPTION", needs=(_SRQS,), variant="max_wr-16-max_sge-1",
              steps=(_MADE_SRQ,), call={"srq": Ref("made")},
              expect=(Expect("srq_attr.max_wr", ">=", 16), Expect("srq_attr.max_sge", ">=", 1),
                      Expect("srq_attr.max_wr", "==", Ref("made", "srq_init_attr.attr.max_wr"),
                             ref="ibv_create_srq(3) DESCRIPTION"),
                      Expect("srq_attr.max_sge", "==", Ref("made", "srq_init_attr.attr.max_sge"),
                             ref="ibv_create_srq(3) DESCRIPTION"))),
        Claim("fresh-srq-not-armed", "succeeds", "a new SRQ reports limit 0 (not armed), even when srq_limit was "
              "given at creation, where it plays no part", "NOTES", needs=(_SRQS,),
              over={"given": (0, 4)}, variant="created-with-srq_limit-{given}",
              call={"srq": Need("srq", spec={"srq_init_attr.attr.srq_limit": Var("given")})},
              expect=(Expect("srq_attr.srq_limit", "==", 0),),
              also=(Source("man", "ibv_create_srq(3)", "DESCRIPTION"),)),
        Claim("limit-reads-back", "succeeds", "after ibv_modify_srq armed a limit, the query reports it",
              "DESCRIPTION", needs=(_SRQS,), variant="armed-at-3",
              steps=(Step("ibv_modify_srq", {"srq_attr": {"srq_limit": 3}}),),
              expect=(Expect("srq_attr.srq_limit", "==", 3),), also=(Source("man", "ibv_modify_srq(3)", "NOTES"),)),
        Claim("zero-mask-changes-nothing", "succeeds", "a modify with mask 0 changes neither the size nor the limit",
              "DESCRIPTION", needs=(_SRQS,), variant="after-mask-0-attrs-9999",
              steps=(_MADE_SRQ, _SRQ_BEFORE,
                     Step("ibv_modify_srq", {"srq": Ref("made"), "srq_attr": {"max_wr": 9999, "srq_limit": 9999},
                                             "srq_attr_mask": 0}, expect="any")),
              call={"srq": Ref("made")},
              expect=(Expect("srq_attr.max_wr", "==", Ref("before", "srq_attr.max_wr")),
                      Expect("srq_attr.srq_limit", "==", Ref("before", "srq_attr.srq_limit"))),
              also=(Source("man", "ibv_modify_srq(3)", "DESCRIPTION"),)),
        Claim("failed-modify-changes-nothing", "succeeds", "a modify refused for one invalid attribute applies none "
              "of the others: the size and the limit are unchanged", "NOTES", needs=(_SRQS,),
              variant="after-refused-max_wr-and-limit",
              steps=(_MADE_SRQ, _SRQ_BEFORE,
                     Step("ibv_modify_srq", {"srq": Ref("made"),
                                             "srq_attr": {"max_wr": Dev("attr.max_srq_wr", plus=1), "srq_limit": 2},
                                             "srq_attr_mask": "IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT"}, expect="fails")),
              call={"srq": Ref("made")},
              expect=(Expect("srq_attr.max_wr", "==", Ref("before", "srq_attr.max_wr")),
                      Expect("srq_attr.srq_limit", "==", Ref("before", "srq_attr.srq_limit"))),
              also=(Source("man", "ibv_modify_srq(3)", "NOTES"),)),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),)),
    tables={"not_supported": {"EOPNOTSUPP": "the provider does not implement ibv_query_srq (libibverbs' default op)"}},
    undefined=("querying a destroyed SRQ",),
)

ibv_create_srq_ex = Verb(
    name="ibv_create_srq_ex",
    man="ibv_create_srq_ex(3)",
    prototype="struct ibv_srq *ibv_create_srq_ex(struct ibv_context *context, "
    "struct ibv_srq_init_attr_ex *srq_init_attr_ex);",
    returns=RETURNS_POINTER,
    summary="create a basic, XRC or tag-matching SRQ (comp_mask says which fields are valid); NULL on failure",
    params=(
        CONTEXT,
        Param("srq_init_attr_ex", "struct ibv_srq_init_attr_ex *", "inout",
              default={"attr": {"max_wr": 16, "max_sge": 1},
                       "comp_mask": "IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE", "srq_type": "IBV_SRQT_BASIC",
                       "pd": Need("pd")},
              flags="ibv_srq_init_attr_mask",
              doc="comp_mask draws from ibv_srq_init_attr_mask, srq_type from ibv_srq_type; attr is written back"),
    ),
    errors=(
        Error("EOPNOTSUPP", "a comp_mask bit outside the defined set, or a request beyond the basic path on a "
              "provider without the extended op (not on the page: libibverbs)",
              covered_by=("reserved-comp-mask-refused",)),
        Error("EINVAL", "the request lacks its PD, or an XRC request its XRC domain (not on the page: libibverbs' "
              "command layer)", covered_by=("missing-pd-refused", "xrc-needs-xrcd")),
        Error("ENOMEM", "the SRQ cannot be allocated (not on the page)",
              untestable="cannot exhaust kernel or device memory safely on a shared lab VM"),
    ),
    claims=(
        Claim("sizes-at-least-requested", "succeeds", "a basic SRQ is created and attr is written back with sizes at "
              "least the request (a PD-only or PD+TYPE(BASIC) request takes ibv_create_srq's path)", "DESCRIPTION",
              needs=(_SRQS,), over={("mask", "comp_mask"): (
                  ("PD", "IBV_SRQ_INIT_ATTR_PD"), ("PD+TYPE-basic", "IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE")),
                  ("max_wr", "max_sge"): ((3, 1), (100, 2))},
              variant="{mask}-max_wr-{max_wr}-max_sge-{max_sge}",
              call={"srq_init_attr_ex.comp_mask": Var("comp_mask"),
                    "srq_init_attr_ex.attr": {"max_wr": Var("max_wr"), "max_sge": Var("max_sge")}},
              expect=(Expect("srq_init_attr_ex.attr.max_wr", ">=", Arg("srq_init_attr_ex.attr.max_wr")),
                      Expect("srq_init_attr_ex.attr.max_sge", ">=", Arg("srq_init_attr_ex.attr.max_sge")))),
        Claim("reserved-comp-mask-refused", "refused", "comp_mask bits outside ibv_srq_init_attr_mask make the call "
              "fail", "DESCRIPTION", needs=(_SRQS,), over={"bit": (5, 6, 16, 31)}, variant="comp_mask-bit{bit}",
              call={"srq_init_attr_ex.comp_mask": Flags(("IBV_SRQ_INIT_ATTR_PD", "IBV_SRQ_INIT_ATTR_TYPE"),
                                                        bits=(Var("bit"),))},
              errnos=("EOPNOTSUPP", "EINVAL"), layer="libibverbs"),
        Claim("missing-pd-refused", "refused", "a request that does not mark pd valid is refused: an SRQ belongs to "
              "a PD", "DESCRIPTION", needs=(_SRQS,), variant="comp_mask-TYPE-only", errnos=("EINVAL",),
              call={"srq_init_attr_ex.comp_mask": "IBV_SRQ_INIT_ATTR_TYPE"}, layer="libibverbs"),
        Claim("xrc-needs-xrcd", "refused", "an XRC SRQ request that does not give its XRC domain is refused",
              "DESCRIPTION", needs=(_SRQS,), variant="XRC-without-XRCD", errnos=("EINVAL",), layer="libibverbs",
              call={"srq_init_attr_ex": {"comp_mask": "IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | "
                                                      "IBV_SRQ_INIT_ATTR_CQ",
                                         "srq_type": "IBV_SRQT_XRC", "cq": Need("cq")}}),
        Claim("xrc-srq", "gated", "an XRC SRQ is created in an XRC domain with a CQ where the device advertises XRC, "
              "and it has an SRQ number", "DESCRIPTION", needs=(_SRQS,), variant="XRC-in-private-xrcd",
              call={"srq_init_attr_ex": _XRC_SRQ},
              params={"gate": _XRC, "only": "advertised", "advertised": {
                  "then": (Step("ibv_get_srq_num", {"srq": Ref("call")}),)}}),
        Claim("tag-matching-srq", "gated", "a tag-matching SRQ is created where the device advertises tag matching, "
              "and refused where it does not", "DESCRIPTION", needs=(_SRQS,), variant="TM-16-tags",
              call={"srq_init_attr_ex": {
                  "comp_mask": "IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_CQ | "
                               "IBV_SRQ_INIT_ATTR_TM",
                  "srq_type": "IBV_SRQT_TM", "cq": Need("cq"), "tm_cap": {"max_num_tags": 16, "max_ops": 16}}},
              errnos=("EOPNOTSUPP", "EINVAL"), params={"gate": _TAG_MATCHING}),
    ),
    contract=Contract(requires=(Resource("context", role="context"), Resource("pd", role="srq_init_attr_ex.pd")),
                      produces=(Resource("srq"),), destroyed_by="ibv_destroy_srq"),
    # verbs.h routes all but basic requests to the provider's create_srq_ex; libibverbs' default answers EOPNOTSUPP.
    tables={"not_supported": {"EOPNOTSUPP": "the provider does not implement ibv_create_srq_ex's extended path "
                                            "(libibverbs' default op)"}},
    undefined=("an srq_type outside enum ibv_srq_type",
               "a comp_mask bit set for xrcd or cq with a NULL pointer behind it (libibverbs dereferences it)"),
)

ibv_get_srq_num = Verb(
    name="ibv_get_srq_num",
    man="ibv_get_srq_num(3)",
    prototype="int ibv_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);",
    returns=RETURNS_ERRNO,
    summary="the number of an XRC SRQ, which XRC senders name as remote_srqn",
    params=(Param("srq", "struct ibv_srq *", default=Need("srq")), Param("srq_num", "uint32_t *", "out")),
    errors=(
        Error("EOPNOTSUPP", "the provider has no XRC (libibverbs' default op answers; not on the page)",
              untestable="reachable only on devices without XRC, where no XRC SRQ exists to ask about; asking about "
              "a basic SRQ is outside the page"),
    ),
    claims=(
        Claim("xrc-srq-has-number", "gated", "an XRC SRQ yields its number, which fits the 24 bits of an SRQ number",
              "DESCRIPTION", needs=(_SRQS,), variant="XRC-srq",
              steps=(Step("ibv_create_srq_ex", {"srq_init_attr_ex": _XRC_SRQ}, name="xsrq"),),
              call={"srq": Ref("xsrq")}, also=(Source("ibta", "IBTA Vol. 1 Annex A14 (XRC: SRQ numbers are 24 bits)"),),
              params={"gate": _XRC, "only": "advertised",
                      "advertised": {"expect": (Expect("srq_num", "in", (0, 1 << 24)),)}}),
        Claim("distinct-numbers", "gated", "two live XRC SRQs have different numbers", "DESCRIPTION", needs=(_SRQS,),
              variant="two-XRC-srqs-one-xrcd",
              steps=(Step("ibv_create_srq_ex", {"srq_init_attr_ex": _XRC_SRQ}, name="x1"),
                     Step("ibv_create_srq_ex", {"srq_init_attr_ex": _XRC_SRQ}, name="x2"),
                     Step("ibv_get_srq_num", {"srq": Ref("x1")}, name="n1")),
              call={"srq": Ref("x2")},
              params={"gate": _XRC, "only": "advertised",
                      "advertised": {"expect": (Expect("srq_num", "!=", Ref("n1", "srq_num")),)}}),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),)),
    tables={"not_supported": {"EOPNOTSUPP": "the provider does not implement ibv_get_srq_num (libibverbs' "
                                            "default op)"}},
    undefined=("calling it on an SRQ that is not an XRC SRQ (the page covers XRC SRQs only)",),
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
        Param("wr", "struct ibv_ops_wr *", default=_TAG_SYNC, flags="ibv_ops_wr_opcode",
              doc="opcode from ibv_ops_wr_opcode, flags from ibv_ops_flags; tm.handle is written by TAG_ADD"),
        Param("bad_wr", "struct ibv_ops_wr **", "out"),
    ),
    errors=(
        Error("EINVAL", "the SRQ is not a tag-matching SRQ or the opcode is unknown (not on the page: mlx5)",
              covered_by=("needs-tag-matching-srq",)),
        Error("EOPNOTSUPP", "the provider has no tag matching (libibverbs' default answers; not on the page)",
              covered_by=("needs-tag-matching-srq",)),
        Error("ENOMEM", "the tag list or the operation queue is full (not on the page: mlx5)",
              untestable="left to the data-path section: filling the list takes signalled TAG_ADDs and their "
              "completions"),
    ),
    claims=(
        Claim("needs-tag-matching-srq", "refused", "the operations configure a tag-matching SRQ: on a basic SRQ they "
              "are refused", "DESCRIPTION", needs=(_SRQS,), variant="TAG_SYNC-on-basic-srq",
              errnos=("EINVAL", "EOPNOTSUPP")),
        Claim("tag-list-operations", "untestable", "TAG_ADD returns a handle, TAG_DEL removes an entry, TAG_SYNC "
              "updates the unexpected counter; signalled operations complete on the SRQ's CQ", "DESCRIPTION",
              untestable="needs completions: left to the data-path section"),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),)),
    undefined=("TAG_DEL with a handle that TAG_ADD never returned or that was already deleted",),
)

ibv_post_srq_recv = Verb(
    name="ibv_post_srq_recv",
    man="ibv_post_srq_recv(3)",
    prototype="int ibv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, "
    "struct ibv_recv_wr **bad_wr);",
    returns=RETURNS_ERRNO,
    summary="post a list of receive WRs to an SRQ; stops at the first that fails, named in *bad_wr",
    params=(
        Param("srq", "struct ibv_srq *", default=Need("srq")),
        Param("wr", "struct ibv_recv_wr *", doc="a list linked by next; sg_list/num_sge describe the buffers"),
        Param("bad_wr", "struct ibv_recv_wr **", "out"),
    ),
    errors=(
        Error("EINVAL", "a WR has more SGEs than the SRQ allows (not on the page: the provider's answer)",
              untestable="left to the data-path section (post-refused: the failing WR and *bad_wr)"),
        Error("ENOMEM", "the SRQ is full (not on the page: the provider's answer)",
              untestable="left to the data-path section (post-refused: the failing WR and *bad_wr)"),
    ),
    contract=Contract(requires=(Resource("srq", role="srq"),)),
    undefined=("reusing a receive buffer before its completion was polled (NOTES)", "posting to a destroyed SRQ",
               "sg_list NULL with num_sge > 0"),
)

# --- XRC domains and opened QPs ------------------------------------------------------------------------------
_XRC_RECV_QP = {"qp_init_attr_ex": {
    "qp_type": "IBV_QPT_XRC_RECV", "comp_mask": "IBV_QP_INIT_ATTR_XRCD", "xrcd": Need("xrcd"),
    "cap": {"max_send_wr": 0, "max_recv_wr": 0, "max_send_sge": 0, "max_recv_sge": 0, "max_inline_data": 0}}}
_OPEN_MASK = "IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE | IBV_QP_OPEN_ATTR_CONTEXT"

ibv_open_xrcd = Verb(
    name="ibv_open_xrcd",
    man="ibv_open_xrcd(3)",
    prototype="struct ibv_xrcd *ibv_open_xrcd(struct ibv_context *context, "
    "struct ibv_xrcd_init_attr *xrcd_init_attr);",
    returns=RETURNS_POINTER,
    summary="open (or create) an XRC domain, private (fd -1) or shared through a file's inode; NULL on failure",
    params=(
        CONTEXT,
        Param("xrcd_init_attr", "struct ibv_xrcd_init_attr *",
              default={"comp_mask": "IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS", "fd": -1, "oflags": _O_CREAT},
              flags="ibv_xrcd_init_attr_mask",
              doc="comp_mask from ibv_xrcd_init_attr_mask (the page omits it; libibverbs needs FD and OFLAGS); "
                  "oflags (the page's oflag) takes O_CREAT and O_EXCL"),
    ),
    errors=(
        Error("EOPNOTSUPP", "the device has no XRC, or comp_mask has an undefined bit (not on the page: libibverbs)",
              covered_by=("private-xrcd", "reserved-comp-mask-refused")),
        Error("EINVAL", "comp_mask lacks FD or OFLAGS (libibverbs), or O_CREAT|O_EXCL for an inode that already has "
              "an XRCD (kernel); not on the page", covered_by=("comp-mask-needs-fd-and-oflags",)),
        Error("EBADF", "fd is not an open file (not on the page: the kernel's answer)", covered_by=("bad-fd-refused",)),
        Error("EAGAIN", "the inode has no XRCD yet and O_CREAT is not given (not on the page: the kernel's answer)",
              untestable="needs a file descriptor of a file the check creates, which catalogue values cannot "
              "express yet"),
    ),
    claims=(
        Claim("private-xrcd", "gated", "with fd -1 and O_CREAT a private XRC domain is created (where the device "
              "advertises XRC; elsewhere refused), and ibv_close_xrcd of it returns 0", "DESCRIPTION",
              variant="fd-minus-1-O_CREAT", errnos=("EOPNOTSUPP",),
              params={"gate": _XRC, "advertised": {"then": (Step("ibv_close_xrcd", {"xrcd": Ref("call")}),)}}),
        Claim("comp-mask-needs-fd-and-oflags", "refused", "fd and oflags are the domain's identity: a request that "
              "does not mark both valid is refused", "DESCRIPTION", needs=(_XRC,),
              over={("mask", "comp_mask"): (("FD-only", "IBV_XRCD_INIT_ATTR_FD"),
                                            ("OFLAGS-only", "IBV_XRCD_INIT_ATTR_OFLAGS"))},
              variant="comp_mask-{mask}", call={"xrcd_init_attr.comp_mask": Var("comp_mask")}, errnos=("EINVAL",),
              layer="libibverbs"),
        Claim("reserved-comp-mask-refused", "refused", "comp_mask bits outside ibv_xrcd_init_attr_mask are refused",
              "DESCRIPTION", needs=(_XRC,), over={"bit": (2, 31)}, variant="comp_mask-bit{bit}",
              call={"xrcd_init_attr.comp_mask": Flags(("IBV_XRCD_INIT_ATTR_FD", "IBV_XRCD_INIT_ATTR_OFLAGS"),
                                                      bits=(Var("bit"),))},
              errnos=("EOPNOTSUPP", "EINVAL"), layer="libibverbs"),
        Claim("bad-fd-refused", "refused", "fd must be an open file (or -1): a descriptor that is not open is "
              "refused", "DESCRIPTION", needs=(_XRC,), variant="fd-1000000", call={"xrcd_init_attr.fd": 1000000},
              errnos=("EBADF",), layer="kernel"),
        Claim("inode-shared", "untestable", "opening with the same file twice shares one XRC domain; O_CREAT|O_EXCL "
              "then fails, and without O_CREAT a file with no domain fails", "DESCRIPTION",
              untestable="needs file descriptors of files the check creates, which catalogue values cannot express "
              "yet"),
    ),
    contract=Contract(requires=(Resource("context", role="context"),), produces=(Resource("xrcd"),),
                      destroyed_by="ibv_close_xrcd", makes=True),
    tables={"not_supported": {"EOPNOTSUPP": "the provider does not implement XRC domains (libibverbs' default op)"}},
)

ibv_close_xrcd = Verb(
    name="ibv_close_xrcd",
    man="ibv_open_xrcd(3)",
    prototype="int ibv_close_xrcd(struct ibv_xrcd *xrcd);",
    returns=RETURNS_ERRNO,
    summary="close an XRC domain handle (the last close destroys the domain); EBUSY while objects use it",
    params=(Param("xrcd", "struct ibv_xrcd *", default=Need("xrcd")),),
    errors=(
        Error("EBUSY", "an XRC SRQ or an XRC receive QP still uses the domain (NOTES; the errno is the kernel's)",
              covered_by=("busy-with-srq", "busy-with-qp")),
    ),
    claims=(
        Claim("close-returns-zero", "succeeds", "closing an unused private XRC domain returns 0", "RETURN VALUE",
              needs=(_XRC,), variant="private-unused"),
        Claim("busy-with-srq", "refused", "closing a domain an XRC SRQ still uses fails with EBUSY, and the domain "
              "stays usable", "NOTES", needs=(_XRC, _SRQS), variant="XRC-srq-in-domain", errnos=("EBUSY",),
              steps=(Step("ibv_create_srq_ex", {"srq_init_attr_ex": _XRC_SRQ}),),
              params={"then": (Step("ibv_create_srq_ex", {"srq_init_attr_ex": _XRC_SRQ}),)},
              also=(Source("kernel", _USECOUNT),)),
        Claim("busy-with-qp", "refused", "closing a domain an XRC receive QP still uses fails with EBUSY, and the "
              "domain stays usable", "NOTES", needs=(_XRC,), variant="XRC_RECV-qp-in-domain", errnos=("EBUSY",),
              steps=(Step("ibv_create_qp_ex", _XRC_RECV_QP),),
              params={"then": (Step("ibv_create_qp_ex", _XRC_RECV_QP),)}, also=(Source("kernel", _USECOUNT),)),
    ),
    contract=Contract(requires=(Resource("xrcd", role="xrcd"),), destroys=(Resource("xrcd", role="xrcd"),)),
    undefined=("closing an XRC domain twice", "using an XRC domain after closing it"),
)

ibv_open_qp = Verb(
    name="ibv_open_qp",
    man="ibv_open_qp(3)",
    prototype="struct ibv_qp *ibv_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *qp_open_attr);",
    returns=RETURNS_POINTER,
    summary="open a handle to an existing shareable (XRC receive) QP by number through its XRC domain",
    params=(
        CONTEXT,
        Param("qp_open_attr", "struct ibv_qp_open_attr *",
              default={"comp_mask": _OPEN_MASK, "qp_num": 0, "xrcd": Need("xrcd"), "qp_context": 0x99,
                       "qp_type": "IBV_QPT_XRC_RECV"},
              flags="ibv_qp_open_attr_mask",
              doc="comp_mask from ibv_qp_open_attr_mask (libibverbs needs NUM, XRCD and TYPE); the page's struct "
                  "listing garbles the xrcd member"),
    ),
    errors=(
        Error("EINVAL", "no QP of that number and type exists in the domain (NOTES), or comp_mask lacks NUM, XRCD "
              "or TYPE (libibverbs)",
              covered_by=("missing-qp-refused", "wrong-type-refused", "comp-mask-needs-num-xrcd-type")),
        Error("EOPNOTSUPP", "the device has no XRC (libibverbs' default op; not on the page)",
              untestable="the not-implemented answer: every claim needs an XRC domain, so on such a device each is "
              "reported unsupported naming IBV_DEVICE_XRC"),
    ),
    claims=(
        Claim("opens-existing", "gated", "an XRC receive QP is opened by number through its domain: the handle has "
              "that number, type and the qp_context given", "DESCRIPTION, RETURN VALUE", variant="XRC_RECV-by-number",
              steps=(Step("ibv_create_qp_ex", _XRC_RECV_QP, name="tgt"),),
              call={"qp_open_attr.qp_num": Ref("tgt", "qp_num")},
              params={"gate": _XRC, "only": "advertised", "advertised": {"expect": (
                  Expect("ret.qp_num", "==", Ref("tgt", "ret.qp_num")), Expect("ret.qp_type", "==", "IBV_QPT_XRC_RECV"),
                  Expect("ret.qp_context", "==", 0x99))}}),
        Claim("missing-qp-refused", "refused", "a number with no QP in the domain fails", "NOTES", needs=(_XRC,),
              variant="qp_num-0x123456-in-empty-domain", call={"qp_open_attr.qp_num": 0x123456}, errnos=("EINVAL",),
              layer="kernel"),
        Claim("wrong-type-refused", "refused", "an existing QP asked for with another type fails", "NOTES",
              needs=(_XRC,), variant="XRC_RECV-asked-as-RC",
              steps=(Step("ibv_create_qp_ex", _XRC_RECV_QP, name="tgt"),),
              call={"qp_open_attr": {"qp_num": Ref("tgt", "qp_num"), "qp_type": "IBV_QPT_RC"}}, errnos=("EINVAL",),
              layer="kernel"),
        Claim("comp-mask-needs-num-xrcd-type", "refused", "a request that does not mark qp_num, xrcd and qp_type valid "
              "cannot name a QP and is refused", "DESCRIPTION", needs=(_XRC,),
              over={("without", "comp_mask"): (
                  ("TYPE", "IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD"),
                  ("NUM", "IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE"))},
              variant="without-{without}", steps=(Step("ibv_create_qp_ex", _XRC_RECV_QP, name="tgt"),),
              call={"qp_open_attr": {"qp_num": Ref("tgt", "qp_num"), "comp_mask": Var("comp_mask")}},
              errnos=("EINVAL",), layer="libibverbs"),
        Claim("destroy-drops-one-reference", "gated", "ibv_destroy_qp of an opened handle returns 0 and leaves the QP "
              "itself alive (its creator can still query it)", "DESCRIPTION", variant="close-opened-handle",
              steps=(Step("ibv_create_qp_ex", _XRC_RECV_QP, name="tgt"),),
              call={"qp_open_attr.qp_num": Ref("tgt", "qp_num")},
              params={"gate": _XRC, "only": "advertised", "advertised": {"then": (
                  Step("ibv_destroy_qp", {"qp": Ref("call")}),
                  Step("ibv_query_qp", {"qp": Ref("tgt")}))}}),
    ),
    contract=Contract(requires=(Resource("context", role="context"), Resource("xrcd", role="qp_open_attr.xrcd")),
                      produces=(Resource("qp"),), destroyed_by="ibv_destroy_qp"),
    tables={"not_supported": {"EOPNOTSUPP": "the provider does not implement ibv_open_qp (libibverbs' default op)"}},
    undefined=("a NULL or closed xrcd with IBV_QP_OPEN_ATTR_XRCD set", "posting on an opened XRC receive handle"),
)

# --- QP extras: data ordering, pacing, ECE -----------------------------------------------------------------
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
        Claim("answers-zero-or-one", "relation", "the answer is 1 or 0, for any QP and each of the three operation "
              "kinds the page defines it for", "RETURN VALUE",
              over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"), "state": ("RESET", "INIT"),
                    ("kind", "op"): (("RDMA_READ", "IBV_WR_RDMA_READ"), ("RDMA_WRITE", "IBV_WR_RDMA_WRITE"),
                                     ("SEND", "IBV_WR_SEND"))},
              variant="{qp_type}-in-{state}-{kind}",
              steps=(Step("ibv_query_qp_data_in_order", {
                  "qp": Need("qp", state="{state}", spec={"qp_type": Var("qp_type")}), "op": Var("op")},
                  name="r", expect="any"),),
              params={"relations": (("r:ret", ">=", 0), ("r:ret", "<=", 1))}),
        Claim("reader-sees-whole-wqe", "untestable", "when 1, a CPU reader that sees the last byte of one WQE's data "
              "has seen all of it", "NOTES", untestable="needs RDMA writes and a polling reader: left to the "
              "data-path section"),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"vars": {"qp_type": "IBV_QPT_RC"}, "needs": {"qp_type": _QP_TYPE_NEEDS}},
    undefined=("flags other than 0", "op values other than RDMA_READ, RDMA_WRITE and SEND",
               "using the answer to order different WQEs"),
)

ibv_modify_qp_rate_limit = Verb(
    name="ibv_modify_qp_rate_limit",
    man="ibv_modify_qp_rate_limit(3)",
    prototype="int ibv_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr);",
    returns=RETURNS_ERRNO,
    summary="set a QP's packet pacing: a maximum send rate in kbps (0: unlimited), burst and typical packet sizes",
    params=(
        Param("qp", "struct ibv_qp *", default=Need("qp", spec={"qp_type": Var("qp_type")})),
        Param("attr", "struct ibv_qp_rate_limit_attr *",
              default={"rate_limit": Dev("attr_ex.packet_pacing_caps.qp_rate_limit_min")},
              doc="rate_limit kbps, max_burst_sz and typical_pkt_sz bytes (0: the device's default); comp_mask, "
                  "which the page omits, must be 0"),
    ),
    errors=(
        Error("EINVAL", "invalid arguments", covered_by=("rate-above-maximum-refused", "burst-without-rate-refused")),
        Error("EOPNOTSUPP", "the device does not implement packet pacing",
              covered_by=("refused-without-pacing",)),
        Error("ENOSYS", "the same, from old libibverbs", covered_by=("refused-without-pacing",)),
    ),
    claims=(
        Claim("refused-without-pacing", "gated", "a device that advertises no packet pacing refuses the call as not "
              "implemented", "ERRORS", variant="RC-rate-1000kbps", errnos=("EOPNOTSUPP", "ENOSYS"),
              call={"attr.rate_limit": 1000}, params={"gate": _PACING, "only": "not-advertised"}),
        Claim("rate-in-range", "gated", "a rate inside the advertised range, or 0 (no limit), is accepted on a QP in "
              "RTS; zero burst and packet sizes take the device's defaults", "DESCRIPTION",
              over={("rate", "value"): (("min", Dev("attr_ex.packet_pacing_caps.qp_rate_limit_min")),
                                        ("max", Dev("attr_ex.packet_pacing_caps.qp_rate_limit_max")),
                                        ("unlimited", 0))},
              variant="RAW_PACKET-in-RTS-rate-{rate}",
              call={"qp": Need("qp", state="RTS", spec={"qp_type": "IBV_QPT_RAW_PACKET"}),
                    "attr": {"rate_limit": Var("value"), "max_burst_sz": 0, "typical_pkt_sz": 0}},
              needs=_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"], params={"gate": _PACING, "only": "advertised"}),
        Claim("rate-above-maximum-refused", "refused", "a rate above the advertised maximum is an invalid argument",
              "ERRORS", variant="RAW_PACKET-in-RTS-rate-max+1", errnos=("EINVAL",),
              needs=(_PACING, *_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"]),
              call={"qp": Need("qp", state="RTS", spec={"qp_type": "IBV_QPT_RAW_PACKET"}),
                    "attr.rate_limit": Dev("attr_ex.packet_pacing_caps.qp_rate_limit_max", plus=1)}),
        Claim("burst-without-rate-refused", "refused", "burst and packet sizes shape a rate: given without one "
              "(rate 0) they are invalid arguments", "DESCRIPTION, ERRORS", variant="RAW_PACKET-rate-0-burst-1000",
              errnos=("EINVAL",), needs=(_PACING, *_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"]),
              call={"qp": Need("qp", state="RTS", spec={"qp_type": "IBV_QPT_RAW_PACKET"}),
                    "attr": {"rate_limit": 0, "max_burst_sz": 1000}}),
        Claim("rate-enforced", "untestable", "while work is queued the QP sends no faster than rate_limit",
              "DESCRIPTION", untestable="needs timed traffic: left to the data-path section"),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"vars": {"qp_type": "IBV_QPT_RC"}, "needs": {"qp_type": _QP_TYPE_NEEDS}},
    undefined=("a QP in a state other than RTS (the page does not say)",),
)

_ECE_NOT_SUPPORTED = {"EOPNOTSUPP": "libibverbs or the provider does not support ECE (the page's meaning of "
                                    "EOPNOTSUPP)"}
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
        Param("ece", "struct ibv_ece *", "inout",
              default={"vendor_id": 0, "options": 0, "comp_mask": 0},
              doc="vendor_id (IEEE OUI), options (vendor specific), comp_mask; the accepted options are written "
                  "back"),
    ),
    errors=(
        Error("EOPNOTSUPP", "libibverbs or the provider does not support ECE", covered_by=("vendor-zero-refused",)),
        Error("EINVAL", "the ECE options are invalid", covered_by=("vendor-zero-refused", "unknown-comp-mask-refused")),
        Error("EINVAL", "the QP is invalid",
              untestable="an invalid QP is a stale or forged pointer: passing one is undefined behaviour"),
    ),
    claims=(
        Claim("vendor-zero-refused", "refused", "a vendor_id of 0 names no vendor: the request is refused (libibverbs "
              "answers before the provider)", "RETURN VALUE", variant="vendor_id-0", layer="libibverbs",
              errnos=("EOPNOTSUPP", "EINVAL")),
        Claim("own-options-accepted", "succeeds", "on a fresh RC QP, setting back the vendor and options "
              "ibv_query_ece reports is accepted", "DESCRIPTION", variant="RC-in-RESET-query-then-set",
              steps=(_QUERY_ECE_FIRST,), call={"ece": _AS_QUERIED}),
        Claim("unknown-comp-mask-refused", "refused", "comp_mask says which fields are valid and no bit is defined: "
              "a set bit makes the options invalid", "RETURN VALUE", variant="comp_mask-bit0",
              steps=(_QUERY_ECE_FIRST,), call={"ece": {**_AS_QUERIED, "comp_mask": 1}}, errnos=("EINVAL",)),
        Claim("used-while-configured", "untestable", "the options set take part in the later modify stages of the QP",
              "DESCRIPTION", untestable="observable only through a peer negotiating ECE over rdma_cm"),
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
        Error("EOPNOTSUPP", "libibverbs or the provider does not support ECE (the page repeats ibv_set_ece's text)",
              untestable="the not-implemented answer: where it comes, the claims are reported unsupported "
              "(tables['not_supported'])"),
        Error("EINVAL", "the QP or the ECE options are invalid",
              untestable="nothing a query is given can be invalid short of a forged pointer (undefined behaviour)"),
    ),
    claims=(
        Claim("reports-vendor", "succeeds", "a supporting provider reports its vendor id (an IEEE OUI, nonzero) and "
              "no comp_mask bit", "DESCRIPTION", variant="RC-in-RESET",
              expect=(Expect("ece.vendor_id", "nonzero"), Expect("ece.comp_mask", "==", 0))),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
    tables={"not_supported": _ECE_NOT_SUPPORTED},
)

# --- address handles ---------------------------------------------------------------------------------------------
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
        Error("EINVAL", "the port requires a GRH and is_global is 0 (NOTES), or the port does not exist (not on the "
              "page: the kernel's answer)", covered_by=("grh-required", "port-beyond-last-refused")),
        Error("EOPNOTSUPP", "the provider has no address handles (libibverbs' default op; not on the page)",
              covered_by=("iwarp-has-none",)),
        Error("ENOMEM", "the AH cannot be allocated (not on the page)",
              untestable="cannot exhaust kernel or device memory safely on a shared lab VM"),
    ),
    claims=(
        Claim("creates-ah", "succeeds", "a valid address vector (this port, a GRH from the port's own GID, the maximum "
              "static rate) yields an AH, and ibv_destroy_ah of it returns 0", "DESCRIPTION, NOTES",
              variant="loopback-with-grh-static_rate-MAX", transports=IB_TRANSPORTS,
              params={"then": (Step("ibv_destroy_ah", {"ah": Ref("call")}),)}),
        Claim("grh-required", "refused", "where the port sets IBV_QPF_GRH_REQUIRED, an AH without a GRH is refused",
              "NOTES", variant="is_global-0", transports=IB_TRANSPORTS, needs=(_GRH_REQUIRED,), errnos=("EINVAL",),
              call={"attr.is_global": 0}, layer="kernel"),
        Claim("port-beyond-last-refused", "refused", "port_num names a physical port: one beyond the last is refused",
              "DESCRIPTION", variant="port_num-phys_port_cnt+1", transports=IB_TRANSPORTS, errnos=("EINVAL",),
              call={"attr.port_num": Dev("attr.phys_port_cnt", plus=1)}, layer="kernel"),
        Claim("iwarp-has-none", "refused", "an iWARP device has no datagram service and so no address handles: "
              "creating one is refused", "DESCRIPTION", variant="iwarp", transports=("iwarp",),
              errnos=("EOPNOTSUPP", "EINVAL"), also=(_IWARP_NO_DATAGRAMS,)),
        Claim("addresses-ud-sends", "untestable", "a UD send through the AH reaches the port it addresses",
              "DESCRIPTION", untestable="needs traffic: left to the data-path section"),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("ah"),), destroyed_by="ibv_destroy_ah",
                      makes=True),
    tables={"not_supported": {"EOPNOTSUPP": "the provider has no address handles (libibverbs' default op)"}},
    undefined=("is_global 1 with an all-zero dgid",),
)

ibv_destroy_ah = Verb(
    name="ibv_destroy_ah",
    man="ibv_create_ah(3)",
    prototype="int ibv_destroy_ah(struct ibv_ah *ah);",
    returns=RETURNS_ERRNO,
    summary="destroy an address handle; 0 or an errno (NOTES)",
    params=(Param("ah", "struct ibv_ah *", default=Need("ah")),),
    claims=(
        Claim("destroy-returns-zero", "succeeds", "destroying an unused AH returns 0, and the AH no longer holds its "
              "PD", "NOTES", variant="unused", transports=IB_TRANSPORTS,
              params={"then": (Step("ibv_dealloc_pd", {"pd": Need("pd")}),)}),
    ),
    contract=Contract(requires=(Resource("ah", role="ah"),), destroys=(Resource("ah", role="ah"),)),
    undefined=("destroying an AH that a posted, not yet completed WR uses", "destroying an AH twice",
               "using an AH after destroying it"),
)


def _be32(value: int) -> int:
    """A __be32 field's value as a little-endian host stores it (the lab's hosts are x86)."""
    return int.from_bytes(value.to_bytes(4, "big"), "little")


_PEER_GID = bytes.fromhex("fe800000000000000002c9fffe123456")  # a sender's GID, as a received GRH carries it
_MGID = bytes.fromhex("ff0e" + "00" * 12 + "1234")  # a multicast GID (ff0e::1234)
_IPV6_GRH = {"version_tclass_flow": _be32((6 << 28) | (5 << 20) | 0x12345), "hop_limit": 9, "sgid": _PEER_GID,
             "dgid": Dev("gid")}
_WITH_GRH = {"wc_flags": "IBV_WC_GRH", "slid": 0x12, "sl": 3, "dlid_path_bits": 1}
# Every field given: a struct argument given in part is merged into the parameter's default.
_ZERO_GRH = {"version_tclass_flow": 0, "paylen": 0, "next_hdr": 0, "hop_limit": 0, "sgid": bytes(16), "dgid": bytes(16)}
_ROCE_V2, _IB_NEXT_HDR, _UDP = ("roce",), 0x1B, 17  # next_hdr: 0x1b for IB and RoCE v1, UDP for RoCE v2

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
        Param("wc", "struct ibv_wc *", default={"wc_flags": 0, "slid": 0x12, "sl": 3, "dlid_path_bits": 1},
              doc="a UD receive's completion (slid, sl, dlid_path_bits, wc_flags)"),
        Param("grh", "struct ibv_grh *", default={}, doc="the 40 bytes at the start of the receive buffer"),
        Param("ah_attr", "struct ibv_ah_attr *", "out"),
    ),
    errors=(
        Error("EINVAL", "the GRH's destination is a multicast GID (not on the page: libibverbs)",
              covered_by=("multicast-destination-refused",)),
        Error("EPROTONOSUPPORT", "the GRH area holds neither an IPv6/IB nor a RoCE v2 IPv4 header (not on the page: "
              "libibverbs)", covered_by=("unknown-header-refused",)),
    ),
    claims=(
        Claim("without-grh", "succeeds", "without IBV_WC_GRH the result is a local address vector built from the "
              "completion: no GRH, the sender's LID, SL and path bits, this port", "DESCRIPTION",
              variant="wc-slid-0x12-sl-3", transports=IB_TRANSPORTS, layer="libibverbs",
              expect=(Expect("ah_attr.is_global", "==", 0), Expect("ah_attr.dlid", "==", 0x12),
                      Expect("ah_attr.sl", "==", 3), Expect("ah_attr.src_path_bits", "==", 1),
                      Expect("ah_attr.port_num", "==", Dev("port_num")))),
        Claim("grh-answers-sender-roce-v2", "succeeds", "with a GRH the result is global and points back at the "
              "sender's GID, with the GRH's hop limit, traffic class and flow label (a RoCE v2 GRH naming this "
              "port's GID as destination)", "DESCRIPTION", variant="ipv6-udp-to-own-gid", transports=_ROCE_V2,
              layer="libibverbs", call={"wc": _WITH_GRH, "grh": {**_IPV6_GRH, "next_hdr": _UDP}},
              expect=(Expect("ah_attr.is_global", "==", 1), Expect("ah_attr.grh.dgid", "==", _PEER_GID),
                      Expect("ah_attr.grh.hop_limit", "==", 9), Expect("ah_attr.grh.traffic_class", "==", 5),
                      Expect("ah_attr.grh.flow_label", "==", 0x12345), Expect("ah_attr.dlid", "==", 0x12))),
        Claim("grh-answers-sender-ib", "succeeds", "the same for an InfiniBand GRH (next header 0x1b)",
              "DESCRIPTION", variant="ib-grh-to-own-gid", transports=("ib",), layer="libibverbs",
              call={"wc": _WITH_GRH, "grh": {**_IPV6_GRH, "next_hdr": _IB_NEXT_HDR}},
              expect=(Expect("ah_attr.is_global", "==", 1), Expect("ah_attr.grh.dgid", "==", _PEER_GID),
                      Expect("ah_attr.grh.hop_limit", "==", 9), Expect("ah_attr.grh.traffic_class", "==", 5),
                      Expect("ah_attr.grh.flow_label", "==", 0x12345))),
        Claim("multicast-destination-refused", "refused", "a GRH whose destination is a multicast GID names no local "
              "GID to answer from: the call fails", "DESCRIPTION", variant="dgid-ff0e::1234",
              transports=IB_TRANSPORTS, layer="libibverbs", errnos=("EINVAL",),
              call={"wc": _WITH_GRH, "grh": {**_IPV6_GRH, "next_hdr": _IB_NEXT_HDR, "dgid": _MGID}}),
        Claim("unknown-header-refused", "refused", "a GRH area that holds no header the library knows makes the call "
              "fail", "DESCRIPTION", transports=IB_TRANSPORTS, layer="libibverbs", errnos=("EPROTONOSUPPORT",),
              over={("header", "grh"): (("all-zero", _ZERO_GRH),
                                        ("ipv6-next-header-tcp", {**_IPV6_GRH, "next_hdr": 6}))},
              variant="{header}", call={"wc": _WITH_GRH, "grh": Var("grh")}),
        Claim("answers-real-receive", "untestable", "an address vector made from a real UD receive reaches its "
              "sender", "NOTES", untestable="needs traffic: left to the data-path section"),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
    undefined=("grh pointing at fewer than 40 readable bytes", "a wc that is not a UD receive's completion"),
)

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
        Error("EINVAL", "ibv_init_ah_from_wc fails on a multicast destination, or ibv_create_ah refuses the result "
              "(not on the page)", covered_by=("fails-when-init-fails",)),
        Error("EPROTONOSUPPORT", "the GRH area holds no known header (not on the page: libibverbs)",
              covered_by=("fails-when-init-fails",)),
    ),
    claims=(
        Claim("creates-from-grh", "succeeds", "a receive's completion and GRH (RoCE v2, to this port's GID) yield an "
              "AH", "DESCRIPTION", variant="ipv6-udp-to-own-gid", transports=_ROCE_V2),
        Claim("fails-when-init-fails", "refused", "when the address vector cannot be derived no AH is created",
              "DESCRIPTION", transports=IB_TRANSPORTS, layer="libibverbs",
              over={("header", "grh", "errno"): (
                  ("dgid-ff0e::1234", {**_IPV6_GRH, "next_hdr": _IB_NEXT_HDR, "dgid": _MGID}, "EINVAL"),
                  ("all-zero", _ZERO_GRH, "EPROTONOSUPPORT"))},
              variant="{header}", call={"grh": Var("grh")}, errnos=("{errno}",)),
        Claim("answers-real-receive", "untestable", "the AH made from a real UD receive reaches its sender",
              "DESCRIPTION", untestable="needs traffic: left to the data-path section"),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("ah"),), destroyed_by="ibv_destroy_ah"),
    undefined=("destroying the AH while WRs that use it are outstanding",),
)

# --- work queues (receive WQs for RSS) ------------------------------------------------------------------------
_WQ_CAP = "attr_ex.raw_packet_caps&{cap}"
_WQ_FLAGS = (("CVLAN_STRIPPING", "IBV_RAW_PACKET_CAP_CVLAN_STRIPPING"),
             ("SCATTER_FCS", "IBV_RAW_PACKET_CAP_SCATTER_FCS"), ("DELAY_DROP", "IBV_RAW_PACKET_CAP_DELAY_DROP"))
_TO_RDY = Step("ibv_modify_wq", {"wq": Need("wq")})

ibv_create_wq = Verb(
    name="ibv_create_wq",
    man="ibv_create_wq(3)",
    prototype="struct ibv_wq *ibv_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr);",
    returns=RETURNS_POINTER,
    summary="create a work queue (a receive queue for RSS); max_wr and max_sge are written back; NULL on failure",
    params=(
        CONTEXT,
        Param("wq_init_attr", "struct ibv_wq_init_attr *", "inout",
              default={"wq_context": 0x42, "wq_type": "IBV_WQT_RQ", "max_wr": 16, "max_sge": 1, "pd": Need("pd"),
                       "cq": Need("cq"), "comp_mask": 0, "create_flags": 0},
              flags="ibv_wq_init_attr_mask",
              doc="comp_mask from ibv_wq_init_attr_mask, create_flags from ibv_wq_flags, wq_type from ibv_wq_type"),
    ),
    errors=(
        Error("EOPNOTSUPP", "the provider has no WQs (libibverbs' default op), or create_flags has an undefined bit "
              "(not on the page)", covered_by=("creates-wq", "reserved-create-flags-refused")),
        Error("EINVAL", "comp_mask has an undefined bit (not on the page: libibverbs' command layer)",
              covered_by=("reserved-comp-mask-refused",)),
    ),
    claims=(
        Claim("creates-wq", "gated", "a receive WQ is created where the device advertises WQs (refused elsewhere), "
              "with sizes at least the request and the wq_context and type given", "DESCRIPTION", variant="RQ-16x1",
              errnos=("EOPNOTSUPP",),
              params={"gate": _WQS, "advertised": {"expect": (
                  Expect("wq_init_attr.max_wr", ">=", 16), Expect("wq_init_attr.max_sge", ">=", 1),
                  Expect("ret.wq_context", "==", 0x42), Expect("ret.wq_type", "==", "IBV_WQT_RQ"))}}),
        Claim("reserved-create-flags-refused", "refused", "create_flags bits outside ibv_wq_flags are refused",
              "DESCRIPTION", needs=(_WQS,), over={"bit": (4, 16, 31)}, variant="create_flags-bit{bit}",
              call={"wq_init_attr": {"comp_mask": "IBV_WQ_INIT_ATTR_FLAGS", "create_flags": Flags(bits=(Var("bit"),))}},
              errnos=("EOPNOTSUPP", "EINVAL"), layer="libibverbs"),
        Claim("reserved-comp-mask-refused", "refused", "comp_mask bits outside ibv_wq_init_attr_mask are refused",
              "DESCRIPTION", needs=(_WQS,), over={"bit": (1, 31)}, variant="comp_mask-bit{bit}",
              call={"wq_init_attr.comp_mask": Flags(bits=(Var("bit"),))}, errnos=("EINVAL", "EOPNOTSUPP"),
              layer="libibverbs"),
        Claim("flags-gated", "gated", "a creation flag works only where the device advertises the matching raw "
              "packet capability", "DESCRIPTION", needs=(_WQS,), over={("flag", "cap"): _WQ_FLAGS},
              variant="{flag}", errnos=("EOPNOTSUPP", "EINVAL"),
              call={"wq_init_attr": {"comp_mask": "IBV_WQ_INIT_ATTR_FLAGS", "create_flags": "IBV_WQ_FLAGS_{flag}"}},
              params={"gate": Cap(_WQ_CAP)}),
        Claim("receives-steered-traffic", "untestable", "receives posted on the WQ are consumed by traffic steered to "
              "it", "DESCRIPTION", untestable="needs traffic: left to the data-path section"),
    ),
    contract=Contract(requires=(Resource("context", role="context"), Resource("pd", role="wq_init_attr.pd"),
                                Resource("cq", role="wq_init_attr.cq")),
                      produces=(Resource("wq", state="RESET"),), destroyed_by="ibv_destroy_wq", makes=True),
    tables={"not_supported": {"EOPNOTSUPP": "the provider has no work queues (libibverbs' default op)"}},
    undefined=("a NULL pd or cq",),
)

ibv_destroy_wq = Verb(
    name="ibv_destroy_wq",
    man="ibv_create_wq(3)",
    prototype="int ibv_destroy_wq(struct ibv_wq *wq);",
    returns=RETURNS_ERRNO,
    summary="destroy a WQ; 0 or an errno",
    params=(Param("wq", "struct ibv_wq *", default=Need("wq")),),
    claims=(
        Claim("destroy-returns-zero", "succeeds", "destroying an unused WQ returns 0, and the WQ no longer holds its "
              "CQ", "RETURN VALUE", needs=(_WQS,), variant="unused",
              params={"then": (Step("ibv_destroy_cq", {"cq": Need("cq")}),)}),
        Claim("busy-in-table", "refused", "destroying a WQ that an indirection table still holds fails with EBUSY, "
              "and the WQ stays usable (it still moves to RDY)", "RETURN VALUE", needs=(_WQS, _RSS),
              variant="WQ-in-1-entry-table", errnos=("EBUSY",), steps=(Step("ibv_create_rwq_ind_table"),),
              params={"then": (_TO_RDY,)}, also=(Source("kernel", _USECOUNT),)),
    ),
    errors=(
        Error("EBUSY", "an indirection table still holds the WQ (not on the page: the kernel's use count)",
              covered_by=("busy-in-table",)),
    ),
    contract=Contract(requires=(Resource("wq", role="wq"),), destroys=(Resource("wq", role="wq"),)),
    undefined=("destroying a WQ twice", "using a WQ after destroying it"),
)

ibv_modify_wq = Verb(
    name="ibv_modify_wq",
    man="ibv_modify_wq(3)",
    prototype="int ibv_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);",
    returns=RETURNS_ERRNO,
    summary="change a WQ's state (RESET, RDY, ERR) or flags, as wq_attr->attr_mask says",
    params=(
        Param("wq", "struct ibv_wq *", default=Need("wq")),
        Param("wq_attr", "struct ibv_wq_attr *", default={"attr_mask": "IBV_WQ_ATTR_STATE", "wq_state": "IBV_WQS_RDY"},
              flags="ibv_wq_attr_mask",
              doc="attr_mask from ibv_wq_attr_mask; wq_state/curr_wq_state from ibv_wq_state; flags from ibv_wq_flags"),
    ),
    errors=(
        Error("EINVAL", "attr_mask has an undefined bit (libibverbs), or the current state given is not the WQ's "
              "(not on the page)", covered_by=("reserved-attr-mask-refused", "wrong-current-state-refused")),
        Error("EOPNOTSUPP", "flags_mask has an undefined bit (not on the page: libibverbs)",
              covered_by=("reserved-flags-refused",)),
    ),
    claims=(
        Claim("reset-to-rdy", "succeeds", "a new WQ (in RESET) moves to RDY with IBV_WQ_ATTR_STATE (the state the "
              "WQ object then holds: there is no query verb)", "DESCRIPTION", needs=(_WQS,), variant="RESET>RDY",
              expect=(Expect("wq.state", "==", "IBV_WQS_RDY"),)),
        Claim("rdy-to-err", "succeeds", "a WQ in RDY moves to ERR", "DESCRIPTION", needs=(_WQS,), variant="RDY>ERR",
              steps=(_TO_RDY,), call={"wq_attr.wq_state": "IBV_WQS_ERR"},
              expect=(Expect("wq.state", "==", "IBV_WQS_ERR"),)),
        Claim("rdy-to-reset", "succeeds", "a WQ in RDY moves back to RESET", "DESCRIPTION", needs=(_WQS,),
              variant="RDY>RESET", steps=(_TO_RDY,), call={"wq_attr.wq_state": "IBV_WQS_RESET"},
              expect=(Expect("wq.state", "==", "IBV_WQS_RESET"),)),
        Claim("err-to-reset", "succeeds", "a WQ in ERR moves back to RESET", "DESCRIPTION", needs=(_WQS,),
              variant="ERR>RESET", steps=(_TO_RDY, Step("ibv_modify_wq", {"wq_attr.wq_state": "IBV_WQS_ERR"})),
              call={"wq_attr.wq_state": "IBV_WQS_RESET"}, expect=(Expect("wq.state", "==", "IBV_WQS_RESET"),)),
        Claim("wrong-current-state-refused", "refused", "curr_wq_state asserts the current state: a wrong one makes "
              "the call fail", "DESCRIPTION", needs=(_WQS,), variant="RESET-claimed-RDY", errnos=("EINVAL",),
              call={"wq_attr": {"attr_mask": "IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE", "wq_state": "IBV_WQS_RDY",
                                "curr_wq_state": "IBV_WQS_RDY"}}),
        Claim("reserved-attr-mask-refused", "refused", "attr_mask bits outside ibv_wq_attr_mask are refused",
              "DESCRIPTION", needs=(_WQS,), over={"bit": (3, 31)}, variant="attr_mask-bit{bit}",
              call={"wq_attr.attr_mask": Flags(("IBV_WQ_ATTR_STATE",), bits=(Var("bit"),))}, errnos=("EINVAL",),
              layer="libibverbs"),
        Claim("reserved-flags-refused", "refused", "flags_mask bits outside ibv_wq_flags are refused", "DESCRIPTION",
              needs=(_WQS,), over={"bit": (4, 31)}, variant="flags_mask-bit{bit}",
              call={"wq_attr": {"attr_mask": "IBV_WQ_ATTR_FLAGS", "flags_mask": Flags(bits=(Var("bit"),)),
                                "flags": Flags(bits=(Var("bit"),))}},
              errnos=("EOPNOTSUPP", "EINVAL"), layer="libibverbs"),
        Claim("flags-gated", "gated", "changing a flag works only where the device advertises the matching raw "
              "packet capability", "DESCRIPTION", needs=(_WQS,), over={("flag", "cap"): _WQ_FLAGS[:2]},
              variant="{flag}", errnos=("EOPNOTSUPP", "EINVAL"),
              call={"wq_attr": {"attr_mask": "IBV_WQ_ATTR_FLAGS", "flags_mask": "IBV_WQ_FLAGS_{flag}",
                                "flags": "IBV_WQ_FLAGS_{flag}"}},
              params={"gate": Cap(_WQ_CAP)}),
        Claim("err-flushes", "untestable", "moving a WQ with posted receives to ERR flushes them", "DESCRIPTION",
              untestable="needs completions: left to the data-path section"),
    ),
    contract=Contract(requires=(Resource("wq", role="wq"),),
                      moves=(Transition("wq", "RESET", "RDY"), Transition("wq", "any", "ERR"),
                             Transition("wq", "any", "RESET"))),
    undefined=("a wq_state of IBV_WQS_UNKNOWN or outside enum ibv_wq_state",),
)

# --- receive WQ indirection tables (RSS) ---------------------------------------------------------------------
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
        Param("init_attr", "struct ibv_rwq_ind_table_init_attr *",
              default={"log_ind_tbl_size": 0, "ind_tbl": Array((Need("wq"),)), "comp_mask": 0},
              flags="ibv_ind_table_init_attr_mask",
              doc="ind_tbl points at 1 << log_ind_tbl_size WQ pointers; comp_mask from ibv_ind_table_init_attr_mask"),
    ),
    errors=(
        Error("EOPNOTSUPP", "the provider has no indirection tables (libibverbs' default op; not on the page)",
              covered_by=("refused-without-wqs",)),
        Error("EINVAL", "comp_mask is not 0 (libibverbs' command layer), or the table is larger than the device "
              "allows (kernel); not on the page", covered_by=("reserved-comp-mask-refused",)),
    ),
    claims=(
        Claim("creates-table", "gated", "a table of 2^n WQs is created where the device advertises indirection "
              "tables", "DESCRIPTION", needs=(_WQS,),
              over={("entries", "table"): (("1-WQ", {}), ("4-WQs", _WQ_TABLE))}, variant="{entries}",
              call={"init_attr": Var("table")}, params={"gate": _RSS, "only": "advertised"}),
        Claim("repeated-entries", "gated", "one WQ may fill several entries of a table", "DESCRIPTION",
              needs=(_WQS,), variant="one-WQ-twice",
              call={"init_attr": {"log_ind_tbl_size": 1, "ind_tbl": Array((Need("wq"), Need("wq")))}},
              params={"gate": _RSS, "only": "advertised"}),
        Claim("reserved-comp-mask-refused", "refused", "comp_mask bits outside ibv_ind_table_init_attr_mask (none is "
              "defined) are refused", "DESCRIPTION", needs=(_WQS, _RSS), over={"bit": (0, 31)},
              variant="comp_mask-bit{bit}", call={"init_attr.comp_mask": Flags(bits=(Var("bit"),))},
              errnos=("EINVAL", "EOPNOTSUPP"), layer="libibverbs"),
        Claim("refused-without-wqs", "gated", "a device with no WQs (max_wq_type_rq 0) has no indirection tables: "
              "the call is refused", "DESCRIPTION", variant="no-WQs-NULL-table",
              needs=(Cap("attr_ex.max_wq_type_rq", "zero"),), call={"init_attr.ind_tbl": None},
              errnos=("EOPNOTSUPP",), params={"gate": _RSS, "only": "not-advertised"}),
        Claim("serves-rss-qp", "untestable", "the table is given to ibv_create_qp_ex to spread incoming packets "
              "over its WQs", "NOTES", untestable="creating the QP is ibv_create_qp_ex's rss-qp claim; spreading "
              "packets needs traffic: left to the data-path section"),
    ),
    contract=Contract(requires=(Resource("context", role="context"), Resource("wq", role="init_attr.ind_tbl")),
                      produces=(Resource("rwq_ind_table"),), destroyed_by="ibv_destroy_rwq_ind_table", makes=True),
    tables={"not_supported": {"EOPNOTSUPP": "the provider has no indirection tables (libibverbs' default op)"}},
    undefined=("ind_tbl holding fewer than 1 << log_ind_tbl_size valid WQ pointers (libibverbs reads every slot)",
               "a table larger than rss_caps.max_rwq_indirection_table_size: its size is a device fact, and a "
               "table of that many entries is not a value the catalogue can write"),
)

ibv_destroy_rwq_ind_table = Verb(
    name="ibv_destroy_rwq_ind_table",
    man="ibv_create_rwq_ind_table(3)",
    prototype="int ibv_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);",
    returns=RETURNS_ERRNO,
    summary="destroy an indirection table; 0 or an errno",
    params=(Param("rwq_ind_table", "struct ibv_rwq_ind_table *", default=Need("rwq_ind_table")),),
    errors=(
        Error("EBUSY", "an RSS QP still uses the table (not on the page: the kernel's use count)",
              covered_by=("busy-with-qp",)),
    ),
    claims=(
        Claim("destroy-returns-zero", "succeeds", "destroying an unused table returns 0, after which its WQ can be "
              "destroyed", "RETURN VALUE", needs=(_WQS, _RSS), variant="1-WQ-table",
              params={"then": (Step("ibv_destroy_wq", {"wq": Need("wq")}),)}),
        Claim("busy-with-qp", "refused", "destroying a table an RSS QP still uses fails with EBUSY, and the table "
              "stays usable (another RSS QP can be created on it)", "RETURN VALUE",
              needs=(*_QP_TYPE_NEEDS["IBV_QPT_RAW_PACKET"], _WQS, _RSS), variant="table-under-RSS-QP",
              errnos=("EBUSY",), steps=(Step("ibv_create_qp_ex", {"qp_init_attr_ex": _RSS_QP}),),
              params={"then": (Step("ibv_create_qp_ex", {"qp_init_attr_ex": _RSS_QP}),)},
              also=(Source("kernel", _USECOUNT),)),
    ),
    contract=Contract(requires=(Resource("rwq_ind_table", role="rwq_ind_table"),),
                      destroys=(Resource("rwq_ind_table", role="rwq_ind_table"),)),
    undefined=("destroying a table twice",),
)

# --- IPsec ESP flow actions ------------------------------------------------------------------------------------
_ESP_NOT_SUPPORTED = {"EOPNOTSUPP": "the provider or the kernel does not implement ESP flow actions"}
_ESP_STRUCTS = ("needs the ESP attributes and key material behind pointers of the attribute struct, which catalogue "
                "values cannot lay out yet; no device attribute advertises ESP offload either")

ibv_create_flow_action_esp = Verb(
    name="ibv_create_flow_action_esp",
    man="ibv_create_flow_action(3)",
    prototype="struct ibv_flow_action *ibv_create_flow_action_esp(struct ibv_context *ctx, "
    "struct ibv_flow_action_esp_attr *esp);",
    returns=RETURNS_POINTER,
    summary="create an IPsec ESP flow action (decrypt or encrypt after a steering match); NULL on failure",
    params=(
        Param("ctx", "struct ibv_context *", default=Need("context")),
        Param("esp", "struct ibv_flow_action_esp_attr *", default={"comp_mask": 0},
              flags="ibv_flow_action_esp_mask",
              doc="the page's struct names are swapped with the header's: the argument is ibv_flow_action_esp_attr, "
                  "whose esp_attr member points at ibv_flow_action_esp"),
    ),
    errors=(
        Error("EOPNOTSUPP", "no ESP offload here (libibverbs' default op, or the provider/kernel), or a comp_mask bit "
              "other than ESN (not on the page)", covered_by=("reserved-comp-mask-refused",)),
        Error("EINVAL", "invalid key material or attribute combination (not on the page: the kernel's answer)",
              untestable=_ESP_STRUCTS),
    ),
    claims=(
        Claim("reserved-comp-mask-refused", "refused", "only IBV_FLOW_ACTION_ESP_MASK_ESN is a comp_mask bit: others "
              "are refused", "ARGUMENTS", over={"bit": (1, 31)}, variant="comp_mask-bit{bit}",
              call={"esp.comp_mask": Flags(bits=(Var("bit"),))}, errnos=("EOPNOTSUPP", "EINVAL")),
        Claim("creates-action", "untestable", "with valid AES-GCM key material an ESP action is created, and it can "
              "serve several steering rules through IBV_FLOW_SPEC_ACTION_HANDLE", "DESCRIPTION",
              untestable=_ESP_STRUCTS),
    ),
    contract=Contract(requires=(Resource("context", role="ctx"),), produces=(Resource("flow_action"),),
                      destroyed_by="ibv_destroy_flow_action"),
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
        Param("esp", "struct ibv_flow_action_esp_attr *",
              default={"comp_mask": "IBV_FLOW_ACTION_ESP_MASK_ESN", "esn": 1},
              flags="ibv_flow_action_esp_mask", doc="NULL members keep their current values"),
    ),
    errors=(
        Error("EOPNOTSUPP", "a comp_mask bit other than ESN, or no ESP support (not on the page)",
              untestable="needs an ESP action, which no check can create here (see ibv_create_flow_action_esp)"),
    ),
    claims=(
        Claim("modify-esn", "untestable", "the ESN of an existing action can be updated; a failed modify leaves the "
              "old parameters in force for every rule", "DESCRIPTION, RETURN VALUE",
              untestable="needs an ESP action (" + _ESP_STRUCTS + ") and IPsec traffic to observe the parameters"),
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
        Error("EBUSY", "a steering rule still uses the action (not on the page: the kernel's use count)",
              untestable="needs an ESP action, which no check can create here (see ibv_create_flow_action_esp)"),
    ),
    claims=(
        Claim("destroy-returns-zero", "untestable", "an action no rule uses is destroyed and the call returns 0",
              "RETURN VALUE", untestable="needs an ESP action (" + _ESP_STRUCTS + ")"),
    ),
    contract=Contract(requires=(Resource("flow_action", role="action"),),
                      destroys=(Resource("flow_action", role="action"),)),
    undefined=("destroying an action twice",),
)
# --- end section: breadth B -------------------------------------------------------------------------------

# --- section: data path (post, poll, completions, notification, ibv_wr_*) ----------------------------------
# --- end section: data path --------------------------------------------------------------------------------

# Every Verb defined above, in the order of this file.
CATALOGUE: tuple[Verb, ...] = tuple(value for value in list(globals().values()) if isinstance(value, Verb))
