"""TCP stream reassembly: one direction of a connection, in sequence order.

dpkt parses the packets; putting their payloads back in order is ours (dpkt
has no reassembly). Kept small on purpose:

* packets are placed by sequence number relative to the stream's first
  sequence number (the SYN's plus one when the SYN was captured), modulo
  2**32 so a wrap is followed;
* a retransmission or a packet captured twice (a capture on several
  interfaces) adds only the bytes not already placed: packets are placed by
  sequence number then capture order, and a byte already placed is kept
  (copies of the same TCP bytes are identical unless the capture is damaged);
* a stretch no packet covers is a **gap**: the bytes were not captured and
  are never invented. The stream is returned as :class:`Run` objects, each a
  contiguous stretch of captured bytes, so a reader sees where a gap is.

RFC 9293 ("Transmission Control Protocol", section 3.4 sequence numbers) is
the reference for the sequence-space arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_MOD = 1 << 32
_HALF = 1 << 31


@dataclass
class Packet:
    """One TCP segment of one direction: ``frame`` is its 1-based number in
    the capture, ``ts`` its capture time (seconds since the epoch, UTC),
    ``offset`` the file offset of its record (-1 unknown)."""

    frame: int
    ts: float
    seq: int
    data: bytes
    syn: bool = False
    offset: int = -1


@dataclass
class Run:
    """Contiguous captured bytes of a stream.

    Attributes
    ----------
    start : int
        Stream offset of the first byte (bytes from the stream's first byte).
    data : bytearray
    marks : list of (int, int, float, int)
        ``(offset in data, frame, ts, file offset of the packet's record)``
        where each packet's new bytes start, increasing.
    """

    start: int
    data: bytearray = field(default_factory=bytearray)
    marks: list = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + len(self.data)

    def packet_at(self, offset: int) -> tuple[int, float, int]:
        """``(frame, ts, record offset)`` of the packet that carried byte
        ``offset`` of ``data``."""
        lo, hi = 0, len(self.marks) - 1
        while lo < hi:  # the last mark at or before offset
            mid = (lo + hi + 1) // 2
            if self.marks[mid][0] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return self.marks[lo][1], self.marks[lo][2], self.marks[lo][3]


@dataclass
class Reassembled:
    """A stream's runs and what reassembly counted."""

    runs: list[Run]
    duplicate_bytes: int = 0
    #: ``gaps[k]``: the stream offsets ``(start, end)`` missing after ``runs[k]``
    gaps: list[tuple[int, int]] = field(default_factory=list)
    #: bytes missing before the first run (its SYN was captured, its first bytes not)
    missing_start: int = 0


def reassemble(packets: list[Packet]) -> Reassembled:
    """Order one direction's payloads by sequence number.

    Parameters
    ----------
    packets : list of Packet
        In capture order (``frame`` increasing); payload-less packets may be
        included (a SYN sets the initial sequence number).

    Returns
    -------
    Reassembled
        ``runs`` in stream order; ``gaps[k]`` the ``(start, end)`` stream
        offsets no captured packet covers after ``runs[k]``; ``missing_start``
        the bytes missing before the first; ``duplicate_bytes`` how many payload bytes
        were already placed by an earlier copy.
    """
    syn = next((p for p in packets if p.syn), None)
    with_data = [p for p in packets if p.data]
    if not with_data:
        return Reassembled([])
    base = (syn.seq + 1) % _MOD if syn is not None else with_data[0].seq

    def rel(seq: int) -> int:
        r = (seq - base) % _MOD
        return r - _MOD if r >= _HALF else r

    placed = sorted(((rel(p.seq), p.frame, p) for p in with_data), key=lambda t: (t[0], t[1]))
    if syn is None:  # no SYN: the stream starts with the lowest sequence number seen
        low = placed[0][0]
        placed = [(r - low, f, p) for r, f, p in placed]
    out = Reassembled([])
    run: Run | None = None
    for start, frame, p in placed:
        end = start + len(p.data)
        if start < 0:  # bytes before the SYN's sequence number: not of this stream
            continue
        if run is not None and end <= run.end:
            out.duplicate_bytes += len(p.data)
            continue
        if run is None or start > run.end:
            if run is not None:
                out.gaps.append((run.end, start))
            else:
                out.missing_start = start
            run = Run(start)
            out.runs.append(run)
        skip = run.end - start  # bytes of this packet already placed
        out.duplicate_bytes += skip
        run.marks.append((len(run.data), p.frame, p.ts, p.offset))
        run.data += p.data[skip:]
    return out
