"""Trigger storms and trigger failures (finding kinds ``trigger_storm`` and ``trigger_failure``).

Detectors over the trigger messages found in captures (of initiation queues
and of the DLQ); the evaluator that replays trigger conditions against queue
definitions is :mod:`dlqlens.trigger_events`.

A trigger message (MsgType datagram, Format ``MQTRIG``, an MQTM naming the
application queue ``QName``, the process ``ProcessName`` and the program
``ApplId``) is what the queue manager puts on an initiation queue when the
conditions for a trigger event hold (IBM MQ, "Conditions for a trigger
event", seed 001; :mod:`dlqlens.mq.trigger_conditions`). Two patterns show in captures:

Trigger storm (:func:`trigger_storm`)
    Many trigger messages for one application queue and process within a
    short time. With TRIGTYPE(FIRST) the queue manager makes one when the
    queue's qualifying depth goes from 0 to 1, and again only when TRIGINT
    has passed since the last one (item 11) or when the last program with the
    queue open for input closes it leaving messages (item 12): a server that
    ends before draining its queue is started again and again (item 12 note
    a), and a low TRIGINT re-triggers on every put. TRIGINT applies to FIRST
    only (IBM MQ, "TriggerInterval (MQLONG)"). With DEPTH the queue manager
    sets TRIGGER off after every trigger message, until it is explicitly
    turned on again (IBM MQ, "TriggerType (MQLONG)", MQTT_DEPTH; condition
    9), so a burst of DEPTH trigger messages means something turns TRIGGER
    back on while TRIGDPTH or more messages wait (item 13: ALTER QLOCAL
    TRIGGER, or an MQSET of TriggerControl, usually by the server before it
    has drained the queue). A burst of FIRST trigger messages on an
    initiation queue is a server that does not drain, a TRIGINT set too low,
    or a trigger monitor that cannot keep up. (TRIGTYPE(EVERY) makes one per
    message by design: give the queue definitions so such queues are judged
    against that.)

Trigger failure (:func:`trigger_failure`)
    A trigger message on a dead-letter queue. The trigger monitor
    (runmqtrm, CKTI) dead-letters the trigger messages it cannot act on with
    a feedback code in ``dlh.Reason``: MQFB_APPL_CANNOT_BE_STARTED (265),
    MQFB_TM_ERROR (266: not a valid MQTM), MQFB_APPL_TYPE_ERROR (267: an
    ApplType it cannot start), MQFB_STOPPED_BY_MSG_EXIT (268),
    MQFB_ACTIVITY/CICS codes and the like (``spec/mqdlh.md`` §5). The queue
    manager dead-letters a trigger message it cannot put on the initiation
    queue (full, put-inhibited, deleted, message too big) with that put's
    MQRC (IBM, "When triggering does not work"). Either way the application
    was not started for the messages waiting on its queue.

A row is a trigger message when its Format (``md.Format``, or
``dlh.Format`` after an MQDLH) is ``MQTRIG`` or an MQTM (``tm.StrucId``
``'TM  '``) was decoded; the MQTM may be missing when the capture is
truncated, and the finding then names the initiation queue (``dlh.DestQName``)
instead of the application queue.

Severity (``SEVERITY_SCALE``): a storm or a run of failures whose last
trigger message came within ``gap`` (storms) or ``recent`` (failures)
seconds of a known capture time (given, or a dmpmqmsg banner) was still going
at the capture: ``high``. Otherwise a failure is ``medium`` (an application
was not started: its queue's messages wait until the next trigger event), a
storm ``medium`` from ``high_rate`` trigger messages a minute and ``low``
below (a TRIGINT to tune).
"""

from __future__ import annotations

from dlqlens.detect.common import (capture_time_aggregates, definition_attr, epoch_seconds,
                                   with_capture_times)
from dlqlens.detect.findings import Findings, finding_columns, finding_id_column, link_rows
from dlqlens.mq.constants import MQFB, MQFB_NAMES, MQRC_NAMES
from dlqlens.spark.columns import literal_map

#: Feedback codes a trigger monitor puts in dlh.Reason, by severity.
MONITOR_FEEDBACK = {
    MQFB["MQFB_APPL_CANNOT_BE_STARTED"]: "the trigger monitor could not start the application",
    MQFB["MQFB_TM_ERROR"]: "the trigger monitor found no valid MQTM in the trigger message",
    MQFB["MQFB_APPL_TYPE_ERROR"]: "the trigger monitor cannot start applications of this ApplType",
    MQFB["MQFB_STOPPED_BY_MSG_EXIT"]: "a message exit stopped the trigger message",
}


def _trim(col):
    from pyspark.sql import functions as F

    return F.rtrim(F.ltrim(col))


def dead_letter_column():
    """Column: the row starts with an MQDLH (a dead letter), as the detectors read it."""
    from pyspark.sql import functions as F

    return F.col("dlh").isNotNull() & F.col("dlh.Reason").isNotNull()


def is_trigger_message():
    """Column (never null): the row is a trigger message.

    Its Format (``dlh.Format`` after an MQDLH, else ``md.Format``) is
    ``MQTRIG``, or an MQTM was decoded (``tm.StrucId`` ``'TM'``, the decoder
    trims the blank padding). The one rule the detectors and
    :func:`dlqlens.plots.trigger_rate` count trigger messages by.
    """
    from pyspark.sql import functions as F

    from dlqlens.mq.constants import MQFMT, MQTM_STRUC_ID

    has_mqtm = F.col("tm").isNotNull() & (_trim(F.col("tm.StrucId")) == MQTM_STRUC_ID.strip())
    fmt = F.when(dead_letter_column(), _trim(F.col("dlh.Format"))) \
           .otherwise(_trim(F.col("md.Format")))
    return F.coalesce((fmt == MQFMT["MQFMT_TRIGGER"].strip()) | has_mqtm, F.lit(False))


def _trigger_rows(df, capture_time=None):
    """Trigger-message rows with the columns the detectors read.

    Columns: ``is_dead_letter`` (bool: the row starts with an MQDLH),
    ``application_queue`` (MQTM QName, trimmed, or null), ``process``
    (ProcessName), ``applid`` (ApplId), ``appltype`` (ApplType), ``reason``
    (dlh.Reason), ``DestQName`` (dlh.DestQName), ``earliest_put_ts`` (put
    time: the MQMD's, else the MQDLH's), ``dlh_put_ts``, ``source``,
    ``message_number``, ``captured`` (the capture time of the
    row's capture) and ``captured_known`` (1 when that time was given, else 0).
    """
    from pyspark.sql import functions as F

    is_dead_letter = dead_letter_column()
    blank = lambda c: F.when(_trim(c) == "", F.lit(None)).otherwise(_trim(c))  # noqa: E731
    # the trigger messages, then the capture time of their captures (each capture's newest put
    # over all its rows when not given: a small aggregation joined back, broadcast)
    rows = df.where(is_trigger_message()).select(
        is_dead_letter.alias("is_dead_letter"),
        blank(F.col("tm.QName")).alias("application_queue"),
        blank(F.col("tm.ProcessName")).alias("process"),
        blank(F.col("tm.ApplId")).alias("applid"),
        F.col("tm.ApplType").alias("appltype"),
        F.col("dlh.Reason").alias("reason"),
        blank(F.col("dlh.DestQName")).alias("DestQName"),
        F.coalesce(F.col("put_ts"), F.col("dlh_put_ts")).alias("earliest_put_ts"),
        F.col("dlh_put_ts"),
        "source", F.col("message_number").cast("int").alias("message_number"),
    )
    rows = with_capture_times(rows, df, capture_time)
    return rows.select(*[c for c in rows.columns if c != "captured_known"],
                       F.col("captured_known").cast("int").alias("captured_known"))


def trigger_storm(df, *, queue_defs=None, gap: float = 60.0, min_messages: int = 5,
                  min_rate: float = 1.0, high_rate: float = 10.0, trigint: int | None = None,
                  capture_time=None):
    """Find bursts of trigger messages for one application queue and process.

    Trigger messages, wherever they were captured (initiation queues, any
    queue they were moved to, and dead-letter queues: a trigger message the
    trigger monitor could not act on, or the queue manager could not put on
    the initiation queue, was made by the queue manager all the same and
    counts toward the storm; it is also a ``trigger_failure``), are grouped
    by application
    queue (``tm.QName``), process (``tm.ProcessName``) and burst: a burst
    ends when no trigger message for the pair comes for ``gap`` seconds
    (Spark ``session_window``). A burst is a storm when it holds at least
    ``min_messages`` trigger messages at a rate of at least ``min_rate`` per
    minute. When the queue's definition is given, queues with TRIGTYPE(EVERY)
    are not reported (one trigger message per message is what EVERY means).
    A FIRST burst is compared with what TRIGINT allows through item 11 (one
    per TRIGINT over the burst, plus the first): more than that means closes
    without draining (item 12) re-trigger the queue, within it means TRIGINT
    is too low. A DEPTH burst is not judged by TRIGINT, which applies to
    FIRST only ("TriggerInterval (MQLONG)"): the queue manager sets TRIGGER
    off after each DEPTH trigger message ("TriggerType (MQLONG)", condition
    9), so every trigger message after the first followed something turning
    TRIGGER back on with TRIGDPTH or more messages on the queue (item 13).
    The statement says which, and ``evidence.item`` gives the item of IBM's
    "Conditions for a trigger event" it blames.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows: reads ``source``, ``message_number``, ``md.Format``,
        ``dlh`` (``Reason``, ``Format``), ``tm`` (``StrucId``, ``QName``,
        ``ProcessName``, ``ApplId``, ``ApplType``), ``put_ts``, ``dlh_put_ts``.
    queue_defs : mapping of str to QueueDefinition, optional
        :func:`dlqlens.mq.mqsc.read_queue_defs` output: ``trigtype`` and
        (its ``.trigint`` or ``trigint``) are used.
    gap : float, default 60.0
        Seconds without a trigger message that end a burst.
    min_messages : int, default 5
        Trigger messages a burst needs to be reported.
    min_rate : float, default 1.0
        Trigger messages per minute a burst needs (count over its span,
        the span taken as at least one second).
    high_rate : float, default 10.0
        Trigger messages per minute from which a storm not shown still going
        at the capture is ``medium`` (``low`` below); one still going is
        ``high``.
    trigint : int, optional
        The queue manager's TRIGINT in milliseconds, when the definitions do
        not carry it.
    capture_time : datetime, str or mapping, optional
        When the captures were taken (:func:`dlqlens.detect.common.capture_time_column`);
        a storm whose last trigger message came within ``gap`` of it was
        still going.

    Returns
    -------
    Findings
        ``(findings, links)`` (:class:`dlqlens.detect.findings.Findings`);
        findings (:data:`dlqlens.detect.findings.FINDINGS_SCHEMA`), kind
        ``trigger_storm``, one per burst; ``queues`` is the application
        queue; ``evidence`` holds ``count``, ``span_seconds``,
        ``rate_per_minute``, ``process``, ``applid``, ``trigtype``,
        ``trigint_ms``, ``allowed`` (the most trigger messages TRIGINT allows
        a FIRST queue over the span, null for other types and without
        definitions), ``item`` (12: more than TRIGINT allows, closes
        without draining; 11: within it, TRIGINT too low; 13: a DEPTH queue
        whose TRIGGER is turned back on; null without definitions) and
        ``dead_lettered`` (how many of them were on a dead-letter queue).
    """
    from pyspark.sql import functions as F

    # every trigger message with an MQTM; its MQMD put time is when the queue manager made it
    rows = _trigger_rows(df, capture_time).where(F.col("application_queue").isNotNull())
    burst = F.session_window(F.col("earliest_put_ts"), f"{float(gap)} seconds").alias("burst")
    grouped = (rows.groupBy("application_queue", "process", burst)
               .agg(F.count(F.lit(1)).alias("message_count"),
                    F.sum(F.col("is_dead_letter").cast("int")).alias("dead_lettered"),
                    F.min("earliest_put_ts").alias("first"),
                    F.max("earliest_put_ts").alias("last"),
                    F.first("applid", ignorenulls=True).alias("applid"),
                    *capture_time_aggregates(capture_time)))
    span = F.greatest(epoch_seconds(F.col("last")) - epoch_seconds(F.col("first")), F.lit(1.0))
    qmgr_trigint = trigint if trigint is not None else getattr(queue_defs, "trigint", None)
    defs = {}
    for qname, definition in (queue_defs or {}).items():
        trigtype = definition_attr(definition, "trigtype")
        defs[str(qname).strip()] = None if trigtype is None else str(trigtype).upper()
    if defs:
        # the definitions looked up in a literal map (no join: no Spark job to broadcast them)
        queue = F.col("application_queue")
        defined = literal_map(defs)
        trigtype = defined[queue].cast("string")
        trigint_ms = F.when(F.map_contains_key(defined, queue),
                            F.lit(qmgr_trigint).cast("long"))
    else:
        trigtype, trigint_ms = F.lit(None).cast("string"), F.lit(None).cast("long")
    grouped = grouped.select("*", span.alias("span"), trigtype.alias("trigtype"),
                             trigint_ms.alias("trigint_ms"))
    # TRIGINT damps FIRST re-triggers only ("TriggerInterval (MQLONG)")
    allowed = F.when(F.col("trigint_ms").isNotNull() & (F.col("trigtype") == "FIRST"),
                     F.floor(F.col("span") * 1000.0 / F.greatest(F.col("trigint_ms"), F.lit(1)))
                     + 1).cast("long")
    grouped = grouped.select("*", (F.col("message_count") * 60.0 / F.col("span")).alias("rate"),
                             allowed.alias("allowed"))
    storm = (grouped.where((F.col("message_count") >= int(min_messages))
                           & (F.col("rate") >= float(min_rate)))
             .where(F.col("trigtype").isNull() | (F.col("trigtype") != "EVERY")))
    since = epoch_seconds(F.col("captured")) - epoch_seconds(F.col("last"))
    ongoing = (F.col("captured_known") == 1) & (since <= float(gap))
    severity = (F.when(ongoing, "high").when(F.col("rate") >= float(high_rate), "medium")
                .otherwise("low"))
    rate_text = F.format_number(F.col("rate"), 1)
    depth = F.coalesce(F.col("trigtype") == "DEPTH", F.lit(False))
    over = F.col("allowed").isNotNull() & (F.col("message_count") > F.col("allowed"))
    item = (F.when(depth, 13).when(over, 12).when(F.col("allowed").isNotNull(), 11)
            .cast("int"))
    why = F.when(depth, F.lit(
        ": the queue is TRIGTYPE(DEPTH), so the queue manager set TRIGGER off after each "
        "trigger message and TRIGINT does not apply; every one after the first came after "
        "something turned TRIGGER back on while TRIGDPTH or more messages waited (item 13: "
        "ALTER QLOCAL TRIGGER or an MQSET of TriggerControl, usually the server re-enabling "
        "triggering before it has drained the queue)"))
    why = why.when(over,
                 F.concat(F.lit(", more than the "), F.col("allowed").cast("string"),
                          F.lit(" TRIGINT allows: the re-triggers come from a server that closes "
                                "the queue without draining it (item 12)")))
    why = why.when(F.col("allowed").isNotNull(),
                   F.concat(F.lit(", within what TRIGINT("), F.col("trigint_ms").cast("string"),
                            F.lit(") allows: TRIGINT is too low to damp re-triggering")))
    why = why.otherwise(F.lit(": a server that ends before draining its queue is restarted on "
                              "every close (item 12), TRIGINT is too low to damp re-triggering "
                              "(item 11, TRIGTYPE(FIRST)), or, on a TRIGTYPE(DEPTH) queue, "
                              "something turns TRIGGER back on (item 13); the queue definitions "
                              "tell which"))
    statement = F.concat(
        F.lit("Queue "), F.col("application_queue"), F.lit(" was triggered "),
        F.col("message_count").cast("string"),
        F.lit(" times in "), F.format_number(F.col("span"), 0), F.lit(" s ("), rate_text,
        F.lit(" per minute) for process "), F.coalesce(F.col("process"), F.lit("(blank)")),
        F.when(F.col("dead_lettered") > 0, F.concat(
            F.lit(" ("), F.col("dead_lettered").cast("string"),
            F.lit(" of these trigger messages are on a dead-letter queue)"))).otherwise(F.lit("")),
        why, F.when(ongoing, F.concat(
            F.lit("; still going when the capture was taken ("),
            F.date_format("captured", "yyyy-MM-dd HH:mm:ss"), F.lit(" UTC, "),
            F.col("captured_origin"), F.lit(")"))).otherwise(F.lit("")), F.lit("."))
    evidence = F.struct(
        F.col("message_count").alias("count"), F.round(F.col("span"), 3).alias("span_seconds"),
        F.round(F.col("rate"), 3).alias("rate_per_minute"), F.col("process"),
        F.col("applid"), F.col("trigtype"), F.col("trigint_ms"), F.col("allowed"),
        item.alias("item"), F.col("dead_lettered").cast("long").alias("dead_lettered"))
    # the storm's first put is its session's start; taken from the aggregate, not from the
    # session window column: a filter on the id (links.where(finding_id == ...)) pushed below
    # the session windows' merge would test each message's own, unmerged window (none left)
    storm = storm.withColumn("finding_id", finding_id_column(
        "trigger_storm", F.col("application_queue"), F.col("process"),
        F.unix_micros(F.col("first"))))
    findings = storm.select(*finding_columns(
        finding_id=F.col("finding_id"), kind="trigger_storm", severity=severity,
        queues=F.array(F.col("application_queue")), window_start=F.col("first"),
        window_end=F.col("last"), message_count=F.col("message_count"),
        evidence=evidence, statement=statement))
    # a storm's messages: its queue and process, put from its first to its last (the session
    # windows of one queue and process do not overlap)
    bounds = storm.select(F.col("application_queue").alias("_queue"),
                          F.col("process").alias("_process"), F.col("first").alias("_first"),
                          F.col("last").alias("_last"), "finding_id")
    inside = (rows.join(F.broadcast(bounds),
                        F.col("application_queue").eqNullSafe(F.col("_queue"))
                        & F.col("process").eqNullSafe(F.col("_process"))
                        & F.col("earliest_put_ts").between(F.col("_first"), F.col("_last"))))
    return Findings(findings, link_rows(inside, findings))


def trigger_failure(df, *, queue_defs=None, min_messages: int = 1, recent: float = 60.0,
                    capture_time=None):
    """Find trigger messages on a dead-letter queue: applications that were not started.

    Dead-lettered trigger messages are grouped by application queue
    (``tm.QName``; the initiation queue ``dlh.DestQName`` when the MQTM is
    missing), process, program (``tm.ApplId``) and ``dlh.Reason``. A reason
    that is a feedback code of a trigger monitor (:data:`MONITOR_FEEDBACK`,
    other MQFB values) means the monitor could not act on it; an MQRC
    means the queue manager could not put it on the initiation queue
    ``dlh.DestQName``.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (the columns :func:`trigger_storm` reads).
    queue_defs : mapping, optional
        Accepted for the common detector signature; not used.
    min_messages : int, default 1
        Dead-lettered trigger messages a group needs to be reported.
    recent : float, default 60
        Seconds before a known capture time within which the group's last
        dead-lettered trigger message makes it ``high`` (still failing at the
        capture); otherwise ``medium``: a single unstartable application is
        still a failure to fix.
    capture_time : datetime, str or mapping, optional
        When the captures were taken (:func:`dlqlens.detect.common.capture_time_column`).

    Returns
    -------
    Findings
        ``(findings, links)`` (:class:`dlqlens.detect.findings.Findings`);
        findings, kind ``trigger_failure``, one per group; ``queues`` is the
        application queue then the initiation queue; ``evidence`` holds
        ``count``, ``reason``, ``reason_name``, ``process``, ``applid``,
        ``appltype``, ``initq`` and ``rate_per_minute``.
    """
    from pyspark.sql import functions as F

    rows = _trigger_rows(df, capture_time).where(F.col("is_dead_letter"))
    rows = rows.select(*[F.coalesce("application_queue", "DestQName").alias(c)
                         if c == "application_queue" else F.col(c) for c in rows.columns])
    dead_lettered_at = F.coalesce("dlh_put_ts", "earliest_put_ts")
    grouped = (rows.groupBy("application_queue", "process", "applid", "reason")
               .agg(F.count(F.lit(1)).alias("message_count"),
                    F.first("DestQName", ignorenulls=True).alias("initq"),
                    F.first("appltype", ignorenulls=True).alias("appltype"),
                    F.min(dead_lettered_at).alias("first"),
                    F.max(dead_lettered_at).alias("last"),
                    *capture_time_aggregates(capture_time))
               .where(F.col("message_count") >= int(min_messages)))
    codes = sorted(set(MQFB_NAMES) | set(MQRC_NAMES))
    # the reasons' names and meanings looked up in literal maps (no join, no broadcast job)
    names = literal_map({code: MQFB_NAMES.get(code) or MQRC_NAMES.get(code) or str(code)
                         for code in codes}, "int")
    meanings = literal_map({code: MONITOR_FEEDBACK.get(code) or (
        "the trigger monitor rejected it" if code in MQFB_NAMES
        else "the queue manager could not put it on the initiation queue") for code in codes},
        "int")
    span = F.greatest(epoch_seconds(F.col("last")) - epoch_seconds(F.col("first")), F.lit(1.0))
    grouped = grouped.select("*", names[F.col("reason")].alias("reason_name"),
                             meanings[F.col("reason")].alias("meaning"),
                             (F.col("message_count") * 60.0 / span).alias("rate"))
    since = epoch_seconds(F.col("captured")) - epoch_seconds(F.col("last"))
    ongoing = (F.col("captured_known") == 1) & (since <= float(recent))
    severity = F.when(ongoing, "high").otherwise("medium")
    reason_text = F.concat(F.col("reason").cast("string"), F.lit(" "),
                           F.coalesce(F.col("reason_name"), F.lit("(unknown)")))
    statement = F.concat(
        F.col("message_count").cast("string"), F.lit(" trigger message(s) for queue "),
        F.col("application_queue"),
        F.lit(" (process "), F.coalesce(F.col("process"), F.lit("?")), F.lit(", application "),
        F.coalesce(F.col("applid"), F.lit("?")), F.lit(") were dead-lettered with "), reason_text,
        F.lit(": "), F.coalesce(F.col("meaning"), F.lit("the trigger did not reach a program")),
        F.lit("; the messages on the application queue were not processed by a triggered "
              "program"),
        F.when(ongoing, F.concat(
            F.lit("; still failing when the capture was taken ("),
            F.date_format("captured", "yyyy-MM-dd HH:mm:ss"), F.lit(" UTC, "),
            F.col("captured_origin"), F.lit(")"))).otherwise(F.lit("")), F.lit("."))
    evidence = F.struct(
        F.col("message_count").alias("count"), F.col("reason"), F.col("reason_name"),
        F.col("process"),
        F.col("applid"), F.col("appltype"), F.col("initq"),
        F.round(F.col("rate"), 3).alias("rate_per_minute"))
    queues = F.filter(F.array_distinct(F.array(F.col("application_queue"), F.col("initq"))),
                      lambda c: c.isNotNull())
    def finding_id():
        return finding_id_column("trigger_failure", "application_queue", "process", "applid",
                                 "reason")

    findings = grouped.select(*finding_columns(
        finding_id=finding_id(), kind="trigger_failure", severity=severity, queues=queues,
        window_start=F.col("first"), window_end=F.col("last"),
        message_count=F.col("message_count"), evidence=evidence, statement=statement))
    return Findings(findings, link_rows(rows.withColumn("finding_id", finding_id()), findings))


__all__ = ["MONITOR_FEEDBACK", "trigger_failure", "trigger_storm"]
