"""dmpmqmsg files: the line-by-line reader, the reference.

It reads every line and every oddity (``docs/capture-formats.md``,
"dmpmqmsg / QLOAD files"):
``read_dmpmqmsg(fast=False)`` reads a whole file with it, and the fast reader
(:mod:`dlqlens.capture.dmpmqmsg.fast`) hands it every message it cannot
prove well-formed. :data:`CODES` maps the 30 attribute codes to the MQMD
fields they set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dlqlens.capture.text import elision_marker, is_masked, line_bytes, pack_text_md
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
#: The attribute codes dmpmqmsg writes for every message (groups: either
#: code), and for every MQMD version 2 (``docs/capture-formats.md``).
_ALWAYS = tuple((c,) for c in ("RPT", "MST", "EXP", "FDB", "ENC", "CCS", "FMT", "PRI", "PER",
                               "MSI", "COI", "BOC", "RTQ", "RTM", "USR", "ACC")) + \
    (("AIX", "AID"), ("PAT",), ("PAN",), ("PTD",), ("PTT",), ("AOX", "AOD"))
_V2 = ("GRP", "MSQ", "OFF", "MSF", "ORL")
_VERSION_2 = tuple((c,) for c in _V2)
_HEX_PREFIX = re.compile(r"[0-9A-Fa-f]*")
#: First letters of dmpmqmsg's lines (either case): a line before the first
#: message that starts with one is kept as unframed text, any other is the
#: file's preamble.
_TAG_LETTERS = frozenset("ANXSTanxst")
_INT = re.compile(r"^\s*[-+]?\d+\s*$")


def _mqlong(value: str) -> int | None:
    """An ``A`` line's number (blanks around it and a sign allowed, as
    :data:`_INT` says), or None when it is none or outside the MQLONG range.
    (``\\s`` matches characters ``int`` does not strip, the separators
    0x1C-0x1F among them: those are not numbers either.)"""
    if not _INT.match(value):
        return None
    try:
        x = int(value)
    except ValueError:
        return None
    return x if -2**31 <= x < 2**31 else None


def _unescape_s(value: bytes) -> bytes:
    """The bytes of an ``S`` line's value (the line's own bytes, never
    re-encoded text): quotes removed, ``~x`` -> ``x`` (the ``~`` escapes of
    ``docs/capture-formats.md``)."""
    v = value.rstrip()
    if len(v) >= 2 and v[:1] == b'"' and v[-1:] == b'"':
        tildes = len(v[:-1]) - len(v[:-1].rstrip(b"~"))
        if tildes % 2 == 0:  # the closing quote is not escaped
            v = v[1:-1]
    return re.sub(rb"~(.)", rb"\1", v, flags=re.S)


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
        #: the line of an elision marker ('...') among its lines
        self.elided_at: int | None = None


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
        first = stray[0][2]
        if first[:1] in ("X", "S", "T") and (len(first) == 1 or first[1] == " "):
            # data lines with no attribute (or N) line before them
            expected = "an 'A' or 'N' line before the message's data lines"
            found = f"a data line {first[:40]!r} outside any message"
        else:
            expected = "an 'A', 'N', 'X', 'S', 'T' or '*' line"
            found = repr(first[:40])
        builder.add(md=None, number=count, offset=first_off, line=first_line,
                    raw=b"\n".join(line_bytes(t) for _, _, t in stray),
                    issues=[make_issue("unframed", source=source, message_number=count,
                                       field="line", expected=expected,
                                       found=found, line=first_line,
                                       note=f"{len(stray)} line(s) outside any message")])
        stray.clear()

    preamble = None  # before the first message of the file: True
    for number, offset, text in lines:
        if preamble is None:
            preamble = number == 1
        tag = text[:1]
        if tag in ("A", "N") and (len(text) == 1 or text[1] == " "):
            preamble = False
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
                cur.data.append(_unescape_s(line_bytes(text)[2:]))
            else:
                cur.data.append(line_bytes(text)[2:] + b"\n")
                cur.lossy = True
            continue
        if not text.strip() or text.startswith("*"):
            continue
        if cur is not None and not cur.in_data and elision_marker(text):
            cur.elided_at = number  # lines cut out of the attribute lines
            continue
        if preamble and tag not in _TAG_LETTERS:
            # what dmpmqmsg (or a shell) printed before the first message: its
            # version and copyright lines, a prompt; not a message's damaged
            # line, which would start with a tag letter
            continue
        stray.append((number, offset, text))
    if cur is not None:
        count += 1
        _emit(builder, cur, source, count)
    flush_stray()
    return builder.build(), count


def _emit(builder: FramesBuilder, m: _Msg, source: str, number: int) -> None:
    issues = []

    def issue(code, field, expected, found, line, note=""):
        issues.append(make_issue(code, source=source, message_number=number, field=field,
                                 expected=expected, found=found, line=line, note=note))

    for code, field, expected, found, line in m.issues:
        issue(code, field, expected, found, line)
    fields: dict = {}
    unknown: list[str] = []
    for code, value, line in m.attrs:
        if code not in CODES:
            issue("bad_md_field", f"A {code}", "one of the 30 dmpmqmsg attribute codes",
                  repr(code), line)
            continue
        name, kind = CODES[code]
        if is_masked(value, "hex" if kind == "hexchar" else kind):
            issue("masked", f"md.{name} (A {code})", "the value", f"{value.strip()[:70]!r} "
                  "(masked)", line, note="the capture does not hold it: null")
            unknown.append(f"md.{name}")
            continue
        if kind == "int":
            mqlong = _mqlong(value)
            if mqlong is None:
                issue("bad_md_field", f"md.{name} (A {code})", "a decimal number (MQLONG)",
                      repr(value), line)
                continue
            fields[name] = mqlong
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
    if m.attrs and not m.n_line:
        # the lines dmpmqmsg writes for every message: one missing was cut out
        present = {code for code, _, _ in m.attrs}
        need = _ALWAYS + (_VERSION_2 if fields.get("Version") == 2 else ())
        for codes in need:
            if present.isdisjoint(codes):
                name = CODES[codes[0]][0]
                if f"md.{name}" in unknown:
                    continue
                where = m.elided_at or m.line
                issue("elided", f"md.{name}", f"an 'A {codes[0]}' line (dmpmqmsg writes one "
                      f"for every message{' of MQMD version 2' if codes[0] in _V2 else ''})",
                      "none" + (f": lines elided at line {m.elided_at}" if m.elided_at else ""),
                      where, note="the capture does not hold it: null")
                unknown.append(f"md.{name}")
    if not m.data:
        issue("data_truncated", "data lines", "X, S or T lines", "none", m.line)
    if m.lossy:
        issue("lossy_capture", "T line", "X or S lines (byte-exact)",
              "T lines (line ends normalised)", m.line,
              note="written with dmpmqmsg -dt; a line feed was added after each T line")
    md_bytes, version = pack_text_md(fields)
    builder.add(md=md_bytes, big_endian=False, codec="utf-8", blank=0x20, version=version,
                data=b"".join(m.data), number=number, offset=m.offset, line=m.line,
                issues=issues, unknown=tuple(unknown))
