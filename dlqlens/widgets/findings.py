"""Findings browser: pick a detector finding, see its messages in the explorer.

:func:`findings_browser` lists the findings of
:func:`dlqlens.detect.run_detectors` (most severe first, at most ``top`` of
them; their links stay in Spark) and opens the chosen finding's messages in
an :class:`~dlqlens.widgets.explorer.ExplorerModel` filtered by that finding
(a left-semi join with the findings' links, paged).
"""

from __future__ import annotations

from dlqlens.safe import printable
from dlqlens.widgets._render import esc, table, text_table
from dlqlens.widgets.explorer import NO_FINDING, Explorer, ExplorerModel


class FindingsBrowser:
    """The findings list beside an explorer of the chosen finding's messages.

    Attributes
    ----------
    model : ExplorerModel
        With ``filters.finding`` set to the chosen finding.
    findings : list of dict
        :meth:`ExplorerModel.findings`.
    """

    def __init__(self, model: ExplorerModel, finding: int | None = None):
        self.model = model
        self.findings = model.findings()
        if finding is None and self.findings:
            finding = self.findings[0]["finding"]
        if finding is not None:
            model.set_filters(finding=finding)
        self._widget = None
        self._explorer: Explorer | None = None

    @property
    def finding(self) -> int | None:
        return self.model.filters.finding

    def choose(self, finding: int | None) -> None:
        """Show the messages of finding number ``finding`` (None: all messages;
        :data:`~dlqlens.widgets.explorer.NO_FINDING`: the messages in no finding)."""
        self.model.set_filters(finding=finding)
        if self._explorer is not None:
            if self._explorer.finding is not None:
                self._explorer.finding.value = finding
            self._explorer.refresh()
            self._statement.value = self._statement_html()

    def _rows(self):
        return [(f["finding"], f["severity"], f["kind"], ", ".join(f["queues"] or []),
                 f["window_start"], f["window_end"], f["message_count"], f["statement"])
                for f in self.findings]

    _HEADERS = ("#", "severity", "kind", "queues", "from (UTC)", "to (UTC)", "messages",
                "statement")

    def _statement_html(self) -> str:
        if self.finding == NO_FINDING:
            return "<p>The messages in no finding.</p>"
        f = next((f for f in self.findings if f["finding"] == self.finding), None)
        if f is None:
            return "<p>All messages.</p>"
        return (f"<p><b>{esc(f['severity'])} {esc(f['kind'])}</b>: {esc(f['statement'])}</p>")

    def to_html(self) -> str:
        """Static twin: the findings table, then the explorer of the chosen finding."""
        if not self.findings:
            return "<div><h3>Findings</h3><p>No findings.</p></div>"
        return ("<div><h3>Findings</h3>" + table(self._HEADERS, self._rows())
                + ("<p>Showing the messages in no finding.</p>" if self.finding == NO_FINDING
                   else f"<p>Showing the messages of finding {esc(self.finding)}.</p>")
                + self.model.to_html() + "</div>")

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_text(self) -> str:
        return ("Findings\n" + text_table(self._HEADERS, self._rows()) + "\n\n"
                + self.model.to_text())

    @property
    def widget(self):
        """The ipywidgets view (built on first use)."""
        if self._widget is None:
            import ipywidgets as W

            self._explorer = Explorer(self.model)
            self._statement = W.HTML(self._statement_html())
            self.pick = W.Select(
                options=[(f"{f['finding']}. [{f['severity']}] {f['kind']} "
                          f"{', '.join(f['queues'] or [])} ({f['message_count']} messages)",
                          f["finding"]) for f in self.findings]
                + [("(messages in no finding)", NO_FINDING)],
                value=self.finding if self.findings else None, rows=min(8, max(1, len(self.findings))),
                layout=W.Layout(width="100%"))
            self.pick.observe(lambda change: self.choose(change["new"]), names="value")
            self._widget = W.VBox([W.HTML("<b>Findings</b>"), self.pick, self._statement,
                                   self._explorer.widget])
        return self._widget

    def close(self) -> None:
        """Release what the model persisted (:meth:`ExplorerModel.close`)."""
        self.model.close()

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/html"] = self.to_html()
        bundle["text/plain"] = printable(f"Findings browser: {len(self.findings)} finding(s); "
                                         f"{self.model.status()}")
        return bundle


def findings_browser(findings, df, *, replayed=None, table=None, world=None, page_size: int = 25,
                     top: int = 100, cache: bool = True) -> FindingsBrowser:
    """Browse findings; the chosen finding's messages open in the explorer.

    Parameters
    ----------
    findings : Findings
        The ``(findings, links)`` of :func:`dlqlens.detect.run_detectors` over ``df``.
    df : pyspark.sql.DataFrame
        The capture rows the findings point at.
    replayed, table, world, page_size, cache
        As for :func:`dlqlens.widgets.explorer.explore`.
    top : int
        Findings listed (most severe first).

    Returns
    -------
    FindingsBrowser
        Displays as the widget with a static HTML twin; the first finding is chosen.
    """
    model = ExplorerModel(df, findings=findings, replayed=replayed, table=table, world=world,
                          page_size=page_size, cache=cache, findings_top=top)
    return FindingsBrowser(model)
