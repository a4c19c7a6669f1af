"""The figures of dlqlens.plots on the bundled sample and on edge cases (Spark).

Assertions are on the figures' artists (bar heights, step values, labels), not
on pixels; every figure is also rendered to PNG in memory.
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

import matplotlib.dates as mdates
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import StepPatch
from matplotlib.text import Text
from pyspark.sql import functions as F

from dlqlens import plots
from dlqlens.plots import common as C
from dlqlens.rules import parse
from dlqlens.rules.replay import replay, summarize
from dlqlens.spark.session import load_capture
from tests.builders import session_time_zone
from tests.conftest import DATASETS

pytestmark = pytest.mark.spark

UTC = timezone.utc
T0 = datetime(2024, 3, 15, 8, 0, 0, tzinfo=UTC)
SCHEMA = (
    "source string, message_number int, "
    "md struct<Format:string, Expiry:int, BackoutCount:int>, "
    "dlh struct<Reason:int, DestQName:string, DestQMgrName:string, Format:string, "
    "PutApplName:string, PutApplType:int>, "
    "tm struct<StrucId:string, QName:string>, reason_name string, "
    "put_ts timestamp, dlh_put_ts timestamp"
)
ALL = ("arrivals", "reasons_by_destination", "ages", "remaining_expiry", "backout_counts",
       "trigger_rate")


def msg(n=1, *, reason=2053, name="MQRC_Q_FULL", dest="Q.A", qmgr="QM1", put=0.0, dlq_put=1.0,
        expiry=-1, backout=0, source="dlq.dmp", fmt="MQSTR", tm=None, dead=True):
    """One row of :data:`SCHEMA`; times are seconds after T0."""
    dlh = (reason, dest, qmgr, fmt, "runmqchl", 7) if dead else None
    return (source, n, ("MQDEAD" if dead else fmt, expiry, backout), dlh,
            None if tm is None else ("TM", tm), name if dead else None,
            None if put is None else T0 + timedelta(seconds=put),
            None if dlq_put is None or not dead else T0 + timedelta(seconds=dlq_put))


def frame(spark, rows):
    return spark.createDataFrame(rows, SCHEMA)


def bars(ax):
    return [p for c in ax.containers for p in c.patches]


def bar_sum(ax, horizontal=False):
    return sum(p.get_width() if horizontal else p.get_height() for p in bars(ax))


def steps(ax):
    return [p for p in ax.patches if isinstance(p, StepPatch)]


def texts(fig):
    return [t.get_text() for t in fig.findobj(Text)]


def legend_texts(legend):
    return [t.get_text() for t in legend.get_texts()]


def render(fig):
    assert isinstance(fig, Figure)
    fig.savefig(io.BytesIO(), format="png", dpi=50)
    return fig


@pytest.fixture(scope="module")
def sample(spark):
    df = load_capture(spark, str(DATASETS)).cache()
    assert df.count() == 669
    yield df
    df.unpersist()


@pytest.fixture
def collected(monkeypatch):
    """Row counts of every aggregate a figure brings to the driver."""
    sizes = []
    real = C.collect

    def recording(aggregate, max_rows):
        rows = real(aggregate, max_rows)
        sizes.append(len(rows))
        return rows

    monkeypatch.setattr(C, "collect", recording)
    return sizes


# ---------------------------------------------------------------------------
# the sample
# ---------------------------------------------------------------------------

def test_arrivals_on_the_sample(sample, collected):
    fig = render(plots.arrivals(sample))
    ax = fig.axes[0]
    assert bar_sum(ax) == 669
    assert ax.get_xlabel() == "DLQ put time (UTC)"
    assert ax.get_ylabel() == "messages per 2 h"
    labels = legend_texts(ax.get_legend())
    assert labels[0] == "MQRC_UNKNOWN_OBJECT_NAME (2085): 207"
    assert len(labels) == 7 and not any(lab.startswith("other") for lab in labels)
    assert "669 messages from 2024-03-11 09:12:06 UTC" in ax.figure.get_suptitle()
    assert max(collected) <= 60 * 9  # bins x (top + 1), whatever the capture's size


def test_arrivals_top_folds_the_rest_into_other(sample):
    fig = render(plots.arrivals(sample, top=3, freq="1 day", by="reason"))
    ax = fig.axes[0]
    assert bar_sum(ax) == 669
    assert ax.get_ylabel() == "messages per 1 day"
    labels = legend_texts(ax.get_legend())
    assert labels[-1] == "other (4 reasons): 248"
    assert len(ax.containers) == 4
    assert ax.containers[-1].patches[0].get_facecolor()[:3] == pytest.approx(
        (0xb0 / 255,) * 3)
    assert len(ax.containers[0].patches) <= 5  # 5 days


def test_arrivals_by_source_and_putter(sample):
    ax = render(plots.arrivals(sample, by="source")).axes[0]
    assert bar_sum(ax) == 669
    assert "dlq_aix.dmp: 131" in legend_texts(ax.get_legend())
    ax = render(plots.arrivals(sample, by="putter", freq=600)).axes[0]
    assert bar_sum(ax) == 669
    assert ax.get_ylabel() == "messages per 10 min"


def test_reasons_by_destination_on_the_sample(sample):
    fig = render(plots.reasons_by_destination(sample))
    ax = fig.axes[0]
    assert bar_sum(ax, horizontal=True) == 669
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks[0] == "INVOICES.IN @ QM.BILLING"
    assert "AMQ.* (temporary queues) @ QM.PORTAL" in ticks
    assert len(ticks) == 9
    assert "MQRC_Q_FULL (2053): 102" in legend_texts(fig.legends[0])


def test_ages_on_the_sample(sample):
    fig = render(plots.ages(sample))
    ax = fig.axes[0]
    series = steps(ax)
    assert [p.get_data().values.sum() for p in series] == [669, 669]
    assert ax.get_xlabel() == ("age at capture time (seconds); capture time = latest DLQ put "
                               "of each of the 7 capture files")
    assert ax.get_ylabel() == "messages per 10 seconds"


def test_remaining_expiry_on_the_sample(sample):
    fig = render(plots.remaining_expiry(sample))
    hist, curve = fig.axes
    assert bar_sum(hist) == 112
    assert "112 of 669 messages have a finite expiry; 557 unlimited (Expiry -1)" in \
        fig.get_suptitle()
    line = curve.get_lines()[0]
    assert line.get_ydata()[-1] == 112
    assert list(line.get_ydata()) == sorted(line.get_ydata())
    assert "557 unlimited (Expiry -1): never expire" in legend_texts(curve.get_legend())


def test_backout_counts_on_the_sample(sample):
    ax = render(plots.backout_counts(sample)).axes[0]
    assert [p.get_height() for p in bars(ax)] == [669]
    assert "none backed out (all 0)" in ax.figure.get_suptitle()


def test_trigger_rate_on_the_sample(sample):
    from dlqlens.detect.trigger_messages import is_trigger_message  # the detectors' rule

    ax = render(plots.trigger_rate(sample)).axes[0]
    assert sum(p.get_data().values.sum() for p in steps(ax)) == 85
    assert legend_texts(ax.get_legend()) == ["APP.WORK: 85"]
    assert "85 trigger messages, 85 of them dead-lettered" in ax.figure.get_suptitle()
    assert ax.get_ylabel() == "trigger messages per 1 s"
    assert sample.where(is_trigger_message()).count() == 85
    ax = render(plots.trigger_rate(sample, by="initiation_queue")).axes[0]
    assert legend_texts(ax.get_legend()) == ["APP.INITQ: 85"]


TABLE = """\
INPUTQ(' ') RETRYINT(60)
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)
REASON(MQRC_NOT_AUTHORIZED) ACTION(FWD) FWDQ(SECURITY.REVIEW)
DESTQ(AMQ.*) ACTION(DISCARD)
REASON(MQFB_APPL_CANNOT_BE_STARTED) ACTION(IGNORE)
DESTQ(NEVER.SEEN) ACTION(FWD) FWDQ(X)
"""


def test_rule_coverage_on_the_sample(sample):
    table = parse(TABLE, "t.rules")
    replayed = replay(table, sample, "pessimistic").cache()
    try:
        fig = render(plots.rule_coverage(replayed, table))
        expected = summarize(replayed, table)
    finally:
        replayed.unpersist()
    ax = fig.axes[0]
    assert bar_sum(ax, horizontal=True) == 669
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks == ["line 2: RETRY", "line 3: FWD \u2192 SECURITY.REVIEW", "line 4: DISCARD",
                     "line 5: IGNORE", "line 6: FWD \u2192 X",
                     "implicit IGNORE (left on the DLQ)"]
    widths = [p.get_width() for p in bars(ax)]
    per_rule = [r["disposed"] + r["ignored"] for r in expected.rules]
    fell = sum(n for (_, why), n in expected.fates.items()
               if why in ("no_match", "rules_exhausted"))
    assert widths == per_rule + [fell]
    assert bars(ax)[-1].get_hatch() == "//"
    assert "(tried on 102 more: puts failed)" in " ".join(texts(fig))  # RETRY fails: pessimistic


def test_rule_coverage_with_more_rules_than_top(sample):
    rules = "".join(f"DESTQ(NOPE.{i}) ACTION(DISCARD)\n" for i in range(49))
    table = parse(rules + "ACTION(DISCARD)\n", "many.rules")
    fig = render(plots.rule_coverage(replay(table, sample.limit(20)), table, top=10))
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert len(ticks) == 12 and ticks[-2:] == ["other (40 rules)",
                                               "implicit IGNORE (left on the DLQ)"]
    assert "line 50: DISCARD" in ticks
    assert bar_sum(ax, horizontal=True) == 20


# ---------------------------------------------------------------------------
# edge cases
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL + ("rule_coverage",))
def test_empty_dataframe_gives_a_no_messages_figure(sample, name):
    empty = sample.limit(0)
    if name == "rule_coverage":
        table = parse(TABLE, "t.rules")
        fig = plots.rule_coverage(replay(table, empty), table)
    else:
        fig = getattr(plots, name)(empty)
    render(fig)
    said = " ".join(texts(fig))
    assert ("no trigger messages" if name == "trigger_rate" else "no messages") in said


@pytest.mark.parametrize("name", ALL)
def test_one_message(spark, name):
    df = frame(spark, [msg(expiry=600, backout=2, tm="APP.Q", fmt="MQTRIG")])
    fig = render(getattr(plots, name)(df))
    ax = fig.axes[0]
    if name in ("ages", "trigger_rate"):
        assert [p.get_data().values.sum() for p in steps(ax)] in ([1, 1], [1])
    else:
        assert bar_sum(ax, horizontal=name == "reasons_by_destination") == 1


def _many_destinations(spark):
    """20,000 dead letters to 10,000 destinations: Q.0 ... Q.14 get 2 or more."""
    n = F.col("id")
    dest = F.when(n < 10000, n).otherwise(n % 15)
    return spark.range(20000).select(
        F.lit("big.dmp").alias("source"), n.cast("int").alias("message_number"),
        F.struct(F.lit("MQSTR").alias("Format"), F.lit(-1).alias("Expiry"),
                 F.lit(0).alias("BackoutCount")).alias("md"),
        F.struct((F.lit(2050) + n % 12).cast("int").alias("Reason"),
                 F.concat(F.lit("Q."), dest.cast("string")).alias("DestQName"),
                 F.lit("QM1").alias("DestQMgrName"), F.lit("MQSTR").alias("Format"),
                 F.lit("app").alias("PutApplName"), F.lit(6).alias("PutApplType")).alias("dlh"),
        F.lit(None).cast("struct<StrucId:string,QName:string>").alias("tm"),
        F.concat(F.lit("MQRC_"), (n % 12).cast("string")).alias("reason_name"),
        F.timestamp_seconds(F.lit(int(T0.timestamp())) + n % 3600).alias("put_ts"),
        F.timestamp_seconds(F.lit(int(T0.timestamp())) + n % 3600).alias("dlh_put_ts"),
    )


def test_ten_thousand_destinations(spark, collected):
    df = _many_destinations(spark)
    fig = render(plots.reasons_by_destination(df))
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert len(ticks) == 16 and ticks[-1] == "other (9,985 destinations)"
    assert bar_sum(ax, horizontal=True) == 20000
    assert legend_texts(fig.legends[0])[-1].startswith("other (4 reasons)")
    # what reached the driver: top-N lists and (15 + 1) x (8 + 1) cells at most
    assert max(collected) <= 16 * 9 and sum(collected) <= 200

    collected.clear()
    ax = render(plots.arrivals(df, by="destination")).axes[0]
    assert bar_sum(ax) == 20000
    labels = legend_texts(ax.get_legend())
    assert len(labels) == 9 and labels[-1].startswith("other (9,992 destinations)")
    assert max(collected) <= 60 * 9


def test_capture_names_are_not_mathtext(spark):
    names = ["$x$", "_hidden", "BELL\x07Q", "A" * 30 + ".ONE." + "B" * 30,
             "A" * 30 + ".TWO." + "B" * 30]
    df = frame(spark, [msg(i, dest=q, qmgr="QM$1$", put=i, dlq_put=i)
                       for i, q in enumerate(names)])
    fig = render(plots.reasons_by_destination(df))
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "$x$ @ QM$1$" in ticks and "_hidden @ QM$1$" in ticks
    assert "BELL\\x07Q @ QM$1$" in ticks
    assert len(set(ticks)) == 5  # the two long names stay apart
    fig = render(plots.arrivals(df, by="destination"))
    labels = legend_texts(fig.axes[0].get_legend())
    assert "$x$ @ QM$1$: 1" in labels and "_hidden @ QM$1$: 1" in labels
    for f in (fig, plots.reasons_by_destination(df)):
        render(f)
        for t in f.findobj(Text):
            if "$" in t.get_text():
                assert not t.get_parse_math() and not t.get_usetex()
                assert t._preprocess_math(t.get_text()) == (t.get_text(), False)


def test_arrivals_falls_back_to_put_time_and_says_so(spark):
    rows = [msg(1, put=0, dlq_put=5), msg(2, put=10, dlq_put=None), msg(3, put=None,
                                                                        dlq_put=None)]
    ax = render(plots.arrivals(frame(spark, rows))).axes[0]
    assert bar_sum(ax) == 2
    assert "1 without a DLQ put time placed at their MQMD put time" in ax.figure.get_suptitle()
    assert "1 without a put time not shown" in ax.figure.get_suptitle()
    assert ax.get_xlabel() == "DLQ put time, else MQMD put time (UTC)"
    ax = render(plots.arrivals(frame(spark, rows), fallback=False)).axes[0]
    assert bar_sum(ax) == 1
    assert "2 without a DLQ put time not shown" in ax.figure.get_suptitle()


def test_arrivals_bins_are_utc_whatever_the_session_time_zone(spark):
    df = frame(spark, [msg(put=90, dlq_put=90)])
    with session_time_zone(spark, "Asia/Kolkata"):
        ax = render(plots.arrivals(df, freq="1min")).axes[0]
    (bar,) = bars(ax)
    assert bar.get_x() == pytest.approx(mdates.date2num(T0 + timedelta(minutes=1)))
    assert "2024-03-15 08:01:30 UTC" in ax.figure.get_suptitle()


def test_bad_arguments_are_refused(sample):
    with pytest.raises(ValueError, match="by must be"):
        plots.arrivals(sample, by="colour")
    with pytest.raises(ValueError, match="top"):
        plots.reasons_by_destination(sample, top=0)
    with pytest.raises(ValueError, match="at most 5,000"):
        plots.arrivals(sample, freq="1s")  # four days in one-second bins
    with pytest.raises(ValueError, match="by must be"):
        plots.trigger_rate(sample, by="process")


def test_ages_with_a_given_capture_time(spark):
    rows = [msg(1, put=0, dlq_put=600), msg(2, put=3000, dlq_put=3600),
            msg(3, put=7300, dlq_put=7300)]  # the last one after the capture time
    fig = render(plots.ages(frame(spark, rows), capture_time="2024-03-15T10:00:00Z"))
    ax = fig.axes[0]
    assert [p.get_data().values.sum() for p in steps(ax)] == [2, 2]
    assert ax.get_xlabel() == ("age at capture time (minutes); capture time "
                               "2024-03-15 10:00:00 UTC (given)")
    assert "1 with a MQMD put after the capture time not shown" in ax.figure.get_suptitle()


def test_ages_are_measured_from_each_files_latest_put_without_a_window(spark, monkeypatch):
    # a.dmp: latest DLQ put 3600 s; b.dmp: 60 s, and one MQMD put (120 s) after it
    rows = [msg(1, put=0, dlq_put=600, source="a.dmp"), msg(2, put=3000, dlq_put=3600,
                                                           source="a.dmp"),
            msg(3, put=0, dlq_put=60, source="b.dmp"), msg(4, put=120, dlq_put=60,
                                                          source="b.dmp")]
    plans = []
    real = C.collect

    def recording(aggregate, max_rows):
        plans.append(aggregate._jdf.queryExecution().optimizedPlan().toString())
        return real(aggregate, max_rows)

    monkeypatch.setattr(C, "collect", recording)
    df = frame(spark, rows)
    ax = render(plots.ages(df)).axes[0]
    # MQMD ages 3600, 600 (a), 60 (b) and one not shown; DLQ ages 3000, 0 (a), 0, 0 (b)
    assert [p.get_data().values.sum() for p in steps(ax)] == [3, 4]
    assert ax.get_xlabel().endswith("capture time = latest DLQ put of each of the 2 capture files")
    assert "1 with a MQMD put after the capture time not shown" in ax.figure.get_suptitle()
    ages_plans, plans[:] = list(plans), []
    render(plots.backout_counts(df))
    # the same queries' windows as a figure without a capture time (ranking the
    # few aggregated cells): none over the rows of a file, which one task holds whole
    assert [q.count("Window [") for q in ages_plans] == [q.count("Window [") for q in plans]


def test_ages_all_zero(spark):
    df = frame(spark, [msg(1, put=5, dlq_put=5), msg(2, put=5, dlq_put=5)])
    ax = render(plots.ages(df)).axes[0]
    assert [list(p.get_data().values) for p in steps(ax)] == [[2], [2]]
    assert ax.get_ylabel() == "messages per 0.1 seconds"


def test_remaining_expiry_log_scale_zero_and_unlimited(spark):
    expiries = [-1, -1, 0, 10, 600, 36000, 10**9]
    fig = render(plots.remaining_expiry(frame(spark, [msg(i, expiry=e)
                                                      for i, e in enumerate(expiries)])))
    hist, curve = fig.axes
    assert hist.get_xscale() == "log" and curve.get_xscale() == "log"
    assert bar_sum(hist) == 4  # the positive ones
    ys = curve.get_lines()[0].get_ydata()
    assert ys[0] == 1 and ys[-1] == 5  # Expiry 0 is expired at once; all five in the end
    legend = legend_texts(curve.get_legend())
    assert "2 unlimited (Expiry -1): never expire" in legend
    assert "1 already expired at capture (Expiry 0)" in legend


def test_remaining_expiry_curve_counts_expiry_at_bin_edges(spark):
    # 10 s, 20 s, 20 s, 30 s: expired by 20 s are three
    fig = plots.remaining_expiry(frame(spark, [msg(i, expiry=e)
                                               for i, e in enumerate([100, 200, 200, 300])]))
    line = fig.axes[1].get_lines()[0]
    points = dict(zip(line.get_xdata(), line.get_ydata()))
    assert points[20.0] == 3 and points[30.0] == 4 and points[10.0] == 1


def test_remaining_expiry_without_finite_expiry(spark):
    fig = render(plots.remaining_expiry(frame(spark, [msg(1), msg(2)])))
    assert any("no message with a finite expiry" in t and "2 unlimited" in t
               for t in texts(fig))


def test_backout_counts_skewed_are_log_scaled_in_wider_bins(spark):
    rows = [msg(i, backout=0) for i in range(200)] + [msg(300 + i, backout=5) for i in range(3)]
    rows.append(msg(999, backout=200))
    ax = render(plots.backout_counts(frame(spark, rows))).axes[0]
    assert bar_sum(ax) == 204
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel().endswith("bins of 5")
    assert "200 never backed out (0)" in ax.figure.get_suptitle()
    assert len(bars(ax)) == 41


def test_trigger_rate_of_an_initiation_queue_capture(spark):
    rows = [msg(i, dead=False, fmt="MQTRIG", tm="APP.A", put=i, source="QM.APP_APP.INITQ.raw")
            for i in range(5)]
    rows += [msg(10, fmt="MQTRIG", tm=None, dest="INITQ2", put=3, dlq_put=4),
             msg(11, put=3)]  # not a trigger message
    df = frame(spark, rows)
    ax = render(plots.trigger_rate(df)).axes[0]
    assert legend_texts(ax.get_legend()) == ["APP.A: 5", "INITQ2 (no MQTM): 1"]
    assert "6 trigger messages, 1 of them dead-lettered" in ax.figure.get_suptitle()
    ax = render(plots.trigger_rate(df, by="initiation_queue")).axes[0]
    assert legend_texts(ax.get_legend()) == ["APP.INITQ: 5", "INITQ2: 1"]
