"""Tests for dlqlens.mq.constants.

The spec-driven tests are an independent cross-check: they parse the markdown
specifications kept outside the repository in /work/shared/spec (override with
DLQLENS_SPEC_DIR) at test time, so the tables in the module cannot drift from
them; they are skipped, with the reason shown, when the specification directory
is not available. The module's own sources are IBM's (``docs/mq-constants.md``).
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dlqlens.mq import constants as c

SPEC_DIR = Path(os.environ.get("DLQLENS_SPEC_DIR", "/work/shared/spec"))

FAMILIES = {
    "MQRC", "MQFB", "IMS_SENSE", "IMS_NACK", "APPL_REASON", "APPL_FEEDBACK",
    "EXIT_PRIVATE", "NONE", "UNKNOWN",
}
INT_TABLES = {
    "MQRC": c.MQRC, "MQFB": c.MQFB, "MQMT": c.MQMT, "MQPER": c.MQPER,
    "MQAT": c.MQAT, "MQRO": c.MQRO, "MQENC": c.MQENC, "MQCCSI": c.MQCCSI,
    "MQMF": c.MQMF, "MQEI": c.MQEI, "MQPRI": c.MQPRI,
}
NAME_MAPS = {
    "MQRC": c.MQRC_NAMES, "MQFB": c.MQFB_NAMES, "MQMT": c.MQMT_NAMES,
    "MQPER": c.MQPER_NAMES, "MQAT": c.MQAT_NAMES, "MQRO": c.MQRO_NAMES,
    "MQENC": c.MQENC_NAMES, "MQCCSI": c.MQCCSI_NAMES, "MQMF": c.MQMF_NAMES,
    "MQEI": c.MQEI_NAMES, "MQPRI": c.MQPRI_NAMES, "MQFMT": c.MQFMT_NAMES,
}


# ---------------------------------------------------------------------------
# Markdown helpers
# ---------------------------------------------------------------------------

def _spec(name: str) -> str:
    path = SPEC_DIR / name
    if not path.is_file():
        pytest.skip(f"specification {path} not available (set DLQLENS_SPEC_DIR)")
    return path.read_text(encoding="utf-8")


def _section(text: str, heading_prefix: str) -> str:
    """Text from the heading starting with ``heading_prefix`` to the next heading."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(heading_prefix):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("#")), len(lines))
            return "\n".join(lines[i + 1:end])
    raise AssertionError(f"heading {heading_prefix!r} not found in the specification")


def _table_rows(section: str) -> list[list[str]]:
    """Body rows of the first markdown table in ``section`` (header dropped)."""
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert len(rows) >= 3, "expected a markdown table"
    body = [r for r in rows[1:] if not set(r) <= set("|-: ")]
    return [[cell.strip() for cell in r.strip().strip("|").split("|")] for r in body]


def _names(cell: str) -> list[str]:
    """Backticked MQ names in a cell; ``_SUFFIX`` abbreviations are expanded."""
    tokens = re.findall(r"`([A-Z0-9_]+)`", cell)
    names = []
    for tok in tokens:
        if tok.startswith("_"):
            tok = names[0].rsplit("_", 1)[0] + tok
        if tok.startswith("MQ"):
            names.append(tok)
    return names


def _numbers(cell: str) -> list[int]:
    """Integers in a value cell: decimal (with blank thousands separators) or 0x hex."""
    cell = re.sub(r"\(.*?\)", "", cell).replace("*", "")
    values = [int(tok.replace(" ", ""), 0) for tok in re.findall(r"-?0x[0-9A-Fa-f]+|-?\d+(?: \d{3})*", cell)]
    if values and len(set(values)) == 1:
        values = values[:1]  # e.g. "0x111 = 273"
    return values


def _pairs(names_cell: str, values_cell: str) -> list[tuple[str, int]]:
    names, values = _names(names_cell), _numbers(values_cell)
    assert names and values, (names_cell, values_cell)
    if len(values) == 1:
        return [(n, values[0]) for n in names]
    assert len(values) == len(names), (names_cell, values_cell)
    return list(zip(names, values))


def _u32(value: int) -> int:
    return value & 0xFFFFFFFF


# ---------------------------------------------------------------------------
# reason-codes.md
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reason_codes_md() -> str:
    return _spec("reason-codes.md")


def _section3_rows(md):
    rows = _table_rows(_section(md, "## 3."))
    out = []
    for dec, _hex, name, meaning, _where, kind in rows:
        (name,) = _names(name)
        out.append((int(dec), name, meaning, kind))
    return out


def _section4_rows(md):
    return _table_rows(_section(md, "## 4."))


def test_section3_table_codes_resolve_both_ways(reason_codes_md):
    rows = _section3_rows(reason_codes_md)
    assert len(rows) >= 60
    for value, name, _meaning, kind in rows:
        assert c.MQRC[name] == value, name
        assert c.lookup(name) == value
        assert c.lookup(f"  {name.lower()} ") == value
        assert c.MQRC_NAMES[value] == name
        assert c.code_name(value) == name
        assert c.code_name(value, kind="feedback") == name
        info = c.describe_code(value)
        assert info.family == "MQRC"
        assert info.meaning, f"no meaning for {name}"
        assert info.dead_letter_kind == kind.split()[0], name


def test_section4_table_codes_resolve_both_ways(reason_codes_md):
    checked = set()
    for dec, _hex, names_cell, meaning, _where in _section4_rows(reason_codes_md):
        names, values = _names(names_cell), _numbers(dec)
        assert len(names) == len(values), names_cell
        for name, value in zip(names, values):
            checked.add(name)
            assert c.MQFB[name] == value, name
            assert c.lookup(name) == value
            assert c.lookup(name.lower()) == value
            if name.endswith(("_FIRST", "_LAST")):
                # range markers are never returned as the name of a value
                assert c.code_name(value, kind="feedback") != name
                assert value not in c.MQFB_NAMES or c.MQFB_NAMES[value] != name
                continue
            assert c.MQFB_NAMES[value] == name
            assert c.code_name(value, kind="feedback") == name
            info = c.describe_code(value, kind="feedback")
            assert info.family == ("NONE" if value == 0 else "MQFB")
            assert info.meaning, f"no meaning for {name}"
            assert ("inferred" in info.meaning) == ("(inferred" in meaning), name
    # section 4 lists every MQFB_* constant of cmqc.h, and so does MQFB
    assert checked == set(c.MQFB)


def test_section4_ranges_classify_as_ims(reason_codes_md):
    ranges = [row for row in _section4_rows(reason_codes_md) if "–" in row[0]]
    assert len(ranges) == 2
    families = set()
    for dec, *_ in ranges:
        lo, hi = _numbers(dec)
        for value in (lo, (lo + hi) // 2, hi):
            families.add(c.describe_code(value).family)
    assert families == {"IMS_SENSE", "IMS_NACK"}


def test_section2_codes_resolve_both_ways(reason_codes_md):
    found = re.findall(r"(\d{4})\s+`(MQRC_\w+)`", _section(reason_codes_md, "## 2."))
    assert len(found) >= 25
    for value, name in found:
        assert c.lookup(name) == int(value)
        assert c.code_name(int(value)) == name


def test_every_inline_mention_has_the_documented_value(reason_codes_md):
    # "2014 `MQRC_FEEDBACK_ERROR`", "2192 = `MQRC_STORAGE_MEDIUM_FULL`" ...
    forward = re.findall(r"(?<![\w.])(\d[\d ]*\d|\d)\s*(?:=\s*)?`(MQ(?:RC|FB)_\w+)`", reason_codes_md)
    # "`MQRC_PAGESET_FULL` (2192 ..."
    backward = [(v, n) for n, v in re.findall(r"`(MQ(?:RC|FB)_\w+)`\s*\((\d+)", reason_codes_md)]
    assert len(forward) >= 40 and len(backward) >= 3
    for value, name in forward + backward:
        assert c.lookup(name) == int(value.replace(" ", "")), name


def test_every_name_in_reason_codes_md_is_present(reason_codes_md):
    names = set(re.findall(r"`(MQ(?:RC|FB)_[A-Z0-9_]+)`", reason_codes_md))
    # MQRC_STR / MQFB_STR name IBM's constant-to-string functions, not constants
    names -= {"MQRC_STR", "MQFB_STR"}
    missing = sorted(n for n in names if n not in c.MQRC and n not in c.MQFB)
    assert not missing


def test_aliases_documented_in_section1(reason_codes_md):
    section = _section(reason_codes_md, "## 1.")
    pairs = re.findall(r"(\d+) = `(MQRC_\w+)`\s*= `(MQRC_\w+)`", section)
    assert {p[0] for p in pairs} == {"2120", "2192"}
    for value, first, second in pairs:
        assert c.MQRC[first] == c.MQRC[second] == int(value)
    # recommended value -> name choices
    assert c.code_name(2120) == "MQRC_CONVERTED_MSG_TOO_BIG"
    assert c.code_name(2192) == "MQRC_STORAGE_MEDIUM_FULL"


def test_retry_sets_follow_section5(reason_codes_md):
    section = _section(reason_codes_md, "## 5.")
    (faithful,) = re.findall(r'"retryable" set is \{([\d, ]+)\}', section)
    assert c.RETRYABLE_REASONS == {int(v) for v in faithful.split(",")}
    (pointless,) = re.findall(r"pointless for a reason such as\s+`(MQRC_\w+)`", section)
    assert c.NON_RETRYABLE_REASONS == {c.lookup(pointless)}
    (transient,) = re.findall(r"(\d+) `MQRC_\w+`\s+is plausibly transient but \*\*no source\*\*", section)
    assert int(transient) not in c.RETRYABLE_REASONS | c.NON_RETRYABLE_REASONS


# ---------------------------------------------------------------------------
# mqmd.md, mqdlh.md, mqtm.md value sets and structure constants
# ---------------------------------------------------------------------------

MQMD_TABLES = [
    # (heading, table, names column, values column)
    ("### 3.2", "MQENC", 0, 1),
    ("### 4.1", "MQCCSI", 0, 1),
    ("### 5.1", "MQRO", 0, 2),
    ("### 5.2", "MQMT", 0, 1),
    ("### 5.5", "MQPER", 0, 1),
    ("### 5.7", "MQAT", 1, 0),
    ("### 5.9", "MQMF", 0, 1),
]


@pytest.mark.parametrize(("heading", "table", "names_col", "values_col"), MQMD_TABLES)
def test_mqmd_value_sets_match_spec(heading, table, names_col, values_col):
    section = _section(_spec("mqmd.md"), heading)
    documented = {}
    for row in _table_rows(section):
        documented.update(_pairs(row[names_col], row[values_col]))
    # masks listed in prose, e.g. "`MQRO_REJECT_UNSUP_MASK` = 0x101C0000"
    for name, value in re.findall(r"`(MQ\w+_MASK)` = (0x[0-9A-Fa-f]+)", section):
        documented[name] = int(value, 16)
    ours = INT_TABLES[table]
    assert set(documented) == set(ours)
    for name, value in documented.items():
        assert _u32(ours[name]) == _u32(value), name


def test_format_names_match_mqdlh_section6():
    section = _section(_spec("mqdlh.md"), "## 6.")
    documented = {}
    for names_cell, value_cell, _what in _table_rows(section):
        (value,) = re.findall(r"`([^`]+)`", value_cell)
        for name in _names(names_cell):
            documented[name] = value.replace("␣", " ")
    assert documented == c.MQFMT


def test_structure_constants_match_specs():
    text = "\n".join(_spec(f) for f in ("mqmd.md", "mqdlh.md", "mqtm.md"))
    lengths = re.findall(r"`(MQ\w+?_LENGTH_\d)`(?:\s*=\s*`\w+`)*\s*=\s*\**(\d+)", text)
    ids = re.findall(r"`(MQ\w+_STRUC_ID)`\s*=\s*`([^`]+)`", text)
    versions = re.findall(r"`(MQTMC_VERSION_\d)`\s*=\s*`([^`]+)`", text)
    assert len(lengths) >= 8 and len(ids) >= 4 and len(versions) == 2
    for name, value in lengths:
        assert getattr(c, name) == int(value), name
    for name, value in ids + versions:
        assert getattr(c, name) == value.replace("␣", " "), name


def test_structure_constants_required_by_the_brief():
    assert (c.MQMD_STRUC_ID, c.MQDLH_STRUC_ID, c.MQTM_STRUC_ID) == ("MD  ", "DLH ", "TM  ")
    assert c.MQTMC_STRUC_ID == "TMC "
    assert (c.MQXQH_STRUC_ID, c.MQMDE_STRUC_ID, c.MQRFH_STRUC_ID) == ("XQH ", "MDE ", "RFH ")
    assert (c.MQMD_LENGTH_1, c.MQMD_LENGTH_2, c.MQDLH_LENGTH_1, c.MQTM_LENGTH_1) == (324, 364, 172, 684)
    assert (c.MQTMC2_LENGTH_1, c.MQTMC2_LENGTH_2, c.MQXQH_LENGTH_1, c.MQMDE_LENGTH_2) == (684, 732, 428, 72)
    assert c.MQRFH_STRUC_LENGTH_FIXED_2 == c.MQRFH2_LENGTH_2 == 36
    assert c.MQXQH_LENGTH_1 == 104 + c.MQMD_LENGTH_1
    assert c.MQTMC2_LENGTH_2 == c.MQTMC2_LENGTH_1 + 48


# ---------------------------------------------------------------------------
# Tables and value -> name maps (no specification needed)
# ---------------------------------------------------------------------------

def test_mqrc_table_shape():
    values = set(c.MQRC.values())
    assert {0, 900, 999, 2001, 2604, 6100, 6130, 29440} <= values
    # MQI codes stay in 2001..2604, C++ codes in 6100..6130, one outlier
    assert all(v in (0, 900, 999, 29440) or 2001 <= v <= 2604 or 6100 <= v <= 6130 for v in values)
    assert not [v for v in values if 1 <= v <= 899]
    # only the two documented aliases share a value
    assert len(c.MQRC) - len(values) == 2
    assert c.MQRC["MQRC_TRUNCATED"] == c.MQRC["MQRC_CONVERTED_MSG_TOO_BIG"] == 2120
    assert c.MQRC["MQRC_PAGESET_FULL"] == c.MQRC["MQRC_STORAGE_MEDIUM_FULL"] == 2192
    # cmqc.h 9.4.5 entries that pymqi 1.12.13 lacks
    assert c.MQRC["MQRC_TOKEN_TIMESTAMP_NOT_VALID"] == 2064
    assert c.MQRC["MQRC_MSG_LENGTH_ERROR"] == 2491
    assert c.MQRC["MQRC_HTTPS_KEYSTORE_ERROR"] == 2604


def test_mqrc_and_mqfb_do_not_collide():
    fb = {v for n, v in c.MQFB.items() if v}
    rc = {v for n, v in c.MQRC.items() if v}
    assert not fb & rc
    assert all(256 <= v <= 855 for v in c.MQFB_NAMES if v)


@pytest.mark.parametrize("family", sorted(NAME_MAPS))
def test_value_to_name_maps_round_trip(family):
    names = NAME_MAPS[family]
    table = c.MQFMT if family == "MQFMT" else INT_TABLES[family]
    assert names, family
    for value, name in names.items():
        assert table[name] == value
        assert not name.endswith(("_FIRST", "_LAST", "_MASK")), name
    assert "MQAT_DEFAULT" not in names.values()


def test_every_value_of_a_table_is_named_except_markers_and_masks():
    for family, table in INT_TABLES.items():
        if family == "MQENC":
            continue  # only whole encodings are named, see below
        for name, value in table.items():
            if name.endswith(("_FIRST", "_LAST", "_MASK")) or name == "MQAT_DEFAULT":
                continue
            assert value in NAME_MAPS[family], name


@pytest.mark.parametrize(
    ("names", "value", "expected"),
    [
        (c.MQAT_NAMES, 2, "MQAT_ZOS"),
        (c.MQAT_NAMES, 6, "MQAT_UNIX"),
        (c.MQAT_NAMES, 13, "MQAT_NSK"),
        (c.MQAT_NAMES, 26, "MQAT_QMGR_PUBLISH"),
        (c.MQAT_NAMES, 7, "MQAT_QMGR"),
        (c.MQMT_NAMES, 1, "MQMT_REQUEST"),
        (c.MQMT_NAMES, 4, "MQMT_REPORT"),
        (c.MQPER_NAMES, 2, "MQPER_PERSISTENCE_AS_Q_DEF"),
        (c.MQPRI_NAMES, -1, "MQPRI_PRIORITY_AS_Q_DEF"),
        (c.MQEI_NAMES, -1, "MQEI_UNLIMITED"),
        (c.MQCCSI_NAMES, 0, "MQCCSI_UNDEFINED"),
        (c.MQCCSI_NAMES, -2, "MQCCSI_INHERIT"),
        (c.MQRO_NAMES, 0, "MQRO_NONE"),
        (c.MQMF_NAMES, 0, "MQMF_NONE"),
        (c.MQFB_NAMES, 300, "MQFB_IMS_ERROR"),
        (c.MQFMT_NAMES, "MQHRF   ", "MQFMT_RF_HEADER_1"),
        (c.MQFMT_NAMES, "MQDEAD  ", "MQFMT_DEAD_LETTER_HEADER"),
    ],
)
def test_preferred_names(names, value, expected):
    assert names[value] == expected


def test_encoding_names():
    assert c.MQENC_NAMES == {
        -1: "MQENC_AS_PUBLISHED", 273: "MQENC_NORMAL", 546: "MQENC_REVERSED",
        785: "MQENC_S390", 1041: "MQENC_TNS",
    }
    assert "MQENC_NATIVE" not in c.MQENC  # platform dependent on purpose
    for name in ("MQENC_NORMAL", "MQENC_REVERSED", "MQENC_S390", "MQENC_TNS"):
        v = c.MQENC[name]
        masks = ("MQENC_INTEGER_MASK", "MQENC_DECIMAL_MASK", "MQENC_FLOAT_MASK")
        parts = [v & c.MQENC[m] for m in masks]
        assert sum(parts) == v
    # signed masks select the same bits as the unsigned cmqc.h literal
    assert c.MQENC["MQENC_RESERVED_MASK"] == -4096
    assert _u32(c.MQRO["MQRO_ACCEPT_UNSUP_MASK"]) == 0xEFE000FF


def test_format_values_are_exactly_eight_characters():
    assert c.MQFMT["MQFMT_DEAD_LETTER_HEADER"] == "MQDEAD  "
    assert c.MQFMT["MQFMT_NONE"] == " " * 8
    for name, value in c.MQFMT.items():
        assert len(value) == 8 and value == value.upper(), name
    assert len(c.MQFMT_NAMES) == len(c.MQFMT) - 1  # RF_HEADER / RF_HEADER_1


# ---------------------------------------------------------------------------
# code_name / describe_code
# ---------------------------------------------------------------------------

BOUNDARIES = [
    (0, "MQRC_NONE", "NONE"),
    (1, "UNKNOWN_1", "UNKNOWN"),  # MQFB_SYSTEM_FIRST is a marker, not a code
    (255, "UNKNOWN_255", "UNKNOWN"),
    (256, "MQFB_QUIT", "MQFB"),
    (300, "MQFB_IMS_ERROR", "MQFB"),
    (301, "MQFB_IMS_ERROR+1", "IMS_SENSE"),
    (326, "MQFB_IMS_ERROR+26", "IMS_SENSE"),
    (399, "MQFB_IMS_ERROR+99", "IMS_SENSE"),
    (400, "UNKNOWN_400", "UNKNOWN"),
    (505, "MQFB_NOT_A_GROUPUR_MSG", "MQFB"),
    (599, "UNKNOWN_599", "UNKNOWN"),
    (600, "MQFB_IMS_NACK_1A_REASON_FIRST+0", "IMS_NACK"),
    (855, "MQFB_IMS_NACK_1A_REASON_FIRST+255", "IMS_NACK"),
    (856, "UNKNOWN_856", "UNKNOWN"),
    (899, "UNKNOWN_899", "UNKNOWN"),
    (900, "MQRC_APPL_900", "APPL_REASON"),
    (999, "MQRC_APPL_999", "APPL_REASON"),
    (1000, "UNKNOWN_1000", "UNKNOWN"),
    (2000, "UNKNOWN_2000", "UNKNOWN"),
    (2015, "UNKNOWN_2015", "UNKNOWN"),  # a gap in the MQRC numbering
    (2053, "MQRC_Q_FULL", "MQRC"),
    (2604, "MQRC_HTTPS_KEYSTORE_ERROR", "MQRC"),
    (2605, "UNKNOWN_2605", "UNKNOWN"),
    (29440, "MQRC_SUB_JOIN_NOT_ALTERABLE", "MQRC"),
    (65535, "UNKNOWN_65535", "UNKNOWN"),
    (65536, "MQFB_APPL_65536", "APPL_FEEDBACK"),
    (999999999, "MQFB_APPL_999999999", "APPL_FEEDBACK"),
    (1000000000, "UNKNOWN_1000000000", "UNKNOWN"),
    (2**31 - 1, "UNKNOWN_2147483647", "UNKNOWN"),
    (-1, "EXIT_PRIVATE_-1", "EXIT_PRIVATE"),
    (-2**31, "EXIT_PRIVATE_-2147483648", "EXIT_PRIVATE"),
    (2**31, "UNKNOWN_2147483648", "UNKNOWN"),  # cannot come from an MQLONG
    (-2**31 - 1, "UNKNOWN_-2147483649", "UNKNOWN"),
]


@pytest.mark.parametrize(("value", "name", "family"), BOUNDARIES)
def test_classification_boundaries(value, name, family):
    assert c.code_name(value) == name
    info = c.describe_code(value)
    assert (info.value, info.name, info.family) == (value, name, family)
    if family != "NONE":
        assert c.code_name(value, kind="feedback") == name
    if family != "MQRC":
        assert info.meaning  # MQRC meanings exist only for the codes of _MQRC_NOTES


def test_zero_depends_on_kind():
    assert c.code_name(0) == "MQRC_NONE"
    assert c.code_name(0, kind="reason") == "MQRC_NONE"
    assert c.code_name(0, kind="feedback") == "MQFB_NONE"
    assert c.describe_code(0, kind="feedback").family == "NONE"


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind"):
        c.code_name(2053, kind="Reason")
    with pytest.raises(ValueError, match="kind"):
        c.describe_code(2053, kind="both")
    with pytest.raises(TypeError):
        c.code_name("2053")
    with pytest.raises(TypeError):
        c.code_name(2053.0)


def test_code_info_is_frozen():
    info = c.describe_code(2085)
    assert info.dead_letter_kind == "put-side"
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.name = "x"
    assert c.describe_code(2207).dead_letter_kind == "API-side"
    assert c.describe_code(2284).dead_letter_kind == "event"
    assert c.describe_code(2002) == c.CodeInfo(2002, "MQRC_ALREADY_CONNECTED", "MQRC", "", "")


def _value_of(name: str) -> int:
    """Invert the documented name grammar of code_name."""
    if "+" in name:
        base, offset = name.split("+")
        return c.MQFB[base] + int(offset)
    m = re.fullmatch(r"(MQRC_APPL|MQFB_APPL|EXIT_PRIVATE|UNKNOWN)_(-?\d+)", name)
    if m:
        return int(m.group(2))
    return c.lookup(name)


@given(st.integers(min_value=-2**31, max_value=2**31 - 1), st.sampled_from(["reason", "feedback"]))
def test_code_name_total_and_faithful_on_mqlong(value, kind):
    name = c.code_name(value, kind=kind)
    assert isinstance(name, str) and name
    info = c.describe_code(value, kind=kind)
    assert info.name == name and info.value == value
    assert info.family in FAMILIES
    assert _value_of(name) == value


@given(st.integers())
def test_code_name_never_raises_for_any_int(value):
    assert c.code_name(value)
    assert c.describe_code(value, kind="feedback").family in FAMILIES


@given(st.sampled_from(sorted(set(c.MQRC_NAMES) | set(c.MQFB_NAMES))))
def test_every_named_code_gets_its_preferred_name(value):
    expected = c.MQFB_NAMES.get(value) or c.MQRC_NAMES[value]
    assert c.code_name(value, kind="feedback" if value in c.MQFB_NAMES else "reason") == expected


# ---------------------------------------------------------------------------
# lookup / lookup_format
# ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MQRC_Q_FULL", 2053),
        ("mqrc_q_full", 2053),
        ("  MQRC_PUT_INHIBITED\t", 2051),
        ("MQRC_TRUNCATED", 2120),
        ("MQRC_PAGESET_FULL", 2192),
        ("MQFB_COA", 259),
        ("MQFB_SYSTEM_FIRST", 1),
        ("MQMT_REPORT", 4),
        ("MQPER_PERSISTENT", 1),
        ("mqper_not_persistent", 0),
        ("MQAT_OS390", 2),
        ("MQAT_AIX", 6),
        ("MQRO_EXCEPTION_WITH_FULL_DATA", 0x07000000),
        ("MQENC_S390", 785),
        ("MQCCSI_INHERIT", -2),
        ("MQMF_LAST_SEGMENT", 4),
        ("MQEI_UNLIMITED", -1),
        ("MQPRI_PRIORITY_AS_Q_DEF", -1),
    ],
)
def test_lookup(name, value):
    assert c.lookup(name) == value


def test_every_table_name_resolves_case_insensitively():
    for table in INT_TABLES.values():
        for name, value in table.items():
            assert c.lookup(name.lower()) == value
    for name, value in c.MQFMT.items():
        assert c.lookup_format(f" {name.lower()} ") == value


def test_lookup_error_names_the_name_and_suggests():
    with pytest.raises(KeyError) as exc:
        c.lookup("MQRC_Q_FUL")
    message = exc.value.args[0]
    assert "'MQRC_Q_FUL'" in message and "MQRC_Q_FULL" in message
    with pytest.raises(KeyError) as exc:
        c.lookup("mqrc_put_inhibted")
    assert "MQRC_PUT_INHIBITED" in exc.value.args[0]
    with pytest.raises(KeyError) as exc:
        c.lookup("QQQQ")
    assert "'QQQQ'" in exc.value.args[0] and "no similar name" in exc.value.args[0]
    with pytest.raises(KeyError):
        c.lookup("MQFMT_STRING")  # formats are text, see lookup_format
    with pytest.raises(TypeError):
        c.lookup(2053)


def test_lookup_format():
    assert c.lookup_format("MQFMT_DEAD_LETTER_HEADER") == "MQDEAD  "
    assert c.lookup_format("mqfmt_xmit_q_header") == "MQXMIT  "
    with pytest.raises(KeyError) as exc:
        c.lookup_format("MQFMT_DEAD_LETTER_HEADR")
    assert "MQFMT_DEAD_LETTER_HEADER" in exc.value.args[0]
    with pytest.raises(KeyError):
        c.lookup_format("MQRC_Q_FULL")


# ---------------------------------------------------------------------------
# retry knowledge
# ---------------------------------------------------------------------------

def test_retry_sets():
    assert c.RETRYABLE_REASONS == {2053, 2051, 2192}
    assert c.NON_RETRYABLE_REASONS == {2086}
    assert isinstance(c.RETRYABLE_REASONS, frozenset) and isinstance(c.NON_RETRYABLE_REASONS, frozenset)
    assert not c.RETRYABLE_REASONS & c.NON_RETRYABLE_REASONS
    assert set(c.RETRY_REASONING) == c.RETRYABLE_REASONS | c.NON_RETRYABLE_REASONS
    for value, reason in c.RETRY_REASONING.items():
        expected = "Retryable" if value in c.RETRYABLE_REASONS else "Not retryable"
        assert reason.startswith(expected + ":") and reason.endswith(".")
        assert reason.count(". ") == 0  # one sentence
    assert 2056 not in c.RETRYABLE_REASONS | c.NON_RETRYABLE_REASONS


def test_public_names_exist():
    for name in c.__all__:
        assert hasattr(c, name), name
