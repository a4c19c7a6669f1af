"""dlqlens benchmarks: every stage against a baseline measured in the same run.

    python benchmarks/run.py                      # 1,000,000 messages (text: 200,000)
    python benchmarks/run.py --quick              # under a minute
    python benchmarks/run.py --messages 10000000  # the 10M figures (about 5.9 GB on disk)
    python benchmarks/run.py --json               # one JSON object per stage

Stages (each in its own process, so each peak RSS is its own):

``decode_raw``
    dlqlens raw reader + full decode (every column of the message schema:
    MQMD, MQDLH, the header chain, payload and its text, timestamps, code
    names, decode status and issues) of N messages on one core. Baseline: a
    per-record ``struct.unpack`` decoder of MQMD v2 + MQDLH
    (``baselines.struct_unpack``) on the same file, on the same core.
``decode_raw_md_dlh``
    The same reader and decoder asked for the ``md`` and ``dlh`` columns
    only: every MQMD and MQDLH field, which is what the baseline decodes
    (the header walk still runs: the MQDLH is found through it).
``read_dmpmqmsg``, ``read_amqsbcg``
    The text readers alone (framing, descriptor lines, hex to bytes; what the
    issue's "within 3x of the cost of bytes.fromhex" is about) of T messages
    on one core. Baseline: ``bytes.fromhex`` over the same hex
    (``baselines.fromhex``), the floor of any reader of these formats.
``decode_dmpmqmsg``, ``decode_amqsbcg``
    The same plus the full decode (every column), against the same baseline,
    read as :func:`dlqlens.read_capture` reads (no planning pass: splitting a
    text file into slices counts its messages first, which pays only where
    Spark reads the slices in parallel).
``decode_pcap``
    The pcap reader of MQ client traffic (dpkt for the packets, our TCP
    reassembly and MQ layer) + full decode of P MQPUTs written by
    ``write_pcap`` (TSHM, little-endian, one TCP connection) on one core.
    Baseline: dpkt's bare iteration of the same file's packet records
    (``baselines.dpkt_iterate``), the floor of any pcap reader.
``decode_hexdump_<layout>`` (issue 23)
    Each hex-dump reader (``ispf``, ``xxd``, ``hexdump-c``, ``od``,
    ``hex-stream``) + full decode of H messages (``--hex-messages``, default
    20,000; ``ispf`` shows each record's first 72 columns, as one screen
    does) on one core. Baseline: ``bytes.fromhex`` over the same records'
    hex, one string a record (``child_fromhex_dump``), in the same run.
``spark_load_groupby``
    Spark ``local[2]``: load the raw capture of N messages (columns
    ``source, message_number, dlh, reason_name``) and count by
    ``dlh.Reason`` and ``dlh.DestQName``.
``spark_replay``
    Spark ``local[2]``: replay a 100-rule table (``data.make_table``) over
    the same capture in the pessimistic world, every replay column written to
    Spark's ``noop`` sink. Both Spark stages share one session.
``spark_detectors``
    Spark ``local[2]``, default driver memory: what ``dlqlens detect`` does
    with the same capture (what the detectors read, cached, counted), then
    every detector (:func:`dlqlens.detect.run_detectors`) as ``dlqlens
    detect --to DIR`` runs them: each detector's findings persisted (its
    links read them), findings and links cached, the findings
    collected, the first 10 messages of each finding collected (which fills
    the links' cache), every link written to the ``noop`` sink. ``seconds`` counts from the load; ``load_seconds`` is
    the load and cache alone, ``findings`` and ``links`` the rows made.
``spark_audit``
    The same, for ``dlqlens audit``: both suites
    (:func:`dlqlens.quality.audit`, default policy, no rules table or queue
    definitions), from the load, the results' text made.
``spark_report``
    The same, for ``dlqlens report``: :func:`dlqlens.report.build_report`
    (every detector, the summary, figures, messages in no finding, the
    explanations), from the load, the page written to a temporary file.
    The three run in a process and a session each (their own peak RSS:
    the Python driver plus the JVM driver, Spark's default heap).

``first_answer``
    The README's main job as an administrator runs it: ``dlqlens report
    datasets/dlq-sample --rules datasets/rules/shop.rul --queue-defs
    datasets/mqsc/qm.mqsc`` (669 messages), a whole process timed from start
    to exit (``one_shot``, as the console script runs it). Baseline: a
    process that does a bare :func:`dlqlens.spark.get_spark` (``batch=True,
    one_shot=True``, as the command's session on a small input) and one
    trivial job
    (``spark.range(1).count()``), timed alike, in the same run. Besides the
    ratio, ``cost_vs_baseline`` (stage seconds / baseline seconds: issue 21's
    target is at most 1.5) and ``jobs`` (Spark jobs the report ran).
``warm_analyses``
    In one session that has already started and run a trivial job (a warm
    notebook): the sample loaded and cached, then ``detect`` (every detector,
    findings collected), ``replay`` (the shop rules table replayed and
    summarised) and ``report`` (:func:`dlqlens.report.build_report`), each
    timed once (``analyses``: seconds and Spark jobs of each; issue 21's
    target is under 2 s each). Baseline: the same bare session + trivial job
    process as ``first_answer``; ``seconds`` is the slowest analysis.

The DLQ explorer (``dlqlens.widgets.explorer``) has its own script,
``benchmarks/explorer.py``: a filter change, a page turn and the driver's
memory over a capture of N messages.

Every timed run is preceded by a warm-up on a 1,000-message capture of the
same format, so lazy imports and codec look-ups are not counted.

The one-core stages and their baselines are each timed ``--repeat`` times
(default 3; 1 with ``--quick``) in their process, and the best time counts,
as ``timeit`` advises: the stage and its baseline are measured alike, and the
slower runs are the machine's noise (on this shared machine a single run of
the same stage varies by 20%) and the process's first touches of fresh heap
memory. ``seconds_runs`` lists every run. The Spark stages run once.

Each stage reports ``messages``, ``msgs_per_s``, ``baseline`` (its name),
``baseline_msgs_per_s``, ``ratio_vs_baseline`` (stage rate / baseline rate:
2.0 means twice as fast as the baseline, 0.5 twice as slow) and
``peak_rss_mb`` (the stage process's peak resident memory; for Spark stages
the Python driver plus the JVM driver, ``jvm_peak_rss_mb`` on its own).
"one core" stages are pinned to one CPU with ``os.sched_setaffinity`` and
Arrow's thread pool set to one thread.

To compare two versions of the code, run each tree's own script with
``PYTHONPATH`` set to that tree (and its C extensions built in place,
``python3 setup.py build_ext --inplace``), alternating them: the stages'
processes import ``dlqlens`` as Python finds it, which without
``PYTHONPATH`` is the installed (editable) tree whatever directory the
script is run from::

    git worktree add /tmp/old <commit> && (cd /tmp/old && python3 setup.py build_ext --inplace)
    (cd /tmp/old && PYTHONPATH=/tmp/old python3 benchmarks/run.py --stages decode_raw)
    PYTHONPATH=$PWD python3 benchmarks/run.py --stages decode_raw
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
sys.path.insert(0, HERE)

import baselines  # noqa: E402
import data  # noqa: E402

#: The struct.unpack baseline is a Python loop; its rate is taken on at most this many.
BASELINE_CAP = 1_000_000


# ---------------------------------------------------------------------------
# children: one stage each, printing one JSON object
# ---------------------------------------------------------------------------

def _one_core() -> None:
    import pyarrow as pa

    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[0]})
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)


def _repeat() -> int:
    """How many times a one-core child times its stage (the parent's ``--repeat``)."""
    return max(1, int(os.environ.get("DLQLENS_BENCH_REPEAT", "1")))


def _timed(fn, *args) -> dict:
    """Run ``fn(*args)`` (returning a message count) :func:`_repeat` times:
    the messages, the best time and every time."""
    runs = []
    for _ in range(_repeat()):
        start = time.perf_counter()
        n = fn(*args)
        runs.append(time.perf_counter() - start)
    return {"messages": n, "seconds": min(runs), "seconds_runs": [round(r, 4) for r in runs]}


def child_decode(path: str, fmt: str, warmup: str, columns: str = "") -> dict:
    """Reader + decode of every column (or of ``columns``, comma-separated);
    ``warmup`` (a small capture of the same format) is decoded first so that
    lazy imports and codec look-ups are not timed."""
    from dlqlens.capture.reader import ReadOptions, plan_pieces, read_piece

    _one_core()
    # as read_capture reads (one process): text files are not planned into
    # slices, which only pays where Spark reads the slices in parallel
    opts = ReadOptions(format=fmt, split_text=False,
                       columns=tuple(columns.split(",")) if columns else None)

    def decode(p):
        n = 0
        for piece in plan_pieces([p], opts):
            for batch in read_piece(piece, opts):
                n += batch.num_rows
        return n

    decode(warmup)
    return {**_timed(decode, path), "peak_rss_mb": data.peak_rss_mb()}


def child_read(path: str, fmt: str, warmup: str) -> dict:
    """The text reader alone: framing and hex to bytes, no header decoding."""
    from dlqlens.capture.registry import FORMATS

    _one_core()
    reader = FORMATS[fmt].read

    def read(p):
        return sum(len(frames) for frames in reader(p))

    read(warmup)
    return {**_timed(read, path), "peak_rss_mb": data.peak_rss_mb()}


def _baseline(measure, *args) -> dict:
    """A baseline (``measure(*args) -> (messages, seconds)``, timing itself)
    taken :func:`_repeat` times, the best counting, as the stages are."""
    runs = [measure(*args) for _ in range(_repeat())]
    secs = [s for _, s in runs]
    return {"messages": runs[0][0], "seconds": min(secs),
            "seconds_runs": [round(x, 4) for x in secs], "peak_rss_mb": data.peak_rss_mb()}


def child_struct(path: str, limit: int) -> dict:
    _one_core()
    return _baseline(baselines.struct_unpack, path, limit)


def child_fromhex(path: str, fmt: str, messages: int) -> dict:
    _one_core()
    pattern = baselines.DMPMQMSG_HEX if fmt == "dmpmqmsg" else baselines.AMQSBCG_HEX
    return _baseline(baselines.fromhex, path, pattern, messages)


def child_dpkt(path: str, messages: int) -> dict:
    _one_core()
    return _baseline(baselines.dpkt_iterate, path, messages)


# --- hex dumps (issue 23) ---------------------------------------------------

def _fromhex_dump(path: str, layout: str, messages: int) -> tuple[int, float]:
    """``bytes.fromhex`` over the hex of every record of a dump: the records
    found (untimed) by the layout's parser, one hex string each."""
    from dlqlens.capture import hexdump

    with open(path, "rb") as fh:
        recs = hexdump.records(fh.read().decode("latin-1"), layout)
    hexes = [r.data.hex() for r in recs]
    start = time.perf_counter()
    for h in hexes:
        bytes.fromhex(h)
    return messages, time.perf_counter() - start


def child_fromhex_dump(path: str, layout: str, messages: int) -> dict:
    _one_core()
    return _baseline(_fromhex_dump, path, layout, messages)


def child_spark(path: str, rules: int, master: str) -> dict:
    from dlqlens.rules import parse
    from dlqlens.rules.replay import INPUT_COLUMNS, replay
    from dlqlens.spark import get_spark, load_capture

    spark = get_spark(master, app_name="dlqlens-bench", batch=True)
    jvm_pid = spark.sparkContext._gateway.proc.pid
    out = {}
    start = time.perf_counter()
    df = load_capture(spark, path, columns=["source", "message_number", "dlh", "reason_name"])
    groups = df.groupBy("dlh.Reason", "dlh.DestQName").count().collect()
    secs = time.perf_counter() - start
    n = sum(r["count"] for r in groups)
    out["spark_load_groupby"] = {"messages": n, "seconds": secs, "groups": len(groups)}

    table = parse(data.make_table(rules))
    if not table.ok:
        raise SystemExit("\n".join(d.format() for d in table.errors))
    start = time.perf_counter()
    capture = load_capture(spark, path, columns=list(INPUT_COLUMNS))
    replay(table, capture, "pessimistic").write.format("noop").mode("overwrite").save()
    out["spark_replay"] = {"messages": n, "seconds": time.perf_counter() - start,
                           "rules": len(table.rules)}
    jvm = data.proc_status_mb(jvm_pid)
    py = data.peak_rss_mb()
    spark.stop()
    for r in out.values():
        r.update(peak_rss_mb=py + jvm, jvm_peak_rss_mb=jvm, python_peak_rss_mb=py)
    return out


#: The README's main job (``first_answer``), relative to the checkout.
SAMPLE = "datasets/dlq-sample"
SAMPLE_ARGS = ("--rules", "datasets/rules/shop.rul", "--queue-defs", "datasets/mqsc/qm.mqsc")
ROOT = os.path.dirname(HERE)


def _jobs(spark) -> int:
    """Spark jobs the session has run so far (its DAG scheduler's next job id)."""
    return int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())


def _rss(spark) -> float:
    """Peak resident memory (MB) of this Python driver plus its JVM."""
    return data.peak_rss_mb() + data.proc_status_mb(spark.sparkContext._gateway.proc.pid)


def child_bare(master: str) -> dict:
    """The baseline of the first answer: a bare session and one trivial job."""
    from dlqlens.spark import get_spark

    # as the command's session: a batch one, C1 only (a small input, a one-shot process),
    # no data source registered
    spark = get_spark(master, batch=True, one_shot=True, sources=False)
    spark.range(1).count()
    return {"jobs": _jobs(spark), "peak_rss_mb": _rss(spark)}


def child_first_answer(out: str) -> dict:
    """The README's main job in this process, as the ``dlqlens`` console script runs
    it (``one_shot``: the process ends with it); the jobs it ran."""
    import contextlib
    import io

    from dlqlens import cli

    with contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(["report", os.path.join(ROOT, SAMPLE),
                           *[a if a.startswith("--") else os.path.join(ROOT, a)
                             for a in SAMPLE_ARGS], "--out", out], one_shot=True)
    if status != 0:
        raise SystemExit(f"dlqlens report exited {status}")
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    return {"jobs": _jobs(spark), "peak_rss_mb": _rss(spark)}


def child_warm(master: str) -> dict:
    """Detect, replay and report of the sample in one warm session."""
    from dlqlens.capture.reader import ReadOptions, captured_queues, plan_pieces
    from dlqlens.detect import run_detectors
    from dlqlens.report import build_report
    from dlqlens.rules import parse_file
    from dlqlens.rules.replay import replay, summarize
    from dlqlens.spark import get_spark, load_capture

    spark = get_spark(master)
    spark.range(1).count()  # warm: the session has run a job
    sample = os.path.join(ROOT, SAMPLE)
    rules, defs = (os.path.join(ROOT, a) for a in SAMPLE_ARGS[1::2])
    queues = captured_queues(plan_pieces([sample], ReadOptions())) or None
    out = {}

    def timed(name, fn):
        jobs, start = _jobs(spark), time.perf_counter()
        fn()
        out[name] = {"seconds": round(time.perf_counter() - start, 3),
                     "jobs": _jobs(spark) - jobs}

    df = load_capture(spark, sample)
    timed("load", lambda: df.cache().count())
    from dlqlens.mq.mqsc import read_queue_defs

    timed("detect", lambda: run_detectors(df, queue_defs=read_queue_defs(defs),
                                          capture_queues=queues).findings.collect())
    table = parse_file(rules)
    timed("replay", lambda: summarize(replay(table, df, allow_errors=True), table))
    timed("report", lambda: build_report(df, rules=rules, queue_defs=defs,
                                         capture_queues=queues))
    return {"analyses": out, "peak_rss_mb": _rss(spark)}


def _timed_child(*args) -> dict:
    """A child run timed from process start to exit (what a person waits)."""
    start = time.perf_counter()
    out = _run_child(*args)
    out["seconds"] = time.perf_counter() - start
    return out


def _spark_rss(jvm_pid) -> dict:
    jvm = data.proc_status_mb(jvm_pid)
    py = data.peak_rss_mb()
    return {"peak_rss_mb": py + jvm, "jvm_peak_rss_mb": jvm, "python_peak_rss_mb": py}


def child_analysis(what: str, path: str, master: str) -> dict:
    """One of ``detectors``, ``audit``, ``report`` over the raw capture at
    ``path``, as the command of that name runs it, in a session of its own
    with Spark's default driver memory."""
    from dlqlens.spark import get_spark, load_capture

    spark = get_spark(master, app_name=f"dlqlens-bench-{what}", batch=True)
    jvm_pid = spark.sparkContext._gateway.proc.pid
    out: dict = {}
    start = time.perf_counter()
    df = load_capture(spark, path)
    if what == "detectors":
        from dlqlens.detect import detector_input, run_detectors, sample_links
        from dlqlens.spark.caches import Caches

        with Caches() as caches:
            # as dlqlens detect: decode once, cache what the detectors read, every detector
            # reads it
            df = caches.cache(detector_input(df))
            n = df.count()
            out["load_seconds"] = time.perf_counter() - start
            # as dlqlens detect --to: each detector's findings persisted (the links read
            # them), both cached, the findings collected, the links sampled (which fills
            # their cache), then written
            findings, links = run_detectors(df, persisted=caches)
            findings, links = caches.cache(findings), caches.cache(links)
            rows = findings.collect()
            sample_links(links, 10).collect()
            links.write.format("noop").mode("overwrite").save()
            out.update(findings=len(rows), links=sum(r["message_count"] for r in rows),
                       largest_finding=max((r["message_count"] for r in rows), default=0))
            seconds = time.perf_counter() - start
    elif what == "audit":
        from dlqlens.quality import audit

        results = audit(df)
        out["checks"] = len(results.to_text().splitlines())
        seconds = time.perf_counter() - start
        n = df.count()  # not timed
    elif what == "report":
        from dlqlens.report import build_report

        report = build_report(df)
        with tempfile.TemporaryDirectory(prefix="dlqlens-bench-report-") as tmp:
            report.write(os.path.join(tmp, "report.html"))
        out["html_bytes"] = len(report.html.encode("utf-8"))
        seconds = time.perf_counter() - start
        n = df.count()  # not timed
    else:
        raise SystemExit(f"unknown analysis {what!r}")
    out.update(messages=n, seconds=seconds, **_spark_rss(jvm_pid))
    spark.stop()
    return out


def _run_child(*args, repeat: int = 1) -> dict:
    env = dict(os.environ, DLQLENS_BENCH_REPEAT=str(repeat))
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *map(str, args)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        # the whole stderr kept (a JVM's first error is often thousands of lines above its
        # tail), its first distinct error lines printed, then its tail
        fd, log = tempfile.mkstemp(prefix=f"dlqlens-bench-{args[0]}-", suffix=".log")
        with os.fdopen(fd, "w") as f:
            f.write(proc.stderr)
        firsts = list(dict.fromkeys(
            line.strip()[:300] for line in proc.stderr.splitlines()
            if ("Error" in line or "Exception" in line) and not line.lstrip().startswith("at ")))
        sys.stderr.write("first error lines:\n  " + "\n  ".join(firsts[:12]) + "\n...\n"
                         + proc.stderr[-2000:] + f"\n(the whole stderr: {log})\n")
        raise SystemExit(f"benchmark child {args[0]} failed (exit {proc.returncode}); "
                         f"its stderr: {log}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------
# parent
# ---------------------------------------------------------------------------

def _result(stage, r, baseline_name, base) -> dict:
    rate = r["messages"] / r["seconds"] if r["seconds"] else float("inf")
    base_rate = base["messages"] / base["seconds"] if base["seconds"] else float("inf")
    out = {"stage": stage, "messages": r["messages"], "msgs_per_s": round(rate),
           "baseline": baseline_name, "baseline_msgs_per_s": round(base_rate),
           "ratio_vs_baseline": round(rate / base_rate, 3),
           "peak_rss_mb": round(r["peak_rss_mb"])}
    for k in ("jvm_peak_rss_mb", "python_peak_rss_mb", "rules", "groups", "seconds_runs",
              "load_seconds", "findings", "links", "largest_finding", "checks", "html_bytes"):
        if k in r:
            out[k] = round(r[k]) if isinstance(r[k], float) else r[k]
    if "seconds_runs" in base:
        out["baseline_seconds_runs"] = base["seconds_runs"]
    out["seconds"] = round(r["seconds"], 3)
    return out


def _first_answer_stages(stages, master: str, workdir: str) -> list[dict]:
    """``first_answer`` and ``warm_analyses`` against one bare-session baseline
    (measured first, then again last; the faster counts, as for the one-core
    stages: the slower is the machine's noise)."""
    bare = [_timed_child("bare", master)]
    out = []
    messages = 669
    if "first_answer" in stages:
        r = _timed_child("first_answer", os.path.join(workdir, "first-answer.html"))
        out.append(("first_answer", r))
    if "warm_analyses" in stages:
        r = _run_child("warm", master)
        r["seconds"] = max(a["seconds"] for name, a in r["analyses"].items() if name != "load")
        out.append(("warm_analyses", r))
    bare.append(_timed_child("bare", master))
    base = min(bare, key=lambda b: b["seconds"])
    base_runs = [round(b["seconds"], 3) for b in bare]
    results = []
    for stage, r in out:
        row = {"stage": stage, "messages": messages,
               "msgs_per_s": round(messages / r["seconds"]),
               "baseline": "bare get_spark() + spark.range(1).count(), a process",
               "baseline_msgs_per_s": round(messages / base["seconds"]),
               "ratio_vs_baseline": round(base["seconds"] / r["seconds"], 3),
               "cost_vs_baseline": round(r["seconds"] / base["seconds"], 3),
               "peak_rss_mb": round(r["peak_rss_mb"]), "baseline_seconds_runs": base_runs,
               "seconds": round(r["seconds"], 3)}
        if "jobs" in r:
            row["jobs"] = r["jobs"]
        if "analyses" in r:
            row["analyses"] = r["analyses"]
        row["load_average"] = round(os.getloadavg()[0], 2)
        results.append(row)
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="dlqlens benchmarks (see the module docstring)")
    ap.add_argument("--messages", type=int, default=1_000_000,
                    help="messages in the raw capture (decode_raw and Spark stages)")
    ap.add_argument("--text-messages", type=int, default=200_000,
                    help="messages in the dmpmqmsg and amqsbcg captures")
    ap.add_argument("--quick", action="store_true",
                    help="20,000 raw / 10,000 text / 50,000 Spark messages: under a minute")
    ap.add_argument("--stages",
                    default="decode_raw,decode_dmpmqmsg,decode_amqsbcg,decode_pcap,spark,"
                            "spark_detectors,spark_audit,spark_report",
                    help="comma-separated: decode_raw (also decode_raw_md_dlh), decode_dmpmqmsg, "
                         "decode_amqsbcg, decode_pcap, decode_hexdump (every hex-dump layout), "
                         "spark (load + group-by and replay), spark_detectors, spark_audit, "
                         "spark_report, first_answer, warm_analyses")
    ap.add_argument("--repeat", type=int, default=None,
                    help="times each one-core stage and baseline is timed, the best counting "
                         "(default 3, with --quick 1)")
    ap.add_argument("--pcap-messages", type=int, default=100_000,
                    help="MQPUTs in the pcap capture (decode_pcap)")
    ap.add_argument("--hex-messages", type=int, default=20_000,
                    help="messages in each hex dump (decode_hexdump stages)")
    ap.add_argument("--rules", type=int, default=100)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--workdir", help="keep the generated captures here (reused when present)")
    ap.add_argument("--json", action="store_true", help="one JSON object per stage")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    if a.child:
        kind, *rest = a.child
        fn = {"decode": lambda p, f, w, c="": child_decode(p, f, w, c),
              "read": lambda p, f, w: child_read(p, f, w),
              "struct": lambda p, n: child_struct(p, int(n)),
              "fromhex": lambda p, f, n: child_fromhex(p, f, int(n)),
              "spark": lambda p, r, m: child_spark(p, int(r), m),
              "dpkt": lambda p, n: child_dpkt(p, int(n)),
              "fromhex_dump": lambda p, f, n: child_fromhex_dump(p, f, int(n)),
              "bare": lambda m: child_bare(m),
              "first_answer": lambda o: child_first_answer(o),
              "warm": lambda m: child_warm(m),
              "analysis": lambda w, p, m: child_analysis(w, p, m)}[kind]
        print(json.dumps(fn(*rest)))
        return 0

    n = 20_000 if a.quick else a.messages
    t = 10_000 if a.quick else min(a.text_messages, n)
    spark_n = 50_000 if a.quick else n
    rep = a.repeat if a.repeat is not None else (1 if a.quick else 3)
    stages = [s.strip() for s in a.stages.split(",") if s.strip()]
    tmp = None
    workdir = a.workdir
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="dlqlens-bench-")
        workdir = tmp.name
    os.makedirs(workdir, exist_ok=True)

    def capture(name, count, writer):
        path = os.path.join(workdir, f"{name}-{count}")
        if not os.path.exists(path):
            start = time.perf_counter()
            writer(path, count)
            print(f"# wrote {path} ({os.path.getsize(path) / 1e6:,.0f} MB) in "
                  f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
        return path

    def text_writer(fmt):
        def write(path, count):
            from dlqlens.capture.registry import FORMATS
            FORMATS[fmt].write(path, data.make_messages(count))
        return write

    results = []
    failed: list[str] = []
    printed: set[int] = set()
    try:
        needs_raw = "decode_raw" in stages or any(s.startswith("spark") for s in stages)
        raw = capture("raw", n, data.write_raw_capture) if needs_raw else None
        struct_base = None
        if "decode_raw" in stages or any(s.startswith("spark") for s in stages):
            struct_base = _run_child("struct", raw, min(n, BASELINE_CAP), repeat=rep)
        if "decode_raw" in stages:
            warm = capture("raw", 1000, data.write_raw_capture)
            results.append(_result("decode_raw", _run_child("decode", raw, "raw", warm, repeat=rep),
                                   "struct.unpack MQMD v2 + MQDLH per record", struct_base))
            results.append(_result("decode_raw_md_dlh",
                                   _run_child("decode", raw, "raw", warm, "md,dlh", repeat=rep),
                                   "struct.unpack MQMD v2 + MQDLH per record", struct_base))
        for fmt in ("dmpmqmsg", "amqsbcg"):
            if f"decode_{fmt}" in stages:
                path = capture(fmt, t, text_writer(fmt))
                warm = capture(fmt, 1000, text_writer(fmt))
                base = _run_child("fromhex", path, fmt, t, repeat=rep)
                results.append(_result(f"read_{fmt}",
                                       _run_child("read", path, fmt, warm, repeat=rep),
                                       "bytes.fromhex over the same hex", base))
                results.append(_result(f"decode_{fmt}",
                                       _run_child("decode", path, fmt, warm, repeat=rep),
                                       "bytes.fromhex over the same hex", base))
        if "decode_pcap" in stages:  # issue 23 part 3: MQ client traffic
            def pcap_writer(path, count):
                from dlqlens.capture.pcap import write_pcap
                write_pcap(path, data.make_messages(count))
            pcap_n = 5_000 if a.quick else a.pcap_messages
            path = capture("pcap", pcap_n, pcap_writer)
            warm = capture("pcap", 1000, pcap_writer)
            results.append(_result("decode_pcap",
                                   _run_child("decode", path, "pcap", warm, repeat=rep),
                                   "dpkt iteration of the same file",
                                   _run_child("dpkt", path, pcap_n, repeat=rep)))
        if "decode_hexdump" in stages:  # issue 23: each hex-dump layout
            h = 2_000 if a.quick else a.hex_messages
            for layout in ("ispf", "xxd", "hexdump-c", "od", "hex-stream"):
                path = capture(f"hex-{layout}", h, text_writer(layout))
                warm = capture(f"hex-{layout}", 200, text_writer(layout))
                base = _run_child("fromhex_dump", path, layout, h, repeat=rep)
                results.append(_result(f"decode_hexdump_{layout}",
                                       _run_child("decode", path, layout, warm, repeat=rep),
                                       "bytes.fromhex over the same records' hex", base))
        if "spark" in stages:
            path = raw if spark_n == n else capture("raw", spark_n, data.write_raw_capture)
            out = _run_child("spark", path, a.rules, a.master)
            for stage in ("spark_load_groupby", "spark_replay"):
                results.append(_result(stage, out[stage],
                                       "struct.unpack MQMD v2 + MQDLH per record", struct_base))
        if "first_answer" in stages or "warm_analyses" in stages:
            # the README runs with the default master (local[*]); so does the baseline
            results.extend(_first_answer_stages(stages, "local[*]", workdir))
        for what in ("detectors", "audit", "report"):
            if f"spark_{what}" in stages:
                path = raw if spark_n == n else capture("raw", spark_n, data.write_raw_capture)
                try:
                    r = _run_child("analysis", what, path, a.master)
                except SystemExit as exc:  # the child's stderr tail is printed; the others go on
                    failed.append(f"spark_{what}: {exc}")
                    continue
                results.append(_result(f"spark_{what}", r,
                                       "struct.unpack MQMD v2 + MQDLH per record", struct_base))
                if a.json:  # as soon as measured: a later stage that fails loses nothing
                    print(json.dumps(results[-1]), flush=True)
                    printed.add(id(results[-1]))
    finally:
        if tmp is not None:
            tmp.cleanup()

    for r in results:
        if a.json and id(r) not in printed:
            print(json.dumps(r))
    if not a.json:
        print(f"{'stage':20s} {'messages':>11s} {'seconds':>8s} {'msgs/s':>11s} "
              f"{'baseline/s':>11s} {'ratio':>7s} {'peak RSS MB':>11s}  baseline")
        for r in results:
            print(f"{r['stage']:20s} {r['messages']:>11,d} {r['seconds']:>8.1f} "
                  f"{r['msgs_per_s']:>11,d} {r['baseline_msgs_per_s']:>11,d} "
                  f"{r['ratio_vs_baseline']:>7.2f} {r['peak_rss_mb']:>11,d}  {r['baseline']}")
        for r in results:
            if "cost_vs_baseline" in r:
                extra = "".join(f"; {k} {v['seconds']:.2f} s ({v['jobs']} jobs)"
                                for k, v in r.get("analyses", {}).items())
                print(f"{r['stage']}: {r['seconds']:.1f} s = {r['cost_vs_baseline']:.2f}x the bare "
                      f"session + trivial job ({min(r['baseline_seconds_runs']):.1f} s)"
                      + (f", {r['jobs']} Spark jobs" if "jobs" in r else "") + extra
                      + f"; load average {r['load_average']}")
        print(f"(one-core stages and baselines: best of {rep} run(s) each; Spark stages: one run)")
    for f in failed:
        print(f"FAILED {f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
