"""The installed man page's own words for a claim: the passage of the cited section nearest to it.

A result paraphrases its claim (the catalogue's words) and cites the page section it rests on.
Where the page is installed (Debian: libibverbs-dev), the report also quotes the page itself:
the paragraph of that section that shares the most words with the claim, so a reader checks our
reading against the text without leaving the report. Read from the man page source (troff, as
rdma-core installs it) with a small reader of the few macros those pages use; preformatted
blocks (struct listings) are not quoted. No page, no section or no paragraph sharing at least two
words with the claim: no quote, and the result says the claim in our words only.
"""

from __future__ import annotations

import functools
import gzip
import re
from pathlib import Path

MAN_DIRS = (Path("/usr/share/man"), Path("/usr/local/share/man"))
PAGE = re.compile(r"^(?P<page>[A-Za-z_][\w.-]*)\((?P<number>\d)\w*\)")
QUOTE_LIMIT = 700
BREAKS = (".PP", ".P", ".LP", ".TP", ".IP", ".sp", ".HP")
FONT_MACROS = (".B", ".I", ".BI", ".IB", ".BR", ".RB", ".IR", ".RI", ".SM", ".SB")
ESCAPES = (
    (r"\-", "-"),
    (r"\(aq", "'"),
    (r"\(dq", '"'),
    (r"\(em", "-"),
    (r"\(en", "-"),
    (r"\e", "\\"),
    (r"\&", ""),
    (r"\ ", " "),
    (r"\(bu", "*"),
)
FONT = re.compile(r"\\f(?:\[[A-Z]*\]|[BIRP])|\\s[+-]?\d")  # font and size changes
WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
COMMON = {
    "the",
    "and",
    "for",
    "are",
    "not",
    "with",
    "that",
    "this",
    "its",
    "any",
    "all",
    "can",
    "which",
    "when",
    "will",
    "from",
    "was",
    "has",
    "have",
    "one",
    "each",
    "but",
    "into",
    "than",
    "then",
    "there",
    "these",
    "may",
    "must",
    "also",
    "only",
    "other",
    "been",
    "does",
    "did",
    "qp",
    "call",
}


def plain(line: str) -> str:
    for escape, text in ESCAPES:
        line = line.replace(escape, text)
    return FONT.sub("", line)


def sections(source: str) -> dict[str, list[str]]:
    """Section heading -> its paragraphs, as plain text."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    paragraph: list[str] = []
    preformatted = False

    def close() -> None:
        if current is not None and paragraph:
            current.append(" ".join(" ".join(paragraph).split()))
        paragraph.clear()

    for raw in source.splitlines():
        line = raw.rstrip()
        if line.startswith(".SH"):
            close()
            current = found.setdefault(line[3:].strip().strip('"').upper(), [])
            continue
        if line.startswith(".nf"):
            close()
            preformatted = True
            continue
        if line.startswith(".fi"):
            preformatted = False
            continue
        if preformatted or current is None or line.startswith(('.\\"', "'\\\"")):
            continue
        macro = line.split(" ", 1)[0] if line.startswith(".") else ""
        if not line.strip() or macro in BREAKS:
            close()
        elif macro in FONT_MACROS:
            words = re.findall(r'"([^"]*)"|(\S+)', line[len(macro) :])
            paragraph.append(plain("".join(quoted or bare for quoted, bare in words)))
        elif not macro:
            paragraph.append(plain(line))
    close()
    return found


@functools.lru_cache(maxsize=256)
def page_sections(page: str, number: str) -> dict[str, list[str]]:
    """The sections of an installed man page, or none when it is not installed."""
    for base in MAN_DIRS:
        for name in (f"{page}.{number}.gz", f"{page}.{number}"):
            path = base / f"man{number}" / name
            if path.is_file():
                data = path.read_bytes()
                text = gzip.decompress(data) if name.endswith(".gz") else data
                return sections(text.decode("utf-8", "replace"))
    return {}


def words(text: str) -> set[str]:
    """The text's content words, each cut to its first five letters ("modifies", "modified" -> "modif");
    identifiers (IBV_DEVICE_AUTO_PATH_MIG, max_recv_wr) whole."""
    return {word if "_" in word else word[:5] for word in WORD.findall(text.lower()) if word not in COMMON}


@functools.lru_cache(maxsize=1024)
def passage(ref: str, claim: str) -> tuple[str, str]:
    """(section, its paragraph nearest to `claim`) for a citation like "ibv_modify_qp(3) NOTES", or ("", "")."""
    found = PAGE.match(ref.strip())
    if found is None or not claim:
        return "", ""
    page = page_sections(found.group("page"), found.group("number"))
    wanted = words(claim)
    # At least two words in common, and a third of the claim's: a paragraph about something else is no quote.
    best: tuple[int, str, str] = (max(1, (len(wanted) + 2) // 3 - 1), "", "")
    for section in re.split(r"\s*,\s*", ref[found.end() :].strip()):
        for paragraph in page.get(section.upper(), ()):
            score = len(wanted & words(paragraph))
            if score > best[0]:
                best = (score, section.upper(), paragraph)
    _, section, text = best
    if len(text) > QUOTE_LIMIT:
        text = text[:QUOTE_LIMIT].rsplit(" ", 1)[0] + " …"
    return section, text
