"""The vectorised (fast) text readers give exactly what the line-by-line readers give.

``read_dmpmqmsg(path)`` and ``read_amqsbcg(path)`` frame well-formed messages a
block at a time with numpy and hand everything else to their line readers
(``fast=False``). These tests write random messages with the writers, damage
them at random (and every kind of line with every kind of damage), and check
that both paths produce identical Frames (every column, every message's bytes,
every issue and raw record) and identical decoded rows, with blocks cut at
random sizes; and that clean writer output really takes the fast path.
"""

from __future__ import annotations

import string

import numpy as np
import pytest
from tests.builders import FAST, dlq_message, plain_message, write_capture
from hypothesis import given
from hypothesis import strategies as st

from dlqlens.capture import amqsbcg, dmpmqmsg, scan
from dlqlens.capture.amqsbcg import fast as amqsbcg_fast
from dlqlens.capture.amqsbcg import layout as amqsbcg_layout
from dlqlens.capture.amqsbcg import lines as amqsbcg_lines
from dlqlens.capture.dmpmqmsg import fast as dmpmqmsg_fast
from dlqlens.capture.dmpmqmsg import lines as dmpmqmsg_lines
from dlqlens.capture.message import CaptureMessage
from dlqlens.capture.text import concat_frames
from dlqlens.decode.records import decode_frames

# --------------------------------------------------------------------------
# comparing two readings of a file
# --------------------------------------------------------------------------

ARRAYS = ("md", "md_big_endian", "md_codec", "md_blank", "md_version", "md_valid",
          "data_length", "message_number", "source_offset", "source_line", "dlh_reconstructed")


def _frames(batches):
    batches = list(batches)
    return concat_frames(batches) if batches else None


def assert_same_frames(a, b):
    if a is None or b is None:
        assert a is None and b is None
        return
    assert len(a) == len(b)
    assert (a.source, a.capture_format, a.md_origin) == (b.source, b.capture_format, b.md_origin)
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape, name
        assert (x == y).all(), (name, np.flatnonzero(np.atleast_1d(x != y).reshape(len(a), -1)
                                                     .any(axis=1))[:5])
    for i in range(len(a)):
        da = a.data[a.starts[i]:a.ends[i]].tobytes()
        db = b.data[b.starts[i]:b.ends[i]].tobytes()
        assert da == db, i
    assert a.issues == b.issues
    assert a.raw == b.raw


READERS = {dmpmqmsg: dmpmqmsg.read_dmpmqmsg, amqsbcg: amqsbcg.read_amqsbcg}
#: Each format's fast reader (its block sizes, its block type) and line reader.
FAST_READER = {dmpmqmsg: dmpmqmsg_fast, amqsbcg: amqsbcg_fast}
LINE_READER = {dmpmqmsg: dmpmqmsg_lines, amqsbcg: amqsbcg_lines}


@pytest.fixture(autouse=True, params=[
    "numpy", pytest.param("c", marks=pytest.mark.skipif(
        not scan.COMPILED, reason="dlqlens.capture._scan was not built (no C compiler at install)"))])
def fast_even_for_small_files(request, monkeypatch):
    """The readers leave small files to the line reader: not here. Every test
    runs with the fast readers' byte loops in numpy and in C (``_scan``,
    where the amqsbcg descriptor lines are matched unit by unit)."""
    monkeypatch.setattr(dmpmqmsg_fast, "MIN_FAST_UNITS", 0)
    monkeypatch.setattr(amqsbcg_fast, "MIN_FAST_UNITS", 0)
    if request.param == "numpy":
        monkeypatch.setattr(scan, "_scan", None)
    return request.param


def read_both(path, monkeypatch=None, chunk=None, batch_size=65536, module=dmpmqmsg):
    if chunk is not None:
        monkeypatch.setattr(FAST_READER[module], "CHUNK_BYTES", chunk)
    read = READERS[module]
    fast = list(read(str(path), batch_size=batch_size))
    slow = list(read(str(path), batch_size=batch_size, fast=False))
    return fast, slow


def assert_same_reading(path, monkeypatch, chunk=None, decode=True, module=dmpmqmsg):
    fast, slow = read_both(path, monkeypatch, chunk, module=module)
    assert_same_frames(_frames(fast), _frames(slow))
    if not decode:  # the decode is a function of the frames
        return
    rows_fast = [r for fr in fast for r in decode_frames(fr).to_pylist()]
    rows_slow = [r for fr in slow for r in decode_frames(fr).to_pylist()]
    assert rows_fast == rows_slow


def line_read(path, monkeypatch, chunk=None, module=dmpmqmsg) -> list[list[str]]:
    """The lines the fast reader hands to the line reader, per call (blank
    lines and, for dmpmqmsg, comments left out)."""
    calls = []
    real = LINE_READER[module]._frame_lines

    def spy(lines, source, count):
        lines = list(lines)
        calls.append([t for _, _, t in lines])
        return real(iter(lines), source, count)

    with monkeypatch.context() as m:
        m.setattr(FAST_READER[module]._Block, "frame_lines", staticmethod(spy))
        if chunk is not None:
            m.setattr(FAST_READER[module], "CHUNK_BYTES", chunk)
        list(READERS[module](str(path)))
    skip = "*" if module is dmpmqmsg else ""
    return [[t for t in call if t.strip() and not (skip and t[0] == skip)] for call in calls]


# --------------------------------------------------------------------------
# random messages
# --------------------------------------------------------------------------

MQLONG = st.integers(-2**31, 2**31 - 1)
SMALL = st.sampled_from([0, 1, 2, 8, -1, 546, 1208, 273, 785, 500, 2**31 - 1, -2**31])
ASCII = string.ascii_letters + string.digits + " ._-/#@$%&*()=+'\"~<>"


def _chars(size, alphabet=ASCII):
    return st.text(alphabet, max_size=size)


@st.composite
def messages(draw):
    version = draw(st.sampled_from([1, 2, 2, 2]))
    ints = st.one_of(SMALL, MQLONG)
    md = {"Version": version}
    for name in ("Report", "MsgType", "Expiry", "Feedback", "Encoding", "CodedCharSetId",
                 "Priority", "Persistence", "BackoutCount", "PutApplType", "MsgSeqNumber",
                 "Offset", "MsgFlags", "OriginalLength"):
        if draw(st.booleans()):
            md[name] = draw(ints)
    for name, size in (("Format", 8), ("ReplyToQ", 48), ("ReplyToQMgr", 48),
                       ("UserIdentifier", 12), ("PutApplName", 28), ("PutDate", 8),
                       ("PutTime", 8)):
        if draw(st.booleans()):
            md[name] = draw(_chars(size))
    for name, size in (("ApplIdentityData", 32), ("ApplOriginData", 4)):
        if draw(st.booleans()):
            md[name] = draw(_chars(size, ASCII + "\x00" + ("\xe9" if draw(st.integers(0, 9)) == 0
                                                             else "")))
    for name, size in (("MsgId", 24), ("CorrelId", 24), ("AccountingToken", 32), ("GroupId", 24)):
        if draw(st.booleans()):
            md[name] = draw(st.binary(min_size=size, max_size=size))
    if draw(st.integers(0, 19)) == 0:
        md["PutApplName"] = draw(st.text(max_size=9))  # any characters: UTF-8 in the file
    data = draw(st.binary(max_size=120))
    if draw(st.booleans()):
        return dlq_message(data, md=md)
    return CaptureMessage(md=md, data=data)


def _a_value(t, v):
    return t[:6] + v if t.startswith("A ") and len(t) >= 6 else t


#: Damage, by the lines it applies to: (name, line filter, edit(line, draw) -> lines).
EDITS = [
    ("delete", None, lambda t, d: []),
    ("duplicate", None, lambda t, d: [t, t]),
    ("stray", None, lambda t, d: [d(st.sampled_from(["junk", " ", "Xylophone", "A", "X",
                                                      "AVER 2", "\t"])), t]),
    ("comment", None, lambda t, d: ["* Index 99", t]),
    ("blank", None, lambda t, d: ["", t]),
    ("s_line", None, lambda t, d: ['S "hello ~"x~""', t]),
    ("t_line", None, lambda t, d: ["T some text", t]),
    ("n_line", None, lambda t, d: ["N", t]),
    ("trailing", None, lambda t, d: [t + d(st.sampled_from(["   ", "\t", " x"]))]),
    ("crcr", None, lambda t, d: [t + "\r\r"]),
    ("cr_inside", None, lambda t, d: [t[:8] + "\r" + t[8:]]),
    ("tab", None, lambda t, d: [t.replace(" ", "\t", 1)]),
    ("invalid_utf8", None, lambda t, d: [t[:d(st.integers(0, len(t)))] + "\udce9"
                                         + t[d(st.integers(0, len(t))):]]),
    ("char", None, lambda t, d: [_set_char(t, d, "GZ -\t<>'\"é\x00\x0b")]),
    # X lines
    ("x_char", "X", lambda t, d: [_set_char(t, d, "GZg -\t<>.é\x00\x0b\x0c")]),
    ("x_lower", "X", lambda t, d: [t.lower()]),
    ("x_odd", "X", lambda t, d: [t[:2] + "A" + t[2:]]),
    ("x_spaces", "X", lambda t, d: [t.replace("X ", "X" + " " * d(st.integers(0, 3)), 1)]),
    ("x_column", "X", lambda t, d: [t + d(st.sampled_from(["  <abc>", " <", "<x>", "   < >",
                                                             " \t<x>", "  x<"]))]),
    ("x_inner_blank", "X", lambda t, d: [t[:6] + " " + t[6:]]),
    # A lines
    ("a_int", "A", lambda t, d: [_a_value(t, d(st.sampled_from(
        ["12x", "+7", "-", "", " 5", "5 ", "0" * 13 + "1", "00000000007", "-0", "-2147483648",
         "2147483648", "99999999999", "1e3", "\u0661", "\x1c5", "5\x1f"])))]),
    ("a_zeros", "A", lambda t, d: [t[:6] + "0" * d(st.integers(1, 14)) + t[6:]]),
    ("a_short", "A", lambda t, d: [t[:d(st.integers(0, 10))]]),
    ("a_long", "A", lambda t, d: [t + d(st.sampled_from(["x" * 60, "AB" * 40, "é" * 30]))]),
    ("a_code", "A", lambda t, d: [t[:2] + d(st.sampled_from(["XYZ", "ver", "AID", "AOD", "VER",
                                                             "MSI"])) + t[5:]]),
    ("a_invalid_utf8", "A", lambda t, d: [_set_char(t, d, "\udce9\udcff\udc80")]),
    ("a_sep", "A", lambda t, d: [t[:5] + d(st.sampled_from(["x", "\t", ""])) + t[6:]]),
    ("a_hex", "A", lambda t, d: [_a_value(t, d(st.sampled_from(
        ["AB", "ab" * 24, "A" * 48, "FF" * 32, "80" * 4, "41" * 23 + "4G", "41" * 24 + " ",
         "E9E9E9E9", "00000000"])))]),
]
EDIT_NAMES = [e[0] for e in EDITS]


def _set_char(t, draw, chars):
    if not t:
        return t
    if isinstance(draw, Choices):
        j, c = draw.int(0, len(t) - 1), draw.pick(chars)
    else:
        j, c = draw(st.integers(0, len(t) - 1)), draw(st.sampled_from(chars))
    return t[:j] + c + t[j + 1:]


class Choices:
    """The choices an edit makes: drawn by Hypothesis, or made in turn."""

    def __init__(self, draw=None, seed=0):
        self.draw, self.i = draw, seed
        self.variants = 1  # how many seeds make every choice at least once
        self.positions = False  # ...when no position is chosen too

    def pick(self, values):
        if self.draw:
            return self.draw(st.sampled_from(values))
        self.variants = max(self.variants, len(values))
        self.i += 1
        return values[(self.i - 1) % len(values)]

    def int(self, lo, hi):
        if self.draw:
            return self.draw(st.integers(lo, hi))
        self.positions = True
        self.i += 1
        return lo + ((self.i - 1) * 7) % (hi - lo + 1)

    def bool(self):
        return bool(self.int(0, 1))


@st.composite
def damaged_files(draw):
    ms = draw(st.lists(messages(), min_size=1, max_size=6))
    ascii_column = draw(st.booleans())
    index = draw(st.booleans())
    header = draw(st.booleans())
    width = draw(st.sampled_from([25, 25, 10, 16, 40]))
    text = "* QLOAD Version:8.0 Created:Fri Mar 15 10:20:00 2024\n\n" if header else ""
    for i, m in enumerate(ms, 1):
        text += dmpmqmsg.format_message(m, width=width, ascii_column=ascii_column,
                                        index=i if index else None)
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, 4))):
        name = draw(st.sampled_from(EDIT_NAMES))
        _, kind, edit = EDITS[EDIT_NAMES.index(name)]
        at = [k for k, t in enumerate(lines) if kind is None or t.startswith(kind + " ")]
        if not at:
            continue
        k = draw(st.sampled_from(at))
        lines[k:k + 1] = edit(lines[k], draw)
    if draw(st.integers(0, 5)) == 0 and lines:  # the file ends inside a message
        k = draw(st.integers(0, len(lines) - 1))
        lines[k] = lines[k][:draw(st.integers(0, len(lines[k])))]
        del lines[k + 1:]
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    out = newline.join(lines)
    if draw(st.integers(0, 4)) == 0:
        out = out.rstrip("\n")  # no final line end
    return out.encode("utf-8", errors="surrogateescape")


# --------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------

def test_random_damaged_files_read_the_same_fast_and_line_by_line(tmp_path, monkeypatch):
    @FAST
    @given(damaged_files(), st.sampled_from([None, 64, 300, 1000, 5000]))
    def check(blob, chunk):
        p = tmp_path / "f.qld"
        p.write_bytes(blob)
        assert_same_reading(p, monkeypatch, chunk)

    check()


def test_clean_writer_output_takes_the_fast_path(tmp_path, monkeypatch):
    ms = [dlq_message(b"x" * i, md={"MsgId": bytes([i]) * 24}) for i in range(20)] + \
        [plain_message(b""), dlq_message(b"v1", md={"Version": 1})]
    variants = {
        "plain": dict(),
        "ascii": dict(ascii_column=True),
        "crlf": dict(newline="\r\n"),
        "ascii-crlf": dict(ascii_column=True, newline="\r\n"),
    }
    for name, kw in variants.items():
        p = tmp_path / f"{name}.qld"
        dmpmqmsg.write_dmpmqmsg(p, ms, qmgr="QM1", queue="DLQ", **kw)
        for chunk in (None, 2000):
            assert_same_reading(p, monkeypatch, chunk)
            # the header's comment lines are the only lines left to the line reader
            assert all(call == [] for call in line_read(p, monkeypatch, chunk)), (name, chunk)


#: Same-length damage to an attribute value: characters a number, hex or a
#: hex character string may not hold, and ones they may
_VALUE_CHARS = "0123456789-+ xG.aF"


def test_values_that_differ_from_unit_to_unit_read_as_line_by_line(tmp_path, monkeypatch):
    """Units laid out alike (every line as long as in the first unit) whose
    values differ: read column by column (in C: ``scan.template_fields``) they
    give what the line reader gives, a value damaged in place included (a
    letter in a number, a sign in hex, hex of a character of 0x80 or more)."""
    @FAST
    @given(st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 9),
                              st.binary(min_size=24, max_size=24)), min_size=2, max_size=6),
           st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 64),
                              st.sampled_from(_VALUE_CHARS)), max_size=3),
           st.booleans())
    def check(values, damage, high_aix):
        ms = [dlq_message(b"m%d" % i, md={"Expiry": 10**9 + e % 10**9, "Priority": pr,
                                         "MsgId": msgid, "ApplIdentityData": "appl%05d" % i})
              for i, (e, pr, msgid) in enumerate(values)]
        lines = "".join(dmpmqmsg.format_message(m) for m in ms).split("\n")
        a_lines = [k for k, t in enumerate(lines) if t.startswith("A ")]
        for pick, col, ch in damage:
            k = a_lines[pick % len(a_lines)]
            t = lines[k]
            if len(t) > 6:
                c = 6 + col % (len(t) - 6)
                lines[k] = t[:c] + ch + t[c + 1:]
        if high_aix:  # hex of a character of 0x80 or more: the line reader's issue
            k = next(k for k in a_lines if lines[k].startswith("A AIX"))
            lines[k] = lines[k][:6] + "C3" + lines[k][8:]
        p = tmp_path / "v.qld"
        p.write_text("\n".join(lines))
        assert_same_reading(p, monkeypatch)

    check()


def test_index_lines_and_character_attributes_take_the_fast_path(tmp_path, monkeypatch):
    text = "".join(dmpmqmsg.format_message(dlq_message(b"m%d" % i), index=i) for i in range(5))
    # every line dmpmqmsg writes, AID and AOD instead of AIX and AOX (-dc)
    last = dmpmqmsg.format_message(dlq_message(b"A")).split("\n")
    last = [("A AID my identity data" if t.startswith("A AIX") else
             "A AOD abcd" if t.startswith("A AOX") else "A USR " if t.startswith("A USR")
             else t) for t in last]
    text += "\n".join(last)
    p = tmp_path / "idx.qld"
    p.write_text(text)
    assert_same_reading(p, monkeypatch)
    assert all(call == [] for call in line_read(p, monkeypatch))


def test_a_damaged_message_leaves_its_neighbours_on_the_fast_path(tmp_path, monkeypatch):
    good = [dmpmqmsg.format_message(dlq_message(b"good %d" % i)) for i in range(4)]
    bad = dmpmqmsg.format_message(dlq_message(b"bad")).replace("A EXP -1", "A EXP never")
    p = tmp_path / "one-bad.qld"
    p.write_text(good[0] + good[1] + bad + good[2] + good[3])
    assert_same_reading(p, monkeypatch)
    (call,) = [c for c in line_read(p, monkeypatch) if c]
    assert "A EXP never" in call and call[0] == "A VER 2"
    assert sum(t.startswith("A VER") for t in call) == 1


def test_the_c_loop_reads_every_unit_the_numpy_steps_read(fast_even_for_small_files):
    """``scan.dmp_units`` (one C pass over a block's units) against the numpy
    steps it stands for, over random damaged files: every unit the numpy
    steps read, the C loop reads, with the same MQMD row, version, data and
    line. (The units only the C loop reads are checked against the line
    reader by the tests above, which run with each.)"""
    if fast_even_for_small_files != "c":
        pytest.skip("the C loop against the numpy steps: once, in the C run")
    from dlqlens.capture.text import PAD

    @FAST
    @given(damaged_files())
    def check(blob):
        blk = dmpmqmsg_fast._Block(bytearray(blob) + bytes(PAD), len(blob), True)
        us = blk.unit_starts
        ue = np.append(us[1:], blk.nlines)
        ok_c, fr_c = blk.fast_units(us, ue, blk.nlines, "f", 0, 0)
        ok_n, fr_n = blk._fast_units_numpy(us, ue, blk.nlines, "f", 0, 0)
        assert not (ok_n & ~ok_c).any()
        rows = np.flatnonzero(ok_n[ok_c])  # the numpy-read units among those read in C
        for name in ("md", "md_version", "data_length", "source_line", "source_offset"):
            assert (getattr(fr_c, name)[rows] == getattr(fr_n, name)).all(), name
        for i, r in enumerate(rows):
            assert fr_c.data[fr_c.starts[r]:fr_c.ends[r]].tobytes() == \
                fr_n.data[fr_n.starts[i]:fr_n.ends[i]].tobytes()

    check()


def test_units_the_numpy_steps_leave_to_the_line_reader_take_the_c_loop(
        tmp_path, monkeypatch, fast_even_for_small_files):
    """What the numpy steps leave to the line reader for their own reasons
    (more than 16 orders of the attribute lines in a block; an X line of more
    than 128 digits before its ``<...>`` column) the C loop reads: the same
    frames as the line reader's, and no line for the line reader."""
    ms = [dlq_message(b"m%d" % i * 40, md={"MsgId": bytes([i]) * 24}) for i in range(20)]
    text = ""
    for i, m in enumerate(ms):  # each message's attribute lines in another order
        lines = dmpmqmsg.format_message(m, width=80, ascii_column=True).split("\n")
        a = [t for t in lines if t.startswith("A ")]
        rest = [t for t in lines if not t.startswith("A ")]
        text += "\n".join(a[i:] + a[:i] + rest)
    assert max(len(t) for t in text.split("\n") if t.startswith("X ")) > 2 + 128 + 3
    p = tmp_path / "orders.qld"
    p.write_text(text)
    assert_same_reading(p, monkeypatch)
    if fast_even_for_small_files == "c":
        assert all(call == [] for call in line_read(p, monkeypatch))


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 100])
def test_batches_of_fast_and_line_read_messages(tmp_path, monkeypatch, batch_size):
    parts = []
    for i in range(9):
        t = dmpmqmsg.format_message(dlq_message(b"m%d" % i))
        if i % 3 == 1:
            t = t.replace("A PRI 4", "A PRI four") + "stray words\n"
        parts.append(t)
    p = tmp_path / "mixed.qld"
    p.write_text("".join(parts))
    monkeypatch.setattr(dmpmqmsg_fast, "CHUNK_BYTES", 1500)
    fast, slow = read_both(p, batch_size=batch_size)
    sizes = [len(f) for f in fast]
    total = len(_frames(slow))
    assert total == 12
    whole, rest = divmod(total, batch_size)
    assert sizes == [batch_size] * whole + ([rest] if rest else [])
    assert_same_frames(_frames(fast), _frames(slow))
    numbers = np.concatenate([f.message_number for f in fast])
    assert numbers.tolist() == list(range(1, total + 1))


def test_file_without_message_boundaries_is_read_whole(tmp_path, monkeypatch):
    # -dA output: every message ends with an S line, so blocks cannot be cut
    # after it; the block grows until it can
    text = "".join('A VER 2\nA FMT MQSTR   \nS "message %d"\n\n' % i for i in range(200))
    p = tmp_path / "s-lines.qld"
    p.write_text(text)
    assert_same_reading(p, monkeypatch, chunk=100)
    fast, _ = read_both(p)
    assert len(_frames(fast)) == 200


def test_empty_and_comment_only_files(tmp_path, monkeypatch):
    for name, text in [("empty", b""), ("comments", b"* QLOAD Version:8.0\n\n* x\n"),
                       ("junk", b"junk"), ("x-only", b"X 41\n")]:
        p = tmp_path / f"{name}.qld"
        p.write_bytes(text)
        assert_same_reading(p, monkeypatch)
        assert_same_reading(p, monkeypatch, chunk=2)


# --------------------------------------------------------------------------
# every kind of damage, on every kind of line
# --------------------------------------------------------------------------

A_VALUES = ["12x", "+7", "-", "", " 5", "5 ", "\t5", "0" * 13 + "1", "00000000007", "-0",
            "-2147483648", "2147483647", "2147483648", "-2147483649", "99999999999", "1e3",
            "\u0661", "AB", "ab" * 24, "A" * 48, "FF" * 32, "80" * 4, "41" * 23 + "4G",
            "41" * 24 + " ", "E9E9E9E9", "00000000", "x" * 60, "\xe9" * 30, "abc\x00", "abc\r",
            "abc\r\r", "\r\r", "MQSTR\udce9", "\udcff", "2", "1", "3", "0"]
A_LINE_EDITS = [lambda t: t + "\r\r", lambda t: t[:5], lambda t: t[:4], lambda t: t[:6],
                lambda t: t[:2] + "XYZ" + t[5:], lambda t: t[:2] + "ver" + t[5:],
                lambda t: t[:2] + "AID" + t[5:], lambda t: t[:5] + "x" + t[6:],
                lambda t: t[:5] + "\t" + t[6:], lambda t: "A\t" + t[2:], lambda t: t + "   ",
                lambda t: t + "\nA RPT 0", lambda t: t + "\n* comment", lambda t: t + "\n",
                lambda t: t + "\n ", lambda t: "\udce9" + t, lambda t: t + "\nN"]
X_EDITS = [str.lower, lambda t: t + "A", lambda t: t + "  <abc>", lambda t: t + " <",
           lambda t: t + "<x>", lambda t: "X   <abc>", lambda t: "X  " + t[2:],
           lambda t: "X", lambda t: "X ", lambda t: "X  ", lambda t: t[:6] + " " + t[6:],
           lambda t: t + "\t", lambda t: t + " \t<x>", lambda t: t + "\r\r", lambda t: t + "\r",
           lambda t: t[:4] + "G" + t[5:], lambda t: t[:4] + "\x0b" + t[5:],
           lambda t: t[:4] + "\r" + t[5:], lambda t: t + "  <\xe9>", lambda t: t + "  <\udce9>",
           lambda t: t + "   ", lambda t: t + '\nS "x"', lambda t: t + "\nT x", lambda t: t + "\nN",
           lambda t: t + "\n\nX 41", lambda t: t + "\n* c\nX 41", lambda t: "x" + t[1:],
           lambda t: t + "\njunk", lambda t: t + "\nA VER 2"]


def _three(ascii_column=False):
    texts = [dmpmqmsg.format_message(dlq_message(b"message %d" % i + bytes(range(40)),
                                                 md={"ApplIdentityData": "id"}),
                                     ascii_column=ascii_column) for i in range(3)]
    first = texts[0].count("\n")
    return (texts[0] + texts[1] + texts[2]).split("\n"), first, first + texts[1].count("\n")


def _check_edits(tmp_path, monkeypatch, at, edits, ascii_columns):
    """Each edit on the middle one of three messages; the damaged messages
    between clean ones, all in one file per layout."""
    for ascii_column in ascii_columns:
        lines, lo, hi = _three(ascii_column)
        k = at(lines, lo, hi)
        text = lines[:lo]
        for edit in edits:
            text += lines[lo:k] + [edit(lines[k])] + lines[k + 1:hi] + lines[:lo]
        p = tmp_path / "edits.qld"
        p.write_bytes("\n".join(text + [""]).encode("utf-8", errors="surrogateescape"))
        assert_same_reading(p, monkeypatch, decode=False)


@pytest.mark.parametrize("code", ["VER", "EXP", "CCS", "FMT", "PAN", "MSI", "ACC", "AIX", "AOX"])
def test_every_attribute_damage_reads_the_same(tmp_path, monkeypatch, code):
    def at(lines, lo, hi):
        return next(k for k in range(lo, hi) if lines[k].startswith(f"A {code}"))

    edits = [(lambda v: lambda t: t[:6] + v)(v) for v in A_VALUES] + A_LINE_EDITS
    _check_edits(tmp_path, monkeypatch, at, edits, [False])


@pytest.mark.parametrize("which", ["first", "last"])
def test_every_hex_line_damage_reads_the_same(tmp_path, monkeypatch, which):
    def at(lines, lo, hi):
        xs = [k for k in range(lo, hi) if lines[k].startswith("X ")]
        return xs[0] if which == "first" else xs[-1]

    _check_edits(tmp_path, monkeypatch, at, X_EDITS, [False, True])


# --------------------------------------------------------------------------
# amqsbcg
# --------------------------------------------------------------------------

AMQSBCG_HEAD = "\nAMQSBCG0 - starts here\n**********************\n \n MQOPEN - 'DLQ'\n \n"
AMQSBCG_END = " \n \n \n No more messages \n"
AMQSBCG_SUMMARY = ("\n****   Summary      ****\n 1 messages browsed.\n Smallest message 1 bytes.\n"
                   " Largest message 1 bytes.\n Average message 1 bytes.\n")


@st.composite
def bcg_messages(draw):
    m = draw(messages())
    if m.md.get("Format") == "MQDEAD":  # a dead letter: its DLH in one of the code pages
        encoding = draw(st.sampled_from([546, 273, 785, 17]))
        ccsid = draw(st.sampled_from([1208, 819, 437, 500, 37, 1047, 850]))
        md = {k: v for k, v in m.md.items() if k not in ("Encoding", "CodedCharSetId", "Format")}
        dlh = {"DestQName": draw(_chars(48, string.ascii_letters + ". ")),
               "PutApplName": draw(_chars(28)), "Reason": draw(st.one_of(SMALL, MQLONG))}
        return dlq_message(m.data[172:], md=md, dlh=dlh, encoding=encoding, ccsid=ccsid)
    return m


def _bcg_text(ms, draw):
    text = AMQSBCG_HEAD if draw(st.booleans()) else ""
    dlh_block = draw(st.booleans())
    for i, m in enumerate(ms, 1):
        text += amqsbcg.format_message(i, m, dlh_block=dlh_block, compcode=draw(st.booleans()))
    if draw(st.booleans()):
        text += AMQSBCG_END + (AMQSBCG_SUMMARY if dlh_block else "") + "\n MQCLOSE\n MQDISC\n"
    return text


def _is_dump(t):
    return len(t) > 9 and t[8] == ":" and all(c in string.hexdigits for c in t[:8])


def _set(t, at, new):
    return t[:at] + new + t[at + len(new):]


BCG_EDITS = [
    ("delete", None, lambda t, d: []),
    ("duplicate", None, lambda t, d: [t, t]),
    ("blank", None, lambda t, d: [d.pick([" ", "", "   ", "\t"]), t]),
    ("stray", None, lambda t, d: [d.pick(["$ amqsbcg DLQ QM1", "junk", ":", "  Priority : 9"]),
                                  t]),
    ("end", None, lambda t, d: [d.pick([" No more messages ", "****   Summary      ****",
                                        " MQGET 3, failed with CompCode:2 Reason:2033"]), t]),
    ("props", None, lambda t, d: ["****Message properties****", "  None", t]),
    ("banner", None, lambda t, d: [d.pick(["****Message descriptor****",
                                           "****Dead Letter Header****",
                                           "****   Message      ****"]), t]),
    ("mqget", None, lambda t, d: [d.pick([" MQGET of message number 7",
                                          " MQGET of message number\xa07",
                                          " MQGET of message number x",
                                          " MQGET of message number7"]), t]),
    ("crcr", None, lambda t, d: [t + "\r\r"]),
    ("trailing", None, lambda t, d: [t + d.pick(["  ", "\t", " x"])]),
    ("invalid_utf8", None, lambda t, d: [_set_char(t, d, "\udce9\udcff")]),
    ("char", None, lambda t, d: [_set_char(t, d, "'0Zx :-\t\xe9[]")]),
    # descriptor and DLH lines
    ("md_value", "  ", lambda t, d: [t.split(":")[0] + ": " + d.pick(
        ["'a'b'", "'x'", "5x", "-", "+5", "''", "99999999999", "00000000000012", "X'41'",
         "'4' [x]", "7 [y]", "'MQDEAD  '  Extra : 1", "X'" + "4" * 47 + "'",
         "'No more messages'", "'MQGET 1, failed'", "'MQGET of message number 9'"])]),
    ("md_label", "  ", lambda t, d: [t.replace(":", d.pick([" :", ":  ", "="]), 1)]),
    ("md_quote", "  ", lambda t, d: [t.replace("'", "''", 1)]),
    ("md_indent", "  ", lambda t, d: [t[1:] if d.bool() else " " + t]),
    # dump lines
    ("offset", "dump", lambda t, d: [_set(t, d.int(0, 7), d.pick("0F1aG "))]),
    ("hex", "dump", lambda t, d: [_set(t, d.int(11, 49), d.pick("0fG ':\t"))]),
    ("sep", "dump", lambda t, d: [_set(t, d.int(8, 10), d.pick("4: "))]),
    ("group", "dump", lambda t, d: [t[:11] + t[16:]]),
    ("lead", "dump", lambda t, d: [" " + t]),
    ("wide", "dump", lambda t, d: [t[:50] + " " * 10 + t[50:]]),
    ("nocol", "dump", lambda t, d: [t[:50].rstrip()]),
    ("column", "dump", lambda t, d: [t[:51] + d.pick(["'No more messages'", "'MQGET 12'",
                                                      "'\xe9\xe9'", "no quote"])]),
    ("lower", "dump", lambda t, d: [t[:11] + t[11:50].lower() + t[50:]]),
    # the length line
    ("length", " length", lambda t, d: [d.pick(
        [" length - 5 bytes", " length - -1 of 5 bytes", " length - 999 of 999 bytes",
         " length - 1 of 2 bytes", " length - 0 of 0 bytes", " length - 3 of 99999 bytes",
         " length -  3 of 3 bytes", " length - 3 of 3 bytes trailing",
         " length - 99999999999 of 1 bytes"])]),
]
BCG_EDIT_NAMES = [e[0] for e in BCG_EDITS]


def _bcg_damage(lines, draw, count):
    for _ in range(count):
        name = draw(st.sampled_from(BCG_EDIT_NAMES))
        _, kind, edit = BCG_EDITS[BCG_EDIT_NAMES.index(name)]
        if kind == "dump":
            at = [k for k, t in enumerate(lines) if _is_dump(t)]
        else:
            at = [k for k, t in enumerate(lines) if kind is None or t.startswith(kind)]
        if not at:
            continue
        k = draw(st.sampled_from(at))
        lines[k:k + 1] = edit(lines[k], Choices(draw))


@st.composite
def damaged_bcg_files(draw):
    ms = draw(st.lists(bcg_messages(), min_size=1, max_size=4))
    lines = _bcg_text(ms, draw).split("\n")
    _bcg_damage(lines, draw, draw(st.integers(0, 4)))
    if draw(st.integers(0, 5)) == 0 and lines:  # the file ends inside a message
        k = draw(st.integers(0, len(lines) - 1))
        lines[k] = lines[k][:draw(st.integers(0, len(lines[k])))]
        del lines[k + 1:]
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    return newline.join(lines).encode("utf-8", errors="surrogateescape")


def test_random_damaged_amqsbcg_files_read_the_same_fast_and_line_by_line(tmp_path, monkeypatch):
    @FAST
    @given(damaged_bcg_files(), st.sampled_from([None, 200, 1500, 6000]))
    def check(blob, chunk):
        p = tmp_path / "f.txt"
        p.write_bytes(blob)
        assert_same_reading(p, monkeypatch, chunk, module=amqsbcg)

    check()


@st.composite
def alike_bcg_files(draw):
    """Many messages of a few kinds (printed alike line for line), some lines
    damaged: the fast reader matches runs of alike lines once per kind."""
    kinds = draw(st.lists(bcg_messages(), min_size=1, max_size=3))
    dlh_block = draw(st.booleans())
    text = AMQSBCG_HEAD
    for i in range(1, draw(st.integers(1, 80)) + 1):
        m = kinds[draw(st.integers(0, len(kinds) - 1))]
        text += amqsbcg.format_message(i, m, dlh_block=dlh_block, compcode=draw(st.booleans()))
    lines = (text + AMQSBCG_END).split("\n")
    _bcg_damage(lines, draw, draw(st.integers(0, 6)))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines).encode("utf-8", errors="surrogateescape")


def test_alike_amqsbcg_messages_read_the_same_fast_and_line_by_line(tmp_path, monkeypatch):
    @FAST
    @given(alike_bcg_files(), st.sampled_from([None, 1500, 6000]), st.sampled_from([1, 64]),
           st.sampled_from([1, 3, 64]), st.sampled_from([1, 8]))
    def check(blob, chunk, group_min, sample, refs):
        monkeypatch.setattr(amqsbcg_layout, "_GROUP_MIN", group_min)
        monkeypatch.setattr(amqsbcg_layout, "_GROUP_SAMPLE", sample)
        monkeypatch.setattr(amqsbcg_layout, "_MAX_REFS", refs)
        p = tmp_path / "alike.txt"
        p.write_bytes(blob)
        assert_same_reading(p, monkeypatch, chunk, decode=False, module=amqsbcg)

    check()


def test_clean_amqsbcg_output_takes_the_fast_path(tmp_path, monkeypatch):
    ms = [dlq_message(b"x" * i, md={"MsgId": bytes([i]) * 24}) for i in range(20)] + \
        [plain_message(b""), dlq_message(b"v1", md={"Version": 1}),
         dlq_message(b"ebcdic", encoding=785, ccsid=500)]
    for name, kw in {"old": {}, "9.3.4": {"dlh_block": True}, "crlf": {"newline": "\r\n"},
                     "9.3.4-crlf": {"dlh_block": True, "newline": "\r\n"}}.items():
        p = tmp_path / f"{name}.txt"
        amqsbcg.write_amqsbcg(p, ms, **kw)
        for chunk in (None, 3000):
            assert_same_reading(p, monkeypatch, chunk, module=amqsbcg)
            calls = line_read(p, monkeypatch, chunk, module=amqsbcg)
            left = [t for c in calls for t in c]
            # only the banner before the first message goes to the line reader
            assert all("MQGET of message number" not in t for t in left), (name, chunk, left)


def test_dlh_block_in_a_code_page_without_all_of_ascii_goes_to_the_line_reader(tmp_path,
                                                                             monkeypatch):
    # CCSID 420 (Arabic EBCDIC) has no '[' or '~': the fast reader only packs
    # DLH blocks for code pages that hold every ASCII character in one byte
    ms = [dlq_message(b"abc", md={"Format": "MQSTR"}, encoding=785, ccsid=c)
          for c in (500, 420, 1208)]
    p = tmp_path / "420.txt"
    amqsbcg.write_amqsbcg(p, ms, dlh_block=True)
    assert_same_reading(p, monkeypatch, module=amqsbcg)
    calls = [c for c in line_read(p, monkeypatch, module=amqsbcg) if any("MQGET" in t for t in c)]
    assert len(calls) == 1 and "Encoding : 785  CodedCharSetId : 420" in "\n".join(calls[0])
    assert sum("MQGET of message number" in t for t in calls[0]) == 1


def test_real_amqsbcg_spacing_takes_the_fast_path(tmp_path, monkeypatch):
    # a UTF-8 locale pads the dump lines with 10 more blanks; amqsbcg inserts a
    # blank line every 60 lines; old releases print 'length - N bytes'
    text = "".join(amqsbcg.format_message(i, dlq_message(b"z" * 300), compcode=False)
                   for i in range(1, 4))
    lines = text.split("\n")
    lines = [t[:50] + " " * 10 + t[50:] if _is_dump(t) else t for t in lines]
    lines = [t.replace(" of 472 bytes", " bytes") for t in lines]
    for k in range(58, len(lines), 60):
        lines.insert(k, " ")
    p = tmp_path / "real.txt"
    p.write_text("\n".join(lines) + AMQSBCG_END)
    assert_same_reading(p, monkeypatch, module=amqsbcg)
    assert all(c == [] for c in line_read(p, monkeypatch, module=amqsbcg))
    fast, _ = read_both(p, module=amqsbcg)
    assert len(_frames(fast)) == 3


def _bcg_three(dlh_block):
    ms = [dlq_message(b"message %d " % i + bytes(range(40)), encoding=(546, 785, 273)[i],
                      ccsid=(1208, 500, 819)[i]) for i in range(3)]
    texts = [amqsbcg.format_message(i + 1, m, dlh_block=dlh_block) for i, m in enumerate(ms)]
    first = texts[0].count("\n")
    return (texts[0] + texts[1] + texts[2] + AMQSBCG_END).split("\n"), first, \
        first + texts[1].count("\n")


@pytest.mark.parametrize("dlh_block", [False, True], ids=["old", "9.3.4"])
def test_every_amqsbcg_line_damage_reads_the_same(tmp_path, monkeypatch, dlh_block):
    """Every edit of BCG_EDITS (each variant) on every line of a message, the
    damaged messages between clean ones, a hundred to a file."""
    lines, lo, hi = _bcg_three(dlh_block)
    clean = lines[:lo]
    dumps = [k for k in range(lo, hi) if _is_dump(lines[k])]
    damaged = []
    for k in range(lo, hi):
        t = lines[k]
        if _is_dump(t) and k not in (dumps[0], dumps[1], dumps[-1]):
            continue
        for e, (name, kind, edit) in enumerate(BCG_EDITS):
            if kind == "dump" and not _is_dump(t) or kind not in (None, "dump") and \
                    not t.startswith(kind):
                continue
            if kind is None and (k + e) % 4:
                continue  # edits for any line: on every fourth line, in turn
            probe = Choices()
            edit(t, probe)
            for variant in range(3 if probe.positions else probe.variants):
                damaged.append(lines[lo:k] + edit(t, Choices(seed=variant)) + lines[k + 1:hi])
    assert len(damaged) > 600
    for i in range(0, len(damaged), 100):
        text = []
        for d in damaged[i:i + 100]:
            text += clean + d
        p = tmp_path / f"e{i}.txt"
        p.write_bytes("\n".join(text + lines[hi:]).encode("utf-8", errors="surrogateescape"))
        assert_same_reading(p, monkeypatch, decode=False, module=amqsbcg)


@pytest.mark.parametrize("module", [dmpmqmsg, amqsbcg], ids=["dmpmqmsg", "amqsbcg"])
def test_small_files_are_read_line_by_line(tmp_path, monkeypatch, module):
    # the fast reader's fixed cost is that of a few dozen messages
    monkeypatch.setattr(FAST_READER[module], "MIN_FAST_UNITS", 8)
    for n, fast in ((5, False), (9, True)):
        p = tmp_path / f"{n}.txt"
        write_capture(p, module.__name__.rsplit(".", 1)[1],
                      [dlq_message(b"m%d" % i) for i in range(n)])
        assert_same_reading(p, monkeypatch, module=module)
        with_get = [c for c in line_read(p, monkeypatch, module=module)
                    if any(t.startswith(("A VER", " MQGET")) for t in c)]
        assert (with_get == []) is fast


# A message whose first line is longer than a block: the block holds no whole line,
# and the long unit's end must be looked for after that line (it is the unit's own
# start, not the next one's). Found by the amqsbcg fuzz target after issue 19 (an
# IndexError on a block of no whole line holding 'MQGET'; a loop that never ended).
@pytest.mark.parametrize("module, sample", [
    (amqsbcg, "dlq_linux_x86_mq94.bcg"), (dmpmqmsg, "dlq_linux_x86.dmp")])
@pytest.mark.parametrize("chunk", [256, 512, 1024])
def test_a_unit_whose_first_line_is_longer_than_a_block(tmp_path, monkeypatch, module,
                                                        sample, chunk):
    from tests.conftest import ROOT

    src = (ROOT / "datasets" / "dlq-sample" / sample).read_bytes()[:30000]
    src = src[:src.rfind(b"\n") + 1]
    start = b"MQGET of message number" if module is amqsbcg else b"A VER"
    at = src.find(start, 200)
    at = src.rfind(b"\n", 0, at) + 1  # the line that starts the second message
    eol = src.find(b"\n", at)
    long_first = src[:eol] + b" " + b"y" * (3 * chunk) + src[eol:]  # that line, made long
    p = tmp_path / ("long" + sample[sample.rfind("."):])
    p.write_bytes(long_first)
    assert_same_reading(p, monkeypatch, chunk=chunk, module=module)
