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
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from dlqlens.capture.message import MD_DEFAULTS, CaptureMessage, byteorder_of
from dlqlens.capture.text import clean_hex, pack_text_md, read_lines
from dlqlens.decode.frames import Frames, FramesBuilder
from dlqlens.decode.issues import make_issue
from dlqlens.mq.ccsid import UTF16, charset
from dlqlens.mq.structs import MQBYTE, MQCHAR, MQDLH, MQLONG, MQMD

_MQGET = re.compile(r"MQGET of message number\s+(\d+)")
_MD_BANNER = "****Message descriptor****"
_DLH_BANNER = "****Dead Letter Header****"
_PROPS_BANNER = "****Message properties****"
_DATA_BANNER = re.compile(r"^\*{4}\s+Message\s+\*{4}")
_LENGTH = re.compile(r"^\s*length\s*-\s*(\d+)(?:\s+of\s+(\d+))?\s+bytes")
_DUMP = re.compile(r"^\s*([0-9A-Fa-f]{8}):(.*)$")
_END = re.compile(r"No more messages|^\*{4}\s+Summary\s+\*{4}|MQGET \d+, failed")
_QUOTED = re.compile(r"^\s*(\w+)\s*:\s*'(.*)'\s*$")
_PAIR = re.compile(r"^\s*(\w+)\s*:\s*('(?:[^']*)'|-?\d+)\s+(\w+)\s*:\s*('(?:[^']*)'|-?\d+)\s*$")
_NUMBER = re.compile(r"^\s*(\w+)\s*:\s*(-?\d+)(?:\s*\[(.*)\])?\s*$")
_HEXVAL = re.compile(r"^\s*(\w+)\s*:\s*X'([0-9A-Fa-f]*)'\s*$")
_HEXONLY = re.compile(r"^\s*X'([0-9A-Fa-f]*)'\s*$")

_MD_INT = {f.name for f in MQMD.fields if f.type == MQLONG}
_MD_CHAR = {f.name for f in MQMD.fields if f.type == MQCHAR}
_MD_BYTES = {f.name for f in MQMD.fields if f.type == MQBYTE}


def sniff(head: bytes) -> bool:
    """True when ``head`` looks like amqsbcg output."""
    text = head.decode("latin-1")
    return "AMQSBCG0" in text or _MD_BANNER in text or bool(_MQGET.search(text))


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
        self.issues = []
        self.raw_lines: list[str] = []


def read_amqsbcg(path: str, *, source: str | None = None,
                 batch_size: int = 65536) -> Iterator[Frames]:
    """Frame the messages of an amqsbcg output file.

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
        ``source_line`` is the line of ``MQGET of message number`` (or of the
        descriptor banner when that line is missing); ``source_offset`` its
        byte offset.

    Raises
    ------
    CaptureError
        When the file cannot be opened.
    """
    source = source or path
    builder = FramesBuilder(source, "amqsbcg", "text")
    count = 0
    cur: _Message | None = None
    pending_get: tuple[int, int] | None = None

    def finish(m: _Message):
        nonlocal count
        count += 1
        _emit(builder, m, source, count)

    for number, offset, text in read_lines(path):
        if len(builder) >= batch_size:
            yield builder.build()
            builder = FramesBuilder(source, "amqsbcg", "text")
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
                cur.shown = int(m.group(1))
                cur.total = int(m.group(2)) if m.group(2) else cur.shown
                cur.section = "data"
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
                if cur.collected < off <= (cur.shown or 0):
                    cur.hex.append("00" * (off - cur.collected))
                    cur.collected = off
            if re.fullmatch(r"(?:[0-9A-Fa-f]{2})*", digits) is None:
                # keep the line's byte positions: each pair is a byte, bad pairs 0
                cur.issues.append(("bad_hex", "hex dump", "pairs of hex digits",
                                   repr(hex_area.strip()[:40]), number))
                digits = re.sub(r"[^0-9A-Fa-f]", "0", digits[: len(digits) // 2 * 2])
            cur.hex.append(digits)
            cur.collected += len(digits) // 2
    if cur is not None:
        finish(cur)
    if len(builder):
        yield builder.build()


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
    if m.shown is None:
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
