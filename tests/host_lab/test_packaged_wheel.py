"""The wheel, installed into a fresh environment, runs the suite in an empty directory (issue 11).

Runs on the host and boots the lab VM twice (`pytest-rdma selftest` runs it with the other
host-side lab tests). On the host: build the wheel from a copy of the checkout, make a fresh
venv (no system site-packages, so neither the checkout nor anything this machine installed
earlier is visible) and pip-install the wheel into it from the package index. In the VM, the
lab's own runner uses that venv's Python, in an empty directory:
- `pytest --rdma-dev=rxe0`, no test path: the plugin collects its packaged suite, all of it;
- `pytest --pyargs pytest_rdma.suites --rdma-dev=rxe0 -k ...`: the same suite named as a package.
The venv and the empty directory live in the results directory, which the VM shares read-write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "unit"))  # the wheel's build, as the wheel's own test makes it

from test_wheel import build_wheel  # noqa: E402

from pytest_rdma.lab import LabRequest  # noqa: E402
from pytest_rdma.lab import run as lab_run  # noqa: E402

GOLDEN_IDS = REPO / "tests" / "unit" / "data" / "case_ids.txt"
SLICE = "ibv_alloc_pd or ibv_query_port"


def run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed from the package index; its Python."""
    wheel = build_wheel(tmp_path_factory.mktemp("wheel"))
    shared = tmp_path_factory.mktemp("lab")
    # The distro's Python, as the bootstrap uses: the venv must not see this one's site-packages.
    run(["/usr/bin/python3", "-m", "venv", str(shared / "venv")])
    python = shared / "venv" / "bin" / "python"
    run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)])
    return python


def lab(python: Path, name: str, pytest_args: list[str]) -> tuple[int, dict]:
    results = python.parents[2] / name
    empty = results / "empty"
    empty.mkdir(parents=True)
    cache = {"cache": Path(os.environ["PYTEST_RDMA_LAB_CACHE"])} if os.environ.get("PYTEST_RDMA_LAB_CACHE") else {}
    request = LabRequest(
        devices=["rxe0"],
        pytest_args=pytest_args,
        report_args=["--rdma-json={results}/results.json"],
        results=results,
        install=True,
        timeout=2400.0,
        plan_extra={"python": str(python), "cwd": str(empty)},
        **cache,
    )
    code = lab_run(request)
    document = results / "rxe0" / "results.json"
    assert document.exists(), f"the run wrote no results (lab exit {code}); see {results}/lab-console.log"
    assert not [p for p in empty.iterdir() if p.name != "results"], "the run left files in the user's directory"
    return code, json.loads(document.read_text())


def test_the_installed_wheel_runs_the_whole_suite_with_no_test_path(installed: Path) -> None:
    code, document = lab(installed, "no-path", [])
    ids = {r["stable_id"] for r in document["results"]}
    # The golden file lists every stable id the catalogue expands to.
    expected = {line for line in GOLDEN_IDS.read_text().splitlines() if line and not line.startswith("#")}
    assert ids == expected, (
        f"not run: {sorted(expected - ids)[:10]}; not in the catalogue: {sorted(ids - expected)[:10]}"
    )
    assert document["summary"]["rxe"], "no result is about rxe"
    # The packaged suite's module (the venv cannot see a checkout: no system site-packages, an empty cwd).
    assert {r["nodeid"].split("::")[0].rsplit("/", 1)[-1] for r in document["results"]} == {"test_verbs.py"}
    assert code in (0, 1), f"the lab run failed to run (exit {code})"


def test_the_installed_wheel_runs_by_package_name(installed: Path) -> None:
    code, document = lab(installed, "pyargs", ["--pyargs", "pytest_rdma.suites", "-k", SLICE])
    verbs = {r["verb"] for r in document["results"]}
    assert verbs == {"ibv_alloc_pd", "ibv_query_port"}
    assert code == 0, f"the slice did not pass on rxe0 (exit {code}): {document['summary']}"
