"""dmpmqmsg files: :func:`read_dmpmqmsg` and the fast reader.

The fast reader frames the well-formed messages of a block of the file at a
time with numpy (its byte loops in C, :mod:`dlqlens.capture.scan`; their
attribute lines are read by :mod:`dlqlens.capture.dmpmqmsg.attrs`) and hands
every other message to the line reader
(:mod:`dlqlens.capture.dmpmqmsg.lines`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from dlqlens.capture.dmpmqmsg.attrs import _MD_TEMPLATE, C_TABLES, _fill_group
from dlqlens.capture.dmpmqmsg.lines import _frame_lines
from dlqlens.capture.limits import MAX_MESSAGE_BYTES
from dlqlens.capture.scan import IS_HEX, compiled, dmp_units, hex_runs
from dlqlens.capture.slices import Slice
from dlqlens.capture.text import (_MD_CHAR_COLUMNS, TEXT_CODEC, TextBlock, masked_rows,
                                  read_text, windows)
from dlqlens.decode.frames import Frames, labels

#: Bytes read from the file at a time by the fast reader (whole messages: a
#: block is cut before the first attribute line of a message).
CHUNK_BYTES = 2 << 20
#: Blocks with fewer messages than this are read line by line (the fast
#: reader's fixed cost is that of a few dozen messages).
MIN_FAST_UNITS = 32
#: Blocks of at least this many lines take the fast reader whatever their
#: number of units (a few large messages; see :meth:`_Block.frame`).
MIN_FAST_LINES = 4096


def read_dmpmqmsg(path: str, *, source: str | None = None, piece: Slice | None = None,
                  batch_size: int = 65536, fast: bool = True,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> Iterator[Frames]:
    """Frame the messages of a dmpmqmsg/QLOAD file.

    Parameters and errors (a :class:`~dlqlens.errors.CaptureError` when the file
    cannot be opened): those of :func:`dlqlens.capture.text.read_text`.
    The well-formed messages (attribute lines, then ``X`` lines) are framed
    by this module's fast reader, a block of the file at a time, and the
    others by the line-by-line reader (:mod:`dlqlens.capture.dmpmqmsg.lines`),
    which reads every line when ``fast`` is False: the same frames either way.

    Yields
    ------
    Frames
        ``source_line`` is the first ``A`` (or ``N``) line of each message.
    """
    yield from read_text(path, _Block, source=source, piece=piece, batch_size=batch_size,
                         fast=fast, chunk_bytes=CHUNK_BYTES, min_units=MIN_FAST_UNITS,
                         max_message_bytes=max_message_bytes)


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
_MAX_LAYOUTS = 16
_XWIN = 128


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

    frame_lines = staticmethod(_frame_lines)
    capture_format = "dmpmqmsg"
    blank_lines_ignored = True

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
        """Which units are well-formed messages, and the frames of those: read
        in one C pass (:func:`dlqlens.capture.scan.dmp_units`) when the loops
        were built, else by the numpy steps of :meth:`_fast_units_numpy` (the
        reference; the tests read with each, against the line reader)."""
        if compiled("dmp_units"):
            ok, md, ver, first_a, dl, data = dmp_units(self.buf, self.starts, self.cend,
                                                       self.cls, us, ue, C_TABLES)
            return ok, self._frames(md, ver, data, dl, first_a, source, base_off, base_line)
        return self._fast_units_numpy(us, ue, cut, source, base_off, base_line)

    def _frames(self, md, ver, data, dl, first_a, source, base_off, base_line) -> Frames:
        """The frames of the units read: MQMD rows ``md``, versions ``ver``,
        their data (``data``, ``dl`` bytes each), first A lines ``first_a``."""
        n = len(md)
        d_end = np.cumsum(dl)
        return Frames(
            source=source, capture_format="dmpmqmsg", md_origin="text",
            md=md, md_big_endian=np.zeros(n, bool),
            md_codec=labels(n, TEXT_CODEC),
            md_blank=np.full(n, 0x20, np.uint8), md_version=ver,
            md_valid=np.ones(n, bool), data=data, starts=d_end - dl, ends=d_end,
            data_length=dl, message_number=np.zeros(n, np.int32),
            source_offset=base_off + self.starts[first_a],
            source_line=(base_line + first_a + 1).astype(np.int32),
            dlh_reconstructed=np.zeros(n, bool))

    def _fast_units_numpy(self, us, ue, cut, source, base_off, base_line):
        """:meth:`fast_units` with numpy (the C loop's reference)."""
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
            # a value masked by hand ('****', '..') is for the line reader to say
            ok_c &= ~masked_rows(md_c, _MD_CHAR_COLUMNS)
            ok[cand] = ok_c
        # data: the X lines of each unit as one run of text
        data, dl = _unit_data(self, ok, firstX, lastX)
        sel = ok[cand]
        if not sel.all():
            md_c, ver_c = md_c[sel], ver_c[sel]
        rows = cand[sel]
        return ok, self._frames(md_c, ver_c, data, dl, firstA[rows], source, base_off, base_line)


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
    good = (digits == xe - xs) & ((digits & 1) == 0)
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
