"""``--to DIR`` and Parquet directories given as captures, on the command line: the sample
decoded once, then detect, report, explain and rules replay on the directory give what they
give on the captures; bad arguments are refused before the JVM starts."""

from __future__ import annotations

import json

import pytest

from dlqlens.cli import main
from dlqlens.spark.parquet import MARKER, read_marker, read_results
from tests.conftest import DATASETS

RULES = "INPUTQ(SYSTEM.DEAD.LETTER.QUEUE)\nREASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\nACTION(FWD) FWDQ(HOLD.Q)\n"


@pytest.fixture
def no_jvm(monkeypatch):
    """Fail a test that would start Spark."""
    import dlqlens.spark.session as session

    def refuse(*a, **k):
        raise AssertionError("Spark started")

    monkeypatch.setattr(session, "get_spark", refuse)


@pytest.mark.parametrize("argv, text", [
    (["decode", str(DATASETS), "--to", "{full}"], "exists and is not an empty directory"),
    (["decode", str(DATASETS), "--to", "{new}", "--jsonl"], "--jsonl and --to: choose one"),
    (["decode", str(DATASETS), "--to", "{new}", "--mode", "DROPMALFORMED"],
     "the directory keeps every message"),
    (["decode", str(DATASETS), "--to", "{new}/a/b"], "no such directory"),
    (["decode", "{pq}", "--to", "{new}"], "decode reads captures, not a directory it wrote"),
    (["detect", "{pq}", str(DATASETS / "dlq_aix.dmp")], "either captures or such directories"),
    (["detect", str(DATASETS), "--to", "{full}"], "exists and is not an empty directory"),
    (["report", "{bare}"], f"no {MARKER} in it"),
    (["summary", "{bare}"], f"no {MARKER} in it"),
    (["rules", "replay", "{rules}", str(DATASETS), "--to", "{full}"],
     "exists and is not an empty directory"),
    (["detect", "{pq}", "--mode", "FAILFAST"], "message 2: bad_data"),
])
def test_refused_before_the_jvm(no_jvm, tmp_path, capsys, argv, text):
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "part-00000.parquet").write_bytes(b"PAR1")
    pq = tmp_path / "pq"
    pq.mkdir()
    (pq / MARKER).write_text(json.dumps({"layout": 1, "kind": "messages", "sources": [
        {"source": "a.bcg", "capture": "a.bcg", "format": "amqsbcg", "messages": 3,
         "malformed": 1, "first_malformed": {"message_number": 2, "decode_status": "bad_data"}}]}))
    rules = tmp_path / "t.rul"
    rules.write_text(RULES)
    subst = {"full": full, "new": tmp_path / "new", "bare": bare, "pq": pq, "rules": rules}
    assert main([a.format(**subst) for a in argv]) == 2
    err = capsys.readouterr().err
    assert text in err and "Traceback" not in err


@pytest.fixture(scope="module")
def decoded(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("decoded") / "sample"
    assert main(["decode", str(DATASETS), "--to", str(out), "--master", "local[2]"]) == 0
    return out


def _run(capsys, argv):
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    return out, err


@pytest.mark.spark
def test_decode_to_then_detect_gives_the_same_findings(spark, decoded, capsys, tmp_path):
    marker = read_marker(decoded)
    assert marker["kind"] == "messages" and sum(s["messages"] for s in marker["sources"]) == 669
    by_source = {s["source"]: s for s in marker["sources"]}
    assert by_source[str(DATASETS / "dlq_aix.dmp")]["queue_manager"] == "QM.BILLING"
    on_captures, _ = _run(capsys, ["detect", str(DATASETS), "--jsonl", "--master", "local[2]"])
    on_parquet, err = _run(capsys, ["detect", str(decoded), "--jsonl", "--master", "local[2]",
                                    "--to", str(tmp_path / "findings")])
    assert sorted(on_parquet.splitlines()) == sorted(on_captures.splitlines())
    assert len(on_captures.splitlines()) == 13  # the sample's findings
    assert "13 findings, " in err and " links written to" in err
    back = read_results(spark, str(tmp_path / "findings"))
    assert back["findings"].count() == 13
    # every link names a written finding, and each finding's links are its message_count
    counts = {r["finding_id"]: r["message_count"] for r in back["findings"].collect()}
    linked = {r["finding_id"]: r["count"]
              for r in back["links"].groupBy("finding_id").count().collect()}
    assert linked == counts
    # text output names the original files (provenance kept), as on the captures
    text_c, _ = _run(capsys, ["detect", str(DATASETS), "--master", "local[2]"])
    text_p, _ = _run(capsys, ["detect", str(decoded), "--master", "local[2]"])
    assert text_p == text_c


@pytest.mark.spark
def test_report_explain_and_replay_on_the_directory(spark, decoded, capsys, tmp_path):
    rep_c, _ = _run(capsys, ["report", str(DATASETS), "--out", str(tmp_path / "c.html"),
                             "--master", "local[2]"])
    rep_p, _ = _run(capsys, ["report", str(decoded), "--out", str(tmp_path / "p.html"),
                             "--master", "local[2]"])
    assert rep_p.replace("p.html", "c.html") == rep_c
    assert (tmp_path / "p.html").stat().st_size > 0
    # every column of every message, as JSON lines: the same from the directory (no JVM)
    dec_c, _ = _run(capsys, ["decode", str(DATASETS)])
    dec_p, err = _run(capsys, ["decode", str(decoded)])
    assert sorted(dec_p.splitlines()) == sorted(dec_c.splitlines())
    assert len(dec_c.splitlines()) == 669 and "669 written" in err
    exp_c, _ = _run(capsys, ["explain", str(DATASETS), "-m", "3", "--jsonl"])
    exp_p, _ = _run(capsys, ["explain", str(decoded), "-m", "3", "--jsonl"])
    assert exp_p == exp_c and len(exp_c.splitlines()) == 7  # message 3 of each file
    rules = tmp_path / "t.rul"
    rules.write_text(RULES)
    rep_c, _ = _run(capsys, ["rules", "replay", str(rules), str(DATASETS), "--jsonl",
                             "--master", "local[2]"])
    rep_p, err = _run(capsys, ["rules", "replay", str(rules), str(decoded), "--jsonl",
                               "--master", "local[2]", "--to", str(tmp_path / "replay")])
    assert rep_p == rep_c and len(rep_c.splitlines()) == 669
    assert "669 replay written to" in err
    assert read_results(spark, str(tmp_path / "replay"))["replay"].count() == 669
