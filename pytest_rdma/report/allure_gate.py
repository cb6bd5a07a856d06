"""What Allure results folders hold, and whether they are enough to judge a release: nothing judged is no pass.

Allure's own quality gate counts failures, so a folder with no result of ours (a wrong path, junk,
another tool's results) passes it. Before that gate, `pytest-rdma report` and the lab read every
result in the folders and fail when

- no result is ours (the `framework` label our writer sets, allure_config.FRAMEWORK): the line
  says what is there instead (another tool's results, unreadable files, other files);
- none of our checks was exercised (all unsupported or not exercised);
- a device the runs named (its environment file, written when its run starts; or the lab's
  `--dev`) has no exercised check: it ran nothing, or its results are not in these folders.

Another tool's results are counted and named in the line, never judged as ours (the quality gate
filters on our label too, allure_config.py). Pure: files in, a verdict out.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rdma.report.allure_config import ENVIRONMENT_GLOB, FRAMEWORK, NO_DEVICE, read_environment_file
from pytest_rdma.report.terminal import EXERCISED

RESULT_GLOB = "*-result.json"
# Files of Allure's results format that are not results: read by Allure, judged by no one.
ALLURE_OTHERS = ("*-container.json", "*-attachment*", "environment.properties", "categories.json", "executor.json")
OUR_OTHERS = ("pytest-rdma-files*.txt",)  # the writer's manifests (allure_writer.py)
SHOWN = 3  # unreadable files named in the line


@dataclass
class Survey:
    """What a set of results folders holds."""

    directories: list[Path]
    ours: dict[str, Counter[str]] = field(default_factory=dict)  # device -> outcome -> our results
    drivers: dict[str, str] = field(default_factory=dict)  # device -> driver, from the results and environments
    named: list[str] = field(default_factory=list)  # devices the runs (or the lab) named
    foreign: Counter[str] = field(default_factory=Counter)  # another tool (its framework label) -> results
    unreadable: list[str] = field(default_factory=list)  # result or environment files that do not parse
    other_files: int = 0  # files that are not Allure results at all

    def checks(self) -> int:
        return sum(sum(outcomes.values()) for outcomes in self.ours.values())

    def exercised(self, device: str) -> int:
        return sum(n for outcome, n in self.ours.get(device, Counter()).items() if outcome in EXERCISED)

    def who(self, device: str) -> str:
        driver = self.drivers.get(device)
        return f"{device} ({driver})" if driver else device


def _labels(result: object) -> dict[str, str] | None:
    """A result's labels by name; None when the file is not an Allure result."""
    if not isinstance(result, dict) or not isinstance(result.get("labels"), list):
        return None
    labels = {}
    for label in result["labels"]:
        if not isinstance(label, dict) or not isinstance(label.get("name"), str):
            return None
        labels[label["name"]] = str(label.get("value", ""))
    return labels


def survey(directories: Iterable[Path], devices: Sequence[str] = ()) -> Survey:
    """Read every result in the folders; `devices` are devices named besides the folders' own (the lab's --dev)."""
    found = Survey([Path(d) for d in directories], named=list(devices))
    for directory in found.directories:
        seen: set[Path] = set()
        for path in sorted(directory.glob(ENVIRONMENT_GLOB)):
            seen.add(path)
            environment = read_environment_file(path)
            if environment is None:
                found.unreadable.append(path.name)
                continue
            for device, identity in environment.items():
                if device not in found.named:
                    found.named.append(device)
                if identity.get("driver"):
                    found.drivers[device] = str(identity["driver"])
        for path in sorted(directory.glob(RESULT_GLOB)):
            seen.add(path)
            try:
                labels = _labels(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError, ValueError):
                labels = None
            if labels is None:
                found.unreadable.append(path.name)
            elif labels.get("framework") == FRAMEWORK:
                device = labels.get("device") or NO_DEVICE
                found.ours.setdefault(device, Counter())[labels.get("outcome", "")] += 1
                if device != NO_DEVICE and labels.get("driver"):
                    found.drivers.setdefault(device, labels["driver"])
            else:
                found.foreign[labels.get("framework") or "unnamed"] += 1
        for pattern in (*ALLURE_OTHERS, *OUR_OTHERS):
            seen.update(directory.glob(pattern))
        found.other_files += sum(1 for path in directory.iterdir() if path not in seen and path.is_file())
    for device in found.ours:
        if device != NO_DEVICE and device not in found.named:
            found.named.append(device)
    return found


def not_judged(found: Survey) -> str:
    """What else is in the folders, in words ("" when nothing)."""
    parts = []
    if found.foreign:
        total = sum(found.foreign.values())
        tools = ", ".join(f"framework {tool!r}: {n}" for tool, n in sorted(found.foreign.items()))
        parts.append(f"{total} result{'s' if total != 1 else ''} of other tools ({tools})")
    if found.unreadable:
        names = ", ".join(found.unreadable[:SHOWN]) + (", ..." if len(found.unreadable) > SHOWN else "")
        parts.append(f"{len(found.unreadable)} unreadable file{'s' if len(found.unreadable) != 1 else ''} ({names})")
    if found.other_files:
        parts.append(f"{found.other_files} other file{'s' if found.other_files != 1 else ''}")
    return "; ".join(parts)


def missing(found: Survey) -> str:
    """What the folders lack for a verdict, in one line; "" when they hold enough to judge."""
    where = ", ".join(str(d) for d in found.directories)
    besides = not_judged(found)
    if not found.checks():
        there = f"only {besides}" if besides else "nothing"
        return (
            f"no result of pytest-rdma in {where} ({there}): nothing was judged; "
            "give the directories pytest --rdma-allure DIR wrote"
        )
    idle = [device for device in found.named if not found.exercised(device)]
    if idle:
        return "; ".join(_idle(found, device) for device in idle)
    if not any(found.exercised(device) for device in found.ours):
        return f"none of the {found.checks()} checks in {where} was exercised (all unsupported or not exercised)"
    return ""


def _idle(found: Survey, device: str) -> str:
    outcomes = found.ours.get(device)
    if not outcomes:
        return f"{found.who(device)} exercised nothing: the run named it, and no result of it is here"
    total = sum(outcomes.values())
    shown = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
    return f"{found.who(device)} exercised nothing: its {total} checks are {shown}"


def passed(found: Survey, verdict: str) -> str:
    """The gate's line when it passed: what it judged, Allure's `verdict` on it, and what it did not judge."""
    counts = [f"{sum(found.ours[device].values())} on {found.who(device)}" for device in sorted(found.ours)]
    text = f"quality gate passed: {found.checks()} checks of pytest-rdma ({', '.join(counts)})"
    text += f": {verdict}" if verdict else ""
    besides = not_judged(found)
    return f"{text}; not judged: {besides}" if besides else text
