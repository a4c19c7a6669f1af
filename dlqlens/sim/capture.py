"""Capturing simulated queues: capture files, ``ground_truth.jsonl`` and ``manifest.json``.

A capture is what ``amqsbcg``, ``dmpmqmsg -i`` or a raw dump would show at the
end of the run: a browse of the queue in delivery order. The browse discards
the expired messages it meets (IBM MQ, MQMD "Expiry (MQLONG)": an expired
message is discarded when a browse or nonbrowse MQGET would have returned
it), so expired
messages never appear in a capture; they are counted in the manifest
(``expired_discarded``), and their expiration reports go where reports go.
Messages got under syncpoint and not committed at that moment are not seen.

Every message written is described by one line of ``ground_truth.jsonl``
(see :mod:`dlqlens.sim` for the contract), streamed as the capture is written,
so nothing but the current message is held in memory. On request
(``expected=True``) each capture also gets ``<capture>.expected.jsonl``: the
values a decode of each message must give (:func:`expected_record`), computed
from what the simulator put in the message, never from a decode (the golden
files of ``datasets/``).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter

from dlqlens.capture.amqsbcg import write_amqsbcg
from dlqlens.capture.dmpmqmsg import write_dmpmqmsg
from dlqlens.capture.message import MD_DEFAULTS, CaptureMessage, byteorder_of
from dlqlens.capture.raw import write_raw
from dlqlens.mq import chaining
from dlqlens.mq.ccsid import charset
from dlqlens.mq.constants import MQFMT
from dlqlens.sim.engine import Simulation, SimulationError
from dlqlens.sim.qmgr import MQAT_UNIX, Actor, QueueManager, SimMessage
from dlqlens.sim.wire import pack_data

#: Capture formats: file extension and writer.
FORMATS = {"amqsbcg": ".bcg", "dmpmqmsg": ".dmp", "raw": ".raw"}

MQFMT_STRING = MQFMT["MQFMT_STRING"]

#: The ``pattern`` values of the ground truth.
PATTERNS = ("backout_loop", "trigger_storm", "trigger_failure", "expiry_buildup",
            "orphaned_reply", "reason_burst", "unknown_destination", "persistent_reply")

_MD_FIELDS = ("MsgId", "CorrelId", "MsgType", "Feedback", "Format", "Encoding", "CodedCharSetId",
              "Expiry", "Priority", "Persistence", "BackoutCount", "ReplyToQ", "ReplyToQMgr",
              "UserIdentifier", "PutApplType", "PutApplName", "PutDate", "PutTime")
_DLH_FIELDS = ("Reason", "DestQName", "DestQMgrName", "Encoding", "CodedCharSetId", "Format",
               "PutApplType", "PutApplName", "PutDate", "PutTime")
_TM_FIELDS = ("QName", "ProcessName", "TriggerData", "ApplType", "ApplId", "EnvData", "UserData")



def capture_file_name(qmgr: str, queue: str, fmt: str) -> str:
    """``<qmgr>_<queue>.<ext>`` with characters unsafe in file names replaced by ``_``."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", f"{qmgr}_{queue}")
    return safe + FORMATS[fmt]


def _text(v) -> str:
    return str(v).split("\0", 1)[0].rstrip(" ")


def _value(v):
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex().upper()
    if isinstance(v, str):
        return _text(v)
    return v


def patterns_of(sim: Simulation, m: SimMessage) -> list[str]:
    """Every pattern the message belongs to: those its history set (the
    primary first), then every matching label of the scenario, in the order
    the scenario registered them (each once)."""
    patterns = list(m.patterns)
    dlh = m.headers[0][1] if m.headers and m.headers[0][0] == "MQDLH" else None
    for pattern, when in sim.labels:
        if pattern not in patterns and when(m, dlh):
            patterns.append(pattern)
    return patterns


def ground_truth_record(source: str, number: int, qmgr: str, queue: str, md: dict,
                        m: SimMessage, pattern: str | None,
                        patterns: list[str] | None = None) -> dict:
    """One line of ``ground_truth.jsonl`` (see :mod:`dlqlens.sim`); ``patterns``
    defaults to ``[pattern]`` (``[]`` for None)."""
    dlh = m.headers[0][1] if m.headers and m.headers[0][0] == "MQDLH" else None
    tm = m.header("MQTM")
    if patterns is None:
        patterns = [] if pattern is None else [pattern]
    return {
        "source": source, "message_number": number, "queue": queue, "qmgr": qmgr,
        "pattern": pattern, "patterns": list(patterns),
        "md": {k: _value(md.get(k, MD_DEFAULTS.get(k))) for k in _MD_FIELDS},
        "dlh": None if dlh is None else {k: _value(dlh[k]) for k in _DLH_FIELDS},
        "tm": None if tm is None else {k: _value(tm[k]) for k in _TM_FIELDS},
        "data_length": m.length,
        "expires": None,
        "events": m.events,
    }


def expected_record(rec: dict, m: SimMessage) -> dict:
    """The values a decode of captured message ``m`` must give (a golden-file line).

    Parameters
    ----------
    rec : dict
        Its ground-truth record (:func:`ground_truth_record`).
    m : SimMessage

    Returns
    -------
    dict
        ``source``, ``message_number``, ``pattern``, ``patterns``; ``md`` (the ground truth's
        MQMD fields, ``MsgId``/``CorrelId`` as upper-case hex), ``dlh`` and
        ``tm`` as in the ground truth; ``headers`` (the chain of header Format
        names, ``["MQDEAD", "MQTRIG"]``); ``payload_hex`` (the application data
        after the last header, upper-case hex); ``payload_text`` (that data
        decoded with the CCSID the last header names when its Format is
        ``MQSTR``, else null); ``decode_status`` ``"ok"``.

    Notes
    -----
    Computed from what the simulator put in the message (its header chain
    and body), not from its bytes, with the chaining rule of
    :mod:`dlqlens.mq.chaining`: each header's Encoding/CodedCharSetId/Format
    describe what follows it, the MQMD's describe the first header, and an
    MQTM ends the chain.
    """
    enc, ccsid = int(m.md.get("Encoding", 0)), int(m.md.get("CodedCharSetId", 0))
    fmt = str(m.md.get("Format", ""))
    for kind, fields in m.headers:
        enc, ccsid, fmt = chaining.next_layout(chaining.BY_NAME[kind], fields, enc, ccsid)
    text = m.body.decode(charset(ccsid).codec) if _text(fmt) == _text(MQFMT_STRING) else None
    return {"source": rec["source"], "message_number": rec["message_number"],
            "pattern": rec["pattern"],
            "patterns": rec.get("patterns", [] if rec["pattern"] is None else [rec["pattern"]]),
            "md": rec["md"], "dlh": rec["dlh"], "tm": rec["tm"],
            "headers": [_text(chaining.BY_NAME[k].format) for k, _ in m.headers],
            "payload_hex": m.body.hex().upper(), "payload_text": text,
            "decode_status": "ok"}


class Capturer:
    """Writes the captures of one simulation into a directory.

    Parameters
    ----------
    sim : Simulation
    out : str
        Directory (created).
    fmt : {'amqsbcg', 'dmpmqmsg', 'raw'}
    dlh_block : bool
        amqsbcg: print the MQDLH as a formatted block (MQ 9.3.4 and later).
    writer_options : dict, optional
        Extra keyword arguments of the format's writer (``newline="\\r\\n"``
        for amqsbcg or dmpmqmsg, ``ascii_column=True`` for dmpmqmsg).
    expected : bool
        Also write ``<capture>.expected.jsonl`` (:func:`expected_record`) beside
        each capture.
    """

    def __init__(self, sim: Simulation, out: str, fmt: str, *, dlh_block: bool = True,
                 writer_options: dict | None = None, expected: bool = False):
        if fmt not in FORMATS:
            raise SimulationError(f"unknown capture format {fmt!r}: expected one of "
                                  f"{', '.join(FORMATS)}")
        self.sim = sim
        self.out = out
        self.fmt = fmt
        self.dlh_block = dlh_block
        self.writer_options = dict(writer_options or {})
        self.expected = expected
        os.makedirs(out, exist_ok=True)
        self.gt_path = os.path.join(out, "ground_truth.jsonl")
        self._gt = open(self.gt_path, "w", encoding="utf-8", newline="\n")
        self.captures: list[dict] = []
        self.patterns: Counter = Counter()

    def close(self) -> None:
        self._gt.close()

    def capture(self, qm: QueueManager, queue: str) -> dict:
        """Browse ``queue`` of ``qm`` now and write its capture file; returns its manifest entry."""
        q = qm.queue(queue)
        name = capture_file_name(qm.name, queue, self.fmt)
        path = os.path.join(self.out, name)
        tool = {"amqsbcg": "amqsbcg", "dmpmqmsg": "dmpmqmsg", "raw": "dlqlens-capture"}[self.fmt]
        actor = Actor(tool, MQAT_UNIX, tool)
        info = {"file": name, "qmgr": qm.name, "queue": queue, "format": self.fmt,
                "depth_before_capture": q.depth, "messages": 0, "expired_discarded": 0}
        order = byteorder_of(qm.encoding)
        md_codec = qm.codec if charset(qm.ccsid).single_byte else "latin-1"
        gt = self._gt
        golden = open(path + ".expected.jsonl", "w", encoding="utf-8", newline="\n") \
            if self.expected else None

        def messages():
            number = 0
            for m in q.store.ordered():
                if m.removed or m.locked is not None:
                    continue
                if qm.expired(m):
                    qm._discard_expired(q, m, actor)
                    info["expired_discarded"] += 1
                    continue
                number += 1
                if m.route is not None and q.usage == "XMITQ":
                    m = qm.with_xmit_header(m)  # as a browse of a transmission queue shows it
                md = qm.view(m)
                md["Version"] = 2
                patterns = patterns_of(self.sim, m)
                pattern = patterns[0] if patterns else None
                rec = ground_truth_record(name, number, qm.name, queue, md, m, pattern, patterns)
                if m.deadline is not None:
                    rec["expires"] = self.sim.iso(m.deadline)
                gt.write(json.dumps(rec, ensure_ascii=False) + "\n")
                if golden is not None:
                    golden.write(json.dumps(expected_record(rec, m), ensure_ascii=False) + "\n")
                self.patterns[pattern] += 1
                full = dict(MD_DEFAULTS)
                full.update(md)
                yield CaptureMessage(md=full, data=pack_data(md, m.headers, m.body),
                                     md_byteorder=order, md_codec=md_codec)
            info["messages"] = number

        opts = self.writer_options
        try:
            if self.fmt == "amqsbcg":
                write_amqsbcg(path, messages(), queue=queue, dlh_block=self.dlh_block, **opts)
            elif self.fmt == "dmpmqmsg":
                created = self.sim.datetime().strftime("%a %b %d %H:%M:%S %Y")
                write_dmpmqmsg(path, messages(), qmgr=qm.name, queue=queue, created=created,
                               **opts)
            else:
                write_raw(path, messages(), **opts)
        finally:
            if golden is not None:
                golden.close()
        self.captures.append(info)
        return info
