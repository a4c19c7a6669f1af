"""Validation of runmqdlq rules tables: the handler's start-up checks.

IBM: "The rules table is validated when the DLQ handler starts, and errors are
flagged at that time" (Processing the rules table). :func:`build_table` turns
the entries read by :mod:`dlqlens.rules.parser` into a
:class:`~dlqlens.rules.model.RulesTable`, checking each keyword and value the
way the handler does, and reports every problem as a
:class:`~dlqlens.rules.model.Diagnostic` naming the line and column, what was
found and what was expected. A table with errors still yields every rule entry
(so that an editor or a notebook can show them); the handler itself would
refuse to start.

Severities: ``error`` for what the handler rejects (IBM documents the
condition as invalid, or IBM's sample handler has a response code for it:
``odq_InvalidFieldLen``, ``odq_DuplicateKeyword``, ``odq_InvalidInteger``,
``odq_InvalidInput``, ``odq_InvalidInputComb``, ``odq_NoValidInput``);
``warning`` for what the handler accepts but what probably does not do what
the author meant. :data:`CODES` lists them all.

Choices made where IBM's text leaves room:

* Unquoted values are folded to upper case, quoted ones are not (IBM: strings
  with lower-case characters "must be enclosed in single quotation marks", a
  rule of "DLQ rules table conventions" as recalled, not verified against the
  page). Folding a name
  (``DESTQM(bbbb.1)`` → ``BBBB.1``) is reported as warning ``case-folded``;
  keywords, ACTION/HEADER/PUTAUT/WAIT values and symbolic names fold
  silently. A quoted ACTION/HEADER/PUTAUT/WAIT value must be upper case.
* Unquoted values may contain letters, digits and ``. / _ % * ?`` (and a
  leading ``&`` in FWDQ/FWDQM, a sign in numbers); anything else must be
  quoted (``needs-quotes``).
* FWDQ accepts exactly ``&DESTQ`` and ``&REPLYQ``, FWDQM exactly
  ``&DESTQM`` and ``&REPLYQM`` (IBM's documented forms), although IBM's
  sample only looks at the first two characters.
* FWDQ, FWDQM or HEADER in a rule whose ACTION is not FWD, PUTAUT with
  DISCARD/IGNORE, and RETRY with IGNORE are warnings (``invalid-combination``,
  "has no effect"): IBM says HEADER is meaningful only with FWD, and the
  sample's comment says FWDQ goes with FWD only, but whether the product
  rejects the table was not verified.
* Symbolic names resolve through :func:`dlqlens.mq.constants.lookup`; a name
  of an unexpected family (``PERSIST(MQMT_REQUEST)``) is a warning, because
  IBM's own z/OS example matches REASON against an ``MQFB_`` name.
* RETRY must be 1 - 999 999 999, RETRYINT and WAIT 0 - 999 999 999, numeric
  patterns 0 - 999 999 999 (IBM's ranges as recalled from "DLQ rules table
  conventions" and "DLQ rules (patterns and actions)", not verified; IBM's
  sample handler rejects an integer outside its range, ``odq_InvalidInteger``).
* The control-data entry is the first entry when all its keywords are
  control keywords. Control keywords in any later entry are
  ``control-not-first``; control and rule keywords in the first entry are
  ``mixed-entry``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from dlqlens.errors import did_you_mean
from dlqlens.mq import constants
from dlqlens.rules.entries import Entry, Item, Token
from dlqlens.rules.model import (
    ACTIONS,
    CONTROL_KEYWORDS,
    KEYWORDS,
    MAX_INTEGER,
    SUBSTITUTIONS,
    ControlData,
    Diagnostic,
    Pattern,
    Rule,
    RulesTable,
)

__all__ = ["CodeInfo", "CODES", "diagnostic", "build_table"]


@dataclass(frozen=True)
class CodeInfo:
    """One diagnostic code.

    Attributes
    ----------
    severity : str
        ``"error"`` or ``"warning"``.
    meaning : str
        What the code reports.
    handler : str or None
        The response code of IBM's sample DLQ handler (``amqodqha.h``) for
        the same condition, when it has one.
    """

    severity: str
    meaning: str
    handler: str | None = None


#: Every diagnostic code, its severity and meaning.
CODES: dict[str, CodeInfo] = {
    "syntax": CodeInfo(
        "error",
        "The entry is not well formed: an unclosed quote or parenthesis, a value "
        "without a keyword, or several values in one pair of parentheses.",
        "odq_InvalidInput",
    ),
    "unknown-keyword": CodeInfo(
        "error", "A word that is not one of the 23 rules-table keywords.", "odq_InvalidInput"
    ),
    "missing-value": CodeInfo(
        "error",
        "A keyword without a value, or with no significant character in it "
        "(FORMAT, FORMAT(), FORMAT( ), FORMAT('')).",
        "odq_InvalidInput",
    ),
    "invalid-value": CodeInfo(
        "error",
        "A value the keyword does not accept (ACTION(MOVE), HEADER(MAYBE), a "
        "wildcard in FWDQ or in a number, FWDQ(' ')).",
        "odq_InvalidInput",
    ),
    "needs-quotes": CodeInfo(
        "error",
        "An unquoted value with a character other than letters, digits and . / _ % "
        "(IBM: such values must be in single quotes).",
        "odq_InvalidInput",
    ),
    "value-too-long": CodeInfo(
        "error",
        "A value longer than the MQ field it names or matches (not counting '*').",
        "odq_InvalidFieldLen",
    ),
    "value-out-of-range": CodeInfo(
        "error",
        "A number outside 0 - 999 999 999 (RETRY: 1 - 999 999 999).",
        "odq_InvalidInteger",
    ),
    "unknown-symbol": CodeInfo(
        "error", "A symbolic name (MQRC_..., MQFB_...) that is not an MQ constant.",
        "odq_InvalidInput",
    ),
    "duplicate-keyword": CodeInfo(
        "error", "The same keyword twice in one entry.", "odq_DuplicateKeyword"
    ),
    "missing-action": CodeInfo(
        "error", "A rule without the required ACTION keyword.", "odq_InvalidInputComb"
    ),
    "missing-fwdq": CodeInfo(
        "error", "ACTION(FWD) without FWDQ: there is nowhere to forward to.",
        "odq_InvalidInputComb",
    ),
    "control-not-first": CodeInfo(
        "error",
        "A control-data keyword (INPUTQ, INPUTQM, RETRYINT, WAIT) after the first "
        "entry; the control data must be one entry, the first.",
        "odq_InvalidInput",
    ),
    "mixed-entry": CodeInfo(
        "error", "Control-data keywords and rule keywords in the same entry.",
        "odq_InvalidInputComb",
    ),
    "empty-table": CodeInfo(
        "error", "The table has no rule (IBM: it must contain at least one).",
        "odq_NoValidInput",
    ),
    "invalid-combination": CodeInfo(
        "warning",
        "A keyword that has no effect with the rule's ACTION (FWDQ, FWDQM or HEADER "
        "without ACTION(FWD); PUTAUT with DISCARD/IGNORE; RETRY with IGNORE).",
    ),
    "unexpected-symbol-kind": CodeInfo(
        "warning",
        "A symbolic name of another family than the keyword's field "
        "(PERSIST(MQMT_REQUEST)); its number is used as is.",
    ),
    "invalid-name": CodeInfo(
        "warning",
        "FWDQ, FWDQM, INPUTQ or INPUTQM is not a valid MQ object name (characters "
        "other than A-Z a-z 0-9 . / _ %); the put or open would fail at run time.",
    ),
    "case-folded": CodeInfo(
        "warning",
        "An unquoted name with lower-case letters, which the handler folds to upper "
        "case (DESTQM(bbbb.1) matches BBBB.1 only).",
    ),
    "missing-separator": CodeInfo(
        "warning", "Two keywords with no blank or comma between them."
    ),
    "line-too-long": CodeInfo(
        "warning", "An entry line longer than 72 significant characters."
    ),
    "dangling-continuation": CodeInfo(
        "warning", "The last line ends with a continuation character."
    ),
    "no-final-newline": CodeInfo(
        "warning", "The last line has no line end (on Windows runmqdlq needs one)."
    ),
}

_UNQUOTED_OK = re.compile(r"[A-Za-z0-9./_%*?]*\Z")
_NAME_OK = re.compile(r"[A-Za-z0-9./_%]*\Z")
_NUMBER = re.compile(r"[+-]?[0-9]+\Z")
_SYMBOL = re.compile(r"[A-Z][A-Z0-9_]*\Z")

#: Symbolic-name families expected for each integer pattern keyword.
_SYMBOL_FAMILIES: dict[str, tuple[str, ...]] = {
    "REASON": ("MQRC_", "MQFB_"),
    "FEEDBACK": ("MQFB_", "MQRC_"),
    "MSGTYPE": ("MQMT_",),
    "PERSIST": ("MQPER_",),
    "APPLTYPE": ("MQAT_",),
}


def diagnostic(
    code: str,
    line: int,
    column: int,
    message: str,
    *,
    found: str | None = None,
    expected: str | None = None,
    rule_index: int | None = None,
) -> Diagnostic:
    """Make a :class:`Diagnostic` with the severity of ``code`` from :data:`CODES`."""
    return Diagnostic(
        line=line,
        column=column,
        severity=CODES[code].severity,
        code=code,
        message=message,
        found=found,
        expected=expected,
        rule_index=rule_index,
    )


class _Invalid(Exception):
    """A value was rejected; the diagnostic is already recorded."""


class _Builder:
    """Checks keywords and values, appending diagnostics as it goes.

    ``rule_index`` is the rule being built (``None`` outside rules); it is
    stamped on every diagnostic reported meanwhile.
    """

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        self.rule_index: int | None = None

    # -- reporting ---------------------------------------------------------
    def report(self, code: str, tok: Token, message: str, **kw) -> None:
        kw.setdefault("rule_index", self.rule_index)
        self.diagnostics.append(diagnostic(code, tok.line, tok.column, message, **kw))

    def fail(self, code: str, tok: Token, message: str, **kw) -> None:
        self.report(code, tok, message, **kw)
        raise _Invalid

    # -- values ------------------------------------------------------------
    def raw_value(self, item: Item, keyword: str) -> tuple[str, bool, Token]:
        """The value text, whether it was quoted, and its token."""
        if not item.well_formed:
            raise _Invalid  # the syntax error is already reported
        if item.value is None:
            example = {"ACTION": "ACTION(DISCARD)", "FWDQ": "FWDQ(DEADQ.MANUAL)"}.get(
                keyword, f"{keyword}(value)"
            )
            what = "has no value" if not item.has_parens else "has an empty value"
            self.fail(
                "missing-value", item.keyword,
                f"{keyword} {what}; every keyword needs a value with at least one "
                f"significant character, e.g. {example}",
                found=item.keyword.text + ("()" if item.has_parens else ""),
                expected=f"{keyword}(value)",
            )
        tok = item.value
        assert tok is not None
        quoted = tok.kind == "QUOTED"
        text = tok.text
        if quoted and text == "":
            self.fail(
                "missing-value", tok,
                f"{keyword}('') has no significant character; write {keyword}(' ') "
                "for a blank value",
                found="''", expected="at least one character",
            )
        if not quoted:
            allowed = text
            if keyword in SUBSTITUTIONS and text.startswith("&"):
                allowed = text[1:]
            if KEYWORDS[keyword].kind in ("integer", "wait") and text[:1] in "+-":
                allowed = text[1:]
            bad = next((c for c in allowed if not _UNQUOTED_OK.match(c)), None)
            if bad is not None:
                self.fail(
                    "needs-quotes", tok,
                    f"value {text} of {keyword} contains {bad!r}; values with characters "
                    "other than letters, digits and . / _ % must be in single quotes",
                    found=text, expected=f"{keyword}('{text}')",
                )
        return text, quoted, tok

    def string_value(self, item: Item, keyword: str) -> tuple[str, str, Token]:
        spec = KEYWORDS[keyword]
        text, quoted, tok = self.raw_value(item, keyword)
        value = text if quoted else text.upper()
        if not quoted and value != text:
            is_subst = keyword in SUBSTITUTIONS and value in SUBSTITUTIONS[keyword]
            if not is_subst:
                self.report(
                    "case-folded", tok,
                    f"unquoted {keyword}({text}) is folded to upper case and means "
                    f"{keyword}({value}); write {keyword}('{text}') to keep lower case",
                    found=text, expected=f"'{text}' or {value}",
                )
        if spec.wildcards:
            significant = value.rstrip(" ").replace("*", "")
            if len(significant) > spec.length:
                hint = ""
                if keyword == "FORMAT" and value.upper().startswith("MQFMT_"):
                    try:
                        fmt = constants.lookup_format(value)
                        hint = (
                            f"; {value.upper()} is the name of format {fmt.rstrip()!r}, "
                            f"write FORMAT({fmt.rstrip()})"
                        )
                    except KeyError:
                        hint = ""
                self.fail(
                    "value-too-long", tok,
                    f"{keyword} value '{value}' has {len(significant)} characters not "
                    f"counting '*'; the {spec.field} field holds {spec.length}{hint}",
                    found=value, expected=f"at most {spec.length} characters",
                )
            return value, text, tok
        # Names without wildcards: FWDQ, FWDQM, INPUTQ, INPUTQM.
        if "*" in value or "?" in value:
            self.fail(
                "invalid-value", tok,
                f"{keyword}({text}) contains a wildcard; {keyword} takes a single name",
                found=text, expected="a name without * or ?",
            )
        if value.startswith("&"):
            allowed = SUBSTITUTIONS.get(keyword, {})
            if value not in allowed:
                expected = " or ".join(allowed) if allowed else "a name"
                self.fail(
                    "invalid-value", tok,
                    f"{keyword}({text}) is not a valid substitution; expected "
                    f"{expected}",
                    found=text, expected=expected,
                )
            return value, text, tok
        name = value.rstrip(" ")
        if keyword == "FWDQ" and name == "":
            self.fail(
                "invalid-value", tok,
                "FWDQ(' ') is not valid: ACTION(FWD) needs a queue name, &DESTQ or &REPLYQ",
                found=f"'{text}'", expected="a queue name, &DESTQ or &REPLYQ",
            )
        if len(name) > spec.length:
            self.fail(
                "value-too-long", tok,
                f"{keyword} value '{name}' has {len(name)} characters; MQ names hold "
                f"at most {spec.length}",
                found=name, expected=f"at most {spec.length} characters",
            )
        if name and not _NAME_OK.match(name.lstrip(" ")):
            self.report(
                "invalid-name", tok,
                f"{keyword}('{name}') is not a valid MQ name (allowed: A-Z a-z 0-9 . / _ %)",
                found=name, expected="an MQ object name",
            )
        return (name if name else " "), text, tok

    def integer_value(self, item: Item, keyword: str) -> tuple[int | None, str, str | None, Token]:
        spec = KEYWORDS[keyword]
        text, quoted, tok = self.raw_value(item, keyword)
        value = text.strip(" ")
        if not quoted:
            value = value.upper()
        if value == "*":
            if spec.role != "pattern":
                self.fail(
                    "invalid-value", tok,
                    f"{keyword}(*) is not valid; {keyword} takes a number",
                    found=text, expected=f"a number {spec.minimum} - {MAX_INTEGER}",
                )
            return None, text, None, tok
        if "*" in value or "?" in value:
            self.fail(
                "invalid-value", tok,
                f"{keyword}({text}): a wildcard cannot be part of a number; use "
                f"{keyword}(*) for any value" if spec.role == "pattern" else
                f"{keyword}({text}): {keyword} takes a number without wildcards",
                found=text, expected="a number, a symbolic name or *",
            )
        if _NUMBER.match(value):
            number = int(value)
            if not spec.minimum <= number <= MAX_INTEGER:
                self.fail(
                    "value-out-of-range", tok,
                    f"{keyword}({text}) is outside the range {spec.minimum} - "
                    f"{MAX_INTEGER:,}".replace(",", " "),
                    found=text, expected=f"{spec.minimum} - {MAX_INTEGER}",
                )
            return number, text, None, tok
        if spec.role == "pattern" and _SYMBOL.match(value):
            try:
                number = constants.lookup(value)
            except KeyError as exc:
                detail = exc.args[0] if exc.args else value
                self.fail(
                    "unknown-symbol", tok,
                    f"{keyword}({text}): {detail}",
                    found=text, expected="an MQ constant name such as MQRC_Q_FULL",
                )
            families = _SYMBOL_FAMILIES[keyword]
            if not value.startswith(families):
                self.report(
                    "unexpected-symbol-kind", tok,
                    f"{keyword}({text}) uses a constant that is not "
                    f"{' or '.join(f + '*' for f in families)}; its value {number} is "
                    f"compared with {spec.field}",
                    found=text, expected=" or ".join(f + "*" for f in families),
                )
            return number, text, value, tok
        expected = (
            "a number 0 - 999999999, a symbolic name such as MQRC_Q_FULL, or *"
            if spec.role == "pattern"
            else f"a number {spec.minimum} - {MAX_INTEGER}"
        )
        self.fail(
            "invalid-value", tok,
            f"{keyword}({text}) is not valid; expected {expected}",
            found=text, expected=expected,
        )
        raise AssertionError("unreachable")  # pragma: no cover

    def enum_value(self, item: Item, keyword: str) -> tuple[str, Token]:
        spec = KEYWORDS[keyword]
        text, quoted, tok = self.raw_value(item, keyword)
        value = text.strip(" ") if quoted else text.upper()
        if value not in spec.choices:
            hint = ""
            if keyword == "ACTION" and value in ("FORWARD", "FWDQ"):
                hint = "; forwarding is ACTION(FWD) with FWDQ(queue)"
            elif keyword == "ACTION" and value in ("DELETE", "REMOVE", "PURGE"):
                hint = "; deleting is ACTION(DISCARD)"
            elif quoted and value.upper() in spec.choices:
                hint = f"; a quoted value keeps its case, write {keyword}({value.upper()})"
            choices = "|".join(spec.choices)
            self.fail(
                "invalid-value", tok,
                f"{keyword}({text}) is not valid; expected {keyword}({choices}){hint}",
                found=text, expected=choices,
            )
        return value, tok

    def wait_value(self, item: Item) -> str | int:
        text, quoted, tok = self.raw_value(item, "WAIT")
        value = text.strip(" ") if quoted else text.upper()
        if value in ("YES", "NO"):
            return value
        if _NUMBER.match(value):
            number = int(value)
            if not 0 <= number <= MAX_INTEGER:
                self.fail(
                    "value-out-of-range", tok,
                    f"WAIT({text}) is outside the range 0 - 999 999 999 seconds",
                    found=text, expected=f"0 - {MAX_INTEGER}",
                )
            return number
        self.fail(
            "invalid-value", tok,
            f"WAIT({text}) is not valid; expected WAIT(YES), WAIT(NO) or WAIT(seconds)",
            found=text, expected="YES|NO|nnn",
        )
        raise AssertionError("unreachable")  # pragma: no cover

    # -- keywords ----------------------------------------------------------
    def unknown_keyword(self, item: Item) -> None:
        word = item.keyword.text
        upper = word.upper()
        if upper in ACTIONS:
            hint = f"; did you mean ACTION({upper})?"
        elif upper in ("YES", "NO"):
            hint = f"; did you mean HEADER({upper})?"
        else:
            close = did_you_mean(upper, KEYWORDS)
            hint = f"; {close}" if close else ""
        shown = word + ("(...)" if item.has_parens else "")
        self.report(
            "unknown-keyword", item.keyword,
            f"{shown} is not a rules-table keyword{hint}",
            found=word, expected="one of " + " ".join(KEYWORDS),
        )

    def known_items(self, entry: Entry) -> list[tuple[str, Item]]:
        """Recognised keywords of an entry; unknown ones reported."""
        out = []
        for item in entry.items:
            upper = item.keyword.text.upper()
            if upper in KEYWORDS:
                out.append((upper, item))
            else:
                self.unknown_keyword(item)
        return out

    def dedupe(self, items: list[tuple[str, Item]]) -> list[tuple[str, Item]]:
        seen: dict[str, Item] = {}
        out = []
        for keyword, item in items:
            if keyword in seen:
                first = seen[keyword].keyword
                self.report(
                    "duplicate-keyword", item.keyword,
                    f"{keyword} appears twice in this entry (first at line {first.line}, "
                    f"column {first.column}); a keyword may be used once per entry",
                    found=keyword, expected="each keyword at most once",
                )
                continue
            seen[keyword] = item
            out.append((keyword, item))
        return out

    # -- entries -----------------------------------------------------------
    def control(self, entry: Entry, items: list[tuple[str, Item]]) -> ControlData:
        values: dict[str, object] = {}
        for keyword, item in self.dedupe(items):
            try:
                if keyword in ("INPUTQ", "INPUTQM"):
                    values[keyword] = self.string_value(item, keyword)[0]
                elif keyword == "RETRYINT":
                    values[keyword] = self.integer_value(item, keyword)[0]
                else:
                    values[keyword] = self.wait_value(item)
            except _Invalid:
                continue
        return ControlData(
            inputq=values.get("INPUTQ", " "),  # type: ignore[arg-type]
            inputqm=values.get("INPUTQM", " "),  # type: ignore[arg-type]
            retryint=values.get("RETRYINT", KEYWORDS["RETRYINT"].default),  # type: ignore[arg-type]
            wait=values.get("WAIT", "YES"),  # type: ignore[arg-type]
            line=entry.line,
            column=entry.column,
            specified=frozenset(k for k, _ in items),
        )

    def rule(
        self, entry: Entry, items: list[tuple[str, Item]], index: int, garbled: bool = False
    ) -> Rule:
        """Build rule ``index``; ``garbled`` (a syntax error in the entry)
        suppresses ``missing-action``, which would only be a consequence."""
        self.rule_index = index
        patterns: list[Pattern] = []
        actions: dict[str, object] = {}
        action_tokens: dict[str, Token] = {}
        positions = []
        for keyword, item in self.dedupe(items):
            spec = KEYWORDS[keyword]
            positions.append((keyword, item.keyword.line, item.keyword.column))
            action_tokens[keyword] = item.keyword
            try:
                if spec.role == "pattern":
                    if spec.kind == "string":
                        value, text, _tok = self.string_value(item, keyword)
                        patterns.append(Pattern(
                            keyword, spec.field, "string", value, spec.length, text,
                            item.keyword.line, item.keyword.column,
                        ))
                    else:
                        number, text, symbol, _tok = self.integer_value(item, keyword)
                        patterns.append(Pattern(
                            keyword, spec.field, "integer", number, spec.length, text,
                            item.keyword.line, item.keyword.column, symbol,
                        ))
                elif keyword in ("FWDQ", "FWDQM"):
                    actions[keyword] = self.string_value(item, keyword)[0]
                elif keyword == "RETRY":
                    actions[keyword] = self.integer_value(item, keyword)[0]
                else:
                    actions[keyword] = self.enum_value(item, keyword)[0]
            except _Invalid:
                continue
        written = {k for k, _ in items}
        action = actions.get("ACTION")
        start = _At(entry.line, entry.column)
        if "ACTION" not in written and not garbled:
            hint = ""
            if written == {"RETRY"}:
                hint = (
                    "; RETRY is a rule keyword (attempts per rule), the control-data "
                    "keyword for the interval between retries is RETRYINT"
                )
            self.report(
                "missing-action", start,  # type: ignore[arg-type]
                "rule has no ACTION; every rule needs ACTION(DISCARD|IGNORE|RETRY|FWD)"
                + hint,
                found=" ".join(k for k, _ in items) or None,
                expected="ACTION(DISCARD|IGNORE|RETRY|FWD)",
            )
        if action == "FWD" and "FWDQ" not in written:
            self.report(
                "missing-fwdq", action_tokens["ACTION"],
                "ACTION(FWD) without FWDQ; name the queue to forward to, e.g. "
                "FWDQ(DEADQ.MANUAL) or FWDQ(&DESTQ)",
                found="ACTION(FWD)", expected="FWDQ(queue|&DESTQ|&REPLYQ)",
            )
        if action is not None and action != "FWD":
            for keyword in ("FWDQ", "FWDQM", "HEADER"):
                if keyword in written:
                    self.report(
                        "invalid-combination", action_tokens[keyword],
                        f"{keyword} has no effect with ACTION({action}); it applies to "
                        "ACTION(FWD) only",
                        found=f"{keyword} with ACTION({action})", expected="ACTION(FWD)",
                    )
        if action in ("DISCARD", "IGNORE") and "PUTAUT" in written:
            self.report(
                "invalid-combination", action_tokens["PUTAUT"],
                f"PUTAUT has no effect with ACTION({action}); nothing is put",
                found=f"PUTAUT with ACTION({action})", expected="ACTION(FWD) or ACTION(RETRY)",
            )
        if action == "IGNORE" and "RETRY" in written:
            self.report(
                "invalid-combination", action_tokens["RETRY"],
                "RETRY has no effect with ACTION(IGNORE); ignoring cannot fail, so the "
                "handler never counts attempts for it",
                found="RETRY with ACTION(IGNORE)", expected="no RETRY",
            )
        rule = Rule(
            index=index,
            line=entry.line,
            column=entry.column,
            patterns=tuple(patterns),
            action=action,  # type: ignore[arg-type]
            fwdq=actions.get("FWDQ"),  # type: ignore[arg-type]
            fwdqm=actions.get("FWDQM", " "),  # type: ignore[arg-type]
            header=actions.get("HEADER", "YES"),  # type: ignore[arg-type]
            putaut=actions.get("PUTAUT", "DEF"),  # type: ignore[arg-type]
            retry=actions.get("RETRY", 1),  # type: ignore[arg-type]
            positions=tuple(positions),
        )
        self.rule_index = None
        return rule


@dataclass(frozen=True)
class _At:
    """A position standing in for a token when a whole entry is reported."""

    line: int
    column: int


def build_table(
    entries: list[Entry], diagnostics: list[Diagnostic], source: str | None = None
) -> RulesTable:
    """Validate entries and assemble the :class:`RulesTable`.

    Parameters
    ----------
    entries : list of Entry
        From :func:`dlqlens.rules.parser.read_entries`.
    diagnostics : list of Diagnostic
        Lexical diagnostics already found; those on a rule's lines get that
        rule's ``rule_index``.
    source : str, optional
        Kept on the table.

    Returns
    -------
    RulesTable
        Diagnostics sorted by position. Rules are numbered from 1 over the
        rule entries (the control-data entry and misplaced control-only
        entries are not rules).
    """
    diags: list[Diagnostic] = []
    b = _Builder(diags)
    spans: list[tuple[int, int, int]] = []  # (first line, last line, rule index)
    control = ControlData()
    rules: list[Rule] = []
    control_set = set(CONTROL_KEYWORDS)
    for position, entry in enumerate(entries):
        first_diag = len(diags)
        items = b.known_items(entry)
        keywords = {k for k, _ in items}
        only_control = bool(keywords) and keywords <= control_set
        if position == 0 and only_control:
            control = b.control(entry, items)
            continue
        if only_control:
            b.report(
                "control-not-first", _At(entry.line, entry.column),  # type: ignore[arg-type]
                f"control data ({' '.join(k for k, _ in items)}) must be the first entry "
                "of the table, all on one line or joined with '+' or '-'; this entry is "
                "ignored",
                found=" ".join(k for k, _ in items),
                expected="control data in the first entry only",
            )
            continue
        index = len(rules) + 1
        diags[first_diag:] = [
            d if d.rule_index is not None else replace(d, rule_index=index)
            for d in diags[first_diag:]
        ]
        rule_items = []
        for keyword, item in items:
            if keyword in control_set:
                code = "mixed-entry" if position == 0 else "control-not-first"
                why = (
                    "control data and rules must be separate entries"
                    if position == 0
                    else "control data must be the first entry of the table"
                )
                b.report(
                    code, item.keyword,
                    f"control-data keyword {keyword} in a rule; {why}",
                    found=keyword, expected="a pattern or action keyword",
                    rule_index=index,
                )
                continue
            rule_items.append((keyword, item))
        garbled = any(
            d.code == "syntax" and entry.line <= d.line <= entry.last_line for d in diagnostics
        )
        rules.append(b.rule(entry, rule_items, index, garbled=garbled))
        spans.append((entry.line, entry.last_line, index))
    # Lexical problems inside a rule's lines belong to that rule.
    for d in diagnostics:
        if d.rule_index is None:
            owner = next((i for first, last, i in spans if first <= d.line <= last), None)
            if owner is not None:
                d = replace(d, rule_index=owner)
        diags.append(d)
    if not rules:
        where = entries[-1].line if entries else 1
        diags.append(diagnostic(
            "empty-table", where, 1,
            "the table has no rule; runmqdlq needs at least one rule (pattern keywords "
            "and an ACTION), e.g. ACTION(FWD) FWDQ(DEADQ.MANUAL) HEADER(YES)",
            expected="at least one rule",
        ))
    diags.sort(key=lambda d: (d.line, d.column))
    return RulesTable(control=control, rules=tuple(rules), diagnostics=tuple(diags), source=source)
