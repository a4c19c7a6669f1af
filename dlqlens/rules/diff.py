"""Diff two rules tables by replaying both over the same capture.

Which messages change fate when ``old`` is replaced by ``new``, from what to
what, and how many per transition. Both replays run in one pass over the
capture (the rows of the two replays are the same rows, so the "join on
``(source, message_number)``" is a projection, not a shuffle), under the same
:class:`~dlqlens.rules.world.World`.

Definitions
-----------
fate
    ``disposition`` (``retried``, ``forwarded``, ``discarded``), or
    ``left/<left_reason>`` for a message that stays on the DLQ
    (``left/no_match`` ...).
fate_changed
    Any of ``disposition``, ``left_reason``, ``action``, ``target_queue``,
    ``target_qmgr``, ``header_kept`` differs: a message forwarded to another
    queue, or retried instead of forwarded, changes fate even when its
    disposition label does not. ``tried`` and ``seconds_to_disposition``
    alone (a different RETRY count or RETRYINT) do not count.
rule_changed
    ``rule_index`` differs. Rule indexes are positions in each table, so
    inserting a rule renumbers the rules after it; such a message is listed
    as a rule change with the same fate.
transition
    ``(old_fate, new_fate, old_rule_index, new_rule_index)`` over the
    messages whose fate or rule changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlqlens.rules.model import RulesTable
from dlqlens.rules.replay import (
    _FATE_FIELDS,
    ReplayPlan,
    _fate_columns,
    _matched_column,
    _project,
    _small,
)
from dlqlens.rules.world import World

__all__ = ["diff", "transitions", "changed", "summarize_diff", "DiffSummary", "jsonl_column",
           "FATE_KEYS"]

#: The fields whose change makes a fate change.
FATE_KEYS = ("disposition", "left_reason", "action", "target_queue", "target_qmgr",
             "header_kept")


def _fate_label(side):
    from pyspark.sql import functions as F

    return F.when(side["disposition"] == "left",
                  F.concat(F.lit("left/"), side["left_reason"])).otherwise(side["disposition"])


def diff(old: RulesTable | ReplayPlan, new: RulesTable | ReplayPlan, capture,
         world: World | str | None = "optimistic", *, allow_errors: bool = False,
         small: bool | None = None):
    """Replay ``old`` and ``new`` over ``capture`` side by side.

    Parameters
    ----------
    old, new : RulesTable or ReplayPlan
    capture : pyspark.sql.DataFrame
        A capture (:func:`dlqlens.spark.load_capture`).
    world : World or str, optional
        The same world for both replays (default ``"optimistic"``).
    allow_errors, small : bool
        As for :func:`dlqlens.rules.replay.replay` (a small capture's fates,
        both tables', are decided on the driver after one query).

    Returns
    -------
    pyspark.sql.DataFrame
        One row per message: ``source``, ``message_number``,
        ``old`` and ``new`` (structs of the replay fields ``tried`` ...
        ``seconds_to_disposition``), ``old_fate``, ``new_fate`` (str),
        ``fate_changed``, ``rule_changed`` (bool).
    """
    from pyspark.sql import functions as F

    plans = [p if isinstance(p, ReplayPlan) else ReplayPlan.from_table(p, allow_errors=allow_errors)
             for p in (old, new)]
    world = World.load(world)
    projected, names = _project(capture, plans)
    projected = projected.select(
        "*",
        _matched_column(plans[0], names).alias("_old_matched"),
        _matched_column(plans[1], names).alias("_new_matched"),
    )
    old_fate, new_fate = _fate_columns(
        projected, [(plans[0], F.col("_old_matched")), (plans[1], F.col("_new_matched"))],
        world, _small(capture, small))
    sides = projected.select("source", "message_number", old_fate.alias("old"),
                             new_fate.alias("new"))
    same_fate = F.lit(True)
    for key in FATE_KEYS:
        same_fate = same_fate & F.col("old")[key].eqNullSafe(F.col("new")[key])
    return sides.select(
        "source", "message_number", "old", "new",
        _fate_label(F.col("old")).alias("old_fate"),
        _fate_label(F.col("new")).alias("new_fate"),
        (~same_fate).alias("fate_changed"),
        (~F.col("old")["rule_index"].eqNullSafe(F.col("new")["rule_index"])).alias("rule_changed"),
    )


def changed(diffed):
    """The messages whose fate or disposing rule changed."""
    from pyspark.sql import functions as F

    return diffed.filter(F.col("fate_changed") | F.col("rule_changed"))


def transitions(diffed):
    """Messages per transition (a small DataFrame, most frequent first).

    Returns
    -------
    pyspark.sql.DataFrame
        ``old_fate``, ``new_fate`` (str), ``old_rule_index``,
        ``new_rule_index`` (int or null), ``fate_changed`` (bool),
        ``messages`` (long).
    """
    from pyspark.sql import functions as F

    return (
        changed(diffed)
        .groupBy("old_fate", "new_fate",
                 F.col("old.rule_index").alias("old_rule_index"),
                 F.col("new.rule_index").alias("new_rule_index"), "fate_changed")
        .agg(F.count(F.lit(1)).alias("messages"))
        .orderBy(F.desc("messages"), "old_fate", "new_fate", "old_rule_index", "new_rule_index")
    )


def jsonl_column(diffed):
    """One JSON text per message: ``source``, ``message_number``, ``old``,
    ``new`` (each with the replay fields), ``fate_changed``, ``rule_changed``."""
    from pyspark.sql import functions as F

    return F.to_json(
        F.struct("source", "message_number",
                 F.struct(*[F.col("old")[k].alias(k) for k in _FATE_FIELDS]).alias("old"),
                 F.struct(*[F.col("new")[k].alias(k) for k in _FATE_FIELDS]).alias("new"),
                 "fate_changed", "rule_changed"),
        {"ignoreNullFields": "false"},
    )


@dataclass(frozen=True)
class DiffSummary:
    """Counts of a diff, on the driver.

    Attributes
    ----------
    messages : int
        Messages replayed.
    fate_changed : int
        Messages whose fate changed.
    rule_changed_only : int
        Messages with the same fate but another disposing rule index.
    fate_transitions : list of (str, str, int)
        ``(old_fate, new_fate, messages)`` over fate changes, most frequent first.
    rule_transitions : list of (str, str, int or None, int or None, int)
        ``(old_fate, new_fate, old_rule_index, new_rule_index, messages)``
        over every change.
    """

    messages: int
    fate_changed: int
    rule_changed_only: int
    fate_transitions: list
    rule_transitions: list

    def to_text(self) -> str:
        def rule(i):
            return "-" if i is None else str(i)

        lines = [f"{self.messages} message(s): {self.fate_changed} change fate, "
                 f"{self.rule_changed_only} keep their fate under another rule index"]
        if self.fate_transitions:
            lines.append("")
            lines.append("fate transitions (old -> new):")
            for old, new, n in self.fate_transitions:
                lines.append(f"{n:>9}  {old} -> {new}")
        if self.rule_transitions:
            lines.append("")
            lines.append("with rules (old rule -> new rule):")
            for old, new, ro, rn, n in self.rule_transitions:
                lines.append(f"{n:>9}  {old} -> {new}  rule {rule(ro)} -> {rule(rn)}")
        return "\n".join(lines) + "\n"


def summarize_diff(diffed) -> DiffSummary:
    """Bring the counts of a diff to the driver (one aggregation)."""
    from pyspark.sql import functions as F

    rows = (
        diffed.groupBy("old_fate", "new_fate",
                       F.col("old.rule_index").alias("ro"), F.col("new.rule_index").alias("rn"),
                       "fate_changed", "rule_changed")
        .agg(F.count(F.lit(1)).alias("n")).collect()
    )
    messages = sum(r["n"] for r in rows)
    fate: dict = {}
    rules = []
    for r in rows:
        if r["fate_changed"]:
            fate[(r["old_fate"], r["new_fate"])] = fate.get((r["old_fate"], r["new_fate"]), 0) + r["n"]
        if r["fate_changed"] or r["rule_changed"]:
            rules.append((r["old_fate"], r["new_fate"], r["ro"], r["rn"], r["n"]))

    def order(t):
        return (-t[-1],) + tuple("" if v is None else str(v) for v in t[:-1])

    return DiffSummary(
        messages=messages,
        fate_changed=sum(r["n"] for r in rows if r["fate_changed"]),
        rule_changed_only=sum(r["n"] for r in rows if r["rule_changed"] and not r["fate_changed"]),
        fate_transitions=sorted(((o, n, c) for (o, n), c in fate.items()), key=order),
        rule_transitions=sorted(rules, key=order),
    )
