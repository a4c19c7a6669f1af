"""Regression tests of the defects the hostile corpus and the fuzzers found.

Each test names the defect it pins; docs/robustness.md lists them.
"""

from __future__ import annotations

import signal
import time
import tracemalloc
from contextlib import contextmanager

import pytest

from dlqlens.capture import amqsbcg
from dlqlens.capture.message import dead_letter
from dlqlens.capture.reader import read_capture
from dlqlens.rules.compile import java_regex, plan_matches, plan_string, python_regex
from dlqlens.rules.match import match_string


@contextmanager
def time_limit(seconds: int):
    """Fail (instead of hanging the suite) when the block runs longer."""
    def boom(*_):
        raise TimeoutError(f"took longer than {seconds} s")
    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _bcg(payload: bytes = b"middle message") -> list[str]:
    m = dead_letter({"Format": "MQSTR", "PutApplName": "orders", "PutDate": "20240315",
                     "PutTime": "10153012"},
                    {"Reason": 2053, "DestQName": "APP.IN", "PutDate": "20240315",
                     "PutTime": "10153157"}, payload, ccsid=819)
    return amqsbcg.format_message(1, m).splitlines()


def _length_line(lines: list[str]) -> int:
    return next(i for i, t in enumerate(lines) if "length - " in t)


def test_amqsbcg_length_beyond_int64_is_an_issue_not_a_crash(tmp_path):
    # was: OverflowError building the data_length column (found by the corpus)
    lines = _bcg()
    lines[_length_line(lines)] = " length - 99999999999999999999999 bytes"
    p = tmp_path / "huge.bcg"
    p.write_text("\n".join(lines) + "\n No more messages\n")
    (row,) = read_capture(p).table.to_pylist()
    assert row["decode_status"] == "bad_data"
    (i,) = row["decode_issues"]
    assert i["code"] == "length_mismatch" and i["field"] == "length line"
    assert i["line"] == _length_line(lines) + 1 and "99999999999999999999999" in i["found"]
    assert row["payload"] == b"middle message"  # the dump is still decoded


def test_amqsbcg_gap_in_a_gigabyte_length_is_not_allocated(tmp_path):
    # was: a dump line at offset X'7FFFF000' under 'length - 2147483000 bytes'
    # zero-filled the 2 GB gap in memory (MemoryError; found by the corpus)
    lines = _bcg()
    k = _length_line(lines)
    lines[k] = " length - 2147483000 bytes"
    dump = next(i for i, t in enumerate(lines) if t.startswith("00000000:"))
    lines.insert(dump + 1, "7FFFF000:  4142 4344                                'ABCD            '")
    p = tmp_path / "gap.bcg"
    p.write_text("\n".join(lines) + "\n No more messages\n")
    tracemalloc.start()
    try:
        (row,) = read_capture(p).table.to_pylist()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
    assert row["decode_status"] == "bad_data"
    gap = [i for i in row["decode_issues"] if i["code"] == "length_mismatch"][0]
    assert (gap["expected"], gap["found"]) == ("00000010", "7FFFF000")
    assert gap["line"] == dump + 2


def test_amqsbcg_small_gap_is_still_zero_filled(tmp_path):
    # the fix bounds the fill; a few missing lines still keep later bytes in place
    lines = _bcg(b"y" * 200)
    k = next(i for i, t in enumerate(lines) if t.startswith("00000020:"))
    del lines[k:k + 3]
    p = tmp_path / "gap.bcg"
    p.write_text("\n".join(lines) + "\n No more messages\n")
    (row,) = read_capture(p).table.to_pylist()
    assert row["decode_status"] == "bad_data"
    assert row["dlh"]["Reason"] == 2053 and row["payload"][-20:] == b"y" * 20


def test_amqsbcg_bad_hex_in_a_descriptor_value_is_reported(tmp_path):
    # was: "MsgId : X'ZZZZ'" was silently ignored (MsgId left at zeros, status ok)
    lines = _bcg()
    k = next(i for i, t in enumerate(lines) if "MsgId" in t)
    lines[k] = "  MsgId : X'ZZZZ'"
    p = tmp_path / "msgid.bcg"
    p.write_text("\n".join(lines) + "\n No more messages\n")
    (row,) = read_capture(p).table.to_pylist()
    assert row["decode_status"] == "bad_descriptor"
    (i,) = row["decode_issues"]
    assert (i["code"], i["field"], i["line"]) == ("bad_md_field", "md.MsgId", k + 1)
    assert "ZZZZ" in i["found"]


PATHOLOGICAL = [
    ("*A*A*A*A*A*A*A*A*A*A*A*B", "A" * 20000),
    ("*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?X", "Y" * 20000),
    ("?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*", " " * 48),
    ("*AB*AB*AB*AB*AB*AB*AB*AB*AC", "AB" * 10000),
]


@pytest.mark.parametrize("pattern,value", PATHOLOGICAL)
def test_rules_regex_is_linear_on_pathological_patterns(pattern, value):
    # was: '*' -> '.*' regexes (Python plan_matches, Spark rlike) backtrack
    # exponentially: '*A*A*A*A*A*A*A*A*A*A*A*B' against 20,000 'A' never ends
    with time_limit(20):
        python_regex(pattern).fullmatch(value)
        assert plan_matches(plan_string(pattern, len(value)), value) == \
            match_string(pattern, value, len(value))


def test_rules_regex_time_grows_linearly():
    # the operation count of a backtracking engine shows as time: doubling the
    # value must not multiply it by much more than two (generous bound: 8)
    rx = python_regex("*A*A*A*A*A*A*A*A*B")

    def cost(n: int) -> float:
        value = "A" * n
        t = time.perf_counter()
        for _ in range(5):
            rx.fullmatch(value)
        return time.perf_counter() - t

    with time_limit(30):
        small, big = cost(20000), cost(80000)
    assert big < 8 * 4 * max(small, 1e-4)


def test_java_regex_shape_is_atomic():
    # the Spark rendering has the same linear structure as the Python one
    assert java_regex("*A*?B*C") == "(?s)\\A(?>.*?A)(?>.*?.B).*C\\z"
    assert java_regex("AB?") == "(?s)\\AAB.\\z"


@pytest.mark.spark
def test_spark_rlike_is_linear_on_a_pathological_pattern(spark):
    from pyspark.sql import functions as F

    from dlqlens.rules.compile import string_predicate

    values = ["A" * 5000, "A" * 4999 + "B", "xAyAzB"]
    df = spark.createDataFrame([(v,) for v in values], "v string")
    pat = "*A*A*A*A*A*A*A*A*A*A*A*B"
    with time_limit(120):
        got = [r[0] for r in df.select(string_predicate(F.col("v"), pat, 48, trimmed=True))
               .collect()]
    assert got == [match_string(pat, v) for v in values] == [False, True, False]


def test_raw_index_that_disagrees_with_the_records_is_not_used_to_split(tmp_path):
    """Defect 6 (found by the split check of the fuzzers, 2026-11-23): a raw
    capture whose header was repeated (16 bytes inserted after it) kept its
    index, which then pointed 16 bytes before every record. Read whole, the
    index does not check out and the file is framed by its length prefixes
    (the 16 bytes a bad_framing row, then the three records); planned into
    slices, the index was trusted and the slices framed other rows."""
    from dlqlens.capture import raw
    from dlqlens.capture.reader import ReadOptions, plan_pieces, read_piece

    m = dead_letter({"Format": "MQSTR"}, {"Reason": 2053, "DestQName": "APP.IN"}, b"payload")
    p = tmp_path / "three.raw"
    raw.write_raw(p, [m, m, m])
    blob = p.read_bytes()
    p.write_bytes(blob[:16] + blob[:16] + blob[16:])
    whole = read_capture(p).table.to_pylist()
    assert [r["decode_status"] for r in whole] == ["bad_framing", "ok", "ok", "ok"]
    opts = ReadOptions(split_bytes=1)
    pieces = plan_pieces(str(p), opts)
    assert len(pieces) == 1  # the cuts do not check out: one slice, read whole
    assert [r for piece in pieces for b in read_piece(piece, opts) for r in b.to_pylist()] == whole


@pytest.mark.parametrize("fast", [True, False])
def test_amqsbcg_payload_reading_no_more_messages_does_not_end_the_message(tmp_path, fast):
    """Defect 7 (found by the amqsbcg round-trip property test, 2026-11-23):
    16 bytes of message data reading "No more messages" fill one dump line's
    character column exactly, and the end-of-browse test matched anywhere in
    a line: the message ended there, its data cut short (``truncated``).
    The end lines are now matched as whole lines, as amqsbcg prints them."""
    payload = b"x" * 4 + b"No more messages" + b"tail"  # 172 + 4: a dump line of its own
    m = dead_letter({"Format": "MQSTR"}, {"Reason": 2053, "DestQName": "APP.IN"}, payload,
                    ccsid=819)
    p = tmp_path / "nomore.bcg"
    amqsbcg.write_amqsbcg(p, [m, m])
    text = p.read_text()
    assert "'No more messages'" in text  # the dump line's character column
    frames = list(amqsbcg.read_amqsbcg(str(p), fast=fast))
    from dlqlens.decode.records import decode_frames
    rows = [r for fr in frames for r in decode_frames(fr).to_pylist()]
    assert [r["decode_status"] for r in rows] == ["ok", "ok"]
    assert all(bytes(r["payload"]) == payload for r in rows)
