"""Runs inside the lab VM: creates the devices, then runs pytest once per device.

The host hands over a plan (JSON in the results directory, which the VM can write), so
no shell command is ever built from the user's arguments. The exit code is written
next to it because it is the one thing the host must not lose.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

EXIT_DEVICE_FAILED = 3


def _uptime() -> float:
    return float(Path("/proc/uptime").read_text().split()[0])


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, check=False)


def _kernel_tail(lines: int = 30) -> str:
    return "\n".join(_run("dmesg").stdout.splitlines()[-lines:])


def create_devices(devices: list[str], siw_ko: str | None) -> str:
    """Create each rxeN/siwN on a dummy netdev; return "" or what went wrong."""
    kinds = {name: ("siw" if name.startswith("siw") else "rxe") for name in devices}
    if any(kind == "rxe" for kind in kinds.values()) or siw_ko:
        _run("modprobe", "rdma_rxe")  # also brings ib_core, which siw.ko needs
    if "siw" in kinds.values():
        _run("modprobe", "libcrc32c")
        loaded = _run("insmod", siw_ko or "siw.ko")
        if loaded.returncode and "File exists" not in loaded.stderr:
            return f"insmod {siw_ko} failed: {loaded.stderr.strip()}"
    for index, (name, kind) in enumerate(kinds.items()):
        netdev = f"rdmalab{index}"
        for argv in (("ip", "link", "add", netdev, "type", "dummy"), ("ip", "link", "set", netdev, "up"),
                     ("rdma", "link", "add", name, "type", kind, "netdev", netdev)):
            step = _run(*argv)
            if step.returncode:
                return f"{' '.join(argv)} failed: {step.stderr.strip()}"
        if not Path(f"/sys/class/infiniband/{name}").exists():
            return f"{name} did not appear in /sys/class/infiniband after 'rdma link add'"
    return ""


SCRATCH_TAR = "scratch.tar"


def keep_scratch(scratch: Path, run_dir: Path) -> None:
    """Move what a run wrote to the VM's own memory into its results directory, as one file.

    Reporters that write several files per check (allure) write to `{scratch}`, on the
    VM's tmpfs, because every file operation on the shared results directory is a 9p round
    trip under an emulated CPU (a quarter of a check's time, benchmarks/). One tar is one
    sequential write; the host unpacks it after the VM stops (`pytest_rdma.lab.unpack_scratch`).
    A VM killed mid-run loses these files; the JSON lines (written to the share as each check
    ends) are kept.
    """
    if not any(scratch.iterdir()):
        return
    with tarfile.open(run_dir / SCRATCH_TAR, "w") as tar:
        for path in sorted(scratch.iterdir()):
            tar.add(path, arcname=path.name)


def main(plan_path: str) -> int:
    plan = json.loads(Path(plan_path).read_text())
    results = Path(plan["results"])
    started = _uptime()
    problem = create_devices(plan["devices"], plan.get("siw_ko"))
    if problem:
        print(f"lab: device setup failed: {problem}\nlab: the kernel's last lines:\n{_kernel_tail()}", flush=True)
        return EXIT_DEVICE_FAILED
    print(f"lab: {', '.join(plan['devices'])} ready at guest uptime {_uptime():.1f} s "
          f"(setup {_uptime() - started:.1f} s)", flush=True)
    # From here the kernel log goes to results/lab-kernel.log (and to the checks that read it),
    # not to the console, where it would break into pytest's output mid-line.
    _run("dmesg", "--console-level", "1")
    env = dict(os.environ, PYTEST_RDMA_LAB_MARKS=str(results))
    # In the lab a kernel fault fails its check by default (--rdma-kernel-log on the command line wins).
    env.setdefault("PYTEST_RDMA_KERNEL_LOG", "fail")
    env.update(plan.get("env", {}))  # what the host built for the lab's own tests (lab/kwarn.py)
    # Per device: each run's reports describe one driver. Otherwise one run tests them all.
    runs = [[device] for device in plan["devices"]] if plan.get("per_device", True) else [plan["devices"]]
    worst = 0
    for devices in runs:
        label = "+".join(devices)
        run_dir = results / label
        run_dir.mkdir(parents=True, exist_ok=True)
        argv = [plan["python"], "-m", "pytest", "-p", "no:cacheprovider",
                *(f"--rdma-dev={device}" for device in devices),
                f"--junitxml={run_dir / 'junit.xml'}", *plan.get("report_args", []), *plan["pytest_args"]]
        scratch = Path(tempfile.mkdtemp(prefix=f"pytest-rdma-{label}-"))
        argv = [arg.replace("{results}", str(run_dir)).replace("{scratch}", str(scratch)).replace("{dev}", label)
                for arg in argv]
        print(f"lab: === {label}: pytest {' '.join(argv[3:])}", flush=True)
        code = subprocess.run(argv, cwd=plan["cwd"], env=env, check=False).returncode
        keep_scratch(scratch, run_dir)
        print(f"lab: === {label}: pytest exited {code}", flush=True)
        worst = worst or code
    (results / "lab-kernel.log").write_text(_run("dmesg").stdout)
    return worst


if __name__ == "__main__":
    code = main(sys.argv[1])
    Path(json.loads(Path(sys.argv[1]).read_text())["results"], "lab-exit-code").write_text(f"{code}\n")
    time.sleep(0.1)
    sys.exit(code)
