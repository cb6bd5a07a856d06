"""`pytest-rdma coverage`: is every error and claim of each man page accounted for?

For each verb of the catalogue it lists every error the entry gives (and every errno its
man page lists, read from the page itself) and every claim, each with the generated
checks that cover it, or the reason it cannot be tested: the claim or error is marked
untestable, or its API family has no provider on this system. Anything else is reported
as NOT ACCOUNTED, and the command then exits 1.

With `--results FILE` (the JUnit XML of a run on a provider: --rdma-junit, or pytest's own
--junitxml), each check also shows how it ended there, per device.
"""

from __future__ import annotations

import errno as errno_module
import gzip
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rdma.catalogue.model import Verb
from pytest_rdma.command_line import InputError, Parser, fail
from pytest_rdma.kinds.registry import UNTESTABLE
from pytest_rdma.outcomes import DEVIATES, OUTCOMES

# Where man pages are looked up besides `man -w` (pages that are not installed, such as a
# DET page given as a file, are found by their .TH line in these directories).
MAN_DIRS_DEFAULT: tuple[Path, ...] = (Path("/usr/share/man"),)
ERRNO_NAMES = frozenset(errno_module.errorcode.values())
PAGE_REF = re.compile(r"^(?P<name>[A-Za-z0-9_]+)\((?P<section>[0-9a-z]+)\)")
TH_LINE = re.compile(r'^\.TH\s+"?(?P<name>[A-Za-z0-9_]+)"?\s+"?(?P<section>[0-9])', re.MULTILINE)
SH_LINE = re.compile(r'^\.SH\s+"?(?P<title>[^"\n]*)"?\s*$', re.MULTILINE)
# Sections of a page that list errno values.
ERROR_SECTIONS = ("ERRORS", "RETURN VALUE", "RETURN VALUES")


@dataclass
class Item:
    """One error or claim of a verb, and how it is accounted for."""

    what: str  # "error EINVAL" / "claim required-attrs"
    text: str  # the condition or the paraphrased promise
    checks: list[str] = field(default_factory=list)
    via: list[str] = field(default_factory=list)  # for an error: "claim <id> (<n> checks)"
    reasons: list[str] = field(default_factory=list)
    problem: str = ""  # why it is NOT accounted for, if it is not

    @property
    def accounted(self) -> bool:
        return not self.problem


@dataclass
class VerbCoverage:
    verb: Verb
    items: list[Item]
    # device -> outcome -> checks, from the runs given with --results (empty without them)
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def missing(self) -> list[Item]:
        return [item for item in self.items if not item.accounted]


# --- the man page ----------------------------------------------------------------------------


def _roff_source(name: str, section: str, man_dirs: Sequence[Path]) -> str | None:
    for directory in man_dirs:
        page = directory / f"man{section}" / f"{name}.{section}"
        for path in (page.with_name(page.name + ".gz"), page):
            if path.is_file():
                text = _read(path)
                # An alias page is one ".so man3/other.3" line.
                alias = re.match(r"\.so\s+man[0-9]/(?P<name>[A-Za-z0-9_]+)\.(?P<section>[0-9])", text)
                return _roff_source(alias["name"], alias["section"], man_dirs) if alias else text
    # Pages that are not installed (e.g. a DET page kept as a file): any file of an extra
    # directory whose .TH line names the page.
    for directory in man_dirs:
        if not directory.is_dir() or directory in MAN_DIRS_DEFAULT:
            continue
        for path in sorted(directory.iterdir()):
            if path.is_file():
                text = _read(path)
                title = TH_LINE.search(text)
                if title and title["name"].lower() == name.lower() and title["section"] == section[0]:
                    return text
    return None


def _read(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def page_errnos(man: str, man_dirs: Sequence[Path] = MAN_DIRS_DEFAULT) -> frozenset[str] | None:
    """The errno names page `man` ("ibv_create_flow(3)") lists, or None if the page is not found."""
    ref = PAGE_REF.match(man)
    if not ref:
        return None
    source = _roff_source(ref["name"], ref["section"], man_dirs)
    if source is None:
        return None
    names: set[str] = set()
    headers = list(SH_LINE.finditer(source))
    for header, following in zip(headers, headers[1:] + [None]):
        if header["title"].strip().upper() in ERROR_SECTIONS:
            body = source[header.end() : following.start() if following else len(source)]
            names.update(name for name in re.findall(r"\bE[A-Z0-9]+\b", body) if name in ERRNO_NAMES)
    return frozenset(names)


# --- provider results --------------------------------------------------------------------------


def load_results(path: Path) -> dict[str, list[str]]:
    """JUnit XML of a run -> {"test_<verb>[<case id>]": ["rxe0: conforms", ...]}.

    pytest-rdma's own file (--rdma-junit) names each check's stable id, device and outcome as
    properties; pytest's --junitxml only names the node ("test_<verb>[<device>-<case id>]").
    """
    outcomes: dict[str, list[str]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        if props.get("stable_id"):
            outcome = props.get("outcome", "")
            shown = "DEVIATES" if outcome == DEVIATES else outcome
            found = case.find("skipped") if case.find("skipped") is not None else case.find("error")
            message = (found.get("message") or "") if found is not None else ""
            if message and message != outcome:
                shown = message if message.startswith(f"{outcome}:") else f"{outcome}: {message}"
            where = f"{props.get('device') or 'no device'}: "
            outcomes.setdefault(props["stable_id"], []).append(where + shown)
            continue
        name = case.get("name", "")
        outcome = "conforms"
        for child, label in (("failure", "DEVIATES"), ("error", "error"), ("skipped", "skipped")):
            found = case.find(child)
            if found is not None:
                first = (found.get("message") or "").splitlines()[0:1]
                outcome = f"{label}: {first[0]}" if first and label != "DEVIATES" else label
                break
        outcomes.setdefault(name, []).append(outcome)
    return outcomes


GIVE_JUNIT = "give the JUnit XML a run wrote (pytest --junitxml PATH)"


def read_junit(path: Path) -> dict[str, list[str]]:
    """load_results(path) for the command: a file that is not a JUnit XML is an InputError saying so."""
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"--results {path}: no such file; {GIVE_JUNIT}") from None
    except OSError as exc:
        raise InputError(f"--results {path}: cannot read it ({exc.strerror}); {GIVE_JUNIT}") from None
    if not text.strip():
        raise InputError(f"--results {path}: the file is empty; {GIVE_JUNIT}")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise InputError(f"--results {path}: not XML ({exc}); {GIVE_JUNIT}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise InputError(f"--results {path}: XML, but not a JUnit report (its root is <{root.tag}>); {GIVE_JUNIT}")
    for number, case in enumerate(root.iter("testcase"), start=1):
        _check_testcase(path, number, case)
    return load_results(path)


def _check_testcase(path: Path, number: int, case: ET.Element) -> None:
    """A testcase of --rdma-junit (it names a stable_id) holds what its record held: a driver and an
    outcome of the results schema (docs/results-schema.md); pytest's own testcases are not ours to judge."""
    props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
    if not props.get("stable_id"):
        return
    where = f"--results {path}: testcase {number} ({props['stable_id']})"
    if not props.get("driver"):
        raise InputError(
            f"{where}: no driver property; give the JUnit XML as pytest --rdma-junit wrote it (driver: the provider "
            "driver, no-device for a check that uses no device)"
        )
    if props.get("outcome") not in OUTCOMES:
        raise InputError(
            f"{where}: outcome {props.get('outcome')!r} is none of the results schema's; give one of "
            f"{', '.join(OUTCOMES)} (docs/results-schema.md), as pytest --rdma-junit wrote it"
        )


def _outcomes_of(check: str, results: dict[str, list[str]]) -> list[str]:
    # Node ids carry the device first ("test_x[rxe0-case]"); deviceless checks carry none.
    test, _, case = check.partition("[")
    found = list(results.get(check, ()))
    for name, outcomes in results.items():
        if name.startswith(test + "[") and name.endswith("-" + case) and name != check:
            device = name[len(test) + 1 : -len(case) - 1]
            found += [f"{device}: {outcome}" for outcome in outcomes]
    return found


# --- accounting ----------------------------------------------------------------------------------


def verb_coverage(
    verb: Verb, page_errors: frozenset[str] | None = None, results: dict[str, list[str]] | None = None
) -> VerbCoverage:
    """How each error and claim of `verb` is covered; `page_errors` are the errnos its page lists
    that no entry of the catalogue documented on the same page gives."""
    from pytest_rdma.generate import expand, family_blocker

    blocker = family_blocker(verb.family)
    checks: dict[str, list[str]] = {claim.id: [] for claim in verb.claims}
    outcomes: dict[str, dict[str, int]] = {}
    for case in expand(verb):
        node = case.stable_id
        extra = _outcomes_of(node, results) if results is not None else []
        checks.setdefault(case.claim, []).append(node + (f"  ({'; '.join(extra)})" if extra else ""))
        for shown in extra:
            device, _, rest = shown.partition(": ")
            if rest:  # pytest-rdma's own JUnit names the device; pytest's --junitxml does not
                outcome = rest.split(":", 1)[0].lower()
                counts = outcomes.setdefault(device, {})
                counts[outcome] = counts.get(outcome, 0) + 1
    items: list[Item] = []
    claims = {claim.id: claim for claim in verb.claims}

    for error in verb.errors:
        item = Item(f"error {error.errno}", error.when)
        for claim_id in error.covered_by:
            claim = claims.get(claim_id)
            if claim is None:
                item.problem = f"covered_by names claim {claim_id!r}, which does not exist"
                continue
            if claim.kind == UNTESTABLE:
                item.reasons.append(f"via claim {claim_id}: untestable: {claim.untestable}")
            else:
                count = len(checks.get(claim_id, []))
                item.via.append(f"claim {claim_id} ({count} check{'' if count == 1 else 's'})")
            item.checks += checks.get(claim_id, [])
        if error.untestable:
            item.reasons.append(f"untestable: {error.untestable}")
        if item.checks and blocker:
            item.reasons.append(f"blocked: {blocker}")
        if not item.problem and not item.checks and not item.reasons:
            item.problem = (
                "no generated check covers it and no reason is given"
                if error.covered_by
                else "neither covered by a claim nor marked untestable"
            )
        items.append(item)

    for errno_name in sorted(page_errors or ()):
        items.append(
            Item(
                f"error {errno_name}",
                "listed by the man page",
                problem="the page lists this errno; the catalogue entry does not",
            )
        )

    for claim in verb.claims:
        item = Item(f"claim {claim.id}", f"{claim.says} [{verb.source(claim).text}]")
        if claim.kind == UNTESTABLE:
            if claim.untestable:
                item.reasons.append(f"untestable: {claim.untestable}")
            else:
                item.problem = "marked untestable without a reason"
        else:
            item.checks = checks.get(claim.id, [])
            if not item.checks:
                item.problem = f"claim kind {claim.kind!r} generated no check"
            elif blocker:
                item.reasons.append(f"blocked: {blocker}")
        items.append(item)
    return VerbCoverage(verb, items, outcomes)


def coverage(
    verbs: Iterable[Verb],
    man_dirs: Sequence[Path] = MAN_DIRS_DEFAULT,
    results: dict[str, list[str]] | None = None,
    catalogue: Iterable[Verb] | None = None,
) -> list[VerbCoverage]:
    """The coverage of `verbs`, judged within `catalogue` (default: `verbs` themselves)."""
    verbs = tuple(verbs)
    everything = tuple(catalogue) if catalogue is not None else verbs
    # A page may document several verbs (ibv_create_flow(3) also documents ibv_destroy_flow):
    # an errno it lists is accounted for when any entry citing the page gives it, and one
    # it lists that none gives is reported once, on the verb the page is named after.
    by_page: dict[str, set[str]] = {}
    for verb in everything:
        by_page.setdefault(verb.man, set()).update(error.errno for error in verb.errors)
    out = []
    for verb in verbs:
        siblings = [other for other in everything if other.man == verb.man]
        owner = next((other for other in siblings if verb.man.startswith(other.name + "(")), siblings[0])
        page = page_errnos(verb.man, man_dirs) if owner is verb else None
        unlisted = frozenset(page - by_page[verb.man]) if page is not None else None
        out.append(verb_coverage(verb, unlisted, results))
    return out


# --- rendering ---------------------------------------------------------------------------------


def _render_text(report: list[VerbCoverage]) -> str:
    lines: list[str] = []
    for entry in report:
        verb = entry.verb
        lines.append(
            f"{verb.name}  [{verb.man}]  family {verb.family}"
            + (f", ibv counterpart {verb.counterpart}" if verb.counterpart else "")
        )
        for item in entry.items:
            mark = "ok" if item.accounted else "NOT ACCOUNTED"
            lines.append(f"  {item.what}: {item.text}  -> {mark}")
            if item.via:
                lines.append(f"      covered by {', '.join(item.via)}")
            elif item.checks:
                lines.append(f"      {len(item.checks)} check(s):")
                lines += [f"        {check}" for check in item.checks]
            lines += [f"      {reason}" for reason in item.reasons]
            if item.problem:
                lines.append(f"      !! {item.problem}")
        if entry.outcomes:
            lines.append(f"  outcomes: {_counts_text(entry.outcomes)}")
        lines.append("")
    lines.append(_summary(report))
    return "\n".join(lines) + "\n"


def _counts_text(outcomes: dict[str, dict[str, int]]) -> str:
    return "; ".join(
        f"{device}: " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
        for device, counts in sorted(outcomes.items())
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _render_markdown(report: list[VerbCoverage]) -> str:
    lines: list[str] = []
    for entry in report:
        verb = entry.verb
        lines += [f"## {verb.name} — {verb.man}", ""]
        if verb.counterpart:
            lines += [f"Family `{verb.family}`; ibv counterpart `{verb.counterpart}`.", ""]
        lines += ["| item | says | checks | status |", "|---|---|---|---|"]
        for item in entry.items:
            checks = ", ".join(item.via) or "<br>".join(f"`{check}`" for check in item.checks) or "—"
            status = "; ".join(item.reasons) if item.accounted else f"**NOT ACCOUNTED**: {item.problem}"
            status = status or "covered"
            lines.append(f"| {item.what} | {_cell(item.text)} | {_cell(checks)} | {_cell(status)} |")
        if entry.outcomes:
            lines += [f"Outcomes: {_counts_text(entry.outcomes)}", ""]
        lines.append("")
    lines.append(_summary(report))
    return "\n".join(lines) + "\n"


def _summary(report: list[VerbCoverage]) -> str:
    items = [item for entry in report for item in entry.items]
    checks = {check for item in items for check in item.checks}
    missing = [f"{entry.verb.name}: {item.what}" for entry in report for item in entry.missing]
    text = (
        f"{len(report)} verb(s), {sum(i.what.startswith('error') for i in items)} error(s), "
        f"{sum(i.what.startswith('claim') for i in items)} claim(s), {len(checks)} check(s); "
        f"{len(missing)} not accounted for"
    )
    totals: dict[str, dict[str, int]] = {}
    for entry in report:
        for device, counts in entry.outcomes.items():
            for outcome, n in counts.items():
                totals.setdefault(device, {})[outcome] = totals.setdefault(device, {}).get(outcome, 0) + n
    text += "".join(f"\n{_counts_text({device: totals[device]})}" for device in sorted(totals))
    return text + ("".join(f"\n  NOT ACCOUNTED: {m}" for m in missing) if missing else "")


def render_report(report: list[VerbCoverage], fmt: str = "text") -> str:
    return _render_markdown(report) if fmt == "markdown" else _render_text(report)


def render(
    catalogue: Iterable[Verb],
    provider: str | Path | None = None,
    *,
    fmt: str = "text",
    man_dirs: Sequence[Path] = MAN_DIRS_DEFAULT,
) -> str:
    """The coverage report of `catalogue`; `provider` is an optional JUnit XML of a run on one (load_results)."""
    results = load_results(Path(provider)) if provider is not None else None
    return render_report(coverage(catalogue, man_dirs, results), fmt)


def unaccounted(report: list[VerbCoverage]) -> list[str]:
    """ "<verb>: <item>: <problem>" for everything not accounted for (empty when all is)."""
    return [f"{entry.verb.name}: {item.what}: {item.problem}" for entry in report for item in entry.missing]


def main(argv: Sequence[str] | None = None) -> int:
    """`pytest-rdma coverage [--verb NAME] [--format text|markdown] [--results FILE] [--man-dir DIR]`."""
    parser = Parser(prog="pytest-rdma coverage", description=__doc__.splitlines()[0])
    parser.add_argument("--verb", action="append", metavar="NAME", help="only this verb (repeatable)")
    parser.add_argument("--format", choices=("text", "markdown"), default="text", dest="fmt")
    parser.add_argument(
        "--results",
        action="append",
        metavar="FILE",
        type=Path,
        help="JUnit XML of a run on a provider (--rdma-junit, or pytest --junitxml): show each outcome and "
        "count them per device; repeatable (one file per device)",
    )
    parser.add_argument(
        "--man-dir",
        action="append",
        metavar="DIR",
        type=Path,
        default=[],
        help="also look for man pages here (files found by their .TH line); repeatable",
    )
    args = parser.parse_args(argv)
    from pytest_rdma.verbs import CATALOGUE

    verbs = CATALOGUE
    if args.verb:
        known = {verb.name for verb in CATALOGUE}
        unknown = [name for name in args.verb if name not in known]
        if unknown:
            parser.error(f"unknown verb {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        verbs = tuple(verb for verb in CATALOGUE if verb.name in args.verb)
    try:
        results: dict[str, list[str]] | None = None
        for path in args.results or ():
            results = results or {}
            for check, outcomes in read_junit(path).items():
                results.setdefault(check, []).extend(outcomes)
    except InputError as exc:
        return fail(parser.prog, exc)
    report = coverage(verbs, (*MAN_DIRS_DEFAULT, *args.man_dir), results, catalogue=CATALOGUE)
    print(render_report(report, args.fmt), end="")
    return 1 if unaccounted(report) else 0
