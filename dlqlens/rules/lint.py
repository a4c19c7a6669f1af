"""Auditor findings on runmqdlq rules tables.

The handler accepts these tables; the findings say where a table will not do
what its author probably wants: messages left on the DLQ for ever, rules that
are never the first match, forwarding loops, retries that cannot succeed,
forwarded messages that lose the reason they were dead-lettered.

Each check follows IBM's guidance ("Ensuring that all DLQ messages are
processed", "DLQ rules (patterns and actions)", "How the rules table is
processed") and the matching semantics of :mod:`dlqlens.rules.match`. Rules that
have validation errors are skipped (their meaning is not known); see
:data:`CODES` for every finding.

Choices made:

* A *catch-all* is a rule whose every pattern is ``*`` and whose action
  removes the message from the DLQ (FWD or DISCARD). ``no-catch-all`` is
  reported when the table has none (an earlier catch-all followed by more
  rules is fine: the later rules are fall-backs, and are reported as
  shadowed).
* Shadowing is decided pairwise (one earlier rule covering a later one), on
  the patterns only, with exact containment of generic string patterns
  (:func:`~dlqlens.rules.match.pattern_covers`); a later rule covered only by
  the union of several earlier rules is not reported. Only the earlier rules
  an index of literal keys (exact values, literal prefixes and suffixes,
  integer values) leaves as candidates are compared, so the check is about
  linear in the table's size. Exact containment can need exponentially many
  automaton states (``*A?????????`` against ``*A????????C``): each pattern
  pair gets at most :data:`~dlqlens.rules.match.COVER_BUDGET` steps and the
  table ``SHADOW_BUDGET_BASE + SHADOW_BUDGET_PER_RULE`` per rule; a pair not
  decided within it, or rules left unchecked when the table's budget is
  spent, are reported as ``shadowing-undecided`` (``info``), never guessed.
* The DLQ being processed is ``dlq_name`` when given (as the runmqdlq
  ``QName`` parameter overrides INPUTQ), else INPUTQ. A forward counts as a
  loop when FWDQ is that queue and FWDQM is blank or equals INPUTQM. With no
  DLQ name at all, FWDQ(SYSTEM.DEAD.LETTER.QUEUE), the conventional DLQ name,
  is reported as a possible loop (severity ``info``).
* ``unreached-rule`` (:func:`unreached`, needs a capture) reports a rule
  that is the first match of no message in the capture, severity ``info``:
  a capture is a sample, not a specification. A rule matched only after an
  earlier rule is reported too, with the number of messages it matches (it
  is reached only when the earlier rule's attempts fail).
* Retry advice comes from :data:`dlqlens.mq.constants.NON_RETRYABLE_REASONS`,
  :data:`~dlqlens.mq.constants.RETRYABLE_REASONS` and
  :data:`~dlqlens.mq.constants.RETRY_REASONING` only; a reason in neither set
  gets an ``info`` finding, not a verdict.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from dlqlens.mq import constants
from dlqlens.rules.match import (COVER_BUDGET, Work, matches_blank_field, pattern_covers,
                                  pattern_keys)
from dlqlens.rules.model import KEYWORDS, PATTERN_KEYWORDS, LintFinding, Rule, RulesTable

__all__ = ["LintCode", "CODES", "CAPTURE_CODES", "lint", "rule_covers", "unreached",
           "unreached_from_counts", "CONVENTIONAL_DLQ"]

#: The DLQ name most queue managers use (crtmqm -u SYSTEM.DEAD.LETTER.QUEUE).
CONVENTIONAL_DLQ = "SYSTEM.DEAD.LETTER.QUEUE"


@dataclass(frozen=True)
class LintCode:
    """One lint finding code: its severity and what it means."""

    severity: str
    meaning: str


#: Every lint code.
CODES: dict[str, LintCode] = {
    "no-catch-all": LintCode(
        "warning",
        "No rule matches every message and forwards or discards it, so unmatched "
        "messages stay on the DLQ (implicit ACTION(IGNORE)).",
    ),
    "ignore-action": LintCode(
        "warning", "ACTION(IGNORE) leaves messages on the DLQ, where they accumulate."
    ),
    "shadowed-rule": LintCode(
        "warning",
        "An earlier rule matches every message this rule matches, so this rule is "
        "never the first match.",
    ),
    "fwdq-loop": LintCode(
        "warning", "ACTION(FWD) to the dead-letter queue being processed: a loop."
    ),
    "fwdq-possible-loop": LintCode(
        "info",
        "ACTION(FWD) to SYSTEM.DEAD.LETTER.QUEUE while the DLQ name is unknown: a loop "
        "if that is the DLQ.",
    ),
    "replyq-blank": LintCode(
        "warning",
        "FWDQ(&REPLYQ) in a rule whose REPLYQ pattern does not exclude a blank "
        "ReplyToQ.",
    ),
    "retry-not-curable": LintCode(
        "warning", "ACTION(RETRY) for a reason that a retry cannot cure."
    ),
    "retry-unproven": LintCode(
        "info", "ACTION(RETRY) for a reason no known source calls curable by a retry."
    ),
    "retry-any-reason": LintCode(
        "info", "ACTION(RETRY) without a REASON pattern retries every reason."
    ),
    "header-no": LintCode(
        "warning",
        "ACTION(FWD) HEADER(NO) strips the MQDLH, losing why the message was "
        "dead-lettered and where it was going.",
    ),
    "shadowing-undecided": LintCode(
        "info",
        "Whether an earlier rule matches every message this rule matches was not "
        "decided within the work budget (patterns whose exact comparison is "
        "exponential); check by hand.",
    ),
    "unreached-rule": LintCode(
        "info",
        "No message of the given capture has this rule as its first match (needs a "
        "capture: rules check --capture).",
    ),
}

#: Codes that need a capture (:func:`unreached`), not produced by :func:`lint`.
CAPTURE_CODES = frozenset({"unreached-rule"})


def _finding(code: str, message: str, rule: Rule | None, keyword: str | None = None,
             **kw) -> LintFinding:
    line = column = None
    if rule is not None:
        line, column = rule.position(keyword) if keyword else (rule.line, rule.column)
    return LintFinding(
        code=code,
        message=message,
        rule_index=rule.index if rule is not None else None,
        line=line,
        column=column,
        severity=CODES[code].severity,
        **kw,
    )


def rule_covers(outer: Rule, inner: Rule, *, work: Work | None = None,
                budget: int = COVER_BUDGET) -> bool | None:
    """Whether every message ``inner`` matches is also matched by ``outer``.

    Decided keyword by keyword on the patterns (an omitted keyword is ``*``):
    integers must be equal or ``outer`` must be ``*``; strings use exact
    generic-pattern containment over the field length
    (:func:`~dlqlens.rules.match.pattern_covers`, at most ``budget`` steps
    per keyword).

    Returns
    -------
    bool or None
        True or False; None when no keyword refutes it but the containment
        of some keyword's patterns was not decided within the budget.
    """
    undecided = False
    later: list[tuple[str, str, int]] = []
    for keyword in PATTERN_KEYWORDS:
        po = outer.pattern(keyword)
        if po is None or po.is_any:
            continue
        pi = inner.pattern(keyword)
        if KEYWORDS[keyword].kind == "integer":
            if pi is None or pi.is_any or pi.value != po.value:
                return False
            continue
        later.append((keyword, po.value, pi))  # type: ignore[arg-type]
    # the string keywords after every integer one (cheap refutations first)
    for keyword, outer_text, pi in later:
        inner_text = "*" if pi is None else pi.value
        got = pattern_covers(outer_text, inner_text, KEYWORDS[keyword].length,
                             budget=budget, work=work)
        if got is False:
            return False
        if got is None:
            undecided = True
    return None if undecided else True


def _is_catch_all(rule: Rule) -> bool:
    return rule.is_catch_all and rule.action in ("FWD", "DISCARD")


def _describe_reason(value: int) -> str:
    return f"{constants.code_name(value)} ({value})"


def _check_rule(rule: Rule, dlq: str | None, inputqm: str, findings: list[LintFinding]) -> None:
    if rule.action == "IGNORE":
        findings.append(_finding(
            "ignore-action",
            "ACTION(IGNORE) leaves every message this rule matches on the DLQ, where the "
            "handler keeps re-scanning it and it accumulates; IBM advises forwarding such "
            "messages instead, e.g. ACTION(FWD) FWDQ(IGNORED.DEAD.QUEUE) HEADER(YES)",
            rule, "ACTION",
        ))
    if rule.action == "FWD" and rule.fwdq is not None:
        _check_forward(rule, dlq, inputqm, findings)
    if rule.action == "RETRY":
        _check_retry(rule, findings)


def _check_forward(rule: Rule, dlq: str | None, inputqm: str, findings: list[LintFinding]) -> None:
    fwdq = rule.fwdq or ""
    qmgr = rule.fwdqm.rstrip()
    local = qmgr == "" or (inputqm != "" and qmgr == inputqm)
    lost = (
        "with HEADER(NO) the copy has no MQDLH, so the handler reports it as not "
        "processable and it stays on the DLQ for ever"
        if rule.header == "NO"
        else "the copy keeps its MQDLH, so the same rule matches it again and forwards "
        "it again, without end"
    )
    if not fwdq.startswith("&") and local:
        if dlq is not None and fwdq == dlq:
            findings.append(_finding(
                "fwdq-loop",
                f"FWDQ({fwdq}) is the dead-letter queue this table processes; {lost}",
                rule, "FWDQ",
                reasoning=f"DLQ {dlq!r}; FWDQM {'blank (local)' if not qmgr else qmgr!r}",
            ))
        elif dlq is None and fwdq == CONVENTIONAL_DLQ:
            findings.append(_finding(
                "fwdq-possible-loop",
                f"FWDQ({fwdq}) is the usual name of a queue manager's dead-letter queue; "
                f"if this table processes that queue, {lost}. Give the DLQ name "
                "(INPUTQ or --dlq) to check, or forward to a separate queue",
                rule, "FWDQ",
            ))
    if fwdq == "&REPLYQ":
        pat = rule.pattern("REPLYQ")
        if pat is None or matches_blank_field(pat.value, KEYWORDS["REPLYQ"].length):  # type: ignore[arg-type]
            shown = "no REPLYQ pattern" if pat is None else f"REPLYQ({pat.text}) matches a blank ReplyToQ"
            findings.append(_finding(
                "replyq-blank",
                f"FWDQ(&REPLYQ) with {shown}: a message with a blank ReplyToQ (every "
                "datagram, most events and reports) cannot be forwarded and causes a "
                "put failure; add REPLYQ(?*) as IBM recommends",
                rule, "FWDQ",
            ))
    if rule.header == "NO":
        findings.append(_finding(
            "header-no",
            "HEADER(NO) forwards the message without its MQDLH: the reason it was "
            "dead-lettered (Reason), where it was going (DestQName, DestQMgrName) and "
            "when and by whom it was dead-lettered are lost to whoever reads "
            f"FWDQ({rule.fwdq}); keep HEADER(YES) unless the reader cannot handle an MQDLH",
            rule, "HEADER",
        ))


def _check_retry(rule: Rule, findings: list[LintFinding]) -> None:
    pat = rule.pattern("REASON")
    if pat is None or pat.is_any:
        findings.append(_finding(
            "retry-any-reason",
            "ACTION(RETRY) without a REASON pattern retries every message it matches, "
            "whatever the reason, including reasons a retry cannot cure such as "
            f"{_describe_reason(constants.MQRC['MQRC_UNKNOWN_OBJECT_Q_MGR'])}; "
            "restrict it with REASON(...)",
            rule, "ACTION",
        ))
        return
    value = int(pat.value)  # type: ignore[arg-type]
    reasoning = constants.RETRY_REASONING.get(value)
    if value in constants.NON_RETRYABLE_REASONS:
        findings.append(_finding(
            "retry-not-curable",
            f"ACTION(RETRY) for REASON {_describe_reason(value)}: a retry cannot cure "
            f"it ({reasoning or 'classified as not retryable'}); each attempt fails the "
            f"same way and, after RETRY({rule.retry}), the message falls through to the "
            "next matching rule; forward it instead",
            rule, "REASON",
            reasoning=reasoning,
        ))
    elif value not in constants.RETRYABLE_REASONS:
        findings.append(_finding(
            "retry-unproven",
            f"ACTION(RETRY) for REASON {_describe_reason(value)}: no source dlqlens "
            "knows says a retry cures this reason (known retryable: "
            + ", ".join(_describe_reason(v) for v in sorted(constants.RETRYABLE_REASONS))
            + "); check that the condition is transient",
            rule, "REASON",
        ))


#: Work budget of the shadowing check for a whole table: automaton steps
#: (:class:`~dlqlens.rules.match.Work`) plus index entries visited, at most
#: ``SHADOW_BUDGET_BASE + SHADOW_BUDGET_PER_RULE * rules``. Ordinary tables
#: use a few percent of it; once it is spent the remaining rules are not
#: checked and a ``shadowing-undecided`` finding says from which rule on.
SHADOW_BUDGET_BASE = 1_000_000
SHADOW_BUDGET_PER_RULE = 500


class _ShadowIndex:
    """Earlier rules indexed by one literal key of their patterns.

    An earlier rule can cover a later one only if, for every keyword it
    constrains, its integer value is the later rule's, and the literal
    prefix / suffix of its string pattern begin / end every value of the
    later rule's pattern (:func:`~dlqlens.rules.match.pattern_keys`). Each
    rule is filed under the most selective of those keys (its whole value
    when a string pattern has no wildcard, else the longest literal prefix
    or suffix, else the set of its integer values); a query looks up the
    keys the later rule satisfies (at most 2 x 48 + 1 per string keyword,
    2**5 subsets of its integer values) and returns the rules filed there,
    plus the rules with no key at all (patterns such as ``?*``), for
    :func:`rule_covers` to decide. A rule whose patterns repeat an earlier
    rule's is not filed (the earlier one covers whatever it would). Rules
    sharing one key are all returned: a table of many rules with the same
    long prefix and different wildcards costs a comparison per such pair,
    within the table's budget.
    """

    def __init__(self) -> None:
        self.keys: dict[tuple, list[int]] = {}
        self.wild: list[int] = []  # rules with no key: always candidates
        self.seen: set = set()

    @staticmethod
    def _string_keys(rule: Rule):
        for keyword in PATTERN_KEYWORDS:
            spec = KEYWORDS[keyword]
            if spec.kind != "string":
                continue
            pat = rule.pattern(keyword)
            if pat is None or pat.is_any:
                continue
            yield keyword, pattern_keys(pat.value, spec.length)  # type: ignore[arg-type]

    @staticmethod
    def _integers(rule: Rule) -> tuple:
        out = []
        for keyword in PATTERN_KEYWORDS:
            pat = rule.pattern(keyword)
            if KEYWORDS[keyword].kind == "integer" and pat is not None and not pat.is_any:
                out.append((keyword, pat.value))
        return tuple(out)

    def add(self, pos: int, rule: Rule) -> None:
        signature = tuple(
            (p.keyword, p.value) for p in sorted(rule.patterns, key=lambda p: p.keyword)
            if not p.is_any)
        if signature in self.seen:
            return  # the same patterns as an earlier rule, which covers all it would
        self.seen.add(signature)
        best: tuple | None = None
        best_len = 0
        for keyword, keys in self._string_keys(rule):
            if keys is None:
                return  # matches no field: covers no rule that matches something
            head, _tail, prefix, suffix = keys
            if len(head) == KEYWORDS[keyword].length:  # no wildcard: one field
                best, best_len = ("L", keyword, head), 1 << 30
            if len(prefix) > best_len:
                best, best_len = ("<", keyword, prefix), len(prefix)
            if len(suffix) > best_len:
                best, best_len = (">", keyword, suffix), len(suffix)
        if best is None:
            integers = self._integers(rule)
            if not integers:
                self.wild.append(pos)
                return
            best = ("I", integers)  # only integers: covers exactly the rules with these
        self.keys.setdefault(best, []).append(pos)

    def candidates(self, rule: Rule, work: Work) -> list[int] | None:
        """Positions of the earlier rules that may cover ``rule``, in order;
        None when every earlier rule may (``rule`` matches no message)."""
        found: list[int] = list(self.wild)

        def visit(key: tuple) -> None:
            bucket = self.keys.get(key)
            if bucket:
                work.index_visits += len(bucket)
                found.extend(bucket)

        integers = self._integers(rule)
        for size in range(len(integers) + 1):  # at most 2**5 subsets
            for subset in itertools.combinations(integers, size):
                visit(("I", subset))
        for keyword, keys in self._string_keys(rule):
            if keys is None:
                return None
            head, tail, _prefix, _suffix = keys
            if len(head) == KEYWORDS[keyword].length:
                visit(("L", keyword, head))
            for i in range(1, len(head) + 1):
                visit(("<", keyword, head[:i]))
            for i in range(1, len(tail) + 1):
                visit((">", keyword, tail[-i:]))
        work.index_visits += len(self.wild)
        found.sort()
        return found


def _shadow_message(earlier: Rule, later: Rule) -> str:
    where = f"rule {earlier.index} (line {earlier.line})"
    if earlier.action in ("IGNORE", "DISCARD"):
        verb = "leaves it on the DLQ" if earlier.action == "IGNORE" else "discards it"
        return (
            f"rule {later.index} can never be used: every message it matches is "
            f"matched first by {where}, whose ACTION({earlier.action}) {verb}"
        )
    return (
        f"rule {later.index} is never the first match: every message it "
        f"matches is matched first by {where}; it is used only after "
        f"{where}'s {earlier.retry} attempt(s) with ACTION({earlier.action}) "
        "have failed"
    )


def _check_shadowing(rules: list[Rule], findings: list[LintFinding],
                     work: Work | None = None) -> None:
    """``shadowed-rule`` and ``shadowing-undecided`` findings.

    Compares each rule with the earlier rules the index says may cover it
    (:class:`_ShadowIndex`), in table order, and reports the first that does.
    Time: the index visits plus at most :data:`~dlqlens.rules.match.COVER_BUDGET`
    steps per pattern pair compared, and never more than the table's budget
    (:data:`SHADOW_BUDGET_BASE`, :data:`SHADOW_BUDGET_PER_RULE`).
    """
    work = work if work is not None else Work()
    budget = SHADOW_BUDGET_BASE + SHADOW_BUDGET_PER_RULE * len(rules)
    index = _ShadowIndex()
    spent = work.steps + work.index_visits

    def exhausted() -> bool:
        return work.steps + work.index_visits - spent > budget

    def unchecked(first: Rule) -> None:
        findings.append(_finding(
            "shadowing-undecided",
            f"rules {first.index} to {rules[-1].index} were not (all) checked for "
            f"shadowing: the work budget of the check ({budget:,} steps for "
            f"{len(rules)} rules) was spent (patterns whose containment needs many "
            "automaton states, or many rules sharing the same literal keys)",
            first,
            reasoning=f"steps {work.steps:,}, index entries visited {work.index_visits:,}",
        ))

    for pos, later in enumerate(rules):
        if exhausted():
            unchecked(later)
            return
        found = index.candidates(later, work)
        if found is None:
            found = list(range(pos))  # matches no message: any rule covers it
        undecided: list[Rule] = []
        for earlier_pos in found:
            if exhausted():
                unchecked(later)
                return
            earlier = rules[earlier_pos]
            work.rule_pairs += 1
            got = rule_covers(earlier, later, work=work)
            if got is None:
                undecided.append(earlier)
                continue
            if not got:
                continue
            findings.append(_finding(
                "shadowed-rule", _shadow_message(earlier, later), later,
                related=(earlier.index,),
                reasoning=(
                    f"rule {earlier.index}: {earlier.display()} ; rule {later.index}: "
                    f"{later.display()} ; each pattern of rule {earlier.index} matches "
                    f"every value the same keyword matches in rule {later.index} "
                    "(omitted keywords are *)"
                ),
            ))
            break
        else:
            if undecided:
                shown = ", ".join(f"rule {r.index} (line {r.line})" for r in undecided[:5])
                more = f" and {len(undecided) - 5} more" if len(undecided) > 5 else ""
                findings.append(_finding(
                    "shadowing-undecided",
                    f"not decided whether {shown}{more} match(es) every message rule "
                    f"{later.index} matches: the exact answer needs more than "
                    f"{COVER_BUDGET:,} automaton steps for a pair of string patterns "
                    "(a '*' followed by many '?' multiplies the states to explore); "
                    "no pattern refutes it, so check by hand",
                    later,
                    related=tuple(r.index for r in undecided),
                    reasoning=f"rule {later.index}: {later.display()} ; " + " ; ".join(
                        f"rule {r.index}: {r.display()}" for r in undecided[:5]),
                ))
        index.add(pos, later)


def lint(table: RulesTable, dlq_name: str | None = None, *,
         work: Work | None = None) -> list[LintFinding]:
    """Audit a rules table.

    Parameters
    ----------
    table : RulesTable
        From :func:`dlqlens.rules.parse`. Rules with validation errors are
        skipped.
    dlq_name : str, optional
        The dead-letter queue the table is run against; overrides INPUTQ of
        the control data, as runmqdlq's ``QName`` parameter does.
    work : Work, optional
        Operation counter of the shadowing check (rule pairs compared, index
        entries visited, automaton steps; :class:`~dlqlens.rules.match.Work`).

    Returns
    -------
    list of LintFinding
        In file order (table-wide findings at the last rule).
    """
    with_errors = {d.rule_index for d in table.errors if d.rule_index is not None}
    rules = [r for r in table.rules if r.index not in with_errors and r.action is not None]
    dlq = (dlq_name.rstrip() or None) if dlq_name is not None else table.control.dlq_name
    inputqm = table.control.inputqm.rstrip()
    findings: list[LintFinding] = []
    for rule in rules:
        _check_rule(rule, dlq, inputqm, findings)
    _check_shadowing(rules, findings, work)
    if rules and not any(_is_catch_all(r) for r in rules):
        last = rules[-1]
        partial = [r for r in rules if r.is_catch_all]
        if partial:
            r = partial[-1]
            detail = (
                f"rule {r.index} matches every message but ACTION({r.action}) "
                + ("leaves it on the DLQ" if r.action == "IGNORE"
                   else f"falls through after {r.retry} failed attempt(s)")
            )
        else:
            detail = "every rule has a pattern that some messages do not match"
        findings.append(_finding(
            "no-catch-all",
            f"no final catch-all rule ({detail}): a message no rule takes, or whose "
            "matching rules have all failed, stays on the DLQ (implicit ACTION(IGNORE)); "
            "IBM recommends ending the table with a rule such as "
            "ACTION(FWD) FWDQ(REALLY.DEAD.QUEUE) HEADER(YES)",
            last,
        ))
    findings.sort(key=lambda f: (f.line or 0, f.column or 0))
    return findings


def unreached_from_counts(table: RulesTable, counts: dict) -> list[LintFinding]:
    """``unreached-rule`` findings from per-rule match counts.

    Parameters
    ----------
    table : RulesTable
    counts : dict of int to (int, int)
        ``rule_index -> (matched, first_match)``: messages of a capture the
        rule's patterns match, and messages for which it is the first
        matching rule (:func:`dlqlens.rules.replay.match_counts`). Rules not
        in ``counts`` (rules with errors) are not reported.

    Returns
    -------
    list of LintFinding
        One per rule with ``first_match == 0``, in table order.
    """
    findings = []
    for rule in table.rules:
        if rule.index not in counts:
            continue
        matched, first = counts[rule.index]
        if first:
            continue
        if matched == 0:
            message = (f"rule {rule.index} matches no message of the capture: nothing there "
                       "reaches it")
        else:
            message = (f"rule {rule.index} matches {matched} message(s) of the capture, but an "
                       "earlier rule matches each of them first: it is reached only after "
                       "the earlier rules' attempts fail")
        findings.append(_finding("unreached-rule", message, rule,
                                 reasoning=f"matched {matched}, first match {first}"))
    return findings


def unreached(table: RulesTable, capture) -> list[LintFinding]:
    """Rules that no message of a capture reaches first (``unreached-rule``).

    Uses the first-match counts of the replay's matching stage
    (:func:`dlqlens.rules.replay.match_counts`; one Spark aggregation, no
    world needed: which rule matches first does not depend on what puts do).
    Rules with validation errors are skipped.

    Parameters
    ----------
    table : RulesTable
    capture : pyspark.sql.DataFrame
        A capture (:func:`dlqlens.spark.load_capture`).

    Returns
    -------
    list of LintFinding
    """
    from dlqlens.rules.replay import match_counts

    return unreached_from_counts(table, match_counts(table, capture, allow_errors=True))
