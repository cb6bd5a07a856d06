"""The Allure HTML report of one or more runs, and its release gate: `pytest-rdma report`.

    pytest-rdma report results/rxe0/allure results/siw0/allure --output results/allure-report

Allure 3's command line comes from npm (package "allure"); it is installed once, pinned, into
a cache directory, because Debian does not package it and a global npm install needs root.
The report is a single self-contained index.html (Allure's "singleFile" option), so it opens
from disk, in CI artifacts, and in a headless browser, without a web server. Its configuration
(allure_config.py) is made from the runs' own results and kept beside the report
(`allurerc.mjs`), so `npx allure generate --config ...` rebuilds the same report.

The command exits 1 when the gate fails: the folders hold nothing of ours to judge, a device the
runs named exercised nothing (allure_gate.py), or Allure's quality gate fails (a deviation no
waiver covers, a crash or a timeout); 0 when it passes, 2 on bad input, 4 when the report could
not be built. Another tool's results in the folders are counted and named, never judged.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_rdma.command_line import InputError, Parser, fail
from pytest_rdma.report import allure_gate
from pytest_rdma.report.allure_config import config_module, environments, merged_devices, merged_profiles
from pytest_rdma.writable import DIRECTORY, problem

ALLURE_PACKAGE = "allure"
ALLURE_VERSION = "3.18.0"  # pinned: a report must not change because npm moved on
# Allure 3.18's quality gate needs Node.js 22 (iterator helpers); Debian 12 has 18, many machines 20.
# npm's "node" package brings that Node.js binary (from the npm registry) into the same cache.
NODE_VERSION = "22.23.3"
CONFIG_NAME = "allurerc.mjs"
HISTORY_NAME = "allure-history.jsonl"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-rdma" / "allure3"


def _installed(cache: Path, package: str, version: str) -> bool:
    manifest = cache / "node_modules" / package / "package.json"
    try:
        return json.loads(manifest.read_text()).get("version") == version
    except (OSError, ValueError):
        return False


def allure_cli(cache: Path | None = None) -> list[str]:
    """The command that runs the pinned Allure 3 with the pinned Node.js, installed from npm into the cache."""
    cache = cache or cache_dir()
    node = cache / "node_modules" / ".bin" / "node"
    cli = cache / "node_modules" / ALLURE_PACKAGE / "cli.js"
    wanted = {ALLURE_PACKAGE: ALLURE_VERSION, "node": NODE_VERSION}
    missing = [f"{name}@{version}" for name, version in wanted.items() if not _installed(cache, name, version)]
    if missing or not node.exists() or not cli.exists():
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            raise RuntimeError("the Allure 3 report needs Node.js and npm (Debian: apt-get install nodejs npm)")
        cache.mkdir(parents=True, exist_ok=True)
        command = [
            npm,
            "install",
            "--prefix",
            str(cache),
            "--no-audit",
            "--no-fund",
            "--loglevel",
            "error",
            *(f"{name}@{version}" for name, version in wanted.items()),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
        if done.returncode != 0 or not node.exists() or not cli.exists():
            raise RuntimeError(
                f"npm could not install {', '.join(missing)} into {cache}:\n{done.stderr.strip()[-2000:]}"
            )
    return [str(node), str(cli)]


# Allure's single-file page, as 3.18 writes it, registers its embedded data at the end of a large
# body, after the app's script in <head> has started: an app that asks for its data before the body
# is parsed takes the file for a server and fetches it, which a browser refuses for file:// pages,
# and about one load in three showed an empty report. Declaring the data store first makes the app
# wait for the embedded data. The page also loads Google Analytics; a release report opened from
# disk or a CI artifact makes no request to anyone.
DATA_FIRST = (
    "<script>window.allureReportDataReady = false; window.allureReportData = window.allureReportData || {};</script>"
)
ANALYTICS = re.compile(
    r'\s*<script async src="https://www\.googletagmanager\.com/[^"]*"></script>'
    r"\s*<script>[^<]*?gtag\([^<]*?</script>",
    re.S,
)


def single_file_fixes(index: Path) -> None:
    """The embedded data declared before the app's script; no analytics (see DATA_FIRST, ANALYTICS)."""
    text = index.read_text(encoding="utf-8")
    text = ANALYTICS.sub("", text, count=1)
    if DATA_FIRST not in text:
        text = text.replace("<script", DATA_FIRST + "\n    <script", 1)  # before the page's first script
    index.write_text(text, encoding="utf-8")


@dataclass
class Report:
    index: Path  # the single-file report
    config: Path  # the allurerc.mjs it was built with
    gate_passed: bool
    gate_text: str  # why the gate failed: what is missing (allure_gate.py), or what Allure's gate said
    seconds: float
    survey: allure_gate.Survey  # what the results hold: our checks per device, other tools' results


def write_config(results_dirs: Sequence[Path], path: Path, name: str, history: Path | None, gate: str = "") -> Path:
    """allurerc.mjs for these results (see allure_config.py)."""
    drivers = environments(merged_devices(results_dirs), merged_profiles(results_dirs))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config_module(name, drivers, history, gate), encoding="utf-8")
    return path


def gate_verdict(passed: bool, text: str, lacking: str = "") -> str:
    """A few words for the report: the gate passed, what is missing, or how many results failed it."""
    if lacking:
        return f"FAILED: {lacking}"
    if passed:
        return "passed"
    found = re.search(r"failed tests (\d+) exceeds", text)
    return f"FAILED: {found.group(1)} deviations/crashes" if found else "FAILED"


def _allure(command: list[str], args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*command, *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0"},
        cwd=cwd,
    )


def build(
    results_dirs: Sequence[str | Path],
    out_dir: str | Path,
    name: str = "pytest-rdma",
    history: Path | None = None,
    devices: Sequence[str] = (),
) -> Report:
    """The HTML report of `results_dirs` (written with --rdma-allure) in out_dir, and its gate.

    `devices` are devices the runs were asked to test besides those the folders name (the lab's --dev).
    """
    started = time.monotonic()
    dirs = [Path(d).resolve() for d in results_dirs]
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        raise FileNotFoundError(f"no Allure results directory: {', '.join(missing)}")
    found = allure_gate.survey(dirs, devices)
    lacking = allure_gate.missing(found)
    out = Path(out_dir).resolve()
    command = allure_cli()
    history = history.resolve() if history is not None else None
    if history is not None:
        history.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pytest-rdma-allure-") as scratch:
        # The gate first, so that the report can show its verdict (Allure's generate does not evaluate it).
        config = write_config(dirs, Path(scratch) / CONFIG_NAME, name, None)
        gate = _allure(command, ["quality-gate", "--config", str(config), *map(str, dirs)], Path(scratch))
        gate_text = ANSI.sub("", gate.stdout + gate.stderr).strip()
        if gate.returncode not in (0, 1) or (gate.returncode == 1 and "Quality Gate failed" not in gate_text):
            raise RuntimeError(f"allure quality-gate failed to run ({gate.returncode}):\n{gate_text[-2000:]}")
        passed = gate.returncode == 0
        config = write_config(dirs, config, name, history, gate_verdict(passed, gate_text, lacking))
        done = _allure(
            command, ["generate", "--config", str(config), "--output", str(out), *map(str, dirs)], Path(scratch)
        )
        index = out / "index.html"
        if done.returncode != 0 or not index.exists():
            output = ANSI.sub("", done.stdout + done.stderr)[-2000:]
            raise RuntimeError(f"allure generate failed ({done.returncode}):\n{output}")
        single_file_fixes(index)
        kept = out / CONFIG_NAME
        shutil.copyfile(config, kept)
    text = lacking or ("" if passed else gate_text)
    return Report(index, kept, passed and not lacking, text, time.monotonic() - started, found)


def report_main(argv: list[str]) -> int:
    """`pytest-rdma report`: build the HTML report; exit 1 when its quality gate fails."""
    parser = Parser(
        prog="pytest-rdma report",
        description="Build one Allure 3 HTML report (a single index.html) from the Allure results of one or more "
        "runs (pytest --rdma-allure DIR): one environment per driver, categories, links to the man pages, "
        "reproducers attached. Exits 1 when the quality gate fails: no result of pytest-rdma to judge, a device "
        "that exercised nothing, a deviation no waiver covers, a crash or a timeout (other tools' results are "
        "counted, not judged).",
    )
    # nargs="*" so that an unknown option is named before a missing directory.
    parser.add_argument(
        "results",
        nargs="*",
        type=Path,
        metavar="RESULTS_DIR",
        help="Allure results directories (one per run, e.g. one per device)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("allure-report"),
        metavar="DIR",
        help="where the report goes (default ./allure-report); DIR/index.html is the report",
    )
    parser.add_argument(
        "--history",
        type=Path,
        metavar="FILE",
        help=f"Allure's history file: each report adds to it and shows what changed since the last "
        f"(default: {HISTORY_NAME} beside the output directory)",
    )
    parser.add_argument("--no-history", action="store_true", help="neither read nor extend a history file")
    parser.add_argument("--name", default="pytest-rdma", help="the report's title")
    parser.add_argument(
        "--config-only", action="store_true", help="only write DIR/allurerc.mjs, for running Allure yourself"
    )
    options = parser.parse_args(argv)
    if not options.results:
        return fail(
            "pytest-rdma report", "name at least one Allure results directory (pytest --rdma-allure DIR writes one)"
        )
    missing = [str(path) for path in options.results if not path.is_dir()]
    if missing:
        return fail(
            "pytest-rdma report",
            f"no Allure results directory {', '.join(missing)} (pytest --rdma-allure DIR writes one)",
        )
    unwritable = problem(options.output, DIRECTORY, "allure-report")
    if unwritable:
        return fail("pytest-rdma report", f"-o {options.output}: {unwritable}")
    history = None if options.no_history else (options.history or options.output.resolve().parent / HISTORY_NAME)
    found = allure_gate.survey(options.results)
    if not options.config_only and not found.checks():  # nothing to build a report of
        print(f"report: quality gate FAILED: {allure_gate.missing(found)}", file=sys.stderr)
        return 1
    try:
        if options.config_only:
            path = write_config(options.results, options.output / CONFIG_NAME, options.name, history)
            print(f"report: {path}")
            return 0
        report = build(options.results, options.output, options.name, history)
    except InputError as exc:
        return fail("pytest-rdma report", exc)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"report: error: {exc}", file=sys.stderr)
        return 4
    size = report.index.stat().st_size
    print(f"report: {report.index} ({size / 1e6:.1f} MB, built in {report.seconds:.1f} s)")
    if not report.gate_passed:
        separator = " " if allure_gate.missing(report.survey) else "\n"
        print(f"report: quality gate FAILED:{separator}{report.gate_text}", file=sys.stderr)
        return 1
    print(f"report: {allure_gate.passed(report.survey, 'no deviation without a waiver, no crash, no timeout')}")
    return 0
