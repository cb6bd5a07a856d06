"""The kernel matrix's pure parts: the releases named, `--kernel all`, where results go, the table."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_rdma import lab
from pytest_rdma.lab import matrix, prereqs
from pytest_rdma.lab.prereqs import LabError
from pytest_rdma.report.jsonfile import SCHEMA_VERSION

OLD, NEW = "6.1.0-56-amd64", "6.12.117+deb12-amd64"


def test_releases_keep_the_order_given_once_each() -> None:
    assert matrix.releases([NEW, OLD, NEW], []) == [NEW, OLD]
    assert matrix.releases([f"{OLD},{NEW}"], []) == [OLD, NEW]


def test_all_is_every_installed_release_and_mixes_with_named_ones() -> None:
    assert matrix.releases(["all"], [OLD, NEW]) == [OLD, NEW]
    assert matrix.releases([NEW, "all"], [OLD, NEW]) == [NEW, OLD]


@pytest.mark.parametrize("bad", ["", "../etc", "6", "latest", "6.1.0 -56"])
def test_a_name_that_is_no_release_is_one_error_naming_it(bad: str) -> None:
    with pytest.raises(LabError, match=r"is not a kernel release; give one as uname -r prints it"):
        matrix.releases([bad], [OLD])


def test_all_with_nothing_installed_says_what_to_do() -> None:
    with pytest.raises(LabError, match="--kernel all found no installed kernel that ships rdma_rxe"):
        matrix.releases(["all"], [])


def _kernel(boot: Path, modules: Path, release: str, rxe: bool) -> None:
    (boot / f"vmlinuz-{release}").write_bytes(b"")
    if rxe:
        where = modules / release / "kernel/drivers/infiniband/sw/rxe"
        where.mkdir(parents=True)
        (where / "rdma_rxe.ko.xz").write_bytes(b"")


def test_all_finds_installed_kernels_with_rxe_oldest_first(tmp_path: Path) -> None:
    boot, modules = tmp_path / "boot", tmp_path / "modules"
    boot.mkdir()
    _kernel(boot, modules, NEW, rxe=True)
    _kernel(boot, modules, "6.1.0-9-amd64", rxe=True)
    _kernel(boot, modules, OLD, rxe=True)
    _kernel(boot, modules, "6.5.0-1-cloud-amd64", rxe=False)  # an image whose modules lack rxe
    (modules / "6.9.0-1-amd64" / "kernel/drivers/infiniband/sw/rxe").mkdir(parents=True)  # modules, no image
    assert matrix.installed_releases(boot, modules) == ["6.1.0-9-amd64", OLD, NEW]


def test_each_release_writes_below_its_own_directory() -> None:
    assert matrix.results_of(Path("results"), NEW) == Path("results") / NEW
    # Each device's run then writes results/<release>/<device>/ (lab.guest: results / label).


def test_a_release_brings_its_own_packages() -> None:
    assert prereqs.kernel_series(NEW) == "6.12" and prereqs.kernel_series(OLD) == "6.1"
    assert prereqs.release_packages(NEW, want_siw=True) == (
        f"linux-image-{NEW}",
        f"linux-headers-{NEW}",
        "linux-source-6.12",
    )
    assert prereqs.release_packages(OLD, want_siw=False) == (f"linux-image-{OLD}", f"linux-headers-{OLD}")


def _results(directory: Path, driver: str, outcomes: list[str]) -> None:
    directory.mkdir(parents=True)
    records = [{"driver": driver, "outcome": outcome, "stable_id": f"t[{i}]"} for i, outcome in enumerate(outcomes)]
    (directory / "results.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION, "results": records}))


def test_outcomes_are_counted_per_driver_of_a_release(tmp_path: Path) -> None:
    _results(tmp_path / NEW / "rxe0", "rxe", ["conforms", "conforms", "deviates"])
    _results(tmp_path / NEW / "siw0", "siw", ["unsupported"])
    _results(tmp_path / OLD / "rxe0", "rxe", ["waived"])  # another release's
    assert matrix.outcome_counts(tmp_path / NEW) == {
        "rxe": Counter({"conforms": 2, "deviates": 1}),
        "siw": Counter({"unsupported": 1}),
    }


def test_the_table_has_a_row_per_kernel_and_driver_and_one_line_for_a_release_that_did_not_run() -> None:
    runs = [
        matrix.KernelRun(OLD, 0, counts={"rxe": Counter({"conforms": 12, "deviates": 3}), "siw": Counter(conforms=9)}),
        matrix.KernelRun(
            "6.13.0-1-amd64", lab.EXIT_USAGE, ["building siw.ko for 6.13.0-1-amd64 failed:\nsiw_main.c:1: error"]
        ),
        matrix.KernelRun(NEW, 1, counts={"rxe": Counter({"conforms": 14, "deviates": 1})}),
    ]
    assert matrix.table(runs) == [
        "kernel                driver  conforms  deviates",
        "6.1.0-56-amd64        rxe           12         3",
        "6.1.0-56-amd64        siw            9         0",
        "6.13.0-1-amd64        -       did not run: building siw.ko for 6.13.0-1-amd64 failed:",
        "6.12.117+deb12-amd64  rxe           14         1",
    ]


def test_the_worst_exit_code_is_a_release_that_could_not_run() -> None:
    ran, failed, missing = (
        matrix.KernelRun(OLD, 0),
        matrix.KernelRun(NEW, 1),
        matrix.KernelRun("x", lab.EXIT_LAB_FAILED),
    )
    assert matrix.worst([ran]) == 0
    assert matrix.worst([ran, failed]) == 1
    assert matrix.worst([failed, missing, ran]) == lab.EXIT_LAB_FAILED


def test_without_kernel_the_lab_boots_the_distro_default_not_the_newest_installed() -> None:
    """Installing 6.12 for a matrix must not move every plain lab run off Debian's default kernel."""
    assert prereqs.distro_default_release("linux-image-6.1.0-56-amd64 (= 6.1.192-2)") == OLD
    assert prereqs.distro_default_release(f"linux-image-{NEW} (= 6.12.117-1~deb12u1)") == NEW
    assert prereqs.distro_default_release("") is None
