"""Generate the hex-dump golden files from the simulator's messages (issue 23).

    python datasets/hexdumps/generate.py

The messages are the first records of two bundled simulator captures
(``datasets/dlq-sample/dlq_linux_x86.raw``: ASCII, little-endian;
``dlq_zos.raw``: EBCDIC, big-endian, a trigger storm whose dead letters hold
an MQTM), plus the Linux ones with their MQMD repacked big-endian (ASCII,
big-endian). From each, records starting with each structure a pasted dump
starts with:

``md``    the message as a queue browse gives it: MQMD + MQDLH + data;
``dlh``   the message data only (a DLQ browser): MQDLH + data;
``xqh``   a transmission-queue message: MQXQH (its embedded MQMD version 1
          the message's descriptor, RemoteQName/RemoteQMgrName the DLH's
          destination) + MQDLH + data;
``tm``    the data after the MQDLH of a trigger message: MQTM (z/OS only);
``rfh2``  an MQRFH2 with a ``<usr>`` folder before the original payload.

Each set is written in every layout (``ispf``, ``xxd``, ``hexdump-c``,
``od``, ``hex-stream``), whole and cut (the dump's last lines gone; for ISPF,
one 72-column screen, whole being the record's screens scrolled right). Beside
each ``<name>.txt``: ``<name>.expected.jsonl``, the fields its decode must give
(checked by ``tests/capture/test_hexdump_golden.py``); ``MANIFEST.json`` says
where each record came from (source capture, message number, structure) so
the round-trip test compares with the raw capture of the same messages.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from dlqlens.capture.hexdump import dump, render  # noqa: E402
from dlqlens.mq.structs import MQDLH, MQMD, MQRFH2, MQXQH  # noqa: E402

SAMPLE = ROOT / "datasets" / "dlq-sample"
#: source name -> (capture file, first message numbers taken, MQMD repacked big-endian)
SOURCES = {"ascii_le": ("dlq_linux_x86.raw", 2, False),
           "ascii_be": ("dlq_linux_x86.raw", 2, True),
           "ebcdic_be": ("dlq_zos.raw", 2, False)}
#: Golden columns (the fields that make the contract).
FIELDS = ("message_number", "capture_format", "decode_status", "md.StrucId", "md.Version",
          "md.MsgId", "md.Format", "md.PutDate", "md.CorrelId", "md.PutApplName",
          "dlh.Reason", "dlh.DestQName", "dlh.DestQMgrName", "xqh.RemoteQName",
          "xqh.RemoteQMgrName", "tm.QName", "rfh2.NameValueData", "headers", "payload",
          "data_length", "data_truncated", "issues")
PAYLOAD_HEX = 64  # bytes of payload kept in the golden file


def raw_records(path: Path, n: int) -> list[bytes]:
    """The first ``n`` records (MQMD + data) of a dlqlens raw capture."""
    b = path.read_bytes()
    p, out = 16, []
    while len(out) < n:
        ln = int.from_bytes(b[p:p + 4], "big")
        out.append(b[p + 4:p + 4 + ln])
        p += 4 + ln
    return out


def _layout(rec: bytes):
    ebcdic = rec[:4] == "MD  ".encode("cp500")
    codec = "cp500" if ebcdic else "latin-1"
    big = int.from_bytes(rec[4:8], "big") in (1, 2)
    return ebcdic, codec, ">" if big else "<", int.from_bytes(rec[4:8], "big" if big else "little")


def variants(rec: bytes, big_md: bool) -> dict[str, bytes]:
    """The records a dump may start with, built from one message."""
    ebcdic, codec, bo, version = _layout(rec)
    md_len = MQMD.length(version)
    md = MQMD.unpack(rec[:md_len], bo, codec, version)
    data = rec[md_len:]
    if big_md:
        bo = ">"
        rec = MQMD.pack(md, bo, codec, version=version) + data
    out = {"md": rec, "dlh": data}
    dlh_bo = ">" if (md["Encoding"] & 0x0F) == 1 else "<"
    dlh = MQDLH.unpack(data[:MQDLH.length()], dlh_bo, codec)
    xmd = {f"MsgDesc.{k}": v for k, v in md.items() if f"MsgDesc.{k}" in MQXQH.offsets}
    xmd["MsgDesc.Version"] = 1
    out["xqh"] = MQXQH.pack({"StrucId": "XQH ", "Version": 1,
                             "RemoteQName": dlh["DestQName"],
                             "RemoteQMgrName": dlh["DestQMgrName"], **xmd},
                            bo, codec) + data
    after = data[MQDLH.length():]
    if dlh["Format"].strip() == "MQTRIG":
        out["tm"] = after
    folder = b"<usr><origin>dlqlens-sim</origin></usr>"  # NameValueCCSID 1208: UTF-8
    folder += b" " * (-len(folder) % 4)
    body = (len(folder)).to_bytes(4, "big" if dlh_bo == ">" else "little") + folder
    out["rfh2"] = MQRFH2.pack({"StrucId": "RFH ", "Version": 2, "StrucLength": 36 + len(body),
                               "Encoding": dlh["Encoding"], "CodedCharSetId": dlh["CodedCharSetId"],
                               "Format": dlh["Format"], "Flags": 0, "NameValueCCSID": 1208},
                              dlh_bo, codec) + body + after
    return out


def cut_text(text: str, layout: str) -> str:
    """The dump with its last lines gone (a paste cut short)."""
    lines = text.rstrip("\n").split("\n")
    keep = max(2, len(lines) * 2 // 3)
    return "\n".join(lines[:keep]) + "\n"


def ispf_screens(recs: list[bytes], whole: bool) -> str:
    if not whole:
        return dump.ispf(recs)
    longest = max(len(r) for r in recs)
    return "".join(dump.ispf(recs, first_column=c) for c in range(1, longest + 1, 72))


def files() -> dict[str, tuple[str, list[dict]]]:
    """name -> (text, [record provenance])."""
    out = {}
    for src, (cap, n, big_md) in SOURCES.items():
        msgs = raw_records(SAMPLE / cap, n)
        per_struct: dict[str, list[tuple[int, bytes]]] = {}
        for k, m in enumerate(msgs):
            for s, rec in variants(m, big_md).items():
                per_struct.setdefault(s, []).append((k + 1, rec))
        for s, recs in per_struct.items():
            prov = [{"source": cap, "message_number": k, "structure": s,
                     "md_big_endian": big_md} for k, _ in recs]
            blobs = [r for _, r in recs]
            for layout in ("ispf", "xxd", "hexdump-c", "od", "hex-stream"):
                if layout == "ispf" and not src.startswith("ebcdic"):
                    continue  # ISPF shows EBCDIC records
                for whole in (True, False):
                    name = f"{src}_{s}_{layout}_{'whole' if whole else 'cut'}"
                    if layout == "ispf":
                        text = ispf_screens(blobs, whole)
                        p = prov
                    elif whole:
                        opts = {"hex-stream": {"width": 32, "offsets": src == "ascii_be"}}
                        text = render(blobs, layout, **opts.get(layout, {}))
                        p = prov
                    else:  # one record, its dump cut
                        opts = {"hex-stream": {"width": 48}}.get(layout, {})
                        text = cut_text(render(blobs[:1], layout, **opts), layout)
                        p = prov[:1]
                    out[name] = (text, p)
    return out


def golden_row(row: dict) -> dict:
    def get(path):
        v = row
        for part in path.split("."):
            v = None if v is None else v.get(part)
        return v
    out = {}
    for f in FIELDS:
        if f == "issues":
            out[f] = sorted({i["code"] for i in row["decode_issues"] or []})
        elif f == "payload":
            out[f] = None if row["payload"] is None else row["payload"][:PAYLOAD_HEX].hex()
        else:
            v = get(f)
            out[f] = v.hex() if isinstance(v, bytes) else v
    return out


def main() -> int:
    from dlqlens.capture.reader import read_capture

    manifest = {}
    for name, (text, prov) in files().items():
        path = HERE / f"{name}.txt"
        path.write_text(text, encoding="latin-1", newline="\n")
        layout = name.split("_")[3]
        rows = read_capture(str(path), format=layout).table.to_pylist()
        with open(HERE / f"{name}.expected.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            for r in rows:
                fh.write(json.dumps(golden_row(r), ensure_ascii=False, default=str) + "\n")
        manifest[name] = {"layout": layout, "records": prov}
    (HERE / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest)} hex dumps written to {os.path.relpath(HERE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
