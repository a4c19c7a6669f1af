"""Parquet in and out: decoded messages and analysis results as Parquet directories.

A capture is decoded once (``dlqlens decode CAPTURE... --to DIR``,
:func:`write_messages`) and analysed many times from the directory: every
command and :func:`dlqlens.spark.load_capture` accept it wherever a capture
path is accepted (:func:`load_messages`). Layout of a messages directory::

    DIR/_dlqlens.json                                  the marker (written last)
    DIR/capture=NAME/dlh_put_date=YYYY-MM-DD/part-*.parquet
    DIR/capture=NAME/dlh_put_date=__HIVE_DEFAULT_PARTITION__/part-*.parquet

``capture`` is a sanitised name of the capture file (:func:`capture_names`:
its base name, characters other than ``A-Z a-z 0-9 . _ -`` replaced by
``_``, a hash of the full path added when two files would share a name);
message content never becomes a path. ``dlh_put_date`` is the UTC date of
``dlh_put_ts`` (the MQDLH's ``PutDate`` and ``PutTime``: when the message
was put on the dead-letter queue); a message without a usable MQDLH put time
goes to Spark's null partition ``__HIVE_DEFAULT_PARTITION__`` (the put date
is unknown). The rows keep every column of
:func:`dlqlens.decode.schema.message_schema` unchanged, ``source`` and
``message_number`` included, so findings and explanations name the original
file and message; the partition columns are left out on reading.

The marker ``_dlqlens.json`` holds ``kind`` (``messages`` or ``results``),
the dlqlens version, the Spark schema (JSON, with each field's metadata:
its description, and for MQ structure fields the MQ type and length) and,
per source, its capture name, format, message count, malformed count, the
first malformed message and the queue and capture time its banner named;
for captures decoded from a ``dlqlens simulate`` directory, ``manifests``
keeps what its ``manifest.json`` said of each capture (queue manager, queue,
capture time). It is written after Spark's write succeeded, so a directory without it (a
write that failed half-way, or Parquet dlqlens did not write) is refused.

Paths are local or shared file-system paths that the driver and every
executor see (as the captures themselves).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass

from dlqlens.capture.reader import to_utc
from dlqlens.errors import UsageError
from dlqlens.spark.columns import literal_map
from dlqlens.spark.schema import described_schema

#: The marker file of a directory dlqlens wrote (its name starts with ``_``:
#: Spark's Parquet reader leaves it out).
MARKER = "_dlqlens.json"
#: Version of the layout and of the marker's keys.
LAYOUT_VERSION = 1
#: The partition columns of a messages directory, outer first.
PARTITION_COLUMNS = ("capture", "dlh_put_date")
#: The partition directory value of a null ``dlh_put_date`` (Spark's and Hive's name).
UNKNOWN_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: Longest capture name kept (characters) before the hash.
MAX_NAME = 100

#: Most messages in one Parquet file of a messages directory (the write's
#: ``maxRecordsPerFile``), and most messages read together in one scan
#: (:func:`read_groups`): a read partition never holds more, whatever the
#: session's ``spark.sql.files.*`` settings (docs/scale.md, "Parquet in and out").
READ_ROWS = 50_000
#: Most uncompressed bytes (as Parquet's footers count them, before snappy,
#: after dictionary encoding) read together in one scan.
READ_BYTES = 64 * 2**20

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def capture_names(sources) -> dict[str, str]:
    """The partition name of each capture file: safe as one path component.

    Parameters
    ----------
    sources : iterable of str
        ``source`` values (capture paths as the readers record them).

    Returns
    -------
    dict of str to str
        ``source`` -> name: the base name with every character outside
        ``A-Z a-z 0-9 . _ -`` replaced by ``_`` (at most :data:`MAX_NAME`
        characters; ``.`` and ``..`` become ``_``); when two sources would get the same name,
        each gets ``-`` and the first 8 hex digits of the SHA-256 of its full
        path appended.
    """
    base = {}
    for s in sorted(set(sources)):
        name = _UNSAFE.sub("_", os.path.basename(s.rstrip("/\\")) or "capture")[:MAX_NAME]
        base[s] = "_" if name in ("", ".", "..") else name
    seen: dict[str, int] = {}
    for name in base.values():
        seen[name] = seen.get(name, 0) + 1
    return {s: (f"{n}-{hashlib.sha256(s.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"
                if seen[n] > 1 else n) for s, n in base.items()}


class MessageInput(list):
    """A messages directory given where captures are accepted: its sources.

    A list of :class:`SourceEntry` (one per capture file the directories
    hold, as planned pieces are one per file), with ``directories``, the
    ``markers`` read, and the banners' ``queues`` and ``times`` (the
    ``capture_queues`` and ``capture_time`` of the detectors).
    """

    def __init__(self, directories, markers):
        super().__init__(SourceEntry(s["source"], s.get("format"), s)
                         for m in markers for s in m["sources"])
        self.directories = list(directories)
        self.markers = list(markers)

    @property
    def queues(self) -> dict:
        """``source`` -> ``(queue manager or None, queue)`` from the banners."""
        return {e.path: (e.info.get("queue_manager"), e.info["queue"])
                for e in self if e.info.get("queue")}

    @property
    def manifests(self) -> dict:
        """``source`` -> ``{"qmgr", "queue", "captured_at"}``: what the manifest of a
        simulator directory said of each capture it listed (the markers'
        ``manifests``; empty for directories decoded from other captures)."""
        return {s: dict(m) for marker in self.markers
                for s, m in (marker.get("manifests") or {}).items() if isinstance(m, dict)}

    @property
    def times(self) -> dict:
        """``source`` -> the banner's creation time (naive UTC datetime)."""
        return {e.path: to_utc(e.info["created"]) for e in self if e.info.get("created")}


@dataclass
class SourceEntry:
    """One capture file of a messages directory (``path`` is its ``source``)."""

    path: str
    format: str | None
    info: dict


def read_marker(directory) -> dict:
    """The marker of a directory dlqlens wrote.

    Raises
    ------
    dlqlens.errors.UsageError
        When ``directory`` has no :data:`MARKER` (naming what it found
        instead), or the marker is not JSON of a known layout version; for a
        messages directory, when its ``sources`` are not objects with a
        ``source``, or a source's ``created`` (the banner's creation time) is
        neither null nor an ISO 8601 text.
    """
    from dlqlens.safe import one_line

    d = os.fspath(directory)
    path = os.path.join(d, MARKER)
    try:
        with open(path, encoding="utf-8") as fh:
            marker = json.load(fh)
    except FileNotFoundError:
        raise UsageError(
            f"{one_line(d)}: not a directory dlqlens wrote: no {MARKER} in it (it is written "
            "last by 'dlqlens decode --to' and '--to' of the analyses; a write that failed "
            "half-way leaves none: write the directory again)") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{one_line(path)}: cannot read the marker: "
                         f"{one_line(str(exc))}") from None
    layout = marker.get("layout") if isinstance(marker, dict) else marker
    if layout != LAYOUT_VERSION:
        raise UsageError(f"{one_line(path)}: expected layout {LAYOUT_VERSION} of a dlqlens "
                         f"directory, found {one_line(repr(layout))}")
    sources = marker.get("sources")
    if marker.get("kind") == "messages" and not (
            isinstance(sources, list)
            and all(isinstance(x, dict) and isinstance(x.get("source"), str) for x in sources)):
        raise UsageError(f"{one_line(path)}: sources: expected a list of objects with a "
                         f"source, found {one_line(repr(sources)[:80])}")
    for entry in sources if isinstance(sources, list) else ():
        created = entry.get("created") if isinstance(entry, dict) else None
        if created is None:
            continue
        try:
            to_utc(created)
        except (TypeError, ValueError, AttributeError):
            raise UsageError(
                f"{one_line(path)}: source {one_line(repr(entry.get('source')))}: created: "
                "expected the banner's creation time as an ISO 8601 text (or null), found "
                f"{one_line(repr(created)[:80])}") from None
    return marker


def _looks_like_parquet(d: str) -> bool:
    try:
        names = os.listdir(d)
    except OSError:
        return False
    return any(n == "_SUCCESS" or n.endswith(".parquet") or n.startswith("capture=")
               for n in names)


def message_input(paths) -> MessageInput | None:
    """The messages directories among ``paths``, before any JVM starts.

    Parameters
    ----------
    paths : str or list of str
        What a command was given as captures.

    Returns
    -------
    MessageInput or None
        None when no path is a directory with a :data:`MARKER` (they are
        captures); else the directories' sources.

    Raises
    ------
    dlqlens.errors.UsageError
        When messages directories are mixed with captures in one call, when
        a directory holds results rather than messages, when two
        directories hold the same source, or when a directory holds Parquet
        without the marker.
    """
    from dlqlens.safe import one_line

    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    given = [os.fspath(p) for p in given]
    marked = [p for p in given if os.path.isdir(p) and os.path.isfile(os.path.join(p, MARKER))]
    for p in given:
        if p not in marked and os.path.isdir(p) and _looks_like_parquet(p):
            read_marker(p)  # raises: Parquet without the marker
    if not marked:
        return None
    if len(marked) != len(given):
        others = [p for p in given if p not in marked]
        raise UsageError(
            f"{one_line(marked[0])} is a Parquet directory of decoded messages and "
            f"{one_line(others[0])} is not: give either captures or such directories in one "
            "call (decode the captures with 'dlqlens decode ... --to DIR' first)")
    markers = []
    for p in marked:
        m = read_marker(p)
        if m.get("kind") != "messages":
            raise UsageError(f"{one_line(p)}: holds dlqlens results "
                             f"({one_line(str(m.get('kind')))}), not decoded messages "
                             "('dlqlens decode CAPTURE... --to DIR' writes those)")
        markers.append(m)
    got = MessageInput(directories=marked, markers=markers)
    seen: dict[str, str] = {}
    for d, m in zip(marked, markers):
        for s in m["sources"]:
            if s["source"] in seen:
                raise UsageError(f"{one_line(s['source'])} is in both "
                                 f"{one_line(seen[s['source']])} and {one_line(d)}: "
                                 "give each capture once")
            seen[s["source"]] = d
    return got


def refuse_failfast(found: MessageInput) -> None:
    """``FAILFAST`` on a messages directory: refuse when it holds a malformed message.

    Raises
    ------
    dlqlens.errors.MalformedMessageError
        Naming the source and number of the first malformed message.
    """
    from dlqlens.errors import MalformedMessageError

    for e in found:
        first = e.info.get("first_malformed")
        if first:
            n = first["message_number"]
            raise MalformedMessageError({
                "source": e.path, "message_number": n,
                "message": f"{e.path}: message {n}: {first['decode_status']} (FAILFAST; the "
                           f"directory keeps it: 'dlqlens explain DIR -m {n}' says why; "
                           "--mode PERMISSIVE or DROPMALFORMED reads the directory)"})


def load_messages(spark, found, columns=None, mode: str = "PERMISSIVE"):
    """Read messages directories as a capture DataFrame.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        Left as it is (nothing is configured); the ``mqmessages`` source is
        registered on it when the read needs it.
    found : MessageInput or str
        From :func:`message_input`, or one directory.
    columns : list of str, optional
        Only these top-level columns (Parquet reads only them).
    mode : str
        ``PERMISSIVE`` (every row), ``DROPMALFORMED`` (rows whose
        ``decode_status`` is ``ok`` or ``truncated``) or ``FAILFAST``
        (refused when the marker counts a malformed message).

    Returns
    -------
    pyspark.sql.DataFrame
        The columns of :func:`described_schema` (or ``columns``), in its
        order, with their metadata; the rows as decoded, in no set order.

    Raises
    ------
    dlqlens.errors.UsageError
        For a bad directory (:func:`message_input`) or column name.
    dlqlens.errors.MalformedMessageError
        In ``FAILFAST`` mode on a directory with a malformed message.

    Notes
    -----
    A directory whose files make one :func:`read_groups` group (up to
    :data:`READ_ROWS` messages) is one Parquet scan of Spark's own. Larger
    ones, and more than one directory, are one relation, one partition per
    group, read with pyarrow in the Python workers
    (:func:`dlqlens.spark.source.read_files`: ``mapInArrow`` over the groups
    planned here on a classic session, the ``mqmessages`` source,
    :class:`dlqlens.spark.source.MQMessagesDataSource`, over Spark Connect):
    bounded partitions on any session, and a plan of one relation whatever
    the number of files (docs/scale.md, "Read partitions").
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import DateType, StringType, StructField, StructType

    from dlqlens.decode.issues import WELL_FORMED

    if not isinstance(found, MessageInput):
        found = message_input(found)
        if found is None:
            raise UsageError("not a Parquet directory of decoded messages")
    schema = described_schema()
    if columns is not None:
        unknown = [c for c in columns if c not in schema.fieldNames()]
        if unknown:
            raise UsageError(f"column(s) {', '.join(unknown)} do not exist; expected names from "
                             f"{', '.join(schema.fieldNames())}")
    mode = mode.upper()
    if mode == "FAILFAST":
        refuse_failfast(found)
    names = list(columns) if columns is not None else schema.fieldNames()
    groups = message_groups(found)
    if len(groups) <= 1 and len(found.directories) == 1:
        # one scan of Spark's own (it packs the directory's files, a group at most)
        full = StructType(schema.fields + [StructField("capture", StringType()),
                                           StructField("dlh_put_date", DateType())])
        df = spark.read.schema(full).parquet(found.directories[0])
    else:
        # one relation, one partition per group, whatever the number of groups and
        # directories: planned here on a classic session (the mqmessages source would plan
        # again, in two Python processes, at every query), by the source over Spark Connect
        from dlqlens.spark.source import (FilesReader, classic, executors_frame,
                                          register_sources)

        read = names + ["decode_status"] if mode == "DROPMALFORMED" and \
            "decode_status" not in names else names
        want = StructType([schema[c] for c in read])
        if classic(spark):
            df = executors_frame(spark, FilesReader(groups, read), len(groups), want)
            if read == names:  # the read itself (dlqlens.spark.source.narrowed reads less of it)
                return df
        else:
            register_sources(spark)
            df = (spark.read.format("mqmessages").schema(want)
                  .option("groups", json.dumps(groups)).load())
    if mode == "DROPMALFORMED":
        df = df.filter(F.col("decode_status").isin(sorted(WELL_FORMED)))
    return df.select(*names)


def message_groups(found: MessageInput) -> list[list[str]]:
    """The read groups (:func:`read_groups`) of messages directories, each a
    list of absolute paths of Parquet files: the partitions
    :func:`load_messages` reads. The files are those the marker lists as
    written (listed now for a directory written before the marker did)."""
    return [[os.path.abspath(os.path.join(d, *p.split("/"))) for p in group]
            for d, marker in zip(found.directories, found.markers)
            for group in read_groups(_checked_files(d, marker["files"]) if "files" in marker
                                     else parquet_files(d))]


def parquet_files(directory) -> list[dict]:
    """The Parquet files of a directory dlqlens wrote, from their footers (no Spark).

    Parameters
    ----------
    directory : str
        A messages or results directory.

    Returns
    -------
    list of dict
        One per data file (names starting with ``_`` or ``.`` left out, as
        Spark does), sorted by path: ``path`` (relative to ``directory``,
        ``/``-separated), ``rows`` (messages) and ``bytes`` (the row groups'
        ``total_byte_size``: uncompressed bytes).
    """
    import pyarrow.parquet as pq

    d = os.fspath(directory)
    out = []
    for root, dirs, files in os.walk(d):
        dirs[:] = sorted(x for x in dirs if not x.startswith(("_", ".")))
        for name in sorted(files):
            if name.startswith(("_", ".")) or not name.endswith(".parquet"):
                continue
            path = os.path.join(root, name)
            meta = pq.read_metadata(path)
            out.append({"path": os.path.relpath(path, d).replace(os.sep, "/"),
                        "rows": meta.num_rows,
                        "bytes": sum(meta.row_group(i).total_byte_size
                                     for i in range(meta.num_row_groups))})
    return sorted(out, key=lambda f: f["path"])


def read_groups(files, rows: int | None = None, nbytes: int | None = None) -> list[list[str]]:
    """Files read together, each group at most ``rows`` messages and ``nbytes``
    uncompressed bytes (a file over either limit alone).

    Spark packs small files into one read partition up to
    ``spark.sql.files.maxPartitionBytes`` of *compressed* bytes (its default
    128 MB, at least ``openCostInBytes``), so a directory whose files compress
    well (24 MB for a million messages) is read in as few partitions as the
    session has cores, each of hundreds of thousands of rows. Each group is
    one partition of the ``mqmessages`` source
    (:class:`dlqlens.spark.source.MQMessagesDataSource`, used by
    :func:`load_messages` when there is more than one group), so no partition
    spans two groups, whatever the session's settings.

    Parameters
    ----------
    files : list of dict
        :func:`parquet_files` (``path``, ``rows``, ``bytes``).
    rows, nbytes : int, optional
        The limits (default :data:`READ_ROWS` and :data:`READ_BYTES`).

    Returns
    -------
    list of list of str
        The files' paths, in order, grouped.
    """
    rows = READ_ROWS if rows is None else rows
    nbytes = READ_BYTES if nbytes is None else nbytes
    groups: list[list[str]] = []
    n = b = 0
    for f in files:
        if not groups or n + f["rows"] > rows or b + f["bytes"] > nbytes:
            groups.append([])
            n = b = 0
        groups[-1].append(f["path"])
        n += f["rows"]
        b += f["bytes"]
    return groups


def _checked_files(directory: str, files) -> list[dict]:
    """The marker's ``files``, each a relative path inside ``directory`` with whole-number
    ``rows`` and ``bytes`` (else a UsageError naming the marker: a marker is input too)."""
    from dlqlens.safe import one_line

    ok = isinstance(files, list)
    for f in files if ok else ():
        p = f.get("path") if isinstance(f, dict) else None
        if not (isinstance(p, str) and p and not p.startswith("/") and "\\" not in p
                and all(x not in ("", ".", "..") for x in p.split("/"))
                and all(isinstance(f.get(k), int) and not isinstance(f.get(k), bool)
                        and f[k] >= 0 for k in ("rows", "bytes"))):
            ok = False
            break
    if not ok:
        raise UsageError(f"{one_line(os.path.join(directory, MARKER))}: files: expected a list "
                         "of objects with a relative path inside the directory, rows and bytes, "
                         f"found {one_line(repr(files)[:80])}")
    return files


def check_out_dir(directory) -> str:
    """The absolute path of a ``--to`` directory, checked before any JVM starts.

    Raises
    ------
    dlqlens.errors.UsageError
        When it exists and is not an empty directory (nothing is
        overwritten), or its parent directory does not exist.
    """
    from dlqlens.safe import one_line

    d = os.path.abspath(os.fspath(directory))
    if os.path.exists(d) and not (os.path.isdir(d) and not os.listdir(d)):
        raise UsageError(f"--to {one_line(os.fspath(directory))}: exists and is not an empty "
                         "directory (nothing is overwritten: name a new directory)")
    if not os.path.isdir(os.path.dirname(d)):
        raise UsageError(f"--to {one_line(os.fspath(directory))}: no such directory "
                         f"{one_line(os.path.dirname(d))}")
    return d


def _write_marker(directory: str, marker: dict) -> None:
    tmp = os.path.join(directory, MARKER + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(marker, fh, indent=1, sort_keys=True, default=str)
    os.replace(tmp, os.path.join(directory, MARKER))


def write_messages(df, directory, *, sources=None, capture_queues=None,
                   capture_times=None, manifests=None) -> dict:
    """Write capture rows as a messages directory (the layout of this module).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows with every column (:func:`dlqlens.spark.load_capture`,
        best ``PERMISSIVE``: malformed messages kept and counted).
    directory : str
        A new or empty directory (:func:`check_out_dir`).
    sources : iterable of str, optional
        The ``source`` values of ``df`` (the planned files' paths), so that
        the capture names are made without a pass over the data; when None
        they are found with ``df.select("source").distinct()`` (which decodes
        the captures once more). A row whose source is not among them goes
        to ``capture=_unlisted``.
    capture_queues : dict, optional
        ``source`` -> ``(queue manager, queue)`` from the banners
        (:func:`dlqlens.capture.reader.captured_queues`), kept in the marker.
    capture_times : dict, optional
        ``source`` -> creation time (naive UTC) from the banners
        (:func:`dlqlens.capture.reader.captured_times`), kept in the marker.
    manifests : dict, optional
        ``source`` -> ``{"qmgr", "queue", "captured_at"}``: what the
        ``manifest.json`` of a ``dlqlens simulate`` directory said of each
        capture it listed (:func:`dlqlens.commands.audit.manifest_captures`),
        kept in the marker as ``manifests`` (empty captures included), so
        that ``dlqlens audit`` reads the directory as the simulator's.

    Returns
    -------
    dict
        The marker written: ``sources`` with each one's ``messages``,
        ``malformed`` and ``too_large`` counts, read back from the
        Parquet written.

    Raises
    ------
    dlqlens.errors.UsageError
        When ``df`` lacks a column of the schema or the directory is not new.

    Notes
    -----
    Each Parquet file holds at most :data:`READ_ROWS` messages (the write
    option ``maxRecordsPerFile``; the session's settings are left as they
    are) and the marker lists the files (``files``: path, messages,
    uncompressed bytes), so that :func:`load_messages` reads them in
    partitions of bounded rows.
    """
    from pyspark.sql import functions as F

    from dlqlens.decode.issues import WELL_FORMED
    from dlqlens.version import version

    d = check_out_dir(directory)
    schema = described_schema()
    missing = [c for c in schema.fieldNames() if c not in df.columns]
    if missing:
        raise UsageError(f"write_messages: the DataFrame lacks column(s) {', '.join(missing)}: "
                         "load the capture with every column")
    spark = df.sparkSession
    if sources is None:  # one row per file
        sources = [r["source"] for r in df.select("source").distinct().collect()]
    names = capture_names(sources)
    name_map = literal_map(names)
    out = (df.select(*schema.fieldNames()).to(schema)
           .withColumn("capture", F.coalesce(name_map[F.col("source")], F.lit("_unlisted")))
           # the UTC day, whatever the session's time zone: days since the epoch of the instant
           .withColumn("dlh_put_date", F.date_from_unix_date(
               F.floor(F.unix_micros("dlh_put_ts") / F.lit(86_400_000_000)).cast("int"))))
    # at most READ_ROWS messages a file: read back in partitions of bounded rows
    # (load_messages). "error", not its synonym "errorifexists": Spark Connect's client
    # takes only the first
    out.write.mode("append" if os.path.isdir(d) else "error") \
        .option("maxRecordsPerFile", READ_ROWS).partitionBy(*PARTITION_COLUMNS).parquet(d)
    back = spark.read.parquet(d)
    bad = ~F.col("decode_status").isin(sorted(WELL_FORMED))
    stats = {r["source"]: r for r in back.groupBy("source").agg(
        F.count(F.lit(1)).alias("messages"),
        F.sum(bad.cast("long")).alias("malformed"),
        F.sum(F.exists("decode_issues", lambda i: i["code"] == "too_large").cast("long"))
        .alias("too_large"),
        F.min(F.when(bad, F.struct("message_number", "decode_status"))).alias("first"),
        F.first("capture_format").alias("capture_format")).collect()}
    queues = capture_queues or {}
    times = capture_times or {}
    entries = []
    for s in sorted(set(names) | set(stats)):
        st = stats.get(s)
        q = queues.get(s)
        entries.append({
            "source": s, "capture": names.get(s, "_unlisted"),
            "format": st["capture_format"] if st else None,
            "messages": st["messages"] if st else 0,
            "malformed": (st["malformed"] or 0) if st else 0,
            "too_large": (st["too_large"] or 0) if st else 0,
            "first_malformed": st["first"].asDict() if st and st["first"] else None,
            "queue_manager": q[0] if q else None, "queue": q[1] if q else None,
            "created": times[s].isoformat() if s in times else None})
    marker = {"layout": LAYOUT_VERSION, "kind": "messages", "dlqlens": version(),
              "partition_by": list(PARTITION_COLUMNS), "unknown_partition": UNKNOWN_PARTITION,
              "schema": json.loads(schema.json()), "sources": entries,
              "files": parquet_files(d)}
    if manifests:
        marker["manifests"] = {src: {k: m.get(k) for k in ("qmgr", "queue", "captured_at")}
                               for src, m in sorted(manifests.items())}
    _write_marker(d, marker)
    return marker


def write_results(frames: dict, directory, *, partition_by: dict | None = None) -> dict:
    """Write named DataFrames (findings, finding-message links, replay results) as Parquet.

    Parameters
    ----------
    frames : dict of str to pyspark.sql.DataFrame
        Name -> DataFrame; each goes to ``directory/NAME/`` (names are
        checked: ``A-Z a-z 0-9 _ -`` only, not starting with ``_`` or ``.``).
        Columns and their metadata are kept as they are.
    directory : str
        A new or empty directory (:func:`check_out_dir`).
    partition_by : dict of str to list of str, optional
        Partition columns of some frames; only columns whose values are
        safe as directory names (never ``source`` or message content).

    Returns
    -------
    dict
        The marker written to ``directory/_dlqlens.json``: ``kind``
        ``results`` and, per frame, its ``rows`` and Spark ``schema``.

    Raises
    ------
    dlqlens.errors.UsageError
        For a bad frame name or a directory that is not new.
    """
    from dlqlens.safe import one_line
    from dlqlens.version import version

    d = check_out_dir(directory)
    partition_by = partition_by or {}
    written = {}
    for name in frames:  # every name checked before anything is written
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", name):
            raise UsageError(f"write_results: frame name {one_line(repr(name))}: expected letters, "
                             "digits, _ and -, not starting with _ or -")
    for name, df in frames.items():
        w = df.write.mode("error")
        if partition_by.get(name):
            w = w.partitionBy(*partition_by[name])
        w.parquet(os.path.join(d, name))
        back = df.sparkSession.read.parquet(os.path.join(d, name))
        written[name] = {"rows": back.count(), "schema": json.loads(df.schema.json()),
                         "partition_by": list(partition_by.get(name) or ())}
    marker = {"layout": LAYOUT_VERSION, "kind": "results", "dlqlens": version(), "frames": written}
    os.makedirs(d, exist_ok=True)
    _write_marker(d, marker)
    return marker


def read_results(spark, directory) -> dict:
    """The DataFrames :func:`write_results` wrote, by name.

    Raises
    ------
    dlqlens.errors.UsageError
        When the directory has no marker or holds messages, not results.
    """
    from pyspark.sql.types import StructType

    marker = read_marker(directory)
    if marker.get("kind") != "results":
        raise UsageError(f"{os.fspath(directory)}: holds {marker.get('kind')}, not results")
    return {name: spark.read.schema(StructType.fromJson(f["schema"]))
            .parquet(os.path.join(os.fspath(directory), name))
            for name, f in marker["frames"].items()}


def arrow_batches(found: MessageInput, columns, message_numbers=None, limit: int | None = None):
    """Rows of messages directories as Arrow record batches, without Spark
    (``dlqlens explain`` on a directory: no JVM).

    Parameters
    ----------
    found : MessageInput
        From :func:`message_input`.
    columns : sequence of str
        Top-level columns, cast to their types in
        :func:`dlqlens.decode.schema.message_schema` (Spark's INT96
        timestamps read back as UTC microseconds).
    message_numbers : sequence of int, optional
        Only these message numbers (of every source).
    limit : int, optional
        Without ``message_numbers``: the first ``limit`` messages of each
        source (the caller stops when it has enough).

    Yields
    ------
    pyarrow.RecordBatch
        Per source in the marker's order, rows by ``message_number``.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds

    from dlqlens.decode.schema import message_schema

    full = message_schema()
    target = pa.schema([full.field(c) for c in columns])
    parts = ds.partitioning(pa.schema([("capture", pa.string()), ("dlh_put_date", pa.string())]),
                            flavor="hive")
    # Spark's INT96 timestamps in microseconds, the schema's unit (in nanoseconds,
    # pyarrow's default, a put date after 2262 does not fit)
    fmt = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit="us"))
    for d, marker in zip(found.directories, found.markers):
        dataset = ds.dataset(d, format=fmt, partitioning=parts)
        for s in marker["sources"]:
            where = (ds.field("capture") == s["capture"]) & (ds.field("source") == s["source"])
            if message_numbers:
                where &= ds.field("message_number").isin(list(message_numbers))
            elif limit is not None:
                where &= ds.field("message_number") <= limit
            table = dataset.to_table(columns=list(columns), filter=where)
            table = table.sort_by("message_number") if "message_number" in columns else table
            yield from table.cast(target).to_batches()
