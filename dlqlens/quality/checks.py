"""One expectation of a suite (:class:`Check`) and the messages that fail it
(:class:`MessageSelection`).

A check is a great-expectations expectation over one column expression of a
frame: the capture rows, the DLQ's rows, the detectors' findings, the rules
replay or the DLQ depths. The expression is Spark SQL over the frame's
columns (``md.StrucId``, ``dlh.Reason``: MQ's names, as in the capture
DataFrame), so the same text that great-expectations validates gives, negated,
the filter of the messages that fail it (:func:`failing_sql`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dlqlens.spark.columns import sql_literal

#: The great-expectations expectations the suites use, and how their failing
#: rows read as Spark SQL (``{e}`` is the column expression). Column
#: aggregate expectations (max, sum) fail as a whole; their rows are those
#: beyond the bound.
_FAILING = {
    "ExpectColumnValuesToBeInSet": "({e}) IS NOT NULL AND NOT (({e}) IN ({values}))",
    "ExpectColumnValuesToMatchRegex": "({e}) IS NOT NULL AND NOT (({e}) RLIKE {regex})",
    "ExpectColumnValuesToBeBetween": "({e}) IS NOT NULL AND (({e}) < {min_value} OR ({e}) > {max_value})",
    "ExpectColumnMaxToBeBetween": "({e}) IS NOT NULL AND ({e}) > {max_value}",
    "ExpectColumnSumToBeBetween": "({e}) <> 0",
}

#: Which frame a check reads, and the columns that name its messages (a finding
#: names them through the links of its ``finding_id``: :mod:`dlqlens.detect.findings`).
FRAMES = {
    "messages": ("source", "message_number"),
    "dlq": ("source", "message_number"),
    "findings": ("finding_id",),
    "replay": ("source", "message_number"),
    "depth": ("source",),
}


@dataclass(frozen=True)
class Check:
    """One expectation.

    Attributes
    ----------
    name : str
        Stable identifier, ``suite.what`` (``structural.md.StrucId``,
        ``hygiene.max_age``): what the command line prints when it fails.
    suite : str
        ``structural`` or ``hygiene``.
    column : str
        The MQ field or derived column checked, as an analyst names it
        (``md.StrucId``, ``age_seconds``).
    expr : str
        Spark SQL expression over the frame's columns that great-expectations
        validates.
    expectation : str
        The great-expectations class (``ExpectColumnValuesToBeInSet``...).
    kwargs : dict
        Its arguments besides ``column`` (``value_set``, ``regex``,
        ``min_value``, ``max_value``, ``mostly``).
    threshold : str
        The expected value in words (``in {1, 2}``, ``<= 86400 s``).
    doc : str
        What is checked and why (the IBM documentation section followed).
    frame : str
        The rows read (:data:`FRAMES`).
    row_predicate : bool
        True when ``expr`` reads only capture columns, so that the failing
        rows are a predicate over the capture DataFrame; False for a derived
        column (an age computed against the capture time).
    """

    name: str
    suite: str
    column: str
    expr: str
    expectation: str
    kwargs: dict = field(default_factory=dict)
    threshold: str = ""
    doc: str = ""
    frame: str = "messages"
    row_predicate: bool = True

    def __hash__(self):
        return hash(self.name)


def failing_sql(check: Check) -> str:
    """The Spark SQL predicate, over ``check``'s frame, of the rows that fail it."""
    template = _FAILING[check.expectation]
    kw = check.kwargs
    values = ", ".join(sql_literal(v) for v in kw.get("value_set", ()))
    return template.format(
        e=check.expr, values=values or "NULL", regex=sql_literal(kw.get("regex", "")),
        min_value=sql_literal(kw["min_value"]) if kw.get("min_value") is not None else "-1E308",
        max_value=sql_literal(kw["max_value"]) if kw.get("max_value") is not None else "1E308")


@dataclass
class MessageSelection:
    """The messages that fail a check, as a filter over the capture DataFrame.

    Lazy: nothing is computed until it is applied.

    Attributes
    ----------
    predicate : str or None
        A Spark SQL predicate over the capture DataFrame's columns
        (``df.where(predicate)``), when the check reads capture columns
        only; None when the failing messages come from another analysis
        (findings, replay, depths): then :meth:`apply` joins.
    description : str
        The filter in words.
    rows : pyspark.sql.DataFrame or None
        The failing rows' keys (``on``), lazily (a join of :meth:`apply`).
    on : tuple of str
        The key columns of ``rows``.
    """

    predicate: str | None
    description: str
    rows: object = None
    on: tuple = ("source", "message_number")

    def column(self):
        """The predicate as a Spark Column.

        Raises
        ------
        ValueError
            When the selection has no row predicate (use :meth:`apply`).
        """
        from pyspark.sql import functions as F

        if self.predicate is None:
            raise ValueError(f"{self.description}: not a row predicate; use apply(df)")
        return F.expr(self.predicate)

    def apply(self, df):
        """The failing messages of capture DataFrame ``df`` (a lazy DataFrame)."""
        if self.predicate is not None:
            return df.where(self.predicate)
        return df.join(self.rows.select(*self.on).distinct(), list(self.on), "left_semi")

    def to_dict(self) -> dict:
        return {"predicate": self.predicate, "description": self.description}


__all__ = ["FRAMES", "Check", "MessageSelection", "failing_sql"]
