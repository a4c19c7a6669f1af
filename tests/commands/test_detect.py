"""``dlqlens detect`` end to end on a small simulated capture."""

from __future__ import annotations

import json

import pytest

from dlqlens.cli import main
from dlqlens.sim import simulate

pytestmark = pytest.mark.spark

MINE = ["backout_loop", "expiry_buildup", "orphaned_reply", "reason_burst"]


@pytest.fixture(scope="module")
def poison(tmp_path_factory):
    out = tmp_path_factory.mktemp("poison")
    simulate("poison_ping_pong", 200, str(out), format="dmpmqmsg")
    return out


def test_text_output_most_severe_first(spark, poison, capsys):
    assert main(["detect", str(poison), "--detectors", ",".join(MINE), "--master", "local[2]"]) == 0
    out, err = capsys.readouterr()
    heads = [line for line in out.splitlines() if line.startswith("[")]
    assert heads, out
    ranks = ["CRITICAL", "HIGH", "MEDIUM", "LOW", "INFO"]
    seen = [ranks.index(h[1:h.index("]")]) for h in heads]
    assert seen == sorted(seen)
    assert any("MQRC_BACKOUT_THRESHOLD_REACHED (2362)" in line for line in out.splitlines())
    assert any("backout queue PAYMENTS.BOQ" in line for line in out.splitlines())
    assert "finding(s)" in err


def test_jsonl_one_object_per_finding(spark, poison, capsys):
    assert main(["detect", str(poison), "--jsonl", "--detectors", "backout_loop",
                 "--param", "backout_threshold=3", "--master", "local[2]"]) == 0
    out = capsys.readouterr().out
    records = [json.loads(line) for line in out.splitlines()]
    assert records and {r["kind"] for r in records} == {"backout_loop"}
    for r in records:
        assert set(r) == {"finding_id", "kind", "severity", "queues", "window_start",
                          "window_end", "message_count", "messages", "evidence", "statement"}
        assert r["finding_id"].startswith("backout_loop:")
        # a bounded sample: the first 10 by capture and message number, and the count of all
        assert len(r["messages"]) == min(10, r["message_count"]) > 0
        assert r["messages"] == sorted(r["messages"],
                                       key=lambda m: (m["source"], m["message_number"]))
        assert r["window_start"].endswith("Z")
        assert {"source", "message_number"} == set(r["messages"][0])
    assert {r["evidence"]["signal"] for r in records} >= {"threshold_reached", "backout_queue"}
    assert any(r["message_count"] > 10 for r in records)
    assert main(["detect", str(poison), "--jsonl", "--detectors", "backout_loop", "--sample", "2",
                 "--param", "backout_threshold=3", "--master", "local[2]"]) == 0
    two = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["finding_id"] for r in two] == [r["finding_id"] for r in records]  # stable
    assert [r["messages"] for r in two] == [r["messages"][:2] for r in records]
    assert main(["detect", str(poison), "--sample", "0", "--master", "local[2]"]) == 2


def test_unknown_parameter_is_a_usage_error(spark, poison, capsys):
    assert main(["detect", str(poison), "--detectors", "reason_burst", "--param", "nope=1",
                 "--master", "local[2]"]) == 2
    assert "nope" in capsys.readouterr().err


def test_queue_definitions_from_mqsc(spark, poison, tmp_path, capsys):
    mqsc = tmp_path / "qdefs.mqsc"
    mqsc.write_text("DEFINE QLOCAL('APP.IN') BOTHRESH(1) REPLACE\n"
                    "DEFINE QLOCAL('PAYMENTS.IN') BOTHRESH(2) BOQNAME('PAYMENTS.BOQ') REPLACE\n")
    # backout-queue name patterns off: only the definitions' BOQNAME makes PAYMENTS.BOQ one
    argv = ["detect", str(poison), "--jsonl", "--detectors", "backout_loop",
            "--param", "backout_queue_patterns=[]", "--master", "local[2]"]
    assert main(argv) == 0
    without = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert "backout_queue" not in {r["evidence"]["signal"] for r in without}
    assert main(argv + ["--queue-defs", str(mqsc)]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_signal = {r["evidence"]["signal"]: r for r in records}
    assert by_signal["backout_queue"]["queues"] == ["PAYMENTS.BOQ"]
    reached = by_signal["threshold_reached"]
    assert reached["queues"] == ["APP.IN"] and reached["evidence"]["bothresh"] == 1
    assert reached["evidence"]["threshold"] == 1
