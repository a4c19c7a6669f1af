"""Explanations: why a message is on the dead-letter queue, in words.

An explanation is plain data with ``to_text()`` and ``_repr_html_()``; the
command line (``dlqlens explain``), the widgets and the reports are views of
it. :func:`explain` explains one decoded message, :func:`explain_messages`
the rows of a Spark DataFrame that a filter selects, :func:`summarize` a
whole capture (messages by reason, destination, application, time span and
decode problems).
"""

from dlqlens.explain.message import EXPLAIN_COLUMNS, Explanation, explain, explain_messages
from dlqlens.explain.summary import CaptureSummary, summarize

__all__ = ["EXPLAIN_COLUMNS", "CaptureSummary", "Explanation", "explain", "explain_messages",
           "summarize"]
