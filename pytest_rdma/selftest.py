"""`pytest-rdma selftest`: all of the project's own tests, in the order CI runs them.

Each step's outcome is repeated at the end, with what failed in it: CI shows the end of a run's
output, and a step's error (the lab's "lab: error: ...", a failed test) can lie half an hour
above it.

The host-side steps that boot their own VMs (the fresh machine, the lab command's own tests, then the kernel
matrix, run as `pytest-rdma lab --kernel`) run beside the others, one after another (`Beside`): the fresh
machine is mostly debootstrap and apt (disk and network) while the host tests use the cores, and each of the
lab's VMs keeps about one core of two busy (its tests run one at a time). Their output goes to a log each,
printed whole when the step ends.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rdma import lab
from pytest_rdma.lab import prereqs
from pytest_rdma.lab.command import REPO, lab_parser, split_passthrough

# The Allure HTML test builds a report (Allure 3 from npm, run by node) and opens it in a headless
# browser; the fresh-machine test makes its machine with debootstrap. Programs, not packages: one
# already on PATH is kept, whatever installed it.
SELFTEST_EXECUTABLES = ("chromium", "node", "npm", "debootstrap")
SELFTEST_DESCRIPTION = (
    "Run all of pytest-rdma's own tests: on the host (tests/unit), in the lab VM on rxe0 and siw0 "
    "(tests/lab), the lab command's own tests on the host (tests/host_lab), a slice of the catalogue on the "
    "default kernel and on Debian 12's 6.12 (--kernel chooses others), then the README's first "
    "command on a fresh Debian 12 machine made with debootstrap (tests/fresh, 7 to 11 minutes on 2 cores; "
    "--no-fresh skips it). Arguments after -- go to pytest, except on the fresh machine."
)
SHOWN_FAILURES = 10  # per step, in the summary; the step's own output has them all
# The kernel matrix's step: a slice of the catalogue on the distro's default kernel and on Debian 12's 6.12
# long-term kernel (its metapackage names the newest build), installed when missing. One slice: each kernel
# costs a boot and, the first time, its install and siw build; the whole catalogue is the lab's job.
MATRIX_KERNEL_PACKAGE = "linux-image-6.12-amd64"
MATRIX_SLICE = ["-k", "ibv_query_port"]
# Seconds one lab test (an inner pytest run, or several) may take before the lab calls the guest hung.
LAB_TEST_HANG_LIMIT_S = 1800


def matrix_kernels(given: list[str] | None) -> list[str]:
    """The kernels of the matrix step: those given (--kernel), else the default and the 6.12 kernel."""
    if given:
        return given
    installed = prereqs.find_kernel()
    default = installed.release if installed is not None else prereqs.distro_default_release()
    newer = prereqs.archive_release(MATRIX_KERNEL_PACKAGE)
    return [release for release in dict.fromkeys([default, newer]) if release]


@dataclass
class Step:
    name: str
    code: int = 0
    junit: Path | None = None  # the step's JUnit XML, for the names of what failed
    errors: list[str] = field(default_factory=list)  # what the step said went wrong before any test


def failed_tests(junit: Path) -> list[str]:
    """'file::test' of each failed or erroring testcase in a JUnit XML file (pure; none if unreadable)."""
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return []
    failed = []
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            classname, name = case.get("classname", ""), case.get("name", "")
            failed.append(f"{classname.replace('.', '/')}.py::{name}" if classname else name)
    return list(dict.fromkeys(failed))


def summary(steps: list[Step]) -> list[str]:
    """The lines that end a self-test: every step's exit code, then each failed step's reasons (pure)."""
    lines = ["selftest: " + ", ".join(f"{step.name} exited {step.code}" for step in steps)]
    for step in steps:
        if not step.code:
            continue
        failures = failed_tests(step.junit) if step.junit else []
        reasons = [*(f"error: {error}" for error in step.errors), *failures[:SHOWN_FAILURES]]
        if len(failures) > SHOWN_FAILURES:
            reasons.append(f"... and {len(failures) - SHOWN_FAILURES} more failed (see the step's output above)")
        if not reasons:
            reasons = [f"no failed test recorded (exit {step.code}); see the step's output above"]
        lines += [f"selftest: {step.name} failed: {reason}" for reason in reasons]
    return lines


def _pytest_argv(directory: str, args: list[str], junit: Path) -> list[str]:
    junit.parent.mkdir(parents=True, exist_ok=True)
    return [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        f"--junitxml={junit}",
        str(REPO / "tests" / directory),
        *args,
    ]


UNIT_XDIST = ("-n", "auto")  # before the user's arguments after --: their own -n wins


def _pytest(directory: str, args: list[str], junit: Path) -> int:
    return subprocess.run(_pytest_argv(directory, args, junit), cwd=REPO, check=False).returncode


def matrix_argv(
    devices: list[str] | None,
    kernels: list[str],
    results: Path,
    cache: Path,
    no_install: bool,
    timeout: float,
    passthrough: list[str],
) -> list[str]:
    """The kernel matrix step's command: the lab's own, each kernel in turn, no HTML report (pure)."""
    argv = [
        sys.executable,
        "-m",
        "pytest_rdma.cli",
        "lab",
        "--no-html",
        "--results",
        str(results),
        "--cache",
        str(cache),
    ]
    argv += ["--no-install"] if no_install else []
    argv += ["--timeout", f"{timeout:g}"]
    argv += [f"--dev={device}" for device in devices or lab.DEFAULT_DEVICES]
    argv += [f"--kernel={kernel}" for kernel in kernels]
    return [*argv, "--", *MATRIX_SLICE, *passthrough]


def _run_to_log(argv: list[str], log: Path, env: dict[str, str] | None) -> int:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as output:
        return subprocess.run(argv, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT, check=False).returncode


@dataclass
class BesideStep:
    """A step that runs beside the others: its command, and the log that keeps its output."""

    number: str  # "3/5", as the step is announced
    step: Step
    argv: list[str]
    log: Path
    env: dict[str, str] | None = None
    seconds: float = 0.0


class Beside:
    """Steps run one after another in a thread, beside the steps of the main thread; each one's output
    goes to its log and is printed whole once it ended, so that it is not interleaved with another's."""

    def __init__(self, steps: list[BesideStep]) -> None:
        self.steps = steps
        for beside in steps:
            # Until its command ended, a step has not passed (a thread that died must not read as a pass).
            beside.step.code, beside.step.errors = 1, ["the step never ended"]
        self._ended: queue.Queue[BesideStep] = queue.Queue()
        self._thread = threading.Thread(target=self._run_all, name="selftest-beside", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run_all(self) -> None:
        for beside in self.steps:
            start = time.monotonic()
            try:
                beside.step.code, beside.step.errors = _run_to_log(beside.argv, beside.log, beside.env), []
            except OSError as error:
                beside.step.errors = [f"could not run {beside.argv[0]}: {error}"]
            beside.seconds = time.monotonic() - start
            self._ended.put(beside)

    def print_ended(self, wait: bool = False) -> None:
        """Print each step that ended since the last call (all of them, once they end, with `wait`)."""
        if wait:
            self._thread.join()
        while True:
            try:
                beside = self._ended.get_nowait()
            except queue.Empty:
                return
            print(ended_header(beside), flush=True)
            sys.stdout.buffer.write(beside.log.read_bytes() if beside.log.is_file() else b"")
            print(f"selftest: --- end of {beside.number} {beside.step.name} ---", flush=True)


def ended_header(beside: BesideStep) -> str:
    """The line before a step's buffered output: which step, how it ended, how long it took (pure)."""
    return (
        f"selftest: --- {beside.number} {beside.step.name} (ran beside the other steps) exited "
        f"{beside.step.code} after {beside.seconds:.0f} s; its output, kept in {beside.log}: ---"
    )


def main(argv: list[str]) -> int:
    """All of the project's tests: host unit tests, the core's tests in the lab on rxe0 and siw0, the lab
    command's own tests, then the README's first command on a machine that has nothing installed."""
    own, passthrough = split_passthrough(argv)
    parser = lab_parser("pytest-rdma selftest", SELFTEST_DESCRIPTION)
    parser.add_argument(
        "--no-fresh",
        action="store_true",
        help="skip the fresh Debian 12 machine (the step that proves the lab's install steps)",
    )
    options = parser.parse_args(own)
    reports = options.results.resolve() / "selftest"
    count = 4 if options.no_fresh else 5
    if not options.no_install:
        wanted = tuple(name for name in SELFTEST_EXECUTABLES if name != "debootstrap" or not options.no_fresh)
        # The host tests compile reproducers against libibverbs-dev and call libibverbs through ctypes:
        # on a fresh machine the lab's packages must be there before step 1, not only before step 2
        # (a fresh CI machine failed 8 host tests with 'not built' and skipped 225 for want of them).
        prereqs.apt_install(
            list(
                dict.fromkeys([*prereqs.missing_packages(prereqs.BASE_PACKAGES), *prereqs.packages_for_missing(wanted)])
            )
        )
    # Steps 5 then 3 run beside steps 1, 2 and 4 (the module's docstring says why); numbers stay as before.
    fresh_junit, host_lab_junit = reports / "fresh-debian-12.xml", reports / "host-side-lab-tests.xml"
    fresh = Step("fresh Debian 12 machine", junit=fresh_junit)
    host_lab = Step("host-side lab tests", junit=host_lab_junit)
    beside_steps = []
    if not options.no_fresh:
        # CI's machine has what the lab may forget to install; this machine has nothing (tests/fresh/).
        # pytest's arguments are for the other steps: its slice is its own.
        print(
            f"selftest: 5/{count} fresh Debian 12 machine (tests/fresh): the README's first command on a "
            "debootstrap root, one more VM boot; beside the other steps, its output printed when it ends",
            flush=True,
        )
        beside_steps.append(
            BesideStep(
                f"5/{count}", fresh, _pytest_argv("fresh", ["-rA"], fresh_junit), reports / "fresh-debian-12.log"
            )
        )
    # Tests of the lab command itself (a killed VM): they run on the host and boot their own VMs.
    print(
        f"selftest: 3/{count} host-side lab tests (tests/host_lab): their own VM boots (two at once for a killed "
        "second host); beside the other steps, after the fresh machine, its output printed when it ends",
        flush=True,
    )
    beside_steps.append(
        BesideStep(
            f"3/{count}",
            host_lab,
            _pytest_argv("host_lab", passthrough, host_lab_junit),
            reports / "host-side-lab-tests.log",
            env=dict(os.environ, PYTEST_RDMA_LAB_CACHE=str(options.cache)),
        )
    )
    # The kernel matrix, as a user runs it (`pytest-rdma lab --kernel A --kernel B`), after the host-side lab tests:
    # beside the lab tests, not after them, it took CI's run under 20 minutes (issue 29, item 5).
    kernels = matrix_kernels(options.kernels)
    print(
        f"selftest: 4/{count} a slice on each kernel ({', '.join(kernels)}): pytest-rdma lab --kernel; beside the "
        "other steps, after the host-side lab tests, its output printed when it ends",
        flush=True,
    )
    in_matrix = Step("kernel matrix")
    beside_steps.append(
        BesideStep(
            f"4/{count}",
            in_matrix,
            matrix_argv(
                options.devices,
                kernels,
                reports / "kernels",
                options.cache,
                options.no_install,
                options.timeout,
                passthrough,
            ),
            reports / "kernel-matrix.log",
        )
    )
    beside = Beside(beside_steps)
    beside.start()

    print(f"selftest: 1/{count} host tests (tests/unit)", flush=True)
    junit = reports / "host-tests.xml"
    host = Step("host tests", junit=junit)
    # On every core (xdist): the host tests are the lab lane's first step, which is CI's longest, while the other
    # lane is in debootstrap and apt, which wait on the disk and the network more than on the cores.
    host.code = _pytest("unit", [*UNIT_XDIST, *passthrough], junit)
    beside.print_ended()

    print(f"selftest: 2/{count} lab tests (tests/lab) on rxe0 and siw0", flush=True)
    # One run for both devices: its results directory is results/selftest/rxe0+siw0 ({results}).
    in_lab = Step("lab tests")
    devices = options.devices or list(lab.DEFAULT_DEVICES)
    in_lab.junit = reports / "+".join(devices) / "lab-tests.xml"
    request = lab.LabRequest(
        devices=devices,
        pytest_args=[
            str(REPO / "tests" / "lab"),
            "--junitxml={results}/lab-tests.xml",
            # A lab test is a whole pytest run of its own (test_explore's: 118 s idle), not one check: at the
            # default hang limit (300 s) a loaded CI machine ended the VM in the middle of a healthy one.
            f"--rdma-hang-limit={LAB_TEST_HANG_LIMIT_S}",
            *passthrough,
        ],
        results=reports,
        cache=options.cache,
        install=not options.no_install,
        per_device=False,
        timeout=options.timeout,
        # No runs as nobody: they run the checks marked rdma_process, of which tests/lab has none (each device's
        # was a pytest start that deselected all 49, about 10 s of CI; tests/lab/test_unprivileged runs one itself).
        plan_extra={"unprivileged": False},
    )
    in_lab.code = lab.run(request, errors=in_lab.errors)
    beside.print_ended(wait=True)

    steps = [host, in_lab, host_lab, in_matrix, *([] if options.no_fresh else [fresh])]
    for line in summary(steps):
        print(line, flush=True)
    return next((step.code for step in steps if step.code), 0)
