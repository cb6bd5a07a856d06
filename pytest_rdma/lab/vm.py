"""Booting the distro kernel in a throwaway VM with virtme-ng.

The host's root filesystem is shared read-only into the VM; only the results directory
is writable, so the VM leaves nothing behind but results. KVM is used when it boots the
kernel; otherwise TCG (the answer is cached per kernel and QEMU, as probing KVM costs a
few seconds when it fails).
"""

from __future__ import annotations

import collections
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pytest_rdma.lab.prereqs import Kernel, LabError

KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\]")
KVM_PROBE_TIMEOUT = 60
# What the VM runs with the plan: `python -m GUEST plan.json`. Other in-VM runners (the
# benchmarks) reuse the boot by naming their own module; it must write lab-exit-code too.
GUEST_MODULE = "pytest_rdma.lab.guest"
# virtme-ng tries virtio-fs first. Where virtiofsd cannot serve (Debian 12 has only QEMU's old C
# daemon, which rejects virtme-ng's arguments) it waits about 3 s per shared directory before it
# falls back to 9p. The lab remembers that fallback (per QEMU, vng and virtiofsd found) and asks
# for 9p directly from then on, which is the same VM minus those seconds of cold start.
VIRTIOFS_FALLBACK = "failed to start virtiofsd, fallback to 9p"
VIRTIOFSD_PATHS = ("/usr/libexec/virtiofsd", "/usr/lib/virtiofsd/virtiofsd", "/usr/lib/virtiofsd",
                   "/usr/lib/qemu/virtiofsd")


@dataclass
class VMRun:
    exit_code: int | None      # the guest's exit code, None when the VM never got there
    first_test_s: float | None  # host seconds from `started` to the first test starting
    console_tail: list[str]


def _vng_argv(vng: Path, kernel: Kernel, kvm: bool, rwdirs: list[Path], command: str, cpus: int,
              memory: str, force_9p: bool = False) -> list[str]:
    argv = [str(vng), "--run", str(kernel.image), "--verbose", "--memory", memory, "--cpus", str(cpus)]
    if not kvm:
        argv.append("--disable-kvm")
    if force_9p:
        argv.append("--force-9p")
    for directory in rwdirs:
        argv += ["--rwdir", str(directory)]
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
        try:
            probe = subprocess.run(_vng_argv(vng, kernel, True, [], "true", 1, "512M"), env=_env(vng),
                                   capture_output=True, timeout=KVM_PROBE_TIMEOUT, check=False)
            known[key] = probe.returncode == 0
        except subprocess.TimeoutExpired:
            known[key] = False
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(json.dumps(known))
    return bool(known[key])


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


def run(vng: Path, kernel: Kernel, kvm: bool, results: Path, plan: dict, started: float,
        console_log: Path, timeout: float, cpus: int = 2, memory: str = "2G",
        guest: str = GUEST_MODULE, force_9p: bool = False, bin_dirs: tuple[Path, ...] = ()) -> VMRun:
    """Boot, run the guest plan, stream its output; kernel lines go to `console_log`."""
    plan_path = results / "lab-plan.json"
    plan_path.write_text(json.dumps(plan, indent=1))
    exit_file = results / "lab-exit-code"
    exit_file.unlink(missing_ok=True)
    marks = results / "first-test"
    marks.unlink(missing_ok=True)
    command = " ".join(shlex.quote(part) for part in (sys.executable, "-m", guest, str(plan_path)))
    argv = _vng_argv(vng, kernel, kvm, [results], command, cpus, memory, force_9p)
    tail: collections.deque[str] = collections.deque(maxlen=40)
    first_test: list[float] = []

    def watch_first_test() -> None:
        while proc.poll() is None and not first_test:
            if marks.exists():
                first_test.append(time.monotonic() - started)
            time.sleep(0.05)

    with console_log.open("w") as log:
        proc = subprocess.Popen(argv, env=_env(vng, bin_dirs), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, errors="replace", cwd=plan["cwd"])
        watcher = threading.Thread(target=watch_first_test, daemon=True)
        watcher.start()
        # A VM that hangs prints nothing, so the limit cannot wait for the next line.
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            if KERNEL_LINE.match(line):
                tail.append(line.rstrip())
            else:
                print(line, end="", flush=True)
        proc.wait()
        if not killer.is_alive():
            tail.append(f"lab: VM killed after {timeout:.0f} s")
        killer.cancel()
        watcher.join(timeout=1)
    code = int(exit_file.read_text()) if exit_file.exists() else None
    return VMRun(code, first_test[0] if first_test else None, list(tail))


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
        if path.is_dir():
            compileall.compile_dir(str(path), quiet=2)
        elif path.suffix == ".py" and path.is_file():
            compileall.compile_file(str(path), quiet=2)


def boot_failure(run_result: VMRun, console_log: Path) -> LabError:
    lines = "\n".join(run_result.console_tail[-25:]) or "(the VM printed nothing)"
    return LabError(f"the lab VM did not finish its run (no exit code came back). "
                    f"The kernel's last lines:\n{lines}\nFull console log: {console_log}")
