"""The job the cluster and Spark Connect tests run, in a process of its own.

    python -m tests.cluster.cluster_job OUT [--master URL]   # (cwd: the checkout)
    SPARK_REMOTE=sc://127.0.0.1:PORT python -m tests.cluster.cluster_job OUT

1. The main job, as the README gives it, through the command line's own
   ``main`` (relative paths, from the checkout): ``dlqlens report
   datasets/dlq-sample --rules datasets/rules/shop.rul --queue-defs
   datasets/mqsc/qm.mqsc [--master URL] --out OUT/report.html``; its
   standard output in ``OUT/report.txt``.
2. The analyses on the same Spark (the session the command made, or a new
   Connect session): the decoded rows, the same capture read in slices of
   16 KiB (several partitions per file, cut at message boundaries), the
   detectors' findings, the rules replay, the quality suites, message
   explanations, the messages in no finding and a dmpmqmsg export of the
   messages of two reasons (its text), the rows written to a Parquet
   messages directory and read back (files of at most 100 messages, read in
   the executors), the findings and links written as results and
   read back, each as JSON-ready values in
   ``OUT/results.json``; and where each slice was decoded (``decoded_in``:
   the working directories of the Python workers that read them).

Every value is made comparable across runs: rows sorted, bytes as hex,
times as ISO text.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import decimal
import io
import json
import os
import sys
from pathlib import Path

SAMPLE = "datasets/dlq-sample"
RULES = "datasets/rules/shop.rul"
QUEUE_DEFS = "datasets/mqsc/qm.mqsc"
#: A setting the job's command gives with --conf: the session it made must have it
CONF_KEY = "spark.dlqlens.clusterJob"
#: splitBytes of the sliced read: every file of the sample (75 to 230 KB) in 5 to 15 slices
SLICE_BYTES = 16 * 1024
#: Messages a Parquet file, and a read partition, of the job's messages directory holds:
#: the sample's 669 in at least 7 (read in the executors)
PARQUET_ROWS = 100


def plain(v):
    """A JSON-ready value: Rows and dicts by key, bytes as hex, times as ISO text."""
    if hasattr(v, "asDict"):
        v = v.asDict(recursive=True)
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, float) and v != v:
        return "NaN"
    return v


def rows(df) -> list:
    """Every row of a small DataFrame, sorted by its JSON text."""
    out = [plain(r) for r in df.collect()]
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def where_decoded(batches):
    """``mapInArrow``: one row per batch, the working directory and process id of
    the Python worker that holds it (an executor's directory on a cluster)."""
    import pyarrow as pa

    for b in batches:
        yield pa.RecordBatch.from_pydict({"cwd": [os.getcwd()], "pid": [os.getpid()],
                                          "rows": [b.num_rows]})


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = Path(argv.pop(0)).resolve()
    out.mkdir(parents=True, exist_ok=True)
    master = argv[argv.index("--master") + 1] if "--master" in argv else None

    from dlqlens.cli import main as dlqlens_main

    command = ["report", SAMPLE, "--rules", RULES, "--queue-defs", QUEUE_DEFS,
               "--out", str(out / "report.html"), "--conf", f"{CONF_KEY}=set by --conf"]
    command += ["--master", master] if master else []
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        status = dlqlens_main(command)
    (out / "report.txt").write_text(text.getvalue(), encoding="utf-8")
    if status != 0:
        print(f"dlqlens {' '.join(command)}: exit status {status}", file=sys.stderr)
        return status

    from pyspark.sql import functions as F

    from dlqlens.capture.reader import ReadOptions, captured_queues, plan_pieces
    from dlqlens.detect import run_detectors
    from dlqlens.explain import explain_messages, unexplained
    from dlqlens.mq.mqsc import read_queue_defs
    from dlqlens.quality import audit
    from dlqlens.rules import parse_file
    from dlqlens.rules.replay import replay
    from dlqlens.spark.session import load_capture, spark_session

    from pyspark.sql import SparkSession

    spark = SparkSession.active()  # the session the command made (classic or Connect)
    assert spark_session() is spark  # what dlqlens then hands back: that session, as it is
    results: dict = {"session": type(spark).__module__, "conf": spark.conf.get(CONF_KEY, None)}
    df = load_capture(spark, SAMPLE).cache()  # decoded once for the analyses below
    results["rows"] = rows(df)

    sliced = load_capture(spark, SAMPLE, local=False, splitBytes=SLICE_BYTES)
    results["sliced_rows"] = rows(sliced)
    results["sliced_partitions"] = sliced.select(F.spark_partition_id()).distinct().count()
    results["files"] = df.select("source").distinct().count()
    decoded_in = sliced.mapInArrow(where_decoded, "cwd string, pid long, rows long").collect()
    results["decoded_in"] = sorted({r["cwd"] for r in decoded_in})
    results["decoded_rows"] = sum(r["rows"] for r in decoded_in)

    # decoded once to Parquet (as `decode --to` writes it), read back in groups of at most
    # PARQUET_ROWS messages, in the executors' Python workers (the mqmessages source over Connect)
    import dlqlens.spark.parquet as parquet

    parquet.READ_ROWS = PARQUET_ROWS
    parquet.write_messages(df, str(out / "messages"))
    from_parquet = load_capture(spark, str(out / "messages"))
    results["parquet_rows"] = rows(from_parquet)
    results["parquet_partitions"] = from_parquet.select(F.spark_partition_id()).distinct().count()

    defs = read_queue_defs(QUEUE_DEFS)
    queues = captured_queues(plan_pieces([SAMPLE], ReadOptions()))
    found = run_detectors(df, queue_defs=defs, capture_queues=queues)
    results["findings"] = rows(found.findings)
    results["links"] = rows(found.links)
    # as `detect --to` writes them, read back
    parquet.write_results({"findings": found.findings, "links": found.links},
                          str(out / "results"))
    back = parquet.read_results(spark, str(out / "results"))
    results["results_back"] = {name: rows(frame) for name, frame in sorted(back.items())}
    table = parse_file(RULES)
    results["replay"] = rows(replay(table, df, "pessimistic"))
    quality = audit(df, rules=table, queue_defs=defs, capture_queues=queues)
    results["audit"] = plain(quality.to_dict())
    results["explanations"] = [plain(e.to_dict()) for e in
                               explain_messages(df.where("dlh.Reason = 2053")
                                                .orderBy("source", "message_number"), limit=5)]
    results["unexplained"] = rows(unexplained(df, found))
    # mapInArrow in the executors, local_rows (a partition at a time) to this process
    from dlqlens.spark.export import export_dmpmqmsg, select_messages

    exported = export_dmpmqmsg(select_messages(df, reasons=[2053, 2085]), str(out / "q.dmp"),
                               created=dt.datetime(2024, 3, 16, 9, 0, 0))
    results["export"] = {"selected": exported.selected, "written": exported.written,
                         "duplicates": exported.duplicates, "skipped": exported.skipped,
                         "text": (out / "q.dmp").read_text(encoding="ascii")}
    (out / "results.json").write_text(json.dumps(results, sort_keys=True, indent=1,
                                                 default=str), encoding="utf-8")
    with contextlib.suppress(Exception):
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
