"""Helpers shared by the text capture readers (amqsbcg, dmpmqmsg)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
from numpy.lib.stride_tricks import as_strided

from dlqlens.capture.message import MD_DEFAULTS
from dlqlens.decode.frames import Frames
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
            yield number, offset, decode_line(raw)
            offset += size


def decode_line(raw: bytes) -> str:
    """The text of one raw line as :func:`read_lines` gives it.

    Line ends (``\\n`` then any ``\\r``) are removed; UTF-8, or Latin-1 when
    the line is not valid UTF-8.
    """
    raw = raw.rstrip(b"\n").rstrip(b"\r")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def iter_lines(buf: bytes, number: int = 1, offset: int = 0) -> Iterator[tuple[int, int, str]]:
    """:func:`read_lines` over the bytes ``buf`` (whole lines of a file).

    ``number`` and ``offset`` are the line number and file offset of the
    first byte of ``buf``.
    """
    if not buf:
        return
    parts = buf.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    for raw in parts:
        yield number, offset, decode_line(raw)
        number += 1
        offset += len(raw) + 1


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


# ---------------------------------------------------------------------------
# vectorised helpers of the fast text readers
# ---------------------------------------------------------------------------

#: Value of each byte as a hex digit, 255 when it is not one.
HEX_VALUE = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789ABCDEF"):
    HEX_VALUE[_c] = _i
for _i, _c in enumerate(b"abcdef"):
    HEX_VALUE[_c + 0] = 10 + _i
#: True for the bytes of hex digits.
IS_HEX = HEX_VALUE < 16

#: Bytes a padded buffer has after its data (windows may read that far).
PAD = 256


def padded(buf: bytes) -> np.ndarray:
    """``buf`` as uint8 followed by :data:`PAD` zero bytes."""
    p = np.zeros(len(buf) + PAD, dtype=np.uint8)
    p[:len(buf)] = np.frombuffer(buf, dtype=np.uint8)
    return p


def windows(p: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """``(len(at), width)`` array of ``p[at[i]:at[i] + width]`` (a copy).

    ``p`` comes from :func:`padded`; ``width`` is at most :data:`PAD`.
    """
    view = as_strided(p, shape=(len(p) - width + 1, width), strides=(1, 1), writeable=False)
    return view[at]


def hex_bytes(win: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode rows of hex digits: ``(bytes (n, w//2), ok (n,))``."""
    v = HEX_VALUE[win]
    ok = (v < 16).all(axis=1)
    return (v[:, 0::2] << 4) | (v[:, 1::2] & 15), ok


def decimals(win: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse ``-?[0-9]+`` values of ``length`` bytes at the start of each row.

    Returns ``(values int64, ok)``; ``ok`` is False for anything else and for
    values outside the MQLONG range.
    """
    n, w = win.shape
    pos = np.arange(w)
    neg = win[:, 0] == 45
    first = neg.astype(np.int64)
    inval = pos < length[:, None]
    isdig = pos >= first[:, None]
    digit = win.astype(np.int64) - 48
    dig = inval & isdig
    ok = ((~dig) | ((digit >= 0) & (digit <= 9))).all(axis=1)
    ok &= (length - first >= 1) & (length - first <= 10)
    expo = np.clip(length[:, None] - 1 - pos, 0, 18)
    val = np.where(dig, digit * (10 ** expo), 0).sum(axis=1)
    val = np.where(neg, -val, val)
    ok &= (val >= -2**31) & (val < 2**31)
    return val, ok


def slice_frames(fr: Frames, a: int, b: int) -> Frames:
    """Rows ``a:b`` of ``fr`` (the data cut to what those rows use)."""
    if a == 0 and b == len(fr):
        return fr
    starts, ends = fr.starts[a:b], fr.ends[a:b]
    lo = int(starts.min()) if b > a else 0
    hi = int(ends.max()) if b > a else 0
    return Frames(
        source=fr.source, capture_format=fr.capture_format, md_origin=fr.md_origin,
        md=fr.md[a:b], md_big_endian=fr.md_big_endian[a:b], md_codec=fr.md_codec[a:b],
        md_blank=fr.md_blank[a:b], md_version=fr.md_version[a:b], md_valid=fr.md_valid[a:b],
        data=fr.data[lo:hi], starts=starts - lo, ends=ends - lo,
        data_length=fr.data_length[a:b], message_number=fr.message_number[a:b],
        source_offset=fr.source_offset[a:b], source_line=fr.source_line[a:b],
        dlh_reconstructed=fr.dlh_reconstructed[a:b],
        issues={k - a: v for k, v in fr.issues.items() if a <= k < b},
        raw={k - a: v for k, v in fr.raw.items() if a <= k < b},
        data_offset=None if fr.data_offset is None else fr.data_offset[a:b])


def concat_frames(parts: list[Frames]) -> Frames:
    """One :class:`Frames` of the rows of ``parts`` (same source and format), in order."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    shift = np.cumsum([0] + [len(f.data) for f in parts[:-1]])
    rows = np.cumsum([0] + [len(f) for f in parts[:-1]])
    issues, raw = {}, {}
    for f, r in zip(parts, rows):
        issues.update({k + int(r): v for k, v in f.issues.items()})
        raw.update({k + int(r): v for k, v in f.raw.items()})
    cat = np.concatenate
    data_offset = None
    if any(f.data_offset is not None for f in parts):
        data_offset = cat([f.data_offset if f.data_offset is not None
                           else np.full(len(f), -1, np.int64) for f in parts])
    return Frames(
        source=first.source, capture_format=first.capture_format, md_origin=first.md_origin,
        md=cat([f.md for f in parts]), md_big_endian=cat([f.md_big_endian for f in parts]),
        md_codec=cat([f.md_codec for f in parts]), md_blank=cat([f.md_blank for f in parts]),
        md_version=cat([f.md_version for f in parts]), md_valid=cat([f.md_valid for f in parts]),
        data=cat([f.data for f in parts]),
        starts=cat([f.starts + s for f, s in zip(parts, shift)]),
        ends=cat([f.ends + s for f, s in zip(parts, shift)]),
        data_length=cat([f.data_length for f in parts]),
        message_number=cat([f.message_number for f in parts]),
        source_offset=cat([f.source_offset for f in parts]),
        source_line=cat([f.source_line for f in parts]),
        dlh_reconstructed=cat([f.dlh_reconstructed for f in parts]),
        issues=issues, raw=raw, data_offset=data_offset)


def rebatch(pieces: Iterable[Frames | None], batch_size: int) -> Iterator[Frames]:
    """Regroup ``pieces`` into :class:`Frames` of exactly ``batch_size`` rows
    (the last one shorter)."""
    held: list[Frames] = []
    count = 0
    for fr in pieces:
        if fr is None or not len(fr):
            continue
        held.append(fr)
        count += len(fr)
        while count >= batch_size:
            take, got = [], 0
            while got < batch_size:
                f = held.pop(0)
                k = min(len(f), batch_size - got)
                take.append(slice_frames(f, 0, k))
                if k < len(f):
                    held.insert(0, slice_frames(f, k, len(f)))
                got += k
            count -= batch_size
            yield concat_frames(take)
    if count:
        yield concat_frames(held)
