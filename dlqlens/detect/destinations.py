"""Dead letters whose destination refused them for good (finding kinds ``unknown_destination``
and ``persistent_reply``).

Two application defects show on a dead-letter queue at any rate, one dead
letter being enough to act on, where :mod:`dlqlens.detect.bursts` looks for
incidents (many dead letters in a short time):

Unknown destination (:func:`unknown_destination`)
    Dead letters with MQRC_UNKNOWN_OBJECT_NAME (2085) for a queue that is not
    a temporary dynamic queue: no queue of that name is defined on the
    destination queue manager. It was deleted or renamed, or the sender
    addresses a queue that never existed (a QREMOTE whose RNAME is misspelt,
    an application's wrong name). Every message sent there ends on the DLQ
    until the name is fixed or the queue defined (IBM MQ, "2085 (0825)
    (RC2085): MQRC_UNKNOWN_OBJECT_NAME"). Replies to temporary dynamic queues
    that are gone are :mod:`dlqlens.detect.orphans`' (``orphaned_reply``).

Persistent reply (:func:`persistent_reply`)
    Dead letters with MQRC_PERSISTENT_NOT_ALLOWED (2048) for a temporary
    dynamic queue (``AMQ.*``, ``CSQ.*``, or a model's DynamicQName): a
    temporary dynamic queue holds nonpersistent messages only (IBM MQ,
    "Persistence (MQLONG)"; "Dynamic and Model queues"), and a server replies
    with the persistence of the request (IBM: "2048 (0800) (RC2048):
    MQRC_PERSISTENT_NOT_ALLOWED", programmer response: if the request is
    persistent, the reply queue cannot be a temporary dynamic queue; use a
    permanent dynamic or predefined queue). The requester's queue still
    existed: it waited for an answer that was refused, a defect of the
    requesting application (persistent requests with a temporary reply
    queue), not a slow service.

Severity (``SEVERITY_SCALE``): ``high`` when such dead letters were still
arriving at a known capture time (the last within ``recent`` seconds of it);
otherwise ``medium``: a defect that needs a fix, whatever the count.
"""

from __future__ import annotations

from dlqlens.detect.common import (capture_time_aggregates, epoch_seconds, glob_regex,
                                   with_capture_times)
from dlqlens.detect.findings import Findings, finding_columns, finding_id_column, link_rows
from dlqlens.mq.constants import MQMT, MQPER, MQRC, TEMPORARY_QUEUE_PREFIXES

UNKNOWN_OBJECT_NAME = MQRC["MQRC_UNKNOWN_OBJECT_NAME"]
PERSISTENT_NOT_ALLOWED = MQRC["MQRC_PERSISTENT_NOT_ALLOWED"]

#: How many sending applications and user ids a finding's evidence lists.
LISTED = 10


def _dead_letters(df, reason: int, dynamic_regex: str, *, dynamic: bool, capture_time):
    """Dead letters with ``reason`` whose DestQName is (``dynamic``) or is not a
    temporary dynamic queue name, with the columns both detectors read (and,
    for ``dynamic``, the queue name's ``prefix``: up to its last dot)."""
    from pyspark.sql import functions as F

    destq = F.rtrim(F.col("dlh.DestQName"))
    is_dynamic = F.coalesce(destq.rlike(dynamic_regex), F.lit(False))
    rows = df.where(F.col("dlh").isNotNull() & (F.col("dlh.Reason") == int(reason))
                    & F.col("dlh.DestQName").isNotNull()
                    & (is_dynamic if dynamic else ~is_dynamic))
    prefix = [F.regexp_extract(destq, r"^(.*\.)[^.]*$", 1).alias("prefix")] if dynamic else []
    return with_capture_times(rows.select(
        "source", "message_number",
        destq.alias("DestQName"),
        F.coalesce(F.rtrim(F.col("dlh.DestQMgrName")), F.lit("")).alias("DestQMgrName"),
        F.col("md.MsgType").alias("MsgType"),
        F.col("md.Persistence").alias("Persistence"),
        F.rtrim(F.col("md.PutApplName")).alias("PutApplName"),
        F.rtrim(F.col("md.UserIdentifier")).alias("UserIdentifier"),
        F.coalesce("dlh_put_ts", "put_ts").alias("dead_lettered"),
        *prefix,
    ), df, capture_time)


def _common_aggregates(capture_time):
    from pyspark.sql import functions as F

    return [
        F.count(F.lit(1)).alias("message_count"),
        F.min("dead_lettered").alias("first"), F.max("dead_lettered").alias("last"),
        F.slice(F.array_sort(F.collect_set("PutApplName")), 1, LISTED).alias("senders"),
        F.slice(F.array_sort(F.collect_set("UserIdentifier")), 1, LISTED).alias("users"),
        *capture_time_aggregates(capture_time),
    ]


def _ongoing(recent: float):
    from pyspark.sql import functions as F

    since = epoch_seconds(F.col("captured")) - epoch_seconds(F.col("last"))
    return (F.col("captured_known") == 1) & (since <= float(recent)), since


def _still_arriving(ongoing, since):
    from pyspark.sql import functions as F

    return F.when(ongoing, F.format_string(
        " Still arriving when the capture was taken (%s UTC, %s): the last came %.0f s before.",
        F.date_format("captured", "yyyy-MM-dd HH:mm:ss"), F.col("captured_origin"), since)
    ).otherwise(F.lit(""))


def _check(min_messages: int):
    if int(min_messages) < 1:
        raise ValueError(f"min_messages must be 1 or more, not {min_messages}")


def unknown_destination(df, *, model_prefixes=(), min_messages: int = 1, recent: float = 60.0,
                        capture_time=None):
    """Find dead letters for a queue that does not exist (2085), at any rate.

    Dead letters with ``dlh.Reason`` MQRC_UNKNOWN_OBJECT_NAME (2085) whose
    ``dlh.DestQName`` is not a temporary dynamic queue name are grouped by
    destination queue and queue manager: one finding per destination, however
    few dead letters it has and however slowly they came (IBM MQ, "2085
    (0825) (RC2085): MQRC_UNKNOWN_OBJECT_NAME": the queue named is not
    defined on the queue manager that tried to put to it).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows: reads ``source``, ``message_number``, ``dlh`` (``Reason``,
        ``DestQName``, ``DestQMgrName``), ``md`` (``MsgType``, ``Persistence``,
        ``PutApplName``, ``UserIdentifier``), ``put_ts`` and ``dlh_put_ts``.
    model_prefixes : sequence of str
        Extra MQ-style patterns of dynamic queue names (a model queue's
        DynamicQName), left to ``orphaned_reply`` like ``AMQ.*`` and ``CSQ.*``.
    min_messages : int, default 1
        Dead letters a destination needs to be reported.
    recent : float, default 60
        Seconds before a known capture time within which the last dead letter
        makes the finding ``high`` (still arriving).
    capture_time : datetime, str or mapping, optional
        When the captures were taken (:func:`dlqlens.detect.common.capture_time_column`).

    Returns
    -------
    Findings
        ``(findings, links)`` (:class:`dlqlens.detect.findings.Findings`);
        findings, kind ``unknown_destination``, one per destination;
        ``queues`` is the destination queue; ``window_start``/``window_end``
        the first and last DLQ put (UTC). ``evidence``: ``reason``,
        ``reason_name``, ``dest_queue``, ``dest_qmgr``, ``messages``,
        ``span_seconds``, ``rate_per_minute`` (over the span, at least one
        second), ``senders`` (MQMD PutApplName, at most 10), ``users``
        (UserIdentifier, at most 10).

    Raises
    ------
    ValueError
        When ``min_messages`` < 1.
    """
    from pyspark.sql import functions as F

    _check(min_messages)
    regex = glob_regex(tuple(TEMPORARY_QUEUE_PREFIXES) + tuple(model_prefixes))
    rows = _dead_letters(df, UNKNOWN_OBJECT_NAME, regex, dynamic=False,
                         capture_time=capture_time)
    groups = rows.groupBy("DestQMgrName", "DestQName").agg(*_common_aggregates(capture_time)) \
        .where(F.col("message_count") >= int(min_messages))
    count = F.col("message_count")
    span = epoch_seconds(F.col("last")) - epoch_seconds(F.col("first"))
    ongoing, since = _ongoing(recent)
    on_qmgr = F.when(F.col("DestQMgrName") != "", F.col("DestQMgrName")) \
        .otherwise(F.lit("its queue manager"))
    statement = F.concat(
        F.format_string(
            "%d dead letter(s) for queue %s on %s with MQRC_UNKNOWN_OBJECT_NAME (2085) from %s "
            "to %s UTC, sent by %s: no queue of that name is defined there, so every message "
            "addressed to it ends on the dead-letter queue. The queue was deleted or renamed, "
            "or the senders address a queue that does not exist (a QREMOTE whose RNAME is "
            "misspelt, or an application's wrong queue name).",
            count, F.col("DestQName"), on_qmgr,
            F.date_format("first", "yyyy-MM-dd HH:mm:ss"),
            F.date_format("last", "yyyy-MM-dd HH:mm:ss"),
            F.when(F.size("senders") > 0, F.array_join("senders", ", "))
             .otherwise(F.lit("unnamed applications"))),
        _still_arriving(ongoing, since))
    evidence = F.struct(
        F.lit(UNKNOWN_OBJECT_NAME).alias("reason"),
        F.lit("MQRC_UNKNOWN_OBJECT_NAME").alias("reason_name"),
        F.col("DestQName").alias("dest_queue"), F.col("DestQMgrName").alias("dest_qmgr"),
        count.cast("long").alias("messages"),
        F.round(span, 3).alias("span_seconds"),
        F.round(count * 60.0 / F.greatest(span, F.lit(1.0)), 3).alias("rate_per_minute"),
        F.col("senders"), F.col("users"),
    )
    severity = F.when(ongoing, "high").otherwise("medium")
    def finding_id():
        return finding_id_column("unknown_destination", "DestQMgrName", "DestQName")

    findings = groups.select(*finding_columns(
        finding_id=finding_id(), kind="unknown_destination", severity=severity,
        queues=F.array(F.col("DestQName")), window_start=F.col("first"),
        window_end=F.col("last"), message_count=count, evidence=evidence, statement=statement))
    return Findings(findings, link_rows(rows.withColumn("finding_id", finding_id()), findings))


def persistent_reply(df, *, model_prefixes=(), min_messages: int = 1, recent: float = 60.0,
                     capture_time=None):
    """Find persistent messages refused by temporary dynamic reply queues (2048).

    Dead letters with ``dlh.Reason`` MQRC_PERSISTENT_NOT_ALLOWED (2048) whose
    ``dlh.DestQName`` is a temporary dynamic queue name (``AMQ.*``,
    ``CSQ.*``, ``model_prefixes``) are grouped by the requesting application
    as the dead letter shows it: the reply queues' queue manager
    (``dlh.DestQMgrName``) and their name prefix. A temporary dynamic queue
    holds nonpersistent messages only (IBM MQ, "Persistence (MQLONG)"), and
    servers reply with the request's persistence ("2048 (0800) (RC2048):
    MQRC_PERSISTENT_NOT_ALLOWED"): persistent requests asking for replies on
    a temporary dynamic queue never get them.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows, the columns :func:`unknown_destination` reads.
    model_prefixes : sequence of str
        Extra MQ-style patterns of temporary dynamic queue names (a model
        queue's DynamicQName), besides ``AMQ.*`` and ``CSQ.*``.
    min_messages : int, default 1
        Dead letters a group needs to be reported.
    recent : float, default 60
        Seconds before a known capture time within which the group's last dead
        letter makes it ``high`` (still arriving).
    capture_time : datetime, str or mapping, optional
        When the captures were taken (:func:`dlqlens.detect.common.capture_time_column`).

    Returns
    -------
    Findings
        ``(findings, links)`` (:class:`dlqlens.detect.findings.Findings`);
        findings, kind ``persistent_reply``, one per reply queue manager and
        prefix; ``queues`` holds the prefix pattern (``AMQ.*``). ``evidence``:
        ``reason``, ``reason_name``, ``reply_qmgr``, ``queue_prefix``,
        ``messages``, ``replies``, ``reports``, ``other`` (by MQMD MsgType),
        ``persistent`` (MQMD Persistence 1 as captured), ``distinct_queues``,
        ``senders`` (the responding applications' PutApplName, at most 10),
        ``users`` (at most 10).

    Raises
    ------
    ValueError
        When ``min_messages`` < 1.
    """
    from pyspark.sql import functions as F

    _check(min_messages)
    regex = glob_regex(tuple(TEMPORARY_QUEUE_PREFIXES) + tuple(model_prefixes))
    rows = _dead_letters(df, PERSISTENT_NOT_ALLOWED, regex, dynamic=True,
                         capture_time=capture_time)
    groups = rows.groupBy("DestQMgrName", "prefix").agg(
        *_common_aggregates(capture_time),
        F.countDistinct("DestQName").alias("distinct_queues"),
        F.sum(F.when(F.col("MsgType") == MQMT["MQMT_REPLY"], 1).otherwise(0)).alias("replies"),
        F.sum(F.when(F.col("MsgType") == MQMT["MQMT_REPORT"], 1).otherwise(0)).alias("reports"),
        F.sum(F.when(F.col("Persistence") == MQPER["MQPER_PERSISTENT"], 1).otherwise(0))
         .alias("persistent"),
    ).where(F.col("message_count") >= int(min_messages))
    count = F.col("message_count")
    ongoing, since = _ongoing(recent)
    on_qmgr = F.when(F.col("DestQMgrName") != "", F.col("DestQMgrName")) \
        .otherwise(F.lit("its queue manager"))
    statement = F.concat(
        F.format_string(
            "%d persistent message(s) (%d repl%s) for %d temporary dynamic queue(s) %s* on %s "
            "were refused with MQRC_PERSISTENT_NOT_ALLOWED (2048), sent by %s: a temporary "
            "dynamic queue holds nonpersistent messages only, and servers reply with the "
            "persistence of the request, so requesters that send persistent requests with a "
            "temporary reply queue never get their replies. Fix the requesting application: "
            "nonpersistent requests, or a permanent dynamic (model DEFTYPE(PERMDYN)) or "
            "predefined reply queue.",
            count, F.col("replies"),
            F.when(F.col("replies") == 1, F.lit("y")).otherwise(F.lit("ies")),
            F.col("distinct_queues"), F.col("prefix"), on_qmgr,
            F.when(F.size("senders") > 0, F.array_join("senders", ", "))
             .otherwise(F.lit("unnamed applications"))),
        _still_arriving(ongoing, since))
    evidence = F.struct(
        F.lit(PERSISTENT_NOT_ALLOWED).alias("reason"),
        F.lit("MQRC_PERSISTENT_NOT_ALLOWED").alias("reason_name"),
        F.col("DestQMgrName").alias("reply_qmgr"), F.col("prefix").alias("queue_prefix"),
        count.cast("long").alias("messages"),
        F.col("replies").cast("long").alias("replies"),
        F.col("reports").cast("long").alias("reports"),
        (count - F.col("replies") - F.col("reports")).cast("long").alias("other"),
        F.col("persistent").cast("long").alias("persistent"),
        F.col("distinct_queues"), F.col("senders"), F.col("users"),
    )
    severity = F.when(ongoing, "high").otherwise("medium")
    def finding_id():
        return finding_id_column("persistent_reply", "DestQMgrName", "prefix")

    findings = groups.select(*finding_columns(
        finding_id=finding_id(), kind="persistent_reply", severity=severity,
        queues=F.array(F.concat(F.col("prefix"), F.lit("*"))),
        window_start=F.col("first"), window_end=F.col("last"), message_count=count,
        evidence=evidence, statement=statement))
    return Findings(findings, link_rows(rows.withColumn("finding_id", finding_id()), findings))


__all__ = ["persistent_reply", "unknown_destination"]
