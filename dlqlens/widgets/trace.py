"""Rule trace: what a rules-table replay did with one message, rule by rule.

:func:`rule_trace` takes one row of :func:`dlqlens.rules.replay.replay`
(``tried``, ``disposition``...) and the rules table, and says for every rule
whether its patterns match the message, and when one does not, which pattern
keyword failed and on which value; then which matching rules the handler
tried, each attempt (its time after the message was first seen, as the
replay's model counts it: one attempt per pass, passes RETRYINT apart) and
its outcome, and the fate.

The pattern results are computed here with the handler's matching
(:meth:`dlqlens.rules.model.Pattern.matches`) from the message's MQMD and
MQDLH fields; the attempts and outcomes are the replay's (its ``tried``), not
recomputed. When the replay's row also carries ``matched``, the two are
compared and a difference is reported, not hidden.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dlqlens.mq.constants import code_name
from dlqlens.rules.model import RulesTable
from dlqlens.rules.handler import Message, resolve_target
from dlqlens.rules.replay import ReplayPlan
from dlqlens.rules.world import World
from dlqlens.safe import printable
from dlqlens.widgets._render import esc, table, text_table


@dataclass(frozen=True)
class PatternCheck:
    """One pattern keyword of a rule against the message.

    Attributes
    ----------
    keyword : str
        ``DESTQ``, ``REASON``...
    pattern : str
        As written in the table (``DESTQ(APP.*)``).
    field : str
        The MQ field it tests (``dlh.DestQName``).
    value : str
        The message's value of that field (``repr``), ``"unknown"`` when the
        fields were not given.
    matched : bool or None
        None when the fields were not given.
    """

    keyword: str
    pattern: str
    field: str
    value: str
    matched: bool | None


@dataclass(frozen=True)
class AttemptStep:
    """One attempt of a rule: number over the whole message, time, outcome."""

    number: int
    seconds: int
    outcome: str
    reason: int | None = None
    target: str = ""

    @property
    def reason_text(self) -> str:
        return "" if self.reason is None else f"{code_name(self.reason)} ({self.reason})"


@dataclass(frozen=True)
class RuleStep:
    """One rule of the table, for one message.

    Attributes
    ----------
    index, line : int
    text : str
        The rule in rules-table syntax.
    usable : bool
        False when the rule has validation errors (the replay leaves it out).
    matched : bool or None
        Whether every pattern matches; None when unknown (no fields given
        and no ``matched`` in the replay row).
    checks : tuple of PatternCheck
        Every pattern written in the rule.
    outcome : str or None
        ``succeeded``, ``failed``, ``ignored`` (from the replay's ``tried``),
        or None when the handler did not try this rule.
    attempts : tuple of AttemptStep
    note : str
        Why a matching rule was not tried, why a rule did not match.
    """

    index: int
    line: int
    text: str
    usable: bool
    matched: bool | None
    checks: tuple = ()
    outcome: str | None = None
    attempts: tuple = ()
    note: str = ""

    @property
    def failed_keywords(self) -> tuple[str, ...]:
        """The keywords whose pattern does not match the message."""
        return tuple(c.keyword for c in self.checks if c.matched is False)


@dataclass
class RuleTrace:
    """The handler's path through the rules table for one message.

    ``to_text()``, ``_repr_html_()`` and ``to_dict()``; every value from the
    capture or the table is escaped in both renderings.
    """

    source: str
    message_number: int
    disposition: str | None
    left_reason: str | None
    action: str | None
    rule_index: int | None
    target: str
    seconds_to_disposition: int | None
    retryint: int
    has_dlh: bool | None
    steps: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def headline(self) -> str:
        if self.has_dlh is False or self.left_reason == "no_dlh":
            return ("No MQDLH: the DLQ handler never processes this message; it stays on the DLQ "
                    "and no rule is tried.")
        if self.disposition == "left":
            why = {"ignore_rule": f"rule {self.rule_index or self._ignore_rule()} has ACTION(IGNORE)",
                   "rules_exhausted": "every matching rule failed all its attempts",
                   "no_match": "no rule matches it"}.get(self.left_reason or "", self.left_reason)
            return f"Left on the DLQ: {why}."
        if self.disposition:
            when = (f" after {self.seconds_to_disposition} s" if self.seconds_to_disposition else
                    " at the first attempt")
            return (f"{self.disposition.capitalize()} by rule {self.rule_index} "
                    f"(ACTION({self.action})){' to ' + self.target if self.target else ''}{when}.")
        return "No replay result for this message."

    def _ignore_rule(self):
        return next((s.index for s in self.steps if s.outcome == "ignored"), "?")

    def to_dict(self) -> dict:
        return {
            "source": self.source, "message_number": self.message_number,
            "disposition": self.disposition, "left_reason": self.left_reason,
            "action": self.action, "rule_index": self.rule_index, "target": self.target,
            "seconds_to_disposition": self.seconds_to_disposition, "retryint": self.retryint,
            "notes": list(self.notes),
            "rules": [{"index": s.index, "line": s.line, "rule": s.text, "usable": s.usable,
                       "matched": s.matched, "failed_keywords": list(s.failed_keywords),
                       "checks": [vars(c) for c in s.checks], "outcome": s.outcome,
                       "attempts": [vars(a) for a in s.attempts], "note": s.note}
                      for s in self.steps],
        }

    def _rows(self):
        for s in self.steps:
            if not s.usable:
                verdict = "left out (validation errors)"
            elif s.matched is None:
                verdict = "unknown"
            elif s.matched:
                verdict = "matches"
            elif s.failed_keywords:
                verdict = "no match: " + ", ".join(
                    f"{c.pattern} vs {c.value}" for c in s.checks if c.matched is False)
            elif self.has_dlh is False:
                verdict = "no match: no MQDLH"
            else:
                verdict = "no match (which keyword: fields not given)"

            tried = s.outcome or (s.note if s.matched else "")
            yield (s.index, s.line, s.text, verdict, tried)

    def _attempt_rows(self):
        for s in self.steps:
            for a in s.attempts:
                yield (a.number, f"{a.seconds} s", f"rule {s.index}", a.target, a.outcome,
                       a.reason_text)

    def to_text(self) -> str:
        lines = [f"{self.source} #{self.message_number}", self.headline, ""]
        lines += [f"note: {n}" for n in self.notes]
        lines.append(text_table(("rule", "line", "rule text", "patterns", "handler"),
                                list(self._rows())))
        attempts = list(self._attempt_rows())
        if attempts:
            lines += ["", f"Attempts (one per pass, RETRYINT {self.retryint} s):",
                      text_table(("#", "at", "rule", "put to", "outcome", "reason"), attempts)]
        return printable("\n".join(lines)) + "\n"

    def _repr_html_(self) -> str:
        notes = "".join(f"<p><i>{esc(n)}</i></p>" for n in self.notes)
        attempts = list(self._attempt_rows())
        att = (f"<p>Attempts (one per pass, RETRYINT {self.retryint} s):</p>"
               + table(("#", "at", "rule", "put to", "outcome", "reason"), attempts)
               if attempts else "")
        return (f"<div><p><code>{esc(self.source)} #{self.message_number}</code></p>"
                f"<p><b>{esc(self.headline)}</b></p>{notes}"
                + table(("rule", "line", "rule text", "patterns", "handler"), list(self._rows()),
                        mono=(2,))
                + att + "</div>")


def _get(d, key, default=None):
    if isinstance(d, Mapping):
        return d.get(key, default)
    try:  # a pyspark Row
        return d[key]
    except (KeyError, ValueError, IndexError, TypeError):
        return default


def _as_dict(row) -> dict:
    if row is None:
        return {}
    if hasattr(row, "asDict"):
        return row.asDict(recursive=True)
    return dict(row)


def message_fields(message: Mapping) -> dict | None:
    """The ``"dlh.DestQName"``-style fields a rule reads, from a decoded row
    (``md`` and ``dlh`` structs); None when the row has no ``md``."""
    md = _get(message, "md")
    if md is None:
        return None
    dlh = _get(message, "dlh") or {}
    out = {f"md.{k}": v for k, v in dict(md).items()}
    out.update({f"dlh.{k}": v for k, v in dict(dlh).items()})
    return out


def _text_value(value) -> str:
    if isinstance(value, (bytes, bytearray)):
        return repr(bytes(value))
    return repr(value)


def rule_trace(replayed_row, table: RulesTable, message=None, *,
               world: World | str | None = None) -> RuleTrace:
    """Trace one replayed message through a rules table.

    Parameters
    ----------
    replayed_row : mapping or pyspark Row
        One row of :func:`dlqlens.rules.replay.replay` (``source``,
        ``message_number``, ``tried``, ``rule_index``, ``action``,
        ``target_queue``, ``target_qmgr``, ``disposition``, ``left_reason``,
        ``seconds_to_disposition``; ``matched`` when present). It may also
        carry the message's ``md`` and ``dlh`` (a replay joined to its capture).
    table : RulesTable
        The table that was replayed.
    message : mapping or Row, optional
        The decoded capture row (``md``, ``dlh``), to say which pattern
        keyword did not match; without it (and without ``md`` in
        ``replayed_row``) only the replay's ``matched`` is known.
    world : World or str, optional
        The world of the replay; only used to name the reason of the failed
        attempts that precede a successful one within one rule (the replay
        records the reason of a rule's last failed attempt only).

    Returns
    -------
    RuleTrace
    """
    r = _as_dict(replayed_row)
    msg_row = _as_dict(message) if message is not None else r
    fields = message_fields(msg_row)
    plan = ReplayPlan.from_table(table, allow_errors=True)
    usable = {ra.index for ra in plan.rules}
    world_obj = World.load(world) if world is not None else None
    replay_matched = r.get("matched")
    has_dlh = None
    if fields is not None:
        has_dlh = bool(_get(msg_row, "dlh"))
    elif "matched" in r:
        has_dlh = replay_matched is not None
    notes: list[str] = []
    tried = {int(t["rule_index"]): t for t in (r.get("tried") or [])}
    order = [int(t["rule_index"]) for t in (r.get("tried") or [])]
    dlh = _get(msg_row, "dlh") or {}
    md = _get(msg_row, "md") or {}
    msg = Message(True, _get(dlh, "Reason"), (_get(dlh, "DestQName") or "").rstrip(),
                  (_get(dlh, "DestQMgrName") or "").rstrip(), (_get(md, "ReplyToQ") or "").rstrip(),
                  (_get(md, "ReplyToQMgr") or "").rstrip())

    # the attempts, numbered over the whole message as the replay counts them
    attempts: dict[int, list[AttemptStep]] = {}
    puts = 0
    for index in order:
        t = tried[index]
        n = int(t.get("attempts") or 0)
        outcome = t.get("outcome")
        target = ""
        if index in usable and fields is not None:
            ra = plan.rule(index)
            if ra.action in ("RETRY", "FWD"):
                q, qm = resolve_target(ra, msg, world_obj or World.optimistic())
                target = q + (f" on {qm}" if qm else "")
        steps = []
        if outcome == "ignored":
            steps.append(AttemptStep(puts + 1, puts * plan.retryint, "ignored (ACTION(IGNORE))"))
        else:
            for k in range(1, n + 1):
                puts += 1
                last = k == n
                if outcome == "succeeded" and last:
                    steps.append(AttemptStep(puts, (puts - 1) * plan.retryint, "succeeded",
                                             None, target))
                elif outcome == "failed":
                    steps.append(AttemptStep(puts, (puts - 1) * plan.retryint, "failed",
                                             t.get("reason"), target))
                else:  # failed before this rule's successful attempt
                    reason = None
                    if world_obj is not None and target:
                        ra = plan.rule(index)
                        q, qm = resolve_target(ra, msg, world_obj)
                        reason = world_obj.outcome_for(q, qm, msg.dest_q,
                                                       msg.dest_qmgr).failure_reason(msg.reason)
                    steps.append(AttemptStep(puts, (puts - 1) * plan.retryint,
                                             "failed" if reason is not None else
                                             "failed (reason not recorded by the replay)",
                                             reason, target))
        attempts[index] = steps

    decided = r.get("rule_index")
    steps: list[RuleStep] = []
    computed_matched: list[int] = []
    for rule in table.rules:
        checks = []
        for p in rule.patterns:
            if fields is None:
                checks.append(PatternCheck(p.keyword, p.display(), p.field, "unknown", None))
                continue
            value = fields.get(p.field)
            checks.append(PatternCheck(p.keyword, p.display(), p.field, _text_value(value),
                                       bool(p.matches(value))))
        ok = rule.index in usable
        if fields is not None:
            matched = bool(has_dlh) and all(c.matched for c in checks)
        elif replay_matched is not None:
            matched = rule.index in replay_matched
        elif "matched" in r and has_dlh is False:
            matched = False
        else:
            matched = None
        if matched and ok:
            computed_matched.append(rule.index)
        note = ""
        if not ok:
            note = "left out of the replay: the rule has validation errors"
        elif matched and rule.index not in tried:
            earlier = decided or next((i for i in order if tried[i].get("outcome") == "ignored"),
                                      None)
            note = (f"not tried: rule {earlier} decided first" if earlier else
                    "not tried")
        elif has_dlh is False:
            note = "no MQDLH"
        t = tried.get(rule.index)
        steps.append(RuleStep(rule.index, rule.line, rule.display(), ok, matched, tuple(checks),
                              t.get("outcome") if t else None, tuple(attempts.get(rule.index, ())),
                              note))
    if fields is None:
        notes.append("the message's fields were not given: which keyword did not match is unknown")
    if fields is not None and replay_matched is not None and has_dlh and \
            list(replay_matched) != computed_matched:
        notes.append(f"the replay matched rules {list(replay_matched)}, the patterns checked here "
                     f"match {computed_matched}")
    tq, tqm = r.get("target_queue"), r.get("target_qmgr")
    target = (tq or "") + (f" on {tqm}" if tqm else "")
    return RuleTrace(str(r.get("source") or _get(msg_row, "source")),
                     int(r.get("message_number") or _get(msg_row, "message_number") or 0),
                     r.get("disposition"), r.get("left_reason"), r.get("action"), decided,
                     target, r.get("seconds_to_disposition"), plan.retryint, has_dlh, steps, notes)
