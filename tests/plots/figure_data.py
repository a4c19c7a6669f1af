"""What each figure of dlqlens.plots shows, as plain data: its texts and the
numbers it draws (bars, steps, lines), never pixels.

Used by ``test_plots_together.py`` to check that the figures show exactly what
they showed before their aggregates were computed together (two Spark queries
for all the figures instead of several per figure). The golden files beside
it were written by this module run with the code of main at c01d475 (before
that change), one Spark query per aggregate:

    PYTHONPATH=<checkout of c01d475> python tests/plots/figure_data.py ROOT OUT_DIR [NAME...]

(``ROOT`` the checkout whose ``datasets/`` are read; the captures of
:data:`CAPTURES` named, all by default). Run it again only when a
figure is meant to change, and say so in the commit.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

#: The captures: name -> paths under the checkout.
CAPTURES = {
    "sample": ["datasets/dlq-sample"],
    "scenarios": ["datasets/scenarios/trigger_storm/QM.APP_APP.INITQ.raw",
                  "datasets/scenarios/trigger_storm/QM.APP_APP.WORK.raw",
                  "datasets/scenarios/trigger_storm/QM.APP_SYSTEM.DEAD.LETTER.QUEUE.raw",
                  "datasets/scenarios/expiry_buildup/QM.HUB_SYSTEM.DEAD.LETTER.QUEUE.raw",
                  "datasets/scenarios/poison_ping_pong/QM.APP_SYSTEM.DEAD.LETTER.QUEUE.raw",
                  "datasets/scenarios/poison_ping_pong/QM.APP_PAYMENTS.BOQ.raw"],
}


def cases():
    """``name -> figure function`` (a function of dlqlens.plots, or a partial of one):
    every figure with its defaults, and with top values small enough that
    categories are folded into "other" on both keys."""
    from dlqlens import plots

    p = functools.partial
    return {
        "arrivals": plots.arrivals,
        "arrivals_destination_top2": p(plots.arrivals, by="destination", top=2),
        "arrivals_source_1h_top1": p(plots.arrivals, by="source", freq="1h", top=1),
        "reasons_by_destination": plots.reasons_by_destination,
        "reasons_by_destination_top3x2": p(plots.reasons_by_destination, top=3, top_reasons=2),
        "ages": plots.ages,
        "remaining_expiry": plots.remaining_expiry,
        "backout_counts": plots.backout_counts,
        "trigger_rate": plots.trigger_rate,
        "trigger_rate_initiation_top1": p(plots.trigger_rate, by="initiation_queue", top=1),
    }


def _num(v):
    return round(float(v), 9)


def figure_data(fig) -> dict:
    """The texts and drawn numbers of a matplotlib Figure (JSON-ready)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle, StepPatch
    from matplotlib.ticker import FixedLocator

    out = {"suptitle": fig.get_suptitle(), "axes": [],
           "legends": [[t.get_text() for t in lg.get_texts()] for lg in fig.legends]}
    for ax in fig.axes:
        a = {"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
             "xlim": [_num(v) for v in ax.get_xlim()], "ylim": [_num(v) for v in ax.get_ylim()],
             "xscale": ax.get_xscale(), "yscale": ax.get_yscale(),
             "texts": [t.get_text() for t in ax.texts],
             "legend": ([t.get_text() for t in ax.get_legend().get_texts()]
                        if ax.get_legend() else None)}
        for name, axis in (("xticks", ax.xaxis), ("yticks", ax.yaxis)):
            if isinstance(axis.get_major_locator(), FixedLocator):
                a[name] = [t.get_text() for t in axis.get_ticklabels()]
        a["bars"] = [[_num(p.get_x()), _num(p.get_y()), _num(p.get_width()),
                      _num(p.get_height())]
                     for p in ax.patches if isinstance(p, Rectangle)]
        a["steps"] = [{"values": [_num(v) for v in p.get_data().values],
                       "edges": [_num(v) for v in p.get_data().edges]}
                      for p in ax.patches if isinstance(p, StepPatch)]
        a["lines"] = [[[_num(v) for v in line.get_xdata()], [_num(v) for v in line.get_ydata()]]
                      for line in ax.lines if isinstance(line, Line2D)]
        out["axes"].append(a)
    return out


def load(spark, root: Path, name: str):
    from dlqlens.spark.session import load_capture

    return load_capture(spark, [str(root / p) for p in CAPTURES[name]]).cache()


def main(argv) -> int:
    import os

    from dlqlens.spark.session import get_spark

    root, out, names = Path(argv[0]), Path(argv[1]), argv[2:] or list(CAPTURES)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = get_spark("local[2]", app_name="figure-data", spark_sql_shuffle_partitions=2)
    for name in names:
        df = load(spark, root, name)
        data = {case: figure_data(fn(df)) for case, fn in cases().items()}
        (out / f"figures-{name}.json").write_text(json.dumps(data, indent=1, sort_keys=True)
                                                  + "\n")
        df.unpersist()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
