"""Cutting rows out of a buffer (:func:`dlqlens.decode.fixed.gather`,
:func:`~dlqlens.decode.fixed.concat_ranges`): every path (strided view,
one memcpy a row, the byte-by-byte fallback past the end; equal lengths,
long and short rows) gives what plain slicing gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dlqlens.decode.fixed import concat_ranges, gather

from tests.builders import FAST


def naive_gather(data, starts, width, limit):
    block = np.zeros((len(starts), width), dtype=np.uint8)
    avail = np.clip(np.asarray(limit) - np.asarray(starts), 0, width)
    for i, (s, a) in enumerate(zip(starts, avail)):
        got = data[s:s + a]
        block[i, :len(got)] = got
    return block, avail


@st.composite
def gather_cases(draw):
    size = draw(st.integers(0, 300))
    data = np.frombuffer(draw(st.binary(min_size=size, max_size=size)), dtype=np.uint8)
    width = draw(st.integers(0, 40))
    n = draw(st.integers(0, 12))
    if draw(st.booleans()):  # evenly spaced, as records of one length
        step = draw(st.integers(0, 30))
        first = draw(st.integers(0, max(size, 1)))
        starts = [first + i * step for i in range(n)]
    else:
        starts = draw(st.lists(st.integers(0, size + 10), min_size=n, max_size=n))
    whole = draw(st.booleans())
    limits = [s + (width if whole else draw(st.integers(-5, width + 5))) for s in starts]
    limits = [min(lim, size) for lim in limits]
    return data, np.array(starts, dtype=np.int64), width, np.array(limits, dtype=np.int64)


@FAST
@given(gather_cases())
def test_gather_is_slicing(case):
    data, starts, width, limit = case
    block, avail = gather(data, starts, width, limit)
    want, want_avail = naive_gather(data, starts, width, limit)
    assert block.shape == (len(starts), width)
    assert np.array_equal(block, want) and np.array_equal(avail, want_avail)


def test_gather_of_evenly_spaced_rows_is_a_read_only_view():
    data = np.arange(100, dtype=np.uint8)
    block, _ = gather(data, np.array([4, 24, 44]), 8, np.array([12, 32, 52]))
    assert np.shares_memory(block, data) and not block.flags.writeable
    assert block[1].tolist() == list(range(24, 32))


@st.composite
def range_cases(draw):
    size = draw(st.integers(0, 400))
    data = np.frombuffer(draw(st.binary(min_size=size, max_size=size)), dtype=np.uint8)
    n = draw(st.integers(0, 10))
    same = draw(st.sampled_from([None, 0, 1, 7, 60]))  # one length for all, or each its own
    starts, lengths = [], []
    for _ in range(n):
        ln = same if same is not None else draw(st.sampled_from(
            [draw(st.integers(0, 20)), draw(st.integers(40, 120))]))
        ln = min(ln, size)
        starts.append(draw(st.integers(0, size - ln)))
        lengths.append(ln)
    return data, np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64)


@FAST
@given(range_cases())
def test_concat_ranges_is_slicing(case):
    data, starts, lengths = case
    got = concat_ranges(data, starts, lengths)
    want = b"".join(data[s:s + ln].tobytes() for s, ln in zip(starts, lengths))
    assert got.tobytes() == want and got.flags.c_contiguous and got.dtype == np.uint8
