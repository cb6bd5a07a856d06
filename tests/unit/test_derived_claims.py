"""Claims derived from the catalogue's enums (catalogue/derived.py): values outside each enum, the
inputs they reach, what they leave to hand-written claims, and that the catalogue's validation
accepts them."""

from __future__ import annotations

import dataclasses

from pytest_rdma.catalogue.derived import (
    CLAIM,
    INSIDE,
    derived_claims,
    documented_bits,
    is_outside,
    numeric,
    outside_values,
)
from pytest_rdma.catalogue.model import RETURNS_VOID, Claim, Flags, Param, Var, Verb
from pytest_rdma.catalogue.validate import validate
from pytest_rdma.generate import expand
from pytest_rdma.ibv.enums import ENUMS
from pytest_rdma.kinds.load import kind_schemas, known_kinds
from pytest_rdma.verbs import CATALOGUE


def _verb(**changes: object) -> Verb:
    base = Verb(
        name="ibv_frob",
        man="ibv_frob(3)",
        prototype="int ibv_frob(int access, enum ibv_mw_type type);",
        returns="errno",
        summary="frob",
        params=(
            Param("access", "int", default="IBV_ACCESS_LOCAL_WRITE", flags="ibv_access_flags"),
            Param("type", "enum ibv_mw_type", default="IBV_MW_TYPE_1", flags="ibv_mw_type"),
        ),
    )
    return dataclasses.replace(base, **changes)


def test_an_enum_gets_one_past_its_members_and_a_large_value() -> None:
    largest = max(ENUMS["ibv_mw_type"].values())
    assert outside_values("ibv_mw_type", "IBV_MW_TYPE_1") == [("beyond", largest + 1), ("large", 0x7FFFFFFF)]
    assert outside_values("ibv_rate", 0, size=1) == [("beyond", max(ENUMS["ibv_rate"].values()) + 1), ("large", 0xFF)]


def test_a_flag_set_gets_the_default_with_an_undocumented_bit() -> None:
    # Bits 20-29 are verbs.h's optional access range: documented, so the first bit beside is 30.
    assert documented_bits("ibv_access_flags") & (1 << 25)
    values = dict(outside_values("ibv_access_flags", "IBV_ACCESS_LOCAL_WRITE"))
    assert values == {
        "bit-beyond": Flags(("IBV_ACCESS_LOCAL_WRITE",), bits=(30,)),
        "bit31": Flags(("IBV_ACCESS_LOCAL_WRITE",), bits=(31,)),
    }
    assert all(is_outside("ibv_access_flags", numeric(v) or 0) for v in values.values())
    assert not is_outside("ibv_access_flags", numeric("IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ") or 0)


def test_each_input_becomes_a_case_with_a_readable_id() -> None:
    (claim,) = derived_claims(_verb())
    assert claim.id == CLAIM and claim.kind == "refused"
    variants = [case.variant for case in expand(_verb(claims=()))]
    assert variants == ["access-bit-beyond", "access-bit31", "type-beyond", "type-large"]


def test_what_a_claim_already_probes_is_left_to_it() -> None:
    probing = Claim(
        "unknown-type",
        "refused",
        "an unknown type is refused",
        "DESCRIPTION",
        over={"type": (0, 3)},
        variant="{type}",
        call={"type": Var("type")},
    )
    (claim,) = derived_claims(_verb(claims=(probing,)))
    assert {row[0] for row in claim.over[("field", "outside", "value")]} == {"access"}


def test_verbs_that_cannot_refuse_and_movers_derive_nothing() -> None:
    assert derived_claims(_verb(returns=RETURNS_VOID)) == ()
    modify_qp = next(v for v in CATALOGUE if v.name == "ibv_modify_qp")
    assert derived_claims(modify_qp) == ()


def test_the_catalogue_validates_with_its_derived_claims() -> None:
    derived = [dataclasses.replace(v, claims=(*v.claims, *derived_claims(v))) for v in CATALOGUE]
    assert sum(len(derived_claims(v)) for v in CATALOGUE) > 5
    validate(derived, kinds=known_kinds(), schemas=kind_schemas())


def test_an_output_field_of_an_enum_must_lie_inside_it() -> None:
    query_port = next(v for v in CATALOGUE if v.name == "ibv_query_port")
    inside = next(c for c in derived_claims(query_port) if c.id == INSIDE)
    rows = dict(inside.over[("field", "allowed")])
    assert rows["port_attr.state"] == tuple(sorted(ENUMS["ibv_port_state"].values()))
    assert rows["port_attr.port_cap_flags"] == documented_bits("ibv_port_cap_flags")  # a flag set: its bits
    assert inside.kind == "succeeds" and inside.expect[0].op == "inside"


def test_inside_compares_members_and_bits() -> None:
    from pytest_rdma.kinds.check import COMPARE

    inside = COMPARE["inside"]
    assert inside(2, (0, 1, 2)) and not inside(3, (0, 1, 2))
    assert inside(0b101, 0b111) and not inside(0b1000, 0b111)
