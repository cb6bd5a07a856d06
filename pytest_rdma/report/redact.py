"""No machine's absolute paths in a result's messages: they name one host's layout, not the check.

A result travels (JSON, JUnit, Allure, a CI dashboard, a bug report) to readers on other
machines, for whom `/home/ci/builds/1234/pytest_rdma/kinds/check.py` is noise that also leaks
where it ran. Paths inside the checkout or an installed package become relative to it
(`pytest_rdma/kinds/check.py`, `_pytest/runner.py`); the working directory's become relative to
it; any other absolute path keeps its last two parts (`.../rxe0/reproducers`). The kernel's own
files (`/dev`, `/sys`, `/proc`) are the same on every machine and stay as they are.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# An absolute path of at least two parts, not glued to a word before it ("INIT>RTR/RTS" is not one).
ABSOLUTE = re.compile(r"(?<![\w.~/\-])/(?:[\w.@+\-]+/)+[\w.@+\-]*")
KEEP = ("/dev/", "/sys/", "/proc/")
PACKAGE_DIRS = ("/site-packages/", "/dist-packages/")
# The directory that holds the pytest_rdma package: the checkout, or site-packages.
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2]) + "/"


def _roots() -> list[str]:
    roots = [PACKAGE_ROOT]
    try:
        roots.append(os.getcwd().rstrip("/") + "/")
    except OSError:  # the working directory was removed
        pass
    return sorted({root for root in roots if root != "/"}, key=len, reverse=True)


def _short(path: str) -> str:
    if path.startswith(KEEP):
        return path
    for marker in PACKAGE_DIRS:
        if marker in path:
            return path.split(marker, 1)[1]
    for root in _roots():
        if path.startswith(root):
            return path[len(root) :] or "."
    parts = [part for part in path.split("/") if part]
    return ".../" + "/".join(parts[-2:])


def redact(text: str) -> str:
    """`text` with every absolute path of this machine made relative (see the module's docstring)."""
    if "/" not in text:
        return text
    return ABSOLUTE.sub(lambda found: _short(found.group(0)), text)


def has_machine_path(text: str) -> bool:
    """Whether `text` still names an absolute path other than the kernel's own files."""
    return any(not found.group(0).startswith(KEEP) for found in ABSOLUTE.finditer(text))
