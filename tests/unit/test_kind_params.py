"""A kind's declared params schema: validation names the claim, and a check reads its data typed."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import pytest

from pytest_rdma.catalogue.model import Verb
from pytest_rdma.catalogue.params import read_params, schema_problems


@dataclass(frozen=True)
class _Schema:
    opcode: str
    sges: int = 1


def test_unknown_and_missing_keys_are_named() -> None:
    problems = schema_problems(_Schema, {"sgez": 2})
    assert any("'sgez' is not a field of _Schema" in p for p in problems)
    assert any("'opcode' is required by _Schema" in p for p in problems)


def test_a_claim_that_fits_reads_back_typed() -> None:
    assert schema_problems(_Schema, {"opcode": "IBV_WR_SEND"}) == []
    assert read_params(_Schema, {"opcode": "IBV_WR_SEND", "sges": 3}) == _Schema("IBV_WR_SEND", 3)


def test_reading_params_that_do_not_fit_raises() -> None:
    with pytest.raises(ValueError, match="sgez"):
        read_params(_Schema, {"opcode": "x", "sgez": 1})


def test_validation_names_the_claim_whose_params_do_not_fit() -> None:
    from pytest_rdma.catalogue.validate import CatalogueError, validate
    from pytest_rdma.verbs import CATALOGUE

    verb = next(v for v in CATALOGUE if any(c.kind == "succeeds" for c in v.claims))
    claim = next(c for c in verb.claims if c.kind == "succeeds")
    with pytest.raises(CatalogueError, match=rf"claim {claim.id!r}: params: 'bogus'"):
        validate(
            [
                *CATALOGUE[: CATALOGUE.index(verb)],
                _with_params(verb, claim.id, {"bogus": 1}),
                *CATALOGUE[CATALOGUE.index(verb) + 1 :],
            ],
            kinds={"succeeds", *{c.kind for v in CATALOGUE for c in v.claims}},
            schemas={"succeeds": _Schema},
        )


def _with_params(verb: Verb, claim_id: str, params: dict[str, object]) -> Verb:

    claims = tuple(dataclasses.replace(c, params=params) if c.id == claim_id else c for c in verb.claims)
    return dataclasses.replace(verb, claims=claims)


# -- every kind declares its data, and the catalogue's data fits it -------------------------------
def test_every_registered_kind_declares_its_params() -> None:
    from pytest_rdma.kinds.load import KINDS

    undeclared = sorted(name for name, k in KINDS.items() if k.params is None)
    assert not undeclared, f"kinds without a params schema (kind(..., params=Schema)): {undeclared}"
    assert all(dataclasses.is_dataclass(k.params) for k in KINDS.values())


def test_every_case_of_the_catalogue_reads_its_params_typed() -> None:
    from pytest_rdma.kinds.load import KINDS
    from pytest_rdma.verbs import CATALOGUE

    problems = []
    read = 0
    for verb in CATALOGUE:
        for claim in verb.claims:
            if claim.kind not in KINDS:
                continue
            k = KINDS[claim.kind]
            for case in k.expand(verb, claim):
                assert k.params is not None
                try:
                    read_params(k.params, case.spec["params"])
                    read += 1
                except ValueError as exc:
                    problems.append(f"{case.stable_id}: {exc}")
    assert not problems, problems[:5]
    assert read > 1000


# -- values are of their field's type -----------------------------------------------------------
def test_a_value_of_another_type_is_named_with_its_field() -> None:
    with pytest.raises(ValueError, match=r"'sges' is 'two', not int as _Schema declares it"):
        read_params(_Schema, {"opcode": "IBV_WR_SEND", "sges": "two"})
    # A bool is not a count, though Python's bool is an int.
    assert any("'sges' is True" in p for p in schema_problems(_Schema, {"opcode": "x", "sges": True}))


def test_a_placeholder_passes_validation_and_is_checked_once_substituted() -> None:
    from pytest_rdma.catalogue.model import Var

    assert schema_problems(_Schema, {"opcode": "x", "sges": Var("sges")}) == []
    with pytest.raises(ValueError, match="'sges' is Var"):
        read_params(_Schema, {"opcode": "x", "sges": Var("sges")})


@dataclass(frozen=True)
class _Typed:
    side: Literal["send", "recv"] = "send"
    size: int | str = 64
    steps: tuple[str, ...] = ()
    attrs: Mapping[str, object] | None = None


def test_the_outer_types_a_schema_declares() -> None:
    assert schema_problems(_Typed, {"side": "recv", "size": "2*mtu", "steps": ["a"], "attrs": {"x": 1}}) == []
    problems = schema_problems(_Typed, {"side": "both", "size": 1.5, "steps": "a", "attrs": 3})
    assert [p.split("'")[1] for p in problems] == ["side", "size", "steps", "attrs"]


def test_validation_names_the_claim_whose_value_has_another_type() -> None:
    from pytest_rdma.catalogue.validate import CatalogueError, validate
    from pytest_rdma.kinds.load import kind_schemas, known_kinds
    from pytest_rdma.verbs import CATALOGUE

    verb = next(v for v in CATALOGUE if any(c.kind == "distinct" for c in v.claims))
    claim = next(c for c in verb.claims if c.kind == "distinct")
    changed = _with_params(verb, claim.id, {**claim.params, "count": "many"})
    with pytest.raises(CatalogueError, match=rf"claim {claim.id!r}: params: 'count' is 'many', not int"):
        validate([changed if v is verb else v for v in CATALOGUE], kinds=known_kinds(), schemas=kind_schemas())


# -- sub-behaviours are registered functions ------------------------------------------------------
def test_a_behaviour_is_found_by_its_name_and_an_unknown_one_names_the_known() -> None:
    from pytest_rdma.kinds.behaviours import Behaviours

    ways: Behaviours[Callable[[], str]] = Behaviours("way")

    @ways.register("left")
    def _left() -> str:
        return "went left"

    assert ways["left"]() == "went left"
    assert ways.names() == {"left"}
    with pytest.raises(ValueError, match="way 'right' is not one of: left"):
        ways["right"]
    with pytest.raises(ValueError, match="registered twice"):
        ways.register("left")(_left)


def test_the_kinds_with_sub_behaviours_register_them() -> None:
    from pytest_rdma.kinds.load import kind_behaviours

    named = kind_behaviours()
    assert len(named["state-table"]["rule"]) == 13
    assert {"over-max-wr", "sge-over-max", "inline-over-max", "outside", "state-reset"} == named["post-refused"][
        "problem"
    ]
    assert "bad-rkey" in named["access-fault"]["fault"]
    assert "dereg-region" in named["window"]["then"]


def _validate_with(verb_name: str, claim_id: str, **changes: object) -> None:
    from pytest_rdma.catalogue.validate import validate
    from pytest_rdma.kinds.load import kind_behaviours, kind_schemas, known_kinds
    from pytest_rdma.verbs import CATALOGUE

    verb = next(v for v in CATALOGUE if v.name == verb_name)
    claims = tuple(dataclasses.replace(c, **changes) if c.id == claim_id else c for c in verb.claims)
    changed = dataclasses.replace(verb, claims=claims)
    validate(
        [changed if v is verb else v for v in CATALOGUE],
        kinds=known_kinds(),
        schemas=kind_schemas(),
        behaviours=kind_behaviours(),
    )


def test_validation_names_the_claim_and_the_known_names_for_an_unknown_rule() -> None:
    from pytest_rdma.catalogue.validate import CatalogueError

    with pytest.raises(CatalogueError, match=r"claim 'zero-mask': params: rule 'zero-masks' is not one of .*zero-mask"):
        _validate_with("ibv_modify_qp", "zero-mask", params={"rule": "zero-masks"})


def test_validation_checks_each_value_of_the_axis_a_behaviour_is_named_by() -> None:
    from pytest_rdma.catalogue.model import Var
    from pytest_rdma.catalogue.validate import CatalogueError

    over = {"qp_type": ("IBV_QPT_RC",), ("problem", "bad"): (("sge-over-max", 0), ("sge-too-many", 1))}
    with pytest.raises(CatalogueError, match=r"claim 'bad-wr-first-failing': params: problem 'sge-too-many'"):
        _validate_with(
            "ibv_post_send",
            "bad-wr-first-failing",
            params={"queue": "send", "problem": Var("problem"), "bad": Var("bad"), "count": 2},
            over=over,
        )


# -- what the device read back, typed ---------------------------------------------------------------
def test_readback_accessors_refuse_another_shape() -> None:
    from pytest_rdma.calls.readback import number, number_at

    assert number_at({"cap": {"max_send_wr": 8}}, "cap", "max_send_wr") == 8
    with pytest.raises(TypeError, match="cap.max_send_wr: b'8' is not a number"):
        number_at({"cap": {"max_send_wr": b"8"}}, "cap", "max_send_wr")
    with pytest.raises(TypeError, match="cap: 8 is not a struct"):
        number_at({"cap": 8}, "cap", "max_send_wr")
    assert number(3) == 3


def test_an_object_read_back_is_an_object_the_check_holds() -> None:
    from pytest_rdma.calls.readback import handle
    from pytest_rdma.calls.record import Handle

    qp = Handle("qp0", "qp", "struct ibv_qp *", 0x1000)
    assert handle(qp) is qp
    with pytest.raises(TypeError, match="the QP ex: None is not an object the check holds"):
        handle(None, "the QP ex")
