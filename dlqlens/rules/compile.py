"""Compile rules-table patterns into Spark column predicates.

A replay must test every rule against every message without a Python loop
over messages, so each :class:`~dlqlens.rules.model.Pattern` is turned into a
boolean :class:`pyspark.sql.Column`, and a rule into the conjunction of its
patterns. This module holds the translation as plain data first
(:func:`plan_string`, testable without Spark) and then renders it as Spark
expressions (:func:`string_predicate` ...).

Equivalence with the handler's matching
---------------------------------------
The reference semantics are :func:`dlqlens.rules.match.match_string`, the
algorithm of IBM's sample handler (``amqsdlq``, ``odqMatchString``) over a
blank-padded field of length ``L``.
A capture DataFrame holds MQ character fields *trimmed* of their padding
(:mod:`dlqlens.decode.fixed`: cut at the first NUL, trailing blanks
removed), so the predicate is evaluated on ``t = rtrim(value)`` (no trailing
blanks, ``n = len(t)``) and must accept exactly the ``t`` for which
``match_string(p, t, L)`` is true.

Write the pattern, with trailing blanks removed and runs of ``*`` collapsed
(neither changes what it matches), as ``P + S`` where ``S`` is the longest
suffix made only of blanks and ``*``. On the padded field ``t + " " * (L-n)``:

* positions ``< n`` are exactly the characters of ``t``; positions ``>= n``
  are trailing blanks, which a ``?`` may not consume (IBM MQ "DLQ rules table
  conventions": "any single character except a trailing blank") and no
  non-blank literal can match;
* so ``P`` (whose last character is a literal non-blank or ``?``) is
  consumed inside ``t``, and only ``S`` can reach into the padding; ``S``
  consumes a tail of ``t`` and then ``j`` padding blanks, ``0 <= j <= L-n``.

Splitting ``S = S[:i] + S[i:]`` where the padding starts gives the exact
condition

    ``p`` matches  ⇔  for some ``i``: ``P + S[:i]`` matches ``t`` entirely
    (``*`` any run of characters, ``?`` any one character, everything else
    itself) **and** ``n <= L - c_i``, ``c_i`` = number of blanks in ``S[i:]``.

(``S`` ends with ``*`` when it is not empty, so ``S[i:]`` absorbs any
number ``>= c_i`` of padding blanks; a ``*`` straddling the boundary never
adds a match that another split lacks.) Only the largest ``i`` of each
``c_i`` is needed (a longer ``S[:i]`` with the same ``c_i`` only adds
``*``), and a split whose ``S[:i]`` ends with a blank can never match a
``t`` without trailing blanks, so it is dropped. In the common case — no
blank in ``S`` — there is one alternative: the pattern itself, as a plain
anchored glob over the trimmed value (``*`` → ``.*``, ``?`` → ``.``, every
other character escaped, DOTALL, anchored with ``\\A`` … ``\\z``). A value
longer than ``L`` (not possible for a decoded field) is matched unpadded,
as :func:`~dlqlens.rules.match.match_string` does; the ``n <= L - c_i``
bound keeps that case right too.

What a trimmed value cannot tell: a field padded with NULs instead of blanks
(:mod:`dlqlens.rules.match`: ``DESTQM(QM1)`` does not match ``QM1`` + 45
NULs in the sample) is decoded to ``QM1`` and therefore matches. dlqlens
follows the field as the queue manager documents it (blank-padded) here.

Each alternative is rendered with the cheapest equivalent Spark expression:
equality when it has no wildcard, ``startswith``/``endswith``/``contains``
for ``X*`` / ``*X`` / ``*X*`` without ``?``, ``rlike`` otherwise.
Integer patterns are equality; ``*`` (and an omitted keyword) is
``True``. A null field never matches a specific pattern.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dlqlens.rules.model import Pattern, Rule

__all__ = [
    "Alternative",
    "plan_string",
    "java_regex",
    "python_regex",
    "plan_matches",
    "string_predicate",
    "integer_predicate",
    "pattern_predicate",
    "rule_predicate",
    "matched_rules_column",
    "pattern_key",
    "distinct_patterns",
    "field_column",
    "FIELD_COLUMNS",
]

_STAR = "*"
_QUESTION = "?"
_BLANK = " "


@dataclass(frozen=True)
class Alternative:
    """One way a string pattern can match a trimmed field value.

    Attributes
    ----------
    glob : str
        A pattern that must match the *whole* trimmed value, ``*`` standing
        for any run of characters and ``?`` for any one character.
    max_length : int or None
        The trimmed value may be at most this many characters long
        (``None``: no bound). Present when the pattern ends in blanks that
        must find room in the field's padding.
    """

    glob: str
    max_length: int | None = None


def _normalise(pattern: str) -> str:
    text = pattern.rstrip(_BLANK)
    return re.sub(r"\*{2,}", _STAR, text)


def plan_string(pattern: str, length: int) -> tuple[Alternative, ...]:
    """Translate a runmqdlq string pattern to alternatives over the trimmed value.

    See the module docstring for why this is exact.

    Parameters
    ----------
    pattern : str
        The pattern as parsed (``Pattern.value``).
    length : int
        The MQ field length in characters (48 for DestQName, 8 for Format).

    Returns
    -------
    tuple of Alternative
        The pattern matches a field whose trimmed value is ``t`` exactly when
        some alternative matches ``t``; never empty.

    Examples
    --------
    >>> plan_string("APP.*", 48)
    (Alternative(glob='APP.*', max_length=None),)
    >>> plan_string("A *", 8)
    (Alternative(glob='A', max_length=7), Alternative(glob='A *', max_length=None))
    """
    text = _normalise(pattern)
    cut = len(text)
    while cut > 0 and text[cut - 1] in (_BLANK, _STAR):
        cut -= 1
    head, tail = text[:cut], text[cut:]
    if _BLANK not in tail:
        return (Alternative(text),)
    best: dict[int, int] = {}  # blanks in S[i:] -> largest i
    for i in range(len(tail) + 1):
        if i > 0 and tail[i - 1] == _BLANK:
            continue  # S[:i] ends with a blank: cannot end a value without trailing blanks
        blanks = tail[i:].count(_BLANK)
        best[blanks] = i
    out = []
    for blanks, i in sorted(best.items(), key=lambda kv: kv[1]):
        bound = None if blanks == 0 else length - blanks
        out.append(Alternative(head + tail[:i], bound))
    return tuple(out)


def _java_literal(ch: str) -> str:
    if ch.isascii() and ch.isalnum():
        return ch
    if ch.isascii() and ch.isprintable():
        return "\\" + ch  # a backslash before a non-letter is always a literal in Java
    return "\\x{%x}" % ord(ch)


def _linear_body(glob: str, literal: Callable[[str], str]) -> str:
    """The regular expression of a glob, built so that a backtracking engine
    (Java's, Python's) runs it in ``O(len(value) * len(glob))``.

    The naive translation (``*`` → ``.*``) backtracks exponentially in the
    number of ``*`` on shapes like ``*A*A*A*A*B`` against ``AAAA...``. Here
    the glob is split at its ``*``: the first piece is anchored at the start,
    the last at the end, and each middle piece is found at its *leftmost*
    occurrence inside an atomic group (``(?>.*?piece)``), which the engine
    never re-enters. Taking the leftmost occurrence of each middle piece is
    exact for globs (a later occurrence never leaves more room for the rest),
    so the expression accepts the same values as the naive one.
    """

    def piece(text: str) -> str:
        return "".join("." if ch == _QUESTION else literal(ch) for ch in text)

    parts = glob.split(_STAR)
    if len(parts) == 1:
        return piece(parts[0])
    middle = "".join(f"(?>.*?{piece(p)})" for p in parts[1:-1] if p)
    return piece(parts[0]) + middle + ".*" + piece(parts[-1])


def java_regex(glob: str) -> str:
    """The anchored Java regular expression (Spark ``rlike``) of a glob.

    ``*`` any run of characters, ``?`` any one character, other characters
    literal, built by :func:`_linear_body` so that matching takes linear time
    whatever the pattern; ``(?s)`` so that ``.`` also matches line
    terminators; ``\\A`` and ``\\z`` anchor the whole value (Java's ``$``
    would also accept a final line terminator).
    """
    return "(?s)\\A" + _linear_body(glob, _java_literal) + "\\z"


def python_regex(glob: str) -> re.Pattern:
    """The same glob as a compiled Python pattern (for ``fullmatch``; linear
    time, see :func:`_linear_body`)."""
    return re.compile(_linear_body(glob, re.escape), re.DOTALL)


def plan_matches(alternatives: Iterable[Alternative], value: str) -> bool:
    """Evaluate a plan in Python (the reference for the Spark rendering).

    ``value`` is trimmed of trailing blanks first, as the Spark predicate does.
    """
    t = value.rstrip(_BLANK)
    return any(
        (alt.max_length is None or len(t) <= alt.max_length)
        and python_regex(alt.glob).fullmatch(t) is not None
        for alt in alternatives
    )


# ---------------------------------------------------------------------------
# Spark rendering
# ---------------------------------------------------------------------------

#: The capture DataFrame column of each MQ field a pattern keyword matches.
FIELD_COLUMNS: dict[str, str] = {
    "md.ApplIdentityData": "md.ApplIdentityData",
    "md.PutApplName": "md.PutApplName",
    "md.PutApplType": "md.PutApplType",
    "md.Feedback": "md.Feedback",
    "md.MsgType": "md.MsgType",
    "md.Persistence": "md.Persistence",
    "md.ReplyToQ": "md.ReplyToQ",
    "md.ReplyToQMgr": "md.ReplyToQMgr",
    "md.UserIdentifier": "md.UserIdentifier",
    "dlh.Reason": "dlh.Reason",
    "dlh.DestQName": "dlh.DestQName",
    "dlh.DestQMgrName": "dlh.DestQMgrName",
    "dlh.Format": "dlh.Format",
}


def field_column(field: str):
    """``F.col`` of an MQ field (``"dlh.DestQName"``) in a capture DataFrame."""
    from pyspark.sql import functions as F

    return F.col(FIELD_COLUMNS.get(field, field))


def _alternative_column(t, alt: Alternative):
    from pyspark.sql import functions as F

    g = alt.glob
    inner = g.strip(_STAR)  # runs of '*' are collapsed: at most one each side
    if g == "":
        pred = t == F.lit("")
    elif g == _STAR:
        pred = F.lit(True)
    elif _QUESTION in g or _STAR in inner:
        pred = t.rlike(java_regex(g))
    elif g.startswith(_STAR) and g.endswith(_STAR):
        pred = t.contains(F.lit(inner))
    elif g.endswith(_STAR):
        pred = t.startswith(F.lit(inner))
    elif g.startswith(_STAR):
        pred = t.endswith(F.lit(inner))
    else:
        pred = t == F.lit(g)
    if alt.max_length is not None:
        pred = pred & (F.length(t) <= F.lit(alt.max_length))
    return pred


def string_predicate(column, pattern: str, length: int, *, trimmed: bool = False):
    """Boolean column: does ``column`` match the string ``pattern``?

    Parameters
    ----------
    column : pyspark.sql.Column
        A string column holding the MQ field (trailing blanks are removed
        here with ``rtrim``; leading and embedded blanks are significant).
    trimmed : bool
        The column is already right-trimmed (skip the ``rtrim``; a replay
        trims each field once, not once per pattern).
    pattern : str
        The pattern as parsed.
    length : int
        The MQ field length in characters.

    Returns
    -------
    pyspark.sql.Column
        Never null: a null field does not match (unless the pattern is all
        ``*``, which matches anything).
    """
    from pyspark.sql import functions as F

    alternatives = plan_string(pattern, length)
    if any(a.glob == _STAR and a.max_length is None for a in alternatives):
        return F.lit(True)
    t = column if trimmed else F.rtrim(column)
    pred = None
    for alt in alternatives:
        c = _alternative_column(t, alt)
        pred = c if pred is None else pred | c
    return F.coalesce(pred, F.lit(False))


def integer_predicate(column, value: int | None):
    """Boolean column for an integer pattern: ``None`` (``*``) is True."""
    from pyspark.sql import functions as F

    if value is None:
        return F.lit(True)
    return F.coalesce(column == F.lit(int(value)), F.lit(False))


def pattern_predicate(pattern: Pattern, col_for: Callable[[str], object] = field_column,
                      *, trimmed: bool = False):
    """Boolean column of one pattern keyword; ``col_for(field)`` gives the column
    (``trimmed``: string columns are already right-trimmed)."""
    from pyspark.sql import functions as F

    if pattern.is_any:
        return F.lit(True)
    column = col_for(pattern.field)
    if pattern.kind == "integer":
        return integer_predicate(column, pattern.value)  # type: ignore[arg-type]
    return string_predicate(column, pattern.value, pattern.length,  # type: ignore[arg-type]
                            trimmed=trimmed)


def pattern_key(pattern: Pattern) -> tuple:
    """What a pattern's predicate depends on: ``(field, kind, value, length)``.

    Two patterns with the same key have the same predicate (``REASON(2053)``
    and ``REASON(MQRC_Q_FULL)`` included), so a table's predicates can be
    computed once each.
    """
    return (pattern.field, pattern.kind, pattern.value, pattern.length)


def distinct_patterns(rules: Iterable[Rule]) -> list[Pattern]:
    """The patterns of ``rules`` that are not ``*``, one per :func:`pattern_key`,
    in order of first use."""
    seen: dict[tuple, Pattern] = {}
    for rule in rules:
        for pat in rule.patterns:
            if not pat.is_any:
                seen.setdefault(pattern_key(pat), pat)
    return list(seen.values())


def rule_predicate(rule: Rule, col_for: Callable[[str], object] = field_column,
                   *, trimmed: bool = False,
                   pattern_column: Callable[[Pattern], object] | None = None):
    """Boolean column: does ``rule`` match the message (all its patterns)?

    Same result as :meth:`Rule.matches <dlqlens.rules.model.Rule.matches>` on
    the message's fields (with the trimming noted in the module docstring).
    ``pattern_column(pattern)``, when given, supplies each pattern's boolean
    column (for predicates computed once per table, see
    :func:`distinct_patterns`).
    """
    from pyspark.sql import functions as F

    pred = F.lit(True)
    for pat in rule.patterns:
        if pat.is_any:
            continue
        if pattern_column is not None:
            pred = pred & pattern_column(pat)
        else:
            pred = pred & pattern_predicate(pat, col_for, trimmed=trimmed)
    return pred


def matched_rules_column(rules: Iterable[Rule], col_for: Callable[[str], object] = field_column,
                         *, trimmed: bool = False,
                         pattern_column: Callable[[Pattern], object] | None = None):
    """``array<int>`` column: the indexes of the rules that match, in table order.

    ``F.array_remove(F.array(F.when(pred_1, 1).otherwise(0), ...), 0)``: the
    rules that do not match give 0 (rule indexes start at 1), which is then
    removed. One pass of generated code over each message, no driver loop;
    ``array_remove`` rather than ``filter(x -> x is not null)`` because a
    higher-order function is not code-generated and would make Spark
    interpret every predicate. An empty table gives an empty array.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    whens = [
        F.when(rule_predicate(r, col_for, trimmed=trimmed, pattern_column=pattern_column),
               F.lit(r.index)).otherwise(F.lit(0))
        for r in rules
    ]
    if not whens:
        return F.array().cast(T.ArrayType(T.IntegerType()))
    return F.array_remove(F.array(*whens), 0)
