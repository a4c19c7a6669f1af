"""The detectors measured against the simulator's ground truth (:mod:`dlqlens.accuracy`), on small scenarios."""

from __future__ import annotations

import pytest

from dlqlens.accuracy import measure, meets_target, render

MINE = ["backout_loop", "expiry_buildup", "orphaned_reply", "reason_burst"]


@pytest.mark.parametrize("scenario", ["poison_ping_pong", "clean_baseline"])
def test_accuracy_on_small_scenarios(spark, scenario, tmp_path):
    result = measure(spark, scenario, 300, workdir=str(tmp_path), detectors=MINE)
    for kind in MINE:
        assert meets_target(result, kind, 0.95) is not False, (kind, result.cells[kind])
    if scenario == "poison_ping_pong":
        cell = result.cells["backout_loop"]
        assert cell.actual > 0 and cell.true_positives == cell.actual == cell.flagged
    page = render([result])
    assert f"| {scenario} |" in page and "## 300 messages" in page
