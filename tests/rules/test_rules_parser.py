"""Lexical conventions and parsing of rules tables (IBM MQ "DLQ rules table
conventions", "DLQ control data", "DLQ rules (patterns and actions)")."""

from __future__ import annotations

import pytest

from dlqlens.errors import RulesError
from dlqlens.rules import parse, parse_file
from dlqlens.rules.model import PATTERN_KEYWORDS
from dlqlens.rules.parser import read_entries

# IBM MQ "An example DLQ handler rules table" (runmqdlq), its first rules, with its
# comments shortened.
IBM_MULTIPLATFORM = """\
* Control data entry
inputqm(' ') inputq(' ')

* Rules
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)

REASON(MQRC_PUT_INHIBITED) ACTION(RETRY) RETRY(5)

MSGTYPE(MQMT_REQUEST) REPLYQM(AAAA.*) +
  ACTION(FWD) FWDQ(DEADQ) FWDQM(&REPLYQM)

DESTQM(bbbb.1) +
  action(fwd) fwdq(&DESTQ) fwdqm(bbbb.2) header(no)
"""

# IBM MQ "An example DLQ handler rules table on z/OS" (CSQUDLQH), its first rules.
IBM_ZOS = """\
inputqm(' ')  inputq(' ')

REASON(MQRC_NOT_AUTHORIZED) ACTION(FWD) +
FWDQ(DEADQ.MANUAL.SECURITY)

REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)

REASON(MQFB_APPL_CANNOT_BE_STARTED) ACTION(FWD) +
FWDQ(DEADQ.MANUAL.TRIGGER)
"""

# The example rule of "DLQ rules (patterns and actions)" and "Rules (patterns and
# actions) on z/OS".
IBM_SINGLE = """\
PERSIST(MQPER_PERSISTENT) REASON (MQRC_PUT_INHIBITED) +
  ACTION (RETRY) RETRY (3)
"""


def only_rule(text: str):
    table = parse(text)
    assert table.ok, [d.format() for d in table.diagnostics]
    assert len(table.rules) == 1
    return table.rules[0]


def codes(table):
    return [(d.code, d.line, d.column) for d in table.diagnostics]


# --- IBM's examples ---------------------------------------------------------


def test_ibm_multiplatform_example():
    table = parse(IBM_MULTIPLATFORM)
    assert table.errors == ()
    # Only the documented case folding of unquoted lower-case names is noted.
    assert codes(table) == [("case-folded", 12, 8), ("case-folded", 13, 34)]
    assert table.control.inputq == " " and table.control.inputqm == " "
    assert table.control.line == 2
    r1, r2, r3, r4 = table.rules
    assert (r1.index, r1.line, r1.action, r1.retry) == (1, 5, "RETRY", 5)
    assert r1.pattern("REASON").value == 2053
    assert r2.pattern("REASON").value == 2051
    assert (r3.line, r3.action, r3.fwdq, r3.fwdqm, r3.header) == (9, "FWD", "DEADQ", "&REPLYQM", "YES")
    assert r3.pattern("MSGTYPE").value == 1
    assert r3.pattern("REPLYQM").value == "AAAA.*"
    # Unquoted lower case is folded to upper case (IBM conventions).
    assert r4.pattern("DESTQM").value == "BBBB.1"
    assert (r4.action, r4.fwdq, r4.fwdqm, r4.header) == ("FWD", "&DESTQ", "BBBB.2", "NO")


def test_ibm_zos_example():
    table = parse(IBM_ZOS)
    assert table.diagnostics == ()
    assert [r.line for r in table.rules] == [3, 6, 8]
    assert table.rules[0].pattern("REASON").value == 2035
    assert table.rules[0].fwdq == "DEADQ.MANUAL.SECURITY"
    # REASON takes an MQFB_ name in IBM's own z/OS example.
    assert table.rules[2].pattern("REASON").value == 265
    assert table.rules[2].pattern("REASON").symbol == "MQFB_APPL_CANNOT_BE_STARTED"


def test_ibm_single_example_rule():
    rule = only_rule(IBM_SINGLE)
    assert rule.pattern("PERSIST").value == 1
    assert rule.pattern("REASON").value == 2051
    assert (rule.action, rule.retry) == ("RETRY", 3)


# --- continuation -------------------------------------------------------------


def test_plus_continues_from_first_nonblank_of_next_line():
    rule = only_rule("APPLNAME('ABC+\n      D') ACTION(DISCARD)\n")
    assert rule.pattern("APPLNAME").value == "ABCD"


def test_minus_continues_from_start_of_next_line_keeping_blanks():
    rule = only_rule("APPLNAME('ABC-\n   D') ACTION(DISCARD)\n")
    assert rule.pattern("APPLNAME").value == "ABC   D"


def test_minus_at_column_one_joins_directly():
    rule = only_rule("APPLNAME('ABC-\nD') ACTION(DISCARD)\n")
    assert rule.pattern("APPLNAME").value == "ABCD"


def test_continuation_inside_a_keyword():
    rule = only_rule("REA+\n   SON(MQRC_Q_FULL) ACTION(DISCARD)\n")
    assert rule.pattern("REASON").value == 2053


def test_blanks_before_the_continuation_character_are_kept():
    rule = only_rule("APPLNAME('AB  +\n  CD') ACTION(DISCARD)\n")
    assert rule.pattern("APPLNAME").value == "AB  CD"


def test_continuation_over_several_lines_and_positions():
    table = parse("REASON(MQRC_Q_FULL) +\n  ACTION(FWD) -\nFWDQ(X) +\n\n* note\n  HEADER(NO)\n")
    assert table.ok
    rule = table.rules[0]
    assert (rule.fwdq, rule.header) == ("X", "NO")
    assert rule.position("ACTION") == (2, 3)
    assert rule.position("FWDQ") == (3, 1)
    # Blank and comment lines inside a continuation are skipped.
    assert rule.position("HEADER") == (6, 3)


def test_comment_with_trailing_plus_does_not_continue():
    table = parse("* a comment +\nACTION(DISCARD)\n")
    assert table.ok and len(table.rules) == 1 and table.rules[0].line == 2


def test_a_line_of_only_a_continuation_character():
    rule = only_rule("ACTION(FWD) +\n+\n FWDQ(Q1)\n")
    assert rule.fwdq == "Q1"


# --- comments, blanks, separators -------------------------------------------


def test_comments_and_blank_lines_anywhere():
    text = "*\n* first\n\n   * indented comment\nACTION(DISCARD)\n\n*last\n"
    table = parse(text)
    assert table.diagnostics == ()
    assert [r.line for r in table.rules] == [5]


def test_keywords_are_case_insensitive_and_blanks_allowed_around_parentheses():
    rule = only_rule("  reason ( MQRC_Q_FULL )   Action( retry )  retry(2)  \n")
    assert (rule.pattern("REASON").value, rule.action, rule.retry) == (2053, "RETRY", 2)


def test_commas_separate_like_blanks():
    rule = only_rule("REASON(MQRC_Q_FULL),ACTION(FWD),,FWDQ(Q1) , HEADER(YES)\n")
    assert (rule.action, rule.fwdq) == ("FWD", "Q1")


def test_tabs_are_blanks_and_crlf_line_ends():
    table = parse("REASON(MQRC_Q_FULL)\tACTION(RETRY) +\r\n\tRETRY(4)\r\n")
    assert table.diagnostics == ()
    assert table.rules[0].retry == 4


def test_byte_order_mark_is_ignored():
    table = parse("\ufeffACTION(DISCARD)\n")
    assert table.diagnostics == () and table.rules[0].column == 1


# --- values -----------------------------------------------------------------


def test_quoted_values_keep_case_and_blanks():
    rule = only_rule("APPLNAME('my app') USERID('bob') ACTION(DISCARD)\n")
    assert rule.pattern("APPLNAME").value == "my app"
    assert rule.pattern("USERID").value == "bob"


def test_doubled_quote_is_one_character():
    rule = only_rule("APPLIDAT('it''s') ACTION(DISCARD)\n")
    assert rule.pattern("APPLIDAT").value == "it's"
    # 'A''' counts as 2 characters: 12 of them fill USERID exactly.
    only_rule("USERID('''''''''''''''''''''''''') ACTION(DISCARD)\n")


def test_unquoted_values_are_folded_to_upper_case():
    table = parse("DESTQ(app.in) ACTION(DISCARD)\n")
    assert table.rules[0].pattern("DESTQ").value == "APP.IN"
    assert codes(table) == [("case-folded", 1, 7)]


def test_numbers_symbols_and_star_in_integer_patterns():
    rule = only_rule(
        "MSGTYPE(2) PERSIST(MQPER_PERSISTENT) FEEDBACK(mqfb_coa) APPLTYPE('*') "
        "REASON(*) ACTION(DISCARD)\n"
    )
    assert rule.pattern("MSGTYPE").value == 2
    assert rule.pattern("PERSIST").value == 1
    assert rule.pattern("FEEDBACK").value == 259
    assert rule.pattern("APPLTYPE").value is None and rule.pattern("APPLTYPE").is_any
    assert rule.pattern("REASON").is_any


def test_generic_patterns_in_every_string_keyword():
    rule = only_rule(
        "APPLIDAT(A*) APPLNAME(?*) DESTQ(APP.*.IN) DESTQM(QM?) FORMAT(MQ*) "
        "REPLYQ(*) REPLYQM(*.QM) USERID(U?ER) ACTION(DISCARD)\n"
    )
    assert rule.pattern("DESTQ").value == "APP.*.IN"
    assert rule.pattern("REPLYQ").is_any
    assert not rule.pattern("APPLNAME").is_any


def test_field_length_counts_only_non_star_characters():
    # IBM's FORMAT examples: 8 characters, 5 + stars, 8 + stars are valid.
    for value in ("'ABCDEFGH'", "'A*C*E*G*I'", "'*A*C*E*G*I*K*M*O*'"):
        only_rule(f"FORMAT({value}) ACTION(DISCARD)\n")


def test_significant_characters_examples():
    # IBM: FORMAT('ABC'), FORMAT(ABC), FORMAT('A'), FORMAT(A), FORMAT(' ') are valid.
    for value in ("'ABC'", "ABC", "'A'", "A", "' '"):
        only_rule(f"FORMAT({value}) ACTION(DISCARD)\n")
    assert only_rule("FORMAT(' ') ACTION(DISCARD)\n").pattern("FORMAT").value == " "


def test_substitutions():
    rule = only_rule("ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM) REPLYQ(?*)\n")
    assert (rule.fwdq, rule.fwdqm) == ("&REPLYQ", "&REPLYQM")
    rule = only_rule("ACTION(FWD) FWDQ(&destq) FWDQM(&destqm)\n")
    assert (rule.fwdq, rule.fwdqm) == ("&DESTQ", "&DESTQM")


def test_fwdqm_blank_means_local_queue_manager():
    rule = only_rule("ACTION(FWD) FWDQ(Q1) FWDQM(' ')\n")
    assert rule.fwdqm == " "


# --- defaults -----------------------------------------------------------------


def test_defaults_for_every_omitted_keyword():
    table = parse("ACTION(FWD) FWDQ(REALLY.DEAD.QUEUE)\n")
    assert table.diagnostics == ()
    c = table.control
    assert (c.inputq, c.inputqm, c.retryint, c.wait, c.line) == (" ", " ", 60, "YES", None)
    assert c.wait_seconds is None and c.dlq_name is None
    rule = table.rules[0]
    assert rule.patterns == ()
    assert rule.is_catch_all
    assert (rule.fwdqm, rule.header, rule.putaut, rule.retry) == (" ", "YES", "DEF", 1)
    as_json = rule.to_dict()
    for keyword in PATTERN_KEYWORDS:
        assert as_json[keyword] == "*"
    assert as_json["specified"] == ["ACTION", "FWDQ"]


def test_control_data_values():
    table = parse("INPUTQ(MY.DLQ) INPUTQM(QM1) RETRYINT(30) WAIT(NO)\nACTION(DISCARD)\n")
    c = table.control
    assert (c.inputq, c.inputqm, c.retryint, c.wait, c.wait_seconds) == ("MY.DLQ", "QM1", 30, "NO", 0)
    assert c.dlq_name == "MY.DLQ"
    assert parse("WAIT(120)\nACTION(DISCARD)\n").control.wait_seconds == 120
    assert parse("WAIT(yes)\nACTION(DISCARD)\n").control.wait == "YES"


def test_control_data_joined_with_continuation():
    table = parse("INPUTQ(DEAD.LETTER.QUEUE) +\nINPUTQM(QUEUE.MANAGER) +\nRETRYINT(60) +\nWAIT(YES)\nACTION(DISCARD)\n")
    assert table.diagnostics == ()
    assert table.control.inputqm == "QUEUE.MANAGER"
    assert table.rules[0].line == 5


def test_rule_display_round_trips():
    text = (
        "DESTQ('app.in') REASON(MQRC_Q_FULL) APPLNAME('it''s') ACTION(FWD) "
        "FWDQ(&DESTQ) FWDQM(' ') HEADER(NO) PUTAUT(CTX) RETRY(3)\n"
    )
    rule = only_rule(text)
    again = only_rule(rule.display() + "\n")
    assert again.display() == rule.display()
    assert again.to_dict() | {"line": 1} == rule.to_dict() | {"line": 1}


# --- entries and positions --------------------------------------------------


def test_read_entries_positions():
    entries, diags, newline = read_entries("* c\n  REASON(2053)  ACTION( 'FWD' )\n")
    assert newline and diags == []
    (entry,) = entries
    assert (entry.line, entry.column) == (2, 3)
    reason, action = entry.items
    assert (reason.keyword.text, reason.value.text, reason.value.column) == ("REASON", "2053", 10)
    assert (action.value.kind, action.value.text, action.value.column) == ("QUOTED", "FWD", 25)


def test_parse_file_reads_latin1_and_rejects_binary(tmp_path):
    path = tmp_path / "rules.rul"
    path.write_bytes(b"APPLNAME('caf\xe9') ACTION(DISCARD)\n")
    table = parse_file(path)
    assert table.source == str(path)
    assert table.rules[0].pattern("APPLNAME").value == "caf\u00e9"
    binary = tmp_path / "capture.bin"
    binary.write_bytes(b"MD  \x00\x00\x00\x02")
    with pytest.raises(RulesError, match="NUL byte at offset 4"):
        parse_file(binary)
    with pytest.raises(RulesError, match="cannot read rules table"):
        parse_file(tmp_path / "missing.rul")


# --- issue 19: rules tables saved as UTF-16 ------------------------------------------------

UTF16_TABLE = ("* règles de la boutique — 店\r\nREASON(MQRC_Q_FULL) ACTION(RETRY)\r\n"
               "ACTION(FWD) FWDQ(REALLY.DEAD.QUEUE)\r\n")


@pytest.mark.parametrize("codec, bom, what, iconv", [
    ("utf-16-le", b"\xff\xfe", "little-endian, byte-order mark FF FE", "UTF-16"),
    ("utf-16-be", b"\xfe\xff", "big-endian, byte-order mark FE FF", "UTF-16"),
    ("utf-16-le", b"", "little-endian, no byte-order mark", "UTF-16LE"),
    ("utf-16-be", b"", "big-endian, no byte-order mark", "UTF-16BE"),
])
def test_a_utf16_table_is_refused_saying_what_it_is_and_how_to_convert(tmp_path, codec, bom,
                                                                      what, iconv):
    """runmqdlq reads its table as text in the queue manager's code page, so dlqlens does
    not accept a table the handler could not read, even when a BOM makes the encoding
    certain; the error says which UTF-16 and gives the iconv command that converts it."""
    path = tmp_path / "shop.rul"
    path.write_bytes(bom + UTF16_TABLE.encode(codec))
    with pytest.raises(RulesError) as e:
        parse_file(path)
    msg = str(e.value)
    assert msg.startswith(f"{path} is UTF-16 text ({what}), which runmqdlq cannot read")
    assert msg.endswith(f"convert it: iconv -f {iconv} -t UTF-8 {path} > converted.rul")
    # what the command makes is read
    converted = tmp_path / "converted.rul"
    converted.write_bytes((bom + UTF16_TABLE.encode(codec)).decode(
        {"UTF-16": "utf-16", "UTF-16LE": "utf-16-le", "UTF-16BE": "utf-16-be"}[iconv]
    ).encode("utf-8"))
    table = parse_file(converted)
    assert table.ok and len(table.rules) == 2


def test_other_tables_are_not_taken_for_utf16(tmp_path):
    """A UTF-8 BOM is ignored; a UTF-32 BOM (FF FE 00 00) and text with a stray NUL are the
    NUL-byte error, not UTF-16."""
    p = tmp_path / "t.rul"
    p.write_bytes(b"\xef\xbb\xbfACTION(IGNORE)\n")
    assert parse_file(p).rules[0].action == "IGNORE"
    p.write_bytes("ACTION(IGNORE)\n".encode("utf-32"))
    with pytest.raises(RulesError, match="NUL byte at offset 2"):
        parse_file(p)
    p.write_bytes(b"ACTION(IGNORE)\n\x00\n")
    with pytest.raises(RulesError, match="NUL byte at offset 15"):
        parse_file(p)
