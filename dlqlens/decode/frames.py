"""Frames: the messages a capture reader has cut out of a file, before decoding.

Every reader (raw binary, dmpmqmsg, amqsbcg) produces :class:`Frames`: for
each message, the bytes of its MQMD (always as a binary MQMD, which text
readers build from the descriptor lines), the message data bytes, and where
it came from. :func:`dlqlens.decode.records.decode_frames` turns a batch of
frames into one Arrow record batch; nothing downstream knows which format the
message came from except by the ``capture_format`` column.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dlqlens.decode.issues import Issue
from dlqlens.mq.structs import MQMD

#: Width of the MQMD bytes of a frame: a version-2 MQMD.
MD_SIZE = MQMD.length(2)


@dataclass
class Frames:
    """A batch of ``n`` framed messages from one capture file.

    Attributes
    ----------
    source : str
        The capture file, as the user named it.
    capture_format : str
        The registry name of the format (``'raw'``, ``'dmpmqmsg'``,
        ``'amqsbcg'``, a hex-dump layout such as ``'xxd'``).
    md_origin : str
        ``'binary'`` (MQMD bytes from the capture) or ``'text'`` (built from
        descriptor lines).
    md : numpy.ndarray of uint8, shape (n, MD_SIZE)
        MQMD bytes, as wide as a version-2 MQMD (:data:`MD_SIZE`);
        version-1 descriptors are zero-filled past their end.
    md_big_endian : numpy.ndarray of bool, shape (n,)
    md_codec : numpy.ndarray of object, shape (n,)
        Python codec of the MQMD's character fields.
    md_blank : numpy.ndarray of uint8, shape (n,)
    md_version : numpy.ndarray of int32, shape (n,)
        1 or 2; 0 where no MQMD could be read.
    md_valid : numpy.ndarray of bool, shape (n,)
    data : numpy.ndarray of uint8
        The message data of all messages, concatenated.
    starts, ends : numpy.ndarray of int64, shape (n,)
        Message ``i`` is ``data[starts[i]:ends[i]]`` (a reader may point into
        the file's own buffer, gaps included).
    data_length : numpy.ndarray of int64, shape (n,)
        The length of the message data the capture states (larger than what
        is present when the capture truncated the message), in bytes.
    message_number : numpy.ndarray of int32, shape (n,)
        1-based number of the message in its file, in file order.
    source_offset : numpy.ndarray of int64, shape (n,)
        Byte offset of the message's first byte in the file (-1: unknown).
    source_line : numpy.ndarray of int32, shape (n,)
        1-based line of the message's first line (-1 for binary captures).
    dlh_reconstructed : numpy.ndarray of bool, shape (n,)
        True where the MQDLH at the start of the data was rebuilt from a
        formatted MQDLH block (amqsbcg 9.3.4 and later).
    issues : dict of int to list of Issue
        Framing issues per row.
    raw : dict of int to bytes
        The raw record (bytes or text) of rows that could not be framed or
        whose descriptor could not be read, kept so nothing is lost.
    data_offset : numpy.ndarray of int64, shape (n,), optional
        File offset of each message's first data byte (binary captures; -1
        or None when unknown), so decode issues can name a file offset.
    unknown : dict of int to tuple of str
        Per row, the fields the capture does not hold (``md.MsgId``,
        ``dlh.DestQMgrName``: a line elided, a value masked): decoded as null,
        whatever the packed bytes say; ``payload``: no message data at all
        (``payload``, ``payload_length``, ``payload_text`` and ``data_length``
        null). The reader adds the issue saying why.
    network : list of (dict or None), optional
        Per row, the ``network`` column's values (network captures: the keys
        of :data:`dlqlens.decode.schema.NETWORK`); None for other formats.
    start_format : numpy.ndarray of object, shape (n,), optional
        Per row, the 8-character MQ format name of the structure the message
        data starts with when the capture holds no MQMD in front of it (a hex
        dump that starts at an MQDLH, MQXQH, MQTM or MQRFH2); ``""`` (or None
        for the whole attribute) where the walk starts from ``md.Format``. For
        an MQXQH the row's ``md`` is the MQXQH's embedded MQMD.
    open_end : numpy.ndarray of bool, shape (n,), optional
        True where the capture cut the message at a place that says nothing of
        its length (the last column of a screen, a dump's missing lines): the
        message is ``data_truncated`` and a header running past the cut is
        ``header_truncated``, not a bad StrucLength.
    start_encoding, start_ccsid : numpy.ndarray of int32, shape (n,), optional
        The integer encoding and CCSID the leading structure is read in (rows
        with a ``start_format``): what its StrucId and Version show, the
        MQMD that would say it being absent.
    """

    source: str
    capture_format: str
    md_origin: str
    md: np.ndarray
    md_big_endian: np.ndarray
    md_codec: np.ndarray
    md_blank: np.ndarray
    md_version: np.ndarray
    md_valid: np.ndarray
    data: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    data_length: np.ndarray
    message_number: np.ndarray
    source_offset: np.ndarray
    source_line: np.ndarray
    dlh_reconstructed: np.ndarray
    issues: dict[int, list[Issue]] = field(default_factory=dict)
    raw: dict[int, bytes] = field(default_factory=dict)
    data_offset: np.ndarray | None = None
    unknown: dict[int, tuple[str, ...]] = field(default_factory=dict)
    network: list | None = None
    start_format: np.ndarray | None = None
    start_encoding: np.ndarray | None = None
    start_ccsid: np.ndarray | None = None
    open_end: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.message_number)


def labels(n: int, value: str, which: np.ndarray | None = None,
           other: str | None = None) -> np.ndarray:
    """An object array of ``n`` labels (a codec name per row): ``value``
    everywhere, or ``other`` where ``which`` is true. The rows share the
    label objects; nothing is made per row (``np.full`` with an object is
    twenty times slower than filling an empty array).
    """
    if which is None:
        out = np.empty(n, dtype=object)
        out.fill(value)
        return out
    return np.array([value, other], dtype=object)[np.asarray(which, dtype=np.intp)]


class FramesBuilder:
    """Collects messages one at a time (text readers) and builds :class:`Frames`."""

    def __init__(self, source: str, capture_format: str, md_origin: str):
        self.source = source
        self.capture_format = capture_format
        self.md_origin = md_origin
        self._md: list[bytes] = []
        self._be: list[bool] = []
        self._codec: list[str] = []
        self._blank: list[int] = []
        self._version: list[int] = []
        self._valid: list[bool] = []
        self._data: list[bytes] = []
        self._length: list[int] = []
        self._number: list[int] = []
        self._offset: list[int] = []
        self._line: list[int] = []
        self._recon: list[bool] = []
        self.issues: dict[int, list[Issue]] = {}
        self.raw: dict[int, bytes] = {}
        self.unknown: dict[int, tuple[str, ...]] = {}
        self._start: dict[int, tuple[str, int, int]] = {}
        self._open: set[int] = set()

    def __len__(self) -> int:
        return len(self._number)

    def add(self, *, md: bytes | None, big_endian: bool = False, codec: str = "latin-1",
            blank: int = 0x20, version: int = 0, data: bytes = b"",
            data_length: int | None = None, number: int, offset: int = -1,
            line: int = -1, reconstructed: bool = False,
            issues: list[Issue] | None = None, raw: bytes | None = None,
            unknown: tuple[str, ...] = (),
            start: tuple[str, int, int] | None = None, open_end: bool = False) -> int:
        """Append one message; returns its row index.

        ``start`` is ``(format, encoding, ccsid)`` of the structure the data
        starts with when no MQMD announces it (:attr:`Frames.start_format`).
        """
        row = len(self._number)
        valid = md is not None
        md = (md or b"").ljust(MD_SIZE, b"\0")[:MD_SIZE]
        self._md.append(md)
        self._be.append(big_endian)
        self._codec.append(codec)
        self._blank.append(blank)
        self._version.append(version if valid else 0)
        self._valid.append(valid)
        self._data.append(data)
        self._length.append(len(data) if data_length is None else data_length)
        self._number.append(number)
        self._offset.append(offset)
        self._line.append(line)
        self._recon.append(reconstructed)
        if issues:
            self.issues[row] = list(issues)
        if raw is not None:
            self.raw[row] = raw
        if unknown:
            self.unknown[row] = tuple(unknown)
        if start is not None:
            self._start[row] = start
        if open_end:
            self._open.add(row)
        return row

    def build(self) -> Frames:
        n = len(self._number)
        offsets = np.zeros(n + 1, dtype=np.int64)
        if n:
            np.cumsum([len(d) for d in self._data], out=offsets[1:])
        md = np.frombuffer(b"".join(self._md), dtype=np.uint8).reshape(n, MD_SIZE)
        return Frames(
            source=self.source, capture_format=self.capture_format,
            md_origin=self.md_origin, md=md,
            md_big_endian=np.array(self._be, dtype=bool),
            md_codec=np.array(self._codec, dtype=object),
            md_blank=np.array(self._blank, dtype=np.uint8),
            md_version=np.array(self._version, dtype=np.int32),
            md_valid=np.array(self._valid, dtype=bool),
            data=np.frombuffer(b"".join(self._data), dtype=np.uint8),
            starts=offsets[:-1], ends=offsets[1:],
            data_length=np.array(self._length, dtype=np.int64),
            message_number=np.array(self._number, dtype=np.int32),
            source_offset=np.array(self._offset, dtype=np.int64),
            source_line=np.array(self._line, dtype=np.int32),
            dlh_reconstructed=np.array(self._recon, dtype=bool),
            issues=self.issues, raw=self.raw, unknown=self.unknown,
            **self._start_arrays(n),
        )

    def _start_arrays(self, n: int) -> dict:
        out = {}
        if self._open:
            out["open_end"] = np.zeros(n, dtype=bool)
            out["open_end"][sorted(self._open)] = True
        if not self._start:
            return out
        fmt = labels(n, "")
        enc = np.zeros(n, dtype=np.int32)
        ccsid = np.zeros(n, dtype=np.int32)
        for row, (f, e, c) in self._start.items():
            fmt[row], enc[row], ccsid[row] = f.ljust(8)[:8], e, c
        return {**out, "start_format": fmt, "start_encoding": enc, "start_ccsid": ccsid}
