"""Cases: the catalogue expands to exactly the checks it had, and the pieces of expansion (host only).

The golden file (data/case_ids.txt) lists every stable id the catalogue expands to. A case id
is what a waiver names and what results are compared by across runs, so an id that vanishes
or changes is a failure that names it; a new one must be added to the file on purpose:

    .venv/bin/python tests/unit/test_cases.py > tests/unit/data/case_ids.txt
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from types import MappingProxyType

import pytest

from pytest_rdma.cases import Case, axis_cases, combinations, frozen, make_case, readable
from pytest_rdma.catalogue.model import Claim, Dev, Expect, Need, Source, Step, Var, Verb, substitute
from pytest_rdma.generate import expand
from pytest_rdma.ibv.enums import ENUMS
from pytest_rdma.kinds.state_table import changed, forbidden_flags, illegal_moves
from pytest_rdma.verbs import CATALOGUE, det_modify_qp, ibv_modify_qp

GOLDEN = Path(__file__).with_name("data") / "case_ids.txt"


def stable_ids() -> list[str]:
    return [case.stable_id for verb in CATALOGUE for case in expand(verb)]


def golden() -> list[str]:
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


# -- the whole catalogue -------------------------------------------------------------------------
def test_the_catalogue_expands_to_exactly_the_golden_ids() -> None:
    got, want = stable_ids(), golden()
    lost = [i for i in want if i not in set(got)]
    new = [i for i in got if i not in set(want)]
    assert not lost and not new, (
        f"{len(lost)} case id(s) lost (waivers and result comparisons name them): {lost}; "
        f"{len(new)} new case id(s) (add them to {GOLDEN.name} on purpose): {new}"
    )
    assert len(got) == len(want)


def test_ids_are_unique_and_expansion_is_deterministic() -> None:
    first = stable_ids()
    assert len(first) == len(set(first)), [i for i, n in Counter(first).items() if n > 1]
    assert stable_ids() == first


# -- combinations and substitute -----------------------------------------------------------------
def test_combinations_in_the_order_written_with_a_tuple_key_zipping_axes() -> None:
    over = {"qp_type": ("RC", "UD"), ("name", "access"): (("W", 1), ("R", 2))}
    assert list(combinations(over)) == [
        {"qp_type": "RC", "name": "W", "access": 1},
        {"qp_type": "RC", "name": "R", "access": 2},
        {"qp_type": "UD", "name": "W", "access": 1},
        {"qp_type": "UD", "name": "R", "access": 2},
    ]
    assert list(combinations({})) == [{}], "no axis: one case, with no values"


def test_substitute_fills_vars_placeholders_keys_and_dataclass_fields() -> None:
    values = {"qp_type": "IBV_QPT_UD", "field": "max_send_wr", "limit": "max_qp_wr"}
    data = {
        "attr.qp_type": Var("qp_type"),
        "attr.cap.{field}": 3,
        "keep": Var("not_an_axis"),
        "text": "{field} of {unknown}",
        "limit": Dev("attr.{limit}", plus=1),
        "steps": (
            Step("ibv_query_qp", {"attr_mask": "IBV_QP_CAP", "qp": Need("qp", spec={"qp_type": Var("qp_type")})}),
        ),
        "expect": [Expect("q.init_attr.cap.{field}", ">=", 1)],
    }
    out = substitute(data, values)
    assert out["attr.qp_type"] == "IBV_QPT_UD"
    assert out["attr.cap.max_send_wr"] == 3 and "attr.cap.{field}" not in out
    assert out["keep"] == Var("not_an_axis"), "a Var of no axis is left for the call layer to refuse"
    assert out["text"] == "max_send_wr of {unknown}"
    assert out["limit"] == Dev("attr.max_qp_wr", plus=1)
    assert out["steps"][0].args["qp"] == Need("qp", spec={"qp_type": "IBV_QPT_UD"})
    assert out["expect"] == [Expect("q.init_attr.cap.max_send_wr", ">=", 1)]
    assert data["attr.qp_type"] == Var("qp_type"), "the claim's own data is not changed"


def test_frozen_data_cannot_be_changed() -> None:
    data = frozen({"a": [1, {"b": 2}]})
    assert isinstance(data, MappingProxyType) and data["a"] == (1, MappingProxyType({"b": 2}))
    with pytest.raises(TypeError):
        data["a"] = 3  # type: ignore[index]


def test_readable_names_not_reprs() -> None:
    assert readable("IBV_QPT_RAW_PACKET") == "RAW_PACKET"
    assert readable(("IBV_QPT_RC", "IBV_QPT_UD")) == "RC+UD"
    assert readable(Dev("attr.max_sge")) == "attr.max_sge"
    assert readable(17) == "17"


# -- make_case and the Case -----------------------------------------------------------------------
FROB = Verb(
    name="ibv_frob",
    man="ibv_frob(3)",
    prototype="int ibv_frob(struct ibv_qp *qp, int n);",
    returns="errno",
    summary="frob a QP",
    claims=(
        Claim(
            "caps",
            "succeeds",
            "the request is honoured",
            "NOTES",
            over={"qp_type": ("IBV_QPT_RC", "IBV_QPT_UD"), "n": (1, 3)},
            variant="{qp_type}-n{n}",
            call={"qp.{n}": Var("n")},
            expect=(Expect("ret", "==", Var("n")),),
            also=(Source("ibta", "IBTA Vol. 1 §11"),),
            transports=("ib", "roce"),
            layer="kernel",
        ),
        Claim("plain", "succeeds", "it works", "DESCRIPTION"),
    ),
)


def test_make_case_puts_the_axis_values_into_the_claims_data() -> None:
    claim = FROB.claim("caps")
    case = make_case(FROB, claim, "UD-n3", {"qp_type": "IBV_QPT_UD", "n": 3}, extra=Var("n"))
    assert (case.verb, case.claim, case.kind, case.variant) == ("ibv_frob", "caps", "succeeds", "UD-n3")
    assert case.spec["call"] == {"qp.3": 3}
    assert case.spec["expect"] == (Expect("ret", "==", 3),)
    assert case.spec["vars"] == {"qp_type": "IBV_QPT_UD", "n": 3}
    assert case.spec["extra"] == 3, "a kind's own spec is substituted too"
    assert case.axes == (("qp_type", "UD"), ("n", "3"))
    assert case.sources == (Source("man", "ibv_frob(3)", "NOTES"), Source("ibta", "IBTA Vol. 1 §11"))
    assert (case.transports, case.layer, case.family, case.blocked) == (("ib", "roce"), "kernel", "ibv", "")
    with pytest.raises(TypeError):
        case.spec["call"]["qp.3"] = 4  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.variant = "x"  # type: ignore[misc]


def test_case_id_stable_id_ref_and_title() -> None:
    case = make_case(FROB, FROB.claim("caps"), "UD-n3", {"qp_type": "IBV_QPT_UD", "n": 3})
    assert case.id == "caps-UD-n3"
    assert case.stable_id == "test_ibv_frob[caps-UD-n3]", "no device in it: one waiver serves every device"
    assert case.ref == "ibv_frob(3) NOTES"
    assert case.title == "the request is honoured [qp_type UD, n 3]"
    plain = make_case(FROB, FROB.claim("plain"), "", {})
    assert (plain.id, plain.stable_id, plain.title) == ("plain", "test_ibv_frob[plain]", "it works")
    bare = Case("ibv_x", "c", "succeeds", "", "says", (), (), "provider")
    assert bare.ref == ""


def test_axis_cases_one_per_combination_named_by_the_variant() -> None:
    cases = list(axis_cases(FROB, FROB.claim("caps")))
    assert [c.id for c in cases] == ["caps-RC-n1", "caps-RC-n3", "caps-UD-n1", "caps-UD-n3"]
    assert [c.id for c in axis_cases(FROB, FROB.claim("plain"))] == ["plain"]


# -- the state-table rules of ibv_modify_qp --------------------------------------------------------
MODIFY_QP = Counter(case.claim for case in expand(ibv_modify_qp))
TABLES = ibv_modify_qp.tables


def modify_qp_ids(claim: str) -> list[str]:
    return [case.id for case in expand(ibv_modify_qp) if case.claim == claim]


@pytest.mark.parametrize(
    ("claim", "count"),
    [
        ("forbidden-attrs", 185),
        ("illegal-transitions", 40),
        ("required-attrs", 36),
        ("out-of-range", 29),
        ("unknown-mask-bits", 24),
        ("to-reset", 20),
        ("optional-attrs", 16),
        ("to-err", 16),
        ("zero-mask", 16),
        ("minimal-attrs", 12),
        ("resize-cap", 4),
        ("alt-path", 4),
        ("grh-required", 2),
    ],
)
def test_modify_qp_rule_counts(claim: str, count: int) -> None:
    assert MODIFY_QP[claim] == count


def test_forbidden_is_the_complement_of_required_optional_and_capability_flags() -> None:
    rc_rtr = forbidden_flags(ibv_modify_qp, "RC", "INIT>RTR")
    assert "IBV_QP_TIMEOUT" in rc_rtr and "IBV_QP_AV" not in rc_rtr and "IBV_QP_PKEY_INDEX" not in rc_rtr
    assert "IBV_QP_STATE" not in rc_rtr and "IBV_QP_CAP" not in rc_rtr  # CAP has its own claim
    total = 0
    for qp_type in TABLES["qp_types"]:
        for step, required in TABLES["walk"]["required"][qp_type].items():
            allowed = set(required) | set(TABLES["optional"][qp_type][step])
            expected = set(ENUMS["ibv_qp_attr_mask"]) - allowed - {"IBV_QP_STATE", "IBV_QP_CAP", "IBV_QP_ALT_PATH"}
            assert set(forbidden_flags(ibv_modify_qp, qp_type, step)) == expected, (qp_type, step)
            total += len(expected)
    assert MODIFY_QP["forbidden-attrs"] == total


def test_one_without_case_per_required_attribute_but_never_an_empty_mask() -> None:
    ids = modify_qp_ids("required-attrs")
    for step, required in TABLES["walk"]["required"]["RC"].items():
        assert len([i for i in ids if i.startswith(f"required-attrs-RC-{step}-without-")]) == len(required)
    assert "required-attrs-RC-INIT>RTR-without-AV" in ids
    # UD INIT>RTR needs only IBV_QP_STATE: leaving it out is attr_mask 0, which zero-mask covers.
    assert not [i for i in ids if i.startswith("required-attrs-UD-INIT>RTR-")]


def test_illegal_moves_are_those_the_state_machine_lacks() -> None:
    moves = illegal_moves(ibv_modify_qp)
    assert ("RESET", "RTR") in moves and ("INIT", "RTS") in moves and ("ERR", "INIT") in moves
    assert ("RESET", "INIT") not in moves and ("INIT", "RTR") not in moves and ("RTS", "RTS") not in moves
    assert MODIFY_QP["illegal-transitions"] == len(TABLES["qp_types"]) * len(moves) == 40


def test_to_err_skips_reset_and_unknown_bits_are_undocumented() -> None:
    assert "to-err-RC-RTS>ERR" in modify_qp_ids("to-err") and "to-err-RC-RESET>ERR" not in modify_qp_ids("to-err")
    documented = sum(ENUMS["ibv_qp_attr_mask"].values())
    for bit in ibv_modify_qp.claim("unknown-mask-bits").params["bits"]:
        assert not documented & (1 << bit), bit


def test_capability_rules_only_where_the_table_allows() -> None:
    assert sorted(modify_qp_ids("alt-path")) == sorted(
        f"alt-path-{t}-{s}-with-ALT_PATH" for t in ("RC", "UC") for s in ("INIT>RTR", "RTR>RTS")
    )
    assert modify_qp_ids("grh-required") == [
        "grh-required-RC-INIT>RTR-AV-without-GRH",
        "grh-required-UC-INIT>RTR-AV-without-GRH",
    ]


def test_a_case_carries_what_its_run_needs() -> None:
    (case,) = [c for c in expand(ibv_modify_qp) if c.id == "out-of-range-RC-RTR>RTS-timeout=32"]
    assert (case.spec["start"], case.spec["step"], case.spec["expect"]) == ("RTR", "RTR>RTS", "reject")
    assert case.spec["bad"] == ("timeout", 32) and "IBV_QP_TIMEOUT" in case.spec["flags"]
    assert case.spec["vars"] == {"qp_type": "IBV_QPT_RC"} and case.transports == ("ib", "roce")


def test_changed_names_each_attribute_that_moved() -> None:
    assert changed({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 4}) == {"b": "2 -> 3", "c": "None -> 4"}
    assert changed({"a": 1}, {"a": 1}) == {}


def test_det_cases_are_generated_and_blocked() -> None:
    det = expand(det_modify_qp)
    assert len(det) == 10 and all(case.blocked and case.family == "det" for case in det)
    assert all(case.spec["counterpart"] == "ibv_modify_qp" for case in det)


if __name__ == "__main__":  # regenerate the golden file (see the module docstring)
    print("# Every stable case id the catalogue expands to (pytest_rdma.generate.expand over")
    print("# pytest_rdma.verbs.CATALOGUE). Regenerate: .venv/bin/python tests/unit/test_cases.py")
    print("\n".join(stable_ids()))
