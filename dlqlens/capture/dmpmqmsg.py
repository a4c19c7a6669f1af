"""dmpmqmsg (and QLOAD, SupportPac MO03) message files: reader and writer.

Follows ``spec/capture-formats.md`` §1: lines starting ``*`` are comments
(the ``* QLOAD``/``* DMPMQMSG`` banner, ``* Qmgr``, ``* Queue``, ``* Index n``);
a message is a block of ``A xxx value`` attribute lines (or one ``N`` line)
followed by ``X`` (hex), ``S`` (quoted string, ``~`` escapes) and ``T`` (text,
lossy) data lines. Every one of the 30 three-letter codes is read; an unknown
code is reported and skipped. ``T`` lines are read as QLOAD reads them (a
line feed after each) and the message is flagged ``lossy_capture``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from dlqlens.capture.message import CaptureMessage
from dlqlens.capture.text import pack_text_md, read_lines
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


def read_dmpmqmsg(path: str, *, source: str | None = None,
                  batch_size: int = 65536) -> Iterator[Frames]:
    """Frame the messages of a dmpmqmsg/QLOAD file.

    Parameters
    ----------
    path : str
    source : str, optional
        Name recorded in the ``source`` column (default ``path``).
    batch_size : int
        Messages per yielded :class:`~dlqlens.decode.frames.Frames`.

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
    builder = FramesBuilder(source, "dmpmqmsg", "text")
    cur: _Msg | None = None
    count = 0
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

    for number, offset, text in read_lines(path):
        if len(builder) >= batch_size:
            yield builder.build()
            builder = FramesBuilder(source, "dmpmqmsg", "text")
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
    if len(builder):
        yield builder.build()


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
