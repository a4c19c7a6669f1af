"""Per-message explanations (dlqlens/explain/message.py): the data, the next steps, the views."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from explain_rows import T0, commands, row, trigger_tm, where

from dlqlens.explain import explain

#: Per reason: commands the next steps must hold, with the real queue and queue manager.
EXPECTED = {
    2053: ["DISPLAY QLOCAL('APP.IN') CURDEPTH MAXDEPTH",
           "DISPLAY QSTATUS('APP.IN') TYPE(QUEUE) IPPROCS CURDEPTH LGETDATE LGETTIME"],
    2035: ["dspmqaut -m QM1 -n APP.IN -t queue -p alice",
           "setmqaut -m QM1 -n APP.IN -t queue -p alice +put"],
    2085: ["DISPLAY QUEUE('APP.IN')",
           "DISPLAY QREMOTE(*) WHERE(RNAME EQ 'APP.IN') RQMNAME XMITQ"],
    2051: ["DISPLAY QLOCAL('APP.IN') PUT", "ALTER QLOCAL('APP.IN') PUT(ENABLED)"],
    2362: ["DISPLAY QLOCAL('APP.IN') BOTHRESH BOQNAME HARDENBO"],
    2048: ["DISPLAY QLOCAL('APP.IN') DEFTYPE"],
    2030: ["DISPLAY QLOCAL('APP.IN') MAXMSGL"],
    2087: ["DISPLAY QLOCAL('QM1') USAGE", "DISPLAY QMGR DEFXMITQ"],
}


@pytest.mark.parametrize("reason", sorted(EXPECTED))
def test_next_steps_name_the_real_queue_and_queue_manager(reason):
    e = explain(row(reason))
    got = commands(e)
    for text in EXPECTED[reason]:
        assert text in got, (reason, got)
    first = EXPECTED[reason][0]
    if reason == 2087:  # resolving QM1 is the sending queue manager's business
        assert where(e, first) == "runmqsc on the queue manager that sent the message"
    elif first.startswith("dspmqaut"):
        assert where(e, first) == "on the host of QM1"
    else:
        assert where(e, first) == "runmqsc QM1"
    assert e.next_steps[0].page.startswith("https://")
    assert e.reason["code"] == reason and e.reason["happened"]
    step_text = e.to_text().split("What to check or do next", 1)[1]
    assert EXPECTED[reason][0] in step_text


def test_the_dlq_handler_retry_rule_names_the_queue_and_reason():
    assert ("DESTQ('APP.IN') REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)"
            in commands(explain(row(2053))))


@pytest.mark.parametrize("reason, name, expected", [
    (265, "MQFB_APPL_CANNOT_BE_STARTED",
     "DISPLAY PROCESS('WORK.PROC') APPLICID APPLTYPE USERDATA ENVRDATA"),
    (267, "MQFB_APPL_TYPE_ERROR", "DISPLAY PROCESS('WORK.PROC') APPLTYPE APPLICID"),
])
def test_trigger_monitor_failures(reason, name, expected):
    r = row(reason, queue="APP.INITQ", qmgr="MQP1", dlh_putter=("CICSPRD1CKTI", 1),
            dlh_format="MQTRIG", tm=trigger_tm())
    e = explain(r)
    assert e.headline.startswith(f"Dead-lettered with {name} ({reason}) by CICSPRD1CKTI")
    assert "trigger message from initiation queue APP.INITQ on MQP1" in e.headline
    assert e.dead_lettered_by["role"] == "trigger_monitor"
    assert expected in commands(e) and where(e, expected) == "runmqsc MQP1"
    assert "DISPLAY QLOCAL('APP.WORK')" in " ".join(commands(e))
    assert e.destination["route"][0]["header"] == "MQTM"


def test_message_exit_and_unknown_reasons():
    exit_ = explain(row(268))
    assert "DISPLAY CHANNEL(*) MSGEXIT MSGDATA" in commands(exit_)
    assert "while bound for APP.IN" in exit_.headline  # not a failed put
    odd = explain(row(2999))  # no MQRC or MQFB of that value: the generic fallback
    step = odd.next_steps[0]
    assert step.name == "GENERIC" and "DISPLAY QUEUE('APP.IN') ALL" in commands(odd)
    assert "q040710" in step.page  # IBM's reason-code list
    assert odd.reason["happened"].startswith("reason 2999 (System-range value")
    assert step.page_title == ""  # no page of its own


def test_null_fields_read_unknown_never_zero_or_blank():
    r = row(2035, qmgr=None, user=None, Priority=None, PutApplType=None, PutApplName=None,
            Persistence=None, backout=None, expiry=None, put=None)
    r["dlh"]["PutApplType"] = None
    e = explain(r)
    facts = dict(e.facts)
    assert facts["Original put"].startswith("MQMT_DATAGRAM, persistence unknown, priority unknown,"
                                            " by unknown (PutApplType unknown) as user unknown "
                                            "at an unknown time")
    assert facts["Was going to"] == ("APP.IN on an unknown queue manager (DestQMgrName is not "
                                     "in the capture)")
    assert facts["Backouts"] == "BackoutCount unknown (not in the capture)"
    assert facts["Expiry"] == "unknown (not in the capture)"
    assert facts["At the capture"].startswith("unknown")
    assert "(blank)" not in e.to_text() and " 0 " not in facts["Original put"]
    assert e.backout["count"] is None and e.times["put"] is None
    assert e.times["age_seconds"] is None and e.destination["qmgr"] is None
    # the commands cannot name what the capture does not hold: placeholders, marked
    cmd = next(c for s in e.next_steps for c in s.commands if c.text.startswith("dspmqaut"))
    assert cmd.text == "dspmqaut -m <qmgr> -n APP.IN -t queue -p <user>" and not cmd.complete
    assert "[a name is not in the capture]" in e.to_text()
    json.dumps(e.to_dict())


def test_blank_destination_queue_manager_is_the_local_one():
    e = explain(row(2053, qmgr=""))
    assert dict(e.facts)["Was going to"].startswith("APP.IN on the local queue manager")
    assert e.destination["qmgr"] == ""
    assert where(e, "DISPLAY QLOCAL('APP.IN') CURDEPTH MAXDEPTH") == \
        "runmqsc on the local queue manager (DestQMgrName is blank)"


def test_hostile_names_are_quoted_and_escaped():
    hostile = "<script>alert('x')</script>"
    e = explain(row(2053, queue=hostile, qmgr="QM\x1b[2J1", user="bob\nrm -rf /"))
    page = e._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    # in a command the name is one MQSC literal: its quotes doubled
    assert "DISPLAY QLOCAL('<script>alert(''x'')</script>') CURDEPTH MAXDEPTH" in commands(e)
    text = e.to_text()
    assert "\x1b" not in text and "\\x1b[2J" in text
    r = explain(row(2035, user="bob\nrm -rf /"))
    cmd = next(c for c in commands(r) if c.startswith("dspmqaut"))
    assert cmd.endswith("-p 'bob\nrm -rf /'")  # a shell word, not a second command
    assert "-p 'bob\\nrm -rf /'" in r.to_text() and "\nrm -rf" not in r.to_text()


def test_backout_count_is_explained_as_what_it_is():
    e = explain(row(2362, dlh_putter=("order-mdb", 28)))
    assert e.headline.startswith("Dead-lettered with MQRC_BACKOUT_THRESHOLD_REACHED (2362) after "
                                 "being backed out to the backout threshold on APP.IN")
    assert "while being put" not in e.headline and not e.reason["failed_put"]
    assert "backouts, not a failed put" in e.reason["happened"]
    facts = dict(e.facts)
    assert facts["Backouts"].startswith("BackoutCount 0: not backed out on the queue the capture "
                                        "read it from; MQPUT ignores the field")
    assert e.dead_lettered_by["role"] == "jms"
    f4 = dict(explain(row(2053, backout=4)).facts)["Backouts"]
    assert f4.startswith("BackoutCount 4: it was got under syncpoint and backed out 4 time(s) on "
                         "the queue the capture read it from (for a dead letter, the dead-letter "
                         "queue itself")
    assert "MQPUT ignores the field" in f4
    assert "Backouts" not in dict(explain(row(2053)).facts)  # 0 and nothing to say


def test_report_with_feedback_to_a_vanished_reply_queue():
    e = explain(row(2085, queue="AMQ.5F2A0001", qmgr="QM.PORTAL", msg_type=4, feedback=258))
    assert e.report == {"feedback": 258, "name": "MQFB_EXPIRATION",
                        "meaning": e.report["meaning"]}
    assert "an expiration report" in dict(e.facts)["Report"]
    assert "orphaned reply" in e.next_steps[0].title
    assert e.reason["happened"].startswith("AMQ.5F2A0001 on QM.PORTAL no longer existed: a "
                                           "temporary dynamic queue")
    # one rule and one look for every reply queue of the pattern, not for this one
    assert "DISPLAY QSTATUS('AMQ.*') TYPE(QUEUE) CURDEPTH IPPROCS" in commands(e)
    assert "DESTQ('AMQ.*') REASON(MQRC_UNKNOWN_OBJECT_NAME) ACTION(DISCARD)" in commands(e)


def test_who_put_it_on_the_dlq_and_who_put_the_original():
    channel = explain(row(2053))
    assert channel.dead_lettered_by["role"] == "channel_agent"
    assert channel.original_put_by == {"name": "order-api", "appl_type": 6,
                                       "appl_type_name": "MQAT_UNIX", "user": "alice"}
    assert explain(row(2053, dlh_putter=("MQP2CHIN", 30))).dead_lettered_by["role"] == \
        "channel_initiator"
    assert explain(row(2053, dlh_putter=("QM1", 7))).dead_lettered_by["role"] == "queue_manager"
    assert explain(row(2053, dlh_putter=("IIB", 26))).dead_lettered_by["role"] == "broker"
    assert explain(row(2053, dlh_putter=("myapp", 6))).dead_lettered_by["role"] == "application"


def test_times_age_and_remaining_expiry():
    captured = T0 + timedelta(seconds=90)
    e = explain(row(2053, expiry=6000, dlq_put=T0 + timedelta(seconds=30)),
                capture_time=captured, capture_time_origin="banner",
                dlq="SYSTEM.DEAD.LETTER.QUEUE", dlq_qmgr="QM1")
    t = e.times
    assert t["seconds_to_dead_letter"] == 30 and t["age_seconds"] == 90
    assert t["on_dlq_seconds"] == 60 and t["expiry_seconds"] == 600
    assert t["expires_at"] == datetime(2024, 3, 15, 8, 11, 30)
    assert t["capture_origin"] == "banner"
    assert dict(e.facts)["At the capture"].startswith(
        "taken 2024-03-15 08:01:30.000 UTC (from the dmpmqmsg banner, taken as UTC), 90 s after "
        "the original put, 60 s after it was dead-lettered")
    expiring = e.next_steps[-1]
    assert expiring.name == "EXPIRING" and "at 2024-03-15 08:11:30.000 UTC" in expiring.happened
    assert "runmqdlq SYSTEM.DEAD.LETTER.QUEUE QM1 < rules.rul" in commands(e)
    d = json.loads(json.dumps(e.to_dict()))
    assert d["times"]["expires_at"] == "2024-03-15T08:11:30.000Z"
    # one capture time per file, by base name
    by_file = explain(row(2053), capture_time={"QM1_SYSTEM.DEAD.LETTER.QUEUE.raw": captured})
    assert by_file.times["capture"] == datetime(2024, 3, 15, 8, 1, 30)


def test_findings_and_replay_when_given():
    r = row(2053, number=7)
    finding = {"kind": "reason_burst", "severity": "medium", "queues": ["APP.IN"],
               "statement": "Burst of 30 dead letters...",
               "messages": [{"source": r["source"], "message_number": n} for n in (6, 7, 8)]}
    other = dict(finding, kind="expiry_buildup", messages=[])
    replay = {"source": r["source"], "message_number": 7,
              "tried": [{"rule_index": 1, "attempts": 5, "outcome": "failed", "reason": 2053},
                        {"rule_index": 3, "attempts": 1, "outcome": "succeeded", "reason": None}],
              "rule_index": 3, "action": "FWD", "target_queue": "DLQ.HOLD", "target_qmgr": "",
              "header_kept": True, "disposition": "forwarded", "left_reason": None,
              "seconds_to_disposition": 300}
    e = explain(r, findings=[finding, other], replay=replay)
    assert [f["kind"] for f in e.findings] == ["reason_burst"]
    facts = dict(e.facts)
    assert facts["Findings"].startswith("reason_burst (medium): Burst of 30")
    assert facts["Rules replay"] == ("rule 1: 5 attempt(s), failed (MQRC_Q_FULL); rule 3: 1 "
                                     "attempt(s), succeeded; forwarded by rule 3 (FWD) to "
                                     "DLQ.HOLD after 300 s")
    assert e.replay["disposition"] == "forwarded"
    assert dict(explain(r, findings=[other]).facts)["Findings"] == "in no finding"
    assert "Findings" not in dict(explain(r).facts)  # not given: not said
