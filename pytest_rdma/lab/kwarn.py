"""A module that makes the lab kernel warn, for testing the kernel-log guard on a real fault.

Debian's kernel has no lkdtm, so the lab builds its own provoker (kwarn_ko/, our code): its
init function raises a WARNING in kernel code, with the kernel's own cut-here line, message,
WARNING line, registers and call trace, and then fails with ECANCELED so that nothing stays
loaded and the next load warns again. It is built like siw.ko, out of tree against the lab
kernel's headers, and cached per kernel release and source, so it is built once.

The host hands the result to the tests in the VM through the environment: the module's path,
or why there is none (the test that needs it fails with that reason; it never skips).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from pytest_rdma.lab.prereqs import Kernel, LabError, Log

SOURCE = Path(__file__).resolve().parent / "kwarn_ko"
NAME = "pytest_rdma_kwarn"
ENV_KO = "PYTEST_RDMA_LAB_KWARN_KO"
ENV_ERROR = "PYTEST_RDMA_LAB_KWARN_ERROR"
# What insmod says when the init function refused on purpose after warning, as opposed to a
# module the kernel would not run at all (wrong vermagic, bad format), which never warns.
REFUSED = "Operation canceled"
MESSAGE = "pytest-rdma provoked warning"  # the WARN's text before the nonce (kwarn_ko/*.c)


def _source_digest() -> str:
    # The cache is keyed by the source too: an edited module is rebuilt, not served stale.
    digest = hashlib.sha256()
    for path in sorted(SOURCE.iterdir()):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def kwarn_module(kernel: Kernel, cache: Path, log: Log = print) -> Path:
    """Path to the provoker module for `kernel`, building it on first use."""
    target = cache / "kwarn" / kernel.release / _source_digest() / f"{NAME}.ko"
    if target.exists():
        return target
    if not kernel.headers.is_dir():
        raise LabError(
            f"kernel headers for {kernel.release} are missing, so the lab cannot build its "
            f"kernel-warning module; install them: apt-get install linux-headers-{kernel.release}"
        )
    log(f"lab: building {NAME}.ko for {kernel.release} (once; cached in {target.parent})")
    with tempfile.TemporaryDirectory(prefix="kwarn-build-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(SOURCE, src, ignore=shutil.ignore_patterns("__pycache__"))
        try:
            build = subprocess.run(
                ["make", "-C", str(kernel.headers), f"M={src}", "modules"], capture_output=True, text=True, check=False
            )
        except FileNotFoundError as exc:
            raise LabError(f"building {NAME}.ko needs make and gcc: apt-get install make gcc ({exc})") from exc
        built = src / f"{NAME}.ko"
        if build.returncode != 0 or not built.exists():
            tail = "\n".join((build.stdout + build.stderr).splitlines()[-20:])
            raise LabError(f"building {NAME}.ko against {kernel.headers} failed:\n{tail}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)
    return target


def guest_env(kernel: Kernel, cache: Path, log: Log = print) -> dict[str, str]:
    """What the tests in the VM are told: the module's path, or why the lab has none.

    A lab run that does not test the guard must not fail for want of kernel headers, so the
    reason travels to the one test that needs the module instead of stopping the run.
    """
    try:
        return {ENV_KO: str(kwarn_module(kernel, cache, log))}
    except LabError as exc:
        return {ENV_ERROR: str(exc)}
