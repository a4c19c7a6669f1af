"""Who dead-letters what, and how the MQDLH and MQMD are filled.

Sources (IBM MQ): "MQDLH - Dead-letter header" and its field pages (who writes the
MQDLH, its fields, the MQMD of a dead letter); "What happens when a message cannot
be delivered?" and MQCD "MsgRetryCount (MQLONG)" (the channel agent, message
retry); the reason code pages; "How the rules table is processed" and "The DLQ
handler rules table" (the DLQ handler).
"""

from __future__ import annotations

import pytest
from sim_helpers import APP, DLQ, capture, msg, world

from dlqlens.mq.constants import MQRO
from dlqlens.sim import Actor, QueueManager
from dlqlens.sim.apps import DlqHandler, Requester
from dlqlens.sim.channel import Channel
from dlqlens.sim.qmgr import MQAT_UNIX

SENDER = Actor("sender-app", MQAT_UNIX, "payments-api", "svcpay", 273, 819)


def pair(**channel):
    """QMA (AIX) -> QMB (Linux) over a channel; QMB has a DLQ."""
    sim, qma = world(name="QMA", platform="aix")
    qmb = QueueManager(sim, "QMB", platform="linux", deadq=DLQ)
    qmb.define_qlocal(DLQ, maxdepth=999999)
    qma.define_qlocal("QMB", usage="XMITQ")
    qma.route("QMB", "QMB")
    ch = Channel(sim, "QMA.TO.QMB", qma, qmb, "QMB", latency=0.01, **channel)
    ch.start()
    return sim, qma, qmb, ch


def send(qma, queue, **md):
    md.setdefault("Encoding", 273)
    md.setdefault("CodedCharSetId", 819)
    m = msg(b"payload", **md)
    assert qma.put(queue, m, actor=SENDER, qmgr="QMB") == 0
    return m


def dead(qm):
    return list(qm.queue(DLQ).messages())


@pytest.mark.parametrize("setup, reason", [
    (lambda qmb: None, 2085),  # no such queue
    (lambda qmb: qmb.define_qlocal("TARGET", maxdepth=0), 2053),
    (lambda qmb: qmb.define_qlocal("TARGET", put="DISABLED"), 2051),
    (lambda qmb: qmb.define_qlocal("TARGET", authorized={"someone.else"}), 2035),
    (lambda qmb: qmb.define_qlocal("TARGET", maxmsgl=4), 2030),
    (lambda qmb: qmb.define_qlocal("TARGET", deftype="TEMPDYN"), 2048),
], ids=["2085-unknown", "2053-full", "2051-put-inhibited", "2035-not-authorized",
        "2030-too-big-for-queue", "2048-persistent-to-tempdyn"])
def test_receiving_mca_dead_letters_with_the_reason_of_the_failed_put(setup, reason, tmp_path):
    """The receiving MCA dead-letters what it cannot put, Reason = the MQRC;
    MQDLH PutApplType/Name the MCA's (amqrmppa, MQAT_UNIX); MQMD kept except Format, Encoding,
    CodedCharSetId; the MQDLH's Encoding/CodedCharSetId/Format describe the original data."""
    sim, qma, qmb, ch = pair(mrrty=2, mrtmr=500, putaut="CTX")
    setup(qmb)
    original = send(qma, "TARGET", Persistence=1, Priority=3)
    sim.run(5)
    (d,) = dead(qmb)
    dlh = d.headers[0][1]
    assert dlh["Reason"] == reason
    assert (dlh["DestQName"], dlh["DestQMgrName"]) == ("TARGET", "QMB")
    assert (dlh["PutApplType"], dlh["PutApplName"]) == (6, "amqrmppa")
    assert (dlh["Encoding"], dlh["CodedCharSetId"], dlh["Format"]) == (273, 819, "MQSTR")
    assert (d.md["Format"], d.md["Encoding"], d.md["CodedCharSetId"]) == ("MQDEAD", 546, 1208)
    assert d.md["MsgId"] == original.md["MsgId"] and d.md["PutApplName"] == "payments-api"
    assert d.md["UserIdentifier"] == "svcpay" and d.md["Persistence"] == 1
    retries = [e for e in d.events if e["event"] == "message_retry"]
    # MQCD "MsgRetryCount (MQLONG)": message retry only for 2053, 2051 (and 2192)
    assert len(retries) == (2 if reason in (2053, 2051) else 0)
    gt, rows = capture(sim, tmp_path, [("QMB", DLQ)])
    assert rows[0]["dlh"]["Reason"] == gt[0]["dlh"]["Reason"] == reason
    assert rows[0]["payload"] == b"payload" and rows[0]["decode_status"] == "ok"


def test_too_big_for_the_receiving_queue_manager_cannot_be_dead_lettered_there():
    """2031 MQRC_MSG_TOO_BIG_FOR_Q_MGR at the receiving MCA: the dead letter (MQDLH + data)
    is longer still, so the DLQ put fails too and the channel stops ("What happens when a
    message cannot be delivered?")."""
    sim, qma, qmb, ch = pair()
    qmb.maxmsgl = 4
    qmb.define_qlocal("TARGET")
    m = send(qma, "TARGET", Persistence=1)
    sim.run(3)
    assert dead(qmb) == [] and ch.status == "RETRYING"
    assert [(e["queue"], e["reason"]) for e in m.events if e["event"] == "put_failed"] == \
        [("TARGET", 2031), (DLQ, 2031)]
    assert [e["dlq_reason"] for e in m.events if e["event"] == "dead_letter_failed"] == [2031]


def test_report_option_discard_msg_is_discarded_not_dead_lettered():
    """The MCA dead-letters unless the message asked for MQRO_DISCARD_MSG (MQMD "Report")."""
    sim, qma, qmb, ch = pair()
    send(qma, "NOWHERE", Report=MQRO["MQRO_DISCARD_MSG"])
    sim.run(2)
    assert dead(qmb) == [] and sim.stats["discarded_by_channel"] == 1


def test_without_a_usable_dlq_a_persistent_message_stops_the_channel():
    """"What happens when a message cannot be delivered?": with no usable DLQ the channel
    stops; a nonpersistent
    message on a fast channel is lost instead."""
    sim, qma, qmb, ch = pair(shorttmr=30)
    qmb.deadq = ""
    send(qma, "NOWHERE", Persistence=1)
    sim.run(5)
    assert ch.status == "RETRYING" and qma.queue("QMB").depth == 1
    qmb.deadq = DLQ
    sim.run(40)
    assert ch.status == "RUNNING" and qma.queue("QMB").depth == 0 and len(dead(qmb)) == 1
    qmb.deadq = ""
    send(qma, "NOWHERE", Persistence=0)
    sim.run(50)
    assert sim.stats["lost_nonpersistent"] == 1 and qma.queue("QMB").depth == 0


def test_message_too_big_for_the_channel_is_dead_lettered_by_the_sender_with_its_xqh(tmp_path):
    """2218 MQRC_MSG_TOO_BIG_FOR_CHANNEL: the sending side keeps the MQXQH (MQDLH Format
    MQXMIT, "MQXQH - Transmission-queue header")."""
    sim, qma, qmb, ch = pair(maxmsgl=5)
    original = send(qma, "TARGET")
    sim.run(2)
    (d,) = dead(qma)
    assert d.headers[0][1]["Reason"] == 2218 and d.headers[0][1]["Format"] == "MQXMIT"
    gt, rows = capture(sim, tmp_path, [("QMA", DLQ)])
    (row,) = rows
    assert row["headers"] == ["MQDEAD", "MQXMIT"]
    assert row["xqh"]["RemoteQName"] == "TARGET" and row["xqh"]["RemoteQMgrName"] == "QMB"
    assert row["xqh"]["MsgDesc"]["MsgId"] == original.md["MsgId"]
    assert row["payload"] == b"payload"


def test_a_local_put_failure_is_returned_not_dead_lettered():
    """Synchronous failures (the putter gets the reason back) are not dead-lettered."""
    sim, qm = world()
    qm.define_qlocal("FULL", maxdepth=0)
    assert qm.put("FULL", msg(), actor=APP) == 2053
    assert qm.put("NOWHERE", msg(), actor=APP) == 2085
    assert qm.queue(DLQ).depth == 0


def test_reply_to_a_vanished_temporary_queue_is_an_orphaned_reply():
    """A reply arriving for a temporary dynamic queue that was deleted (its requester gave
    up): the receiving MCA dead-letters it with 2085; pattern orphaned_reply."""
    sim, front, back, ch = pair()  # requests QMA -> QMB
    back.define_qlocal("QMA", usage="XMITQ")
    back.route("QMA", "QMA")
    Channel(sim, "QMB.TO.QMA", back, front, "QMA", latency=0.01).start()
    back.define_qlocal("SVC")
    front.define_qremote("SVC.REQ", "SVC", "QMB")
    Requester(sim, front, Actor("portal", MQAT_UNIX, "portal"), "SVC.REQ", count=1, rate=10,
              timeout=1.0).start()
    sim.run(3)
    (req,) = list(back.queue("SVC").messages())
    temp = req.md["ReplyToQ"]
    assert temp.startswith("AMQ.") and req.md["ReplyToQMgr"] == "QMA"
    assert temp in front.deleted_tempdyn and temp not in front.objects
    reply = msg(b"late", MsgType=2, CorrelId=req.md["MsgId"])
    assert back.put(temp, reply, actor=APP, qmgr="QMA") == 0
    sim.run(5)
    (d,) = dead(front)
    assert d.headers[0][1]["Reason"] == 2085 and d.headers[0][1]["DestQName"] == temp
    assert d.pattern == "orphaned_reply" and d.md["MsgType"] == 2


def test_persistent_reply_to_a_temporary_queue_is_refused_with_2048():
    """2048 MQRC_PERSISTENT_NOT_ALLOWED: a temporary dynamic queue cannot hold persistent
    messages; the MCA dead-letters the reply (pattern null: the queue still exists)."""
    sim, qma, qmb, ch = pair()
    temp = qmb.create_tempdyn()
    send(qma, temp.name, Persistence=1, MsgType=2)
    sim.run(2)
    (d,) = dead(qmb)
    assert d.headers[0][1]["Reason"] == 2048 and d.pattern is None


HANDLER_RULES = """\
INPUTQ(' ') RETRYINT(10) WAIT(YES)
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)
REASON(MQRC_Q_FULL) ACTION(FWD) FWDQ(PARKED) HEADER(YES)
REASON(MQRC_PUT_INHIBITED) ACTION(FWD) FWDQ(PLAIN) HEADER(NO)
REASON(MQRC_NOT_AUTHORIZED) ACTION(DISCARD)
"""


def dlq_message(qm, reason, destq, **md):
    m = msg(b"data", Encoding=273, CodedCharSetId=819, **md)
    assert qm.put("ORIGIN", m, actor=APP) == 0
    _, got = qm.get(qm.queue("ORIGIN"), actor=APP)
    rc = qm.dead_letter(got, reason, destq, qm.name, actor=Actor("mca", MQAT_UNIX, "amqrmppa"))
    qm.commit(qm.queue("ORIGIN"), got, APP)
    assert rc == 0
    return got


def test_dlq_handler_retry_restores_the_original_message():
    """IBM's sample handler amqsdlq: RETRY strips the MQDLH, restores
    Format/Encoding/CodedCharSetId from it ("Dead-letter queue processing": the fields to
    reinstate), puts to DestQName with MQPMO_PASS_ALL_CONTEXT ("How the rules table is
    processed", note 4; context and MsgId kept)."""
    sim, qm = world()
    qm.define_qlocal("ORIGIN")
    target = qm.define_qlocal("TARGET")
    original = dlq_message(qm, 2053, "TARGET")
    DlqHandler(sim, qm, HANDLER_RULES).start()
    sim.run(1)
    (m,) = list(target.messages())
    assert m.headers == () and m.body == b"data"
    assert (m.md["Format"], m.md["Encoding"], m.md["CodedCharSetId"]) == ("MQSTR", 273, 819)
    assert m.md["MsgId"] == original.md["MsgId"] and m.md["PutApplName"] == "tester"
    assert qm.queue(DLQ).depth == 0
    assert any(e["event"] == "dlq_handler_retry" and e["rule"] == 1 for e in m.events)


def test_dlq_handler_tries_the_next_matching_rule_after_retry_attempts():
    """IBM MQ "How the rules table is processed": a rule is retried up to RETRY times, at
    RETRYINT intervals; then the next matching rule. A failed put backs the get out
    (BackoutCount of the DLQ message + 1)."""
    sim, qm = world()
    qm.define_qlocal("ORIGIN")
    qm.define_qlocal("TARGET", maxdepth=0)
    parked = qm.define_qlocal("PARKED")
    dlq_message(qm, 2053, "TARGET")
    DlqHandler(sim, qm, HANDLER_RULES).start()
    sim.run(5)
    (d,) = list(qm.queue(DLQ).messages())
    assert d.md["BackoutCount"] == 1
    sim.run(15)  # second try of rule 1 at RETRYINT (10 s)
    assert d.md["BackoutCount"] == 2 and not d.removed
    sim.run(25)  # third attempt: RETRY(2) used up, the next matching rule
    assert qm.queue(DLQ).depth == 0
    (m,) = list(parked.messages())
    assert m.headers[0][0] == "MQDLH" and m.md["Format"] == "MQDEAD"  # HEADER(YES)
    failed = [e for e in m.events if e["event"] == "dlq_handler_put_failed"]
    assert [e["rule"] for e in failed] == [1, 1]
    assert m.md["BackoutCount"] == 0  # a new put


def test_dlq_handler_fwd_header_no_and_discard():
    """IBM's sample handler amqsdlq: FWD HEADER(NO) strips the MQDLH like RETRY; DISCARD
    removes the message ("DLQ rules (patterns and actions)")."""
    sim, qm = world()
    qm.define_qlocal("ORIGIN")
    plain = qm.define_qlocal("PLAIN")
    dlq_message(qm, 2051, "SOMEWHERE")
    dlq_message(qm, 2035, "SECURE")
    DlqHandler(sim, qm, HANDLER_RULES).start()
    sim.run(1)
    (m,) = list(plain.messages())
    assert m.headers == () and m.md["Format"] == "MQSTR"
    assert qm.queue(DLQ).depth == 0


def test_dlq_handler_leaves_unmatched_and_headerless_messages():
    """IBM MQ "How the rules table is processed": no matching rule -> ACTION(IGNORE)
    assumed; note 1: messages that do not begin with an MQDLH are never processed."""
    sim, qm = world()
    qm.define_qlocal("ORIGIN")
    dlq_message(qm, 2087, "ELSEWHERE")
    qm.put(DLQ, msg(b"no header"), actor=APP)
    DlqHandler(sim, qm, HANDLER_RULES).start()
    sim.run(60)
    msgs = list(qm.queue(DLQ).messages())
    assert len(msgs) == 2
    assert any(e["event"] == "dlq_handler_ignored" for e in msgs[0].events)
    assert any(e["event"] == "dlq_handler_no_dlh" for e in msgs[1].events)


def test_dlq_handler_wait_no_ends_when_nothing_left_can_be_processed():
    """IBM MQ "DLQ control data", WAIT(NO): the handler ends when the DLQ is empty or
    holds no message it can process -- not while a RETRY attempt is still to come."""
    sim, qm = world()
    qm.define_qlocal("ORIGIN")
    qm.define_qlocal("TARGET", maxdepth=0)
    dlq_message(qm, 2087, "ELSEWHERE")  # matches no rule: stays
    dlq_message(qm, 2053, "TARGET")  # RETRY(2) at RETRYINT(10), then FWD to PARKED
    qm.define_qlocal("PARKED")
    handler = DlqHandler(sim, qm, HANDLER_RULES.replace("WAIT(YES)", "WAIT(NO)"))
    handler.start()
    sim.run(15)
    assert handler.ended is None  # the second RETRY attempt is due at 10 s
    sim.run(60)
    assert handler.ended == 20.02  # the pass at 20 s (two messages, 0.01 s each) forwarded it
    assert qm.queue("PARKED").depth == 1 and qm.queue(DLQ).depth == 1
    assert qm.queue(DLQ).ipprocs == 0


def test_dlq_handler_wait_nnn_waits_that_long_for_new_work():
    """WAIT(nnn): after finding nothing it can process, the handler waits nnn seconds for
    new work before ending; a message arriving meanwhile is processed; WAIT(YES) never
    ends."""
    sim, qm = world()
    qm.define_qlocal("ORIGIN")
    target = qm.define_qlocal("TARGET")
    rules = HANDLER_RULES.replace("WAIT(YES)", "WAIT(30)")
    handler = DlqHandler(sim, qm, rules)
    handler.start()
    sim.at(20, dlq_message, qm, 2053, "TARGET")
    sim.run(100)
    assert target.depth == 1
    assert handler.ended == 50.01  # 30 s after the retry of the message of 20 s (0.01 s)
    sim2, qm2 = world()
    forever = DlqHandler(sim2, qm2, HANDLER_RULES)
    forever.start()
    sim2.run(1000)
    assert forever.ended is None and not forever.process.done


def test_dlq_handler_refuses_a_table_with_errors():
    """IBM MQ "How the rules table is processed", note 3: the rules table is validated
    when the handler starts."""
    from dlqlens.sim import SimulationError

    sim, qm = world()
    with pytest.raises(SimulationError, match="rules table has errors"):
        DlqHandler(sim, qm, "REASON(MQRC_Q_FULL) RETRY(2)\n")


def test_dlq_handler_putaut_ctx_puts_with_the_message_user():
    """IBM MQ "DLQ rules (patterns and actions)", IBM's sample handler amqsdlq: PUTAUT(CTX)
    puts with the authority of MQMD.UserIdentifier; a user without put authority makes the
    RETRY fail (the message stays, backed out)."""
    sim, qm = world()
    qm.define_qlocal("ORIGIN")
    target = qm.define_qlocal("TARGET", authorized={"mqm"})
    dlq_message(qm, 2053, "TARGET")  # put by the test application, user appuser
    rules = "INPUTQ(' ') RETRYINT(30)\nREASON(MQRC_Q_FULL) ACTION(RETRY) PUTAUT({})\n"
    DlqHandler(sim, qm, rules.format("CTX")).start()
    sim.run(2)
    (d,) = list(qm.queue(DLQ).messages())
    assert target.depth == 0 and d.md["BackoutCount"] == 1
    assert [e["reason"] for e in d.events if e["event"] == "dlq_handler_put_failed"] == [2035]

    sim2, qm2 = world()
    qm2.define_qlocal("ORIGIN")
    target2 = qm2.define_qlocal("TARGET", authorized={"mqm"})
    dlq_message(qm2, 2053, "TARGET")
    DlqHandler(sim2, qm2, rules.format("DEF")).start()  # the handler's own user, mqm
    sim2.run(2)
    assert target2.depth == 1 and qm2.queue(DLQ).depth == 0
