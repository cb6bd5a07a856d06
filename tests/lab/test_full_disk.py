"""A results disk that fills up mid-run, on purpose: one line per output, never a traceback.

The VM is root: a 64 KiB tmpfs takes the JSON results, the Allure results and the reproducers of a
slice that deviates (waived deviations of ibv_create_cq_ex on rxe, each with its reproducers). Before,
this ended in a 111-line INTERNALERROR from report/jsonfile.py after 7 checks of 34. Now each output
that fails says so once (its path and ENOSPC), the checks go on to the end, the run exits 3, and the
lines written before are readable: `pytest-rdma finish` makes a results document from them.

    ./pytest-rdma lab --dev rxe0 --results /tmp/x -- tests/lab/test_full_disk.py
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_rdma.cli import main as cli_main
from pytest_rdma.report.jsonfile import read_results

REPO = Path(__file__).resolve().parents[2]
SLICE = "ibv_create_cq_ex"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_a_full_results_disk_is_one_line_per_output_and_keeps_what_was_written(
    pytester: pytest.Pytester, device: str, small_disk: Path, tmp_path: Path
) -> None:
    ran = pytester.runpytest_subprocess(
        str(REPO / "suites"),
        *("--rdma-dev", device, "-k", SLICE, "-p", "no:xdist"),
        f"--rdma-json={small_disk / 'results.json'}",
        f"--rdma-allure={small_disk / 'allure'}",
        f"--rdma-reproducers={small_disk / 'reproducers'}",
    )
    text = ran.stdout.str() + ran.stderr.str()
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-5000:]
    assert ran.ret == 3, text[-3000:]
    said = [line for line in text.splitlines() if "cannot write" in line]
    outputs = [line.split()[1] for line in said]
    assert said and len(outputs) == len(set(outputs)), said  # one line per output that failed
    assert all(line.startswith("ERROR: --rdma-") and "No space left on device" in line for line in said), said
    assert all(str(small_disk) in line for line in said), said
    # The checks went on to the end: every collected check has a verdict in the summary.
    selected = re.search(r"(\d+) selected", text)
    checked = re.search(rf"{device} \(\w+\): (\d+) checks", text)
    assert selected is not None and checked is not None, text[-3000:]
    assert int(checked.group(1)) == int(selected.group(1)), text[-3000:]
    # What was written before is readable, and makes a document.
    lines = small_disk / "results.jsonl"
    kept = read_results(lines)
    assert 0 < len(kept["results"]) < int(selected.group(1)), len(kept["results"])
    document = tmp_path / "finished.json"
    assert cli_main(["finish", str(lines), "-o", str(document)]) == 0
    assert len(json.loads(document.read_text())["results"]) == len(kept["results"])
    for result in (small_disk / "allure").glob("*-result.json"):
        json.loads(result.read_text())  # no half-written Allure result
