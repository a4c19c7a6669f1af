"""Trigger-event scripts played on the simulator (dlqlens.sim.script) and judged by the evaluator
(dlqlens.trigger_events) make the same trigger messages: docs/triggering.md says the two decide
alike (IBM MQ, "Conditions for a trigger event", items 1-14). Each script exercises the items its
name says."""

from __future__ import annotations

import pytest

from dlqlens.mq.mqsc import parse_mqsc
from dlqlens.sim import SimulationError
from dlqlens.sim.script import play, queue_manager
from dlqlens.trigger_events import evaluate, parse_events

DEFS = """\
ALTER QMGR TRIGINT({trigint})
DEFINE QLOCAL(INITQ)
DEFINE PROCESS(PROC) APPLTYPE(UNIX) APPLICID('/bin/server')
DEFINE QLOCAL(APP.Q) TRIGGER TRIGTYPE({trigtype}) TRIGDPTH(3) TRIGMPRI({trigmpri}) +
   INITQ(INITQ) PROCESS(PROC)
DEFINE QLOCAL(QM2) USAGE(XMITQ) TRIGGER TRIGTYPE(FIRST) INITQ(INITQ) TRIGDATA(QM1.TO.QM2)
"""

SCRIPTS = {
    "items 3, 11 (FIRST, TRIGINT)": ("FIRST", 0, 500, """
        @0 monitor-start INITQ
        @1 put APP.Q count=3
        @1.6 put APP.Q
        @1.7 put APP.Q"""),
    "item 3 (EVERY)": ("EVERY", 0, 999999999, """
        @0 monitor-start INITQ
        @1 put APP.Q count=3"""),
    "items 2-3, 9 (DEPTH, TRIGMPRI, TRIGGER off)": ("DEPTH", 4, 999999999, """
        @0 monitor-start INITQ
        @1 put APP.Q priority=3 count=5
        @2 put APP.Q priority=4 count=4
        @3 alter APP.Q TRIGGER"""),
    "items 4, 12 (open, close without draining, backout)": ("FIRST", 0, 999999999, """
        @0 monitor-start INITQ
        @1 open APP.Q
        @1 put APP.Q count=2
        @2 get APP.Q
        @3 close APP.Q
        @4 open APP.Q
        @4 get APP.Q syncpoint=yes
        @5 backout APP.Q
        @6 close APP.Q"""),
    "items 6-8, 13 (process, initiation queue, monitor)": ("FIRST", 0, 999999999, """
        @1 put APP.Q
        @2 monitor-start INITQ
        @3 get APP.Q
        @4 delete-process PROC
        @5 put APP.Q
        @6 get APP.Q
        @7 define-process PROC
        @8 alter INITQ PUT(DISABLED)
        @9 put APP.Q
        @10 alter INITQ PUT(ENABLED)
        @11 alter APP.Q NOTRIGGER GET(DISABLED)
        @12 alter APP.Q TRIGGER GET(ENABLED)"""),
    "items 5-6 (transmission queue, expired message)": ("FIRST", 0, 999999999, """
        @0 monitor-start INITQ
        @1 put QM2 expiry=5
        @5 put APP.Q expiry=1"""),
    # units of work: "Conditions for a trigger event", the paragraph after item 10, and
    # "Designing an application that uses triggered queues", "Trigger messages and units of
    # work": made at the put, available at the commit (or, FIRST/DEPTH only, the backout);
    # uncommitted messages count toward the conditions
    "unit of work, FIRST (commit, then backout)": ("FIRST", 0, 999999999, """
        @0 monitor-start INITQ
        @1 put APP.Q syncpoint=yes
        @2 put APP.Q
        @3 commit APP.Q
        @4 open APP.Q
        @4 get APP.Q count=2
        @4 close APP.Q
        @5 put APP.Q syncpoint=yes
        @6 backout APP.Q"""),
    "unit of work, EVERY (backout discards, commit delivers)": ("EVERY", 0, 999999999, """
        @0 monitor-start INITQ
        @1 put APP.Q syncpoint=yes count=2
        @2 backout APP.Q
        @3 put APP.Q syncpoint=yes
        @4 put APP.Q
        @5 commit APP.Q"""),
    "unit of work, DEPTH (backout delivers, TRIGGER off at the put)": ("DEPTH", 0, 999999999, """
        @0 monitor-start INITQ
        @1 put APP.Q syncpoint=yes count=3
        @2 backout APP.Q
        @3 alter APP.Q TRIGGER
        @4 put APP.Q count=3"""),
}


def _sim_triggers(rows):
    return sorted((r["line"], r["message"] or 1, q, c) for r in rows for q, c in r["trigger"])


def _eval_triggers(outcomes):
    return sorted((o.line, o.message or 1, o.queue, o.cause) for o in outcomes if o.trigger)


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_the_simulator_and_the_evaluator_make_the_same_trigger_messages(name):
    trigtype, trigmpri, trigint, text = SCRIPTS[name]
    defs = parse_mqsc(DEFS.format(trigtype=trigtype, trigmpri=trigmpri, trigint=trigint))
    script = "\n".join(line.strip() for line in text.strip().splitlines())
    rows = play(queue_manager(defs), script)
    expected = _eval_triggers(evaluate(defs, parse_events(script)))
    assert expected, name  # every script makes at least one trigger message
    assert _sim_triggers(rows) == expected


def test_rows_show_the_state_after_each_step():
    """One row per message put; depth and qualifying count after it (item 2: priority 3 is
    below TRIGMPRI(4)); the DEPTH trigger at the TRIGDPTH-th (third) qualifying message (item 3), then none (item 9)."""
    defs = parse_mqsc(DEFS.format(trigtype="DEPTH", trigmpri=4, trigint=999999999))
    rows = play(queue_manager(defs), "@0 monitor-start INITQ\n@1 put APP.Q priority=3\n"
                                     "@2 put APP.Q priority=4 count=4")
    assert [(r["step"], r["message"], r["depth"], r["qualifying"]) for r in rows[1:]] == [
        ("@1 put APP.Q priority=3", None, 1, 0)] + [
        ("@2 put APP.Q priority=4 count=4", k, k + 1, k) for k in (1, 2, 3, 4)]
    assert [r["trigger"] for r in rows[1:]] == [[], [], [], [("APP.Q", "depth")], []]
    assert rows[-1]["t"] == 2.0


def test_a_step_on_an_unknown_queue_is_refused():
    defs = parse_mqsc(DEFS.format(trigtype="FIRST", trigmpri=0, trigint=1))
    with pytest.raises(SimulationError, match="no local queue NOPE"):
        play(queue_manager(defs), "put NOPE")
