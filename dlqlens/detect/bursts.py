"""Reason bursts (finding kind ``reason_burst``).

An incident shows on a dead-letter queue as a run of dead letters with one
``dlh.Reason`` for one destination queue, starting when the incident starts
and stopping when it is fixed: a consumer outage fills the queue (2053
MQRC_Q_FULL), a deployment deletes it (2085 MQRC_UNKNOWN_OBJECT_NAME), a
security change takes an authority away (2035 MQRC_NOT_AUTHORIZED), a queue is
put-inhibited (2051). Isolated dead letters of the same kind trickling in at a
steady low rate (a misaddressed application) are not a burst.

For each (reason, destination queue, destination queue manager), dead letters
are ordered by their DLQ put time (``dlh_put_ts``); a gap longer than
``max_gap`` seconds ends a run. A run is a burst when it holds at least
``min_messages`` distinct messages at a mean rate of at least ``min_rate``
per second. Each burst gives its onset and end (first and last DLQ put), its
first and last message, its duration, mean and peak (busiest minute) rates,
the quiet time before it, and whether it was still going at the capture.

"Still going" needs the capture's time (``capture_time``: given, or read from
a dmpmqmsg banner): a burst whose last dead letter came within ``max_gap`` of
it had not ended (severity ``high``). Without it, the capture's newest put is
a lower bound only: a burst that ended more than ``max_gap`` before that put
had ended, and one that runs to the end of the capture may or may not have
gone on (``ongoing_at_capture`` null). Bursts that are not shown to be going
on are ``medium`` (an incident that needs a fix). The statement says where
the capture time came from.

Reasons that a dedicated detector explains are left out by default (see
:data:`DEFAULT_EXCLUDED_REASONS`); pass ``exclude_reasons=()`` to keep them.
"""

from __future__ import annotations

from dlqlens.detect.common import (capture_time_aggregates, epoch_seconds, message_ref,
                                   with_capture_times)
from dlqlens.detect.findings import Findings, finding_columns, finding_id_column, link_rows
from dlqlens.mq.constants import MQFB, MQRC

#: MQRC_BACKOUT_THRESHOLD_REACHED (backout detector) and the trigger-monitor
#: feedback codes MQFB_APPL_CANNOT_BE_STARTED, MQFB_TM_ERROR and
#: MQFB_APPL_TYPE_ERROR (trigger detectors).
DEFAULT_EXCLUDED_REASONS = (MQRC["MQRC_BACKOUT_THRESHOLD_REACHED"],
                            MQFB["MQFB_APPL_CANNOT_BE_STARTED"], MQFB["MQFB_TM_ERROR"],
                            MQFB["MQFB_APPL_TYPE_ERROR"])


def detect(df, *, max_gap: float = 60.0, min_messages: int = 10, min_rate: float = 0.2,
           exclude_reasons=DEFAULT_EXCLUDED_REASONS, capture_time=None):
    """Find bursts of one reason to one destination.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows: reads ``source``, ``message_number``, ``md.MsgId``,
        ``dlh`` (``Reason``, ``DestQName``, ``DestQMgrName``), ``reason_name``,
        ``put_ts`` and ``dlh_put_ts``. Rows without an MQDLH or without a
        valid DLQ put time are ignored.
    max_gap : float, default 60
        Seconds without such a dead letter that end a burst.
    min_messages : int, default 10
        Distinct messages a burst needs (the same message in several
        snapshots counts once).
    min_rate : float, default 0.2
        Mean dead letters per second a burst needs (0.2/s = 12 a minute).
    exclude_reasons : sequence of int
        Reasons not considered (:data:`DEFAULT_EXCLUDED_REASONS`).
    capture_time : datetime, str or mapping, optional
        When the captures were taken (UTC): one time, or one per source
        (:func:`dlqlens.detect.common.capture_time_column`). Default: unknown;
        the newest put of each capture bounds it from below.

    Returns
    -------
    Findings
        ``(findings, links)`` (:class:`dlqlens.detect.findings.Findings`);
        findings, kind ``reason_burst``, one per burst; ``queues`` is the
        destination queue; ``window_start``/``window_end`` the onset and end
        (UTC). ``evidence``: ``reason``, ``reason_name``, ``dest_queue``,
        ``dest_qmgr``, ``messages``, ``first_message``, ``last_message``
        (``{source, message_number}``), ``duration_seconds``,
        ``rate_per_second``, ``peak_per_minute``, ``quiet_before_seconds``
        (null for the first burst of its kind), ``ongoing_at_capture``
        (true: had not ended at a known capture time; false: had ended;
        null: the capture's time does not show it).

    Raises
    ------
    ValueError
        When ``max_gap`` <= 0, ``min_messages`` < 2 or ``min_rate`` < 0.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if float(max_gap) <= 0:
        raise ValueError(f"max_gap must be more than 0 seconds, not {max_gap}")
    if int(min_messages) < 2:
        raise ValueError(f"min_messages must be 2 or more, not {min_messages}")
    if float(min_rate) < 0:
        raise ValueError(f"min_rate must be 0 or more per second, not {min_rate}")
    excluded = [int(r) for r in exclude_reasons]

    dead_letters = df.where(F.col("dlh").isNotNull() & F.col("dlh_put_ts").isNotNull()
                            & F.col("dlh.Reason").isNotNull()
                            & (~F.col("dlh.Reason").isin(excluded) if excluded else F.lit(True)))
    rows = with_capture_times(dead_letters.select(
        "source", "message_number",
        F.col("dlh.Reason").alias("reason"),
        F.col("dlh.DestQName").alias("DestQName"),
        F.coalesce(F.col("dlh.DestQMgrName"), F.lit("")).alias("DestQMgrName"),
        F.col("reason_name"),
        F.coalesce(F.hex("md.MsgId"),
                   F.concat_ws("#", "source", F.col("message_number").cast("string")))
         .alias("message_key"),
        F.col("dlh_put_ts"),
        epoch_seconds(F.col("dlh_put_ts")).alias("put_seconds"),
    ), df, capture_time)
    key = ["reason", "DestQName", "DestQMgrName"]
    # Where bursts start, found on time slots, not on the rows: a window over the rows of one
    # reason and destination in put order would hold all of them in one task (a queue-full
    # incident is hundreds of thousands of dead letters: out of memory at 10M messages).
    # Slots are max_gap long, so two puts in one slot are less than max_gap apart and never
    # split a burst; between two slots that hold puts, the gap is the next slot's first put
    # less the previous one's last. The window then runs over the slots of a key (at most one
    # per max_gap of the capture's span), and each row takes its slot's burst and quiet.
    slot_micros = max(1, int(float(max_gap) * 1_000_000))
    rows = rows.select("*", F.floor(F.unix_micros("dlh_put_ts") / F.lit(slot_micros))
                       .cast("long").alias("slot"))
    in_slot_order = Window.partitionBy(*key).orderBy("slot")
    slots = rows.groupBy(*key, "slot").agg(F.min("put_seconds").alias("slot_first"),
                                           F.max("put_seconds").alias("slot_last"))
    gap = F.col("slot_first") - F.lag("slot_last").over(in_slot_order)
    slots = slots.select(*key, "slot", gap.alias("gap"))
    starts = F.col("gap").isNull() | (F.col("gap") > float(max_gap))
    slots = slots.select(*[F.col(k).alias(f"slot_{k}") for k in key],
                         F.col("slot").alias("slot_id"),
                         F.when(starts, F.col("gap")).alias("quiet"),
                         F.sum(F.when(starts, 1).otherwise(0)).over(
                             in_slot_order.rowsBetween(Window.unboundedPreceding, 0))
                         .alias("burst"))
    on = [F.col(k).eqNullSafe(F.col(f"slot_{k}")) for k in key] + [
        F.col("slot") == F.col("slot_id")]
    rows = rows.join(slots, on).select(*rows.columns, "burst", "quiet")

    # by minute, then by burst: a distinct (message, put time) falls in one minute, so the
    # burst's distinct messages are the sum of its minutes' and its peak their maximum
    ref = message_ref()
    order = F.struct("dlh_put_ts", "message_key")
    minutes = rows.groupBy(*key, "burst", F.date_trunc("minute", "dlh_put_ts").alias("minute")).agg(
        F.countDistinct("message_key", "dlh_put_ts").alias("per_minute"),
        F.min("dlh_put_ts").alias("first"), F.max("dlh_put_ts").alias("last"),
        F.max("quiet").alias("quiet_before"),
        *capture_time_aggregates(capture_time),
        F.first("reason_name", ignorenulls=True).alias("reason_name"),
        F.min(order).alias("first_order"), F.max(order).alias("last_order"),
        F.min_by(ref, order).alias("first_ref"),
        F.max_by(ref, order).alias("last_ref"),
        F.count(F.lit(1)).alias("link_count"),
    )
    runs = minutes.groupBy(*key, "burst").agg(
        F.sum("per_minute").alias("message_count"),
        F.min("first").alias("first"), F.max("last").alias("last"),
        F.max("quiet_before").alias("quiet_before"),
        *capture_time_aggregates(capture_time),
        F.first("reason_name", ignorenulls=True).alias("reason_name"),
        F.min_by("first_ref", "first_order").alias("first_ref"),
        F.max_by("last_ref", "last_order").alias("last_ref"),
        F.sum("link_count").alias("link_count"),
        F.max("per_minute").alias("peak"),
    )
    duration = epoch_seconds(F.col("last")) - epoch_seconds(F.col("first"))
    runs = runs.select("*", duration.alias("duration"))
    runs = runs.select("*", (F.col("message_count") / F.greatest(F.col("duration"), F.lit(1.0)))
                       .alias("rate"))
    runs = runs.where((F.col("message_count") >= int(min_messages))
                      & (F.col("rate") >= float(min_rate)))
    since = epoch_seconds(F.col("captured")) - epoch_seconds(F.col("last"))
    # ended: quiet for max_gap before the capture (its newest put bounds the capture time from
    # below); going on: within max_gap of a capture time that is known; otherwise unknown
    ongoing = (F.when(F.col("since") > float(max_gap), F.lit(False))
               .when(F.col("captured_known") == 1, F.lit(True))
               .otherwise(F.lit(None).cast("boolean")))
    runs = runs.select("*", since.alias("since"))
    runs = runs.select("*", ongoing.alias("ongoing"))
    name = F.coalesce(F.col("reason_name"), F.lit("reason"))
    statement = F.format_string(
        "Burst of %d dead letters with %s (%d) for %s%s from %s to %s UTC (%.0f s, %.2f a second, "
        "busiest minute %d)%s%s.",
        F.col("message_count"), name, F.col("reason"), F.col("DestQName"),
        F.when(F.col("DestQMgrName") != "", F.concat(F.lit(" on "), F.col("DestQMgrName")))
         .otherwise(F.lit("")),
        F.date_format("first", "yyyy-MM-dd HH:mm:ss"), F.date_format("last", "yyyy-MM-dd HH:mm:ss"),
        F.col("duration"), F.col("rate"), F.col("peak"),
        F.when(F.col("quiet_before").isNotNull(),
               F.format_string(", after %.0f s without one", F.col("quiet_before")))
         .otherwise(F.lit("")),
        F.when(F.col("ongoing"), F.format_string(
            "; still going when the capture was taken (%s UTC, %s): its last dead letter came "
            "%.0f s before, less than the %s s of quiet that end a burst",
            F.date_format("captured", "yyyy-MM-dd HH:mm:ss"), F.col("captured_origin"),
            F.col("since"), F.lit(f"{float(max_gap):g}")))
         .when(~F.col("ongoing"), F.format_string(
             "; it had ended %.0f s before the capture (%s UTC, %s)", F.col("since"),
             F.date_format("captured", "yyyy-MM-dd HH:mm:ss"), F.col("captured_origin")))
         .otherwise(F.lit("; it runs to the capture's newest message and the capture holds no "
                          "time of its own, so whether it went on is unknown")),
    )
    evidence = F.struct(
        F.col("reason"), F.col("reason_name"), F.col("DestQName").alias("dest_queue"),
        F.col("DestQMgrName").alias("dest_qmgr"), F.col("message_count").alias("messages"),
        F.col("first_ref").alias("first_message"), F.col("last_ref").alias("last_message"),
        F.round("duration", 3).alias("duration_seconds"),
        F.round("rate", 4).alias("rate_per_second"), F.col("peak").alias("peak_per_minute"),
        F.round("quiet_before", 3).alias("quiet_before_seconds"),
        F.col("ongoing").alias("ongoing_at_capture"),
    )
    # SEVERITY_SCALE: high = still going at a known capture time; medium = ended, or not shown
    severity = F.when(F.coalesce(F.col("ongoing"), F.lit(False)), "high").otherwise("medium")
    def finding_id():
        return finding_id_column("reason_burst", *key, "burst")

    findings = runs.select(*finding_columns(
        finding_id=finding_id(), kind="reason_burst", severity=severity,
        queues=F.array(F.col("DestQName")), window_start=F.col("first"),
        window_end=F.col("last"), message_count=F.col("link_count"),
        evidence=evidence, statement=statement))
    return Findings(findings, link_rows(rows.withColumn("finding_id", finding_id()), findings))
