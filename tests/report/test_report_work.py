"""The work of the first answer, counted (never timed: speed is measured in
benchmarks/run.py, stages first_answer and warm_analyses).

Spark runs each action as one job or more (one per query stage under
adaptive execution); on a small capture each job costs tens to hundreds of
milliseconds of planning and scheduling whatever its size, so the number of
jobs is what the first answer's time follows (docs/performance.md)."""

from __future__ import annotations

import pytest

import dlqlens.spark.session as spark_session  # where a capture's smallness is measured

from tests.builders import session_time_zone, spark_jobs
from tests.conftest import DATASETS, ROOT

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def sample(cached_sample):
    return cached_sample


def test_the_sample_is_a_local_relation_read_by_no_python_worker(sample):
    """A small capture is decoded once, on the driver, and handed to Spark as an
    Arrow table: no Python data source in the plan, so no job starts a Python
    worker to decode it again."""
    plan = sample._jdf.queryExecution().analyzed().toString()
    assert "LocalRelation" in plan and "PythonDataSource" not in plan


def test_summary_is_one_aggregation_not_one_job_per_table(spark, sample):
    """The summary's six grouped tables and totals come from one grouping-sets
    aggregation: 7 jobs on the sample (22 when each table was its own query)."""
    from dlqlens.explain import summarize

    before = spark_jobs(spark)
    s = summarize(sample)
    jobs = spark_jobs(spark) - before
    assert s.messages == 669 and len(s.sources) == 7
    assert jobs <= 10, f"the summary ran {jobs} Spark jobs"


def test_the_summary_holds_each_captures_newest_put_as_the_detectors_take_it(spark, sample):
    """CaptureSummary.newest_puts: each capture's newest put (MQMD or MQDLH put,
    microseconds, UTC, exact) from the summary's one aggregation, as
    with_newest_puts' own query gives it; a capture whose messages hold no put
    time has None; a null source is not a capture. newest_put_times hands them
    over as with_newest_puts would, with no query."""
    from datetime import datetime

    from dlqlens.detect.common import (CaptureTimes, NewestPutTimes, newest_put_times,
                                       with_newest_puts)
    from dlqlens.explain import summarize

    got = summarize(sample).newest_puts
    assert len(got) == 7 and got == with_newest_puts(sample).newest_put_micros
    # a capture with no put time, a null source, a put past 2255 (beyond a float's
    # exact integers in microseconds)
    late = datetime(9999, 12, 31, 23, 59, 59, 999999)
    rows = sample.limit(3).collect()
    odd = spark.createDataFrame(
        [rows[0].asDict(True) | {"source": "none.dmp", "put_ts": None, "dlh_put_ts": None},
         rows[1].asDict(True) | {"source": None},
         rows[2].asDict(True) | {"source": "late.dmp", "put_ts": late, "dlh_put_ts": None}],
        sample.schema)
    with session_time_zone(spark, "UTC"):
        got = summarize(odd).newest_puts
        assert got == with_newest_puts(odd).newest_put_micros
    assert got == {"none.dmp": None, "late.dmp": 253402300799999999}
    banner = CaptureTimes({"late.dmp": datetime(2026, 3, 3)}, origin="banner")
    handed = newest_put_times(banner, got)
    assert isinstance(handed, NewestPutTimes) and handed.origin == "banner"
    assert dict(handed) == dict(banner) and handed.newest_put_micros == got
    assert newest_put_times(handed, {}) is handed
    assert newest_put_times(banner, got, limit=1) is banner
    assert newest_put_times(late, got) is late


def test_the_summarys_times_are_utc_whatever_the_session_time_zone(spark, sample):
    """The report's time span is the summary's totals (no query of its own): the
    oldest and newest puts in UTC, also in a session whose time zone is not UTC
    (``toPandas`` would give that zone's wall clock)."""
    import datetime as dt

    from pyspark.sql import functions as F

    from dlqlens.explain import summarize
    from dlqlens.report.build import _time_span

    row = sample.agg(*[f(F.unix_micros(c)).alias(f"{name}_{c}")
                       for c in ("put_ts", "dlh_put_ts")
                       for name, f in (("min", F.min), ("max", F.max))]).first()
    utc = {k: dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=v)
           for k, v in row.asDict().items()}
    with session_time_zone(spark, "America/New_York"):
        s = summarize(sample)
    before = spark_jobs(spark)
    span = _time_span(s)
    assert spark_jobs(spark) == before
    assert span == {"oldest_put": utc["min_put_ts"], "newest_put": utc["max_put_ts"],
                    "oldest_dlq_put": utc["min_dlh_put_ts"],
                    "newest_dlq_put": utc["max_dlh_put_ts"]}
    # the by-reason table's first and last DLQ puts too: UTC, whatever the session's zone
    by_reason = s.by_reason
    assert by_reason["first_dlq_put"].min() == utc["min_dlh_put_ts"]
    assert by_reason["last_dlq_put"].max() == utc["max_dlh_put_ts"]


def test_the_six_figures_are_two_queries_not_several_per_figure(spark, sample):
    """The report's six figures compute their aggregates together
    (:func:`dlqlens.plots.figures`): one aggregation of every figure's
    statistics, one grouping-sets aggregation of every figure's cells ranked in
    Spark. 7 jobs on the sample (45 when each figure collected its top keys,
    then its bins: 4 to 12 jobs each)."""
    from dlqlens import plots
    from dlqlens.report.build import default_figures

    before = spark_jobs(spark)
    figs = plots.figures(sample, default_figures())
    jobs = spark_jobs(spark) - before
    assert len(figs) == 6 and "669 messages" in figs[0].get_suptitle()
    assert jobs <= 8, f"the six figures ran {jobs} Spark jobs"


def test_report_of_the_sample_runs_a_bounded_number_of_jobs(spark, sample, monkeypatch):
    """The README's main job (the report with the shop rules and the queue
    definitions) on the sample, the capture cached: at most 115 Spark jobs.

    141 before issue 21; 128 after the summary's one aggregation; 154 once the
    findings' messages became a links DataFrame (the links are computed by
    their own join of each detector's groups with its finding ids, cached, and
    read twice); 109 once the six figures were computed together (45 jobs to
    7), the time span taken from the summary's totals (2 to 0), the messages
    in no finding one query (6 to 5) and the rule-coverage figure drawn from
    the replay's summary (the rules part 11 to 7). The detectors are 78 of
    the 109. The bound stops it growing; issue 21 wants it far lower.

    Each capture's newest put (the detectors' capture time, none given)
    comes with the summary's aggregation: no query of its own
    (``dlqlens.detect.common.newest_puts`` is never planned). The replay's
    fates are decided on the driver (a small capture): no Python UDF is
    planned, so no Python worker starts (seconds, the first in a session);
    nor is a DataFrame made of Python rows (``createDataFrame`` of a list is
    an RDD of pickled rows, which a Python worker reads:
    :func:`dlqlens.spark.driver.local_frame` instead)."""
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from dlqlens.detect import common
    from dlqlens.report import build_report
    from dlqlens.rules import replay

    real_create = SparkSession.createDataFrame

    def create(self, data, *args, **kwargs):
        assert isinstance(data, pa.Table), "a DataFrame of Python rows: read by a Python worker"
        return real_create(self, data, *args, **kwargs)

    monkeypatch.setattr(SparkSession, "createDataFrame", create)

    def planned(df):
        raise AssertionError("a query of the newest puts of its own")

    def udf(plan, world):
        raise AssertionError("the fates of a small capture decided in a Python worker")

    monkeypatch.setattr(common, "newest_puts", planned)
    monkeypatch.setattr(replay, "_fate_udf", udf)
    before = spark_jobs(spark)
    report = build_report(sample, rules=str(ROOT / "datasets/rules/shop.rul"),
                          queue_defs=str(ROOT / "datasets/mqsc/qm.mqsc"))
    jobs = spark_jobs(spark) - before
    assert "669 message(s)" in report.text
    assert jobs <= 115, f"the report ran {jobs} Spark jobs"


@pytest.mark.parametrize("show_payloads", [False, True])
def test_the_explained_messages_are_read_from_the_cache_unless_payloads_are_shown(
        spark, monkeypatch, show_payloads):
    """The report explains its listed messages from the capture cached without
    its bytes (:func:`dlqlens.detect.analysis_input`): no second read of the
    capture (at ten million messages, a whole decode pass for a few rows).
    Only ``show_payloads`` needs a byte column (``payload_text``), and then
    the capture itself is read (the payloads shown, not redacted)."""
    import dlqlens.report.build as build
    from dlqlens.detect import BYTE_COLUMNS
    from dlqlens.spark.session import load_capture

    read = []
    real = build._explain_refs

    def spy(df, refs, show):
        read.append((sorted(set(df.columns) & set(BYTE_COLUMNS)), df.is_cached))
        return real(df, refs, show)

    monkeypatch.setattr(build, "_explain_refs", spy)
    capture = load_capture(spark, str(ROOT / "datasets" / "scenarios" / "poison_ping_pong"))
    data = build.gather(capture, show_payloads=show_payloads)
    assert len(read) == 1 and data.explanations
    columns, cached = read[0]
    payloads = [text for e in data.explanations.values() for label, text in e.facts
                if label == "Payload"]
    assert payloads
    redacted = [t for t in payloads if t.startswith("payload redacted")]
    if show_payloads:
        assert columns == sorted(BYTE_COLUMNS) and not cached
        assert not redacted
    else:
        assert columns == [] and cached
        assert redacted == payloads


def test_the_detectors_of_a_large_capture_read_a_cache_of_their_own(spark, monkeypatch):
    """Past :data:`dlqlens.detect.SMALL_CAPTURE_MESSAGES` (the summary's count
    says so: no query of its own), the report runs the detectors over
    :func:`dlqlens.detect.detector_input` of its cache, cached too: a struct
    is read whole from a cache, and the report's holds every MQMD field (a
    million messages: the findings in 28 s instead of 47-53 s). The findings,
    their listed messages and the messages in no finding are the same as when
    the detectors read the report's cache; both caches are gone afterwards."""
    import dlqlens.detect as detect
    import dlqlens.report.build as build
    from dlqlens.spark.session import load_capture

    capture = load_capture(spark, str(ROOT / "datasets" / "scenarios" / "poison_ping_pong"))
    seen = []
    real = detect.run_detectors

    def spy(df, *args, **kwargs):
        seen.append((df, df.is_cached))
        return real(df, *args, **kwargs)

    def outcome(data):
        return ([(f["finding_id"], f["message_count"], f["messages"]) for f in data.findings],
                data.by_severity, data.no_finding_total, sorted(data.explanations))

    monkeypatch.setattr(detect, "run_detectors", spy)
    small = build.gather(capture)
    narrow = detect.detector_input(capture).columns
    assert set(seen[0][0].columns) > set(narrow) and seen[0][1]  # the report's own cache
    monkeypatch.setattr(spark_session, "SMALL_CAPTURE_MESSAGES", -1)
    large = build.gather(capture)
    assert seen[1][0].columns == narrow and seen[1][1]
    assert not seen[1][0].is_cached and not capture.is_cached  # unpersisted when done
    assert small.findings and outcome(large) == outcome(small)


@pytest.mark.parametrize("max_findings", [1, 0])
def test_the_findings_are_counted_by_severity_in_the_query_that_lists_them(
        spark, sample, monkeypatch, max_findings):
    """The report's counts by severity are of every finding, not of the
    ``max_findings`` it lists (none, for 0), and come with the listing's own
    query (window counts over the findings): no aggregation of their own."""
    from pyspark.sql import DataFrame

    from dlqlens.detect import run_detectors
    from dlqlens.report.build import gather

    found = run_detectors(sample).findings
    want = {r["severity"]: r["count"] for r in found.groupBy("severity").count().collect()}
    assert len(want) >= 2 and sum(want.values()) > 1  # more than one severity, and unlisted
    grouped = []
    real = DataFrame.groupBy

    def spy(self, *cols):
        grouped.append([c if isinstance(c, str) else str(c) for c in cols])
        return real(self, *cols)

    monkeypatch.setattr(DataFrame, "groupBy", spy)
    data = gather(sample, max_findings=max_findings, figures=())
    assert data.by_severity == want
    assert data.findings_total == sum(want.values())
    assert len(data.findings) == max_findings
    assert ["severity"] not in grouped
