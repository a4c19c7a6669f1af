"""MQ client traffic captures (pcap and pcapng): the messages an MQ client connection carried.

The containers and the packet layers are read with **dpkt** (pcap in either
byte order, microsecond or nanosecond; pcapng; Ethernet with VLAN tags,
Linux cooked captures v1 and v2, BSD loopback, raw IP; IPv4 and IPv6; TCP).
dpkt is small, pure Python and maintained; it does not reassemble TCP, which
:mod:`dlqlens.capture.pcap.tcp` does (ordering by sequence number, copies and
retransmissions dropped, gaps kept as gaps). The MQ layer
(:mod:`dlqlens.capture.pcap.fap`) is ours.

A TCP stream is read as MQ when one of its ports is 1414 (IBM MQ's default
listener port) or its first captured bytes are a TSH StrucId. Each MQPUT,
MQPUT1 and MQGET reply with an MQMD becomes a row: the MQMD bytes as the
client protocol carries them (in the TSH's byte order) and the message data
after them, decoded like every other capture (:mod:`dlqlens.decode.records`),
plus the ``network`` column: direction, verb, the connection's endpoints, the
packet's time and number, the TSHM conversation and request ids, the object
handle and the queue (see :mod:`dlqlens.decode.schema`).

What the capture does not hold is never invented: a message whose bytes were
not all captured (a gap in the TCP stream, a capture cut short, packets cut
at the snapshot length) keeps what was captured, is ``truncated`` with an
issue naming the packet, and ``data_length`` is the length the MQI call
states; a queue the capture never named is null.

IBM documentation: "MQPUT - Put message", "MQPUT1 - Put one message", "MQGET -
Get message", "MQOD - Object descriptor", "MQPMO", "MQGMO" (ResolvedQName).
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import struct
from collections import defaultdict
from collections.abc import Iterable, Iterator

from dlqlens.capture.limits import MAX_MESSAGE_BYTES
from dlqlens.capture.message import CaptureMessage
from dlqlens.capture.pcap import fap
from dlqlens.capture.pcap.tcp import Packet, reassemble
from dlqlens.capture.raw import _md_layout
from dlqlens.capture.slices import Slice
from dlqlens.decode.frames import Frames, FramesBuilder
from dlqlens.decode.issues import make_issue
from dlqlens.errors import CaptureError
from dlqlens.mq.structs import MQGMO, MQMD, MQOD, MQPMO

#: IBM MQ's default listener port.
MQ_PORT = 1414
#: pcap magic numbers as the file's first 4 bytes (both byte orders, micro- and
#: nanosecond) and the pcapng Section Header Block type.
PCAP_MAGICS = (bytes.fromhex("a1b2c3d4"), bytes.fromhex("d4c3b2a1"),
               bytes.fromhex("a1b23c4d"), bytes.fromhex("4d3cb2a1"))
PCAPNG_MAGIC = bytes.fromhex("0a0d0d0a")
#: At most this many bytes of an unframed stretch are kept in ``raw``.
MAX_RAW_KEPT = 64 * 1024


def sniff(head: bytes) -> bool:
    """True when ``head`` (a file's first bytes) starts a pcap or pcapng file."""
    if head[:4] in PCAP_MAGICS:
        return len(head) >= 24
    if head[:4] == PCAPNG_MAGIC and len(head) >= 12:
        return head[8:12] in (bytes.fromhex("1a2b3c4d"), bytes.fromhex("4d3c2b1a"))
    return False


def plan(path: str, target_bytes: int = 0, *, max_message_bytes: int | None = None) -> list[Slice]:
    """One slice: a TCP stream cannot be cut at a byte offset of the file."""
    return [Slice(path)]


# ---------------------------------------------------------------------------
# packets
# ---------------------------------------------------------------------------

def _packets(path: str, source: str):
    """``(frame, ts, src, sport, dst, dport, seq, syn, payload)`` of every TCP
    packet, and the count of packets that could not be parsed."""
    import dpkt

    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise CaptureError(f"{source}: cannot open: {exc.strerror or exc}") from exc
    with fh:
        head = fh.read(4)
        fh.seek(0)
        try:
            reader = (dpkt.pcapng.Reader(fh) if head == PCAPNG_MAGIC else dpkt.pcap.Reader(fh))
        except (ValueError, dpkt.UnpackError, struct.error) as exc:
            raise CaptureError(f"{source}: offset 0: pcap/pcapng header: expected a pcap "
                               f"(a1b2c3d4) or pcapng (0a0d0d0a) file header, found "
                               f"X'{head.hex().upper()}': {exc}") from exc
        link = reader.datalink()
        decode = _LINK.get(link)
        if decode is None:
            raise CaptureError(f"{source}: offset 0: link type: expected one of "
                               f"{', '.join(f'{k} ({v})' for k, v in _LINK_NAMES.items())}, "
                               f"found {link}")
        out, bad, stopped = [], [], None
        frame = 0
        it = iter(reader)
        while True:
            at = fh.tell()  # the packet's record (pcapng: a block before it, if any)
            try:
                ts, buf = next(it)
            except StopIteration:
                break
            except (dpkt.UnpackError, ValueError, struct.error) as exc:
                # a damaged record: the file cannot be walked past it
                size = os.fstat(fh.fileno()).st_size
                stopped = (frame + 1, at, size - at, str(exc) or type(exc).__name__)
                break
            frame += 1
            try:
                ip = decode(buf)
                tcp = ip.data
                if not isinstance(tcp, dpkt.tcp.TCP):
                    continue
                if isinstance(ip, dpkt.ip.IP):
                    src, dst = socket.inet_ntop(socket.AF_INET, ip.src), \
                        socket.inet_ntop(socket.AF_INET, ip.dst)
                else:
                    src, dst = socket.inet_ntop(socket.AF_INET6, ip.src), \
                        socket.inet_ntop(socket.AF_INET6, ip.dst)
            except (dpkt.UnpackError, ValueError, struct.error, AttributeError, OSError) as exc:
                bad.append((frame, at, str(exc) or type(exc).__name__))  # said in a row
                continue
            out.append((frame, float(ts), src, tcp.sport, dst, tcp.dport, tcp.seq,
                        bool(tcp.flags & dpkt.tcp.TH_SYN), bytes(tcp.data), at))
    return out, bad, stopped


def _ip_of(pkt):
    import dpkt

    ip = pkt.data
    if not isinstance(ip, (dpkt.ip.IP, dpkt.ip6.IP6)):
        raise ValueError("not IP")
    return ip


def _eth(buf):
    import dpkt
    return _ip_of(dpkt.ethernet.Ethernet(buf))


def _sll(buf):
    import dpkt
    return _ip_of(dpkt.sll.SLL(buf))


def _sll2(buf):
    import dpkt
    return _ip_of(dpkt.sll2.SLL2(buf))


def _loop(buf):
    import dpkt
    return _ip_of(dpkt.loopback.Loopback(buf))


def _raw_ip(buf):
    import dpkt
    return dpkt.ip6.IP6(buf) if buf[:1] and buf[0] >> 4 == 6 else dpkt.ip.IP(buf)


#: pcap LINKTYPE_* values read (tcpdump.org "Link-layer header types").
_LINK = {1: _eth, 113: _sll, 276: _sll2, 0: _loop, 108: _loop, 101: _raw_ip, 12: _raw_ip,
         14: _raw_ip, 228: _raw_ip, 229: _raw_ip}
_LINK_NAMES = {1: "Ethernet", 113: "Linux SLL", 276: "Linux SLL2", 0: "BSD loopback",
               108: "OpenBSD loopback", 101: "raw IP"}


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------

def read_pcap(path: str, *, source: str | None = None, piece: Slice | None = None,
              batch_size: int = 65536,
              max_message_bytes: int = MAX_MESSAGE_BYTES) -> Iterator[Frames]:
    """Frame the MQ messages of a pcap or pcapng capture, ``batch_size`` at a time.

    Parameters
    ----------
    path : str
        The capture file.
    source : str, optional
        Name recorded in the ``source`` column (default ``path``).
    piece : Slice, optional
        Accepted for the registry's interface; a capture is always read whole.
    batch_size : int
        Messages per :class:`~dlqlens.decode.frames.Frames`.
    max_message_bytes : int
        Message data longer than this is not kept (a ``too_large`` row).

    Yields
    ------
    Frames
        ``capture_format`` ``pcap``, MQMDs as binary, in the order of the
        packet holding each message's first byte; ``network`` per row.

    Raises
    ------
    CaptureError
        When the file is not a pcap/pcapng file or its link type is not one
        dlqlens reads (the error names the file, the offset and what was found).
    """
    source = source or path
    rows = messages_of(path, source, max_message_bytes)
    for b0 in range(0, len(rows), batch_size):
        fb = FramesBuilder(source, "pcap", "binary")
        net = []
        for number, row in enumerate(rows[b0:b0 + batch_size], start=b0 + 1):
            at = row["offset"] if row["offset"] >= 0 else None
            issues = [make_issue(code, source=source, message_number=number, field=fld,
                                 expected=exp, found=fnd, note=note, offset=at)
                      for code, fld, exp, fnd, note in row["issues"]]
            fb.add(md=row["md"], big_endian=row["big"], codec=row["codec"],
                   blank=0x40 if row["codec"] == "cp500" else 0x20, version=row["version"],
                   data=row["data"], data_length=row["data_length"], number=number,
                   offset=row["offset"], issues=issues, raw=row["raw"],
                   unknown=row.get("unknown", ()))
            net.append(row["network"])
        fr = fb.build()
        fr.network = net
        yield fr


def messages_of(path: str, source: str, max_message_bytes: int = MAX_MESSAGE_BYTES) -> list:
    """The message rows of a capture as dicts (before :class:`Frames`)."""
    pkts, bad, stopped = _packets(path, source)
    by_dir: dict[tuple, list[Packet]] = defaultdict(list)
    for frame, ts, src, sport, dst, dport, seq, syn, data, at in pkts:
        by_dir[(src, sport, dst, dport)].append(Packet(frame, ts, seq, data, syn, at))
    calls: list[fap.Call] = []
    lost: list = []
    for key, plist in by_dir.items():
        ra = reassemble(plist)
        if not ra.runs:
            continue
        first = ra.runs[0]
        if MQ_PORT not in (key[1], key[3]) and bytes(first.data[:4]) not in fap.TSH_IDS:
            continue  # not MQ
        per_run = []
        for k, run in enumerate(ra.runs):
            segs, miss = fap.segments(key, run.data, run.start,
                                      lambda off, r=run: r.packet_at(off))
            per_run.append((segs, ra.gaps[k] if k < len(ra.gaps) else None))
            for off, chunk in miss:
                frame, ts, at = run.packet_at(off - run.start)
                lost.append((frame, ts, at, key, off, chunk))
        calls.extend(fap.calls(per_run))
    calls.sort(key=lambda c: (c.first.frame, c.first.offset))
    rows = _interpret(calls, source, max_message_bytes)
    for frame, ts, at, key, off, chunk in lost:
        if len(chunk) < 12 and not chunk.strip(b"\0"):
            continue
        rows.append(_unframed(frame, ts, at, key, off, chunk))
    if bad:  # packets that could not be decoded: one row says how many, and the first
        frame, at, why = bad[0]
        row = _unframed(frame, 0, at, ("", "", "", ""), at, b"")
        row["network"]["packet_ts"] = None
        row["issues"] = [("unframed", "packet", "an Ethernet/IP/TCP packet",
                          f"{len(bad):,} packet(s) that could not be decoded, the first frame "
                          f"{frame} at offset {at:,} ({why})",
                          "MQ data in them, if any, is not in this capture's rows")]
        rows.append(row)
    if stopped is not None:  # every packet after a damaged record is lost: say so
        frame, at, rest, why = stopped
        row = _unframed(frame, 0, at, ("", "", "", ""), at, b"")
        row["network"]["packet_ts"] = None  # the record's own time could not be read
        row["issues"] = [("unframed", "packet record", "a complete pcap/pcapng packet record",
                          f"a damaged record ({why}); the {rest:,} bytes from offset {at:,} "
                          "to the end of the file could not be read",
                          "the packets after it are not in this capture's rows")]
        rows.append(row)
    rows.sort(key=lambda r: (r["network"]["frame"] or 0, r["order"]))
    return rows


def _conn(key: tuple) -> tuple:
    a, b = (key[0], key[1]), (key[2], key[3])
    return (a, b) if a <= b else (b, a)


def _text(v) -> str | None:
    v = (v or "").strip()
    return v or None


def _interpret(calls: list[fap.Call], source: str, max_message_bytes: int) -> list[dict]:
    """Walk the calls of every connection in capture order: opens name the
    queues of object handles, puts and get replies become rows."""
    pending: dict[tuple, list] = defaultdict(list)   # (conn, conv) -> [(name, qmgr, how)]
    handles: dict[tuple, tuple] = {}                 # (conn, conv, hobj) -> (name, qmgr, how)
    qmgrs: dict[tuple, str] = {}                     # (conn, conv) -> MQCONN QMgrName
    awaiting: dict[tuple, list] = defaultdict(list)  # (conn, conv) -> put rows before their reply
    rows: list[dict] = []
    for order, c in enumerate(calls):
        conn = _conn(c.stream)
        conv = (conn, c.first.conv)
        bo = c.byteorder
        codec = "cp500" if c.first.ebcdic else "latin-1"
        api = c.api()
        if c.opcode == fap.MQCONN and len(c.data) >= fap.API_HEADER + 48:
            name = _text(bytes(c.data[16:64]).decode(codec, "replace").split("\0")[0])
            if name and not name.startswith("*"):
                qmgrs[conv] = name
        elif c.opcode == fap.MQOPEN:
            od = fap.read_struct(MQOD, c.data, fap.API_HEADER, bo, codec)
            if od:
                pending[conv].append((_text(od[0]["ObjectName"]),
                                      _text(od[0]["ObjectQMgrName"]), "MQOPEN MQOD"))
        elif c.opcode == fap.SPI:
            od = _spi_od(c, bo, codec)
            if od:
                pending[conv].append((_text(od["ObjectName"]), _text(od["ObjectQMgrName"]),
                                      "SPI MQOD"))
        elif c.opcode in (fap.MQOPEN_REPLY, fap.SPI_REPLY):
            if c.opcode == fap.SPI_REPLY and b"LPOO" not in c.data:
                continue
            name = pending[conv].pop(0) if pending[conv] else None
            if api and api[0] != 2 and name is not None:
                handles[(conn, c.first.conv, api[2])] = name
        elif c.opcode in fap.MESSAGE_CALLS:
            if c.opcode == fap.MQGET_REPLY and api and api[0] == 2:
                continue  # MQCC_FAILED: no message was got
            row = _message(c, order, api, conn, conv, bo, codec, handles, qmgrs, source,
                           max_message_bytes)
            rows.append(row)
            if c.opcode == fap.MQGET_REPLY:
                _outcome(row, api)
            else:  # MQI calls are synchronous on a conversation: the next reply is its
                awaiting[conv] = [row]  # (a put sent before it was answered is not)
        elif c.opcode in (fap.MQPUT_REPLY, fap.MQPUT1_REPLY) and awaiting[conv]:
            _outcome(awaiting[conv].pop(0), api)
    return rows


def _outcome(row: dict, api) -> None:
    """The call's CompCode and Reason (the reply's API header) into ``network``."""
    from dlqlens.mq.constants import code_name

    if api is None:
        return
    row["network"].update(completion_code=api[0], reason=api[1],
                          reason_name=code_name(api[1], "reason"))


def _spi_od(c: fap.Call, bo: str, codec: str) -> dict | None:
    """The MQOD of an SPI open (after its LPOO structure), or None."""
    at = c.data.find(b"LPOO")
    if at < 0:
        at = c.data.find(b"\xd3\xd7\xd6\xd6")
    if at < 0:
        return None
    k = at
    while True:
        k = min((x for x in (c.data.find(b"OD  ", k + 1), c.data.find(b"\xd6\xc4\x40\x40", k + 1))
                 if x >= 0), default=-1)
        if k < 0:
            return None
        od = fap.read_struct(MQOD, c.data, k, bo, codec)
        if od:
            return od[0]


def _packet_time(ts, issues: list, where: str):
    """The packet's capture time (UTC), or None with a ``bad_timestamp`` issue
    when the record's seconds are outside the years 1 to 9999 (a damaged
    pcapng block's 64-bit count): unknown, never a stand-in time."""
    try:
        return dt.datetime.fromtimestamp(ts, dt.timezone.utc)
    except (ValueError, OverflowError, OSError):
        issues.append(("bad_timestamp", "packet timestamp",
                       "seconds since 1970 within the years 1 to 9999 (UTC)",
                       f"{ts!r} seconds", where))
        return None


def _message(c, order, api, conn, conv, bo, codec, handles, qmgrs, source,
             max_message_bytes) -> dict:
    verb, direction = fap.MESSAGE_CALLS[c.opcode]
    s = c.first
    client = s.stream[:2] if direction == "to_qmgr" else s.stream[2:]
    server = s.stream[2:] if direction == "to_qmgr" else s.stream[:2]
    hobj = api[2] if api else None
    issues: list = []
    where = f"frame {s.frame}, {s.stream[0]}:{s.stream[1]} -> {s.stream[2]}:{s.stream[3]}"
    net = {"direction": direction, "verb": verb,
           "client_address": client[0], "client_port": client[1],
           "server_address": server[0], "server_port": server[1],
           "packet_ts": _packet_time(s.ts, issues, where), "frame": s.frame,
           "conversation_id": s.conv, "request_id": s.request,
           "object_handle": hobj if verb != "MQPUT1" else None,
           "queue_name": None, "qmgr_name": qmgrs.get(conv), "queue_source": None,
           "completion_code": None, "reason": None, "reason_name": None}
    row = {"order": order, "offset": s.file_offset, "network": net, "issues": issues,
           "raw": None,
           "md": None, "big": False, "codec": "latin-1", "version": 0, "data": b"",
           "data_length": 0, "unknown": ("payload",)}  # null until the data is read
    buf = c.data
    pos = fap.API_HEADER
    if verb == "MQPUT1":
        od = fap.read_struct(MQOD, buf, pos, bo, codec)
        if od:
            net.update(queue_name=_text(od[0]["ObjectName"]), queue_source="MQPUT1 MQOD")
            if _text(od[0]["ObjectQMgrName"]):
                net["qmgr_name"] = _text(od[0]["ObjectQMgrName"])
            pos += od[1]
    elif hobj is not None and (conn, s.conv, hobj) in handles:
        name, qm, how = handles[(conn, s.conv, hobj)]
        net.update(queue_name=name, queue_source=how)
        if qm:
            net["qmgr_name"] = qm
    if c.orphan:
        row["issues"].append(("unframed", "TSH.ControlFlags",
                              f"the first segment of this {verb} call (with its API header "
                              f"and MQMD)", "only later segments", f"{where}: {c.cut_note}"))
        row["raw"] = bytes(buf[:MAX_RAW_KEPT])
        return row
    md = fap.md_at(buf, pos)
    if md is None or pos + md[1] > len(buf):
        if md is not None:
            found = (f"{len(buf) - pos} of its {md[1]} bytes: {c.cut_note}")
            field = "md"
        elif len(buf) > pos + 4:
            found, field = f"X'{bytes(buf[pos:pos + 8]).hex().upper()}'", "md.StrucId"
        else:
            found = f"the end of the captured call ({c.cut_note or 'no bytes'})"
            field = "md"
        row["issues"].append(("bad_md", field,
                              f"an MQMD after the {verb} call's API header ({where})", found, ""))
        row["raw"] = bytes(buf[:MAX_RAW_KEPT])
        return row
    md_bytes, md_len = md
    big, ebcdic, version = _md_layout(md_bytes[:8])
    row.update(md=md_bytes, big=big, codec="cp500" if ebcdic else "latin-1", version=version)
    pos += md_len
    opts_struct = MQGMO if verb == "MQGET" else MQPMO
    opts = fap.read_struct(opts_struct, buf, pos, bo, codec)
    if opts is None:
        label = opts_struct.name.lower()[2:]
        if not c.complete:  # cut by the capture: the MQMD is kept, the data was not captured
            row["issues"].append(("data_truncated", label,
                                  f"the {opts_struct.name}, the data length and the message "
                                  f"data ({where})",
                                  f"{max(len(buf) - pos, 0)} bytes: {c.cut_note}", ""))
            return row
        row["issues"].append(("bad_length", f"{label}.StrucId",
                              f"an {opts_struct.name} after the MQMD ({where})",
                              f"X'{bytes(buf[pos:pos + 8]).hex().upper()}'", ""))
        row["raw"] = bytes(buf[:MAX_RAW_KEPT])
        return row
    fields, olen = opts
    if opts_struct is MQPMO and fields.get("RecsPresent", 0) > 0:
        row["issues"].append(("bad_length", "pmo.RecsPresent", "0 (no put-message records)",
                              f"{fields['RecsPresent']} (a distribution list: not read)", ""))
        row["raw"] = bytes(buf[:MAX_RAW_KEPT])
        return row
    resolved = _text(fields.get("ResolvedQName"))
    if verb == "MQGET" and resolved:
        net.update(queue_name=resolved, queue_source="MQGMO ResolvedQName")
    elif net["queue_name"] is None and resolved:
        net.update(queue_name=resolved, queue_source="MQPMO ResolvedQName")
    pos += olen
    if pos + 4 > len(buf):
        row["data_length"] = 0
        row["issues"].append(("data_truncated", "message data length", "4 bytes",
                              f"{max(len(buf) - pos, 0)} bytes", c.cut_note or where))
        return row
    stated = int.from_bytes(buf[pos:pos + 4], "big" if bo == ">" else "little")
    pos += 4
    if stated > max_message_bytes:
        row["issues"].append(("too_large", "message data length",
                              f"at most {max_message_bytes:,} bytes (option maxMessageBytes)",
                              f"{stated:,} bytes; the data is not kept", where))
        row.update(raw=md_bytes, data_length=stated)  # the length is known, the data is not
        return row
    data = bytes(buf[pos:pos + stated])
    row.update(data=data, data_length=stated, unknown=())
    if len(data) < stated:
        row["issues"].append(("data_truncated", "message data", f"{stated} bytes",
                              f"{len(data)} bytes captured",
                              f"{where}: {c.cut_note or 'the call ends early'}"))
    elif len(buf) > pos + stated and c.complete:
        row["issues"].append(("length_mismatch", "message data length",
                              f"{len(buf) - pos} bytes (to the end of the {verb} call)",
                              f"{stated} bytes", where))
    return row


def _unframed(frame, ts, at, key, off, chunk) -> dict:
    where = f"frame {frame}, {key[0]}:{key[1]} -> {key[2]}:{key[3]}, stream offset {off}"
    time_issues: list = []
    net = {"direction": None, "verb": None, "client_address": None, "client_port": None,
           "server_address": None, "server_port": None,
           "packet_ts": _packet_time(ts, time_issues, where), "frame": frame,
           "conversation_id": None, "request_id": None, "object_handle": None,
           "queue_name": None, "qmgr_name": None, "queue_source": None,
           "completion_code": None, "reason": None, "reason_name": None}
    return {"order": -1, "offset": at, "network": net, "md": None, "big": False, "codec": "latin-1",
            "version": 0, "data": b"", "data_length": 0, "raw": chunk[:MAX_RAW_KEPT],
            "unknown": ("payload",),
            "issues": [("unframed", "TSH.StrucId",
                        "a TSH segment ('TSH ', 'TSHM' or 'TSHC')",
                        f"X'{chunk[:8].hex().upper()}' ({len(chunk)} bytes not framed)",
                        where)] + time_issues}


# ---------------------------------------------------------------------------
# writing (golden files, tests, benchmarks): a client putting each message
# ---------------------------------------------------------------------------

def write_pcap(path: str | os.PathLike, messages: Iterable[CaptureMessage], *,
               container: str = "pcap", byteorder: str = "<", multiplexed: bool = True,
               verb: str = "MQPUT", queue: str = "DLQLENS.TEST.Q", qmgr: str = "QM1",
               max_segment: int = 32768, mss: int = 1460,
               packet_order=None, start_ts: float = 1_700_000_000.0,
               reasons: dict | None = None) -> int:
    """Write ``messages`` as an MQ client conversation over one TCP connection.

    Parameters
    ----------
    path : path-like
    messages : iterable of CaptureMessage
        Each MQMD is sent in ``byteorder`` (the TSH's), with the message data.
    container : {'pcap', 'pcapng'}
    byteorder : {'<', '>'}
        The TSH byte order (2 little-endian, 1 big-endian) and that of every
        structure after it.
    multiplexed : bool
        TSHM segments (conversation and request ids) or plain TSH.
    verb : {'MQPUT', 'MQPUT1', 'MQGET'}
        MQOPEN + MQOPEN reply then an MQPUT per message; an MQPUT1 per
        message (its MQOD names the queue); or MQOPEN + reply then an MQGET
        reply per message (MQGMO ResolvedQName set).
    max_segment : int
        Largest TSH segment: longer calls are split into several segments.
    mss : int
        Largest TCP payload: segments are cut across packets.
    packet_order : callable, optional
        Given the list of packets ``(direction, seq, payload)`` in order,
        returns the list to write (reorder, duplicate, drop) - test hook.
    reasons : dict of int to int, optional
        The Reason of the MQPUT/MQPUT1 reply of the message at that index
        (CompCode MQCC_FAILED); the others succeed (every put gets a reply).

    Returns
    -------
    int
        The number of messages written.
    """
    import dpkt

    client, server = ("10.1.1.2", 50414), ("10.1.1.1", MQ_PORT)
    packets: list[tuple[int, bytes]] = []  # (0 client->server / 1 back, TCP payload)
    streams = [bytearray(), bytearray()]
    codec = "latin-1"

    def tsh(opcode, flags, payload_len, conv=1, req=0):
        hdr = 36 if multiplexed else 28
        out = (b"TSHM" if multiplexed else b"TSH ") + struct.pack(">I", hdr + payload_len)
        if multiplexed:
            out += struct.pack(">II", conv, req)
        enc = 546 if byteorder == "<" else 273
        out += bytes([2 if byteorder == "<" else 1, opcode, flags, 0]) + b"\0" * 8
        out += struct.pack(byteorder + "iH", enc, 819) + b"\0\0"
        return out

    def call(direction, opcode, body: bytes, hobj=0, cc=0, rc=0):
        api = struct.pack(">I", 0) + struct.pack(byteorder + "iii", cc, rc, hobj)
        whole = api + body
        hdr = 36 if multiplexed else 28
        room = max_segment - hdr
        chunks = [whole[i:i + room] for i in range(0, len(whole), room)] or [b""]
        total = hdr * len(chunks) + len(whole)
        chunks[0] = struct.pack(">I", total) + chunks[0][4:]
        for k, ch in enumerate(chunks):
            flags = (fap.TCF_FIRST if k == 0 else 0) | (fap.TCF_LAST if k == len(chunks) - 1 else 0)
            seg = tsh(opcode, flags, len(ch)) + ch
            streams[direction] += seg
            for i in range(0, len(seg), mss):
                packets.append((direction, seg[i:i + mss]))

    od = MQOD.pack({"Version": 1, "ObjectType": 1, "ObjectName": queue, "ObjectQMgrName": ""},
                   byteorder, codec, 1)
    if verb in ("MQPUT", "MQGET"):
        call(0, fap.MQOPEN, od + struct.pack(byteorder + "i", 16))
        call(1, fap.MQOPEN_REPLY, od + struct.pack(byteorder + "i", 16), hobj=7)
    n = 0
    for m in messages:
        full = m.full_md()
        md = MQMD.pack(full, byteorder, m.md_codec, version=int(full["Version"]))
        length = struct.pack(byteorder + "i", len(m.data))
        rc = (reasons or {}).get(n, 0)
        if verb in ("MQPUT", "MQPUT1"):
            pmo = MQPMO.pack({"Version": 1}, byteorder, codec, 1)
            if verb == "MQPUT":
                call(0, fap.MQPUT, md + pmo + length + m.data, hobj=7)
            else:
                call(0, fap.MQPUT1, od + md + pmo + length + m.data)
            resolved = MQPMO.pack({"Version": 1, "ResolvedQName": queue}, byteorder, codec, 1)
            call(1, fap.MQPUT_REPLY if verb == "MQPUT" else fap.MQPUT1_REPLY,
                 (od if verb == "MQPUT1" else b"") + md + resolved
                 + struct.pack(byteorder + "i", 0),
                 hobj=7 if verb == "MQPUT" else 0, cc=2 if rc else 0, rc=rc)
        else:
            gmo = MQGMO.pack({"Version": 2, "ResolvedQName": queue}, byteorder, codec, 2)
            call(1, fap.MQGET_REPLY, md + gmo + length + m.data, hobj=7)
        n += 1
    seqs = [1000, 5000]
    placed = []
    for direction, payload in packets:
        placed.append((direction, seqs[direction], payload))
        seqs[direction] += len(payload)
    if packet_order is not None:
        placed = packet_order(placed)
    link = 1
    with open(path, "wb") as fh:
        if container == "pcapng":
            w = dpkt.pcapng.Writer(fh, snaplen=65535, linktype=link)
        else:
            w = dpkt.pcap.Writer(fh, snaplen=65535, linktype=link)
        syn = [(0, seqs_syn, b"") for seqs_syn in (999,)] + [(1, 4999, b"")]
        for k, (direction, seq, payload) in enumerate(syn + placed):
            src, dst = (client, server) if direction == 0 else (server, client)
            flags = dpkt.tcp.TH_SYN if not payload and k < 2 else dpkt.tcp.TH_ACK | dpkt.tcp.TH_PUSH
            if k == 1:
                flags |= dpkt.tcp.TH_ACK
            tcp = dpkt.tcp.TCP(sport=src[1], dport=dst[1], seq=seq, flags=flags, data=payload)
            ip = dpkt.ip.IP(src=socket.inet_aton(src[0]), dst=socket.inet_aton(dst[0]),
                            p=dpkt.ip.IP_PROTO_TCP, data=tcp)
            ip.len = len(bytes(ip))
            eth = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6,
                                         type=dpkt.ethernet.ETH_TYPE_IP, data=ip)
            w.writepkt(bytes(eth), ts=start_ts + k * 0.001)
    return n
