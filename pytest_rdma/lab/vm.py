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
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pytest_rdma.lab.prereqs import Kernel, LabError

KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\]")
KVM_PROBE_TIMEOUT = 60


@dataclass
class VMRun:
    exit_code: int | None      # the guest's exit code, None when the VM never got there
    first_test_s: float | None  # host seconds from `started` to the first test starting
    console_tail: list[str]


def _vng_argv(vng: Path, kernel: Kernel, kvm: bool, rwdirs: list[Path], command: str, cpus: int,
              memory: str) -> list[str]:
    argv = [str(vng), "--run", str(kernel.image), "--verbose", "--memory", memory, "--cpus", str(cpus)]
    if not kvm:
        argv.append("--disable-kvm")
    for directory in rwdirs:
        argv += ["--rwdir", str(directory)]
    return argv + ["--exec", command]


def _env(vng: Path) -> dict[str, str]:
    # vng looks for virtme-run on PATH: it sits next to vng in the same environment.
    return dict(os.environ, PATH=f"{vng.parent}{os.pathsep}{os.environ.get('PATH', '')}")


def kvm_works(vng: Path, kernel: Kernel, cache: Path) -> bool:
    if os.environ.get("PYTEST_RDMA_LAB_KVM") in ("0", "1"):
        return os.environ["PYTEST_RDMA_LAB_KVM"] == "1"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True, check=False)
    key = f"{kernel.release}|{qemu.stdout.splitlines()[0] if qemu.stdout else '?'}"
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


def run(vng: Path, kernel: Kernel, kvm: bool, results: Path, plan: dict, started: float,
        console_log: Path, timeout: float, cpus: int = 2, memory: str = "2G") -> VMRun:
    """Boot, run the guest plan, stream its output; kernel lines go to `console_log`."""
    plan_path = results / "lab-plan.json"
    plan_path.write_text(json.dumps(plan, indent=1))
    exit_file = results / "lab-exit-code"
    exit_file.unlink(missing_ok=True)
    marks = results / "first-test"
    marks.unlink(missing_ok=True)
    command = " ".join(shlex.quote(part) for part in (sys.executable, "-m", "pytest_rdma.lab.guest", str(plan_path)))
    argv = _vng_argv(vng, kernel, kvm, [results], command, cpus, memory)
    tail: collections.deque[str] = collections.deque(maxlen=40)
    first_test: list[float] = []

    def watch_first_test() -> None:
        while proc.poll() is None and not first_test:
            if marks.exists():
                first_test.append(time.monotonic() - started)
            time.sleep(0.05)

    with console_log.open("w") as log:
        proc = subprocess.Popen(argv, env=_env(vng), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
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


def boot_failure(run_result: VMRun, console_log: Path) -> LabError:
    lines = "\n".join(run_result.console_tail[-25:]) or "(the VM printed nothing)"
    return LabError(f"the lab VM did not finish its run (no exit code came back). "
                    f"The kernel's last lines:\n{lines}\nFull console log: {console_log}")
