"""The dlqlens command line: the decode --jsonl contract, summary, errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from dlqlens.cli import COMMAND_MODULES, main
from tests.conftest import DATASETS


def test_every_module_with_commands_is_registered():
    import importlib
    import pkgutil

    import dlqlens.commands

    found = set()
    for info in pkgutil.walk_packages(dlqlens.commands.__path__, "dlqlens.commands."):
        if hasattr(importlib.import_module(info.name), "register"):
            found.add(info.name)
    assert found == set(COMMAND_MODULES.values())
    assert "dlqlens.commands.detect" in found  # the walk found the package


def test_decode_jsonl_contract_on_a_real_capture(real_captures, capsys):
    path = real_captures / "amqsbcg" / "yukun_amqsbcg_DLQ_MQDEAD_linux_LE_reason2051.txt"
    assert main(["decode", str(path), "--jsonl"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert obj["source"] == str(path) and obj["message_number"] == 1
    assert obj["dlh"]["Reason"] == 2051 and obj["reason_name"] == "MQRC_PUT_INHIBITED"
    assert obj["dlh"]["DestQName"] == "QL.A" and obj["dlh"]["DestQMgrName"] == "QMW"
    assert obj["dlh"]["PutApplName"] == "amqrmppa"
    assert obj["md"]["MsgId"] == "414D5120514D432020202020202020209093F25002510020"
    assert obj["md"]["ReplyToQMgr"] == "QMC"  # blank padding trimmed
    assert obj["headers"] == ["MQDEAD"]
    assert obj["payload_length"] == 26
    assert obj["payload_text"] == "I send a message from QMC."
    assert obj["payload_hex"] == "I send a message from QMC.".encode().hex().upper()
    assert obj["decode_status"] == "ok" and obj["decode_issues"] == []
    assert obj["dlh_put_ts"] == "2013-01-14T11:24:26.770000Z"
    assert "1 message(s) framed" in err


def test_explain_messages_by_number(capsys):
    path = DATASETS / "dlq_zos.raw"
    assert main(["explain", str(path), "-m", "3", "-m", "2"]) == 0
    out = capsys.readouterr().out
    assert out.index(f"{path} #2\n") < out.index(f"{path} #3\n")  # capture order
    assert out.count("Dead-lettered with MQFB_APPL_CANNOT_BE_STARTED (265)") == 2
    assert "Trigger message    MQTM for queue APP.WORK" in out
    assert main(["explain", str(path), "-m", "2", "-m", "9999"]) == 0
    assert "no message 9999" in capsys.readouterr().err
    assert main(["explain", str(path), "-m", "9999"]) == 1
    assert main(["explain", str(DATASETS), "--limit", "3"]) == 0
    assert capsys.readouterr().out.count("Dead-lettered with ") == 3


def test_decode_reports_drops(tmp_path, capsys):
    from dlqlens.capture.message import dead_letter
    from dlqlens.capture.raw import write_raw

    msgs = [dead_letter({"Format": "MQSTR"}, {"Reason": 2053, "DestQName": "Q"}, b"x")
            for _ in range(3)]
    msgs[1].data = b"JUNK" + msgs[1].data[4:]
    write_raw(tmp_path / "c.raw", msgs)
    assert main(["decode", str(tmp_path / "c.raw"), "--mode", "DROPMALFORMED"]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(x)["message_number"] for x in out.splitlines()] == [1, 3]
    assert "3 message(s) framed" in err and "1 dropped as malformed (1 bad_header)" in err


@pytest.mark.parametrize("argv, text", [
    (["decode", "/nonexistent/capture.raw"], "no such file or directory"),
    (["decode", "--format", "nosuch", str(DATASETS / "dlq_zos.raw")], "unknown capture format"),
])
def test_errors_are_one_line_without_traceback(argv, text):
    proc = subprocess.run([sys.executable, "-m", "dlqlens.cli", *argv],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and text in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.spark
def test_summary_main_job(spark):
    """The README's main job: a readable summary of the bundled captures."""
    from dlqlens.explain.summary import summarize
    from dlqlens.spark.session import load_capture

    s = summarize(load_capture(spark, DATASETS))
    text = s.to_text()
    total = sum(len(p.read_text(encoding="utf-8").splitlines())
                for p in DATASETS.glob("*.expected.jsonl"))  # the golden decodes
    assert total > 500
    assert s.framed == s.messages == total and s.without_dlh == 0
    top = s.by_reason.iloc[0]
    assert (top["Reason"], top["reason_name"]) == (2085, "MQRC_UNKNOWN_OBJECT_NAME")
    assert s.by_reason["messages"].sum() == total
    assert {2053, 2085, 2035, 2051, 2362, 265, 2048} <= set(s.by_reason["Reason"])
    assert {"ORDERS.IN", "INVOICES.IN", "LEDGER.POST"} <= set(s.by_destination["DestQName"])
    # replies to vanished temporary dynamic queues: one row, not one per AMQ.* name
    golden = [json.loads(line) for p in DATASETS.glob("*.expected.jsonl")
              for line in p.read_text(encoding="utf-8").splitlines()]
    amq = {(g["dlh"]["DestQMgrName"], g["dlh"]["DestQName"]) for g in golden
           if g["dlh"] and g["dlh"]["DestQName"].startswith("AMQ.")}
    temp = s.by_destination[s.by_destination["DestQName"] == "AMQ.*"]
    assert len(amq) > 1 and len(temp) == len({qm for qm, _ in amq})
    assert temp["queues"].sum() == len(amq)
    assert (s.by_destination[s.by_destination["DestQName"] != "AMQ.*"]["queues"] == 1).all()
    assert "Messages by reason" in text and "MQRC_Q_FULL" in text
    assert s.times["oldest_dlq_put"] < s.times["newest_dlq_put"]
    assert "<script>" not in s._repr_html_()
    # application types by MQAT name: the channel agent and the z/OS channel initiator
    putters = dict(zip(s.by_dlq_putter["PutApplName"], s.by_dlq_putter["appl_type_name"]))
    assert putters["amqrmppa"] == "MQAT_UNIX" and putters["MQP2CHIN"] == "MQAT_CHANNEL_INITIATOR"
    assert list(s.by_application.columns) == ["PutApplName", "PutApplType", "appl_type_name",
                                              "messages"]


@pytest.mark.spark
def test_summary_ends_with_the_findings(spark):
    """The main job's report ends with the detectors' findings, most severe first."""
    from dlqlens.commands.capture import findings_text
    from dlqlens.spark.session import load_capture

    from dlqlens.capture.reader import ReadOptions, captured_queues, plan_pieces

    df = load_capture(spark, DATASETS).cache()
    try:
        text = findings_text(df, captured_queues(plan_pieces([DATASETS], ReadOptions())))
    finally:
        df.unpersist()
    findings_part, _, no_finding = text.partition("\nMessages in no finding (")
    head, underline, body = findings_part.split("\n", 2)
    assert head.startswith("Findings (") and "most severe first" in head
    assert underline == "-" * len(head)
    blocks = [b for b in body.split("\n\n") if b.strip()]
    assert all(b.startswith("[") for b in blocks)
    kinds = [b.split("]", 1)[1].split()[0] for b in blocks]
    assert int(head[len("Findings ("):].split(",")[0]) == len(blocks)
    assert {"reason_burst", "trigger_failure", "backout_loop", "expiry_buildup",
            "orphaned_reply"} <= set(kinds)
    severities = [b[1:].split("]")[0] for b in blocks]
    order = ["CRITICAL", "HIGH", "MEDIUM", "LOW", "INFO"]
    assert [order.index(x) for x in severities] == sorted(order.index(x) for x in severities)
    assert "MQRC_Q_FULL (2053) for ORDERS.IN on QM.ORDERS" in text
    # the z/OS dump's banner names its queue (its file name does not)
    assert "expiry_buildup  SYSTEM.DEAD.LETTER.QUEUE  " in text
    assert "      Queue    " in text and "SYSTEM.DEAD.LETTER.QUEUE\n      Capture  " in text
    assert "zos_ebcdic1047 (" not in text
    # every finding ends with what to do next; the messages in no finding are counted
    assert all("What to check or do next:" in b for b in blocks)
    m = re.match(r"(\d+) of (\d+); (\d+) in at least one finding\)", no_finding)
    # every message of the sample is in a finding (persistent replies and 2085 strays included)
    assert m and int(m[1]) == 0 and int(m[3]) == int(m[2]) == df.count()
    assert "none: every message is in a finding" in no_finding
    assert {"unknown_destination", "persistent_reply", "trigger_storm"} <= set(kinds)


@pytest.mark.spark
@pytest.mark.parametrize("mode, own_query", [("PERMISSIVE", False), ("DROPMALFORMED", True)])
def test_the_summary_commands_detectors_take_the_newest_puts_from_its_summary(
        spark, monkeypatch, mode, own_query):
    """``dlqlens summary``: in PERMISSIVE mode the summary read every row the
    detectors read, so each capture's newest put comes with its aggregation and
    the detectors plan no query of their own for it; with malformed messages
    dropped from the summary, the detectors compute theirs over every row."""
    import contextlib
    import io

    from dlqlens.detect import common

    planned, newest_puts = [], common.newest_puts
    monkeypatch.setattr(common, "newest_puts", lambda df: planned.append(df) or newest_puts(df))
    path = str(DATASETS.parent / "scenarios" / "permissions_change")
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["summary", path, "--mode", mode]) == 0
    assert "Findings (" in out.getvalue()
    assert bool(planned) == own_query


# --- issue 19: a folder with no readable capture -------------------------------------------

def _notes_folder(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "README.md").write_text("what happened on Tuesday\n", encoding="utf-8")
    (folder / "todo\x1b[31m.txt").write_text("call the MQ team\n", encoding="utf-8")
    (folder / "empty.bin").write_bytes(b"")
    return folder


@pytest.mark.parametrize("verb", [
    ["decode"], ["explain"], ["summary"], ["detect"], ["report"],
    ["rules", "replay", str(DATASETS.parent / "rules" / "shop.rul")],
])
def test_a_folder_with_no_capture_is_an_error_naming_what_was_found(tmp_path, capsys, verb):
    """Refused before any JVM starts (a Spark verb would fail on an empty load)."""
    folder = _notes_folder(tmp_path)
    assert main([*verb, str(folder)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"dlqlens: error: {folder}: no capture to read: found 2 file(s) in "
                          "no capture format (")
    assert str(folder / "README.md") in err and "todo\\x1b[31m.txt" in err  # escaped
    assert "\x1b" not in err
    assert f"1 empty file(s) ({folder / 'empty.bin'})" in err
    assert "--format" in err  # what to do if they are captures after all
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([*verb, str(empty)]) == 2
    err = capsys.readouterr().err
    assert err == (f"dlqlens: error: {empty}: no capture to read: no file found (an empty "
                   "directory?); expected capture files of a format dlqlens reads (raw, "
                   "dmpmqmsg, amqsbcg, pcap, ispf, xxd, hexdump-c, od, hex-stream)\n")


def test_a_named_empty_file_is_an_error(tmp_path, capsys):
    (tmp_path / "dlq.raw").write_bytes(b"")
    assert main(["decode", str(tmp_path / "dlq.raw")]) == 2
    err = capsys.readouterr().err
    assert "no capture to read: found 1 empty file(s)" in err and "--format" not in err


def test_decode_names_each_file_it_does_not_read_and_why(tmp_path, capsys):
    import shutil

    folder = _notes_folder(tmp_path)
    shutil.copy(DATASETS / "dlq_zos.raw", folder / "dlq_zos.raw")
    assert main(["decode", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 85
    lines = err.splitlines()
    assert lines[:3] == [
        f"dlqlens: not read: {folder / 'README.md'}: unknown capture format: expected one of "
        "raw, dmpmqmsg, amqsbcg, pcap, ispf, xxd, hexdump-c, od, hex-stream (raw magic, "
        "'* QLOAD' banner or 'A xxx' lines, amqsbcg banners, pcap/pcapng magic, hex-dump lines "
        "starting with an MQ structure), found b'what happened on Tuesday'",  # (the first 24 bytes)
        f"dlqlens: not read: {folder / 'empty.bin'}: empty file",
        f"dlqlens: not read: {folder}/todo\\x1b[31m.txt: unknown capture format: expected one of "
        "raw, dmpmqmsg, amqsbcg, pcap, ispf, xxd, hexdump-c, od, hex-stream (raw magic, "
        "'* QLOAD' banner or 'A xxx' lines, amqsbcg banners, pcap/pcapng magic, hex-dump lines "
        "starting with an MQ structure), found b'call the MQ team\\n'",
    ]
    assert lines[3].endswith("; 1 empty file(s); 2 file(s) in no capture format not read")
    assert len(lines) == 4


# --- issue 19: arguments out of range ------------------------------------------------------

@pytest.mark.parametrize("argv, text", [
    (["explain", str(DATASETS / "dlq_zos.raw"), "-m", "99999999999"],
     "argument -m/--message: expected a whole number from 1 to 2147483647, found 99999999999"),
    (["explain", str(DATASETS / "dlq_zos.raw"), "-m", "0"],
     "argument -m/--message: expected a whole number from 1 to 2147483647, found 0"),
    (["explain", str(DATASETS / "dlq_zos.raw"), "--limit", "-1"],
     "argument --limit: expected a whole number 1 or more, found -1"),
    (["explain", str(DATASETS / "dlq_zos.raw"), "--limit", "ten\x1b[2J"],
     "argument --limit: expected a whole number 1 or more, found 'ten\\x1b[2J'"),
    (["summary", str(DATASETS), "--top", "0"],
     "argument --top: expected a whole number 1 or more, found 0"),
    (["triggers", "evaluate", "--queue-defs", "q.mqsc", "--events", "e.jsonl", "--trigint", "-5"],
     "argument --trigint: expected a whole number from 0 to 999999999, found -5"),
    (["simulate", "--format", "pcap\x1b]0;x\x07"], "invalid choice: 'pcap\\x1b]0;x\\x07'"),
])
def test_bad_arguments_are_one_line_errors(argv, text, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and text in err
    assert err.endswith(" --help)\n") and "\x1b" not in err


def test_the_largest_message_number_is_looked_for(capsys):
    """The top of -m's range reaches the reader (int32 message_number) and is not found."""
    assert main(["explain", str(DATASETS / "dlq_zos.raw"), "-m", "2147483647"]) == 1
    assert "no message 2147483647 in the capture(s)" in capsys.readouterr().err


# --- issue 19: --version -------------------------------------------------------------------

def test_version_comes_from_the_package_metadata(capsys):
    from importlib.metadata import version as installed

    import dlqlens

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"dlqlens {installed('dlqlens')}\n"
    assert dlqlens.__version__ == installed("dlqlens")


def test_version_without_an_installed_package(monkeypatch, tmp_path):
    """Not installed (a source tree on PYTHONPATH): pyproject.toml beside the package,
    else 'unknown'."""
    import importlib.metadata

    from dlqlens import version as v

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    import tomllib

    from tests.conftest import ROOT

    with open(ROOT / "pyproject.toml", "rb") as fh:
        assert v.version() == tomllib.load(fh)["project"]["version"]
    assert v.source_version(tmp_path) == "unknown"  # no pyproject.toml
    (tmp_path / "pyproject.toml").write_text("[project\nversion =", encoding="utf-8")
    assert v.source_version(tmp_path) == "unknown"  # unreadable
    (tmp_path / "pyproject.toml").write_text('[project]\nversion = "9.8.7"\n', encoding="utf-8")
    assert v.source_version(tmp_path) == "9.8.7"
