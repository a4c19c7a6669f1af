"""``dlqlens decode``, ``dlqlens explain`` and ``dlqlens summary``.

``decode`` runs in this process (no JVM): it is what an administrator pipes
into ``jq`` during an incident; ``explain`` too: why message N is there, in
words. ``summary`` (the README's main job: the figures of a capture, then the
detectors' findings) runs on Spark, like every analysis, so the same command
works on ten million messages.
"""

from __future__ import annotations

import sys

from dlqlens.commands.common import (MAX_MESSAGE_NUMBER, UNREAD, add_capture_time_option,
                                     add_captures_argument, add_format_option, add_master_option, add_mode_option,
                                     capture_time_arg, capture_times, captured_queues,
                                     load_captures, plan_captures, unread_files, whole_number)


def register(sub) -> None:
    p = sub.add_parser("decode", help="decode captures to JSON lines, one object per message",
                       description="Decode capture files (raw, dmpmqmsg, amqsbcg, pcap, hex dumps) and print "
                                   "one JSON object per message.")
    add_captures_argument(p)
    p.add_argument("--jsonl", action="store_true",
                   help="one JSON object per line on standard output (the default)")
    p.add_argument("--to", metavar="DIR",
                   help="write Parquet to this new directory instead, partitioned by capture "
                        "and by DLQ put date, for every analysis to read in place of the "
                        "captures (runs on Spark: Java 17+; every message kept, malformed "
                        "ones counted; docs/scale.md)")
    add_format_option(p)
    add_mode_option(p)
    add_master_option(p)
    p.add_argument("--max-message-bytes", type=int, default=None, metavar="N",
                   help="largest message data decoded (default IBM MQ's 100 MB); a larger "
                        "message is a bad_framing row with a too_large issue, and the exit "
                        "status is 1")
    p.set_defaults(func=run_decode)

    e = sub.add_parser("explain", help="why messages landed where they are, in words (no JVM)",
                       description="Explain messages of captures one by one: the reason and "
                                   "its meaning, who put the message on the DLQ and in which "
                                   "role, where it was going, the original put, backouts, "
                                   "expiry, headers and payload, then what to check or do "
                                   "next with the queue and queue-manager names put in.")
    add_captures_argument(e)
    e.add_argument("-m", "--message", type=whole_number(1, MAX_MESSAGE_NUMBER), action="append", metavar="N",
                   help="message number (1-based, in every capture given; repeatable); "
                        "default: the first --limit messages")
    e.add_argument("--limit", type=whole_number(1), default=20, help="messages shown without -m (default 20)")
    e.add_argument("--capture-time", metavar="ISO8601",
                   help="when the captures were taken (UTC), for the age of each message and "
                        "its expiry instant; default: a dmpmqmsg banner's time, else unknown")
    e.add_argument("--jsonl", action="store_true",
                   help="one JSON object per message: the explanation's data (to_dict)")
    add_format_option(e)
    e.set_defaults(func=run_explain)

    s = sub.add_parser("summary", help="readable summary of captures (runs on Spark)",
                       description="Summarise what is on a dead-letter queue: messages by "
                                   "reason, destination and application, oldest and newest, "
                                   "decode problems, then the findings of every detector "
                                   "(bursts, backout loops, trigger failures, expiry build-up, "
                                   "orphaned replies; most severe first, as 'dlqlens detect' "
                                   "prints them, each with what to do next) and the messages "
                                   "in no finding. Needs Java 17+ (Spark).")
    add_captures_argument(s)
    add_format_option(s)
    add_mode_option(s)
    s.add_argument("--top", type=whole_number(1), default=20, help="rows per table (default 20)")
    add_master_option(s)
    s.add_argument("--no-findings", action="store_true",
                   help="leave out the detectors' findings (faster on large captures)")
    add_capture_time_option(s)
    s.set_defaults(func=run_summary)


def run_decode(args) -> int:
    from dlqlens.capture.jsonl import dumps, records
    from dlqlens.capture.reader import ReadOptions, ReadStats
    from dlqlens.safe import one_line

    from dlqlens.capture.limits import MAX_MESSAGE_BYTES
    from dlqlens.errors import UsageError

    limit = args.max_message_bytes if args.max_message_bytes is not None else MAX_MESSAGE_BYTES
    if limit < 1:
        raise UsageError(f"--max-message-bytes: expected a positive number, found {limit}")
    if args.to:
        return decode_to_parquet(args, limit)
    options = ReadOptions(format=args.format, mode=args.mode, max_message_bytes=limit)
    stats = ReadStats()
    pieces = plan_captures(args.captures, args.format, args.mode)
    for path, why in unread_files(pieces):  # named before the rows, each with why
        print(f"dlqlens: not read: {one_line(path)}: {one_line(why)}", file=sys.stderr)
    out = sys.stdout
    too_large = 0
    for piece in pieces:
        for batch in _decode_batches(piece, pieces, options, stats):
            for obj in records(batch):
                too_large += any(i.get("code") == "too_large"
                                 for i in obj.get("decode_issues") or ())
                out.write(dumps(obj) + "\n")
    out.flush()
    note = f"dlqlens: {stats.framed} message(s) framed in {stats.files} file(s), {stats.rows} written"
    if stats.dropped:
        why = ", ".join(f"{n} {s}" for s, n in sorted(stats.dropped_by_status.items()))
        note += f", {stats.dropped} dropped as malformed ({why})"
    if stats.empty_files:
        note += f"; {len(stats.empty_files)} empty file(s)"
    if stats.skipped_files:
        note += f"; {len(stats.skipped_files)} file(s) in no capture format not read"
    if too_large:
        note += (f"; {too_large} message(s) larger than {limit:,} bytes not decoded "
                 "(too_large; --max-message-bytes)")
    if not stats.rows:
        note += "; nothing decoded"
    print(note, file=sys.stderr)
    return 1 if too_large or not stats.rows else 0


def _decode_batches(piece, pieces, options, stats):
    """The batches ``decode --jsonl`` prints for one planned piece: decoded
    from the capture, or, for a source of a Parquet directory
    (:class:`dlqlens.spark.parquet.MessageInput`), read back with pyarrow
    (no JVM; ``DROPMALFORMED`` leaves out and counts the malformed rows)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from dlqlens.capture.reader import read_piece
    from dlqlens.decode.issues import WELL_FORMED
    from dlqlens.decode.schema import message_schema
    from dlqlens.spark.parquet import MessageInput, arrow_batches

    if not isinstance(pieces, MessageInput):
        yield from read_piece(piece, options, stats)
        return
    one = MessageInput([], [])
    one.directories, one.markers = pieces.directories, [
        {**m, "sources": [s for s in m["sources"] if s["source"] == piece.path]}
        for m in pieces.markers]
    stats.files += 1
    for batch in arrow_batches(one, message_schema().names):
        stats.framed += batch.num_rows
        if options.mode == "DROPMALFORMED":
            good = pc.is_in(batch.column("decode_status"), value_set=pa.array(sorted(WELL_FORMED)))
            dropped = batch.filter(pc.invert(good))
            stats.dropped += dropped.num_rows
            stats.dropped_by_status.update(dropped.column("decode_status").to_pylist())
            batch = batch.filter(good)
        stats.rows += batch.num_rows
        yield batch


def decode_to_parquet(args, limit: int) -> int:
    """``dlqlens decode CAPTURE... --to DIR``: the captures as a Parquet
    directory (:func:`dlqlens.spark.parquet.write_messages`), on Spark.

    Every argument is checked before the JVM starts. Exit status 1 when
    nothing was decoded or a message was larger than ``limit`` bytes (as
    without ``--to``).
    """
    import os

    from dlqlens.capture.reader import captured_times
    from dlqlens.commands.audit import manifest_captures
    from dlqlens.errors import UsageError
    from dlqlens.safe import one_line
    from dlqlens.spark.parquet import MessageInput, check_out_dir, write_messages

    if args.jsonl:
        raise UsageError("--jsonl and --to: choose one output (JSON lines on standard output, "
                         "or Parquet in a directory)")
    if args.mode != "PERMISSIVE":
        raise UsageError(f"--to with --mode {args.mode}: the directory keeps every message "
                         "(PERMISSIVE); give --mode to the analyses that read it")
    out = check_out_dir(args.to)
    pieces = plan_captures(args.captures, args.format, args.mode)
    if isinstance(pieces, MessageInput):
        raise UsageError("--to: decode reads captures, not a directory it wrote")
    for path, why in unread_files(pieces):
        print(f"dlqlens: not read: {one_line(path)}: {one_line(why)}", file=sys.stderr)
    # a simulator directory's manifest.json names each capture's queue: kept in the marker
    planned = {os.path.normpath(p.path): p.path for p in pieces}
    manifests = {planned.get(os.path.normpath(f), f): m
                 for f, m in manifest_captures(args.captures).items()}
    df, _ = load_captures(args, args.captures, mode="PERMISSIVE", pieces=pieces,
                          maxMessageBytes=limit)
    marker = write_messages(df, out, sources=sorted({p.path for p in pieces
                                                     if p.format not in UNREAD}),
                            capture_queues=captured_queues(pieces),
                            capture_times=captured_times(pieces), manifests=manifests)
    sources = marker["sources"]
    rows = sum(s["messages"] for s in sources)
    malformed = sum(s["malformed"] for s in sources)
    too_large = sum(s["too_large"] for s in sources)
    note = (f"dlqlens: {rows} message(s) of {len(sources)} capture(s) written to "
            f"{one_line(out)} as Parquet")
    if malformed:
        note += f", {malformed} malformed kept (decode_status; --mode DROPMALFORMED when reading)"
    if too_large:
        note += (f"; {too_large} message(s) larger than {limit:,} bytes not decoded "
                 "(too_large; --max-message-bytes)")
    if not rows:
        note += "; nothing decoded"
    print(note, file=sys.stderr)
    return 1 if too_large or not rows else 0


def run_explain(args) -> int:
    import pyarrow as pa
    import pyarrow.compute as pc

    from dlqlens.capture.reader import ReadOptions, captured_times
    from dlqlens.explain import EXPLAIN_COLUMNS, explain
    from dlqlens.safe import json_dumps
    from dlqlens.spark.parquet import MessageInput

    given = capture_time_arg(args.capture_time)
    options = ReadOptions(format=args.format, columns=EXPLAIN_COLUMNS)
    wanted = sorted(set(args.message or ()))
    found: set[int] = set()
    shown = 0
    pieces = plan_captures(args.captures, args.format)
    banners = captured_queues(pieces)
    times = {} if given is not None else (pieces.times if isinstance(pieces, MessageInput)
                                          else captured_times(pieces))
    for batch in _explain_batches(pieces, options, wanted, args.limit):
        if wanted:
            batch = batch.filter(pc.is_in(batch.column("message_number"),
                                          value_set=pa.array(wanted, pa.int32())))
        for row in batch.to_pylist():
            if not wanted and shown >= args.limit:
                return 0
            qmgr, dlq = banners.get(row["source"], (None, None))
            when = given if given is not None else times.get(row["source"])
            e = explain(row, capture_time=when,
                        capture_time_origin="given" if given is not None else "banner",
                        dlq=dlq, dlq_qmgr=qmgr)
            if args.jsonl:
                sys.stdout.write(json_dumps(e.to_dict()) + "\n")
            else:
                sys.stdout.write(("\n" if shown else "") + e.to_text())
            found.add(row["message_number"])
            shown += 1
    sys.stdout.flush()
    missing = [n for n in wanted if n not in found]
    if missing:
        print(f"dlqlens: no message {', '.join(map(str, missing))} in the capture(s)",
              file=sys.stderr)
    if not shown:
        if not wanted:
            print("dlqlens: no messages", file=sys.stderr)
        return 1
    return 0


def _explain_batches(pieces, options, wanted, limit):
    """The record batches ``explain`` reads: the captures' pieces decoded, or,
    for a Parquet directory (:class:`dlqlens.spark.parquet.MessageInput`), its
    rows read with pyarrow (no JVM either)."""
    from dlqlens.capture.reader import read_piece
    from dlqlens.spark.parquet import MessageInput, arrow_batches

    if isinstance(pieces, MessageInput):
        yield from arrow_batches(pieces, options.columns, message_numbers=wanted, limit=limit)
        return
    for piece in pieces:
        yield from read_piece(piece, options)


def run_summary(args) -> int:
    from dlqlens.detect import analysis_input
    from dlqlens.detect.common import newest_put_times
    from dlqlens.explain.summary import summarize
    from dlqlens.spark.caches import Caches

    pieces = plan_captures(args.captures, args.format, args.mode)  # before Spark starts
    capture_time = capture_times(args.capture_time, pieces)
    df, _ = load_captures(args, args.captures, mode="PERMISSIVE", pieces=pieces)
    # decoded once, read by the summary and by every detector: cached without the messages'
    # bytes, which neither reads
    with Caches() as caches:
        df = caches.cache(analysis_input(df))
        summary = summarize(df, mode=args.mode, top=args.top)
        print(summary.to_text(), end="")
        if not args.no_findings:
            if args.mode == "PERMISSIVE":
                # each capture's newest put (the detectors' capture time where none is given)
                # came with the summary, which read every row the detectors read
                capture_time = newest_put_times(capture_time, summary.newest_puts)
            sys.stdout.write("\n" + findings_text(df, captured_queues(pieces),
                                                  capture_time=capture_time,
                                                  coverage_top=args.top))
    sys.stdout.flush()
    return 0


def findings_text(df, capture_queues=None, *, capture_time=None, coverage_top: int | None = 20,
                  with_coverage: bool = True) -> str:
    """The findings of every detector on ``df``, most severe first, then the
    messages in no finding, as text.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (:func:`dlqlens.spark.load_capture`), best cached: every
        detector reads them.
    capture_queues : dict, optional
        The queue each capture file was taken from
        (:func:`dlqlens.capture.reader.captured_queues`); see
        :func:`dlqlens.detect.run_detectors`.
    capture_time : datetime or mapping, optional
        When the captures were taken (given, or
        :class:`dlqlens.detect.common.CaptureTimes` from the banners).
    coverage_top : int, optional
        Groups of messages in no finding shown (all when None).
    with_coverage : bool
        Whether to add the messages in no finding.

    Returns
    -------
    str
        A heading with the number of findings, an underline, then each
        finding as its explanation's text
        (:meth:`dlqlens.explain.finding.FindingExplanation.to_text`: heading
        line, statement, severity and why, evidence, messages as a filter,
        what to check or do next), blank lines between; ``none`` when there
        is no finding. Then "Messages in no finding" with their count and
        their groups by reason and destination
        (:meth:`dlqlens.explain.coverage.Coverage.to_text`). Capture values
        are shown with control characters escaped.
    """
    from dlqlens.detect import Findings, finding_record, run_detectors, sample_links
    from dlqlens.explain.coverage import coverage
    from dlqlens.explain.finding import explain_finding
    from dlqlens.spark.caches import Caches

    params = {} if capture_time is None else {"capture_time": capture_time}
    with Caches() as caches:  # each detector's findings, cached: the links read them
        findings, links = run_detectors(df, capture_queues=capture_queues or None,
                                        persisted=caches, **params)
        # the links are read twice (the samples, the coverage): cached, the detectors run once
        # (each planned as it is cached: side by side)
        findings, links = caches.cache_all(findings, links)
        rows = findings.collect()
        samples = ({r["finding_id"]: r["messages"] for r in sample_links(links).collect()}
                   if rows else {})
        records = [finding_record(row, messages=samples.get(row["finding_id"], []))
                   for row in rows]
        title = (f"Findings ({len(records)}, most severe first; 'dlqlens detect' for parameters, "
                 "queue definitions and JSON)")
        body = ("\n\n".join(explain_finding(r, capture_queues=capture_queues).to_text()
                             for r in records) if records else "  none")
        text = f"{title}\n{'-' * len(title)}\n{body}\n"
        if with_coverage:
            text += "\n" + coverage(df, Findings(findings, links), top=coverage_top).to_text()
    return text
