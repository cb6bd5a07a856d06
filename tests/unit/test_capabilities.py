"""The capabilities a driver can be required to have: the vocabulary, its lookup, and what a check needs."""

from __future__ import annotations

import pytest

from pytest_rdma import capabilities
from pytest_rdma.capabilities import BY_NAME, VOCABULARY, UnknownCapability, lacking, lookup, names, of_spec
from pytest_rdma.catalogue.model import Cap, Var
from pytest_rdma.generate import expand
from pytest_rdma.verbs import CATALOGUE

# What a claim's `needs` may name that no one requires of a driver: the process running the check, a
# port's setting, what every device has, an attribute a case fills in, and a "zero" test (a need for absence).
NOT_REQUIRABLE = {
    "process.memlock",
    "process.unprivileged",
    "port.flags&IBV_QPF_GRH_REQUIRED",
    "attr.max_sge",
    "attr_ex.raw_packet_caps&{cap}",
}


def test_the_issue_s_names_are_in_the_vocabulary_each_with_its_attribute() -> None:
    for name in ("rc", "uc", "ud", "xrc", "raw_packet", "srq", "mw1", "mw2", "atomics", "odp", "flow"):
        assert name in BY_NAME
    assert lookup("srq").caps == (Cap("attr.max_srq"),)
    assert lookup("srq").attributes == "attr.max_srq != 0"
    assert lookup("ud").attributes == "transport in ib/roce"
    assert lookup("mw2").caps == (
        Cap("attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW_TYPE_2A|IBV_DEVICE_MEM_WINDOW_TYPE_2B"),
    )
    assert lookup("rc").attributes == "none: every verbs device has it"
    assert len({c.name for c in VOCABULARY}) == len(VOCABULARY)


def test_lookup_ignores_case_and_spaces_and_an_unknown_name_lists_the_known_ones() -> None:
    assert lookup(" SRQ ").name == "srq"
    with pytest.raises(UnknownCapability) as raised:
        lookup("srqs")
    assert str(raised.value) == f"unknown capability 'srqs' (known: {', '.join(capabilities.NAMES)})"
    assert isinstance(raised.value, ValueError)  # a setting's parse error: pytest's usage error
    assert names(["srq,ud", "mw2", "srq"]) == ("srq", "ud", "mw2")


def test_every_capability_a_claim_needs_has_a_name() -> None:
    needed: set[Cap] = set()
    for verb in CATALOGUE:
        for claim in verb.claims:
            if not isinstance(claim.needs, Var):
                needed.update(claim.needs)
    named = {cap for capability in VOCABULARY for cap in capability.caps}
    missing = sorted(
        cap.attr for cap in needed if cap not in named and cap.attr not in NOT_REQUIRABLE and cap.test == "nonzero"
    )
    transports = {cap for cap in needed if cap.test == "transport"}
    assert missing == []
    assert transports <= named


def _cases(verb_name: str) -> list:
    (verb,) = [verb for verb in CATALOGUE if verb.name == verb_name]
    return list(expand(verb))


def test_a_check_needs_the_capabilities_of_its_needs_and_its_qp_type() -> None:
    srq_cases = _cases("ibv_post_srq_recv")
    assert srq_cases and all("srq" in of_spec(case.spec) for case in srq_cases)
    qp_cases = {case.variant: of_spec(case.spec) for case in _cases("ibv_create_qp")}
    assert any("ud" in found for found in qp_cases.values())
    assert any("rc" in found and "ud" not in found for found in qp_cases.values())
    assert of_spec({"vars": {"qp_type": "IBV_QPT_UC"}, "needs": (Cap("attr.max_srq"),)}) == ("uc", "srq")
    # The QP type a call's struct field names ("qp_init_attr_ex.qp_type"), not only a variable's.
    assert of_spec({"call": {"qp_init_attr_ex.qp_type": "IBV_QPT_UD"}}) == ("ud",)
    # Its expectations and steps name no need (only where it says what it needs and makes).
    assert of_spec({"expect": ({"needs": (Cap("attr.max_srq"),)},)}) == ()
    # A gate the check judges both ways (advertised: succeeds; not: refused) is no need.
    assert of_spec({"params": {"gate": Cap("attr.max_srq")}}) == ()
    assert of_spec({"params": {"gate": Cap("attr.max_srq"), "only": "advertised"}}) == ("srq",)


def test_the_lacking_attribute_names_the_required_capability_the_check_is_about() -> None:
    transport = Cap("transport", "transport", ("ib", "roce"))
    assert lacking(transport, ["uc", "ud"], related=["ud"]) == ("ud",)
    assert lacking(transport, ["uc", "srq"], related=["ud"]) == ("uc",)  # none of its own: any it advertises
    assert lacking(Cap("attr.max_srq"), ["ud"]) == ()
    assert lacking(None, ["srq"]) == ()  # an answer, not an attribute, decided: nothing required fails
