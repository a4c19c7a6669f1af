"""Write the golden pcap/pcapng captures of MQ client traffic and their expected decodes.

    python tests/capture/pcap_golden/generate.py [--out DIR]

The messages are the simulator's: the first messages of the bundled
``datasets/dlq-sample/dlq_linux_x86.raw`` (little-endian ASCII MQMDs, MQDLH)
and ``dlq_zos.raw`` (big-endian EBCDIC MQMDs, MQDLH + MQTM), written by
:func:`dlqlens.capture.pcap.write_pcap` as a client's MQI calls in each
layout the reader must handle. ``FILES`` says what each file exercises; each
``NAME.expected.jsonl`` is its decode (``dlqlens decode --jsonl`` objects),
checked by ``tests/capture/test_pcap_reader.py`` together with the same
messages read from the raw capture (the round trip).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from dlqlens.capture.jsonl import dumps, records  # noqa: E402
from dlqlens.capture.message import CaptureMessage  # noqa: E402
from dlqlens.capture.pcap import write_pcap  # noqa: E402
from dlqlens.capture.raw import read_raw  # noqa: E402
from dlqlens.capture.reader import read_capture  # noqa: E402
from dlqlens.mq.structs import MQMD  # noqa: E402

SAMPLE = ROOT / "datasets" / "dlq-sample"
COUNT = 12


def sample_messages(name: str, count: int = COUNT) -> list[CaptureMessage]:
    """The first ``count`` messages of a bundled raw capture, as written."""
    out = []
    for fr in read_raw(str(SAMPLE / name)):
        for i in range(len(fr)):
            if len(out) == count:
                return out
            order = ">" if fr.md_big_endian[i] else "<"
            codec = str(fr.md_codec[i])
            version = int(fr.md_version[i])
            md = MQMD.unpack(fr.md[i].tobytes(), order, codec, version)
            data = fr.data[fr.starts[i]:fr.ends[i]].tobytes()
            out.append(CaptureMessage(md=md, data=data, md_byteorder=order, md_codec=codec))
    return out


def _shuffled(seed: int, duplicate: bool = True):
    """Packets out of order (neighbours swapped) and every fifth one sent twice."""
    def order(packets):
        rnd = random.Random(seed)
        out = list(packets)
        for i in range(0, len(out) - 1, 3):
            if rnd.random() < 0.6:
                out[i], out[i + 1] = out[i + 1], out[i]
        if duplicate:
            out = [p for k, p in enumerate(out) for _ in range(2 if k % 5 == 0 else 1)]
        return out
    return order


def _drop_client_packet(n: int):
    """The ``n``-th client-to-server packet is not captured (a gap)."""
    def order(packets):
        client = [k for k, p in enumerate(packets) if p[0] == 0]
        return [p for k, p in enumerate(packets) if k != client[n]]
    return order


#: name -> (sample, write_pcap keyword arguments); what each one exercises in its name
FILES = {
    "put_tshm_le_split.pcap": ("dlq_linux_x86.raw", dict(
        verb="MQPUT", byteorder="<", multiplexed=True, max_segment=300, mss=120,
        queue="SYSTEM.DEAD.LETTER.QUEUE")),
    "put1_tsh_be_ebcdic.pcapng": ("dlq_zos.raw", dict(
        container="pcapng", verb="MQPUT1", byteorder=">", multiplexed=False,
        queue="CSQ1.DEAD.QUEUE")),
    "get_tshm_be_reordered.pcap": ("dlq_linux_x86.raw", dict(
        verb="MQGET", byteorder=">", multiplexed=True, max_segment=500, mss=200,
        queue="SYSTEM.DEAD.LETTER.QUEUE", packet_order=_shuffled(23))),
    "put_tshm_le_gap.pcapng": ("dlq_linux_x86.raw", dict(
        container="pcapng", verb="MQPUT", byteorder="<", multiplexed=True, max_segment=400,
        mss=150, queue="SYSTEM.DEAD.LETTER.QUEUE", packet_order=_drop_client_packet(16))),
}


def _relative(rec: dict, path: str, name: str) -> dict:
    """``rec`` with the file named as ``name`` (its issues too), whatever ``--out`` was."""
    rec["source"] = name
    for i in rec["decode_issues"]:
        i["message"] = i["message"].replace(path, name)
    return rec


def generate(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (sample, kw) in FILES.items():
        path = out / name
        write_pcap(path, sample_messages(sample), **kw)
        result = read_capture(str(path))
        with open(str(path) + ".expected.jsonl", "w", encoding="utf-8") as fh:
            for rec in records(result.table):
                fh.write(dumps(_relative(rec, str(path), name)) + "\n")
        written.append(path)
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE))
    args = ap.parse_args(argv)
    for p in generate(Path(args.out)):
        print(os.path.relpath(p, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
