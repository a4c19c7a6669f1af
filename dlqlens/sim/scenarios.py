"""Named scenarios: a few lines of configuration each, scaled by ``size``.

``size`` is the number of application messages the scenario's main workload
puts (requests, for ``orphaned_replies``); every window and depth that has to
grow with it is derived from it, so that a scenario keeps its shape from tens
to millions of messages. Queues nothing reads during the run (dead-letter and
backout queues without a handler) are spooled to disk.

The queue manager whose queues are captured ("home") takes the layout asked
for (``encoding``/``ccsid``: Linux x86-64 546/1208, AIX 273/819, z/OS 785/500);
the queue managers it talks to keep their own platforms, so the data after an
MQDLH is often in another encoding or character set than the MQDLH itself, as
on a real hub.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from dlqlens.mq.constants import MQAT, MQRO, OBJECT_NAME
from dlqlens.sim.apps import (
    BrokerFlow,
    Consumer,
    DlqHandler,
    JmsConsumer,
    Producer,
    ReplyServer,
    Requester,
    ServerProgram,
    TriggerMonitor,
)
from dlqlens.sim.channel import Channel
from dlqlens.sim.engine import Simulation, SimulationError
from dlqlens.sim.qmgr import (
    ENCODING_PLATFORM,
    MQAT_JAVA,
    MQAT_UNIX,
    PLATFORMS,
    Actor,
    QueueManager,
)

DLQ = "SYSTEM.DEAD.LETTER.QUEUE"
MQAT_CICS = MQAT["MQAT_CICS"]


@dataclass(frozen=True)
class Layout:
    """Platform, encoding, CCSID and (optionally) name of the captured ("home") queue manager.

    ``qmgr`` None keeps the name the scenario's story gives it (QM.HUB, QM.APP,
    QM.FRONT).
    """

    platform: str
    encoding: int
    ccsid: int
    qmgr: str | None = None

    @classmethod
    def of(cls, encoding: int = 546, ccsid: int | None = None,
           qmgr: str | None = None) -> "Layout":
        """The layout of MQENC_NATIVE ``encoding`` (546, 273 or 785), ``ccsid`` and name ``qmgr``.

        Raises
        ------
        SimulationError
            Another encoding, or a queue manager name MQ would refuse (1-48 of
            ``A-Z a-z 0-9 . / _ %``).
        """
        if encoding not in ENCODING_PLATFORM:
            raise SimulationError(f"encoding {encoding}: expected 546 (Linux x86-64), "
                                  "273 (AIX) or 785 (z/OS)")
        if qmgr is not None and not OBJECT_NAME.fullmatch(qmgr):
            raise SimulationError(f"queue manager name {qmgr!r}: expected 1 to 48 of "
                                  "A-Z a-z 0-9 . / _ %")
        platform = ENCODING_PLATFORM[encoding]
        return cls(platform, encoding, int(ccsid or PLATFORMS[platform]["ccsid"]), qmgr)


@dataclass
class Plan:
    """What a built scenario runs and captures.

    Attributes
    ----------
    duration : float
        Seconds of simulated time; the captures are taken at the end.
    captures : list of (qmgr, queue)
        The queues captured, in this order.
    """

    duration: float
    captures: list = field(default_factory=list)


@dataclass(frozen=True)
class Scenario:
    """A named scenario: ``build(sim, size, layout)`` defines it all and returns a :class:`Plan`."""

    name: str
    summary: str
    build: Callable[[Simulation, int, Layout], Plan]


#: Every scenario, by name, in the order ``dlqlens simulate --list`` prints them.
SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str):
    """Register a scenario builder; its docstring's first line is its summary."""
    def deco(fn):
        SCENARIOS[name] = Scenario(name, (fn.__doc__ or "").strip().splitlines()[0], fn)
        return fn
    return deco


# ---------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------

def home_qmgr(sim: Simulation, name: str, layout: Layout, *, dlq_read: bool = False,
              **kw) -> QueueManager:
    """The captured queue manager, with its dead-letter queue (spooled unless ``dlq_read``).

    It is called ``name`` unless the layout names it (``--qmgr``).
    """
    qm = QueueManager(sim, layout.qmgr or name, platform=layout.platform,
                      encoding=layout.encoding,
                      ccsid=layout.ccsid, deadq=DLQ, **kw)
    qm.define_qlocal(DLQ, maxdepth=999999999, maxmsgl=4194304, spool=not dlq_read,
                     descr="dead-letter queue")
    return qm


def remote_qmgr(sim: Simulation, name: str, platform: str) -> QueueManager:
    """A queue manager the home one talks to (its own DLQ spooled, unused).

    Raises
    ------
    SimulationError
        When the home queue manager was given the same name (``--qmgr``).
    """
    if name in sim.qmgrs:
        raise SimulationError(f"queue manager name {name!r} is taken by another queue manager "
                              "of this scenario")
    qm = QueueManager(sim, name, platform=platform, deadq=DLQ)
    qm.define_qlocal(DLQ, maxdepth=999999999, spool=True)
    return qm


def link(sim: Simulation, a: QueueManager, b: QueueManager, **channel) -> Channel:
    """A transmission queue named ``b`` on ``a``, the route, and a running channel ``A.TO.B``."""
    a.define_qlocal(b.name, usage="XMITQ", maxdepth=999999999)
    a.route(b.name, b.name)
    ch = Channel(sim, f"{a.name}.TO.{b.name}"[:20], a, b, b.name, **channel)
    ch.start()
    return ch


def unix_app(name: str, user: str = "appuser", *, encoding: int | None = None,
             ccsid: int | None = None, appltype: int = MQAT_UNIX) -> Actor:
    return Actor(name, appltype, name, user, encoding, ccsid)


def is_dead_letter(reason: int, destq: str):
    """A label predicate: dead letters with this Reason for this destination."""
    return lambda m, dlh: dlh is not None and dlh["Reason"] == reason and dlh["DestQName"] == destq


# ---------------------------------------------------------------------------
# the scenarios
# ---------------------------------------------------------------------------

@scenario("queue_full_burst")
def queue_full_burst(sim: Simulation, size: int, home: Layout) -> Plan:
    """A consumer outage fills ORDERS.IN; the receiving channel dead-letters the rest (2053).

    QM.WEB (Linux) sends ``size`` orders at 10/s over a channel with
    MRRTY(1) MRTMR(20) to ORDERS.IN on QM.HUB (MAXDEPTH size/20). The
    consumer is down from 20% to 60% of the run: once the queue is full every
    arriving order is dead-lettered by ``amqrmppa`` with 2053 (pattern
    ``reason_burst``). A misconfigured QREMOTE on QM.WEB sends about 1% of
    another application's messages to a queue QM.HUB does not have (2085,
    pattern ``unknown_destination``). Captured shortly after the consumer comes back (a second,
    or the time it takes to drain half the backlog when that is shorter): the
    DLQ and ORDERS.IN (still holding the backlog).
    """
    hub = home_qmgr(sim, "QM.HUB", home)
    web = remote_qmgr(sim, "QM.WEB", "linux")
    rate = 10.0
    window = size / rate
    link(sim, web, hub, mrrty=1, mrtmr=20, latency=0.01)
    maxdepth = max(10, size // 20)
    hub.define_qlocal("ORDERS.IN", maxdepth=maxdepth, defpsist="YES")
    hub.define_qlocal("ORDERS.ARCHIVE")
    web.define_qremote("ORDERS.IN", "ORDERS.IN", hub.name)
    web.define_qremote("ORDERS.ARCHIVE", "ORDERS.ARCHVE", hub.name)  # the typo
    Producer(sim, web, unix_app("web-gateway", "webapp", encoding=546, ccsid=1208), "ORDERS.IN",
             count=size, rate=rate, persistent=0.8).start()
    extra = max(1, size // 100)
    Producer(sim, web, unix_app("order-archiver", "archiver", encoding=546, ccsid=819),
             "ORDERS.ARCHIVE", count=extra, rate=extra / window).start()
    process_time = 0.03
    Consumer(sim, hub, unix_app("order-svc", "ordersvc"), "ORDERS.IN", process_time=process_time,
             outages=[(0.2 * window, 0.6 * window)]).start()
    Consumer(sim, hub, unix_app("archive-svc", "archiver"), "ORDERS.ARCHIVE").start()
    sim.label("reason_burst", is_dead_letter(2053, "ORDERS.IN"))
    sim.label("unknown_destination", is_dead_letter(2085, "ORDERS.ARCHVE"))
    drain_half = 0.5 * maxdepth * process_time
    return Plan(0.6 * window + min(1.0, drain_half), [(hub.name, DLQ), (hub.name, "ORDERS.IN")])


@scenario("deleted_queue_after_deploy")
def deleted_queue_after_deploy(sim: Simulation, size: int, home: Layout) -> Plan:
    """A deployment deletes INVOICES.IN while QM.BATCH still sends to it (2085).

    QM.BATCH (AIX, big-endian) sends ``size`` invoices at 10/s to INVOICES.IN
    on QM.HUB. At 30% of the run a deployment script deletes INVOICES.IN
    (the messages on it are lost) and defines INVOICES.V2.IN; every invoice
    arriving afterwards is dead-lettered with 2085 (``reason_burst``, and
    ``unknown_destination``: the queue no longer exists). An
    audit feed occasionally sends a 40 KB record to AUDIT.LOG, whose MAXMSGL
    is 32 KB (2030, pattern null). Captured: the DLQ at the end.
    """
    hub = home_qmgr(sim, "QM.HUB", home)
    batch = remote_qmgr(sim, "QM.BATCH", "aix")
    rate = 10.0
    window = size / rate
    link(sim, batch, hub, latency=0.01)
    hub.define_qlocal("INVOICES.IN", defpsist="YES", maxdepth=999999)
    hub.define_qlocal("AUDIT.LOG", maxmsgl=32768)
    batch.define_qremote("INVOICES.IN", "INVOICES.IN", hub.name)
    batch.define_qremote("AUDIT.LOG", "AUDIT.LOG", hub.name)
    Producer(sim, batch, unix_app("BILLRUN", "batch01", encoding=273, ccsid=819), "INVOICES.IN",
             count=size, rate=rate, persistent=1.0).start()
    extra = max(2, size // 50)
    Producer(sim, batch, unix_app("AUDITFEED", "batch01", encoding=273, ccsid=819), "AUDIT.LOG",
             count=extra, rate=extra / window, big=(0.15, 40000)).start()
    Consumer(sim, hub, unix_app("invoice-loader", "invsvc"), "INVOICES.IN").start()
    Consumer(sim, hub, unix_app("audit-writer", "audit"), "AUDIT.LOG").start()

    def deploy():
        hub.delete_queue("INVOICES.IN")
        hub.define_qlocal("INVOICES.V2.IN", defpsist="YES")

    sim.at(0.3 * window, deploy)
    sim.label("reason_burst", is_dead_letter(2085, "INVOICES.IN"))
    sim.label("unknown_destination", is_dead_letter(2085, "INVOICES.IN"))
    return Plan(window + 10.0, [(hub.name, DLQ)])


@scenario("permissions_change")
def permissions_change(sim: Simulation, size: int, home: Layout) -> Plan:
    """A security change removes svcpay's put authority on LEDGER.POST (2035).

    The channel from QM.PARTNER has PUTAUT(CTX): the receiving agent puts
    with each message's UserIdentifier. ``size`` postings at 10/s come from
    users appuser, svcpay and batch01. From 30% to 80% of the run svcpay may
    not put to LEDGER.POST, and its postings are dead-lettered with 2035
    (``reason_burst``). About 1% of a reporting application's messages go to
    a queue that does not exist (2085, ``unknown_destination``). Captured:
    the DLQ.
    """
    hub = home_qmgr(sim, "QM.HUB", home)
    partner = remote_qmgr(sim, "QM.PARTNER", "linux")
    rate = 10.0
    window = size / rate
    link(sim, partner, hub, putaut="CTX", latency=0.01)
    everyone = {"appuser", "svcpay", "batch01", "reporter", "mqm"}
    hub.define_qlocal("LEDGER.POST", defpsist="YES", authorized=everyone)
    hub.define_qlocal("LEDGER.REPORTS", authorized=everyone)
    partner.define_qremote("LEDGER.POST", "LEDGER.POST", hub.name)
    partner.define_qremote("LEDGER.REPORTS", "LEDGER.REPORT", hub.name)  # the typo
    Producer(sim, partner, unix_app("ledger-client", "appuser", encoding=546, ccsid=1208),
             "LEDGER.POST", count=size, rate=rate, persistent=1.0,
             users=["appuser", "svcpay", "batch01"]).start()
    extra = max(1, size // 100)
    Producer(sim, partner, unix_app("ledger-report", "reporter", encoding=546, ccsid=1208),
             "LEDGER.REPORTS", count=extra, rate=extra / window).start()
    Consumer(sim, hub, unix_app("ledger-poster", "ledger"), "LEDGER.POST").start()
    sim.at(0.3 * window, lambda: hub.alter("LEDGER.POST", authorized=everyone - {"svcpay"}))
    sim.at(0.8 * window, lambda: hub.alter("LEDGER.POST", authorized=everyone))
    sim.label("reason_burst", is_dead_letter(2035, "LEDGER.POST"))
    sim.label("unknown_destination", is_dead_letter(2085, "LEDGER.REPORT"))
    return Plan(window + 10.0, [(hub.name, DLQ)])


PING_PONG_RULES = """\
* runmqdlq rules for QM.APP: retry what looks transient... and everything for APP.*
INPUTQ(' ') RETRYINT(30) WAIT(YES)
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)
REASON(MQRC_PUT_INHIBITED) ACTION(RETRY) RETRY(5)
DESTQ(APP.*) ACTION(RETRY) RETRY(3)
ACTION(FWD) FWDQ(DEAD.MANUAL) HEADER(YES)
"""


@scenario("poison_ping_pong")
def poison_ping_pong(sim: Simulation, size: int, home: Layout) -> Plan:
    """Poison messages ping-pong between a JMS application and a DLQ handler RETRY rule.

    order-api puts ``size`` orders to APP.IN (BOTHRESH(3), no BOQNAME); a
    bad release makes about sqrt(size) of the last 10% unprocessable. The
    JMS listener backs each out three times, then dead-letters it with 2362;
    runmqdlq's catch-all ``DESTQ(APP.*) ACTION(RETRY)`` rule puts it back on
    APP.IN with BackoutCount 0, and round it goes (pattern ``backout_loop``).
    The handler (0.1 s a message) is the slower side, so most of them are
    caught waiting on the DLQ. For contrast, a broker flow reading
    PAYMENTS.IN (size/2 payments, BOTHRESH(2), BOQNAME(PAYMENTS.BOQ)) gets
    about sqrt(size/2) poison messages from the same release and moves each,
    after two backouts, to its backout queue, where they stay
    (``backout_loop``, BackoutCount 0 there); it gets a backed-out message
    again at once, so it keeps up with the good payments at every size.
    Captured: the DLQ, APP.IN, PAYMENTS.IN (a poison payment still cycling
    at the end, BackoutCount rising; usually none) and PAYMENTS.BOQ. The
    capture grows as the poison does, about sqrt(size) + sqrt(size/2)
    messages (``docs/simulator.md``, "How the scenarios scale").
    """
    qm = home_qmgr(sim, "QM.APP", home, dlq_read=True)
    window = 60.0 + size / 100.0
    rate = size / window
    last = max(1, size // 10)  # the bad release: the last 10% of the orders
    how_many = min(last, max(1, round(math.sqrt(size))))
    poison = set(sim.rng.sample(range(size - last + 1, size + 1), how_many))
    qm.define_qlocal("APP.IN", bothresh=3, defpsist="YES", maxdepth=999999999)
    qm.define_qlocal("DEAD.MANUAL", spool=True)
    Producer(sim, qm, unix_app("order-api", "orderapi"), "APP.IN", count=size, rate=rate,
             poison=poison).start()
    JmsConsumer(sim, qm, Actor("order-mdb", MQAT_JAVA, "order-mdb", "ordermdb"), "APP.IN",
                process_time=min(0.02, 0.3 / rate), redelivery_delay=0.01).start()
    DlqHandler(sim, qm, PING_PONG_RULES, per_message=0.1).start()
    payments = max(1, size // 2)
    last = max(1, payments // 10)
    how_many = min(last, max(1, round(math.sqrt(payments))))
    bad = set(sim.rng.sample(range(payments - last + 1, payments + 1), how_many))
    qm.define_qlocal("PAYMENTS.IN", bothresh=2, boqname="PAYMENTS.BOQ", defpsist="YES",
                     maxdepth=999999999)
    qm.define_qlocal("PAYMENTS.BOQ", spool=True)
    Producer(sim, qm, unix_app("payments-api", "payapi"), "PAYMENTS.IN", count=payments,
             rate=payments / window, poison=bad).start()
    # the node gets a backed-out message again at once ("Handling MQInput errors", retry
    # processing step 2); the pause is kept below 0.3 messages' worth of arrivals so that
    # the flow keeps up with the payments at every size (a fixed 0.5 s made a backlog of
    # good payments from about size 10,000 that cleared again by size 1,000,000)
    BrokerFlow(sim, qm, Actor("DataFlowEngine", MQAT_UNIX, "DataFlowEngine", "brkuser"),
               "PAYMENTS.IN", process_time=min(0.02, 0.3 / rate),
               retry_delay=min(0.5, 0.3 / rate)).start()
    return Plan(window + 30.0, [(qm.name, DLQ), (qm.name, "APP.IN"), (qm.name, "PAYMENTS.IN"),
                                (qm.name, "PAYMENTS.BOQ")])


@scenario("trigger_storm")
def trigger_storm(sim: Simulation, size: int, home: Layout) -> Plan:
    """A triggered server that takes one message and ends: close-retrigger storm.

    APP.WORK is TRIGGER TRIGTYPE(FIRST) with INITQ(APP.INITQ); TRIGINT has
    been lowered to 200 ms; 20 messages a second arrive. The worker started
    by the trigger monitor gets one message and closes the queue with
    messages left, so every close makes a new trigger message (IBM,
    "Conditions for a trigger event", item 12) and every put after TRIGINT
    another (item 11).
    The monitor starts workers in the background but at most 2 run at once;
    beyond that the start fails and the trigger message is dead-lettered with
    265 (``trigger_failure``). Re-trigger messages wait on APP.INITQ
    (``trigger_storm``; MAXDEPTH size/25, beyond which the queue manager would
    dead-letter them with 2053) and the work piles up on APP.WORK (pattern
    null; MAXDEPTH the larger of 50,000 and ``size``, so that the queue never
    fills and the storm lasts the whole run: a full APP.WORK would stop the
    put-triggers and let the monitor drain APP.INITQ before the capture).
    Captured: APP.INITQ, the DLQ and APP.WORK.
    """
    qm = home_qmgr(sim, "QM.APP", home, trigint=200)
    rate = 20.0
    window = size / rate
    zos = home.platform == "zos"
    appltype = MQAT_CICS if zos else MQAT_UNIX
    qm.define_qlocal("APP.INITQ", maxdepth=max(10, size // 25))
    qm.define_qlocal("APP.WORK", trigger=True, trigtype="FIRST", initq="APP.INITQ",
                     process="WORK.PROC", trigdata="work", maxdepth=max(50000, size))
    qm.define_process("WORK.PROC", appltype=appltype, applicid="/opt/work/bin/worker",
                      envrdata="&")
    ServerProgram(sim, "/opt/work/bin/worker", qm, unix_app("worker", "worker"),
                  max_messages=1, startup=0.5, process_time=0.05, max_instances=2)
    monitor = Actor("CKTI", MQAT_CICS, "CICSPRD1CKTI") if zos else None
    TriggerMonitor(sim, qm, "APP.INITQ", actor=monitor, spawn_time=0.25,
                   appltypes=(appltype,), background=True if zos else None).start()
    Producer(sim, qm, unix_app("work-submitter", "submit"), "APP.WORK", count=size,
             rate=rate).start(1.0)
    return Plan(window + 5.0, [(qm.name, "APP.INITQ"), (qm.name, DLQ), (qm.name, "APP.WORK")])


@scenario("expiry_buildup")
def expiry_buildup(sim: Simulation, size: int, home: Layout) -> Plan:
    """Short-lived price messages dead-lettered (2051) and expiring on a DLQ nobody reads.

    QM.FEED sends ``size`` price updates (Expiry 3000 = 300 s; 5% ask for
    expiration reports to RATES.EXPIRED on QM.FEED) over 1500 s to RATES.IN
    on QM.HUB. At 10% of the run RATES.IN is put-inhibited and left so: the
    receiving agent dead-letters every update with 2051, keeping its remaining
    expiry. No DLQ handler runs, so the expired ones stay on the DLQ, counted
    in its depth, until the capture's browse discards them (they are never
    in the capture; the manifest counts them). Every captured dead letter is
    a message on its way to expiring there (``expiry_buildup``, the primary
    pattern) and one of the dead letters of the put-inhibit incident
    (``reason_burst`` too). Captured: the DLQ.
    """
    hub = home_qmgr(sim, "QM.HUB", home)
    feed = remote_qmgr(sim, "QM.FEED", "linux")
    window = 1500.0
    rate = size / window
    latency = min(0.01, 0.5 / rate)
    link(sim, feed, hub, mrrty=0, latency=latency)
    link(sim, hub, feed, latency=latency)
    hub.define_qlocal("RATES.IN", maxdepth=999999999)
    feed.define_qremote("RATES.IN", "RATES.IN", hub.name)
    feed.define_qlocal("RATES.EXPIRED", spool=True)
    app = unix_app("price-feed", "pricing", encoding=546, ccsid=819)
    reporting = max(1, size // 20)
    Producer(sim, feed, app, "RATES.IN", count=size - reporting,
             rate=rate * (size - reporting) / size, md={"Expiry": 3000}, persistent=0.0).start()
    Producer(sim, feed, app, "RATES.IN", count=reporting, rate=rate * reporting / size,
             md={"Expiry": 3000, "Report": MQRO["MQRO_EXPIRATION"], "ReplyToQ": "RATES.EXPIRED",
                 "ReplyToQMgr": "QM.FEED"}, persistent=0.0).start()
    Consumer(sim, hub, unix_app("rates-loader", "rates"), "RATES.IN",
             process_time=min(0.01, 0.5 / rate)).start()
    sim.at(0.1 * window, lambda: hub.alter("RATES.IN", put="DISABLED"))
    sim.label("expiry_buildup", lambda m, dlh: dlh is not None and m.deadline is not None)
    sim.label("reason_burst", is_dead_letter(2051, "RATES.IN"))
    return Plan(window + 5.0, [(hub.name, DLQ)])


@scenario("orphaned_replies")
def orphaned_replies(sim: Simulation, size: int, home: Layout) -> Plan:
    """Replies arriving after their requester gave up and its temporary queue vanished (2085).

    quote-portal on QM.FRONT sends ``size`` requests to QUOTE.SVC on QM.BACK
    (AIX), each with its own temporary dynamic reply queue, and waits 3 s.
    From 30% to 50% of the run the quote engine serves a request in the time
    four arrive; the
    backlog's replies come back after their requesters closed (deleted) their
    reply queues and QM.FRONT's receiving agent dead-letters them with 2085
    (or 2052 through a handle it still held) (``orphaned_reply``). Requests
    carry Expiry 100 (10 s) and ask for expiration reports; requests that
    expire in the backlog produce reports to the vanished queues, dead-lettered
    the same way. 5% of requests are persistent, so their replies are too: a
    temporary dynamic queue refuses them with 2048 (``persistent_reply``).
    Captured: QM.FRONT's DLQ.
    """
    front = home_qmgr(sim, "QM.FRONT", home)
    back = remote_qmgr(sim, "QM.BACK", "aix")
    window = 60.0 + size / 20.0
    rate = size / window
    latency = min(0.01, 0.3 / rate)
    link(sim, front, back, latency=latency)
    link(sim, back, front, latency=latency)
    back.define_qlocal("QUOTE.SVC", maxdepth=999999999)
    front.define_qremote("QUOTE.REQUEST", "QUOTE.SVC", "QM.BACK")
    Requester(sim, front, unix_app("quote-portal", "portal"), "QUOTE.REQUEST", count=size,
              rate=rate, timeout=3.0, persistent=0.05,
              md={"Expiry": 100, "Report": MQRO["MQRO_EXPIRATION"]}).start()
    ReplyServer(sim, back, unix_app("quote-engine", "quotes", encoding=273, ccsid=819), "QUOTE.SVC",
                process_time=min(0.02, 0.5 / rate), reply_expiry="unlimited",
                slow=[(0.3 * window, 0.5 * window, 4.0 / rate)]).start()
    sim.label("persistent_reply", lambda m, dlh: dlh is not None and dlh["Reason"] == 2048
              and dlh["DestQName"].startswith("AMQ."))
    return Plan(window + 30.0, [(front.name, DLQ)])


@scenario("clean_baseline")
def clean_baseline(sim: Simulation, size: int, home: Layout) -> Plan:
    """Normal operation: a healthy consumer, a triggered report server, a few stray dead letters.

    QM.WEB sends ``size`` orders at 10/s to ORDERS.IN on QM.HUB, consumed as
    they arrive; REPORTS.REQ is triggered (FIRST) and its server drains it.
    About 0.5% of another application's messages are addressed to a queue
    that does not exist (2085, ``unknown_destination``: a misaddressed
    application needs a fix at any rate) and 0.2% of orders are too big for
    ORDERS.IN (2030: isolated dead letters, pattern null). Captured mid-run:
    the DLQ and ORDERS.IN.
    """
    hub = home_qmgr(sim, "QM.HUB", home)
    web = remote_qmgr(sim, "QM.WEB", "linux")
    rate = 10.0
    window = size / rate
    link(sim, web, hub, latency=0.01)
    hub.define_qlocal("ORDERS.IN", maxmsgl=65536, defpsist="YES")
    hub.define_qlocal("REPORTS.INITQ")
    hub.define_qlocal("REPORTS.REQ", trigger=True, trigtype="FIRST", initq="REPORTS.INITQ",
                      process="REPORTS.PROC")
    zos = home.platform == "zos"
    appltype = MQAT_CICS if zos else MQAT_UNIX
    hub.define_process("REPORTS.PROC", appltype=appltype, applicid="/opt/reports/bin/server")
    ServerProgram(sim, "/opt/reports/bin/server", hub, unix_app("report-server", "reports"),
                  wait_interval=2.0, startup=0.3)
    monitor = Actor("CKTI", MQAT_CICS, "CICSPRD1CKTI") if zos else None
    TriggerMonitor(sim, hub, "REPORTS.INITQ", actor=monitor, appltypes=(appltype,)).start()
    web.define_qremote("ORDERS.IN", "ORDERS.IN", hub.name)
    web.define_qremote("REPORTS.REQ", "REPORTS.REQ", hub.name)
    web.define_qremote("STOCK.QUERY", "STOCK.QRY", hub.name)  # the stray one
    Producer(sim, web, unix_app("web-gateway", "webapp", encoding=546, ccsid=1208), "ORDERS.IN",
             count=size, rate=rate, persistent=0.8, big=(0.002, 70000)).start()
    n_reports = max(1, size // 50)
    Producer(sim, web, unix_app("report-ui", "webapp", encoding=546, ccsid=1208), "REPORTS.REQ",
             count=n_reports, rate=n_reports / window).start()
    n_stray = max(1, size // 200)
    Producer(sim, web, unix_app("stock-ui", "webapp", encoding=546, ccsid=1208), "STOCK.QUERY",
             count=n_stray, rate=n_stray / window).start()
    Consumer(sim, hub, unix_app("order-svc", "ordersvc"), "ORDERS.IN", process_time=0.08).start()
    sim.label("unknown_destination", is_dead_letter(2085, "STOCK.QRY"))
    return Plan(0.5 * window + 0.5, [(hub.name, DLQ), (hub.name, "ORDERS.IN")])
