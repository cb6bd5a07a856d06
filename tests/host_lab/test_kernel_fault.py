"""A guest kernel panic during a check costs that check, not the run.

Runs on the host and boots the lab VM twice (235 s under TCG with two other lab VMs on 2 cores):
`pytest-rdma selftest` runs it after the in-VM lab tests. The lab runs a suite of three checks on
rxe0 whose second one panics the guest kernel for real (it writes `c` to /proc/sysrq-trigger, as
root in the VM; only where the lab's runner set its running file, so never on the host), and the
test checks:
- the panicking check is recorded once, a deviation whose observation is the kernel's own report from the
  console (kind "panic", its lines from "sysrq: Trigger a crash" to the end of the panic);
- the check before it and the check after it are recorded once each: the lab booted again and went on;
- results.json, JUnit and the Allure results of rxe0 each hold the three, and the lab exits 1 (a deviation).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEVICE = "rxe0"  # rxe needs no siw.ko build: the cheapest lab boot
WAIT_S = 900.0  # two boots and three checks under TCG, with other VMs on the machine

SUITE = """
import os



def test_a_before(rdma_dut):
    assert rdma_dut.name == "rxe0"


def test_b_panics_the_kernel(rdma_dut):
    # Only inside the lab VM, as root there: its runner names where the lab's marks go (the running file's
    # variable is taken out of the environment once the plugin has it: report/resume.py).
    assert os.environ.get("PYTEST_RDMA_LAB_MARKS"), "not in the lab: this test panics only the lab's guest kernel"
    with open("/proc/sysrq-trigger", "w") as trigger:
        trigger.write("c")


def test_c_after(rdma_dut):
    assert rdma_dut.name == "rxe0"
"""


def test_a_kernel_panic_costs_the_check_in_progress_not_the_run(tmp_path: Path) -> None:
    suite = tmp_path / "test_panic.py"
    suite.write_text(SUITE)
    results = tmp_path / "results"
    argv = [sys.executable, "-m", "pytest_rdma.cli", "lab", "--no-html", "--no-install", "--results", str(results)]
    argv += ["--dev", DEVICE, "--timeout", str(WAIT_S)]
    if os.environ.get("PYTEST_RDMA_LAB_CACHE"):
        argv += ["--cache", os.environ["PYTEST_RDMA_LAB_CACHE"]]
    argv += ["--", str(suite)]
    started = time.monotonic()
    lab = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=WAIT_S + 60, check=False)
    took = time.monotonic() - started
    said = lab.stdout + lab.stderr
    assert lab.returncode == 1, said[-4000:]
    assert "booting again (1 of at most 5)" in said
    run_dir = results / DEVICE
    records = json.loads((run_dir / "results.json").read_text())["results"]
    by_test = {record["nodeid"].rsplit("::", 1)[1].split("[")[0]: record for record in records}  # test_a_before[rxe0]
    assert sorted(by_test) == ["test_a_before", "test_b_panics_the_kernel", "test_c_after"], said[-4000:]
    assert len(records) == 3, "each check once"
    panicked = by_test["test_b_panics_the_kernel"]
    assert panicked["outcome"] == "deviates" and panicked["driver"] == "rxe"
    assert panicked["observation"]["kernel_fault"] == "panic"
    console = panicked["observation"]["console"]
    assert console[0] == "sysrq: Trigger a crash" and "Kernel panic - not syncing: sysrq triggered crash" in console
    assert by_test["test_a_before"]["outcome"] == by_test["test_c_after"]["outcome"] == "conforms"
    junit = (run_dir / "junit.xml").read_text()
    assert junit.count("<testcase") == 3 and "sysrq triggered crash" in junit
    allure = [json.loads(path.read_text()) for path in (run_dir / "allure").glob("*-result.json")]
    assert len(allure) == 3, [result["fullName"] for result in allure]
    for test in by_test:
        assert sum(test in result["fullName"] for result in allure) == 1, [result["fullName"] for result in allure]
    print(f"lab run with one guest kernel panic: {took:.0f} s, exit {lab.returncode}")
