"""Data model of a runmqdlq / CSQUDLQH rules table.

Everything here is a frozen dataclass that remembers where it came from (line
and column, 1-based, in the physical file), so that diagnostics, lint findings
and replay explanations can point at the text an administrator wrote.

The keyword catalogue :data:`KEYWORDS` is the rules-table grammar as data: the
23 keywords of IBM's DLQ handler (the keyword table of the sample ``amqodkha.h``
and the IBM documentation pages "DLQ control data" and "DLQ rules (patterns and
actions)"), each with the MQ field it matches, the field length, whether
wildcards are allowed and its default. How a table is read and checked:
``docs/rules.md`` ("Parsing", "Validation").

A :class:`Rule` can be evaluated on a plain mapping of MQ field values
(``rule.matches({"dlh.Reason": 2053, "dlh.DestQName": "APP.IN", ...})``) and
keeps its patterns as data (:class:`Pattern`: keyword, MQ field, kind, value,
field length) so that a replay can also compile them to Spark column
expressions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dlqlens.rules.match import match_integer, match_string

__all__ = [
    "KeywordSpec",
    "KEYWORDS",
    "PATTERN_KEYWORDS",
    "ACTION_KEYWORDS",
    "CONTROL_KEYWORDS",
    "ACTIONS",
    "ControlData",
    "Pattern",
    "Rule",
    "RulesTable",
    "Diagnostic",
    "LintFinding",
    "MAX_INTEGER",
    "RETRYINT_DEFAULT",
]

#: Largest numeric value a rules table accepts (IBM: "Numeric parameters
#: must be in the range 0 through 999 999 999"; sample: ``odq_InvalidInteger``).
MAX_INTEGER = 999_999_999

#: Default of the RETRYINT control keyword, in seconds (IBM "DLQ control data").
RETRYINT_DEFAULT = 60


@dataclass(frozen=True)
class KeywordSpec:
    """One rules-table keyword.

    Attributes
    ----------
    name : str
        The MQ keyword (``"DESTQ"``).
    role : str
        ``"pattern"``, ``"action"`` or ``"control"``.
    kind : str
        ``"string"`` (a name or generic pattern), ``"integer"`` (a number,
        a symbolic name or ``*``), ``"enum"`` (one of :attr:`choices`) or
        ``"wait"`` (``YES``, ``NO`` or a number).
    field : str or None
        The MQ field a pattern keyword matches, as ``"md.<Field>"`` or
        ``"dlh.<Field>"`` (MQ's own field names).
    length : int
        Field length in characters for strings (values may not be longer,
        not counting ``*``), 4 for MQLONG fields.
    wildcards : bool
        Whether ``*`` and ``?`` are pattern characters in the value.
    choices : tuple of str
        Allowed values of an ``enum`` keyword.
    minimum : int
        Smallest allowed integer (RETRY starts at 1).
    default : object
        The value the handler assumes when the keyword is omitted (``"*"``
        for every pattern keyword; ``None`` when there is no default).
    description : str
        One line, after IBM's keyword description.
    """

    name: str
    role: str
    kind: str
    field: str | None = None
    length: int = 0
    wildcards: bool = False
    choices: tuple = ()
    minimum: int = 0
    default: Any = None
    description: str = ""


def _pattern(name: str, kind: str, fld: str, length: int, description: str) -> KeywordSpec:
    return KeywordSpec(
        name=name,
        role="pattern",
        kind=kind,
        field=fld,
        length=length,
        wildcards=kind == "string",
        default="*",
        description=description,
    )


#: The 23 keywords, in the order of the sample's keyword table (``amqodkha.h``).
KEYWORDS: dict[str, KeywordSpec] = {
    spec.name: spec
    for spec in (
        _pattern("APPLIDAT", "string", "md.ApplIdentityData", 32,
                 "ApplIdentityData of the message descriptor (MQMD)."),
        _pattern("DESTQ", "string", "dlh.DestQName", 48,
                 "Queue the message was destined for (MQDLH DestQName)."),
        _pattern("DESTQM", "string", "dlh.DestQMgrName", 48,
                 "Queue manager of that queue (MQDLH DestQMgrName)."),
        _pattern("FORMAT", "string", "dlh.Format", 8,
                 "Format of the data after the MQDLH (MQDLH Format)."),
        _pattern("APPLNAME", "string", "md.PutApplName", 28,
                 "Application that put the message (MQMD PutApplName)."),
        _pattern("REPLYQ", "string", "md.ReplyToQ", 48,
                 "Reply-to queue (MQMD ReplyToQ)."),
        _pattern("REPLYQM", "string", "md.ReplyToQMgr", 48,
                 "Reply-to queue manager (MQMD ReplyToQMgr)."),
        _pattern("USERID", "string", "md.UserIdentifier", 12,
                 "User identifier of the putter (MQMD UserIdentifier)."),
        _pattern("APPLTYPE", "integer", "md.PutApplType", 4,
                 "Type of the putting application (MQMD PutApplType)."),
        _pattern("FEEDBACK", "integer", "md.Feedback", 4,
                 "Feedback code of a report message (MQMD Feedback)."),
        _pattern("MSGTYPE", "integer", "md.MsgType", 4,
                 "Message type (MQMD MsgType)."),
        _pattern("REASON", "integer", "dlh.Reason", 4,
                 "Why the message was dead-lettered (MQDLH Reason)."),
        _pattern("PERSIST", "integer", "md.Persistence", 4,
                 "Persistence of the message (MQMD Persistence)."),
        KeywordSpec("FWDQ", "action", "string", length=48,
                    description="Queue to forward to: a name, &DESTQ or &REPLYQ."),
        KeywordSpec("FWDQM", "action", "string", length=48, default=" ",
                    description="Queue manager to forward to: a name, &DESTQM, "
                                "&REPLYQM or ' ' (the local queue manager)."),
        KeywordSpec("ACTION", "action", "enum",
                    choices=("DISCARD", "IGNORE", "RETRY", "FWD"),
                    description="What to do with a matching message (required)."),
        KeywordSpec("RETRY", "action", "integer", minimum=1, default=1,
                    description="How many times to attempt the action."),
        KeywordSpec("HEADER", "action", "enum", choices=("YES", "NO"), default="YES",
                    description="Whether a forwarded message keeps its MQDLH."),
        KeywordSpec("PUTAUT", "action", "enum", choices=("DEF", "CTX"), default="DEF",
                    description="Authority for the put: the handler's (DEF) or the "
                                "message context's UserIdentifier (CTX)."),
        KeywordSpec("INPUTQ", "control", "string", length=48, default=" ",
                    description="Dead-letter queue to process (' ' = the queue "
                                "manager's DEADQ)."),
        KeywordSpec("INPUTQM", "control", "string", length=48, default=" ",
                    description="Queue manager owning INPUTQ (' ' = the default "
                                "queue manager)."),
        KeywordSpec("RETRYINT", "control", "integer", default=RETRYINT_DEFAULT,
                    description="Seconds between retries of messages that failed."),
        KeywordSpec("WAIT", "control", "wait", default="YES",
                    description="YES: wait forever for new messages; NO: end when "
                                "the DLQ is empty; nnn: wait nnn seconds, then end."),
    )
}

PATTERN_KEYWORDS: tuple[str, ...] = tuple(k for k, s in KEYWORDS.items() if s.role == "pattern")
ACTION_KEYWORDS: tuple[str, ...] = tuple(k for k, s in KEYWORDS.items() if s.role == "action")
CONTROL_KEYWORDS: tuple[str, ...] = tuple(k for k, s in KEYWORDS.items() if s.role == "control")
ACTIONS: tuple[str, ...] = KEYWORDS["ACTION"].choices

#: Substitution values of FWDQ / FWDQM and the MQ field each one takes.
SUBSTITUTIONS: dict[str, dict[str, str]] = {
    "FWDQ": {"&DESTQ": "dlh.DestQName", "&REPLYQ": "md.ReplyToQ"},
    "FWDQM": {"&DESTQM": "dlh.DestQMgrName", "&REPLYQM": "md.ReplyToQMgr"},
}


@dataclass(frozen=True)
class Pattern:
    """One pattern-matching keyword of a rule, as written.

    Attributes
    ----------
    keyword : str
        ``"DESTQ"``, ``"REASON"``, ...
    field : str
        The MQ field matched, e.g. ``"dlh.DestQName"``.
    kind : str
        ``"string"`` or ``"integer"``.
    value : str or int or None
        String patterns: the pattern text (quotes removed, unquoted text
        folded to upper case). Integer patterns: the number after
        symbolic-name resolution, or ``None`` for ``*``.
    length : int
        Field length (characters; 4 for integers).
    text : str
        The value exactly as written, without quotes (``"MQRC_Q_FULL"``).
    symbol : str or None
        The symbolic name used for an integer value, if any.
    line, column : int
        Position of the keyword.
    """

    keyword: str
    field: str
    kind: str
    value: str | int | None
    length: int
    text: str
    line: int
    column: int
    symbol: str | None = None

    @property
    def is_any(self) -> bool:
        """True for ``*`` (matches every value; same as omitting the keyword)."""
        if self.kind == "integer":
            return self.value is None
        text = str(self.value).rstrip(" ")
        return text != "" and text.strip("*") == ""

    def matches(self, field_value: Any) -> bool:
        """Match one field value (strings: :func:`~dlqlens.rules.match.match_string`;
        integers: :func:`~dlqlens.rules.match.match_integer`).

        ``None`` never matches a specific pattern (a message without that
        field cannot satisfy it); ``*`` matches anything, ``None`` included.
        """
        if self.is_any:
            return True
        if field_value is None:
            return False
        if self.kind == "integer":
            return match_integer(self.value, field_value)  # type: ignore[arg-type]
        return match_string(self.value, field_value, self.length)  # type: ignore[arg-type]

    def display(self) -> str:
        """The keyword and value in rules-table syntax (``REASON(MQRC_Q_FULL)``)."""
        if self.kind == "integer":
            shown = self.symbol or ("*" if self.value is None else str(self.value))
            return f"{self.keyword}({shown})"
        return f"{self.keyword}({_quote(self.value)})"  # type: ignore[arg-type]


def _quote(value: str) -> str:
    """Write a string value so that the parser reads it back unchanged."""
    plain = value != "" and all(
        ch.isupper() or ch.isdigit() or ch in "./_%*?&" for ch in value
    )
    return value if plain else "'" + value.replace("'", "''") + "'"


@dataclass(frozen=True)
class ControlData:
    """The control-data entry (IBM "DLQ control data"), defaults filled in.

    Attributes
    ----------
    inputq : str
        INPUTQ; ``" "`` means the queue manager's dead-letter queue.
    inputqm : str
        INPUTQM; ``" "`` means the default queue manager.
    retryint : int
        RETRYINT in seconds (default 60).
    wait : str or int
        ``"YES"`` (default), ``"NO"`` or a number of seconds.
    line, column : int or None
        Position of the entry; ``None`` when the table has none.
    specified : frozenset of str
        The keywords written in the entry.
    """

    inputq: str = " "
    inputqm: str = " "
    retryint: int = RETRYINT_DEFAULT
    wait: str | int = "YES"
    line: int | None = None
    column: int | None = None
    specified: frozenset = frozenset()

    @property
    def wait_seconds(self) -> int | None:
        """WAIT as seconds: ``None`` for YES (wait without limit), 0 for NO."""
        if self.wait == "YES":
            return None
        if self.wait == "NO":
            return 0
        return int(self.wait)

    @property
    def dlq_name(self) -> str | None:
        """INPUTQ when it names a queue, else ``None`` (the QMgr's DEADQ)."""
        name = self.inputq.rstrip()
        return name or None

    def to_dict(self) -> dict:
        """The ``control`` object of the ``rules check --json`` contract."""
        return {
            "INPUTQ": self.inputq,
            "INPUTQM": self.inputqm,
            "RETRYINT": self.retryint,
            "WAIT": self.wait,
            "line": self.line,
        }


@dataclass(frozen=True)
class Rule:
    """One rule: patterns plus action, with every omitted keyword defaulted.

    Attributes
    ----------
    index : int
        Position among the rules, counted from 1 in table order.
    line, column : int
        Where the rule starts.
    patterns : tuple of Pattern
        The pattern keywords written in the rule, in the order written.
        Omitted pattern keywords mean ``*``.
    action : str or None
        ``DISCARD``, ``IGNORE``, ``RETRY`` or ``FWD``; ``None`` when the rule
        has no valid ACTION (an error; the handler would not start).
    fwdq : str or None
        FWDQ (a queue name, ``&DESTQ`` or ``&REPLYQ``); no default.
    fwdqm : str
        FWDQM; default ``" "`` (the local queue manager).
    header : str
        HEADER, ``YES`` (default) or ``NO``.
    putaut : str
        PUTAUT, ``DEF`` (default) or ``CTX``.
    retry : int
        RETRY, default 1.
    positions : tuple of (str, int, int)
        ``(keyword, line, column)`` of every keyword written, in order.
    """

    index: int
    line: int
    column: int
    patterns: tuple = ()
    action: str | None = None
    fwdq: str | None = None
    fwdqm: str = " "
    header: str = "YES"
    putaut: str = "DEF"
    retry: int = 1
    positions: tuple = ()

    def pattern(self, keyword: str) -> Pattern | None:
        """The pattern written for ``keyword`` (``None`` when omitted)."""
        for pat in self.patterns:
            if pat.keyword == keyword:
                return pat
        return None

    def position(self, keyword: str) -> tuple[int, int]:
        """``(line, column)`` of ``keyword`` in this rule, else of the rule."""
        for name, line, column in self.positions:
            if name == keyword:
                return line, column
        return self.line, self.column

    @property
    def specified(self) -> tuple[str, ...]:
        """The keywords written in the rule, in order."""
        return tuple(name for name, _l, _c in self.positions)

    @property
    def is_catch_all(self) -> bool:
        """True when every pattern is ``*`` (the rule matches every message)."""
        return all(p.is_any for p in self.patterns)

    def matches(self, fields: Mapping[str, Any]) -> bool:
        """Whether the rule's patterns all match a message.

        Parameters
        ----------
        fields : Mapping[str, Any]
            MQ field values keyed ``"dlh.Reason"``, ``"dlh.DestQName"``,
            ``"dlh.DestQMgrName"``, ``"dlh.Format"``, ``"md.PutApplName"``,
            ``"md.PutApplType"``, ``"md.MsgType"``, ``"md.Persistence"``,
            ``"md.Feedback"``, ``"md.ReplyToQ"``, ``"md.ReplyToQMgr"``,
            ``"md.UserIdentifier"``, ``"md.ApplIdentityData"``. Strings may be
            blank-padded or not; ``bytes`` are compared byte for byte. Only
            the fields the rule tests are read.

        Raises
        ------
        KeyError
            When a field the rule tests is missing from ``fields``.
        """
        for pat in self.patterns:
            if pat.is_any:
                continue
            if pat.field not in fields:
                raise KeyError(
                    f"rule {self.index} (line {self.line}) tests {pat.keyword}, "
                    f"which needs field {pat.field!r}; it is not in the message fields"
                )
            if not pat.matches(fields[pat.field]):
                return False
        return True

    def to_dict(self) -> dict:
        """One element of ``rules`` in the ``rules check --json`` contract."""
        out: dict[str, Any] = {"index": self.index, "line": self.line, "column": self.column}
        for name in PATTERN_KEYWORDS:
            pat = self.pattern(name)
            if pat is None:
                out[name] = "*"
            elif pat.kind == "integer":
                out[name] = "*" if pat.value is None else pat.value
            else:
                out[name] = pat.value
        out["ACTION"] = self.action
        out["FWDQ"] = self.fwdq
        out["FWDQM"] = self.fwdqm
        out["HEADER"] = self.header
        out["PUTAUT"] = self.putaut
        out["RETRY"] = self.retry
        out["specified"] = list(self.specified)
        return out

    def display(self) -> str:
        """The rule in rules-table syntax, keywords in table order."""
        parts = [p.display() for p in self.patterns]
        if self.action is not None:
            parts.append(f"ACTION({self.action})")
        if self.fwdq is not None:
            parts.append(f"FWDQ({_quote(self.fwdq)})")
        if "FWDQM" in self.specified:
            parts.append(f"FWDQM({_quote(self.fwdqm)})")
        if "HEADER" in self.specified:
            parts.append(f"HEADER({self.header})")
        if "PUTAUT" in self.specified:
            parts.append(f"PUTAUT({self.putaut})")
        if "RETRY" in self.specified:
            parts.append(f"RETRY({self.retry})")
        return " ".join(parts)


@dataclass(frozen=True)
class Diagnostic:
    """A problem the DLQ handler would report when it validates the table.

    Attributes
    ----------
    line, column : int
        1-based position in the file.
    severity : str
        ``"error"`` (the handler rejects the table) or ``"warning"``.
    code : str
        Stable identifier, see :data:`dlqlens.rules.validate.CODES`.
    message : str
        One sentence naming what was found and what was expected.
    found, expected : str or None
        The offending text and what would be valid, when they apply.
    rule_index : int or None
        The rule the problem is in, when it is in a rule.
    """

    line: int
    column: int
    severity: str
    code: str
    message: str
    found: str | None = None
    expected: str | None = None
    rule_index: int | None = None

    def format(self, source: str = "<rules>") -> str:
        """``SOURCE:LINE:COL: severity code: message`` (control characters escaped)."""
        from dlqlens.safe import printable

        return printable(f"{source}:{self.line}:{self.column}: {self.severity} {self.code}: "
                         f"{self.message}")

    def to_dict(self) -> dict:
        """One element of ``diagnostics`` in the ``rules check --json`` contract."""
        return {
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "found": self.found,
            "expected": self.expected,
            "rule_index": self.rule_index,
        }


@dataclass(frozen=True)
class LintFinding:
    """An auditor's finding about a valid table (see :mod:`dlqlens.rules.lint`).

    Attributes
    ----------
    code : str
        Stable identifier, see :data:`dlqlens.rules.lint.CODES`.
    message : str
        What is wrong, why it matters and what to do.
    rule_index : int or None
        The rule concerned (``None`` for table-wide findings).
    line, column : int or None
        Where to look.
    severity : str
        ``"warning"`` or ``"info"`` (a heuristic that may not apply).
    related : tuple of int
        Other rules involved (the earlier rule that shadows this one).
    reasoning : str or None
        The evidence behind the finding, when it is not obvious.
    """

    code: str
    message: str
    rule_index: int | None = None
    line: int | None = None
    column: int | None = None
    severity: str = "warning"
    related: tuple = ()
    reasoning: str | None = None

    def format(self, source: str = "<rules>") -> str:
        """``SOURCE:LINE:COL: severity code: message`` (control characters escaped)."""
        from dlqlens.safe import printable

        return printable(f"{source}:{self.line or 1}:{self.column or 1}: {self.severity} "
                         f"{self.code}: {self.message}")

    def to_dict(self) -> dict:
        """One element of ``lint`` in the ``rules check --json`` contract."""
        return {
            "code": self.code,
            "rule_index": self.rule_index,
            "message": self.message,
            "severity": self.severity,
            "line": self.line,
            "column": self.column,
            "related": list(self.related),
            "reasoning": self.reasoning,
        }


@dataclass(frozen=True)
class RulesTable:
    """A parsed rules table: control data, rules and what validation found.

    A table with errors still holds every rule entry (a rule whose ACTION is
    missing has ``action=None``); the DLQ handler itself would refuse to
    start with such a table.

    Attributes
    ----------
    control : ControlData
    rules : tuple of Rule
    diagnostics : tuple of Diagnostic
        In file order.
    source : str or None
        The file name, when parsed from a file.
    """

    control: ControlData = field(default_factory=ControlData)
    rules: tuple = ()
    diagnostics: tuple = ()
    source: str | None = None

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Diagnostics with severity ``"error"``."""
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """Diagnostics with severity ``"warning"``."""
        return tuple(d for d in self.diagnostics if d.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when the handler would accept the table (no errors)."""
        return not self.errors

    def rule(self, index: int) -> Rule:
        """The rule with 1-based ``index``."""
        return self.rules[index - 1]

    def first_match(self, fields: Mapping[str, Any]) -> Rule | None:
        """The first rule whose patterns match (rules without ACTION skipped)."""
        for rule in self.rules:
            if rule.action is not None and rule.matches(fields):
                return rule
        return None

    def to_dict(self) -> dict:
        """``control``, ``rules`` and ``diagnostics`` of the JSON contract."""
        return {
            "control": self.control.to_dict(),
            "rules": [r.to_dict() for r in self.rules],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
