"""The catalogue's self-validation, and every IBV_* name it uses checked against pyverbs and verbs.h."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_rdma.catalogue.flags import FLAG_SETS
from pytest_rdma.catalogue.model import Claim, Contract, Error, Param, Resource, Transition, Verb
from pytest_rdma.catalogue.validate import CatalogueError, ibv_names, validate

KINDS = frozenset({"probe"})
SETS = {"ibv_qp_attr_mask": {"IBV_QP_STATE": 1, "IBV_QP_PORT": 32}, "ibv_qp_type": {"IBV_QPT_RC": 2}}
HEADER = Path("/usr/include/infiniband/verbs.h")


def good_verb(**changes: Any) -> Verb:
    """A small well-formed entry; each test breaks one field of it."""
    verb = Verb(
        name="ibv_frob_qp",
        man="ibv_frob_qp(3)",
        prototype="int ibv_frob_qp(struct ibv_qp *qp, int attr_mask);",
        returns="errno",
        summary="frobnicate a QP",
        params=(Param("qp", "struct ibv_qp *"), Param("attr_mask", "int", flags="ibv_qp_attr_mask")),
        errors=(Error("EINVAL", "bad mask", covered_by=("bad-mask",)),
                Error("ENOMEM", "out of memory", untestable="cannot exhaust memory deterministically")),
        claims=(Claim("bad-mask", "probe", "an unknown mask bit is refused", "DESCRIPTION",
                      params={"qp_types": ["IBV_QPT_RC"], "mask": "IBV_QP_STATE | IBV_QP_PORT"}),
                Claim("atomic", "untestable", "nothing changes on failure", "NOTES",
                      untestable="no observer")),
        contract=Contract(requires=(Resource("qp", "INIT", role="qp"), Resource("pd", role="qp->pd")),
                          moves=(Transition("qp", "INIT", "RTR"), Transition("qp", "any", "RESET"),
                                 Transition("qp", "RTS", "requested"))),
        tables={"required": {"IBV_QPT_RC": ["IBV_QP_STATE"]}},
    )
    return dataclasses.replace(verb, **changes)


def problems(*verbs: Verb) -> list[str]:
    with pytest.raises(CatalogueError) as info:
        validate(verbs, kinds=KINDS, flag_sets=SETS)
    return info.value.problems


def test_a_well_formed_entry_validates() -> None:
    validate([good_verb()], kinds=KINDS, flag_sets=SETS)


def claim(**changes: Any) -> Claim:
    return dataclasses.replace(good_verb().claims[0], **changes)


BAD = {
    "unknown-flag-set": (
        {"params": (Param("attr_mask", "int", flags="ibv_qp_attr_msk"),)},
        "ibv_frob_qp: param 'attr_mask': unknown flag set 'ibv_qp_attr_msk' "
        "(known: ibv_qp_attr_mask, ibv_qp_type)"),
    "unknown-ibv-name-in-claim-params": (
        {"claims": (claim(params={"mask": "IBV_QP_STATE | IBV_QP_PROT"}),)},
        "ibv_frob_qp: claim 'bad-mask': params: unknown flag name IBV_QP_PROT"),
    "unknown-ibv-name-in-tables": (
        {"tables": {"required": {"IBV_QPT_RCC": []}}},
        "ibv_frob_qp: tables: unknown flag name IBV_QPT_RCC"),
    "unknown-check-kind": (
        {"claims": (claim(kind="foo"),)},
        "ibv_frob_qp: claim 'bad-mask': unknown check kind 'foo' (known: probe, untestable)"),
    "untestable-without-reason": (
        {"claims": (claim(), claim(id="atomic", kind="untestable"))},
        "ibv_frob_qp: claim 'atomic': kind 'untestable' needs a reason"),
    "kind-and-untestable-reason": (
        {"claims": (claim(untestable="because"),)},
        "ibv_frob_qp: claim 'bad-mask': has check kind 'probe' and an 'untestable' reason"),
    "claim-without-section": (
        {"claims": (claim(section=""),)},
        "ibv_frob_qp: claim 'bad-mask': 'section' is empty"),
    "duplicate-claim-id": (
        {"claims": (claim(), claim())},
        "ibv_frob_qp: claim 'bad-mask': duplicate claim id"),
    "covered-by-missing-claim": (
        {"errors": (Error("EINVAL", "bad", covered_by=("bad-mask", "no-such-claim")),)},
        "ibv_frob_qp: error EINVAL: covered_by: no claim 'no-such-claim' in ibv_frob_qp"),
    "error-not-accounted": (
        {"errors": (Error("EPERM", "not allowed"),)},
        "ibv_frob_qp: error EPERM: neither covered_by a claim nor marked untestable"),
    "not-an-errno": (
        {"errors": (Error("EFROB", "x", untestable="y"),)},
        "ibv_frob_qp: error EFROB: errno: 'EFROB' is not an errno name"),
    "unknown-resource-kind": (
        {"contract": Contract(requires=(Resource("queue_pair", "INIT"),))},
        "ibv_frob_qp: contract.requires: unknown resource kind 'queue_pair'"),
    "unknown-resource-state": (
        {"contract": Contract(produces=(Resource("qp", "READY"),))},
        "ibv_frob_qp: contract.produces: qp has no state 'READY'"),
    "role-not-a-parameter": (
        {"contract": Contract(requires=(Resource("qp", "INIT", role="queue"),))},
        "ibv_frob_qp: contract.requires: qp role 'queue' is not a parameter of ibv_frob_qp"),
    "kind-typo-gets-a-hint": (
        {"claims": (claim(kind="prob"),)},
        "ibv_frob_qp: claim 'bad-mask': unknown check kind 'prob' (did you mean 'probe'? known: probe, "),
    "transition-of-unknown-state": (
        {"contract": Contract(moves=(Transition("qp", "INIT", "READY"),))},
        "ibv_frob_qp: contract.moves: qp after state 'READY' is unknown"),
    "transition-of-unknown-resource": (
        {"contract": Contract(moves=(Transition("queue", "INIT", "RTR"),))},
        "ibv_frob_qp: contract.moves: unknown resource kind 'queue'"),
    "unknown-return-convention": (
        {"returns": "int"},
        "ibv_frob_qp: returns: 'int' is not a return convention"),
    "unknown-direction": (
        {"params": (Param("qp", "struct ibv_qp *", direction="both"),)},
        "ibv_frob_qp: param 'qp': direction 'both' is not one of in, out, inout"),
    "other-family-without-counterpart": (
        {"family": "det"},
        "ibv_frob_qp: counterpart: a 'det' verb must name its ibv counterpart"),
    "counterpart-not-in-catalogue": (
        {"family": "det", "counterpart": "ibv_frob"},
        "ibv_frob_qp: counterpart: 'ibv_frob' is not in the catalogue"),
    "unknown-family": (
        {"family": "ucx", "counterpart": "ibv_frob_qp"},
        "ibv_frob_qp: family: unknown API family 'ucx'"),
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
        validate([bad], kinds=KINDS, flag_sets=SETS)


def test_a_verb_described_twice_is_refused() -> None:
    assert "ibv_frob_qp: name: described twice" in problems(good_verb(), good_verb())


def test_a_counterpart_in_the_catalogue_is_accepted() -> None:
    det = good_verb(name="det_frob_qp", family="det", counterpart="ibv_frob_qp")
    validate([good_verb(), det], kinds=KINDS, flag_sets=SETS)


def test_the_catalogue_validates_itself_when_loaded() -> None:
    from pytest_rdma import verbs

    validate(verbs.CATALOGUE)  # the real kinds and flag sets
    source = Path(verbs.__file__).read_text()
    assert "\nvalidate(CATALOGUE)" in source


def _import_in_fresh_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parents[2])


def test_the_catalogue_loads_without_pyverbs() -> None:
    # A None entry in sys.modules makes any `import pyverbs...` raise ImportError.
    code = ("import sys\nfor m in ('pyverbs', 'pyverbs.enums', 'pyverbs.qp', 'pyverbs.device'):\n"
            "    sys.modules[m] = None\nimport pytest_rdma.verbs as v\nprint(len(v.CATALOGUE))")
    done = _import_in_fresh_python(code)
    assert done.returncode == 0, done.stderr


def test_the_catalogue_loads_after_the_check_kinds() -> None:
    # Importing the kinds first must not validate a half-registered kind table (import cycle).
    done = _import_in_fresh_python("import pytest_rdma.checks\nimport pytest_rdma.verbs\n")
    assert done.returncode == 0, done.stderr


# --- IBV_* names and values against pyverbs and <infiniband/verbs.h> ------------------------


def catalogue_ibv_names() -> dict[str, int | None]:
    """Every IBV_* name the catalogue uses: flag-set members with their value, others with None."""
    from pytest_rdma.verbs import CATALOGUE

    names: dict[str, int | None] = {}
    for verb in CATALOGUE:
        for name in ibv_names([verb.tables, [claim.params for claim in verb.claims]]):
            names.setdefault(name, None)
    for members in FLAG_SETS.values():
        names.update(members)
    return names


def test_the_catalogue_uses_ibv_names() -> None:
    # The cross-checks below would pass vacuously on an empty catalogue.
    assert len(catalogue_ibv_names()) >= 20


def pyverbs_mismatches(names: dict[str, int | None]) -> list[str]:
    enums = pytest.importorskip("pyverbs.enums", reason="pyverbs (python3-pyverbs) is not installed")
    wrong = []
    for name, value in sorted(names.items()):
        actual = getattr(enums, name, None)
        if actual is None:
            wrong.append(f"{name}: not in pyverbs.enums")
        elif value is not None and int(actual) != value:
            wrong.append(f"{name}: catalogue {value:#x}, pyverbs {int(actual):#x}")
    return wrong


def test_every_ibv_name_and_value_agrees_with_pyverbs() -> None:
    wrong = pyverbs_mismatches(catalogue_ibv_names())
    assert not wrong, "\n".join(wrong)


def test_the_pyverbs_cross_check_can_fail() -> None:
    assert pyverbs_mismatches({"IBV_QP_STATE": 2, "IBV_QP_STAET": None, "IBV_QPT_UD": 4}) == [
        "IBV_QP_STAET: not in pyverbs.enums", "IBV_QP_STATE: catalogue 0x2, pyverbs 0x1"]


def header_values(names: list[str], tmp_path: Path) -> dict[str, int]:
    """The values of `names` as the C compiler sees them through <infiniband/verbs.h>.

    Enumerators are not visible to the preprocessor, so a tiny program prints each one.
    """
    if not shutil.which("gcc"):
        pytest.skip("gcc is not installed: cannot read enum values from <infiniband/verbs.h>")
    if not HEADER.exists():
        pytest.skip(f"{HEADER} is absent (install libibverbs-dev)")
    lines = [f'    printf("%s %lld\\n", "{name}", (long long)({name}));' for name in names]
    source = tmp_path / "names.c"
    source.write_text("#include <stdio.h>\n#include <infiniband/verbs.h>\nint main(void) {\n"
                      + "\n".join(lines) + "\n    return 0;\n}\n")
    binary = tmp_path / "names"
    built = subprocess.run(["gcc", "-o", str(binary), str(source)], capture_output=True, text=True,
                           env={**os.environ, "LC_ALL": "C"})
    assert built.returncode == 0, "names unknown to verbs.h (gcc says):\n" + "\n".join(
        line for line in built.stderr.splitlines() if "undeclared" in line)
    out = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    return {name: int(value) for name, value in (line.split() for line in out.splitlines())}


def test_every_ibv_name_and_value_agrees_with_verbs_h(tmp_path: Path) -> None:
    names = catalogue_ibv_names()
    values = header_values(sorted(names), tmp_path)
    wrong = [f"{name}: catalogue {value:#x}, verbs.h {values[name]:#x}"
             for name, value in sorted(names.items()) if value is not None and values[name] != value]
    assert not wrong, "\n".join(wrong)


def test_the_header_cross_check_can_fail(tmp_path: Path) -> None:
    # The check above is only worth trusting if a misspelt name and a wrong value are caught.
    with pytest.raises(AssertionError, match="IBV_QP_STAET"):
        header_values(["IBV_QP_STATE", "IBV_QP_STAET"], tmp_path)
    # (a wrong value is caught by the comparison in the test above, as it is for pyverbs)
    assert header_values(["IBV_QP_PORT"], tmp_path) == {"IBV_QP_PORT": 1 << 5}
