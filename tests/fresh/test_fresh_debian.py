"""The README's first command on a Debian 12 machine that has nothing installed (fresh_debian.py).

CI's machine already has what the lab might forget to install, so only this proves the lab's
install steps: with busybox-static missing from them, the lab VM cannot boot and this test fails
quoting "virtme-run: initramfs is needed, and no busybox was found". Runs as root (debootstrap,
chroot, mount namespaces); `pytest-rdma selftest` runs it beside its host and lab steps, its output
printed when it ends (--no-fresh skips it). Measured
on 2 cores under TCG: 8 minutes with empty download caches, 7 with warm ones, 11 inside a busy CI run.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import fresh_debian
import pytest

from pytest_rdma.lab import vm

DEVICES = ("rxe0", "siw0")
MIN_FREE_GIB = 4  # the root grows to about 2 GiB (qemu, a kernel, its sources and headers, node)


def require_a_machine_maker() -> None:
    """Fail (not skip: a skipped proof proves nothing) when this host cannot make the machine."""
    if os.geteuid() != 0:
        pytest.fail(
            "the fresh-machine test needs root (debootstrap, chroot, mount namespaces); "
            "run it as root, or leave it out with 'pytest-rdma selftest --no-fresh'"
        )
    for program in ("debootstrap", "unshare", "chroot", "git"):
        if shutil.which(program, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None:
            pytest.fail(f"{program} is not installed (apt-get install {program}; selftest installs debootstrap)")
    free = shutil.disk_usage("/var/tmp").free >> 30
    if free < MIN_FREE_GIB:
        pytest.fail(f"only {free} GiB free under /var/tmp; the fresh machine needs about {MIN_FREE_GIB} GiB")


def what_went_wrong(run: fresh_debian.FreshRun) -> str:
    """The lines of the run's output that explain a failure, then its last lines."""
    lines = [line.split("] ", 1)[-1] for line in run.output().splitlines()]
    # apt's "debconf: delaying package configuration, since apt-utils is not installed" is no failure.
    explaining = vm.explaining_lines([line for line in lines if not line.startswith("debconf: ")])
    return "\n".join(
        [
            f"the README's command exited {run.code} on a fresh Debian 12 (log: {run.log})",
            "what its output says went wrong:",
            *(f"  {line}" for line in explaining),
            "its last lines:",
            *(f"  {line}" for line in lines[-30:]),
        ]
    )


def print_timings(run: fresh_debian.FreshRun) -> None:
    for label, seconds in run.timings.items():
        print(f"fresh: {label}: {seconds:.1f} s")


def test_the_readme_first_command_works_on_a_fresh_debian_12(tmp_path: Path) -> None:
    require_a_machine_maker()
    collected = tmp_path / "results"
    run = fresh_debian.fresh_run(log=tmp_path / "fresh-debian.log", collect=collected)
    print_timings(run)
    assert not run.root.exists() and not fresh_debian.mounts_under(run.root)
    assert run.code == 0, what_went_wrong(run)
    for device in DEVICES:
        results = collected / device / "results.json"
        assert results.is_file(), f"no {results.name} for {device}: {what_went_wrong(run)}"
        records = json.loads(results.read_text())["results"]
        assert records, f"{device}'s results.json holds no results"
        assert {record.get("device") for record in records} == {device}
    report = collected / "allure-report" / "index.html"
    assert report.is_file() and report.stat().st_size > 0, f"no Allure HTML report: {what_went_wrong(run)}"


@pytest.mark.timeout(300)  # a process that survived would hold the output open: fail, not hang
def test_a_run_killed_at_its_time_limit_leaves_no_mount_and_no_process(tmp_path: Path) -> None:
    """Cleanup does not depend on the command ending: the namespace goes, and everything with it."""
    require_a_machine_maker()
    root, _ = fresh_debian.make_root(Path("/var/tmp"))
    try:
        # A child that ignores SIGTERM and outlives its shell, as a stuck QEMU would.
        command = ["sh", "-c", "trap '' TERM; sleep 600 & echo started; wait"]
        code = fresh_debian.run_command(root, command, tmp_path / "killed.log", timeout=5, cwd="/")
        assert code is None  # killed at its limit
        assert "started" in (tmp_path / "killed.log").read_text()
        assert fresh_debian.mounts_under(root) == []
        assert fresh_debian.processes_in(root) == []
    finally:
        fresh_debian.remove_root(root)
    assert not root.exists()
