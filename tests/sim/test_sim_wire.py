"""The simulator's message bytes and the decoder follow one header-chaining rule.

The rule is :mod:`dlqlens.mq.chaining` (IBM MQ, "CodedCharSetId (MQLONG)" of
MQDLH: MQCCSI_INHERIT means the data after the header is in the header's own
character set; "MQXQH - Transmission-queue header": the embedded MQMD
describes the data after it; "MQTM - Trigger message": nothing follows an
MQTM). Messages packed by :func:`dlqlens.sim.wire.pack_data` are read back by
the decoder, and what the decoder says follows the last header must be what
the simulator's golden values (:func:`dlqlens.sim.capture.expected_record`) say.
"""

from __future__ import annotations

import pytest
from sim_helpers import msg

from dlqlens import read_capture
from dlqlens.capture.message import CaptureMessage, byteorder_of
from dlqlens.capture.raw import write_raw
from dlqlens.mq import chaining
from dlqlens.mq.structs import MQDLH, MQTM, MQXQH
from dlqlens.sim.capture import expected_record
from dlqlens.sim.wire import HEADER_LENGTH, data_length, pack_data


def _dlh(**kw) -> dict:
    d = {"Version": 1, "Reason": 2053, "DestQName": "APP.IN", "DestQMgrName": "QM1",
         "Encoding": 546, "CodedCharSetId": 1208, "Format": "MQSTR", "PutApplType": 6,
         "PutApplName": "amqrmppa", "PutDate": "20240315", "PutTime": "08000000"}
    d.update(kw)
    return d


def _xqh(**md) -> dict:
    d = {"Version": 1, "RemoteQName": "APP.IN", "RemoteQMgrName": "QM2",
         "MsgDesc.StrucId": "MD  ", "MsgDesc.Version": 1, "MsgDesc.Encoding": 273,
         "MsgDesc.CodedCharSetId": 819, "MsgDesc.Format": "MQSTR"}
    d.update({"MsgDesc." + k: v for k, v in md.items()})
    return d


_TM = {"Version": 1, "QName": "APP.WORK", "ProcessName": "P", "ApplType": 6,
       "ApplId": "/bin/x"}

CHAINS = {
    # the DLH names what follows it
    "dlh": ((("MQDLH", _dlh(Encoding=273, CodedCharSetId=819)),), 273, 819, "MQSTR"),
    # MQCCSI_INHERIT and an undefined integer encoding: as the DLH itself
    "dlh-inherit": ((("MQDLH", _dlh(Encoding=0, CodedCharSetId=-2)),), 785, 500, "MQSTR"),
    # MQCCSI_UNDEFINED (0): as the DLH itself
    "dlh-undefined": ((("MQDLH", _dlh(CodedCharSetId=0)),), 546, 500, "MQSTR"),
    # DLH then XQH: the XQH's embedded MQMD names what follows
    "dlh-xqh": ((("MQDLH", _dlh(Format="MQXMIT", Encoding=273, CodedCharSetId=819)),
                 ("MQXQH", _xqh(Encoding=546, CodedCharSetId=1208))), 546, 1208, "MQSTR"),
    # DLH then TM: nothing after the TM, layout of the TM itself
    "dlh-tm": ((("MQDLH", _dlh(Format="MQTRIG", Encoding=273, CodedCharSetId=819)),
                ("MQTM", _TM)), 273, 819, ""),
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_pack_decode_and_golden_values_agree(tmp_path, name):
    headers, enc, ccsid, fmt = CHAINS[name]
    m = msg("tail text".encode("cp500" if ccsid == 500 else "utf-8"), Encoding=785,
            CodedCharSetId=500, Format="MQDEAD")
    m.headers = headers
    data = pack_data(m.md, m.headers, m.body)
    assert len(data) == data_length(m.headers, m.body)
    md = dict(m.md, MsgId=b"\1" * 24)
    path = tmp_path / f"{name}.raw"
    write_raw(path, [CaptureMessage(md=md, data=data, md_byteorder=byteorder_of(785),
                                    md_codec="cp500")])
    (row,) = read_capture(path).table.to_pylist()
    assert row["decode_status"] == "ok", row["decode_issues"]
    assert (row["payload_encoding"], row["payload_ccsid"]) == (enc, ccsid)
    assert (row["payload_format"] or "") == fmt
    assert row["payload"] == m.body
    rec = {"source": path.name, "message_number": 1, "pattern": None, "md": {}, "dlh": None,
           "tm": None}
    golden = expected_record(rec, m)
    assert golden["headers"] == row["headers"]
    assert golden["payload_text"] == row["payload_text"]


def test_header_lengths_and_formats_are_the_tables():
    assert HEADER_LENGTH["MQDLH"] == MQDLH.length() == 172
    assert HEADER_LENGTH["MQXQH"] == MQXQH.length() == 428
    assert HEADER_LENGTH["MQTM"] == MQTM.length() == 684
    assert [chaining.BY_NAME[k].format for k in ("MQDLH", "MQXQH", "MQTM")] == \
        ["MQDEAD  ", "MQXMIT  ", "MQTRIG  "]


def test_next_layout_scalar_rule():
    dlh = chaining.BY_NAME["MQDLH"]
    assert chaining.next_layout(dlh, _dlh(), 273, 819) == (546, 1208, "MQSTR")
    assert chaining.next_layout(dlh, _dlh(Encoding=0x100, CodedCharSetId=-2), 273, 819) == \
        (273, 819, "MQSTR")  # float part only: the integer encoding is undefined
    assert chaining.next_layout(chaining.BY_NAME["MQTM"], _TM, 546, 1208) == \
        (546, 1208, "        ")
    assert chaining.next_layout(chaining.BY_NAME["MQXQH"], _xqh(), 546, 1208) == \
        (273, 819, "MQSTR")
