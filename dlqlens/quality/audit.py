"""Run the structural and hygiene suites over a capture DataFrame.

:func:`audit` builds the frames the checks read (the capture rows, the DLQ's
rows with their ages, the detectors' findings, the rules replay, the DLQ
depths), validates every check with great-expectations
(:mod:`dlqlens.quality.engine`) and returns :class:`QualityResults`. All of
it is Spark: only metrics, at most five example values per expectation and
one depth per DLQ capture reach the driver.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from functools import cache, partial

from dlqlens.quality.checks import MessageSelection, failing_sql
from dlqlens.quality.hygiene import depth_frame, dlq_frame, hygiene_checks
from dlqlens.quality.policy import Policy
from dlqlens.quality.results import QualityResults, Result
from dlqlens.quality.structural import structural_checks

#: The suites, in the order they run.
SUITES = ("structural", "hygiene")


def _number(v):
    if v is None:
        return None
    return int(v) if float(v).is_integer() else float(v)


def _observed(check, outcome):
    """(passed, observed words, value) of one outcome."""
    r = outcome.result
    if outcome.error:
        return None, f"not evaluated: great-expectations raised: {outcome.error}", None
    if outcome.rows == 0:
        if check.frame == "findings":
            return True, "0 finding(s)", 0
        if check.expectation == "ExpectColumnSumToBeBetween":
            return True, "0 message(s) (no message on the DLQ)", 0
        return None, "not evaluated: no message in the rows read", None
    if check.expectation in ("ExpectColumnMaxToBeBetween", "ExpectColumnSumToBeBetween"):
        value = _number(r.get("observed_value"))
        if value is None:
            why = ("the DLQ's MAXDEPTH is not known" if check.frame == "depth"
                   else "no value in the rows read")
            return None, f"not evaluated: {why}", None
        if check.expectation == "ExpectColumnSumToBeBetween":
            unit = "finding(s)" if check.frame == "findings" else "message(s)"
            return outcome.success, f"{value:,} {unit}", value
        unit = " s (oldest)" if check.column == "age_seconds" else " (highest)"
        shown = f"{value:,}" if isinstance(value, int) else f"{value:,.3f}"
        return outcome.success, shown + unit, value
    total = int(r.get("element_count") or 0)
    missing = int(r.get("missing_count") or 0)
    nonmissing = total - missing
    unexpected = int(r.get("unexpected_count") or 0)
    if nonmissing == 0:
        return None, f"not evaluated: no value in {total:,} row(s)", None
    if check.kwargs.get("mostly") is not None:
        share = (nonmissing - unexpected) / nonmissing
        return (outcome.success, f"{share:.3f} ({nonmissing - unexpected:,} of {nonmissing:,})",
                share)
    return outcome.success, f"{unexpected:,} of {nonmissing:,} unexpected", unexpected


def _selection(check, frames, dlq_predicate, links=None):
    """The failing messages of ``check`` as a filter over the capture DataFrame
    (``links``: the findings' links, for the checks over findings)."""
    from pyspark.sql import functions as F

    sql = failing_sql(check)
    if check.frame == "messages":
        return MessageSelection(sql, f"capture rows where {sql}")
    if check.frame == "dlq" and check.row_predicate:
        pred = sql if dlq_predicate is None else f"({dlq_predicate}) AND ({sql})"
        return MessageSelection(pred, f"DLQ rows where {sql}")
    frame = frames[check.frame]
    if check.frame == "findings":
        # a lazy semi join of the links with the failing findings (a few ids, broadcast)
        rows = links.join(F.broadcast(frame.where(sql).select("finding_id")), "finding_id",
                          "left_semi").select("source", "message_number")
        return MessageSelection(None, f"the messages of the findings where {check.expr} <> 0",
                                rows)
    if check.frame == "depth":
        return MessageSelection(None, f"the DLQ captures where {sql}",
                                frame.where(sql), on=("source",))
    return MessageSelection(None, f"{check.frame} rows where {sql}", frame.where(sql))


def _source_literals(sources) -> str:
    from dlqlens.spark.columns import sql_literal

    return "source IN (" + ", ".join(sql_literal(s) for s in sorted(sources)) + ")"


def audit(df, *, policy: Policy | None = None, rules=None, world="optimistic",
          queue_defs=None, dlq_sources=None, dlq_queues=None, capture_time=None,
          capture_queues=None, suites=SUITES) -> QualityResults:
    """Validate the structural and hygiene suites on a capture DataFrame.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (:func:`dlqlens.spark.load_capture`, every column):
        the DLQ captures and, optionally, captures of queues beside it (for
        the detectors). Cached for the audit's duration, without the
        messages' bytes (:func:`dlqlens.detect.analysis_input`: no check
        reads them), unless the caller has cached it; then, past
        :data:`dlqlens.detect.SMALL_CAPTURE_MESSAGES` messages, the
        detectors of ``forbidden_findings`` read a cache of their own
        (:func:`dlqlens.detect.detector_input` of it: the fields they read),
        as the report's do. Every cache the audit makes is unpersisted
        before it returns or raises.
    policy : Policy, optional
        The thresholds (default :class:`Policy`'s defaults).
    rules : str, path or RulesTable, optional
        A runmqdlq rules table: adds ``hygiene.fall_through`` (the table
        replayed over the DLQ's rows; rules with errors left out).
    world : str or World
        The replay's world (:mod:`dlqlens.rules.world`).
    queue_defs : str, path or Definitions, optional
        Queue definitions (MQSC): given to the detectors, and adds
        ``hygiene.depth``.
    dlq_sources : collection of str, optional
        The ``source`` values of the captures of the DLQ; default: every
        capture is the DLQ's.
    dlq_queues : dict of str to str, optional
        The DLQ's queue name per DLQ ``source``, for its MAXDEPTH; default
        the queue definitions' DEADQ (ALTER QMGR DEADQ).
    capture_time : datetime, str or mapping, optional
        When the captures were taken (UTC), by source or for all; default
        each capture's newest put (the notes say so).
    capture_queues : dict, optional
        The queue each capture was taken from, for the detectors
        (:func:`dlqlens.capture.reader.captured_queues`).
    suites : tuple of str
        Among :data:`SUITES`.

    Returns
    -------
    QualityResults
        One result per expectation: structural ones first (their order is
        the field tables'), then hygiene.

    Raises
    ------
    dlqlens.errors.UsageError
        For an unknown suite.
    dlqlens.errors.RulesError, dlqlens.mq.mqsc.MqscError
        When the rules table or the queue definitions cannot be read.

    Notes
    -----
    The session's configuration is left as it was found; in a session
    dlqlens made, a small capture is audited with the short run's settings
    meanwhile (:func:`dlqlens.spark.session.short_run`).
    """
    from dlqlens.detect import analysis_input, detector_input, run_detectors, small_capture
    from dlqlens.detect.common import with_newest_puts
    from dlqlens.errors import UsageError
    from dlqlens.quality.engine import validate
    from dlqlens.rules.model import RulesTable
    from dlqlens.spark.caches import Caches
    from dlqlens.spark.session import short_run

    unknown = [s for s in suites if s not in SUITES]
    if unknown:
        raise UsageError(f"unknown suite(s) {', '.join(unknown)}: expected {', '.join(SUITES)}")
    policy = policy or Policy()
    table = None
    if rules is not None:
        from dlqlens.rules.parser import parse_file

        table = rules if isinstance(rules, RulesTable) else parse_file(rules)
    defs = None
    if queue_defs is not None:
        from dlqlens.mq.mqsc import read_queue_defs

        defs = queue_defs if isinstance(queue_defs, dict) else read_queue_defs(queue_defs)

    checks = []
    if "structural" in suites:
        checks += structural_checks()
    if "hygiene" in suites:
        checks += hygiene_checks(policy, rules=table is not None, queue_defs=defs is not None)

    notes = []
    was_cached = df.is_cached
    links = None
    with Caches() as caches, ExitStack() as scope:
        if not was_cached:
            # no check reads the messages' bytes: cached without them
            # (dlqlens.detect.BYTE_COLUMNS)
            df = caches.cache(analysis_input(df))
        # counted once, when asked: by the short run, then the detectors' choice of input
        is_small = cache(partial(small_capture, df))
        # a small capture in a session dlqlens made: the short run's settings meanwhile
        scope.enter_context(short_run(df, is_small))
        detected = df
        frames = {"messages": df}
        dlq_predicate = None if dlq_sources is None else _source_literals(dlq_sources)
        if "hygiene" in suites:
            # each capture's newest put, where no time is given: one query for the ages
            # and the detectors (no window over each capture's rows)
            timed = with_newest_puts(df, capture_time)
            dlq = dlq_frame(df, dlq_sources, timed)
            frames["dlq"] = dlq
            kinds = list(policy.forbidden_findings)
            if kinds:
                timing = {} if timed is None else {"capture_time": timed}
                small = None  # counted by run_detectors unless known here
                if not was_cached:
                    small = is_small()
                    if not small:
                        # a large capture: the detectors read a cache of the fields they read
                        # (dlqlens.detect.detector_input), not the audit's cache of every
                        # header field (a struct column is read whole from a cache), as the
                        # report's do
                        detected = caches.cache(detector_input(df))
                findings, links = run_detectors(detected, kinds, queue_defs=defs, small=small,
                                                capture_queues=capture_queues or None, **timing)
                frames["findings"] = caches.cache(findings)
            if table is not None:
                from dlqlens.rules.replay import replay

                # a small capture's fates decided on the driver (no Python worker to start)
                frames["replay"] = replay(table, dlq, world, allow_errors=True, small=is_small())
            if defs is not None:
                depths = {r["source"]: int(r["count"])
                          for r in dlq.groupBy("source").count().collect()}
                deadq = (defs.qmgr.get("deadq") or "").strip() if hasattr(defs, "qmgr") else ""
                queues = {s: (dlq_queues or {}).get(s) or deadq or None for s in depths}
                frames["depth"] = depth_frame(df.sparkSession, depths, queues, defs)
                undefined = sorted({q for q in queues.values() if q and q not in defs})
                if undefined:
                    notes.append("MAXDEPTH unknown: no definition of " + ", ".join(undefined)
                                 + " in " + (os.fspath(queue_defs) if not isinstance(
                                     queue_defs, dict) else "the queue definitions"))
                if not all(queues.values()):
                    notes.append("MAXDEPTH unknown: the DLQ's name is not known for some "
                                 "captures (no banner, manifest or DEADQ)")
            if capture_time is None:
                notes.append("capture time: each capture's newest put (the captures hold no "
                              "time of their own); ages are lower bounds")
            if dlq_sources is not None:
                notes.append(f"audited as the DLQ: {len(dlq_sources)} capture(s)")
        outcomes = validate(frames, [c for c in checks if c.frame in frames])
        results = []
        for check in checks:
            outcome = outcomes.get(check.name)
            if outcome is None:
                continue
            passed, observed, value = _observed(check, outcome)
            results.append(Result(check, passed, observed, value,
                                  _selection(check, frames, dlq_predicate, links),
                                  error=str(outcome.error) if outcome.error else None))
    return QualityResults(results, policy, notes)


__all__ = ["SUITES", "audit"]
