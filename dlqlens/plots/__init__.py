"""Matplotlib figures of a capture, every aggregate computed in Spark.

Each function takes a capture DataFrame (``load_capture``) or a rules replay
and returns a :class:`matplotlib.figure.Figure`, built without pyplot's global
state (safe in a server or on the command line; in a notebook the figure shows
as the cell's value, ``fig.savefig("f.png")`` writes it). Only aggregates reach
the driver (at most a few thousand rows; see :func:`dlqlens.plots.common.collect`).
Times are UTC. Names from captures are shown as they are: control characters
escaped, mathtext off (``$x$`` stays ``$x$``), long names shortened with an
ellipsis, never so that two names look the same. An empty DataFrame gives a
figure that says "no messages".

>>> from dlqlens.plots import arrivals
>>> arrivals(df, by="reason").savefig("/tmp/arrivals.png")  # doctest: +SKIP

=========================  ====================================================
:func:`arrivals`           messages put on the DLQ over time, stacked by reason
:func:`reasons_by_destination`  destinations x reasons, horizontal stacked bars
:func:`ages`               message age at capture time
:func:`remaining_expiry`   remaining expiry and the expiry curve
:func:`backout_counts`     distribution of ``md.BackoutCount``
:func:`trigger_rate`       trigger messages per queue over time
:func:`rule_coverage`      messages per rule of a rules-table replay
:func:`figures`            several figures of a capture, computed together
=========================  ====================================================

Each figure of a capture is two small Spark queries (its statistics, then its
cells); :func:`figures` computes any number of them in two queries in all
(:func:`dlqlens.plots.common.draw_plans`), the same figures.
"""

import functools

from dlqlens.plots.breakdown import reasons_by_destination
from dlqlens.plots.distributions import ages, backout_counts, remaining_expiry
from dlqlens.plots.rules import rule_coverage
from dlqlens.plots.timeline import arrivals, trigger_rate



def figures(df, functions) -> list:
    """The figures of ``df`` drawn by ``functions``, their aggregates computed together.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows.
    functions : sequence of callable
        Figure functions of this package (:func:`arrivals`, ...), or
        :func:`functools.partial` of one with keyword arguments
        (``partial(arrivals, by="destination")``): these are computed
        together, two Spark queries in all. Any other ``f(df) -> Figure`` is
        called on its own.

    Returns
    -------
    list of matplotlib.figure.Figure
        In the order of ``functions``; each the figure its function draws.

    Raises
    ------
    ValueError
        As the functions do, for a bad argument (before any Spark job).
    """
    from dlqlens.plots.common import draw_plans

    plans, out = {}, {}
    for i, fn in enumerate(functions):
        target, args, kwargs = fn, (), {}
        if isinstance(fn, functools.partial):
            target, args, kwargs = fn.func, fn.args, dict(fn.keywords)
        plan = getattr(target, "plan", None)
        if plan is not None and not args:
            plans[i] = plan(**kwargs)
    drawn = dict(zip(plans, draw_plans(df, list(plans.values())))) if plans else {}
    for i, fn in enumerate(functions):
        out[i] = drawn[i] if i in drawn else fn(df)
    return [out[i] for i in range(len(functions))]


__all__ = ["figures", "arrivals", "reasons_by_destination", "ages", "remaining_expiry", "backout_counts",
           "trigger_rate", "rule_coverage"]
