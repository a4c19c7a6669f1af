"""Hex dumps of MQ messages as people paste them, read as capture formats.

Five layouts, each a format of the registry (:mod:`dlqlens.capture.registry`):
``ispf`` (z/OS ISPF browse/view with ``HEX ON``), ``xxd``, ``hexdump-c``
(``hexdump -C``), ``od`` (``od -A x -t x1z``) and ``hex-stream`` (a plain hex
string, wrapped or not, with or without offsets, or inside a log line). The
text is turned into the bytes of each record (:mod:`.parse`); the bytes go to
the decoding every reader shares (:func:`dlqlens.decode.records.decode_frames`),
framed here by what they start with (:func:`dlqlens.decode.leading.leading_structure`):

- an MQMD (version 1 or 2): the descriptor, then the message data, as a raw
  capture's record (:mod:`dlqlens.capture.raw`);
- an MQDLH, MQTM or MQRFH2 with no MQMD before it (a DLQ browser shows the
  message data only): the header chain is walked from that structure; the
  MQMD is null, with a ``not_captured`` issue;
- an MQXQH (a transmission-queue message): its embedded version-1 MQMD is the
  row's ``md``; the MQXQH (``xqh.RemoteQName``, ``xqh.RemoteQMgrName``) is
  decoded as the first header.

Byte order and character family come from the StrucId and Version (and the
Encoding fields); a record that starts with none of these is a
``bad_descriptor`` row with the evidence and its text kept in ``raw``.

What the dump does not hold is null with an issue, never invented: a record
cut by the ISPF screen or by missing dump lines is decoded as far as it goes
(fields of the MQMD past the cut are null, ``not_captured``; a header cut is
``header_truncated``), and the row says what was not captured and where.

Sniffing (``format="auto"``) refuses when unsure: a layout is recognised only
when most of the text's non-blank lines in the first 64 KiB are its lines and
the first record's bytes start with one of the structures above.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

from dlqlens.capture.hexdump import dump, parse
from dlqlens.capture.hexdump.parse import HexRecord
from dlqlens.capture.limits import MAX_MESSAGE_BYTES
from dlqlens.capture.message import CaptureMessage
from dlqlens.capture.slices import Slice
from dlqlens.decode.frames import Frames, FramesBuilder
from dlqlens.decode.issues import make_issue
from dlqlens.decode.leading import Leading, leading_structure
from dlqlens.errors import CaptureError
from dlqlens.mq.structs import MQMD, MQXQH

LAYOUTS = parse.LAYOUTS
#: Registry name -> one-line description.
DESCRIPTIONS = {
    "ispf": "z/OS ISPF browse/view with HEX ON (EBCDIC records)",
    "xxd": "xxd hex dump of one or more messages",
    "hexdump-c": "hexdump -C of one or more messages",
    "od": "od -A x -t x1z of one or more messages",
    "hex-stream": "a plain hex string (log line, copy as hex stream), wrapped or not",
}

_XQH_MD = MQXQH.offsets["MsgDesc.StrucId"]


# ---------------------------------------------------------------------------
# text -> records
# ---------------------------------------------------------------------------

def _starts_record(b: bytes) -> bool:
    return isinstance(leading_structure(b), Leading)


def records(text: str, layout: str) -> list[HexRecord]:
    """The records of ``text`` in ``layout`` (:data:`LAYOUTS`)."""
    if layout == "ispf":
        return parse.parse_ispf(text)
    if layout == "hex-stream":
        return parse.parse_stream(text, _starts_record)
    return parse.parse_offset_dump(text, layout)


# ---------------------------------------------------------------------------
# sniffing
# ---------------------------------------------------------------------------

def _text(head: bytes) -> str | None:
    if b"\0" in head[:4096]:
        return None
    return head.decode("latin-1")


def _lines_of(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


#: Lines of the other text formats (dmpmqmsg's ``A``/``X`` lines, amqsbcg's
#: headings), whose hex a stream's sniffer would otherwise claim.
_OTHER_TEXT = re.compile(r"^(?:A [A-Z]{3} |X [0-9A-Fa-f]{2}|\* QLOAD)|MQGET of message number|"
                         r"\*{4}Message descriptor|StrucId  : 'MD  '", re.M)


def sniff_layout(head: bytes, layout: str) -> bool:
    """True when ``head`` (a file's first bytes) is a dump in ``layout`` whose
    first record starts with an MQ structure (:func:`leading_structure`)."""
    text = _text(head)
    if text is None:
        return False
    lines = _lines_of(text)
    if not lines:
        return False
    if len(head) >= 4096:  # the last line may be cut by the sniff window
        lines = lines[:-1] or lines
    if layout == "ispf":
        if parse.ispf_markers(text) == 0:
            return False
    elif layout == "hex-stream":
        if _OTHER_TEXT.search(text):  # a damaged dmpmqmsg or amqsbcg: not a stream
            return False
        hexed = sum(1 for ln in lines if parse.stream_hex(ln) is not None)
        if hexed * 2 < len(lines):
            return False
    else:
        pat = parse._LINE[layout]
        ok = sum(1 for ln in lines if pat.match(ln.strip()) or ln.strip() == "*"
                 or (layout in parse._END and parse._END[layout].match(ln.strip())))
        if not ok or ok * 10 < len(lines) * 6:
            return False
    recs = records(text, layout)
    first = next((r for r in recs if r.data), None)
    return first is not None and _starts_record(first.data[:16])


def _sniffer(layout: str):
    def sniff(head: bytes) -> bool:
        return sniff_layout(head, layout)
    sniff.__doc__ = f"True when ``head`` is a {DESCRIPTIONS[layout]}."
    return sniff


# ---------------------------------------------------------------------------
# records -> frames
# ---------------------------------------------------------------------------

def _cut_fields(st, version: int, have: int, base: int = 0, prefix: str = "md.") -> tuple:
    """Names (``prefix`` + field) of the fields of ``st`` that end after
    ``have`` bytes (the structure starting at ``base``)."""
    return tuple(prefix + f.name.split(".", 1)[-1] for f in st.fields
                 if (st is not MQMD or f.version <= version)
                 and base + st.offsets[f.name] + f.length > have)


def frame_records(recs: list[HexRecord], source: str, capture_format: str, *,
                  first_number: int = 1,
                  max_message_bytes: int = MAX_MESSAGE_BYTES) -> Frames:
    """Frame the records' bytes for :func:`dlqlens.decode.records.decode_frames`.

    Parameters
    ----------
    recs : list of HexRecord
    source : str
        Recorded in the ``source`` column.
    capture_format : str
        Recorded in the ``capture_format`` column (the layout's name).
    first_number : int
        Message number of the first record.
    max_message_bytes : int
        A record with more data than this is not decoded (``too_large``).

    Returns
    -------
    Frames
        One row per record: MQMD-first records as in a raw capture; records
        that start with an MQDLH, MQXQH, MQTM or MQRFH2 with their
        ``start_format``; a record whose hex could not be read, or that starts
        with no known structure, as a malformed row with its text in ``raw``.
    """
    fb = FramesBuilder(source, capture_format, "binary")
    for k, rec in enumerate(recs):
        number = first_number + k
        line = rec.line

        def issue(code, field, expected, found, note="", at_line=None):
            return make_issue(code, source=source, message_number=number, field=field,
                              expected=expected, found=found, line=at_line or line, note=note)

        if rec.bad:
            bl, found = rec.bad[0]
            fb.add(md=None, number=number, line=line, offset=rec.offset,
                   issues=[issue("bad_hex", "hex digits",
                                 f"a {capture_format} dump line: an offset and pairs of hex digits"
                                 if capture_format != "ispf" else
                                 "zone and numeric lines of hex digits, as long as each other",
                                 found, note=f"{len(rec.bad)} line(s) not read; the record is "
                                 "kept as text in raw", at_line=bl)],
                   raw=rec.text.encode("latin-1", "replace"), unknown=("payload",))
            continue
        data = rec.data
        if len(data) > max_message_bytes:
            fb.add(md=None, number=number, line=line, offset=rec.offset,
                   issues=[issue("too_large", "message data length",
                                 f"at most {max_message_bytes:,} bytes (option maxMessageBytes)",
                                 f"{len(data):,} bytes; not decoded")],
                   raw=data[:1024])
            continue
        lead = leading_structure(data[:512])
        if not isinstance(lead, Leading):
            fb.add(md=None, number=number, line=line, offset=rec.offset,
                   issues=[issue("bad_md", "StrucId",
                                 "an MQMD, MQDLH, MQXQH, MQTM or MQRFH2 at the start of the "
                                 "record, in ASCII or EBCDIC", lead,
                                 note="the record is kept in raw")],
                   raw=data[:1024 * 1024], unknown=("payload",))
            continue
        issues = []
        if rec.cut:
            issues.append(issue("not_captured", "message data",
                                "the whole record", f"{len(data)} bytes",
                                note=rec.cut, at_line=rec.cut_line if rec.cut_line > 0 else None))
        length = rec.stated_length
        common = dict(big_endian=lead.big_endian, codec=lead.codec, blank=lead.blank,
                      number=number, line=line, offset=rec.offset,
                      open_end=bool(rec.cut) and length is None)
        if lead.name == "MQMD":
            md_len = MQMD.length(lead.version)
            unknown = _cut_fields(MQMD, lead.version, len(data)) if len(data) < md_len else ()
            if unknown:
                issues.append(issue("not_captured", unknown[0],
                                    f"an MQMD version {lead.version} ({md_len} bytes)",
                                    f"{len(data)} bytes",
                                    note="fields not captured: " + ", ".join(unknown[:6])
                                    + ("..." if len(unknown) > 6 else "")))
            body = data[md_len:]
            fb.add(md=data[:md_len], version=lead.version, data=body,
                   data_length=(length - md_len) if length and length >= md_len else None,
                   issues=issues, unknown=unknown, **common)
            continue
        start = (lead.format, lead.encoding, lead.ccsid)
        if lead.name == "MQXQH":
            md = data[_XQH_MD:_XQH_MD + MQMD.length(1)]
            if len(md) >= 8:
                inner = leading_structure(md[:8])
                unknown = _cut_fields(MQMD, 1, len(md)) if len(md) < MQMD.length(1) else ()
                if isinstance(inner, Leading) and inner.name == "MQMD":
                    fb.add(md=md, version=1, data=data, data_length=length,
                           issues=issues, unknown=unknown, start=start,
                           **{**common, "big_endian": inner.big_endian})
                    continue
            issues.append(issue("not_captured", "md",
                                "the MQXQH's embedded MQMD (MsgDesc)",
                                f"{max(len(md), 0)} bytes of it" if len(md) >= 8 else
                                "the record ends before it", note="the MQMD is null"))
        else:
            issues.append(issue("not_captured", "md", "an MQMD before the message data",
                                f"the record starts with an {lead.name}",
                                note=f"the dump holds the message data only; the MQMD is "
                                     f"null, the {lead.name} is read as "
                                     f"{'big' if lead.big_endian else 'little'}-endian "
                                     f"{'EBCDIC' if lead.ebcdic else 'ASCII'} from its "
                                     f"StrucId and Version"))
        fb.add(md=None, data=data, data_length=length, issues=issues, start=start, **common)
    return fb.build()


# ---------------------------------------------------------------------------
# reader, writer, planner (the registry's interface)
# ---------------------------------------------------------------------------

def _reader(layout: str):
    def read(path: str, *, source: str | None = None, piece: Slice | None = None,
             batch_size: int = 65536,
             max_message_bytes: int = MAX_MESSAGE_BYTES) -> Iterator[Frames]:
        source = source or path
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise CaptureError(f"{path}: cannot open: {exc.strerror or exc}") from exc
        if not raw:
            return
        recs = records(raw.decode("latin-1"), layout)
        if not recs:
            raise CaptureError(
                f"{source}: no {DESCRIPTIONS[layout]} found: expected "
                f"{_EXPECTED[layout]}, found {raw[:40]!r}")
        for b0 in range(0, len(recs), batch_size):
            yield frame_records(recs[b0:b0 + batch_size], source, layout, first_number=b0 + 1,
                                max_message_bytes=max_message_bytes)
    read.__doc__ = read_doc(layout)
    return read


_EXPECTED = {
    "ispf": "ISPF lines: a sequence number and characters, then a zone and a numeric line "
            "of hex digits",
    "xxd": "lines like '00000000: 4d44 2020 0200 0000 ...'",
    "hexdump-c": "lines like '00000000  4d 44 20 20 ...  |MD  ...|'",
    "od": "lines like '000000 4d 44 20 20 ... >MD  ...<'",
    "hex-stream": "hex digits (at least 16 in a run)",
}


def read_doc(layout: str) -> str:
    return f"""Frame the records of a {DESCRIPTIONS[layout]}.

    Parameters
    ----------
    path : str
    source : str, optional
        Name recorded in the ``source`` column (default ``path``).
    piece : Slice, optional
        Ignored: a dump is read whole (:func:`plan` gives one slice).
    batch_size : int
        Records per yielded Frames.
    max_message_bytes : int
        A record with more bytes than this is a ``too_large`` row.

    Yields
    ------
    Frames
        See :func:`frame_records`.

    Raises
    ------
    CaptureError
        When the file cannot be opened, or holds no line of the layout.
    """


def _writer(layout: str):
    def write(path: str | os.PathLike, messages: Iterable[CaptureMessage], **options) -> int:
        """Write each message (MQMD + data) as this layout shows it; returns the count."""
        recs = [m.md_bytes() + m.data for m in messages]
        with open(path, "w", encoding="latin-1", newline="\n") as fh:
            fh.write(render(recs, layout, **options))
        return len(recs)
    return write


def render(recs: list[bytes], layout: str, **options) -> str:
    """The text of ``recs`` in ``layout`` (blank lines between records, except
    ISPF, one screen)."""
    if layout == "ispf":
        return dump.ispf(recs, **options)
    return "\n".join(dump.WRITERS[layout](r, **options) for r in recs)


def plan(path: str, target_bytes: int = 64 * 1024 * 1024, **_) -> list[Slice]:
    """One slice: a dump is read whole (pasted dumps are small)."""
    return [Slice(path)]


SNIFF = {name: _sniffer(name) for name in LAYOUTS}
READ = {name: _reader(name) for name in LAYOUTS}
WRITE = {name: _writer(name) for name in LAYOUTS}

__all__ = ["DESCRIPTIONS", "LAYOUTS", "READ", "SNIFF", "WRITE", "frame_records", "plan",
           "records", "render", "sniff_layout"]


def sniff(head: bytes) -> bool:
    """True when ``head`` is a hex dump in any of :data:`LAYOUTS` (the
    registry sniffs each layout on its own)."""
    return any(SNIFF[name](head) for name in LAYOUTS)
