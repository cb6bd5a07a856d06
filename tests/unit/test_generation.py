"""A new verb description whose claims use known check kinds yields new checks, with no new test code.

The suite module and its conftest are copied verbatim from suites/ into a scratch project;
the only addition is a module of Verb records named by the `rdma_catalogue_extra` ini
option. Collection needs no RDMA device.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SUITES = Path(__file__).parents[2] / "suites"

# An illustrative entry, written the way an entry of pytest_rdma/verbs.py is: a verb that
# reads a port's P_Key table as ibv_query_pkey(3) does, whose one claim uses the existing
# "index-bounds" kind (pytest_rdma/checks/device_basics.py). It is collected, never run.
EXTRA_VERBS = """
from pytest_rdma.catalogue.model import RETURNS_COUNT, Claim, Contract, Error, Param, Resource, Verb

IBV_QUERY_PKEY_DEMO = Verb(
    name="ibv_query_pkey_demo",
    man="ibv_query_pkey(3)",
    prototype="int ibv_query_pkey_demo(struct ibv_context *ctx, uint8_t port, int index, uint16_t *pkey);",
    returns=RETURNS_COUNT,
    summary="read entry `index` of a port's P_Key table",
    params=(Param("context", "struct ibv_context *"), Param("port_num", "uint8_t"), Param("index", "int"),
            Param("pkey", "uint16_t *", "out")),
    errors=(Error("EINVAL", "the port or the index is out of range", covered_by=("pkey-index",)),),
    claims=(Claim("pkey-index", "KIND", "entries 0..pkey_tbl_len-1 answer; one past either end fails",
                  "DESCRIPTION, RETURN VALUE",
                  params={"method": "query_pkey", "with_port": True, "length": "port_attr.pkey_tbl_len",
                          "base": 0}),),
    contract=Contract(requires=(Resource("context", role="context"),)),
)
VERBS = (IBV_QUERY_PKEY_DEMO,)
"""
# The cases "index-bounds" expands that claim to: each end of the table and one past each.
NEW_CHECKS = [f"suites/test_verbs.py::test_ibv_query_pkey_demo[pkey-index-pkey_tbl_len-{where}]"
              for where in ("before-first", "first", "last", "one-past-end")]


def scratch_project(pytester: pytest.Pytester, extra: str | None) -> None:
    """The shipped suite, unchanged, plus (if given) the ini line naming the extra verbs."""
    suites = pytester.path / "suites"
    suites.mkdir(exist_ok=True)
    for name in ("test_verbs.py", "conftest.py"):
        shutil.copy(SUITES / name, suites / name)
    pytester.makeini("[pytest]\n" + (f"rdma_catalogue_extra = {extra}\n" if extra else ""))
    pytester.syspathinsert()


def collected(pytester: pytest.Pytester) -> list[str]:
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider", "suites")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    return [line for line in result.stdout.lines if "::" in line]


def test_an_extra_verb_description_yields_new_checks(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(extra_verbs=EXTRA_VERBS.replace("KIND", "index-bounds"))
    scratch_project(pytester, None)
    before = collected(pytester)
    scratch_project(pytester, "extra_verbs:VERBS")
    after = collected(pytester)

    assert len(before) >= 300  # the catalogue's own checks
    assert sorted(set(after) - set(before)) == NEW_CHECKS
    assert set(before) <= set(after)  # and all of them are still there


def test_an_extra_verb_with_an_unknown_kind_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(extra_verbs=EXTRA_VERBS.replace("KIND", "index-bouns"))
    scratch_project(pytester, "extra_verbs:VERBS")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "suites")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*rdma_catalogue_extra*",
                                 "*ibv_query_pkey_demo: claim 'pkey-index': unknown check kind 'index-bouns' "
                                 "(did you mean 'index-bounds'?*"])


def test_an_extra_spec_that_names_nothing_is_a_usage_error(pytester: pytest.Pytester) -> None:
    scratch_project(pytester, "no_such_module:VERBS")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "suites")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*rdma_catalogue_extra = no_such_module:VERBS: cannot load it*"])
