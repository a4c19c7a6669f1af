"""The byte loops of the fast text readers, in C when it was built.

The loops a fast text reader runs over all its bytes: where its lines start
and end, the hex digits of many runs of a buffer, rows of bytes compared
with a first one, and where a short needle stands. ``dlqlens.capture._scan``
(``_scan.c``, built at install when a C compiler is there; see ``setup.py``)
does each in one pass. Without it, the numpy versions here give the same
results (the tests compare the two), a few times slower.

Four loops are the amqsbcg fast reader's alone and have no numpy version here:
:func:`mqget_lines` (where its units start), :func:`match_lines` (descriptor
lines against templates), :func:`probe_lines` (which template a unit's next
line is) and :func:`dump_lines` (dump lines checked and decoded); without the
C loops that reader uses its own numpy versions (:mod:`dlqlens.capture.amqsbcg.fast`
for the units, :mod:`dlqlens.capture.amqsbcg.layout` for the matcher,
:mod:`dlqlens.capture.amqsbcg.dump` for the dump lines), and the tests compare
the frames of both. :func:`trimmed_ends` has both versions here. One is the dmpmqmsg fast
reader's alone: :func:`dmp_units` (a block's well-formed messages read in one
pass: their attribute lines, values and hex lines); without it that reader
takes its numpy steps (:mod:`dlqlens.capture.dmpmqmsg.fast` and
:mod:`dlqlens.capture.dmpmqmsg.attrs`), and the tests compare both with
the line reader.

:data:`COMPILED` tells which is in use.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

try:  # built by setup.py when a C compiler was present at install
    from dlqlens.capture import _scan
except ImportError:  # pragma: no cover - depends on the install
    _scan = None

#: True when the C loops are in use.
COMPILED = _scan is not None


def compiled(name: str) -> bool:
    """Is the C loop ``name`` in use? False without the C loops, and for a
    loop that an extension built from an older ``_scan.c`` lacks (the
    extension is built at install, not on checkout: the reader then takes
    its numpy path, with the same frames)."""
    return _scan is not None and hasattr(_scan, name)

#: Value of each byte as a hex digit, 255 when it is not one.
HEX_VALUE = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789ABCDEF"):
    HEX_VALUE[_c] = _i
for _i, _c in enumerate(b"abcdef"):
    HEX_VALUE[_c] = 10 + _i
#: True for the bytes of hex digits.
IS_HEX = HEX_VALUE < 16


def line_table(buf, n: int, eof: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """The lines of ``buf[0:n]``.

    Parameters
    ----------
    buf : buffer
        Any object with the buffer protocol (a bytearray, a uint8 array).
    n : int
        Bytes of ``buf`` that hold lines (the caller may pad the buffer after them).
    eof : bool
        ``buf[0:n]`` ends the file: a last line without an LF is a line.

    Returns
    -------
    starts, ends : numpy.ndarray of int64
        Per line, its first byte and its LF (``n`` for a last line without one).
    words : numpy.ndarray of uint16
        Per line, the little-endian 16-bit word at its start (``b0 | b1 << 8``;
        bytes past the end of ``buf`` read as 0), which tells its class.
    crlf : bool
        A CR comes before some line's LF (or before ``n``, for a last line).

    Raises
    ------
    ValueError
        When ``n`` is negative or past the end of ``buf``.
    """
    if _scan is not None:
        starts, ends, words, crlf = _scan.line_table(buf, n, eof)
        return (np.frombuffer(starts, dtype=np.int64), np.frombuffer(ends, dtype=np.int64),
                np.frombuffer(words, dtype=np.uint16), crlf)
    p = np.frombuffer(buf, dtype=np.uint8)
    if not 0 <= n <= len(p):
        raise ValueError(f"line_table: n={n} outside the buffer ({len(p)} bytes)")
    ends = np.flatnonzero(p[:n] == 10)
    if eof and n and p[n - 1] != 10:
        ends = np.append(ends, n)
    starts = np.zeros(len(ends), dtype=np.int64)
    starts[1:] = ends[:-1] + 1
    q = np.concatenate([p[:n + 2], np.zeros(2, np.uint8)])  # bytes past the buffer: 0
    words = q[starts] | (q[starts + 1].astype(np.uint16) << 8)
    crlf = bool(((ends > 0) & (p[ends - 1] == 13)).any())
    return starts, ends, words, crlf


def hex_runs(buf, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode the hex digits at the start of each run ``buf[starts[i]:ends[i]]``.

    Each run is read up to its first byte that is not a hex digit (either
    case), or its end.

    Returns
    -------
    data : numpy.ndarray of uint8
        The whole digit pairs of every run, run after run (an odd last digit
        is not decoded).
    digits : numpy.ndarray of int64
        Per run, how many hex digits it starts with: the run is all hex when
        ``digits == ends - starts``; it gave ``digits // 2`` bytes of ``data``.

    Raises
    ------
    ValueError
        When a run lies outside ``buf`` or ends before it starts.
    """
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    if len(starts) != len(ends):
        raise ValueError("hex_runs: starts and ends differ in length")
    lens = ends - starts
    if len(starts) and ((starts < 0).any() or (lens < 0).any()
                        or (ends > memoryview(buf).nbytes).any()):
        raise ValueError("hex_runs: a run lies outside the buffer, or ends before it starts")
    if _scan is not None:
        out = np.empty(int((lens // 2).sum()), dtype=np.uint8)
        digits = np.empty(len(starts), dtype=np.int64)
        w = _scan.hex_runs(buf, starts, ends, out, digits)
        return out[:w], digits
    return _hex_runs_numpy(np.frombuffer(buf, dtype=np.uint8), starts, ends)


#: Runs at most this many bytes apart are joined with the bytes between them
#: blanked (see :func:`_hex_runs_numpy`).
_SHORT_GAP = 16


def _hex_runs_numpy(p: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """:func:`hex_runs` with numpy (the reference for the C loop)."""
    lens = ends - starts
    n = len(lens)
    total = int(lens.sum())
    mv = memoryview(p)  # slices of a memoryview are not copies: join copies once
    # the usual case, runs in order and every one whole hex pairs: the runs a
    # short gap apart (consecutive lines) are joined with the gap blanked, and
    # one bytes.fromhex reads them all. It skips blanks only between pairs,
    # so it reads half as many bytes as the runs have bytes only when each run
    # is an even number of hex digits.
    if n and not (lens % 2).any() and (starts[1:] >= ends[:-1]).all():
        gap = starts[1:] - ends[:-1]
        long_gap = np.flatnonzero(gap > _SHORT_GAP)
        first, last = np.append(0, long_gap + 1), np.append(long_gap, n - 1)
        text = bytearray(b"".join(list(map(mv.__getitem__, map(
            slice, starts[first].tolist(), ends[last].tolist())))))
        short = np.flatnonzero(gap <= _SHORT_GAP)
        if len(short):
            # where each gap starts in text: its run's end, less what the
            # long gaps before it took out
            taken = np.concatenate([[0], np.cumsum(gap[long_gap])])
            at = ends[short] - starts[0] - taken[np.searchsorted(long_gap, short)]
            glen = gap[short]
            idx = np.repeat(at - np.concatenate([[0], np.cumsum(glen)[:-1]]), glen) + \
                np.arange(int(glen.sum()))
            np.frombuffer(text, dtype=np.uint8)[idx] = 32
        try:
            raw = bytes.fromhex(text.decode("latin-1"))
        except ValueError:
            raw = None
        if raw is not None and 2 * len(raw) == total:
            return np.frombuffer(raw, dtype=np.uint8), lens.copy()
    # run by run
    text = b"".join(list(map(mv.__getitem__, map(slice, starts.tolist(), ends.tolist()))))
    t = np.frombuffer(text, dtype=np.uint8)
    off = np.concatenate([[0], np.cumsum(lens)])
    bad = np.flatnonzero(~IS_HEX[t])
    first = np.append(bad, total)[np.searchsorted(bad, off[:-1])]
    digits = np.minimum(first, off[1:]) - off[:-1]
    run = np.repeat(np.arange(n), lens)
    keep = np.arange(total) - off[:-1][run] < (digits // 2 * 2)[run]
    v = HEX_VALUE[t[keep]]
    return ((v[0::2] << 4) | v[1::2]).astype(np.uint8), digits


def rows_like_first(buf, at: np.ndarray, width: int,
                    must: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Compare the rows ``buf[at[i]:at[i] + width]`` with row 0.

    Returns
    -------
    same : numpy.ndarray of bool, ``(width,)``
        Columns where every matching row has row 0's byte.
    match : numpy.ndarray of bool, ``(len(at),)``
        Rows with row 0's bytes at every column of ``must`` (row 0 among them).

    Raises
    ------
    ValueError
        When a row lies outside ``buf`` or a column of ``must`` outside the row.
    """
    at = np.ascontiguousarray(at, dtype=np.int64)
    must = np.ascontiguousarray(must, dtype=np.int64)
    n = len(at)
    if width < 0:
        raise ValueError(f"rows_like_first: width {width} is negative")
    same = np.ones(width, dtype=bool)
    match = np.ones(n, dtype=bool)
    if not n:
        return same, match
    # at + width <= nbytes, without forming at + width (int64 wraps near 2**63)
    if (at < 0).any() or (at > memoryview(buf).nbytes - width).any():
        raise ValueError("rows_like_first: a row lies outside the buffer")
    if len(must) and ((must < 0).any() or (must >= width).any()):
        raise ValueError("rows_like_first: a column of must lies outside the row")
    if _scan is not None:
        mask = np.zeros(width, dtype=np.uint8)
        mask[must] = 1
        _scan.rows_like_first(buf, at, width, mask, same.view(np.uint8), match.view(np.uint8))
        return same, match
    if not width:
        return same, match
    p = np.frombuffer(buf, dtype=np.uint8)
    row0 = p[at[0]:at[0] + width]
    for s in range(0, n, 4096):  # bounded memory: 4096 rows at a time
        eq = rows_of(p, at[s:s + 4096], width).view(np.uint8).reshape(-1, width) == row0
        m = eq[:, must].all(axis=1)
        match[s:s + 4096] = m
        same &= eq[m].all(axis=0)
    return same, match


def rows_of(p: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """``p[at[i]:at[i] + width]`` for every ``i``, as one void (``width``-byte)
    item each: gathered with a memcpy per row, compared whole with ``==``.

    Every row must lie inside ``p`` (the text readers pad their blocks with
    :data:`~dlqlens.capture.text.PAD` zero bytes so that windows of up to that
    width may start anywhere in the data).
    """
    items = as_strided(p, shape=(len(p) - width + 1, width), strides=(1, 1), writeable=False)
    return items.view(np.dtype((np.void, width)))[:, 0][at]


def find_all(buf, needle: bytes, end: int) -> np.ndarray:
    """Offsets of ``needle`` in ``buf[:end]``, in order (overlapping ones too).

    Parameters
    ----------
    buf : bytes, bytearray or a 1-D uint8 array
        The block (a :class:`~dlqlens.capture.text.TextBlock`'s buffer).
    needle : bytes
        What to find (not empty).
    end : int
        Bytes of ``buf`` searched (``0 <= end <= len(buf)``).

    Returns
    -------
    numpy.ndarray of int64

    Raises
    ------
    ValueError
        When ``end`` lies outside ``buf`` or ``needle`` is empty.
    """
    if not needle or not 0 <= end <= len(buf):
        raise ValueError(f"find_all: end {end} outside the buffer ({len(buf)} bytes), "
                         "or an empty needle")
    if _scan is not None:
        return np.frombuffer(_scan.find_all(buf, needle, end), dtype=np.int64)
    # searched from the end: rfind skips ahead by the needle's length where
    # find checks every byte (about twice as fast)
    if not hasattr(buf, "rfind"):  # a uint8 array
        buf = memoryview(buf).cast("B").tobytes()
    out = []
    rfind = buf.rfind
    i = rfind(needle, 0, end)
    while i >= 0:
        out.append(i)
        i = rfind(needle, 0, i + len(needle) - 1)
    out.reverse()
    return np.array(out, dtype=np.int64)


def trimmed_ends(buf, starts: np.ndarray, cend: np.ndarray) -> np.ndarray:
    """Per line, the end of its text without trailing blanks (0x20 only).

    Parameters
    ----------
    buf : buffer
        The block's bytes.
    starts, cend : numpy.ndarray of int64
        Per line: its first byte, and the end of its text (offsets into ``buf``).

    Returns
    -------
    numpy.ndarray of int64
        ``starts[i] <= out[i] <= cend[i]``; ``buf[out[i]:cend[i]]`` is all blanks
        and ``buf[out[i] - 1]`` is not one (when ``out[i] > starts[i]``).

    Raises
    ------
    ValueError
        ``starts`` and ``cend`` of different lengths, or a line outside ``buf``.
    """
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    cend = np.ascontiguousarray(cend, dtype=np.int64)
    if len(starts) != len(cend):
        raise ValueError("trimmed_ends: starts and cend differ in length")
    if _scan is not None and hasattr(_scan, "trimmed_ends"):
        return np.frombuffer(_scan.trimmed_ends(buf, starts, cend), dtype=np.int64)
    p = np.frombuffer(buf, dtype=np.uint8)
    if len(starts) and ((starts < 0).any() or (cend < starts).any() or (cend > len(p)).any()):
        raise ValueError("trimmed_ends: a line outside the buffer")
    rend = cend.copy()
    idx = np.flatnonzero(rend > starts)
    idx = idx[p[rend[idx] - 1] == 32]
    while len(idx):
        rend[idx] -= 1
        idx = idx[(rend[idx] > starts[idx]) & (p[rend[idx] - 1] == 32)]
    return rend


def probe_lines(buf, cstart: np.ndarray, cfirst: np.ndarray, ncont: np.ndarray,
                ci: np.ndarray, ok: np.ndarray, lit: bytes, after: bool = False) -> np.ndarray:
    """Units whose current content line holds ``lit``, in C (the amqsbcg fast
    reader's optional lines: which template a unit's next line is).

    Its numpy version is :meth:`dlqlens.capture.amqsbcg.layout._Matcher.probe`
    (used when the C loops were not built; the tests compare the two).

    Parameters
    ----------
    buf : buffer
        The block's bytes.
    cstart : numpy.ndarray of int64
        Per content line: its first byte.
    cfirst, ncont, ci : numpy.ndarray of int64
        Per unit: its first content line, how many it has, its current one.
    ok : numpy.ndarray of bool
        Per unit: still matching (the others are not probed).
    lit : bytes
        The literal looked for at the line's start; with ``after``, at 10
        bytes past it and past the digits there (``' length - N of M
        bytes'``: ``' of '`` after N; twelve digits or more count as none).

    Returns
    -------
    numpy.ndarray of bool
        Per unit. Bytes past the buffer read as 0.

    Raises
    ------
    ValueError
        Arrays of inconsistent sizes, a unit's lines outside the content lines,
        or a line probed outside the buffer.
    RuntimeError
        When the C loops were not built (use the numpy matcher).
    """
    if _scan is None or not hasattr(_scan, "probe_lines"):
        raise RuntimeError("probe_lines: dlqlens.capture._scan was not built with it")
    cstart, cfirst, ncont, ci = (np.ascontiguousarray(x, dtype=np.int64)
                                 for x in (cstart, cfirst, ncont, ci))
    ok = np.ascontiguousarray(ok, dtype=bool)
    out = _scan.probe_lines(buf, cstart, cfirst, ncont, ci, ok.view(np.uint8), bytes(lit),
                            bool(after))
    return np.frombuffer(out, dtype=np.uint8).view(bool)


def mqget_lines(buf, n: int, starts: np.ndarray, cend: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The amqsbcg lines where its line reader starts afresh, in C.

    Its numpy version is :meth:`dlqlens.capture.amqsbcg.fast._Block._mqget_lines`
    (used when the C loops were not built; the tests compare the two).

    Parameters
    ----------
    buf : buffer
        The block's bytes.
    n : int
        Bytes of ``buf`` searched.
    starts, cend : numpy.ndarray of int64
        Per line: its first byte (in order) and the end of its text.

    Returns
    -------
    special : numpy.ndarray of int64
        The line of each ``MQGET`` in ``buf[:n]`` that ends inside its line's
        text, in order (a line once per ``MQGET`` it holds).
    units : numpy.ndarray of int64
        The line of each of those that reads ``MQGET of message number``,
        blanks or tabs (up to 25 columns) and a digit inside the line's text.

    Raises
    ------
    ValueError
        ``n`` outside ``buf``, a line outside it, or lines out of order.
    RuntimeError
        When the C loops were not built with it.
    """
    if _scan is None or not hasattr(_scan, "mqget_lines"):
        raise RuntimeError("mqget_lines: dlqlens.capture._scan was not built with it")
    special, units = _scan.mqget_lines(buf, n, np.ascontiguousarray(starts, dtype=np.int64),
                                       np.ascontiguousarray(cend, dtype=np.int64))
    return np.frombuffer(special, dtype=np.int64), np.frombuffer(units, dtype=np.int64)


def match_lines(buf, cstart: np.ndarray, crend: np.ndarray, cclean: np.ndarray,
                cfirst: np.ndarray, ncont: np.ndarray, ci: np.ndarray, ok: np.ndarray,
                active, program: np.ndarray, md: np.ndarray, values: np.ndarray) -> int:
    """Match the content lines of many units against line templates, unit by
    unit, in C (the amqsbcg fast reader's descriptor lines).

    Its numpy version is :class:`dlqlens.capture.amqsbcg.layout._Matcher`,
    which matches all units at once (it is used when the C loops were not
    built; the tests compare the two readers).

    Parameters
    ----------
    buf : buffer
        The block's bytes.
    cstart, crend : numpy.ndarray of int64
        Per content line: its first byte, and the end of its text without
        trailing blanks.
    cclean : numpy.ndarray of uint8
        Per content line: 1 when it is ASCII and does not end in more than one CR.
    cfirst, ncont : numpy.ndarray of int64
        Per unit: its first content line, and how many it has.
    ci : numpy.ndarray of int64, written
        Per unit: its current line (from its first); advanced past each line matched.
    ok : numpy.ndarray of uint8 (or a bool array's uint8 view), written
        Per unit: still matching; cleared at the first line that does not match.
    active : numpy.ndarray of uint8, or ``b""`` for every unit
        The units to match (those also ``ok``).
    program : numpy.ndarray of int32
        The templates (see ``_scan.c`` and ``layout._program``).
    md, values : numpy.ndarray of uint8, ``(units, width)``, written
        Each unit's MQMD row and its row of other values.

    Returns
    -------
    int
        Units still ok among those matched.

    Raises
    ------
    ValueError
        Arrays of inconsistent sizes, a line or unit outside the buffer, a
        program that is not one or that writes outside a row. A line is
        checked when a unit reaches it: the units before it may have been
        matched (and their rows written).
    RuntimeError
        When the C loops were not built (use the numpy matcher).

    Notes
    -----
    A clean line with the same bytes, and the same byte after its end, as the
    line its template last matched in the same call takes that match's
    values without being parsed again (amqsbcg prints most descriptor lines
    alike from message to message; a match reads nothing else past its line).
    """
    if _scan is None:
        raise RuntimeError("match_lines: dlqlens.capture._scan was not built")
    return _scan.match_lines(buf, cstart, crend, cclean, cfirst, ncont, ci, ok, active,
                             np.ascontiguousarray(program, dtype=np.int32),
                             md, md.shape[1] if md.ndim == 2 else 0,
                             values, values.shape[1] if values.ndim == 2 else 0)


def template_fields(buf, at0: np.ndarray, fields: np.ndarray, md: np.ndarray, ok: np.ndarray,
                    version: np.ndarray) -> None:
    """dmpmqmsg attribute values that differ from unit to unit, read into the
    units' MQMD rows in one C pass (C only: the numpy version is the late
    fields' steps of :func:`dlqlens.capture.dmpmqmsg.attrs._fill_template`).

    Parameters
    ----------
    buf : buffer
        The block (a :class:`~dlqlens.capture.text.TextBlock`'s ``p`` or ``buf``).
    at0 : numpy.ndarray of int64, shape (n,)
        Where each unit's attribute section starts.
    fields : numpy.ndarray of int64, shape (m, 5)
        Per field: kind (0 MQLONG, 1 the VER line, 2 characters, 3 hex,
        4 hex of characters), the value's offset in the section, its length
        (the same in every unit), the field's offset in the MQMD and its size
        in bytes (4 for kinds 0 and 1).
    md : numpy.ndarray of uint8, shape (n, MQMD length)
        Written: the fields' values (MQLONG little-endian; characters
        padded with blanks; 0 for a number that is not one).
    ok : numpy.ndarray of uint8, shape (n,)
        Cleared where a value is one the line reader would report (not
        ``-?[0-9]{1,10}`` in the MQLONG range; hex of another length, or not
        hex; a hex character of 0x80 or more).
    version : numpy.ndarray of int32, shape (n,)
        Written by a VER field: its value when 1 or 2, else 2.

    Raises
    ------
    ValueError
        When a value lies outside ``buf``, a field outside the MQMD row, a
        kind is unknown, or the arrays' sizes disagree; nothing is written.
    """
    _scan.template_fields(buf, np.ascontiguousarray(at0, dtype=np.int64),
                          np.ascontiguousarray(fields, dtype=np.int64), md, ok, version)


def dmp_units(buf, starts: np.ndarray, cend: np.ndarray, cls: np.ndarray, us: np.ndarray,
              ue: np.ndarray, tables: tuple):
    """The well-formed units of a dmpmqmsg block read in one C pass (C only:
    the numpy version is :meth:`dlqlens.capture.dmpmqmsg.fast._Block.fast_units`'
    steps without it, the reference).

    Parameters
    ----------
    buf : buffer
        The block.
    starts, cend : numpy.ndarray of int64, shape (lines,)
        Each line's first byte and the end of its text (before CR LF or LF).
    cls : numpy.ndarray of int8, shape (lines,)
        Each line's class: 0 empty or comment, 1 ``A``, 2 ``X``, others not
        for the fast reader.
    us, ue : numpy.ndarray of int64, shape (units,)
        Each unit's first line and the line after its last.
    tables : tuple
        :data:`dlqlens.capture.dmpmqmsg.attrs.C_TABLES`: the attribute codes
        (key, MQMD offset, size, kind), the masks of codes every message has
        (and every MQMD version 2), the VER code's row, the MQMD of a message
        without attribute lines, each character column's next one.

    Returns
    -------
    ok : numpy.ndarray of bool, shape (units,)
        The units read: ``[E] A.. [E] X.. [E]`` lines, every attribute line
        ``A ccc value`` of a known code (each code once, every code dmpmqmsg
        always writes present), every value as the line reader reads it
        without an issue and none masked (``**``, ``..`` in a character
        field), every ``X`` line an even number of hex digits, then nothing,
        blanks, or blanks and the ``-da`` ``<...>`` column.
    md : numpy.ndarray of uint8, shape (read units, MQMD length)
        Their MQMD rows (the template, then each attribute in line order).
    version : numpy.ndarray of int32, shape (read units,)
        1 without a VER line, else its value when 1 or 2, else 2.
    first_a : numpy.ndarray of int64, shape (read units,)
        Each read unit's first ``A`` line.
    data_length : numpy.ndarray of int64, shape (read units,)
        Bytes of message data of each read unit, in bytes.
    data : numpy.ndarray of uint8
        Their data, concatenated.

    Raises
    ------
    ValueError
        When a line lies outside ``buf``, a unit outside the lines, the
        arrays' sizes disagree or the tables are not well formed.
    """
    codes, always, v2, ver_code, template, next_col = tables
    i64 = np.int64
    nok, ok, md, ver, first_a, dl, data = _scan.dmp_units(
        buf, np.ascontiguousarray(starts, dtype=i64), np.ascontiguousarray(cend, dtype=i64),
        np.ascontiguousarray(cls, dtype=np.int8), np.ascontiguousarray(us, dtype=i64),
        np.ascontiguousarray(ue, dtype=i64), codes, always, v2, ver_code, template, next_col)
    return (np.frombuffer(ok, dtype=bool),
            np.frombuffer(md, dtype=np.uint8).reshape(-1, len(template))[:nok],
            np.frombuffer(ver, dtype=np.int32)[:nok], np.frombuffer(first_a, dtype=i64)[:nok],
            np.frombuffer(dl, dtype=i64)[:nok], np.frombuffer(data, dtype=np.uint8))


def dump_lines(buf, at: np.ndarray, length: np.ndarray, nbytes: np.ndarray,
               k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check amqsbcg dump lines against the layout amqsbcg prints, and decode
    their hex, in C.

    Its numpy version is :func:`dlqlens.capture.amqsbcg.dump._dump_lines`
    with :func:`~dlqlens.capture.amqsbcg.dump._dump_bytes` (used when the C
    loops were not built; the tests compare the two readers).

    Parameters
    ----------
    buf : buffer
        The block's bytes.
    at, length : numpy.ndarray of int64
        Per dump line: its first byte, and its bytes of text.
    nbytes : numpy.ndarray of int64
        Per dump line: the bytes it shows (0 to 16).
    k : numpy.ndarray of int64
        Per dump line: its offset is ``16 * k``.

    Returns
    -------
    std : numpy.ndarray of bool
        The line is exactly as amqsbcg prints it: more than 51 bytes, the
        offset in eight upper-case hex digits, ``':  '``, the hex area (groups
        of four digits of either case and a blank; blanks after ``2 * nbytes``
        digits), a blank and a quote.
    hexok : numpy.ndarray of bool
        Every digit column of the line's hex area holds a hex digit.
    data : numpy.ndarray of uint8, ``(nbytes.sum(),)``
        The bytes of each line, line after line (zeros for a line without ``hexok``).

    Raises
    ------
    ValueError
        Arrays of different lengths, or an ``nbytes`` outside 0 to 16.
    RuntimeError
        When the C loops were not built (use the numpy functions).
    """
    if _scan is None:
        raise RuntimeError("dump_lines: dlqlens.capture._scan was not built")
    at, length, nbytes, k = (np.ascontiguousarray(x, dtype=np.int64)
                             for x in (at, length, nbytes, k))
    n = len(at)
    if not len(length) == len(nbytes) == len(k) == n:
        raise ValueError("dump_lines: at, length, nbytes and k differ in length")
    if n and (nbytes.min() < 0 or nbytes.max() > 16):
        raise ValueError("dump_lines: a line of more than 16 bytes")
    std = np.empty(n, dtype=bool)
    hexok = np.empty(n, dtype=bool)
    data = np.empty(int(nbytes.sum()), dtype=np.uint8)
    _scan.dump_lines(buf, at, length, nbytes, k, data, std.view(np.uint8), hexok.view(np.uint8))
    return std, hexok, data
