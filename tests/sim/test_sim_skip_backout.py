"""Units of work and MQGMO_MARK_SKIP_BACKOUT, each rule on a tiny z/OS world.

Sources: IBM MQ for z/OS "Skipping backout" (seed 002: the steps of its figure, the
one-mark rule and its two notes); "2062 (080E) (RC2062): MQRC_SECOND_MARK_NOT_ALLOWED";
"2274 (08E2) (RC2274): MQRC_OPTION_ENVIRONMENT_ERROR"; MQMD "BackoutCount (MQLONG)".
"""

from __future__ import annotations

import pytest
from sim_helpers import msg, world

from dlqlens.mq.constants import MQRC
from dlqlens.sim import Actor, SimulationError
from dlqlens.sim.apps import Consumer
from dlqlens.sim.qmgr import MQAT_UNIX

APP = Actor("app", MQAT_UNIX, "ORDERPGM")


def zos(*names, **attrs):
    sim, qm = world(platform="zos")
    for name in names:
        qm.define_qlocal(name, **attrs)
    return sim, qm


def put(qm, queue, body, poison=False):
    m = msg(body)
    m.poison = poison
    assert qm.put(queue, m, actor=APP) == 0
    return m


def test_a_second_marked_get_in_one_unit_of_work_fails_with_2062():
    """"Within a unit of work, there can be only one MQGET request marked as skipping
    backout ... further MQGET calls ... that specify MQGMO_MARK_SKIP_BACKOUT fail with
    reason code MQRC_SECOND_MARK_NOT_ALLOWED"; unmarked gets in the same unit of work
    work; the message the refused get would have returned stays available."""
    sim, qm = zos("IN")
    q = qm.queue("IN")
    a, b, c = (put(qm, "IN", x) for x in (b"a", b"b", b"c"))
    assert qm.get(q, actor=APP, mark_skip_backout=True) == (0, a)
    assert qm.get(q, actor=APP, mark_skip_backout=True) == (
        MQRC["MQRC_SECOND_MARK_NOT_ALLOWED"], None)
    assert MQRC["MQRC_SECOND_MARK_NOT_ALLOWED"] == 2062
    assert qm.get(q, actor=APP) == (0, b)
    unit = qm.unit_of_work(APP)
    assert [m for _, m in unit.gets] == [a, b] and unit.marked is a and q.depth == 1
    assert qm.commit_uow(APP) == 2 and q.depth == 1 and qm.unit_of_work(APP) is None
    # a new unit of work may mark again
    assert qm.get(q, actor=APP, mark_skip_backout=True) == (0, c)


def test_application_backout_skips_the_marked_get_which_becomes_a_second_unit_of_work():
    """Steps 5-7: the application backs UOW1 out; the other get of UOW1 is reinstated
    (BackoutCount + 1); the marked one is not: it is part of UOW2, still off the queue,
    its BackoutCount unchanged. Step 9: committing UOW2 removes it."""
    sim, qm = zos("IN")
    q = qm.queue("IN")
    a, b = put(qm, "IN", b"a"), put(qm, "IN", b"b")
    qm.get(q, actor=APP, mark_skip_backout=True)
    qm.get(q, actor=APP)
    first = qm.unit_of_work(APP).number
    uow2 = qm.backout_uow(APP)
    assert uow2.number == first + 1 and [m for _, m in uow2.gets] == [a]
    assert uow2.marked is None
    assert b.md["BackoutCount"] == 1 and b.locked is None
    assert a.md["BackoutCount"] == 0 and a.locked is APP and q.depth == 1
    assert [e["event"] for e in a.events][-1] == "backout_skipped"
    assert qm.commit_uow(APP) == 1
    assert a.removed and list(q.messages()) == [b]


def test_backing_out_the_second_unit_of_work_reinstates_the_message():
    """Step 10: if UOW2 is backed out, the marked message is reinstated on the queue like
    any other (BackoutCount + 1) and is available to further gets."""
    sim, qm = zos("IN")
    q = qm.queue("IN")
    a = put(qm, "IN", b"a")
    qm.get(q, actor=APP, mark_skip_backout=True)
    qm.backout_uow(APP)
    assert qm.backout_uow(APP) is None
    assert a.md["BackoutCount"] == 1 and a.locked is None and q.depth == 1
    assert qm.get(q, actor=APP) == (0, a)


def test_a_backout_the_application_did_not_request_backs_the_marked_message_out():
    """First note: "The marked message skips backout only if the unit of work containing
    it is terminated by an application request to back it out"; at an abnormal end the
    queue manager backs it out like any other."""
    sim, qm = zos("IN")
    q = qm.queue("IN")
    a = put(qm, "IN", b"a")
    qm.get(q, actor=APP, mark_skip_backout=True)
    qm.abnormal_end(APP)
    assert a.md["BackoutCount"] == 1 and a.locked is None and q.depth == 1
    assert qm.unit_of_work(APP) is None
    last = a.events[-1]
    assert (last["event"], last["cause"]) == ("backout", "not_requested")


def test_a_marked_get_from_an_rrs_stored_procedure_fails_with_2274():
    """Second note: skip backout is not supported in Db2 stored procedures in units of
    work controlled by RRS: MQRC_OPTION_ENVIRONMENT_ERROR; the message stays."""
    sim, qm = zos("IN")
    q = qm.queue("IN")
    put(qm, "IN", b"a")
    assert qm.get(q, actor=APP, mark_skip_backout=True, rrs_stored_procedure=True) == (
        MQRC["MQRC_OPTION_ENVIRONMENT_ERROR"], None)
    assert q.depth == 1 and qm.unit_of_work(APP) is None
    assert qm.get(q, actor=APP, rrs_stored_procedure=True)[0] == 0  # without the mark


def test_a_marked_get_off_zos_is_refused():
    """"Supported only on z/OS"."""
    sim, qm = world(platform="linux")
    q = qm.define_qlocal("IN")
    with pytest.raises(SimulationError, match="z/OS"):
        qm.get(q, actor=APP, mark_skip_backout=True)


def test_consumer_whose_exception_put_fails_backs_out_the_second_unit_of_work():
    """Step 10 in an application: the exception message of UOW2 cannot be put (no such
    queue), so UOW2 is backed out and the message comes back with BackoutCount + 1:
    the loop returns, one BackoutCount per round."""
    sim, qm = zos("IN")
    a = put(qm, "IN", b"a", poison=True)
    Consumer(sim, qm, APP, "IN", skip_backout=True, error_queue="NO.SUCH.Q",
             retry_delay=1.0).start()
    sim.run(3.5)
    kinds = [e["event"] for e in a.events]
    assert kinds.count("backout_skipped") == 4
    assert kinds.count("exception_put_failed") == 4
    assert a.md["BackoutCount"] == 4 and a.pattern == "backout_loop"
    backouts = [e for e in a.events if e["event"] == "backout"]
    assert len(backouts) == 4 and all("cause" not in e for e in backouts)  # MQBACK of UOW2


def test_consumer_that_abends_loops_even_with_skip_backout():
    """First note, in an application: a program that ends abnormally instead of calling
    MQBACK gets no benefit from the mark; each restart gets the message again with a
    higher BackoutCount."""
    sim, qm = zos("IN", "ERRORS")
    a = put(qm, "IN", b"a", poison=True)
    app = Consumer(sim, qm, APP, "IN", skip_backout=True, error_queue="ERRORS",
                   on_error="abend", retry_delay=1.0)
    app.start()
    sim.run(3.5)
    assert app.abends == 4 and a.md["BackoutCount"] == 4 and qm.queue("ERRORS").depth == 0
    assert {e["cause"] for e in a.events if e["event"] == "backout"} == {"not_requested"}


def test_consumer_in_an_rrs_stored_procedure_stops_with_2274():
    """Second note, in an application: its first marked get fails with 2274; the message
    is untouched."""
    sim, qm = zos("IN", "ERRORS")
    a = put(qm, "IN", b"a", poison=True)
    app = Consumer(sim, qm, APP, "IN", skip_backout=True, error_queue="ERRORS",
                   rrs_stored_procedure=True)
    app.start()
    sim.run(5)
    assert app.last_reason == MQRC["MQRC_OPTION_ENVIRONMENT_ERROR"] and app.process.done
    assert a.md["BackoutCount"] == 0 and qm.queue("IN").depth == 1
    assert qm.queue("IN").ipprocs == 0


def test_consumer_marking_every_get_processes_good_messages_one_unit_of_work_each():
    """A commit ends the unit of work, so the next marked get begins a new one and is not a
    second mark (no 2062): every good message is processed, the poison one removed by
    UOW2."""
    sim, qm = zos("IN", "ERRORS")
    bad = put(qm, "IN", b"bad", poison=True)
    good = [put(qm, "IN", b"ok %d" % i) for i in range(3)]
    app = Consumer(sim, qm, APP, "IN", skip_backout=True, error_queue="ERRORS")
    app.start()
    sim.run(2)
    assert app.processed == 3 and app.last_reason == 0
    assert bad.removed and all(m.removed for m in good) and qm.queue("ERRORS").depth == 1
    assert [e.get("skip_backout") for m in good for e in m.events if e["event"] == "get"] == \
        [True, True, True]
