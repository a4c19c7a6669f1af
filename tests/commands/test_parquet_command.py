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


SHOP = DATASETS.parent / "rules" / "shop.rul"
SHOP_FIXED = DATASETS.parent / "rules" / "shop-fixed.rul"
MQSC = DATASETS.parent / "mqsc" / "qm.mqsc"


def _status(capsys, argv):
    status = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return status, out


@pytest.mark.spark
def test_audit_export_and_rules_diff_on_the_directory(spark, decoded, capsys, tmp_path):
    """The verbs not covered above give the same results from the directory as from the
    captures: audit (its verdicts and observed values, exit status), export (the same
    dmpmqmsg bytes) and rules diff (the same transitions, message by message)."""
    audit = ["audit", "--rules", str(SHOP), "--queue-defs", str(MQSC), "--json",
             "--master", "local[2]"]
    st_c, aud_c = _status(capsys, [*audit[:1], str(DATASETS), *audit[1:]])
    st_p, aud_p = _status(capsys, [*audit[:1], str(decoded), *audit[1:]])
    assert (st_p, json.loads(aud_p)) == (st_c, json.loads(aud_c))
    assert json.loads(aud_c)["results"]  # not an empty run that agrees by having nothing
    export = ["--reason", "2053", "--reason", "2035", "--master", "local[2]"]
    st_c, exp_c = _status(capsys, ["export", str(DATASETS), "--out", str(tmp_path / "c.dmp"),
                                   *export])
    st_p, exp_p = _status(capsys, ["export", str(decoded), "--out", str(tmp_path / "p.dmp"),
                                   *export])
    assert st_p == st_c and exp_p.replace("p.dmp", "c.dmp") == exp_c
    # the same file but for the banner's "* QLOAD ... Created:" time of writing
    written = (tmp_path / "c.dmp").read_bytes().split(b"\n", 1)
    assert written[0].startswith(b"* QLOAD") and written[1].count(b"\nA MST ") >= 1
    assert (tmp_path / "p.dmp").read_bytes().split(b"\n", 1)[1] == written[1]
    diff = ["rules", "diff", str(SHOP), str(SHOP_FIXED)]
    st_c, diff_c = _status(capsys, [*diff, str(DATASETS), "--jsonl", "--master", "local[2]"])
    st_p, diff_p = _status(capsys, [*diff, str(decoded), "--jsonl", "--master", "local[2]"])
    assert st_p == st_c == 0
    assert sorted(diff_p.splitlines()) == sorted(diff_c.splitlines()) and diff_c.strip()
    st_c, text_c = _status(capsys, [*diff, str(DATASETS), "--master", "local[2]"])
    st_p, text_p = _status(capsys, [*diff, str(decoded), "--master", "local[2]"])
    assert text_p == text_c and "->" in text_c


SIMULATED = DATASETS.parent / "scenarios" / "poison_ping_pong"


@pytest.mark.spark
def test_a_simulator_directory_decoded_keeps_its_manifest(spark, capsys, tmp_path):
    """decode --to of a 'dlqlens simulate' directory keeps its manifest's queue names and
    capture time in the marker: audit reads the Parquet directory as the simulator
    directory (only the DLQ's capture audited as the DLQ, the others feeding the detectors)."""
    from dlqlens.commands.audit import audit_plan

    out = tmp_path / "sim"
    assert main(["decode", str(SIMULATED), "--to", str(out), "--master", "local[2]"]) == 0
    capsys.readouterr()
    manifests = read_marker(out)["manifests"]
    dlq = str(SIMULATED / "QM.APP_SYSTEM.DEAD.LETTER.QUEUE.raw")
    assert manifests[dlq] == {"qmgr": "QM.APP", "queue": "SYSTEM.DEAD.LETTER.QUEUE",
                              "captured_at": "2024-03-15T08:01:32.00Z"}
    assert manifests[str(SIMULATED / "QM.APP_PAYMENTS.BOQ.raw")]["queue"] == "PAYMENTS.BOQ"
    on_sim = audit_plan([str(SIMULATED)])["kwargs"]
    on_pq = audit_plan([str(out)])["kwargs"]
    assert on_pq["dlq_sources"] == {dlq} == {s for s in on_sim["dlq_sources"]}
    assert on_pq["dlq_queues"] == on_sim["dlq_queues"] == {dlq: "SYSTEM.DEAD.LETTER.QUEUE"}
    assert on_pq["capture_queues"] == on_sim["capture_queues"]
    assert on_pq["capture_time"].origin == on_sim["capture_time"].origin == "given"
    assert dict(on_pq["capture_time"]) == dict(on_sim["capture_time"]) and on_pq["capture_time"]
    argv = ["--json", "--master", "local[2]"]
    st_s, aud_s = _status(capsys, ["audit", str(SIMULATED), *argv])
    st_p, aud_p = _status(capsys, ["audit", str(out), *argv])
    assert (st_p, json.loads(aud_p)) == (st_s, json.loads(aud_s))
    # without the kept manifest every capture would be audited as the DLQ: not the same
    plain = read_marker(out)
    del plain["manifests"]
    (out / MARKER).write_text(json.dumps(plain))
    assert audit_plan([str(out)])["kwargs"]["dlq_sources"] is None
