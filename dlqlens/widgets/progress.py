"""Progress of the Spark jobs a notebook operation runs, honestly reported.

:class:`SparkProgress` is a context manager: the Spark jobs started in its
body (in the calling thread) carry a job group of their own, and a daemon
thread polls ``SparkContext.statusTracker()`` for that group's jobs and
reports the tasks finished out of the tasks of the stages started so far
(a stage Spark skips, its output being already there, never starts and is
not counted). Jobs and stages appear as Spark plans them, so the total can
grow while an operation runs (a sort first samples, then sorts); the report
says "tasks", not percent of the operation. ``report(text, done, total)`` is called from the polling
thread; ipywidgets can be updated from there.

The job group is set on the calling thread only (a local property; PySpark
pins Python threads to JVM threads) and the previous one is put back on exit.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time

_GROUPS = itertools.count(1)


class SparkProgress:
    """Report the progress of the Spark jobs run inside a ``with`` block.

    Parameters
    ----------
    spark_context : pyspark.SparkContext or None
        None for a Spark Connect session, which has no status tracker: the
        block is then reported as started and as done, with no task counts.
    report : callable
        ``report(text: str, done: int, total: int)``; ``total`` 0 while no
        task is known yet. Called at most every ``interval`` seconds, and once
        at the end with the final figures.
    description : str
        What is being done ("filtering", "page 3").
    interval : float
        Seconds between polls.

    Attributes
    ----------
    jobs : list of int
        Ids of the Spark jobs the block ran (after exit).
    done, total : int
        Tasks finished and known, at the last poll.
    seconds : float
        Wall time of the block.
    """

    def __init__(self, spark_context, report, description: str = "working", *,
                 interval: float = 0.25):
        self.sc = spark_context
        self.report = report
        self.description = description
        self.interval = interval
        self.group = f"dlqlens-widgets-{next(_GROUPS)}"
        self.jobs: list[int] = []
        self.done = 0
        self.total = 0
        self.seconds = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._previous = None

    # -- polling -------------------------------------------------------------
    def poll(self) -> tuple[int, int]:
        """Tasks finished and known over the group's jobs, now."""
        if self.sc is None:
            return self.done, self.total
        tracker = self.sc.statusTracker()
        jobs = list(tracker.getJobIdsForGroup(self.group))
        self.jobs = sorted(set(self.jobs) | set(jobs))
        done = total = 0
        for job in self.jobs:
            info = tracker.getJobInfo(job)
            if info is None:
                continue
            for stage in info.stageIds:
                s = tracker.getStageInfo(stage)
                if s is None or not (s.numActiveTasks or s.numCompletedTasks or s.numFailedTasks):
                    continue  # not started yet, or skipped (its output already there)
                done += s.numCompletedTasks
                total += s.numTasks
        self.done, self.total = done, max(total, done)
        return self.done, self.total

    def text(self) -> str:
        if not self.total:
            return f"{self.description}…"
        return (f"{self.description}… {len(self.jobs)} Spark job(s), "
                f"{self.done}/{self.total} tasks, {time.monotonic() - self._start:.0f} s")

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
                self.report(self.text(), self.done, self.total)
            except Exception:  # noqa: BLE001 - a progress display must never break the work
                pass

    # -- context manager ------------------------------------------------------
    def __enter__(self):
        self._start = time.monotonic()
        self.report(f"{self.description}…", 0, 0)
        if self.sc is None:
            return self
        self._previous = self.sc.getLocalProperty("spark.jobGroup.id")
        self.sc.setLocalProperty("spark.jobGroup.id", self.group)
        self._thread = threading.Thread(target=self._loop, name=self.group, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.sc is not None:
            self.sc.setLocalProperty("spark.jobGroup.id", self._previous)
        self.seconds = time.monotonic() - self._start
        with contextlib.suppress(Exception):
            self.poll()
        if exc_type is None and self.sc is None:
            text = f"done in {self.seconds:.1f} s (Spark Connect: no task counts)"
        elif exc_type is None:
            text = (f"done in {self.seconds:.1f} s ({len(self.jobs)} Spark job(s), "
                    f"{self.done} tasks)")
        else:
            text = f"failed after {self.seconds:.1f} s: {exc_type.__name__}"
        self.report(text, self.done, self.total)
        return False


def no_progress(description: str = ""):
    """The do-nothing progress, for models used outside a notebook."""
    return contextlib.nullcontext()
