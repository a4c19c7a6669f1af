"""Expiry rules, each on a tiny world. Source: IBM MQ, MQMD "Expiry (MQLONG)" and its notes."""

from __future__ import annotations

import pytest
from sim_helpers import APP, DLQ, capture, msg, put, world

from dlqlens.mq.constants import MQFB, MQRO
from dlqlens.sim import Actor
from dlqlens.sim.channel import Channel
from dlqlens.sim.qmgr import MQAT_UNIX

GETTER = Actor("getter", MQAT_UNIX, "getter")


def test_expiry_counts_down_in_tenths_of_a_second():
    """'a period of time expressed in tenths of a second ... decremented to reflect the time
    that the message spends on the destination queue'."""
    sim, qm = world()
    q = qm.define_qlocal("Q")
    put(qm, "Q", Expiry=100)
    sim.run(4.0)
    _, m = qm.get(q, actor=GETTER)
    assert qm.view(m)["Expiry"] == 60


def test_an_expired_message_stays_and_counts_until_a_get_would_return_it():
    """'discarded when a browse or nonbrowse MQGET call occurs that would have returned the
    message'; note 2: until then it counts toward the number of messages on the queue."""
    sim, qm = world()
    q = qm.define_qlocal("Q")
    qm.define_qlocal("OTHER")
    put(qm, "Q", Expiry=10)
    put(qm, "Q", body=b"second")
    sim.run(3)
    assert q.depth == 2
    put(qm, "OTHER")
    qm.get(qm.queue("OTHER"), actor=GETTER)
    assert q.depth == 2 and sim.stats["expired_discarded"] == 0
    rc, m = qm.get(q, actor=GETTER, syncpoint=False)
    assert m.body == b"second" and q.depth == 0
    assert sim.stats["expired_discarded"] == 1


def test_priority_order_discards_only_what_comes_before_the_first_unexpired_message():
    """'With a priority ordered queue, the same call will discard expired messages of higher
    priority and messages of an equal priority that arrived on the queue before the first
    unexpired message'."""
    sim, qm = world()
    q = qm.define_qlocal("Q")
    put(qm, "Q", Priority=7, Expiry=5)
    put(qm, "Q", Priority=5, Expiry=5)
    put(qm, "Q", Priority=5, body=b"target")
    put(qm, "Q", Priority=5, Expiry=5)  # after the target
    put(qm, "Q", Priority=1, Expiry=5)  # lower priority
    sim.run(2)
    rc, m = qm.get(q, actor=GETTER, syncpoint=False)
    assert m.body == b"target"
    assert sim.stats["expired_discarded"] == 2
    assert q.depth == 2  # the two expired messages behind the target still count


def test_expired_messages_count_toward_maxdepth():
    """Note 2: expired messages count 'for all purposes' -- a full queue stays full."""
    sim, qm = world()
    qm.define_qlocal("Q", maxdepth=3)
    put(qm, "Q", 3, Expiry=1)
    sim.run(1)
    assert put(qm, "Q") == [2053]


def test_expiration_report_at_discard_not_at_expiry():
    """Note 3: the report is generated when the message is discarded; MQRO_EXPIRATION_WITH_DATA
    carries the first 100 bytes; Feedback MQFB_EXPIRATION; CorrelId the original MsgId."""
    sim, qm = world()
    q = qm.define_qlocal("Q")
    reports = qm.define_qlocal("REPORTS")
    body = bytes(range(48, 48 + 75)) * 2
    put(qm, "Q", body=body, Expiry=10, Report=MQRO["MQRO_EXPIRATION_WITH_DATA"],
        ReplyToQ="REPORTS", ReplyToQMgr="QM1")
    original = next(iter(q.messages()))
    sim.run(60)
    assert reports.depth == 0
    qm.get(q, actor=GETTER)
    (rep,) = list(reports.messages())
    assert rep.md["MsgType"] == 4 and rep.md["Feedback"] == 258
    assert rep.md["CorrelId"] == original.md["MsgId"] and rep.md["MsgId"] != original.md["MsgId"]
    assert rep.body == body[:100] and rep.md["Format"] == "MQSTR"
    assert rep.md["PutApplType"] == 7 and rep.md["Expiry"] == -1


def test_no_report_option_no_report():
    """'If none of these options is specified, no such report is generated'."""
    sim, qm = world()
    q = qm.define_qlocal("Q")
    reports = qm.define_qlocal("REPORTS")
    put(qm, "Q", Expiry=1, ReplyToQ="REPORTS")
    sim.run(1)
    qm.get(q, actor=GETTER)
    assert reports.depth == 0 and sim.stats["reports"] == 0


def test_an_undeliverable_expiration_report_is_dead_lettered():
    """An expiration report whose ReplyToQ does not exist goes to the DLQ (MQMD Feedback 258,
    MQDLH Reason 2085) -- MQDLH "Reason (MQLONG)"."""
    sim, qm = world()
    q = qm.define_qlocal("Q")
    put(qm, "Q", Expiry=1, Report=MQRO["MQRO_EXPIRATION"], ReplyToQ="GONE")
    sim.run(1)
    qm.get(q, actor=GETTER)
    (dead,) = list(qm.queue(DLQ).messages())
    assert dead.md["Feedback"] == 258 and dead.md["MsgType"] == 4
    assert dead.headers[0][1]["Reason"] == 2085 and dead.headers[0][1]["DestQName"] == "GONE"


def test_expiry_zero_is_rejected():
    """Note 1: an Expiry of zero fails the put with MQRC_EXPIRY_ERROR (as does a negative value
    other than MQEI_UNLIMITED, -1: "MQRC_EXPIRY_ERROR", the value is not valid)."""
    sim, qm = world()
    qm.define_qlocal("Q")
    assert put(qm, "Q", Expiry=0) == [2013]
    assert put(qm, "Q", Expiry=-2) == [2013]
    assert put(qm, "Q", Expiry=-1) == [0]


def test_a_message_whose_expiry_ran_out_while_held_is_still_put_and_expires_on_the_dlq():
    """Note 1 fails only a put *given* an Expiry of 0; note 7 keeps the remaining expiry of a
    message put to the DLQ and goes on decrementing it. A message got with Expiry left, held
    past it and dead-lettered is put (the MQMD its MQGET returned has a positive Expiry); it
    then expires on the DLQ, still counting in its depth (note 2) until a get discards it and
    makes the expiration report it asked for (note 3)."""
    sim, qm = world()
    q = qm.define_qlocal("Q")
    reports = qm.define_qlocal("REPORTS")
    put(qm, "Q", Expiry=20, Report=MQRO["MQRO_EXPIRATION"], ReplyToQ="REPORTS")
    sim.run(1.0)
    _, m = qm.get(q, actor=GETTER)
    assert qm.view(m)["Expiry"] == 10  # 1 s of its 2 s left
    sim.run(3.0)  # processing takes 2 s: the remaining expiry runs out while it is held
    assert qm.expired(m)
    assert qm.dead_letter(m, 2085, "GONE", "QM1", actor=GETTER) == 0
    qm.commit(q, m, GETTER)
    dlq = qm.queue(DLQ)
    assert dlq.depth == 1 and reports.depth == 0
    assert not any(e["event"] == "put_failed" for e in m.events)
    assert qm.get(dlq, actor=GETTER, syncpoint=False) == (2033, None)  # discarded, not returned
    assert dlq.depth == 0 and sim.stats["expired_discarded"] == 1
    (rep,) = list(reports.messages())
    assert rep.md["Feedback"] == 258


def test_dead_letter_keeps_the_remaining_expiry(tmp_path):
    """Note 7: 'the default action for putting messages to a dead-letter queue must be to
    preserve the remaining expiry time of the message, and to continue to decrement it'."""
    sim, src = world(name="QMA")
    from dlqlens.sim import QueueManager

    dst = QueueManager(sim, "QMB", deadq=DLQ)
    dst.define_qlocal(DLQ)
    dst.define_qlocal("FULL", maxdepth=0)
    src.define_qlocal("QMB", usage="XMITQ")
    src.route("QMB", "QMB")
    Channel(sim, "A.B", src, dst, "QMB", latency=0.01, mrrty=3, mrtmr=1000).start()
    src.put("FULL", msg(Expiry=600), actor=APP, qmgr="QMB")
    sim.run(10)
    (dead,) = list(dst.queue(DLQ).messages())
    assert dead.headers[0][1]["Reason"] == 2053
    assert [e["attempt"] for e in dead.events if e["event"] == "message_retry"] == [1, 2, 3]
    dead_at = next(e["t"] for e in dead.events if e["event"] == "dead_letter")
    assert dead_at.startswith("2024-03-15T08:00:03.0")  # after 3 retries 1 s apart
    assert dst.view(dead)["Expiry"] == 500  # put at 0 s with 600: 10 s later, 500 left
    sim.run(30)
    gt, rows = capture(sim, tmp_path, [("QMB", DLQ)])
    assert rows[0]["md"]["Expiry"] == gt[0]["md"]["Expiry"] == 300
    assert gt[0]["expires"] == "2024-03-15T08:01:00.00Z"


def test_the_capture_browse_discards_expired_messages(tmp_path):
    """An expired message is never returned by a browse: it is not in a capture."""
    sim, qm = world()
    qm.define_qlocal("Q")
    put(qm, "Q", Expiry=10)
    put(qm, "Q", Expiry=1000, body=b"alive")
    sim.run(5)
    gt, rows = capture(sim, tmp_path, [("QM1", "Q")])
    assert len(rows) == len(gt) == 1 and rows[0]["payload"] == b"alive"
    assert sim.stats["expired_discarded"] == 1


# -- transmission queues (MQMD "Expiry (MQLONG)", note 9; "MQXQH - Transmission-queue header") --

def _remote_pair(sim, src):
    from dlqlens.sim import QueueManager

    dst = QueueManager(sim, "QMB", deadq=DLQ)
    dst.define_qlocal(DLQ)
    dst.define_qlocal("IN")
    src.define_qlocal("QMB", usage="XMITQ")
    src.route("QMB", "QMB")
    return dst


def test_a_message_on_a_transmission_queue_carries_its_remaining_expiry_in_the_mqxqh(tmp_path):
    """Note 9: a put to a remote queue sets both Expiry fields (the MQMD's and the one in the
    MQXQH's embedded MQMD) to the application's value, and the queue manager decrements both
    with the time spent on the queue: a browse of the transmission queue shows both equal to
    the remaining expiry."""
    sim, src = world(name="QMA")
    _remote_pair(sim, src)
    src.put("IN", msg(Expiry=50), actor=APP, qmgr="QMB")  # no channel runs
    sim.run(2)
    gt, rows = capture(sim, tmp_path, [("QMA", "QMB")])
    (row,) = rows
    assert row["md"]["Format"] == gt[0]["md"]["Format"] == "MQXMIT"
    assert row["md"]["Expiry"] == row["xqh"]["MsgDesc"]["Expiry"] == 30
    assert (row["xqh"]["RemoteQName"], row["xqh"]["RemoteQMgrName"]) == ("IN", "QMB")


def test_a_message_can_expire_on_the_transmission_queue():
    """Note 9 and the field's text: "if a message is put on a remote queue, the message might
    expire (and be discarded) while it is on an intermediate transmission queue, before the
    message reaches the destination queue"; the expiration report is made at the discard
    (note 3), here when the sending channel agent's get reaches the message."""
    sim, src = world(name="QMA")
    dst = _remote_pair(sim, src)
    src.define_qlocal("REPORTS")
    src.put("IN", msg(Expiry=20, Report=MQRO["MQRO_EXPIRATION"], ReplyToQ="REPORTS",
                      ReplyToQMgr="QMA"), actor=APP, qmgr="QMB")
    src.put("IN", msg(Expiry=600, body=b"alive"), actor=APP, qmgr="QMB")
    Channel(sim, "QMA.QMB", src, dst, "QMB", latency=0.01).start(delay=5.0)  # starts late
    sim.run(10)
    (arrived,) = list(dst.queue("IN").messages())
    assert arrived.body == b"alive"
    (report,) = list(src.queue("REPORTS").messages())
    assert report.md["Feedback"] == MQFB["MQFB_EXPIRATION"]
    assert sim.stats["expired_discarded:QMA:QMB"] == 1


# -- the z/OS expiry scan (EXPRYINT) -------------------------------------------------------------
# IBM MQ "ExpiryInterval (MQLONG)": how often the queue manager scans the queues for expired
# messages, 1 to 99 999 999 seconds or MQEXPI_OFF, z/OS only. "Expired messages on z/OS":
# expired messages are discarded by the next appropriate MQGET; with EXPRYINT the queue manager
# also scans queues periodically and discards them.

def test_zos_expiry_scan_discards_expired_messages_no_get_reaches():
    sim, qm = world(platform="zos", expryint=60)
    q = qm.define_qlocal("Q", spool=True)  # nothing reads it: still scanned (kept in memory)
    qm.define_qlocal("REPORTS")
    put(qm, "Q", 3, Expiry=100, Report=MQRO["MQRO_EXPIRATION"], ReplyToQ="REPORTS")
    put(qm, "Q", Expiry=10000, body=b"alive")
    sim.run(59)
    assert q.depth == 4  # expired at 10 s, still counted: no scan yet, no get
    sim.run(61)
    assert q.depth == 1 and sim.stats["expired_discarded_by_scan"] == 3
    assert len(list(qm.queue("REPORTS").messages())) == 3  # reports at the discard (note 3)
    assert sim.stats["expiry_scans"] == 1
    sim.run(185)
    assert sim.stats["expiry_scans"] == 3


def test_without_expryint_expired_messages_wait_for_a_get():
    """EXPRYINT(OFF), the default, and every platform but z/OS: no scan."""
    sim, qm = world(platform="zos")
    q = qm.define_qlocal("Q")
    put(qm, "Q", 3, Expiry=10)
    sim.run(3600)
    assert q.depth == 3 and sim.stats["expiry_scans"] == 0
    qm.alter_qmgr(expryint=30)
    sim.run(3631)
    assert q.depth == 0
    qm.alter_qmgr(expryint="OFF")
    put(qm, "Q", Expiry=10)
    sim.run(7200)
    assert q.depth == 1


@pytest.mark.parametrize("platform, value, match", [
    ("linux", 60, "only on z/OS"), ("zos", 0, "1 to 99999999"),
    ("zos", 100000000, "1 to 99999999")])
def test_expryint_is_refused_off_zos_and_out_of_range(platform, value, match):
    from dlqlens.sim import SimulationError

    with pytest.raises(SimulationError, match=match):
        world(platform=platform, expryint=value)
