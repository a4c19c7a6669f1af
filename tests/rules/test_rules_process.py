"""Processing of one message by the DLQ handler in the replay (dlqlens/rules/replay.py
``process_message``, ``process_batch``), without Spark: the semantics of IBM MQ "How the
rules table is processed" (docs/rules.md, "Replay model")."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlqlens.errors import RulesError
from dlqlens.rules import parse
from dlqlens.rules.handler import Attempt, Fate, Message, resolve_target, select_rule
from dlqlens.rules.lint import CODES, unreached_from_counts
from dlqlens.rules.replay import (FateCache, ReplayPlan, ReplaySummary, process_batch,
                                  process_message)
from dlqlens.rules.world import PutOutcome, QueueRule, World

Q_FULL = Message(reason=2053, dest_q="APP.IN", dest_qmgr="QM1", reply_q="", reply_qmgr="QM2")
REQUEST = Message(reason=2085, dest_q="SVC.IN", dest_qmgr="QM1", reply_q="REPLY.Q",
                  reply_qmgr="AAAA.QM")
FAIL_ALL = World(name="fail-all", default=PutOutcome("fail", 2053))


def plan_of(text: str) -> ReplayPlan:
    return ReplayPlan.from_table(parse(text))


def run(text, matched, msg=Q_FULL, world="optimistic"):
    return process_message(matched, msg, plan_of(text), World.load(world))


def test_first_matching_rule_disposes_in_the_optimistic_world():
    f = run("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\nACTION(FWD) FWDQ(DEADQ)\n", [1, 2])
    assert f == Fate(tried=(Attempt(1, 1, "succeeded"),), rule_index=1, action="RETRY",
                     target_queue="APP.IN", target_qmgr="QM1", header_kept=False,
                     disposition="retried", seconds_to_disposition=0)


def test_retry_exhaustion_falls_through_to_the_next_matching_rule():
    f = run("RETRYINT(30)\nREASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\n"
            "ACTION(FWD) FWDQ(DEADQ) HEADER(YES)\n", [1, 2], world="pessimistic")
    assert f.tried == (Attempt(1, 5, "failed", 2053), Attempt(2, 1, "succeeded"))
    assert (f.rule_index, f.action, f.target_queue, f.target_qmgr, f.header_kept) == (
        2, "FWD", "DEADQ", "", True)
    assert f.disposition == "forwarded" and f.left_reason is None
    # attempts 1..5 at 0, 30, ..., 120 s; the sixth (rule 2) at 150 s
    assert f.seconds_to_disposition == 5 * 30


def test_every_matching_rule_exhausted_leaves_the_message():
    f = run("ACTION(RETRY) RETRY(2)\nACTION(FWD) FWDQ(&DESTQ) FWDQM(&DESTQM)\n", [1, 2],
            world="pessimistic")
    assert f.tried == (Attempt(1, 2, "failed", 2053), Attempt(2, 1, "failed", 2053))
    assert (f.disposition, f.left_reason, f.action, f.rule_index) == (
        "left", "rules_exhausted", "IGNORE", None)
    assert (f.target_queue, f.header_kept) == (None, None)
    assert f.seconds_to_disposition == 2 * 60  # its third and last attempt


def test_ignore_rule_leaves_at_once_and_is_not_retried():
    f = run("ACTION(IGNORE)\nACTION(FWD) FWDQ(DEADQ)\n", [1, 2])
    assert f.tried == (Attempt(1, 1, "ignored"),)
    assert (f.disposition, f.left_reason, f.action, f.rule_index) == (
        "left", "ignore_rule", "IGNORE", None)
    assert f.seconds_to_disposition == 0
    # reached after failed attempts, IGNORE is applied at the next pass
    f = run("ACTION(RETRY) RETRY(3)\nACTION(IGNORE)\n", [1, 2], world="pessimistic")
    assert f.tried == (Attempt(1, 3, "failed", 2053), Attempt(2, 1, "ignored"))
    assert f.seconds_to_disposition == 3 * 60


def test_discard_always_succeeds():
    f = process_message([1, 2], Q_FULL, plan_of("ACTION(RETRY) RETRY(2)\nACTION(DISCARD)\n"), FAIL_ALL)
    assert f.tried == (Attempt(1, 2, "failed", 2053), Attempt(2, 1, "succeeded"))
    assert (f.disposition, f.rule_index, f.action, f.target_queue, f.header_kept) == (
        "discarded", 2, "DISCARD", None, None)
    assert f.seconds_to_disposition == 2 * 60


def test_no_matching_rule_and_no_dlh():
    f = run("REASON(2035) ACTION(DISCARD)\n", [])
    assert f == Fate(action="IGNORE", disposition="left", left_reason="no_match",
                     seconds_to_disposition=0)
    f = run("ACTION(DISCARD)\n", None, msg=Message(has_dlh=False))
    assert f == Fate(disposition="left", left_reason="no_dlh")
    assert f.to_dict() == {
        "tried": [], "rule_index": None, "action": None, "target_queue": None,
        "target_qmgr": None, "header_kept": None, "disposition": "left",
        "left_reason": "no_dlh", "seconds_to_disposition": None,
    }


def test_substitution_of_destq_replyq_and_blank_fwdqm():
    plan = plan_of(
        "ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM) HEADER(NO)\n"
        "ACTION(FWD) FWDQ(&DESTQ) FWDQM(bbbb.2)\n"
        "ACTION(FWD) FWDQ(&DESTQ)\n"
        "ACTION(RETRY)\n"
    )
    w = World.optimistic()
    assert resolve_target(plan.rule(1), REQUEST, w) == ("REPLY.Q", "AAAA.QM")
    assert resolve_target(plan.rule(2), REQUEST, w) == ("SVC.IN", "BBBB.2")  # folded
    assert resolve_target(plan.rule(3), REQUEST, w) == ("SVC.IN", "")  # local qmgr
    assert resolve_target(plan.rule(3), REQUEST, World(local_qmgr="QMX")) == ("SVC.IN", "QMX")
    assert resolve_target(plan.rule(4), REQUEST, w) == ("SVC.IN", "QM1")
    f = process_message([1], REQUEST, plan, w)
    assert (f.target_queue, f.target_qmgr, f.header_kept) == ("REPLY.Q", "AAAA.QM", False)


def test_blank_reply_to_queue_fails_and_falls_through():
    plan = plan_of("ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM) RETRY(2)\nACTION(FWD) FWDQ(X)\n")
    f = process_message([1, 2], Q_FULL, plan, World.optimistic())
    assert f.tried == (Attempt(1, 2, "failed", 2085), Attempt(2, 1, "succeeded"))
    assert f.target_queue == "X"


def test_fail_first_counts_tries_per_destination_across_rules():
    world = World(queues=(QueueRule("APP.IN", "QM1", PutOutcome("fail", 2053, fail_first=3)),))
    plan = plan_of("ACTION(RETRY) RETRY(2)\nACTION(FWD) FWDQ(&DESTQ) FWDQM(&DESTQM) RETRY(2)\n")
    f = process_message([1, 2], Q_FULL, plan, world)
    assert f.tried == (Attempt(1, 2, "failed", 2053), Attempt(2, 2, "succeeded"))
    assert f.seconds_to_disposition == 3 * 60  # the 4th put overall


def test_huge_retry_counts_cost_nothing():
    plan = plan_of("RETRYINT(999999999)\nACTION(RETRY) RETRY(999999999)\nACTION(DISCARD)\n")
    f = process_message([1, 2], Q_FULL, plan, World.pessimistic())
    assert f.tried[0] == Attempt(1, 999_999_999, "failed", 2053)
    assert f.seconds_to_disposition == 999_999_999 * 999_999_999


# -- agreement with the sample handler's rule selection (handler.select_rule) ---

ACTIONS = st.sampled_from([
    "ACTION(RETRY) RETRY({n})", "ACTION(FWD) FWDQ(DEADQ) RETRY({n})",
    "ACTION(FWD) FWDQ(&DESTQ) FWDQM(&DESTQM) RETRY({n})", "ACTION(IGNORE)", "ACTION(DISCARD)",
])
PATTERNS = st.sampled_from(["", "REASON(MQRC_Q_FULL) ", "REASON(2035) ", "DESTQ(APP.*) ",
                            "DESTQM(QM2) ", "PERSIST(1) "])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(PATTERNS, ACTIONS, st.integers(1, 4)), min_size=1, max_size=6),
       st.sampled_from([60, 5]))
def test_when_every_put_fails_the_rules_tried_are_those_select_gives_attempt_by_attempt(
        rules, retryint):
    text = f"RETRYINT({retryint})\n" + "".join(p + a.format(n=n) + "\n" for p, a, n in rules)
    table = parse(text)
    assert table.ok, [d.format() for d in table.diagnostics]
    fields = {"dlh.Reason": 2053, "dlh.DestQName": "APP.IN", "dlh.DestQMgrName": "QM1",
              "md.Persistence": 1}
    matched = [r.index for r in table.rules if r.matches(fields)]
    fate = process_message(matched, Q_FULL, ReplayPlan.from_table(table), FAIL_ALL)
    per_attempt = [a.rule_index for a in fate.tried for _ in range(a.attempts)]
    for k, index in enumerate(per_attempt):
        assert select_rule(table, fields, k).index == index, (text, k)
    if fate.left_reason in ("rules_exhausted", "no_match"):
        assert select_rule(table, fields, len(per_attempt)) is None
    assert fate.seconds_to_disposition == max(len(per_attempt) - 1, 0) * retryint


# -- the batch function of the UDF ---------------------------------------------

def test_process_batch_processes_each_distinct_input_once():
    plan = plan_of("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)\n"
                   "REPLYQ(?*) ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM)\n"
                   "ACTION(FWD) FWDQ(DEADQ)\n")
    rows = [
        ("1,3", 2053, "APP.IN", "QM1", None, None),
        ("2,3", 2085, "SVC.IN", "QM1", "REPLY.Q", "AAAA.QM"),
        ("1,3", 2053, "APP.IN", "QM1", None, None),
        (None, None, None, None, None, None),
        ("", 2035, "X", "QM1", "", ""),
        ("1,3", 2053, "APP.IN", "QM1", None, None),
    ]
    columns = [pa.array([r[j] for r in rows], type=pa.int32() if j == 1 else pa.string())
               for j in range(6)]
    cache = FateCache()
    out = process_batch(plan, World.pessimistic(), columns, cache)
    assert len(cache) == 4
    got = out.to_pylist()
    for row, fate in zip(rows, got):
        matched = None if row[0] is None else [int(x) for x in row[0].split(",") if x]
        msg = Message(has_dlh=False) if row[0] is None else Message(
            True, row[1], row[2], row[3], row[4] or "", row[5] or "")
        assert fate == process_message(matched, msg, plan, World.pessimistic()).to_dict()
    assert [f["disposition"] for f in got] == [
        "forwarded", "forwarded", "forwarded", "left", "left", "forwarded"]
    assert got[1]["target_queue"] == "REPLY.Q"
    assert process_batch(plan, World.optimistic(), [pa.array([], pa.string())] * 6).to_pylist() == []


def test_fate_cache_decides_each_input_once_over_batches_and_stays_bounded(monkeypatch):
    import dlqlens.rules.replay as replay_module

    plan = plan_of("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)\nACTION(FWD) FWDQ(DEADQ)\n")
    decided = []
    real = replay_module.process_message
    monkeypatch.setattr(replay_module, "process_message",
                        lambda *a: decided.append(a[1]) or real(*a))

    def batch(reasons):
        return [pa.array(["1,2" if r == 2053 else "2" for r in reasons]),
                pa.array(reasons, pa.int32()), pa.array(["APP.IN"] * len(reasons)),
                pa.array(["QM1"] * len(reasons)), pa.nulls(len(reasons)),
                pa.nulls(len(reasons))]

    def expected(reasons):
        return [real([1, 2] if r == 2053 else [2], Message(True, r, "APP.IN", "QM1", "", ""),
                     plan, World.pessimistic()).to_dict() for r in reasons]

    cache = FateCache()
    first = [2053, 2035, 2053, 2085]
    assert process_batch(plan, World.pessimistic(), batch(first), cache).to_pylist() == \
        expected(first)
    assert len(decided) == 3 and len(cache) == 3
    again = [2085, 2053, 2053]
    assert process_batch(plan, World.pessimistic(), batch(again), cache).to_pylist() == \
        expected(again)
    assert len(decided) == 3  # nothing decided twice
    small = FateCache(limit=2)  # past the limit the cache starts again; fates unchanged
    for reasons in (first, again, first):
        assert process_batch(plan, World.pessimistic(), batch(reasons), small).to_pylist() == \
            expected(reasons)
        assert len(small) <= 3


def test_row_keys_are_equal_exactly_when_rows_are():
    import numpy as np

    from dlqlens.rules.replay import _row_keys

    rng = np.random.default_rng(5)
    for high in (2, 40, 5000):  # packed bits, and past 63 bits (six columns of 13 bits)
        ids = rng.integers(0, high, size=(400, 6))
        ids[200:] = ids[:200]  # many repeats
        keys = _row_keys(ids)
        rows = [tuple(r) for r in ids.tolist()]
        for i in range(0, 400, 7):
            for k in range(0, 400, 11):
                assert (keys[i] == keys[k]) == (rows[i] == rows[k])


# -- plan, statistics text, unreached rules ---------------------------------------

def test_a_table_with_errors_is_refused_unless_allowed():
    table = parse("REASON(2053) ACTION(RETRY)\nACTION(FWD)\nACTION(DISCARD)\n")
    with pytest.raises(RulesError, match="would not start"):
        ReplayPlan.from_table(table)
    plan = ReplayPlan.from_table(table, allow_errors=True)
    assert [r.index for r in plan.rules] == [1, 3]  # rule 2 (FWD without FWDQ) left out


def test_summary_text():
    s = ReplaySummary(
        rules=[{"rule_index": 1, "line": 2, "action": "RETRY", "matched": 5, "first_match": 5,
                "tried": 5, "disposed": 3, "ignored": 0}],
        fates={("left", "no_dlh"): 1, ("retried", None): 3, ("left", "rules_exhausted"): 2},
        messages=6,
    )
    text = s.to_text()
    assert "   1     2 RETRY            5         5         5         3         0" in text
    assert text.endswith("6 message(s)\n        3  retried\n        2  left/rules_exhausted\n"
                         "        1  left/no_dlh\n")


def test_unreached_from_counts():
    table = parse("REASON(2053) ACTION(RETRY)\nREASON(2053) ACTION(DISCARD)\n"
                  "REASON(2035) ACTION(DISCARD)\nACTION(FWD) FWDQ(X)\n")
    findings = unreached_from_counts(table, {1: (4, 4), 2: (4, 0), 3: (0, 0), 4: (9, 5)})
    assert [(f.code, f.rule_index, f.line) for f in findings] == [
        ("unreached-rule", 2, 2), ("unreached-rule", 3, 3)]
    assert "matches 4 message(s)" in findings[0].message and "earlier rule" in findings[0].message
    assert "matches no message" in findings[1].message
    assert all(f.severity == CODES["unreached-rule"].severity for f in findings)
