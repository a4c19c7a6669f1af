"""Per-finding explanations (dlqlens/explain/finding.py), from finding records."""

from __future__ import annotations

import json

import pytest

from dlqlens.explain.finding import EVIDENCE, MessageFilter, explain_finding

SRC = "datasets/dlq-sample/dlq_linux_x86.raw"


def refs(source, numbers):
    return [{"source": source, "message_number": n} for n in numbers]


def burst(**ev_over):
    ev = {"reason": 2053, "reason_name": "MQRC_Q_FULL", "dest_queue": "ORDERS.IN",
          "dest_qmgr": "QM.ORDERS", "messages": 5,
          "first_message": {"source": SRC, "message_number": 1},
          "last_message": {"source": SRC, "message_number": 7}, "duration_seconds": 8.91,
          "rate_per_second": 11.4478, "peak_per_minute": 102, "quiet_before_seconds": None,
          "ongoing_at_capture": None}
    ev.update(ev_over)
    return {"kind": "reason_burst", "severity": "medium", "queues": [ev["dest_queue"]],
            "window_start": "2024-03-11T09:12:06.660000Z",
            "window_end": "2024-03-11T09:12:15.570000Z", "message_count": 5,
            "messages": refs(SRC, [1, 2, 3, 6, 7]), "evidence": ev,
            "statement": "Burst of 5 dead letters with MQRC_Q_FULL (2053) for ORDERS.IN on "
                         "QM.ORDERS ..."}


def test_burst_explained_in_words_with_next_steps():
    f = explain_finding(burst())
    labels = {e["label"]: e["text"] for e in f.evidence}
    assert labels["Reason"] == "2053 MQRC_Q_FULL"
    assert labels["Duration"] == "8.91 seconds"
    assert labels["Mean rate"] == "11.448 dead letters a second"
    assert labels["Busiest minute"] == "102 dead letters"
    assert labels["Quiet before it"] == "none earlier in the capture"
    assert labels["Still going at the capture"].startswith("unknown")
    assert "reason_name" not in {e["key"] for e in f.evidence}  # read with the reason
    assert f.severity_reason.startswith("medium: the capture holds no time of its own")
    text = f.to_text()
    assert "duration_seconds=" not in text and "evidence:" not in text  # not key=value
    assert "      Duration                    8.91 seconds" in text
    steps = [c for s in f.next_steps for c in s.commands]
    show = next(c for c in steps if c.text == "DISPLAY QLOCAL('ORDERS.IN') CURDEPTH MAXDEPTH")
    assert show.where == "runmqsc QM.ORDERS"
    assert text.rstrip().splitlines()[-1].strip().startswith("DESTQ('ORDERS.IN')")
    assert "\n\n" not in text
    json.dumps(f.to_dict())


@pytest.mark.parametrize("ongoing, severity, words", [
    (True, "high", "high: the burst had not ended when the capture was taken"),
    (False, "medium", "medium: the burst had ended before the capture"),
])
def test_severity_reason_follows_the_evidence(ongoing, severity, words):
    f = explain_finding(dict(burst(ongoing_at_capture=ongoing), severity=severity))
    assert f.severity_reason.startswith(words)


def test_messages_are_a_filter_not_a_list():
    f = explain_finding(burst())
    m = f.messages
    assert m.count == 5 and m.ranges == {SRC: [(1, 3), (6, 7)]}
    assert m(SRC, 2) and m(SRC, 7) and not m(SRC, 4) and not m("other.raw", 2)
    assert m.describe() == f"{SRC} #1-#3, #6-#7"
    assert f"Messages (5, as a filter): {SRC} #1-#3, #6-#7" in f.to_text()
    assert m.to_dict() == {"count": 5, "ranges": {SRC: [[1, 3], [6, 7]]}}
    many = MessageFilter.from_refs(refs("a.raw", range(1, 200, 2)))
    assert "and 96 more range(s) up to #199" in many.describe()
    assert MessageFilter.from_refs([]).describe() == "none"


def test_each_kind_names_its_queues_in_its_commands():
    trig = explain_finding({
        "kind": "trigger_failure", "severity": "medium", "queues": ["APP.WORK", "APP.INITQ"],
        "message_count": 1, "messages": refs("z.raw", [1]), "statement": "...",
        "evidence": {"count": 1, "reason": 265, "reason_name": "MQFB_APPL_CANNOT_BE_STARTED",
                     "process": "WORK.PROC", "applid": "/opt/work/bin/worker", "appltype": 1,
                     "initq": "APP.INITQ", "rate_per_minute": 80.9}}, qmgr="MQP1")
    cmds = {c.text: c.where for s in trig.next_steps for c in s.commands}
    assert cmds["DISPLAY PROCESS('WORK.PROC') APPLICID APPLTYPE USERDATA ENVRDATA"] == \
        "runmqsc MQP1"
    assert {e["label"]: e["text"] for e in trig.evidence}["Application type"] == "1 MQAT_CICS"
    orphans = explain_finding({
        "kind": "orphaned_reply", "severity": "medium", "queues": ["AMQ.*"], "message_count": 2,
        "messages": refs("p.bcg", [10, 11]), "statement": "...",
        "evidence": {"reply_qmgr": "QM.PORTAL", "queue_prefix": "AMQ.", "requester_qmgr": "",
                     "reasons": {"2085": 2}, "replies": 2, "reports": 0, "other": 0,
                     "distinct_queues": 2, "responders": ["quote-engine"], "users": ["quotes"]}})
    cmds = {c.text: c.where for s in orphans.next_steps for c in s.commands}
    assert cmds["DISPLAY QSTATUS('AMQ.*') TYPE(QUEUE) CURDEPTH IPPROCS"] == "runmqsc QM.PORTAL"
    labels = {e["label"]: e["text"] for e in orphans.evidence}
    assert labels["By reason"] == "2 with 2085 MQRC_UNKNOWN_OBJECT_NAME"
    assert labels["Requests made on"] == "blank: the local queue manager"
    expiry = explain_finding({
        "kind": "expiry_buildup", "severity": "critical", "queues": ["SYSTEM.DEAD.LETTER.QUEUE"],
        "message_count": 1, "messages": refs("z.dmp", [1]), "statement": "...",
        "evidence": {"queue": "SYSTEM.DEAD.LETTER.QUEUE", "source": "z.dmp", "depth": 2,
                     "expiring_soon": 2, "soon_seconds": 3600.0, "expired_fraction_soon": 1.0,
                     "curve": [{"after_seconds": 60, "expired_in_depth": 1}]}},
        capture_queues={"z.dmp": ("MQP2", "SYSTEM.DEAD.LETTER.QUEUE")})
    cmds = {c.text: c.where for s in expiry.next_steps for c in s.commands}
    assert cmds["runmqdlq SYSTEM.DEAD.LETTER.QUEUE MQP2 < rules.rul"] == "on the host of MQP2"
    labels = {e["label"]: e["text"] for e in expiry.evidence}
    assert labels["Share expiring within the horizon"] == "100.0 % of the depth"
    assert labels["Expired yet in the depth, after the capture"] == "1 after 60 s"
    assert expiry.severity_reason.startswith("critical: 2 of 2 messages expire within 3,600 "
                                             "seconds of the capture")
    loop = explain_finding({
        "kind": "backout_loop", "severity": "high", "queues": ["PAYMENTS.IN"], "message_count": 1,
        "messages": refs("q.raw", [1]), "statement": "...",
        "evidence": {"signal": "ping_pong", "queue": "PAYMENTS.IN", "messages": 1,
                     "max_backout_count": 2, "threshold": 3, "bothresh": None, "boqname": None,
                     "distinct_msgids": 1}})
    labels = {e["label"]: e["text"] for e in loop.evidence}
    assert labels["BOTHRESH"] == "not known (no queue definition given)"
    assert labels["Highest BackoutCount"].startswith("2 backouts on the queue the capture read")
    assert any("FWDQ(<hold queue>)" in c.text for s in loop.next_steps for c in s.commands)


def test_hostile_finding_is_escaped():
    evil = "<script>x</script>\x1b[2J"
    f = explain_finding(burst(dest_queue=evil))
    page = f._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    text = f.to_text()
    assert "\x1b" not in text and "DISPLAY QLOCAL('<script>x</script>\\x1b[2J')" in text


def test_every_kind_has_an_evidence_table():
    from dlqlens.detect import KINDS

    assert set(EVIDENCE) == set(KINDS)


@pytest.mark.spark
def test_the_filter_selects_the_findings_messages_in_spark(spark):
    rows = [(SRC, n) for n in range(1, 10)] + [("other.raw", n) for n in range(1, 4)]
    df = spark.createDataFrame(rows, "source string, message_number int")
    f = explain_finding(burst())
    got = sorted(tuple(r) for r in df.where(f.messages.column()).collect())
    assert got == [(SRC, n) for n in (1, 2, 3, 6, 7)]
    scattered = MessageFilter.from_refs(refs(SRC, range(1, 40, 2)))  # 20 ranges: an IN list
    assert df.where(scattered.column()).count() == 5
    assert df.where(MessageFilter().column()).count() == 0


def test_the_captures_banner_names_the_dlq_and_the_queue_manager():
    record = {"kind": "backout_loop", "severity": "medium", "queues": ["APP.IN"],
              "message_count": 1, "messages": refs("shop.dmp", [1]), "statement": "...",
              "evidence": {"signal": "threshold_reached", "queue": "APP.IN", "messages": 1,
                           "max_backout_count": 0, "threshold": 3, "bothresh": None,
                           "boqname": None, "distinct_msgids": 1}}
    bare = explain_finding(record)
    cmds = {c.text: c.where for s in bare.next_steps for c in s.commands}
    assert cmds["DISPLAY QLOCAL('APP.IN') BOTHRESH BOQNAME HARDENBO"] == \
        "runmqsc on the destination's queue manager (not in the capture)"
    named = explain_finding(record, capture_queues={"shop.dmp": ("QM.SHOP", "DLQ.SHOP")})
    cmds = {c.text: c.where for s in named.next_steps for c in s.commands}
    assert cmds["DISPLAY QLOCAL('APP.IN') BOTHRESH BOQNAME HARDENBO"] == "runmqsc QM.SHOP"
    assert any(w == "a rules-table line for runmqdlq on QM.SHOP" for w in cmds.values())
    # a banner without a queue manager (amqsbcg) names none
    amqsbcg = explain_finding(record, capture_queues={"shop.dmp": (None, "DLQ.SHOP")})
    assert "runmqsc QM.SHOP" not in {c.where for s in amqsbcg.next_steps for c in s.commands}

