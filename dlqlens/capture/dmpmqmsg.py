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
messages of a block of the file at a time with numpy and hands every other
message to the line reader (see "the fast reader" below).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import numpy as np

from dlqlens.capture.message import CaptureMessage
from dlqlens.capture.slices import Slice
from dlqlens.capture.text import (IS_HEX, TEXT_CODEC, TextBlock, decimals, hex_values,
                                  pack_text_md, plan_text, read_blocks, read_lines, rebatch,
                                  windows)
from dlqlens.decode.frames import Frames, FramesBuilder
from dlqlens.decode.issues import make_issue
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
CHUNK_BYTES = 32 << 20
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
# attribute line), X (a hex line) or O (anything else, and lines the fast
# reader does not want to reason about: S/T/N lines, stray text, lines ending
# in more than one CR). A "unit" starts at an A line whose previous non-E line
# is an X line: there the line reader always starts a new message, whatever
# came before, so units can be framed independently. A unit of the form
#     A-lines (contiguous, distinct known codes, valid values)
#     X-lines (even hex digits, optionally the -da '<...>' column), E-lines
# is one well-formed message and is framed columnwise; every other unit goes
# to the line reader, as do consecutive runs of such units.

_E, _A, _X, _O = 0, 1, 2, 3
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


_X_TO_BLANK = bytes.maketrans(b"X\r\n", b"   ")


class _Block(TextBlock):
    """A block of a dmpmqmsg file, its lines classified E, A, X or O."""

    def find_unit_starts(self) -> np.ndarray:
        p, starts, length = self.p, self.starts, self.length
        b0 = p[starts]
        tag = (length == 1) | (p[starts + 1] == 32)
        cls = np.full(self.nlines, _O, dtype=np.int8)
        plain = (length > 0) & tag & ~self.weird
        cls[plain & (b0 == 65)] = _A
        cls[plain & (b0 == 88)] = _X
        cls[(length == 0) | (b0 == 42)] = _E
        self.cls = cls
        # after a data line (X, S, T) or an N line the line reader starts a new
        # message at the next A line; it always does at an N line
        data_or_n = plain & ((b0 == 88) | (b0 == 83) | (b0 == 84) | (b0 == 78))
        ne = np.flatnonzero(cls != _E)
        after_data = (cls[ne[1:]] == _A) & data_or_n[ne[:-1]]
        return np.unique(np.concatenate(
            [[0], ne[1:][after_data], np.flatnonzero(plain & (b0 == 78))])).astype(np.int64)

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
        nO = np.add.reduceat((c == _O).astype(np.int32), us)
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
        p, buf, starts, cend, length = self.p, self.buf, self.starts, self.cend, self.length
        nu = len(us)
        c = self.cls[:cut]
        isA, isX = c == _A, c == _X
        nA = np.add.reduceat(isA.astype(np.int32), us)
        nX = np.add.reduceat(isX.astype(np.int32), us)
        nO = np.add.reduceat((c == _O).astype(np.int32), us)
        ok = (nO == 0) & (nA >= 1) & (nX >= 1)
        # the A lines and the X lines of a unit: each contiguous
        a_lines, x_lines = np.flatnonzero(isA), np.flatnonzero(isX)
        firstA = _first_at_or_after(a_lines, us)
        lastA = _first_at_or_after(a_lines, us, nA - 1)
        firstX = _first_at_or_after(x_lines, us)
        lastX = _first_at_or_after(x_lines, us, nX - 1)
        ok &= (lastA - firstA == nA - 1) & (lastX - firstX == nX - 1)
        # A lines: 'A xxx value', ASCII only (the line reader decodes text)
        badA = isA & ((length[:cut] < 6) | (p[starts[:cut] + 5] != 32))
        badA |= isA & ~self.ascii_lines(cut)
        ok &= ~np.logical_or.reduceat(badA, us)
        # attribute values, by layout (the sequence of codes)
        cand = np.flatnonzero(ok)
        md_c = np.empty((len(cand), len(_MD_TEMPLATE)), dtype=np.uint8)
        ver_c = np.ones(len(cand), dtype=np.int32)
        ok_c = np.ones(len(cand), dtype=bool)
        if len(cand):
            nA_c, firstA_c = nA[cand], firstA[cand]
            layouts = 0
            for k in np.unique(nA_c).tolist():
                pos_k = np.flatnonzero(nA_c == k)
                at = starts[firstA_c[pos_k][:, None] + np.arange(k)]
                keys = (p[at + 2].astype(np.int32) << 16) | (p[at + 3].astype(np.int32) << 8) \
                    | p[at + 4]
                while len(pos_k):
                    same = (keys == keys[0]).all(axis=1)
                    pos, layout = pos_k[same], keys[0]
                    pos_k, keys = pos_k[~same], keys[~same]
                    layouts += 1
                    got = None
                    if layouts <= _MAX_LAYOUTS:
                        got = _fill_layout(self.p, starts, cend, firstA_c[pos], layout)
                    if got is None:
                        ok_c[pos] = False
                        continue
                    blk, ver, good = got
                    if len(pos) == len(cand):
                        md_c, ver_c, ok_c = blk, ver, good
                    else:
                        md_c[pos], ver_c[pos], ok_c[pos] = blk, ver, good
            ok[cand] = ok_c
        # data: the X lines of each unit as one run of text
        data, data_len = _unit_data(self, ok, firstX, lastX, us, ue, isX)
        sel = ok[cand]
        if not sel.all():
            md_c, ver_c = md_c[sel], ver_c[sel]
        rows = cand[sel]
        n = len(rows)
        dl = data_len[rows]
        d_end = np.cumsum(dl)
        fr = Frames(
            source=source, capture_format="dmpmqmsg", md_origin="text",
            md=md_c, md_big_endian=np.zeros(n, bool),
            md_codec=np.full(n, TEXT_CODEC, dtype=object),
            md_blank=np.full(n, 0x20, np.uint8), md_version=ver_c,
            md_valid=np.ones(n, bool), data=data, starts=d_end - dl, ends=d_end,
            data_length=dl, message_number=np.zeros(n, np.int32),
            source_offset=base_off + starts[firstA[rows]],
            source_line=(base_line + firstA[rows] + 1).astype(np.int32),
            dlh_reconstructed=np.zeros(n, bool))
        return ok, fr


def _first_at_or_after(lines: np.ndarray, at: np.ndarray, plus=0) -> np.ndarray:
    """``lines[i + plus]`` for the first ``lines[i] >= at`` (clipped: callers
    check the result)."""
    if not len(lines):
        return np.full(len(at), -1, dtype=np.int64)
    i = np.searchsorted(lines, at) + plus
    return lines[np.clip(i, 0, len(lines) - 1)]


def _unit_data(block: _Block, ok, firstX, lastX, us, ue, isX):
    """The message data of the units ``ok`` (concatenated) and its length per
    unit. Clears ``ok`` of units with an X line the line reader would report."""
    buf, starts, cend = block.buf, block.starts, block.cend
    nu = len(us)
    cut = len(isX)
    xbody = np.maximum(cend[:cut] - starts[:cut] - 2, 0)
    per_unit = np.add.reduceat(np.where(isX, xbody, 0), us) // 2 if nu else np.zeros(0, np.int64)
    odd = np.logical_or.reduceat(isX & (xbody % 2 == 1), us) if nu else np.zeros(0, bool)
    rows = np.flatnonzero(ok)
    if len(rows) and not odd[rows].any():
        # the text from the first X to the end of the last X line, with 'X', CR
        # and LF blanked: fromhex reads it in one call; when every character
        # of the X bodies was a hex digit the byte count is exact
        lo = starts[firstX[rows]].tolist()
        hi = cend[lastX[rows]].tolist()
        mv = memoryview(buf)  # slices of a memoryview are not copies: join copies once
        text = b"".join([mv[a:b] for a, b in zip(lo, hi)]).translate(_X_TO_BLANK)
        want = int(per_unit[rows].sum())
        try:
            data = bytes.fromhex(text.decode("latin-1"))
        except ValueError:
            data = None
        if data is not None and len(data) == want:
            return np.frombuffer(data, dtype=np.uint8), per_unit
    # the -da column, or a damaged line: line by line
    x_lines = np.flatnonzero(isX & np.repeat(ok, ue - us))
    xs = starts[x_lines] + 2
    xe = np.maximum(cend[x_lines], xs)
    hexend, good = _x_hex_ends(block.p, xs, xe)
    unit_of = np.searchsorted(us, x_lines, side="right") - 1
    ok[unit_of[~good]] = False
    keep = ok[unit_of]
    per_unit = np.bincount(unit_of[keep], weights=(hexend - xs)[keep] // 2,
                           minlength=nu).astype(np.int64)
    mv = memoryview(buf)
    text = b"".join([mv[a:b] for a, b in zip(xs[keep].tolist(), hexend[keep].tolist())])
    return np.frombuffer(bytes.fromhex(text.decode("latin-1")), dtype=np.uint8), per_unit


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


def _fill_layout(p, starts, cend, first, layout):
    """The MQMD block, version and ok flag of the units whose attribute lines
    start at lines ``first`` and have the code sequence ``layout``; ``ok`` is
    False for rows with a value the line reader would report. None when the
    layout itself is not for the fast reader."""
    layout = [int(c) for c in layout]
    if len(set(layout)) != len(layout) or any(c not in _FAST_CODES for c in layout):
        return None
    n = len(first)
    md = np.empty((n, len(_MD_TEMPLATE)), dtype=np.uint8)
    md[:] = _MD_TEMPLATE
    md32 = md.view("<i4")  # MQLONG fields are at multiples of 4
    version = np.ones(n, dtype=np.int32)
    ok = np.ones(n, dtype=bool)
    lines = first[:, None] + np.arange(len(layout))
    value_starts = starts[lines] + 6  # after 'A xxx '
    value_lengths = cend[lines] - value_starts
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
