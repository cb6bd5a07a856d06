"""A catalogue validated once per version of its sources, not once per pytest process.

Validating the whole catalogue takes about half a second under the lab's emulated CPU, and
every pytest start pays it (each device's run, the run as nobody). The catalogue is data in
pytest_rdma/verbs.py, checked by pytest_rdma/catalogue/; when neither has changed since a
validation passed, with the same check kinds known, it would pass again. A passing validation
leaves a marker named by the hash of those sources in the user's cache; a catalogue with extra
descriptions (rdma_catalogue_extra) is always validated. The lab's host collection writes the
marker before the VM's runs, which read the host's cache through the shared root.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
SOURCES = ("verbs.py", "catalogue/*.py")


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-rdma" / "validated"


def sources_key(kinds: Iterable[str], package: Path = PACKAGE) -> str:
    """The hash of the catalogue's and its validator's sources, and of the check kinds known."""
    digest = hashlib.sha256()
    for pattern in SOURCES:
        for path in sorted(package.glob(pattern)):
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update("\0".join(sorted(kinds)).encode())
    return digest.hexdigest()


def already_validated(key: str) -> bool:
    try:
        return (cache_dir() / key).exists()
    except OSError:
        return False  # a cache this user may not look into (the lab's run as nobody, root's home): validate


def remember(key: str) -> None:
    """Leave the marker; a cache that cannot be written (the VM's read-only root) only costs the next run."""
    try:
        cache_dir().mkdir(parents=True, exist_ok=True)
        (cache_dir() / key).touch()
    except OSError:
        pass
