"""`pytest-rdma kcidb`: results files as one KCIDB submission (KernelCI's results database, schema v5.0).

    pytest-rdma kcidb results/rxe0/results.json results/siw0/results.json --origin my_lab | kcidb-submit ...

What it writes (docs/kcidb.md has the fields, the ids and the status mapping):
- a checkout per kernel release the runs recorded (the release is all a run knows of the kernel's
  source: no commit), and a build per kernel release and rdma-core version under it;
- a test per check, at its dotted path (`rdma.rxe.ibv_modify_qp.forbidden_attrs.RC_INIT_RTR_with_PORT`,
  report/dotted.py), with its status, the observation in `log_excerpt`, the driver and device in
  `environment.misc`, and the rest of the record's verdict in `misc`;
- a waived deviation is a FAIL, as KCIDB v5 has no "waived": its waiver is an issue (the reason,
  the bug) and the check an incident of it, KCIDB's own way to say a failure is known.

Ids are `<origin>:pytest-rdma:...`, made from what the results say (the run's start, the devices,
the stable id), so submitting the same results twice updates the same objects. With kcidb-io
installed (`pip install pytest-rdma[kcidb]`) the submission is validated before it is written.

Exit status: 0 written, 2 bad input (one line on stderr), 3 the submission does not validate (a bug of ours).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_rdma.command_line import InputError, Parser, fail, one_line
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report.dotted import dotted_path
from pytest_rdma.report.jsonfile import Document, read_results
from pytest_rdma.shapes import Json, JsonObject

SCHEMA = {"major": 5, "minor": 0}  # only fields of v5.0: every KCIDB of major version 5 takes it
# Our outcome -> KCIDB's status (docs/kcidb.md says why each).
STATUS = {
    CONFORMS: "PASS",
    DEVIATES: "FAIL",
    WAIVED: "FAIL",  # still a deviation of the tested code; the waiver is an issue, the check its incident
    UNSUPPORTED: "SKIP",  # the device does not advertise what the claim needs: not applicable
    NOT_EXERCISED: "SKIP",  # this setup could not reach the precondition: no statement either way
    CRASH: "ERROR",  # the check did not complete: the status of the tested code is unknown
    TIMEOUT: "ERROR",
    ERROR: "ERROR",
}
UNKNOWN_OUTCOME = "MISS"  # an outcome this version does not know: nothing can be said of the code
ORIGIN = re.compile(r"^[a-z0-9_]+$")  # KCIDB's origin pattern
EXCERPT_LIMIT = 16384  # KCIDB's maxLength of log_excerpt
UNKNOWN = "unknown"
IDENTITY_MISC = ("node_type", "transport", "firmware", "vendor_id", "vendor_part_id")


@dataclass(frozen=True)
class Run:
    """One results file: its records and what identifies the run."""

    path: Path
    document: Document
    key: str  # short, stable: the same results file gives the same ids

    @property
    def records(self) -> list[Mapping[str, object]]:
        return list(self.document.get("results", []))

    def software(self, record: Mapping[str, object]) -> tuple[str, str]:
        """The kernel release and rdma-core version a check ran on; for a check without a device,
        those of the run's devices when they agree."""
        identity = record.get("identity")
        if isinstance(identity, dict) and identity.get("kernel"):
            return str(identity["kernel"]), str(identity.get("rdma_core") or UNKNOWN)
        found = {
            (str(i.get("kernel") or UNKNOWN), str(i.get("rdma_core") or UNKNOWN))
            for i in self.document.get("devices", {}).values()
        }
        return found.pop() if len(found) == 1 else (UNKNOWN, UNKNOWN)


def run_of(path: Path) -> Run:
    document = read_results(path)
    started = str(document.get("started") or "")
    devices = sorted(document.get("devices", {}))
    key = hashlib.sha256(json.dumps([started, devices, document.get("argv")]).encode()).hexdigest()[:12]
    return Run(path, document, key)


def _text(value: object) -> str:
    # KCIDB's strings may hold anything but NUL.
    return str(value).replace("\0", "\\0")


def log_excerpt(record: Mapping[str, object]) -> str:
    """What the check observed, in the words of its record."""
    outcome = record.get("outcome")
    lines = [f"{outcome}: {record.get('claim_text') or record.get('title') or record.get('stable_id')}"]
    if record.get("ref"):
        lines.append(f"source: {record.get('deviation_ref') or record['ref']}")
    if outcome in (DEVIATES, WAIVED):
        lines += [f"expected: {record.get('expected', '')}", f"observed: {record.get('observed', '')}"]
        waiver = record.get("waiver")
        if outcome == WAIVED and isinstance(waiver, dict):
            lines.append(f"waived: {waiver.get('reason', '')} {waiver.get('link', '')}".rstrip())
        reproducer = record.get("reproducer")
        if isinstance(reproducer, dict) and isinstance(reproducer.get("confirmed"), dict):
            lines.append(f"in C: {reproducer['confirmed'].get('verdict')}")
    elif record.get("reason"):
        lines.append(f"reason: {record['reason']}")
    if outcome in (CRASH, TIMEOUT, ERROR) and record.get("rerun"):
        lines.append(f"rerun: {record['rerun']}")
    steps = record.get("steps")
    if isinstance(steps, list) and steps:
        lines += ["calls:", *(str(step) for step in steps)]
    if outcome in (CRASH, TIMEOUT, ERROR) and record.get("message"):
        lines += ["", str(record["message"])]
    text = _text("\n".join(lines))
    return text if len(text) <= EXCERPT_LIMIT else text[: EXCERPT_LIMIT - 2] + "\n…"


def environment(record: Mapping[str, object]) -> JsonObject:
    identity = record.get("identity") if isinstance(record.get("identity"), dict) else {}
    assert isinstance(identity, dict)
    misc: JsonObject = {"driver": str(record.get("driver") or ""), "device": str(record.get("device") or "")}
    misc.update({key: str(identity[key]) for key in IDENTITY_MISC if identity.get(key)})
    if record.get("peer"):
        misc["peer"] = str(record["peer"])
    device = misc["device"] or "no device"
    return {"comment": _text(f"{device} ({misc['driver']})" if misc["driver"] else device), "misc": misc}


def check_misc(record: Mapping[str, object]) -> JsonObject:
    misc: JsonObject = {"tool": "pytest-rdma", "outcome": str(record.get("outcome", ""))}
    for key in ("stable_id", "nodeid", "verb", "claim", "variant", "ref", "claim_text", "decided_by", "reason"):
        if record.get(key):
            misc[key] = _text(record[key])
    if record.get("params"):
        misc["params"] = record["params"]  # type: ignore[assignment]  # a JSON object of strings
    if record.get("blocked"):
        misc["blocked"] = True
    waiver = record.get("waiver")
    if isinstance(waiver, dict):
        misc["waiver"] = {k: _text(waiver[k]) for k in ("pattern", "reason", "link", "status") if waiver.get(k)}
    return misc


def status(outcome: object) -> str:
    return STATUS.get(str(outcome), UNKNOWN_OUTCOME)


def _id(origin: str, *parts: str) -> str:
    return ":".join([origin, "pytest-rdma", *parts])


def submission(runs: list[Run], origin: str) -> JsonObject:
    """The KCIDB v5.0 document of these runs' checks."""
    checkouts: dict[str, Json] = {}
    builds: dict[str, Json] = {}
    tests: list[Json] = []
    issues: dict[str, Json] = {}
    incidents: list[Json] = []
    for run in runs:
        for record in run.records:
            kernel, rdma_core = run.software(record)
            checkout_id = _id(origin, f"linux-{kernel}")
            checkouts.setdefault(
                checkout_id,
                {
                    "id": checkout_id,
                    "origin": origin,
                    "comment": _text(f"Linux {kernel}, as installed where the checks ran (its commit is not known)"),
                    "misc": {"kernel_release": kernel},
                },
            )
            build_id = _id(origin, f"linux-{kernel}", f"rdma-core-{rdma_core}")
            builds.setdefault(
                build_id,
                {
                    "id": build_id,
                    "checkout_id": checkout_id,
                    "origin": origin,
                    "comment": _text(f"Linux {kernel} with rdma-core {rdma_core} (as installed; not built here)"),
                    "misc": {"kernel_release": kernel, "rdma_core": rdma_core},
                },
            )
            device = str(record.get("device") or "no-device")
            test_id = _id(origin, run.key, device, _text(record.get("stable_id") or record.get("nodeid") or ""))
            test: JsonObject = {
                "id": test_id,
                "build_id": build_id,
                "origin": origin,
                "path": dotted_path(record),
                "status": status(record.get("outcome")),
                "comment": _text(record.get("title") or record.get("stable_id") or ""),
                "log_excerpt": log_excerpt(record),
                "environment": environment(record),
                "misc": check_misc(record),
            }
            if isinstance(record.get("duration"), (int, float)):
                test["duration"] = float(record["duration"])  # type: ignore[arg-type]
            tests.append(test)
            waiver = record.get("waiver")
            if record.get("outcome") == WAIVED and isinstance(waiver, dict):
                issue = waiver_issue(origin, str(record.get("driver") or ""), waiver)
                issues.setdefault(str(issue["id"]), issue)
                incidents.append(
                    {
                        "id": _id(origin, "waived", run.key, device, _text(record.get("stable_id") or "")),
                        "origin": origin,
                        "issue_id": issue["id"],
                        "issue_version": issue["version"],
                        "test_id": test_id,
                        "present": True,
                    }
                )
    document: JsonObject = {
        "version": dict(SCHEMA),
        "checkouts": list(checkouts.values()),
        "builds": list(builds.values()),
        "tests": tests,
    }
    if issues:
        document["issues"] = list(issues.values())
        document["incidents"] = incidents
    return document


def waiver_issue(origin: str, driver: str, waiver: Mapping[str, object]) -> JsonObject:
    """A driver's waiver as a KCIDB issue: a known deviation of the provider (the tested code)."""
    reason = _text(waiver.get("reason") or "")
    issue: JsonObject = {
        "id": _id(origin, "waiver", driver, _text(waiver.get("pattern") or "")),
        "version": 1,
        "origin": origin,
        "comment": reason,
        "culprit": {"code": True, "tool": False, "harness": False},
        "misc": {"driver": driver, **{k: _text(waiver[k]) for k in ("file", "line", "link") if waiver.get(k)}},
    }
    link = str(waiver.get("link") or "")
    if link.startswith(("https://", "http://")):
        issue["report_url"] = link
    if reason:
        issue["report_subject"] = reason.splitlines()[0]
    return issue


def validate(document: JsonObject) -> str | None:
    """Why kcidb-io's v5.0 schema refuses the document, or None; None too when kcidb-io is absent."""
    try:
        from jsonschema.exceptions import ValidationError
        from kcidb_io.schema import V5_0
    except ImportError:
        return None
    try:
        V5_0.validate_exactly(document)
    except ValidationError as exc:
        where = "/".join(str(part) for part in exc.absolute_path)
        return f"{where}: {exc.message}"
    return None


def _runs(paths: list[Path]) -> Iterator[Run]:
    for path in paths:
        yield run_of(path)


def main(argv: list[str] | None = None) -> int:
    parser = Parser(
        prog="pytest-rdma kcidb",
        description="Write results files (--rdma-json) as a KCIDB submission (schema v5.0) for KernelCI: "
        "a checkout and build per kernel release and rdma-core version, a test per check.",
    )
    parser.add_argument(
        "results", nargs="+", type=Path, metavar="RESULTS.json", help="results files; the .jsonl of a cut-short run too"
    )
    parser.add_argument(
        "--origin", required=True, metavar="NAME", help="your CI system's KCIDB origin (lower-case letters, digits, _)"
    )
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here instead of standard output")
    args = parser.parse_args(argv)
    if not ORIGIN.match(args.origin):
        return fail(
            parser.prog,
            f"--origin {args.origin!r}: a KCIDB origin is lower-case letters, digits and '_' only "
            f"(e.g. {re.sub(r'[^a-z0-9_]+', '_', args.origin.lower()).strip('_') or 'my_lab'})",
        )
    try:
        runs = list(_runs(args.results))
    except InputError as exc:
        return fail(parser.prog, exc)
    if not any(run.records for run in runs):
        return fail(parser.prog, "the results files hold no results; give files of runs that ran checks")
    document = submission(runs, args.origin)
    problem = validate(document)
    if problem is not None:
        print(
            f"{parser.prog}: the submission does not validate against KCIDB v5.0 (kcidb-io): "
            f"{one_line(problem)[:500]}; this is a bug of pytest-rdma, please report it with the results file",
            file=sys.stderr,
        )
        return 3
    text = json.dumps(document, indent=1, sort_keys=False) + "\n"
    if args.output:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            return fail(parser.prog, f"cannot write {args.output} ({exc.strerror}); give -o a writable path")
        print(f"kcidb: {args.output}: {len(document['tests'])} tests", file=sys.stderr)  # type: ignore[arg-type]
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
