"""trigger_storm and trigger_failure on simulated scenarios (against ground truth) and a real capture."""

from __future__ import annotations

import json
import os

import pytest

from dlqlens.detect import DETECTORS, detector
from dlqlens.detect.findings import FINDINGS_COLUMNS
from dlqlens.mq.mqsc import parse_mqsc

pytestmark = pytest.mark.spark

REAL_DLQ = ("triggers-backout/"
            "yespon_amqsbcg_DLQ_bigendian_DLH_wrapping_MQTM_MQFB_APPL_CANNOT_BE_STARTED.txt")


def _scenario(spark, tmp_path, name, size, **simulate_options):
    from dlqlens.sim.runner import simulate
    from dlqlens.spark.session import load_capture

    out = tmp_path / name
    manifest = simulate(name, size, str(out), format="raw", **simulate_options)
    files = [str(out / c["file"]) for c in manifest["captures"]]
    truth = {}
    with open(out / "ground_truth.jsonl") as fh:
        for line in fh:
            record = json.loads(line)
            truth[(record["source"], record["message_number"])] = record["pattern"]
    return load_capture(spark, files), truth


def _score(rows, truth, kind):
    flagged = {(os.path.basename(m["source"]), m["message_number"])
               for r in rows for m in r["messages"]}
    true_positives = sum(truth.get(k) == kind for k in flagged)
    actual = sum(v == kind for v in truth.values())
    return true_positives / max(len(flagged), 1), true_positives / max(actual, 1), actual


def test_registered():
    assert DETECTORS["trigger_storm"] == "dlqlens.detect.trigger_messages:trigger_storm"
    assert DETECTORS["trigger_failure"] == "dlqlens.detect.trigger_messages:trigger_failure"


def test_trigger_storm_scenario_precision_recall_and_clean_baseline(spark, tmp_path):
    df, truth = _scenario(spark, tmp_path, "trigger_storm", 600, encoding=785)  # z/OS, CKTI
    storms = detector("trigger_storm")(df).collect()
    fails = detector("trigger_failure")(df).collect()
    assert tuple(storms[0].asDict()) == FINDINGS_COLUMNS
    precision, recall, actual = _score(storms, truth, "trigger_storm")
    assert actual > 5 and precision >= 0.95 and recall >= 0.95, (precision, recall, actual)
    precision, recall, actual = _score(fails, truth, "trigger_failure")
    assert actual > 5 and precision >= 0.95 and recall >= 0.95, (precision, recall, actual)
    s = storms[0]
    assert s["queues"] == ["APP.WORK"] and s["severity"] in ("high", "medium")
    ev = json.loads(s["evidence"])
    assert ev["process"] == "WORK.PROC" and ev["count"] == s["message_count"]
    f = fails[0]
    assert f["queues"] == ["APP.WORK", "APP.INITQ"]
    assert json.loads(f["evidence"])["reason_name"] == "MQFB_APPL_CANNOT_BE_STARTED"

    # with the queue definitions: judged against TRIGINT (item 11); EVERY queues are not storms
    defs = parse_mqsc("ALTER QMGR TRIGINT(200)\nDEFINE QLOCAL(APP.WORK) TRIGGER TRIGTYPE(FIRST)")
    judged = detector("trigger_storm")(df, queue_defs=defs).collect()
    ev = json.loads(judged[0]["evidence"])
    assert len(judged) == 1 and ev["trigtype"] == "FIRST" and ev["trigint_ms"] == 200
    assert ev["allowed"] == int(ev["span_seconds"] * 5) + 1
    slow = parse_mqsc("ALTER QMGR TRIGINT(60000)\nDEFINE QLOCAL(APP.WORK) TRIGGER")
    judged = detector("trigger_storm")(df, queue_defs=slow).collect()
    assert "item 12" in judged[0]["statement"]
    every = parse_mqsc("DEFINE QLOCAL(APP.WORK) TRIGGER TRIGTYPE(EVERY)")
    assert detector("trigger_storm")(df, queue_defs=every).count() == 0

    clean, _ = _scenario(spark, tmp_path, "clean_baseline", 400)
    assert detector("trigger_storm")(clean).count() == 0
    assert detector("trigger_failure")(clean).count() == 0


def test_real_dead_lettered_mqtm_is_a_trigger_failure(spark, real_captures):
    from dlqlens.spark.session import load_capture

    df = load_capture(spark, [str(real_captures / REAL_DLQ)])
    rows = detector("trigger_failure")(df).collect()
    assert len(rows) == 1
    f = rows[0]
    ev = json.loads(f["evidence"])
    assert ev["reason"] == 265 and ev["reason_name"] == "MQFB_APPL_CANNOT_BE_STARTED"
    assert f["queues"] == ["102881000019_2", "SYSTEM.CICS.INITIATION.QUEUE"]
    assert ev["process"] == "UNIX.PRO2" and ev["applid"] == "/bepsmbfe/bin/lib/MQcrecv"
    assert f["message_count"] == 1 and f["messages"][0]["message_number"] == 1
    assert detector("trigger_storm")(df).count() == 0
