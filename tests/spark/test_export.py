"""Exporting messages as a dmpmqmsg file: read back, selections, MQDLH stripping, refusals."""

from __future__ import annotations

import shutil

import pytest

from dlqlens.capture.reader import read_capture
from dlqlens.errors import ExportError, UsageError
from dlqlens.spark import load_capture, local_rows
from dlqlens.spark.export import EXPORT_COLUMNS, export_dmpmqmsg, reason_codes, select_messages
from tests.conftest import DATASETS, ROOT

pytestmark = pytest.mark.spark

CAPTURES = sorted(p for p in DATASETS.iterdir() if not p.name.endswith(".jsonl"))
CORPUS = ROOT / "tests" / "hostile" / "corpus"
V2 = ("GroupId", "MsgSeqNumber", "Offset", "MsgFlags", "OriginalLength")


def _rows(path):
    return read_capture(path).table.to_pylist()


def _md(row):
    md = dict(row["md"])
    if md["Version"] < 2:
        for name in V2:
            assert md.pop(name) is None
    return md


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_export_reads_back_to_the_same_messages(spark, capture, tmp_path):
    """Every format, byte order and character set of the sample: MQMD, MQDLH, headers and
    bytes read back as captured; an MQDLH amqsbcg printed as a block is not written."""
    before = _rows(capture)
    out = tmp_path / "out.dmp"
    result = export_dmpmqmsg(load_capture(spark, str(capture)), out)
    assert result.selected == len(before) >= 50
    rebuilt = [r for r in before if r["layout"]["dlh_reconstructed"]]
    if rebuilt:  # amqsbcg 9.3.4+: the MQDLH's bytes are not in the capture
        assert result.written == 0 and result.skipped == {"dlh_rebuilt": len(before)}
        assert "rebuilt" in result.to_text()
        assert _rows(out) == []
        return
    assert result.written == len(before) and result.skipped == {} and result.duplicates == 0
    after = _rows(out)
    assert len(after) == len(before)
    for b, a in zip(before, after):
        assert a["decode_status"] == "ok", a["decode_issues"]
        assert _md(a) == _md(b)
        assert a["dlh"] == b["dlh"] and a["tm"] == b["tm"] and a["headers"] == b["headers"]
        assert a["header_bytes"] + a["payload"] == b["header_bytes"] + b["payload"]
    assert result.data_bytes == sum(len(b["header_bytes"] + b["payload"]) for b in before)
    assert result.bytes == out.stat().st_size


@pytest.mark.parametrize("name", ["dlq_linux_x86_mq94.bcg", "dlq_zos.raw", "dlq_aix.dmp"])
def test_strip_dlh_does_what_runmqdlq_header_no_does(spark, name, tmp_path):
    """The MQDLH's 172 bytes go; MQMD Format, Encoding and CodedCharSetId come from it; every
    other MQMD field and every further header stays (an MQTM after the MQDLH on z/OS)."""
    capture = DATASETS / name
    before = _rows(capture)
    out = tmp_path / "stripped.dmp"
    result = export_dmpmqmsg(load_capture(spark, str(capture)), out, strip_dlh=True)
    assert result.written == len(before) and result.skipped == {}
    after = _rows(out)
    for b, a in zip(before, after):
        want = _md(b)
        want.update(Format=b["dlh"]["Format"], Encoding=b["dlh"]["Encoding"],
                    CodedCharSetId=b["dlh"]["CodedCharSetId"])
        assert _md(a) == want
        assert a["dlh"] is None
        assert a["headers"] == b["headers"][1:]
        assert a["header_bytes"] + a["payload"] == (b["header_bytes"] + b["payload"])[172:]
    assert any(b["headers"] == ["MQDEAD", "MQTRIG"] for b in before) == (name == "dlq_zos.raw")


def test_selection_by_reason_destination_finding_and_fate(spark, tmp_path):
    from pyspark.sql import functions as F

    from dlqlens.detect import run_detectors
    from dlqlens.rules import parse_file
    from dlqlens.rules.replay import replay, where_fate

    df = load_capture(spark, str(DATASETS)).cache()
    try:
        def keys(frame):
            return {(r.source, r.message_number)
                    for r in local_rows(frame.select("source", "message_number"))}

        q_full = select_messages(df, reasons=["MQRC_Q_FULL", 2085])
        assert keys(q_full) == keys(df.where(F.col("dlh.Reason").isin(2053, 2085)))
        assert q_full.count() > 0
        both = select_messages(df, reasons=[2053], dest_queues=["ORDERS.*"])
        assert keys(both) == keys(df.where((F.col("dlh.Reason") == 2053)
                                           & F.col("dlh.DestQName").startswith("ORDERS.")))
        assert 0 < both.count() < q_full.count()

        found = run_detectors(df, ["backout_loop"])
        assert keys(select_messages(df, messages=found)) == keys(found.links) != set()
        assert keys(select_messages(df, messages=found.links)) == keys(found.links)
        with pytest.raises(UsageError, match="holds no messages"):
            select_messages(df, messages=found.findings)

        table = parse_file(str(ROOT / "datasets" / "rules" / "shop.rul"))
        replayed = replay(table, df, "pessimistic")
        left = where_fate(replayed, ["left"])
        fell = where_fate(replayed, ["left:no_match", "left:rules_exhausted"])
        assert keys(fell) <= keys(left) and fell.count() > 0
        assert keys(where_fate(replayed, ["left:no_match"])) == keys(
            replayed.where((F.col("disposition") == "left")
                           & (F.col("left_reason") == "no_match")))
        chosen = select_messages(df, messages=fell)
        out = tmp_path / "left.dmp"
        result = export_dmpmqmsg(chosen, out)
        # written in file and message order: the MsgIds of the selection, in order
        want = [r.md.MsgId for r in local_rows(chosen.orderBy("source", "message_number")
                .where(~F.col("layout.dlh_reconstructed")).select("md"))]
        assert [r["md"]["MsgId"] for r in _rows(out)] == want
        assert result.written == len(want)
        assert result.written + sum(result.skipped.values()) == result.selected == chosen.count()
        with pytest.raises(UsageError, match="left:REASON"):
            where_fate(replayed, ["left:forever"])
    finally:
        df.unpersist()


def test_snapshots_of_one_dlq_give_each_message_once_with_its_latest_expiry(spark, tmp_path):
    top = ROOT / "datasets" / "snapshots"
    first, last = _rows(top / "dlq_store_0922.dmp"), _rows(top / "dlq_store_0925.dmp")
    later = {r["md"]["MsgId"]: r for r in last}
    both = [r for r in first if r["md"]["MsgId"] in later]
    assert both and all(r["md"]["Expiry"] > later[r["md"]["MsgId"]]["md"]["Expiry"] > 0
                        for r in both)
    df = load_capture(spark, str(top))
    result = export_dmpmqmsg(df, tmp_path / "once.dmp")
    assert (result.selected, result.duplicates) == (len(first) + len(last), len(both))
    out = {r["md"]["MsgId"]: r for r in _rows(tmp_path / "once.dmp")}
    assert len(out) == result.written == len(first) + len(last) - len(both)
    for r in both:  # the copy of the later snapshot: the remaining expiry then
        assert out[r["md"]["MsgId"]]["md"] == later[r["md"]["MsgId"]]["md"]


def test_a_message_in_two_snapshots_is_written_once(spark, tmp_path):
    for name in ("QM1_DLQ.dmp", "QM1_DLQ.2.dmp"):
        shutil.copy(DATASETS / "dlq_aix.dmp", tmp_path / name)
    df = load_capture(spark, [str(tmp_path / "QM1_DLQ.dmp"), str(tmp_path / "QM1_DLQ.2.dmp")])
    n = len(_rows(DATASETS / "dlq_aix.dmp"))
    result = export_dmpmqmsg(df, tmp_path / "once.dmp")
    assert (result.selected, result.written, result.duplicates) == (2 * n, n, n)
    assert "duplicate" in result.to_text()
    assert export_dmpmqmsg(df, tmp_path / "twice.dmp", dedupe=False).written == 2 * n


def test_incomplete_messages_are_refused_with_the_reason(spark, tmp_path):
    """A truncated MQDLH, bad hex: not written, counted, the issue named."""
    for name, reason in (("raw_mqdlh_trunc_mid.bin", "truncated"),
                         ("dmpmqmsg_invalid_hex.dmp", "unreadable")):
        rows = _rows(CORPUS / name)
        result = export_dmpmqmsg(load_capture(spark, str(CORPUS / name)), tmp_path / "x.dmp")
        assert result.skipped.get(reason, 0) >= 1, result.to_text()
        assert result.written + sum(result.skipped.values()) == result.selected == len(rows)
        assert len(_rows(tmp_path / "x.dmp")) == result.written
        assert name in result.to_text()


def test_missing_columns_and_unknown_reasons_are_errors(spark, tmp_path):
    df = load_capture(spark, str(DATASETS / "dlq_aix.dmp"), columns=["source", "md"])
    with pytest.raises(ExportError, match="message_number"):
        export_dmpmqmsg(df, tmp_path / "x.dmp")
    assert not (tmp_path / "x.dmp").exists()
    assert reason_codes(["2053", "MQRC_Q_FULL", "mqfb_expiration"]) == [2053, 2053, 258]
    with pytest.raises(UsageError, match="MQRC_Q_FULLL"):
        reason_codes(["MQRC_Q_FULLL"])
    assert set(EXPORT_COLUMNS) <= set(load_capture(spark, str(DATASETS / "dlq_aix.dmp")).columns)
