"""Rows to the driver one partition at a time, leaving nothing behind
(:mod:`dlqlens.spark.driver`)."""

from __future__ import annotations

import gc

import pytest

from tests.conftest import _collect_until_storage_is_free, _storage_used

pytestmark = pytest.mark.spark


def _broadcast_join(spark):
    from pyspark.sql import functions as F

    small = spark.range(20_000).withColumn("k", F.col("id") * 3)
    big = spark.range(200_000)
    return big.join(F.broadcast(small), big.id == small.k, "left_semi").orderBy("id")


def test_local_rows_gives_the_frames_rows_in_order(spark):
    from dlqlens.spark.driver import local_rows

    df = _broadcast_join(spark)
    assert [r["id"] for r in local_rows(df)] == [r["id"] for r in df.collect()]
    assert [r["id"] for r in local_rows(df)][:3] == [0, 3, 6]


def test_local_copy_holds_the_same_rows_and_types_and_reads_without_a_job(spark):
    """A few rows computed now (the findings of a small capture in a notebook's
    session): same schema (a non-null column stays non-null), same rows in the same
    order, timestamps unshifted by the driver's clock (a time in the hour that a
    local clock falling back would see twice), nulls kept; reading runs no job."""
    from datetime import datetime, timezone

    from dlqlens.spark.driver import local_copy
    from tests.builders import spark_jobs

    df = spark.createDataFrame(
        [("a", datetime(2024, 11, 3, 5, 30, tzinfo=timezone.utc), ["x", None]),
         ("b", None, None), ("c", datetime(1999, 12, 31, 23, 59, 59, 999999,
                                           tzinfo=timezone.utc), [])],
        "k string, t timestamp, q array<string>").selectExpr(
            "k", "t", "q", "cast(length(coalesce(k, '')) as int) as n").orderBy("k", ascending=False)
    copy = local_copy(df)
    assert copy._jdf.queryExecution().analyzed().getClass().getSimpleName() == "LocalRelation"
    assert copy.schema == df.schema and not copy.schema["n"].nullable
    before = spark_jobs(spark)
    rows = copy.collect()
    assert spark_jobs(spark) == before
    assert rows == df.collect()
    assert [r.k for r in rows] == ["c", "b", "a"]
    assert [r[0] for r in copy.selectExpr("cast(t as string)").collect()] == \
        ["1999-12-31 23:59:59.999999", None, "2024-11-03 05:30:00"]


@pytest.mark.parametrize("rows", [
    [("a", None, 3, 2.5, ["x", None]), ("é\x00", "q", 2**40, None, [])],
    []], ids=["rows", "none"])
def test_a_local_frame_is_an_arrow_table_in_the_plan_read_by_no_python_worker(spark, rows):
    """The driver's few rows (the keys of the report's explained messages, a DLQ's
    depths, empty findings) as a local relation: not ``createDataFrame`` of a list,
    whose RDD of pickled rows needs a Python worker to be read (an RDD in the plan)."""
    from dlqlens.spark.driver import local_frame

    ddl = "s string, q string, n long, f double, a array<string>"
    df = local_frame(spark, iter(rows), ddl)
    assert df._jdf.queryExecution().analyzed().getClass().getSimpleName() == "LocalRelation"
    assert spark.createDataFrame(rows, ddl)._jdf.queryExecution().analyzed().getClass() \
        .getSimpleName() == "LogicalRDD"  # what it replaces
    assert df.schema.simpleString() == f"struct<{ddl.replace(' ', ':').replace(',:', ',')}>"\
        .replace("long", "bigint")
    assert [tuple(r) for r in df.collect()] == rows


def test_rows_at_hand_are_a_cache_or_the_plans_own(spark):
    """Rows read again without a decode: a local relation (a small capture decoded
    on the driver) and what is made of it, a cache and what is made of a cache; not
    a capture the executors decode, until it is cached."""
    from dlqlens.spark.driver import local_frame, rows_at_hand
    from dlqlens.spark.session import load_capture
    from tests.conftest import DATASETS

    local = local_frame(spark, [("a", 1)], "s string, n int")
    assert rows_at_hand(local) and rows_at_hand(local.where("n > 0").select("s"))
    decoded = load_capture(spark, str(DATASETS), local=False)
    assert not rows_at_hand(decoded) and not rows_at_hand(decoded.select("source"))
    assert rows_at_hand(load_capture(spark, str(DATASETS)))  # decoded on the driver
    decoded.cache()
    try:
        assert rows_at_hand(decoded) and rows_at_hand(decoded.where("message_number > 1"))
        assert not rows_at_hand(decoded.union(load_capture(spark, str(DATASETS), local=False)))
    finally:
        decoded.unpersist()


def test_local_rows_leaves_no_query_behind(spark):
    """DataFrame.toLocalIterator (classic PySpark 4.3) kept every query it served
    alive, its broadcast blocks in the driver's storage memory (3.4 MB and 52 MB of
    heap a call at 300,000 rows; an export of a finding's messages leaked 47 MB a
    run). After local_rows and the collections, storage is back where it was."""
    from dlqlens.spark.driver import local_rows

    spark.catalog.clearCache()
    gc.collect()
    _collect_until_storage_is_free(spark)
    found = _storage_used(spark)
    for _ in range(3):
        assert sum(1 for _ in local_rows(_broadcast_join(spark))) == 20_000
    gc.collect()
    # waits only as long as the cleaner needs (up to the limit) when all is well
    collections, left = _collect_until_storage_is_free(spark, found, limit_s=30)
    assert left <= found, f"{left - found} bytes of storage left after {collections} collections"


def test_each_run_of_the_detectors_releases_the_frames_of_the_runs_before(spark):
    """py4j's wrapper of a JVM object whose method was called refers to itself, so
    a dropped DataFrame keeps its JVM plan (and its finished queries' broadcast
    tables) until Python's cyclic collector runs, which in a driver comes rarely:
    runs of the detectors over the sample in one session grew the heap by about
    85 MB a run, and the seventh stalled in full collections. run_detectors
    releases the dropped frames of earlier runs first; with Python's automatic
    collection off, the live py4j wrappers after the third run are those of
    about one run, not three."""
    from py4j.finalizer import ThreadSafeFinalizer

    from dlqlens.detect import run_detectors
    from dlqlens.spark import load_capture
    from tests.conftest import DATASETS

    df = load_capture(spark, str(DATASETS)).cache()
    df.count()
    gc.collect()
    before = len(ThreadSafeFinalizer.finalizers)
    automatic = gc.isenabled()
    gc.disable()
    try:
        added = []
        for _ in range(3):
            found = run_detectors(df)
            found.findings.collect()
            del found
            added.append(len(ThreadSafeFinalizer.finalizers) - before)
    finally:
        if automatic:
            gc.enable()
        df.unpersist()
    assert added[0] > 500  # a run makes thousands: the count measures them
    assert added[2] < 1.5 * added[0], added


def test_plans_built_in_threads_are_built_at_once_and_returned_in_order(spark):
    """plan_in_threads runs the builds side by side (each of two waits at a barrier
    until the other reaches it: in one thread the first would wait for ever), gives
    the results in the items' order, runs each build with the caller's local
    properties (its job group: a job a build runs is the caller's) and, classic,
    with the caller's session as the JVM thread's active session."""
    import threading

    from dlqlens.spark.driver import plan_in_threads

    barrier = threading.Barrier(2, timeout=60)
    sc = spark.sparkContext
    seen = {}

    def build(n):
        barrier.wait()
        seen[n] = (sc.getLocalProperty("spark.jobGroup.id"),
                   spark._jvm.SparkSession.getActiveSession().get().equals(spark._jsparkSession),
                   threading.current_thread().name)
        return spark.range(n).selectExpr("id * 2 AS twice")

    sc.setJobGroup("plan-in-threads", "test")
    try:
        before = set(sc.statusTracker().getJobIdsForGroup("plan-in-threads"))
        counts = plan_in_threads(spark, lambda n: build(n).count(), [3, 5], threads=2)
        ran = set(sc.statusTracker().getJobIdsForGroup("plan-in-threads")) - before
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    assert counts == [3, 5]
    assert ran, "the builds' jobs are not in the caller's job group"
    assert {n: s[:2] for n, s in seen.items()} == {3: ("plan-in-threads", True),
                                                   5: ("plan-in-threads", True)}
    assert len({s[2] for s in seen.values()}) == 2
    assert threading.current_thread().name not in {s[2] for s in seen.values()}
    # one item, or one thread: the caller's own thread, in order
    names = []
    assert plan_in_threads(spark, lambda n: names.append(threading.current_thread().name) or n,
                           [1, 2, 3], threads=1) == [1, 2, 3]
    assert plan_in_threads(spark, lambda n: names.append(threading.current_thread().name) or -n,
                           [7]) == [-7]
    assert set(names) == {threading.current_thread().name}


def test_plans_built_in_threads_raise_the_first_failure_after_every_build_ended(spark):
    """A failing build: the exception of the first failing item in the items' order
    is raised, once every build has ended (none is left running)."""
    import threading

    from dlqlens.spark.driver import plan_in_threads

    ended, lock = [], threading.Lock()

    def build(n):
        try:
            if n in (2, 4):
                raise ValueError(f"item {n}")
            return n
        finally:
            with lock:
                ended.append(n)

    with pytest.raises(ValueError, match="item 2"):
        plan_in_threads(spark, build, [1, 2, 3, 4, 5], threads=3)
    assert sorted(ended) == [1, 2, 3, 4, 5]
