"""The mqcapture source reads a pcap capture of MQ client traffic, the
``network`` column included (Spark's timestamp and struct conversion)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlqlens.spark import load_capture

pytestmark = pytest.mark.spark

GOLDEN = Path(__file__).resolve().parents[1] / "capture" / "pcap_golden"


def test_pcap_capture_loads_with_its_network_column(spark):
    df = load_capture(spark, str(GOLDEN / "get_tshm_be_reordered.pcap"))
    rows = df.select("message_number", "capture_format", "network").orderBy(
        "message_number").collect()
    assert len(rows) == 12 and {r["capture_format"] for r in rows} == {"pcap"}
    net = rows[0]["network"]
    assert (net["verb"], net["direction"], net["queue_name"], net["server_port"]) == \
        ("MQGET", "from_qmgr", "SYSTEM.DEAD.LETTER.QUEUE", 1414)
    assert net["packet_ts"] is not None
