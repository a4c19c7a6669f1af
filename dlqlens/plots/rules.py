"""What a runmqdlq rules table does with a capture: messages per rule."""

from __future__ import annotations

import numpy as np

from dlqlens.plots import common as C

#: Bar colours by ACTION.
ACTION_COLORS = {"RETRY": "tab:blue", "FWD": "tab:green", "DISCARD": "tab:purple",
                 "IGNORE": "tab:orange"}
IMPLICIT_COLOR = "tab:red"


def _rule_label(rule) -> str:
    label = f"line {rule.line}: {rule.action}"
    if rule.action == "FWD" and rule.fwdq:
        label += f" \u2192 {C.text(rule.fwdq)}"
        if rule.fwdqm and rule.fwdqm.strip():
            label += f" @ {C.text(rule.fwdqm)}"
    return label


def rule_coverage(replayed, table, *, top: int = 40):
    """Messages per rule of a rules-table replay, with the implicit IGNORE highlighted.

    A message's fate is decided by at most one rule: the one that retried,
    forwarded or discarded it (``rule_index``), or the ACTION(IGNORE) rule
    that left it (the ``tried`` element with outcome ``ignored``). One bar per
    rule (table order) counts those messages; one red, hatched bar counts the
    messages that fall through to the implicit IGNORE (``left_reason``
    ``no_match``: no rule matches; ``rules_exhausted``: every matching rule's
    puts failed); a grey bar counts messages without an MQDLH, which the
    handler never matches. The bars add up to the messages replayed. A rule
    whose puts failed for some messages says how many next to its bar.

    Parameters
    ----------
    replayed : pyspark.sql.DataFrame or dlqlens.rules.replay.ReplaySummary
        :func:`dlqlens.rules.replay.replay` output (its counts are taken by
        :func:`dlqlens.rules.replay.summarize`: one aggregation), or that
        summary computed already (no Spark job).
    table : dlqlens.rules.model.RulesTable or dlqlens.rules.replay.ReplayPlan
        The table replayed (rules with errors are left out, as the replay
        with ``allow_errors`` does).
    top : int, default 40
        Rules drawn on their own when the table has more; the others (fewest
        messages) are one "other (N rules)" bar.

    Returns
    -------
    matplotlib.figure.Figure
        Horizontal bars labelled ``line N: ACTION`` (``-> FWDQ @ FWDQM`` for
        FWD); x: messages. A figure saying "no messages" when ``replayed``
        is empty.

    Raises
    ------
    ValueError
        When ``top`` is not an integer of at least 1.
    """
    from dlqlens.rules.replay import ReplayPlan, ReplaySummary, summarize

    top = C.check_top(top)
    plan = table if isinstance(table, ReplayPlan) else ReplayPlan.from_table(
        table, allow_errors=True)
    title = "Rules replay: messages by the rule that decides their fate"
    summary = replayed if isinstance(replayed, ReplaySummary) else summarize(replayed, plan)
    fates: dict = {}
    for (_, why), n in summary.fates.items():
        fates[why] = fates.get(why, 0) + int(n)
    total = sum(fates.values())
    if not total:
        return C.empty_figure(title)
    per_rule = {r["rule_index"]: r for r in summary.rules}
    decided = {rule.index: per_rule.get(rule.index, {}).get("succeeded", 0)
               + per_rule.get(rule.index, {}).get("ignored", 0) for rule in plan.rules}
    failed = {rule.index: per_rule.get(rule.index, {}).get("failed", 0) for rule in plan.rules}

    rules = list(plan.rules)
    hidden = []
    if len(rules) > top:
        keep = sorted(rules, key=lambda r: (-decided[r.index], r.index))[:top]
        kept = {r.index for r in keep}
        hidden = [r for r in rules if r.index not in kept]
        rules = [r for r in rules if r.index in kept]
    labels = [_rule_label(r) for r in rules]
    values = [decided[r.index] for r in rules]
    colors = [ACTION_COLORS.get(r.action, C.OTHER_COLOR) for r in rules]
    notes = [f" (tried on {failed[r.index]:,} more: puts failed)" if failed[r.index] else ""
             for r in rules]
    if hidden:
        labels.append(f"other ({len(hidden):,} rules)")
        values.append(sum(decided[r.index] for r in hidden))
        colors.append(C.OTHER_COLOR)
        notes.append("")
    no_match, exhausted = fates.get("no_match", 0), fates.get("rules_exhausted", 0)
    labels.append("implicit IGNORE (left on the DLQ)")
    values.append(no_match + exhausted)
    colors.append(IMPLICIT_COLOR)
    notes.append(f" (no match {no_match:,}, rules exhausted {exhausted:,})")
    no_dlh = fates.get("no_dlh", 0)
    if no_dlh:
        labels.append("no MQDLH (never matched)")
        values.append(no_dlh)
        colors.append(C.OTHER_COLOR)
        notes.append("")
    labels = C.display_labels(labels, 48)

    fig = C.new_figure(11, max(3.5, 1.8 + 0.36 * len(labels)))
    ax = fig.add_subplot()
    y = np.arange(len(labels))
    bars = ax.barh(y, values, color=colors, height=0.7)
    implicit = bars[len(rules) + bool(hidden)]
    implicit.set_hatch("//")
    implicit.set_edgecolor("darkred")
    longest = max(values)
    for yi, v, note in zip(y, values, notes):
        if v > 0.6 * longest:  # inside the bar's end, on a white box
            ax.text(v, yi, f"{v:,}{note} ", va="center", ha="right", fontsize=8,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
        else:
            ax.text(v, yi, f" {v:,}{note}", va="center", ha="left", fontsize=8)
    ax.set_yticks(y, labels, fontsize=9)
    tick = ax.get_yticklabels()[len(rules) + bool(hidden)]
    tick.set_color("darkred")
    tick.set_fontweight("bold")
    ax.invert_yaxis()
    ax.set_xlim(0, max(longest, 1) * 1.05)
    ax.set_xlabel("messages")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_ylabel("rule")
    from matplotlib.patches import Patch

    present = [a for a in ACTION_COLORS if any(r.action == a for r in plan.rules)]
    handles = [Patch(color=ACTION_COLORS[a]) for a in present]
    handles.append(Patch(facecolor=IMPLICIT_COLOR, hatch="//", edgecolor="darkred"))
    C.legend(ax, handles, [f"ACTION({a})" for a in present] + ["implicit IGNORE"],
             title="action", loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9,
             title_fontsize=9)
    by_rules = sum(decided.values())
    fig.suptitle(f"{title}\n{C.count(total, 'message')}: {by_rules:,} decided by a rule, "
                 f"{no_match + exhausted:,} fall through to the implicit IGNORE"
                 + (f", {no_dlh:,} without an MQDLH" if no_dlh else ""), fontsize=11)
    return C.finish(fig)
