"""ibv_modify_qp expansion follows the catalogue's tables (pure logic, no device)."""

from __future__ import annotations

from collections import Counter

import pytest

from pytest_rdma.catalogue.flags import FLAG_SETS
from pytest_rdma.checks.modify_qp import forbidden_flags, illegal_moves, resolve_bad_value
from pytest_rdma.checks.qp_states import QUERY_ALL, Call, changed
from pytest_rdma.generate import expand
from pytest_rdma.verbs import DET_MODIFY_QP, IBV_MODIFY_QP

CASES = expand(IBV_MODIFY_QP)
BY_CLAIM = Counter(case.claim for case in CASES)
IDS = [case.id for case in CASES]
MASK = FLAG_SETS["ibv_qp_attr_mask"]


def ids_of(claim: str, prefix: str) -> list[str]:
    return [i for i in IDS if i.startswith(f"{claim}-{prefix}")]


def test_many_readable_unique_deterministic_cases() -> None:
    assert len(CASES) > 250
    assert len(set(IDS)) == len(IDS)
    assert [c.id for c in expand(IBV_MODIFY_QP)] == IDS
    assert "required-attrs-RC-INIT>RTR-without-AV" in IDS


@pytest.mark.parametrize(("qp_type", "step", "required"), [
    ("RC", "RESET>INIT", 4), ("RC", "INIT>RTR", 7), ("RC", "RTR>RTS", 6),
    ("UC", "RESET>INIT", 4), ("UC", "INIT>RTR", 5), ("UC", "RTR>RTS", 2),
    ("UD", "RESET>INIT", 4), ("UD", "RTR>RTS", 2), ("RAW_PACKET", "RESET>INIT", 2),
])
def test_one_without_case_per_required_attribute(qp_type: str, step: str, required: int) -> None:
    assert len(IBV_MODIFY_QP.tables["required"][qp_type][step]) == required
    assert len(ids_of("required-attrs", f"{qp_type}-{step}-without-")) == required


@pytest.mark.parametrize(("qp_type", "step"), [("UD", "INIT>RTR"), ("RAW_PACKET", "INIT>RTR"),
                                               ("RAW_PACKET", "RTR>RTS")])
def test_state_alone_cannot_be_left_out(qp_type: str, step: str) -> None:
    # The step needs only IBV_QP_STATE: leaving it out is an empty mask (zero-mask covers that).
    assert ids_of("required-attrs", f"{qp_type}-{step}-") == []


def test_minimal_cases_cover_every_type_and_step() -> None:
    assert BY_CLAIM["minimal-attrs"] == 4 * 3
    assert "minimal-attrs-RAW_PACKET-RTR>RTS" in IDS


def test_forbidden_is_complement_of_required_and_optional() -> None:
    rc_rtr = set(forbidden_flags(IBV_MODIFY_QP, "RC", "INIT>RTR"))
    assert "IBV_QP_TIMEOUT" in rc_rtr and "IBV_QP_AV" not in rc_rtr and "IBV_QP_PKEY_INDEX" not in rc_rtr
    assert "IBV_QP_STATE" not in rc_rtr and "IBV_QP_CAP" not in rc_rtr  # CAP has its own claim
    tables = IBV_MODIFY_QP.tables
    total = 0
    for qp_type in tables["qp_types"]:
        for step in tables["steps"]:
            allowed = set(tables["required"][qp_type][step]) | set(tables["optional"][qp_type][step])
            expected = len(set(MASK) - allowed - {"IBV_QP_STATE", "IBV_QP_CAP", "IBV_QP_ALT_PATH"})
            assert len(forbidden_flags(IBV_MODIFY_QP, qp_type, step)) == expected
            total += expected
    assert BY_CLAIM["forbidden-attrs"] == total
    assert "forbidden-attrs-UD-INIT>RTR-with-PATH_MTU" in IDS


def test_illegal_transitions() -> None:
    moves = illegal_moves(IBV_MODIFY_QP)
    assert ("RESET", "RTR") in moves and ("RESET", "RTS") in moves and ("INIT", "RTS") in moves
    assert ("RTS", "RTR") in moves and ("ERR", "INIT") in moves
    assert ("RESET", "INIT") not in moves and ("INIT", "RTR") not in moves
    assert BY_CLAIM["illegal-transitions"] == 4 * len(moves) == 40


def test_to_reset_and_err() -> None:
    assert BY_CLAIM["to-reset"] == 4 * 5  # from RESET, INIT, RTR, RTS, ERR
    assert BY_CLAIM["to-err"] == 4 * 4    # RESET>ERR is not in the state table
    assert "to-err-RC-RTS>ERR" in IDS and "to-err-RC-RESET>ERR" not in IDS


def test_out_of_range_only_where_the_attribute_is_taken() -> None:
    assert "out-of-range-RC-RTR>RTS-timeout=32" in IDS
    assert "out-of-range-RC-INIT>RTR-path_mtu=6" in IDS
    assert not any(i.startswith("out-of-range-UD-") and "path_mtu" in i for i in IDS)
    assert "out-of-range-RAW_PACKET-RESET>INIT-port_num=phys_port_cnt+1" in IDS


def test_unknown_bits_are_unknown() -> None:
    documented = sum(MASK.values())
    for bit in IBV_MODIFY_QP.claim("unknown-mask-bits").params["bits"]:
        assert not documented & (1 << bit)
    assert BY_CLAIM["unknown-mask-bits"] == 4 * 6


def test_capability_claims_only_where_the_table_allows() -> None:
    assert sorted(ids_of("alt-path", "")) == sorted(
        f"alt-path-{t}-{s}-with-ALT_PATH" for t in ("RC", "UC") for s in ("INIT>RTR", "RTR>RTS"))
    assert ids_of("grh-required", "") == ["grh-required-RC-INIT>RTR-AV-without-GRH",
                                          "grh-required-UC-INIT>RTR-AV-without-GRH"]


def test_det_cases_are_generated_and_blocked() -> None:
    det = expand(DET_MODIFY_QP)
    assert len(det) >= 7 and all(case.blocked for case in det)
    assert DET_MODIFY_QP.counterpart == "ibv_modify_qp"


def test_helpers() -> None:
    class Dut:
        class attr:  # noqa: N801 - stands in for ibv_device_attr
            phys_port_cnt, max_qp_rd_atom, max_qp_init_rd_atom = 1, 16, 8

        class port_attr:  # noqa: N801
            pkey_tbl_len, gid_tbl_len = 64, 16

    assert resolve_bad_value(Dut, "phys_port_cnt+1") == 2
    assert resolve_bad_value(Dut, "pkey_tbl_len") == 64
    assert resolve_bad_value(Dut, 32) == 32
    assert changed({"a": 1, "b": 2}, {"a": 1, "b": 3}) == {"b": "2 -> 3"}
    assert Call(("IBV_QP_STATE", "IBV_QP_PORT"), {}, extra_bits=1 << 30).mask == 1 | 32 | 1 << 30
    assert QUERY_ALL == (1 << 21) - 1
