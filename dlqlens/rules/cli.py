"""``dlqlens rules`` command: check a runmqdlq rules table.

Usage::

    dlqlens rules check TABLE [--json] [--dlq NAME]

Parses TABLE the way runmqdlq reads its rules from stdin, reports what the
handler's start-up validation would reject (diagnostics) and what an auditor
should look at (lint). ``--dlq NAME`` names the dead-letter queue the table is
run against (as runmqdlq's ``QName`` parameter; it overrides INPUTQ) so that
forwarding loops can be found.

Exit status: 1 when the table has errors (the handler would not start), 0
otherwise (warnings and lint findings do not change it). An unreadable file
raises :class:`dlqlens.errors.RulesError`, which ``dlqlens`` prints as one
line (exit status 2).

Human output (standard output), diagnostics first, then lint findings, each
on one line::

    TABLE:LINE:COL: severity code: message

followed by a one-line summary on standard error.

JSON output (``--json``): exactly one JSON object on standard output. This is
a stable contract read by other tools; fields are only ever added:

``control`` (object)
    The control-data entry with defaults filled in: ``INPUTQ`` (str, ``" "``
    = the queue manager's DLQ), ``INPUTQM`` (str, ``" "`` = the default
    queue manager), ``RETRYINT`` (int seconds, default 60), ``WAIT``
    (``"YES"`` default, ``"NO"``, or int seconds), ``line`` (int, or null
    when the table has no control data).
``rules`` (array, table order)
    One object per rule entry, also rules with errors: ``index`` (int, from
    1), ``line``, ``column`` (int); the pattern keywords ``APPLIDAT``
    ``DESTQ`` ``DESTQM`` ``FORMAT`` ``APPLNAME`` ``REPLYQ`` ``REPLYQM``
    ``USERID`` (str patterns, ``"*"`` when omitted) and ``APPLTYPE``
    ``FEEDBACK`` ``MSGTYPE`` ``REASON`` ``PERSIST`` (int after symbolic-name
    resolution, or ``"*"``); the action keywords ``ACTION`` (str, null when
    missing or invalid), ``FWDQ`` (str or null), ``FWDQM`` (str, default
    ``" "``), ``HEADER`` (``"YES"``/``"NO"``), ``PUTAUT``
    (``"DEF"``/``"CTX"``), ``RETRY`` (int, default 1); ``specified``
    (array of the keywords written, in order).
``diagnostics`` (array, file order)
    ``line``, ``column`` (int), ``severity`` (``"error"``/``"warning"``),
    ``code`` (str, see :data:`dlqlens.rules.validate.CODES`), ``message``
    (str), ``found``, ``expected`` (str or null), ``rule_index`` (int or
    null).
``lint`` (array, file order)
    ``code`` (str, see :data:`dlqlens.rules.lint.CODES`), ``rule_index``
    (int or null), ``message`` (str), ``severity`` (``"warning"``/``"info"``),
    ``line``, ``column`` (int or null), ``related`` (array of rule indexes),
    ``reasoning`` (str or null).
"""

from __future__ import annotations

import argparse
import json
import sys

from dlqlens.rules.lint import lint
from dlqlens.rules.parser import parse_file

__all__ = ["register", "run_check"]


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
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    """Run ``rules check``; return the exit status (1 if errors, else 0)."""
    table = parse_file(args.table)
    findings = lint(table, dlq_name=args.dlq)
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
