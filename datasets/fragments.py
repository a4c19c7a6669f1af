"""Generate the amqsbcg fragments: pieces of amqsbcg output as people paste them.

    python datasets/fragments.py [--out datasets/amqsbcg-fragments] [--seed 20240315]

One seeded simulator run (:func:`dlqlens.sim.simulate`, scenario
``queue_full_burst``) is captured three times, the same messages each time:
``dlq.raw`` (the dlqlens raw capture, the reference), ``dlq.bcg`` (amqsbcg
output, the MQ 9.3.4+ layout with its ``****Dead Letter Header****`` block)
and ``dlq-classic.bcg`` (the older layout: the MQDLH in the hex dump).
Each fragment (:data:`FRAGMENTS`) is cut from one of them the way people paste
amqsbcg output into a ticket or a forum post: without the ``AMQSBCG0 - starts
here`` banner and the ``MQGET of message number`` lines, some sections only,
lines elided (``...``), the hex dump cut short. Beside each ``<name>.bcg``,
``<name>.expected.json``: for every message of the fragment, the number of the
message of ``dlq.raw`` it was cut from, the sections pasted, and the fields
that must read null with an issue (what the fragment does not hold).
``tests/capture/test_amqsbcg_fragments.py`` reads them: every other field
decodes as the raw capture's message does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile

from dlqlens.mq.structs import MQDLH, MQMD
from dlqlens.sim import simulate

SEED = 20240315
DLQ = "SYSTEM.DEAD.LETTER.QUEUE"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "amqsbcg-fragments")

#: The MQMD fields amqsbcg prints (version 2) and those of the MQDLH.
MD_FIELDS = [f.name for f in MQMD.fields]
DLH_FIELDS = [f.name for f in MQDLH.fields]

#: name -> (amqsbcg capture, message numbers, the sections of each pasted, line edits):
#: sections ``md`` (the descriptor banner and lines), ``dlh`` (the Dead Letter
#: Header block), ``data`` (the data banner, length line and hex dump); edits
#: ``elide_md`` / ``elide_dlh`` (MQMD / MQDLH field lines replaced by one
#: ``...`` line: the fields named), ``cut_hex`` (the dump cut after this many
#: lines, then a ``...`` line).
FRAGMENTS = {
    "md-dlh-data": ("dlq.bcg", [1], ["md", "dlh", "data"], {}),
    "dlh-data": ("dlq.bcg", [2], ["dlh", "data"], {}),
    "dlh-only": ("dlq.bcg", [3], ["dlh"], {}),
    "data-only": ("dlq.bcg", [4], ["data"], {}),
    "md-only": ("dlq.bcg", [5], ["md"], {}),
    "md-elided": ("dlq.bcg", [6], ["md", "dlh", "data"],
                  {"elide_md": ["MsgId", "CorrelId", "BackoutCount", "ReplyToQ", "ReplyToQMgr"]}),
    "dlh-elided-hex-cut": ("dlq.bcg", [7], ["dlh", "data"],
                           {"elide_dlh": ["PutApplType", "PutApplName", "PutDate", "PutTime"],
                            "cut_hex": 2}),
    "hex-cut": ("dlq.bcg", [8], ["md", "dlh", "data"], {"cut_hex": 3}),
    "two-dlh-data": ("dlq.bcg", [9, 10], ["dlh", "data"], {}),
    "md-data": ("dlq-classic.bcg", [11], ["md", "data"], {}),
}


def _messages(text: str) -> dict[int, list[str]]:
    """The lines of each message of amqsbcg output, by message number (the
    ``MQGET`` line and the blank lines around it left out)."""
    out: dict[int, list[str]] = {}
    cur = None
    for line in text.split("\n"):
        m = re.search(r"MQGET of message number (\d+)", line)
        if m:
            cur = out.setdefault(int(m.group(1)), [])
        elif cur is not None and line.strip() == "No more messages":
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def _sections(lines: list[str]) -> dict[str, list[str]]:
    """A message's lines by section (``md``, ``dlh``, ``data``)."""
    out = {"md": [], "dlh": [], "data": []}
    sec = None
    for line in lines:
        s = line.strip()
        if s == "****Message descriptor****":
            sec = "md"
        elif s == "****Dead Letter Header****":
            sec = "dlh"
        elif s.startswith("****") and "Message" in s and s.endswith("****"):
            sec = "data"
        if sec is not None:
            out[sec].append(line)
    for k in out:  # trailing blank lines belong to no section
        while out[k] and not out[k][-1].strip():
            out[k].pop()
    return out


def _elide(lines: list[str], names: list[str]) -> list[str]:
    """Replace the lines of the fields ``names`` by one ``...`` line (where the first was)."""
    out, done = [], False
    for line in lines:
        m = re.match(r"^\s*(\w+)\s*:", line)
        if m and m.group(1) in names:
            if not done:
                out.append("  ...")
                done = True
            continue
        out.append(line)
    return out


def _cut_hex(lines: list[str], keep: int) -> list[str]:
    """The data section with its dump cut after ``keep`` lines, then ``...``."""
    dump = [i for i, line in enumerate(lines) if re.match(r"^[0-9A-F]{8}:", line)]
    if len(dump) <= keep:
        return lines
    return lines[:dump[keep]] + ["..."]


def fragment(sections: dict[str, list[str]], parts: list[str], edits: dict) -> list[str]:
    """The lines of one message's fragment."""
    out = []
    for part in parts:
        lines = sections[part]
        if part == "md" and "elide_md" in edits:
            lines = _elide(lines, edits["elide_md"])
        if part == "dlh" and "elide_dlh" in edits:
            lines = _elide(lines, edits["elide_dlh"])
        if part == "data" and "cut_hex" in edits:
            lines = _cut_hex(lines, edits["cut_hex"])
        out += lines + [""]
    return out


def expected(numbers: list[int], parts: list[str], edits: dict, cap: str) -> list[dict]:
    """What each message of a fragment must decode to (see the module docstring)."""
    out = []
    for n in numbers:
        missing = []
        if cap == "dlq.bcg" and "dlh" not in parts:
            # the 9.3.4+ layout prints the MQDLH in its block only
            missing += [f"dlh.{f}" for f in DLH_FIELDS]
        if "data" not in parts:
            missing += ["payload"]
        if "md" not in parts:
            # the Format is known from the DLH block alone (amqsbcg prints it
            # for MQFMT_DEAD_LETTER_HEADER messages only); nothing of the MQMD otherwise
            missing += [f"md.{f}" for f in MD_FIELDS if not ("dlh" in parts and f == "Format")]
        else:
            missing += [f"md.{f}" for f in edits.get("elide_md", [])]
        if "dlh" in parts:
            missing += [f"dlh.{f}" for f in edits.get("elide_dlh", [])]
        out.append({"message_number": n, "sections": parts, "missing": missing,
                    "hex_cut": "cut_hex" in edits or "data" not in parts})
    return out


def generate(out: str = OUT, seed: int = SEED) -> list[str]:
    """Write ``dlq.raw``, ``dlq.bcg``, ``dlq-classic.bcg`` and every fragment of
    :data:`FRAGMENTS` into ``out``; returns the file names."""
    os.makedirs(out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=".fragments-", dir=out)
    try:
        for fmt, name, block in (("raw", "dlq.raw", True), ("amqsbcg", "dlq.bcg", True),
                                 ("amqsbcg", "dlq-classic.bcg", False)):
            d = os.path.join(scratch, name)
            manifest = simulate("queue_full_burst", 80, d, format=fmt, encoding=546,
                                ccsid=1208, qmgr="QM.FRAG", seed=seed, dlh_block=block,
                                start="2024-03-17T08:00:00Z")
            (cap,) = [c for c in manifest["captures"] if c["queue"] == DLQ]
            shutil.move(os.path.join(d, cap["file"]), os.path.join(out, name))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    messages = {}
    for cap in ("dlq.bcg", "dlq-classic.bcg"):
        with open(os.path.join(out, cap), encoding="utf-8", newline="") as fh:
            messages[cap] = _messages(fh.read().replace("\r\n", "\n"))
    names = ["dlq.raw", "dlq.bcg", "dlq-classic.bcg"]
    for name, (cap, numbers, parts, edits) in FRAGMENTS.items():
        lines = []
        for n in numbers:
            lines += fragment(_sections(messages[cap][n]), parts, edits)
        with open(os.path.join(out, name + ".bcg"), "w", encoding="utf-8", newline="\n") as fh:
            fh.write("\n".join(lines))
        with open(os.path.join(out, name + ".expected.json"), "w", encoding="utf-8",
                  newline="\n") as fh:
            json.dump({"capture": "dlq.raw", "cut_from": cap,
                       "messages": expected(numbers, parts, edits, cap)},
                      fh, indent=1)
            fh.write("\n")
        names.append(name + ".bcg")
    return names


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--seed", type=int, default=SEED)
    a = ap.parse_args(argv)
    for name in generate(a.out, a.seed):
        print(os.path.join(a.out, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
