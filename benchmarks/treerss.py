"""Run a command and report its seconds, the peak resident memory of its
process tree (the command, the JVM it starts, Spark's Python workers: the sum
of their ``VmRSS``, sampled every 0.2 s) and the load average before and after.

    python benchmarks/treerss.py -- dlqlens detect DIR --jsonl

Prints one JSON line on standard error after the command's own output; exit
status is the command's. Linux only (``/proc``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_mb(root: int) -> float:
    """The summed ``VmRSS`` of ``root`` and every descendant, MB."""
    kids = _children()
    todo, total = [root], 0
    while todo:
        pid = todo.pop()
        total += _rss_kb(pid)
        todo.extend(kids.get(pid, ()))
    return total / 1024


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    load_before = os.getloadavg()
    start = time.perf_counter()
    proc = subprocess.Popen(argv)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, tree_rss_mb(proc.pid))
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    print(json.dumps({"command": argv, "exit": proc.returncode, "seconds": round(seconds, 1),
                      "peak_tree_rss_mb": round(peak), "load_before": load_before,
                      "load_after": os.getloadavg()}), file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
