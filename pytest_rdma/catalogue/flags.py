"""Flag sets and enums the catalogue's parameters draw from: set name -> {IBV_* name: value}.

Values are those of <infiniband/verbs.h> (rdma-core 44); a unit test cross-checks them
against the installed pyverbs enums and the header. Kept a plain dict of dicts so other
verbs' sets can be added with small edits.
"""

from __future__ import annotations

FLAG_SETS: dict[str, dict[str, int]] = {
    # enum ibv_qp_attr_mask: the attr_mask of ibv_modify_qp / ibv_query_qp. Bits 21-24
    # (_IBV_QP_SMAC ... _IBV_QP_ALT_VID) are private to the kernel ABI, not part of the API.
    "ibv_qp_attr_mask": {
        "IBV_QP_STATE": 1 << 0,
        "IBV_QP_CUR_STATE": 1 << 1,
        "IBV_QP_EN_SQD_ASYNC_NOTIFY": 1 << 2,
        "IBV_QP_ACCESS_FLAGS": 1 << 3,
        "IBV_QP_PKEY_INDEX": 1 << 4,
        "IBV_QP_PORT": 1 << 5,
        "IBV_QP_QKEY": 1 << 6,
        "IBV_QP_AV": 1 << 7,
        "IBV_QP_PATH_MTU": 1 << 8,
        "IBV_QP_TIMEOUT": 1 << 9,
        "IBV_QP_RETRY_CNT": 1 << 10,
        "IBV_QP_RNR_RETRY": 1 << 11,
        "IBV_QP_RQ_PSN": 1 << 12,
        "IBV_QP_MAX_QP_RD_ATOMIC": 1 << 13,
        "IBV_QP_ALT_PATH": 1 << 14,
        "IBV_QP_MIN_RNR_TIMER": 1 << 15,
        "IBV_QP_SQ_PSN": 1 << 16,
        "IBV_QP_MAX_DEST_RD_ATOMIC": 1 << 17,
        "IBV_QP_PATH_MIG_STATE": 1 << 18,
        "IBV_QP_CAP": 1 << 19,
        "IBV_QP_DEST_QPN": 1 << 20,
        "IBV_QP_RATE_LIMIT": 1 << 25,
    },
    "ibv_qp_state": {
        "IBV_QPS_RESET": 0,
        "IBV_QPS_INIT": 1,
        "IBV_QPS_RTR": 2,
        "IBV_QPS_RTS": 3,
        "IBV_QPS_SQD": 4,
        "IBV_QPS_SQE": 5,
        "IBV_QPS_ERR": 6,
        "IBV_QPS_UNKNOWN": 7,
    },
    "ibv_qp_type": {
        "IBV_QPT_RC": 2,
        "IBV_QPT_UC": 3,
        "IBV_QPT_UD": 4,
        "IBV_QPT_RAW_PACKET": 8,
        "IBV_QPT_XRC_SEND": 9,
        "IBV_QPT_XRC_RECV": 10,
        "IBV_QPT_DRIVER": 0xFF,
    },
    "ibv_mtu": {
        "IBV_MTU_256": 1,
        "IBV_MTU_512": 2,
        "IBV_MTU_1024": 3,
        "IBV_MTU_2048": 4,
        "IBV_MTU_4096": 5,
    },
    "ibv_mig_state": {
        "IBV_MIG_MIGRATED": 0,
        "IBV_MIG_REARM": 1,
        "IBV_MIG_ARMED": 2,
    },
    "ibv_access_flags": {
        "IBV_ACCESS_LOCAL_WRITE": 1 << 0,
        "IBV_ACCESS_REMOTE_WRITE": 1 << 1,
        "IBV_ACCESS_REMOTE_READ": 1 << 2,
        "IBV_ACCESS_REMOTE_ATOMIC": 1 << 3,
        "IBV_ACCESS_MW_BIND": 1 << 4,
        "IBV_ACCESS_ZERO_BASED": 1 << 5,
        "IBV_ACCESS_ON_DEMAND": 1 << 6,
        "IBV_ACCESS_HUGETLB": 1 << 7,
        "IBV_ACCESS_RELAXED_ORDERING": 1 << 20,
    },
    # The device capability bits ibv_modify_qp(3) NOTES names (enum ibv_device_cap_flags).
    "ibv_device_cap_flags": {
        "IBV_DEVICE_RESIZE_MAX_WR": 1 << 0,
        "IBV_DEVICE_AUTO_PATH_MIG": 1 << 4,
        # ibv_create_flow(3) NOTES: flow steering needs this bit.
        "IBV_DEVICE_MANAGED_FLOW_STEERING": 1 << 29,
    },
    # enum ibv_qp_init_attr_mask: ibv_qp_init_attr_ex.comp_mask (ibv_create_qp_ex(3)).
    "ibv_qp_init_attr_mask": {
        "IBV_QP_INIT_ATTR_PD": 1 << 0,
        "IBV_QP_INIT_ATTR_XRCD": 1 << 1,
        "IBV_QP_INIT_ATTR_CREATE_FLAGS": 1 << 2,
        "IBV_QP_INIT_ATTR_MAX_TSO_HEADER": 1 << 3,
        "IBV_QP_INIT_ATTR_IND_TABLE": 1 << 4,
        "IBV_QP_INIT_ATTR_RX_HASH": 1 << 5,
        "IBV_QP_INIT_ATTR_SEND_OPS_FLAGS": 1 << 6,
    },
    # enum ibv_qp_create_flags: ibv_qp_init_attr_ex.create_flags (ibv_create_qp_ex(3)).
    "ibv_qp_create_flags": {
        "IBV_QP_CREATE_BLOCK_SELF_MCAST_LB": 1 << 1,
        "IBV_QP_CREATE_SCATTER_FCS": 1 << 8,
        "IBV_QP_CREATE_CVLAN_STRIPPING": 1 << 9,
        "IBV_QP_CREATE_SOURCE_QPN": 1 << 10,
        "IBV_QP_CREATE_PCI_WRITE_END_PADDING": 1 << 11,
    },
    # enum ibv_flow_attr_type: ibv_flow_attr.type (ibv_create_flow(3)).
    "ibv_flow_attr_type": {
        "IBV_FLOW_ATTR_NORMAL": 0x0,
        "IBV_FLOW_ATTR_ALL_DEFAULT": 0x1,
        "IBV_FLOW_ATTR_MC_DEFAULT": 0x2,
        "IBV_FLOW_ATTR_SNIFFER": 0x3,
    },
    # enum ibv_flow_flags: ibv_flow_attr.flags (ibv_create_flow(3)).
    "ibv_flow_flags": {
        "IBV_FLOW_ATTR_FLAGS_DONT_TRAP": 1 << 1,
        "IBV_FLOW_ATTR_FLAGS_EGRESS": 1 << 2,
    },
    # enum ibv_odp_general_cap_bits: ibv_device_attr_ex.odp_caps.general_odp_caps.
    "ibv_odp_general_cap_bits": {
        "IBV_ODP_SUPPORT": 1 << 0,
        "IBV_ODP_SUPPORT_IMPLICIT": 1 << 1,
    },
    # ibv_port_attr.flags (enum ibv_port_attr_flags in verbs_api.h).
    "ibv_port_flags": {
        "IBV_QPF_GRH_REQUIRED": 1 << 0,
    },
}


def value(set_name: str, flag: str) -> int:
    return FLAG_SETS[set_name][flag]


def mask_of(set_name: str, flags: tuple[str, ...] | list[str]) -> int:
    """The OR of `flags` of one set (KeyError names an unknown flag)."""
    result = 0
    for flag in flags:
        result |= FLAG_SETS[set_name][flag]
    return result
