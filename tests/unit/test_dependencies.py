"""The plugin's runtime dependencies are bounded on both sides, and tox tests the lower bounds.

A plugin that allows any future pytest breaks its users' CI on pytest's next major release;
lower bounds nobody runs are guesses. pyproject.toml and tox.ini's "oldest" environment must agree.
"""

from __future__ import annotations

import configparser
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
PYTEST_FAMILY = ("pytest", "pytest-xdist", "pytest-timeout", "execnet")


def requirements() -> dict[str, Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    parsed = [Requirement(text) for text in project["dependencies"]]
    return {r.name: r for r in parsed if r.marker is None}


def test_the_pytest_family_is_bounded_above_and_below() -> None:
    found = requirements()
    for name in PYTEST_FAMILY:
        operators = {spec.operator for spec in found[name].specifier}
        assert ">=" in operators and "<" in operators, f"{name}: give a lower and an upper bound ({found[name]})"


def test_tox_oldest_runs_the_lower_bounds() -> None:
    tox = configparser.ConfigParser()
    tox.read(REPO / "tox.ini")
    pinned = {Requirement(line.strip()) for line in tox["testenv:oldest"]["deps"].split("\n") if line.strip()}
    by_name = {r.name: r for r in pinned}
    for name, requirement in requirements().items():
        if name not in PYTEST_FAMILY:
            continue
        (lower,) = [Version(spec.version) for spec in requirement.specifier if spec.operator == ">="]
        (oldest,) = [spec.version for spec in by_name[name].specifier]
        assert Version(oldest.rstrip(".*")) == lower, f"tox's oldest runs {name} {oldest}, pyproject allows >={lower}"


def test_the_installed_releases_are_in_the_tested_range() -> None:
    from importlib.metadata import version

    for name in PYTEST_FAMILY:
        installed = Version(version(name))
        assert installed in requirements()[name].specifier, (
            f"{name} {installed} is outside the range pyproject.toml allows ({requirements()[name].specifier}): "
            "test it, then move the bound"
        )


def test_every_extra_is_bounded_above_and_below() -> None:
    """The extras too (lab, kcidb, dev): a tool's next major release is tried before it is allowed."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    loose = [
        f"{extra}: {text}"
        for extra, texts in extras.items()
        for text in texts
        if not {">=", "<"} <= {spec.operator for spec in Requirement(text).specifier}
    ]
    assert not loose, f"give each a lower and an upper bound: {loose}"


def test_the_lab_installs_what_its_allure_output_and_the_report_tests_need() -> None:
    """The lab writes Allure results by default (--rdma-allure), and its report test runs allure-pytest beside
    ours: the bootstrap installs the `allure` extra, whose allure-python-commons, and allure-pytest, are in
    the environment the lab VM runs (the host's, shared)."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {extra: {Requirement(text).name for text in texts} for extra, texts in extras.items()}
    assert "allure-python-commons" in names["allure"]
    assert {"allure-python-commons", "allure-pytest"} <= names["dev"]
    bootstrap = (REPO / "pytest-rdma").read_text()
    (installed,) = [line for line in bootstrap.splitlines() if "pip install" in line]
    assert "allure" in installed.split("[")[-1].split("]")[0].split(","), installed
    tox = configparser.ConfigParser()
    tox.read(REPO / "tox.ini")
    assert "allure" in [extra.strip() for extra in tox["testenv"]["extras"].split(",")]
