"""siw.ko for the lab kernel, built out of tree from Debian's linux-source.

Debian's kernel config does not enable soft-iWARP, but its sources and headers are
packaged: extracting just drivers/infiniband/sw/siw and building against the headers
takes seconds. The module is cached per kernel release, so it is built once.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from pytest_rdma.lab.prereqs import Kernel, LabError, Log, kernel_series

SIW_DIR = "drivers/infiniband/sw/siw"


def _source_tarball(kernel: Kernel) -> Path:
    series = kernel_series(kernel.release)  # "6.1.0-56-amd64" -> "6.1"
    candidates = sorted(glob.glob(f"/usr/src/linux-source-{series}.tar.*"))
    if not candidates:
        raise LabError(
            f"no /usr/src/linux-source-{series}.tar.* to build siw from; "
            f"install it: apt-get install linux-source-{series}"
        )
    return Path(candidates[-1])


def siw_module(kernel: Kernel, cache: Path, log: Log = print) -> Path:
    """Path to siw.ko for `kernel`, building it on first use."""
    target = cache / "siw" / kernel.release / "siw.ko"
    if target.exists():
        return target
    if not kernel.headers.is_dir():
        raise LabError(
            f"kernel headers for {kernel.release} are missing; "
            f"install them: apt-get install linux-headers-{kernel.release}"
        )
    tarball = _source_tarball(kernel)
    log(f"lab: building siw.ko for {kernel.release} from {tarball.name} (once; cached in {target.parent})")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="siw-build-") as tmp:
        prefix = tarball.name.split(".tar", 1)[0]  # Debian's tarball holds one top directory of its name
        subprocess.run(
            ["tar", "-xf", str(tarball), "-C", tmp, "--strip-components=1", f"{prefix}/{SIW_DIR}"], check=True
        )
        src = Path(tmp) / SIW_DIR
        build = subprocess.run(
            ["make", "-C", str(kernel.headers), f"M={src}", "CONFIG_RDMA_SIW=m", "modules"],
            capture_output=True,
            text=True,
            check=False,
        )
        if build.returncode != 0 or not (src / "siw.ko").exists():
            tail = "\n".join((build.stdout + build.stderr).splitlines()[-20:])
            raise LabError(f"building siw.ko for {kernel.release} failed:\n{tail}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / "siw.ko", target)
    log(f"lab: built siw.ko for {kernel.release} in {time.monotonic() - started:.1f} s")
    return target
