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


# The package's layers, lowest first: a module may import its own layer and those below, never one above.
# Each layer is named by module prefixes under pytest_rdma (a prefix covers a package's modules).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("binding", ("ibv", "shapes", "writable", "command_line", "cbuild", "resume_files")),  # ctypes and plain helpers
    ("catalogue", ("catalogue", "verbs", "capabilities", "settings")),  # the data, and the options read over it
    ("cases", ("cases",)),  # generation: the catalogue's claims as frozen Cases
    ("calls", ("calls", "observations", "outcomes")),  # the one call layer, and what a verdict says
    ("provider", ("provider", "guard")),  # the device under test, and the guards around a check
    ("kinds", ("kinds",)),  # how each claim kind runs
    (
        "running",
        ("running", "generate", "fixtures", "selection", "user_claims", "user_fixtures", "replay", "explore", "peer"),
    ),
    ("report", ("report", "expectations")),  # records, waivers and reporters
    ("lab", ("lab",)),
    ("cli", ("plugin", "hooks", "outputs", "coverage", "cli", "selftest")),
)


def layer_of(module: str) -> int:
    """The index in LAYERS of a module of the package (the package itself is the lowest)."""
    local = module.removeprefix(f"{ROOT}.")
    if module == ROOT:
        return 0
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(local == prefix or local.startswith(f"{prefix}.") for prefix in prefixes):
            return index
    raise LookupError(f"{module} is in no layer: name it in LAYERS (tests/unit/test_layers.py)")


def climbing(edges: dict[str, set[str]]) -> list[str]:
    """Each import from a lower layer into a higher one, as "module (layer) -> target (layer)" (pure)."""
    found = []
    for module, targets in sorted(edges.items()):
        for target in sorted(targets):
            if layer_of(target) > layer_of(module):
                found.append(f"{module} ({LAYERS[layer_of(module)][0]}) -> {target} ({LAYERS[layer_of(target)][0]})")
    return found


def reached(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in edges.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_layer_check_sees_an_import_that_climbs() -> None:
    edges = {f"{ROOT}.cases": {f"{ROOT}.calls.invoke"}, f"{ROOT}.calls.invoke": {f"{ROOT}.catalogue.model"}}
    assert climbing(edges) == [f"{ROOT}.cases (cases) -> {ROOT}.calls.invoke (calls)"]
    with pytest.raises(LookupError, match="in no layer"):
        layer_of(f"{ROOT}.somewhere_new")


def test_every_module_is_in_a_layer_and_no_import_climbs() -> None:
    edges = graph()
    for module in edges:
        layer_of(module)  # a new top-level module must be placed
    found = climbing(edges)
    if found:
        pytest.fail("imports that climb the layers (LAYERS, lowest first):\n" + "\n".join(found))


def test_the_records_know_no_case_run_call_or_kind() -> None:
    """report/record.py imports nothing from running, calls or kinds (nor cases, which bring them), and
    the controller's results.py reaches no catalogue expansion and no libibverbs at all: it builds records
    from what the workers send. calls/record.py, reached through the typed observations, is data only."""
    edges = graph()
    direct = {target.removeprefix(f"{ROOT}.") for target in edges[f"{ROOT}.report.record"]}
    assert not {name for name in direct if name.split(".")[0] in ("running", "calls", "kinds", "cases", "generate")}
    controller = {target.removeprefix(f"{ROOT}.") for target in reached(edges, f"{ROOT}.report.results")}
    forbidden = ("running", "kinds", "cases", "generate", "verbs", "ibv", "provider")
    assert not {name for name in controller if name.split(".")[0] in forbidden}
    assert {name for name in controller if name.startswith("calls")} <= {"calls.record"}
