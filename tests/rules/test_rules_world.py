"""The world model of a replay (dlqlens/rules/world.py): named worlds, the JSON
form, precedence, fail_first counting."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlqlens.errors import UsageError
from dlqlens.rules.world import ORIGINAL, PutOutcome, QueueRule, World

DEST = {"dest_q": "APP.IN", "dest_qmgr": "QM1", "original_reason": 2053}


def test_optimistic_every_put_succeeds():
    w = World.load("optimistic")
    assert w.name == "optimistic"
    assert w.put("APP.IN", "QM1", 1, **DEST) == (True, None)
    assert w.put("ANY", "", 7, **DEST) == (True, None)


def test_pessimistic_fails_the_original_destination_with_the_original_reason():
    w = World.load("pessimistic")
    assert w.put("APP.IN", "QM1", 1, **DEST) == (False, 2053)
    assert w.put("APP.IN", "QM1", 99, **DEST) == (False, 2053)
    assert w.put("APP.IN", "QM2", 1, **DEST) == (True, None)  # same name, other qmgr
    assert w.put("DEADQ", "QM1", 1, **DEST) == (True, None)
    # A blank queue manager is the local one, name unknown: taken as the same.
    assert w.put("APP.IN", "", 1, **DEST) == (False, 2053)


def test_local_qmgr_resolves_blank_and_is_compared_by_name():
    w = World.from_dict({"original_destination": "fail", "local_qmgr": "QM9 "})
    assert w.resolve_qmgr("") == "QM9" and w.resolve_qmgr("QM1") == "QM1"
    assert w.put("APP.IN", w.resolve_qmgr(""), 1, **DEST) == (True, None)  # QM9 is not QM1


def test_blank_queue_name_always_fails_unknown_object_name():
    for w in (World.optimistic(), World.pessimistic()):
        assert w.put("", "QM1", 1, **DEST) == (False, 2085)


def test_json_form_precedence_and_fail_first(tmp_path):
    spec = {
        "name": "payments outage",
        "default": "succeed",
        "original_destination": {"outcome": "fail", "reason": "original"},
        "queues": [
            {"queue": "PAYMENTS.IN", "qmgr": "*", "outcome": "fail", "reason": 2053, "fail_first": 3},
            {"queue": "DEADQ.*", "outcome": "fail", "reason": "MQRC_NOT_AUTHORIZED"},
            {"queue": "APP.IN", "qmgr": "QM1", "outcome": "succeed"},
        ],
    }
    path = tmp_path / "w.json"
    path.write_text(json.dumps(spec))
    w = World.load(str(path))
    assert w.name == "payments outage"
    assert [w.put("PAYMENTS.IN", "QMP", n)[0] for n in (1, 2, 3, 4, 5)] == [False] * 3 + [True] * 2
    assert w.put("PAYMENTS.IN", "QMP", 1) == (False, 2053)
    assert w.put("DEADQ.MANUAL", "", 1, **DEST) == (False, 2035)
    # a queues rule wins over original_destination
    assert w.put("APP.IN", "QM1", 1, **DEST) == (True, None)
    assert w.put("OTHER.IN", "QM1", 1, dest_q="OTHER.IN", dest_qmgr="QM1",
                 original_reason=2051) == (False, 2051)
    # the JSON form round-trips
    assert World.from_dict(w.to_dict()) == w


@pytest.mark.parametrize(
    "spec,message",
    [
        ({"defualt": "succeed"}, "unknown key"),
        ({"default": "explode"}, "outcome must be 'succeed' or 'fail'"),
        ({"queues": [{"queue": "Q"}]}, "no 'outcome'"),
        ({"queues": [{"queue": "Q", "outcome": "fail", "reason": "MQRC_NO_SUCH"}]}, "MQRC_NO_SUCH"),
        ({"queues": [{"queue": "Q", "outcome": "fail", "fail_first": -1}]}, "fail_first"),
        ({"queues": [{"queue": "Q", "outcome": "succeed", "fail_first": 2}]}, "fail_first"),
        ({"queues": {"queue": "Q"}}, "must be a list"),
        ([], "expected a JSON object"),
    ],
)
def test_bad_world_specs_are_refused(spec, message):
    with pytest.raises(UsageError, match=message):
        World.from_dict(spec)


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(UsageError, match="neither 'optimistic', 'pessimistic' nor a readable"):
        World.load(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError, match="not JSON"):
        World.load(str(bad))
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"default": 3}')
    with pytest.raises(UsageError, match="wrong.json"):
        World.load(str(wrong))


def test_queue_rules_use_generic_patterns():
    rule = QueueRule("APP.?N", "QM*", PutOutcome("fail", 2053))
    assert rule.applies("APP.IN", "QM1")
    assert not rule.applies("APP.IN", "")  # QM* needs the letters QM
    assert QueueRule().applies("ANY", "")  # '*' matches a blank queue manager


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["succeed", "fail"]), st.one_of(st.none(), st.integers(0, 6)),
       st.integers(0, 8), st.integers(1, 8))
def test_first_success_is_the_closed_form_of_trying_one_by_one(outcome, fail_first, before, tries):
    if outcome == "succeed":
        fail_first = None
    put = PutOutcome(outcome, ORIGINAL, fail_first)
    one_by_one = next(
        (a for a in range(1, tries + 1) if put.result(before + a, 2053)[0]), None)
    assert put.first_success(before, tries) == one_by_one
