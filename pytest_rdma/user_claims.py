"""`@pytest.mark.rdma_claim`: a user's own test tied to a man page's claim.

    @pytest.mark.rdma_claim(page="ibv_reg_mr(3)", section="DESCRIPTION", needs="attr.max_mr")
    def test_registers_a_large_region(rdma_mr): ...

The test's record then carries the claim as a generated check's does (verb, claim, page and
section, the claim in words: `says=`, else the test's docstring), and the test is unsupported
only from the capability it names: `needs` is one attribute path or a tuple of them, read as the
catalogue reads a claim's `needs` (`attr.max_mr` nonzero, `attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW`
set). A test of the user's own that skips for any other reason, claimed or not, is "not exercised": a
skip names no attribute, and "unsupported" is the device's word only.
A malformed marker is a usage error naming the test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from pytest_rdma.catalogue.model import Cap
from pytest_rdma.outcomes import NOT_EXERCISED

MARK = "rdma_claim"
MARKER_HELP = (
    f"{MARK}(page, section, needs=(), says=''): the man page claim a test of your own checks "
    "(e.g. page='ibv_reg_mr(3)', section='DESCRIPTION', needs='attr.max_mr'); its record carries the claim, "
    "and it is unsupported only when the device lacks a capability it needs"
)
# Why a test of the user's own skipped, as an outcome and its reason, when the plugin knows: the capability
# a claimed test's device lacks ("unsupported"), a state the fixtures could not reach ("not exercised").
VERDICT_KEY = pytest.StashKey["tuple[str, str]"]()
_PAGE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\((\d[a-z]*)\)$")
_ATTR = re.compile(r"^[a-z_]+(\.[A-Za-z0-9_]+)+(&[A-Z0-9_| ]+)?$")


@dataclass(frozen=True)
class UserClaim:
    page: str  # "ibv_reg_mr(3)"
    section: str  # "DESCRIPTION"
    needs: tuple[Cap, ...]
    says: str

    @property
    def verb(self) -> str:
        return self.page.partition("(")[0]

    @property
    def ref(self) -> str:
        return f"{self.page} {self.section}".strip()


def parse(args: tuple[object, ...], kwargs: dict[str, object], doc: str | None) -> UserClaim:
    """The marker's arguments, or a ValueError saying what is wrong with them."""
    unknown = set(kwargs) - {"page", "section", "needs", "says"}
    if unknown or len(args) > 2:
        raise ValueError(
            f"unknown argument(s) {', '.join(sorted(unknown)) or str(args[2:])}; give page, section, needs, says"
        )
    values = dict(zip(("page", "section"), args), **kwargs)
    page, section = values.get("page"), values.get("section", "")
    if not isinstance(page, str) or not _PAGE.match(page):
        raise ValueError(f"page={page!r}: give the man page as name(section), e.g. page='ibv_reg_mr(3)'")
    if not isinstance(section, str):
        raise ValueError(f"section={section!r}: give the page's section heading, e.g. section='DESCRIPTION'")
    needs = values.get("needs", ())
    names = (needs,) if isinstance(needs, str) else needs
    if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) and _ATTR.match(n) for n in names):
        raise ValueError(
            f"needs={needs!r}: give a device attribute path or a tuple of them, as the catalogue names "
            "capabilities, e.g. needs='attr.max_mr' or needs='attr.device_cap_flags&IBV_DEVICE_MEM_WINDOW'"
        )
    says = values.get("says") or (doc or "").strip().split("\n\n")[0]
    return UserClaim(page, section, tuple(Cap(str(n)) for n in names), " ".join(str(says).split()))


def claim_of(item: pytest.Item) -> UserClaim | None:
    """The item's rdma_claim marker, parsed; a usage error naming the test when it is malformed."""
    marker = item.get_closest_marker(MARK)
    if marker is None:
        return None
    try:
        return parse(marker.args, dict(marker.kwargs), getattr(getattr(item, "function", None), "__doc__", None))
    except ValueError as exc:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{MARK}: {exc}") from None


def skipped_as(item: pytest.Item) -> tuple[str, str]:
    """The outcome and reason of a skip of the user's own test: what the plugin recorded, else "not
    exercised" (only a capability a fixture or the marker names makes it unsupported)."""
    return item.stash.get(VERDICT_KEY, (NOT_EXERCISED, ""))
