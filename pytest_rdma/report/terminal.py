"""The terminal report a person reads at the end of a run, and the verdict that sets the exit code.

Per device: one line of counts; then each deviation that no waiver covers, with its claim in
words, what was observed and the paths of its reproducers; then one verdict line. Waived,
unsupported and not-exercised checks are counted, and listed only with -r or -v. Checks whose
outcome libibverbs or the kernel decided (above the provider) are counted apart: they are not
the provider's score.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import pytest

from pytest_rdma.expectations import Expectations, id_pattern, review
from pytest_rdma.outcomes import CONFORMS, CRASH, DEVIATES, ERROR, NOT_EXERCISED, TIMEOUT, UNSUPPORTED, WAIVED
from pytest_rdma.report.profile import Requirement, Requirements, failure_text, profile, profile_lines
from pytest_rdma.report.record import Record, WaiverRecord
from pytest_rdma.report.results import Results

if TYPE_CHECKING:
    from pytest_rdma.catalogue.model import Verb

COUNTED = (CONFORMS, DEVIATES, CRASH, TIMEOUT, ERROR, UNSUPPORTED, WAIVED, NOT_EXERCISED)
FAILING = (DEVIATES, CRASH, TIMEOUT, ERROR)
EXERCISED = (CONFORMS, DEVIATES, WAIVED, CRASH, TIMEOUT)


def by_device(records: Sequence[Record]) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(record.get("device") or "", []).append(record)
    return groups


def count_line(device: str, group: Sequence[Record]) -> str:
    driver = next((r.get("driver") for r in group if r.get("driver")), "")
    if not driver:  # checks of an API family no provider here implements (DET): blocked, not a device's
        families = sorted({str(r.get("family") or "?") for r in group})
        driver = f"{', '.join(families)}: no provider here"
    counts = {outcome: sum(1 for r in group if r["outcome"] == outcome) for outcome in COUNTED}
    shown = ", ".join(f"{n} {outcome}" for outcome, n in counts.items() if n or outcome in (CONFORMS, DEVIATES))
    above = sum(1 for r in group if r.get("decided_by") not in ("", "provider", None) and r["outcome"] in EXERCISED)
    note = f" ({above} of them decided above the provider, by libibverbs or the kernel)" if above else ""
    return f"{device} ({driver}): {len(group)} checks: {shown}{note}"


def failing(record: Record) -> bool:
    """A deviation no waiver covers, a crash, a timeout, an error, or unsupported but required."""
    return record["outcome"] in FAILING or bool(record.get("required"))


def verdict(device: str, group: Sequence[Record]) -> tuple[str, bool]:
    """The verdict line of a device, and whether it fails the run."""
    failed = [r for r in group if failing(r)]
    if failed:
        kinds = [
            f"{sum(1 for r in failed if r['outcome'] == o)} {o}"
            for o in FAILING
            if any(r["outcome"] == o for r in failed)
        ]
        required = sorted({r["required"]["capability"] for r in failed if r.get("required")})
        if required:
            count = sum(1 for r in failed if r.get("required"))
            kinds.append(f"{count} unsupported but required ({', '.join(required)})")
        return f"{device}: FAILS: {', '.join(kinds)}", True
    if not any(r["outcome"] in EXERCISED for r in group):
        return (
            f"{device}: FAILS: nothing could be exercised on this device ({len(group)} checks unsupported or "
            "not exercised): check the device, port and GID, or the provider"
        ), True
    waived = sum(1 for r in group if r["outcome"] == WAIVED)
    extra = f", {waived} known deviations waived" if waived else ""
    return f"{device}: PASSES: every exercised check conforms{extra}", False


def deviation_lines(record: Record, reproducers: str) -> list[str]:
    lines = [f"  {record['stable_id']} [{record.get('ref', '')}]", f"      claim:    {record.get('claim_text', '')}"]
    if record.get("expected"):
        lines.append(f"      expected: {record['expected']}")
    lines.append(f"      observed: {record.get('observed') or record.get('reason', '')}")
    waiver = record.get("waiver") or {}
    if waiver.get("status") == "mismatch":
        lines.append(f"      waiver:   {waiver['file']}:{waiver['line']} records {waiver['observed']}: not this")
    found = record.get("reproducer") or {}
    pair = found.get("pair")
    if found.get("c") or pair:
        if pair:  # between two hosts: the receiving side on the peer's host first, then the sending side here
            lines.append(
                f"      reproduce: {reproducers}/{pair['receiver']} on the peer's host: {pair['commands']['receiver']}"
            )
            lines.append(f"                 then {reproducers}/{pair['sender']} here: {pair['commands']['sender']}")
        else:
            lines.append(f"      reproduce: {reproducers}/{found['c']} (C), {reproducers}/{found['python']} (Python)")
        confirmed = found.get("confirmed")
        if confirmed:
            shown = confirmed.get("detail") if confirmed["verdict"] != "reproduced" else ""
            detail = f" ({shown})" if shown else ""
            lines.append(f"      in C:      {confirmed['verdict']}{detail}")
    elif record.get("rerun"):
        lines.append(f"      rerun:    {record['rerun']}")
    return lines


def listed_lines(record: Record) -> list[str]:
    why = record.get("reason") or record.get("observed") or ""
    if record.get("required"):
        why = failure_text(record["required"])
    lines = [f"  {record['outcome']:<13} {record['stable_id']}: {why}"]
    if record.get("rerun"):  # a crash: the one command that runs the check again, alone
        lines.append(f"      rerun:    {record['rerun']}")
    return lines


def render(
    records: Sequence[Record],
    *,
    reproducers: str,
    verbose: bool,
    waivers: Mapping[str, list[WaiverRecord]] | None = None,
    required: Mapping[str, Sequence[Requirement]] | None = None,
) -> tuple[list[str], bool]:
    """The report's lines, and whether a device's verdict fails the run."""
    lines: list[str] = []
    fails = False
    groups = by_device(records)
    for device, group in groups.items():
        lines.append(count_line(device or "no device", group))
    for device, group in groups.items():
        new = [r for r in group if failing(r)]
        if new:
            lines.append("")
            lines.append(f"{device or 'no device'}: {len(new)} not covered by a waiver:")
            for record in new:
                lines += deviation_lines(record, reproducers) if record["outcome"] == DEVIATES else listed_lines(record)
        if verbose:
            quiet = [r for r in group if r["outcome"] in (WAIVED, UNSUPPORTED, NOT_EXERCISED) and not failing(r)]
            if quiet:
                lines.append(f"{device or 'no device'}: waived, unsupported and not exercised:")
                for record in quiet:
                    lines += listed_lines(record)
    for device, entries in (required or {}).items():
        lines += profile_lines(device, entries)
    for name, found in (waivers or {}).items():
        for waiver in found:
            lines.append(f"waiver {name}: {waiver['file']}:{waiver['line']} {waiver['pattern']}: {waiver['why']}")
    lines.append("")
    for device, group in groups.items():
        if not device:
            continue  # checks of an API family without a provider: counted, never a device's verdict
        line, failed = verdict(device, group)
        lines.append(line)
        fails = fails or failed
    return lines, fails


def catalogue_ids(patterns: Iterable[str] | None = None) -> set[str]:
    """The stable id of every check the active catalogue generates, whether this run selected it or not.

    With `patterns` (waivers' ids), only of the verbs whose test a pattern can name: expanding the
    whole catalogue again costs seconds at the end of a lab run (the xdist controller never collects).
    """
    from pytest_rdma import generate
    from pytest_rdma.explore.execute import EXPLORE

    verbs: Sequence[Verb] = generate.active().verbs
    # An exploration's findings (test_explore[...]) are checks only of a run that explored and found them
    # again: a waiver of one is never stale for a run that did not (as one a -k left out is not).
    found_by_exploring = {p for p in patterns or () if p.split("[", 1)[0] == f"test_{EXPLORE}"}
    if patterns is not None:
        heads = {pattern.split("[", 1)[0] for pattern in patterns}
        verbs = [verb for verb in verbs if any(id_pattern(head).fullmatch(f"test_{verb.name}") for head in heads)]
    return {case.stable_id for verb in verbs for case in generate.expand(verb)} | found_by_exploring


class Summary:
    """The end of the run: the report, and an exit status that a CI can trust."""

    def __init__(
        self,
        results: Results,
        expectations: Expectations,
        strict: bool,
        reproducers: str,
        requirements: Requirements | None = None,
    ) -> None:
        self.results = results
        self.expectations = expectations
        self.strict = strict
        self.reproducers = reproducers
        self.requirements = requirements or Requirements((), "", expectations)
        self.fails = False
        self.waivers: dict[str, list[WaiverRecord]] = {}
        self.profile: dict[str, list[Requirement]] = {}  # device -> what it was required to support, and how it held
        self.records: list[Record] = []

    def pytest_rdma_record(self, record: Record) -> None:
        self.records.append(record)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        # After Results (tryfirst) finished the records, before the file writers (trylast) record the status.
        records = [r for r in self.records if r.get("device") or r.get("family")]
        if not records:
            return
        # The whole catalogue's ids only for waivers that matched no check of this run (a -k, a node id).
        self.waivers = review(self.expectations, records, known=catalogue_ids)
        self.profile = profile(records, self.requirements)
        _, self.fails = render(records, reproducers=self.reproducers, verbose=False, waivers=self.waivers)
        broken_waivers = self.strict and any(self.waivers.values())
        if (self.fails or broken_waivers) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
        records = [r for r in self.records if r.get("device") or r.get("family")]
        if not records:
            return
        # -v, or -r with skips or xfails asked for (-rs, -rx, -ra, -rA): pytest's default -rfE lists neither.
        chars = str(config.getoption("reportchars", "") or "")
        verbose = config.get_verbosity() > 0 or any(c in chars for c in "sxaA")
        lines, _ = render(
            records, reproducers=self.reproducers, verbose=verbose, waivers=self.waivers, required=self.profile
        )
        terminalreporter.section("rdma results per device")
        for line in lines:
            terminalreporter.write_line(line)
