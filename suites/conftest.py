"""The suite's own option: extra verb descriptions to generate checks from (see generate.py)."""

from __future__ import annotations

import pytest

from pytest_rdma import generate


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(generate.INI_EXTRA, generate.HELP_EXTRA, type="linelist", default=[])


def pytest_configure(config: pytest.Config) -> None:
    generate.configure_extra(config)
