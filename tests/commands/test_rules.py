"""``dlqlens rules check`` (dlqlens/commands/rules.py)."""

from __future__ import annotations

import argparse
import json

import pytest

from dlqlens.errors import RulesError
from dlqlens.commands import rules as rules_commands


def run(argv, capsys):
    parser = argparse.ArgumentParser(prog="dlqlens")
    sub = parser.add_subparsers(dest="command")
    rules_commands.register(sub)
    args = parser.parse_args(argv)
    status = args.func(args)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.rul"
    path.write_text(
        "INPUTQ(MY.DLQ) RETRYINT(30)\n"
        "REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\n"
        "DESTQM(qm1) ACTION(IGNORE)\n"
        "ACTION(FWD) FWDQ(MY.DLQ)\n"
    )
    return path


@pytest.fixture
def bad(tmp_path):
    path = tmp_path / "bad.rul"
    path.write_text("REASON(2085) DISCARD\nACTION(FWD)\n")
    return path


def test_human_output_and_exit_status(good, capsys):
    status, out, err = run(["rules", "check", str(good)], capsys)
    assert status == 0
    lines = out.splitlines()
    prefixes = [
        f"{good}:3:8: warning case-folded: unquoted DESTQM(qm1) is folded",
        f"{good}:3:13: warning ignore-action: ACTION(IGNORE) leaves",
        f"{good}:4:13: warning fwdq-loop: FWDQ(MY.DLQ) is the dead-letter queue",
    ]
    assert len(lines) == len(prefixes)
    for line, prefix in zip(lines, prefixes):
        assert line.startswith(prefix), line
    assert "3 rule(s), 0 error(s), 1 warning(s), 2 lint finding(s)" in err


def test_errors_give_exit_status_1(bad, capsys):
    status, out, _err = run(["rules", "check", str(bad)], capsys)
    assert status == 1
    codes = [line.split(": ")[1] for line in out.splitlines()]
    assert codes == [
        "error missing-action",
        "error unknown-keyword",
        "error missing-fwdq",
    ]


def test_dlq_option_overrides_inputq(good, capsys):
    _status, out, _err = run(["rules", "check", "--dlq", "OTHER.DLQ", str(good)], capsys)
    assert "fwdq-loop" not in out


def test_json_contract(good, capsys):
    status, out, err = run(["rules", "check", "--json", str(good)], capsys)
    assert status == 0 and err == ""
    report = json.loads(out)
    assert list(report) == ["control", "rules", "diagnostics", "lint"]
    assert report["control"] == {
        "INPUTQ": "MY.DLQ", "INPUTQM": " ", "RETRYINT": 30, "WAIT": "YES", "line": 1,
    }
    r1, r2, r3 = report["rules"]
    assert (r1["index"], r1["line"], r1["REASON"], r1["ACTION"], r1["RETRY"]) == (1, 2, 2053, "RETRY", 5)
    assert (r1["DESTQ"], r1["MSGTYPE"], r1["FWDQ"], r1["FWDQM"], r1["HEADER"], r1["PUTAUT"]) == (
        "*", "*", None, " ", "YES", "DEF"
    )
    assert r2["DESTQM"] == "QM1" and r2["specified"] == ["DESTQM", "ACTION"]
    assert (r3["index"], r3["FWDQ"]) == (3, "MY.DLQ")
    (diag,) = report["diagnostics"]
    assert {k: diag[k] for k in ("line", "column", "severity", "code")} == {
        "line": 3, "column": 8, "severity": "warning", "code": "case-folded",
    }
    assert [(f["code"], f["rule_index"]) for f in report["lint"]] == [
        ("ignore-action", 2), ("fwdq-loop", 3),
    ]
    for finding in report["lint"]:
        assert set(finding) >= {"code", "rule_index", "message"}


def test_json_with_errors(bad, capsys):
    status, out, _err = run(["rules", "check", "--json", str(bad)], capsys)
    assert status == 1
    report = json.loads(out)
    assert [(d["code"], d["line"], d["column"], d["severity"]) for d in report["diagnostics"]] == [
        ("missing-action", 1, 1, "error"),
        ("unknown-keyword", 1, 14, "error"),
        ("missing-fwdq", 2, 1, "error"),
    ]
    assert [r["ACTION"] for r in report["rules"]] == [None, "FWD"]
    assert report["control"]["line"] is None and report["control"]["RETRYINT"] == 60


def test_unreadable_file_raises_rules_error(tmp_path, capsys):
    with pytest.raises(RulesError, match="cannot read rules table"):
        run(["rules", "check", str(tmp_path / "nope.rul")], capsys)
    binary = tmp_path / "dump.bin"
    binary.write_bytes(b"\x00\x01")
    with pytest.raises(RulesError, match="not a rules table"):
        run(["rules", "check", str(binary)], capsys)


def test_check_is_required(capsys):
    parser = argparse.ArgumentParser(prog="dlqlens")
    rules_commands.register(parser.add_subparsers(dest="command"))
    with pytest.raises(SystemExit):
        parser.parse_args(["rules"])


def test_through_the_dlqlens_command(good, bad, tmp_path, capsys):
    from dlqlens.cli import main

    assert main(["rules", "check", str(good)]) == 0
    capsys.readouterr()
    assert main(["rules", "check", "--json", str(bad)]) == 1
    out, _err = capsys.readouterr()
    assert [r["ACTION"] for r in json.loads(out)["rules"]] == [None, "FWD"]
    assert main(["rules", "check", str(tmp_path / "missing.rul")]) == 2
    _out, err = capsys.readouterr()
    assert err.startswith("dlqlens: error: cannot read rules table ")
    assert len(err.strip().splitlines()) == 1
