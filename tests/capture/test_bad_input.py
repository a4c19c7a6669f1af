"""Damaged captures (DESIGN.md convention 4): in PERMISSIVE mode a bad message
is a row with its raw bytes or text, a ``decode_status`` and issues naming the
file, message number, offset or line, field, expected and found; every good
message around it is still decoded; ``framed == rows + dropped``.
DROPMALFORMED drops malformed rows and counts them by status; FAILFAST raises
MalformedMessageError for the first one.
"""

from __future__ import annotations

import struct

import pytest
from tests.builders import FAST, codes, dlq_message, issue, md_fields, read_rows, write_capture
from hypothesis import given
from hypothesis import strategies as st

from dlqlens.capture import amqsbcg, dmpmqmsg, raw
from dlqlens.capture.message import CaptureMessage
from dlqlens.capture.reader import read_capture
from dlqlens.decode.issues import ISSUE_STATUS, STATUSES
from dlqlens.errors import CaptureError, MalformedMessageError
from dlqlens.mq.structs import MQMDE, MQRFH2

GOOD = [dlq_message(b"good one", dlh={"Reason": 2053}),
        dlq_message(b"good two", dlh={"Reason": 2035}),
        dlq_message(b"good three", dlh={"Reason": 2085})]


def record(m: CaptureMessage) -> bytes:
    body = m.md_bytes() + m.data
    return struct.pack(">I", len(body)) + body


HEADER = raw.MAGIC + struct.pack(">I", raw.FORMAT_VERSION)


def raw_file(tmp_path, name, *parts: bytes):
    p = tmp_path / name
    p.write_bytes(HEADER + b"".join(parts))
    return p


def check_issue(i, path, number, *, field, offset=None, line=None, expected=None, found=None):
    """An issue names file, message number, where, field, expected and found."""
    assert i["field"] == field
    assert i["message"].startswith(f"{path}: message {number} ")
    if offset is not None:
        assert i["offset"] == offset and i["line"] is None
        assert f"(offset {offset})" in i["message"]
    if line is not None:
        assert i["line"] == line and i["offset"] is None
        assert f"(line {line})" in i["message"]
    if expected is not None:
        assert i["expected"] == expected
    if found is not None:
        assert i["found"] == found
    assert f"expected {i['expected']}, found {i['found']}" in i["message"]


def good_rows_intact(rows, numbers):
    """The good messages (GOOD[0], GOOD[1]... at message ``numbers``) keep
    their place and decode completely."""
    got = {r["message_number"]: r for r in rows}
    for n, m in zip(numbers, GOOD):
        r = got[n]
        assert r["decode_status"] == "ok", r["decode_issues"]
        assert r["payload"] == m.data[172:]
        assert r["dlh"]["Reason"] == {b"good one": 2053, b"good two": 2035,
                                      b"good three": 2085}[m.data[172:]]


# --------------------------------------------------------------------------
# raw captures
# --------------------------------------------------------------------------

def test_raw_garbage_between_records(tmp_path):
    r1, r2, r3 = (record(m) for m in GOOD)
    junk = b"GARBAGE!" * 5
    p = raw_file(tmp_path, "garbage.raw", r1, junk, r2, r3)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_framing", "ok", "ok"]
    good_rows_intact(rows, [1, 3, 4])
    bad = rows[1]
    assert bad["raw"] == junk and bad["md"] is None and bad["dlh"] is None
    assert bad["source_offset"] == 16 + len(r1)
    check_issue(issue(bad, "bad_length"), p, 2, field="record length", offset=16 + len(r1),
                found=f"{int.from_bytes(junk[:4], 'big')} bytes")
    assert rows[2]["source_offset"] == 16 + len(r1) + len(junk)


def test_raw_wrong_md_struc_id(tmp_path):
    r1, r2, r3 = (record(m) for m in GOOD)
    bad = bytearray(r2)
    bad[4:8] = b"XX  "
    p = raw_file(tmp_path, "sid.raw", r1, bytes(bad), r3)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_descriptor", "ok"]
    assert rows[2]["payload"] == b"good three" and rows[0]["payload"] == b"good one"
    check_issue(issue(rows[1], "bad_md"), p, 2, field="md.StrucId", offset=16 + len(r1),
                expected="'MD  ' (X'4D442020' or X'D4C44040')", found="X'58582020'")
    assert rows[1]["raw"] == bytes(bad)  # length prefix and record, nothing lost
    assert rows[1]["md"] is None and rows[1]["payload"] == b""


def test_raw_wrong_md_version(tmp_path):
    r1, r2, r3 = (record(m) for m in GOOD)
    bad = bytearray(r2)
    bad[8:12] = struct.pack("<i", 7)
    p = raw_file(tmp_path, "ver.raw", r1, bytes(bad), r3)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_descriptor", "ok"]
    check_issue(issue(rows[1], "bad_md"), p, 2, field="md.Version", offset=16 + len(r1) + 4,
                found="X'07000000'")


@pytest.mark.parametrize("length", [3_000_000_000, 0xFFFFFFF0, 0x7FFFFFFF, 12],
                         ids=["gigabytes", "negative-looking", "max-int", "too-short"])
def test_raw_impossible_record_length(tmp_path, length):
    r1, r2, r3 = (record(m) for m in GOOD)
    bad = struct.pack(">I", length) + r2[4:]
    p = raw_file(tmp_path, "len.raw", r1, bad, r3)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_framing", "ok"]
    assert [rows[0]["payload"], rows[2]["payload"]] == [b"good one", b"good three"]
    check_issue(issue(rows[1], "bad_length"), p, 2, field="record length",
                offset=16 + len(r1), found=f"{length} bytes")
    assert rows[1]["raw"] == bad


def test_raw_truncated_last_record(tmp_path):
    r1, r2, r3 = (record(m) for m in GOOD)
    cut = r3[:-4]  # the capture stopped 4 bytes short
    p = raw_file(tmp_path, "cut.raw", r1, r2, cut)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "ok", "truncated"]
    good_rows_intact(rows, [1, 2])
    last = rows[2]
    assert last["data_truncated"] is True
    assert last["data_length"] == len(GOOD[2].data) and last["payload_length"] == 10
    assert last["payload"] == b"good t" and last["dlh"]["Reason"] == 2085
    check_issue(issue(last, "data_truncated"), p, 3, field="record length",
                offset=16 + len(r1) + len(r2), expected=f"{len(r3) - 4} bytes",
                found=f"{len(r3) - 8} bytes before the end of the file")


def test_raw_last_record_cut_inside_its_descriptor(tmp_path):
    r1, r2, r3 = (record(m) for m in GOOD)
    p = raw_file(tmp_path, "cutmd.raw", r1, r2, r3[:200])
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "ok", "bad_descriptor"]
    check_issue(issue(rows[2], "bad_md"), p, 3, field="record length",
                offset=16 + len(r1) + len(r2), found="196 bytes")
    assert rows[2]["raw"] == r3[:200]


def test_raw_trailing_bytes_shorter_than_a_length_prefix(tmp_path):
    r1, r2, r3 = (record(m) for m in GOOD)
    p = raw_file(tmp_path, "tail.raw", r1, r2, r3, b"\x00\x01")
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "ok", "ok", "bad_framing"]
    check_issue(issue(rows[3], "bad_length"), p, 4, field="record length",
                offset=16 + len(r1 + r2 + r3), found="2 trailing bytes")


@pytest.mark.parametrize("damage", ["offset", "count-larger", "count-huge", "count-zero"])
def test_raw_damaged_index_falls_back_to_scanning(tmp_path, damage):
    p = write_capture(tmp_path / "idx.raw", "raw", GOOD)
    b = bytearray(p.read_bytes())
    t = len(b) - raw.TRAILER_SIZE
    if damage == "offset":
        b[t - 8 * 3 + 7] ^= 0x40  # first offset entry points nowhere
    elif damage == "count-larger":
        b[t + 7] = 9
    elif damage == "count-huge":
        b[t] = 0x7F
    else:
        b[t + 7] = 0
    p.write_bytes(bytes(b))
    assert raw.plan(str(p), target_bytes=100) == [raw.Slice(str(p))]
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "ok", "ok"]
    good_rows_intact(rows, [1, 2, 3])
    assert [r["source_offset"] for r in rows] == [16, 16 + len(record(GOOD[0])),
                                                  16 + len(record(GOOD[0]) + record(GOOD[1]))]


def test_raw_payload_that_ends_like_an_index_trailer(tmp_path):
    """Found by hypothesis: a capture without index whose last message ends
    with the trailer magic is not a damaged index."""
    ms = GOOD[:2] + [dlq_message(raw.INDEX_MAGIC, dlh={"Reason": 2085})]
    p = write_capture(tmp_path / "magic.raw", "raw", ms, index=False)
    assert p.read_bytes().endswith(raw.INDEX_MAGIC)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "ok", "ok"]
    assert rows[2]["payload"] == raw.INDEX_MAGIC


def test_raw_single_message_file_with_broken_version_is_refused(tmp_path):
    p = tmp_path / "one.bin"
    p.write_bytes(b"MD  " + b"\x00\x00\x00\x09" + b"\x00" * 400)
    with pytest.raises(CaptureError) as e:
        read_capture(p)
    assert str(p) in str(e.value) and "\n" not in str(e.value)


# --------------------------------------------------------------------------
# header chains
# --------------------------------------------------------------------------

def _data_offset(tmp_path_file_rows, n):
    """File offset of the first data byte of message ``n`` in a raw capture."""
    return tmp_path_file_rows[n - 1]["source_offset"] + 4 + 364


def test_dlh_with_a_wrong_struc_id(tmp_path):
    m = dlq_message(b"payload")
    m.data = b"DLX " + m.data[4:]
    p = write_capture(tmp_path / "dlhsid.raw", "raw", [GOOD[0], m, GOOD[1]])
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_header", "ok"]
    bad = rows[1]
    assert bad["dlh"] is None and bad["headers"] == [] and bad["reason_name"] is None
    assert bad["payload"] == m.data  # the rest is kept as payload, nothing lost
    assert bad["md"]["Format"] == "MQDEAD"
    check_issue(issue(bad, "bad_struc_id"), p, 2, field="MQDLH.StrucId",
                offset=_data_offset(rows, 2), expected="'DLH '", found="X'444C5820'")
    assert "byte 0 of the message data" in issue(bad, "bad_struc_id")["message"]


def test_dlh_with_a_wrong_version(tmp_path):
    m = dlq_message(b"payload", dlh={"Version": 3})
    p = write_capture(tmp_path / "dlhver.raw", "raw", [m])
    (row,) = read_rows(p)
    assert row["decode_status"] == "bad_header" and row["payload"] == m.data
    check_issue(issue(row, "bad_version"), p, 1, field="MQDLH.Version",
                offset=_data_offset([row], 1) + 4, found="X'03000000'")


def test_dlh_in_ebcdic_inside_an_ascii_labelled_message(tmp_path):
    m = dlq_message(b"after the dlh", encoding=546, ccsid=500,
                    dlh={"DestQName": "EBCDIC.DEST", "CodedCharSetId": 819})
    m.md["CodedCharSetId"] = 819  # the MQMD says ASCII, the DLH is EBCDIC
    for fmt in ("raw", "dmpmqmsg", "amqsbcg"):
        p = write_capture(tmp_path / f"ebc.{fmt}", fmt, [GOOD[0], m, GOOD[1]])
        rows = read_rows(p)
        assert [r["decode_status"] for r in rows] == ["ok", "ok", "ok"]
        bad = rows[1]
        assert codes(bad) == ["charset_mismatch"]
        assert bad["dlh"]["DestQName"] == "EBCDIC.DEST" and bad["dlh"]["Reason"] == 2053
        assert bad["dlh"]["PutApplName"] == "amqrmppa"
        assert bad["payload_text"] == "after the dlh"
        i = issue(bad, "charset_mismatch")
        assert i["field"] == "MQDLH.StrucId" and "819" in i["expected"] and "ebcdic" in i["found"]
        assert str(p) in i["message"] and "message 2" in i["message"]


def test_dlh_integers_in_the_wrong_byte_order(tmp_path):
    m = dlq_message(b"wrong order", encoding=273, dlh={"Reason": 2087, "Encoding": 273})
    m.md["Encoding"] = 546  # labelled little-endian, the DLH is big-endian
    p = write_capture(tmp_path / "order.raw", "raw", [GOOD[0], m, GOOD[1]])
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "ok", "ok"]
    bad = rows[1]
    assert codes(bad) == ["encoding_mismatch"]
    assert bad["dlh"]["Reason"] == 2087 and bad["reason_name"] == "MQRC_UNKNOWN_REMOTE_Q_MGR"
    assert bad["dlh"]["Encoding"] == 273 and bad["dlh"]["PutApplType"] == 6
    assert bad["header_chain"][0]["encoding"] == 546  # what the label said
    check_issue(issue(bad, "encoding_mismatch"), p, 2, field="MQDLH.Version",
                offset=_data_offset(rows, 2))


def test_rfh2_with_an_impossible_struc_length(tmp_path):
    rfh = MQRFH2.pack({"Version": 2, "StrucLength": 99999, "Encoding": 546,
                       "CodedCharSetId": 1208, "Format": "MQSTR", "NameValueCCSID": 1208},
                      "<", "latin-1")
    m = dlq_message(rfh + b"body", dlh={"Format": "MQHRF2", "Encoding": 546})
    p = write_capture(tmp_path / "rfh.raw", "raw", [GOOD[0], m, GOOD[1]])
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_header", "ok"]
    bad = rows[1]
    assert bad["dlh"]["Reason"] == 2053  # the DLH in front is still decoded
    assert bad["headers"] == ["MQDEAD", "MQHRF2"]
    assert [h["status"] for h in bad["header_chain"]] == ["ok", "bad_length"]
    assert bad["payload"] == rfh + b"body"  # from the bad header on, kept as payload
    check_issue(issue(bad, "bad_struc_length"), p, 2, field="MQRFH2.StrucLength",
                offset=_data_offset(rows, 2) + 172 + 8, expected="36 to 40 bytes",
                found="99999")


def test_rfh2_struc_length_shorter_than_its_fixed_part(tmp_path):
    rfh = MQRFH2.pack({"Version": 2, "StrucLength": 8, "Format": "MQSTR"}, "<", "latin-1")
    m = dlq_message(rfh + b"body", dlh={"Format": "MQHRF2", "Encoding": 546})
    (row,) = read_rows(write_capture(tmp_path / "rfh8.raw", "raw", [m]))
    assert row["decode_status"] == "bad_header"
    assert issue(row, "bad_struc_length")["found"] == "8"


def test_header_chain_too_deep(tmp_path):
    mde = MQMDE.pack({"Version": 2, "StrucLength": 72, "Encoding": 546, "CodedCharSetId": 819,
                      "Format": "MQHMDE"}, "<", "latin-1")
    m = CaptureMessage(md=md_fields(Format="MQHMDE", Encoding=546, CodedCharSetId=819),
                       data=mde * 20 + b"end")
    p = write_capture(tmp_path / "deep.raw", "raw", [GOOD[0], m, GOOD[1]])
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_header", "ok"]
    bad = rows[1]
    assert bad["headers"] == ["MQHMDE"] * 16
    assert bad["payload"] == mde * 4 + b"end"
    check_issue(issue(bad, "chain_too_deep"), p, 2, field="header chain",
                offset=_data_offset(rows, 2) + 16 * 72, expected="at most 16 headers")


def test_header_cut_short_by_the_end_of_the_data(tmp_path):
    m = dlq_message(b"")
    m.data = m.data[:100]
    (row,) = read_rows(write_capture(tmp_path / "short.raw", "raw", [m]))
    assert row["decode_status"] == "truncated"
    assert row["dlh"]["DestQName"] == "APP.IN" and row["dlh"]["Encoding"] is None
    assert row["payload"] == m.data  # an incomplete header stays in the payload
    assert row["data_length"] == row["payload_length"] == 100
    assert row["header_chain"][0]["status"] == "truncated"
    i = issue(row, "header_truncated")
    assert i["field"] == "MQDLH" and i["expected"] == "172 bytes" and i["found"] == "100 bytes"


# --------------------------------------------------------------------------
# text captures
# --------------------------------------------------------------------------

def _dmp(tmp_path, name, edit):
    good1 = dmpmqmsg.format_message(GOOD[0])
    lines = dmpmqmsg.format_message(dlq_message(b"the bad one")).splitlines()
    edit(lines)
    p = tmp_path / name
    p.write_text(good1 + "\n".join(lines) + "\n" + dmpmqmsg.format_message(GOOD[1]))
    first_bad = good1.count("\n") + 1
    return p, first_bad, lines


def _x_lines(lines):
    return [i for i, t in enumerate(lines) if t.startswith("X ")]


def test_dmpmqmsg_invalid_hex(tmp_path):
    def edit(lines):
        k = _x_lines(lines)[1]
        lines[k] = lines[k][:10] + "ZZ" + lines[k][12:]
    p, start, lines = _dmp(tmp_path, "hex.qld", edit)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_data", "ok"]
    good_rows_intact(rows, [1, 3])
    bad = rows[1]
    assert bad["source_line"] == start
    k = _x_lines(lines)[1]
    check_issue(issue(bad, "bad_hex"), p, 2, field="X line", line=start + k,
                found=repr("ZZ" + lines[k][12:26]))
    # the byte positions are kept: only the damaged byte is lost
    assert bad["payload"] == b"the bad one" and bad["dlh"]["DestQMgrName"] == "QM1"
    assert len(bad["payload"]) + 172 == bad["data_length"]


def test_dmpmqmsg_odd_number_of_hex_digits(tmp_path):
    def edit(lines):
        k = _x_lines(lines)[-1]
        lines[k] += "A"
    p, start, lines = _dmp(tmp_path, "odd.qld", edit)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_data", "ok"]
    check_issue(issue(rows[1], "bad_hex"), p, 2, field="X line", line=start + _x_lines(lines)[-1],
                expected="an even number of hex digits")
    assert rows[1]["payload"] == b"the bad one"


def test_dmpmqmsg_non_numeric_attribute(tmp_path):
    def edit(lines):
        k = next(i for i, t in enumerate(lines) if t.startswith("A EXP"))
        lines[k] = "A EXP never"
    p, start, lines = _dmp(tmp_path, "exp.qld", edit)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_descriptor", "ok"]
    k = next(i for i, t in enumerate(lines) if t.startswith("A EXP"))
    check_issue(issue(rows[1], "bad_md_field"), p, 2, field="md.Expiry (A EXP)", line=start + k,
                expected="a decimal number (MQLONG)", found="'never'")
    assert rows[1]["payload"] == b"the bad one"  # the rest is still decoded
    assert rows[1]["md"]["Expiry"] == -1  # left at its default, as QLOAD would


def test_dmpmqmsg_unknown_attribute_code(tmp_path):
    def edit(lines):
        lines.insert(3, "A XYZ 12")
    p, start, lines = _dmp(tmp_path, "code.qld", edit)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_descriptor", "ok"]
    check_issue(issue(rows[1], "bad_md_field"), p, 2, field="A XYZ", line=start + 3,
                found="'XYZ'")


@pytest.mark.parametrize("bad_line, field, expected", [
    ("A EXP 99999999999", "md.Expiry (A EXP)", "a decimal number (MQLONG)"),
    ("A EXP \x1c5", "md.Expiry (A EXP)", "a decimal number (MQLONG)"),  # found by tests/fuzz.py
    ("A PRI 4\x1f", "md.Priority (A PRI)", "a decimal number (MQLONG)"),
    ("A MSI " + "AB" * 30, "md.MsgId (A MSI)", "at most 48 hex digits"),
    ("A AOX 2020202020", "md.ApplOriginData (A AOX)", "at most 8 hex digits"),
])
def test_dmpmqmsg_attribute_values_that_do_not_fit(tmp_path, bad_line, field, expected):
    code = bad_line[2:5]

    def edit(lines):
        k = next(i for i, t in enumerate(lines) if t.startswith(f"A {code}"))
        lines[k] = bad_line
    p, start, lines = _dmp(tmp_path, "fit.qld", edit)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_descriptor", "ok"]
    k = next(i for i, t in enumerate(lines) if t == bad_line)
    check_issue(issue(rows[1], "bad_md_field"), p, 2, field=field, line=start + k,
                expected=expected)
    assert rows[1]["payload"] == b"the bad one" and rows[1]["dlh"]["Reason"] == 2053
    if code == "MSI":
        assert rows[1]["md"]["MsgId"] == b"\xab" * 24  # cut to the field, as QLOAD reads it


@pytest.mark.parametrize("old, new, field", [
    ("  Expiry   : -1", "  Expiry   : 99999999999", "md.Expiry"),
    ("  MsgId : X'", "  MsgId : X'ABCDEF", "md.MsgId"),
    ("  Reason   : 2053", "  Reason   : 4294967296", "dlh.Reason"),
])
def test_amqsbcg_descriptor_values_that_do_not_fit(tmp_path, old, new, field):
    text = amqsbcg.format_message(2, dlq_message(b"bad"), dlh_block=True)
    assert old in text
    p = tmp_path / "fit.txt"
    p.write_text(amqsbcg.format_message(1, GOOD[0]) + text.replace(old, new, 1)
                 + amqsbcg.format_message(3, GOOD[1]) + " No more messages\n")
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_descriptor", "ok"]
    assert issue(rows[1], "bad_md_field")["field"] == field
    assert rows[1]["payload"] == b"bad"


def test_amqsbcg_damaged_dump_offset_does_not_allocate_the_gap(tmp_path):
    lines = amqsbcg.format_message(1, dlq_message(b"z" * 40)).splitlines()
    k = next(i for i, t in enumerate(lines) if t.startswith("00000020:"))
    lines[k] = "D0000020" + lines[k][8:]  # offset damaged: 3.5 GB past the data
    p = tmp_path / "offset.txt"
    p.write_text("\n".join(lines) + "\n No more messages\n")
    (row,) = read_rows(p)
    assert row["decode_status"] == "bad_data" and codes(row) == ["length_mismatch"]
    assert row["payload"] == b"z" * 40 and row["data_length"] == 212


def test_dmpmqmsg_stray_lines_between_messages(tmp_path):
    good1 = dmpmqmsg.format_message(GOOD[0])
    text = (good1 + "this is not a dmpmqmsg line\nneither is this\n"
            + dmpmqmsg.format_message(GOOD[1]) + "trailing words\n")
    p = tmp_path / "stray.qld"
    p.write_text(text)
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_framing", "ok", "bad_framing"]
    assert [r["message_number"] for r in rows] == [1, 2, 3, 4]
    stray = rows[1]
    assert stray["raw"] == b"this is not a dmpmqmsg line\nneither is this"
    assert stray["md"] is None and stray["payload"] == b""
    line = good1.count("\n") + 1
    check_issue(issue(stray, "unframed"), p, 2, field="line", line=line)
    assert "2 line(s) outside any message" in issue(stray, "unframed")["message"]
    assert rows[3]["raw"] == b"trailing words"
    assert rows[2]["payload"] == b"good two" and rows[2]["dlh"]["Reason"] == 2035


def test_dmpmqmsg_attributes_without_data(tmp_path):
    text = dmpmqmsg.format_message(GOOD[0]).split("\nX ")[0] + "\n\n"
    p = tmp_path / "nodata.qld"
    p.write_text(text + dmpmqmsg.format_message(GOOD[1]))
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["truncated", "ok"]
    assert codes(rows[0])[0] == "data_truncated"


def test_amqsbcg_mangled_hex_line(tmp_path):
    a = amqsbcg.format_message(1, GOOD[0])
    lines = amqsbcg.format_message(2, dlq_message(b"x" * 40)).splitlines()
    k = next(i for i, t in enumerate(lines) if t.startswith("00000010:"))
    lines[k] = lines[k][:13] + "G" + lines[k][14:]
    c = amqsbcg.format_message(3, GOOD[1])
    p = tmp_path / "mangled.txt"
    p.write_text(a + "\n".join(lines) + "\n" + c + " No more messages\n")
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["ok", "bad_data", "ok"]
    good_rows_intact(rows, [1, 3])
    bad = rows[1]
    assert codes(bad) == ["bad_hex"]  # one damaged line, one issue
    check_issue(issue(bad, "bad_hex"), p, 2, field="hex dump", line=a.count("\n") + k + 1,
                expected="pairs of hex digits")
    # later bytes keep their place: the DLH fields after the damaged line decode
    assert bad["dlh"]["PutApplName"] == "amqrmppa" and bad["dlh"]["Reason"] == 2053
    assert bad["payload"] == b"x" * 40


def test_amqsbcg_missing_dump_line(tmp_path):
    lines = amqsbcg.format_message(1, dlq_message(b"y" * 40)).splitlines()
    k = next(i for i, t in enumerate(lines) if t.startswith("00000020:"))
    del lines[k]
    p = tmp_path / "gap.txt"
    p.write_text("\n".join(lines) + "\n No more messages\n")
    (row,) = read_rows(p)
    assert row["decode_status"] == "bad_data"
    i = issue(row, "length_mismatch")
    assert (i["expected"], i["found"]) == ("00000020", "00000030")
    assert codes(row).count("length_mismatch") == 1
    assert row["payload"] == b"y" * 40 and row["dlh"]["PutTime"] == "10153157"


def test_amqsbcg_descriptor_without_format_keeps_raw_text(tmp_path):
    text = amqsbcg.format_message(1, GOOD[0])
    text = "\n".join(t for t in text.splitlines() if not t.strip().startswith("Format"))
    p = tmp_path / "nofmt.txt"
    p.write_text(text + "\n" + amqsbcg.format_message(2, GOOD[1]) + " No more messages\n")
    rows = read_rows(p)
    assert [r["decode_status"] for r in rows] == ["bad_descriptor", "ok"]
    assert rows[0]["md"] is None and b"MsgId : X'" in rows[0]["raw"]
    assert issue(rows[0], "bad_md_field")["field"] == "md.Format"


# --------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------

def test_empty_file(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_bytes(b"")
    res = read_capture(p)
    assert len(res) == 0
    assert res.stats.empty_files == [str(p)] and res.stats.files == 1
    assert (res.stats.framed, res.stats.rows, res.stats.dropped) == (0, 0, 0)
    for fmt in ("raw", "dmpmqmsg", "amqsbcg"):
        assert len(read_capture(p, format=fmt)) == 0


def test_binary_junk_named_txt(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(CaptureError) as e:
        read_capture(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: unknown capture format") and "\n" not in msg


def test_missing_file_and_pattern(tmp_path):
    with pytest.raises(CaptureError, match="no such file"):
        read_capture(tmp_path / "nope.raw")
    with pytest.raises(CaptureError, match="no file matches"):
        read_capture(str(tmp_path / "*.nothing"))


def test_junk_inside_a_directory_is_skipped_not_fatal(tmp_path):
    write_capture(tmp_path / "a.raw", "raw", GOOD)
    (tmp_path / "README").write_bytes(bytes(range(256)))
    res = read_capture(tmp_path)
    assert len(res) == 3 and res.stats.skipped_files == [str(tmp_path / "README")]


# --------------------------------------------------------------------------
# reader modes
# --------------------------------------------------------------------------

def _mixed(tmp_path):
    r1, r2, r3 = (record(m) for m in GOOD)
    bad_sid = bytearray(r2)
    bad_sid[4:8] = b"XX  "
    dlx = dlq_message(b"dlx")
    dlx.data = b"DLX " + dlx.data[4:]
    cut = r3[:-4]
    return raw_file(tmp_path, "mixed.raw", r1, b"JUNKJUNK", record(dlx), bytes(bad_sid), r2,
                    record(GOOD[0]), cut)


def test_permissive_keeps_every_framed_message(tmp_path):
    p = _mixed(tmp_path)
    res = read_capture(p)
    assert res.table.column("decode_status").to_pylist() == [
        "ok", "bad_framing", "bad_header", "bad_descriptor", "ok", "ok", "truncated"]
    assert res.stats.framed == res.stats.rows == 7 and res.stats.dropped == 0
    assert res.table.column("message_number").to_pylist() == list(range(1, 8))


def test_dropmalformed_drops_and_counts_by_status(tmp_path):
    p = _mixed(tmp_path)
    res = read_capture(p, mode="DROPMALFORMED")
    s = res.stats
    assert res.table.column("decode_status").to_pylist() == ["ok", "ok", "ok", "truncated"]
    assert res.table.column("message_number").to_pylist() == [1, 5, 6, 7]
    assert (s.framed, s.rows, s.dropped) == (7, 4, 3)
    assert s.framed == s.rows + s.dropped
    assert dict(s.dropped_by_status) == {"bad_framing": 1, "bad_descriptor": 1, "bad_header": 1}


def test_dropmalformed_mode_is_case_insensitive(tmp_path):
    assert len(read_capture(_mixed(tmp_path), mode="dropmalformed")) == 4


def test_failfast_names_the_first_bad_message(tmp_path):
    p = _mixed(tmp_path)
    with pytest.raises(MalformedMessageError) as e:
        read_capture(p, mode="FAILFAST")
    i = e.value.issue
    assert i["source"] == str(p) and i["message_number"] == 2
    assert i["code"] == "bad_length" and i["field"] == "record length"
    assert i["offset"] == 16 + len(record(GOOD[0]))
    assert str(e.value).startswith(f"{p}: message 2 (offset {i['offset']})")


def test_failfast_reports_the_malformation_not_an_earlier_warning(tmp_path):
    rfh = MQRFH2.pack({"Version": 2, "StrucLength": 99999, "Format": "MQSTR"}, "<", "latin-1")
    m = dlq_message(rfh, encoding=546, ccsid=500, dlh={"Format": "MQHRF2", "Encoding": 546})
    m.md["CodedCharSetId"] = 819  # -> a charset_mismatch warning first
    p = write_capture(tmp_path / "w.raw", "raw", [GOOD[0], m])
    (_, row) = read_rows(p)
    assert codes(row)[0] == "charset_mismatch" and row["decode_status"] == "bad_header"
    with pytest.raises(MalformedMessageError) as e:
        read_capture(p, mode="FAILFAST")
    assert e.value.issue["code"] == "bad_struc_length" and e.value.issue["message_number"] == 2


def test_failfast_accepts_well_formed_captures(tmp_path):
    p = write_capture(tmp_path / "ok.raw", "raw", GOOD)
    res = read_capture(p, mode="FAILFAST")
    assert len(res) == 3 and res.stats.dropped == 0


def test_unknown_mode_and_format_are_usage_errors(tmp_path):
    from dlqlens.errors import UsageError

    p = write_capture(tmp_path / "ok.raw", "raw", GOOD)
    with pytest.raises(UsageError, match="unknown mode"):
        read_capture(p, mode="LENIENT")
    with pytest.raises(UsageError, match="unknown capture format"):
        read_capture(p, format="wireshark")


def test_every_issue_code_maps_to_a_known_status():
    assert set(v for v in ISSUE_STATUS.values() if v) <= set(STATUSES)
    assert {"ok", "truncated"} < set(STATUSES)


# --------------------------------------------------------------------------
# fuzzing: no damage aborts a capture or loses a message
# --------------------------------------------------------------------------

def _fuzz_messages():
    from dlqlens.mq.structs import MQTM

    tm = MQTM.pack({"Version": 1, "QName": "APP.Q", "ApplType": 6}, ">", "cp500")
    rfh = MQRFH2.pack({"Version": 2, "StrucLength": 36, "Encoding": 546,
                       "CodedCharSetId": 1208, "Format": "MQSTR", "NameValueCCSID": 1208},
                      "<", "latin-1")
    return GOOD + [
        dlq_message(tm, encoding=785, ccsid=500, md_byteorder=">", md_codec="cp500",
                    dlh={"Format": "MQTRIG", "Encoding": 785, "CodedCharSetId": 500}),
        dlq_message(rfh + b"jms", dlh={"Format": "MQHRF2", "Encoding": 546})]


TEXT_BITS = [b"\n", b"A EXP 99999999999\n", b"A MSI " + b"AB" * 30 + b"\n", b"junk\n",
             b"X 4\n", b"S \"~\n", b"T \n", b"N\n", b"00000010:  ZZ", b"'", b":",
             b" MQGET of message number 9\n", b"****Dead Letter Header****\n",
             b"  Reason   : 99999999999 [X]\n", b"****   Message      ****\n",
             b" length - 99 of 5 bytes\n", b" No more messages\n"]


@st.composite
def mutations(draw, size, text):
    out = []
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(16 if not text else 0, size - 1))
        kind = draw(st.sampled_from(["set", "delete", "insert", "cut"]))
        if kind == "set":
            val = draw(st.sampled_from(b"0123456789ABCDEFXSTAN \n'G:-*")) if text else \
                draw(st.integers(0, 255))
            out.append((kind, at, bytes([val])))
        elif kind == "delete":
            out.append((kind, at, draw(st.integers(1, 60))))
        elif kind == "insert":
            out.append((kind, at, draw(st.sampled_from(TEXT_BITS)) if text
                        else draw(st.binary(min_size=1, max_size=24))))
        else:
            out.append((kind, at, None))
    return out


def _mutate(base: bytes, muts) -> bytes:
    b = bytearray(base)
    for kind, at, arg in muts:
        at = min(at, max(len(b) - 1, 0))
        if kind == "set" and b:
            b[at:at + 1] = arg
        elif kind == "delete":
            del b[at:at + arg]
        elif kind == "insert":
            b[at:at] = arg
        else:
            del b[at:]
    return bytes(b)


@pytest.mark.parametrize("fmt, kw", [("raw", {}), ("raw", {"index": False}),
                                     ("dmpmqmsg", {}), ("amqsbcg", {}),
                                     ("amqsbcg", {"dlh_block": True})],
                         ids=["raw", "raw-noindex", "dmpmqmsg", "amqsbcg", "amqsbcg-934"])
def test_fuzzed_captures_never_abort_and_account_for_every_message(tmp_path, fmt, kw):
    import tempfile

    base = write_capture(tmp_path / f"base.{fmt}", fmt, _fuzz_messages(), **kw).read_bytes()

    @FAST
    @given(mutations(len(base), fmt != "raw"))
    def check(muts):
        with tempfile.TemporaryDirectory() as d:
            p = f"{d}/fuzzed.{fmt}"
            with open(p, "wb") as fh:
                fh.write(_mutate(base, muts))
            try:
                res = read_capture(p, format=fmt)
            except CaptureError as exc:  # the whole file is unreadable: one line, named
                assert str(exc).startswith(p) and "\n" not in str(exc)
                return
            s = res.stats
            assert s.framed == s.rows == res.table.num_rows and s.dropped == 0
            for r in res.table.to_pylist():
                assert r["source"] == p
                if r["decode_status"] != "ok":
                    assert r["decode_issues"], r
                for i in r["decode_issues"]:
                    assert i["message"].startswith(f"{p}: message {r['message_number']}")
                    assert (i["offset"] is None) != (i["line"] is None)  # one, named
            assert [r["message_number"] for r in res.table.to_pylist()] == \
                list(range(1, s.framed + 1))
            dropped = read_capture(p, format=fmt, mode="DROPMALFORMED")
            d2 = dropped.stats
            assert d2.framed == s.framed == d2.rows + d2.dropped
            assert set(dropped.table.column("decode_status").to_pylist()) <= {"ok", "truncated"}

    check()
