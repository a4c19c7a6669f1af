"""What the two text capture formats share (:mod:`dlqlens.capture.dmpmqmsg`,
:mod:`dlqlens.capture.amqsbcg`).

Reading lines of a file, packing an MQMD from text values, the vectorised
helpers of the fast readers (windows of bytes, decimal and hex columns),
cutting and joining :class:`~dlqlens.decode.frames.Frames`, and the frame of
both readers: :class:`TextBlock` (a block of whole lines, which a format
subclasses), :func:`read_text` (a format's reader: the fast reader a block at
a time, or the line reader), :func:`read_blocks` and :func:`plan_text`
(slices cut at message boundaries).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

import numpy as np

from dlqlens.capture.limits import MAX_MESSAGE_BYTES, text_limit, too_large_issue
from dlqlens.capture.message import MD_DEFAULTS
from dlqlens.capture.scan import HEX_VALUE, find_all, line_table, rows_of
from dlqlens.capture.slices import Slice
from dlqlens.decode.frames import Frames
from dlqlens.errors import CaptureError
from dlqlens.mq.structs import MQMD

_ELISION = re.compile(r"\.{3,}|\u2026+|[\[(<]\s*(?:\.{3,}|\u2026|snip(?:ped)?|elided|cut)\s*[\])>]",
                      re.I)

#: Characters of the MQMD text are packed into the binary MQMD in this codec.
TEXT_CODEC = "utf-8"


def _open(path: str):
    """``path`` opened for reading bytes (:class:`CaptureError` when it cannot be)."""
    try:
        return open(path, "rb")
    except OSError as exc:
        raise CaptureError(f"{path}: cannot open: {exc.strerror or exc}") from exc


def lone_cr_to_lf(buf: bytearray, n: int, eof: bool) -> None:
    """Make every line end of ``buf[:n]`` an LF: a CR not followed by an LF
    (a classic Mac OS line end, or one of a file whose line ends are mixed)
    becomes an LF, in place. CR LF stays as it is; the byte count does not
    change, so offsets and line numbers are those of the file.

    A CR at ``n - 1`` is left alone unless ``eof`` (the byte after it is not
    known yet: the caller reads it with the next block).
    """
    if buf.find(b"\r", 0, n) < 0:
        return
    lone = n if eof else n - 1
    if buf.count(b"\r", 0, lone) == buf.count(b"\r\n", 0, n):
        return  # every CR is part of a CR LF
    p = np.frombuffer(buf, dtype=np.uint8)
    cr = np.flatnonzero(p[:lone] == 13)
    nxt = np.where(cr + 1 < n, p[np.minimum(cr + 1, len(p) - 1)], 0)
    p[cr[(nxt != 10) | (cr + 1 >= n)]] = 10


def normalise_head(head: bytes) -> bytes:
    """The first bytes of a file with its lone CRs made LFs
    (:func:`lone_cr_to_lf`), for format sniffing and banners."""
    if b"\r" not in head:
        return head
    buf = bytearray(head)
    lone_cr_to_lf(buf, len(buf), True)
    return bytes(buf)


#: Bytes read at a time by :func:`read_lines`.
_LINE_CHUNK = 1 << 20


def read_lines(path: str) -> Iterator[tuple[int, int, str]]:
    """Yield ``(line_number, byte_offset, text)`` for each line of ``path``.

    A line ends at an LF, a CR LF or a CR alone (:func:`lone_cr_to_lf`); the
    line end is removed. Each line is decoded as UTF-8, or Latin-1 when it is
    not valid UTF-8, so no byte is lost.

    Raises
    ------
    CaptureError
        When the file cannot be opened.
    """
    with _open(path) as fh:
        number, offset = 1, 0
        carry = bytearray()
        while True:
            chunk = fh.read(_LINE_CHUNK)
            eof = not chunk
            buf = carry + chunk
            if not buf:
                return
            lone_cr_to_lf(buf, len(buf), eof)
            cut = len(buf) if eof else buf.rfind(b"\n") + 1
            if cut > 0:
                part = bytes(buf[:cut])
                yield from iter_lines(part, number, offset)
                number += part.count(b"\n") + (part[-1:] != b"\n")
                offset += cut
            carry = buf[cut:]
            if eof:
                return


def decode_line(raw: bytes) -> str:
    """The text of one raw line as :func:`read_lines` gives it.

    Line ends (``\\n`` then any ``\\r``) are removed; UTF-8, or Latin-1 when
    the line is not valid UTF-8.
    """
    raw = raw.rstrip(b"\n").rstrip(b"\r")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")
    # a line with bytes above 0x7F read as UTF-8 says so (line_bytes)
    return text if len(text) == len(raw) else Utf8Text(text)


class Utf8Text(str):
    """The text of a line that held UTF-8 characters of more than one byte
    (:func:`decode_line`): the line's bytes are its UTF-8 encoding, where
    those of any other line are its Latin-1 encoding (:func:`line_bytes`)."""

    __slots__ = ()


def line_bytes(text: str) -> bytes:
    """The bytes of a line whose text :func:`decode_line` gave (its line end
    removed): the same bytes, whatever the line held."""
    return text.encode("utf-8") if type(text) is Utf8Text else text.encode("latin-1")


#: :func:`iter_lines` splits this many bytes of lines at a time.
_SPLIT_BYTES = 1 << 18


def iter_lines(buf, number: int = 1, offset: int = 0) -> Iterator[tuple[int, int, str]]:
    """:func:`read_lines` over the bytes ``buf`` (whole lines of a file).

    ``number`` and ``offset`` are the line number and file offset of the
    first byte of ``buf``. Split :data:`_SPLIT_BYTES` at a time, so a block
    dense in short lines never has a list of all its lines.
    """
    n = len(buf)
    i = 0
    while i < n:
        j = buf.find(b"\n", min(i + _SPLIT_BYTES, n) - 1) if i + _SPLIT_BYTES < n else -1
        j = n if j < 0 else j + 1
        parts = bytes(buf[i:j]).split(b"\n")
        if parts[-1] == b"":
            parts.pop()  # the piece ends with its line end
        for raw in parts:
            yield number, offset + i, decode_line(raw)
            number += 1
            i += len(raw) + 1
        i = j


def pack_text_md(fields: dict) -> tuple[bytes, int]:
    """Build a binary MQMD (little-endian, UTF-8 characters) from text values.

    Returns the 364 bytes and the MQMD version (from ``Version``, default 1
    for dmpmqmsg files without ``A VER``). Character values too long for
    their field are cut to the field length in bytes.
    """
    md = dict(MD_DEFAULTS)
    md["Version"] = 1
    md.update(fields)
    version = md["Version"] if md["Version"] in (1, 2) else 2
    for f in MQMD.fields:
        if f.type == "MQCHAR" and f.name in md:  # absent StrucId: pack writes 'MD  '
            raw = str(md.get(f.name) or "").encode(TEXT_CODEC)
            if len(raw) > f.length:
                raw = raw[:f.length]
            md[f.name] = raw
    md["Version"] = version
    return MQMD.pack(md, "<", TEXT_CODEC, version=2), version


#: Characters people mask values with (``****``, ``XXXX``, ``..``, ``…``).
_MASK_CHARS = frozenset("*.xX\u2026")


def is_masked(value: str, kind: str) -> bool:
    """Is ``value`` (a descriptor value as a capture shows it) masked by
    whoever pasted the capture, rather than a value?

    ``kind``: ``hex`` (masked when a mask character stands among the digits:
    ``414D51....``, ``****``, ``XXXX``), ``int`` (only mask characters, a
    sign allowed) or ``char`` (``**`` or ``...`` in it, or only dots). The
    fast readers send every line holding ``**`` or ``..`` to the line
    readers, which decide with this."""
    v = value.strip()
    if not v:
        return False
    if kind == "hex":
        return any(c in _MASK_CHARS for c in v) and \
            all(c in _MASK_CHARS or c in "0123456789abcdefABCDEF " for c in v)
    if kind == "int":
        return all(c in _MASK_CHARS for c in v.lstrip("+-")) and len(v.lstrip("+-")) > 0
    return "**" in v or "..." in v or "\u2026" in v or (len(v) >= 2 and set(v) == {"."})


#: Byte columns of the MQMD's character fields (as the text readers pack it).
_MD_CHAR_COLUMNS = np.concatenate([np.arange(MQMD.offsets[f.name], MQMD.offsets[f.name] + f.length)
                                   for f in MQMD.fields if f.type == "MQCHAR"])


def masked_rows(block: np.ndarray, columns: np.ndarray | None = None) -> np.ndarray:
    """Rows of ``block`` (character values, one row per message) holding
    ``**`` or ``..``: those the fast readers leave to the line readers
    (which decide with :func:`is_masked`). ``columns``: the byte columns to
    look at (default: every column; an MQMD's character fields with
    :data:`_MD_CHAR_COLUMNS`)."""
    out = np.zeros(len(block), dtype=bool)
    if not len(block) or block.ndim != 2 or not block.shape[1]:
        return out
    width = block.shape[1]
    cols = np.arange(width) if columns is None else np.asarray(columns)
    if len(cols) < 2:
        return out
    # pairs of neighbouring columns (of ``cols``) that are neighbours in the
    # block too: found as b"**" and b".." in the block's bytes (a byte search,
    # where a compare of every column costs a pass each); the few other
    # pairs (across a gap of ``cols``) compared column by column
    near = cols[1:] == cols[:-1] + 1
    pair_start = np.zeros(width, dtype=bool)
    pair_start[cols[:-1][near]] = True
    flat = np.ascontiguousarray(block, dtype=np.uint8).reshape(-1)
    for needle in (b"**", b".."):
        pos = find_all(flat, needle, len(flat))
        if len(pos):
            pos = pos[pair_start[pos % width]]
            out[pos // width] = True
    for a, b in zip(cols[:-1][~near].tolist(), cols[1:][~near].tolist()):
        va, vb = block[:, a], block[:, b]
        out |= (va == vb) & ((va == 42) | (va == 46))
    return out


def elision_marker(text: str) -> bool:
    """A line someone put where they cut lines out (``...``, ``…``, ``[...]``,
    ``[snip]``)."""
    return _ELISION.fullmatch(text.strip()) is not None


def clean_hex(text: str) -> str:
    """Remove blanks from a hex string."""
    return "".join(text.split())


# ---------------------------------------------------------------------------
# vectorised helpers of the fast text readers
# ---------------------------------------------------------------------------

#: Zero bytes after the data of a block's buffer (windows may read that far).
PAD = 256
_PAD = bytes(PAD)


def windows(p: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """``(len(at), width)`` array of ``p[at[i]:at[i] + width]`` (a copy).

    ``p`` is the array of a :class:`TextBlock` (``width`` at most :data:`PAD`).
    """
    if width <= 0:
        return np.zeros((len(at), 0), dtype=np.uint8)
    return rows_of(p, at, width).view(np.uint8).reshape(len(at), width)


def hex_bytes(win: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode rows of hex digits: ``(bytes (n, w//2), ok (n,))``."""
    v = HEX_VALUE[win]
    ok = (v < 16).all(axis=1)
    return (v[:, 0::2] << 4) | (v[:, 1::2] & 15), ok


_POW10 = 10.0 ** np.arange(13)


def decimals(win: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values ``-?[0-9]{1,10}`` of ``length`` characters at the start of the
    rows of ``win`` (n, w <= 12; ``w`` at least the longest value that can be
    valid): ``(int64 values, ok)``; ``ok`` is False for anything else and
    outside the MQLONG range."""
    w = win.shape[1]
    col = np.arange(w)
    neg = win[:, 0] == 45
    digit = win - np.uint8(48)
    active = (col >= neg[:, None]) & (col < length[:, None])
    ok = ((digit < 10) | ~active).all(axis=1)
    nd = length - neg
    ok &= (nd >= 1) & (nd <= 10) & (length <= w)
    x = np.where(active, digit, 0).astype(np.float64) @ _POW10[w - 1::-1]
    val = np.rint(x / _POW10[np.clip(w - length, 0, w)]).astype(np.int64)
    val = np.where(neg, -val, val)
    ok &= (val >= -2**31) & (val < 2**31)
    return val, ok


def hex_values(win: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of hex digits -> ``(bytes (n, w//2), ok)`` (one ``bytes.fromhex``
    call when every row is clean)."""
    n, w = win.shape
    try:
        raw = bytes.fromhex(win.tobytes().decode("latin-1"))
    except ValueError:
        raw = b""
    if len(raw) * 2 == n * w:
        return np.frombuffer(raw, dtype=np.uint8).reshape(n, w // 2), np.ones(n, bool)
    return hex_bytes(win)


def slice_frames(fr: Frames, a: int, b: int) -> Frames:
    """Rows ``a:b`` of ``fr`` (the data cut to what those rows use)."""
    if a == 0 and b == len(fr):
        return fr
    starts, ends = fr.starts[a:b], fr.ends[a:b]
    lo = int(starts.min()) if b > a else 0
    hi = int(ends.max()) if b > a else 0
    return Frames(
        source=fr.source, capture_format=fr.capture_format, md_origin=fr.md_origin,
        md=fr.md[a:b], md_big_endian=fr.md_big_endian[a:b], md_codec=fr.md_codec[a:b],
        md_blank=fr.md_blank[a:b], md_version=fr.md_version[a:b], md_valid=fr.md_valid[a:b],
        data=fr.data[lo:hi], starts=starts - lo, ends=ends - lo,
        data_length=fr.data_length[a:b], message_number=fr.message_number[a:b],
        source_offset=fr.source_offset[a:b], source_line=fr.source_line[a:b],
        dlh_reconstructed=fr.dlh_reconstructed[a:b],
        issues={k - a: v for k, v in fr.issues.items() if a <= k < b},
        raw={k - a: v for k, v in fr.raw.items() if a <= k < b},
        unknown={k - a: v for k, v in fr.unknown.items() if a <= k < b},
        data_offset=None if fr.data_offset is None else fr.data_offset[a:b])


def concat_frames(parts: list[Frames]) -> Frames:
    """One :class:`Frames` of the rows of ``parts`` (same source and format), in order."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    shift = np.cumsum([0] + [len(f.data) for f in parts[:-1]])
    rows = np.cumsum([0] + [len(f) for f in parts[:-1]])
    issues, raw, unknown = {}, {}, {}
    for f, r in zip(parts, rows):
        issues.update({k + int(r): v for k, v in f.issues.items()})
        raw.update({k + int(r): v for k, v in f.raw.items()})
        unknown.update({k + int(r): v for k, v in f.unknown.items()})
    cat = np.concatenate
    data_offset = None
    if any(f.data_offset is not None for f in parts):
        data_offset = cat([f.data_offset if f.data_offset is not None
                           else np.full(len(f), -1, np.int64) for f in parts])
    return Frames(
        source=first.source, capture_format=first.capture_format, md_origin=first.md_origin,
        md=cat([f.md for f in parts]), md_big_endian=cat([f.md_big_endian for f in parts]),
        md_codec=cat([f.md_codec for f in parts]), md_blank=cat([f.md_blank for f in parts]),
        md_version=cat([f.md_version for f in parts]), md_valid=cat([f.md_valid for f in parts]),
        data=cat([f.data for f in parts]),
        starts=cat([f.starts + s for f, s in zip(parts, shift)]),
        ends=cat([f.ends + s for f, s in zip(parts, shift)]),
        data_length=cat([f.data_length for f in parts]),
        message_number=cat([f.message_number for f in parts]),
        source_offset=cat([f.source_offset for f in parts]),
        source_line=cat([f.source_line for f in parts]),
        dlh_reconstructed=cat([f.dlh_reconstructed for f in parts]),
        issues=issues, raw=raw, unknown=unknown, data_offset=data_offset)


def rebatch(pieces: Iterable[Frames | None], batch_size: int) -> Iterator[Frames]:
    """Regroup ``pieces`` into :class:`Frames` of exactly ``batch_size`` rows
    (the last one shorter)."""
    held: list[Frames] = []
    count = 0
    for fr in pieces:
        if fr is None or not len(fr):
            continue
        held.append(fr)
        count += len(fr)
        while count >= batch_size:
            take, got = [], 0
            while got < batch_size:
                f = held.pop(0)
                k = min(len(f), batch_size - got)
                take.append(slice_frames(f, 0, k))
                if k < len(f):
                    held.insert(0, slice_frames(f, k, len(f)))
                got += k
            count -= batch_size
            yield concat_frames(take)
    if count:
        yield concat_frames(held)


# ---------------------------------------------------------------------------
# block-at-a-time reading: the frame of the fast text readers
# ---------------------------------------------------------------------------

class TextBlock:
    """Whole lines of a text capture, read a block at a time.

    A format's reader subclasses this: :meth:`find_unit_starts` marks the
    lines where its line-by-line reader always starts afresh ("units": framing
    one never depends on the lines before it), :meth:`fast_units` frames the
    units it can prove well-formed, and :attr:`frame_lines` (the line-by-line
    reader, ``(lines, source, count) -> (Frames, count)``) frames the others.

    Attributes
    ----------
    buf : bytearray
        The block followed by :data:`PAD` (or more) zero bytes; ``p`` is its
        uint8 view and ``n`` the block's length.
    starts, cend : numpy.ndarray of int64
        Per line: first byte, and end of its text (the LF and one CR before it
        removed).
    length : numpy.ndarray of int64
        ``cend - starts``.
    weird : numpy.ndarray of bool
        Lines ending in more than one CR (the line readers remove them all).
    first_words : numpy.ndarray of uint16
        Per line, its first two bytes as a little-endian word (``b0 | b1 << 8``).
    crlf : bool
        Some line of the block ends in CR LF.
    """

    frame_lines = None  # set by subclasses
    capture_format = None  # set by subclasses: "dmpmqmsg", "amqsbcg"
    #: The line reader ignores blank lines (only blanks, tabs and CRs) wherever
    #: they are: a long unit skips runs of them without handing them over.
    blank_lines_ignored = False

    def __init__(self, buf: bytearray, n: int, eof: bool):
        """``buf``: the block's ``n`` bytes followed by at least :data:`PAD`
        zero bytes; ``eof``: the block ends the file."""
        self.buf = buf
        self.n = n
        self.p = p = np.frombuffer(buf, dtype=np.uint8)
        starts, ends, self.first_words, crlf = line_table(buf, n, eof)
        self.nlines = nlines = len(ends)
        self.starts = starts
        self.crlf = crlf
        # (an empty line's byte before its end is the LF before it, or a pad byte)
        cend = ends - (p[ends - 1] == 13) if crlf else ends
        self.cend = cend
        self.length = cend - starts
        self.weird = p[cend - 1] == 13 if crlf else np.zeros(nlines, dtype=bool)
        self.unit_starts = self.find_unit_starts()

    def find_unit_starts(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def fast_units(self, us, ue, cut, source, base_off, base_line):  # pragma: no cover
        """``(fast, frames)``: which units (``[us[i], ue[i])`` lines) are framed
        here, and the :class:`Frames` of those units in order (message
        numbers are filled in by :meth:`frame`)."""
        raise NotImplementedError

    def unit_counts(self, cut: int) -> np.ndarray:
        """How many messages the readers frame from each unit of lines
        ``[0, cut)`` (int64, one per unit start before ``cut``).

        This default frames every unit with the line reader; formats count
        the units they can prove simple without framing them.
        """
        us = self.unit_starts[self.unit_starts < cut]
        return self.count_by_lines(us, np.append(us[1:], cut), np.ones(len(us), dtype=bool))

    def count_by_lines(self, us: np.ndarray, ue: np.ndarray, which: np.ndarray) -> np.ndarray:
        """Messages per unit (lines ``[us[i], ue[i])``), framed by the line
        reader for the units ``which`` (0 for the others)."""
        out = np.zeros(len(us), dtype=np.int64)
        for i in np.flatnonzero(which).tolist():
            lo, hi = self.line_offset(int(us[i])), self.line_offset(int(ue[i]))
            out[i] = type(self).frame_lines(iter_lines(self.buf[lo:hi]), "", 0)[1]
        return out

    def line_offset(self, line: int) -> int:
        return int(self.starts[line]) if line < self.nlines else self.n

    def ascii_lines(self, cut: int) -> np.ndarray:
        """Per line of ``[0, cut)``: True when it holds only ASCII bytes."""
        end = self.line_offset(cut)
        out = np.ones(cut, dtype=bool)
        if not self.buf.isascii() and not self.buf[:end].isascii():
            hi = np.flatnonzero(self.p[:end] >= 0x80)
            out[np.searchsorted(self.starts[:cut], hi, side="right") - 1] = False
        return out

    def frame(self, cut: int, source: str, base_off: int, base_line: int,
              count: int, min_units: int = 0) -> Iterator[Frames]:
        """Frames of lines ``[0, cut)`` (``cut`` is a unit start or the end),
        numbered from ``count + 1``. Blocks of fewer than ``min_units`` units
        go to the line reader whole (the fast reader has a fixed cost)."""
        us = self.unit_starts[self.unit_starts < cut]
        ue = np.append(us[1:], cut)
        if len(us) >= max(min_units, 1):
            fast, fr_fast = self.fast_units(us, ue, cut, source, base_off, base_line)
            assert len(fr_fast) == int(fast.sum()), "fast units and their frames disagree"
        else:
            fast, fr_fast = np.zeros(len(us), dtype=bool), None
        flips = np.flatnonzero(np.diff(fast.astype(np.int8))) + 1
        bounds = np.concatenate([[0], flips, [len(us)]]).tolist()
        row = 0  # next row of fr_fast
        for a, b in zip(bounds[:-1], bounds[1:]):
            if a == b:
                continue
            if fast[a]:
                fr = slice_frames(fr_fast, row, row + b - a)
                fr.message_number = np.arange(count + 1, count + 1 + b - a, dtype=np.int32)
                row += b - a
                count += b - a
            else:
                lo, hi = self.line_offset(int(us[a])), self.line_offset(int(ue[b - 1]))
                fr, count = type(self).frame_lines(
                    iter_lines(self.buf[lo:hi], base_line + int(us[a]) + 1, base_off + lo),
                    source, count)
            yield fr


class _LongUnit:
    """A unit of lines longer than a block: framed by the line reader from
    the file, a line at a time, or, above the size limit
    (:func:`dlqlens.capture.limits.text_limit`), one ``too_large`` row
    without reading it. It stands for a block of lines ``[0, nlines)``
    holding one unit, for :func:`read_blocks` and :func:`plan_text`."""

    def __init__(self, block_type: type, fd: int, begin: int, end: int, nlines: int,
                 limit: int):
        self.block_type = block_type
        self.fd, self.begin, self.end = fd, begin, end
        self.nlines = nlines
        self.limit = limit
        self.unit_starts = np.zeros(1, dtype=np.int64)
        self.starts = np.zeros(1, dtype=np.int64)

    @property
    def too_large(self) -> bool:
        return self.end - self.begin > self.limit

    def line_offset(self, line: int) -> int:
        return 0 if line == 0 else self.end - self.begin

    def _lines(self, number: int, offset: int) -> Iterator[tuple[int, int, str]]:
        skip_blank = self.block_type.blank_lines_ignored
        pos, carry = self.begin, b""
        while pos < self.end or carry:
            chunk = os.pread(self.fd, min(1 << 20, self.end - pos), pos) if pos < self.end \
                else b""
            pos += len(chunk)
            data = bytearray(carry + chunk)
            last = pos >= self.end or not chunk
            lone_cr_to_lf(data, len(data), last)  # as the block reader does
            cut = len(data) if last else data.rfind(b"\n") + 1
            i = 0
            while i < cut:  # pieces of whole lines
                j = data.find(b"\n", min(i + _SPLIT_BYTES, cut) - 1, cut)
                j = cut if j < 0 else j + 1
                piece = data[i:j]
                if skip_blank and not piece.translate(None, b" \t\r\n"):
                    # blank lines only: the line reader skips them
                    number += piece.count(b"\n") + (not piece.endswith(b"\n"))
                else:
                    for item in iter_lines(piece, number, offset + i):
                        yield item
                        number += 1
                i = j
            offset += cut
            carry = data[cut:]
            if last:
                break

    def frame(self, cut: int, source: str, base_off: int, base_line: int,
              count: int, min_units: int = 0) -> Iterator[Frames]:
        if self.too_large:
            from dlqlens.decode.frames import FramesBuilder

            fmt = self.block_type.capture_format
            builder = FramesBuilder(source, fmt, "text")
            head = os.pread(self.fd, min(4096, self.end - self.begin), self.begin)
            builder.add(md=None, number=count + 1, offset=base_off, line=base_line + 1,
                        raw=head, issues=[too_large_issue(
                            source=source, message_number=count + 1,
                            field=f"message text (lines {base_line + 1} to "
                                  f"{base_line + self.nlines})",
                            found=self.end - self.begin, limit=self.limit, offset=base_off,
                            line=base_line + 1, what="bytes of text")])
            yield builder.build()
            return
        fr, _ = self.block_type.frame_lines(self._lines(base_line + 1, base_off), source, count)
        yield fr

    def unit_counts(self, cut: int) -> np.ndarray:
        if self.too_large:
            return np.ones(1, dtype=np.int64)
        _, n = self.block_type.frame_lines(self._lines(1, 0), "", 0)
        return np.array([n], dtype=np.int64)


def _last_line(buf, n: int) -> bytes:
    """The last whole line of ``buf[0:n]`` that is not empty and not a
    ``*`` comment (the lines a format's unit rule looks through), with its
    line end (``b"\\n"`` when there is none): the context that decides
    whether the next line starts a unit."""
    end = n
    while end > 0:
        begin = buf.rfind(b"\n", 0, max(end - _SPLIT_BYTES, 0)) + 1
        piece = bytes(buf[begin:end])
        lines = piece.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        for k in range(len(lines) - 1, -1, -1):
            line = lines[k]
            if line not in (b"", b"\r") and not line.startswith(b"*"):
                return line + b"\n"
        end = begin
    return b"\n"


def _unit_end(fh, block_type: type, block, n: int, stop: int | None,
              chunk_bytes: int) -> tuple[int, int, bool]:
    """Where the unit that begins a block without another unit start ends.

    Reads on from ``fh`` (positioned after the block's ``n`` bytes) a
    window of a quarter of ``chunk_bytes`` at a time, each classified after one line of
    context, until a line starts a unit. Returns ``(bytes, lines, eof)``:
    the unit's length from the block's first byte and its lines, and whether
    it ends the range. Memory: one window, whatever the unit's length.
    """
    whole = block.buf.rfind(b"\n", 0, n) + 1  # bytes of the block's whole lines
    lines = block.nlines
    context = _last_line(block.buf, whole)
    carry = bytes(block.buf[whole:n])
    pos = fh.tell()  # file offset of the byte after ``carry``
    # the window's line 1 is the unit's own first line while no whole line of the
    # block was seen (whole == 0): that start is not the next unit's
    first_next = 2 if whole == 0 else 1
    while True:
        want = max(chunk_bytes // 4, 1)
        ask = want if stop is None else max(0, min(want, stop - pos))
        chunk = fh.read(ask) if ask else b""
        pos += len(chunk)
        eof = not chunk or (stop is not None and pos >= stop)
        data = bytearray(carry + chunk)
        lone_cr_to_lf(data, len(data), eof)  # as the block reader does
        whole_end = len(data) if eof else data.rfind(b"\n") + 1
        if whole_end == 0 and not eof:  # one line longer than the window
            carry = data
            continue
        buf = bytearray(context + data[:whole_end] + _PAD)
        window = block_type(buf, len(context) + whole_end, eof)
        later = window.unit_starts[window.unit_starts >= first_next]
        first_next = 1
        if len(later):
            k = int(later[0])
            return whole + int(window.starts[k]) - len(context), lines + k - 1, eof
        lines += window.nlines - 1
        whole += whole_end
        if eof:
            return whole, lines, True
        context = _last_line(buf, len(context) + whole_end)
        carry = data[whole_end:]


def _blocks(fh, block_type: type, chunk_bytes: int, stop: int | None,
            limit: int | None = None):
    """Blocks of whole units from the current position of ``fh`` up to
    ``stop`` (a unit start or the end of the file; None: the end).

    Yields ``(block, cut, offset, lines)``: frame lines ``[0, cut)`` of
    ``block``, whose byte 0 is ``offset`` bytes and ``lines`` lines after
    where reading began. Each block is cut before its last unit start; the
    rest is read again with the next block. A unit longer than a block (no
    unit start after its first line) is a :class:`_LongUnit`: its end is
    found a window at a time (:func:`_unit_end`) and it is framed from the
    file, so memory stays that of a block (and of the unit's messages)
    however long the unit; above ``limit`` bytes it is not read at all.
    """
    carry = b""
    offset, lines = 0, 0
    base = fh.tell()
    left = None if stop is None else stop - base
    while True:
        ask = chunk_bytes if left is None else min(chunk_bytes, left)
        # read straight into the block's buffer, after what was carried over
        buf = bytearray(len(carry) + ask + PAD)
        buf[:len(carry)] = carry
        got = fh.readinto(memoryview(buf)[len(carry):len(carry) + ask]) if ask else 0
        n = len(carry) + got
        if left is not None:
            left -= got
            eof = left <= 0 or got < ask
        else:
            eof = got < ask
            if eof:  # a short read: make sure it is the end
                rest = fh.read()
                if rest:
                    buf = bytearray(buf[:n] + rest + _PAD)
                    n += len(rest)
        if n == 0:
            return
        lone_cr_to_lf(buf, n, eof)
        block = block_type(buf, n, eof)
        cut = block.nlines if eof else int(block.unit_starts[-1])
        if cut == 0 and not eof:  # one unit longer than the block
            size, nlines, eof = _unit_end(fh, block_type, block, n,
                                          None if stop is None else stop, chunk_bytes)
            del block, buf
            unit = _LongUnit(block_type, fh.fileno(), base + offset, base + offset + size,
                             nlines, limit if limit is not None else 1 << 62)
            yield unit, 1, offset, lines
            offset += size
            lines += nlines
            fh.seek(base + offset)
            left = None if stop is None else stop - base - offset
            carry = b""
            if left is not None and left <= 0 or fh.tell() >= os.fstat(fh.fileno()).st_size:
                return
            continue
        yield block, cut, offset, lines
        cut_at = block.line_offset(cut)
        carry = buf[cut_at:n]
        offset += cut_at
        lines += cut
        if eof:
            return


def read_blocks(path: str, block_type: type, source: str, chunk_bytes: int,
                min_units: int = 0, piece: Slice | None = None,
                max_message_bytes: int = MAX_MESSAGE_BYTES) -> Iterator[Frames]:
    """Frame a text capture a block of about ``chunk_bytes`` at a time.

    Blocks of fewer than ``min_units`` units are read line by line. With
    ``piece`` (from :func:`plan_text`), only its byte range is read, numbered
    from its first message and line. A unit of more text than
    ``max_message_bytes`` allows (:func:`dlqlens.capture.limits.text_limit`)
    is one ``too_large`` row, not read.

    Raises
    ------
    CaptureError
        When the file cannot be opened; or when ``piece`` states how many
        messages it holds and framing it gives another number (a planning
        fault: the message numbers of the slices after it would be wrong).
    """
    start = 0 if piece is None or piece.start is None else piece.start
    stop = None if piece is None else piece.stop
    first_line = 1 if piece is None else piece.first_line
    first = 1 if piece is None else piece.first_number
    count = first - 1
    with _open(path) as fh:
        fh.seek(start)
        limit = text_limit(block_type.capture_format, max_message_bytes)
        for block, cut, off, lines in _blocks(fh, block_type, chunk_bytes, stop, limit):
            for fr in block.frame(cut, source, start + off, first_line - 1 + lines, count,
                                  min_units):
                count += len(fr)
                yield fr
    if piece is not None and piece.messages is not None and count - first + 1 != piece.messages:
        raise CaptureError(
            f"{source}: bytes {start} to {stop}: planned as {piece.messages} message(s) from "
            f"number {first}, framed {count - first + 1}; the message numbers of this file "
            f"would be wrong. Read it without splitting (option splitText false) and "
            f"report the file")


def read_text(path: str, block_type: type, *, source: str | None, piece: Slice | None,
              batch_size: int, fast: bool, chunk_bytes: int,
              min_units: int, max_message_bytes: int = MAX_MESSAGE_BYTES) -> Iterator[Frames]:
    """Frame the messages of a text capture: what ``read_dmpmqmsg`` and
    ``read_amqsbcg`` do, with their format's :class:`TextBlock` subclass.

    Parameters
    ----------
    path : str
    block_type : type
        The format's :class:`TextBlock` subclass: its fast reader, and its
        line-by-line reader as :attr:`TextBlock.frame_lines`.
    source : str or None
        Name recorded in the ``source`` column (None: ``path``).
    piece : Slice or None
        Only this byte range (from :func:`plan_text`; read with the fast
        reader); None: the whole file.
    batch_size : int
        Messages per yielded :class:`~dlqlens.decode.frames.Frames` (the last
        one may hold fewer).
    fast : bool
        Frame the messages the fast reader can prove well-formed with it, a
        block of about ``chunk_bytes`` bytes at a time, and hand every other
        message to the line reader (:func:`read_blocks`; blocks of fewer
        than ``min_units`` units go to the line reader whole). ``False``
        reads every line with the line reader. Both give the same frames.
    chunk_bytes, min_units : int
        The fast reader's block size in bytes, and the fewest units for which
        it frames a block.
    max_message_bytes : int
        Size limit of a message (:mod:`dlqlens.capture.limits`): a unit of
        lines with more text than it allows is one ``too_large`` row, not
        read (with ``fast`` True or a ``piece``; the line reader alone reads
        every line).

    Yields
    ------
    Frames
        ``message_number`` runs on from 1 (from ``piece.first_number``) across
        the batches.

    Raises
    ------
    CaptureError
        When the file cannot be opened, or a piece frames another number of
        messages than planned (see :func:`read_blocks`).
    """
    source = source or path
    if fast or piece is not None:
        pieces = read_blocks(path, block_type, source, chunk_bytes, min_units, piece,
                             max_message_bytes)
    else:
        pieces = iter([block_type.frame_lines(read_lines(path), source, 0)[0]])
    yield from rebatch(pieces, batch_size)


def plan_text(path: str, block_type: type, chunk_bytes: int,
              target_bytes: int, max_message_bytes: int = MAX_MESSAGE_BYTES) -> list[Slice]:
    """Split a text capture into slices of about ``target_bytes`` at unit starts.

    The file is read once, a block at a time: each block's units are found
    and the messages of each counted (:meth:`TextBlock.unit_counts`), so every
    slice knows the number and line of its first message. Files of at most
    ``target_bytes`` are one slice, without reading them.

    Raises
    ------
    CaptureError
        When the file cannot be opened.
    """
    size = os.path.getsize(path)
    if size <= target_bytes:
        return [Slice(path)]
    cuts = [(0, 0, 0)]  # (offset, lines, messages) before each slice
    count = 0
    with _open(path) as fh:
        limit = text_limit(block_type.capture_format, max_message_bytes)
        for block, cut, off, lines in _blocks(fh, block_type, chunk_bytes, None, limit):
            us = block.unit_starts[block.unit_starts < cut]
            per_unit = block.unit_counts(cut)
            before = count + np.concatenate([[0], np.cumsum(per_unit)[:-1]]) if len(us) else \
                np.zeros(0, np.int64)
            at = off + block.starts[us] if len(us) else np.zeros(0, np.int64)
            while True:
                nxt = cuts[-1][0] + target_bytes
                k = int(np.searchsorted(at, nxt))
                if k >= len(us):
                    break
                cuts.append((int(at[k]), lines + int(us[k]), int(before[k])))
            count += int(per_unit.sum())
    out = []
    for (a, la, ca), (b, _, cb) in zip(cuts, cuts[1:] + [(size, 0, count)]):
        out.append(Slice(path, a, b, ca + 1, la + 1, cb - ca))
    return out
