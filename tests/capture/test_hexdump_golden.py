"""Hex dumps (issue 23): the golden files of datasets/hexdumps/ and the
round trip against the raw capture of the same simulator messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dlqlens.capture.reader import read_capture
from tests.builders import load_script
from dlqlens.capture.registry import detect_format

ROOT = Path(__file__).resolve().parents[2]
HEX = ROOT / "datasets" / "hexdumps"
MANIFEST = json.loads((HEX / "MANIFEST.json").read_text())
hexgen = load_script(HEX / "generate.py", "hexdumps_generate")

NAMES = sorted(MANIFEST)


def rows(path, fmt="auto"):
    return read_capture(str(path), format=fmt).table.to_pylist()


def test_every_layout_structure_encoding_whole_and_cut_is_covered():
    seen = {tuple(n.split("_")[i] for i in (0, 1, 2, 3, 4)) for n in NAMES}
    layouts = {s[3] for s in seen}
    assert layouts == {"ispf", "xxd", "hexdump-c", "od", "hex-stream"}
    assert {s[2] for s in seen} == {"md", "dlh", "xqh", "tm", "rfh2"}
    assert {(s[0], s[1]) for s in seen} == {("ascii", "le"), ("ascii", "be"), ("ebcdic", "be")}
    assert {s[4] for s in seen} == {"whole", "cut"}


def test_generator_reproduces_the_committed_dumps():
    for name, (text, _) in hexgen.files().items():
        assert (HEX / f"{name}.txt").read_text(encoding="latin-1") == text, name


@pytest.mark.parametrize("name", NAMES)
def test_golden(name):
    path = HEX / f"{name}.txt"
    layout = MANIFEST[name]["layout"]
    assert detect_format(str(path)) == layout
    got = [hexgen.golden_row(r) for r in rows(path)]
    want = [json.loads(ln) for ln in (HEX / f"{name}.expected.jsonl").read_text().splitlines()]
    assert json.loads(json.dumps(got, default=str)) == want


_RAW: dict = {}


def raw_rows(source):
    if source not in _RAW:
        _RAW[source] = rows(ROOT / "datasets" / "dlq-sample" / source, "raw")
    return _RAW[source]


def _md1(md):
    from dlqlens.mq.structs import MQMD
    return {f.name: md[f.name] for f in MQMD.fields if f.version == 1 and f.name != "Version"}


@pytest.mark.parametrize("name", [n for n in NAMES if n.endswith("_whole")])
def test_round_trip_same_fields_as_the_raw_capture(name):
    got = rows(HEX / f"{name}.txt")
    recs = MANIFEST[name]["records"]
    assert len(got) == len(recs)
    for row, rec in zip(got, recs):
        want = raw_rows(rec["source"])[rec["message_number"] - 1]
        s = rec["structure"]
        assert row["decode_status"] in ("ok", "truncated")
        if s == "md":
            assert row["md"] == want["md"]
            assert row["layout"]["md_byte_order"] == (
                "big" if rec["md_big_endian"] else want["layout"]["md_byte_order"])
            assert row["layout"]["md_charset"] == want["layout"]["md_charset"]
            assert row["decode_status"] == want["decode_status"] == "ok"
        elif s == "xqh":
            assert _md1(row["md"]) == _md1(want["md"])
            assert row["xqh"]["RemoteQName"] == want["dlh"]["DestQName"]
            assert row["xqh"]["RemoteQMgrName"] == want["dlh"]["DestQMgrName"]
            assert row["decode_status"] == "ok"
        else:
            assert row["md"] is None
            assert [i["code"] for i in row["decode_issues"]] == ["not_captured"]
        if s in ("md", "dlh", "xqh"):
            assert row["dlh"] == want["dlh"]
        if s != "rfh2":
            assert row["tm"] == want["tm"]
            assert row["payload"] == want["payload"]
            assert row["payload_text"] == want["payload_text"]
        else:
            assert row["rfh2"]["NameValueData"] == ["<usr><origin>dlqlens-sim</origin></usr>"]
            assert row["payload"] == want["payload"]


@pytest.mark.parametrize("name", [n for n in NAMES if n.endswith("_cut")])
def test_cut_dumps_decode_what_is_there_and_say_what_is_not(name):
    got = rows(HEX / f"{name}.txt")
    layout = MANIFEST[name]["layout"]
    assert got, f"{name}: nothing decoded"
    for row in got:
        assert row["decode_status"] in ("ok", "truncated", "bad_header"), row["decode_issues"]
        codes = {i["code"] for i in row["decode_issues"]}
        if layout in ("ispf", "hexdump-c", "od"):  # these say the dump was cut
            assert "not_captured" in codes
            assert row["data_truncated"]
            assert "bad_struc_length" not in codes  # the capture's cut, not the header's
        for i in row["decode_issues"]:
            assert i["line"] is not None and i["field"]
