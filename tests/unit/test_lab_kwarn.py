"""The lab's kernel-warning module: built once per kernel and source, or a reason the test can give.

Builds against the lab kernel's headers when this host has them (as the lab does); loading it
happens only in the lab (tests/lab/test_robustness.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_rdma.lab import kwarn, prereqs
from pytest_rdma.lab.prereqs import Kernel, LabError


class NoHeaders(Kernel):
    @property
    def headers(self) -> Path:
        return Path("/nonexistent/linux-headers")


def test_missing_headers_reach_the_test_as_a_reason(tmp_path: Path) -> None:
    kernel = NoHeaders("6.1.0-99-amd64", Path("/boot/vmlinuz-6.1.0-99-amd64"))
    with pytest.raises(LabError, match=r"apt-get install linux-headers-6\.1\.0-99-amd64"):
        kwarn.kwarn_module(kernel, tmp_path)
    env = kwarn.guest_env(kernel, tmp_path, log=lambda _: None)
    assert list(env) == [kwarn.ENV_ERROR] and "linux-headers-6.1.0-99-amd64" in env[kwarn.ENV_ERROR]


def test_a_cached_module_is_not_rebuilt(tmp_path: Path) -> None:
    kernel = NoHeaders("6.1.0-99-amd64", Path("/boot/vmlinuz-6.1.0-99-amd64"))
    cached = tmp_path / "kwarn" / kernel.release / kwarn._source_digest() / f"{kwarn.NAME}.ko"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"built earlier")
    # No headers, so a rebuild would fail: the cache answers first.
    assert kwarn.guest_env(kernel, tmp_path) == {kwarn.ENV_KO: str(cached)}


def test_edited_source_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "Kbuild").write_text("obj-m += x.o\n")
    monkeypatch.setattr(kwarn, "SOURCE", source)
    before = kwarn._source_digest()
    (source / "Kbuild").write_text("obj-m += y.o\n")
    assert kwarn._source_digest() != before


def lab_kernel_with_headers() -> Kernel:
    kernel = prereqs.find_kernel()
    if kernel is None or not kernel.headers.is_dir():
        pytest.skip("no lab kernel with headers on this host (the lab installs them: pytest-rdma lab)")
    return kernel


def test_module_builds_for_the_lab_kernel_and_carries_the_nonce_parameter(tmp_path: Path) -> None:
    kernel = lab_kernel_with_headers()
    built = kwarn.kwarn_module(kernel, tmp_path, log=lambda _: None)
    info = subprocess.run(["modinfo", "-F", "vermagic", str(built)], capture_output=True, text=True, check=True)
    assert info.stdout.split()[0] == kernel.release
    params = subprocess.run(["modinfo", "-F", "parm", str(built)], capture_output=True, text=True, check=True)
    assert params.stdout.startswith("nonce:")
    # A GPL-compatible licence, or the kernel refuses it the GPL-only symbols and taints it as proprietary.
    licence = subprocess.run(["modinfo", "-F", "license", str(built)], capture_output=True, text=True, check=True)
    assert licence.stdout.strip() == "Dual BSD/GPL"
