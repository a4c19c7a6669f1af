"""Expired-message build-up detector (dlqlens/detect/expiry.py) on hand-built frames."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from detect_frames import frame, msgid, row

from tests.findings_rows import collect_findings
from dlqlens.detect import expiry
from dlqlens.mq.constants import MQRO

pytestmark = pytest.mark.spark

DLQ1 = "QM.T_SYSTEM.DEAD.LETTER.QUEUE.1.raw"


def test_remaining_expiry_curve_and_reports(spark):
    # capture time = latest put in the capture: 100 s after T0
    rows = [row("QM.T_DLQ.raw", i, reason=2051, dest_qname="RATES.IN", put=i, dlh_put=i,
                expiry=600 * i,  # tenths: message i has 60*i seconds left
                report=MQRO["MQRO_EXPIRATION_WITH_DATA"] if i <= 2 else 0)
            for i in range(1, 13)]
    rows.append(row("QM.T_DLQ.raw", 13, reason=2053, dest_qname="X", put=100,
                    dlh_put=100))  # no expiry
    [f] = collect_findings(expiry.detect(frame(spark, rows)))
    ev = json.loads(f.evidence)
    assert f.kind == "expiry_buildup" and f.queues == ["DLQ"]
    assert ev["depth"] == 13 and ev["finite_expiry"] == 12
    assert ev["capture_time"] == "2024-03-15T08:01:40.000000Z"
    assert ev["report_requested"] == 2
    curve = {p["after_seconds"]: p["expired_in_depth"] for p in ev["curve"]}
    assert curve[0] == 0 and curve[60] == 1 and curve[300] == 5 and curve[900] == 12
    assert ev["expiring_soon"] == 12 and f.severity == "critical"  # 12/13 within the hour: about to be lost
    assert ev["first_expiry"] == "2024-03-15T08:02:40.000000Z"
    assert f.window_end == datetime(2024, 3, 15, 8, 13, 40)
    assert sorted(m.message_number for m in f.messages) == list(range(1, 13))
    # an explicit capture time moves every expiry instant
    [g] = collect_findings(expiry.detect(frame(spark, rows), capture_time="2024-03-15T09:00:00Z"))
    assert json.loads(g.evidence)["first_expiry"] == "2024-03-15T09:01:00.000000Z"
    # a shorter horizon makes the queue less dominated
    [h] = collect_findings(expiry.detect(frame(spark, rows), soon=120))
    assert json.loads(h.evidence)["expiring_soon"] == 2 and h.severity == "medium"
    assert expiry.detect(frame(spark, rows), min_messages=13).findings.count() == 0


def test_messages_vanished_by_expiry_between_snapshots(spark):
    dlq2 = "QM.T_SYSTEM.DEAD.LETTER.QUEUE.2.raw"
    first = [row(DLQ1, i, msg_id=msgid(i), reason=2051, dest_qname="R", put=i, dlh_put=i,
                 expiry=100)
             for i in range(1, 11)]  # capture 1 at t=10: each has 10 s left -> expire by t=20
    first.append(row(DLQ1, 11, msg_id=msgid(11), reason=2051, dest_qname="R", put=10, dlh_put=10,
                     expiry=-1))   # unlimited: its disappearance is not expiry
    first.append(row(DLQ1, 12, msg_id=msgid(12), reason=2051, dest_qname="R", put=10, dlh_put=10,
                     expiry=100000))  # still alive at capture 2, yet gone: processed
    second = [row(dlq2, 1, msg_id=msgid(1), reason=2051, dest_qname="R", put=1, dlh_put=1,
                  expiry=50)]
    second += [row(dlq2, j, msg_id=msgid(100 + j), reason=2051, dest_qname="R", put=60, dlh_put=60,
                   expiry=-1) for j in range(2, 4)]
    qmap = {DLQ1: "DLQ", dlq2: "DLQ"}
    found = {json.loads(f.evidence)["source"]: json.loads(f.evidence)
             for f in collect_findings(expiry.detect(frame(spark, first + second),
                                                     capture_queues=qmap, min_messages=1))}
    ev = found[DLQ1]
    assert ev["queue"] == "DLQ" and ev["next_capture"] == dlq2
    assert ev["vanished_by_expiry"] == 9 and ev["vanished_otherwise"] == 2
    assert found[dlq2]["next_capture"] is None and found[dlq2]["finite_expiry"] == 1


def test_snapshots_are_of_one_queue_manager_and_queue(spark):
    """Banner entries (queue manager, queue) chain only captures of the same
    queue manager; a banner without one (amqsbcg) chains nothing; a plain
    name chains by name."""
    a, b = "a.dmp", "b.dmp"
    rows = [row(a, 1, msg_id=msgid(1), reason=2051, dest_qname="R", put=1, dlh_put=1, expiry=100),
            row(b, 1, msg_id=msgid(2), reason=2051, dest_qname="R", put=20, dlh_put=20, expiry=100)]

    def next_capture(qmap):
        found = collect_findings(expiry.detect(frame(spark, rows), capture_queues=qmap, min_messages=1))
        evs = {json.loads(f.evidence)["source"]: json.loads(f.evidence) for f in found}
        assert {ev["queue"] for ev in evs.values()} == {"SYSTEM.DEAD.LETTER.QUEUE"}
        return evs[a]["next_capture"]

    dlq = "SYSTEM.DEAD.LETTER.QUEUE"
    assert next_capture({a: ("QM1", dlq), b: ("QM2", dlq)}) is None
    assert next_capture({a: ("QM1", dlq), b: ("QM1", dlq)}) == b
    assert next_capture({a: (None, dlq), b: (None, dlq)}) is None
    assert next_capture({a: dlq, b: dlq}) == b


def test_file_names_give_the_queue_manager_of_a_snapshot(spark):
    """<qmgr>_<queue> file names chain snapshots of one queue manager's queue,
    also under a banner that names only the queue (amqsbcg)."""
    def chained(first, second, qmap=None):
        rows = [row(first, 1, msg_id=msgid(1), reason=2051, dest_qname="R", put=1, dlh_put=1,
                    expiry=100),
                row(second, 1, msg_id=msgid(2), reason=2051, dest_qname="R", put=20, dlh_put=20,
                    expiry=100)]
        found = collect_findings(expiry.detect(frame(spark, rows), capture_queues=qmap, min_messages=1))
        evs = {json.loads(f.evidence)["source"]: json.loads(f.evidence) for f in found}
        assert {ev["queue"] for ev in evs.values()} == {"DLQ"}
        return evs[first]["next_capture"] == second

    assert chained("s1/QM1_DLQ.bcg", "s2/QM1_DLQ.bcg")
    assert not chained("s1/QM1_DLQ.bcg", "s2/QM2_DLQ.bcg")
    banner = {"s1/QM1_DLQ.bcg": (None, "DLQ"), "s2/QM1_DLQ.bcg": (None, "DLQ"),
              "s2/QM2_DLQ.bcg": (None, "DLQ"), "s1/dump.bcg": (None, "DLQ"),
              "s2/dump.bcg": (None, "DLQ")}
    assert chained("s1/QM1_DLQ.bcg", "s2/QM1_DLQ.bcg", banner)
    assert not chained("s1/QM1_DLQ.bcg", "s2/QM2_DLQ.bcg", banner)
    assert not chained("s1/dump.bcg", "s2/dump.bcg", banner)


def test_bad_parameters_are_refused(spark):
    df = frame(spark, [row(DLQ1, 1)])
    for kw in ({"min_messages": 0}, {"soon": -1}, {"dominance": 0}, {"dominance": 1.5}):
        with pytest.raises(ValueError):
            expiry.detect(df, **kw)


def test_a_mapping_of_thousands_of_files(spark):
    """The command line maps every file with a banner: a folder of thousands
    of dumps is a join, not thousands of nested expressions."""
    from pyspark.sql import functions as F

    from dlqlens.detect.common import with_capture_queues

    qmap = {f"dumps/d{i}.dmp": (f"QM{i % 3}", "DLQ") for i in range(3000)}
    qmap["d7.dmp"] = "BY.BASE.NAME"  # a base name and a full path both name d7: the path wins
    qmap["other.dmp"] = "BY.BASE.NAME"
    df = spark.createDataFrame([("dumps/d7.dmp",), ("x/other.dmp",), ("QM9_APP.Q.raw",)],
                               "source string")
    got = {r.source: (r.capture_queue, r.capture_key)
           for r in with_capture_queues(df, qmap).collect()}
    assert got == {"dumps/d7.dmp": ("DLQ", "QM1|DLQ"),
                   "x/other.dmp": ("BY.BASE.NAME", "BY.BASE.NAME"),
                   "QM9_APP.Q.raw": ("APP.Q", "QM9|APP.Q")}
    assert with_capture_queues(df, qmap).where(F.col("capture_queue").isNull()).count() == 0


def test_a_given_capture_time_is_utc_whatever_the_driver_time_zone(spark, monkeypatch):
    """A naive capture time is UTC: the literal does not depend on the Python process's TZ
    (``F.lit`` of a naive datetime would read it in the driver's local zone)."""
    import datetime as dt
    import time

    from pyspark.sql import functions as F

    from dlqlens.detect.common import utc_literal

    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        row = spark.range(1).select(
            F.unix_micros(utc_literal(dt.datetime(2024, 3, 15, 8, 30))).alias("naive"),
            F.unix_micros(utc_literal("2024-03-15T10:30:00+02:00")).alias("offset")).first()
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    expected = int(dt.datetime(2024, 3, 15, 8, 30, tzinfo=dt.timezone.utc).timestamp()) * 10**6
    assert row["naive"] == row["offset"] == expected


def test_the_file_name_rule_is_the_regular_expressions_it_replaced(spark):
    """The capture queue and key by file name, now string functions (evaluated for
    every row), against the regular expressions they replaced, on awkward names."""
    from pyspark.sql import functions as F

    from dlqlens.detect.common import CAPTURE_EXTENSIONS, _file_name_queue

    def by_regex(source):
        base = F.regexp_extract(source, r"([^/\\]+)$", 1)
        stem = F.regexp_replace(base, rf"\.(?:{'|'.join(CAPTURE_EXTENSIONS)})$", "")
        named = stem.contains("_")
        queue = F.when(named, F.regexp_extract(stem, r"^[^_]*_(.+)$", 1)).otherwise(stem)
        key = F.when(named, F.concat(F.regexp_extract(stem, r"^([^_]*)_", 1), F.lit("|"),
                                     queue)).otherwise(stem)
        return base, queue, key

    names = ["QM1_SYSTEM.DEAD.LETTER.QUEUE.raw", "/var/mqm/QM.A_APP.IN.dmp", r"C:\dumps\QM_Q.bcg",
             r"mixed/dir\QM2_Q_WITH_UNDERSCORES.qmsg", "dump.bcg", "noext", "QM_", "QM_.raw",
             "_Q.raw", ".raw", "x.RAW", "a.b.raw", "x.q.msg", "x.qmsg", "dir/", "dir\\", "",
             "QM.raw.txt", "x.rawx", "ÉBCDIC_QUEUE.dat", "a/b/c", "QM_Q.", "QM__Q.log", None]
    df = spark.createDataFrame([(n,) for n in names], "source string")
    new, old = _file_name_queue("source"), by_regex(F.col("source"))
    rows = df.select("source", *[c.alias(f"new{i}") for i, c in enumerate(new)],
                     *[c.alias(f"old{i}") for i, c in enumerate(old)]).collect()
    assert len(rows) == len(names)
    for r in rows:
        assert [r[f"new{i}"] for i in range(3)] == [r[f"old{i}"] for i in range(3)], r["source"]
    by_source = {r["source"]: (r["new1"], r["new2"]) for r in rows}
    assert by_source[r"C:\dumps\QM_Q.bcg"] == ("Q", "QM|Q")
    assert by_source["a.b.raw"] == ("a.b", "a.b")
