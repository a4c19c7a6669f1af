"""Replay and diff of rules tables on Spark (dlqlens/rules/replay.py, diff.py, cli.py).

IBM's documented example table (IBM MQ "An example DLQ handler rules table",
its first rules) is replayed over a capture generated here with one message for
every rule's intended case plus the cases no rule takes; the expected fate of
each message is written out below. The processing semantics themselves are tested without Spark
in test_rules_process.py and test_rules_handler.py.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from dlqlens.capture.message import CaptureMessage, dead_letter
from dlqlens.capture.raw import write_raw
from dlqlens.cli import main
from dlqlens.rules import parse
from dlqlens.rules.compile import integer_predicate, string_predicate
from dlqlens.rules.diff import changed, diff, summarize_diff, transitions
from dlqlens.rules.match import match_string
from dlqlens.rules.replay import OUTPUT_COLUMNS, replay, rule_stats, summarize
from dlqlens.spark.session import load_capture

pytestmark = pytest.mark.spark

IBM_TABLE = """\
inputqm(' ') inputq(' ')

REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)

REASON(MQRC_PUT_INHIBITED) ACTION(RETRY) RETRY(5)

MSGTYPE(MQMT_REQUEST) REPLYQM(AAAA.*) +
  ACTION(FWD) FWDQ(DEADQ) FWDQM(&REPLYQM)

DESTQM(bbbb.1) +
  action(fwd) fwdq(&DESTQ) fwdqm(bbbb.2) header(no)
"""

# The same table plus IBM's recommended tail: forward to the reply-to queue when
# there is one, and a final catch-all.
NEW_TABLE = IBM_TABLE + """
REPLYQ(?*) ACTION(FWD) FWDQ(&REPLYQ) FWDQM(&REPLYQM)
ACTION(FWD) FWDQ(REALLY.DEAD.QUEUE) HEADER(YES)
"""

DATAGRAM, REQUEST = 8, 1


def _dl(reason, dest_q, dest_qmgr, *, msg_type=DATAGRAM, reply_q="", reply_qmgr="",
        persistence=0, user="appuser", payload=b"x"):
    return dead_letter(
        {"MsgType": msg_type, "Persistence": persistence, "ReplyToQ": reply_q,
         "ReplyToQMgr": reply_qmgr, "UserIdentifier": user, "Format": "MQSTR",
         "PutApplName": "order-svc", "PutApplType": 6},
        {"Reason": reason, "DestQName": dest_q, "DestQMgrName": dest_qmgr,
         "PutApplType": 6, "PutApplName": "amqrmppa", "PutDate": "20240315",
         "PutTime": "10153157"},
        payload)


def _messages():
    broken = _dl(2053, "APP.IN", "QM1")
    broken.data = b"XXXX" + broken.data[4:]  # StrucId of the MQDLH destroyed
    return [
        # 1: the worked example of test_rules_model.py: Q_FULL for APP.IN on QM1 -> rule 1
        _dl(2053, "APP.IN", "QM1", reply_qmgr="QM2", persistence=1, payload=b"ORDER 42"),
        # 2: put inhibited -> rule 2
        _dl(2051, "APP.OUT", "QM1"),
        # 3: a request whose reply-to queue manager starts with AAAA. -> rule 3
        _dl(2085, "SVC.IN", "QM1", msg_type=REQUEST, reply_q="REPLY.Q", reply_qmgr="AAAA.QM"),
        # 4: destined for queue manager bbbb.1 (folded: BBBB.1) -> rule 4
        _dl(2087, "APP.X", "BBBB.1"),
        # 5: Q_FULL *and* destined for BBBB.1 -> rule 1, then rule 4 when the retries fail
        _dl(2053, "APP.Y", "BBBB.1"),
        # 6: not authorized, a datagram: no rule
        _dl(2035, "APP.IN", "QM1"),
        # 7: not a dead letter at all (no MQDLH)
        CaptureMessage(md={"Format": "MQSTR", "MsgType": DATAGRAM}, data=b"plain message"),
        # 8: lower-case queue manager: DESTQM(bbbb.1) was folded to BBBB.1, no rule
        _dl(2087, "APP.X", "bbbb.1"),
        # 9: request whose reply-to queue manager is AAAA without a dot: no rule
        _dl(2085, "SVC.IN", "QM1", msg_type=REQUEST, reply_q="REPLY.Q", reply_qmgr="AAAA"),
        # 10: an MQDLH that cannot be read
        broken,
    ]


def _fate(tried, rule, action, queue, qmgr, header, disposition, why, seconds):
    return {"tried": [{"rule_index": t[0], "attempts": t[1], "outcome": t[2],
                       "reason": t[3] if len(t) > 3 else None} for t in tried],
            "rule_index": rule, "action": action, "target_queue": queue, "target_qmgr": qmgr,
            "header_kept": header, "disposition": disposition, "left_reason": why,
            "seconds_to_disposition": seconds}


NO_MATCH = _fate([], None, "IGNORE", None, None, None, "left", "no_match", 0)
NO_DLH = _fate([], None, None, None, None, None, "left", "no_dlh", None)

EXPECTED_MATCHED = {1: [1], 2: [2], 3: [3], 4: [4], 5: [1, 4], 6: [], 7: None, 8: [], 9: [],
                    10: None}

EXPECTED = {
    "optimistic": {
        1: _fate([(1, 1, "succeeded")], 1, "RETRY", "APP.IN", "QM1", False, "retried", None, 0),
        2: _fate([(2, 1, "succeeded")], 2, "RETRY", "APP.OUT", "QM1", False, "retried", None, 0),
        3: _fate([(3, 1, "succeeded")], 3, "FWD", "DEADQ", "AAAA.QM", True, "forwarded", None, 0),
        4: _fate([(4, 1, "succeeded")], 4, "FWD", "APP.X", "BBBB.2", False, "forwarded", None, 0),
        5: _fate([(1, 1, "succeeded")], 1, "RETRY", "APP.Y", "BBBB.1", False, "retried", None, 0),
        6: NO_MATCH, 7: NO_DLH, 8: NO_MATCH, 9: NO_MATCH, 10: NO_DLH,
    },
    "pessimistic": {
        # RETRY(5) at RETRYINT 60 s: attempts at 0, 60, ..., 240 s, all failing with 2053
        1: _fate([(1, 5, "failed", 2053)], None, "IGNORE", None, None, None,
                 "left", "rules_exhausted", 240),
        2: _fate([(2, 5, "failed", 2051)], None, "IGNORE", None, None, None,
                 "left", "rules_exhausted", 240),
        3: _fate([(3, 1, "succeeded")], 3, "FWD", "DEADQ", "AAAA.QM", True, "forwarded", None, 0),
        # BBBB.2 is not the original destination (BBBB.1): the forward succeeds
        4: _fate([(4, 1, "succeeded")], 4, "FWD", "APP.X", "BBBB.2", False, "forwarded", None, 0),
        # five failed retries, then rule 4 at the sixth pass (300 s)
        5: _fate([(1, 5, "failed", 2053), (4, 1, "succeeded")], 4, "FWD", "APP.Y", "BBBB.2",
                 False, "forwarded", None, 300),
        6: NO_MATCH, 7: NO_DLH, 8: NO_MATCH, 9: NO_MATCH, 10: NO_DLH,
    },
}


@pytest.fixture(scope="module")
def capture_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("replay") / "ibm_cases.raw"
    write_raw(path, _messages())
    return path


@pytest.fixture(scope="module")
def capture(spark, capture_path):
    return load_capture(spark, capture_path).cache()


def _by_number(df):
    return {r["message_number"]: r.asDict(recursive=True) for r in df.collect()}


def _python_runs(df) -> bool:
    """Whether running ``df`` runs Python in the executors (a Python UDF's node)."""
    plan = df._jdf.queryExecution().executedPlan().toString()
    return "ArrowEvalPython" in plan or "BatchEvalPython" in plan


# small: the fates decided on the driver and looked up in Spark; not small: the vectorised UDF
@pytest.mark.parametrize("small", [True, False], ids=["on_the_driver", "in_a_udf"])
@pytest.mark.parametrize("world", ["optimistic", "pessimistic"])
def test_ibm_example_table_over_one_message_per_case(capture, world, small):
    table = parse(IBM_TABLE)
    assert table.ok
    replayed = replay(table, capture, world, small=small)
    assert _python_runs(replayed) is not small
    assert replayed.columns == list(OUTPUT_COLUMNS) + ["matched"]
    rows = _by_number(replayed)
    assert sorted(rows) == list(range(1, 11))
    for number, expected in EXPECTED[world].items():
        got = {k: rows[number][k] for k in expected}
        assert got == expected, f"message {number}"
        assert rows[number]["matched"] == EXPECTED_MATCHED[number], f"message {number}"
    stats = {r["rule_index"]: r.asDict() for r in rule_stats(replayed, table).collect()}
    summary = summarize(replayed, table)
    assert [ {k: v for k, v in s.items()} for s in summary.rules] == [stats[i] for i in (1, 2, 3, 4)]
    if world == "pessimistic":
        assert {i: (s["matched"], s["first_match"], s["tried"], s["disposed"])
                for i, s in stats.items()} == {
            1: (2, 2, 2, 0), 2: (1, 1, 1, 0), 3: (1, 1, 1, 1), 4: (2, 1, 2, 2)}
        assert summary.fates == {("forwarded", None): 3, ("left", "rules_exhausted"): 2,
                                 ("left", "no_match"): 3, ("left", "no_dlh"): 2}


def test_compiled_matching_agrees_with_the_python_matcher_on_the_capture(capture):
    table = parse(NEW_TABLE)
    rows = replay(table, capture).join(capture.select("message_number", "md", "dlh"),
                                       "message_number").collect()
    for row in rows:
        if row["dlh"] is None:
            assert row["matched"] is None
            continue
        fields = {f"md.{k}": v for k, v in row["md"].asDict().items()}
        fields.update({f"dlh.{k}": v for k, v in row["dlh"].asDict().items()})
        assert row["matched"] == [r.index for r in table.rules if r.matches(fields)]


CHARS = "AB .\\$()é\n'"


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.text(CHARS + "*?", min_size=1, max_size=7), min_size=20, max_size=20),
       st.lists(st.text(CHARS, max_size=6), min_size=30, max_size=30),
       st.integers(6, 8))
def test_spark_string_predicates_are_the_handlers_matching(spark, patterns, values, length):
    df = spark.createDataFrame([(i, v) for i, v in enumerate(values)] + [(len(values), None)],
                               "i int, v string")
    got = df.select("i", *[string_predicate(F.col("v"), p, length).alias(f"p{j}")
                           for j, p in enumerate(patterns)]).orderBy("i").collect()
    for row in got:
        value = values[row["i"]] if row["i"] < len(values) else None
        for j, p in enumerate(patterns):
            want = (set(p.rstrip(" ")) <= {"*"} and p.strip(" ") != "") if value is None \
                else match_string(p, value, length)
            assert row[f"p{j}"] is want, (p, value, length)


def test_integer_predicates(spark):
    df = spark.createDataFrame([(2053,), (2035,), (None,)], "r int")
    got = [tuple(r) for r in df.select(integer_predicate(F.col("r"), 2053),
                                       integer_predicate(F.col("r"), None)).collect()]
    assert got == [(True, True), (False, True), (False, True)]


@pytest.mark.parametrize("small", [True, False], ids=["on_the_driver", "in_a_udf"])
def test_diff_counts_transitions(capture, small):
    diffed = diff(parse(IBM_TABLE), parse(NEW_TABLE), capture, "pessimistic", small=small)
    assert _python_runs(diffed) is not small
    summary = summarize_diff(diffed)
    assert summary.messages == 10
    assert summary.fate_changed == 5 and summary.rule_changed_only == 0
    assert summary.fate_transitions == [("left/no_match", "forwarded", 3),
                                        ("left/rules_exhausted", "forwarded", 2)]
    assert summary.rule_transitions == [
        ("left/no_match", "forwarded", None, 6, 2),
        ("left/rules_exhausted", "forwarded", None, 6, 2),
        ("left/no_match", "forwarded", None, 5, 1),
    ]
    table = [tuple(r) for r in transitions(diffed).collect()]
    assert sum(r[-1] for r in table) == 5
    rows = _by_number(changed(diffed))
    assert sorted(rows) == [1, 2, 6, 8, 9]
    # message 9: the reply-to substitution of the new rule 5
    assert (rows[9]["new"]["target_queue"], rows[9]["new"]["target_qmgr"]) == ("REPLY.Q", "AAAA")
    assert rows[1]["new"]["tried"][0] == {"rule_index": 1, "attempts": 5, "outcome": "failed",
                                          "reason": 2053}
    assert rows[1]["new"]["seconds_to_disposition"] == 300


def test_replay_diff_and_counts_leave_the_callers_session_configuration_alone(spark, capture):
    """A library is handed the session: replay, diff, rule_stats, summarize and match_counts
    (lint's unreached rules) read it, build on it and run on it, but set nothing in it. The
    session here asks for Spark's default code-size limit, which a replay once lowered."""
    from dlqlens.rules.replay import match_counts
    from dlqlens.spark.session import HUGE_METHOD_LIMIT

    key = "spark.sql.codegen.hugeMethodLimit"
    saved = spark.conf.get(key)
    assert saved == str(HUGE_METHOD_LIMIT)  # what get_spark gives its own sessions
    spark.conf.set(key, "65535")
    try:
        before = dict(spark.conf.getAll)
        table = parse(NEW_TABLE)
        replayed = replay(table, capture, "pessimistic")
        replayed.collect()
        rule_stats(replayed, table).collect()
        summarize(replayed, table)
        summarize_diff(diff(parse(IBM_TABLE), table, capture, "pessimistic"))
        assert match_counts(table, capture)[1] == (2, 2)
        assert spark.conf.get(key) == "65535"
        assert dict(spark.conf.getAll) == before
    finally:
        spark.conf.set(key, saved)


def test_cli_replay_diff_and_check_capture(spark, capture_path, tmp_path, capsys):
    old = tmp_path / "ibm.rul"
    old.write_text(IBM_TABLE)
    new = tmp_path / "new.rul"
    new.write_text(NEW_TABLE)
    world = tmp_path / "world.json"
    world.write_text(json.dumps({"queues": [
        {"queue": "APP.IN", "qmgr": "QM1", "outcome": "fail", "reason": 2053, "fail_first": 3}]}))

    # --jsonl: the contract, one object per message in order
    assert main(["rules", "replay", str(old), str(capture_path), "--world", str(world),
                 "--jsonl"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [o["message_number"] for o in lines] == list(range(1, 11))
    for o in lines:
        assert list(o) == list(OUTPUT_COLUMNS)
        assert all(list(t) == ["rule_index", "attempts", "outcome", "reason"] for t in o["tried"])
    first = lines[0]
    assert first["source"] == str(capture_path)
    assert first["tried"] == [{"rule_index": 1, "attempts": 4, "outcome": "succeeded",
                               "reason": None}]
    assert (first["disposition"], first["seconds_to_disposition"]) == ("retried", 180)

    # human output: the per-rule table, then counts by fate
    assert main(["rules", "replay", str(old), str(capture_path), "--world", "pessimistic"]) == 0
    out = capsys.readouterr().out
    assert "world pessimistic" in out
    assert "   4    10 FWD              2         1         2         2         0" in out
    assert "        2  left/rules_exhausted" in out and "        2  left/no_dlh" in out

    assert main(["rules", "diff", str(old), str(new), str(capture_path)]) == 0
    out = capsys.readouterr().out
    assert "10 message(s): 3 change fate" in out
    assert "        3  left/no_match -> forwarded" in out
    assert main(["rules", "diff", str(old), str(new), str(capture_path), "--jsonl"]) == 0
    changed_lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [o["message_number"] for o in changed_lines] == [6, 8, 9]
    assert list(changed_lines[0]) == ["source", "message_number", "old", "new", "fate_changed",
                                      "rule_changed"]

    # check --capture: rules no message reaches first
    assert main(["rules", "check", str(new), "--json", "--capture", str(capture_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    unreached = [f for f in report["lint"] if f["code"] == "unreached-rule"]
    assert [f["rule_index"] for f in unreached] == []  # every rule is someone's first match
    lonely = tmp_path / "lonely.rul"
    lonely.write_text(NEW_TABLE.replace("REPLYQ(?*)", "REPLYQ(NOBODY.*)"))
    assert main(["rules", "check", str(lonely), "--capture", str(capture_path)]) == 0
    out = capsys.readouterr().out
    assert f"{lonely}:13:1: info unreached-rule: rule 5 matches no message" in out

    # a table with errors is not replayed
    bad = tmp_path / "bad.rul"
    bad.write_text("ACTION(FWD)\n")
    assert main(["rules", "replay", str(bad), str(capture_path)]) == 1
    assert "missing-fwdq" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["raw_mqdlh_trunc_mid.bin", "raw_mqdlh_trunc_one_short.bin",
                                  "dmpmqmsg_mqdlh_trunc_mid.dmp"])
def test_a_message_whose_mqdlh_is_cut_short_stays_unprocessed(spark, case):
    """IBM "How the rules table is processed": the handler processes only messages that begin
    with a complete MQDLH. A dead letter whose MQDLH the capture cut short of 172 bytes (message
    2 of these corpus files) is not matched, even by a catch-all: it stays, no_dlh."""
    from tests.conftest import ROOT

    df = load_capture(spark, str(ROOT / "tests" / "hostile" / "corpus" / case))
    cut = df.where("message_number = 2").first()
    assert cut["dlh"] is not None and any(
        i["code"] == "header_truncated" and i["field"].startswith("MQDLH")
        for i in cut["decode_issues"])
    out = {r["message_number"]: r for r in
           replay(parse("ACTION(FWD) FWDQ(ELSEWHERE)\n"), df).collect()}
    assert out[2]["disposition"] == "left" and out[2]["left_reason"] == "no_dlh"
    assert out[2]["matched"] is None and out[2]["action"] is None
    whole = [n for n, r in out.items() if n != 2 and r["disposition"] == "forwarded"]
    assert whole  # the complete dead letters around it are still forwarded


def test_a_small_captures_fates_are_those_of_the_udf_whatever_its_text(spark, tmp_path,
                                                                      monkeypatch):
    """The driver's fates are keyed by Spark's JSON of each input: queue names with quotes,
    backslashes, control and non-ASCII characters (a capture is untrusted text) find their
    own fate; past DRIVER_FATES distinct inputs the UDF decides."""
    import dlqlens.rules.replay as replay_module

    odd = ['Q"1', "Q\\2", "Q\t3", "QÉ\x854", "Q'5\x7f", "REPLY.Q"]  # (latin-1: CCSID 819)
    path = tmp_path / "odd.raw"
    write_raw(path, [_dl(2035, "APP.IN", "QM1", reply_q=q, reply_qmgr="QMR") for q in odd]
              + _messages())
    df = load_capture(spark, path).cache()
    table = parse(NEW_TABLE)
    want = _by_number(replay(table, df, "pessimistic", small=False))
    got = replay(table, df, "pessimistic", small=True)
    assert not _python_runs(got)
    assert _by_number(got) == want
    assert [want[n]["target_queue"] for n in range(1, 7)] == odd  # FWDQ(&REPLYQ)
    assert _by_number(diff(parse(IBM_TABLE), table, df, "pessimistic", small=True)) == \
        _by_number(diff(parse(IBM_TABLE), table, df, "pessimistic", small=False))
    # more distinct inputs than the driver decides: the UDF, the same fates
    monkeypatch.setattr(replay_module, "DRIVER_FATES", 3)
    over = replay(table, df, "pessimistic", small=True)
    assert _python_runs(over)
    assert _by_number(over) == want


def test_whether_a_capture_is_small_is_counted_unless_given(spark, capture, capture_path,
                                                           monkeypatch):
    """small=None: a capture whose rows are at hand (cached here) is counted (one query)
    and a small one's fates decided on the driver, a large one's by the UDF; a capture
    the executors decode (not cached) is not counted: the UDF, where its Python workers
    decode it anyway (a count and the inputs' query would decode it twice more)."""
    import dlqlens.rules.replay as replay_module

    table = parse(IBM_TABLE)
    assert not _python_runs(replay(table, capture))
    decoded_by_executors = load_capture(spark, capture_path, local=False)

    def counted(df):
        raise AssertionError("counted")

    with monkeypatch.context() as patched:
        patched.setattr(replay_module, "small_capture", counted)
        assert _python_runs(replay(table, decoded_by_executors))
    monkeypatch.setattr(replay_module, "small_capture", lambda df: False)
    assert _python_runs(replay(table, capture))
