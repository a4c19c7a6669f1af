"""Reference pages derived from code are up to date."""

from __future__ import annotations

import importlib
import importlib.util

from tests.conftest import ROOT


def test_columns_page_matches_the_code():
    spec = importlib.util.spec_from_file_location("docs_build", ROOT / "docs" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    committed = (ROOT / "docs" / "columns.md").read_text(encoding="utf-8")
    assert committed == build.columns_md(), "run: python docs/build.py"
    assert "| 8 | 4 | MQLONG | `Reason` |" in committed  # MQDLH.Reason at offset 8


def test_rules_page_matches_the_code():
    spec = importlib.util.spec_from_file_location("docs_build", ROOT / "docs" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == build.rules_md(), "run: python docs/build.py"
    # every diagnostic and lint code of the code tables is documented
    for mod in ("validate", "lint"):
        for code in importlib.import_module(f"dlqlens.rules.{mod}").CODES:
            assert f"| `{code}` |" in committed
