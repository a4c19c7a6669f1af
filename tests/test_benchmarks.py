"""The benchmark harness stays runnable, and its JSON lines keep the contract
issue 6 names (stage, messages, msgs_per_s, baseline, ratio_vs_baseline,
peak_rss_mb). Tiny sizes and no Spark: this checks the harness, not speed. The
explorer's script (benchmarks/explorer.py) needs Spark: its check is Spark-marked."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

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


@pytest.mark.spark
def test_explorer_benchmark_runs_and_reports_its_figures(tmp_path):
    """benchmarks/explorer.py on a tiny capture: the figures are there and
    no fetch brought more than a page (checks the script, not speed)."""
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "explorer.py"), "--messages", "2000",
         "--page-size", "10", "--workdir", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=900,
        env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")))
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])
    assert out["messages"] == 2000 and 0 < out["filtered_messages"] < 2000
    ops = out["operations"]
    assert set(ops) == {"baseline_limit", "baseline_scan", "open", "filter_change", "page_turn",
                        "page_jump", "sort_change", "select", "select_last"}
    assert ops["page_turn"]["method"] == "keyset" and ops["page_jump"]["method"] == "offset"
    assert all(o["seconds"] > 0 and o["ratio_vs_baseline"] > 0 for o in ops.values())
    assert out["memory"]["max_rows_per_page_fetch"] <= 11


def test_benchmark_decode_pcap_stage_reports_against_dpkt(tmp_path):
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--messages", "1000",
         "--pcap-messages", "1000", "--stages", "decode_pcap", "--repeat", "1",
         "--workdir", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (row,) = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert row["stage"] == "decode_pcap" and row["messages"] == 1000
    assert row["baseline"] == "dpkt iteration of the same file"
    assert row["msgs_per_s"] > 0 and row["ratio_vs_baseline"] > 0


def test_a_timed_child_gives_its_result_and_the_seconds_it_took(monkeypatch):
    """The first-answer stages time whole child processes (``_timed_child``)."""
    from tests.builders import load_script

    bench = load_script(os.path.join(ROOT, "benchmarks", "run.py"), "benchmarks_run")

    monkeypatch.setattr(bench, "_run_child", lambda *args: {"jobs": 3, "args": list(args)})
    out = bench._timed_child("bare", "local[1]")
    assert out["jobs"] == 3 and out["args"] == ["bare", "local[1]"] and out["seconds"] >= 0
