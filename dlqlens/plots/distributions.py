"""Distributions over the messages of a capture: ages, remaining expiry, backout counts.

Each histogram is a :class:`~dlqlens.plots.common.Plan`: one aggregate row
(counts, extremes) from which the bins are chosen, then its cells counted by
bin (at most a few dozen rows reach the driver); the histograms of a report
are computed with its other figures in the same two Spark queries
(:func:`dlqlens.plots.common.draw_plans`).
"""

from __future__ import annotations

import datetime as _dt
import math

import numpy as np

from dlqlens.plots import common as C
from dlqlens.spark.columns import literal_map

#: Bins a histogram aims at, at most.
HISTOGRAM_BINS = 40
#: Units of an age axis: (name, seconds, used while the oldest age is below).
AGE_UNITS = (("seconds", 1, 600), ("minutes", 60, 10 * 3600), ("hours", 3600, 10 * 86400),
             ("days", 86400, math.inf))
#: Log-scaled expiry bins per decade.
PER_DECADE = 5


def _capture_seconds(capture_time) -> float:
    """``capture_time`` (datetime, naive = UTC, or ISO 8601 string) as epoch seconds."""
    from dlqlens.detect.common import to_utc

    return to_utc(capture_time).replace(tzinfo=_dt.timezone.utc).timestamp()


def _capture_phrase(capture_time, sources: int, latest) -> str:
    """What the capture time is, for an axis label or title."""
    if capture_time is not None:
        return f"capture time {C.utc_text(_capture_seconds(capture_time))} (given)"
    if sources == 1 and latest is not None:
        return f"capture time = latest DLQ put, {C.utc_text(latest)}"
    return f"capture time = latest DLQ put of each of the {sources:,} capture files"


def ages(df, *, capture_time=None):
    """How old the messages were when the capture was taken, as a histogram.

    Two step histograms on one axis: the age since the original put (MQMD
    ``put_ts``) and the time spent on the dead-letter queue (since the MQDLH
    ``dlh_put_ts``). The unit (seconds, minutes, hours or days) follows the
    oldest age and is in the axis label.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows. Reads ``put_ts``, ``dlh_put_ts`` (UTC) and ``source``.
    capture_time : datetime or str, optional
        When the capture was taken (UTC; a naive datetime is UTC; an ISO 8601
        string). Default: for each capture file (``source``), its latest DLQ
        put (``dlh_put_ts``, else ``put_ts``): a lower bound, so ages are
        understated by the time between that put and the browse. The axis
        label says which.

    Returns
    -------
    matplotlib.figure.Figure
        x: age at capture time in the chosen unit, y: messages per bin. Ages
        below zero (a put after the capture time: clock skew or a capture
        time given too early) are not drawn; the title says how many. A
        figure saying "no messages" when no row has a put time.

    Raises
    ------
    ValueError
        When ``capture_time`` is a string that is not ISO 8601.
    """
    return C.draw_plans(df, [AgesPlan(capture_time=capture_time)])[0]


#: The two ages of :func:`ages`: legend name -> timestamp column.
AGE_SERIES = {"since the original put (MQMD put_ts)": "put_ts",
              "on the dead-letter queue (since dlh_put_ts)": "dlh_put_ts"}


class AgesPlan(C.Plan):
    """:func:`ages` as a :class:`~dlqlens.plots.common.Plan`: cells (age, bin)."""

    top_a = len(AGE_SERIES)

    def __init__(self, *, capture_time=None):
        if capture_time is not None:
            _capture_seconds(capture_time)  # ValueError now, before any Spark job
        self.capture_time = capture_time

    def frame(self, df, tag):
        from pyspark.sql import functions as F

        for i, c in enumerate(AGE_SERIES.values()):
            df = df.withColumn(f"{tag}_t{i}", C.epoch_seconds(F.col(c)))
        return df.withColumn(f"{tag}_latest", F.unix_micros(
            F.coalesce(F.col("dlh_put_ts"), F.col("put_ts"))))

    def _capture(self, tag, stats=None):
        """The capture instant, epoch seconds: the given time, else the
        latest DLQ put of a file: over the file's rows in the statistics
        (``stats`` None), from their ``source -> latest`` map in the cells."""
        from pyspark.sql import functions as F

        if self.capture_time is not None:
            return F.lit(_capture_seconds(self.capture_time))
        if stats is None:
            return F.col(f"{tag}_file_latest") / F.lit(1e6)
        latest = literal_map(stats["file_latest"], "string", "bigint")
        return latest[F.col("source")] / F.lit(1e6)

    def stats(self, tag):
        from pyspark.sql import functions as F

        out = [C.counted(f"{tag}_n", F.count(F.lit(1))),
               C.counted(f"{tag}_sources", F.count_distinct("source")),
               C.highest(f"{tag}_latest", F.max(f"{tag}_latest") / F.lit(1e6))]
        if self.capture_time is None:
            # each file's latest DLQ put (microseconds): ages are measured from it
            out.append(C.by_source(f"{tag}_file_latest", F.max(f"{tag}_latest"), "bigint"))
        cap = self._capture(tag)
        for i in range(len(AGE_SERIES)):
            t = F.col(f"{tag}_t{i}")
            # the oldest age: the capture instant less the earliest put (of each file)
            out += [C.counted(f"{tag}_n{i}", F.count(t)),
                    C.Stat(f"{tag}_first{i}", F.min(t)),
                    C.Stat(f"{tag}_max{i}", None, F.max(cap - F.col(f"{tag}_first{i}")))]
        return out

    def cells(self, stats, tag):
        from pyspark.sql import functions as F

        # an age shown: at or after its put; the puts after the capture
        # instant are counted in bin -1 (not drawn: the title says how many)
        shown = [stats[f"max{i}"] is not None and stats[f"max{i}"] >= 0
                 for i in range(len(AGE_SERIES))]
        if not any(shown):
            return None
        oldest = max(stats[f"max{i}"] for i in range(len(AGE_SERIES)) if shown[i])
        self.unit, size = next((u, s) for u, s, below in AGE_UNITS if oldest < below)
        self.width = max(C.nice_step(max(oldest / size, 1e-9) / HISTOGRAM_BINS), 0.1)
        self.n_bins = math.floor(oldest / (size * self.width)) + 1
        cap = self._capture(tag, stats)
        out = []
        for i in range(len(AGE_SERIES)):
            age = cap - F.col(f"{tag}_t{i}")
            b = F.when(age < 0, F.lit(-1)).otherwise(
                F.floor(age / F.lit(float(size * self.width))).cast("long"))
            out.append((age.isNotNull(), F.lit(str(i)), b))  # null: no such put
        return out

    def max_b(self, stats):
        return self.n_bins + 2  # and bin -1

    def draw(self, stats, cells):
        title = "Age of the messages at capture time"
        capture_time, series = self.capture_time, AGE_SERIES
        short = ("MQMD put", "DLQ put")
        if cells is None:
            return C.empty_figure(title, "no messages" if not stats["n"]
                                  else "no message with a put time at or before the capture "
                                       "time")
        unit, width = self.unit, self.width
        counts = {(int(a), b): n for (a, b), n in cells.folded().items()}
        neg = [counts.pop((i, -1), 0) for i in range(len(series))]
        shown = [stats[f"n{i}"] - neg[i] for i in range(len(series))]
        # Spark's rounding has the last word
        n_bins = max([self.n_bins] + [b + 1 for _, b in counts])

        fig = C.new_figure(10, 5)
        ax = fig.add_subplot()
        edges = np.arange(n_bins + 1) * width
        styles = ({"fill": True, "alpha": 0.45, "color": "tab:blue"},
                  {"fill": False, "linewidth": 2, "color": "tab:red"})
        handles, labels = [], []
        for i, (name, style) in enumerate(zip(series, styles)):
            values = np.array([counts.get((i, b), 0) for b in range(n_bins)], dtype=float)
            if shown[i]:
                handles.append(ax.stairs(values, edges, baseline=0, **style))
                labels.append(f"{name}: {C.count(shown[i], 'message')}")
        ax.set_xlim(0, edges[-1])
        ax.set_ylim(bottom=0)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel(f"age at capture time ({unit}); "
                      f"{_capture_phrase(capture_time, stats['sources'], stats['latest'])}")
        ax.set_ylabel(f"messages per {width:g} {unit}")
        notes = [f"{neg[i]:,} with a {short[i]} after the capture time not shown"
                 for i in range(len(series)) if neg[i]]
        missing = [f"{stats['n'] - stats[f'n{i}']:,} without {col}"
                   for i, col in enumerate(series.values()) if stats["n"] - stats[f"n{i}"]]
        fig.suptitle(f"{title} ({C.count(stats['n'], 'message')})"
                     + "".join(f"\n{x}" for x in ["; ".join(notes + missing)] if x), fontsize=11)
        C.legend(ax, handles, labels, loc="upper right", fontsize=9)
        return C.finish(fig)


def remaining_expiry(df, *, capture_time=None):
    """Remaining expiry of the messages with a finite ``md.Expiry``, and the expiry curve.

    ``md.Expiry`` is the remaining lifetime in tenths of a second (``-1``,
    MQEI_UNLIMITED: never expires); it counts down while the message waits,
    the DLQ put keeps what is left, and a browse returns what is left then.
    So a captured message expires ``Expiry / 10`` seconds after the capture.
    Left: the histogram of those seconds (log-scaled when they span more than
    three decades). Right: the expiry curve, how many of the captured messages
    will have expired by ``t`` seconds after the capture (still counting in
    the queue's depth until a get reaches them). Unlimited messages are
    counted in the title and the legend.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows. Reads ``md.Expiry`` (tenths of a second), and
        ``source``, ``dlh_put_ts`` and ``put_ts`` to name the capture time
        when ``capture_time`` is not given.
    capture_time : datetime or str, optional
        When the capture was taken (UTC). It only places the curve in time
        (the title says when the last message expires); default: the latest
        DLQ put (one capture file) or "each capture file's".

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: histogram (x: remaining expiry, s; y: messages per bin) and
        curve (x: seconds after the capture; y: messages expired). A figure
        saying "no messages" (or "no message with a finite expiry") otherwise.

    Raises
    ------
    ValueError
        When ``capture_time`` is a string that is not ISO 8601.
    """
    return C.draw_plans(df, [ExpiryPlan(capture_time=capture_time)])[0]


class ExpiryPlan(C.Plan):
    """:func:`remaining_expiry` as a :class:`~dlqlens.plots.common.Plan`: cells
    (one series, expiry bin)."""

    def __init__(self, *, capture_time=None):
        if capture_time is not None:
            _capture_seconds(capture_time)  # ValueError now, before any Spark job
        self.capture_time = capture_time

    def frame(self, df, tag):
        from pyspark.sql import functions as F

        expiry = F.col("md.Expiry")
        return (df.withColumn(f"{tag}_e", expiry)
                .withColumn(f"{tag}_s", F.when(expiry >= 0, expiry.cast("double") / 10.0))
                .withColumn(f"{tag}_latest", C.epoch_seconds(
                    F.coalesce(F.col("dlh_put_ts"), F.col("put_ts")))))

    def stats(self, tag):
        from pyspark.sql import functions as F

        e, sec = F.col(f"{tag}_e"), F.col(f"{tag}_s")
        return [C.counted(f"{tag}_n", F.count(F.lit(1))),
                C.counted(f"{tag}_unlimited", F.count_if(e == -1)),
                C.counted(f"{tag}_invalid", F.count_if(e < -1)),
                C.counted(f"{tag}_null", F.count_if(e.isNull())),
                C.counted(f"{tag}_finite", F.count(sec)),
                C.counted(f"{tag}_zero", F.count_if(sec == 0)),
                C.highest(f"{tag}_max", F.max(sec)),
                C.lowest(f"{tag}_min_pos", F.min(F.when(sec > 0, sec))),
                C.counted(f"{tag}_sources", F.count_distinct("source")),
                C.highest(f"{tag}_latest", F.max(f"{tag}_latest"))]

    def cells(self, stats, tag):
        from pyspark.sql import functions as F

        if not stats["n"] or not stats["finite"]:
            return None
        sec = F.col(f"{tag}_s")
        self.log = stats["min_pos"] is not None and stats["max"] / stats["min_pos"] > 1000
        if self.log:
            bin_of = F.ceil(F.log10(sec) * PER_DECADE).cast("long")
            lo = math.ceil(math.log10(stats["min_pos"]) * PER_DECADE - 1e-9)
            hi = math.ceil(math.log10(stats["max"]) * PER_DECADE + 1e-9)
            self.first, self.last = lo - 1, hi + 1
        else:
            self.width = C.nice_step(max(stats["max"], 0.1) / HISTOGRAM_BINS)
            bin_of = F.ceil(sec / F.lit(self.width)).cast("long")
            self.first, self.last = 0, math.ceil(stats["max"] / self.width + 1e-9) + 1
        return [(sec > 0, F.lit("s"), bin_of)]

    def max_b(self, stats):
        return self.last - self.first + 1

    def draw(self, stats, cells):
        capture_time = self.capture_time
        title = "Remaining expiry at capture (md.Expiry)"
        unlimited = f"{stats['unlimited']:,} unlimited (Expiry -1): never expire"
        if not stats["n"]:
            return C.empty_figure(title)
        if not stats["finite"]:
            return C.empty_figure(title, f"no message with a finite expiry ({stats['n']:,} "
                                         f"messages; {unlimited})")
        return _draw_expiry(title, stats, capture_time, unlimited, self.log,
                            getattr(self, "width", None),
                            {b: n for (_, b), n in cells.folded().items()})


def _draw_expiry(title, stats, capture_time, unlimited, log, width, counts):
    lo_bin = min(counts, default=1)
    hi_bin = max(counts, default=1)
    ks = np.arange(lo_bin, hi_bin + 1)
    values = np.array([counts.get(int(k), 0) for k in ks], dtype=float)
    if log:
        edges = 10.0 ** (np.arange(lo_bin - 1, hi_bin + 1) / PER_DECADE)
    else:
        edges = np.arange(lo_bin - 1, hi_bin + 1) * width

    fig = C.new_figure(12, 5)
    hist, curve = fig.subplots(1, 2)
    hist.bar(edges[:-1], values, width=np.diff(edges), align="edge", color="tab:orange",
             edgecolor="white", linewidth=0.4)
    hist.set_xlabel("remaining expiry at capture (s)" + (", log scale" if log else ""))
    hist.set_ylabel(f"messages per bin ({PER_DECADE} per decade)" if log
                    else f"messages per {width:g} s")
    hist.yaxis.get_major_locator().set_params(integer=True)
    hist.set_title(f"{C.count(stats['finite'], 'message')} with a finite expiry", fontsize=10)

    # expired by t: the messages with Expiry/10 <= t (bins are (left, right])
    start = 0.0 if not log else edges[0]
    beyond = edges[-1] * 10 ** (1 / PER_DECADE) if log else edges[-1] + width  # the last step shows
    xs = np.concatenate([[start], edges[1:], [beyond]])
    ys = stats["zero"] + np.concatenate([[0], np.cumsum(values), [values.sum()]])
    line, = curve.step(xs, ys, where="post", color="tab:red", linewidth=2)
    full = curve.axhline(stats["finite"], color="0.4", linestyle="--", linewidth=1)
    from matplotlib.patches import Patch

    handles = [line, full]
    labels = ["expired (still in the depth until a get reaches them)",
              f"all {stats['finite']:,} with a finite expiry"]
    if stats["unlimited"]:
        handles.append(Patch(color="none"))
        labels.append(unlimited)
    if stats["zero"]:
        handles.append(Patch(color="none"))
        labels.append(f"{stats['zero']:,} already expired at capture (Expiry 0)")
    C.legend(curve, handles, labels, loc="lower right", fontsize=9)
    if log:
        for ax in (hist, curve):
            ax.set_xscale("log")
    else:
        curve.set_xlim(0, xs[-1])
    curve.set_ylim(0, stats["finite"] * 1.08)
    curve.yaxis.get_major_locator().set_params(integer=True)
    curve.set_xlabel("time after the capture (s)" + (", log scale" if log else ""))
    curve.set_ylabel("messages expired by then")
    curve.set_title("Expiry curve", fontsize=10)

    phrase = _capture_phrase(capture_time, stats["sources"], stats["latest"])
    when = None
    if capture_time is not None:
        when = _capture_seconds(capture_time)
    elif stats["sources"] == 1:
        when = stats["latest"]
    detail = [f"{stats['finite']:,} of {C.count(stats['n'], 'message')} "
              f"{'has' if stats['finite'] == 1 else 'have'} a finite expiry",
              unlimited]
    if stats["invalid"] or stats["null"]:
        detail.append(f"{stats['invalid'] + stats['null']:,} without a valid Expiry")
    last_line = phrase + (f"; the last expires {C.utc_text(when + stats['max'])}"
                          if when is not None else "")
    fig.suptitle(f"{title}\n{'; '.join(detail)}\n{last_line}", fontsize=11)
    return C.finish(fig)


def backout_counts(df):
    """The distribution of ``md.BackoutCount``, as a bar chart.

    One bar per count up to 60 (integer bins of a wider "nice" width
    beyond); the y axis is log-scaled when the counts are skewed (the
    largest bar 50 times the smallest non-empty one or more).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows. Reads ``md.BackoutCount`` (times the message was got
        under syncpoint and backed out).

    Returns
    -------
    matplotlib.figure.Figure
        x: BackoutCount, y: messages. A figure saying "no messages" for an
        empty ``df``; messages without a BackoutCount (or a negative one)
        are counted in the title.
    """
    return C.draw_plans(df, [BackoutPlan()])[0]


class BackoutPlan(C.Plan):
    """:func:`backout_counts` as a :class:`~dlqlens.plots.common.Plan`: cells
    (one series, BackoutCount bin)."""

    def frame(self, df, tag):
        from pyspark.sql import functions as F

        return df.withColumn(f"{tag}_b", F.col("md.BackoutCount"))

    def stats(self, tag):
        from pyspark.sql import functions as F

        b = F.col(f"{tag}_b")
        return [C.counted(f"{tag}_n", F.count(F.lit(1))),
                C.counted(f"{tag}_valid", F.count_if(b >= 0)),
                C.counted(f"{tag}_zero", F.count_if(b == 0)), C.highest(f"{tag}_max", F.max(b))]

    def cells(self, stats, tag):
        from pyspark.sql import functions as F

        if not stats["valid"]:
            return None
        top = int(stats["max"])
        self.width = 1 if top <= 60 else int(math.ceil(C.nice_step(top / 50)))
        b = F.col(f"{tag}_b")
        return [(b >= 0, F.lit("b"), F.floor(b / F.lit(self.width)).cast("long"))]

    def max_b(self, stats):
        return int(stats["max"]) // self.width + 1

    def draw(self, stats, cells):
        title = "Backout counts (md.BackoutCount)"
        if cells is None:
            return C.empty_figure(title, "no messages" if not stats["n"]
                                  else "no message with a BackoutCount")
        return _draw_backouts(title, stats, self.width,
                              {b: n for (_, b), n in cells.folded().items()})


def _draw_backouts(title, stats, width, counts):
    top = int(stats["max"])
    bins = np.arange(top // width + 1)
    values = np.array([counts.get(int(b), 0) for b in bins], dtype=float)
    nonzero = values[values > 0]
    log = nonzero.max() / nonzero.min() >= 50

    fig = C.new_figure(10, 4.5)
    ax = fig.add_subplot()
    if width == 1:
        ax.bar(bins, values, width=0.8, color="tab:purple")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_xlim(-0.6, max(top, 10) + 0.6)
        ax.set_xlabel("BackoutCount (times got under syncpoint and backed out)")
    else:
        ax.bar(bins * width, values, width=width, align="edge", color="tab:purple",
               edgecolor="white", linewidth=0.4)
        ax.set_xlabel(f"BackoutCount (times got under syncpoint and backed out), "
                      f"bins of {width}")
    for b, v in zip(bins, values):
        if v and len(bins) <= 30:
            ax.text(b * width + (0 if width == 1 else width / 2), v, f"{int(v):,}",
                    ha="center", va="bottom", fontsize=8)
    if log:
        ax.set_yscale("log")
    else:
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.margins(y=0.1)
    ax.set_ylabel("messages" + (" (log scale)" if log else ""))
    notes = [C.count(stats["valid"], "message")]
    if top == 0:
        notes.append("none backed out (all 0)")
    else:
        notes.append(f"{stats['zero']:,} never backed out (0)")
    if stats["n"] - stats["valid"]:
        notes.append(f"{stats['n'] - stats['valid']:,} without a valid BackoutCount not shown")
    fig.suptitle(f"{title}\n{'; '.join(notes)}", fontsize=11)
    return C.finish(fig)


# the plan of each figure, for dlqlens.plots.figures (its aggregates computed with others')
ages.plan = AgesPlan
remaining_expiry.plan = ExpiryPlan
backout_counts.plan = BackoutPlan
