"""Which programs does Python code run or look up? A static scan, for tests/unit/test_lab_packages.py.

It finds, in a module's syntax tree:
- lookups: `which("x")`, `shutil.which("x")`, `find_binary(["x", "y"])`, `find_binary_or_raise([...])`;
- runs: the first element of the argv given to subprocess's run/Popen/check_call/check_output/call
  (also when imported by name), to os.execvp/execlp/system, and to a module's own `_run(*argv)`.

An argv[0] is followed through what a reader would follow: a literal, a list or tuple literal,
`str(NAME)` of a module constant `NAME = Path("/abs/path")`, a local name bound to a list literal
or to a `which("x")` lookup, and `*argv` where a `for argv in ((...), (...))` binds it. Anything
else is reported as unresolved, by its source text, so that a test can say what each one is.
An f-string keeps its placeholders: `which(f"qemu-system-{arch}")` is "qemu-system-{arch}".
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

SUBPROCESS_RUNS = frozenset({"run", "Popen", "check_call", "check_output", "call"})
OS_RUNS = frozenset({"execvp", "execlp", "execv", "execl", "system"})
# virtme-ng's find_script/run_script look up its own scripts (virtme-prep-kdir-mods...) on PATH.
LOOKUPS = frozenset({"which", "find_script", "run_script"})
LIST_LOOKUPS = frozenset({"find_binary", "find_binary_or_raise", "all_tools_available"})
WRAPPERS = frozenset({"_run"})  # a module's own `_run(*argv)`: its arguments are the argv


@dataclass
class Found:
    programs: dict[str, list[str]] = field(default_factory=dict)  # name -> places (file:line)
    unresolved: dict[str, list[str]] = field(default_factory=dict)  # argv[0] source -> places

    def add(self, kind: dict[str, list[str]], key: str, place: str) -> None:
        kind.setdefault(key, []).append(place)

    def merge(self, other: Found) -> None:
        for mine, theirs in ((self.programs, other.programs), (self.unresolved, other.unresolved)):
            for key, places in theirs.items():
                mine.setdefault(key, []).extend(places)


def _text(node: ast.expr) -> str | None:
    """A string literal, or an f-string with its placeholders kept as {source}."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                parts.append("{" + ast.unparse(value.value) + "}")
            else:
                parts.append(str(value.value))  # type: ignore[attr-defined]
        return "".join(parts)
    return None


def _callee(node: ast.Call) -> tuple[str | None, str]:
    """(module or object name, function name) of a call: subprocess.run -> ("subprocess", "run")."""
    func = node.func
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else None
        return owner, func.attr
    if isinstance(func, ast.Name):
        return None, func.id
    return None, ""


class _Scanner(ast.NodeVisitor):
    def __init__(self, tree: ast.Module, name: str) -> None:
        self.name = name
        self.found = Found()
        self.path_constants: dict[str, str] = {}
        self.from_subprocess: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "subprocess":
                self.from_subprocess |= {alias.asname or alias.name for alias in node.names}
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
                and _callee(node.value)[1] == "Path"
                and node.value.args
                and _text(node.value.args[0])
            ):
                self.path_constants[node.targets[0].id] = _text(node.value.args[0]) or ""
        self.scopes: list[ast.AST] = [tree]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.scopes.append(node)
        self.generic_visit(node)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> None:
        place = f"{self.name}:{node.lineno}"
        owner, name = _callee(node)
        if name in LOOKUPS and node.args:
            self._program(node.args[0], place)
        elif name in LIST_LOOKUPS and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
            for element in node.args[0].elts:
                self._program(element, place)
        elif (
            (owner == "subprocess" and name in SUBPROCESS_RUNS)
            or (owner is None and name in self.from_subprocess and name in SUBPROCESS_RUNS)
            or (owner == "os" and name in OS_RUNS)
        ):
            argv = (
                node.args[0]
                if node.args
                else next((k.value for k in node.keywords if k.arg in ("args", "executable")), None)
            )
            if argv is not None:
                shell = name == "system" or any(k.arg == "shell" for k in node.keywords)
                self._argv0(argv, place, shell)
        elif owner is None and name in WRAPPERS and node.args:
            first = node.args[0]
            self._argv0(first if isinstance(first, ast.Starred) else ast.List(elts=[first]), place, False)
        self.generic_visit(node)

    def _program(self, node: ast.expr, place: str, shell: bool = False) -> None:
        text = _text(node)
        if text is None or (shell and text.startswith("{")):
            self.found.add(self.found.unresolved, ast.unparse(node), place)
        elif shell:
            # Placeholders are values (paths, options), never a program this scan could name.
            for program in shell_programs(re.sub(r"\{[^{}]*\}", "$P", text)):
                self.found.add(self.found.programs, program, place)
        else:
            self.found.add(self.found.programs, text, place)

    def _argv0(self, node: ast.expr, place: str, shell: bool) -> None:
        for element in self._first_elements(node):
            if (
                isinstance(element, ast.Call)
                and _callee(element)[1] == "str"
                and element.args
                and isinstance(element.args[0], ast.Name)
                and element.args[0].id in self.path_constants
            ):
                self.found.add(self.found.programs, self.path_constants[element.args[0].id], place)
            elif isinstance(element, ast.Call) and _callee(element)[1] in LOOKUPS and element.args:
                self._program(element.args[0], place)
            elif (
                isinstance(element, ast.Call)
                and _callee(element)[1] in LIST_LOOKUPS
                and element.args
                and isinstance(element.args[0], (ast.List, ast.Tuple))
            ):
                for name in element.args[0].elts:
                    self._program(name, place)
            else:
                self._program(element, place, shell)

    def _first_elements(self, node: ast.expr) -> Iterable[ast.expr]:
        """The expressions argv[0] may be, following literals and simple local bindings."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return list(self._first_elements(node.elts[0])) if node.elts else []
        if isinstance(node, ast.Starred) and isinstance(node.value, ast.Name):
            return self._loop_values(node.value.id) or [node]
        if isinstance(node, ast.Name):
            bound = self._local_value(node.id)
            if bound is not None:
                return list(self._first_elements(bound))
            return self._loop_values(node.id) or [node]
        return [node]

    def _local_value(self, name: str) -> ast.expr | None:
        """The value of the one assignment `name = [...]` or `name = which(...)` in the enclosing function."""
        values = [
            stmt.value
            for stmt in ast.walk(self.scopes[-1])
            if isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name
        ]
        if len(values) != 1:
            return None
        value = values[0]
        if isinstance(value, (ast.List, ast.Tuple)):
            return value
        if isinstance(value, ast.Call) and _callee(value)[1] in LOOKUPS | LIST_LOOKUPS:
            return value
        return None

    def _loop_values(self, name: str) -> list[ast.expr]:
        """What a `for name in (...)` in the enclosing function binds, as argv[0]: each element, or
        each element's first one where the elements are argvs. The loop may go over a local tuple."""
        firsts: list[ast.expr] = []
        for stmt in ast.walk(self.scopes[-1]):
            if not (isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and stmt.target.id == name):
                continue
            values = stmt.iter
            if isinstance(values, ast.Name):
                values = self._local_value(values.id) or values
            if isinstance(values, (ast.List, ast.Tuple)):
                firsts += [
                    elt.elts[0] if isinstance(elt, (ast.List, ast.Tuple)) and elt.elts else elt for elt in values.elts
                ]
        return firsts


def scan_file(path: Path, name: str | None = None) -> Found:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    scanner = _Scanner(tree, name or path.name)
    scanner.visit(tree)
    return scanner.found


def scan_tree(paths: Iterable[Path], base: Path) -> Found:
    found = Found()
    for path in sorted(paths):
        found.merge(scan_file(path, str(path.relative_to(base))))
    return found


# Words after which the next word is a command, and builtins whose arguments are not commands.
SHELL_PREFIXES = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "exec", "time", "{", "}"}
)
SHELL_BUILTINS = frozenset(
    {
        "for",
        "case",
        "esac",
        "[",
        "[[",
        "set",
        "cd",
        "echo",
        "exit",
        "local",
        "export",
        "return",
        "true",
        "false",
        "shift",
        "read",
        "test",
        "printf",
        "pwd",
        "source",
        ".",
        "trap",
        "wait",
        "in",
    }
)
SHELL_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "\n"})


def shell_programs(script: str) -> set[str]:
    """Programs a simple shell script (or a shell command string) runs: the first word of each
    command, of each $(...) too, and the interpreter of its #! line. Builtins, keywords,
    "$variables" and array assignments `name=(...)` are no programs."""
    import shlex

    found: set[str] = set()
    lines = script.splitlines()
    if lines and lines[0].startswith("#!"):
        found.update(Path(word).name for word in lines[0][2:].split())
        lines = lines[1:]
    for line in lines:
        line, inner = _substitutions(line.replace("${#", "${"))
        for command in inner:
            found |= shell_programs(command)
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            found |= _commands(list(lexer))
        except ValueError:  # an unbalanced quote: a continued line this simple reader does not follow
            continue
    return found


def _substitutions(line: str) -> tuple[str, list[str]]:
    """The line with each $(...) replaced by "$S", and what they held (shlex knows no $(...))."""
    inner: list[str] = []
    while "$(" in line:
        start = line.index("$(")
        depth, end = 0, len(line)
        for index in range(start + 1, len(line)):
            depth += {"(": 1, ")": -1}.get(line[index], 0)
            if depth == 0:
                end = index
                break
        inner.append(line[start + 2 : end])
        line = line[:start] + "$S" + line[end + 1 :]
    return line, inner


def _commands(tokens: list[str]) -> set[str]:
    found: set[str] = set()
    at_start, in_array = True, False
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if in_array:
            in_array = token != ")"
        elif token in SHELL_SEPARATORS:
            at_start = True
        elif not at_start:
            continue
        elif token.endswith("=") and following in ("(", "()"):
            in_array, at_start = following == "(", False  # name=(a b c): an array, not a subshell
        elif token in SHELL_PREFIXES or ("=" in token and not token.startswith(("$", "-", "="))):
            continue  # the next word is the command: then CMD, exec CMD, VAR=value CMD
        else:
            if token not in SHELL_BUILTINS and not token.startswith(("$", "-", ">", "<", "2>", "(")):
                found.add(token)
            at_start = False
    return found
