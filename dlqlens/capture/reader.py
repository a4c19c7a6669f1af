"""Reading captures: paths, options, reader modes, and the plain-Python entry point.

The Spark data source (:mod:`dlqlens.spark.source`) and
:func:`read_capture` share everything here: the same options, the same
partitioning, the same per-partition generator of Arrow record batches. Only
the driver differs (Spark tasks, or a loop in this process).
"""

from __future__ import annotations

import datetime as _dt
import glob
import json
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc

from dlqlens.capture.limits import MAX_MESSAGE_BYTES
from dlqlens.capture.slices import Slice
from dlqlens.capture.registry import FORMATS, SNIFF_BYTES, detect_format, get_format
from dlqlens.decode.issues import ISSUE_STATUS, WELL_FORMED
from dlqlens.decode.records import decode_frames
from dlqlens.decode.schema import NARROWABLE, message_schema
from dlqlens.errors import CaptureError, MalformedMessageError, UsageError

MODES = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")


#: The whole-number read options, their :class:`ReadOptions` field and unit.
WHOLE_NUMBER_OPTIONS = {"batchSize": ("batch_size", "messages"),
                        "splitBytes": ("split_bytes", "bytes"),
                        "maxMessageBytes": ("max_message_bytes", "bytes")}


def positive_option(name: str, value, *, source: str = "") -> int:
    """``value`` of the whole-number option ``name`` (a key of
    :data:`WHOLE_NUMBER_OPTIONS`) as an int above 0.

    Raises
    ------
    UsageError
        When it is not a whole number above 0, naming the option, the unit
        and what was found (``source``, such as ``"mqmessages: "``, first).
    """
    try:  # an int, or its digits (Spark options are strings); not 1.5 nor True
        number = value if isinstance(value, int) else int(str(value).strip())
    except ValueError:
        number = 0
    if number < 1 or isinstance(value, bool):
        unit = WHOLE_NUMBER_OPTIONS[name][1]
        raise UsageError(f"{source}option {name}: expected a whole number of {unit} above 0, "
                         f"found {value!r}")
    return number


@dataclass(frozen=True)
class ReadOptions:
    """Options of a capture read, parsed once.

    Attributes
    ----------
    format : str
        ``auto`` (sniff each file) or a name from
        :data:`dlqlens.capture.registry.FORMATS`.
    mode : str
        ``PERMISSIVE`` (default: every framed message is a row, malformed
        ones with ``decode_status`` and ``decode_issues``), ``DROPMALFORMED``
        (malformed rows are dropped and counted) or ``FAILFAST`` (the first
        malformed message raises :class:`~dlqlens.errors.MalformedMessageError`),
        as Spark's own file readers have them.
    batch_size : int
        Messages per Arrow record batch.
    split_bytes : int
        Captures larger than this are split into several partitions at
        message boundaries (bytes).
    split_text : bool
        Split large text captures (dmpmqmsg, amqsbcg) too. Planning then
        reads each one once, on the driver, to count its messages; worth it
        when the pieces are decoded in parallel (Spark; default True there),
        not in one process (:func:`read_capture` sets it False).
    columns : tuple of str or None
        Top-level columns of :func:`dlqlens.decode.schema.message_schema` to
        output, in this order (None: all). Spark's Python data sources have no
        column-pruning hook, so naming the columns an analysis needs is how a
        large read avoids carrying ``raw`` and ``payload`` bytes it never uses.
    max_message_bytes : int
        Largest message data decoded (option ``maxMessageBytes``; default
        IBM MQ's 100 MB, :mod:`dlqlens.capture.limits`). A larger message is
        a ``bad_framing`` row with a ``too_large`` issue, not read into memory.
    fields : tuple or None
        Of the structure columns ``md``, ``dlh`` and ``tm``
        (:data:`dlqlens.decode.schema.NARROWABLE`), only these fields: pairs
        ``(column, (field, ...))``, or a mapping (None: every field). The
        struct then holds those fields only, in the structure's order; the
        MQMD's and MQDLH's character fields not asked for are not decoded.
        What a reader mode or another column reads (the header walk, the
        timestamps, ``reason_name``) is the same whatever is asked.
    """

    format: str = "auto"
    mode: str = "PERMISSIVE"
    batch_size: int = 65536
    split_bytes: int = 64 * 1024 * 1024
    split_text: bool = True
    columns: tuple | None = None
    max_message_bytes: int = MAX_MESSAGE_BYTES
    fields: tuple | None = None

    def __post_init__(self):
        if self.format != "auto":
            get_format(self.format)
        if self.mode.upper() not in MODES:
            raise UsageError(f"unknown mode {self.mode!r}: expected one of {', '.join(MODES)}")
        object.__setattr__(self, "mode", self.mode.upper())
        for name, (field, _) in WHOLE_NUMBER_OPTIONS.items():
            object.__setattr__(self, field, positive_option(name, getattr(self, field)))
        if self.columns is not None:
            cols = self.columns
            if isinstance(cols, str):
                cols = [c.strip() for c in cols.split(",") if c.strip()]
            cols = tuple(cols)
            known = message_schema().names
            unknown = [c for c in cols if c not in known]
            if unknown or not cols:
                raise UsageError(f"columns: {', '.join(unknown) or 'none given'}: expected "
                                 f"names from {', '.join(known)}")
            if len(set(cols)) != len(cols):
                raise UsageError(f"columns: a column is named twice in {', '.join(cols)}")
            object.__setattr__(self, "columns", None if cols == tuple(known) else cols)
        if self.fields is not None:
            object.__setattr__(self, "fields", _struct_fields(self.fields))

    @property
    def field_map(self) -> dict[str, tuple[str, ...]] | None:
        """:attr:`fields` as a mapping (None: every field of every structure)."""
        return dict(self.fields) if self.fields else None

    @classmethod
    def from_options(cls, options: dict) -> "ReadOptions":
        """Parse Spark-style options (case-insensitive keys, string values).

        Raises
        ------
        UsageError
            For an unknown option or a value that does not parse.
        """
        known = {"format": "format", "mode": "mode", "batchsize": "batch_size",
                 "splitbytes": "split_bytes", "splittext": "split_text", "columns": "columns",
                 "maxmessagebytes": "max_message_bytes"}
        kwargs = {}
        for k, v in options.items():
            key = k.lower()
            if key in ("path", "paths"):
                continue
            if key not in known:
                raise UsageError(f"unknown option {k!r}: expected one of "
                                 f"{', '.join(['format', 'mode', 'batchSize', 'splitBytes', 'splitText', 'columns', 'maxMessageBytes'])}")
            name = known[key]
            # whole numbers arrive as text: __post_init__ parses them (positive_option)
            if name == "split_text" and not isinstance(v, bool):
                if str(v).lower() not in ("true", "false"):
                    raise UsageError(f"option {k}: expected true or false, found {v!r}")
                v = str(v).lower() == "true"
            kwargs[name] = v
        return cls(**kwargs)


def _struct_fields(fields) -> tuple | None:
    """:attr:`ReadOptions.fields` checked and in a canonical form: pairs in
    :data:`~dlqlens.decode.schema.NARROWABLE` order, each struct's fields in
    its order, a struct asked whole left out (None when none is left).

    Raises
    ------
    UsageError
        For a column that cannot be narrowed, or a field it does not have.
    """
    given = dict(fields.items() if hasattr(fields, "items") else fields)
    schema = message_schema()
    out = []
    for column in given:
        if column not in NARROWABLE:
            raise UsageError(f"fields: {column!r} cannot be narrowed: expected one of "
                             f"{', '.join(NARROWABLE)}")
    for column in NARROWABLE:
        if column not in given:
            continue
        names = given[column]
        names = {names} if isinstance(names, str) else set(names)
        struct = [f.name for f in schema.field(column).type]
        unknown = sorted(names - set(struct))
        if unknown or not names:
            raise UsageError(f"fields: {column} has no field {', '.join(unknown) or '(none given)'}"
                             f": expected names from {', '.join(struct)}")
        if len(names) < len(struct):
            out.append((column, tuple(f for f in struct if f in names)))
    return tuple(out) or None


def expand_paths(paths) -> list[str]:
    """Files named by ``paths``: files as given, directories' files (sorted,
    recursively, hidden files skipped), glob patterns expanded.

    Raises
    ------
    CaptureError
        When a path does not exist or a pattern matches nothing.
    """
    return [p for p, _ in _expand(paths)]


def _expand(paths, root: str | None = None) -> list[tuple[str, bool]]:
    """``(file, named)`` pairs: ``named`` is False for files found in a directory.

    With ``root``, relative paths are looked up under ``root`` (not the
    working directory) and their files keep relative names, as if the
    working directory were ``root``.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[tuple[str, bool]] = []
    for p in paths:
        p = os.fspath(p)
        full = _under(root, p)
        found: list[tuple[str, bool]] = []
        if os.path.isdir(full):
            for top, dirs, files in os.walk(full):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend((os.path.join(top, f), False) for f in sorted(files)
                             if not f.startswith("."))
        elif os.path.exists(full):
            found.append((full, True))
        elif glob.has_magic(p):  # (relative to root: matched there, named as given)
            hits = sorted(glob.glob(p, root_dir=root if full != p else None))
            if not hits:
                raise CaptureError(f"{p}: no file matches this pattern")
            out.extend((h, True) for h in hits if os.path.isfile(_under(root, h)))
            continue
        else:
            raise CaptureError(f"{p}: no such file or directory")
        if full != p:  # a relative path under root: names as given (the prefix taken off)
            cut = len(full) - len(p)
            found = [(f[cut:], named) for f, named in found]
        out.extend(found)
    return out


def _under(root: str | None, path: str) -> str:
    """``path`` looked up under ``root`` when it is relative and a root is given."""
    return path if not root or os.path.isabs(path) else os.path.join(root, path)


@dataclass(frozen=True)
class Piece:
    """One unit of work: a capture format and a :class:`~dlqlens.capture.slices.Slice`
    (a whole file, or a byte range of a large one)."""

    format: str
    slice: Slice
    #: the format was named by the caller (not recognised from the file)
    forced: bool = False
    #: the directory a relative :attr:`path` is opened under (None: the working
    #: directory of the process reading it); set when the pieces are read by
    #: other processes than the one that planned them (Spark executors)
    root: str | None = None

    @property
    def path(self) -> str:
        """The file's name as given (the ``source`` column of its rows)."""
        return self.slice.path

    @property
    def file(self) -> str:
        """The path to open: :attr:`path`, under :attr:`root` when relative."""
        return _under(self.root, self.slice.path)


def captured_queues(pieces) -> dict[str, tuple[str | None, str]]:
    """Where each capture file says it was taken from.

    Parameters
    ----------
    pieces : iterable of Piece
        From :func:`plan_pieces`; the first
        :data:`~dlqlens.capture.registry.SNIFF_BYTES` of each file are read once.

    Returns
    -------
    dict of str to (str or None, str)
        ``source`` (the file's path, as the readers record it) -> ``(queue
        manager, queue)``, for the files whose banner names a queue:
        dmpmqmsg's ``* Qmgr  =`` and ``* Queue =`` lines, amqsbcg's ``MQOPEN -
        'name'`` line (no queue manager: None). Raw captures and files
        without such a line are left out. This is the ``capture_queues``
        argument of the detectors (:mod:`dlqlens.detect.common`).

    Raises
    ------
    CaptureError
        When a file cannot be read.
    """
    out: dict[str, tuple[str | None, str]] = {}
    seen = set()
    for piece in pieces:
        spec = FORMATS.get(piece.format)
        if spec is None or piece.path in seen:  # (empty or skipped; or a later slice)
            continue
        seen.add(piece.path)
        try:
            with open(piece.file, "rb") as fh:
                head = fh.read(SNIFF_BYTES)
        except OSError as exc:
            raise CaptureError(f"{piece.path}: cannot open: {exc.strerror or exc}") from exc
        qmgr, queue = spec.banner(head)
        if queue:
            out[piece.path] = (qmgr, queue)
    return out


def to_utc(value) -> _dt.datetime:
    """``value`` (datetime or ISO 8601 string, ``Z`` or an offset: UTC; naive:
    UTC already) as a naive UTC datetime.

    Raises
    ------
    ValueError
        When a string is not ISO 8601.
    """
    if isinstance(value, str):
        value = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is not None:
        value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return value


def captured_times(pieces) -> dict:
    """When each capture file says it was written: the ``Created:`` time of
    dmpmqmsg's banner (:func:`dlqlens.capture.dmpmqmsg.created`), as a naive
    datetime taken as UTC, by ``source`` (the file's path, as the readers
    record it). Files of other formats and dumps without the banner are left
    out. This is the ``capture_time`` mapping of the detectors
    (:func:`dlqlens.detect.common.capture_time_column`).

    Raises
    ------
    CaptureError
        When a file cannot be read.
    """
    from dlqlens.capture.dmpmqmsg import created

    out: dict = {}
    for piece in pieces:
        if piece.format != "dmpmqmsg" or piece.path in out:
            continue
        try:
            with open(piece.file, "rb") as fh:
                head = fh.read(SNIFF_BYTES)
        except OSError as exc:
            raise CaptureError(f"{piece.path}: cannot open: {exc.strerror or exc}") from exc
        when = created(head)
        if when is not None:
            out[piece.path] = when
    return out


def plan_pieces(paths, options: ReadOptions, root: str | None = None) -> list[Piece]:
    """The pieces to read: one per file, large captures split.

    Raw captures larger than ``options.split_bytes`` are split through
    their offset index. Text captures are split too when
    ``options.split_text`` is set: planning then reads each large text file
    once to count the messages before each cut (their numbers must run on
    across the pieces), so it pays only when the pieces are read in
    parallel.

    A file's slices are kept in the process while the file is unchanged
    (:func:`_file_slices`): planned again, it is not read again for it.

    Empty files become a piece of format ``empty`` (they yield no rows).
    With ``format="auto"``, a file found inside a named directory whose
    format is unknown (a README, a golden file) becomes a ``skipped`` piece;
    a file named explicitly must be a capture.

    ``root`` (an absolute directory) is where relative paths are looked up
    instead of the working directory: ``load_capture`` (and the Spark data
    source) plans with the driver's working directory as ``root`` and the
    pieces carry it, so an executor whose working directory is elsewhere (a
    standalone worker's ``work/`` directory) opens the same files
    (:attr:`Piece.file`), while every piece keeps the path as given
    (:attr:`Piece.path`, the ``source`` column).

    Raises
    ------
    CaptureError
        A named path is missing or a named file is in no known format.
    """
    pieces = []
    for path, named in _expand(paths, root):
        file = _under(root, path)
        if os.path.getsize(file) == 0:
            pieces.append(Piece("empty", Slice(path), root=root))
            continue
        if options.format == "auto":
            try:
                fmt = detect_format(file)
            except CaptureError:
                if named:
                    raise
                pieces.append(Piece("skipped", Slice(path), root=root))
                continue
        else:
            fmt = get_format(options.format).name
        spec = FORMATS[fmt]
        forced = options.format != "auto"
        if spec.plan_reads and not options.split_text:
            pieces.append(Piece(fmt, Slice(path), forced, root))
            continue
        slices = _file_slices(spec, file, options.split_bytes, options.max_message_bytes)
        pieces.extend(Piece(fmt, replace(s, path=path), forced, root) for s in slices)
    return pieces


#: Slices of the files planned so far in this process (:func:`_file_slices`),
#: at most this many files' worth.
_PLANNED_FILES = 256
_planned: dict[tuple, tuple] = {}


def _file_slices(spec, file: str, split_bytes: int, max_message_bytes: int) -> tuple:
    """``spec.plan(file, ...)``, remembered while the file is unchanged.

    Planning a large text capture reads it whole to count its messages
    (about 1.3 s for 200,000 amqsbcg messages), and a command plans its
    captures before Spark starts, then loads them (:func:`plan_pieces`
    again); a notebook loads the same files again and again. The slices are
    kept under the file's identity and state (real path, device, inode,
    size, modification and change times in nanoseconds): a file written
    since, appended to or replaced is planned again.
    """
    st = os.stat(file)
    key = (spec.name, os.path.realpath(file), st.st_dev, st.st_ino, st.st_size,
           st.st_mtime_ns, st.st_ctime_ns, split_bytes, max_message_bytes)
    slices = _planned.get(key)
    if slices is None:
        slices = tuple(spec.plan(file, split_bytes, max_message_bytes=max_message_bytes))
        while len(_planned) >= _PLANNED_FILES:
            _planned.pop(next(iter(_planned)), None)
        _planned[key] = slices
    return slices


@dataclass
class ReadStats:
    """What a read framed, kept and dropped.

    ``framed == rows + dropped`` always holds.
    """

    framed: int = 0
    rows: int = 0
    dropped: int = 0
    dropped_by_status: Counter = field(default_factory=Counter)
    files: int = 0
    empty_files: list[str] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)

    def add(self, other: "ReadStats") -> None:
        self.framed += other.framed
        self.rows += other.rows
        self.dropped += other.dropped
        self.dropped_by_status.update(other.dropped_by_status)
        self.files += other.files
        self.empty_files.extend(other.empty_files)
        self.skipped_files.extend(other.skipped_files)


def read_piece(piece: Piece, options: ReadOptions,
               stats: ReadStats | None = None) -> Iterator[pa.RecordBatch]:
    """Decode one piece into record batches, applying the reader mode.

    Raises
    ------
    MalformedMessageError
        In ``FAILFAST`` mode, at the first malformed message.
    CaptureError
        When the file cannot be read at all.
    """
    stats = stats if stats is not None else ReadStats()
    if piece.format == "skipped":
        stats.skipped_files.append(piece.path)
        return
    stats.files += 1
    if piece.format == "empty":
        stats.empty_files.append(piece.path)
        return
    frames = FORMATS[piece.format].read(piece.file, source=piece.path,
                                        batch_size=options.batch_size,
                                        piece=piece.slice,
                                        max_message_bytes=options.max_message_bytes)
    need = None
    if options.columns is not None:  # decode only what is asked for (and what modes read)
        need = set(options.columns)
        if options.mode != "PERMISSIVE":
            need |= {"decode_status", "decode_issues", "source", "message_number"}
    framed_before = stats.framed
    for fr in frames:
        batch = decode_frames(fr, columns=need, fields=options.field_map)
        stats.framed += batch.num_rows
        if options.mode == "PERMISSIVE":
            stats.rows += batch.num_rows
            yield batch if options.columns is None else batch.select(list(options.columns))
            continue
        good = pc.is_in(batch.column("decode_status"), value_set=pa.array(sorted(WELL_FORMED)))
        if options.mode == "FAILFAST" and not pc.all(good).as_py():
            bad = batch.filter(pc.invert(good)).slice(0, 1).to_pylist()[0]
            # the issue that made the message malformed, not a warning before it
            first = next((i for i in bad["decode_issues"]
                          if ISSUE_STATUS.get(i["code"]) == bad["decode_status"]), None) or {
                "message": f"{bad['source']}: message {bad['message_number']}: "
                           f"{bad['decode_status']}"}
            raise MalformedMessageError(
                {"source": bad["source"], "message_number": bad["message_number"], **first})
        kept = batch.filter(good)
        dropped = batch.filter(pc.invert(good))
        stats.rows += kept.num_rows
        stats.dropped += dropped.num_rows
        stats.dropped_by_status.update(dropped.column("decode_status").to_pylist())
        if kept.num_rows:
            yield kept if options.columns is None else kept.select(list(options.columns))
    if piece.forced and stats.framed == framed_before and piece.slice.start is None:
        _refuse_forced(piece)


#: What each format's files hold, for the error on a forced format that frames nothing.
_LOOKS_LIKE = {
    "dmpmqmsg": "dmpmqmsg lines ('A VER 2', 'A FMT MQDEAD', then 'X 444C4820...')",
    "amqsbcg": "amqsbcg output (' MQGET of message number 1', '****Message descriptor****', "
               "descriptor lines and a hex dump)",
    "raw": "a dlqlens raw capture or an MQMD",
    "pcap": "a pcap (a1b2c3d4) or pcapng (0a0d0d0a) capture of MQ client traffic",
}


def _refuse_forced(piece: Piece) -> None:
    """A file read as a format the caller named that framed no message: an
    error, unless the file looks like that format (an empty queue's dump)."""
    spec = FORMATS[piece.format]
    try:
        with open(piece.file, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError as exc:
        raise CaptureError(f"{piece.path}: cannot open: {exc.strerror or exc}") from exc
    if spec.sniff(head):
        return  # the format's own shape, holding no message
    raise CaptureError(
        f"{piece.path}: read as {piece.format} (format named): no message framed: expected "
        f"{_LOOKS_LIKE.get(piece.format, piece.format)}, found {head[:48]!r}")


@dataclass
class CaptureResult:
    """The decoded messages of a plain-Python read, and the read's counts.

    Attributes
    ----------
    table : pyarrow.Table
        One row per message kept, with :func:`dlqlens.decode.schema.message_schema`.
    stats : ReadStats
    """

    table: pa.Table
    stats: ReadStats

    def to_pandas(self):
        """The messages as a pandas DataFrame (struct columns become dicts)."""
        return self.table.to_pandas()

    def __len__(self) -> int:
        return self.table.num_rows


def read_capture(paths, format: str = "auto", mode: str = "PERMISSIVE",
                 batch_size: int = 65536, columns=None,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> CaptureResult:
    """Decode captures in this process, without Spark (small captures).

    Parameters
    ----------
    paths : str, path-like or list of them
        Files, directories (read recursively) or glob patterns.
    format : str
        ``auto`` or ``raw``, ``dmpmqmsg``, ``amqsbcg``.
    mode : str
        ``PERMISSIVE``, ``DROPMALFORMED`` or ``FAILFAST`` (see :class:`ReadOptions`).
    batch_size : int
        Messages per record batch.
    columns : list of str, optional
        Only these top-level columns, in this order (default: all).
    max_message_bytes : int
        Largest message data decoded (:class:`ReadOptions`).

    Returns
    -------
    CaptureResult
        ``result.table`` has the columns of
        :func:`dlqlens.decode.schema.message_schema` (or ``columns``); ``result.stats`` the
        counts (``framed == rows + dropped``).

    Raises
    ------
    CaptureError
        A path does not exist, cannot be read or is in no known format.
    MalformedMessageError
        ``FAILFAST`` and a malformed message.
    UsageError
        Unknown format or mode.
    """
    options = ReadOptions(format=format, mode=mode, batch_size=batch_size, split_text=False,
                          columns=None if columns is None else tuple(columns),
                          max_message_bytes=max_message_bytes)
    stats = ReadStats()
    batches = []
    for piece in plan_pieces(paths, options):
        batches.extend(read_piece(piece, options, stats))
    schema = message_schema()
    if options.columns is not None:
        schema = pa.schema([schema.field(c) for c in options.columns])
    table = pa.Table.from_batches(batches, schema=schema)
    return CaptureResult(table, stats)


def paths_from_options(options: dict) -> list[str]:
    """The paths a Spark ``load()`` passed in its options (``path`` or ``paths``)."""
    if "paths" in options and options["paths"]:
        return list(json.loads(options["paths"]))
    if "path" in options and options["path"]:
        return [options["path"]]
    raise UsageError("no path given: use load(path) or load([path, ...])")
