"""dmpmqmsg (and QLOAD, SupportPac MO03) message files: reader and writer.

Follows ``spec/capture-formats.md`` §1: lines starting ``*`` are comments
(the ``* QLOAD``/``* DMPMQMSG`` banner, ``* Qmgr``, ``* Queue``, ``* Index n``);
a message is a block of ``A xxx value`` attribute lines (or one ``N`` line)
followed by ``X`` (hex), ``S`` (quoted string, ``~`` escapes) and ``T`` (text,
lossy) data lines. Every one of the 30 three-letter codes is read; an unknown
code is reported and skipped. ``T`` lines are read as QLOAD reads them (a
line feed after each) and the message is flagged ``lossy_capture``.

Two readers, one behaviour: the line-by-line reader (``fast=False``) handles
every line and every oddity; the default fast reader frames the well-formed
messages of a block of the file at a time with numpy (its byte loops in C,
:mod:`dlqlens.capture.scan`) and hands every other message to the line
reader (see "the fast reader" below).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import numpy as np

from dlqlens.capture.message import CaptureMessage
from dlqlens.capture.scan import IS_HEX, hex_runs, rows_like_first, rows_of
from dlqlens.capture.slices import Slice
from dlqlens.capture.text import (TEXT_CODEC, TextBlock, decimals, hex_values, pack_text_md,
                                  plan_text, read_blocks, read_lines, rebatch, windows)
from dlqlens.decode.frames import Frames, FramesBuilder, labels
from dlqlens.decode.issues import make_issue
from dlqlens.mq.constants import OBJECT_NAME
from dlqlens.mq.structs import MQMD

#: Three-letter code -> (MQMD field, kind) where kind is int, char or hex.
CODES: dict[str, tuple[str, str]] = {
    "VER": ("Version", "int"), "RPT": ("Report", "int"), "MST": ("MsgType", "int"),
    "EXP": ("Expiry", "int"), "FDB": ("Feedback", "int"), "ENC": ("Encoding", "int"),
    "CCS": ("CodedCharSetId", "int"), "FMT": ("Format", "char"), "PRI": ("Priority", "int"),
    "PER": ("Persistence", "int"), "MSI": ("MsgId", "hex"), "COI": ("CorrelId", "hex"),
    "BOC": ("BackoutCount", "int"), "RTQ": ("ReplyToQ", "char"), "RTM": ("ReplyToQMgr", "char"),
    "USR": ("UserIdentifier", "char"), "ACC": ("AccountingToken", "hex"),
    "AIX": ("ApplIdentityData", "hexchar"), "AID": ("ApplIdentityData", "char"),
    "PAT": ("PutApplType", "int"), "PAN": ("PutApplName", "char"), "PTD": ("PutDate", "char"),
    "PTT": ("PutTime", "char"), "AOX": ("ApplOriginData", "hexchar"),
    "AOD": ("ApplOriginData", "char"), "GRP": ("GroupId", "hex"), "MSQ": ("MsgSeqNumber", "int"),
    "OFF": ("Offset", "int"), "MSF": ("MsgFlags", "int"), "ORL": ("OriginalLength", "int"),
}
_FIELD_CODE = {}
for _code, (_field, _kind) in CODES.items():
    _FIELD_CODE.setdefault(_field, (_code, _kind))
_HEX_PREFIX = re.compile(r"[0-9A-Fa-f]*")
_INT = re.compile(r"^\s*[-+]?\d+\s*$")


def sniff(head: bytes) -> bool:
    """True when ``head`` looks like a dmpmqmsg/QLOAD file."""
    text = head.decode("latin-1")
    if text.startswith(("* QLOAD", "* DMPMQMSG")):
        return True
    return bool(re.search(r"^A (VER|RPT|MST|FMT) ", text, re.M)) and \
        bool(re.search(r"^[XST] ", text, re.M))


_BANNER = re.compile(rb"^\* (Qmgr|Queue) *= *([^\r\n]*?) *\r?$", re.M)


def banner(head: bytes) -> tuple[str | None, str | None]:
    """``(queue manager, queue)`` the file was dumped from: the ``* Qmgr  =``
    and ``* Queue =`` comment lines dmpmqmsg writes when it reads a queue
    (``spec/capture-formats.md`` §1). None for a name that is absent or is not
    an MQ object name (:data:`dlqlens.mq.constants.OBJECT_NAME`); ``head`` is
    the start of the file, and the first line of each kind counts."""
    found: dict[bytes, str] = {}
    for m in _BANNER.finditer(head):
        name = m.group(2).decode("latin-1")
        if m.group(1) not in found and OBJECT_NAME.fullmatch(name):
            found[m.group(1)] = name
    return found.get(b"Qmgr"), found.get(b"Queue")


_CREATED = re.compile(rb"^\* (?:QLOAD|DMPMQMSG)\b[^\r\n]*?Created: *([^\r\n]*?) *\r?$", re.M)


def created(head: bytes):
    """When the dump was written: the ``Created:`` time of the ``* QLOAD`` /
    ``* DMPMQMSG`` banner line (``spec/capture-formats.md`` §1.3), a C
    ``ctime()`` text (``Wed Mar 13 22:40:30 2024``) read as a naive
    datetime, or None when the line is absent or not such a time.

    ``ctime()`` writes the local time of the machine that ran the dump and
    names no time zone: callers take it as UTC and say so."""
    import datetime as _dt

    m = _CREATED.search(head[:4096])
    if not m:
        return None
    text = m.group(1).decode("latin-1").strip()
    try:
        return _dt.datetime.strptime(text, "%a %b %d %H:%M:%S %Y")
    except ValueError:
        return None


def _unescape_s(value: str) -> str:
    """The text of an ``S`` line: quotes removed, ``~x`` -> ``x`` (§1.5)."""
    v = value.rstrip()
    if len(v) >= 2 and v[0] == '"' and v[-1] == '"':
        tildes = len(v[:-1]) - len(v[:-1].rstrip("~"))
        if tildes % 2 == 0:  # the closing quote is not escaped
            v = v[1:-1]
    return re.sub(r"~(.)", r"\1", v)


class _Msg:
    def __init__(self, line: int, offset: int):
        self.line, self.offset = line, offset
        self.attrs: list[tuple[str, str, int]] = []
        self.data: list[bytes] = []
        self.issues: list[tuple] = []
        self.lossy = False
        self.in_data = False
        self.n_line = False
        self.raw: list[str] = []


#: Bytes read from the file at a time by the fast reader (whole messages: a
#: block is cut before the first attribute line of a message).
CHUNK_BYTES = 2 << 20
#: Blocks with fewer messages than this are read line by line (the fast
#: reader's fixed cost is that of a few dozen messages).
MIN_FAST_UNITS = 32


def plan(path: str, target_bytes: int = 64 * 1024 * 1024) -> list[Slice]:
    """Split a dmpmqmsg file into :class:`~dlqlens.capture.slices.Slice`
    objects of about ``target_bytes`` (see :func:`dlqlens.capture.text.plan_text`:
    the file is read once to count the messages before each cut)."""
    return plan_text(path, _Block, CHUNK_BYTES, target_bytes)


def read_dmpmqmsg(path: str, *, source: str | None = None, piece: Slice | None = None,
                  batch_size: int = 65536, fast: bool = True) -> Iterator[Frames]:
    """Frame the messages of a dmpmqmsg/QLOAD file.

    Parameters
    ----------
    path : str
    source : str, optional
        Name recorded in the ``source`` column (default ``path``).
    piece : Slice, optional
        Only this byte range (from :func:`plan`; read with the fast reader);
        default the whole file.
    batch_size : int
        Messages per yielded :class:`~dlqlens.decode.frames.Frames` (the last
        one may hold fewer).
    fast : bool
        Frame well-formed messages with the vectorised reader (default).
        ``False`` reads every line with the line-by-line reader; both give
        the same frames (the fast reader hands every message it cannot prove
        well-formed to the line reader).

    Yields
    ------
    Frames
        ``source_line`` is the first ``A`` (or ``N``) line of each message.

    Raises
    ------
    CaptureError
        When the file cannot be opened.
    """
    source = source or path
    if fast or piece is not None:
        pieces = read_blocks(path, _Block, source, CHUNK_BYTES, MIN_FAST_UNITS, piece)
    else:
        pieces = iter([_frame_lines(read_lines(path), source, 0)[0]])
    yield from rebatch(pieces, batch_size)


# ---------------------------------------------------------------------------
# the line-by-line reader: every line, every oddity
# ---------------------------------------------------------------------------

def _frame_lines(lines: Iterable[tuple[int, int, str]], source: str,
                 count: int) -> tuple[Frames, int]:
    """Frame the messages of ``lines`` (``(number, offset, text)``), numbered
    from ``count + 1``; returns the frames and the last message number.

    ``lines`` must start a message (or be the start of the file) and end one.
    """
    builder = FramesBuilder(source, "dmpmqmsg", "text")
    cur: _Msg | None = None
    stray: list[tuple[int, int, str]] = []

    def flush_stray():
        nonlocal count
        if not stray:
            return
        count += 1
        first_line, first_off, _ = stray[0]
        text = "\n".join(t for _, _, t in stray)
        builder.add(md=None, number=count, offset=first_off, line=first_line,
                    raw=text.encode("utf-8"),
                    issues=[make_issue("unframed", source=source, message_number=count,
                                       field="line", expected="'A', 'N', 'X', 'S', 'T' or '*' line",
                                       found=repr(text[:40]), line=first_line,
                                       note=f"{len(stray)} line(s) outside any message")])
        stray.clear()

    for number, offset, text in lines:
        tag = text[:1]
        if tag in ("A", "N") and (len(text) == 1 or text[1] == " "):
            # a new message starts after data lines, and also at an N line or a
            # repeated attribute code (a message whose data lines are missing)
            if cur is None or cur.in_data or tag == "N" or cur.n_line or \
                    any(code == text[2:5] for code, _, _ in cur.attrs):
                if cur is not None:
                    count += 1
                    _emit(builder, cur, source, count)
                flush_stray()
                cur = _Msg(number, offset)
            cur.raw.append(text)
            if tag == "A":
                cur.attrs.append((text[2:5], text[6:], number))
            else:
                cur.n_line = True
            continue
        if tag in ("X", "S", "T") and (len(text) == 1 or text[1] == " ") and cur is not None:
            cur.in_data = True
            cur.raw.append(text)
            body = text[2:]
            if tag == "X":
                stripped = body.lstrip(" ")
                digits = _HEX_PREFIX.match(stripped).group(0)
                rest = stripped[len(digits):]
                if rest.strip() and not (rest[:1] == " " and rest.lstrip().startswith("<")):
                    # not the -da character column: a damaged line. Keep the byte
                    # positions: every pair of the hex token is one byte, bad pairs 0.
                    token = stripped.split(" ", 1)[0]
                    cur.issues.append(("bad_hex", "X line", "hex digits (and a '<...>' column)",
                                       repr(token[len(digits):len(digits) + 16]), number))
                    digits = re.sub(r"[^0-9A-Fa-f]", "0", token)
                if len(digits) % 2:
                    cur.issues.append(("bad_hex", "X line", "an even number of hex digits",
                                       f"{len(digits)} digits", number))
                    digits = digits[:-1]
                cur.data.append(bytes.fromhex(digits))
            elif tag == "S":
                cur.data.append(_unescape_s(body).encode("latin-1", errors="replace"))
            else:
                cur.data.append(body.encode("latin-1", errors="replace") + b"\n")
                cur.lossy = True
            continue
        if not text.strip() or text.startswith("*"):
            continue
        stray.append((number, offset, text))
    if cur is not None:
        count += 1
        _emit(builder, cur, source, count)
    flush_stray()
    return builder.build(), count


# ---------------------------------------------------------------------------
# the fast reader: whole blocks of well-formed messages with numpy
# ---------------------------------------------------------------------------
#
# A block of the file is split into lines and each line classified by its
# first bytes: E (empty, or a '*' comment: the line reader skips both), A (an
# attribute line), X (a hex line), D (an S or T data line), N (an N line) or O
# (anything else, and lines the fast reader does not want to reason about:
# stray text, lines ending in more than one CR). A "unit" starts at an A line
# whose previous non-E line is a data line (X, S, T), and at every N line:
# there the line reader always starts a new message, whatever came before, so
# units can be framed independently. Units holding D, N or O lines go to the
# line reader. A unit of the form
#     A-lines (contiguous, distinct known codes, valid values)
#     X-lines (even hex digits, optionally the -da '<...>' column), E-lines
# is one well-formed message and is framed columnwise; every other unit goes
# to the line reader, as do consecutive runs of such units.

#: Line classes: E, A and X as above; D (an S or T line) and N (an N line) are
#: data lines the fast reader leaves to the line reader, like O lines.
_E, _A, _X, _O, _D, _N = 0, 1, 2, 3, 4, 5
#: The class of a line of one of these first bytes (followed by a blank, or
#: alone on its line): A, X, S, T, N.
_TAGGED = ((65, _A), (88, _X), (83, _D), (84, _D), (78, _N))
_KIND_INT, _KIND_CHAR, _KIND_HEX, _KIND_HEXCHAR, _KIND_VER = range(5)


def _code_key(code: str) -> int:
    b = code.encode("ascii")
    return (b[0] << 16) | (b[1] << 8) | b[2]


#: code key -> (offset, length, kind) of the MQMD field it sets.
_FAST_CODES: dict[int, tuple[int, int, int]] = {}
for _code, (_field, _kind) in CODES.items():
    _f = MQMD.field(_field)
    _k = {"int": _KIND_INT, "char": _KIND_CHAR, "hex": _KIND_HEX, "hexchar": _KIND_HEXCHAR}[_kind]
    if _code == "VER":
        _k = _KIND_VER
    _FAST_CODES[_code_key(_code)] = (MQMD.offsets[_field], _f.length, _k)
#: The MQMD of a message without attribute lines (version 1, defaults).
_MD_TEMPLATE = np.frombuffer(pack_text_md({})[0], dtype=np.uint8)
_MAX_LAYOUTS = 16
_XWIN = 128
#: Blocks of at least this many lines take the fast reader whatever their
#: number of units (a few large messages; see :meth:`_Block.frame`).
MIN_FAST_LINES = 4096


def _class_table() -> np.ndarray:
    """Line class by its first two bytes (``b1 << 8 | b0``: the little-endian
    16-bit word at the line's start), for every line but those ending in more
    than one CR and the last line of a block; -1 where the second byte is a CR
    (see :meth:`_Block.find_unit_starts`)."""
    lut = np.full(1 << 16, _O, dtype=np.int8)
    for b1 in (32, 10):  # 'c ...', or a line of one character
        for b0, k in _TAGGED:
            lut[b1 << 8 | b0] = k
    lut[42::256] = _E  # a '*' comment
    lut[10::256] = _E  # an empty line
    lut[13 << 8:14 << 8] = -1  # a line of one character and CR LF, or CR alone
    lut[10 << 8 | 13] = _E  # an empty line ending CR LF
    return lut


_CLASS = _class_table()


class _Block(TextBlock):
    """A block of a dmpmqmsg file, its lines classified E, A, X, O, D or N."""

    def _classify(self, lines: np.ndarray) -> np.ndarray:
        """The class of ``lines`` from their text (the rule the table encodes)."""
        p, starts, length = self.p, self.starts[lines], self.length[lines]
        b0 = p[starts]
        tag = (length == 1) | (p[starts + 1] == 32)
        plain = (length > 0) & tag & ~self.weird[lines]
        cls = np.full(len(lines), _O, dtype=np.int8)
        for b, k in _TAGGED:
            cls[plain & (b0 == b)] = k
        cls[(length == 0) | (b0 == 42)] = _E
        return cls

    def find_unit_starts(self) -> np.ndarray:
        nl = self.nlines
        cls = _CLASS.take(self.first_words)
        fix = cls < 0
        if self.crlf:
            fix |= self.weird
        if nl:
            fix[-1] = True
        redo = np.flatnonzero(fix)
        cls[redo] = self._classify(redo)
        self.cls = cls
        # runs of lines of one class: after a data line (X, S, T) or an N line
        # (through E lines) the line reader starts a new message at the next A
        # line; it always does at an N line
        rs = np.flatnonzero(cls[1:] != cls[:-1]) + 1
        rs = np.concatenate([[0], rs]) if nl else rs
        rc = cls[rs]
        self.run_starts, self.run_classes = rs, rc
        ne = rc != _E
        rs_ne, rc_ne = rs[ne], rc[ne]
        prev = rc_ne[:-1]
        after_data = (rc_ne[1:] == _A) & ((prev == _X) | (prev >= _D))
        us = np.concatenate([[0], rs_ne[1:][after_data]]).astype(np.int64)
        if (rc == _N).any():
            us = np.unique(np.concatenate([us, np.flatnonzero(cls == _N)]))
        return us

    def frame(self, cut, source, base_off, base_line, count, min_units=0):
        # the fast reader's fixed cost is that of a few dozen small messages:
        # blocks of many lines are worth it however few messages they hold
        if cut >= MIN_FAST_LINES:
            min_units = min(min_units, 1)
        return super().frame(cut, source, base_off, base_line, count, min_units)

    def unit_counts(self, cut: int) -> np.ndarray:
        """Messages per unit of lines ``[0, cut)``.

        A unit whose lines are all A, X or E lines, whose first such line is
        an A line and whose attribute codes are distinct is one message (the
        line reader starts a message at its first A line and at no other
        line of it); every other unit is counted by the line reader.
        """
        us = self.unit_starts[self.unit_starts < cut]
        ue = np.append(us[1:], cut)
        if not len(us):
            return np.zeros(0, dtype=np.int64)
        p, c = self.p, self.cls[:cut]
        isA = c == _A
        nA = np.add.reduceat(isA.astype(np.int32), us)
        nO = np.add.reduceat((c >= _O).astype(np.int32), us)
        ne = np.flatnonzero(c != _E)
        first = ne[np.minimum(np.searchsorted(ne, us), len(ne) - 1)] if len(ne) else us
        simple = (nO == 0) & (nA >= 1) & (c[first] == _A)
        # attribute codes: three ASCII characters, no code twice in a unit
        a_lines = np.flatnonzero(isA)
        if len(a_lines):
            at = self.starts[a_lines]
            code = p[at[:, None] + np.arange(2, 5)]
            okA = (self.length[a_lines] >= 5) & (code < 0x80).all(axis=1)
            key = (code[:, 0].astype(np.int32) << 16) | (code[:, 1].astype(np.int32) << 8) \
                | code[:, 2]
            a0 = np.minimum(np.searchsorted(a_lines, us), len(a_lines) - 1)
            simple &= np.logical_and.reduceat(okA, a0)
            for k in np.unique(nA[simple]).tolist():
                rows = np.flatnonzero(simple & (nA == k))
                layouts = key[a0[rows][:, None] + np.arange(k)]
                if (layouts == layouts[0]).all():
                    simple[rows] = len(set(layouts[0].tolist())) == k
                    continue
                distinct, inverse = np.unique(layouts, axis=0, return_inverse=True)
                ok = np.array([len(set(d)) == k for d in distinct.tolist()], dtype=bool)
                simple[rows] = ok[inverse.ravel()]
        counts = self.count_by_lines(us, ue, ~simple)
        counts[simple] = 1
        return counts

    def fast_units(self, us, ue, cut, source, base_off, base_line):
        """Which units are well-formed messages, and the frames of those."""
        p, starts, cend = self.p, self.starts, self.cend
        # the runs of each unit: [E] A [E] X [E] (A and X lines contiguous)
        rs, rc = self.run_starts, self.run_classes
        nrun = len(rs)
        rsp = np.concatenate([rs, np.full(4, self.nlines, dtype=np.int64)])
        rcp = np.concatenate([rc, np.full(4, -1, dtype=np.int8)])
        rlen = np.diff(rsp)
        r0 = np.searchsorted(rs, us)
        r1 = np.searchsorted(rs, ue)
        ok = rsp[r0] == us
        ra = r0 + (rcp[r0] == _E)
        ok &= rcp[ra] == _A
        rx = ra + 1
        rx += rcp[rx] == _E
        ok &= rcp[rx] == _X
        re_ = rx + 1
        re_ += rcp[re_] == _E
        ok &= re_ == r1
        ra = np.minimum(ra, nrun - 1)
        rx = np.minimum(rx, nrun - 1)
        firstA, nA = rsp[ra], rlen[ra]
        firstX, lastX = rsp[rx], rsp[rx] + rlen[rx] - 1
        # A lines: 'A xxx value', ASCII only (the line reader decodes text);
        # values, by layout (the sequence of codes)
        cand = np.flatnonzero(ok)
        md_c = np.empty((len(cand), len(_MD_TEMPLATE)), dtype=np.uint8)
        ver_c = np.ones(len(cand), dtype=np.int32)
        ok_c = np.ones(len(cand), dtype=bool)
        if len(cand):
            ascii = None
            end = self.line_offset(cut)
            if not self.buf.isascii() and not self.buf[:end].isascii():
                ascii = self.ascii_lines(cut)
            nA_c, firstA_c = nA[cand], firstA[cand]
            layouts = 0
            for k in np.unique(nA_c).tolist():
                pos_k = np.flatnonzero(nA_c == k)
                lines = firstA_c[pos_k][:, None] + np.arange(k)
                at = starts[lines]
                ce = cend[lines]
                good = (ce - at >= 6).all(axis=1)
                if ascii is not None:
                    good &= ascii[lines].all(axis=1)
                if not good.all():
                    ok_c[pos_k[~good]] = False
                    pos_k, at, ce = pos_k[good], at[good], ce[good]
                while len(pos_k):
                    layouts += 1
                    rows, got = _fill_group(p, at, ce, layouts <= _MAX_LAYOUTS, self.crlf)
                    pos = pos_k[rows]
                    if not rows.all():
                        pos_k, at, ce = pos_k[~rows], at[~rows], ce[~rows]
                    else:
                        pos_k = pos_k[:0]
                    if got is None:
                        ok_c[pos] = False
                        continue
                    blk, ver, good = got
                    if len(pos) == len(cand):
                        md_c, ver_c = blk, ver
                        ok_c &= good
                    else:
                        md_c[pos], ver_c[pos] = blk, ver
                        ok_c[pos] &= good
            ok[cand] = ok_c
        # data: the X lines of each unit as one run of text
        data, dl = _unit_data(self, ok, firstX, lastX)
        sel = ok[cand]
        if not sel.all():
            md_c, ver_c = md_c[sel], ver_c[sel]
        rows = cand[sel]
        n = len(rows)
        d_end = np.cumsum(dl)
        fr = Frames(
            source=source, capture_format="dmpmqmsg", md_origin="text",
            md=md_c, md_big_endian=np.zeros(n, bool),
            md_codec=labels(n, TEXT_CODEC),
            md_blank=np.full(n, 0x20, np.uint8), md_version=ver_c,
            md_valid=np.ones(n, bool), data=data, starts=d_end - dl, ends=d_end,
            data_length=dl, message_number=np.zeros(n, np.int32),
            source_offset=base_off + starts[firstA[rows]],
            source_line=(base_line + firstA[rows] + 1).astype(np.int32),
            dlh_reconstructed=np.zeros(n, bool))
        return ok, fr


def _unit_data(block: _Block, ok, firstX, lastX):
    """The message data of the units ``ok`` (concatenated) and its length per
    such unit (their X lines are ``firstX`` to ``lastX``). Clears ``ok`` of
    units with an X line the line reader would report."""
    rows = np.flatnonzero(ok)
    nx = lastX[rows] - firstX[rows] + 1
    first = np.cumsum(nx) - nx  # each unit's first X line among x_lines
    x_lines = np.repeat(firstX[rows] - first, nx) + np.arange(int(nx.sum()))
    xs = block.starts[x_lines] + 2
    xe = np.maximum(block.cend[x_lines], xs)
    data, digits = hex_runs(block.buf, xs, xe)
    good = (digits == xe - xs) & (digits % 2 == 0)
    if not good.all():
        # the -da column, or a damaged line
        odd = np.flatnonzero(~good)
        good[odd] = _x_hex_ends(block.p, xs[odd], xe[odd])[1]
    size = digits // 2
    per_unit = np.add.reduceat(size, first) if len(rows) else size
    if not good.all():
        bad_unit = np.logical_or.reduceat(~good, first)
        ok[rows[bad_unit]] = False
        data = data[np.repeat(np.repeat(~bad_unit, nx), size)]
        per_unit = per_unit[~bad_unit]
    return data, per_unit


def _x_hex_ends(p: np.ndarray, xs: np.ndarray, xe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For X-line bodies ``p[xs:xe]``: the end of the hex digits and whether
    the line is one the line reader reads without an issue (an even number
    of digits, then nothing, blanks, or blanks and a ``<`` column)."""
    n = len(xs)
    hexend = xe.copy()
    good = np.ones(n, dtype=bool)
    for s in range(0, n, 65536):
        rows = np.arange(s, min(n, s + 65536))
        r = np.arange(len(rows))
        w = windows(p, xs[rows], _XWIN)
        span = xe[rows] - xs[rows]
        col = np.arange(_XWIN)
        nonhex = ~IS_HEX[w] | (col >= span[:, None])
        j1 = np.argmax(nonhex, axis=1)
        found1 = nonhex[r, j1]
        after = (w != 32) & (col > j1[:, None])
        j2 = np.argmax(after, axis=1)
        found2 = after[r, j2]
        # nothing after the digits; or digits, blanks and the end or a '<' column;
        # or only blanks (the line reader skips blanks before the digits)
        blank_then = (w[r, j1] == 32) & found2
        tail_ok = (j1 == span) | (blank_then & (j2 >= span)) | \
            (blank_then & (j1 > 0) & (w[r, j2] == 60))
        good[rows] = found1 & tail_ok
        hexend[rows] = xs[rows] + j1
    good &= (hexend - xs) % 2 == 0
    return hexend, good


def _same(win: np.ndarray, vl: np.ndarray) -> bool:
    """True when every row holds the same value as the first."""
    return bool((vl == vl[0]).all() and (win == win[0]).all())


#: Attribute sections (first A line to the end of the last) at most this long
#: are read as one row of bytes per unit by :func:`_fill_group`.
_MAX_TEMPLATE = 4096


def _fill_group(p, at, ce, allowed: bool, crlf: bool):
    """Read the units (rows: ``at``/``ce``, the start and text end of their
    ``k`` A lines, each at least 6 characters) with the codes of row 0.

    Returns ``(rows, got)``: which rows have the codes of row 0 (row 0 among
    them), and for those rows ``(md, version, ok)`` as :func:`_fill_layout`
    gives them, or None when they are not for the fast reader (``allowed``
    False: too many layouts in the block already).

    Rows whose lines also sit at the same offsets as those of row 0 (in
    dmpmqmsg's own files, nearly all) are read as one block of bytes per unit
    (:func:`_fill_template`): their bytes are compared with row 0's in one
    pass (:func:`~dlqlens.capture.scan.rows_like_first`), what is the same in
    every row is read once, from row 0, and only the other values column by
    column. ``crlf`` False (no line of the block ends in CR LF) spares the
    test that such rows have no CR where row 0 has none.
    """
    n, k = at.shape
    rel0, ln0 = at[0] - at[0, 0], ce[0] - at[0]
    length = int(ce[0, -1] - at[0, 0])
    t_rows = np.zeros(0, dtype=np.int64)
    head = p[at[0, 0] + rel0[:, None] + np.arange(2, 6)]  # row 0: code and blank
    layout = ((head[:, 0].astype(np.int32) << 16) | (head[:, 1].astype(np.int32) << 8)
              | head[:, 2])
    spec = _layout_spec(tuple(layout.tolist())) if allowed else None
    if spec is not None and spec is not _PER_CODE and length <= _MAX_TEMPLATE and \
            (head[:, 3] == 32).all():
        # rows laid out as row 0: as long, with row 0's codes and blanks, and
        # their lines ending where row 0's do (the LF, and the byte before it
        # a CR where row 0 has one, and only there). Their k lines then start
        # and end where row 0's do.
        at0 = at[:, 0]
        cand = np.flatnonzero(ce[:, -1] - at0 == length)
        row0 = p[at0[0]:at0[0] + length]
        lf = np.flatnonzero(row0 == 10)
        cr = row0[lf - 1] == 13
        must = np.concatenate([lf, lf[cr] - 1, (rel0[:, None] + np.arange(2, 6)).ravel()])
        if crlf and not cr.all():
            no_cr = (p[at0[cand][:, None] + lf[~cr] - 1] != 13).all(axis=1)
            cand = cand[no_cr]
        same, match = rows_like_first(p, at0[cand], length, must)
        t_rows = cand if match.all() else cand[match]
    rows = np.zeros(n, dtype=bool)
    rows[t_rows] = True
    rest = np.flatnonzero(~rows)
    if len(rest):
        a = at[rest]
        keys = (p[a + 2].astype(np.int32) << 16) | (p[a + 3].astype(np.int32) << 8) | p[a + 4]
        k_rows = rest[(keys == layout).all(axis=1)]
        rows[k_rows] = True
    else:
        k_rows = rest
    if spec is None:
        return rows, None
    if not len(k_rows):
        return rows, _fill_template(p, at[t_rows, 0], same, rel0, ln0, spec)
    # rows at other offsets: value by value (the blank after each code too)
    blank = (p[at[k_rows] + 5] == 32).all(axis=1)
    got_k = _fill_layout(p, at[k_rows], ce[k_rows], layout, spec)
    if not len(t_rows):
        md, ver, good = got_k
        return rows, (md, ver, good & blank)
    got_t = _fill_template(p, at[t_rows, 0], same, rel0, ln0, spec)
    where = np.cumsum(rows) - 1  # row -> its place among the rows read
    md = np.empty((int(rows.sum()), len(_MD_TEMPLATE)), dtype=np.uint8)
    ver = np.empty(len(md), dtype=np.int32)
    good = np.empty(len(md), dtype=bool)
    for r, (g_md, g_ver, g_ok) in ((where[t_rows], got_t), (where[k_rows], got_k)):
        md[r], ver[r], good[r] = g_md, g_ver, g_ok
    good[where[k_rows]] &= blank
    return rows, (md, ver, good)


_HEX_DIGITS = re.compile(rb"[0-9A-Fa-f]*")
_DECIMAL = re.compile(rb"-?[0-9]{1,10}")


_POW10_INT = 10 ** np.arange(11, dtype=np.int64)[::-1]


def _fixed_decimals(p, at, length: int):
    """:func:`decimals` of the values ``p[at[i]:at[i] + length]`` (all
    ``length`` characters long)."""
    n = len(at)
    if not 1 <= length <= 11:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    w = windows(p, at, length)
    d = w - np.uint8(48)
    neg = w[:, 0] == 45
    valid = d < 10
    valid[:, 0] |= neg
    ok = valid.all(axis=1) & (length - neg >= 1) & (length - neg <= 10)
    d = d.astype(np.int64)
    d[:, 0] *= ~neg
    v = d @ _POW10_INT[11 - length:]
    v = np.where(neg, -v, v)
    ok &= (v >= -2**31) & (v < 2**31)
    return v, ok


def _fill_template(p, at0, same, rel, ln, spec):
    """:func:`_fill_layout` for units whose attribute sections start at
    ``at0``, all with their lines at offsets ``rel`` and of lengths ``ln``
    (those of row 0), and the codes and blanks of row 0, valid (``spec``);
    ``same`` tells the bytes of the section that are row 0's in every row."""
    n = len(at0)
    # bytes of each value that differ from row 0's somewhere
    csum = np.concatenate([[0], np.cumsum(~same)])
    vo = rel + 6
    vl = ln - 6
    diff = csum[vo + vl] - csum[vo]
    row = _MD_TEMPLATE.copy()
    ok = True
    version = 1
    ints, int_at4, ver_i, chars, hexes = spec
    code_kind = {}
    for j, a4 in zip(ints.tolist(), int_at4.tolist()):
        code_kind[j] = ("int", a4 * 4, 4)
    if ver_i >= 0:
        code_kind[int(ints[ver_i])] = ("ver", int(int_at4[ver_i]) * 4, 4)
    for size, js, ats in chars:
        for j, a in zip(js.tolist(), ats):
            code_kind[j] = ("char", a, size)
    for width, js, ats, hexchar in hexes:
        hc = set(hexchar.tolist())
        for i, (j, a) in enumerate(zip(js.tolist(), ats)):
            code_kind[j] = ("hexchar" if i in hc else "hex", a, width // 2)
    row0 = p[at0[0]:at0[0] + len(same)].tobytes()
    late_int, late = [], []
    for j, (kind, a, size) in code_kind.items():
        o, length = int(vo[j]), int(vl[j])
        if diff[j]:
            if kind in ("int", "ver"):
                late_int.append((j, kind, a))
            else:
                late.append((j, kind, a, size))
            continue
        v = row0[o:o + length]
        if kind in ("int", "ver"):
            good = _DECIMAL.fullmatch(v) is not None
            x = int(v) if good else 0
            good = good and -2**31 <= x < 2**31
            if kind == "ver":
                x = x if x in (1, 2) else 2
                version = x
            if good:
                row[a:a + 4] = np.frombuffer(x.to_bytes(4, "little", signed=True), np.uint8)
            ok &= good
        elif kind == "char":
            row[a:a + size] = np.frombuffer(v[:size].ljust(size, b" "), np.uint8)
        else:
            good = length == 2 * size and _HEX_DIGITS.fullmatch(v) is not None
            if good:
                raw = bytes.fromhex(v.decode("ascii"))
                good = kind == "hex" or raw.isascii()
                row[a:a + size] = np.frombuffer(raw, np.uint8)
            ok &= good
    md = np.empty((n, len(_MD_TEMPLATE)), dtype=np.uint8)
    md[:] = row
    okv = np.full(n, ok)
    ver = np.full(n, version, dtype=np.int32)
    if late_int:
        md32 = md.view("<i4")
        for j, kind, a in late_int:
            v, good = _fixed_decimals(p, at0 + vo[j], int(vl[j]))
            okv &= good
            if kind == "ver":
                v = np.where((v == 1) | (v == 2), v, 2)
                ver = v.astype(np.int32)
            md32[:, a // 4] = v
    for j, kind, a, size in late:
        o, length = int(vo[j]), int(vl[j])
        if kind == "char":
            use = min(length, size)
            md[:, a:a + use] = windows(p, at0 + o, use)
            md[:, a + use:a + size] = 0x20
            continue
        if length != 2 * size:
            okv[:] = False
            continue
        raw, good = hex_values(windows(p, at0 + o, length))
        if kind == "hexchar":
            good &= (raw < 0x80).all(axis=1)
        okv &= good
        md[:, a:a + size] = raw
    return md, ver, okv


def _fill_layout(p, at, ce, layout, spec):
    """The MQMD block, version and ok flag of the units whose attribute lines
    start at bytes ``at`` (their text ending at ``ce``; one row per unit) and
    have the code sequence ``layout``, whose :func:`_layout_spec` is
    ``spec`` (not None); ``ok`` is False for rows with a value the line
    reader would report.

    The values of each kind (MQLONG, characters, hex of one width) are read
    together; a column holding the same text in every row is read once.
    """
    if spec is _PER_CODE:
        return _fill_layout_codes(p, at, ce, layout)
    ints, int_at4, ver, chars, hexes = spec
    md, md32, version, ok, value_starts, value_lengths = _layout_rows(at, ce)
    if len(ints):
        vl = value_lengths[:, ints]
        w = _values(p, value_starts[:, ints], 12)
        vals, good = _columns(w, vl, decimals)
        ok &= good
        if ver >= 0:
            v = vals[:, ver]
            v = np.where((v == 1) | (v == 2), v, 2)
            vals[:, ver] = v
            version = v.astype(np.int32)
        md32[:, int_at4] = vals
    for size, js, ats in chars:
        vl = value_lengths[:, js]
        w = _values(p, value_starts[:, js], size)
        if (vl < size).any():
            w = np.where(np.arange(size) < vl[:, :, None], w, np.uint8(0x20))
        for i, a in enumerate(ats):
            md[:, a:a + size] = w[:, i]
    for width, js, ats, hexchar in hexes:
        vl = value_lengths[:, js]
        w = _values(p, value_starts[:, js], width)
        raw, good = _columns(w, vl, hex_values)
        good &= (vl == width).all(axis=1)
        if len(hexchar):
            good &= (raw[:, hexchar] < 0x80).all(axis=(1, 2))
        ok &= good
        for i, a in enumerate(ats):
            md[:, a:a + width // 2] = raw[:, i]
    return md, version, ok


def _values(p: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """``(n, k, width)`` bytes from ``at`` (``(n, k)`` offsets)."""
    n, k = at.shape
    return rows_of(p, at.ravel(), width).view(np.uint8).reshape(n, k, width)


def _columns(w: np.ndarray, vl: np.ndarray, read):
    """``read`` (:func:`decimals` or :func:`hex_values`) over the values
    ``w`` ``(n, k, width)`` of lengths ``vl`` ``(n, k)``: ``(values (n, k,
    ...), ok (n,))``. A column whose text is the same in every row is read
    once (and its verdict holds for every row)."""
    n, k, width = w.shape
    args = (vl,) if read is decimals else ()
    # (the bytes after a value, from the next line, do not count)
    flat = w.reshape(n, k * width)
    eq = np.logical_and.reduce(flat == flat[0], axis=0).reshape(k, width)
    eq |= np.arange(width) >= vl[0][:, None]
    same = eq.all(axis=1) & (vl == vl[0]).all(axis=0)
    if same.all():
        v0, g0 = read(w[0], *(a[0] for a in args))
        return np.broadcast_to(v0, (n,) + v0.shape).copy(), np.full(n, bool(g0.all()))
    ok = np.ones(n, dtype=bool)
    c, d = np.flatnonzero(same), np.flatnonzero(~same)
    v, g = read(w[:, d].reshape(n * len(d), width), *(a[:, d].reshape(-1) for a in args))
    v = v.reshape((n, len(d)) + v.shape[1:])
    ok &= g.reshape(n, len(d)).all(axis=1)
    if not len(c):
        return v, ok
    out = np.empty((n, k) + v.shape[2:], dtype=v.dtype)
    out[:, d] = v
    v0, g0 = read(w[0, c], *(a[0, c] for a in args))
    out[:, c] = v0
    if not g0.all():
        ok[:] = False
    return out, ok


#: layout (code keys) -> how :func:`_fill_layout` reads it (None: not at
#: all; _PER_CODE: code by code, two codes setting one field)
_SPECS: dict[tuple, object] = {}
_PER_CODE = object()


def _layout_spec(layout: tuple):
    if layout in _SPECS:
        return _SPECS[layout]
    spec = None
    if len(set(layout)) == len(layout) and all(c in _FAST_CODES for c in layout):
        fields = [_FAST_CODES[c][0] for c in layout]
        if len(set(fields)) != len(fields):
            spec = _PER_CODE
        else:
            ints, int_at4, ver = [], [], -1
            chars: dict[int, tuple[list, list]] = {}
            hexes: dict[int, tuple[list, list, list]] = {}
            for j, c in enumerate(layout):
                at, size, kind = _FAST_CODES[c]
                if kind in (_KIND_INT, _KIND_VER):
                    if kind == _KIND_VER:
                        ver = len(ints)
                    ints.append(j)
                    int_at4.append(at // 4)
                elif kind == _KIND_CHAR:
                    js, ats = chars.setdefault(size, ([], []))
                    js.append(j)
                    ats.append(at)
                else:
                    js, ats, hc = hexes.setdefault(2 * size, ([], [], []))
                    if kind == _KIND_HEXCHAR:
                        hc.append(len(js))
                    js.append(j)
                    ats.append(at)
            spec = (np.array(ints, dtype=np.intp), np.array(int_at4, dtype=np.intp), ver,
                    [(s, np.array(js, dtype=np.intp), ats) for s, (js, ats) in chars.items()],
                    [(w, np.array(js, dtype=np.intp), ats, np.array(hc, dtype=np.intp))
                     for w, (js, ats, hc) in hexes.items()])
    if len(_SPECS) >= 4096:
        _SPECS.clear()
    _SPECS[layout] = spec
    return spec


def _layout_rows(at: np.ndarray, ce: np.ndarray):
    """What the layout fillers start from, for units whose A lines start at
    ``at`` and whose text ends at ``ce`` (``(n, lines)``): MQMD rows set to the
    defaults, their int32 view (MQLONG fields are at multiples of 4),
    versions (1), ok flags, and where each attribute value starts (after
    ``'A xxx '``) and how long it is."""
    n = len(at)
    md = np.empty((n, len(_MD_TEMPLATE)), dtype=np.uint8)
    md[:] = _MD_TEMPLATE
    value_starts = at + 6
    return (md, md.view("<i4"), np.ones(n, dtype=np.int32), np.ones(n, dtype=bool),
            value_starts, ce - value_starts)


def _fill_layout_codes(p, at, ce, layout):
    """:func:`_fill_layout` code by code, in the order of ``layout`` (for
    layouts in which two codes set the same field: the last one counts)."""
    layout = [int(c) for c in layout]
    n = len(at)
    md, md32, version, ok, value_starts, value_lengths = _layout_rows(at, ce)
    for j, c in enumerate(layout):
        at, size, kind = _FAST_CODES[c]
        vs = value_starts[:, j]
        vl = value_lengths[:, j]
        if kind in (_KIND_INT, _KIND_VER):
            w = windows(p, vs, int(min(max(vl.max(), 1), 12)))
            if _same(w, vl):
                val, good = decimals(w[:1], vl[:1])
                if not good[0]:
                    ok[:] = False
                val = np.repeat(val, n)
            else:
                val, good = decimals(w, vl)
                ok &= good
            if kind == _KIND_VER:
                val = np.where((val == 1) | (val == 2), val, 2)
                version = val.astype(np.int32)
            md32[:, at // 4] = val
        elif kind == _KIND_CHAR:
            w = windows(p, vs, size)
            if (vl >= size).all():
                md[:, at:at + size] = w
            else:
                md[:, at:at + size] = np.where(np.arange(size) < vl[:, None], w, 0x20)
        else:
            w = windows(p, vs, 2 * size)
            good = vl == 2 * size
            if _same(w, vl):
                raw, g = hex_values(w[:1])
                good &= g[0]
                raw = np.broadcast_to(raw, (n, size))
            else:
                raw, g = hex_values(w)
                good &= g
            if kind == _KIND_HEXCHAR:
                good &= (raw < 0x80).all(axis=1)
            ok &= good
            md[:, at:at + size] = raw
    return md, version, ok


def _emit(builder: FramesBuilder, m: _Msg, source: str, number: int) -> None:
    issues = []

    def issue(code, field, expected, found, line, note=""):
        issues.append(make_issue(code, source=source, message_number=number, field=field,
                                 expected=expected, found=found, line=line, note=note))

    for code, field, expected, found, line in m.issues:
        issue(code, field, expected, found, line)
    fields: dict = {}
    for code, value, line in m.attrs:
        if code not in CODES:
            issue("bad_md_field", f"A {code}", "one of the 30 dmpmqmsg attribute codes",
                  repr(code), line)
            continue
        name, kind = CODES[code]
        if kind == "int":
            if not _INT.match(value) or not -2**31 <= int(value) < 2**31:
                issue("bad_md_field", f"md.{name} (A {code})", "a decimal number (MQLONG)",
                      repr(value), line)
                continue
            fields[name] = int(value)
        elif kind == "char":
            fields[name] = value
        else:
            digits = _HEX_PREFIX.match(value).group(0)
            if len(digits) % 2 or len(digits) != len(value.rstrip()):
                issue("bad_md_field", f"md.{name} (A {code})", "hex digits", repr(value[:70]), line)
                digits = digits[: len(digits) // 2 * 2]
            raw = bytes.fromhex(digits)
            size = MQMD.field(name).length
            if len(raw) > size:
                issue("bad_md_field", f"md.{name} (A {code})", f"at most {2 * size} hex digits",
                      f"{len(digits)} digits", line)
                raw = raw[:size]
            fields[name] = raw.decode("latin-1") if kind == "hexchar" else raw
    if not m.data:
        issue("data_truncated", "data lines", "X, S or T lines", "none", m.line)
    if m.lossy:
        issue("lossy_capture", "T line", "X or S lines (byte-exact)",
              "T lines (line ends normalised)", m.line,
              note="written with dmpmqmsg -dt; a line feed was added after each T line")
    md_bytes, version = pack_text_md(fields)
    builder.add(md=md_bytes, big_endian=False, codec="utf-8", blank=0x20, version=version,
                data=b"".join(m.data), number=number, offset=m.offset, line=m.line,
                issues=issues)


# ---------------------------------------------------------------------------
# writer
# ---------------------------------------------------------------------------

def format_message(m: CaptureMessage, *, width: int = 25, ascii_column: bool = False,
                   index: int | None = None) -> str:
    """The dmpmqmsg text of one message (``spec/capture-formats.md`` §1.3-1.5).

    Attribute lines in dmpmqmsg's order, then ``X`` lines of ``width`` bytes,
    then the empty line dmpmqmsg writes after every message.
    """
    md = m.full_md()
    out = []
    if index is not None:
        out.append(f"* Index {index}")
    order = ["VER", "RPT", "MST", "EXP", "FDB", "ENC", "CCS", "FMT", "PRI", "PER", "MSI",
             "COI", "BOC", "RTQ", "RTM", "USR", "ACC", "AIX", "PAT", "PAN", "PTD", "PTT",
             "AOX", "GRP", "MSQ", "OFF", "MSF", "ORL"]
    widths = {"FMT": 8, "RTQ": 48, "RTM": 48, "USR": 12, "PAN": 28, "PTD": 8, "PTT": 8}
    for code in order:
        name, kind = CODES[code]
        if code == "VER" and md["Version"] < 2:
            continue
        if code in ("GRP", "MSQ", "OFF", "MSF", "ORL") and md["Version"] < 2:
            continue
        v = md[name]
        if kind == "int":
            s = str(int(v))
        elif kind == "char":
            s = str(v).ljust(widths.get(code, 0))
        elif kind == "hexchar":
            size = 32 if code == "AIX" else 4
            s = str(v).ljust(size).encode("latin-1")[:size].hex().upper()
        else:
            size = 32 if code == "ACC" else 24
            s = bytes(v).ljust(size, b"\0").hex().upper()
        out.append(f"A {code} {s}")
    data = m.data
    if not data:
        out.append("X ")
    for off in range(0, len(data), width):
        chunk = data[off:off + width]
        line = "X " + chunk.hex().upper()
        if ascii_column:
            chars = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
            line = line.ljust(2 + 2 * (width + 1)) + "<" + chars + ">"
        out.append(line)
    out.append("")
    return "\n".join(out) + "\n"


def write_dmpmqmsg(path, messages: Iterable[CaptureMessage], *, qmgr: str = "",
                   queue: str = "", created: str = "Fri Mar 15 10:20:00 2024",
                   ascii_column: bool = False, newline: str = "\n") -> int:
    """Write a dmpmqmsg file an administrator can load with ``dmpmqmsg -f``.

    Returns the number of messages written.
    """
    n = 0
    with open(path, "w", encoding="utf-8", newline=newline) as fh:
        fh.write(f"* QLOAD Version:8.0 Created:{created}\n")
        if qmgr:
            fh.write(f"* Qmgr  = {qmgr}\n")
        if queue:
            fh.write(f"* Queue = {queue}\n")
        fh.write("\n")
        for m in messages:
            fh.write(format_message(m, ascii_column=ascii_column))
            n += 1
    return n


_Block.frame_lines = staticmethod(_frame_lines)
