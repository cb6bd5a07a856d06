"""`Any` stays at the ctypes boundary.

The binding (pytest_rdma/ibv/) and the marshalling of values into and out of C
(pytest_rdma/calls/marshal.py) handle whatever C hands back; everywhere else the data has a name
(catalogue/model.py's Value, calls/record.py's shapes, report/record.py's Record, shapes.Json).
mypy (CI's lint step, configured in pyproject.toml) checks that the names fit; this test checks that
no module falls back to the unchecked catch-all instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_rdma"
BOUNDARY = ("ibv/", "calls/marshal.py")


def any_uses(source: str) -> list[int]:
    """The lines that name typing's Any (imported by name, or as typing.Any / t.Any)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "Any":
            lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "Any":
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and any(alias.name == "Any" for alias in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip() == "Any":
            lines.append(node.lineno)  # a quoted annotation
    return sorted(set(lines))


def test_any_is_named_only_at_the_ctypes_boundary() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(BOUNDARY):
            continue
        lines = any_uses(path.read_text(encoding="utf-8"))
        if lines:
            found[relative] = lines
    assert not found, f"typing.Any outside the ctypes boundary {BOUNDARY}: {found}"


def test_the_scan_sees_every_spelling_of_any() -> None:
    # Annotations are strings under `from __future__ import annotations`: the scan parses them as code.
    assert any_uses("from typing import Any\nx: Any = 1\n") == [1, 2]
    assert any_uses("import typing\ndef f(v: typing.Any) -> None: ...\n") == [2]
    assert any_uses("def f(v: 'Any') -> None: ...\n") == [1]
    assert any_uses("from typing import Mapping\nx: Mapping[str, object] = {}\n") == []
