"""The header field-by-field view and the payload view (no Spark)."""

from __future__ import annotations

from dlqlens.capture import raw
from dlqlens.capture.message import dead_letter
from dlqlens.capture.reader import read_capture
from dlqlens.mq.structs import MQDLH, MQMD, MQTM
from dlqlens.widgets.fields import HEX_BYTES, TEXT_BYTES, fields_html, header_fields, payload_view
from tests.conftest import DATASETS


def first(name: str) -> dict:
    return read_capture(DATASETS / name).table.slice(0, 1).to_pylist()[0]


def by_name(fields, structure):
    return {f.name: f for f in fields if f.structure == structure}


def test_offsets_come_from_the_field_tables_and_codes_are_named():
    row = first("dlq_linux_x86.raw")
    fields = header_fields(row)
    md, dlh = by_name(fields, "MQMD"), by_name(fields, "MQDLH")
    assert md["BackoutCount"].where == f"MD+{MQMD.offsets['BackoutCount']}" == "MD+96"
    assert md["MsgType"].meaning.startswith("MQMT_DATAGRAM — ")
    assert md["Encoding"].meaning.startswith("MQENC_REVERSED")
    assert md["CodedCharSetId"].meaning.startswith("utf-8")
    assert md["Format"].value == "'MQDEAD'" and md["Format"].meaning.startswith(
        "MQFMT_DEAD_LETTER_HEADER")
    assert len(md) == len(MQMD.fields_for(2))  # a version-2 MQMD: every field
    assert dlh["Reason"].offset == MQDLH.offsets["Reason"] == 8
    assert dlh["Reason"].value == "2053" and dlh["Reason"].meaning.startswith("MQRC_Q_FULL: ")
    assert dlh["DestQName"].offset == 12 and dlh["DestQName"].length == 48
    assert dlh["DestQName"].value == "'ORDERS.IN'"
    assert dlh["PutTime"].meaning.startswith(":") is False and "UTC" in dlh["PutTime"].meaning
    assert md["MsgId"].type == "MQBYTE" and len(md["MsgId"].value) == 48  # 24 bytes in hex


def test_a_trigger_message_after_the_mqdlh_is_laid_out_at_its_chain_offset():
    row = first("dlq_zos.raw")
    tm = by_name(header_fields(row), "MQTM")
    at = row["header_chain"][1]["offset"]
    assert at == MQDLH.length() == 172
    assert tm["ApplId"].offset == at + MQTM.offsets["ApplId"]
    assert tm["ApplType"].meaning.startswith("MQAT_CICS")


def test_report_options_and_flags_are_decomposed():
    from dlqlens.widgets.fields import _bits, _report
    from dlqlens.mq import constants as C

    value = (C.MQRO["MQRO_EXCEPTION_WITH_DATA"] | C.MQRO["MQRO_COA"] | C.MQRO["MQRO_PASS_MSG_ID"]
             | 0x10000000)
    assert _report(value) == ("MQRO_EXCEPTION_WITH_DATA + MQRO_COA + MQRO_PASS_MSG_ID + "
                              "0x10000000")
    assert _bits(C.MQMF["MQMF_SEGMENT"] | C.MQMF["MQMF_LAST_SEGMENT"], C.MQMF_NAMES) == \
        "MQMF_SEGMENT + MQMF_LAST_SEGMENT"


def test_payload_is_bounded_and_read_in_its_ccsid(tmp_path):
    p = tmp_path / "big.bin"
    body = "Grüße ".encode("cp500") * 2000  # 12,000 bytes of EBCDIC text
    raw.write_raw(p, [dead_letter({"Format": "MQSTR", "PutDate": "20240315", "PutTime": "10000000"},
                                  {"Reason": 2053, "DestQName": "Q", "Format": "MQSTR",
                                   "CodedCharSetId": 500}, body, ccsid=500)])
    row = read_capture(p).table.to_pylist()[0]
    view = payload_view(row)
    assert view.stated_length == len(body) and len(view.head) == TEXT_BYTES
    assert view.codec == "cp500" and view.text.startswith("Grüße Grüße")
    lines = view.hex_lines()
    assert len(lines) == HEX_BYTES // 16 and lines[0][2].startswith("Gr")
    assert f"first {TEXT_BYTES} bytes shown" in view.to_text()


def test_hostile_field_values_are_escaped_in_html(tmp_path):
    p = tmp_path / "h.bin"
    raw.write_raw(p, [dead_letter({"Format": "MQSTR", "PutApplName": "<script>alert(1)</script>"},
                                  {"Reason": 2053, "DestQName": "<img src=x onerror=alert(2)>"},
                                  b"<script>alert(3)</script>")])
    row = read_capture(p).table.to_pylist()[0]
    page = fields_html(header_fields(row)) + payload_view(row)._repr_html_()
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
