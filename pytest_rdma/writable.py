"""Whether a path can take an output: of the right kind (a file or a directory), not under a file, in a
place this user can write. Pure, and importing nothing of the package: the plugin checks its outputs with it
before any check runs (outputs.py), and the commands their -o paths."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

FILE, DIRECTORY = "file", "directory"


def _nearest_existing(path: Path) -> Path:
    existing = path  # as given: a message names what the user wrote, not this machine's absolute path
    while not os.path.lexists(existing) and existing != existing.parent:  # False also where we may not look
        existing = existing.parent
    return existing


def _can_create_in(directory: Path) -> str:
    """'' if a file can be made in `directory`, else why not (the system's words)."""
    try:
        handle, probe = tempfile.mkstemp(prefix=".pytest-rdma-probe-", dir=directory)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(handle)
    os.unlink(probe)
    return ""


def problem(path: Path, kind: str, example: str) -> str:
    """What is wrong with an output's path ('' when this user can write it): `kind` is FILE or DIRECTORY,
    `example` a name to suggest in it."""
    existing = _nearest_existing(path)
    if existing == path:
        if kind == FILE and existing.is_dir():
            return f"{path} is a directory; give a file path, e.g. {path / example}"
        if kind == DIRECTORY and not existing.is_dir():
            return f"{path} is a file, not a directory; give a directory, e.g. {path.parent / example}"
        if kind == FILE and not os.access(existing, os.W_OK):
            return f"{path} is not writable by this user (uid {os.getuid()}); give a path you can write"
        target = existing if existing.is_dir() else existing.parent
    else:
        if not existing.is_dir():
            return f"{existing} is a file, so nothing can be made under it; give a path in a directory"
        target = existing
    if not os.access(target, os.W_OK | os.X_OK):
        return f"{target} is not writable by this user (uid {os.getuid()}); give a path you can write"
    why = _can_create_in(target)
    if why:
        return f"nothing can be written in {target} ({why}); give a path you can write"
    return ""
