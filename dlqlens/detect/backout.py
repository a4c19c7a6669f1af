"""Backout loops and poison messages (finding kind ``backout_loop``).

A message an application cannot process is got under syncpoint, fails, and is
backed out: MQ adds one to its ``BackoutCount`` and it is first in line again.
Unless something breaks the loop it comes back for ever. What breaks it (IBM
MQ documentation, "Handling poison messages in IBM MQ classes for JMS" and
"Backout queues and thresholds"; the queue attributes BOTHRESH and BOQNAME):
the application (or the JMS/XMS client, or a broker input node) compares the
count with the queue's BOTHRESH and moves the message to BOQNAME, or, when
the queue has none, to the dead-letter queue with
``MQRC_BACKOUT_THRESHOLD_REACHED`` (2362). A DLQ handler rule
``ACTION(RETRY)`` that puts such a message back to its queue (with a
BackoutCount of 0) restarts the loop: the RETRY ping-pong.

Evidence this detector reads, one finding per queue and signal:

``threshold_reached``
    Dead letters with ``dlh.Reason`` 2362, by destination queue.
``backed_out``
    Messages with a BackoutCount of at least ``min_backout_count`` but below
    the threshold: backed out, back in line (low severity).
``backout_count``
    Messages whose ``md.BackoutCount`` is at or past ``backout_threshold``, or
    past the queue's BOTHRESH when its definition is given; more severe when
    the definition shows no BOQNAME (nothing will move the message away).
``backout_queue``
    Messages browsed on a backout queue: a queue named as some queue's
    BOQNAME in the definitions, or one whose name matches
    ``backout_queue_patterns``.
``redelivered``
    The same message put to the DLQ or a backout queue more than once: one
    MsgId seen with two or more different DLQ put times (several snapshots),
    or, when re-puts give it a new MsgId, one payload digest (SHA-256, non-empty
    payloads) under ``min_repeats`` or more MsgIds.
``ping_pong``
    Messages on an input queue whose consumer dead-letters with 2362 (from
    the same set of captures) that were put before the latest of those dead
    letters and are still there, or carry a BackoutCount: they are going round
    between the consumer's backouts and the DLQ handler's retries.

Severity (``SEVERITY_SCALE``): ``high`` for messages still going round at the
capture (``ping_pong``, ``redelivered``; ``backout_count`` on a queue whose
definition has no BOQNAME, so nothing moves them away) and for 2362 dead
letters still arriving at a known capture time (the last within ``recent``
seconds of it); ``medium`` for poison messages parked on the DLQ
(``threshold_reached`` not shown going on) or on a backout queue, and for
``backout_count`` otherwise; ``low`` for ``backed_out``.

``md.BackoutCount`` is what the queue manager counted on the queue the
capture read (MQPUT ignores the field): on a dead letter it counts backouts
on the dead-letter queue, not on the queue the message was going to, which
is why 2362 dead letters usually show 0.
"""

from __future__ import annotations

from dlqlens.detect.common import (capture_time_aggregates, definition_attr, epoch_seconds,
                                   glob_regex, queue_def_rows, with_capture_queues,
                                   with_capture_times)
from dlqlens.detect.findings import (Findings, finding_columns, finding_id_column, link_rows,
                                     persist_rows)
from dlqlens.mq.constants import MQRC
from dlqlens.spark.columns import literal_map

#: MQRC_BACKOUT_THRESHOLD_REACHED (2362).
BACKOUT_THRESHOLD_REACHED = MQRC["MQRC_BACKOUT_THRESHOLD_REACHED"]

#: Queue-name patterns taken for backout queues when no definition says so.
DEFAULT_BACKOUT_QUEUE_PATTERNS = ("*.BOQ", "*.BACKOUT", "*.BACKOUT.*", "*.BACKOUTQ", "*.BO",
                                  "BOQ.*", "BACKOUT.*")

SIGNALS = ("threshold_reached", "backout_count", "backed_out", "backout_queue", "redelivered",
           "ping_pong")


def payload_digest(df):
    """Each message's payload digest, the key of the "same payload under
    several MsgIds" signal.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows, with ``payload`` (binary) or ``payload_sha256``
        (:func:`dlqlens.detect.detector_input`: the digest already), or neither.

    Returns
    -------
    pyspark.sql.Column
        string: the SHA-256 of a non-empty ``payload`` as 64 lowercase hex
        digits; null for an empty or unknown (null) payload, and for every row
        when ``df`` has neither column (nothing to compare).
    """
    from pyspark.sql import functions as F

    if "payload_sha256" in df.columns:
        return F.col("payload_sha256")
    if "payload" not in df.columns:
        return F.lit(None).cast("string")
    return F.when(F.length(F.col("payload")) > 0, F.sha2(F.col("payload"), 256))


def detect(df, *, queue_defs=None, backout_threshold: int = 3, min_backout_count: int = 1,
           min_repeats: int = 3,
           backout_queue_patterns=DEFAULT_BACKOUT_QUEUE_PATTERNS, capture_queues=None,
           recent: float = 60.0, capture_time=None, persisted=None):
    """Find backout loops and poison messages.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (``load_capture`` output): reads ``source``,
        ``message_number``, ``md`` (``BackoutCount``, ``MsgId``), ``dlh``
        (``Reason``, ``DestQName``), ``put_ts``, ``dlh_put_ts`` and, when
        present, ``payload_sha256`` (:func:`dlqlens.detect.detector_input`)
        or else ``payload`` (:func:`payload_digest`).
    queue_defs : mapping of str to queue definition, optional
        :func:`dlqlens.mq.mqsc.read_queue_defs` output; ``bothresh`` and
        ``boqname`` are used.
    backout_threshold : int, default 3
        BackoutCount (number of backouts) from which a message is reported
        when its queue's BOTHRESH is unknown or 0.
    min_backout_count : int, default 1
        BackoutCount from which a message below the threshold is still reported
        (signal ``backed_out``, severity ``low``: a loop under way, or a one-off
        failure).
    min_repeats : int, default 3
        Distinct MsgIds with one payload digest on the DLQ or backout queues
        from which a re-put message is reported.
    backout_queue_patterns : sequence of str
        MQ-style ``*`` patterns of backout-queue names (used as well as the
        BOQNAMEs of ``queue_defs``).
    capture_queues : mapping, optional
        Queue browsed by each capture file (see
        :func:`dlqlens.detect.common.with_capture_queues`).
    recent : float, default 60
        Seconds before a known capture time within which the last 2362 dead
        letter for a queue makes ``threshold_reached`` ``high`` (its consumer
        was still parking messages at the capture).
    capture_time : datetime, str or mapping, optional
        When the captures were taken (:func:`dlqlens.detect.common.capture_time_column`).
    persisted : list, optional
        When given (:func:`dlqlens.detect.run_detectors` passes its own), the
        per-row frame both the findings and the links read (each message
        with each signal it shows: two windows and a join) is cached and
        appended (:func:`dlqlens.detect.findings.persist_rows`); the caller
        unpersists it.

    Returns
    -------
    Findings
        ``(findings, links)`` (:class:`dlqlens.detect.findings.Findings`);
        findings (:data:`dlqlens.detect.findings.FINDINGS_SCHEMA`), kind
        ``backout_loop``; ``evidence`` holds ``signal`` (one of
        :data:`SIGNALS`), ``queue``, ``messages``, ``max_backout_count``,
        ``threshold``, ``bothresh``, ``boqname`` and ``distinct_msgids``.

    Raises
    ------
    ValueError
        When ``backout_threshold`` or ``min_repeats`` is below 1.
    """
    from pyspark.sql import functions as F

    if int(backout_threshold) < 1:
        raise ValueError(f"backout_threshold must be 1 or more, not {backout_threshold}")
    if int(min_backout_count) < 1:
        raise ValueError(f"min_backout_count must be 1 or more, not {min_backout_count}")
    if int(min_repeats) < 2:
        raise ValueError(f"min_repeats must be 2 or more, not {min_repeats}")
    digest = payload_digest(df)
    rows = with_capture_times(df.select(
        "source", "message_number",
        F.col("dlh").isNotNull().alias("is_dead_letter"),
        F.col("dlh.Reason").alias("reason"),
        F.col("dlh.DestQName").alias("DestQName"),
        F.col("md.BackoutCount").alias("BackoutCount"),
        F.when(F.col("md.MsgId") != F.unhex(F.lit("00" * 24)), F.hex("md.MsgId")).alias("msgid"),
        F.col("put_ts"), F.col("dlh_put_ts"),
        F.coalesce("dlh_put_ts", "put_ts").alias("latest_put_ts"),
        digest.alias("digest"),
    ), df, capture_time)
    rows = with_capture_queues(rows, capture_queues)
    home_queue = F.when(F.col("is_dead_letter"), F.col("DestQName")).otherwise(
        F.col("capture_queue"))

    # the definitions looked up in literal maps (no join, so no Spark job to broadcast them)
    defined = {r[0]: r[1:] for r in queue_def_rows(queue_defs, {"bothresh": "int",
                                                                 "boqname": "string"})}
    def attributes(queue):
        """The BOTHRESH and BOQNAME of ``queue`` (a column): null when undefined."""
        if not defined:
            return F.lit(None).cast("int"), F.lit(None).cast("string")
        return tuple(literal_map({q: defined[q][i] for q in sorted(defined)}, "string",
                                 typ)[queue] for i, typ in ((0, "int"), (1, "string")))

    bothresh, boqname = attributes(home_queue)
    boqnames = sorted({str(definition_attr(d, "boqname")).strip()
                       for d in queue_defs.values() if definition_attr(d, "boqname")}) \
        if defined else []
    on_backout_queue = ~F.col("is_dead_letter") & (
        F.col("capture_queue").rlike(glob_regex(backout_queue_patterns))
        | F.col("capture_queue").isin(boqnames))
    limit = F.lit(int(backout_threshold))
    rows = rows.select(*[c for c in rows.columns if c != "capture_key"],
                       home_queue.alias("home_queue"), bothresh.alias("bothresh"),
                       boqname.alias("boqname"), on_backout_queue.alias("on_backout_queue"))
    threshold = F.when(F.col("bothresh") > 0, F.least(F.col("bothresh"), limit)).otherwise(limit)

    # Two windows (by MsgId, by payload), one small aggregation joined back (the latest 2362
    # dead letter of each queue), then one aggregation: each row says which signals it shows
    # (few shuffles, so that the detector stays cheap on millions of rows).
    from pyspark.sql import Window

    parked = F.col("is_dead_letter") | F.col("on_backout_queue")
    threshold_reached = F.col("is_dead_letter") & (F.col("reason") == BACKOUT_THRESHOLD_REACHED)
    # Window keys fall back to the row itself where the key does not apply, so that no
    # partition gathers unrelated rows. One MsgId put at two or more times: its earliest
    # and latest put keys differ. The distinct MsgIds under one payload, exactly and without
    # a set per row: in the window by MsgId (ordered by payload key, so one sort serves
    # both), a row is the first of its MsgId under its payload when the row before it has
    # another payload key; the window by payload counts those rows. A row with no MsgId
    # (or not parked) is its own MsgId key, as a distinct count of the key would have it.
    own = F.concat_ws("#", "source", F.col("message_number").cast("string"))
    by_msgid = F.when(parked & F.col("msgid").isNotNull(), F.col("msgid")).otherwise(own)
    by_payload = F.when(parked & F.col("digest").isNotNull(),
                     F.concat_ws("|", "home_queue", "digest")).otherwise(own)
    put_key = F.concat_ws("|", "capture_queue", F.col("latest_put_ts").cast("string"))
    keyed = rows.select("*", by_msgid.alias("msgid_key"), by_payload.alias("payload_key"))
    same_msgid = Window.partitionBy("msgid_key").orderBy("payload_key")
    whole = same_msgid.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    msgid_reput = F.min(put_key).over(whole) != F.max(put_key).over(whole)
    first_under_payload = F.coalesce(F.lag("payload_key").over(same_msgid)
                                     != F.col("payload_key"), F.lit(True))
    keyed = keyed.select("*", msgid_reput.alias("_msgid_reput"),
                         first_under_payload.cast("int").alias("_first_under_payload"))
    same_payload_msgids = F.sum("_first_under_payload").over(Window.partitionBy("payload_key"))
    # the latest 2362 dead letter for each queue, beside the messages browsed on that queue:
    # an aggregation (one row per queue) joined back, where a window over the queue would
    # gather every row of one queue in one task
    last_reached = (rows.where(threshold_reached).groupBy("DestQName")
                    .agg(F.max("dlh_put_ts").alias("last_threshold_reached_ts"))
                    .where(F.col("DestQName").isNotNull())
                    .withColumnRenamed("DestQName", "home_queue"))
    rows = keyed.join(F.broadcast(last_reached), "home_queue", "left")
    rows = rows.select(
        "*", threshold.alias("threshold"),
        (parked & F.col("msgid").isNotNull() & F.col("_msgid_reput")).alias("msgid_reput"),
        F.when(parked & F.col("digest").isNotNull(), same_payload_msgids)
        .alias("same_payload_msgids"))

    def signal(name, cond, queue):
        return F.when(cond & queue.isNotNull(), F.struct(F.lit(name).alias("signal"),
                                                         queue.alias("queue")))

    on_input_queue = (~F.col("is_dead_letter") & ~F.col("on_backout_queue")
                      & F.col("last_threshold_reached_ts").isNotNull())
    signals = F.array(
        signal("threshold_reached", threshold_reached, F.col("DestQName")),
        signal("backout_count", F.col("BackoutCount") >= F.col("threshold"),
               F.col("home_queue")),
        signal("backed_out",
               (F.col("BackoutCount") >= int(min_backout_count))
               & (F.col("BackoutCount") < F.col("threshold")),
               F.col("home_queue")),
        signal("backout_queue", F.col("on_backout_queue"), F.col("capture_queue")),
        signal("redelivered",
               F.col("msgid_reput") | (F.col("same_payload_msgids") >= int(min_repeats)),
               F.col("home_queue")),
        signal("ping_pong",
               on_input_queue & ((F.col("BackoutCount") > 0)
                                 | (F.col("put_ts") <= F.col("last_threshold_reached_ts"))),
               F.col("capture_queue")),
    )
    hits = persist_rows(
        rows.select("*", F.explode(F.filter(signals, lambda x: x.isNotNull())).alias("hit"))
        .select("hit.signal", "hit.queue", "source", "message_number", "BackoutCount", "msgid",
                "latest_put_ts", "same_payload_msgids", "captured", "captured_known"),
        persisted)
    # the queue's definition looked up after the aggregation (every signal's queue is its
    # rows' home queue): no string to aggregate, so a hash aggregation, not a sort
    groups = hits.groupBy("signal", "queue").agg(
        F.count(F.lit(1)).alias("message_count"),
        F.min("latest_put_ts").alias("first"), F.max("latest_put_ts").alias("last"),
        F.max("BackoutCount").alias("highest_backout_count"),
        F.min("BackoutCount").alias("lowest_backout_count"),
        F.countDistinct("msgid").alias("distinct_msgids"),
        F.max("same_payload_msgids").alias("same_payload_msgids"),
        *capture_time_aggregates(capture_time),
    )
    defined_bothresh, defined_boqname = attributes(F.col("queue"))
    groups = groups.select("*", defined_bothresh.alias("bothresh"),
                           defined_boqname.alias("boqname"))
    groups = groups.select("*", threshold.alias("threshold"))
    message_count = F.col("message_count")
    no_boqname = F.col("bothresh").isNotNull() & F.col("boqname").isNull()
    since = epoch_seconds(F.col("captured")) - epoch_seconds(F.col("last"))
    still_parking = ((F.col("signal") == "threshold_reached") & (F.col("captured_known") == 1)
                     & (since <= float(recent)))
    looping = F.col("signal").isin("ping_pong", "redelivered")
    severity = (F.when(looping | still_parking, "high")
                .when((F.col("signal") == "backout_count") & no_boqname, "high")
                .when(F.col("signal") == "backed_out", "low")
                .otherwise("medium"))
    statement = (
        F.when(F.col("signal") == "threshold_reached", F.format_string(
            "%d message(s) for %s were dead-lettered with MQRC_BACKOUT_THRESHOLD_REACHED (2362): "
            "its consumer backed each out until the backout threshold and had no backout queue "
            "to move it to%s.", message_count, F.col("queue"),
            F.when(still_parking, F.format_string(
                "; still arriving when the capture was taken (%s UTC, %s)",
                F.date_format("captured", "yyyy-MM-dd HH:mm:ss"), F.col("captured_origin")))
             .otherwise(F.lit(""))))
        .when(F.col("signal") == "backout_count", F.format_string(
            "%d message(s) for %s have a BackoutCount of %d or more (up to %d): they were got and "
            "backed out again and again%s.", message_count, F.col("queue"), F.col("threshold"),
            F.col("highest_backout_count"),
            F.when(no_boqname, F.lit("; the queue has no BOQNAME, so nothing moves them away"))
             .otherwise(F.lit(""))))
        .when(F.col("signal") == "backed_out", F.format_string(
            "%d message(s) for %s have been backed out (BackoutCount %d to %d, below the "
            "threshold of %d): a consumer failed to process them and they are back in line.",
            message_count, F.col("queue"), F.col("lowest_backout_count"),
            F.col("highest_backout_count"), F.col("threshold")))
        .when(F.col("signal") == "backout_queue", F.format_string(
            "%d message(s) wait on backout queue %s: a consumer gave up on each after backing it "
            "out to the threshold (poison messages).", message_count, F.col("queue")))
        .when(F.col("signal") == "redelivered", F.format_string(
            "%d message(s) for %s came back to the dead-letter or backout queue more than once "
            "(same MsgId at different put times, or the same payload under %d MsgIds): a loop.",
            message_count, F.col("queue"), F.coalesce(F.col("same_payload_msgids"), F.lit(1))))
        .otherwise(F.format_string(
            "%d message(s) on %s are older than its consumer's latest "
            "MQRC_BACKOUT_THRESHOLD_REACHED dead letter yet still there: they go round between the consumer's backouts and a DLQ "
            "handler RETRY (ping-pong).", message_count, F.col("queue")))
    )
    evidence = F.struct(
        F.col("signal"), F.col("queue"), message_count.alias("messages"),
        F.col("highest_backout_count").alias("max_backout_count"), F.col("threshold"),
        F.col("bothresh"), F.col("boqname"), F.col("distinct_msgids"),
    )
    finding_id = finding_id_column("backout_loop", "signal", "queue")
    findings = groups.select(*finding_columns(
        finding_id=finding_id, kind="backout_loop", severity=severity,
        queues=F.array(F.col("queue")), window_start=F.col("first"), window_end=F.col("last"),
        message_count=message_count, evidence=evidence, statement=statement))
    # every (signal, queue) group of the hits is a finding: its rows are the links as they are
    return Findings(findings, link_rows(hits.select("*", finding_id.alias("finding_id")), None))
