"""Distributions over the messages of a capture: ages, remaining expiry, backout counts.

Each histogram is two small Spark jobs: one aggregate row (counts, extremes)
from which the bins are chosen, then one ``groupBy`` on the bin (at most a
few dozen rows reach the driver).
"""

from __future__ import annotations

import datetime as _dt
import math

import numpy as np

from dlqlens.plots import common as C

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


def _capture_column(capture_time):
    """The capture instant of each row, epoch seconds: the given time, else the
    latest DLQ put (MQDLH, else MQMD put time) of the row's capture file."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if capture_time is not None:
        return F.lit(_capture_seconds(capture_time))
    latest = C.epoch_seconds(F.coalesce(F.col("dlh_put_ts"), F.col("put_ts")))
    return F.max(latest).over(Window.partitionBy("source"))


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
    from pyspark.sql import functions as F

    title = "Age of the messages at capture time"
    cap = _capture_column(capture_time)
    series = {"since the original put (MQMD put_ts)": "put_ts",
              "on the dead-letter queue (since dlh_put_ts)": "dlh_put_ts"}
    short = ("MQMD put", "DLQ put")
    rows = df.select(*[(cap - C.epoch_seconds(F.col(c))).alias(f"a{i}")
                       for i, c in enumerate(series.values())],
                     F.col("source"),
                     C.epoch_seconds(F.coalesce(F.col("dlh_put_ts"), F.col("put_ts")))
                     .alias("latest"))
    aggs = [F.count(F.lit(1)).alias("n"), F.count_distinct("source").alias("sources"),
            F.max("latest").alias("latest")]
    for i in range(len(series)):
        a = F.col(f"a{i}")
        aggs += [F.count(a).alias(f"n{i}"), F.count_if(a < 0).alias(f"neg{i}"),
                 F.max(a).alias(f"max{i}")]
    stats = C.collect(rows.agg(*aggs), 1)[0]
    shown = [stats[f"n{i}"] - stats[f"neg{i}"] for i in range(len(series))]
    if not any(shown):
        return C.empty_figure(title, "no messages" if not stats["n"]
                              else "no message with a put time at or before the capture time")
    oldest = max(stats[f"max{i}"] for i in range(len(series)) if shown[i])
    unit, size = next((u, s) for u, s, below in AGE_UNITS if oldest < below)
    width = max(C.nice_step(max(oldest / size, 1e-9) / HISTOGRAM_BINS), 0.1)
    bin_of = lambda a: F.floor(a / F.lit(float(size * width))).cast("long")  # noqa: E731
    exploded = rows.select(F.explode(F.array(*[
        F.struct(F.lit(i).alias("s"), bin_of(F.col(f"a{i}")).alias("bin"))
        for i in range(len(series))])).alias("e")).where(F.col("e.bin") >= 0)
    agg = exploded.groupBy("e.s", "e.bin").agg(F.count(F.lit(1)).alias("n"))
    n_bins = math.floor(oldest / (size * width)) + 1
    counts = {(r["s"], int(r["bin"])): int(r["n"])
              for r in C.collect(agg, len(series) * (n_bins + 1))}
    n_bins = max([n_bins] + [b + 1 for _, b in counts])  # Spark's rounding has the last word

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
    notes = [f"{stats[f'neg{i}']:,} with a {short[i]} after the capture time not shown"
             for i in range(len(series)) if stats[f"neg{i}"]]
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
    from pyspark.sql import functions as F

    title = "Remaining expiry at capture (md.Expiry)"
    expiry = F.col("md.Expiry")
    secs = F.when(expiry >= 0, expiry.cast("double") / 10.0)
    rows = df.select(expiry.alias("e"), secs.alias("s"), F.col("source"),
                     C.epoch_seconds(F.coalesce(F.col("dlh_put_ts"), F.col("put_ts")))
                     .alias("latest"))
    stats = C.collect(rows.agg(
        F.count(F.lit(1)).alias("n"), F.count_if(F.col("e") == -1).alias("unlimited"),
        F.count_if(F.col("e") < -1).alias("invalid"), F.count_if(F.col("e").isNull()).alias("null"),
        F.count("s").alias("finite"), F.count_if(F.col("s") == 0).alias("zero"),
        F.max("s").alias("max"), F.min(F.when(F.col("s") > 0, F.col("s"))).alias("min_pos"),
        F.count_distinct("source").alias("sources"), F.max("latest").alias("latest")), 1)[0]
    unlimited = f"{stats['unlimited']:,} unlimited (Expiry -1): never expire"
    if not stats["n"]:
        return C.empty_figure(title)
    if not stats["finite"]:
        return C.empty_figure(title, f"no message with a finite expiry ({stats['n']:,} "
                                     f"messages; {unlimited})")
    log = stats["min_pos"] is not None and stats["max"] / stats["min_pos"] > 1000
    if log:
        bin_of = F.ceil(F.log10(F.col("s")) * PER_DECADE).cast("long")
        lo = math.ceil(math.log10(stats["min_pos"]) * PER_DECADE - 1e-9)
        hi = math.ceil(math.log10(stats["max"]) * PER_DECADE + 1e-9)
        first, last = lo - 1, hi + 1
    else:
        width = C.nice_step(max(stats["max"], 0.1) / HISTOGRAM_BINS)
        bin_of = F.ceil(F.col("s") / F.lit(width)).cast("long")
        first, last = 0, math.ceil(stats["max"] / width + 1e-9) + 1
    agg = (rows.where(F.col("s") > 0).groupBy(bin_of.alias("bin"))
           .agg(F.count(F.lit(1)).alias("n")))
    counts = {int(r["bin"]): int(r["n"]) for r in C.collect(agg, last - first + 1)}
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
    from pyspark.sql import functions as F

    title = "Backout counts (md.BackoutCount)"
    bc = F.col("md.BackoutCount")
    rows = df.select(bc.alias("b"))
    stats = C.collect(rows.agg(F.count(F.lit(1)).alias("n"),
                               F.count_if(F.col("b") >= 0).alias("valid"),
                               F.count_if(F.col("b") == 0).alias("zero"),
                               F.max("b").alias("max")), 1)[0]
    if not stats["valid"]:
        return C.empty_figure(title, "no messages" if not stats["n"]
                              else "no message with a BackoutCount")
    top = int(stats["max"])
    width = 1 if top <= 60 else int(math.ceil(C.nice_step(top / 50)))
    agg = (rows.where(F.col("b") >= 0)
           .groupBy(F.floor(F.col("b") / F.lit(width)).cast("long").alias("bin"))
           .agg(F.count(F.lit(1)).alias("n")))
    counts = {int(r["bin"]): int(r["n"]) for r in C.collect(agg, top // width + 1)}
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
