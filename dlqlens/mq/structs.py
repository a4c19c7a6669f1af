"""MQ structures declared once, as field tables.

Every structure dlqlens reads or writes is a tuple of :class:`Field` rows (MQ
field name, MQ type, length in bytes, the structure version that added it, a
one-line meaning). Everything else is derived from these tables: offsets and
lengths (``MQMD_LENGTH_1`` and the other ``*_LENGTH_*`` constants of
:mod:`dlqlens.mq.constants`), the numpy structured dtypes used by the
vectorised decoder, the ``struct`` formats used by the reference decoder and
the writers, the Arrow/Spark schema, the header chain
(:mod:`dlqlens.mq.chaining`) and the docs.

Layouts are those of IBM MQ's ``cmqc.h`` (MQ 9.4.5) and of the structure pages
of IBM's documentation ("MQMD - Message descriptor", "MQDLH - Dead-letter
header", "MQXQH - Transmission-queue header", "MQTM - Trigger message",
"MQTMC2 - Trigger message 2 (character format)", "MQMDE - Message descriptor
extension", "MQRFH - Rules and formatting header", "MQRFH2 - Rules and
formatting header 2", "MQCIH - CICS bridge header", "MQIIH - IMS information
header", "MQDH - Distribution header", "MQWIH - Work information header",
"MQRMH - Reference message header"). MQ structures have no padding: they are
made of 4-byte integers and byte/character arrays.
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
        with trailing blanks removed (IBM MQ, "Coding in C", handling character
        strings: the queue manager pads with blanks, applications may end a
        field with a null); byte fields stay
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
# MQMD — IBM "MQMD - Message descriptor"
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
# MQDLH — IBM "MQDLH - Dead-letter header"
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
# MQXQH — IBM "MQXQH - Transmission-queue header" (embedded MQMD version 1 as MsgDesc.*)
# --------------------------------------------------------------------------
MQXQH = Struct("MQXQH", "XQH ", (
    _f("StrucId", MQCHAR, 4, "Structure identifier 'XQH '"),
    _f("Version", MQLONG, 4, "Structure version, 1"),
    _f("RemoteQName", MQCHAR, 48, "Apparent final destination queue"),
    _f("RemoteQMgrName", MQCHAR, 48, "Destination queue manager"),
) + tuple(Field("MsgDesc." + f.name, f.type, f.length, 1, "Original MQMD: " + f.doc)
          for f in _MQMD_V1), format_name="MQXMIT  ")

# --------------------------------------------------------------------------
# MQTM and MQTMC2 — IBM "MQTM - Trigger message", "MQTMC2 - Trigger message 2"
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
# Headers with the common 32-byte prefix (StrucId, Version, StrucLength,
# Encoding, CodedCharSetId, Format, Flags): the Encoding, CodedCharSetId and
# Format describe the data that follows, StrucLength says where it starts.
# IBM: the structure pages named in the module docstring; MQCIH's and MQIIH's
# Encoding and CodedCharSetId are "reserved" in cmqc.h.
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

#: MQRFH version 1: the prefix is its whole fixed part (name/value string after it).
MQRFH = Struct("MQRFH", "RFH ", _PREFIX, format_name="MQHRF   ")

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

MQCIH = Struct("MQCIH", "CIH ", _PREFIX + (
    _f("ReturnCode", MQLONG, 4, "Return code from the bridge (MQCRC_*)"),
    _f("CompCode", MQLONG, 4, "MQ completion code or CICS EIBRESP"),
    _f("Reason", MQLONG, 4, "MQ reason or feedback code, or CICS EIBRESP2"),
    _f("UOWControl", MQLONG, 4, "Unit-of-work control (MQCUOWC_*)"),
    _f("GetWaitInterval", MQLONG, 4, "Wait interval of the bridge task's MQGET"),
    _f("LinkType", MQLONG, 4, "Link type (MQCLT_*)"),
    _f("OutputDataLength", MQLONG, 4, "Output COMMAREA data length"),
    _f("FacilityKeepTime", MQLONG, 4, "Bridge facility release time"),
    _f("ADSDescriptor", MQLONG, 4, "Send/receive ADS descriptor (MQCADSD_*)"),
    _f("ConversationalTask", MQLONG, 4, "Whether the task can be conversational"),
    _f("TaskEndStatus", MQLONG, 4, "Status at end of task (MQCTES_*)"),
    _f("Facility", MQBYTE, 8, "Bridge facility token"),
    _f("Function", MQCHAR, 4, "MQ call name or CICS EIBFN function"),
    _f("AbendCode", MQCHAR, 4, "Abend code"),
    _f("Authenticator", MQCHAR, 8, "Password or passticket"),
    _f("Reserved1", MQCHAR, 8, "Reserved"),
    _f("ReplyToFormat", MQCHAR, 8, "MQ format name of reply message"),
    _f("RemoteSysId", MQCHAR, 4, "Remote CICS system identifier"),
    _f("RemoteTransId", MQCHAR, 4, "CICS RTRANSID"),
    _f("TransactionId", MQCHAR, 4, "Transaction to attach"),
    _f("FacilityLike", MQCHAR, 4, "Terminal emulated attributes"),
    _f("AttentionId", MQCHAR, 4, "AID key"),
    _f("StartCode", MQCHAR, 4, "Transaction start code (MQCSC_*)"),
    _f("CancelCode", MQCHAR, 4, "Abend transaction code"),
    _f("NextTransactionId", MQCHAR, 4, "Next transaction to attach"),
    _f("Reserved2", MQCHAR, 8, "Reserved"),
    _f("Reserved3", MQCHAR, 8, "Reserved"),
    _f("CursorPosition", MQLONG, 4, "Cursor position", 2),
    _f("ErrorOffset", MQLONG, 4, "Offset of error in message", 2),
    _f("InputItem", MQLONG, 4, "Reserved", 2),
    _f("Reserved4", MQLONG, 4, "Reserved", 2),
), format_name="MQCICS  ")

MQIIH = Struct("MQIIH", "IIH ", _PREFIX + (
    _f("LTermOverride", MQCHAR, 8, "Logical terminal override"),
    _f("MFSMapName", MQCHAR, 8, "Message format services map name"),
    _f("ReplyToFormat", MQCHAR, 8, "MQ format name of reply message"),
    _f("Authenticator", MQCHAR, 8, "RACF password or passticket"),
    _f("TranInstanceId", MQBYTE, 16, "Transaction instance identifier"),
    _f("TranState", MQCHAR, 1, "Transaction state"),
    _f("CommitMode", MQCHAR, 1, "Commit mode"),
    _f("SecurityScope", MQCHAR, 1, "Security scope"),
    _f("Reserved", MQCHAR, 1, "Reserved"),
), format_name="MQIMS   ")

#: MQDH: fixed part; StrucLength covers the MQOR and MQPMR records after it.
MQDH = Struct("MQDH", "DH  ", _PREFIX + (
    _f("PutMsgRecFields", MQLONG, 4, "Flags saying which MQPMR fields are present"),
    _f("RecsPresent", MQLONG, 4, "Number of object records present"),
    _f("ObjectRecOffset", MQLONG, 4, "Offset of first object record from start of MQDH"),
    _f("PutMsgRecOffset", MQLONG, 4, "Offset of first put-message record from start of MQDH"),
), format_name="MQHDIST ")

MQWIH = Struct("MQWIH", "WIH ", _PREFIX + (
    _f("ServiceName", MQCHAR, 32, "Service name"),
    _f("ServiceStep", MQCHAR, 8, "Service step name"),
    _f("MsgToken", MQBYTE, 16, "Message token"),
    _f("Reserved", MQCHAR, 32, "Reserved"),
), format_name="MQHWIH  ")

#: MQRMH: fixed part; StrucLength adds the strings after it (not the bulk data).
MQRMH = Struct("MQRMH", "RMH ", _PREFIX + (
    _f("ObjectType", MQCHAR, 8, "Object type"),
    _f("ObjectInstanceId", MQBYTE, 24, "Object instance identifier"),
    _f("SrcEnvLength", MQLONG, 4, "Length of source environment data"),
    _f("SrcEnvOffset", MQLONG, 4, "Offset of source environment data"),
    _f("SrcNameLength", MQLONG, 4, "Length of source object name"),
    _f("SrcNameOffset", MQLONG, 4, "Offset of source object name"),
    _f("DestEnvLength", MQLONG, 4, "Length of destination environment data"),
    _f("DestEnvOffset", MQLONG, 4, "Offset of destination environment data"),
    _f("DestNameLength", MQLONG, 4, "Length of destination object name"),
    _f("DestNameOffset", MQLONG, 4, "Offset of destination object name"),
    _f("DataLogicalLength", MQLONG, 4, "Length of bulk data"),
    _f("DataLogicalOffset", MQLONG, 4, "Low offset of bulk data"),
    _f("DataLogicalOffset2", MQLONG, 4, "High offset of bulk data"),
), format_name="MQHREF  ")

# --------------------------------------------------------------------------
# MQI call structures a client connection carries (read from network captures,
# never part of a message): IBM "MQOD - Object descriptor", "MQPMO - Put-message
# options", "MQGMO - Get-message options" (cmqc.h layouts; the pointer fields
# MQPTR are 4 bytes on the wire, as the client protocol carries them: Wireshark's
# MQ dissector reads OD version 2 as 200 bytes, PMO version 2 as 152, GMO
# version 4 as 112). Not in STRUCTS: they are not message headers.
# --------------------------------------------------------------------------
MQOD = Struct("MQOD", "OD  ", (
    _f("StrucId", MQCHAR, 4, "Structure identifier 'OD  '"),
    _f("Version", MQLONG, 4, "Structure version, 1 to 4"),
    _f("ObjectType", MQLONG, 4, "Object type (MQOT_*)"),
    _f("ObjectName", MQCHAR, 48, "Object name: the queue opened"),
    _f("ObjectQMgrName", MQCHAR, 48, "Object queue manager name"),
    _f("DynamicQName", MQCHAR, 48, "Dynamic queue name (model queues)"),
    _f("AlternateUserId", MQCHAR, 12, "Alternate user identifier"),
    _f("RecsPresent", MQLONG, 4, "Number of object records (distribution lists)", 2),
    _f("KnownDestCount", MQLONG, 4, "Local queues opened successfully", 2),
    _f("UnknownDestCount", MQLONG, 4, "Remote queues opened successfully", 2),
    _f("InvalidDestCount", MQLONG, 4, "Queues that failed to open", 2),
    _f("ObjectRecOffset", MQLONG, 4, "Offset of the first object record", 2),
    _f("ResponseRecOffset", MQLONG, 4, "Offset of the first response record", 2),
    _f("ObjectRecPtr", MQLONG, 4, "Address of the first object record", 2),
    _f("ResponseRecPtr", MQLONG, 4, "Address of the first response record", 2),
    _f("AlternateSecurityId", MQBYTE, 40, "Alternate security identifier", 3),
    _f("ResolvedQName", MQCHAR, 48, "Resolved queue name (output)", 3),
    _f("ResolvedQMgrName", MQCHAR, 48, "Resolved queue manager name (output)", 3),
))

MQPMO = Struct("MQPMO", "PMO ", (
    _f("StrucId", MQCHAR, 4, "Structure identifier 'PMO '"),
    _f("Version", MQLONG, 4, "Structure version, 1 to 3"),
    _f("Options", MQLONG, 4, "Put options (MQPMO_*)"),
    _f("Timeout", MQLONG, 4, "Reserved"),
    _f("Context", MQLONG, 4, "Object handle of the input queue for context"),
    _f("KnownDestCount", MQLONG, 4, "Messages sent to local queues (output)"),
    _f("UnknownDestCount", MQLONG, 4, "Messages sent to remote queues (output)"),
    _f("InvalidDestCount", MQLONG, 4, "Messages that could not be sent (output)"),
    _f("ResolvedQName", MQCHAR, 48, "Resolved destination queue name (output)"),
    _f("ResolvedQMgrName", MQCHAR, 48, "Resolved destination queue manager name (output)"),
    _f("RecsPresent", MQLONG, 4, "Number of put-message records", 2),
    _f("PutMsgRecFields", MQLONG, 4, "Fields present in the put-message records", 2),
    _f("PutMsgRecOffset", MQLONG, 4, "Offset of the first put-message record", 2),
    _f("ResponseRecOffset", MQLONG, 4, "Offset of the first response record", 2),
    _f("PutMsgRecPtr", MQLONG, 4, "Address of the first put-message record", 2),
    _f("ResponseRecPtr", MQLONG, 4, "Address of the first response record", 2),
    _f("OriginalMsgHandle", MQBYTE, 8, "Original message handle", 3),
    _f("NewMsgHandle", MQBYTE, 8, "New message handle", 3),
    _f("Action", MQLONG, 4, "Type of put (MQACTP_*)", 3),
    _f("PubLevel", MQLONG, 4, "Publication level", 3),
))

MQGMO = Struct("MQGMO", "GMO ", (
    _f("StrucId", MQCHAR, 4, "Structure identifier 'GMO '"),
    _f("Version", MQLONG, 4, "Structure version, 1 to 4"),
    _f("Options", MQLONG, 4, "Get options (MQGMO_*)"),
    _f("WaitInterval", MQLONG, 4, "Wait interval in milliseconds"),
    _f("Signal1", MQLONG, 4, "Signal"),
    _f("Signal2", MQLONG, 4, "Signal identifier"),
    _f("ResolvedQName", MQCHAR, 48, "Resolved name of the queue the message was got from (output)"),
    _f("MatchOptions", MQLONG, 4, "Match options (MQMO_*)", 2),
    _f("GroupStatus", MQCHAR, 1, "Message in a group (output)", 2),
    _f("SegmentStatus", MQCHAR, 1, "Logical message is a segment (output)", 2),
    _f("Segmentation", MQCHAR, 1, "Further segmentation allowed (output)", 2),
    _f("Reserved1", MQCHAR, 1, "Reserved", 2),
    _f("MsgToken", MQBYTE, 16, "Message token", 3),
    _f("ReturnedLength", MQLONG, 4, "Length of message data returned (output)", 3),
    _f("Reserved2", MQLONG, 4, "Reserved", 4),
    _f("MsgHandle", MQBYTE, 8, "Message handle", 4),
))

#: The MQI call structures above, by IBM name.
API_STRUCTS: dict[str, Struct] = {s.name: s for s in (MQOD, MQPMO, MQGMO)}

#: Every structure, by IBM name (docs tables and size tests iterate over it).
STRUCTS: dict[str, Struct] = {
    s.name: s for s in (MQMD, MQDLH, MQXQH, MQTM, MQTMC2, MQMDE, MQRFH, MQRFH2, MQCIH, MQIIH,
                        MQDH, MQWIH, MQRMH, MQHEADER_PREFIX)
}
