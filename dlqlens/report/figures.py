"""The report's figure: dead letters by reason over time.

One small function producing one matplotlib ``Figure`` from a capture
DataFrame, aggregated in Spark (messages per reason per time bucket; only
those counts reach the driver). It stands in until :mod:`dlqlens.plots`
provides the report's figures; a section takes any ``Figure``.
"""

from __future__ import annotations

import datetime as _dt

#: Bucket widths tried, in seconds (1 s ... 30 days); the first that gives at
#: most :data:`MAX_BUCKETS` buckets over the capture's span is used.
BUCKET_SECONDS = (1, 10, 60, 300, 900, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400)
MAX_BUCKETS = 400
#: Reasons drawn in their own row; the others share one row.
MAX_REASONS = 10

_NO_DLH = "(no MQDLH)"


def bucket_seconds(span_seconds: float) -> int:
    """The bucket width for a capture spanning ``span_seconds``."""
    for width in BUCKET_SECONDS:
        if span_seconds / width <= MAX_BUCKETS:
            return width
    return BUCKET_SECONDS[-1]


def _bucket_label(width: int) -> str:
    for seconds, name in ((30 * 86400, "30 days"), (7 * 86400, "week"), (86400, "day"),
                          (3600, "hour"), (60, "minute"), (1, "second")):
        if width % seconds == 0:
            n = width // seconds
            return name if n == 1 else f"{n} {name}s"
    return f"{width} s"


def arrivals_counts(df):
    """Messages per reason and time bucket, as a small pandas DataFrame.

    The time is the MQDLH put (``dlh_put_ts``), else the MQMD put
    (``put_ts``); messages without either are left out and counted.

    Returns
    -------
    (pandas.DataFrame, int, int)
        Columns ``reason`` (``"2053 MQRC_Q_FULL"``, ``"(no MQDLH)"``, or
        ``"other reasons"`` past :data:`MAX_REASONS`), ``bucket`` (UTC,
        naive ``datetime``) and ``messages``; the bucket width in seconds;
        the messages without a usable time.
    """
    import pandas as pd
    from pyspark.sql import functions as F

    ts = F.coalesce(F.col("dlh_put_ts"), F.col("put_ts"))
    reason = F.when(F.col("dlh").isNull(), F.lit(_NO_DLH)).otherwise(
        F.concat_ws(" ", F.col("dlh.Reason").cast("string"), F.col("reason_name")))
    rows = df.select(reason.alias("reason"), F.unix_micros(ts).alias("us"))
    bounds = rows.agg(F.min("us").alias("lo"), F.max("us").alias("hi"),
                      F.count_if(F.col("us").isNull()).alias("untimed")).first()
    empty = pd.DataFrame({"reason": [], "bucket": [], "messages": []})
    if bounds["lo"] is None:
        return empty, 1, int(bounds["untimed"] or 0)
    width = bucket_seconds((bounds["hi"] - bounds["lo"]) / 1e6)
    counted = (rows.where(F.col("us").isNotNull())
               .groupBy("reason", (F.floor(F.col("us") / (width * 1_000_000)) * width)
                        .alias("bucket"))
               .agg(F.count("*").alias("messages")))
    # the reasons with most messages keep their own row (the rest: "other reasons")
    top = [r["reason"] for r in counted.groupBy("reason").agg(F.sum("messages").alias("n"))
           .orderBy(F.desc("n"), "reason").limit(MAX_REASONS).collect()]
    label = F.when(F.col("reason").isin(top), F.col("reason")).otherwise(F.lit("other reasons"))
    frame = (counted.groupBy(label.alias("reason"), "bucket")
             .agg(F.sum("messages").alias("messages")).toPandas())
    frame["bucket"] = [_dt.datetime.fromtimestamp(int(b), _dt.timezone.utc).replace(tzinfo=None)
                       for b in frame["bucket"]]
    return frame, width, int(bounds["untimed"] or 0)


def arrivals_by_reason(df, *, title: str = "Dead letters by reason over time"):
    """One figure: a row per reason, a dot per time bucket, area by messages.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (``dlh``, ``reason_name``, ``dlh_put_ts``, ``put_ts``).

    Returns
    -------
    matplotlib.figure.Figure
        Not attached to pyplot (no global state, no display).
    """
    frame, width, untimed = arrivals_counts(df)
    return arrivals_figure(frame, width, untimed, title=title)


def arrivals_figure(frame, width: int, untimed: int = 0, *,
                    title: str = "Dead letters by reason over time"):
    """The figure of :func:`arrivals_by_reason` from :func:`arrivals_counts`' results."""
    import matplotlib
    import matplotlib.dates as mdates
    from matplotlib.figure import Figure

    totals = frame.groupby("reason")["messages"].sum() if not frame.empty else {}
    reasons = sorted(set(frame["reason"]),  # most messages first; "other reasons" last
                     key=lambda r: (r == "other reasons", r == _NO_DLH, -totals[r], r))
    with matplotlib.rc_context({"text.parse_math": False}):
        fig = Figure(figsize=(11.5, 1.6 + 0.42 * max(len(reasons), 1)), layout="constrained")
        ax = fig.add_subplot()
        if frame.empty:
            ax.text(0.5, 0.5, "no message with a put time", ha="center", va="center",
                    transform=ax.transAxes)
            ax.set_axis_off()
        else:
            biggest = max(frame["messages"].max(), 1)
            cmap = matplotlib.colormaps["tab10"]
            for i, name in enumerate(reasons):
                rows = frame[frame["reason"] == name]
                sizes = 20 + 600 * (rows["messages"] / biggest) ** 0.5  # area, points²
                ax.scatter(rows["bucket"], [i] * len(rows), s=sizes,
                           color=cmap(i % 10), alpha=0.7, edgecolors="black", linewidths=0.4,
                           zorder=3)
                for x, n, size in zip(rows["bucket"], rows["messages"], sizes):
                    ax.annotate(str(int(n)), (x, i), xytext=(0, size ** 0.5 / 2 + 2),
                                textcoords="offset points", ha="center", va="bottom",
                                fontsize=8, color="#333333")
            ax.set_yticks(range(len(reasons)), reasons)
            ax.set_ylim(-0.8, len(reasons) - 0.4)
            ax.invert_yaxis()
            ax.grid(axis="x", color="#dddddd", zorder=0)
            locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
            lo, hi = frame["bucket"].min(), frame["bucket"].max()
            pad = max((hi - lo) * 0.04, _dt.timedelta(seconds=width))
            ax.set_xlim(lo - pad, hi + pad)
            ax.set_xlabel("put on the DLQ (MQDLH put time, UTC)"
                          + (f"; {untimed} message(s) without a put time left out"
                             if untimed else ""), loc="left")
            ax.set_title(f"a dot per {_bucket_label(width)} with dead letters, its area by their "
                         "number", loc="left", fontsize=9, color="#555555")
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        fig.suptitle(title, x=0.01, ha="left", fontsize=12)
    return fig


__all__ = ["arrivals_by_reason", "arrivals_counts", "arrivals_figure", "bucket_seconds"]
