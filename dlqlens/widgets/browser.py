"""Notebook widgets (ipywidgets) over a capture DataFrame.

:func:`browse` shows one message at a time, explained
(:func:`dlqlens.explain.explain`): pick the capture file and the
message number; only that row is fetched from Spark. Everything from the
capture is HTML-escaped before it reaches the page. Its static twin (the
message shown, as HTML) rides in its display data as ``text/html``.
"""

from __future__ import annotations

import functools
import html

from dlqlens.explain import explain_messages


def browse(df, *, source: str | None = None, message_number: int = 1):
    """A message browser: capture file, message number, and why it is there.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (:func:`dlqlens.spark.load_capture`); reads the columns
        of :data:`dlqlens.explain.EXPLAIN_COLUMNS`.
    source : str, optional
        The capture file shown first (default: the first by name).
    message_number : int
        The message shown first (1-based).

    Returns
    -------
    ipywidgets.VBox
        ``children[0]`` holds the file ``Dropdown`` and the message
        ``BoundedIntText``; ``children[1]`` is the ``HTML`` explanation. Its
        display data carries the message shown as static ``text/html``.

    Raises
    ------
    ValueError
        When ``df`` has no rows, or ``source`` is not one of its captures.
    """
    import ipywidgets as widgets
    from pyspark.sql import functions as F

    counts = {r["source"]: int(r["n"]) for r in
              df.groupBy("source").agg(F.max("message_number").alias("n")).collect()}
    if not counts:
        raise ValueError("browse: the DataFrame has no messages")
    names = sorted(counts)
    if source is None:
        source = names[0]
    if source not in counts:
        raise ValueError(f"browse: {source!r} is not a capture of this DataFrame; "
                         f"expected one of {', '.join(names[:5])}{' ...' if len(names) > 5 else ''}")
    pick = widgets.Dropdown(options=names, value=source, description="capture")
    number = widgets.BoundedIntText(min=1, max=counts[source],
                                    value=max(1, min(int(message_number), counts[source])),
                                    description="message")
    view = widgets.HTML()

    def show(*_):
        number.max = counts[pick.value]
        rows = explain_messages(df.where((F.col("source") == pick.value)
                                         & (F.col("message_number") == int(number.value))), limit=1)
        view.value = (rows[0]._repr_html_() if rows else
                      f"<p>No message {int(number.value)} in {html.escape(pick.value)} "
                      "(dropped by the reader mode?)</p>")

    pick.observe(show, names="value")
    number.observe(show, names="value")
    show()
    return _twin_box_class()(
        [widgets.HBox([pick, number]), view],
        twin=lambda: f"<div><p><i>Message browser (static view)</i></p>{view.value}</div>")


@functools.lru_cache(maxsize=1)
def _twin_box_class():
    import ipywidgets as widgets

    class TwinBox(widgets.VBox):
        """A VBox whose display data also holds a static HTML twin."""

        def __init__(self, children, *, twin):
            super().__init__(children)
            self._twin = twin

        def _repr_mimebundle_(self, **kwargs):
            data = dict(super()._repr_mimebundle_(**kwargs) or {})
            data["text/html"] = self._twin()
            return data

    return TwinBox
