"""The rdma_claim marker of users' own tests (parsed on any host), and the usage errors of the pyverbs
fixtures: a malformed marker, and pyverbs missing, each one line naming what to do."""

from __future__ import annotations

import pytest

from pytest_rdma.catalogue.model import Cap
from pytest_rdma.user_claims import UserClaim, parse


def test_a_claim_with_one_capability() -> None:
    claim = parse((), {"page": "ibv_reg_mr(3)", "section": "DESCRIPTION", "needs": "attr.max_mr"}, None)
    assert claim == UserClaim("ibv_reg_mr(3)", "DESCRIPTION", (Cap("attr.max_mr"),), "")
    assert (claim.verb, claim.ref) == ("ibv_reg_mr", "ibv_reg_mr(3) DESCRIPTION")


def test_positional_page_and_section_several_needs_and_the_docstring() -> None:
    doc = """Each region has keys
    of its own.

    More words that are not the claim."""
    needs = ("attr.max_mr", "attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW")
    claim = parse(("ibv_alloc_mw(3)", "DESCRIPTION"), {"needs": needs}, doc)
    assert claim.needs == tuple(Cap(n) for n in needs)
    assert claim.says == "Each region has keys of its own."
    assert parse(("ibv_alloc_mw(3)",), {"says": "in words"}, doc).says == "in words"


@pytest.mark.parametrize(
    ("args", "kwargs", "says"),
    [
        ((), {}, "page=None: give the man page as name(section)"),
        ((), {"page": "ibv_reg_mr"}, "page='ibv_reg_mr': give the man page as name(section)"),
        ((), {"page": "ibv_reg_mr(3)", "needs": "max_mr"}, "needs='max_mr': give a device attribute path"),
        ((), {"page": "ibv_reg_mr(3)", "needs": ("attr.max_mr", 3)}, "give a device attribute path"),
        ((), {"page": "ibv_reg_mr(3)", "need": "attr.max_mr"}, "unknown argument(s) need"),
        (("ibv_reg_mr(3)", "DESCRIPTION", "x"), {}, "unknown argument(s)"),
    ],
)
def test_a_malformed_marker_says_what_to_give(args: tuple, kwargs: dict, says: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse(args, kwargs, None)
    assert says in str(caught.value)


def test_a_malformed_marker_is_a_usage_error_naming_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("import pytest\n@pytest.mark.rdma_claim(page='ibv_reg_mr')\ndef test_mine():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert errors == [
        "ERROR: test_a_malformed_marker_is_a_usage_error_naming_the_test.py::test_mine: @pytest.mark.rdma_claim: "
        "page='ibv_reg_mr': give the man page as name(section), e.g. page='ibv_reg_mr(3)'"
    ]


def test_without_pyverbs_the_fixtures_are_a_usage_error_naming_the_package(pytester: pytest.Pytester) -> None:
    # What a host without the distribution's pyverbs sees: the plugin's own check made to say it is absent.
    pytester.makeconftest("import pytest_rdma.user_fixtures as fixtures\nfixtures.pyverbs_missing = lambda: True\n")
    pytester.makepyfile("def test_mine(rdma_pd):\n    pass\n\ndef test_other():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (error,) = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert "test_mine: the fixtures rdma_context, rdma_pd" in error
    assert "apt-get install python3-pyverbs" in error
    assert "Traceback" not in result.stderr.str()
