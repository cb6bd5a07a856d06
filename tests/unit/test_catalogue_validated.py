"""The catalogue is validated once per version of its sources (pytest_rdma/catalogue/validated.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_rdma import plugin
from pytest_rdma.catalogue import validated
from pytest_rdma.catalogue.validate import CatalogueError
from pytest_rdma.catalogue.validated import PACKAGE


def _package(root: Path, verbs: str = "A = 1\n", check: str = "def ok(): ...\n") -> Path:
    (root / "catalogue").mkdir(parents=True, exist_ok=True)
    (root / "verbs.py").write_text(verbs)
    (root / "catalogue" / "validate.py").write_text(check)
    (root / "kinds.py").write_text("not part of the key\n")
    return root


def test_the_key_follows_the_catalogue_its_validator_and_the_kinds(tmp_path: Path) -> None:
    base = validated.sources_key(["call"], _package(tmp_path / "a"))
    assert base == validated.sources_key(["call"], _package(tmp_path / "b"))
    assert base != validated.sources_key(["call"], _package(tmp_path / "c", verbs="A = 2\n"))
    assert base != validated.sources_key(["call"], _package(tmp_path / "d", check="def ok(): 1\n"))
    assert base != validated.sources_key(["call", "transfer"], _package(tmp_path / "e"))


def test_the_key_follows_what_the_validator_imports(tmp_path: Path) -> None:
    # catalogue/validate.py reads the header's names from ibv/enums.py: a new member there is in the key.
    check = "from pytest_rdma.ibv import (\n    enums,\n)\nfrom pytest_rdma.ibv.enums import VALUES as V\n"
    keys = []
    for name, members in (("a", "A = 1\n"), ("b", "A = 1\n"), ("c", "A = 1\nB = 2\n")):
        root = _package(tmp_path / name, check=check)
        (root / "ibv").mkdir()
        (root / "ibv" / "enums.py").write_text(members)
        keys.append(validated.sources_key(["call"], root))
    assert keys[0] == keys[1] != keys[2]


def _imported(module: str, seen: set[Path]) -> None:
    """The package's files `module` imports, in turn, as Python's own parser reads them."""
    path = PACKAGE.joinpath(*module.split(".")[1:])
    path = path.with_suffix(".py") if path.with_suffix(".py").exists() else path / "__init__.py"
    if not path.exists() or path in seen:
        return
    seen.add(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pytest_rdma"):
            _imported(str(node.module), seen)
            for alias in node.names:
                _imported(f"{node.module}.{alias.name}", seen)


def test_the_key_covers_every_file_of_the_package_the_validation_reads() -> None:
    seen: set[Path] = set()
    _imported("pytest_rdma.verbs", seen)
    _imported("pytest_rdma.catalogue.validate", seen)
    assert PACKAGE / "ibv" / "enums.py" in seen
    assert validated.sources() == sorted(seen)


@pytest.fixture
def options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls: list[int] = []

    def counted(verbs, *, kinds, **kind_data) -> None:
        calls.append(len(tuple(verbs)))

    monkeypatch.setattr(plugin, "validate", counted)

    class Options:
        catalogue_extra: tuple[str, ...] = ()

    return Options(), calls


def test_a_validation_that_passed_is_not_repeated_for_the_same_sources(options) -> None:
    settings, calls = options
    plugin.catalogue_of(settings)
    plugin.catalogue_of(settings)
    assert len(calls) == 1
    assert any(validated.cache_dir().iterdir())


def test_a_validation_that_failed_leaves_no_marker(options, monkeypatch: pytest.MonkeyPatch) -> None:
    settings, _ = options

    def failing(verbs, *, kinds, **kind_data) -> None:
        raise CatalogueError(["ibv_x: broken"])

    monkeypatch.setattr(plugin, "validate", failing)
    for _ in range(2):  # and again: the failure is not remembered as a pass
        with pytest.raises(pytest.UsageError, match="ibv_x: broken"):
            plugin.catalogue_of(settings)
    assert not validated.cache_dir().exists() or not any(validated.cache_dir().iterdir())


def test_extra_descriptions_are_always_validated(options, monkeypatch: pytest.MonkeyPatch) -> None:
    settings, calls = options
    settings.catalogue_extra = ("my.module:VERBS",)
    monkeypatch.setattr(plugin, "load_extra", lambda specs: (plugin.Verb.__new__(plugin.Verb),))
    monkeypatch.setattr(plugin.Catalogue, "of", staticmethod(lambda verbs: verbs))
    plugin.catalogue_of(settings)
    plugin.catalogue_of(settings)
    assert len(calls) == 2


def test_a_cache_this_user_may_not_read_means_validating(options, monkeypatch: pytest.MonkeyPatch) -> None:
    settings, calls = options

    def denied(self: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "exists", denied)
    monkeypatch.setattr(validated, "remember", lambda key: None)
    plugin.catalogue_of(settings)
    assert len(calls) == 1
