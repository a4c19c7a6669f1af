"""Rules evaluated on plain dicts of MQ field values: IBM MQ "DLQ rules (patterns and
actions)", the rule selection of IBM's sample handler amqsdlq, and a worked example."""

from __future__ import annotations

import dataclasses

import pytest

from dlqlens.rules import KEYWORDS, parse
from dlqlens.rules.handler import select_rule, target
from dlqlens.rules.model import PATTERN_KEYWORDS

# The worked example: a queue-full message for APP.IN on QM1 against IBM's "An example
# DLQ handler rules table" (MQMD + MQDLH fields as MQ names them).
MESSAGE = {
    "md.MsgType": 8,
    "md.Persistence": 1,
    "md.ReplyToQ": "",
    "md.ReplyToQMgr": "QM2",
    "md.UserIdentifier": "appuser",
    "md.PutApplName": "amqsput",
    "md.PutApplType": 6,
    "md.Feedback": 0,
    "md.ApplIdentityData": "",
    "dlh.Reason": 2053,
    "dlh.DestQName": "APP.IN",
    "dlh.DestQMgrName": "QM1",
    "dlh.Format": "MQSTR",
}

IBM_TABLE = """\
inputqm(' ') inputq(' ')
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)
REASON(MQRC_PUT_INHIBITED) ACTION(RETRY) RETRY(5)
MSGTYPE(MQMT_REQUEST) REPLYQM(AAAA.*) +
  ACTION(FWD) FWDQ(DEADQ) FWDQM(&REPLYQM)
DESTQM(bbbb.1) +
  action(fwd) fwdq(&DESTQ) fwdqm(bbbb.2) header(no)
"""


def msg(**changes):
    out = dict(MESSAGE)
    for key, value in changes.items():
        out[key.replace("_", ".", 1)] = value
    return out


def test_keyword_field_map_uses_mq_field_names():
    fields = {k: KEYWORDS[k].field for k in PATTERN_KEYWORDS}
    assert fields == {
        "APPLIDAT": "md.ApplIdentityData",
        "DESTQ": "dlh.DestQName",
        "DESTQM": "dlh.DestQMgrName",
        "FORMAT": "dlh.Format",
        "APPLNAME": "md.PutApplName",
        "REPLYQ": "md.ReplyToQ",
        "REPLYQM": "md.ReplyToQMgr",
        "USERID": "md.UserIdentifier",
        "APPLTYPE": "md.PutApplType",
        "FEEDBACK": "md.Feedback",
        "MSGTYPE": "md.MsgType",
        "REASON": "dlh.Reason",
        "PERSIST": "md.Persistence",
    }
    assert {k: KEYWORDS[k].length for k in PATTERN_KEYWORDS if KEYWORDS[k].kind == "string"} == {
        "APPLIDAT": 32, "DESTQ": 48, "DESTQM": 48, "FORMAT": 8,
        "APPLNAME": 28, "REPLYQ": 48, "REPLYQM": 48, "USERID": 12,
    }
    assert len(KEYWORDS) == 23


def test_worked_example_first_attempt_and_later_attempts():
    table = parse(IBM_TABLE)
    first = select_rule(table, MESSAGE)
    assert first is table.rules[0]
    assert target(first, MESSAGE) == ("APP.IN", "QM1")
    assert table.first_match(MESSAGE) is table.rules[0]
    # attempts 0-4 use rule 1; at 5 nothing else matches: stays on the DLQ.
    assert all(select_rule(table, MESSAGE, k) is table.rules[0] for k in range(5))
    assert select_rule(table, MESSAGE, 5) is None
    # The fourth rule matches only if DESTQM were BBBB.1 (folded).
    other = msg(dlh_DestQMgrName="BBBB.1")
    assert select_rule(table, other, 5) is table.rules[3]
    assert target(table.rules[3], other) == ("APP.IN", "BBBB.2")
    assert select_rule(table, msg(dlh_DestQMgrName="bbbb.1"), 5) is None


def test_selection_algorithm_of_the_sample():
    table = parse("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\nACTION(FWD) FWDQ(X)\n")
    picks = [select_rule(table, MESSAGE, k) for k in range(8)]
    assert [p.index if p else None for p in picks] == [1, 1, 1, 1, 1, 2, None, None]


def test_ignore_is_taken_at_once_without_counting():
    table = parse("ACTION(IGNORE)\nACTION(FWD) FWDQ(X)\n")
    assert all(select_rule(table, MESSAGE, k).index == 1 for k in range(4))


def test_rules_without_action_are_not_selected():
    table = parse("REASON(2053)\nACTION(DISCARD)\n")
    assert not table.ok
    assert select_rule(table, MESSAGE).index == 2
    assert table.first_match(MESSAGE).index == 2


def test_fwd_target_substitutions():
    table = parse(
        "REPLYQ(?*) ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM)\n"
        "ACTION(FWD) FWDQ(DEADQ)\n"
        "ACTION(DISCARD)\n"
    )
    replying = msg(md_ReplyToQ="REPLY.Q" + " " * 41, md_ReplyToQMgr=b"QM2" + b" " * 45)
    assert table.rules[0].matches(replying)
    assert target(table.rules[0], replying) == ("REPLY.Q", "QM2")
    assert not table.rules[0].matches(MESSAGE)  # blank ReplyToQ
    assert target(table.rules[1], MESSAGE) == ("DEADQ", "")
    assert target(table.rules[2], MESSAGE) is None


@pytest.mark.parametrize(
    "rule,expected",
    [
        ("DESTQ(APP.*) ACTION(DISCARD)", True),
        ("DESTQ(APP.?N) DESTQM(QM1) ACTION(DISCARD)", True),
        ("DESTQ('app.in') ACTION(DISCARD)", False),
        ("FORMAT(MQSTR) USERID(appuser) ACTION(DISCARD)", False),  # folded to APPUSER
        ("FORMAT(MQSTR) USERID('appuser') ACTION(DISCARD)", True),
        ("MSGTYPE(MQMT_DATAGRAM) PERSIST(MQPER_PERSISTENT) ACTION(DISCARD)", True),
        ("MSGTYPE(MQMT_REQUEST) ACTION(DISCARD)", False),
        ("APPLTYPE(6) APPLNAME(amq*) ACTION(DISCARD)", False),
        ("APPLTYPE(6) APPLNAME('amq*') FEEDBACK(MQFB_NONE) ACTION(DISCARD)", True),
        ("REPLYQ(' ') REPLYQM(QM?) ACTION(DISCARD)", True),
        ("APPLIDAT(?*) ACTION(DISCARD)", False),
        ("REASON(2051) ACTION(DISCARD)", False),
    ],
)
def test_rule_matches_plain_dict(rule, expected):
    table = parse(rule + "\n")
    assert table.rules[0].matches(MESSAGE) is expected


def test_only_the_fields_a_rule_tests_are_needed():
    rule = parse("REASON(2053) DESTQ(*) ACTION(DISCARD)\n").rules[0]
    assert rule.matches({"dlh.Reason": 2053})
    with pytest.raises(KeyError, match="dlh.DestQMgrName"):
        parse("DESTQM(QM1) ACTION(DISCARD)\n").rules[0].matches({"dlh.Reason": 2053})


def test_none_field_never_matches_a_specific_pattern():
    rule = parse("DESTQM(QM1) ACTION(DISCARD)\n").rules[0]
    assert not rule.matches({"dlh.DestQMgrName": None})
    assert parse("DESTQM(*) ACTION(DISCARD)\n").rules[0].matches({"dlh.DestQMgrName": None})


def test_nul_padded_dlh_field():
    rule = parse("DESTQM(QM1) ACTION(DISCARD)\nDESTQM(QM1*) ACTION(DISCARD)\n")
    field = {"dlh.DestQMgrName": b"QM1" + b"\x00" * 45}
    assert not rule.rules[0].matches(field)
    assert rule.rules[1].matches(field)


def test_model_objects_are_frozen():
    table = parse(IBM_TABLE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.rules[0].action = "DISCARD"
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.rules[0].patterns[0].value = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.control.retryint = 1


def test_patterns_keep_data_for_compilation():
    rule = parse("REASON(MQRC_Q_FULL) DESTQ(APP.*) ACTION(DISCARD)\n").rules[0]
    reason, destq = rule.patterns
    assert (reason.keyword, reason.field, reason.kind, reason.value, reason.symbol) == (
        "REASON", "dlh.Reason", "integer", 2053, "MQRC_Q_FULL"
    )
    assert (destq.field, destq.kind, destq.value, destq.length, destq.line, destq.column) == (
        "dlh.DestQName", "string", "APP.*", 48, 1, 21
    )
