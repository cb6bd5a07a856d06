"""Expected deviations per provider driver ("waivers"), read from TOML files.

A driver's file lists the deviations it is known to have, so a CI gate can tell a known
deviation from a new one. A waiver holds only while the device does what it records:

    driver = "rxe"                        # optional: defaults to the file's stem (rxe.toml -> rxe)
    require = ["rc", "ud", "srq"]         # optional: capabilities the driver must advertise (capabilities.py)

    [[waiver]]
    id = "test_ibv_modify_qp[required-attrs-RC-INIT>RTR-without-AV]"   # the check's stable id (* and ? match)
    reason = "rxe does not check the address vector on INIT->RTR"      # required: why it is expected
    link = "ibv_modify_qp(3) NOTES"                                    # required: page section or bug URL
    observed = { returned = "success" }                                # required: what the device did
    kernel = ">=6.1,<6.2"                                              # optional scopes: version ranges
    rdma_core = ">=44"
    firmware = "*"
    intermittent = true                                                # optional: seen in some runs only

`observed` is compared with the deviation's own observation (an errno, a returned value, a
field's value): a waived check that deviates in another way is a deviation that says "waived
X, observed Y". A waiver whose scope excludes the device does not apply. At the end of a run a
waiver that matched no check is reported stale, and one whose check was not exercised (or is
unsupported) is refused: a waiver needs an observation to hold. A check unsupported for the lack
of a capability in `require` fails the run (report/profile.py).

`intermittent = true` records a deviation the device shows in some runs and not in others (a provider's
race): it is waived when seen, as any other; a run where its check conforms says the waiver was not seen
("unseen") instead of calling it stale ("fixed"), and `--rdma-strict` does not fail that run. The field's
name for this is a flake list (deqp-runner's --flakes); ours still holds only for the recorded observation.

Anything malformed is a `pytest.UsageError` naming the file and the line: a CI gate that
silently ignored a broken waiver file would pass or fail for the wrong reason.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_rdma import capabilities

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - older Pythons
    import tomli as tomllib  # type: ignore[no-redef]

from pytest_rdma.observations import Observation

if TYPE_CHECKING:
    from pytest_rdma.report.record import CheckInfo, Record, WaiverRecord

SHIPPED_DIR = Path(__file__).with_name("expectations")
SCOPES = ("kernel", "rdma_core", "firmware")
# What a kernel fault is called in a record: the kernel-log guard's kinds (guard/kmsg.py) and the lab's, for a
# fault that ended its VM (lab/fault.py). A test holds them to both.
KERNEL_FAULT_KINDS = ("warning", "bug", "oops", "kasan", "lockdep", "panic", "hang")
# The kinds that end the lab's VM (lab/fault.py; a WARNING, KASAN or lockdep report does not).
VM_ENDING_FAULTS = ("oops", "bug", "panic", "hang")
WAIVER_KEYS = {"id", "reason", "link", "observed", "intermittent", *SCOPES}
REQUIRED_KEYS = ("id", "reason", "link")
TOP_LEVEL_KEYS = {"driver", "require", "waiver"}
_WAIVER_HEADER = re.compile(r"^\s*\[\[\s*waiver\s*\]\]")
_TOML_LINE = re.compile(r"line (\d+)")
_RANGE = re.compile(r"^\s*(>=|<=|==|!=|>|<)?\s*([0-9][0-9A-Za-z.\-+_]*|\*)\s*$")


@functools.lru_cache(maxsize=1024)
def version_key(text: str) -> tuple[int, ...]:
    """ "6.1.0-56-amd64" -> (6, 1, 0, 56): the numbers of the first run of numbers and separators.

    Not every number of the text: the 64 of "amd64" made 6.1.0-56-amd64 newer than 6.1.0-56.
    """
    found = re.search(r"\d[\d.\-+_]*", text)
    return tuple(int(part) for part in re.findall(r"\d+", found.group())) if found else ()


@functools.lru_cache(maxsize=4096)
def in_range(version: str, spec: str) -> bool:
    """Whether `version` satisfies every comparison of `spec` (">=6.1,<6.2"; "*" is anything).

    Remembered: the end of a run asks it of every waiver and every record (review), a few versions and
    specs in all; 1,318 records took 0.8 s on the host, seconds under TCG."""
    for part in (p for p in spec.split(",") if p.strip()):
        found = _RANGE.match(part)
        if found is None:
            raise ValueError(f"{part!r} is not a version comparison (e.g. >=6.1)")
        op, bound = found.group(1) or "==", found.group(2)
        if bound == "*":
            continue
        have, want = version_key(version), version_key(bound)
        have = have[: len(want)] if op in ("==", "!=") else have
        ok = {
            ">=": have >= want,
            "<=": have <= want,
            ">": have > want,
            "<": have < want,
            "==": have == want,
            "!=": have != want,
        }[op]
        if not ok:
            return False
    return True


@dataclass(frozen=True)
class Waiver:
    """One expected deviation of one driver."""

    pattern: str
    reason: str
    link: str
    observed: Mapping[str, object]  # TOML values of the waiver's `observed` table
    driver: str
    file: str
    line: int
    scopes: Mapping[str, str] = field(default_factory=dict)
    intermittent: bool = False  # seen in some runs only: a run where its check conforms does not make it stale

    @property
    def where(self) -> str:
        return f"{Path(self.file).name}:{self.line}"

    def matches(self, stable_id: str) -> bool:
        return id_pattern(self.pattern).fullmatch(stable_id) is not None

    def applies_to(self, identity: Mapping[str, str]) -> bool:
        return all(in_range(str(identity.get(scope, "")), spec) for scope, spec in self.scopes.items())

    @property
    def waives_crash(self) -> bool:
        """`observed = { crash = true }`: the process running the check dies in it (a provider's segfault in
        the verb). Such a waiver holds for that crash only, never for a deviation or an error."""
        return self.observed.get("crash") is True

    @property
    def waived_kernel_fault(self) -> str:
        """`observed = { kernel_fault = KIND }`: the kernel faults so during the check (the kernel-log guard's
        WARNING, BUG, Oops, KASAN or lockdep report, or the lab's Oops, panic or hang that ended the VM). Such a
        waiver holds for that fault only, never for a deviation or an error of the check's own; "" if not one."""
        kind = self.observed.get("kernel_fault")
        return kind if isinstance(kind, str) else ""

    def matches_observation(self, observation: Observation) -> bool:
        """The deviation's observation holds what the waiver records (its type decides: Observation.matches)."""
        return observation.matches(self.observed)

    def observed_text(self) -> str:
        return ", ".join(f"{key} = {value}" for key, value in self.observed.items())

    def as_dict(self) -> WaiverRecord:
        return {
            "pattern": self.pattern,
            "reason": self.reason,
            "link": self.link,
            "observed": dict(self.observed),
            "file": Path(self.file).name,
            "line": self.line,
            "scopes": dict(self.scopes),
            **({"intermittent": True} if self.intermittent else {}),
        }


@dataclass(frozen=True)
class Required:
    """A capability a driver's expectations file requires (`require = [...]`), and where."""

    name: str
    driver: str
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{Path(self.file).name}:{self.line}"


@dataclass
class Expectations:
    """Waivers by driver; the first waiver of the driver that matches the check and the device applies."""

    by_driver: dict[str, list[Waiver]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    required: dict[str, list[Required]] = field(default_factory=dict)  # driver -> its files' `require`
    # Per driver, its waivers by the ids they can match (_Index): most checks have none, and a dict says so at
    # once, where a loop over dozens of patterns, or one regex of them all (compiled at each pytest start, about
    # a tenth of a second under TCG), took longer.
    _index: dict[str, _Index] = field(default_factory=dict, repr=False, compare=False)

    def add(self, waivers: Iterable[Waiver]) -> None:
        for waiver in waivers:
            self.by_driver.setdefault(waiver.driver, []).append(waiver)
            self._index.pop(waiver.driver, None)

    def require(self, required: Iterable[Required]) -> None:
        for entry in required:
            if all(entry.name != known.name for known in self.required.get(entry.driver, ())):
                self.required.setdefault(entry.driver, []).append(entry)

    def find(self, info: CheckInfo) -> Waiver | None:
        driver = info.get("driver", "")
        index = self._index.get(driver)
        if index is None:
            index = self._index[driver] = _Index(self.by_driver.get(driver, ()))
        stable_id = info["stable_id"]
        identity = info.get("identity") or {}
        for waiver in index.candidates(stable_id):
            if waiver.matches(stable_id) and waiver.applies_to(identity):
                return waiver
        return None

    def all(self) -> list[Waiver]:
        return [waiver for waivers in self.by_driver.values() for waiver in waivers]

    def __len__(self) -> int:
        return sum(len(waivers) for waivers in self.by_driver.values())


class _Index:
    """A driver's waivers by the ids they can match: a pattern without a wildcard matches its own id only, and one
    with wildcards only ids of the test named before its "[" (any id, where the test's name has a wildcard too)."""

    def __init__(self, waivers: Iterable[Waiver]) -> None:
        self.exact: dict[str, list[tuple[int, Waiver]]] = {}
        self.by_test: dict[str, list[tuple[int, Waiver]]] = {}
        self.anywhere: list[tuple[int, Waiver]] = []
        for position, waiver in enumerate(waivers):
            test, bracket, _ = waiver.pattern.partition("[")
            if not _has_wildcard(waiver.pattern):
                self.exact.setdefault(waiver.pattern, []).append((position, waiver))
            elif bracket and not _has_wildcard(test):
                self.by_test.setdefault(test + bracket, []).append((position, waiver))
            else:
                self.anywhere.append((position, waiver))

    def candidates(self, stable_id: str) -> list[Waiver]:
        """The waivers that may match `stable_id`, in the order of the files (the first that applies wins)."""
        test, bracket, _ = stable_id.partition("[")
        found = [*self.exact.get(stable_id, ()), *self.by_test.get(test + bracket, ()), *self.anywhere]
        return [waiver for _, waiver in sorted(found, key=lambda entry: entry[0])]


def _has_wildcard(pattern: str) -> bool:
    """Whether `pattern` has a wildcard of id_pattern's ("*" or "?")."""
    return "*" in pattern or "?" in pattern


def review(
    expectations: Expectations,
    records: Iterable[Record],
    known: Iterable[str] | Callable[[list[str]], Iterable[str]] | None = None,
) -> dict[str, list[WaiverRecord]]:
    """Waivers of the drivers this run tested that match no check ("stale"), or only checks that were
    not exercised or unsupported ("refused": nothing was observed for them to hold on).

    `known` are the stable ids of every check the suite has, run or not: a waiver for a check that a
    -k or a node id left out of this run is not stale, one that names no check at all is. Without
    `known`, only the checks of this run count. It may be a function of the patterns of the waivers
    that matched nothing, called only if there are any: finding every id costs a second under TCG
    (report/terminal.py), and a whole run's waivers all match.
    """
    by_driver: dict[str, list[Record]] = {}
    for record in records:
        if record.get("driver"):
            by_driver.setdefault(str(record["driver"]), []).append(record)
    # Per driver, its records' distinct identities (one or two: a kernel matrix has one per kernel).
    identities: dict[str, list[Mapping[str, str]]] = {}
    for driver, driver_records in by_driver.items():
        distinct = {repr(sorted((r.get("identity") or {}).items())): r.get("identity") or {} for r in driver_records}
        identities[driver] = list(distinct.values())
    stale: list[Waiver] = []
    refused: list[WaiverRecord] = []
    for waiver in expectations.all():
        if waiver.driver not in by_driver:
            continue
        if not any(waiver.applies_to(identity) for identity in identities[waiver.driver]):
            continue  # its scope leaves out every device of this run (another kernel's): not for this run
        pattern = id_pattern(waiver.pattern)
        hits = [
            r
            for r in by_driver[waiver.driver]
            if pattern.fullmatch(r.get("stable_id", "")) and waiver.applies_to(r.get("identity") or {})
        ]
        if not hits:
            stale.append(waiver)
        elif all(r.get("outcome") in ("unsupported", "not exercised") for r in hits):
            refused.append(
                {**waiver.as_dict(), "why": f"its check was {hits[0]['outcome']}: {hits[0].get('reason', '')}"}
            )
    if callable(known):
        known = known([waiver.pattern for waiver in stale]) if stale else ()
    ids = set(known or ())
    return {
        "stale": [
            {**waiver.as_dict(), "why": "it matched no check of this run"}
            for waiver in stale
            # One whose check exists and was not selected this time is not stale.
            if not any(waiver.matches(stable_id) for stable_id in ids)
        ],
        "refused": refused,
    }


@functools.cache
def id_pattern(pattern: str) -> re.Pattern[str]:
    # Not fnmatch: test ids contain "[...]", which fnmatch would read as a character class.
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern))


def _fail(path: Path, line: int, message: str) -> pytest.UsageError:
    return pytest.UsageError(f"{path}:{line}: malformed expectations file: {message}")


def _waiver_lines(text: str) -> list[int]:
    return [number for number, line in enumerate(text.splitlines(), start=1) if _WAIVER_HEADER.match(line)]


def parse(text: str, path: Path) -> list[Waiver]:
    """The waivers of one file; a UsageError naming file and line for anything malformed."""
    return read(text, path)[0]


def read(text: str, path: Path) -> tuple[list[Waiver], list[Required]]:
    """The waivers and the required capabilities of one file; a UsageError naming file and line for
    anything malformed."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE.search(str(exc))
        raise _fail(path, int(found.group(1)) if found else 1, str(exc)) from None
    unknown = sorted(set(data) - TOP_LEVEL_KEYS)
    if unknown:
        raise _fail(
            path, _line_of_key(text, unknown[0]), f"unknown key {unknown[0]!r} (allowed: driver, require, [[waiver]])"
        )
    driver = data.get("driver", path.stem)
    if not isinstance(driver, str) or not driver:
        raise _fail(path, _line_of_key(text, "driver"), "'driver' must be a non-empty string")
    entries = data.get("waiver", [])
    if not isinstance(entries, list):
        raise _fail(path, _line_of_key(text, "waiver"), "'waiver' must be an array of tables: [[waiver]]")
    lines = _waiver_lines(text)
    seen: dict[str, int] = {}
    waivers = [_waiver(entry, driver, path, lines[i] if i < len(lines) else 1, seen) for i, entry in enumerate(entries)]
    return waivers, _required(data.get("require", []), driver, path, _line_of_key(text, "require"))


def _required(names: object, driver: str, path: Path, line: int) -> list[Required]:
    example = 'e.g. require = ["rc", "srq"]'
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise _fail(path, line, f"'require' must be a list of capability names, {example}")
    try:
        checked = capabilities.names(names)
    except capabilities.UnknownCapability as exc:
        raise _fail(path, line, f"require: {exc}") from None
    return [Required(name, driver, str(path), line) for name in checked]


def _waiver(entry: object, driver: str, path: Path, line: int, seen: dict[str, int]) -> Waiver:
    if not isinstance(entry, dict):
        raise _fail(path, line, "each [[waiver]] must be a table")
    unknown = sorted(set(entry) - WAIVER_KEYS)
    if unknown:
        allowed = ", ".join(sorted(WAIVER_KEYS))
        raise _fail(path, line, f"[[waiver]] has unknown key {unknown[0]!r} (allowed: {allowed})")
    for key in REQUIRED_KEYS:
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            why = {
                "reason": "a waiver without a reason is rejected: say why the deviation is expected",
                "link": "give the man page section or the bug URL the waiver rests on",
                "id": "name the check it waives (stable id, e.g. test_ibv_modify_qp[claim-variant])",
            }[key]
            raise _fail(path, line, f"[[waiver]] needs a non-empty string {key!r}: {why}")
    observed = entry.get("observed")
    if not isinstance(observed, dict) or not observed:
        raise _fail(
            path,
            line,
            "[[waiver]] needs 'observed', a table of what the device did, e.g. "
            'observed = { errno = "EINVAL" } (copy it from the deviation\'s observation)',
        )
    if "crash" in observed and (observed["crash"] is not True or len(observed) > 1):
        raise _fail(
            path,
            line,
            "[[waiver]] observed = { crash = true } waives the check's crash and stands alone: "
            "a crash has nothing else to record",
        )
    if "kernel_fault" in observed and (observed["kernel_fault"] not in KERNEL_FAULT_KINDS or len(observed) > 1):
        raise _fail(
            path,
            line,
            "[[waiver]] observed = { kernel_fault = KIND } waives the kernel's fault during the check and stands "
            f"alone; KIND is one of {', '.join(KERNEL_FAULT_KINDS)} (the record's observation.kernel_fault, "
            "or its kernel_log.kinds)",
        )
    intermittent = entry.get("intermittent", False)
    if not isinstance(intermittent, bool):
        raise _fail(path, line, f"intermittent = {intermittent!r}: it is true or false (true: seen in some runs only)")
    scopes = {scope: entry[scope] for scope in SCOPES if scope in entry}
    for scope, spec in scopes.items():
        try:
            if not isinstance(spec, str):
                raise ValueError("it must be a string")
            in_range("0", spec)
        except ValueError as exc:
            raise _fail(path, line, f"{scope} = {spec!r}: {exc}") from None
    pattern = entry["id"].strip()
    # One check may have a waiver per scope: a kernel matrix shows one observation before 6.12, another after.
    key = pattern + "".join(f"\0{scope}={spec}" for scope, spec in sorted(scopes.items()))
    if key in seen:
        raise _fail(path, line, f"waiver for {pattern!r} repeats the one at line {seen[key]}")
    seen[key] = line
    reason, link = entry["reason"].strip(), entry["link"].strip()
    return Waiver(pattern, reason, link, dict(observed), driver, str(path), line, scopes, intermittent)


def _line_of_key(text: str, key: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        name = re.escape(key)
        if re.match(rf"^\s*{name}\s*=", line) or re.match(rf"^\s*\[+\s*{name}\s*\]", line):
            return number
    return 1


def load_file(path: Path) -> list[Waiver]:
    return read_file(path)[0]


def read_file(path: Path) -> tuple[list[Waiver], list[Required]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise pytest.UsageError(f"--rdma-expectations {path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise _fail(path, path.read_bytes()[: exc.start].count(b"\n") + 1, "not UTF-8 text") from None
    return read(text, path)


def load(paths: Iterable[str | Path] | None) -> Expectations:
    """Read files and directories (every *.toml in them); None means the shipped files."""
    expectations = Expectations()
    for entry in [SHIPPED_DIR] if paths is None else [Path(p) for p in paths]:
        if entry == SHIPPED_DIR and not entry.exists():
            continue  # no shipped waivers (yet): the default is then no waivers, not a usage error
        if entry.is_dir():
            files = sorted(entry.glob("*.toml"))
        elif entry.is_file():
            files = [entry]
        else:
            raise pytest.UsageError(f"--rdma-expectations {entry}: no such file or directory")
        for path in files:
            waivers, required = read_file(path)
            expectations.add(waivers)
            expectations.require(required)
            expectations.sources.append(path.name if entry == SHIPPED_DIR else str(path))
    return expectations


def vm_ending_variants(expectations: Expectations) -> list[str]:
    """The case ids (the part of a stable id in brackets) of the checks these waivers record as ending the lab's
    VM: a run that measures or tests something else leaves them out (`-k "not ID"`), the kernel matrix runs them."""
    ending = [waiver for waiver in expectations.all() if waiver.waived_kernel_fault in VM_ENDING_FAULTS]
    return sorted({waiver.pattern.split("[", 1)[1].rstrip("]") for waiver in ending})


def without_vm_ending(expectations: Expectations) -> str:
    """A -k expression (pure) that leaves out vm_ending_variants; "" when there is none."""
    return " and ".join(f"not {variant}" for variant in vm_ending_variants(expectations))
