"""Issue 19 (the readers): messages that were lost or rewritten without a
word, and errors that named the wrong place. One test (or more) per defect,
in the order of the issue."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
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
