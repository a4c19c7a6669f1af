"""A local Spark session set up for dlqlens, and loading captures into it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from dlqlens.errors import DlqlensError


#: ``spark.sql.codegen.hugeMethodLimit`` of the sessions :func:`get_spark` makes:
#: the bytecode size (bytes) above which HotSpot does not JIT-compile a method.
HUGE_METHOD_LIMIT = 8000


class JavaMissingError(DlqlensError):
    """Spark needs Java 17 or newer and none was found."""


def check_java() -> str:
    """Return the ``java -version`` line, or raise :class:`JavaMissingError`.

    Spark 4 runs on Java 17 or newer (Apache Spark "Spark Overview",
    "Downloading": "Spark runs on Java 17/21").
    """
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") \
        else shutil.which("java")
    if not java or not os.path.exists(java):
        raise JavaMissingError(
            "Java not found: Spark 4 needs Java 17 or newer on PATH or in JAVA_HOME "
            "(for example: apt-get install openjdk-17-jre-headless)")
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    first = out.splitlines()[0] if out else ""
    import re

    m = re.search(r'version "(\d+)', first)
    if m and int(m.group(1)) < 17:
        raise JavaMissingError(f"Spark 4 needs Java 17 or newer, found: {first}")
    return first


def get_spark(master: str = "local[*]", app_name: str = "dlqlens", **conf):
    """A SparkSession for dlqlens, with the ``mqcapture`` source registered.

    Sets ``PYSPARK_PYTHON`` to this interpreter (executors must import
    dlqlens and pyarrow), turns the UI off, keeps shuffles small and binds to
    the loopback address. Extra ``conf`` items are passed to the builder
    (underscores in keys stand for dots: ``spark_sql_shuffle_partitions=4``)
    and override these settings.

    ``spark.sql.codegen.hugeMethodLimit`` is set to 8000 (Spark's default is
    65535): whole-stage code generation puts the matching of every rule of a
    rules-table replay into one Java method, and past 8000 bytes of bytecode
    (about 100 rules) HotSpot does not JIT-compile a method
    (``-XX:+DontCompileHugeMethods``, its default) and interprets it, which
    was measured 3 to 7 times slower on tables of 100 and 300 rules. With the
    limit, Spark falls back to per-expression code generation for such an
    operator, whose methods are small enough to be compiled; Spark's own
    description of the setting recommends 8000 on HotSpot. Only this function
    sets it (on the session it returns): :func:`dlqlens.rules.replay.replay`
    and the other functions that are handed a caller's DataFrame leave that
    session's configuration as it is.

    Raises
    ------
    JavaMissingError
        When no Java 17+ is installed.
    """
    check_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.python.worker.reuse": "true",
        # HotSpot's JIT limit; see the docstring (rules-table replays of 100+ rules)
        "spark.sql.codegen.hugeMethodLimit": str(HUGE_METHOD_LIMIT),
    }
    settings.update({k.replace("_", "."): str(v) for k, v in conf.items()})
    builder = SparkSession.builder.master(master).appName(app_name)
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def register(spark) -> None:
    """Register the ``mqcapture`` data source (safe to call again)."""
    from dlqlens.spark.source import MQCaptureDataSource

    spark.dataSource.register(MQCaptureDataSource)


def load_capture(spark, paths, format: str = "auto", mode: str = "PERMISSIVE", columns=None,
                 local: bool | None = None, **options):
    """``spark.read.format("mqcapture")`` over ``paths`` with ``options``.

    Parameters
    ----------
    columns : list of str, optional
        Read only these top-level columns (for example ``["source",
        "message_number", "md", "dlh", "put_ts"]``): the decoder still decodes
        every message, but Spark then carries only these columns, which on a
        large capture saves most of the cost (``raw`` and ``payload`` are the
        bulk of a row).
    local : bool, optional
        Decode on the driver and hand Spark one Arrow table
        (:func:`dlqlens.spark.source.local_frame`: the same decoder, no Python
        workers): by default (None) when the files hold at most
        :data:`dlqlens.spark.source.LOCAL_BYTES` in all; False always reads
        through the ``mqcapture`` source (a cluster's executors decode).

    Returns
    -------
    pyspark.sql.DataFrame
        The columns of :func:`dlqlens.decode.schema.message_schema` (or ``columns``).

    Raises
    ------
    dlqlens.errors.UsageError
        For a column name that does not exist.
    """
    path_list = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) \
        else [os.fspath(p) for p in paths]
    if local is not False:
        from dlqlens.spark.source import LOCAL_BYTES, local_frame

        schema = None
        if columns is not None:
            from pyspark.sql.types import StructType

            from dlqlens.capture.reader import ReadOptions
            from dlqlens.spark.schema import spark_schema

            ReadOptions(columns=tuple(columns))  # one clear error for a bad name
            schema = StructType([spark_schema()[c] for c in columns])
        df = local_frame(spark, path_list,
                         {"format": format, "mode": mode, **{k: str(v) for k, v in options.items()}},
                         schema, limit=LOCAL_BYTES if local is None else float("inf"))
        if df is not None:
            return df
    register(spark)
    reader = spark.read.format("mqcapture").option("format", format).option("mode", mode)
    if columns is not None:
        from pyspark.sql.types import StructType

        from dlqlens.capture.reader import ReadOptions

        ReadOptions(columns=tuple(columns))  # one clear error for a bad name
        from dlqlens.spark.schema import spark_schema

        full = spark_schema()
        reader = reader.schema(StructType([full[c] for c in columns]))
    for k, v in options.items():
        reader = reader.option(k, str(v))
    if isinstance(paths, (str, os.PathLike)):
        return reader.load(os.fspath(paths))
    return reader.load([os.fspath(p) for p in paths])
