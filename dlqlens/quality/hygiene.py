"""The hygiene suite: what an auditor checks on a dead-letter queue.

IBM's advice on the DLQ handler ("Ensuring that all DLQ messages are
processed", and "How the rules table is processed" in "The DLQ handler rules
table") is to keep the DLQ as empty as possible: messages nobody deals with
build up, the handler's work grows and the DLQ itself can fill. The checks,
each with a threshold of :class:`dlqlens.quality.policy.Policy`:

``hygiene.max_age``
    no dead letter has been on the DLQ (MQDLH PutDate/PutTime) longer than
    ``max_age_seconds`` when the capture was taken.
``hygiene.fall_through``
    (with a rules table) at most ``max_fall_through`` messages fall through
    to the implicit ACTION(IGNORE): no rule matches, or every matching rule
    exhausted its RETRY (the replay of :mod:`dlqlens.rules.replay`).
``hygiene.finding.<kind>``
    no finding of each forbidden kind (:mod:`dlqlens.detect`): backout loop,
    trigger storm, trigger failure, expiry build-up, orphaned reply by default.
``hygiene.without_dlh``
    at most ``max_without_dlh`` messages on the DLQ without an MQDLH (the
    handler reports them and never processes them).
``hygiene.persistent_share``
    at least ``min_persistent_share`` of the DLQ's messages persistent
    (``md.Persistence`` = MQPER_PERSISTENT).
``hygiene.depth``
    (with queue definitions) each DLQ capture's depth at most
    ``max_depth_fraction`` of the DLQ's MAXDEPTH.

The DLQ's rows are those of the captures audited as the DLQ; other captures
(an application, backout or initiation queue beside it) feed the detectors
only.
"""

from __future__ import annotations

from dlqlens.mq.constants import MQPER
from dlqlens.quality.checks import Check
from dlqlens.spark.columns import sql_literal
from dlqlens.spark.driver import local_frame

#: Why a replayed message stays on the DLQ by the implicit ACTION(IGNORE)
#: (dlqlens.rules.handler LEFT_REASONS).
IMPLICIT_IGNORE = ("no_match", "rules_exhausted")


def hygiene_checks(policy, *, rules: bool = False, queue_defs: bool = False) -> list[Check]:
    """The hygiene suite's checks under ``policy``.

    Parameters
    ----------
    policy : Policy
    rules : bool
        Include the fall-through check (a rules table is given).
    queue_defs : bool
        Include the depth check (queue definitions are given).

    Returns
    -------
    list of Check
    """
    p = policy
    checks = [Check(
        "hygiene.max_age", "hygiene", "age_seconds", "age_seconds",
        "ExpectColumnMaxToBeBetween", {"max_value": float(p.max_age_seconds)},
        f"<= {p.max_age_seconds:g} s", "seconds from the MQDLH put (dlh_put_ts) to the capture "
        "time; the oldest dead letter is observed", frame="dlq", row_predicate=False)]
    if rules:
        reasons = ", ".join(sql_literal(r) for r in IMPLICIT_IGNORE)
        checks.append(Check(
            "hygiene.fall_through", "hygiene", "left_reason",
            f"CASE WHEN left_reason IN ({reasons}) THEN 1 ELSE 0 END",
            "ExpectColumnSumToBeBetween", {"max_value": int(p.max_fall_through)},
            f"<= {p.max_fall_through} message(s)", "messages the rules table leaves to the "
            "implicit ACTION(IGNORE) (no rule matches, or all matching rules exhausted)",
            frame="replay"))
    for kind in p.forbidden_findings:
        checks.append(Check(
            f"hygiene.finding.{kind}", "hygiene", "kind",
            f"CASE WHEN kind = {sql_literal(kind)} THEN 1 ELSE 0 END",
            "ExpectColumnSumToBeBetween", {"max_value": 0}, "0 finding(s)",
            f"findings of the {kind} detector", frame="findings"))
    checks.append(Check(
        "hygiene.without_dlh", "hygiene", "dlh", "CASE WHEN dlh IS NULL THEN 1 ELSE 0 END",
        "ExpectColumnSumToBeBetween", {"max_value": int(p.max_without_dlh)},
        f"<= {p.max_without_dlh} message(s)", "messages on the DLQ that do not begin with an "
        "MQDLH", frame="dlq"))
    checks.append(Check(
        "hygiene.persistent_share", "hygiene", "md.Persistence", "md.Persistence",
        "ExpectColumnValuesToBeInSet",
        {"value_set": [MQPER["MQPER_PERSISTENT"]], "mostly": float(p.min_persistent_share)},
        f">= {p.min_persistent_share:g} persistent", "share of the DLQ's messages with "
        "md.Persistence MQPER_PERSISTENT (1)", frame="dlq"))
    if queue_defs:
        checks.append(Check(
            "hygiene.depth", "hygiene", "depth / MAXDEPTH", "depth_fraction",
            "ExpectColumnMaxToBeBetween", {"max_value": float(p.max_depth_fraction)},
            f"<= {p.max_depth_fraction:g} of MAXDEPTH", "messages in each DLQ capture over the "
            "DLQ's MAXDEPTH", frame="depth"))
    return checks


def dlq_frame(df, dlq_sources=None, capture_time=None):
    """The DLQ's rows of capture DataFrame ``df``, with ``age_seconds``.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows.
    dlq_sources : collection of str, optional
        The ``source`` values of the DLQ captures; default: every row.
    capture_time : datetime, str or mapping, optional
        When the captures were taken
        (:func:`dlqlens.detect.common.capture_time_column`); default each
        capture's newest put, by a window over each capture's rows unless a
        :class:`dlqlens.detect.common.NewestPutTimes` holds them
        (:func:`dlqlens.detect.common.with_newest_puts`, as the audit does).

    Returns
    -------
    pyspark.sql.DataFrame
        ``df``'s columns plus ``age_seconds`` (double, seconds from
        ``dlh_put_ts`` to the capture time; null without an MQDLH put time).
    """
    from pyspark.sql import functions as F

    from dlqlens.detect.common import capture_time_column

    rows = df if dlq_sources is None else df.where(F.col("source").isin(sorted(dlq_sources)))
    taken = capture_time_column(capture_time)
    age = (F.unix_micros(taken) - F.unix_micros(F.col("dlh_put_ts"))) / F.lit(1e6)
    return rows.withColumn("age_seconds", age)


def depth_frame(spark, depths: dict, dlq_queues: dict, queue_defs):
    """Depth of each DLQ capture against its MAXDEPTH (a small DataFrame).

    Parameters
    ----------
    depths : dict of str to int
        Messages per DLQ capture (``source``).
    dlq_queues : dict of str to str
        The DLQ's queue name per ``source`` (banner, manifest, or the queue
        definitions' DEADQ); sources not listed have no known queue.
    queue_defs : Definitions
        :func:`dlqlens.mq.mqsc.read_queue_defs`.

    Returns
    -------
    pyspark.sql.DataFrame
        ``source``, ``queue`` (null: not known), ``depth`` (long),
        ``maxdepth`` (int, null: the queue is not defined), ``depth_fraction``
        (double, null when MAXDEPTH is not known).
    """
    rows = []
    for source, depth in sorted(depths.items()):
        queue = dlq_queues.get(source)
        definition = queue_defs.get(queue) if queue else None
        maxdepth = definition.get("maxdepth") if definition is not None else None
        maxdepth = int(maxdepth) if maxdepth not in (None, "") else None
        fraction = depth / maxdepth if maxdepth else None
        rows.append((source, queue, int(depth), maxdepth, fraction))
    return local_frame(  # an Arrow table: reading it starts no Python worker
        spark, rows, "source string, queue string, depth long, maxdepth int, depth_fraction double")


__all__ = ["IMPLICIT_IGNORE", "depth_frame", "dlq_frame", "hygiene_checks"]
