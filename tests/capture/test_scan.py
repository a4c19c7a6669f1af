"""The byte loops of the fast text readers (dlqlens.capture.scan): the C
loops and their numpy versions against plain-Python statements of the rule."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlqlens.capture import scan

IMPLS = [
    pytest.param("numpy", id="numpy"),
    pytest.param("c", id="c", marks=pytest.mark.skipif(
        not scan.COMPILED, reason="dlqlens.capture._scan was not built (no C compiler at install)")),
]


@pytest.fixture(params=IMPLS)
def impl(request, monkeypatch):
    if request.param == "numpy":
        monkeypatch.setattr(scan, "_scan", None)
    return request.param


def _impls():
    """Both implementations, for the hypothesis tests (fixtures do not mix with @given)."""
    saved = scan._scan
    try:
        scan._scan = None
        yield "numpy"
    finally:
        scan._scan = saved
    if saved is not None:
        yield "c"


_ALPHABET = b"0123456789abcdefABCDEFxX \r\n\x00\xff"
text_bytes = st.binary(max_size=300).map(
    lambda b: bytes(_ALPHABET[c % len(_ALPHABET)] for c in b))


def _lines_rule(data: bytes, n: int, eof: bool):
    """The rule: lines split at LF; a last line without one counts at eof."""
    ends = [i for i in range(n) if data[i] == 10]
    if eof and n and data[n - 1] != 10:
        ends.append(n)
    starts = [0] + [e + 1 for e in ends[:-1]] if ends else []
    pad = data + b"\0\0"
    words = [pad[s] | pad[s + 1] << 8 for s in starts]
    crlf = any(e > 0 and data[e - 1] == 13 for e in ends)
    return starts, ends, words, crlf


@settings(max_examples=300, deadline=None)
@given(text_bytes, st.integers(0, 300), st.booleans())
def test_line_table_follows_the_rule(data, n, eof):
    n = min(n, len(data))
    want = _lines_rule(data, n, eof)
    for _ in _impls():
        starts, ends, words, crlf = scan.line_table(bytearray(data), n, eof)
        assert (starts.tolist(), ends.tolist(), words.tolist(), crlf) == want
        assert (starts.dtype, ends.dtype, words.dtype) == (np.int64, np.int64, np.uint16)


def test_line_table_of_a_long_block(impl):
    rng = np.random.default_rng(7)
    data = rng.choice(np.frombuffer(b"ab\n", np.uint8), 100_003).tobytes()
    starts, ends, words, crlf = scan.line_table(bytearray(data), len(data), False)
    assert ends.tolist() == [m.start() for m in re.finditer(b"\n", data)]
    assert not crlf


def test_line_table_refuses_n_outside_the_buffer(impl):
    with pytest.raises(ValueError, match="outside the buffer"):
        scan.line_table(bytearray(b"a\nb"), 4, True)
    with pytest.raises(ValueError, match="outside the buffer"):
        scan.line_table(bytearray(b"a\nb"), -1, True)


def _hex_rule(data: bytes, starts, ends):
    """The rule, per run: the leading hex digits, their whole pairs decoded."""
    out, digits = b"", []
    for a, b in zip(starts, ends):
        d = len(re.match(rb"[0-9A-Fa-f]*", data[a:b]).group(0))
        digits.append(d)
        out += bytes.fromhex(data[a:a + d // 2 * 2].decode("ascii"))
    return out, digits


def _check_hex_runs(data, starts, ends):
    """Both implementations give what the rule gives."""
    want_data, want_digits = _hex_rule(data, starts, ends)
    for _ in _impls():
        got, digits = scan.hex_runs(bytearray(data), np.array(starts, np.int64),
                                    np.array(ends, np.int64))
        assert got.tobytes() == want_data
        assert digits.tolist() == want_digits


@st.composite
def runs(draw):
    data = draw(text_bytes)
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=20)))
    pairs = [(a, b) for a, b in zip(cuts[0::2], cuts[1::2])]
    if draw(st.booleans()):  # overlapping and out-of-order runs too
        pairs += draw(st.lists(st.tuples(st.integers(0, len(data)), st.integers(0, len(data)))
                               .map(sorted), max_size=5))
    return data, [a for a, _ in pairs], [b for _, b in pairs]


@settings(max_examples=300, deadline=None)
@given(runs())
def test_hex_runs_follow_the_rule(case):
    _check_hex_runs(*case)


@st.composite
def hex_lines(draw):
    """Runs of whole hex pairs in order, apart by gaps of any bytes (hex
    digits too), short and long: the numpy version's joined path."""
    parts, starts, ends, at = [], [], [], 0
    for _ in range(draw(st.integers(1, 12))):
        gap = draw(st.binary(max_size=24).map(
            lambda b: bytes(_ALPHABET[c % len(_ALPHABET)] for c in b)))
        run = draw(st.text("0123456789abcdefABCDEF", max_size=20))
        run = run[:len(run) // 2 * 2].encode()
        if draw(st.integers(0, 9)) == 0:  # now and then a damaged run
            run += draw(st.sampled_from([b"4", b"4 1", b"zz"]))
        parts += [gap, run]
        at += len(gap)
        starts.append(at)
        at += len(run)
        ends.append(at)
    return b"".join(parts), starts, ends


@settings(max_examples=300, deadline=None)
@given(hex_lines())
def test_hex_runs_of_lines_follow_the_rule(case):
    _check_hex_runs(*case)


def test_hex_runs_of_clean_lines(impl):
    data = b"X 4142\nX 43\nX 0a0B\n"
    got, digits = scan.hex_runs(bytearray(data), np.array([2, 9, 14]), np.array([6, 11, 18]))
    assert got.tobytes() == b"ABC\n\x0b"
    assert digits.tolist() == [4, 2, 4]


@pytest.mark.parametrize("starts, ends", [([0], [9]), ([-1], [2]), ([3], [2])])
def test_hex_runs_refuse_runs_outside_the_buffer(impl, starts, ends):
    with pytest.raises(ValueError, match="outside the buffer"):
        scan.hex_runs(bytearray(b"41424344"), np.array(starts), np.array(ends))


def _rows_rule(data: bytes, at, width, must):
    row0 = data[at[0]:at[0] + width]
    rows = [data[a:a + width] for a in at]
    match = [all(r[c] == row0[c] for c in must) for r in rows]
    same = [all(r[c] == row0[c] for r, m in zip(rows, match) if m) for c in range(width)]
    return same, match


@st.composite
def row_sets(draw):
    data = draw(st.binary(min_size=1, max_size=200).map(lambda b: bytes(c % 3 for c in b)))
    width = draw(st.integers(0, min(len(data), 40)))
    at = draw(st.lists(st.integers(0, len(data) - width), min_size=1, max_size=30))
    must = draw(st.lists(st.integers(0, width - 1), max_size=8)) if width else []
    return data, at, width, must


@settings(max_examples=300, deadline=None)
@given(row_sets())
def test_rows_like_first_follow_the_rule(case):
    data, at, width, must = case
    want_same, want_match = _rows_rule(data, at, width, must)
    for _ in _impls():
        same, match = scan.rows_like_first(bytearray(data), np.array(at, np.int64), width,
                                           np.array(must, np.int64))
        assert same.tolist() == want_same
        assert match.tolist() == want_match


def test_rows_like_first_refuses_rows_outside_the_buffer(impl):
    with pytest.raises(ValueError, match="outside the buffer"):
        scan.rows_like_first(bytearray(b"abcdef"), np.array([0, 4]), 3, np.array([0]))
    with pytest.raises(ValueError, match="outside the row"):
        scan.rows_like_first(bytearray(b"abcdef"), np.array([0, 1]), 3, np.array([3]))


def test_the_fast_readers_give_the_same_frames_without_the_c_loops(monkeypatch, tmp_path):
    """A dmpmqmsg file (LF and CR LF lines, a -da column, a bad line) read
    with and without the C loops."""
    from dlqlens.capture.dmpmqmsg import read_dmpmqmsg, write_dmpmqmsg
    from dlqlens.capture.message import CaptureMessage

    msgs = [CaptureMessage(md={"MsgId": bytes([i % 256]) * 24, "PutApplName": f"app{i % 7}",
                               "Persistence": i % 2}, data=bytes(range(i % 200)) * 3)
            for i in range(300)]
    path = tmp_path / "m.dmp"
    write_dmpmqmsg(str(path), msgs)
    text = path.read_bytes()
    # the second half with CR LF line ends, and one damaged X line
    half = text.index(b"\nA VER", len(text) // 2) + 1
    text = text[:half] + text[half:].replace(b"\n", b"\r\n")
    x = text.index(b"\nX ", len(text) // 3) + 3
    text = text[:x] + b"zz" + text[x + 2:]
    path.write_bytes(text)

    def frames():
        out = [f for f in read_dmpmqmsg(str(path))]
        return [(f.md.tobytes(), f.data.tobytes(), f.starts.tolist(), f.ends.tolist(),
                 sorted(map(str, f.issues.items()))) for f in out]

    with_c = frames()
    monkeypatch.setattr(scan, "_scan", None)
    assert frames() == with_c
    assert sum(len(f[2]) for f in with_c) == 300


# issue 19: checked arithmetic at the C extension's direct API

@pytest.mark.parametrize("at", [2**63 - 1, 2**63 - 2, 2**63 - 3, 2**62, 2**63 - 1 - 2**31])
def test_rows_like_first_refuses_offsets_near_2_to_the_63(impl, at):
    # was: at + width wrapped to a negative end, passed the bounds check and
    # read far outside the buffer (a crash, or ASan's heap-buffer-overflow)
    with pytest.raises(ValueError, match="outside the buffer"):
        scan.rows_like_first(bytearray(b"abcdefgh"), np.array([0, at], np.int64), 3,
                             np.array([0]))
    with pytest.raises(ValueError, match="outside the buffer"):
        scan.rows_like_first(bytearray(b"abcdefgh"), np.array([at], np.int64), 3,
                             np.array([0]))


@pytest.mark.skipif(not scan.COMPILED, reason="dlqlens.capture._scan was not built")
@pytest.mark.parametrize("at, width", [(2**63 - 2, 3), (1, 2**63 - 1), (0, 2**63 - 1),
                                       (2**63 - 1, 2**63 - 1)])
def test_c_rows_like_first_checks_its_arithmetic(at, width):
    # the C function itself (no wrapper checks): width + 7 and at + width must
    # not overflow; every combination is refused with a ValueError
    from dlqlens.capture import _scan

    buf = bytearray(b"abcdefgh")
    n = 2
    with pytest.raises((ValueError, OverflowError)):
        _scan.rows_like_first(buf, np.array([0, at], np.int64).tobytes(), width,
                              bytes(min(width, 16)), bytearray(min(width, 16)), bytearray(n))
    # with buffers of the right sizes for a small width, only the offset is wrong
    if width == 3:
        with pytest.raises(ValueError, match="outside the buffer"):
            _scan.rows_like_first(buf, np.array([0, at], np.int64).tobytes(), 3,
                                  bytes(3), bytearray(3), bytearray(n))


def test_rows_like_first_refuses_a_negative_width(impl):
    with pytest.raises(ValueError):
        scan.rows_like_first(bytearray(b"abc"), np.array([0]), -1, np.array([], np.int64))


@pytest.mark.skipif(not scan.COMPILED, reason="dlqlens.capture._scan was not built")
def test_c_hex_runs_refuses_runs_near_2_to_the_63():
    from dlqlens.capture import _scan

    buf = bytearray(b"41424344")
    for s, e in [(2**63 - 2, 2**63 - 1), (0, 2**63 - 1), (2**63 - 1, 0), (-2**63, 2)]:
        with pytest.raises(ValueError, match="outside the buffer"):
            _scan.hex_runs(buf, np.array([s], np.int64).tobytes(),
                           np.array([e], np.int64).tobytes(), bytearray(8),
                           bytearray(8))


def _find_rule(data: bytes, needle: bytes, end: int) -> list[int]:
    """The rule: every offset where needle stands whole inside data[:end]."""
    return [i for i in range(end - len(needle) + 1) if data[i:i + len(needle)] == needle]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200).map(lambda b: bytes(b"*MQGT a\n"[c % 8] for c in b)),
       st.sampled_from([b"MQGET", b"**", b"*M*", b"a", b"\n*"]), st.integers(0, 200))
def test_find_all_follows_the_rule(data, needle, end):
    end = min(end, len(data))
    for _ in _impls():
        got = scan.find_all(bytearray(data), needle, end)
        assert got.dtype == np.int64
        assert got.tolist() == _find_rule(data, needle, end)


def test_find_all_refuses_end_outside_the_buffer_and_an_empty_needle(impl):
    with pytest.raises(ValueError, match="outside the buffer"):
        scan.find_all(b"MQGET", b"MQ", 6)
    with pytest.raises(ValueError, match="empty needle"):
        scan.find_all(b"MQGET", b"", 3)


def test_find_all_of_many_hits(impl):
    data = b"MQGET " * 5000  # more hits than the C loop's first allocation
    assert scan.find_all(data, b"MQGET", len(data)).tolist() == list(range(0, len(data), 6))


def _masked_rule(block: np.ndarray, columns) -> list[bool]:
    """The rule of masked_rows: two neighbouring columns (of ``columns``)
    both '*' or both '.'."""
    cols = list(range(block.shape[1])) if columns is None else list(columns)
    return [any(row[a] == row[b] and row[a] in (42, 46) for a, b in zip(cols, cols[1:]))
            for row in block.tolist()]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 12), st.integers(1, 40), st.data())
def test_masked_rows_follows_the_rule(n, width, data):
    from dlqlens.capture.text import masked_rows

    cells = data.draw(st.lists(st.sampled_from([42, 46, 65, 32]), min_size=n * width,
                               max_size=n * width))
    block = np.array(cells, dtype=np.uint8).reshape(n, width)
    columns = data.draw(st.none() | st.lists(st.integers(0, width - 1), unique=True).map(sorted))
    for _ in _impls():
        assert masked_rows(block, columns).tolist() == _masked_rule(block, columns)


# --- the amqsbcg fast reader's C loops against its numpy versions ------------
# (match_lines: the descriptor templates, layout._Matcher._match the reference;
# dump_lines: the dump lines, dump._dump_lines and _dump_bytes the reference)

_C_ONLY = pytest.mark.skipif(not scan.COMPILED, reason="dlqlens.capture._scan was not built")


def _numpy_matcher(buf: bytearray, starts: np.ndarray, rend: np.ndarray, clean: np.ndarray):
    """A numpy matcher (layout._Matcher) over the lines of ``buf``, one unit a line."""
    from dlqlens.capture.amqsbcg.layout import _Matcher

    m = _Matcher.__new__(_Matcher)
    m.buf, m.p, m.starts, m.rend, m.clean = buf, np.frombuffer(buf, np.uint8), starts, rend, clean
    return m


def _lines_of(text: bytes):
    from dlqlens.capture.text import PAD

    raw = text.split(b"\n")
    starts = np.cumsum([0] + [len(r) + 1 for r in raw[:-1]]).astype(np.int64)
    rend = np.array([s + len(r.rstrip(b" ")) for s, r in zip(starts, raw)], dtype=np.int64)
    clean = np.array([r.isascii() and not r.endswith(b"\r\r") for r in raw], dtype=bool)
    return bytearray(text + bytes(PAD)), starts, rend, clean


def _templates():
    from dlqlens.capture.amqsbcg import layout

    return (layout._MD_LINES + layout._MD_V2_LINES + layout._DLH_LINES
            + [layout._LENGTH_OF, layout._LENGTH_ONLY])


_LINE_TEXT = st.lists(st.sampled_from(
    [b"  Priority : ", b"  Persistence : ", b"0", b"7", b"-", b"12345678901", b"2147483648",
     b"'", b"MQDEAD  ", b" ", b"  Format : '", b"X'", b"00FF", b"a1", b"zz", b" [", b"]",
     b" length - ", b" of ", b" bytes", b"  StrucId  : '", b"MD  ", b"'  Version : ",
     b"  Reason   : ", b"\xe9", b"\r"]), max_size=8).map(b"".join)


@_C_ONLY
@settings(max_examples=400, deadline=None)
@given(st.integers(0, len(_templates()) - 1), st.lists(_LINE_TEXT, min_size=1, max_size=6),
       st.booleans())
def test_match_lines_matches_as_the_numpy_matcher(which, texts, like_template):
    from dlqlens.capture.amqsbcg import layout

    tokens = _templates()[which]
    if like_template:  # a line printed by the template itself, its values varied
        texts = texts[:-1] + [b"".join(t[1].tobytes() if t[0] == "lit" else texts[-1][:4]
                                       for t in tokens)]
    buf, starts, rend, clean = _lines_of(b"\n".join(texts))
    n = len(texts)
    m = _numpy_matcher(buf, starts, rend, clean)
    want, values = m._match(tokens, np.arange(n), np.ones(n, bool))
    md = np.zeros((n, len(layout._MD_TEMPLATE)), np.uint8)
    vals = np.zeros((n, layout._VALUES_WIDTH), np.uint8)
    ci = np.zeros(n, np.int64)
    ok = np.ones(n, np.uint8)
    matched = scan.match_lines(buf, starts, rend, clean.astype(np.uint8), np.arange(n),
                               np.ones(n, np.int64), ci, ok, b"",
                               layout._program([tokens]), md, vals)
    assert ok.astype(bool).tolist() == want.tolist()
    assert matched == int(want.sum()) and ci.tolist() == [1] * n
    for name, v in values.items():  # the values of the lines that match
        if name in layout._MD_AT:
            at, size, kind = layout._MD_AT[name]
            if kind == "MQLONG":
                got = md[:, at:at + 4].copy().view("<i4")[:, 0]
                v = np.where((v == 1) | (v == 2), v, 2) if name == "Version" else v
            else:
                got = md[:, at:at + size]
        else:
            off, size, integer = layout._VALUES[name]
            got = vals[:, off:off + size].copy().view(np.int64)[:, 0] if integer \
                else vals[:, off:off + size]
        assert (got[want] == np.asarray(v)[want]).all(), name


@_C_ONLY
def test_match_lines_stops_a_unit_at_its_first_line_that_does_not_match():
    from dlqlens.capture.amqsbcg import layout

    text = b"****Message descriptor****\n  StrucId  : 'MD  '  Version : 2\n  Report   : x"
    buf, starts, rend, clean = _lines_of(text)
    section = layout._MD_LINES[:3]
    args = (buf, starts, rend, clean.astype(np.uint8), np.array([0, 0]), np.array([3, 2]))
    ci, ok = np.zeros(2, np.int64), np.ones(2, np.uint8)
    md = np.zeros((2, len(layout._MD_TEMPLATE)), np.uint8)
    vals = np.zeros((2, layout._VALUES_WIDTH), np.uint8)
    got = scan.match_lines(*args, ci, ok, np.array([1, 1], np.uint8), layout._program(section),
                           md, vals)
    # unit 0 fails at its third line ('x' is no number), unit 1 has only two lines
    assert got == 0 and ok.tolist() == [0, 0] and ci.tolist() == [3, 3]
    assert md[0, layout._MD_AT["Version"][0]] == 2
    # an inactive unit is left alone
    ci, ok = np.zeros(2, np.int64), np.ones(2, np.uint8)
    scan.match_lines(*args, ci, ok, np.array([0, 1], np.uint8), layout._program(section[:2]),
                     md, vals)
    assert ok.tolist() == [1, 1] and ci.tolist() == [0, 2]


@_C_ONLY
def test_match_lines_takes_a_repeated_line_s_values_only_where_they_are_the_same():
    # units print most lines alike: a line with the bytes of the one the template last
    # matched takes its values without parsing again, unless the byte after its end
    # differs (where a number runs on: unit 2's line ends inside '72', and fails as the
    # numpy matcher says), and a line that differs is parsed (unit 3)
    from dlqlens.capture.amqsbcg import layout

    text = b"  BackoutCount : 7\n  BackoutCount : 7\n  BackoutCount : 72\n  BackoutCount : 9"
    buf, starts, rend, clean = _lines_of(text)
    rend[2] -= 1  # the third line's text taken to end before its '2'
    n = 4
    tokens = layout._MD_LINES[9]
    md = np.zeros((n, len(layout._MD_TEMPLATE)), np.uint8)
    vals = np.zeros((n, layout._VALUES_WIDTH), np.uint8)
    ci, ok = np.zeros(n, np.int64), np.ones(n, np.uint8)
    scan.match_lines(buf, starts, rend, clean.astype(np.uint8), np.arange(n),
                     np.ones(n, np.int64), ci, ok, b"", layout._program([tokens]), md, vals)
    want, _ = _numpy_matcher(buf, starts, rend, clean)._match(tokens, np.arange(n),
                                                              np.ones(n, bool))
    assert ok.tolist() == [1, 1, 0, 1] == want.astype(int).tolist()
    at = layout._MD_AT["BackoutCount"][0]
    got = md[:, at:at + 4].copy().view("<i4")[:, 0].tolist()
    assert [got[i] for i in (0, 1, 3)] == [7, 7, 9]  # (a unit that fails: its values unsaid)


@_C_ONLY
@pytest.mark.parametrize("case", ["op", "lit_len", "md_off", "val_off", "kind", "unit", "line",
                                  "sizes", "q_negative", "q_huge", "hex_negative"])
def test_match_lines_refuses_what_is_not_a_program_or_not_in_the_buffer(case):
    from dlqlens.capture.amqsbcg import layout

    buf, starts, rend, clean = _lines_of(b"  BackoutCount : 0\n")
    prog = layout._program([layout._MD_LINES[9]])
    cfirst, ncont = np.array([0]), np.array([1])
    md = np.zeros((1, 364), np.uint8)
    vals = np.zeros((1, layout._VALUES_WIDTH), np.uint8)
    if case == "op":
        prog = np.array([9, 0], np.int32)
    elif case == "lit_len":
        prog = np.array([layout._OP_LIT, 1000, 65], np.int32)
    elif case == "md_off":
        prog = np.array([layout._OP_INT, layout._TO_MD_INT, 362, layout._OP_END], np.int32)
    elif case == "val_off":
        prog = np.array([layout._OP_Q, 48, layout._TO_VAL_BYTES, layout._VALUES_WIDTH - 8,
                         layout._OP_END], np.int32)
    elif case == "kind":
        prog = np.array([layout._OP_Q, 4, layout._TO_MD_INT, 0, layout._OP_END], np.int32)
    elif case == "unit":
        cfirst, ncont = np.array([2]), np.array([1])  # (two lines: the text, then "")
    elif case == "line":
        rend = np.array([len(buf) + 1])
    elif case == "sizes":
        md = np.zeros((2, 364), np.uint8)
    # a width outside the buffer whatever the value's destination (0: nowhere): memchr
    # over (size_t)(size + 1) bytes, or a position counted past INT32_MAX (review)
    elif case == "q_negative":
        prog = np.array([layout._OP_Q, -1000000, 0, 0, layout._OP_END], np.int32)
    elif case == "q_huge":
        prog = np.array([layout._OP_Q, 2**31 - 1, 0, 0, layout._OP_END], np.int32)
    elif case == "hex_negative":
        prog = np.array([layout._OP_HEX, -4, 0, 0, layout._OP_END], np.int32)
    with pytest.raises(ValueError, match="match_lines"):
        scan.match_lines(buf, starts, rend, clean.astype(np.uint8), cfirst, ncont,
                         np.zeros(1, np.int64), np.ones(1, np.uint8), b"", prog, md, vals)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"", b" ", b"  ", b"a", b"a b", b"x  ", b"\t ", b"\r",
                                 b"\xff "]), min_size=1, max_size=12))
def test_trimmed_ends_follows_the_rule(lines):
    text = b"\n".join(lines)
    starts = np.cumsum([0] + [len(x) + 1 for x in lines[:-1]]).astype(np.int64)
    cend = starts + np.array([len(x) for x in lines], dtype=np.int64)
    want = [int(a) + len(x.rstrip(b" ")) for a, x in zip(starts, lines)]
    for _ in _impls():
        assert scan.trimmed_ends(bytearray(text), starts, cend).tolist() == want


def test_trimmed_ends_refuses_lines_outside_the_buffer(impl):
    with pytest.raises(ValueError, match="trimmed_ends"):
        scan.trimmed_ends(bytearray(b"ab  "), np.array([0]), np.array([5]))
    with pytest.raises(ValueError, match="trimmed_ends"):
        scan.trimmed_ends(bytearray(b"ab  "), np.array([2]), np.array([1]))
    with pytest.raises(ValueError, match="trimmed_ends"):
        scan.trimmed_ends(bytearray(b"ab  "), np.array([0, 1]), np.array([1]))


@_C_ONLY
@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE_TEXT, min_size=1, max_size=6), st.lists(st.integers(0, 2), max_size=6),
       st.sampled_from([b"  StrucId  : '", b" of ", b"  ", b"", b"7"]), st.booleans())
def test_probe_lines_probes_as_the_numpy_matcher(texts, current, lit, after):
    # one unit per line start: unit i's content lines are lines i.., its current one
    # current[i] lines on (missing when past the end)
    buf, starts, rend, clean = _lines_of(b"\n".join(texts))
    n = len(texts)
    m = _numpy_matcher(buf, starts, rend, clean)
    m.content, m.cfirst = np.arange(n), np.arange(n)
    m.ncont = n - np.arange(n)
    m.ci = np.array((current + [0] * n)[:n], dtype=np.int64)
    m.ok = np.array([i % 3 != 2 for i in range(n)])
    want = m.probe(np.frombuffer(lit, np.uint8), after=after)
    got = scan.probe_lines(buf, starts, m.cfirst, m.ncont, m.ci, m.ok, lit, after)
    assert got.tolist() == want.tolist()


@_C_ONLY
def test_probe_lines_refuses_units_outside_the_lines():
    buf, starts, _, _ = _lines_of(b"  StrucId  : 'MD  '\nx")
    args = (np.array([0]), np.ones(1, bool), b"  ")  # ci, ok, lit
    with pytest.raises(ValueError, match="probe_lines"):  # a unit past the last line
        scan.probe_lines(buf, starts, np.array([2]), np.array([1]), *args)
    with pytest.raises(ValueError, match="probe_lines"):  # the line probed outside the buffer
        scan.probe_lines(buf, np.array([len(buf) + 1]), np.array([0]), np.array([1]), *args)
    with pytest.raises(ValueError, match="probe_lines"):  # arrays of different lengths
        scan.probe_lines(buf, starts, np.array([0]), np.array([1]), np.array([0, 0]),
                         np.ones(1, bool), b"  ")


#: pieces of amqsbcg's MQGET lines and near misses ('M' four bytes before a
#: 'T' that is no 'MQGET'), up to 30 of them
_GET_TEXT = st.lists(st.sampled_from(
    [b"MQGET of message number", b" MQGET", b"MQGE", b"T of", b" ", b"\t", b" " * 24, b"1",
     b"42", b"x", b"\n", b"\r\n", b", CompCode:0", b"M", b"MQGEx", b"MxxxT", b"MQGET",
     b"xxxxxxx"]), max_size=30).map(b"".join)


@_C_ONLY
@settings(max_examples=400, deadline=None)
@given(_GET_TEXT, st.booleans(), st.integers(0, 3))
def test_mqget_lines_finds_as_numpy(text, eof, cut_tail):
    from dlqlens.capture.amqsbcg import fast
    from dlqlens.capture.text import PAD

    n = max(0, len(text) - cut_tail)  # (a block may end inside a line)
    block = fast._Block(bytearray(text) + bytearray(PAD), n, eof)
    got = scan.mqget_lines(block.buf, block.n, block.starts, block.cend)
    want = block._mqget_lines()
    assert [g.tolist() for g in got] == [w.tolist() for w in want]


@_C_ONLY
def test_mqget_lines_refuses_lines_out_of_order_or_outside():
    buf = bytearray(b"MQGET of message number 1\nMQGET\n" + bytes(256))
    with pytest.raises(ValueError, match="mqget_lines"):
        scan.mqget_lines(buf, 32, np.array([26, 0]), np.array([31, 25]))
    with pytest.raises(ValueError, match="mqget_lines"):
        scan.mqget_lines(buf, 32, np.array([0]), np.array([len(buf) + 1]))
    with pytest.raises(ValueError, match="mqget_lines"):
        scan.mqget_lines(buf, len(buf) + 1, np.array([0]), np.array([25]))
    special, units = scan.mqget_lines(buf, 32, np.array([0, 26]), np.array([25, 31]))
    assert special.tolist() == [0, 1] and units.tolist() == [0]


def _dump_line(data: bytes, k: int) -> bytes:
    """A dump line as amqsbcg prints it (``amqsbcg.writer.format_message``)."""
    groups = " ".join(data[i:i + 2].hex().upper() for i in range(0, len(data), 2))
    chars = "".join(chr(b) if 32 <= b < 127 else "." for b in data)
    return f"{16 * k:08X}:  {groups.ljust(39)} '{chars.ljust(16)}'".encode()


_DUMP_EDIT = st.tuples(st.integers(0, 60), st.integers(0, 3), st.sampled_from(
    [b"", b" ", b"a", b"f", b"Z", b"0", b":", b"'", b"\t", b"\xff", b"  ", b"4142"]))


@_C_ONLY
@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.binary(min_size=1, max_size=16), st.integers(0, 300),
                          st.lists(_DUMP_EDIT, max_size=2), st.booleans()),
                min_size=1, max_size=8))
def test_dump_lines_check_as_the_numpy_version(lines):
    from dlqlens.capture.amqsbcg.dump import (_dump_lines, _dump_lines_any, _hex_columns_ok,
                                              _WANT)
    from dlqlens.capture.text import windows

    texts, nbytes, ks = [], [], []
    for data, k, edits, lower in lines:
        t = _dump_line(data, k)
        if lower:
            t = t[:11] + t[11:50].lower() + t[50:]
        for at, cut, new in edits:  # damage: bytes replaced, cut out or added
            t = t[:at] + new + t[at + cut:]
        texts.append(t)
        nbytes.append(len(data))
        ks.append(k)
    buf, starts, rend, _ = _lines_of(b"\n".join(texts))
    length = np.array([len(t) for t in texts], np.int64)
    nbytes, ks = np.array(nbytes, np.int64), np.array(ks, np.int64)
    p = np.frombuffer(buf, np.uint8)
    want_good, area = _dump_lines(p, starts, length, nbytes, ks)
    std, hexok, data = scan.dump_lines(buf, starts, length, nbytes, ks)
    good = std.copy()
    other = np.flatnonzero(~std)
    if len(other):  # the fast reader's numpy checks for lines of another layout
        good[other] = _dump_lines_any(p, starts[other], length[other], nbytes[other], ks[other],
                                      windows(p, starts[other], 52))
    assert good.tolist() == want_good.tolist()
    assert hexok.tolist() == _hex_columns_ok(area, nbytes).tolist()
    ends = np.cumsum(nbytes)
    for i in np.flatnonzero(hexok):  # the bytes of every line with hex digits throughout
        digits = bytes(area[i][_WANT[nbytes[i]]])
        assert data[ends[i] - nbytes[i]:ends[i]].tobytes() == bytes.fromhex(digits.decode())
    assert not data[np.repeat(~hexok, nbytes)].any()
    for i, (d, k, edits, _) in enumerate(lines):  # an undamaged line is read as printed
        if not edits:
            assert std[i] and data[ends[i] - nbytes[i]:ends[i]].tobytes() == d


@_C_ONLY
def test_dump_lines_refuses_inconsistent_arrays():
    with pytest.raises(ValueError, match="dump_lines"):
        scan.dump_lines(bytearray(64), np.array([0]), np.array([60]), np.array([17]),
                        np.array([0]))
    with pytest.raises(ValueError, match="dump_lines"):
        scan.dump_lines(bytearray(64), np.array([0, 1]), np.array([60]), np.array([16]),
                        np.array([0]))


@_C_ONLY
def test_an_extension_built_before_the_amqsbcg_loops_reads_with_numpy(tmp_path, monkeypatch):
    # the extension is built at install, not on checkout: one from an older
    # _scan.c lacks match_lines and dump_lines, and the amqsbcg fast reader
    # then takes its numpy path (it used to fail on the missing function)
    import types

    from dlqlens.capture.amqsbcg import fast, write_amqsbcg
    from dlqlens.capture.message import CaptureMessage

    msgs = [CaptureMessage(md={"MsgId": bytes([i]) * 24, "PutApplName": f"app{i % 3}"},
                           data=bytes(range(i % 40)) * 2) for i in range(60)]
    path = tmp_path / "m.bcg"
    write_amqsbcg(str(path), msgs)

    def frames():
        return [(f.md.tobytes(), f.data.tobytes(), f.starts.tolist()) for f in
                fast.read_amqsbcg(str(path))]

    want = frames()
    old = types.SimpleNamespace(**{k: getattr(scan._scan, k) for k in
                                   ("line_table", "hex_runs", "rows_like_first", "find_all")})
    monkeypatch.setattr(scan, "_scan", old)
    assert not scan.compiled("match_lines") and not scan.compiled("dump_lines")
    assert frames() == want
    assert sum(len(f[2]) for f in want) == 60


@_C_ONLY
def test_template_fields_reads_values_and_refuses_what_lies_outside():
    """``template_fields`` (the dmpmqmsg late values in C): known answers for
    each kind, and a refusal, with nothing written, for a value outside the
    buffer, a field outside the MQMD row, an unknown kind or sizes that
    disagree."""
    text = b"-12 VALUE 4142 C3 1x 3\n" * 2
    at0 = np.array([0, 23], np.int64)

    def run(fields, md_width=20):
        md = np.full((2, md_width), 0xEE, np.uint8)
        ok = np.ones(2, np.uint8)
        ver = np.zeros(2, np.int32)
        scan.template_fields(text, at0, np.array(fields, np.int64).reshape(-1, 5), md, ok, ver)
        return md, ok, ver

    md, ok, ver = run([(0, 0, 3, 0, 4), (2, 4, 5, 4, 7), (3, 10, 4, 11, 2), (1, 21, 1, 16, 4)])
    assert md[0, :4].view("<i4")[0] == -12
    assert md[0, 4:11].tobytes() == b"VALUE  " and md[0, 11:13].tobytes() == b"AB"
    assert ver.tolist() == [2, 2] and md[0, 16:20].view("<i4")[0] == 2 and ok.tolist() == [1, 1]
    assert run([(0, 18, 2, 0, 4)])[1].tolist() == [0, 0]  # '1x' is no number
    assert run([(4, 15, 2, 0, 1)])[1].tolist() == [0, 0]  # C3: not an ASCII character
    assert run([(3, 15, 2, 0, 1)])[1].tolist() == [1, 1]  # the same as bytes: fine
    assert run([(3, 10, 4, 0, 3)])[1].tolist() == [0, 0]  # 4 digits for 3 bytes
    md, ok, _ = run([(2, 4, 5, 0, 3)])  # characters cut to the field
    assert md[0, :4].tobytes() == b"VAL\xee"
    for fields, width in (([(0, 22, 2, 0, 4)], 16),   # past the buffer's end
                          ([(2, 4, 5, 14, 3)], 16),   # past the MQMD row
                          ([(5, 0, 1, 0, 1)], 16),    # an unknown kind
                          ([(0, 0, 3, 0, 3)], 16),    # an MQLONG of 3 bytes
                          ([(0, -1, 3, 0, 4)], 16)):  # a negative offset
        md = np.full((2, width), 0xEE, np.uint8)
        with pytest.raises(ValueError, match="template_fields"):
            scan.template_fields(text, at0, np.array(fields, np.int64), md,
                                 np.ones(2, np.uint8), np.zeros(2, np.int32))
        assert (md == 0xEE).all()
    with pytest.raises(ValueError, match="inconsistent sizes"):
        scan.template_fields(text, at0, np.zeros((0, 5), np.int64), np.zeros((2, 16), np.uint8),
                             np.ones(3, np.uint8), np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="outside the buffer"):
        scan.template_fields(text, np.array([0, len(text) + 1], np.int64),
                             np.zeros((0, 5), np.int64), np.zeros((2, 16), np.uint8),
                             np.ones(2, np.uint8), np.zeros(2, np.int32))


@_C_ONLY
def test_dmp_units_refuses_what_lies_outside_or_does_not_agree():
    """``dmp_units`` (the dmpmqmsg units in C): a known answer, and a
    ValueError, before anything is read, for lines outside the buffer, units
    outside the lines, arrays whose sizes disagree and a bad code table."""
    from dlqlens.capture.dmpmqmsg import fast
    from dlqlens.capture.dmpmqmsg.attrs import C_TABLES
    from dlqlens.capture.text import PAD

    blob = dmpmqmsg_text()
    blk = fast._Block(bytearray(blob) + bytes(PAD), len(blob), True)
    us = blk.unit_starts
    ue = np.append(us[1:], blk.nlines)
    ok, md, ver, first_a, dl, data = scan.dmp_units(blk.buf, blk.starts, blk.cend, blk.cls,
                                                   us, ue, C_TABLES)
    assert ok.tolist() == [True, False] and ver.tolist() == [2] and first_a.tolist() == [0]
    assert data.tobytes() == b"hello" and dl.tolist() == [5]
    assert md[0, 28:32].view("<i4")[0] == 1208  # A CCS
    codes, always, v2, ver_code, template, next_col = C_TABLES

    def refused(match, **change):
        args = dict(buf=blk.buf, starts=blk.starts, cend=blk.cend, cls=blk.cls, us=us, ue=ue,
                    tables=C_TABLES)
        args.update(change)
        with pytest.raises(ValueError, match=match):
            scan.dmp_units(**args)

    far = blk.cend.copy()
    far[0] = len(blk.buf) + 1
    refused("a line outside the buffer", cend=far)
    refused("a unit outside the lines", ue=ue + 1)
    refused("inconsistent sizes", cls=blk.cls[:-1])
    refused("inconsistent sizes", ue=ue[:-1])
    bad = codes.copy()
    bad[0, 0] = int.from_bytes(b"ab1", "big")
    refused("three capital letters", tables=(bad, always, v2, ver_code, template, next_col))
    bad = codes.copy()
    bad[0, 1] = len(template)
    refused("outside the MQMD row", tables=(bad, always, v2, ver_code, template, next_col))
    refused("VER code", tables=(codes, always, v2, len(codes), template, next_col))
    refused("character column", tables=(codes, always, v2, ver_code, template,
                                        np.full_like(next_col, len(template))))


def dmpmqmsg_text() -> bytes:
    """Two messages as dmpmqmsg writes them, the second without its ACC line."""
    from dlqlens.capture import dmpmqmsg
    from dlqlens.capture.message import CaptureMessage

    one = dmpmqmsg.format_message(CaptureMessage(md={"CodedCharSetId": 1208}, data=b"hello"))
    two = dmpmqmsg.format_message(CaptureMessage(md={}, data=b"bye"))
    two = "\n".join(t for t in two.split("\n") if not t.startswith("A ACC")) + "\n"
    return (one + two).encode()
