"""Backout-loop detector (dlqlens/detect/backout.py) on hand-built frames and a simulated run."""

from __future__ import annotations

import json

import pytest
from detect_frames import frame, msgid, row

from tests.findings_rows import collect_findings
from dlqlens.detect import backout

pytestmark = pytest.mark.spark

DLQ = "QM.T_SYSTEM.DEAD.LETTER.QUEUE.raw"


def signals(findings):
    out = {}
    for f in collect_findings(findings):
        ev = json.loads(f.evidence)
        out[(ev["signal"], ev["queue"])] = sorted(m.message_number for m in f.messages)
        assert f.kind == "backout_loop" and f.message_count == len(f.messages)
    return out


def test_each_signal_on_a_hand_built_capture(spark):
    later = "QM.T_SYSTEM.DEAD.LETTER.QUEUE.2.raw"
    rows = [
        # 1-2: dead-lettered with MQRC_BACKOUT_THRESHOLD_REACHED for APP.IN
        row(DLQ, 1, reason=2362, dest_qname="APP.IN", put=1, dlh_put=30),
        row(DLQ, 2, reason=2362, dest_qname="APP.IN", put=2, dlh_put=40),
        # 3: an ordinary dead letter (queue full), BackoutCount 0: nothing to say
        row(DLQ, 3, reason=2053, dest_qname="ORDERS.IN", put=3, dlh_put=41),
        # 4: the same message as 1 dead-lettered again later (second snapshot)
        row(later, 1, msg_id=msgid(1), reason=2362, dest_qname="APP.IN", put=1, dlh_put=90),
    ]
    app_in = "QM.T_APP.IN.raw"
    rows += [
        row(app_in, 1, msg_id=msgid(50), put=10),             # older than the last 2362: ping-pong
        row(app_in, 2, msg_id=msgid(51), put=95),             # newer than every 2362 dead letter
        row(app_in, 3, msg_id=msgid(52), put=96, backout_count=5),  # count climbs
        row(app_in, 4, msg_id=msgid(53), put=97, backout_count=1),  # once, below threshold
    ]
    rows += [row("QM.T_PAY.BOQ.raw", 1, msg_id=msgid(70), put=5)]
    found = signals(backout.detect(frame(spark, rows)))
    assert found[("threshold_reached", "APP.IN")] == [1, 1, 2]  # DLQ#1, later#1, DLQ#2
    assert found[("redelivered", "APP.IN")] == [1, 1]
    assert found[("ping_pong", "APP.IN")] == [1, 3, 4]
    assert found[("backout_count", "APP.IN")] == [3]
    assert found[("backed_out", "APP.IN")] == [4]
    assert found[("backout_queue", "PAY.BOQ")] == [1]
    assert not any(q == "ORDERS.IN" for _, q in found)


def test_queue_definitions_set_threshold_and_backout_queue(spark):
    rows = [row("QM.T_WORK.IN.raw", 1, backout_count=2, put=1),
            row("QM.T_WORK.IN.raw", 2, backout_count=1, put=2),
            row("QM.T_PARKED.raw", 1, put=3)]
    defs = {"WORK.IN": {"bothresh": 2, "boqname": ""},
            "OTHER.IN": {"bothresh": 4, "boqname": "PARKED"}}
    findings = collect_findings(backout.detect(frame(spark, rows), queue_defs=defs))
    by_signal = {json.loads(f.evidence)["signal"]: f for f in findings}
    count = by_signal["backout_count"]
    assert [m.message_number for m in count.messages] == [1]
    assert count.severity == "high" and "no BOQNAME" in count.statement
    ev = json.loads(count.evidence)
    assert ev["bothresh"] == 2 and ev["threshold"] == 2 and ev["boqname"] is None
    assert [m.source for m in by_signal["backout_queue"].messages] == ["QM.T_PARKED.raw"]
    below = by_signal["backed_out"]
    assert [m.message_number for m in below.messages] == [2] and below.severity == "low"


def test_payload_digest_finds_reputs_under_new_msgids(spark):
    rows = [row(DLQ, i, msg_id=msgid(100 + i), reason=2085, dest_qname="X.IN", payload=b"same body",
                put=i, dlh_put=10 + i) for i in range(1, 4)]
    rows.append(row(DLQ, 9, msg_id=msgid(200), reason=2085, dest_qname="X.IN", payload=b"other",
                    put=9, dlh_put=19))
    found = signals(backout.detect(frame(spark, rows)))
    assert found == {("redelivered", "X.IN"): [1, 2, 3]}
    assert signals(backout.detect(frame(spark, rows), min_repeats=4)) == {}


def test_the_msgids_under_one_payload_are_counted_exactly(spark):
    """2,000 dead letters of one payload under 1,500 MsgIds (500 of them put twice):
    the statement gives 1,500, counted exactly (a HyperLogLog window, as before,
    estimated it), and every row is a redelivered message."""
    rows = [row(DLQ, i, msg_id=msgid(i % 1500), reason=2085, dest_qname="X.IN",
                payload=b"same body", put=i, dlh_put=i + 10) for i in range(2000)]
    findings = collect_findings(backout.detect(frame(spark, rows)))
    assert len(findings) == 1 and findings[0].message_count == 2000
    assert "the same payload under 1500 MsgIds" in findings[0].statement
    assert json.loads(findings[0].evidence)["distinct_msgids"] == 1500


def test_bad_parameters_are_refused(spark):
    df = frame(spark, [row(DLQ, 1)])
    with pytest.raises(ValueError, match="backout_threshold"):
        backout.detect(df, backout_threshold=0)
    with pytest.raises(ValueError, match="min_backout_count"):
        backout.detect(df, min_backout_count=0)
    with pytest.raises(ValueError, match="min_repeats"):
        backout.detect(df, min_repeats=1)
