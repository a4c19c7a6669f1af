"""Messages to write: an MQMD as field values plus the message data bytes.

The writers of every capture format (:mod:`dlqlens.capture.raw`,
:mod:`dlqlens.capture.dmpmqmsg`, :mod:`dlqlens.capture.amqsbcg`) take
:class:`CaptureMessage` objects; :func:`dead_letter` builds one the way a queue
manager puts a message on its DLQ (IBM MQ, "MQDLH - Dead-letter header":
MQMD Format ``MQDEAD``, MQMD Encoding/CCSID describing the MQDLH, the MQDLH's
own Encoding/CCSID/Format describing the original data).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dlqlens.mq.ccsid import charset
from dlqlens.mq.constants import MQFMT
from dlqlens.mq.structs import MQDLH, MQMD

#: MQMD field values a capture message does not give: those of a version-2
#: ``MQMD_DEFAULT`` (IBM MQ, "Initial values and language declarations for
#: MQMD") as a Linux x86-64 queue manager resolves them (MQENC_NATIVE 546,
#: CCSID 1208) for a queue with DEFPRTY(0) and DEFPSIST(NO).
MD_DEFAULTS: dict = {
    "Version": 2, "Report": 0, "MsgType": 8, "Expiry": -1, "Feedback": 0,
    "Encoding": 546, "CodedCharSetId": 1208, "Format": "", "Priority": 0,
    "Persistence": 0, "MsgId": b"\0" * 24, "CorrelId": b"\0" * 24, "BackoutCount": 0,
    "ReplyToQ": "", "ReplyToQMgr": "", "UserIdentifier": "", "AccountingToken": b"\0" * 32,
    "ApplIdentityData": "", "PutApplType": 0, "PutApplName": "", "PutDate": "",
    "PutTime": "", "ApplOriginData": "", "GroupId": b"\0" * 24, "MsgSeqNumber": 1,
    "Offset": 0, "MsgFlags": 0, "OriginalLength": -1,
}


def byteorder_of(encoding: int) -> str:
    """``'>'`` for MQENC integer normal (low nibble 1), ``'<'`` otherwise (2, reversed)."""
    return ">" if (encoding & 0x0F) == 1 else "<"


@dataclass
class CaptureMessage:
    """One message as a capture holds it.

    Attributes
    ----------
    md : dict
        MQMD field values by IBM name; missing fields take
        :data:`MD_DEFAULTS`. ``md["Version"]`` selects a version-1 or version-2 MQMD.
    data : bytes
        The message data (MQDLH and further headers included).
    md_byteorder : str
        Byte order of the MQMD's own integers in a raw capture (``'<'``/``'>'``).
    md_codec : str
        Codec of the MQMD's own characters in a raw capture.
    """

    md: dict
    data: bytes
    md_byteorder: str = "<"
    md_codec: str = "latin-1"
    extra: dict = field(default_factory=dict)

    def full_md(self) -> dict:
        out = dict(MD_DEFAULTS)
        out.update(self.md)
        return out

    def md_bytes(self) -> bytes:
        """The MQMD as bytes in :attr:`md_byteorder` / :attr:`md_codec`."""
        md = self.full_md()
        return MQMD.pack(md, self.md_byteorder, self.md_codec, version=int(md["Version"]))


def dead_letter(md: dict, dlh: dict, payload: bytes, *, encoding: int = 546,
                ccsid: int = 1208, md_byteorder: str | None = None,
                md_codec: str | None = None) -> CaptureMessage:
    """Build a dead-letter message: MQDLH + payload, MQMD Format ``MQDEAD``.

    Parameters
    ----------
    md : dict
        MQMD fields of the original message (its Encoding, CodedCharSetId and
        Format move into the MQDLH unless ``dlh`` sets them).
    dlh : dict
        MQDLH fields (``Reason``, ``DestQName``, ``DestQMgrName``,
        ``PutApplType``, ``PutApplName``, ``PutDate``, ``PutTime``...).
    payload : bytes
        The original message data.
    encoding, ccsid : int
        The MQDLH's own encoding and CCSID (what the MQMD will say).
    md_byteorder, md_codec : str, optional
        Layout of the MQMD itself in a raw capture; by default the same
        family as ``encoding``/``ccsid``.

    Returns
    -------
    CaptureMessage
    """
    orig = dict(MD_DEFAULTS)
    orig.update(md)
    d = {"Encoding": orig["Encoding"], "CodedCharSetId": orig["CodedCharSetId"],
         "Format": orig["Format"], "Version": 1}
    d.update(dlh)
    cs = charset(ccsid)
    header = MQDLH.pack(d, byteorder_of(encoding), cs.codec)
    new_md = dict(orig)
    new_md.update({"Format": MQFMT["MQFMT_DEAD_LETTER_HEADER"].rstrip(), "Encoding": encoding,
                   "CodedCharSetId": ccsid})
    if md_codec is None:
        md_codec = cs.codec if cs.single_byte else "latin-1"
    return CaptureMessage(md=new_md, data=header + payload,
                          md_byteorder=md_byteorder or byteorder_of(encoding),
                          md_codec=md_codec)
