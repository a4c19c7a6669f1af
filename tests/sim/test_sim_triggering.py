"""Triggering rules, each on a tiny world.

Source: IBM MQ, "Conditions for a trigger event", numbered items quoted by
number; the DEPTH reset and the dead-lettering of undeliverable trigger
messages follow the IBM pages named in ``docs/simulator.md`` ("The queue
manager's rules").
"""

from __future__ import annotations

from sim_helpers import APP, DLQ, msg, put, trigger_messages, triggered, world

from dlqlens.sim import Actor
from dlqlens.sim.apps import ServerProgram, TriggerMonitor
from dlqlens.sim.qmgr import MQAT_UNIX

SERVER = Actor("server", MQAT_UNIX, "server")


def test_first_makes_one_trigger_message_for_a_burst():
    """Item 3: FIRST triggers when the qualifying count was previously zero."""
    sim, qm = world()
    triggered(qm, trigtype="FIRST")
    assert put(qm, "APP.Q", 25) == [0] * 25
    tms = trigger_messages(qm)
    assert len(tms) == 1
    ev = tms[0].events[0]
    assert ev["event"] == "trigger" and ev["cause"] == "first" and ev["depth"] == 1


def test_first_again_after_the_queue_was_emptied():
    """Item 3 (FIRST): a put to an empty queue triggers again."""
    sim, qm = world()
    q, _ = triggered(qm, trigtype="FIRST")
    put(qm, "APP.Q")
    _, m = qm.get(q, actor=SERVER, syncpoint=False)
    assert m is not None and q.depth == 0
    put(qm, "APP.Q")
    assert len(trigger_messages(qm)) == 2


def test_first_and_depth_do_not_trigger_while_the_queue_is_open_for_input():
    """Item 4: FIRST/DEPTH need OpenInputCount zero; EVERY does not."""
    for trigtype, expected in (("FIRST", 0), ("DEPTH", 0), ("EVERY", 3)):
        sim, qm = world()
        q, _ = triggered(qm, trigtype=trigtype, trigdpth=1)
        qm.open_input(q, SERVER)
        put(qm, "APP.Q", 3)
        assert len(trigger_messages(qm)) == expected, trigtype


def test_every_makes_one_trigger_message_per_message():
    """Item 3 (EVERY): 'any number' previously on the queue."""
    sim, qm = world()
    triggered(qm, trigtype="EVERY")
    put(qm, "APP.Q", 7)
    tms = trigger_messages(qm)
    assert len(tms) == 7
    assert [m.events[0]["cause"] for m in tms] == ["every"] * 7


def test_depth_triggers_at_the_trigdpth_th_message_then_turns_trigger_off():
    """Item 3 (DEPTH: TriggerDepth minus 1 previously); IBM TriggerType: TriggerControl then OFF."""
    sim, qm = world()
    q, _ = triggered(qm, trigtype="DEPTH", trigdpth=4)
    put(qm, "APP.Q", 3)
    assert trigger_messages(qm) == []
    put(qm, "APP.Q")
    tms = trigger_messages(qm)
    assert len(tms) == 1 and tms[0].events[0]["depth"] == 4
    assert q.trigger is False
    put(qm, "APP.Q", 10)
    assert len(trigger_messages(qm)) == 1


def test_turning_depth_triggering_back_on_with_enough_messages_triggers():
    """Item 13: TriggerControl changed to ON with at least TriggerDepth messages."""
    sim, qm = world()
    q, _ = triggered(qm, trigtype="DEPTH", trigdpth=2)
    put(qm, "APP.Q", 5)
    assert len(trigger_messages(qm)) == 1
    qm.alter("APP.Q", trigger=True)
    tms = trigger_messages(qm)
    assert len(tms) == 2 and tms[1].events[0]["cause"] == "alter"


def test_messages_below_trigmpri_do_not_count():
    """Items 2 and 14: 100 messages below TriggerMsgPriority leave the effective depth at 0."""
    sim, qm = world()
    q, _ = triggered(qm, trigtype="FIRST", trigmpri=5)
    put(qm, "APP.Q", 100, Priority=4)
    assert trigger_messages(qm) == [] and q.depth == 100 and q.trig_count == 0
    put(qm, "APP.Q", Priority=5)
    assert len(trigger_messages(qm)) == 1


def test_depth_counts_only_messages_of_sufficient_priority():
    """Items 2-3 (DEPTH): the TRIGDPTH-th message of priority >= TRIGMPRI triggers."""
    sim, qm = world()
    triggered(qm, trigtype="DEPTH", trigdpth=3, trigmpri=3)
    for prio in (9, 0, 0, 5, 1):
        put(qm, "APP.Q", Priority=prio)
    assert trigger_messages(qm) == []
    put(qm, "APP.Q", Priority=3)
    assert len(trigger_messages(qm)) == 1


def test_fifo_queue_uses_its_default_priority_for_triggering():
    """Item 14: with MSGDLVSQ(FIFO) the queue's default priority stands for the message's."""
    sim, qm = world()
    triggered(qm, trigtype="FIRST", trigmpri=5, msgdlvsq="FIFO", defprty=4)
    put(qm, "APP.Q", 3, Priority=9)
    assert trigger_messages(qm) == []
    sim2, qm2 = world()
    triggered(qm2, trigtype="FIRST", trigmpri=4, msgdlvsq="FIFO", defprty=4)
    put(qm2, "APP.Q", Priority=0)
    assert len(trigger_messages(qm2)) == 1


def test_an_expired_message_still_counts_toward_depth_triggering():
    """MQMD "Expiry (MQLONG)", note 2: expired messages count toward the depth 'including
    depth triggering'."""
    sim, qm = world()
    q, _ = triggered(qm, trigtype="DEPTH", trigdpth=3)
    put(qm, "APP.Q", 2, Expiry=10)  # one second
    sim.run(5)
    assert qm.expired(next(iter(q.messages())))
    assert q.depth == 2
    put(qm, "APP.Q")
    tms = trigger_messages(qm)
    assert len(tms) == 1 and tms[0].events[0]["depth"] == 3


def test_first_retriggers_on_a_put_after_trigint():
    """Item 11: FIRST on a non-empty queue triggers again once TriggerInterval has passed."""
    sim, qm = world(trigint=5000)  # milliseconds
    triggered(qm, trigtype="FIRST")
    put(qm, "APP.Q")
    sim.run(4.9)
    put(qm, "APP.Q")
    assert len(trigger_messages(qm)) == 1
    sim.run(5.0)
    put(qm, "APP.Q")
    tms = trigger_messages(qm)
    assert len(tms) == 2 and tms[1].events[0]["cause"] == "trigint"
    assert tms[1].pattern == "trigger_storm"


def test_close_without_draining_retriggers_and_a_drained_close_does_not():
    """Item 12 and its note a: the last MQCLOSE with messages left makes a trigger message."""
    sim, qm = world()
    q, _ = triggered(qm, trigtype="FIRST")
    put(qm, "APP.Q", 3)
    qm.open_input(q, SERVER)
    qm.get(q, actor=SERVER, syncpoint=False)
    qm.close_input(q, SERVER, drained=False)
    tms = trigger_messages(qm)
    assert [m.events[0]["cause"] for m in tms] == ["first", "close"]
    assert tms[1].pattern == "trigger_storm"
    qm.open_input(q, SERVER)
    while qm.get(q, actor=SERVER, syncpoint=False)[1] is not None:
        pass
    qm.close_input(q, SERVER, drained=True)
    assert len(trigger_messages(qm)) == 2


def test_backout_before_close_retriggers_close_before_backout_does_not():
    """Item 12 note b: backed out before MQCLOSE -> trigger; closed first with the queue
    otherwise empty -> none."""
    sim, qm = world()
    q, _ = triggered(qm, trigtype="FIRST")
    put(qm, "APP.Q")
    qm.open_input(q, SERVER)
    _, m = qm.get(q, actor=SERVER, syncpoint=True)
    qm.close_input(q, SERVER)
    qm.backout(q, m, SERVER)
    assert len(trigger_messages(qm)) == 1  # only the first one
    qm.open_input(q, SERVER)
    _, m = qm.get(q, actor=SERVER, syncpoint=True)
    qm.backout(q, m, SERVER)
    qm.close_input(q, SERVER)
    assert len(trigger_messages(qm)) == 2


def test_no_trigger_monitor_no_trigger_until_one_opens_the_initiation_queue():
    """Items 8 and 13 (a trigger monitor issues MQOPEN for input on the initiation queue)."""
    sim, qm = world()
    q, iq = triggered(qm, trigtype="EVERY", monitor=False)
    put(qm, "APP.Q", 4)
    assert trigger_messages(qm) == []
    qm.open_input(iq, SERVER)
    tms = trigger_messages(qm)
    assert len(tms) == 1 and tms[0].events[0]["cause"] == "initq_open"  # one, even for EVERY


def test_put_inhibited_initiation_queue_then_enabled():
    """Items 7 and 13 (InhibitPut of an initiation queue changes to allowed)."""
    sim, qm = world()
    q, iq = triggered(qm, trigtype="FIRST")
    qm.alter("INITQ", put="DISABLED")
    put(qm, "APP.Q", 2)
    assert iq.depth == 0 and q.last_trigger is None
    qm.alter("INITQ", put="ENABLED")
    tms = trigger_messages(qm)
    assert len(tms) == 1 and tms[0].events[0]["cause"] == "initq_put_enabled"


def test_no_process_definition_no_trigger():
    """Item 6: ProcessName must name an existing process definition."""
    sim, qm = world()
    triggered(qm, trigtype="EVERY", process="MISSING.PROC")
    del qm.processes["MISSING.PROC"]
    put(qm, "APP.Q", 2)
    assert trigger_messages(qm) == []


def test_get_inhibited_application_queue_on_zos_then_enabled():
    """Item 5 (z/OS only) and item 13 (InhibitGet changes to allowed)."""
    sim, qm = world(platform="zos")
    triggered(qm, trigtype="FIRST", get="DISABLED")
    put(qm, "APP.Q")
    assert trigger_messages(qm) == []
    qm.alter("APP.Q", get="ENABLED")
    tms = trigger_messages(qm)
    assert len(tms) == 1 and tms[0].events[0]["cause"] == "get_enabled"
    sim2, qm2 = world(platform="linux")
    triggered(qm2, trigtype="FIRST", get="DISABLED")
    put(qm2, "APP.Q")
    assert len(trigger_messages(qm2)) == 1  # item 5 is a z/OS condition


def test_trigger_message_descriptor_and_mqtm():
    """Trigger messages: nonpersistent, initiation queue's default priority, MQEI_UNLIMITED
    (MQMD "Expiry (MQLONG)", note 8), Format MQTRIG, MQTM from the queue and process
    definitions."""
    sim, qm = world()
    qm.define_qlocal("INITQ", defprty=6)
    qm.define_process("PROC", applicid="/opt/bin/srv", envrdata="&", userdata="u1")
    triggered(qm, trigtype="FIRST", trigdata="hello")
    put(qm, "APP.Q", Expiry=50, Persistence=1, Priority=2)
    (tm,) = trigger_messages(qm)
    assert tm.md["Format"] == "MQTRIG" and tm.md["Persistence"] == 0
    assert tm.md["Priority"] == 6 and tm.md["Expiry"] == -1 and tm.deadline is None
    assert tm.md["PutApplType"] == 7 and tm.md["PutApplName"] == "QM1"
    fields = tm.header("MQTM")
    assert fields["QName"] == "APP.Q" and fields["ProcessName"] == "PROC"
    assert fields["TriggerData"] == "hello" and fields["ApplId"] == "/opt/bin/srv"
    assert fields["EnvData"] == "&" and fields["UserData"] == "u1"


def test_full_initiation_queue_dead_letters_the_trigger_message():
    """IBM 'When triggering does not work': a trigger message that cannot be put on the
    initiation queue goes to the DLQ (reason of the failed put, put by the queue manager)."""
    sim, qm = world()
    qm.define_qlocal("INITQ", maxdepth=1)
    triggered(qm, trigtype="EVERY")
    put(qm, "APP.Q", 3)
    assert qm.queue("INITQ").depth == 1
    dead = list(qm.queue(DLQ).messages())
    assert len(dead) == 2
    dlh = dead[0].headers[0][1]
    assert dlh["Reason"] == 2053 and dlh["DestQName"] == "INITQ" and dlh["Format"] == "MQTRIG"
    assert dlh["PutApplType"] == 7 and dlh["PutApplName"] == "QM1"
    assert dead[0].header("MQTM")["QName"] == "APP.Q"


def test_trigger_monitor_dead_letters_what_it_cannot_start(tmp_path):
    """MQDLH "Reason (MQLONG)", MQFB_APPL_CANNOT_BE_STARTED: a trigger monitor (runmqtrm, which
    keeps the DLQ open, "runmqtrm (start trigger monitor)") puts a trigger message it cannot act
    on to the DLQ with MQFB_APPL_CANNOT_BE_STARTED (265); the MQTM follows the MQDLH (Format
    MQTRIG)."""
    from sim_helpers import capture

    sim, qm = world()
    qm.define_qlocal("INITQ")
    qm.define_process("PROC", applicid="/no/such/program")
    qm.define_qlocal("APP.Q", trigger=True, trigtype="FIRST", initq="INITQ", process="PROC")
    TriggerMonitor(sim, qm, "INITQ").start()
    sim.run(1)
    put(qm, "APP.Q")
    sim.run(5)
    gt, rows = capture(sim, tmp_path, [("QM1", DLQ)])
    assert len(gt) == len(rows) == 1
    assert gt[0]["pattern"] == "trigger_failure"
    assert rows[0]["dlh"]["Reason"] == 265 and rows[0]["dlh"]["Format"] == "MQTRIG"
    assert rows[0]["dlh"]["PutApplName"] == "runmqtrm" and rows[0]["dlh"]["DestQName"] == "INITQ"
    assert rows[0]["headers"] == ["MQDEAD", "MQTRIG"]
    assert rows[0]["tm"]["QName"] == "APP.Q" and rows[0]["tm"]["ApplId"] == "/no/such/program"


def test_trigger_monitor_rejects_an_unsupported_appltype():
    """MQFB_APPL_TYPE_ERROR (267): the monitor cannot start this ApplType."""
    sim, qm = world()
    qm.define_qlocal("INITQ")
    qm.define_process("PROC", applicid="/bin/x", appltype=1)  # MQAT_CICS
    qm.define_qlocal("APP.Q", trigger=True, initq="INITQ", process="PROC")
    TriggerMonitor(sim, qm, "INITQ").start()
    sim.run(0.5)
    put(qm, "APP.Q")
    sim.run(2)
    (dead,) = list(qm.queue(DLQ).messages())
    assert dead.headers[0][1]["Reason"] == 267


def test_non_draining_server_makes_a_trigger_per_run():
    """Item 12 note a: a server that ends before the queue is empty is started again and again."""
    sim, qm = world()
    qm.define_qlocal("INITQ")
    qm.define_process("PROC", applicid="/bin/one")
    q = qm.define_qlocal("APP.Q", trigger=True, initq="INITQ", process="PROC")
    prog = ServerProgram(sim, "/bin/one", qm, SERVER, max_messages=1, startup=0.1)
    TriggerMonitor(sim, qm, "INITQ", spawn_time=0.05).start()
    sim.run(0.5)
    for _ in range(5):
        qm.put("APP.Q", msg(), actor=SERVER)
    sim.run(30)
    assert q.depth == 0
    assert prog.starts == 5  # one trigger at the first put, one per close that left messages
    assert sim.stats["trigger_messages"] == 5


def test_draining_server_is_started_once_for_a_burst():
    """Items 3 and 12: a server that empties the queue closes it without a new trigger."""
    sim, qm = world()
    qm.define_qlocal("INITQ")
    qm.define_process("PROC", applicid="/bin/all")
    qm.define_qlocal("APP.Q", trigger=True, initq="INITQ", process="PROC")
    prog = ServerProgram(sim, "/bin/all", qm, SERVER, wait_interval=1.0, startup=0.1)
    TriggerMonitor(sim, qm, "INITQ").start()
    sim.run(0.5)
    for _ in range(5):
        qm.put("APP.Q", msg(), actor=SERVER)
    sim.run(30)
    assert prog.starts == 1 and sim.stats["trigger_messages"] == 1


def test_a_transmission_queue_with_a_blank_process_is_triggered(tmp_path):
    """Items 5-6 of "Conditions for a trigger event": a transmission queue whose ProcessName is
    blank is triggered, and its trigger message has ProcessName, ApplId, EnvData and UserData
    blank and ApplType MQAT_UNKNOWN; "Triggering channels": TRIGDATA names the channel and the
    trigger message goes to SYSTEM.CHANNEL.INITQ."""
    from sim_helpers import capture

    sim, qm = world()
    initq = qm.define_qlocal("SYSTEM.CHANNEL.INITQ")
    qm.define_qlocal("QM2", usage="XMITQ", trigger=True, trigtype="FIRST",
                     initq="SYSTEM.CHANNEL.INITQ", trigdata="QM1.TO.QM2")
    qm.define_qremote("ORDERS", rname="ORDERS", rqmname="QM2", xmitq="QM2")
    qm.open_input(initq, Actor("runmqchi", MQAT_UNIX, "runmqchi"))
    assert put(qm, "ORDERS", 3) == [0, 0, 0]
    (tm,) = trigger_messages(qm, "SYSTEM.CHANNEL.INITQ")
    assert tm.events[0]["cause"] == "first" and tm.events[0]["queue"] == "QM2"
    assert tm.header("MQTM") == {"Version": 1, "QName": "QM2", "TriggerData": "QM1.TO.QM2",
                                 "ProcessName": "", "ApplType": -1, "ApplId": "", "EnvData": "",
                                 "UserData": ""}
    gt, rows = capture(sim, tmp_path, [("QM1", "SYSTEM.CHANNEL.INITQ")])
    assert rows[0]["tm"]["ApplType"] == -1 and rows[0]["tm"]["TriggerData"] == "QM1.TO.QM2"
    assert rows[0]["tm"]["ProcessName"] == "" and rows[0]["tm"]["QName"] == "QM2"


def test_a_transmission_queue_naming_a_missing_process_is_not_triggered():
    """Item 6: only a blank ProcessName lets a transmission queue through without a process
    definition; a PROCESS naming none fails the condition as for any queue."""
    sim, qm = world()
    triggered(qm, "QM2", trigtype="EVERY", usage="XMITQ", process="NO.SUCH.PROC")
    del qm.processes["NO.SUCH.PROC"]
    qm.define_qremote("ORDERS", rname="ORDERS", rqmname="QM2", xmitq="QM2")
    assert put(qm, "ORDERS", 2) == [0, 0]
    assert trigger_messages(qm) == []


def test_altering_trigger_on_for_a_transmission_queue_with_messages_triggers():
    """Item 13 (TriggerControl changed to MQTC_ON with messages on the queue) applies to a
    transmission queue as to any: ALTER QLOCAL(xmitq) TRIGGER starts its channel."""
    sim, qm = world()
    triggered(qm, "QM2", trigger=False, usage="XMITQ", process="")
    qm.define_qremote("ORDERS", rname="ORDERS", rqmname="QM2", xmitq="QM2")
    put(qm, "ORDERS", 2)
    assert trigger_messages(qm) == []
    qm.alter("QM2", trigger=True)
    (tm,) = trigger_messages(qm)
    assert tm.events[0]["cause"] == "alter" and tm.header("MQTM")["ProcessName"] == ""


def test_one_alter_turning_trigger_on_and_enabling_get_makes_one_trigger_message():
    """Item 13 and the page's note 1: one MQSET/ALTER is one event, however many of item 13's
    changes it makes, and an event other than a put makes one trigger message for the queue."""
    for platform in ("linux", "zos"):
        sim, qm = world(platform=platform)
        q, _ = triggered(qm, trigtype="FIRST", trigger=False, get="DISABLED")
        put(qm, "APP.Q", 2)
        assert trigger_messages(qm) == []
        qm.alter("APP.Q", trigger=True, get="ENABLED")
        tms = trigger_messages(qm)
        assert [m.events[0]["cause"] for m in tms] == ["alter"], platform


# -- units of work --------------------------------------------------------------------------
# IBM MQ, "Conditions for a trigger event", the paragraph after item 10: a trigger message
# caused by a put in a unit of work "does not become available for retrieval by the trigger
# monitor application until the unit of work completes, whether the unit of work is committed
# or, for trigger type MQTT_FIRST or MQTT_DEPTH, backed out". "Designing an application that
# uses triggered queues", "Trigger messages and units of work": the queue manager counts
# committed and uncommitted messages when it assesses the conditions. "MQBACK - Back out
# changes": messages put as part of a unit of work are deleted.

def _put_in_uow(qm, n=1, actor=APP):
    return [qm.put("APP.Q", msg(), actor=actor, syncpoint=True) for _ in range(n)]


def test_a_put_in_a_unit_of_work_triggers_at_commit():
    sim, qm = world()
    q, _ = triggered(qm, trigtype="FIRST")
    assert _put_in_uow(qm) == [0]
    assert q.depth == 1 and q.trig_count == 1  # counted at once (uncommitted counts)
    assert trigger_messages(qm) == []          # made, not yet available
    assert qm.get(q, actor=SERVER, syncpoint=False) == (2033, None)  # no get sees it
    assert qm.commit_uow(APP) == 0
    tms = trigger_messages(qm)
    assert len(tms) == 1 and tms[0].events[0]["cause"] == "first"
    rc, m = qm.get(q, actor=SERVER, syncpoint=False)
    assert rc == 0 and m is not None


def test_an_uncommitted_message_counts_toward_first():
    """Another put while the first is uncommitted finds a non-empty queue: no second trigger
    message (item 3), and the commit delivers the one made at the first put."""
    sim, qm = world()
    triggered(qm, trigtype="FIRST")
    _put_in_uow(qm)
    put(qm, "APP.Q")
    assert trigger_messages(qm) == []
    qm.commit_uow(APP)
    assert len(trigger_messages(qm)) == 1


def test_first_and_depth_trigger_messages_survive_a_backout():
    for trigtype, n in (("FIRST", 1), ("DEPTH", 3)):
        sim, qm = world()
        q, _ = triggered(qm, trigtype=trigtype, trigdpth=3)
        _put_in_uow(qm, n)
        assert trigger_messages(qm) == []
        qm.backout_uow(APP)
        assert q.depth == 0 and q.trig_count == 0, trigtype  # the puts are deleted
        assert len(trigger_messages(qm)) == 1, trigtype     # the trigger message is not
        assert q.trigger is (trigtype == "FIRST")           # DEPTH: TRIGGER off at the put


def test_an_every_put_that_is_backed_out_makes_no_trigger_message():
    sim, qm = world()
    triggered(qm, trigtype="EVERY")
    _put_in_uow(qm, 4)
    qm.backout_uow(APP)
    assert trigger_messages(qm) == []
    assert sim.stats["trigger_messages_backed_out"] == 4
    _put_in_uow(qm, 2)
    qm.commit_uow(APP)
    assert len(trigger_messages(qm)) == 2


def test_the_trigger_message_keeps_the_attributes_of_the_trigger_event():
    """IBM MQ "Properties of trigger messages": changes to the trigger attributes after the
    trigger event have no effect on a trigger message held by a unit of work."""
    sim, qm = world()
    triggered(qm, trigtype="FIRST", trigdata="before")
    _put_in_uow(qm)
    qm.alter("APP.Q", trigger=False, trigdata="after")
    qm.commit_uow(APP)
    (tm,) = trigger_messages(qm)
    assert tm.header("MQTM")["TriggerData"] == "before"
