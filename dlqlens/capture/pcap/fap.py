"""The MQ client protocol on a reassembled TCP stream: TSH segments, MQI calls, messages.

Layouts follow Wireshark's MQ dissector (``epan/dissectors/packet-mq.c``),
the public reference for IBM MQ's formats and protocols (FAP); semantics
follow IBM's MQI documentation (MQOD, MQMD, MQPMO, MQGMO, MQPUT, MQPUT1,
MQGET). What is read:

**TSH** (transmission segment header), 28 bytes, or 36 for ``TSHM``::

    0  StrucId     'TSH ', 'TSHM' (multiplexed: +8 bytes) or 'TSHC', ASCII or EBCDIC
    4  MQSegmLen   segment length, TSH included, always big-endian
    8  ConvId, RequestId (TSHM only, big-endian, 4 bytes each)
    +8 ByteOrder   1 big-endian, 2 little-endian: the integers after the TSH
    +9 SegmType    0x83 MQOPEN, 0x86 MQPUT, 0x87 MQPUT1, 0x8C SPI,
                   0x93 MQOPEN reply, 0x95 MQGET reply, 0x9C SPI reply...
    +10 CtlFlag1   0x10 first segment of a call, 0x20 last segment
    +20 Encoding, +24 CCSID (2 bytes)

**An MQI call** is one segment or several (first flag on the first, last flag
on the last; the following segments hold only a TSH and more bytes). The
first segment has a 16-byte API header after the TSH (reply length
big-endian, CompCode, Reason, object handle Hobj). Then:

* MQPUT:        MQMD, MQPMO, 4-byte data length, message data
* MQPUT1:       MQOD, MQMD, MQPMO, 4-byte data length, message data
* MQGET reply:  MQMD, MQGMO, 4-byte data length, message data
* MQOPEN:       MQOD (the queue), options; its reply gives the Hobj
* SPI (open):   ... LPOO ... MQOD (JMS opens a queue so); its reply gives the Hobj

The queue a message was put to is the MQPUT1's MQOD ObjectName, or the
MQOD of the open whose reply returned the MQPUT's Hobj on the same
conversation; the queue a message was got from is the MQGMO's ResolvedQName
(an output field the queue manager fills), or the open's MQOD.
"""

from __future__ import annotations

import struct as _struct
from dataclasses import dataclass, field

from dlqlens.mq.structs import MQCHAR, MQGMO, MQMD, MQOD, MQPMO, Struct

#: TSH StrucIds, ASCII and EBCDIC, -> True when multiplexed (TSHM: 8 more bytes).
TSH_IDS = {b"TSH ": False, b"TSHC": False, b"TSHM": True,
           b"\xe3\xe2\xc8\x40": False, b"\xe3\xe2\xc8\xc3": False, b"\xe3\xe2\xc8\xd4": True}
TSH_LENGTH = 28
TCF_FIRST, TCF_LAST = 0x10, 0x20
#: Largest segment accepted (MQ negotiates at most 32 KiB segments; generous).
MAX_SEGMENT = 1 << 20
API_HEADER = 16

MQCONN, MQOPEN, MQGET, MQPUT, MQPUT1, SPI = 0x81, 0x83, 0x85, 0x86, 0x87, 0x8C
MQCONN_REPLY, MQOPEN_REPLY, MQGET_REPLY, SPI_REPLY = 0x91, 0x93, 0x95, 0x9C
MQPUT_REPLY, MQPUT1_REPLY = 0x96, 0x97
#: Segment types whose calls carry a message, -> (verb, direction).
MESSAGE_CALLS = {MQPUT: ("MQPUT", "to_qmgr"), MQPUT1: ("MQPUT1", "to_qmgr"),
                 MQGET_REPLY: ("MQGET", "from_qmgr")}
_MD_LENGTHS = {1: MQMD.length(1), 2: MQMD.length(2)}
#: MQOD version 4 adds three MQCHARV (20 bytes each) and ResolvedType (Wireshark).
MQOD_LENGTH_4 = MQOD.length(3) + 3 * 20 + 4


@dataclass
class Segment:
    stream: tuple
    offset: int          # stream offset of the StrucId
    multiplexed: bool
    ebcdic: bool
    length: int          # MQSegmLen as stated
    conv: int | None
    request: int | None
    big_endian: bool
    opcode: int
    flags: int
    body: bytes          # the bytes after the TSH that the capture holds
    complete: bool       # the whole segment was captured
    frame: int
    ts: float
    file_offset: int = -1  # the record of the packet holding the StrucId


@dataclass
class Call:
    """One MQI call or reply, its segments joined."""

    stream: tuple
    opcode: int
    first: Segment
    data: bytearray = field(default_factory=bytearray)
    complete: bool = False
    cut_note: str = ""
    #: only later segments were captured (no API header, no structures)
    orphan: bool = False

    @property
    def byteorder(self) -> str:
        return ">" if self.first.big_endian else "<"

    def api(self) -> tuple[int, int, int] | None:
        """(CompCode, Reason, Hobj) of the API header, or None when cut."""
        if len(self.data) < API_HEADER:
            return None
        b = self.byteorder
        return tuple(int.from_bytes(self.data[k:k + 4], "big" if b == ">" else "little",
                                    signed=True) for k in (4, 8, 12))


def segments(stream: tuple, data: bytes, start: int, packet_at) -> tuple[list[Segment], list]:
    """The TSH segments of one run of a stream.

    Returns ``(segments, lost)``: ``lost`` lists ``(stream offset, bytes)``
    stretches where no segment could be framed (the walk looks for the next
    TSH StrucId there). A last segment cut by the end of the run is returned
    with ``complete`` False.
    """
    out: list[Segment] = []
    lost = []
    p, n = 0, len(data)
    while p + 12 <= n:
        seg = _segment_at(stream, data, p, start, packet_at)
        if seg is None:
            q = _next_tsh(data, p + 1)
            lost.append((start + p, bytes(data[p:q])))
            p = q
            continue
        out.append(seg)
        p += seg.length
    if p < n:
        lost.append((start + p, bytes(data[p:n])))
    return out, lost


def _next_tsh(data: bytes, p: int) -> int:
    best = len(data)
    for pre in (b"TSH", b"\xe3\xe2\xc8"):
        k = data.find(pre, p)
        if k >= 0:
            best = min(best, k)
    return best


def _segment_at(stream, data, p, start, packet_at) -> Segment | None:
    sid = bytes(data[p:p + 4])
    if sid not in TSH_IDS:
        return None
    mux = TSH_IDS[sid]
    hdr = TSH_LENGTH + (8 if mux else 0)
    length = int.from_bytes(data[p + 4:p + 8], "big")
    m = 8 if mux else 0
    if length < hdr or length > MAX_SEGMENT or p + 8 + m + 3 > len(data):
        return None
    order = data[p + 8 + m]
    if order not in (1, 2):
        return None
    end = min(p + length, len(data))
    frame, ts, file_offset = packet_at(p)
    return Segment(stream=stream, offset=start + p, multiplexed=mux, ebcdic=sid[0] == 0xE3,
                   length=length,
                   conv=int.from_bytes(data[p + 8:p + 12], "big") if mux else None,
                   request=int.from_bytes(data[p + 12:p + 16], "big") if mux else None,
                   big_endian=order == 1, opcode=data[p + 9 + m], flags=data[p + 10 + m],
                   body=bytes(data[p + hdr:end]) if end > p + hdr else b"",
                   complete=p + length <= len(data), frame=frame, ts=ts,
                   file_offset=file_offset)


def calls(runs: list[tuple[list[Segment], tuple[int, int] | None]]) -> list[Call]:
    """Join the segments of each MQI call (segment types 0x80 and above),
    per conversation.

    ``runs`` are the segments of each run of a stream, with the gap
    ``(start, end)`` (stream offsets) that follows the run, or None after the
    last. A call whose segments were not all captured is returned with
    ``complete`` False and a note saying what is missing; a call is never
    continued across a gap.
    """
    out: list[Call] = []
    open_: dict = {}

    def close(cur: Call, note: str) -> None:
        cur.cut_note = cur.cut_note or note
        out.append(cur)

    for segs, gap in runs:
        for s in segs:
            if s.opcode < 0x80:
                continue
            key = (s.stream, s.conv)
            cur = open_.pop(key, None)
            if s.flags & TCF_FIRST or cur is None:
                if cur is not None:
                    close(cur, "the capture has no last segment of this call")
                cur = Call(s.stream, s.opcode, s)
                if not s.flags & TCF_FIRST:
                    cur.cut_note = "the capture has no first segment of this call"
                    cur.orphan = True  # the API header and structures were not captured
            cur.data += s.body
            if not s.complete:
                close(cur, f"the capture lost the stream's bytes from offset "
                           f"{s.offset + len(s.body) + (36 if s.multiplexed else TSH_LENGTH)}")
            elif s.flags & TCF_LAST:
                cur.complete = not cur.cut_note
                out.append(cur)
            else:
                open_[key] = cur
        for cur in open_.values():
            close(cur, f"the capture lost the stream's bytes from offset {gap[0]} to {gap[1]}"
                  if gap else "the capture ends before the last segment of this call")
        open_.clear()
    return out


_LAYOUTS: dict = {}


def _layout(st: Struct, version: int, byteorder: str):
    """``(struct.Struct, fields)`` of ``st`` version ``version``, made once."""
    key = (st.name, version, byteorder)
    if key not in _LAYOUTS:
        _LAYOUTS[key] = (_struct.Struct(st.struct_format(byteorder, version)),
                         st.fields_for(version), st.length(version))
    return _LAYOUTS[key]


def read_struct(st: Struct, buf: bytes, pos: int, byteorder: str, codec: str,
                max_version: int | None = None) -> tuple[dict, int] | None:
    """``(fields, length)`` of the MQ structure ``st`` at ``pos`` when its
    StrucId (ASCII or EBCDIC) and Version fit and it is all there, else None.
    Character fields are decoded as :meth:`dlqlens.mq.structs.Struct.unpack` does."""
    sid = bytes(buf[pos:pos + 4])
    if sid not in (st.struc_id.encode("ascii"), st.struc_id.encode("cp500")):
        return None
    if pos + 8 > len(buf):
        return None
    version = int.from_bytes(buf[pos + 4:pos + 8], "big" if byteorder == ">" else "little")
    if st is MQOD and version == 4:
        read_as = 3
    elif version in st.versions:
        read_as = version
    else:
        return None
    packer, fields, read_len = _layout(st, read_as, byteorder)
    length = MQOD_LENGTH_4 if st is MQOD and version == 4 else read_len
    if pos + length > len(buf):
        return None
    if sid[0] >= 0xC0:
        codec = "cp500"
    out = {}
    for f, v in zip(fields, packer.unpack_from(buf, pos)):
        if f.type == MQCHAR:
            v = v.decode(codec, errors="replace").split("\0", 1)[0].rstrip(" ")
        out[f.name] = v
    return out, length


def md_at(buf: bytes, pos: int) -> tuple[bytes, int] | None:
    """``(MQMD bytes, length)`` at ``pos`` (version 1 or 2, either byte order)."""
    sid = bytes(buf[pos:pos + 4])
    if sid not in (b"MD  ", b"\xd4\xc4\x40\x40"):
        return None
    v = bytes(buf[pos + 4:pos + 8])
    for order in ("big", "little"):
        ver = int.from_bytes(v, order)
        if ver in (1, 2):
            length = _MD_LENGTHS[ver]
            return bytes(buf[pos:pos + length]), length
    return None
