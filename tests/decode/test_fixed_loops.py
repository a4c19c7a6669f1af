"""The C loops of the structure decoder (:mod:`dlqlens.decode._fixed`): each
gives what its numpy version gives (the reference), on rows that exercise
every branch (both byte orders in one block, strided rows, structures cut
short, MQMD version 1 rows, NULs, bytes with no ASCII character, blanks of
every length), and refuses arguments that would make it read or write
outside a buffer."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dlqlens.decode import fixed
from dlqlens.decode.fixed import decode_fixed
from dlqlens.decode.records import put_timestamp
from dlqlens.mq.structs import MQCHAR, MQDLH, MQMD

from tests.builders import FAST

pytestmark = pytest.mark.skipif(
    fixed._fixed is None, reason="dlqlens.decode._fixed was not built (no C compiler at install)")

#: letters, both pad bytes, NUL, a tab, LF, CR, DEL, bytes above 0x7F (EBCDIC
#: letters, Latin-1)
ALPHABET = [0x41, 0x5A, 0x31, 0x20, 0x20, 0x20, 0x40, 0x00, 0x09, 0x0A, 0x0D, 0x7F, 0xC1,
            0xE9, 0x80]
CODECS = [("latin-1", 0x20), ("ascii", 0x20), ("utf-8", 0x20), ("cp1252", 0x20),
          ("cp500", 0x40), ("cp1047", 0x40), ("cp037", 0x40), ("cp273", 0x40)]


def both(fn):
    """``fn()`` with the C loops, then with the numpy steps."""
    c = fn()
    saved, fixed._fixed = fixed._fixed, None
    try:
        return c, fn()
    finally:
        fixed._fixed = saved


def same_decoded(a, b):
    assert a.columns.keys() == b.columns.keys()
    for name in a.columns:
        assert a.columns[name].equals(b.columns[name]), (name, a.columns[name], b.columns[name])
    assert a.ints.keys() == b.ints.keys()
    for name in a.ints:
        assert np.array_equal(a.ints[name], b.ints[name]), name
    assert a.partial.keys() == b.partial.keys()
    for name in a.partial:
        assert np.array_equal(a.partial[name], b.partial[name]), name


@st.composite
def structures(draw):
    """A block of MQDLH or MQMD rows: random bytes from ALPHABET, or packed
    structures with blank-padded names, maybe a strided view, with per-row
    byte orders, maybe cut short, maybe MQMD version 1 rows."""
    struct = draw(st.sampled_from([MQDLH, MQMD]))
    size = struct.length()
    n = draw(st.integers(1, 12))
    codec, blank = draw(st.sampled_from(CODECS))
    if draw(st.booleans()):
        data = np.frombuffer(draw(st.binary(min_size=n * size, max_size=n * size)), np.uint8)
        rows = np.array(ALPHABET, dtype=np.uint8)[data % len(ALPHABET)].reshape(n, size)
    else:
        enc = "cp500" if blank == 0x40 else "latin-1"
        char_fields = {f.name: f.length for f in struct.fields
                       if f.type == MQCHAR and f.name != "StrucId"}
        packed = []
        for _ in range(n):
            values = {k: draw(st.text("ABCQ.12 ", max_size=min(12, char_fields[k])))
                      for k in draw(st.lists(st.sampled_from(sorted(char_fields)),
                                             max_size=4, unique=True))}
            packed.append(struct.pack(values, draw(st.sampled_from([">", "<"])), enc))
        rows = np.frombuffer(b"".join(packed), dtype=np.uint8).reshape(n, size).copy()
    pad = draw(st.integers(0, 9))
    if pad:  # rows inside wider rows: a strided view, as a reader hands them
        wide = np.zeros((n, size + 3 + pad), dtype=np.uint8)
        wide[:, 3:3 + size] = rows
        rows = wide[:, 3:3 + size]
    view = draw(st.sampled_from(["as is", "reversed", "one row repeated"]))
    if view == "reversed":  # a negative row stride
        rows = rows[::-1]
    elif view == "one row repeated":  # a zero row stride
        rows = np.broadcast_to(rows[0], rows.shape)
    big = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    available = None
    if draw(st.booleans()):
        available = np.array(draw(st.lists(st.integers(0, size), min_size=n, max_size=n)))
    version_of_row = None
    if struct is MQMD and draw(st.booleans()):
        version_of_row = np.array(draw(st.lists(st.sampled_from([1, 2]), min_size=n, max_size=n)))
    fields = None
    if draw(st.booleans()):
        fields = frozenset(draw(st.lists(st.sampled_from([f.name for f in struct.fields]),
                                         max_size=6)))
    return struct, rows, big, codec, blank, available, version_of_row, fields


@FAST
@given(structures())
def test_decode_fixed_in_c_equals_the_numpy_steps(case):
    struct, rows, big, codec, blank, available, version_of_row, fields = case

    def run():
        return decode_fixed(struct, rows, big_endian=big, codecs=codec, blanks=blank,
                            available=available, version_of_row=version_of_row, fields=fields)

    same_decoded(*both(run))


@FAST
@given(structures(), st.sampled_from(CODECS))
def test_decode_fixed_with_rows_in_two_character_sets_equals_the_numpy_steps(case, other):
    """Rows of several character sets: the integers and bytes are taken in C,
    the characters by the numpy steps, a set at a time."""
    struct, rows, big, codec, blank, available, version_of_row, fields = case
    n = len(rows)
    codecs = np.array([codec if i % 2 else other[0] for i in range(n)], dtype=object)
    blanks = np.array([blank if i % 2 else other[1] for i in range(n)], dtype=np.uint8)

    def run():
        return decode_fixed(struct, rows, big_endian=big, codecs=codecs, blanks=blanks,
                            available=available, version_of_row=version_of_row, fields=fields)

    same_decoded(*both(run))


def test_the_c_loop_takes_integers_in_each_row_s_byte_order_and_cuts_blanks():
    """Known answers: one little-endian and one big-endian MQDLH in one block,
    names of every length up to 48 (blanks cut a word at a time), an EBCDIC
    block translated."""
    rows = []
    for i, order in enumerate("<><>"):
        rows.append(MQDLH.pack({"Reason": 2053 + i, "DestQName": "Q" * (11 * i + 1),
                                "DestQMgrName": "QM1" if i % 2 else "", "PutApplName": "A B"},
                               order, "latin-1"))
    block = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(4, -1)
    got = decode_fixed(MQDLH, block, big_endian=np.array([False, True, False, True]),
                       codecs="latin-1", blanks=0x20)
    assert got.ints["Reason"].tolist() == [2053, 2054, 2055, 2056]
    assert got.columns["DestQName"].to_pylist() == ["Q", "Q" * 12, "Q" * 23, "Q" * 34]
    assert got.columns["DestQMgrName"].to_pylist() == ["", "QM1", "", "QM1"]
    assert got.columns["PutApplName"].to_pylist() == ["A B"] * 4
    # the C loop took them all (a silent fallback would pass the comparisons)
    taken = fixed._take_in_c(MQDLH, block, np.array([False, True, False, True]),
                             list(MQDLH.fields), {f.name for f in MQDLH.fields}, "latin-1")
    assert set(taken) == {f.name for f in MQDLH.fields}
    ebcdic = MQDLH.pack({"DestQName": "DEAD.Q", "Reason": 2035}, ">", "cp500")
    got = decode_fixed(MQDLH, np.frombuffer(ebcdic, dtype=np.uint8).reshape(1, -1),
                       big_endian=np.array([True]), codecs="cp500", blanks=0x40)
    taken = fixed._take_in_c(MQDLH, np.frombuffer(ebcdic, dtype=np.uint8).reshape(1, -1),
                             np.array([True]), list(MQDLH.fields),
                             {f.name for f in MQDLH.fields}, "cp500")
    assert taken["DestQName"].to_pylist() == ["DEAD.Q"]
    assert got.columns["DestQName"].to_pylist() == ["DEAD.Q"]
    assert got.columns["StrucId"].to_pylist() == ["DLH"]
    assert got.ints["Reason"].tolist() == [2035]


def _chars_rule(row: bytes, table: bytes | None):
    """A character field by the loop's rule: each byte's ASCII byte (none
    for 0x80 and up without a table), trailing blanks cut; None where some
    byte is a NUL or has no ASCII byte."""
    t = bytes(range(128)) + bytes(128) if table is None else table
    out = bytes(t[b] for b in row)
    return None if 0 in out else out.rstrip(b" ")


@FAST
@given(st.integers(1, 19), st.lists(st.binary(min_size=40, max_size=40), min_size=1, max_size=6),
       st.sampled_from([None, "cp500"]), st.integers(0, 20), st.booleans())
def test_fields_cuts_blanks_and_gives_up_fields_of_any_length(length, rows, codec, offset,
                                                              unaligned):
    """Every length 1 to 19 (words, half words and single bytes at the end),
    bytes drawn mostly from blanks and letters; outputs at odd addresses."""
    pick = b"  \x40\x40AZ\xc1\x00\x7f\x80"
    block = np.frombuffer(b"".join(bytes(pick[b % len(pick)] for b in r) for r in rows),
                          np.uint8).reshape(len(rows), 40)
    offset = min(offset, 40 - length)
    n = len(rows)
    table = None if codec is None else np.asarray(fixed.to_ascii_table(codec)[0])
    skew = 1 if unaligned else 0
    data = np.zeros(n * length + skew, np.uint8)[skew:]
    offsets = np.zeros(4 * (n + 1) + skew, np.uint8)[skew:]
    longs = np.zeros(4 * n + skew, np.uint8)[skew:]
    got = fixed._fixed.fields(block, np.zeros(n, bool), table,
                              [(offset, length, 2, data, offsets), (0, 4, 0, longs)])
    want = [_chars_rule(bytes(r[offset:offset + length]),
                        None if table is None else table.tobytes()) for r in block]
    if any(w is None for w in want):
        assert got[0] == -1
    else:
        ends = np.frombuffer(offsets.tobytes(), np.int32)
        assert got[0] == ends[-1] == sum(len(w) for w in want)
        assert [data[a:b].tobytes() for a, b in zip(ends[:-1], ends[1:])] == want
    assert np.frombuffer(longs.tobytes(), "<i4").tolist() == \
        np.frombuffer(block[:, :4].tobytes(), "<i4").tolist()


def test_a_spec_that_empties_the_specs_list_while_read_cannot_crash_the_loop():
    """The specs are read from a tuple of them: a value's ``__index__`` that
    clears the caller's list changes nothing the loop reads."""
    specs = []

    class Clearing:
        def __index__(self):
            specs.clear()
            return 0

    out = np.empty(4, np.int32)
    specs.extend([(Clearing(), 4, 0, out)] + [(0, 4, 0, np.empty(4, np.int32))] * 50)
    block = np.arange(64, dtype=np.uint8).reshape(4, 16)
    assert fixed._fixed.fields(block, np.zeros(4, bool), None, specs) == [0] * 51
    assert out.tolist() == np.frombuffer(block[:, :4].tobytes(), "<i4").tolist()


def test_a_field_with_a_nul_or_a_byte_without_ascii_is_decoded_the_general_way():
    """The C loop gives such a field up (for every row): the numpy steps cut
    it at the NUL and decode it with the codec."""
    a = MQDLH.pack({"DestQName": "A.Q"}, ">", "latin-1")
    b = bytearray(MQDLH.pack({"DestQName": "CAF\xc9.Q"}, ">", "latin-1"))
    off = MQDLH.offsets["DestQMgrName"]
    b[off:off + 4] = b"QM\0X"
    block = np.frombuffer(a + bytes(b), dtype=np.uint8).reshape(2, -1)
    got = decode_fixed(MQDLH, block, big_endian=np.ones(2, bool), codecs="latin-1", blanks=0x20)
    assert got.columns["DestQName"].to_pylist() == ["A.Q", "CAF\xc9.Q"]
    assert got.columns["DestQMgrName"].to_pylist() == ["", "QM"]


def _strings(values):
    return pa.array(values, pa.string())


DATES = st.one_of(
    st.text("0123456789", min_size=8, max_size=8),
    st.dates().map(lambda d: d.strftime("%Y%m%d").zfill(8)),
    st.text("0123456789 A:\u00e9", max_size=9),
    st.none())
TIMES = st.one_of(
    st.text("0123456789", min_size=8, max_size=8),
    st.text("0123456789", min_size=6, max_size=6),
    st.times().map(lambda t: t.strftime("%H%M%S") + f"{t.microsecond // 10000:02d}"),
    st.text("0123456789 A:\u00e9", max_size=9),
    st.none())


@FAST
@given(st.lists(st.tuples(DATES, TIMES), min_size=1, max_size=40), st.booleans())
def test_put_times_in_c_equal_the_numpy_rule(pairs, sliced):
    dates = _strings([d for d, _ in pairs])
    times = _strings([t for _, t in pairs])
    if sliced and len(pairs) > 1:  # an array with an offset into its buffers
        dates, times = dates.slice(1), times.slice(1)
    c, py = both(lambda: put_timestamp(dates, times))
    assert c.equals(py), (c, py)


def test_put_times_known_answers():
    dates = _strings(["20240229", "20230229", "20000229", "19000229", "00000101", "99991231",
                      "20261201", "2026120", None, "20261301", "20261201", "00000229"])
    times = _strings(["12000000", "12000000", "000000", "00000000", "00000000", "23596199",
                      "014015", "01401500", "01401500", "01401500", "00006200", "00000000"])
    c, py = both(lambda: put_timestamp(dates, times).cast(pa.int64()).to_pylist())
    assert c == py
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)

    def micros(*args):
        return (datetime(*args, tzinfo=timezone.utc) - epoch) // timedelta(microseconds=1)

    assert c == [micros(2024, 2, 29, 12), None, micros(2000, 2, 29), None,
                 -62167219200 * 1_000_000,  # 0000-01-01, proleptic Gregorian (leap year 0)
                 micros(9999, 12, 31, 23, 59, 59, 990000),  # second 61: a leap second
                 micros(2026, 12, 1, 1, 40, 15), None, None, None,
                 None,  # a 62nd second is no leap second
                 -62167219200 * 1_000_000 + 59 * 86400 * 1_000_000]  # 0000-02-29


def test_fields_refuses_what_would_read_or_write_outside_a_buffer():
    c = fixed._fixed
    block = np.zeros((4, 16), dtype=np.uint8)
    be = np.zeros(4, dtype=bool)
    out4 = np.empty(4, np.int32)
    u8, i32 = (lambda k: np.empty(k, np.uint8)), (lambda k: np.empty(k, np.int32))
    refused = [  # (what the error says, block, big_endian, table, specs)
        ("outside rows of 16 bytes", block, be, None, [(14, 4, 0, out4)]),
        ("outside rows", block, be, None, [(-1, 4, 0, out4)]),
        ("out holds 12 bytes, 16 needed", block, be, None, [(0, 4, 0, i32(3))]),
        ("out holds 31 bytes, 32 needed", block, be, None, [(0, 8, 1, u8(31))]),
        ("offsets hold 16 bytes, 20 needed", block, be, None, [(0, 8, 2, u8(32), i32(4))]),
        ("kind 0 with length 8", block, be, None, [(0, 8, 0, i32(8))]),
        ("kind 2 with length 8 and no offsets", block, be, None, [(0, 8, 2, u8(32))]),
        ("kind 1 with length 8 and offsets", block, be, None, [(0, 8, 1, u8(32), i32(5))]),
        ("kind 7", block, be, None, [(0, 8, 7, u8(32))]),
        ("big_endian holds 3 bytes, 4 rows", block, be[:3], None, [(0, 4, 0, out4)]),
        ("table holds 255 bytes", block, be, u8(255), [(0, 4, 0, out4)]),
        ("2-D bytes", block.reshape(-1), be, None, []),
        ("2-D bytes", block[:, ::2], be, None, []),
        ("not a tuple", block, be, None, [[0, 4, 0, out4]]),
    ]
    for match, *args in refused:
        with pytest.raises(ValueError, match=match):
            c.fields(*args)
    with pytest.raises((TypeError, BufferError)):  # read-only output
        c.fields(block, be, None, [(0, 4, 0, bytes(16))])
    assert c.fields(block, be, None, [(12, 4, 0, out4)]) == [0]


def test_put_times_refuses_offsets_outside_their_data():
    c = fixed._fixed
    micros, ok = np.empty(2, np.int64), np.empty(2, np.uint8)
    good = (np.array([0, 8, 16], np.int32), np.frombuffer(b"20260101" * 2, np.uint8))
    with pytest.raises(ValueError, match="date value 1 spans 8..17"):
        c.put_times((np.array([0, 8, 17], np.int32), good[1]), good, micros, ok)
    with pytest.raises(ValueError, match="time value 0 spans 8..0"):
        c.put_times(good, (np.array([8, 0, 16], np.int32), good[1]), micros, ok)
    with pytest.raises(ValueError, match="offsets hold 8 bytes, 12 needed"):
        c.put_times((np.array([0, 8], np.int32), good[1]), good, micros, ok)
    with pytest.raises(ValueError, match="micros hold 8 bytes, 16 needed"):
        c.put_times(good, good, np.empty(1, np.int64), ok)
    with pytest.raises(ValueError, match="not \\(offsets, data\\)"):
        c.put_times([good[0], good[1]], good, micros, ok)
    assert c.put_times(good, (good[0], np.frombuffer(b"12000000" * 2, np.uint8)), micros, ok) is None
    assert ok.tolist() == [1, 1]
