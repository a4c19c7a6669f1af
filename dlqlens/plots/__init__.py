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
=========================  ====================================================
"""

from dlqlens.plots.breakdown import reasons_by_destination
from dlqlens.plots.distributions import ages, backout_counts, remaining_expiry
from dlqlens.plots.rules import rule_coverage
from dlqlens.plots.timeline import arrivals, trigger_rate

__all__ = ["arrivals", "reasons_by_destination", "ages", "remaining_expiry", "backout_counts",
           "trigger_rate", "rule_coverage"]
