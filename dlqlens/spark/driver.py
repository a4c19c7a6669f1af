"""What the driver keeps and does: rows brought to it one partition at a
time, a few rows held as a local DataFrame, the JVM objects of DataFrames
Python has dropped, and query plans built in several threads at once.

``DataFrame.toLocalIterator`` of classic PySpark (4.3) keeps each query it
served alive for the rest of the session: its physical plan, and with it the
plan's broadcast hash tables and their blocks in the driver's storage memory.
Measured (a 300,000-row broadcast semi join, ordered, iterated to the end,
then Python's and the JVM's collections until the storage memory stops
falling): the driver heap grew by 52 MB and the storage memory by 3.4 MB at
every call, without bound (five calls: 51 -> 319 MB), where ``collect`` of
the same frame and ``df.rdd.toLocalIterator()`` left nothing. In a notebook
every ``dlqlens export`` of a finding's messages (a broadcast join) leaked so.
:func:`local_rows` iterates the frame's RDD instead (the same jobs: one a
partition, in order, rows pickled by the JVM as ``toLocalIterator`` does);
over Spark Connect, which has no RDDs and whose client holds no JVM plan, it
uses the DataFrame's own iterator.

A JVM object that Python holds through py4j (a Dataset, a Column) is released
when its Python wrapper is freed, and py4j's wrapper of an object whose
method was called refers to itself (``JavaObject._methods`` holds
``JavaMember`` objects whose ``container`` is that wrapper: py4j's "memory
model", www.py4j.org/advanced_topics.html, and py4j issue 548). Such a cycle
is freed only by Python's cyclic collector, whose full collections come
rarely in a driver that does its work in the JVM (a full collection waits for
the long-lived objects to grow by a quarter, and pandas, pyarrow and
matplotlib are many). Until then the JVM keeps the dropped DataFrames' plans
and their finished queries' broadcast hash tables. Measured: the detectors
run again and again over the 669-message sample in one session (1 GB heap),
each run's results dropped, the driver heap after a JVM collection grew from
327 to 751 MB in six runs (about 85 MB a run, Python's full collection never
ran) and the seventh run had not ended after three minutes of the JVM's full
collections; with :func:`release_dropped_frames` before each run, eight runs
left 436 to 585 MB.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

#: Threads :func:`plan_in_threads` builds plans in. Four on a two-core
#: driver: while one thread's Python waits for the JVM's analysis, another's
#: runs (measured, the eight detectors' plans over the sample in a warm
#: session, the best of four rounds: 4.35 s in one thread, 3.39 s in two,
#: 3.10 s in four; ``docs/performance.md``, seventeenth stop).
PLAN_THREADS = 4


def local_rows(df) -> Iterator:
    """The rows of ``df``, in its order, one partition at a time.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Classic or Spark Connect.

    Returns
    -------
    iterator of pyspark.sql.Row
        As ``df.toLocalIterator()`` gives them: at most one partition's rows
        on the driver at once (one Spark job a partition, run as the iterator
        is consumed).
    """
    if hasattr(df, "_jdf"):  # classic PySpark: not DataFrame.toLocalIterator (module docstring)
        return df.rdd.toLocalIterator()
    return df.toLocalIterator()


def local_copy(df):
    """``df`` computed now, as a DataFrame over a local relation of its rows.

    For a result of a few rows that should be computed under the settings of
    this moment (:func:`dlqlens.spark.session.short_run`) and read later
    under others: reading the copy runs no Spark job (a local relation's rows
    are in its plan) and no query of ``df`` again.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Few rows: all of them come to the driver (one Arrow table) and go
        back into the JVM's plan.

    Returns
    -------
    pyspark.sql.DataFrame
        The same rows in the same order, with ``df``'s schema (its types and
        nullability); timestamps go through Arrow with their time zone, so no
        local clock of the driver shifts them.
    """
    return df.sparkSession.createDataFrame(df.toArrow(), schema=df.schema)


def local_frame(spark, rows: Iterable, schema):
    """A DataFrame of ``rows`` held by the driver, handed to Spark as one Arrow
    table (a local relation): reading it starts no Python worker.

    ``spark.createDataFrame`` of a Python list does not: classic PySpark
    parallelizes the list and maps it to re-pickle it, so the first job that
    reads it starts a Python worker (2.5 to 2.9 s the first time in a
    session, measured, ``docs/performance.md``, nineteenth stop), even for
    no rows at all. The same on Spark Connect.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
    rows : iterable of tuple
        Each row's values in ``schema``'s order, as ``createDataFrame`` takes
        them (str, int, float, bool, None; bytes for binary).
    schema : pyspark.sql.types.StructType or str
        A struct type or its DDL string (``"source string, n int"``).

    Returns
    -------
    pyspark.sql.DataFrame
        The rows in their order, with ``schema``.

    Raises
    ------
    pyarrow.ArrowInvalid, pyarrow.ArrowTypeError
        For a value ``schema``'s type cannot hold.
    """
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    struct = schema if isinstance(schema, StructType) else parsed_schema(schema)
    arrow = to_arrow_schema(struct)
    columns = list(zip(*rows)) or [()] * len(struct.fields)
    table = pa.Table.from_arrays(
        [pa.array(list(values), type=field.type) for values, field in zip(columns, arrow)],
        schema=arrow)
    return spark.createDataFrame(table, schema=struct)


def parsed_schema(ddl: str):
    """The struct type of a DDL schema string (``"source string, n int"``).

    Spark parses it (its own DDL grammar; over py4j, a few round trips to the
    JVM, and a query's worth of them when a detector run conforms a dozen
    frames) once per process and string; each call returns a new
    :class:`~pyspark.sql.types.StructType`, so a caller may change its own.

    Raises
    ------
    ValueError
        When ``ddl`` is not a struct's fields (a lone type such as ``"int"``);
        Spark's own parse error for text it cannot parse.
    """
    from pyspark.sql.types import StructType

    return StructType.fromJson(json.loads(_schema_json(ddl)))


@lru_cache(maxsize=64)
def _schema_json(ddl: str) -> str:
    from pyspark.sql.types import StructType, _parse_datatype_string

    parsed = _parse_datatype_string(ddl)
    if not isinstance(parsed, StructType):
        raise ValueError(f"not a schema of named fields: {ddl!r}")
    return parsed.json()


def rows_at_hand(df) -> bool:
    """True when reading ``df`` again decodes nothing and starts no Python
    worker: ``df`` is cached, or every leaf of its plan (cached parts as
    their caches) is a local relation or a cache. A small capture that
    :func:`dlqlens.spark.load_capture` decoded on the driver is a local
    relation; one the executors decode (the ``mqcapture`` source, pieces
    read in Python workers) is not, unless cached.

    Classic PySpark reads the plan's leaves (a few py4j calls, no Spark
    job); on Spark Connect, whose client holds no plan objects, only a
    cached ``df`` counts.
    """
    if df.is_cached:
        return True
    jdf = getattr(df, "_jdf", None)
    if jdf is None:  # Spark Connect
        return False
    leaves = jdf.queryExecution().withCachedData().collectLeaves()
    return all(leaves.apply(i).getClass().getSimpleName() in ("LocalRelation", "InMemoryRelation")
               for i in range(leaves.size()))


def plan_in_threads(session, build: Callable, items: Iterable, *,
                    threads: int = PLAN_THREADS) -> list:
    """``[build(item) for item in items]``, built in up to ``threads`` threads
    at once.

    For functions that build DataFrames without running them: each
    transformation of a classic session is analysed by the JVM before it
    returns (tens of milliseconds for an analysis's plans), during which the
    Python thread waits on a socket, so the plans of independent analyses
    built side by side take the JVM's cores and the interpreter in turn
    instead of one after the other. Each thread runs with the caller's
    Spark local properties (job group, scheduler pool) and tags, and, in a
    classic session, with ``session`` as the JVM thread's active session
    (``pyspark.inheritable_thread_target``), so a job one of them runs is the
    caller's job and a setting is read from the caller's session.

    Parameters
    ----------
    session : pyspark.sql.SparkSession
        The session the plans belong to (classic or Spark Connect).
    build : callable
        One argument, an item; its result is returned. It must not depend
        on the order the items are built in (each item's build runs in a
        thread of its own, at the same time as the others).
    items : iterable
    threads : int, default :data:`PLAN_THREADS`
        At most this many builds at once; with one item, or ``threads`` 1,
        every build runs in the caller's thread.

    Returns
    -------
    list
        The results in the order of ``items``.

    Raises
    ------
    Exception
        What ``build`` raised for the first item (in the order of ``items``)
        whose build failed, once every build has ended.
    """
    items = list(items)
    workers = min(int(threads), len(items))
    if workers <= 1:
        return [build(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    from pyspark import inheritable_thread_target

    jsession = getattr(session, "_jsparkSession", None)

    def in_thread(item):
        if jsession is not None:  # classic: the JVM thread's active session is the caller's
            session._jvm.SparkSession.setActiveSession(jsession)
        return build(item)

    target = inheritable_thread_target(session)(in_thread)
    with ThreadPoolExecutor(workers, thread_name_prefix="dlqlens-plan") as pool:
        futures = [pool.submit(target, item) for item in items]
    return [future.result() for future in futures]


def release_dropped_frames() -> int:
    """Free the Python wrappers of JVM objects that nothing uses any more, so
    that the JVM can release them (module docstring): one full collection of
    Python's cyclic garbage (``gc.collect()``).

    :func:`dlqlens.detect.run_detectors`, the analysis that builds the most
    DataFrames (thousands of py4j wrappers a run; a replay of a rules table
    makes a few dozen), calls it when it starts, and so do the report and the
    audit's detector checks through it: the DataFrames of an earlier analysis
    that the caller has dropped are released before this one adds its own.
    What the caller still holds is not touched. It costs one collection of the
    interpreter's objects (70 to 90 ms measured with PySpark, pandas and
    matplotlib loaded); over Spark Connect, whose client holds no JVM
    objects, it only frees Python memory.

    Returns
    -------
    int
        The unreachable objects found (``gc.collect``'s count).
    """
    import gc

    return gc.collect()
