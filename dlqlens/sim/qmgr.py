"""Queue managers, queues and messages: the MQ semantics the simulator honours.

Objects carry the attributes of the MQSC vocabulary (:mod:`dlqlens.mq.vocabulary`)
under their lower-case MQSC names (``maxdepth``, ``bothresh``, ``trigtype``)
and MQ's own units: ``Expiry`` in tenths of a second, ``TRIGINT`` in
milliseconds; every other duration is in seconds of simulated time (UTC).

The rules for putting, dead-lettering, getting and triggering, each with the
IBM documentation it follows, are in ``docs/simulator.md`` ("The queue
manager's rules"); :meth:`QueueManager.put`, :meth:`QueueManager.dead_letter`,
:meth:`QueueManager.get` and the trigger methods apply them, and
:mod:`dlqlens.mq.trigger_conditions` decides every trigger condition.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass

from dlqlens.mq import trigger_conditions, vocabulary
from dlqlens.mq.constants import (MQAT, MQFB, MQFMT, MQMD_STRUC_ID, MQMD_VERSION_1, MQRC, MQRO,
                                  MQXQH_VERSION_1)
from dlqlens.mq.structs import MQMD
from dlqlens.sim.engine import Simulation, SimulationError
from dlqlens.sim.wire import HEADER_LENGTH, data_length, header_codec, pack_data

RC = MQRC  # reason codes by name
OK = 0

MQAT_QMGR = MQAT["MQAT_QMGR"]
MQAT_UNKNOWN = MQAT["MQAT_UNKNOWN"]
MQAT_UNIX = MQAT["MQAT_UNIX"]
MQAT_JAVA = MQAT["MQAT_JAVA"]
MQAT_CHANNEL_INITIATOR = MQAT["MQAT_CHANNEL_INITIATOR"]

#: Longest history kept per message, and how many of its first events are always kept.
MAX_EVENTS = 400
KEEP_FIRST = 60

#: The Report bits of the expiration-report family (IBM, MQMD "Report (MQLONG)":
#: MQRO_EXPIRATION, _WITH_DATA and _WITH_FULL_DATA; a message asks for at most one).
EXPIRATION_REPORT_BITS = (MQRO["MQRO_EXPIRATION"] | MQRO["MQRO_EXPIRATION_WITH_DATA"]
                          | MQRO["MQRO_EXPIRATION_WITH_FULL_DATA"])
NO_ID = b"\0" * 24

#: :attr:`SimMessage.locked` of a message put in a unit of work not yet committed: it
#: counts toward the depth and triggering ("Designing an application that uses triggered
#: queues": the queue manager counts committed and uncommitted messages) but no get sees it.
UNCOMMITTED_PUT = "uncommitted put"
_FMT_DEAD = MQFMT["MQFMT_DEAD_LETTER_HEADER"].rstrip()
_FMT_TRIGGER = MQFMT["MQFMT_TRIGGER"].rstrip()
_FMT_XMIT = MQFMT["MQFMT_XMIT_Q_HEADER"].rstrip()
#: The MQMD fields an MQXQH's embedded version-1 MQMD copies from the message's
#: (StrucId and Version are the embedded descriptor's own).
_MD_V1 = frozenset(f.name for f in MQMD.fields_for(MQMD_VERSION_1)) - {"StrucId", "Version"}

#: Platforms a queue manager can run on: native encoding, default CCSID, the
#: identity of its receiving channel agent in an MQDLH, and the MsgId prefix.
#: The z/OS agent identity (MQAT_CHANNEL_INITIATOR, ``<qmgr>CHIN``) is our
#: choice: IBM describes only the CICS case (MQDLH "PutApplType (MQLONG)").
PLATFORMS: dict[str, dict] = {
    "linux": {"encoding": 546, "ccsid": 1208, "mca": (MQAT_UNIX, "amqrmppa"), "prefix": "AMQ "},
    "aix": {"encoding": 273, "ccsid": 819, "mca": (MQAT_UNIX, "amqrmppa"), "prefix": "AMQ "},
    "zos": {"encoding": 785, "ccsid": 500, "mca": (MQAT_CHANNEL_INITIATOR, "{qmgr}CHIN"),
            "prefix": "CSQ "},
}

#: MQENC_NATIVE -> platform (IBM MQ, "MQENC_* (Encoding)").
ENCODING_PLATFORM = {546: "linux", 273: "aix", 785: "zos"}


@dataclass
class Actor:
    """Whoever calls the MQI: an application, a channel agent, the queue manager.

    Attributes
    ----------
    name : str
        Name used in the ground-truth events.
    appltype : int
        ``MQAT_*`` value put in PutApplType (MQMD origin context, MQDLH).
    applname : str
        PutApplName (first 28 characters are used).
    user : str
        UserIdentifier for default context and authority checks.
    encoding, ccsid : int or None
        Layout of the data (and MQDLHs) it writes; None = the queue manager's.
    """

    name: str
    appltype: int
    applname: str
    user: str = "mqm"
    encoding: int | None = None
    ccsid: int | None = None


class SimMessage:
    """A message on a simulated queue.

    Attributes
    ----------
    md : dict
        MQMD fields by IBM name. ``Expiry`` is the value given at the first put;
        the remaining expiry comes from :attr:`deadline`.
    headers : tuple
        ``(kind, fields)`` pairs in front of the data (``"MQDLH"``, ``"MQTM"``,
        ``"MQXQH"``), see :mod:`dlqlens.sim.wire`.
    body : bytes
        The application data after the headers.
    deadline : int or None
        Tick at which the message expires (None: MQEI_UNLIMITED).
    events : list of dict
        The history that brought the message where it is (ground truth).
    patterns : tuple of str
        The failure patterns the message belongs to (ground truth), the
        primary one first: a message can be of several (a re-trigger message
        the trigger monitor could not act on is part of a trigger storm and a
        trigger failure). :attr:`pattern` is the primary one, or None.
    poison : bool
        The data makes its consuming application fail (a property of content,
        kept when the message is dead-lettered, forwarded or retried).
    route : tuple or None
        ``(RemoteQName, RemoteQMgrName)`` while on a transmission queue.
    """

    __slots__ = ("md", "headers", "body", "deadline", "events", "patterns", "poison",
                 "route", "locked", "removed", "counted")

    def __init__(self, md: dict, headers: tuple = (), body: bytes = b"",
                 deadline: int | None = None, events: list | None = None,
                 patterns: tuple | str | None = (), poison: bool = False):
        self.md = md
        self.headers = headers
        self.body = body
        self.deadline = deadline
        self.events = [] if events is None else events
        if patterns is None:
            patterns = ()
        self.patterns = (patterns,) if isinstance(patterns, str) else tuple(patterns)
        self.poison = poison
        self.route = None
        self.locked = None
        self.removed = False
        self.counted = False

    @property
    def pattern(self) -> str | None:
        """The primary ground-truth pattern (the first of :attr:`patterns`), or None."""
        return self.patterns[0] if self.patterns else None

    def add_pattern(self, pattern: str, *, primary: bool = False) -> None:
        """Record that the message belongs to ``pattern`` too (once); ``primary``
        puts it first, else it follows the patterns already recorded."""
        rest = tuple(p for p in self.patterns if p != pattern)
        if primary:
            self.patterns = (pattern,) + rest
        elif pattern not in self.patterns:
            self.patterns = self.patterns + (pattern,)

    @property
    def length(self) -> int:
        """Length of the message data in bytes (headers included)."""
        return data_length(self.headers, self.body)

    def header(self, kind: str) -> dict | None:
        """The fields of the first header of ``kind``, or None."""
        for k, fields in self.headers:
            if k == kind:
                return fields
        return None

    def copy(self) -> "SimMessage":
        """A new message with the same descriptor, data and history (for a re-put)."""
        return SimMessage(dict(self.md), self.headers, self.body, self.deadline, self.events,
                          self.patterns, self.poison)

    def log(self, sim: Simulation, qmgr: str, actor: str, event: str, **kw) -> None:
        """Append one ground-truth event (UTC time, queue manager, actor, what).

        A history longer than :data:`MAX_EVENTS` keeps its first
        :data:`KEEP_FIRST` events, an ``elided`` event counting the events left
        out (with the times of the first and last of them), and the latest ones.
        """
        e = {"t": sim.iso(), "qmgr": qmgr, "actor": actor, "event": event}
        e.update(kw)
        ev = self.events
        ev.append(e)
        if len(ev) > MAX_EVENTS:
            head = ev[:KEEP_FIRST]
            if ev[KEEP_FIRST].get("event") == "elided":
                marker, rest = ev[KEEP_FIRST], ev[KEEP_FIRST + 1:]
            else:
                first = ev[KEEP_FIRST]
                marker = {"t": first["t"], "event": "elided", "count": 0, "from": first["t"]}
                rest = ev[KEEP_FIRST:]
            cut = len(rest) - (MAX_EVENTS - KEEP_FIRST - 1 - 100)
            marker["count"] += cut
            marker["to"] = rest[cut - 1]["t"]
            ev[:] = head + [marker] + rest[cut:]

    def state(self) -> tuple:
        return (self.md, self.headers, self.body, self.deadline, self.events, self.patterns,
                self.poison)

    @classmethod
    def from_state(cls, state: tuple) -> "SimMessage":
        return cls(*state)


# ---------------------------------------------------------------------------
# message stores
# ---------------------------------------------------------------------------

class _Level:
    __slots__ = ("items", "head")

    def __init__(self):
        self.items: list = []
        self.head = 0


class MemoryStore:
    """Messages of one queue in delivery order: one list per priority (or one, FIFO)."""

    spooled = False

    def __init__(self, levels: int):
        self.by_level: dict[int, _Level] = {}
        self.levels: list[_Level] = []  # the levels in use, highest priority first

    def append(self, m: SimMessage, level: int) -> None:
        lvl = self.by_level.get(level)
        if lvl is None:
            lvl = self.by_level[level] = _Level()
            self.levels = [self.by_level[k] for k in sorted(self.by_level, reverse=True)]
        lvl.items.append(m)

    def ordered(self):
        """Messages not removed, highest priority first, then in arrival order.

        Live: messages appended behind the position reached are seen, as an
        MQGET browse-next cursor sees them.
        """
        for level in range(9, -1, -1):
            lvl = self.by_level.get(level)
            if lvl is None:
                continue
            items = lvl.items
            i = lvl.head
            while i < len(items):
                m = items[i]
                if not m.removed:
                    yield m
                i += 1

    def first(self, qm: "QueueManager", q: "LocalQueue", actor) -> SimMessage | None:
        """The message an MQGET returns: the first not locked and not expired.

        Expired messages met on the way are discarded through
        ``qm._discard_expired``; removed messages at the head of a level are
        dropped from it.
        """
        now = qm.sim.now
        for lvl in self.levels:
            items = lvl.items
            n = len(items)
            i = lvl.head
            while i < n and items[i].removed:
                i += 1
            if i > 1024 and 2 * i > n:
                items = lvl.items = items[i:]
                n -= i
                i = 0
            lvl.head = i
            while i < n:
                m = items[i]
                i += 1
                if m.removed or m.locked is not None:
                    continue
                if m.deadline is not None and m.deadline <= now:
                    qm._discard_expired(q, m, actor)
                    n = len(items)  # a report may have been put on this very queue
                    continue
                return m
        return None

    def compact(self) -> None:
        for lvl in self.levels:
            items = lvl.items
            h = lvl.head
            while h < len(items) and items[h].removed:
                h += 1
            if h > 1024 and 2 * h > len(items):
                lvl.items = items[h:]
                h = 0
            lvl.head = h

    def close(self) -> None:
        pass


class SpoolStore:
    """Messages of a queue nothing reads during the run, streamed to disk.

    One file of pickled messages per priority level; :meth:`ordered` reads
    them back in delivery order (used by the capture at the end). Only the
    depth is kept in memory, so a dead-letter queue can take millions of
    messages.
    """

    spooled = True

    def __init__(self, directory: str, name: str, levels: int):
        self.paths = [os.path.join(directory, f"{name}.{i}.spool") for i in range(levels)]
        self.files: list = [None] * levels
        self.written = [0] * levels
        self.reading = False

    def append(self, m: SimMessage, level: int) -> None:
        fh = self.files[level]
        if fh is None:
            fh = self.files[level] = open(self.paths[level], "ab")
        pickle.dump(m.state(), fh, protocol=pickle.HIGHEST_PROTOCOL)
        self.written[level] += 1
        if self.reading:
            fh.flush()

    def ordered(self):
        self.reading = True
        for fh in self.files:
            if fh is not None:
                fh.flush()
        for level in reversed(range(len(self.paths))):
            if not self.written[level]:
                continue
            with open(self.paths[level], "rb") as r:
                done = 0
                while done < self.written[level]:
                    done += 1
                    yield SimMessage.from_state(pickle.load(r))

    def compact(self) -> None:
        pass

    def close(self) -> None:
        for i, fh in enumerate(self.files):
            if fh is not None:
                fh.close()
                self.files[i] = None
        for p in self.paths:
            if os.path.exists(p):
                os.remove(p)


# ---------------------------------------------------------------------------
# objects
# ---------------------------------------------------------------------------

#: Attributes of simulated local queues that MQ has no MQSC keyword for:
#: ``authorized`` (None: everyone; else the set of user ids that may put,
#: our stand-in for authority records) and ``spool`` (stream the queue to
#: disk: nothing reads it during the run).
SIM_QLOCAL_ATTRIBUTES: dict = {"authorized": None, "spool": False}

#: Local queue attributes and their defaults: the MQSC vocabulary's QLOCAL
#: (:func:`dlqlens.mq.vocabulary.defaults`) and :data:`SIM_QLOCAL_ATTRIBUTES`.
QLOCAL_DEFAULTS: dict = {**vocabulary.defaults("QLOCAL"), **SIM_QLOCAL_ATTRIBUTES}


def _check_attrs(kind: str, name: str, attrs: dict, platform: str,
                 extra: dict = SIM_QLOCAL_ATTRIBUTES) -> None:
    """Check attribute values with the MQSC vocabulary (names in ``extra`` are the simulator's)."""
    try:
        vocabulary.check(kind, {k: v for k, v in attrs.items() if k not in extra}, platform)
    except vocabulary.AttributeValueError as exc:
        own = f" or the simulator's {', '.join(k.upper() for k in extra)}" \
            if exc.unknown and extra else ""
        raise SimulationError(f"{kind}({name}): {exc.found}: expected {exc.expected}{own}") \
            from None


class LocalQueue:
    """A local queue (QLOCAL), with the attributes of :data:`QLOCAL_DEFAULTS`.

    State: ``depth`` (CURDEPTH: messages on the queue, expired ones included,
    messages got under syncpoint and not yet committed excluded), ``ipprocs``
    (OpenInputCount), ``trig_count`` (messages of priority >= TRIGMPRI),
    ``last_trigger`` (tick of the last trigger message for this queue).
    """

    def __init__(self, qmgr: "QueueManager", name: str, **attrs):
        _check_attrs("QLOCAL", name, attrs, qmgr.platform)
        self.qmgr = qmgr
        self.name = name
        for k, v in QLOCAL_DEFAULTS.items():
            setattr(self, k, attrs.get(k, v))
        if self.authorized is not None:
            self.authorized = set(self.authorized)
        self.depth = 0
        self.ipprocs = 0
        self.trig_count = 0
        self.last_trigger: int | None = None
        self.waiters: list = []
        self.listeners: list = []  # callables told of every message added (a DLQ handler)
        self.deleted = False
        self.max_depth_seen = 0
        levels = 10 if self.msgdlvsq == "PRIORITY" else 1
        sim = qmgr.sim
        if self.spool and sim.spool_dir and qmgr.expryint is None:  # a scan must reach it
            self.store = SpoolStore(sim.spool_dir, f"{qmgr.name}.{name}", levels)
        else:
            self.store = MemoryStore(levels)

    # -- delivery order and trigger priority ---------------------------------------
    def _level(self, m: SimMessage) -> int:
        if self.msgdlvsq == "FIFO":
            return 0
        return min(9, max(0, int(m.md["Priority"])))

    def trigger_priority(self, m: SimMessage) -> int:
        """The priority that counts toward triggering ("Conditions for a trigger event", item 14).

        The message's priority, or the queue's DEFPRTY on an ``MSGDLVSQ(FIFO)`` queue.
        """
        return self.defprty if self.msgdlvsq == "FIFO" else int(m.md["Priority"])

    # -- state changes ----------------------------------------------------------------
    def _add(self, m: SimMessage, *, committed: bool = True) -> None:
        """Store ``m``; an uncommitted put (``committed=False``) counts toward the depth and
        triggering but no get, browse or listener sees it until :meth:`_made_available`."""
        self.store.append(m, self._level(m))
        self.depth += 1
        self.max_depth_seen = max(self.max_depth_seen, self.depth)
        m.counted = self.trigger_priority(m) >= self.trigmpri
        if m.counted:
            self.trig_count += 1
        if not committed:
            m.locked = UNCOMMITTED_PUT
            return
        self._made_available(m)

    def _made_available(self, m: SimMessage) -> None:
        """A message put (or committed) becomes available: listeners are told, getters woken."""
        m.locked = None
        for tell in self.listeners:
            tell(m)
        self.wake()

    def _put_backed_out(self, m: SimMessage) -> None:
        """An uncommitted put is backed out: the message leaves the queue (MQBACK: "messages
        put as part of a unit of work are deleted")."""
        if m.removed:
            return
        self.depth -= 1
        if m.counted:
            self.trig_count -= 1
        m.locked = None
        m.removed = True

    def _lock(self, m: SimMessage, holder) -> None:
        m.locked = holder
        self.depth -= 1
        if m.counted:
            self.trig_count -= 1

    def _unlock(self, m: SimMessage) -> None:
        m.locked = None
        self.depth += 1
        if m.counted:
            self.trig_count += 1
        self.wake()

    def _remove(self, m: SimMessage) -> None:
        if m.locked is None:
            self.depth -= 1
            if m.counted:
                self.trig_count -= 1
        m.locked = None
        m.removed = True

    def _recount(self) -> None:
        self.trig_count = 0
        for m in self.store.ordered():
            m.counted = self.trigger_priority(m) >= self.trigmpri
            if m.counted and m.locked is None:
                self.trig_count += 1

    def wake(self) -> None:
        """Wake every process waiting for a message on this queue."""
        if self.waiters:
            waiters, self.waiters = self.waiters, []
            for proc, token in waiters:
                proc.wake(token)

    def messages(self):
        """The messages on the queue in delivery order (not removed; locked ones included)."""
        return self.store.ordered()


class RemoteQueue:
    """A remote queue definition (QREMOTE): RNAME at RQMNAME through XMITQ.

    Its attributes are the MQSC vocabulary's QREMOTE ones
    (:func:`dlqlens.mq.vocabulary.defaults`) and ``authorized`` (as a local
    queue's, :data:`SIM_QLOCAL_ATTRIBUTES`).
    """

    def __init__(self, qmgr: "QueueManager", name: str, **attrs):
        _check_attrs("QREMOTE", name, attrs, qmgr.platform, _SIM_QREMOTE_ATTRIBUTES)
        self.qmgr = qmgr
        self.name = name
        for k, v in {**vocabulary.defaults("QREMOTE"), **_SIM_QREMOTE_ATTRIBUTES}.items():
            setattr(self, k, attrs.get(k, v))
        if self.authorized is not None:
            self.authorized = set(self.authorized)


_SIM_QREMOTE_ATTRIBUTES = {"authorized": None}


@dataclass
class ProcessDefinition:
    """A process definition (DEFINE PROCESS): what a trigger monitor starts.

    :meth:`QueueManager.define_process` fills in the MQSC vocabulary's
    defaults (:func:`dlqlens.mq.vocabulary.defaults`).

    Attributes
    ----------
    name : str
    appltype : int
        APPLTYPE (``MQAT_*``), copied into MQTM.ApplType.
    applicid : str
        APPLICID: the program to start (a key of ``Simulation.programs``).
    envrdata, userdata : str
        ENVRDATA, USERDATA. On UNIX, ENVRDATA ending in ``&`` makes runmqtrm
        start the program in the background.
    descr : str
        DESCR.
    """

    name: str
    appltype: int
    applicid: str
    envrdata: str
    userdata: str
    descr: str


# ---------------------------------------------------------------------------
# units of work
# ---------------------------------------------------------------------------

class UnitOfWork:
    """The gets and puts under syncpoint one application has made and not yet resolved.

    The queue manager keeps one per actor name (:meth:`QueueManager.unit_of_work`):
    an actor stands for one connection, so applications that share an
    :class:`Actor` share their unit of work. It begins with the first get
    or put under syncpoint and ends at :meth:`QueueManager.commit_uow` or
    :meth:`QueueManager.backout_uow` (MQCMIT, MQBACK), after which the
    actor's next get begins a new one.

    Attributes
    ----------
    number : int
        1 for the actor's first unit of work, then 2, 3... (for traces).
    gets : list of (LocalQueue, SimMessage)
        The messages got in it, in order; they stay locked on their queues.
    marked : SimMessage or None
        The one message got with MQGMO_MARK_SKIP_BACKOUT (IBM MQ for z/OS
        "Skipping backout": "there can be only one MQGET request marked as
        skipping backout" in a unit of work).
    puts : list of (LocalQueue, SimMessage)
        The messages put in it (MQPMO_SYNCPOINT): on their queues, counted
        in the depth and toward triggering, seen by no get until the commit.
    triggers : list of (SimMessage, LocalQueue, str)
        Trigger messages its puts caused: the MQTM, the initiation queue and
        the application queue's TRIGTYPE at the trigger event. They are made
        available at the commit, or at the backout for FIRST and DEPTH
        (:meth:`QueueManager.commit_uow`, :meth:`QueueManager.backout_uow`).
    """

    __slots__ = ("number", "gets", "marked", "puts", "triggers")

    def __init__(self, number: int):
        self.number = number
        self.gets: list = []
        self.marked: SimMessage | None = None
        self.puts: list = []
        self.triggers: list = []

    def empty(self) -> bool:
        """Nothing is left to commit or back out."""
        return not (self.gets or self.puts or self.triggers)

    def __repr__(self) -> str:
        return (f"UnitOfWork({self.number}, gets={len(self.gets)}, puts={len(self.puts)}, "
                f"triggers={len(self.triggers)}, marked={self.marked is not None})")


# ---------------------------------------------------------------------------
# the queue manager
# ---------------------------------------------------------------------------

_QMGR = vocabulary.defaults("QMGR")


class QueueManager:
    """A simulated queue manager.

    Parameters
    ----------
    sim : Simulation
    name : str
    platform : {'linux', 'aix', 'zos'}
        Native encoding, default CCSID and channel-agent identity
        (:data:`PLATFORMS`).
    encoding, ccsid : int, optional
        Override the platform's MQENC_NATIVE and the queue manager CCSID.
    deadq : str
        DEADQ: the dead-letter queue's name ('' for none; MQ's default is none,
        the simulator's ``SYSTEM.DEAD.LETTER.QUEUE``).
    trigint : int
        TRIGINT, milliseconds (default: the MQSC vocabulary's, MQ's 999999999).
    maxmsgl : int
        Queue manager MAXMSGL, bytes (default: the vocabulary's, 4 MB; 32 KB to
        100 MB).
    user : str
        The user id the queue manager's own puts carry.
    expryint : int, optional
        EXPRYINT, z/OS only: every ``expryint`` seconds (1 to 99,999,999) the
        queue manager scans its queues and discards the expired messages,
        with their expiration reports, whether or not a get reaches them
        (IBM MQ "ExpiryInterval (MQLONG)"; "Expired messages on z/OS":
        "Periodic scan"). None is ``EXPRYINT(OFF)``, MQ's default: expired
        messages are discarded only by a get or browse that would have
        returned them. With a scan, queues marked ``spool=True`` stay in
        memory (the scan must reach them). :meth:`alter_qmgr` changes it.

    Raises
    ------
    SimulationError
        An unknown platform, an attribute value MQ would refuse, a name
        already taken, or ``expryint`` off z/OS or out of range.
    """

    def __init__(self, sim: Simulation, name: str, *, platform: str = "linux",
                 encoding: int | None = None, ccsid: int | None = None,
                 deadq: str = "SYSTEM.DEAD.LETTER.QUEUE", trigint: int = _QMGR["trigint"],
                 maxmsgl: int = _QMGR["maxmsgl"], user: str = "mqm",
                 expryint: int | None = None):
        if platform not in PLATFORMS:
            raise SimulationError(f"queue manager {name}: unknown platform {platform!r}")
        _check_attrs("QMGR", name, {"deadq": deadq, "trigint": trigint, "maxmsgl": maxmsgl},
                     platform, {})
        if name in sim.qmgrs:
            raise SimulationError(f"queue manager {name} defined twice")
        plat = PLATFORMS[platform]
        self.sim = sim
        self.name = name
        self.platform = platform
        self.encoding = int(encoding or plat["encoding"])
        self.ccsid = int(ccsid or plat["ccsid"])
        self.codec = header_codec(self.ccsid)
        self.deadq = deadq
        self.trigint = trigint
        self.maxmsgl = maxmsgl
        self.user = user
        self.objects: dict = {}
        self.processes: dict[str, ProcessDefinition] = {}
        self.routes: dict[str, str] = {}
        self.deleted_tempdyn: set[str] = set()
        self.actor = Actor(name, MQAT_QMGR, name[:28], user, self.encoding, self.ccsid)
        mca_type, mca_name = plat["mca"]
        self.mca = Actor("amqrmppa" if platform != "zos" else f"{name}CHIN", mca_type,
                         mca_name.format(qmgr=name[:4]), user, self.encoding, self.ccsid)
        self._prefix = (plat["prefix"] + name[:12].ljust(12)).encode(self.codec)
        self._msgseq = 0
        self._tempseq = 0
        self._trigger_dlq_guard = False
        self.units: dict[str, UnitOfWork] = {}  # actor name -> its open unit of work
        self._uow_numbers: dict[str, int] = {}
        self.expryint: int | None = None
        self._scan_generation = 0
        self.scan_actor = Actor(f"{name}(expiry scan)", MQAT_QMGR, name[:28], user,
                                self.encoding, self.ccsid)
        sim.qmgrs[name] = self
        if expryint is not None:
            self.alter_qmgr(expryint=expryint)

    # -- queue manager attributes ------------------------------------------------------------
    def alter_qmgr(self, *, expryint: int | str | None) -> None:
        """ALTER QMGR EXPRYINT(seconds | OFF) (z/OS only; see the class docstring).

        The next scan comes ``expryint`` seconds from now; ``None`` or
        ``'OFF'`` stops the scans. Queues defined ``spool=True`` before a scan
        was first asked for are on disk and are not scanned (give ``expryint``
        to the constructor to have them kept in memory).

        Raises
        ------
        SimulationError
            Off z/OS ("ExpiryInterval (MQLONG)": "supported only on z/OS"), or
            a value outside 1 to 99,999,999.
        """
        if isinstance(expryint, str) and expryint.upper() == "OFF":
            expryint = None
        if expryint is not None:
            if self.platform != "zos":
                raise SimulationError(f"queue manager {self.name}: EXPRYINT is supported only "
                                      "on z/OS (IBM MQ \"ExpiryInterval (MQLONG)\")")
            if not isinstance(expryint, int) or not 1 <= expryint <= 99999999:
                raise SimulationError(f"queue manager {self.name}: EXPRYINT({expryint!r}): "
                                      "expected OFF or 1 to 99999999 seconds")
        self.expryint = expryint
        self._scan_generation += 1
        if expryint is not None:
            self.sim.after(expryint, self._expiry_scan, self._scan_generation)

    def _expiry_scan(self, generation: int) -> None:
        """One periodic scan ("Expired messages on z/OS", "Periodic scan"): every expired
        message not got under syncpoint is discarded, with its expiration report."""
        if generation != self._scan_generation or self.expryint is None:
            return  # EXPRYINT was altered since this scan was scheduled
        found = 0
        for q in list(self.objects.values()):
            if not isinstance(q, LocalQueue) or q.store.spooled:
                continue
            for m in list(q.store.ordered()):
                if m.locked is None and self.expired(m):
                    self._discard_expired(q, m, self.scan_actor)
                    found += 1
            q.store.compact()
        self.sim.stats["expiry_scans"] += 1
        self.sim.stats["expired_discarded_by_scan"] += found
        self.sim.after(self.expryint, self._expiry_scan, generation)

    # -- definitions ------------------------------------------------------------------
    def define_qlocal(self, name: str, **attrs) -> LocalQueue:
        """DEFINE QLOCAL(name) with MQSC attributes (see :data:`QLOCAL_DEFAULTS`)."""
        if name in self.objects:
            raise SimulationError(f"{self.name}: queue {name} already defined")
        q = LocalQueue(self, name, **attrs)
        self.objects[name] = q
        return q

    def define_qremote(self, name: str, rname: str, rqmname: str, xmitq: str = "",
                       **kw) -> RemoteQueue:
        """DEFINE QREMOTE(name) RNAME RQMNAME XMITQ (blank XMITQ: the route to RQMNAME)."""
        if name in self.objects:
            raise SimulationError(f"{self.name}: queue {name} already defined")
        q = RemoteQueue(self, name, rname=rname, rqmname=rqmname, xmitq=xmitq, **kw)
        self.objects[name] = q
        return q

    def define_process(self, name: str, **attrs) -> ProcessDefinition:
        """DEFINE PROCESS(name) APPLTYPE APPLICID ENVRDATA USERDATA DESCR (MQSC vocabulary)."""
        _check_attrs("PROCESS", name, attrs, self.platform, {})
        p = ProcessDefinition(name, **{**vocabulary.defaults("PROCESS"), **attrs})
        self.processes[name] = p
        return p

    def route(self, qmgr: str, xmitq: str) -> None:
        """Messages for queue manager ``qmgr`` go through transmission queue ``xmitq``."""
        self.routes[qmgr] = xmitq

    def queue(self, name: str) -> LocalQueue:
        """The local queue ``name``; raises :class:`SimulationError` when there is none."""
        q = self.objects.get(name)
        if not isinstance(q, LocalQueue):
            raise SimulationError(f"{self.name}: no local queue {name}")
        return q

    def create_tempdyn(self, **attrs) -> LocalQueue:
        """MQOPEN of a model queue with DEFTYPE(TEMPDYN): a queue ``AMQ.<16 hex>``.

        The name follows the observed ``AMQ.`` + 16 hexadecimal digits form
        (seen in captured dead letters). The queue disappears when
        :meth:`delete_queue` is called (its creator closes it or ends).
        """
        self._tempseq += 1
        name = f"AMQ.{(self.sim.now // 100) & 0xFFFFFFFF:08X}{self._tempseq:08X}"
        attrs.setdefault("deftype", "TEMPDYN")
        return self.define_qlocal(name, **attrs)

    def delete_queue(self, name: str) -> int:
        """DELETE QLOCAL (or close-and-delete of a dynamic queue); returns the messages lost."""
        q = self.objects.pop(name, None)
        if q is None:
            raise SimulationError(f"{self.name}: no queue {name} to delete")
        lost = 0
        if isinstance(q, LocalQueue):
            q.deleted = True
            lost = q.depth
            if q.deftype == "TEMPDYN":
                self.deleted_tempdyn.add(name)
            for m in q.messages():
                m.removed = True
            q.store.close()
            q.wake()
        self.sim.stats["messages_lost_with_deleted_queue"] += lost
        return lost

    def alter(self, name: str, **attrs) -> None:
        """ALTER QLOCAL / MQSET, with the trigger events of item 13 of "Conditions for a
        trigger event".

        * TRIGGER turned on, or (TRIGGER on) TRIGTYPE, TRIGMPRI or TRIGDPTH
          changed: trigger when enough messages are there (conditions 4-10,
          excluding 8);
        * GET(ENABLED) after GET(DISABLED) on an application queue (conditions
          4-10, excluding 5);
        * PUT(ENABLED) after PUT(DISABLED) on an initiation queue: one trigger
          message for each application queue it serves (conditions 4-10).

        One ALTER (one MQSET) is one event: the first two make at most one
        trigger message together (:func:`dlqlens.mq.trigger_conditions.on_alter`).
        A transmission queue is altered and triggered as any local queue.
        """
        q = self.queue(name)
        _check_attrs("QLOCAL", name, attrs, self.platform)
        old = {k: getattr(q, k) for k in attrs}
        for k, v in attrs.items():
            setattr(q, k, set(v) if k == "authorized" and v is not None else v)
        if any(k in attrs for k in ("trigmpri", "defprty", "msgdlvsq")):
            q._recount()
        changed = {k for k in attrs if attrs[k] != old[k]}
        causes = trigger_conditions.alter_causes(q, changed)
        if "get_enabled" in causes:
            q.wake()
        d = trigger_conditions.on_alter(q, self, causes)
        if d is not None and d.trigger:  # one ALTER: one trigger message for q
            self._make_trigger(q, cause=d.cause, storm=False)
        if "initq_put_enabled" in causes:
            for aq in self._served_by(q):
                self._trigger_on_event(aq, "initq_put_enabled")

    # -- identifiers and time ----------------------------------------------------------------
    def new_msgid(self) -> bytes:
        """A queue-manager-generated MsgId: ``AMQ `` + queue manager name (12) + 8 bytes.

        The layout is the convention seen in captures (IBM, MQMD "MsgId
        (MQBYTE24)", leaves it to the queue manager); the
        last 8 bytes are the simulated second and a sequence number.
        """
        self._msgseq += 1
        return self._prefix + ((self.sim.now // 100) & 0xFFFFFFFF).to_bytes(4, "big") + \
            (self._msgseq & 0xFFFFFFFF).to_bytes(4, "big")

    def remaining_expiry(self, m: SimMessage) -> int:
        """The message's Expiry now: remaining tenths of a second (at least 1), or -1."""
        if m.deadline is None:
            return -1
        return max(1, -(-(m.deadline - self.sim.now) // 10))

    def expired(self, m: SimMessage) -> bool:
        return m.deadline is not None and m.deadline <= self.sim.now

    def with_xmit_header(self, m: SimMessage) -> SimMessage:
        """``m`` as it is on a transmission queue: an MQXQH in front of its data.

        The MQXQH names the destination (``m.route``) and embeds a version-1
        MQMD copied from the message's, whose Expiry is the remaining expiry
        now: "the queue manager sets the values of the two Expiry fields to be
        the same" and decrements both with the time spent on the queue (MQMD
        "Expiry (MQLONG)", note 9; "MQXQH - Transmission-queue header"). The
        outer MQMD's Format is ``MQXMIT``, its Encoding and CodedCharSetId
        this queue manager's. The new message shares ``m``'s deadline, history
        and patterns (used for captures of a transmission queue and for a
        message the sending agent dead-letters with its MQXQH).
        """
        rname, rqmname = m.route
        xqh = {"Version": MQXQH_VERSION_1, "RemoteQName": rname, "RemoteQMgrName": rqmname}
        for k, v in m.md.items():
            if k in _MD_V1:
                xqh["MsgDesc." + k] = v
        xqh["MsgDesc.StrucId"] = MQMD_STRUC_ID
        xqh["MsgDesc.Version"] = MQMD_VERSION_1
        xqh["MsgDesc.Expiry"] = self.remaining_expiry(m)
        md = dict(m.md)
        md.update(Format=_FMT_XMIT, Encoding=self.encoding, CodedCharSetId=self.ccsid)
        return SimMessage(md, (("MQXQH", xqh),) + m.headers, m.body, m.deadline, m.events,
                          m.patterns, m.poison)

    def view(self, m: SimMessage) -> dict:
        """The MQMD an MQGET returns now (remaining Expiry, current BackoutCount)."""
        md = dict(m.md)
        md["Expiry"] = self.remaining_expiry(m)
        return md

    def log(self, m: SimMessage, actor: Actor, event: str, **kw) -> None:
        m.log(self.sim, self.name, actor.name, event, **kw)

    # -- put ---------------------------------------------------------------------------------
    def put(self, qname: str, m: SimMessage, *, actor: Actor, qmgr: str | None = None,
            context: str = "default", user: str | None = None,
            event: tuple[str, dict] | None = None, syncpoint: bool = False) -> int:
        """MQPUT1 of ``m`` to ``qname`` (at queue manager ``qmgr``); returns the reason code.

        Parameters
        ----------
        context : {'default', 'pass', 'set'}
            ``default``: the queue manager fills the origin and identity
            context from ``actor`` and the time of the put; ``pass``/``set``:
            the MQMD's context is kept (MQPMO_PASS_ALL_CONTEXT /
            MQPMO_SET_ALL_CONTEXT).
        user : str, optional
            The user id authority is checked for (default ``actor.user``).
        event : (str, dict), optional
            Name and details of the ground-truth event logged on success
            (default ``("put", {})``).
        syncpoint : bool
            MQPMO_SYNCPOINT: the put joins the actor's :meth:`unit_of_work`.
            The message counts toward the depth and triggering at once but no
            get sees it before :meth:`commit_uow` (:meth:`backout_uow` deletes
            it; IBM MQ "MQBACK - Back out changes"); a trigger message it
            causes is made at the put, with the attributes then in force, and
            made available when the unit of work is resolved: at the commit,
            or at the backout for TRIGTYPE FIRST and DEPTH only (IBM MQ
            "Conditions for a trigger event", the paragraph after item 10;
            "Designing an application that uses triggered queues", "Trigger
            messages and units of work"; "Properties of trigger messages").

        Returns
        -------
        int
            0, or the MQRC of the failure (the message is then not stored).
        """
        target = (qmgr or "").strip()
        if target and target != self.name:
            xq = self.routes.get(target)
            if xq is None and isinstance(self.objects.get(target), LocalQueue):
                xq = target
            if xq is None:
                return self._failed(m, actor, qname, RC["MQRC_UNKNOWN_REMOTE_Q_MGR"])
            return self._put_remote(qname, target, xq, m, actor, context, user, None, event,
                                    syncpoint)
        obj = self.objects.get(qname)
        if obj is None:
            return self._failed(m, actor, qname, RC["MQRC_UNKNOWN_OBJECT_NAME"])
        who = user or actor.user
        if obj.authorized is not None and who not in obj.authorized:
            return self._failed(m, actor, qname, RC["MQRC_NOT_AUTHORIZED"])
        if isinstance(obj, RemoteQueue):
            if obj.put == "DISABLED":
                return self._failed(m, actor, qname, RC["MQRC_PUT_INHIBITED"])
            xq = obj.xmitq or self.routes.get(obj.rqmname) or obj.rqmname
            return self._put_remote(obj.rname, obj.rqmname, xq, m, actor, context, user, obj, event,
                                    syncpoint)
        return self._store(obj, m, actor, context, user, 0, event, syncpoint=syncpoint)

    def _put_remote(self, rname, rqmname, xq_name, m, actor, context, user, defs, event,
                    syncpoint=False) -> int:
        xq = self.objects.get(xq_name)
        if not isinstance(xq, LocalQueue) or xq.usage != "XMITQ":
            return self._failed(m, actor, rname, RC["MQRC_UNKNOWN_XMIT_Q"])
        m.route = (rname, rqmname)
        name, details = event or ("put", {})
        event = (name, dict(details, destq=rname, destqm=rqmname))
        return self._store(xq, m, actor, context, user, HEADER_LENGTH["MQXQH"], event, defs,
                           syncpoint)

    def _failed(self, m: SimMessage, actor: Actor, qname: str, rc: int) -> int:
        if m.events:
            self.log(m, actor, "put_failed", queue=qname, reason=rc)
        return rc

    def _store(self, q: LocalQueue, m: SimMessage, actor: Actor, context: str, user,
               extra: int, event, defs=None, syncpoint: bool = False) -> int:
        md = m.md
        if q.put == "DISABLED":
            return self._failed(m, actor, q.name, RC["MQRC_PUT_INHIBITED"])
        length = m.length + extra
        if length > self.maxmsgl:
            return self._failed(m, actor, q.name, RC["MQRC_MSG_TOO_BIG_FOR_Q_MGR"])
        if length > q.maxmsgl:
            return self._failed(m, actor, q.name, RC["MQRC_MSG_TOO_BIG_FOR_Q"])
        d = defs or q
        if md.get("Persistence", 2) == 2:  # MQPER_PERSISTENCE_AS_Q_DEF
            md["Persistence"] = 1 if d.defpsist == "YES" else 0
        if md.get("Priority", -1) == -1:  # MQPRI_PRIORITY_AS_Q_DEF
            md["Priority"] = d.defprty
        if md["Persistence"] == 1 and q.deftype == "TEMPDYN":
            return self._failed(m, actor, q.name, RC["MQRC_PERSISTENT_NOT_ALLOWED"])
        if q.depth >= q.maxdepth:
            return self._failed(m, actor, q.name, RC["MQRC_Q_FULL"])
        if m.deadline is None:
            exp = int(md.get("Expiry", -1))
            if exp == 0 or exp < -1:  # MQMD "Expiry (MQLONG)", note 1: only the value given
                return self._failed(m, actor, q.name, RC["MQRC_EXPIRY_ERROR"])
            if exp > 0:
                m.deadline = self.sim.now + 10 * exp
        # a re-put keeps its deadline (note 7), even one that has passed while the message
        # was held: the putter's MQMD carries the positive Expiry its MQGET returned, so the
        # put succeeds and the message expires where it now is (discarded by a get, note 2)
        md["BackoutCount"] = 0
        if context == "default":
            date, time = self.sim.put_date_time()
            md.update(PutApplType=actor.appltype, PutApplName=actor.applname[:28],
                      PutDate=date, PutTime=time, UserIdentifier=(user or actor.user)[:12],
                      ApplIdentityData="", ApplOriginData="")
        if not md.get("MsgId") or md["MsgId"] == NO_ID:
            md["MsgId"] = self.new_msgid()
        name, details = event or ("put", {})
        if syncpoint:
            unit = self.unit_of_work(actor, begin=True)
            self.log(m, actor, name, queue=q.name, syncpoint=True, **details)
            q._add(m, committed=False)
            unit.puts.append((q, m))
            self._trigger_on_put(q, m, unit)
            return OK
        self.log(m, actor, name, queue=q.name, **details)
        q._add(m)
        self._trigger_on_put(q, m)  # application and transmission queues alike (items 5-6)
        return OK

    # -- get ---------------------------------------------------------------------------------
    def get(self, q: LocalQueue, *, actor: Actor, syncpoint: bool = True,
            mark_skip_backout: bool = False,
            rrs_stored_procedure: bool = False) -> tuple[int, SimMessage | None]:
        """MQGET of the next message (no match options); returns ``(reason, message)``.

        Expired messages met on the way are discarded (with their expiration
        reports). Under syncpoint the message is locked until :meth:`commit`
        or :meth:`backout` (or :meth:`commit_uow`, :meth:`backout_uow`) and
        belongs to the actor's :meth:`unit_of_work`.

        IBM MQ for z/OS "Skipping backout" (seed 002) for
        ``mark_skip_backout`` (MQGMO_MARK_SKIP_BACKOUT): z/OS only; a second
        marked get in one unit of work fails with 2062
        ``MQRC_SECOND_MARK_NOT_ALLOWED`` ("2062 (080E) (RC2062)"); from a Db2
        stored procedure in a unit of work controlled by RRS it fails with
        2274 ``MQRC_OPTION_ENVIRONMENT_ERROR`` ("2274 (08E2) (RC2274)"). The
        mark has effect only within a unit of work (MQGMO_SYNCPOINT).

        Parameters
        ----------
        q : LocalQueue
        actor : Actor
        syncpoint : bool
            MQGMO_SYNCPOINT (else MQGMO_NO_SYNCPOINT: the message is removed).
        mark_skip_backout : bool
            MQGMO_MARK_SKIP_BACKOUT.
        rrs_stored_procedure : bool
            The caller is a Db2 stored procedure whose units of work RRS controls.

        Returns
        -------
        (int, SimMessage or None)
            Reason 0, 2016 (GET_INHIBITED), 2033 (NO_MSG_AVAILABLE), 2085
            (the queue was deleted), 2062 or 2274 (above); the message or None.

        Raises
        ------
        SimulationError
            ``mark_skip_backout`` on a queue manager that is not on z/OS.
        """
        unit = None
        if mark_skip_backout:
            if self.platform != "zos":
                raise SimulationError(f"{self.name}: MQGMO_MARK_SKIP_BACKOUT is supported only "
                                      "on z/OS (IBM MQ for z/OS \"Skipping backout\")")
            if rrs_stored_procedure:
                return RC["MQRC_OPTION_ENVIRONMENT_ERROR"], None
            unit = self.units.get(actor.name)
            if syncpoint and unit is not None and unit.marked is not None:
                return RC["MQRC_SECOND_MARK_NOT_ALLOWED"], None
        if q.deleted:
            return RC["MQRC_UNKNOWN_OBJECT_NAME"], None
        if q.get == "DISABLED":
            return RC["MQRC_GET_INHIBITED"], None
        self._readable(q)
        found = q.store.first(self, q, actor)
        if found is not None:
            if syncpoint:
                q._lock(found, actor)
                unit = self.unit_of_work(actor, begin=True)
                unit.gets.append((q, found))
                if mark_skip_backout:
                    unit.marked = found
                    self.log(found, actor, "get", queue=q.name,
                             backout_count=found.md["BackoutCount"], syncpoint=True,
                             skip_backout=True)
                    return OK, found
            else:
                q._remove(found)
            self.log(found, actor, "get", queue=q.name, backout_count=found.md["BackoutCount"],
                     syncpoint=syncpoint)
        return (OK, found) if found is not None else (RC["MQRC_NO_MSG_AVAILABLE"], None)

    def unit_of_work(self, actor: Actor, begin: bool = False) -> UnitOfWork | None:
        """The actor's unit of work in progress.

        A unit of work begins with the first get under syncpoint after the
        last MQCMIT or MQBACK (IBM MQ for z/OS "Skipping backout", step 2).

        Parameters
        ----------
        actor : Actor
        begin : bool
            Begin one when the actor has none.

        Returns
        -------
        UnitOfWork or None
            None when the actor has none and ``begin`` is false.
        """
        unit = self.units.get(actor.name)
        if unit is None and begin:
            number = self._uow_numbers.get(actor.name, 0) + 1
            self._uow_numbers[actor.name] = number
            unit = self.units[actor.name] = UnitOfWork(number)
        return unit

    def _leave_unit(self, m: SimMessage, actor: Actor) -> None:
        """Take ``m`` out of the actor's unit of work (a per-message commit or backout)."""
        unit = self.units.get(actor.name)
        if unit is None:
            return
        for i, (_, got) in enumerate(unit.gets):
            if got is m:
                del unit.gets[i]
                break
        if unit.marked is m:
            unit.marked = None
        if unit.empty():
            del self.units[actor.name]

    def commit_uow(self, actor: Actor) -> int:
        """MQCMIT: every message got in the actor's unit of work leaves its queue.

        Step 9 of the figure of IBM MQ for z/OS "Skipping backout" when the
        unit of work is the second one (UOW2) holding a skipped get. The
        messages put in it become available, and the trigger messages its
        puts caused are put on their initiation queues (IBM MQ "Conditions
        for a trigger event", the paragraph after item 10: the trigger
        message "does not become available ... until the unit of work
        completes").

        Parameters
        ----------
        actor : Actor

        Returns
        -------
        int
            The number of messages removed (0 when no unit of work is in progress).
        """
        unit = self.units.pop(actor.name, None)
        if unit is None:
            return 0
        for q, m in unit.gets:
            q._remove(m)
        for q, m in unit.puts:
            if not m.removed and not q.deleted:
                self.log(m, actor, "committed", queue=q.name)
                q._made_available(m)
        for tmsg, initq, _ in unit.triggers:
            self._deliver_trigger(tmsg, initq)
        return len(unit.gets)

    def backout_uow(self, actor: Actor, *, requested: bool = True) -> UnitOfWork | None:
        """MQBACK of the actor's unit of work, or its backout for another reason.

        Every message got in the unit of work is reinstated with
        BackoutCount + 1 (MQMD "BackoutCount (MQLONG)"), except, when the
        application requested the backout (``requested``), the one marked
        with MQGMO_MARK_SKIP_BACKOUT: it "skips backout and becomes part of a
        new unit of work" (UOW2), still locked, its BackoutCount unchanged
        (IBM MQ for z/OS "Skipping backout", steps 5-7 of its figure). A unit
        of work backed out for any other reason (``requested=False``: the
        application ended abnormally, the queue manager backed it out) backs
        the marked message out like the others (the same section, first note).
        Backing out UOW2 reinstates the skipped message (step 10).

        Messages put in the unit of work are deleted (IBM MQ "MQBACK - Back
        out changes"). The trigger messages its puts caused are made available
        all the same when the queue's TRIGTYPE was FIRST or DEPTH at the
        trigger event, and discarded for EVERY (IBM MQ "Conditions for a
        trigger event", the paragraph after item 10: available when the unit
        of work completes, "whether the unit of work is committed or, for
        trigger type MQTT_FIRST or MQTT_DEPTH, backed out"; "Designing an
        application that uses triggered queues").

        Parameters
        ----------
        actor : Actor
        requested : bool
            True for MQBACK by the application; False for a backout by the
            queue manager (abnormal end).

        Returns
        -------
        UnitOfWork or None
            The new unit of work holding the marked message, or None.
        """
        unit = self.units.pop(actor.name, None)
        if unit is None:
            return None
        for q, m in unit.puts:
            self.log(m, actor, "put_backed_out", queue=q.name)
            q._put_backed_out(m)
        for tmsg, initq, trigtype in unit.triggers:
            if trigtype in ("FIRST", "DEPTH"):
                self._deliver_trigger(tmsg, initq)
            else:  # EVERY: the trigger message goes with the put it was made for
                self.log(tmsg, self.actor, "trigger_backed_out", queue=initq.name)
                self.sim.stats["trigger_messages_backed_out"] += 1
        skipped = unit.marked if requested else None
        for q, m in unit.gets:
            if m is skipped:
                continue
            self._back_out(q, m, actor, None if requested else "not_requested")
        if skipped is None:
            return None
        new = self.unit_of_work(actor, begin=True)
        new.gets = [(q, m) for q, m in unit.gets if m is skipped]
        self.log(skipped, actor, "backout_skipped", queue=new.gets[0][0].name,
                 backout_count=skipped.md["BackoutCount"], uow=new.number)
        return new

    def abnormal_end(self, actor: Actor) -> None:
        """The application ends abnormally: the queue manager backs out its unit of work.

        Not an application-requested backout, so a message marked with
        MQGMO_MARK_SKIP_BACKOUT is reinstated too (IBM MQ for z/OS "Skipping
        backout", first note); see :meth:`backout_uow`.

        Parameters
        ----------
        actor : Actor
        """
        self.backout_uow(actor, requested=False)

    def browse(self, q: LocalQueue, *, actor: Actor) -> list[SimMessage]:
        """Browse the whole queue in delivery order (expired messages met are discarded)."""
        self._readable(q)
        out = []
        for m in q.store.ordered():
            if m.locked is not None:
                continue
            if self.expired(m):
                self._discard_expired(q, m, actor)
                continue
            out.append(m)
        q.store.compact()
        return out

    def _readable(self, q: LocalQueue) -> None:
        if q.store.spooled:
            raise SimulationError(f"{self.name}: queue {q.name} is spooled (spool=True) "
                                  "and cannot be read during the run")

    def get_under_cursor(self, q: LocalQueue, m: SimMessage, *, actor: Actor) -> bool:
        """Destructive get under syncpoint of a browsed message (MQGMO_MSG_UNDER_CURSOR)."""
        if q.deleted or m.removed or m.locked is not None:
            return False
        if self.expired(m):
            self._discard_expired(q, m, actor)
            return False
        q._lock(m, actor)
        self.unit_of_work(actor, begin=True).gets.append((q, m))
        self.log(m, actor, "get", queue=q.name, backout_count=m.md["BackoutCount"], syncpoint=True)
        return True

    def commit(self, q: LocalQueue, m: SimMessage, actor: Actor) -> None:
        """MQCMIT of a get: the message leaves the queue."""
        q._remove(m)
        if self.units:
            self._leave_unit(m, actor)

    def backout(self, q: LocalQueue, m: SimMessage, actor: Actor) -> None:
        """MQBACK of a get: the message is reinstated where it was, BackoutCount + 1."""
        if self.units:
            self._leave_unit(m, actor)
        self._back_out(q, m, actor, None)

    def _back_out(self, q: LocalQueue, m: SimMessage, actor: Actor, cause: str | None) -> None:
        """Reinstate ``m`` with BackoutCount + 1; on z/OS the count stops at 255 (MQMD
        "BackoutCount (MQLONG)": "the value returned is never greater than 255")."""
        if q.deleted:
            return
        count = int(m.md["BackoutCount"]) + 1
        m.md["BackoutCount"] = min(count, 255) if self.platform == "zos" else count
        if cause is None:
            self.log(m, actor, "backout", queue=q.name, backout_count=m.md["BackoutCount"])
        else:
            self.log(m, actor, "backout", queue=q.name, backout_count=m.md["BackoutCount"],
                     cause=cause)
        q._unlock(m)

    def _discard_expired(self, q: LocalQueue, m: SimMessage, actor: Actor) -> None:
        q._remove(m)
        self.sim.stats["expired_discarded"] += 1
        self.sim.stats[f"expired_discarded:{self.name}:{q.name}"] += 1
        self.log(m, actor, "expired_discarded", queue=q.name)
        if int(m.md.get("Report", 0)) & EXPIRATION_REPORT_BITS:
            self.report(m, MQFB["MQFB_EXPIRATION"], int(m.md["Report"]) & EXPIRATION_REPORT_BITS)

    # -- reports -----------------------------------------------------------------------------
    def report(self, m: SimMessage, feedback: int, option: int) -> int:
        """Generate a report message for ``m`` (IBM MQ, MQMD "Report (MQLONG)").

        ``option`` is the report family bits the message asked for (for
        expiration: ``MQRO_EXPIRATION``, ``_WITH_DATA`` (first 100 bytes) or
        ``_WITH_FULL_DATA``). The report goes to ReplyToQ/ReplyToQMgr with
        MsgType MQMT_REPORT and Feedback ``feedback``; MsgId new unless
        MQRO_PASS_MSG_ID; CorrelId the original MsgId unless
        MQRO_PASS_CORREL_ID (then the original CorrelId); Priority and
        Persistence of the original; Expiry unlimited; origin context the
        queue manager's; the original's UserIdentifier. When it cannot be put
        it is dead-lettered; when that fails it is discarded.
        Returns the reason of the put (0 when delivered or dead-lettered).
        """
        md0 = m.md
        reply_q = (md0.get("ReplyToQ") or "").strip()
        if not reply_q:
            self.sim.stats["reports_without_reply_queue"] += 1
            return OK
        report = int(md0.get("Report", 0))
        with_data = option & ~MQRO["MQRO_EXPIRATION"] & EXPIRATION_REPORT_BITS
        data = pack_data(md0, m.headers, m.body)
        if option == MQRO["MQRO_EXPIRATION_WITH_DATA"] and feedback == MQFB["MQFB_EXPIRATION"]:
            data = data[:100]
        elif not with_data:
            data = b""
        date, time = self.sim.put_date_time()
        md = {
            "Version": 2, "Report": 0, "MsgType": 4, "Expiry": -1, "Feedback": feedback,
            "Encoding": md0["Encoding"] if data else self.encoding,
            "CodedCharSetId": md0["CodedCharSetId"] if data else self.ccsid,
            "Format": md0["Format"] if data else "", "Priority": md0["Priority"],
            "Persistence": md0["Persistence"],
            "MsgId": md0["MsgId"] if report & MQRO["MQRO_PASS_MSG_ID"] else NO_ID,
            "CorrelId": md0["CorrelId"] if report & MQRO["MQRO_PASS_CORREL_ID"] else md0["MsgId"],
            "ReplyToQ": "", "ReplyToQMgr": self.name,
            "UserIdentifier": md0.get("UserIdentifier", ""),
            "AccountingToken": md0.get("AccountingToken", b"\0" * 32),
            "ApplIdentityData": "", "PutApplType": MQAT_QMGR, "PutApplName": self.name[:28],
            "PutDate": date, "PutTime": time, "ApplOriginData": "",
        }
        rep = SimMessage(md, (), data, None, [dict(e) for e in m.events], None, False)
        self.log(rep, self.actor, "report", feedback=feedback,
                 for_msgid=bytes(md0["MsgId"]).hex().upper())
        self.sim.stats["reports"] += 1
        dest_qm = (md0.get("ReplyToQMgr") or "").strip() or self.name
        rc = self.put(reply_q, rep, actor=self.actor, qmgr=dest_qm, context="set")
        if rc != OK:
            rc2 = self.dead_letter(rep, rc, reply_q, dest_qm, actor=self.actor)
            if rc2 != OK:
                self.sim.stats["reports_discarded"] += 1
            return rc
        return OK

    # -- dead-lettering ------------------------------------------------------------------------
    def dead_letter(self, m: SimMessage, reason: int, destq: str, destqm: str, *, actor: Actor,
                    encoding: int | None = None, ccsid: int | None = None) -> int:
        """Put ``m`` on this queue manager's DEADQ with an MQDLH; returns the reason of that put.

        ``m`` is the message as it was to be put (its MQMD and data); the new
        message keeps its history, pattern and expiry deadline. ``encoding``
        and ``ccsid`` are those of the MQDLH (default: the actor's, else the
        queue manager's). Reason 2085 when there is no DEADQ.
        """
        enc = int(encoding or actor.encoding or self.encoding)
        ccs = int(ccsid or actor.ccsid or self.ccsid)
        date, time = self.sim.put_date_time()
        md0 = m.md
        dlh = {"Version": 1, "Reason": int(reason), "DestQName": destq, "DestQMgrName": destqm,
               "Encoding": int(md0["Encoding"]), "CodedCharSetId": int(md0["CodedCharSetId"]),
               "Format": md0["Format"], "PutApplType": actor.appltype,
               "PutApplName": actor.applname[:28], "PutDate": date, "PutTime": time}
        md = dict(md0)
        md.update(Format=_FMT_DEAD, Encoding=enc, CodedCharSetId=ccs)
        dm = SimMessage(md, (("MQDLH", dlh),) + m.headers, m.body, m.deadline, m.events,
                        m.patterns, m.poison)
        if not dm.patterns and destqm == self.name and destq in self.deleted_tempdyn:
            dm.add_pattern("orphaned_reply")
        deadq = (self.deadq or "").strip()
        if not deadq or not isinstance(self.objects.get(deadq), LocalQueue):
            self.log(m, actor, "dead_letter_failed", reason=int(reason), destq=destq,
                     dlq_reason=RC["MQRC_UNKNOWN_OBJECT_NAME"])
            return RC["MQRC_UNKNOWN_OBJECT_NAME"]
        rc = self.put(deadq, dm, actor=actor, context="set",
                      event=("dead_letter", {"reason": int(reason), "destq": destq,
                                             "destqm": destqm}))
        if rc == OK:
            self.sim.stats["dead_letters"] += 1
        else:
            self.log(m, actor, "dead_letter_failed", reason=int(reason), destq=destq, dlq_reason=rc)
        return rc

    # -- opening for input ----------------------------------------------------------------
    def open_input(self, q: LocalQueue, actor: Actor) -> None:
        """MQOPEN for input: OpenInputCount + 1.

        A trigger monitor opening an initiation queue nobody else has open
        triggers every application queue it serves that has enough messages
        ("Conditions for a trigger event", item 13: a trigger monitor opens the
        initiation queue for input).
        """
        self._readable(q)
        q.ipprocs += 1
        if q.ipprocs == 1:
            for aq in self._served_by(q):
                self._trigger_on_event(aq, "initq_open")

    def close_input(self, q: LocalQueue, actor: Actor, *, drained: bool = True) -> None:
        """MQCLOSE of an input handle; the last close may trigger ("Conditions ...", item 12).

        ``drained`` says whether the closer last found the queue empty; a
        trigger message made because a server left messages behind is labelled
        ``trigger_storm`` (the closed loop of item 12, note a).
        """
        q.ipprocs -= 1
        if q.ipprocs == 0:
            self._trigger_on_event(q, "close", storm=not drained)

    # -- triggering ----------------------------------------------------------------------------
    def _served_by(self, initq: LocalQueue) -> list[LocalQueue]:
        return [q for q in self.objects.values()
                if isinstance(q, LocalQueue) and q.initq == initq.name and q is not initq]

    # the ``world`` of dlqlens.mq.trigger_conditions: every condition is decided there
    def process_defined(self, name: str) -> bool:
        """Condition 6: a process definition ``name`` exists."""
        return name in self.processes

    def initiation_queue(self, name: str) -> LocalQueue | None:
        """The local queue ``name`` (condition 7), or None."""
        q = self.objects.get(name)
        return q if isinstance(q, LocalQueue) else None

    def _trigger_on_put(self, q: LocalQueue, m: SimMessage,
                        unit: UnitOfWork | None = None) -> None:
        """Items 1-11 and 14 of "Conditions for a trigger event" on a put
        (:func:`dlqlens.mq.trigger_conditions.on_put`); a put in ``unit`` makes
        its trigger message now and keeps it in the unit of work."""
        last = q.last_trigger
        d = trigger_conditions.on_put(q, self, counted=m.counted, prev_count=q.trig_count - 1,
                              now_ms=self.sim.now * 10,  # ticks are 10 ms
                              last_trigger_ms=None if last is None else last * 10,
                              trigint_ms=self.trigint)
        if d.trigger:
            self._make_trigger(q, cause=d.cause, storm=d.cause == "trigint", unit=unit)

    def _trigger_on_event(self, q: LocalQueue, cause: str, storm: bool = False) -> None:
        """Items 12 and 13 of "Conditions for a trigger event"
        (:func:`dlqlens.mq.trigger_conditions.on_event`)."""
        if q.deleted:
            return
        if trigger_conditions.on_event(q, self, cause).trigger:
            self._make_trigger(q, cause=cause, storm=storm)

    def _make_trigger(self, q: LocalQueue, *, cause: str, storm: bool,
                      unit: UnitOfWork | None = None) -> None:
        """Put a trigger message for ``q`` on its initiation queue ("MQTM - Trigger message").

        With ``unit`` (a put in a unit of work) it is made now, from the
        attributes now in force, and kept in the unit of work until it is
        resolved ("Properties of trigger messages": later changes to the
        trigger attributes have no effect on it).

        The MQTM comes from the queue and its process definition; a
        transmission queue with a blank PROCESS ("Conditions for a trigger
        event", item 6) makes one with ProcessName, ApplId, EnvData and
        UserData blank and ApplType MQAT_UNKNOWN, its TriggerData usually
        naming the channel to start ("Triggering channels").
        """
        name = (q.process or "").strip()
        initq = self.objects[q.initq.strip()]
        if name:
            proc = self.processes[name]
            appl = {"ProcessName": proc.name, "ApplType": proc.appltype, "ApplId": proc.applicid,
                    "EnvData": proc.envrdata, "UserData": proc.userdata}
        else:  # a transmission queue: condition 6 let it through without a process
            appl = {"ProcessName": "", "ApplType": MQAT_UNKNOWN, "ApplId": "", "EnvData": "",
                    "UserData": ""}
        tm = {"Version": 1, "QName": q.name, "TriggerData": q.trigdata, **appl}
        md = {"Version": 2, "Report": 0, "MsgType": 8, "Expiry": -1, "Feedback": 0,
              "Encoding": self.encoding, "CodedCharSetId": self.ccsid, "Format": _FMT_TRIGGER,
              "Priority": initq.defprty, "Persistence": 0, "MsgId": NO_ID, "CorrelId": NO_ID,
              "ReplyToQ": "", "ReplyToQMgr": "", "AccountingToken": b"\0" * 32}
        tmsg = SimMessage(md, (("MQTM", tm),), b"", None, [], ("trigger_storm",) if storm else ())
        self.log(tmsg, self.actor, "trigger", queue=q.name, trigtype=q.trigtype, cause=cause,
                 depth=q.depth)
        q.last_trigger = self.sim.now
        self.sim.stats["trigger_messages"] += 1
        self.sim.stats[f"trigger_messages:{self.name}:{q.name}"] += 1
        trigtype = q.trigtype
        for k, v in trigger_conditions.after_trigger(q).items():  # DEPTH: TRIGGER off
            setattr(q, k, v)
        if unit is not None:
            unit.triggers.append((tmsg, initq, trigtype))
            return
        self._deliver_trigger(tmsg, initq)

    def _deliver_trigger(self, tmsg: SimMessage, initq: LocalQueue) -> None:
        """Put a trigger message on its initiation queue; the DLQ when that fails
        ("When triggering does not work"), else it is discarded."""
        rc = self.put(initq.name, tmsg, actor=self.actor, context="default")
        if rc == OK:
            return
        if self._trigger_dlq_guard:
            # a trigger message caused by putting a trigger message on the DLQ
            # is discarded if it would itself go to the DLQ
            self.sim.stats["trigger_messages_discarded"] += 1
            return
        self._trigger_dlq_guard = True
        try:
            if tmsg.md.get("MsgId", NO_ID) == NO_ID:
                tmsg.md["MsgId"] = self.new_msgid()
            date, time = self.sim.put_date_time()
            tmsg.md.update(PutApplType=MQAT_QMGR, PutApplName=self.name[:28], PutDate=date,
                           PutTime=time, UserIdentifier=self.user[:12])
            if self.dead_letter(tmsg, rc, initq.name, self.name, actor=self.actor) != OK:
                self.sim.stats["trigger_messages_discarded"] += 1
        finally:
            self._trigger_dlq_guard = False
