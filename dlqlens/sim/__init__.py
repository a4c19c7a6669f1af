"""dlqlens.sim: a seeded discrete-event simulator of queue-manager failure semantics.

It produces the dead letters (and initiation-, backout- and application-queue
messages) that real MQ would, in every capture format, with a record of why:
data whose truth is known, for testing detectors and explanations, and the
engine of the teaching notebooks.

Quick use::

    from dlqlens.sim import simulate, run_scenario, SCENARIOS
    manifest = simulate("queue_full_burst", 1000, "out/", format="dmpmqmsg", encoding=273)
    run = run_scenario("trigger_storm", 200)          # in memory, to inspect
    run.qmgr("QM.APP").queue("APP.INITQ").depth

or ``dlqlens simulate queue_full_burst --size 1000 --format dmpmqmsg --out out/``.
The full guide (what is modelled and from which IBM documentation, the
scenarios, the command, the contract below, how ``datasets/`` is regenerated)
is ``docs/simulator.md``.

Modules
-------
engine      the clock (hundredths of a second, UTC) and the event queue
qmgr        queue managers, queues, messages: put/get, expiry, triggering, dead-lettering
channel     sender/receiver channels and the receiving agent's dead-lettering
apps        producers, consumers (MQI, JMS, broker MQInput), runmqtrm, triggered
            servers, runmqdlq, request/reply
scenarios   the named scenarios (:data:`SCENARIOS`)
capture     capture files, ground truth and manifest
runner      :func:`simulate` and :func:`run_scenario`

Units: MQ fields keep MQ's units (``Expiry`` in tenths of a second, ``TRIGINT``
and channel ``MRTMR`` in milliseconds); every other duration is in seconds of
simulated time; times are UTC. Determinism: ``random.Random(seed)`` is the only
source of randomness, so a scenario, size, seed and layout always give the same
bytes.

Output directory (stable contract)
----------------------------------
``<qmgr>_<queue>.bcg|.dmp|.raw``
    One capture file per captured queue (a browse in delivery order at the
    end of the run; ``.bcg`` amqsbcg, ``.dmp`` dmpmqmsg, ``.raw`` dlqlens raw).
    Characters other than ``A-Z a-z 0-9 . _ -`` in names become ``_``.
``ground_truth.jsonl``
    One JSON object per captured message, in capture order, file by file:

    ``source`` : str
        The capture file's name (no directory).
    ``message_number`` : int
        1-based position in that file, as the decoders number it
        (``dlqlens.read_capture(...).table["message_number"]``).
    ``queue``, ``qmgr`` : str
        The captured queue and its queue manager.
    ``pattern`` : str or null
        ``backout_loop`` (backed out by a consumer that cannot process it:
        still cycling, or moved to a backout queue or the DLQ after doing
        so), ``trigger_storm`` (a trigger message made by a re-trigger: a
        server closing a queue it left messages on, or TRIGINT expiring),
        ``trigger_failure`` (a trigger message the trigger monitor could not
        act on), ``expiry_buildup`` (a dead letter with a finite expiry on a
        DLQ nothing processes, on its way to expiring there),
        ``orphaned_reply`` (a reply or report addressed to a temporary dynamic
        queue that no longer exists), ``reason_burst`` (one of the dead
        letters of an incident: a consumer outage, a deleted queue, a
        permissions change), ``unknown_destination`` (a dead letter with
        MQRC_UNKNOWN_OBJECT_NAME for a queue that is not a temporary dynamic
        one: misaddressed, or its queue deleted), ``persistent_reply`` (a
        persistent reply refused by a temporary dynamic queue,
        MQRC_PERSISTENT_NOT_ALLOWED), or null (ordinary traffic, isolated
        failures).
        The primary pattern: the first of ``patterns``.
    ``patterns`` : list of str
        Every pattern the message belongs to, the primary first (empty for
        null): a message can be of several, as a re-trigger message the
        trigger monitor could not act on (``trigger_failure`` and
        ``trigger_storm``) or a dead letter of a put-inhibit incident left to
        expire on the DLQ (``expiry_buildup`` and ``reason_burst``). Detector
        accuracy (:mod:`dlqlens.accuracy`) scores against this list.
    ``md`` : object
        MQMD fields as captured: ``MsgId``/``CorrelId`` (upper-case hex),
        ``MsgType``, ``Feedback``, ``Format``, ``Encoding``, ``CodedCharSetId``,
        ``Expiry`` (remaining, tenths of a second, -1 unlimited), ``Priority``,
        ``Persistence``, ``BackoutCount``, ``ReplyToQ``, ``ReplyToQMgr``,
        ``UserIdentifier``, ``PutApplType``, ``PutApplName``, ``PutDate``,
        ``PutTime`` (character fields without their padding).
    ``dlh`` : object or null
        When the data starts with an MQDLH: ``Reason``, ``DestQName``,
        ``DestQMgrName``, ``Encoding``, ``CodedCharSetId``, ``Format``,
        ``PutApplType``, ``PutApplName``, ``PutDate``, ``PutTime``.
    ``tm`` : object or null
        When the data holds an MQTM (a trigger message, dead-lettered or not):
        ``QName``, ``ProcessName``, ``TriggerData``, ``ApplType``, ``ApplId``,
        ``EnvData``, ``UserData``.
    ``data_length`` : int
        Bytes of message data (headers included).
    ``expires`` : str or null
        UTC time (ISO 8601) at which the message expires.
    ``events`` : list of object
        The simulated history that put it there, oldest first. Every event has
        ``t`` (ISO 8601 UTC, hundredths), ``qmgr``, ``actor`` and ``event``;
        kinds: ``created``, ``put`` (``queue``; through a channel also ``destq``
        and ``destqm``, ``queue`` being the transmission queue), ``put_failed``
        (``queue``, ``reason``), ``get``
        (``backout_count``, ``syncpoint``; ``skip_backout`` when marked with
        MQGMO_MARK_SKIP_BACKOUT), ``backout`` (``backout_count``; ``cause``
        ``not_requested`` when the queue manager backed out the unit of work,
        as at an ``abnormal_end``), ``processed``,
        ``transmit`` (``channel``), ``message_retry`` (``reason``, ``attempt``),
        ``dead_letter`` (``queue``, ``reason``, ``destq``, ``destqm``),
        ``dead_letter_failed``, ``requeued_to_boqname``, ``failure_terminal``,
        ``catch_terminal``, ``error_logged``, ``cannot_requeue``,
        ``backout_skipped`` (``uow``: the new unit of work), ``removed_by_second_uow``,
        ``exception_put_failed``, ``abnormal_end``,
        ``trigger`` (``queue``, ``trigtype``, ``cause``: ``first``, ``every``,
        ``depth``, ``depth_again``, ``trigint``, ``close``, ``alter``,
        ``get_enabled``, ``initq_put_enabled``, ``initq_open``), ``started``
        (``program``), ``dlq_handler_retry``/``_fwd``/``_discard`` (``rule``,
        ``line``), ``dlq_handler_put_failed``, ``dlq_handler_ignored``,
        ``dlq_handler_no_dlh``, ``expired_discarded``, ``report``
        (``feedback``, ``for_msgid``), ``reply_created``, ``discarded``,
        ``lost``. A history longer than 400 events keeps its first 60, one
        ``elided`` event (``count``, ``from``, ``to``) and the latest ones.
``<capture>.expected.jsonl`` (only with ``simulate(..., expected=True)``)
    The golden decode of each captured message: header chain, payload bytes
    and text, MQMD/MQDLH/MQTM fields (:func:`dlqlens.sim.capture.expected_record`).
``manifest.json``
    Scenario, size, seed, format, encoding, CCSID, start and capture times,
    one entry per capture (``file``, ``qmgr``, ``queue``, ``messages``,
    ``depth_before_capture``, ``expired_discarded``), the count of each
    pattern, and run statistics.
"""

from dlqlens.sim.engine import Join, Simulation, SimulationError, Wait
from dlqlens.sim.qmgr import Actor, LocalQueue, QueueManager, SimMessage
from dlqlens.sim.runner import Run, run_scenario, simulate
from dlqlens.sim.scenarios import SCENARIOS, Layout, Plan, Scenario

__all__ = [
    "Actor", "Join", "Layout", "LocalQueue", "Plan", "QueueManager", "Run", "SCENARIOS",
    "Scenario", "SimMessage", "Simulation", "SimulationError", "Wait", "run_scenario", "simulate",
]
