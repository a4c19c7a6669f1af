"""amqsbcg output: the fast reader's hex dump lines.

:func:`_dump_lines` checks dump lines (``'OOOOOOOO:  XXXX XXXX ... 'chars'``)
of a known byte count and offset for all units at once, and
:func:`_dump_bytes` turns their hex areas into the message bytes in one
``bytes.fromhex`` call.
"""

from __future__ import annotations

import codecs

import numpy as np

from dlqlens.capture.scan import IS_HEX
from dlqlens.capture.text import hex_values, windows

_DUMP_W = 64
#: The 39 columns of a dump line's hex area: which hold digits, and the
#: digit's index (0-31) in the line.
_DIGIT_COL = np.array([(c % 5) != 4 for c in range(39)])
_DIGIT_NO = np.array([c - c // 5 for c in range(39)])
#: The digit columns of a dump line of n bytes (n = 0..16).
_WANT = _DIGIT_COL & (_DIGIT_NO < 2 * np.arange(17)[:, None])


def _dump_lines(p, at, length, nbytes, k):
    """Check dump lines ``'OOOOOOOO:  XXXX XXXX ... 'chars'`` of ``nbytes``
    bytes at offset ``16 * k``: ``(good, hex areas (n, 39))``. The digit
    columns are only checked not to be blanks: the caller's ``bytes.fromhex``
    checks the rest (see :func:`_dump_bytes`).

    Lines exactly as amqsbcg prints them (upper-case offset, hex digits in the
    digit columns, one blank and the quote after the hex area) are recognised
    at once: each line's first 52 bytes, classed by ``bytes.translate``, are
    compared whole with the pattern of its byte count, and its offset with
    the text of ``16 * k``; the other lines get the column checks of
    :func:`_dump_lines_any`."""
    w = windows(p, at, 52)
    cls = np.frombuffer(bytearray(w).translate(_DUMP_CLASS), dtype=np.uint8).reshape(-1, 52)
    # the last line of each message: its own pattern (then made a whole line's)
    part = np.flatnonzero(nbytes != 16)
    std_part = cls[part].view(_V52)[:, 0] == _DUMP_PATTERN[nbytes[part]]
    cls[part] = _DUMP_WHOLE
    if (cls == _DUMP_WHOLE).all():  # (one pass: much faster than row by row)
        std = np.ones(len(at), dtype=bool)
    else:
        std = cls.view(_V52)[:, 0] == _DUMP_PATTERN[16]
    std[part] = std_part
    std &= np.ascontiguousarray(w[:, :8]).view("<u8")[:, 0] == _offset_texts(k)
    std &= length > 51
    good = std
    other = np.flatnonzero(~std)
    if len(other):
        good = std.copy()
        good[other] = _dump_lines_any(p, at[other], length[other], nbytes[other], k[other],
                                      w[other])
    return good, w[:, 11:50]


#: Byte classes of a dump line: hex digits 'x', and ' ', ':', "'" as
#: themselves; anything else '?'.
_DUMP_CLASS = bytes(
    ord("x") if chr(b) in "0123456789ABCDEFabcdef" else b if chr(b) in " :'" else ord("?")
    for b in range(256))
_V52 = np.dtype((np.void, 52))
#: The classes of a dump line's first 52 bytes as amqsbcg prints n bytes (n = 0..16).
_DUMP_PATTERN = np.array(
    [("xxxxxxxx:  " + "".join("x" if want else " " for want in _WANT[n]) + " '").encode()
     for n in range(17)], dtype=_V52)
_DUMP_WHOLE = _DUMP_PATTERN[16:].view(np.uint8)
#: Dump line offsets 16 * k as amqsbcg prints them (8 upper-case hex digits,
#: as little-endian uint64) for the first few k.
_OFFSET_K = 1 << 12


def _offset_words(k: np.ndarray) -> np.ndarray:
    v = (np.asarray(k, dtype=np.int64) * 16)[:, None] >> np.arange(28, -1, -4)
    d = (v & 15).astype(np.uint8)
    return np.ascontiguousarray(np.where(d < 10, d + 48, d + 55)).view("<u8")[:, 0]


_OFFSET_WORDS = _offset_words(np.arange(_OFFSET_K))


def _offset_texts(k: np.ndarray) -> np.ndarray:
    """The offset text of dump lines ``k`` (see :data:`_OFFSET_WORDS`)."""
    if not len(k) or int(k.max()) < _OFFSET_K:
        return _OFFSET_WORDS[k]
    return _offset_words(k)


def _dump_lines_any(p, at, length, nbytes, k, w):
    """:func:`_dump_lines` for any layout: the checks column by column (``w``:
    the lines' first 52 bytes)."""
    off, good = hex_values(np.ascontiguousarray(w[:, :8]))
    good &= (off.astype(np.int64) @ np.array([1 << 24, 1 << 16, 1 << 8, 1])) == 16 * k
    good &= (w[:, 8] == 58) & (w[:, 9] == 32) & (w[:, 10] == 32)
    area = w[:, 11:50]
    good &= ((area != 32) == _WANT[nbytes]).all(axis=1)
    # after the hex area: a blank and the quote of the character column (more
    # blanks in a multi-byte locale)
    quote = (w[:, 50] == 32) & (w[:, 51] == 39) & (51 < length)
    other = np.flatnonzero(good & ~quote)
    if len(other):
        wide = windows(p, at[other] + 50, _DUMP_W - 50) != 32
        q = np.argmax(wide, axis=1)
        r = np.arange(len(other))
        quote[other] = wide[r, q] & (p[at[other] + 50 + q] == 39) & \
            (50 + q < length[other])
    return good & quote


def _dump_bytes(area: np.ndarray, nbytes: np.ndarray):
    """The bytes of the hex areas of dump lines that passed :func:`_dump_lines`,
    concatenated; None when a digit column holds something else than a hex
    digit (then the caller checks line by line with :func:`_hex_columns_ok`)."""
    text = codecs.latin_1_decode(np.ascontiguousarray(area))[0]
    try:
        data = bytes.fromhex(text)
    except ValueError:
        return None
    # fromhex skips blanks: as many bytes as digit columns means none was one
    return np.frombuffer(data, dtype=np.uint8) if len(data) == int(nbytes.sum()) else None


def _hex_columns_ok(area: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
    """Per dump line: every digit column holds a hex digit."""
    return (IS_HEX[area] | ~_WANT[nbytes]).all(axis=1)
