"""Every finding points at real capture rows, each at most once (all detectors, all scenarios);
finding ids are stable; links are what findings count."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.spark

SCENARIOS = ROOT / "datasets" / "scenarios"


def test_findings_point_at_distinct_existing_rows(spark):
    """The rows each detector links to one finding must be distinct messages;
    ``message_count`` is the number of a finding's links; every link names a
    finding. Checked over every scenario's captures read together (so the
    expiry detector also joins snapshots of queues of the same name)."""
    from pyspark.sql import functions as F

    from dlqlens.detect import FINDINGS_COLUMNS, LINKS_COLUMNS, run_detectors
    from dlqlens.spark.session import load_capture

    df = load_capture(spark, SCENARIOS, columns=None).cache()
    try:
        findings, links = run_detectors(df)
        findings = findings.cache()
        assert tuple(findings.columns) == FINDINGS_COLUMNS and "messages" not in findings.columns
        assert tuple(links.columns) == LINKS_COLUMNS
        rows = findings.collect()
        kinds = {r.kind for r in rows}
        assert {"reason_burst", "backout_loop", "expiry_buildup", "orphaned_reply",
                "trigger_failure"} <= kinds
        ids = [r.finding_id for r in rows]
        assert len(ids) == len(set(ids))
        assert all(r.finding_id.startswith(r.kind + ":") and len(r.finding_id) == len(r.kind) + 17
                   for r in rows)
        counts = {r.finding_id: (r.n, r.distinct) for r in links.groupBy("finding_id").agg(
            F.count("*").alias("n"),
            F.countDistinct("source", "message_number").alias("distinct")).collect()}
        assert set(counts) == set(ids)  # every finding has links; no link without a finding
        assert all(counts[r.finding_id] == (r.message_count, r.message_count) and
                   r.message_count > 0 for r in rows), \
            [(r.finding_id, r.message_count, counts[r.finding_id]) for r in rows
             if counts[r.finding_id] != (r.message_count, r.message_count)]
        missing = links.join(df.select("source", "message_number"),
                             ["source", "message_number"], "left_anti").count()
        assert missing == 0
        # the same input gives the same ids (a second run, nothing cached in common)
        again = sorted(r.finding_id for r in run_detectors(df)[0].collect())
        assert again == sorted(ids)
        findings.unpersist()
    finally:
        df.unpersist()
