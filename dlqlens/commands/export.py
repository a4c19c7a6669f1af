"""``dlqlens export``: write selected messages as a dmpmqmsg file to reload (runs on Spark).

Selects the messages that need replaying from captures, by MQDLH reason,
destination, a detector finding's messages or what the shop's runmqdlq rules
table would do with them, and writes them as a dmpmqmsg file
(:func:`dlqlens.spark.export.export_dmpmqmsg`) that an administrator loads
with ``dmpmqmsg -m QMGR -f FILE -o QUEUE``. Messages whose bytes the capture
did not fully hold are not written: the counts and reasons are printed, and
the exit status is 1 when any selected message was not written, or when none
was selected.
"""

from __future__ import annotations

import sys

from dlqlens.commands.common import (add_capture_time_option, add_captures_argument,
                                     add_format_option, add_master_option, capture_times,
                                     load_captures, out_path, plan_captures)


def register(sub) -> None:
    p = sub.add_parser(
        "export", help="write selected messages as a dmpmqmsg file to reload (runs on Spark)",
        description="Select messages from captures and write them as a dmpmqmsg file, "
                    "MQMD and message bytes as captured, that 'dmpmqmsg -m QMGR -f FILE -o "
                    "QUEUE' loads onto a queue. Criteria combine with AND; repeat an option "
                    "for OR. Messages the capture did not hold completely (truncated, an MQDLH "
                    "rebuilt by amqsbcg, dmpmqmsg -dt text) are not written and are counted. "
                    "Exit status 1 when a selected message was not written or none was "
                    "selected. Needs Java 17+ (Spark).")
    add_captures_argument(p)
    p.add_argument("--out", metavar="FILE", required=True, help="the dmpmqmsg file to write")
    p.add_argument("--reason", metavar="CODE", action="append", default=[],
                   help="MQDLH Reason, a number or a name (2053, MQRC_Q_FULL); repeatable")
    p.add_argument("--dest-q", metavar="QUEUE", action="append", default=[],
                   help="MQDLH DestQName (a trailing * matches a prefix); repeatable")
    p.add_argument("--dest-qmgr", metavar="QMGR", action="append", default=[],
                   help="MQDLH DestQMgrName (a trailing * matches a prefix); repeatable")
    p.add_argument("--finding", metavar="KIND[:QUEUE]", action="append", default=[],
                   help="the messages of the detectors' findings of this kind (backout_loop, "
                        "reason_burst, ...), optionally only those naming QUEUE; repeatable")
    p.add_argument("--finding-id", metavar="ID", action="append", default=[],
                   help="the messages of one finding, by its finding_id (KIND:16 hex digits, as "
                        "'dlqlens detect --jsonl' and the report show it); repeatable")
    p.add_argument("--queue-defs", metavar="FILE",
                   help="queue definitions (MQSC) for the detectors of --finding")
    add_capture_time_option(p)
    p.add_argument("--rules", metavar="TABLE", help="a runmqdlq rules table, for --fate")
    p.add_argument("--fate", metavar="FATE", action="append", default=[],
                   help="what the rules table would do: retried, forwarded, discarded, left, "
                        "or left:REASON (ignore_rule, rules_exhausted, no_match, no_dlh); "
                        "'left' is every message it would leave on the DLQ, the implicit "
                        "IGNORE included; repeatable; needs --rules")
    p.add_argument("--world", default="optimistic", metavar="optimistic|pessimistic|FILE",
                   help="outcome of the handler's puts in the replay (default optimistic)")
    p.add_argument("--strip-dlh", action="store_true",
                   help="remove the MQDLH and take the MQMD's Format, Encoding and "
                        "CodedCharSetId from it, as runmqdlq's RETRY and FWD HEADER(NO) do")
    p.add_argument("--keep-duplicates", action="store_true",
                   help="write every copy of a message found in several captures (default: "
                        "once, the copy with the least remaining Expiry)")
    add_format_option(p)
    add_master_option(p)
    p.set_defaults(func=run_export)


def _finding_ids_arg(values) -> list[str]:
    import re

    from dlqlens.detect import KINDS
    from dlqlens.errors import UsageError

    for v in values:
        kind, _, digest = v.partition(":")
        if kind not in KINDS or not re.fullmatch(r"[0-9a-f]{16}", digest):
            raise UsageError(f"--finding-id {v!r}: expected KIND:16 hex digits (a finding_id), "
                             f"KIND one of {', '.join(KINDS)}")
    return list(values)


def _findings_arg(values) -> list[tuple[str, str | None]]:
    from dlqlens.detect import KINDS
    from dlqlens.errors import UsageError

    out = []
    for v in values:
        kind, _, queue = v.partition(":")
        if kind not in KINDS:
            raise UsageError(f"--finding {v!r}: expected a kind, one of {', '.join(KINDS)}, "
                             "optionally followed by :QUEUE")
        out.append((kind, queue or None))
    return out


def run_export(args) -> int:
    from pyspark.sql import functions as F

    from dlqlens.commands.common import captured_queues
    from dlqlens.errors import UsageError
    from dlqlens.spark.caches import Caches
    from dlqlens.spark.export import export_dmpmqmsg, reason_codes, select_messages

    # every argument is checked before the JVM starts
    reason_codes(args.reason)
    wanted = _findings_arg(args.finding)
    ids = _finding_ids_arg(args.finding_id)
    table = world = None
    if args.fate and not args.rules:
        raise UsageError("--fate needs --rules TABLE")
    if args.rules:
        from dlqlens.rules.parser import parse_file
        from dlqlens.rules.world import World

        table = parse_file(args.rules)
        if table.errors:
            raise UsageError(f"{args.rules}: {len(table.errors)} error(s), the DLQ handler would "
                             f"not start; first: {table.errors[0].format(args.rules)}")
        world = World.load(args.world)
        if not args.fate:
            raise UsageError("--rules is used with --fate (which fates to export)")
    queue_defs = None
    if args.queue_defs:
        from dlqlens.commands.detect import load_queue_defs

        queue_defs = load_queue_defs(args.queue_defs)
    out = out_path(args.out)
    pieces = plan_captures(args.captures, args.format)

    df, _ = load_captures(args, args.captures, pieces=pieces)
    with Caches() as caches:
        df = caches.cache(df)
        refs = None
        if wanted or ids:
            from dlqlens.detect import run_detectors

            kinds = {k for k, _ in wanted} | {i.split(":", 1)[0] for i in ids}
            findings, links = run_detectors(
                df, sorted(kinds), queue_defs=queue_defs,
                capture_queues=captured_queues(pieces) or None,
                **({"capture_time": t} if (t := capture_times(args.capture_time, pieces))
                   else {}))
            cond = None
            for kind, queue in wanted:
                c = F.col("kind") == kind
                if queue:
                    c = c & F.array_contains("queues", queue)
                cond = c if cond is None else cond | c
            if ids:
                c = F.col("finding_id").isin(sorted(set(ids)))
                cond = c if cond is None else cond | c
            # the links of the findings chosen (a broadcast semi join: findings are few)
            refs = links.join(F.broadcast(findings.where(cond).select("finding_id")),
                              "finding_id", "left_semi")
        selected = select_messages(df, reasons=args.reason, dest_queues=args.dest_q,
                                   dest_qmgrs=args.dest_qmgr, messages=refs)
        if args.fate:
            from dlqlens.rules.replay import replay, where_fate

            chosen = where_fate(replay(table, df, world), args.fate)
            selected = select_messages(selected, messages=chosen)
        result = export_dmpmqmsg(selected, out, strip_dlh=args.strip_dlh,
                                 dedupe=not args.keep_duplicates)
    print(result.to_text())
    print(f"load it with: dmpmqmsg -m QMGR -f {out} -o QUEUE")
    not_written = sum(result.skipped.values())
    if not_written:
        print(f"dlqlens: {not_written} selected message(s) not written (see above)",
              file=sys.stderr)
        return 1
    if not result.written:
        print("dlqlens: no message written: nothing matched the selection", file=sys.stderr)
        return 1
    return 0
