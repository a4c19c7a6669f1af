"""``dlqlens export`` end to end: selection on the command line, counts, exit status."""

from __future__ import annotations

import json

import pytest

from dlqlens.capture.reader import read_capture
from dlqlens.cli import main
from tests.conftest import DATASETS, ROOT

pytestmark = pytest.mark.spark

SHOP = str(ROOT / "datasets" / "rules" / "shop.rul")


def test_export_by_reason_reads_back(spark, tmp_path, capsys):
    out = tmp_path / "q_full.dmp"
    assert main(["export", str(DATASETS / "dlq_linux_x86.raw"), str(DATASETS / "dlq_aix.dmp"),
                 "--out", str(out), "--reason", "MQRC_Q_FULL", "--master", "local[2]"]) == 0
    text = capsys.readouterr().out
    rows = read_capture(out).table.to_pylist()
    assert rows and {r["dlh"]["Reason"] for r in rows} == {2053}
    assert f"{len(rows)} of {len(rows)} selected message(s) written to {out}" in text
    assert f"dmpmqmsg -m QMGR -f {out} -o QUEUE" in text


def test_fate_left_with_strip_dlh(spark, tmp_path, capsys):
    """What shop.rul would leave on the DLQ, ready for a RETRY by hand: MQDLH removed."""
    out = tmp_path / "left.dmp"
    assert main(["export", str(DATASETS / "dlq_zos.raw"), "--out", str(out), "--rules", SHOP,
                 "--fate", "left", "--world", "pessimistic", "--strip-dlh",
                 "--master", "local[2]"]) == 0
    rows = read_capture(out).table.to_pylist()
    assert rows and all(r["dlh"] is None and r["md"]["Format"] != "MQDEAD" for r in rows)
    assert "without their MQDLH" in capsys.readouterr().out


def test_refused_messages_give_exit_status_1(spark, tmp_path, capsys):
    out = tmp_path / "bcg.dmp"
    assert main(["export", str(DATASETS / "dlq_linux_x86_mq94.bcg"), "--out", str(out),
                 "--dest-q", "*", "--master", "local[2]"]) == 1
    captured = capsys.readouterr()
    assert "0 of 97 selected message(s) written" in captured.out
    assert "97 not written: the MQDLH was rebuilt" in captured.out
    assert "not written" in captured.err
    assert read_capture(out).table.num_rows == 0


def test_a_dump_without_its_mqmd_is_refused_with_its_issue(spark, tmp_path, capsys):
    """A hex dump of the message data only (the MQMD null, an issue saying so):
    every message refused as unreadable, with that issue as the example; it used
    to fail the job (``element_at`` of an empty list of matching issues)."""
    out = tmp_path / "dump.dmp"
    dump = ROOT / "datasets" / "hexdumps" / "ascii_be_dlh_hex-stream_whole.txt"
    assert main(["export", str(dump), "--out", str(out), "--dest-q", "*",
                 "--master", "local[2]"]) == 1
    captured = capsys.readouterr()
    assert "not written: the MQMD or the message data could not be read" in captured.out
    assert "expected an MQMD before the message data" in captured.out
    assert "Traceback" not in captured.err
    assert read_capture(out).table.num_rows == 0


def test_usage_errors_before_spark(tmp_path, capsys):
    cap = str(DATASETS / "dlq_aix.dmp")
    for argv, says in (
            (["--fate", "left"], "--fate needs --rules"),
            (["--reason", "MQRC_NOPE"], "MQRC_NOPE"),
            (["--finding", "poison"], "expected a kind"),
            (["--finding-id", "backout_loop:XYZ"], "expected KIND:16 hex digits"),
            (["--rules", SHOP, "--fate", "gone"], "expected one of")):
        assert main(["export", cap, "--out", str(tmp_path / "x.dmp"), *argv]) == 2
        assert says in capsys.readouterr().err
    assert main(["export", cap, "--out", str(tmp_path / "no" / "x.dmp")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_a_findings_messages(spark, tmp_path, capsys):
    """--finding KIND[:QUEUE]: the messages the detectors grouped (QM.SHOP's backout loop)."""
    out = tmp_path / "loop.dmp"
    assert main(["export", str(DATASETS / "dlq_aix_mq7.bcg"), str(DATASETS / "dlq_aix.dmp"),
                 "--out", str(out), "--finding", "backout_loop:APP.IN",
                 "--master", "local[2]"]) == 0
    rows = read_capture(out).table.to_pylist()
    assert len(rows) == 63 and {r["dlh"]["Reason"] for r in rows} == {2362}
    assert "63 of 63 selected" in capsys.readouterr().out
    # --finding-id: one finding, by the id 'dlqlens detect --jsonl' and the report show
    assert main(["detect", str(DATASETS / "dlq_aix_mq7.bcg"), str(DATASETS / "dlq_aix.dmp"),
                 "--jsonl", "--detectors", "backout_loop", "--master", "local[2]"]) == 0
    [loop] = [r for r in map(json.loads, capsys.readouterr().out.splitlines())
              if r["queues"] == ["APP.IN"]]
    by_id = tmp_path / "by-id.dmp"
    assert main(["export", str(DATASETS / "dlq_aix_mq7.bcg"), str(DATASETS / "dlq_aix.dmp"),
                 "--out", str(by_id), "--finding-id", loop["finding_id"],
                 "--master", "local[2]"]) == 0
    got = read_capture(by_id).table.to_pylist()
    assert sorted(r["md"]["MsgId"] for r in got) == sorted(r["md"]["MsgId"] for r in rows)
    capsys.readouterr()
    assert main(["export", str(DATASETS / "dlq_aix.dmp"), "--out", str(out),
                 "--finding", "backout_loop:NO.SUCH.QUEUE", "--master", "local[2]"]) == 1
    captured = capsys.readouterr()
    assert "no message matched the selection" in captured.out
    assert "nothing matched" in captured.err
    assert read_capture(out).table.num_rows == 0
