"""The results of the suites: a tidy table, text, HTML and a dict.

:class:`QualityResults` is an explanation-like data object (``to_text()``,
``_repr_html_()``, ``to_dict()``, as the objects of :mod:`dlqlens.explain`)
holding one :class:`Result` per expectation; :attr:`QualityResults.table` is
the same as a small pandas DataFrame. Values that came from a capture (the
example values great-expectations reports) are escaped in text
(:func:`dlqlens.safe.one_line`) and in HTML.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from dlqlens.safe import one_line

#: The columns of :attr:`QualityResults.table`.
TABLE_COLUMNS = ("suite", "expectation", "column", "observed", "threshold", "passed", "failing")


def _status(passed) -> str:
    return {True: "pass", False: "FAIL", None: "unknown"}[passed]


@dataclass
class Result:
    """One expectation's result.

    Attributes
    ----------
    check : Check
    passed : bool or None
        None: not evaluated (no value to look at, or an error), with
        ``observed`` saying why.
    observed : str
        What was found, in words.
    value : float, int or None
        The observed number (unexpected count, share, maximum or sum).
    failing : MessageSelection
        The messages that fail it, as a filter over the capture DataFrame.
    error : str or None
        What great-expectations raised when it could not evaluate the
        expectation (``passed`` is then None).
    """

    check: object
    passed: bool | None
    observed: str
    value: object
    failing: object
    error: str | None = None

    @property
    def name(self) -> str:
        return self.check.name

    def to_dict(self) -> dict:
        c = self.check
        return {"expectation": c.name, "suite": c.suite, "column": c.column,
                "great_expectations": c.expectation, "observed": self.observed,
                "value": self.value, "threshold": c.threshold, "passed": self.passed,
                "failing": self.failing.to_dict()}


@dataclass
class QualityResults:
    """The results of one audit.

    Attributes
    ----------
    results : list of Result
        In suite order.
    policy : Policy
    notes : list of str
        What the audit read (captures audited as the DLQ, the capture time's
        origin, what was not given).
    """

    results: list
    policy: object
    notes: list = field(default_factory=list)

    @property
    def failed(self) -> list:
        """The results whose expectation failed."""
        return [r for r in self.results if r.passed is False]

    @property
    def errors(self) -> list:
        """The results great-expectations could not evaluate (it raised)."""
        return [r for r in self.results if r.error is not None]

    @property
    def success(self) -> bool:
        """True when no expectation failed (unknown ones do not fail)."""
        return not self.failed

    def __getitem__(self, name: str) -> Result:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"no expectation {name!r}; known: {', '.join(self.names)}")

    @property
    def names(self) -> list:
        return [r.name for r in self.results]

    def failing(self, name: str):
        """The :class:`~dlqlens.quality.checks.MessageSelection` of expectation ``name``."""
        return self[name].failing

    @property
    def table(self):
        """The results as a pandas DataFrame (:data:`TABLE_COLUMNS`; ``passed``
        is True, False or None, ``failing`` the filter's predicate or words)."""
        import pandas as pd

        rows = [(r.check.suite, r.name, r.check.column, r.observed, r.check.threshold,
                 r.passed, r.failing.predicate or r.failing.description) for r in self.results]
        return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))

    def __repr__(self) -> str:
        return f"<QualityResults: {self.summary()}>"

    def summary(self) -> str:
        """One line: expectations run, passed, failed, unknown."""
        n = len(self.results)
        ok = sum(r.passed is True for r in self.results)
        unknown = sum(r.passed is None for r in self.results)
        return (f"{n} expectation(s): {ok} passed, {len(self.failed)} failed, "
                f"{unknown} unknown")

    def to_text(self, only_failed: bool = False) -> str:
        """A table in plain text, control characters escaped, then the failed ones' filters."""
        shown = self.failed if only_failed else self.results
        width = max([len(r.name) for r in shown] + [11])
        lines = [f"{'status':<7} {'expectation':<{width}}  observed  (expected)"]
        for r in shown:
            lines.append(f"{_status(r.passed):<7} {r.name:<{width}}  "
                         f"{one_line(r.observed)}  ({one_line(r.check.threshold)})")
        for r in self.failed:
            lines.append("")
            lines.append(f"{r.name} failing messages: "
                         + one_line(r.failing.predicate or r.failing.description))
        lines.append("")
        lines.append(self.summary())
        lines.extend(one_line(n) for n in self.notes)
        return "\n".join(lines) + "\n"

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = []
        for r in self.results:
            css = {True: "pass", False: "fail", None: "unknown"}[r.passed]
            rows.append(
                f'<tr class="{css}"><td>{esc(_status(r.passed))}</td><td>{esc(r.check.suite)}</td>'
                f"<td><code>{esc(r.name)}</code></td><td><code>{esc(r.check.column)}</code></td>"
                f"<td>{esc(r.observed)}</td><td>{esc(r.check.threshold)}</td>"
                f"<td><code>{esc(r.failing.predicate or r.failing.description)}</code></td></tr>")
        notes = "".join(f"<li>{esc(n)}</li>" for n in self.notes)
        return ('<div class="dlqlens-quality"><p>' + esc(self.summary()) + "</p>"
                '<table class="data"><thead><tr><th>status</th><th>suite</th>'
                "<th>expectation</th><th>column</th><th>observed</th><th>expected</th>"
                "<th>failing messages</th></tr></thead><tbody>" + "".join(rows)
                + "</tbody></table>" + (f"<ul>{notes}</ul>" if notes else "") + "</div>")

    def to_dict(self) -> dict:
        return {"success": self.success, "summary": self.summary(),
                "policy": self.policy.to_dict(), "notes": list(self.notes),
                "results": [r.to_dict() for r in self.results]}


__all__ = ["QualityResults", "Result", "TABLE_COLUMNS"]
