"""dlqlens's PySpark Python data sources: ``mqcapture`` over capture files,
and ``mqmessages`` over the Parquet files of messages directories
(:class:`MQMessagesDataSource`); and the same reads planned in this process.

:func:`dlqlens.spark.load_capture` (:func:`capture_frame`) and
:func:`dlqlens.spark.parquet.load_messages` plan the partitions themselves on
a classic session and have the executors read them with the sources' own
readers (``mapInArrow`` over :func:`partition_ids`: :class:`PieceReader`,
:class:`FilesReader`): a Python data source is planned again, in two Python
processes of the driver, at every query that reads it (about 2 s of a cold
load of ten million messages, 0.4 s of each later query). The sources serve
``spark.read.format(...)`` and Spark Connect, whose server plans the read.

``mqcapture`` is a thin adapter over the pure-Python decoder (DESIGN.md
convention 6)::

    spark.read.format("mqcapture").option("mode", "PERMISSIVE").load(paths)

Options (case-insensitive, as in :class:`dlqlens.capture.reader.ReadOptions`):
``format`` (``auto``, ``raw``, ``dmpmqmsg``, ``amqsbcg``), ``mode``
(``PERMISSIVE``, ``DROPMALFORMED``, ``FAILFAST``), ``batchSize`` (messages
per Arrow batch, :data:`BATCH_ROWS` by default), ``splitBytes`` (captures
larger than this, 64 MiB by default, are split at message boundaries),
``splitText`` (``true`` by default: split large text captures too, after
counting their messages on the driver), ``columns`` (comma-separated
top-level columns to read), ``maxMessageBytes`` (largest message data decoded, IBM MQ's 100 MB by
default: a larger one is a ``too_large`` row, not read;
:mod:`dlqlens.capture.limits`), ``relativeTo`` (the absolute directory
relative paths are looked up in; default: the working directory of the
process that plans the read, which is the driver's in a classic session and
the server's over Spark Connect; :func:`dlqlens.spark.load_capture` passes
the caller's).
A schema given with ``.schema(...)`` must be a selection of the full schema's
top-level columns (same names and types, any order): Python data sources have
no column-pruning hook, so this is how a read leaves out columns such as
``raw`` and ``payload`` that an analysis does not use. Paths may be files,
directories or glob patterns; they are planned on the driver into one
partition per file (or per slice of a large capture), and each partition
yields Arrow record batches. A partition carries everything its executor
needs (the piece, the options, the directory relative paths are under):
executors read no driver state, only the capture files, which must be
visible under the same paths on every machine of the cluster, as for
Spark's own file sources.
Requires Spark 4.0+ (Python data sources with Arrow batches) and Java 17.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition


#: Messages per Arrow batch the ``mqcapture`` source yields when the
#: ``batchSize`` option is not given (the pure-Python readers keep
#: :class:`dlqlens.capture.reader.ReadOptions`' 65,536). The JVM holds each
#: batch it reads from a Python worker in native memory (Arrow buffers,
#: outside the heap and ``spark.driver.memory``), one per running task: with
#: 65,536 full rows those buffers reached 268 MB at once in the driver JVM of
#: a million-message audit (``-XX:NativeMemoryTracking``, allocations through
#: ``Unsafe.allocateMemory``), 147 MB still held at its peak RSS; with 8,192
#: rows, 15 MB, and the JVM's peak RSS 93 MB lower, the time the same
#: (``docs/performance.md``, seventh stop). Spark's own Arrow batches are
#: 10,000 rows (``spark.sql.execution.arrow.maxRecordsPerBatch``).
BATCH_ROWS = 8192


@dataclass
class CapturePartition(InputPartition):
    """One :class:`~dlqlens.capture.reader.Piece`: a file, or a slice of a
    large capture (picklable)."""

    piece: object

    def __init__(self, piece):
        super().__init__((piece.path, piece.slice.start))
        self.piece = piece


class MQCaptureDataSource(DataSource):
    """Spark data source ``mqcapture`` over IBM MQ capture files."""

    @classmethod
    def name(cls) -> str:
        return "mqcapture"

    def schema(self):
        from dlqlens.spark.schema import spark_schema

        return spark_schema()

    def reader(self, schema):
        from dlqlens.capture.reader import ReadOptions, paths_from_options
        from dlqlens.errors import UsageError
        from dlqlens.spark.schema import spark_schema

        opts = dict(self.options)
        if not any(k.lower() == "batchsize" for k in opts):
            opts["batchSize"] = str(BATCH_ROWS)
        root = next((opts.pop(k) for k in list(opts) if k.lower() == "relativeto"), None)
        if root is not None and not os.path.isabs(root):
            raise UsageError(f"mqcapture: option relativeTo: expected an absolute directory, "
                             f"found {root!r}")
        names = selected_columns("mqcapture", schema, spark_schema())
        if names != spark_schema().fieldNames():
            given = opts.get("columns")
            if given and [c.strip() for c in given.split(",")] != names:
                raise UsageError("mqcapture: option columns and the given schema disagree")
            opts["columns"] = ",".join(names)
        # planned here (the driver, or the Connect server): relative paths are under
        # this process's working directory, which the executors do not share
        return MQCaptureReader(ReadOptions.from_options(opts), paths_from_options(opts),
                               root or os.getcwd())


def selected_columns(source: str, schema, full) -> list[str]:
    """The names of ``schema``, checked to be a selection of ``full``'s top-level
    columns with the same types (a data source's given schema).

    Raises
    ------
    dlqlens.errors.UsageError
        Naming the source, the column, and the names or type expected.
    """
    from dlqlens.errors import UsageError

    by_name = {f.name: f for f in full.fields}
    for f in schema.fields:
        if f.name not in by_name:
            raise UsageError(f"{source} schema: column {f.name!r} does not exist; "
                             f"expected names from {', '.join(by_name)}")
        if f.dataType != by_name[f.name].dataType:
            raise UsageError(f"{source} schema: column {f.name!r} must have type "
                             f"{by_name[f.name].dataType.simpleString()}, "
                             f"found {f.dataType.simpleString()}")
    return list(schema.fieldNames())


class MQCaptureReader(DataSourceReader):
    def __init__(self, options, paths, root: str):
        self.options = options
        self.paths = paths
        self.root = root

    def partitions(self):
        from dlqlens.capture.reader import plan_pieces

        return [CapturePartition(p) for p in plan_pieces(self.paths, self.options, self.root)
                if p.format not in ("skipped", "empty")]

    def read(self, partition):
        from dlqlens.capture.reader import read_piece

        if not isinstance(partition, CapturePartition):
            # no piece to read (an empty directory, only files in no capture format):
            # Spark then reads one partition of its own, InputPartition(None); it has no rows
            return
        yield from read_piece(partition.piece, self.options)


@dataclass
class FilesPartition(InputPartition):
    """Parquet files of a messages directory that one task reads (absolute
    paths; picklable)."""

    files: tuple

    def __init__(self, files):
        super().__init__(tuple(files))
        self.files = tuple(files)


class MQMessagesDataSource(DataSource):
    """Spark data source ``mqmessages``: the Parquet files of messages
    directories (:mod:`dlqlens.spark.parquet`), read with pyarrow, one
    partition per group of files.

    :func:`dlqlens.spark.parquet.load_messages` reads a directory of more
    than one :func:`~dlqlens.spark.parquet.read_groups` group through it:
    one relation in every plan, however many groups (a union of one Parquet
    scan per group filled the driver's heap with plan nodes at ten million
    messages), and no partition larger than its group, whatever the
    session's ``spark.sql.files.*`` settings (docs/scale.md, "Read
    partitions").

    Options: ``groups`` (JSON: a list of lists of absolute paths of Parquet
    files, each list one partition, read in order) and ``batchSize``
    (messages per Arrow batch, :data:`BATCH_ROWS` by default). A schema
    given with ``.schema(...)`` is a selection of
    :func:`dlqlens.spark.schema.described_schema`'s top-level columns, as
    for ``mqcapture``; only those columns are read from the files. Spark's
    INT96 timestamps are read as UTC microseconds (the schema's unit; in
    nanoseconds a put date after 2262 would not fit).
    """

    @classmethod
    def name(cls) -> str:
        return "mqmessages"

    def schema(self):
        from dlqlens.spark.schema import described_schema

        return described_schema()

    def reader(self, schema):
        import json

        from dlqlens.capture.reader import positive_option
        from dlqlens.errors import UsageError
        from dlqlens.spark.schema import described_schema

        opts = {k.lower(): v for k, v in self.options.items()}
        try:
            groups = json.loads(opts.get("groups", "[]"))
        except ValueError:
            groups = None
        if not (isinstance(groups, list) and all(
                isinstance(g, list) and g and all(isinstance(p, str) and os.path.isabs(p)
                                                  for p in g) for g in groups)):
            raise UsageError("mqmessages: option groups: expected a JSON list of non-empty "
                             f"lists of absolute paths, found {opts.get('groups', '')[:80]!r}")
        batch = positive_option("batchSize", opts.get("batchsize", BATCH_ROWS),
                                source="mqmessages: ")
        return MQMessagesReader(groups, selected_columns("mqmessages", schema,
                                                         described_schema()), batch)


class MQMessagesReader(DataSourceReader):
    def __init__(self, groups, columns, batch_rows: int):
        self.groups = groups
        self.columns = columns
        self.batch_rows = batch_rows

    def partitions(self):
        return [FilesPartition(g) for g in self.groups]

    def read(self, partition):
        if not isinstance(partition, FilesPartition):
            return  # no files: Spark's own InputPartition(None), no rows
        yield from read_files(partition.files, self.columns, self.batch_rows)


def read_files(files, columns, batch_rows: int, fields=None):
    """Arrow batches of ``columns`` of the Parquet ``files`` of a messages
    directory, in order: what one partition of the ``mqmessages`` source, or
    of :func:`dlqlens.spark.parquet.load_messages` without it, reads.

    Parameters
    ----------
    files : sequence of str
        Absolute paths.
    columns : list of str
        Top-level columns of :func:`dlqlens.decode.schema.message_schema`.
    batch_rows : int
        Rows per batch at most.
    fields : mapping of str to sequence of str, optional
        Of these struct columns, only these fields (read as such from the
        files: Parquet stores each field apart).

    Yields
    ------
    pyarrow.RecordBatch
        Cast to the message schema's types of ``columns`` (Spark's INT96
        timestamps read as UTC microseconds), narrowed to ``fields``.

    Raises
    ------
    dlqlens.errors.CaptureError
        Naming the file that pyarrow cannot read, and why.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dlqlens.decode.schema import message_schema, narrow_schema

    fields = dict(fields or {})
    full = message_schema()
    target = narrow_schema(pa.schema([full.field(c) for c in columns]), fields)
    paths = [c if c not in fields else f"{c}.{f}" for c in columns
             for f in (fields[c] if c in fields else [None])]
    for path in files:
        try:
            parquet = pq.ParquetFile(path, coerce_int96_timestamp_unit="us")
            batches = parquet.iter_batches(batch_size=batch_rows, columns=paths,
                                           use_threads=False)
            for batch in batches:
                yield batch.cast(target)
        except (OSError, pa.ArrowException) as exc:
            from dlqlens.errors import CaptureError

            raise CaptureError(f"{path}: cannot read this Parquet file of a messages "
                               f"directory: {type(exc).__name__}: {exc}") from exc


class _PartitionReader:
    """A ``mapInArrow`` function over :func:`partition_ids`: each ``id`` of its
    input names what that partition reads (``read(id)``, Arrow batches)."""

    def read(self, i: int):  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def narrowed(self, columns: list[str], fields: dict) -> _PartitionReader:  # pragma: no cover
        """The same read of only ``columns`` (top-level, in that order), the
        struct columns of ``fields`` (canonical: :func:`narrowed`) with only
        those fields."""
        raise NotImplementedError

    def __call__(self, batches):
        for batch in batches:
            for i in batch.column(0).to_pylist():
                yield from self.read(i)


def executors_frame(spark, reader: _PartitionReader, n: int, spark_type):
    """``n`` partitions read by the executors with ``reader`` (``mapInArrow``
    over :func:`partition_ids`), of type ``spark_type``; the frame remembers
    its reader, so that :func:`narrowed` can read fewer columns of it."""
    df = partition_ids(spark, n).mapInArrow(reader, spark_type)
    df._dlqlens_read = (reader, n, spark_type)
    return df


def narrowed(df, columns, fields=None):
    """``df.select(*columns)``, read as such where ``df`` is a capture the
    executors read (:func:`executors_frame`); ``fields`` narrows structs.

    Spark cannot prune the columns of a ``mapInArrow`` read (nor of a Python
    data source's): the executors decode and send every column of the
    capture, and only then are the unused ones dropped. Where ``df`` is such a
    read, as :func:`dlqlens.spark.load_capture` made it, and Spark does not
    hold it cached, this is the same read of only ``columns`` (and of the
    ``md``, ``dlh`` and ``tm`` structs only the ``fields`` asked): the same
    rows in the same partitions (reader modes read the columns they need
    whatever the columns asked), the rest never decoded nor sent (ten million
    messages: the detectors' columns loaded and cached in 36-39 s against
    45-48 s; docs/performance.md, fourteenth stop). Any other DataFrame (a
    capture decoded on the driver, read over Spark Connect, transformed or
    cached) gets the same columns by ``select``.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
    columns : sequence of str
        Top-level columns of ``df``.
    fields : mapping of str to collection of str, optional
        Struct columns among ``columns`` -> the fields of each to keep
        (they stay in the struct's order; null where the struct is null).

    Returns
    -------
    pyspark.sql.DataFrame
        ``columns``, in that order (``df`` itself when those are its columns
        and no struct is narrowed).

    Raises
    ------
    pyspark.errors.AnalysisException
        For a column or field ``df`` does not have (as ``select``).
    dlqlens.errors.UsageError
        For a column of ``fields`` that is not among ``columns``.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    from dlqlens.decode.schema import NARROWABLE

    columns = list(columns)
    keep, exists = _kept_fields(df, columns, fields or {})
    if not keep and columns == df.columns:
        return df
    read = df.__dict__.get("_dlqlens_read")
    if read is not None and exists and set(columns) <= set(df.columns) \
            and set(keep) <= set(NARROWABLE) and df.storageLevel == StorageLevel.NONE:
        reader, n, spark_type = read
        return executors_frame(df.sparkSession, reader.narrowed(columns, keep), n,
                               _narrow_type(StructType([spark_type[c] for c in columns]), keep))

    def column(c):
        if c not in keep:
            return F.col(c)
        struct = F.struct(*[F.col(c)[f].alias(f) for f in keep[c]])
        return F.when(F.col(c).isNotNull(), struct).alias(c)

    return df.select(*[column(c) for c in columns])


def _kept_fields(df, columns: list[str], fields) -> tuple[dict[str, list[str]], bool]:
    """``fields`` of :func:`narrowed`: each struct's fields in its order, the
    structs kept whole left out; and whether every column and field named
    exists (when not, ``select`` says which does not).

    Raises
    ------
    dlqlens.errors.UsageError
        For a column of ``fields`` that is not among ``columns``.
    """
    from pyspark.sql.types import StructType

    from dlqlens.errors import UsageError

    keep, exists = {}, True
    for c, names in fields.items():
        names = [names] if isinstance(names, str) else list(names)
        if c not in columns:
            raise UsageError(f"fields: {c!r} is not among the columns {', '.join(columns)}")
        dtype = df.schema[c].dataType if c in df.columns else None
        if not isinstance(dtype, StructType) or not set(names) <= set(dtype.fieldNames()):
            keep[c], exists = names, False
        elif len(set(names)) < len(dtype.fields):
            keep[c] = [f for f in dtype.fieldNames() if f in names]
    return keep, exists


def _narrow_type(spark_type, keep: dict):
    """``spark_type`` (a StructType of top-level columns) with the structs of
    ``keep`` limited to those fields (their metadata kept)."""
    from pyspark.sql.types import StructField, StructType

    out = []
    for f in spark_type.fields:
        if f.name in keep:
            kept = [c for c in f.dataType.fields if c.name in keep[f.name]]
            f = StructField(f.name, StructType(kept), f.nullable, f.metadata)
        out.append(f)
    return StructType(out)


class FilesReader(_PartitionReader):
    """The ``mapInArrow`` function of :func:`dlqlens.spark.parquet.load_messages`
    on a classic session: each ``id`` of its input (one per partition) names a
    group of Parquet files, which it reads (:func:`read_files`). Picklable.

    Parameters
    ----------
    groups : list of list of str
        Absolute paths of Parquet files, a partition each.
    columns : list of str
    batch_rows : int
    fields : dict, optional
        Struct column -> the only fields read of it (:func:`read_files`).
    """

    def __init__(self, groups, columns, batch_rows: int = BATCH_ROWS, fields=None):
        self.groups = [list(g) for g in groups]
        self.columns = list(columns)
        self.batch_rows = batch_rows
        self.fields = dict(fields or {})

    def read(self, i: int):
        return read_files(self.groups[i], self.columns, self.batch_rows, self.fields)

    def narrowed(self, columns: list[str], fields: dict) -> FilesReader:
        return FilesReader(self.groups, columns, self.batch_rows, fields)


def classic(spark) -> bool:
    """``spark`` is a classic session (its JVM driven from this process), not a
    Spark Connect one (whose server plans and runs every read)."""
    return getattr(spark, "_jsparkSession", None) is not None


def partition_ids(spark, n: int):
    """A DataFrame of one ``id`` column, 0 to ``n - 1``, one a partition (one
    partition, empty, for 0), of a size Spark does not know.

    What the executors read from it (``mapInArrow``) is a capture's worth of
    rows, which Spark must not take for small: ``spark.range(n)`` tells the
    optimizer it holds ``8 * n`` bytes, and a join of the read with a small
    table then broadcast the capture (collected to the driver). Over a
    ``LogicalRDD`` of the same ids the estimate is
    ``spark.sql.defaultSizeInBytes`` (by default the largest long), as for a
    Python data source, which reports no statistics. Classic sessions only.
    """
    from pyspark.sql import DataFrame

    jspark = spark._jsparkSession
    ids = jspark.range(0, n, 1, max(n, 1))
    return DataFrame(jspark.createDataFrame(ids.toDF().rdd(), ids.schema()), spark)


#: Captures of at most this many bytes in all (the files' sizes) are decoded on
#: the driver by :func:`capture_frame` and handed to Spark as one Arrow table,
#: instead of by the executors: the same decoder
#: (:func:`dlqlens.capture.reader.read_piece`), another transport. Executors
#: decode in Python workers (each imports pyarrow and the decoder) for every job
#: that reads the capture; a local relation needs none. 16 MiB is a few tens of
#: thousands of messages, decoded in about a second on one core.
LOCAL_BYTES = 16 * 2**20


def planned_bytes(pieces) -> int:
    """The bytes the planned ``pieces`` read (each file's size once; slices of
    one file count the file)."""
    import os

    return sum(os.path.getsize(p) for p in {piece.path for piece in pieces}
               if os.path.exists(p))


def capture_frame(spark, paths, options: dict, schema=None, local_limit: float = LOCAL_BYTES):
    """The capture as a Spark DataFrame, planned here (one planning for both
    transports): decoded on the driver when small, else read by the executors.

    The pieces (:func:`dlqlens.capture.reader.plan_pieces`, relative paths
    under this process's working directory) are planned once, in this
    process. When they hold at most ``local_limit`` bytes in all
    (:func:`planned_bytes`) they are decoded here and handed to Spark as one
    Arrow table (a local relation: no Python workers). Otherwise, on a
    classic session, the executors read them: one partition per piece, each
    read by :func:`dlqlens.capture.reader.read_piece` in a Python worker
    (``mapInArrow`` over :func:`partition_ids`; :class:`PieceReader`), the reader
    and decoder the ``mqcapture`` source runs, without the source's two
    planning round trips through Python processes at every query (about 2 s
    of a cold load of ten million messages; docs/performance.md, thirteenth
    stop). Over Spark Connect, where the server plans a read, a large
    capture is left to the ``mqcapture`` source (None).

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
    paths : list of str
        Files, directories or glob patterns.
    options : dict
        The ``mqcapture`` options (strings, as the source takes them:
        ``format``, ``mode``, ``columns``...).
    schema : pyspark.sql.types.StructType, optional
        A selection of the full schema's columns (as the source takes it).
    local_limit : float
        Decode on the driver up to this many bytes (``inf``: always; a
        negative number: never).

    Returns
    -------
    pyspark.sql.DataFrame or None
        The same rows and columns as ``spark.read.format("mqcapture")`` gives
        (one decoder); None for a capture over ``local_limit`` on a Spark
        Connect session.

    Raises
    ------
    dlqlens.errors.UsageError
        For a bad option.
    dlqlens.errors.MalformedMessageError
        In ``FAILFAST`` mode, at the first malformed message: at load when
        decoded on the driver, else at the first action that reads it.
    dlqlens.errors.CaptureError
        For a path that names nothing readable (at load).
    """
    import dataclasses

    import pyarrow as pa

    from dlqlens.capture.reader import ReadOptions, plan_pieces, read_piece
    from dlqlens.decode.schema import message_schema
    from dlqlens.spark.schema import spark_schema

    opts = dict(options)
    if schema is not None and schema.fieldNames() != spark_schema().fieldNames():
        opts["columns"] = ",".join(schema.fieldNames())
    read_options = ReadOptions.from_options(opts)
    pieces = plan_pieces(list(paths), read_options, os.getcwd())
    to_read = [p for p in pieces if p.format not in ("skipped", "empty")]
    full = spark_schema()
    spark_type = full if not read_options.columns else \
        type(full)([full[c] for c in read_options.columns])
    if planned_bytes(pieces) > local_limit:
        if not classic(spark):
            return None  # Spark Connect: the server plans the read (the mqcapture source)
        if not any(k.lower() == "batchsize" for k in opts):  # as the source's batches
            read_options = dataclasses.replace(read_options, batch_size=BATCH_ROWS)
        return executors_frame(spark, PieceReader(to_read, read_options), len(to_read),
                               spark_type)
    arrow_schema = message_schema()
    if read_options.columns:
        arrow_schema = pa.schema([arrow_schema.field(c) for c in read_options.columns])
    batches = [b for p in to_read for b in read_piece(p, read_options)]
    table = pa.Table.from_batches(batches, schema=arrow_schema) if batches \
        else arrow_schema.empty_table()
    return spark.createDataFrame(table, schema=spark_type)


def source_frame(spark, paths, options: dict, schema=None):
    """``spark.read.format("mqcapture")`` over ``paths`` with ``options``
    (registered first), relative paths under this process's working directory.

    The read is planned by another process (a Python worker of the driver, or
    of a Spark Connect server) that may have another working directory: the
    source's ``relativeTo`` option carries this one.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
    paths : list of str
    options : dict
        The source's options (strings).
    schema : pyspark.sql.types.StructType, optional
        A selection of the full schema's columns.

    Returns
    -------
    pyspark.sql.DataFrame
        Lazy: the source plans the read at each query.
    """
    register_sources(spark)
    reader = spark.read.format("mqcapture").options(**options).option("relativeTo", os.getcwd())
    if schema is not None:
        reader = reader.schema(schema)
    return reader.load(list(paths))


class PieceReader(_PartitionReader):
    """The ``mapInArrow`` function of :func:`capture_frame`: each ``id`` of its
    input (one per partition) names a piece, which it reads
    (:func:`dlqlens.capture.reader.read_piece`). Picklable: the pieces and the
    options travel with the task, and executors read no driver state.

    Parameters
    ----------
    pieces : list of dlqlens.capture.reader.Piece
        Planned with the driver's working directory as root.
    options : dlqlens.capture.reader.ReadOptions
    """

    def __init__(self, pieces, options):
        self.pieces = list(pieces)
        self.options = options

    def read(self, i: int):
        from dlqlens.capture.reader import read_piece

        return read_piece(self.pieces[i], self.options)

    def narrowed(self, columns: list[str], fields: dict) -> PieceReader:
        import dataclasses

        return PieceReader(self.pieces, dataclasses.replace(
            self.options, columns=tuple(columns), fields=tuple(fields.items()) or None))


def register_sources(spark) -> None:
    """Register :class:`MQCaptureDataSource` and :class:`MQMessagesDataSource`
    on ``spark`` (safe to call again).

    On a classic session the registration runs with ``spark`` the JVM's
    active session, the one active before put back after: Spark checks the
    name through the active session, so that registering on a
    ``newSession()`` of a session that has them failed with
    ``DATA_SOURCE_ALREADY_EXISTS``, while the new session could not read
    through them (``DATA_SOURCE_NOT_FOUND``).
    """
    with _active_in_jvm(spark):
        spark.dataSource.register(MQCaptureDataSource)
        spark.dataSource.register(MQMessagesDataSource)


@contextmanager
def _active_in_jvm(spark) -> Iterator[None]:
    """``spark`` the JVM's active session for the block (in this thread), the
    one before put back after; nothing on Spark Connect (no JVM here)."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        yield
        return
    sessions = spark._jvm.org.apache.spark.sql.SparkSession
    before = sessions.getActiveSession()
    sessions.setActiveSession(jsession)
    try:
        yield
    finally:
        if before.isDefined():
            sessions.setActiveSession(before.get())
        else:
            sessions.clearActiveSession()
