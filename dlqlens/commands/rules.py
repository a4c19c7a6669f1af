"""``dlqlens rules``: check, replay and diff runmqdlq rules tables.

Usage::

    dlqlens rules check TABLE [--json] [--dlq NAME] [--capture CAPTURE...]
    dlqlens rules replay TABLE CAPTURE... [--world optimistic|pessimistic|FILE] [--jsonl]
    dlqlens rules diff OLD NEW CAPTURE... [--world ...] [--jsonl]

``replay``, ``diff`` and ``check --capture`` run on Spark (Java 17+). The
output forms, exit statuses and the JSON contracts are in ``docs/rules.md``
("The command and its JSON contracts", written in ``docs/parts/rules-command.md``).
"""

from __future__ import annotations

import argparse
import json
import sys

from dlqlens.commands.common import (add_captures_argument, add_format_option, add_master_option,
                                     add_results_to_option, load_captures, results_dir,
                                     write_results_to)
from dlqlens.rules.lint import lint
from dlqlens.rules.parser import parse_file

__all__ = ["register", "run_check", "run_replay", "run_diff"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``rules`` command (sub-command ``check``) to ``dlqlens``."""
    rules = subparsers.add_parser(
        "rules",
        help="runmqdlq rules tables",
        description="Work with runmqdlq / CSQUDLQH rules tables.",
    )
    sub = rules.add_subparsers(dest="rules_command", metavar="SUBCOMMAND")
    sub.required = True
    check = sub.add_parser(
        "check",
        help="validate and lint a rules table",
        description=(
            "Validate a rules table as the DLQ handler does at start-up, then lint it. "
            "Exit status 1 when it has errors."
        ),
    )
    check.add_argument("table", metavar="TABLE", help="rules table file")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument(
        "--dlq",
        metavar="NAME",
        default=None,
        help="dead-letter queue the table processes (overrides INPUTQ), for loop checks",
    )
    check.add_argument(
        "--capture",
        nargs="+",
        metavar="CAPTURE",
        default=None,
        help="also report rules no message of these captures matches first (runs on Spark)",
    )
    _spark_options(check)
    check.set_defaults(func=run_check)

    replay = sub.add_parser(
        "replay",
        help="replay a rules table over captured DLQ messages (runs on Spark)",
        description=(
            "What runmqdlq would do with every captured message: rules tried, attempts, "
            "action, target, and why messages stay on the DLQ. Needs Java 17+ (Spark)."
        ),
    )
    replay.add_argument("table", metavar="TABLE", help="rules table file")
    add_captures_argument(replay)
    _world_option(replay)
    replay.add_argument("--jsonl", action="store_true",
                        help="one JSON object per message instead of the summary")
    add_results_to_option(replay, "the replay (one row per message: its fate under the table)")
    _spark_options(replay)
    replay.set_defaults(func=run_replay)

    diff = sub.add_parser(
        "diff",
        help="compare two rules tables replayed over the same captures (runs on Spark)",
        description=(
            "Replay OLD and NEW over the same captures and count the messages whose fate "
            "changes, per transition. Needs Java 17+ (Spark)."
        ),
    )
    diff.add_argument("old", metavar="OLD", help="the current rules table")
    diff.add_argument("new", metavar="NEW", help="the proposed rules table")
    add_captures_argument(diff)
    _world_option(diff)
    diff.add_argument("--jsonl", action="store_true",
                      help="one JSON object per changed message instead of the counts")
    _spark_options(diff)
    diff.set_defaults(func=run_diff)


def _world_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--world",
        default="optimistic",
        metavar="optimistic|pessimistic|FILE",
        help="outcome of the handler's puts: optimistic (default: all succeed), pessimistic "
             "(puts to the original destination fail with the original reason) or a world "
             "JSON file",
    )


def _spark_options(parser: argparse.ArgumentParser) -> None:
    add_format_option(parser)
    add_master_option(parser)


def _load(args: argparse.Namespace, paths: list):
    """Check the capture paths (before the JVM starts), then load them on Spark
    in PERMISSIVE mode (a message whose MQDLH cannot be read is kept: it is
    one the handler leaves, ``no_dlh``), decoding only the columns a replay
    reads."""
    from dlqlens.rules.replay import INPUT_COLUMNS

    return load_captures(args, paths, mode="PERMISSIVE", columns=INPUT_COLUMNS)[0]


def _refuse_errors(table, name: str) -> bool:
    """Print a table's errors to stderr; True when it has any."""
    if not table.errors:
        return False
    for diag in table.errors:
        print(diag.format(name), file=sys.stderr)
    print(f"{name}: {len(table.errors)} error(s): the DLQ handler would not start with this "
          "table; fix them first (dlqlens rules check)", file=sys.stderr)
    return True


def _write_lines(df, column) -> None:
    """Write one JSON column of ``df`` to stdout, ordered, streamed partition by partition,
    with the characters a terminal acts on escaped (:func:`dlqlens.safe.json_text`: Spark's
    ``to_json`` writes DEL, C1 and U+2028 raw)."""
    from dlqlens.safe import json_text
    from dlqlens.spark.driver import local_rows

    out = sys.stdout
    for row in local_rows(df.orderBy("source", "message_number").select(column.alias("j"))):
        out.write(json_text(row["j"]) + "\n")
    out.flush()


def run_check(args: argparse.Namespace) -> int:
    """Run ``rules check``; return the exit status (1 if errors, else 0)."""
    table = parse_file(args.table)
    findings = lint(table, dlq_name=args.dlq)
    if getattr(args, "capture", None):
        from dlqlens.rules.lint import unreached

        findings = sorted(findings + unreached(table, _load(args, args.capture)),
                          key=lambda f: (f.line or 0, f.column or 0))
    if args.json:
        report = table.to_dict()
        report["lint"] = [f.to_dict() for f in findings]
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for diag in table.diagnostics:
            print(diag.format(args.table))
        for finding in findings:
            print(finding.format(args.table))
        print(
            f"{args.table}: {len(table.rules)} rule(s), {len(table.errors)} error(s), "
            f"{len(table.warnings)} warning(s), {len(findings)} lint finding(s)",
            file=sys.stderr,
        )
    return 1 if table.errors else 0


def run_replay(args: argparse.Namespace) -> int:
    """Run ``rules replay``; exit status 1 when the table has errors, else 0."""
    from dlqlens.rules.replay import jsonl_column, replay, summarize
    from dlqlens.rules.world import World

    table = parse_file(args.table)
    if _refuse_errors(table, args.table):
        return 1
    world = World.load(args.world)
    to = results_dir(args.to)
    replayed = replay(table, _load(args, args.captures), world)
    if to:
        replayed = replayed.cache()
        write_results_to(to, {"replay": replayed})
    if args.jsonl:
        _write_lines(replayed, jsonl_column(replayed))
        return 0
    summary = summarize(replayed, table)
    print(f"{args.table}: {len(table.rules)} rule(s), RETRYINT {table.control.retryint} s, "
          f"world {world.name}")
    print(summary.to_text(), end="")
    return 0


def run_diff(args: argparse.Namespace) -> int:
    """Run ``rules diff``; exit status 1 when a table has errors, else 0."""
    from dlqlens.rules.diff import changed, diff, jsonl_column, summarize_diff
    from dlqlens.rules.world import World

    old = parse_file(args.old)
    new = parse_file(args.new)
    bad_old = _refuse_errors(old, args.old)
    bad_new = _refuse_errors(new, args.new)
    if bad_old or bad_new:
        return 1
    world = World.load(args.world)
    diffed = diff(old, new, _load(args, args.captures), world)
    if args.jsonl:
        _write_lines(changed(diffed), jsonl_column(diffed))
        return 0
    print(f"{args.old} -> {args.new}, world {world.name}")
    print(summarize_diff(diffed).to_text(), end="")
    return 0
