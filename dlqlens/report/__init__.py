"""The HTML audit report of a DLQ capture: one self-contained page.

:func:`build_report` takes a capture DataFrame (and optionally a runmqdlq
rules table and MQSC queue definitions) and returns a :class:`Report`:
``.html`` (the page), ``.text`` (a short summary) and ``.write(path)``.
Sections: the summary, the findings (most severe first, with next steps),
the rules table's lint, its coverage and fall-through, the queue
definitions, the messages in no finding, and explanations of the first
messages of each finding and group. ``dlqlens report CAPTURE...`` is the
command-line view.
"""

from dlqlens.report.build import REDACTED, Report, ReportData, Section, build_report, gather, render

__all__ = ["REDACTED", "Report", "ReportData", "Section", "build_report", "gather", "render"]
