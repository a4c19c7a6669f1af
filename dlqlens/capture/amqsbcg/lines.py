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
from dlqlens.capture.text import clean_hex, elision_marker, is_masked, pack_text_md
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
_PAIR = re.compile(r"^\s*(\w+)\s*:\s*('(?:[^']*)'|-?\d+|[*.xX\u2026]{2,})\s+(\w+)\s*:\s*"
                   r"('(?:[^']*)'|-?\d+|[*.xX\u2026]{2,})\s*$")
_NUMBER = re.compile(r"^\s*(\w+)\s*:\s*(-?\d+|[*.xX\u2026]{2,})(?:\s*\[(.*)\])?\s*$")
_HEXVAL = re.compile(r"^\s*(\w+)\s*:\s*X'([^']*)'\s*$")
_HEXONLY = re.compile(r"^\s*X'([^']*)'\s*$")
#: A descriptor line ``Label : value`` whatever its value.
_LABELLED = re.compile(r"^\s*(\w+)\s*:\s*(.*)$")

_MD_INT = {f.name for f in MQMD.fields if f.type == MQLONG}
_MD_CHAR = {f.name for f in MQMD.fields if f.type == MQCHAR}
_MD_BYTES = {f.name for f in MQMD.fields if f.type == MQBYTE}
_MD_FIELDS = {f.name for f in MQMD.fields}
_DLH_KIND = {f.name: "int" if f.type == MQLONG else "char" for f in MQDLH.fields}
#: The MQMD fields amqsbcg prints for every message, and for version 2.
_MD_V2 = tuple(f.name for f in MQMD.fields if f.version == 2)
_MD_ALWAYS = tuple(f.name for f in MQMD.fields if f.version == 1)


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
        #: the line of an elision marker ('...') among the descriptor lines
        self.elided_at: int | None = None
        #: fields whose line is there but unreadable (reported on that line)
        self.unreadable: set[str] = set()
        #: the lines of the length line and of the last dump line
        self.length_line: int | None = None
        self.last_dump: int | None = None
        #: a fragment that starts after the descriptor (at the Dead Letter
        #: Header block or the data): no '****Message descriptor****' section
        self.md_missing = False


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
        if (stripped == _DLH_BANNER or _DATA_BANNER.match(stripped)) and \
                (cur is None or cur.section in ("length", "data")
                 or stripped == _DLH_BANNER and cur.section == "dlh" and cur.dlh):
            # a fragment: a Dead Letter Header block or a message's data pasted
            # without the descriptor before it (outside a message, after a
            # message's data or a second block after a block's lines, where
            # amqsbcg never prints them)
            if cur is not None:
                finish(cur)
            cur = _Message(0, number, offset)
            cur.md_missing = True
            cur.section = "dlh" if stripped == _DLH_BANNER else "length"
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
            if elision_marker(text):
                cur.elided_at = cur.elided_at or number
                continue
            if cur.pending_hex_label:
                m = _HEXONLY.match(text)
                if m:
                    target[cur.pending_hex_label] = ("X'" + m.group(1) + "'", number)
                    cur.pending_hex_label = None
                    continue
            if stripped.endswith(":") and stripped[:-1].strip().isidentifier():
                cur.pending_hex_label = stripped[:-1].strip()
                continue
            found = _values(text)
            if not found:
                bad = _LABELLED.match(text)
                if bad and (bad.group(1) in _MD_FIELDS if target is cur.md
                            else bad.group(1) in _DLH_KIND):
                    # a descriptor line whose value is not as amqsbcg prints
                    # it (a typographic quote, a cut): reported on this line
                    label = bad.group(1)
                    sect = "md" if target is cur.md else "dlh"
                    cur.issues.append((
                        "bad_md_field", f"{sect}.{label}",
                        "a value as amqsbcg prints it ('characters', a number or X'hex')",
                        repr(bad.group(2).strip()[:60]), number))
                    cur.unreadable.add(f"{sect}.{label}")
            for label, value in found:
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
                cur.length_line = number
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
            cur.last_dump = number
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
    unknown: list[str] = []
    for name, (value, line) in list(m.md.items()):
        kind = "hex" if name in _MD_BYTES else "int" if name in _MD_INT else "char"
        hx = value[2:-1] if kind == "hex" and value.startswith("X'") else value
        if name in _MD_INT | _MD_CHAR | _MD_BYTES and is_masked(hx, kind):
            issue("masked", f"md.{name}", "the value", f"{value.strip()[:70]!r} (masked)", line)
            unknown.append(f"md.{name}")
            del m.md[name]
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
    md_lines_missing = m.md_missing and not m.md
    if md_lines_missing and m.dlh:
        # the Dead Letter Header block without its message descriptor: amqsbcg
        # prints that block only for a message whose MQMD Format is
        # MQFMT_DEAD_LETTER_HEADER, so the Format is known; every other MQMD
        # field is not in the capture (null, with an issue each). The block's
        # text is packed little-endian in UTF-8 (the MQMD's Encoding and
        # CodedCharSetId are unknown; the decode reads the same text back).
        fields["Format"] = "MQDEAD"
        for f in MQMD.fields:
            if f.name != "Format":
                issue("elided", f"md.{f.name}", "a '****Message descriptor****' section "
                      "before the Dead Letter Header block", "none: the capture starts at "
                      f"the block (line {m.line})", m.line)
                unknown.append(f"md.{f.name}")
        fields["Encoding"], fields["CodedCharSetId"] = 546, 1208
    if md_lines_missing and not m.dlh:
        # the message data alone: no MQMD, and no MQDLH (MQ 9.3.4+ prints it
        # in its own block before the data; the older layouts in the dump)
        issue("elided", "md", "a '****Message descriptor****' section",
              f"none: the capture starts at the message data (line {m.line}): the MQMD, "
              "and the MQDLH that MQ 9.3.4+ prints before the data, are not in it; "
              "paste the message's descriptor section to read its headers", m.line)
    for need in ("Encoding", "CodedCharSetId", "Format"):
        if need not in fields and f"md.{need}" not in m.unreadable and \
                not any(i[1] == f"md.{need}" for i in m.issues):
            issue("bad_md_field", f"md.{need}", f"a '{need} :' descriptor line", "none",
                  m.elided_at or m.line)
    md_ok = "Format" in fields and "Encoding" in fields and "CodedCharSetId" in fields
    if md_ok and not md_lines_missing:
        # the lines amqsbcg prints for every message: one missing was cut out
        need = _MD_ALWAYS + (_MD_V2 if fields.get("Version") == 2 else ())
        for name in need:
            if name not in m.md and f"md.{name}" not in unknown and \
                    f"md.{name}" not in m.unreadable:
                issue("elided", f"md.{name}", f"a '{name} :' descriptor line (amqsbcg prints "
                      f"one for every message{' of MQMD version 2' if name in _MD_V2 else ''})",
                      "none" + (f": lines elided at line {m.elided_at}" if m.elided_at else ""),
                      m.elided_at or m.line)
                unknown.append(f"md.{name}")
    if m.dlh:
        for name, (value, line) in list(m.dlh.items()):
            kind = _DLH_KIND.get(name)
            if kind and is_masked(value, kind):
                issue("masked", f"dlh.{name}", "the value", f"{value.strip()[:70]!r} (masked)",
                      line)
                unknown.append(f"dlh.{name}")
                del m.dlh[name]
        for f in MQDLH.fields:
            if f.name not in m.dlh and f"dlh.{f.name}" not in unknown and \
                    f"dlh.{f.name}" not in m.unreadable:
                issue("elided", f"dlh.{f.name}", f"a '{f.name} :' line in the Dead Letter "
                      "Header block", "none" + (f": lines elided at line {m.elided_at}"
                                                if m.elided_at else ""),
                      m.elided_at or m.line)
                unknown.append(f"dlh.{f.name}")
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
        if m.md_missing or not m.hex:
            unknown.append("payload")  # no data section: the data is not in the capture
    elif len(data) < shown:
        # named where the dump stops (its last line, or the length line)
        issue("data_truncated", "hex dump", f"{shown} bytes", f"{len(data)} bytes",
              m.last_dump or m.length_line or m.line)
    elif len(data) > shown:
        issue("length_mismatch", "hex dump", f"{shown} bytes", f"{len(data)} bytes",
              m.last_dump or m.length_line or m.line)
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
                issues=issues, raw=raw, unknown=tuple(unknown) if md_ok else ())


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
