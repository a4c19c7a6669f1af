"""Notebook views (ipywidgets) over captures and explanations.

Widgets arrange the data objects of :mod:`dlqlens.explain`; they compute
nothing of their own that a report or the command line would need. Each has
a static HTML twin (``to_html``, carried as ``text/html`` beside the widget)
for notebooks saved without a widget frontend and for reports.

* :func:`browse`: one message at a time, by capture file and number.
* :func:`explore`: a filterable, sortable, paged table of a capture of any
  size beside the selected message's explanation, headers and payload
  (:class:`ExplorerModel` is its logic, without widgets).
* :func:`findings_browser`: detector findings, each opening its messages in
  the explorer.
* :func:`rule_trace`: one replayed message through a rules table, rule by
  rule and attempt by attempt.
"""

from dlqlens.widgets.browser import browse
from dlqlens.widgets.explorer import NO_FINDING, Explorer, ExplorerModel, Filters, explore
from dlqlens.widgets.findings import FindingsBrowser, findings_browser
from dlqlens.widgets.trace import RuleTrace, rule_trace

__all__ = ["browse", "explore", "Explorer", "ExplorerModel", "Filters", "findings_browser",
           "NO_FINDING", "FindingsBrowser", "rule_trace", "RuleTrace"]
