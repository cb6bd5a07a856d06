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
                  **_SMALL_CAP, "max_recv_wr": Dev("attr.max_qp_wr", times=4),
                  "max_recv_sge": Dev("attr.max_sge", plus=5)}}),
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
    ),
    contract=Contract(
        requires=(Resource("pd", role="pd"), Resource("cq", role="qp_init_attr.send_cq")),
        produces=(Resource("qp", state="RESET"),),
        destroyed_by="ibv_destroy_qp",
        makes=True,
    ),
    tables={"vars": {"qp_type": "IBV_QPT_RC"}, "needs": {"qp_type": _QP_TYPE_NEEDS}},
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
        Claim("cap-writeback", "succeeds", "the cap struct is rewritten with the QP's actual capacities, each at "
              "least the request, and ibv_query_qp reports the same values", "DESCRIPTION",
              over={"qp_type": _QP_TYPES, ("field", "request"): _QP_CAP_REQUEST}, variant="{qp_type}-{field}-{request}",
              **_cap_writeback("qp_init_attr_ex", "ibv_create_qp_ex", "ibv_query_qp(3) DESCRIPTION")),
        Claim("cap-writeback-at-limit", "succeeds", "the same holds for a request at the device maximum (a field "
              "naming an ibv_device_attr limit)", "DESCRIPTION",
              over={"qp_type": _QP_TYPES, ("field", "limit"): (
                  ("max_send_wr", "max_qp_wr"), ("max_recv_wr", "max_qp_wr"),
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
                  **_SMALL_CAP, "max_recv_wr": Dev("attr.max_qp_wr", times=4),
                  "max_recv_sge": Dev("attr.max_sge", plus=5)}}),
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
              call={"qp_init_attr_ex.pd": Need("pd", label="shared"),
                    "qp_init_attr_ex.send_cq": Need("cq", label="shared"),
                    "qp_init_attr_ex.recv_cq": Need("cq", label="shared"), "qp_init_attr_ex.cap": _SMALL_CAP},
              expect=(Expect("ret.qp_num", "in", (2, 1 << 24), transports=IB_TRANSPORTS),),
              params={"count": 64, "value": "ret.qp_num", "cycle": Var("cycle"), "cycle_needs": _QP_TYPE_NEEDS}),
        Claim("send-ops-iterator", "untestable", "with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS the QP exposes the "
              "ibv_qp_ex send-ops iterator", "NOTES",
              untestable="covered by the ibv_wr_* data-path claims, which post through it"),
    ),
    contract=Contract(
        requires=(Resource("context", role="context"), Resource("pd", role="qp_init_attr_ex.pd"),
                  Resource("cq", role="qp_init_attr_ex.send_cq")),
        produces=(Resource("qp", state="RESET"),),
        destroyed_by="ibv_destroy_qp",
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
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),), destroys=(Resource("qp", role="qp"),)),
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
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
)

ibv_attach_mcast = Verb(
    name="ibv_attach_mcast",
    man="ibv_attach_mcast(3)",
    prototype="int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);",
    returns=RETURNS_ERRNO,
    summary="attach a UD QP to a multicast group",
    params=(Param("qp", "struct ibv_qp *"), Param("gid", "const union ibv_gid *"), Param("lid", "uint16_t", default=0)),
)

ibv_detach_mcast = Verb(
    name="ibv_detach_mcast",
    man="ibv_attach_mcast(3)",
    prototype="int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);",
    returns=RETURNS_ERRNO,
    summary="detach a UD QP from a multicast group",
    params=(Param("qp", "struct ibv_qp *"), Param("gid", "const union ibv_gid *"), Param("lid", "uint16_t", default=0)),
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
                  (f"orig_attr.{f}", ">=", 1)
                  for f in ("max_qp_wr", "max_sge", "max_cqe", "max_qp", "max_cq", "max_pd"))}),
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
        Error("ENOMEM", "not enough memory to destroy the rule",
              untestable="cannot exhaust memory safely on a shared lab VM"),
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
    ),
    errors=(Error("EBUSY", "the PD is still in use", covered_by=("busy-with-mr", "busy-with-qp")),),
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
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("srq"),),
                      destroyed_by="ibv_destroy_srq", makes=True),
)

ibv_destroy_srq = Verb(
    name="ibv_destroy_srq",
    man="ibv_create_srq(3)",
    prototype="int ibv_destroy_srq(struct ibv_srq *srq);",
    returns=RETURNS_ERRNO,
    summary="destroy an SRQ; 0 or an errno",
    params=(Param("srq", "struct ibv_srq *"),),
    contract=Contract(destroys=(Resource("srq", role="srq"),)),
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
# --- end section: breadth B -------------------------------------------------------------------------------

# --- section: data path (post, poll, completions, notification, ibv_wr_*) ----------------------------------
# The calls a data-path check makes (pytest_rdma/kinds/traffic.py builds their work requests).
# What each opcode does (ibv_post_send(3) DESCRIPTION; the completion opcodes of ibv_poll_cq(3)):
# whether it consumes a receive at the peer, the completions it yields, where its data goes
# (recv: into the peer's receive buffer; remote: into the peer's memory; local: back from it),
# and the remote access the target's memory region must grant.
_OPCODES = {
    "IBV_WR_SEND": {"send_wc": "IBV_WC_SEND", "recv_wc": "IBV_WC_RECV", "consumes_recv": True, "data": "recv"},
    "IBV_WR_SEND_WITH_IMM": {"send_wc": "IBV_WC_SEND", "recv_wc": "IBV_WC_RECV", "consumes_recv": True,
                             "data": "recv", "imm": True},
    "IBV_WR_RDMA_WRITE": {"send_wc": "IBV_WC_RDMA_WRITE", "data": "remote", "remote": "IBV_ACCESS_REMOTE_WRITE"},
    "IBV_WR_RDMA_WRITE_WITH_IMM": {"send_wc": "IBV_WC_RDMA_WRITE", "recv_wc": "IBV_WC_RECV_RDMA_WITH_IMM",
                                   "consumes_recv": True, "data": "remote", "imm": True,
                                   "remote": "IBV_ACCESS_REMOTE_WRITE"},
    "IBV_WR_RDMA_READ": {"send_wc": "IBV_WC_RDMA_READ", "data": "local", "remote": "IBV_ACCESS_REMOTE_READ"},
    "IBV_WR_ATOMIC_CMP_AND_SWP": {"send_wc": "IBV_WC_COMP_SWAP", "data": "atomic", "remote": "IBV_ACCESS_REMOTE_ATOMIC"},
    "IBV_WR_ATOMIC_FETCH_AND_ADD": {"send_wc": "IBV_WC_FETCH_ADD", "data": "atomic",
                                    "remote": "IBV_ACCESS_REMOTE_ATOMIC"},
}
_RC, _UC, _UD = "IBV_QPT_RC", "IBV_QPT_UC", "IBV_QPT_UD"
_PLAIN_OPS = ((_RC, "IBV_WR_SEND"), (_RC, "IBV_WR_RDMA_WRITE"), (_RC, "IBV_WR_RDMA_READ"), (_UC, "IBV_WR_SEND"),
              (_UC, "IBV_WR_RDMA_WRITE"), (_UD, "IBV_WR_SEND"))
_IMM_OPS = ((_RC, "IBV_WR_SEND_WITH_IMM"), (_RC, "IBV_WR_RDMA_WRITE_WITH_IMM"), (_UC, "IBV_WR_SEND_WITH_IMM"),
            (_UC, "IBV_WR_RDMA_WRITE_WITH_IMM"), (_UD, "IBV_WR_SEND_WITH_IMM"))
_ATOMIC_OPS = ((_RC, "IBV_WR_ATOMIC_CMP_AND_SWP"), (_RC, "IBV_WR_ATOMIC_FETCH_AND_ADD"))
_STREAM_SIZES = (1, "mtu-1", "mtu", "mtu+1", "4*mtu+7", 65536, "max_msg")
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
        Error("errno", "a WR the QP cannot take (the page names no specific errno)",
              covered_by=("bad-wr-first-failing", "inline-over-limit", "reset-refused")),
    ),
    claims=(
        Claim("opcode-completes", "transfer", "a valid SEND, RDMA WRITE or RDMA READ completes on the requester with "
              "its opcode and wr_id (and, for a SEND, on the responder), and the data arrives intact",
              "DESCRIPTION", over={("qp_type", "opcode"): _PLAIN_OPS}, variant="{qp_type}-{opcode}",
              params={"size": 64, "seed": 11}),
        Claim("immediate-completes", "transfer", "SEND_WITH_IMM and RDMA_WRITE_WITH_IMM deliver the 32-bit immediate: "
              "the responder's completion carries it with IBV_WC_WITH_IMM", "DESCRIPTION",
              transports=IB_TRANSPORTS, over={("qp_type", "opcode"): _IMM_OPS}, variant="{qp_type}-{opcode}",
              params={"size": 64, "seed": 12}),
        Claim("atomics-complete", "transfer", "compare-and-swap and fetch-and-add complete on an RC QP of a device "
              "that advertises atomic operations", "DESCRIPTION", transports=IB_TRANSPORTS,
              needs=(Cap("attr.atomic_cap"),), over={("qp_type", "opcode"): _ATOMIC_OPS}, variant="{qp_type}-{opcode}",
              params={"size": 8, "compare_add": 1, "swap": 2}),
        Claim("data-integrity", "transfer", "every byte that arrives is the byte sent, for messages around the path "
              "MTU and up to the port's maximum message size", "DESCRIPTION",
              over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_RC, "IBV_WR_RDMA_WRITE"), (_RC, "IBV_WR_RDMA_READ"),
                                            (_UC, "IBV_WR_RDMA_WRITE")), "size": _STREAM_SIZES},
              variant="{qp_type}-{opcode}-{size}", params={"seed": 13}),
        Claim("ud-up-to-mtu", "transfer", "a UD SEND of up to the path MTU arrives intact, after the 40 bytes the "
              "receive buffer keeps for the GRH", "DESCRIPTION", transports=IB_TRANSPORTS,
              over={"qp_type": (_UD,), "size": (1, "mtu-1", "mtu")}, variant="{qp_type}-{size}",
              params={"opcode": "IBV_WR_SEND", "seed": 14}),
        Claim("zero-length", "transfer", "a SEND or RDMA WRITE of zero bytes is valid and completes", "DESCRIPTION",
              over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_RC, "IBV_WR_RDMA_WRITE"), (_UC, "IBV_WR_SEND"))},
              variant="{qp_type}-{opcode}", params={"size": 0}),
        Claim("gathers-sges", "transfer", "a WR gathers its data from several scatter/gather entries, in order",
              "DESCRIPTION", needs=(Cap("attr.max_sge"),),
              over={"qp_type": (_RC,), "sges": (2, 3)}, variant="{qp_type}-{sges}-sges",
              params={"opcode": "IBV_WR_SEND", "size": 300, "sges": Var("sges"), "seed": 15}),
        Claim("inline-within-limit", "transfer", "with IBV_SEND_INLINE a message up to max_inline_data is sent from "
              "the caller's buffer at post time (the lkey is not needed) and arrives intact", "DESCRIPTION",
              over={"qp_type": (_RC, _UD), "size": (16, 64)}, variant="{qp_type}-{size}",
              params={"opcode": "IBV_WR_SEND", "size": Var("size"), "inline": True, "seed": 16}),
        Claim("bad-wr-first-failing", "post-refused", "when a post fails, it returns an errno value and *bad_wr points "
              "at the first WR that could not be posted", "RETURN VALUE",
              over={"qp_type": (_RC,), ("problem", "bad"): (("sge-over-max", 0), ("sge-over-max", 1))},
              variant="{qp_type}-{problem}-at-{bad}", params={"queue": "send", "problem": Var("problem"),
                                                              "bad": Var("bad"), "count": 3}),
        Claim("inline-over-limit", "post-refused", "inline data longer than the QP's max_inline_data is refused at "
              "post time, with *bad_wr at that WR", "DESCRIPTION",
              over={"qp_type": (_RC,)}, variant="{qp_type}",
              params={"queue": "send", "problem": "inline-over-max", "bad": 0, "count": 1}),
        Claim("reset-refused", "post-refused", "a QP in RESET cannot take send WRs: the post fails at the first one",
              "DESCRIPTION", transports=IB_TRANSPORTS, also=(_IBTA_QP_TABLE,),
              over={"qp_type": (_RC, _UD)}, variant="{qp_type}",
              params={"queue": "send", "problem": "state-reset", "bad": 0, "count": 2}),
        Claim("remote-access-enforced", "access-fault", "an RDMA WRITE, READ or atomic to memory registered without "
              "the matching remote access flag fails with a remote access error", "DESCRIPTION", also=(_IBTA_ERRORS,),
              over={("qp_type", "opcode"): ((_RC, "IBV_WR_RDMA_WRITE"), (_RC, "IBV_WR_RDMA_READ"))},
              variant="{qp_type}-{opcode}-without-its-access",
              params={"fault": "remote-no-access", "statuses": ("IBV_WC_REM_ACCESS_ERR",)}),
        Claim("atomic-access-enforced", "access-fault", "an atomic to memory registered without REMOTE_ATOMIC fails "
              "with a remote access error", "DESCRIPTION", transports=IB_TRANSPORTS, also=(_IBTA_ERRORS,),
              needs=(Cap("attr.atomic_cap"),), over={("qp_type", "opcode"): ((_RC, "IBV_WR_ATOMIC_FETCH_AND_ADD"),)},
              variant="{qp_type}-{opcode}-without-its-access",
              params={"fault": "remote-no-access", "size": 8, "statuses": ("IBV_WC_REM_ACCESS_ERR",)}),
        Claim("rkey-enforced", "access-fault", "an RDMA operation with an rkey the target did not hand out, or beyond "
              "the target region, fails with a remote access error", "DESCRIPTION", also=(_IBTA_ERRORS,),
              over={"qp_type": (_RC,), ("opcode", "fault"): (("IBV_WR_RDMA_WRITE", "bad-rkey"),
                                                             ("IBV_WR_RDMA_READ", "bad-rkey"),
                                                             ("IBV_WR_RDMA_WRITE", "out-of-bounds"),
                                                             ("IBV_WR_RDMA_READ", "out-of-bounds"))},
              variant="{qp_type}-{opcode}-{fault}",
              params={"fault": Var("fault"), "statuses": ("IBV_WC_REM_ACCESS_ERR",)}),
        Claim("lkey-enforced", "access-fault", "a gather entry with an lkey the device did not hand out fails with a "
              "local protection error", "DESCRIPTION", also=(_IBTA_ERRORS,),
              over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"), (_RC, "IBV_WR_RDMA_WRITE"))},
              variant="{qp_type}-{opcode}-bad-lkey",
              params={"fault": "bad-lkey", "statuses": ("IBV_WC_LOC_PROT_ERR",)}),
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
        Error("errno", "a WR the QP cannot take (the page names no specific errno)",
              covered_by=("bad-wr-first-failing",)),
    ),
    claims=(
        Claim("bad-wr-first-failing", "post-refused", "when a post fails, it returns an errno value and *bad_wr points "
              "at the first receive WR that could not be posted", "RETURN VALUE",
              over={"qp_type": (_RC,), "bad": (0, 1)}, variant="{qp_type}-sge-over-max-at-{bad}",
              params={"queue": "recv", "problem": "sge-over-max", "bad": Var("bad"), "count": 3}),
        Claim("err-flushes-outstanding", "flush", "moving the QP to Error completes every receive it still holds with "
              "IBV_WC_WR_FLUSH_ERR, in the order they were posted", "DESCRIPTION",
              over={"qp_type": (_RC, _UD)}, variant="{qp_type}", params={"count": 3}),
        Claim("too-small-fails", "access-fault", "a message longer than the receive buffer completes the receive with "
              "a local length error", "DESCRIPTION", also=(_IBTA_ERRORS,),
              over={("qp_type", "opcode"): ((_RC, "IBV_WR_SEND"),)}, variant="{qp_type}",
              params={"fault": "recv-too-small", "side": "recv", "statuses": ("IBV_WC_LOC_LEN_ERR",)}),
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
        Claim("empty-returns-zero", "succeeds", "polling a CQ with nothing in it returns 0", "RETURN VALUE",
              variant="fresh-cq", call={"cq": Need("cq")}, expect=(Expect("ret", "==", 0),)),
        Claim("zero-entries", "succeeds", "num_entries 0 returns 0", "DESCRIPTION", variant="num_entries-0",
              call={"cq": Need("cq"), "num_entries": 0}, expect=(Expect("ret", "==", 0),)),
    ),
)

ibv_req_notify_cq = Verb(
    name="ibv_req_notify_cq",
    man="ibv_req_notify_cq(3)",
    prototype="int ibv_req_notify_cq(struct ibv_cq *cq, int solicited_only);",
    returns=RETURNS_ERRNO,
    summary="arm a CQ: its next completion (or next solicited one) raises an event on its channel",
    params=(Param("cq", "struct ibv_cq *"), Param("solicited_only", "int", default=0)),
    claims=(
        Claim("next-completion-event", "notify", "armed for any completion, the CQ raises one event on its channel "
              "when the next completion arrives", "DESCRIPTION", over={"qp_type": (_RC,)}, variant="{qp_type}",
              params={"solicited_only": 0}),
        Claim("solicited-event", "notify", "armed for solicited completions only, a message sent with "
              "IBV_SEND_SOLICITED raises an event", "DESCRIPTION", over={"qp_type": (_RC,)}, variant="{qp_type}",
              params={"solicited_only": 1, "solicited": True}),
        Claim("unsolicited-no-event", "notify", "armed for solicited completions only, a message sent without the "
              "solicited flag raises no event", "DESCRIPTION", over={"qp_type": (_RC,)}, variant="{qp_type}",
              params={"solicited_only": 1, "solicited": False, "expect_event": False}),
        Claim("error-event", "notify", "armed for solicited completions only, an unsuccessful completion raises an event",
              "DESCRIPTION", over={"qp_type": (_RC,)}, variant="{qp_type}",
              params={"solicited_only": 1, "solicited": False, "fault": "recv-too-small"}),
    ),
)

ibv_get_cq_event = Verb(
    name="ibv_get_cq_event",
    man="ibv_get_cq_event(3)",
    prototype="int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context);",
    returns=RETURNS_COUNT,
    summary="take the next completion event of a channel (blocks unless the channel's fd is ready)",
    params=(
        Param("channel", "struct ibv_comp_channel *"),
        Param("cq", "struct ibv_cq **", "out"),
        Param("cq_context", "void **", "out"),
    ),
)

ibv_ack_cq_events = Verb(
    name="ibv_ack_cq_events",
    man="ibv_get_cq_event(3)",
    prototype="void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);",
    returns=RETURNS_VOID,
    summary="acknowledge events taken with ibv_get_cq_event (a CQ with unacknowledged events cannot be destroyed)",
    params=(Param("cq", "struct ibv_cq *"), Param("nevents", "unsigned int", default=1)),
)

ibv_create_comp_channel = Verb(
    name="ibv_create_comp_channel",
    man="ibv_create_comp_channel(3)",
    prototype="struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context);",
    returns=RETURNS_POINTER,
    summary="create a completion event channel; NULL on failure",
    params=(CONTEXT,),
    contract=Contract(requires=(Resource("context", role="context"),), produces=(Resource("comp_channel"),),
                      destroyed_by="ibv_destroy_comp_channel", makes=True),
)

ibv_destroy_comp_channel = Verb(
    name="ibv_destroy_comp_channel",
    man="ibv_create_comp_channel(3)",
    prototype="int ibv_destroy_comp_channel(struct ibv_comp_channel *channel);",
    returns=RETURNS_ERRNO,
    summary="destroy a completion event channel; fails while a CQ uses it",
    params=(Param("channel", "struct ibv_comp_channel *"),),
    contract=Contract(destroys=(Resource("comp_channel", role="channel"),)),
)

ibv_create_ah = Verb(
    name="ibv_create_ah",
    man="ibv_create_ah(3)",
    prototype="struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);",
    returns=RETURNS_POINTER,
    summary="create an address handle for UD sends; NULL on failure",
    params=(
        Param("pd", "struct ibv_pd *", default=Need("pd")),
        Param("attr", "struct ibv_ah_attr *", default=_LOOPBACK_AV),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("ah"),), destroyed_by="ibv_destroy_ah",
                      makes=True),
)

ibv_destroy_ah = Verb(
    name="ibv_destroy_ah",
    man="ibv_create_ah(3)",
    prototype="int ibv_destroy_ah(struct ibv_ah *ah);",
    returns=RETURNS_ERRNO,
    summary="destroy an address handle; 0 or an errno",
    params=(Param("ah", "struct ibv_ah *"),),
    contract=Contract(destroys=(Resource("ah", role="ah"),)),
)

# librdmacm: how an iWARP RC pair is connected (the verbs cannot do it alone). Family "rdmacm":
# no claims of its own here; the data-path checks call these through the same call layer.
_RDMACM = "rdma_cm(7)"
rdma_create_event_channel = Verb(
    name="rdma_create_event_channel", man=_RDMACM, family="rdmacm", returns=RETURNS_POINTER,
    prototype="struct rdma_event_channel *rdma_create_event_channel(void);",
    summary="open a channel for connection events",
    contract=Contract(produces=(Resource("event_channel"),), destroyed_by="rdma_destroy_event_channel"),
)
rdma_destroy_event_channel = Verb(
    name="rdma_destroy_event_channel", man=_RDMACM, family="rdmacm", returns=RETURNS_VOID,
    prototype="void rdma_destroy_event_channel(struct rdma_event_channel *channel);",
    summary="close a connection event channel", params=(Param("channel", "struct rdma_event_channel *"),),
    contract=Contract(destroys=(Resource("event_channel", role="channel"),)),
)
rdma_create_id = Verb(
    name="rdma_create_id", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context, "
    "enum rdma_port_space ps);",
    summary="make a connection identifier (0, or -1 with errno)",
    params=(Param("channel", "struct rdma_event_channel *"), Param("id", "struct rdma_cm_id **", "out"),
            Param("context", "void *"), Param("ps", "enum rdma_port_space", default="RDMA_PS_TCP")),
)
rdma_destroy_id = Verb(
    name="rdma_destroy_id", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_destroy_id(struct rdma_cm_id *id);", summary="release a connection identifier",
    params=(Param("id", "struct rdma_cm_id *"),), contract=Contract(destroys=(Resource("cm_id", role="id"),)),
)
rdma_bind_addr = Verb(
    name="rdma_bind_addr", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr);", summary="bind to an address",
    params=(Param("id", "struct rdma_cm_id *"), Param("addr", "struct sockaddr *")),
)
rdma_listen = Verb(
    name="rdma_listen", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_listen(struct rdma_cm_id *id, int backlog);", summary="listen for connection requests",
    params=(Param("id", "struct rdma_cm_id *"), Param("backlog", "int", default=1)),
)
rdma_resolve_addr = Verb(
    name="rdma_resolve_addr", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr, "
    "int timeout_ms);",
    summary="resolve a destination address to an RDMA device (an event follows)",
    params=(Param("id", "struct rdma_cm_id *"), Param("src_addr", "struct sockaddr *"),
            Param("dst_addr", "struct sockaddr *"), Param("timeout_ms", "int", default=5000)),
)
rdma_resolve_route = Verb(
    name="rdma_resolve_route", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms);",
    summary="resolve the route to the destination (an event follows)",
    params=(Param("id", "struct rdma_cm_id *"), Param("timeout_ms", "int", default=5000)),
)
rdma_connect = Verb(
    name="rdma_connect", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);",
    summary="connect; the QP named by conn_param->qp_num is the local end",
    params=(Param("id", "struct rdma_cm_id *"), Param("conn_param", "struct rdma_conn_param *")),
)
rdma_accept = Verb(
    name="rdma_accept", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);",
    summary="accept a connection request on the QP named by conn_param->qp_num",
    params=(Param("id", "struct rdma_cm_id *"), Param("conn_param", "struct rdma_conn_param *")),
)
rdma_disconnect = Verb(
    name="rdma_disconnect", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_disconnect(struct rdma_cm_id *id);", summary="disconnect (the QPs move to Error)",
    params=(Param("id", "struct rdma_cm_id *"),),
)
rdma_get_cm_event = Verb(
    name="rdma_get_cm_event", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event);",
    summary="take the next connection event (blocks unless the channel's fd is ready)",
    params=(Param("channel", "struct rdma_event_channel *"), Param("event", "struct rdma_cm_event **", "out")),
)
rdma_ack_cm_event = Verb(
    name="rdma_ack_cm_event", man=_RDMACM, family="rdmacm", returns=RETURNS_ERRNO,
    prototype="int rdma_ack_cm_event(struct rdma_cm_event *event);", summary="release a connection event",
    params=(Param("event", "struct rdma_cm_event *"),),
)
# --- end section: data path --------------------------------------------------------------------------------

# Every Verb defined above, in the order of this file.
CATALOGUE: tuple[Verb, ...] = tuple(value for value in list(globals().values()) if isinstance(value, Verb))
