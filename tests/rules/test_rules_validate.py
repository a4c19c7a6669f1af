"""The handler's start-up checks: every diagnostic code, its severity and
position (IBM MQ "DLQ rules table conventions", "DLQ control data", "DLQ rules
(patterns and actions)"; the response codes of IBM's sample handler amqsdlq)."""

from __future__ import annotations

import pytest

from dlqlens.rules import DIAGNOSTIC_CODES, parse

# (code, table text, line, column of the diagnostic, words the message must name)
CASES = [
    ("syntax", "APPLNAME('ABC) ACTION(DISCARD)\n", 1, 10, ["not closed"]),
    ("syntax", "REASON(2053 ACTION(DISCARD)\n", 1, 19, ["unexpected '('"]),
    ("syntax", "ACTION(DISCARD\n", 1, 7, ["no closing ')'"]),
    ("syntax", "APPLNAME(my app) ACTION(DISCARD)\n", 1, 13, ["single quotes"]),
    ("syntax", "(X) ACTION(DISCARD)\n", 1, 1, ["without a keyword"]),
    ("syntax", "ACTION(DISCARD) 'X'\n", 1, 17, ["expected a keyword"]),
    ("syntax", "ACTION(DISCARD) )\n", 1, 17, ["unexpected ')'"]),
    ("unknown-keyword", "REASON(2085) DISCARD\n", 1, 14, ["DISCARD", "ACTION(DISCARD)"]),
    ("unknown-keyword", "ACTION(FWD) FWDQ(Q) HEADR(NO)\n", 1, 21, ["HEADR", "HEADER"]),
    ("missing-value", "FORMAT ACTION(DISCARD)\n", 1, 1, ["FORMAT", "no value"]),
    ("missing-value", "FORMAT() ACTION(DISCARD)\n", 1, 1, ["empty value"]),
    ("missing-value", "FORMAT( ) ACTION(DISCARD)\n", 1, 1, ["empty value"]),
    ("missing-value", "FORMAT('') ACTION(DISCARD)\n", 1, 8, ["no significant character"]),
    ("invalid-value", "ACTION(MOVE)\n", 1, 8, ["ACTION(MOVE)", "DISCARD|IGNORE|RETRY|FWD"]),
    ("invalid-value", "ACTION(FORWARD) FWDQ(Q)\n", 1, 8, ["ACTION(FWD)"]),
    ("invalid-value", "ACTION('fwd') FWDQ(Q)\n", 1, 8, ["keeps its case"]),
    ("invalid-value", "ACTION(FWD) FWDQ(Q) HEADER(MAYBE)\n", 1, 28, ["YES|NO"]),
    ("invalid-value", "ACTION(FWD) FWDQ(Q) PUTAUT(OWN)\n", 1, 28, ["DEF|CTX"]),
    ("invalid-value", "ACTION(FWD) FWDQ(DEAD.*)\n", 1, 18, ["wildcard"]),
    ("invalid-value", "ACTION(FWD) FWDQ(' ')\n", 1, 18, ["FWDQ(' ') is not valid"]),
    ("invalid-value", "ACTION(FWD) FWDQ(&DESTQM)\n", 1, 18, ["&DESTQ or &REPLYQ"]),
    ("invalid-value", "MSGTYPE('2*') ACTION(DISCARD)\n", 1, 9, ["part of a number"]),
    ("invalid-value", "REASON(Q_FULL?) ACTION(DISCARD)\n", 1, 8, ["part of a number"]),
    ("invalid-value", "REASON(1E3) ACTION(DISCARD)\n", 1, 8, ["not valid"]),
    ("invalid-value", "ACTION(RETRY) RETRY(*)\n", 1, 21, ["RETRY(*)"]),
    ("invalid-value", "WAIT(SOMETIMES)\nACTION(DISCARD)\n", 1, 6, ["WAIT(YES)"]),
    ("needs-quotes", "APPLNAME(my-app) ACTION(DISCARD)\n", 1, 10, ["'-'", "single quotes"]),
    ("value-too-long", "FORMAT(ABCDEFGHI) ACTION(DISCARD)\n", 1, 8, ["9 characters", "holds 8"]),
    ("value-too-long", "FORMAT(MQFMT_STRING) ACTION(DISCARD)\n", 1, 8, ["FORMAT(MQSTR)"]),
    ("value-too-long", "USERID('''''''''''''''''''''''''''') ACTION(DISCARD)\n", 1, 8, ["13 characters"]),
    ("value-too-long", "ACTION(FWD) FWDQ(" + "Q" * 49 + ")\n", 1, 18, ["49 characters"]),
    ("value-out-of-range", "REASON(1000000000) ACTION(DISCARD)\n", 1, 8, ["0 - 999 999 999"]),
    ("value-out-of-range", "REASON(-1) ACTION(DISCARD)\n", 1, 8, ["outside the range"]),
    ("value-out-of-range", "ACTION(RETRY) RETRY(0)\n", 1, 21, ["1 - 999 999 999"]),
    ("value-out-of-range", "WAIT(1000000000)\nACTION(DISCARD)\n", 1, 6, ["seconds"]),
    ("unknown-symbol", "REASON(MQRC_Q_FUL) ACTION(DISCARD)\n", 1, 8, ["MQRC_Q_FULL"]),
    ("duplicate-keyword", "REASON(2053) ACTION(RETRY) reason(2051)\n", 1, 28, ["REASON", "column 1"]),
    ("duplicate-keyword", "RETRYINT(5) RETRYINT(6)\nACTION(DISCARD)\n", 1, 13, ["RETRYINT"]),
    ("missing-action", "REASON(MQRC_Q_FULL) RETRY(5)\n", 1, 1, ["no ACTION"]),
    ("missing-action", "INPUTQM(QM1)\nRETRY(3)\n", 2, 1, ["RETRYINT"]),
    ("missing-fwdq", "REASON(2053) ACTION(FWD)\n", 1, 14, ["FWDQ"]),
    ("control-not-first", "ACTION(DISCARD)\nINPUTQ(DLQ)\n", 2, 1, ["first entry"]),
    ("control-not-first", "ACTION(DISCARD)\nWAIT(NO) ACTION(IGNORE)\n", 2, 1, ["WAIT"]),
    ("mixed-entry", "INPUTQ(DLQ) ACTION(DISCARD)\n", 1, 1, ["INPUTQ"]),
    ("empty-table", "* only comments\n\n", 1, 1, ["no rule"]),
    ("empty-table", "INPUTQ(DLQ) WAIT(NO)\n", 1, 1, ["no rule"]),
    ("invalid-combination", "ACTION(RETRY) HEADER(NO)\n", 1, 15, ["HEADER", "ACTION(FWD)"]),
    ("invalid-combination", "ACTION(DISCARD) FWDQ(X)\n", 1, 17, ["FWDQ"]),
    ("invalid-combination", "ACTION(IGNORE) PUTAUT(CTX)\n", 1, 16, ["nothing is put"]),
    ("invalid-combination", "ACTION(IGNORE) RETRY(3)\n", 1, 16, ["never counts"]),
    ("unexpected-symbol-kind", "PERSIST(MQMT_REQUEST) ACTION(DISCARD)\n", 1, 9, ["MQPER_*"]),
    ("invalid-name", "ACTION(FWD) FWDQ('MY Q')\n", 1, 18, ["not a valid MQ name"]),
    ("case-folded", "DESTQM(bbbb.1) ACTION(DISCARD)\n", 1, 8, ["BBBB.1"]),
    ("missing-separator", "ACTION(FWD)FWDQ(Q)\n", 1, 12, ["FWDQ"]),
    ("missing-separator", "ACTION(FWD)+\nFWDQ(Q)\n", 2, 1, ["FWDQ"]),
    ("line-too-long", "ACTION(FWD) FWDQ(" + "A" * 48 + ")      HEADER(YES)\n", 1, 73, ["72"]),
    ("dangling-continuation", "ACTION(DISCARD) +\n", 1, 17, ["continuation"]),
    ("no-final-newline", "ACTION(DISCARD)", 1, 1, ["Windows"]),
]


@pytest.mark.parametrize(
    "code,text,line,column,words", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_diagnostic(code, text, line, column, words):
    table = parse(text)
    found = [d for d in table.diagnostics if d.code == code]
    assert found, [d.format() for d in table.diagnostics]
    diag = found[0]
    assert (diag.line, diag.column) == (line, column), diag.format()
    assert diag.severity == DIAGNOSTIC_CODES[code].severity
    for word in words:
        assert word in diag.message, diag.message
    assert table.ok is not any(d.severity == "error" for d in table.diagnostics)


def test_every_code_is_exercised():
    assert {case[0] for case in CASES} == set(DIAGNOSTIC_CODES)


def test_severities():
    errors = {c for c, info in DIAGNOSTIC_CODES.items() if info.severity == "error"}
    assert errors == {
        "syntax", "unknown-keyword", "missing-value", "invalid-value", "needs-quotes",
        "value-too-long", "value-out-of-range", "unknown-symbol", "duplicate-keyword",
        "missing-action", "missing-fwdq", "control-not-first", "mixed-entry", "empty-table",
    }
    assert all(info.severity in ("error", "warning") for info in DIAGNOSTIC_CODES.values())


def test_clean_table_has_no_diagnostics():
    table = parse("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\nACTION(FWD) FWDQ(DEADQ)\n")
    assert table.diagnostics == () and table.ok


def test_found_and_expected_are_filled_in():
    (diag,) = parse("REASON(1000000000) ACTION(DISCARD)\n").diagnostics
    assert diag.found == "1000000000"
    assert diag.expected == "0 - 999999999"
    assert diag.rule_index == 1
    assert diag.format("t.rul").startswith("t.rul:1:8: error value-out-of-range: ")


def test_a_table_with_errors_still_yields_every_rule():
    text = (
        "REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\n"
        "REASON(MQRC_NOPE) ACTION(FWD) FWDQ(X)\n"
        "DESTQ(APP.*) PUT(X)\n"
        "ACTION(FWD) FWDQ(REALLY.DEAD.QUEUE)\n"
    )
    table = parse(text)
    assert not table.ok
    assert [r.index for r in table.rules] == [1, 2, 3, 4]
    assert [r.line for r in table.rules] == [1, 2, 3, 4]
    # The invalid REASON is dropped, the rest of rule 2 kept.
    assert table.rules[1].pattern("REASON") is None
    assert (table.rules[1].action, table.rules[1].fwdq) == ("FWD", "X")
    assert table.rules[2].action is None
    assert table.rules[2].pattern("DESTQ").value == "APP.*"
    assert sorted({d.rule_index for d in table.errors}) == [2, 3]


def test_all_problems_of_one_entry_are_reported():
    table = parse("REASON(2085) DISCARD PUT(Q) FORMAT(ABCDEFGHIJ)\n")
    assert [(d.code, d.column) for d in table.diagnostics] == [
        ("missing-action", 1),
        ("unknown-keyword", 14),
        ("unknown-keyword", 22),
        ("value-too-long", 36),
    ]


def test_unknown_symbol_message_comes_from_constants():
    (diag,) = parse("REASON(MQRC_Q_FUL) ACTION(DISCARD)\n").diagnostics
    assert "did you mean MQRC_Q_FULL" in diag.message


def test_misplaced_control_entry_does_not_count_as_rule_or_control():
    table = parse("INPUTQ(A)\nACTION(DISCARD)\nINPUTQM(QM9)\n")
    assert table.control.inputq == "A" and table.control.inputqm == " "
    assert len(table.rules) == 1
    assert [d.code for d in table.diagnostics] == ["control-not-first"]


@pytest.mark.parametrize(
    "text",
    [
        "APPLNAME(my app) ACTION(DISCARD)\n",
        "ACTION(DISCARD\n",
        "APPLNAME('ABC) ACTION(DISCARD)\n",
        "REASON(2053 ACTION(DISCARD)\n",
    ],
)
def test_one_syntax_error_gives_one_diagnostic(text):
    table = parse(text)
    assert [d.code for d in table.diagnostics] == ["syntax"]
    assert table.diagnostics[0].rule_index == 1


def test_warnings_alone_keep_the_table_valid():
    table = parse("DESTQ(app.*) ACTION(DISCARD)")
    assert [d.code for d in table.diagnostics] == ["no-final-newline", "case-folded"]
    assert table.ok and table.errors == ()
