"""Expansion of the QP creation/query/destroy kinds (host only: no device needed)."""

from __future__ import annotations

from pytest_rdma.generate import expand
from pytest_rdma.verbs import ibv_create_qp, ibv_create_qp_ex, ibv_destroy_qp, ibv_query_qp

QP_TYPES = ("RC", "UC", "UD", "RAW_PACKET")
FIELDS = ("max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data")


def ids(verb: object) -> list[str]:
    return [case.id for case in expand(verb)]  # type: ignore[arg-type]


def test_every_qp_type_and_cap_field_has_a_writeback_case() -> None:
    cases = [c for c in expand(ibv_create_qp_ex) if c.claim == "cap-writeback"]
    assert {(c.params["qp_type"], c.params["field"]) for c in cases} == {
        (t, f) for t in QP_TYPES for f in FIELDS
    }
    assert "cap-writeback-RC-max_send_wr-3" in ids(ibv_create_qp_ex)
    # requests naming a device limit are resolved at run time, not at expansion
    limit = [c for c in expand(ibv_create_qp_ex) if c.claim == "cap-writeback-at-limit"]
    assert {c.params["request"] for c in limit} == {"max_qp_wr", "max_sge"}
    assert "cap-writeback-at-limit-UD-max_recv_sge-at-max_sge" in ids(ibv_create_qp_ex)


def test_unknown_bits_source_qpn_and_srq_cases() -> None:
    got = ids(ibv_create_qp_ex)
    assert "unknown-comp-mask-RC-comp_mask-bit7" in got
    assert "unknown-create-flags-UD-create_flags-bit0" in got
    assert "source-qpn-ud-only-RC-with-source-qpn" in got
    assert not any(i.startswith("source-qpn-ud-only-UD") for i in got)  # the page allows it on UD
    assert "srq-ignores-recv-caps-UD-recv-caps-above-limits" in got
    assert "srq-only-rc-ud-UC-with-srq" in ids(ibv_create_qp)
    assert not any("RC-with-srq" in i for i in ids(ibv_create_qp))


def test_qp_num_cases_cover_each_type_and_a_mix() -> None:
    got = [i for i in ids(ibv_create_qp_ex) if i.startswith("qp-num-unique")]
    assert got == [f"qp-num-unique-{t}-x64" for t in QP_TYPES] + ["qp-num-unique-mixed-x64"]


def test_destroy_and_query_cases() -> None:
    assert ids(ibv_destroy_qp) == [f"destroy-returns-zero-{t}-fresh" for t in QP_TYPES] + [
        "destroy-fails-mcast-attached-UD-attached-to-ff0e::1234"
    ]
    assert ids(ibv_query_qp) == [f"fresh-qp-{t}-after-create" for t in QP_TYPES]


def test_expansion_is_deterministic_and_ids_unique() -> None:
    for verb in (ibv_create_qp_ex, ibv_create_qp, ibv_destroy_qp, ibv_query_qp):
        first, second = ids(verb), ids(verb)
        assert first == second
        assert len(first) == len(set(first))
