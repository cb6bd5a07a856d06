"""The relations kinds' expansion (kinds/relations.py): pure, on the host."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_rdma import generate
from pytest_rdma.cases import Case
from pytest_rdma.catalogue.derived import derived_claims
from pytest_rdma.catalogue.params import read_params
from pytest_rdma.kinds import load  # noqa: F401  (registers every kind)
from pytest_rdma.kinds.relations import USE, FailurePathParams, ForeignPdParams, _across, _statuses_of
from pytest_rdma.verbs import CATALOGUE

CREATING = (
    "ibv_reg_mr",
    "ibv_alloc_mw",
    "ibv_create_cq",
    "ibv_create_srq",
    "ibv_create_qp",
    "ibv_create_ah",
    "ibv_reg_mr_iova",
    "ibv_create_srq_ex",
    "ibv_create_qp_ex",
)


def _cases(verb: str) -> list[Case]:
    (entry,) = [v for v in CATALOGUE if v.name == verb]
    return list(generate.expand(entry))


def test_each_refusal_of_a_creating_verb_has_its_failure_path() -> None:
    """One failure-path case per refused case, with the refused case's call, axes and steps, under its own id."""
    for verb in CREATING:
        cases = _cases(verb)
        # A refusal of the verb's defaults themselves (no call, no steps) has no request made right.
        refused = [c for c in cases if c.kind == "refused" and (c.spec["call"] or c.spec.get("steps"))]
        paths = {c.variant: c for c in cases if c.kind == "failure-path"}
        for case in refused:
            variant = f"after-{case.claim}" + (f"-{case.variant}" if case.variant else "")
            path = paths[variant]
            assert path.stable_id == f"test_{verb}[failure-then-normal-use-{variant}]"
            assert path.spec["call"] == case.spec["call"]
            assert path.spec.get("steps", ()) == case.spec.get("steps", ())
            assert path.spec.get("needs", ()) == case.spec.get("needs", ())
            assert path.axes == case.axes
            # Where the verb refuses its very defaults (create_ah on iWARP), no request is made right after it.
            unservable = {t for c in cases if c.kind == "refused" and not c.spec["call"] for t in c.transports}
            assert path.transports == tuple(t for t in case.transports if t not in unservable)


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


def test_a_derived_refusal_has_its_failure_path_where_the_defaults_are_served() -> None:
    """create_ah's static_rate outside ibv_rate (catalogue/derived.py) is followed by the normal use, on IB and
    RoCE: on iWARP create_ah refuses even its defaults."""
    (entry,) = [v for v in CATALOGUE if v.name == "ibv_create_ah"]
    assert [c.id for c in derived_claims(entry) if c.kind == "refused"] == ["enum-outside"]
    paths = {c.variant: c for c in _cases("ibv_create_ah") if c.kind == "failure-path"}
    for outside in ("beyond", "large"):
        path = paths[f"after-enum-outside-attr.static_rate-{outside}"]
        assert path.transports == ("ib", "roce")


def test_a_verb_no_failure_of_which_can_be_provoked_says_why_in_one_case() -> None:
    """alloc_pd and create_comp_channel take only the context: one case each, which says why it is not exercised."""
    for verb in ("ibv_alloc_pd", "ibv_create_comp_channel"):
        paths = [c for c in _cases(verb) if c.kind == "failure-path"]
        assert [c.stable_id for c in paths] == [f"test_{verb}[failure-then-normal-use-unprovoked]"]
        assert paths[0].spec["params"]["unprovoked"].startswith("the page names no cause")


def test_the_remote_key_of_another_pd_is_checked_on_every_transport_and_between_devices() -> None:
    """iWARP too (an STag of another PD), and with the responder on the peer device (--rdma-peer)."""
    cases = {c.stable_id: c for v in CATALOGUE for c in generate.expand(v) if c.kind == "foreign-pd"}
    for opcode in ("IBV_WR_RDMA_WRITE", "IBV_WR_RDMA_READ"):
        alone = cases[f"test_ibv_post_send[rkey-of-another-pd-RC-{opcode}]"]
        paired = cases[f"test_ibv_post_send[rkey-of-another-pd-between-devices-RC-{opcode}]"]
        assert "iwarp" in alone.transports and "iwarp" in paired.transports
        assert paired.spec["params"]["peer"] is True and paired.spec["params"]["foreign"] == "rkey"


def test_a_channel_serving_two_cqs_is_checked_on_rc_and_ud() -> None:
    ids = {c.stable_id for c in _cases("ibv_create_cq") if c.kind == "shared-channel"}
    assert ids == {
        "test_ibv_create_cq[channel-serves-two-cqs-RC-IBV_WR_SEND]",
        "test_ibv_create_cq[channel-serves-two-cqs-UD-IBV_WR_SEND]",
    }


def test_a_type_2_bind_across_pds_is_checked_for_the_region_and_the_window_where_type_2_is_advertised() -> None:
    cases = {c.stable_id: c for c in _cases("ibv_post_send") if c.kind == "foreign-pd-bind"}
    assert {name: (c.spec["params"]["foreign"], c.spec["params"].get("across", "pd")) for name, c in cases.items()} == {
        "test_ibv_post_send[bind-mw-region-of-another-pd-RC-type-2]": ("mr", "pd"),
        "test_ibv_post_send[bind-mw-window-of-another-pd-RC-type-2]": ("mw", "pd"),
        "test_ibv_post_send[bind-mw-region-of-another-context-RC-type-2]": ("mr", "context"),
        "test_ibv_post_send[bind-mw-window-of-another-context-RC-type-2]": ("mw", "context"),
    }
    for case in cases.values():
        # siw advertises no type 2 window: these end "unsupported" naming the attribute, not a pass.
        assert [cap.attr for cap in case.spec["needs"]] == [
            "attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW_TYPE_2A|IBV_DEVICE_MEM_WINDOW_TYPE_2B"
        ]


def test_on_iwarp_a_write_of_another_pds_rkey_may_complete_locally_and_a_read_flushed() -> None:
    """RFC 5040: a WRITE has no response (its completion is local); the Terminate's QP error flushes a READ."""
    p = ForeignPdParams(
        foreign="rkey",
        statuses=("IBV_WC_REM_ACCESS_ERR",),
        iwarp_statuses=("IBV_WC_REM_ACCESS_ERR", "IBV_WC_WR_FLUSH_ERR"),
        seed=1,
    )
    write = SimpleNamespace(op={"data": "remote"})
    read = SimpleNamespace(op={"data": "local"})
    iwarp, roce = (SimpleNamespace(dut=SimpleNamespace(transport=t)) for t in ("iwarp", "roce"))
    assert _statuses_of(roce, write, p) == ("IBV_WC_REM_ACCESS_ERR",)  # type: ignore[arg-type]
    assert _statuses_of(iwarp, read, p) == ("IBV_WC_REM_ACCESS_ERR", "IBV_WC_WR_FLUSH_ERR")  # type: ignore[arg-type]
    assert "IBV_WC_SUCCESS" in _statuses_of(iwarp, write, p)  # type: ignore[arg-type]
    cases = {c.stable_id: c for v in CATALOGUE for c in generate.expand(v) if c.kind == "foreign-pd"}
    for name in ("rkey-of-another-pd", "rkey-of-another-pd-between-devices"):
        case = cases[f"test_ibv_post_send[{name}-RC-IBV_WR_RDMA_READ]"]
        assert tuple(case.spec["params"]["iwarp_statuses"]) == p.iwarp_statuses


def test_each_foreign_pd_direction_is_also_checked_with_the_object_of_a_second_context() -> None:
    """The lkey (send and receive, SRQ too), the rkey (WRITE, READ, atomic) and the AH of another context of the
    device, each beside its another-PD claim with the same transports and statuses: the PD rules judge both."""
    cases = {c.stable_id: c for v in CATALOGUE for c in generate.expand(v) if c.kind == "foreign-pd"}
    pairs = {
        name.replace("another-pd", "another-context"): name
        for name in cases
        if "another-pd" in name and "between-devices" not in name
    }
    assert len(pairs) == 11
    for across, within in pairs.items():
        other, same = cases[across], cases[within]
        assert other.spec["params"]["across"] == "context" and "across" not in same.spec["params"]
        assert other.transports == same.transports
        assert other.spec["params"]["foreign"] == same.spec["params"]["foreign"]
        assert other.spec["params"]["statuses"] == same.spec["params"]["statuses"]
        assert other.spec.get("needs", ()) == same.spec.get("needs", ())


def test_an_unknown_across_is_the_catalogues_error() -> None:
    with pytest.raises(ValueError, match="across 'device': one of pd, context"):
        with _across(SimpleNamespace(), "device"):  # type: ignore[arg-type]
            pass


def test_create_qp_ex_is_made_right_on_iwarp_with_the_pd_only_request() -> None:
    """siw's provider has no create_qp_ex: on iWARP the failure paths' request made right is the one verbs.h hands
    to ibv_create_qp; elsewhere the verb's own defaults (which reach the provider's create_qp_ex)."""
    paths = [c for c in _cases("ibv_create_qp_ex") if c.kind == "failure-path"]
    assert len(paths) == 26
    for path in paths:
        params = read_params(FailurePathParams, path.spec["params"])
        assert params.iwarp_call == {"qp_init_attr_ex.comp_mask": "IBV_QP_INIT_ATTR_PD"}
        assert not params.unprovoked


def test_a_refusal_with_the_wrong_status_says_what_it_left_in_the_buffer() -> None:
    """The status decides a foreign-PD check; its deviation says beside it whether any byte of the target moved."""
    from pytest_rdma.calls.record import Handle
    from pytest_rdma.kinds.relations import _first_changed

    target = Handle("mr2", "mr", "struct ibv_mr *", 0x200)

    def scenario(now: bytes) -> SimpleNamespace:
        return SimpleNamespace(traffic=SimpleNamespace(content=lambda mr, length: now[:length]))

    assert _first_changed(scenario(bytes(8)), target, bytes(8)) == (None, "no byte of mr2 changed")  # type: ignore[arg-type]
    first, moved = _first_changed(scenario(b"\0\0\0\x2a\0\0\0\0"), target, bytes(8))  # type: ignore[arg-type]
    assert (first, moved) == (3, "byte 3 of mr2 changed (0x00 -> 0x2a)")
