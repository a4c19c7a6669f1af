"""The conditions for a trigger event, as one pure piece of code.

Source: IBM MQ, "Conditions for a trigger event"; the numbers used everywhere
in dlqlens are the items of that list (1-14). The
simulator (:mod:`dlqlens.sim.qmgr`) and the trigger-condition evaluator
(:mod:`dlqlens.trigger_events.evaluator`) both decide with :func:`on_put`,
:func:`on_event` and :func:`on_alter`; neither holds a condition of its own.

Nothing here changes state. The caller gives:

``q`` (the application queue)
    An object with the local-queue attributes under their lower-case MQSC
    names: ``trigger`` (bool), ``trigtype`` (``'FIRST'``, ``'EVERY'``,
    ``'DEPTH'``, ``'NONE'``), ``trigdpth``, ``trigmpri``, ``msgdlvsq``,
    ``defprty``, ``get``, ``usage``, ``process``, ``initq``, and the state
    ``ipprocs`` (OpenInputCount) and ``trig_count`` (messages on the queue of
    priority at least TRIGMPRI, item 2; messages got under syncpoint and not
    yet committed are not counted).
``world``
    An object answering ``process_defined(name) -> bool``,
    ``initiation_queue(name)`` (an object with ``get``, ``put``, ``usage``,
    ``ipprocs`` and ``deleted``, or None when there is no such local queue)
    and having ``platform`` (``'zos'`` applies item 5).

Time is in milliseconds (TRIGINT's unit).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The items of "Conditions for a trigger event", as facts (our words).
CONDITIONS: dict[int, str] = {
    1: "a message is put on the application queue (other events trigger only as items 12-13 say)",
    2: "the message's priority is at least the queue's TRIGMPRI",
    3: "the number of messages of priority >= TRIGMPRI on the queue was before the put: "
       "zero (FIRST), any (EVERY), TRIGDPTH minus 1 (DEPTH)",
    4: "for FIRST and DEPTH, no program has the application queue open for input "
       "(OpenInputCount is zero)",
    5: "on z/OS, gets are not inhibited on the application queue",
    6: "PROCESS names a process definition that exists (or the queue is a transmission queue)",
    7: "INITQ names an existing local queue with GET and PUT enabled and USAGE(NORMAL), "
       "not a logically deleted dynamic queue",
    8: "a trigger monitor has the initiation queue open for input",
    9: "TRIGGER (TriggerControl) is on for the application queue",
    10: "TRIGTYPE is not NONE",
    11: "re-trigger: a qualifying put to a queue that was not empty (FIRST) or had TRIGDPTH or "
        "more messages (DEPTH), and for FIRST TRIGINT milliseconds have passed since the last "
        "trigger message for the queue",
    12: "the last program with the queue open for input closes it (FIRST or DEPTH) leaving at "
        "least 1 (FIRST) or TRIGDPTH (DEPTH) qualifying messages",
    13: "MQSET/ALTER turned TRIGGER on or changed TRIGTYPE, TRIGMPRI or TRIGDPTH; the "
        "initiation queue's PUT or the application queue's GET was enabled; or a trigger "
        "monitor opened the initiation queue for input; with at least 1 (FIRST, EVERY) or "
        "TRIGDPTH (DEPTH) qualifying messages",
    14: "on an MSGDLVSQ(FIFO) queue the queue's DEFPRTY stands for the message priority",
}

#: Events of items 12 and 13 -> the conditions among 4-10 they do not require.
EVENT_SKIPS: dict[str, tuple[int, ...]] = {
    "close": (4, 5),            # item 12: conditions 6 through 10
    "alter": (8,),              # item 13: 4 through 10 excluding 8
    "get_enabled": (5,),        # item 13: 4 through 10 excluding 5
    "initq_put_enabled": (),    # item 13: 4 through 10
    "initq_open": (8,),         # item 13: 4 through 10 excluding 8
}

#: Which item an event-driven trigger follows.
EVENT_ITEM = {"close": 12, "alter": 13, "get_enabled": 13, "initq_put_enabled": 13,
              "initq_open": 13}


@dataclass(frozen=True)
class Decision:
    """Whether an event makes a trigger message, and why (not).

    Attributes
    ----------
    trigger : bool
    cause : str or None
        When ``trigger``: ``'first'``, ``'every'``, ``'depth'`` (item 3),
        ``'trigint'``, ``'depth_again'`` (item 11), ``'close'`` (item 12),
        ``'alter'``, ``'get_enabled'``, ``'initq_put_enabled'``,
        ``'initq_open'`` (item 13).
    failed : tuple of int
        When not ``trigger``: the items not satisfied, in list order (all of
        them when the decision was asked with ``explain=True``, else the
        first one found).
    item : int
        The item the event is judged under (1-3/11 for a put, 12, 13).
    """

    trigger: bool
    cause: str | None = None
    failed: tuple = ()
    item: int = 3

    @property
    def condition(self) -> int | None:
        """The first condition that stopped the trigger (None when it triggers)."""
        return self.failed[0] if self.failed else None

    @property
    def condition_text(self) -> str | None:
        c = self.condition
        return None if c is None else CONDITIONS[c]


def trigger_priority(q, priority: int) -> int:
    """The priority that counts toward triggering (item 14): DEFPRTY on a FIFO queue."""
    return int(q.defprty) if q.msgdlvsq == "FIFO" else int(priority)


def qualifies(q, priority: int) -> bool:
    """Item 2 (with item 14): does a message of ``priority`` count toward triggering on ``q``?"""
    return trigger_priority(q, priority) >= int(q.trigmpri)


def needed(q) -> int:
    """Qualifying messages items 12 and 13 require: TRIGDPTH for DEPTH, else 1."""
    return int(q.trigdpth) if q.trigtype == "DEPTH" else 1


def _initq_ok(initq) -> bool:
    return (initq is not None and not getattr(initq, "deleted", False)
            and initq.get == "ENABLED" and initq.put == "ENABLED" and initq.usage == "NORMAL")


def supporting(q, world, *, skip=(), explain: bool = False) -> tuple:
    """Conditions 4-10 that do not hold (only the first unless ``explain``).

    Condition 4 is checked only for FIRST and DEPTH; 6 accepts a blank
    PROCESS on a transmission queue (USAGE(XMITQ)).
    """
    failed = []

    def fail(n):
        failed.append(n)
        return not explain

    if 4 not in skip and q.trigtype in ("FIRST", "DEPTH") and int(q.ipprocs) > 0:
        if fail(4):
            return tuple(failed)
    if 5 not in skip and world.platform == "zos" and q.get == "DISABLED":
        if fail(5):
            return tuple(failed)
    proc = (q.process or "").strip()
    if not (world.process_defined(proc) if proc else q.usage == "XMITQ"):
        if fail(6):
            return tuple(failed)
    name = (q.initq or "").strip()
    initq = world.initiation_queue(name) if name else None
    if not _initq_ok(initq):
        if fail(7):
            return tuple(failed)
    if 8 not in skip and (initq is None or int(initq.ipprocs) <= 0):
        if fail(8):
            return tuple(failed)
    if not q.trigger:
        if fail(9):
            return tuple(failed)
    if q.trigtype == "NONE":
        fail(10)
    return tuple(failed)


def on_put(q, world, *, counted: bool, prev_count: int, now_ms: float,
           last_trigger_ms: float | None, trigint_ms: int, explain: bool = False) -> Decision:
    """Does a put to ``q`` make a trigger message (items 1-11, 14)?

    Parameters
    ----------
    q, world
        See the module docstring; ``q`` is the state after the put.
    counted : bool
        The message qualifies (:func:`qualifies`, item 2).
    prev_count : int
        Qualifying messages on the queue before the put (item 3).
    now_ms, last_trigger_ms : float
        The time of the put and of the last trigger message for this queue
        (None: never, taken as time 0), milliseconds.
    trigint_ms : int
        The queue manager's TRIGINT, milliseconds (item 11).
    explain : bool
        Collect every condition that fails instead of stopping at the first
        (cheap checks first otherwise: the simulator calls this on every put).

    Returns
    -------
    Decision
        ``item`` is 3, or 11 for a re-trigger (``cause`` ``'trigint'`` or
        ``'depth_again'``); a FIRST put to a non-empty queue before TRIGINT
        has passed fails ``(3, 11)``.
    """
    if not explain and (not q.trigger or q.trigtype == "NONE" or not counted):
        return Decision(False, failed=(9,) if not q.trigger else (10,) if q.trigtype == "NONE"
                        else (2,))
    failed = []
    if not counted:
        failed.append(2)
    cause = None
    item = 3
    tt = q.trigtype
    if tt == "EVERY":
        cause = "every"
    elif tt == "FIRST":
        if prev_count == 0:
            cause = "first"
        else:
            since = now_ms - (last_trigger_ms if last_trigger_ms is not None else 0)
            if since >= trigint_ms:
                cause, item = "trigint", 11
            else:
                failed.extend((3, 11))
    elif tt == "DEPTH":
        if prev_count == int(q.trigdpth) - 1:
            cause = "depth"
        elif prev_count >= int(q.trigdpth):
            cause, item = "depth_again", 11
        else:
            failed.append(3)
    if failed and not explain:
        return Decision(False, failed=tuple(failed), item=item)
    failed.extend(supporting(q, world, explain=explain))
    if failed:
        return Decision(False, failed=tuple(sorted(set(failed))), item=item)
    return Decision(True, cause=cause, item=item)


def on_event(q, world, cause: str, *, explain: bool = False) -> Decision:
    """Does an event of items 12-13 make a trigger message for ``q``?

    Parameters
    ----------
    cause : str
        A key of :data:`EVENT_SKIPS`: ``'close'`` (the last MQCLOSE of an
        input handle, item 12), ``'alter'`` (TRIGGER turned on, or
        TRIGTYPE/TRIGMPRI/TRIGDPTH changed with TRIGGER on), ``'get_enabled'``,
        ``'initq_put_enabled'``, ``'initq_open'`` (item 13).

    Returns
    -------
    Decision
        ``item`` 12 or 13; fails the item itself when there are fewer
        qualifying messages than :func:`needed` (or, for a close, when the
        trigger type is not FIRST or DEPTH or other programs still have the
        queue open).
    """
    item = EVENT_ITEM[cause]
    failed = []
    if cause == "close" and (q.trigtype not in ("FIRST", "DEPTH") or int(q.ipprocs) > 0):
        failed.append(12)
    elif int(q.trig_count) < needed(q):
        failed.append(item)
    if failed and not explain:
        return Decision(False, failed=tuple(failed), item=item)
    failed.extend(supporting(q, world, skip=EVENT_SKIPS[cause], explain=explain))
    if failed:
        return Decision(False, failed=tuple(failed), item=item)
    return Decision(True, cause=cause, item=item)


def alter_causes(q, changed: set) -> list[str]:
    """The item-13 events an ALTER of ``q`` (attributes ``changed``, state after) raises.

    Returns a subset of ``['alter', 'get_enabled', 'initq_put_enabled']`` in
    that order: ``'alter'`` when TRIGGER was turned on, or TRIGGER is on and
    TRIGTYPE, TRIGMPRI or (for DEPTH) TRIGDPTH changed; ``'get_enabled'``
    when GET became ENABLED; ``'initq_put_enabled'`` when PUT became ENABLED
    (for the queues this one is the initiation queue of). A transmission
    queue (USAGE(XMITQ)) raises them as any local queue does: items 5 and 6
    name it among the queues that are triggered. The first two concern ``q``
    itself and are judged together (:func:`on_alter`).
    """
    out = []
    relevant = {"trigtype", "trigmpri"} | ({"trigdpth"} if q.trigtype == "DEPTH" else set())
    if ("trigger" in changed and q.trigger) or (q.trigger and changed & relevant):
        out.append("alter")
    if "get" in changed and q.get == "ENABLED":
        out.append("get_enabled")
    if "put" in changed and q.put == "ENABLED":
        out.append("initq_put_enabled")
    return out


#: The causes of :func:`alter_causes` that concern the altered queue itself.
OWN_ALTER_CAUSES = ("alter", "get_enabled")


def on_alter(q, world, causes, *, explain: bool = False) -> Decision | None:
    """Does one MQSET/ALTER of ``q`` make a trigger message for ``q`` (item 13)?

    One MQSET call or one ALTER command is one event, however many of item
    13's changes it makes at once (TRIGGER turned on and GET enabled, say):
    it makes at most one trigger message for the queue. IBM MQ, "Conditions
    for a trigger event": item 13 lists the changes "satisfied using MQSET or
    a command" as alternatives of one condition, and the page's note 1 says
    that for an event other than a message arriving "only one trigger message
    is generated" (even for EVERY). The event triggers when any of its causes
    does, with the conditions that cause requires (:data:`EVENT_SKIPS`).

    Parameters
    ----------
    causes : sequence of str
        :func:`alter_causes` output; only :data:`OWN_ALTER_CAUSES` are judged
        here (``'initq_put_enabled'`` concerns the queues ``q`` serves as
        initiation queue, one trigger message each, :func:`on_event`).

    Returns
    -------
    Decision or None
        The first cause's decision that triggers, else the first cause's
        (its ``failed`` items); None when the ALTER raised no cause for ``q``.
    """
    decisions = [on_event(q, world, c, explain=explain) for c in causes if c in OWN_ALTER_CAUSES]
    if not decisions:
        return None
    return next((d for d in decisions if d.trigger), decisions[0])


def after_trigger(q) -> dict:
    """Attribute changes once a trigger message is made: DEPTH turns TRIGGER off.

    IBM MQ, TriggerType: after a DEPTH trigger "TriggerControl is set to MQTC_OFF".
    """
    return {"trigger": False} if q.trigtype == "DEPTH" else {}


__all__ = ["CONDITIONS", "Decision", "EVENT_ITEM", "EVENT_SKIPS", "OWN_ALTER_CAUSES",
           "after_trigger", "alter_causes", "needed", "on_alter", "on_event", "on_put",
           "qualifies", "supporting", "trigger_priority"]
