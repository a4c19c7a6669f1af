"""``dlqlens.mq`` is the foundation: it imports nothing of dlqlens but ``dlqlens.errors``
and itself (not the simulator, the readers, Spark, rules, detectors, reports or
the trigger evaluator), at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import dlqlens.mq

MQ_DIR = Path(dlqlens.mq.__file__).parent


def _dlqlens_imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "dlqlens")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == "dlqlens":
            out.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            out.add("." * node.level + (node.module or ""))
    return out


def test_mq_imports_only_errors_and_itself():
    files = sorted(MQ_DIR.glob("*.py"))
    assert {p.name for p in files} >= {"constants.py", "structs.py", "chaining.py",
                                       "vocabulary.py", "mqsc.py"}
    bad = {}
    for p in files:
        wrong = {m for m in _dlqlens_imports(p)
                 if m != "dlqlens.errors" and m != "dlqlens.mq" and not m.startswith("dlqlens.mq.")}
        if wrong:
            bad[p.name] = sorted(wrong)
    assert bad == {}


def test_the_check_sees_an_import_of_the_simulator(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f():\n    from dlqlens.sim.qmgr import QLOCAL_DEFAULTS\n", encoding="utf-8")
    assert _dlqlens_imports(p) == {"dlqlens.sim.qmgr"}
