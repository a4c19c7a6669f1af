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
    ("shadowing-undecided", "DESTQ('*A?????????') ACTION(DISCARD)\n"
     "DESTQ('*A????????C') ACTION(DISCARD)\n" + CATCH_ALL, 2, 2, 1),
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


# ---------------------------------------------------------------------------
# issue 19: the shadowing check is indexed and bounded (operation counts)
# ---------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import importlib  # noqa: E402

lint_module = importlib.import_module("dlqlens.rules.lint")
from dlqlens.rules.match import COVER_BUDGET, Work  # noqa: E402

ISSUE_TABLE = (  # 148 bytes; ran for minutes before the work budget
    "DESTQ('*A?????????') ACTION(DISCARD)\n"
    "DESTQ('*B?????????') ACTION(DISCARD)\n"
    "DESTQ('*A????????C') ACTION(DISCARD)\n"
    "DESTQ('*?????????A') ACTION(DISCARD)\n"
)


def test_exponential_patterns_are_not_decided_within_the_budget():
    assert len(ISSUE_TABLE) == 148
    work = Work()
    found = lint(parse(ISSUE_TABLE), work=work)
    # 6 pairs at most, each within the per-pair budget
    assert work.rule_pairs <= 6 and work.steps <= 6 * COVER_BUDGET
    (und,) = [f for f in found if f.code == "shadowing-undecided"]
    assert und.rule_index == 3 and und.related == (1,) and "not decided" in und.message
    # the other pairs are refuted exactly (a field of the later rule the earlier misses)
    assert not [f for f in found if f.code == "shadowed-rule"]


def _distinct_rules(n: int, shape: str) -> str:
    out = []
    for i in range(n):
        if shape == "prefix":
            out.append(f"DESTQ('APP.Q{i}.*') REASON({2000 + i % 50}) ACTION(FWD) FWDQ(X{i})")
        elif shape == "suffix":
            out.append(f"DESTQ('*.IN{i}') APPLNAME('?*') ACTION(DISCARD)")
        elif shape == "exact":
            out.append(f"DESTQ(Q{i}) DESTQM('QM{i % 7}*') ACTION(DISCARD)")
        else:  # integers only, most of them shadowed by an earlier one
            out.append(f"REASON({2000 + i % 50}) PERSIST({i % 2}) ACTION(DISCARD)")
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("shape", ["prefix", "suffix", "exact", "integers"])
def test_shadowing_work_grows_linearly_with_distinct_rules(shape):
    # was: every pair compared (1,000 rules: 500,000 containment searches, 52 s)
    counts = {}
    for n in (250, 1000):
        work = Work()
        lint(parse(_distinct_rules(n, shape)), work=work)
        counts[n] = work
    small, big = counts[250], counts[1000]
    assert big.rule_pairs <= 2 * 1000, big.as_dict()  # not 1000 * 999 / 2
    assert big.index_visits <= 2 * 1000 + 4 * small.index_visits, big.as_dict()
    assert big.steps <= 6 * small.steps + 4 * COVER_BUDGET, (small.as_dict(), big.as_dict())


def test_shadowing_stops_at_the_table_budget(monkeypatch):
    monkeypatch.setattr(lint_module, "SHADOW_BUDGET_BASE", 3 * COVER_BUDGET)
    monkeypatch.setattr(lint_module, "SHADOW_BUDGET_PER_RULE", 0)
    text = "".join(f"DESTQ('*A?????????') USERID('U{i}*') ACTION(DISCARD)\n"
                   for i in range(40)).replace("U0*", "*")
    work = Work()
    found = lint(parse(text), work=work)
    # stops after the pair that crossed the budget, not after 40 * 39 / 2 pairs
    assert work.steps + work.index_visits <= 4 * COVER_BUDGET + 1000
    stop = [f for f in found if f.code == "shadowing-undecided" and "budget" in f.message
            and "were not (all) checked" in f.message]
    assert len(stop) == 1 and f"to 40" in stop[0].message


_PAT = st.text(alphabet="AB*?", min_size=1, max_size=4)


@st.composite
def _tables(draw):
    rules = []
    for _ in range(draw(st.integers(2, 7))):
        parts = []
        for kw in ("DESTQ", "USERID"):
            if draw(st.booleans()):
                parts.append(f"{kw}('{draw(_PAT)}')")
        if draw(st.booleans()):
            parts.append(f"REASON({draw(st.sampled_from([2053, 2035]))})")
        rules.append(" ".join(parts + ["ACTION(DISCARD)"]))
    return "\n".join(rules) + "\n"


@settings(max_examples=200, deadline=None)
@given(text=_tables())
def test_indexed_shadowing_finds_what_comparing_every_pair_finds(text):
    table = parse(text)
    rules = table.rules
    want = []
    for pos, later in enumerate(rules):
        for earlier in rules[:pos]:
            if rule_covers(earlier, later):
                want.append((later.index, (earlier.index,)))
                break
    got = [(f.rule_index, f.related) for f in lint(table) if f.code == "shadowed-rule"]
    assert got == want
