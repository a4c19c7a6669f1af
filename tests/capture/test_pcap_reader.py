"""The pcap/pcapng reader of MQ client traffic: golden files, the round trip
against the raw capture of the same messages, TCP reassembly, the real captures."""

from __future__ import annotations

import datetime as dt
import filecmp
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from tests.builders import dlq_message, load_script, real

from dlqlens.capture.jsonl import records
from dlqlens.capture.pcap import fap, sniff, write_pcap
from dlqlens.capture.pcap.tcp import Packet, reassemble
from dlqlens.capture.raw import write_raw
from dlqlens.capture.reader import read_capture
from dlqlens.capture.registry import detect_format
from dlqlens.errors import CaptureError

GOLDEN = Path(__file__).parent / "pcap_golden"
golden = load_script(GOLDEN / "generate.py", "pcap_golden_generate")

UTC = dt.timezone.utc
#: fields that say where a row came from, not what the message is
_WHERE = ("source", "capture_format", "source_offset", "source_line", "layout", "network",
          "raw", "decode_issues", "message_number")


def _rows(path) -> list[dict]:
    return list(records(read_capture(str(path)).table))


# --------------------------------------------------------------------------
# golden files
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(golden.FILES))
def test_golden_capture_decodes_to_its_expected_rows(name):
    path = GOLDEN / name
    assert detect_format(str(path)) == "pcap"
    expected = [json.loads(line) for line in open(str(path) + ".expected.jsonl", encoding="utf-8")]
    got = [golden._relative(r, str(path), name) for r in _rows(path)]
    assert got == expected


def test_golden_generator_reproduces_the_committed_files(tmp_path):
    subprocess.run([sys.executable, str(GOLDEN / "generate.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    for name in golden.FILES:
        for f in (name, name + ".expected.jsonl"):
            assert filecmp.cmp(GOLDEN / f, tmp_path / f, shallow=False), f


@pytest.mark.parametrize("name", sorted(golden.FILES))
def test_round_trip_same_fields_as_the_raw_capture(tmp_path, name):
    sample, kw = golden.FILES[name]
    raw = tmp_path / "same.raw"
    write_raw(raw, golden.sample_messages(sample))
    want = [{k: v for k, v in r.items() if k not in _WHERE} for r in _rows(raw)]
    got = [r for r in _rows(GOLDEN / name) if r["network"]["verb"] is not None]
    assert len(want) == golden.COUNT
    if "gap" in name:
        # one message lost bytes in the gap: the others are whole and equal
        cut = [r for r in got if r["decode_status"] != "ok"]
        assert [r["decode_status"] for r in cut] == ["truncated"]
        assert cut[0]["data_truncated"] and cut[0]["data_length"] == want[1]["data_length"]
        assert want[1]["payload_hex"].startswith(cut[0]["payload_hex"])
        got = [r for r in got if r["decode_status"] == "ok"]
        want = [w for i, w in enumerate(want) if i != 1]
    assert len(got) == len(want)
    for w, g in zip(want, got):
        g = {k: v for k, v in g.items() if k not in _WHERE}
        # the MQMD's PutDate/PutTime: the same values (the raw capture's)
        assert g == w
    for g in got:
        net = g["network"]
        assert net["queue_name"] == kw["queue"]
        assert net["verb"] == kw["verb"]
        assert net["direction"] == ("from_qmgr" if kw["verb"] == "MQGET" else "to_qmgr")
        assert (net["client_address"], net["client_port"]) == ("10.1.1.2", 50414)
        assert (net["server_address"], net["server_port"]) == ("10.1.1.1", 1414)
        assert (net["conversation_id"] is None) == (not kw["multiplexed"])


def test_gap_leaves_the_lost_bytes_unknown_and_counts_the_unframed_tail():
    rows = _rows(GOLDEN / "put_tshm_le_gap.pcapng")
    statuses = [r["decode_status"] for r in rows]
    assert statuses.count("truncated") == 1 and statuses.count("bad_framing") == 1
    cut = rows[statuses.index("truncated")]
    assert "lost the stream's bytes" in cut["decode_issues"][0]["message"]
    tail = rows[statuses.index("bad_framing")]
    assert tail["decode_issues"][0]["code"] == "unframed" and tail["raw_hex"]


# --------------------------------------------------------------------------
# TCP reassembly
# --------------------------------------------------------------------------

def _pk(frame, seq, data, syn=False):
    return Packet(frame, float(frame), seq, data, syn)


def test_reassembly_orders_by_sequence_and_drops_copies():
    ra = reassemble([_pk(1, 99, b"", syn=True), _pk(2, 105, b"world"), _pk(3, 100, b"hello"),
                     _pk(4, 100, b"hello"), _pk(5, 103, b"lowor")])
    assert [bytes(r.data) for r in ra.runs] == [b"helloworld"]
    assert ra.gaps == [] and ra.duplicate_bytes == 10
    # byte 7 ('r') was first placed by frame 5 (sequence 103, before frame 2's 105)
    assert ra.runs[0].packet_at(0) == (3, 3.0, -1) and ra.runs[0].packet_at(7) == (5, 5.0, -1)
    assert ra.runs[0].packet_at(9) == (2, 2.0, -1)


def test_reassembly_keeps_a_gap_as_a_gap_and_follows_a_sequence_wrap():
    top = (1 << 32) - 3
    ra = reassemble([_pk(1, top, b"abc"), _pk(2, 0, b"def"), _pk(3, 10, b"xyz")])
    assert [(r.start, bytes(r.data)) for r in ra.runs] == [(0, b"abcdef"), (13, b"xyz")]
    assert ra.gaps == [(6, 13)]


def test_reassembly_with_a_syn_whose_first_bytes_were_not_captured():
    ra = reassemble([_pk(1, 0, b"", syn=True), _pk(2, 11, b"later")])
    assert ra.missing_start == 10 and ra.runs[0].start == 10


# --------------------------------------------------------------------------
# the MQ layer
# --------------------------------------------------------------------------

def test_sniff_recognises_pcap_in_both_byte_orders_and_nanoseconds_and_pcapng():
    for magic in ("a1b2c3d4", "d4c3b2a1", "a1b23c4d", "4d3cb2a1"):
        assert sniff(bytes.fromhex(magic) + bytes(20))
    assert sniff(bytes.fromhex("0a0d0d0a") + bytes(4) + bytes.fromhex("4d3c2b1a"))
    assert not sniff(b"MD  " + bytes(30)) and not sniff(bytes.fromhex("0a0d0d0a") + bytes(8))


def test_segments_split_across_tsh_and_tcp_are_joined(tmp_path):
    msgs = [dlq_message(b"x" * 3000, dlh={"Reason": 2053, "DestQName": "APP.IN"})]
    p = tmp_path / "big.pcap"
    write_pcap(p, msgs, max_segment=512, mss=100, byteorder=">", multiplexed=False)
    (row,) = _rows(p)
    assert row["decode_status"] == "ok" and row["dlh"]["Reason"] == 2053
    assert row["payload_hex"] == (b"x" * 3000).hex().upper()
    assert row["network"]["conversation_id"] is None


def test_nanosecond_pcap_gives_the_packet_time(tmp_path):
    import dpkt

    src = tmp_path / "us.pcap"
    write_pcap(src, [dlq_message(b"t")], start_ts=1_700_000_000.25)
    dst = tmp_path / "ns.pcap"
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        w = dpkt.pcap.Writer(fo, snaplen=65535, linktype=1, nano=True)
        for ts, buf in dpkt.pcap.Reader(fi):
            w.writepkt(buf, ts=ts)
    assert open(dst, "rb").read(4) == bytes.fromhex("4d3cb2a1")
    (row,) = _rows(dst)
    # SYN, SYN, MQOPEN, reply, MQPUT: the fifth packet, 1 ms apart
    assert row["network"]["frame"] == 5
    assert row["network"]["packet_ts"] == "2023-11-14T22:13:20.254000Z"


def test_not_a_pcap_and_an_unknown_link_type_are_refused_with_the_file_named(tmp_path):
    from dlqlens.capture.pcap import read_pcap

    bad = tmp_path / "bad.pcap"
    bad.write_bytes(bytes.fromhex("d4c3b2a1") + b"\0" * 10)
    with pytest.raises(CaptureError, match="bad.pcap"):
        list(read_pcap(str(bad)))
    odd = tmp_path / "odd.pcap"
    odd.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 147))
    with pytest.raises(CaptureError, match="link type.*found 147"):
        list(read_pcap(str(odd)))


def test_a_capture_cut_inside_a_packet_record_keeps_the_messages_before(tmp_path):
    p = tmp_path / "cut.pcap"
    write_pcap(p, [dlq_message(b"one"), dlq_message(b"two" * 200)])
    data = p.read_bytes()
    p.write_bytes(data[:data.find(b"two") + 100])  # inside the second MQPUT's packet
    rows = _rows(p)
    assert rows[0]["decode_status"] == "ok" and rows[0]["payload_hex"] == b"one".hex().upper()
    assert rows[1]["decode_status"] != "ok"


def test_put_outcome_from_the_reply_that_follows_on_the_conversation(tmp_path):
    p = tmp_path / "full.pcap"
    msgs = [dlq_message(b"a"), dlq_message(b"b"), dlq_message(b"c")]
    write_pcap(p, msgs, verb="MQPUT1", reasons={1: 2053})
    got = [(r["network"]["completion_code"], r["network"]["reason"],
            r["network"]["reason_name"]) for r in _rows(p)]
    assert got == [(0, 0, "MQRC_NONE"), (2, 2053, "MQRC_Q_FULL"), (0, 0, "MQRC_NONE")]

    def lose_second_reply(packets):
        replies = [k for k, pk in enumerate(packets) if pk[0] == 1]
        return [pk for k, pk in enumerate(packets) if k != replies[1]]

    write_pcap(p, msgs, verb="MQPUT1", packet_order=lose_second_reply)
    # the second put's reply was not captured: unknown, and not taken from the third's
    got = [r["network"]["reason"] for r in _rows(p)]
    assert got == [0, None, 0]


def test_opcodes_are_wiresharks():
    # packet-mq.c: MQ_TST_MQPUT 0x86, MQ_TST_MQPUT1 0x87, MQ_TST_MQGET_REPLY 0x95,
    # MQ_TST_MQOPEN 0x83, MQ_TST_MQOPEN_REPLY 0x93, MQ_TCF_FIRST 0x10, MQ_TCF_LAST 0x20
    assert (fap.MQPUT, fap.MQPUT1, fap.MQGET_REPLY, fap.MQOPEN, fap.MQOPEN_REPLY) == \
        (0x86, 0x87, 0x95, 0x83, 0x93)
    assert (fap.TCF_FIRST, fap.TCF_LAST) == (0x10, 0x20)


# --------------------------------------------------------------------------
# the real captures (/work/shared/real-captures/pcap, SOURCES.md)
# --------------------------------------------------------------------------

EARLY = ("pcap", "jencheng1_jms2_complete_evidence_20250913_012933_mq_traffic.pcap")
LATE = ("pcap", "jencheng1_jms2_complete_evidence_20250913_110827_mq_traffic.pcap")


@pytest.mark.parametrize("parts, count, by_qmgr", [
    # Read by hand: `strings -n 8 FILE | grep -c '<Dst>queue:///UNIFORM.QUEUE'` gives 32 and
    # 16: every packet is in the file twice (captured on two interfaces), so 16 and 8 MQPUTs;
    # the MQCONN of each connection names QM1 (10.10.10.10) or QM2 (10.10.10.11); no message
    # goes to QM3 (10.10.10.12), whose connections only connect, open and close.
    (EARLY, 16, {"QM1": 8, "QM2": 8}),
    (LATE, 8, {"QM1": 3, "QM2": 5}),
])
def test_real_jms_captures_messages_queues_folders_and_texts(parts, count, by_qmgr):
    rows = _rows(real(*parts))
    assert len(rows) == count
    assert all(r["decode_status"] == "ok" for r in rows)
    # every issue is the MQPUT's blank PutDate/PutTime (the queue manager fills them in)
    assert {i["code"] for r in rows for i in r["decode_issues"]} == {"bad_timestamp"}
    got = {}
    for r in rows:
        got[r["network"]["qmgr_name"]] = got.get(r["network"]["qmgr_name"], 0) + 1
    assert got == by_qmgr
    servers = {"QM1": "10.10.10.10", "QM2": "10.10.10.11"}
    for r in rows:
        net = r["network"]
        # the queue: the MQOD inside the SPI open call (LPOO) of the JMS client
        assert (net["verb"], net["direction"], net["queue_name"], net["queue_source"]) == \
            ("MQPUT", "to_qmgr", "UNIFORM.QUEUE", "SPI MQOD")
        assert net["server_address"] == servers[net["qmgr_name"]] and net["server_port"] == 1414
        md = r["md"]
        # the MQMD as the JMS client sends it: version 1, little-endian per the TSH,
        # Encoding 273 and CCSID 1208 describing the big-endian MQRFH2
        assert (md["Version"], md["Format"], md["Encoding"], md["CodedCharSetId"]) == \
            (1, "MQHRF2", 273, 1208)
        assert r["layout"]["md_byte_order"] == "little"
        assert r["headers"] == ["MQHRF2"] and r["rfh2"]["Version"] == 2
        assert r["rfh2"]["Format"] == "MQSTR" and r["rfh2"]["NameValueCCSID"] == 1208
        mcd, jms, usr = r["rfh2"]["NameValueData"]
        assert mcd == "<mcd><Msd>jms_text</Msd></mcd>"
        assert jms.startswith("<jms><Dst>queue:///UNIFORM.QUEUE</Dst><Tms>")
        assert usr.startswith("<usr><ConnectionNumber>")
        # the text read by hand after each '</usr>' folder: ConnectionN-SessionM
        conn_no = usr.split("<ConnectionNumber>")[1].split("<")[0]
        sess_no = usr.split("<SessionNumber>")[1].split("<")[0]
        assert r["payload_text"] == f"Connection{conn_no}-Session{sess_no}"
        assert r["data_length"] == 444 and r["payload_length"] == 20
        # each MQPUT_REPLY (segment type 0x96) says CompCode 0, Reason 0
        assert (net["completion_code"], net["reason_name"]) == (0, "MQRC_NONE")
    texts = sorted(r["payload_text"] for r in rows)
    if parts == LATE:  # strings(1): each of the eight texts once (twice in the file)
        assert texts == sorted([f"Connection1-Session{k}" for k in range(1, 6)]
                               + [f"Connection2-Session{k}" for k in range(1, 4)])
    first = rows[0]["network"]
    if parts == LATE:
        # frame 217 (1-based, as Wireshark numbers it): the first MQPUT, to QM2
        assert (first["frame"], first["client_port"], first["conversation_id"]) == (217, 37769, 3)
        assert first["packet_ts"] == "2025-09-13T11:12:11.164264Z"


@pytest.mark.parametrize("cut, found", [
    (24 + 7, "a damaged record"),  # inside the first packet record's header
    (24 + 16 + 5, "1 packet(s) that could not be decoded"),  # 5 bytes of its packet
])
def test_a_damaged_packet_record_is_a_row_never_silence(tmp_path, cut, found):
    """A pcap whose packets could not be read gives a bad_framing row naming the
    offset, not zero rows read as success."""
    src = sorted(GOLDEN.glob("*.pcap"))[0].read_bytes()
    path = tmp_path / "cut.pcap"
    path.write_bytes(src[:cut])
    (row,) = _rows(path)
    assert row["decode_status"] == "bad_framing"
    (issue,) = row["decode_issues"]
    assert issue["code"] == "unframed" and found in issue["found"] and "offset 24" in issue["found"]
    assert row["payload_hex"] is None and row["data_length"] is None
