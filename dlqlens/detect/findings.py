"""The one shape every detector's findings take.

A findings DataFrame has exactly the columns of :data:`FINDINGS_SCHEMA`, in that
order, whatever detector produced it, so that findings of several detectors can
be unioned, sorted most severe first and shown, exported (``dlqlens detect
--jsonl``) or joined back to the message rows they point at.

Columns
-------
kind : string
    What pattern this is: ``backout_loop``, ``trigger_storm``,
    ``trigger_failure``, ``expiry_buildup``, ``orphaned_reply``,
    ``reason_burst``, ``unknown_destination``, ``persistent_reply`` (the
    names the simulator's ground truth uses).
severity : string
    ``critical``, ``high``, ``medium``, ``low`` or ``info``, by the scale of
    :data:`SEVERITY_SCALE`.
severity_rank : int
    0 for ``critical`` ... 4 for ``info``; sort ascending for most severe first.
queues : array<string>
    The queue(s) involved (blank padding trimmed), most relevant first.
window_start, window_end : timestamp (UTC)
    First and last instant of the evidence (usually put times); null when the
    messages carry no usable time.
message_count : long
    Number of messages in ``messages``.
messages : array<struct<source: string, message_number: int>>
    The message rows involved, by the provenance columns of the capture
    DataFrame (join on ``source`` and ``message_number`` to get them back).
evidence : string
    A JSON object holding the numbers that triggered the finding (counts,
    rates per second, thresholds, ...). JSON keeps each detector's evidence
    its own shape while the column type stays the same for all detectors.
statement : string
    One or two plain-language sentences an MQ administrator can read.
"""

from __future__ import annotations

import json

#: Severity names, most severe first; the index is ``severity_rank``.
SEVERITIES = ("critical", "high", "medium", "low", "info")

#: What each severity means; every detector assigns severities by this scale
#: (``docs/detectors.md``, "Severity", says which finding gets which). "Still
#: going when the capture was taken" is said only when the capture's time is
#: known (given, or a dmpmqmsg banner), never from the newest put alone.
SEVERITY_SCALE = {
    "critical": "messages are being lost, or will be soon",
    "high": "a failure still going when the capture was taken",
    "medium": "an incident that ended, or whose end the capture cannot show, and needs a fix",
    "low": "hygiene",
    "info": "context that asks for nothing",
}

#: Spark DDL of a findings DataFrame (the column order is part of the contract).
FINDINGS_SCHEMA = (
    "kind string, severity string, severity_rank int, queues array<string>, "
    "window_start timestamp, window_end timestamp, message_count long, "
    "messages array<struct<source:string,message_number:int>>, "
    "evidence string, statement string"
)

FINDINGS_COLUMNS = ("kind", "severity", "severity_rank", "queues", "window_start",
                    "window_end", "message_count", "messages", "evidence", "statement")

#: The kinds of finding (also the simulator's ground-truth ``pattern`` values).
KINDS = ("backout_loop", "trigger_storm", "trigger_failure", "expiry_buildup",
         "orphaned_reply", "reason_burst", "unknown_destination", "persistent_reply")


def severity_rank(severity: str) -> int:
    """``SEVERITIES.index(severity)``; raises ValueError naming the choices."""
    try:
        return SEVERITIES.index(severity)
    except ValueError:
        raise ValueError(f"severity {severity!r} is not one of {', '.join(SEVERITIES)}") from None


def severity_rank_column(severity_col):
    """A Spark column expression mapping a severity name column to its rank."""
    from pyspark.sql import functions as F

    expr = F.lit(len(SEVERITIES))
    for i, name in reversed(list(enumerate(SEVERITIES))):
        expr = F.when(severity_col == F.lit(name), F.lit(i)).otherwise(expr)
    return expr.cast("int")


def finding_columns(*, kind, severity, queues, window_start, window_end, messages,
                    evidence, statement):
    """Spark column expressions for one findings row, in :data:`FINDINGS_SCHEMA` order.

    Each argument is a Spark Column (or a Python value, taken as a literal):
    ``queues`` an array of strings, ``messages`` an array of
    ``struct(source, message_number)``, ``evidence`` a struct or map (it is
    written as JSON with ``to_json``) or a string already holding JSON.
    Use as ``df.select(*finding_columns(...))``.
    """
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    def col(v):
        return v if isinstance(v, Column) else F.lit(v)

    severity_column = col(severity)
    # nulls kept, so that every finding of a detector has the same evidence keys
    evidence_json = F.lit(evidence) if isinstance(evidence, str) else F.to_json(
        evidence, {"ignoreNullFields": "false"})
    message_refs = col(messages).cast("array<struct<source:string,message_number:int>>")
    return [
        col(kind).cast("string").alias("kind"),
        severity_column.cast("string").alias("severity"),
        severity_rank_column(severity_column).alias("severity_rank"),
        col(queues).cast("array<string>").alias("queues"),
        col(window_start).cast("timestamp").alias("window_start"),
        col(window_end).cast("timestamp").alias("window_end"),
        F.size(message_refs).cast("long").alias("message_count"),
        message_refs.alias("messages"),
        evidence_json.cast("string").alias("evidence"),
        col(statement).cast("string").alias("statement"),
    ]


def empty_findings(spark):
    """An empty DataFrame with the findings schema."""
    return spark.createDataFrame([], FINDINGS_SCHEMA)


def conform(df):
    """``df`` with exactly the findings columns, in order and with their types.

    Raises
    ------
    ValueError
        When a column is missing, naming it.
    """
    from pyspark.sql import types as T

    target = T._parse_datatype_string(FINDINGS_SCHEMA)
    missing = [f.name for f in target.fields if f.name not in df.columns]
    if missing:
        raise ValueError(f"not a findings DataFrame: missing column(s) {', '.join(missing)}")
    return df.select(*[df[f.name].cast(f.dataType).alias(f.name) for f in target.fields])


def finding_record(row) -> dict:
    """One findings Row as the ``dlqlens detect --jsonl`` object.

    Keys: ``kind``, ``severity``, ``queues``, ``window_start``, ``window_end``
    (ISO 8601 UTC with ``Z``, or null), ``message_count``, ``messages`` (list of
    ``{source, message_number}``), ``evidence`` (the JSON object, parsed) and
    ``statement``.
    """
    def iso(ts):
        if ts is None:
            return None
        if ts.tzinfo is not None:
            from datetime import timezone
            ts = ts.astimezone(timezone.utc).replace(tzinfo=None)
        return ts.isoformat(timespec="microseconds") + "Z"

    record = row.asDict(recursive=True)
    return {
        "kind": record["kind"],
        "severity": record["severity"],
        "queues": list(record["queues"] or []),
        "window_start": iso(record["window_start"]),
        "window_end": iso(record["window_end"]),
        "message_count": record["message_count"],
        "messages": [{"source": m["source"], "message_number": m["message_number"]}
                     for m in (record["messages"] or [])],
        "evidence": json.loads(record["evidence"]) if record["evidence"] else {},
        "statement": record["statement"],
    }
