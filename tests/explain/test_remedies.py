"""The per-reason knowledge table (dlqlens/mq/remedies.py): plain data, well-formed, cited."""

from __future__ import annotations

import string

import pytest

from dlqlens.mq.constants import MQFB, MQRC
from dlqlens.mq.remedies import (LANGUAGES, PLACES, REMEDIES, REPORT_FEEDBACK, SITUATIONS, Check,
                                 Remedy, mqsc_literal, page_title, remedy)

#: Every placeholder a template may use (the module docstring's list).
PLACEHOLDERS = {"queue", "qmgr", "user", "process", "applid", "app_queue", "initq", "dlq",
                "dlq_qmgr", "length", "reason", "reason_text", "expires"}

ENTRIES = sorted({**REMEDIES, **SITUATIONS}.items())


def _fields(template: str) -> set:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def test_keys_are_mq_names_and_the_table_is_plain_data():
    for name in REMEDIES:
        assert name in MQRC or name in MQFB, name
    for name in REPORT_FEEDBACK:
        assert name in MQFB, name
    assert not set(REMEDIES) & set(SITUATIONS)
    assert remedy("MQRC_Q_FULL") is REMEDIES["MQRC_Q_FULL"]
    assert remedy("EXPIRING") is SITUATIONS["EXPIRING"] and remedy("nope") is None


@pytest.mark.parametrize("name, entry", ENTRIES, ids=[n for n, _ in ENTRIES])
def test_entries_are_well_formed(name, entry):
    assert isinstance(entry, Remedy) and entry.name == name
    assert entry.page.startswith("https://")
    assert entry.happened and entry.causes and entry.checks
    texts = [entry.happened, *entry.causes]
    for check in entry.checks:
        assert isinstance(check, Check)
        assert check.language in LANGUAGES and check.on in PLACES
        texts += [check.purpose, check.template]
        if check.language == "mqsc":
            verb = check.template.split()[0]
            assert verb in ("DISPLAY", "ALTER", "DEFINE"), check.template
            # a DISPLAY never changes anything; an ALTER or DEFINE always does
            assert check.change == (verb != "DISPLAY"), check.template
    for text in texts:
        assert _fields(text) <= PLACEHOLDERS, (name, text)


def test_the_reasons_the_brief_names_are_there():
    for name in ("MQRC_Q_FULL", "MQRC_NOT_AUTHORIZED", "MQRC_UNKNOWN_OBJECT_NAME",
                 "MQRC_PUT_INHIBITED", "MQRC_BACKOUT_THRESHOLD_REACHED",
                 "MQRC_PERSISTENT_NOT_ALLOWED", "MQRC_MSG_TOO_BIG_FOR_Q",
                 "MQFB_APPL_CANNOT_BE_STARTED", "MQFB_APPL_TYPE_ERROR", "MQFB_STOPPED_BY_MSG_EXIT"):
        assert name in REMEDIES
    assert not REMEDIES["MQRC_BACKOUT_THRESHOLD_REACHED"].failed_put
    assert "backouts, not a failed put" in REMEDIES["MQRC_BACKOUT_THRESHOLD_REACHED"].happened
    assert REMEDIES["MQRC_Q_FULL"].failed_put and not REMEDIES["MQFB_APPL_TYPE_ERROR"].failed_put


def test_mqsc_literal_doubles_quotes():
    assert mqsc_literal("APP.IN") == "'APP.IN'"
    assert mqsc_literal("O'HARA.Q") == "'O''HARA.Q'"
    assert mqsc_literal("') DELETE QLOCAL('X") == "''') DELETE QLOCAL(''X'"


def test_page_titles_are_ibms():
    assert page_title(2053, "MQRC_Q_FULL") == "2053 (0805) (RC2053): MQRC_Q_FULL"
    assert page_title(2362, "MQRC_BACKOUT_THRESHOLD_REACHED") == \
        "2362 (093A) (RC2362): MQRC_BACKOUT_THRESHOLD_REACHED"
    assert page_title(265, "MQFB_APPL_CANNOT_BE_STARTED") == \
        "MQFB_APPL_CANNOT_BE_STARTED (X'00000109')"


def test_the_documented_severity_scale_is_the_code_s():
    from pathlib import Path

    from dlqlens.detect.findings import SEVERITIES, SEVERITY_SCALE

    page = (Path(__file__).resolve().parents[2] / "docs" / "detectors.md").read_text()
    table = page.split("## Severity", 1)[1]
    assert list(SEVERITY_SCALE) == list(SEVERITIES)
    for severity, meaning in SEVERITY_SCALE.items():
        assert f"| `{severity}` | {meaning} |" in table, severity
