"""Orphaned-reply and reason-burst detectors (dlqlens/detect/orphans.py, bursts.py)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from detect_frames import frame, msgid, row

from tests.findings_rows import collect_findings
from dlqlens.detect import bursts, orphans

pytestmark = pytest.mark.spark

DLQ = "QM.FRONT_SYSTEM.DEAD.LETTER.QUEUE.raw"


def test_orphaned_replies_grouped_by_requester(spark):
    rows = []
    for i in range(1, 5):   # replies from quote-engine to vanished AMQ.* queues of QM.FRONT
        rows.append(row(DLQ, i, reason=2085, dest_qname=f"AMQ.{i:016X}", dest_qmgr_name="QM.FRONT",
                        msg_type=2, correl_id=msgid(i, "QM.FRONT"), put_appl_name="quote-engine",
                        put=i, dlh_put=i))
    rows.append(row(DLQ, 5, reason=2052, dest_qname="AMQ.00000000000000AA",
                    dest_qmgr_name="QM.FRONT", msg_type=4, correl_id=msgid(5, "QM.FRONT"),
                    put_appl_name="QM.BACK", user="portal", put=5, dlh_put=5))
    rows.append(row(DLQ, 6, reason=2085, dest_qname="QUOTE.REPLY.0001", dest_qmgr_name="QM.OTHER",
                    msg_type=2, correl_id=b"\0" * 24, put=6, dlh_put=6))
    rows.append(row(DLQ, 7, reason=2048, dest_qname="AMQ.00000000000000BB",
                    dest_qmgr_name="QM.FRONT", msg_type=2, put=7,
                    dlh_put=7))      # persistent to a temporary queue: not it
    rows.append(row(DLQ, 8, reason=2085, dest_qname="STOCK.QRY", msg_type=8, put=8, dlh_put=8))
    found = collect_findings(orphans.detect(frame(spark, rows)))
    assert len(found) == 1
    [f] = found
    ev = json.loads(f.evidence)
    assert f.queues == ["AMQ.*"] and ev["requester_qmgr"] == "QM.FRONT"
    assert ev["replies"] == 4 and ev["reports"] == 1 and ev["distinct_queues"] == 5
    assert ev["reasons"] == {"2085": 4, "2052": 1}
    assert sorted(m.message_number for m in f.messages) == [1, 2, 3, 4, 5]
    with_model = collect_findings(orphans.detect(frame(spark, rows),
                                                 model_prefixes=["QUOTE.REPLY.*"]))
    assert sorted(json.loads(g.evidence)["queue_prefix"] for g in with_model) == \
        ["AMQ.", "QUOTE.REPLY."]
    with pytest.raises(ValueError):
        orphans.detect(frame(spark, rows), reasons=())


def test_bursts_onset_end_and_rate_but_not_the_trickle(spark):
    rows = []
    n = 0
    for i in range(30):          # 30 dead letters at 2 a second from t=100
        n += 1
        rows.append(row(DLQ, n, reason=2053, dest_qname="ORDERS.IN", put=100 + i / 2,
                        dlh_put=100 + i / 2, reason_name="MQRC_Q_FULL"))
    for i in range(30):          # 30 more after a 10-minute pause
        n += 1
        rows.append(row(DLQ, n, reason=2053, dest_qname="ORDERS.IN", put=800 + i / 2,
                        dlh_put=800 + i / 2, reason_name="MQRC_Q_FULL"))
    for i in range(40):          # a steady trickle: one every 20 s
        n += 1
        rows.append(row(DLQ, n, reason=2085, dest_qname="ARCHVE", put=i * 20, dlh_put=i * 20))
    for i in range(20):          # backout-threshold dead letters: the backout detector's
        n += 1
        rows.append(row(DLQ, n, reason=2362, dest_qname="APP.IN", put=300 + i, dlh_put=300 + i))
    found = sorted(collect_findings(bursts.detect(frame(spark, rows))),
                   key=lambda f: f.window_start)
    assert [f.queues for f in found] == [["ORDERS.IN"], ["ORDERS.IN"]]
    first, second = (json.loads(f.evidence) for f in found)
    assert first["messages"] == 30 and first["first_message"]["message_number"] == 1
    assert first["last_message"]["message_number"] == 30
    assert first["duration_seconds"] == 14.5 and first["quiet_before_seconds"] is None
    assert first["ongoing_at_capture"] is False and found[0].severity == "medium"
    assert "it had ended 700 s before the capture" in found[0].statement
    assert second["quiet_before_seconds"] == pytest.approx(685.5)
    # it ends with the capture's latest put, and the capture holds no time: unknown, not "going on"
    assert second["ongoing_at_capture"] is None and found[1].severity == "medium"
    assert "whether it went on is unknown" in found[1].statement
    assert found[0].statement.startswith("Burst of 30 dead letters with MQRC_Q_FULL (2053)")
    # a capture time 20 s after its last dead letter shows it still going (SEVERITY_SCALE: high)
    last = found[1].window_end
    at = collect_findings(bursts.detect(frame(spark, rows),
                                        capture_time=last + timedelta(seconds=20)))
    going = max(at, key=lambda f: f.window_start)
    assert json.loads(going.evidence)["ongoing_at_capture"] is True and going.severity == "high"
    assert "still going when the capture was taken" in going.statement
    assert "the capture time given" in going.statement
    later = collect_findings(bursts.detect(frame(spark, rows),
                                           capture_time=last + timedelta(seconds=600)))
    assert {f.severity for f in later} == {"medium"}
    with_all = collect_findings(bursts.detect(frame(spark, rows), exclude_reasons=()))
    assert sorted(f.queues[0] for f in with_all) == ["APP.IN", "ORDERS.IN", "ORDERS.IN"]
    slow = collect_findings(bursts.detect(frame(spark, rows), min_rate=0.04, max_gap=30))
    assert "ARCHVE" in {f.queues[0] for f in slow}
    with pytest.raises(ValueError):
        bursts.detect(frame(spark, rows), max_gap=0)
