"""MQ structure field tables: sizes, offsets, and round trips through
``Struct.pack`` / ``Struct.unpack`` (the reference decoder) and
``decode.fixed.decode_fixed`` (the vectorised decoder), for both byte orders
and ASCII, UTF-8 and EBCDIC character sets.

Sizes and offsets are written here as numbers, from IBM MQ's ``cmqc.h``
(MQ 9.4.5: the ``MQ*_LENGTH_*`` constants and the structure declarations), so
that they check the field tables rather than repeat them.
"""

from __future__ import annotations

import struct as pystruct

import numpy as np
import pytest
from tests.builders import FAST
from hypothesis import given
from hypothesis import strategies as st

from dlqlens.decode.fixed import decode_fixed
from dlqlens.mq.structs import (MQBYTE, MQCHAR, MQCIH, MQDH, MQDLH, MQHEADER_PREFIX, MQIIH,
                                MQLONG, MQMD, MQMDE, MQRFH, MQRFH2, MQRMH, MQTM, MQTMC2, MQWIH,
                                MQXQH, STRUCTS)

# --------------------------------------------------------------------------
# sizes and offsets
# --------------------------------------------------------------------------


@pytest.mark.parametrize("struct, version, size", [
    (MQMD, 1, 324), (MQMD, 2, 364), (MQMD, None, 364),
    (MQDLH, None, 172), (MQXQH, None, 428), (MQTM, None, 684),
    (MQTMC2, 1, 684), (MQTMC2, 2, 732), (MQMDE, None, 72), (MQRFH2, None, 36),
    (MQHEADER_PREFIX, None, 32),
    # cmqc.h MQRFH_STRUC_LENGTH_FIXED, MQCIH_LENGTH_1/_2, MQIIH_LENGTH_1,
    # MQDH_LENGTH_1, MQWIH_LENGTH_1, MQRMH_LENGTH_1
    (MQRFH, None, 32), (MQCIH, 1, 164), (MQCIH, 2, 180), (MQIIH, None, 84),
    (MQDH, None, 48), (MQWIH, None, 120), (MQRMH, None, 108),
])
def test_structure_sizes(struct, version, size):
    assert struct.length(version) == size
    assert pystruct.calcsize(struct.struct_format("<", version)) == size
    assert pystruct.calcsize(struct.struct_format(">", version)) == size
    assert struct.numpy_dtype("<", version).itemsize == size


def test_struct_formats_equal_the_cmqc_declarations():
    # cmqc.h tagMQMD, tagMQDLH, tagMQTM, tagMQTMC2
    assert MQMD.struct_format("<", 1) == "<4s7i8s2i24s24si48s48s12s32s32si28s8s8s4s".replace(
        "7i", "iiiiiii").replace("2i", "ii")
    assert MQMD.struct_format(">", 2) == MQMD.struct_format(">", 1) + "24siiii"
    assert MQDLH.struct_format("<") == "<4sii48s48sii8si28s8s8s"
    assert MQTM.struct_format(">") == ">4si48s48s64si256s128s128s"
    assert MQTMC2.struct_format(">") == ">4s4s48s48s64s4s256s128s128s48s"


MQMD_OFFSETS = {  # IBM "MQMD - Message descriptor", cmqc.h tagMQMD
    "StrucId": 0, "Version": 4, "Report": 8, "MsgType": 12, "Expiry": 16, "Feedback": 20,
    "Encoding": 24, "CodedCharSetId": 28, "Format": 32, "Priority": 40, "Persistence": 44,
    "MsgId": 48, "CorrelId": 72, "BackoutCount": 96, "ReplyToQ": 100, "ReplyToQMgr": 148,
    "UserIdentifier": 196, "AccountingToken": 208, "ApplIdentityData": 240,
    "PutApplType": 272, "PutApplName": 276, "PutDate": 304, "PutTime": 312,
    "ApplOriginData": 320, "GroupId": 324, "MsgSeqNumber": 348, "Offset": 352,
    "MsgFlags": 356, "OriginalLength": 360,
}
MQDLH_OFFSETS = {  # IBM "MQDLH - Dead-letter header"
    "StrucId": 0, "Version": 4, "Reason": 8, "DestQName": 12, "DestQMgrName": 60,
    "Encoding": 108, "CodedCharSetId": 112, "Format": 116, "PutApplType": 124,
    "PutApplName": 128, "PutDate": 156, "PutTime": 164,
}
MQTM_OFFSETS = {  # IBM "MQTM - Trigger message"
    "StrucId": 0, "Version": 4, "QName": 8, "ProcessName": 56, "TriggerData": 104,
    "ApplType": 168, "ApplId": 172, "EnvData": 428, "UserData": 556,
}
MQTMC2_OFFSETS = {"Version": 4, "ApplType": 168, "ApplId": 172, "QMgrName": 684}
MQXQH_OFFSETS = {  # IBM "MQXQH - Transmission-queue header"
    "RemoteQName": 8, "RemoteQMgrName": 56, "MsgDesc.StrucId": 104,
    "MsgDesc.Encoding": 128, "MsgDesc.CodedCharSetId": 132, "MsgDesc.Format": 136,
    "MsgDesc.MsgId": 152, "MsgDesc.BackoutCount": 200, "MsgDesc.PutApplName": 380,
    "MsgDesc.PutDate": 408, "MsgDesc.PutTime": 416, "MsgDesc.ApplOriginData": 424,
}
MQMDE_OFFSETS = {  # IBM "MQMDE - Message descriptor extension"
    "StrucId": 0, "Version": 4, "StrucLength": 8, "Encoding": 12, "CodedCharSetId": 16,
    "Format": 20, "Flags": 28, "GroupId": 32, "MsgSeqNumber": 56, "Offset": 60,
    "MsgFlags": 64, "OriginalLength": 68,
}
MQRFH2_OFFSETS = {"StrucLength": 8, "Encoding": 12, "CodedCharSetId": 16, "Format": 20,
                  "Flags": 28, "NameValueCCSID": 32}  # IBM "MQRFH2 - Rules and formatting header 2"
# cmqc.h tagMQCIH, tagMQIIH, tagMQWIH, tagMQRMH, tagMQDH, offsets added up by hand
MQCIH_OFFSETS = {"ReturnCode": 32, "Facility": 76, "Function": 84, "Authenticator": 92,
                 "ReplyToFormat": 108, "NextTransactionId": 144, "Reserved3": 156,
                 "CursorPosition": 164, "Reserved4": 176}
MQIIH_OFFSETS = {"LTermOverride": 32, "Authenticator": 56, "TranInstanceId": 64, "TranState": 80,
                 "Reserved": 83}
MQWIH_OFFSETS = {"ServiceName": 32, "ServiceStep": 64, "MsgToken": 72, "Reserved": 88}
MQRMH_OFFSETS = {"ObjectType": 32, "ObjectInstanceId": 40, "SrcEnvLength": 64,
                 "DestNameOffset": 92, "DataLogicalOffset2": 104}
MQDH_OFFSETS = {"PutMsgRecFields": 32, "RecsPresent": 36, "ObjectRecOffset": 40,
                "PutMsgRecOffset": 44}


@pytest.mark.parametrize("struct, expected", [
    (MQMD, MQMD_OFFSETS), (MQDLH, MQDLH_OFFSETS), (MQTM, MQTM_OFFSETS),
    (MQTMC2, MQTMC2_OFFSETS), (MQXQH, MQXQH_OFFSETS), (MQMDE, MQMDE_OFFSETS),
    (MQRFH2, MQRFH2_OFFSETS), (MQCIH, MQCIH_OFFSETS), (MQIIH, MQIIH_OFFSETS),
    (MQWIH, MQWIH_OFFSETS), (MQRMH, MQRMH_OFFSETS), (MQDH, MQDH_OFFSETS),
], ids=lambda v: getattr(v, "name", ""))
def test_field_offsets_equal_the_ibm_layouts(struct, expected):
    got = {name: struct.offsets[name] for name in expected}
    assert got == expected


def test_versions_and_identifiers():
    assert MQMD.versions == (1, 2)
    assert [f.name for f in MQMD.fields_for(1)][-1] == "ApplOriginData"
    assert [f.name for f in MQMD.fields if f.version == 2] == [
        "GroupId", "MsgSeqNumber", "Offset", "MsgFlags", "OriginalLength"]
    assert MQTMC2.versions == (1, 2)
    assert (MQMD.struc_id, MQDLH.struc_id, MQXQH.struc_id, MQTM.struc_id, MQTMC2.struc_id,
            MQMDE.struc_id, MQRFH2.struc_id) == ("MD  ", "DLH ", "XQH ", "TM  ", "TMC ",
                                                 "MDE ", "RFH ")
    assert (MQDLH.format_name, MQXQH.format_name, MQTM.format_name, MQMDE.format_name,
            MQRFH2.format_name) == ("MQDEAD  ", "MQXMIT  ", "MQTRIG  ", "MQHMDE  ", "MQHRF2  ")
    # cmqc.h MQ*_STRUC_ID and MQFMT_* of the headers with the common prefix
    assert [(s.struc_id, s.format_name) for s in (MQRFH, MQCIH, MQIIH, MQDH, MQWIH, MQRMH)] == [
        ("RFH ", "MQHRF   "), ("CIH ", "MQCICS  "), ("IIH ", "MQIMS   "), ("DH  ", "MQHDIST "),
        ("WIH ", "MQHWIH  "), ("RMH ", "MQHREF  ")]
    # every header with the prefix starts with the same seven fields
    for s in (MQRFH, MQRFH2, MQMDE, MQCIH, MQIIH, MQDH, MQWIH, MQRMH):
        assert s.fields[:7] == MQHEADER_PREFIX.fields
    # every field of every table has a type, a positive length and a meaning
    for s in STRUCTS.values():
        for f in s.fields:
            assert f.type in (MQLONG, MQCHAR, MQBYTE)
            assert f.length > 0 and (f.type != MQLONG or f.length == 4)
            assert f.doc


def test_pack_known_bytes_of_a_dlh():
    # the first 12 bytes of a little-endian DLH: 'DLH ', Version 1, Reason 2053
    b = MQDLH.pack({"Reason": 2053, "Version": 1, "DestQName": "APP.IN"}, "<", "latin-1")
    assert b[:12] == bytes.fromhex("444C4820010000000508 0000".replace(" ", ""))
    assert b[12:18] == b"APP.IN" and b[18:60] == b" " * 42
    b = MQDLH.pack({"Reason": 265, "Version": 1}, ">", "cp500")
    assert b[:12] == bytes.fromhex("C4D3C840" "00000001" "00000109")
    assert b[12:60] == b"\x40" * 48


def test_pack_rejects_a_value_that_does_not_fit():
    with pytest.raises(ValueError, match="DestQName"):
        MQDLH.pack({"DestQName": "Q" * 49}, "<", "latin-1")
    with pytest.raises(ValueError, match="MsgId"):
        MQMD.pack({"MsgId": b"x" * 25}, "<", "latin-1")


# --------------------------------------------------------------------------
# property tests: pack -> unpack and pack -> decode_fixed
# --------------------------------------------------------------------------

CODECS = ("latin-1", "utf-8", "cp037", "cp500", "cp1047", "cp1140")


def _alphabet(codec: str) -> str:
    """Printable characters that encode to one non-NUL byte in ``codec``
    (ASCII only for UTF-8)."""
    if codec == "utf-8":
        return "".join(chr(c) for c in range(0x20, 0x7F))
    out = []
    for b in range(1, 256):
        ch = bytes([b]).decode(codec)
        if ch.isprintable() and ch.encode(codec) == bytes([b]):
            out.append(ch)
    return "".join(out)


ALPHABETS = {c: _alphabet(c) for c in CODECS}

LAYOUTS = [  # (structure, version) for every structure in every layout
    (MQMD, 1), (MQMD, 2), (MQDLH, None), (MQXQH, None), (MQTM, None), (MQTMC2, 1),
    (MQTMC2, 2), (MQMDE, None), (MQRFH2, None), (MQHEADER_PREFIX, None),
]


@st.composite
def struct_values(draw, struct, version, codec):
    """Field values of one structure; characters drawn from ``codec``'s alphabet."""
    out = {}
    for f in struct.fields_for(version):
        if f.type == MQLONG:
            out[f.name] = draw(st.integers(-2**31, 2**31 - 1))
        elif f.type == MQBYTE:
            out[f.name] = draw(st.binary(max_size=f.length))
        else:
            out[f.name] = draw(st.text(ALPHABETS[codec], max_size=f.length))
    return out


def _expected(struct, version, values):
    """What a decoder must give back: characters without trailing blanks,
    bytes zero-padded to the field length."""
    out = {}
    for f in struct.fields_for(version):
        v = values[f.name]
        if f.type == MQCHAR:
            v = v.rstrip(" ")
        elif f.type == MQBYTE:
            v = v.ljust(f.length, b"\0")
        out[f.name] = v
    return out


@st.composite
def rows_of(draw, struct, version):
    n = draw(st.integers(1, 6))
    rows = []
    for _ in range(n):
        bo = draw(st.sampled_from("<>"))
        codec = draw(st.sampled_from(CODECS))
        rows.append((bo, codec, draw(struct_values(struct, version, codec))))
    return rows


@pytest.mark.parametrize("struct, version", LAYOUTS,
                         ids=[f"{s.name}-v{v or 'all'}" for s, v in LAYOUTS])
@FAST
@given(data=st.data())
def test_pack_unpack_and_vectorised_decode_agree(struct, version, data):
    rows = data.draw(rows_of(struct, version))
    size = struct.length(version)
    packed = [struct.pack(vals, bo, codec, version=version) for bo, codec, vals in rows]
    assert all(len(p) == size for p in packed)
    # reference decoder gives the values back
    reference = []
    for (bo, codec, vals), buf in zip(rows, packed):
        got = struct.unpack(buf, bo, codec, version=version)
        assert got == _expected(struct, version, vals)
        reference.append(got)
    # the vectorised decoder (rows with mixed byte orders and codecs) agrees
    block = np.frombuffer(b"".join(packed), np.uint8).reshape(len(rows), size)
    dec = decode_fixed(
        struct, block, version=version,
        big_endian=np.array([bo == ">" for bo, _, _ in rows]),
        codecs=np.array([c for _, c, _ in rows], dtype=object),
        blanks=np.array([" ".encode(c)[0] for _, c, _ in rows], dtype=np.uint8))
    for f in struct.fields_for(version):
        assert dec.columns[f.name].to_pylist() == [r[f.name] for r in reference], f.name
        if f.type == MQLONG:
            assert dec.ints[f.name].tolist() == [r[f.name] for r in reference]
    assert not dec.partial


@FAST
@given(data=st.data())
def test_vectorised_decode_of_structures_cut_short(data):
    """Rows cut short: whole fields present, a character field cut in the
    middle keeps its present part (and is reported), later fields are null."""
    codec = data.draw(st.sampled_from(CODECS))
    bo = data.draw(st.sampled_from("<>"))
    vals = data.draw(struct_values(MQTM, None, codec))
    buf = MQTM.pack(vals, bo, codec)
    cut = data.draw(st.integers(0, MQTM.length()))
    block = np.frombuffer(buf[:cut].ljust(len(buf), b"\0"), np.uint8).reshape(1, -1)
    dec = decode_fixed(MQTM, block, big_endian=np.array([bo == ">"]),
                       codecs=np.array([codec], dtype=object),
                       blanks=np.array([" ".encode(codec)[0]], dtype=np.uint8),
                       available=np.array([cut]))
    for f in MQTM.fields:
        off = MQTM.offsets[f.name]
        got = dec.columns[f.name][0].as_py()
        if off + f.length <= cut:
            assert got == _expected(MQTM, None, vals)[f.name]
            assert not dec.partial.get(f.name, np.zeros(1, bool))[0]
        elif f.type == MQCHAR and off < cut:
            part = buf[off:cut].decode(codec).split("\0")[0].rstrip(" ")
            assert got == part
            assert dec.partial[f.name][0]
        else:
            assert got is None


def test_vectorised_decode_nulls_version_2_fields_of_version_1_rows():
    v1 = MQMD.pack({"Version": 1, "MsgType": 8}, "<", "latin-1", version=2)
    v2 = MQMD.pack({"Version": 2, "MsgSeqNumber": 7, "GroupId": b"G" * 24}, ">", "cp500")
    block = np.frombuffer(v1 + v2, np.uint8).reshape(2, 364)
    dec = decode_fixed(MQMD, block, big_endian=np.array([False, True]),
                       codecs=np.array(["latin-1", "cp500"], dtype=object),
                       blanks=np.array([0x20, 0x40], dtype=np.uint8),
                       version_of_row=np.array([1, 2]))
    assert dec.columns["MsgSeqNumber"].to_pylist() == [None, 7]
    assert dec.columns["GroupId"].to_pylist() == [None, b"G" * 24]
    assert dec.columns["StrucId"].to_pylist() == ["MD", "MD"]
    assert dec.columns["MsgType"].to_pylist() == [8, 0]


@FAST
@given(rows=st.integers(0, 40), width=st.integers(1, 64), data=st.data())
def test_copy_rows_copies_every_byte_of_a_field_cut_from_rows(rows, width, data):
    from dlqlens.decode.fixed import copy_rows

    stride = width + data.draw(st.integers(0, 40))
    start = data.draw(st.integers(0, stride - width))
    buf = np.frombuffer(data.draw(st.binary(min_size=rows * stride, max_size=rows * stride)),
                        dtype=np.uint8).reshape(rows, stride)
    field = buf[:, start:start + width]
    out = copy_rows(field)
    assert out.flags.c_contiguous and out.shape == (rows, width) and out.dtype == np.uint8
    assert out.tobytes() == b"".join(bytes(r) for r in field)
    if not field.flags.c_contiguous:  # a copy, not a view of the rows
        assert not np.shares_memory(out, buf)
    # a column step other than 1 (not a field of a row) still copies exactly
    assert copy_rows(buf[:, ::2]).tobytes() == np.ascontiguousarray(buf[:, ::2]).tobytes()
