"""Orphaned replies (finding kind ``orphaned_reply``).

A requester that opens a model queue gets a temporary dynamic reply queue
(named from the model's DynamicQName, ``AMQ.*`` by default on distributed
platforms and for JMS temporary queues, ``CSQ.*`` on z/OS). It is deleted when
the requester closes it or ends. A reply (or a report, such as an expiration
report) that arrives afterwards cannot be put: the receiving channel agent or
the queue manager dead-letters it with MQRC_UNKNOWN_OBJECT_NAME (2085), or
MQRC_Q_DELETED (2052) when a handle to the deleted queue is still used. Such
dead letters mean a requester gave up (timed out) before its answer came:
a slow service, not a configuration error. (IBM MQ documentation: "Dynamic
queues", MQOD DynamicQName, reason codes 2085 and 2052.)

Findings are grouped by the requesting application as far as the dead letter
shows it: the queue manager of the reply queues (``dlh.DestQMgrName``), the
name prefix of the reply queues (``AMQ.``, or a model's prefix) and the queue
manager that created the request's MsgId, read from the reply's CorrelId when
it starts ``AMQ `` (the default for replies and reports is to copy the request's
MsgId there).

Severity (``SEVERITY_SCALE``): ``high`` when such replies were still arriving
at a known capture time (the last within ``recent`` seconds of it: requesters
are timing out now); otherwise ``medium`` from ``medium_count`` dead letters
(a service too slow for its requesters' wait, to fix), ``low`` below (a few
late replies are what request/reply with timeouts produces).
"""

from __future__ import annotations

from dlqlens.detect.common import (capture_time_aggregates, epoch_seconds, glob_regex,
                                   with_capture_times)
from dlqlens.detect.findings import Findings, finding_columns, finding_id_column, link_rows
from dlqlens.mq.constants import MQMT, MQRC, TEMPORARY_QUEUE_PREFIXES

#: Reasons that mean "the reply queue is gone".
DEFAULT_REASONS = (MQRC["MQRC_UNKNOWN_OBJECT_NAME"], MQRC["MQRC_Q_DELETED"])

#: Temporary dynamic queue names: the default DynamicQName prefixes.
DEFAULT_PREFIXES = TEMPORARY_QUEUE_PREFIXES


def detect(df, *, reasons=DEFAULT_REASONS, model_prefixes=(), min_messages: int = 1,
           medium_count: int = 10, recent: float = 60.0, capture_time=None):
    """Find replies and reports dead-lettered because their temporary reply queue is gone.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows: reads ``source``, ``message_number``, ``md`` (``MsgType``,
        ``CorrelId``, ``PutApplName``, ``UserIdentifier``), ``dlh`` (``Reason``,
        ``DestQName``, ``DestQMgrName``), ``put_ts`` and ``dlh_put_ts``.
    reasons : sequence of int
        ``dlh.Reason`` values that mean the destination does not exist
        (default 2085 and 2052).
    model_prefixes : sequence of str
        Extra MQ-style patterns of dynamic queue names (a model queue's
        DynamicQName, for example ``QUOTE.REPLY.*``), besides ``AMQ.*`` and
        ``CSQ.*``.
    min_messages : int, default 1
        Dead letters a group needs to be reported.
    medium_count : int, default 10
        Dead letters from which a group that is not shown still going is
        ``medium`` (``low`` below).
    recent : float, default 60
        Seconds before a known capture time within which the group's last
        dead letter makes it ``high`` (still going at the capture).
    capture_time : datetime, str or mapping, optional
        When the captures were taken (:func:`dlqlens.detect.common.capture_time_column`);
        without it no group is said to be still going.

    Returns
    -------
    Findings
        ``(findings, links)`` (:class:`dlqlens.detect.findings.Findings`);
        findings, kind ``orphaned_reply``, one per requesting application;
        ``queues`` holds the reply queue prefix pattern; ``evidence``:
        ``reply_qmgr``, ``queue_prefix``, ``requester_qmgr``, ``reasons``
        (count by reason), ``replies``, ``reports``, ``other``,
        ``distinct_queues``, ``responders`` (PutApplName, at most 10),
        ``users`` (UserIdentifier, at most 10).

    Raises
    ------
    ValueError
        When ``reasons`` is empty or ``min_messages`` < 1.
    """
    from pyspark.sql import functions as F

    reasons = [int(r) for r in reasons]
    if not reasons:
        raise ValueError("reasons must name at least one reason code")
    if int(min_messages) < 1:
        raise ValueError(f"min_messages must be 1 or more, not {min_messages}")
    pattern = glob_regex(tuple(DEFAULT_PREFIXES) + tuple(model_prefixes))
    correl_id = F.col("md.CorrelId")
    origin = F.when(F.substring(correl_id, 1, 4) == F.lit(b"AMQ "),
                    F.trim(F.decode(F.substring(correl_id, 5, 12), "US-ASCII")))
    rows = with_capture_times(df.where(F.col("dlh").isNotNull()
                                       & F.col("dlh.Reason").isin(reasons)
                                       & F.col("dlh.DestQName").rlike(pattern)).select(
        "source", "message_number",
        F.col("dlh.Reason").alias("reason"),
        F.col("dlh.DestQName").alias("DestQName"),
        F.coalesce(F.col("dlh.DestQMgrName"), F.lit("")).alias("reply_qmgr"),
        F.regexp_extract(F.col("dlh.DestQName"), r"^(.*\.)[^.]*$", 1).alias("prefix"),
        F.coalesce(origin, F.lit("")).alias("requester_qmgr"),
        F.col("md.MsgType").alias("MsgType"),
        F.col("md.PutApplName").alias("PutApplName"),
        F.col("md.UserIdentifier").alias("UserIdentifier"),
        F.coalesce("dlh_put_ts", "put_ts").alias("latest_put_ts"),
    ), df, capture_time)
    # the count by reason in the same aggregation: the reasons are the few given
    by_reason = F.map_from_entries(F.filter(F.array(*[
        F.struct(F.lit(str(r)).alias("reason"),
                 F.sum(F.when(F.col("reason") == r, 1).otherwise(0)).cast("long").alias("count"))
        for r in sorted(set(reasons))]), lambda e: e["count"] > 0))
    groups = rows.groupBy("reply_qmgr", "prefix", "requester_qmgr").agg(
        F.count(F.lit(1)).alias("message_count"),
        F.min("latest_put_ts").alias("first"), F.max("latest_put_ts").alias("last"),
        F.countDistinct("DestQName").alias("distinct_queues"),
        F.sum(F.when(F.col("MsgType") == MQMT["MQMT_REPLY"], 1).otherwise(0)).alias("replies"),
        F.sum(F.when(F.col("MsgType") == MQMT["MQMT_REPORT"], 1).otherwise(0)).alias("reports"),
        F.slice(F.array_sort(F.collect_set("PutApplName")), 1, 10).alias("responders"),
        F.slice(F.array_sort(F.collect_set("UserIdentifier")), 1, 10).alias("users"),
        F.array_sort(F.collect_set("reason")).alias("reason_list"),
        by_reason.alias("by_reason"),
        *capture_time_aggregates(capture_time),
    ).where(F.col("message_count") >= int(min_messages))
    message_count = F.col("message_count")
    requester = F.when(F.col("requester_qmgr") != "",
                       F.format_string(" (requests from queue manager %s)", F.col("requester_qmgr"))
                       ).otherwise(F.lit(""))
    since = epoch_seconds(F.col("captured")) - epoch_seconds(F.col("last"))
    ongoing = (F.col("captured_known") == 1) & (since <= float(recent))
    statement = F.format_string(
        "%d repl%s and report(s) to %d temporary dynamic queue(s) %s* on %s could not be "
        "delivered because the queue no longer exists (%s)%s: the requesting application had "
        "closed its reply queue, most likely after giving up waiting%s.",
        message_count, F.when(message_count == 1, F.lit("y")).otherwise(F.lit("ies")),
        F.col("distinct_queues"), F.col("prefix"),
        F.when(F.col("reply_qmgr") != "", F.col("reply_qmgr"))
         .otherwise(F.lit("its queue manager")),
        F.array_join(F.col("reason_list").cast("array<string>"), ", "), requester,
        F.when(ongoing, F.format_string(
            "; still arriving when the capture was taken (%s UTC, %s): the last came %.0f s "
            "before", F.date_format("captured", "yyyy-MM-dd HH:mm:ss"), F.col("captured_origin"),
            since)).otherwise(F.lit("")))
    evidence = F.struct(
        F.col("reply_qmgr"), F.col("prefix").alias("queue_prefix"), F.col("requester_qmgr"),
        F.col("by_reason").alias("reasons"), F.col("replies").cast("long").alias("replies"),
        F.col("reports").cast("long").alias("reports"),
        (message_count - F.col("replies") - F.col("reports")).cast("long").alias("other"),
        F.col("distinct_queues"), F.col("responders"), F.col("users"),
    )
    severity = (F.when(ongoing, "high")
                .when(message_count >= int(medium_count), "medium").otherwise("low"))
    def finding_id():
        return finding_id_column("orphaned_reply", "reply_qmgr", "prefix", "requester_qmgr")

    findings = groups.select(*finding_columns(
        finding_id=finding_id(), kind="orphaned_reply", severity=severity,
        queues=F.array(F.concat(F.col("prefix"), F.lit("*"))),
        window_start=F.col("first"), window_end=F.col("last"), message_count=message_count,
        evidence=evidence, statement=statement))
    return Findings(findings, link_rows(rows.withColumn("finding_id", finding_id()), findings))
