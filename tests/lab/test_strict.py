"""Strict mode on real providers, with the shipped expectations: the CI gate vendors use.

A slice of the generated suite known to deviate on each lab driver passes under --rdma-strict
with the shipped expectations file, and fails, naming the check, once one of its waivers is
removed.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from pytest_rdma.expectations import SHIPPED_DIR

REPO = Path(__file__).resolve().parents[2]

# Per lab driver: a -k slice of the suite that has waived deviations on that driver.
SLICES = {
    "rxe0": ("rxe", "ibv_modify_qp and out-of-range and RC"),
    "siw0": ("siw", "ibv_create_qp and cap-writeback and RC"),
}


def _suite_into(pytester: pytest.Pytester) -> None:
    shutil.copy(REPO / "suites" / "test_verbs.py", pytester.path / "test_verbs.py")


def _waivers_of(path: Path) -> list[str]:
    """The [[waiver]] blocks of an expectations file, each as its text."""
    text = path.read_text()
    return ["[[waiver]]" + block for block in text.split("[[waiver]]")[1:]]


@pytest.mark.parametrize("device", sorted(SLICES))
def test_strict_gate_passes_with_shipped_expectations_and_fails_without_one(
    pytester: pytest.Pytester, device: str
) -> None:
    driver, selection = SLICES[device]
    _suite_into(pytester)
    passing = pytester.runpytest_subprocess("--rdma-dev", device, "--rdma-strict", "-k", selection, "-rx")
    assert passing.ret == pytest.ExitCode.OK, passing.stdout.str()[-3000:]
    # The slice does deviate on this driver, and every deviation is waived (xfail).
    waived = [
        re.search(r"::(test_\w+)\[" + device + r"-(.*?)\]", line)
        for line in passing.stdout.lines
        if line.startswith("XFAIL")
    ]
    waived = [match for match in waived if match]
    assert waived, "the slice should have waived deviations on " + driver

    # Remove the waiver of one of them: the gate must now fail, naming exactly that check.
    stable_id = f"{waived[0].group(1)}[{waived[0].group(2)}]"
    blocks = _waivers_of(SHIPPED_DIR / f"{driver}.toml")
    kept = [block for block in blocks if f'id = "{stable_id}"' not in block]
    assert len(kept) == len(blocks) - 1
    trimmed = pytester.path / f"{driver}.toml"
    trimmed.write_text("".join(kept))
    failing = pytester.runpytest_subprocess(
        "--rdma-dev", device, "--rdma-strict", "-k", selection, "--rdma-expectations", str(trimmed)
    )
    assert failing.ret == pytest.ExitCode.TESTS_FAILED
    failing.stdout.fnmatch_lines([f"FAILED *{waived[0].group(1)}?{device}-{waived[0].group(2)}?*"])
    assert failing.stdout.str().count("FAILED ") == 1
