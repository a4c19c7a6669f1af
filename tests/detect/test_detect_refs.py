"""Every finding points at real capture rows, each at most once (all detectors, all scenarios)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.spark

SCENARIOS = ROOT / "datasets" / "scenarios"


def test_findings_point_at_distinct_existing_rows(spark):
    """``sorted_refs`` collects a list, not a set: the rows each detector
    groups must be distinct messages. Checked over every scenario's captures
    read together (so the expiry detector also joins snapshots of queues of
    the same name)."""
    from pyspark.sql import functions as F

    from dlqlens.detect import run
    from dlqlens.spark.session import load_capture

    df = load_capture(spark, SCENARIOS, columns=None).cache()
    try:
        findings = run(df).cache()
        kinds = {r.kind for r in findings.select("kind").distinct().collect()}
        assert {"reason_burst", "backout_loop", "expiry_buildup", "orphaned_reply",
                "trigger_failure"} <= kinds
        sizes = findings.select("kind", F.size("messages").alias("n"),
                                F.size(F.array_distinct("messages")).alias("distinct")).collect()
        assert all(r.n > 0 and r.n == r.distinct for r in sizes), \
            [r for r in sizes if r.n != r.distinct]
        refs = findings.select(F.explode("messages").alias("m")).select("m.*")
        missing = refs.join(df.select("source", "message_number"),
                            ["source", "message_number"], "left_anti").count()
        assert missing == 0
    finally:
        df.unpersist()
