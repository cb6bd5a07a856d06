"""Draft an expectations file from lab results: one waiver per observed deviation of a driver.

    python -m pytest_rdma.report.waivers siw results.json [more.json|.jsonl ...] > siw.toml

The reason it writes says what was observed and when, and marks the waiver as awaiting
triage; a maintainer replaces it with the why (driver design, known bug) and a bug link
where there is one. Deviations are never waived silently: every entry names its evidence.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def draft(driver: str, documents: list[dict[str, Any]]) -> str:
    waivers: dict[str, dict[str, Any]] = {}
    identity: dict[str, Any] = {}
    for document in documents:
        for record in document.get("results", []):
            if record.get("driver") != driver:
                continue
            identity = identity or record.get("identity") or {}
            if record.get("outcome") not in ("deviates", "waived"):
                continue
            waivers.setdefault(record["stable_id"], record)
    covered = sum(1 for d in documents for r in d.get("results", []) if r.get("driver") == driver)
    lines = [f"# Expected deviations of the {driver} driver, from lab runs ({covered} checks:",
             f"# kernel {identity.get('kernel', '?')}, rdma-core {identity.get('rdma_core', '?')}).",
             "# Format: pytest_rdma/expectations.py. Each reason records what was seen; refine it with",
             "# the why and a bug link once triaged. Regenerate: python -m pytest_rdma.report.waivers.",
             ""]
    for stable_id, record in sorted(waivers.items()):
        observed = record.get("observed") or record.get("reason") or ""
        expected = record.get("expected", "")
        reason = f"{driver} deviates in the lab: expected {expected}; observed {observed} (awaiting triage)"
        lines += [
            "[[waiver]]",
            f"id = {_toml_string(stable_id)}",
            f"reason = {_toml_string(reason)}",
            f"link = {_toml_string(record.get('ref') or record.get('verb') or 'unknown')}",
            f"observed = {_toml_string(observed)}",
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from pytest_rdma.report.jsonfile import load

    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(draft(args[0], [load(Path(p)) for p in args[1:]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
