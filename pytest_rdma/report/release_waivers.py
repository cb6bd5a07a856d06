"""Waivers across kernel releases: one that holds on one release and not on another is stale there.

A waiver holds on a release when one of its checks deviated there as it records (a record carries
it with status "applied"). On another release in its scope (its `kernel` range includes that
release) its check may conform ("fixed"), deviate otherwise ("mismatch"), or not match at all: the
waiver is stale on that release, and its `kernel` range should say where it holds. An intermittent
waiver (seen in some runs only) is stale on a release only where its check deviates otherwise. A release its
range leaves out is not stale: the range already says so. Read from the records alone (each
carries its waiver with the scopes and its device's identity), so the lab's kernel matrix and
`pytest-rdma compare` both can tell.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_rdma.expectations import id_pattern, in_range, version_key
from pytest_rdma.report.record import Record

HOLDS = "applied"


@dataclass(frozen=True)
class StaleOnRelease:
    where: str  # the waiver's file:line
    pattern: str
    driver: str
    release: str  # where it does not hold
    why: str
    holds_on: tuple[str, ...]  # where it does
    suggested: str  # a kernel range for where it holds, or ""

    def line(self) -> str:
        hint = f"; kernel = {self.suggested!r} would say where it holds" if self.suggested else ""
        return (
            f"{self.where}: waiver {self.pattern} of {self.driver} is stale on {self.release} ({self.why}); "
            f"it holds on {', '.join(self.holds_on)}{hint}"
        )


def _key(waiver: Mapping[str, object]) -> tuple[str, str, str]:
    """A waiver by its file, id pattern and scopes, not its line: a file edited between the releases' runs
    moves the line, and one waiver would read as two (the same pattern twice in a file differs by scope)."""
    scopes = waiver.get("scopes") or {}
    scoped = sorted(scopes.items()) if isinstance(scopes, Mapping) else []
    return (str(waiver.get("file")), str(waiver.get("pattern")), repr(scoped))


def stale_on_release(runs: Mapping[str, Iterable[Record]]) -> list[StaleOnRelease]:
    """Each waiver that holds on some releases and not on another that its scope includes (pure).

    `runs`: kernel release -> the records of that release's runs (every driver)."""
    # Per release and driver, whether it ran there and on which kernel identity.
    identities: dict[tuple[str, str], Mapping[str, str]] = {}
    # waiver -> its record (with scopes), its driver, and release -> the statuses its checks had there.
    waivers: dict[tuple[str, str, str], tuple[Mapping[str, object], str]] = {}
    statuses: dict[tuple[tuple[str, str, str], str], list[str]] = {}
    outcomes: dict[tuple[str, str], dict[str, str]] = {}  # (release, driver) -> stable id -> outcome
    for release, records in runs.items():
        for record in records:
            driver = str(record.get("driver") or "")
            if not driver:
                continue
            identities.setdefault((release, driver), record.get("identity") or {"kernel": release})
            outcomes.setdefault((release, driver), {})[str(record.get("stable_id"))] = str(record.get("outcome"))
            carried = record.get("waiver")
            if carried:
                key = _key(carried)
                waivers.setdefault(key, (carried, driver))
                statuses.setdefault((key, release), []).append(str(carried.get("status") or ""))
    found: list[StaleOnRelease] = []
    for key, (waiver, driver) in sorted(waivers.items()):
        holds = [release for release in runs if HOLDS in statuses.get((key, release), ())]
        if not holds:
            continue  # stale everywhere, or nowhere applied: each run's own review says so
        scopes = waiver.get("scopes") or {}
        for release in runs:
            identity = identities.get((release, driver))
            if release in holds or identity is None:
                continue
            if not all(
                in_range(str(identity.get(scope, "")), str(spec))
                for scope, spec in (scopes.items() if isinstance(scopes, Mapping) else ())
            ):
                continue  # its range leaves this release out, as it should
            ran = [
                o
                for i, o in outcomes.get((release, driver), {}).items()
                if id_pattern(str(waiver["pattern"])).fullmatch(i)
            ]
            if not ran:
                continue  # its checks were not run on this release (a -k, a cut-short run): nothing to say
            seen = statuses.get((key, release), [])
            if waiver.get("intermittent") and "mismatch" not in seen:
                continue  # seen in some runs only: a release where it was not seen says nothing against it
            why = (
                "its check conforms there"
                if "fixed" in seen
                else "its check deviates otherwise there"
                if "mismatch" in seen
                else f"its check was {ran[0]} there"
            )
            found.append(
                StaleOnRelease(
                    f"{waiver.get('file')}:{waiver.get('line')}",
                    str(waiver.get("pattern")),
                    driver,
                    release,
                    why,
                    tuple(holds),
                    suggested_range(holds, [r for r in runs if r not in holds and (r, driver) in identities]),
                )
            )
    return found


def kernel_series(release: str) -> str:
    """ "6.12.117+deb12-amd64" -> "6.12" (pure)."""
    return ".".join(str(part) for part in version_key(release)[:2])


def suggested_range(holds: list[str], not_holds: list[str]) -> str:
    """A `kernel` range that includes the releases where a waiver holds and none where it does not,
    by series ("<6.12", ">=6.12"), or "" when they interleave (pure)."""
    if not holds or not not_holds:
        return ""
    newest_holding = max(holds, key=version_key)
    oldest_holding = min(holds, key=version_key)
    if all(version_key(other) > version_key(newest_holding) for other in not_holds):
        first_not = min(not_holds, key=version_key)
        return f"<{kernel_series(first_not)}" if kernel_series(first_not) != kernel_series(newest_holding) else ""
    if all(version_key(other) < version_key(oldest_holding) for other in not_holds):
        last_not = max(not_holds, key=version_key)
        if kernel_series(last_not) != kernel_series(oldest_holding):
            return f">={kernel_series(oldest_holding)}"
    return ""
