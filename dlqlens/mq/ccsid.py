"""CCSID -> Python codec, character-set family and byte translation tables.

EBCDIC code pages CPython lacks (1047, 277, 278, 280, 284, 285, 297, 871,
1141-1149) come from the ``ebcdic`` package, which registers them as
``cpNNNN`` codecs when imported.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from functools import lru_cache

import ebcdic  # noqa: F401  (registers cp1047, cp277, cp1141... as codecs)
import numpy as np

ASCII = "ascii"
EBCDIC = "ebcdic"
UTF16 = "utf16"

#: CCSID -> (Python codec, family). Only what MQ captures commonly carry;
#: anything else falls back to ``cp<ccsid>`` when Python knows that codec.
_KNOWN: dict[int, tuple[str, str]] = {
    37: ("cp037", EBCDIC), 273: ("cp273", EBCDIC), 277: ("cp277", EBCDIC),
    278: ("cp278", EBCDIC), 280: ("cp280", EBCDIC), 284: ("cp284", EBCDIC),
    285: ("cp285", EBCDIC), 297: ("cp297", EBCDIC), 500: ("cp500", EBCDIC),
    871: ("cp871", EBCDIC), 875: ("cp875", EBCDIC), 1026: ("cp1026", EBCDIC),
    1047: ("cp1047", EBCDIC), 1140: ("cp1140", EBCDIC), 1141: ("cp1141", EBCDIC),
    1142: ("cp1142", EBCDIC), 1143: ("cp1143", EBCDIC), 1144: ("cp1144", EBCDIC),
    1145: ("cp1145", EBCDIC), 1146: ("cp1146", EBCDIC), 1147: ("cp1147", EBCDIC),
    1148: ("cp1148", EBCDIC), 1149: ("cp1149", EBCDIC),
    367: ("ascii", ASCII), 437: ("cp437", ASCII), 819: ("latin-1", ASCII),
    850: ("cp850", ASCII), 858: ("cp858", ASCII), 912: ("iso8859-2", ASCII),
    923: ("iso8859-15", ASCII), 1051: ("hp-roman8", ASCII), 1208: ("utf-8", ASCII),
    1250: ("cp1250", ASCII), 1251: ("cp1251", ASCII), 1252: ("cp1252", ASCII),
    5348: ("cp1252", ASCII), 1200: ("utf-16", UTF16), 13488: ("utf-16", UTF16),
    17584: ("utf-16", UTF16),
}

#: Header names use only the characters MQ allows in object names (IBM MQ,
#: "Rules for naming IBM MQ objects"), which map identically in all EBCDIC
#: Latin code pages; these decode MQ headers whose CCSID is unknown or 0, by
#: family.
HEADER_CODEC = {ASCII: "latin-1", EBCDIC: "cp500"}


@dataclass(frozen=True)
class Charset:
    """How to read character data of one CCSID.

    Attributes
    ----------
    ccsid : int
        The CCSID asked for.
    codec : str
        Python codec name.
    family : str
        ``'ascii'`` (ASCII-based, UTF-8 included), ``'ebcdic'`` or ``'utf16'``.
    known : bool
        False when the CCSID had no mapping and a family default was used.
    """

    ccsid: int
    codec: str
    family: str
    known: bool = True

    @property
    def blank(self) -> int:
        """The blank byte MQ pads character fields with."""
        return 0x40 if self.family == EBCDIC else 0x20

    @property
    def single_byte(self) -> bool:
        return self.codec not in ("utf-8", "utf-16") and self.family != UTF16


@lru_cache(maxsize=None)
def charset(ccsid: int, default_family: str = ASCII) -> Charset:
    """Return the :class:`Charset` of ``ccsid``.

    CCSIDs dlqlens has no table entry for are tried as ``cp<ccsid>``; when
    Python has no such codec the family default (``latin-1`` for ASCII,
    ``cp500`` for EBCDIC) is used and ``known`` is False, so decoders can
    record an issue instead of failing.
    """
    if ccsid in _KNOWN:
        codec, fam = _KNOWN[ccsid]
        return Charset(ccsid, codec, fam)
    try:
        name = codecs.lookup(f"cp{ccsid}").name
    except LookupError:
        return Charset(ccsid, HEADER_CODEC.get(default_family, "latin-1"),
                       default_family, known=False)
    fam = EBCDIC if name in _EBCDIC_CODECS else ASCII
    return Charset(ccsid, name, fam)


_EBCDIC_CODECS = {c for c, fam in _KNOWN.values() if fam == EBCDIC} | {
    "cp1025", "cp1097", "cp1112", "cp1122", "cp1123", "cp290", "cp420", "cp424",
    "cp833", "cp838", "cp870"}


@lru_cache(maxsize=None)
def to_ascii_table(codec: str) -> tuple[np.ndarray, np.ndarray]:
    """Byte translation table of a single-byte ``codec`` into ASCII (made
    once per codec; the arrays are read-only).

    Returns
    -------
    table : numpy.ndarray of uint8, shape (256,)
        ``table[b]`` is the ASCII byte for ``b`` (0 where there is none).
    is_ascii : numpy.ndarray of bool, shape (256,)
        True where ``b`` decodes to one ASCII character. Rows with any other
        byte need a per-value decode.
    """
    table = np.zeros(256, dtype=np.uint8)
    ok = np.zeros(256, dtype=bool)
    for b in range(256):
        try:
            ch = bytes([b]).decode(codec)
        except UnicodeDecodeError:
            continue
        if len(ch) == 1 and ord(ch) < 0x80:
            table[b] = ord(ch)
            ok[b] = True
    table.flags.writeable = False
    ok.flags.writeable = False
    return table, ok


def codec_family(codec: str) -> str:
    """``'ebcdic'`` for an EBCDIC Python codec, ``'ascii'`` otherwise."""
    return EBCDIC if codecs.lookup(codec).name in _EBCDIC_CODECS else ASCII


def family_of_struc_id(raw: bytes, ascii_id: str) -> str | None:
    """Which family ``raw`` spells ``ascii_id`` in: ``'ascii'``, ``'ebcdic'`` or None."""
    if raw == ascii_id.encode("latin-1"):
        return ASCII
    if raw == ascii_id.encode("cp500"):
        return EBCDIC
    return None
