"""What is on a dead-letter queue: the capture summary.

:func:`summarize` computes every figure as a Spark aggregation over the
decoded-messages DataFrame (nothing but the small aggregates reaches the
driver), so it runs unchanged on ten million messages or on a cluster.
:class:`CaptureSummary` is plain data with :meth:`~CaptureSummary.to_text`
for terminals and :meth:`~CaptureSummary._repr_html_` for notebooks; every
value that came from a message is escaped in HTML.
"""

from __future__ import annotations

import html
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial

import pandas as pd

from dlqlens.decode.issues import ISSUE_STATUS, WELL_FORMED
from dlqlens.mq.constants import MQAT_NAMES, TEMPORARY_QUEUE_PREFIXES
from dlqlens.safe import one_line, printable
from dlqlens.spark.columns import literal_map


def destination_group(dest=None):
    """Column: ``dlh.DestQName`` with temporary dynamic queue names (``AMQ.*``,
    ``CSQ.*``: one per requester, gone with it) grouped under their prefix. The
    one grouping of destinations the summary, the coverage, the plots and the
    report use."""
    from pyspark.sql import functions as F

    dest = F.col("dlh.DestQName") if dest is None else dest
    group = dest
    for prefix in TEMPORARY_QUEUE_PREFIXES:
        group = F.when(dest.startswith(prefix.rstrip("*")), F.lit(prefix)).otherwise(group)
    return group


@dataclass
class CaptureSummary:
    """Figures of a capture.

    Attributes
    ----------
    framed : int
        Messages framed in the capture files.
    messages : int
        Messages summarised (framed minus dropped).
    dropped : pandas.DataFrame
        ``decode_status``, ``messages``: malformed messages left out
        (``DROPMALFORMED``); empty in ``PERMISSIVE`` mode.
    by_status : pandas.DataFrame
        ``decode_status``, ``messages``.
    by_reason : pandas.DataFrame
        ``Reason`` (int), ``reason_name``, ``messages``, ``first_dlq_put``,
        ``last_dlq_put`` (UTC timestamps of the put onto the DLQ).
    by_destination : pandas.DataFrame
        ``DestQMgrName``, ``DestQName``, ``queues``, ``messages``. Names of
        temporary dynamic queues (``AMQ.*``, ``CSQ.*``: one per requester,
        gone with it) are grouped per queue manager under their prefix, and
        ``queues`` counts the distinct names in the row (1 otherwise).
    by_application : pandas.DataFrame
        ``PutApplName``, ``PutApplType`` (int), ``appl_type_name`` (its MQAT
        name, ``MQAT_UNIX``...) of the original put (MQMD), ``messages``.
    by_dlq_putter : pandas.DataFrame
        ``PutApplName``, ``PutApplType``, ``appl_type_name`` of whoever put the
        message on the DLQ (MQDLH), ``messages``.
    times : dict
        ``oldest_put``, ``newest_put`` (MQMD put, UTC), ``oldest_dlq_put``,
        ``newest_dlq_put`` (MQDLH put, UTC, whatever the session's time zone), each a
        naive ``pandas.Timestamp`` or None.
    without_dlh : int
        Messages that do not start with an MQDLH (runmqdlq leaves them alone).
    issue_codes : pandas.DataFrame
        ``code``, ``messages``: every decode issue code met, warnings and
        notes included (``dlh_reconstructed``, ``bad_timestamp``...).
    problems : pandas.DataFrame
        Up to ``limit`` messages whose ``decode_status`` is not ``ok``:
        ``source``, ``message_number``, ``source_line``, ``source_offset``,
        ``decode_status``, ``issue`` (the statement of its most serious issue).
    problem_count : int
        Messages whose ``decode_status`` is not ``ok``.
    newest_puts : dict of str to int or None
        Each capture file (``source``) -> its newest put (the latest
        ``put_ts`` or ``dlh_put_ts`` of the messages summarised), in
        microseconds since the epoch (UTC); None for a file whose messages
        hold no put time. Where the detectors take a capture's time from
        when none is given (:func:`dlqlens.detect.common.newest_put_times`).
    """

    framed: int
    messages: int
    dropped: pd.DataFrame
    by_status: pd.DataFrame
    by_reason: pd.DataFrame
    by_destination: pd.DataFrame
    by_application: pd.DataFrame
    by_dlq_putter: pd.DataFrame
    times: dict
    without_dlh: int
    problems: pd.DataFrame
    problem_count: int
    issue_codes: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["code", "messages"]))
    sources: list = field(default_factory=list)
    newest_puts: dict = field(default_factory=dict)

    def to_text(self) -> str:
        """The summary as plain text (a terminal, a ticket, an e-mail): values
        from captures each on one line with every non-printable character
        escaped (:func:`~dlqlens.safe.one_line`), the whole text through
        :func:`~dlqlens.safe.printable`."""
        return printable(self._text())

    def _text(self) -> str:
        out = []
        n_drop = int(self.dropped["messages"].sum()) if len(self.dropped) else 0
        out.append(f"Messages: {self.messages} summarised of {self.framed} framed"
                   + (f", {n_drop} dropped as malformed" if n_drop else "")
                   + f" in {len(self.sources)} file(s)")
        if n_drop:
            for _, r in self.dropped.iterrows():
                out.append(f"  dropped {r['messages']} with decode_status {r['decode_status']}")
        out.append(f"Without an MQDLH (not processed by runmqdlq): {self.without_dlh}")
        t = self.times
        out.append(f"Original put (MQMD, UTC):  oldest {_ts(t['oldest_put'])}   newest {_ts(t['newest_put'])}")
        out.append(f"Put on the DLQ (MQDLH, UTC): oldest {_ts(t['oldest_dlq_put'])}   newest {_ts(t['newest_dlq_put'])}")
        sections = [
            ("Messages by reason", self.by_reason),
            ("Messages by destination (DestQMgrName, DestQName; temporary dynamic queues "
             "grouped by prefix)", self.by_destination),
            ("Messages by putting application (MQMD PutApplName)", self.by_application),
            ("Put on the DLQ by (MQDLH PutApplName)", self.by_dlq_putter),
            ("Decode status", self.by_status),
            ("Decode issues by code (warnings and notes included)", self.issue_codes),
        ]
        for title, frame in sections:
            out.append("")
            out.append(title)
            out.append("-" * len(title))
            out.append(_table(frame))
        out.append("")
        title = f"Decode problems ({self.problem_count} message(s))"
        out.append(title)
        out.append("-" * len(title))
        if self.problem_count:
            for _, r in self.problems.iterrows():
                out.append(f"  [{one_line(r['decode_status'])}] {one_line(r['issue'])}")
            if self.problem_count > len(self.problems):
                out.append(f"  ... and {self.problem_count - len(self.problems)} more")
        else:
            out.append("  none")
        return "\n".join(out) + "\n"

    def _repr_html_(self) -> str:
        parts = [f"<h3>DLQ capture summary</h3><p>{self.messages} messages summarised of "
                 f"{self.framed} framed; {self.without_dlh} without an MQDLH.</p>"]
        for title, frame in (("By reason", self.by_reason), ("By destination", self.by_destination),
                             ("By putting application", self.by_application),
                             ("Put on the DLQ by", self.by_dlq_putter),
                             ("Decode status", self.by_status),
                             ("Decode issues by code", self.issue_codes),
                             ("Decode problems", self.problems)):
            parts.append(f"<h4>{html.escape(title)}</h4>")
            parts.append(frame.to_html(index=False, escape=True, na_rep="unknown"))
        return "\n".join(parts)


def _ts(v) -> str:
    return "-" if v is None or pd.isna(v) else pd.Timestamp(v).strftime("%Y-%m-%d %H:%M:%S.%f")[:-4]


def _table(frame: pd.DataFrame) -> str:
    """``frame`` as aligned text, each row on one line: every text cell (and
    header) is made one line first (:func:`~dlqlens.safe.one_line`; a LF, a NEL
    or a U+2028 in a queue name would start a line of its own, a line that
    could read as another row), so the columns are aligned on what is shown."""
    if frame.empty:
        return "  none"
    shown = frame.map(lambda v: one_line(v) if isinstance(v, str) else v)
    shown.columns = [one_line(c) for c in shown.columns]
    return "\n".join("  " + line for line in shown.to_string(index=False, na_rep="unknown").split("\n"))


def _with_appl_type_names(frame: pd.DataFrame) -> pd.DataFrame:
    """``appl_type_name`` (``MQAT_UNIX``...) after ``PutApplType``."""
    names = [MQAT_NAMES.get(int(v)) if pd.notna(v) else None for v in frame["PutApplType"]]
    frame.insert(frame.columns.get_loc("PutApplType") + 1, "appl_type_name", names)
    return frame


#: The grouped tables of the summary, each one grouping set of one aggregation
#: (:func:`_grouped_tables`): name -> (key columns, only messages with an MQDLH,
#: the columns of the table as the summary shows it).
_GROUPINGS = {
    "reason": (("Reason", "reason_name"), True,
               ["Reason", "reason_name", "messages", "first_dlq_put", "last_dlq_put"]),
    "destination": (("DestQMgrName", "DestQName"), True,
                    ["DestQMgrName", "DestQName", "queues", "messages"]),
    "application": (("md_PutApplName", "md_PutApplType"), False,
                    ["PutApplName", "PutApplType", "messages"]),
    "dlq_putter": (("dlh_PutApplName", "dlh_PutApplType"), True,
                   ["PutApplName", "PutApplType", "messages"]),
    "status": (("decode_status",), False, ["decode_status", "messages"]),
    "source": (("source",), False, ["source"]),
}


def _grouped_tables(df, top: int):
    """Every grouped table of the summary and the capture's totals from one
    aggregation (grouping sets; one Spark job instead of one per table).

    Returns
    -------
    (dict of str to pandas.DataFrame, dict)
        The tables by :data:`_GROUPINGS` name, each its ``top`` rows (most
        messages first, ties by key; ``source``: every capture file, sorted),
        and the totals: ``messages_all``, ``oldest_put``, ``newest_put``,
        ``oldest_dlq_put``, ``newest_dlq_put``, ``without_dlh``, ``problems``,
        and ``newest_puts`` (:attr:`CaptureSummary.newest_puts`).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    dest = F.col("dlh.DestQName")
    keyed = df.select(
        F.col("dlh.Reason").alias("Reason"), "reason_name",
        F.col("dlh.DestQMgrName").alias("DestQMgrName"),
        destination_group(dest).alias("DestQName"),
        F.col("md.PutApplName").alias("md_PutApplName"),
        F.col("md.PutApplType").alias("md_PutApplType"),
        F.col("dlh.PutApplName").alias("dlh_PutApplName"),
        F.col("dlh.PutApplType").alias("dlh_PutApplType"),
        "decode_status", "source", dest.alias("_dest"), "put_ts", "dlh_put_ts",
        F.col("dlh").isNotNull().alias("_dlh"))
    key_names = [k for keys, _, _ in _GROUPINGS.values() for k in keys]
    sets = [list(keys) for keys, _, _ in _GROUPINGS.values()] + [[]]
    with_dlh = F.col("_dlh")
    grouped = keyed.groupingSets(sets, *key_names).agg(
        F.count("*").alias("messages_all"),
        F.count_if(with_dlh).alias("messages_dlh"),
        # microseconds since the epoch: UTC whatever the session's time zone (toPandas
        # would give a timestamp in the session's wall clock)
        F.unix_micros(F.min(F.when(with_dlh, F.col("dlh_put_ts")))).alias("first_dlq_put"),
        F.unix_micros(F.max(F.when(with_dlh, F.col("dlh_put_ts")))).alias("last_dlq_put"),
        F.countDistinct(F.when(with_dlh, F.col("_dest"))).alias("queues"),
        F.unix_micros(F.min("put_ts")).alias("oldest_put"),
        F.unix_micros(F.max("put_ts")).alias("newest_put"),
        F.unix_micros(F.min("dlh_put_ts")).alias("oldest_dlq_put"),
        F.unix_micros(F.max("dlh_put_ts")).alias("newest_dlq_put"),
        # each capture's newest put of either kind, for the detectors: a string, exact
        # (toPandas gives a column of integers with nulls as floats)
        F.unix_micros(F.max(F.greatest("put_ts", "dlh_put_ts"))).cast("string")
        .alias("newest_any_put"),
        F.count_if(F.col("decode_status") != "ok").alias("problems"),
        *[F.grouping(keys[0]).alias(f"_not_{name}")
          for name, (keys, _, _) in _GROUPINGS.items()])
    which = F.lit("total")
    for name, (keys, _, _) in reversed(list(_GROUPINGS.items())):
        which = F.when(F.col(f"_not_{name}") == 0, F.lit(name)).otherwise(which)
    dlh_sets = [name for name, (_, only_dlh, _) in _GROUPINGS.items() if only_dlh]
    grouped = grouped.withColumn("_set", which).withColumn(
        "messages", F.when(F.col("_set").isin(dlh_sets), F.col("messages_dlh"))
        .otherwise(F.col("messages_all")))
    ranked = (grouped.where(F.col("messages") > 0)
              .withColumn("_rank", F.row_number().over(Window.partitionBy("_set").orderBy(
                  F.desc("messages"), *[F.col(k).asc_nulls_first() for k in key_names])))
              .where((F.col("_rank") <= int(top)) | F.col("_set").isin("source", "total")))
    frame = ranked.toPandas()  # bounded: top rows per table, the files, the totals
    tables = {}
    for name, (keys, _, shown) in _GROUPINGS.items():
        part = frame[frame["_set"] == name]
        part = (part.sort_values("source") if name == "source" else part.sort_values("_rank"))
        part = part.rename(columns={k: k.split("_", 1)[1] for k in keys
                                    if k.startswith(("md_", "dlh_"))})
        part = part[shown].reset_index(drop=True)
        for col in ("first_dlq_put", "last_dlq_put"):  # naive UTC, as the totals below
            if col in part:
                part[col] = pd.to_datetime(part[col], unit="us")
        for col in ("Reason", "PutApplType"):  # as toPandas gives them: int32 unless a null
            if col in part and not part[col].isna().any():
                part[col] = part[col].astype("int32")
        tables[name] = part
    total = frame[frame["_set"] == "total"]
    agg = total.iloc[0].to_dict() if len(total) else {"messages_all": 0, "messages_dlh": 0,
                                                       "problems": 0}
    for k in ("oldest_put", "newest_put", "oldest_dlq_put", "newest_dlq_put"):
        v = agg.get(k)
        agg[k] = None if v is None or pd.isna(v) else pd.Timestamp(int(v), unit="us")
    agg["without_dlh"] = int(agg.get("messages_all", 0) or 0) - int(agg.get("messages_dlh", 0) or 0)
    files = frame[frame["_set"] == "source"]
    agg["newest_puts"] = {source: None if newest is None or pd.isna(newest) else int(newest)
                          for source, newest in zip(files["source"], files["newest_any_put"])
                          if source is not None and not pd.isna(source)}
    return tables, agg


def summarize(df, *, mode: str = "PERMISSIVE", top: int = 20, limit: int = 50) -> CaptureSummary:
    """Summarise a decoded-messages DataFrame.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Read in ``PERMISSIVE`` mode (``spark.read.format("mqcapture")``), so
        that malformed messages can be counted. Unless it is cached, what the
        summary reads of it is cached for the call, without the messages'
        bytes (:func:`dlqlens.detect.analysis_input`; a capture the
        executors read is read without them).
    mode : str
        ``DROPMALFORMED`` leaves malformed messages out of the figures and
        reports how many were dropped and why; ``PERMISSIVE`` keeps them.
    top : int
        Rows kept in each ``by_*`` table (most messages first).
    limit : int
        Problem messages listed.

    Returns
    -------
    CaptureSummary
    """
    from pyspark.sql import functions as F

    from dlqlens.detect import analysis_input, small_capture
    from dlqlens.spark.caches import Caches
    from dlqlens.spark.session import short_run

    # a caller's cache (e.g. shared with the detectors) is kept; otherwise what the summary
    # reads is cached, without the messages' bytes (dlqlens.detect.BYTE_COLUMNS) and without
    # the detectors' payload digest, which it does not read
    with Caches() as caches, ExitStack() as scope:
        if not df.is_cached:
            df = caches.cache(analysis_input(df, digest=False))
        # a small capture in a session dlqlens made: the short run's settings meanwhile
        scope.enter_context(short_run(df, partial(small_capture, df)))
        well = F.col("decode_status").isin(sorted(WELL_FORMED))
        dropped = pd.DataFrame(columns=["decode_status", "messages"])
        if mode.upper() == "DROPMALFORMED":
            dropped = (df.filter(~well).groupBy("decode_status")
                       .agg(F.count("*").alias("messages"))
                       .orderBy(F.desc("messages")).toPandas())
            df = df.filter(well)
        n_dropped = int(dropped["messages"].sum()) if len(dropped) else 0
        tables, agg = _grouped_tables(df, top)
        messages = int(agg["messages_all"] or 0)
        framed = messages + n_dropped
        # the statement of the issue that set the status (the first one implying it)
        status_of = literal_map({code: st for code, st in ISSUE_STATUS.items() if st})
        worst = F.filter("decode_issues",
                         lambda i: status_of[i["code"]] == F.col("decode_status"))
        problems = (df.filter(F.col("decode_status") != "ok")
                    .select("source", "message_number", "source_line", "source_offset",
                            "decode_status",
                            F.coalesce(worst[0]["message"], F.col("decode_issues")[0]["message"])
                            .alias("issue"))
                    .orderBy("source", "message_number").limit(limit).toPandas())
        # one row per issue code met (a short vocabulary): sorted on the driver
        issue_codes = (df.select(F.explode("decode_issues").alias("i"))
                       .groupBy(F.col("i.code").alias("code")).agg(F.count("*").alias("messages"))
                       .toPandas().sort_values(["messages", "code"], ascending=[False, True],
                                               kind="stable").reset_index(drop=True))
    by_reason, by_dest = tables["reason"], tables["destination"]
    by_app = _with_appl_type_names(tables["application"])
    by_putter = _with_appl_type_names(tables["dlq_putter"])
    by_status, sources = tables["status"], list(tables["source"]["source"])
    times = {k: agg[k] for k in ("oldest_put", "newest_put", "oldest_dlq_put", "newest_dlq_put")}
    return CaptureSummary(
        framed=framed, messages=messages, dropped=dropped, by_status=by_status,
        by_reason=by_reason, by_destination=by_dest, by_application=by_app,
        by_dlq_putter=by_putter, times=times, without_dlh=int(agg["without_dlh"] or 0),
        problems=problems, problem_count=int(agg["problems"] or 0), issue_codes=issue_codes,
        sources=sources, newest_puts=agg["newest_puts"])
