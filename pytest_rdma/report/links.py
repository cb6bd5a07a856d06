"""Where a result's citations can be read: man pages on man7.org, kernel sources, bug URLs.

A record cites its sources as data (`{"kind", "ref", "section"}`, see record.py); this module
turns them into the one text each is cited by ("ibv_modify_qp(3) NOTES": the page once, then
its sections) and, where the source is public, a URL. rdma-core's libibverbs and librdmacm
pages are on man7.org, one HTML page per man page, each section an anchor named by its
heading ("RETURN VALUE" -> #RETURN_VALUE). Kernel files are linked on elixir.bootlin.com at
the release the device ran (6.1.0-56-amd64 -> v6.1). A source without a public copy (the
IBTA specification) is cited and not linked.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MAN7 = "https://man7.org/linux/man-pages/man{number}/{page}.{number}.html"
ELIXIR = "https://elixir.bootlin.com/linux/{version}/source/{path}"
# rdma-core's pages that man7.org publishes: libibverbs (ibv_*) and librdmacm (rdma_*).
MAN7_PREFIXES = ("ibv_", "rdma_")
PAGE = re.compile(r"(?P<page>[A-Za-z_][\w.-]*)\((?P<number>\d)\w*\)")
# A page named twice in a row ("ibv_modify_qp(3) ibv_modify_qp(3) NOTES"): cited once.
REPEATED_PAGE = re.compile(r"\b(?P<page>[A-Za-z_][\w.-]*\(\d\w*\))(?:\s*,?\s*(?P=page))+")
KERNEL_VERSION = re.compile(r"^(\d+)\.(\d+)")
# The functions of a citation's text are pure and see the same few hundred texts once per check:
# each keeps its answers.
MEMO = functools.lru_cache(maxsize=4096)


@dataclass(frozen=True)
class Link:
    name: str
    url: str
    kind: str  # "man", "kernel", "ibta", "issue", ...


@MEMO
def cite(ref: str, section: str = "") -> str:
    """The text a source is cited by: its page once, then its sections."""
    section = section.strip()
    page = PAGE.match(ref.strip())
    if page and section.startswith(page.group(0)):
        section = section[len(page.group(0)) :].strip()  # a section that repeats its page
    return once(f"{ref.strip()} {section}".strip())


@MEMO
def once(text: str) -> str:
    """`text` with a man page named twice in a row named once."""
    return REPEATED_PAGE.sub(lambda found: found.group("page"), text)


def anchor(section: str) -> str:
    """man7.org's anchor of a section heading; the first of "DESCRIPTION, NOTES"."""
    first = re.split(r"[,;]", section, maxsplit=1)[0].strip().upper()
    return re.sub(r"\s+", "_", first)


@MEMO
def man_url(ref: str, section: str = "") -> str:
    """The man7.org URL of a page (and section), or "" for a page man7.org does not have."""
    page = PAGE.search(ref)
    if page is None or not page.group("page").startswith(MAN7_PREFIXES):
        return ""
    url = MAN7.format(number=page.group("number"), page=page.group("page"))
    fragment = anchor(section)
    return f"{url}#{fragment}" if fragment else url


def kernel_url(ref: str, kernel: str = "") -> str:
    """The elixir URL of a kernel source file named first in `ref`, at the kernel's release."""
    path = ref.split()[0] if ref.split() else ""
    if not path or "/" not in path:
        return ""
    version = KERNEL_VERSION.match(kernel or "")
    return ELIXIR.format(version=f"v{version.group(1)}.{version.group(2)}" if version else "latest", path=path)


def source_link(source: Mapping[str, object], kernel: str = "") -> Link:
    """A cited source as a link (url "" when it has no public copy)."""
    kind = str(source.get("kind") or "")
    ref = str(source.get("ref") or "")
    section = str(source.get("section") or "")
    name = cite(ref, section)
    if kind == "man":
        return Link(name, man_url(ref, section), kind)
    if kind == "kernel":
        return Link(name, kernel_url(ref, kernel), kind)
    return Link(name, "", kind)


@MEMO
def text_link(text: str, kind: str = "issue") -> Link:
    """A free-text reference (a waiver's link): a URL as it is, a man page section on man7.org."""
    text = text.strip()
    if re.match(r"https?://", text):
        return Link(text, text, kind)
    page = PAGE.search(text)
    if page is not None:
        section = text[page.end() :].strip()
        return Link(once(text), man_url(page.group(0), section), "man")
    return Link(text, "", kind)


def links(sources: Iterable[Mapping[str, object]], kernel: str = "") -> list[Link]:
    """Each cited source once, in the order cited."""
    seen: dict[str, Link] = {}
    for source in sources:
        link = source_link(source, kernel)
        seen.setdefault(link.name, link)
    return list(seen.values())
