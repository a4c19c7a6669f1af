"""Rules-table replay throughput on one core.

    python benchmarks/replay.py [--messages N] [--rules R] [--world W] [--json]

Writes a seeded raw capture of N dead letters (default 200,000) and a
generated table of R rules (default 100: generic DESTQ/APPLNAME/REPLYQ
patterns, REASON/MSGTYPE/PERSIST values, RETRY/FWD/DISCARD/IGNORE actions
with substitutions, a final catch-all), starts Spark on ``local[1]`` and
times, each after one warm-up run:

* ``decode``: reading and decoding the capture alone (the floor of any
  analysis over a capture file);
* ``replay_end_to_end``: read + decode + :func:`dlqlens.rules.replay.replay`,
  every output column materialised (Spark ``noop`` sink);
* ``replay_only``: the replay over the decoded MQMD/MQDLH columns cached in
  memory, i.e. the cost of the rules engine itself.

Prints messages per second for each; ``--json`` prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time

QUEUES = [f"APP.{area}.{kind}" for area in ("ORDERS", "PAYMENTS", "STOCK", "BILLING", "AUDIT")
          for kind in ("IN", "REPLY", "EVENTS", "BATCH", "RETRY")]
APPS = ["order-svc", "pay-gw", "stock.jar", "amqrmppa", "billing-batch", "audit"]
QMGRS = ["QM1", "QM2", "QMGW.EU", "QMGW.US"]
REASONS = [2053, 2051, 2085, 2035, 2087, 2189, 2030, 2052]


def make_table(n_rules: int, seed: int = 7) -> str:
    """A rules table of ``n_rules`` rules (the last a catch-all), seeded."""
    rng = random.Random(seed)
    lines = ["INPUTQ(SYSTEM.DEAD.LETTER.QUEUE) RETRYINT(30) WAIT(NO)"]
    for i in range(n_rules - 1):
        pats = []
        choice = rng.random()
        if choice < 0.4:
            q = rng.choice(QUEUES)
            pats.append(f"DESTQ({q.rsplit('.', 1)[0]}.*)" if rng.random() < 0.5 else f"DESTQ({q})")
        if rng.random() < 0.6:
            pats.append(f"REASON({rng.choice(REASONS)})")
        if rng.random() < 0.25:
            app = rng.choice(APPS)
            pats.append(f"APPLNAME('{app[:3]}*')" if rng.random() < 0.5 else f"APPLNAME('{app}')")
        if rng.random() < 0.15:
            pats.append(f"DESTQM({rng.choice(QMGRS)[:3]}?*)")
        if rng.random() < 0.1:
            pats.append("MSGTYPE(MQMT_REQUEST) REPLYQ(?*)")
        if rng.random() < 0.1:
            pats.append("PERSIST(MQPER_PERSISTENT)")
        if not pats:
            pats.append(f"REASON({rng.choice(REASONS)})")
        action = rng.random()
        if action < 0.35:
            act = f"ACTION(RETRY) RETRY({rng.randint(1, 6)})"
        elif action < 0.55 and "REPLYQ(?*)" in " ".join(pats):
            act = "ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM)"
        elif action < 0.8:
            act = f"ACTION(FWD) FWDQ(DEADQ.{i:03d}) HEADER({rng.choice(['YES', 'NO'])})"
        elif action < 0.9:
            act = "ACTION(FWD) FWDQ(&DESTQ) FWDQM(&DESTQM)"
        elif action < 0.97:
            act = "ACTION(DISCARD)"
        else:
            act = "ACTION(IGNORE)"
        lines.append(" ".join(pats) + " " + act)
    lines.append("ACTION(FWD) FWDQ(REALLY.DEAD.QUEUE) HEADER(YES)")
    return "\n".join(lines) + "\n"


def make_messages(n: int, seed: int = 11):
    """``n`` dead letters with varied destinations, reasons and contexts."""
    from dlqlens.capture.message import dead_letter

    rng = random.Random(seed)
    for i in range(n):
        request = rng.random() < 0.2
        yield dead_letter(
            {"Format": "MQSTR", "PutApplName": rng.choice(APPS), "PutApplType": 6,
             "MsgType": 1 if request else 8, "Persistence": rng.randint(0, 1),
             "ReplyToQ": f"REPLY.{rng.randint(0, 9)}" if request else "",
             "ReplyToQMgr": rng.choice(QMGRS) if request else "",
             "UserIdentifier": "appuser", "PutDate": "20240315", "PutTime": "10153012",
             "MsgId": i.to_bytes(24, "big")},
            {"Reason": rng.choice(REASONS), "DestQName": rng.choice(QUEUES),
             "DestQMgrName": rng.choice(QMGRS), "PutApplType": 6, "PutApplName": "amqrmppa",
             "PutDate": "20240315", "PutTime": "10153157"},
            b'{"order":%d}' % i)


def _time(fn) -> float:
    fn()  # warm-up (JIT, Python workers)
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--rules", type=int, default=100)
    ap.add_argument("--world", default="pessimistic")
    ap.add_argument("--master", default="local[1]")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from dlqlens.capture.raw import write_raw
    from dlqlens.rules import parse
    from dlqlens.rules.replay import replay
    from dlqlens.spark import get_spark, load_capture

    table = parse(make_table(args.rules))
    if not table.ok:
        print("\n".join(d.format() for d in table.errors), file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.raw")
        write_raw(path, make_messages(args.messages))
        spark = get_spark(args.master, app_name="dlqlens-bench-replay")
        capture = load_capture(spark, path)

        def sink(df):
            df.write.format("noop").mode("overwrite").save()

        decode = _time(lambda: sink(capture.select("source", "message_number", "md", "dlh")))
        end_to_end = _time(lambda: sink(replay(table, capture, args.world)))
        cached = capture.select("source", "message_number", "md", "dlh").cache()
        cached.count()
        only = _time(lambda: sink(replay(table, cached, args.world)))
        spark.stop()
    n = args.messages
    result = {
        "messages": n, "rules": len(table.rules), "world": args.world, "master": args.master,
        "decode_msgs_per_s": round(n / decode),
        "replay_end_to_end_msgs_per_s": round(n / end_to_end),
        "replay_only_msgs_per_s": round(n / only),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{n} messages, {len(table.rules)}-rule table, world {args.world}, {args.master}")
        print(f"  decode only           {result['decode_msgs_per_s']:>10,} msgs/s")
        print(f"  replay (read+decode)  {result['replay_end_to_end_msgs_per_s']:>10,} msgs/s")
        print(f"  replay (cached input) {result['replay_only_msgs_per_s']:>10,} msgs/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
