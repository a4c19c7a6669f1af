"""Where the detectors' time goes on a small capture: Spark jobs and seconds per detector.

    PYTHONPATH=$PWD python benchmarks/detectors_profile.py [CAPTURE...] [--queue-defs FILE]
        [--golden OUT.json] [--master local[2]]

For the bundled sample by default (``datasets/dlq-sample`` with
``datasets/mqsc/qm.mqsc``), in one session, the capture loaded and cached as
``dlqlens detect`` does (:func:`dlqlens.detect.detector_input` of it; all of
it with ``--whole-capture``, as before issue 21's change; its banners' queues
and capture times read), it prints the cache's size and the seconds to fill
it, then, for each detector and then for
:func:`dlqlens.detect.run_detectors`:

``plan_s``
    Building the plans (calling the detector): no Spark job, Catalyst's
    analysis of every DataFrame the detector makes, on the driver.
``findings_jobs``, ``findings_s``
    ``findings.collect()``.
``links_jobs``, ``links_s``
    ``sample_links(links, 10).collect()``, as ``dlqlens detect`` reads them.

As ``dlqlens detect`` runs them, with ``persisted`` (what
:func:`dlqlens.detect.run_detectors` caches for the links to read),
unpersisted after each line.

Jobs are counted with the session's DAG scheduler's next job id (as
``tests/report/test_report_work.py`` does); seconds are wall-clock and depend
on the machine's load (printed with the results). ``--golden`` also writes
every finding and every link of ``run_detectors`` for the sample and the
scenarios of ``datasets/`` (with and without the queue definitions, with and
without a capture time) as JSON, to compare two versions of the detectors.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _jobs(spark) -> int:
    return int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())


def _load(spark, paths, whole: bool = True):
    from dlqlens.capture.reader import captured_queues, captured_times
    from dlqlens.commands.common import plan_captures
    from dlqlens.detect.common import CaptureTimes
    from dlqlens.spark.session import load_capture

    pieces = plan_captures(paths, "auto")
    queues = {k: v for k, v in captured_queues(pieces).items()}
    times = captured_times(pieces)
    from dlqlens.detect import detector_input

    start = time.perf_counter()
    df = load_capture(spark, paths)
    df = (df if whole else detector_input(df)).cache()
    df.count()
    seconds = time.perf_counter() - start
    storage = spark.sparkContext._jsc.sc().getRDDStorageInfo()
    print(json.dumps({"cached": "whole capture" if whole else "detector_input",
                      "fill_s": round(seconds, 2),
                      "memory_mb": round(sum(s.memSize() for s in storage) / 2**20),
                      "disk_mb": round(sum(s.diskSize() for s in storage) / 2**20)}), flush=True)
    return df, queues or None, (CaptureTimes(times, origin="banner") if times else None)


def profile(spark, df, queue_defs, capture_queues, capture_time) -> list[dict]:
    from dlqlens.detect import DETECTORS, run_detectors, sample_links
    from dlqlens.spark.caches import Caches

    rows = []

    def measure(name, build):
        with Caches() as persisted:
            t0, j0 = time.perf_counter(), _jobs(spark)
            findings, links = build(persisted)
            t1, j1 = time.perf_counter(), _jobs(spark)
            found = findings.collect()
            t2, j2 = time.perf_counter(), _jobs(spark)
            sample_links(links, 10).collect()
            t3, j3 = time.perf_counter(), _jobs(spark)
        rows.append({"detector": name, "findings": len(found), "plan_s": round(t1 - t0, 2),
                     "plan_jobs": j1 - j0, "findings_jobs": j2 - j1,
                     "findings_s": round(t2 - t1, 2), "links_jobs": j3 - j2,
                     "links_s": round(t3 - t2, 2)})
        print(json.dumps(rows[-1]), flush=True)

    params = {"queue_defs": queue_defs, "capture_queues": capture_queues}
    if capture_time is not None:
        params["capture_time"] = capture_time
    for name in DETECTORS:
        measure(name, lambda persisted, name=name: run_detectors(df, [name], persisted=persisted,
                                                                 **params))
    measure("run_detectors (all)", lambda persisted: run_detectors(df, persisted=persisted,
                                                                   **params))
    return rows


def _records(findings, links) -> dict:
    out = []
    for row in findings.collect():
        rec = row.asDict(recursive=True)
        for k in ("window_start", "window_end"):
            rec[k] = rec[k].isoformat() if rec[k] is not None else None
        out.append(rec)
    out.sort(key=lambda r: r["finding_id"])
    refs = sorted((r["finding_id"], r["source"].rsplit("/", 1)[-1], r["message_number"])
                  for r in links.collect())
    for r in out:
        r["evidence"] = json.loads(r["evidence"]) if r["evidence"] else None
    return {"findings": out, "links": refs}


def golden(spark, queue_defs_path) -> dict:
    """Every finding and link of run_detectors on the bundled datasets."""
    from dlqlens.detect import run_detectors
    from dlqlens.mq.mqsc import read_queue_defs

    defs = read_queue_defs(queue_defs_path)
    sets = {"dlq-sample": [os.path.join(ROOT, "datasets", "dlq-sample")],
            "snapshots": [os.path.join(ROOT, "datasets", "snapshots")]}
    for d in sorted(glob.glob(os.path.join(ROOT, "datasets", "scenarios", "*"))):
        sets["scenario/" + os.path.basename(d)] = sorted(glob.glob(os.path.join(d, "*.raw")))
    out = {}
    for name, paths in sets.items():
        df, queues, times = _load(spark, paths)
        variants = {"plain": {}, "defs": {"queue_defs": defs, "capture_queues": queues}}
        if times is not None:
            variants["defs+banner_times"] = dict(variants["defs"], capture_time=times)
        variants["defs+late_time"] = dict(variants["defs"], capture_time="2030-01-01T00:00:00Z")
        for variant, params in variants.items():
            found = run_detectors(df, **params)
            out[f"{name} [{variant}]"] = _records(*found)
            print(f"# golden {name} [{variant}]: {len(out[f'{name} [{variant}]']['findings'])} "
                  "findings", file=sys.stderr, flush=True)
        df.unpersist()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("captures", nargs="*", default=[os.path.join(ROOT, "datasets", "dlq-sample")])
    ap.add_argument("--queue-defs", default=os.path.join(ROOT, "datasets", "mqsc", "qm.mqsc"))
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--golden", help="write every finding and link of the datasets here")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--whole-capture", action="store_true",
                    help="cache the whole capture, not detector_input of it")
    a = ap.parse_args(argv)

    from dlqlens.mq.mqsc import read_queue_defs
    from dlqlens.spark.session import get_spark

    spark = get_spark(a.master, app_name="dlqlens-detectors-profile", batch=True)
    spark.range(1).count()
    print(f"# load average {os.getloadavg()}", flush=True)
    if not a.no_profile:
        df, queues, times = _load(spark, a.captures, whole=a.whole_capture)
        profile(spark, df, read_queue_defs(a.queue_defs), queues, times)
        df.unpersist()
        print(f"# load average {os.getloadavg()}", flush=True)
    if a.golden:
        with open(a.golden, "w", encoding="utf-8") as f:
            json.dump(golden(spark, a.queue_defs), f, indent=1, sort_keys=True, default=str)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
