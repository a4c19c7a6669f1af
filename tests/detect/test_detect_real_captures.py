"""Every registered detector runs without error on the real third-party captures."""

from __future__ import annotations

import json

import pytest

from dlqlens.detect import DETECTORS, KINDS, finding_record, run_detectors
from dlqlens.spark.session import load_capture
from tests.findings_rows import collect_findings

pytestmark = pytest.mark.spark


def test_detectors_run_on_the_real_captures(spark, real_captures):
    files = sorted(str(p) for p in (real_captures / "amqsbcg").glob("*.txt"))
    files += [str(p) for p in (real_captures / "triggers-backout").glob("yespon_*.txt")]
    if not files:
        pytest.skip(f"no amqsbcg captures under {real_captures}")
    df = load_capture(spark, files).cache()
    assert df.count() >= 4
    records = [finding_record(r) for r in collect_findings(run_detectors(df))]
    df.unpersist()
    for rec in records:
        assert rec["kind"] in KINDS and rec["message_count"] == len(rec["messages"]) > 0
        assert rec["finding_id"].startswith(rec["kind"] + ":")
        json.dumps(rec)
    kinds = {rec["kind"] for rec in records}
    # one 2051 dead letter, one MQTM dead letter, plain messages: no loop, no burst,
    # no temporary reply queue; and the MQTM dead letter is a trigger failure when that
    # detector is registered
    assert not kinds & {"backout_loop", "reason_burst", "orphaned_reply"}
    if "trigger_failure" in DETECTORS:
        assert "trigger_failure" in kinds
