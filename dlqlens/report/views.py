"""The report's building blocks: small view objects with ``_repr_html_()``.

A report section is a list of items; an item is anything with a
``_repr_html_()`` that returns escaped HTML (the views below, and the
explanation objects of :mod:`dlqlens.explain`), or a matplotlib ``Figure``
(embedded as a PNG ``data:`` URI), or plain text. :func:`render_item` turns
one into HTML. The views render through the macros of
``templates/views.html.j2`` in an autoescaping jinja2 environment, so every
value they hold (queue names, application names, rules-table and MQSC text)
is escaped; only the HTML of nested views is passed through as it is.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from functools import lru_cache

from markupsafe import Markup, escape


@lru_cache(maxsize=1)
def environment():
    """The report's jinja2 environment: templates from the package, autoescape on."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("dlqlens.report", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=False, lstrip_blocks=False)
    env.filters["render"] = render_item
    return env


def _macro(name: str, view) -> Markup:
    return Markup(getattr(environment().get_template("views.html.j2").module, name)(view))


def is_figure(item) -> bool:
    """True for a matplotlib Figure (tested without importing matplotlib)."""
    return hasattr(item, "savefig") and hasattr(item, "get_size_inches")


def render_item(item, pngs: FigurePngs | None = None) -> Markup:
    """The HTML of one section item.

    ``None`` renders as nothing; a matplotlib Figure as an embedded PNG
    (:class:`FigureView`; the one ``pngs`` rendered ahead, when it holds
    the figure); an object with ``_repr_html_()`` as what that
    returns (it must be escaped HTML: dlqlens' views and explanations are);
    a pandas DataFrame through ``to_html(escape=True)``; anything else as
    escaped text in a paragraph.
    """
    if item is None:
        return Markup("")
    if isinstance(item, Markup):
        return item
    if is_figure(item):
        view = pngs.view(item) if pngs is not None else FigureView.of(item)
        return Markup(view._repr_html_())
    if _is_pandas(item):
        return Markup(item.to_html(index=False, escape=True, na_rep="unknown", classes="data"))
    html = getattr(item, "_repr_html_", None)
    if callable(html):
        return Markup(html())
    return Markup("<p>") + escape(str(item)) + Markup("</p>")


def _is_pandas(item) -> bool:
    return type(item).__module__.startswith("pandas") and hasattr(item, "to_html")


class _View:
    macro = ""

    def _repr_html_(self) -> str:
        return str(_macro(self.macro, self))


@dataclass
class KeyFigures(_View):
    """A row of labelled values: ``figures`` is a list of (label, value, note or None);
    the labels in ``wide`` get a wider box (a time span)."""

    figures: list
    wide: tuple = ()
    macro = "key_figures"


@dataclass
class Table(_View):
    """A table of plain values (all escaped).

    ``numeric`` names the columns aligned right; ``row_classes`` (one CSS
    class per row, from the report's own vocabulary) marks rows.
    """

    columns: list
    rows: list
    caption: str | None = None
    note: str | None = None
    empty: str = "none"
    numeric: tuple = ()
    row_classes: list | None = None
    macro = "table"

    @classmethod
    def of_frame(cls, frame, caption=None, note=None, empty="none", numeric=None):
        """A table of a small pandas DataFrame (values shown as text; a null, a value the
        capture does not hold, as ``unknown``)."""
        import pandas as pd

        rows = [["unknown" if (not isinstance(v, (list, tuple, dict)) and pd.isna(v)) else v
                 for v in row] for row in frame.itertuples(index=False, name=None)]
        if numeric is None:
            numeric = tuple(c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]))
        return cls(list(frame.columns), rows, caption, note, empty, tuple(numeric))


@dataclass
class Note(_View):
    """One paragraph; ``kind`` is ``note``, ``intro`` or ``warning``."""

    text: str
    kind: str = "note"
    macro = "note"


@dataclass
class Listing(_View):
    """Numbered lines of a file (a rules table), escaped."""

    lines: list  # (number, text)
    caption: str | None = None
    note: str | None = None
    macro = "listing"


@dataclass
class FindingView(_View):
    """One detector finding as a card: severity, kind, queues, window, the
    statement, next steps, evidence and the first messages it points at."""

    number: int
    severity: str
    kind: str
    queues: str
    window: str
    message_count: int
    statement: str
    severity_reason: str = ""
    next_steps: list = field(default_factory=list)  # escaped HTML of explain.steps.NextStep
    evidence: list = field(default_factory=list)  # (label, text)
    messages: list = field(default_factory=list)  # "source #n"
    more_messages: int = 0
    finding_id: str = ""
    macro = "finding"


@dataclass
class Group(_View):
    """A titled group of items (views, explanations, figures)."""

    title: str
    items: list
    intro: str | None = None
    note: str | None = None
    macro = "group"

    def _repr_html_(self) -> str:
        rendered = Group(self.title, [render_item(i) for i in self.items], self.intro, self.note)
        return str(_macro("group", rendered))


@dataclass
class ExplanationView(_View):
    """An explanation (any object with ``_repr_html_``) folded under a one-line summary."""

    label: str
    reason: str
    explanation: object
    open: bool = False
    macro = "explanation"

    @property
    def body(self) -> Markup:
        return render_item(self.explanation)


@dataclass
class FigureView(_View):
    """A PNG embedded as a ``data:`` URI (no file, no URL)."""

    data_uri: str
    alt: str
    width: int
    height: int
    caption: str | None = None
    macro = "figure"

    @classmethod
    def of(cls, fig, caption: str | None = None, dpi: int = 100) -> "FigureView":
        """Render a matplotlib Figure to PNG; its alt text is its title(s)."""
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
        png = buf.getvalue()
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        suptitle = getattr(fig, "_suptitle", None)
        titles = [t for t in ([suptitle.get_text()] if suptitle is not None else [])
                  + [ax.get_title(loc) for ax in fig.get_axes()
                     for loc in ("left", "center", "right")] if t]
        alt = "; ".join(titles) or "figure"
        return cls("data:image/png;base64," + base64.b64encode(png).decode("ascii"), alt,
                   width, height, caption)


class FigurePngs:
    """Figures rendered to PNG (:meth:`FigureView.of`) ahead of their page,
    one after the other in a thread of their own.

    A figure's PNG is the interpreter's work (text layout, the Agg
    rasteriser, compression: 0.15 to 0.5 s a figure, about 1.7 s for the
    report's seven on a slow machine), while most of a report's analyses
    wait on the JVM (a Spark job, a plan), the interpreter idle. Only
    waiting pays: the thread takes the interpreter from the caller's own
    Python work, so a report submits its figures once the detectors' plans
    are built (Python's work, hundreds of round trips to the JVM). The
    README's report of the sample in a warm session, rounds two to four of
    two sessions: 19.7, 17.8, 17.3 and 21.4, 18.3, 15.4 s against 21.0,
    18.7, 17.4 and 22.1, 20.3, 18.4 s rendered with the page; submitted
    as soon as drawn, before the detectors, no faster than with the page
    (``docs/performance.md``, eighteenth stop).

    Each figure is rendered as it stands when submitted: one changed later
    must be submitted again, and none may be drawn elsewhere until its PNG
    is made: matplotlib is not thread-safe for one figure drawn from two
    threads. Different figures drawn in different threads are (the Agg
    backend, no pyplot; matplotlib keeps its fonts per thread).
    """

    def __init__(self):
        self._views: dict = {}  # id(figure) -> (figure, Future of its FigureView)
        self._pool = None

    def submit(self, *figures) -> None:
        """Start rendering each of ``figures`` that is a matplotlib Figure
        (None and other items are passed over); a figure submitted again is
        rendered again, that rendering replacing the earlier one."""
        from concurrent.futures import ThreadPoolExecutor

        for fig in figures:
            if not is_figure(fig):
                continue
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="dlqlens-png")
            self._views[id(fig)] = (fig, self._pool.submit(FigureView.of, fig))

    def close(self) -> None:
        """No more figures for now: the thread ends once those submitted are
        rendered (without waiting for them here); a later :meth:`submit`
        starts another."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def view(self, fig) -> FigureView:
        """The :class:`FigureView` of ``fig``: its PNG rendered ahead (waiting
        for it when it is not ready yet), or rendered now when ``fig`` was
        not submitted.

        Raises
        ------
        Exception
            What rendering ``fig`` raised (:meth:`FigureView.of`).
        """
        submitted, future = self._views.get(id(fig), (None, None))
        if submitted is fig:
            return future.result()
        return FigureView.of(fig)


__all__ = ["ExplanationView", "FigurePngs", "FigureView", "FindingView", "Group", "KeyFigures",
           "Listing", "Note", "Table", "environment", "is_figure", "render_item"]
