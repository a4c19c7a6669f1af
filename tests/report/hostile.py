"""A hostile capture, rules table and MQSC file for the report's tests.

Capture content is untrusted: queue names, application names, reply-to
queues and payloads below carry markup and script (``<script>``, an
``<img onerror>``, ``javascript:`` URLs). Some only raise a dialog
(``alert(1)``), the others set ``window.__pwned``: a report that shows them
as anything but text fails the browser test either way.
"""

from __future__ import annotations

from pathlib import Path

from dlqlens.capture.dmpmqmsg import write_dmpmqmsg
from dlqlens.capture.message import dead_letter
from dlqlens.capture.raw import write_raw

ALERT_SCRIPT = "<script>alert(1)</script>"        # 25 characters: fits PutApplName (28)
ALERT_IMG = "<img src=x onerror=alert(1)>"         # 28
JS_URL = "javascript:alert(1)"
PWN_SCRIPT = "<script>window.__pwned=1</script>"  # 33: fits a queue name (48)
PWN_IMG = "<img src=x onerror=window.__pwned=2>"  # 36
PWN_URL = "javascript:window.__pwned=3"

PAYLOAD = (f"{ALERT_SCRIPT} {ALERT_IMG} <a href=\"{JS_URL}\">click</a> {JS_URL} "
           "<script>window.__pwned=4</script><img src=x onerror=\"window.__pwned=5\">"
           "<iframe src=\"javascript:window.__pwned=6\"></iframe>"
           "<style>body{display:none}</style><link rel=stylesheet href=\"https://example.com/x.css\">"
           ).encode()

#: Strings that must appear as text on the page.
VISIBLE = (PWN_SCRIPT, PWN_IMG, ALERT_SCRIPT, ALERT_IMG)

RULES = f"""* {PWN_SCRIPT} {ALERT_IMG}
INPUTQ(SYSTEM.DEAD.LETTER.QUEUE) RETRYINT(60)
DESTQ('{PWN_SCRIPT}') ACTION(RETRY) RETRY(2)
REASON(MQRC_Q_FULL) ACTION(FWD) FWDQ('{PWN_URL}') HEADER(YES)
DESTQ({ALERT_IMG}) ACTION(DISCARD)
"""

MQSC = f"""* {ALERT_SCRIPT}
DEFINE QLOCAL('{PWN_SCRIPT}') DESCR('{ALERT_IMG} {JS_URL}') BOTHRESH(3) +
       BOQNAME('{PWN_IMG}') REPLACE
DEFINE QLOCAL('HOSTILE.IN') DESCR('<b>bold</b> <script>window.__pwned=7</script>') +
       TRIGGER TRIGTYPE(FIRST) INITQ('{PWN_URL}') PROCESS('{ALERT_SCRIPT}') REPLACE
"""


def _put(day_second: int) -> dict:
    h, rest = divmod(day_second, 3600)
    m, s = divmod(rest, 60)
    return {"PutDate": "20240315", "PutTime": f"{h:02d}{m:02d}{s:02d}00"}


def write_hostile(folder: Path) -> dict:
    """Write the hostile files into ``folder``; returns their paths by kind
    (``capture``: a folder of two captures, ``rules``, ``mqsc``)."""
    captures = folder / "captures"
    captures.mkdir(parents=True, exist_ok=True)
    burst = []  # a reason burst for a hostile queue name: a finding
    for i in range(12):
        t = 10 * 3600 + i
        burst.append(dead_letter(
            {"Format": "MQSTR", "PutApplName": ALERT_IMG, "PutApplType": 6,
             "MsgId": b"BURST" + bytes([i]) * 19,
             "UserIdentifier": "<b>u</b>", "Persistence": 1, **_put(t)},
            {"Reason": 2053, "DestQName": PWN_SCRIPT, "DestQMgrName": "QM.HOSTILE",
             "PutApplName": ALERT_SCRIPT, "PutApplType": 6, **_put(t)},
            PAYLOAD + b" burst %d" % i))
    write_dmpmqmsg(captures / "hostile.dmp", burst, qmgr="QM.HOSTILE", queue=PWN_IMG)
    strays = []  # a few replies refused by a hostile queue, hours apart: in no finding
    for i in range(3):
        t = 11 * 3600 + 600 * i
        strays.append(dead_letter(
            {"Format": "MQSTR", "MsgType": 2, "PutApplName": ALERT_SCRIPT, "PutApplType": 6,
             "MsgId": b"STRAY" + bytes([i]) * 19,
             "ReplyToQ": PWN_URL, "ReplyToQMgr": "QM.HOSTILE", **_put(t)},
            {"Reason": 2035, "DestQName": PWN_IMG, "DestQMgrName": "QM.HOSTILE",
             "PutApplName": ALERT_IMG, "PutApplType": 6, **_put(t)},
            PAYLOAD + b" stray %d" % i))
    write_raw(captures / "strays.raw", strays)
    (folder / "hostile.rul").write_text(RULES, encoding="utf-8")
    (folder / "hostile.mqsc").write_text(MQSC, encoding="utf-8")
    return {"capture": captures, "rules": folder / "hostile.rul", "mqsc": folder / "hostile.mqsc"}
