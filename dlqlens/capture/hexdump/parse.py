"""Hex dumps as people paste them: text to the bytes of each record.

Each parser takes the text of a file (decoded as latin-1, so every byte is a
character and offsets are byte offsets) and returns :class:`HexRecord`
objects: the bytes recovered, the line the record starts on, and what is
known not to have been captured (a record cut by the screen, lines missing
from a dump). Nothing here knows MQ; :mod:`dlqlens.capture.hexdump` hands the
bytes to the MQ decoding every reader shares.

Layouts (``LAYOUTS``):

``ispf``
    ISPF browse, view or edit with ``HEX ON`` (z/OS ISPF User's Guide Vol II,
    "HEX—display data in hexadecimal format", VERT, the default): three
    lines per record, the characters, then the zone (high) nibbles, then the
    numeric (low) nibbles, one column per byte; view and edit put a 6-digit
    sequence number (or ``******``) and a blank before the characters and
    indent the hex lines by 7; browse has no such field. The ``----+----1``
    column ruler, ``Top of Data``/``Bottom of Data`` lines, dashed separator
    lines, the panel's title (``Columns 00001 00072`` or ``Col 001 080``,
    which says where the screen starts), ``Command ===>`` and ``==MSG>`` lines
    are skipped. Screens scrolled right (the title or ruler says from which
    column) are joined to the record of the same sequence number.
``xxd``
    ``00000000: 4d44 2020 0200 0000 ...  MD  ....`` (any grouping, ``-u``).
``hexdump-c``
    ``hexdump -C``: ``00000000  4d 44 20 20 ...  |MD  ....|``, a ``*`` for
    repeated lines, the total length alone on the last line.
``od``
    ``od -A x -t x1z``: ``000000 4d 44 20 20 ... >MD  ....<``, ``*``, the total
    length alone on the last line.
``hex-stream``
    A plain hex string, one long line or wrapped, upper or lower case, with or
    without an offset before each line (``0000: ``, ``0x0010 ``), or the
    longest hex run of a log line (Wireshark's "Copy as hex stream", an XSLT
    ``dp:radix-convert``, a gateway's log).

A dump whose offsets go back to 0, or text that is not dump lines between
dumps, starts a new record. Lines missing inside a dump (an offset that
jumps) end the record there: what comes after is not captured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

LAYOUTS = ("ispf", "xxd", "hexdump-c", "od", "hex-stream")
#: Most bytes one ``*`` line of ``hexdump -C`` or ``od`` may stand for: a
#: repeat up to an offset further on is read as lines missing (the record is
#: cut there), not filled, so a damaged offset cannot make gigabytes.
MAX_REPEAT = 16 * 1024 * 1024


@dataclass
class HexRecord:
    """The bytes of one record recovered from a dump.

    Attributes
    ----------
    data : bytes
    line : int
        1-based line of the record's first line.
    offset : int
        Byte offset of that line in the file.
    cut : str or None
        Why bytes after ``data`` may exist that the dump does not hold (the
        screen's last column, lines missing); None when the dump shows the
        record's end.
    cut_line : int
        The line ``cut`` is about (-1: none).
    stated_length : int or None
        The record's length the dump states (the closing offset of
        ``hexdump -C`` and ``od``).
    bad : list of (line, str)
        Lines of the record whose hex could not be read (what was found);
        the record is then kept as text, not decoded.
    text : str
        The record's lines as found (kept for a record that is not decoded).
    """

    data: bytes
    line: int
    offset: int
    cut: str | None = None
    cut_line: int = -1
    stated_length: int | None = None
    bad: list[tuple[int, str]] = field(default_factory=list)
    text: str = ""


def _lines(text: str) -> list[tuple[int, int, str]]:
    """``(line number, byte offset, line without its end)``: LF, CR LF or CR."""
    out = []
    pos = 0
    no = 0
    for piece in text.split("\n"):
        n = len(piece) + 1
        if "\r" in piece:
            parts = piece.split("\r")
            if parts[-1] == "":  # CR LF
                parts.pop()
                parts[-1] += ""
            p = pos
            for k, part in enumerate(parts):
                no += 1
                out.append((no, p, part))
                p += len(part) + 1
        else:
            no += 1
            out.append((no, pos, piece))
        pos += n
    if out and out[-1][2] == "" and text.endswith(("\n", "\r")):
        out.pop()
    return out


_HEX = re.compile(r"[0-9A-Fa-f]+\Z")

# ---------------------------------------------------------------------------
# offset dumps: xxd, hexdump -C, od -A x -t x1z
# ---------------------------------------------------------------------------

_XXD = re.compile(r"(?P<off>[0-9a-fA-F]{8,16}): (?P<hex>(?:[0-9a-fA-F]{2})+(?: [0-9a-fA-F]{2,})*)"
                  r"(?:  +(?P<asc>.*))?\Z")
_HD = re.compile(r"(?P<off>[0-9a-f]{8})  (?P<hex>[0-9a-fA-F]{2}(?: {1,2}[0-9a-fA-F]{2})*)"
                 r"(?: *\|(?P<asc>.*)\|)?\s*\Z")
_OD = re.compile(r"(?P<off>[0-9a-f]{6,16})(?P<hex>(?: [0-9a-f]{2})+)(?: *>(?P<asc>.*)<)?\s*\Z")
_END = {"hexdump-c": re.compile(r"(?P<off>[0-9a-f]{8})\s*\Z"),
        "od": re.compile(r"(?P<off>[0-9a-f]{6,16})\s*\Z")}
_LINE = {"xxd": _XXD, "hexdump-c": _HD, "od": _OD}


def dump_line(layout: str, line: str) -> re.Match | None:
    """The match of one dump line of ``layout`` (xxd, hexdump-c, od), or None."""
    return _LINE[layout].match(line.strip())


_FAST = {
    "xxd": re.compile(r"[ \t]*([0-9a-fA-F]{8,16}): ((?:[0-9a-fA-F]{2})+(?: [0-9a-fA-F]{2,})*)"
                      r"(?:  +.*)?\Z"),
    "hexdump-c": re.compile(r"[ \t]*([0-9a-f]{8})  ([0-9a-fA-F]{2}(?: {1,2}[0-9a-fA-F]{2})*)"
                            r"(?: *\|.*\|)?[ \t\r]*\Z"),
    "od": re.compile(r"[ \t]*([0-9a-f]{6,16})((?: [0-9a-f]{2})+)(?: *>.*<)?[ \t\r]*\Z"),
}
_FAST_END = re.compile(r"[ \t]*([0-9a-f]{6,16})[ \t\r]*\Z")


_LUT = np.full(256, 255, dtype=np.uint8)
for _k, _c in enumerate("0123456789abcdef"):
    _LUT[ord(_c)] = _LUT[ord(_c.upper())] = _k
_HEXDIGITS = frozenset("0123456789abcdefABCDEF")
#: The delimiters of the text column, which a full line must have where the
#: first full line has them.
_DELIMS = {"xxd": "", "hexdump-c": "|", "od": "><"}


def _template(line: str, layout: str):
    """Where a full (16-byte) line of this dump has its offset digits, hex
    digits and separators, from its first full line; None if it is not one."""
    m = _FAST[layout].match(line)
    if m is None:
        return None
    hexpos = [i for i in range(m.start(2), m.end(2)) if line[i] in _HEXDIGITS]
    if len(hexpos) != 32:
        return None
    keep = set(hexpos)
    lit = [i for i in range(m.start(1), m.end(2)) if i not in keep and not
           (m.start(1) <= i < m.end(1))]
    delims = [i for i in range(m.end(2), len(line)) if line[i] in _DELIMS[layout]]
    # the blanks between the hex and the text column, which the line parser
    # requires to be blanks (xxd: the two its pattern names; the text column
    # itself may begin with blanks)
    gap_end = min(m.end(2) + 2, len(line)) if layout == "xxd" else (
        delims[0] if delims else m.end(2))
    lit += list(range(m.end(2), gap_end)) + delims
    return (np.arange(m.start(1), m.end(1)), np.array(hexpos), np.array(lit, dtype=np.int64),
            np.frombuffer(line.encode("latin-1"), np.uint8)[lit] if lit else np.zeros(0, np.uint8),
            len(line))


def _fast_offset_dump(text: str, layout: str) -> list[HexRecord] | None:
    """The records of a regular dump, its full 16-byte lines read with numpy
    at the columns its first full line shows (offset and hex digits checked
    against a lookup table, separators compared), the other lines (each
    dump's last, ``*`` repeats, closing totals) one by one; None when
    anything is irregular (other text, an offset out of step, a line ended by
    a CR alone, bad hex): the line-by-line parser then reads it and says
    where."""
    if "\r" in text and "\r" in text.replace("\r\n", ""):
        return None
    lines = text.split("\n")
    tpl = None
    for ln in lines[:4]:
        tpl = _template(ln.rstrip("\r"), layout)
        if tpl is not None:
            break
    buf = np.frombuffer(text.encode("latin-1"), np.uint8)
    nl = np.flatnonzero(buf == 10)
    st = np.concatenate(([0], nl + 1)).astype(np.int64)
    en = np.concatenate((nl, [buf.size])).astype(np.int64)
    cr = (en > st) & (buf[np.maximum(en - 1, 0)] == 13) if buf.size else np.zeros(len(st), bool)
    length = en - cr - st
    full = np.zeros(len(st), dtype=bool)
    full_bytes = np.zeros((0, 16), np.uint8)
    full_at = np.zeros(0, np.int64)
    if tpl is not None:
        offpos, hexpos, litpos, litval, width = tpl
        cand = np.flatnonzero(length == width)
        nib = _LUT[buf[st[cand, None] + hexpos[None, :]]]
        offn = _LUT[buf[st[cand, None] + offpos[None, :]]]
        ok = (nib != 255).all(1) & (offn != 255).all(1)
        if len(litpos):
            ok &= (buf[st[cand, None] + litpos[None, :]] == litval[None, :]).all(1)
        full[cand[ok]] = True
        nib = nib[ok]
        full_bytes = (nib[:, 0::2] << 4) | nib[:, 1::2]
        weights = 16 ** np.arange(len(offpos) - 1, -1, -1, dtype=np.int64)
        full_at = offn[ok].astype(np.int64) @ weights
    full_row = np.full(len(st), -1, dtype=np.int64)
    full_row[full] = np.arange(int(full.sum()))
    # the other lines, in order: (line, offset, bytes) entries, ends, repeats
    pat = _FAST[layout]
    has_end = layout in _END
    entry_line, entry_at, entry_n = [], [], []
    short: dict[int, bytes] = {}
    ends, end_after = [], []
    star = False
    last = -1
    for i in np.flatnonzero(~full).tolist():  # full lines in between, as ranges
        if i - last > 1:  # full lines last+1 .. i-1
            rows = full_row[last + 1:i]
            if star:  # a '*' followed by a full line
                if not _repeat(entry_line, entry_at, entry_n, short, int(full_at[rows[0]]),
                               full_bytes, full_row):
                    return None
                star = False
            entry_line.extend(range(last + 1, i))
            entry_at.extend(full_at[rows].tolist())
            entry_n.extend([16] * len(rows))
        last = i
        ln = lines[i].rstrip("\r") if i < len(lines) else ""
        s_ = ln.strip()
        if not s_:
            continue
        m = pat.match(ln)
        if m is not None:
            try:
                b = bytes.fromhex(m.group(2))
            except ValueError:
                return None
            at = int(m.group(1), 16)
            if star:
                if not _repeat(entry_line, entry_at, entry_n, short, at, full_bytes, full_row):
                    return None
                star = False
            entry_line.append(i)
            entry_at.append(at)
            entry_n.append(len(b))
            short[i] = b
            continue
        if s_ == "*" and has_end and not star and entry_line:
            star = True
            continue
        e = _FAST_END.match(ln) if has_end else None
        if e is None:
            return None
        at = int(e.group(1), 16)
        if star:
            if not _repeat(entry_line, entry_at, entry_n, short, at, full_bytes, full_row):
                return None
            star = False
        ends.append(at)
        end_after.append(len(entry_line))
    if len(st) - 1 > last:
        rows = full_row[last + 1:]
        if star:
            if not _repeat(entry_line, entry_at, entry_n, short, int(full_at[rows[0]]),
                           full_bytes, full_row):
                return None
            star = False
        entry_line.extend(range(last + 1, len(st)))
        entry_at.extend(full_at[rows].tolist())
        entry_n.extend([16] * len(rows))
    if star or not entry_line:
        return None
    at = np.array(entry_at, dtype=np.int64)
    nbytes = np.array(entry_n, dtype=np.int64)
    starts = np.flatnonzero(at == 0)
    if not len(starts) or starts[0] != 0:
        return None
    cum = np.zeros(len(at) + 1, dtype=np.int64)
    np.cumsum(nbytes, out=cum[1:])
    rec = np.cumsum(at == 0) - 1
    if not (at == cum[:-1] - cum[starts][rec]).all():
        return None
    bounds = np.append(cum[starts], cum[-1])
    sizes = np.diff(bounds)
    if has_end and (ends != sizes.tolist() or end_after != np.append(starts[1:], len(at)).tolist()):
        return None
    # the bytes, in entry order: full lines placed at once, the others one by one
    data = np.empty(int(cum[-1]), dtype=np.uint8)
    eline = np.array(entry_line, dtype=np.int64)
    is_full = (eline >= 0) & full[np.maximum(eline, 0)]  # short lines are never full
    fsel = np.flatnonzero(is_full)
    if len(fsel):
        data[cum[fsel][:, None] + np.arange(16)[None, :]] = full_bytes[full_row[eline[fsel]]]
    for k in np.flatnonzero(~is_full).tolist():
        b = short[entry_line[k]]
        data[cum[k]:cum[k] + len(b)] = np.frombuffer(b, np.uint8)
    raw_data = data.tobytes()
    first = eline[starts]
    return [HexRecord(raw_data[int(bounds[j]):int(bounds[j + 1])], int(first[j]) + 1,
                      int(st[first[j]]), stated_length=int(sizes[j]) if has_end else None)
            for j in range(len(starts))]


def _repeat(entry_line, entry_at, entry_n, short, to, full_bytes, full_row) -> bool:
    """Expand a ``*`` line: the entry before it repeats up to offset ``to``;
    added as one entry (keyed by a negative line number) holding the repeats."""
    line, at, n = entry_line[-1], entry_at[-1], entry_n[-1]
    gap = to - at - n
    if n == 0 or gap <= 0 or gap % n or gap > MAX_REPEAT:
        return False
    prev = short[line] if line in short else full_bytes[full_row[line]].tobytes()
    key = -len(short) - 1
    while key in short:
        key -= 1
    short[key] = prev * (gap // n)
    entry_line.append(key)
    entry_at.append(at + n)
    entry_n.append(gap)
    return True


def parse_offset_dump(text: str, layout: str) -> list[HexRecord]:
    """Records of an ``xxd``, ``hexdump -C`` or ``od -A x -t x1z`` dump."""
    fast = _fast_offset_dump(text, layout)
    if fast is not None:
        return fast
    pat, end = _LINE[layout], _END.get(layout)
    out: list[HexRecord] = []
    cur: HexRecord | None = None
    buf = bytearray()
    expect = 0
    repeat = False  # a '*' line: the previous line repeats up to the next offset
    prev = b""
    lines = []

    def close():
        nonlocal cur, buf
        if cur is not None:
            cur.data = bytes(buf)
            cur.text = "\n".join(lines)
            if layout in _END and cur.stated_length is None and cur.cut is None:
                cur.cut = (f"the dump ends at offset {len(buf)} without its closing offset "
                           f"line: bytes after it, if any, were not captured")
            out.append(cur)
        cur, buf = None, bytearray()
        lines.clear()

    for no, off, raw_line in _lines(text):
        s = raw_line.strip()
        if s == "*" and cur is not None:
            repeat = True
            lines.append(raw_line)
            continue
        m = pat.match(s)
        if m is None and end is not None:
            e = end.match(s)
            if e is not None and cur is not None:
                total = int(e.group("off"), 16)
                if repeat and prev and expect < total <= expect + MAX_REPEAT and cur.cut is None:
                    fill = (prev * ((total - expect) // len(prev) + 1))[:total - expect]
                    buf += fill
                    expect = total
                repeat = False
                if total == expect and cur.cut is None:
                    cur.stated_length = total
                else:
                    if cur.cut is None:
                        cur.cut = (f"the closing offset says {total} bytes, the lines hold "
                                   f"{expect}: bytes between were not captured")
                        cur.cut_line = no
                    cur.stated_length = total if total > len(buf) else None
                lines.append(raw_line)
                close()
                continue
        if m is None:
            if s and cur is not None and _looks_hexish(s):
                cur.bad.append((no, s[:60]))
                lines.append(raw_line)
                continue
            close()  # any other text ends a dump
            repeat = False
            continue
        at = int(m.group("off"), 16)
        hexs = m.group("hex")
        try:
            chunk = bytes.fromhex(hexs)  # blanks between the digits are allowed
        except ValueError:
            chunk = None
        if at == 0 and cur is not None:
            close()
        if cur is None:
            cur = HexRecord(b"", no, off)
            expect = 0
            repeat = False
            if at != 0:
                cur.cut = f"the dump starts at offset {at}: the bytes before it were not captured"
                cur.cut_line = no
                close()
                cur = HexRecord(b"", no, off)
                cur.bad.append((no, f"a dump line at offset {at:#x} with no line at offset 0"))
        lines.append(raw_line)
        if chunk is None:
            cur.bad.append((no, hexs[:60]))
            continue
        if repeat and prev and expect < at <= expect + MAX_REPEAT and cur.cut is None:
            fill = (prev * ((at - expect) // len(prev) + 1))[:at - expect]
            buf += fill
            expect = at
        repeat = False
        if at != expect and cur.cut is None:
            cur.cut = (f"line {no} is at offset {at}, the lines before end at offset "
                       f"{expect}: lines are missing; the record is read up to offset {expect}")
            cur.cut_line = no
        if cur.cut is None:
            buf += chunk
            expect += len(chunk)
            prev = chunk
    close()
    return out


def _looks_hexish(s: str) -> bool:
    """A line that tries to be a dump line (an offset then hex) but is not one."""
    return bool(re.match(r"[0-9a-fA-F]{4,16}[: ]", s))


# ---------------------------------------------------------------------------
# a plain hex stream
# ---------------------------------------------------------------------------

_STREAM_OFFSET = re.compile(r"\s*(?:0x)?(?P<off>[0-9A-Fa-f]{1,16})(?::\s*|\s+)(?=[0-9A-Fa-f])")
_RUN = re.compile(r"[0-9A-Fa-f](?:[ ]?[0-9A-Fa-f]){15,}")


def stream_hex(line: str) -> tuple[int | None, str] | None:
    """``(offset or None, hex digits)`` of one line of a hex stream, or None.

    A line that is hex alone (blanks between byte pairs allowed), or an offset
    then hex, or text holding a run of at least 16 hex digits (the longest is
    taken: a log line).
    """
    s = line.strip()
    if not s:
        return None
    compact = s.replace(" ", "")
    if _HEX.match(compact):  # an odd count is the caller's bad hex, not a cut digit
        return None, compact
    m = _STREAM_OFFSET.match(s)
    if m is not None:
        rest = s[m.end():].replace(" ", "")
        if _HEX.match(rest):
            return int(m.group("off"), 16), rest
    runs = [r.group(0).replace(" ", "") for r in _RUN.finditer(s)]
    if runs:
        best = max(runs, key=len)
        if len(best) >= 16:
            return None, best
    return None


_ONLY_HEX = re.compile(r"[0-9A-Fa-f \t\n]*\Z")


def _fast_stream(text: str, starts_record) -> list[HexRecord] | None:
    """A stream of hex lines alone (no offsets, no other text, LF line ends),
    records separated by blank lines or starting with an MQ structure; None
    for anything else (the line-by-line parser reads it)."""
    if not _ONLY_HEX.match(text):
        return None
    out = []
    pos, line = 0, 1
    for block in text.split("\n"):
        if block.strip():
            compact = block.replace(" ", "").replace("\t", "")
            if len(compact) % 2:
                return None
            b = bytes.fromhex(compact)
            if out and out[-1][3] and not (starts_record is not None
                                           and starts_record(b[:16])):
                out[-1][0].append(b)
            else:
                out.append([[b], line, pos, True])
        elif out:
            out[-1][3] = False  # a blank line ends the record
        pos += len(block) + 1
        line += 1
    return [HexRecord(b"".join(parts), ln, p) for parts, ln, p, _ in out]


def parse_stream(text: str, starts_record=None) -> list[HexRecord]:
    """Records of a plain hex stream.

    ``starts_record(first_bytes) -> bool`` says whether a line's bytes begin
    a new record (an MQ StrucId and Version): a wrapped stream's next line
    continues the record unless it does, or unless an offset of 0, a blank
    line or other text comes first.
    """
    fast = _fast_stream(text, starts_record)
    if fast is not None:
        return fast
    out: list[HexRecord] = []
    cur: HexRecord | None = None
    parts: list[str] = []
    expect = 0

    def close():
        nonlocal cur
        if cur is not None:
            cur.data = bytes.fromhex("".join(parts))
            out.append(cur)
        cur = None
        parts.clear()

    for no, off, raw_line in _lines(text):
        got = stream_hex(raw_line)
        if got is None:
            close()
            continue
        at, hexs = got
        try:
            b0 = bytes.fromhex(hexs[:16])
        except ValueError:  # an odd count of digits in a short line
            b0 = b""
        new = cur is None or at == 0 or (starts_record is not None and at is None
                                         and starts_record(b0))
        if new:
            close()
            cur = HexRecord(b"", no, off, text=raw_line)
            expect = 0
            if at not in (None, 0):
                cur.cut = f"the stream starts at offset {at}: the bytes before it were not captured"
                cur.cut_line = no
        elif at is not None and at != expect and cur.cut is None:
            cur.cut = (f"line {no} is at offset {at}, the lines before end at offset "
                       f"{expect}: lines are missing; the record is read up to offset {expect}")
            cur.cut_line = no
        if cur.cut is not None and not new:
            continue
        if len(hexs) % 2:
            cur.bad.append((no, f"{len(hexs)} hex digits (an odd count): {hexs[:40]}"))
            cur.text += "\n" + raw_line if cur.text != raw_line else ""
            continue
        parts.append(hexs)
        expect += len(hexs) // 2
    close()
    return out


# ---------------------------------------------------------------------------
# ISPF HEX ON
# ---------------------------------------------------------------------------

_ISPF_SEQ = re.compile(r"(?P<seq>\d{6}|\*{6}|'''''') ")
_ISPF_TOP = re.compile(r"\*+\s*(?:Top|Bottom|End) of Data\s*\*+", re.I)
_ISPF_RULER = re.compile(r"(?:=COLS> ?|\s*)(?P<r>[-+0-9]*-{3,}\+[-+0-9]*)\s*\Z")
_ISPF_COLS = re.compile(r"\bCol(?:umns?)?\s+(?P<a>\d{1,5})\s+(?P<b>\d{1,5})\b", re.I)
_ISPF_NOISE = re.compile(r"\s*(?:Command ===>|Scroll ===>|==MSG>|=PROF>|==CHG>|-{10,}\s*\Z)")


def ispf_markers(text: str) -> int:
    """How many lines of ``text`` are ISPF's own (ruler, Top/Bottom of Data)."""
    return sum(1 for _, _, ln in _lines(text)
               if _ISPF_TOP.search(ln) or _ISPF_RULER.match(ln))


def parse_ispf(text: str, width: int | None = None) -> list[HexRecord]:
    """Records of an ISPF browse/view/edit screen (or screens) with HEX ON.

    ``width`` is the number of data columns the screen shows; by default the
    ruler's length, else the title's columns, else 72 (view, edit) or 80
    (browse). A record whose hex lines fill the last column is cut: the rest
    of it was not on the screen.
    """
    lines = _lines(text)
    recs: dict[str, HexRecord] = {}
    order: list[str] = []
    shown: dict[str, list[tuple[int, bytes]]] = {}
    col0 = 1  # the column the screen starts at
    scr_width = width
    browse_n = 0
    titled = False  # the screen's title said its columns: the ruler does not
    i = 0
    while i < len(lines):
        no, off, ln = lines[i]
        m_cols = _ISPF_COLS.search(ln)
        if m_cols and not _HEX.match(ln.strip()):
            col0 = int(m_cols.group("a"))
            titled = True
            if width is None:
                scr_width = int(m_cols.group("b")) - col0 + 1
            browse_n = 0
            i += 1
            continue
        r = _ISPF_RULER.match(ln)
        if r is not None:
            ruler = r.group("r")
            digit = re.search(r"\d", ruler)
            if digit and not titled:  # the first digit names a multiple of ten
                col0 = int(digit.group(0)) * 10 - digit.start() + col0 // 100 * 100
                col0 = max(col0, 1)
            if width is None:
                scr_width = len(ruler)
            titled = False
            i += 1
            continue
        if _ISPF_TOP.search(ln) or _ISPF_NOISE.match(ln) or not ln.strip():
            i += 1
            continue
        seq = _ISPF_SEQ.match(ln)
        prefix = 7 if seq else 0
        if i + 2 >= len(lines):
            break
        z = lines[i + 1][2][prefix:].rstrip()
        n = lines[i + 2][2][prefix:].rstrip()
        indent_ok = (not prefix) or (lines[i + 1][2][:prefix].strip() == ""
                                     and lines[i + 2][2][:prefix].strip() == "")
        if not (indent_ok and z and n):
            i += 1
            continue
        hexlike = _HEX.match(z) and _HEX.match(n)
        if not hexlike and not (_HEX.match(z.replace(" ", "0")) or _HEX.match(n.replace(" ", "0"))):
            i += 1
            continue
        key = seq.group("seq") if seq and seq.group("seq").isdigit() else f"b{browse_n}"
        browse_n += 1
        if key not in recs:
            recs[key] = HexRecord(b"", no, off)
            order.append(key)
            shown[key] = []
        rec = recs[key]
        rec.text += "\n".join(x[2] for x in lines[i:i + 3]) + "\n"
        if not hexlike or len(z) != len(n):
            rec.bad.append((no + 1, f"zone line {z[:40]!r}, numeric line {n[:40]!r}"))
            i += 3
            continue
        # zone and numeric digits interleaved: one bytes.fromhex per line
        data = bytes.fromhex("".join(chain.from_iterable(zip(z, n))))
        sw = scr_width or (72 if prefix else 80)
        shown[key].append((col0, data, len(data) >= sw, no))
        i += 3
    out = []
    for key in order:
        rec = recs[key]
        pieces = sorted(shown[key], key=lambda p: p[0])
        buf = bytearray()
        for c0, data, full, no in pieces:
            if c0 - 1 > len(buf):
                rec.cut = rec.cut or (f"the screen of line {no} starts at column {c0}, the "
                                      f"record is shown up to column {len(buf)}: columns "
                                      f"between were not captured")
                rec.cut_line = no if rec.cut_line < 0 else rec.cut_line
                break
            buf[c0 - 1:c0 - 1 + len(data)] = data
        if pieces and rec.cut is None:
            c0, data, full, no = max(pieces, key=lambda p: p[0] + len(p[1]))
            if full:
                rec.cut = (f"the record fills the screen to column {c0 + len(data) - 1}: "
                           f"columns after it, if any, were not captured")
                rec.cut_line = no
        rec.data = bytes(buf)
        out.append(rec)
    return out
