"""Reference pages derived from code are up to date."""

from __future__ import annotations

import importlib.util

from tests.conftest import ROOT


def test_columns_page_matches_the_code():
    spec = importlib.util.spec_from_file_location("docs_build", ROOT / "docs" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    committed = (ROOT / "docs" / "columns.md").read_text(encoding="utf-8")
    assert committed == build.columns_md(), "run: python docs/build.py"
    assert "| 8 | 4 | MQLONG | `Reason` |" in committed  # MQDLH.Reason at offset 8
