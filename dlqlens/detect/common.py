"""Column helpers shared by the detectors (no detector lives here).

Every helper returns Spark column expressions or small DataFrames: nothing
here collects a capture.

The captured queue
------------------
A capture DataFrame says which file each row came from (``source``) but not
which queue was browsed. :func:`with_capture_queues` takes it from a
``capture_queues`` mapping (file name or path -> queue name, or -> ``(queue
manager, queue)``): the command line builds one from the files' own banners
(:func:`dlqlens.capture.reader.captured_queues`: dmpmqmsg's ``* Qmgr`` and
``* Queue`` lines, amqsbcg's ``MQOPEN`` line), and a caller may give one.
Files it does not list are named as ``dlqlens simulate`` and the usual
``<qmgr>_<queue>.<ext>`` naming write them (``QM.APP_PAYMENTS.BOQ.raw`` ->
``PAYMENTS.BOQ``). Dead letters are recognised by their MQDLH, never by the
queue name.

Captures are snapshots of one queue (compared in time order, e.g. by the
expiry detector) when their capture key (``capture_key`` of
:func:`with_capture_queues`) agrees: the same queue manager and queue, from a
banner or a ``<qmgr>_<queue>`` file name; the same queue name when the
caller's mapping gives it. A banner that names the queue
but not its queue manager (amqsbcg) counts only with a file name naming the
same queue: every queue manager has a SYSTEM.DEAD.LETTER.QUEUE.

Capture time
------------
:func:`capture_time_column` is the instant a capture (one ``source``) was
taken: the time the caller gives (one for every capture, or one per file, as
the command line reads them from dmpmqmsg banners), else the latest put time
found in that capture (``put_ts`` or ``dlh_put_ts``). A browse does not
record when it ran, and the newest put is only a lower bound: a detector may
say that something was "still going when the capture was taken" only when
:func:`capture_time_known_column` is true for its rows, and its statement says
where the time came from (:func:`capture_time_aggregates`, after its
aggregation).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping

from dlqlens.capture.reader import to_utc  # (plots and commands import it from here too)
from dlqlens.spark.columns import literal_map, sql_literal, sql_name
from dlqlens.spark.driver import local_frame

#: Mappings of at most this many files are looked up in a literal map by
#: :func:`with_capture_queues`; larger ones are joined as a broadcast table.
MAPPED_FILES = 64

#: File name extensions stripped before reading a queue name out of a capture's name.
CAPTURE_EXTENSIONS = ("raw", "dmp", "bcg", "txt", "out", "log", "bin", "dat", "msg", "qmsg")


def _file_name_queue(source: str = "source"):
    """``(base name, queue, capture key)`` of a capture by its file name
    (see the module docstring), of the column named ``source``: the key is
    ``qmgr|queue`` for a ``<qmgr>_<queue>`` name, the name itself otherwise."""
    from pyspark.sql import functions as F

    # string functions, not regular expressions: evaluated for every row of a capture; written
    # as SQL text, parsed once each (a Column per function costs three JVM round trips each)
    base = _base_name_sql(source)
    ext = f"substring_index({base}, '.', -1)"
    extensions = ", ".join(sql_literal(e) for e in CAPTURE_EXTENSIONS)
    stem = (f"CASE WHEN contains({base}, '.') AND {ext} IN ({extensions}) "
            f"THEN substr({base}, 1, length({base}) - length({ext}) - 1) ELSE {base} END")
    named = f"contains({stem}, '_')"
    queue = f"CASE WHEN {named} THEN substr({stem}, instr({stem}, '_') + 1, length({stem})) " \
            f"ELSE {stem} END"
    key = f"CASE WHEN {named} THEN concat(substring_index({stem}, '_', 1), '|', {queue}) " \
          f"ELSE {stem} END"
    return F.expr(base), F.expr(queue), F.expr(key)


def _base_name_sql(source: str) -> str:
    """A path's last part, after its last ``/`` or ``\\`` (the whole path
    without either; empty when it ends with one), of the column named
    ``source``, as SQL text."""
    return (f"substring_index(substring_index({sql_name(source)}, '/', -1), "
            f"{sql_literal(chr(92))}, -1)")


def _base_name(source: str = "source"):
    """:func:`_base_name_sql` as a Column."""
    from pyspark.sql import functions as F

    return F.expr(_base_name_sql(source))


def _entries(capture_queues):
    """``capture_queues`` as three tables: queue name by source; capture key
    by source where the entry alone gives it (a plain name: the name; a
    banner with both: ``qmgr|queue``); queue by source for banners without a
    queue manager (their key depends on the file name)."""
    names, keys, no_qmgr = {}, {}, {}
    for source, entry in (capture_queues or {}).items():
        if isinstance(entry, str):
            names[source] = keys[source] = entry
            continue
        qmgr, queue = entry
        names[source] = queue
        if qmgr is None:
            no_qmgr[source] = queue
        else:
            keys[source] = f"{qmgr}|{queue}"
    return names, keys, no_qmgr


def with_capture_queues(rows, capture_queues: Mapping | None = None):
    """``rows`` plus the captured queue of each row's ``source``.

    Parameters
    ----------
    rows : pyspark.sql.DataFrame
        Any rows with a ``source`` column (a file path or name) and no
        column named ``capture_queue`` or ``capture_key``.
    capture_queues : mapping, optional
        By source (the full ``source`` value or its base name): a queue
        name, or ``(queue manager or None, queue)`` as
        :func:`dlqlens.capture.reader.captured_queues` gives them. Sources it
        does not list fall back to the file-name rule. A mapping of up to
        :data:`MAPPED_FILES` files is looked up in a literal map (no join,
        no Spark job to broadcast it); a larger one is joined as a small
        broadcast table, so a mapping of thousands of files does not grow
        the query's expressions.

    Returns
    -------
    pyspark.sql.DataFrame
        ``rows`` with two string columns:

        ``capture_queue``
            The queue's name; by the file-name rule, the part of the base
            name after the first ``_`` with a known capture extension
            (:data:`CAPTURE_EXTENSIONS`) removed, or the whole base name
            when it holds no ``_``.
        ``capture_key``
            Captures whose ``capture_key`` agrees are snapshots of one
            queue. ``qmgr|queue`` for a ``(queue manager, queue)`` entry
            and for a ``<qmgr>_<queue>`` file name; the queue name for a
            plain name (the caller's word) and for a file name without
            ``_``. A ``(None, queue)`` entry (a banner that does not name the
            queue manager, as amqsbcg's) takes the file name's key when the
            file name names the same queue, and is otherwise nobody's
            snapshot but its own (every queue manager has a
            SYSTEM.DEAD.LETTER.QUEUE).
    """
    from pyspark.sql import functions as F

    base, guessed, file_key = _file_name_queue()
    names, keys, no_qmgr = _entries(capture_queues)
    fields = ("name", "key", "queue_without_qmgr")
    if names and len(names) <= MAPPED_FILES:
        # a few files: looked up in a literal map (no join, so no broadcast job)
        def lookup(table):
            mapped = literal_map({k: str(table[k]) for k in sorted(table)})
            return F.coalesce(mapped[F.col("source")], mapped[base])

        name, key, queue_without_qmgr = (lookup(t) for t in (names, keys, no_qmgr))
    elif names:
        table = local_frame(
            rows.sparkSession, [(s, names[s], keys.get(s), no_qmgr.get(s)) for s in names],
            "file string, name string, key string, queue_without_qmgr string")
        rows = rows.withColumn("_capture_base", base)
        for on, by in (("source", "by_source"), ("_capture_base", "by_base")):
            rows = rows.join(F.broadcast(table.select(
                F.col("file").alias(on),
                *[F.col(c).alias(f"_capture_{c}_{by}") for c in fields])),
                on, "left")
        name, key, queue_without_qmgr = (
            F.coalesce(f"_capture_{c}_by_source", f"_capture_{c}_by_base") for c in fields)
    else:
        name = key = queue_without_qmgr = F.lit(None).cast("string")
    own = (F.when(queue_without_qmgr == guessed, file_key)
           .when(queue_without_qmgr.isNotNull(), F.concat(F.lit("source|"), F.col("source"))))
    return rows.select(*[c for c in rows.columns if not c.startswith("_capture_")],
                       F.coalesce(name, guessed).alias("capture_queue"),
                       F.coalesce(key, own, file_key).alias("capture_key"))


def _capture_time_map(capture_time):
    """``capture_time`` as ``{source or base name: naive UTC datetime}``, or
    None for one time given for every capture (or none)."""
    if capture_time is None or not isinstance(capture_time, Mapping):
        return None
    return {str(k): to_utc(v) for k, v in capture_time.items() if v is not None}


def utc_literal(value):
    """A timestamp literal Column of ``value`` (datetime or ISO 8601 string, naive = UTC).

    Built from microseconds since the epoch: ``F.lit(datetime)`` would read a
    naive datetime in the driver's local time zone.
    """
    from pyspark.sql import functions as F

    return F.timestamp_micros(F.lit(_epoch_micros(value)))


def _epoch_micros(value) -> int:
    """``value`` (datetime or ISO 8601 string, naive = UTC) in microseconds since the epoch."""
    return (to_utc(value) - _dt.datetime(1970, 1, 1)) // _dt.timedelta(microseconds=1)


def _mapped(capture_time):
    """The given capture time of each row's source (null where none is given)."""
    from pyspark.sql import functions as F

    table = _capture_time_map(capture_time)
    if table is None:
        if capture_time is None:
            return F.lit(None).cast("timestamp")
        return utc_literal(capture_time)
    if not table:
        return F.lit(None).cast("timestamp")
    lookup = literal_map({k: _epoch_micros(v) for k, v in sorted(table.items())}, "string",
                         "bigint")
    base = _base_name()
    return F.timestamp_micros(F.coalesce(lookup[F.col("source")], lookup[base]))


def capture_time_column(capture_time=None):
    """The capture instant of each row's capture (UTC timestamp).

    Parameters
    ----------
    capture_time : datetime, str or mapping, optional
        The real time of the capture: one for every source (naive datetimes
        are taken as UTC; strings as ISO 8601), or a mapping of source (the
        full ``source`` value or its base name) to such a time, as
        :func:`dlqlens.capture.reader.captured_times` reads them from the
        files' banners. Sources without a given time take the latest put
        time (``put_ts`` or ``dlh_put_ts``) within the row's ``source``:
        looked up in a literal map when ``capture_time`` is a
        :class:`NewestPutTimes` (:func:`with_newest_puts`), else a window.

    Returns
    -------
    pyspark.sql.Column
        timestamp; a window over ``source`` where the time is not given and
        no :class:`NewestPutTimes` holds it (every row of a one-file capture
        in one task: use :func:`with_newest_puts` first on a large capture).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if capture_time is not None and not isinstance(capture_time, Mapping):
        return utc_literal(capture_time)
    if isinstance(capture_time, NewestPutTimes):
        # the newest puts computed already: a literal map, no window
        looked_up = capture_time.newest_put_micros
        newest = (F.timestamp_micros(literal_map(looked_up, "string", "bigint")[F.col("source")])
                  if looked_up else F.lit(None).cast("timestamp"))
        return F.coalesce(_mapped(capture_time), newest)
    latest = F.greatest(F.col("put_ts"), F.col("dlh_put_ts"))
    return F.coalesce(_mapped(capture_time), F.max(latest).over(Window.partitionBy("source")))


def newest_puts(df):
    """The newest put of each capture: ``source``, ``newest_put`` (timestamp,
    the latest ``put_ts`` or ``dlh_put_ts`` of its rows).

    One aggregation (partial aggregates per partition, then one row per
    source), where a window over ``source`` would sort every row of a capture
    in one task. The plan is the same for every detector over one ``df``, so
    the detectors run together (:func:`dlqlens.detect.run_detectors`) compute
    it once (Spark reuses the exchange).
    """
    from pyspark.sql import functions as F

    return (df.select("source", F.greatest(F.col("put_ts"), F.col("dlh_put_ts")).alias("_put"))
            .groupBy("source").agg(F.max("_put").alias("newest_put")))


def with_capture_times(rows, df, capture_time=None):
    """``rows`` plus the capture time of each row's capture.

    Parameters
    ----------
    rows : pyspark.sql.DataFrame
        Rows with a ``source`` column taken from ``df`` (filtered, projected:
        a detector's rows), and no column named ``captured``,
        ``captured_known`` or ``newest_put``.
    df : pyspark.sql.DataFrame
        The whole capture ``rows`` came from: the newest put of each capture
        is taken over all its rows (:func:`newest_puts`).
    capture_time : datetime, str or mapping, optional
        As :func:`capture_time_column`.

    Returns
    -------
    pyspark.sql.DataFrame
        ``rows`` with ``captured`` (timestamp, UTC: the values of
        :func:`capture_time_column`) and ``captured_known`` (bool,
        :func:`capture_time_known_column`). Where a time came from is said of
        a group of rows, after the detector's aggregation
        (:func:`capture_time_aggregates`), not carried as text on every row.
        When one time is given for every capture no join is made, nor when
        ``capture_time`` holds the newest puts already
        (:func:`with_newest_puts`: looked up in a literal map); otherwise
        the newest puts (one row per capture) are joined, broadcast, on
        ``source``.
    """
    from pyspark.sql import functions as F

    known = capture_time_known_column(capture_time)
    if ((capture_time is not None and not isinstance(capture_time, Mapping))
            or isinstance(capture_time, NewestPutTimes)):
        # one time for all, or the newest puts computed already (with_newest_puts): no join
        return rows.select("*", capture_time_column(capture_time).alias("captured"),
                           known.alias("captured_known"))
    rows = rows.join(F.broadcast(newest_puts(df)), "source", "left")
    return rows.select(*[c for c in rows.columns if c != "newest_put"],
                       F.coalesce(_mapped(capture_time), F.col("newest_put")).alias("captured"),
                       known.alias("captured_known"))


def capture_time_known_column(capture_time=None):
    """True where the row's capture time was given (by the caller or a
    banner), false where it is only the capture's newest put."""
    return _mapped(capture_time).isNotNull()


#: How :func:`capture_time_aggregates` words each origin.
CAPTURE_TIME_ORIGINS = {
    "given": "the capture time given",
    "banner": "the capture time from its dmpmqmsg banner",
    "newest_put": "the capture's newest put (the capture holds no time of its own)",
}


class CaptureTimes(dict):
    """Capture times by source (file path or base name), with where they came
    from: ``origin`` ``"banner"`` (dmpmqmsg's ``Created:`` line, read by
    :func:`dlqlens.capture.reader.captured_times`) or ``"given"``. A plain
    mapping counts as given."""

    def __init__(self, times=(), origin: str = "given"):
        super().__init__(times)
        if origin not in CAPTURE_TIME_ORIGINS or origin == "newest_put":
            raise ValueError(f"origin must be 'given' or 'banner', not {origin!r}")
        self.origin = origin


def capture_time_origin(capture_time) -> str:
    """``"given"`` or ``"banner"``: where the times of ``capture_time`` came from."""
    return getattr(capture_time, "origin", "given")


#: Captures (distinct ``source`` values) up to which :func:`with_newest_puts`
#: hands their newest puts to the detectors as a literal map. A directory of
#: captured files holds a few to a few hundred; beyond this bound the detectors
#: join the newest puts instead.
NEWEST_PUT_SOURCES = 10_000


class NewestPutTimes(CaptureTimes):
    """Capture times (given, or from banners, as :class:`CaptureTimes`) plus
    the newest put of every capture of one DataFrame, computed once
    (:func:`with_newest_puts`). The captures are named by ``source``: an
    analysis of a part of those captures' rows takes their newest puts as a
    detector takes them, over all the capture's rows; a capture not listed
    has no known newest put (null).

    Attributes
    ----------
    origin : str
        Where the given times came from (``"given"`` or ``"banner"``).
    newest_put_micros : dict of str to int or None
        ``source`` -> its newest put (``put_ts`` or ``dlh_put_ts``), in
        microseconds since the epoch (UTC); None for a capture whose rows
        hold no put time.
    """

    def __init__(self, times, origin: str, newest_put_micros):
        super().__init__(times, origin)
        self.newest_put_micros = dict(newest_put_micros)


def with_newest_puts(df, capture_time=None, *, limit: int = NEWEST_PUT_SOURCES):
    """``capture_time`` plus the newest put of each capture of ``df``, for
    several detectors over the same ``df`` (:func:`dlqlens.detect.run_detectors`).

    Each detector takes the capture time of a capture without one from its
    newest put (:func:`with_capture_times`); alone, a detector joins the
    capture's aggregate :func:`newest_puts` to its rows, so eight detectors
    plan eight self-joins of the capture and scan it eight more times. Run
    here once, the newest puts reach every detector as a literal map.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The capture the detectors run over (``source``, ``put_ts``,
        ``dlh_put_ts``).
    capture_time : datetime, str or mapping, optional
        As :func:`capture_time_column`.
    limit : int
        At most this many captures (distinct ``source`` values) are
        collected.

    Returns
    -------
    NewestPutTimes or the given ``capture_time``
        A :class:`NewestPutTimes` holding ``capture_time``'s times and origin
        (none when it is None) and every capture's newest put: one Spark
        query (an aggregation by ``source``; at most ``limit + 1`` rows reach
        the driver). ``capture_time`` itself, with no query run, when it is
        one time for every capture (no newest put is read), when it is a
        :class:`NewestPutTimes` already (a caller that computed them once
        over the whole capture for several analyses: the audit), or when
        ``df`` holds more than ``limit`` captures (the detectors then join
        them).
    """
    from pyspark.sql import functions as F

    if not _takes_newest_puts(capture_time):
        return capture_time
    rows = (newest_puts(df).where(F.col("source").isNotNull())
            .select("source", F.unix_micros("newest_put").alias("micros"))
            .limit(limit + 1).collect())
    return newest_put_times(capture_time, {r["source"]: r["micros"] for r in rows}, limit=limit)


def _takes_newest_puts(capture_time) -> bool:
    """Whether the detectors read newest puts with ``capture_time``: none
    given, or times for some captures only, not computed already."""
    return (capture_time is None or isinstance(capture_time, Mapping)) and \
        not isinstance(capture_time, NewestPutTimes)


def newest_put_times(capture_time, newest_put_micros, *, limit: int = NEWEST_PUT_SOURCES):
    """:func:`with_newest_puts`' answer from newest puts a caller computed
    already (the report: in its summary's aggregation, by ``source``).

    Parameters
    ----------
    capture_time : datetime, str or mapping, optional
        As :func:`capture_time_column`.
    newest_put_micros : mapping of str to int or None
        Every capture (``source``, none null) of the DataFrame the detectors
        run over -> its newest put (``put_ts`` or ``dlh_put_ts``, the
        latest), in microseconds since the epoch (UTC); None for a capture
        whose rows hold no put time. Over all the capture's rows, as
        :func:`newest_puts` computes them.
    limit : int
        At most this many captures are handed to the detectors.

    Returns
    -------
    NewestPutTimes or the given ``capture_time``
        As :func:`with_newest_puts` returns, with no query run:
        ``capture_time`` itself when it is one time for every capture, a
        :class:`NewestPutTimes` already, or when ``newest_put_micros`` holds
        more than ``limit`` captures (the detectors then join).
    """
    if not _takes_newest_puts(capture_time) or len(newest_put_micros) > limit:
        return capture_time
    return NewestPutTimes({} if capture_time is None else capture_time,
                          capture_time_origin(capture_time), newest_put_micros)


def capture_time_aggregates(capture_time=None) -> list:
    """The capture time of a group of rows, as aggregate columns for
    ``groupBy(...).agg(...)``.

    The rows carry ``captured`` (timestamp) and ``captured_known`` (bool, or
    int 0/1: the columns of :func:`with_capture_times`, or of an earlier
    aggregation by this function, so that two-stage aggregations compose).

    Returns
    -------
    list of Column
        ``captured`` (timestamp, UTC): the latest known capture time of the
        group's rows where any is known (given or from a banner), else the
        latest of their captures' newest puts; ``captured_known`` (int: 1
        when a known time was taken, else 0); ``captured_origin`` (string,
        :data:`CAPTURE_TIME_ORIGINS`: where that time came from, in words,
        for ``capture_time``'s origin). The three always agree with each
        other, whatever the order of the rows.
    """
    from pyspark.sql import functions as F

    # parsed expressions: a Column per function costs three JVM round trips each (nine
    # detectors aggregate so)
    any_known = "max(CAST(captured_known AS INT))"
    given = sql_literal(CAPTURE_TIME_ORIGINS[capture_time_origin(capture_time)])
    newest = sql_literal(CAPTURE_TIME_ORIGINS["newest_put"])
    return [
        F.expr("coalesce(max(CASE WHEN CAST(captured_known AS INT) = 1 THEN captured END), "
               "max(captured)) AS captured"),
        F.expr(f"{any_known} AS captured_known"),
        F.expr(f"CASE WHEN {any_known} = 1 THEN {given} ELSE {newest} END AS captured_origin"),
    ]


def message_ref():
    """``struct(source, message_number)``: how a finding points at a message row."""
    from pyspark.sql import functions as F

    # one parsed expression (a Column per function costs three JVM round trips each)
    return F.expr("named_struct('source', source, 'message_number', CAST(message_number AS INT))")


def epoch_seconds(ts_col):
    """A timestamp column as seconds since the epoch (double, sub-second kept)."""
    from pyspark.sql import functions as F

    return F.unix_micros(ts_col.cast("timestamp")) / F.lit(1e6)


def definition_attr(definition, name: str):
    """Attribute ``name`` (lower-case MQSC name) of a queue definition, or None.

    Accepts the objects of :func:`dlqlens.mq.mqsc.read_queue_defs` (attributes
    or a mapping of them) and plain dicts, so detectors and tests can pass
    either.
    """
    if definition is None:
        return None
    if isinstance(definition, Mapping):
        return definition.get(name, definition.get(name.upper()))
    value = getattr(definition, name, None)
    if value is None:
        for holder in ("attributes", "attrs"):
            attrs = getattr(definition, holder, None)
            if isinstance(attrs, Mapping):
                value = attrs.get(name, attrs.get(name.upper()))
                if value is not None:
                    break
    return value


def queue_defs_frame(spark, queue_defs, attrs: Mapping[str, str]):
    """A small DataFrame of queue attributes: ``queue`` plus one column per attribute.

    Parameters
    ----------
    queue_defs : mapping of str to definition, or None
        Queue definitions by name (:func:`dlqlens.mq.mqsc.read_queue_defs`).
    attrs : mapping of str to str
        Attribute (lower-case MQSC name) -> Spark type (``"int"``, ``"string"``).

    Returns
    -------
    pyspark.sql.DataFrame or None
        None when there are no definitions. Integer attributes that are not
        numbers become null; blank strings become null.
    """
    if not queue_defs:
        return None
    ddl = "queue string, " + ", ".join(f"{a} {t}" for a, t in attrs.items())
    return spark.createDataFrame(queue_def_rows(queue_defs, attrs), ddl)


def queue_def_rows(queue_defs, attrs: Mapping[str, str]) -> list[tuple]:
    """The rows of :func:`queue_defs_frame` as Python tuples (``queue``, then
    each attribute), for a detector that looks them up in a literal map."""
    rows = []
    for qname, definition in (queue_defs or {}).items():
        row = [str(qname).strip()]
        for attr, typ in attrs.items():
            value = definition_attr(definition, attr)
            if typ == "int":
                try:
                    value = int(value) if value is not None else None
                except (TypeError, ValueError):
                    value = None
            else:
                value = str(value).strip() if value is not None else None
                value = value or None
            row.append(value)
        rows.append(tuple(row))
    return rows


def glob_regex(patterns) -> str:
    """One anchored Java regex matching any of the MQ-style ``*`` patterns (case-sensitive)."""
    import re

    parts = []
    for p in patterns:
        parts.append("".join(".*" if ch == "*" else re.escape(ch) for ch in p))
    return "^(?:" + "|".join(parts) + ")$" if parts else "^$a"
