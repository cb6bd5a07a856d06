"""Where a run writes its results, checked before any check runs.

Each output (--rdma-json, --rdma-junit, --rdma-allure, --rdma-reproducers, and pytest's own
--junitxml beside them) must be a path this run can write, of the right kind (a file for JSON
and JUnit, a directory for Allure and the reproducers), and no two on one path: an output that
fails half way loses results, and two on one path overwrite each other. Each problem is a usage
error (pytest's exit 4) in one line naming the setting, the path, what is wrong and what to give.
Nothing is made here: a probe file is created and removed in the nearest existing directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_rdma.report.jsonfile import lines_path
from pytest_rdma.report.usage_error import REFUSED
from pytest_rdma.settings import OPTIONS, Settings
from pytest_rdma.writable import DIRECTORY, FILE, problem


@dataclass(frozen=True)
class Output:
    name: str  # the Settings field's option name ("json")
    label: str  # how the message names it: its flag, or its ini/env name and where it came from
    path: Path
    kind: str  # FILE or DIRECTORY
    example: str  # a name to suggest: "results.json"


def _refuse(config: pytest.Config, message: str, paths: tuple[Path, ...]) -> pytest.UsageError:
    config.stash[REFUSED] = paths
    return pytest.UsageError(message)


def _label(options: Settings, name: str) -> str:
    option = next(option for option in OPTIONS if option.name == name)
    where = options.source(name)
    if where.startswith("command line") or where == "default":
        return option.flag
    return f"{option.ini} ({where})"


def outputs(options: Settings, junitxml: str | None) -> list[Output]:
    """The outputs a run of these settings writes."""
    found: list[Output] = []
    if options.json is not None:
        found.append(Output("json", _label(options, "json"), options.json, FILE, "results.json"))
    if options.junit is not None:
        found.append(Output("junit", _label(options, "junit"), options.junit, FILE, "junit.xml"))
    if options.allure_dir is not None:
        found.append(Output("allure", _label(options, "allure"), options.allure_dir, DIRECTORY, "allure-results"))
    found.append(Output("reproducers", _label(options, "reproducers"), options.reproducers, DIRECTORY, "reproducers"))
    if junitxml:
        found.append(Output("junitxml", "--junitxml", Path(junitxml), FILE, "junit.xml"))
    return found


def _same(one: Path, other: Path) -> bool:
    return one.absolute() == other.absolute() or (one.exists() and other.exists() and one.samefile(other))


def check(config: pytest.Config, options: Settings) -> None:
    """A usage error for the first output that cannot be written, or for two outputs on one path."""
    found = outputs(options, getattr(config.option, "xmlpath", None))
    for output in found:
        why = problem(output.path, output.kind, output.example)
        if why:
            hint = (
                " (deviations' reproducers go to ./rdma-reproducers unless --rdma-json or this option says where)"
                if output.name == "reproducers"
                else ""
            )
            raise _refuse(config, f"{output.label} {output.path}: {why}{hint}", (output.path,))
    # Each path a run writes, with what writes it: JSON also writes its lines beside its document.
    written = [(output.label, output.path) for output in found]
    if options.json is not None:
        written.append((f"{_label(options, 'json')}'s lines", lines_path(options.json)))
    for index, (label, path) in enumerate(written):
        for other_label, other in written[index + 1 :]:
            if _same(path, other):
                raise _refuse(
                    config,
                    f"{label} {path} and {other_label} {other} are one path: each would overwrite the "
                    "other; give each output its own path",
                    (path, other),
                )
