"""Booting the distro kernel in a throwaway VM with virtme-ng.

The host's root filesystem is shared read-only into the VM; only the results directory
is writable, so the VM leaves nothing behind but results. KVM is used when it boots the
kernel; otherwise TCG (the answer is cached per kernel and QEMU; lab/kvm.py decides in seconds
where KVM cannot even start the kernel, and a full boot probe decides the rest).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_rdma import resume_files
from pytest_rdma.lab import kvm
from pytest_rdma.lab.prereqs import Kernel, LabError

KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\]")
# The in-VM runner's own lines: "lab: ..." (benchmarks/lab_guest.py prints "bench: ..."). Its line
# "lab: rxe0, siw0 ready at ..." ends the boot; from there on the console is the runner's and pytest's.
GUEST_PREFIXES = ("lab: ", "bench: ")
GUEST_READY = re.compile(r"^(lab|bench): .* ready at guest uptime")
# What virtme-ng, QEMU and QEMU's virtiofsd print on the host while the VM boots and stops ("virtme:
# waiting for virtiofsd to start", "fv_queue_thread: Start for queue 0", "virtio_loop: Exit"...): the
# console log keeps it, the terminal does not need it.
HOST_LINE = re.compile(
    r"^(virtme(-run|-ng)?: |virtio_\w+: |fv_\w+: |vu_\w+: |vhost[\w ]*: |lo_\w+: |qemu-system-\w+: )"
)
# Console lines that say what went wrong when the VM gives no exit code back: virtme-ng's and QEMU's
# errors on the host ("virtme-run: initramfs is needed, and no busybox was found"), Python's
# tracebacks, and the kernel's own faults. Other kernel lines come as the kernel's last lines.
EXPLAINS = re.compile(
    r"\b(error|fail(ed|ure|s)?|not found|no such file|cannot|can't|could not|unable|denied|refused|killed|"
    r"fatal|panic|timed out|segmentation fault|not installed|please install|(is|are) needed)\b"
    r"|\bno \S+ (was |were )?found\b|^Traceback |^\w+(Error|Exception)\b",
    re.IGNORECASE,
)
KERNEL_FAULT = re.compile(
    r"Kernel panic|not syncing|BUG:|Oops|general protection fault|Unable to mount root|"
    r"Call Trace"
)
# Once the runner is ready the console shows only what the kernel prints in an Oops (console_verbose) or a panic. The
# VM then ends in seconds (oops=panic, panic=-1); should it not (a kernel that survives its Oops, as 6.1 did with
# rxe's out-of-bounds read before the lab asked for oops=panic, its dead task's check never ending), the lab ends it
# FAULT_GRACE_S later rather than at the hang limit.
QUIET_CONSOLE_FAULT = re.compile(
    r"\[\s*\d+\.\d{6}\]\s?(BUG: |Oops|general protection fault|kernel BUG at|Kernel panic)"
)
FAULT_GRACE_S = 60.0  # a panic under TCG, on a loaded machine, ends in seconds
KERNEL_TAIL = 15  # kernel lines quoted when the VM did not finish
EXPLAINING_LINES = 15  # at most this many explaining lines (the last ones), each once
KVM_PROBE_TIMEOUT = 60
# What the VM runs with the plan: `python -m GUEST plan.json`. Other in-VM runners (the
# benchmarks) reuse the boot by naming their own module; it must write lab-exit-code too.
GUEST_MODULE = "pytest_rdma.lab.guest"
# virtme-ng tries virtio-fs first. Where virtiofsd cannot serve (Debian 12 has only QEMU's old C
# daemon, which rejects virtme-ng's arguments) it waits about 3 s per shared directory before it
# falls back to 9p. The lab remembers that fallback (per QEMU, vng and virtiofsd found) and asks
# for 9p directly from then on, which is the same VM minus those seconds of cold start.
VIRTIOFS_FALLBACK = "failed to start virtiofsd, fallback to 9p"
VIRTIOFSD_PATHS = (
    "/usr/libexec/virtiofsd",
    "/usr/lib/virtiofsd/virtiofsd",
    "/usr/lib/virtiofsd",
    "/usr/lib/qemu/virtiofsd",
)


@dataclass
class VMRun:
    exit_code: int | None  # the guest's exit code, None when the VM never got there
    first_test_s: float | None  # host seconds from `started` to the first test starting
    console_tail: list[str]
    hung: list[Path] = dataclasses.field(default_factory=list)  # running files of the checks past their limit


# Drivers udev loads at boot for QEMU's emulated machine (its SATA controller and DVD drive, watchdogs,
# SMBus, PC speaker, PS/2 mouse, KVM, CPU frequency, AES): nothing the lab uses. Under TCG, probing them kept
# udev from settling for about 3.5 s of a 7 s boot, before the runner could start. Not the CRC32
# drivers: rxe computes its ICRC with them.
UNUSED_GUEST_DRIVERS = (
    "ahci",
    "sr_mod",
    "sg",
    "iTCO_wdt",
    "i6300esb",
    "lpc_ich",
    "i2c_i801",
    "pcspkr",
    "psmouse",
    "kvm_amd",
    "kvm_intel",
    "powernow_k8",
    "aesni_intel",
    "ghash_clmulni_intel",
)

# Under TCG on a loaded machine the emulated CPU can fall so far behind that the kernel's boot-time test of
# the IO-APIC timer sees too few ticks and panics ("IO-APIC + timer doesn't work!"): seen here with several
# VMs at once. The test says nothing about the checks; the kernel's own parameter skips it
# (kernel-parameters.txt: "no_timer_check: disables the code which tests for broken timer IRQ sources").
# Under KVM the guest keeps pace, so its boot stays as it was.
TCG_KERNEL_OPTION = "no_timer_check"

# What the guest kernel is booted with (lab/fault.py), so that a fault ends the VM at once rather than leaving it
# half alive. An Oops kills only the faulting task: on 6.1 rxe's out-of-bounds read (req_next_wqe) killed the
# xdist worker in its post and the VM lived on, its check never ending, until the hang limit. `oops=panic`
# (kernel-parameters.txt: "Always panic on oopses"; `panic_on_oops=1` is only its sysctl, which the kernel does
# not know on its command line) makes it a panic, which virtme-ng's panic=-1 and QEMU's -no-reboot end.
# Its report reaches the console although the runner keeps it quiet (dmesg --console-level 1): an Oops and a panic
# print verbosely (console_verbose). WARNINGs stay non-fatal (no panic_on_warn): the kernel-log guard attributes them.
FAULT_KERNEL_OPTIONS = ("oops=panic",)


def _vng_argv(
    vng: Path,
    kernel: Kernel,
    kvm: bool,
    rwdirs: list[Path],
    command: str,
    cpus: int,
    memory: str,
    force_9p: bool = False,
    qemu_opts: Sequence[str] = (),
) -> list[str]:
    argv = [str(vng), "--run", str(kernel.image), "--verbose", "--memory", memory, "--cpus", str(cpus)]
    if not kvm:
        argv.append("--disable-kvm")
    if force_9p:
        argv.append("--force-9p")
    for directory in rwdirs:
        argv += ["--rwdir", str(directory)]
    argv += ["--append", "modprobe.blacklist=" + ",".join(UNUSED_GUEST_DRIVERS)]
    for option in FAULT_KERNEL_OPTIONS:
        argv += ["--append", option]
    if not kvm:
        argv += ["--append", TCG_KERNEL_OPTION]
    if qemu_opts:  # the two-host lab's wire NIC (lab/hosts.py); vng passes them to QEMU last
        argv.append("--qemu-opts=" + " ".join(qemu_opts))
    return argv + ["--exec", command]


def _env(vng: Path, bin_dirs: tuple[Path, ...] = ()) -> dict[str, str]:
    # vng looks for virtme-run on PATH: it sits next to vng in the same environment. `bin_dirs`
    # come first: the lab's virtiofsd translator (lab/virtiofsd.py) when there is one.
    path = os.pathsep.join([*map(str, bin_dirs), str(vng.parent), os.environ.get("PATH", "")])
    return dict(os.environ, PATH=path)


def kvm_works(vng: Path, kernel: Kernel, cache: Path) -> bool:
    if os.environ.get("PYTEST_RDMA_LAB_KVM") in ("0", "1"):
        return os.environ["PYTEST_RDMA_LAB_KVM"] == "1"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    key = f"{kernel.release}|{_qemu_version()}"
    memo = cache / "kvm-probe.json"
    known = json.loads(memo.read_text()) if memo.exists() else {}
    if key not in known:
        known[key] = not kvm.kvm_refuses() and kvm.kernel_starts(kernel.image) and _boots_under_kvm(vng, kernel)
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(json.dumps(known))
    return bool(known[key])


def _boots_under_kvm(vng: Path, kernel: Kernel) -> bool:
    """The full probe, once the kernel is seen to start under KVM (lab/kvm.py): a whole virtme-ng boot."""
    try:
        probe = subprocess.run(
            _vng_argv(vng, kernel, True, [], "true", 1, "512M"),
            env=_env(vng),
            capture_output=True,
            timeout=KVM_PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False
    return probe.returncode == 0


@functools.cache  # asked by the KVM probe's and virtio-fs' memos before a boot and after it: one QEMU start
def _qemu_version() -> str:
    qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True, check=False)
    return qemu.stdout.splitlines()[0] if qemu.stdout else "?"


def _virtiofs_key(vng: Path, bin_dirs: tuple[Path, ...] = ()) -> str:
    found = shutil.which("virtiofsd", path=_env(vng, bin_dirs)["PATH"])
    daemons = [path for path in (found, *VIRTIOFSD_PATHS) if path and os.path.exists(path)]
    return f"{_qemu_version()}|{vng}|{','.join(daemons)}"


def virtiofs_fails(vng: Path, cache: Path, bin_dirs: tuple[Path, ...] = ()) -> bool:
    """Whether an earlier boot here, with the same daemons, saw virtme-ng fall back from virtio-fs to 9p."""
    memo = cache / "virtiofs-probe.json"
    known = json.loads(memo.read_text()) if memo.exists() else {}
    return known.get(_virtiofs_key(vng, bin_dirs)) is False


def remember_virtiofs(vng: Path, cache: Path, console_log: Path, bin_dirs: tuple[Path, ...] = ()) -> None:
    """After a boot that was free to try virtio-fs: note it if virtme-ng fell back to 9p."""
    if not console_log.exists() or VIRTIOFS_FALLBACK not in console_log.read_text(errors="replace"):
        return
    memo = cache / "virtiofs-probe.json"
    known = json.loads(memo.read_text()) if memo.exists() else {}
    known[_virtiofs_key(vng, bin_dirs)] = False
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text(json.dumps(known))


def run(
    vng: Path,
    kernel: Kernel,
    kvm: bool,
    results: Path,
    plan: dict,
    started: float,
    console_log: Path,
    timeout: float,
    cpus: int = 2,
    memory: str = "2G",
    guest: str = GUEST_MODULE,
    force_9p: bool = False,
    bin_dirs: tuple[Path, ...] = (),
    qemu_opts: Sequence[str] = (),
    append: bool = False,
) -> VMRun:
    """Boot, run the guest plan, stream its output. Everything goes to `console_log` (after what it holds, with
    `append`: a boot again after a fault); the terminal gets the runner's and pytest's lines (ConsoleFilter).
    A check that runs past its limit (its running file, lab/fault.py) ends the VM: `hung` names it."""
    plan_path = results / "lab-plan.json"
    plan_path.write_text(json.dumps(plan, indent=1))
    exit_file = results / "lab-exit-code"
    exit_file.unlink(missing_ok=True)
    marks = results / "first-test"
    marks.unlink(missing_ok=True)
    command = " ".join(shlex.quote(part) for part in (sys.executable, "-m", guest, str(plan_path)))
    argv = _vng_argv(vng, kernel, kvm, [results], command, cpus, memory, force_9p, qemu_opts)
    tail: collections.deque[str] = collections.deque(maxlen=40)
    first_test: list[float] = []
    hung: list[Path] = []

    def watch_first_test() -> None:
        while proc.poll() is None and not first_test:
            if marks.exists():
                first_test.append(time.monotonic() - started)
            time.sleep(0.05)

    def watch_hangs() -> None:
        # A hung guest prints nothing and writes nothing: the host ends it. Once a second, a stat per device.
        while proc.poll() is None and not hung:
            now = time.time()
            hung.extend(path for path in resume_files.running_checks(results) if resume_files.overdue(path, now))
            if hung:
                kill_tree(proc)
            time.sleep(1.0)

    with console_log.open("a" if append else "w") as log:
        proc = subprocess.Popen(
            argv,
            env=_env(vng, bin_dirs),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            cwd=plan["cwd"],
        )
        watcher = threading.Thread(target=watch_first_test, daemon=True)
        watcher.start()
        hang_watcher = threading.Thread(target=watch_hangs, daemon=True)
        hang_watcher.start()
        # A VM that hangs prints nothing, so the limit cannot wait for the next line.
        killer = threading.Timer(timeout, kill_tree, (proc,))
        killer.start()
        assert proc.stdout is not None
        terminal = ConsoleFilter()
        faulted: threading.Timer | None = None
        for line in proc.stdout:
            log.write(line)
            if KERNEL_LINE.match(line):
                tail.append(line.rstrip())
            if terminal.shows(line):
                print(line, end="", flush=True)
            if faulted is None and terminal.guest_ready and QUIET_CONSOLE_FAULT.search(line):
                log.flush()  # the report so far is on disk, whatever comes next
                faulted = threading.Timer(FAULT_GRACE_S, kill_tree, (proc,))
                faulted.start()
        proc.wait()
        if not killer.is_alive():
            tail.append(f"lab: VM killed after {timeout:.0f} s")
        killer.cancel()
        if faulted is not None:
            faulted.cancel()
        watcher.join(timeout=1)
        hang_watcher.join(timeout=2)
    code = int(exit_file.read_text()) if exit_file.exists() else None
    return VMRun(code, first_test[0] if first_test else None, list(tail), list(hung))


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (from /proc), children first."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(text[text.rindex(")") + 2 :].split()[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, of in parents.items() if of == parent and child not in found]
        found += children
        frontier += children
    return found


def kill_tree(proc: subprocess.Popen) -> None:
    """Kill virtme-ng and QEMU below it: QEMU is virtme-run's child, and killed alone vng leaves it running (and
    holding the console's pipe open)."""
    for pid in [*descendants(proc.pid), proc.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue  # gone already


def precompile(paths: list[Path]) -> None:
    """Write the bytecode caches of `paths` (directories or .py files) on the host.

    The VM sees the host's root read-only, so Python there cannot write __pycache__: every
    process in the VM (each pytest run, each xdist worker) would compile every module that has
    no valid cache from source again, under emulation. The project's own modules are those that
    lack one (a source tree, edited, run with PYTHONDONTWRITEBYTECODE); compiling them here takes
    a fraction of a second. Caches are .gitignored and are what any Python run would write.
    """
    import compileall

    for path in paths:
        try:
            if path.is_dir():
                compileall.compile_dir(str(path), quiet=2)
            elif path.suffix == ".py" and path.is_file():
                compileall.compile_file(str(path), quiet=2)
        except OSError:
            continue  # a pytest argument that is no path (a long -k expression: ENAMETOOLONG) has nothing to compile


def warm_rewrite_caches(python: str, suite: Path, cwd: str) -> float:
    """Have pytest write its own bytecode caches on the host, by one collection of `suite`; the seconds it took.

    pytest imports test modules, and every module of a package that registers a pytest11 plugin
    (all of pytest_rdma), through its assertion rewriter, which keeps its caches apart from the
    plain ones precompile() writes (`*.cpython-311-pytest-<version>.pyc`) and writes none under
    PYTHONDONTWRITEBYTECODE or on a read-only root, as in the VM. Without them every pytest
    process there (each device's run, each xdist worker, the run as nobody) rewrote and compiled
    the whole plugin again: seconds each under emulation. Collecting needs no device. `cwd` is
    the runs' own: whether pytest_rdma is imported from a directory on sys.path (rewritten) or
    through an editable install's finder (not rewritten) depends on it.
    """
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    started = time.monotonic()
    subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "--rdma-dev=rxe0", str(suite)],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,  # a cache not written costs time in the VM, nothing else: the run says what fails
    )
    return time.monotonic() - started


class ConsoleFilter:
    """Which console lines reach the terminal: the in-VM runner's ("lab: ...") while the VM boots,
    then everything but the kernel's lines and the host's virtme-ng/virtiofsd chatter.

    Before the runner says its devices are ready, nothing else there is for the user (kernel boot,
    virtme-ng waiting for virtiofsd, "Probing EDD"); after it, the output is pytest's.
    """

    def __init__(self) -> None:
        self.guest_ready = False

    def shows(self, line: str) -> bool:
        if KERNEL_LINE.match(line):
            return False
        if GUEST_READY.match(line):
            self.guest_ready = True
        if not self.guest_ready:
            return line.startswith(GUEST_PREFIXES)
        return not HOST_LINE.match(line)


def explaining_lines(console: list[str]) -> list[str]:
    """The console lines that say why a VM did not finish: errors of virtme-ng, QEMU, Python and the
    runner, and kernel faults. Each once, in order, the last EXPLAINING_LINES of them.

    Once the runner is ready, the rest is pytest's output, whose failures are results, not why
    the VM stopped: from there only the host's, the runner's and the kernel's lines count.
    """
    found: dict[str, None] = {}
    ready = False
    for line in console:
        ready = ready or bool(GUEST_READY.match(line))
        if KERNEL_LINE.match(line):
            explains = KERNEL_FAULT.search(line)
        elif ready and not (HOST_LINE.match(line) or line.startswith(GUEST_PREFIXES)):
            explains = None
        else:
            # virtme-ng's fallback from virtio-fs to 9p is handled (remember_virtiofs), not a failure.
            explains = EXPLAINS.search(line) if VIRTIOFS_FALLBACK not in line else None
        if explains:
            found.pop(line, None)  # a repeated line counts where it was last seen
            found[line] = None
    return list(found)[-EXPLAINING_LINES:]


def failure_message(console_text: str, console_log: Path, notes: Sequence[str] = ()) -> str:
    """Why the VM gave no exit code back, from what its console printed (pure)."""
    lines = [line.rstrip() for line in console_text.splitlines()]
    head = "the lab VM did not finish its run (no exit code came back)."
    if not any(lines):
        return "\n".join([f"{head} The VM printed nothing ({console_log} is empty).", *notes])
    parts = [head]
    explaining = explaining_lines(lines)
    if explaining:
        parts += ["What the console log says went wrong:", *(f"  {line}" for line in explaining)]
    kernel = [line for line in lines if KERNEL_LINE.match(line)][-KERNEL_TAIL:]
    if kernel:
        parts += ["The kernel's last lines:", *(f"  {line}" for line in kernel)]
    else:
        parts.append("The kernel printed nothing: the VM did not start it.")
    return "\n".join([*parts, *notes, f"Full console log: {console_log}"])


def boot_failure(run_result: VMRun, console_log: Path) -> LabError:
    text = console_log.read_text(errors="replace") if console_log.exists() else ""
    notes = [line for line in run_result.console_tail if line.startswith("lab: ")]  # "lab: VM killed after N s"
    return LabError(failure_message(text, console_log, notes))
