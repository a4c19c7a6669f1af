"""The baselines each stage is measured against, in the same run.

* :func:`struct_unpack` -- a straightforward per-record decoder of MQMD v2 +
  MQDLH, written the way a user would with a pymqi-style field list: read the
  length prefix, ``struct.unpack_from`` both structures, decode every
  character field to ``str`` and strip MQ's blank padding.
* :func:`fromhex` -- ``bytes.fromhex`` over exactly the hex a text capture
  carries (dmpmqmsg ``X`` lines, amqsbcg dump lines); extracting the hex is
  not timed, so this is the floor any reader of the format pays.

Both stream the file: memory stays flat whatever its size.
"""

from __future__ import annotations

import re
import struct
import time

#: Hex of a dmpmqmsg ``X`` line and of an amqsbcg dump line (the 8 groups).
DMPMQMSG_HEX = re.compile(rb"^X ([0-9A-F]+)\r?$", re.M)
AMQSBCG_HEX = re.compile(rb"^[0-9A-F]{8}:  ((?:[0-9A-F]{2,8} ?)+?) +'", re.M)


def struct_unpack(path: str, limit: int) -> tuple[int, float]:
    """Decode up to ``limit`` records of a dlqlens raw capture; (messages, seconds)."""
    from dlqlens.capture.raw import HEADER_SIZE
    from dlqlens.mq.structs import MQDLH, MQMD

    md_fmt = struct.Struct(MQMD.struct_format("<", 2))
    dlh_fmt = struct.Struct(MQDLH.struct_format("<"))
    md_names = [f.name for f in MQMD.fields_for(2)]
    dlh_names = [f.name for f in MQDLH.fields]
    n = 0
    start = time.perf_counter()
    with open(path, "rb") as fh:
        fh.seek(HEADER_SIZE)
        while n < limit:
            prefix = fh.read(4)
            if len(prefix) < 4:
                break
            (length,) = struct.unpack(">I", prefix)
            rec = fh.read(length)
            if rec[:4] != b"MD  ":
                break
            md = dict(zip(md_names, (v.decode("latin-1").rstrip() if isinstance(v, bytes) else v
                                     for v in md_fmt.unpack_from(rec, 0))))
            dlh = dict(zip(dlh_names, (v.decode("latin-1").rstrip() if isinstance(v, bytes) else v
                                       for v in dlh_fmt.unpack_from(rec, md_fmt.size))))
            if md["Format"] == "MQDEAD" and dlh["Reason"] < 0:  # keep the values live
                break
            n += 1
    return n, time.perf_counter() - start


def fromhex(path: str, pattern: re.Pattern, messages: int,
            chunk_bytes: int = 64 * 1024 * 1024) -> tuple[int, float]:
    """Time ``bytes.fromhex`` over every hex run ``pattern`` finds in ``path``.

    Returns ``(messages, seconds)``: the file's message count (given) and the
    time spent in ``bytes.fromhex`` alone.
    """
    spent = 0.0
    with open(path, "rb") as fh:
        tail = b""
        while True:
            block = fh.read(chunk_bytes)
            if not block:
                data, tail = tail, b""
            else:
                data = tail + block
                cut = data.rfind(b"\n") + 1
                data, tail = data[:cut], data[cut:]
            hexes = [h.decode("ascii") for h in pattern.findall(data)]
            start = time.perf_counter()
            for h in hexes:
                bytes.fromhex(h)
            spent += time.perf_counter() - start
            if not block:
                break
    return messages, spent


def dpkt_iterate(path: str, messages: int) -> tuple[int, float]:
    """The floor of any reader of a pcap file: dpkt's bare iteration of its
    packet records (no link, IP or TCP parsing), timed; ``messages`` is the
    count of MQ messages the file holds, so the rate compares with the
    reader's messages per second over the same file's bytes."""
    import dpkt

    start = time.perf_counter()
    with open(path, "rb") as fh:
        for _ts, _buf in dpkt.pcap.Reader(fh):
            pass
    return messages, time.perf_counter() - start
