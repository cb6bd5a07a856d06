"""The wheel holds everything an installed pytest-rdma runs: every module, the suite, the data files.

The package list in pyproject.toml is explicit (the suite lives outside pytest_rdma/ and ships as
pytest_rdma.suites), so a new sub-package or data file is easy to leave out; a checkout never
notices, because it runs from the source tree. This builds the wheel from a copy of the checkout
(the build writes its own files there) and compares it with the tree.
"""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# What the checkout has that no installed copy needs.
NOT_SOURCE = shutil.ignore_patterns(".venv", ".git", "results", "__pycache__", "build", "*.egg-info", "node_modules")


def build_wheel(scratch: Path) -> Path:
    """The wheel of a copy of this checkout (the build writes its own files beside the source), in scratch."""
    source = scratch / "src"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(scratch),
            str(source),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (path,) = scratch.glob("pytest_rdma-*.whl")
    return path


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    return zipfile.ZipFile(build_wheel(tmp_path_factory.mktemp("wheel")))


def shipped(tree: Path, pattern: str, into: str) -> set[str]:
    return {
        f"{into}/{path.relative_to(tree).as_posix()}" for path in tree.glob(pattern) if "__pycache__" not in path.parts
    }


def test_every_module_and_the_suite_are_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    wanted = shipped(REPO / "pytest_rdma", "**/*.py", "pytest_rdma") | shipped(
        REPO / "suites", "*.py", "pytest_rdma/suites"
    )
    assert "pytest_rdma/suites/test_verbs.py" in wanted  # the scan found the suite at all
    missing = sorted(wanted - names)
    assert not missing, f"modules the wheel leaves out (add their package to pyproject's packages): {missing}"


def test_every_data_file_is_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    data = {
        path
        for path in shipped(REPO / "pytest_rdma", "**/*", "pytest_rdma")
        if not path.endswith((".py", ".pyc")) and (REPO / path).is_file()
    }
    assert {"pytest_rdma/expectations/rxe.toml", "pytest_rdma/expectations/siw.toml"} <= data
    missing = sorted(data - names)
    assert not missing, f"data files the wheel leaves out (add them to pyproject's package-data): {missing}"


def test_the_wheel_registers_the_plugin_and_the_command(wheel: zipfile.ZipFile) -> None:
    (entry_points,) = [name for name in wheel.namelist() if name.endswith(".dist-info/entry_points.txt")]
    parser = configparser.ConfigParser()
    parser.read_string(wheel.read(entry_points).decode())
    assert parser["pytest11"]["rdma"] == "pytest_rdma.plugin"
    assert parser["console_scripts"]["pytest-rdma"] == "pytest_rdma.cli:main"
