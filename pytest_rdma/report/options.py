"""Command-line options and ini settings of the results reporting.

Precedence: command line > ini setting. Defaults: the expectations shipped with pytest-rdma
(pytest_rdma/expectations/<driver>.toml), not strict, no JSON file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

HELP_EXPECTATIONS = ("expectations file or directory of <driver>.toml files listing expected deviations "
                     "(repeatable; default: the files shipped with pytest-rdma; 'none' for no waivers)")
HELP_STRICT = ("CI gate: a new deviation fails the run, and so does a waived check that now conforms "
               "('fixed: remove the waiver')")
HELP_JSON = "write results as JSON to PATH (and, while running, one JSON line per result to PATH + 'l')"


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("rdma")
    group.addoption("--rdma-expectations", action="append", dest="rdma_expectations", metavar="DIR|FILE",
                    default=None, help=HELP_EXPECTATIONS)
    group.addoption("--rdma-strict", action="store_true", dest="rdma_strict", default=None, help=HELP_STRICT)
    group.addoption("--rdma-json", dest="rdma_json", metavar="PATH", default=None, help=HELP_JSON)
    parser.addini("rdma_expectations", HELP_EXPECTATIONS, type="linelist", default=[])
    parser.addini("rdma_strict", HELP_STRICT, type="bool", default=False)


@dataclass(frozen=True)
class Settings:
    expectations: tuple[str, ...] | None  # None: the shipped files; () no waivers at all
    strict: bool
    json: Path | None
    junit: bool
    allure_dir: Path | None


def settings(config: pytest.Config) -> Settings:
    paths = config.getoption("rdma_expectations") or config.getini("rdma_expectations") or None
    if paths is not None:
        root = config.rootpath
        # Ini paths are relative to the rootdir; command-line ones to the working directory.
        from_ini = not config.getoption("rdma_expectations")
        paths = tuple(str(root / p) if from_ini else p for p in paths if p != "none")
    strict = config.getoption("rdma_strict")
    json_path = config.getoption("rdma_json")
    allure_dir = getattr(config.option, "allure_report_dir", None)
    return Settings(
        expectations=paths,
        strict=bool(config.getini("rdma_strict") if strict is None else strict),
        json=Path(json_path) if json_path else None,
        junit=bool(getattr(config.option, "xmlpath", None)),
        allure_dir=Path(allure_dir) if allure_dir else None,
    )
