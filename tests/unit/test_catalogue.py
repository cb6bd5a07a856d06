"""The catalogue validates, and validation refuses every kind of malformed entry, naming verb and field.

Every IBV_* name a claim uses must be a member of an enum of the installed verbs.h: those values
live in pytest_rdma.ibv.enums, which tests/unit/test_ibv_abi.py proves against the header with gcc.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_rdma.catalogue.model import (
    Claim,
    Contract,
    Dev,
    Error,
    Param,
    Resource,
    Step,
    Transition,
    Var,
    Verb,
)
from pytest_rdma.catalogue.validate import CatalogueError, ibv_names, validate
from pytest_rdma.ibv.enums import VALUES
from pytest_rdma.kinds.load import known_kinds

KINDS = frozenset({"probe"})


def good_verb(**changes: Any) -> Verb:
    """A small well-formed entry; each test breaks one field of it."""
    verb = Verb(
        name="ibv_frob_qp",
        man="ibv_frob_qp(3)",
        prototype="int ibv_frob_qp(struct ibv_qp *qp, int attr_mask);",
        returns="errno",
        summary="frobnicate a QP",
        params=(Param("qp", "struct ibv_qp *"), Param("attr_mask", "int", flags="ibv_qp_attr_mask")),
        errors=(
            Error("EINVAL", "bad mask", covered_by=("bad-mask",)),
            Error("ENOMEM", "out of memory", untestable="cannot exhaust memory deterministically"),
        ),
        claims=(
            Claim(
                "bad-mask",
                "probe",
                "an unknown mask bit is refused",
                "DESCRIPTION",
                over={"bit": (21, 22)},
                variant="bit{bit}",
                call={"attr_mask": "IBV_QP_STATE | IBV_QP_PORT"},
            ),
            Claim("atomic", "untestable", "nothing changes on failure", "NOTES", untestable="no observer"),
        ),
        contract=Contract(
            requires=(Resource("qp", "INIT", role="qp"),),
            moves=(Transition("qp", "INIT", "RTR"), Transition("qp", "any", "RESET")),
        ),
    )
    return dataclasses.replace(verb, **changes)


def claim(**changes: Any) -> Claim:
    return dataclasses.replace(good_verb().claims[0], **changes)


def problems(*verbs: Verb) -> list[str]:
    with pytest.raises(CatalogueError) as info:
        validate(verbs, kinds=KINDS)
    return info.value.problems


def test_the_catalogue_validates() -> None:
    from pytest_rdma.verbs import CATALOGUE

    validate(CATALOGUE, kinds=known_kinds())


def test_a_well_formed_entry_validates() -> None:
    validate([good_verb()], kinds=KINDS)


BAD = {
    "unknown-enum": (
        {"params": (Param("attr_mask", "int", flags="ibv_qp_attr_msk"),)},
        "ibv_frob_qp: param 'attr_mask': flags 'ibv_qp_attr_msk' is not an enum of verbs.h",
    ),
    "unknown-ibv-name-in-a-call": (
        {"claims": (claim(call={"attr_mask": "IBV_QP_STATE | IBV_QP_PROT"}),)},
        "ibv_frob_qp: claim 'bad-mask': unknown flag or enum member IBV_QP_PROT",
    ),
    "unknown-ibv-name-in-tables": (
        {"tables": {"required": {"IBV_QPT_RCC": []}}},
        "ibv_frob_qp: tables: unknown flag or enum member IBV_QPT_RCC",
    ),
    "unknown-kind": (
        {"claims": (claim(kind="foo"),)},
        "ibv_frob_qp: claim 'bad-mask': unknown claim kind 'foo' (known: probe, untestable)",
    ),
    "kind-typo-gets-a-hint": (
        {"claims": (claim(kind="prob"),)},
        "ibv_frob_qp: claim 'bad-mask': unknown claim kind 'prob' (did you mean 'probe'?",
    ),
    "untestable-without-reason": (
        {"claims": (claim(), claim(id="atomic", kind="untestable"))},
        "ibv_frob_qp: claim 'atomic': kind 'untestable' needs a reason",
    ),
    "kind-and-untestable-reason": (
        {"claims": (claim(untestable="because"),)},
        "ibv_frob_qp: claim 'bad-mask': has kind 'probe' and an 'untestable' reason",
    ),
    "claim-without-section": ({"claims": (claim(section=""),)}, "ibv_frob_qp: claim 'bad-mask': 'section' is empty"),
    "section-names-the-page-again": (
        {"claims": (claim(section="ibv_frob_qp(3) NOTES"),)},
        "ibv_frob_qp: claim 'bad-mask': section 'ibv_frob_qp(3) NOTES' names a page",
    ),
    "unknown-transport": (
        {"claims": (claim(transports=("ib", "roce", "omnipath")),)},
        "ibv_frob_qp: claim 'bad-mask': transports: 'omnipath' is not one of ib, roce, iwarp",
    ),
    "unknown-layer": (
        {"claims": (claim(layer="firmware"),)},
        "ibv_frob_qp: claim 'bad-mask': layer 'firmware' is not one of provider, kernel, libibverbs",
    ),
    "variant-names-no-axis": (
        {"claims": (claim(variant="{qp_type}-bit{bit}"),)},
        "ibv_frob_qp: claim 'bad-mask': variant '{qp_type}-bit{bit}' names {qp_type}, which is not an axis",
    ),
    "var-names-no-axis": (
        {"claims": (claim(call={"attr_mask": Var("mask")}),)},
        "ibv_frob_qp: claim 'bad-mask': Var('mask') is not an axis of the claim nor a variable of ibv_frob_qp",
    ),
    "zipped-axis-of-the-wrong-width": (
        {"claims": (claim(over={("a", "b"): ((1, 2), (3,))}, variant=""),)},
        "ibv_frob_qp: claim 'bad-mask': over[('a', 'b')]: each value must be a tuple of 2",
    ),
    "device-fact-of-an-unknown-root": (
        {"claims": (claim(call={"attr_mask": Dev("device.max_qp")}),)},
        "ibv_frob_qp: claim 'bad-mask': Dev('device.max_qp'): a device fact starts with one of",
    ),
    "step-of-a-verb-not-in-the-catalogue": (
        {"claims": (claim(steps=(Step("ibv_frob_pd"),)),)},
        "ibv_frob_qp: claim 'bad-mask': step calls 'ibv_frob_pd', which is not in the catalogue",
    ),
    "duplicate-claim-id": ({"claims": (claim(), claim())}, "ibv_frob_qp: claim 'bad-mask': duplicate claim id"),
    "covered-by-missing-claim": (
        {"errors": (Error("EINVAL", "bad", covered_by=("bad-mask", "no-such-claim")),)},
        "ibv_frob_qp: error EINVAL: covered_by: no claim 'no-such-claim' in ibv_frob_qp",
    ),
    "error-not-accounted": (
        {"errors": (Error("EPERM", "not allowed"),)},
        "ibv_frob_qp: error EPERM: neither covered_by a claim nor marked untestable",
    ),
    "not-an-errno": (
        {"errors": (Error("EFROB", "x", untestable="y"),)},
        "ibv_frob_qp: error EFROB: errno: 'EFROB' is not an errno",
    ),
    "unknown-resource-kind": (
        {"contract": Contract(requires=(Resource("queue_pair", "INIT"),))},
        "ibv_frob_qp: contract.requires: unknown resource kind 'queue_pair'",
    ),
    "unknown-resource-state": (
        {"contract": Contract(produces=(Resource("qp", "READY"),))},
        "ibv_frob_qp: contract.produces: qp has no state 'READY'",
    ),
    "role-not-a-parameter": (
        {"contract": Contract(requires=(Resource("qp", "INIT", role="queue"),))},
        "ibv_frob_qp: contract.requires: qp role 'queue' is not a parameter of ibv_frob_qp",
    ),
    "destroyed-by-a-verb-not-in-the-catalogue": (
        {"contract": Contract(produces=(Resource("qp"),), destroyed_by="ibv_unfrob_qp")},
        "ibv_frob_qp: contract.destroyed_by: 'ibv_unfrob_qp' is not in the catalogue",
    ),
    "transition-of-unknown-state": (
        {"contract": Contract(moves=(Transition("qp", "INIT", "READY"),))},
        "ibv_frob_qp: contract.moves: qp after state 'READY' is unknown",
    ),
    "unknown-return-convention": ({"returns": "int"}, "ibv_frob_qp: returns: 'int' is not a return convention"),
    "unknown-direction": (
        {"params": (Param("qp", "struct ibv_qp *", direction="both"),)},
        "ibv_frob_qp: param 'qp': direction 'both' is not one of in, out, inout",
    ),
    "other-family-without-counterpart": (
        {"family": "det"},
        "ibv_frob_qp: counterpart: a 'det' verb must name its ibv counterpart",
    ),
    "unknown-family": (
        {"family": "ucx", "counterpart": "ibv_frob_qp"},
        "ibv_frob_qp: family: unknown API family 'ucx'",
    ),
}


@pytest.mark.parametrize("changes, message", list(BAD.values()), ids=list(BAD))
def test_a_malformed_entry_is_refused_naming_verb_and_field(changes: dict[str, Any], message: str) -> None:
    found = problems(good_verb(**changes))
    assert any(problem.startswith(message) for problem in found), found


def test_every_problem_is_reported_at_once() -> None:
    bad = good_verb(returns="int", claims=(claim(kind="foo"),))
    found = problems(bad)
    assert len(found) == 2, found
    with pytest.raises(CatalogueError, match=r"2 problems:\n  ibv_frob_qp: returns"):
        validate([bad], kinds=KINDS)


def test_a_verb_described_twice_is_refused() -> None:
    assert "ibv_frob_qp: name: described twice" in problems(good_verb(), good_verb())


def test_a_counterpart_in_the_catalogue_is_accepted() -> None:
    validate([good_verb(), good_verb(name="det_frob_qp", family="det", counterpart="ibv_frob_qp")], kinds=KINDS)


def test_a_name_still_to_be_filled_is_not_checked_but_a_whole_one_is() -> None:
    assert ibv_names(("IBV_QPS_{state}", "IBV_QP_STATE")) == {"IBV_QP_STATE"}


def test_every_ibv_name_the_catalogue_uses_is_a_member_of_verbs_h() -> None:
    from pytest_rdma.verbs import CATALOGUE

    used = set()
    for verb in CATALOGUE:
        used |= ibv_names(
            (
                verb.tables,
                [(c.call, c.expect, c.steps, c.params, c.over, c.needs) for c in verb.claims],
                [p.default for p in verb.params],
            )
        )
    assert len(used) >= 40  # the check below is not vacuous
    assert not sorted(used - set(VALUES))


def _fresh_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2]
    )


def test_the_catalogue_is_data_it_loads_without_pytest_ctypes_bindings_or_kinds() -> None:
    # A None entry in sys.modules makes an import of it raise ImportError.
    code = (
        "import sys\nfor m in ('pytest', 'ctypes', 'pytest_rdma.kinds', 'pytest_rdma.calls', 'pyverbs'):\n"
        "    sys.modules[m] = None\nimport pytest_rdma.verbs as v\nprint(len(v.CATALOGUE))"
    )
    done = _fresh_python(code)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 20
