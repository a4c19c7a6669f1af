"""The DLQ handler's decision: which rule runmqdlq applies to a message, and what follows.

One implementation of IBM MQ "How the rules table is processed", with the
rule selection of the DLQ handler sample shipped with IBM MQ ("The sample DLQ
handler amqsdlq", its ``odqMatchMessage``): the matching rules are searched in
table order, a rule's action is attempted up to its RETRY count, then the next
matching rule is tried; when every matching rule is used up, or none matches,
the message stays (implicit ACTION(IGNORE)); a message that does not begin
with an MQDLH is never processed. :func:`next_step` is that decision, for a
message that has had some number of failed attempts. It has two drivers:

* the simulator's :class:`dlqlens.sim.apps.DlqHandler`, event by event: one
  attempt per message per RETRYINT pass, each put judged by a simulated queue
  manager, the message's :class:`Progress` kept between passes;
* the rules replay (:func:`dlqlens.rules.replay.replay`), in closed form:
  :func:`fate_of` lets a :class:`~dlqlens.rules.world.World` judge the puts
  and jumps over all the attempts of a rule at once, so RETRY(999999999) costs
  one step.

Pure Python: no Spark and no simulator here. The processing model and the
fields of a :class:`Fate` are described in ``docs/rules.md`` ("Replay model").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from dlqlens.rules.model import SUBSTITUTIONS, Rule, RulesTable
from dlqlens.rules.world import World

__all__ = [
    "HandlerRule",
    "Step",
    "Message",
    "Attempt",
    "Fate",
    "Progress",
    "usable_rules",
    "matching_rules",
    "next_step",
    "select_rule",
    "target",
    "resolve_target",
    "fate_of",
    "DISPOSITIONS",
    "LEFT_REASONS",
]

#: ``Fate.disposition`` values.
DISPOSITIONS = ("retried", "forwarded", "discarded", "left")
#: ``Fate.left_reason`` values (a message that stays on the DLQ).
LEFT_REASONS = ("ignore_rule", "rules_exhausted", "no_match", "no_dlh")

_DONE = {"RETRY": "retried", "FWD": "forwarded", "DISCARD": "discarded"}
_MAX_SECONDS = 2**63 - 1


class HandlerRule(Protocol):
    """What the decision reads of a rule: a :class:`~dlqlens.rules.model.Rule`,
    or the replay's smaller :class:`~dlqlens.rules.replay.RuleAction`.

    Attributes
    ----------
    index : int
        Position in the table, from 1.
    action : str
        ``DISCARD``, ``IGNORE``, ``RETRY`` or ``FWD``.
    retry : int
        RETRY, attempts of the action before the next matching rule (>= 1).
    fwdq, fwdqm : str or None
        FWDQ and FWDQM as written (``&DESTQ`` ... not yet substituted).
    header : str
        HEADER, ``YES`` or ``NO``.
    """

    index: int
    action: str | None
    retry: int
    fwdq: str | None
    fwdqm: str
    header: str


# ---------------------------------------------------------------------------
# the decision
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """What the handler does with a message at one attempt (from :func:`next_step`).

    Attributes
    ----------
    rule : HandlerRule or None
        The rule applied; for an explicit ACTION(IGNORE), that rule; ``None``
        when no rule applies (implicit IGNORE, or no MQDLH).
    action : str or None
        ``RETRY``, ``FWD`` or ``DISCARD``: the action attempted now;
        ``IGNORE`` (explicit or implicit): the message stays on the DLQ;
        ``None``: the message has no MQDLH and is never processed.
    left_reason : str or None
        ``None`` when an action is attempted; else why the message stays:
        ``ignore_rule``, ``rules_exhausted``, ``no_match`` or ``no_dlh``.
    attempt : int
        1-based number of this attempt among the rule's RETRY attempts (0 when
        nothing is attempted).
    tries_left : int
        Attempts the rule still has, this one included
        (``rule.retry - attempt + 1``; 0 when nothing is attempted).
    """

    rule: Any = None
    action: str | None = None
    left_reason: str | None = None
    attempt: int = 0
    tries_left: int = 0

    @property
    def acts(self) -> bool:
        """True when the handler attempts an action (RETRY, FWD or DISCARD) at this step."""
        return self.left_reason is None


def next_step(matching: Sequence[HandlerRule] | None, attempts: int) -> Step:
    """The handler's decision for a message after ``attempts`` failed attempts.

    IBM MQ "How the rules table is processed" and the selection of IBM's
    sample handler (``amqsdlq``, its ``odqMatchMessage``): walk the matching
    rules in table order; an ACTION(IGNORE) rule is
    taken at once (it cannot fail, it counts no attempt); every other rule
    accounts for RETRY attempts, and the first rule whose running total
    exceeds ``attempts`` is the one attempted. When the totals are used up
    the message stays (implicit IGNORE, ``rules_exhausted``), as when no rule
    matches (``no_match``). A message without an MQDLH is never matched
    (``no_dlh``). Once the message stays, every larger ``attempts`` gives the
    same answer (the simulator, like the sample, keeps counting passes).

    Parameters
    ----------
    matching : sequence of HandlerRule, or None
        The rules whose patterns match the message, in table order, each with
        an ACTION (:func:`matching_rules`, or the replay's compiled matching);
        ``None`` when the message does not begin with an MQDLH.
    attempts : int
        Attempts already made on the message that failed (>= 0), over all its
        rules, counted by the driver: one per put for the simulator, a rule's
        failed RETRY attempts at once for :func:`fate_of`.

    Returns
    -------
    Step

    Raises
    ------
    ValueError
        When ``attempts`` is negative.

    Examples
    --------
    >>> from dlqlens.rules import parse
    >>> rules = parse("ACTION(RETRY) RETRY(2)\\nACTION(FWD) FWDQ(DEADQ)\\n").rules
    >>> for k in range(4):
    ...     s = next_step(rules, k)
    ...     print(s.rule and s.rule.index, s.action, s.attempt, s.left_reason)
    1 RETRY 1 None
    1 RETRY 2 None
    2 FWD 1 None
    None IGNORE 0 rules_exhausted
    """
    if attempts < 0:
        raise ValueError(f"attempts must be >= 0, found {attempts}")
    if matching is None:
        return Step(left_reason="no_dlh")
    total = 0
    matched = False
    for rule in matching:
        matched = True
        if rule.action == "IGNORE":
            return Step(rule, "IGNORE", "ignore_rule")
        if attempts < total + rule.retry:
            attempt = attempts - total + 1
            return Step(rule, rule.action, None, attempt, rule.retry - attempt + 1)
        total += rule.retry
    return Step(None, "IGNORE", "rules_exhausted" if matched else "no_match")


def usable_rules(table: RulesTable) -> tuple[Rule, ...]:
    """The rules of ``table`` the handler can apply: those with an ACTION and no error.

    A table with errors would not be accepted by the handler at all (IBM MQ,
    "How the rules table is processed", note 3: "The rules table is validated
    when the DLQ handler starts"); a replay with ``allow_errors`` and
    :func:`select_rule` leave the faulty rules out, as if they were not in the
    table.

    Parameters
    ----------
    table : RulesTable

    Returns
    -------
    tuple of Rule
        Table order.
    """
    bad = {d.rule_index for d in table.errors if d.rule_index is not None}
    return tuple(r for r in table.rules if r.action is not None and r.index not in bad)


def matching_rules(rules: RulesTable | Iterable[Rule],
                   fields: Mapping[str, Any]) -> tuple[Rule, ...]:
    """The rules whose patterns match a message, in table order.

    Parameters
    ----------
    rules : RulesTable or iterable of Rule
        A table (its :func:`usable_rules` are taken) or rules already chosen
        with :func:`usable_rules`.
    fields : Mapping[str, Any]
        MQ field values keyed ``"dlh.Reason"``, ``"md.ReplyToQ"`` ... (see
        :meth:`dlqlens.rules.model.Rule.matches`).

    Returns
    -------
    tuple of Rule
        The first argument of :func:`next_step`.
    """
    if isinstance(rules, RulesTable):
        rules = usable_rules(rules)
    return tuple(r for r in rules if r.matches(fields))


def select_rule(table: RulesTable, fields: Mapping[str, Any], attempts: int = 0) -> Rule | None:
    """The rule the handler applies to a message after ``attempts`` failed attempts.

    :func:`next_step` on the :func:`matching_rules` of ``table`` (the
    selection of IBM's sample handler ``amqsdlq``, its ``odqMatchMessage``;
    ``tests/rules/test_rules_model.py`` works IBM's "An example DLQ handler
    rules table" through a queue-full message).

    Parameters
    ----------
    table : RulesTable
    fields : Mapping[str, Any]
        The message's MQ fields (see :func:`matching_rules`).
    attempts : int
        Failed attempts so far (>= 0; 0 on first sight).

    Returns
    -------
    Rule or None
        The rule whose action is attempted, or the ACTION(IGNORE) rule
        reached; ``None`` when the message stays without a rule (every
        matching rule used up, or none matches: implicit ACTION(IGNORE)).
    """
    return next_step(matching_rules(table, fields), attempts).rule


# ---------------------------------------------------------------------------
# targets
# ---------------------------------------------------------------------------

def _name(value: Any) -> str:
    """An MQ name as text: a NUL ends it, trailing blanks removed (IBM MQ, MQMD
    "Format (MQCHAR8)": "the null and any subsequent characters are treated as blanks")."""
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("latin-1")
    return str(value).split("\x00", 1)[0].rstrip(" ")


def target(rule: HandlerRule, fields: Mapping[str, Any]) -> tuple[str, str] | None:
    """Where a rule's action puts a message: ``(queue, qmgr)``.

    ACTION(RETRY) puts to the MQDLH ``DestQName``/``DestQMgrName``;
    ACTION(FWD) to FWDQ/FWDQM with ``&DESTQ``, ``&DESTQM`` (MQDLH) and
    ``&REPLYQ``, ``&REPLYQM`` (MQMD) substituted (IBM "DLQ rules (patterns and
    actions)"). DISCARD and IGNORE put nothing.

    Parameters
    ----------
    rule : HandlerRule
    fields : Mapping[str, Any]
        ``"dlh.DestQName"``, ``"dlh.DestQMgrName"``, ``"md.ReplyToQ"``,
        ``"md.ReplyToQMgr"`` (str or bytes, blank or NUL padded); only the
        ones the rule reads are needed.

    Returns
    -------
    (str, str) or None
        Names without padding; ``""`` as queue manager is the handler's own
        queue manager (FWDQM's default, or a blank substituted name); ``""``
        as queue (a blank ``&REPLYQ``, a FWD without FWDQ) names nothing, and
        a put to it fails. ``None`` for DISCARD and IGNORE.

    Raises
    ------
    KeyError
        When a field the rule reads is not in ``fields``.
    """
    if rule.action == "RETRY":
        return _name(fields["dlh.DestQName"]), _name(fields["dlh.DestQMgrName"])
    if rule.action != "FWD":
        return None
    queue = rule.fwdq or ""
    if queue in SUBSTITUTIONS["FWDQ"]:
        queue = fields[SUBSTITUTIONS["FWDQ"][queue]]
    qmgr = rule.fwdqm or ""
    if qmgr in SUBSTITUTIONS["FWDQM"]:
        qmgr = fields[SUBSTITUTIONS["FWDQM"][qmgr]]
    return _name(queue), _name(qmgr)


@dataclass(frozen=True)
class Message:
    """The fields of a message that the decision and the targets read (trimmed strings).

    Attributes
    ----------
    has_dlh : bool
        Whether the message begins with a valid MQDLH.
    reason : int or None
        MQDLH Reason.
    dest_q, dest_qmgr : str
        MQDLH DestQName, DestQMgrName.
    reply_q, reply_qmgr : str
        MQMD ReplyToQ, ReplyToQMgr.
    """

    has_dlh: bool = True
    reason: int | None = None
    dest_q: str = ""
    dest_qmgr: str = ""
    reply_q: str = ""
    reply_qmgr: str = ""

    @property
    def fields(self) -> dict:
        """The same values keyed by MQ field (``"dlh.DestQName"`` ...), as :func:`target` reads."""
        return {"dlh.Reason": self.reason, "dlh.DestQName": self.dest_q,
                "dlh.DestQMgrName": self.dest_qmgr, "md.ReplyToQ": self.reply_q,
                "md.ReplyToQMgr": self.reply_qmgr}


def resolve_target(rule: HandlerRule, msg: Message, world: World) -> tuple[str, str]:
    """:func:`target` of a RETRY or FWD rule, the blank queue manager named by the world.

    Parameters
    ----------
    rule : HandlerRule
        A RETRY or FWD rule.
    msg : Message
    world : World

    Returns
    -------
    (str, str)
        Queue and queue manager; a blank target queue manager is resolved
        with :meth:`World.resolve_qmgr <dlqlens.rules.world.World.resolve_qmgr>`
        (``local_qmgr``, or still ``""`` when the world does not name it).

    Raises
    ------
    ValueError
        When ``rule`` is a DISCARD or IGNORE rule (there is no target).
    """
    where = target(rule, msg.fields)
    if where is None:
        raise ValueError(f"rule {rule.index}: ACTION({rule.action}) puts nothing")
    return where[0], world.resolve_qmgr(where[1])


# ---------------------------------------------------------------------------
# fates
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Attempt:
    """One rule tried on a message: an element of ``Fate.tried``.

    Attributes
    ----------
    rule_index : int
    attempts : int
        Attempts made with this rule (1 for DISCARD and IGNORE).
    outcome : str
        ``"succeeded"`` (the message left the DLQ), ``"failed"`` (every
        attempt so far failed) or ``"ignored"`` (ACTION(IGNORE)).
    reason : int or None
        MQRC of the last failed put, for ``"failed"``.
    """

    rule_index: int
    attempts: int
    outcome: str
    reason: int | None = None

    def to_dict(self) -> dict:
        return {"rule_index": self.rule_index, "attempts": self.attempts,
                "outcome": self.outcome, "reason": self.reason}


@dataclass(frozen=True)
class Fate:
    """What the handler does with one message, in the replay's output contract.

    The fields are those of the replay's output (``docs/rules.md``,
    "Replay model") except ``source`` and ``message_number``: ``tried`` (tuple of
    :class:`Attempt`), ``rule_index``, ``action``, ``target_queue``,
    ``target_qmgr``, ``header_kept``, ``disposition`` (one of
    :data:`DISPOSITIONS`), ``left_reason`` (one of :data:`LEFT_REASONS` or
    ``None``) and ``seconds_to_disposition`` (int seconds or ``None``).
    """

    tried: tuple = ()
    rule_index: int | None = None
    action: str | None = None
    target_queue: str | None = None
    target_qmgr: str | None = None
    header_kept: bool | None = None
    disposition: str = "left"
    left_reason: str | None = None
    seconds_to_disposition: int | None = None

    def to_dict(self) -> dict:
        """The contract fields except ``source`` and ``message_number``."""
        return {
            "tried": [a.to_dict() for a in self.tried],
            "rule_index": self.rule_index,
            "action": self.action,
            "target_queue": self.target_queue,
            "target_qmgr": self.target_qmgr,
            "header_kept": self.header_kept,
            "disposition": self.disposition,
            "left_reason": self.left_reason,
            "seconds_to_disposition": self.seconds_to_disposition,
        }


def _tried(tried: tuple, index: int, attempts: int, outcome: str, reason: int | None) -> tuple:
    """``tried`` with ``attempts`` more of rule ``index``, merged into its running entry."""
    if tried and tried[-1].rule_index == index and tried[-1].outcome == "failed":
        attempts += tried[-1].attempts
        tried = tried[:-1]
    return tried + (Attempt(index, attempts, outcome, reason),)


@dataclass(frozen=True)
class Progress:
    """What the handler has done with one message so far: its history entry.

    Both drivers keep one per message and ask :func:`next_step` with
    :attr:`attempts`; the simulator keeps it from pass to pass (keyed by
    MsgId and CorrelId, forgotten when the message leaves the DLQ, as the
    history list of IBM's sample handler ``amqsdlq``).

    Attributes
    ----------
    attempts : int
        Failed attempts so far (the ``attempts`` of :func:`next_step`).
    tried : tuple of Attempt
        The rules tried so far, the last one possibly with tries left.
    stays : int
        Passes at which the handler left the message on the DLQ (IGNORE,
        explicit or implicit); the sample counts them in its history too.
    started : int or float or None
        The driver's clock at the first attempt (the simulator's ticks);
        ``None`` for a driver without a clock.
    """

    attempts: int = 0
    tried: tuple = ()
    stays: int = 0
    started: int | float | None = None

    def failed(self, step: Step, reason: int | None, tries: int = 1) -> Progress:
        """After ``tries`` failed attempts of ``step``'s action, the last with MQRC ``reason``.

        Raises
        ------
        ValueError
            When ``step`` attempts nothing, or attempts DISCARD (which cannot
            fail), or ``tries`` is more than the rule has left.
        """
        if not step.acts or step.action == "DISCARD":
            raise ValueError(f"a {step.action or 'no_dlh'} step has no failed attempts")
        if not 0 <= tries <= step.tries_left:
            raise ValueError(f"{tries} failed attempts, but rule {step.rule.index} has "
                             f"{step.tries_left} left")
        if tries == 0:
            return self
        return Progress(self.attempts + tries,
                        _tried(self.tried, step.rule.index, tries, "failed", reason),
                        self.stays, self.started)

    def stayed(self) -> Progress:
        """After a pass that left the message on the DLQ."""
        return Progress(self.attempts, self.tried, self.stays + 1, self.started)

    def removed(self, step: Step, where: tuple[str, str] | None = None,
                seconds: int | None = None) -> Fate:
        """The fate of a message whose ``step`` succeeded: retried, forwarded or discarded.

        Parameters
        ----------
        step : Step
            A step that acts (:attr:`Step.acts`).
        where : (str, str), optional
            The target queue and queue manager of a RETRY or FWD put.
        seconds : int, optional
            ``seconds_to_disposition``.
        """
        if not step.acts:
            raise ValueError(f"a step that leaves the message ({step.left_reason}) removes nothing")
        rule = step.rule
        tried = _tried(self.tried, rule.index, 1, "succeeded", None)
        if step.action == "DISCARD":
            return Fate(tried, rule.index, "DISCARD", disposition="discarded",
                        seconds_to_disposition=seconds)
        queue, qmgr = where if where is not None else (None, None)
        return Fate(tried, rule.index, step.action, queue, qmgr,
                    header_kept=step.action == "FWD" and rule.header == "YES",
                    disposition=_DONE[step.action], seconds_to_disposition=seconds)

    def left(self, step: Step, seconds: int | None = None) -> Fate:
        """The fate of a message that ``step`` leaves on the DLQ.

        ``seconds`` is ignored for ``no_dlh`` (the handler never acts on it).
        """
        if step.acts:
            raise ValueError(f"a {step.action} step does not leave the message")
        if step.left_reason == "no_dlh":
            return Fate(disposition="left", left_reason="no_dlh")
        tried = self.tried
        if step.left_reason == "ignore_rule":
            tried = tried + (Attempt(step.rule.index, 1, "ignored"),)
        return Fate(tried, None, "IGNORE", disposition="left", left_reason=step.left_reason,
                    seconds_to_disposition=seconds)


def _seconds(passes: int, retryint: int) -> int:
    return min(max(passes, 0) * retryint, _MAX_SECONDS)


def fate_of(matching: Sequence[HandlerRule] | None, msg: Message, world: World,
            retryint: int) -> Fate:
    """The fate of one message under a world, in closed form (the replay's driver).

    Asks :func:`next_step` once per rule tried, not once per attempt: the
    world says which of a rule's remaining attempts succeeds first
    (:meth:`PutOutcome.first_success <dlqlens.rules.world.PutOutcome.first_success>`,
    tries counted per destination across the rules), and all the failed
    ones are recorded at once. Time: the handler makes one attempt per pass
    and passes come every RETRYINT seconds, so attempt ``N`` is made at
    ``(N - 1) * retryint`` seconds (see ``docs/rules.md``, "Replay model").

    Parameters
    ----------
    matching : sequence of HandlerRule, or None
        The matching rules in table order (``None`` without an MQDLH).
    msg : Message
        ``msg.has_dlh`` false means no MQDLH whatever ``matching`` says.
    world : World
        Judges every put.
    retryint : int
        RETRYINT of the table, seconds.

    Returns
    -------
    Fate

    Examples
    --------
    >>> from dlqlens.rules import parse
    >>> rules = parse("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\\n"
    ...               "ACTION(FWD) FWDQ(DEADQ)\\n").rules
    >>> m = Message(reason=2053, dest_q="APP.IN", dest_qmgr="QM1")
    >>> f = fate_of(rules, m, World.pessimistic(), 60)
    >>> f.disposition, f.rule_index, f.target_queue, f.seconds_to_disposition
    ('forwarded', 2, 'DEADQ', 300)
    """
    matching = tuple(matching or ()) if msg.has_dlh else None
    progress = Progress()
    puts: Counter = Counter()
    while True:
        step = next_step(matching, progress.attempts)
        if not step.acts:
            # IGNORE is applied at the pass after the last failed attempt; a message whose
            # rules are used up stays from its last attempt on.
            done = progress.attempts if step.left_reason == "ignore_rule" else progress.attempts - 1
            return progress.left(step, _seconds(done, retryint))
        if step.action == "DISCARD":
            return progress.removed(step, seconds=_seconds(progress.attempts, retryint))
        where = resolve_target(step.rule, msg, world)
        outcome = world.outcome_for(*where, msg.dest_q, msg.dest_qmgr)
        before = puts[where]
        first = outcome.first_success(before, step.tries_left)
        failures = step.tries_left if first is None else first - 1
        progress = progress.failed(step, outcome.failure_reason(msg.reason), failures)
        if first is not None:
            return progress.removed(step, where, _seconds(progress.attempts, retryint))
        puts[where] = before + failures
