"""The ``mqcapture`` PySpark Python data source.

A thin adapter over the pure-Python decoder (DESIGN.md convention 6)::

    spark.read.format("mqcapture").option("mode", "PERMISSIVE").load(paths)

Options (case-insensitive, as in :class:`dlqlens.capture.reader.ReadOptions`):
``format`` (``auto``, ``raw``, ``dmpmqmsg``, ``amqsbcg``), ``mode``
(``PERMISSIVE``, ``DROPMALFORMED``, ``FAILFAST``), ``batchSize`` (messages
per Arrow batch), ``splitBytes`` (raw captures larger than this are split at
record boundaries), ``columns`` (comma-separated top-level columns to read).
A schema given with ``.schema(...)`` must be a selection of the full schema's
top-level columns (same names and types, any order): Python data sources have
no column-pruning hook, so this is how a read leaves out columns such as
``raw`` and ``payload`` that an analysis does not use. Paths may be files, directories or glob patterns; they are
planned on the driver into one partition per file (or per byte range of a
large raw capture), and each partition yields Arrow record batches.
Requires Spark 4.0+ (Python data sources with Arrow batches) and Java 17.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition


@dataclass
class CapturePartition(InputPartition):
    """One file, or one byte range of a raw capture (picklable)."""

    path: str
    format: str
    start: int | None
    stop: int | None
    first_number: int

    def __init__(self, path, format, start, stop, first_number):  # noqa: A002
        super().__init__((path, start))
        self.path, self.format, self.start, self.stop = path, format, start, stop
        self.first_number = first_number


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
        full = spark_schema()
        names = list(schema.fieldNames())
        if names != full.fieldNames():
            by_name = {f.name: f for f in full.fields}
            for f in schema.fields:
                if f.name not in by_name:
                    raise UsageError(f"mqcapture schema: column {f.name!r} does not exist; "
                                     f"expected names from {', '.join(by_name)}")
                if f.dataType != by_name[f.name].dataType:
                    raise UsageError(f"mqcapture schema: column {f.name!r} must have type "
                                     f"{by_name[f.name].dataType.simpleString()}, "
                                     f"found {f.dataType.simpleString()}")
            given = opts.get("columns")
            if given and [c.strip() for c in given.split(",")] != names:
                raise UsageError("mqcapture: option columns and the given schema disagree")
            opts["columns"] = ",".join(names)
        return MQCaptureReader(ReadOptions.from_options(opts), paths_from_options(opts))


class MQCaptureReader(DataSourceReader):
    def __init__(self, options, paths):
        self.options = options
        self.paths = paths

    def partitions(self):
        from dlqlens.capture.reader import plan_pieces

        return [CapturePartition(p.path, p.format, p.start, p.stop, p.first_number)
                for p in plan_pieces(self.paths, self.options)
                if p.format not in ("skipped", "empty")]

    def read(self, partition):
        from dlqlens.capture.reader import Piece, read_piece

        if partition is None:  # nothing to read: Spark asks for one empty partition
            return
        piece = Piece(partition.path, partition.format, partition.start, partition.stop,
                      partition.first_number)
        yield from read_piece(piece, self.options)
