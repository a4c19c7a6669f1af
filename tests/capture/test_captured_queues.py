"""Where a capture says it was taken from: the dmpmqmsg and amqsbcg banners
(docs/detectors.md, "Which queue a capture holds") and captured_queues over a folder."""

from __future__ import annotations

import pytest

from dlqlens.capture import amqsbcg, dmpmqmsg
from dlqlens.capture.reader import ReadOptions, captured_queues, plan_pieces
from dlqlens.capture.registry import FORMATS
from tests.conftest import DATASETS


def test_dmpmqmsg_banner_names_queue_manager_and_queue():
    head = (b"* QLOAD Version:8.0 Created:Fri Mar 15 06:25:05 2024\n"
            b"* Qmgr  = MQP2\n* Queue = SYSTEM.DEAD.LETTER.QUEUE\n\nA VER 2\n")
    assert dmpmqmsg.banner(head) == ("MQP2", "SYSTEM.DEAD.LETTER.QUEUE")
    assert dmpmqmsg.banner(head.replace(b"\n", b"\r\n")) == ("MQP2", "SYSTEM.DEAD.LETTER.QUEUE")
    # a file written from another file has neither line
    assert dmpmqmsg.banner(b"* QLOAD Version:8.0\n\nA VER 2\n") == (None, None)
    # the first line of each kind counts (files appended to one another)
    assert dmpmqmsg.banner(head + b"* Qmgr  = QM9\n* Queue = OTHER\n") == \
        ("MQP2", "SYSTEM.DEAD.LETTER.QUEUE")


def test_amqsbcg_banner_names_the_queue_only():
    head = b"\nAMQSBCG0 - starts here\n**********************\n \n MQOPEN - 'APP.BOQ'\n \n"
    assert amqsbcg.banner(head) == (None, "APP.BOQ")
    assert amqsbcg.banner(head.replace(b"\n", b"\r\n")) == (None, "APP.BOQ")
    assert amqsbcg.banner(b"\nAMQSBCG0 - starts here\n") == (None, None)


@pytest.mark.parametrize("name", [
    b"", b"A B", b"Q<script>", b"Q'", b"Q\x1b[2J", b"Q" * 49, b"..\\x", "QÉ".encode("latin-1")])
def test_a_banner_name_that_is_no_mq_object_name_is_not_taken(name):
    assert dmpmqmsg.banner(b"* Qmgr  = " + name + b"\n* Queue = " + name + b"\n") == (None, None)
    assert amqsbcg.banner(b" MQOPEN - '" + name + b"'\n") == (None, None)


def test_raw_captures_name_no_queue():
    assert FORMATS["raw"].banner(b"DLQLENS-RAW\x00") == (None, None)


def test_captured_queues_of_the_sample():
    got = captured_queues(plan_pieces([str(DATASETS)], ReadOptions()))
    by_name = {path.rsplit("/", 1)[-1]: v for path, v in got.items()}
    dlq = "SYSTEM.DEAD.LETTER.QUEUE"
    assert by_name == {
        "dlq_aix.dmp": ("QM.BILLING", dlq), "dlq_linux_x86.dmp": ("QM.LEDGER", dlq),
        "dlq_zos_ebcdic1047.dmp": ("MQP2", dlq),
        "dlq_aix_mq7.bcg": (None, dlq), "dlq_linux_x86_mq94.bcg": (None, dlq)}
