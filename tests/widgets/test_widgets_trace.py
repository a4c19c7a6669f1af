"""The rule trace: which keyword did not match, each attempt and its outcome."""

from __future__ import annotations

import pytest

from dlqlens.rules import parse
from dlqlens.rules.handler import Message
from dlqlens.rules.replay import ReplayPlan, process_message
from dlqlens.rules.world import World
from dlqlens.widgets import rule_trace

TABLE = parse("""INPUTQ(SYSTEM.DEAD.LETTER.QUEUE) RETRYINT(30)
DESTQ(PAY.*) REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(3)
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)
APPLNAME('web*') ACTION(FWD) FWDQ(DEADQ.WEB) RETRY(2)
ACTION(FWD) FWDQ(REALLY.DEAD)
""")

MESSAGE = {"source": "x.raw", "message_number": 3,
           "md": {"PutApplName": "web-gateway", "ReplyToQ": "", "ReplyToQMgr": "", "MsgType": 8},
           "dlh": {"Reason": 2053, "DestQName": "ORDERS.IN", "DestQMgrName": "QM1"}}

WORLD = World.from_dict({"default": "succeed", "queues": [
    {"queue": "ORDERS.IN", "outcome": "fail"},
    {"queue": "DEADQ.WEB", "outcome": "fail", "reason": "MQRC_NOT_AUTHORIZED", "fail_first": 1}]})


def replayed(matched, message=MESSAGE, world=WORLD) -> dict:
    dlh = message["dlh"]
    fate = process_message(matched, Message(True, dlh["Reason"], dlh["DestQName"], dlh["DestQMgrName"]),
                    ReplayPlan.from_table(TABLE), world)
    return {"source": message["source"], "message_number": message["message_number"],
            **fate.to_dict(), "matched": matched}


def test_trace_names_the_failed_keyword_and_numbers_the_attempts():
    trace = rule_trace(replayed([2, 3, 4]), TABLE, MESSAGE, world=WORLD)
    steps = {s.index: s for s in trace.steps}
    assert steps[1].matched is False and steps[1].failed_keywords == ("DESTQ",)
    assert [c.value for c in steps[1].checks if not c.matched] == ["'ORDERS.IN'"]
    assert steps[2].matched and steps[2].outcome == "failed"
    assert steps[3].outcome == "succeeded" and steps[4].outcome is None
    assert steps[4].note == "not tried: rule 3 decided first"
    attempts = [(a.number, a.seconds, a.outcome, a.reason, a.target)
                for s in trace.steps for a in s.attempts]
    assert attempts == [
        (1, 0, "failed", 2053, "ORDERS.IN on QM1"),
        (2, 30, "failed", 2053, "ORDERS.IN on QM1"),
        (3, 60, "failed", 2035, "DEADQ.WEB"),  # the world's fail_first, named from the world
        (4, 90, "succeeded", None, "DEADQ.WEB"),
    ]
    assert trace.headline == "Forwarded by rule 3 (ACTION(FWD)) to DEADQ.WEB after 90 s."
    assert trace.notes == []
    text = trace.to_text()
    assert "no match: DESTQ(PAY.*) vs 'ORDERS.IN'" in text and "MQRC_NOT_AUTHORIZED (2035)" in text
    assert trace.to_dict()["rules"][0]["failed_keywords"] == ["DESTQ"]


def test_trace_without_fields_or_world_says_what_it_does_not_know():
    trace = rule_trace(replayed([2, 3, 4]), TABLE)
    assert trace.steps[0].matched is False and trace.steps[0].failed_keywords == ()
    assert any("fields were not given" in n for n in trace.notes)
    third = [a for a in trace.steps[2].attempts]
    assert third[0].outcome == "failed (reason not recorded by the replay)"
    assert "which keyword: fields not given" in trace.to_text()


def test_trace_of_a_message_without_mqdlh_and_of_a_disagreement():
    no_dlh = dict(MESSAGE, dlh=None)
    row = {"source": "x.raw", "message_number": 3, "tried": [], "disposition": "left",
           "left_reason": "no_dlh", "matched": None}
    trace = rule_trace(row, TABLE, no_dlh)
    assert trace.headline.startswith("No MQDLH") and not any(s.matched for s in trace.steps)
    wrong = replayed([2, 3, 4])
    wrong["matched"] = [1, 2, 3, 4]
    assert any("the replay matched rules [1, 2, 3, 4]" in n
               for n in rule_trace(wrong, TABLE, MESSAGE).notes)


def test_trace_html_escapes_table_and_capture_text():
    hostile = dict(MESSAGE, dlh=dict(MESSAGE["dlh"], DestQName="<script>x</script>"))
    page = rule_trace(replayed([2, 4], hostile), TABLE, hostile)._repr_html_()
    assert "<script" not in page and "&lt;script&gt;" in page


@pytest.mark.spark
def test_trace_agrees_with_a_spark_replay_of_the_sample(spark):
    from dlqlens.rules.replay import replay
    from dlqlens.spark import load_capture
    from tests.conftest import DATASETS

    table = parse("""RETRYINT(10)
DESTQ(ORDERS.*) REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)
APPLNAME('price*') ACTION(DISCARD)
REASON(MQRC_UNKNOWN_OBJECT_NAME) ACTION(IGNORE)
ACTION(FWD) FWDQ(DEADQ)
""")
    capture = load_capture(spark, str(DATASETS / "dlq_linux_x86.raw"))
    out = replay(table, capture, "pessimistic")
    joined = out.join(capture.select("source", "message_number", "md", "dlh"),
                      ["source", "message_number"])
    rows = joined.where("message_number in (1, 2, 3)").collect()
    assert rows
    for row in rows:
        trace = rule_trace(row, table, world="pessimistic")  # md and dlh ride on the row
        assert trace.notes == []  # the patterns checked here match the replay's `matched`
        tried = [s.index for s in trace.steps if s.outcome]
        assert tried == [t["rule_index"] for t in row["tried"]]
        if row["dlh"]["Reason"] == 2053 and row["dlh"]["DestQName"].startswith("ORDERS"):
            first = trace.steps[0]
            assert first.outcome == "failed" and [a.seconds for a in first.attempts] == [0, 10]
            assert trace.disposition == "forwarded" and trace.rule_index == 4
