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
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from data import make_messages, make_table  # noqa: E402  (benchmarks/data.py)


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
