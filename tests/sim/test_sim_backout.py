"""Backout rules, each on a tiny world.

Sources: IBM Integration Bus, "Handling MQInput errors" (a broker MQInput node's
error handling, the steps of its retry processing); IBM MQ for z/OS, "Skipping
backout" (MQGMO_MARK_SKIP_BACKOUT, the steps of its figure); "2362 (093A) (RC2362):
MQRC_BACKOUT_THRESHOLD_REACHED"; MQMD "BackoutCount (MQLONG)".
"""

from __future__ import annotations

import pytest
from sim_helpers import DLQ, msg, world

from dlqlens.mq.constants import MQMF, MQRO
from dlqlens.sim import Actor, SimulationError
from dlqlens.sim.apps import BrokerFlow, Consumer, JmsConsumer
from dlqlens.sim.qmgr import MQAT_JAVA, MQAT_UNIX

APP = Actor("app", MQAT_UNIX, "app")
JMS = Actor("mdb", MQAT_JAVA, "order-mdb")
FLOW = Actor("DataFlowEngine", MQAT_UNIX, "DataFlowEngine")


def poison(qm, queue="IN", **md):
    m = msg(b'{"amount":null}', **md)
    m.poison = True
    assert qm.put(queue, m, actor=APP) == 0
    return m


def backout_counts(m):
    return [e["backout_count"] for e in m.events if e["event"] == "backout"]


def test_backout_count_rises_without_limit_when_the_application_ignores_bothresh():
    """MQMD "BackoutCount (MQLONG)": each backout of a get under syncpoint adds one to
    BackoutCount; an application ignoring BOTHRESH loops on the message ("Conditions for a
    trigger event", item 12, note c)."""
    sim, qm = world()
    q = qm.define_qlocal("IN", bothresh=3, boqname="IN.BOQ")
    qm.define_qlocal("IN.BOQ")
    poison(qm)
    Consumer(sim, qm, APP, "IN", backout="ignore", retry_delay=1.0).start()
    sim.run(10.5)  # a get, 0.02 s of work and a backout every 1.02 s: 11 backouts
    (m,) = list(q.messages())
    assert m.md["BackoutCount"] == 11 and m.pattern == "backout_loop"
    assert backout_counts(m) == list(range(1, 12))
    assert qm.queue("IN.BOQ").depth == 0


def test_backout_count_reaching_bothresh_requeues_to_boqname():
    """BOTHRESH/BOQNAME honoured by the application: at BackoutCount = BOTHRESH the message
    goes to BOQNAME (same MsgId; BackoutCount 0 there, an output-only field of MQGET)."""
    sim, qm = world()
    qm.define_qlocal("IN", bothresh=3, boqname="IN.BOQ")
    boq = qm.define_qlocal("IN.BOQ")
    original = poison(qm)
    Consumer(sim, qm, APP, "IN", backout="requeue", retry_delay=0.5).start()
    sim.run(10)
    assert qm.queue("IN").depth == 0
    (m,) = list(boq.messages())
    assert backout_counts(m) == [1, 2, 3]
    assert m.md["MsgId"] == original.md["MsgId"] and m.md["BackoutCount"] == 0
    requeue = [e for e in m.events if e["event"] == "requeued_to_boqname"]
    assert requeue and requeue[0]["backout_count"] == 3


def test_jms_dead_letters_with_2362_when_there_is_no_backout_queue():
    """2362 MQRC_BACKOUT_THRESHOLD_REACHED: 'The queue does not have a backout requeue queue
    defined' -> the DLQ (default disposition). The MQDLH describes the original data."""
    sim, qm = world()
    qm.define_qlocal("IN", bothresh=2)
    poison(qm, Encoding=273, CodedCharSetId=819)
    JmsConsumer(sim, qm, JMS, "IN").start()
    sim.run(5)
    (d,) = list(qm.queue(DLQ).messages())
    dlh = d.headers[0][1]
    assert dlh["Reason"] == 2362 and dlh["DestQName"] == "IN" and dlh["DestQMgrName"] == "QM1"
    assert dlh["PutApplType"] == 28 and dlh["PutApplName"] == "order-mdb"
    assert (dlh["Encoding"], dlh["CodedCharSetId"], dlh["Format"]) == (273, 819, "MQSTR")
    assert (d.md["Format"], d.md["Encoding"], d.md["CodedCharSetId"]) == ("MQDEAD", 273, 1208)
    assert d.md["PutApplName"] == "app"  # the original put context is kept
    assert backout_counts(d) == [1, 2] and d.pattern == "backout_loop"


def test_jms_with_neither_backout_queue_nor_dlq_backs_the_message_out_and_redelivers_it():
    """2362: neither BOQNAME nor a dead-letter queue can take the message, so it is backed out
    (BackoutCount + 1) and redelivered after the listener's delay, again and again -- the
    simulated clock moves on (it used to spin at one instant)."""
    sim, qm = world(deadq="")
    q = qm.define_qlocal("IN", bothresh=2)
    m = poison(qm)
    JmsConsumer(sim, qm, JMS, "IN", redelivery_delay=1.0).start()
    sim.run(6.5)
    assert q.depth == 1 and m.md["BackoutCount"] == 7  # 2 failures, then 5 at the threshold
    failed = [e for e in m.events if e["event"] == "dead_letter_failed"]
    assert [e["t"][-6:] for e in failed] == ["02.04Z", "03.04Z", "04.04Z", "05.04Z", "06.04Z"]


def test_jms_with_bothresh_zero_never_moves_the_message():
    """BOTHRESH(0): no poison-message handling; the message is redelivered for ever."""
    sim, qm = world()
    q = qm.define_qlocal("IN")
    poison(qm)
    JmsConsumer(sim, qm, JMS, "IN", redelivery_delay=0.5).start()
    sim.run(10)
    assert qm.queue(DLQ).depth == 0 and next(iter(q.messages())).md["BackoutCount"] >= 15


def test_jms_discards_with_mqro_discard_msg():
    """2362: 'processed as specified by the disposition options in the Report field'."""
    sim, qm = world()
    q = qm.define_qlocal("IN", bothresh=1)
    poison(qm, Report=MQRO["MQRO_DISCARD_MSG"])
    JmsConsumer(sim, qm, JMS, "IN").start()
    sim.run(5)
    assert q.depth == 0 and qm.queue(DLQ).depth == 0


def test_broker_raises_a_zero_threshold_to_one():
    """Retry processing of "Handling MQInput errors": a BOTHRESH left at its default 0 is
    raised to 1 by the node -- one retry."""
    sim, qm = world()
    qm.define_qlocal("IN", boqname="IN.BOQ")
    boq = qm.define_qlocal("IN.BOQ")
    poison(qm)
    BrokerFlow(sim, qm, FLOW, "IN").start()
    sim.run(5)
    (m,) = list(boq.messages())
    assert backout_counts(m) == [1]


def test_broker_order_without_failure_terminal_boqname_then_dlq():
    """Step 3 of "Handling MQInput errors": at the threshold, BOQNAME if defined, else
    the DLQ."""
    sim, qm = world()
    qm.define_qlocal("IN", bothresh=2)
    poison(qm)
    BrokerFlow(sim, qm, FLOW, "IN").start()
    sim.run(5)
    (d,) = list(qm.queue(DLQ).messages())
    assert backout_counts(d) == [1, 2]
    assert d.headers[0][1]["PutApplName"] == "DataFlowEngine"
    assert d.headers[0][1]["DestQName"] == "IN"


def test_broker_failing_failure_terminal_retries_to_twice_the_threshold():
    """Step 1 of "Handling MQInput errors": failures beyond the failure terminal are
    retried until BackoutCount reaches twice the threshold; then another queue is tried."""
    sim, qm = world()
    qm.define_qlocal("IN", bothresh=3, boqname="IN.BOQ")
    boq = qm.define_qlocal("IN.BOQ")
    poison(qm)
    BrokerFlow(sim, qm, FLOW, "IN", failure_terminal="fails").start()
    sim.run(10)
    (m,) = list(boq.messages())
    assert backout_counts(m) == [1, 2, 3, 4, 5, 6]
    assert [e["backout_count"] for e in m.events if e["event"] == "failure_terminal"] == [3, 4, 5]


def test_broker_failure_terminal_that_handles_the_error_consumes_the_message():
    """Step 3 of "Handling MQInput errors": with the failure terminal connected, the node
    propagates the message to it."""
    sim, qm = world()
    q = qm.define_qlocal("IN", bothresh=2, boqname="IN.BOQ")
    qm.define_qlocal("IN.BOQ")
    poison(qm)
    BrokerFlow(sim, qm, FLOW, "IN", failure_terminal="handles").start()
    sim.run(5)
    assert q.depth == 0 and qm.queue("IN.BOQ").depth == 0 and qm.queue(DLQ).depth == 0


def test_broker_loops_when_nothing_can_take_the_message():
    """Step 3.3 of "Handling MQInput errors": no backout queue and no DLQ -> the message
    stays and its BackoutCount keeps increasing."""
    sim, qm = world(deadq="")
    q = qm.define_qlocal("IN", bothresh=2, boqname="NO.SUCH.QUEUE")
    poison(qm)
    BrokerFlow(sim, qm, FLOW, "IN", retry_delay=1.0).start()
    sim.run(12.5)
    (m,) = list(q.messages())
    assert m.md["BackoutCount"] >= 10 and m.pattern == "backout_loop"
    assert [e["event"] for e in m.events].count("cannot_requeue") >= 8


def test_skip_backout_removes_the_message_in_a_second_unit_of_work():
    """Steps 5-9 of "Skipping backout": the marked get skips the backout, becomes part of
    UOW2, which puts an exception message and commits, removing the message; BackoutCount
    never rises."""
    sim, qm = world(platform="zos")
    q = qm.define_qlocal("IN", bothresh=5)
    errors = qm.define_qlocal("ERRORS")
    original = poison(qm)
    Consumer(sim, qm, APP, "IN", skip_backout=True, error_queue="ERRORS").start()
    sim.run(5)
    assert q.depth == 0
    (note,) = list(errors.messages())
    assert note.md["CorrelId"] == original.md["MsgId"]
    assert [e["event"] for e in original.events][-2:] == \
        ["backout_skipped", "removed_by_second_uow"]
    assert backout_counts(original) == []


def test_skip_backout_is_refused_off_zos():
    """MQGMO_MARK_SKIP_BACKOUT is supported only on z/OS ("Skipping backout")."""
    sim, qm = world(platform="linux")
    qm.define_qlocal("IN")
    with pytest.raises(SimulationError, match="z/OS"):
        Consumer(sim, qm, APP, "IN", skip_backout=True, error_queue="E")


def test_broker_catch_terminal_that_handles_the_error_consumes_the_message():
    """The error table of "Handling MQInput errors", row "the node propagates the message
    to the Out terminal, the exception occurs in the Out flow", Catch terminal connected:
    the flow attached to the Catch terminal handles the error; no backout."""
    sim, qm = world()
    q = qm.define_qlocal("IN", bothresh=2, boqname="IN.BOQ")
    qm.define_qlocal("IN.BOQ")
    m = poison(qm)
    BrokerFlow(sim, qm, FLOW, "IN", catch_terminal="handles").start()
    sim.run(5)
    assert q.depth == 0 and qm.queue("IN.BOQ").depth == 0 and qm.queue(DLQ).depth == 0
    assert backout_counts(m) == [] and m.events[-1]["event"] == "catch_terminal"


def test_broker_catch_flow_that_fails_logs_the_error_and_backs_the_message_out():
    """Same table, row "the exception occurs in the flow attached to the Catch terminal":
    error logged, message backed out; the retry processing then runs as without a Catch
    flow (BOQNAME at the threshold, the failure terminal not connected)."""
    sim, qm = world()
    qm.define_qlocal("IN", bothresh=2, boqname="IN.BOQ")
    boq = qm.define_qlocal("IN.BOQ")
    poison(qm)
    BrokerFlow(sim, qm, FLOW, "IN", catch_terminal="fails").start()
    sim.run(5)
    (m,) = list(boq.messages())
    assert backout_counts(m) == [1, 2]
    kinds = [e["event"] for e in m.events]
    assert kinds.count("catch_terminal") == 2 and kinds.count("error_logged") == 2
    assert kinds[-1] == "requeued_to_boqname"


def test_broker_failure_flow_exceptions_are_retried_whether_or_not_catch_is_connected():
    """Same table, row "the exception occurs in the flow attached to the Failure terminal":
    the node retries, with the Catch terminal connected or not (up to twice the
    threshold, then BOQNAME)."""
    outcomes = []
    for catch in (None, "handles"):
        sim, qm = world()
        qm.define_qlocal("IN", bothresh=1, boqname="IN.BOQ")
        boq = qm.define_qlocal("IN.BOQ")
        m = poison(qm)
        m.md["BackoutCount"] = 1  # already at the threshold: the Failure terminal, not Out
        BrokerFlow(sim, qm, FLOW, "IN", failure_terminal="fails", catch_terminal=catch).start()
        sim.run(5)
        (moved,) = list(boq.messages())
        outcomes.append([e["event"] for e in moved.events if e["event"] != "put"])
    assert outcomes[0] == outcomes[1]
    assert "catch_terminal" not in outcomes[0] and outcomes[0].count("failure_terminal") == 1


@pytest.mark.parametrize("platform, expected", [("zos", 255), ("linux", 300)])
def test_backout_count_stops_at_255_on_zos(platform, expected):
    """MQMD "BackoutCount (MQLONG)": "On z/OS, a value of 255 means that the message has been
    backed out 255 or more times; the value returned is never greater than 255"."""
    sim, qm = world(platform=platform)
    q = qm.define_qlocal("IN")
    m = poison(qm)
    for _ in range(300):
        rc, got = qm.get(q, actor=APP)
        assert rc == 0 and got is m
        qm.backout(q, m, APP)
    assert m.md["BackoutCount"] == expected


# -- the error table's internal-error row ------------------------------------------------------
# IBM Integration Bus "Handling MQInput errors" (App Connect Enterprise "Handling MQInput node
# errors"), first row of the table, "the node detects an internal error": Failure terminal
# connected -> the flow attached to it handles the error; not connected -> the message is put
# to an alternative queue, and if that fails the node retries; Catch terminal: not applicable.

def _unreadable(qm, queue="IN"):
    m = msg(b"\xff\xfe not the format the node expects")
    assert qm.put(queue, m, actor=APP) == 0
    return m


def _is_unreadable(m):
    return m.body.startswith(b"\xff\xfe")


def test_broker_internal_error_without_failure_terminal_goes_to_the_alternative_queue_at_once():
    sim, qm = world()
    qm.define_qlocal("IN", bothresh=3, boqname="IN.BOQ")
    boq = qm.define_qlocal("IN.BOQ")
    m = _unreadable(qm)
    BrokerFlow(sim, qm, FLOW, "IN", internal_error=_is_unreadable,
               catch_terminal="handles").start()  # the Catch row does not apply
    sim.run(5)
    (moved,) = list(boq.messages())
    assert backout_counts(m) == []  # no wait for BOTHRESH(3)
    kinds = [e["event"] for e in moved.events]
    assert "internal_error" in kinds and "catch_terminal" not in kinds
    assert kinds[-1] == "requeued_to_boqname"


def test_broker_internal_error_goes_to_the_dlq_without_a_boqname_and_retries_without_either():
    sim, qm = world()
    qm.define_qlocal("IN", bothresh=3)
    m = _unreadable(qm)
    BrokerFlow(sim, qm, FLOW, "IN", internal_error=_is_unreadable).start()
    sim.run(5)
    (dead,) = list(qm.queue(DLQ).messages())
    assert dead.header("MQDLH")["Reason"] == 2362 and backout_counts(m) == []

    sim, qm = world(deadq="")
    q = qm.define_qlocal("IN", bothresh=3)
    m = _unreadable(qm)
    BrokerFlow(sim, qm, FLOW, "IN", internal_error=_is_unreadable, retry_delay=1.0).start()
    sim.run(4.5)
    (stuck,) = list(q.messages())
    assert backout_counts(stuck)[:2] == [1, 2] and stuck.pattern == "backout_loop"


@pytest.mark.parametrize("failure, backouts", [("handles", []), ("fails", [1, 2])])
def test_broker_internal_error_with_failure_terminal(failure, backouts):
    """Failure terminal connected: its flow handles the error (consumed); a Failure flow that
    fails too makes the node retry (the table's last row), up to twice the threshold (1
    here), then BOQNAME."""
    sim, qm = world()
    q = qm.define_qlocal("IN", bothresh=1, boqname="IN.BOQ")
    boq = qm.define_qlocal("IN.BOQ")
    m = _unreadable(qm)
    BrokerFlow(sim, qm, FLOW, "IN", internal_error=_is_unreadable,
               failure_terminal=failure).start()
    sim.run(5)
    assert q.depth == 0 and backout_counts(m) == backouts
    assert boq.depth == (1 if failure == "fails" else 0)


# -- message groups ("Handling MQInput errors", "Handling errors of message groups") ---------

def _group(qm, n, bad=None, queue="IN"):
    gid = b"G" * 24
    out = []
    for k in range(1, n + 1):
        flags = MQMF["MQMF_LAST_MSG_IN_GROUP"] if k == n else MQMF["MQMF_MSG_IN_GROUP"]
        m = msg(b'{"amount":null}' if k == bad else b'{"amount":1}', GroupId=gid,
                MsgSeqNumber=k, MsgFlags=flags)
        m.poison = k == bad
        assert qm.put(queue, m, actor=APP) == 0
        out.append(m)
    return out


def test_broker_commits_a_group_at_its_last_message():
    sim, qm = world()
    q = qm.define_qlocal("IN")
    group = _group(qm, 4)
    BrokerFlow(sim, qm, FLOW, "IN", commit_by_group=True, process_time=1.0).start()
    sim.run(2.5)  # two processed and a third got, none committed: all still on the queue
    assert len(list(q.messages())) == 4 and q.depth == 1
    sim.run(10)
    assert q.depth == 0 and not list(q.messages())
    assert all(backout_counts(m) == [] for m in group)


def test_broker_group_error_backs_out_the_group_so_far_and_commits_the_rest_apart():
    """An error on the 3rd of 5: the unit of work holding messages 1-3 is backed out each
    time, so the BackoutCount of the good messages 1 and 2 rises with 3's (they are
    processed again each time); at BOTHRESH(2) the node moves 1, then 2, then 3 to the BOQ,
    each as the retry processing says, and 4 and 5 are processed and committed in a new unit
    of work at the last message: part of the group backed out, part committed."""
    sim, qm = world()
    q = qm.define_qlocal("IN", bothresh=2, boqname="IN.BOQ")
    boq = qm.define_qlocal("IN.BOQ")
    group = _group(qm, 5, bad=3)
    BrokerFlow(sim, qm, FLOW, "IN", commit_by_group=True).start()
    sim.run(10)
    assert q.depth == 0 and not list(q.messages())
    assert [m.md["MsgSeqNumber"] for m in boq.messages()] == [1, 2, 3]
    assert [backout_counts(m) for m in group] == [[1, 2], [1, 2], [1, 2], [], []]
    processed = [sum(e["event"] == "processed" for e in m.events) for m in group]
    assert processed == [2, 2, 0, 1, 1]  # 1 and 2 processed twice, never committed


def test_broker_without_commit_by_group_treats_group_messages_one_by_one():
    sim, qm = world()
    qm.define_qlocal("IN", bothresh=2, boqname="IN.BOQ")
    qm.define_qlocal("IN.BOQ")
    group = _group(qm, 5, bad=3)
    BrokerFlow(sim, qm, FLOW, "IN").start()
    sim.run(10)
    assert [backout_counts(m) for m in group] == [[], [], [1, 2], [], []]
