"""Where dead letters were going and why: destinations by reason."""

from __future__ import annotations

import numpy as np

from dlqlens.plots import common as C


def reasons_by_destination(df, *, top: int = 15, top_reasons: int = 8):
    """Messages per destination queue, as horizontal bars stacked by reason.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows. Reads ``dlh.DestQName``, ``dlh.DestQMgrName``,
        ``dlh.Reason`` and ``reason_name``. Messages without an MQDLH are one
        bar, "(no MQDLH)"; temporary dynamic queues (``AMQ.*``, ``CSQ.*``:
        one per requester, gone with it) are one destination per queue
        manager and prefix, "AMQ.* (temporary queues) @ QMGR".
    top : int, default 15
        Destinations (``DestQName @ DestQMgrName``) drawn on their own,
        largest first; the rest is one "other (N destinations)" bar, last.
    top_reasons : int, default 8
        Reasons drawn on their own; the rest is one grey "other" segment.

    Returns
    -------
    matplotlib.figure.Figure
        One bar per destination, its length the messages (counted in Spark:
        at most (top + 1) x (top_reasons + 1) rows reach the driver); a
        figure saying "no messages" for an empty ``df``.

    Raises
    ------
    ValueError
        When ``top`` or ``top_reasons`` is not an integer of at least 1.
    """
    return C.draw_plans(df, [DestinationsPlan(top=top, top_reasons=top_reasons)])[0]


class DestinationsPlan(C.Plan):
    """:func:`reasons_by_destination` as a :class:`~dlqlens.plots.common.Plan`:
    cells (destination, reason), both folded into "other"."""

    b_type = str

    def __init__(self, *, top: int = 15, top_reasons: int = 8):
        self.top_a, self.top_b = C.check_top(top), C.check_top(top_reasons)

    def frame(self, df, tag):
        return (df.withColumn(f"{tag}_dest", C.DESTINATION.key_column())
                .withColumn(f"{tag}_reason", C.REASON.key_column()))

    def stats(self, tag):
        from pyspark.sql import functions as F

        return [C.counted(f"{tag}_n", F.count(F.lit(1)))]

    def cells(self, stats, tag):
        from pyspark.sql import functions as F

        if not stats["n"]:
            return None
        return [(F.lit(True), F.col(f"{tag}_dest"), F.col(f"{tag}_reason"))]

    def draw(self, stats, cells):
        title = "Messages by destination (dlh.DestQName @ dlh.DestQMgrName) and reason"
        if cells is None:
            return C.empty_figure(title)
        return _draw(title, cells.a, cells.b, cells.folded())


def _draw(title, dests, reasons, counts):
    dest_keys, reason_keys = dests.buckets, reasons.buckets
    dest_labels = C.display_labels(C.key_labels(C.DESTINATION, dests), 48)
    reason_labels = C.display_labels(C.key_labels(C.REASON, reasons))

    fig = C.new_figure(11, max(4.0, 1.6 + 0.38 * len(dest_keys) + 0.1 * len(reason_keys)))
    ax = fig.add_subplot()
    y = np.arange(len(dest_keys))
    left = np.zeros(len(dest_keys))
    handles = []
    colors = C.category_colors(len(reasons.keys), bool(reasons.others))
    for rkey, color in zip(reason_keys, colors):
        w = np.array([counts.get((d, rkey), 0) for d in dest_keys], dtype=float)
        handles.append(ax.barh(y, w, left=left, color=color, edgecolor="white",
                               linewidth=0.4, height=0.75))
        left += w
    for yi, total in zip(y, left):
        ax.text(total, yi, f" {int(total):,}", va="center", ha="left", fontsize=8)
    ax.set_yticks(y, dest_labels, fontsize=9)
    if dests.others:
        ax.get_yticklabels()[-1].set_fontstyle("italic")
    ax.set_ylim(max(len(dest_keys), 4) - 0.5, -0.5)  # top down; one bar is not a wall
    ax.set_xlim(0, left.max() * 1.1)
    ax.set_xlabel("messages")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_ylabel("destination")
    detail = f"{C.count(dests.messages, 'message')}, {C.count(dests.distinct, 'destination')}"
    if dests.others:
        detail += f" (top {len(dests.keys)} shown, the rest under \"other\")"
    fig.suptitle(f"{title}\n{detail}", fontsize=11)
    fig.legend(handles, [f"{lab}: {n:,}" for lab, n in zip(reason_labels, reasons.totals)],
               title=C.REASON.title, loc="outside lower center", ncols=3, fontsize=9,
               title_fontsize=9)
    return C.finish(fig)


# the plan of each figure, for dlqlens.plots.figures (its aggregates computed with others')
reasons_by_destination.plan = DestinationsPlan
