"""The one shape every detector's findings take: two DataFrames.

A detector returns :class:`Findings`, a pair of DataFrames:

``findings``
    One row per finding, exactly the columns of :data:`FINDINGS_SCHEMA`, in
    that order, whatever detector produced it, so that findings of several
    detectors can be unioned, sorted most severe first, shown and exported.
    A finding holds its message *count*, never its messages: a finding of a
    ten-million-message capture is one small row.
``links``
    One row per message of a finding, the columns of :data:`LINKS_SCHEMA`
    (``finding_id``, ``source``, ``message_number``): join it to the capture
    rows on ``source`` and ``message_number`` (a ``left_semi`` join for "the
    messages of this finding", ``left_anti`` for "the messages in no
    finding"), and to the findings on ``finding_id``. It is as long as the
    messages the findings cover: keep it in Spark, read it a page at a time
    (:func:`sample_links`).

Both are lazy; nothing comes to the driver until the caller asks for rows.

Finding ids
-----------
``finding_id`` is ``<kind>:<16 hex digits>``: the kind, then the first 64 bits
of the SHA-256 of the JSON of the detector's grouping key (the queue(s), the
signal, the reason, the burst's start...: :func:`finding_id_column`). The
same input and parameters give the same ids in every run, on every machine
and in every session time zone (timestamps enter the key as microseconds
since the epoch), so ids can be stored beside exported messages and
compared between runs. Findings of one kind have distinct keys, so their ids
differ (a collision of 64-bit hashes is not expected below billions of
findings). A finding whose grouping key stays the same while the capture
changes (the same queue, a later snapshot) keeps its id.

Columns of ``findings``
-----------------------
finding_id : string
    The stable id above; the key of ``links``.
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
    Number of rows of ``links`` with this ``finding_id`` (capture rows: a
    message seen in two snapshots counts twice).
evidence : string
    A JSON object holding the numbers that triggered the finding (counts,
    rates per second, thresholds, ...). JSON keeps each detector's evidence
    its own shape while the column type stays the same for all detectors.
statement : string
    One or two plain-language sentences an MQ administrator can read.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

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
    "finding_id string, kind string, severity string, severity_rank int, queues array<string>, "
    "window_start timestamp, window_end timestamp, message_count long, "
    "evidence string, statement string"
)

FINDINGS_COLUMNS = ("finding_id", "kind", "severity", "severity_rank", "queues", "window_start",
                    "window_end", "message_count", "evidence", "statement")

#: Spark DDL of a links DataFrame: one row per message of a finding.
LINKS_SCHEMA = "finding_id string, source string, message_number int"

LINKS_COLUMNS = ("finding_id", "source", "message_number")

#: Message references :func:`finding_record` lists per finding by default.
SAMPLE_SIZE = 10

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

    from dlqlens.spark.columns import literal_map

    ranks = literal_map({name: i for i, name in enumerate(SEVERITIES)}, "string", "int")
    return F.coalesce(ranks[severity_col], F.lit(len(SEVERITIES)))


class Findings(NamedTuple):
    """What a detector returns: the findings and the messages they point at.

    Unpack it (``findings, links = run_detectors(df)``) or use the fields.

    Attributes
    ----------
    findings : pyspark.sql.DataFrame
        One row per finding (:data:`FINDINGS_SCHEMA`).
    links : pyspark.sql.DataFrame
        One row per message of a finding (:data:`LINKS_SCHEMA`).
    """

    findings: Any
    links: Any

    def messages(self, df, finding_id: str | None = None):
        """The capture rows of ``df`` the findings point at (lazy, a ``left_semi``
        join with ``links``): every finding's, or one finding's."""
        from pyspark.sql import functions as F

        links = self.links
        if finding_id is not None:
            links = links.where(F.col("finding_id") == F.lit(str(finding_id)))
        return df.join(links.select("source", "message_number"),
                       ["source", "message_number"], "left_semi")

    def unexplained(self, df):
        """The capture rows of ``df`` in no finding (lazy, a ``left_anti`` join)."""
        return df.join(self.links.select("source", "message_number"),
                       ["source", "message_number"], "left_anti")


def links_of(found):
    """The links DataFrame of ``found``: a :class:`Findings`, or a links
    DataFrame itself (``finding_id``, ``source``, ``message_number``).

    Raises
    ------
    TypeError
        For anything else, a findings DataFrame above all: findings no longer
        carry their messages; pass the :class:`Findings` pair.
    """
    if isinstance(found, Findings):
        return found.links
    columns = set(getattr(found, "columns", ()) or ())
    if {"finding_id", "source", "message_number"} <= columns:
        return found
    raise TypeError("expected the Findings of dlqlens.detect.run_detectors (findings, links) or a "
                    f"links DataFrame (finding_id, source, message_number), not "
                    f"{type(found).__name__}" + (f" with columns {', '.join(sorted(columns))}"
                                                 if columns else ""))


def finding_id_column(kind: str, *keys):
    """The stable ``finding_id`` of a group: ``<kind>:`` and 16 hex digits.

    Parameters
    ----------
    kind : str
        The finding kind.
    *keys : str or pyspark.sql.Column
        The detector's grouping key, in a fixed order: column names (a
        top-level column each, no nested path) or Columns. Timestamps must
        be given as numbers (``F.unix_micros``): their text would depend on
        the session time zone. Names alone make the id one parsed SQL
        expression (one call to Spark, where a Column per function costs
        three round trips each to a classic session's JVM: about 60 a
        detector); the same expression, so the same ids, either way.

    Returns
    -------
    pyspark.sql.Column
        string: ``kind + ":" +`` the first 16 hex digits of the SHA-256 of
        the key's JSON (nulls kept, fields named ``k0``, ``k1``...).
    """
    from pyspark.sql import functions as F

    from dlqlens.spark.columns import sql_literal, sql_name

    if keys and all(isinstance(k, str) for k in keys):
        fields = ", ".join(f"'k{i}', {sql_name(k)}" for i, k in enumerate(keys))
        key = f"to_json(named_struct({fields}), map('ignoreNullFields', 'false'))"
        return F.expr(f"concat({sql_literal(kind + ':')}, substring(sha2({key}, 256), 1, 16))")
    keys = [F.col(k) if isinstance(k, str) else k for k in keys]
    key = F.to_json(F.struct(*[k.alias(f"k{i}") for i, k in enumerate(keys)]),
                    {"ignoreNullFields": "false"})
    return F.concat(F.lit(f"{kind}:"), F.substring(F.sha2(key, 256), 1, 16))


def persist_rows(rows, persisted):
    """A detector's per-row frame, cached for both of its readers when asked.

    A detector's findings aggregate a per-row frame (each message with the
    group or signal it shows) and its links are that frame's rows: read
    twice, once per DataFrame, so every window, shuffle and join that made
    it runs twice unless it is cached. A detector whose per-row frame costs
    more to build again than to cache (``backout_loop``'s two windows and
    join; measured, ``docs/performance.md``) passes it through this
    function with the ``persisted`` list of :func:`dlqlens.detect.run_detectors`.

    Parameters
    ----------
    rows : pyspark.sql.DataFrame
        The per-row frame (any columns).
    persisted : list or None
        None: nothing is cached (a caller that reads the findings or the
        links, not both). A list: ``rows`` is cached (Spark's default
        storage level, memory then disk) and appended; the caller
        unpersists it when done.

    Returns
    -------
    pyspark.sql.DataFrame
        ``rows``, cached when ``persisted`` is a list.
    """
    if persisted is None:
        return rows
    rows = rows.cache()
    persisted.append(rows)
    return rows


def link_rows(rows, findings, on: str = "finding_id"):
    """The links of ``findings``: ``rows`` (one per message of a group, with a
    ``finding_id`` column, ``source`` and ``message_number``) kept where the
    group became a finding (a ``left_semi`` join with the findings' ids,
    broadcast: findings are few). ``findings`` None: every group of ``rows``
    is a finding (a detector without a threshold on its groups), so every row
    is a link and no join is made.

    Returns
    -------
    pyspark.sql.DataFrame
        :data:`LINKS_SCHEMA`.
    """
    from pyspark.sql import functions as F

    from dlqlens.spark.columns import sql_name

    picked = rows.selectExpr(f"{sql_name(on)} AS finding_id", "source",
                             "CAST(message_number AS INT) AS message_number")
    if findings is None:
        return picked
    return picked.join(F.broadcast(findings.select("finding_id")), "finding_id", "left_semi")


def finding_columns(*, finding_id, kind, severity, queues, window_start, window_end,
                    message_count, evidence, statement):
    """Spark column expressions for one findings row, in :data:`FINDINGS_SCHEMA` order.

    Each argument is a Spark Column (or a Python value, taken as a literal):
    ``finding_id`` as :func:`finding_id_column` makes it, ``queues`` an array
    of strings, ``message_count`` the number of the finding's links,
    ``evidence`` a struct or map (it is written as JSON with ``to_json``) or
    a string already holding JSON.
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
    return [
        col(finding_id).cast("string").alias("finding_id"),
        col(kind).cast("string").alias("kind"),
        severity_column.cast("string").alias("severity"),
        severity_rank_column(severity_column).alias("severity_rank"),
        col(queues).cast("array<string>").alias("queues"),
        col(window_start).cast("timestamp").alias("window_start"),
        col(window_end).cast("timestamp").alias("window_end"),
        col(message_count).cast("long").alias("message_count"),
        evidence_json.cast("string").alias("evidence"),
        col(statement).cast("string").alias("statement"),
    ]


def empty_findings(spark) -> Findings:
    """Empty findings and links (their schemas, no rows)."""
    from dlqlens.spark.driver import local_frame

    return Findings(local_frame(spark, [], FINDINGS_SCHEMA), local_frame(spark, [], LINKS_SCHEMA))


def conform(df, schema: str = FINDINGS_SCHEMA):
    """``df`` with exactly the columns of ``schema`` (:data:`FINDINGS_SCHEMA`
    or :data:`LINKS_SCHEMA`), in order and with their types.

    Raises
    ------
    ValueError
        When a column is missing, naming it.
    """
    from dlqlens.spark.columns import sql_name
    from dlqlens.spark.driver import parsed_schema

    target = parsed_schema(schema)
    what = "links" if schema == LINKS_SCHEMA else "findings"
    have = df.schema.fields
    names = {f.name for f in have}
    missing = [f.name for f in target.fields if f.name not in names]
    if missing:
        raise ValueError(f"not a {what} DataFrame: missing column(s) {', '.join(missing)}")
    if [(f.name, f.dataType) for f in have] == [(f.name, f.dataType) for f in target.fields]:
        # conformed already (a detector's finding_columns and link_rows give these columns in
        # this order with these types): no projection to analyse
        return df
    # one parsed expression per column (a Column built per column costs several JVM round trips)
    return df.selectExpr(*[f"CAST({sql_name(f.name)} AS {f.dataType.simpleString()}) AS "
                           f"{sql_name(f.name)}" for f in target.fields])


def sample_links(links, n: int = SAMPLE_SIZE, finding_ids=None):
    """The first ``n`` messages of each finding, by ``source`` then
    ``message_number``: what a page, a report or ``--jsonl`` lists.

    Parameters
    ----------
    links : pyspark.sql.DataFrame
        :data:`LINKS_SCHEMA`.
    n : int
        Messages kept per finding (at least 1).
    finding_ids : iterable of str, optional
        Only these findings.

    Returns
    -------
    pyspark.sql.DataFrame
        ``finding_id string, messages array<struct<source string,
        message_number int>>`` (sorted, at most ``n`` each); one row per
        finding with links. A Spark window with a row limit, so each
        partition keeps at most ``n`` rows per finding before the shuffle.

    Raises
    ------
    ValueError
        When ``n`` < 1.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if int(n) < 1:
        raise ValueError(f"n must be 1 or more, not {n}")
    if finding_ids is not None:
        links = links.where(F.col("finding_id").isin([str(i) for i in finding_ids]))
    order = Window.partitionBy("finding_id").orderBy("source", "message_number")
    first = links.withColumn("_rank", F.row_number().over(order)).where(F.col("_rank") <= int(n))
    return first.groupBy("finding_id").agg(F.array_sort(F.collect_list(
        F.struct("source", "message_number"))).alias("messages"))


def finding_record(row, messages=None) -> dict:
    """One findings Row as the ``dlqlens detect --jsonl`` object.

    Parameters
    ----------
    row : Row or mapping
        A row of a findings DataFrame.
    messages : iterable, optional
        The finding's sampled message references (:func:`sample_links`),
        ``{source, message_number}`` rows or mappings; a ``messages`` field
        of ``row`` is taken when this is not given.

    Returns
    -------
    dict
        Keys: ``finding_id``, ``kind``, ``severity``, ``queues``,
        ``window_start``, ``window_end`` (ISO 8601 UTC with ``Z``, or null),
        ``message_count`` (all of the finding's messages), ``messages`` (the
        sample: a list of at most :data:`SAMPLE_SIZE` ``{source,
        message_number}`` by default, the first by source and number; empty
        when none was given), ``evidence`` (the JSON object, parsed) and
        ``statement``.
    """
    def iso(ts):
        if ts is None:
            return None
        if ts.tzinfo is not None:
            from datetime import timezone
            ts = ts.astimezone(timezone.utc).replace(tzinfo=None)
        return ts.isoformat(timespec="microseconds") + "Z"

    record = dict(row) if isinstance(row, dict) else row.asDict(recursive=True)
    if messages is None:
        messages = record.get("messages")

    def ref(m):
        m = m if isinstance(m, dict) else m.asDict()
        return {"source": m["source"], "message_number": m["message_number"]}

    return {
        "finding_id": record.get("finding_id"),
        "kind": record["kind"],
        "severity": record["severity"],
        "queues": list(record["queues"] or []),
        "window_start": iso(record["window_start"]),
        "window_end": iso(record["window_end"]),
        "message_count": record["message_count"],
        "messages": [ref(m) for m in (messages or [])],
        "evidence": json.loads(record["evidence"]) if record["evidence"] else {},
        "statement": record["statement"],
    }
