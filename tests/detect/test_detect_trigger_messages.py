"""trigger_storm and trigger_failure on simulated scenarios (against ground truth) and a real capture."""

from __future__ import annotations

import json
import os

import pytest

from tests.findings_rows import collect_findings
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
            truth[(record["source"], record["message_number"])] = set(record["patterns"])
    return load_capture(spark, files), truth


def _score(rows, truth, kind):
    flagged = {(os.path.basename(m["source"]), m["message_number"])
               for r in rows for m in r["messages"]}
    true_positives = sum(kind in truth.get(k, ()) for k in flagged)
    actual = sum(kind in v for v in truth.values())
    return true_positives / max(len(flagged), 1), true_positives / max(actual, 1), actual


def test_registered():
    assert DETECTORS["trigger_storm"] == "dlqlens.detect.trigger_messages:trigger_storm"
    assert DETECTORS["trigger_failure"] == "dlqlens.detect.trigger_messages:trigger_failure"


def test_trigger_storm_scenario_precision_recall_and_clean_baseline(spark, tmp_path):
    df, truth = _scenario(spark, tmp_path, "trigger_storm", 600, encoding=785)  # z/OS, CKTI
    storms = collect_findings(detector("trigger_storm")(df))
    fails = collect_findings(detector("trigger_failure")(df))
    assert tuple(storms[0].asDict()) == FINDINGS_COLUMNS + ("messages",)  # collect_findings
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
    judged = collect_findings(detector("trigger_storm")(df, queue_defs=defs))
    ev = json.loads(judged[0]["evidence"])
    assert len(judged) == 1 and ev["trigtype"] == "FIRST" and ev["trigint_ms"] == 200
    assert ev["allowed"] == int(ev["span_seconds"] * 5) + 1
    slow = parse_mqsc("ALTER QMGR TRIGINT(60000)\nDEFINE QLOCAL(APP.WORK) TRIGGER")
    judged = collect_findings(detector("trigger_storm")(df, queue_defs=slow))
    assert "item 12" in judged[0]["statement"]
    every = parse_mqsc("DEFINE QLOCAL(APP.WORK) TRIGGER TRIGTYPE(EVERY)")
    assert detector("trigger_storm")(df, queue_defs=every).findings.count() == 0

    clean, _ = _scenario(spark, tmp_path, "clean_baseline", 400)
    assert detector("trigger_storm")(clean).findings.count() == 0
    assert detector("trigger_failure")(clean).findings.count() == 0


def test_real_dead_lettered_mqtm_is_a_trigger_failure(spark, real_captures):
    from dlqlens.spark.session import load_capture

    df = load_capture(spark, [str(real_captures / REAL_DLQ)])
    rows = collect_findings(detector("trigger_failure")(df))
    assert len(rows) == 1
    f = rows[0]
    ev = json.loads(f["evidence"])
    assert ev["reason"] == 265 and ev["reason_name"] == "MQFB_APPL_CANNOT_BE_STARTED"
    assert f["queues"] == ["102881000019_2", "SYSTEM.CICS.INITIATION.QUEUE"]
    assert ev["process"] == "UNIX.PRO2" and ev["applid"] == "/bepsmbfe/bin/lib/MQcrecv"
    assert f["message_count"] == 1 and f["messages"][0]["message_number"] == 1
    assert detector("trigger_storm")(df).findings.count() == 0


TRIGGER_FRAME = (
    "source string, message_number int, md struct<Format:string>, "
    "dlh struct<Reason:int, Format:string, DestQName:string>, "
    "tm struct<StrucId:string, QName:string, ProcessName:string, ApplId:string, ApplType:int>, "
    "put_ts timestamp, dlh_put_ts timestamp")


def _initq_capture(spark, queue, count, every):
    """``count`` trigger messages for ``queue`` on an initiation-queue capture, ``every`` s apart."""
    from tests.detect.detect_frames import at

    rows = [("QM.T_APP.INITQ.raw", n, ("MQTRIG",), None,
             ("TM", queue, "P.PROC", "/opt/p/bin/server", 6), at(n * every), None)
            for n in range(1, count + 1)]
    return spark.createDataFrame(rows, TRIGGER_FRAME)


def test_a_depth_storm_is_blamed_on_trigger_turned_back_on_not_trigint(spark):
    """IBM MQ, "TriggerInterval (MQLONG)": TRIGINT is relevant only when TriggerType is
    MQTT_FIRST. "TriggerType (MQLONG)", MQTT_DEPTH: after the trigger message is written
    TriggerControl is set to MQTC_OFF until it is explicitly turned on again (condition 9), so a
    burst of DEPTH trigger messages follows TRIGGER being turned back on ("Conditions for a
    trigger event", item 13), whatever TRIGINT is."""
    from dlqlens.explain import explain_finding

    df = _initq_capture(spark, "APP.DEPTH", 12, 2.0)  # 12 in 22 s
    depth = parse_mqsc("ALTER QMGR TRIGINT(60000)\n"
                       "DEFINE QLOCAL(APP.DEPTH) TRIGGER TRIGTYPE(DEPTH) TRIGDPTH(5)")
    (f,) = collect_findings(detector("trigger_storm")(df, queue_defs=depth))
    ev = json.loads(f["evidence"])
    assert ev["trigtype"] == "DEPTH" and ev["count"] == 12
    # judged by TRIGINT it would be "more than the 1 TRIGINT allows (item 12)": not for DEPTH
    assert ev["allowed"] is None and ev["item"] == 13
    assert "item 13" in f["statement"] and "TRIGGER back on" in f["statement"]
    assert "item 12" not in f["statement"] and "TRIGINT allows" not in f["statement"]
    text = explain_finding(f).to_text()
    assert "TRIGGER" in text and "DISPLAY QLOCAL('APP.DEPTH') TRIGGER TRIGTYPE TRIGDPTH" in text

    # the same burst on a FIRST queue is judged by TRIGINT: 1 allowed in 22 s -> item 12
    first = parse_mqsc("ALTER QMGR TRIGINT(60000)\nDEFINE QLOCAL(APP.DEPTH) TRIGGER "
                       "TRIGTYPE(FIRST)")
    (f,) = collect_findings(detector("trigger_storm")(df, queue_defs=first))
    ev = json.loads(f["evidence"])
    assert ev["allowed"] == 1 and ev["item"] == 12 and "item 12" in f["statement"]
    # and with a TRIGINT that lets them all through, TRIGINT is too low (item 11)
    low = parse_mqsc("ALTER QMGR TRIGINT(1000)\nDEFINE QLOCAL(APP.DEPTH) TRIGGER TRIGTYPE(FIRST)")
    (f,) = collect_findings(detector("trigger_storm")(df, queue_defs=low))
    ev = json.loads(f["evidence"])
    assert ev["allowed"] == 23 and ev["item"] == 11 and "TRIGINT is too low" in f["statement"]
    # without definitions nothing is blamed, and the statement names the three possibilities
    (f,) = collect_findings(detector("trigger_storm")(df))
    assert json.loads(f["evidence"])["item"] is None and "item 13" in f["statement"]


def test_bundled_trigger_storm_scenario_has_its_storm(spark, datasets):
    """datasets/scenarios/trigger_storm: 3 re-trigger messages still wait on APP.INITQ, 25 more
    were dead-lettered by the trigger monitor (265). All 28 were made by the queue manager for
    APP.WORK within seconds: one storm, whose dead-lettered part is also a trigger failure."""
    from dlqlens.spark.session import load_capture

    out = datasets.parent / "scenarios" / "trigger_storm"
    files = sorted(str(p) for p in out.glob("*.raw"))
    truth = {}
    with open(out / "ground_truth.jsonl") as fh:
        for line in fh:
            record = json.loads(line)
            truth[(record["source"], record["message_number"])] = set(record["patterns"])
    df = load_capture(spark, files)
    (storm,) = collect_findings(detector("trigger_storm")(df))
    precision, recall, actual = _score([storm], truth, "trigger_storm")
    assert actual == 28 and precision == recall == 1.0, (precision, recall, actual)
    ev = json.loads(storm["evidence"])
    assert storm["queues"] == ["APP.WORK"] and ev["count"] == 28 and ev["dead_lettered"] == 25
    assert "25 of these trigger messages are on a dead-letter queue" in storm["statement"]
    (failure,) = collect_findings(detector("trigger_failure")(df))
    assert _score([failure], truth, "trigger_failure")[:2] == (1.0, 1.0)
