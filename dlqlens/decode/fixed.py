"""Vectorised decoding of fixed-size MQ structures.

Given ``n`` copies of a structure laid out as an ``(n, size)`` ``uint8`` array,
decode every field of every row at once with numpy and return Arrow arrays.
Each row may have its own integer byte order and character set (a capture can
mix them); rows are grouped by character set and decoded group by group.

Character fields are cut at the first NUL and stripped of trailing blanks
(IBM MQ, MQMD "Format (MQCHAR8)": "the null and any subsequent characters are
treated as blanks"; in C the initial value of many MQ character fields is the
null string, e.g. MQDLH "DestQMgrName (MQCHAR48)", so a program that does not
set one leaves NULs). Rows where a structure is cut short (``available``
less than its size) get the fields that are wholly present; a character field
cut in the middle keeps its present part and is reported in ``partial``.

Where the C extension :mod:`dlqlens.decode._fixed` was built (:data:`COMPILED`),
one pass over the rows takes every integer and byte field, and every
character field that all rows hold whole in one character set, out of each
row while it is in the cache (:func:`_take_in_c`); the numpy steps below do
the rest (fields cut short, rows of several character sets, a field with a
NUL or a byte that is no ASCII character) and are the reference the tests
compare the C loop with (``tests/decode/test_fixed_loops.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dlqlens.mq.ccsid import to_ascii_table
from dlqlens.mq.structs import MQBYTE, MQLONG, Struct

try:
    from dlqlens.decode import _fixed
except ImportError:  # built without a C compiler: the numpy steps below
    _fixed = None

#: Whether the C loops (:mod:`dlqlens.decode._fixed`) were built and are used.
COMPILED = _fixed is not None

#: Codecs whose bytes below 0x80 are ASCII and whose others are not: their
#: fields need no translation table (the C loop's table is the identity
#: below 0x80).
_ASCII_CODECS = frozenset({"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252", "cp850", "cp437",
                           "cp819"})
#: Two-byte codecs: no byte table, never the fast paths.
_UTF16_CODECS = frozenset({"utf-16", "utf-16-be", "utf-16-le"})


@dataclass
class Decoded:
    """Decoded fields of one structure over ``n`` rows.

    Attributes
    ----------
    columns : dict of str to pyarrow.Array
        Field name -> array of length ``n`` (int32, string or binary).
    partial : dict of str to numpy.ndarray of bool
        Field name -> rows where the field was cut short (present in part).
    ints : dict of str to numpy.ndarray of int32
        Integer fields as numpy arrays too (0 where null), for the chain walker.
    """

    columns: dict[str, pa.Array]
    partial: dict[str, np.ndarray]
    ints: dict[str, np.ndarray]


def copy_rows(block: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of a 2-D ``uint8`` block (a field's columns cut out
    of structure rows).

    When each row's bytes are contiguous, the rows are copied as one
    ``V{width}`` item each (one ``memcpy`` per row) instead of numpy's
    byte-by-byte loop, which is several times slower for the 4- to 48-byte
    fields of MQ structures (``benchmarks/run.py`` measures the decode).
    """
    n, width = block.shape
    if block.flags.c_contiguous or n == 0 or width == 0 or block.strides[1] != 1:
        return np.ascontiguousarray(block)
    return np.ascontiguousarray(block.view(f"V{width}")).view(np.uint8).reshape(n, width)


def _validity(valid: np.ndarray) -> pa.Buffer | None:
    if valid.all():
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def decode_chars(block: np.ndarray, codec: str, blank: int,
                 avail: np.ndarray | None = None) -> pa.Array:
    """Decode an ``(n, L)`` block of MQCHAR fields into an Arrow string array.

    Parameters
    ----------
    block : numpy.ndarray of uint8, shape (n, L)
    codec : str
        Python codec of the characters.
    blank : int
        The pad byte (0x20 ASCII, 0x40 EBCDIC).
    avail : numpy.ndarray of int, shape (n,), optional
        Bytes present per row (0..L); rows with 0 are null.
    """
    n, width = block.shape
    if avail is None or (avail >= width).all():
        if n > 1 and one_value(block):
            # one value in every row (StrucId, Format, a queue manager name,
            # a blank ApplIdentityData): decode it once
            one = decode_chars(block[:1], codec, blank)[0].as_py().encode("utf-8")
            offsets = np.arange(n + 1, dtype=np.int32) * np.int32(len(one))
            return pa.StringArray.from_buffers(n, pa.py_buffer(offsets),
                                               pa.py_buffer(one * n))
        fast = _chars_fast(block, codec)
        if fast is not None:
            return fast
        avail = np.full(n, width, dtype=np.int64)
    col = np.arange(width)
    inrange = col < avail[:, None]
    nul = (block == 0) & inrange
    lim = np.where(nul.any(1), nul.argmax(1), avail)
    nonblank = (block != blank) & (col < lim[:, None])
    length = np.where(nonblank.any(1), width - nonblank[:, ::-1].argmax(1), 0)
    keep = col < length[:, None]
    kept = block[keep]
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(length, out=offsets[1:])
    valid = avail > 0
    fast = None
    if codec in ("utf-8", "ascii"):
        if kept.size == 0 or kept.max() < 0x80:
            fast = kept
    elif codec not in _UTF16_CODECS:
        table, ok = to_ascii_table(codec)
        if ok[kept].all():
            fast = table[kept]
    if fast is not None:
        return pa.StringArray.from_buffers(
            n, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(fast)),
            _validity(valid))
    values = []
    flat = kept.tobytes()
    for i in range(n):
        if not valid[i]:
            values.append(None)
        else:
            values.append(flat[offsets[i]:offsets[i + 1]].decode(codec, errors="replace"))
    return pa.array(values, type=pa.string())


def one_value(block: np.ndarray) -> bool:
    """True when every row of an ``(n, L)`` block holds the same bytes; a
    few rows are compared first, so a block of varied rows costs little.
    False for a block without rows or without columns."""
    if block.shape[0] == 0 or block.shape[1] == 0:
        return False
    if (block[:16] != block[0]).any() or (block[-1] != block[0]).any():
        return False
    data = copy_rows(block)
    width = data.shape[1]
    word = np.uint64 if width % 8 == 0 else np.uint32 if width % 4 == 0 else np.uint8
    words = data.view(word)
    return bool((words == words[0]).all())


def _chars_fast(block: np.ndarray, codec: str) -> pa.Array | None:
    """Whole, NUL-free, ASCII-mappable fields: translate, then trim in Arrow (C++).

    Returns None when the block needs the general path.
    """
    n, width = block.shape
    if n == 0:
        return None
    # copy the field's bytes out of the structure rows first: the checks
    # below then run over contiguous memory
    if codec in _ASCII_CODECS:
        data = copy_rows(block)
        if data.max() >= 0x80:
            return None
    elif codec in _UTF16_CODECS:
        return None
    else:
        table, _ = to_ascii_table(codec)
        data = table[block]  # a byte with no ASCII equivalent becomes 0
    lowest = int(data.min())
    if lowest == 0:  # a NUL (or an unmapped byte) somewhere: general path
        return None
    # fixed-width rows are already a valid string array (ASCII, offsets i*width)
    offsets = np.arange(n + 1, dtype=np.int32) * np.int32(width)
    strings = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    if (data[:, -1] != 0x20).all():  # no value ends in a blank (PutDate, PutTime)
        return strings
    if lowest > 0x20 - 1:
        # no control character anywhere, so the only whitespace is the blank:
        # Arrow's whitespace trim is then the blank trim, much cheaper than a
        # trim by a character set
        return pc.ascii_rtrim_whitespace(strings)
    return pc.utf8_rtrim(strings, characters=" ")  # ASCII here; faster than ascii_rtrim


def decode_fixed(struct: Struct, block: np.ndarray, *, big_endian: np.ndarray,
                 codecs: np.ndarray, blanks: np.ndarray,
                 available: np.ndarray | None = None,
                 version: int | None = None,
                 version_of_row: np.ndarray | None = None,
                 fields: frozenset | None = None) -> Decoded:
    """Decode ``n`` structures at once.

    Parameters
    ----------
    struct : Struct
        The field table.
    block : numpy.ndarray of uint8, shape (n, struct.length(version))
        The raw bytes, one structure per row (zero-padded where cut short).
    big_endian : numpy.ndarray of bool, shape (n,)
        Integer byte order per row.
    codecs : numpy.ndarray of object, shape (n,), or str
        Python codec per row for the character fields (a str: every row's).
    blanks : numpy.ndarray of uint8, shape (n,), or int
        Pad byte per row (an int: every row's).
    available : numpy.ndarray of int, shape (n,), optional
        Bytes actually present per row; fields beyond are null (or partial).
    version : int, optional
        Which version's fields to decode (default: all).
    version_of_row : numpy.ndarray of int, shape (n,), optional
        The structure version of each row: fields added by a later version
        are null in rows of an earlier one (MQMD v1 rows have no GroupId).
    fields : frozenset of str, optional
        Decode only these character and byte fields (integer fields are
        always decoded: they are cheap and the header walk needs them);
        default: every field.

    Returns
    -------
    Decoded
    """
    n = block.shape[0]
    size = struct.length(version)
    whole = available is None or bool((np.asarray(available) >= size).all())
    if available is None:
        available = np.full(n, size, dtype=np.int64)
    if version_of_row is not None and bool((version_of_row >= max(struct.versions)).all()):
        version_of_row = None  # every row has every field
    columns: dict[str, pa.Array] = {}
    partial: dict[str, np.ndarray] = {}
    ints: dict[str, np.ndarray] = {}
    uniq: dict[tuple[str, int], np.ndarray] = {}
    if n and isinstance(codecs, str):
        uniq[(codecs, int(blanks))] = np.arange(n)
    elif n:
        codecs = np.asarray(codecs, dtype=object)
        if (codecs == codecs[0]).all() and (blanks == blanks[0]).all():
            uniq[(str(codecs[0]), int(blanks[0]))] = np.arange(n)
        else:
            codes, inv = np.unique(codecs.astype(str), return_inverse=True)
            inv = inv.ravel()
            for ci, codec in enumerate(codes.tolist()):
                rows_c = np.flatnonzero(inv == ci)
                for b in np.unique(blanks[rows_c]).tolist():
                    uniq[(codec, int(b))] = rows_c[blanks[rows_c] == b]
    # One byte order for every row (the usual case): a structured view reads
    # each integer field without copying the block per field.
    records = None
    if n and block.shape[1] == size and block.strides[1] == 1:
        be_all = bool(big_endian.all())
        if be_all or not big_endian.any():
            # rows contiguous (the rows themselves may be strided: a view)
            records = block.view(struct.numpy_dtype(">" if be_all else "<", version)).reshape(n)
    wanted = [f for f in struct.fields_for(version)
              if fields is None or f.type == MQLONG or f.name in fields]

    def whole_field(f) -> bool:
        """Every row holds all of ``f``."""
        return whole and (version_of_row is None or f.version == 1)

    one_codec = next(iter(uniq)) if len(uniq) == 1 else None
    taken = _take_in_c(struct, block, big_endian, wanted,
                       {f.name for f in wanted if whole_field(f)},
                       None if one_codec is None else one_codec[0])
    rest = [f for f in wanted if f.name not in taken]
    copied = _copy_fields(block, [(struct.offsets[f.name], f.length) for f in rest
                                  if f.type != MQLONG])
    ints_of = {}
    if records is not None:
        ints_of = _ints_of(records, [f.name for f in rest if f.type == MQLONG])
    for f in wanted:
        off = struct.offsets[f.name]
        end = off + f.length
        if whole_field(f):
            present = None
        else:
            present = available >= end
            if version_of_row is not None and f.version > 1:
                present = present & (version_of_row >= f.version)
        sub = copied.get(off, block[:, off:end]) if f.type != MQLONG else block[:, off:end]
        if f.type == MQLONG:
            if f.name in taken:
                vals = taken[f.name]
            elif records is not None:
                vals = ints_of[f.name]
            else:
                raw = copy_rows(sub)
                le = raw.view("<i4").reshape(n)
                be = raw.view(">i4").reshape(n)
                vals = np.where(big_endian, be, le).astype(np.int32)
            if present is not None:
                vals[~present] = 0
            ints[f.name] = vals
            columns[f.name] = pa.Array.from_buffers(
                pa.int32(), n, [None if present is None else _validity(present),
                                pa.py_buffer(vals)])
        elif f.type == MQBYTE:
            # fixed-width values are a binary array as they stand (offsets
            # i * length); a row without the field keeps its (zero) bytes
            # behind a null
            raw = taken[f.name] if f.name in taken else copy_rows(sub)
            offsets = np.arange(n + 1, dtype=np.int32) * np.int32(f.length)
            columns[f.name] = pa.BinaryArray.from_buffers(
                pa.binary(), n, [None if present is None else _validity(present),
                                 pa.py_buffer(offsets), pa.py_buffer(raw)])
        elif f.name in taken:
            columns[f.name] = taken[f.name]
        else:
            if present is None:  # every row has the whole field
                avail = None
            else:
                avail = np.clip(available - off, 0, f.length)
                if version_of_row is not None and f.version > 1:
                    avail = np.where(version_of_row >= f.version, avail, 0)
                cut = (avail > 0) & (avail < f.length)
                if cut.any():
                    partial[f.name] = cut
            if len(uniq) <= 1:
                codec, blank = next(iter(uniq)) if uniq else ("latin-1", 0x20)
                columns[f.name] = decode_chars(sub, codec, blank, avail)
            else:
                parts, order = [], []
                for (codec, blank), rows in uniq.items():
                    idx = np.asarray(rows)
                    parts.append(decode_chars(sub[idx], codec, blank,
                                              None if avail is None else avail[idx]))
                    order.append(idx)
                merged = pa.concat_arrays(parts)
                inverse = np.empty(n, dtype=np.int64)
                inverse[np.concatenate(order)] = np.arange(n)
                columns[f.name] = merged.take(pa.array(inverse))
    return Decoded(columns, partial, ints)


def _take_in_c(struct: Struct, block: np.ndarray, big_endian: np.ndarray, wanted: list,
               whole: set[str], codec: str | None) -> dict:
    """The fields of ``wanted`` taken out of every row of ``block`` in one pass
    of the C loop (:mod:`dlqlens.decode._fixed`), row after row.

    Parameters
    ----------
    struct : Struct
    block : numpy.ndarray of uint8, shape (n, struct length)
    big_endian : numpy.ndarray of bool, shape (n,)
    wanted : list of Field
    whole : set of str
        The fields every row holds whole: only these character fields are
        taken here (a field cut short keeps its present part, which the
        numpy path decides).
    codec : str or None
        The one Python codec of every row's character fields; None (rows of
        several character sets): no character field is taken here.

    Returns
    -------
    dict of str to numpy.ndarray or pyarrow.StringArray
        MQLONG fields as native int32 arrays (shape (n,)); MQBYTE fields as
        ``(n, length)`` uint8 blocks; MQCHAR fields as string arrays, ASCII,
        trailing blanks cut, as :func:`decode_chars` makes them. A character
        field with a NUL or a byte that is no ASCII character in some row is
        left out (the numpy path decodes it: cut at the NUL, decoded with the
        codec); so is everything when the loop was not built, the block has no
        rows, or its row's bytes are not adjacent.
    """
    n = block.shape[0]
    if _fixed is None or n == 0 or block.ndim != 2 or block.strides[1] != 1:
        return {}
    chars_ok = codec is not None and codec not in _UTF16_CODECS
    specs, taken = [], []
    for f in wanted:
        off = struct.offsets[f.name]
        if f.type == MQLONG:
            out = np.empty(n, np.int32)
            specs.append((off, 4, 0, out))
        elif f.type == MQBYTE:
            out = np.empty((n, f.length), np.uint8)
            specs.append((off, f.length, 1, out))
        elif chars_ok and f.name in whole and n * f.length < 2**31:  # int32 offsets
            out = (np.empty(n * f.length, np.uint8), np.empty(n + 1, np.int32))
            specs.append((off, f.length, 2) + out)
        else:
            continue
        taken.append((f, out))
    if not specs:
        return {}
    chars = any(len(spec) == 5 for spec in specs)
    table = None if not chars or codec in _ASCII_CODECS else to_ascii_table(codec)[0]
    written = _fixed.fields(block, np.ascontiguousarray(big_endian, dtype=np.bool_), table, specs)
    out_of = {}
    for (f, out), size in zip(taken, written):
        if f.type not in (MQLONG, MQBYTE):
            if size < 0:
                continue
            data, offsets = out
            # give back what trailing blanks left unused (a shrinking realloc:
            # nothing copied; no view of ``data`` exists yet)
            data.resize(size, refcheck=False)
            out = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
        out_of[f.name] = out
    return out_of


#: Rows per step when fields are copied out of structure rows: a step's
#: rows (about 1 MB) stay in the core's cache while each field is taken.
_STEP_BYTES = 1 << 20


def _copy_in_steps(pairs: list[tuple[np.ndarray, np.ndarray]], n: int, row_bytes: int) -> None:
    """``dst[:] = src`` for each (src, dst) pair of ``n`` rows, a step of
    rows (about :data:`_STEP_BYTES` of source) at a time for every pair."""
    step = max(1024, _STEP_BYTES // max(row_bytes, 1))
    for a in range(0, n, step):
        b = min(a + step, n)
        for src, dst in pairs:
            dst[a:b] = src[a:b]


def _copy_fields(block: np.ndarray, spans: list[tuple[int, int]]) -> dict[int, np.ndarray]:
    """Each ``(offset, length)`` field of the rows of ``block``, as a
    C-contiguous ``(n, length)`` block keyed by offset.

    The fields are copied a step of rows at a time, every field per step, so
    a step's rows are still in the core's cache for the second and later
    fields. Returns {} for fewer than 4,096 rows (nothing to gain) and for
    a block whose columns are not adjacent bytes.
    """
    n = block.shape[0]
    if n < 4096 or block.strides[1] != 1:
        return {}
    out, pairs = {}, []
    for off, length in spans:
        dst = np.empty((n, length), dtype=np.uint8)
        out[off] = dst
        pairs.append((block[:, off:off + length].view(f"V{length}").reshape(n),
                      dst.view(f"V{length}").reshape(n)))
    _copy_in_steps(pairs, n, abs(block.strides[0]))
    return out


def _ints_of(records: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    """The MQLONG fields ``names`` of a structured view, as native int32,
    converted a step of rows at a time (as :func:`_copy_fields`)."""
    n = len(records)
    out = {name: np.empty(n, dtype=np.int32) for name in names}
    _copy_in_steps([(records[name], out[name]) for name in names], n, records.strides[0])
    return out


def concat_ranges(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The bytes ``data[starts[i]:starts[i] + lengths[i]]`` of every row, concatenated.

    Parameters
    ----------
    data : numpy.ndarray of uint8
    starts, lengths : numpy.ndarray of int, shape (n,)
        Each range must lie inside ``data`` (lengths >= 0).

    Returns
    -------
    numpy.ndarray of uint8, shape (lengths.sum(),)

    Notes
    -----
    Rows of one length (the usual case in a batch of similar messages) are
    one strided gather (:func:`gather`); otherwise long rows are joined as
    memoryview slices (one copy each) and short ones by a byte index, which
    is cheaper below about 48 bytes a row.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(starts)
    total = int(lengths.sum()) if n else 0
    if total == 0:
        return np.zeros(0, dtype=np.uint8)
    width = int(lengths[0])
    if (lengths == width).all():
        return np.ascontiguousarray(gather(data, starts, width, starts + width)[0]).reshape(-1)
    if total > 48 * n:
        mv = memoryview(np.ascontiguousarray(data)).cast("B")
        return np.frombuffer(b"".join([mv[s:s + ln] for s, ln in
                                       zip(starts.tolist(), lengths.tolist())]), dtype=np.uint8)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return data[np.repeat(starts - offsets[:-1], lengths) + np.arange(total)]


def gather(data: np.ndarray, starts: np.ndarray, width: int,
           limit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``width`` bytes of ``data`` at each of ``starts``, as an ``(n, width)`` block.

    Bytes at or past ``limit`` (per row, exclusive) are zero. Returns the block
    and the number of bytes really present per row. The block is a read-only
    view of ``data`` when the rows are evenly spaced and whole (its rows are
    contiguous, the block as a whole need not be), else a copy.
    """
    n = len(starts)
    starts = np.asarray(starts, dtype=np.int64)
    avail = np.clip(np.asarray(limit, dtype=np.int64) - starts, 0, width)
    if n == 0 or data.size == 0:
        return np.zeros((n, width), dtype=np.uint8), avail
    data = np.ascontiguousarray(data)
    if width and data.size >= width and starts.min() >= 0 and starts.max() <= data.size - width:
        whole = bool((avail == width).all())
        step = int(starts[1] - starts[0]) if n > 1 else 0
        if whole and n > 1 and step >= 0 and (np.diff(starts) == step).all():
            # evenly spaced rows (records of one length): a read-only view
            # of the buffer, nothing copied
            return np.lib.stride_tricks.as_strided(
                data[int(starts[0]):], shape=(n, width), strides=(step, 1),
                writeable=False), avail
        # Every row lies inside the buffer: each ``width``-byte window of it
        # is one item of a ``V{width}`` view with stride 1, so the gather is
        # one memcpy per row.
        windows = np.ndarray((data.size - width + 1,), dtype=f"V{width}", buffer=data,
                             strides=(1,))
        block = windows[starts].view(np.uint8).reshape(n, width)
        if not whole:  # bytes past a row's limit are not its own
            block = np.where(np.arange(width) < avail[:, None], block, 0).astype(np.uint8)
        return block, avail
    mv = memoryview(data).cast("B")
    full = avail == width
    if full.all():
        # slicing a memoryview and joining is one C copy per row: far cheaper
        # than numpy fancy indexing over n * width positions
        joined = b"".join([mv[s:s + width] for s in starts.tolist()])
    else:
        pieces = []
        for s, a in zip(starts.tolist(), avail.tolist()):
            if a == width:
                pieces.append(mv[s:s + width])
            else:
                pieces.append(bytes(mv[s:s + a]) + b"\0" * (width - a))
        joined = b"".join(pieces)
    block = np.frombuffer(joined, dtype=np.uint8).reshape(n, width)
    return block, avail
