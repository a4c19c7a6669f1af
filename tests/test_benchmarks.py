"""The benchmark harness stays runnable, and its JSON lines keep the contract
issue 6 names (stage, messages, msgs_per_s, baseline, ratio_vs_baseline,
peak_rss_mb). Tiny sizes and no Spark: this checks the harness, not speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_benchmark_harness_json_contract(tmp_path):
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--messages", "3000",
         "--text-messages", "500", "--stages", "decode_raw,decode_dmpmqmsg,decode_amqsbcg",
         "--workdir", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [r["stage"] for r in rows] == [
        "decode_raw", "decode_raw_md_dlh", "read_dmpmqmsg", "decode_dmpmqmsg",
        "read_amqsbcg", "decode_amqsbcg"]
    for r in rows:
        assert {"stage", "messages", "msgs_per_s", "baseline", "ratio_vs_baseline",
                "peak_rss_mb"} <= set(r)
        assert r["msgs_per_s"] > 0 and r["ratio_vs_baseline"] > 0 and r["peak_rss_mb"] > 0
    assert [r["messages"] for r in rows] == [3000, 3000, 500, 500, 500, 500]
