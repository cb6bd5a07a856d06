"""The verb catalogue: one declarative description per verb, from its man page.

Every claim paraphrases the page in our own words and cites page and section. Checks are
generated from these entries (pytest_rdma.generate); the vocabulary is in
pytest_rdma.catalogue.model. This module is data: it imports neither pytest nor pyverbs.
"""

from __future__ import annotations

from pytest_rdma.catalogue.model import (
    RETURNS_COUNT,
    RETURNS_ERRNO,
    RETURNS_POINTER,
    Claim,
    Contract,
    Error,
    Param,
    Resource,
    Transition,
    Verb,
)
from pytest_rdma.catalogue.validate import validate

# --- section: device, port and GID verbs (fixtures) --------------------------------------
ibv_get_device_list = Verb(
    name="ibv_get_device_list",
    man="ibv_get_device_list(3)",
    prototype="struct ibv_device **ibv_get_device_list(int *num_devices);",
    returns=RETURNS_POINTER,
    summary="list the RDMA devices present; NULL with errno on failure, an empty list when none",
    params=(Param("num_devices", "int *", "out", nullable=True, doc="set to the number of devices"),),
    errors=(
        Error(
            "EPERM",
            "permission denied",
            untestable="the suite runs as root; it cannot drop the right to list devices",
        ),
        Error(
            "ENOSYS", "no kernel RDMA support", untestable="the suite needs a kernel with RDMA to run at all"
        ),
        Error("ENOMEM", "out of memory", untestable="cannot exhaust memory safely on a shared lab VM"),
    ),
    claims=(
        Claim(
            "lists-device",
            "device-listed",
            "the device under test is in the returned list, once, and every name is distinct",
            "RETURN VALUE",
        ),
    ),
    contract=Contract(produces=(Resource("device_list"),)),
)

ibv_open_device = Verb(
    name="ibv_open_device",
    man="ibv_open_device(3)",
    prototype="struct ibv_context *ibv_open_device(struct ibv_device *device);",
    returns=RETURNS_POINTER,
    summary="open a device and return its verbs context, or NULL",
    params=(Param("device", "struct ibv_device *", doc="an entry of ibv_get_device_list()"),),
    claims=(
        Claim(
            "independent-contexts",
            "context-independent",
            "a second context on the same device works on its own and closing it leaves the first usable",
            "DESCRIPTION",
        ),
    ),
    contract=Contract(requires=(Resource("device_list", role="device"),), produces=(Resource("context"),)),
)

ibv_query_device = Verb(
    name="ibv_query_device",
    man="ibv_query_device(3)",
    prototype="int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr);",
    returns=RETURNS_ERRNO,
    summary="read the device's attributes and resource limits",
    params=(
        Param("context", "struct ibv_context *"),
        Param("device_attr", "struct ibv_device_attr *", "out"),
    ),
    claims=(
        Claim(
            "limits-nonzero",
            "attr-relation",
            "every resource the fixtures need has a maximum of at least one, and there is a port",
            "DESCRIPTION",
            params={
                "source": "query_device",
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
    prototype="int ibv_query_port(struct ibv_context *context, uint8_t port_num, "
    "struct ibv_port_attr *port_attr);",
    returns=RETURNS_ERRNO,
    summary="read the attributes of one port (numbered from 1)",
    params=(
        Param("context", "struct ibv_context *"),
        Param("port_num", "uint8_t"),
        Param("port_attr", "struct ibv_port_attr *", "out"),
    ),
    claims=(
        Claim(
            "port-bounds",
            "index-bounds",
            "ports are numbered 1..phys_port_cnt: those answer, port 0 and phys_port_cnt+1 fail",
            "DESCRIPTION",
            params={"method": "query_port", "with_port": False, "length": "attr.phys_port_cnt", "base": 1},
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)

ibv_query_gid = Verb(
    name="ibv_query_gid",
    man="ibv_query_gid(3)",
    prototype="int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, "
    "union ibv_gid *gid);",
    returns=RETURNS_COUNT,
    summary="read entry `index` of a port's GID table; 0 on success, -1 on error",
    params=(
        Param("context", "struct ibv_context *"),
        Param("port_num", "uint8_t"),
        Param("index", "int"),
        Param("gid", "union ibv_gid *", "out"),
    ),
    claims=(
        Claim(
            "index-bounds",
            "index-bounds",
            "indexes 0..gid_tbl_len-1 of the port answer; gid_tbl_len and -1 fail with -1",
            "DESCRIPTION, RETURN VALUE",
            params={"method": "query_gid", "with_port": True, "length": "port_attr.gid_tbl_len", "base": 0},
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)

ibv_query_pkey = Verb(
    name="ibv_query_pkey",
    man="ibv_query_pkey(3)",
    prototype="int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, uint16_t *pkey);",
    returns=RETURNS_COUNT,
    summary="read entry `index` of a port's P_Key table (network byte order); 0 or -1",
    params=(
        Param("context", "struct ibv_context *"),
        Param("port_num", "uint8_t"),
        Param("index", "int"),
        Param("pkey", "uint16_t *", "out"),
    ),
    claims=(
        Claim(
            "index-bounds",
            "index-bounds",
            "indexes 0..pkey_tbl_len-1 of the port answer; pkey_tbl_len and -1 fail with -1",
            "DESCRIPTION, RETURN VALUE",
            params={"method": "query_pkey", "with_port": True, "length": "port_attr.pkey_tbl_len", "base": 0},
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)
# --- end section: device ------------------------------------------------------------------

# --- section: ibv_modify_qp and det_modify_qp ---------------------------------------------
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
# does not list these; paraphrased from the IBTA spec vol. 1 QP state transition table as the
# Linux kernel encodes it (qp_state_table / ib_modify_qp_is_ok, drivers/infiniband/core/verbs.c).
# Anything neither required nor optional on a step is not allowed there.
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

# Legal state changes (same source as above). RESET -> ERR is absent from the kernel's table,
# so it is neither promised nor checked; every other state reaches RESET and ERR.
_QP_LEGAL_MOVES = {
    "RESET": ("RESET", "INIT"),
    "INIT": ("RESET", "INIT", "RTR", "ERR"),
    "RTR": ("RESET", "RTS", "ERR"),
    "RTS": ("RESET", "RTS", "SQD", "ERR"),
    "SQD": ("RESET", "RTS", "SQD", "ERR"),
    "SQE": ("RESET", "RTS", "ERR"),
    "ERR": ("RESET", "ERR"),
}

# Values out of each attribute's range: (mask flag, ibv_qp_attr field, bad value). A string
# value is resolved against what the device reports (ibv_query_device / ibv_query_port).
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
    ("IBV_QP_AV", "ah_attr.sgid_index", "gid_tbl_len"),
    ("IBV_QP_AV", "ah_attr.port_num", "phys_port_cnt+1"),
)

_MQP_NEGATIVE = ("required-attrs", "forbidden-attrs", "illegal-transitions", "unknown-mask-bits",
                 "out-of-range", "resize-cap", "alt-path", "grh-required")

IBV_MODIFY_QP = Verb(
    name="ibv_modify_qp",
    man=_MQP,
    prototype="int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);",
    returns=RETURNS_ERRNO,
    summary="change the attributes of a QP, and with them its state",
    params=(
        Param("qp", "struct ibv_qp *", "in", doc="the QP to modify"),
        Param("attr", "struct ibv_qp_attr *", "in", doc="new values; only fields attr_mask names are read"),
        Param("attr_mask", "int", "in", flags="ibv_qp_attr_mask", doc="0 or an OR of IBV_QP_* bits"),
    ),
    errors=(
        Error("errno", "any attribute or the mask is invalid (NOTES); the page names no specific errno",
              covered_by=_MQP_NEGATIVE),
    ),
    claims=(
        Claim("minimal-attrs", "modify_qp_minimal", "each step Reset>Init>RTR>RTS succeeds with exactly the "
              "required attributes of the QP type, and the QP is then in the new state", f"{_MQP} NOTES"),
        Claim("required-attrs", "modify_qp_without_required", "a step missing one required attribute fails "
              "and leaves the QP untouched", f"{_MQP} NOTES"),
        Claim("optional-attrs", "modify_qp_optional", "an attribute the state machine allows on a step may "
              "be added to the required set", f"{_MQP} NOTES; IBTA QP state table"),
        Claim("forbidden-attrs", "modify_qp_forbidden", "an attribute that is neither required nor allowed "
              "on a step makes the mask invalid: the call fails and modifies nothing", f"{_MQP} NOTES"),
        Claim("illegal-transitions", "modify_qp_illegal_transition", "a state change the QP state machine "
              "does not have is rejected and modifies nothing", f"{_MQP} NOTES; IBTA QP state table"),
        Claim("to-reset", "modify_qp_to_state", "a QP in any state can be moved to Reset",
              f"{_MQP} DESCRIPTION; IBTA QP state table", params={"target": "RESET"}),
        Claim("to-err", "modify_qp_to_state", "a QP in Init, RTR, RTS or Error can be moved to Error",
              f"{_MQP} DESCRIPTION; IBTA QP state table", params={"target": "ERR"}),
        Claim("zero-mask", "modify_qp_zero_mask", "attr_mask may be 0: in a state the QP may stay in (all "
              "but RTR) the call succeeds and changes nothing", f"{_MQP} DESCRIPTION; IBTA QP state table"),
        Claim("unknown-mask-bits", "modify_qp_unknown_bits", "a mask bit outside the documented flags makes "
              "the mask invalid: the call fails and modifies nothing", f"{_MQP} DESCRIPTION, NOTES",
              params={"bits": (21, 22, 23, 24, 26, 30), "step": "RESET>INIT"}),
        Claim("out-of-range", "modify_qp_out_of_range", "an attribute value out of its range is invalid: "
              "the call fails and modifies nothing", f"{_MQP} NOTES"),
        Claim("resize-cap", "modify_qp_cap", "IBV_QP_CAP (resizing) works only on devices that advertise "
              "IBV_DEVICE_RESIZE_MAX_WR", f"{_MQP} NOTES", params={"capability": "IBV_DEVICE_RESIZE_MAX_WR"}),
        Claim("alt-path", "modify_qp_alt_path", "IBV_QP_ALT_PATH works only on devices that advertise "
              "IBV_DEVICE_AUTO_PATH_MIG", f"{_MQP} NOTES", params={"capability": "IBV_DEVICE_AUTO_PATH_MIG"}),
        Claim("grh-required", "modify_qp_grh_required", "where the port sets IBV_QPF_GRH_REQUIRED, an "
              "address vector without a GRH is refused", f"{_MQP} NOTES",
              params={"flag": "IBV_QPF_GRH_REQUIRED"}),
    ),
    contract=Contract(
        requires=(Resource("qp", role="qp"),),
        moves=(Transition("qp", "RESET", "INIT"), Transition("qp", "INIT", "RTR"),
               Transition("qp", "RTR", "RTS"), Transition("qp", "any", "RESET"),
               Transition("qp", "any", "ERR")),
    ),
    tables={
        "qp_types": ("RC", "UC", "UD", "RAW_PACKET"),
        "steps": ("RESET>INIT", "INIT>RTR", "RTR>RTS"),
        "required": _MODIFY_QP_REQUIRED,
        "optional": _MODIFY_QP_OPTIONAL,
        "legal_moves": _QP_LEGAL_MOVES,
        "out_of_range": _MODIFY_QP_OUT_OF_RANGE,
    },
)

_DET = "det_modify_qp(3)"
_DET_SAME = "no DET provider on this system; the ibv counterpart is ibv_modify_qp"

DET_MODIFY_QP = Verb(
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
        Error("EDQUOT", "the attributes would exceed the system's pinned-page quota",
              covered_by=("pinned-quota",)),
        Error("EFAULT", "an invalid address was passed (user-mode callers only)",
              covered_by=("bad-address",)),
        Error("EINVAL", "an invalid parameter was passed", covered_by=("invalid-param",)),
        Error("ENOMEM", "not enough memory to modify the QP",
              untestable="memory exhaustion cannot be provoked deterministically"),
        Error("EPERM", "the requested state transition is not permitted", covered_by=("illegal-transition",)),
    ),
    claims=(
        Claim("moves-state", "det_modify_qp", "on success the QP is in the state qp_mod requested",
              f"{_DET} DESCRIPTION",
              params={"variants": ("to-each-state",), "counterpart_claim": "minimal-attrs"}),
        Claim("reports-actual-attrs", "det_modify_qp", "when qp_attr is given it receives the attributes in "
              "effect, which may differ from those requested; NULL is allowed",
              f"{_DET} ARGUMENTS, DESCRIPTION",
              params={"variants": ("qp_attr-given", "qp_attr-NULL")}),
        Claim("illegal-transition", "det_modify_qp", "a transition that is not permitted fails with EPERM",
              f"{_DET} RETURN VALUES",
              params={"variants": ("EPERM",), "counterpart_claim": "illegal-transitions"}),
        Claim("invalid-param", "det_modify_qp", "an invalid parameter fails with EINVAL",
              f"{_DET} RETURN VALUES", params={"variants": ("EINVAL",), "counterpart_claim": "out-of-range"}),
        Claim("shrink-below-queued", "det_modify_qp", "shrinking a queue below its queued work requests "
              "fails "
              "with EBUSY", f"{_DET} RETURN VALUES", params={"variants": ("send-queue", "recv-queue")}),
        Claim("pinned-quota", "det_modify_qp", "attributes beyond the pinned-page quota fail with EDQUOT",
              f"{_DET} RETURN VALUES", params={"variants": ("EDQUOT",)}),
        Claim("bad-address", "det_modify_qp", "an invalid qp_mod or qp_attr address fails with EFAULT",
              f"{_DET} RETURN VALUES", params={"variants": ("qp_mod", "qp_attr")}),
    ),
    contract=Contract(
        requires=(Resource("det_qp", role="qp"),),
        moves=(Transition("det_qp", "any", "requested"),),
    ),
    tables={"blocked_because": _DET_SAME},
)
# --- end section: modify_qp ---------------------------------------------------------------

# --- section: ibv_create_qp_ex, ibv_destroy_qp, ibv_create_qp, ibv_query_qp ---------------
_QP_CAP_FIELDS = ("max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data")
# Requests off the usual powers of two, so rounding up is visible; all within any sane device's limits.
_QP_CAP_REQUEST = {
    "max_send_wr": 3,
    "max_recv_wr": 5,
    "max_send_sge": 2,
    "max_recv_sge": 2,
    "max_inline_data": 17,
}
_QP_TYPES = ("RC", "UC", "UD", "RAW_PACKET")

ibv_create_qp_ex = Verb(
    name="ibv_create_qp_ex",
    man="ibv_create_qp_ex(3)",
    prototype="struct ibv_qp *ibv_create_qp_ex(struct ibv_context *context, "
    "struct ibv_qp_init_attr_ex *qp_init_attr_ex);",
    returns=RETURNS_POINTER,
    summary="create a QP from extended init attributes (comp_mask says which are valid); NULL on failure",
    params=(
        Param("context", "struct ibv_context *"),
        Param(
            "qp_init_attr_ex",
            "struct ibv_qp_init_attr_ex *",
            "inout",
            flags="ibv_qp_init_attr_mask",
            doc="comp_mask draws from ibv_qp_init_attr_mask; create_flags from ibv_qp_create_flags; "
            "cap is written back",
        ),
    ),
    # The page has no ERRORS section: it only says NULL is returned on failure.
    claims=(
        Claim(
            "cap-writeback",
            "qp-cap-writeback",
            "the cap struct is rewritten with the QP's actual capacities, each at least the request, "
            "and ibv_query_qp reports the same values",
            "DESCRIPTION",
            params={"api": "ex", "qp_types": _QP_TYPES, "fields": _QP_CAP_FIELDS, "request": _QP_CAP_REQUEST},
        ),
        Claim(
            "cap-writeback-at-limit",
            "qp-cap-writeback",
            "the same holds for a request at the device maximum (a field naming an ibv_device_attr limit)",
            "DESCRIPTION",
            params={
                "api": "ex",
                "qp_types": _QP_TYPES,
                "fields": ("max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge"),
                "request": {
                    "max_send_wr": "max_qp_wr",
                    "max_recv_wr": "max_qp_wr",
                    "max_send_sge": "max_sge",
                    "max_recv_sge": "max_sge",
                },
            },
        ),
        Claim(
            "srq-ignores-recv-caps",
            "qp-srq-ignores-recv-caps",
            "with an SRQ, max_recv_wr and max_recv_sge are ignored (even values above the device limits)",
            "NOTES",
            params={"api": "ex", "qp_types": ("RC", "UD")},
        ),
        Claim(
            "unknown-comp-mask",
            "qp-rejects-bits",
            "comp_mask bits outside ibv_qp_init_attr_mask make the call fail",
            "DESCRIPTION",
            params={"field": "comp_mask", "qp_types": ("RC", "UD"), "bits": (7, 8, 16, 31)},
        ),
        Claim(
            "unknown-create-flags",
            "qp-rejects-bits",
            "create_flags bits outside ibv_qp_create_flags make the call fail",
            "DESCRIPTION",
            params={"field": "create_flags", "qp_types": ("RC", "UD"), "bits": (0, 2, 5, 12, 31)},
        ),
        Claim(
            "source-qpn-ud-only",
            "qp-source-qpn-scope",
            "IBV_QP_CREATE_SOURCE_QPN is for UD QPs only: other QP types are refused",
            "NOTES",
            params={"qp_types": ("RC", "UC", "RAW_PACKET"), "source_qpn": 0x1234},
        ),
        Claim(
            "qp-num-unique",
            "qp-num-unique",
            "each created QP has a valid qp_num, unique among live QPs (on IB transport: 24 bits and "
            "not the special QP0/QP1)",
            "RETURN VALUE",
            params={"api": "ex", "qp_types": _QP_TYPES, "count": 64},
        ),
        Claim(
            "send-ops-iterator",
            "untestable",
            "with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS the QP exposes the ibv_qp_ex send-ops iterator",
            "NOTES",
            untestable="the post path is out of scope of creation checks; pyverbs' QPEx exercises it",
        ),
    ),
    contract=Contract(
        requires=(
            Resource("context", role="context"),
            Resource("pd", role="qp_init_attr_ex.pd"),
            Resource("cq", role="qp_init_attr_ex.send_cq"),
        ),
        produces=(Resource("qp", state="RESET"),),
    ),
    tables={"srq_qp_types": ("RC", "UD"), "source_qpn_qp_types": ("UD",)},
)

ibv_destroy_qp = Verb(
    name="ibv_destroy_qp",
    man="ibv_create_qp_ex(3)",
    prototype="int ibv_destroy_qp(struct ibv_qp *qp);",
    returns=RETURNS_ERRNO,
    summary="destroy a QP; 0 or an errno",
    params=(Param("qp", "struct ibv_qp *"),),
    claims=(
        Claim(
            "destroy-returns-zero",
            "qp-destroy-ok",
            "destroying an idle QP (no multicast attachment) returns 0",
            "RETURN VALUE",
            params={"qp_types": _QP_TYPES},
        ),
        Claim(
            "destroy-fails-mcast-attached",
            "qp-destroy-mcast-busy",
            "destroy fails while the QP is attached to a multicast group, and succeeds after detaching",
            "NOTES",
            params={"qp_types": ("UD",), "mgid": "ff0e::1234", "mlid": 0},
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),), destroys=(Resource("qp"),)),
)

ibv_create_qp = Verb(
    name="ibv_create_qp",
    man="ibv_create_qp(3)",
    prototype="struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);",
    returns=RETURNS_POINTER,
    summary="create a QP on a PD (the fixtures' way); NULL on failure",
    params=(
        Param("pd", "struct ibv_pd *"),
        Param("qp_init_attr", "struct ibv_qp_init_attr *", "inout", doc="cap is written back"),
    ),
    claims=(
        Claim(
            "cap-writeback",
            "qp-cap-writeback",
            "cap is rewritten with the actual capacities, each at least the request; ibv_query_qp agrees",
            "DESCRIPTION",
            params={
                "api": "legacy",
                "qp_types": _QP_TYPES,
                "fields": _QP_CAP_FIELDS,
                "request": _QP_CAP_REQUEST,
            },
        ),
        Claim(
            "srq-ignores-recv-caps",
            "qp-srq-ignores-recv-caps",
            "with an SRQ, max_recv_wr and max_recv_sge are ignored",
            "NOTES",
            params={"api": "legacy", "qp_types": ("RC", "UD")},
        ),
        Claim(
            "srq-only-rc-ud",
            "qp-srq-type-restricted",
            "asking for a QP type other than RC or UD with an SRQ fails",
            "NOTES",
            params={"qp_types": ("UC", "RAW_PACKET")},
        ),
        Claim(
            "qp-num-unique",
            "qp-num-unique",
            "each QP has a valid qp_num unique among live QPs",
            "RETURN VALUE",
            params={"api": "legacy", "qp_types": ("RC", "UD"), "count": 64},
        ),
    ),
    contract=Contract(
        requires=(Resource("pd", role="pd"), Resource("cq", role="qp_init_attr.send_cq")),
        produces=(Resource("qp", state="RESET"),),
    ),
)

ibv_query_qp = Verb(
    name="ibv_query_qp",
    man="ibv_query_qp(3)",
    prototype="int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, "
    "struct ibv_qp_init_attr *init_attr);",
    returns=RETURNS_ERRNO,
    summary="read a QP's current attributes and its init attributes; attr_mask is a minimum hint",
    params=(
        Param("qp", "struct ibv_qp *"),
        Param("attr", "struct ibv_qp_attr *", "out"),
        Param("attr_mask", "int", flags="ibv_qp_attr_mask", doc="the attributes wanted, at least"),
        Param("init_attr", "struct ibv_qp_init_attr *", "out"),
    ),
    claims=(
        Claim(
            "fresh-qp",
            "qp-query-fresh",
            "a new QP reads back in RESET with the qp_type and sq_sig_all it was created with",
            "DESCRIPTION",
            params={"qp_types": _QP_TYPES},
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),)),
)
# --- end section: create_qp ---------------------------------------------------------------

# --- section: ibv_query_device_ex ---------------------------------------------------------
# Every field of struct ibv_device_attr, which ibv_device_attr_ex.orig_attr embeds.
_DEVICE_ATTR_FIELDS = (
    "fw_version",
    "node_guid",
    "sys_image_guid",
    "max_mr_size",
    "page_size_cap",
    "vendor_id",
    "vendor_part_id",
    "hw_ver",
    "max_qp",
    "max_qp_wr",
    "device_cap_flags",
    "max_sge",
    "max_sge_rd",
    "max_cq",
    "max_cqe",
    "max_mr",
    "max_pd",
    "max_qp_rd_atom",
    "max_ee_rd_atom",
    "max_res_rd_atom",
    "max_qp_init_rd_atom",
    "max_ee_init_rd_atom",
    "atomic_caps",
    "max_ee",
    "max_rdd",
    "max_mw",
    "max_raw_ipv6_qp",
    "max_raw_ethy_qp",
    "max_mcast_grp",
    "max_qp_mcast_attach",
    "max_total_mcast_qp_attach",
    "max_ah",
    "max_fmr",
    "max_map_per_fmr",
    "max_srq",
    "max_srq_wr",
    "max_srq_sge",
    "max_pkeys",
    "local_ca_ack_delay",
    "phys_port_cnt",
)

ibv_query_device_ex = Verb(
    name="ibv_query_device_ex",
    man="ibv_query_device_ex(3)",
    prototype="int ibv_query_device_ex(struct ibv_context *context, "
    "const struct ibv_query_device_ex_input *input, struct ibv_device_attr_ex *attr);",
    returns=RETURNS_ERRNO,
    summary="read the device attributes plus the extended ones (orig_attr holds ibv_query_device's)",
    params=(
        Param("context", "struct ibv_context *"),
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
            "attr-ex-orig-equals",
            "orig_attr holds exactly what ibv_query_device returns",
            "DESCRIPTION",
            params={"fields": _DEVICE_ATTR_FIELDS},
        ),
        Claim(
            "zero-means-unsupported",
            "attr-relation",
            "a capability reported as 0 (unsupported) leaves its dependent fields at 0, "
            "and ranges are ordered",
            "DESCRIPTION",
            params={
                "source": "query_device_ex",
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
            "zero-means-unsupported",
            "completion_timestamp_mask is 0 exactly when completion timestamps are unsupported: a CQ asking "
            "for them fails then, and works otherwise",
            "DESCRIPTION",
            params={"field": "completion_timestamp_mask", "probe": "cq_ex_completion_timestamp"},
        ),
        Claim(
            "odp-support-bit",
            "attr-relation",
            "without IBV_ODP_SUPPORT no transport advertises on-demand paging",
            "DESCRIPTION",
            params={
                "source": "query_device_ex",
                "relations": (
                    (
                        "odp_caps.general_odp_caps&IBV_ODP_SUPPORT",
                        "0=>0",
                        "odp_caps.per_transport_caps.rc_odp_caps",
                    ),
                    (
                        "odp_caps.general_odp_caps&IBV_ODP_SUPPORT",
                        "0=>0",
                        "odp_caps.per_transport_caps.uc_odp_caps",
                    ),
                    (
                        "odp_caps.general_odp_caps&IBV_ODP_SUPPORT",
                        "0=>0",
                        "odp_caps.per_transport_caps.ud_odp_caps",
                    ),
                ),
            },
        ),
        Claim(
            "phys-port-cnt-ex",
            "attr-relation",
            "phys_port_cnt_ex extends phys_port_cnt: never smaller",
            "DESCRIPTION",
            params={
                "source": "query_device_ex",
                "relations": (("phys_port_cnt_ex", ">=", "orig_attr.phys_port_cnt"),),
            },
        ),
        Claim(
            "limits-sane",
            "attr-relation",
            "the resource limits are at least one",
            "NOTES",
            params={
                "source": "query_device_ex",
                "relations": (
                    ("orig_attr.max_qp_wr", ">=", 1),
                    ("orig_attr.max_sge", ">=", 1),
                    ("orig_attr.max_cqe", ">=", 1),
                    ("orig_attr.max_qp", ">=", 1),
                    ("orig_attr.max_cq", ">=", 1),
                    ("orig_attr.max_pd", ">=", 1),
                ),
            },
        ),
        Claim(
            "limits-honoured",
            "limit-honoured",
            "the maxima are upper limits: a resource at the maximum can be created when memory allows "
            "(NOTES lets it fail for lack of resources), one above it is refused",
            "NOTES",
            params={
                "limits": (
                    ("cq", "max_cqe"),
                    ("qp", "max_qp_wr"),
                    ("qp", "max_sge"),
                    ("srq", "max_srq_wr"),
                    ("srq", "max_srq_sge"),
                ),
                "qp_types": ("RC", "UD"),
            },
        ),
        Claim(
            "input-comp-mask-rejected",
            "input-comp-mask-rejected",
            "input is for future extensions: a comp_mask bit the library does not know is refused",
            "DESCRIPTION",
            params={"bits": (0, 1, 31)},
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)
# --- end section: query_device_ex ---------------------------------------------------------

# --- section: ibv_create_flow, ibv_destroy_flow -------------------------------------------
# A rule that any steering device accepts: match one destination MAC exactly (the page's EXAMPLE, L2 only).
_FLOW_VALID_RULE = {"type": "IBV_FLOW_ATTR_NORMAL", "priority": 0, "flags": (), "specs": ("eth-dst-mac",)}

ibv_create_flow = Verb(
    name="ibv_create_flow",
    man="ibv_create_flow(3)",
    prototype="struct ibv_flow *ibv_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr);",
    returns=RETURNS_POINTER,
    summary="attach a steering rule (attr + specs) to a UD or RAW_PACKET QP; NULL with errno on failure",
    params=(
        Param("qp", "struct ibv_qp *", doc="UD or RAW_PACKET; with EGRESS only names the device"),
        Param(
            "flow_attr",
            "struct ibv_flow_attr *",
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
        Error(
            "ENXIO",
            "the device does not support device managed flow steering",
            covered_by=("no-steering-errno",),
        ),
        Error(
            "EPERM",
            "no permission to add the rule",
            untestable="the lab runs as root and the page does not say which rules need privilege",
        ),
    ),
    claims=(
        Claim(
            "no-steering-errno",
            "flow-errno-without-steering",
            "on a device that does not advertise IBV_DEVICE_MANAGED_FLOW_STEERING the call fails with ENXIO",
            "ERRORS, NOTES",
            params={"qp_types": ("UD", "RAW_PACKET"), "errno": "ENXIO", "rule": _FLOW_VALID_RULE},
        ),
        Claim(
            "qp-type-not-allowed",
            "flow-qp-type-rejected",
            "rules attach only to UD and RAW_PACKET QPs: other QP types are refused as invalid",
            "NOTES, ERRORS",
            params={
                "qp_types": ("RC", "UC"),
                "errno": "EINVAL",
                "errno_without_steering": ("EINVAL", "ENXIO"),
                "rule": _FLOW_VALID_RULE,
            },
        ),
        Claim(
            "invalid-rules",
            "flow-invalid-rule",
            "an invalid specification list, flag/type combination or flag is refused with EINVAL; "
            "DONT_TRAP goes only with rule type NORMAL",
            "ERRORS, NOTES",
            params={
                "qp_types": ("UD", "RAW_PACKET"),
                "errno": "EINVAL",
                "base": _FLOW_VALID_RULE,
                "variants": {
                    "dont-trap-with-ALL_DEFAULT": {
                        "type": "IBV_FLOW_ATTR_ALL_DEFAULT",
                        "flags": ("IBV_FLOW_ATTR_FLAGS_DONT_TRAP",),
                        "specs": (),
                    },
                    "dont-trap-with-MC_DEFAULT": {
                        "type": "IBV_FLOW_ATTR_MC_DEFAULT",
                        "flags": ("IBV_FLOW_ATTR_FLAGS_DONT_TRAP",),
                        "specs": (),
                    },
                    "dont-trap-with-SNIFFER": {
                        "type": "IBV_FLOW_ATTR_SNIFFER",
                        "flags": ("IBV_FLOW_ATTR_FLAGS_DONT_TRAP",),
                        "specs": (),
                    },
                    "fewer-specs-than-declared": {"num_of_specs": 2},
                    "unknown-flag-bit31": {"raw_flags": 1 << 31},
                    "port-0": {"port": 0},
                    "port-beyond-last": {"port": "phys_port_cnt+1"},
                },
            },
        ),
        Claim(
            "create-valid",
            "flow-create-destroy",
            "a valid rule (the page's L2 example, and NORMAL with DONT_TRAP) is created on a steering "
            "device and destroyed with 0",
            "DESCRIPTION, NOTES",
            params={
                "qp_types": ("UD", "RAW_PACKET"),
                "variants": {
                    "eth-dst-mac": _FLOW_VALID_RULE,
                    "dont-trap-with-NORMAL": {
                        **_FLOW_VALID_RULE,
                        "flags": ("IBV_FLOW_ATTR_FLAGS_DONT_TRAP",),
                    },
                },
            },
        ),
        Claim(
            "egress-qp-only-names-device",
            "untestable",
            "with EGRESS the QP only identifies the device",
            "NOTES",
            untestable="observing which QP egress actions use needs traffic through a steering device",
        ),
    ),
    contract=Contract(requires=(Resource("qp", role="qp"),), produces=(Resource("flow"),)),
    tables={
        "qp_types": ("UD", "RAW_PACKET"),
        "dont_trap_rule_types": ("IBV_FLOW_ATTR_NORMAL",),
        "needs_cap": "IBV_DEVICE_MANAGED_FLOW_STEERING",
    },
)

ibv_destroy_flow = Verb(
    name="ibv_destroy_flow",
    man="ibv_create_flow(3)",
    prototype="int ibv_destroy_flow(struct ibv_flow *flow_id);",
    returns=RETURNS_ERRNO,
    summary="remove a steering rule; 0 or an errno",
    params=(Param("flow_id", "struct ibv_flow *"),),
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
            "flow-create-destroy",
            "destroying a rule just created returns 0",
            "RETURN VALUE",
            params={"qp_types": ("UD", "RAW_PACKET"), "variants": {"eth-dst-mac": _FLOW_VALID_RULE}},
        ),
    ),
    contract=Contract(requires=(Resource("flow", role="flow_id"),), destroys=(Resource("flow"),)),
)
# --- end section: flow --------------------------------------------------------------------

# --- section: PD, CQ, SRQ, MR (fixtures) --------------------------------------------------
ibv_alloc_pd = Verb(
    name="ibv_alloc_pd",
    man="ibv_alloc_pd(3)",
    prototype="struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);",
    returns=RETURNS_POINTER,
    summary="allocate a protection domain; NULL on failure",
    params=(Param("context", "struct ibv_context *"),),
    claims=(
        Claim(
            "distinct-pds",
            "pd-distinct",
            "each call returns a new PD with its own handle, and ibv_dealloc_pd of an unused PD returns 0",
            "DESCRIPTION, RETURN VALUE",
            params={"count": 16},
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),), produces=(Resource("pd"),)),
)

ibv_create_cq = Verb(
    name="ibv_create_cq",
    man="ibv_create_cq(3)",
    prototype="struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context, "
    "struct ibv_comp_channel *channel, int comp_vector);",
    returns=RETURNS_POINTER,
    summary="create a CQ with at least cqe entries; NULL on failure",
    params=(
        Param("context", "struct ibv_context *"),
        Param("cqe", "int"),
        Param("cq_context", "void *", nullable=True),
        Param("channel", "struct ibv_comp_channel *", nullable=True),
        Param("comp_vector", "int"),
    ),
    claims=(
        Claim(
            "cqe-at-least-requested",
            "created-size-at-least",
            "the CQ's cqe is at least the number of entries asked for",
            "DESCRIPTION, NOTES",
            params={"resource": "cq", "requests": ({"cqe": 1}, {"cqe": 3}, {"cqe": 100}, {"cqe": 1000})},
        ),
    ),
    contract=Contract(requires=(Resource("context", role="context"),), produces=(Resource("cq"),)),
)

ibv_create_srq = Verb(
    name="ibv_create_srq",
    man="ibv_create_srq(3)",
    prototype="struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr);",
    returns=RETURNS_POINTER,
    summary="create a shared receive queue; its attr is rewritten with the actual sizes",
    params=(Param("pd", "struct ibv_pd *"), Param("srq_init_attr", "struct ibv_srq_init_attr *", "inout")),
    claims=(
        Claim(
            "sizes-at-least-requested",
            "created-size-at-least",
            "the max_wr and max_sge written back into srq_init_attr are at least the request",
            "DESCRIPTION",
            params={
                "resource": "srq",
                "requests": ({"max_wr": 3, "max_sge": 1}, {"max_wr": 100, "max_sge": 2}),
            },
        ),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("srq"),)),
)

ibv_reg_mr = Verb(
    name="ibv_reg_mr",
    man="ibv_reg_mr(3)",
    prototype="struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);",
    returns=RETURNS_POINTER,
    summary="register a memory region with the given access; NULL on failure",
    params=(
        Param("pd", "struct ibv_pd *"),
        Param("addr", "void *"),
        Param("length", "size_t"),
        Param("access", "int", flags="ibv_access_flags"),
    ),
    claims=(
        Claim(
            "registers",
            "mr-basics",
            "a registration with local write access succeeds and reports the length asked for; "
            "ibv_dereg_mr returns 0",
            "DESCRIPTION, RETURN VALUE",
            params={"lengths": (1, 4096, 65536 + 3)},
        ),
        Claim(
            "remote-write-needs-local-write",
            "mr-access-rejected",
            "REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE is refused",
            "DESCRIPTION",
            params={
                "access": (
                    ("IBV_ACCESS_REMOTE_WRITE",),
                    ("IBV_ACCESS_REMOTE_ATOMIC",),
                    ("IBV_ACCESS_REMOTE_WRITE", "IBV_ACCESS_REMOTE_READ"),
                )
            },
        ),
    ),
    contract=Contract(requires=(Resource("pd", role="pd"),), produces=(Resource("mr"),)),
)
# --- end section: resources ---------------------------------------------------------------

# Every Verb defined above, in the order of this file.
CATALOGUE: tuple[Verb, ...] = tuple(value for value in list(globals().values()) if isinstance(value, Verb))
validate(CATALOGUE)
