"""Helpers shared by the text capture readers (amqsbcg, dmpmqmsg)."""

from __future__ import annotations

from collections.abc import Iterator

from dlqlens.capture.message import MD_DEFAULTS
from dlqlens.errors import CaptureError
from dlqlens.mq.structs import MQMD

#: Characters of the MQMD text are packed into the binary MQMD in this codec.
TEXT_CODEC = "utf-8"


def read_lines(path: str) -> Iterator[tuple[int, int, str]]:
    """Yield ``(line_number, byte_offset, text)`` for each line of ``path``.

    Line ends (``\\n``, ``\\r\\n``) are removed. Each line is decoded as UTF-8,
    or Latin-1 when it is not valid UTF-8, so no byte is lost.

    Raises
    ------
    CaptureError
        When the file cannot be opened.
    """
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise CaptureError(f"{path}: cannot open: {exc.strerror or exc}") from exc
    with fh:
        offset = 0
        for number, raw in enumerate(fh, 1):
            size = len(raw)
            raw = raw.rstrip(b"\n").rstrip(b"\r")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("latin-1")
            yield number, offset, text
            offset += size


def pack_text_md(fields: dict) -> tuple[bytes, int]:
    """Build a binary MQMD (little-endian, UTF-8 characters) from text values.

    Returns the 364 bytes and the MQMD version (from ``Version``, default 1
    for dmpmqmsg files without ``A VER``). Character values too long for
    their field are cut to the field length in bytes.
    """
    md = dict(MD_DEFAULTS)
    md["Version"] = 1
    md.update(fields)
    version = md["Version"] if md["Version"] in (1, 2) else 2
    for f in MQMD.fields:
        if f.type == "MQCHAR" and f.name in md:  # absent StrucId: pack writes 'MD  '
            raw = str(md.get(f.name) or "").encode(TEXT_CODEC)
            if len(raw) > f.length:
                raw = raw[:f.length]
            md[f.name] = raw
    md["Version"] = version
    return MQMD.pack(md, "<", TEXT_CODEC, version=2), version


def clean_hex(text: str) -> str:
    """Remove blanks from a hex string."""
    return "".join(text.split())
