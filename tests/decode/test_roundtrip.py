"""Whole-message round trips: random dead letters written with each capture
writer and read back with ``read_capture`` give back the same MQMD and MQDLH
field values and payload bytes.

Dimensions (hypothesis): MQMD version 1 and 2; the MQDLH's encoding 273, 546
and 785 and CCSID 819, 1208, 37, 500, 1047, 1140; in raw captures, the MQMD's
own layout (little/big-endian integers, ASCII or EBCDIC characters); payloads
of any bytes, or MQSTR text in the payload's CCSID.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from tests.builders import FAST, INVARIANT, WRITERS, codes, read_rows, write_capture
from hypothesis import given
from hypothesis import strategies as st

from dlqlens.capture.message import MD_DEFAULTS, CaptureMessage, dead_letter
from dlqlens.mq.ccsid import charset
from dlqlens.mq.structs import MQDLH, MQMD

ENCODINGS = (273, 546, 785)
CCSIDS = (819, 1208, 37, 500, 1047, 1140)
MD_LAYOUTS = (("<", "latin-1"), (">", "latin-1"), ("<", "cp500"), (">", "cp500"),
              (">", "cp037"), (">", "cp1047"))


def text(max_size, alphabet=INVARIANT):
    """MQCHAR values as MQ keeps them: no trailing blanks (those are padding)."""
    return st.text(alphabet, max_size=max_size).map(lambda s: s.rstrip(" "))


#: MQ PutDate / PutTime as a queue manager writes them (YYYYMMDD, HHMMSSTH);
#: malformed values are tested in test_readers.py / test_bad_input.py.
PUT_DATE = st.dates().map(lambda d: f"{d.year:04d}{d.month:02d}{d.day:02d}").filter(
    lambda s: len(s) == 8)
PUT_TIME = st.tuples(st.integers(0, 23), st.integers(0, 59), st.integers(0, 59),
                     st.integers(0, 99)).map(lambda t: "%02d%02d%02d%02d" % t)


INT = st.integers(-2**31, 2**31 - 1)


@st.composite
def md_values(draw):
    version = draw(st.sampled_from((1, 2)))
    md = {
        "Version": version, "Report": draw(INT), "MsgType": draw(INT), "Expiry": draw(INT),
        "Feedback": draw(INT), "Encoding": draw(st.sampled_from(ENCODINGS)),
        "CodedCharSetId": draw(st.sampled_from(CCSIDS)),
        "Format": draw(st.sampled_from(("MQSTR", "", "MQADMIN", "APPFMT"))),
        "Priority": draw(st.integers(0, 9)), "Persistence": draw(st.integers(0, 1)),
        "MsgId": draw(st.binary(min_size=24, max_size=24)),
        "CorrelId": draw(st.binary(min_size=24, max_size=24)),
        "BackoutCount": draw(st.integers(0, 2**31 - 1)),
        "ReplyToQ": draw(text(48)), "ReplyToQMgr": draw(text(48)),
        "UserIdentifier": draw(text(12)),
        "AccountingToken": draw(st.binary(min_size=32, max_size=32)),
        "ApplIdentityData": draw(text(32)), "PutApplType": draw(INT),
        "PutApplName": draw(text(28)), "PutDate": draw(PUT_DATE),
        "PutTime": draw(PUT_TIME), "ApplOriginData": draw(text(4)),
    }
    if version == 2:
        md.update({"GroupId": draw(st.binary(min_size=24, max_size=24)),
                   "MsgSeqNumber": draw(INT), "Offset": draw(INT),
                   "MsgFlags": draw(INT), "OriginalLength": draw(INT)})
    return md


@st.composite
def dlh_values(draw):
    return {
        "Reason": draw(INT), "DestQName": draw(text(48)), "DestQMgrName": draw(text(48)),
        "PutApplType": draw(INT), "PutApplName": draw(text(28)),
        "PutDate": draw(PUT_DATE), "PutTime": draw(PUT_TIME),
    }


@st.composite
def dead_letters(draw, raw_layout=True):
    md = draw(md_values())
    dlh = draw(dlh_values())
    enc = draw(st.sampled_from(ENCODINGS))
    ccsid = draw(st.sampled_from(CCSIDS))
    if md["Format"] == "MQSTR":
        codec = charset(md["CodedCharSetId"]).codec
        payload = draw(st.text(INVARIANT + "éü€[]!", max_size=300)).encode(codec, "replace")
    else:
        payload = draw(st.binary(max_size=300))
    bo, md_codec = draw(st.sampled_from(MD_LAYOUTS)) if raw_layout else ("<", "latin-1")
    return dead_letter(md, dlh, payload, encoding=enc, ccsid=ccsid,
                       md_byteorder=bo, md_codec=md_codec)


def _md_expected(m: CaptureMessage) -> dict:
    full = m.full_md()
    version = int(full["Version"])
    # what the MQMD bytes say, read with the reference decoder
    exp = MQMD.unpack(MQMD.pack(full, "<", "latin-1", version=2), "<", "latin-1")
    if version == 1:
        for f in MQMD.fields:
            if f.version == 2:
                exp[f.name] = None
    return exp


def _dlh_expected(m: CaptureMessage) -> dict:
    md = m.full_md()
    cs = charset(md["CodedCharSetId"])
    bo = ">" if md["Encoding"] & 0x0F == 1 else "<"
    return MQDLH.unpack(m.data, bo, cs.codec)


def _check(rows, messages, fmt, dlh_block=False):
    assert len(rows) == len(messages)
    for n, (row, m) in enumerate(zip(rows, messages), 1):
        assert row["message_number"] == n
        assert row["capture_format"] == fmt
        assert row["decode_status"] == "ok", row["decode_issues"]
        assert set(codes(row)) <= {"dlh_reconstructed"}
        assert row["md"] == _md_expected(m)
        assert row["dlh"] == _dlh_expected(m)
        assert row["headers"] == ["MQDEAD"]
        assert row["payload"] == m.data[172:]
        assert row["payload_length"] == len(m.data) - 172
        assert row["data_length"] == len(m.data)
        assert row["data_truncated"] is False
        md = m.full_md()
        dlh = _dlh_expected(m)
        assert row["payload_format"] == dlh["Format"]
        assert row["payload_encoding"] == dlh["Encoding"]
        assert row["payload_ccsid"] == dlh["CodedCharSetId"]
        if dlh["Format"] == "MQSTR":
            codec = charset(dlh["CodedCharSetId"]).codec
            assert row["payload_text"] == m.data[172:].decode(codec)
        else:
            assert row["payload_text"] is None
        assert row["layout"]["md_version"] == md["Version"]
        assert row["layout"]["dlh_reconstructed"] is dlh_block
        assert ("dlh_reconstructed" in codes(row)) is dlh_block
        if fmt == "raw":
            assert row["layout"]["md_byte_order"] == ("big" if m.md_byteorder == ">" else "little")
            assert row["layout"]["md_origin"] == "binary"
        else:
            assert row["layout"]["md_origin"] == "text"


@FAST
@given(st.lists(dead_letters(), min_size=1, max_size=4), st.booleans())
def test_raw_capture_round_trip(messages, index):
    with tempfile.TemporaryDirectory() as d:
        p = write_capture(Path(d) / "dlq.raw", "raw", messages, index=index)
        rows = read_rows(p)
    _check(rows, messages, "raw")


@FAST
@given(dead_letters())
def test_single_message_raw_file_round_trip(message):
    from dlqlens.capture.raw import write_single

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "one.bin"
        write_single(p, message)
        rows = read_rows(p)
    _check(rows, [message], "raw")
    assert rows[0]["source_offset"] == 0


@FAST
@given(st.lists(dead_letters(raw_layout=False), min_size=1, max_size=4), st.booleans())
def test_dmpmqmsg_round_trip(messages, ascii_column):
    with tempfile.TemporaryDirectory() as d:
        p = write_capture(Path(d) / "dlq.dmp", "dmpmqmsg", messages, ascii_column=ascii_column)
        rows = read_rows(p)
    _check(rows, messages, "dmpmqmsg")


@FAST
@given(st.lists(dead_letters(raw_layout=False), min_size=1, max_size=4), st.booleans())
def test_amqsbcg_round_trip(messages, dlh_block):
    with tempfile.TemporaryDirectory() as d:
        p = write_capture(Path(d) / "dlq.txt", "amqsbcg", messages, dlh_block=dlh_block)
        rows = read_rows(p)
    _check(rows, messages, "amqsbcg", dlh_block=dlh_block)


@pytest.mark.parametrize("fmt", WRITERS)
def test_every_writer_round_trips_the_same_message(tmp_path, fmt):
    """One known message through each writer: identical decoded rows, except
    for provenance and layout."""
    m = dead_letter({"Format": "MQSTR", "Encoding": 546, "CodedCharSetId": 819,
                     "MsgId": bytes(range(24)), "PutDate": "20240315", "PutTime": "10153012",
                     "PutApplName": "order-service", "ReplyToQMgr": "QM2", "Persistence": 1},
                    {"Reason": 2053, "DestQName": "APP.IN", "DestQMgrName": "QM1",
                     "PutApplType": 6, "PutApplName": "amqrmppa", "PutDate": "20240315",
                     "PutTime": "10153157"}, b"ORDER 42", encoding=546, ccsid=1208)
    (row,) = read_rows(write_capture(tmp_path / f"one.{fmt}", fmt, [m]))
    assert row["decode_status"] == "ok"
    assert row["dlh"]["Reason"] == 2053 and row["reason_name"] == "MQRC_Q_FULL"
    assert row["dlh"]["DestQName"] == "APP.IN" and row["dlh"]["DestQMgrName"] == "QM1"
    assert row["dlh"]["Encoding"] == 546 and row["dlh"]["CodedCharSetId"] == 819
    assert row["md"]["Format"] == "MQDEAD" and row["md"]["CodedCharSetId"] == 1208
    assert row["md"]["MsgId"] == bytes(range(24))
    assert row["md"]["PutApplName"] == "order-service"
    assert row["payload"] == b"ORDER 42" and row["payload_text"] == "ORDER 42"
    assert row["put_ts"].isoformat() == "2024-03-15T10:15:30.120000+00:00"
    assert row["dlh_put_ts"].isoformat() == "2024-03-15T10:15:31.570000+00:00"
    assert MD_DEFAULTS["OriginalLength"] == row["md"]["OriginalLength"] == -1
