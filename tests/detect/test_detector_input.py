"""``detector_input``: the part of a capture the detectors read, which ``dlqlens
detect`` caches instead of the whole capture. Every detector gives the same
findings and links over it as over the capture itself."""

from __future__ import annotations

import pytest

from tests.conftest import DATASETS, ROOT

pytestmark = pytest.mark.spark


def _outcome(found):
    findings, links = found
    rows = sorted((r.asDict(recursive=True) for r in findings.collect()),
                  key=lambda r: r["finding_id"])
    return rows, sorted(tuple(r) for r in links.collect())


def _compare(df, **params):
    from dlqlens.detect import detector_input, run_detectors

    full = _outcome(run_detectors(df, **params))
    part = detector_input(df).cache()
    try:
        pruned = _outcome(run_detectors(part, **params))
    finally:
        part.unpersist()
    assert full[0], "no finding: the comparison would show nothing"
    assert pruned[0] == full[0]
    assert pruned[1] == full[1]
    return full


def test_the_sample_gives_the_same_findings_and_links(cached_sample):
    from dlqlens.capture.reader import ReadOptions, captured_queues, plan_pieces
    from dlqlens.mq.mqsc import read_queue_defs

    queues = captured_queues(plan_pieces([str(DATASETS)], ReadOptions(format="auto")))
    findings, links = _compare(cached_sample,
                               queue_defs=read_queue_defs(str(ROOT / "datasets/mqsc/qm.mqsc")),
                               capture_queues=queues)
    assert len(findings) == 13 and links


@pytest.mark.parametrize("paths, kind", [
    # a poison message re-put under new MsgIds: the backout detector's payload digests
    (["datasets/scenarios/poison_ping_pong"], "backout_loop"),
    # two snapshots of one queue: which messages vanished by expiry (MsgIds across captures)
    (["datasets/snapshots/dlq_store_0922.dmp", "datasets/snapshots/dlq_store_0925.dmp"],
     "expiry_buildup"),
    # trigger messages: the MQTM fields
    (["datasets/scenarios/trigger_storm"], "trigger_storm"),
])
def test_scenarios_give_the_same_findings_and_links(spark, paths, kind):
    from dlqlens.spark.session import load_capture

    df = load_capture(spark, [str(ROOT / p) for p in paths]).cache()
    try:
        findings, _ = _compare(df)
    finally:
        df.unpersist()
    assert kind in {f["kind"] for f in findings}


def test_it_keeps_only_what_the_detectors_read(cached_sample):
    """No message bytes, no header bytes, no decode issues: the structures
    hold only the listed fields, and a null structure stays null."""
    from pyspark.sql import functions as F

    from dlqlens.detect import DETECTOR_COLUMNS, DETECTOR_FIELDS, detector_input

    part = detector_input(cached_sample)
    assert part.columns == [*DETECTOR_COLUMNS, "md", "dlh", "tm", "payload_sha256"]
    for name, fields in DETECTOR_FIELDS.items():
        assert part.schema[name].dataType.fieldNames() == list(fields)
    row = part.select(
        F.sum(F.when(F.col("dlh").isNull(), 1).otherwise(0)).alias("no_dlh"),
        F.sum(F.when(F.col("tm").isNull(), 1).otherwise(0)).alias("no_tm"),
        F.sum(F.when(F.col("payload_sha256").isNull(), 1).otherwise(0)).alias("no_digest"),
    ).first()
    whole = cached_sample.select(
        F.sum(F.when(F.col("dlh").isNull(), 1).otherwise(0)).alias("no_dlh"),
        F.sum(F.when(F.col("tm").isNull(), 1).otherwise(0)).alias("no_tm"),
        F.sum(F.when(F.coalesce(F.length("payload"), F.lit(0)) == 0, 1).otherwise(0))
        .alias("no_digest"),
    ).first()
    assert row.asDict() == whole.asDict()
    assert whole["no_tm"] > 0  # most of the sample's messages hold no MQTM


def test_the_analyses_input_drops_only_the_bytes_and_keeps_the_findings(cached_sample):
    """analysis_input (what the report, ``dlqlens summary`` and the audit cache): every
    column but the message bytes and their text, plus the payload digest; the
    same findings and links as the whole capture, and the digests the
    detectors' own input computes."""
    from pyspark.sql import functions as F

    from dlqlens.detect import BYTE_COLUMNS, analysis_input, detector_input, run_detectors

    part = analysis_input(cached_sample)
    assert set(BYTE_COLUMNS) <= set(cached_sample.columns)
    assert part.columns == [c for c in cached_sample.columns if c not in BYTE_COLUMNS] + [
        "payload_sha256"]
    assert analysis_input(part).columns == part.columns  # the digest is not computed twice
    # without the digest (the summary's cache): no payload read for it
    assert analysis_input(cached_sample, digest=False).columns == part.columns[:-1]
    keys = ["source", "message_number", "payload_sha256"]
    assert (part.select(*keys).exceptAll(detector_input(cached_sample).select(*keys)).count()
            == 0)
    assert part.where(F.col("payload_sha256").isNotNull()).count() > 0
    whole = _outcome(run_detectors(cached_sample))
    cached = part.cache()
    try:
        assert _outcome(run_detectors(cached)) == whole
    finally:
        cached.unpersist()
