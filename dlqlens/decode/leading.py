"""What structure a record's bytes start with, when nothing outside them says.

A hex dump pasted from a ticket holds the bytes of one message, but nothing
says whether they start at the MQMD (a browse of the queue with its
descriptor), at the MQDLH (a DLQ browser that shows the message data only),
at an MQXQH (a message on a transmission queue), an MQTM or an MQRFH2. Each
of these starts with a StrucId and a Version (IBM MQ, "MQMD - Message
descriptor", "MQDLH - Dead-letter header", "MQXQH - Transmission-queue
header", "MQTM - Trigger message", "MQRFH2 - Rules and formatting header 2"):
the StrucId in ASCII or EBCDIC gives the character family, the Version read
big- or little-endian gives the integer byte order. A structure that carries
an Encoding field (MQDLH, MQRFH2, the MQMD embedded in an MQXQH) confirms
the order when the Version alone would allow both (it never does for the
versions MQ defines, but a damaged record may); anything else is refused
with the evidence (:func:`leading_structure` returns the reason).
"""

from __future__ import annotations

from dataclasses import dataclass

from dlqlens.mq.structs import MQDLH, MQMD, MQRFH, MQRFH2, MQTM, MQXQH, Struct

#: StrucId -> (structure, valid versions); the MQRFH/MQRFH2 pair share ``RFH ``.
_LEADING: dict[str, tuple[tuple[Struct, tuple[int, ...]], ...]] = {
    "MD  ": ((MQMD, (1, 2)),),
    "DLH ": ((MQDLH, (1,)),),
    "XQH ": ((MQXQH, (1,)),),
    "TM  ": ((MQTM, (1,)),),
    "RFH ": ((MQRFH2, (2,)), (MQRFH, (1,))),
}
#: Integer encodings a leading structure is read in (no MQMD says which):
#: MQENC_NATIVE of a big-endian (AIX, 273) or little-endian (x86, 546) platform.
ENCODING_BIG, ENCODING_LITTLE = 273, 546
#: Character sets a leading structure's characters are read in.
CCSID_ASCII, CCSID_EBCDIC = 819, 500

#: The StrucIds recognised, for error messages.
KNOWN = ", ".join(f"'{s}'" for s in _LEADING)


@dataclass(frozen=True)
class Leading:
    """The structure a record starts with and how it is laid out.

    Attributes
    ----------
    struct : Struct
        ``MQMD``, ``MQDLH``, ``MQXQH``, ``MQTM``, ``MQRFH2`` or ``MQRFH``.
    big_endian : bool
    ebcdic : bool
    version : int
    """

    struct: Struct
    big_endian: bool
    ebcdic: bool
    version: int

    @property
    def name(self) -> str:
        return self.struct.name

    @property
    def codec(self) -> str:
        return "cp500" if self.ebcdic else "latin-1"

    @property
    def blank(self) -> int:
        return 0x40 if self.ebcdic else 0x20

    @property
    def encoding(self) -> int:
        return ENCODING_BIG if self.big_endian else ENCODING_LITTLE

    @property
    def ccsid(self) -> int:
        return CCSID_EBCDIC if self.ebcdic else CCSID_ASCII

    @property
    def format(self) -> str:
        """The MQ format name (8 characters) that announces this structure."""
        return self.struct.format_name or ""


def _encoding_field_order(head: bytes, st: Struct) -> set[bool]:
    """Byte orders (True: big) in which the structure's Encoding field reads
    as an MQENC value with a defined integer nibble (1 or 2), when it has one
    and ``head`` holds it."""
    name = {"MQDLH": "Encoding", "MQRFH2": "Encoding", "MQRFH": "Encoding",
            "MQXQH": "MsgDesc.Encoding"}.get(st.name)
    if name is None:
        return {True, False}
    at = st.offsets[name]
    b = head[at:at + 4]
    if len(b) < 4:
        return {True, False}
    out = set()
    for big in (True, False):
        v = int.from_bytes(b, "big" if big else "little", signed=True)
        if 0 <= v < 0x10000 and (v & 0x0F) in (1, 2):
            out.add(big)
    return out


def leading_structure(head: bytes) -> Leading | str:
    """The structure ``head`` (a record's first bytes) starts with.

    Parameters
    ----------
    head : bytes
        At least the first 8 bytes of the record (more lets the Encoding
        fields of an MQDLH, MQRFH2 or MQXQH confirm the byte order).

    Returns
    -------
    Leading or str
        The layout, or a sentence saying what was found and why it does not
        fit (the StrucId in hex, the Version in both byte orders).
    """
    if len(head) < 8:
        return (f"{len(head)} bytes: too short for a StrucId and a Version "
                f"(8 bytes; expected one of {KNOWN})")
    sid = head[:4]
    for ebcdic, codec in ((False, "latin-1"), (True, "cp500")):
        text = sid.decode(codec)
        if text not in _LEADING:
            continue
        be = int.from_bytes(head[4:8], "big", signed=True)
        le = int.from_bytes(head[4:8], "little", signed=True)
        for st, versions in _LEADING[text]:
            orders = [big for big, v in ((True, be), (False, le)) if v in versions]
            if len(orders) == 2:  # not possible for versions 1 and 2; kept safe
                orders = [o for o in orders if o in _encoding_field_order(head, st)]
            if len(orders) == 1:
                return Leading(st, orders[0], ebcdic, be if orders[0] else le)
        allowed = " or ".join(str(v) for _, vs in _LEADING[text] for v in vs)
        return (f"StrucId {text!r} ({'EBCDIC' if ebcdic else 'ASCII'}, "
                f"X'{sid.hex().upper()}') with Version X'{head[4:8].hex().upper()}' "
                f"({be} big-endian, {le} little-endian): expected {allowed}")
    return (f"StrucId X'{sid.hex().upper()}' ({sid.decode('latin-1')!r} in ASCII, "
            f"{sid.decode('cp500')!r} in EBCDIC): expected one of {KNOWN}, in ASCII or EBCDIC")


__all__ = ["CCSID_ASCII", "CCSID_EBCDIC", "ENCODING_BIG", "ENCODING_LITTLE", "KNOWN",
           "Leading", "leading_structure"]
