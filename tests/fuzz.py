"""Fuzzing of the capture readers and the rules parser.

Targets: ``raw``, ``dmpmqmsg``, ``amqsbcg``, ``pcap`` (each reader with its
format forced), ``hexdump`` (issue 23: a hex-dump layout, ``ispf``, ``xxd``,
``hexdump-c``, ``od`` or ``hex-stream``, of random messages starting at
their MQMD or at the header after it, damaged by the byte and line
mutations, read with its layout forced and with ``auto``), ``auto`` (format
sniffing, then the reader it picks) and ``rules`` (the rules-table parser,
validator, linter and matchers).

Capture inputs are real captures written by the project's own writers from
random messages (both byte orders, ASCII and EBCDIC, MQDLH / MQXQH / MQTM /
RFH2 chains; amqsbcg also as fragments: :func:`bcg_fragments`), then
damaged by random mutations: byte flips, 32-bit values
that matter (0, -1, 2**31 - 1, MQMD and MQDLH sizes) written over any
offset, cuts, insertions, deletions and duplications of stretches, and for
the text formats dropped, repeated or swapped lines and damaged hex digits.
Every input is read in the three reader modes and must satisfy
:func:`check_capture`: no exception but a whole-file :class:`CaptureError`
(and, in ``FAILFAST`` only, :class:`MalformedMessageError`), ``framed ==
rows + dropped`` in every mode, the same messages framed in every mode,
``DROPMALFORMED`` keeping exactly the well-formed rows, ``FAILFAST``
raising exactly when a row is malformed and naming the file and an offset or
line, every issue naming the file, message number, place, field,
expected and found, the file read as slices cut at every message
boundary giving the same rows as one read (or, for a raw index that does
not agree with the records, a slice refusing with a clear error), and, for
the text formats, the fast reader (forced on, blocks of two sizes) giving
the rows of the line reader.

Run at length (one target or all; inputs tried are printed per target)::

    python -m tests.fuzz --examples 200000            # every target
    python -m tests.fuzz --target raw --examples 50000
    python -m tests.fuzz --budget 240                 # four minutes per target
    python -m tests.fuzz --atheris --target dmpmqmsg --seconds 300

The test suite runs every target briefly (``tests/hostile/test_fuzz.py``;
``DLQLENS_FUZZ_EXAMPLES`` sets how many inputs per target, default 25).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import struct
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dlqlens.capture import amqsbcg, dmpmqmsg, raw
from dlqlens.capture.amqsbcg import fast as amqsbcg_fast
from dlqlens.capture.dmpmqmsg import fast as dmpmqmsg_fast
from dlqlens.capture.message import CaptureMessage, dead_letter
from dlqlens.capture.reader import MODES, ReadOptions, plan_pieces, read_capture, read_piece
from dlqlens.decode.issues import STATUSES, WELL_FORMED
from dlqlens.errors import CaptureError, MalformedMessageError
from dlqlens.mq.ccsid import charset
from dlqlens.mq.structs import MQDLH, MQRFH2, MQTM, MQXQH

TARGETS = ("raw", "dmpmqmsg", "amqsbcg", "auto", "rules", "scan", "pcap", "hexdump")
COUNTS: dict[str, int] = {t: 0 for t in (*TARGETS, "scan_match_writes", "scan_match_units",
                                          "scan_probe_hits", "scan_mqget_units",
                                          "scan_template_values", "scan_dmp_units_read")}

NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._ "
INTERESTING = [0, 1, 2, -1, -2, 36, 172, 324, 364, 428, 684, 2**31 - 1, -2**31, 0x7FFFFFF0,
               0x40404040, 0x20202020, 546, 785, 819, 500, 1208]


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------

names = st.text(NAME_CHARS, max_size=12)


@st.composite
def messages(draw) -> CaptureMessage:
    ebcdic = draw(st.booleans())
    big = draw(st.booleans())
    encoding = 785 if big else 546
    ccsid = draw(st.sampled_from([500, 37] if ebcdic else [819, 1208, 437]))
    codec = "cp500" if ebcdic else "latin-1"
    bo = ">" if big else "<"
    chain = draw(st.sampled_from(["", "MQXMIT", "MQHRF2", "MQTRIG", "MQDEAD"]))
    payload = draw(st.binary(max_size=64))
    inner_fmt = "MQSTR"
    if chain == "MQXMIT":
        payload = MQXQH.pack({"Version": 1, "RemoteQName": draw(names),
                              "MsgDesc.StrucId": "MD  ", "MsgDesc.Version": 1,
                              "MsgDesc.Encoding": encoding, "MsgDesc.CodedCharSetId": ccsid,
                              "MsgDesc.Format": "MQSTR"}, bo, codec) + payload
    elif chain == "MQHRF2":
        folder = b"<usr><a>" + draw(st.binary(max_size=12)) + b"</a></usr>"
        folder += b" " * ((-len(folder)) % 4)
        body = struct.pack(bo + "i", len(folder)) + folder
        payload = MQRFH2.pack({"Version": 2, "StrucLength": 36 + len(body),
                               "Encoding": encoding, "CodedCharSetId": ccsid,
                               "Format": "MQSTR", "NameValueCCSID": 1208}, bo, codec) \
            + body + payload
    elif chain == "MQTRIG":
        payload = MQTM.pack({"Version": 1, "QName": draw(names), "ApplType": 6}, bo, codec)
    elif chain == "MQDEAD":
        payload = MQDLH.pack({"Version": 1, "Reason": 2053, "Encoding": encoding,
                              "CodedCharSetId": ccsid, "Format": "MQSTR"}, bo, codec) + payload
    if chain:
        inner_fmt = chain
    md = {"Version": draw(st.sampled_from([1, 2])), "Format": inner_fmt,
          "Encoding": encoding, "CodedCharSetId": ccsid, "PutApplName": draw(names),
          "UserIdentifier": draw(names), "BackoutCount": draw(st.integers(0, 20)),
          "PutDate": "20240315", "PutTime": "10153012",
          "MsgId": draw(st.binary(min_size=24, max_size=24))}
    if draw(st.integers(0, 5)) == 0:  # a message without an MQDLH
        return CaptureMessage(md=md, data=payload, md_byteorder=bo, md_codec=codec)
    dlh = {"Reason": draw(st.sampled_from([2053, 2035, 2085, 65536, -1, 0])),
           "DestQName": draw(names), "DestQMgrName": draw(names), "PutApplType": 6,
           "PutApplName": draw(names), "PutDate": "20240315", "PutTime": "10153157"}
    if not chain:  # issue 19: payloads in CCSIDs without a codec
        dlh["CodedCharSetId"] = draw(st.sampled_from([ccsid] * 4 + [1390, 937, 65535, -1]))
    return dead_letter(md, dlh, payload, encoding=encoding, ccsid=ccsid, md_byteorder=bo,
                       md_codec=codec)


def write_bytes(fmt: str, msgs: list[CaptureMessage], variant: int) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c"
        if fmt == "raw":
            if len(msgs) == 1 and variant == 2:
                raw.write_single(p, msgs[0])
            else:
                raw.write_raw(p, msgs, index=variant != 1)
        elif fmt == "dmpmqmsg":
            dmpmqmsg.write_dmpmqmsg(p, msgs, ascii_column=variant == 1,
                                    newline="\r\n" if variant == 2 else "\n")
        else:
            amqsbcg.write_amqsbcg(p, msgs, dlh_block=variant in (1, 3, 4),
                                  newline="\r\n" if variant == 2 else "\n")
            if variant >= 3:
                return bcg_fragments(p.read_bytes(), variant == 4)
        return p.read_bytes()


# amqsbcg fragments (issue 23, part 2): the lines amqsbcg prints around the
# messages' sections (its banner, MQOPEN, MQGET, the end and summary)
_BCG_FRAME = re.compile(rb"AMQSBCG0|^\*+\s*$|MQOPEN|MQGET|No more messages|MQCLOSE|MQDISC|"
                        rb"\*{4}\s+Summary", re.M)


def bcg_fragments(data: bytes, no_md: bool) -> bytes:
    """amqsbcg output as pasted in pieces: every line around the messages'
    sections removed (variant 3), and with ``no_md`` every message's
    ``****Message descriptor****`` section too (variant 4: Dead Letter Header
    blocks and data only)."""
    out, skip = [], False
    for line in data.split(b"\n"):
        if _BCG_FRAME.search(line):
            continue
        s = line.strip()
        if s == b"****Message descriptor****":
            skip = no_md
        elif s in (b"****Dead Letter Header****",) or s.startswith(b"****   Message"):
            skip = False
        if not skip:
            out.append(line)
    return b"\n".join(out)


byte_mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 1 << 20), st.integers(0, 255)),
    st.tuples(st.just("int32"), st.integers(0, 1 << 20), st.sampled_from(INTERESTING),
              st.booleans()),
    st.tuples(st.just("cut"), st.integers(0, 1 << 20)),
    st.tuples(st.just("insert"), st.integers(0, 1 << 20), st.binary(max_size=16)),
    st.tuples(st.just("delete"), st.integers(0, 1 << 20), st.integers(1, 400)),
    st.tuples(st.just("dup"), st.integers(0, 1 << 20), st.integers(1, 400)),
    # issue 19: a raw record's length prefix enlarged over the next 1-3 records
    st.tuples(st.just("swallow"), st.integers(0, 1 << 10), st.integers(1, 3)),
)


def swallowed(data: bytes, k: int, count: int) -> bytes:
    """A raw capture with the length prefix of its record ``k`` (modulo the
    records found by walking the prefixes) enlarged over the ``count``
    records after it; other inputs unchanged."""
    if not data.startswith(raw.MAGIC):
        return data
    offs, p = [], raw.HEADER_SIZE
    while p + 4 <= len(data):
        ln = int.from_bytes(data[p:p + 4], "big")
        if p + 4 + ln > len(data):
            break
        offs.append(p)
        p += 4 + ln
    if len(offs) < 2:
        return data
    i = k % (len(offs) - 1)
    j = min(i + count, len(offs) - 1)
    end = offs[j] + 4 + int.from_bytes(data[offs[j]:offs[j] + 4], "big")
    b = bytearray(data)
    b[offs[i]:offs[i] + 4] = (end - offs[i] - 4).to_bytes(4, "big")
    return bytes(b)
line_mutation = st.one_of(
    st.tuples(st.just("dropline"), st.integers(0, 1 << 16)),
    st.tuples(st.just("dupline"), st.integers(0, 1 << 16)),
    st.tuples(st.just("swaplines"), st.integers(0, 1 << 16), st.integers(0, 1 << 16)),
    st.tuples(st.just("badhex"), st.integers(0, 1 << 16), st.integers(0, 80),
              st.sampled_from("GZ-' \0\xff")),
    st.tuples(st.just("number"), st.integers(0, 1 << 16),
              st.sampled_from(["-1", "99999999999", "0", "2147483648",
                               "99999999999999999999999", "-", ""])),
    # issue 19: line ends a CR alone (every line, or one line in `seed` mixed)
    st.tuples(st.just("lineends"), st.integers(0, 1 << 16), st.sampled_from(["cr", "mixed"])),
    # issue 19: a section banner ('****...' line) deleted
    st.tuples(st.just("dropbanner"), st.integers(0, 1 << 16)),
    # issue 19: an X line written as an S line of the same bytes (raw, UTF-8 or not)
    st.tuples(st.just("x_to_s"), st.integers(0, 1 << 16)),
    # issue 19: the lines dmpmqmsg prints before the first message
    st.tuples(st.just("preamble"), st.integers(0, 1 << 16)),
    # issue 19: a descriptor value masked by whoever pasted the capture
    st.tuples(st.just("mask"), st.integers(0, 1 << 16), st.sampled_from(["****", "..", "XXXX"])),
    # issue 19: a typographic quote, or a line cut short by '...'
    st.tuples(st.just("typo"), st.integers(0, 1 << 16), st.sampled_from(["\u2019", "..."])),
    # issue 19: a line padded with many blanks (before its last character)
    st.tuples(st.just("blanks"), st.integers(0, 1 << 16)),
)

#: Lines a terminal shows before a dmpmqmsg file's first message (the
#: utility's version and copyright lines, a prompt).
PREAMBLE = [b"Dmpmqmsg Version:9.3.0.0 Created:Tue Mar 12 14:04:00 2024",
            b"5724-H72 (C) Copyright IBM Corp. 1994, 2024.", b"", b"$ dmpmqmsg -m QM1 -i DLQ"]


def s_line(data: bytes) -> bytes:
    """An ``S`` line holding ``data`` (no line end in it) byte for byte."""
    return b'S "' + data.replace(b"~", b"~~").replace(b'"', b'~"') + b'"'



def relined(data: bytes, seed: int, style: str) -> bytes:
    """``data`` with its LF line ends made CRs (``cr``), or each line's end
    chosen among LF, CR and CR LF (``mixed``, from ``seed``)."""
    if style == "cr":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    rnd = random.Random(seed)
    lines = data.replace(b"\r\n", b"\n").split(b"\n")
    ends = [rnd.choice([b"\n", b"\r", b"\r\n"]) for _ in lines[:-1]]
    for i in range(len(ends) - 1):  # a CR, then an empty line's LF, is one CR LF
        if ends[i] == b"\r" and not lines[i + 1] and ends[i + 1] == b"\n":
            ends[i] = b"\n"
    return b"".join(ln + e for ln, e in zip(lines, ends)) + lines[-1]


def mutate(data: bytes, muts) -> bytes:
    b = bytearray(data)
    for m in muts:
        kind, n = m[0], max(len(b), 1)
        if kind == "flip" and b:
            b[m[1] % n] = m[2]
        elif kind == "int32" and b:
            p = m[1] % n
            b[p:p + 4] = struct.pack(">i" if m[3] else "<i", m[2])
        elif kind == "cut":
            del b[m[1] % n:]
        elif kind == "insert":
            p = m[1] % n
            b[p:p] = m[2]
        elif kind == "delete":
            p = m[1] % n
            del b[p:p + m[2]]
        elif kind == "dup":
            p = m[1] % n
            b[p:p] = b[p:p + m[2]]
        elif kind == "swallow":
            b = bytearray(swallowed(bytes(b), m[1], m[2]))
        elif kind == "lineends":
            b = bytearray(relined(bytes(b), m[1], m[2]))
        else:
            lines = bytes(b).split(b"\n")
            k = len(lines)
            i = m[1] % k
            banners = [j for j, ln in enumerate(lines) if ln.startswith(b"****")]
            if kind == "dropline":
                del lines[i]
            elif kind == "x_to_s":
                xs = [j for j, ln in enumerate(lines) if ln.startswith(b"X ")]
                if xs:
                    j = xs[m[1] % len(xs)]
                    try:
                        data = bytes.fromhex(lines[j][2:].decode("latin-1"))
                    except ValueError:
                        data = b"\n"
                    if b"\n" not in data and b"\r" not in data:
                        lines[j] = s_line(data)
            elif kind == "mask":
                # an 'A xxx value' line, or a "label : 'value'" / ": X'..'" line
                vals = [j for j, ln in enumerate(lines)
                        if ln.startswith(b"A ") and len(ln) > 6 or b" : '" in ln or b"X'" in ln]
                if vals:
                    j = vals[m[1] % len(vals)]
                    ln, mask = lines[j], m[2].encode()
                    if ln.startswith(b"A "):
                        lines[j] = ln[:6] + mask
                    elif b"X'" in ln:
                        a = ln.index(b"X'") + 2
                        lines[j] = ln[:a] + mask + ln[a + len(mask):]
                    else:
                        a = ln.index(b" : '") + 4
                        lines[j] = ln[:a] + mask + ln[a + len(mask):]
            elif kind == "blanks":
                ln = lines[i]
                lines[i] = ln[:-1] + b" " * 20000 + ln[-1:]
            elif kind == "typo":
                ln = lines[i]
                if m[2] == "...":
                    lines[i] = ln[:len(ln) // 2] + b"..."
                elif b"'" in ln:
                    at = ln.rindex(b"'")
                    lines[i] = ln[:at] + m[2].encode() + ln[at + 1:]
            elif kind == "preamble":
                lines[0:0] = PREAMBLE[:1 + m[1] % len(PREAMBLE)]
            elif kind == "dropbanner":
                if banners:
                    del lines[banners[m[1] % len(banners)]]
            elif kind == "dupline":
                lines.insert(i, lines[i])
            elif kind == "swaplines":
                j = m[2] % k
                lines[i], lines[j] = lines[j], lines[i]
            elif kind == "badhex":
                ln = bytearray(lines[i])
                if ln:
                    ln[m[2] % len(ln)] = ord(m[3]) if m[3] != "\xff" else 0xFF
                lines[i] = bytes(ln)
            elif kind == "number":
                # replace the first run of digits of the line
                ln = lines[i].decode("latin-1")
                j = next((c for c, ch in enumerate(ln) if ch.isdigit()), None)
                if j is not None:
                    e = j
                    while e < len(ln) and ln[e].isdigit():
                        e += 1
                    ln = ln[:j] + m[2] + ln[e:]
                lines[i] = ln.encode("latin-1")
            b = bytearray(b"\n".join(lines))
    return bytes(b)


@st.composite
def captures(draw, fmt: str) -> bytes:
    """The bytes of a damaged capture in ``fmt`` (``auto``: any format, or junk)."""
    if fmt == "auto":
        if draw(st.integers(0, 9)) == 0:
            return draw(st.binary(max_size=2048))
        fmt = draw(st.sampled_from(["raw", "dmpmqmsg", "amqsbcg"]))
    msgs = draw(st.lists(messages(), min_size=0, max_size=4))
    # (amqsbcg variants 3 and 4: fragments, see bcg_fragments)
    data = write_bytes(fmt, msgs, draw(st.integers(0, 4 if fmt == "amqsbcg" else 2)))
    muts = st.one_of(byte_mutation, line_mutation) if fmt != "raw" else byte_mutation
    return mutate(data, draw(st.lists(muts, max_size=5)))


# ---------------------------------------------------------------------------
# issue 23 part 3: MQ client traffic (pcap/pcapng) - the MQI calls of random
# messages in every layout the writer has (TSH or TSHM, both byte orders, MQPUT,
# MQPUT1 or MQGET replies, segments split over TSHs and TCP packets), packets
# reordered, sent twice or lost, then the file's bytes damaged
# ---------------------------------------------------------------------------

@st.composite
def pcap_captures(draw) -> bytes:
    from dlqlens.capture.pcap import write_pcap

    msgs = draw(st.lists(messages(), min_size=0, max_size=3))
    seed = draw(st.integers(0, 2**16))

    def order(packets):
        rnd = random.Random(seed)
        out = list(packets)
        for _ in range(rnd.randrange(3)):
            i = rnd.randrange(len(out)) if out else 0
            if out:
                what = rnd.randrange(3)
                if what == 0 and i + 1 < len(out):
                    out[i], out[i + 1] = out[i + 1], out[i]
                elif what == 1:
                    out.insert(i, out[i])
                else:
                    del out[i]
        return out

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.pcap"
        write_pcap(p, msgs, container=draw(st.sampled_from(["pcap", "pcapng"])),
                   byteorder=draw(st.sampled_from(["<", ">"])), multiplexed=draw(st.booleans()),
                   verb=draw(st.sampled_from(["MQPUT", "MQPUT1", "MQGET"])),
                   max_segment=draw(st.sampled_from([64, 300, 32768])),
                   mss=draw(st.sampled_from([50, 700, 1460])), packet_order=order)
        data = p.read_bytes()
    return mutate(data, draw(st.lists(byte_mutation, max_size=4)))


# ---------------------------------------------------------------------------
# the invariants
# ---------------------------------------------------------------------------

def check_issue(i: dict, path: str, number: int) -> None:
    assert i["message"].startswith(f"{path}: message {number}"), i
    assert i["field"], i
    assert i["offset"] is not None or i["line"] is not None, i
    assert f"expected {i['expected']}, found {i['found']}" in i["message"], i


def check_capture(path: str | os.PathLike, fmt: str) -> dict:
    """Read ``path`` in every mode and check the invariants; returns the stats
    per mode (``None`` for a whole-file refusal)."""
    path = str(path)
    out: dict = {}
    refused = None
    failfast_error = None
    for mode in MODES:
        try:
            res = read_capture(path, format=fmt, mode=mode)
        except CaptureError as exc:  # the whole file refused: the same in every mode
            assert str(exc).startswith(path), exc
            assert refused in (None, str(exc)), (refused, exc)
            refused = str(exc)
            out[mode] = None
            continue
        except MalformedMessageError as exc:
            assert mode == "FAILFAST", exc
            i = exc.issue
            assert i["source"] == path and str(exc).startswith(path), i
            assert i.get("offset") is not None or i.get("line") is not None, i
            failfast_error = i
            out[mode] = "raised"
            continue
        s = res.stats
        assert s.framed == s.rows + s.dropped, s
        assert res.table.num_rows == s.rows, s
        assert sum(s.dropped_by_status.values()) == s.dropped, s
        out[mode] = res
    if refused is not None:
        assert all(v is None for v in out.values()), out
        return out
    perm, drop, fail = out["PERMISSIVE"], out["DROPMALFORMED"], out["FAILFAST"]
    rows = perm.table.to_pylist()
    assert perm.stats.dropped == 0 and perm.stats.framed == len(rows)
    assert drop.stats.framed == perm.stats.framed
    statuses = [r["decode_status"] for r in rows]
    good = [s in WELL_FORMED for s in statuses]
    assert drop.stats.rows == sum(good) and drop.stats.dropped == len(rows) - sum(good)
    for r in rows:
        assert r["decode_status"] in STATUSES
        assert r["source"] == path
        if r["payload_text"] is not None:  # text only in a known character set
            assert charset(r["payload_ccsid"]).known, r["payload_ccsid"]
        for i in r["decode_issues"]:  # what the capture does not hold is null
            if i["code"] in ("elided", "masked") and r["decode_status"] != "bad_descriptor":
                struct, _, name = i["field"].split(" ")[0].partition(".")
                if not name:  # a whole section not in the capture (amqsbcg fragments)
                    assert r[struct] is None, (i["field"], r[struct])
                elif r[struct] is not None:
                    assert r[struct][name] is None, (i["field"], r[struct][name])
        if r["decode_status"] != "ok":
            assert r["decode_issues"], r["decode_status"]
        for i in r["decode_issues"]:
            check_issue(i, path, r["message_number"])
    assert [r["message_number"] for r in rows] == list(range(1, len(rows) + 1))
    check_split(path, fmt, rows)
    if fmt in FAST_READERS:
        check_fast(path, fmt, rows)
    if all(good):
        assert fail != "raised" and fail.stats.rows == len(rows)
    else:
        assert fail == "raised", "FAILFAST did not raise on a malformed message"
        first_bad = next(r for r, g in zip(rows, good) if not g)
        assert failfast_error["message_number"] == first_bad["message_number"]
    return out


def check_split(path: str, fmt: str, rows: list[dict]) -> None:
    """Read ``path`` as slices cut at every message boundary the planner
    finds (Spark's partitions of a large file): the same rows as one read,
    numbers and lines included."""
    opts = ReadOptions(format=fmt, split_bytes=1)
    pieces = plan_pieces(path, opts)
    try:
        got = [r for piece in pieces for b in read_piece(piece, opts) for r in b.to_pylist()]
    except CaptureError as exc:
        # a raw index that disagrees with the records inside a slice: the
        # slice refuses (read whole, the file is framed by its prefixes)
        assert pieces[0].format == "raw" and "cannot be read in slices" in str(exc), exc
        assert str(exc).startswith(path) and "\n" not in str(exc), exc
        return
    assert got == rows, f"{len(pieces)} slices: {len(got)} rows, one read: {len(rows)}"


def check_rules(text: str) -> None:
    from dlqlens.rules import lint, parse
    from dlqlens.rules.compile import plan_matches, plan_string
    from dlqlens.rules.match import match_string

    table = parse(text, source="fuzz.rul")
    for d in table.diagnostics:
        assert d.line >= 1 and d.message
    lint(table)
    for rule in table.rules:
        for pat in rule.patterns:
            if pat.kind != "string" or pat.is_any:
                continue
            for value in ("", "APP.IN", pat.value[:pat.length], "A" * pat.length):
                assert plan_matches(plan_string(pat.value, pat.length), value) == \
                    match_string(pat.value, value, pat.length), (pat.value, value)


KEYWORDS = ["INPUTQ", "INPUTQM", "RETRYINT", "WAIT", "DESTQ", "DESTQM", "FEEDBACK", "FORMAT",
            "MSGTYPE", "PERSIST", "REASON", "REPLYQ", "REPLYQM", "USERID", "APPLNAME",
            "APPLTYPE", "ACTION", "FWDQ", "FWDQM", "HEADER", "PUTAUT", "RETRY"]
VALUES = ["*", "?*", "*?*?*?*?*?*?*?*?*?*?*X", "'A B'", "''", "'it''s'", "MQRC_Q_FULL", "2053",
          "DISCARD", "IGNORE", "RETRY", "FWD", "&REPLYQ", "YES", "NO", "DEF", "CTX",
          "-1", "99999999999", "APP.*", "'*A*A*A*A*A*A*A*A*B'"]


@st.composite
def rules_texts(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            lines.append(draw(st.text(max_size=80)))
        elif kind == 1:
            lines.append("* " + draw(st.text(max_size=20)))
        else:
            items = [f"{draw(st.sampled_from(KEYWORDS))}({draw(st.sampled_from(VALUES))})"
                     for _ in range(draw(st.integers(1, 5)))]
            line = draw(st.sampled_from([" ", ",", "  ", "\t"])).join(items)
            if draw(st.integers(0, 4)) == 0:  # a continuation somewhere inside
                cut = draw(st.integers(0, len(line)))
                line = line[:cut] + draw(st.sampled_from(["+\n   ", "-\n   ", "+\n"])) + line[cut:]
            lines.append(line)
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n"]))
    for _ in range(draw(st.integers(0, 3))):
        p = draw(st.integers(0, max(len(text), 1)))
        text = text[:p] + draw(st.sampled_from(["\x1b", "\x00", "\r", "+", "-", "'", "(", ")",
                                                "\u2028", "\x85", "\ufeff", "*"])) + text[p:]
    return text


# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------

#: The text readers' fast reader modules: each frames well-formed messages a
#: block at a time and hands the rest to its format's line reader.
FAST_READERS = {"dmpmqmsg": dmpmqmsg_fast, "amqsbcg": amqsbcg_fast}
#: Block sizes the fast readers are run with: their own, and one that cuts
#: a fuzz input into several blocks.
FAST_CHUNKS = (None, 512)


def check_fast(path: str, fmt: str, rows: list[dict]) -> None:
    """The fast reader, used even for a file of a few messages (which the
    readers otherwise leave to the line reader) and with blocks of several
    sizes, gives the rows of the line reader (``rows``, one default read)."""
    from dlqlens.capture.registry import FORMATS
    from dlqlens.decode.records import decode_frames

    module, read = FAST_READERS[fmt], FORMATS[fmt].read
    slow = [r for fr in read(path, fast=False) for r in decode_frames(fr).to_pylist()]
    assert slow == rows, "the line reader and a default read disagree"
    saved = module.MIN_FAST_UNITS, module.CHUNK_BYTES
    try:
        module.MIN_FAST_UNITS = 0
        for chunk in FAST_CHUNKS:
            module.CHUNK_BYTES = saved[1] if chunk is None else chunk
            fast = [r for fr in read(path) for r in decode_frames(fr).to_pylist()]
            assert fast == slow, f"fast reader (blocks of {module.CHUNK_BYTES} bytes) and " \
                                 f"line reader disagree: {len(fast)} and {len(slow)} rows"
    finally:
        module.MIN_FAST_UNITS, module.CHUNK_BYTES = saved


# --- issue 23: hex dumps ------------------------------------------------------

HEX_LAYOUTS = ("ispf", "xxd", "hexdump-c", "od", "hex-stream")


@st.composite
def hexdumps(draw) -> tuple[str, bytes]:
    """``(layout, bytes)``: random messages as a hex dump of ``layout``, each
    record from its MQMD or from the structure after it (an MQDLH, MQXQH,
    MQTM or MQRFH2 first), damaged by byte and line mutations."""
    from dlqlens.capture import hexdump
    from dlqlens.mq.structs import MQMD

    layout = draw(st.sampled_from(HEX_LAYOUTS))
    recs = []
    for m in draw(st.lists(messages(), min_size=0, max_size=3)):
        rec = m.md_bytes() + m.data
        if draw(st.booleans()):  # the message data only
            rec = rec[MQMD.length(int(m.full_md()["Version"])):]
        recs.append(rec)
    opts = {}
    if layout == "ispf":
        opts = {"view": draw(st.booleans()), "first_column": draw(st.sampled_from([1, 73]))}
    elif layout == "hex-stream":
        opts = {"width": draw(st.sampled_from([None, 16, 40])), "offsets": draw(st.booleans()),
                "upper": draw(st.booleans())}
    text = hexdump.render(recs, layout, **opts).encode("latin-1") if recs else b""
    muts = st.one_of(byte_mutation, line_mutation)
    return layout, mutate(text, draw(st.lists(muts, max_size=4)))


def check_hex_fast(text: str, layout: str) -> None:
    """The whole-text fast paths give the line parser's records (or decline)."""
    from dlqlens.capture.hexdump import parse

    fast = {"hex-stream": lambda: parse._fast_stream(text, None),
            "ispf": lambda: None}.get(layout, lambda: parse._fast_offset_dump(text, layout))()
    if fast is None:
        return
    saved = parse._fast_offset_dump, parse._fast_stream
    parse._fast_offset_dump = parse._fast_stream = lambda *a: None
    try:
        slow = (parse.parse_stream(text, None) if layout == "hex-stream"
                else parse.parse_offset_dump(text, layout))
    finally:
        parse._fast_offset_dump, parse._fast_stream = saved
    k = [(r.data, r.line, r.offset, r.stated_length, r.cut, r.bad) for r in fast]
    assert k == [(r.data, r.line, r.offset, r.stated_length, r.cut, r.bad) for r in slow], \
        "hex dump fast path and line parser disagree"


def fuzz_settings(examples: int, *, derandomize: bool = False) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    derandomize=derandomize, print_blob=True,
                    phases=[Phase.generate, Phase.shrink],
                    suppress_health_check=list(HealthCheck))


def run_target(target: str, examples: int, *, derandomize: bool = False) -> int:
    """Run ``examples`` inputs against ``target``; returns the inputs tried.
    A failing input raises (after shrinking) with the falsifying example."""
    start = COUNTS[target]
    tmp = Path(tempfile.mkdtemp(prefix=f"dlqlens-fuzz-{target}-"))
    ext = {"raw": ".bin", "dmpmqmsg": ".dmp", "amqsbcg": ".bcg", "auto": ".txt", "pcap": ".pcap"}

    if target == "hexdump":
        @fuzz_settings(examples, derandomize=derandomize)
        @given(hexdumps())
        def one(case):
            COUNTS[target] += 1
            layout, data = case
            p = tmp / "input.txt"
            p.write_bytes(data)
            check_capture(p, layout)
            check_capture(p, "auto")
            check_hex_fast(data.decode("latin-1"), layout)
    elif target == "rules":
        @fuzz_settings(examples, derandomize=derandomize)
        @given(rules_texts())
        def one(text):
            COUNTS[target] += 1
            check_rules(text)
    elif target == "scan":
        @fuzz_settings(examples, derandomize=derandomize)
        @given(scan_calls())
        def one(call):
            COUNTS[target] += 1
            check_scan(call)
    else:
        @fuzz_settings(examples, derandomize=derandomize)
        @given(captures(target) if target != "pcap" else pcap_captures())
        def one(data):
            COUNTS[target] += 1
            p = tmp / f"input{ext[target]}"
            p.write_bytes(data)
            check_capture(p, target)
    try:
        one()
    finally:
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
    return COUNTS[target] - start


# ---------------------------------------------------------------------------
# issue 19 (branch perf19): the C extension's direct API ("scan" target; run it
# against a build with -fsanitize=address,undefined, docs/robustness.md)
# ---------------------------------------------------------------------------

#: Offsets that probe the C functions' arithmetic (int64 wrap-around).
_EXTREME = [0, 1, 7, 8, 2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 9, 2**63 - 2, 2**63 - 1,
            -1, -2**63, -2**31]


@st.composite
def _line_templates(draw):
    """A well-formed ``match_lines`` program (the C matcher's opcodes: 1 a
    literal, 2/3 a signed/unsigned integer, 4 a quoted text, 5 hex, 6 a
    bracket, 0 a template's end), each value inside a 16-byte row, and one
    line of text per template that it matches, or nearly (one byte changed):
    the programs the reader compiles, over text that reaches their writes."""
    prog, lines = [], []
    for _ in range(draw(st.integers(1, 3))):
        line = b""
        for _ in range(draw(st.integers(1, 4))):
            op = draw(st.integers(1, 6))
            if op == 1:
                lit = draw(st.binary(min_size=1, max_size=4).filter(lambda b: b"\n" not in b))
                prog += [1, len(lit), *lit]
                line += lit
            elif op in (2, 3):
                kind = draw(st.sampled_from([0, 1, 2, 5]))
                prog += [op, kind, draw(st.integers(0, 16 - (8 if kind == 2 else 4))), 1, 1, 32]
                value = draw(st.integers(-2**31 if op == 2 else 0, 2**31 - 1))
                line += str(value).encode() + b" "
            elif op in (4, 5):
                size = draw(st.integers(0, 8))
                prog += [op, size, draw(st.sampled_from([0, 3, 4])),
                         draw(st.integers(0, 16 - size))]
                if op == 4:  # the text up to a quote, then the quote (a literal, as amqsbcg's)
                    prog += [1, 1, ord("'")]
                    line += draw(st.text("abc XYZ", max_size=size)).encode() + b"'"
                else:
                    line += draw(st.binary(min_size=size, max_size=size)).hex().encode()
            else:
                prog.append(6)
                line += b"x]"
                break  # a bracket takes the rest of its line
        prog.append(0)
        if line and draw(st.booleans()):
            at = draw(st.integers(0, len(line) - 1))
            line = line[:at] + bytes([draw(st.integers(0, 255))]) + line[at + 1:]
        lines.append(line.replace(b"\n", b"_"))
    return prog, lines


#: Bytes of dmpmqmsg attribute values and of what may damage them.
_VALUE_BYTES = b"-0129AFaf Gx\x80"


@st.composite
def scan_calls(draw):
    """``(function, buffer, offsets, second offsets or width)`` for one call of
    the C extension: offsets inside the buffer, just outside and extreme."""
    data = draw(st.binary(max_size=200))
    near = st.integers(-3, len(data) + 3)
    offsets = draw(st.lists(st.one_of(near, st.sampled_from(_EXTREME)), max_size=12))
    func = draw(st.sampled_from(["rows_like_first", "hex_runs", "line_table", "dump_lines",
                                 "match_lines", "probe_lines", "trimmed_ends",
                                 "mqget_lines", "template_fields", "dmp_units"]))
    if func == "rows_like_first":
        width = draw(st.one_of(st.integers(0, 24), st.sampled_from(_EXTREME)))
        return func, data, offsets, width
    if func == "probe_lines":  # units (first content line, count, current line), a literal
        units = draw(st.lists(st.tuples(*[st.one_of(st.integers(-1, 13), st.sampled_from(_EXTREME))
                                          for _ in range(3)]), max_size=4))
        lit = draw(st.sampled_from([b"", b" of ", b"0", b"\0\0", b"  Length"])
                   | st.binary(max_size=6))
        after = draw(st.booleans())
        if draw(st.booleans()):  # or a consistent call: lines inside, the literal at one
            offsets = sorted(draw(st.lists(st.integers(0, len(data)), min_size=1, max_size=6)))
            units = [(0, len(offsets), draw(st.integers(0, len(offsets) - 1)))
                     for _ in range(draw(st.integers(1, 3)))]
            at = offsets[units[0][2]]
            lit, after = data[at:at + draw(st.integers(1, 4))] or b"\0", False
        return func, data, offsets, (units, lit, after)
    if func == "template_fields":  # units anywhere; fields (kind, src, length, dst, size)
        small = st.one_of(st.integers(-2, 24), st.sampled_from(_EXTREME))
        fields = draw(st.lists(st.tuples(st.one_of(st.integers(-1, 5), st.sampled_from(_EXTREME)),
                                         small, small, small, small), max_size=4))
        if draw(st.booleans()):  # or a consistent call: values of digits, hex and letters
            data = draw(st.binary(min_size=24, max_size=24).map(
                lambda b: bytes(_VALUE_BYTES[c % len(_VALUE_BYTES)] for c in b))) * 3
            offsets = [0, 24, 48][:draw(st.integers(1, 3))]
            fields = [(k, src, ln, dst, 4 if k <= 1 else size) for k, src, ln, dst, size in
                      draw(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 12),
                                              st.integers(0, 12), st.integers(0, 8),
                                              st.integers(0, 6)), min_size=1, max_size=4))]
        return func, data, offsets, fields
    if func == "dmp_units":  # lines anywhere, classes, units anywhere; or a block's own lines
        anywhere = st.one_of(near, st.sampled_from(_EXTREME))
        ends = draw(st.lists(anywhere, min_size=len(offsets), max_size=len(offsets)))
        cls = draw(st.lists(st.integers(-1, 5), min_size=len(offsets), max_size=len(offsets)))
        lines_at = st.one_of(st.integers(-1, len(offsets) + 1), st.sampled_from(_EXTREME))
        units = draw(st.lists(st.tuples(lines_at, lines_at), max_size=4))
        if draw(st.booleans()):  # a consistent call: messages as dmpmqmsg writes them,
            # a few lines' values replaced by digits, hex digits, signs, blanks and 0x80
            from dlqlens.capture import dmpmqmsg

            values = st.binary(max_size=30).map(
                lambda b: bytes(_VALUE_BYTES[c % len(_VALUE_BYTES)] for c in b))
            lines = b"".join(dmpmqmsg.format_message(CaptureMessage(
                md={"Version": draw(st.sampled_from([1, 2]))}, data=draw(st.binary(max_size=40))))
                .encode() for _ in range(draw(st.integers(1, 3)))).split(b"\n")
            for _ in range(draw(st.integers(0, 2))):
                k = draw(st.integers(0, len(lines) - 1))
                lines[k] = lines[k][:draw(st.integers(0, 6))] + draw(values)
            data = b"\n".join(lines)
            return func, data, None, draw(st.lists(st.tuples(st.integers(0, len(lines)),
                                                             st.integers(0, len(lines))),
                                                   max_size=4))
        return func, data, offsets, (ends, cls, units)
    if func == "mqget_lines":  # a text of 'MQGET' lines, its lines (or not), and n
        data = b"\n".join(draw(st.lists(st.sampled_from(
            [b" MQGET of message number 1", b"MQGET of message number\t\t7", b"MQGET", b"x",
             b"MQGET of message number " + b" " * 30 + b"2", b""]), max_size=6)))
        lines = [0] + [i + 1 for i, c in enumerate(data) if c == 10]
        ends = [i for i, c in enumerate(data) if c == 10] + [len(data)]
        if draw(st.booleans()):  # or lines anywhere
            lines = offsets
            ends = draw(st.lists(st.one_of(st.integers(-3, len(data) + 3),
                                           st.sampled_from(_EXTREME)),
                                 min_size=len(lines), max_size=len(lines)))
        n = draw(st.one_of(st.integers(-1, len(data) + 20), st.sampled_from(_EXTREME)))
        return func, data, lines, (ends, n)
    if func in ("hex_runs", "dump_lines", "match_lines", "trimmed_ends"):
        ends = draw(st.lists(st.one_of(near, st.sampled_from(_EXTREME)),
                             min_size=len(offsets), max_size=len(offsets)))
        if func == "match_lines":  # a unit's first content line and line count, and a program
            units = draw(st.lists(st.tuples(st.one_of(st.integers(-1, 13),
                                                      st.sampled_from(_EXTREME)),
                                            st.one_of(st.integers(-1, 13),
                                                      st.sampled_from(_EXTREME))), max_size=4))
            prog = draw(st.lists(st.one_of(st.integers(0, 7), st.sampled_from(_EXTREME)),
                                 max_size=12))
            if draw(st.booleans()):  # or a consistent call: lines the program matches, units
                prog, lines = draw(_line_templates())
                data = b"\n".join(lines)
                offsets = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
                ends = [o + len(x) for o, x in zip(offsets, lines)]
                # each unit's lines are the templates' lines, in order (a unit matches the
                # program's first template against its first line)
                units = [(0, len(lines))] * draw(st.integers(1, 3))
            # lines marked clean (ASCII: the matcher compares literals with memcmp) or not;
            # a unit's values are written only while its lines match
            clean = draw(st.lists(st.sampled_from([1, 1, 0]), min_size=len(offsets),
                                  max_size=len(offsets)))
            return func, data, offsets, (ends, units, prog, clean)
        return func, data, offsets, ends
    return func, data, offsets, draw(st.one_of(near, st.sampled_from(_EXTREME)))


def check_scan(call) -> None:
    """One call of :mod:`dlqlens.capture._scan` (when built) with buffers of
    consistent sizes: it returns what the rule says, or raises ValueError /
    OverflowError; it never reads outside the buffer (a crash, or an
    AddressSanitizer report under a sanitizer build)."""
    from dlqlens.capture import scan

    if scan._scan is None:
        return
    c = scan._scan
    func, data, offsets, extra = call
    if func == "dmp_units":
        check_dmp_units(data, offsets, extra)
        return
    buf = bytearray(data + bytes(16))
    at = np.array(offsets, dtype=np.int64)
    if func == "rows_like_first":
        width = extra
        size = max(0, min(width, 64))
        must = bytes(1 if k % 3 == 0 else 0 for k in range(size))
        same, match = bytearray(size), bytearray(len(at))
        try:
            got = c.rows_like_first(buf, at.tobytes(), width, must, same, match)
        except (ValueError, OverflowError):
            refused = width != size or bool(len(at) and (
                (at < 0).any() or (at > len(buf) - width).any()))
            assert refused, (offsets, width)
            return
        assert width == size and ((at >= 0) & (at <= len(buf) - width)).all(), (offsets, width)
        if len(at):  # the same answer as the numpy version
            saved, scan._scan = scan._scan, None
            try:
                want_same, want_match = scan.rows_like_first(buf, at, width,
                                                             np.arange(0, width, 3))
            finally:
                scan._scan = saved
            assert list(match) == want_match.astype(int).tolist()
            assert list(same) == want_same.astype(int).tolist()
            assert got == int(want_match.sum())
    elif func == "hex_runs":
        ends = np.array(extra, dtype=np.int64)
        fine = ((at >= 0) & (ends <= len(buf)) & (ends >= at)).all()
        cap = int(((ends - at) // 2).clip(0, 1 << 20).sum()) if fine else 64
        try:
            got = c.hex_runs(buf, at.tobytes(), ends.tobytes(), bytearray(cap),
                             bytearray(8 * len(at)))
        except (ValueError, OverflowError):
            assert not fine, (offsets, extra)
            return
        assert fine and 0 <= got <= cap
        want, _ = scan._hex_runs_numpy(np.frombuffer(buf, np.uint8), at, ends)
        assert got == len(want)
    elif func == "dump_lines":
        # lines anywhere (bytes past the buffer read as 0); byte counts 0..16 only
        length = np.array(extra, dtype=np.int64)
        nbytes = np.array([abs(int(x)) % 18 for x in extra], dtype=np.int64)
        k = np.array([abs(int(x)) % 5 for x in offsets], dtype=np.int64)
        fine = bool((nbytes <= 16).all())
        out = bytearray(int(nbytes.sum()))
        std, hexok = bytearray(len(at)), bytearray(len(at))
        try:
            c.dump_lines(buf, at.tobytes(), length.tobytes(), nbytes.tobytes(), k.tobytes(),
                         out, std, hexok)
        except (ValueError, OverflowError):
            assert not fine, (offsets, extra)
            return
        assert fine and set(std) <= {0, 1} and set(hexok) <= {0, 1}
    elif func == "match_lines":
        # content lines [at, ends), units, and a program (random words, or well-formed over
        # lines it matches): refused (ValueError) or run inside the buffers
        ends, units, prog, clean = extra
        cstart = at
        crend = np.array(ends, dtype=np.int64)
        cfirst = np.array([u[0] for u in units], dtype=np.int64)
        ncont = np.array([u[1] for u in units], dtype=np.int64)
        n, mdw, vw = len(units), 16, 16
        ci, ok = np.zeros(n, np.int64), np.ones(n, np.uint8)
        md, vals = bytearray(n * mdw), bytearray(n * vw)
        try:
            got = c.match_lines(buf, cstart.tobytes(), crend.tobytes(), bytes(clean),
                                cfirst.tobytes(), ncont.tobytes(), ci, ok, b"",
                                np.array(prog, dtype=np.int64).clip(-2**31, 2**31 - 1)
                                .astype(np.int32).tobytes(), md, mdw, vals, vw)
        except (ValueError, OverflowError):
            return
        assert 0 <= got <= n and got == int(ok.sum())
        assert ((cfirst >= 0) & (ncont >= 0) & (cfirst + ncont <= len(at))).all()
        # every line a unit reached (ci counts them, from 0) lies in the buffer: the
        # matcher checks a line when it reaches it
        reached = np.concatenate([np.arange(f, f + min(c, m)) for f, c, m in
                                  zip(cfirst, ci, ncont)] + [np.zeros(0, np.int64)])
        assert ((cstart[reached] >= 0) & (crend[reached] >= cstart[reached])
                & (crend[reached] <= len(buf))).all()
        assert set(ok.tolist()) <= {0, 1}
        if any(md) or any(vals):  # a value written into a unit's rows (the rows start zeroed)
            COUNTS["scan_match_writes"] += 1
        if got and len(prog) and prog[-1] == 0:  # a unit matched every template of a program
            COUNTS["scan_match_units"] += 1
    elif func == "mqget_lines":
        ends, n = np.array(extra[0], dtype=np.int64), extra[1]
        fine = 0 <= n <= len(buf) and bool(((at >= 0) & (ends >= at) & (ends <= len(buf))).all()
                                           and (np.diff(at) >= 0).all())
        try:
            special, units = c.mqget_lines(buf, n, at.tobytes(), ends.tobytes())
        except (ValueError, OverflowError):
            assert not fine, (offsets, extra)
            return
        assert fine
        special, units = np.frombuffer(special, np.int64), np.frombuffer(units, np.int64)
        assert ((special >= 0) & (special < len(at))).all() and set(units) <= set(special)
        COUNTS["scan_mqget_units"] += len(units) > 0
    elif func == "template_fields":
        check_template_fields(buf, at, extra)
    elif func == "trimmed_ends":
        ends = np.array(extra, dtype=np.int64)
        fine = bool(((at >= 0) & (ends >= at) & (ends <= len(buf))).all())
        try:
            got = np.frombuffer(c.trimmed_ends(buf, at.tobytes(), ends.tobytes()), np.int64)
        except (ValueError, OverflowError):
            assert not fine, (offsets, extra)
            return
        assert fine
        assert got.tolist() == [a + len(bytes(buf[a:z]).rstrip(b" ")) for a, z in zip(at, ends)]
    elif func == "probe_lines":
        # units probed at their current content line: refused (ValueError) or the rule
        units, lit, after = extra
        cfirst, ncont, ci = (np.array([u[j] for u in units], dtype=np.int64) for j in range(3))
        ok = bytes(1 for _ in units)
        try:
            got = c.probe_lines(buf, at.tobytes(), cfirst.tobytes(), ncont.tobytes(),
                                ci.tobytes(), ok, lit, after)
        except (ValueError, OverflowError):
            fine = ((cfirst >= 0) & (ncont >= 0) & (cfirst <= len(at) - ncont)).all()
            probed = [f + j for f, m, j in zip(cfirst.tolist(), ncont.tolist(), ci.tolist())
                      if 0 <= j < m]
            assert not fine or not all(0 <= at[k] <= len(buf) for k in probed), extra
            return
        assert ((cfirst >= 0) & (ncont >= 0) & (cfirst + ncont <= len(at))).all()

        def byte_at(i):
            return buf[i] if 0 <= i < len(buf) else 0

        for i, (f, m, j) in enumerate(zip(cfirst.tolist(), ncont.tolist(), ci.tolist())):
            want = 0 <= j < m
            if want:
                pos = int(at[f + j])
                assert 0 <= pos <= len(buf)
                if after:  # past ' length - ' and its digits (twelve count as none)
                    pos += 10
                    nd = 0
                    while nd < 12 and 48 <= byte_at(pos + nd) <= 57:
                        nd += 1
                    pos += nd if nd < 12 else 0
                want = all(byte_at(pos + c_) == b for c_, b in enumerate(lit))
            assert got[i] == want, (i, extra)
            COUNTS["scan_probe_hits"] += bool(want) and len(lit) > 0
    else:
        n = extra
        try:
            starts, ends, words, crlf = c.line_table(buf, n, True)
        except (ValueError, OverflowError):
            assert not 0 <= n <= len(buf), n
            return
        assert 0 <= n <= len(buf)
        assert len(ends) // 8 == buf[:n].count(b"\n") + (n > 0 and buf[n - 1] != 10)


def check_dmp_units(data: bytes, offsets, extra) -> None:
    """One call of ``dmp_units``: refused exactly when a line lies outside
    the buffer or a unit outside the lines; else every output consistent
    (units read within their lines, data lengths adding up). With a block's
    own lines (``offsets`` None) the units read are checked by the line
    reader: their MQMD rows and data are what it gives."""
    from dlqlens.capture import scan
    from dlqlens.capture.dmpmqmsg import fast
    from dlqlens.capture.dmpmqmsg.attrs import C_TABLES
    from dlqlens.capture.text import PAD

    buf = bytearray(data + bytes(PAD))
    if offsets is None:
        blk = fast._Block(buf, len(data), True)
        starts, cend, cls = blk.starts, blk.cend, blk.cls
        bounds = np.append(blk.unit_starts, blk.nlines).tolist()
        units = list(zip(bounds[:-1], bounds[1:]))  # the block's units, and lines anywhere
        units += [(min(a, b, blk.nlines), min(max(a, b), blk.nlines)) for a, b in extra]
    else:
        starts = np.array(offsets, dtype=np.int64)
        cend = np.array(extra[0], dtype=np.int64)
        cls = np.array(extra[1], dtype=np.int8)
        units = extra[2]
    us = np.array([u[0] for u in units], dtype=np.int64)
    ue = np.array([u[1] for u in units], dtype=np.int64)
    fine = bool(((starts >= 0) & (cend >= starts) & (cend <= len(buf))).all()
                and ((us >= 0) & (ue >= us) & (ue <= len(starts))).all())
    try:
        ok, md, ver, first_a, dl, out = scan.dmp_units(buf, starts, cend, cls, us, ue, C_TABLES)
    except (ValueError, OverflowError):
        assert not fine, (offsets, extra)
        return
    assert fine
    assert len(ok) == len(us) and len(md) == len(ver) == len(first_a) == len(dl) == ok.sum()
    assert ((first_a >= us[ok]) & (first_a < ue[ok])).all() and int(dl.sum()) == len(out)
    assert set(ver.tolist()) <= {1, 2}
    COUNTS["scan_dmp_units_read"] += int(ok.sum())
    if offsets is None and ok.any():  # what the line reader reads of the same lines
        from dlqlens.capture.dmpmqmsg.lines import _frame_lines
        from dlqlens.capture.text import iter_lines

        ends = np.cumsum(dl)
        for r, u in enumerate(np.flatnonzero(ok)):
            lo, hi = blk.line_offset(int(us[u])), blk.line_offset(int(ue[u]))
            fr, count = _frame_lines(iter_lines(buf[lo:hi], int(us[u]) + 1, lo), "f", 0)
            assert count == 1 and not fr.issues, (data, units[u])
            assert fr.md[0].tobytes() == md[r].tobytes()
            assert fr.md_version[0] == ver[r]
            assert fr.data[fr.starts[0]:fr.ends[0]].tobytes() == \
                out[ends[r] - dl[r]:ends[r]].tobytes()


def check_template_fields(buf: bytearray, at: np.ndarray, fields: list) -> None:
    """One call of ``template_fields``: refused (nothing written) exactly when
    a value would lie outside the buffer, a field outside the 16-byte rows,
    or a field is of no kind; else each field as the rule says (the bytes of
    a field no other field overlaps, every unit's ``ok``)."""
    from dlqlens.capture import scan

    width, n = 16, len(at)
    md = np.full((n, width), 0xEE, np.uint8)
    ok, ver = np.ones(n, np.uint8), np.zeros(n, np.int32)
    units = at.tolist()
    fine = all(0 <= a <= len(buf) for a in units) and all(
        0 <= k <= 4 and src >= 0 and ln >= 0 and dst >= 0 and size >= 0
        and (k > 1 or size == 4) and (not n or dst + size <= width)
        and all(a + src + ln <= len(buf) for a in units)
        for k, src, ln, dst, size in fields)
    try:
        scan._scan.template_fields(buf, at.tobytes(), np.array(fields, dtype=np.int64).tobytes()
                                   if fields else b"", md, ok, ver)
    except (ValueError, OverflowError):
        assert not fine, (units, fields)
        assert (md == 0xEE).all() and ok.all()
        return
    assert fine, (units, fields)

    def alone(j):
        d, z = fields[j][3], fields[j][4]
        return all(f[3] + f[4] <= d or f[3] >= d + z for i, f in enumerate(fields) if i != j)

    want_ok = [True] * n
    for j, (k, src, ln, dst, size) in enumerate(fields):
        if k >= 3 and ln != 2 * size:
            want_ok = [False] * n
            continue
        for i, a in enumerate(units):
            v = bytes(buf[a + src:a + src + ln])
            got = md[i, dst:dst + size].tobytes()
            if k <= 1:
                good = re.fullmatch(rb"-?[0-9]{1,10}", v) is not None and \
                    -2**31 <= int(v) < 2**31
                x = int(v) if good else 0
                if k == 1:
                    x = x if x in (1, 2) else 2
                    if j == max(m for m, f in enumerate(fields) if f[0] == 1):  # the last
                        assert ver[i] == x
                want_ok[i] &= good
                want = x.to_bytes(4, "little", signed=True)
            elif k == 2:
                want = (v[:size] + b" " * size)[:size]
            else:
                good = re.fullmatch(rb"[0-9A-Fa-f]*", v) is not None and \
                    (k == 3 or all(b < 0x80 for b in bytes.fromhex(v.decode())))
                want_ok[i] &= good
                want = bytes.fromhex(v.decode()) if good else got
            if alone(j):
                assert got == want, (v, got, want)
    assert ok.tolist() == [int(w) for w in want_ok], (units, fields)
    COUNTS["scan_template_values"] += bool(fields) and any(want_ok)


def atheris_main(target: str, seconds: int, argv: list[str]) -> None:  # pragma: no cover
    """Coverage-guided fuzzing with atheris (when installed): raw bytes of
    ``target``'s format, seeded with the hostile corpus."""
    import atheris

    with atheris.instrument_imports():
        import dlqlens.capture.amqsbcg  # noqa: F401
        import dlqlens.capture.dmpmqmsg  # noqa: F401
        import dlqlens.capture.raw  # noqa: F401
        import dlqlens.decode.records  # noqa: F401
        import dlqlens.rules.parser  # noqa: F401
    tmp = Path(tempfile.mkdtemp(prefix="dlqlens-atheris-"))
    p = tmp / "input.txt"

    def one(data: bytes):
        COUNTS[target] += 1
        if target == "rules":
            check_rules(data.decode("latin-1"))
            return
        p.write_bytes(data)
        check_capture(p, target)

    corpus = Path(__file__).parent / "hostile" / "corpus"
    args = [sys.argv[0], f"-max_total_time={seconds}", "-max_len=65536", *argv]
    if corpus.exists() and target != "rules":
        # libFuzzer adds what it finds to its first corpus directory: a copy,
        # so that the committed corpus stays what generate.py makes
        import shutil
        work = tmp / "corpus"
        shutil.copytree(corpus, work)
        args.append(str(work))
    t0 = time.time()
    atheris.Setup(args, one)
    try:
        atheris.Fuzz()
    finally:
        print(f"atheris {target}: {COUNTS[target]} inputs in {time.time() - t0:.0f} s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("--target", choices=TARGETS + ("all",), default="all")
    ap.add_argument("--examples", type=int, default=2000, help="inputs per target (hypothesis)")
    ap.add_argument("--atheris", action="store_true", help="coverage-guided, raw bytes")
    ap.add_argument("--seconds", type=int, default=300, help="atheris run time per target")
    ap.add_argument("--budget", type=int, default=0,
                    help="hypothesis: run batches of inputs for this many seconds per target")
    args, rest = ap.parse_known_args(argv)
    targets = TARGETS if args.target == "all" else (args.target,)
    if args.atheris:
        if len(targets) != 1:
            ap.error("--atheris fuzzes one --target at a time")
        atheris_main(targets[0], args.seconds, rest)
        return 0
    failures = 0
    for t in targets:
        t0 = time.time()
        try:
            if args.budget:
                # random batches until the time budget is spent
                n = 0
                while time.time() - t0 < args.budget:
                    n += run_target(t, min(args.examples, 500))
            else:
                n = run_target(t, args.examples)
            print(f"{t}: {n} inputs, no failure ({time.time() - t0:.0f} s)", flush=True)
        except Exception as exc:  # report and go on with the other targets
            failures += 1
            print(f"{t}: FAILED after {COUNTS[t]} inputs ({time.time() - t0:.0f} s): "
                  f"{type(exc).__name__}: {exc}", flush=True)
    print("total inputs: " + ", ".join(f"{t} {COUNTS[t]}" for t in targets), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
