"""``dlqlens explain`` is a view of the Explanation objects (no JVM)."""

from __future__ import annotations

import json

from dlqlens.cli import main
from tests.conftest import DATASETS


def test_explain_ends_with_next_steps_and_takes_the_banner_time(capsys):
    path = DATASETS / "dlq_aix.dmp"  # dmpmqmsg: its banner says when and from where
    assert main(["explain", str(path), "-m", "1"]) == 0
    out = capsys.readouterr().out
    assert "At the capture     taken 2024-03-13 22:40:30.000 UTC (from the dmpmqmsg banner, " \
           "taken as UTC)" in out
    steps = out.split("What to check or do next\n", 1)[1]
    assert "DISPLAY QUEUE('INVOICES.IN')" in steps and "(runmqsc QM.BILLING)" in steps


def test_explain_capture_time_and_jsonl(capsys):
    path = DATASETS / "dlq_zos_ebcdic1047.dmp"
    assert main(["explain", str(path), "-m", "2", "--jsonl",
                 "--capture-time", "2024-03-15T06:30:00Z"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    d = json.loads(line)
    assert d["message_number"] == 2 and d["times"]["capture"] == "2024-03-15T06:30:00.000Z"
    assert d["times"]["capture_origin"] == "given"
    assert d["reason"]["name"] == "MQRC_PUT_INHIBITED"
    names = [s["name"] for s in d["next_steps"]]
    assert names == ["MQRC_PUT_INHIBITED", "EXPIRING"]
    # the banner names the DLQ and its queue manager: the handler's command is complete
    handler = [c for s in d["next_steps"] for c in s["commands"] if c["text"].startswith("runmqdlq")]
    assert handler[0]["text"] == "runmqdlq SYSTEM.DEAD.LETTER.QUEUE MQP2 < rules.rul"
    assert handler[0]["complete"] is True
    assert main(["explain", str(path), "-m", "2", "--capture-time", "yesterday"]) == 2
