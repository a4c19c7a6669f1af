"""The structural suite is generated from the field tables, and its filters read as Spark SQL."""

from __future__ import annotations

from dlqlens.mq import constants as C
from dlqlens.mq import structs as S
from dlqlens.quality.checks import Check, failing_sql
from dlqlens.quality.structural import (STRUCT_COLUMNS, known_reasons, structural_checks,
                                        valid_encodings, versions_of)


def by_name():
    return {c.name: c for c in structural_checks()}


def test_every_struct_column_gets_its_strucid_from_the_table():
    checks = by_name()
    for col, struct in STRUCT_COLUMNS.items():
        assert checks[f"structural.{col}.StrucId"].kwargs["value_set"] == [struct.struc_id.rstrip()]


def test_every_encoding_and_ccsid_field_of_the_tables_is_checked():
    checks = by_name()
    for col, struct in STRUCT_COLUMNS.items():
        for f in struct.fields:
            if "." in f.name:
                continue
            if f.name == "Encoding" or f.name in ("CodedCharSetId", "NameValueCCSID"):
                assert f"structural.{col}.{f.name}" in checks


def test_versions_come_from_the_constants():
    assert versions_of(S.MQMD) == [C.MQMD_VERSION_1, C.MQMD_VERSION_2]
    assert versions_of(S.MQDLH) == [C.MQDLH_VERSION_1]
    assert versions_of(S.MQRFH2) == [C.MQRFH_VERSION_2]


def test_valid_encodings_are_the_mqenc_combinations():
    encodings = valid_encodings()
    assert len(encodings) == 3 * 3 * 5
    for value in (C.MQENC["MQENC_REVERSED"], C.MQENC["MQENC_NORMAL"], C.MQENC["MQENC_S390"],
                  C.MQENC["MQENC_TNS"]):
        assert value in encodings
    assert 0x1000 not in encodings  # a reserved bit


def test_known_reasons_are_the_named_codes():
    reasons = known_reasons()
    assert C.MQRC["MQRC_Q_FULL"] in reasons and C.MQFB["MQFB_EXPIRATION"] in reasons
    assert 0 not in reasons and 1000 not in reasons


def test_fixed_headers_have_their_table_length_in_the_chain():
    checks = by_name()
    assert checks["structural.header_chain.MQDEAD.length"].kwargs["value_set"] == [
        C.MQDLH_LENGTH_1]
    assert checks["structural.header_chain.MQTRIG.length"].kwargs["value_set"] == [
        C.MQTM_LENGTH_1]
    assert checks["structural.rfh2.StrucLength"].kwargs["min_value"] == \
        C.MQRFH_STRUC_LENGTH_FIXED_2


def test_failing_sql_of_each_expectation_kind():
    c = Check("x", "s", "md.Version", "md.Version", "ExpectColumnValuesToBeInSet",
              {"value_set": [1, 2]})
    assert failing_sql(c) == "(md.Version) IS NOT NULL AND NOT ((md.Version) IN (1, 2))"
    c = Check("x", "s", "d", "md.PutDate", "ExpectColumnValuesToMatchRegex", {"regex": "^a'b$"})
    assert failing_sql(c) == "(md.PutDate) IS NOT NULL AND NOT ((md.PutDate) RLIKE '^a\\'b$')"
    c = Check("x", "s", "a", "age_seconds", "ExpectColumnMaxToBeBetween", {"max_value": 60.0})
    assert failing_sql(c) == "(age_seconds) IS NOT NULL AND (age_seconds) > 60.0"
