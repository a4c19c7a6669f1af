"""What the driver keeps: rows brought to it one partition at a time, a few
rows held as a local DataFrame, and the JVM objects of DataFrames Python has
dropped.

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

from collections.abc import Iterator


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
