"""Options and steps that several commands share.

Every command that reads captures on Spark checks the paths and plans the
files before the JVM starts (a typo in a path costs no Spark start-up), then
loads them with :func:`dlqlens.spark.load_capture`.
"""

from __future__ import annotations

import argparse

from dlqlens.capture.reader import MODES, ReadOptions, plan_pieces


def add_captures_argument(parser: argparse.ArgumentParser, nargs: str = "+") -> None:
    """The ``CAPTURE...`` positional argument: files, directories or glob patterns."""
    parser.add_argument("captures", nargs=nargs, metavar="CAPTURE",
                        help="capture files, directories or glob patterns")


def print_names(names) -> int:
    """``--list``: one name a line on standard output; exit status 0."""
    for name in names:
        print(name)
    return 0


def add_format_option(parser: argparse.ArgumentParser) -> None:
    """``--format``: the capture format, ``auto`` by default."""
    parser.add_argument("--format", default="auto",
                        help="capture format: auto (default), raw, dmpmqmsg or amqsbcg")


def add_mode_option(parser: argparse.ArgumentParser) -> None:
    """``--mode``: Spark's reader modes for malformed messages."""
    parser.add_argument("--mode", default="PERMISSIVE", type=str.upper, choices=MODES,
                        help="what to do with malformed messages (default PERMISSIVE)")


def add_master_option(parser: argparse.ArgumentParser) -> None:
    """``--master``: the Spark master of the session dlqlens creates."""
    parser.add_argument("--master", default="local[*]", help="Spark master (default local[*])")


def plan_captures(paths, fmt: str, mode: str = "PERMISSIVE") -> list:
    """Check the options and plan the capture files, before any JVM starts.

    Returns
    -------
    list
        The planned pieces (:func:`dlqlens.capture.reader.plan_pieces`).

    Raises
    ------
    dlqlens.errors.UsageError
        For a bad format or mode.
    dlqlens.errors.CaptureError
        For a path that names nothing readable.
    """
    ReadOptions(format=fmt, mode=mode)
    return plan_pieces(paths, ReadOptions(format=fmt))


def load_captures(args: argparse.Namespace, paths, *, mode: str = "PERMISSIVE",
                  columns=None, pieces=None):
    """Plan ``paths`` (:func:`plan_captures`), start Spark and load them.

    Parameters
    ----------
    args : argparse.Namespace
        With ``format`` and ``master``.
    paths : list of str
        Capture files, directories or glob patterns.
    mode : str
        Reader mode of the load (``PERMISSIVE``, ``DROPMALFORMED``, ``FAILFAST``).
    columns : list of str, optional
        Decode only these columns (:func:`dlqlens.spark.load_capture`).
    pieces : list, optional
        The pieces a caller has already planned with :func:`plan_captures`
        (the files are then not planned again).

    Returns
    -------
    (pyspark.sql.DataFrame, list)
        The capture rows and the planned pieces.
    """
    import sys

    from dlqlens.spark.session import get_spark, load_capture

    if pieces is None:
        pieces = plan_captures(paths, args.format, mode)
    # Spark's console progress bar on a terminal: the long stages show they are moving
    spark = get_spark(args.master, spark_ui_showConsoleProgress=str(sys.stderr.isatty()).lower())
    kw = {} if columns is None else {"columns": list(columns)}
    return load_capture(spark, paths, format=args.format, mode=mode, **kw), pieces


def add_capture_time_option(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--capture-time``: when the captures were taken (ISO 8601, UTC)."""
    parser.add_argument("--capture-time", metavar="ISO8601", help=help or (
        "when the captures were taken (UTC); default: each dmpmqmsg banner's time, else each "
        "capture's newest put (and the findings say so)"))


def capture_time_arg(value):
    """``--capture-time`` as a naive UTC datetime (None when not given).

    Raises
    ------
    dlqlens.errors.UsageError
        When the value is not ISO 8601.
    """
    if not value:
        return None
    from dlqlens.detect.common import to_utc
    from dlqlens.errors import UsageError

    try:
        return to_utc(value)
    except ValueError:
        raise UsageError(f"--capture-time {value!r}: expected ISO 8601, "
                         "e.g. 2024-03-15T08:30:00Z") from None


def capture_times(value, pieces):
    """The detectors' ``capture_time``: ``--capture-time`` when given, else the
    files' dmpmqmsg banners (:class:`dlqlens.detect.common.CaptureTimes`, taken
    as UTC), else None (each capture's newest put stands in, and the findings
    say so)."""
    given = capture_time_arg(value)
    if given is not None:
        return given
    from dlqlens.capture.reader import captured_times
    from dlqlens.detect.common import CaptureTimes

    times = captured_times(pieces)
    return CaptureTimes(times, origin="banner") if times else None
