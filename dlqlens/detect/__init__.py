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
DETECTORS: dict[str, str] = {}


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


def run(df, detectors=None, *, queue_defs=None, **params):
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
    **params
        Detector parameters, passed to every detector that accepts them
        (each detector documents its own, with units).

    Returns
    -------
    pyspark.sql.DataFrame
        Findings (:data:`FINDINGS_SCHEMA`), sorted by ``severity_rank`` then
        ``window_start``.
    """
    import inspect

    names = list(DETECTORS) if detectors is None else list(detectors)
    result = None
    for name in names:
        fn = detector(name)
        sig = inspect.signature(fn)
        accepts_all = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
        kw = {k: v for k, v in params.items() if accepts_all or k in sig.parameters}
        if "queue_defs" in sig.parameters or accepts_all:
            kw["queue_defs"] = queue_defs
        found = conform(fn(df, **kw))
        result = found if result is None else result.unionByName(found)
    if result is None:
        result = empty_findings(df.sparkSession)
    return result.orderBy("severity_rank", "window_start", "kind")


__all__ = ["DETECTORS", "FINDINGS_COLUMNS", "FINDINGS_SCHEMA", "KINDS", "SEVERITIES", "conform",
           "detector", "empty_findings", "finding_columns", "finding_record", "run"]
