"""Play a trigger-events script on a simulated queue manager, step by step.

The script is the trigger-condition evaluator's (:mod:`dlqlens.trigger_events`,
``docs/triggering.md``): compact text (``@1.5 put APP.Q priority=5 count=3``)
or JSON Lines, and the queue definitions are MQSC
(:func:`dlqlens.mq.mqsc.parse_mqsc`). :func:`play` makes each event the MQI
call it stands for on a :class:`~dlqlens.sim.qmgr.QueueManager` (MQPUT,
MQGET, MQCMIT, MQBACK, MQOPEN/MQCLOSE for input, MQSET/ALTER, DEFINE/DELETE)
and records, after each one, the queue's state and the trigger messages the
simulator made. The same script given to
:func:`dlqlens.trigger_events.evaluate` says which condition of IBM MQ's
"Conditions for a trigger event" stopped the events that made none; both
decide with :mod:`dlqlens.mq.trigger_conditions`, and
``tests/sim/test_sim_script.py`` checks they agree.

A ``put`` may also carry ``expiry=N`` (MQMD Expiry, tenths of a second; the
evaluator ignores it, as expiry does not change triggering: an expired
message counts toward the depth, MQMD "Expiry (MQLONG)", note 2).

Units of work: a ``put ... syncpoint=yes`` is an MQPUT with MQPMO_SYNCPOINT by
the application, in a unit of work of its own for each queue (the actor
:func:`putter`), so that ``commit QUEUE`` / ``backout QUEUE`` resolve the puts
to that queue (MQCMIT / MQBACK of that unit of work, its trigger messages then
made available) as well as the server's gets from it.
"""

from __future__ import annotations

from dlqlens.mq.constants import MQAT
from dlqlens.sim.engine import Simulation, SimulationError
from dlqlens.sim.qmgr import NO_ID, Actor, LocalQueue, QueueManager, SimMessage
from dlqlens.trigger_events import parse_events

#: Who makes the script's MQI calls: the application, the server it starts,
#: the trigger monitor (runmqtrm) opening its initiation queue.
APPLICATION = Actor("application", MQAT["MQAT_UNIX"], "application", "appuser")
SERVER = Actor("server", MQAT["MQAT_UNIX"], "server", "appuser")
MONITOR = Actor("runmqtrm", MQAT["MQAT_UNIX"], "runmqtrm")


def datagram(body: bytes = b"hello", **md) -> SimMessage:
    """A new MQSTR datagram (MQMT_DATAGRAM) for the simulator.

    Parameters
    ----------
    body : bytes
        The message data.
    **md
        MQMD fields by IBM name overriding the defaults (``Priority`` 0,
        ``Expiry`` -1 MQEI_UNLIMITED, non-persistent, Encoding 546, CCSID
        1208; ``Report``, ``ReplyToQ``...).
    """
    fields = {"Version": 2, "Report": 0, "MsgType": 8, "Expiry": -1, "Feedback": 0,
              "Encoding": 546, "CodedCharSetId": 1208, "Format": "MQSTR", "Priority": 0,
              "Persistence": 0, "MsgId": NO_ID, "CorrelId": NO_ID, "ReplyToQ": "",
              "ReplyToQMgr": "", "AccountingToken": b"\0" * 32}
    fields.update(md)
    return SimMessage(fields, (), body)


def queue_manager(defs, *, name: str = "QM1", platform: str = "linux", seed: int = 0,
                  deadq: str = "SYSTEM.DEAD.LETTER.QUEUE") -> QueueManager:
    """A new simulation with one queue manager holding the local queues and processes of ``defs``.

    Parameters
    ----------
    defs : dlqlens.mq.mqsc.Definitions
        :func:`dlqlens.mq.mqsc.parse_mqsc` or ``read_queue_defs`` output;
        its QLOCAL definitions and processes are defined, ``ALTER QMGR
        TRIGINT`` sets TRIGINT (milliseconds). Other queue types are left out.
    deadq : str
        DEADQ, defined as a local queue when the definitions do not have it
        ('' for none).

    Returns
    -------
    QueueManager
        Its simulation is ``qm.sim`` (start 2024-03-15 08:00:00 UTC).
    """
    sim = Simulation(seed)
    qm = QueueManager(sim, name, platform=platform, deadq=deadq,
                      trigint=int(getattr(defs, "trigint", 999999999)))
    for qname, d in defs.items():
        if getattr(d, "type", "QLOCAL") == "QLOCAL":
            qm.define_qlocal(qname, **d.attributes)
    if deadq and deadq not in qm.objects:
        qm.define_qlocal(deadq, maxdepth=999999999)
    for pname, p in (getattr(defs, "processes", None) or {}).items():
        qm.define_process(pname, **p.attributes)
    return qm


def putter(queue: str) -> Actor:
    """The application putting to ``queue`` under syncpoint in a script (one unit of work
    per queue)."""
    return Actor(f"application:{queue}", MQAT["MQAT_UNIX"], "application", "appuser")


def _trigger_messages(qm: QueueManager) -> list[SimMessage]:
    return [m for q in qm.objects.values() if isinstance(q, LocalQueue) and not q.store.spooled
            for m in q.messages() if m.events and m.events[0].get("event") == "trigger"]


def play(qm: QueueManager, script, *, source: str = "<script>") -> list[dict]:
    """Make each event of ``script`` on ``qm``; one row per event (per message for a put).

    Parameters
    ----------
    qm : QueueManager
        Its clock is advanced to each event's ``t`` (seconds since the
        simulation's start) before the event is made.
    script : str
        Events as :func:`dlqlens.trigger_events.parse_events` reads them
        (compact text or JSON Lines).

    Returns
    -------
    list of dict
        ``line``, ``t`` (seconds), ``step`` (the script line, comment removed),
        ``message`` (1-based within a ``put`` of several, else None),
        ``queue``, ``depth`` (CURDEPTH after the step, expired messages
        included), ``qualifying`` (messages of priority >= TRIGMPRI),
        ``ipprocs`` (OpenInputCount), ``trigger`` (list of
        ``(queue, cause)`` of the trigger messages the step made).

    Raises
    ------
    dlqlens.trigger_events.EventError
        On a script line that is not an event.
    dlqlens.sim.SimulationError
        When an event names a queue the queue manager does not have, a put
        fails (the evaluator does not model MAXDEPTH or PUT(DISABLED) on the
        application queue), or a close has no input handle to close.
    """
    lines = script.splitlines()
    events = parse_events(script, source)
    sim = qm.sim
    seen = {id(m) for m in _trigger_messages(qm)}
    made_so_far = sim.stats["trigger_messages"]
    held: dict[str, list] = {}  # messages got under syncpoint, by queue
    rows = []

    def row(ev, q, message=None):
        nonlocal made_so_far
        made = []
        if sim.stats["trigger_messages"] != made_so_far or ev["event"] in ("commit", "backout"):
            # look only when some were made, or a unit of work released those it held
            made_so_far = sim.stats["trigger_messages"]
            for m in _trigger_messages(qm):
                if id(m) not in seen:
                    seen.add(id(m))
                    made.append((m.events[0]["queue"], m.events[0]["cause"]))
        step = lines[ev["line"] - 1].split(" #", 1)[0].strip()
        rows.append({"line": ev["line"], "t": sim.seconds, "step": step, "message": message,
                     "queue": q.name if q is not None else "", "depth": getattr(q, "depth", None),
                     "qualifying": getattr(q, "trig_count", None),
                     "ipprocs": getattr(q, "ipprocs", None), "trigger": made})

    for ev in events:
        if "t" in ev:
            sim.run(float(ev["t"]))
        name = ev["event"]
        if name == "qmgr":
            qm.trigint = int(ev["trigint"])
            row(ev, None)
            continue
        if name == "define_process":  # the script names no program: APPLICID is the name
            qm.define_process(ev["process"], applicid=ev["process"])
            row(ev, None)
            continue
        if name == "delete_process":
            qm.processes.pop(ev["process"], None)
            row(ev, None)
            continue
        q = qm.queue(ev["queue"])
        if name == "put":
            count = int(ev.get("count", 1))
            for k in range(count):
                prio = ev.get("priority")  # None: MQPRI_PRIORITY_AS_Q_DEF (-1), the DEFPRTY
                m = datagram(Expiry=int(ev.get("expiry", -1)),
                             Priority=-1 if prio is None else int(prio))
                if ev.get("syncpoint"):
                    rc = qm.put(q.name, m, actor=putter(q.name), syncpoint=True)
                else:
                    rc = qm.put(q.name, m, actor=APPLICATION)
                if rc:
                    raise SimulationError(f"{source}:{ev['line']}: put to {q.name} failed "
                                          f"with reason {rc}")
                row(ev, q, k + 1 if count > 1 else None)
            continue
        if name == "get":
            for _ in range(int(ev.get("count", 1))):
                _, m = qm.get(q, actor=SERVER, syncpoint=bool(ev.get("syncpoint")))
                if m is not None and ev.get("syncpoint"):
                    held.setdefault(q.name, []).append(m)
        elif name in ("commit", "backout"):
            for m in held.pop(q.name, []):
                (qm.commit if name == "commit" else qm.backout)(q, m, SERVER)
            (qm.commit_uow if name == "commit" else qm.backout_uow)(putter(q.name))
        elif name in ("open_input", "monitor_start"):
            qm.open_input(q, MONITOR if name == "monitor_start" else SERVER)
        elif name in ("close_input", "monitor_stop"):
            if q.ipprocs <= 0:
                raise SimulationError(f"{source}:{ev['line']}: no input handle on {q.name}")
            qm.close_input(q, MONITOR if name == "monitor_stop" else SERVER,
                           drained=q.trig_count == 0)
        elif name == "alter":
            qm.alter(q.name, **ev["attributes"])
        elif name == "delete_queue":
            qm.delete_queue(q.name)
        row(ev, q)
    return rows


__all__ = ["APPLICATION", "MONITOR", "SERVER", "datagram", "play", "putter", "queue_manager"]
