"""MQ structures declared once, as field tables.

Every structure dlqlens reads is a tuple of :class:`Field` rows (MQ field name,
MQ type, length in bytes, the structure version that added it, a one-line
meaning). Everything else is derived from these tables: offsets, the numpy
structured dtypes used by the vectorised decoder, the ``struct`` formats used by
the reference decoder and the writers, the Arrow/Spark schema and the docs.

Layouts follow IBM's ``cmqc.h`` as transcribed in ``spec/mqmd.md``,
``spec/mqdlh.md`` and ``spec/mqtm.md`` (MQ 9.4.5): MQMD v1 324 bytes, v2 364;
MQDLH 172; MQXQH 428 (with an embedded version-1 MQMD); MQTM 684; MQTMC2 684
(v1) / 732 (v2); MQMDE 72; the MQRFH2 fixed part 36. MQ structures have no
padding: they are made of 4-byte integers and byte/character arrays.
"""

from __future__ import annotations

import struct as _struct
from dataclasses import dataclass
from functools import cached_property

import numpy as np

MQLONG = "MQLONG"  #: 4-byte signed integer in the governing integer encoding
MQCHAR = "MQCHAR"  #: characters in the governing CCSID, blank padded
MQBYTE = "MQBYTE"  #: opaque bytes, never converted


@dataclass(frozen=True)
class Field:
    """One field of an MQ structure.

    Attributes
    ----------
    name : str
        IBM's field name (``BackoutCount``, ``DestQName``).
    type : str
        ``MQLONG``, ``MQCHAR`` or ``MQBYTE``.
    length : int
        Length in bytes.
    version : int
        The structure version that added the field (1 for most).
    doc : str
        One-line meaning.
    """

    name: str
    type: str
    length: int
    version: int = 1
    doc: str = ""


def _f(name: str, type_: str, length: int, doc: str, version: int = 1) -> Field:
    return Field(name, type_, length, version, doc)


@dataclass(frozen=True)
class Struct:
    """An MQ structure: its identifier, its field table and what derives from it.

    Attributes
    ----------
    name : str
        IBM's structure name (``MQMD``).
    struc_id : str
        The 4-character ``StrucId`` (``"MD  "``), or ``""`` for none.
    fields : tuple of Field
        In layout order.
    format_name : str
        The 8-character ``MQFMT_*`` value that announces this structure in a
        header chain, or ``""``.
    """

    name: str
    struc_id: str
    fields: tuple[Field, ...]
    format_name: str = ""

    @cached_property
    def offsets(self) -> dict[str, int]:
        """Field name -> byte offset from the start of the structure."""
        out, pos = {}, 0
        for f in self.fields:
            out[f.name] = pos
            pos += f.length
        return out

    @cached_property
    def versions(self) -> tuple[int, ...]:
        return tuple(sorted({f.version for f in self.fields}))

    def fields_for(self, version: int | None = None) -> tuple[Field, ...]:
        """The fields present in ``version`` (default: the latest)."""
        v = self.versions[-1] if version is None else version
        return tuple(f for f in self.fields if f.version <= v)

    def length(self, version: int | None = None) -> int:
        """Length in bytes of ``version`` (default: the latest)."""
        return sum(f.length for f in self.fields_for(version))

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}")

    def struct_format(self, byteorder: str, version: int | None = None) -> str:
        """A :mod:`struct` format string (``'<'`` or ``'>'`` byte order)."""
        codes = []
        for f in self.fields_for(version):
            codes.append("i" if f.type == MQLONG else f"{f.length}s")
        return byteorder + "".join(codes)

    def numpy_dtype(self, byteorder: str, version: int | None = None) -> np.dtype:
        """A numpy structured dtype over the raw bytes of one structure.

        Integer fields are ``i4`` in ``byteorder`` (``'<'`` or ``'>'``);
        character and byte fields are ``V<length>`` (raw bytes).
        """
        names, formats, offsets = [], [], []
        for f in self.fields_for(version):
            names.append(f.name)
            formats.append(f"{byteorder}i4" if f.type == MQLONG else f"V{f.length}")
            offsets.append(self.offsets[f.name])
        return np.dtype(
            {"names": names, "formats": formats, "offsets": offsets,
             "itemsize": self.length(version)}
        )

    def pack(self, values: dict, byteorder: str, codec: str,
             version: int | None = None, pad: bytes | None = None) -> bytes:
        """Build the bytes of one structure (writers and test builders).

        Parameters
        ----------
        values : dict
            Field name -> value. Missing integers are 0, missing characters
            blanks, missing bytes zeros. ``StrucId`` defaults to
            :attr:`struc_id`.
        byteorder : {'<', '>'}
            Integer byte order.
        codec : str
            Python codec for character fields (``'latin-1'``, ``'cp500'``...).
        pad : bytes, optional
            The pad character already encoded; default: a blank in ``codec``.

        Raises
        ------
        ValueError
            When a character value does not fit its field once encoded.
        """
        blank = pad if pad is not None else " ".encode(codec)
        args = []
        for f in self.fields_for(version):
            v = values.get(f.name)
            if f.name == "StrucId" and v is None:
                v = self.struc_id
            if f.type == MQLONG:
                args.append(int(v or 0))
            elif f.type == MQCHAR:
                raw = v if isinstance(v, (bytes, bytearray)) else str(v or "").encode(codec)
                if len(raw) > f.length:
                    raise ValueError(
                        f"{self.name}.{f.name}: {len(raw)} bytes do not fit {f.length}")
                args.append(bytes(raw) + blank * (f.length - len(raw)))
            else:
                raw = bytes(v or b"")
                if len(raw) > f.length:
                    raise ValueError(
                        f"{self.name}.{f.name}: {len(raw)} bytes do not fit {f.length}")
                args.append(raw + b"\0" * (f.length - len(raw)))
        return _struct.pack(self.struct_format(byteorder, version), *args)

    def unpack(self, buf: bytes, byteorder: str, codec: str,
               version: int | None = None) -> dict:
        """Reference decoder for one structure (tests, small inputs).

        Character fields are decoded with ``codec`` and cut at the first NUL
        with trailing blanks removed (``spec/mqmd.md`` §4.3); byte fields stay
        ``bytes``.
        """
        out = {}
        vals = _struct.unpack_from(self.struct_format(byteorder, version), buf)
        for f, v in zip(self.fields_for(version), vals):
            if f.type == MQCHAR:
                v = v.decode(codec, errors="replace").split("\0", 1)[0].rstrip(" ")
            out[f.name] = v
        return out


# --------------------------------------------------------------------------
# MQMD — spec/mqmd.md §2
# --------------------------------------------------------------------------
_MQMD_V1 = (
    _f("StrucId", MQCHAR, 4, "Structure identifier 'MD  '"),
    _f("Version", MQLONG, 4, "Structure version, 1 or 2"),
    _f("Report", MQLONG, 4, "Report and disposition options (MQRO_* bit mask)"),
    _f("MsgType", MQLONG, 4, "Message type (MQMT_*)"),
    _f("Expiry", MQLONG, 4, "Remaining lifetime in tenths of a second, -1 unlimited"),
    _f("Feedback", MQLONG, 4, "Feedback or reason code of a report (MQFB_*/MQRC_*)"),
    _f("Encoding", MQLONG, 4, "Numeric encoding of the message data (MQENC_*)"),
    _f("CodedCharSetId", MQLONG, 4, "CCSID of the message data"),
    _f("Format", MQCHAR, 8, "Format name of the message data (MQFMT_*)"),
    _f("Priority", MQLONG, 4, "Message priority, 0-9"),
    _f("Persistence", MQLONG, 4, "Persistence (MQPER_*)"),
    _f("MsgId", MQBYTE, 24, "Message identifier"),
    _f("CorrelId", MQBYTE, 24, "Correlation identifier"),
    _f("BackoutCount", MQLONG, 4, "Times the message was got under syncpoint and backed out"),
    _f("ReplyToQ", MQCHAR, 48, "Reply-to queue name"),
    _f("ReplyToQMgr", MQCHAR, 48, "Reply-to queue manager name"),
    _f("UserIdentifier", MQCHAR, 12, "Identity context: user identifier"),
    _f("AccountingToken", MQBYTE, 32, "Identity context: accounting token"),
    _f("ApplIdentityData", MQCHAR, 32, "Identity context: application data"),
    _f("PutApplType", MQLONG, 4, "Origin context: type of putting application (MQAT_*)"),
    _f("PutApplName", MQCHAR, 28, "Origin context: name of putting application"),
    _f("PutDate", MQCHAR, 8, "Origin context: put date YYYYMMDD (UTC)"),
    _f("PutTime", MQCHAR, 8, "Origin context: put time HHMMSSTH (UTC)"),
    _f("ApplOriginData", MQCHAR, 4, "Origin context: application data"),
)
_MQMD_V2 = (
    _f("GroupId", MQBYTE, 24, "Group identifier", 2),
    _f("MsgSeqNumber", MQLONG, 4, "Sequence number of logical message within group", 2),
    _f("Offset", MQLONG, 4, "Offset of data in physical message from start of logical message", 2),
    _f("MsgFlags", MQLONG, 4, "Message flags (MQMF_*)", 2),
    _f("OriginalLength", MQLONG, 4, "Length of original message, -1 undefined", 2),
)
MQMD = Struct("MQMD", "MD  ", _MQMD_V1 + _MQMD_V2)

# --------------------------------------------------------------------------
# MQDLH — spec/mqdlh.md §2
# --------------------------------------------------------------------------
MQDLH = Struct("MQDLH", "DLH ", (
    _f("StrucId", MQCHAR, 4, "Structure identifier 'DLH '"),
    _f("Version", MQLONG, 4, "Structure version, 1"),
    _f("Reason", MQLONG, 4, "Why the message was dead-lettered (MQRC_*/MQFB_*)"),
    _f("DestQName", MQCHAR, 48, "Name of the original destination queue"),
    _f("DestQMgrName", MQCHAR, 48, "Name of the original destination queue manager"),
    _f("Encoding", MQLONG, 4, "Numeric encoding of the data after the MQDLH"),
    _f("CodedCharSetId", MQLONG, 4, "CCSID of the data after the MQDLH"),
    _f("Format", MQCHAR, 8, "Format name of the data after the MQDLH"),
    _f("PutApplType", MQLONG, 4, "Type of application that put the message on the DLQ"),
    _f("PutApplName", MQCHAR, 28, "Name of application that put the message on the DLQ"),
    _f("PutDate", MQCHAR, 8, "Date the message was put on the DLQ, YYYYMMDD (UTC)"),
    _f("PutTime", MQCHAR, 8, "Time the message was put on the DLQ, HHMMSSTH (UTC)"),
), format_name="MQDEAD  ")

# --------------------------------------------------------------------------
# MQXQH — spec/mqtm.md §3 (embedded MQMD version 1 as MsgDesc.*)
# --------------------------------------------------------------------------
MQXQH = Struct("MQXQH", "XQH ", (
    _f("StrucId", MQCHAR, 4, "Structure identifier 'XQH '"),
    _f("Version", MQLONG, 4, "Structure version, 1"),
    _f("RemoteQName", MQCHAR, 48, "Apparent final destination queue"),
    _f("RemoteQMgrName", MQCHAR, 48, "Destination queue manager"),
) + tuple(Field("MsgDesc." + f.name, f.type, f.length, 1, "Original MQMD: " + f.doc)
          for f in _MQMD_V1), format_name="MQXMIT  ")

# --------------------------------------------------------------------------
# MQTM and MQTMC2 — spec/mqtm.md §1, §2
# --------------------------------------------------------------------------
MQTM = Struct("MQTM", "TM  ", (
    _f("StrucId", MQCHAR, 4, "Structure identifier 'TM  '"),
    _f("Version", MQLONG, 4, "Structure version, 1"),
    _f("QName", MQCHAR, 48, "Name of the triggered queue"),
    _f("ProcessName", MQCHAR, 48, "Name of the process definition"),
    _f("TriggerData", MQCHAR, 64, "Trigger data (queue TRIGDATA)"),
    _f("ApplType", MQLONG, 4, "Application type (process APPLTYPE, MQAT_*)"),
    _f("ApplId", MQCHAR, 256, "Application identifier (process APPLICID)"),
    _f("EnvData", MQCHAR, 128, "Environment data (process ENVRDATA)"),
    _f("UserData", MQCHAR, 128, "User data (process USERDATA)"),
), format_name="MQTRIG  ")

MQTMC2 = Struct("MQTMC2", "TMC ", (
    _f("StrucId", MQCHAR, 4, "Structure identifier 'TMC '"),
    _f("Version", MQCHAR, 4, "Structure version as characters ('   2')"),
    _f("QName", MQCHAR, 48, "Name of the triggered queue"),
    _f("ProcessName", MQCHAR, 48, "Name of the process definition"),
    _f("TriggerData", MQCHAR, 64, "Trigger data"),
    _f("ApplType", MQCHAR, 4, "Application type as characters"),
    _f("ApplId", MQCHAR, 256, "Application identifier"),
    _f("EnvData", MQCHAR, 128, "Environment data"),
    _f("UserData", MQCHAR, 128, "User data"),
    _f("QMgrName", MQCHAR, 48, "Queue manager name", 2),
))

# --------------------------------------------------------------------------
# Headers with the common 32-byte prefix — spec/mqdlh.md §7.1, mqmd.md §7
# --------------------------------------------------------------------------
_PREFIX = (
    _f("StrucId", MQCHAR, 4, "Structure identifier"),
    _f("Version", MQLONG, 4, "Structure version"),
    _f("StrucLength", MQLONG, 4, "Length of this header including its variable part"),
    _f("Encoding", MQLONG, 4, "Numeric encoding of the data that follows"),
    _f("CodedCharSetId", MQLONG, 4, "CCSID of the data that follows"),
    _f("Format", MQCHAR, 8, "Format name of the data that follows"),
    _f("Flags", MQLONG, 4, "Flags"),
)
#: The common prefix alone, used to walk any chained header that has it.
MQHEADER_PREFIX = Struct("MQHEADER", "", _PREFIX)

MQRFH2 = Struct("MQRFH2", "RFH ", _PREFIX + (
    _f("NameValueCCSID", MQLONG, 4, "CCSID of the NameValueData folders"),
), format_name="MQHRF2  ")

MQMDE = Struct("MQMDE", "MDE ", _PREFIX + (
    _f("GroupId", MQBYTE, 24, "Group identifier"),
    _f("MsgSeqNumber", MQLONG, 4, "Sequence number of logical message within group"),
    _f("Offset", MQLONG, 4, "Offset of data in physical message"),
    _f("MsgFlags", MQLONG, 4, "Message flags"),
    _f("OriginalLength", MQLONG, 4, "Length of original message"),
), format_name="MQHMDE  ")

#: Every structure, by IBM name (docs tables and size tests iterate over it).
STRUCTS: dict[str, Struct] = {
    s.name: s for s in (MQMD, MQDLH, MQXQH, MQTM, MQTMC2, MQMDE, MQRFH2, MQHEADER_PREFIX)
}

#: Formats of chained headers that start with the common prefix and whose
#: ``StrucLength`` says where the next one starts (spec/mqdlh.md §7.3).
PREFIXED_HEADER_FORMATS: dict[str, str] = {
    "MQHMDE  ": "MDE ",
    "MQHRF   ": "RFH ",
    "MQHRF2  ": "RFH ",
    "MQCICS  ": "CIH ",
    "MQIMS   ": "IIH ",
    "MQHDIST ": "DH  ",
    "MQHWIH  ": "WIH ",
    "MQHREF  ": "RMH ",
}
