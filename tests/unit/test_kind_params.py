"""A kind's declared params schema: validation names the claim, and a check reads its data typed."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

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
