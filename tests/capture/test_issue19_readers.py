"""Issue 19 (the readers): messages that were lost or rewritten without a
word, and errors that named the wrong place. One test (or more) per defect,
in the order of the issue."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlqlens.capture.reader import read_capture
from tests import fuzz

SAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "dlq-sample"
DMP = SAMPLES / "dlq_linux_x86.dmp"
BCG = SAMPLES / "dlq_linux_x86_mq94.bcg"


def rows_of(path, **kw):
    return read_capture(path, **kw).table.to_pylist()


def reader_rows(path, fmt: str, fast: bool) -> list[dict]:
    """The rows of the format's reader, fast or line by line."""
    from dlqlens.capture.registry import FORMATS
    from dlqlens.decode.records import decode_frames

    return [r for fr in FORMATS[fmt].read(str(path), fast=fast)
            for r in decode_frames(fr).to_pylist()]


def _same_messages(a: list[dict], b: list[dict]) -> None:
    """Same messages: every column but the source file and the byte offset."""
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for k in x:
            if k not in ("source", "source_offset", "decode_issues"):
                assert x[k] == y[k], (x["message_number"], k)


# -- 1. line ends: CR alone, and mixed ----------------------------------------

@pytest.mark.parametrize("sample", [DMP, BCG], ids=["dmpmqmsg", "amqsbcg"])
@pytest.mark.parametrize("style", ["cr", "mixed"])
def test_cr_and_mixed_line_ends_read_like_lf(tmp_path, sample, style):
    data = sample.read_bytes()
    p = tmp_path / ("x" + sample.suffix)
    p.write_bytes(fuzz.relined(data, 7, style))
    want = rows_of(sample)
    assert len(want) > 50
    fmt = "dmpmqmsg" if sample == DMP else "amqsbcg"
    for fast in (True, False):
        got = reader_rows(p, fmt, fast)
        _same_messages(got, want)  # same lines: a CR alone ends a line
    # and in slices cut at every message boundary
    fuzz.check_split(str(p), "auto", rows_of(p))


def test_lone_cr_to_lf_waits_for_the_byte_after_a_final_cr():
    from dlqlens.capture.text import lone_cr_to_lf

    buf = bytearray(b"a\rb\r\nc\r")
    lone_cr_to_lf(buf, len(buf), False)
    assert buf == b"a\nb\r\nc\r"  # the last CR may start a CR LF of the next block
    lone_cr_to_lf(buf, len(buf), True)
    assert buf == b"a\nb\r\nc\n"


@settings(deadline=None)
@given(st.binary(max_size=64), st.integers(1, 64))
def test_lone_cr_to_lf_in_blocks_is_lone_cr_to_lf_of_the_whole(data, cut):
    from dlqlens.capture.text import lone_cr_to_lf

    whole = bytearray(data)
    lone_cr_to_lf(whole, len(whole), True)
    first = bytearray(data[:cut])
    lone_cr_to_lf(first, len(first), cut >= len(data))
    # the reader carries a final CR over to the next block
    keep = len(first) - 1 if cut < len(data) and first[-1:] == b"\r" else len(first)
    rest = bytearray(bytes(first[keep:]) + data[cut:])
    lone_cr_to_lf(rest, len(rest), True)
    assert bytes(first[:keep]) + bytes(rest) == bytes(whole)
    assert whole.count(b"\r") == whole.count(b"\r\n")


# -- 2. raw: enlarged length prefixes, a contradicting index, resynchronisation -

def _raw_messages(n):
    from dlqlens.capture.message import dead_letter

    return [dead_letter({"Format": "MQSTR"}, {"Reason": 2053}, f"msg {i}".encode())
            for i in range(n)]


@pytest.mark.parametrize("index", [False, True])
@pytest.mark.parametrize("k,count", [(0, 1), (1, 2), (3, 2), (4, 1)])
def test_enlarged_length_prefix_does_not_swallow_records(tmp_path, index, k, count):
    from dlqlens.capture import raw

    p = tmp_path / "c.bin"
    raw.write_raw(p, _raw_messages(6), index=index)
    p.write_bytes(fuzz.swallowed(p.read_bytes(), k, count))
    rows = rows_of(p)
    assert [bytes(r["payload"]) for r in rows] == [f"msg {i}".encode() for i in range(6)]
    assert [r["message_number"] for r in rows] == list(range(1, 7))
    bad = [r for r in rows if r["decode_status"] != "ok"]
    assert [r["message_number"] for r in bad] == [k + 1]
    (i,) = [i for i in bad[0]["decode_issues"] if i["code"] == "length_mismatch"]
    assert i["field"] == "record length" and i["offset"] == rows[k]["source_offset"]
    assert f"{count} record(s)" in i["expected"]
    assert not any(i["code"] == "index_mismatch" for r in rows for i in r["decode_issues"])
    fuzz.check_capture(p, "raw")


def test_index_that_contradicts_the_prefixes_is_reported(tmp_path):
    import struct

    from dlqlens.capture import raw

    p = tmp_path / "c.bin"
    raw.write_raw(p, _raw_messages(4), index=True)
    b = bytearray(p.read_bytes())
    at = len(b) - raw.TRAILER_SIZE - 8 * 4 + 8 * 2  # the third entry
    struct.pack_into(">Q", b, at, struct.unpack_from(">Q", b, at)[0] + 8)
    p.write_bytes(b)
    rows = rows_of(p)
    assert [r["decode_status"] for r in rows] == ["ok"] * 4
    (i,) = [i for r in rows for i in r["decode_issues"] if i["code"] == "index_mismatch"]
    assert i["offset"] == rows[2]["source_offset"]
    assert str(rows[2]["source_offset"] + 8) in i["expected"] and "index entry 3" in i["expected"]


def test_resynchronisation_finds_record_starts_once(tmp_path, monkeypatch):
    # was: a 1 MB window copied and searched per damaged record (65x slower
    # framing), and a scan to the end of the file for every record whose
    # length runs past the end (minutes on a 1.2 MB sparse file)
    import struct

    from dlqlens.capture import raw

    made, asked = [], []
    init, nxt = raw._Candidates.__init__, raw._Candidates.next
    monkeypatch.setattr(raw._Candidates, "__init__",
                        lambda self, *a: (made.append(a[2] - a[1]), init(self, *a))[1])
    monkeypatch.setattr(raw._Candidates, "next",
                        lambda self, p: (asked.append(p), nxt(self, p))[1])
    p = tmp_path / "damaged.bin"
    body = b"".join(b"\xde\xad\xbe\xef\x00\x01" + struct.pack(">I", len(m.md_bytes() + m.data))
                    + m.md_bytes() + m.data for m in _raw_messages(300))
    p.write_bytes(raw.MAGIC + struct.pack(">I", 1) + body)
    rows = rows_of(p)
    assert len(rows) == 600 and sum(r["decode_status"] == "ok" for r in rows) == 300
    assert made == [len(body)]  # the record starts of the file, found once
    assert len(asked) == 300  # one look-up per damaged stretch
    # every record head claims more than the file holds: each one a binary search
    made.clear(), asked.clear()
    sparse = bytearray(200_000)
    sparse[:16] = raw.MAGIC + struct.pack(">I", 1)
    head = _raw_messages(1)[0].md_bytes()[:8]
    for at in range(16, len(sparse) - 400, 400):
        struct.pack_into(">I", sparse, at, 50_000_000)
        sparse[at + 4:at + 12] = head
    p.write_bytes(sparse)
    (row,) = rows_of(p)
    assert row["decode_status"] == "truncated" and len(made) == 1 and len(asked) == 1


# -- 3. amqsbcg: a section banner lost -----------------------------------------

def _bcg_file(tmp_path, dlh_block: bool, drop: str, n: int = 3):
    from dlqlens.capture import amqsbcg
    from dlqlens.capture.message import dead_letter

    ms = [dead_letter({"Format": "MQSTR", "PutApplName": "orders", "PutDate": "20240315",
                       "PutTime": "10153012"},
                      {"Reason": 2053, "DestQName": f"APP.Q{i}", "PutDate": "20240315",
                       "PutTime": "10153157"}, f"payload {i}".encode(),
                      ccsid=819) for i in range(n)]
    p = tmp_path / "c.bcg"
    amqsbcg.write_amqsbcg(p, ms, dlh_block=dlh_block)
    lines = p.read_text().split("\n")
    second = next(i for i, t in enumerate(lines) if "MQGET of message number 2" in t)
    gone = next(i for i in range(second, len(lines)) if lines[i] == drop)
    p.write_text("\n".join(lines[:gone] + lines[gone + 1:]))
    return p, gone + 1


@pytest.mark.parametrize("dlh_block", [False, True])
def test_amqsbcg_message_without_its_descriptor_banner_is_read(tmp_path, dlh_block):
    p, _ = _bcg_file(tmp_path, dlh_block, "****Message descriptor****")
    for fast in (True, False):
        rows = reader_rows(p, "amqsbcg", fast)
        assert [bytes(r["payload"]) for r in rows] == [b"payload 0", b"payload 1", b"payload 2"]
        assert [r["decode_status"] for r in rows] == ["ok"] * 3
        assert rows[1]["dlh"]["DestQName"] == "APP.Q1" and rows[1]["md"]["Format"] == "MQDEAD"
    fuzz.check_capture(p, "amqsbcg")


def test_amqsbcg_dlh_block_without_its_banner_is_the_dlh(tmp_path):
    # was: its lines overwrote the MQMD's (md.Format MQSTR), dlh null, status ok
    p, _ = _bcg_file(tmp_path, True, "****Dead Letter Header****")
    for fast in (True, False):
        rows = reader_rows(p, "amqsbcg", fast)
        r = rows[1]
        assert r["md"]["Format"] == "MQDEAD" and r["md"]["Encoding"] == 546
        assert r["dlh"]["DestQName"] == "APP.Q1" and r["dlh"]["Reason"] == 2053
        assert r["layout"]["dlh_reconstructed"] and r["decode_status"] == "ok"
    fuzz.check_capture(p, "amqsbcg")


def test_amqsbcg_second_line_for_a_field_is_reported_not_applied(tmp_path):
    p, _ = _bcg_file(tmp_path, False, "****Message descriptor****")
    lines = p.read_text().split("\n")
    second = next(i for i, t in enumerate(lines) if "MQGET of message number 2" in t)
    at = next(i for i in range(second, len(lines)) if lines[i].startswith("  Format : "))
    lines.insert(at + 1, "  Format : 'MQSTR   '")
    p.write_text("\n".join(lines))
    r = reader_rows(p, "amqsbcg", False)[1]
    assert r["md"]["Format"] == "MQDEAD" and r["decode_status"] == "bad_descriptor"
    (i,) = [i for i in r["decode_issues"] if i["code"] == "bad_md_field"]
    assert i["field"] == "md.Format" and i["line"] == at + 2 and "MQSTR" in i["found"]
    assert f"line {at + 1}" in i["expected"]


# -- 4. dmpmqmsg: S lines keep their bytes ----------------------------------------

def _dmp_with_s_lines(tmp_path, chunks: list[bytes]):
    p = tmp_path / "s.dmp"
    p.write_bytes(b"A VER 2\nA FMT MQSTR   \nA CCS 1208\n"
                  + b"".join(fuzz.s_line(c) + b"\n" for c in chunks)
                  + b"\nA VER 2\nA FMT MQSTR   \nX 6E657874\n")
    return p


def test_s_line_of_utf8_text_keeps_its_bytes(tmp_path):
    # was: read back as text and encoded in Latin-1: '€' became '?', 'é' one byte
    text = "price €5 café".encode()
    p = _dmp_with_s_lines(tmp_path, [text, b"latin caf\xe9", b'~"quoted"~'])
    for fast in (True, False):
        rows = reader_rows(p, "dmpmqmsg", fast)
        assert bytes(rows[0]["payload"]) == text + b'latin caf\xe9~"quoted"~'
        assert rows[0]["payload_text"].startswith("price €5 café")
        assert bytes(rows[1]["payload"]) == b"next"


@settings(deadline=None, max_examples=50)
@given(st.lists(st.binary(min_size=0, max_size=40).filter(
    lambda b: b"\n" not in b and b"\r" not in b),
    min_size=1, max_size=4))
def test_s_lines_give_their_bytes_back(tmp_path_factory, chunks):
    p = _dmp_with_s_lines(tmp_path_factory.mktemp("s"), chunks)
    for fast in (True, False):
        rows = reader_rows(p, "dmpmqmsg", fast)
        assert bytes(rows[0]["payload"]) == b"".join(chunks)


# -- 5. payloads in CCSIDs without a codec ---------------------------------------

@pytest.mark.parametrize("ccsid", [1390, 937, 65535, -1])
def test_payload_in_unknown_ccsid_has_no_text_and_an_issue(tmp_path, ccsid):
    from dlqlens.capture import raw
    from dlqlens.capture.message import dead_letter

    m = dead_letter({"Format": "MQSTR"}, {"Reason": 2053, "CodedCharSetId": ccsid},
                    b"\x0e\x45\x41\x0f abc")
    p = tmp_path / "c.bin"
    raw.write_raw(p, [m])
    (r,) = rows_of(p)
    assert r["payload_ccsid"] == ccsid and r["payload_text"] is None
    assert bytes(r["payload"]) == b"\x0e\x45\x41\x0f abc"
    (i,) = [i for i in r["decode_issues"] if i["field"] == "payload_text"]
    assert i["code"] == "unknown_ccsid" and i["found"] == str(ccsid)


# -- 6. dmpmqmsg: the utility's banner before the first message --------------------

def test_dmpmqmsg_banner_before_the_first_message_is_no_message(tmp_path):
    p = tmp_path / "d.dmp"
    p.write_bytes(b"\n".join(fuzz.PREAMBLE) + b"\n" + DMP.read_bytes())
    want = rows_of(DMP)
    for fast in (True, False):
        got = reader_rows(p, "dmpmqmsg", fast)
        assert len(got) == len(want) and all(r["decode_status"] == "ok" for r in got)
        assert got[0]["source_line"] == want[0]["source_line"] + len(fuzz.PREAMBLE)
    fuzz.check_capture(p, "dmpmqmsg")


@pytest.mark.parametrize("first", [b"AVER 2", b"X 0102", b"STRAY"])
def test_dmpmqmsg_damaged_line_before_the_first_message_is_kept(tmp_path, first):
    p = tmp_path / "d.dmp"
    p.write_bytes(fuzz.PREAMBLE[0] + b"\n" + first + b"\n" + DMP.read_bytes())
    rows = reader_rows(p, "dmpmqmsg", False)
    assert rows[0]["decode_status"] == "bad_framing"
    assert bytes(rows[0]["raw"]) == first
    (i,) = rows[0]["decode_issues"]
    assert i["code"] == "unframed" and i["line"] == 2
    assert len(rows) == len(rows_of(DMP)) + 1


# -- 7. fields the capture does not hold: null, with an issue ------------------------

def _edit_second(path: Path, start: str, edit) -> Path:
    """``path`` with ``edit(line) -> line or None`` applied to the second
    message's lines (messages start at lines starting ``start``)."""
    lines = path.read_text().split("\n")
    firsts = [i for i, t in enumerate(lines) if t.startswith(start) or start in t[:40]]
    a, b = firsts[1], firsts[2]
    out = lines[:a] + [x for x in (edit(t) for t in lines[a:b]) if x is not None] + lines[b:]
    return out


def test_dmpmqmsg_elided_and_masked_attributes_are_null(tmp_path):
    def edit(t):
        if t.startswith("A MSI"):
            return "..."
        if t.startswith("A PAT"):
            return None
        if t.startswith("A USR"):
            return "A USR ********"
        if t.startswith("A RTM"):
            return "A RTM .."
        return t

    p = tmp_path / "d.dmp"
    p.write_text("\n".join(_edit_second(DMP, "A VER", edit)))
    for fast in (True, False):
        rows = reader_rows(p, "dmpmqmsg", fast)
        r = rows[1]
        assert r["decode_status"] == "truncated"
        for f in ("MsgId", "PutApplType", "UserIdentifier", "ReplyToQMgr"):
            assert r["md"][f] is None, f
        assert r["md"]["PutApplName"] and r["md"]["Format"] == "MQDEAD"
        got = {i["field"].split(" ")[0]: i for i in r["decode_issues"]}
        assert got["md.MsgId"]["code"] == "elided" and got["md.PutApplType"]["code"] == "elided"
        assert got["md.UserIdentifier"]["code"] == "masked"
        assert got["md.ReplyToQMgr"]["code"] == "masked"
        marker = p.read_text().split("\n").index("...") + 1
        assert got["md.MsgId"]["line"] == marker  # where the lines were cut out
        assert all(x["decode_status"] == "ok" for x in rows[:1] + rows[2:])
    fuzz.check_capture(p, "dmpmqmsg")


def test_amqsbcg_elided_and_masked_descriptor_lines_are_null(tmp_path):
    def edit(t):
        if t.startswith("  DestQMgrName") or t.startswith("  BackoutCount"):
            return None
        if t.startswith("  MsgId"):
            return "  MsgId : X'" + "*" * 48 + "'"
        if t.startswith("  PutApplName"):
            return "  PutApplName    : 'app*****                    '"
        return t

    p = tmp_path / "b.bcg"
    p.write_text("\n".join(_edit_second(BCG, "MQGET of message number", edit)))
    for fast in (True, False):
        rows = reader_rows(p, "amqsbcg", fast)
        r = rows[1]
        assert r["decode_status"] == "truncated"
        assert r["md"]["MsgId"] is None and r["md"]["BackoutCount"] is None
        assert r["md"]["PutApplName"] is None and r["dlh"]["PutApplName"] is None
        assert r["dlh"]["DestQMgrName"] is None and r["dlh"]["DestQName"]
        codes = {i["field"]: i["code"] for i in r["decode_issues"]}
        assert codes["dlh.DestQMgrName"] == "elided" and codes["md.MsgId"] == "masked"
    fuzz.check_capture(p, "amqsbcg")


def test_explanation_says_unknown_for_a_field_the_capture_does_not_hold(tmp_path):
    from dlqlens.explain.message import explain

    p = tmp_path / "b.bcg"
    p.write_text("\n".join(_edit_second(
        BCG, "MQGET of message number",
        lambda t: None if t.startswith("  DestQMgrName") or t.startswith("  PutApplType")
        else t)))
    text = explain(rows_of(p)[1]).to_text()
    assert "unknown queue manager" in text and "PutApplType unknown" in text


# -- 8. errors name the line where the fault is ---------------------------------------

def test_amqsbcg_unreadable_descriptor_value_is_named_on_its_line(tmp_path):
    # was: "md.Format: expected a 'Format :' descriptor line, found none" on the
    # MQGET line, for a Format line whose closing quote is typographic
    lines = _edit_second(BCG, "MQGET of message number",
                         lambda t: "  Format : 'MQSTR   \u2019" if t.startswith("  Format") else t)
    p = tmp_path / "b.bcg"
    p.write_text("\n".join(lines))
    at = next(i for i, t in enumerate(lines) if "\u2019" in t) + 1
    for fast in (True, False):
        r = reader_rows(p, "amqsbcg", fast)[1]
        (i,) = [i for i in r["decode_issues"] if i["field"] == "md.Format"]
        assert i["line"] == at and "\u2019" in i["found"] and i["code"] == "bad_md_field"
        assert "none" not in i["found"]


def test_amqsbcg_dump_cut_short_is_named_where_it_stops(tmp_path):
    lines = BCG.read_text().split("\n")
    gets = [i for i, t in enumerate(lines) if "MQGET of message number" in t]
    dump = [i for i in range(gets[1], gets[2]) if lines[i][:8].strip() and
            lines[i][8:9] == ":"]
    cut = dump[1]
    lines[cut] = lines[cut][:20] + "..."
    del lines[cut + 1:dump[-1] + 1]
    p = tmp_path / "b.bcg"
    p.write_text("\n".join(lines))
    r = reader_rows(p, "amqsbcg", False)[1]
    lines_named = {i["line"] for i in r["decode_issues"] if i["field"] == "hex dump"}
    assert lines_named == {cut + 1}, r["decode_issues"]


def test_dmpmqmsg_data_lines_outside_a_message_say_so(tmp_path):
    # was: "line: expected 'A', 'N', 'X', 'S', 'T' or '*' line, found 'X 444C48...'"
    p = tmp_path / "d.dmp"
    p.write_text("X 444C4820\n\n" + DMP.read_text())
    r = reader_rows(p, "dmpmqmsg", False)[0]
    (i,) = r["decode_issues"]
    assert i["line"] == 1 and "'A' or 'N' line before" in i["expected"]
    assert "outside any message" in i["found"]


# -- 9. a named format that frames nothing is an error ------------------------------

def test_named_format_that_frames_nothing_is_an_error(tmp_path):
    from dlqlens.errors import CaptureError

    with pytest.raises(CaptureError) as e:
        read_capture(DMP, format="amqsbcg")
    msg = str(e.value)
    assert msg.startswith(str(DMP)) and "no message framed" in msg
    assert "MQGET of message number" in msg and "* QLOAD Version" in msg
    with pytest.raises(CaptureError, match="expected dmpmqmsg lines"):
        _junk_as_dmpmqmsg(tmp_path)
    # the format's own shape holding no message (an empty queue): no error
    empty = tmp_path / "empty.bcg"
    empty.write_text("\nAMQSBCG0 - starts here\n**********************\n \n"
                     " MQOPEN - 'DLQ'\n \n \n \n No more messages \n MQCLOSE\n")
    assert read_capture(empty, format="amqsbcg").stats.framed == 0


def _junk_as_dmpmqmsg(tmp_path):
    p = tmp_path / "junk.txt"
    p.write_text("hello\nworld\n")  # the preamble of no message
    return read_capture(p, format="dmpmqmsg")


def test_decode_command_with_nothing_decoded_exits_non_zero(tmp_path, capsys):
    from dlqlens.cli import main

    empty = tmp_path / "empty.bcg"
    empty.write_text("\nAMQSBCG0 - starts here\n \n No more messages \n")
    assert main(["decode", str(empty)]) == 1
    assert "nothing decoded" in capsys.readouterr().err
    assert main(["decode", str(DMP)]) == 0
    assert main(["decode", "--format", "amqsbcg", str(DMP)]) != 0
    assert "no message framed" in capsys.readouterr().err


# -- 10. the dmpmqmsg banner regex is linear -----------------------------------------

def test_dmpmqmsg_banner_with_a_long_run_of_blanks(tmp_path):
    import signal

    from dlqlens.capture.dmpmqmsg.sniffing import banner, created

    head = (b"* QLOAD Version:8.0 Created:Tue Mar 12 14:04:00 2024" + b" " * 200_000
            + b"\n* Qmgr  = x" + b" " * 200_000 + b"y\n* Queue = DLQ" + b" " * 200_000 + b"\r\n")

    def boom(*_):
        raise TimeoutError("the banner regex backtracks")
    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(20)  # a hang guard: was minutes (quadratic in the blanks)
    try:
        assert banner(head) == (None, "DLQ")  # 'x   y' is no object name
        assert created(head).year == 2024
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert banner(b"* Qmgr  = QM1   \n* Queue = SYSTEM.DEAD.LETTER.QUEUE  \r\n") == \
        ("QM1", "SYSTEM.DEAD.LETTER.QUEUE")


def test_field_view_says_unknown_for_a_field_the_capture_does_not_hold(tmp_path):
    from dlqlens.widgets.fields import header_fields

    p = tmp_path / "b.bcg"
    p.write_text("\n".join(_edit_second(
        BCG, "MQGET of message number",
        lambda t: None if t.startswith("  DestQMgrName") or t.startswith("  MsgId") else t)))
    fields = {(f.structure, f.name): f.value for f in header_fields(rows_of(p)[1])}
    assert fields[("MQMD", "MsgId")] == "unknown"
    assert fields[("MQDLH", "DestQMgrName")] == "unknown"


# -- found by the fuzzer (28 November 2026) -------------------------------------

def test_a_browse_end_inside_a_message_is_planned_as_the_reader_frames_it(tmp_path):
    """A 'No more messages' line pasted between a message's MQGET line and its
    data: the line reader ends that message there, and the data banner after it
    starts a fragment (two messages). The planner of slices counted one, and the
    split read refused the file ("planned as 1 message(s) ..., framed 2")."""
    text = BCG.read_bytes()
    at = text.index(b"****Message descriptor****", text.index(b"MQGET of message number 1"))
    p = tmp_path / "x.bcg"
    p.write_bytes(text[:at] + b" No more messages " + text[at + len(b"****Message descriptor****"):])
    rows = rows_of(p)
    assert len(rows) == len(rows_of(BCG)) + 1
    fuzz.check_split(str(p), "auto", rows)
