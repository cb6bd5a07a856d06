"""Whether pyverbs can be used here, and a message that says what to do when it cannot."""

from __future__ import annotations

import sys

INSTALL_HINT = (
    "pyverbs (rdma-core's Python bindings) is not importable by {python}.\n"
    "It must match the installed rdma-core, so it comes from the distribution:\n"
    "  Debian/Ubuntu: apt-get install python3-pyverbs, then use /usr/bin/python3 or a venv made with\n"
    "  '/usr/bin/python3 -m venv --system-site-packages'.\n"
    "  Fedora/RHEL:   dnf install python3-pyverbs.\n"
    "No RDMA hardware? './pytest-rdma lab' runs the suite on Soft-RoCE (rxe) and soft-iWARP (siw) in a VM."
)


class PyverbsMissing(RuntimeError):
    pass


def problem() -> str:
    """Why pyverbs cannot be used, or "" when it can."""
    try:
        import pyverbs.device  # noqa: F401
    except ImportError as exc:
        return INSTALL_HINT.format(python=sys.executable) + f"\n(import error: {exc})"
    return ""


def require() -> None:
    why = problem()
    if why:
        raise PyverbsMissing(why)
