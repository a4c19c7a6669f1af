"""``dlqlens audit``: the structural and hygiene suites over captures, as a pipeline gate.

Runs :func:`dlqlens.quality.audit` on Spark and prints one line per
expectation (status, name, what was observed, what was expected), the
failing messages of each failed expectation as a filter, and a summary.
Exit status 0 when no expectation fails, 1 when one does (each failed one
named on standard error), 2 on bad arguments or unreadable input.

A directory the simulator wrote (``dlqlens simulate``: ``manifest.json`` and
``ground_truth.jsonl`` beside the captures) is read as such: its captures
are those the manifest lists; the DLQ captures among them (the queue is the
queue manager's DEADQ in ``--queue-defs``, else ``SYSTEM.DEAD.LETTER.QUEUE``,
the simulator's) are audited as the DLQ, the others (application, backout,
initiation queues) only feed the detectors; the manifest's ``captured_at``
is the capture time and its queue names name the captures. A Parquet
directory that ``dlqlens decode --to`` wrote from a simulator directory is
read the same way: its marker keeps what the manifest said
(:func:`manifest_captures`).
"""

from __future__ import annotations

import json
import os
import sys

from dlqlens.commands.common import (add_capture_time_option, add_captures_argument,
                                     add_format_option, add_master_option, capture_time_arg,
                                     capture_times, load_captures, plan_captures)
from dlqlens.errors import UsageError
from dlqlens.safe import json_dumps, one_line

#: The file that marks a directory written by ``dlqlens simulate``.
MANIFEST = "manifest.json"


def register(sub) -> None:
    p = sub.add_parser(
        "audit", help="check captures against the structural and hygiene suites (exit 1 on "
                      "a failed expectation; runs on Spark)",
        description="Validate the structural suite (every decoded MQ structure well formed) "
                    "and the hygiene suite (message age, fall-through to the implicit IGNORE "
                    "under --rules, backout loops, trigger storms and orphaned replies, "
                    "messages without an MQDLH, persistent share, depth against MAXDEPTH "
                    "with --queue-defs) with great-expectations, and exit 1 naming each "
                    "failed expectation. A directory written by 'dlqlens simulate' is read "
                    "through its manifest.json. Thresholds: --policy FILE (TOML; "
                    "docs/quality.md). Needs Java 17+ (Spark).")
    add_captures_argument(p)
    p.add_argument("--rules", metavar="TABLE", help="a runmqdlq rules table to replay")
    p.add_argument("--queue-defs", metavar="FILE",
                   help="queue definitions as MQSC DEFINE text (dmpmqcfg output)")
    p.add_argument("--policy", metavar="FILE", help="the thresholds, a TOML file (docs/quality.md)")
    p.add_argument("--suite", action="append", choices=("structural", "hygiene"),
                   help="run only this suite (repeatable; default both)")
    p.add_argument("--world", default="optimistic", metavar="optimistic|pessimistic|FILE",
                   help="outcome of the DLQ handler's puts in the replay (default optimistic)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")
    add_capture_time_option(p)
    add_format_option(p)
    add_master_option(p)
    p.set_defaults(func=run_audit)


def read_manifest(directory: str) -> dict | None:
    """The ``manifest.json`` of a directory written by ``dlqlens simulate``, or None.

    Raises
    ------
    dlqlens.errors.UsageError
        When the manifest is not JSON or lacks ``captures`` (file and what
        was found named).
    """
    from dlqlens.errors import UsageError

    path = os.path.join(directory, MANIFEST)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a readable manifest: {exc}") from None
    captures = manifest.get("captures") if isinstance(manifest, dict) else None
    if not isinstance(captures, list) or not all(
            isinstance(c, dict) and isinstance(c.get("file"), str) for c in captures):
        raise UsageError(f"{path}: expected a 'captures' list of objects with a 'file', "
                         f"found {type(captures).__name__}")
    return manifest


def expand_captures(paths, deadq: str) -> tuple:
    """Replace each simulator directory of ``paths`` by its captures.

    Returns
    -------
    (list, set or None, dict, dict, dict, set)
        The capture paths; the manifest captures of the DLQ (None when no
        directory had a manifest: every capture is the DLQ's); the queue
        name per DLQ path; ``(qmgr, queue)`` per manifest capture; the
        manifest's ``captured_at`` per capture path; the manifest captures
        of other queues (every capture not among them is audited as the
        DLQ's, those of plain files and directories included).
    """
    from dlqlens.errors import UsageError

    out, dlq, dlq_queues, queues, times, others = [], set(), {}, {}, {}, set()
    any_manifest = False
    for path in paths:
        manifest = read_manifest(path) if os.path.isdir(path) else None
        if manifest is None:
            out.append(path)  # audited as the DLQ: its files are not in ``others``
            continue
        any_manifest = True
        for c in manifest["captures"]:
            name = os.path.basename(c["file"])  # a name in the directory, never a path
            if name != c["file"] or name in ("", ".", ".."):
                raise UsageError(f"{os.path.join(path, MANIFEST)}: capture {c['file']!r}: "
                                 "expected a file name in the directory")
            file = os.path.join(path, name)
            out.append(file)
            _place(file, c.get("qmgr"), c.get("queue"), manifest.get("captured_at"), deadq,
                   (dlq, dlq_queues, queues, times, others))
    return out, (dlq if any_manifest else None), dlq_queues, queues, times, others


def _place(file: str, qmgr, queue, captured_at, deadq: str, sets: tuple) -> None:
    """Record one manifest capture in :func:`expand_captures`'s sets and maps
    ``(dlq, dlq_queues, queues, times, others)``: the DLQ's when its queue is
    ``deadq``, else another queue's."""
    dlq, dlq_queues, queues, times, others = sets
    if queue:
        queues[file] = (qmgr, queue)
    if queue == deadq:
        dlq.add(file)
        dlq_queues[file] = queue
    else:
        others.add(file)
    if captured_at:
        times[file] = captured_at


def manifest_captures(paths) -> dict:
    """What the simulator manifests among ``paths`` say of each of their captures.

    Parameters
    ----------
    paths : list of str
        What a command was given as captures; directories written by
        ``dlqlens simulate`` are read through their ``manifest.json``
        (:func:`read_manifest`), other paths are left out.

    Returns
    -------
    dict
        Capture path (the directory joined with the manifest's file name) ->
        ``{"qmgr", "queue", "captured_at"}`` (each None when the manifest
        does not say); empty when no path is a simulator directory.
        ``dlqlens decode --to`` keeps it in the Parquet marker, so that
        ``dlqlens audit`` reads such a directory as the simulator directory.

    Raises
    ------
    dlqlens.errors.UsageError
        For a manifest that is not JSON, lacks ``captures`` or names a
        file outside its directory.
    """
    from dlqlens.sim.scenarios import DLQ

    _, dlq, _, queues, times, others = expand_captures(paths, DLQ)
    return {f: {"qmgr": queues.get(f, (None, None))[0], "queue": queues.get(f, (None, None))[1],
                "captured_at": times.get(f)}
            for f in sorted((dlq or set()) | others)}


def _from_markers(pieces, deadq: str) -> tuple:
    """:func:`expand_captures`'s sets and maps for Parquet directories decoded from
    simulator directories (the manifests kept in their markers), by ``source``."""
    from dlqlens.errors import UsageError

    sets = dlq, dlq_queues, queues, times, others = set(), {}, {}, {}, set()
    for source, m in pieces.manifests.items():
        for key in ("qmgr", "queue", "captured_at"):  # a marker is input too
            if m.get(key) is not None and not isinstance(m[key], str):
                raise UsageError(f"the marker of {', '.join(pieces.directories)}: manifests: "
                                 f"{source!r}: {key}: expected a string or null, found "
                                 f"{type(m[key]).__name__}")
        _place(source, m.get("qmgr"), m.get("queue"), m.get("captured_at"), deadq, sets)
    return dlq, dlq_queues, queues, times, others


def audit_plan(captures, *, rules=None, queue_defs=None, policy=None, world="optimistic",
               capture_time=None, fmt: str = "auto") -> dict:
    """Everything ``dlqlens audit`` prepares before Spark starts.

    Parameters
    ----------
    captures : list of str
        Capture files, directories (a simulator directory through its
        manifest) or glob patterns.
    rules, queue_defs, policy : str, optional
        Paths of the rules table, the MQSC queue definitions, the TOML policy.
    world : str
        The replay's world.
    capture_time : str, optional
        ``--capture-time`` (ISO 8601).
    fmt : str
        The capture format (``auto``).

    Returns
    -------
    dict
        ``paths`` (the capture files and patterns to load), ``pieces``
        (planned) and ``kwargs`` of :func:`dlqlens.quality.audit` (policy,
        rules, world, queue_defs, dlq_sources, dlq_queues, capture_time,
        capture_queues).

    Raises
    ------
    dlqlens.errors.UsageError, dlqlens.errors.CaptureError, dlqlens.errors.RulesError
        For a bad policy, rules table, queue definitions, world, manifest or
        capture path.
    """
    from dlqlens.commands.common import captured_queues
    from dlqlens.commands.detect import load_queue_defs
    from dlqlens.detect.common import CaptureTimes
    from dlqlens.quality import Policy, load_policy
    from dlqlens.rules.parser import parse_file
    from dlqlens.rules.world import World
    from dlqlens.sim.scenarios import DLQ
    from dlqlens.spark.parquet import MessageInput

    policy = load_policy(policy) if policy else Policy()
    table = parse_file(rules) if rules else None
    defs = load_queue_defs(queue_defs) if queue_defs else None
    world = World.load(world)
    deadq = ((defs.qmgr.get("deadq") or "").strip() if defs is not None else "") or DLQ
    paths, dlq_paths, dlq_queues, queues, times, others = expand_captures(captures, deadq)
    pieces = plan_captures(paths, fmt)
    if isinstance(pieces, MessageInput) and pieces.manifests:
        # decoded from simulator directories: their manifests, kept in the markers
        dlq_paths, dlq_queues, queues, times, others = _from_markers(pieces, deadq)
    taken = capture_times(capture_time, pieces)
    if taken is None and times:
        taken = CaptureTimes({p: capture_time_arg(t) for p, t in times.items()}, origin="given")
    banner_queues = captured_queues(pieces)
    capture_queues = {**queues, **banner_queues}
    dlq_sources = None
    if dlq_paths is not None:
        # a reader records the file's path as planned: keep the planned paths of the DLQ files
        # (every planned file but the manifests' captures of other queues: the files of a
        # plain directory or pattern given beside a simulator directory are DLQ captures)
        planned = {os.path.normpath(p.path): p.path for p in pieces}
        other = {os.path.normpath(p) for p in others}
        dlq_sources = {p.path for p in pieces if os.path.normpath(p.path) not in other}
        dlq_queues = {planned.get(os.path.normpath(p), p): q for p, q in dlq_queues.items()}
        if not dlq_sources:
            raise UsageError(
                f"no capture of the dead-letter queue {one_line(deadq)} to audit: the "
                "simulator manifests name captures of "
                + ", ".join(sorted({one_line(q) for _, q in queues.values()}))
                + " (give --queue-defs whose queue manager's DEADQ is the captured DLQ)")
    for path, (_, queue) in banner_queues.items():
        if dlq_sources is None or path in dlq_sources:
            dlq_queues.setdefault(path, queue)
    return {"paths": paths, "pieces": pieces, "kwargs": dict(
        # the file's path, read again by audit (small): the results' notes then name it
        policy=policy, rules=table, world=world, queue_defs=queue_defs, dlq_sources=dlq_sources,
        dlq_queues=dlq_queues or None, capture_time=taken,
        capture_queues=capture_queues or None)}


def run_audit(args) -> int:
    from dlqlens.quality import audit

    # everything that can be wrong with the arguments fails before the JVM starts
    plan = audit_plan(args.captures, rules=args.rules, queue_defs=args.queue_defs,
                      policy=args.policy, world=args.world, capture_time=args.capture_time,
                      fmt=args.format)
    df, _ = load_captures(args, plan["paths"], mode="PERMISSIVE", pieces=plan["pieces"])
    results = audit(df, suites=tuple(args.suite or ("structural", "hygiene")), **plan["kwargs"])
    if args.json:
        sys.stdout.write(json_dumps(results.to_dict(), default=str) + "\n")
    else:
        sys.stdout.write(results.to_text())
    sys.stdout.flush()
    status = 0
    if results.failed:
        print("dlqlens: audit failed: " + ", ".join(r.name for r in results.failed),
              file=sys.stderr)
        status = 1
    if results.errors:  # not evaluated is not passed: a gate never opens on an error
        print("dlqlens: audit not complete: great-expectations could not evaluate "
              + ", ".join(r.name for r in results.errors), file=sys.stderr)
        status = 1
    return status
