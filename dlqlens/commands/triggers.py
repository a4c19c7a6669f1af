"""``dlqlens triggers evaluate``: the trigger-condition evaluator on the command line."""

from __future__ import annotations

import sys

from dlqlens.commands.common import whole_number
from dlqlens.mq.vocabulary import ATTRIBUTES

_TRIGINT = ATTRIBUTES["QMGR"]["trigint"]


def register(sub) -> None:
    p = sub.add_parser(
        "triggers", help="explain triggering: which events make trigger messages, and why not",
        description="Tools for MQ triggering (IBM 'Conditions for a trigger event').")
    tsub = p.add_subparsers(dest="triggers_command", metavar="COMMAND")
    tsub.required = True
    e = tsub.add_parser(
        "evaluate", help="replay events against queue definitions; say which trigger",
        description="Replay a sequence of events (puts, gets, opens/closes for input, "
                    "commits/backouts, ALTERs, trigger monitor start/stop, process definitions "
                    "created/deleted) against MQSC queue definitions (dmpmqcfg output) and print, "
                    "for each event, whether the queue manager makes a trigger message, of what "
                    "kind, or the number and text of the condition that stopped it. Events: JSON "
                    "Lines or the compact text form (see docs/triggering.md).")
    e.add_argument("--queue-defs", required=True, metavar="FILE",
                   help="MQSC definitions: DEFINE QLOCAL/PROCESS, ALTER QMGR TRIGINT")
    e.add_argument("--events", required=True, metavar="FILE", help="events file")
    e.add_argument("--trigint", type=whole_number(_TRIGINT.low, _TRIGINT.high), default=None, metavar="MS",
                   help="queue manager TRIGINT in milliseconds (default: the definitions' ALTER "
                        "QMGR TRIGINT, else 999999999)")
    e.add_argument("--platform", default="linux", choices=("linux", "aix", "windows", "zos"),
                   help="queue manager platform; zos applies condition 5 (default linux)")
    e.add_argument("--jsonl", action="store_true",
                   help="one JSON object per outcome instead of text lines")
    e.set_defaults(func=run_evaluate)


def run_evaluate(args) -> int:
    from dlqlens.safe import json_dumps
    from dlqlens.trigger_events.evaluator import evaluate_files

    outcomes = evaluate_files(args.queue_defs, args.events, trigint=args.trigint,
                              platform=args.platform)
    out = sys.stdout
    if args.jsonl:
        for o in outcomes:
            out.write(json_dumps(o.to_dict()) + "\n")
        return 0
    for o in outcomes:
        out.write(o.to_text() + "\n")
    made = sum(o.trigger for o in outcomes)
    out.write(f"{made} trigger message(s) from {len({o.line for o in outcomes})} event(s)\n")
    return 0
