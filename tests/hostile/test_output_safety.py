"""Output safety: capture content is untrusted.

* HTML (the summary's ``_repr_html_``) escapes every value that came from a
  message: script and markup payloads in PutApplName, DestQName,
  UserIdentifier, payload text and issue text come out as text;
* terminal text escapes control characters (an ESC sequence in a capture
  cannot rewrite the terminal);
* names inside captures are never used as paths;
* nothing from a capture is evaluated (no eval/exec/pickle/yaml on it).
"""

from __future__ import annotations

import ast
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

import dlqlens
from dlqlens.capture import amqsbcg, dmpmqmsg, raw
from dlqlens.capture.message import dead_letter
from dlqlens.capture.reader import read_capture
from dlqlens.safe import one_line, printable
from dlqlens.explain.summary import CaptureSummary

SCRIPT = "<script>alert(1)</script>"         # 25: fits PutApplName (28)
IMG = "<img src=x onerror=alert(2)>"           # 28: fits DestQName (48)
USER = "<b>'&\"</b>"                           # 11: fits UserIdentifier (12)
PAYLOAD = b'<script>alert("payload")</script><iframe src="//evil">'
STRAY = "<script>document.location='//evil'</script>"


def hostile_message(**md):
    m = {"Format": "MQSTR", "PutApplName": SCRIPT, "UserIdentifier": USER,
         "ReplyToQ": "<svg onload=alert(3)>", "PutDate": "20240315", "PutTime": "10153012"}
    m.update(md)
    return dead_letter(m, {"Reason": 2053, "DestQName": IMG, "DestQMgrName": "<u>QM</u>",
                           "PutApplName": SCRIPT, "PutDate": "20240315",
                           "PutTime": "10153157"}, PAYLOAD, ccsid=819)


def write_all(d: Path) -> list[Path]:
    m = hostile_message()
    paths = [d / "h.bin", d / "h.dmp", d / "h.bcg"]
    raw.write_raw(paths[0], [m, m])
    text = dmpmqmsg.format_message(m)
    paths[1].write_text("* QLOAD Version:8.0\n\n" + text + STRAY + "\n" + text)
    amqsbcg.write_amqsbcg(paths[2], [m])
    return paths


def summary_of(table) -> CaptureSummary:
    """A CaptureSummary built with pandas from decoded rows (the figures the
    Spark ``summarize`` computes, without a JVM)."""
    df = table.to_pandas()
    md = pd.json_normalize(df["md"].tolist()).add_prefix("md.")
    dlh = pd.json_normalize([d or {} for d in df["dlh"].tolist()]).add_prefix("dlh.")
    flat = pd.concat([df.drop(columns=["md", "dlh"]), md, dlh], axis=1)

    def count(cols, names):
        out = flat.groupby(cols, dropna=False).size().reset_index(name="messages")
        return out.rename(columns=dict(zip(cols, names)))

    first_issue = [(i[0]["message"] if len(i) else "") for i in df["decode_issues"]]
    problems = flat.assign(issue=first_issue)[flat["decode_status"] != "ok"][
        ["source", "message_number", "source_line", "source_offset", "decode_status", "issue"]]
    return CaptureSummary(
        framed=len(df), messages=len(df), dropped=pd.DataFrame(columns=["decode_status", "messages"]),
        by_status=count(["decode_status"], ["decode_status"]),
        by_reason=count(["dlh.Reason", "reason_name"], ["Reason", "reason_name"]),
        by_destination=count(["dlh.DestQMgrName", "dlh.DestQName"], ["DestQMgrName", "DestQName"]),
        by_application=count(["md.PutApplName", "md.UserIdentifier", "payload_text"],
                             ["PutApplName", "UserIdentifier", "payload_text"]),
        by_dlq_putter=count(["dlh.PutApplName"], ["PutApplName"]),
        times={k: None for k in ("oldest_put", "newest_put", "oldest_dlq_put", "newest_dlq_put")},
        without_dlh=0, problems=problems, problem_count=len(problems),
        sources=sorted(set(df["source"])))


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: list = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


SAFE_TAGS = {"h3", "h4", "p", "table", "thead", "tbody", "tr", "th", "td"}


def test_decoded_values_carry_the_markup_verbatim(tmp_path):
    rows = read_capture(write_all(tmp_path)).table.to_pylist()
    good = [r for r in rows if r["decode_status"] == "ok"]
    assert len(good) == 5
    for r in good:
        assert r["md"]["PutApplName"] == SCRIPT and r["dlh"]["DestQName"] == IMG
        assert r["md"]["UserIdentifier"] == USER and r["payload_text"] == PAYLOAD.decode()


def test_summary_html_escapes_capture_content(tmp_path):
    res = read_capture(write_all(tmp_path))
    s = summary_of(res.table)
    assert s.problem_count == 1  # the stray <script> line of the dmpmqmsg file
    html = s._repr_html_()
    p = Tags()
    p.feed(html)
    assert p.tags <= SAFE_TAGS, p.tags - SAFE_TAGS
    assert all(name in ("border", "class", "style") for name, _ in p.attrs), p.attrs
    text = "".join(p.text)
    # the values are shown, as text
    for value in (SCRIPT, IMG, USER, PAYLOAD.decode(), "<u>QM</u>"):
        assert value in text, value
    assert "&lt;script&gt;" in html and "<script" not in html and "<img" not in html
    assert STRAY[:30] in text  # the unframed line's issue text, escaped too


@pytest.mark.spark
def test_spark_summary_html_escapes_capture_content(spark, tmp_path):
    from dlqlens.explain.summary import summarize
    from dlqlens.spark import load_capture

    paths = write_all(tmp_path)
    html = summarize(load_capture(spark, [str(p) for p in paths]))._repr_html_()
    p = Tags()
    p.feed(html)
    assert p.tags <= SAFE_TAGS, p.tags - SAFE_TAGS
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert SCRIPT in "".join(p.text)


def test_summary_text_escapes_terminal_controls(tmp_path):
    m = hostile_message(PutApplName="\x1b]0;pwned\x07\x1b[2J", UserIdentifier="a\rb")
    p = tmp_path / "esc.bin"
    raw.write_raw(p, [m])
    res = read_capture(p)
    assert res.table.to_pylist()[0]["md"]["PutApplName"].startswith("\x1b]0;")
    text = summary_of(res.table).to_text()
    assert "\x1b" not in text and "\r" not in text and "\x07" not in text
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in text


def test_printable():
    assert printable("A\x1b[31m\r\n\tB\x85\u2028\x00é") == "A\\x1b[31m\\x0d\n\tB\\x85\\u2028\\x00é"
    # bidirectional overrides and isolates would show the text in another order
    assert printable("Q.\u202eNI.SREDRO\u2066x\u2069\u200f") == \
        "Q.\\u202eNI.SREDRO\\u2066x\\u2069\\u200f"


def test_one_line():
    assert one_line("A\nB\tC\x1b\u202e\u00a0 é") == "A\\nB\\tC\\x1b\\u202e\\xa0 é"
    assert one_line(None) == "" and one_line(2053) == "2053"


def test_rules_diagnostics_escape_terminal_controls():
    from dlqlens.rules import parse

    t = parse("\x1b[31mACTION(IGNORE)\r\n")
    out = "\n".join(d.format("t.rul") for d in t.diagnostics)
    assert "\\x1b[31m" in out and "\x1b" not in out


def test_names_in_captures_are_never_used_as_paths(tmp_path, monkeypatch):
    """Queue, application and user names that look like paths are only data."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    names = {"PutApplName": "../pwned-appl", "ReplyToQ": "../pwned-replyq",
             "UserIdentifier": "../pwned", "ReplyToQMgr": "/tmp/dlqlens-pwned-qm"}
    m = dead_letter({"Format": "MQSTR", **names},
                    {"Reason": 2053, "DestQName": "../pwned-destq",
                     "DestQMgrName": "../../pwned-qm"}, b"../pwned-payload")
    before = sorted(os.listdir(tmp_path))
    for fmt, name in (("raw", "c.bin"), ("dmpmqmsg", "c.dmp"), ("amqsbcg", "c.bcg")):
        p = tmp_path / name
        {"raw": raw.write_raw, "dmpmqmsg": dmpmqmsg.write_dmpmqmsg,
         "amqsbcg": amqsbcg.write_amqsbcg}[fmt](p, [m])
        before.append(name)
        res = read_capture(p)
        summary_of(res.table).to_text()
        summary_of(res.table)._repr_html_()
        (row,) = res.table.to_pylist()
        assert row["md"]["PutApplName"] == "../pwned-appl"
        assert row["source"] == str(p)  # the file read, not a name from inside it
    assert sorted(os.listdir(tmp_path)) == sorted(before) and os.listdir(work) == []
    assert not os.path.exists("/tmp/dlqlens-pwned-qm")


#: Calls that evaluate or deserialise data, and the only places allowed to
#: make them (none reads capture content).
BUILTINS = {"eval", "exec", "compile", "__import__"}
MODULES = {"pickle", "marshal", "yaml", "dill", "shelve", "subprocess", "importlib"}
ALLOWED = {
    ("dlqlens/sim/qmgr.py", "pickle.dump"): "the simulator's own spool files",
    ("dlqlens/sim/qmgr.py", "pickle.load"): "the simulator's own spool files, written "
                                            "earlier in the same run",
    ("dlqlens/spark/session.py", "subprocess.run"): "subprocess.run([java, '-version'])",
    ("dlqlens/cli.py", "importlib.import_module"): "fixed list of CLI modules",
    ("dlqlens/detect/__init__.py", "importlib.import_module"): "the DETECTORS registry",
}


def test_nothing_from_a_capture_is_evaluated():
    root = Path(dlqlens.__file__).parent
    found = {}
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root.parent).as_posix()
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            if isinstance(fn, ast.Name) and fn.id in BUILTINS:
                found.setdefault((rel, fn.id), node.lineno)
            elif isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and (
                    fn.value.id in MODULES or (fn.value.id == "os" and fn.attr in
                                               ("system", "popen", "execv", "execvp"))):
                found.setdefault((rel, f"{fn.value.id}.{fn.attr}"), node.lineno)
    unexpected = {k: v for k, v in found.items() if k not in ALLOWED}
    assert not unexpected, f"evaluating or deserialising calls: {unexpected}"
    # and the allowed pickle is never fed capture bytes: it reads its own spool
    qmgr = (root / "sim" / "qmgr.py").read_text()
    assert "pickle.load(r)" in qmgr and "self.paths" in qmgr


EXPLAIN_TAGS = {"div", "p", "code", "b", "table", "tr", "th", "td",
                "h4", "i", "ol", "ul", "li", "br"}  # the next steps: headings and lists, no links


def test_explanation_html_escapes_capture_content(tmp_path):
    from dlqlens.explain import explain

    rows = [r for r in read_capture(write_all(tmp_path)).table.to_pylist()
            if r["decode_status"] == "ok"]
    for row in rows:
        e = explain(row)
        page = e._repr_html_()
        p = Tags()
        p.feed(page)
        assert p.tags <= EXPLAIN_TAGS, p.tags - EXPLAIN_TAGS
        assert all(name == "style" for name, _ in p.attrs), p.attrs
        text = "".join(p.text)
        for value in (SCRIPT, IMG, USER.strip(), "<u>QM</u>"):
            assert value in text, value
        assert "<script" not in page and "<img" not in page and "<svg" not in page


def test_explanation_text_escapes_terminal_controls(tmp_path):
    from dlqlens.explain import explain

    p = tmp_path / "esc.bin"
    raw.write_raw(p, [hostile_message(PutApplName="\x1b]0;pwned\x07\x1b[2J")])
    text = explain(read_capture(p).table.to_pylist()[0]).to_text()
    assert "\x1b" not in text and "\x07" not in text and "\\x1b]0;pwned" in text


@pytest.mark.spark
def test_browse_widget_escapes_capture_content(spark, tmp_path):
    from dlqlens.widgets import browse
    from dlqlens.spark import load_capture

    paths = write_all(tmp_path)
    df = load_capture(spark, [str(p) for p in paths])
    box = browse(df, source=str(paths[2]))
    pick, number = box.children[0].children
    view = box.children[1]
    assert pick.value == str(paths[2]) and number.max == 1
    first = view.value
    assert "&lt;script&gt;" in first and "<script" not in first and "<img" not in first
    pick.value = str(paths[0])  # the raw capture: two messages
    assert number.max == 2
    number.value = 2
    assert "#2" in view.value and "<script" not in view.value
    with pytest.raises(ValueError, match="not a capture"):
        browse(df, source="nope.bin")


# --- issue 19 (commands): values a capture could use to forge output lines ----------------

FORGED_DEST = "Q\nReason  2035 FAKE"             # a LF and what looks like another line
FORGED_APPL = "APP\r\nReason  9999\x1b[2J"       # CR LF, then an ESC sequence (28 bytes)
FORGED_QMGR = "QM\x85NEL\x7f"                     # NEL (a line end for str.splitlines) and DEL
FORGED_PUTTER = "amq\x9b31m"                       # a C1 CSI
FORGED_TEXT = "pay\u2028Reason  2035\u202eFAKE\x85\x7f"


def forged_capture(path: Path, n: int = 3) -> Path:
    m = dead_letter({"Format": "MQSTR", "PutApplName": FORGED_APPL, "ReplyToQ": "R\x9bQ",
                     "PutDate": "20240315", "PutTime": "10150000"},
                    {"Reason": 2053, "DestQName": FORGED_DEST, "DestQMgrName": FORGED_QMGR,
                     "PutApplName": FORGED_PUTTER, "PutApplType": 6, "PutDate": "20240315",
                     "PutTime": "10160000", "CodedCharSetId": 1208},
                    FORGED_TEXT.encode("utf-8"))
    raw.write_raw(path, [m] * n)
    return path


RAW_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def assert_no_forged_line(text: str) -> None:
    """No line of ``text`` starts with what a value carried after its line end, and
    nothing a terminal acts on is left raw (LF and TAB aside)."""
    assert not RAW_TERMINAL.search(text), repr(RAW_TERMINAL.search(text).group(0))
    for line in text.split("\n"):
        assert not line.lstrip().startswith("Reason  2035 FAKE"), line
        assert not line.lstrip().startswith("Reason  9999"), line


def test_explain_text_keeps_each_value_on_its_line(tmp_path, capsys):
    from dlqlens.cli import main

    path = forged_capture(tmp_path / "forged.raw")
    assert main(["explain", str(path), "-m", "1"]) == 0
    out = capsys.readouterr().out
    assert_no_forged_line(out)
    assert "Was going to       Q\\nReason  2035 FAKE on QM\\x85NEL\\x7f\n" in out
    assert "by APP\\r\\nReason  9999\\x1b[2J (MQAT_" in out


def test_summary_tables_keep_each_row_on_its_line(tmp_path):
    """A NEL or U+2028 in a value was a line end for the table's splitlines (a row cut in
    two, the second half unindented); a LF was escaped by pandas only."""
    table = read_capture(forged_capture(tmp_path / "forged.raw")).table
    text = summary_of(table).to_text()
    assert_no_forged_line(text)
    part = text.split("Messages by destination")[1].split("\n\n")[0].split("\n")
    assert len(part) == 4  # title, underline, header, one row
    assert part[3].split() == ["QM\\x85NEL\\x7f", "Q\\nReason", "2035", "FAKE", "3"]
    assert "pay\\u2028Reason  2035\\u202eFAKE\\x85\\x7f" in text


def test_decode_jsonl_escapes_what_json_may_carry_raw(tmp_path, capsys):
    """C1 controls, DEL, U+2028 and U+202E are written as \\uNNNN (valid JSON, same values);
    other non-ASCII characters stay UTF-8."""
    from dlqlens.cli import main

    path = forged_capture(tmp_path / "forged.raw", n=1)
    assert main(["decode", str(path), "--jsonl"]) == 0
    out = capsys.readouterr().out
    assert not RAW_TERMINAL.search(out.replace("\n", ""))
    assert out.count("\n") == 1
    obj = json.loads(out)
    assert obj["dlh"]["DestQName"] == FORGED_DEST and obj["dlh"]["DestQMgrName"] == FORGED_QMGR
    assert obj["payload_text"] == FORGED_TEXT and obj["md"]["PutApplName"] == FORGED_APPL
    assert '"DestQMgrName":"QM\\u0085NEL\\u007f"' in out and "\\u202e" in out
    assert "\\u2028" in out and '"PutApplName":"amq\\u009b31m"' in out
    # explain --jsonl: the same escaping
    assert main(["explain", str(path), "--jsonl"]) == 0
    out = capsys.readouterr().out
    assert not RAW_TERMINAL.search(out.replace("\n", "")) and out.count("\n") == 1
    assert json.loads(out)["facts"]


def test_json_text_is_the_same_json():
    from dlqlens.safe import json_dumps, json_text

    value = {"q": "A\u202eB\x85\x7f\u2028\u2029\x1b\x00\t\n\r é 店 \u200f"}
    text = json.dumps(value, ensure_ascii=False)
    safe = json_text(text)
    assert json.loads(safe) == value and not RAW_TERMINAL.search(safe)
    assert "é 店" in safe and json_dumps(value) == safe


def test_triggers_evaluate_escapes_names_from_the_definitions(tmp_path, capsys):
    from dlqlens.cli import main

    name = "W\x1b[2J\u202e"
    defs = tmp_path / "qm.mqsc"
    defs.write_text("DEFINE QLOCAL('APP.INITQ')\nDEFINE PROCESS('P') APPLICID('x')\n"
                    f"DEFINE QLOCAL('{name}') TRIGGER TRIGTYPE(EVERY) INITQ('APP.INITQ') "
                    "PROCESS('P')\n", encoding="utf-8")
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({"t": 0, "event": "monitor_start", "queue": "APP.INITQ"}) + "\n"
                      + json.dumps({"t": 1, "event": "put", "queue": name}) + "\n",
                      encoding="utf-8")
    argv = ["triggers", "evaluate", "--queue-defs", str(defs), "--events", str(events)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert not RAW_TERMINAL.search(out)
    assert "put W\\x1b[2J\\u202e " in out and "TRIGGER EVERY" in out
    assert main(argv + ["--jsonl"]) == 0
    out = capsys.readouterr().out
    assert not RAW_TERMINAL.search(out.replace("\n", ""))
    assert [json.loads(x)["queue"] for x in out.splitlines()] == [name, name]


@pytest.mark.spark
def test_spark_verbs_keep_forged_values_on_their_line(spark, tmp_path, capsys):
    """summary (with the findings), detect (text and JSON) and rules replay --jsonl on a
    capture whose names carry line ends and terminal controls."""
    from dlqlens.cli import main

    path = forged_capture(tmp_path / "forged.raw", n=12)
    rules = tmp_path / "t.rul"
    rules.write_text("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(3)\nACTION(IGNORE)\n")
    outs = {}
    for name, argv in (("summary", ["summary", str(path)]), ("detect", ["detect", str(path)]),
                       ("detect-jsonl", ["detect", str(path), "--jsonl"]),
                       ("replay-jsonl", ["rules", "replay", str(rules), str(path), "--jsonl"])):
        assert main([*argv, "--master", "local[1]"]) == 0, argv
        outs[name] = out = capsys.readouterr().out
        if name.endswith("jsonl"):
            assert out and not RAW_TERMINAL.search(out.replace("\n", "")), name
        else:
            assert_no_forged_line(out)
    assert "Q\\nReason  2035 FAKE" in outs["summary"]  # the summary's tables and findings
    assert "Q\\nReason  2035 FAKE" in outs["detect"]
    findings = [json.loads(x) for x in outs["detect-jsonl"].splitlines()]
    assert findings and all(isinstance(f, dict) for f in findings)
    replayed = [json.loads(x) for x in outs["replay-jsonl"].splitlines()]
    assert len(replayed) == 12
    assert {(r["target_queue"], r["target_qmgr"]) for r in replayed} == {(FORGED_DEST, FORGED_QMGR)}
