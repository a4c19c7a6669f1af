"""Expired-message build-up (finding kind ``expiry_buildup``).

MQMD ``Expiry`` is the message's remaining lifetime in tenths of a second
(``-1``, MQEI_UNLIMITED, for none); a browse or get returns what is left of it.
An expired message is not removed when its time is up: the queue manager
discards it only when a get (or browse) would have returned it, so until then
it still counts in the queue's depth (and toward depth triggering and
MAXDEPTH). A dead-letter queue nothing reads therefore fills with messages
that have expired or are about to. The DLQ put keeps the remaining expiry; an
expiration report (``MQRO_EXPIRATION*`` in ``Report``) is produced only at
discard. (IBM MQ documentation: MQMD Expiry; "Message expiry"; MQRO_EXPIRATION.)

For each capture (one ``source``) of a queue, with ``capture_time`` the
capture instant (see :func:`dlqlens.detect.common.capture_time_column`), each
message with a finite expiry expires at ``capture_time + Expiry / 10`` seconds.
A finding is made for a capture holding at least ``min_messages`` such
messages. Its evidence holds the depth, the messages with a finite expiry,
those already expired (Expiry 0), those expiring within ``soon``, the curve of
how many will have expired yet still sit in the depth at given times after
the capture, the messages that asked for expiration reports and, when a later
capture of the same queue exists, how many messages vanished from one to the
next while already expired (gone by expiry) or while still alive (processed,
or removed otherwise).
"""

from __future__ import annotations

from dlqlens.detect.common import capture_time_aggregates, with_capture_queues, with_capture_times
from dlqlens.detect.findings import Findings, finding_columns, finding_id_column, link_rows
from dlqlens.mq.constants import MQRO

#: The MQRO_EXPIRATION bit (set also by the _WITH_DATA and _WITH_FULL_DATA forms).
MQRO_EXPIRATION = MQRO["MQRO_EXPIRATION"]

#: Seconds after the capture at which the expired-in-depth curve is sampled.
CURVE_SECONDS = (0, 60, 300, 900, 3600, 6 * 3600, 24 * 3600, 7 * 24 * 3600)


def detect(df, *, capture_time=None, min_messages: int = 10, soon: float = 3600.0,
           dominance: float = 0.5, capture_queues=None):
    """Find queues (dead-letter queues above all) filling with expiring messages.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows: reads ``source``, ``message_number``, ``md`` (``Expiry``
        in tenths of a second, ``Report``, ``MsgId``), ``dlh``, ``put_ts`` and
        ``dlh_put_ts``.
    capture_time : datetime, str or mapping, optional
        When the captures were taken (UTC; naive datetimes are UTC): one time,
        or one per source (:func:`dlqlens.detect.common.capture_time_column`).
        Default: for each capture, the latest put time in it (a lower bound,
        so remaining lifetimes are overstated by the time between that put
        and the browse); the statement says which.
    min_messages : int, default 10
        Messages with a finite expiry a capture must hold to be reported.
    soon : float, default 3600
        Seconds after the capture within which a message counts as
        "soon expired".
    dominance : float, default 0.5
        Fraction of the capture's depth (messages) that, expiring within
        ``soon``, makes the finding ``critical`` (messages about to be lost:
        discarded at the next get or browse that reaches them);
        ``medium`` when that fraction of the depth has any finite expiry (they
        will be lost unless handled), ``low`` otherwise.
    capture_queues : mapping, optional
        Queue browsed by each capture file (a name, or ``(queue manager,
        queue)`` from the file's banner); captures are compared as snapshots
        of one queue when their capture keys agree
        (:func:`dlqlens.detect.common.with_capture_queues`).

    Returns
    -------
    Findings
        ``(findings, links)`` (:class:`dlqlens.detect.findings.Findings`);
        findings, kind ``expiry_buildup``, one per capture; its ``links`` are
        the messages with a finite expiry; ``window_start`` is the oldest put
        time among them and ``window_end`` the latest expiry instant.
        ``evidence``: ``queue``, ``source``, ``capture_time``, ``depth``,
        ``finite_expiry``, ``expired_at_capture``, ``expiring_soon``,
        ``soon_seconds``, ``expired_fraction_soon``, ``report_requested``,
        ``first_expiry``, ``last_expiry``, ``curve`` (list of
        ``{after_seconds, expired_in_depth}``), ``dead_letters``,
        ``next_capture``, ``vanished_by_expiry``, ``vanished_otherwise``.

    Raises
    ------
    ValueError
        When ``min_messages`` < 1, ``soon`` < 0 or ``dominance`` is not in (0, 1].
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if int(min_messages) < 1:
        raise ValueError(f"min_messages must be 1 or more, not {min_messages}")
    if float(soon) < 0:
        raise ValueError(f"soon must be 0 or more seconds, not {soon}")
    if not 0 < float(dominance) <= 1:
        raise ValueError(f"dominance must be in (0, 1], not {dominance}")

    rows = with_capture_times(df.select(
        "source", "message_number",
        F.col("dlh").isNotNull().alias("is_dead_letter"),
        F.col("md.Expiry").alias("expiry"),
        F.col("md.Report").alias("report"),
        F.hex("md.MsgId").alias("msgid"),
        F.coalesce("put_ts", "dlh_put_ts").alias("earliest_put_ts"),
    ), df, capture_time)
    rows = with_capture_queues(rows, capture_queues)
    finite = F.col("expiry") >= 0
    rows = rows.select(
        "*", finite.alias("finite"),
        F.when(finite, F.timestamp_micros(F.unix_micros("captured")
                                          + F.col("expiry").cast("long") * 100000))
        .alias("expires_at"))

    # snapshots of one queue, in time order: which messages vanished by the next one
    snapshots = rows.select("capture_key", "source", "captured").distinct()
    in_capture_order = Window.partitionBy("capture_key").orderBy("captured", "source")
    snapshots = snapshots.select(
        "capture_key", "source",
        F.lead("source").over(in_capture_order).alias("next_source"),
        F.lead("captured").over(in_capture_order).alias("next_captured"))
    rows = rows.join(F.broadcast(snapshots), ["capture_key", "source"], "left")
    # a message is still there in the next snapshot when its MsgId is among that snapshot's:
    # the snapshots holding each MsgId of a queue (a window: one shuffle, where a join with the
    # distinct MsgIds took three); a row without a MsgId is its own partition and matches none
    own = F.concat_ws("#", "source", F.col("message_number").cast("string"))
    by_msgid = Window.partitionBy("capture_key", F.coalesce("msgid", own))
    holders = F.collect_set("source").over(by_msgid)
    rows = rows.select("*", (F.col("msgid").isNotNull() & F.col("next_source").isNotNull()
                             & F.array_contains(holders, F.col("next_source")))
                       .alias("still_there"))
    vanished = F.col("next_source").isNotNull() & ~F.col("still_there")
    by_expiry = vanished & F.col("finite") & (F.col("expires_at") <= F.col("next_captured"))

    horizon = float(soon)

    def within(seconds):
        # SQL text: a finite expiry (tenths of a second) of at most `seconds` (a double, D)
        return f"finite AND CAST(expiry AS DOUBLE) / 10.0D <= {float(seconds)!r}D"

    def count_if_sql(cond: str) -> str:
        return f"CAST(sum(CASE WHEN {cond} THEN 1 ELSE 0 END) AS BIGINT)"

    def count_if(cond):
        return F.expr(count_if_sql(cond)) if isinstance(cond, str) else \
            F.sum(F.when(cond, 1).otherwise(0)).cast("long")

    # the curve as one parsed expression (as Columns, about 30 JVM round trips a point)
    curve = F.expr("array(" + ", ".join(
        f"named_struct('after_seconds', {int(s)}, 'expired_in_depth', "
        f"{count_if_sql(within(s))})" for s in CURVE_SECONDS) + ")")
    groups = rows.groupBy("capture_queue", "source").agg(
        *capture_time_aggregates(capture_time),
        F.count(F.lit(1)).alias("depth"),
        count_if(F.col("finite")).alias("finite_count"),
        count_if(F.col("finite") & (F.col("expiry") == 0)).alias("expired_now"),
        count_if(within(horizon)).alias("soon_count"),
        count_if(F.col("finite") & (F.col("report").bitwiseAND(F.lit(MQRO_EXPIRATION)) != 0))
        .alias("reports"),
        count_if(F.col("finite") & F.col("is_dead_letter")).alias("dead_letters"),
        F.min(F.when(F.col("finite"), F.col("earliest_put_ts"))).alias("first_put"),
        F.min("expires_at").alias("first_expiry"),
        F.max("expires_at").alias("last_expiry"),
        curve.alias("curve"),
        F.max("next_source").alias("next_source"),
        count_if(by_expiry).alias("gone_expired"),
        count_if(vanished & ~by_expiry).alias("gone_other"),
    ).where(F.col("finite_count") >= int(min_messages))

    soon_fraction = F.col("soon_count") / F.col("depth")
    finite_fraction = F.col("finite_count") / F.col("depth")
    # SEVERITY_SCALE: critical = most of the depth is discarded within `soon` of the capture
    severity = (F.when(soon_fraction >= float(dominance), "critical")
                .when(finite_fraction >= float(dominance), "medium").otherwise("low"))
    statement = F.format_string(
        "%s (capture %s, taken %s UTC, %s): %d of %d messages have a finite expiry; %d of them "
        "will have expired within %s s of the capture yet keep counting in the queue's depth "
        "until a get reaches them%s%s.",
        F.col("capture_queue"), F.col("source"),
        F.date_format("captured", "yyyy-MM-dd HH:mm:ss"), F.col("captured_origin"),
        F.col("finite_count"), F.col("depth"), F.col("soon_count"), F.lit(f"{horizon:g}"),
        F.when(F.col("reports") > 0, F.format_string("; %d asked for expiration reports, which "
                                                     "are made only when they are discarded",
                                                     F.col("reports"))).otherwise(F.lit("")),
        F.when(F.col("gone_expired") > 0, F.format_string(
            "; %d vanished by the next capture after expiring", F.col("gone_expired")))
        .otherwise(F.lit("")),
    )
    evidence = F.struct(
        F.col("capture_queue").alias("queue"), F.col("source"),
        F.date_format("captured", "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").alias("capture_time"),
        F.col("depth"), F.col("finite_count").alias("finite_expiry"),
        F.col("expired_now").alias("expired_at_capture"),
        F.col("soon_count").alias("expiring_soon"), F.lit(horizon).alias("soon_seconds"),
        F.round(soon_fraction, 4).alias("expired_fraction_soon"),
        F.col("reports").alias("report_requested"),
        F.date_format("first_expiry", "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").alias("first_expiry"),
        F.date_format("last_expiry", "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").alias("last_expiry"),
        F.col("curve"), F.col("dead_letters"), F.col("next_source").alias("next_capture"),
        F.col("gone_expired").alias("vanished_by_expiry"),
        F.col("gone_other").alias("vanished_otherwise"),
    )
    def finding_id():
        return finding_id_column("expiry_buildup", "capture_queue", "source")

    findings = groups.select(*finding_columns(
        finding_id=finding_id(), kind="expiry_buildup", severity=severity,
        queues=F.array(F.col("capture_queue")), window_start=F.col("first_put"),
        window_end=F.col("last_expiry"), message_count=F.col("finite_count"),
        evidence=evidence, statement=statement))
    # the messages with a finite expiry (the capture's own rows: no snapshot join needed)
    finite_rows = with_capture_queues(
        df.select("source", "message_number", F.col("md.Expiry").alias("expiry")),
        capture_queues).where(F.col("expiry") >= 0)
    return Findings(findings, link_rows(finite_rows.select("*", finding_id().alias("finding_id")),
                                        findings))
