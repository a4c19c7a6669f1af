"""Pieces of amqsbcg output (docs/capture-formats.md, "amqsbcg fragments"):
the golden fragments of datasets/amqsbcg-fragments/ (written by
datasets/fragments.py from one simulator run) decode to the raw capture of
the same messages where they hold a field, and to null with an issue where
they do not."""

from __future__ import annotations

import filecmp
import json
import subprocess
import sys

import pytest

from dlqlens.capture.amqsbcg import read_amqsbcg, sniff
from dlqlens.capture.reader import read_capture
from dlqlens.capture.registry import detect_format
from dlqlens.errors import CaptureError
from tests.conftest import ROOT

FRAGMENTS = ROOT / "datasets" / "amqsbcg-fragments"
NAMES = sorted(p.name[:-len(".expected.json")] for p in FRAGMENTS.glob("*.expected.json"))


@pytest.fixture(scope="module")
def reference():
    rows = read_capture(FRAGMENTS / "dlq.raw").table.to_pylist()
    return {r["message_number"]: r for r in rows}


def _issue_for(issues, field):
    """An issue of the row names ``field`` (or the section it belongs to)."""
    section = field.split(".")[0]
    return any(i["field"] in (field, section) for i in issues)


def test_every_layout_is_among_the_fragments():
    assert {"md-dlh-data", "dlh-data", "dlh-only", "data-only", "md-only", "md-elided",
            "dlh-elided-hex-cut", "hex-cut", "two-dlh-data", "md-data"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_fragment_is_recognised_as_amqsbcg(name):
    assert detect_format(str(FRAGMENTS / (name + ".bcg"))) == "amqsbcg"


@pytest.mark.parametrize("name", NAMES)
def test_fragment_decodes_as_the_raw_capture_where_it_holds_a_field(name, reference):
    want = json.loads((FRAGMENTS / (name + ".expected.json")).read_text(encoding="utf-8"))
    rows = read_capture(FRAGMENTS / (name + ".bcg")).table.to_pylist()
    assert len(rows) == len(want["messages"])
    for row, exp in zip(rows, want["messages"]):
        ref = reference[exp["message_number"]]
        missing = set(exp["missing"])
        issues = row["decode_issues"]
        for section in ("md", "dlh"):
            for field, value in ref[section].items():
                name_ = f"{section}.{field}"
                got = None if row[section] is None else row[section][field]
                if name_ in missing:
                    assert got is None, (name_, got)
                    # the MQDLH of a message whose data is missing (header_truncated)
                    # or whose descriptor is (the section's issue names the MQDLH)
                    assert _issue_for(issues, name_) or section == "dlh" and any(
                        i["code"] == "header_truncated" or i["field"] == "md"
                        and "MQDLH" in i["found"] for i in issues), name_
                else:
                    assert got == value, (name_, got, value)
        if "payload" in missing:
            assert row["payload"] is None and row["payload_text"] is None
            assert row["data_length"] is None
            assert any(i["code"] == "data_truncated" for i in issues)
        elif exp["hex_cut"]:
            assert ref["payload"].startswith(row["payload"])
            assert len(row["payload"]) < len(ref["payload"])
            assert any(i["code"] == "data_truncated" for i in issues)
        else:
            assert row["payload"] == ref["payload"]
            # the payload's Format and CCSID come from the MQMD (or the MQDLH
            # before it): the data alone is bytes, its text unknown
            text_known = "md.Format" not in missing
            assert row["payload_text"] == (ref["payload_text"] if text_known else None)
        if not missing and not exp["hex_cut"]:
            assert row["reason_name"] == ref["reason_name"]
            assert row["put_ts"] == ref["put_ts"]


@pytest.mark.parametrize("name", NAMES)
def test_fast_and_line_readers_frame_fragments_alike(name):
    path = str(FRAGMENTS / (name + ".bcg"))
    fast = [f for fr in read_amqsbcg(path) for f in [fr]]
    slow = list(read_amqsbcg(path, fast=False))
    assert sum(len(f) for f in fast) == sum(len(f) for f in slow)
    assert [bytes(f.data) for f in fast] == [bytes(f.data) for f in slow]
    assert [f.unknown for f in fast] == [f.unknown for f in slow]


def test_generator_reproduces_the_committed_fragments(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "datasets" / "fragments.py"), "--out",
                    str(tmp_path)], check=True, capture_output=True)
    committed = sorted(p.name for p in FRAGMENTS.iterdir())
    assert committed == sorted(p.name for p in tmp_path.iterdir())
    for f in committed:
        assert filecmp.cmp(FRAGMENTS / f, tmp_path / f, shallow=False), f


@pytest.mark.parametrize("text", [
    # amqsbcg's dump lines alone: as well a hex dump of another tool; amqsbcg does not
    # claim them, the hex-dump readers do (and read the same bytes, below)
    "00000000:  444C 4820 0100 0000 F307 0000 4150 502E 'DLH ........APP.'\n",
    "00000000: 444c 4820 0100 0000 f307 0000 4150 502e  DLH ........APP.\n",
], ids=["amqsbcg-dump-lines", "xxd"])
def test_dump_lines_alone_are_a_hex_dump_not_amqsbcg(text, tmp_path):
    from dlqlens.capture import hexdump

    assert not sniff(text.encode())
    p = tmp_path / "piece.txt"
    p.write_text(text)
    layout = detect_format(str(p))
    assert layout in ("xxd", "hex-stream")
    (record,) = hexdump.records(text, layout)
    assert bytes(record.data) == bytes.fromhex("444C482001000000F30700004150502E")


@pytest.mark.parametrize("text", [
    # a section banner without what amqsbcg prints under it
    "****Dead Letter Header****\n  Reason   : 2053\n",
    "****   Message      ****\n\n length - 16 bytes\n\nsome text\n",
    "****   Message      ****\n",
], ids=["dlh-banner-alone", "data-banner-no-dump", "banner-only"])
def test_auto_detection_refuses_a_fragment_that_could_be_something_else(text, tmp_path):
    assert not sniff(text.encode())
    p = tmp_path / "piece.txt"
    p.write_text(text)
    with pytest.raises(CaptureError, match="unknown capture format"):
        detect_format(str(p))


def test_a_fragment_among_other_text_is_recognised(tmp_path):
    piece = (FRAGMENTS / "dlh-data.bcg").read_text(encoding="utf-8")
    text = "Hi, our DLQ has this message, what happened?\r\n\r\n" + piece.replace("\n", "\r\n")
    assert sniff(text.encode())
    p = tmp_path / "ticket.txt"
    p.write_text(text, newline="")
    rows = read_capture(p).table.to_pylist()
    assert len(rows) == 1 and rows[0]["dlh"]["Reason"] == 2053
