"""Messages over time: arrivals on the dead-letter queue, trigger-message rates."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from dlqlens.plots import common as C


@dataclass(frozen=True)
class Binned:
    """Rows counted by time bin and category (top N + other), on the driver.

    Attributes
    ----------
    width : float
        Bin width, seconds (bin ``b`` starts ``b * width`` s after the epoch).
    top : TopKeys
        The categories drawn on their own.
    counts : dict
        ``(key or OTHER, bin) -> rows``.
    first, last : int
        The first and last bins with rows.
    """

    width: float
    top: C.TopKeys
    counts: dict
    first: int
    last: int

    def values(self, key, bins) -> np.ndarray:
        """Rows of ``key`` in each of ``bins``."""
        return np.array([self.counts.get((key, b), 0) for b in bins], dtype=float)


class TimePlan(C.Plan):
    """Rows counted by time bin and category (the common part of
    :class:`ArrivalsPlan` and :class:`TriggerPlan`).

    A subclass defines ``columns(df)``: the columns ``ts`` (a timestamp),
    ``key`` (a category string) and ``counted`` (the row is one of the
    figure's, never null), and :meth:`extra` (more aggregates). Its
    statistics: ``n`` rows counted, ``timed`` with a time, ``lo``/``hi``
    epoch seconds, and the extras; its cells: (key, time bin) of the timed
    rows, at most ``top`` keys and one "other".
    """

    def __init__(self, *, freq, top: int):
        self.freq, self.top_a = freq, C.check_top(top)

    def frame(self, df, tag):
        cols = self.columns(df)
        for name in ("ts", "key", "counted"):
            df = df.withColumn(f"{tag}_{name}", cols[name])
        return df

    def extra(self, tag) -> list:
        return []

    def stats(self, tag):
        from pyspark.sql import functions as F

        counted, ts = F.col(f"{tag}_counted"), F.col(f"{tag}_ts")
        timed = F.when(counted, ts)
        return [C.counted(f"{tag}_n", F.count_if(counted)),
                C.counted(f"{tag}_timed", F.count(timed)),
                C.lowest(f"{tag}_lo", F.min(C.epoch_seconds(timed))),
                C.highest(f"{tag}_hi", F.max(C.epoch_seconds(timed))), *self.extra(tag)]

    def cells(self, stats, tag):
        from pyspark.sql import functions as F

        if not stats["timed"]:
            return None
        self.width = C.bin_width(stats["hi"] - stats["lo"], self.freq)
        ts = F.col(f"{tag}_ts")
        return [(F.col(f"{tag}_counted") & ts.isNotNull(), F.col(f"{tag}_key"),
                 C.bin_column(ts, self.width))]

    def max_b(self, stats):
        # + 2: Spark's rounding at both ends
        return int(stats["hi"] // self.width) - int(stats["lo"] // self.width) + 3

    def binned(self, cells) -> Binned:
        counts = {k: n for k, n in cells.folded().items()}
        bins = [b for _, b in counts]
        return Binned(self.width, cells.a, counts, min(bins), max(bins))


def _legend(ax, handles, labels, totals, title):
    C.legend(ax, handles, [f"{lab}: {n:,}" for lab, n in zip(labels, totals)], title=title,
             loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, title_fontsize=9)


def arrivals(df, *, by: str = "reason", freq=None, top: int = 8, fallback: bool = True):
    """Messages put on the dead-letter queue over time, as stacked bars.

    Each bar is a time bin; its segments are the ``top`` largest categories
    (``by``) and one "other" segment for the rest. Counted in Spark: one
    aggregate of at most (bins x (top + 1)) rows reaches the driver.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows. Reads ``dlh_put_ts`` (the put onto the DLQ, UTC),
        ``put_ts`` (MQMD put, UTC; see ``fallback``) and the columns of
        ``by``: ``dlh.Reason`` and ``reason_name`` (``"reason"``),
        ``dlh.DestQName`` and ``dlh.DestQMgrName`` (``"destination"``;
        temporary dynamic queues, ``AMQ.*`` and ``CSQ.*``, grouped per
        queue manager),
        ``source`` (``"source"``), ``dlh.PutApplName`` and ``dlh.PutApplType``
        (``"putter"``: the application that dead-lettered the message).
    by : {"reason", "destination", "source", "putter"}, default "reason"
        The categories of the segments.
    freq : None, float, datetime.timedelta or str, optional
        Bin width: seconds, a timedelta, or a pandas duration string
        (``"5min"``). Default: a "nice" width (1 s, 2 s, 5 s, 10 s, ... 1 min,
        5 min, 15 min, ... 1 h, 6 h, 1 day, 1 week ...) making at most 60
        bins over the time span.
    top : int, default 8
        Categories drawn on their own; the others are one grey "other"
        segment.
    fallback : bool, default True
        Place a message without a DLQ put time (no MQDLH, or an invalid
        ``dlh.PutDate``/``PutTime``) at its MQMD put time ``put_ts``; the
        title says how many were. False: such messages are left out (and the
        title says how many).

    Returns
    -------
    matplotlib.figure.Figure
        x: DLQ put time (UTC), y: messages per bin. A figure saying "no
        messages" when ``df`` has no rows (or none with a time).

    Raises
    ------
    ValueError
        For an unknown ``by``, ``top`` < 1, or a ``freq`` that is not a
        positive duration or makes more than 5,000 bins.
    """
    return C.draw_plans(df, [ArrivalsPlan(by=by, freq=freq, top=top, fallback=fallback)])[0]


class ArrivalsPlan(TimePlan):
    """:func:`arrivals` as a :class:`~dlqlens.plots.common.Plan` (its parameters)."""

    def __init__(self, *, by: str = "reason", freq=None, top: int = 8, fallback: bool = True):
        self.dim = C.dimension(by)
        super().__init__(freq=freq, top=top)
        self.fallback = fallback

    def columns(self, df):
        from pyspark.sql import functions as F

        ts = (F.coalesce(F.col("dlh_put_ts"), F.col("put_ts")) if self.fallback
              else F.col("dlh_put_ts"))
        return {"ts": ts, "key": self.dim.key_column(), "counted": F.lit(True)}

    def frame(self, df, tag):
        from pyspark.sql import functions as F

        return super().frame(df, tag).withColumn(f"{tag}_no_dlq_ts", F.col("dlh_put_ts").isNull())

    def extra(self, tag):
        from pyspark.sql import functions as F

        return [C.counted(f"{tag}_fell_back", F.count_if(
            F.col(f"{tag}_no_dlq_ts") & F.col(f"{tag}_ts").isNotNull()))]

    def draw(self, stats, cells):
        dim, fallback = self.dim, self.fallback
        title = f"Messages put on the dead-letter queue, by {dim.title}"
        notes = []
        if stats["fell_back"]:
            notes.append(f"{stats['fell_back']:,} without a DLQ put time placed at their MQMD "
                         "put time")
        if stats["n"] - stats["timed"]:
            notes.append(f"{stats['n'] - stats['timed']:,} without a "
                         f"{'put time' if fallback else 'DLQ put time'} not shown")
        if cells is None:
            return C.empty_figure(title, "no messages" + (f" ({notes[0]})" if notes else ""))
        binned = self.binned(cells)
        width = binned.width

        fig = C.new_figure(11, 5.5)
        ax = fig.add_subplot()
        bins = sorted({b for _, b in binned.counts})
        x = C.bin_dates(bins, width)
        bottom = np.zeros(len(bins))
        handles = []
        colors = C.category_colors(len(binned.top.keys), bool(binned.top.others))
        for key, color in zip(binned.top.buckets, colors):
            h = binned.values(key, bins)
            handles.append(ax.bar(x, h, width=width / 86400, bottom=bottom, align="edge",
                                  color=color, edgecolor="white", linewidth=0.3))
            bottom += h
        C.utc_axis(ax.xaxis)
        ax.set_xlim(*C.time_limits(binned.first, binned.last + 1, width))
        ax.set_ylim(0, bottom.max() * 1.05)
        ax.set_xlabel("DLQ put time (UTC)" if not stats["fell_back"]
                      else "DLQ put time, else MQMD put time (UTC)")
        ax.set_ylabel(f"messages per {C.width_label(width)}")
        ax.yaxis.get_major_locator().set_params(integer=True)
        fig.suptitle(f"{title}\n{C.count(stats['timed'], 'message')} from "
                     f"{C.utc_text(stats['lo'])} to {C.utc_text(stats['hi'])}"
                     + "".join(f"; {n}" for n in notes), fontsize=11)
        _legend(ax, handles, C.display_labels(C.key_labels(dim, binned.top)), binned.top.totals,
                dim.title)
        return C.finish(fig)


#: Trigger-message categories of :func:`trigger_rate`.
TRIGGER_BY = {
    "application_queue": "application queue (tm.QName)",
    "initiation_queue": "initiation queue",
}


def _trigger_columns(df, by: str):
    """``df`` with the trigger-message columns, and their names: ``counted`` (the
    row is a trigger message), ``ts`` (put time: MQMD, else MQDLH), ``key``, ``dead``.

    A row is a trigger message when its Format (``md.Format``, or
    ``dlh.Format`` after an MQDLH) is ``MQTRIG`` or an MQTM was decoded
    (:func:`dlqlens.detect.trigger_messages.is_trigger_message`).
    The initiation queue is ``dlh.DestQName`` for a dead letter (the queue
    the trigger message could not stay on) and the captured queue
    (:func:`dlqlens.detect.common.with_capture_queues`) otherwise.
    """
    from pyspark.sql import functions as F

    def trim(c):
        return F.rtrim(F.ltrim(c))

    def blank_null(c):
        return F.when(trim(c) == "", F.lit(None)).otherwise(trim(c))

    from dlqlens.detect.trigger_messages import dead_letter_column, is_trigger_message

    dead = dead_letter_column()
    if by == "initiation_queue":
        from dlqlens.detect.common import with_capture_queues

        # (no mapping given: column expressions of source only, no join)
        df = with_capture_queues(df)
        initq = F.when(dead, blank_null(F.col("dlh.DestQName"))).otherwise(F.col("capture_queue"))
        key = F.struct(initq.alias("initq"), F.lit(None).cast("string").alias("appq"))
    else:
        appq = blank_null(F.col("tm.QName"))
        initq = F.when(appq.isNull() & dead, blank_null(F.col("dlh.DestQName")))
        key = F.struct(F.when(appq.isNull(), initq).alias("initq"), appq.alias("appq"))
    return df, {"counted": is_trigger_message(),
                "ts": F.coalesce(F.col("put_ts"), F.col("dlh_put_ts")),
                "key": F.to_json(key, {"ignoreNullFields": "false"}), "dead": dead}


def _trigger_label(k: dict, by: str) -> str:
    if k["appq"] is not None:
        return C.text(k["appq"])
    if k["initq"] is not None:
        return C.text(k["initq"]) + (" (no MQTM)" if by == "application_queue" else "")
    return "(unknown queue)"


def trigger_rate(df, *, freq=None, by: str = "application_queue", top: int = 8):
    """Trigger messages per time bin, one step line per queue.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (initiation queues, dead-letter queues, or both). Reads
        ``md.Format``, ``dlh`` (``Reason``, ``Format``, ``DestQName``),
        ``tm`` (``StrucId``, ``QName``), ``put_ts`` and ``dlh_put_ts``, and
        ``source`` for ``by="initiation_queue"``. A row is a trigger message
        when its Format (after an MQDLH, ``dlh.Format``) is ``MQTRIG`` or an
        MQTM was decoded. Its time is its MQMD put time (when the queue
        manager made it), else its DLQ put time.
    freq : None, float, datetime.timedelta or str, optional
        Bin width as in :func:`arrivals` (default: a nice width, at most 60
        bins).
    by : {"application_queue", "initiation_queue"}, default "application_queue"
        ``tm.QName`` (the triggered queue; a trigger message whose MQTM was
        cut off is shown under its initiation queue), or the initiation
        queue: ``dlh.DestQName`` of a dead-lettered trigger message, the
        captured queue (file banner or name) of one that is not.
    top : int, default 8
        Queues drawn on their own; the rest is one grey "other" line.

    Returns
    -------
    matplotlib.figure.Figure
        x: trigger-message put time (UTC), y: trigger messages per bin. A
        figure saying "no trigger messages" when there are none.

    Raises
    ------
    ValueError
        For an unknown ``by``, ``top`` < 1 or a bad ``freq`` (see :func:`arrivals`).
    """
    return C.draw_plans(df, [TriggerPlan(freq=freq, by=by, top=top)])[0]


class TriggerPlan(TimePlan):
    """:func:`trigger_rate` as a :class:`~dlqlens.plots.common.Plan` (its parameters)."""

    def __init__(self, *, freq=None, by: str = "application_queue", top: int = 8):
        if by not in TRIGGER_BY:
            raise ValueError(f"by must be one of {', '.join(TRIGGER_BY)}, not {by!r}")
        super().__init__(freq=freq, top=top)
        self.by = by

    def frame(self, df, tag):
        from pyspark.sql import functions as F

        framed, cols = _trigger_columns(df, self.by)
        for name in ("ts", "key", "counted", "dead"):
            framed = framed.withColumn(f"{tag}_{name}", cols[name])
        return framed.select(*df.columns, *[F.col(f"{tag}_{name}")
                                            for name in ("ts", "key", "counted", "dead")])

    def extra(self, tag):
        from pyspark.sql import functions as F

        return [C.counted(f"{tag}_dead",
                          F.count_if(F.col(f"{tag}_counted") & F.col(f"{tag}_dead")))]

    def draw(self, stats, cells):
        by = self.by
        title = f"Trigger messages (MQTM) by {TRIGGER_BY[by]}"
        untimed = stats["n"] - stats["timed"]
        if cells is None:
            return C.empty_figure(title, "no trigger messages" + (
                f" ({untimed:,} without a put time)" if untimed else ""))
        binned = self.binned(cells)
        labels = [_trigger_label(json.loads(k), by) for k in binned.top.keys]
        if binned.top.others:
            labels.append(f"other ({binned.top.others:,} queues)")

        fig = C.new_figure(11, 5)
        ax = fig.add_subplot()
        bins = range(binned.first, binned.last + 1)
        edges = C.bin_dates(range(binned.first, binned.last + 2), binned.width)
        handles = []
        colors = C.category_colors(len(binned.top.keys), bool(binned.top.others))
        for key, color in zip(binned.top.buckets, colors):
            handles.append(ax.stairs(binned.values(key, bins), edges, color=color,
                                     linewidth=1.6, baseline=0))
        C.utc_axis(ax.xaxis)
        ax.set_xlim(*C.time_limits(binned.first, binned.last + 1, binned.width))
        ax.set_ylim(bottom=0)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel("trigger message put time (UTC)")
        ax.set_ylabel(f"trigger messages per {C.width_label(binned.width)}")
        detail = (f"{C.count(stats['timed'], 'trigger message')}, {stats['dead']:,} of them "
                  "dead-lettered")
        if untimed:
            detail += f"; {untimed:,} without a put time not shown"
        fig.suptitle(f"{title}\n{detail}", fontsize=11)
        _legend(ax, handles, C.display_labels(labels), binned.top.totals, TRIGGER_BY[by])
        return C.finish(fig)


# the plan of each figure, for dlqlens.plots.figures (its aggregates computed with others')
arrivals.plan = ArrivalsPlan
trigger_rate.plan = TriggerPlan
