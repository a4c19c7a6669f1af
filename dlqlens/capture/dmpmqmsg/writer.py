"""dmpmqmsg files: the writer (files ``dmpmqmsg -f`` can load)."""

from __future__ import annotations

from collections.abc import Iterable

from dlqlens.capture.dmpmqmsg.lines import CODES
from dlqlens.capture.message import CaptureMessage


def format_message(m: CaptureMessage, *, width: int = 25, ascii_column: bool = False,
                   index: int | None = None) -> str:
    """The dmpmqmsg text of one message: its attribute lines and data lines
    (``docs/capture-formats.md``, "dmpmqmsg / QLOAD files").

    Attribute lines in dmpmqmsg's order, then ``X`` lines of ``width`` bytes,
    then the empty line dmpmqmsg writes after every message.
    """
    md = m.full_md()
    out = []
    if index is not None:
        out.append(f"* Index {index}")
    order = ["VER", "RPT", "MST", "EXP", "FDB", "ENC", "CCS", "FMT", "PRI", "PER", "MSI",
             "COI", "BOC", "RTQ", "RTM", "USR", "ACC", "AIX", "PAT", "PAN", "PTD", "PTT",
             "AOX", "GRP", "MSQ", "OFF", "MSF", "ORL"]
    widths = {"FMT": 8, "RTQ": 48, "RTM": 48, "USR": 12, "PAN": 28, "PTD": 8, "PTT": 8}
    for code in order:
        name, kind = CODES[code]
        if code == "VER" and md["Version"] < 2:
            continue
        if code in ("GRP", "MSQ", "OFF", "MSF", "ORL") and md["Version"] < 2:
            continue
        v = md[name]
        if kind == "int":
            s = str(int(v))
        elif kind == "char":
            s = str(v).ljust(widths.get(code, 0))
        elif kind == "hexchar":
            size = 32 if code == "AIX" else 4
            s = str(v).ljust(size).encode("latin-1")[:size].hex().upper()
        else:
            size = 32 if code == "ACC" else 24
            s = bytes(v).ljust(size, b"\0").hex().upper()
        out.append(f"A {code} {s}")
    data = m.data
    if not data:
        out.append("X ")
    for off in range(0, len(data), width):
        chunk = data[off:off + width]
        line = "X " + chunk.hex().upper()
        if ascii_column:
            chars = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
            line = line.ljust(2 + 2 * (width + 1)) + "<" + chars + ">"
        out.append(line)
    out.append("")
    return "\n".join(out) + "\n"


def write_dmpmqmsg(path, messages: Iterable[CaptureMessage], *, qmgr: str = "",
                   queue: str = "", created: str = "Fri Mar 15 10:20:00 2024",
                   ascii_column: bool = False, newline: str = "\n") -> int:
    """Write a dmpmqmsg file an administrator can load with ``dmpmqmsg -f``.

    Returns the number of messages written.
    """
    n = 0
    with open(path, "w", encoding="utf-8", newline=newline) as fh:
        fh.write(f"* QLOAD Version:8.0 Created:{created}\n")
        if qmgr:
            fh.write(f"* Qmgr  = {qmgr}\n")
        if queue:
            fh.write(f"* Queue = {queue}\n")
        fh.write("\n")
        for m in messages:
            fh.write(format_message(m, ascii_column=ascii_column))
            n += 1
    return n
