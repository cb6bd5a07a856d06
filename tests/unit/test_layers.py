"""The package's modules import each other one way only: no circle, not even through a lazy import.

A circle hidden in a function (`from x import y` inside `def`) or under `if TYPE_CHECKING:` still ties
two modules together: each needs the other to be understood, changed or tested. So every import
statement counts, wherever it is. `from P import m` counts as importing the module P.m where there is
one, else P itself (its `__init__`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_rdma"
ROOT = PACKAGE.name


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, name: str, modules: set[str]) -> set[str]:
    """The package's modules that `path` (the module `name`) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from P import m` imports the module P.m where there is one, else names of P itself.
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return {target for target in found if target in modules and target != name}


def graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(path) for path in paths}
    return {module_name(path): imports_of(path, module_name(path), modules) for path in paths}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted (pure)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return sorted(found)


def test_the_finder_sees_a_circle_through_a_lazy_import() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_a_lazy_import_counts_and_so_does_a_type_checking_one(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pytest_rdma import settings\n"
        "def f():\n    from pytest_rdma.report import record\n    import pytest_rdma.cli\n"
    )
    modules = {"pytest_rdma.settings", "pytest_rdma.report", "pytest_rdma.report.record", "pytest_rdma.cli"}
    assert imports_of(source, "pytest_rdma.m", modules) == {
        "pytest_rdma.settings",
        "pytest_rdma.report.record",
        "pytest_rdma.cli",
    }


def test_no_module_of_the_package_imports_itself_back() -> None:
    edges = graph()
    assert len(edges) > 50  # the scan read the package
    found = circles(edges)
    if found:
        pytest.fail(
            "import circles (each a set of modules that import each other): " + "; ".join(map(" <-> ".join, found))
        )
