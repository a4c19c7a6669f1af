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


def test_the_replay_model_is_in_the_rules_page_and_names_the_whole_output_contract():
    """The processing model and output contract live in docs/rules.md ("Replay model",
    from docs/parts/replay-model.md); the replay module's docstring only points there."""
    from dlqlens.rules import replay
    from dlqlens.rules.handler import DISPOSITIONS, LEFT_REASONS

    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert page.count("\n## Replay model\n") == 1
    section = page.split("\n## Replay model\n", 1)[1].split("\n## ", 1)[0]
    for name in (*replay.OUTPUT_COLUMNS, "matched", *DISPOSITIONS, *LEFT_REASONS):
        assert f"`{name}`" in section, name
    assert "Replay model" in replay.__doc__
    assert len(replay.__doc__.strip().splitlines()) <= 15
