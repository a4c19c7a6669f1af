"""Applications that run against simulated queue managers.

Each application is an :class:`~dlqlens.sim.qmgr.Actor` (its PutApplType,
PutApplName, user id and data layout) driving a process on the simulation
clock. What each one does when something fails is the documented behaviour
of the real program it stands for:

:class:`Producer`
    A putting application (MQPUT1 to a local or remote queue). A failed put
    is returned to it and counted (IBM MQ "DeadLetterQName (MQCHAR48)": a
    message is not put on the dead-letter queue when the putting application
    has been told of the problem by the call's reason code).
:class:`Consumer`
    An MQI application getting under syncpoint. It commits, or backs out a
    message it cannot process (BackoutCount + 1). With
    ``backout="requeue"`` it moves a message whose BackoutCount has reached
    the queue's BOTHRESH to BOQNAME itself (the queue manager does nothing
    with BOQNAME); with ``backout="ignore"`` it loops on a poison message
    forever. ``skip_backout=True`` gets with MQGMO_MARK_SKIP_BACKOUT (z/OS
    only, IBM MQ for z/OS "Skipping backout"): the failing message is not
    reinstated but removed in a second unit of work that puts an exception
    message.
:class:`JmsConsumer`
    An IBM MQ classes for JMS listener (MQAT_JAVA): a message whose
    BackoutCount reaches BOTHRESH goes to BOQNAME, or, without one, to the
    dead-letter queue with reason 2362 ``MQRC_BACKOUT_THRESHOLD_REACHED``
    (or is discarded with ``MQRO_DISCARD_MSG``) (IBM MQ "2362 (093A)
    (RC2362): MQRC_BACKOUT_THRESHOLD_REACHED"). BOTHRESH(0) disables this
    poison-message handling.
:class:`BrokerFlow`
    A broker MQInput node under syncpoint (IBM Integration Bus "Handling
    MQInput errors", its retry processing): threshold BOTHRESH (0 is
    raised to 1); below it the message is retried through the Out terminal;
    at it, the failure terminal if connected; failures beyond the failure
    terminal are retried until BackoutCount reaches twice the threshold; then
    BOQNAME, else the DLQ, else the message is backed out again and again
    (the loop "when nothing can take the message").
:class:`TriggerMonitor`
    runmqtrm on an initiation queue: starts the program named by MQTM.ApplId
    (waiting for it to end unless ENVRDATA ends in ``&``); dead-letters a
    trigger message it cannot act on with feedback 265
    ``MQFB_APPL_CANNOT_BE_STARTED``, 267 ``MQFB_APPL_TYPE_ERROR`` or 266
    ``MQFB_TM_ERROR`` (IBM MQ, MQDLH "Reason (MQLONG)": the MQFB_* values
    that occur only there, for trigger messages).
:class:`ServerProgram`
    A triggered server: opens the application queue, gets, closes. One that
    stops before the queue is empty (``max_messages``) makes the close-retrigger
    loop of IBM MQ "Conditions for a trigger event", item 12 (its note a).
:class:`DlqHandler`
    runmqdlq with a rules table parsed by :func:`dlqlens.rules.parse`
    (IBM MQ "How the rules table is processed"; ``docs/rules.md``, "Replay
    model").
:class:`Requester`, :class:`ReplyServer`
    Request/reply over temporary dynamic reply queues that disappear when the
    requester gives up.
"""

from __future__ import annotations

from collections import deque

from dlqlens.mq.ccsid import charset
from dlqlens.mq.constants import MQFB, MQMF, MQRC, MQRO
from dlqlens.rules.handler import Progress, matching_rules, next_step, target, usable_rules
from dlqlens.sim.engine import Join, Simulation, SimulationError, Wait, ticks
from dlqlens.sim.qmgr import (
    MQAT_JAVA,
    MQAT_UNIX,
    NO_ID,
    OK,
    Actor,
    LocalQueue,
    QueueManager,
    SimMessage,
)

_NO_MSG = (MQRC["MQRC_NO_MSG_AVAILABLE"], MQRC["MQRC_GET_INHIBITED"])


def in_windows(t: float, windows) -> tuple[float, float] | None:
    """The ``(start, end)`` window (seconds) containing ``t``, or None."""
    for a, b in windows or ():
        if a <= t < b:
            return a, b
    return None


class App:
    """Base of the applications: an actor connected to one queue manager."""

    def __init__(self, sim: Simulation, qmgr: QueueManager, actor: Actor):
        self.sim = sim
        self.qm = qmgr
        self.actor = actor
        if actor.encoding is None:
            actor.encoding = qmgr.encoding
        if actor.ccsid is None:
            actor.ccsid = qmgr.ccsid
        self.process = None
        self.last_reason = OK

    def start(self, delay: float = 0.0):
        """Start the application ``delay`` seconds from now."""
        self.process = self.sim.process(self.run(), self.actor.name, delay)
        return self.process

    def run(self):  # pragma: no cover - every application defines it
        raise NotImplementedError

    def get_wait(self, q: LocalQueue, timeout: float | None, syncpoint: bool = True,
                 **options):
        """MQGET with MQGMO_WAIT: a message, or None after ``timeout`` seconds (None: forever).

        ``options`` are passed to :meth:`QueueManager.get` (``mark_skip_backout``...);
        the reason of a failed get other than "no message" is kept in ``last_reason``.
        """
        deadline = None if timeout is None else self.sim.now + ticks(timeout)
        while True:
            rc, m = self.qm.get(q, actor=self.actor, syncpoint=syncpoint, **options)
            if m is not None:
                return m
            if rc not in _NO_MSG:
                self.last_reason = rc
                return None
            if deadline is None:
                yield Wait(q, None)
                continue
            left = deadline - self.sim.now
            if left <= 0:
                return None
            yield Wait(q, left / 100)

    def requeue(self, q: LocalQueue, m: SimMessage, target: str, event: str) -> int:
        """Put a got message to ``target`` with MQPMO_PASS_ALL_CONTEXT (same MsgId, expiry)."""
        out = m.copy()
        return self.qm.put(target, out, actor=self.actor, context="pass",
                           event=(event, {"from": q.name,
                                          "backout_count": int(m.md["BackoutCount"])}))


# ---------------------------------------------------------------------------
# putting
# ---------------------------------------------------------------------------

class Producer(App):
    """Puts ``count`` messages, ``rate`` per second on average (exponential gaps).

    Parameters
    ----------
    queue : str
        Object name opened (a local queue or a QREMOTE definition).
    qmgr_name : str, optional
        ObjectQMgrName (put through the route to that queue manager).
    count : int
    rate : float
        Messages per second.
    poison : float or set of int
        Fraction of messages whose data its consumer cannot process (drawn
        per message), or the sequence numbers (1-based) of exactly those.
    size : (int, int)
        Range of the data length in bytes.
    big : (float, int)
        Fraction of messages and their length in bytes (oversized messages).
    md : dict
        MQMD fields of every message (Persistence, Priority, Expiry in tenths
        of a second, Report, ReplyToQ...). Persistence 2 and Priority -1 take
        the queue's DEFPSIST/DEFPRTY.
    persistent : float, optional
        Fraction of messages put persistent (overrides ``md["Persistence"]``).
    users : list of str, optional
        UserIdentifier of successive messages are drawn from these (the
        application puts with MQPMO_SET_IDENTITY_CONTEXT).
    """

    def __init__(self, sim, qmgr, actor, queue: str, *, count: int, rate: float,
                 qmgr_name: str | None = None, poison=0.0, size=(60, 400), big=(0.0, 0),
                 md: dict | None = None, persistent: float | None = None, users=None,
                 label: str = "msg"):
        super().__init__(sim, qmgr, actor)
        self.queue = queue
        self.qmgr_name = qmgr_name
        self.count = count
        self.rate = rate
        self.poison = poison
        self.size = size
        self.big = big
        self.md = dict(md or {})
        self.persistent = persistent
        self.users = users
        self.label = label
        self.sent = 0
        self.failed: dict[int, int] = {}

    def make(self, seq: int) -> SimMessage:
        rng = self.sim.rng
        if isinstance(self.poison, (set, frozenset)):
            is_poison = seq in self.poison
        else:
            is_poison = bool(self.poison) and rng.random() < self.poison
        length = rng.randint(*self.size)
        if self.big[0] and rng.random() < self.big[0]:
            length = self.big[1]
        text = (f'{{"app":"{self.actor.applname}","{self.label}":{seq},'
                f'"amount":{"null" if is_poison else rng.randint(1, 999999) / 100}')
        body = (text + ',"pad":"' + "x" * max(0, length - len(text) - 10) + '"}')
        md = {"Version": 2, "Report": 0, "MsgType": 8, "Expiry": -1, "Feedback": 0,
              "Encoding": self.actor.encoding, "CodedCharSetId": self.actor.ccsid,
              "Format": "MQSTR", "Priority": -1, "Persistence": 2, "MsgId": NO_ID,
              "CorrelId": NO_ID, "ReplyToQ": "", "ReplyToQMgr": "",
              "AccountingToken": b"\0" * 32}
        md.update(self.md)
        if self.persistent is not None:
            md["Persistence"] = 1 if rng.random() < self.persistent else 0
        m = SimMessage(md, (), body.encode(charset(self.actor.ccsid).codec), poison=is_poison)
        m.events.append({"t": self.sim.iso(), "qmgr": self.qm.name, "actor": self.actor.name,
                         "event": "created", "seq": seq, "poison": is_poison})
        return m

    def run(self):
        rng = self.sim.rng
        for seq in range(1, self.count + 1):
            yield rng.expovariate(self.rate)
            m = self.make(seq)
            user = rng.choice(self.users) if self.users else None
            rc = self.qm.put(self.queue, m, actor=self.actor, qmgr=self.qmgr_name, user=user)
            if rc == OK:
                self.sent += 1
            else:
                self.failed[rc] = self.failed.get(rc, 0) + 1
                self.sim.stats[f"put_failed:{self.actor.name}:{rc}"] += 1


# ---------------------------------------------------------------------------
# consuming
# ---------------------------------------------------------------------------

class Consumer(App):
    """An MQI application getting from ``queue`` under syncpoint.

    Parameters
    ----------
    process_time : float
        Seconds per message.
    backout : {'ignore', 'requeue'}
        What it does with BOTHRESH (see the module docstring).
    retry_delay : float
        Seconds between a backout and the next get.
    outages : list of (start, end)
        Seconds during which the application is stopped (queue closed).
    skip_backout : bool
        MQGMO_MARK_SKIP_BACKOUT (z/OS only).
    error_queue : str
        Where the skip-backout unit of work puts its exception message.
    on_error : {'backout', 'abend'}
        What the application does when it cannot process a message: MQBACK
        (an application-requested backout), or end abnormally, so that the
        queue manager backs its unit of work out (which a skip-backout mark
        does not survive, IBM MQ for z/OS "Skipping backout", first note); it
        is restarted ``retry_delay`` seconds later.
    rrs_stored_procedure : bool
        The application is a Db2 stored procedure whose units of work RRS
        controls: its marked gets fail with 2274 MQRC_OPTION_ENVIRONMENT_ERROR
        ("Skipping backout", second note) and it stops (``last_reason``).
    """

    def __init__(self, sim, qmgr, actor, queue: str, *, process_time: float = 0.02,
                 backout: str = "ignore", retry_delay: float = 1.0, outages=(),
                 skip_backout: bool = False, error_queue: str = "", on_error: str = "backout",
                 rrs_stored_procedure: bool = False):
        super().__init__(sim, qmgr, actor)
        if backout not in ("ignore", "requeue"):
            raise SimulationError(f"{actor.name}: backout must be 'ignore' or 'requeue'")
        if on_error not in ("backout", "abend"):
            raise SimulationError(f"{actor.name}: on_error must be 'backout' or 'abend'")
        if skip_backout and qmgr.platform != "zos":
            raise SimulationError(f"{actor.name}: MQGMO_MARK_SKIP_BACKOUT is supported only "
                                  "on z/OS (IBM MQ for z/OS \"Skipping backout\")")
        if skip_backout and not error_queue:
            raise SimulationError(f"{actor.name}: skip_backout needs an error_queue")
        self.queue = queue
        self.process_time = process_time
        self.backout_policy = backout
        self.retry_delay = retry_delay
        self.outages = list(outages)
        self.skip_backout = skip_backout
        self.error_queue = error_queue
        self.on_error = on_error
        self.rrs_stored_procedure = rrs_stored_procedure
        self.processed = 0
        self.abends = 0

    def _next_outage_in(self) -> float | None:
        later = [a - self.sim.now for a, _ in self._outage_ticks if a > self.sim.now]
        return min(later) / 100 if later else None

    def run(self):
        q = self.qm.queue(self.queue)
        self.qm.open_input(q, self.actor)
        self._outage_ticks = [(ticks(a), ticks(b)) for a, b in self.outages]
        while True:
            window = next(((a, b) for a, b in self._outage_ticks if a <= self.sim.now < b), None)
            if window is not None:
                self.qm.close_input(q, self.actor)
                yield (window[1] - self.sim.now) / 100
                if q.deleted:
                    return
                self.qm.open_input(q, self.actor)
                continue
            if self.skip_backout:
                m = yield from self.get_wait(q, self._next_outage_in(), mark_skip_backout=True,
                                             rrs_stored_procedure=self.rrs_stored_procedure)
            else:
                m = yield from self.get_wait(q, self._next_outage_in())
            if m is None:
                if q.deleted:
                    return
                if self.last_reason == MQRC["MQRC_OPTION_ENVIRONMENT_ERROR"]:
                    self.qm.close_input(q, self.actor)
                    return
                continue
            if self.backout_policy == "requeue" and q.bothresh > 0 and \
                    int(m.md["BackoutCount"]) >= q.bothresh and q.boqname:
                if self.requeue(q, m, q.boqname, "requeued_to_boqname") == OK:
                    self.qm.commit(q, m, self.actor)
                    continue
            yield self.process_time
            if q.deleted:
                return
            if not m.poison:
                self.qm.commit(q, m, self.actor)
                self.qm.log(m, self.actor, "processed", queue=q.name)
                self.processed += 1
                continue
            if self.on_error == "abend":
                m.add_pattern("backout_loop")
                self.abends += 1
                self.qm.log(m, self.actor, "abnormal_end", queue=q.name)
                self.qm.abnormal_end(self.actor)
                self.qm.close_input(q, self.actor)
                yield self.retry_delay  # until the application is restarted
                if q.deleted:
                    return
                self.qm.open_input(q, self.actor)
                continue
            if self.skip_backout:
                if not self._skip(q, m):
                    m.add_pattern("backout_loop")
                    yield self.retry_delay
                continue
            m.add_pattern("backout_loop")
            self.qm.backout(q, m, self.actor)
            yield self.retry_delay

    def _skip(self, q: LocalQueue, m: SimMessage) -> bool:
        """IBM MQ for z/OS "Skipping backout", steps 5-10 of its figure: MQBACK of UOW1 (the
        marked get skips it and becomes UOW2), an exception message put in UOW2, UOW2
        committed (the message leaves the queue) or, when that put fails, backed out (the
        message is reinstated). Returns whether the message was removed."""
        self.qm.backout_uow(self.actor)
        note = SimMessage({"Version": 2, "Format": "MQSTR", "MsgType": 8, "Expiry": -1,
                           "Encoding": self.actor.encoding, "CodedCharSetId": self.actor.ccsid,
                           "Priority": -1, "Persistence": 2, "MsgId": NO_ID,
                           "CorrelId": m.md["MsgId"], "Report": 0, "Feedback": 0},
                          (), b'{"error":"message could not be processed"}')
        note.events.append({"t": self.sim.iso(), "qmgr": self.qm.name, "actor": self.actor.name,
                            "event": "created", "about": bytes(m.md["MsgId"]).hex().upper()})
        rc = self.qm.put(self.error_queue, note, actor=self.actor)
        if rc == OK:
            self.qm.commit_uow(self.actor)
            self.qm.log(m, self.actor, "removed_by_second_uow", queue=q.name)
            return True
        self.qm.log(m, self.actor, "exception_put_failed", queue=self.error_queue, reason=rc)
        self.qm.backout_uow(self.actor)
        return False


class JmsConsumer(App):
    """A JMS listener (MQAT_JAVA) with IBM MQ classes for JMS poison-message handling."""

    def __init__(self, sim, qmgr, actor, queue: str, *, process_time: float = 0.02,
                 redelivery_delay: float = 0.2):
        if actor.appltype != MQAT_JAVA:
            raise SimulationError(f"{actor.name}: a JMS application has PutApplType MQAT_JAVA (28)")
        actor.encoding = actor.encoding or 273  # Java writes big-endian MQENC_NATIVE
        actor.ccsid = actor.ccsid or 1208
        super().__init__(sim, qmgr, actor)
        self.queue = queue
        self.process_time = process_time
        self.redelivery_delay = redelivery_delay

    def run(self):
        q = self.qm.queue(self.queue)
        self.qm.open_input(q, self.actor)
        while True:
            m = yield from self.get_wait(q, None)
            if m is None:
                return
            if q.bothresh > 0 and int(m.md["BackoutCount"]) >= q.bothresh:
                if not self._poison(q, m):
                    yield self.redelivery_delay  # backed out: redelivered after the delay
                continue
            yield self.process_time
            if not m.poison:
                self.qm.commit(q, m, self.actor)
                self.qm.log(m, self.actor, "processed", queue=q.name)
                continue
            m.add_pattern("backout_loop")
            self.qm.backout(q, m, self.actor)
            yield self.redelivery_delay

    def _poison(self, q: LocalQueue, m: SimMessage) -> bool:
        """BOQNAME, else discard (MQRO_DISCARD_MSG), else the DLQ; False when none took the
        message and it was backed out."""
        if q.boqname and self.requeue(q, m, q.boqname, "requeued_to_boqname") == OK:
            self.qm.commit(q, m, self.actor)
            return True
        if int(m.md.get("Report", 0)) & MQRO["MQRO_DISCARD_MSG"]:
            self.qm.commit(q, m, self.actor)
            self.qm.log(m, self.actor, "discarded", queue=q.name)
            return True
        rc = self.qm.dead_letter(m, MQRC["MQRC_BACKOUT_THRESHOLD_REACHED"], q.name, self.qm.name,
                                 actor=self.actor)
        if rc == OK:
            self.qm.commit(q, m, self.actor)
            return True
        self.qm.backout(q, m, self.actor)
        return False


class BrokerFlow(App):
    """A message flow whose MQInput node reads ``queue`` under syncpoint.

    Its error handling is IBM Integration Bus "Handling MQInput errors" (App
    Connect Enterprise "Handling MQInput node errors"; seed document 004).

    Parameters
    ----------
    failure_terminal : {None, 'handles', 'fails'}
        Not connected; connected to a flow that handles the error; connected
        to a flow that fails too.
    catch_terminal : {None, 'handles', 'fails'}
        The same for the Catch terminal. The rows of the node's error table
        ("Handling MQInput errors") for an exception in the flow attached to
        the Out terminal: with the Catch terminal connected, the flow
        attached to it handles the error (the message is consumed); not
        connected, the node retries (backout and retry processing). An
        exception in the Catch flow itself: "error logged, message backed
        out" (then the retry processing). An exception in the Failure flow:
        the node retries, Catch terminal connected or not.
    internal_error : callable, optional
        ``internal_error(message) -> bool``: the node itself cannot
        recognise or process the message (a format error, "Connecting
        Failure terminals": "messages with an internal or format error that
        cannot be recognized or processed by the input node"). The first row
        of the error table, "the node detects an internal error": with the
        Failure terminal connected the Failure flow handles the error (an
        exception in it: the node retries); not connected, the message is
        put to an alternative queue (BOQNAME, else the DLQ) at once, without
        waiting for the backout threshold, and when that fails the node
        retries. The Catch terminal does not apply (the message never
        reached the Out terminal).
    commit_by_group : bool
        The node's "Commit by message group" with "Logical order": the
        messages of an MQ message group (MQMD MsgFlags
        ``MQMF_MSG_IN_GROUP`` / ``MQMF_LAST_MSG_IN_GROUP``) are got in one
        unit of work, committed when the last message of the group has been
        processed ("Handling MQInput errors", "Handling errors of message
        groups"). An error before the last message subjects the unit of work
        holding the group's messages up to and including the failing one to
        the error handling: it is backed out (each of them BackoutCount + 1)
        and the node retries, processing the good messages before the
        failing one again each time. Their BackoutCount rises with the
        failing one's, so at the threshold the retry processing moves them
        to the alternative queue too, one by one (each move committed on
        its own), and the rest of the group is processed and committed in a
        new unit of work at its last message: part of the group backed out
        (good messages on the backout queue), part committed, which is what
        the documentation warns of.
    dlq_reason : int
        MQDLH Reason the node writes when it dead-letters (not documented by
        the sources; our choice: 2362 MQRC_BACKOUT_THRESHOLD_REACHED).
    """

    def __init__(self, sim, qmgr, actor, queue: str, *, failure_terminal: str | None = None,
                 catch_terminal: str | None = None, process_time: float = 0.02,
                 retry_delay: float = 0.5, internal_error=None, commit_by_group: bool = False,
                 dlq_reason: int = MQRC["MQRC_BACKOUT_THRESHOLD_REACHED"]):
        for name, value in (("failure_terminal", failure_terminal),
                            ("catch_terminal", catch_terminal)):
            if value not in (None, "handles", "fails"):
                raise SimulationError(f"{actor.name}: {name} must be None, 'handles' or 'fails'")
        super().__init__(sim, qmgr, actor)
        self.queue = queue
        self.failure_terminal = failure_terminal
        self.catch_terminal = catch_terminal
        self.process_time = process_time
        self.retry_delay = retry_delay
        self.internal_error = internal_error
        self.commit_by_group = commit_by_group
        self.dlq_reason = dlq_reason

    def run(self):
        q = self.qm.queue(self.queue)
        self.qm.open_input(q, self.actor)
        while True:
            m = yield from self.get_wait(q, None)
            if m is None:
                return
            # "Handling MQInput errors": a BOTHRESH of 0 is raised to 1
            threshold = q.bothresh if q.bothresh > 0 else 1
            count = int(m.md["BackoutCount"])
            flags = int(m.md.get("MsgFlags", 0) or 0)
            grouped = self.commit_by_group and bool(flags & _IN_ANY_GROUP)
            yield self.process_time
            outcome = self._process(q, m, count, threshold)
            if outcome == "retry":
                m.add_pattern("backout_loop")
                if grouped:  # the group's unit of work so far is backed out
                    self.qm.backout_uow(self.actor)
                else:
                    self.qm.backout(q, m, self.actor)
                yield self.retry_delay
                continue
            if grouped:
                if outcome == "processed" and not flags & _LAST_IN_GROUP:
                    # the unit of work stays open until the group's last message
                    self.qm.log(m, self.actor, "processed", queue=q.name, committed=False)
                    continue
                self.qm.commit_uow(self.actor)
            else:
                self.qm.commit(q, m, self.actor)
            if outcome == "processed":
                self.qm.log(m, self.actor, "processed", queue=q.name)

    def _process(self, q: LocalQueue, m: SimMessage, count: int, threshold: int) -> str:
        """One delivery of ``m``: 'processed', 'handled' (by the Failure or Catch flow),
        'moved' (to BOQNAME or the DLQ) or 'retry' (the node backs it out)."""
        if count >= 2 * threshold or (count >= threshold and self.failure_terminal is None):
            return "moved" if self._elsewhere(q, m) else "retry"
        if count >= threshold:
            self.qm.log(m, self.actor, "failure_terminal", queue=q.name, backout_count=count)
            return "handled" if self.failure_terminal == "handles" else "retry"
        if self.internal_error is not None and self.internal_error(m):
            # the error table's first row: the node detects an internal error
            self.qm.log(m, self.actor, "internal_error", queue=q.name, backout_count=count)
            if self.failure_terminal is None:  # an alternative queue; if that fails, retry
                return "moved" if self._elsewhere(q, m) else "retry"
            self.qm.log(m, self.actor, "failure_terminal", queue=q.name, backout_count=count)
            return "handled" if self.failure_terminal == "handles" else "retry"
        if not m.poison:
            return "processed"
        if self.catch_terminal is not None:  # the exception in the Out flow is caught
            self.qm.log(m, self.actor, "catch_terminal", queue=q.name, backout_count=count)
            if self.catch_terminal == "handles":
                return "handled"
            self.qm.log(m, self.actor, "error_logged", queue=q.name)
        return "retry"

    def _elsewhere(self, q: LocalQueue, m: SimMessage) -> bool:
        """BOQNAME, else the DLQ ("Handling MQInput errors", retry processing step 3);
        False when neither takes it (the caller commits or backs out)."""
        if q.boqname and self.requeue(q, m, q.boqname, "requeued_to_boqname") == OK:
            return True
        if self.qm.dead_letter(m, self.dlq_reason, q.name, self.qm.name, actor=self.actor) == OK:
            return True
        self.qm.log(m, self.actor, "cannot_requeue", queue=q.name,
                    backout_count=int(m.md["BackoutCount"]))
        return False


_IN_ANY_GROUP = MQMF["MQMF_MSG_IN_GROUP"] | MQMF["MQMF_LAST_MSG_IN_GROUP"]
_LAST_IN_GROUP = MQMF["MQMF_LAST_MSG_IN_GROUP"]


# ---------------------------------------------------------------------------
# triggering
# ---------------------------------------------------------------------------

class ServerProgram:
    """A program a trigger monitor can start, registered in ``sim.programs`` under ``applid``.

    Parameters
    ----------
    max_messages : int, optional
        Close the queue after this many messages even if more are there (a
        server that does not drain its queue).
    wait_interval : float
        Seconds an MQGET waits for more messages before the server ends.
    startup : float
        Seconds from start to the MQOPEN.
    max_instances : int, optional
        Starting more concurrent instances fails (the trigger monitor then
        reports the application cannot be started).
    broken : list of (start, end)
        Seconds during which the program cannot be started at all (a bad
        deployment of the executable).
    """

    def __init__(self, sim: Simulation, applid: str, qmgr: QueueManager, actor: Actor, *,
                 process_time: float = 0.02, max_messages: int | None = None,
                 wait_interval: float = 0.0, startup: float = 0.3,
                 max_instances: int | None = None, broken=()):
        self.sim = sim
        self.applid = applid
        self.qm = qmgr
        self.actor = actor
        actor.encoding = actor.encoding or qmgr.encoding
        actor.ccsid = actor.ccsid or qmgr.ccsid
        self.process_time = process_time
        self.max_messages = max_messages
        self.wait_interval = wait_interval
        self.startup = startup
        self.max_instances = max_instances
        self.broken = list(broken)
        self.running = 0
        self.starts = 0
        sim.programs[applid] = self

    def can_start(self) -> bool:
        if in_windows(self.sim.seconds, self.broken) is not None:
            return False
        return self.max_instances is None or self.running < self.max_instances

    def start(self, tm: dict):
        self.running += 1
        self.starts += 1
        return self.sim.process(self._run(tm), f"{self.applid}#{self.starts}")

    def _run(self, tm: dict):
        app = App(self.sim, self.qm, self.actor)
        try:
            yield self.startup
            q = self.qm.objects.get(tm["QName"])
            if not isinstance(q, LocalQueue):
                return
            self.qm.open_input(q, self.actor)
            n = 0
            drained = False
            while self.max_messages is None or n < self.max_messages:
                m = yield from app.get_wait(q, self.wait_interval)
                if m is None:
                    drained = True
                    break
                yield self.process_time
                self.qm.commit(q, m, self.actor)
                self.qm.log(m, self.actor, "processed", queue=q.name)
                n += 1
            self.qm.close_input(q, self.actor, drained=drained)
        finally:
            self.running -= 1


class TriggerMonitor(App):
    """runmqtrm on ``initq``: one trigger message at a time, starting its program.

    Parameters
    ----------
    spawn_time : float
        Seconds to build the command and start a program.
    appltypes : tuple of int
        The MQTM.ApplType values it can start (others: MQFB_APPL_TYPE_ERROR).
    background : bool, optional
        Start programs without waiting for them; by default only when the
        MQTM's EnvData ends in ``&`` (runmqtrm on UNIX).
    """

    def __init__(self, sim, qmgr, initq: str, *, actor: Actor | None = None,
                 spawn_time: float = 0.1, appltypes=(MQAT_UNIX,), background: bool | None = None):
        super().__init__(sim, qmgr, actor or Actor("runmqtrm", MQAT_UNIX, "runmqtrm"))
        self.initq = initq
        self.spawn_time = spawn_time
        self.appltypes = tuple(appltypes)
        self.background = background

    def run(self):
        q = self.qm.queue(self.initq)
        self.qm.open_input(q, self.actor)
        while True:
            m = yield from self.get_wait(q, None, syncpoint=False)
            if m is None:
                return
            tm = m.header("MQTM")
            if m.md.get("Format") != "MQTRIG" or tm is None:
                self._reject(q, m, MQFB["MQFB_TM_ERROR"])
                continue
            if int(tm["ApplType"]) not in self.appltypes:  # e.g. runmqtrm starts UNIX programs
                self._reject(q, m, MQFB["MQFB_APPL_TYPE_ERROR"])
                continue
            yield self.spawn_time
            prog = self.sim.programs.get(str(tm["ApplId"]).strip())
            if prog is None or not prog.can_start():
                m.add_pattern("trigger_failure", primary=True)  # and a storm's, if it was one
                self._reject(q, m, MQFB["MQFB_APPL_CANNOT_BE_STARTED"])
                continue
            self.qm.log(m, self.actor, "started", program=prog.applid)
            proc = prog.start(tm)
            background = self.background
            if background is None:
                background = str(tm["EnvData"]).rstrip().endswith("&")
            if not background:
                yield Join(proc)  # runmqtrm waits for a foreground program to end

    def _reject(self, q: LocalQueue, m: SimMessage, feedback: int) -> None:
        rc = self.qm.dead_letter(m, feedback, q.name, self.qm.name, actor=self.actor)
        if rc != OK:
            self.sim.stats["trigger_messages_lost"] += 1


# ---------------------------------------------------------------------------
# the DLQ handler
# ---------------------------------------------------------------------------

class DlqHandler(App):
    """runmqdlq running a rules table against a dead-letter queue.

    The decision is :func:`dlqlens.rules.handler.next_step`, the one the
    rules replay makes (IBM MQ "How the rules table is processed", with the
    rule selection of IBM's sample handler ``amqsdlq``), driven
    one attempt per message per pass: each message's
    :class:`~dlqlens.rules.handler.Progress` (its failed attempts, keyed by
    MsgId and CorrelId, for this handler run, forgotten after a successful
    action) says which rule to apply. RETRY puts to DestQName/DestQMgrName
    and FWD with HEADER(NO) strip the MQDLH and restore
    Format/Encoding/CodedCharSetId from it; FWD HEADER(YES) keeps it; every
    put uses MQPMO_PASS_ALL_CONTEXT (same MQMD, remaining expiry). A failed
    put backs the get out (BackoutCount of the DLQ message + 1) and the
    message is retried RETRYINT seconds later; messages matching no rule, or
    an IGNORE rule, or whose matching rules are used up, stay. Messages
    without an MQDLH are never processed.

    Timing simplifies that of IBM's sample handler ``amqsdlq`` (back to the
    retry point every RETRYINT, a full rescan every 10 x RETRYINT): new
    messages are processed as they arrive; every RETRYINT seconds the whole
    queue is browsed again.

    WAIT (IBM MQ "DLQ control data"): with WAIT(YES), the default, the
    handler waits for new messages for ever; with WAIT(NO) it ends as soon
    as it finds no message it can process (the DLQ is empty, or holds only
    messages it leaves there: IGNORE, rules used up, no match, no MQDLH);
    with WAIT(nnn) it then waits nnn seconds for a new message before
    ending. A message whose RETRY attempts are not all made yet is work it
    can process. ``ended`` is the simulated second at which it ended (None
    while it runs).

    Parameters
    ----------
    rules : str
        The rules table (text).
    actor : Actor, optional
        Who the handler is (default ``runmqdlq``, MQAT_UNIX, user ``runmqdlq``).
    per_message : float
        Seconds the handler spends on each message it looks at.
    on_fate : callable, optional
        Called as ``on_fate(message, fate)`` with a
        :class:`~dlqlens.rules.handler.Fate` (the replay's contract) when the
        handler removes a message from the DLQ (retried, forwarded,
        discarded) and the first time it leaves one there (IGNORE, rules used
        up, no match, no MQDLH). ``seconds_to_disposition`` is simulated
        time from the handler's first look at the message; a blank target
        queue manager is this queue manager's name.

    Raises
    ------
    SimulationError
        When the rules table has errors.
    """

    def __init__(self, sim, qmgr, rules: str, *, actor: Actor | None = None,
                 per_message: float = 0.01, on_fate=None):
        from dlqlens.rules import parse

        super().__init__(sim, qmgr, actor or Actor("runmqdlq", MQAT_UNIX, "runmqdlq"))
        self.table = parse(rules, source="<simulation>")
        if not self.table.ok:
            raise SimulationError("rules table has errors: " + "; ".join(
                d.format("<rules>") for d in self.table.errors))
        self.rules = usable_rules(self.table)
        control = self.table.control
        self.inputq = (control.inputq or "").strip() or qmgr.deadq
        self.retryint = int(control.retryint if control.retryint is not None else 60)
        self.per_message = per_message
        self.on_fate = on_fate
        self.wait = control.wait_seconds  # None: WAIT(YES)
        self.history: dict = {}  # (MsgId, CorrelId) -> Progress
        self.next_try: dict = {}
        self.retrying: dict = {}  # (MsgId, CorrelId) -> message with RETRY attempts to come
        self.pending: deque = deque()
        self.ended: float | None = None

    @staticmethod
    def fields(m: SimMessage) -> dict:
        md, dlh = m.md, m.headers[0][1]
        return {"dlh.Reason": dlh["Reason"], "dlh.DestQName": dlh["DestQName"],
                "dlh.DestQMgrName": dlh["DestQMgrName"], "dlh.Format": dlh["Format"],
                "md.PutApplName": md.get("PutApplName", ""),
                "md.PutApplType": md.get("PutApplType", 0),
                "md.MsgType": md.get("MsgType", 8), "md.Persistence": md.get("Persistence", 0),
                "md.Feedback": md.get("Feedback", 0), "md.ReplyToQ": md.get("ReplyToQ", ""),
                "md.ReplyToQMgr": md.get("ReplyToQMgr", ""),
                "md.UserIdentifier": md.get("UserIdentifier", ""),
                "md.ApplIdentityData": md.get("ApplIdentityData", "")}

    def run(self):
        q = self.qm.queue(self.inputq)
        self.qm.open_input(q, self.actor)
        q.listeners.append(self.pending.append)
        last_scan = self.sim.now
        for m in self.qm.browse(q, actor=self.actor):
            self.pending.append(m)
        while True:
            while self.pending:
                m = self.pending.popleft()
                yield from self._process(q, m)
            if self.sim.now - last_scan >= ticks(self.retryint):
                last_scan = self.sim.now
                self.pending.extend(self.qm.browse(q, actor=self.actor))
                continue
            if self.wait is not None and not self._work_left():
                # WAIT(NO) or WAIT(nnn): nothing on the DLQ it can process
                if self.wait == 0 or not (yield Wait(q, self.wait)):
                    q.listeners.remove(self.pending.append)
                    self.qm.close_input(q, self.actor)
                    self.ended = self.sim.seconds
                    return
                continue
            left = ticks(self.retryint) - (self.sim.now - last_scan)
            yield Wait(q, left / 100)

    def _work_left(self) -> bool:
        """Whether a message on the DLQ still has RETRY attempts to come."""
        for key, m in list(self.retrying.items()):
            if m.removed:
                del self.retrying[key]
        return bool(self.retrying)

    def _process(self, q: LocalQueue, m: SimMessage):
        if m.removed or m.locked is not None:
            return
        key = (bytes(m.md["MsgId"]), bytes(m.md["CorrelId"]))
        if self.next_try.get(key, 0) > self.sim.now:
            return
        if m.md.get("Format") != "MQDEAD" or not m.headers or m.headers[0][0] != "MQDLH":
            if key not in self.history:
                self.history[key] = Progress(started=self.sim.now)
                self.qm.log(m, self.actor, "dlq_handler_no_dlh", queue=q.name)
                self._decided(m, self.history[key].left(next_step(None, 0)))
            self.next_try[key] = float("inf")
            return
        progress = self.history.get(key)
        if progress is None:
            progress = Progress(started=self.sim.now)
        fields = self.fields(m)
        matching = matching_rules(self.rules, fields)
        step = next_step(matching, progress.attempts)
        began = self.sim.now
        yield self.per_message
        if m.removed or m.locked is not None:
            return
        seconds = (began - progress.started) // 100
        if not step.acts:  # ACTION(IGNORE), explicit or implicit: the message stays
            self.history[key] = progress.stayed()
            self.next_try[key] = began + ticks(self.retryint)
            if progress.attempts == 0 and progress.stays == 0:
                self.qm.log(m, self.actor, "dlq_handler_ignored", queue=q.name,
                            rule=None if step.rule is None else step.rule.index)
            if progress.stays == 0:
                self._decided(m, progress.left(step, seconds))
            return
        if not self.qm.get_under_cursor(q, m, actor=self.actor):
            return
        rule = step.rule
        if step.action == "DISCARD":
            self.qm.commit(q, m, self.actor)
            self.qm.log(m, self.actor, "dlq_handler_discard", rule=rule.index, line=rule.line)
            self._forget(key)
            self._decided(m, progress.removed(step, seconds=seconds))
            return
        dest, dest_qm = target(rule, fields)
        dlh = m.headers[0][1]
        out = m.copy()
        if rule.action == "RETRY" or rule.header == "NO":
            out.headers = m.headers[1:]
            out.md.update(Format=dlh["Format"], Encoding=dlh["Encoding"],
                          CodedCharSetId=dlh["CodedCharSetId"])
        user = m.md.get("UserIdentifier", "") if rule.putaut == "CTX" else self.actor.user
        rc = self.qm.put(dest, out, actor=self.actor, qmgr=dest_qm or None, context="pass",
                         user=user, event=(f"dlq_handler_{rule.action.lower()}",
                                           {"rule": rule.index, "line": rule.line}))
        if rc == OK:
            self.qm.commit(q, m, self.actor)
            self._forget(key)
            self._decided(m, progress.removed(step, (dest, dest_qm or self.qm.name), seconds))
            return
        self.qm.log(m, self.actor, "dlq_handler_put_failed", rule=rule.index, queue=dest,
                    reason=rc)
        self.qm.backout(q, m, self.actor)
        self.history[key] = progress.failed(step, rc)
        self.next_try[key] = began + ticks(self.retryint)
        if next_step(matching, self.history[key].attempts).acts:
            self.retrying[key] = m
        else:
            self.retrying.pop(key, None)

    def _decided(self, m: SimMessage, fate) -> None:
        if self.on_fate is not None:
            self.on_fate(m, fate)

    def _forget(self, key) -> None:
        self.history.pop(key, None)
        self.next_try.pop(key, None)
        self.retrying.pop(key, None)


# ---------------------------------------------------------------------------
# request / reply
# ---------------------------------------------------------------------------

class Requester(App):
    """A client sending requests with a temporary dynamic reply queue per request.

    Each request: create ``AMQ.*`` (TEMPDYN), put the request (MsgType
    MQMT_REQUEST, ReplyToQ the temporary queue), wait ``timeout`` seconds for
    the reply, then close the temporary queue, which deletes it.

    Parameters
    ----------
    service : str
        The object the requests are put to (usually a QREMOTE).
    md : dict
        Extra MQMD fields of the requests (Expiry in tenths of a second, Report).
    persistent : float
        Fraction of requests put persistent.
    """

    def __init__(self, sim, qmgr, actor, service: str, *, count: int, rate: float,
                 timeout: float = 5.0, md: dict | None = None, persistent: float = 0.0,
                 size=(60, 200)):
        super().__init__(sim, qmgr, actor)
        self.service = service
        self.count = count
        self.rate = rate
        self.timeout = timeout
        self.producer = Producer(sim, qmgr, actor, service, count=count, rate=rate,
                                 md=dict(md or {}, MsgType=1), persistent=persistent,
                                 size=size, label="request")
        self.answered = 0
        self.timed_out = 0

    def run(self):
        rng = self.sim.rng
        for seq in range(1, self.count + 1):
            yield rng.expovariate(self.rate)
            self.sim.process(self._session(seq), f"{self.actor.name}#{seq}")

    def _session(self, seq: int):
        tq = self.qm.create_tempdyn()
        m = self.producer.make(seq)
        m.md.update(ReplyToQ=tq.name, ReplyToQMgr=self.qm.name)
        rc = self.qm.put(self.service, m, actor=self.actor)
        if rc != OK:
            self.qm.delete_queue(tq.name)
            return
        self.qm.open_input(tq, self.actor)
        reply = yield from self.get_wait(tq, self.timeout, syncpoint=False)
        self.qm.close_input(tq, self.actor)
        if reply is None:
            self.timed_out += 1
        else:
            self.answered += 1
        self.qm.delete_queue(tq.name)


class ReplyServer(App):
    """Serves requests from ``queue``: a reply (MQMT_REPLY) to ReplyToQ at ReplyToQMgr.

    The reply's CorrelId is the request's MsgId (the default
    MQRO_COPY_MSG_ID_TO_CORREL_ID), its Persistence the request's, its
    Expiry the request's remaining expiry (IBM MQ, MQMD "Expiry (MQLONG)",
    note 7, first option).

    Parameters
    ----------
    slow : list of (start, end, seconds)
        Periods during which a request takes ``seconds`` to serve.
    reply_expiry : {'copy', 'unlimited'}
        The reply's Expiry: the request's remaining expiry, or MQEI_UNLIMITED
        (two of the three choices of MQMD "Expiry (MQLONG)", note 7).
    """

    def __init__(self, sim, qmgr, actor, queue: str, *, process_time: float = 0.05,
                 slow=(), size=(80, 300), reply_expiry: str = "copy"):
        if reply_expiry not in ("copy", "unlimited"):
            raise SimulationError(f"{actor.name}: reply_expiry must be 'copy' or 'unlimited'")
        super().__init__(sim, qmgr, actor)
        self.reply_expiry = reply_expiry
        self.queue = queue
        self.process_time = process_time
        self.slow = list(slow)
        self.size = size
        self.served = 0

    def _time(self) -> float:
        for a, b, s in self.slow:
            if a <= self.sim.seconds < b:
                return s
        return self.process_time

    def run(self):
        q = self.qm.queue(self.queue)
        self.qm.open_input(q, self.actor)
        rng = self.sim.rng
        while True:
            m = yield from self.get_wait(q, None)
            if m is None:
                return
            yield self._time()
            req = self.qm.view(m)
            self.qm.commit(q, m, self.actor)
            length = rng.randint(*self.size)
            text = f'{{"quote":{rng.randint(100, 99999)},"for":"{bytes(req["MsgId"]).hex()}"'
            body = (text + ',"pad":"' + "q" * max(0, length - len(text) - 10) + '"}')
            copy = self.reply_expiry == "copy"
            md = {"Version": 2, "Report": 0, "MsgType": 2, "Expiry": req["Expiry"] if copy else -1,
                  "Feedback": 0, "Encoding": self.actor.encoding,
                  "CodedCharSetId": self.actor.ccsid, "Format": "MQSTR",
                  "Priority": req["Priority"], "Persistence": req["Persistence"],
                  "MsgId": NO_ID, "CorrelId": req["MsgId"], "ReplyToQ": "", "ReplyToQMgr": "",
                  "AccountingToken": b"\0" * 32}
            reply = SimMessage(md, (), body.encode(charset(self.actor.ccsid).codec),
                               m.deadline if copy else None, [dict(e) for e in m.events])
            self.qm.log(reply, self.actor, "reply_created",
                        request=bytes(req["MsgId"]).hex().upper())
            rc = self.qm.put(req["ReplyToQ"], reply, actor=self.actor, qmgr=req["ReplyToQMgr"])
            self.served += 1
            if rc != OK:
                self.sim.stats[f"reply_put_failed:{rc}"] += 1
