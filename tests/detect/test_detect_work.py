"""The detectors' work, counted (never timed: benchmarks/detectors_profile.py and the
``spark_detectors`` stage of benchmarks/run.py measure the seconds).

On a small capture each Spark job costs its planning and scheduling whatever its
size, so the number of jobs is what the detectors' time on the sample follows
(docs/performance.md, "The detectors"). On a large one, what matters is that no
step gathers a capture's rows in one task: no window partitioned by the capture
file alone (every row of a one-file capture in one task, sorted)."""

from __future__ import annotations

import re

import pytest

import dlqlens.spark.session as spark_session  # where a capture's smallness is measured

from tests.builders import session_time_zone, spark_jobs
from tests.conftest import DATASETS, ROOT

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def sample(cached_sample):
    from dlqlens.capture.reader import ReadOptions, captured_queues, plan_pieces
    from dlqlens.mq.mqsc import read_queue_defs

    queues = captured_queues(plan_pieces([str(DATASETS)], ReadOptions(format="auto")))
    return cached_sample, read_queue_defs(str(ROOT / "datasets/mqsc/qm.mqsc")), queues


def test_detectors_build_their_plans_without_a_job_and_run_in_few(spark, sample):
    """Every detector over the sample, lazy (``eager=False``: as ``dlqlens detect``
    reads them, its short session's settings already set): building
    the plans runs the count of at most SMALL_CAPTURE_MESSAGES + 1 rows that
    chooses one partition (one query: two jobs under adaptive execution, which runs
    its shuffle as a job of its own) and the query of every capture's newest put
    (one job, on the one partition) and nothing else (no action inside a detector);
    the findings take at
    most 8 jobs (5 measured; 12 when each detector joined the newest puts itself,
    41 before issue 21's rework of the detectors: a
    window over each capture file per detector, a broadcast job per small
    lookup table, a shuffle per grouping, a global sort of the findings),
    their sampled links at most 16 (12 measured; 40 before)."""
    from dlqlens.detect import run_detectors, sample_links

    df, defs, queues = sample
    before = spark_jobs(spark)
    findings, links = run_detectors(df, queue_defs=defs, capture_queues=queues, eager=False)
    planned = spark_jobs(spark)
    rows = findings.collect()
    found = spark_jobs(spark)
    sample_links(links, 10).collect()
    linked = spark_jobs(spark)
    assert len(rows) == 13
    assert planned - before <= 3, f"building the detectors' plans ran {planned - before} jobs"
    assert found - planned <= 8, f"the findings ran {found - planned} Spark jobs"
    assert linked - found <= 16, f"the sampled links ran {linked - found} Spark jobs"


def test_a_notebooks_small_capture_has_its_findings_computed_with_the_short_runs_settings(
        spark, sample, monkeypatch):
    """In a session get_spark made, with its own settings (the suite's, as a
    notebook's): the findings of the small sample are computed before
    run_detectors returns, under the short run's settings (no generated code, no
    adaptive execution), and handed back as a local relation that reads without a
    Spark job; the session has its settings back; the same rows as the lazy
    findings. A large capture, a session whose settings are already the short run's
    (a command's), and ``eager=False`` stay lazy; ``eager=True`` computes a large
    capture's findings with the session's own settings. The links stay lazy."""
    import dlqlens.detect as detect
    import dlqlens.spark.driver as driver
    from dlqlens.spark.session import SMALL_INPUT_SETTINGS

    df, defs, queues = sample
    params = {"queue_defs": defs, "capture_queues": queues}
    keys = ("spark.sql.adaptive.enabled", "spark.sql.codegen.wholeStage",
            "spark.sql.codegen.factoryMode")
    settings = {k: spark.conf.get(k, None) for k in keys}
    assert settings != {k: SMALL_INPUT_SETTINGS[k] for k in keys}
    seen = []
    real = driver.local_copy

    def spy(frame):
        seen.append({k: spark.conf.get(k, None) for k in keys})
        return real(frame)

    monkeypatch.setattr(driver, "local_copy", spy)

    def local(frame):
        return frame._jdf.queryExecution().analyzed().getClass().getSimpleName() == \
            "LocalRelation"

    lazy = detect.run_detectors(df, eager=False, **params)
    assert seen == [] and not local(lazy.findings) and not local(lazy.links)
    found = detect.run_detectors(df, **params)
    assert seen == [{k: SMALL_INPUT_SETTINGS[k] for k in keys}]
    assert {k: spark.conf.get(k, None) for k in keys} == settings
    assert local(found.findings) and not local(found.links)
    before = spark_jobs(spark)
    rows = found.findings.collect()
    assert spark_jobs(spark) == before
    assert found.findings.schema == lazy.findings.schema
    assert [r.asDict(recursive=True) for r in rows] == \
        [r.asDict(recursive=True) for r in lazy.findings.collect()]
    assert len(rows) == 13
    assert sorted(found.links.collect()) == sorted(lazy.links.collect())
    # a command's session for a small capture: its settings are the short run's already
    for k in keys:
        spark.conf.set(k, SMALL_INPUT_SETTINGS[k])
    try:
        assert not local(detect.run_detectors(df, **params).findings)
    finally:
        for k, v in settings.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)
    # a large capture: lazy, unless asked; then computed with the session's own settings
    seen.clear()
    monkeypatch.setattr(spark_session, "SMALL_CAPTURE_MESSAGES", -1)
    assert not local(detect.run_detectors(df, **params).findings)
    assert seen == []
    forced = detect.run_detectors(df, eager=True, **params)
    assert local(forced.findings) and seen == [settings]
    assert [r.finding_id for r in forced.findings.collect()] == [r.finding_id for r in rows]


def test_a_caller_that_knows_the_size_saves_the_count(spark, sample):
    """``small`` given (the report knows it from its summary, the audit from its own
    count): building the plans runs no count, only the query of every capture's
    newest put (one job), and the findings are those of the counted run."""
    from dlqlens.detect import run_detectors

    df, defs, queues = sample
    counted = run_detectors(df, queue_defs=defs, capture_queues=queues)
    before = spark_jobs(spark)
    told = run_detectors(df, queue_defs=defs, capture_queues=queues, small=True, eager=False)
    assert spark_jobs(spark) == before + 1
    assert [r.finding_id for r in told.findings.collect()] == \
        [r.finding_id for r in counted.findings.collect()]


def test_no_window_gathers_a_capture_file_in_one_task(sample):
    """The capture time (each capture's newest put) is an aggregation joined
    back, not a window partitioned by ``source``: on a capture of one file such
    a window sorts every row in one task."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from dlqlens.detect import run_detectors

    def windows_by_source(frame):
        plan = frame._jdf.queryExecution().optimizedPlan().toString()
        return re.findall(r"windowspecdefinition\(source#\d+L?, specifiedwindowframe", plan)

    df, defs, queues = sample
    # what the pattern finds: the window over each capture file the detectors used to make
    assert windows_by_source(df.select(
        "source", F.max("put_ts").over(Window.partitionBy("source")).alias("newest")))
    findings, links = run_detectors(df, queue_defs=defs, capture_queues=queues, eager=False)
    for frame in (findings, links):
        assert not windows_by_source(frame), windows_by_source(frame)[:1]


def test_the_burst_window_runs_over_time_slots_not_over_dead_letters(sample):
    """reason_burst finds where bursts start with a window over the time slots
    of each reason and destination (an aggregation of the dead letters), not
    over the dead letters themselves: a window holds all the rows of one key in
    one task, which ran out of memory at 10M messages (a queue-full incident is
    hundreds of thousands of dead letters for one destination)."""
    from dlqlens.detect import detector

    df, _, _ = sample

    def windows_over_rows(frame):
        found = []

        def walk(node, window):
            name = node.nodeName()
            if window is not None and name.endswith("Aggregate"):
                return  # what the window reads is aggregated
            if window is not None and "Scan" in name:
                found.append(window)
                return
            if name == "Window":
                window = node.toString().splitlines()[0][:200]
            children = node.children()
            for i in range(children.size()):
                walk(children.apply(i), window)

        walk(frame._jdf.queryExecution().sparkPlan(), None)  # before AQE wraps it
        return found

    findings, links = detector("reason_burst")(df)
    for frame in (findings, links):
        assert not windows_over_rows(frame), windows_over_rows(frame)[:1]
    # what the check finds: a window straight over the rows
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    assert windows_over_rows(df.select(F.lag("put_ts").over(
        Window.partitionBy("source").orderBy("put_ts"))))


def test_a_small_capture_read_from_one_partition_gives_the_same_findings(spark, sample,
                                                                         monkeypatch):
    """The sample is small, so run_detectors reads it from one partition (no
    shuffle); read as it is partitioned (the path of a large capture) it gives
    the same findings and links, row for row."""
    import dlqlens.detect as detect

    df, defs, queues = sample
    assert detect.small_capture(df)

    def everything():
        findings, links = detect.run_detectors(df, queue_defs=defs, capture_queues=queues,
                                               capture_time="2024-03-15T10:00:00Z")
        return ([r.asDict(recursive=True) for r in findings.collect()],
                sorted(tuple(r) for r in links.collect()))

    small = everything()
    monkeypatch.setattr(spark_session, "SMALL_CAPTURE_MESSAGES", -1)
    assert not detect.small_capture(df)
    large = everything()
    assert small[0] and small[1]
    assert small == large


def test_a_capture_is_small_by_its_rows_never_by_its_size_estimate(spark, sample, tmp_path,
                                                                 monkeypatch):
    """A directory of ``dlqlens decode --to`` is estimated at its compressed Parquet's
    size (a million messages in about 27 MB), and a cached capture not yet filled at
    its source's estimate: the rows are counted instead (review of issue 21's rework:
    a 1M-message directory, cached, was read from one partition)."""
    import dlqlens.detect as detect
    from dlqlens.spark.parquet import write_messages
    from dlqlens.spark.session import load_capture

    df = sample[0]
    write_messages(df, str(tmp_path / "decoded"))
    decoded = load_capture(spark, str(tmp_path / "decoded")).cache()  # not filled
    try:
        rows = df.count()
        monkeypatch.setattr(spark_session, "SMALL_CAPTURE_MESSAGES", rows)
        assert detect.small_capture(df) and detect.small_capture(decoded)
        monkeypatch.setattr(spark_session, "SMALL_CAPTURE_MESSAGES", rows - 1)
        assert not detect.small_capture(df) and not detect.small_capture(decoded)
    finally:
        decoded.unpersist()


def test_the_detectors_run_together_take_the_newest_puts_from_one_query(spark, sample,
                                                                      monkeypatch):
    """run_detectors computes every capture's newest put once and hands it to the
    detectors (a literal map), where a detector alone joins the capture's aggregate
    to its rows: the findings and links are the same, row for row, with a capture
    time given for one capture (its banner's) and the newest put for the others;
    the aggregate is built once, not once per detector."""
    import datetime
    import inspect
    import os

    import dlqlens.detect.common as common
    from dlqlens.detect import DETECTORS, conform, detector, run_detectors

    df, defs, queues = sample
    first = sorted(r["source"] for r in df.select("source").distinct().collect())[0]
    times = common.CaptureTimes({os.path.basename(first): datetime.datetime(2024, 3, 15, 10)},
                                origin="banner")
    built = []
    newest_puts = common.newest_puts
    monkeypatch.setattr(common, "newest_puts", lambda d: built.append(d) or newest_puts(d))

    together, linked = run_detectors(df, queue_defs=defs, capture_queues=queues,
                                     capture_time=times, eager=False)
    together = sorted(repr(r.asDict(recursive=True)) for r in together.collect())
    linked = sorted(tuple(r) for r in linked.collect())
    assert len(built) == 1
    alone, alone_links = [], []
    for name in DETECTORS:
        fn = detector(name)
        wanted = inspect.signature(fn).parameters
        kwargs = {k: v for k, v in (("queue_defs", defs), ("capture_queues", queues),
                                    ("capture_time", times)) if k in wanted}
        found, links = fn(df, **kwargs)
        alone += [repr(r.asDict(recursive=True)) for r in conform(found).collect()]
        alone_links += [tuple(r) for r in links.collect()]
    assert len(built) > 1
    assert together and linked
    assert together == sorted(alone)
    assert linked == sorted(alone_links)
    # the banner's time reached the statements of its capture's findings, the newest
    # puts the others'
    said = " ".join(together)
    assert common.CAPTURE_TIME_ORIGINS["banner"] in said
    assert common.CAPTURE_TIME_ORIGINS["newest_put"] in said


def test_the_detectors_plans_are_built_side_by_side(spark, sample, monkeypatch):
    """run_detectors builds the detectors' plans in several threads at once
    (dlqlens.spark.driver.plan_in_threads): two detectors that each wait at a barrier
    for the other are both built (in one thread the first would wait for ever), and
    the findings and links are those of the detectors alone. union_all (a balanced
    tree of unions, which a row check cannot tell from a chain) gives the rows of
    every frame, and refuses an empty list."""
    import threading

    import dlqlens.detect as detect
    from dlqlens.detect import LINKS_SCHEMA, conform, detector, run_detectors, union_all

    df, defs, queues = sample
    barrier = threading.Barrier(2, timeout=120)
    real = {name: detector(name) for name in ("orphaned_reply", "unknown_destination")}

    def waiting(name):
        def fn(frame, *, capture_time=None):
            barrier.wait()
            return real[name](frame, capture_time=capture_time)
        return fn

    monkeypatch.setattr(detect, "detector", lambda name: waiting(name))
    findings, links = run_detectors(df, list(real), queue_defs=defs, capture_queues=queues,
                                    eager=False)
    got = sorted(tuple(r) for r in findings.collect())
    got_links = sorted(tuple(r) for r in links.collect())
    monkeypatch.undo()
    want, want_links = [], []
    for fn in real.values():
        found, linked = fn(df)
        want += [tuple(r) for r in conform(found).collect()]
        want_links += [tuple(r) for r in conform(linked, LINKS_SCHEMA).collect()]
    assert got and got_links
    assert got == sorted(want)
    assert got_links == sorted(want_links)

    frames = [spark.range(i * 10, i * 10 + i) for i in range(1, 8)]
    assert sorted(r.id for r in union_all(frames).collect()) == sorted(
        r.id for f in frames for r in f.collect())
    assert union_all(frames[:1]).collect() == frames[0].collect()
    with pytest.raises(ValueError, match="no DataFrame"):
        union_all([])


@pytest.mark.parametrize("n, depth", [(1, 0), (2, 1), (7, 3), (8, 3), (9, 4), (16, 4)])
def test_union_all_unions_as_a_balanced_tree(n, depth):
    """union_all's unions form a tree of depth ceil(log2(n)), not a chain of n - 1
    (each union is analysed whole: a chain's analyses grow to the whole plan at
    every step). Told by frames that only count what they were unioned from: a
    Spark plan cannot tell (Dataset.union flattens adjacent unions)."""
    from dlqlens.detect import union_all

    class Frame:
        def __init__(self, leaves=1, depth=0):
            self.leaves, self.depth = leaves, depth

        def union(self, other):
            return Frame(self.leaves + other.leaves, max(self.depth, other.depth) + 1)

    whole = union_all([Frame() for _ in range(n)])
    assert (whole.leaves, whole.depth) == (n, depth)


def test_the_newest_puts_of_each_capture_are_looked_up_once(spark):
    """with_newest_puts: one query, each capture's newest put (MQMD or MQDLH put,
    microseconds since the epoch, UTC) or None for a capture with no put time; the
    given times and their origin kept; no query for a NewestPutTimes given (computed
    once by a caller for several analyses), for one time given for every capture,
    nor past ``limit`` captures (the detectors then join); capture_time_column
    reads a NewestPutTimes without a window, and gives what its window gives."""
    from datetime import datetime

    from dlqlens.detect.common import (CaptureTimes, NewestPutTimes, capture_time_column,
                                       with_newest_puts)

    micros = lambda t: (t - datetime(1970, 1, 1)) // (datetime(1970, 1, 1, 0, 0, 0, 1)
                                                       - datetime(1970, 1, 1))
    rows = [("a.dmp", datetime(2026, 3, 1, 12, 0), None),
            ("a.dmp", datetime(2026, 3, 1, 11, 0), datetime(2026, 3, 1, 12, 30)),
            ("b.dmp", None, None),
            ("c.raw", datetime(2026, 3, 2, 1, 2, 3, 456789), None)]
    df = spark.createDataFrame(rows, "source string, put_ts timestamp, dlh_put_ts timestamp")
    with session_time_zone(spark, "America/New_York"):
        got = with_newest_puts(df)
    assert isinstance(got, NewestPutTimes) and dict(got) == {}
    assert got.newest_put_micros == {"a.dmp": micros(datetime(2026, 3, 1, 12, 30)),
                                     "b.dmp": None,
                                     "c.raw": micros(datetime(2026, 3, 2, 1, 2, 3, 456789))}
    banner = CaptureTimes({"b.dmp": datetime(2026, 3, 3)}, origin="banner")
    kept = with_newest_puts(df, banner)
    assert dict(kept) == dict(banner) and kept.origin == "banner"
    assert kept.newest_put_micros == got.newest_put_micros
    assert with_newest_puts(df, banner, limit=2) is banner
    assert with_newest_puts(df, limit=3).newest_put_micros == got.newest_put_micros
    before = spark_jobs(spark)
    one = datetime(2026, 3, 4)
    assert with_newest_puts(df.where("source = 'c.raw'"), kept) is kept
    assert with_newest_puts(df, one) is one and with_newest_puts(df, "2026-03-04T00:00Z")
    assert spark_jobs(spark) == before
    for given in (None, banner):
        looked_up = with_newest_puts(df, given)
        by_map = df.select("source", capture_time_column(looked_up).alias("t"))
        assert "Window" not in by_map._jdf.queryExecution().optimizedPlan().toString()
        by_window = df.select("source", capture_time_column(given).alias("t"))
        assert sorted(by_map.collect(), key=str) == sorted(by_window.collect(), key=str)


@pytest.mark.spark
def test_a_groups_capture_time_prefers_a_known_time_and_says_where_it_came_from(spark):
    """capture_time_aggregates: a group mixing a capture with a banner time and one with
    only its newest put takes the banner time (even when the newest put is later) and
    says so; a group with no known time takes the latest newest put; the three columns
    agree whatever the order of the rows, and a second aggregation over the first's
    output gives the same answer (bursts aggregates by minute, then by burst)."""
    from datetime import datetime

    from pyspark.sql import functions as F

    from dlqlens.detect.common import (CAPTURE_TIME_ORIGINS, CaptureTimes,
                                       capture_time_aggregates)

    banner, later = datetime(2026, 3, 1, 12, 0), datetime(2026, 3, 1, 13, 0)
    rows = [("mixed", banner, True), ("mixed", later, False), ("mixed", later, False),
            ("puts", banner, False), ("puts", later, False)]
    aggs = capture_time_aggregates(CaptureTimes({"a.dmp": banner}, origin="banner"))
    for order in (rows, rows[::-1]):
        df = spark.createDataFrame(order, "g string, captured timestamp, captured_known boolean")
        once = {r["g"]: r for r in df.groupBy("g").agg(*aggs).collect()}
        twice = {r["g"]: r for r in (df.groupBy("g", F.col("captured").alias("k")).agg(*aggs)
                                     .groupBy("g").agg(*aggs).collect())}
        for got in (once, twice):
            assert (got["mixed"]["captured"], got["mixed"]["captured_known"],
                    got["mixed"]["captured_origin"]) == (banner, 1, CAPTURE_TIME_ORIGINS["banner"])
            assert (got["puts"]["captured"], got["puts"]["captured_known"],
                    got["puts"]["captured_origin"]) == (later, 0,
                                                        CAPTURE_TIME_ORIGINS["newest_put"])


@pytest.mark.parametrize("small", [True, False])
def test_persisted_findings_are_what_the_links_read(spark, sample, monkeypatch, small):
    """``run_detectors(..., persisted=[])`` caches each detector's findings and
    hands them to the caller; the links, cut by a semi join with each
    detector's finding ids, then read those caches instead of running the
    detectors' aggregations again. Same findings and links as without, on the
    one-partition path of a small capture and on the partitioned path of a
    large one; every persisted frame is cached until the caller unpersists it."""
    import dlqlens.detect as detect

    df, defs, queues = sample
    if not small:
        monkeypatch.setattr(spark_session, "SMALL_CAPTURE_MESSAGES", -1)

    def outcome(found):
        findings, links = found
        return ([r.asDict(recursive=True) for r in findings.collect()],
                sorted(tuple(r) for r in links.collect()))

    params = {"queue_defs": defs, "capture_queues": queues}

    def cache_scans(links):
        """The cached findings the links' plan reads (leaves of the plan with cached
        data substituted that are a cache holding a findings ``statement``)."""
        leaves = links._jdf.queryExecution().withCachedData().collectLeaves()
        found = [leaves.apply(i) for i in range(leaves.size())]
        return sum(1 for leaf in found if leaf.getClass().getSimpleName() == "InMemoryRelation"
                   and "statement" in leaf.output().toString())

    # before anything is persisted: the same plans would read the caches made below too
    plain_found = detect.run_detectors(df, **params)
    plain_scans = cache_scans(plain_found.links)
    plain = outcome(plain_found)
    persisted = []
    found = detect.run_detectors(df, persisted=persisted, **params)
    try:
        # each detector's findings, and backout_loop's per-row frame
        assert len(persisted) == len(detect.DETECTORS) + 1
        assert all(part.is_cached for part in persisted)
        # the links' plan, with cached data substituted, scans a cache of findings for
        # every detector whose links are cut with its findings (all but backout_loop's,
        # whose every group is a finding), besides the capture's own cache
        assert plain_scans == 0
        assert cache_scans(found.links) >= len(detect.DETECTORS) - 1
        assert outcome(found) == plain
    finally:
        for part in persisted:
            part.unpersist()
    assert plain[0] and plain[1]
    assert not any(part.is_cached for part in persisted)


def _operators(plan) -> list[str]:
    """The operators of a logical plan above its leaves (an ``InMemoryRelation``,
    a cache, is a leaf: what was cached is not walked)."""
    out, todo = [], [plan]
    while todo:
        node = todo.pop()
        out.append(node.getClass().getSimpleName())
        children = node.children()
        todo.extend(children.apply(i) for i in range(children.size()))
    return out


@pytest.mark.parametrize("small", [True, False])
def test_the_persisted_backout_detector_builds_its_rows_once(spark, sample, monkeypatch, small):
    """backout_loop (two windows and a join) caches the per-row frame that both its
    findings and its links read when given ``persisted``: above that cache (plans
    with cached data substituted) the findings are an aggregation only, and the
    links hold no window, aggregation or join. Without ``persisted`` the links
    build the rows again. Same findings and links. (reason_burst's rows were
    measured too: caching them cost more than building them twice.)"""
    import dlqlens.detect as detect

    df, defs, queues = sample
    if not small:
        monkeypatch.setattr(spark_session, "SMALL_CAPTURE_MESSAGES", -1)
    params = {"queue_defs": defs, "capture_queues": queues}

    def work(frame):
        ops = _operators(frame._jdf.queryExecution().withCachedData())
        return sorted(op for op in ops if op in ("Window", "Aggregate", "Join"))

    def outcome(found):
        return (sorted(r.finding_id for r in found.findings.collect()),
                sorted(tuple(r) for r in found.links.collect()))

    name = "backout_loop"
    plain = detect.run_detectors(df, [name], eager=False, **params)
    assert "Window" in work(plain.links) and "Window" in work(plain.findings)
    own = []
    alone = detect.detector(name)(df, persisted=own, **params)
    # (read before run_detectors caches the same findings frame, which would stand for it)
    alone_work = work(alone.findings)
    persisted = []
    found = detect.run_detectors(df, [name], persisted=persisted, **params)
    try:
        # the rows, then the findings that run_detectors caches for the links
        assert len(own) == 1 and len(persisted) == 2
        assert all(part.is_cached for part in own + persisted)
        assert set(alone_work) == {"Aggregate"}
        assert work(found.links) == []
        assert outcome(found) == outcome(plain)
        assert plain.findings.count() > 0
    finally:
        for part in own + persisted:
            part.unpersist()
    assert not any(part.is_cached for part in own + persisted)


def test_the_backout_detectors_aggregation_is_a_hash_aggregation(sample):
    """backout_loop's one aggregation of every signalled row keeps no string in its
    buffers (the queue's BOTHRESH and BOQNAME are looked up after it, by the
    group's queue), so Spark plans it as a hash aggregation, not as a sort of
    every row by signal, queue and MsgId (SortAggregate: a string ``max``
    cannot live in a hash aggregation's fixed-width buffer)."""
    from dlqlens.detect.backout import detect

    df, defs, queues = sample
    findings, _ = detect(df, queue_defs=defs, capture_queues=queues)
    plan = findings._jdf.queryExecution().executedPlan().toString()
    assert "HashAggregate" in plan
    assert "SortAggregate" not in plan


def test_a_finding_id_from_names_is_the_same_as_from_columns_and_known(spark):
    """``finding_id_column`` of column names (one parsed expression) gives the ids
    the Column form gives, and both the SHA-256 of the key's JSON as Python
    computes it: nulls kept, quotes, backslashes and non-ASCII text, a column
    whose name holds a backtick, an integer key, no key at all."""
    import hashlib
    import json

    from pyspark.sql import functions as F

    from dlqlens.detect.findings import finding_id_column
    from dlqlens.spark.driver import local_frame

    rows = [("ORDERS.IN", None, 2035), ('Q"x\\y', "é€", -1), (None, None, None)]
    df = local_frame(spark, rows, "queue string, `odd``name` string, reason int")
    names = ("queue", "odd`name", "reason")
    got = df.select(
        finding_id_column("backout_loop", *names).alias("by_name"),
        finding_id_column("backout_loop", *[F.col(f"`{n.replace('`', '``')}`")
                                            for n in names]).alias("by_column"),
        finding_id_column("backout_loop", names[0], F.col("reason")).alias("mixed"),
        finding_id_column("backout_loop", names[0], "reason").alias("mixed_by_name"),
        finding_id_column("backout_loop").alias("no_key"),
    ).collect()

    def known(*values):
        text = json.dumps({f"k{i}": v for i, v in enumerate(values)}, separators=(",", ":"),
                          ensure_ascii=False)
        return "backout_loop:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    for (queue, odd, reason), row in zip(rows, got):
        assert row.by_name == row.by_column == known(queue, odd, reason)
        assert row.mixed == row.mixed_by_name == known(queue, reason)
        assert row.no_key == known()  # (no key: the JSON of an empty object)


def test_conform_leaves_a_conformed_frame_alone_and_casts_the_others(spark):
    """A frame with the schema's columns, in order, with its types, is returned
    as it is (no projection for the analyzer); any other is cast and ordered;
    a missing column is named."""
    from dlqlens.detect.findings import LINKS_SCHEMA, conform
    from dlqlens.spark.driver import local_frame

    exact = local_frame(spark, [("k:1", "a.dmp", 3)], LINKS_SCHEMA)
    assert conform(exact, LINKS_SCHEMA) is exact
    loose = local_frame(spark, [(3, "a.dmp", "k:1")],
                        "message_number bigint, source string, finding_id string")
    cast = conform(loose, LINKS_SCHEMA)
    assert cast is not loose
    assert [(f.name, f.dataType.simpleString()) for f in cast.schema.fields] == [
        ("finding_id", "string"), ("source", "string"), ("message_number", "int")]
    assert [tuple(r) for r in cast.collect()] == [("k:1", "a.dmp", 3)]
    with pytest.raises(ValueError, match="not a links DataFrame: missing column.*finding_id"):
        conform(loose.drop("finding_id"), LINKS_SCHEMA)


def test_a_parsed_schema_is_parsed_once_and_handed_out_fresh(spark, monkeypatch):
    """``parsed_schema`` asks Spark once per DDL string; each caller gets its own
    struct (changing one does not change the next); a lone type is refused."""
    import pyspark.sql.types as T

    from dlqlens.spark import driver

    driver._schema_json.cache_clear()
    calls = []
    real = T._parse_datatype_string
    monkeypatch.setattr(T, "_parse_datatype_string", lambda s: calls.append(s) or real(s))
    ddl = "finding_id string, n int, when timestamp, tags array<string>"
    first = driver.parsed_schema(ddl)
    first.add("extra", "string")
    second = driver.parsed_schema(ddl)
    assert [f.name for f in second.fields] == ["finding_id", "n", "when", "tags"]
    assert second == real(ddl)
    assert calls == [ddl]
    with pytest.raises(ValueError, match="not a schema of named fields"):
        driver.parsed_schema("int")


def test_a_finding_id_from_names_is_one_call_to_spark(spark, monkeypatch):
    """The work counted: a finding id of names is one parsed expression (a few
    round trips whatever the key), where the Column form costs a few per key
    and per function."""
    from pyspark.sql import functions as F

    from dlqlens.detect.findings import finding_id_column
    from tests.builders import jvm_round_trips

    keys = ("application_queue", "process", "applid", "reason")
    by_name = jvm_round_trips(monkeypatch, lambda: finding_id_column("trigger_failure", *keys))
    by_column = jvm_round_trips(monkeypatch, lambda: finding_id_column(
        "trigger_failure", *[F.col(k) for k in keys]))
    assert by_name <= 5 < 4 * by_name < by_column
