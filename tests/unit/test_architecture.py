"""ARCHITECTURE.md is true to the code: every module it names exists, its table lists every module of
the package, and its worked example (a verb of known kinds, a kind of one's own) is what the code does."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from pytest_rdma import generate
from pytest_rdma.catalogue.model import Claim, Verb
from pytest_rdma.catalogue.validate import CatalogueError, validate
from pytest_rdma.kinds.load import kind_schemas, known_kinds
from pytest_rdma.kinds.registry import Kind
from pytest_rdma.verbs import CATALOGUE

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "pytest_rdma"
DOCUMENT = REPO / "ARCHITECTURE.md"

# `report/results.py`, pytest_rdma/kinds/, `cases.py`, `calls/invoke.py:Calls.invoke`: a path of the package.
NAMED_PATH = re.compile(r"(?<![\w./-])((?:pytest_rdma/)?(?:[a-z_]+/)*[a-z_]+(?:\.py|/))(?![\w])")


def text() -> str:
    return DOCUMENT.read_text()


def table(document: str) -> dict[str, str]:
    """The tree table's rows: the path a row begins with -> the row's text (its continuation lines too)."""
    block = document.split("```\n", 2)[1]
    rows: dict[str, str] = {}
    current = ""
    for line in block.splitlines():
        if line and not line[0].isspace():
            current = line.split()[0]
            rows[current] = line[len(current) :]
        elif current:
            rows[current] += " " + line.strip()
    return rows


def named_paths(document: str) -> set[str]:
    """Every path of the package the document names, relative to pytest_rdma/ where it is one of ours."""
    found = set()
    for match in NAMED_PATH.finditer(document):
        path = match.group(1)
        if path.startswith(("tests/", "docs/", "suites/", "benchmarks/")) or "/" not in path and path.endswith("/"):
            continue
        if path == "conftest.py":  # pytest's file, named where the document says why there is none
            continue
        found.add(path.removeprefix("pytest_rdma/"))
    return found


def exists(path: str, rows: dict[str, str]) -> bool:
    """A path named in the document is a module or package of ours: as written, or inside the package of
    the table's row that names it (`invoke.py` in the row of pytest_rdma/calls/)."""
    if (PACKAGE / path).exists():
        return True
    return any(
        (PACKAGE / row.removeprefix("pytest_rdma/") / path).exists() and path in rows[row]
        for row in rows
        if row.startswith("pytest_rdma/") and row.endswith("/")
    )


def modules() -> list[str]:
    """Every module of the package, relative to pytest_rdma/ (packages by their directory, not __init__)."""
    return sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" and "suites" not in path.parts
    )


def listed(module: str, rows: dict[str, str]) -> bool:
    """A top-level module has a row of its own or is named in one; a package's module is named in its
    package's row by its path there (`abi/qp.py` in the row of pytest_rdma/ibv/)."""
    package, _, inside = module.partition("/")
    if not inside:
        return f"pytest_rdma/{module}" in rows or any(re.search(rf"\b{re.escape(module)}", t) for t in rows.values())
    row = rows.get(f"pytest_rdma/{package}/", "")
    return re.search(rf"(?<![\w/]){re.escape(inside)}", row) is not None


def test_every_module_the_document_names_exists() -> None:
    document = text()
    rows = table(document)
    named = named_paths(document)
    assert {"verbs.py", "report/results.py", "kinds/registry.py", "invoke.py"} <= named  # the scan reads it
    missing = sorted(path for path in named if not exists(path, rows))
    assert not missing, f"ARCHITECTURE.md names modules that do not exist: {missing}"


def test_the_table_lists_every_module_of_the_package() -> None:
    rows = table(text())
    absent = [module for module in modules() if not listed(module, rows)]
    assert len(modules()) > 100
    assert not absent, f"ARCHITECTURE.md's table does not list: {absent}"


def test_the_checks_finder_sees_what_is_absent() -> None:
    rows = {"pytest_rdma/calls/": " values.py, invoke.py", "pytest_rdma/cases.py": " cases"}
    assert listed("calls/invoke.py", rows) and listed("cases.py", rows)
    assert not listed("calls/marshal.py", rows) and not listed("generate.py", rows)
    assert not exists("kinds/registry.py:expand".split(":")[0].replace("registry", "nowhere"), rows)
    assert named_paths("see `kinds/nowhere.py` and pytest_rdma/report/ and `tests/unit/x.py`") == {
        "kinds/nowhere.py",
        "report/",
    }


def code_blocks(document: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", document, flags=re.S)


def example_verb() -> Verb:
    namespace: dict[str, object] = {}
    exec(code_blocks(text(), "python")[0], namespace)
    verb = namespace["ibv_get_device_index"]
    assert isinstance(verb, Verb)
    return verb


def test_the_example_verb_is_the_catalogues_and_yields_the_ids_given() -> None:
    verb = example_verb()
    assert verb == next(entry for entry in CATALOGUE if entry.name == verb.name), "the entry as verbs.py has it"
    others = tuple(entry for entry in CATALOGUE if entry.name != verb.name)
    validate((*others, verb), kinds=known_kinds(), schemas=kind_schemas())
    ids = code_blocks(text(), "text")[0].split()
    assert [case.stable_id for case in generate.expand(verb)] == ids


def test_the_example_kind_validates_its_claims_and_expands_them() -> None:
    namespace: dict[str, object] = {}
    exec(code_blocks(text(), "python")[1], namespace)
    (added,) = namespace["pytest_rdma_kinds"]()  # type: ignore[operator]
    assert isinstance(added, Kind) and added.name == "same-twice" and added.params is not None
    assert added.doc == "Calling the verb twice gives the same answer."
    verb = example_verb()
    claim = Claim("stable", "same-twice", "asking twice gives the same answer", "DESCRIPTION", params={"field": "ret"})
    with_kind = dataclasses.replace(verb, claims=(claim,))
    others = tuple(entry for entry in CATALOGUE if entry.name != verb.name)
    kinds, schemas = known_kinds() | {added.name}, {**kind_schemas(), added.name: added.params}
    validate((*others, with_kind), kinds=kinds, schemas=schemas)
    assert [case.stable_id for case in added.expand(with_kind, claim)] == ["test_ibv_get_device_index[stable]"]
    misspelt = dataclasses.replace(claim, params={"feild": "ret"})
    with pytest.raises(CatalogueError, match="stable"):
        validate((*others, dataclasses.replace(verb, claims=(misspelt,))), kinds=kinds, schemas=schemas)
