"""`pytest-rdma lava`: results files as LAVA test cases, one `lava-test-case` line per check.

The LAVA test definition that ships with the package (`pytest_rdma/lava/pytest-rdma.yaml`;
`pytest-rdma lava --definition` prints it) runs the suite on the board's device and then runs what
this command prints, inside the LAVA test shell:

    lava-test-set start rxe0
    lava-test-case ibv_modify_qp.forbidden_attrs.RC_INIT_RTR_with_PORT --result pass --measurement 0.012 --units s
    ...
    lava-test-set stop rxe0

A test set per device, and in it a test case per check named by its dotted path without the root
and the driver (report/dotted.py: letters, digits, `_` and `.`, so the lines are safe for the shell).
LAVA keeps at most 100 characters of a name: a longer one keeps its first 91 and a hash of the whole.
Outcomes map to LAVA's results as the JUnit file's do: conforms pass; deviates, crash, timeout and
error fail; waived, unsupported and not exercised skip (the artifacts keep which, and why).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from pathlib import Path

from pytest_rdma.command_line import InputError, Parser, fail
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report.dotted import check_segments, segment
from pytest_rdma.report.jsonfile import read_results

DEFINITION = Path(__file__).resolve().parents[1] / "lava" / "pytest-rdma.yaml"
RESULT = {
    CONFORMS: "pass",
    DEVIATES: "fail",
    CRASH: "fail",
    TIMEOUT: "fail",
    ERROR: "fail",
    WAIVED: "skip",
    UNSUPPORTED: "skip",
    NOT_EXERCISED: "skip",
}
UNKNOWN = "unknown"  # an outcome this version does not know
NAME_LIMIT = 100  # LAVA's test case names


def case_name(record: Mapping[str, object]) -> str:
    name = ".".join(check_segments(record)) or "check"
    if len(name) <= NAME_LIMIT:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: NAME_LIMIT - len(digest) - 1]}_{digest}"


def set_name(record: Mapping[str, object]) -> str:
    return segment(str(record.get("device") or "")) or "no_device"


def lines(records: list[Mapping[str, object]]) -> list[str]:
    """The lava-test-set and lava-test-case commands of these records, a test set per device."""
    by_set: dict[str, list[Mapping[str, object]]] = {}
    for record in records:
        by_set.setdefault(set_name(record), []).append(record)
    out: list[str] = []
    for name, members in by_set.items():
        out.append(f"lava-test-set start {name}")
        for record in members:
            line = f"lava-test-case {case_name(record)} --result {RESULT.get(str(record.get('outcome')), UNKNOWN)}"
            duration = record.get("duration")
            if isinstance(duration, (int, float)):
                line += f" --measurement {duration:.6f} --units s"
            out.append(line)
        out.append(f"lava-test-set stop {name}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = Parser(
        prog="pytest-rdma lava",
        description="Print a lava-test-case line per check of results files (--rdma-json), a test set per device, "
        "for a LAVA test shell to run; --definition prints the LAVA test definition that ships with pytest-rdma.",
    )
    parser.add_argument("results", nargs="*", type=Path, metavar="RESULTS.json", help="results files (or .jsonl)")
    parser.add_argument("--definition", action="store_true", help="print the shipped LAVA test definition (YAML)")
    args = parser.parse_args(argv)
    if args.definition:
        sys.stdout.write(DEFINITION.read_text(encoding="utf-8"))
        return 0
    if not args.results:
        return fail(parser.prog, "no results file given; give the results.json a run wrote (pytest --rdma-json PATH)")
    records: list[Mapping[str, object]] = []
    try:
        for path in args.results:
            records += read_results(path).get("results", [])
    except InputError as exc:
        return fail(parser.prog, exc)
    if not records:
        return fail(parser.prog, "the results files hold no results; give files of runs that ran checks")
    sys.stdout.write("\n".join(lines(records)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
