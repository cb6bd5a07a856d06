"""The terminal summary: per driver, a verbs x outcomes table, then what deviated."""

from __future__ import annotations

from typing import Any

from pytest_rdma.outcomes import CRASH, DEVIATES, ERROR, OUTCOMES, TIMEOUT, WAIVED
from pytest_rdma.report.results import Results, by_driver, counts

# Outcomes whose evidence is worth reading in the summary, most serious first.
LISTED = (DEVIATES, CRASH, TIMEOUT, ERROR, WAIVED)


def render(records: list[dict[str, Any]], strict: bool = False) -> list[str]:
    lines: list[str] = []
    table = counts(records)
    for driver, group in by_driver(records).items():
        devices = sorted({r.get("device") or "-" for r in group})
        lines.append(f"driver {driver} (devices: {', '.join(devices)}): {len(group)} checks")
        lines += _table(table[driver])
        for outcome in LISTED:
            hits = [r for r in group if r["outcome"] == outcome]
            if hits:
                lines.append(f"  {outcome} ({len(hits)}):")
                for record in hits:
                    lines += _evidence(record)
        fixed = [r for r in group if (r.get("waiver") or {}).get("status") == "fixed"]
        for record in fixed:
            waiver = record["waiver"]
            verdict = "fails the run (--rdma-strict)" if strict else "XPASS"
            where = f"{waiver['file']}:{waiver['line']}"
            lines.append(f"  fixed: remove the waiver {waiver['pattern']!r} ({where}):"
                         f" {record['device']} now conforms [{verdict}]")
        lines.append("")
    return lines


def _table(verbs: dict[str, dict[str, int]]) -> list[str]:
    columns = [o for o in OUTCOMES if any(o in cell for cell in verbs.values())]
    width = max([len("verb")] + [len(v) for v in verbs])
    head = "  " + "verb".ljust(width) + "".join(f" {c:>11}" for c in columns) + f" {'total':>6}"
    rows = [head, "  " + "-" * (len(head) - 2)]
    for verb in sorted(verbs):
        cell = verbs[verb]
        rows.append("  " + verb.ljust(width) + "".join(f" {cell.get(c, 0) or '.':>11}" for c in columns)
                    + f" {sum(cell.values()):>6}")
    return rows


def _evidence(record: dict[str, Any]) -> list[str]:
    lines = [f"    {record['nodeid']}"]
    if record.get("ref"):
        lines.append(f"      ref:      {record['ref']}")
    if record.get("expected"):
        lines.append(f"      expected: {record['expected']}")
    if record.get("waiver"):
        waiver = record["waiver"]
        where = f"{waiver['file']}:{waiver['line']}"
        lines.append(f"      waiver:   {waiver['reason']} [{waiver['link']}] ({where})")
    if record.get("observed"):
        lines.append(f"      observed: {record['observed']}")
    elif record.get("reason"):
        lines.append(f"      reason:   {record['reason']}")
    return lines


class Summary:
    def __init__(self, results: Results, strict: bool) -> None:
        self.results = results
        self.strict = strict

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.results.records:
            return
        terminalreporter.section("rdma results per driver")
        for line in render(self.results.records, self.strict):
            terminalreporter.write_line(line)
