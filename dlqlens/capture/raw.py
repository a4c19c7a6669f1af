"""Raw binary captures: MQMD + message data records.

Two layouts are read:

**dlqlens raw capture** (written by :func:`write_raw`)::

    header   12 bytes  b"DLQLENS-RAW\\0"
              4 bytes  format version, unsigned big-endian (1)
    record    4 bytes  record length L, unsigned big-endian
              L bytes  an MQMD (version 1 or 2, either byte order, ASCII or
                       EBCDIC) immediately followed by the message data
    ...
    index     8 bytes  per record: file offset of its length prefix (u64 BE)
    (optional) 8 bytes record count (u64 BE)
             12 bytes  b"DLQLENS-IDX\\0"

The index lets a reader frame all records with one vectorised check and
lets Spark split a large file into byte ranges at record boundaries; a file
without it (or with a damaged one) is framed by walking the length prefixes.
Bytes between records become ``bad_framing`` rows (raw bytes kept); a last
record cut short by the end of the file is decoded as far as it goes
(``truncated``, ``data_length`` as its length prefix states).

**Single message**: a file that starts with an MQMD (``MD  `` in ASCII or
EBCDIC) holds one message: the MQMD then the data to the end of the file.

The MQMD does not say which byte order or character set it is in (IBM MQ,
MQMD "Encoding (MQLONG)": the field describes the message data, not the
MQMD, which is in the queue manager's own encoding and character set); each
record's layout is detected from its invariants: ``StrucId`` ``MD  `` in
ASCII (``4D442020``) or EBCDIC (``D4C44040``) and a ``Version`` of 1 or 2 read
big- or little-endian. A record where neither fits is kept as a
``bad_descriptor`` row with its raw bytes.
"""

from __future__ import annotations

import array
import os
import struct
from collections.abc import Iterable, Iterator

import numpy as np

from dlqlens.capture.limits import MAX_MESSAGE_BYTES
from dlqlens.capture.message import CaptureMessage
from dlqlens.capture.slices import Slice
from dlqlens.decode.fixed import copy_rows, gather
from dlqlens.decode.frames import MD_SIZE, Frames, labels
from dlqlens.decode.issues import Issue, make_issue
from dlqlens.errors import CaptureError
from dlqlens.mq.constants import (MQMD_LENGTH_1, MQMD_LENGTH_2, MQMD_STRUC_ID, MQMD_VERSION_1,
                                  MQMD_VERSION_2)

MAGIC = b"DLQLENS-RAW\0"
INDEX_MAGIC = b"DLQLENS-IDX\0"
HEADER_SIZE = len(MAGIC) + 4
TRAILER_SIZE = 8 + len(INDEX_MAGIC)
FORMAT_VERSION = 1

#: The MQMD's StrucId in ASCII and in EBCDIC.
MD_ASCII = MQMD_STRUC_ID.encode("ascii")
MD_EBCDIC = MQMD_STRUC_ID.encode("cp500")
_MD_VERSIONS = (MQMD_VERSION_1, MQMD_VERSION_2)
_MD_STRUC_ID_TEXT = (f"'{MQMD_STRUC_ID}' (X'{MD_ASCII.hex().upper()}' "
                     f"or X'{MD_EBCDIC.hex().upper()}')")
#: Largest record a reader accepts (MQ's own limit is 100 MB of data).
MAX_RECORD = 100 * 1024 * 1024 + MQMD_LENGTH_2
#: At most this many bytes of an unframed stretch are kept in ``raw``.
MAX_RAW_KEPT = 1024 * 1024


def sniff(head: bytes) -> bool:
    """True when ``head`` (the first bytes of a file) is a raw capture."""
    if head.startswith(MAGIC):
        return True
    return _md_layout(head[:8]) is not None


def _md_layout(b: bytes):
    """(big_endian, ebcdic, version) of an MQMD's first 8 bytes, or None."""
    if len(b) < 8:
        return None
    sid = b[:4]
    if sid not in (MD_ASCII, MD_EBCDIC):
        return None
    ver_be = int.from_bytes(b[4:8], "big")
    ver_le = int.from_bytes(b[4:8], "little")
    if ver_be in _MD_VERSIONS:
        return True, sid == MD_EBCDIC, ver_be
    if ver_le in _MD_VERSIONS:
        return False, sid == MD_EBCDIC, ver_le
    return None


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------

def write_raw(path: str | os.PathLike, messages: Iterable[CaptureMessage], *,
              index: bool = True) -> int:
    """Write a dlqlens raw capture; returns the number of records written.

    Messages are streamed: nothing but the index (8 bytes a record) is held.
    """
    offsets = array.array("Q")  # 8 bytes a record, not a Python int each
    n = 0
    with open(path, "wb") as fh:
        fh.write(MAGIC + struct.pack(">I", FORMAT_VERSION))
        pos = HEADER_SIZE
        for m in messages:
            body = m.md_bytes() + m.data
            fh.write(struct.pack(">I", len(body)))
            fh.write(body)
            offsets.append(pos)
            pos += 4 + len(body)
            n += 1
        if index:
            fh.write(np.frombuffer(offsets, dtype=np.uint64).astype(">u8").tobytes())
            fh.write(struct.pack(">Q", n) + INDEX_MAGIC)
    return n


def write_single(path: str | os.PathLike, message: CaptureMessage) -> None:
    """Write one message as a bare MQMD + data file."""
    with open(path, "wb") as fh:
        fh.write(message.md_bytes() + message.data)


# ---------------------------------------------------------------------------
# planning (byte ranges for Spark partitions)
# ---------------------------------------------------------------------------

def _index_place(fh, size: int) -> tuple[int, int] | None:
    """``(records, offset of the index)`` from the trailer at the end of an
    open file, or None when it has no trailer or the index cannot fit."""
    if size < HEADER_SIZE + TRAILER_SIZE:
        return None
    fh.seek(size - TRAILER_SIZE)
    trailer = fh.read(TRAILER_SIZE)
    if trailer[8:] != INDEX_MAGIC:
        return None
    n = int.from_bytes(trailer[:8], "big")
    idx_start = size - TRAILER_SIZE - 8 * n
    return None if idx_start < HEADER_SIZE else (n, idx_start)


def _index_from_file(fh, size: int) -> np.ndarray | None:
    """Record offsets from the index at the end of an open file, or None
    when the file has none or it does not check out."""
    place = _index_place(fh, size)
    if place is None:
        return None
    n, idx_start = place
    fh.seek(idx_start)
    offs = np.frombuffer(fh.read(8 * n), dtype=">u8").astype(np.int64)
    if n == 0:
        return offs if idx_start == HEADER_SIZE else None
    if offs[0] != HEADER_SIZE or (np.diff(offs) <= 4).any() or offs[-1] + 4 > idx_start:
        return None
    return offs


def _index_part(fh, size: int, piece: Slice | None) -> np.ndarray | None:
    """The index entries of a planned slice alone (its records' offsets), or
    None when there is no plan, no index, or the entries do not fit the slice
    (the caller then reads the whole index and checks it, as for a whole file).

    Planning checked the whole index; reading only a slice's part of it keeps
    each partition's cost proportional to its own size.
    """
    if piece is None or piece.start is None or not piece.messages:
        return None
    place = _index_place(fh, size)
    if place is None:
        return None
    n, idx_start = place
    first = piece.first_number - 1
    if first < 0 or first + piece.messages > n or piece.stop > idx_start:
        return None
    fh.seek(idx_start + 8 * first)
    part = np.frombuffer(fh.read(8 * piece.messages), dtype=">u8").astype(np.int64)
    if len(part) != piece.messages or part[0] != piece.start or \
            (np.diff(part) <= 4).any() or part[-1] + 4 > piece.stop:
        return None
    return part


def _has_trailer(fh, size: int) -> bool:
    """Does the file end with the index trailer (whatever the index holds)?"""
    if size < HEADER_SIZE + TRAILER_SIZE:
        return False
    fh.seek(size - TRAILER_SIZE)
    return fh.read(TRAILER_SIZE)[8:] == INDEX_MAGIC


def _index_lengths(buf: np.ndarray, base: int, offs: np.ndarray, end: int) -> np.ndarray | None:
    """The record lengths that the length prefixes in ``buf`` (file bytes from
    ``base``) state at the increasing offsets ``offs``, when they agree with
    them (each record ends where the next starts, the last at ``end``);
    None when they do not, or when a prefix lies outside ``buf``."""
    if not len(offs):
        return np.zeros(0, dtype=np.int64)
    rel = offs - base
    if rel[0] < 0 or rel[-1] + 4 > buf.size:
        return None
    lens = _u32be(buf, rel)
    return lens if np.array_equal(offs + 4 + lens, np.append(offs[1:], end)) else None


def _u32be(arr: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The big-endian unsigned 32-bit integers at byte offsets ``at`` of ``arr``
    (int64; IndexError when one runs past the end)."""
    if arr.size < 4:
        raise IndexError(f"a 4-byte length prefix in a {arr.size}-byte buffer")
    # every 4-byte window of the buffer as an unaligned big-endian integer
    # (a view, stride 1): one gather instead of four byte gathers
    words = np.ndarray((arr.size - 3,), dtype=">u4", buffer=arr, strides=(1,))
    return words[at].astype(np.int64)


def _read_bytes(fh, count: int) -> np.ndarray:
    """Up to ``count`` bytes from ``fh``'s position, as a ``uint8`` array.

    Read into a numpy buffer (which the kernel backs with huge pages) rather
    than a ``bytes`` object: a third less time for a 64 MiB slice. Fewer
    bytes come back when the file ends sooner.
    """
    buf = np.empty(max(count, 0), dtype=np.uint8)
    got = fh.readinto(buf) or 0
    return buf if got == len(buf) else buf[:got]


def plan(path: str, target_bytes: int = 64 * 1024 * 1024, *,
         max_message_bytes: int | None = None) -> list[Slice]:
    """Split a raw capture into :class:`Slice` objects of about ``target_bytes``.

    Files without a valid index are one slice, and so are files whose index
    does not agree with the length prefix of the record at a cut or of the
    last record (read whole, such a file is framed by walking its prefixes,
    which slices cannot do alone). Each slice checks the rest of the index
    against its own records when it is read (:func:`read_raw`).
    """
    size = os.path.getsize(path)
    if size <= target_bytes:
        return [Slice(path)]
    with open(path, "rb") as fh:
        if fh.read(len(MAGIC)) != MAGIC:
            return [Slice(path)]
        offs = _index_from_file(fh, size)
    if offs is None or len(offs) == 0:
        return [Slice(path)]
    end = size - TRAILER_SIZE - 8 * len(offs)
    cuts = np.searchsorted(offs, np.arange(0, end, target_bytes)[1:])
    bounds = [0] + sorted(set(int(c) for c in cuts if 0 < c < len(offs))) + [len(offs)]
    with open(path, "rb") as fh:
        for a in bounds[:-1] + [len(offs) - 1]:
            fh.seek(int(offs[a]))
            prefix = fh.read(4)
            nxt = int(offs[a + 1]) if a + 1 < len(offs) else end
            if len(prefix) < 4 or int(offs[a]) + 4 + int.from_bytes(prefix, "big") != nxt:
                return [Slice(path)]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        start = int(offs[a])
        stop = int(offs[b]) if b < len(offs) else end
        out.append(Slice(path, start, stop, a + 1, messages=b - a))
    return out


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------

def read_raw(path: str, *, source: str | None = None, piece: Slice | None = None,
             batch_size: int = 65536,
             max_message_bytes: int = MAX_MESSAGE_BYTES) -> Iterator[Frames]:
    """Frame the records of a raw capture, ``batch_size`` at a time.

    Parameters
    ----------
    path : str
        The file.
    source : str, optional
        Name recorded in the ``source`` column (default ``path``).
    piece : Slice, optional
        Only this byte range (from :func:`plan`); default the whole file,
        which is then read into memory at once.
    batch_size : int
        Records per yielded :class:`~dlqlens.decode.frames.Frames`.
    max_message_bytes : int
        A single-message file with more data than this is not read: one
        ``bad_framing`` row with a ``too_large`` issue and its MQMD bytes in
        ``raw`` (:mod:`dlqlens.capture.limits`). Records of a dlqlens raw
        capture are limited to :data:`MAX_RECORD` by their framing.

    Yields
    ------
    Frames

    Raises
    ------
    CaptureError
        When the file cannot be opened or is not a raw capture.
    """
    source = source or path
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise CaptureError(f"{path}: cannot open: {exc.strerror or exc}") from exc
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            return
        head = fh.read(16)
        if not head.startswith(MAGIC):
            if _md_layout(head[:8]) is None:
                raise CaptureError(
                    f"{source}: not a raw capture: expected {MAGIC!r} or an MQMD StrucId "
                    f"'MD  ' at offset 0, found X'{head[:8].hex().upper()}'")
            fh.seek(0)
            md_len = MQMD_LENGTH_2 if _md_layout(head[:8])[2] == MQMD_VERSION_2 else \
                MQMD_LENGTH_1
            if size - md_len > max_message_bytes:  # not read: one row that says so
                buf = _read_bytes(fh, min(size, md_len))
                why = _too_large(size - md_len, max_message_bytes)
                yield _frames(buf, 0, source, *([np.zeros(0, np.int64)] * 3),
                              [(0, len(buf), why)], np.ones(1, np.int8),
                              np.zeros(1, np.int64), 1, 0)
                return
            buf = _read_bytes(fh, size)
            recs = np.array([0], dtype=np.int64), np.array([size], dtype=np.int64)
            yield from _batches(buf, 0, source, recs, [], 1, batch_size, prefix=0)
            return
        version = int.from_bytes(head[12:16], "big")
        if version != FORMAT_VERSION:
            raise CaptureError(f"{source}: offset 12: raw capture format version: expected "
                               f"{FORMAT_VERSION}, found {version}")
        part = _index_part(fh, size, piece)
        offs = part if part is not None else _index_from_file(fh, size)
        # an index that does not check out: scan the whole file; the index and
        # trailer are then the last stretch (8 bytes a record + trailer), dropped
        # below (a payload that merely ends like a trailer frames cleanly)
        damaged_index = offs is None and _has_trailer(fh, size)
        if piece is not None and piece.start is not None:
            start, stop, first = piece.start, piece.stop, piece.first_number
        else:  # the whole file: the records end where the (whole) index starts
            start, first = HEADER_SIZE, 1
            stop = size if offs is None else size - TRAILER_SIZE - 8 * len(offs)
        fh.seek(start)
        buf = _read_bytes(fh, stop - start)
    if offs is not None:
        sel = offs[(offs >= start) & (offs < stop)]
        lens = _index_lengths(buf, start, sel, stop)
        if lens is not None:
            rel = sel - start
            yield from _batches(buf, start, source, (rel + 4, rel + 4 + lens), [], first,
                                batch_size, prefix=4)
            return
        if piece is not None and piece.start is not None:
            # read whole, this file would be framed by walking its length
            # prefixes from the header: a slice cannot, so it says so
            lens = _u32be(buf, sel - start)
            nxt = np.append(sel[1:], stop)
            i = int(np.flatnonzero(sel + 4 + lens != nxt)[0])
            raise CaptureError(
                f"{source}: offset {int(sel[i])}: record length prefix: expected "
                f"{int(nxt[i] - sel[i] - 4)} (the index puts the next record at offset "
                f"{int(nxt[i])}), found {int(lens[i])}; the index does not agree with the "
                f"records, so this file cannot be read in slices: read it as one partition "
                f"(option splitBytes larger than the file) to frame it by its length prefixes")
    recs, bad = _scan(buf, 0, stop - start)
    if offs is not None and len(recs[0]):
        # an index that does not agree with the length prefixes: say so on the
        # first record where they part
        walked = recs[0] - 4 + start
        k = min(len(walked), len(offs))
        differ = np.flatnonzero(walked[:k] != offs[:k])
        at = int(differ[0]) if len(differ) else (k if len(walked) != len(offs) else None)
        if at is not None:
            row = min(at, len(walked) - 1)
            expected_at = int(offs[at]) if at < len(offs) else None
            recs[3].setdefault(row, []).append(
                ("index", at + 1, expected_at if expected_at is not None
                 else f"none (the index holds {len(offs)} entries)"))
    if damaged_index and bad and bad[-1][1] == stop - start and \
            bad[-1][1] - bad[-1][0] == 8 * len(recs[0]) + TRAILER_SIZE and \
            bad[-1][0] == (int(recs[1][-1]) if len(recs[1]) else 0):
        bad.pop()  # the index and its trailer, not message data
    yield from _batches(buf, start, source, recs, bad, first, batch_size, prefix=4)


def _too_large(length: int, limit: int) -> tuple[str, str, str, str]:
    """Issue arguments of a message whose data is over the size limit."""
    return ("too_large", "message data length",
            f"at most {limit:,} bytes (option maxMessageBytes)",
            f"{length:,} bytes; the MQMD is kept in raw, the data is not read")


def _scan(buf: np.ndarray, start: int, stop: int):
    """Walk the length prefixes from ``start``; resynchronise after damage.

    Returns the record body ranges ``(starts, ends, stated_ends, flags)`` and a
    list of unframed stretches ``(start, end, Issue-arguments)``. A last record
    whose length runs past the end of the file but whose MQMD is readable is
    a record cut short (``stated_ends`` past ``ends``), not an unframed stretch.
    ``flags`` maps a record's index to the arguments of an issue about its
    length (:func:`_split_swallowed`).

    Every place a record may start (a length prefix that fits, then an MQMD
    StrucId and Version) is found once, with numpy (:class:`_Candidates`), so
    resynchronising after damage is a binary search: the walk is linear
    in the file's size whatever the damage.
    """
    data = memoryview(buf)
    cand = _Candidates(buf, start, stop)
    starts, ends, stated, bad = [], [], [], []
    p = start
    while p < stop:
        if p + 4 > stop:
            bad.append((p, stop, ("bad_length", "record length", "4-byte length prefix",
                                  f"{stop - p} trailing bytes")))
            break
        ln = int.from_bytes(data[p:p + 4], "big")
        body = p + 4
        if MQMD_LENGTH_1 <= ln <= min(MAX_RECORD, stop - body) and \
                bytes(data[body:body + 4]) in (MD_ASCII, MD_EBCDIC):
            starts.append(body)
            ends.append(body + ln)
            stated.append(body + ln)
            p = body + ln
            continue
        if MQMD_LENGTH_1 <= ln <= MAX_RECORD and ln > stop - body and \
                _md_layout(bytes(data[body:body + 8])) is not None and \
                cand.next(p + 1) == stop:
            starts.append(body)
            ends.append(stop)
            stated.append(body + ln)
            break
        if ln > stop - body or ln < MQMD_LENGTH_1:
            why = ("bad_length", "record length",
                   f"{MQMD_LENGTH_1} to {min(MAX_RECORD, stop - body)} bytes", f"{ln} bytes")
        else:
            why = ("bad_md", "md.StrucId", _MD_STRUC_ID_TEXT,
                   f"X'{bytes(data[body:body + 4]).hex().upper()}'")
        q = cand.next(p + 1)
        bad.append((p, q, why))
        p = q
    recs = (np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64),
            np.array(stated, dtype=np.int64))
    return _split_swallowed(recs, cand), bad


class _Candidates:
    """The offsets in ``buf[start:stop]`` where a record may start: a length
    prefix of :data:`MQMD_LENGTH_1` to :data:`MAX_RECORD` bytes that ends at
    or before ``stop``, followed by an MQMD StrucId (ASCII or EBCDIC) and a
    Version of 1 or 2 (either byte order). Found with numpy a window at a
    time (memory: a few bytes per candidate), sorted."""

    WINDOW = 1 << 22

    def __init__(self, buf: np.ndarray, start: int, stop: int):
        self.stop = stop
        found = []
        if stop - start >= 4 + 8 and buf.size >= 12:
            words = np.ndarray((buf.size - 3,), dtype=">u4", buffer=buf, strides=(1,))
            ascii_, ebcdic = int.from_bytes(MD_ASCII, "big"), int.from_bytes(MD_EBCDIC, "big")
            last = stop - 8  # the StrucId and Version inside the range
            for lo in range(start + 4, last + 1, self.WINDOW):
                hi = min(last + 1, lo + self.WINDOW)
                # the StrucId's first byte (a fast byte compare), then the word
                b0 = buf[lo:hi]
                at = np.flatnonzero((b0 == MD_ASCII[0]) | (b0 == MD_EBCDIC[0])) + lo
                w = words[at]
                at = at[(w == ascii_) | (w == ebcdic)]
                if not len(at):
                    continue
                ver = words[at + 4]
                ver_le = ver.byteswap()
                ok = (ver == 1) | (ver == 2) | (ver_le == 1) | (ver_le == 2)
                ln = words[at - 4].astype(np.int64)
                ok &= (ln >= MQMD_LENGTH_1) & (ln <= np.minimum(MAX_RECORD, stop - at))
                found.append(at[ok] - 4)
        self.at = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
        self.lengths = _u32be(buf, self.at) if len(self.at) else np.zeros(0, dtype=np.int64)

    def next(self, p: int) -> int:
        """The first candidate at or after ``p``, or ``stop``."""
        k = int(np.searchsorted(self.at, p))
        return int(self.at[k]) if k < len(self.at) else self.stop


def _split_swallowed(recs, cand: _Candidates):
    """Records whose length prefix was enlarged over the records after them.

    A record (its prefix at ``p``, its body ending at ``e``) that holds,
    after its MQMD, a candidate record start ``q`` from which a chain of
    candidates (each starting where the one before ends) ends exactly at
    ``e``, swallowed those records: they would be read as its data, and
    every later message renumbered. It is cut at the first such ``q`` and
    flagged ``length_mismatch`` on its length; the chain's records are framed
    as records. Checked for the records that hold a candidate at all (one
    binary search for all of them), each candidate followed once.
    """
    rs, re_, stated = recs
    flags: dict[int, tuple] = {}
    if not len(rs) or not len(cand.at):
        return rs, re_, stated, flags
    full = stated == re_
    lo = np.searchsorted(cand.at, rs + MQMD_LENGTH_1)
    hi = np.searchsorted(cand.at, re_)
    which = np.flatnonzero(full & (hi > lo))
    if not len(which):
        return rs, re_, stated, flags
    at, lengths = cand.at.tolist(), cand.lengths.tolist()
    index = {q: k for k, q in enumerate(at)}
    new_re = re_.tolist()
    extra: list[tuple[int, int]] = []
    for i in which.tolist():
        e = int(re_[i])
        reaches: dict[int, bool] = {}
        first = None
        for k in range(int(lo[i]), int(hi[i])):
            q = at[k]
            path = []
            while q < e and q not in reaches and q in index:
                path.append(q)
                q = q + 4 + lengths[index[q]]
            ok = q == e or reaches.get(q, False)
            for x in path:
                reaches[x] = ok
            if ok:
                first = at[k]
                break
        if first is None:
            continue
        body = int(rs[i])
        new_re[i] = first
        q, chain = first, 0
        while q < e:
            ln = lengths[index[q]]
            extra.append((q + 4, q + 4 + ln))
            q += 4 + ln
            chain += 1
        flags[i] = [("swallowed", first, e, chain)]
    if not flags:
        return rs, re_, stated, {}
    st = stated.copy()
    st[list(flags)] = np.array([f[0][1] for f in flags.values()], dtype=np.int64)
    out_rs = np.concatenate([rs, np.array([x for x, _ in extra], dtype=np.int64)])
    out_re = np.concatenate([np.array(new_re, dtype=np.int64),
                             np.array([y for _, y in extra], dtype=np.int64)])
    out_st = np.concatenate([st, out_re[len(rs):]])
    order = np.argsort(out_rs, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return out_rs[order], out_re[order], out_st[order], \
        {int(rank[i]): f for i, f in flags.items()}


def _batches(buf, base, source, recs, bad, first_number, batch_size, prefix):
    """Merge records and unframed stretches in file order and yield Frames."""
    rs, re_ = recs[0], recs[1]
    stated = recs[2] if len(recs) > 2 else re_
    flags = recs[3] if len(recs) > 3 else {}
    kinds = np.concatenate([np.zeros(len(rs), np.int8), np.ones(len(bad), np.int8)])
    pos = np.concatenate([rs - prefix, np.array([b[0] for b in bad], dtype=np.int64)])
    order = np.argsort(pos, kind="stable")
    rec_index = np.concatenate([np.arange(len(rs)), np.arange(len(bad))])
    for b0 in range(0, len(order), batch_size):
        sel = order[b0:b0 + batch_size]
        yield _frames(buf, base, source, rs, re_, stated, bad, kinds[sel], rec_index[sel],
                      first_number + b0, prefix, flags)


def _frames(buf, base, source, rs, re_, stated, bad, kinds, which, first_number,
            prefix, flags=None) -> Frames:
    n = len(kinds)
    is_rec = kinds == 0
    body_start = np.zeros(n, dtype=np.int64)
    body_end = np.zeros(n, dtype=np.int64)
    stated_end = np.zeros(n, dtype=np.int64)
    body_start[is_rec] = rs[which[is_rec]]
    body_end[is_rec] = re_[which[is_rec]]
    stated_end[is_rec] = stated[which[is_rec]]
    for i in np.flatnonzero(~is_rec):
        b = bad[which[i]]
        body_start[i], body_end[i] = b[0], b[1]
    head, avail = gather(buf, body_start, 8, body_end)
    sid = copy_rows(head[:, :4]).view(">u4").ravel()  # the StrucId as one word
    sid_a = sid == int.from_bytes(MD_ASCII, "big")
    sid_e = sid == int.from_bytes(MD_EBCDIC, "big")
    v = copy_rows(head[:, 4:8])
    v_be = v.view(">i4").ravel()
    v_le = v.view("<i4").ravel()
    big = np.isin(v_be, _MD_VERSIONS)
    version = np.where(big, v_be, np.where(np.isin(v_le, _MD_VERSIONS), v_le, 0)).astype(np.int32)
    md_len = np.where(version == MQMD_VERSION_2, MQMD_LENGTH_2, MQMD_LENGTH_1)
    valid = is_rec & (sid_a | sid_e) & (version > 0) & (body_end - body_start >= md_len)
    md, _ = gather(buf, body_start, MD_SIZE, np.where(valid, body_start + md_len, body_start))
    numbers = np.arange(first_number, first_number + n, dtype=np.int32)
    issues: dict[int, list[Issue]] = {}
    raw: dict[int, bytes] = {}
    for i in np.flatnonzero(~valid):
        off = base + int(body_start[i] - (prefix if is_rec[i] else 0))
        if is_rec[i]:
            if not (sid_a[i] or sid_e[i]):
                args = ("bad_md", "md.StrucId", _MD_STRUC_ID_TEXT,
                        f"X'{bytes(head[i, :4]).hex().upper()}'")
            elif version[i] == 0:
                args = ("bad_md", "md.Version", "1 or 2 (big- or little-endian)",
                        f"X'{bytes(head[i, 4:8]).hex().upper()}'")
                off += 4
            else:
                args = ("bad_md", "record length", f"at least {int(md_len[i])} bytes for an "
                        f"MQMD version {int(version[i])}",
                        f"{int(body_end[i] - body_start[i])} bytes")
        else:
            args = bad[which[i]][2]
        code, field, expected, found = args
        issues[i] = [make_issue(code, source=source, message_number=int(numbers[i]),
                                field=field, expected=expected, found=found, offset=off)]
        lo = int(body_start[i] - (prefix if is_rec[i] else 0))
        hi = min(int(body_end[i]), lo + MAX_RAW_KEPT)
        raw[i] = buf[lo:hi].tobytes()
    for i in np.flatnonzero(valid & (stated_end > body_end)):
        issues[i] = [make_issue(
            "data_truncated", source=source, message_number=int(numbers[i]),
            field="record length", expected=f"{int(stated_end[i] - body_start[i])} bytes",
            found=f"{int(body_end[i] - body_start[i])} bytes before the end of the file",
            offset=base + int(body_start[i]) - prefix,
            note="the capture was cut inside this record")]
    for i in np.flatnonzero(is_rec).tolist() if flags else ():
        for f in flags.get(int(which[i]), ()):
            body = int(body_start[i])
            if f[0] == "swallowed":
                _, first, end, chain = f
                issue = make_issue(
                    "length_mismatch", source=source, message_number=int(numbers[i]),
                    field="record length",
                    expected=f"{first - body} bytes (the record ends where {chain} record(s) "
                             f"with valid length prefixes and MQMDs start, offset "
                             f"{base + first}, and run on to the end this length states, "
                             f"offset {base + end})",
                    found=f"{end - body} bytes", offset=base + body - prefix,
                    note="the length prefix covers the records after it: they are framed "
                         "as records")
            else:
                _, entry, expected_at = f
                issue = make_issue(
                    "index_mismatch", source=source, message_number=int(numbers[i]),
                    field="index", offset=base + body - prefix,
                    expected=f"index entry {entry}: a record at offset {expected_at}"
                    if isinstance(expected_at, int) else f"a record {entry} ({expected_at})",
                    found=f"the length prefixes put record {entry} at offset "
                          f"{base + body - prefix}",
                    note="the file's index does not agree with its length prefixes; the "
                         "records are framed by the length prefixes")
            issues.setdefault(i, []).append(issue)
    ebcdic = sid_e & valid
    data_start = np.where(valid, body_start + md_len, body_end)
    return Frames(
        source=source, capture_format="raw", md_origin="binary", md=md,
        md_big_endian=big & valid,
        md_codec=labels(n, "latin-1", ebcdic, "cp500"),
        md_blank=np.where(ebcdic, 0x40, 0x20).astype(np.uint8),
        md_version=np.where(valid, version, 0).astype(np.int32),
        md_valid=valid, data=buf, starts=data_start, ends=body_end,
        data_length=np.where(valid, stated_end, body_end) - data_start,
        message_number=numbers,
        source_offset=base + body_start - np.where(is_rec, prefix, 0),
        source_line=np.full(n, -1, dtype=np.int32),
        dlh_reconstructed=np.zeros(n, dtype=bool), issues=issues, raw=raw,
        data_offset=np.where(valid, base + data_start, -1))
