"""`pytest-rdma compare`: the claim x driver matrix of one or more results files.

Give it results files of several drivers (one run with rxe0 and siw0, or one file per
driver) to see where providers differ, or a baseline and a new run of the same driver to see
what changed: for a driver found in several files, the first file is its baseline, and each
check that went from conforming to deviating (or crashing, timing out, erroring) is marked
as a regression, and each that went the other way as a fix.

Across kernels (the lab's results/<release>/<device>/results.json, or any runs whose records name
different kernels), each driver's column is labelled with its kernel, and every check whose outcome
differs from the baseline's is listed per claim and driver: a fix, a regression, a new errno (both
deviate, with another errno), observed otherwise (both deviate, and what they saw differs; keys added by
a newer version to an observation of the same values are no difference), newly supported (or no longer),
or another change, with each side's reproducer (and whether it reproduced in C).

Exit status: 0, or 1 when there is a regression (a CI gate between two runs), 2 on bad input.
"""

from __future__ import annotations

import html
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rdma.command_line import InputError, Parser, fail
from pytest_rdma.observations import NOTHING, Observation, from_dict
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report.record import Record, severity
from pytest_rdma.report.release_waivers import stale_on_release

BAD = {DEVIATES, WAIVED, CRASH, TIMEOUT, ERROR}
GOOD = {CONFORMS}
SYMBOL = {
    CONFORMS: "✔",
    DEVIATES: "✘",
    WAIVED: "≈",
    UNSUPPORTED: "–",
    NOT_EXERCISED: "○",
    CRASH: "💥",
    TIMEOUT: "⏱",
    ERROR: "!",
}
REGRESSION = "▼ regression"
FIX = "▲ fixed"
NEW_ERRNO = "≠ new errno"
OTHERWISE = "≠ observed otherwise"
NEWLY_SUPPORTED = "+ newly supported"
NO_LONGER_SUPPORTED = "- no longer supported"
CHANGED = "~ changed"
HEADINGS = {
    REGRESSION: "Regressions",
    FIX: "Fixes",
    NEW_ERRNO: "New errnos",
    OTHERWISE: "Observed otherwise",
    NEWLY_SUPPORTED: "Newly supported",
    NO_LONGER_SUPPORTED: "No longer supported",
    CHANGED: "Other changes",
}
KINDS = tuple(HEADINGS)
MARKED = (REGRESSION, FIX)  # the kinds a matrix cell is marked with


@dataclass(frozen=True)
class Side:
    """One check's outcome in one column, with what shows it: its errno and its reproducer."""

    outcome: str
    errno: str = ""
    reproducer: str = ""  # the C reproducer's path, and whether it reproduced in C
    observation: Observation = NOTHING  # what the check saw, when it deviated

    def text(self) -> str:
        return f"{self.outcome} ({self.errno})" if self.errno else self.outcome

    def observed(self) -> str:
        """The outcome with what was observed: "waived (field = wc.0.status, value = 5)"."""
        return f"{self.outcome} ({self.observation.text()})"


def side_of(record: Record) -> Side:
    """What a record says about its check's outcome, for a comparison (pure)."""
    data = record.get("observation") or {}
    errno = str(data.get("errno") or "")
    found = record.get("reproducer") or {}
    reproducer = ""
    if found.get("c"):
        reproducer = str(Path(str(found.get("dir") or "")) / str(found["c"]))
        verdict = (found.get("confirmed") or {}).get("verdict")
        if verdict:
            reproducer += " (reproduced in C)" if verdict == "reproduced" else f" (C: {verdict})"
    return Side(str(record["outcome"]), errno, reproducer, from_dict(data) if data else NOTHING)


def kind_of(before: Side, after: Side) -> str | None:
    """How a check's outcome changed from `before` to `after`, or None when it did not (pure)."""
    if before.outcome in GOOD and after.outcome in BAD:
        return REGRESSION
    if before.outcome in BAD and after.outcome in GOOD:
        return FIX
    if before.outcome == after.outcome:
        if before.errno != after.errno and (before.errno or after.errno):
            return NEW_ERRNO
        # A deviation seen otherwise (a completion's status, a value read back); keys a newer version adds
        # to an observation that still holds the same values are no change (Observation.same_as).
        if before.outcome in BAD and not before.observation.same_as(after.observation):
            return OTHERWISE
        return None
    if before.outcome == UNSUPPORTED:
        return NEWLY_SUPPORTED
    if after.outcome == UNSUPPORTED:
        return NO_LONGER_SUPPORTED
    if before.outcome in BAD and after.outcome in BAD and before.errno != after.errno:
        return NEW_ERRNO
    return CHANGED


@dataclass
class Column:
    label: str
    driver: str
    source: str
    outcomes: dict[str, str] = field(default_factory=dict)  # stable id -> outcome
    rows: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (verb, claim) -> stable ids
    baseline: Column | None = None
    kernel: str = ""  # the kernel release the column's checks ran on (the records' identity)
    sides: dict[str, Side] = field(default_factory=dict)  # stable id -> the outcome's evidence


@dataclass
class Change:
    kind: str  # one of KINDS
    column: str
    row: tuple[str, str]
    stable_id: str
    before: str
    after: str
    base: str = ""  # the baseline column's label
    sides: tuple[Side, Side] | None = None  # the evidence on each side


NO_DEVICE = "no device"


def columns_of(paths: list[Path]) -> list[Column]:
    from pytest_rdma.report.jsonfile import read_results

    found: list[Column] = []
    # Checks that use no device (blocked API families) are the same in every run: one column.
    deviceless = Column(NO_DEVICE, NO_DEVICE, "all runs")
    for run, path in enumerate(paths, start=1):
        document = read_results(path)
        per_driver: dict[str, Column] = {}
        for record in document.get("results", []):
            driver = record.get("driver") or NO_DEVICE
            if driver == NO_DEVICE:
                column = deviceless
            else:
                column = per_driver.setdefault(driver, Column(driver, driver, f"run {run}: {path.name}"))
            row = (record.get("verb") or record.get("test") or "?", record.get("claim") or record["stable_id"])
            # One column per driver: with two devices of one driver, the worse outcome counts.
            key = record["stable_id"]
            previous = column.outcomes.get(key)
            if previous is None or severity(record["outcome"]) < severity(previous):
                column.outcomes[key] = record["outcome"]
                column.sides[key] = side_of(record)
            column.kernel = column.kernel or str((record.get("identity") or {}).get("kernel") or "")
            ids = column.rows.setdefault(row, [])
            if key not in ids:
                ids.append(key)
        found.extend(per_driver.values())
    if deviceless.rows:
        found.append(deviceless)
    drivers = [column.driver for column in found]
    for index, column in enumerate(found):
        if drivers.count(column.driver) > 1:
            same = [c for c in found if c.driver == column.driver]
            # Runs on different kernels are told apart by their kernel, others by their file.
            by_kernel = len({c.kernel for c in same}) == len(same) and all(c.kernel for c in same)
            column.label = f"{column.driver} ({column.kernel if by_kernel else column.source})"
            column.baseline = next(c for c in found[: index + 1] if c.driver == column.driver)
            if column.baseline is column:
                column.baseline = None
    return found


def changes(columns: list[Column]) -> list[Change]:
    found = []
    for column in columns:
        base = column.baseline
        if base is None:
            continue
        for row, ids in column.rows.items():
            for stable_id in ids:
                before, after = base.sides.get(stable_id), column.sides[stable_id]
                kind = kind_of(before, after) if before is not None else None
                if kind is not None and before is not None:
                    found.append(
                        Change(
                            kind,
                            column.label,
                            row,
                            stable_id,
                            before.observed() if kind == OTHERWISE else before.text(),
                            after.observed() if kind == OTHERWISE else after.text(),
                            base.label,
                            (before, after),
                        )
                    )
    return found


def cell(column: Column, row: tuple[str, str], marks: list[Change]) -> str:
    ids = column.rows.get(row)
    if not ids:
        return ""
    outcomes = [column.outcomes[i] for i in ids]
    # Every outcome present, the most serious first: "✘ 2 – 5 ✔ 30".
    text = " ".join(f"{SYMBOL.get(o, '?')} {outcomes.count(o)}" for o in sorted(set(outcomes), key=severity))
    kinds = {c.kind for c in marks if c.column == column.label and c.row == row and c.kind in MARKED}
    return " ".join([text, *sorted(kinds, reverse=True)])


def all_rows(columns: list[Column]) -> list[tuple[str, str]]:
    rows: dict[tuple[str, str], None] = {}
    for column in columns:
        rows.update(dict.fromkeys(column.rows))
    return sorted(rows)


def markdown(columns: list[Column], found: list[Change]) -> str:
    lines = ["| verb | claim | " + " | ".join(c.label for c in columns) + " |", "|---|---|" + "---|" * len(columns)]
    for row in all_rows(columns):
        cells = " | ".join(cell(c, row, found) for c in columns)
        lines.append(f"| {row[0]} | {row[1]} | {cells} |")
    lines += [
        "",
        "Legend: "
        + ", ".join(f"{s} {o}" for o, s in SYMBOL.items())
        + "; each cell counts the claim's checks per outcome, the most serious first.",
    ]
    lines += _change_lines(found, bullet="- ")
    return "\n".join(lines) + "\n"


def _change_lines(found: list[Change], bullet: str) -> list[str]:
    """Per kind, each changed check by claim and driver, with the reproducer of each side."""
    lines: list[str] = []
    for kind in KINDS:
        hits = sorted((c for c in found if c.kind == kind), key=lambda c: (c.row, c.column, c.stable_id))
        if hits:
            lines += ["", f"{HEADINGS[kind]} ({len(hits)}):"]
            for change in hits:
                lines.append(f"{bullet}{change.column}: {change.stable_id}: {change.before} -> {change.after}")
                lines += [f"    {label}: {text}" for label, text in _evidence(change)]
    return lines


def _evidence(change: Change) -> list[tuple[str, str]]:
    """Each side's reproducer, where one side has one (a conforming check has none)."""
    if change.sides is None or not any(side.reproducer for side in change.sides):
        return []
    return [
        (label, side.reproducer or f"{side.outcome}: no reproducer")
        for label, side in zip((change.base, change.column), change.sides)
    ]


STYLE = """body{font-family:sans-serif}table{border-collapse:collapse}
td,th{border:1px solid #bbb;padding:3px 8px}
.conforms{background:#dfd}.deviates,.crash,.timeout,.error{background:#fdd}.waived{background:#ffd}
.unsupported,.not-exercised{background:#eee}.regression{outline:3px solid #c00}.fixed{outline:3px solid #080}"""


def html_page(columns: list[Column], found: list[Change]) -> str:
    def td(column: Column, row: tuple[str, str]) -> str:
        text = cell(column, row, found)
        ids = column.rows.get(row, [])
        worst = min((column.outcomes[i] for i in ids), key=severity) if ids else ""
        marks = " ".join(k.split(" ", 1)[1] for k in MARKED if k in text)
        return f'<td class="{worst.replace(" ", "-")} {marks}">{html.escape(text)}</td>'

    head = "".join(f"<th>{html.escape(c.label)}</th>" for c in columns)
    body = "\n".join(
        f"<tr><td>{html.escape(r[0])}</td><td>{html.escape(r[1])}</td>" + "".join(td(c, r) for c in columns) + "</tr>"
        for r in all_rows(columns)
    )
    changes_html = "".join(f"<p>{html.escape(line)}</p>" for line in _change_lines(found, "") if line)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>pytest-rdma: claims x drivers</title>"
        f"<style>{STYLE}</style></head><body><h1>Claims x drivers</h1>"
        f"<table><tr><th>verb</th><th>claim</th>{head}</tr>\n{body}</table>{changes_html}</body></html>\n"
    )


def stale_across_kernels(paths: list[Path]) -> list[str]:
    """Waivers that hold on one kernel of these runs and not on another (report/release_waivers.py)."""
    from pytest_rdma.report.jsonfile import read_results

    by_kernel: dict[str, list[Record]] = {}
    for path in paths:
        for record in read_results(path).get("results", []):
            kernel = str((record.get("identity") or {}).get("kernel") or "")
            if kernel:
                by_kernel.setdefault(kernel, []).append(record)
    return [found.line() for found in stale_on_release(by_kernel)] if len(by_kernel) > 1 else []


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="pytest-rdma compare", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULTS.json",
        help="results files (--rdma-json), the baseline first; the .jsonl of a cut-short run works too",
    )
    parser.add_argument("--format", choices=("markdown", "html"), default="markdown")
    parser.add_argument("-o", "--output", type=Path, metavar="PATH", help="write here instead of stdout")
    args = parser.parse_args(argv)
    try:
        columns = columns_of(args.results)
    except InputError as exc:
        return fail(parser.prog, exc)
    except KeyError as exc:
        return fail(
            parser.prog,
            f"a result record lacks the field {exc}; give results files written by "
            f"pytest --rdma-json of this pytest-rdma",
        )
    if not columns:
        return fail(parser.prog, "the results files hold no results; give files of runs that ran checks")
    found = changes(columns)
    text = markdown(columns, found) if args.format == "markdown" else html_page(columns, found)
    stale = stale_across_kernels(args.results)
    if stale:
        heading = f"Waivers stale on a release ({len(stale)}):"
        if args.format == "markdown":
            text += f"\n{heading}\n" + "".join(f"- {line}\n" for line in stale)
        else:
            paragraphs = "".join(f"<p>{html.escape(line)}</p>" for line in [heading, *stale])
            text = text.replace("</body>", paragraphs + "</body>", 1)
    if args.output:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            return fail(parser.prog, f"cannot write {args.output} ({exc.strerror}); give -o a writable path")
    else:
        sys.stdout.write(text)
    return 1 if any(c.kind == REGRESSION for c in found) else 0


if __name__ == "__main__":
    sys.exit(main())
