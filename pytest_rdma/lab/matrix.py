"""The kernel matrix: `pytest-rdma lab --kernel RELEASE ...` boots each release in turn.

A driver is qualified against kernels: the same devices and checks run on every release named
(`--kernel all`: every installed kernel that ships rdma_rxe), each release's results in
results/<release>/<device>/, one HTML report holds every kernel x driver as its own environment,
and the last lines are a table of outcome counts per kernel and driver. A release that cannot
run (not in the archive, no rdma_rxe, siw.ko does not build, the VM does not boot) is one line,
and the other releases still run.
"""

from __future__ import annotations

import dataclasses
import glob
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rdma import lab
from pytest_rdma.lab.prereqs import LabError, Log, _version_key
from pytest_rdma.outcomes import OUTCOMES
from pytest_rdma.report import allure_gate
from pytest_rdma.report.jsonfile import load
from pytest_rdma.report.record import Record
from pytest_rdma.report.release_waivers import stale_on_release

ALL = "all"
# A Debian kernel release as uname -r and the package names spell it: "6.1.0-56-amd64", "6.12.117+deb12-amd64".
RELEASE = re.compile(r"^\d+\.\d+[A-Za-z0-9.+~_-]*$")
ALLURE_RUNS = "*/*/allure"  # results/<release>/<device>/allure
REPORT_DIRECTORY = "allure-report"


def installed_releases(boot: Path = Path("/boot"), modules: Path = Path("/lib/modules")) -> list[str]:
    """Every installed kernel (an image in `boot`) whose modules ship rdma_rxe, oldest first."""
    found = []
    for image in sorted(boot.glob("vmlinuz-*")):
        release = image.name.removeprefix("vmlinuz-")
        if glob.glob(str(modules / release / "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko*")):
            found.append(release)
    return sorted(found, key=_version_key)


def releases(given: Iterable[str], installed: Iterable[str]) -> list[str]:
    """The releases to boot, in the order given, each once; `all` stands for every `installed` one (pure).

    A name that cannot be a kernel release is a LabError naming it, before anything is installed or booted."""
    wanted: dict[str, None] = {}
    for value in given:
        for name in (part.strip() for part in value.split(",")):
            if name == ALL:
                found = list(installed)
                if not found:
                    raise LabError(
                        "--kernel all found no installed kernel that ships rdma_rxe; name one with --kernel RELEASE "
                        "(apt-cache search linux-image- lists Debian's)"
                    )
                wanted.update(dict.fromkeys(found))
            elif RELEASE.match(name):
                wanted[name] = None
            else:
                raise LabError(
                    f"--kernel {name!r} is not a kernel release; give one as uname -r prints it "
                    "(6.1.0-56-amd64, 6.12.117+deb12-amd64) or 'all'"
                )
    return list(wanted)


def results_of(results: Path, release: str) -> Path:
    """Where a release's runs write: results/<release>/, each device below it (pure)."""
    return results / release


@dataclass
class KernelRun:
    release: str
    code: int
    errors: list[str] = field(default_factory=list)
    # driver -> outcome -> count, from the release's results files
    counts: dict[str, Counter[str]] = field(default_factory=dict)

    @property
    def ran(self) -> bool:
        return self.code not in (lab.EXIT_USAGE, lab.EXIT_LAB_FAILED)

    def why_not(self) -> str:
        """The first line of what stopped this release (the lab's error), for the one line it gets."""
        first = next((line for error in self.errors for line in error.splitlines() if line.strip()), "")
        return first or f"the lab exited {self.code}"


def release_records(release_results: Path) -> list[Record]:
    """The records of a release's runs (results/<release>/*/results.json); an unreadable file adds none."""
    records: list[Record] = []
    for path in sorted(release_results.glob("*/results.json")):
        try:
            records += load(path).get("results", [])
        except (OSError, ValueError):
            continue
    return records


def outcome_counts(release_results: Path) -> dict[str, Counter[str]]:
    """driver -> outcome -> count over a release's results files (results/<release>/*/results.json)."""
    counts: dict[str, Counter[str]] = {}
    for record in release_records(release_results):
        driver = str(record.get("driver") or "no device")
        counts.setdefault(driver, Counter())[str(record.get("outcome"))] += 1
    return counts


def stale_waivers(results: Path, runs: list[KernelRun]) -> list[str]:
    """Each waiver that holds on one release of the matrix and not on another (report/release_waivers.py)."""
    records = {run.release: release_records(results_of(results, run.release)) for run in runs if run.ran}
    return [found.line() for found in stale_on_release(records)]


def table(runs: list[KernelRun]) -> list[str]:
    """The kernel x driver table of outcome counts, one row per release and driver (pure)."""
    shown = [o for o in OUTCOMES if any(c[o] for run in runs for c in run.counts.values())]
    header = ["kernel", "driver", *shown]
    rows: list[list[str]] = []
    for run in runs:
        if not run.ran:
            rows.append([run.release, "-", f"did not run: {run.why_not()}"])
            continue
        if not run.counts:
            rows.append([run.release, "-", f"no results (exit {run.code})"])
        for driver, counts in sorted(run.counts.items()):
            rows.append([run.release, driver, *(str(counts[o]) for o in shown)])
    # The kernel and driver columns fit every row; the counts' columns only the rows that have counts.
    full = [row for row in [header, *rows] if len(row) == len(header)]
    widths = [max(len(row[i]) for row in ([header, *rows] if i < 2 else full)) for i in range(len(header))]
    return [_line(row, widths) for row in [header, *rows]]


def _line(row: list[str], widths: list[int]) -> str:
    """Cells padded to their column, numbers to the right; a row's last cell may run past the columns."""
    cells = []
    for index, cell in enumerate(row):
        last = index == len(row) - 1
        if index >= len(widths) or (last and len(row) < len(widths)):
            cells.append(cell)
        elif index < 2 or not cell.isdigit():
            cells.append(cell.ljust(widths[index]))
        else:
            cells.append(cell.rjust(widths[index]))
    return "  ".join(cells).rstrip()


def run(base: lab.LabRequest, names: list[str], log: Log = print) -> tuple[int, list[KernelRun]]:
    """Boot each release in turn with `base`'s devices and checks; the worst exit code and each release's run."""
    runs = []
    for release in names:
        request = dataclasses.replace(base, kernel=release, results=results_of(base.results, release))
        log(f"lab: === kernel {release}: results in {request.results}")
        errors: list[str] = []
        code = lab.run(request, log, errors)
        kernel_run = KernelRun(release, code, errors, outcome_counts(request.results.resolve()))
        if not kernel_run.ran:
            print(f"lab: kernel {release}: did not run: {kernel_run.why_not()}", file=sys.stderr)
        runs.append(kernel_run)
    return worst(runs), runs


def worst(runs: list[KernelRun]) -> int:
    """The matrix's exit code: a release that could not run first, then a failed run, else 0 (pure)."""
    codes = [run.code for run in runs]
    for code in (lab.EXIT_LAB_FAILED, lab.EXIT_USAGE):
        if code in codes:
            return code
    return next((code for code in codes if code), 0)


def gate_lacking(results: Path, runs: list[KernelRun], devices: list[str]) -> list[str]:
    """What each release that ran lacks for a verdict (report/allure_gate.py), "RELEASE: why" each."""
    lacking = []
    for kernel_run in runs:
        if not kernel_run.ran:
            continue
        folders = sorted(path for path in results_of(results, kernel_run.release).glob("*/allure") if path.is_dir())
        why = allure_gate.missing(allure_gate.survey(folders, devices))
        if why:
            lacking.append(f"{kernel_run.release}: {why}")
    return lacking
