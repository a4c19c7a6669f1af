"""What every figure of :mod:`dlqlens.plots` shares.

* **Spark to driver**: :func:`collect` is the only way a figure brings rows to
  the driver; it takes an aggregate and the most rows it may have, so a figure
  can never pull a capture by mistake.
* **Figures computed together**: a figure is a :class:`Plan` (its columns,
  its statistics, the cells it counts, and how it draws them);
  :func:`draw_plans` computes any number of plans with two Spark queries in
  all: one aggregation of every plan's statistics (:class:`Stat`: by capture
  file, then over the files; one row), then one grouping-sets aggregation of
  every plan's cells ranked in Spark (the top keys of each plan and their
  cells: bounded rows). On a small capture each
  Spark job costs its planning and scheduling whatever its size, so the
  figures' time follows the number of queries (``docs/performance.md``).
* **Top N + other**: a :class:`Plan`'s categories (a :class:`Dimension`'s
  key) are ranked in Spark by :func:`draw_plans`, the N largest kept
  (:class:`TopKeys`) and the rest folded into one "other" bucket
  (:meth:`Cells.folded`); :func:`display_labels` turns the keys into short,
  distinct, safe labels.
* **Time bins**: :func:`bin_width` chooses a "nice" bin width (1 s, 10 s,
  1 min, 5 min, 15 min, 1 h, 6 h, 1 day ...) from a time span, or checks the
  caller's.
* **Figures**: :func:`new_figure` (a :class:`matplotlib.figure.Figure`, never
  pyplot's global state), :func:`empty_figure` ("no messages"),
  :func:`finish` (turns off mathtext and TeX on every text of the figure:
  queue and application names come from captures, and ``$x$`` in a queue
  name must stay ``$x$``).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dlqlens.explain.summary import destination_group
from dlqlens.mq.constants import TEMPORARY_QUEUE_PREFIXES
from dlqlens.safe import one_line
from dlqlens.spark.columns import literal_map

#: Bins an automatic time axis aims at, at most.
MAX_AUTO_BINS = 60
#: Bins an explicit ``freq`` may make, at most (ValueError beyond).
MAX_BINS = 5000
#: Labels longer than this are shortened with an ellipsis.
LABEL_WIDTH = 40
#: "Nice" time bin widths, seconds.
NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 2 * 3600,
                3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 14 * 86400,
                30 * 86400, 91 * 86400, 365 * 86400)
#: Colour of the "other" bucket and of what is not a category of its own.
OTHER_COLOR = "#b0b0b0"
#: Key of the "other" bucket in :meth:`Cells.folded` (``to_json`` never makes it).
OTHER = ""
UTC = _dt.timezone.utc


# ---------------------------------------------------------------------------
# Spark to driver
# ---------------------------------------------------------------------------

def collect(aggregate, max_rows: int) -> list:
    """Rows of a small aggregate DataFrame, on the driver.

    Parameters
    ----------
    aggregate : pyspark.sql.DataFrame
        An aggregate (a ``groupBy``/``agg`` result), never a capture.
    max_rows : int
        The most rows the aggregate can have by construction.

    Returns
    -------
    list of pyspark.sql.Row

    Raises
    ------
    RuntimeError
        When the aggregate has more rows than ``max_rows`` (a bug in the
        figure: at most ``max_rows + 1`` rows are fetched to find out).
    """
    rows = aggregate.limit(int(max_rows) + 1).collect()
    if len(rows) > max_rows:
        raise RuntimeError(f"an aggregate of more than {max_rows} rows would reach the driver")
    return rows


class Plan:
    """One figure's work, in the steps :func:`draw_plans` runs for many figures at once.

    A subclass sets :attr:`top_a` (and :attr:`top_b` when its second key is
    folded into "other" too) and defines:

    ``frame(df, tag)``
        ``df`` with the figure's columns added, each named ``{tag}_...``
        (row-preserving column expressions: a row the figure does not count
        gets nulls, never a filter).
    ``stats(tag)``
        The figure's statistics over those columns: a list of :class:`Stat`,
        each named ``{tag}_name`` (aggregated by capture file, then over the
        files, with every other plan's: one row in all).
    ``cells(stats, tag)``
        The cells to count, chosen from the statistics (bin widths, for
        example): a list of ``(condition, a, b)`` columns, a row counted once
        in the cell ``(a, b)`` of each condition it meets; ``a`` is a
        category (a string, never null where the condition holds), ``b`` a
        bin or a second category (cast to string). None: nothing to count (the
        figure says why).
    ``max_b(stats)``
        The most distinct ``b`` a plan with ``top_b`` None can have (its
        bins), bounding what reaches the driver.
    ``draw(stats, cells)``
        The :class:`matplotlib.figure.Figure`, from the statistics (a dict
        without the tag) and the :class:`Cells` (None when ``cells`` gave None).
    """

    #: Values of ``a`` kept on their own (largest first), the rest "other".
    top_a: int = 1
    #: Values of ``b`` kept on their own, or None: every ``b`` (bins).
    top_b: int | None = None
    #: How ``b`` is read back on the driver.
    b_type: type = int

    def frame(self, df, tag: str):  # pragma: no cover - every plan defines it
        raise NotImplementedError

    def stats(self, tag: str) -> list:  # pragma: no cover - every plan defines it
        raise NotImplementedError

    def cells(self, stats: dict, tag: str):  # pragma: no cover - every plan defines it
        raise NotImplementedError

    def max_b(self, stats: dict) -> int:
        return int(self.top_b or 1)

    def draw(self, stats: dict, cells):  # pragma: no cover - every plan defines it
        raise NotImplementedError


@dataclass(frozen=True)
class Stat:
    """One statistic of a :class:`Plan`, aggregated in two steps.

    :func:`draw_plans` aggregates the rows of each capture file (``source``)
    first, then the files' rows: a statistic that needs something of each
    file (its latest put, to measure ages from) is one aggregation like the
    others, with no window over a file's rows (which one task would hold
    whole) and no second query. Build the usual ones with :func:`counted`,
    :func:`highest` and :func:`lowest`.

    Attributes
    ----------
    name : str
        ``{tag}_name``; the key in the plan's statistics (without the tag)
        when :attr:`total` is set.
    per_source : pyspark.sql.Column or None
        An aggregate over one capture file's rows, a column of that name in
        the files' rows; None: none (:attr:`total` reads other statistics'
        per-file columns).
    total : pyspark.sql.Column or None
        An aggregate over the files' rows (reading per-file columns by
        name), the statistic's value; None: a per-file column only, read by
        another statistic's total.
    """

    name: str
    per_source: object = None
    total: object = None


def counted(name: str, aggregate) -> Stat:
    """A count (``count``, ``count_if``, ``count_distinct("source")``) summed
    over the files; 0, never null, for no rows."""
    from pyspark.sql import functions as F

    return Stat(name, aggregate, F.coalesce(F.sum(name), F.lit(0)).cast("long"))


def highest(name: str, aggregate) -> Stat:
    """A ``max`` over the files' maxima (null for no rows)."""
    from pyspark.sql import functions as F

    return Stat(name, aggregate, F.max(name))


def lowest(name: str, aggregate) -> Stat:
    """A ``min`` over the files' minima (null for no rows)."""
    from pyspark.sql import functions as F

    return Stat(name, aggregate, F.min(name))


def by_source(name: str, aggregate, value_type: str) -> Stat:
    """A per-file value as a ``source -> value`` map (one entry per capture
    file: as many as the files read, never per message), for a later query
    to look a row's file up in with :func:`~dlqlens.spark.columns.literal_map`."""
    from pyspark.sql import functions as F

    entry = F.when(F.col("source").isNotNull(), F.struct(
        F.col("source").alias("key"), F.col(name).cast(value_type).alias("value")))
    return Stat(name, aggregate, F.map_from_entries(F.collect_list(entry)))


@dataclass(frozen=True)
class Cells:
    """The counted cells of one :class:`Plan`, on the driver.

    Attributes
    ----------
    a, b : TopKeys
        The top values of each key (all of ``b`` when the plan keeps every
        ``b``), each with its messages, the distinct values and the cells
        counted in all.
    counts : dict
        ``(a, b) -> count`` for the top values of both keys (nonzero only).
    """

    a: TopKeys
    b: TopKeys
    counts: dict = field(default_factory=dict)

    def folded(self) -> dict:
        """``(a or OTHER, b or OTHER) -> count``: every cell, the values that are
        not top values folded into :data:`OTHER` (nonzero only), as a
        ``groupBy`` of both keys, each folded into "other", would give them."""
        out = dict(self.counts)
        if self.a.others:
            for b, n in zip(self.b.keys, self.b.counts):
                rest = n - sum(self.counts.get((a, b), 0) for a in self.a.keys)
                if rest:
                    out[(OTHER, b)] = rest
        if self.b.others:
            for a, n in zip(self.a.keys, self.a.counts):
                rest = n - sum(self.counts.get((a, b), 0) for b in self.b.keys)
                if rest:
                    out[(a, OTHER)] = rest
            if self.a.others:
                rest = self.a.messages - sum(out.values())
                if rest:
                    out[(OTHER, OTHER)] = rest
        return out


def draw_plans(df, plans: Sequence[Plan]) -> list:
    """The figures of ``plans`` over ``df``, their aggregates computed together.

    Two Spark queries whatever the number of plans: the statistics of every
    plan (:class:`Stat`: by capture file, then over the files; one row),
    then the cells of every plan that has some, in one
    grouping-sets aggregation (cells, totals of each ``a``, of each ``b``, of
    each plan) whose keys are ranked in Spark (``row_number`` per plan: most
    cells first, ties by key), so that only the top keys' cells and totals
    reach the driver; what is folded into "other" is the difference of the
    totals and the top keys' cells.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (what every plan reads).
    plans : sequence of Plan

    Returns
    -------
    list of matplotlib.figure.Figure
        In the order of ``plans``.

    Raises
    ------
    RuntimeError
        When more rows would reach the driver than the plans' bounds (a bug).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    plans = list(plans)
    tags = [f"f{i}" for i in range(len(plans))]
    framed = df
    for tag, plan in zip(tags, plans):
        framed = plan.frame(framed, tag)
    row = _statistics(framed, [s for tag, plan in zip(tags, plans) for s in plan.stats(tag)])
    stats = [{k[len(tag) + 1:]: v for k, v in row.items() if k.startswith(tag + "_")}
             for tag in tags]
    wanted = {}
    for tag, plan, s in zip(tags, plans, stats):
        cells = plan.cells(s, tag)
        if cells is not None:
            wanted[tag] = cells
    found: dict = {}
    if wanted:
        elements = [F.when(cond, F.struct(F.lit(tag).alias("fig"), a.cast("string").alias("a"),
                                          b.cast("string").alias("b")))
                    for tag, cells in wanted.items() for cond, a, b in cells]
        rows = framed.select(F.explode(F.filter(F.array(*elements), lambda e: e.isNotNull()))
                             .alias("e")).select("e.*")
        grouped = rows.groupingSets([["fig", "a", "b"], ["fig", "a"], ["fig", "b"], ["fig"]],
                                    "fig", "a", "b").agg(
            F.count(F.lit(1)).alias("n"), F.grouping("a").alias("ga"),
            F.grouping("b").alias("gb"))
        is_cell = (F.col("ga") == 0) & (F.col("gb") == 0)
        is_a = (F.col("ga") == 0) & (F.col("gb") == 1)
        is_b = (F.col("ga") == 1) & (F.col("gb") == 0)
        by_plan = Window.partitionBy("fig")  # one shuffle serves every window below
        ranked = (grouped
                  .withColumn("ra", F.when(is_a, F.row_number().over(
                      by_plan.orderBy(is_a.desc(), F.desc("n"), F.asc("a")))))
                  .withColumn("rb", F.when(is_b, F.row_number().over(
                      by_plan.orderBy(is_b.desc(), F.desc("n"), F.asc("b")))))
                  .withColumn("da", F.sum(is_a.cast("long")).over(by_plan))
                  .withColumn("db", F.sum(is_b.cast("long")).over(by_plan))
                  .withColumn("ka", F.max("ra").over(Window.partitionBy("fig", "a")))
                  .withColumn("kb", F.max("rb").over(Window.partitionBy("fig", "b"))))
        plan_of = dict(zip(tags, plans))
        top_a = literal_map({t: plan_of[t].top_a for t in wanted}, "string", "bigint")
        top_b = literal_map({t: plan_of[t].top_b or plan_of[t].max_b(stats[tags.index(t)])
                             for t in wanted}, "string", "bigint")
        ta, tb = top_a[F.col("fig")], top_b[F.col("fig")]
        keep = (F.when(is_cell, (F.col("ka") <= ta) & (F.col("kb") <= tb))
                .when(is_a, F.col("ra") <= ta).when(is_b, F.col("rb") <= tb)
                .otherwise(F.lit(True)))
        bound = 0
        for t in wanted:
            plan = plan_of[t]
            nb = plan.top_b or plan.max_b(stats[tags.index(t)])
            bound += plan.top_a * nb + plan.top_a + nb + 1
        for r in collect(ranked.where(keep).select("fig", "a", "b", "n", "ga", "gb", "ra", "rb",
                                                   "da", "db"), bound):
            found.setdefault(r["fig"], []).append(r)
    figures = []
    for tag, plan, s in zip(tags, plans, stats):
        cells = None
        if tag in wanted:
            cells = _cells(found.get(tag, []), plan.b_type)
        figures.append(plan.draw(s, cells))
    return figures


def _statistics(framed, stats: Sequence[Stat]) -> dict:
    """The statistics' values (``name -> value``): one query, grouped by
    capture file and then over the files' rows, one row to the driver."""
    from pyspark.sql import functions as F

    totals = [s.total.alias(s.name) for s in stats if s.total is not None]
    if not totals:
        return {}
    per_source = [s.per_source.alias(s.name) for s in stats if s.per_source is not None]
    by_file = framed.groupBy("source").agg(*(per_source or [F.count(F.lit(1)).alias("_rows")]))
    return collect(by_file.agg(*totals), 1)[0].asDict()


def _cells(rows, b_type) -> Cells:
    """The :class:`Cells` of one plan from its ranked rows."""
    a_rows = sorted((r for r in rows if r["ga"] == 0 and r["gb"] == 1), key=lambda r: r["ra"])
    b_rows = sorted((r for r in rows if r["ga"] == 1 and r["gb"] == 0), key=lambda r: r["rb"])
    total = next((r for r in rows if r["ga"] == 1 and r["gb"] == 1), None)
    messages = int(total["n"]) if total is not None else 0
    da = int(total["da"] or 0) if total is not None else 0
    db = int(total["db"] or 0) if total is not None else 0
    a = TopKeys([r["a"] for r in a_rows], [int(r["n"]) for r in a_rows], da, messages)
    b = TopKeys([b_type(r["b"]) for r in b_rows], [int(r["n"]) for r in b_rows], db, messages)
    counts = {(r["a"], b_type(r["b"])): int(r["n"]) for r in rows
              if r["ga"] == 0 and r["gb"] == 0}
    return Cells(a, b, counts)


def epoch_seconds(ts_col):
    """A timestamp column as seconds since the epoch (double; time-zone free)."""
    from pyspark.sql import functions as F

    return F.unix_micros(ts_col) / F.lit(1e6)


# ---------------------------------------------------------------------------
# categories: top N + other
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Dimension:
    """A way of putting messages into categories.

    Attributes
    ----------
    name : str
        What the caller says (``"reason"``).
    title : str
        What a legend or axis calls it (``"reason (dlh.Reason)"``).
    noun : str
        Plural for "other (N reasons)".
    fields : tuple of (str, callable)
        ``(key, function returning a Spark column)``: what makes the key.
    label : callable
        ``dict -> str``: the key's label (before :func:`display_labels`).
    """

    name: str
    title: str
    noun: str
    fields: tuple
    label: Callable[[dict], str]

    def key_column(self):
        """The category of a row as one string: the JSON object of its key
        fields (nulls kept), so two different keys never share a string."""
        from pyspark.sql import functions as F

        struct = F.struct(*[make().alias(k) for k, make in self.fields])
        return F.to_json(struct, {"ignoreNullFields": "false"})


def _col(name: str):
    def make():
        from pyspark.sql import functions as F

        return F.col(name)
    return make


def _is_temporary():
    from pyspark.sql import functions as F

    q = F.col("dlh.DestQName")
    cond = F.lit(False)
    for prefix in TEMPORARY_QUEUE_PREFIXES:
        cond = cond | q.startswith(prefix.rstrip("*"))
    return cond


def _reason_label(k: dict) -> str:
    if k["reason"] is None:
        return "(no MQDLH)"
    return f"{k['name']} ({k['reason']})" if k["name"] else f"Reason {k['reason']}"


def _destination_label(k: dict) -> str:
    if k["q"] is None and k["qmgr"] is None:
        return "(no MQDLH)"
    q = f"{k['q']} (temporary queues)" if k["temporary"] else text(k["q"])
    return f"{q} @ {text(k['qmgr'])}"


def _source_label(k: dict) -> str:
    name = k["source"]
    return text(name.replace("\\", "/").rsplit("/", 1)[-1] if name else name)


def _putter_label(k: dict) -> str:
    if k["type"] is None and k["name"] is None:
        return "(no MQDLH)"
    return text(k["name"])


REASON = Dimension("reason", "reason (dlh.Reason)", "reasons",
                   (("reason", _col("dlh.Reason")), ("name", _col("reason_name"))), _reason_label)
DESTINATION = Dimension(
    "destination", "destination (dlh.DestQName @ dlh.DestQMgrName)", "destinations",
    (("q", destination_group), ("temporary", _is_temporary), ("qmgr", _col("dlh.DestQMgrName"))),
    _destination_label)
SOURCE = Dimension("source", "capture file (source)", "files", (("source", _col("source")),),
                   _source_label)
PUTTER = Dimension("putter", "application that put it on the DLQ (dlh.PutApplName)",
                   "applications",
                   (("name", _col("dlh.PutApplName")), ("type", _col("dlh.PutApplType"))),
                   _putter_label)
DIMENSIONS = {d.name: d for d in (REASON, DESTINATION, SOURCE, PUTTER)}


def dimension(name: str) -> Dimension:
    """The :class:`Dimension` called ``name`` (ValueError for another name)."""
    try:
        return DIMENSIONS[name]
    except KeyError:
        raise ValueError(f"by must be one of {', '.join(DIMENSIONS)}, not {name!r}") from None


def check_top(top) -> int:
    """``top`` as an int of at least 1 (ValueError otherwise)."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top must be an integer of at least 1, not {top!r}")
    return top


@dataclass(frozen=True)
class TopKeys:
    """The largest categories of a column.

    Attributes
    ----------
    keys : list of str
        The top keys, largest first (ties by key).
    counts : list of int
        Messages of each.
    distinct : int
        Distinct keys in all.
    messages : int
        Messages in all.
    """

    keys: list
    counts: list
    distinct: int
    messages: int

    @property
    def others(self) -> int:
        """Distinct keys folded into "other"."""
        return self.distinct - len(self.keys)

    @property
    def buckets(self) -> list:
        """The top keys, then :data:`OTHER` when there are others (as :meth:`Cells.folded`)."""
        return self.keys + ([OTHER] if self.others else [])

    @property
    def totals(self) -> list:
        """Messages in each of :attr:`buckets`."""
        rest = self.messages - sum(self.counts)
        return self.counts + ([rest] if self.others else [])


def key_labels(dim: Dimension, top: TopKeys) -> list[str]:
    """Labels of the top keys and, when there are others, of the "other" bucket last."""
    labels = [dim.label(json.loads(k)) for k in top.keys]
    if top.others:
        labels.append(f"other ({top.others:,} {dim.noun})")
    return labels


# ---------------------------------------------------------------------------
# text from captures
# ---------------------------------------------------------------------------

def count(n: int, noun: str) -> str:
    """``"1 message"``, ``"1,204 messages"``."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def text(value) -> str:
    """A value from a capture as one line of text: controls escaped, blank as ``(blank)``."""
    s = one_line(value)
    return s if s.strip() else "(blank)"


def shorten(label: str, width: int) -> str:
    """``label`` cut to ``width`` characters with an ellipsis in the middle (start and end kept)."""
    if len(label) <= width:
        return label
    tail = (width - 1) // 2
    head = width - 1 - tail
    return label[:head] + "\u2026" + label[len(label) - tail:]


def display_labels(labels: Sequence[str], width: int = LABEL_WIDTH) -> list[str]:
    """Labels for display: shortened (:func:`shorten`), and all distinct.

    A shortened label that would equal another is made longer (up to twice
    ``width``) until it does not; labels that still clash, or were equal to
    start with (two keys with one label), get `` [2]``, `` [3]``... after the
    first: two labels never merge into one.
    """
    widths = [width] * len(labels)
    out = [shorten(lab, width) for lab in labels]
    while True:
        groups: dict[str, list[int]] = {}
        for i, s in enumerate(out):
            groups.setdefault(s, []).append(i)
        grow = [i for ix in groups.values() if len(ix) > 1 for i in ix
                if len(labels[i]) > widths[i] and widths[i] < 2 * width]
        if not grow:
            break
        for i in grow:
            widths[i] = min(widths[i] + 4, 2 * width)
            out[i] = shorten(labels[i], widths[i])
    seen: dict[str, int] = {}
    for i, s in enumerate(out):
        seen[s] = seen.get(s, 0) + 1
        if seen[s] > 1:
            out[i] = f"{s} [{seen[s]}]"
    return out


# ---------------------------------------------------------------------------
# time bins
# ---------------------------------------------------------------------------

def bin_width(span_seconds: float, freq=None, *, max_bins: int = MAX_AUTO_BINS) -> float:
    """The width of a time bin, seconds.

    Parameters
    ----------
    span_seconds : float
        From the first to the last timestamp.
    freq : None, number, datetime.timedelta or str
        None: the smallest of :data:`NICE_SECONDS` that covers the span in at
        most ``max_bins`` bins (whole years beyond). A number is seconds; a
        string is anything :func:`pandas.to_timedelta` reads (``"5min"``,
        ``"1h"``, ``"1 day"``).

    Raises
    ------
    ValueError
        When ``freq`` is not a positive duration, or makes more than
        :data:`MAX_BINS` bins over the span.
    """
    if freq is None:
        for w in NICE_SECONDS:
            if span_seconds / w <= max_bins - 1:
                return float(w)
        year = 365 * 86400
        return float(year * math.ceil(span_seconds / (max_bins - 1) / year))
    if isinstance(freq, _dt.timedelta):
        seconds = freq.total_seconds()
    elif isinstance(freq, (int, float)) and not isinstance(freq, bool):
        seconds = float(freq)
    elif isinstance(freq, str):
        import pandas as pd

        try:
            seconds = pd.to_timedelta(freq).total_seconds()
        except ValueError as exc:
            raise ValueError(f"freq {freq!r} is not a duration: {exc}") from None
    else:
        raise ValueError(f"freq must be a duration (seconds, timedelta or str), not {freq!r}")
    if not seconds > 0 or not math.isfinite(seconds):
        raise ValueError(f"freq must be a positive duration, not {freq!r}")
    if span_seconds / seconds > MAX_BINS:
        raise ValueError(f"freq {freq!r} makes {span_seconds / seconds:,.0f} bins over "
                         f"{span_seconds:,.0f} s; at most {MAX_BINS:,} are drawn")
    return seconds


def width_label(seconds: float) -> str:
    """``"5 min"``, ``"1 h"``, ``"2 days"``, ``"0.5 s"``."""
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            n = int(seconds // size)
            if unit == "day":
                return f"{n} day" + ("s" if n > 1 else "")
            return f"{n} {unit}"
    return f"{seconds:g} s"


def bin_column(ts_col, width: float):
    """The time bin of a timestamp: ``floor(epoch seconds / width)`` (bins start
    at whole multiples of ``width`` since 1970-01-01 UTC)."""
    from pyspark.sql import functions as F

    return F.floor(F.unix_micros(ts_col) / F.lit(float(width) * 1e6)).cast("long")


def bin_dates(bins, width: float):
    """Matplotlib date numbers of the start of each bin."""
    import matplotlib.dates as mdates

    return [mdates.date2num(_dt.datetime.fromtimestamp(b * width, UTC)) for b in bins]


def time_limits(first: int, end: int, width: float, *, at_least: int = 10):
    """x limits (date numbers) from the start of bin ``first`` to the start of
    bin ``end``, widened evenly to ``at_least`` bins (one message is not one
    bar as wide as the axes)."""
    pad = max(at_least - (end - first), 0) / 2
    return tuple(bin_dates([first - pad, end + pad], width))


def utc_axis(axis) -> None:
    """Date ticks in UTC on a matplotlib axis (x values are date numbers)."""
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(tz=UTC)
    axis.set_major_locator(locator)
    axis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=UTC))


def utc_text(value) -> str:
    """A UTC timestamp (datetime, naive = UTC, or epoch seconds) as ``2024-03-15 11:21:27 UTC``."""
    if isinstance(value, (int, float)):
        value = _dt.datetime.fromtimestamp(value, UTC)
    elif value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%d %H:%M:%S UTC")


def nice_step(raw: float) -> float:
    """The smallest of 1, 2, 5 x 10^k at least ``raw`` (> 0)."""
    exp = math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * 10 ** exp >= raw * (1 - 1e-12):
            return float(m * 10 ** exp)
    return float(10 ** (exp + 1))  # pragma: no cover - unreachable


# ---------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------

def new_figure(width: float = 10.0, height: float = 5.0):
    """A :class:`matplotlib.figure.Figure` with constrained layout (no pyplot)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def category_colors(n: int, other: bool) -> list:
    """``n`` colours (distinct up to 18, none grey), then grey for "other" when ``other``."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 9 else "tab20"]
    greys = {7} if cmap.N == 10 else {14, 15}  # kept for "other"
    palette = [cmap(i) for i in range(cmap.N) if i not in greys]
    colors = [palette[i % len(palette)] for i in range(n)]
    return colors + [OTHER_COLOR] if other else colors


def empty_figure(title: str, message: str = "no messages"):
    """A figure that says ``message`` (for an empty DataFrame) instead of raising."""
    fig = new_figure(8, 3)
    ax = fig.add_subplot()
    ax.set_axis_off()
    fig.suptitle(title)
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=14, color="0.4",
            transform=ax.transAxes)
    return finish(fig)


def finish(fig):
    """Turn off mathtext and TeX on the texts of ``fig`` that can hold names, and return it.

    Matplotlib reads ``$...$`` as mathematics; names from captures must be
    shown as they are. Every text is concerned (titles, labels, legends,
    annotations, tick labels set from names: those sit at fixed places,
    ``FixedLocator``, so the texts set here are the ones drawn) but the tick
    labels and offset texts of numeric axes, which matplotlib writes itself
    (``10^3`` on a log axis is mathtext).
    """
    from matplotlib.text import Text
    from matplotlib.ticker import FixedLocator

    numeric = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            numeric.add(id(axis.get_offset_text()))
            if not isinstance(axis.get_major_locator(), FixedLocator):
                for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                    numeric.update((id(tick.label1), id(tick.label2)))
    for t in fig.findobj(Text):
        if id(t) not in numeric:
            t.set_parse_math(False)
            t.set_usetex(False)
    return fig


def legend(ax, handles, labels, *, title=None, **kw):
    """An axes legend with explicit handles and labels (a label from a capture
    that starts with ``_`` is shown, not dropped as matplotlib's auto mode does)."""
    return ax.legend(handles, labels, title=title, **kw)
