"""Inputs of the benchmarks: seeded dead letters, captures of any size, rules tables.

Captures are streamed to disk: a raw capture of ten million messages (about
5.7 GB) is written from a block of distinct template records, each copy with
a fresh MsgId, so the generator holds one block (a few MB) and the index
(8 bytes a record) in memory, never the capture.
"""

from __future__ import annotations

import os
import random
import resource
import struct

import numpy as np

QUEUES = [f"APP.{area}.{kind}" for area in ("ORDERS", "PAYMENTS", "STOCK", "BILLING", "AUDIT")
          for kind in ("IN", "REPLY", "EVENTS", "BATCH", "RETRY")]
APPS = ["order-svc", "pay-gw", "stock.jar", "amqrmppa", "billing-batch", "audit"]
QMGRS = ["QM1", "QM2", "QMGW.EU", "QMGW.US"]
REASONS = [2053, 2051, 2085, 2035, 2087, 2189, 2030, 2052]

#: Distinct template records a large raw capture cycles through.
TEMPLATE_RECORDS = 4096


def make_messages(n: int, seed: int = 11):
    """``n`` dead letters (MQMD v2 + MQDLH + a 24-byte JSON payload), seeded.

    Destinations, queue managers, reasons, applications, message types
    (20 % requests with a ReplyToQ) and persistence vary; every message has a
    distinct MsgId and the same length (592 bytes with its raw length prefix).
    """
    from dlqlens.capture.message import dead_letter

    rng = random.Random(seed)
    for i in range(n):
        request = rng.random() < 0.2
        yield dead_letter(
            {"Format": "MQSTR", "PutApplName": rng.choice(APPS), "PutApplType": 6,
             "MsgType": 1 if request else 8, "Persistence": rng.randint(0, 1),
             "ReplyToQ": f"REPLY.{rng.randint(0, 9)}" if request else "",
             "ReplyToQMgr": rng.choice(QMGRS) if request else "",
             "UserIdentifier": "appuser", "PutDate": "20240315",
             "PutTime": f"10{rng.randint(0, 59):02d}{rng.randint(0, 59):02d}{rng.randint(0, 99):02d}",
             "MsgId": i.to_bytes(24, "big")},
            {"Reason": rng.choice(REASONS), "DestQName": rng.choice(QUEUES),
             "DestQMgrName": rng.choice(QMGRS), "PutApplType": 6, "PutApplName": "amqrmppa",
             "PutDate": "20240315", "PutTime": "11153157"},
            b'{"order":%012d}  ' % i)


def write_raw_capture(path: str | os.PathLike, n: int, seed: int = 11,
                      block: int = TEMPLATE_RECORDS) -> int:
    """Write a dlqlens raw capture of ``n`` messages, streamed.

    The first ``min(n, block)`` messages are :func:`make_messages`; the rest
    repeat them with MsgId set to the message's number, in blocks written with
    one ``write`` each. Byte-identical to ``write_raw(path, ...)`` over
    messages built one by one, for the first block.

    Returns
    -------
    int
        Messages written.
    """
    from dlqlens.capture.raw import FORMAT_VERSION, HEADER_SIZE, INDEX_MAGIC, MAGIC
    from dlqlens.mq.structs import MQMD

    templates = [m.md_bytes() + m.data for m in make_messages(min(n, block), seed)]
    body = len(templates[0])
    if any(len(t) != body for t in templates):
        raise ValueError("benchmark templates must all have the same length")
    rec = 4 + body
    tpl = np.frombuffer(b"".join(struct.pack(">I", body) + t for t in templates),
                        np.uint8).reshape(len(templates), rec)
    msgid_at = 4 + MQMD.offsets["MsgId"]
    offsets = np.empty(n, dtype=">u8")
    written = 0
    with open(path, "wb") as fh:
        fh.write(MAGIC + struct.pack(">I", FORMAT_VERSION))
        while written < n:
            k = min(len(templates), n - written)
            chunk = tpl[:k].copy()
            numbers = np.arange(written, written + k, dtype=">u8")
            chunk[:, msgid_at + 16:msgid_at + 24] = numbers.view(np.uint8).reshape(k, 8)
            fh.write(chunk.tobytes())
            offsets[written:written + k] = HEADER_SIZE + rec * np.arange(written, written + k,
                                                                         dtype=np.uint64)
            written += k
        fh.write(offsets.tobytes())
        fh.write(struct.pack(">Q", n) + INDEX_MAGIC)
    return n


def make_table(n_rules: int, seed: int = 7) -> str:
    """A runmqdlq rules table of ``n_rules`` rules (the last a catch-all), seeded.

    Generic DESTQ/APPLNAME/DESTQM patterns, REASON, MSGTYPE and PERSIST
    values, RETRY/FWD/DISCARD/IGNORE actions with ``&DESTQ``/``&REPLYQ``
    substitutions, over the names :func:`make_messages` uses.
    """
    rng = random.Random(seed)
    lines = ["INPUTQ(SYSTEM.DEAD.LETTER.QUEUE) RETRYINT(30) WAIT(NO)"]
    for i in range(n_rules - 1):
        pats = []
        if rng.random() < 0.4:
            q = rng.choice(QUEUES)
            pats.append(f"DESTQ({q.rsplit('.', 1)[0]}.*)" if rng.random() < 0.5 else f"DESTQ({q})")
        if rng.random() < 0.6:
            pats.append(f"REASON({rng.choice(REASONS)})")
        if rng.random() < 0.25:
            app = rng.choice(APPS)
            pats.append(f"APPLNAME('{app[:3]}*')" if rng.random() < 0.5 else f"APPLNAME('{app}')")
        if rng.random() < 0.15:
            pats.append(f"DESTQM({rng.choice(QMGRS)[:3]}?*)")
        if rng.random() < 0.1:
            pats.append("MSGTYPE(MQMT_REQUEST) REPLYQ(?*)")
        if rng.random() < 0.1:
            pats.append("PERSIST(MQPER_PERSISTENT)")
        if not pats:
            pats.append(f"REASON({rng.choice(REASONS)})")
        action = rng.random()
        if action < 0.35:
            act = f"ACTION(RETRY) RETRY({rng.randint(1, 6)})"
        elif action < 0.55 and "REPLYQ(?*)" in " ".join(pats):
            act = "ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM)"
        elif action < 0.8:
            act = f"ACTION(FWD) FWDQ(DEADQ.{i:03d}) HEADER({rng.choice(['YES', 'NO'])})"
        elif action < 0.9:
            act = "ACTION(FWD) FWDQ(&DESTQ) FWDQM(&DESTQM)"
        elif action < 0.97:
            act = "ACTION(DISCARD)"
        else:
            act = "ACTION(IGNORE)"
        lines.append(" ".join(pats) + " " + act)
    lines.append("ACTION(FWD) FWDQ(REALLY.DEAD.QUEUE) HEADER(YES)")
    return "\n".join(lines) + "\n"


def peak_rss_mb() -> float:
    """This process's peak resident memory (``ru_maxrss``), MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def proc_status_mb(pid: int | str, key: str = "VmHWM") -> float:
    """A memory line of ``/proc/PID/status`` (``VmHWM`` peak, ``VmRSS`` current; PID may be
    ``"self"``), MB;
    NaN where it cannot be read (another OS, a process that ended)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")
