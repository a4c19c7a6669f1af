"""Where the report's time goes: seconds and Spark jobs per part of :func:`dlqlens.report.build.gather`.

    PYTHONPATH=$PWD python benchmarks/report_profile.py [CAPTURE...] [--master local[2]]

For the bundled sample by default, in one session, it builds the report as
``dlqlens report`` does (capture queues and times from the banners) with each
part of ``gather`` wrapped in a timer, and prints one JSON line per part call,
in the order they ran:

``part``
    ``cache_fill`` (the cached :func:`dlqlens.detect.analysis_input` filled,
    counted once before the report so that the summary's figure is its own),
    ``summarize``, ``figures``, ``run_detectors`` (planning, and the count
    that decides a small capture, which on a large one fills the detectors'
    own cache), ``collect_findings`` (the listed findings and their first
    messages: the links' cache fills), ``no_finding``, ``rules``,
    ``destinations``, ``explain_refs`` (the explained messages), ``quality``.
``seconds``, ``jobs``
    Wall-clock seconds and Spark jobs (the DAG scheduler's next job id, as
    ``tests/report/test_report_work.py`` counts them) of that call.

A last line, ``gather``, is the whole call; what it holds beyond the parts
listed is the count of findings by severity, the first action on the cached
findings (where the detectors run), and the unpersisting.

The parts are timed by replacing the functions ``gather`` calls for the run
(nothing in ``dlqlens`` is changed). Seconds depend on the machine's load
(printed with the results).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _jobs(spark) -> int:
    return int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())


def profile(spark, paths) -> list[dict]:
    import dlqlens.detect as detect
    import dlqlens.explain as explain
    import dlqlens.plots as plots
    import dlqlens.report.build as build
    from dlqlens.capture.reader import captured_queues, captured_times
    from dlqlens.commands.common import plan_captures
    from dlqlens.detect.common import CaptureTimes
    from dlqlens.spark.session import load_capture

    rows: list[dict] = []

    def record(part, t0, j0):
        rows.append({"part": part, "seconds": round(time.perf_counter() - t0, 2),
                     "jobs": _jobs(spark) - j0})
        print(json.dumps(rows[-1]), flush=True)

    def timed(part, fn):
        def wrapper(*args, **kwargs):
            t0, j0 = time.perf_counter(), _jobs(spark)
            try:
                return fn(*args, **kwargs)
            finally:
                record(part, t0, j0)
        return wrapper

    pieces = plan_captures(paths, "auto")
    queues = captured_queues(pieces) or None
    times = captured_times(pieces)
    capture = load_capture(spark, paths)

    # the cache the report makes, filled once here so that its cost is its own line
    t0, j0 = time.perf_counter(), _jobs(spark)
    cached = detect.analysis_input(capture).cache()
    cached.count()
    record("cache_fill", t0, j0)
    patches = [
        (detect, "analysis_input", lambda df: _Cached(cached)),
        (explain, "summarize", timed("summarize", explain.summarize)),
        (plots, "figures", timed("figures", plots.figures)),
        (detect, "run_detectors", timed("run_detectors", detect.run_detectors)),
        (build, "_collect_findings", timed("collect_findings", build._collect_findings)),
        (build, "_no_finding", timed("no_finding", build._no_finding)),
        (build, "_rules_part", timed("rules", build._rules_part)),
        (build, "_destinations", timed("destinations", build._destinations)),
        (build, "_explain_refs", timed("explain_refs", build._explain_refs)),
        (build, "_quality", timed("quality", build._quality)),
    ]
    saved = [(mod, name, getattr(mod, name)) for mod, name, _ in patches]
    try:
        for mod, name, fn in patches:
            setattr(mod, name, fn)
        t0, j0 = time.perf_counter(), _jobs(spark)
        data = build.gather(capture, capture_queues=queues,
                            capture_time=CaptureTimes(times, origin="banner") if times else None)
        record("gather", t0, j0)
        t0, j0 = time.perf_counter(), _jobs(spark)
        page = build.render(data).html
        record(f"render ({len(page)} bytes)", t0, j0)
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)
        cached.unpersist()
    return rows


class _Cached:
    """Stands for ``analysis_input(df)``: its ``cache()`` is the frame already filled."""

    def __init__(self, df):
        self._df = df

    def cache(self):
        return self._df


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("captures", nargs="*", default=[os.path.join(ROOT, "datasets", "dlq-sample")])
    ap.add_argument("--master", default="local[2]")
    a = ap.parse_args(argv)

    from dlqlens.spark.session import get_spark

    spark = get_spark(a.master, app_name="dlqlens-report-profile", batch=True)
    spark.range(1).count()
    print(f"# load average {os.getloadavg()}", flush=True)
    profile(spark, a.captures)
    print(f"# load average {os.getloadavg()}", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
