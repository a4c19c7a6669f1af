"""``dlqlens detect``: run the detectors over captures and print the findings.

Runs on Spark (Java 17+).

Text output lists the findings most severe first, each the text of its
explanation (:func:`dlqlens.explain.explain_finding`): a heading line
(severity, kind, queues, time window, message count), its statement, its
severity and why, its evidence as named facts, its messages as a filter and
what to check or do next; ``--jsonl`` prints one JSON object per finding
instead (:func:`dlqlens.detect.findings.finding_record`). Either way a finding
lists its ``message_count`` and a bounded sample of its messages (the first
``--sample`` by capture and message number, default 10), never all of them:
a finding of a large capture holds hundreds of thousands. All of a finding's
messages are the links of its ``finding_id`` (``dlqlens.detect.run_detectors``,
or ``dlqlens export --finding KIND``).
Values that come from the captures (queue names, application names) are
printed with control characters escaped, so a hostile message cannot drive
the terminal.
"""

from __future__ import annotations

import json
import sys

from dlqlens.commands.common import (add_capture_time_option, add_captures_argument,
                                     add_format_option, add_master_option, add_mode_option,
                                     add_results_to_option, capture_times, load_captures,
                                     plan_captures, print_names, results_dir, write_results_to)
from dlqlens.detect.findings import SAMPLE_SIZE


def register(sub) -> None:
    p = sub.add_parser(
        "detect", help="find failure patterns (backout loops, expiry build-up, ...) in captures",
        description="Run the detectors over one or many captures (snapshots of a dead-letter "
                    "queue, and backout, initiation and application queues beside it) and print "
                    "the findings, most severe first. Runs on Spark (Java 17+).")
    add_captures_argument(p, nargs="*")
    p.add_argument("--queue-defs", metavar="FILE",
                   help="queue definitions as MQSC DEFINE QLOCAL(...) text (dmpmqcfg output): "
                        "BOTHRESH, BOQNAME, trigger attributes")
    p.add_argument("--detectors", metavar="NAME[,NAME...]", action="append",
                   help="detectors to run (default: all); repeat or separate with commas")
    p.add_argument("--param", metavar="NAME=VALUE", action="append", default=[],
                   help="a detector parameter, e.g. --param backout_threshold=5 "
                        "--param max_gap=120 (VALUE read as JSON when it parses, else text)")
    add_capture_time_option(p)
    p.add_argument("--jsonl", action="store_true", help="one JSON object per finding")
    p.add_argument("--sample", metavar="N", type=int, default=SAMPLE_SIZE,
                   help=f"messages listed per finding, the first by capture and message number "
                        f"(default {SAMPLE_SIZE}; the count is always of all of them)")
    p.add_argument("--list", action="store_true", help="print the detector names and exit")
    add_results_to_option(p, "the findings (one row per finding)")
    add_format_option(p)
    add_mode_option(p)
    add_master_option(p)
    p.set_defaults(func=run_detect)


def parse_params(items) -> dict:
    """``["name=value", ...]`` -> ``{name: value}`` (values JSON when they parse).

    Raises
    ------
    dlqlens.errors.UsageError
        For an item without ``=`` or with an empty name.
    """
    from dlqlens.errors import UsageError

    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise UsageError(f"--param {item!r}: expected NAME=VALUE")
        try:
            out[name] = json.loads(value)
        except ValueError:
            out[name] = value
        if isinstance(out[name], list):
            out[name] = tuple(out[name])
    return out


def detector_names(values) -> list[str] | None:
    """The ``--detectors`` values split on commas, checked against the registry."""
    from dlqlens.detect import DETECTORS
    from dlqlens.errors import UsageError

    if not values:
        return None
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    unknown = [n for n in names if n not in DETECTORS]
    if unknown:
        raise UsageError(f"unknown detector(s) {', '.join(unknown)}; known: "
                         f"{', '.join(sorted(DETECTORS))}")
    return names


def load_queue_defs(path):
    """Queue definitions from an MQSC file (:func:`dlqlens.mq.mqsc.read_queue_defs`)."""
    from dlqlens.errors import UsageError
    from dlqlens.mq.mqsc import read_queue_defs

    try:
        return read_queue_defs(path)
    except OSError as exc:
        raise UsageError(f"--queue-defs {path}: {exc.strerror or exc}") from None


def format_finding(record: dict, *, capture_queues=None) -> str:
    """The text form of one :func:`finding_record` dict (several lines, no
    trailing newline): the view of its explanation
    (:meth:`dlqlens.explain.finding.FindingExplanation.to_text`), ending with
    what to check or do next.

    ``capture_queues`` (``{source: (qmgr, queue)}``) names the queue manager
    of a capture's queue for the commands."""
    from dlqlens.explain.finding import explain_finding

    return explain_finding(record, capture_queues=capture_queues).to_text()


def run_detect(args) -> int:
    from dlqlens.commands.common import captured_queues
    from dlqlens.detect import (DETECTORS, detector_input, finding_record, run_detectors,
                                sample_links)
    from dlqlens.errors import UsageError
    from dlqlens.safe import json_dumps
    from dlqlens.spark.caches import Caches

    if args.list:
        return print_names(DETECTORS)
    if not args.captures:
        raise UsageError("detect: give at least one CAPTURE (file, directory or glob pattern)")
    names = detector_names(args.detectors)
    if args.sample < 1:
        raise UsageError(f"detect: --sample must be 1 or more, not {args.sample}")
    params = parse_params(args.param)
    queue_defs = load_queue_defs(args.queue_defs) if args.queue_defs else None
    to = results_dir(args.to)
    pieces = plan_captures(args.captures, args.format, args.mode)  # before Spark starts
    # the queue each file was taken from, from its banner; --param capture_queues wins
    capture_queues = {**captured_queues(pieces), **(params.pop("capture_queues", None) or {})}
    # when each file was taken: --param capture_time, else --capture-time, else the banners
    if "capture_time" not in params:
        taken = capture_times(args.capture_time, pieces)
        if taken is not None:
            params["capture_time"] = taken
    df, _ = load_captures(args, args.captures, mode=args.mode, pieces=pieces)
    with Caches() as caches:
        # decode once; every detector then reads the cached rows, of which only what they read
        df = caches.cache(detector_input(df))
        df.count()
        try:  # each detector's findings, cached: the links read them
            findings, links = run_detectors(df, names, queue_defs=queue_defs,
                                            capture_queues=capture_queues or None,
                                            persisted=caches, **params)
        except (TypeError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        if to:  # computed once, written and printed (the links: sampled, then written)
            findings, links = caches.cache_all(findings, links)
        # the findings are few; of their messages, only the sample comes to the driver
        rows = findings.collect()
        samples = {r["finding_id"]: r["messages"]
                   for r in sample_links(links, args.sample).collect()} if rows else {}
        out = sys.stdout
        counts: dict[str, int] = {}
        for row in rows:
            rec = finding_record(row, messages=samples.get(row["finding_id"], []))
            counts[rec["severity"]] = counts.get(rec["severity"], 0) + 1
            if args.jsonl:
                out.write(json_dumps(rec) + "\n")
            else:
                out.write(format_finding(rec, capture_queues=capture_queues) + "\n\n")
        out.flush()
        write_results_to(to, {"findings": findings, "links": links})
    total = sum(counts.values())
    by = ", ".join(f"{counts[s]} {s}" for s in ("critical", "high", "medium", "low", "info")
                   if s in counts)
    print(f"dlqlens: {total} finding(s)" + (f": {by}" if by else ""), file=sys.stderr)
    return 0
