"""Generate the hostile-input corpus of ``tests/hostile/corpus/`` and its manifest.

Run ``python tests/hostile/generate.py`` from the repository root: every file
is rebuilt from a fixed seed (the test suite checks that a fresh run gives the
committed bytes). Each case is one small file plus an entry in
``MANIFEST.json`` saying what it is and what must happen when it is read:

``good``
    payloads of the good messages around the bad one; each must come out as a
    row with ``decode_status`` ``ok`` and exactly that payload.
``bad``
    ``[status, issue code]`` pairs that must be found among the rows.
``framed``
    exact number of messages framed (``None``: not pinned).
``error``
    the read of the file named explicitly (``format`` as given) must raise
    this exception class with a message naming the file.

Rules-table cases (``kind: "rules"``) say which diagnostic codes must appear
(``diagnostics``) and, for pathological patterns, which field values they are
matched against (``match``).

Big cases (a 100 MB single line, files claiming gigabyte lengths backed by
real data) are not committed: ``tests/hostile/test_hostile.py`` builds them
in a temporary directory with :func:`big_cases`.
"""

from __future__ import annotations

import json
import random
import struct
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from dlqlens.capture import amqsbcg, dmpmqmsg, raw  # noqa: E402
from dlqlens.capture.message import CaptureMessage, dead_letter  # noqa: E402
from dlqlens.mq.structs import MQDLH, MQRFH2, MQTM, MQXQH  # noqa: E402
from tests import builders  # noqa: E402
from tests.builders import dlh_fields  # noqa: E402

CORPUS = HERE / "corpus"
MANIFEST = HERE / "MANIFEST.json"
SEED = 20240315

GOOD_BEFORE = b"good before"
GOOD_AFTER = b"good after"


def md_fields(**kw) -> dict:
    """The builders' ordinary MQMD (:func:`tests.builders.md_fields`), in CCSID 819."""
    return builders.md_fields(**{"CodedCharSetId": 819, **kw})


def good(payload: bytes) -> CaptureMessage:
    return dead_letter(md_fields(), dlh_fields(), payload, ccsid=819)


def with_data(data: bytes, **md) -> CaptureMessage:
    """A message whose data is ``data`` exactly (MQMD fields from ``md``)."""
    return CaptureMessage(md=md_fields(**md), data=data, md_byteorder="<", md_codec="latin-1")


def dlh(fmt: str = "MQSTR", **kw) -> bytes:
    return MQDLH.pack(dlh_fields(Format=fmt, Encoding=546, CodedCharSetId=819, Version=1,
                                 **kw), "<", "latin-1")


def xqh(fmt: str = "MQSTR") -> bytes:
    return MQXQH.pack({"Version": 1, "RemoteQName": "REMOTE.Q", "RemoteQMgrName": "QM2",
                       "MsgDesc.StrucId": "MD  ", "MsgDesc.Version": 1,
                       "MsgDesc.Encoding": 546, "MsgDesc.CodedCharSetId": 819,
                       "MsgDesc.Format": fmt}, "<", "latin-1")


def tm() -> bytes:
    return MQTM.pack({"Version": 1, "QName": "APP.TRIGGERED", "ProcessName": "PROC",
                      "ApplType": 6, "ApplId": "/usr/bin/app"}, "<", "latin-1")


def rfh2(fmt: str = "MQSTR", folders: bytes = b"", length: int | None = None,
         struc_id: str | None = None) -> bytes:
    body = b""
    if folders:
        pad = (-len(folders)) % 4
        f = folders + b" " * pad
        body = struct.pack("<i", len(f)) + f
    values = {"Version": 2, "StrucLength": length if length is not None else 36 + len(body),
              "Encoding": 546, "CodedCharSetId": 819, "Format": fmt, "NameValueCCSID": 1208}
    if struc_id is not None:
        values["StrucId"] = struc_id
    return MQRFH2.pack(values, "<", "latin-1") + body


FOLDER = b"<usr><id>42</id></usr>"


def record(m: CaptureMessage) -> bytes:
    body = m.md_bytes() + m.data
    return struct.pack(">I", len(body)) + body


RAW_HEAD = raw.MAGIC + struct.pack(">I", raw.FORMAT_VERSION)


def raw_between(*middle: bytes) -> bytes:
    """A raw capture (no index): good, the middle records, good."""
    return RAW_HEAD + record(good(GOOD_BEFORE)) + b"".join(middle) + record(good(GOOD_AFTER))


def write_text(fmt: str, path: Path, messages: list[CaptureMessage]) -> None:
    if fmt == "dmpmqmsg":
        dmpmqmsg.write_dmpmqmsg(path, messages)
    else:
        amqsbcg.write_amqsbcg(path, messages)


def text_between(fmt: str, bad: CaptureMessage) -> bytes:
    """The text capture of good, ``bad``, good (written by the format's writer)."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d) / "capture"
        write_text(fmt, tmp, [good(GOOD_BEFORE), bad, good(GOOD_AFTER)])
        return tmp.read_bytes()


GB = ["good before", "good after"]


def cases() -> list[tuple[dict, bytes]]:
    """``(manifest entry, file bytes)`` of every committed case."""
    rnd = random.Random(SEED)
    out: list[tuple[dict, bytes]] = []

    def add(name, what, data, *, format="auto", good=GB, bad=(), framed=None, error=None,
            kind="capture", **extra):
        entry = {"file": name, "kind": kind, "what": what, "format": format,
                 "good": list(good), "bad": [list(b) for b in bad], "framed": framed,
                 "error": error}
        entry.update(extra)
        out.append((entry, data))

    md_bytes = good(b"x").md_bytes()
    full = {
        "MQDLH": (dlh("MQSTR") + b"payload", "MQDEAD", len(dlh())),
        "MQXQH": (xqh("MQSTR") + b"payload", "MQXMIT", len(xqh())),
        "MQTM": (dlh("MQTRIG") + tm(), "MQDEAD", len(dlh()) + len(tm())),
        "RFH2": (dlh("MQHRF2") + rfh2("MQSTR", FOLDER) + b"payload", "MQDEAD", None),
    }
    # --- truncations at every header boundary ------------------------------
    for cut, label in ((100, "inside"), (323, "one byte short of")):
        add(f"raw_trunc_mqmd_{cut}.bin",
            f"raw: a record whose body stops {label} the MQMD ({cut} bytes), between good ones",
            raw_between(struct.pack(">I", cut) + md_bytes[:cut]),
            bad=[["bad_framing", "bad_length"]], framed=3)
    add("raw_trunc_mqmd_end.bin",
        "raw: a record that is exactly an MQMD (Format MQDEAD, no data at all)",
        raw_between(record(with_data(b"", Format="MQDEAD"))),
        bad=[["truncated", "header_truncated"]], framed=3)
    for hdr, (data, md_fmt, _) in full.items():
        starts = {"MQDLH": [0], "MQXQH": [0], "MQTM": [len(dlh())], "RFH2": [len(dlh())]}[hdr]
        for s in starts:
            for k, label in ((s + 3, "mid_strucid"), (s + 20, "mid"),
                             (s + {"MQDLH": 171, "MQXQH": 427, "MQTM": 683,
                                   "RFH2": 35}[hdr], "one_short")):
                name = f"{hdr.lower()}_trunc_{label}"
                m = with_data(data[:k], Format=md_fmt)
                want = [["bad_header" if hdr == "RFH2" and label != "mid_strucid"
                         else "truncated", "header_truncated"]]
                add(f"raw_{name}.bin",
                    f"raw: {hdr} cut after {k - s} of its bytes ({label}), between good ones",
                    raw_between(record(m)), bad=want, framed=3)
                if label == "mid":
                    for fmt in ("dmpmqmsg", "amqsbcg"):
                        ext = "dmp" if fmt == "dmpmqmsg" else "bcg"
                        add(f"{fmt}_{name}.{ext}",
                            f"{fmt}: {hdr} cut after {k - s} bytes of the data",
                            text_between(fmt, m), bad=want, framed=3)
    rf = rfh2("MQSTR", FOLDER)
    add("raw_rfh2_trunc_folders.bin",
        "raw: RFH2 whose StrucLength covers folders the record does not have",
        raw_between(record(with_data(dlh("MQHRF2") + rf[:40], Format="MQDEAD"))),
        bad=[["bad_header", "bad_struc_length"]], framed=3)
    last = record(good(b"cut short at the end of the file"))
    add("raw_trunc_last_record.bin",
        "raw: the last record's length prefix runs past the end of the file",
        RAW_HEAD + record(good(GOOD_BEFORE)) + record(good(GOOD_AFTER)) + last[:-10],
        bad=[["truncated", "data_truncated"]], framed=3)
    # --- wrong StrucIds -----------------------------------------------------
    bad_md = bytearray(md_bytes)
    bad_md[:4] = b"MX  "
    add("raw_wrong_strucid_md.bin", "raw: an MQMD StrucId 'MX  ' (length prefix fine)",
        raw_between(struct.pack(">I", len(bad_md) + 4) + bytes(bad_md) + b"data"),
        bad=[["bad_descriptor", "bad_md"]], framed=3)
    for hdr, data, md_fmt in (("dlh", b"DLX " + dlh()[4:] + b"p", "MQDEAD"),
                              ("xqh", b"XQX " + xqh()[4:] + b"p", "MQXMIT"),
                              ("tm", dlh("MQTRIG") + b"TX  " + tm()[4:], "MQDEAD"),
                              ("rfh2", dlh("MQHRF2") + rfh2(struc_id="RFX ") + b"p", "MQDEAD")):
        add(f"raw_wrong_strucid_{hdr}.bin", f"raw: {hdr.upper()} with a wrong StrucId",
            raw_between(record(with_data(data, Format=md_fmt))),
            bad=[["bad_header", "bad_struc_id"]], framed=3)
        add(f"dmpmqmsg_wrong_strucid_{hdr}.dmp", f"dmpmqmsg: {hdr.upper()} with a wrong StrucId",
            text_between("dmpmqmsg", with_data(data, Format=md_fmt)),
            bad=[["bad_header", "bad_struc_id"]], framed=3)
    # --- lengths that claim gigabytes / negative lengths --------------------
    add("raw_length_gigabytes_mid.bin",
        "raw: a length prefix of 3 GB (X'C0000000') between good records",
        raw_between(struct.pack(">I", 0xC0000000) + md_bytes + b"tail"),
        bad=[["bad_framing", "bad_length"]], framed=3)
    add("raw_length_gigabytes_last.bin",
        "raw: the last record claims 2 GB (X'7FFFFFFF') and holds a few bytes",
        RAW_HEAD + record(good(GOOD_BEFORE)) + record(good(GOOD_AFTER))
        + struct.pack(">I", 0x7FFFFFFF) + good(b"x").md_bytes() + dlh()[:40],
        bad=[["bad_framing", "bad_length"]], framed=3)
    add("raw_length_negative.bin",
        "raw: a length prefix of -1 (X'FFFFFFFF') between good records",
        raw_between(struct.pack(">i", -1) + md_bytes + b"tail"),
        bad=[["bad_framing", "bad_length"]], framed=3)
    n_fake = 1 << 60
    add("raw_index_claims_2e60_records.bin",
        "raw: an index trailer claiming 2**60 records",
        raw_between() + struct.pack(">Q", n_fake) + raw.INDEX_MAGIC, good=GB,
        bad=[["bad_framing", "bad_length"]], framed=3)
    for val, label in ((0x7FFFFFF0, "gigabytes"), (-1, "negative"), (-36, "negative36"),
                       (0, "zero")):
        add(f"raw_rfh2_struclength_{label}.bin",
            f"raw: RFH2 StrucLength {val}",
            raw_between(record(with_data(dlh("MQHRF2") + rfh2(length=val) + b"p",
                                         Format="MQDEAD"))),
            bad=[["bad_header", "bad_struc_length"]], framed=3)
    add("raw_md_version_negative.bin", "raw: MQMD Version -1",
        raw_between(struct.pack(">I", len(md_bytes) + 2) + md_bytes[:4]
                    + struct.pack("<i", -1) + md_bytes[8:] + b"pp"),
        bad=[["bad_descriptor", "bad_md"]], framed=3)
    # amqsbcg: stated lengths and dump offsets in the gigabytes
    bcg = text_between("amqsbcg", good(b"middle message")).decode()
    lines = bcg.split("\n")
    mid_at = [i for i, ln in enumerate(lines) if "MQGET of message number 2" in ln][0]
    dump_at = [i for i in range(mid_at, len(lines)) if lines[i].startswith("00000000:")][0]
    len_at = [i for i in range(mid_at, len(lines)) if "length - " in lines[i]][0]

    def bcg_with(length_line: str, *, insert=None) -> bytes:
        bl = list(lines)
        bl[len_at] = length_line
        if insert is not None:
            bl.insert(dump_at + 1, insert)
        return "\n".join(bl).encode()

    add("amqsbcg_length_gigabytes.bcg",
        "amqsbcg: 'length - 2147483000 bytes' with a dump of a few bytes",
        bcg_with(" length - 2147483000 bytes"), bad=[["truncated", "data_truncated"]], framed=3)
    add("amqsbcg_length_of_gigabytes.bcg",
        "amqsbcg: 'length - 20 of 2147483000 bytes' (a browse that kept 20 bytes)",
        bcg_with(" length - 20 of 2147483000 bytes"), bad=[["bad_data", "length_mismatch"]],
        framed=3)
    add("amqsbcg_length_huge_number.bcg",
        "amqsbcg: a length of 99999999999999999999999 bytes (more than any integer column)",
        bcg_with(" length - 99999999999999999999999 bytes"),
        bad=[["bad_data", "length_mismatch"]], framed=3)
    add("amqsbcg_length_negative.bcg",
        "amqsbcg: 'length - -5 bytes'",
        bcg_with(" length - -5 bytes"), bad=[["truncated", "data_truncated"]], framed=3)
    add("amqsbcg_dump_offset_gigabytes.bcg",
        "amqsbcg: length 2147483000 and a dump line at offset X'7FFFF000' "
        "(a gap that must not be zero-filled in memory)",
        bcg_with(" length - 2147483000 bytes",
                 insert="7FFFF000:  4142 4344                                'ABCD            '"),
        bad=[["bad_data", "length_mismatch"]], framed=3)
    dm = text_between("dmpmqmsg", good(b"middle message")).decode()
    dm_lines = dm.split("\n")
    msg_starts = [i for i, ln in enumerate(dm_lines) if ln.startswith("A VER")]
    in_mid = range(msg_starts[1], msg_starts[2])
    hl = list(dm_lines)
    for i in in_mid:
        if hl[i].startswith("A ORL"):
            hl[i] = "A ORL 99999999999"
        if hl[i].startswith("A BOC"):
            hl[i] = "A BOC -99999999999"
    add("dmpmqmsg_orl_huge.dmp", "dmpmqmsg: A ORL 99999999999 and A BOC -99999999999",
        "\n".join(hl).encode(), bad=[["bad_descriptor", "bad_md_field"]], framed=3)
    # --- invalid hex -------------------------------------------------------
    xs = [i for i in in_mid if dm_lines[i].startswith("X ")]
    mid_x = xs[len(xs) // 2]
    hl = list(dm_lines)
    hl[mid_x] = "X " + "ZZ" + hl[mid_x][4:]
    add("dmpmqmsg_invalid_hex.dmp", "dmpmqmsg: an X line starting 'ZZ'",
        "\n".join(hl).encode(), bad=[["bad_data", "bad_hex"]], framed=3)
    hl = list(dm_lines)
    hl[mid_x] = hl[mid_x] + "A"
    add("dmpmqmsg_odd_hex.dmp", "dmpmqmsg: an X line with an odd number of digits",
        "\n".join(hl).encode(), bad=[["bad_data", "bad_hex"]], framed=3)
    hl = list(dm_lines)
    msi = [i for i in in_mid if dm_lines[i].startswith("A MSI")][0]
    hl[msi] = "A MSI " + "G" * 48
    add("dmpmqmsg_invalid_hex_msgid.dmp", "dmpmqmsg: A MSI of non-hex digits",
        "\n".join(hl).encode(), bad=[["bad_descriptor", "bad_md_field"]], framed=3)
    bl = list(lines)
    bl[dump_at] = bl[dump_at][:11] + "G1G2" + bl[dump_at][15:]
    add("amqsbcg_invalid_hex.bcg", "amqsbcg: a dump line with 'G1G2' in its hex columns",
        "\n".join(bl).encode(), bad=[["bad_data", "bad_hex"]], framed=3)
    bl = list(lines)
    mi = [i for i in range(mid_at, len(lines)) if "MsgId" in lines[i]][0]
    bl[mi] = "  MsgId : X'ZZZZ'"
    add("amqsbcg_invalid_hex_msgid.bcg", "amqsbcg: MsgId X'ZZZZ'",
        "\n".join(bl).encode(), bad=[["bad_descriptor", "bad_md_field"]], framed=3)
    # --- NUL bytes ----------------------------------------------------------
    add("raw_nul_stretch.bin", "raw: 4 KB of NUL bytes between two good records",
        raw_between(bytes(4096)), bad=[["bad_framing", "bad_length"]], framed=3)
    nl = list(dm_lines)
    pan = [i for i in in_mid if dm_lines[i].startswith("A PAN")][0]
    nl[pan] = "A PAN ord\0\0ers"
    nl.insert(mid_x, "\0" * 40)
    add("dmpmqmsg_nul_bytes.dmp", "dmpmqmsg: NULs in an attribute value and a line of NULs",
        "\n".join(nl).encode(), bad=[["bad_framing", "unframed"]], framed=4)
    bl = list(lines)
    bl.insert(mid_at + 3, "\0\0\0\0  Report   : \0  MsgType : 8")
    add("amqsbcg_nul_bytes.bcg", "amqsbcg: NULs in a descriptor line",
        "\n".join(bl).encode(), good=GB, bad=[], framed=3)
    # --- mixed encodings ----------------------------------------------------
    ebc = dead_letter(md_fields(Encoding=785, CodedCharSetId=500), dlh_fields(),
                      "EBCDIC payload".encode("cp500"), encoding=785, ccsid=500)
    add("raw_mixed_layouts.bin",
        "raw: ASCII little-endian and EBCDIC big-endian records in one file",
        raw_between(record(ebc)), good=GB, bad=[], framed=3)
    mixed = (dm.replace("A PAN orders", "A PAN ordérs", 1).encode("utf-8")
             + "A PAN caf\xe9\n".encode("latin-1") + "X 41\n".encode("utf-16-le")
             + "\n".encode())
    add("dmpmqmsg_mixed_encodings.dmp",
        "dmpmqmsg: UTF-8, Latin-1 and UTF-16LE lines in one file",
        mixed, bad=[["bad_framing", "unframed"]], framed=5)
    bmix = bcg.replace("orders", "ordérs", 1).encode("utf-8") + \
        "MQGET of message number 9\n****Message descriptor****\n  PutApplName    : 'caf\xe9'\n" \
        .encode("latin-1") + "garbage\n".encode("utf-16-le")
    add("amqsbcg_mixed_encodings.bcg",
        "amqsbcg: UTF-8, Latin-1 and UTF-16LE text in one file",
        bmix, good=GB, bad=[["bad_descriptor", "bad_md_field"]], framed=4)
    # --- EBCDIC in an ASCII-labelled message --------------------------------
    ebc_dlh = MQDLH.pack(dlh_fields(Format="MQSTR", Encoding=785, CodedCharSetId=500,
                                    Version=1), ">", "cp500")
    add("raw_ebcdic_dlh_ascii_label.bin",
        "raw: MQMD says CCSID 819 / Encoding 546 but the MQDLH is EBCDIC big-endian",
        raw_between(record(with_data(ebc_dlh + b"x", Format="MQDEAD"))),
        bad=[["ok", "charset_mismatch"], ["ok", "encoding_mismatch"]], framed=3)
    add("raw_ebcdic_payload_ascii_label.bin",
        "raw: MQDLH says CCSID 819, the payload is EBCDIC text",
        raw_between(record(with_data(dlh("MQSTR") + "HELLO EBCDIC".encode("cp500"),
                                     Format="MQDEAD"))),
        good=GB, bad=[], framed=3)
    # --- deep and looping header chains -------------------------------------
    deep = dlh("MQHRF2") + b"".join(rfh2("MQHRF2") for _ in range(40)) + b"end"
    add("raw_deep_chain.bin", "raw: MQDLH followed by 40 chained RFH2 headers",
        raw_between(record(with_data(deep, Format="MQDEAD"))),
        bad=[["bad_header", "chain_too_deep"]], framed=3)
    loop = dlh("MQDEAD") * 30 + b"end"
    add("raw_loop_dlh.bin", "raw: MQDLH whose Format is MQDEAD again, 30 times",
        raw_between(record(with_data(loop, Format="MQDEAD"))),
        bad=[["bad_header", "chain_too_deep"]], framed=3)
    xloop = xqh("MQXMIT") * 30 + b"end"
    add("raw_loop_xqh.bin", "raw: MQXQH whose MsgDesc.Format is MQXMIT again, 30 times",
        raw_between(record(with_data(xloop, Format="MQXMIT"))),
        bad=[["bad_header", "chain_too_deep"]], framed=3)
    self_loop = dlh("MQHRF2") + rfh2("MQHRF2", length=0) * 4
    add("raw_loop_rfh2_self.bin",
        "raw: RFH2 with StrucLength 0 and Format MQHRF2 (points at itself)",
        raw_between(record(with_data(self_loop, Format="MQDEAD"))),
        bad=[["bad_header", "bad_struc_length"]], framed=3)
    # --- empty files, binary junk ------------------------------------------
    add("empty.bin", "an empty file", b"", good=[], framed=0)
    add("empty.txt", "an empty .txt file", b"", good=[], framed=0)
    add("blank_lines.txt", "a .txt file of blank lines only", b"\n\r\n  \n" * 10,
        good=[], framed=0, error="CaptureError")
    junk = bytes(rnd.randrange(256) for _ in range(8192))
    add("binary_junk.txt", "8 KB of random bytes named .txt", junk, good=[], framed=None,
        error="CaptureError")
    for fmt in ("dmpmqmsg", "amqsbcg", "raw"):
        add(f"binary_junk_as_{fmt}.txt", f"8 KB of random bytes read as format={fmt}",
            junk, format=fmt, good=[], framed=None,
            # (amqsbcg named, nothing framed: an error since issue 19)
            error="CaptureError" if fmt in ("raw", "amqsbcg") else None)
    junk_nl = bytes(rnd.choice(b"AXST *\n\0\xff") for _ in range(8192))
    for fmt in ("dmpmqmsg", "amqsbcg"):
        add(f"line_junk_as_{fmt}.txt",
            f"8 KB of 'A', 'X', 'S', 'T', '*', blanks, NULs and line ends read as {fmt}",
            junk_nl, format=fmt, good=[], framed=None,
            error="CaptureError" if fmt == "amqsbcg" else None)
    # --- rules tables -------------------------------------------------------
    pat = "*?" * 20 + "X"
    add("rules_star_question.rul",
        "rules: DESTQ('*?*?...*?X') and APPLNAME('*A*A*A*A*A*A*B') patterns",
        (f"DESTQ('{pat[:46]}') ACTION(DISCARD)\n"
         "APPLNAME('*A*A*A*A*A*A*A*A*A*A*A*B') ACTION(IGNORE)\n"
         "DESTQ('?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*') ACTION(RETRY)\n"
         "ACTION(IGNORE)\n").encode(),
        kind="rules", good=[], diagnostics=[],
        match=[[pat[:46], "A" * 47], ["*A*A*A*A*A*A*A*A*A*A*A*B", "A" * 27],
               ["?*" * 24, " " * 48]])
    cont = "ACTION(DISCARD) DESTQ('A+\n" + "B+\n" * 3000 + "C')\n"
    add("rules_huge_continuation.rul",
        "rules: one entry continued over 3,000 lines (a 3,002-character value)",
        cont.encode(), kind="rules", good=[], diagnostics=["value-too-long"])
    ctl = ("INPUTQ(\x1bDLQ) \x07\x0c\n"
           "REASON(MQRC_Q_FULL)\x0b ACTION(RETRY)\r\r\n"
           "DESTQ('A\x08B\x7f\x85\u2028') ACTION(DISCARD)\n"
           "\x1b[31mACTION(IGNORE)\x1b[0m\n")
    add("rules_control_chars.rul",
        "rules: ESC, BEL, FF, VT, CR, BS, DEL, NEL and U+2028 in entries",
        ctl.encode("utf-8"), kind="rules", good=[],
        diagnostics=["needs-quotes", "unknown-keyword", "missing-action"])
    add("rules_nul.rul", "rules: a table with a NUL byte", b"ACTION(IGNORE)\0\n",
        kind="rules", good=[], diagnostics=[], error="RulesError")
    add("rules_binary_junk.rul", "rules: 8 KB of random bytes (no NUL)",
        bytes(b if b else 1 for b in junk), kind="rules", good=[], diagnostics=["syntax"])

    # --- issue 19 (commands): rules tables saved as UTF-16 ---------------------------------
    # runmqdlq cannot read them: refused with what they are and the iconv command, with or
    # without a byte-order mark (docs/rules.md, parser choices)
    table16 = "* shop rules, saved as Unicode\r\nREASON(MQRC_Q_FULL) ACTION(RETRY)\r\n"
    for name, codec, iconv in (("rules_utf16_bom.rul", "utf-16-le", "UTF-16"),
                               ("rules_utf16le.rul", "utf-16-le", "UTF-16LE"),
                               ("rules_utf16be_bom.rul", "utf-16-be", "UTF-16"),
                               ("rules_utf16be.rul", "utf-16-be", "UTF-16BE")):
        bom = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}[codec]
        data = (bom if "bom" in name else b"") + table16.encode(codec)
        add(name, f"rules: a table saved as {codec.upper()}"
            + (" with a byte-order mark" if "bom" in name else " without a byte-order mark"),
            data, kind="rules", good=[], diagnostics=[], error="RulesError",
            message=f"iconv -f {iconv} -t UTF-8")

    # --- issue 19 (branch perf19): hangs and unbounded memory in rules tables ----
    add("rules_exponential_shadowing.rul",
        "rules: four DESTQ('*A?????????')-like rules (148 bytes) whose exact shadowing "
        "check explores ~4**10 states; lint stops at its work budget",
        ("DESTQ('*A?????????') ACTION(DISCARD)\n"
         "DESTQ('*B?????????') ACTION(DISCARD)\n"
         "DESTQ('*A????????C') ACTION(DISCARD)\n"
         "DESTQ('*?????????A') ACTION(DISCARD)\n").encode(),
        kind="rules", good=[], diagnostics=[])
    add("rules_long_quoted_value.rul",
        "rules: a 20,000-character quoted DESTQ value (the lexer stops reading it at "
        "1,024 characters)",
        ("DESTQ('" + "Q" * 20_000 + "') ACTION(DISCARD)\nACTION(IGNORE)\n").encode(),
        kind="rules", good=[], diagnostics=["value-too-long", "line-too-long"])

    issue19_cases(add)
    issue23_pcap_cases(add)
    hexdump_cases(add)
    fragment_cases(add)
    return out


# ---------------------------------------------------------------------------
# issue 23 part 3: MQ client traffic captures (pcap/pcapng)
# ---------------------------------------------------------------------------

def issue23_pcap_cases(add) -> None:
    """Damaged MQ client conversations: three MQPUTs (good before, the bad
    one, good after) over one TCP connection."""
    from dlqlens.capture.pcap import write_pcap

    three = [good(b"good before"), good(b"middle " * 300), good(b"good after")]

    def pcap(**kw) -> bytes:
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "c.pcap"
            write_pcap(p, three, **kw)
            return p.read_bytes()

    def drop_in_middle(packets):
        # the client's packets: MQOPEN, the first MQPUT (2), then the middle
        # MQPUT cut at mss 400: lose its fourth, inside the message data
        client = [k for k, pk in enumerate(packets) if pk[0] == 0]
        return [pk for k, pk in enumerate(packets) if k != client[6]]

    add("pcap_gap_inside_message.pcap",
        "pcap: a TCP packet inside the middle MQPUT was not captured (a gap): its data is "
        "cut, the rest of its segment is an unframed stretch, the messages around it are whole",
        pcap(mss=400, packet_order=drop_in_middle),
        bad=[["truncated", "data_truncated"], ["bad_framing", "unframed"]], framed=4)

    def twice_and_swapped(packets):
        out = [pk for pk in packets for _ in (0, 1)]
        out[4], out[7] = out[7], out[4]
        return out

    add("pcap_duplicated_reordered.pcapng",
        "pcapng: every packet captured twice (two interfaces) and two out of order",
        pcap(container="pcapng", mss=300, packet_order=twice_and_swapped),
        good=["good before", "middle " * 300, "good after"], bad=[], framed=3)

    data = bytearray(pcap(max_segment=32768, mss=65000))
    tsh = [k for k in range(len(data)) if data[k:k + 4] == b"TSHM"]
    at = tsh[4]  # MQOPEN, its reply, the first MQPUT and its reply, then the middle MQPUT
    data[at + 4:at + 8] = struct.pack(">I", 5)
    add("pcap_tsh_length_too_small.pcap",
        "pcap: the middle MQPUT's TSHM says its segment is 5 bytes long (less than the TSHM "
        "itself): the walk finds the next TSH",
        bytes(data), bad=[["bad_framing", "unframed"]], framed=3)

    data = bytearray(pcap(max_segment=32768, mss=65000))
    pmo = [k for k in range(len(data)) if data[k:k + 4] == b"PMO "]
    at = pmo[2] + 128  # the middle MQPUT's MQPMO (after the first's and its reply's): data length
    assert data[at:at + 4] == struct.pack("<i", len(three[1].data))
    data[at:at + 4] = struct.pack("<i", 0x7FFFFFF0)
    add("pcap_data_length_huge.pcap",
        "pcap: the middle MQPUT states 2,147,483,632 bytes of data (over maxMessageBytes)",
        bytes(data), bad=[["bad_framing", "too_large"]], framed=3)

    data = pcap(mss=400)
    add("pcap_cut_inside_last_packet.pcap",
        "pcap: the file ends inside the record of the packet holding the last MQPUT (its "
        "reply and the rest are not in the file)",
        data[:data.rfind(b"good after") + 4], good=["good before", "middle " * 300], bad=[["truncated", "data_truncated"]],
        framed=3)

    add("pcap_header_only_garbage.pcap",
        "pcap: a pcap magic number and garbage instead of the rest of the file header",
        bytes.fromhex("d4c3b2a1") + b"\xff" * 9, format="pcap", good=[],
        error="CaptureError")


# ---------------------------------------------------------------------------
# issue 19 (readers): messages lost or rewritten without a word
# ---------------------------------------------------------------------------

def issue19_cases(add) -> None:
    """The cases of issue 19's reader defects (their own random source, so
    that the cases above keep their bytes)."""
    dm = text_between("dmpmqmsg", good(b"middle message"))
    bcg = text_between("amqsbcg", good(b"middle message"))
    good3 = ["good before", "middle message", "good after"]
    # 1. line ends: CR only, and CR / LF / CR LF mixed
    rnd = random.Random(19)
    for fmt, text, ext in (("dmpmqmsg", dm, "dmp"), ("amqsbcg", bcg, "bcg")):
        add(f"{fmt}_cr_line_ends.{ext}", f"{fmt}: every line ended by a CR alone (tr '\\n' '\\r')",
            text.replace(b"\n", b"\r"), good=good3, framed=3)
        mixed = b"".join(ln + rnd.choice([b"\n", b"\r", b"\r\n"]) for ln in text.split(b"\n"))
        add(f"{fmt}_mixed_line_ends.{ext}", f"{fmt}: line ends CR, LF and CR LF mixed",
            mixed, good=good3, framed=3)
    # 2. raw: a length prefix enlarged over the records after it; an index that
    # contradicts the prefixes; damage before every record; large prefixes
    five = [good(GOOD_BEFORE), good(b"second"), good(b"third"), good(b"fourth"),
            good(GOOD_AFTER)]
    recs = [record(m) for m in five]
    for index in (False, True):
        body = bytearray(RAW_HEAD + b"".join(recs))
        at = len(RAW_HEAD) + len(recs[0])
        struct.pack_into(">I", body, at, len(recs[1]) + len(recs[2]) + len(recs[3]) - 4)
        if index:
            offs = [len(RAW_HEAD) + sum(len(r) for r in recs[:k]) for k in range(5)]
            body += b"".join(struct.pack(">Q", o) for o in offs)
            body += struct.pack(">Q", 5) + raw.INDEX_MAGIC
        add(f"raw_length_swallows_records{'_indexed' if index else ''}.bin",
            "raw: the second record's length prefix enlarged to cover the next two"
            + (" (the index still right)" if index else ""),
            bytes(body), good=["good before", "third", "fourth", "good after"],
            bad=[["bad_data", "length_mismatch"]], framed=5)
    body = bytearray(RAW_HEAD + b"".join(recs))
    offs = [len(RAW_HEAD) + sum(len(r) for r in recs[:k]) for k in range(5)]
    offs[2] += 8
    body += b"".join(struct.pack(">Q", o) for o in offs) + struct.pack(">Q", 5) + raw.INDEX_MAGIC
    add("raw_index_contradicts_prefixes.bin",
        "raw: an index whose third entry points 8 bytes into a record",
        bytes(body), good=["good before", "second", "third", "fourth", "good after"],
        bad=[["ok", "index_mismatch"]], framed=5)
    body = RAW_HEAD + b"".join(b"\xde\xad\xbe\xef\x00\x01" + record(good(f"m{k}".encode()))
                               for k in range(200))
    add("raw_damage_before_every_record.bin",
        "raw: six bytes of junk before each of 200 records (a resynchronisation each)",
        body, good=["m0", "m199"], bad=[["bad_framing", "bad_length"]], framed=400)
    sparse = bytearray(64 * 1024)
    sparse[:len(RAW_HEAD)] = RAW_HEAD
    head8 = good(b"x").md_bytes()[:8]
    for p in range(len(RAW_HEAD), len(sparse) - 400, 400):
        struct.pack_into(">I", sparse, p, 50_000_000)
        sparse[p + 4:p + 12] = head8
    add("raw_sparse_large_prefixes.bin",
        "raw: 64 KB of NULs and MQMD heads every 400 bytes, each claiming 50 MB",
        bytes(sparse), good=[], bad=[["truncated", "data_truncated"]], framed=1)
    # 3. amqsbcg: a section banner line deleted
    blines = bcg.decode().split("\n")
    second = [i for i, ln in enumerate(blines) if "MQGET of message number 2" in ln][0]
    md_banner = [i for i in range(second, len(blines)) if blines[i] == "****Message descriptor****"][0]
    add("amqsbcg_no_md_banner.bcg",
        "amqsbcg: the second message's '****Message descriptor****' line deleted",
        "\n".join(blines[:md_banner] + blines[md_banner + 1:]).encode(), good=good3, framed=3)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d) / "capture"
        amqsbcg.write_amqsbcg(tmp, [good(GOOD_BEFORE), good(b"middle message"),
                                    good(GOOD_AFTER)], dlh_block=True)
        b934 = tmp.read_text().split("\n")
    second = [i for i, ln in enumerate(b934) if "MQGET of message number 2" in ln][0]
    dlh_banner = [i for i in range(second, len(b934)) if b934[i] == "****Dead Letter Header****"][0]
    add("amqsbcg_no_dlh_banner.bcg",
        "amqsbcg 9.3.4: the second message's '****Dead Letter Header****' line deleted",
        "\n".join(b934[:dlh_banner] + b934[dlh_banner + 1:]).encode(), good=good3, framed=3)
    fmt_line = [i for i in range(second, len(b934)) if b934[i].startswith("  Format : ")][0]
    twice = b934[:fmt_line + 1] + ["  Format : 'MQSTR   '"] + b934[fmt_line + 1:]
    add("amqsbcg_md_line_twice.bcg",
        "amqsbcg: a second, different 'Format :' line in the second message's descriptor",
        "\n".join(twice).encode(), bad=[["bad_descriptor", "bad_md_field"]], framed=3)
    # 4. dmpmqmsg: S lines of UTF-8 text keep their bytes
    dlines = dm.decode().split("\n")
    starts = [i for i, ln in enumerate(dlines) if ln.startswith("A VER")]
    xs = [i for i in range(starts[1], starts[2]) if dlines[i].startswith("X ")]
    head = bytes.fromhex("".join(dlines[i][2:] for i in xs))[:-len(b"middle message")]
    utf8 = "price €5 café".encode()
    add("dmpmqmsg_s_line_utf8.dmp",
        "dmpmqmsg: the middle message's payload on S lines of UTF-8 text",
        "\n".join(dlines[:xs[0]] + ["X " + head.hex().upper()]).encode() + b"\n"
        + b'S "' + utf8 + b'"\nS " and ~"more~~"\n'
        + "\n".join(dlines[xs[-1] + 1:]).encode(),
        good=["good before", 'price €5 café and "more~', "good after"], framed=3)
    # 5. payloads in CCSIDs without a codec: no text, an issue
    odd = [dead_letter({"Format": "MQSTR", "PutDate": "20240315", "PutTime": "10153012"},
                       {"Reason": 2053, "CodedCharSetId": c, "PutDate": "20240315",
                        "PutTime": "10153157"}, b"\x0e\x45\x41\x0f text " + str(c).encode())
           for c in (1390, 937, 65535, -1)]
    add("raw_payload_ccsid_unknown.bin",
        "raw: MQSTR payloads in CCSIDs 1390, 937, 65535 and -1 (no codec): no text",
        RAW_HEAD + b"".join(record(m) for m in [good(GOOD_BEFORE)] + odd + [good(GOOD_AFTER)]),
        bad=[["ok", "unknown_ccsid"]], framed=6)
    # 6. dmpmqmsg: what the utility printed before the first message
    add("dmpmqmsg_version_banner.dmp",
        "dmpmqmsg: the utility's version and copyright lines before the first message",
        b"Dmpmqmsg Version:9.3.0.0 Created:Tue Mar 12 14:04:00 2024\n"
        b"5724-H72 (C) Copyright IBM Corp. 1994, 2024.\n\n" + dm, good=good3, framed=3)
    add("dmpmqmsg_damaged_first_line.dmp",
        "dmpmqmsg: the first message's first attribute line damaged ('AVER 2')",
        b"AVER 2\n" + dm, bad=[["bad_framing", "unframed"]], good=good3, framed=4)
    # 7. fields the capture does not hold: lines elided, values masked
    dl = dm.decode().split("\n")
    starts = [i for i, ln in enumerate(dl) if ln.startswith("A VER")]
    mid = range(starts[1], starts[2])
    el = [("..." if dl[i].startswith("A MSI") else "A USR ****" if dl[i].startswith("A USR")
           else dl[i]) for i in range(len(dl))
          if not (i in mid and dl[i].startswith("A PAT"))]
    add("dmpmqmsg_elided_and_masked.dmp",
        "dmpmqmsg: A MSI cut out ('...') and A USR masked '****' in every message, "
        "A PAT deleted in the second",
        "\n".join(el).encode(), good=[], bad=[["truncated", "elided"], ["truncated", "masked"]],
        framed=3)
    gets = [i for i, ln in enumerate(b934) if "MQGET of message number" in ln]
    bl = []
    for i, ln in enumerate(b934):
        if gets[1] <= i < gets[2] and ln.startswith("  DestQMgrName"):
            continue
        if gets[1] <= i < gets[2] and ln.startswith("  MsgId"):
            ln = "  MsgId : X'414D5120" + "." * 40 + "'"
        bl.append(ln)
    add("amqsbcg_elided_and_masked.bcg",
        "amqsbcg 9.3.4: the DLH's DestQMgrName line deleted and the MsgId masked '....'",
        "\n".join(bl).encode(), good=["good before", "good after"],
        bad=[["truncated", "elided"], ["truncated", "masked"]], framed=3)
    # 10. a banner line padded with 65,000 blanks (the banner regex was quadratic)
    padded = dm.replace(b"\n", b"\n* Qmgr  = x" + b" " * 65000 + b"y\n", 1)
    add("dmpmqmsg_banner_65000_blanks.dmp",
        "dmpmqmsg: a '* Qmgr  =' line padded with 65,000 blanks",
        padded, good=good3, framed=3)


def hexdump_cases(add) -> None:
    """Issue 23: hex dumps as pasted (their own bytes; the cases above keep theirs)."""
    from dlqlens.capture.hexdump import render

    recs = [good(GOOD_BEFORE), good(b"middle message"), good(GOOD_AFTER)]
    blobs = [m.md_bytes() + m.data for m in recs]

    def dump(layout, middle: str | None = None, **opts) -> bytes:
        parts = [render([b], layout, **opts) for b in blobs]
        if middle is not None:
            parts[1] = middle
        return "\n".join(parts).encode("latin-1")

    mid = render([blobs[1]], "xxd").split("\n")
    add("hexdump_xxd_bad_hex_line.txt",
        "hex dump (xxd): a line of the middle message with 'zz' among its hex digits",
        dump("xxd", "\n".join(mid[:5] + [mid[5][:10] + "zz" + mid[5][12:]] + mid[6:])),
        format="xxd", bad=[["bad_data", "bad_hex"]], framed=3)
    hd = render([blobs[1]], "hexdump-c").split("\n")
    add("hexdump_c_lines_missing.txt",
        "hex dump (hexdump -C): lines missing from the middle message (its offsets jump)",
        dump("hexdump-c", "\n".join(hd[:3] + hd[9:])),
        format="hexdump-c", bad=[["truncated", "not_captured"]], framed=3)
    od = render([blobs[1]], "od").split("\n")
    add("hexdump_od_offset_gigabytes.txt",
        "hex dump (od): a line at offset X'7FFFF000' in the middle message",
        dump("od", "\n".join(od[:4] + ["7ffff000" + od[4][6:]] + od[5:])),
        format="od", bad=[["truncated", "not_captured"]], framed=3)
    star = [k for k, ln in enumerate(hd) if ln == "*"][0]
    add("hexdump_c_repeat_to_gigabytes.txt",
        "hex dump (hexdump -C): a '*' repeat line followed by a line at offset X'7FFFF000' "
        "(read as lines missing, not 2 GB of repeats)",
        dump("hexdump-c", "\n".join(hd[:star + 1] + ["7ffff000" + hd[star + 1][8:]]
                                    + hd[star + 2:])),
        format="hexdump-c", bad=[["truncated", "not_captured"]], framed=3)
    junk = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
    add("hexdump_stream_not_mq.txt",
        "hex stream: the middle record is the hex of a PNG, no MQ structure (forced)",
        dump("hex-stream", render([junk], "hex-stream")), format="hex-stream",
        bad=[["bad_descriptor", "bad_md"]], framed=3)
    add("hexdump_stream_png_auto.txt",
        "hex stream of a PNG alone (auto: no MQ StrucId, so no format is claimed)",
        render([junk], "hex-stream").encode(), good=[], error="CaptureError")
    add("hexdump_stream_odd_digits.txt",
        "hex stream (log lines): the middle message's hex has an odd count of digits",
        dump("hex-stream", "2024-03-15 10:00:01 WARN msg=" + blobs[1].hex()[:-1] + "\n"),
        format="hex-stream", bad=[["bad_data", "bad_hex"]], framed=3)
    add("hexdump_xxd_mqmd_cut.txt",
        "hex dump (xxd): the middle message cut 40 bytes into its MQMD (fields past it null)",
        dump("xxd", render([blobs[1][:40]], "xxd")), format="xxd",
        bad=[["truncated", "not_captured"]], framed=3)
    ebc = [dead_letter(md_fields(), dlh_fields(), p.encode("cp500"), encoding=785,
                       ccsid=500).md_bytes() for p in ("a",)]
    scr = render([ebc[0], ebc[0]], "ispf").split("\n")
    z = [k for k, ln in enumerate(scr) if ln.startswith("000002")][0]
    scr[z + 1] = scr[z + 1][:40]  # the zone line shorter than the numeric line
    add("hexdump_ispf_zone_numeric_differ.txt",
        "ISPF HEX ON (EBCDIC): a record whose zone line is shorter than its numeric line; "
        "the first record cut by the 72-column screen",
        "\n".join(scr).encode("latin-1"), format="ispf", good=[],
        bad=[["bad_data", "bad_hex"], ["truncated", "not_captured"]], framed=2)
    add("hexdump_xxd_nul_and_control.txt",
        "hex dump (xxd): NUL bytes and control characters in the ASCII column and between "
        "the dumps",
        dump("xxd").replace(b"\n\n", b"\n\x00\x07\x1b[31m\n", 1), format="xxd",
        framed=3)


def fragment_cases(add) -> None:
    """Pieces of amqsbcg output pasted without its banner (issue 23, part 2;
    ``docs/capture-formats.md``, "amqsbcg fragments"), damaged."""
    text = amqsbcg.format_message(1, good(b"middle message" * 3), dlh_block=True)
    lines = text.split("\n")
    dlh_at = lines.index("****Dead Letter Header****")
    data_at = [i for i, ln in enumerate(lines) if ln.startswith("****   Message")][0]
    dlh_block, data = lines[dlh_at:data_at], [ln for ln in lines[data_at:] if ln.strip()]
    dump = [ln for ln in data if ln[:8].isalnum() and ln[8:9] == ":"]
    add("amqsbcg_fragment_dlh_twice_then_data.bcg",
        "amqsbcg fragment: two Dead Letter Header blocks, then one message's data",
        "\n".join(dlh_block + dlh_block + data).encode(), good=[],
        bad=[["truncated", "elided"], ["truncated", "data_truncated"]], framed=2)
    add("amqsbcg_fragment_hex_cut_mid_line.bcg",
        "amqsbcg fragment: a Dead Letter Header block and data whose last dump line "
        "stops inside a hex group",
        "\n".join(dlh_block + data[:-1] + [data[-1][:17]]).encode(), good=[],
        bad=[["bad_data", "bad_hex"]], framed=1)
    add("amqsbcg_fragment_length_gigabytes.bcg",
        "amqsbcg fragment: the data alone, 'length - 2147483000 bytes' and three dump lines",
        "\n".join(["****   Message      ****", "", " length - 2147483000 bytes", ""]
                  + dump).encode(), good=[], bad=[["bad_descriptor", "elided"],
                                                 ["bad_descriptor", "bad_md_field"]], framed=1)
    garbled = [ln.replace("2053", "20X3") if "Reason" in ln else
               "  PutApplName    : '****'" if "PutApplName" in ln else ln for ln in dlh_block]
    add("amqsbcg_fragment_dlh_garbled.bcg",
        "amqsbcg fragment: a Dead Letter Header block with a Reason of '20X3' and its "
        "PutApplName masked, then the data",
        "\n".join(garbled + data).encode(), good=[],
        bad=[["bad_descriptor", "bad_md_field"], ["bad_descriptor", "masked"]], framed=1)
    add("amqsbcg_fragment_dump_lines_only.txt",
        "amqsbcg's dump lines without their banner or length line: could be another "
        "hex dump, refused by auto-detection",
        "\n".join(dump).encode(), good=[], framed=None, error="CaptureError")
    add("amqsbcg_fragment_banners_only.bcg",
        "amqsbcg fragment: the Dead Letter Header and data banners with nothing under them, "
        "named amqsbcg",
        b"****Dead Letter Header****\n\n****   Message      ****\n\n", format="amqsbcg",
        good=[], bad=[["bad_descriptor", "elided"]], framed=1)


def big_cases(directory: Path) -> list[tuple[dict, Path]]:
    """The cases too big to commit, written into ``directory`` (about 300 MB)."""
    directory = Path(directory)
    out = []
    line = directory / "single_line_100mb.txt"
    with open(line, "wb") as fh:
        block = b"X 4142434445464748" * (1 << 16)
        for _ in range(100 * (1 << 20) // len(block)):
            fh.write(block)
    out.append(({"file": line.name, "what": "a 100 MB single line (no line end)",
                 "format": "dmpmqmsg", "good": [], "bad": [["bad_framing", "unframed"]],
                 "framed": 1, "error": None}, line))
    return out


def write_corpus() -> list[dict]:
    CORPUS.mkdir(exist_ok=True)
    entries = []
    for entry, data in cases():
        (CORPUS / entry["file"]).write_bytes(data)
        entries.append(entry)
    MANIFEST.write_text(json.dumps({"seed": SEED, "cases": entries}, indent=1) + "\n")
    return entries


if __name__ == "__main__":
    n = len(write_corpus())
    print(f"{n} cases written to {CORPUS} and {MANIFEST}")
