"""amqsbcg output: the line-by-line reader, the reference.

It reads every layout and every oddity (``docs/capture-formats.md``,
"amqsbcg output"):
``read_amqsbcg(fast=False)`` reads a whole file with it, and the fast reader
(:mod:`dlqlens.capture.amqsbcg.fast`) hands it every message it cannot
prove printed exactly as amqsbcg prints it. The patterns of the lines that
start and end a message are shared with the fast reader and the sniffer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dlqlens.capture.message import MD_DEFAULTS, byteorder_of
from dlqlens.capture.text import clean_hex, pack_text_md
from dlqlens.decode.frames import Frames, FramesBuilder
from dlqlens.decode.issues import make_issue
from dlqlens.mq.ccsid import UTF16, charset
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
        #: started by an MQGET line, and no other line seen yet
        self.fresh = False


#: Missing dump lines within a message's stated length are zero-filled so
#: that later bytes keep their place, up to this many bytes per message (256
#: lines); a larger gap is reported and not filled (memory follows the file).
MAX_ZERO_FILL = 4096


def _frame_lines(lines: Iterable[tuple[int, int, str]], source: str,
                 count: int) -> tuple[Frames, int]:
    """Frame the messages of ``lines`` (``(number, offset, text)``), numbered
    from ``count + 1``; returns the frames and the last message number.

    ``lines`` must start at an ``MQGET of message number`` line (or at the
    start of the file).
    """
    builder = FramesBuilder(source, "amqsbcg", "text")
    cur: _Message | None = None

    def finish(m: _Message):
        nonlocal count
        count += 1
        _emit(builder, m, source, count)

    for number, offset, text in lines:
        stripped = text.strip()
        mget = _MQGET.search(text)
        if mget:
            # a message starts here, whatever follows: its descriptor banner,
            # or (the banner lost) its descriptor lines
            if cur is not None:
                finish(cur)
            cur = _Message(0, number, offset)
            cur.fresh = True
            continue
        if stripped == _MD_BANNER:
            if cur is not None and cur.fresh:
                cur.fresh = False  # the banner of the message its MQGET line started
                continue
            if cur is not None:
                finish(cur)
            cur = _Message(0, number, offset)
            continue
        if cur is None:
            continue
        if stripped:
            cur.fresh = False
        cur.raw_lines.append(text)
        if _END.search(text):
            finish(cur)
            cur = None
            continue
        if cur.section == "md" and "StrucId" in cur.md and \
                re.match(r"^\s*StrucId\s*:\s*'DLH ", text):
            cur.section = "dlh"  # the DLH block, its banner line lost
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
                if label in target:
                    # a second line for one field (a section's banner lost, or
                    # lines pasted twice): the first stands, the second is reported
                    first = target[label]
                    cur.issues.append((
                        "bad_md_field", f"{'md' if target is cur.md else 'dlh'}.{label}",
                        f"one '{label} :' line (the first, line {first[1]}, reads "
                        f"{first[0]!r})", f"another, reading {value!r}", number))
                    continue
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
