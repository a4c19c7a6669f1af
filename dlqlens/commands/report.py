"""``dlqlens report``: the HTML audit report of captures (runs on Spark).

Reads the captures, runs the summary, the detectors and, when given, the
rules table's lint and replay and the queue definitions, and writes one
self-contained HTML page (:func:`dlqlens.report.build_report`). Prints a
short text summary and the page's path.
"""

from __future__ import annotations

import sys

from dlqlens.commands.common import (add_capture_time_option, add_captures_argument,
                                     add_format_option, add_master_option, capture_times,
                                     load_captures, out_path, plan_captures)

#: Where the page goes without ``--out``: the current directory.
DEFAULT_OUT = "dlqlens-report.html"


def register(sub) -> None:
    p = sub.add_parser(
        "report", help="write the HTML audit report of captures (runs on Spark)",
        description="Write one self-contained HTML page about captures of a dead-letter "
                    "queue: what is on it (by reason, destination, application, over time), "
                    "the detectors' findings most severe first with next steps, the rules "
                    "table's lint, coverage and fall-through (--rules), the queue definitions "
                    "(--queue-defs), the data-quality expectations (--policy), the messages in "
                    "no finding, and explanations of the first messages of each. Payloads are redacted unless --show-payloads. Needs Java "
                    "17+ (Spark).")
    add_captures_argument(p)
    p.add_argument("--rules", metavar="TABLE", help="a runmqdlq rules table to check and replay")
    p.add_argument("--queue-defs", metavar="FILE",
                   help="queue definitions as MQSC DEFINE text (dmpmqcfg output)")
    p.add_argument("--out", metavar="FILE", default=DEFAULT_OUT,
                   help=f"the page to write (default {DEFAULT_OUT} in the current directory)")
    p.add_argument("--show-payloads", action="store_true",
                   help="include payload text in the explanations (default: redacted)")
    p.add_argument("--world", default="optimistic", metavar="optimistic|pessimistic|FILE",
                   help="outcome of the DLQ handler's puts in the rules replay (default "
                        "optimistic; see 'dlqlens rules replay')")
    p.add_argument("--policy", metavar="FILE",
                   help="add the data-quality section: the structural and hygiene suites under "
                        "this policy (TOML; docs/quality.md), as 'dlqlens audit' runs them")
    p.add_argument("--title", help="the page's title (default 'DLQ audit report')")
    add_capture_time_option(p)
    add_format_option(p)
    add_master_option(p)
    p.set_defaults(func=run_report)


def run_report(args) -> int:
    from dlqlens.commands.common import captured_queues
    from dlqlens.commands.detect import load_queue_defs
    from dlqlens.report import build_report
    from dlqlens.rules.parser import parse_file
    from dlqlens.rules.world import World

    # everything that can be wrong with the arguments fails before the JVM starts (the
    # files are read again by build_report: they are small)
    if args.rules:
        parse_file(args.rules)
    if args.queue_defs:
        load_queue_defs(args.queue_defs)
    world = World.load(args.world)
    quality = None
    if args.policy:
        from dlqlens.quality import load_policy

        quality = load_policy(args.policy)
    out = out_path(args.out)
    pieces = plan_captures(args.captures, args.format)
    capture_time = capture_times(args.capture_time, pieces)  # given, else the banners'
    df, _ = load_captures(args, args.captures, mode="PERMISSIVE", pieces=pieces)
    report = build_report(df, rules=args.rules, queue_defs=args.queue_defs,
                          show_payloads=args.show_payloads,
                          capture_queues=captured_queues(pieces) or None, title=args.title,
                          world=world, capture_time=capture_time, quality=quality)
    path = report.write(out)
    sys.stdout.write(report.text)
    print(f"report written to {path}")
    return 0
