"""A new verb description whose claims use known kinds yields new checks, with no new test code.

The suite module is copied verbatim from suites/ into a scratch project; the only addition
is a module of Verb records (data, in the catalogue's vocabulary) named by the
`rdma_catalogue_extra` setting. Collection needs no RDMA device.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_rdma.generate import expand
from pytest_rdma.verbs import CATALOGUE

GOLDEN_IDS = [case.stable_id for verb in CATALOGUE for case in expand(verb)]

SUITES = Path(__file__).parents[2] / "suites"

# Illustrative entries, written the way an entry of pytest_rdma/verbs.py is. They are
# collected, never run: the plugin validates them with the catalogue at configure.
EXTRA_VERBS = """
from pytest_rdma.catalogue.model import (
    RETURNS_COUNT, RETURNS_ERRNO, Claim, Contract, Dev, Error, Need, Param, Resource, Step, Verb,
)

# Reads a port's P_Key table as ibv_query_pkey(3) does; its claim uses the "index-bounds" kind.
IBV_QUERY_PKEY_DEMO = Verb(
    name="ibv_query_pkey_demo",
    man="ibv_query_pkey(3)",
    prototype="int ibv_query_pkey_demo(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey);",
    returns=RETURNS_COUNT,
    summary="read entry `index` of a port's P_Key table",
    params=(
        Param("context", "struct ibv_context *", default=Need("context")),
        Param("port_num", "uint8_t", default=Dev("port_num")),
        Param("index", "int", default=0),
        Param("pkey", "__be16 *", "out"),
    ),
    errors=(Error("EINVAL", "the port or the index is out of range", covered_by=("pkey-index",)),),
    claims=(
        Claim("pkey-index", "KIND", "entries 0..pkey_tbl_len-1 answer; one past either end fails",
              "DESCRIPTION, RETURN VALUE", params={"length": "port.pkey_tbl_len", "base": 0, "index": "index"}),
    ),
    contract=Contract(requires=(Resource("context", role="context"),)),
)

# Frees a PD that a memory region still uses: the "refused" kind, with a step made first.
IBV_DEALLOC_PD_DEMO = Verb(
    name="ibv_dealloc_pd_demo",
    man="ibv_alloc_pd(3)",
    prototype="int ibv_dealloc_pd_demo(struct ibv_pd *pd);",
    returns=RETURNS_ERRNO,
    summary="free a protection domain",
    params=(Param("pd", "struct ibv_pd *", default=Need("pd")),),
    errors=(Error("EBUSY", "the PD is still used by a resource", covered_by=("busy",)),),
    claims=(
        Claim("busy", "refused", "a PD that a memory region still uses cannot be freed", "RETURN VALUE",
              over={"user": ("mr",)}, variant="while-{user}-registered", errnos=("EBUSY",),
              steps=(Step("ibv_reg_mr", {"pd": Need("pd")}, name="mr"),)),
    ),
)
VERBS = (IBV_QUERY_PKEY_DEMO, IBV_DEALLOC_PD_DEMO)
"""
# The cases the kinds expand those claims to: each end of the table and one past each; one per axis value.
NEW_CHECKS = sorted(
    [
        f"test_verbs.py::test_ibv_query_pkey_demo[pkey-index-pkey_tbl_len-{where}]"
        for where in ("first", "last", "one-past-end", "before-first")
    ]
    + ["test_verbs.py::test_ibv_dealloc_pd_demo[busy-while-mr-registered]"]
)


def scratch_project(pytester: pytest.Pytester, extra: str | None) -> None:
    """The shipped suite module, unchanged, plus (if given) the ini line naming the extra verbs."""
    suites = pytester.path / "suites"
    suites.mkdir(exist_ok=True)
    shutil.copy(SUITES / "test_verbs.py", suites / "test_verbs.py")
    pytester.makeini("[pytest]\n" + (f"rdma_catalogue_extra = {extra}\n" if extra else ""))
    pytester.syspathinsert()  # in-process runs import the extra module as a subprocess does, from here


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", *args, "suites")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    return [line.removeprefix("suites/") for line in result.stdout.lines if "::" in line]


def test_an_extra_verb_description_yields_new_checks(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(extra_verbs=EXTRA_VERBS.replace("KIND", "index-bounds"))
    scratch_project(pytester, None)
    before = collected(pytester)
    scratch_project(pytester, "extra_verbs:VERBS")
    after = collected(pytester)

    assert len(before) == len(GOLDEN_IDS)  # the catalogue's own checks (no device named: one each)
    assert sorted(set(after) - set(before)) == NEW_CHECKS
    assert set(before) <= set(after)  # and all of them are still there
    # The same from the command line and from the environment.
    scratch_project(pytester, None)
    assert sorted(set(collected(pytester, "--rdma-catalogue-extra", "extra_verbs:VERBS")) - set(before)) == NEW_CHECKS
    monkeypatch.setenv("RDMA_CATALOGUE_EXTRA", "extra_verbs:IBV_DEALLOC_PD_DEMO")
    assert sorted(set(collected(pytester)) - set(before)) == NEW_CHECKS[:1]


def test_an_extra_verb_with_an_unknown_kind_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(extra_verbs=EXTRA_VERBS.replace("KIND", "index-bouns"))
    scratch_project(pytester, "extra_verbs:VERBS")
    result = pytester.runpytest("--collect-only", "-q", "suites")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: rdma_catalogue_extra: the verb catalogue has 1 problem:",
            "  ibv_query_pkey_demo: claim 'pkey-index': unknown claim kind 'index-bouns' "
            "(did you mean 'index-bounds'?*",
        ]
    )
    assert "Traceback" not in result.stderr.str()


def test_an_extra_verb_that_breaks_the_catalogue_is_a_usage_error(pytester: pytest.Pytester) -> None:
    broken = EXTRA_VERBS.replace("KIND", "index-bounds").replace('Step("ibv_reg_mr"', 'Step("ibv_reg_mrr"')
    pytester.makepyfile(extra_verbs=broken.replace('name="ibv_dealloc_pd_demo"', 'name="ibv_dealloc_pd"'))
    scratch_project(pytester, "extra_verbs:VERBS")
    result = pytester.runpytest("--collect-only", "-q", "suites")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: rdma_catalogue_extra: the verb catalogue has 2 problems:",
            "  ibv_dealloc_pd: name: described twice",
            "  ibv_dealloc_pd: claim 'busy': step calls 'ibv_reg_mrr', which is not in the catalogue",
        ]
    )


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("no_such_module:VERBS", "rdma_catalogue_extra = 'no_such_module:VERBS': cannot load it*"),
        ("extra_verbs:NOPE", "rdma_catalogue_extra = 'extra_verbs:NOPE': cannot load it*"),
        (
            "extra_verbs:NOT_VERBS",
            "rdma_catalogue_extra = 'extra_verbs:NOT_VERBS': is neither a Verb nor a sequence of Verbs",
        ),
    ],
)
def test_an_extra_spec_that_names_no_verbs_is_a_usage_error(pytester: pytest.Pytester, spec: str, says: str) -> None:
    pytester.makepyfile(extra_verbs="NOT_VERBS = ('ibv_frob',)\n")
    scratch_project(pytester, spec)
    result = pytester.runpytest("--collect-only", "-q", "suites")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {says}"])


def test_a_verb_is_expanded_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Collection and the end-of-run report both ask for a verb's cases; the kinds expand it once."""
    import dataclasses

    from pytest_rdma import generate

    verb = dataclasses.replace(CATALOGUE[0])  # a verb object no earlier test expanded
    expanded: list[str] = []
    monkeypatch.setattr(generate, "_expand", lambda v: expanded.append(v.name) or [f"case of {v.name}"])
    first = expand(verb)
    first.append("changed by a caller")
    assert expand(verb) == [f"case of {verb.name}"] and expanded == [verb.name]
    # Another verb object, even one equal to it, is expanded for itself.
    assert expand(dataclasses.replace(verb)) == [f"case of {verb.name}"] and len(expanded) == 2
