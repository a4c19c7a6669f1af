"""unknown_destination and persistent_reply (dlqlens/detect/destinations.py): hand-built
frames, and the bundled scenarios against their ground truth."""

from __future__ import annotations

import json

import pytest
from detect_frames import frame, row

from tests.findings_rows import collect_findings
from dlqlens.detect import DETECTORS, detector
from dlqlens.detect.findings import FINDINGS_COLUMNS
from dlqlens.explain import explain_finding

pytestmark = pytest.mark.spark

DLQ = "QM.HUB_SYSTEM.DEAD.LETTER.QUEUE.raw"


def _mixed(spark):
    rows = [  # one stray 2085 hours apart from the next: no burst, still a finding
        row(DLQ, 1, reason=2085, dest_qname="STOCK.QRY", dest_qmgr_name="QM.HUB",
            put_appl_name="stock-ui", user="webapp", put=0, dlh_put=0),
        row(DLQ, 2, reason=2085, dest_qname="STOCK.QRY", dest_qmgr_name="QM.HUB",
            put_appl_name="stock-ui", user="webapp", put=7200, dlh_put=7200),
        row(DLQ, 3, reason=2085, dest_qname="LEDGER.REPORT", dest_qmgr_name="QM.HUB",
            put_appl_name="ledger-report", put=30, dlh_put=30),
        # a reply to a vanished temporary dynamic queue: orphaned_reply's, not these detectors'
        row(DLQ, 4, reason=2085, dest_qname="AMQ.0000000A00000001", dest_qmgr_name="QM.FRONT",
            msg_type=2, put=40, dlh_put=40),
        # persistent replies refused by temporary dynamic queues of QM.FRONT (2048)
        row(DLQ, 5, reason=2048, dest_qname="AMQ.0000000A00000002", dest_qmgr_name="QM.FRONT",
            msg_type=2, put_appl_name="quote-engine", user="quotes", persistence=1, put=50,
            dlh_put=50),
        row(DLQ, 6, reason=2048, dest_qname="AMQ.0000000A00000003", dest_qmgr_name="QM.FRONT",
            msg_type=2, put_appl_name="quote-engine", user="quotes", persistence=1, put=60,
            dlh_put=60),
        # 2048 for a queue that is not temporary (z/OS shared queue, RECOVER(NO)): not a reply
        row(DLQ, 7, reason=2048, dest_qname="SHARED.Q", dest_qmgr_name="QM.HUB", persistence=1,
            put=70, dlh_put=70),
        row(DLQ, 8, reason=2053, dest_qname="STOCK.QRY", put=80, dlh_put=80),
    ]
    return frame(spark, rows)


def test_registered():
    assert DETECTORS["unknown_destination"] == "dlqlens.detect.destinations:unknown_destination"
    assert DETECTORS["persistent_reply"] == "dlqlens.detect.destinations:persistent_reply"


def test_unknown_destination_at_any_rate_one_finding_per_destination(spark):
    """IBM MQ, "2085 (0825) (RC2085): MQRC_UNKNOWN_OBJECT_NAME": the queue is not defined on
    the queue manager that put to it; two dead letters two hours apart are a finding."""
    found = {r["queues"][0]: r
             for r in collect_findings(detector("unknown_destination")(_mixed(spark)))}
    assert set(found) == {"STOCK.QRY", "LEDGER.REPORT"}  # not AMQ.*, not 2053
    f = found["STOCK.QRY"]
    assert tuple(f.asDict()) == FINDINGS_COLUMNS + ("messages",)  # collect_findings adds them
    assert sorted(m["message_number"] for m in f["messages"]) == [1, 2]
    ev = json.loads(f["evidence"])
    assert ev["messages"] == 2 and ev["dest_qmgr"] == "QM.HUB" and ev["senders"] == ["stock-ui"]
    assert ev["span_seconds"] == 7200 and ev["reason"] == 2085
    assert f["severity"] == "medium"  # no capture time: not shown still arriving
    assert "STOCK.QRY on QM.HUB" in f["statement"] and "2085" in f["statement"]
    text = explain_finding(f).to_text()
    assert "DISPLAY QUEUE('STOCK.QRY')" in text
    assert "DISPLAY QREMOTE(*) WHERE(RNAME EQ 'STOCK.QRY')" in text
    # still arriving at a known capture time: high
    (late,) = [r for r in collect_findings(detector("unknown_destination")(
        _mixed(spark), capture_time="2024-03-15T10:00:30Z"))
        if r["queues"] == ["STOCK.QRY"]]
    assert late["severity"] == "high" and "Still arriving" in late["statement"]
    with pytest.raises(ValueError, match="min_messages"):
        detector("unknown_destination")(_mixed(spark), min_messages=0)


def test_persistent_reply_groups_2048_to_temporary_dynamic_queues(spark):
    """IBM MQ, "2048 (0800) (RC2048): MQRC_PERSISTENT_NOT_ALLOWED" and "Persistence (MQLONG)":
    persistent messages cannot be placed on temporary dynamic queues."""
    (f,) = collect_findings(detector("persistent_reply")(_mixed(spark)))
    assert f["queues"] == ["AMQ.*"]
    assert sorted(m["message_number"] for m in f["messages"]) == [5, 6]  # not SHARED.Q
    ev = json.loads(f["evidence"])
    assert ev["reply_qmgr"] == "QM.FRONT" and ev["replies"] == 2 and ev["persistent"] == 2
    assert ev["distinct_queues"] == 2 and ev["senders"] == ["quote-engine"]
    assert f["severity"] == "medium" and "PERMDYN" in f["statement"]
    text = explain_finding(f).to_text()
    assert "DISPLAY QMODEL(*) DEFTYPE DEFPSIST" in text
    assert "REASON(MQRC_PERSISTENT_NOT_ALLOWED)" in text


def _bundled(spark, datasets, scenario):
    from dlqlens.spark.session import load_capture

    out = datasets.parent / "scenarios" / scenario
    truth = {}
    with open(out / "ground_truth.jsonl") as fh:
        for line in fh:
            record = json.loads(line)
            truth[(record["source"], record["message_number"])] = set(record["patterns"])
    return load_capture(spark, sorted(str(p) for p in out.glob("*.raw"))), truth


def _flagged(rows):
    import os

    return {(os.path.basename(m["source"]), m["message_number"])
            for r in rows for m in r["messages"]}


@pytest.mark.parametrize("scenario,kind", [("orphaned_replies", "persistent_reply"),
                                           ("permissions_change", "unknown_destination"),
                                           ("clean_baseline", "unknown_destination")])
def test_bundled_scenarios_against_ground_truth(spark, datasets, scenario, kind):
    df, truth = _bundled(spark, datasets, scenario)
    flagged = _flagged(collect_findings(detector(kind)(df)))
    actual = {k for k, v in truth.items() if kind in v}
    assert actual and flagged == actual, (len(flagged), len(actual))
