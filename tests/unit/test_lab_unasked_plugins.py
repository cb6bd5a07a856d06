"""The lab's runs leave out the venv's plugins that nothing of the run asks for (lab/guest.py):
allure-pytest without --alluredir, hypothesis's plugin without exploration or a hypothesis option.
What asks: the run's arguments, PYTEST_ADDOPTS, PYTEST_PLUGINS, the exploration setting, the pytest
sections of the ini files in the working directory (not a pyproject.toml's dependency list)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_rdma.lab.guest import unasked_plugins, without_unasked_plugins

BOTH = ["-p", "no:allure_pytest", "-p", "no:hypothesispytest"]
LAB_RUN = ["python", "-m", "pytest", "-p", "no:cacheprovider", "--rdma-dev=rxe0", "--rdma-allure={scratch}/allure"]


def test_a_lab_run_that_asks_for_neither_leaves_both_out(tmp_path: Path) -> None:
    # --rdma-allure is ours (allure-python-commons), not allure-pytest's --alluredir
    assert unasked_plugins(LAB_RUN, {}, tmp_path) == BOTH


def test_they_go_right_after_the_cache_provider_so_the_users_arguments_stay_last(tmp_path: Path) -> None:
    argv = without_unasked_plugins([*LAB_RUN, "-k", "x"], {}, tmp_path)
    assert argv == [*LAB_RUN[:5], *BOTH, *LAB_RUN[5:], "-k", "x"]


@pytest.mark.parametrize(
    ("args", "env", "kept"),
    [
        (["--alluredir=out"], {}, "allure_pytest"),
        (["--allure-severities=critical"], {}, "allure_pytest"),
        ([], {"PYTEST_ADDOPTS": "--alluredir out"}, "allure_pytest"),
        (["-p", "allure_pytest"], {}, "allure_pytest"),
        (["--rdma-explore=30"], {}, "hypothesispytest"),
        (["--hypothesis-show-statistics"], {}, "hypothesispytest"),
        ([], {"PYTEST_RDMA_EXPLORE": "60"}, "hypothesispytest"),
        ([], {"PYTEST_PLUGINS": "hypothesis.extra.pytestplugin"}, "hypothesispytest"),
    ],
)
def test_what_the_run_asks_for_is_kept(args: list[str], env: dict[str, str], kept: str, tmp_path: Path) -> None:
    left_out = unasked_plugins([*LAB_RUN, *args], env, tmp_path)
    assert f"no:{kept}" not in left_out and len(left_out) == 2


def test_an_empty_exploration_setting_asks_for_nothing(tmp_path: Path) -> None:
    assert unasked_plugins(LAB_RUN, {"PYTEST_RDMA_EXPLORE": ""}, tmp_path) == BOTH


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\naddopts = --alluredir=out\n"),
        ("tox.ini", "[tox]\nenvlist = py311\n[pytest]\naddopts = --alluredir out\n"),
        ("setup.cfg", "[tool:pytest]\naddopts = --alluredir out\n"),
        ("pyproject.toml", '[project]\nname = "x"\n[tool.pytest.ini_options]\naddopts = ["--alluredir", "out"]\n'),
    ],
)
def test_an_ini_files_pytest_section_asks(name: str, text: str, tmp_path: Path) -> None:
    (tmp_path / name).write_text(text)
    assert unasked_plugins(LAB_RUN, {}, tmp_path) == ["-p", "no:hypothesispytest"]


def test_a_dependency_list_or_another_tools_section_asks_for_nothing(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\ndependencies = ["hypothesis", "allure-pytest"]\n[tool.ruff]\nexclude = ["alluredir"]\n'
        '[tool.pytest.ini_options]\naddopts = ["-p", "pytester"]\n'
    )
    (tmp_path / "tox.ini").write_text("[testenv]\ncommands = pytest --alluredir out --hypothesis-seed 1\n")
    assert unasked_plugins(LAB_RUN, {}, tmp_path) == BOTH


def test_pytest_accepts_the_options_and_runs_without_those_plugins(tmp_path: Path) -> None:
    """The names are those the plugins' entry points register, and xdist hands the options to its
    workers (`-p no:NAME` of a name that is no plugin's is accepted silently, so the loaded plugins
    are listed to see them gone; a blocked one is listed with None)."""
    (tmp_path / "test_x.py").write_text(
        "def test_x(pytestconfig):\n"
        "    names = {name for name, plugin in pytestconfig.pluginmanager.list_name_plugin() if plugin}\n"
        "    assert 'allure_pytest' not in names and 'hypothesispytest' not in names\n"
    )
    run = subprocess.run(
        # -n 1, as the lab runs: the test runs in the xdist worker, which must leave them out too
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *BOTH, "-n", "1", "-q", str(tmp_path / "test_x.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    loaded = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(tmp_path / "test_x.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert loaded.returncode == 1  # without the options both are loaded here: the names are the live ones
