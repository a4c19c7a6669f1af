"""The modules of dlqlens/rules/ import one another without a cycle, and the
DLQ handler's decision (rules/handler.py) stays free of Spark and of the simulator.

Every import counts: module level, inside functions (lazy) and under
``TYPE_CHECKING``, since each of them ties the two files together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dlqlens.rules

RULES = Path(dlqlens.rules.__file__).parent
PACKAGE = "dlqlens.rules"


def _imports(path: Path) -> set[str]:
    """Every module named by an import statement anywhere in ``path``."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def _graph() -> dict[str, set[str]]:
    """Module (file stem, ``__init__`` for the package) -> the rules modules it imports."""
    names = {p.stem for p in RULES.glob("*.py")}
    graph = {}
    for path in RULES.glob("*.py"):
        edges = set()
        for target in _imports(path):
            if target == PACKAGE:
                edges.add("__init__")
            elif target.startswith(PACKAGE + "."):
                head = target[len(PACKAGE) + 1:].split(".")[0]
                # ``from dlqlens.rules import parse`` names the package, not a module
                edges.add(head if head in names else "__init__")
        edges.discard(path.stem)
        graph[path.stem] = edges
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (as a path), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_rules_modules_import_each_other_without_a_cycle():
    graph = _graph()
    assert {"parser", "validate", "entries", "model", "handler", "replay"} <= set(graph)
    assert "entries" in graph["parser"] and "entries" in graph["validate"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_handler_decision_is_pure():
    """No Spark, no Arrow, no simulator: the simulator and the replay both import it."""
    imported = _imports(RULES / "handler.py")
    assert not [m for m in imported if m.split(".")[0] in ("pyspark", "pyarrow", "pandas", "numpy")]
    assert not [m for m in imported if m.startswith("dlqlens.sim")]
    assert _graph()["handler"] <= {"model", "world", "match"}
    assert "handler" in _graph()["replay"]
