"""Expansion of the device-attribute kinds, and the relation logic they apply (host only)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_rdma.checks.query_device import OPS
from pytest_rdma.checks.support import NotExposed, read_path
from pytest_rdma.generate import expand
from pytest_rdma.verbs import ibv_query_device, ibv_query_device_ex


def test_orig_attr_has_one_case_per_device_attr_field() -> None:
    cases = [c for c in expand(ibv_query_device_ex) if c.claim == "orig-attr-equals-query-device"]
    assert len(cases) == 40
    assert cases[0].id == "orig-attr-equals-query-device-orig_attr.fw_version"


def test_limits_expand_to_at_and_above_per_resource_and_qp_type() -> None:
    got = [c.id for c in expand(ibv_query_device_ex) if c.claim == "limits-honoured"]
    assert "limits-honoured-cq-max_cqe-at" in got and "limits-honoured-cq-max_cqe-above" in got
    assert "limits-honoured-qp-UD-max_sge-above" in got
    assert "limits-honoured-srq-max_srq_sge-at" in got
    assert len(got) == 2 * (1 + 2 + 2 + 1 + 1)


def test_relation_ids_are_readable() -> None:
    got = [c.id for c in expand(ibv_query_device_ex)]
    assert "phys-port-cnt-ex-phys_port_cnt_ex>=orig_attr.phys_port_cnt" in got
    assert "zero-means-unsupported-tso_caps.max_tso-zero-implies-zero-tso_caps.supported_qpts" in got
    assert "input-comp-mask-rejected-input-comp_mask-bit31" in got
    assert [c.id for c in expand(ibv_query_device)][0] == "limits-nonzero-max_qp>=1"


@pytest.mark.parametrize(
    ("op", "left", "right", "holds"),
    [
        (">=", 2, 1, True),
        (">=", 1, 2, False),
        ("<=", 1, 1, True),
        ("0=>0", 0, 0, True),
        ("0=>0", 0, 5, False),
        ("0=>0", 3, 5, True),
        ("==", 1, 2, False),
    ],
)
def test_relation_operators(op: str, left: int, right: int, holds: bool) -> None:
    assert OPS[op][0](left, right) is holds


def test_read_path_follows_c_names_masks_and_reports_missing_fields() -> None:
    attr = SimpleNamespace(odp_caps=SimpleNamespace(general_caps=0b11, rc_odp_caps=4), max_mcast_qp_attach=8)
    assert read_path(attr, "odp_caps.general_odp_caps") == 3
    assert read_path(attr, "odp_caps.general_odp_caps&IBV_ODP_SUPPORT") == 1
    assert read_path(attr, "odp_caps.per_transport_caps.rc_odp_caps") == 4
    assert read_path(attr, "max_qp_mcast_attach") == 8
    with pytest.raises(NotExposed):
        read_path(attr, "max_total_mcast_qp_attach")
