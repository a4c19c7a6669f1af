"""Small HTML and text helpers shared by the widgets' static twins.

Every value that may come from a capture goes through :func:`esc` (control
characters shown as escapes by :func:`dlqlens.safe.printable`, then
:func:`html.escape`); markup is only ever built here from fixed strings.
"""

from __future__ import annotations

import html

from dlqlens.safe import one_line, printable

#: Inline styles of the static tables (no classes: a saved notebook, nbviewer
#: and the HTML report have none of our CSS).
TABLE = "style='border-collapse:collapse;font-size:90%'"
CELL = "style='text-align:left;vertical-align:top;padding:1px 6px'"
MONO = "style='font-family:monospace;white-space:pre;text-align:left;vertical-align:top;padding:1px 6px'"
WRAP = "style='font-family:monospace;white-space:pre-wrap;word-break:break-all;text-align:left'"


def esc(value) -> str:
    """``value`` as HTML text: ``None`` as empty, control characters escaped."""
    if value is None:
        return ""
    return html.escape(printable(str(value)))


def esc_line(value) -> str:
    """``value`` for one table cell: every non-printable character escaped (LF too)."""
    return html.escape(one_line(value))


def table(headers, rows, *, mono=()) -> str:
    """An HTML table; ``rows`` are sequences of plain values (escaped here).

    ``mono``: indexes of the columns shown in a monospace font.
    """
    head = "".join(f"<th {CELL}>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(f"<td {MONO if i in mono else CELL}>{esc_line(v)}</td>"
                        for i, v in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table {TABLE}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def text_table(headers, rows) -> str:
    """The same rows as aligned plain text (values made one-line and printable)."""
    cells = [[one_line(h) for h in headers]] + [[one_line(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)
