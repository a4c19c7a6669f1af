"""Detectors: which failure pattern put these messages on the DLQ.

Each detector is a function ``detect(df, *, queue_defs=None, **params)`` that
takes a capture DataFrame (the columns of
:func:`dlqlens.decode.schema.message_schema`, one or many captures unioned:
several snapshots of a DLQ, and backout, initiation and application queues
beside it) and returns a findings DataFrame (:mod:`dlqlens.detect.findings`).
Detectors are Spark transformations: nothing but the findings (and only when
the caller asks) comes to the driver.

:data:`DETECTORS` is the registry, by finding kind; :func:`run` runs several
and unions their findings, most severe first.
"""

from __future__ import annotations

import importlib

from dlqlens.detect.findings import (FINDINGS_COLUMNS, FINDINGS_SCHEMA, KINDS, SEVERITIES,
                                     conform, empty_findings, finding_columns, finding_record)

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


def run(df, detectors=None, *, queue_defs=None, capture_queues=None, **params):
    """Run detectors over a capture DataFrame and union their findings.

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
    **params
        Detector parameters, passed to every detector that accepts them
        (each detector documents its own, with units).

    Returns
    -------
    pyspark.sql.DataFrame
        Findings (:data:`FINDINGS_SCHEMA`), sorted by ``severity_rank`` then
        ``window_start``.

    Raises
    ------
    KeyError
        For a detector name not in :data:`DETECTORS`.
    TypeError
        For a parameter that none of the selected detectors accepts (a typo
        would otherwise be ignored silently).

    Notes
    -----
    Each detector reads ``df`` again; cache it (``df.cache()``) before running
    several detectors over a capture decoded by the ``mqcapture`` source.
    """
    import inspect

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
    result = None
    for name, fn in selected:
        signature = signatures[name]
        kwargs = {k: v for k, v in params.items() if takes_any[name] or k in signature.parameters}
        if "queue_defs" in signature.parameters or takes_any[name]:
            kwargs["queue_defs"] = queue_defs
        if capture_queues is not None and ("capture_queues" in signature.parameters
                                           or takes_any[name]):
            kwargs["capture_queues"] = capture_queues
        found = conform(fn(df, **kwargs))
        result = found if result is None else result.unionByName(found)
    if result is None:
        result = empty_findings(df.sparkSession)
    return result.orderBy("severity_rank", "window_start", "kind")


__all__ = ["DETECTORS", "FINDINGS_COLUMNS", "FINDINGS_SCHEMA", "KINDS", "SEVERITIES", "conform",
           "detector", "empty_findings", "finding_columns", "finding_record", "run"]
