"""Explanations of single messages (dlqlens.explain), on the datasets and the real captures."""

from __future__ import annotations

import pytest

from dlqlens.capture.reader import read_capture
from dlqlens.explain import explain
from tests.builders import session_time_zone
from tests.conftest import DATASETS


def first(name: str) -> dict:
    return read_capture(DATASETS / name).table.slice(0, 1).to_pylist()[0]


def facts(e) -> dict:
    return dict(e.facts)


def test_channel_dead_letter_queue_full():
    e = explain(first("dlq_linux_x86.raw"))
    assert e.headline.startswith("Dead-lettered with MQRC_Q_FULL (2053) while being put to "
                                 "ORDERS.IN on QM.ORDERS, by amqrmppa (MQAT_UNIX) at 2024-03-11 ")
    f = facts(e)
    assert f["Reason"].startswith("2053 MQRC_Q_FULL: The destination queue already holds MaxQDepth")
    assert f["Retry?"].startswith("Retryable")
    assert "receiving end of a channel" in f["Put on the DLQ by"]
    assert f["Headers"] == "MQDEAD → MQSTR"
    assert f["Payload"].startswith("285 bytes, format MQSTR: '{\"app\":\"web-gateway\"")
    assert "dead-lettered 0.03 s later" in f["Original put"]
    assert (e.source, e.message_number) == (str(DATASETS / "dlq_linux_x86.raw"), 1)


def test_trigger_message_names_the_application():
    f = facts(explain(first("dlq_zos.raw")))
    assert f["Reason"].startswith("265 MQFB_APPL_CANNOT_BE_STARTED")
    assert "trigger monitor" in f["Put on the DLQ by"]
    assert f["Trigger message"] == ("MQTM for queue APP.WORK, process WORK.PROC: start "
                                    "/opt/work/bin/worker (MQAT_CICS)")


def test_reply_to_a_vanished_temporary_queue():
    rows = read_capture(DATASETS / "dlq_linux_x86_mq94.bcg").table.to_pylist()
    row = next(r for r in rows if r["dlh"]["Reason"] == 2085
               and r["dlh"]["DestQName"].startswith("AMQ."))
    f = facts(explain(row))
    assert "temporary dynamic queue" in f["Why that queue is gone"]
    assert f["Original put"].startswith("MQMT_REPLY")
    assert "Why it was refused" not in f


def test_persistent_reply_to_a_temporary_queue():
    rows = read_capture(DATASETS / "dlq_linux_x86_mq94.bcg").table.to_pylist()
    row = next(r for r in rows if r["dlh"]["Reason"] == 2048)
    f = facts(explain(row))
    assert f["Why it was refused"].startswith(f"{row['dlh']['DestQName']} has the name of a "
                                              "temporary dynamic queue")
    assert "nonpersistent messages only" in f["Why it was refused"]
    assert "Why that queue is gone" not in f
    row["dlh"]["DestQName"] = "PRICES.REPLY"  # a predefined queue: no such explanation
    assert "Why it was refused" not in facts(explain(row))


def test_z_os_channel_initiator_is_known_by_its_application_type():
    row = first("dlq_zos_ebcdic1047.dmp")
    assert row["dlh"]["PutApplName"].strip() == "MQP2CHIN"
    assert "receiving end of a channel" in facts(explain(row))["Put on the DLQ by"]
    row["dlh"]["PutApplType"] = 6  # a UNIX application that happens to end in CHIN
    assert "an application" in facts(explain(row))["Put on the DLQ by"]


def test_backout_and_expiry_facts():
    row = first("dlq_zos_ebcdic1047.dmp")
    assert row["md"]["Expiry"] > 0
    f = facts(explain(row))
    assert f["Expiry"].startswith(f"{row['md']['Expiry']} tenths of a second")
    row["md"]["BackoutCount"] = 4
    assert facts(explain(row))["Backouts"].startswith("BackoutCount 4: ")


def test_message_without_a_dead_letter_header(real_captures):
    rows = read_capture(real_captures / "amqsbcg" /
                        "yukun_amqsbcg_MQSTR_local_queue_ccsid1208.txt").table.to_pylist()
    e = explain(rows[0])
    assert e.headline.startswith("No MQDLH")
    assert facts(e)["Payload"] == "15 bytes, format MQSTR: 'Hello MQ world!'"


def test_damaged_message_says_so():
    rows = read_capture(DATASETS / "dlq_aix_mq7.bcg").table.to_pylist()
    row = dict(rows[0], decode_status="truncated",
               decode_issues=[{"code": "data_truncated", "message": "only part of the message"}])
    assert facts(explain(row))["Decoding"] == "truncated: only part of the message"


@pytest.mark.parametrize("name", sorted(p.name for p in DATASETS.iterdir()
                                        if not p.name.endswith(".jsonl")))
def test_every_dataset_message_is_explained(name):
    for row in read_capture(DATASETS / name).table.to_pylist():
        e = explain(row)
        assert e.headline and str(row["dlh"]["Reason"]) in e.headline
        assert e.to_text().count("\n") >= 6


@pytest.mark.spark
def test_spark_explanations_are_in_utc_whatever_the_session_zone(spark):
    """explain_messages on Spark says what explain says on the Arrow row,
    with the session in another time zone."""
    from pyspark.sql import functions as F

    from dlqlens.explain import explain_messages
    from dlqlens.spark.session import load_capture

    path = DATASETS / "dlq_linux_x86.raw"
    expected = explain(first("dlq_linux_x86.raw"))
    with session_time_zone(spark, "America/New_York"):
        [got] = explain_messages(load_capture(spark, path).where(F.col("message_number") == 1))
    assert "UTC" in expected.headline and "2024-03-11 09:12:" in expected.headline
    assert got.headline == expected.headline
    assert dict(got.facts)["Original put"] == dict(expected.facts)["Original put"]
