"""Options and steps that several commands share.

Every command that reads captures on Spark checks the paths and plans the
files before the JVM starts (a typo in a path costs no Spark start-up), then
loads them with :func:`dlqlens.spark.load_capture`.
"""

from __future__ import annotations

import argparse
import os

from dlqlens.capture.reader import MODES, ReadOptions, plan_pieces


def add_captures_argument(parser: argparse.ArgumentParser, nargs: str = "+") -> None:
    """The ``CAPTURE...`` positional argument: files, directories or glob patterns."""
    parser.add_argument("captures", nargs=nargs, metavar="CAPTURE",
                        help="capture files, directories or glob patterns")


#: The largest message number (``message_number`` is a 32-bit integer column).
MAX_MESSAGE_NUMBER = 2**31 - 1


def whole_number(low: int, high: int | None = None):
    """An argparse ``type``: a whole number from ``low`` to ``high`` (no upper
    bound when None).

    A value out of range or not a number is refused by argparse with the
    option's name, what was expected and what was found (exit status 2), so
    no command runs on ``--limit -1`` or a message number no capture can hold.
    """
    span = f"from {low} to {high}" if high is not None else f"{low} or more"

    def parse(text: str) -> int:
        from dlqlens.safe import one_line

        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number {span}, found {one_line(repr(text))}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected a whole number {span}, found {value}")
        return value

    parse.__name__ = "whole number"  # argparse's fallback message names the type
    return parse


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
    """The options that say where Spark runs, as Spark's own tools have them:
    ``--master URL``, ``--conf key=value`` (repeatable) and ``--remote
    sc://host:port`` (a Spark Connect server; ``SPARK_REMOTE`` in the
    environment does the same when no ``--master`` is given).
    :func:`spark_for` turns them into a session (docs/scale.md)."""
    parser.add_argument("--master", default=None,
                        help="Spark master URL: local[N], spark://host:7077, ... (default "
                             "local[*], or a Spark Connect session when SPARK_REMOTE is set)")
    parser.add_argument("--conf", action="append", default=[], type=spark_conf_item,
                        metavar="KEY=VALUE",
                        help="a Spark configuration item, as spark-submit takes it "
                             "(repeatable; it overrides dlqlens's own settings)")
    parser.add_argument("--remote", metavar="sc://HOST:PORT", default=None,
                        help="run on a Spark Connect server (default: SPARK_REMOTE when set)")


def spark_conf_item(text: str) -> tuple[str, str]:
    """An argparse ``type``: ``KEY=VALUE`` of ``--conf``, split at the first ``=``.

    A text without ``=`` or with an empty key is refused by argparse with the
    option's name, what was expected and what was found (exit status 2).
    """
    from dlqlens.safe import one_line

    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise argparse.ArgumentTypeError(
            f"expected KEY=VALUE (for example spark.executor.memory=2g), "
            f"found {one_line(repr(text))}")
    return key.strip(), value


spark_conf_item.__name__ = "KEY=VALUE"  # argparse's fallback message names the type


def spark_for(args: argparse.Namespace, **tuning):
    """The session of a command: ``--master``, ``--conf``, ``--remote`` or
    ``SPARK_REMOTE`` (:func:`dlqlens.spark.session.spark_session`);
    ``tuning`` are settings of a session dlqlens creates; ``args.one_shot``
    (set by :func:`dlqlens.cli.main`) says whether the process ends with the
    command.

    Raises
    ------
    dlqlens.errors.UsageError
        As :func:`~dlqlens.spark.session.spark_session` does.
    """
    from dlqlens.spark.session import spark_session

    return spark_session(getattr(args, "master", None), dict(getattr(args, "conf", None) or ()),
                         remote=getattr(args, "remote", None),
                         one_shot=bool(getattr(args, "one_shot", False)), **tuning)


def plan_captures(paths, fmt: str, mode: str = "PERMISSIVE") -> list:
    """Check the options and plan the capture files, before any JVM starts.

    Returns
    -------
    list
        The planned pieces (:func:`dlqlens.capture.reader.plan_pieces`), or,
        for directories written by ``dlqlens decode --to``, their sources
        (:class:`dlqlens.spark.parquet.MessageInput`, see
        :func:`message_directories`).

    Raises
    ------
    dlqlens.errors.UsageError
        For a bad format or mode.
    dlqlens.errors.CaptureError
        For a path that names nothing readable.
    """
    ReadOptions(format=fmt, mode=mode)
    found = message_directories(paths, mode)
    if found is not None:
        return found
    pieces = plan_pieces(paths, ReadOptions(format=fmt))
    check_readable(paths, pieces)
    return pieces


def message_directories(paths, mode: str = "PERMISSIVE"):
    """Directories written by ``dlqlens decode --to`` among ``paths``, read
    from their markers before any JVM starts.

    Returns
    -------
    dlqlens.spark.parquet.MessageInput or None
        None when ``paths`` are captures.

    Raises
    ------
    dlqlens.errors.UsageError
        For Parquet without dlqlens's marker, results given as messages, or
        such directories mixed with captures (:func:`dlqlens.spark.parquet.message_input`).
    dlqlens.errors.MalformedMessageError
        In ``FAILFAST`` mode when a directory holds a malformed message.
    """
    from dlqlens.spark.parquet import message_input, refuse_failfast

    found = message_input(paths)
    if found is not None and mode.upper() == "FAILFAST":
        refuse_failfast(found)
    return found


def captured_queues(pieces) -> dict:
    """The queue each capture was taken from, by ``source``: from the files'
    banners (:func:`dlqlens.capture.reader.captured_queues`), or from the
    marker of a Parquet directory (what the banners said when it was written)."""
    from dlqlens.spark.parquet import MessageInput

    if isinstance(pieces, MessageInput):
        return pieces.queues
    from dlqlens.capture.reader import captured_queues as from_banners

    return from_banners(pieces)


#: Formats of the pieces :func:`dlqlens.capture.reader.plan_pieces` plans but
#: no reader reads: files in no capture format found in a directory, empty files.
UNREAD = ("skipped", "empty")


def unread_files(pieces) -> list[tuple[str, str]]:
    """The planned files no reader reads, each with why.

    Returns
    -------
    list of (str, str)
        ``(path, why)`` for each ``skipped`` piece (``why`` is the format
        detection's refusal, :func:`dlqlens.capture.registry.detect_format`:
        the formats expected and the first bytes found) and each ``empty`` one
        (``"empty file"``), in planning order.
    """
    from dlqlens.capture.registry import detect_format
    from dlqlens.errors import CaptureError

    out = []
    for piece in pieces:
        if piece.format == "empty":
            out.append((piece.path, "empty file"))
        elif piece.format == "skipped":
            try:  # sniffed again: a few KB, only for files that are not read
                detect_format(piece.path)
                why = "in no capture format"  # (the file changed since planning)
            except CaptureError as exc:
                why = str(exc).removeprefix(f"{piece.path}: ")
            out.append((piece.path, why))
    return out


def check_readable(paths, pieces) -> None:
    """Refuse ``paths`` when they hold no file a reader reads.

    Raises
    ------
    dlqlens.errors.CaptureError
        When every planned piece is ``skipped`` or ``empty`` (or there is
        none: an empty directory), naming the paths and what was found in
        them, file names escaped (:func:`dlqlens.safe.one_line`).
    """
    from dlqlens.errors import CaptureError
    from dlqlens.safe import one_line

    if any(p.format not in UNREAD for p in pieces):
        return
    where = ", ".join(one_line(os.fspath(p)) for p in
                      ([paths] if isinstance(paths, (str, os.PathLike)) else paths))
    unread = unread_files(pieces)
    if not unread:
        from dlqlens.capture.registry import FORMATS

        raise CaptureError(f"{where}: no capture to read: no file found (an empty directory?); "
                           f"expected capture files of a format dlqlens reads "
                           f"({', '.join(FORMATS)})")
    skipped = [p for p, why in unread if why != "empty file"]
    empty = [p for p, why in unread if why == "empty file"]
    found = []
    if skipped:
        found.append(f"{len(skipped)} file(s) in no capture format ({_names(skipped)})")
    if empty:
        found.append(f"{len(empty)} empty file(s) ({_names(empty)})")
    hint = ("; if they are captures, name the format with --format raw, dmpmqmsg or amqsbcg"
            if skipped else "")
    raise CaptureError(f"{where}: no capture to read: found {' and '.join(found)}; expected "
                       f"raw, dmpmqmsg or amqsbcg capture files{hint}")


def _names(paths, at_most: int = 5) -> str:
    """Up to ``at_most`` file names, escaped, and how many more."""
    from dlqlens.safe import one_line

    shown = ", ".join(one_line(p) for p in paths[:at_most])
    return shown + (f", and {len(paths) - at_most} more" if len(paths) > at_most else "")


def load_captures(args: argparse.Namespace, paths, *, mode: str = "PERMISSIVE",
                  columns=None, pieces=None, **options):
    """Plan ``paths`` (:func:`plan_captures`), start Spark and load them.

    Parameters
    ----------
    args : argparse.Namespace
        With ``format`` and the options of :func:`add_master_option`.
    paths : list of str
        Capture files, directories or glob patterns.
    mode : str
        Reader mode of the load (``PERMISSIVE``, ``DROPMALFORMED``, ``FAILFAST``).
    columns : list of str, optional
        Decode only these columns (:func:`dlqlens.spark.load_capture`).
    pieces : list, optional
        The pieces a caller has already planned with :func:`plan_captures`
        (the files are then not planned again).
    **options
        Options of the ``mqcapture`` source (``maxMessageBytes=...``).

    Returns
    -------
    (pyspark.sql.DataFrame, list)
        The capture rows and the planned pieces.
    """
    import sys

    from dlqlens.spark.session import load_capture, small_input_settings

    if pieces is None:
        pieces = plan_captures(paths, args.format, mode)
    # Spark's console progress bar on a terminal: the long stages show they are moving;
    # a small capture gets a session tuned for a short run (only one dlqlens creates)
    spark = spark_for(args, spark_ui_showConsoleProgress=str(sys.stderr.isatty()).lower(),
                      **small_input_settings(pieces))
    kw = {**options, **({} if columns is None else {"columns": list(columns)})}
    return load_capture(spark, paths, format=args.format, mode=mode, **kw), pieces


def add_results_to_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--to DIR``: also write the results as Parquet (:func:`write_results_to`)."""
    parser.add_argument("--to", metavar="DIR", help=(
        f"also write {what} as Parquet to this new directory, for a data platform to read "
        "(dlqlens.spark.parquet.write_results; docs/scale.md)"))


def results_dir(value):
    """The ``--to`` directory of results, checked before any JVM starts (None when not given).

    Raises
    ------
    dlqlens.errors.UsageError
        When it exists and is not empty, or its parent does not exist.
    """
    if not value:
        return None
    from dlqlens.spark.parquet import check_out_dir

    return check_out_dir(value)


def write_results_to(directory, frames: dict) -> None:
    """Write named result DataFrames to ``directory`` when it is given
    (:func:`dlqlens.spark.parquet.write_results`) and say so on standard error."""
    if not directory:
        return
    import sys

    from dlqlens.safe import one_line
    from dlqlens.spark.parquet import write_results

    marker = write_results(frames, directory)
    rows = ", ".join(f"{f['rows']} {name}" for name, f in marker["frames"].items())
    print(f"dlqlens: {rows} written to {one_line(directory)} as Parquet", file=sys.stderr)


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
    from dlqlens.spark.parquet import MessageInput

    times = pieces.times if isinstance(pieces, MessageInput) else captured_times(pieces)
    return CaptureTimes(times, origin="banner") if times else None


def out_path(value: str) -> str:
    """The absolute path of an ``--out`` file, checked before any JVM starts.

    Raises
    ------
    dlqlens.errors.UsageError
        When the directory it would be written in does not exist.
    """
    from dlqlens.errors import UsageError

    out = os.path.abspath(value)
    if not os.path.isdir(os.path.dirname(out)):
        raise UsageError(f"--out {value}: no such directory {os.path.dirname(out)}")
    return out
