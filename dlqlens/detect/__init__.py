"""Detectors: which failure pattern put these messages on the DLQ.

Each detector is a function ``detect(df, *, queue_defs=None, **params)`` that
takes a capture DataFrame (the columns of
:func:`dlqlens.decode.schema.message_schema`, one or many captures unioned:
several snapshots of a DLQ, and backout, initiation and application queues
beside it) and returns :class:`~dlqlens.detect.findings.Findings`: a findings
DataFrame (one row per finding, with a stable ``finding_id`` and its
``message_count``) and a links DataFrame (``finding_id, source,
message_number``: one row per message of a finding). Detectors are Spark
transformations: nothing comes to the driver until the caller asks, and what
it asks for is bounded by what a person reads (a page of links, the findings
themselves). The one exception is :func:`run_detectors`' in a notebook's
session on a small capture: its findings (a few rows) are computed before it
returns, with the settings a few hundred messages want (its ``eager``).

:data:`DETECTORS` is the registry, by finding kind; :func:`run_detectors` runs
several and unions their findings (most severe first) and their links.
"""

from __future__ import annotations

import importlib

from dlqlens.detect.findings import (FINDINGS_COLUMNS, FINDINGS_SCHEMA, KINDS, LINKS_COLUMNS,
                                     LINKS_SCHEMA, SAMPLE_SIZE, SEVERITIES, Findings, conform,
                                     empty_findings, finding_columns, finding_id_column,
                                     finding_record, links_of, persist_rows, sample_links)
# a small capture (run_detectors reads it from one partition): the spark layer's measure,
# shared with the replay's (dlqlens.rules.replay decides a small capture's fates on the driver)
from dlqlens.spark.session import SMALL_CAPTURE_MESSAGES, small_capture

#: Detector registry: name -> "module:function". A test fails when a module of
#: this package that defines ``detect`` is missing here.
DETECTORS: dict[str, str] = {
    "backout_loop": "dlqlens.detect.backout:detect",
    "expiry_buildup": "dlqlens.detect.expiry:detect",
    "orphaned_reply": "dlqlens.detect.orphans:detect",
    "reason_burst": "dlqlens.detect.bursts:detect",
    "trigger_storm": "dlqlens.detect.trigger_messages:trigger_storm",
    "trigger_failure": "dlqlens.detect.trigger_messages:trigger_failure",
    "unknown_destination": "dlqlens.detect.destinations:unknown_destination",
    "persistent_reply": "dlqlens.detect.destinations:persistent_reply",
}


#: The fields of the capture's header structures that the detectors read
#: (:func:`detector_input` keeps only these). A detector that reads another
#: field fails on :func:`detector_input`'s frame with an analysis error naming
#: it (``tests/detect/test_detector_input.py`` runs every detector on both).
#: Each in its structure's order, the order a narrowed read keeps
#: (:func:`dlqlens.spark.source.narrowed`).
DETECTOR_FIELDS: dict[str, tuple[str, ...]] = {
    "md": ("Report", "MsgType", "Expiry", "Format", "Persistence", "MsgId", "CorrelId",
           "BackoutCount", "UserIdentifier", "PutApplName"),
    "dlh": ("Reason", "DestQName", "DestQMgrName", "Format"),
    "tm": ("StrucId", "QName", "ProcessName", "ApplType", "ApplId"),
}

#: The top-level columns the detectors read, besides :data:`DETECTOR_FIELDS`'
#: structures and the payload's digest.
DETECTOR_COLUMNS: tuple[str, ...] = ("source", "message_number", "reason_name", "put_ts",
                                     "dlh_put_ts")


def detector_input(df):
    """The part of a capture the detectors read, to cache before running them.

    ``dlqlens detect`` caches this instead of the whole capture: Spark's
    in-memory cache keeps every column of what it caches, and a struct is
    read whole, so a cache of the whole capture holds each message's bytes
    (``raw``, ``payload``, ``header_bytes``) and every MQMD field, and every
    detector reads all of ``md`` to get its ``MsgId``. The findings and links
    are the same as over ``df`` itself. A capture as
    :func:`dlqlens.spark.load_capture` made it, read by the executors, is
    read again with only these columns and fields
    (:func:`dlqlens.spark.source.narrowed`: the rest is never decoded nor sent
    to the JVM).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (:func:`dlqlens.decode.schema.message_schema`'s columns).

    Returns
    -------
    pyspark.sql.DataFrame
        :data:`DETECTOR_COLUMNS`, then ``md``, ``dlh`` and ``tm`` with only
        :data:`DETECTOR_FIELDS` (null where the capture's structure is
        null), then ``payload_sha256`` (string: the SHA-256 of a non-empty
        payload, hex; null for an empty or unknown one), computed once here
        instead of by the backout detector on every read.

    Raises
    ------
    pyspark.errors.AnalysisException
        When ``df`` lacks one of these columns or fields.
    """
    from dlqlens.detect.backout import payload_digest
    from dlqlens.spark.source import narrowed

    digest = [c for c in ("payload_sha256", "payload") if c in df.columns][:1]
    # the structs narrowed there (their fields in DETECTOR_FIELDS' order, null kept)
    df = narrowed(df, [*DETECTOR_COLUMNS, *DETECTOR_FIELDS, *digest], DETECTOR_FIELDS)
    return df.select(*DETECTOR_COLUMNS, *DETECTOR_FIELDS,
                     payload_digest(df).alias("payload_sha256"))


#: The columns of a capture row that hold a message's bytes (and their text):
#: as large as the capture itself, read only where one message is shown.
BYTE_COLUMNS: tuple[str, ...] = ("raw", "header_bytes", "payload", "payload_text")


def analysis_input(df, *, digest: bool = True):
    """A capture without its message bytes, to cache before running the analyses.

    The summary, the figures, the detectors, the rules replay and the audit
    read the header fields, never the bytes: caching the whole capture keeps
    each message's bytes (:data:`BYTE_COLUMNS`, most of a capture's size),
    which at ten million messages no longer fits a 1 GB driver beside the
    analyses (Spark ran out of heap reading the cache back). The report,
    ``dlqlens summary`` and the audit cache this; the report explains its
    few listed messages from it too, and reads the capture itself only to
    show their payloads (``payload_text``). A capture as
    :func:`dlqlens.spark.load_capture` made it, read by the executors, is
    read again without the bytes (:func:`dlqlens.spark.source.narrowed`; the
    payload only for its digest).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (:func:`dlqlens.decode.schema.message_schema`'s columns).
    digest : bool, default True
        Add ``payload_sha256`` (for the detectors); False for a caller that
        runs none (:func:`dlqlens.explain.summarize`): no payload read for it.

    Returns
    -------
    pyspark.sql.DataFrame
        Every column of ``df`` but :data:`BYTE_COLUMNS`, in order, then
        ``payload_sha256`` (as :func:`detector_input` computes it; the
        backout detector's payload key), unless ``df`` has it already or
        ``digest`` is False.
    """
    from dlqlens.detect.backout import payload_digest
    from dlqlens.spark.source import narrowed

    kept = [c for c in df.columns if c not in BYTE_COLUMNS]
    if "payload_sha256" in df.columns or not digest:
        return narrowed(df, kept)
    payload = ["payload"] if "payload" in df.columns else []
    df = narrowed(df, kept + payload)
    return df.select(*kept, payload_digest(df).alias("payload_sha256"))


def detector(name: str):
    """The detector function registered as ``name``.

    Raises
    ------
    KeyError
        When no detector has that name (the message lists the known ones).
    """
    try:
        target = DETECTORS[name]
    except KeyError:
        raise KeyError(f"unknown detector {name!r}; known: {', '.join(sorted(DETECTORS))}") from None
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)


def union_all(frames):
    """The rows of every DataFrame of ``frames`` (one schema, the same columns
    in the same order: :func:`conform`'s), unioned as a balanced tree.

    Each ``union`` is analysed whole by a classic session, so a chain of N
    unions analyses N plans growing to the whole (quadratic in N); a tree
    analyses each level's plans once (measured, the eight detectors' findings
    and links: 0.38 to 0.55 s against 0.84 to 0.93 s unioned by name in a
    chain; ``docs/performance.md``, seventeenth stop). The same rows as a
    chain; their order is not defined (callers sort).

    Raises
    ------
    ValueError
        For no frames.
    """
    frames = list(frames)
    if not frames:
        raise ValueError("union_all: no DataFrame to union")
    while len(frames) > 1:
        frames = [frames[i].union(frames[i + 1]) if i + 1 < len(frames) else frames[i]
                  for i in range(0, len(frames), 2)]
    return frames[0]


def run_detectors(df, detectors=None, *, queue_defs=None, capture_queues=None,
                  persisted=None, small=None, eager=None, **params) -> Findings:
    """Run detectors over a capture DataFrame; union their findings and their links.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (``dlqlens.load_capture`` output, one or many captures).
    detectors : iterable of str, optional
        Names from :data:`DETECTORS`; all of them by default.
    queue_defs : dict, optional
        Queue definitions by queue name, as :func:`dlqlens.mq.mqsc.read_queue_defs`
        returns them (BOTHRESH, BOQNAME, trigger attributes...).
    capture_queues : dict, optional
        The queue each capture file was taken from, for the detectors that
        name it (:func:`dlqlens.detect.common.with_capture_queues`;
        :func:`dlqlens.capture.reader.captured_queues` reads it from the
        files' banners). Without it, files are named by the file-name rule.
    persisted : list, optional
        For a caller that reads both the findings and the links: each
        detector's findings DataFrame (the one its links are cut with) is
        cached and appended to this list, and the caller unpersists each
        when done (a :class:`dlqlens.spark.caches.Caches` does it when its
        ``with`` block ends). Reading the findings fills these caches; the
        links then read them instead of running each detector's aggregations
        again (a million-message report: its links in 19 s and 19 Spark jobs
        against 32 s and 33; ``docs/performance.md``). A detector that
        takes a ``persisted`` parameter of its own (``backout_loop``) is
        given the list too and caches its per-row frame there
        (:func:`dlqlens.detect.findings.persist_rows`), so that its findings
        and links both read it. Without it nothing is cached.
    small : bool, optional
        Whether the capture holds at most :data:`SMALL_CAPTURE_MESSAGES`
        messages, when the caller knows it already (the report from its
        summary's count, the audit from its own :func:`small_capture`):
        then no count is run. None (the default): counted here.
    eager : bool, optional
        Whether the findings are computed before this function returns and
        handed back as a local DataFrame (:func:`dlqlens.spark.driver.local_copy`:
        reading it runs no Spark job). None (the default): for a small
        capture in a session :func:`dlqlens.spark.get_spark` made whose
        settings are its own (a notebook's), computed with the short run's
        settings (:func:`dlqlens.spark.session.short_run`: no generated code,
        no adaptive execution), which the session gets back at once; lazy
        otherwise (a large capture; a session dlqlens was handed; a
        command's session for a small capture, or an analysis that runs
        short already, whose later reads take those settings anyway). True:
        computed here whatever the capture and the session (with the short
        run's settings where they apply). False: lazy. The links stay lazy
        in every case.
    **params
        Detector parameters, passed to every detector that accepts them
        (each detector documents its own, with units).

    Returns
    -------
    Findings
        ``(findings, links)``: findings (:data:`FINDINGS_SCHEMA`) sorted by
        ``severity_rank``, ``window_start``, ``kind`` then ``finding_id``;
        links (:data:`LINKS_SCHEMA`), every detector's, unordered. Both lazy
        unless ``eager`` says otherwise for the findings:
        ``findings`` is a few rows (cache it when it is read more than once);
        ``links`` is as long as the messages found, and keeps only the groups
        that became findings by a semi join with each detector's (broadcast)
        finding ids, so reading it runs the detectors' aggregations again
        (unless they were ``persisted``).

    Raises
    ------
    KeyError
        For a detector name not in :data:`DETECTORS`.
    TypeError
        For a parameter that none of the selected detectors accepts (a typo
        would otherwise be ignored silently).

    Notes
    -----
    Each detector reads ``df`` again; cache it (``df.cache()``, or, for a
    large capture, :func:`detector_input` of it, as ``dlqlens detect`` does)
    before running several detectors over a capture decoded by the
    ``mqcapture`` source.

    Two queries run here whatever ``eager`` says. A small capture
    (:func:`small_capture`: counting at most ``SMALL_CAPTURE_MESSAGES + 1``
    rows, unless ``small`` says) is read from
    one partition (``df.coalesce(1)``): the same transformations, planned without a
    shuffle, so that the findings of a few hundred messages take a few Spark
    jobs instead of one per shuffle of every detector (on a capture this
    size each job costs its scheduling, whatever its rows). A larger one is
    read as it is partitioned, every detector's grouping shuffled across
    the executors. Then every capture's newest put (where the detectors take a
    capture's time from when none is given: one aggregation by ``source``,
    :func:`dlqlens.detect.common.with_newest_puts`) is computed once and
    handed to the detectors as a literal map, where each detector alone
    joins the capture's aggregate to its rows: eight self-joins of the
    capture fewer to plan, and eight scans of it fewer to run.

    The detectors' plans are built side by side
    (:func:`dlqlens.spark.driver.plan_in_threads`: a detector's Python runs
    while the JVM analyses another's transformations), and their findings
    and links unioned as a balanced tree (:func:`union_all`). A detector is
    therefore built in a thread of its own, with the caller's Spark local
    properties and session; it must not depend on another's being built
    first. The sample's eight detectors, built in a warm session: 5.7 s
    against 6.6 to 7.3 s one after the other (``docs/performance.md``,
    seventeenth stop).

    In a notebook's session the findings of a small capture are computed
    here, with the short run's settings (``eager``): the settings are read
    when a query runs, so a lazy result read later would generate and
    compile code for each of its operators (264 classes for the sample's
    detectors) and run each broadcast as a stage of adaptive execution, for
    a few hundred rows. The detectors of the sample, findings collected, in
    a warm session: 20.1 and 21.3 s against 33.1 and 29.3 s in the first
    round, 8.6 and 8.5 s against 13.3 and 12.0 s in the third
    (``docs/performance.md``, fifteenth stop).

    It starts with :func:`dlqlens.spark.driver.release_dropped_frames`: the
    DataFrames of earlier runs that the caller no longer holds are released
    in the JVM (in a notebook, each run would otherwise keep its plans and
    broadcast tables until Python's next full collection).
    """
    import inspect

    from dlqlens.detect.common import with_newest_puts
    from dlqlens.spark.driver import local_copy, plan_in_threads, release_dropped_frames
    from dlqlens.spark.session import short_run

    # the JVM objects of an earlier run's DataFrames that the caller dropped go first
    release_dropped_frames()
    names = list(DETECTORS) if detectors is None else list(detectors)
    selected = [(name, detector(name)) for name in names]
    signatures = {name: inspect.signature(fn) for name, fn in selected}
    takes_any = {name: any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
                 for name, signature in signatures.items()}
    unused = [k for k in params
              if not any(takes_any[n] or k in signatures[n].parameters for n, _ in selected)]
    if unused:
        raise TypeError(f"parameter(s) {', '.join(sorted(unused))} not accepted by any of the "
                        f"detectors run ({', '.join(names) or 'none'})")
    small = small_capture(df) if small is None else small
    if small:
        # one partition: no shuffle (its single partition satisfies every grouping and window
        # of the detectors), so each query is one Spark job plus its broadcasts
        df = df.coalesce(1)

    def run():
        # each detector's findings and links unioned, the findings sorted; (None, None)
        # when no detector is selected
        given = params
        if any("capture_time" in signatures[name].parameters or takes_any[name]
               for name, _ in selected):
            # every capture's newest put, computed once for all the detectors (a literal map
            # each looks up, instead of a self-join of the capture each): one query
            given = {**params, "capture_time": with_newest_puts(df, params.get("capture_time"))}

        def build(entry):
            name, fn = entry
            signature = signatures[name]
            kwargs = {k: v for k, v in given.items()
                      if takes_any[name] or k in signature.parameters}
            if "queue_defs" in signature.parameters or takes_any[name]:
                kwargs["queue_defs"] = queue_defs
            if capture_queues is not None and ("capture_queues" in signature.parameters
                                               or takes_any[name]):
                kwargs["capture_queues"] = capture_queues
            if persisted is not None and "persisted" in signature.parameters:
                # a detector that would otherwise build its per-row frame twice (once for its
                # findings, once for its links) caches it (findings.persist_rows)
                kwargs["persisted"] = persisted
            found, linked = fn(df, **kwargs)
            return found, conform(found), conform(linked, LINKS_SCHEMA)

        if not selected:
            return None, None
        # the detectors' plans are independent: built side by side (the JVM analyses each
        # transformation while Python builds the next detector's)
        built = plan_in_threads(df.sparkSession, build, selected)
        if persisted is not None:
            # the frame each detector's links are cut with (a semi join with its finding ids):
            # cached, the links read it instead of running its aggregations again
            persisted.extend(found.cache() for found, _, _ in built)
        # the findings' union and the links' are independent too
        findings, links = plan_in_threads(
            df.sparkSession, union_all,
            [[found for _, found, _ in built], [linked for _, _, linked in built]])
        # findings are few: sorted in one partition (a global orderBy would sample them for a
        # range partitioning, then shuffle them: two more Spark jobs for a few rows); moved there
        # by a shuffle, so that each detector's last stage keeps its partitions (coalesce(1)
        # would run that stage, a window over every dead letter for a burst, in one task)
        findings = findings.repartition(1).sortWithinPartitions(
            "severity_rank", "window_start", "kind", "finding_id")
        return findings, links

    if eager or (eager is None and small):
        # a notebook's small capture: its queries run with the short run's settings
        with short_run(df, lambda: small) as shortened:
            findings, links = run()
            if findings is not None and (eager or shortened):
                findings = local_copy(findings)
    else:
        findings, links = run()
    if findings is None:
        return empty_findings(df.sparkSession)
    return Findings(findings, links)


__all__ = ["BYTE_COLUMNS", "DETECTORS", "DETECTOR_COLUMNS", "DETECTOR_FIELDS",
           "FINDINGS_COLUMNS", "FINDINGS_SCHEMA", "KINDS", "LINKS_COLUMNS", "LINKS_SCHEMA",
           "SAMPLE_SIZE", "SEVERITIES", "Findings", "analysis_input", "conform", "detector",
           "detector_input", "empty_findings", "finding_columns", "finding_id_column",
           "finding_record", "links_of", "persist_rows", "run_detectors", "sample_links",
           "small_capture", "union_all"]
