"""Run checks with great-expectations on Spark DataFrames, in an ephemeral context.

great-expectations 1.x validates a batch of a Spark DataFrame asset against
an expectation suite (GX documentation, "Connect to data in a Spark
DataFrame" and "Run Validations"). dlqlens uses an **ephemeral** data
context (``gx.get_context(mode="ephemeral")``, in-memory stores): nothing is
written (no ``gx/`` directory) and the context lives only for one run.
Analytics are off: the documented environment variable
``GX_ANALYTICS_ENABLED=False`` is set for the process when it is not set
already, and the context's ``analytics_enabled`` is False (GX documentation,
"Toggle analytics events"). Progress bars are off.

Each frame is projected to one column per check (``c0``, ``c1``... the
check's Spark SQL expression), cached while great-expectations computes its
metrics, and unpersisted; a frame that is cached already (the capture, which
:func:`dlqlens.quality.audit.audit` caches) is projected again from its cache
instead, so that two caches of one capture never share the heap. The Spark
data source is added with ``persist=False``: great-expectations' default
persists every batch's DataFrame and never unpersists it, which left a cache
(and, in Spark's cache manager, its whole plan) behind after every audit.
great-expectations gives the verdict of each expectation (result format
``BOOLEAN_ONLY``: no example values, half the Spark jobs of ``BASIC``); the
numbers shown beside it come from one aggregation per frame over the same
columns: the rows, each column's values,
the rows its failing predicate (:func:`dlqlens.quality.checks.failing_sql`,
the filter the results hand out) selects, its maximum or sum. A check whose
column holds no value (no MQXQH in any message) is not evaluated: there is
nothing to look at, and it costs no great-expectations job. Only these
numbers reach the driver, never the rows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from dlqlens.quality.checks import failing_sql

#: great-expectations' result format: metrics and a bounded sample of values.
RESULT_FORMAT = {"result_format": "BOOLEAN_ONLY"}


def context():
    """An ephemeral great-expectations data context with analytics and progress bars off."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    import great_expectations as gx
    from great_expectations.data_context.types.base import (DataContextConfig,
                                                            InMemoryStoreBackendDefaults,
                                                            ProgressBarsConfig)

    config = DataContextConfig(analytics_enabled=False,
                               store_backend_defaults=InMemoryStoreBackendDefaults(),
                               progress_bars=ProgressBarsConfig(globally=False,
                                                                metric_calculations=False))
    return gx.get_context(mode="ephemeral", project_config=config)


@dataclass
class Outcome:
    """What great-expectations said of one check.

    Attributes
    ----------
    success : bool or None
        None when the check had no value to look at (every value null, or
        no row), or great-expectations raised.
    result : dict
        ``element_count`` (rows), ``missing_count`` (null values),
        ``unexpected_count`` (rows the failing predicate selects) and
        ``observed_value`` (the column's maximum or sum, for those
        expectations), from dlqlens' aggregation.
    rows : int
        Rows of the frame.
    error : str or None
        great-expectations' exception message, when it raised.
    """

    success: bool | None
    result: dict
    rows: int
    error: str | None = None


def validate(frames: dict, checks: list, *, context_=None) -> dict:
    """Validate ``checks`` on their frames with great-expectations.

    Parameters
    ----------
    frames : dict of str to pyspark.sql.DataFrame
        The frames by name (:data:`dlqlens.quality.checks.FRAMES`); a check
        whose frame is missing is not run.
    checks : list of Check

    Returns
    -------
    dict of str to Outcome
        By check name.
    """
    import great_expectations as gx
    from pyspark.sql import functions as F

    ctx = context_ or context()
    out: dict = {}
    by_frame: dict = {}
    for check in checks:
        if check.frame in frames:
            by_frame.setdefault(check.frame, []).append(check)
    for frame_name, group in by_frame.items():
        df = frames[frame_name]
        projected = df.select(*[F.expr(c.expr).alias(f"c{i}") for i, c in enumerate(group)])
        # the checks' columns are read many times (the counts, then each expectation): cached,
        # unless their frame is (the capture: the projection of a cached frame is cheap to
        # repeat, and a second cache beside it ran the driver out of heap at 10M messages)
        own_cache = not df.is_cached
        if own_cache:
            projected = projected.cache()
        try:
            aggs = [F.count(F.lit(1)).alias("rows")]
            for i, c in enumerate(group):
                aggs.append(F.count(f"c{i}").alias(f"n{i}"))
                aggs.append(F.count_if(F.expr(failing_sql(replace(c, expr=f"c{i}"))))
                            .alias(f"u{i}"))
                if c.expectation == "ExpectColumnMaxToBeBetween":
                    aggs.append(F.max(f"c{i}").alias(f"v{i}"))
                elif c.expectation == "ExpectColumnSumToBeBetween":
                    aggs.append(F.sum(f"c{i}").alias(f"v{i}"))
            stats = projected.agg(*aggs).first().asDict()
            rows = int(stats["rows"])
            numbers = {c.name: {"element_count": rows, "missing_count": rows - int(stats[f"n{i}"]),
                                "unexpected_count": int(stats[f"u{i}"] or 0),
                                "observed_value": stats.get(f"v{i}")}
                       for i, c in enumerate(group)}
            empty = {c.name for i, c in enumerate(group) if not stats[f"n{i}"]}
            for c in group:
                if rows == 0 or c.name in empty:
                    out[c.name] = Outcome(None, numbers[c.name], rows)
            group = [(i, c) for i, c in enumerate(group) if rows and c.name not in empty]
            if not group:
                continue
            # persist=False: great-expectations would otherwise persist() every batch's
            # DataFrame and never unpersist it (a cache of the checks' columns left behind
            # by every audit, with its whole plan held by Spark's cache manager)
            source = ctx.data_sources.add_or_update_spark(f"dlqlens_{frame_name}",
                                                          persist=False)
            asset = source.add_dataframe_asset(f"{frame_name}_rows")
            batch_def = asset.add_batch_definition_whole_dataframe("whole")
            suite = gx.ExpectationSuite(f"dlqlens_{frame_name}")
            for i, c in group:
                cls = getattr(gx.expectations, c.expectation)
                kwargs = {k: v for k, v in c.kwargs.items() if v is not None}
                suite.add_expectation(cls(column=f"c{i}", meta={"dlqlens": c.name}, **kwargs))
            batch = batch_def.get_batch(batch_parameters={"dataframe": projected})
            validation = batch.validate(suite, result_format=RESULT_FORMAT)
            for r in validation.results:
                name = r.expectation_config.meta["dlqlens"]
                info = r.exception_info or {}
                error = info.get("exception_message") if info.get("raised_exception") else None
                out[name] = Outcome(None if error else bool(r.success), numbers[name], rows,
                                    error)
        finally:
            if own_cache:
                projected.unpersist()
    return out


__all__ = ["Outcome", "RESULT_FORMAT", "context", "validate"]
