"""Message channels: a sending agent on one queue manager, a receiving agent on another.

The receiving message channel agent (``amqrmppa`` on UNIX) puts each arriving
message to its destination with set-all-context and, when it cannot, does what
IBM MQ's "What happens when a message cannot be delivered?" describes:

* message retry (channel MRRTY times, MRTMR milliseconds apart) only for
  2053 ``MQRC_Q_FULL``, 2051 ``MQRC_PUT_INHIBITED`` and 2192
  ``MQRC_PAGESET_FULL`` (MQCD "MsgRetryCount (MQLONG)"); any other reason goes
  straight to failure processing;
* a message whose Report has ``MQRO_DISCARD_MSG`` is discarded instead of
  dead-lettered;
* otherwise it is dead-lettered on the receiving queue manager's DLQ with the
  MQRC of the failed put in the MQDLH, the agent's PutApplType/PutApplName
  and the data as it arrived (no MQXQH);
* when that fails too (no DLQ, DLQ full...), a non-persistent message on a
  ``NPMSPEED(FAST)`` channel is lost; anything else stays on the transmission
  queue and the channel stops and retries later (SHORTRTY times SHORTTMR
  seconds apart, then LONGTMR).

A message longer than the channel's MAXMSGL is dead-lettered by the *sending*
agent on the sending queue manager's DLQ with 2218
``MQRC_MSG_TOO_BIG_FOR_CHANNEL``, still carrying its MQXQH (MQDLH Format
``MQXMIT``, "MQXQH - Transmission-queue header").

The agent keeps the handles it opened for the current batch (until the
transmission queue is empty or BATCHSZ messages were sent): a put through a
handle whose temporary dynamic queue was deleted since fails with 2052
``MQRC_Q_DELETED`` instead of 2085 (our reading of IBM's "2052 (0804)
(RC2052): MQRC_Q_DELETED": the queue was deleted since the handle was opened).
"""

from __future__ import annotations

from dlqlens.mq.constants import MQFB, MQRC, MQRO
from dlqlens.sim.engine import Simulation, SimulationError, Wait
from dlqlens.sim.qmgr import (EXPIRATION_REPORT_BITS, OK, Actor, LocalQueue, QueueManager,
                              SimMessage)

_RETRIED = {MQRC["MQRC_Q_FULL"], MQRC["MQRC_PUT_INHIBITED"], MQRC["MQRC_PAGESET_FULL"]}


class Channel:
    """A sender/receiver channel pair moving messages from ``xmitq`` on ``sender`` to ``receiver``.

    Parameters
    ----------
    latency : float
        Seconds to move one message (network and batching together).
    mrrty, mrtmr : int
        Message retry count and interval (milliseconds), MQ defaults 10 and 1000.
    mcauser : str
        MCAUSER: the user the receiving agent puts as ('' = the queue manager's user).
    putaut : {'DEF', 'CTX'}
        PUTAUT(CTX) checks authority for the message's UserIdentifier instead.
    npmspeed : {'FAST', 'NORMAL'}
    maxmsgl : int
        Channel MAXMSGL in bytes.
    batchsz : int
    shortrty, shorttmr, longtmr : int
        Channel retry after a stop (counts and seconds).
    """

    def __init__(self, sim: Simulation, name: str, sender: QueueManager, receiver: QueueManager,
                 xmitq: str, *, latency: float = 0.01, mrrty: int = 10, mrtmr: int = 1000,
                 mcauser: str = "", putaut: str = "DEF", npmspeed: str = "FAST",
                 maxmsgl: int = 4194304, batchsz: int = 50, shortrty: int = 10,
                 shorttmr: int = 60, longtmr: int = 1200):
        if putaut not in ("DEF", "CTX"):
            raise SimulationError(f"channel {name}: PUTAUT({putaut}) is not DEF or CTX")
        if not isinstance(sender.objects.get(xmitq), LocalQueue) or \
                sender.objects[xmitq].usage != "XMITQ":
            raise SimulationError(
                f"channel {name}: {sender.name} has no USAGE(XMITQ) queue {xmitq}")
        self.sim = sim
        self.name = name
        self.sender = sender
        self.receiver = receiver
        self.xmitq = sender.queue(xmitq)
        self.latency = latency
        self.mrrty = mrrty
        self.mrtmr = mrtmr
        self.mcauser = mcauser
        self.putaut = putaut
        self.npmspeed = npmspeed
        self.maxmsgl = maxmsgl
        self.batchsz = batchsz
        self.shortrty = shortrty
        self.shorttmr = shorttmr
        self.longtmr = longtmr
        self.status = "INACTIVE"
        self.sending_agent = Actor(f"{name}(sender)", sender.mca.appltype, sender.mca.applname,
                                   sender.user, sender.encoding, sender.ccsid)
        self.agent = Actor(f"{receiver.mca.name}({name})", receiver.mca.appltype,
                           receiver.mca.applname, mcauser or receiver.user, receiver.encoding,
                           receiver.ccsid)
        self.process = None

    def start(self, delay: float = 0.0):
        """Start the channel (it then runs until the end of the simulation)."""
        self.process = self.sim.process(self._run(), f"channel {self.name}", delay)
        return self.process

    # -- the agents -------------------------------------------------------------------------
    def _run(self):
        sq, xq = self.sender, self.xmitq
        sq.open_input(xq, self.sending_agent)
        self.status = "RUNNING"
        handles: dict[str, LocalQueue] = {}
        in_batch = 0
        stops = 0
        while True:
            rc, m = sq.get(xq, actor=self.sending_agent, syncpoint=True)
            if m is None:
                handles.clear()
                in_batch = 0
                yield Wait(xq)
                continue
            yield self.latency
            if m.length > self.maxmsgl:
                done = self._too_big(m)
            else:
                done = yield from self._deliver(m, handles)
            if done:
                sq.commit(xq, m, self.sending_agent)
                stops = 0
                in_batch += 1
                if in_batch >= self.batchsz:
                    handles.clear()
                    in_batch = 0
                continue
            # the channel stops: the message stays on the transmission queue
            sq.backout(xq, m, self.sending_agent)
            handles.clear()
            in_batch = 0
            stops += 1
            self.status = "RETRYING"
            self.sim.stats[f"channel_stops:{self.name}"] += 1
            yield self.shorttmr if stops <= self.shortrty else self.longtmr
            self.status = "RUNNING"

    def _too_big(self, m: SimMessage) -> bool:
        """Sending agent: 2218 to the sending queue manager's DLQ, MQXQH kept."""
        sq = self.sender
        rname, rqmname = m.route
        xm = sq.with_xmit_header(m)
        rc = sq.dead_letter(xm, MQRC["MQRC_MSG_TOO_BIG_FOR_CHANNEL"], rname, rqmname,
                            actor=self.sending_agent)
        return rc == OK

    def _deliver(self, m: SimMessage, handles: dict):
        """Receiving agent: put with message retry, else dead-letter; True when done."""
        rq = self.receiver
        rname, rqmname = m.route
        self.sender.log(m, self.sending_agent, "transmit", channel=self.name, to=rq.name)
        out = m.copy()
        out.route = None
        user = out.md.get("UserIdentifier", "") if self.putaut == "CTX" else self.agent.user
        attempt = 0
        while True:
            if rq.expired(out):
                rq.log(out, self.agent, "expired_discarded", queue=rname)
                self.sim.stats["expired_discarded"] += 1
                if int(out.md.get("Report", 0)) & EXPIRATION_REPORT_BITS:
                    rq.report(out, MQFB["MQFB_EXPIRATION"],
                              int(out.md["Report"]) & EXPIRATION_REPORT_BITS)
                return True
            cached = handles.get(rname)
            if cached is not None and cached.deleted and rqmname == rq.name:
                rc = MQRC["MQRC_Q_DELETED"]
                rq.log(out, self.agent, "put_failed", queue=rname, reason=rc)
            else:
                rc = rq.put(rname, out, actor=self.agent, qmgr=rqmname, context="set", user=user)
                if rc == OK or rc in _RETRIED:
                    target = rq.objects.get(rname)
                    if isinstance(target, LocalQueue) and rqmname == rq.name:
                        handles[rname] = target
            if rc == OK:
                return True
            if rc in _RETRIED and attempt < self.mrrty:
                attempt += 1
                rq.log(out, self.agent, "message_retry", queue=rname, reason=rc, attempt=attempt)
                yield self.mrtmr / 1000
                continue
            break
        if int(out.md.get("Report", 0)) & MQRO["MQRO_DISCARD_MSG"]:
            rq.log(out, self.agent, "discarded", queue=rname, reason=rc)
            self.sim.stats["discarded_by_channel"] += 1
            return True
        rc2 = rq.dead_letter(out, rc, rname, rqmname, actor=self.agent)
        if rc2 == OK:
            return True
        if out.md.get("Persistence") != 1 and self.npmspeed == "FAST":
            rq.log(out, self.agent, "lost", queue=rname, reason=rc, dlq_reason=rc2)
            self.sim.stats["lost_nonpersistent"] += 1
            return True
        return False

