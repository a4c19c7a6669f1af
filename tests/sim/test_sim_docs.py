"""docs/simulator.md stays in step with the simulator: every scenario, pattern, CLI option
and dataset run it must describe is there."""

from __future__ import annotations

import importlib.util

from dlqlens.sim import SCENARIOS
from dlqlens.sim.capture import PATTERNS
from tests.conftest import ROOT

PAGE = (ROOT / "docs" / "simulator.md").read_text(encoding="utf-8")


def _generator():
    spec = importlib.util.spec_from_file_location("generate", ROOT / "datasets" / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_scenario_and_pattern_is_documented():
    for name in SCENARIOS:
        assert f"| `{name}` |" in PAGE, name
    for pattern in PATTERNS:
        assert f"`{pattern}`" in PAGE, pattern


def test_every_cli_option_is_documented():
    import argparse

    from dlqlens.commands.simulate import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    sub = parser._subparsers._group_actions[0].choices["simulate"]
    options = {o for a in sub._actions for o in a.option_strings if o.startswith("--")}
    assert options - {"--help"} == {"--list", "--size", "--format", "--encoding", "--ccsid",
                                    "--seed", "--start", "--amqsbcg-layout", "--out", "--qmgr"}
    for option in options - {"--help"}:
        assert option in PAGE, option


def test_the_dataset_table_matches_the_generator():
    gen = _generator()
    for name, (scenario, size, *_rest) in gen.SAMPLE.items():
        assert f"| `{name}` | {scenario} ({size}) |" in PAGE, name
    assert set(gen.SCENARIO_RUNS) == set(SCENARIOS)
    for name, spec in gen.SAMPLE.items():
        assert f"| {spec[0]} ({spec[1]}) | {spec[5]} |" in PAGE, name
