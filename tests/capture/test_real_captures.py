"""Real third-party captures (/work/shared/real-captures, see its SOURCES.md),
tested by their known values. Each test skips, naming the missing file, when
the collection is not available.
"""

from __future__ import annotations

import datetime as dt
import os

import pytest
from tests.builders import codes, issue, read_rows, real

from dlqlens.capture.reader import read_capture
from dlqlens.capture.registry import detect_format
from dlqlens.errors import CaptureError

UTC = dt.timezone.utc

YUKUN_DLQ = ("amqsbcg", "yukun_amqsbcg_DLQ_MQDEAD_linux_LE_reason2051.txt")
YESPON_TM = ("triggers-backout",
             "yespon_amqsbcg_DLQ_bigendian_DLH_wrapping_MQTM_MQFB_APPL_CANNOT_BE_STARTED.txt")
RUNMQTRM_LOGS = [
    "yukun_runmqtrm_amqsech_MQTMC2_2013-01-06.txt",
    "yukun_runmqtrm_amqsinq_MQTMC2_x3.txt",
    "yukun_runmqtrm_channel_initiator_jp_annotation.txt",
    "yukun_runmqtrm_remote_trigger_QMC.txt",
    "yukun_runmqtrm_remote_trigger_QMW.txt",
    "yukun_runmqtrm_startup.txt",
]


def test_yukun_dlq_message_reason_2051():
    p = real(*YUKUN_DLQ)
    assert detect_format(str(p)) == "amqsbcg"
    (row,) = read_rows(p)
    assert row["decode_status"] == "ok" and row["decode_issues"] == []
    assert row["capture_format"] == "amqsbcg" and row["message_number"] == 1
    assert row["source_line"] == 5  # ' MQGET of message number 1', after the shell prompt
    md = row["md"]
    assert md["StrucId"] == "MD" and md["Version"] == 2
    assert (md["Encoding"], md["CodedCharSetId"], md["Format"]) == (546, 819, "MQDEAD")
    assert md["MsgId"].hex().upper() == "414D5120514D432020202020202020209093F25002510020"
    assert md["CorrelId"] == bytes(24)
    assert (md["PutDate"], md["PutTime"]) == ("20130114", "11241665")
    assert md["ReplyToQMgr"] == "QMC" and md["ReplyToQ"] == ""
    assert md["UserIdentifier"] == "mqm" and md["PutApplName"] == "amqsput"
    assert md["PutApplType"] == 6 and md["Expiry"] == -1 and md["OriginalLength"] == -1
    assert md["AccountingToken"].hex().upper().startswith("03343936")
    dlh = row["dlh"]
    assert dlh["StrucId"] == "DLH" and dlh["Version"] == 1
    assert dlh["Reason"] == 2051 and row["reason_name"] == "MQRC_PUT_INHIBITED"
    assert dlh["DestQName"] == "QL.A" and dlh["DestQMgrName"] == "QMW"
    assert (dlh["Encoding"], dlh["CodedCharSetId"], dlh["Format"]) == (546, 819, "MQSTR")
    assert dlh["PutApplType"] == 6 and dlh["PutApplName"] == "amqrmppa"
    assert (dlh["PutDate"], dlh["PutTime"]) == ("20130114", "11242677")
    assert row["headers"] == ["MQDEAD"]
    assert row["payload_text"] == "I send a message from QMC."
    assert row["payload"] == b"I send a message from QMC."
    assert row["data_length"] == 198 and row["payload_length"] == 26
    assert row["data_truncated"] is False
    assert row["put_ts"] == dt.datetime(2013, 1, 14, 11, 24, 16, 650000, UTC)
    assert row["dlh_put_ts"] == dt.datetime(2013, 1, 14, 11, 24, 26, 770000, UTC)
    assert row["layout"]["dlh_reconstructed"] is False


def test_yespon_big_endian_dlh_wrapping_a_truncated_trigger_message():
    p = real(*YESPON_TM)
    assert detect_format(str(p)) == "amqsbcg"
    (row,) = read_rows(p)
    md, dlh, tm = row["md"], row["dlh"], row["tm"]
    assert (md["Encoding"], md["CodedCharSetId"], md["Format"]) == (273, 819, "MQDEAD")
    assert md["PutApplType"] == 7 and md["PutApplName"] == "QMMBFE"
    assert dlh["Reason"] == 265 and row["reason_name"] == "MQFB_APPL_CANNOT_BE_STARTED"
    assert dlh["DestQName"] == "SYSTEM.CICS.INITIATION.QUEUE" and dlh["DestQMgrName"] == "QMMBFE"
    assert (dlh["Encoding"], dlh["CodedCharSetId"], dlh["Format"]) == (273, 819, "MQTRIG")
    assert dlh["PutApplName"] == "RUNMQTRM"  # NUL padded in the capture
    assert dlh["PutApplType"] == 6
    assert row["dlh_put_ts"] == dt.datetime(2012, 9, 14, 18, 26, 7, 630000, UTC)
    assert row["headers"] == ["MQDEAD", "MQTRIG"]
    assert tm["StrucId"] == "TM" and tm["Version"] == 1
    assert tm["QName"] == "102881000019_2" and tm["ProcessName"] == "UNIX.PRO2"
    assert tm["TriggerData"] == "" and tm["ApplType"] == 6
    assert tm["ApplId"] == "/bepsmbfe/bin/lib/MQcrecv"  # what the author kept of it
    assert tm["EnvData"] is None and tm["UserData"] is None
    assert row["decode_status"] == "truncated"
    assert row["data_length"] == 856 and row["data_truncated"] is True
    assert [h["status"] for h in row["header_chain"]] == ["ok", "truncated"]
    i = issue(row, "header_truncated")
    assert i["field"] == "MQTM" and i["expected"] == "684 bytes" and i["found"] == "212 bytes"
    assert "ApplId" in i["message"] and "EnvData" in i["message"]
    assert i["line"] == 3 and str(p) in i["message"]
    t = issue(row, "data_truncated")
    assert t["expected"] == "856 bytes" and t["found"] == "384 bytes"


@pytest.mark.parametrize("name, text, ccsid, length", [
    ("yukun_amqsbcg_MQSTR_local_queue_ccsid1208.txt", "Hello MQ world!", 1208, 15),
    ("yukun_amqsbcg_MQSTR_via_channel_linux.txt", "I send a message from QMC.", 819, 26),
])
def test_yukun_string_messages(name, text, ccsid, length):
    p = real("amqsbcg", name)
    (row,) = read_rows(p)
    assert row["decode_status"] == "ok" and row["decode_issues"] == []
    assert row["md"]["Format"] == "MQSTR" and row["md"]["CodedCharSetId"] == ccsid
    assert row["payload_text"] == text and row["payload_ccsid"] == ccsid
    assert row["data_length"] == row["payload_length"] == length
    assert row["dlh"] is None and row["headers"] == [] and row["reason_name"] is None


def test_yukun_empty_queue_gives_no_messages():
    p = real("amqsbcg", "yukun_amqsbcg_empty_queue_no_more_messages.txt")
    assert detect_format(str(p)) == "amqsbcg"
    res = read_capture(p)
    assert len(res) == 0
    assert (res.stats.framed, res.stats.rows, res.stats.dropped, res.stats.files) == (0, 0, 0, 1)
    assert res.stats.empty_files == []  # the file is not empty; the queue was


@pytest.mark.parametrize("name", RUNMQTRM_LOGS)
def test_runmqtrm_logs_hold_no_messages(name):
    """Trigger-monitor logs are not captures: read as amqsbcg output they give
    no message, which is an error (issue 19: a named format that frames
    nothing), and format sniffing refuses them with a one-line error."""
    p = real("triggers-backout", name)
    with pytest.raises(CaptureError) as e:
        read_capture(p, format="amqsbcg")
    assert str(e.value).startswith(str(p)) and "no message framed" in str(e.value)
    with pytest.raises(CaptureError) as e:
        read_capture(p)
    msg = str(e.value)
    assert msg.startswith(str(p)) and "unknown capture format" in msg and "\n" not in msg


def test_real_amqsbcg_directory_reads_in_one_go():
    d = real("amqsbcg")
    rows = read_rows(d)
    assert len(rows) == 3
    assert sorted(r["payload_text"] for r in rows) == [
        "Hello MQ world!", "I send a message from QMC.", "I send a message from QMC."]
    assert all(r["decode_status"] == "ok" for r in rows)
    assert [codes(r) for r in rows] == [[], [], []]


def test_trigger_folder_read_as_a_directory_skips_the_runmqtrm_logs():
    d = real("triggers-backout")
    res = read_capture(d)
    rows = res.table.to_pylist()
    assert [r["reason_name"] for r in rows] == ["MQFB_APPL_CANNOT_BE_STARTED"]
    assert sorted(os.path.basename(f) for f in res.stats.skipped_files) == sorted(RUNMQTRM_LOGS)
    assert res.stats.framed == res.stats.rows == 1
