"""prereqs.missing_packages asks dpkg once for every package (lab/prereqs.py): the same answer as
asking for each, in one process instead of some 25 before every boot."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from pytest_rdma.lab import prereqs


def test_only_installed_lines_count() -> None:
    listing = (
        "gcc\tinstall ok installed\n"
        "old-tool\tdeinstall ok config-files\n"  # removed, its configuration kept
        "half\tinstall ok half-configured\n"
        "held\thold ok installed\n"  # held: read as missing, as the one-per-package query read it
        "\n"
    )
    assert prereqs.installed_names(listing) == {"gcc"}


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian host: no dpkg")
def test_one_query_answers_as_one_per_package() -> None:
    asked = (
        *prereqs.BASE_PACKAGES,
        *prereqs.SIW_BUILD_PACKAGES,
        "dpkg",  # installed on every Debian host
        "libc6:amd64",  # an architecture-qualified name
        "pytest-rdma-no-such-package",  # dpkg has never heard of it: exit 1, the others still listed
    )

    def one_by_one(package: str) -> bool:
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
        return "install ok installed" not in status.stdout

    missing = prereqs.missing_packages(asked)
    assert missing == [package for package in asked if one_by_one(package)]
    assert "pytest-rdma-no-such-package" in missing and "dpkg" not in missing


def test_nothing_asked_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: pytest.fail("dpkg-query ran"))
    assert prereqs.missing_packages(()) == []
