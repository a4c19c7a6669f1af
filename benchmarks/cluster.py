"""dlqlens on a loopback Spark standalone cluster against ``local[2]``, in one run.

    python benchmarks/cluster.py                    # 1,000,000 messages (about 590 MB raw)
    python benchmarks/cluster.py --messages 100000 --json

The two Spark stages of ``benchmarks/run.py`` (``spark_load_groupby``: load
the raw capture through the ``mqcapture`` source, columns ``source,
message_number, dlh, reason_name``, and count by ``dlh.Reason`` and
``dlh.DestQName``; ``spark_replay``: a 100-rule table replayed in the
pessimistic world, every column to Spark's ``noop`` sink), each in a driver
process of its own, on:

``local[2]``
    the baseline, measured in the same run;
``cluster-1``
    a standalone master and one worker (``--worker-cores`` cores,
    ``--worker-memory``) on 127.0.0.1, started from PySpark's
    ``bin/spark-class`` (``tests/cluster/loopback.py``);
``cluster-2``
    the same with a second worker.

The capture is split into ``splitBytes`` (64 MiB) partitions at record
boundaries, so both workers' executors decode. Each line gives messages per
second, the ratio to ``local[2]`` and the load average (``/proc/loadavg``)
before the stage: on a shared 2-core machine the cluster's workers compete
with the driver and every other process for the same two cores, so the
figures say what the cluster costs, not what more machines would gain.
The daemons are stopped whatever happens.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import data  # noqa: E402


def loadavg() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def spark_stages(path: str, rules: int, master: str) -> dict:
    """``benchmarks/run.py``'s Spark stages in a driver process of their own."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH", ""))
                                          if p))
    proc = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--child", "spark",
                           path, str(rules), master], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"Spark stages on {master} failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="dlqlens on a loopback standalone cluster "
                                             "(see the module docstring)")
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--rules", type=int, default=100)
    ap.add_argument("--worker-cores", type=int, default=1)
    ap.add_argument("--worker-memory", default="1g",
                    help="each worker's memory, which its one executor takes (default 1g, "
                         "Spark's default executor memory)")
    ap.add_argument("--workdir", help="keep the capture and the daemons' logs here")
    ap.add_argument("--json", action="store_true", help="one JSON object per stage")
    a = ap.parse_args(argv)

    from tests.cluster import loopback

    tmp = None
    workdir = a.workdir
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="dlqlens-bench-cluster-")
        workdir = tmp.name
    os.makedirs(workdir, exist_ok=True)
    results = []
    daemons = None
    try:
        path = os.path.join(workdir, f"raw-{a.messages}")
        if not os.path.exists(path):
            start = time.perf_counter()
            data.write_raw_capture(path, a.messages)
            print(f"# wrote {path} ({os.path.getsize(path) / 1e6:,.0f} MB) in "
                  f"{time.perf_counter() - start:.1f} s", file=sys.stderr)

        def measure(setup: str, master: str) -> None:
            load = loadavg()
            print(f"# {setup} ({master}), load average {load}", file=sys.stderr)
            out = spark_stages(path, a.rules, master)
            for stage in ("spark_load_groupby", "spark_replay"):
                r = out[stage]
                results.append({"setup": setup, "stage": stage, "messages": r["messages"],
                                "seconds": round(r["seconds"], 3),
                                "msgs_per_s": round(r["messages"] / r["seconds"]),
                                "loadavg_before": load})

        measure("local[2]", "local[2]")
        daemons = loopback.Daemons(__import__("pathlib").Path(workdir) / "daemons")
        daemons.workdir.mkdir(parents=True, exist_ok=True)
        master = daemons.start_master()
        daemons.start_workers(1, a.worker_cores, a.worker_memory)
        measure("cluster-1", master)
        daemons.start_workers(1, a.worker_cores, a.worker_memory)
        measure("cluster-2", master)
    finally:
        if daemons is not None:
            daemons.stop()
        if tmp is not None:
            tmp.cleanup()

    base = {r["stage"]: r["msgs_per_s"] for r in results if r["setup"] == "local[2]"}
    for r in results:
        r["ratio_vs_local2"] = round(r["msgs_per_s"] / base[r["stage"]], 3)
    if a.json:
        for r in results:
            print(json.dumps(r))
    else:
        print(f"{'setup':10s} {'stage':20s} {'messages':>10s} {'msgs/s':>9s} {'vs local[2]':>11s}"
              f"  load average before")
        for r in results:
            print(f"{r['setup']:10s} {r['stage']:20s} {r['messages']:>10,d} {r['msgs_per_s']:>9,d} "
                  f"{r['ratio_vs_local2']:>11.2f}  {r['loadavg_before']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
