"""Capture readers: format sniffing, provenance, file handling, the oddities of
dmpmqmsg and amqsbcg files (docs/capture-formats.md), raw captures and their
splitting, header chains (dlqlens/mq/chaining.py; IBM MQ "Encoding (MQLONG)",
"CodedCharSetId (MQLONG)" and "Format (MQCHAR8)" of each header) and timestamps
(IBM MQ, MQMD "PutDate (MQCHAR8)" and "PutTime (MQCHAR8)").
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import struct

import numpy as np
import pyarrow as pa
import pytest
from tests.builders import (codes, dlh_fields, dlq_message, issue, md_fields, plain_message,
                      read_rows, write_capture)

from dlqlens.capture import amqsbcg, dmpmqmsg, raw
from dlqlens.capture.message import CaptureMessage
from dlqlens.capture.reader import (ReadOptions, ReadStats, plan_pieces, read_capture,
                                    read_piece)
from dlqlens.capture.registry import FORMATS, detect_format
from dlqlens.capture.slices import Slice
from dlqlens.decode.schema import message_schema
from dlqlens.errors import UsageError
from dlqlens.mq.structs import MQDLH, MQMDE, MQRFH2, MQTM, MQXQH

UTC = dt.timezone.utc


def three_messages():
    return [dlq_message(b"first", dlh={"Reason": 2053}),
            dlq_message(b"second message", dlh={"Reason": 2035, "DestQName": "Q.TWO"}),
            dlq_message(b"", dlh={"Reason": 2085, "DestQName": "Q.THREE"})]


# --------------------------------------------------------------------------
# registry and sniffing
# --------------------------------------------------------------------------

def test_registry_lists_every_capture_module_with_a_reader():
    import importlib
    import pkgutil

    import dlqlens.capture as pkg

    def format_module(func):
        """The module or package of dlqlens.capture that ``func`` belongs to
        (a text format is a package: dlqlens.capture.dmpmqmsg.fast -> dmpmqmsg)."""
        return importlib.import_module(".".join(func.__module__.split(".")[:3]))

    with_reader = set()
    for info in pkgutil.iter_modules(pkg.__path__):
        mod = importlib.import_module(f"dlqlens.capture.{info.name}")
        if callable(getattr(mod, "sniff", None)):
            with_reader.add(mod)
    registered = {format_module(f.read) for f in FORMATS.values()}
    assert with_reader == registered
    assert list(FORMATS) == ["raw", "dmpmqmsg", "amqsbcg", "pcap", "ispf", "xxd", "hexdump-c", "od",
                            "hex-stream"]
    for f in FORMATS.values():
        assert format_module(f.read) is format_module(f.write) is format_module(f.sniff) \
            is format_module(f.plan)


@pytest.mark.parametrize("fmt, kw", [
    ("raw", {}), ("raw", {"index": False}), ("dmpmqmsg", {}), ("dmpmqmsg", {"ascii_column": True}),
    ("amqsbcg", {}), ("amqsbcg", {"dlh_block": True}),
])
def test_auto_detects_each_format(tmp_path, fmt, kw):
    p = write_capture(tmp_path / "capture.dat", fmt, three_messages(), **kw)
    assert detect_format(str(p)) == fmt
    rows = read_rows(p)
    assert [r["capture_format"] for r in rows] == [fmt] * 3
    assert [r["dlh"]["Reason"] for r in rows] == [2053, 2035, 2085]


def test_auto_detects_a_single_message_raw_file_in_either_layout(tmp_path):
    for bo, codec in (("<", "latin-1"), (">", "cp500")):
        m = dlq_message(b"lone", md_byteorder=bo, md_codec=codec)
        p = tmp_path / f"single{bo == '>'}.bin"
        raw.write_single(p, m)
        assert detect_format(str(p)) == "raw"
        (row,) = read_rows(p)
        assert row["layout"]["md_byte_order"] == ("big" if bo == ">" else "little")
        assert row["layout"]["md_charset"] == ("cp500" if codec == "cp500" else "latin-1")
        assert row["payload"] == b"lone" and row["source_offset"] == 0


def test_auto_detects_headerless_dmpmqmsg_and_bannerless_amqsbcg(tmp_path):
    # dmpmqmsg -dH: no '* QLOAD' banner, the file starts with attribute lines
    text = dmpmqmsg.format_message(dlq_message())
    p = tmp_path / "noheader.qld"
    p.write_text(text)
    assert detect_format(str(p)) == "dmpmqmsg"
    # amqsbcg output pasted without its 'AMQSBCG0 - starts here' banner
    text = amqsbcg.format_message(1, dlq_message())
    p2 = tmp_path / "pasted.txt"
    p2.write_text("some notes from the incident\n" + text + " No more messages\n")
    assert detect_format(str(p2)) == "amqsbcg"
    rows = read_rows([p, p2])
    assert [r["capture_format"] for r in rows] == ["dmpmqmsg", "amqsbcg"]
    assert [r["payload"] for r in rows] == [b"ORDER 42", b"ORDER 42"]


def test_explicit_format_overrides_sniffing(tmp_path):
    p = write_capture(tmp_path / "x.raw", "raw", three_messages())
    assert len(read_rows(p, format="raw")) == 3
    assert len(read_rows(p, format="RAW")) == 3


# --------------------------------------------------------------------------
# provenance, several messages, files
# --------------------------------------------------------------------------

def test_raw_provenance(tmp_path):
    ms = three_messages()
    p = write_capture(tmp_path / "dlq.raw", "raw", ms)
    rows = read_rows(p)
    assert [r["source"] for r in rows] == [str(p)] * 3
    assert [r["message_number"] for r in rows] == [1, 2, 3]
    expected, pos = [], 16
    for m in ms:
        expected.append(pos)
        pos += 4 + len(m.md_bytes()) + len(m.data)
    assert [r["source_offset"] for r in rows] == expected
    assert [r["source_line"] for r in rows] == [None] * 3
    blob = p.read_bytes()
    for r, m in zip(rows, ms):  # the offset points at the record's length prefix
        off = r["source_offset"]
        assert struct.unpack(">I", blob[off:off + 4])[0] == 364 + len(m.data)
        assert blob[off + 4:off + 8] == b"MD  "


def test_dmpmqmsg_provenance(tmp_path):
    p = write_capture(tmp_path / "dlq.dmp", "dmpmqmsg", three_messages())
    rows = read_rows(p)
    lines = p.read_text().splitlines()
    starts = [i for i, t in enumerate(lines, 1) if t.startswith("A VER")]
    assert [r["source_line"] for r in rows] == starts
    assert [r["message_number"] for r in rows] == [1, 2, 3]
    blob = p.read_bytes()
    for r in rows:
        assert blob[r["source_offset"]:r["source_offset"] + 5] == b"A VER"


def test_amqsbcg_provenance(tmp_path):
    p = write_capture(tmp_path / "dlq.txt", "amqsbcg", three_messages())
    rows = read_rows(p)
    lines = p.read_text().splitlines()
    starts = [i for i, t in enumerate(lines, 1) if "MQGET of message number" in t]
    assert len(starts) == 3
    assert [r["source_line"] for r in rows] == starts
    blob = p.read_bytes()
    for n, r in enumerate(rows, 1):
        at = r["source_offset"]
        assert blob[at:].startswith(f" MQGET of message number {n},".encode())
    assert [r["payload"] for r in rows] == [b"first", b"second message", b""]


@pytest.mark.parametrize("fmt", ["dmpmqmsg", "amqsbcg"])
def test_crlf_files_read_like_lf_files(tmp_path, fmt):
    ms = three_messages()
    lf = read_rows(write_capture(tmp_path / "lf.txt", fmt, ms))
    crlf_path = write_capture(tmp_path / "crlf.txt", fmt, ms, newline="\r\n")
    assert b"\r\n" in crlf_path.read_bytes()
    crlf = read_rows(crlf_path)
    for a, b in zip(lf, crlf):
        for k in ("md", "dlh", "payload", "payload_text", "decode_status", "source_line"):
            assert a[k] == b[k], k
    assert [r["decode_status"] for r in crlf] == ["ok"] * 3
    assert crlf[1]["source_offset"] > lf[1]["source_offset"]  # two bytes per line end


def test_directory_glob_and_list_of_paths(tmp_path):
    d = tmp_path / "dlq"
    (d / "sub").mkdir(parents=True)
    write_capture(d / "b.raw", "raw", three_messages()[:2])
    write_capture(d / "a.dmp", "dmpmqmsg", three_messages()[:1])
    write_capture(d / "sub" / "c.txt", "amqsbcg", three_messages())
    write_capture(d / ".hidden.raw", "raw", three_messages())
    rows = read_rows(d)
    assert [(os.path.relpath(r["source"], d), r["message_number"]) for r in rows] == [
        ("a.dmp", 1), ("b.raw", 1), ("b.raw", 2),
        ("sub/c.txt", 1), ("sub/c.txt", 2), ("sub/c.txt", 3)]
    res = read_capture(str(d / "*.raw"))
    assert res.stats.files == 1 and len(res) == 2
    res = read_capture([d / "sub" / "c.txt", str(d / "a.*")])
    assert [r["capture_format"] for r in res.table.to_pylist()] == ["amqsbcg"] * 3 + ["dmpmqmsg"]
    assert res.stats.files == 2


def test_result_table_has_the_message_schema(tmp_path):
    res = read_capture(write_capture(tmp_path / "x.raw", "raw", three_messages()))
    assert res.table.schema == message_schema()
    assert len(res) == 3
    assert list(res.to_pandas()["message_number"]) == [1, 2, 3]


@pytest.mark.parametrize("fmt", ["raw", "dmpmqmsg", "amqsbcg"])
def test_batch_size_bounds_the_record_batches(tmp_path, fmt):
    ms = [dlq_message(f"m{i}".encode()) for i in range(7)]
    p = write_capture(tmp_path / f"many.{fmt}", fmt, ms)
    res = read_capture(p, batch_size=3)
    assert [b.num_rows for b in res.table.to_batches()] == [3, 3, 1]
    rows = res.table.to_pylist()
    assert [r["message_number"] for r in rows] == list(range(1, 8))
    assert [r["payload"] for r in rows] == [f"m{i}".encode() for i in range(7)]


# --------------------------------------------------------------------------
# dmpmqmsg oddities (docs/capture-formats.md, "dmpmqmsg / QLOAD files")
# --------------------------------------------------------------------------

# A constructed dmpmqmsg file: one DLQ message, default options; data written with -dA
DMP_ATTRS = """\
* QLOAD Version:8.0 Created:Fri Mar 15 10:20:00 2024
* Qmgr  = QM1
* Queue = SYSTEM.DEAD.LETTER.QUEUE

A VER 2
A RPT 0
A MST 8
A EXP -1
A FDB 0
A ENC 546
A CCS 1208
A FMT MQDEAD  
A PRI 0
A PER 1
A MSI 414D5120514D3120202020202020202065F41A2001000403
A COI 000000000000000000000000000000000000000000000000
A BOC 0
A RTQ                                                 
A RTM QM2                                             
A USR appuser     
A ACC 0431303030000000000000000000000000000000000000000000000000000006
A AIX 2020202020202020202020202020202020202020202020202020202020202020
A PAT 6
A PAN order-service               
A PTD 20240315
A PTT 10153012
A AOX 20202020
A GRP 000000000000000000000000000000000000000000000000
A MSQ 1
A OFF 0
A MSF 0
A ORL -1
"""  # noqa: W291 (dmpmqmsg keeps trailing blanks)

DATA_X = """\
X 444C482001000000050800004150502E494E20202020202020
X 20202020202020202020202020202020202020202020202020
X 20202020202020202020514D31202020202020202020202020
X 20202020202020202020202020202020202020202020202020
X 202020202020202022020000B80400004D5153545220202006
X 000000616D71726D7070612020202020202020202020202020
X 202020202020323032343033313531303135333135374F5244
X 4552203432
"""
DATA_DA = """\
X 444C482001000000050800004150502E494E20202020202020  <DLH ........APP.IN       >
X 20202020202020202020202020202020202020202020202020  <                         >
X 20202020202020202020514D31202020202020202020202020  <          QM1            >
X 20202020202020202020202020202020202020202020202020  <                         >
X 202020202020202022020000B80400004D5153545220202006  <        ".......MQSTR   .>
X 000000616D71726D7070612020202020202020202020202020  <...amqrmppa              >
X 202020202020323032343033313531303135333135374F5244  <      2024031510153157ORD>
X 4552203432                                          <ER 42>
"""
DATA_DA_S = """\
S "DLH "
X 0100000005080000
S "APP.IN                                          "
S "QM1                                             "
X 22020000B8040000
S "MQSTR   "
X 06000000
S "amqrmppa                    2024031510153157ORDE"
S "R 42"
"""
DATA_DP_S = """\
S "DLH "
X 0100000005080000
S "APP.IN                                          "
S "QM1                                             "
S "~""
X 020000B8040000
S "MQSTR   "
X 06000000
S "amqrmppa                    2024031510153157ORDE"
S "R 42"
"""


def _check_spec_example(row):
    assert row["decode_status"] == "ok", row["decode_issues"]
    assert row["decode_issues"] == []
    assert row["md"]["Version"] == 2 and row["md"]["Format"] == "MQDEAD"
    assert row["md"]["MsgId"] == bytes.fromhex("414D5120514D3120202020202020202065F41A2001000403")
    assert row["md"]["AccountingToken"][0] == 4 and row["md"]["AccountingToken"][-1] == 6
    assert row["md"]["ReplyToQMgr"] == "QM2" and row["md"]["UserIdentifier"] == "appuser"
    assert row["md"]["PutApplName"] == "order-service" and row["md"]["OriginalLength"] == -1
    assert row["dlh"] == {"StrucId": "DLH", "Version": 1, "Reason": 2053, "DestQName": "APP.IN",
                          "DestQMgrName": "QM1", "Encoding": 546, "CodedCharSetId": 1208,
                          "Format": "MQSTR", "PutApplType": 6, "PutApplName": "amqrmppa",
                          "PutDate": "20240315", "PutTime": "10153157"}
    assert row["reason_name"] == "MQRC_Q_FULL"
    assert row["payload"] == b"ORDER 42" and row["payload_text"] == "ORDER 42"
    assert row["data_length"] == 180 and row["payload_length"] == 8


@pytest.mark.parametrize("data", [DATA_X, DATA_DA, DATA_DA_S, DATA_DP_S],
                         ids=["X", "-da", "-dA", "-dp"])
def test_dmpmqmsg_spec_example_in_every_data_layout(tmp_path, data):
    p = tmp_path / "spec.qld"
    p.write_text(DMP_ATTRS + data + "\n")
    assert detect_format(str(p)) == "dmpmqmsg"
    (row,) = read_rows(p)
    _check_spec_example(row)
    assert row["source_line"] == 5


def test_dmpmqmsg_s_line_escapes(tmp_path):
    p = tmp_path / "s.qld"
    p.write_text('A FMT MQSTR   \nA CCS 819\nS "say ~"hi~" ~~ 100%"\nS "~~"\nS "x"\nS \n'
                 'S unquoted tail   \n')
    (row,) = read_rows(p)
    assert row["payload"] == b'say "hi" ~ 100%~xunquoted tail'
    assert row["md"]["Version"] == 1
    # the attribute lines dmpmqmsg always writes are missing (issue 19): null, elided
    assert row["decode_status"] == "truncated" and row["md"]["MsgId"] is None
    assert {i["code"] for i in row["decode_issues"]} == {"elided"}


def test_dmpmqmsg_t_lines_are_lossy(tmp_path):
    p = tmp_path / "t.qld"
    p.write_text("A VER 2\nA FMT MQSTR   \nA CCS 1208\nT first line\nT \nT third\n")
    (row,) = read_rows(p)
    assert row["payload"] == b"first line\n\nthird\n"
    assert row["payload_text"] == "first line\n\nthird\n"
    # a warning, not a failure (the missing attribute lines are: issue 19)
    assert {i["code"] for i in row["decode_issues"]} == {"lossy_capture", "elided"}
    i = issue(row, "lossy_capture")
    assert i["field"] == "T line" and i["line"] == 1
    assert "T lines" in i["found"] and str(p) in i["message"]


def test_dmpmqmsg_n_line_means_default_descriptor(tmp_path):
    p = tmp_path / "n.qld"
    p.write_text("* QLOAD Version:8.0 Created:Fri Mar 15 10:20:00 2024\n\nN\nX 48656C6C6F\n\n"
                 "N\nX 576F726C64\n")
    rows = read_rows(p)
    assert [r["payload"] for r in rows] == [b"Hello", b"World"]
    assert [r["source_line"] for r in rows] == [3, 6]
    for r in rows:
        assert r["md"]["StrucId"] == "MD" and r["md"]["Version"] == 1
        assert r["md"]["MsgType"] == 8 and r["md"]["Expiry"] == -1
        assert r["md"]["Format"] == "" and r["md"]["GroupId"] is None
        assert r["headers"] == [] and r["dlh"] is None


def test_dmpmqmsg_index_lines_and_missing_ver(tmp_path):
    m1 = dlq_message(b"one", md={"Version": 1})
    m2 = dlq_message(b"two", md={"Version": 2, "MsgSeqNumber": 5})
    text = ("* QLOAD Version:8.0 Created:Fri Mar 15 10:20:00 2024\n\n"
            + dmpmqmsg.format_message(m1, index=1) + dmpmqmsg.format_message(m2, index=2))
    assert "A VER" not in text.split("* Index 2")[0]
    p = tmp_path / "idx.qld"
    p.write_text(text)
    rows = read_rows(p)
    assert [r["message_number"] for r in rows] == [1, 2]
    assert [r["payload"] for r in rows] == [b"one", b"two"]
    assert rows[0]["md"]["Version"] == 1 and rows[0]["layout"]["md_version"] == 1
    assert rows[0]["md"]["MsgSeqNumber"] is None and rows[0]["md"]["GroupId"] is None
    assert rows[1]["md"]["Version"] == 2 and rows[1]["md"]["MsgSeqNumber"] == 5
    lines = text.splitlines()
    assert [r["source_line"] for r in rows] == [lines.index("* Index 1") + 2,
                                                lines.index("* Index 2") + 2]


def test_dmpmqmsg_character_attributes_aid_aod(tmp_path):
    p = tmp_path / "c.qld"
    p.write_text("A FMT MQSTR   \nA AID my identity data\nA AOD abcd\nA USR\nX 41\n")
    (row,) = read_rows(p)
    assert row["md"]["ApplIdentityData"] == "my identity data"
    assert row["md"]["ApplOriginData"] == "abcd"
    assert row["md"]["UserIdentifier"] == ""
    # AID and AOD stand for AIX and AOX; the other lines are missing (issue 19)
    elided = {i["field"] for i in row["decode_issues"] if i["code"] == "elided"}
    assert "md.ApplIdentityData" not in elided and "md.ApplOriginData" not in elided
    assert "md.MsgId" in elided and row["decode_status"] == "truncated"


def test_dmpmqmsg_empty_message_is_one_x_line(tmp_path):
    m = plain_message(b"")
    text = dmpmqmsg.format_message(m)
    assert "\nX \n" in text
    p = tmp_path / "e.qld"
    p.write_text(text)
    (row,) = read_rows(p)
    assert row["payload"] == b"" and row["data_length"] == 0
    assert row["decode_status"] == "ok"


# --------------------------------------------------------------------------
# amqsbcg oddities (docs/capture-formats.md, "amqsbcg output")
# --------------------------------------------------------------------------

def _old_layout(text: str) -> str:
    """Turn writer output into the oldest layout: no CompCode, 'length - N bytes'."""
    text = re.sub(r", CompCode:0 Reason:0", "", text)
    return re.sub(r"length - (\d+) of \1 bytes", r"length - \1 bytes", text)


def test_amqsbcg_old_layout(tmp_path):
    ms = three_messages()
    text = "".join(amqsbcg.format_message(i, m, compcode=False) for i, m in enumerate(ms, 1))
    text = re.sub(r"(?m)^([0-9A-F]{8}:)", r" \1", text)  # 2003-era: a blank before the offset
    p = tmp_path / "old.txt"
    p.write_text("AMQSBCG0 - starts here\n" + _old_layout(text) + " No more messages\n")
    assert "\n 00000000:  444C 4820" in p.read_text()
    assert "CompCode" not in p.read_text()
    assert re.findall(r"length - \d+ .*", p.read_text()) == [
        "length - 177 bytes", "length - 186 bytes", "length - 172 bytes"]
    rows = read_rows(p)
    assert [r["dlh"]["Reason"] for r in rows] == [2053, 2035, 2085]
    assert [r["payload"] for r in rows] == [b"first", b"second message", b""]
    assert [r["decode_status"] for r in rows] == ["ok"] * 3
    assert not any(r["layout"]["dlh_reconstructed"] for r in rows)


def test_amqsbcg_934_layout_with_dlh_block_and_summary(tmp_path):
    ms = three_messages()
    p = write_capture(tmp_path / "new.txt", "amqsbcg", ms, dlh_block=True)
    text = p.read_text()
    assert text.count("****Dead Letter Header****") == 3 and "****   Summary      ****" in text
    assert "444C 4820" not in text  # the DLH bytes are not in the dump
    rows = read_rows(p)
    assert [r["dlh"]["Reason"] for r in rows] == [2053, 2035, 2085]
    assert [r["dlh"]["DestQName"] for r in rows] == ["APP.IN", "Q.TWO", "Q.THREE"]
    assert [r["payload"] for r in rows] == [b"first", b"second message", b""]
    assert [r["data_length"] for r in rows] == [177, 186, 172]
    for r in rows:
        assert r["layout"]["dlh_reconstructed"] is True
        assert r["decode_status"] == "ok"
        i = issue(r, "dlh_reconstructed")
        assert i["field"] == "dlh" and "rebuilt" in i["message"]


def test_amqsbcg_truncated_browse(tmp_path):
    """'length - N of M bytes': amqsbcg showed only the first N of M bytes."""
    m = dlq_message(bytes(range(256)) * 2)  # 172 + 512 = 684 bytes
    shown = 208  # 13 dump lines of 16 bytes
    keep = [t for t in amqsbcg.format_message(1, m).splitlines()
            if not re.match(r"^([0-9A-F]{8}):", t) or int(t[:8], 16) < shown]
    text = "\n".join(keep).replace("length - 684 of 684 bytes", f"length - {shown} of 684 bytes")
    p = tmp_path / "trunc.txt"
    p.write_text(text + "\n No more messages\n")
    (row,) = read_rows(p)
    assert row["decode_status"] == "truncated"
    assert row["data_truncated"] is True
    assert row["data_length"] == 684
    assert row["payload_length"] == 512
    assert row["payload"] == (bytes(range(256)) * 2)[:shown - 172]
    assert row["dlh"]["Reason"] == 2053
    i = issue(row, "data_truncated")
    assert i["expected"] == "684 bytes" and i["found"] == "208 bytes"


def test_amqsbcg_with_shell_prompts_and_two_browse_runs(tmp_path):
    run1 = [dlq_message(b"run one a"), dlq_message(b"run one b")]
    run2 = [dlq_message(b"run two", dlh={"Reason": 2087})]
    write_capture(tmp_path / "r1", "amqsbcg", run1)
    write_capture(tmp_path / "r2", "amqsbcg", run2, dlh_block=True)
    text = ("$ amqsbcg SYSTEM.DEAD.LETTER.QUEUE QM1\n" + (tmp_path / "r1").read_text()
            .replace(" MQDISC\n", " MQDISC$ \n") + "$ echo again\nagain\n$ amqsbcg DLQ QM1\n"
            + (tmp_path / "r2").read_text() + "$ exit\n")
    p = tmp_path / "session.log"
    p.write_text(text)
    assert detect_format(str(p)) == "amqsbcg"
    rows = read_rows(p)
    assert [r["payload"] for r in rows] == [b"run one a", b"run one b", b"run two"]
    assert [r["message_number"] for r in rows] == [1, 2, 3]
    assert [r["dlh"]["Reason"] for r in rows] == [2053, 2053, 2087]
    assert [r["layout"]["dlh_reconstructed"] for r in rows] == [False, False, True]
    assert [r["decode_status"] for r in rows] == ["ok"] * 3


def test_amqsbcg_blank_line_every_60_lines_and_properties_block(tmp_path):
    m = dlq_message(bytes(range(256)) * 8)  # long dump
    text = amqsbcg.format_message(1, m)
    lines = text.splitlines()
    first = next(i for i, t in enumerate(lines) if t.startswith("00000000:"))
    for k in range(first + 29, len(lines), 61):  # amqsbcg's page breaks
        lines.insert(k, " ")
    at = lines.index(" ****   Message      ****") if " ****   Message      ****" in lines \
        else lines.index("****   Message      ****")
    lines[at:at] = [" ", "****Message properties****", "  mcd.Msd : 'jms_text'",
                    "  usr.Colour : 'blue'"]
    p = tmp_path / "long.txt"
    p.write_text("\n".join(lines) + "\n No more messages\n")
    (row,) = read_rows(p)
    assert row["decode_status"] == "ok", row["decode_issues"]
    assert row["payload"] == bytes(range(256)) * 8


# --------------------------------------------------------------------------
# raw captures
# --------------------------------------------------------------------------

def test_raw_with_and_without_index_read_the_same(tmp_path):
    ms = three_messages()
    a = read_rows(write_capture(tmp_path / "idx.raw", "raw", ms))
    b_path = write_capture(tmp_path / "noidx.raw", "raw", ms, index=False)
    assert not b_path.read_bytes().endswith(raw.INDEX_MAGIC)
    assert (tmp_path / "idx.raw").read_bytes().endswith(raw.INDEX_MAGIC)
    b = read_rows(b_path)
    for x, y in zip(a, b):
        for k in ("md", "dlh", "payload", "source_offset", "message_number", "decode_status"):
            assert x[k] == y[k]
    assert [r["payload"] for r in a] == [b"first", b"second message", b""]


def test_raw_file_of_zero_records(tmp_path):
    p = write_capture(tmp_path / "none.raw", "raw", [])
    res = read_capture(p)
    assert len(res) == 0 and res.stats.framed == 0 and res.stats.files == 1


def test_raw_plan_splits_at_record_boundaries(tmp_path):
    ms = [dlq_message(bytes([i]) * (i * 37 % 300), dlh={"Reason": 2000 + i}) for i in range(40)]
    p = write_capture(tmp_path / "big.raw", "raw", ms)
    whole = read_capture(p).table
    slices = raw.plan(str(p), target_bytes=4000)
    assert len(slices) > 3
    blob = p.read_bytes()
    offsets = set(whole.column("source_offset").to_pylist())
    for a, b in zip(slices[:-1], slices[1:]):
        assert a.stop == b.start and b.start in offsets  # contiguous, at record starts
    assert slices[0].start == 16
    assert slices[0].first_number == 1
    assert slices[-1].stop == len(blob) - len(raw.INDEX_MAGIC) - 8 - 8 * 40  # index start
    parts = []
    for s in slices:
        for fr in raw.read_raw(str(p), piece=s):
            from dlqlens.decode.records import decode_frames
            parts.append(decode_frames(fr))
    joined = pa.Table.from_batches(parts)
    assert joined.to_pylist() == whole.to_pylist()
    # the same through the reader's own planning (split_bytes) and read_piece
    opts = ReadOptions(split_bytes=4000)
    pieces = plan_pieces(str(p), opts)
    assert [(x.slice.start, x.slice.stop, x.slice.first_number) for x in pieces] == \
        [(s.start, s.stop, s.first_number) for s in slices]
    stats = ReadStats()
    batches = [b for piece in pieces for b in read_piece(piece, opts, stats)]
    assert pa.Table.from_batches(batches).to_pylist() == whole.to_pylist()
    assert stats.framed == stats.rows == 40
    assert [r["dlh"]["Reason"] for r in whole.to_pylist()] == [2000 + i for i in range(40)]


def test_raw_plan_of_a_small_or_unindexed_file_is_one_slice(tmp_path):
    ms = [dlq_message(b"x" * 100) for _ in range(20)]
    p = write_capture(tmp_path / "noidx.raw", "raw", ms, index=False)
    assert raw.plan(str(p), target_bytes=1000) == [raw.Slice(str(p))]
    p2 = write_capture(tmp_path / "idx.raw", "raw", ms)
    assert raw.plan(str(p2)) == [raw.Slice(str(p2))]


def test_raw_plan_does_not_trust_an_index_that_disagrees_with_the_records(tmp_path):
    from dlqlens.errors import CaptureError

    ms = [dlq_message(b"m" * 200, dlh={"Reason": 2000 + i}) for i in range(30)]
    p = write_capture(tmp_path / "big.raw", "raw", ms)
    good = raw.plan(str(p), target_bytes=2000)
    assert len(good) > 3
    whole = read_capture(p).table.to_pylist()
    # the data shifted by 16 bytes (a second header): the index points
    # between records, the cuts do not check out, the file is one slice
    blob = p.read_bytes()
    shifted = tmp_path / "shifted.raw"
    shifted.write_bytes(blob[:16] + blob[:16] + blob[16:])
    assert raw.plan(str(shifted), target_bytes=2000) == [raw.Slice(str(shifted))]
    _, rows = _split_rows(shifted, "raw", 2000)
    assert rows == read_capture(shifted).table.to_pylist() and len(rows) == 31
    assert rows[0]["decode_status"] == "bad_framing"
    # one record inside a slice made longer: the cuts check out, the slice holding
    # it refuses, naming the record; read whole, the file is framed by its prefixes
    data = bytearray(blob)
    with open(p, "rb") as fh:
        offs = raw._index_from_file(fh, len(blob))
    off = int(offs[good[1].first_number])  # the second record of the second slice
    assert good[1].start < off < good[1].stop
    length = int.from_bytes(data[off:off + 4], "big")
    data[off:off + 4] = (length + 8).to_bytes(4, "big")
    damaged = tmp_path / "damaged.raw"
    damaged.write_bytes(bytes(data))
    assert raw.plan(str(damaged), target_bytes=2000) == \
        [dataclasses.replace(s, path=str(damaged)) for s in good]
    with pytest.raises(CaptureError, match=rf"damaged.raw: offset {off}: record length prefix: "
                                           rf"expected {length}.*found {length + 8}.*splitBytes"):
        _split_rows(damaged, "raw", 2000)
    assert len(read_capture(damaged).table) >= 29 and len(whole) == 30


def test_raw_slice_reads_its_own_part_of_the_index(tmp_path):
    """A planned slice reads only its entries of the index; entries that do
    not fit the slice (a plan from before the file changed, a wrong count)
    send it back to the whole index, with the same rows."""
    ms = [dlq_message(b"m" * (100 + i), dlh={"Reason": 2000 + i}) for i in range(30)]
    p = write_capture(tmp_path / "big.raw", "raw", ms)
    pieces = raw.plan(str(p), target_bytes=2000)
    assert len(pieces) > 3 and sum(s.messages for s in pieces) == 30
    with open(p, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        whole = raw._index_from_file(fh, size)
        for s in pieces:
            part = raw._index_part(fh, size, s)
            assert part.tolist() == whole[s.first_number - 1:][:s.messages].tolist()
        wrong = dataclasses.replace(pieces[1], messages=pieces[1].messages + 1)
        assert raw._index_part(fh, size, wrong) is None
        shifted = dataclasses.replace(pieces[1], start=pieces[1].start + 4)
        assert raw._index_part(fh, size, shifted) is None

    def numbers(s):
        return [(f.message_number.tolist(), f.starts.tolist()) for f in raw.read_raw(str(p), piece=s)]

    assert numbers(dataclasses.replace(pieces[1], messages=pieces[1].messages + 1)) == \
        numbers(pieces[1])


def _split_rows(path, fmt, split_bytes):
    """(pieces, rows) of ``path`` read as the Spark source reads it."""
    opts = ReadOptions(format=fmt, split_bytes=split_bytes)
    pieces = plan_pieces(str(path), opts)
    return pieces, [r for p in pieces for b in read_piece(p, opts) for r in b.to_pylist()]


def _text_files():
    from tests.conftest import DATASETS, REAL

    files = sorted(DATASETS.glob("*.dmp")) + sorted(DATASETS.glob("*.bcg"))
    if REAL.is_dir():  # (a required, missing folder stops the run: tests/conftest.py)
        files += sorted((REAL / "amqsbcg").glob("*.txt"))
    return files


@pytest.mark.parametrize("path", _text_files(), ids=lambda p: p.name)
def test_text_plan_cuts_at_every_message_boundary_and_numbers_run_on(path):
    fmt = detect_format(str(path))
    whole = read_capture(path).table.to_pylist()
    pieces, rows = _split_rows(path, fmt, 1)  # a cut before every unit
    pieces = [p.slice for p in pieces]
    if len(whole) > 1:
        assert len(pieces) > 1
    assert rows == whole
    assert sum(p.messages for p in pieces) == len(whole)
    for a, b in zip(pieces[:-1], pieces[1:]):
        assert a.stop == b.start and b.first_number == a.first_number + a.messages
    blob = path.read_bytes()
    for p in pieces:  # each slice starts where its first line starts
        assert p.start == 0 or blob[p.start - 1:p.start] == b"\n"
        assert blob[:p.start].count(b"\n") == p.first_line - 1
    assert pieces[-1].stop == len(blob)


@pytest.mark.parametrize("fmt", ["dmpmqmsg", "amqsbcg"])
def test_text_plan_of_a_large_capture_with_damage(tmp_path, fmt):
    ms = [dlq_message(bytes([65 + i % 26]) * (i * 53 % 900), dlh={"Reason": 2000 + i})
          for i in range(300)]
    p = write_capture(tmp_path / f"big.{fmt}", fmt, ms)
    text = p.read_bytes().split(b"\n")
    # damage in the middle: a stray line, a line lost, bad hex
    text.insert(len(text) // 3, b"garbage that is no line of either format")
    del text[len(text) // 2]
    k = next(i for i in range(2 * len(text) // 3, len(text)) if text[i].strip().startswith(
        b"X " if fmt == "dmpmqmsg" else b"00000000:"))
    text[k] = text[k].replace(b"4", b"Z", 1)
    p.write_bytes(b"\n".join(text))
    whole = read_capture(p, format=fmt).table.to_pylist()
    assert len(whole) >= 300
    for split_bytes in (1, 5000, 40000):
        pieces, rows = _split_rows(p, fmt, split_bytes)
        assert rows == whole, split_bytes
    assert len(pieces) > 3


def test_text_plan_of_a_small_file_is_one_slice_and_not_read(tmp_path):
    p = write_capture(tmp_path / "s.dmp", "dmpmqmsg", three_messages())
    assert dmpmqmsg.plan(str(p)) == [Slice(str(p))]
    # without splitText a large text file is one piece, planned without reading it
    opts = ReadOptions(split_bytes=1, split_text=False)
    assert plan_pieces(str(p), opts) == [plan_pieces(str(p), ReadOptions())[0]]
    assert ReadOptions.from_options({"splitText": "false"}).split_text is False
    with pytest.raises(UsageError, match="splitText: expected true or false, found 'no'"):
        ReadOptions.from_options({"splitText": "no"})


def test_text_slice_that_frames_another_count_is_refused(tmp_path):
    from dlqlens.errors import CaptureError

    p = write_capture(tmp_path / "s.bcg", "amqsbcg", three_messages())
    size = p.stat().st_size
    wrong = Slice(str(p), 0, size, first_number=1, first_line=1, messages=2)
    with pytest.raises(CaptureError, match=r"planned as 2 message\(s\) from number 1, framed 3"):
        list(amqsbcg.read_amqsbcg(str(p), piece=wrong))


def test_raw_mixed_layouts_in_one_file(tmp_path):
    layouts = [("<", "latin-1"), (">", "latin-1"), ("<", "cp500"), (">", "cp500")]
    ms = [dlq_message(f"msg {i}".encode(), md_byteorder=bo, md_codec=c)
          for i, (bo, c) in enumerate(layouts)]
    rows = read_rows(write_capture(tmp_path / "mixed.raw", "raw", ms))
    assert [(r["layout"]["md_byte_order"], r["layout"]["md_charset"]) for r in rows] == [
        ("little", "latin-1"), ("big", "latin-1"), ("little", "cp500"), ("big", "cp500")]
    for r in rows:
        assert r["md"]["StrucId"] == "MD" and r["md"]["Format"] == "MQDEAD"
        assert r["md"]["ReplyToQMgr"] == "QM1" and r["md"]["Priority"] == 4
        assert r["dlh"]["Reason"] == 2053
    assert [r["payload"] for r in rows] == [f"msg {i}".encode() for i in range(4)]


# --------------------------------------------------------------------------
# header chains
# --------------------------------------------------------------------------

def test_dlh_then_xqh_then_payload(tmp_path):
    xqh = MQXQH.pack({"Version": 1, "RemoteQName": "REMOTE.Q", "RemoteQMgrName": "QM9",
                      "MsgDesc.StrucId": "MD  ", "MsgDesc.Version": 1, "MsgDesc.Encoding": 546,
                      "MsgDesc.CodedCharSetId": 819, "MsgDesc.Format": "MQSTR",
                      "MsgDesc.PutApplName": "sender", "MsgDesc.BackoutCount": 3,
                      "MsgDesc.MsgId": b"ID" * 12}, "<", "latin-1")
    m = dlq_message(xqh + b"hello xmit",
                    dlh={"Format": "MQXMIT", "Encoding": 546, "CodedCharSetId": 819,
                         "Reason": 2189})
    (row,) = read_rows(write_capture(tmp_path / "x.raw", "raw", [m]))
    assert row["decode_status"] == "ok"
    assert row["headers"] == ["MQDEAD", "MQXMIT"]
    assert [(h["offset"], h["length"], h["struc_id"]) for h in row["header_chain"]] == [
        (0, 172, "DLH "), (172, 428, "XQH ")]
    x = row["xqh"]
    assert x["RemoteQName"] == "REMOTE.Q" and x["RemoteQMgrName"] == "QM9"
    assert x["MsgDesc"]["StrucId"] == "MD" and x["MsgDesc"]["Format"] == "MQSTR"
    assert x["MsgDesc"]["BackoutCount"] == 3 and x["MsgDesc"]["PutApplName"] == "sender"
    assert x["MsgDesc"]["MsgId"] == b"ID" * 12
    assert row["payload"] == b"hello xmit" and row["payload_text"] == "hello xmit"
    assert (row["payload_format"], row["payload_encoding"], row["payload_ccsid"]) == \
        ("MQSTR", 546, 819)
    assert row["tm"] is None and row["rfh2"] is None


def _rfh2(folders, fmt="MQSTR", bo=">", ccsid=1208, nv_ccsid=1208):
    nv = b""
    nv_codec = "utf-8" if nv_ccsid == 1208 else ("utf-16-be" if bo == ">" else "utf-16-le")
    for f in folders:
        f = f.encode(nv_codec)
        f = f.ljust((len(f) + 3) // 4 * 4)
        nv += len(f).to_bytes(4, "big" if bo == ">" else "little") + f
    fixed = MQRFH2.pack({"Version": 2, "StrucLength": 36 + len(nv),
                         "Encoding": 273 if bo == ">" else 546, "CodedCharSetId": ccsid,
                         "Format": fmt, "NameValueCCSID": nv_ccsid}, bo, "latin-1")
    return fixed + nv


def test_dlh_then_rfh2_with_folders_then_string(tmp_path):
    folders = ["<mcd><Msd>jms_text</Msd></mcd>", "<jms><Dst>queue:///Q1</Dst><Pri>4</Pri></jms>",
               "<usr><Colour>blau \u00fc</Colour></usr>"]
    body = "JMS body \u20ac".encode("utf-8")
    m = dlq_message(_rfh2(folders) + body, encoding=273, ccsid=819,
                    dlh={"Format": "MQHRF2", "Encoding": 273, "CodedCharSetId": 1208})
    (row,) = read_rows(write_capture(tmp_path / "r.raw", "raw", [m]))
    assert row["decode_status"] == "ok", row["decode_issues"]
    assert row["headers"] == ["MQDEAD", "MQHRF2"]
    r = row["rfh2"]
    assert (r["StrucId"], r["Version"], r["Format"], r["NameValueCCSID"]) == \
        ("RFH", 2, "MQSTR", 1208)
    assert r["StrucLength"] == row["header_chain"][1]["length"] > 36
    assert r["NameValueData"] == folders
    assert row["payload"] == body and row["payload_text"] == "JMS body \u20ac"


@pytest.mark.parametrize("bo", [">", "<"])
def test_rfh2_folders_in_utf16_follow_the_header_byte_order(tmp_path, bo):
    folders = ["<mcd><Msd>jms_text</Msd></mcd>", "<usr><Stadt>K\u00f6ln</Stadt></usr>"]
    m = dlq_message(_rfh2(folders, bo=bo, nv_ccsid=1200) + b"body", encoding=546,
                    dlh={"Format": "MQHRF2", "Encoding": 273 if bo == ">" else 546})
    (row,) = read_rows(write_capture(tmp_path / "r16.raw", "raw", [m]))
    assert row["decode_status"] == "ok", row["decode_issues"]
    assert row["rfh2"]["NameValueCCSID"] == 1200
    assert row["rfh2"]["NameValueData"] == folders
    assert row["payload_text"] == "body"


@pytest.mark.parametrize("encoding, codec", [(273, "utf-16-be"), (785, "utf-16-be"),
                                             (546, "utf-16-le")])
def test_utf16_payload_text_follows_the_integer_encoding(tmp_path, encoding, codec):
    """IBM: UTF-16 character data is in the byte order of the integer encoding."""
    text = "Gr\u00fc\u00dfe \u2013 \u20ac 42"
    m = dlq_message(text.encode(codec),
                    dlh={"Format": "MQSTR", "CodedCharSetId": 1200, "Encoding": encoding})
    (row,) = read_rows(write_capture(tmp_path / "u16.raw", "raw", [m]))
    assert row["payload_text"] == text and row["decode_issues"] == []
    assert (row["payload_ccsid"], row["payload_encoding"]) == (1200, encoding)


@pytest.mark.parametrize("dlh_block", [False, True])
def test_amqsbcg_non_ascii_dlh_fields_in_utf8(tmp_path, dlh_block):
    m = dlq_message(b"x", dlh={"DestQName": "WARTESCHLANGE.\u00c4", "PutApplName": "pr\u00fcfer"},
                    ccsid=1208)
    (row,) = read_rows(write_capture(tmp_path / "u8.txt", "amqsbcg", [m], dlh_block=dlh_block))
    assert row["decode_status"] == "ok", row["decode_issues"]
    assert row["dlh"]["DestQName"] == "WARTESCHLANGE.\u00c4"
    assert row["dlh"]["PutApplName"] == "pr\u00fcfer"
    assert row["payload"] == b"x"


def test_inherited_ccsid_and_undefined_encoding(tmp_path):
    """DLH CodedCharSetId -2 (MQCCSI_INHERIT): the data after it has the DLH's
    own CCSID; DLH Encoding 0: the data keeps the DLH's encoding. An MQMD
    Encoding whose integer part is undefined: the DLH's byte order is taken
    from its Version, with a warning (IBM MQ "MQDLH - Dead-letter header", "Character
    set and encoding", and its "CodedCharSetId (MQLONG)"; dlqlens/mq/chaining.py)."""
    m = dlq_message("EBCDIC text".encode("cp500"), encoding=785, ccsid=500,
                    dlh={"Format": "MQSTR", "CodedCharSetId": -2, "Encoding": 0})
    (row,) = read_rows(write_capture(tmp_path / "inh.raw", "raw", [m]))
    assert row["dlh"]["CodedCharSetId"] == -2 and row["dlh"]["Encoding"] == 0
    assert (row["payload_ccsid"], row["payload_encoding"]) == (500, 785)
    assert row["payload_text"] == "EBCDIC text" and row["decode_issues"] == []
    m = dlq_message(b"undefined", encoding=273)
    m.md["Encoding"] = 0x100  # float part only: integer encoding undefined
    (row,) = read_rows(write_capture(tmp_path / "und.raw", "raw", [m]))
    assert row["dlh"]["Reason"] == 2053 and row["decode_status"] == "ok"
    assert codes(row) == ["encoding_undefined"]


def test_dlh_columns_do_not_leak_between_rows(tmp_path):
    """Rows without an MQDLH next to rows with one: no DLH-derived value."""
    ms = [plain_message(b"no dlh here"), dlq_message(b"dead", dlh={"Reason": 2035}),
          plain_message(b"nor here")]
    rows = read_rows(write_capture(tmp_path / "mix.raw", "raw", ms))
    assert [r["reason_name"] for r in rows] == [None, "MQRC_NOT_AUTHORIZED", None]
    assert [r["dlh_put_ts"] is None for r in rows] == [True, False, True]
    assert [r["dlh"] is None for r in rows] == [True, False, True]
    assert [r["tm"] for r in rows] == [None, None, None]
    assert [codes(r) for r in rows] == [[], [], []]


def test_dlh_then_trigger_message(tmp_path):
    tm = MQTM.pack({"Version": 1, "QName": "APP.Q", "ProcessName": "APP.PROC",
                    "TriggerData": "td", "ApplType": 6, "ApplId": "/opt/app/bin/server",
                    "EnvData": "ENV=1", "UserData": "user data"}, ">", "cp500")
    m = dlq_message(tm, encoding=785, ccsid=500, md_byteorder=">", md_codec="cp500",
                    dlh={"Reason": 265, "Format": "MQTRIG", "Encoding": 785,
                         "CodedCharSetId": 500, "DestQName": "SYSTEM.CICS.INITIATION.QUEUE",
                         "PutApplName": "RUNMQTRM"})
    for fmt in ("raw", "dmpmqmsg", "amqsbcg"):
        (row,) = read_rows(write_capture(tmp_path / f"t.{fmt}", fmt, [m]))
        assert row["decode_status"] == "ok", row["decode_issues"]
        assert row["reason_name"] == "MQFB_APPL_CANNOT_BE_STARTED"
        assert row["headers"] == ["MQDEAD", "MQTRIG"]
        assert row["tm"] == {"StrucId": "TM", "Version": 1, "QName": "APP.Q",
                             "ProcessName": "APP.PROC", "TriggerData": "td", "ApplType": 6,
                             "ApplId": "/opt/app/bin/server", "EnvData": "ENV=1",
                             "UserData": "user data"}
        assert row["payload"] == b"" and row["payload_length"] == 0
        assert [h["ccsid"] for h in row["header_chain"]] == [500, 500]


def test_md_then_mde_then_dlh(tmp_path):
    dlh = MQDLH.pack(dict(dlh_fields(Format="MQSTR", Encoding=546, CodedCharSetId=1208),
                          Version=1), "<", "latin-1")
    mde = MQMDE.pack({"Version": 2, "StrucLength": 72, "Encoding": 546, "CodedCharSetId": 819,
                      "Format": "MQDEAD", "GroupId": b"G" * 24, "MsgSeqNumber": 2}, "<",
                     "latin-1")
    m = CaptureMessage(md=md_fields(Format="MQHMDE", Encoding=546, CodedCharSetId=819,
                                    Version=1), data=mde + dlh + "nach MDE \u00e4".encode())
    for fmt in ("raw", "dmpmqmsg", "amqsbcg"):
        (row,) = read_rows(write_capture(tmp_path / f"m.{fmt}", fmt, [m]))
        assert row["decode_status"] == "ok", row["decode_issues"]
        assert row["headers"] == ["MQHMDE", "MQDEAD"]
        assert [(h["offset"], h["length"], h["encoding"], h["ccsid"])
                for h in row["header_chain"]] == [(0, 72, 546, 819), (72, 172, 546, 819)]
        assert row["dlh"]["Reason"] == 2053 and row["dlh"]["DestQName"] == "APP.IN"
        assert row["payload_text"] == "nach MDE \u00e4" and row["payload_ccsid"] == 1208


def test_ebcdic_payload_text_is_decoded_with_its_ccsid(tmp_path):
    text = "Preis 5\u20ac [Konto] \u00e4\u00f6\u00fc"
    text2 = "Preis 5 [Konto] {x} \u00e4\u00f6\u00fc"  # '[' is X'BA' in 1140, X'AD' in 1047
    m = dlq_message(text.encode("cp1140"), encoding=785, ccsid=500, md_byteorder=">",
                    md_codec="cp500",
                    dlh={"Encoding": 785, "CodedCharSetId": 1140, "Format": "MQSTR"})
    m2 = dlq_message(text2.encode("cp1047"), encoding=785, ccsid=1047,
                     dlh={"Encoding": 785, "CodedCharSetId": 1047, "Format": "MQSTR",
                          "DestQName": "EBCDIC.Q"})
    rows = read_rows(write_capture(tmp_path / "e.raw", "raw", [m, m2]))
    assert rows[0]["payload_text"] == text and rows[0]["payload_ccsid"] == 1140
    assert rows[1]["payload_text"] == text2
    assert text.encode("cp1140")[9] == 0xBA and text2.encode("cp1047")[8] == 0xAD
    assert rows[1]["dlh"]["DestQName"] == "EBCDIC.Q"
    assert [r["header_chain"][0]["ccsid"] for r in rows] == [500, 1047]
    assert [r["decode_status"] for r in rows] == ["ok", "ok"]


# --------------------------------------------------------------------------
# timestamps (IBM MQ, MQMD "PutDate (MQCHAR8)" and "PutTime (MQCHAR8)")
# --------------------------------------------------------------------------

@pytest.mark.parametrize("date, time, expected", [
    ("20130114", "11241665", dt.datetime(2013, 1, 14, 11, 24, 16, 650000, UTC)),
    ("20231213", "140046", dt.datetime(2023, 12, 13, 14, 0, 46, tzinfo=UTC)),
    ("20231213", b"140046\0\0", dt.datetime(2023, 12, 13, 14, 0, 46, tzinfo=UTC)),
    ("20161231", "23596012", dt.datetime(2016, 12, 31, 23, 59, 59, 990000, UTC)),
    ("20240229", "00000000", dt.datetime(2024, 2, 29, tzinfo=UTC)),
])
def test_put_timestamps(tmp_path, date, time, expected):
    m = dlq_message(md={"PutDate": date, "PutTime": time},
                    dlh={"PutDate": date, "PutTime": time})
    (row,) = read_rows(write_capture(tmp_path / "ts.raw", "raw", [m]))
    assert row["put_ts"] == expected and row["dlh_put_ts"] == expected
    assert row["put_ts"].tzinfo is not None and row["put_ts"].utcoffset() == dt.timedelta(0)
    assert "bad_timestamp" not in codes(row)


@pytest.mark.parametrize("date, time", [
    ("20240315", ""), ("20240315", "1015"), ("20230229", "10153012"), ("2024031", "10153012"),
    ("20240315", "25000000"), ("        ", "10153012"), ("2024-03-", "10:15:30"),
])
def test_bad_put_timestamps_are_null_with_a_warning(tmp_path, date, time):
    m = dlq_message(md={"PutDate": date, "PutTime": time})
    (row,) = read_rows(write_capture(tmp_path / "ts.raw", "raw", [m]))
    assert row["put_ts"] is None
    assert row["dlh_put_ts"] == dt.datetime(2024, 3, 15, 10, 15, 31, 570000, UTC)
    assert row["decode_status"] == "ok"
    i = issue(row, "bad_timestamp")
    assert i["field"] == "md.PutDate/md.PutTime"
    assert repr(time.rstrip()) in i["found"] and "message 1" in i["message"]
    assert "YYYYMMDD" in i["expected"]


def test_blank_dlh_put_time(tmp_path):
    m = dlq_message(dlh={"PutTime": ""})
    (row,) = read_rows(write_capture(tmp_path / "ts.raw", "raw", [m]))
    assert row["dlh_put_ts"] is None and row["dlh"]["PutTime"] == ""
    assert row["put_ts"] == dt.datetime(2024, 3, 15, 10, 15, 30, 120000, UTC)
    assert issue(row, "bad_timestamp")["field"] == "dlh.PutDate/dlh.PutTime"
    assert row["decode_status"] == "ok"


def test_message_without_dlh_has_no_dlh_columns(tmp_path):
    m = plain_message("plain text".encode("utf-8"))
    for fmt in ("raw", "dmpmqmsg", "amqsbcg"):
        (row,) = read_rows(write_capture(tmp_path / f"p.{fmt}", fmt, [m]))
        assert row["dlh"] is None and row["reason_name"] is None
        assert row["dlh_put_ts"] is None and row["headers"] == []
        assert row["payload_text"] == "plain text" and row["decode_status"] == "ok"
        assert "bad_timestamp" not in codes(row)


def test_feedback_name(tmp_path):
    m = dlq_message(md={"MsgType": 4, "Feedback": 258})
    (row,) = read_rows(write_capture(tmp_path / "f.raw", "raw", [m]))
    assert row["feedback_name"] == "MQFB_EXPIRATION" and row["md"]["Feedback"] == 258
    (row,) = read_rows(write_capture(tmp_path / "g.raw", "raw", [dlq_message()]))
    assert row["feedback_name"] is None


def test_numpy_not_needed_to_inspect_rows(tmp_path):
    """Rows come back as plain Python values (no numpy scalars leak out)."""
    (row,) = read_rows(write_capture(tmp_path / "x.raw", "raw", [dlq_message()]))
    for k, v in row.items():
        assert not isinstance(v, np.generic), k
