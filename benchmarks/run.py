"""Decoder throughput against baselines measured in the same run.

    python benchmarks/run.py [--messages N] [--quick] [--json]

Stages (one core, this process):

* ``raw``: dlqlens raw reader + full MQMD+MQDLH decode, against a per-record
  ``struct.unpack`` decoder of MQMD v2 + MQDLH (the way a user would write it
  with a pymqi-style field list) over the same file.
* ``dmpmqmsg`` and ``amqsbcg``: the text readers + decode, against
  ``bytes.fromhex`` over the same hex (the floor any hex reader pays).

Prints messages per second and the ratio to the baseline; ``--json`` prints
one JSON object per stage with ``stage``, ``messages``, ``msgs_per_s``,
``baseline``, ``ratio_vs_baseline``, ``peak_rss_mb``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import struct
import sys
import tempfile
import time

from dlqlens.capture.amqsbcg import write_amqsbcg
from dlqlens.capture.dmpmqmsg import write_dmpmqmsg
from dlqlens.capture.message import dead_letter
from dlqlens.capture.raw import HEADER_SIZE, write_raw
from dlqlens.capture.reader import ReadOptions, plan_pieces, read_piece
from dlqlens.mq.structs import MQDLH, MQMD


def _messages(n):
    for i in range(n):
        yield dead_letter(
            {"Format": "MQSTR", "PutApplName": "order-svc", "PutDate": "20240315",
             "PutTime": "10153012", "UserIdentifier": "appuser", "MsgId": i.to_bytes(24, "big")},
            {"Reason": (2053, 2085, 2035)[i % 3], "DestQName": f"APP.Q{i % 50}",
             "DestQMgrName": "QM1", "PutApplType": 6, "PutApplName": "amqrmppa",
             "PutDate": "20240315", "PutTime": "10153157"},
            b'{"order":%d,"amount":12.50}' % i)


def _decode(path):
    opts = ReadOptions()
    n = 0
    for piece in plan_pieces([path], opts):
        for batch in read_piece(piece, opts):
            n += batch.num_rows
    return n


def _baseline_struct(path):
    """Per-record struct.unpack of MQMD v2 + MQDLH, fields decoded to str."""
    md_fmt = struct.Struct(MQMD.struct_format("<", 2))
    dlh_fmt = struct.Struct(MQDLH.struct_format("<"))
    n = 0
    with open(path, "rb") as fh:
        buf = fh.read()
    p = HEADER_SIZE
    end = len(buf)
    rows = []
    while p + 4 <= end:
        ln = int.from_bytes(buf[p:p + 4], "big")
        if buf[p + 4:p + 8] != b"MD  ":
            break
        md = md_fmt.unpack_from(buf, p + 4)
        dlh = dlh_fmt.unpack_from(buf, p + 4 + 364)
        rows.append(([v.decode("latin-1").rstrip() if isinstance(v, bytes) else v for v in md],
                     [v.decode("latin-1").rstrip() if isinstance(v, bytes) else v for v in dlh]))
        n += 1
        p += 4 + ln
    return n


def _baseline_fromhex(path, pattern):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    n = 0
    for chunk in re.findall(pattern, text, re.M):
        bytes.fromhex(chunk)
        n += 1
    return n


def _time(fn, *a):
    t = time.perf_counter()
    n = fn(*a)
    return n, time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="dlqlens decoder benchmarks")
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--quick", action="store_true", help="20,000 messages")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    n = 20_000 if a.quick else a.messages
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "b.raw")
        dmp = os.path.join(tmp, "b.dmp")
        bcg = os.path.join(tmp, "b.bcg")
        write_raw(raw, _messages(n))
        write_dmpmqmsg(dmp, _messages(n))
        write_amqsbcg(bcg, _messages(min(n, 100_000)))
        stages = [
            ("raw", raw, _baseline_struct, (raw,), "struct.unpack per record"),
            ("dmpmqmsg", dmp, _baseline_fromhex, (dmp, r"^X ([0-9A-F]+)$"), "bytes.fromhex"),
            ("amqsbcg", bcg, _baseline_fromhex, (bcg, r"^[0-9A-F]{8}:  ([0-9A-F ]+?) +'"),
             "bytes.fromhex"),
        ]
        for stage, path, base_fn, base_args, base_name in stages:
            got, secs = _time(_decode, path)
            bn, bsecs = _time(base_fn, *base_args)
            rate = got / secs
            base_rate = bn / bsecs if bsecs else float("inf")
            results.append({"stage": stage, "messages": got, "msgs_per_s": round(rate),
                            "baseline": base_name, "baseline_units_per_s": round(base_rate),
                            "ratio_vs_baseline": round(rate / base_rate, 3),
                            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})
    for r in results:
        if a.json:
            print(json.dumps(r))
        else:
            print(f"{r['stage']:9s} {r['messages']:>9d} msgs {r['msgs_per_s']:>10,d} msg/s   "
                  f"baseline ({r['baseline']}) {r['baseline_units_per_s']:>10,d}/s   "
                  f"ratio {r['ratio_vs_baseline']:.2f}   peak RSS {r['peak_rss_mb']} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
