"""The trigger-condition evaluator, one case per item of IBM MQ "Conditions for a trigger event".

Each test states the item it checks; the decisions are dlqlens.mq.trigger_conditions's,
the same code the simulator uses (tests/sim/test_sim_triggering.py checks them
through the simulator).
"""

from __future__ import annotations

import json

import pytest

from dlqlens.cli import main
from dlqlens.mq.mqsc import parse_mqsc
from dlqlens.trigger_events import EventError, evaluate, parse_events

DEFS = """\
ALTER QMGR TRIGINT(999999999)
DEFINE QLOCAL(INITQ)
DEFINE PROCESS(PROC) APPLTYPE(UNIX) APPLICID('/bin/server')
DEFINE QLOCAL(APP.Q) TRIGGER TRIGTYPE({trigtype}) TRIGDPTH({trigdpth}) TRIGMPRI({trigmpri}) +
   MSGDLVSQ({msgdlvsq}) DEFPRTY({defprty}) INITQ(INITQ) PROCESS(PROC)
"""


def defs(trigtype="FIRST", trigdpth=1, trigmpri=0, msgdlvsq="PRIORITY", defprty=0):
    return parse_mqsc(DEFS.format(trigtype=trigtype, trigdpth=trigdpth, trigmpri=trigmpri,
                                  msgdlvsq=msgdlvsq, defprty=defprty))


def run(events: str, **kw):
    """Evaluate compact events with a trigger monitor already running."""
    trigint = kw.pop("trigint", None)
    platform = kw.pop("platform", "linux")
    text = "monitor-start INITQ\n" + events
    return evaluate(defs(**kw), parse_events(text), trigint=trigint, platform=platform)[1:]


def verdicts(outcomes):
    return [o.cause if o.trigger else o.condition for o in outcomes]


def test_first_makes_one_trigger_message_for_a_burst():
    """Item 3 (FIRST: zero qualifying messages before the put)."""
    out = run("put APP.Q count=5")
    assert verdicts(out) == ["first", 3, 3, 3, 3]
    assert out[1].failed == [3, 11] and out[1].qualifying == 2


def test_every_makes_one_per_message():
    """Item 3 (EVERY: any number before)."""
    assert verdicts(run("put APP.Q count=4", trigtype="EVERY")) == ["every"] * 4


def test_depth_triggers_at_trigdpth_then_trigger_is_off():
    """Item 3 (DEPTH: TRIGDPTH-1 before); IBM TriggerType: TriggerControl then MQTC_OFF (item 9)."""
    out = run("put APP.Q count=5", trigtype="DEPTH", trigdpth=3)
    assert verdicts(out) == [3, 3, "depth", 9, 9]


def test_below_trigmpri_does_not_count():
    """Items 2 and 14: 100 messages below TRIGMPRI leave the effective depth at 0."""
    out = run("put APP.Q priority=2 count=100\nput APP.Q priority=5", trigmpri=5)
    assert set(verdicts(out[:100])) == {2}
    assert out[100].trigger and out[100].cause == "first" and out[100].qualifying == 1


def test_fifo_queue_uses_defprty():
    """Item 14: on MSGDLVSQ(FIFO) the queue's DEFPRTY stands for the message's priority."""
    assert verdicts(run("put APP.Q priority=9", msgdlvsq="FIFO", defprty=1, trigmpri=3)) == [2]
    assert verdicts(run("put APP.Q priority=0", msgdlvsq="FIFO", defprty=4, trigmpri=3)) == \
        ["first"]


def test_trigint_retriggers_first_on_a_non_empty_queue():
    """Item 11: FIRST re-triggers on a put once TRIGINT ms have passed since the last one."""
    out = run("@1 put APP.Q\n@1.1 put APP.Q\n@1.25 put APP.Q\n@1.26 put APP.Q", trigint=200)
    assert verdicts(out) == ["first", 3, "trigint", 3]
    assert out[2].item == 11


def test_open_for_input_stops_first_and_depth_not_every():
    """Item 4: OpenInputCount must be zero for FIRST and DEPTH."""
    assert verdicts(run("open APP.Q\nput APP.Q")) == [1, 4]
    assert verdicts(run("open APP.Q\nput APP.Q", trigtype="EVERY")) == [1, "every"]


def test_close_without_draining_retriggers_and_drained_close_does_not():
    """Item 12 and its note a: the last MQCLOSE leaving messages makes a trigger message."""
    out = run("put APP.Q count=3\nopen APP.Q\nget APP.Q\nclose APP.Q\n"
              "open APP.Q\nget APP.Q count=5\nclose APP.Q")
    assert verdicts(out) == ["first", 3, 3, 1, 1, "close", 1, 1, 12]
    assert out[5].item == 12 and out[8].failed == [12]


def test_backout_before_close_retriggers_close_before_backout_does_not():
    """Item 12 note b."""
    first = run("put APP.Q\nopen APP.Q\nget APP.Q syncpoint=yes\nbackout APP.Q\nclose APP.Q")
    assert verdicts(first)[-1] == "close"
    second = run("put APP.Q\nopen APP.Q\nget APP.Q syncpoint=yes\nclose APP.Q\nbackout APP.Q")
    assert verdicts(second)[-2:] == [12, 1]


def test_no_trigger_monitor_then_monitor_start():
    """Items 8 and 13 (a trigger monitor opens the initiation queue for input)."""
    out = evaluate(defs(), parse_events("put APP.Q count=2\nmonitor-start INITQ\nput APP.Q"))
    assert verdicts(out) == [8, 3, "initq_open", 3]
    assert out[2].via == "INITQ" and out[2].queue == "APP.Q" and out[2].item == 13


def test_process_missing_then_defined():
    """Item 6: PROCESS must name an existing process definition."""
    out = run("delete-process PROC\nput APP.Q\nget APP.Q\ndefine-process PROC\nput APP.Q")
    assert verdicts(out) == [1, 6, 1, 1, "first"]


def test_initiation_queue_put_inhibited_then_enabled():
    """Items 7 and 13 (the initiation queue's PUT changes to enabled)."""
    out = run("alter INITQ PUT(DISABLED)\nput APP.Q count=2\nalter INITQ PUT(ENABLED)")
    assert verdicts(out) == [1, 7, 3, "initq_put_enabled"]


def test_initiation_queue_deleted():
    """Item 7: the initiation queue must exist."""
    assert verdicts(run("monitor-stop INITQ\ndelete-queue INITQ\nput APP.Q")) == [1, 1, 7]


def test_trigger_off_then_altered_on_and_trigtype_none():
    """Items 9, 10 and 13 (TriggerControl changed to on with enough messages)."""
    out = run("alter APP.Q NOTRIGGER\nput APP.Q count=2\nalter APP.Q TRIGGER\n"
              "alter APP.Q TRIGTYPE(NONE)\nget APP.Q count=2\nput APP.Q")
    assert verdicts(out) == [1, 9, 3, "alter", 10, 1, 10]
    assert out[2].failed == [3, 9, 11] and out[3].item == 13
    assert out[4].item == 13  # TRIGTYPE changed with TRIGGER on is judged, and fails item 10


def test_depth_alter_back_on_with_enough_messages():
    """Item 13 for DEPTH: TRIGDPTH qualifying messages needed; not enough -> item 13 fails."""
    out = run("put APP.Q count=3\nalter APP.Q TRIGGER", trigtype="DEPTH", trigdpth=2)
    assert verdicts(out) == [3, "depth", 9, "alter"]
    out = run("put APP.Q\nalter APP.Q TRIGGER TRIGDPTH(5)", trigtype="DEPTH", trigdpth=2)
    assert verdicts(out) == [3, 13]


def test_get_inhibited_on_zos_then_enabled():
    """Item 5 (z/OS only) and item 13 (the application queue's GET changes to enabled)."""
    events = "alter APP.Q GET(DISABLED)\nput APP.Q\nalter APP.Q GET(ENABLED)"
    assert verdicts(run(events, platform="zos")) == [1, 5, "get_enabled"]
    # elsewhere GET(DISABLED) does not stop the put's trigger; the enabling still counts (item 13)
    assert verdicts(run(events)) == [1, "first", "get_enabled"]


def test_one_alter_is_one_event():
    """Item 13 and the page's note 1: an ALTER turning TRIGGER on and enabling GET at once is
    one event and makes one trigger message (judged once; the first cause that triggers)."""
    events = ("alter APP.Q NOTRIGGER GET(DISABLED)\nput APP.Q count=2\n"
              "alter APP.Q TRIGGER GET(ENABLED)")
    for platform in ("linux", "zos"):
        out = run(events, platform=platform)
        assert verdicts(out[-1:]) == ["alter"] and len(out) == 4, platform
        assert out[-1].item == 13


def test_transmission_queue_with_blank_process_is_triggered():
    """Item 6: a transmission queue with a blank ProcessName needs no process definition; with a
    PROCESS naming none it is stopped by condition 6 as any queue."""
    mqsc = ("DEFINE QLOCAL(SYSTEM.CHANNEL.INITQ)\n"
            "DEFINE QLOCAL(QM2) USAGE(XMITQ) TRIGGER TRIGTYPE(FIRST) INITQ(SYSTEM.CHANNEL.INITQ) "
            "TRIGDATA(QM1.TO.QM2)\n"
            "DEFINE QLOCAL(QM3) USAGE(XMITQ) TRIGGER INITQ(SYSTEM.CHANNEL.INITQ) PROCESS(NONE.P)\n")
    out = evaluate(parse_mqsc(mqsc), parse_events(
        "monitor-start SYSTEM.CHANNEL.INITQ\nput QM2 count=2\nput QM3"))
    assert verdicts(out) == [13, 13, "first", 3, 6]  # the monitor's open judges both queues


def test_jsonl_events_and_errors():
    text = "\n".join(json.dumps(e) for e in [
        {"event": "monitor_start", "initq": "INITQ", "t": 0},
        {"event": "put", "queue": "APP.Q", "priority": 3, "count": 2, "t": 1.5},
        {"event": "alter", "queue": "APP.Q", "attributes": {"trigger": False}, "t": 2},
        {"event": "alter", "queue": "APP.Q", "attributes": {"trigger": True}, "t": 3},
    ])
    out = evaluate(defs(), parse_events(text, "ev.jsonl"))
    assert verdicts(out) == [13, "first", 3, 1, "alter"]  # monitor start: no messages yet
    assert out[1].t == 1.5 and out[1].message == 1 and out[4].line == 4
    with pytest.raises(EventError, match=r"ev.jsonl:2: expected event one of"):
        parse_events('{"event": "put", "queue": "A"}\n{"event": "explode"}', "ev.jsonl")
    with pytest.raises(EventError, match=r"ev:1: expected priority between 0 and 9"):
        parse_events("put APP.Q priority=12", "ev")
    with pytest.raises(EventError, match=r"TRIGTYPE\(FIRST\|EVERY\|DEPTH\|NONE\)"):
        parse_events("alter APP.Q TRIGTYPE(OFTEN)", "ev")
    with pytest.raises(EventError, match=r"a local queue in the queue definitions"):
        evaluate(defs(), parse_events("put NOPE.Q"))
    with pytest.raises(EventError, match=r"OpenInputCount 0"):
        evaluate(defs(), parse_events("close APP.Q"))
    with pytest.raises(EventError, match=r"time order"):
        evaluate(defs(), parse_events("@2 put APP.Q\n@1 put APP.Q"))


def test_cli(tmp_path, capsys):
    (tmp_path / "qm.mqsc").write_text(DEFS.format(trigtype="FIRST", trigdpth=1, trigmpri=0,
                                                  msgdlvsq="PRIORITY", defprty=0))
    (tmp_path / "ev.txt").write_text("monitor-start INITQ\nput APP.Q count=2\ndelete-process PROC\n"
                                     "get APP.Q count=2\nput APP.Q\n")
    args = ["triggers", "evaluate", "--queue-defs", str(tmp_path / "qm.mqsc"),
            "--events", str(tmp_path / "ev.txt")]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert "TRIGGER FIRST cause=first (item 3)" in out[1]
    assert "no trigger: condition 6 not met" in out[5] and "process definition" in out[5]
    assert out[-1] == "1 trigger message(s) from 5 event(s)"
    assert main(args + ["--jsonl"]) == 0
    objs = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [o["trigger"] for o in objs] == [False, True, False, False, False, False]
    assert objs[5]["condition"] == 6 and objs[5]["failed"] == [6]
    (tmp_path / "bad.txt").write_text("put APP.Q\nfrobnicate APP.Q\n")
    assert main(args[:-1] + [str(tmp_path / "bad.txt")]) == 2
    assert "bad.txt:2: expected one of" in capsys.readouterr().err


# -- units of work around puts ----------------------------------------------------------------
# IBM MQ, "Conditions for a trigger event", the paragraph after item 10, and "Designing an
# application that uses triggered queues", "Trigger messages and units of work".

def test_a_put_under_syncpoint_holds_its_trigger_message_until_commit():
    out = run("@1 put APP.Q syncpoint=yes\n@2 put APP.Q\n@3 commit APP.Q")
    put1, put2, commit = out
    assert (put1.trigger, put1.uow, put1.cause) == (False, "held", "first")
    assert put2.trigger is False and put2.condition == 3  # the uncommitted message counts
    assert (commit.event, commit.trigger, commit.uow, commit.cause, commit.line) == \
        ("commit", True, "committed", "first", 4)
    assert sum(o.trigger for o in out) == 1
    assert "held in the unit of work" in put1.to_text()


@pytest.mark.parametrize("trigtype,n,made", [("FIRST", 1, 1), ("DEPTH", 3, 1), ("EVERY", 2, 0)])
def test_a_backout_keeps_first_and_depth_trigger_messages_only(trigtype, n, made):
    out = run(f"@1 put APP.Q syncpoint=yes count={n}\n@2 backout APP.Q", trigtype=trigtype,
              trigdpth=3)
    released = [o for o in out if o.event == "backout"]
    assert all(o.uow == "backed_out" for o in released)
    assert sum(o.trigger for o in out) == made
    assert released[-1].qualifying == 0  # the puts are deleted
    if not made:
        assert "discarded" in released[0].to_text()


def test_put_syncpoint_is_read_from_json_lines_too():
    ev = parse_events('{"event": "put", "queue": "APP.Q", "syncpoint": true}')
    assert ev[0]["syncpoint"] is True
