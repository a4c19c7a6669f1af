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


def bin_by_time(rows, *, freq, top: int, extra=()):
    """Count ``rows`` (columns ``ts``, a timestamp, and ``key``, a category
    string) by time bin and category, in Spark.

    Returns
    -------
    (dict, Binned or None)
        The statistics row (``n`` rows, ``timed`` with a time, ``lo``/``hi``
        epoch seconds, and the ``extra`` aggregates), and the counts (None
        when no row has a time). Four small aggregates reach the driver: one
        row, ``top`` rows, one row, and at most bins x (``top`` + 1) rows.
    """
    from pyspark.sql import functions as F

    ts = F.col("ts")
    stats = C.collect(rows.agg(
        F.count(F.lit(1)).alias("n"), F.count(ts).alias("timed"),
        F.min(C.epoch_seconds(ts)).alias("lo"), F.max(C.epoch_seconds(ts)).alias("hi"),
        *extra), 1)[0].asDict()
    if not stats["timed"]:
        return stats, None
    width = C.bin_width(stats["hi"] - stats["lo"], freq)
    timed = rows.where(ts.isNotNull())
    best = C.top_keys(timed, F.col("key"), top)
    first, last = int(stats["lo"] // width), int(stats["hi"] // width)
    agg = (timed.groupBy(C.bucket_column(F.col("key"), best).alias("b"),
                         C.bin_column(ts, width).alias("bin"))
           .agg(F.count(F.lit(1)).alias("n")))
    counts = {(r["b"], int(r["bin"])): int(r["n"])   # + 2: Spark's rounding at both ends
              for r in C.collect(agg, (last - first + 3) * (len(best.keys) + 1))}
    bins = [b for _, b in counts]
    return stats, Binned(width, best, counts, min(bins), max(bins))


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
    from pyspark.sql import functions as F

    dim = C.dimension(by)
    top = C.check_top(top)
    title = f"Messages put on the dead-letter queue, by {dim.title}"
    ts = F.coalesce(F.col("dlh_put_ts"), F.col("put_ts")) if fallback else F.col("dlh_put_ts")
    rows = df.select(ts.alias("ts"), F.col("dlh_put_ts").isNull().alias("no_dlq_ts"),
                     dim.key_column().alias("key"))
    stats, binned = bin_by_time(rows, freq=freq, top=top, extra=[
        F.count_if(F.col("no_dlq_ts") & F.col("ts").isNotNull()).alias("fell_back")])
    notes = []
    if stats["fell_back"]:
        notes.append(f"{stats['fell_back']:,} without a DLQ put time placed at their MQMD put time")
    if stats["n"] - stats["timed"]:
        notes.append(f"{stats['n'] - stats['timed']:,} without a "
                     f"{'put time' if fallback else 'DLQ put time'} not shown")
    if binned is None:
        return C.empty_figure(title, "no messages" + (f" ({notes[0]})" if notes else ""))
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


def _trigger_frame(df, by: str):
    """Trigger-message rows: ``ts`` (put time: MQMD, else MQDLH), ``key``, ``dead``.

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
    rows = df.where(is_trigger_message())
    if by == "initiation_queue":
        from dlqlens.detect.common import with_capture_queues

        rows = with_capture_queues(rows.select("source", "dlh", "put_ts", "dlh_put_ts"))
        initq = F.when(dead, blank_null(F.col("dlh.DestQName"))).otherwise(F.col("capture_queue"))
        key = F.struct(initq.alias("initq"), F.lit(None).cast("string").alias("appq"))
    else:
        appq = blank_null(F.col("tm.QName"))
        initq = F.when(appq.isNull() & dead, blank_null(F.col("dlh.DestQName")))
        key = F.struct(F.when(appq.isNull(), initq).alias("initq"), appq.alias("appq"))
    return rows.select(F.coalesce(F.col("put_ts"), F.col("dlh_put_ts")).alias("ts"),
                       F.to_json(key, {"ignoreNullFields": "false"}).alias("key"),
                       dead.alias("dead"))


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
    from pyspark.sql import functions as F

    if by not in TRIGGER_BY:
        raise ValueError(f"by must be one of {', '.join(TRIGGER_BY)}, not {by!r}")
    top = C.check_top(top)
    title = f"Trigger messages (MQTM) by {TRIGGER_BY[by]}"
    rows = _trigger_frame(df, by)
    stats, binned = bin_by_time(rows, freq=freq, top=top,
                                extra=[F.count_if(F.col("dead")).alias("dead")])
    untimed = stats["n"] - stats["timed"]
    if binned is None:
        return C.empty_figure(title, "no trigger messages" + (
            f" ({untimed:,} without a put time)" if untimed else ""))
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
        handles.append(ax.stairs(binned.values(key, bins), edges, color=color, linewidth=1.6,
                                 baseline=0))
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
