"""The DLQ handler's decision (dlqlens/rules/handler.py) and its two drivers.

IBM MQ "How the rules table is processed" and the selection of IBM's sample handler
(amqsdlq, odqMatchMessage): rules searched in table order, a rule's action
tried up to RETRY times, then the next matching rule; every matching rule used
up, or none matching: the message stays (implicit IGNORE); no MQDLH: never
processed. The differential tests run the simulator's DlqHandler (one attempt
per message per RETRYINT pass, puts judged by a queue manager) and the
replay's closed form (process_batch) under the same deterministic World and
require the same fate for every message.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlqlens.rules import parse
from dlqlens.rules.handler import (
    Attempt,
    Fate,
    Message,
    Progress,
    Step,
    fate_of,
    matching_rules,
    next_step,
    resolve_target,
    select_rule,
    target,
    usable_rules,
)
from dlqlens.rules.replay import ReplayPlan, RuleAction, process_batch
from dlqlens.rules.world import PutOutcome, QueueRule, World
from dlqlens.sim import Actor, QueueManager, Simulation
from dlqlens.sim.apps import DlqHandler
from dlqlens.sim.qmgr import MQAT_UNIX, NO_ID, SimMessage

Q_FULL = Message(reason=2053, dest_q="APP.IN", dest_qmgr="QM1")


def rules_of(text: str):
    table = parse(text)
    assert table.ok, [d.format() for d in table.diagnostics]
    return table.rules


def picks(matching, upto: int):
    """``(rule index, action, attempt, tries_left, left_reason)`` for attempts 0..upto-1."""
    return [(s.rule.index if s.rule is not None else None, s.action, s.attempt, s.tries_left,
             s.left_reason) for s in (next_step(matching, k) for k in range(upto))]


# -- next_step ---------------------------------------------------------------------

def test_rules_are_tried_in_order_each_up_to_its_retry_count():
    rules = rules_of("ACTION(RETRY) RETRY(2)\nACTION(FWD) FWDQ(DEADQ) RETRY(3)\n")
    assert picks(rules, 7) == [
        (1, "RETRY", 1, 2, None), (1, "RETRY", 2, 1, None),
        (2, "FWD", 1, 3, None), (2, "FWD", 2, 2, None), (2, "FWD", 3, 1, None),
        (None, "IGNORE", 0, 0, "rules_exhausted"), (None, "IGNORE", 0, 0, "rules_exhausted"),
    ]


def test_ignore_rule_is_taken_when_reached_and_stays_taken():
    rules = rules_of("ACTION(RETRY)\nACTION(IGNORE)\nACTION(DISCARD)\n")
    assert picks(rules, 4) == [(1, "RETRY", 1, 1, None)] + [(2, "IGNORE", 0, 0, "ignore_rule")] * 3
    assert not next_step(rules, 1).acts and next_step(rules, 0).acts


def test_no_match_and_no_dlh():
    assert next_step((), 0) == Step(None, "IGNORE", "no_match")
    assert next_step(None, 0) == Step(left_reason="no_dlh")
    assert next_step(None, 0).action is None
    with pytest.raises(ValueError, match="attempts"):
        next_step((), -1)


def test_discard_takes_its_first_attempt_and_counts_its_retry_like_any_rule():
    rules = rules_of("ACTION(DISCARD) RETRY(3)\nACTION(FWD) FWDQ(X)\n")
    assert picks(rules, 1) == [(1, "DISCARD", 1, 3, None)]
    assert next_step(rules, 3).rule.index == 2  # only reachable if a DISCARD could fail


def test_the_replays_rule_actions_and_the_tables_rules_give_the_same_steps():
    table = parse("REASON(2053) ACTION(RETRY) RETRY(2)\nACTION(IGNORE)\n")
    plan = ReplayPlan.from_table(table)
    assert all(isinstance(r, RuleAction) for r in plan.rules)
    strip = lambda steps: [s[1:] for s in steps]  # noqa: E731 - the rule objects differ
    assert strip(picks(plan.rules, 4)) == strip(picks(table.rules, 4))


def test_a_huge_retry_count_is_one_step():
    rules = rules_of("ACTION(RETRY) RETRY(999999999)\nACTION(DISCARD)\n")
    step = next_step(rules, 123)
    assert (step.rule.index, step.attempt, step.tries_left) == (1, 124, 999_999_999 - 123)
    assert next_step(rules, 999_999_999).action == "DISCARD"


# -- rules, matching, selection ---------------------------------------------------------

FIELDS = {"dlh.Reason": 2053, "dlh.DestQName": "APP.IN", "dlh.DestQMgrName": "QM1",
          "md.ReplyToQ": "", "md.ReplyToQMgr": "QM2", "md.Persistence": 1}


def test_rules_with_errors_are_never_applied():
    """A FWD without FWDQ is an error (the handler would not start): leaving it out of a
    replay with allow_errors, and out of select_rule, is the same choice."""
    table = parse("ACTION(FWD) RETRY(2)\nREASON(2053)\nACTION(DISCARD)\n")
    assert not table.ok
    assert [r.index for r in usable_rules(table)] == [3]
    assert [r.index for r in matching_rules(table, FIELDS)] == [3]
    assert select_rule(table, FIELDS).index == 3
    assert [r.index for r in ReplayPlan.from_table(table, allow_errors=True).rules] == [3]


def test_matching_rules_keep_table_order_and_accept_chosen_rules():
    table = parse("REASON(2035) ACTION(DISCARD)\nDESTQ(APP.*) ACTION(RETRY)\n"
                  "PERSIST(MQPER_PERSISTENT) ACTION(FWD) FWDQ(X)\n")
    assert [r.index for r in matching_rules(table, FIELDS)] == [2, 3]
    assert matching_rules(usable_rules(table), FIELDS) == matching_rules(table, FIELDS)
    assert select_rule(table, FIELDS, 1).index == 3 and select_rule(table, FIELDS, 2) is None


# -- targets ---------------------------------------------------------------------------

def test_targets_substitute_and_end_names_at_a_nul():
    """MQMD "Format (MQCHAR8)": text after the first NUL is padding; blanks are padding."""
    rules = rules_of("ACTION(RETRY)\nACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM)\n"
                     "ACTION(FWD) FWDQ(DEADQ)\nACTION(FWD) FWDQ(&DESTQ) FWDQM(bbbb.2)\n"
                     "ACTION(DISCARD)\n")
    fields = {"dlh.DestQName": b"APP.IN\x00\x00junk", "dlh.DestQMgrName": "QM1" + " " * 45,
              "md.ReplyToQ": "REPLY.Q\x00", "md.ReplyToQMgr": b"QM2   "}
    assert [target(r, fields) for r in rules] == [
        ("APP.IN", "QM1"), ("REPLY.Q", "QM2"), ("DEADQ", ""), ("APP.IN", "BBBB.2"), None]
    with pytest.raises(KeyError):
        target(rules[1], {"dlh.DestQName": "A", "dlh.DestQMgrName": "B"})


def test_a_forward_without_fwdq_names_no_queue():
    action = RuleAction(1, 1, "FWD", fwdq=None)
    assert target(action, Message().fields) == ("", "")
    assert resolve_target(action, Q_FULL, World(local_qmgr="QMX")) == ("", "QMX")
    with pytest.raises(ValueError, match="puts nothing"):
        resolve_target(RuleAction(3, 3, "DISCARD"), Q_FULL, World())


# -- Progress -------------------------------------------------------------------------

def test_progress_merges_the_attempts_of_one_rule():
    rules = rules_of("ACTION(RETRY) RETRY(3)\nACTION(FWD) FWDQ(DEADQ)\n")
    p = Progress()
    p = p.failed(next_step(rules, p.attempts), 2053)
    p = p.failed(next_step(rules, p.attempts), 2051)
    assert (p.attempts, p.tried) == (2, (Attempt(1, 2, "failed", 2051),))
    fate = p.removed(next_step(rules, 2), ("APP.IN", "QM1"), seconds=120)
    assert fate == Fate((Attempt(1, 3, "succeeded"),), 1, "RETRY", "APP.IN", "QM1", False,
                        "retried", None, 120)
    p = p.failed(next_step(rules, 2), 2053)
    fate = p.removed(next_step(rules, 3), ("DEADQ", "QM1"))
    assert fate.tried == (Attempt(1, 3, "failed", 2053), Attempt(2, 1, "succeeded"))
    assert (fate.disposition, fate.header_kept) == ("forwarded", True)


def test_progress_refuses_what_cannot_happen():
    rules = rules_of("ACTION(DISCARD)\nACTION(RETRY) RETRY(2)\nACTION(IGNORE)\n")
    with pytest.raises(ValueError, match="no failed attempts"):
        Progress().failed(next_step(rules, 0), 2053)  # DISCARD cannot fail
    retry = next_step(rules[1:], 0)
    with pytest.raises(ValueError, match="2 left"):
        Progress().failed(retry, 2053, tries=3)
    with pytest.raises(ValueError, match="removes nothing"):
        Progress().removed(next_step(rules[2:], 0))
    with pytest.raises(ValueError, match="does not leave"):
        Progress().left(retry)
    assert Progress().failed(retry, 2053, tries=0) == Progress()


def test_progress_left_fates():
    rules = rules_of("ACTION(RETRY)\nACTION(IGNORE)\n")
    p = Progress().failed(next_step(rules, 0), 2053)
    assert p.left(next_step(rules, 1), 60) == Fate(
        (Attempt(1, 1, "failed", 2053), Attempt(2, 1, "ignored")), None, "IGNORE",
        disposition="left", left_reason="ignore_rule", seconds_to_disposition=60)
    assert p.stayed().stayed().stays == 2 and p.stayed().attempts == 1
    assert Progress().left(next_step(None, 0), 5) == Fate(disposition="left", left_reason="no_dlh")


# -- the closed form against one attempt at a time ---------------------------------------

ACTIONS = st.sampled_from([
    "ACTION(RETRY) RETRY({n})", "ACTION(FWD) FWDQ(DEADQ) RETRY({n})",
    "ACTION(FWD) FWDQ(&DESTQ) FWDQM(&DESTQM) RETRY({n})",
    "ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM) HEADER(NO) RETRY({n})",
    "ACTION(IGNORE)", "ACTION(DISCARD)",
])
PATTERNS = st.sampled_from(["", "", "", "REASON(MQRC_Q_FULL) ", "REASON(MQRC_NOT_AUTHORIZED) ",
                            "DESTQ(APP.*) ", "REPLYQ(?*) ", "PERSIST(MQPER_PERSISTENT) "])
TABLES = st.lists(st.tuples(PATTERNS, ACTIONS, st.integers(1, 3)), min_size=1, max_size=4).map(
    lambda rules: "RETRYINT(5)\n" + "".join(p + a.format(n=n) + "\n" for p, a, n in rules))


def _fail(reason, fail_first):
    return PutOutcome("fail", reason, fail_first)


OUTCOMES = st.one_of(st.just(PutOutcome("succeed")),
                     st.builds(_fail, st.sampled_from([2053, 2051, "original"]),
                               st.one_of(st.none(), st.integers(0, 4), st.integers(1, 3))))
WORLDS = st.builds(
    lambda default, original, deadq: World(
        name="drawn", default=default, original_destination=original, local_qmgr="QM1",
        queues=() if deadq is None else (QueueRule("DEADQ", "*", deadq),)),
    OUTCOMES, st.one_of(st.none(), OUTCOMES), st.one_of(st.none(), OUTCOMES))
SPECS = st.fixed_dictionaries({
    "reason": st.sampled_from([2053, 2035, 2085]),
    "dest_q": st.sampled_from(["APP.IN", "SVC.IN", ""]),
    "dest_qmgr": st.sampled_from(["QM1", "QM2", ""]),
    "reply_q": st.sampled_from(["", "REPLY.Q"]),
    "reply_qmgr": st.sampled_from(["", "QM2"]),
    "persistence": st.sampled_from([0, 1]),
})


def _message(spec) -> Message:
    return Message(True, spec["reason"], spec["dest_q"], spec["dest_qmgr"], spec["reply_q"],
                   spec["reply_qmgr"])


def _fields(spec) -> dict:
    return {**_message(spec).fields, "md.Persistence": spec["persistence"]}


def one_attempt_at_a_time(matching, msg: Message, world: World) -> Fate:
    """The per-pass use of the decision without a queue manager: one next_step and one
    put per attempt, the world judging each put (tries counted per destination)."""
    progress = Progress()
    tries: Counter = Counter()
    while True:
        step = next_step(matching, progress.attempts)
        if not step.acts:
            return progress.left(step)
        if step.action == "DISCARD":
            return progress.removed(step)
        queue, qmgr = target(step.rule, msg.fields)
        where = (queue, world.resolve_qmgr(qmgr))
        tries[where] += 1
        ok, reason = world.put(*where, tries[where], dest_q=msg.dest_q, dest_qmgr=msg.dest_qmgr,
                               original_reason=msg.reason)
        if ok:
            return progress.removed(step, where)
        progress = progress.failed(step, reason)


def _timeless(fate: Fate) -> Fate:
    return dataclasses.replace(fate, seconds_to_disposition=None)


@settings(max_examples=400, deadline=None)
@given(TABLES, SPECS, WORLDS)
def test_the_closed_form_is_the_decision_taken_one_attempt_at_a_time(text, spec, world):
    table = parse(text)
    matching = matching_rules(table, _fields(spec))
    msg = _message(spec)
    closed = fate_of(matching, msg, world, table.control.retryint)
    assert _timeless(closed) == _timeless(one_attempt_at_a_time(matching, msg, world)), text
    attempts = sum(a.attempts for a in closed.tried if a.outcome != "ignored")
    if closed.disposition != "left" or closed.left_reason == "rules_exhausted":
        # attempt N at (N - 1) * RETRYINT
        assert closed.seconds_to_disposition == (attempts - 1) * 5
    assert fate_of(matching, Message(has_dlh=False), world, 5) == Fate(left_reason="no_dlh")


# -- the simulator's DlqHandler against the replay ------------------------------------------

DLQ = "SYSTEM.DEAD.LETTER.QUEUE"
MCA = Actor("mca", MQAT_UNIX, "amqrmppa")


def simulate_handler(text: str, specs: list, world: World, *, no_dlh: bool = False):
    """Run runmqdlq (the simulator's DlqHandler) over dead letters made from ``specs``;
    every put of the handler is judged by ``world`` first (a put the world lets through is
    made by the queue manager, into queues defined for every target). Returns the fate the
    handler reported for each message, by MsgId, and the simulated handler."""
    sim = Simulation(1)
    qm = QueueManager(sim, "QM1", platform="linux", deadq=DLQ)
    qm.define_qlocal(DLQ, maxdepth=999999)
    for name in ("APP.IN", "SVC.IN", "DEADQ", "REPLY.Q", "ORIGIN"):
        qm.define_qlocal(name, maxdepth=999999)
    qm.define_qlocal("QM2", usage="XMITQ", maxdepth=999999)
    qm.route("QM2", "QM2")
    dlhs = {}
    for i, spec in enumerate(specs):
        msgid = b"%024d" % i
        md = {"Version": 2, "Report": 0, "MsgType": 8, "Expiry": -1, "Feedback": 0,
              "Encoding": 546, "CodedCharSetId": 1208, "Format": "MQSTR", "Priority": 0,
              "Persistence": spec["persistence"], "MsgId": msgid, "CorrelId": NO_ID,
              "ReplyToQ": spec["reply_q"], "ReplyToQMgr": spec["reply_qmgr"],
              "AccountingToken": b"\0" * 32}
        m = SimMessage(md, (), b"data")
        m.events.append({"t": "", "qmgr": "", "actor": "test", "event": "created"})
        assert qm.dead_letter(m, spec["reason"], spec["dest_q"], spec["dest_qmgr"], actor=MCA) == 0
        dlhs[msgid] = _message(spec)
    if no_dlh:
        plain = SimMessage({"Format": "MQSTR", "MsgId": b"n" * 24, "CorrelId": NO_ID}, (), b"x")
        assert qm.put(DLQ, plain, actor=MCA) == 0
    fates: dict = {}

    def on_fate(m, fate):
        key = bytes(m.md["MsgId"])
        assert key not in fates, "one fate per message"
        fates[key] = fate

    handler = DlqHandler(sim, qm, text, on_fate=on_fate)
    real_put, tries = qm.put, Counter()

    def judged_put(qname, m, *, actor, qmgr=None, **kw):
        if actor is handler.actor:
            msg = dlhs[bytes(m.md["MsgId"])]
            where = (qname, world.resolve_qmgr(qmgr or ""))
            tries[(bytes(m.md["MsgId"]), where)] += 1
            ok, reason = world.put(*where, tries[(bytes(m.md["MsgId"]), where)],
                                   dest_q=msg.dest_q, dest_qmgr=msg.dest_qmgr,
                                   original_reason=msg.reason)
            if not ok:
                return reason
        return real_put(qname, m, actor=actor, qmgr=qmgr, **kw)

    qm.put = judged_put
    handler.start()
    retries = sum(r.retry for r in parse(text).rules)
    sim.run(2 * (retries + 2) * handler.retryint + 10)
    return fates, handler


def replayed(text: str, specs: list, world: World, *, no_dlh: bool = False) -> list[dict]:
    """The replay's fates (process_batch, the body of the Spark UDF) of the same messages."""
    table = parse(text)
    plan = ReplayPlan.from_table(table)
    rows = [(",".join(str(r.index) for r in matching_rules(table, _fields(s))), s["reason"],
             s["dest_q"], s["dest_qmgr"], s["reply_q"], s["reply_qmgr"]) for s in specs]
    if no_dlh:
        rows.append((None, None, None, None, None, None))
    columns = [pa.array([r[j] for r in rows], type=pa.int32() if j == 1 else pa.string())
               for j in range(6)]
    return process_batch(plan, world, columns).to_pylist()


def _no_seconds(fate: dict) -> dict:
    return {k: v for k, v in fate.items() if k != "seconds_to_disposition"}


HANDLER_RULES = """\
INPUTQ(' ') RETRYINT(10) WAIT(YES)
REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(2)
REASON(MQRC_Q_FULL) ACTION(FWD) FWDQ(DEADQ) HEADER(YES)
REASON(MQRC_NOT_AUTHORIZED) ACTION(DISCARD)
"""


def test_simulated_handler_and_replay_agree_on_a_worked_example():
    """Q_FULL for APP.IN, still full: two failed retries at RETRYINT, then the forward;
    NOT_AUTHORIZED: discarded; anything else: no rule, it stays; no MQDLH: never processed."""
    world = World(name="APP.IN full", local_qmgr="QM1",
                  queues=(QueueRule("APP.IN", "*", PutOutcome("fail", 2053)),))
    specs = [dict(reason=2053, dest_q="APP.IN", dest_qmgr="QM1", reply_q="", reply_qmgr="",
                  persistence=0),
             dict(reason=2035, dest_q="SVC.IN", dest_qmgr="QM1", reply_q="", reply_qmgr="",
                  persistence=0),
             dict(reason=2085, dest_q="SVC.IN", dest_qmgr="QM1", reply_q="", reply_qmgr="",
                  persistence=0)]
    fates, handler = simulate_handler(HANDLER_RULES, specs, world, no_dlh=True)
    full, secure, unknown = (fates[b"%024d" % i] for i in range(3))
    assert full.tried == (Attempt(1, 2, "failed", 2053), Attempt(2, 1, "succeeded"))
    assert (full.rule_index, full.action, full.target_queue, full.target_qmgr,
            full.header_kept, full.disposition) == (2, "FWD", "DEADQ", "QM1", True, "forwarded")
    assert full.seconds_to_disposition == 20  # third pass, RETRYINT(10)
    assert (secure.disposition, secure.rule_index) == ("discarded", 3)
    assert (unknown.disposition, unknown.left_reason, unknown.action) == ("left", "no_match",
                                                                         "IGNORE")
    assert fates[b"n" * 24] == Fate(disposition="left", left_reason="no_dlh")
    got = [fates[b"%024d" % i].to_dict() for i in range(3)] + [fates[b"n" * 24].to_dict()]
    assert [_no_seconds(f) for f in got] == [
        _no_seconds(f) for f in replayed(HANDLER_RULES, specs, world, no_dlh=True)]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TABLES, st.lists(SPECS, min_size=1, max_size=4), WORLDS)
def test_simulated_handler_and_replay_give_every_message_the_same_fate(text, specs, world):
    fates, handler = simulate_handler(text, specs, world)
    assert len(fates) == len(specs), "the handler decided every message"
    sim_side = [_no_seconds(fates[b"%024d" % i].to_dict()) for i in range(len(specs))]
    replay_side = [_no_seconds(f) for f in replayed(text, specs, world)]
    for spec, s, r in zip(specs, sim_side, replay_side):
        assert s == r, (text, spec, world)


def test_the_handler_decision_is_pure():
    """No Spark, Arrow, pandas or numpy, no simulator: the replay and the simulator both import it.

    (That no module of dlqlens imports another in a circle is checked for the whole package by
    tests/test_architecture.py.)
    """
    import ast
    from pathlib import Path

    import dlqlens.rules.handler as handler

    imported = set()
    for node in ast.walk(ast.parse(Path(handler.__file__).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    heavy = {m for m in imported if m.split(".")[0] in ("pyspark", "pyarrow", "pandas", "numpy")}
    assert not heavy
    assert {m for m in imported if m.startswith("dlqlens.")} <= {
        "dlqlens.rules.model", "dlqlens.rules.world", "dlqlens.rules.match", "dlqlens.errors"}
