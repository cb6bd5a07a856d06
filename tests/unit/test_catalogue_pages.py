"""Every function the installed libibverbs man pages document has an entry in the catalogue.

The list comes from the pages themselves: each ibv_*.3 page's name, and each function its
SYNOPSIS declares (mult_to_ibv_rate, ibv_wr_send, ...). A newer rdma-core that documents a new
verb makes this fail, naming it. Names that are no verb to call (a page named after its topic,
a misspelling in a page) are listed, with the reason, in pytest_rdma.ibv.lib.NOT_CALLABLE.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from pytest_rdma.catalogue.validate import validate
from pytest_rdma.ibv.lib import NOT_CALLABLE
from pytest_rdma.kinds.load import known_kinds
from pytest_rdma.verbs import CATALOGUE

MAN3 = Path("/usr/share/man/man3")
# A declaration in a SYNOPSIS: the function's name before its parameter list.
_DECLARED = re.compile(r"\b((?:ibv|mult_to_ibv|mbps_to_ibv)_\w+)\s*\(")
_FONT = re.compile(r"\\f(?:\[[A-Z]*\]|[A-Z])")
_SECTION = re.compile(r'^\.SH\s+"?([^"\n]*)"?\s*$', re.MULTILINE)


def synopsis(page: Path) -> str:
    """The SYNOPSIS section of a man page, without troff font changes and escapes."""
    text = gzip.open(page, "rt", errors="replace").read()
    text = _FONT.sub("", text).replace("\\_", "_").replace("\\-", "-")
    heads = list(_SECTION.finditer(text))
    for head, after in zip(heads, heads[1:] + [None]):
        if head.group(1).strip().upper() == "SYNOPSIS":
            return text[head.end() : after.start() if after else len(text)]
    return ""


def documented() -> dict[str, str]:
    """Every documented function name, with the page that documents it."""
    found: dict[str, str] = {}
    for page in sorted(MAN3.glob("ibv_*.3.gz")):
        shown = page.resolve().name[: -len(".3.gz")]  # an alias page (a link) is shown as its target
        found.setdefault(page.name[: -len(".3.gz")], shown)
        for declared in _DECLARED.findall(synopsis(page)):
            found.setdefault(declared, shown)
    return found


def test_the_catalogue_validates() -> None:
    validate(CATALOGUE, kinds=known_kinds())


def test_names_of_a_synopsis_are_found(tmp_path: Path) -> None:
    page = tmp_path / "ibv_rate_to_mult.3.gz"
    with gzip.open(page, "wt") as out:
        out.write(
            ".SH NAME\nibv_rate_to_mult \\- convert\n.SH SYNOPSIS\n.nf\n\\f[C]\n"
            "int ibv_rate_to_mult(enum ibv_rate rate);\nenum ibv_rate mult_to_ibv_rate(int mult);\n"
            "\\f[R]\n.fi\n.SH DESCRIPTION\nSee ibv_query_port(3) and ibv_modify_qp ().\n"
        )
    assert set(_DECLARED.findall(synopsis(page))) == {"ibv_rate_to_mult", "mult_to_ibv_rate"}


@pytest.mark.skipif(not MAN3.joinpath("ibv_create_qp.3.gz").exists(), reason="no man pages (libibverbs-dev)")
def test_every_documented_function_has_an_entry() -> None:
    pages = documented()
    assert len(pages) > 125  # the pages are there and their synopses were read
    described = {verb.name for verb in CATALOGUE}
    missing: dict[str, list[str]] = {}
    for name, page in sorted(pages.items()):
        if name not in described and name not in NOT_CALLABLE:
            missing.setdefault(page, []).append(name)
    shown = "\n".join(f"  {page}(3): {', '.join(names)}" for page, names in sorted(missing.items()))
    count = sum(len(names) for names in missing.values())
    assert not missing, f"{count} documented functions have no catalogue entry:\n{shown}"
