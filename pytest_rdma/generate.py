"""Catalogue -> test functions.

Each verb of the catalogue becomes one test function, `test_<verb>`, parametrized by
the cases its claims expand to (and, through the `rdma_dut` fixture, by device). A new
verb description whose claims use known kinds therefore yields checks with no new code.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterable
from typing import Any, Callable

import pytest

from pytest_rdma.catalogue.model import Verb
from pytest_rdma.checks.registry import KINDS, Case, known_kinds
from pytest_rdma.outcomes import Blocked, Unsupported


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
    if family == "ibv":
        return ""
    if family == "det":
        if loadable("libdet.so.1", "libdet.so"):
            return "libdet is installed, but pytest-rdma has no DET runner yet"
        return ("no DET provider: the DET API (libdet and its kernel driver) is not installed on this "
                "system and no distribution ships it; see the entry's ibv counterpart")
    return f"no provider of the {family!r} API family is known to pytest-rdma"


def expand(verb: Verb) -> list[Case]:
    known_kinds()  # make sure every kind module has registered itself
    blocker = family_blocker(verb.family)
    cases: list[Case] = []
    for claim in verb.claims:
        if claim.kind == "untestable":
            continue
        for case in KINDS[claim.kind].expand(verb, claim):
            cases.append(Case(case.verb, case.claim, case.kind, case.variant, case.params,
                              blocker or case.blocked))
    return cases


def run_case(case: Case, dut: Any, resources: Any) -> None:
    """Run one case, turning the suite's outcomes into pytest's."""
    if case.blocked:
        pytest.skip(f"blocked: {case.blocked}")
    try:
        KINDS[case.kind].run(case, dut, resources)
        return
    except Unsupported as exc:
        reason = f"unsupported: {exc.capability}"
    except Blocked as exc:
        reason = f"blocked: {exc}"
    # Skipped outside the except block, so the skip does not chain the exception it came from:
    # reporters (allure) format a chained exception's traceback too, reading every frame's source
    # file, which is most of a skip's cost where files are slow to reach (the lab's 9p root).
    pytest.skip(reason)


def _device_test(verb: Verb, cases: list[Case]) -> Callable[..., None]:
    def check(rdma_dut: Any, rdma_resources: Any, rdma_case: Case) -> None:
        run_case(rdma_case, rdma_dut, rdma_resources)

    return check


def _deviceless_test(verb: Verb, cases: list[Case]) -> Callable[..., None]:
    # Verbs of a family with no provider here still yield their checks, which say why they
    # cannot run; they ask for no device, so they are reported once, not once per device.
    def check(rdma_case: Case) -> None:
        run_case(rdma_case, None, None)

    return check


def verb_test(verb: Verb) -> Callable[..., None]:
    cases = expand(verb)
    make = _device_test if verb.family == "ibv" else _deviceless_test
    function = make(verb, cases)
    function.__name__ = function.__qualname__ = f"test_{verb.name}"
    function.__doc__ = f"{verb.name}() — {verb.summary} [{verb.man}]"
    marks = [pytest.mark.rdma_verb(verb.name)]
    params = [pytest.param(case, id=case.id, marks=marks) for case in cases]
    return pytest.mark.parametrize("rdma_case", params)(function)


def generated_tests(verbs: Iterable[Verb]) -> dict[str, Callable[..., None]]:
    """One test function per verb that has checks, keyed by its name, for a test module's globals()."""
    functions = {}
    for verb in verbs:
        if any(claim.kind != "untestable" for claim in verb.claims):
            functions[f"test_{verb.name}"] = verb_test(verb)
    return functions


# --- extension point: extra verb descriptions ----------------------------------------------
# `rdma_catalogue_extra = package.module:NAME` (ini, one per line) adds the Verb records of
# NAME (a Verb or a sequence of them) to the catalogue the suite is generated from. They are
# validated together with the catalogue; their claims must use registered check kinds (a
# module may register its own with @check_kind before NAME is read).
INI_EXTRA = "rdma_catalogue_extra"
HELP_EXTRA = "extra verb descriptions, 'module.path:NAME' per line (a Verb or a sequence of Verbs)"

_extra: tuple[Verb, ...] = ()


def load_extra(specs: Iterable[str]) -> tuple[Verb, ...]:
    """The Verb records named by `specs` ("module.path:NAME"), validated with the catalogue."""
    import importlib

    from pytest_rdma.catalogue.validate import CatalogueError, validate
    from pytest_rdma.verbs import CATALOGUE

    verbs: list[Verb] = []
    for spec in specs:
        module_name, _, attr = spec.partition(":")
        try:
            value = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError, ValueError) as exc:
            raise pytest.UsageError(f"{INI_EXTRA} = {spec}: cannot load it ({exc})") from exc
        found = [value] if isinstance(value, Verb) else value
        if not isinstance(found, (list, tuple)) or not found or not all(isinstance(v, Verb) for v in found):
            raise pytest.UsageError(f"{INI_EXTRA} = {spec}: is neither a Verb nor a sequence of Verbs")
        verbs += found
    try:
        validate(CATALOGUE + tuple(verbs))
    except CatalogueError as exc:
        raise pytest.UsageError(f"{INI_EXTRA}: {exc}") from exc
    return tuple(verbs)


def configure_extra(config: pytest.Config) -> None:
    """Read the ini option once per session (and per xdist worker), before the suite is imported."""
    global _extra
    _extra = load_extra(config.getini(INI_EXTRA))


def active_catalogue() -> tuple[Verb, ...]:
    """The catalogue the suite is generated from: pytest_rdma.verbs plus the configured extras."""
    from pytest_rdma.verbs import CATALOGUE

    return CATALOGUE + _extra
