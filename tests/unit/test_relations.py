"""The relations kinds' expansion (kinds/relations.py): pure, on the host."""

from __future__ import annotations

from pytest_rdma import generate
from pytest_rdma.cases import Case
from pytest_rdma.kinds import load  # noqa: F401  (registers every kind)
from pytest_rdma.kinds.relations import USE
from pytest_rdma.verbs import CATALOGUE

CREATING = (
    "ibv_reg_mr",
    "ibv_alloc_mw",
    "ibv_create_cq",
    "ibv_create_srq",
    "ibv_create_qp",
    "ibv_create_ah",
)


def _cases(verb: str) -> list[Case]:
    (entry,) = [v for v in CATALOGUE if v.name == verb]
    return list(generate.expand(entry))


def test_each_refusal_of_a_creating_verb_has_its_failure_path() -> None:
    """One failure-path case per refused case, with the refused case's call, axes and steps, under its own id."""
    for verb in CREATING:
        cases = _cases(verb)
        # A refusal of the verb's defaults themselves (no call, no steps) has no request made right.
        # The page's own refusals: the derived ones (catalogue/derived.py: a value outside an enum) have none.
        own = {claim.id for v in CATALOGUE if v.name == verb for claim in v.claims}
        refused = [
            c for c in cases if c.kind == "refused" and c.claim in own and (c.spec["call"] or c.spec.get("steps"))
        ]
        paths = {c.variant: c for c in cases if c.kind == "failure-path"}
        for case in refused:
            variant = f"after-{case.claim}" + (f"-{case.variant}" if case.variant else "")
            path = paths[variant]
            assert path.stable_id == f"test_{verb}[failure-then-normal-use-{variant}]"
            assert path.spec["call"] == case.spec["call"]
            assert path.spec.get("steps", ()) == case.spec.get("steps", ())
            assert path.spec.get("needs", ()) == case.spec.get("needs", ())
            assert path.axes == case.axes
            assert path.transports == case.transports


def test_a_refusal_of_the_defaults_has_no_failure_path() -> None:
    """ibv_create_ah on iWARP refuses its defaults: there is nothing to make right after it."""
    variants = {c.variant for c in _cases("ibv_create_ah") if c.kind == "failure-path"}
    assert "after-iwarp-has-none-iwarp" not in variants
    assert "after-grh-required-is_global-0" in variants


def test_a_failure_path_claim_with_a_call_of_its_own_adds_its_cases() -> None:
    """ibv_create_cq has no refused claim: its failure paths are the claim's own limits."""
    variants = sorted(c.variant for c in _cases("ibv_create_cq") if c.kind == "failure-path")
    assert variants == ["after-comp_vector-past-last", "after-cqe-above-max_cqe"]


def test_every_made_kind_is_used_by_a_verb_that_takes_it() -> None:
    """The use table names real verbs and parameters of the catalogue."""
    verbs = {v.name: v for v in CATALOGUE}
    for kind, (verb, param, args) in USE.items():
        names = {p.name for p in verbs[verb].params}
        assert param in names, (kind, verb, param)
        assert set(args) <= names, (kind, verb, args)


def test_foreign_pd_claims_name_each_direction() -> None:
    """Send, receive, SRQ receive, remote key and address handle: each direction has a case."""
    ids = {c.stable_id for v in CATALOGUE for c in generate.expand(v) if c.kind == "foreign-pd"}
    for wanted in (
        "test_ibv_post_send[lkey-of-another-pd-RC-IBV_WR_SEND]",
        "test_ibv_post_send[rkey-of-another-pd-RC-IBV_WR_RDMA_WRITE]",
        "test_ibv_post_send[rkey-of-another-pd-RC-IBV_WR_RDMA_READ]",
        "test_ibv_post_send[atomic-rkey-of-another-pd-RC-IBV_WR_ATOMIC_FETCH_AND_ADD]",
        "test_ibv_post_send[ah-of-another-pd-UD-IBV_WR_SEND]",
        "test_ibv_post_recv[lkey-of-another-pd-RC-IBV_WR_SEND]",
        "test_ibv_post_srq_recv[lkey-of-another-pd-RC-IBV_WR_SEND]",
    ):
        assert wanted in ids
