"""One message's headers field by field, and its payload as text and hex.

:func:`header_fields` lays out the decoded MQMD and every header of the
message's chain that the decoder keeps (MQDLH, MQXQH, MQTM, the fixed part of
MQRFH2) as rows of offset, IBM field name, value and meaning. Offsets and
lengths come from the field tables of :mod:`dlqlens.mq.structs` (the MQMD's
from the start of the descriptor, which precedes the message data; every
other header's from the start of the message data, the ``header_chain``
offset plus the field's offset in its structure); names of codes from
:mod:`dlqlens.mq.constants`. The values are the decoded ones (integers in
the header's own encoding already converted, character fields with MQ's
padding removed), not the bytes.

:func:`payload_view` shows the first bytes of a payload decoded in its CCSID
and as a hex dump, bounded in size.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dlqlens.mq import constants as C
from dlqlens.mq.ccsid import charset
from dlqlens.mq.structs import MQBYTE, MQCHAR, MQDLH, MQMD, MQRFH2, MQTM, MQXQH, Struct
from dlqlens.widgets._render import MONO, WRAP, esc, table, text_table

#: Payload bytes shown as text and as hex.
TEXT_BYTES = 4096
HEX_BYTES = 1024

#: header_chain ``format`` -> (structure, row column holding its decoded fields).
_CHAIN_STRUCTS: dict[str, tuple[Struct, str]] = {
    "MQDEAD": (MQDLH, "dlh"),
    "MQXMIT": (MQXQH, "xqh"),
    "MQTRIG": (MQTM, "tm"),
    "MQHRF2": (MQRFH2, "rfh2"),
}


@dataclass(frozen=True)
class HeaderField:
    """One field of one header of a message.

    Attributes
    ----------
    structure : str
        ``MQMD``, ``MQDLH``, ``MQXQH``, ``MQTM``, ``MQRFH2`` (or the format of a
        header dlqlens walks but does not decode).
    offset : int or None
        Byte offset from the start of the message data; None for the MQMD
        (the descriptor is not part of the data).
    struct_offset : int
        Byte offset from the start of its structure.
    length : int
        Length in bytes.
    name : str
        IBM's field name (``Reason``, ``MsgDesc.Format``).
    type : str
        ``MQLONG``, ``MQCHAR`` or ``MQBYTE``.
    value : str
        The decoded value as text: integers in decimal, characters quoted,
        bytes in hex; ``null`` when the capture did not hold the field.
    meaning : str
        The name of the code (``MQRC_Q_FULL``, ``MQMT_DATAGRAM``) when the
        field holds one, then the field's meaning from the field table.
    """

    structure: str
    offset: int | None
    struct_offset: int
    length: int
    name: str
    type: str
    value: str
    meaning: str

    @property
    def where(self) -> str:
        """``MD+96`` for the MQMD, the data offset otherwise."""
        return f"MD+{self.struct_offset}" if self.offset is None else str(self.offset)


def _get(d, key):
    return d.get(key) if isinstance(d, Mapping) else None


def _bits(value: int, names: dict[int, str]) -> str:
    """Names of the single-bit options set in ``value`` plus any leftover as hex."""
    parts, rest = [], value
    for bit, name in sorted(names.items()):
        if bit > 0 and bit & (bit - 1) == 0 and value & bit:
            parts.append(name)
            rest &= ~bit
    if rest:
        parts.append(f"0x{rest & 0xFFFFFFFF:08X}")
    return " + ".join(parts) or names.get(0, "0")


def _report(value: int) -> str:
    """MQMD Report: the exception/expiration/COA/COD choices and the single options."""
    if value == 0:
        return "MQRO_NONE"
    parts, rest = [], value
    for group in ("EXCEPTION", "EXPIRATION", "COA", "COD"):
        mask = C.MQRO[f"MQRO_{group}_WITH_FULL_DATA"]
        part = value & mask
        if part:
            name = C.MQRO_NAMES.get(part)
            parts.append(name or f"MQRO_{group}?0x{part:X}")
            rest &= ~mask
    for name in ("MQRO_PAN", "MQRO_NAN", "MQRO_ACTIVITY", "MQRO_PASS_CORREL_ID",
                 "MQRO_PASS_MSG_ID", "MQRO_PASS_DISCARD_AND_EXPIRY", "MQRO_DISCARD_MSG"):
        bit = C.MQRO[name]
        if value & bit:
            parts.append(name)
            rest &= ~bit
    if rest:
        parts.append(f"0x{rest & 0xFFFFFFFF:08X}")
    return " + ".join(parts)


def _encoding(value: int) -> str:
    if value in C.MQENC_NAMES:
        return C.MQENC_NAMES[value]
    parts = []
    for kind in ("INTEGER", "DECIMAL", "FLOAT"):
        part = value & C.MQENC[f"MQENC_{kind}_MASK"]
        name = next((n for n, v in C.MQENC.items()
                     if n.startswith(f"MQENC_{kind}_") and not n.endswith("_MASK") and v == part), None)
        parts.append(name or f"{kind.lower()} 0x{part:X}")
    rest = value & C.MQENC["MQENC_RESERVED_MASK"]
    if rest:
        parts.append(f"reserved bits 0x{rest & 0xFFFFFFFF:08X}")
    return " + ".join(parts)


def _ccsid(value: int) -> str:
    if value in C.MQCCSI_NAMES:
        return C.MQCCSI_NAMES[value]
    cs = charset(value)
    return f"{cs.codec} ({cs.family})" if cs.known else f"no codec known to dlqlens ({cs.codec} assumed)"


def _date(value: str) -> str:
    v = (value or "").strip()
    if len(v) == 8 and v.isdigit():
        return f"{v[:4]}-{v[4:6]}-{v[6:]}"
    return ""


def _time(value: str) -> str:
    v = (value or "").strip()
    if len(v) == 8 and v.isdigit():
        return f"{v[:2]}:{v[2:4]}:{v[4:6]}.{v[6:]}"
    return ""


def _code_meaning(name: str, value) -> str:
    """The name of the code a field holds, or "" when the field holds none."""
    if not isinstance(value, int) or isinstance(value, bool):
        if name.endswith("Format") and isinstance(value, str):
            return C.MQFMT_NAMES.get(value.ljust(8)[:8], "")
        if name.endswith("PutDate"):
            return _date(value)
        if name.endswith("PutTime"):
            return _time(value) and _time(value) + " UTC"
        return ""
    if name == "Reason":
        info = C.describe_code(value)
        return f"{info.name}: {info.meaning}" if info.meaning else info.name
    if name.endswith("Feedback"):
        return C.code_name(value, kind="feedback")
    if name.endswith("MsgType"):
        return C.MQMT_NAMES.get(value, "")
    if name.endswith("Persistence"):
        return C.MQPER_NAMES.get(value, "")
    if name.endswith("ApplType"):
        return C.MQAT_NAMES.get(value, "")
    if name.endswith("Encoding"):
        return _encoding(value)
    if name.endswith("CodedCharSetId") or name == "NameValueCCSID":
        return _ccsid(value)
    if name.endswith("Report"):
        return _report(value)
    if name.endswith("MsgFlags"):
        return _bits(value, C.MQMF_NAMES)
    if name.endswith("Expiry"):
        return C.MQEI_NAMES.get(value, f"{value / 10:g} s left when captured")
    if name.endswith("Priority"):
        return C.MQPRI_NAMES.get(value, "")
    if name.endswith("OriginalLength") and value == C.MQOL_UNDEFINED:
        return "MQOL_UNDEFINED"
    return ""


def _value(ftype: str, value) -> str:
    if value is None:  # the capture does not hold it (elided, masked, cut off)
        return "unknown"
    if ftype == MQBYTE:
        return bytes(value).hex().upper()
    if ftype == MQCHAR:
        return repr(str(value))
    return str(value)


def _struct_rows(s: Struct, values: Mapping | None, base: int | None, version=None) -> list[HeaderField]:
    rows = []
    for f in s.fields_for(version):
        if "." in f.name:
            parent, child = f.name.split(".", 1)
            v = _get(_get(values, parent), child)
        else:
            v = _get(values, f.name)
        code = _code_meaning(f.name.rsplit(".", 1)[-1] if f.name.startswith("MsgDesc.") else f.name, v)
        meaning = f"{code} — {f.doc}" if code else f.doc
        rows.append(HeaderField(s.name, None if base is None else base + s.offsets[f.name],
                                s.offsets[f.name], f.length, f.name, f.type, _value(f.type, v),
                                meaning))
    return rows


def header_fields(row: Mapping) -> list[HeaderField]:
    """Every decoded field of a message's MQMD and headers, in layout order.

    Parameters
    ----------
    row : mapping
        A decoded message (``docs/columns.md``): ``md``, ``header_chain`` and
        the header columns ``dlh``, ``xqh``, ``tm``, ``rfh2``.

    Returns
    -------
    list of HeaderField
        The MQMD first (its version's fields), then each header of the chain
        at its offset in the message data. The decoder keeps the first MQXQH,
        MQTM and MQRFH2 of a chain; a header it walks without decoding (a
        second one of a kind, MQMDE, MQCIH...) is one row with its format,
        offset and length.
    """
    md = _get(row, "md")
    out: list[HeaderField] = []
    if md:
        version = _get(md, "Version")
        out += _struct_rows(MQMD, md, None, 2 if version == 2 else 1)
    seen: set[str] = set()
    for link in _get(row, "header_chain") or []:
        fmt = (_get(link, "format") or "").strip()
        offset = _get(link, "offset")
        known = _CHAIN_STRUCTS.get(fmt)
        values = _get(row, known[1]) if known else None
        if known and values and fmt not in seen:
            seen.add(fmt)
            out += _struct_rows(known[0], values, offset)
            if fmt == "MQHRF2":
                length = _get(link, "length") or 0
                folders = _get(values, "NameValueData") or []
                out.append(HeaderField("MQRFH2", None if offset is None else offset + MQRFH2.length(),
                                       MQRFH2.length(), max(0, length - MQRFH2.length()),
                                       "NameValueData", MQCHAR,
                                       " ".join(repr(str(x)) for x in folders),
                                       "Folders of name/value data (each after its 4-byte length)"))
            continue
        out.append(HeaderField(fmt or "?", offset, 0, _get(link, "length") or 0,
                               f"({_get(link, 'struc_id') or 'no StrucId'})", "",
                               f"status {_get(link, 'status')}",
                               "Header walked, fields not decoded by dlqlens"
                               + (" (only the first of a kind is)" if known else "")))
    return out


def fields_html(fields: list[HeaderField]) -> str:
    """The fields as an HTML table (capture values escaped)."""
    return table(("structure", "offset", "length", "field", "type", "value", "meaning"),
                 [(f.structure, f.where, f.length, f.name, f.type, f.value, f.meaning)
                  for f in fields], mono=(1, 5))


def fields_text(fields: list[HeaderField]) -> str:
    return text_table(("structure", "offset", "length", "field", "value", "meaning"),
                      [(f.structure, f.where, f.length, f.name, f.value, f.meaning) for f in fields])


# ---------------------------------------------------------------------------
# payload
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class PayloadView:
    """The start of a payload, as text in its CCSID and as hex.

    Attributes
    ----------
    stated_length : int or None
        ``payload_length``: the payload's length as the capture states it.
    kept_length : int or None
        Bytes of payload the capture kept (smaller when it truncated).
    head : bytes
        The first bytes (at most :data:`TEXT_BYTES`), all that reached the driver.
    ccsid : int or None
    codec : str
        The Python codec used for the text (``charset(ccsid)``).
    codec_known : bool
        False when dlqlens knows no codec for the CCSID (a default was used).
    fmt : str or None
        ``payload_format``.
    """

    stated_length: int | None
    kept_length: int | None
    head: bytes
    ccsid: int | None
    codec: str
    codec_known: bool
    fmt: str | None

    @property
    def text(self) -> str:
        """``head`` decoded (undecodable bytes as U+FFFD)."""
        return self.head.decode(self.codec, errors="replace")

    def hex_lines(self, limit: int = HEX_BYTES) -> list[tuple[str, str, str]]:
        """``(offset, hex, characters)`` per 16 bytes, characters in the CCSID
        (non-printable as ``.``)."""
        out = []
        data = self.head[:limit]
        for at in range(0, len(data), 16):
            chunk = data[at:at + 16]
            hexes = " ".join(chunk[i:i + 4].hex().upper() for i in range(0, len(chunk), 4))
            chars = "".join(self._char(b) for b in chunk)
            out.append((f"{at:08X}", hexes, chars))
        return out

    def _char(self, b: int) -> str:
        """One byte as a character of a single-byte CCSID (ASCII for the
        multi-byte ones); ``.`` when not printable."""
        if self.codec in ("utf-8", "utf-16", "utf-16-le", "utf-16-be"):
            ch = chr(b) if 0x20 <= b < 0x7F else "."
        else:
            ch = bytes([b]).decode(self.codec, errors="replace")
        return ch if len(ch) == 1 and ch.isprintable() and ch != "\ufffd" else "."

    def _caption(self) -> str:
        kept = self.kept_length if self.kept_length is not None else len(self.head)
        parts = [f"{self.stated_length if self.stated_length is not None else '?'} bytes"]
        if self.stated_length is not None and kept < self.stated_length:
            parts.append(f"the capture kept {kept}")
        parts.append(f"format {self.fmt or '(none)'}")
        parts.append(f"CCSID {self.ccsid} read as {self.codec}"
                     + ("" if self.codec_known else " (CCSID unknown to dlqlens)"))
        if kept > len(self.head):
            parts.append(f"first {len(self.head)} bytes shown")
        return ", ".join(parts)

    def to_text(self) -> str:
        lines = [f"Payload: {self._caption()}", self.text, ""]
        lines += [f"{o}  {h:<35}  {c}" for o, h, c in self.hex_lines()]
        if len(self.head) > HEX_BYTES:
            lines.append(f"(hex of the first {HEX_BYTES} bytes)")
        from dlqlens.safe import printable
        return printable("\n".join(lines)) + "\n"

    def _repr_html_(self) -> str:
        hexes = "\n".join(f"{o}  {h:<35}  {c}" for o, h, c in self.hex_lines())
        more = (f"<p>(hex of the first {HEX_BYTES} bytes)</p>" if len(self.head) > HEX_BYTES else "")
        return (f"<div><p>{esc(self._caption())}</p>"
                f"<pre {WRAP}>{esc(self.text)}</pre>"
                f"<pre {MONO}>{esc(hexes)}</pre>{more}</div>")


def payload_view(row: Mapping) -> PayloadView:
    """The payload of a decoded message, as far as the row holds it.

    ``row`` needs ``payload`` (bytes; the explorer fetches only its first
    :data:`TEXT_BYTES`), and uses ``payload_kept`` (the length the capture
    kept, when the payload was cut before reaching the driver),
    ``payload_length``, ``payload_ccsid`` and ``payload_format``.
    """
    payload = bytes(_get(row, "payload") or b"")[:TEXT_BYTES]
    ccsid = _get(row, "payload_ccsid")
    cs = charset(int(ccsid)) if isinstance(ccsid, int) and ccsid > 0 else charset(819)
    kept = _get(row, "payload_kept")
    if kept is None and _get(row, "payload") is not None:
        kept = len(_get(row, "payload"))
    return PayloadView(_get(row, "payload_length"), kept, payload, ccsid, cs.codec,
                       cs.known and isinstance(ccsid, int) and ccsid > 0,
                       _get(row, "payload_format"))
