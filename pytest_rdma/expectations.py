"""Expected deviations per provider driver ("waivers"), read from TOML files.

A driver's file lists the deviations it is known to have, each with a reason and a link, so
a CI gate can tell a known deviation from a new one. Format (one `[[waiver]]` per deviation):

    driver = "rxe"                       # optional: defaults to the file's stem (rxe.toml -> rxe)

    [[waiver]]
    id = "test_ibv_modify_qp[required-attrs-RC-INIT>RTR-without-AV]"
    reason = "rxe does not check the address vector on INIT->RTR"     # required
    link = "ibv_modify_qp(3) DESCRIPTION"                             # required: page or bug URL
    observed = "returned 0"                                           # optional: what was seen

`id` is the stable id of a check: its test function and case id, without file path or
device, so one file serves every device of the driver. `*` matches any run of characters and
`?` one character; everything else (including `[` and `]`) is literal.

Anything malformed is a `pytest.UsageError` naming the file and the line, because a CI gate
that silently ignores a broken waiver file would pass or fail for the wrong reason.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - older Pythons
    import tomli as tomllib  # type: ignore[no-redef]

SHIPPED_DIR = Path(__file__).with_name("expectations")
WAIVER_KEYS = {"id", "reason", "link", "observed"}
REQUIRED_KEYS = ("id", "reason", "link")
TOP_LEVEL_KEYS = {"driver", "waiver"}
_WAIVER_HEADER = re.compile(r"^\s*\[\[\s*waiver\s*\]\]")
_TOML_LINE = re.compile(r"line (\d+)")


@dataclass(frozen=True)
class Waiver:
    """One expected deviation of one driver."""

    pattern: str
    reason: str
    link: str
    observed: str
    driver: str
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def matches(self, stable_id: str) -> bool:
        return _compile(self.pattern).fullmatch(stable_id) is not None

    def as_dict(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "reason": self.reason, "link": self.link,
                "observed": self.observed, "file": self.file, "line": self.line}


@dataclass
class Expectations:
    """Waivers by driver; the first matching waiver of a driver applies."""

    by_driver: dict[str, list[Waiver]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    def add(self, waivers: Iterable[Waiver]) -> None:
        for waiver in waivers:
            self.by_driver.setdefault(waiver.driver, []).append(waiver)

    def find(self, driver: str, stable_id: str) -> Waiver | None:
        for waiver in self.by_driver.get(driver, ()):
            if waiver.matches(stable_id):
                return waiver
        return None

    def __len__(self) -> int:
        return sum(len(waivers) for waivers in self.by_driver.values())


@functools.cache
def _compile(pattern: str) -> re.Pattern[str]:
    # Not fnmatch: test ids contain "[...]", which fnmatch would read as a character class.
    # Cached: every check of a driver is matched against all its waivers (issue 6 measured the
    # uncached translation at ~1 M re.escape calls for 468 checks).
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern))


def _fail(path: Path, line: int, message: str) -> pytest.UsageError:
    return pytest.UsageError(f"{path}:{line}: malformed expectations file: {message}")


def _waiver_lines(text: str) -> list[int]:
    return [number for number, line in enumerate(text.splitlines(), start=1) if _WAIVER_HEADER.match(line)]


def parse(text: str, path: Path) -> list[Waiver]:
    """The waivers of one file; a UsageError naming file and line for anything malformed."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE.search(str(exc))
        raise _fail(path, int(found.group(1)) if found else 1, str(exc)) from None
    unknown = sorted(set(data) - TOP_LEVEL_KEYS)
    if unknown:
        raise _fail(path, _line_of_key(text, unknown[0]),
                    f"unknown key {unknown[0]!r} (allowed: driver, [[waiver]])")
    driver = data.get("driver", path.stem)
    if not isinstance(driver, str) or not driver:
        raise _fail(path, _line_of_key(text, "driver"), "'driver' must be a non-empty string")
    entries = data.get("waiver", [])
    if not isinstance(entries, list):
        raise _fail(path, _line_of_key(text, "waiver"), "'waiver' must be an array of tables: [[waiver]]")
    lines = _waiver_lines(text)
    waivers: list[Waiver] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        line = lines[index] if index < len(lines) else 1
        waivers.append(_waiver(entry, driver, path, line, seen))
    return waivers


def _waiver(entry: Any, driver: str, path: Path, line: int, seen: dict[str, int]) -> Waiver:
    if not isinstance(entry, dict):
        raise _fail(path, line, "each [[waiver]] must be a table")
    unknown = sorted(set(entry) - WAIVER_KEYS)
    if unknown:
        allowed = ", ".join(sorted(WAIVER_KEYS))
        raise _fail(path, line, f"[[waiver]] has unknown key {unknown[0]!r} (allowed: {allowed})")
    for key in REQUIRED_KEYS:
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            why = {"reason": "a waiver without a reason is rejected: say why the deviation is expected",
                   "link": "give the man page section or the bug URL the waiver rests on",
                   "id": "name the check it waives (stable id, e.g. test_ibv_modify_qp[claim-variant])"}[key]
            raise _fail(path, line, f"[[waiver]] needs a non-empty string {key!r}: {why}")
    observed = entry.get("observed", "")
    if not isinstance(observed, str):
        raise _fail(path, line, "'observed' must be a string")
    pattern = entry["id"].strip()
    if pattern in seen:
        raise _fail(path, line, f"waiver for {pattern!r} repeats the one at line {seen[pattern]}")
    seen[pattern] = line
    return Waiver(pattern, entry["reason"].strip(), entry["link"].strip(), observed.strip(), driver,
                  str(path), line)


def _line_of_key(text: str, key: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        name = re.escape(key)
        if re.match(rf"^\s*{name}\s*=", line) or re.match(rf"^\s*\[+\s*{name}\s*\]", line):
            return number
    return 1


def load_file(path: Path) -> list[Waiver]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise pytest.UsageError(f"--rdma-expectations {path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise _fail(path, text_line_of_offset(path, exc.start), "not UTF-8 text") from None
    return parse(text, path)


def text_line_of_offset(path: Path, offset: int) -> int:
    return path.read_bytes()[:offset].count(b"\n") + 1


def load(paths: Iterable[str | Path] | None) -> Expectations:
    """Read files and directories (every *.toml in them); None means the shipped files."""
    expectations = Expectations()
    for entry in [SHIPPED_DIR] if paths is None else [Path(p) for p in paths]:
        if entry.is_dir():
            files = sorted(entry.glob("*.toml"))
        elif entry.is_file():
            files = [entry]
        else:
            raise pytest.UsageError(f"--rdma-expectations {entry}: no such file or directory")
        for path in files:
            expectations.add(load_file(path))
            expectations.sources.append(str(path))
    return expectations
