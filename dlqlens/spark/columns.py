"""Spark column expressions that cost the driver little to build.

Every ``pyspark.sql.functions`` call of a classic (py4j) session is three or
more round trips to the JVM, so an expression of N literals costs the driver
N times that before Spark has read a row: a map of the 600 MQRC and MQFB
names built with ``F.create_map(F.lit(k), F.lit(v), ...)`` took 14,000 calls
and two seconds of a detector's construction on this machine. The helpers
here build such expressions from one literal, whatever their size; the
optimizer folds them into the same literal the long form gives (Catalyst's
``ConstantFolding``), so the rows see no difference.
"""

from __future__ import annotations

import json
from collections.abc import Mapping


def literal_map(entries: Mapping, key_type: str = "string", value_type: str = "string"):
    """A literal map Column of ``entries``, built from one JSON text.

    Parameters
    ----------
    entries : mapping
        Keys and values that JSON holds as ``key_type`` and ``value_type``:
        str, int, bool or None (a None value is a null value; keys may not be
        None). Timestamps are given as numbers (microseconds since the epoch,
        turned back with ``F.timestamp_micros``) so that no session time zone
        enters.
    key_type, value_type : str
        Spark SQL type names (``"string"``, ``"int"``, ``"bigint"``...).

    Returns
    -------
    pyspark.sql.Column
        ``map<key_type, value_type>`` (empty for no entries); index it with a
        column (``literal_map(m)[F.col("reason")]``: null where the key is
        absent). ``map_from_entries(from_json(lit(json)))``: three calls to
        Spark whatever the map's size, folded to a map literal by the
        optimizer; the same on Spark Connect.

    Raises
    ------
    ValueError
        For a None key (a Spark map has none), or a key or value JSON cannot
        hold (``TypeError`` from ``json.dumps`` re-raised as ValueError).
    """
    from pyspark.sql import functions as F

    if any(k is None for k in entries):
        raise ValueError("literal_map: a map key may not be None")
    try:
        text = json.dumps([{"key": k, "value": v} for k, v in entries.items()])
    except TypeError as e:
        raise ValueError(f"literal_map: {e}") from None
    return F.map_from_entries(F.from_json(
        F.lit(text), f"array<struct<key:{key_type},value:{value_type}>>"))


def sql_literal(value) -> str:
    """A Spark SQL literal of a str, int, float or bool, for an expression's
    text (``F.expr``, ``selectExpr``): strings in single quotes, their
    backslashes and quotes escaped."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def sql_name(name: str) -> str:
    """A column name quoted for an expression's text (backticks, its own
    backticks doubled): the top-level column of that name, never a nested
    path."""
    return "`" + name.replace("`", "``") + "`"


__all__ = ["literal_map", "sql_literal", "sql_name"]
