"""Options of the guards: what to do with a resource leak or a kernel fault found around a check.

Precedence: command line > environment (PYTEST_RDMA_LEAKS, PYTEST_RDMA_KERNEL_LOG) > default.
The lab's in-guest runner sets PYTEST_RDMA_KERNEL_LOG=fail, which makes kernel faults fail
checks in the lab by default while elsewhere they are only reported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

MODES = ("fail", "report", "off")
HELP_LEAKS = ("per device, compare the kernel's pd/cq/qp/mr/ctx counts before and after each device-using "
              "check: fail (a teardown error), report (a note in the summary) or off (default fail; "
              "env PYTEST_RDMA_LEAKS)")
HELP_KERNEL_LOG = ("scan the kernel log (/dev/kmsg) around each check for WARNING, BUG, Oops, KASAN and "
                   "lockdep reports: fail, report or off (default: fail in the lab, report elsewhere; "
                   "env PYTEST_RDMA_KERNEL_LOG)")
ENV_LEAKS = "PYTEST_RDMA_LEAKS"
ENV_KERNEL_LOG = "PYTEST_RDMA_KERNEL_LOG"
# A check that provokes kernel log records on purpose still gets them attached, but does not fail.
MARK_EXPECTED = "rdma_kernel_log_expected"


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("rdma")
    group.addoption("--rdma-leaks", dest="rdma_leaks", choices=MODES, default=None, help=HELP_LEAKS)
    group.addoption("--rdma-kernel-log", dest="rdma_kernel_log", choices=MODES, default=None,
                    help=HELP_KERNEL_LOG)


def _mode(config: pytest.Config, dest: str, env: str, default: str) -> str:
    value = config.getoption(dest)
    if value is not None:
        return value
    from_env = os.environ.get(env, "").strip().lower()
    if from_env:
        if from_env not in MODES:
            raise pytest.UsageError(f"{env}={from_env!r}: expected one of {', '.join(MODES)}")
        return from_env
    return default


@dataclass(frozen=True)
class Settings:
    leaks: str
    kernel_log: str


def settings(config: pytest.Config) -> Settings:
    return Settings(leaks=_mode(config, "rdma_leaks", ENV_LEAKS, "fail"),
                    kernel_log=_mode(config, "rdma_kernel_log", ENV_KERNEL_LOG, "report"))
