"""Catalogue -> cases -> test functions.

Each verb with testable claims becomes one test function, `test_<verb>`, parametrized by the
cases its claims expand to (and, through the `rdma_dut` fixture, by device). A new verb whose
claims use known kinds therefore yields checks with no new code.
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import pytest

from pytest_rdma.cases import Case
from pytest_rdma.catalogue.derived import derived_claims
from pytest_rdma.catalogue.index import Catalogue
from pytest_rdma.catalogue.model import Verb
from pytest_rdma.kinds.load import KINDS
from pytest_rdma.kinds.registry import UNTESTABLE
from pytest_rdma.running import run_case

if TYPE_CHECKING:
    from pytest_rdma.provider.device import DeviceUnderTest


def loadable(*sonames: str) -> bool:
    """Whether the dynamic loader finds one of these libraries.

    Not ctypes.util.find_library: for a library the loader cache lacks it runs gcc and ld,
    seconds per collection under the lab's emulated CPU, once in every pytest process.
    """
    for soname in sonames:
        try:
            ctypes.CDLL(soname)
            return True
        except OSError:
            continue
    return False


def family_blocker(family: str) -> str:
    """Why no check of an API family can run on this system, or "" when they can."""
    if family in ("ibv", "rdmacm"):
        return ""
    if family == "det":
        if loadable("libdet.so.1", "libdet.so"):
            return "libdet is installed, but pytest-rdma has no DET runner yet"
        return (
            "no DET provider: the DET API (libdet and its kernel driver) is not installed on this "
            "system and no distribution ships it; see the entry's ibv counterpart"
        )
    return f"no provider of the {family!r} API family is known to pytest-rdma"


# Each verb's cases, once per process: collection expands the catalogue, and the end of the run
# expands again the verbs that waivers name (report/terminal.py), which cost a second under TCG.
# Keyed by the verb object itself (kept in the entry, so its id is not reused meanwhile).
_expanded: dict[int, tuple[Verb, list[Case]]] = {}


def expand(verb: Verb) -> list[Case]:
    """Every case of the verb's testable claims, each marked blocked when its family cannot run here."""
    known = _expanded.get(id(verb))
    if known is None or known[0] is not verb:
        known = _expanded[id(verb)] = (verb, _expand(verb))
    return list(known[1])


def _expand(verb: Verb) -> list[Case]:
    blocker = family_blocker(verb.family)
    cases: list[Case] = []
    for claim in (*verb.claims, *derived_claims(verb)):  # derived: the catalogue's data implies them
        if claim.kind == UNTESTABLE:
            continue
        for case in KINDS[claim.kind].expand(verb, claim):
            cases.append(dataclasses.replace(case, blocked=blocker) if blocker else case)
    return cases


PROCESS_MARK = "rdma_process"  # the lab selects these (-m) for its run as an unprivileged user


def process_marks(case: Case) -> list[pytest.MarkDecorator]:
    """A case about the process running it (Claim.when) is marked, so a run as another user can pick it."""
    return [getattr(pytest.mark, PROCESS_MARK)] if case.spec.get("when") else []


def verb_test(verb: Verb, cases: list[Case]) -> Callable[..., None]:
    if verb.family in ("ibv", "rdmacm"):

        def check(rdma_dut: DeviceUnderTest, rdma_case: Case, request: pytest.FixtureRequest) -> None:
            run_case(request, rdma_case, rdma_dut)

    else:
        # A family with no provider here still yields its checks, which say why they cannot run;
        # they ask for no device, so they are reported once, not once per device.
        def check(rdma_case: Case, request: pytest.FixtureRequest) -> None:  # type: ignore[misc]
            run_case(request, rdma_case, None)

    check.__name__ = check.__qualname__ = f"test_{verb.name}"
    check.__doc__ = f"{verb.name}() — {verb.summary} [{verb.man}]"
    marks = [pytest.mark.rdma_verb(verb.name)]
    params = [pytest.param(case, id=case.id, marks=marks + process_marks(case)) for case in cases]
    return pytest.mark.parametrize("rdma_case", params)(check)


def generated_tests(verbs: Iterable[Verb]) -> dict[str, Callable[..., None]]:
    """One test function per verb that has checks, keyed by its name, for a test module's globals()."""
    functions = {}
    for verb in verbs:
        cases = expand(verb)
        if cases:
            functions[f"test_{verb.name}"] = verb_test(verb, cases)
    return functions


# The catalogue the suite is generated from: set by the plugin at configure (pytest_rdma.verbs
# plus the descriptions `rdma_catalogue_extra` names), read when the suite module is imported.
_active: Catalogue | None = None


def activate(catalogue: Catalogue | None) -> Catalogue | None:
    """Make `catalogue` the active one (None: pytest_rdma.verbs); the one active before, to restore."""
    global _active
    before, _active = _active, catalogue
    return before


def active() -> Catalogue:
    if _active is None:
        from pytest_rdma.verbs import CATALOGUE

        return Catalogue.of(CATALOGUE)
    return _active
