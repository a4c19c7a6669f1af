"""Write records (bytes) as each hex-dump layout shows them.

The output is what the tools print (``xxd``, ``hexdump -C``, ``od -A x -t
x1z``), what ISPF shows with ``HEX ON`` (view, 72 columns, or browse, 80),
or a plain hex stream; the golden files, the hostile corpus and the fuzzers
are written with these.
"""

from __future__ import annotations


def _printable(b: bytes, dot: str = ".") -> str:
    return "".join(chr(c) if 0x20 <= c < 0x7F else dot for c in b)


def xxd(data: bytes, *, upper: bool = False) -> str:
    out = []
    for at in range(0, len(data), 16):
        chunk = data[at:at + 16]
        hx = " ".join(chunk[k:k + 2].hex() for k in range(0, len(chunk), 2))
        if upper:
            hx = hx.upper()
        out.append(f"{at:08x}: {hx:<39}  {_printable(chunk)}")
    return "\n".join(out) + "\n"


def _squeeze(data: bytes, line, closing) -> str:
    """Lines with ``*`` for repeats (hexdump -C and od without -v)."""
    out = []
    prev = None
    starred = False
    for at in range(0, len(data), 16):
        chunk = data[at:at + 16]
        if chunk == prev and len(chunk) == 16:
            if not starred:
                out.append("*")
                starred = True
            continue
        starred = False
        prev = chunk
        out.append(line(at, chunk))
    out.append(closing(len(data)))
    return "\n".join(out) + "\n"


def hexdump_c(data: bytes) -> str:
    def line(at, chunk):
        left = " ".join(f"{c:02x}" for c in chunk[:8])
        right = " ".join(f"{c:02x}" for c in chunk[8:])
        hx = f"{left}  {right}" if right else left
        return f"{at:08x}  {hx:<48}  |{_printable(chunk)}|"
    return _squeeze(data, line, lambda n: f"{n:08x}")


def od(data: bytes) -> str:
    def line(at, chunk):
        hx = "".join(f" {c:02x}" for c in chunk)
        return f"{at:06x}{hx:<48}  >{_printable(chunk)}<"
    return _squeeze(data, line, lambda n: f"{n:06x}")


def stream(data: bytes, *, width: int | None = None, upper: bool = True,
           offsets: bool = False) -> str:
    """A hex stream: one line, or lines of ``width`` bytes (with offsets)."""
    hx = data.hex().upper() if upper else data.hex()
    if not width:
        return hx + "\n"
    out = []
    for at in range(0, len(data), width):
        part = hx[2 * at:2 * (at + width)]
        out.append(f"{at:04X}: {part}" if offsets else part)
    return "\n".join(out) + "\n"


def _ebcdic_char(c: int) -> str:
    ch = bytes([c]).decode("cp500")
    return ch if ch.isprintable() and c >= 0x40 else "."


def ispf(records: list[bytes], *, view: bool = True, width: int | None = None,
         first_column: int = 1, dataset: str = "MQ.DLQ.DUMP") -> str:
    """One ISPF screen with HEX ON: view (sequence numbers, 72 columns) or
    browse (80 columns), columns ``first_column`` on; a record longer than
    the screen is cut at its last column, as ISPF shows it."""
    width = width or (72 if view else 80)
    last = first_column + width - 1
    out = []
    if view:
        out.append(f"VIEW       {dataset:<44}Columns {first_column:05d} {last:05d}")
        out.append("Command ===>                                                  Scroll ===> CSR")
        out.append("****** " + " Top of Data ".center(width, "*"))
    else:
        out.append(f"BROWSE    {dataset:<38}Line 0000000000 Col {first_column:03d} {last:03d}")
        out.append("Command ===>                                                  Scroll ===> CSR")
        out.append(" Top of Data ".center(width, "*"))
    ruler = "".join("+" if c % 10 == 5 else str(c // 10 % 10) if c % 10 == 0 else "-"
                    for c in range(first_column, last + 1))
    out.append(("=COLS> " if view else "") + ruler)
    pad = " " * 7 if view else ""
    for k, rec in enumerate(records):
        shown = rec[first_column - 1:last]
        chars = "".join(_ebcdic_char(c) for c in shown)
        out.append((f"{k + 1:06d} " if view else "") + chars)
        out.append(pad + "".join(f"{c >> 4:X}" for c in shown))
        out.append(pad + "".join(f"{c & 15:X}" for c in shown))
        out.append("-" * (width + len(pad)))
    out.append(("****** " if view else "") + " Bottom of Data ".center(width, "*"))
    return "\n".join(out) + "\n"


WRITERS = {"xxd": xxd, "hexdump-c": hexdump_c, "od": od, "hex-stream": stream}
