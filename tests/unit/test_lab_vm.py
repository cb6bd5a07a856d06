"""The lab's VM helpers that cut its cold start: 9p once virtio-fs is known to fail, bytecode
caches written on the host (the VM's root is read-only). Pure host logic, no VM booted."""

from __future__ import annotations

import fnmatch
import importlib.util
import sys
from pathlib import Path

import pytest

from pytest_rdma.lab import vm
from pytest_rdma.lab.prereqs import Kernel


@pytest.fixture
def fixed_qemu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vm, "_qemu_version", lambda: "QEMU emulator version 7.2.0")


def test_force_9p_reaches_vng() -> None:
    kernel = Kernel("6.1.0-56-amd64", Path("/boot/vmlinuz-6.1.0-56-amd64"))
    assert "--force-9p" in vm._vng_argv(Path("vng"), kernel, False, [], "true", 1, "512M", force_9p=True)
    assert "--force-9p" not in vm._vng_argv(Path("vng"), kernel, False, [], "true", 1, "512M")


def test_a_fallback_seen_once_forces_9p_next_time(tmp_path: Path, fixed_qemu: None) -> None:
    console = tmp_path / "lab-console.log"
    console.write_text(
        "virtme: waiting for virtiofsd to start\nvirtme-run: failed to start virtiofsd, "
        "fallback to 9pProbing EDD (edd=off to disable)... ok\n"
    )
    assert not vm.virtiofs_fails(Path("/venv/bin/vng"), tmp_path)
    vm.remember_virtiofs(Path("/venv/bin/vng"), tmp_path, console)
    assert vm.virtiofs_fails(Path("/venv/bin/vng"), tmp_path)
    # Another vng (another environment, maybe with a working virtiofsd) is tried afresh.
    assert not vm.virtiofs_fails(Path("/other/bin/vng"), tmp_path)


def test_a_boot_without_fallback_remembers_nothing(tmp_path: Path, fixed_qemu: None) -> None:
    console = tmp_path / "lab-console.log"
    console.write_text("[    0.000000] Linux version 6.1.0-56-amd64\n")
    vm.remember_virtiofs(Path("/venv/bin/vng"), tmp_path, console)
    assert not vm.virtiofs_fails(Path("/venv/bin/vng"), tmp_path)
    assert not (tmp_path / "virtiofs-probe.json").exists()


def test_precompile_writes_caches_even_when_python_would_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "mod.py").write_text("VALUE = 1\n")
    single = tmp_path / "single.py"
    single.write_text("VALUE = 2\n")
    vm.precompile([package, single, tmp_path / "no-such-path", Path("(-RC-)")])
    for source in (package / "mod.py", single):
        assert Path(importlib.util.cache_from_source(str(source))).is_file()


def test_warm_rewrite_caches_writes_pytests_own_caches_despite_dont_write_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The VM's pytest runs read these; without them each run rewrote and compiled every module again.
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_probe.py").write_text("def test_probe():\n    assert 1\n")
    seconds = vm.warm_rewrite_caches(sys.executable, suite, str(tmp_path))
    written = list((suite / "__pycache__").glob("test_probe.*-pytest-*.pyc"))
    assert len(written) == 1 and seconds > 0


def test_the_guest_boots_without_drivers_for_emulated_hardware_it_does_not_use() -> None:
    kernel = Kernel("6.1.0-56-amd64", Path("/boot/vmlinuz-6.1.0-56-amd64"))
    argv = vm._vng_argv(Path("vng"), kernel, False, [], "true", 2, "1G")
    appended = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--append"]
    assert appended[0] == "modprobe.blacklist=" + ",".join(vm.UNUSED_GUEST_DRIVERS)
    assert "ahci" in vm.UNUSED_GUEST_DRIVERS and "sr_mod" in vm.UNUSED_GUEST_DRIVERS
    # Never a module the lab loads, or one rxe's checksum or rdma_cm needs.
    needed = {"rdma_rxe", "siw", "ib_core", "ib_uverbs", "rdma_ucm", "rdma_cm", "iw_cm", "ib_cm", "libcrc32c"}
    assert not needed & set(vm.UNUSED_GUEST_DRIVERS)
    assert not any(name.startswith(("crc32", "virtio", "9p", "fuse")) for name in vm.UNUSED_GUEST_DRIVERS)


def test_a_tcg_guest_skips_the_kernels_timer_check_and_a_kvm_guest_keeps_it() -> None:
    """Under TCG on a loaded machine the IO-APIC timer test panicked the boot ("IO-APIC + timer doesn't work")."""
    kernel = Kernel("6.1.0-56-amd64", Path("/boot/vmlinuz-6.1.0-56-amd64"))

    def appended(kvm: bool) -> list[str]:
        argv = vm._vng_argv(Path("vng"), kernel, kvm, [], "true", 2, "1G")
        return [argv[i + 1] for i, arg in enumerate(argv) if arg == "--append"]

    tcg = vm._vng_argv(Path("vng"), kernel, False, [], "true", 2, "1G")
    assert "--disable-kvm" in tcg and "no_timer_check" in appended(False)
    assert "no_timer_check" not in appended(True)
    assert tcg[-2:] == ["--exec", "true"]  # the kernel option does not take the command's place


def test_the_lab_boots_the_distros_default_kernel_when_a_newer_one_is_installed_beside_it(monkeypatch) -> None:
    """Debian 12's archive carries 6.12 beside the default 6.1: installing it must not change a plain lab run."""
    from pytest_rdma.lab import prereqs

    images = ["/boot/vmlinuz-6.1.0-56-amd64", "/boot/vmlinuz-6.12.117+deb12-amd64"]

    def glob(pattern: str) -> list[str]:
        if pattern.startswith("/boot/vmlinuz-"):
            return [image for image in images if fnmatch.fnmatch(image, pattern)]
        return [f"{pattern}.ko"]  # every kernel ships rdma_rxe

    monkeypatch.setattr(prereqs.glob, "glob", glob)
    monkeypatch.setattr(prereqs, "distro_default_release", lambda: "6.1.0-56-amd64")
    assert prereqs.find_kernel() == prereqs.Kernel("6.1.0-56-amd64", Path(images[0]))
    monkeypatch.setattr(prereqs, "distro_default_release", lambda: None)  # no metapackage: the newest
    assert prereqs.find_kernel() == prereqs.Kernel("6.12.117+deb12-amd64", Path(images[1]))


def test_precompile_passes_over_an_argument_too_long_to_be_a_path(tmp_path: Path) -> None:
    # A long -k expression reaches precompile as a would-be path; the lab once died on it (File name too long).
    vm.precompile([Path("ibv_alloc_pd or " * 40), tmp_path])
