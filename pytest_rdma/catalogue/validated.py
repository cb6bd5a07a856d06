"""A catalogue validated once per version of its sources, not once per pytest process.

Validating the whole catalogue takes about half a second under the lab's emulated CPU, and
every pytest start pays it (each device's run, the run as nobody). The catalogue is data in
pytest_rdma/verbs.py, checked by pytest_rdma/catalogue/validate.py against the header's names
(pytest_rdma/ibv/enums.py, ...); when none of the files they import from the package has
changed since a validation passed, with the same check kinds known, it would pass again. A passing validation
leaves a marker named by the hash of those sources in the user's cache; a catalogue with extra
descriptions (rdma_catalogue_extra) is always validated. The lab's host collection writes the
marker before the VM's runs, which read the host's cache through the shared root.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
ROOTS = ("verbs.py", "catalogue/validate.py")  # the catalogue and its validator; what they import follows
# Led by its literal text, which re finds fast; one quoted in a docstring would only add a file to the key.
_IMPORT = re.compile(rb"from (pytest_rdma(?:\.\w+)*) import (?:\(([^)]*)\)|([^\n#]*))")


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-rdma" / "validated"


def sources_key(kinds: Iterable[str], package: Path = PACKAGE) -> str:
    """The hash of the catalogue's and its validator's sources, and of the check kinds known."""
    digest = hashlib.sha256()
    for path, data in sorted(_read(package).items()):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + data + b"\0")
    digest.update("\0".join(sorted(kinds)).encode())
    return digest.hexdigest()


def sources(package: Path = PACKAGE) -> list[Path]:
    """Every file of the package the catalogue and its validator read: ROOTS and what they import, in turn."""
    return sorted(_read(package))


def _read(package: Path) -> dict[Path, bytes]:
    """The files of `sources`, read once each.

    Found by their `from pytest_rdma... import` lines (a regex: parsing the 9k lines of verbs.py would cost
    what the marker saves), so a table the validator starts reading (ibv/enums.py) is in the key at once.
    """
    found: dict[Path, bytes] = {}
    todo = [package / root for root in ROOTS]
    while todo:
        path = todo.pop()
        if path in found or not path.is_file():
            continue
        found[path] = data = path.read_bytes()
        for module, listed, names in _IMPORT.findall(data):
            base = package.joinpath(*module.decode().split(".")[1:])
            if not base.is_dir():
                todo.append(base.with_suffix(".py"))
                continue
            todo.append(base / "__init__.py")
            for name in (listed or names).split(b","):
                name = name.split(b" as ")[0].strip().decode()
                todo += [base / f"{name}.py", base / name / "__init__.py"]  # a submodule, if it names one
    return found


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
