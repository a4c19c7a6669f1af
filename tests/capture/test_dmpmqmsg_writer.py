"""The dmpmqmsg writer's strict mode: a file that says exactly what the message holds."""

from __future__ import annotations

import pytest

from dlqlens.capture.dmpmqmsg import format_message, write_dmpmqmsg
from dlqlens.capture.reader import read_capture
from dlqlens.capture.message import CaptureMessage
from dlqlens.errors import ExportError


def _msg(**md):
    return CaptureMessage(md={"Format": "MQSTR", **md}, data=b"hello")


@pytest.mark.parametrize("md, field", [
    ({"PutApplName": "x\nA USR root"}, "md.PutApplName"),   # would add an attribute line
    ({"UserIdentifier": "caf\u00e9"}, "md.UserIdentifier"),
    ({"ReplyToQ": "Q" * 49}, "md.ReplyToQ"),
    ({"ApplOriginData": "\x00abc"}, "md.ApplOriginData"),
    ({"MsgId": b"\x01" * 25}, "md.MsgId"),
    ({"Expiry": 2**31}, "md.Expiry"),
    ({"PutDate": None}, "md.PutDate"),
    ({"Version": None}, "md.Version"),   # masked or elided VER: which lines follow is unknown
])
def test_strict_refuses_what_the_text_cannot_hold(md, field, tmp_path):
    with pytest.raises(ExportError) as err:
        format_message(_msg(**md), strict=True)
    assert err.value.field == field
    out = tmp_path / "x.dmp"
    with pytest.raises(ExportError):
        write_dmpmqmsg(out, [_msg(), _msg(**md)], strict=True)
    assert not out.exists() and not (tmp_path / "x.dmp.part").exists()


def test_strict_and_plain_write_the_same_for_a_clean_message(tmp_path):
    m = _msg(PutApplName="app", ApplIdentityData="id", MsgId=b"\x07" * 24)
    assert format_message(m, strict=True) == format_message(m)
    out = tmp_path / "ok.dmp"
    assert write_dmpmqmsg(out, [m, m], strict=True, created="Wed Nov 25 12:00:00 2026") == 2
    assert out.read_text(encoding="ascii").startswith("* QLOAD Version:8.0 Created:Wed Nov 25")
    rows = read_capture(out).table.to_pylist()
    assert [(r["md"]["PutApplName"], r["md"]["ApplIdentityData"], r["md"]["MsgId"], r["payload"])
            for r in rows] == [("app", "id", b"\x07" * 24, b"hello")] * 2
