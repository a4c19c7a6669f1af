"""The DLQ explorer on a large capture: filter change, page turn, driver memory.

    python benchmarks/explorer.py --messages 1000000
    python benchmarks/explorer.py --messages 200000 --json
    python benchmarks/explorer.py --messages 200000 --no-cache   # no persisted index

Generates a raw capture of N messages (:func:`data.write_raw_capture`, reused
from ``--workdir`` when present), loads it with every column
(``load_capture``) in Spark ``local[2]`` and times, in one process and one
session:

``baseline_limit``
    ``df.limit(25).collect()``: a bare page of the capture (Spark reads only
    as many partitions as it needs), the baseline of the ratios.
``baseline_scan``
    ``df.count()``: one decode pass over the whole capture, what any
    filtered, sorted view costs at least once.
``open``
    :class:`ExplorerModel` created, then its filter choices, its count and
    its first page: the first query fills the persisted index (one decode
    pass), the others read it.
``filter_change``
    A reason and a generic destination filter set, then the count and the
    first page of what matches.
``page_turn``
    The next page (a keyset query).
``page_jump``
    Page 200 (an offset query).
``sort_change``
    Sorted by destination queue, descending, first page.
``select``
    The first row of the page selected: its full row fetched (payload cut
    in Spark). The capture source has no predicate push-down: this reads
    the capture again unless ``df`` is cached, partition after partition
    until the message is found (``limit(1)``).
``select_last``
    The capture's last message selected: the worst case of ``select``, a
    decode pass over the whole capture.

Before the timed runs, the explorer runs once over a 1,000-message capture
(imports, Python workers). Reported per operation: seconds and ``ratio_vs_baseline`` (seconds /
``baseline_limit`` seconds: how many bare page fetches it costs). Memory:
the driver's Python peak RSS (``ru_maxrss``) and current RSS (``VmRSS``)
after Spark and the capture are loaded and after every operation (the
explorer should leave both flat: only a page and one message reach Python),
the JVM driver's peak RSS, and the most rows any one fetch brought to the
driver. Timings are single runs on a shared machine: read them as orders of
magnitude. This is a benchmark, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import data  # noqa: E402


def run(path: str, warm: str, page_size: int, cache: bool, master: str) -> dict:
    from dlqlens.spark import get_spark, load_capture
    from dlqlens.widgets.explorer import ExplorerModel, Filters

    spark = get_spark(master, app_name="dlqlens-bench-explorer")
    jvm_pid = spark.sparkContext._gateway.proc.pid
    df = load_capture(spark, path)
    results: dict = {}

    def timed(name, fn):
        start = time.perf_counter()
        out = fn()
        results[name] = {"seconds": time.perf_counter() - start}
        return out

    # warm-up on a small capture: Python workers started, every import of the
    # data source and of the explorer (pandas, through dlqlens.explain) done,
    # so that the memory figures below are what the large capture adds
    spark.range(1).collect()
    with ExplorerModel(load_capture(spark, warm), page_size=page_size, cache=cache) as small:
        small.choices()
        small.page(0)
        small.page(1)
        small.select(0)
    load_capture(spark, path).limit(1).collect()
    memory = {"python_peak_rss_mb_before": data.peak_rss_mb(),
              "python_rss_mb_before": data.proc_status_mb("self", "VmRSS")}

    timed("baseline_limit", lambda: df.limit(page_size).collect())
    n = timed("baseline_scan", df.count)

    model = ExplorerModel(df, page_size=page_size, cache=cache)

    def open_model():
        model.choices()
        model.count()
        return model.page(0)

    timed("open", open_model)

    def filter_change():
        model.filters = Filters(reasons=[data.REASONS[2]], destinations=["APP.ORDERS.*"])
        return model.count(), model.page(0)

    matched, _page = timed("filter_change", filter_change)
    page = timed("page_turn", lambda: model.page(1))
    results["page_turn"]["method"] = page.method
    jump = timed("page_jump", lambda: model.page(200))
    results["page_jump"]["method"] = jump.method
    model.set_sort("destination", ascending=False)
    timed("sort_change", lambda: model.page(0))
    timed("select", lambda: model.select(0))
    timed("select_last", lambda: model.select(model.current.rows[0]["source"], n))

    memory.update(python_peak_rss_mb_after=data.peak_rss_mb(),
                  python_rss_mb_after=data.proc_status_mb("self", "VmRSS"),
                  jvm_peak_rss_mb=data.proc_status_mb(jvm_pid, "VmHWM"),
                  max_rows_per_page_fetch=max(rows for what, rows in model.fetches
                                              if what.startswith(("page", "message"))),
                  max_rows_per_fetch=max(rows for _what, rows in model.fetches),
                  fetches=len(model.fetches))
    model.close()
    spark.stop()
    base = results["baseline_limit"]["seconds"]
    for r in results.values():
        r["ratio_vs_baseline"] = round(r["seconds"] / base, 2) if base else None
        r["seconds"] = round(r["seconds"], 3)
    return {"messages": n, "filtered_messages": matched, "page_size": page_size, "cache": cache,
            "operations": results,
            "memory": {k: round(v, 1) if isinstance(v, float) else v for k, v in memory.items()}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="DLQ explorer benchmark (see the module docstring)")
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--page-size", type=int, default=25)
    ap.add_argument("--no-cache", action="store_true", help="do not persist the explorer's index")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--workdir", help="keep the generated capture here (reused when present)")
    ap.add_argument("--json", action="store_true", help="one JSON object")
    a = ap.parse_args(argv)

    tmp = None
    workdir = a.workdir
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="dlqlens-bench-explorer-")
        workdir = tmp.name
    os.makedirs(workdir, exist_ok=True)
    try:
        paths = []
        for n in (a.messages, 1000):
            path = os.path.join(workdir, f"raw-{n}")
            if not os.path.exists(path):
                start = time.perf_counter()
                data.write_raw_capture(path, n)
                print(f"# wrote {path} ({os.path.getsize(path) / 1e6:,.0f} MB) in "
                      f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
            paths.append(path)
        out = run(paths[0], paths[1], a.page_size, not a.no_cache, a.master)
    finally:
        if tmp is not None:
            tmp.cleanup()
    if a.json:
        print(json.dumps(out))
        return 0
    print(f"DLQ explorer over {out['messages']:,d} messages (page size {out['page_size']}, "
          f"index {'persisted' if out['cache'] else 'not persisted'}); "
          f"the filter keeps {out['filtered_messages']:,d}")
    print(f"{'operation':16s} {'seconds':>9s} {'x baseline':>11s}")
    for name, r in out["operations"].items():
        extra = f"  ({r['method']})" if "method" in r else ""
        print(f"{name:16s} {r['seconds']:>9.2f} {r['ratio_vs_baseline']:>11.2f}{extra}")
    m = out["memory"]
    print(f"driver Python RSS: peak {m['python_peak_rss_mb_before']:.0f} MB before, "
          f"{m['python_peak_rss_mb_after']:.0f} MB after; current {m['python_rss_mb_before']:.0f} MB "
          f"before, {m['python_rss_mb_after']:.0f} MB after")
    print(f"JVM driver peak RSS {m['jvm_peak_rss_mb']:.0f} MB; {m['fetches']} fetches, at most "
          f"{m['max_rows_per_page_fetch']} rows for a page or a message "
          f"({m['max_rows_per_fetch']} for the filter choices)")
    print("(baseline: df.limit(page_size).collect(); single runs on a shared machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
