"""The trigger-condition evaluator: which events make a trigger message, and why not.

Given queue definitions (:func:`dlqlens.mq.mqsc.read_queue_defs`: the
application queues, their initiation queues and process definitions, and the
queue manager's TRIGINT) and a sequence of events, :func:`evaluate` replays
the events on a small model of the queues and says, for every event, whether
the queue manager makes a trigger message, of which kind, or which item of
IBM MQ's "Conditions for a trigger event" (numbered 1-14 as in
``docs/triggering.md``) stopped it. The decisions
are those of :mod:`dlqlens.mq.trigger_conditions`, the code the simulator uses.

Events
------
JSON Lines (one object per line; blank lines and lines starting with ``#``
are ignored). Every object has ``event``; ``t`` (seconds since the start,
float, never decreasing; default: the previous event's time) is optional.

=====================  =====================================================
``event``              other keys
=====================  =====================================================
``put``                ``queue``; ``priority`` (0-9, default the queue's
                       DEFPRTY); ``count`` (messages, default 1);
                       ``syncpoint`` (bool, default false: put in a unit of
                       work, resolved by ``commit``/``backout`` of the queue)
``get``                ``queue``; ``count`` (default 1); ``syncpoint``
                       (bool, default false: under syncpoint the message is
                       locked until ``commit``/``backout``)
``commit``             ``queue``: the gets under syncpoint leave the queue;
                       the puts under syncpoint become available and the
                       trigger messages they caused are put
``backout``            ``queue``: the gets are reinstated (they count
                       again); the puts are deleted; the trigger messages
                       they caused are put for FIRST and DEPTH, discarded
                       for EVERY
``open_input``         ``queue``: MQOPEN for input (OpenInputCount + 1); on an
                       initiation queue this is a trigger monitor starting
``close_input``        ``queue``: MQCLOSE of an input handle
``monitor_start``      ``queue`` (or ``initq``): runmqtrm opens the
                       initiation queue (same as ``open_input`` on it)
``monitor_stop``       ``queue`` (or ``initq``): it closes it
``alter``              ``queue``; ``attributes``: lower-case MQSC names and
                       values (``{"trigger": true, "trigtype": "DEPTH"}``) or
                       MQSC text (``"TRIGGER TRIGTYPE(DEPTH) TRIGDPTH(3)"``)
``define_process``     ``process``: the process definition now exists
``delete_process``     ``process``: it no longer exists
``delete_queue``       ``queue``: the queue no longer exists
``qmgr``               ``trigint``: ALTER QMGR TRIGINT (milliseconds)
=====================  =====================================================

The compact text form has one event per line, ``[@T] VERB QUEUE [ARGS]``
(``#`` starts a comment)::

    @0     monitor-start APP.INITQ
    @1.5   put APP.WORK priority=5 count=3
    @2     open APP.WORK
    @2.1   get APP.WORK syncpoint=yes
    @2.2   backout APP.WORK
    @2.3   close APP.WORK
    @3     alter APP.WORK TRIGGER TRIGTYPE(DEPTH) TRIGDPTH(3)
    @4     delete-process WORK.PROC
    @5     trigint 200

(verbs: the event names with ``-`` for ``_``, and ``open``/``close`` for
``open_input``/``close_input``). A file whose first event line starts with
``{`` is JSON Lines.

Outcomes
--------
One :class:`Outcome` per message put, per application queue an event
concerns (a trigger monitor starting or an initiation queue's PUT being
enabled concerns every queue it serves), and one for every other event (with
condition 1: it is not a trigger event).

Units of work around puts follow IBM MQ "Conditions for a trigger event"
(the paragraph after item 10) and "Designing an application that uses
triggered queues" ("Trigger messages and units of work"): a put under
syncpoint counts toward the conditions at once (committed and uncommitted
messages are counted); the trigger message it causes is made at the put
(outcome ``uow='held'``, ``trigger`` false: nothing is on the initiation
queue yet) and becomes available when the unit of work is resolved: at
``commit`` (``uow='committed'``), or at ``backout`` for a queue whose TRIGTYPE
was FIRST or DEPTH at the put (``uow='backed_out'``); for EVERY a backed-out
put's trigger message is never made available (``uow='backed_out'``,
``trigger`` false). ``trigger`` is true on the outcome of the event that puts
a trigger message on the initiation queue, so summing it counts the trigger
messages a trigger monitor sees.

What is not modelled: the initiation queue's depth and MAXDEPTH (a trigger
message that cannot be put there goes to the DLQ), shared queues (the notes
of items 3-4), expiry, message segmentation.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

from dlqlens.errors import DlqlensError
from dlqlens.mq import trigger_conditions
from dlqlens.mq.mqsc import MqscError, parse_attributes

EVENTS = ("put", "get", "commit", "backout", "open_input", "close_input", "monitor_start",
          "monitor_stop", "alter", "define_process", "delete_process", "delete_queue", "qmgr")

_VERBS = {e.replace("_", "-"): e for e in EVENTS}
_VERBS.update({"open": "open_input", "close": "close_input"})


class EventError(DlqlensError):
    """An events file that cannot be used: names the source, line, expected and found."""

    def __init__(self, source: str, line: int, expected: str, found: str):
        self.source, self.line, self.expected, self.found = source, line, expected, found
        super().__init__(f"{source}:{line}: expected {expected}, found {found}")


@dataclass
class Outcome:
    """What one event did to one application queue.

    Attributes
    ----------
    line : int
        Line of the event in its file (1-based).
    event : str
        The event name (:data:`EVENTS`).
    queue : str
        The application queue judged (for initiation-queue events, each queue
        it serves); the event's queue when it concerns none.
    t : float
        Event time, seconds since the start.
    trigger : bool
        A trigger message is made.
    cause : str or None
        :attr:`dlqlens.mq.trigger_conditions.Decision.cause` when ``trigger``.
    item : int
        The item of "Conditions for a trigger event" the event is judged under
        (1, 3, 11, 12, 13).
    condition : int or None
        When not ``trigger``: the first item that stopped it...
    condition_text : str or None
        ...and its statement (:data:`dlqlens.mq.trigger_conditions.CONDITIONS`).
    failed : list of int
        Every item that was not satisfied.
    trigtype : str
        The queue's TRIGTYPE at the event.
    qualifying : int
        Messages of priority >= TRIGMPRI on the queue after the event.
    message : int or None
        For ``put`` events of several messages, which one (1-based).
    via : str or None
        The initiation queue, for events on it.
    uow : str or None
        For a trigger message caused by a put under syncpoint: ``'held'``
        (the outcome of the put: made, kept in the unit of work),
        ``'committed'`` or ``'backed_out'`` (the outcome of the ``commit`` or
        ``backout`` that resolved it; the line is that event's).
    """

    line: int
    event: str
    queue: str
    t: float
    trigger: bool
    cause: str | None = None
    item: int = 1
    condition: int | None = None
    condition_text: str | None = None
    failed: list = field(default_factory=list)
    trigtype: str = ""
    qualifying: int = 0
    message: int | None = None
    via: str | None = None
    uow: str | None = None

    def to_dict(self) -> dict:
        """The outcome as a JSON-ready dict (``dlqlens triggers evaluate --jsonl``)."""
        return asdict(self)

    def to_text(self) -> str:
        """One line: where, what, and the verdict; names from the definitions and
        events files shown with every non-printable character escaped
        (:func:`dlqlens.safe.one_line`)."""
        from dlqlens.safe import one_line

        what = f"{one_line(self.event)} {one_line(self.queue)}"
        if self.message is not None:
            what += f" #{one_line(self.message)}"
        if self.via:
            what += f" (via {one_line(self.via)})"
        head = f"line {self.line:<4} t={self.t:<9.3f} {what:<40}"
        if self.uow == "held":
            return (f"{head} trigger message made, held in the unit of work until it is "
                    f"resolved: {one_line(self.trigtype)} cause={one_line(self.cause)} "
                    f"(item {self.item})")
        if self.uow == "backed_out" and not self.trigger:
            return (f"{head} trigger message discarded: its put was backed out "
                    f"({one_line(self.trigtype)}: only FIRST and DEPTH keep it)")
        if self.trigger:
            return (f"{head} TRIGGER {one_line(self.trigtype)} cause={one_line(self.cause)} "
                    f"(item {self.item})")
        also = [c for c in self.failed[1:]]
        more = f" (also {', '.join(map(str, also))})" if also else ""
        return (f"{head} no trigger: condition {self.condition} not met{more}: "
                f"{one_line(self.condition_text)}")


class _Queue:
    """A queue's attributes and the state the conditions read."""

    def __init__(self, name: str, attrs: dict):
        self.name = name
        self.__dict__.update(attrs)
        self.ipprocs = 0
        self.deleted = False
        # [priority, counted, state] in delivery order; state False (available), "get" (got
        # under syncpoint: not counted) or "put" (put under syncpoint: counted, not gettable)
        self.messages: list = []
        self.trig_count = 0
        self.last_trigger_ms = None
        self.held: list = []  # (Outcome of the put, TRIGTYPE then) of trigger messages held

    def recount(self) -> None:
        self.trig_count = 0
        for m in self.messages:
            m[1] = trigger_conditions.qualifies(self, m[0])
            if m[1] and m[2] != "get":
                self.trig_count += 1


class _World:
    def __init__(self, queue_defs, platform: str):
        self.platform = platform
        self.queues: dict[str, _Queue] = {}
        for name, d in queue_defs.items():
            qtype = getattr(d, "type", "QLOCAL")
            if qtype == "QLOCAL":
                attrs = d.attributes if hasattr(d, "attributes") else dict(d)
                self.queues[name] = _Queue(name, dict(attrs))
        procs = getattr(queue_defs, "processes", {}) or {}
        self.processes = set(procs)

    def process_defined(self, name: str) -> bool:
        return name in self.processes

    def initiation_queue(self, name: str):
        q = self.queues.get(name)
        return None if q is None or q.deleted else q

    def served_by(self, initq: _Queue) -> list[_Queue]:
        return [q for q in self.queues.values()
                if not q.deleted and (q.initq or "").strip() == initq.name and q is not initq]


# ---------------------------------------------------------------------------
# reading events
# ---------------------------------------------------------------------------

def parse_events(text: str, source: str = "<string>") -> list[dict]:
    """Events from JSON Lines or the compact text form (see the module docstring).

    Returns
    -------
    list of dict
        One dict per event with ``event``, its keys, and ``line``.

    Raises
    ------
    EventError
        On a line that is not an event (bad JSON, unknown event, missing
        queue, bad number), naming source and line.
    """
    lines = text.splitlines()
    first = next((ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")), "")
    out = []
    for no, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        if first.startswith("{"):
            try:
                ev = json.loads(s)
            except json.JSONDecodeError as exc:
                raise EventError(source, no, "a JSON object", f"{s[:40]!r} ({exc.msg})") from None
            if not isinstance(ev, dict):
                raise EventError(source, no, "a JSON object", type(ev).__name__)
        else:
            ev = _compact(s, source, no)
        ev["line"] = no
        out.append(_check(ev, source, no))
    return out


def _compact(s: str, source: str, no: int) -> dict:
    s = s.split(" #", 1)[0].strip()
    words = s.split()
    ev: dict = {}
    if words and words[0].startswith("@"):
        ev["t"] = words.pop(0)[1:]
    if not words:
        raise EventError(source, no, "an event verb", "nothing")
    verb = words.pop(0).lower()
    if verb not in _VERBS and verb != "trigint":
        raise EventError(source, no, f"one of {', '.join(sorted(_VERBS))}, trigint", repr(verb))
    if verb == "trigint":
        ev.update(event="qmgr", trigint=words[0] if words else None)
        return ev
    ev["event"] = _VERBS[verb]
    if not words:
        raise EventError(source, no, f"a {'process' if 'process' in verb else 'queue'} name "
                                     f"after {verb}", "end of line")
    name = words.pop(0)
    ev["process" if ev["event"] in ("define_process", "delete_process") else "queue"] = name
    if ev["event"] == "alter":
        ev["attributes"] = s.split(name, 1)[1].strip()
        return ev
    for w in words:
        k, sep, v = w.partition("=")
        if not sep:
            raise EventError(source, no, "key=value", repr(w))
        ev[k.lower()] = v
    return ev


def _int(ev, key, source, no, default=None, lo=None, hi=None):
    v = ev.get(key, default)
    try:
        v = int(v)
    except (TypeError, ValueError):
        raise EventError(source, no, f"an integer {key}", repr(ev.get(key))) from None
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise EventError(source, no, f"{key} between {lo} and {hi}", str(v))
    return v


def _check(ev: dict, source: str, no: int) -> dict:
    name = ev.get("event")
    if name not in EVENTS:
        raise EventError(source, no, f"event one of {', '.join(EVENTS)}", repr(name))
    if "initq" in ev and "queue" not in ev:
        ev["queue"] = ev["initq"]
    if name in ("define_process", "delete_process"):
        if not ev.get("process"):
            raise EventError(source, no, f"a process name for {name}", "none")
    elif name == "qmgr":
        ev["trigint"] = _int(ev, "trigint", source, no, lo=0, hi=999999999)
    elif not ev.get("queue"):
        raise EventError(source, no, f"a queue name for {name}", "none")
    if "t" in ev:
        try:
            ev["t"] = float(ev["t"])
        except (TypeError, ValueError):
            raise EventError(source, no, "t in seconds", repr(ev["t"])) from None
    if name in ("put", "get"):
        ev["count"] = _int(ev, "count", source, no, 1, lo=1)
    if name == "put" and ev.get("priority") is not None:
        ev["priority"] = _int(ev, "priority", source, no, lo=0, hi=9)
    if name in ("put", "get"):
        sp = ev.get("syncpoint", False)
        ev["syncpoint"] = sp if isinstance(sp, bool) else str(sp).lower() in ("yes", "true", "1")
    if name == "alter":
        attrs = ev.get("attributes")
        if isinstance(attrs, dict):
            text = " ".join(_mqsc_word(k, v) for k, v in attrs.items())
        elif isinstance(attrs, str):
            text = attrs
        else:
            raise EventError(source, no, "attributes (an object or MQSC text)", repr(attrs))
        try:
            ev["attributes"] = parse_attributes(text, "QLOCAL", source, no)
        except MqscError as exc:
            raise EventError(source, no, exc.expected, exc.found) from None
    return ev


def _mqsc_word(key: str, value) -> str:
    key = str(key).upper()
    if key == "TRIGGER" and isinstance(value, bool):
        return "TRIGGER" if value else "NOTRIGGER"
    if isinstance(value, str):
        return f"{key}('" + value.replace("'", "''") + "')"
    return f"{key}({value})"


def read_events(path: str | os.PathLike) -> list[dict]:
    """:func:`parse_events` of a file (UTF-8).

    Raises
    ------
    EventError
        On a bad event line.
    dlqlens.errors.UsageError
        When the file cannot be read.
    """
    from dlqlens.errors import UsageError

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read events {os.fspath(path)}: {exc}") from None
    return parse_events(text, os.fspath(path))


# ---------------------------------------------------------------------------
# evaluating
# ---------------------------------------------------------------------------

def evaluate(queue_defs, events, *, trigint: int | None = None, platform: str = "linux",
             source: str = "<events>") -> list[Outcome]:
    """Replay ``events`` on the queues of ``queue_defs``; one :class:`Outcome` per judgement.

    Parameters
    ----------
    queue_defs : mapping of str to QueueDefinition
        :func:`dlqlens.mq.mqsc.read_queue_defs` output (or a dict of
        attribute dicts: lower-case MQSC names; missing ones take no
        default, so give them all). Its ``.processes`` are the process
        definitions that exist at the start, its ``.trigint`` the TRIGINT.
        Only QLOCAL definitions take part.
    events : iterable of dict
        :func:`parse_events` output (or dicts of the same shape; they are
        checked).
    trigint : int, optional
        TRIGINT in milliseconds; default the definitions' (999999999).
    platform : str
        ``'zos'`` applies condition 5 (GET inhibited on the application queue).

    Returns
    -------
    list of Outcome
        In event order.

    Raises
    ------
    EventError
        When an event names a queue that is not defined (or was deleted), a
        close without an open, or time going backwards.
    """
    world = _World(queue_defs, platform)
    ti = trigint if trigint is not None else getattr(queue_defs, "trigint", 999999999)
    state = {"trigint": int(ti), "t": 0.0}
    out: list[Outcome] = []
    for i, ev in enumerate(events, 1):
        no = int(ev.get("line", i))
        ev = _check(dict(ev, line=no), source, no)
        t = ev.get("t", state["t"])
        if t < state["t"]:
            raise EventError(source, no, f"t at least {state['t']} (events in time order)", str(t))
        state["t"] = t
        out.extend(_apply(world, state, ev, no, source))
    return out


def _queue(world, ev, source, no) -> _Queue:
    q = world.queues.get(ev["queue"])
    if q is None or q.deleted:
        raise EventError(source, no, f"a local queue in the queue definitions ({ev['event']})",
                         repr(ev["queue"]) + (" (deleted)" if q is not None else ""))
    return q


def _outcome(ev, no, q, d: trigger_conditions.Decision | None, **kw) -> Outcome:
    if d is None:
        d = trigger_conditions.Decision(False, failed=(1,), item=1)
    return Outcome(line=no, event=ev["event"], queue=q.name if q is not None else
                   ev.get("queue") or ev.get("process") or "", t=ev.get("t", 0.0),
                   trigger=d.trigger, cause=d.cause, item=d.item, condition=d.condition,
                   condition_text=d.condition_text, failed=list(d.failed),
                   trigtype=getattr(q, "trigtype", ""), qualifying=getattr(q, "trig_count", 0),
                   **kw)


def _made(q: _Queue, d: trigger_conditions.Decision, now_ms: float) -> None:
    if d.trigger:
        q.last_trigger_ms = now_ms
        for k, v in trigger_conditions.after_trigger(q).items():
            setattr(q, k, v)


def _judge_event(world, q, cause, ev, no, now_ms, **kw) -> Outcome:
    d = trigger_conditions.on_event(q, world, cause, explain=True)
    o = _outcome(ev, no, q, d, **kw)
    _made(q, d, now_ms)
    return o


def _apply(world: _World, state: dict, ev: dict, no: int, source: str) -> list[Outcome]:
    name = ev["event"]
    now_ms = ev.get("t", state["t"]) * 1000.0
    if name == "qmgr":
        state["trigint"] = ev["trigint"]
        return [_outcome(ev, no, None, None)]
    if name == "define_process":
        world.processes.add(ev["process"])
        return [_outcome(ev, no, None, None)]
    if name == "delete_process":
        world.processes.discard(ev["process"])
        return [_outcome(ev, no, None, None)]
    q = _queue(world, ev, source, no)
    if name == "put":
        out = []
        prio = ev.get("priority")
        prio = int(q.defprty) if prio is None else prio
        for k in range(ev["count"]):
            counted = trigger_conditions.qualifies(q, prio)
            prev = q.trig_count
            m = [prio, counted, "put" if ev["syncpoint"] else False]
            if q.msgdlvsq == "FIFO":
                q.messages.append(m)
            else:  # priority order, arrival order within a priority
                pos = next((j for j, x in enumerate(q.messages) if x[0] < prio), len(q.messages))
                q.messages.insert(pos, m)
            if counted:
                q.trig_count += 1
            d = trigger_conditions.on_put(q, world, counted=counted, prev_count=prev, now_ms=now_ms,
                                  last_trigger_ms=q.last_trigger_ms,
                                  trigint_ms=state["trigint"], explain=True)
            o = _outcome(ev, no, q, d, message=k + 1 if ev["count"] > 1 else None)
            if d.trigger and ev["syncpoint"]:  # made now, available when the UOW is resolved
                o.trigger, o.uow = False, "held"
                q.held.append((o, q.trigtype))
            _made(q, d, now_ms)
            out.append(o)
        return out
    if name == "get":
        for _ in range(ev["count"]):
            m = next((x for x in q.messages if not x[2]), None)
            if m is None:
                break
            if m[1]:
                q.trig_count -= 1
            if ev["syncpoint"]:
                m[2] = "get"
            else:
                q.messages.remove(m)
        return [_outcome(ev, no, q, None)]
    if name in ("commit", "backout"):
        for m in list(q.messages):
            if m[2] == "get":
                if name == "commit":
                    q.messages.remove(m)
                else:
                    m[2] = False
                    if m[1]:
                        q.trig_count += 1
            elif m[2] == "put":
                if name == "commit":
                    m[2] = False
                else:  # MQBACK deletes the messages put in the unit of work
                    q.messages.remove(m)
                    if m[1]:
                        q.trig_count -= 1
        released = []
        for put, trigtype in q.held:
            keep = name == "commit" or trigtype in ("FIRST", "DEPTH")
            released.append(Outcome(
                line=no, event=name, queue=q.name, t=ev.get("t", 0.0), trigger=keep,
                cause=put.cause, item=put.item, trigtype=trigtype, qualifying=q.trig_count,
                uow="committed" if name == "commit" else "backed_out"))
        q.held.clear()
        return released or [_outcome(ev, no, q, None)]
    if name in ("open_input", "monitor_start"):
        q.ipprocs += 1
        served = world.served_by(q)
        if q.ipprocs == 1 and served:
            return [_judge_event(world, aq, "initq_open", ev, no, now_ms, via=q.name)
                    for aq in served]
        return [_outcome(ev, no, q, None)]
    if name in ("close_input", "monitor_stop"):
        if q.ipprocs <= 0:
            raise EventError(source, no, f"an open input handle on {q.name} to close",
                             "OpenInputCount 0")
        q.ipprocs -= 1
        if world.served_by(q) and name == "monitor_stop":
            return [_outcome(ev, no, q, None)]
        return [_judge_event(world, q, "close", ev, no, now_ms)]
    if name == "delete_queue":
        q.deleted = True
        return [_outcome(ev, no, q, None)]
    if name == "alter":
        attrs = ev["attributes"]
        old = {k: getattr(q, k, None) for k in attrs}
        for k, v in attrs.items():
            setattr(q, k, v)
        if any(k in attrs for k in ("trigmpri", "defprty", "msgdlvsq")):
            q.recount()
        changed = {k for k in attrs if attrs[k] != old[k]}
        causes = trigger_conditions.alter_causes(q, changed)
        out = []
        d = trigger_conditions.on_alter(q, world, causes, explain=True)
        if d is not None:  # one ALTER is one event: at most one trigger message for q
            out.append(_outcome(ev, no, q, d))
            _made(q, d, now_ms)
        if "initq_put_enabled" in causes:
            out.extend(_judge_event(world, aq, "initq_put_enabled", ev, no, now_ms, via=q.name)
                       for aq in world.served_by(q))
        return out or [_outcome(ev, no, q, None)]
    raise EventError(source, no, "a known event", repr(name))  # pragma: no cover - _check


def evaluate_files(queue_defs_path, events_path, *, trigint: int | None = None,
                   platform: str = "linux") -> list[Outcome]:
    """:func:`evaluate` of an MQSC file and an events file."""
    from dlqlens.mq.mqsc import read_queue_defs

    defs = read_queue_defs(queue_defs_path)
    return evaluate(defs, read_events(events_path), trigint=trigint, platform=platform,
                    source=os.fspath(events_path))


__all__ = ["EVENTS", "EventError", "Outcome", "evaluate", "evaluate_files", "parse_events",
           "read_events"]
