"""amqsbcg output (IBM's browse sample): reader and writer.

Follows ``spec/capture-formats.md`` §2. The reader accepts every layout
people paste: MQ 5 to 9.x headers, ``MQGET of message number N`` with or
without ``, CompCode:c Reason:r``, shell prompts and other text around the
output, ``length - N bytes`` and ``length - N of M bytes`` (a browse that
kept only the first M bytes), the MQ 9.3.4+ ``****Dead Letter Header****``
block (whose 172 bytes are then missing from the hex dump and are rebuilt
from the printed fields, marked ``dlh_reconstructed``), properties blocks,
several messages and several browse runs per file, ``No more messages``,
CRLF line ends and the blank line amqsbcg inserts every 60 lines.

The MQMD is built from the descriptor lines; the message bytes come from the
hex columns of the dump lines (never from the character column). A damaged
dump line keeps its byte positions (bad pairs read as zero, ``bad_hex``), and
missing lines within the stated length are zero-filled (``length_mismatch``),
so the bytes after them are still decoded at their place.

Two readers, one behaviour: the line-by-line reader (``fast=False``) handles
all of the above; the default fast reader frames, a block of the file at a
time with numpy, every message printed exactly as amqsbcg prints it and hands
every other message to the line reader (see "the fast reader" below).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

import numpy as np

from dlqlens.capture.message import MD_DEFAULTS, CaptureMessage, byteorder_of
from dlqlens.capture.scan import IS_HEX, rows_of
from dlqlens.capture.slices import Slice
from dlqlens.capture.text import (PAD, TEXT_CODEC, TextBlock, clean_hex, decimals, decode_line,
                                  hex_values, pack_text_md, plan_text, read_blocks, read_lines,
                                  rebatch, windows)
from dlqlens.decode.frames import Frames, FramesBuilder, labels
from dlqlens.decode.issues import make_issue
from dlqlens.mq.ccsid import UTF16, charset
from dlqlens.mq.constants import OBJECT_NAME
from dlqlens.mq.structs import MQBYTE, MQCHAR, MQDLH, MQLONG, MQMD

_MQGET = re.compile(r"MQGET of message number\s+(\d+)")
_MD_BANNER = "****Message descriptor****"
_MD_BANNER_B = _MD_BANNER.encode("ascii")
_DLH_BANNER = "****Dead Letter Header****"
_PROPS_BANNER = "****Message properties****"
_DATA_BANNER = re.compile(r"^\*{4}\s+Message\s+\*{4}")
_LENGTH = re.compile(r"^\s*length\s*-\s*(\d+)(?:\s+of\s+(\d+))?\s+bytes")
_DUMP = re.compile(r"^\s*([0-9A-Fa-f]{8}):(.*)$")
#: The lines that end a browse: whole lines, so that a dump line whose
#: character column reads "No more messages" (16 bytes of message data) does not
#: end the message it belongs to.
_END = re.compile(r"^\s*(?:No more messages\s*$|\*{4}\s+Summary\s+\*{4}|MQGET \d+, failed)")
_QUOTED = re.compile(r"^\s*(\w+)\s*:\s*'(.*)'\s*$")
_PAIR = re.compile(r"^\s*(\w+)\s*:\s*('(?:[^']*)'|-?\d+)\s+(\w+)\s*:\s*('(?:[^']*)'|-?\d+)\s*$")
_NUMBER = re.compile(r"^\s*(\w+)\s*:\s*(-?\d+)(?:\s*\[(.*)\])?\s*$")
_HEXVAL = re.compile(r"^\s*(\w+)\s*:\s*X'([^']*)'\s*$")
_HEXONLY = re.compile(r"^\s*X'([^']*)'\s*$")

_MD_INT = {f.name for f in MQMD.fields if f.type == MQLONG}
_MD_CHAR = {f.name for f in MQMD.fields if f.type == MQCHAR}
_MD_BYTES = {f.name for f in MQMD.fields if f.type == MQBYTE}


def sniff(head: bytes) -> bool:
    """True when ``head`` looks like amqsbcg output."""
    text = head.decode("latin-1")
    return "AMQSBCG0" in text or _MD_BANNER in text or bool(_MQGET.search(text))


_MQOPEN = re.compile(rb"^ MQOPEN - '([^'\r\n]*)' *\r?$", re.M)


def banner(head: bytes) -> tuple[None, str | None]:
    """``(None, queue)``: the queue amqsbcg browsed, from its ``MQOPEN -
    'name'`` line (``spec/capture-formats.md`` §2; amqsbcg does not print the
    queue manager's name). None when absent or not an MQ object name
    (:data:`dlqlens.mq.constants.OBJECT_NAME`); ``head`` is the start of the
    file, and the first such line counts."""
    m = _MQOPEN.search(head)
    name = m.group(1).decode("latin-1").rstrip() if m else ""
    return None, name if OBJECT_NAME.fullmatch(name) else None


def _values(line: str) -> list[tuple[str, str]]:
    """``(label, value)`` pairs of one descriptor line (quotes removed)."""
    m = _PAIR.match(line)
    if m:
        return [(m.group(1), m.group(2).strip("'")), (m.group(3), m.group(4).strip("'"))]
    m = _HEXVAL.match(line)
    if m:
        return [(m.group(1), "X'" + m.group(2) + "'")]
    m = _QUOTED.match(line)
    if m:
        return [(m.group(1), m.group(2))]
    m = _NUMBER.match(line)
    if m:
        return [(m.group(1), m.group(2))]
    return []


class _Message:
    def __init__(self, number: int, line: int, offset: int):
        self.number, self.line, self.offset = number, line, offset
        self.section = "md"
        self.md: dict[str, tuple[str, int]] = {}
        self.dlh: dict[str, tuple[str, int]] = {}
        self.pending_hex_label: str | None = None
        self.shown: int | None = None
        self.total: int | None = None
        self.hex: list[str] = []
        self.collected = 0
        self.zero_filled = 0
        self.length_bad = False
        self.issues = []
        self.raw_lines: list[str] = []


#: Missing dump lines within a message's stated length are zero-filled so
#: that later bytes keep their place, up to this many bytes per message (256
#: lines); a larger gap is reported and not filled (memory follows the file).
MAX_ZERO_FILL = 4096

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


def plan(path: str, target_bytes: int = 64 * 1024 * 1024) -> list[Slice]:
    """Split an amqsbcg file into :class:`~dlqlens.capture.slices.Slice`
    objects of about ``target_bytes`` (see :func:`dlqlens.capture.text.plan_text`:
    the file is read once to count the messages before each cut)."""
    return plan_text(path, _Block, CHUNK_BYTES, target_bytes)


def read_amqsbcg(path: str, *, source: str | None = None, piece: Slice | None = None,
                 batch_size: int = 65536, fast: bool = True) -> Iterator[Frames]:
    """Frame the messages of an amqsbcg output file.

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
        Frame messages printed exactly as amqsbcg prints them with the
        vectorised reader (default). ``False`` reads every line with the
        line-by-line reader; both give the same frames (the fast reader hands
        every message it cannot prove well-formed to the line reader).

    Yields
    ------
    Frames
        ``source_line`` is the line of ``MQGET of message number`` (or of the
        descriptor banner when that line is missing); ``source_offset`` its
        byte offset.

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
# the line-by-line reader: every layout, every oddity
# ---------------------------------------------------------------------------

def _frame_lines(lines: Iterable[tuple[int, int, str]], source: str,
                 count: int) -> tuple[Frames, int]:
    """Frame the messages of ``lines`` (``(number, offset, text)``), numbered
    from ``count + 1``; returns the frames and the last message number.

    ``lines`` must start at an ``MQGET of message number`` line (or at the
    start of the file).
    """
    builder = FramesBuilder(source, "amqsbcg", "text")
    cur: _Message | None = None
    pending_get: tuple[int, int] | None = None

    def finish(m: _Message):
        nonlocal count
        count += 1
        _emit(builder, m, source, count)

    for number, offset, text in lines:
        stripped = text.strip()
        mget = _MQGET.search(text)
        if mget or stripped == _MD_BANNER:
            if mget:
                if cur is not None:
                    finish(cur)
                    cur = None
                pending_get = (number, offset)
                continue
            if cur is not None:
                finish(cur)
            line, off = pending_get or (number, offset)
            cur = _Message(0, line, off)
            pending_get = None
            continue
        if cur is None:
            continue
        cur.raw_lines.append(text)
        if _END.search(text):
            finish(cur)
            cur = None
            continue
        if cur.section in ("md", "dlh", "props"):
            if stripped == _DLH_BANNER:
                cur.section = "dlh"
                continue
            if stripped == _PROPS_BANNER:
                cur.section = "props"
                continue
            if _DATA_BANNER.match(stripped):
                cur.section = "length"
                continue
            if cur.section == "props":
                continue
            target = cur.md if cur.section == "md" else cur.dlh
            if cur.pending_hex_label:
                m = _HEXONLY.match(text)
                if m:
                    target[cur.pending_hex_label] = ("X'" + m.group(1) + "'", number)
                    cur.pending_hex_label = None
                    continue
            if stripped.endswith(":") and stripped[:-1].strip().isidentifier():
                cur.pending_hex_label = stripped[:-1].strip()
                continue
            for label, value in _values(text):
                target[label] = (value, number)
            continue
        if cur.section == "length":
            m = _LENGTH.match(text)
            if m:
                cur.section = "data"
                shown = int(m.group(1))
                total = int(m.group(2)) if m.group(2) else shown
                if max(shown, total) >= 2**31:  # amqsbcg prints MQLONG lengths
                    cur.issues.append(("length_mismatch", "length line",
                                       "a length of at most 2147483647 bytes (an MQLONG)",
                                       repr(stripped[:60]), number))
                    cur.length_bad = True
                else:
                    cur.shown, cur.total = shown, total
            continue
        if cur.section == "data":
            m = _DUMP.match(text)
            if not m:
                continue
            hex_area = m.group(2).split("'", 1)[0]
            digits = clean_hex(hex_area)
            off = int(m.group(1), 16)
            if off != cur.collected:
                cur.issues.append(("length_mismatch", "dump offset", f"{cur.collected:08X}",
                                   f"{off:08X}", number))
                # missing dump lines (a gap within the stated length): zero-fill
                # them so later bytes keep their place, and report the gap once.
                # Any other offset is itself damaged: the line follows on.
                # The fill is bounded per message (MAX_ZERO_FILL): a stated
                # length in the gigabytes must not make a small file allocate them.
                gap = off - cur.collected
                if cur.collected < off <= (cur.shown or 0) and \
                        cur.zero_filled + gap <= MAX_ZERO_FILL:
                    cur.hex.append("00" * gap)
                    cur.collected = off
                    cur.zero_filled += gap
            if re.fullmatch(r"(?:[0-9A-Fa-f]{2})*", digits) is None:
                # keep the line's byte positions: each pair is a byte, bad pairs 0
                cur.issues.append(("bad_hex", "hex dump", "pairs of hex digits",
                                   repr(hex_area.strip()[:40]), number))
                digits = re.sub(r"[^0-9A-Fa-f]", "0", digits[: len(digits) // 2 * 2])
            cur.hex.append(digits)
            cur.collected += len(digits) // 2
    if cur is not None:
        finish(cur)
    return builder.build(), count


def _int(v: str | None, default: int | None = None) -> int | None:
    if v is None:
        return default
    try:
        n = int(v.strip().strip("'"))
    except ValueError:
        return None
    return n if -2**31 <= n < 2**31 else None  # an MQLONG


def _emit(builder: FramesBuilder, m: _Message, source: str, number: int) -> None:
    issues = []

    def issue(code, field, expected, found, line):
        issues.append(make_issue(code, source=source, message_number=number, field=field,
                                 expected=expected, found=found, line=line))

    for code, field, expected, found, line in m.issues:
        issue(code, field, expected, found, line)
    fields: dict = {}
    for name, (value, line) in m.md.items():
        if name in _MD_BYTES:
            hx = value[2:-1] if value.startswith("X'") else value
            size = MQMD.field(name).length
            try:
                raw = bytes.fromhex(hx)
            except ValueError:
                issue("bad_md_field", f"md.{name}", "hex digits", repr(value), line)
                continue
            if len(raw) > size:
                issue("bad_md_field", f"md.{name}", f"at most {2 * size} hex digits",
                      f"{len(hx)} digits", line)
            fields[name] = raw[:size]
        elif name in _MD_INT:
            v = _int(value)
            if v is None:
                issue("bad_md_field", f"md.{name}", "a decimal number (MQLONG)", repr(value), line)
            else:
                fields[name] = v
        elif name in _MD_CHAR:
            fields[name] = value
    for need in ("Encoding", "CodedCharSetId", "Format"):
        if need not in fields:
            issue("bad_md_field", f"md.{need}", f"a '{need} :' descriptor line", "none",
                  m.line)
    md_ok = "Format" in fields and "Encoding" in fields and "CodedCharSetId" in fields
    try:
        data = b"".join(bytes.fromhex(h) for h in m.hex)
    except ValueError:  # pragma: no cover - hex was validated line by line
        data = b""
    shown = m.shown if m.shown is not None else len(data)
    total = m.total if m.total is not None else shown
    if m.shown is None and m.length_bad:
        pass  # reported where the length was read
    elif m.shown is None:
        issue("data_truncated", "length line", "' length - N bytes' and a hex dump",
              "none", m.line)
    elif len(data) < shown:
        issue("data_truncated", "hex dump", f"{shown} bytes", f"{len(data)} bytes", m.line)
    elif len(data) > shown:
        issue("length_mismatch", "hex dump", f"{shown} bytes", f"{len(data)} bytes", m.line)
    reconstructed = False
    if m.dlh:
        dlh, problems = _dlh_fields(m.dlh)
        for name, value, line in problems:
            issue("bad_md_field", f"dlh.{name}", "a decimal number (MQLONG)", repr(value), line)
        enc = fields.get("Encoding", MD_DEFAULTS["Encoding"])
        cs = charset(fields.get("CodedCharSetId", 819))
        try:
            # the printed fields are text: pack them in the CCSID the DLH is decoded
            # with (UTF-8 included), so that decoding gives the same text back
            header = MQDLH.pack(dlh, byteorder_of(enc),
                                cs.codec if cs.family != UTF16 else "latin-1")
        except (ValueError, UnicodeEncodeError) as exc:
            header = None
            issue("bad_md_field", "dlh", "fields that fit an MQDLH", str(exc), m.line)
        if header is not None:
            data = header + data
            total += len(header)
            reconstructed = True
    md_bytes, version = pack_text_md(fields) if md_ok or fields else (None, 0)
    raw = "\n".join(m.raw_lines).encode("utf-8") if not md_ok else None
    builder.add(md=md_bytes if md_ok else None, big_endian=False, codec="utf-8",
                blank=0x20, version=version, data=data, data_length=max(total, len(data)),
                number=number, offset=m.offset, line=m.line, reconstructed=reconstructed,
                issues=issues, raw=raw)


def _dlh_fields(block: dict) -> tuple[dict, list]:
    out, problems = {}, []
    for f in MQDLH.fields:
        if f.name not in block:
            continue
        value, line = block[f.name]
        if f.type == "MQLONG":
            v = _int(value)
            if v is None:
                problems.append((f.name, value, line))
            else:
                out[f.name] = v
        else:
            out[f.name] = value.rstrip(" ")  # blank padding: pack pads again
    return out, problems


# ---------------------------------------------------------------------------
# the fast reader: messages printed exactly as amqsbcg prints them
# ---------------------------------------------------------------------------
#
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

def _lit(text: str):
    raw = text.encode("ascii")
    return ("lit", np.frombuffer(raw, dtype=np.uint8),
            np.frombuffer(raw, dtype=np.dtype((np.void, len(raw))))[0])


def _pair(a: str, fa: str, b: str, fb: str):
    return [_lit(a), ("int", fa), _lit(b), ("int", fb)]


def _quoted(label: str, name: str, size: int):
    return [_lit(label + "'"), ("q", name, size), _lit("'")]


def _hexline(label: str, name: str, size: int):
    return [_lit(label + "X'"), ("hex", name, size), _lit("'")]


def _qint(label: str, name: str):
    return [_lit(label + "'"), ("int", name), _lit("'")]


_MD_LINES = [
    [_lit("****Message descriptor****")],
    [_lit("  StrucId  : '"), ("q", "StrucId", 4), _lit("'  Version : "), ("int", "Version")],
    _pair("  Report   : ", "Report", "  MsgType : ", "MsgType"),
    _pair("  Expiry   : ", "Expiry", "  Feedback : ", "Feedback"),
    _pair("  Encoding : ", "Encoding", "  CodedCharSetId : ", "CodedCharSetId"),
    _quoted("  Format : ", "Format", 8),
    _pair("  Priority : ", "Priority", "  Persistence : ", "Persistence"),
    _hexline("  MsgId : ", "MsgId", 24),
    _hexline("  CorrelId : ", "CorrelId", 24),
    [_lit("  BackoutCount : "), ("int", "BackoutCount")],
    _quoted("  ReplyToQ       : ", "ReplyToQ", 48),
    _quoted("  ReplyToQMgr    : ", "ReplyToQMgr", 48),
    [_lit("  ** Identity Context")],
    _quoted("  UserIdentifier : ", "UserIdentifier", 12),
    [_lit("  AccountingToken :")],
    _hexline("   ", "AccountingToken", 32),
    _quoted("  ApplIdentityData : ", "ApplIdentityData", 32),
    [_lit("  ** Origin Context")],
    _qint("  PutApplType    : ", "PutApplType"),
    _quoted("  PutApplName    : ", "PutApplName", 28),
    [_lit("  PutDate  : '"), ("q", "PutDate", 8), _lit("'    PutTime  : '"), ("q", "PutTime", 8),
     _lit("'")],
    _quoted("  ApplOriginData : ", "ApplOriginData", 4),
]
_MD_V2_LINES = [
    _hexline("  GroupId : ", "GroupId", 24),
    _qint("  MsgSeqNumber   : ", "MsgSeqNumber"),
    _qint("  Offset         : ", "Offset"),
    _qint("  MsgFlags       : ", "MsgFlags"),
    _qint("  OriginalLength : ", "OriginalLength"),
]
_DLH_LINES = [
    [_lit("****Dead Letter Header****")],
    [_lit("  StrucId  : '"), ("q", "d.StrucId", 4), _lit("'  Version : "), ("int", "d.Version")],
    [_lit("  Reason   : "), ("int", "d.Reason"), _lit(" ["), ("bracket",)],
    _quoted("  DestQName      : ", "d.DestQName", 48),
    _quoted("  DestQMgrName   : ", "d.DestQMgrName", 48),
    _pair("  Encoding : ", "d.Encoding", "  CodedCharSetId : ", "d.CodedCharSetId"),
    _quoted("  Format : ", "d.Format", 8),
    _qint("  PutApplType    : ", "d.PutApplType"),
    _quoted("  PutApplName    : ", "d.PutApplName", 28),
    [_lit("  PutDate  : '"), ("q", "d.PutDate", 8), _lit("'    PutTime  : '"),
     ("q", "d.PutTime", 8), _lit("'")],
]
_DATA_LINES = [[_lit("****   Message      ****")]]
_LENGTH_OF = [_lit(" length - "), ("uint", "shown"), _lit(" of "), ("uint", "total"),
              _lit(" bytes")]
_LENGTH_ONLY = [_lit(" length - "), ("uint", "shown"), _lit(" bytes")]

_MQGET_OF = np.frombuffer(b"MQGET of message number", dtype=np.uint8)
_MD_TEMPLATE = np.frombuffer(pack_text_md({})[0], dtype=np.uint8)
_MD_AT = {f.name: (MQMD.offsets[f.name], f.length, f.type) for f in MQMD.fields}
_DLH_AT = {f.name: (MQDLH.offsets[f.name], f.length, f.type) for f in MQDLH.fields}
_DLH_SIZE = MQDLH.length()
_DUMP_W = 64
#: The 39 columns of a dump line's hex area: which hold digits, and the
#: digit's index (0-31) in the line.
_DIGIT_COL = np.array([(c % 5) != 4 for c in range(39)])
_DIGIT_NO = np.array([c - c // 5 for c in range(39)])
#: The digit columns of a dump line of n bytes (n = 0..16).
_WANT = _DIGIT_COL & (_DIGIT_NO < 2 * np.arange(17)[:, None])


class _Block(TextBlock):
    """A block of amqsbcg output, cut before 'MQGET of message number' lines."""

    def frame(self, cut, source, base_off, base_line, count, min_units=0):
        """:meth:`TextBlock.frame`; a block of a few large messages (at least
        FAST_BLOCK_BYTES) goes to the fast reader however few they are."""
        if self.line_offset(cut) >= FAST_BLOCK_BYTES:
            min_units = min(min_units, 1)
        return super().frame(cut, source, base_off, base_line, count, min_units)

    def find_unit_starts(self) -> np.ndarray:
        # lines holding 'MQGET' (all special to the line reader); those with
        # 'MQGET of message number' + blanks + a digit start units
        pos = _find_all(self.buf, b"MQGET", self.n)
        line = np.searchsorted(self.starts, pos, side="right") - 1
        inside = (line >= 0) & (pos + 5 <= self.cend[np.maximum(line, 0)])
        pos, line = pos[inside], line[inside]
        self.special = np.zeros(self.nlines, dtype=bool)
        self.special[line] = True
        w = windows(self.p, pos, 48)
        is_get = (w[:, :23] == _MQGET_OF).all(axis=1)
        blanks = (w[:, 23:] == 32) | (w[:, 23:] == 9)
        first = np.argmax(~blanks, axis=1)
        r = np.arange(len(pos))
        digit = (w[r, 23 + first] - np.uint8(48)) < 10
        start = is_get & (first > 0) & digit & (pos + 24 + first <= self.cend[line])
        self.mqget = np.zeros(self.nlines, dtype=bool)
        self.mqget[line[start]] = True
        return np.unique(np.concatenate([[0], line[start]])).astype(np.int64)

    def unit_counts(self, cut: int) -> np.ndarray:
        """Messages per unit of lines ``[0, cut)``: the line reader starts a
        message at each descriptor banner line and nowhere else, so a unit
        holds as many messages as banner lines."""
        us = self.unit_starts[self.unit_starts < cut]
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
        p, starts = self.p, self.starts[:cut]
        rend = self.cend[:cut].copy()
        idx = np.flatnonzero((rend > starts) & (p[rend - 1] == 32))
        while len(idx):
            rend[idx] -= 1
            idx = idx[(rend[idx] > starts[idx]) & (p[rend[idx] - 1] == 32)]
        return rend

    def fast_units(self, us, ue, cut, source, base_off, base_line):
        starts = self.starts
        rend = self._trimmed_ends(cut)
        blank = (rend == starts[:cut]) & ~self.weird[:cut]
        content = np.flatnonzero(~blank)
        # the lines holding 'MQGET' (where the line reader may start a message).
        # The other lines that end a message ('No more messages', a summary
        # banner) never match a descriptor template or a dump line, so the
        # checks below reject them wherever they stand
        special = self.special[:cut]
        clean = self.ascii_lines(cut) & ~self.weird[:cut]
        cfirst = np.searchsorted(content, us)
        ncont = np.searchsorted(content, ue) - cfirst
        ok = (ncont >= 2) & self.mqget[us]
        ok[ok] &= content[cfirst[ok]] == us[ok]  # the MQGET line itself
        m = _Matcher(self, rend, content, cfirst, ncont, clean, ok)
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
        # nothing special (an end, another message) inside the descriptor
        csp = np.concatenate([[0], np.cumsum(special[content])])
        nc = len(content)
        ok &= csp[np.minimum(cfirst + m.ci, nc)] - csp[np.minimum(cfirst + 2, nc)] == 0
        # the dump lines
        nd = np.where(ok, (shown + 15) // 16, 0)
        ok &= m.ci + nd <= ncont
        nd = np.where(ok, nd, 0)
        rows = np.flatnonzero(ok)
        first = cfirst + m.ci
        k = _ranks(nd[rows])
        dl = content[np.repeat(first[rows], nd[rows]) + k]
        nbytes = np.minimum(np.repeat(shown[rows], nd[rows]) - 16 * k, 16)
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


def _find_all(buf: bytes, needle: bytes, end: int) -> np.ndarray:
    """Offsets of ``needle`` in ``buf[:end]``, in order (overlapping ones too).

    Searched from the end: ``rfind`` skips ahead by the needle's length where
    ``find`` checks every byte: about twice as fast."""
    out = []
    rfind = buf.rfind
    i = rfind(needle, 0, end)
    while i >= 0:
        out.append(i)
        i = rfind(needle, 0, i + len(needle) - 1)
    out.reverse()
    return np.array(out, dtype=np.int64)


def _ranks(counts: np.ndarray) -> np.ndarray:
    """``0..counts[i]-1`` for every ``i``, concatenated."""
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total) - starts


#: :meth:`_Matcher.lines`: fewer units are matched line by line; lines are
#: judged on a sample of this many units, and put together while this part of
#: the sample prints them all as the first unit does.
_GROUP_MIN = 64
_GROUP_SAMPLE = 64
_GROUP_SAME = 0.75
#: A single line is looked at as a run (units printing it alike) when this
#: part of the sample prints it as the first unit does.
_GROUP_ALIKE = 0.25
#: References tried per run of lines (:meth:`_Matcher._run`).
_MAX_REFS = 8
#: Values of lines matched as a reference, by template and text (of at most
#: _REF_WIDTH bytes: far more than the lines amqsbcg prints; _REF_COUNT of
#: them at most, then forgotten).
_REFERENCES: dict = {}
_REF_WIDTH = 8192
_REF_COUNT = 1024


class _Matcher:
    """Matches the content lines of many units against line templates, the
    units advancing each at its own pace (optional lines)."""

    def __init__(self, block, rend, content, cfirst, ncont, clean, ok):
        self.buf, self.p, self.starts, self.rend = block.buf, block.p, block.starts, rend
        self.content, self.cfirst, self.ncont, self.clean = content, cfirst, ncont, clean
        self.ok = ok
        self.ci = np.zeros(len(ok), dtype=np.int64)
        #: the MQMD of every unit, filled in as its lines are matched
        self.md = np.empty((len(ok), len(_MD_TEMPLATE)), dtype=np.uint8)
        self.md[:] = _MD_TEMPLATE
        self.version = np.ones(len(ok), dtype=np.int32)
        #: other values (length line, DLH fields) of every unit
        self.values: dict[str, np.ndarray] = {}

    def _lines(self, rows, j=0):
        """The content line ``j`` lines after the current one of the units
        ``rows``, and whether the unit has it."""
        ci = self.ci[rows] + j if j else self.ci[rows]
        valid = ci < self.ncont[rows]
        at = np.minimum(self.cfirst[rows] + ci, max(len(self.content) - 1, 0))
        return (self.content[at] if len(self.content) else np.zeros(len(rows), np.int64)), valid

    def probe(self, lit: np.ndarray, after: bool = False) -> np.ndarray:
        """Units whose current line starts with ``lit`` (with ``after``: holds
        ``lit`` after the number that follows ``' length - '``)."""
        rows = np.flatnonzero(self.ok)
        out = np.zeros(len(self.ok), dtype=bool)
        ln, valid = self._lines(rows)
        pos = self.starts[ln]
        if after:  # ' length - N of M bytes': ' of ' after N
            pos = pos + 10
            w = windows(self.p, pos, 12)
            digit = (w - np.uint8(48)) < 10
            nd = np.argmax(~digit, axis=1)
            pos = pos + nd
        w = windows(self.p, pos, len(lit))
        out[rows] = valid & (w == lit).all(axis=1)
        return out

    def lines(self, section, active=None, depth=0):
        """:meth:`line` for each template of ``section`` in turn.

        Units print most lines as many other units do: runs of lines that
        most of a sample of the units print as the first unit does are
        matched as one (:meth:`_run`), and so are single lines that do not
        differ from unit to unit; the rest are matched unit by unit."""
        sel = self.ok if active is None else self.ok & active
        rows = np.flatnonzero(sel)
        if len(rows) < _GROUP_MIN:
            for tokens in section:
                self.line(tokens, active)
            return
        for j0, j1, alike in self._runs(len(section), rows):
            if alike:
                self._run(section[j0:j1], active, depth)
            else:
                self._plain(section[j0], active)

    def _runs(self, count, rows):
        """``(j0, j1, alike)`` runs of the next ``count`` lines of ``rows``:
        lines that most of a sample of the units print as the first unit does
        are put together; ``alike`` is False for a line that most units print
        differently."""
        sample = rows[np.linspace(0, len(rows) - 1, min(len(rows), _GROUP_SAMPLE)).astype(np.int64)]
        # the next count lines of each unit of the sample, compared with the first's
        ci = self.ci[sample][:, None] + np.arange(count)
        valid = ci < self.ncont[sample][:, None]
        ln = self.content[np.minimum(self.cfirst[sample][:, None] + ci, len(self.content) - 1)]
        start = self.starts[ln]
        length = self.rend[ln] - start
        l0 = length[0]
        width = int(min(l0.max(), PAD))
        w = windows(self.p, start.ravel(), width).reshape(len(sample), count, width)
        same = ((w == w[0]) | (np.arange(width) >= l0[:, None])).all(axis=2)
        same &= valid & (length == l0) & (valid[0] & (l0 > 0) & (l0 <= PAD))
        same = same.T
        out = []
        j = 0
        while j < count:
            acc = same[j]
            k = j + 1
            while k < count and (acc & same[k]).mean() >= _GROUP_SAME:
                acc = acc & same[k]
                k += 1
            out.append((j, k, k > j + 1 or acc.mean() >= _GROUP_ALIKE))
            j = k
        return out

    def _run(self, section, active, depth=0):
        """Match the lines ``section`` (see :meth:`lines`): a unit's lines
        that are byte for byte those of a reference unit (the first unit not
        matched yet, its lines matched template by template) take its
        values; a few references are tried, and the units left are matched
        as a section of their own (once), then line by line."""
        sel = self.ok.copy() if active is None else self.ok & active
        rows = np.flatnonzero(sel)
        g = len(section)
        first, _ = self._lines(rows, 0)
        last, valid = self._lines(rows, g - 1)
        start = self.starts[first]
        width = self.rend[last] - start
        # (the trailing blanks and line end of the last line are not compared:
        # they make it unclean or are no part of the text)
        left = valid & self.clean[last]
        for _ in range(_MAX_REFS):
            cand = np.flatnonzero(left)
            if not len(cand):
                break
            r = int(cand[0])
            w0 = int(width[r])
            if w0 > _REF_WIDTH:  # (not remembered: line by line)
                break
            found = self._reference(section, int(start[r]), w0, rows[r:r + 1])
            if found is None:  # the reference fails: its likes with it, line by line
                break
            cand = cand[width[cand] == w0]
            w = rows_of(self.p, start[cand], w0)
            like = cand[w == w[0]]
            rows_like = rows[like]
            for values in found:
                for name, v in values.items():
                    self._store(name, rows_like, v)
            self.ci[rows_like] += g
            left[like] = False
            sel[rows_like] = False
            if len(like) * 8 < len(cand):  # few alike: the rest are likely all different
                break
        if sel.any():
            if depth < 1 and len(section) > 1:
                self.lines(section, sel, depth + 1)
            else:
                for tokens in section:
                    self._plain(tokens, sel)

    def _reference(self, section, start, width, row):
        """The values of the lines ``section`` of the unit ``row`` (which span
        ``width`` bytes from ``start``), template by template; None when one
        does not match. Remembered by the lines' text (a unit's match depends
        on it alone: see :meth:`_run`)."""
        key = (tuple(map(id, section)), bytes(self.buf[start:start + width]))
        found = _REFERENCES.get(key, False)
        if found is not False:
            return found
        found = []
        for j, tokens in enumerate(section):
            ln, valid = self._lines(row, j)
            good, values = self._match(tokens, ln, valid)
            if not good[0]:
                found = None
                break
            for v in values.values():  # shared through the cache: never written
                if isinstance(v, np.ndarray):
                    v.setflags(write=False)
            found.append(values)
        if len(_REFERENCES) >= _REF_COUNT:
            _REFERENCES.clear()
        _REFERENCES[key] = found
        return found

    def _plain(self, tokens, active):
        """:meth:`line` without looking for units that print the line alike."""
        sel = self.ok if active is None else self.ok & active
        rows = np.flatnonzero(sel)
        if not len(rows):
            return
        ln, valid = self._lines(rows)
        good, values = self._match(tokens, ln, valid)
        for name, v in values.items():
            self._store(name, rows, v)
        self.ok[rows] &= good
        self.ci[rows] += 1

    def line(self, tokens, active=None):
        """Match the current line of the ``active`` units (default: all)
        against ``tokens``; units that do not match are no longer ok."""
        sel = self.ok if active is None else self.ok & active
        rows = np.flatnonzero(sel)
        if not len(rows):
            return
        ln, valid = self._lines(rows)
        start = self.starts[ln]
        length = self.rend[ln] - start
        # lines with the same text as the first one are matched once
        same = np.zeros(len(rows), dtype=bool)
        first = np.flatnonzero(valid)
        r0 = int(first[0]) if len(first) else 0
        if len(first) and 0 < length[r0] <= PAD:
            w = rows_of(self.p, start, int(length[r0]))
            same = valid & (length == length[r0]) & (w == w[r0])
            same[r0] = False
        todo = np.flatnonzero(~same)
        good_t, values = self._match(tokens, ln[todo], valid[todo])
        good = np.empty(len(rows), dtype=bool)
        good[todo] = good_t
        i0 = int(np.searchsorted(todo, r0))
        good[same] = good_t[i0]
        rows_todo = rows[todo]
        same_units = None
        if same.any():
            same_units = np.zeros(len(self.ok), dtype=bool)
            same_units[rows[same]] = True
        for name, v in values.items():
            self._store(name, rows_todo, v)
            if same_units is not None:
                self._store_same(name, same_units, v[i0:i0 + 1])
        self.ok[rows] &= good
        self.ci[rows] += 1

    def _match(self, tokens, ln, valid):
        p = self.p
        good = valid & self.clean[ln]
        pos = self.starts[ln].copy()
        end = self.rend[ln]
        r = np.arange(len(ln))
        values = {}
        for tok in tokens:
            kind = tok[0]
            if kind == "lit":
                lit = tok[1]
                good &= rows_of(self.p, pos, len(lit)) == tok[2]
                pos += len(lit)
            elif kind in ("int", "uint"):
                w = windows(self.p, pos, 12)
                digit = (w - np.uint8(48)) < 10
                if kind == "int":
                    digit[:, 0] |= w[:, 0] == 45
                nd = np.argmax(~digit, axis=1)
                nd = np.where(digit[r, nd], 12, nd)
                val, g = decimals(w, nd)
                good &= g
                pos += nd
                values[tok[1]] = val
            elif kind == "q":
                size = tok[2]
                w = windows(self.p, pos, size + 1)
                quote = w == 39
                n = np.argmax(quote, axis=1)
                good &= quote[r, n]
                values[tok[1]] = np.where(np.arange(size) < n[:, None], w[:, :size],
                                          0x20).astype(np.uint8)
                pos += n
            elif kind == "hex":
                size = tok[2]
                raw, g = hex_values(windows(self.p, pos, 2 * size))
                good &= g
                pos += 2 * size
                values[tok[1]] = raw
            else:  # bracket: anything up to a ']' ending the line
                good &= (pos < end) & (p[np.maximum(end - 1, 0)] == 93)
                pos = end.copy()
            good &= pos <= end
            pos = np.minimum(pos, end)
        good &= pos == end
        return good, values

    def _target(self, name, val):
        """Where the values of ``name`` go: a column block of the MQMD (the
        value as its bytes) or a per-unit array of :attr:`values`."""
        if name in _MD_AT:
            at, size, kind = _MD_AT[name]
            if kind == MQLONG:  # at a multiple of 4: one int32 column
                if name == "Version":
                    val = np.where((val == 1) | (val == 2), val, 2)
                return self.md.view("<i4")[:, at // 4], val.astype("<i4")
            return self.md[:, at:at + size], val
        if name not in self.values:
            self.values[name] = np.zeros((len(self.ok),) + val.shape[1:], dtype=val.dtype)
        return self.values[name], val

    def _store(self, name, rows, val):
        """The values ``val`` of the units ``rows``."""
        if name == "Version":
            self.version[rows] = np.where((val == 1) | (val == 2), val, 2)
        target, val = self._target(name, val)
        target[rows] = val

    def _store_same(self, name, units, val):
        """One value ``val`` (a row) for the units where ``units`` is True."""
        if name == "Version":
            np.copyto(self.version, np.where((val == 1) | (val == 2), val, 2), where=units)
        target, val = self._target(name, val)
        np.copyto(target, val, where=units.reshape((-1,) + (1,) * (target.ndim - 1)))


def _dump_lines(p, at, length, nbytes, k):
    """Check dump lines ``'OOOOOOOO:  XXXX XXXX ... 'chars'`` of ``nbytes``
    bytes at offset ``16 * k``: ``(good, hex areas (n, 39))``. The digit
    columns are only checked not to be blanks: the caller's ``bytes.fromhex``
    checks the rest (see :func:`_dump_bytes`).

    Lines exactly as amqsbcg prints them (upper-case offset, hex digits in the
    digit columns, one blank and the quote after the hex area) are recognised
    at once: each line's first 52 bytes, classed by ``bytes.translate``, are
    compared whole with the pattern of its byte count, and its offset with
    the text of ``16 * k``; the other lines get the column checks of
    :func:`_dump_lines_any`."""
    w = windows(p, at, 52)
    cls = np.frombuffer(bytearray(w).translate(_DUMP_CLASS), dtype=np.uint8).reshape(-1, 52)
    # the last line of each message: its own pattern (then made a whole line's)
    part = np.flatnonzero(nbytes != 16)
    std_part = cls[part].view(_V52)[:, 0] == _DUMP_PATTERN[nbytes[part]]
    cls[part] = _DUMP_WHOLE
    if (cls == _DUMP_WHOLE).all():  # (one pass: much faster than row by row)
        std = np.ones(len(at), dtype=bool)
    else:
        std = cls.view(_V52)[:, 0] == _DUMP_PATTERN[16]
    std[part] = std_part
    std &= np.ascontiguousarray(w[:, :8]).view("<u8")[:, 0] == _offset_texts(k)
    std &= length > 51
    good = std
    other = np.flatnonzero(~std)
    if len(other):
        good = std.copy()
        good[other] = _dump_lines_any(p, at[other], length[other], nbytes[other], k[other],
                                      w[other])
    return good, w[:, 11:50]


#: Byte classes of a dump line: hex digits 'x', and ' ', ':', "'" as
#: themselves; anything else '?'.
_DUMP_CLASS = bytes(
    ord("x") if chr(b) in "0123456789ABCDEFabcdef" else b if chr(b) in " :'" else ord("?")
    for b in range(256))
_V52 = np.dtype((np.void, 52))
#: The classes of a dump line's first 52 bytes as amqsbcg prints n bytes (n = 0..16).
_DUMP_PATTERN = np.array(
    [("xxxxxxxx:  " + "".join("x" if want else " " for want in _WANT[n]) + " '").encode()
     for n in range(17)], dtype=_V52)
_DUMP_WHOLE = _DUMP_PATTERN[16:].view(np.uint8)
#: Dump line offsets 16 * k as amqsbcg prints them (8 upper-case hex digits,
#: as little-endian uint64) for the first few k.
_OFFSET_K = 1 << 12


def _offset_words(k: np.ndarray) -> np.ndarray:
    v = (np.asarray(k, dtype=np.int64) * 16)[:, None] >> np.arange(28, -1, -4)
    d = (v & 15).astype(np.uint8)
    return np.ascontiguousarray(np.where(d < 10, d + 48, d + 55)).view("<u8")[:, 0]


_OFFSET_WORDS = _offset_words(np.arange(_OFFSET_K))


def _offset_texts(k: np.ndarray) -> np.ndarray:
    """The offset text of dump lines ``k`` (see :data:`_OFFSET_WORDS`)."""
    if not len(k) or int(k.max()) < _OFFSET_K:
        return _OFFSET_WORDS[k]
    return _offset_words(k)


def _dump_lines_any(p, at, length, nbytes, k, w):
    """:func:`_dump_lines` for any layout: the checks column by column (``w``:
    the lines' first 52 bytes)."""
    off, good = hex_values(np.ascontiguousarray(w[:, :8]))
    good &= (off.astype(np.int64) @ np.array([1 << 24, 1 << 16, 1 << 8, 1])) == 16 * k
    good &= (w[:, 8] == 58) & (w[:, 9] == 32) & (w[:, 10] == 32)
    area = w[:, 11:50]
    good &= ((area != 32) == _WANT[nbytes]).all(axis=1)
    # after the hex area: a blank and the quote of the character column (more
    # blanks in a multi-byte locale)
    quote = (w[:, 50] == 32) & (w[:, 51] == 39) & (51 < length)
    other = np.flatnonzero(good & ~quote)
    if len(other):
        wide = windows(p, at[other] + 50, _DUMP_W - 50) != 32
        q = np.argmax(wide, axis=1)
        r = np.arange(len(other))
        quote[other] = wide[r, q] & (p[at[other] + 50 + q] == 39) & \
            (50 + q < length[other])
    return good & quote


def _dump_bytes(area: np.ndarray, nbytes: np.ndarray):
    """The bytes of the hex areas of dump lines that passed :func:`_dump_lines`,
    concatenated; None when a digit column holds something else than a hex
    digit (then the caller checks line by line with :func:`_hex_columns_ok`)."""
    text = codecs.latin_1_decode(np.ascontiguousarray(area))[0]
    try:
        data = bytes.fromhex(text)
    except ValueError:
        return None
    # fromhex skips blanks: as many bytes as digit columns means none was one
    return np.frombuffer(data, dtype=np.uint8) if len(data) == int(nbytes.sum()) else None


def _hex_columns_ok(area: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
    """Per dump line: every digit column holds a hex digit."""
    return (IS_HEX[area] | ~_WANT[nbytes]).all(axis=1)


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


# ---------------------------------------------------------------------------
# writer
# ---------------------------------------------------------------------------

def _q(v, width: int) -> str:
    return "'" + str(v).ljust(width)[:width] + "'"


def format_message(number: int, m: CaptureMessage, *, dlh_block: bool = False,
                   compcode: bool = True) -> str:
    """The amqsbcg text of one message (``spec/capture-formats.md`` §2.2-2.6).

    Parameters
    ----------
    dlh_block : bool
        Print an MQDLH at the start of the data as MQ 9.3.4+ does (formatted
        block, 172 bytes left out of the dump).
    compcode : bool
        Add ``, CompCode:0 Reason:0`` to the MQGET line (newer releases).
    """
    md = m.full_md()
    out = [" "]
    out.append(f" MQGET of message number {number}" + (", CompCode:0 Reason:0" if compcode else ""))
    out += ["****Message descriptor****", "",
            f"  StrucId  : 'MD  '  Version : {md['Version']}",
            f"  Report   : {md['Report']}  MsgType : {md['MsgType']}",
            f"  Expiry   : {md['Expiry']}  Feedback : {md['Feedback']}",
            f"  Encoding : {md['Encoding']}  CodedCharSetId : {md['CodedCharSetId']}",
            f"  Format : {_q(md['Format'], 8)}",
            f"  Priority : {md['Priority']}  Persistence : {md['Persistence']}",
            f"  MsgId : X'{bytes(md['MsgId']).hex().upper().ljust(48, '0')}'",
            f"  CorrelId : X'{bytes(md['CorrelId']).hex().upper().ljust(48, '0')}'",
            f"  BackoutCount : {md['BackoutCount']}",
            f"  ReplyToQ       : {_q(md['ReplyToQ'], 48)}",
            f"  ReplyToQMgr    : {_q(md['ReplyToQMgr'], 48)}",
            "  ** Identity Context",
            f"  UserIdentifier : {_q(md['UserIdentifier'], 12)}",
            "  AccountingToken : ",
            f"   X'{bytes(md['AccountingToken']).hex().upper().ljust(64, '0')}'",
            f"  ApplIdentityData : {_q(md['ApplIdentityData'], 32)}",
            "  ** Origin Context",
            f"  PutApplType    : '{md['PutApplType']}'",
            f"  PutApplName    : {_q(md['PutApplName'], 28)}",
            f"  PutDate  : {_q(md['PutDate'], 8)}    PutTime  : {_q(md['PutTime'], 8)}",
            f"  ApplOriginData : {_q(md['ApplOriginData'], 4)}", ""]
    if md["Version"] >= 2:
        out += [f"  GroupId : X'{bytes(md['GroupId']).hex().upper().ljust(48, '0')}'",
                f"  MsgSeqNumber   : '{md['MsgSeqNumber']}'",
                f"  Offset         : '{md['Offset']}'",
                f"  MsgFlags       : '{md['MsgFlags']}'",
                f"  OriginalLength : '{md['OriginalLength']}'"]
    data = m.data
    if dlh_block and md["Format"].rstrip() == "MQDEAD" and data[:4] in (b"DLH ", b"\xc4\xd3\xc8\x40") \
            and len(data) >= MQDLH.length():
        cs = charset(md["CodedCharSetId"])
        d = MQDLH.unpack(data, byteorder_of(md["Encoding"]), cs.codec)
        from dlqlens.mq.constants import code_name

        out += ["", "****Dead Letter Header****", "",
                f"  StrucId  : 'DLH '  Version : {d['Version']}",
                f"  Reason   : {d['Reason']} [{code_name(d['Reason'])}]",
                f"  DestQName      : {_q(d['DestQName'], 48)}",
                f"  DestQMgrName   : {_q(d['DestQMgrName'], 48)}",
                f"  Encoding : {d['Encoding']}  CodedCharSetId : {d['CodedCharSetId']}",
                f"  Format : {_q(d['Format'], 8)}",
                f"  PutApplType    : '{d['PutApplType']}'",
                f"  PutApplName    : {_q(d['PutApplName'], 28)}",
                f"  PutDate  : {_q(d['PutDate'], 8)}    PutTime  : {_q(d['PutTime'], 8)}"]
        data = data[MQDLH.length():]
    out += [" ", "****   Message      ****", " ", f" length - {len(data)} of {len(data)} bytes", " "]
    for off in range(0, len(data), 16):
        chunk = data[off:off + 16]
        groups = " ".join(chunk[i:i + 2].hex().upper() for i in range(0, len(chunk), 2))
        chars = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        out.append(f"{off:08X}:  {groups.ljust(39)} '{chars.ljust(16)}'")
    return "\n".join(out) + "\n"


def write_amqsbcg(path, messages: Iterable[CaptureMessage], *, queue: str = "SYSTEM.DEAD.LETTER.QUEUE",
                  dlh_block: bool = False, newline: str = "\n") -> int:
    """Write amqsbcg output for ``messages``; returns how many were written.

    ``dlh_block=True`` writes the MQ 9.3.4+ layout (formatted MQDLH block and
    a summary), otherwise the older layout (MQDLH inside the dump).
    """
    n = 0
    sizes = []
    with open(path, "w", encoding="utf-8", newline=newline) as fh:
        fh.write(f"\nAMQSBCG0 - starts here\n**********************\n \n MQOPEN - '{queue}'\n \n")
        for m in messages:
            n += 1
            fh.write(format_message(n, m, dlh_block=dlh_block))
            sizes.append(len(m.data))
        fh.write(" \n \n \n No more messages \n")
        if dlh_block:
            fh.write("\n****   Summary      ****\n")
            if sizes:
                fh.write(f" {n} messages browsed.\n Smallest message {min(sizes)} bytes.\n"
                         f" Largest message {max(sizes)} bytes.\n"
                         f" Average message {sum(sizes) // len(sizes)} bytes.\n")
        fh.write("\n MQCLOSE\n MQDISC\n")
    return n


_Block.frame_lines = staticmethod(_frame_lines)
