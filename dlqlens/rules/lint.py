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
  the union of several earlier rules is not reported.
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

from dataclasses import dataclass

from dlqlens.mq import constants
from dlqlens.rules.match import matches_blank_field, pattern_covers
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


def rule_covers(outer: Rule, inner: Rule) -> bool:
    """True when every message ``inner`` matches is also matched by ``outer``.

    Decided keyword by keyword on the patterns (an omitted keyword is ``*``):
    integers must be equal or ``outer`` must be ``*``; strings use exact
    generic-pattern containment over the field length
    (:func:`~dlqlens.rules.match.pattern_covers`). An undecided containment
    counts as "not covered".
    """
    for keyword in PATTERN_KEYWORDS:
        po = outer.pattern(keyword)
        if po is None or po.is_any:
            continue
        pi = inner.pattern(keyword)
        if KEYWORDS[keyword].kind == "integer":
            if pi is None or pi.is_any or pi.value != po.value:
                return False
            continue
        inner_text = "*" if pi is None else pi.value
        if pattern_covers(po.value, inner_text, KEYWORDS[keyword].length) is not True:  # type: ignore[arg-type]
            return False
    return True


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


def _check_shadowing(rules: list[Rule], findings: list[LintFinding]) -> None:
    for pos, later in enumerate(rules):
        for earlier in rules[:pos]:
            if not rule_covers(earlier, later):
                continue
            where = f"rule {earlier.index} (line {earlier.line})"
            if earlier.action in ("IGNORE", "DISCARD"):
                verb = "leaves it on the DLQ" if earlier.action == "IGNORE" else "discards it"
                message = (
                    f"rule {later.index} can never be used: every message it matches is "
                    f"matched first by {where}, whose ACTION({earlier.action}) {verb}"
                )
            else:
                message = (
                    f"rule {later.index} is never the first match: every message it "
                    f"matches is matched first by {where}; it is used only after "
                    f"{where}'s {earlier.retry} attempt(s) with ACTION({earlier.action}) "
                    "have failed"
                )
            findings.append(_finding(
                "shadowed-rule", message, later,
                related=(earlier.index,),
                reasoning=(
                    f"rule {earlier.index}: {earlier.display()} ; rule {later.index}: "
                    f"{later.display()} ; each pattern of rule {earlier.index} matches "
                    f"every value the same keyword matches in rule {later.index} "
                    "(omitted keywords are *)"
                ),
            ))
            break


def lint(table: RulesTable, dlq_name: str | None = None) -> list[LintFinding]:
    """Audit a rules table.

    Parameters
    ----------
    table : RulesTable
        From :func:`dlqlens.rules.parse`. Rules with validation errors are
        skipped.
    dlq_name : str, optional
        The dead-letter queue the table is run against; overrides INPUTQ of
        the control data, as runmqdlq's ``QName`` parameter does.

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
    _check_shadowing(rules, findings)
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
