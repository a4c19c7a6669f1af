"""Generate the bundled datasets from seeded simulator runs (the same bytes every run).

    python datasets/generate.py [--out datasets] [--seed 20240315]

Everything is written by :func:`dlqlens.sim.simulate` (``dlqlens simulate``):
the messages are the dead letters a simulated queue manager, its channel
agents, trigger monitor and applications produce, never hand-built, and each
comes with what the simulator knows about it.

``dlq-sample/``
    The dead-letter queues of seven simulated queue managers (QM.ORDERS,
    QM.LEDGER, QM.BILLING, QM.SHOP, QM.PORTAL; MQP1 and MQP2 on z/OS), one
    scenario each (:data:`SAMPLE`), one capture file each, covering every capture
    format (raw, dmpmqmsg with and without its ASCII column, amqsbcg in the
    MQ 9.3.4+ and the classic layout, LF and CRLF line ends), both integer
    byte orders (Linux x86-64 546, AIX 273, z/OS 785) and both character-set
    families (CCSID 1208/819 ASCII, 500/1047 EBCDIC). Their runs start on
    different days of one week, so the sample reads like a fleet's DLQs.
    Beside each capture ``<capture>.expected.jsonl``: the values its decode
    must give (:func:`dlqlens.sim.capture.expected_record`: MQMD, MQDLH and
    MQTM fields, header chain, payload bytes and text, the ground-truth
    ``pattern``), checked by ``tests/test_datasets.py``. This is the input
    of the README's main job, ``dlqlens summary datasets/dlq-sample``.
``scenarios/<scenario>/``
    A small run of every scenario of :data:`dlqlens.sim.SCENARIOS`
    (:data:`SCENARIO_RUNS`): the capture of every queue the scenario
    captures, ``ground_truth.jsonl`` (the contract of :mod:`dlqlens.sim`:
    ``source``, ``message_number``, ``queue``, ``pattern``, ``events``...)
    and ``manifest.json``. Detector tests and notebooks read these.
``snapshots/``
    One DLQ captured twice during an incident (:data:`SNAPSHOTS`): QM.STORE's
    dead-letter queue, where dead letters with an expiry build up, browsed
    with dmpmqmsg at 09:22 and at the end of the run (09:25:05); the messages
    still there then are in both files, those that expired in between
    only in the first. Each with its ``.expected.jsonl`` golden decode. The
    post-mortem notebook loads them beside ``dlq-sample/``.

The seed of each run is derived from ``--seed`` and the run's position in
its table, so adding a run at the end leaves the others' bytes unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

from dlqlens.sim import SCENARIOS, simulate

SEED = 20240315

DLQ = "SYSTEM.DEAD.LETTER.QUEUE"

#: dlq-sample capture -> (scenario, size, format, encoding, CCSID, queue manager,
#: simulate() options, start). ``size`` is chosen so that each DLQ holds about a hundred
#: messages; each run's captured queue manager has its own name (z/OS: a subsystem name).
SAMPLE = {
    "dlq_linux_x86.raw": ("queue_full_burst", 260, "raw", 546, 1208, "QM.ORDERS", {},
                          "2024-03-11T09:12:00Z"),
    "dlq_linux_x86.dmp": ("permissions_change", 500, "dmpmqmsg", 546, 819, "QM.LEDGER",
                          {"writer_options": {"ascii_column": True}}, "2024-03-12T14:03:00Z"),
    "dlq_aix.dmp": ("deleted_queue_after_deploy", 200, "dmpmqmsg", 273, 819, "QM.BILLING", {},
                    "2024-03-13T22:40:00Z"),
    "dlq_aix_mq7.bcg": ("poison_ping_pong", 4000, "amqsbcg", 273, 819, "QM.SHOP",
                        {"dlh_block": False, "writer_options": {"newline": "\r\n"}},
                        "2024-03-14T10:30:00Z"),
    "dlq_zos.raw": ("trigger_storm", 1200, "raw", 785, 500, "MQP1", {}, "2024-03-14T02:15:00Z"),
    "dlq_zos_ebcdic1047.dmp": ("expiry_buildup", 600, "dmpmqmsg", 785, 1047, "MQP2", {},
                               "2024-03-15T06:00:00Z"),
    "dlq_linux_x86_mq94.bcg": ("orphaned_replies", 500, "amqsbcg", 546, 1208, "QM.PORTAL", {},
                               "2024-03-15T11:20:00Z"),
}

#: snapshots/: one run, its DLQ browsed at ``snapshot`` seconds and at the end:
#: (scenario, size, format, encoding, CCSID, queue manager, start, snapshot seconds,
#: name of the snapshot's file, name of the end-of-run file).
SNAPSHOTS = ("expiry_buildup", 300, "dmpmqmsg", 546, 819, "QM.STORE", "2024-03-16T09:00:00Z",
             1320.0, "dlq_store_0922.dmp", "dlq_store_0925.dmp")

#: scenarios/<name>/ -> (size, format, encoding, CCSID): every scenario, small.
SCENARIO_RUNS = {
    "queue_full_burst": (200, "raw", 546, None),
    "deleted_queue_after_deploy": (120, "raw", 546, None),
    "permissions_change": (300, "raw", 546, None),
    "poison_ping_pong": (200, "raw", 546, None),
    "trigger_storm": (300, "raw", 546, None),
    "expiry_buildup": (300, "raw", 546, None),
    "orphaned_replies": (300, "raw", 546, None),
    "clean_baseline": (1000, "raw", 546, None),
}


def _rename_source(path: str, old: str, new: str) -> None:
    """Rewrite the ``source`` of every line of a golden file after a capture's rename."""
    with open(path, encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for rec in lines:
            assert rec["source"] == old, (rec["source"], old)
            rec["source"] = new
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def generate_sample(out: str, seed: int = SEED) -> list[str]:
    """Write every capture of :data:`SAMPLE` and its golden decode into ``out``.

    Each run goes to a scratch directory; its DLQ capture and golden file are
    moved to ``out`` under the sample's name (the golden ``source`` renamed).
    Returns the capture file names.
    """
    os.makedirs(out, exist_ok=True)
    names = []
    for k, (name, spec) in enumerate(SAMPLE.items()):
        scenario, size, fmt, enc, ccsid, qmgr, opts, start = spec
        scratch = tempfile.mkdtemp(prefix=".generate-", dir=out)
        try:
            manifest = simulate(scenario, size, scratch, format=fmt, encoding=enc, ccsid=ccsid,
                                qmgr=qmgr, seed=seed * 100 + k, start=start, expected=True,
                                **opts)
            (cap,) = [c for c in manifest["captures"] if c["queue"] == DLQ]
            shutil.move(os.path.join(scratch, cap["file"]), os.path.join(out, name))
            golden = os.path.join(out, name + ".expected.jsonl")
            shutil.move(os.path.join(scratch, cap["file"] + ".expected.jsonl"), golden)
            _rename_source(golden, cap["file"], name)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        names.append(name)
    return names


def generate_snapshots(out: str, seed: int = SEED) -> list[str]:
    """Write the two captures of :data:`SNAPSHOTS` and their golden decodes into ``out``;
    returns the capture file names."""
    scenario, size, fmt, enc, ccsid, qmgr, start, at, first, last = SNAPSHOTS
    os.makedirs(out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=".generate-", dir=out)
    try:
        manifest = simulate(scenario, size, scratch, format=fmt, encoding=enc, ccsid=ccsid,
                            qmgr=qmgr, seed=seed * 100 + 90, start=start, expected=True,
                            snapshots=[at])
        (snap,) = manifest["snapshots"]
        for folder, captures, name in ((os.path.join(scratch, "snapshot-1"), snap["captures"],
                                        first),
                                       (scratch, manifest["captures"], last)):
            (cap,) = [c for c in captures if c["queue"] == DLQ]
            shutil.move(os.path.join(folder, cap["file"]), os.path.join(out, name))
            golden = os.path.join(out, name + ".expected.jsonl")
            shutil.move(os.path.join(folder, cap["file"] + ".expected.jsonl"), golden)
            _rename_source(golden, cap["file"], name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return [first, last]


def generate_scenarios(out: str, seed: int = SEED) -> list[str]:
    """Write a small run of every scenario into ``out/<scenario>/``; returns the scenario names."""
    missing = set(SCENARIOS) - set(SCENARIO_RUNS)
    if missing:
        raise SystemExit(f"scenarios without a dataset run: {', '.join(sorted(missing))}")
    for k, (scenario, (size, fmt, enc, ccsid)) in enumerate(SCENARIO_RUNS.items()):
        target = os.path.join(out, scenario)
        shutil.rmtree(target, ignore_errors=True)
        simulate(scenario, size, target, format=fmt, encoding=enc, ccsid=ccsid,
                 seed=seed * 100 + 50 + k)
    return list(SCENARIO_RUNS)


def generate(out: str, seed: int = SEED) -> list[str]:
    """Write ``out/dlq-sample/``, ``out/snapshots/`` and ``out/scenarios/``; returns the paths
    written (relative)."""
    sample = os.path.join(out, "dlq-sample")
    shutil.rmtree(sample, ignore_errors=True)
    written = [os.path.join("dlq-sample", n) for n in generate_sample(sample, seed)]
    snapshots = os.path.join(out, "snapshots")
    shutil.rmtree(snapshots, ignore_errors=True)
    written += [os.path.join("snapshots", n) for n in generate_snapshots(snapshots, seed)]
    written += [os.path.join("scenarios", n) for n in
                generate_scenarios(os.path.join(out, "scenarios"), seed)]
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                    help="directory receiving dlq-sample/, snapshots/ and scenarios/ "
                         "(default: datasets/)")
    ap.add_argument("--seed", type=int, default=SEED)
    a = ap.parse_args(argv)
    for name in generate(a.out, a.seed):
        print(os.path.join(a.out, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
