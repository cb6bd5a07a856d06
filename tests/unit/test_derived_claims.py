"""Claims derived from the catalogue's enums (catalogue/derived.py): values outside each enum, the
inputs they reach, what they leave to hand-written claims, and that the catalogue's validation
accepts them."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from pytest_rdma.catalogue.derived import (
    CLAIM,
    INSIDE,
    NOT_DERIVED,
    OBJECTS,
    census,
    derived_claims,
    documented_bits,
    is_outside,
    numeric,
    outside_values,
    reported_outside,
)
from pytest_rdma.catalogue.model import RETURNS_VOID, Claim, Flags, Param, Var, Verb
from pytest_rdma.catalogue.validate import validate
from pytest_rdma.generate import expand
from pytest_rdma.ibv.enums import ENUMS, VALUES
from pytest_rdma.kinds.load import kind_schemas, known_kinds
from pytest_rdma.verbs import CATALOGUE

VERBS_H = Path("/usr/include/infiniband/verbs.h")


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


def test_verbs_that_cannot_refuse_derive_nothing() -> None:
    assert derived_claims(_verb(returns=RETURNS_VOID)) == ()
    assert all("cannot fail" in field.skip for field in census(_verb(returns=RETURNS_VOID)))


def test_a_movers_fields_go_to_the_state_table_on_the_first_move_that_takes_them() -> None:
    modify_qp = next(v for v in CATALOGUE if v.name == "ibv_modify_qp")
    (claim,) = derived_claims(modify_qp)
    assert claim.id == CLAIM and claim.kind == "state-table" and claim.params["rule"] == "enum-outside"
    rows = {(field, name): (flag, value) for flag, field, name, value in claim.params["outside"]}
    assert rows[("path_mtu", "large")] == ("IBV_QP_PATH_MTU", 0x7FFFFFFF)
    assert ("path_mtu", "beyond") not in rows  # out-of-range's table already gives path_mtu 6
    assert rows[("ah_attr.static_rate", "large")] == ("IBV_QP_AV", 0xFF)  # a uint8_t
    assert not any(field == "qp_state" for field, _ in rows)  # state-outside-enum-refused's
    ids = [case.variant for case in expand(modify_qp) if case.claim == CLAIM]
    assert "RC-INIT>RTR-path_mtu-large" in ids and "RC-RESET>INIT-qp_access_flags-bit31" in ids
    assert not any(variant.startswith("UD-") and "path_mtu" in variant for variant in ids)  # UD takes no MTU


def test_a_send_wrs_fields_are_posted_in_a_list() -> None:
    post_send = next(v for v in CATALOGUE if v.name == "ibv_post_send")
    (claim,) = derived_claims(post_send)
    assert claim.kind == "post-refused" and claim.params["problem"] == "outside"
    rows = {(field, name): value for field, name, value in claim.over[("field", "outside", "value")]}
    assert rows[("opcode", "beyond")] == max(ENUMS["ibv_wr_opcode"].values()) + 1
    assert is_outside("ibv_send_flags", rows[("send_flags", "bit-beyond")])


def test_every_enum_typed_input_and_output_is_judged_or_says_why_not() -> None:
    """The census: each enum-typed argument or field of every verb has a derived claim's case, or a
    reason no derived claim judges it."""
    unjudged = []
    for verb in CATALOGUE:
        derived = derived_claims(verb)
        for field in census(verb):
            if field.skip:
                continue
            if not any(_names(claim, field.path) for claim in derived):
                unjudged.append(f"{verb.name} {field.path}")
    assert not unjudged, f"enum-typed fields without a derived case or a reason: {unjudged}"


def _names(claim: Claim, path: str) -> bool:
    """Whether a derived claim has a case about the argument or field at `path`."""
    leaf = path.split(".", 1)[-1]
    if claim.kind == "state-table":
        return any(field == leaf for _, field, _, _ in claim.params["outside"])
    rows = (
        next(iter(claim.over.values())) if claim.kind != "post-refused" else claim.over[("field", "outside", "value")]
    )
    return any(row[0] in (path, leaf) for row in rows if isinstance(row, tuple))


def _header_enum_fields(struct: str) -> dict[str, str]:
    """The fields of a verbs.h struct typed by an enum, or naming one in their comment."""
    text = VERBS_H.read_text()
    found = re.search(rf"struct {struct}\s*{{", text)
    if not found:
        return {}
    depth, end = 1, found.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        end += 1
    fields = {}
    for line in text[found.end() : end].splitlines():
        typed = re.search(r"enum (ibv_\w+)\s+\*?\s*(\w+)\s*;", line) or re.search(r"(\w+)\s*;.*enum (ibv_\w+)", line)
        if typed:
            enum, name = typed.groups() if typed.re.pattern.startswith("enum") else typed.groups()[::-1]
            fields[name] = enum
    return fields


@pytest.mark.skipif(not VERBS_H.exists(), reason=f"{VERBS_H} is missing (apt-get install libibverbs-dev)")
def test_every_enum_field_verbs_h_gives_a_struct_the_catalogue_names_is_in_the_census() -> None:
    missing = []
    for verb in CATALOGUE:
        listed = {field.path for field in census(verb)}
        for param in verb.params:
            struct = param.ctype.replace("const ", "").replace("struct ", "").replace("*", "").strip()
            if "*" not in param.ctype or struct in OBJECTS:
                continue
            for name in _header_enum_fields(struct):
                path = f"{param.name}.{name}"
                if path not in listed and (verb.name, path) not in NOT_DERIVED:
                    missing.append(f"{verb.name} {path}")
    assert not missing, f"enum-typed fields of verbs.h the census does not list: {missing}"


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


def test_a_reported_completion_or_event_is_judged_inside_its_enums() -> None:
    success, error = VALUES["IBV_WC_SUCCESS"], VALUES["IBV_WC_WR_FLUSH_ERR"]
    recv_imm = {"status": success, "opcode": VALUES["IBV_WC_RECV"], "wc_flags": VALUES["IBV_WC_WITH_IMM"]}
    assert reported_outside("ibv_wc", recv_imm) is None
    assert reported_outside("ibv_wc", {**recv_imm, "wc_flags": 1 << 12}) == ("wc_flags", 1 << 12)
    assert reported_outside("ibv_wc", {**recv_imm, "opcode": 42}) == ("opcode", 42)
    assert reported_outside("ibv_wc", {**recv_imm, "status": 99}) == ("status", 99)
    # In error only wr_id, status, qp_num and vendor_err are valid (ibv_poll_cq(3)): the rest is not judged.
    assert reported_outside("ibv_wc", {"status": error, "opcode": 42, "wc_flags": 1 << 12}) is None
    assert reported_outside("ibv_async_event", {"event_type": VALUES["IBV_EVENT_CQ_ERR"]}) is None
    assert reported_outside("ibv_async_event", {"event_type": 77}) == ("event_type", 77)
