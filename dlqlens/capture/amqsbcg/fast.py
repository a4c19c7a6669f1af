"""amqsbcg output: :func:`read_amqsbcg` and the fast reader.

The fast reader frames, a block of the file at a time with numpy, every
message printed exactly as amqsbcg prints it (its descriptor lines matched
by :mod:`dlqlens.capture.amqsbcg.layout`, its dump lines read by
:mod:`dlqlens.capture.amqsbcg.dump`; a 9.3.4 DLH block rebuilt here) and
hands every other message to the line reader
(:mod:`dlqlens.capture.amqsbcg.lines`). Where the C loops were built
(:data:`dlqlens.capture.scan.COMPILED`), the descriptor lines are matched
unit by unit in C (:func:`~dlqlens.capture.scan.match_lines`) and the dump
lines checked and decoded in C (:func:`~dlqlens.capture.scan.dump_lines`);
the numpy matcher and dump checks are the fallback, with the same frames.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

import numpy as np

from dlqlens.capture.amqsbcg.dump import (_dump_bytes, _dump_lines, _dump_lines_any,
                                          _hex_columns_ok)
from dlqlens.capture.amqsbcg.layout import (_DATA_LINES, _DLH_LINES, _LENGTH_OF, _LENGTH_ONLY,
                                            _MD_AT, _MD_LINES, _MD_V2_LINES, _CMatcher,
                                            _Matcher)
from dlqlens.capture.amqsbcg.lines import (_DATA_BANNER, _DLH_BANNER, _END, _MD_BANNER,
                                           _MD_BANNER_B, _MQGET, _frame_lines)
from dlqlens.capture.limits import MAX_MESSAGE_BYTES
from dlqlens.capture import scan
from dlqlens.capture.scan import find_all
from dlqlens.capture.slices import Slice
from dlqlens.capture.text import (_MD_CHAR_COLUMNS, TEXT_CODEC, TextBlock, decode_line,
                                  masked_rows, read_text, windows)
from dlqlens.decode.frames import Frames, FramesBuilder, labels
from dlqlens.mq.ccsid import UTF16, charset
from dlqlens.mq.structs import MQDLH, MQLONG

#: Bytes read from the file at a time by the fast reader (whole messages: a
#: block is cut before an ``MQGET of message number`` line). A few MB: the
#: block's arrays stay in the processor's caches (and below the size that
#: malloc maps afresh for each block).
CHUNK_BYTES = 4 << 20
#: Blocks with fewer messages than this are read line by line (the fast
#: reader's fixed cost is that of a few dozen messages), unless they hold at
#: least FAST_BLOCK_BYTES (a few large messages: the line reader's cost
#: follows the dump lines).
MIN_FAST_UNITS = 32
FAST_BLOCK_BYTES = 1 << 20


def read_amqsbcg(path: str, *, source: str | None = None, piece: Slice | None = None,
                 batch_size: int = 65536, fast: bool = True,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> Iterator[Frames]:
    """Frame the messages of an amqsbcg output file.

    Parameters and errors (a :class:`~dlqlens.errors.CaptureError` when the file
    cannot be opened): those of :func:`dlqlens.capture.text.read_text`.
    Messages printed exactly as amqsbcg prints them are framed by this
    module's fast reader, a block of the file at a time, and the others by
    the line-by-line reader (:mod:`dlqlens.capture.amqsbcg.lines`), which
    reads every line when ``fast`` is False: the same frames either way.

    Yields
    ------
    Frames
        ``source_line`` is the line of ``MQGET of message number`` (or of the
        descriptor banner when that line is missing); ``source_offset`` its
        byte offset.
    """
    yield from read_text(path, _Block, source=source, piece=piece, batch_size=batch_size,
                         fast=fast, chunk_bytes=CHUNK_BYTES, min_units=MIN_FAST_UNITS,
                         max_message_bytes=max_message_bytes)


# A unit starts at an 'MQGET of message number N' line: there the line reader
# finishes whatever message it had, whatever came before. Blank lines mean
# nothing inside a message, so a unit's other lines ("content lines") are
# matched against amqsbcg's layout by position, for all units at once: the
# descriptor banner, the MQMD lines (the five version-2 lines optional), the
# 9.3.4 DLH block (optional), the data banner, the length line, then exactly
# the dump lines the length calls for (fixed columns: offset, eight 4-digit
# groups, blanks, the quoted character column), and nothing after them but
# the end of the output ('No more messages' and what follows it). Anything
# else sends the unit to the line reader.

_MQGET_OF = np.frombuffer(b"MQGET of message number", dtype=np.uint8)
_DLH_AT = {f.name: (MQDLH.offsets[f.name], f.length, f.type) for f in MQDLH.fields}
_DLH_SIZE = MQDLH.length()
#: The section banners of a unit as amqsbcg prints them (M descriptor, D Dead
#: Letter Header, A data): a unit whose banners read otherwise may hold a fragment.
_PLAIN_ORDER = re.compile(r"M?D?A?")


class _Block(TextBlock):
    """A block of amqsbcg output, cut before 'MQGET of message number' lines."""

    frame_lines = staticmethod(_frame_lines)
    capture_format = "amqsbcg"

    def frame(self, cut, source, base_off, base_line, count, min_units=0):
        """:meth:`TextBlock.frame`; a block of a few large messages (at least
        FAST_BLOCK_BYTES) goes to the fast reader however few they are."""
        if self.line_offset(cut) >= FAST_BLOCK_BYTES:
            min_units = min(min_units, 1)
        return super().frame(cut, source, base_off, base_line, count, min_units)

    def find_unit_starts(self) -> np.ndarray:
        # lines holding 'MQGET' (all special to the line reader); those with
        # 'MQGET of message number' + blanks + a digit start units
        if scan.compiled("mqget_lines"):
            special, units = scan.mqget_lines(self.buf, self.n, self.starts, self.cend)
        else:
            special, units = self._mqget_lines()
        self.special = np.zeros(self.nlines, dtype=bool)
        self.special[special] = True
        self.mqget = np.zeros(self.nlines, dtype=bool)
        self.mqget[units] = True
        return np.unique(np.concatenate([[0], units])).astype(np.int64)

    def _mqget_lines(self) -> tuple[np.ndarray, np.ndarray]:
        """:func:`dlqlens.capture.scan.mqget_lines` in numpy."""
        pos = _find_all(self.buf, b"MQGET", self.n)
        line = np.searchsorted(self.starts, pos, side="right") - 1
        pos, line = pos[line >= 0], line[line >= 0]  # (none in a block of no whole line)
        inside = pos + 5 <= self.cend[line]
        pos, line = pos[inside], line[inside]
        w = windows(self.p, pos, 48)
        is_get = (w[:, :23] == _MQGET_OF).all(axis=1)
        blanks = (w[:, 23:] == 32) | (w[:, 23:] == 9)
        first = np.argmax(~blanks, axis=1)
        r = np.arange(len(pos))
        digit = (w[r, 23 + first] - np.uint8(48)) < 10
        start = is_get & (first > 0) & digit & (pos + 24 + first <= self.cend[line])
        return line, line[start]

    def unit_counts(self, cut: int) -> np.ndarray:
        """Messages per unit of lines ``[0, cut)``: the line reader starts a
        message at an ``MQGET of message number`` line (where units start)
        and at each descriptor banner line, except the banner that is the
        first non-blank line after an MQGET line (that message's own)."""
        us = self.unit_starts[self.unit_starts < cut]
        out = self._unit_counts(us, cut)
        # a unit where a fragment may start (_fragment_units): the line reader
        odd = self._fragment_units(us, cut)
        if odd.any():
            out[odd] = self.count_by_lines(us, np.append(us[1:], cut), odd)[odd]
        return out

    def _unit_counts(self, us: np.ndarray, cut: int) -> np.ndarray:
        """:meth:`unit_counts` before the units of :meth:`_fragment_units`."""
        banners = self._banner_counts(us, cut)
        if not len(us):
            return banners
        # units started by an MQGET line: one message more, unless the next
        # non-blank line is its banner
        p, starts, cend = self.p, self.starts, self.cend
        extra = np.zeros(len(us), dtype=np.int64)
        gets = np.flatnonzero(self.mqget[us])
        if not len(gets):
            return banners
        ue = np.append(us[1:], cut)
        nonblank = np.flatnonzero(self._trimmed_ends(cut) > starts[:cut])
        k = np.searchsorted(nonblank, us[gets] + 1)
        j = np.where(k < len(nonblank), nonblank[np.minimum(k, len(nonblank) - 1)], cut)
        has = j < ue[gets]
        jj = np.minimum(j, max(cut - 1, 0))
        size = len(_MD_BANNER_B)
        exact = has & (cend[jj] - starts[jj] == size) & ~self.weird[jj]
        if exact.any():
            w = windows(p, starts[jj[exact]], size)
            exact[exact] = (w == np.frombuffer(_MD_BANNER_B, np.uint8)).all(axis=1)
        extra[gets] = ~exact
        for g in np.flatnonzero(has & ~exact).tolist():  # the line reader's test
            i = int(gets[g])
            line = int(j[g])
            while line < int(ue[i]):
                text = decode_line(bytes(self.buf[starts[line]:cend[line]])).strip()
                if text:
                    extra[i] = text != _MD_BANNER
                    break
                line += 1
        # an MQGET line inside a unit (not where the fast reader cuts): the line reader
        inner = self.special[:cut].copy()
        inner[us] = False
        odd = np.zeros(len(us), dtype=bool)
        if inner.any():
            odd[np.searchsorted(us, np.flatnonzero(inner), side="right") - 1] = True
            out = banners + extra
            out[odd] = self.count_by_lines(us, ue, odd)[odd]
            return out
        return banners + extra

    def _fragment_units(self, us: np.ndarray, cut: int) -> np.ndarray:
        """Units where the line reader may start a message at a Dead Letter
        Header or data banner (a fragment of amqsbcg output,
        :func:`~dlqlens.capture.amqsbcg.lines._frame_lines`): all but those
        started by an MQGET line whose section banners come in amqsbcg's
        order, each at most once (descriptor, Dead Letter Header, data), and
        none after a line that ends the browse (``No more messages``, the
        summary banner: the line reader ends the message there, and a banner
        after it starts another)."""
        odd = np.zeros(len(us), dtype=bool)
        if not len(us):
            return odd
        end = self.line_offset(cut)
        pos = np.concatenate([_find_all(self.buf, b"****", end),
                              _find_all(self.buf, b"No more messages", end)])
        lines = np.unique(np.searchsorted(self.starts, pos, side="right") - 1)
        lines = lines[(lines >= 0) & (lines < cut)]
        if not len(lines):
            return odd
        events: dict[int, str] = {}
        for line in lines.tolist():
            raw = decode_line(bytes(self.buf[self.starts[line]:self.cend[line]]))
            text = raw.strip()
            kind = "M" if text == _MD_BANNER else "D" if text == _DLH_BANNER else \
                "A" if _DATA_BANNER.match(text) else "E" if _END.search(raw) else None
            if kind is not None:
                unit = int(np.searchsorted(us, line, side="right") - 1)
                if unit >= 0:
                    events[unit] = events.get(unit, "") + kind
        for unit, seq in events.items():
            body = seq.rstrip("E")
            if "E" in body or (body.replace("M", "") and not self.mqget[us[unit]]) or \
                    _PLAIN_ORDER.fullmatch(body) is None:
                odd[unit] = True
        return odd

    def _banner_counts(self, us: np.ndarray, cut: int) -> np.ndarray:
        """Descriptor banner lines (the line reader's test) per unit."""
        pos = _find_all(self.buf, _MD_BANNER_B, self.line_offset(cut))
        line = np.unique(np.searchsorted(self.starts, pos, side="right") - 1)
        # a line that is the banner and nothing else; others as the line reader reads them
        exact = (self.cend[line] - self.starts[line] == len(_MD_BANNER_B)) & \
            (self.p[self.starts[line]] == _MD_BANNER_B[0]) & ~self.weird[line]
        for i in np.flatnonzero(~exact).tolist():
            lo, hi = int(self.starts[line[i]]), int(self.cend[line[i]])
            exact[i] = decode_line(bytes(self.buf[lo:hi])).strip() == _MD_BANNER
        unit = np.searchsorted(us, line[exact], side="right") - 1
        return np.bincount(unit, minlength=len(us)).astype(np.int64)

    def _trimmed_ends(self, cut: int) -> np.ndarray:
        """End of each line's text without trailing blanks."""
        return scan.trimmed_ends(self.buf, self.starts[:cut], self.cend[:cut])

    def fast_units(self, us, ue, cut, source, base_off, base_line):
        starts = self.starts
        rend = self._trimmed_ends(cut)
        filled = (rend > starts[:cut]) | self.weird[:cut]  # not blank
        content = np.flatnonzero(filled)
        # content lines before each line (a running count: no binary searches)
        before = np.zeros(cut + 1, dtype=np.int64)
        np.cumsum(filled, out=before[1:])
        # the lines holding 'MQGET' (where the line reader may start a message).
        # The other lines that end a message ('No more messages', a summary
        # banner) never match a descriptor template or a dump line, so the
        # checks below reject them wherever they stand
        special = self.special[:cut]
        clean = self.ascii_lines(cut) & ~self.weird[:cut]
        cfirst = before[us]
        ncont = before[ue] - cfirst
        ok = (ncont >= 2) & self.mqget[us]
        ok[ok] &= content[cfirst[ok]] == us[ok]  # the MQGET line itself
        matcher = _CMatcher if scan.compiled("match_lines") else _Matcher
        m = matcher(self, rend, content, cfirst, ncont, clean, ok)
        m.ci[:] = 1
        m.lines(_MD_LINES)
        v2 = m.probe(_MD_V2_LINES[0][0][1])
        m.lines(_MD_V2_LINES, v2)
        dlh = m.probe(_DLH_LINES[0][0][1])
        m.lines(_DLH_LINES, dlh)
        for tokens in _DATA_LINES:
            m.line(tokens)
        of = m.probe(_LENGTH_OF[0][1]) & m.probe(np.frombuffer(b" of ", np.uint8), after=True)
        m.line(_LENGTH_OF, of)
        m.line(_LENGTH_ONLY, ~of)
        ok = m.ok
        # a DLH block is rebuilt in the MQMD's code page: one the fast reader packs
        enc = m.md[:, _MD_AT["Encoding"][0]:][:, :4].copy().view("<i4")[:, 0].astype(np.int64)
        ccsid = m.md[:, _MD_AT["CodedCharSetId"][0]:][:, :4].copy().view("<i4")[:, 0]
        for c in np.unique(ccsid[ok & dlh]).tolist():
            if _ascii_table(int(c)) is None:
                ok &= ~(dlh & (ccsid == c))
        if not ok.any():
            return ok, FramesBuilder(source, "amqsbcg", "text").build()
        shown = m.values["shown"]
        total = np.where(of, m.values["total"], shown) if "total" in m.values else shown
        # nothing special (an end, another message) inside the descriptor: no
        # special content line among each unit's content lines [2, ci)
        nc = len(content)
        sp = np.flatnonzero(special)
        sc = before[sp[filled[sp]]]
        ok &= np.searchsorted(sc, np.minimum(cfirst + m.ci, nc)) == \
            np.searchsorted(sc, np.minimum(cfirst + 2, nc))
        # nor a value masked by hand ('****', '..'): the line reader says so
        ok &= ~masked_rows(m.md, _MD_CHAR_COLUMNS)
        for name, (_, size, kind) in _DLH_AT.items():
            if kind != MQLONG and ("d." + name) in m.values and (ok & dlh).any():
                ok &= ~(dlh & masked_rows(np.asarray(m.values["d." + name])))
        # the dump lines
        nd = np.where(ok, (shown + 15) // 16, 0)
        ok &= m.ci + nd <= ncont
        nd = np.where(ok, nd, 0)
        rows = np.flatnonzero(ok)
        first = cfirst + m.ci
        k = _ranks(nd[rows])
        dl = content[np.repeat(first[rows], nd[rows]) + k]
        nbytes = np.minimum(np.repeat(shown[rows], nd[rows]) - 16 * k, 16)
        compiled = scan.compiled("dump_lines")
        if compiled:  # checked and decoded in C
            good, hexok, dump_all = scan.dump_lines(self.buf, starts[dl], self.length[dl],
                                                    nbytes, k)
            other = np.flatnonzero(~good)
            if len(other):
                at_o = starts[dl[other]]
                good[other] = _dump_lines_any(self.p, at_o, self.length[dl[other]],
                                              nbytes[other], k[other], windows(self.p, at_o, 52))
        else:
            good, hexarea = _dump_lines(self.p, starts[dl], self.length[dl], nbytes, k)
        good &= ~special[dl]
        row_of = np.repeat(rows, nd[rows])
        ok[row_of[~good]] = False
        # what follows the dump: nothing, or the end of the output
        for r in np.flatnonzero(ok & (m.ci + nd < ncont)).tolist():
            tail = content[first[r] + nd[r]:cfirst[r] + ncont[r]].tolist()
            ok[r] = self._tail_ok(tail)
        # the data: every dump line's hex area in one bytes.fromhex call
        keep = ok[row_of]
        if compiled:
            # a digit column that is no hex digit: what bytes.fromhex refuses below
            bad = keep & ~hexok
            if bad.any():
                ok[row_of[bad]] = False
                keep = ok[row_of]
            dump = dump_all if keep.all() else dump_all[np.repeat(keep, nbytes)]
        else:
            dump = _dump_bytes(hexarea, nbytes) if keep.all() else \
                _dump_bytes(hexarea[keep], nbytes[keep])
        if dump is None:
            ok[row_of[keep & ~_hex_columns_ok(hexarea, nbytes)]] = False
            keep = ok[row_of]
            dump = _dump_bytes(hexarea[keep], nbytes[keep])
        rows = np.flatnonzero(ok)
        n = len(rows)
        has_dlh = dlh[rows]
        headers = _dlh_block(m.values, rows[has_dlh], enc[rows[has_dlh]],
                             ccsid[rows[has_dlh]])
        data, msg_len = _with_headers(dump, shown[rows], headers, has_dlh)
        total_r = total[rows] + np.where(has_dlh, _DLH_SIZE, 0)
        d_end = np.cumsum(msg_len)
        fr = Frames(
            source=source, capture_format="amqsbcg", md_origin="text",
            md=m.md[rows], md_big_endian=np.zeros(n, bool),
            md_codec=labels(n, TEXT_CODEC),
            md_blank=np.full(n, 0x20, np.uint8), md_version=m.version[rows],
            md_valid=np.ones(n, bool), data=data, starts=d_end - msg_len, ends=d_end,
            data_length=np.maximum(total_r, msg_len), message_number=np.zeros(n, np.int32),
            source_offset=base_off + starts[us[rows]],
            source_line=(base_line + us[rows] + 1).astype(np.int32),
            dlh_reconstructed=has_dlh.copy())
        return ok, fr

    def _tail_ok(self, lines: list[int]) -> bool:
        """Lines after the dump: the line reader must end the message at the
        first and ignore the rest."""
        texts = [decode_line(self.buf[self.starts[i]:self.cend[i]]) for i in lines]
        if not _END.search(texts[0]) or _MQGET.search(texts[0]):
            return False
        return all(not _MQGET.search(t) and t.strip() != _MD_BANNER for t in texts[1:])


def _find_all(buf, needle: bytes, end: int) -> np.ndarray:
    """Offsets of ``needle`` in ``buf[:end]`` (:func:`dlqlens.capture.scan.find_all`)."""
    return find_all(buf, needle, end)


def _ranks(counts: np.ndarray) -> np.ndarray:
    """``0..counts[i]-1`` for every ``i``, concatenated."""
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total) - starts


@lru_cache(maxsize=None)
def _ascii_table(ccsid: int) -> np.ndarray | None:
    """How the MQDLH of a message with MQMD CCSID ``ccsid`` is packed: ASCII
    byte -> byte in that code page, or None when not one byte each."""
    cs = charset(ccsid)
    codec = cs.codec if cs.family != UTF16 else "latin-1"
    chars = "".join(chr(c) for c in range(128))
    try:
        whole = chars.encode(codec)
        each = [c.encode(codec) for c in chars]
    except (UnicodeEncodeError, LookupError):
        return None
    if len(whole) != 128 or any(len(b) != 1 for b in each) or b"".join(each) != whole:
        return None
    return np.frombuffer(whole, dtype=np.uint8)


def _dlh_block(values, rows, enc, ccsid):
    """The 172 MQDLH bytes of the units ``rows`` rebuilt from their printed
    fields, as the line reader packs them: integers in the byte order of the
    MQMD Encoding, characters in the code page of its CCSID (blank-padded)."""
    n = len(rows)
    out = np.zeros((n, _DLH_SIZE), dtype=np.uint8)
    if not n:
        return out
    big = (enc & 0x0F) == 1
    tables = np.zeros((n, 128), dtype=np.uint8)
    for c in np.unique(ccsid).tolist():
        tables[ccsid == c] = _ascii_table(int(c))
    for name, (at, size, kind) in _DLH_AT.items():
        val = values["d." + name][rows]
        if kind == MQLONG:
            le = val.astype("<i4").view(np.uint8).reshape(-1, 4)
            out[:, at:at + 4] = np.where(big[:, None], le[:, ::-1], le)
        else:
            out[:, at:at + size] = np.take_along_axis(tables, val.astype(np.intp) & 127, axis=1)
    return out


def _with_headers(dump, dlen, headers, has_dlh):
    """Message data: each message's rebuilt MQDLH (if any), then its dump bytes."""
    hlen = np.where(has_dlh, _DLH_SIZE, 0)
    msg_len = dlen + hlen
    if not has_dlh.any():
        return dump, msg_len
    data = np.empty(int(msg_len.sum()), dtype=np.uint8)
    is_head = np.repeat(np.tile(np.array([True, False]), len(dlen)),
                        np.stack([hlen, dlen], axis=1).ravel())
    data[is_head] = headers.ravel()
    data[~is_head] = dump
    return data, msg_len
