"""Explanations: why a message is on the dead-letter queue, in words, and what to do next.

An explanation is plain data with ``to_text()``, ``_repr_html_()`` and
``to_dict()``; the command line (``dlqlens explain``, ``summary``,
``detect``), the widgets and the reports are views of it.
:func:`explain` explains one decoded message and :func:`explain_messages`
the rows of a Spark DataFrame that a filter selects; :func:`explain_finding`
explains one detector finding (evidence in words, severity and why, next
steps, its messages as a filter); :func:`unexplained` and :func:`coverage`
show the messages no finding covers; :func:`summarize` summarises a whole
capture (messages by reason, destination, application, time span and decode
problems). The per-reason knowledge (causes, commands) is one table,
:mod:`dlqlens.mq.remedies`.
"""

from dlqlens.explain.coverage import Coverage, coverage, unexplained, unexplained_messages
from dlqlens.explain.finding import FindingExplanation, MessageFilter, explain_finding
from dlqlens.explain.message import EXPLAIN_COLUMNS, Explanation, explain, explain_messages
from dlqlens.explain.steps import Command, NextStep
from dlqlens.explain.summary import CaptureSummary, summarize

__all__ = ["EXPLAIN_COLUMNS", "CaptureSummary", "Command", "Coverage", "Explanation",
           "FindingExplanation", "MessageFilter", "NextStep", "coverage", "explain",
           "explain_finding", "explain_messages", "summarize", "unexplained",
           "unexplained_messages"]
