"""runmqdlq / CSQUDLQH rules tables: parse, validate, lint and match.

Public API
----------
parse(text, source=None) -> RulesTable
    Parse and validate the text of a rules table (never raises for problems
    in the table; see ``RulesTable.diagnostics``).
parse_file(path) -> RulesTable
    Same for a file; raises :class:`dlqlens.errors.RulesError` when the file
    cannot be read.
lint(table, dlq_name=None) -> list[LintFinding]
    Auditor findings on a table (catch-all, IGNORE, shadowed rules, loops,
    FWDQ(&REPLYQ), RETRY on incurable reasons, HEADER(NO)).
match_string(pattern, value, length=None) -> bool, match_integer(pattern, value) -> bool
    The handler's matching of one pattern against one field.
pattern_covers(outer, inner, length) -> bool | None
    Whether every field matched by ``inner`` is matched by ``outer``.
dlqlens.rules.handler.next_step(matching, attempts) -> Step
    The DLQ handler's decision for a message (which rule's action now, or
    why it stays), shared by the replay and the simulator's DlqHandler.
dlqlens.rules.replay.replay(table, capture_df, world="optimistic") -> DataFrame
    What the handler would do with every captured message (Spark), with
    ``rule_stats`` and ``summarize`` in the same module.
dlqlens.rules.diff.diff(old, new, capture_df, world="optimistic") -> DataFrame
    Both tables replayed side by side.
World
    The assumed outcome of the handler's puts (:mod:`dlqlens.rules.world`).

(``replay`` and ``diff`` are not re-exported here: the names are those of
their modules.)

Model: :class:`RulesTable`, :class:`ControlData`, :class:`Rule`,
:class:`Pattern`, :class:`Diagnostic`, :class:`LintFinding`; the keyword
catalogue :data:`KEYWORDS`; diagnostic and lint codes in
:data:`DIAGNOSTIC_CODES` and :data:`LINT_CODES`.

Behaviour follows IBM's DLQ handler documentation ("The DLQ handler rules
table", "DLQ control data", "DLQ rules (patterns and actions)", "DLQ rules
table conventions", "How the rules table is processed") and, where IBM's
text leaves room, the DLQ handler sample shipped with IBM MQ (``amqsdlq``);
``docs/rules.md`` describes it.
"""

from dlqlens.rules.lint import CODES as LINT_CODES
from dlqlens.rules.lint import lint
from dlqlens.rules.match import match_integer, match_string, pattern_covers
from dlqlens.rules.model import (
    KEYWORDS,
    ControlData,
    Diagnostic,
    LintFinding,
    Pattern,
    Rule,
    RulesTable,
)
from dlqlens.rules.parser import parse, parse_file
from dlqlens.rules.validate import CODES as DIAGNOSTIC_CODES
from dlqlens.rules.world import World

__all__ = [
    "parse",
    "parse_file",
    "lint",
    "match_string",
    "match_integer",
    "pattern_covers",
    "World",
    "RulesTable",
    "ControlData",
    "Rule",
    "Pattern",
    "Diagnostic",
    "LintFinding",
    "KEYWORDS",
    "DIAGNOSTIC_CODES",
    "LINT_CODES",
]
