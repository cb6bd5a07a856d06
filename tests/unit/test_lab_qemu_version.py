"""QEMU's version keys the lab's memos (the KVM probe's, virtio-fs'): asked once per process, not once per memo."""

from __future__ import annotations

import subprocess

import pytest

from pytest_rdma.lab import vm


def test_qemu_is_asked_its_version_once(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []

    def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        started.append(argv)
        return subprocess.CompletedProcess(argv, 0, "QEMU emulator version 7.2.22\nCopyright\n", "")

    vm._qemu_version.cache_clear()
    monkeypatch.setattr(subprocess, "run", run)
    try:
        assert vm._qemu_version() == vm._qemu_version() == "QEMU emulator version 7.2.22"
    finally:
        vm._qemu_version.cache_clear()  # the next caller asks the real QEMU
    assert started == [["qemu-system-x86_64", "--version"]]
