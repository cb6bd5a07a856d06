"""`pytest-rdma compare`: the claim x driver matrix of one or more results files.

Give it results files of several drivers (one run with rxe0 and siw0, or one file per
driver) to see where providers differ, or a baseline and a new run of the same driver to see
what changed: for a driver found in several files, the first file is its baseline, and each
check that went from conforming to deviating (or crashing, timing out, erroring) is marked
as a regression, and each that went the other way as a fix.

Exit status: 0, or 1 when there is a regression (a CI gate between two runs), 2 on bad input.
"""

from __future__ import annotations

import html
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rdma.command_line import InputError, Parser, fail
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report.record import severity

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


@dataclass
class Column:
    label: str
    driver: str
    source: str
    outcomes: dict[str, str] = field(default_factory=dict)  # stable id -> outcome
    rows: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (verb, claim) -> stable ids
    baseline: Column | None = None


@dataclass
class Change:
    kind: str  # REGRESSION or FIX
    column: str
    row: tuple[str, str]
    stable_id: str
    before: str
    after: str


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
            ids = column.rows.setdefault(row, [])
            if key not in ids:
                ids.append(key)
        found.extend(per_driver.values())
    if deviceless.rows:
        found.append(deviceless)
    drivers = [column.driver for column in found]
    for index, column in enumerate(found):
        if drivers.count(column.driver) > 1:
            column.label = f"{column.driver} ({column.source})"
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
                before, after = base.outcomes.get(stable_id), column.outcomes[stable_id]
                if before in GOOD and after in BAD:
                    found.append(Change(REGRESSION, column.label, row, stable_id, before, after))
                elif before in BAD and after in GOOD:
                    found.append(Change(FIX, column.label, row, stable_id, before, after))
    return found


def cell(column: Column, row: tuple[str, str], marks: list[Change]) -> str:
    ids = column.rows.get(row)
    if not ids:
        return ""
    outcomes = [column.outcomes[i] for i in ids]
    # Every outcome present, the most serious first: "✘ 2 – 5 ✔ 30".
    text = " ".join(f"{SYMBOL.get(o, '?')} {outcomes.count(o)}" for o in sorted(set(outcomes), key=severity))
    kinds = {c.kind for c in marks if c.column == column.label and c.row == row}
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
    lines: list[str] = []
    for kind in (REGRESSION, FIX):
        hits = [c for c in found if c.kind == kind]
        if hits:
            lines += ["", f"{kind.split(' ', 1)[1].capitalize()}s ({len(hits)}):"]
            lines += [f"{bullet}{c.column}: {c.stable_id}: {c.before} -> {c.after}" for c in hits]
    return lines


STYLE = """body{font-family:sans-serif}table{border-collapse:collapse}
td,th{border:1px solid #bbb;padding:3px 8px}
.conforms{background:#dfd}.deviates,.crash,.timeout,.error{background:#fdd}.waived{background:#ffd}
.unsupported,.not-exercised{background:#eee}.regression{outline:3px solid #c00}.fixed{outline:3px solid #080}"""


def html_page(columns: list[Column], found: list[Change]) -> str:
    def td(column: Column, row: tuple[str, str]) -> str:
        text = cell(column, row, found)
        ids = column.rows.get(row, [])
        worst = min((column.outcomes[i] for i in ids), key=severity) if ids else ""
        marks = " ".join(k.split(" ", 1)[1] for k in (REGRESSION, FIX) if k in text)
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
