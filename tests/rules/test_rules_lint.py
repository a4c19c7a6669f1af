"""Auditor findings (lint): every code, positive and negative cases."""

from __future__ import annotations

import pytest

from dlqlens.mq import constants
from dlqlens.rules import LINT_CODES, lint, parse
from dlqlens.rules.lint import rule_covers

CATCH_ALL = "ACTION(FWD) FWDQ(REALLY.DEAD.QUEUE) HEADER(YES)\n"


def findings(text: str, dlq_name: str | None = None):
    table = parse(text)
    assert table.ok, [d.format() for d in table.diagnostics]
    return lint(table, dlq_name=dlq_name)


def found(text: str, code: str, dlq_name: str | None = None):
    return [f for f in findings(text, dlq_name) if f.code == code]


# (code, table, rule_index, line, column) — one positive case per code.
POSITIVE = [
    ("no-catch-all", "REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\n", 1, 1, 1),
    ("ignore-action", "MSGTYPE(8) ACTION(IGNORE)\n" + CATCH_ALL, 1, 1, 12),
    ("shadowed-rule", CATCH_ALL + "REASON(MQRC_Q_FULL) ACTION(DISCARD)\n", 2, 2, 1),
    ("fwdq-loop", "INPUTQ(MY.DLQ)\nACTION(FWD) FWDQ(MY.DLQ)\n", 1, 2, 13),
    ("fwdq-possible-loop", "ACTION(FWD) FWDQ(SYSTEM.DEAD.LETTER.QUEUE)\n", 1, 1, 13),
    ("replyq-blank", "ACTION(FWD) FWDQ(&REPLYQ)\n", 1, 1, 13),
    ("retry-not-curable", "REASON(MQRC_UNKNOWN_OBJECT_Q_MGR) ACTION(RETRY) RETRY(3)\n" + CATCH_ALL, 1, 1, 1),
    ("retry-unproven", "REASON(MQRC_UNKNOWN_OBJECT_NAME) ACTION(RETRY)\n" + CATCH_ALL, 1, 1, 1),
    ("retry-any-reason", "ACTION(RETRY) RETRY(2)\n" + CATCH_ALL, 1, 1, 1),
    ("header-no", "REASON(2051) ACTION(FWD) FWDQ(Q) HEADER(NO)\n" + CATCH_ALL, 1, 1, 34),
]


@pytest.mark.parametrize("code,text,rule_index,line,column", POSITIVE, ids=[p[0] for p in POSITIVE])
def test_positive(code, text, rule_index, line, column):
    hits = found(text, code)
    assert len(hits) == 1, [f.format() for f in findings(text)]
    hit = hits[0]
    assert (hit.rule_index, hit.line, hit.column) == (rule_index, line, column)
    assert hit.severity == LINT_CODES[code].severity
    assert hit.format("t.rul").startswith(f"t.rul:{line}:{column}: {hit.severity} {code}: ")


def test_every_code_has_a_positive_case():
    # Capture codes (unreached-rule) are tested in tests/rules/test_rules_replay_spark.py
    # and test_rules_process.py.
    from dlqlens.rules.lint import CAPTURE_CODES

    assert {p[0] for p in POSITIVE} == set(LINT_CODES) - CAPTURE_CODES


def test_a_good_table_is_clean():
    text = (
        "INPUTQ(SYSTEM.DEAD.LETTER.QUEUE)\n"
        "REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\n"
        "REASON(MQRC_PUT_INHIBITED) ACTION(RETRY) RETRY(5)\n"
        "REPLYQ(?*) ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM)\n"
        "ACTION(FWD) FWDQ(DEADQ.MANUAL) HEADER(YES)\n"
    )
    assert findings(text) == []


# --- catch-all ----------------------------------------------------------------


def test_catch_all_by_discard_counts():
    assert found("REASON(2053) ACTION(RETRY)\nACTION(DISCARD)\n", "no-catch-all") == []


def test_catch_all_with_explicit_stars_counts():
    text = "DESTQ(*) REASON(*) MSGTYPE('*') ACTION(FWD) FWDQ(X)\n"
    assert found(text, "no-catch-all") == []


def test_catch_all_with_ignore_or_retry_does_not_count():
    (hit,) = found("ACTION(IGNORE)\n", "no-catch-all")
    assert "ACTION(IGNORE) leaves it on the DLQ" in hit.message
    (hit,) = found("ACTION(RETRY) RETRY(3)\n", "no-catch-all")
    assert "falls through after 3 failed attempt(s)" in hit.message


def test_near_catch_all_does_not_count():
    # '?*' does not match a blank field, so this is not a catch-all.
    assert found("DESTQ(?*) ACTION(FWD) FWDQ(X)\n", "no-catch-all")


def test_earlier_catch_all_is_enough():
    text = CATCH_ALL + "REASON(2053) ACTION(RETRY)\n"
    assert found(text, "no-catch-all") == []
    assert [f.rule_index for f in found(text, "shadowed-rule")] == [2]


# --- shadowing ----------------------------------------------------------------

SHADOWED = [
    # earlier, later
    ("DESTQ(APP.*) ACTION(DISCARD)", "DESTQ(APP.IN) ACTION(FWD) FWDQ(X)"),
    ("DESTQ(APP.*) ACTION(DISCARD)", "DESTQ(APP.*.IN) REASON(2053) ACTION(FWD) FWDQ(X)"),
    ("REASON(MQRC_Q_FULL) ACTION(RETRY)", "REASON(2053) PERSIST(1) ACTION(DISCARD)"),
    ("DESTQ(*) ACTION(IGNORE)", "DESTQ(A*) ACTION(DISCARD)"),
    ("REPLYQ(?*) ACTION(FWD) FWDQ(&REPLYQ)", "REPLYQ(A*) ACTION(DISCARD)"),
    ("FORMAT(MQ?TR) ACTION(DISCARD)", "FORMAT(MQSTR) USERID(BOB) ACTION(DISCARD)"),
    ("APPLNAME(*) ACTION(DISCARD)", "ACTION(FWD) FWDQ(X)"),
]

NOT_SHADOWED = [
    ("DESTQ(APP.IN) ACTION(DISCARD)", "DESTQ(APP.*) ACTION(FWD) FWDQ(X)"),
    ("REASON(2053) ACTION(DISCARD)", "REASON(2051) ACTION(DISCARD)"),
    ("REASON(2053) ACTION(DISCARD)", "ACTION(FWD) FWDQ(X)"),
    ("DESTQ(?*) ACTION(DISCARD)", "ACTION(FWD) FWDQ(X)"),  # blank DestQName
    ("DESTQ(APP.?N) ACTION(DISCARD)", "DESTQ(APP.*N) ACTION(DISCARD)"),
    ("DESTQ(A*) REASON(2053) ACTION(DISCARD)", "DESTQ(AB*) ACTION(DISCARD)"),
    ("DESTQ('app.in') ACTION(DISCARD)", "DESTQ(APP.IN) ACTION(DISCARD)"),  # case
]


@pytest.mark.parametrize("earlier,later", SHADOWED)
def test_shadowed(earlier, later):
    table = parse(f"{earlier}\n{later}\n")
    assert rule_covers(table.rules[0], table.rules[1])
    hits = [f for f in lint(table) if f.code == "shadowed-rule"]
    assert [(f.rule_index, f.related) for f in hits] == [(2, (1,))]
    assert "rule 1" in hits[0].reasoning and "rule 2" in hits[0].reasoning


@pytest.mark.parametrize("earlier,later", NOT_SHADOWED)
def test_not_shadowed(earlier, later):
    table = parse(f"{earlier}\n{later}\n")
    assert not rule_covers(table.rules[0], table.rules[1])
    assert [f for f in lint(table) if f.code == "shadowed-rule"] == []


def test_identical_rules_shadow_each_other_only_forwards():
    table = parse("REASON(2053) ACTION(RETRY)\nREASON(2053) ACTION(RETRY)\n")
    assert rule_covers(table.rules[0], table.rules[1])
    assert [f.rule_index for f in lint(table) if f.code == "shadowed-rule"] == [2]


def test_shadow_message_depends_on_the_earlier_action():
    (hit,) = found("ACTION(IGNORE)\nREASON(2053) ACTION(FWD) FWDQ(X)\n", "shadowed-rule")
    assert "can never be used" in hit.message and "ACTION(IGNORE)" in hit.message
    (hit,) = found("ACTION(DISCARD)\nREASON(2053) ACTION(FWD) FWDQ(X)\n", "shadowed-rule")
    assert "can never be used" in hit.message and "discards it" in hit.message
    (hit,) = found("REASON(2053) ACTION(RETRY) RETRY(5)\nREASON(2053) ACTION(FWD) FWDQ(X)\n", "shadowed-rule")
    assert "never the first match" in hit.message and "5 attempt(s)" in hit.message


def test_first_covering_rule_is_named():
    text = "DESTQ(A*) ACTION(RETRY)\nDESTQ(AB*) ACTION(RETRY)\nDESTQ(ABC) ACTION(DISCARD)\n"
    hits = found(text, "shadowed-rule")
    assert [(f.rule_index, f.related) for f in hits] == [(2, (1,)), (3, (1,))]


# --- loops --------------------------------------------------------------------


def test_loop_by_dlq_argument_overrides_inputq():
    text = "INPUTQ(OTHER)\nACTION(FWD) FWDQ(MY.DLQ)\n"
    assert found(text, "fwdq-loop") == []
    (hit,) = found(text, "fwdq-loop", dlq_name="MY.DLQ")
    assert "MY.DLQ" in hit.message and "without end" in hit.message


def test_loop_with_header_no_explains_the_stuck_copy():
    text = "INPUTQ(MY.DLQ)\nACTION(FWD) FWDQ(MY.DLQ) HEADER(NO)\n"
    (hit,) = found(text, "fwdq-loop")
    assert "no MQDLH" in hit.message


def test_no_loop_to_another_queue_manager():
    assert found("INPUTQ(MY.DLQ)\nACTION(FWD) FWDQ(MY.DLQ) FWDQM(QM2)\n", "fwdq-loop") == []
    text = "INPUTQ(MY.DLQ) INPUTQM(QM1)\nACTION(FWD) FWDQ(MY.DLQ) FWDQM(QM1)\n"
    assert len(found(text, "fwdq-loop")) == 1


def test_possible_loop_only_when_dlq_unknown():
    text = "ACTION(FWD) FWDQ(SYSTEM.DEAD.LETTER.QUEUE)\n"
    assert found(text, "fwdq-possible-loop", dlq_name="APP.DLQ") == []
    assert found(text, "fwdq-loop", dlq_name="APP.DLQ") == []
    assert len(found(text, "fwdq-loop", dlq_name="SYSTEM.DEAD.LETTER.QUEUE")) == 1


# --- &REPLYQ ------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["", "REPLYQ(*)", "REPLYQ(' ')", "REPLYQ(*.REPLY*)"])
def test_replyq_blank_positive(pattern):
    hits = found(f"{pattern} ACTION(FWD) FWDQ(&REPLYQ)\n", "replyq-blank")
    if pattern == "REPLYQ(*.REPLY*)":
        assert hits == []  # needs a '.', so a blank ReplyToQ cannot match
    else:
        assert len(hits) == 1 and "REPLYQ(?*)" in hits[0].message


@pytest.mark.parametrize("pattern", ["REPLYQ(?*)", "REPLYQ(APP.*)", "REPLYQ(*?)"])
def test_replyq_blank_negative(pattern):
    assert found(f"{pattern} ACTION(FWD) FWDQ(&REPLYQ)\n", "replyq-blank") == []


# --- RETRY --------------------------------------------------------------------


def test_retry_not_curable_shows_the_reasoning():
    (hit,) = found("REASON(2086) ACTION(RETRY)\n" + CATCH_ALL, "retry-not-curable")
    assert "MQRC_UNKNOWN_OBJECT_Q_MGR (2086)" in hit.message
    assert hit.reasoning == constants.RETRY_REASONING[2086]
    assert hit.reasoning in hit.message


@pytest.mark.parametrize("reason", sorted(constants.RETRYABLE_REASONS))
def test_retry_on_retryable_reasons_is_fine(reason):
    text = f"REASON({reason}) ACTION(RETRY) RETRY(5)\n" + CATCH_ALL
    assert [f for f in findings(text) if f.code.startswith("retry")] == []


def test_retry_rules_only():
    text = "REASON(2086) ACTION(FWD) FWDQ(X)\nACTION(DISCARD)\n"
    assert [f for f in findings(text) if f.code.startswith("retry")] == []


# --- HEADER(NO), IGNORE -------------------------------------------------------


def test_header_yes_is_fine():
    assert found("ACTION(FWD) FWDQ(Q) HEADER(YES)\n", "header-no") == []
    assert found("ACTION(FWD) FWDQ(Q)\n", "header-no") == []


def test_every_ignore_rule_is_reported():
    text = "REASON(2053) ACTION(IGNORE)\nREASON(2051) ACTION(IGNORE)\n" + CATCH_ALL
    assert [f.rule_index for f in found(text, "ignore-action")] == [1, 2]


# --- tables with errors -------------------------------------------------------


def test_rules_with_errors_are_skipped():
    # Rule 1's DESTQ is unreadable; without it, it would look like a catch-all
    # that shadows rule 2.
    table = parse("DESTQ(my queue) ACTION(DISCARD)\nREASON(2053) ACTION(IGNORE)\n")
    assert not table.ok
    codes = [(f.code, f.rule_index) for f in lint(table)]
    assert ("shadowed-rule", 2) not in codes
    assert ("ignore-action", 2) in codes
    assert ("no-catch-all", 2) in codes


def test_findings_are_in_file_order():
    text = "ACTION(FWD) FWDQ(&REPLYQ) HEADER(NO)\nACTION(IGNORE)\n"
    lines = [(f.line, f.column) for f in findings(text)]
    assert lines == sorted(lines)
