"""``dlqlens simulate``: write a named scenario's captures and ground truth."""

from __future__ import annotations

import sys

from dlqlens.commands.common import print_names


def register(sub) -> None:
    p = sub.add_parser(
        "simulate", help="simulate a queue-manager failure scenario; write captures + ground truth",
        description="Run a named, seeded queue-manager failure scenario and write the capture "
                    "file of every queue it captures, ground_truth.jsonl (one object per captured "
                    "message) and manifest.json into --out. See `dlqlens simulate --list`.")
    p.add_argument("scenario", nargs="?", metavar="SCENARIO", help="scenario name")
    p.add_argument("--list", action="store_true", help="print the scenario names, one per line")
    p.add_argument("--size", type=int, default=100,
                   help="messages the scenario's workload puts (default 100)")
    p.add_argument("--format", default="amqsbcg", choices=("amqsbcg", "dmpmqmsg", "raw"),
                   help="capture format (default amqsbcg)")
    p.add_argument("--encoding", type=int, default=546, choices=(546, 273, 785),
                   help="MQENC_NATIVE of the captured queue manager: 546 Linux x86-64 (default), "
                        "273 AIX, 785 z/OS")
    p.add_argument("--ccsid", type=int, default=None,
                   help="CCSID of the captured queue manager (default 1208, 819 or 500)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--qmgr", default=None, metavar="NAME",
                   help="name of the captured queue manager (default: the scenario's, e.g. QM.HUB)")
    p.add_argument("--start", default=None, metavar="TIME",
                   help="simulated UTC time the run begins, ISO 8601 "
                        "(default 2024-03-15T08:00:00Z)")
    p.add_argument("--amqsbcg-layout", default="9.3.4", choices=("9.3.4", "classic"),
                   help="amqsbcg output of MQ 9.3.4 and later, with a formatted MQDLH block "
                        "(default), or the classic layout (MQDLH only in the hex dump)")
    p.add_argument("--out", metavar="DIR", help="output directory")
    p.set_defaults(func=run_simulate)


def run_simulate(args) -> int:
    from dlqlens.errors import UsageError
    from dlqlens.sim.runner import simulate
    from dlqlens.sim.scenarios import SCENARIOS

    if args.list:
        return print_names(SCENARIOS)
    if not args.scenario:
        raise UsageError("simulate: give a SCENARIO (see --list)")
    if not args.out:
        raise UsageError("simulate: --out DIR is required")
    manifest = simulate(args.scenario, args.size, args.out, format=args.format,
                        encoding=args.encoding, ccsid=args.ccsid, seed=args.seed,
                        start=args.start, dlh_block=args.amqsbcg_layout == "9.3.4",
                        qmgr=args.qmgr)
    for c in manifest["captures"]:
        print(f"{c['file']}\t{c['messages']} message(s)\t{c['qmgr']} {c['queue']}")
    patterns = ", ".join(f"{k} {v}" for k, v in manifest["patterns"].items())
    print(f"ground_truth.jsonl\t{sum(c['messages'] for c in manifest['captures'])} "
          f"message(s)\t{patterns}", file=sys.stdout)
    return 0
