"""``dlqlens.spark.caches.Caches``: the frames an analysis cached, released
together on every way out of it, and the analyses that use it leaving no
cache behind, on success and on error."""

from __future__ import annotations

import pytest

from dlqlens.spark.caches import Caches
from tests.builders import persisted_rdds


class Frame:
    """A DataFrame as far as caching goes: ``cache`` and ``unpersist`` recorded."""

    def __init__(self, name, log, fail=False):
        self.name, self.log, self.fail = name, log, fail

    def cache(self):
        self.log.append(("cache", self.name))
        return self

    def unpersist(self):
        self.log.append(("unpersist", self.name))
        if self.fail:
            raise RuntimeError(f"{self.name}: the session is stopped")


def test_frames_are_released_last_cached_first_and_forgotten():
    log = []
    with Caches() as caches:
        a = caches.cache(Frame("a", log))
        caches.append(Frame("b", log).cache())  # as run_detectors' persisted list is filled
        assert a.name == "a" and [f.name for f in caches] == ["a", "b"]
    assert log == [("cache", "a"), ("cache", "b"), ("unpersist", "b"), ("unpersist", "a")]
    assert caches == []
    caches.release()  # nothing left: nothing unpersisted twice
    assert len(log) == 4


def test_an_error_in_the_block_releases_everything_and_is_the_one_raised():
    log = []
    with pytest.raises(ValueError, match="the analysis failed"):
        with Caches() as caches:
            caches.cache(Frame("a", log))
            caches.cache(Frame("b", log))
            raise ValueError("the analysis failed")
    assert [e for e in log if e[0] == "unpersist"] == [("unpersist", "b"), ("unpersist", "a")]


def test_a_failing_unpersist_does_not_keep_the_others():
    log = []
    caches = Caches()
    caches.cache(Frame("a", log))
    caches.cache(Frame("b", log, fail=True))
    caches.cache(Frame("c", log))
    with pytest.raises(RuntimeError, match="b: the session is stopped"):
        caches.release()
    assert [n for op, n in log if op == "unpersist"] == ["c", "b", "a"]
    assert caches == []


@pytest.mark.spark
def test_frames_cached_together_are_planned_side_by_side(spark):
    """Caches.cache_all: each frame cached (kept, in the order given) in a
    thread of its own, at once: two frames whose caching waits for the other's
    (a barrier) are both cached; one frame is cached as ``cache`` caches it."""
    import threading

    barrier, log = threading.Barrier(2, timeout=60), []

    class Waiting(Frame):
        sparkSession = spark

        def cache(self):
            barrier.wait()  # broken (an error) when cached one after the other
            return super().cache()

    with Caches() as caches:
        a, b = caches.cache_all(Waiting("a", log), Waiting("b", log))
        assert (a.name, b.name) == ("a", "b") and sorted(f.name for f in caches) == ["a", "b"]
        one = Frame("c", log)
        one.sparkSession = spark
        assert caches.cache_all(one) == [one] and caches.cache_all() == []
    assert sorted(log) == [("cache", "a"), ("cache", "b"), ("cache", "c"),
                           ("unpersist", "a"), ("unpersist", "b"), ("unpersist", "c")]


@pytest.mark.spark
def test_the_summary_of_malformed_dropped_leaves_no_cache(spark, datasets):
    """``summarize(df, mode="DROPMALFORMED")`` cached the capture, then filtered it and
    unpersisted the filtered frame, which was never cached: the capture's cache was left
    behind in the session after every such summary."""
    from dlqlens.explain.summary import summarize
    from dlqlens.spark.session import load_capture

    df = load_capture(spark, str(datasets))
    before = persisted_rdds(spark)
    kept = summarize(df, mode="PERMISSIVE")
    assert persisted_rdds(spark) <= before
    dropped = summarize(df, mode="DROPMALFORMED")
    assert persisted_rdds(spark) <= before
    assert dropped.messages + int(dropped.dropped["messages"].sum()) == kept.messages
    assert not df.is_cached


@pytest.mark.spark
def test_a_report_that_fails_midway_leaves_no_cache(spark, datasets, monkeypatch):
    """The report caches the capture's analysis columns, the detectors' findings and
    their links; an error after all of them were made (here in the messages in no
    finding) still unpersists every one, and is the error raised."""
    import dlqlens.report.build as build
    from dlqlens.spark.session import load_capture

    def fail(*args, **kwargs):
        raise RuntimeError("no-finding pass failed")

    monkeypatch.setattr(build, "_no_finding", fail)
    df = load_capture(spark, str(datasets))
    before = persisted_rdds(spark)
    with pytest.raises(RuntimeError, match="no-finding pass failed"):
        build.gather(df)
    assert persisted_rdds(spark) <= before
