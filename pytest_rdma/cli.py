"""The `pytest-rdma` command: the lab, the project's own tests, coverage and comparisons.

Running the conformance suite itself needs no command of ours: `pytest --rdma-dev NAME`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import traceback
from pathlib import Path

from pytest_rdma import lab
from pytest_rdma.command_line import fail, version
from pytest_rdma.lab import hosts, matrix
from pytest_rdma.lab.command import LAB_REPORTS, lab_parser, split_passthrough

EXIT_INTERNAL = 3  # as pytest's: a command that crashed never exits 1, which means "gate failed" or "regression"


ALLURE_RUNS = "*/allure"  # results/<device>/allure, written on the host from each run's results file


def _forget_allure(results: Path, devices: list[str]) -> None:
    """An earlier run's Allure results of these devices: unpacked over, they would read as retries."""
    for device in devices:
        shutil.rmtree(results / device / "allure", ignore_errors=True)


def _allure_html(results: Path, devices: list[str], html: bool = True, lacking: str = "", runs_glob: str = "") -> bool:
    """The gate over all the lab's runs together, and one HTML report of them (pytest-rdma report); passed?

    Each of `devices` must have exercised a check of ours: nothing judged is no pass. `lacking` is what a
    caller's own survey found missing (a kernel matrix surveys each release); `runs_glob` where the runs are.
    """
    from pytest_rdma.report import allure_gate, allure_html

    runs = sorted(path for path in results.glob(runs_glob or ALLURE_RUNS) if path.is_dir())
    found = allure_gate.survey(runs, devices)
    lacking = "; ".join(part for part in (lacking, allure_gate.missing(found)) if part)
    if not found.checks() or not html:
        print(f"lab: quality gate FAILED: {lacking}" if lacking else f"lab: {allure_gate.passed(found, '')}")
        return not lacking
    try:
        report = allure_html.build(
            runs, results / "allure-report", history=results / allure_html.HISTORY_NAME, devices=devices
        )
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"lab: the Allure HTML report could not be built (results are kept in {results}): {exc}", file=sys.stderr)
        return not lacking
    print(
        f"lab: Allure HTML report: {report.index} ({report.index.stat().st_size / 1e6:.1f} MB, "
        f"{report.seconds:.1f} s); quality gate " + ("passed" if report.gate_passed else "FAILED")
    )
    if lacking:
        print(f"lab: quality gate FAILED: {lacking}")
    elif report.gate_passed:
        print(f"lab: {allure_gate.passed(found, '')}")
    return report.gate_passed


def _holds_checks(results: Path) -> bool:
    from pytest_rdma.report import allure_gate

    return allure_gate.survey(path for path in results.glob(ALLURE_RUNS) if path.is_dir()).checks() > 0


def _has_path_arg(args: list[str]) -> bool:
    return any(not arg.startswith("-") and Path(arg.split("::")[0]).exists() for arg in args)


def cmd_lab(argv: list[str]) -> int:
    own, passthrough = split_passthrough(argv)
    options = lab_parser("pytest-rdma lab").parse_args(own)
    # Without a test path, the plugin runs its packaged suite on the devices the lab names.
    pytest_args = passthrough
    request = lab.LabRequest(
        devices=options.devices or list(lab.DEFAULT_DEVICES),
        pytest_args=pytest_args,
        results=options.results,
        cache=options.cache,
        install=not options.no_install,
        html=not options.no_html,
        timeout=options.timeout,
        report_args=LAB_REPORTS,
        allure=True,
    )
    try:
        two_hosts = hosts.plan(options.hosts, options.kernels, options.wire_port)
    except lab.LabError as exc:
        print(f"lab: error: {exc}", file=sys.stderr)
        return lab.EXIT_USAGE
    if options.kernels and two_hosts is None:
        return _kernel_matrix(request, options.kernels)
    _forget_allure(options.results, request.devices)
    code = hosts.run(request, two_hosts) if two_hosts else lab.run(request)
    if code not in (0, 1):
        return code
    results = options.results.resolve()
    if _has_path_arg(passthrough) and not _holds_checks(results):
        # Tests of one's own (or the lab's) that wrote no check of ours: nothing for the gate, pytest's verdict.
        print("lab: no Allure result of pytest-rdma to judge (the tests given after -- wrote none)")
        return code
    if not _allure_html(results, request.devices, html=not options.no_html):
        return 1  # nothing judged is no pass: a device without results, or a report whose gate failed
    return code


def _kernel_matrix(request: lab.LabRequest, kernels: list[str]) -> int:
    """The lab on each release named (lab/matrix.py), one report of them all, the kernel x driver table last."""
    try:
        names = matrix.releases(kernels, matrix.installed_releases())
    except lab.LabError as exc:
        print(f"lab: error: {exc}", file=sys.stderr)
        return lab.EXIT_USAGE
    for release in names:
        _forget_allure(matrix.results_of(request.results, release), request.devices)
    code, runs = matrix.run(request, names)
    results = request.results.resolve()
    passed = True
    if any(run.ran for run in runs):
        # The gate per release (a device that exercised nothing on one kernel is not hidden by another's), then
        # one report of every release's runs, each kernel x driver its own environment.
        lacking = "; ".join(matrix.gate_lacking(results, runs, request.devices))
        passed = _allure_html(results, [], html=request.html, lacking=lacking, runs_glob=matrix.ALLURE_RUNS)
    for line in matrix.stale_waivers(results, runs):
        print(f"lab: stale on a release: {line}")
    print("\n".join(f"lab: {line}" for line in matrix.table(runs)))
    return 1 if code == 0 and not passed else code


def cmd_selftest(argv: list[str]) -> int:
    from pytest_rdma.selftest import main as selftest_main

    return selftest_main(argv)


def cmd_coverage(argv: list[str]) -> int:
    from pytest_rdma.coverage import main as coverage_main

    return coverage_main(argv)


def cmd_compare(argv: list[str]) -> int:
    from pytest_rdma.report.compare import main as compare_main

    return compare_main(argv)


def cmd_report(argv: list[str]) -> int:
    from pytest_rdma.report.allure_html import report_main

    return report_main(argv)


def cmd_finish(argv: list[str]) -> int:
    from pytest_rdma.report.jsonfile import finish_main

    return finish_main(argv)


def cmd_waivers(argv: list[str]) -> int:
    from pytest_rdma.report.waivers import main as waivers_main

    return waivers_main(argv)


def cmd_kcidb(argv: list[str]) -> int:
    from pytest_rdma.report.kcidb import main as kcidb_main

    return kcidb_main(argv)


def cmd_lava(argv: list[str]) -> int:
    from pytest_rdma.report.lava import main as lava_main

    return lava_main(argv)


COMMANDS = {
    "lab": cmd_lab,
    "selftest": cmd_selftest,
    "coverage": cmd_coverage,
    "compare": cmd_compare,
    "waivers": cmd_waivers,
    "report": cmd_report,
    "finish": cmd_finish,
    "kcidb": cmd_kcidb,
    "lava": cmd_lava,
}


USAGE = """usage: pytest-rdma [--version] {lab,selftest,coverage,compare,waivers,report,finish,kcidb,lava}
                   [options]
                   [-- pytest args]

  lab       run the conformance suite on rxe0 and siw0 in a VM (reports in ./results)
  selftest  run all of pytest-rdma's own tests (host, in the lab, then on a fresh Debian 12 machine)
  coverage  list, per verb, each error and claim of its man page with the checks covering it
  compare   compare results files: the claim x driver matrix, regressions and fixes
  waivers   draft a driver's expectations file from a results file
  report    build the Allure HTML report of runs (--rdma-allure DIRs); fails on its quality gate
  finish    make the final results document from the .jsonl lines of a killed run
  kcidb     write results files as a KCIDB submission for KernelCI (--origin NAME)
  lava      print a lava-test-case line per check of results files (--definition: the LAVA test definition)
Each command's --help says more. Testing real hardware needs no command of ours: pytest --rdma-dev mlx5_0
"""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE, end="")
        return 0
    if argv[:1] in (["-V"], ["--version"]):
        print(f"pytest-rdma {version()}")
        return 0
    commands = ", ".join(COMMANDS)
    if not argv:
        return fail("pytest-rdma", f"no command given; give one of {commands} (see 'pytest-rdma --help')")
    if argv[0] not in COMMANDS:
        return fail("pytest-rdma", f"unknown command {argv[0]!r}; give one of {commands} (see 'pytest-rdma --help')")
    try:
        return COMMANDS[argv[0]](argv[1:])
    except SystemExit as exc:  # argparse's --help (0) and one-line usage errors (2), as a status
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except Exception:  # noqa: BLE001 - a bug of ours, not bad input: its traceback, and not exit 1 ("gate failed")
        traceback.print_exc()
        print(f"pytest-rdma {argv[0]}: internal error (a bug: please report the traceback above)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
