"""Hex dumps (issue 23): the parsers, the fast paths, sniffing refusals and
the leading-structure evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlqlens.capture import hexdump
from dlqlens.capture.hexdump import parse
from dlqlens.capture.reader import read_capture
from dlqlens.capture.registry import FORMATS, detect_format
from dlqlens.decode.leading import Leading, leading_structure
from dlqlens.errors import CaptureError
from tests.builders import dlh_fields, md_fields
from dlqlens.capture.message import dead_letter

HEX = Path(__file__).resolve().parents[2] / "datasets" / "hexdumps"


def line_parser(text, layout):
    saved = parse._fast_offset_dump, parse._fast_stream
    parse._fast_offset_dump = lambda *a: None
    parse._fast_stream = lambda *a: None
    try:
        return hexdump.records(text, layout)
    finally:
        parse._fast_offset_dump, parse._fast_stream = saved


def key(recs):
    return [(r.data, r.line, r.offset, r.stated_length, r.cut) for r in recs]


@pytest.mark.parametrize("path", sorted(p.name for p in HEX.glob("*.txt")
                                        if "_ispf_" not in p.name))
def test_fast_paths_give_the_line_parsers_records(path):
    layout = path.split("_")[3]
    text = (HEX / path).read_text(encoding="latin-1")
    assert key(hexdump.records(text, layout)) == key(line_parser(text, layout))


def message(payload=b"hello"):
    m = dead_letter(md_fields(), dlh_fields(), payload)
    return m.md_bytes() + m.data


def test_xxd_does_not_claim_amqsbcg_output(tmp_path):
    p = tmp_path / "browse.txt"
    FORMATS["amqsbcg"].write(p, [dead_letter(md_fields(), dlh_fields(), b"x")])
    assert detect_format(str(p)) == "amqsbcg"
    assert not any(hexdump.SNIFF[name](p.read_bytes()) for name in hexdump.LAYOUTS)


def test_a_dump_of_no_mq_structure_is_refused_with_the_evidence(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text(hexdump.render([b"GIF89a" + bytes(40)], "xxd"))
    with pytest.raises(CaptureError, match="unknown capture format"):
        detect_format(str(p))
    (row,) = read_capture(str(p), format="xxd").table.to_pylist()
    assert row["decode_status"] == "bad_descriptor"
    (issue,) = row["decode_issues"]
    assert issue["code"] == "bad_md" and "X'47494638'" in issue["found"] and issue["line"] == 1


def test_leading_structure_byte_order_and_family():
    m = dead_letter(md_fields(), dlh_fields(), b"x", encoding=785, ccsid=500)
    lead = leading_structure(m.md_bytes())
    assert isinstance(lead, Leading) and lead.name == "MQMD" and lead.big_endian and lead.ebcdic
    lead = leading_structure(message()[364:])  # MQDLH first, little-endian ASCII
    assert lead.name == "MQDLH" and not lead.big_endian and not lead.ebcdic
    why = leading_structure(b"DLH \x00\x00\x00\x07" + bytes(40))
    assert isinstance(why, str) and "7 big-endian" in why and "expected 1" in why


def test_ispf_screens_scrolled_right_are_joined_and_a_cut_record_says_where(tmp_path):
    rec = message(b"z" * 30)
    one = hexdump.render([rec], "ispf")
    both = one + "".join(hexdump.dump.ispf([rec], first_column=c) for c in range(73, len(rec) + 1, 72))
    assert parse.parse_ispf(both)[0].data == rec
    cut = parse.parse_ispf(one)[0]
    assert cut.data == rec[:72] and "column 72" in cut.cut
    p = tmp_path / "s.txt"
    p.write_text(one, encoding="latin-1")
    (row,) = read_capture(str(p)).table.to_pylist()
    assert row["capture_format"] == "ispf" and row["decode_status"] == "truncated"
    assert row["md"]["MsgId"] is not None and row["md"]["CorrelId"] is None  # past column 72
    assert row["data_truncated"]


def test_hex_stream_in_a_log_line_and_wrapped_with_offsets(tmp_path):
    rec = message(b"from the gateway")
    p = tmp_path / "log.txt"
    p.write_text(f"2024-03-15 10:00:01 WARN dead letter body={rec.hex()} size={len(rec)}\n"
                 + hexdump.dump.stream(rec, width=32, offsets=True, upper=False))
    rows = read_capture(str(p)).table.to_pylist()
    assert [r["capture_format"] for r in rows] == ["hex-stream"] * 2
    assert [r["payload"] for r in rows] == [b"from the gateway"] * 2
    assert [r["source_line"] for r in rows] == [1, 2]


def test_a_damaged_dmpmqmsg_file_is_not_taken_for_a_hex_stream(tmp_path):
    p = tmp_path / "q.dmp"
    FORMATS["dmpmqmsg"].write(p, [dead_letter(md_fields(), dlh_fields(), b"x" * 80)])
    # the banner gone and only the hex lines and a few attributes left
    body = "\n".join(ln for ln in p.read_text().splitlines()
                     if ln.startswith(("X ", "A FMT", "A VER"))).encode()
    assert not hexdump.SNIFF["hex-stream"](body)
    first_x = next(ln for ln in body.decode().split("\n") if ln.startswith("X "))
    assert parse.stream_hex(first_x) is not None  # its lines are hex runs
