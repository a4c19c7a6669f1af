"""Imports go down the layers of ``docs/architecture.md``, and no two modules import each other in a circle.

Every module of ``dlqlens/`` is parsed (no import is executed); every
``import``/``from ... import`` counts, at module level or inside a function,
relative ones resolved. The layer table is read from the page itself, so the
page and the check cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dlqlens"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def read_layers(text: str) -> dict[str, int]:
    """``{package or top-level module: layer number}`` from the page's table."""
    layers: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|([^|]*)\|", line)
        if m:
            for name in re.findall(r"`([A-Za-z_]+)`", m.group(2)):
                assert name not in layers, f"{name} placed twice in docs/architecture.md"
                layers[name] = int(m.group(1))
    return layers


def unit_of(module: str) -> str:
    """The layer unit of a dotted module name: its subpackage or top-level module."""
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def module_name(path: Path, package_dir: Path) -> str:
    rel = path.relative_to(package_dir.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str, package_dir: Path) -> list[tuple[int, str]]:
    """``(line, imported dotted name)`` for every dlqlens import in a file.

    ``from a.b import c`` yields ``a.b.c`` when ``c`` is a module of the
    package, else ``a.b``.
    """
    tree = ast.parse(path.read_bytes(), filename=str(path))
    is_package = path.name == "__init__.py"
    here = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((node.lineno, sub if _is_module(sub, package_dir) else target))
    return [(line, name) for line, name in found if name.split(".")[0] == "dlqlens"]


def _is_module(dotted: str, package_dir: Path) -> bool:
    path = package_dir.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def import_graph(package_dir: Path = PACKAGE) -> dict[str, list[tuple[int, str]]]:
    """``{module: [(line, imported module), ...]}`` over a package tree."""
    return {module_name(p, package_dir): imports_of(p, module_name(p, package_dir), package_dir)
            for p in sorted(package_dir.rglob("*.py"))}


def back_edges(graph, layers) -> list[str]:
    """Imports that go up or sideways between units, and units the table lacks."""
    problems = []
    for module, imports in graph.items():
        src = unit_of(module)
        if src not in layers:
            problems.append(f"{module}: {src!r} has no layer in docs/architecture.md")
            continue
        for line, target in imports:
            dst = unit_of(target)
            if dst == src:
                continue
            if dst not in layers:
                problems.append(f"{module}:{line} imports {target}: {dst!r} has no layer")
            elif layers[dst] >= layers[src]:
                problems.append(f"{module}:{line} imports {target} "
                                f"(layer {layers[src]} {src} -> layer {layers[dst]} {dst})")
    return problems


def cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    edges = {m: sorted({t for _, t in imps if t in graph and t != m})
             for m, imps in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return found


@pytest.fixture(scope="module")
def graph():
    return import_graph()


@pytest.fixture(scope="module")
def layers():
    return read_layers(ARCHITECTURE.read_text(encoding="utf-8"))


def test_every_import_goes_down_the_layers(graph, layers):
    problems = back_edges(graph, layers)
    assert not problems, "imports against docs/architecture.md:\n" + "\n".join(problems)


def test_no_module_level_cycle(graph):
    found = cycles(graph)
    assert not found, "modules importing each other in a circle: " + "; ".join(
        " <-> ".join(c) for c in found)


def test_the_table_places_every_package_and_names_only_real_ones(layers):
    units = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py") or (p / "__init__.py").is_file()}
    assert units == set(layers), (f"not placed: {sorted(units - set(layers))}; "
                                  f"placed but absent: {sorted(set(layers) - units)}")


# --- the checks themselves can fail --------------------------------------------------------

def _write(tmp: Path, files: dict[str, str]) -> Path:
    pkg = tmp / "dlqlens"
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_a_reintroduced_back_edge_is_caught(tmp_path):
    pkg = _write(tmp_path, {
        "__init__.py": "",
        "mq/__init__.py": "",
        "mq/mqsc.py": "def f():\n    from dlqlens.sim.qmgr import QLOCAL_DEFAULTS\n",
        "sim/__init__.py": "",
        "sim/qmgr.py": "from dlqlens.mq import mqsc\n",
    })
    found = back_edges(import_graph(pkg), {"mq": 2, "sim": 7, "__init__": 12})
    assert found == ["dlqlens.mq.mqsc:2 imports dlqlens.sim.qmgr (layer 2 mq -> layer 7 sim)"]


def test_a_sideways_import_and_an_unplaced_package_are_caught(tmp_path):
    pkg = _write(tmp_path, {
        "__init__.py": "",
        "detect/__init__.py": "",
        "detect/a.py": "from ..sim import engine\n",
        "sim/__init__.py": "",
        "sim/engine.py": "",
        "extra/__init__.py": "",
    })
    found = back_edges(import_graph(pkg), {"detect": 7, "sim": 7, "__init__": 12})
    assert "dlqlens.detect.a:1 imports dlqlens.sim.engine (layer 7 detect -> layer 7 sim)" in found
    assert "dlqlens.extra: 'extra' has no layer in docs/architecture.md" in found


def test_a_file_level_cycle_is_caught(tmp_path):
    pkg = _write(tmp_path, {
        "__init__.py": "",
        "rules/__init__.py": "",
        "rules/parser.py": "from dlqlens.rules import validate\n",
        "rules/validate.py": "def f():\n    from dlqlens.rules.parser import parse\n",
    })
    assert cycles(import_graph(pkg)) == [["dlqlens.rules.parser", "dlqlens.rules.validate"]]
