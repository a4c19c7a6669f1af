"""The work of the first answer, counted (never timed: speed is measured in
benchmarks/run.py, stages first_answer and warm_analyses).

Spark runs each action as one job or more (one per query stage under
adaptive execution); on a small capture each job costs tens to hundreds of
milliseconds of planning and scheduling whatever its size, so the number of
jobs is what the first answer's time follows (docs/performance.md)."""

from __future__ import annotations

import pytest

from tests.conftest import DATASETS, ROOT

pytestmark = pytest.mark.spark


def _jobs(spark) -> int:
    return int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())


@pytest.fixture(scope="module")
def sample(spark):
    from dlqlens.spark.session import load_capture

    df = load_capture(spark, str(DATASETS)).cache()
    df.count()
    yield df
    df.unpersist()


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

    before = _jobs(spark)
    s = summarize(sample)
    jobs = _jobs(spark) - before
    assert s.messages == 669 and len(s.sources) == 7
    assert jobs <= 10, f"the summary ran {jobs} Spark jobs"


def test_report_of_the_sample_runs_a_bounded_number_of_jobs(spark, sample):
    """The README's main job (the report with the shop rules and the queue
    definitions) on the sample, the capture cached: at most 160 Spark jobs.

    141 before issue 21; 128 after the summary's one aggregation; 154 once the
    findings' messages became a links DataFrame (the links are computed by
    their own join of each detector's groups with its finding ids, cached, and
    read twice). The bound stops it growing; issue 21 wants it far lower."""
    from dlqlens.report import build_report

    before = _jobs(spark)
    report = build_report(sample, rules=str(ROOT / "datasets/rules/shop.rul"),
                          queue_defs=str(ROOT / "datasets/mqsc/qm.mqsc"))
    jobs = _jobs(spark) - before
    assert "669 message(s)" in report.text
    assert jobs <= 160, f"the report ran {jobs} Spark jobs"
