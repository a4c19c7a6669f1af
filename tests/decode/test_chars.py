"""Character fields of fixed structures (:func:`dlqlens.decode.fixed.decode_chars`
and :func:`~dlqlens.decode.fixed.decode_fixed`): every shortcut (one value in
every row, the whitespace trim when no control character is present, the
step-wise copy of fields out of many rows) gives what the plain per-row rule
gives: cut at the first NUL, strip trailing pad bytes, decode (IBM MQ, MQMD
"Format (MQCHAR8)": "the null and any subsequent characters are treated as
blanks")."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from dlqlens.decode.fixed import decode_chars, decode_fixed
from dlqlens.mq.structs import MQDLH

from tests.builders import FAST

#: bytes that exercise each branch: letters, both pad bytes, NUL, tab and
#: other control characters, bytes above 0x7F (EBCDIC letters, Latin-1)
ALPHABET = [0x41, 0x5A, 0x20, 0x40, 0x00, 0x09, 0x0D, 0x1C, 0xC1, 0xE9, 0x7F]


def reference(row: bytes, codec: str, blank: int) -> str:
    return row.split(b"\0", 1)[0].rstrip(bytes([blank])).decode(codec, errors="replace")


@st.composite
def blocks(draw):
    width = draw(st.integers(1, 20))
    n = draw(st.integers(1, 30))
    row = st.lists(st.sampled_from(ALPHABET), min_size=width, max_size=width).map(bytes)
    if draw(st.booleans()):  # one value in every row
        rows = [draw(row)] * n
    else:
        rows = draw(st.lists(row, min_size=n, max_size=n))
    return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(n, width)


@FAST
@given(block=blocks(), charset=st.sampled_from([("latin-1", 0x20), ("cp500", 0x40),
                                                 ("cp1047", 0x40), ("ascii", 0x20)]))
def test_decode_chars_equals_the_per_row_rule(block, charset):
    codec, blank = charset
    got = decode_chars(block, codec, blank).to_pylist()
    assert got == [reference(bytes(r), codec, blank) for r in block]


def test_a_trailing_tab_is_kept_and_only_blanks_are_trimmed():
    block = np.frombuffer(b"AB\t  " b"CD   " b"E F  ", dtype=np.uint8).reshape(3, 5)
    assert decode_chars(block, "latin-1", 0x20).to_pylist() == ["AB\t", "CD", "E F"]
    # the same without a control character takes the whitespace trim
    block = np.frombuffer(b"AB   " b"CD   " b"E F  ", dtype=np.uint8).reshape(3, 5)
    assert decode_chars(block, "latin-1", 0x20).to_pylist() == ["AB", "CD", "E F"]


def test_one_value_in_every_row_is_decoded_once_and_repeated():
    row = "DEST.Q".ljust(48).encode("cp500")
    block = np.frombuffer(row * 5, dtype=np.uint8).reshape(5, 48)
    out = decode_chars(block, "cp500", 0x40)
    assert out.type == pa.string() and out.to_pylist() == ["DEST.Q"] * 5
    nul = np.frombuffer(b"\0" * 40, dtype=np.uint8).reshape(5, 8)
    assert decode_chars(nul, "latin-1", 0x20).to_pylist() == [""] * 5


def test_fields_copied_a_step_of_rows_at_a_time_equal_fields_copied_whole():
    """Over 4,096 rows the fields are copied step by step out of strided rows;
    the result equals decoding the same rows in small batches (whole copies)."""
    rng = np.random.default_rng(5)
    n, stride = 9000, MQDLH.length() + 20
    buf = np.zeros((n, stride), dtype=np.uint8)
    names = [f"Q{i % 37}".ljust(48).encode("latin-1") for i in range(n)]
    dlh = np.frombuffer(b"".join(MQDLH.pack({"Reason": int(r), "DestQName": q.decode().strip(),
                                             "PutApplName": "app" * (int(r) % 3)}, ">", "latin-1")
                                 for r, q in zip(rng.integers(2000, 2400, n), names)),
                        dtype=np.uint8).reshape(n, MQDLH.length())
    buf[:, 10:10 + MQDLH.length()] = dlh
    block = buf[:, 10:10 + MQDLH.length()]  # rows 20 bytes apart: a strided view
    kw = dict(codecs="latin-1", blanks=0x20)
    whole = decode_fixed(MQDLH, block, big_endian=np.ones(n, bool), **kw)
    parts = [decode_fixed(MQDLH, block[a:a + 3000], big_endian=np.ones(3000, bool), **kw)
             for a in range(0, n, 3000)]
    for name, col in whole.columns.items():
        assert col.to_pylist() == sum((p.columns[name].to_pylist() for p in parts), []), name
    assert whole.columns["DestQName"].to_pylist()[:3] == ["Q0", "Q1", "Q2"]


def test_decode_fixed_with_per_row_codecs_equals_one_codec_per_call():
    """Rows in two character sets, as arrays per row, decode as each set alone."""
    a = MQDLH.pack({"DestQName": "A.Q", "PutApplName": "x"}, ">", "latin-1")
    e = MQDLH.pack({"DestQName": "E.Q", "PutApplName": "y"}, ">", "cp500")
    block = np.frombuffer(a + e + a, dtype=np.uint8).reshape(3, -1)
    codecs = np.array(["latin-1", "cp500", "latin-1"], dtype=object)
    blanks = np.array([0x20, 0x40, 0x20], dtype=np.uint8)
    got = decode_fixed(MQDLH, block, big_endian=np.ones(3, bool), codecs=codecs, blanks=blanks)
    assert got.columns["DestQName"].to_pylist() == ["A.Q", "E.Q", "A.Q"]
    assert got.columns["StrucId"].to_pylist() == ["DLH"] * 3
