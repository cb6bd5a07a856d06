"""The lab: real rxe and siw providers in a throwaway VM, for hosts with no RDMA hardware.

`run()` installs what is missing, builds siw.ko if asked for siw, boots the distro kernel
with virtme-ng, creates the devices, runs pytest inside against them and returns pytest's
exit code. Results land in the results directory on the host.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rdma import resume_files
from pytest_rdma.cbuild import BUILDS_ENV
from pytest_rdma.lab import boot_image, kwarn, prereqs, siw, virtiofsd, vm
from pytest_rdma.lab.builds import DIRECTORY as BUILDS_DIRECTORY
from pytest_rdma.lab.builds import BuildService
from pytest_rdma.lab.prereqs import LabError, Log

DEFAULT_DEVICES = ("rxe0", "siw0")
EXIT_LAB_FAILED = 3  # pytest's "internal error": the run could not happen
EXIT_USAGE = 4  # pytest's "usage error"
# How many times one lab run boots again after a guest kernel fault or hang (lab/fault.py). Each costs a boot and a
# pytest start (about 30 s under TCG here); a provider that faults on a whole family of checks would otherwise boot
# again for each. Five lets a run with a few faulting checks finish, and bounds what a broken kernel costs to minutes.
MAX_REBOOTS = 5
# Each run's results file (lab.command.LAB_REPORTS), and the Allure results the host writes from it beside it
# (write_allure): not the VM, where each of a check's files was about 6 ms of an emulated CPU, and a VM killed
# mid-run took the files it had not handed over yet.
LAB_JSON = "results.json"
LAB_ALLURE = "allure"


@dataclass
class LabRequest:
    devices: list[str] = field(default_factory=lambda: list(DEFAULT_DEVICES))
    pytest_args: list[str] = field(default_factory=list)
    results: Path = Path("results")
    cache: Path = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pytest-rdma"
    per_device: bool = True  # one pytest run per device (reports per driver) or one for all
    install: bool = True
    html: bool = False  # install (or check) what the Allure HTML report needs, before the run
    timeout: float = 3600.0
    report_args: list[str] = field(default_factory=list)
    # Another in-VM runner (module run as `python -m GUEST plan.json`) and what it needs in
    # the plan; the benchmarks use these to reuse the lab's boot (benchmarks/lab_overhead.py).
    guest: str = vm.GUEST_MODULE
    plan_extra: dict = field(default_factory=dict)
    kernel: str | None = None  # the release to boot (installed when missing); None: the newest with rdma_rxe
    qemu_opts: list[str] = field(default_factory=list)  # more QEMU arguments: the two-host lab's wire NIC
    max_reboots: int = MAX_REBOOTS  # boots again after guest kernel faults or hangs (lab/fault.py)
    # Each run's Allure results written here, from its results file, after the VM stops (write_allure): with
    # lab.command.LAB_REPORTS, whose JSON they are written from.
    allure: bool = False


def _check_devices(devices: list[str]) -> None:
    for name in devices:
        if not (name.startswith("rxe") or name.startswith("siw")):
            raise LabError(
                f"the lab can create rxeN (Soft-RoCE) and siwN (soft-iWARP) devices, not {name!r}; "
                "for other devices run pytest --rdma-dev NAME on a host that has them"
            )


def unpack_scratch(results: Path) -> None:
    """Each run's files written on the VM's tmpfs (see guest.keep_scratch) back in place."""
    # Imported here: the VM runs `python -m pytest_rdma.lab.guest`, which must not find itself
    # already imported by this package (runpy warns, and would run a second copy).
    from pytest_rdma.lab.guest import SCRATCH_TAR

    for packed in sorted(results.glob(f"*/{SCRATCH_TAR}")):
        into = packed.parent.resolve()
        with tarfile.open(packed) as tar:
            # Plain files and directories inside the run's directory only (this Python's
            # tarfile may predate extraction filters).
            members = [
                m
                for m in tar.getmembers()
                if (m.isfile() or m.isdir()) and (into / m.name).resolve().is_relative_to(into)
            ]
            tar.extractall(into, members=members)
        packed.unlink()


def write_allure(request: LabRequest, results: Path, log: Log, since: float) -> None:
    """Each run's Allure results (results/<run>/allure), written on the host from the run's results file:
    the final document, or the lines a killed VM left (report/allure_writer.write_from_results).

    Only from a file this lab run wrote (modified at `since`, its start's wall clock, or later): an earlier
    run's file left in place by a run that never started would otherwise pass the report's gate."""
    if not request.allure:
        return
    from pytest_rdma.report.allure_writer import write_from_results
    from pytest_rdma.report.jsonfile import lines_path

    started, checks = time.monotonic(), 0
    for devices in [[device] for device in request.devices] if request.per_device else [request.devices]:
        run_dir = results / "+".join(devices)
        document = run_dir / LAB_JSON
        found = next((path for path in (document, lines_path(document)) if written_since(path, since)), None)
        if found is None:
            continue  # the run never started: the report's gate says the device has no results
        try:
            failed = write_from_results(found, run_dir / LAB_ALLURE, run_dir / "reproducers", devices)
        except (OSError, ValueError) as exc:
            failed = [f"{found}: {exc}"]
        for line in failed:
            print(f"lab: error: the Allure results of {run_dir.name} were not all written: {line}", file=sys.stderr)
        checks += sum(1 for _ in (run_dir / LAB_ALLURE).glob("*-result.json"))
    if checks:
        seconds = time.monotonic() - started
        log(f"lab: Allure results of {checks} checks written from the results files in {seconds:.1f} s")


def written_since(path: Path, since: float) -> bool:
    try:
        return path.stat().st_mtime >= since
    except OSError:
        return False


def _unpacked(kernel: prereqs.Kernel, cache: Path, log: Log) -> prereqs.Kernel:
    """Under TCG, the kernel unpacked from its bzImage (lab/boot_image.py), else the bzImage itself.

    Not under KVM: there the decompressor takes a tenth of a second, less than virtme-ng then spends
    looking for the version string in the bigger file."""
    try:
        return dataclasses.replace(kernel, image=boot_image.unpacked(kernel.image, kernel.release, cache / "kernel"))
    except (boot_image.NotUnpackable, OSError) as exc:
        log(f"lab: booting {kernel.image.name} compressed, which costs seconds under TCG: {exc}")
        return kernel


def run(request: LabRequest, log: Log = print, errors: list[str] | None = None) -> int:
    """Pytest's exit code from the VM, or EXIT_USAGE / EXIT_LAB_FAILED when the run could not happen;
    each error printed then is appended to `errors` too (pytest-rdma selftest repeats them last)."""

    def error(message: str) -> None:
        print(f"lab: error: {message}", file=sys.stderr)
        if errors is not None:
            errors.append(message)

    started = time.monotonic()
    began = time.time()  # the files this run writes are modified from here on (write_allure)
    try:
        _check_devices(request.devices)
        want_siw = any(name.startswith("siw") for name in request.devices)
        kernel = (
            prereqs.ensure(want_siw, request.cache, log, html=request.html, release=request.kernel)
            if request.install
            else prereqs.find_kernel(request.kernel)
        )
        if kernel is None and request.kernel is not None:
            raise LabError(prereqs.no_rxe(request.kernel))
        if kernel is None:
            raise LabError("no kernel with rdma_rxe found; run without --no-install to install one")
        vng = prereqs.ensure_virtme(log)
        siw_ko = siw.siw_module(kernel, request.cache, log) if want_siw else None
        guest_env = kwarn.guest_env(kernel, request.cache, log)  # for the lab's kernel-warning test
        kvm = vm.kvm_works(vng, kernel, request.cache)
        booted = kernel if kvm else _unpacked(kernel, request.cache, log)
    except LabError as exc:
        error(str(exc))
        return EXIT_USAGE
    results = request.results.resolve()
    results.mkdir(parents=True, exist_ok=True)
    # Deviations' C reproducers are built here, at native speed, for the VM to run (lab/builds.py).
    builds = BuildService(results / BUILDS_DIRECTORY)
    guest_env = {**guest_env, BUILDS_ENV: str(builds.directory)}
    plan = {
        "devices": request.devices,
        "siw_ko": str(siw_ko) if siw_ko else None,
        "pytest_args": request.pytest_args,
        "report_args": request.report_args,
        "results": str(results),
        "python": sys.executable,
        "cwd": os.getcwd(),
        "per_device": request.per_device,
        "env": guest_env,
        **request.plan_extra,
    }
    vm.precompile(
        [
            Path(__file__).resolve().parents[1],
            *(Path(arg.split("::")[0]) for arg in request.pytest_args if not arg.startswith("-")),
        ]
    )
    # Beside the boot, not before it: the VM's first pytest starts seconds after QEMU does, and a
    # cache not yet written then only costs that run its compile (pytest replaces a cache whole).
    bytecode_s: list[float] = []
    suite = importlib.util.find_spec("pytest_rdma.suites")
    warm: threading.Thread | None = None
    if suite is not None and suite.submodule_search_locations:
        where = Path(list(suite.submodule_search_locations)[0])
        warm = threading.Thread(
            target=lambda: bytecode_s.append(vm.warm_rewrite_caches(sys.executable, where, plan["cwd"])), daemon=True
        )
        warm.start()
    # virtio-fs instead of 9p for the shared root wherever we can: every file operation is a
    # round trip under TCG, and virtio-fs lets the VM cache the read-only root (lab/virtiofsd.py).
    bin_dirs = (virtiofsd.install(request.cache / "bin"),) if virtiofsd.needs_translator(vm.VIRTIOFSD_PATHS) else ()
    force_9p = vm.virtiofs_fails(vng, request.cache, bin_dirs)
    log(
        f"lab: booting {kernel.image.name}{' (unpacked)' if booted is not kernel else ''} ({'KVM' if kvm else 'TCG'}) "
        f"for {', '.join(request.devices)}; results in {results}"
    )
    console = results / "lab-console.log"
    # The two-host lab's VMs serve each other (lab/hosts.py): one booted again alone would find no peer.
    resumable = "wire" not in request.plan_extra
    resume_files.forget_boots(results)
    builds.start()
    try:
        boots: list[vm.VMRun] = []
        while True:
            console_before = console.stat().st_size if boots and console.exists() else 0
            outcome = vm.run(
                vng,
                booted,
                kvm,
                results,
                plan,
                started,
                console,
                max(1.0, request.timeout - (time.monotonic() - started)),  # the whole run's --timeout
                guest=request.guest,
                force_9p=force_9p,
                bin_dirs=bin_dirs,
                qemu_opts=request.qemu_opts,
                append=bool(boots),
            )
            boots.append(outcome)
            if outcome.exit_code is not None or not resumable:
                break
            recorded = _record_faults(results, console, console_before, outcome)
            if not recorded:
                break  # no check was running: the VM failed otherwise (its boot, the runner)
            for line in recorded:
                log(f"lab: {line}")
            if len(boots) > request.max_reboots:
                error(
                    f"the guest kernel stopped the run {len(boots)} times (at most {request.max_reboots} boots again "
                    "per lab run: --rdma-hang-limit and the README's 'Leaks and kernel faults' say why); the checks "
                    "after the last fault did not run"
                )
                print(f"lab: {kept_results(results)}", file=sys.stderr)
                unpack_scratch(results)
                write_allure(request, results, log, began)
                return EXIT_LAB_FAILED
            log(f"lab: booting again ({len(boots)} of at most {request.max_reboots}) for the checks not yet run")
        outcome = dataclasses.replace(outcome, first_test_s=boots[0].first_test_s)
    finally:
        builds.stop()
    if warm is not None:
        warm.join()
    if not force_9p:
        vm.remember_virtiofs(vng, request.cache, console, bin_dirs)
    unpack_scratch(results)
    write_allure(request, results, log, began)
    if outcome.exit_code is None:
        error(str(vm.boot_failure(outcome, console)))
        print(f"lab: {kept_results(results)}", file=sys.stderr)
        return EXIT_LAB_FAILED
    total = time.monotonic() - started
    first = f"{outcome.first_test_s:.1f} s" if outcome.first_test_s is not None else "no test ran"
    log(
        f"lab: cold start to first test: {first} ({'KVM' if kvm else 'TCG'}); whole lab run: {total:.1f} s; "
        f"pytest exit code {outcome.exit_code}"
    )
    (results / "lab-timing.txt").write_text(
        f"first_test_s={outcome.first_test_s}\ntotal_s={total:.1f}\naccel={'kvm' if kvm else 'tcg'}\n"
        f"bytecode_s={sum(bytecode_s):.1f}\n"
    )
    return outcome.exit_code


def _record_faults(results: Path, console: Path, offset: int, outcome: vm.VMRun) -> list[str]:
    """After a VM that gave no exit code back: the record of each check it stopped during (lab/fault.py), and a
    line for the terminal about each; none when no check was running."""
    # Imported here, as the guest's module above: the VM imports this package, and fault.py imports pytest's.
    from pytest_rdma.lab import fault

    running = resume_files.running_checks(results)
    if not running:
        return []
    with console.open(errors="replace") as text:
        text.seek(offset)
        kind, report = fault.kernel_report(text.read().splitlines())
    if not kind and not outcome.hung:
        return []  # neither the kernel's panic nor a hang: the VM was stopped (QEMU killed, the whole-run --timeout)
    if kind:
        costs = fault.whose_fault([(path, resume_files.pid_of(path)) for path in running], report)
    else:
        costs = [path for path in running if path in outcome.hung]
    cut_short = [fault.keep_finished(path) for path in running if path not in costs]  # each runs again after the boot
    if not costs and not kind:
        return []  # no running check was the one that hung
    if not costs:  # runs side by side, and the kernel's report named none of their processes
        (results / resume_files.ONE_AFTER_ANOTHER_FILE).write_text(f"{report[0] if report else kind}\n")
        return [
            f"a kernel {kind} ended the VM while runs side by side were in {', '.join(cut_short)}, and its report "
            "names none of their processes: each of these checks runs again, the devices one after the other"
        ]
    lines = []
    for path in costs:
        seconds = time.time() - resume_files.started_at(path)
        record = fault.record_fault(path, fault.Fault(kind or "hang", report, seconds, resume_files.limit_of(path)))
        lines.append(
            f"{record.get('device') or path.parent.name}: {record['nodeid']}: {record['reason']} "
            f"({seconds:.0f} s into the check); recorded as a deviation"
        )
    return lines


def kept_results(results: Path) -> str:
    """What a run that never finished (its VM killed) left on the host: the finished checks' lines."""
    from pytest_rdma.report.jsonfile import load

    kept = []
    for lines in sorted(results.glob("*/*.jsonl")):
        if lines.name == resume_files.RESUME_FILE:
            continue  # a copy of the records of the boots before, which the run's own lines hold too
        try:
            count = len(load(lines)["results"])
        except (OSError, ValueError) as exc:
            kept.append(f"{lines} (unreadable: {exc})")
            continue
        kept.append(f"{lines} ({count} finished checks)")
    if not kept:
        return f"no check finished: no results in {results}"
    return (
        "results of the finished checks are kept in "
        + ", ".join(kept)
        + "; 'pytest-rdma finish FILE.jsonl' makes the final results document from them"
    )
