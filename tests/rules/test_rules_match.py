"""Matching of runmqdlq patterns: IBM MQ "DLQ rules table conventions" (wildcards) and
the matching of IBM's sample DLQ handler amqsdlq (``odqMatchString``; integers by equality)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlqlens.rules.match import (
    is_universal,
    match_integer,
    match_string,
    matches_blank_field,
    pattern_covers,
)


def reference_match(parm: str, value: str, length: int) -> bool:
    """Slow, literal port of ``odqMatchString`` from IBM's sample (amqodqna.c).

    ``parm`` is NUL-terminated in C; ``value`` has exactly ``length``
    characters. Trailing blanks of the pattern are dropped first (IBM: not
    significant). Exponential on ``*?*?...`` patterns: small inputs only.
    """
    parm = parm.rstrip(" ")
    p = parm + "\0"
    rc = True
    idxp = idxs = 0
    while idxs < length and rc:
        c = p[idxp]
        if c == "\0":
            while idxs < length:
                if value[idxs] != " ":
                    rc = False
                    break
                idxs += 1
            idxp -= 1
        elif c == "?":
            i = idxs
            while i < length and value[i] == " ":
                i += 1
            if i >= length:
                rc = False
        elif c == "*":
            if p[idxp + 1] == "\0":
                idxs = length
            else:
                rc1 = False
                idx = idxs
                while idx < length and not rc1:
                    rc1 = reference_match(parm[idxp + 1:], value[idx:], length - idx)
                    idx += 1
                idxs = length
                idxp = len(parm) - 1
                rc = rc1
        elif c != value[idxs]:
            rc = False
        idxp += 1
        idxs += 1
    if rc:
        while p[idxp] != "\0":
            if p[idxp] != "*":
                rc = False
            idxp += 1
    return rc


def pad(value: str, length: int) -> str:
    return value + " " * (length - len(value))


# Test vectors derived from the sample's odqMatchString (field shown without its padding).
SPEC_VECTORS = [
    ("APP.IN", "APP.IN", 48, True),
    ("APP.*", "APP.IN", 48, True),
    ("APP.?N", "APP.IN", 48, True),
    ("app.in", "APP.IN", 48, False),
    ("*", "", 48, True),
    ("?*", "", 48, False),
    ("?*", "Q", 48, True),
    ("A?C", "A C", 8, True),
    ("A?", "A", 8, False),
    ("*.IN", "APP.IN", 48, True),
    ("MQSTR", "MQSTR", 8, True),
    (" MQSTR", "MQSTR", 8, False),
    ("ABCDEFGHI", "ABCDEFGH", 8, False),
    ("AAAA.*", "AAAA.QM", 48, True),
    ("AAAA.*", "AAAA", 48, False),
    ("A*C*E", "ACE", 8, True),
    ("A*E", "ABCDEX", 8, False),
    ("QM1", "QM1" + "\0" * 45, 48, False),
]


@pytest.mark.parametrize("pattern,field,length,expected", SPEC_VECTORS)
def test_spec_vectors(pattern, field, length, expected):
    assert match_string(pattern, field, length) is expected
    assert reference_match(pattern, pad(field, length), length) is expected


def test_nul_padding_needs_a_trailing_star():
    field = "QM1" + "\0" * 45
    assert not match_string("QM1", field, 48)
    assert match_string("QM1*", field, 48)
    # '?' counts a NUL as a non-blank character.
    assert match_string("QM1?*", field, 48)


def test_bytes_are_compared_byte_for_byte():
    assert match_string("APP.*", b"APP.IN" + b" " * 42, 48)
    assert not match_string("APP.*", b"app.in" + b" " * 42, 48)
    assert not match_string("QM1", b"QM1" + b"\x00" * 45, 48)


def test_short_values_are_blank_padded_and_long_values_used_whole():
    assert match_string("MQSTR", "MQSTR", 8)
    assert match_string("MQSTR", "MQSTR   ", 8)
    # A value longer than the declared length is not truncated.
    assert not match_string("ABC", "ABCD", 3)
    assert match_string("ABC*", "ABCD", 3)


def test_trailing_blanks_in_the_pattern_are_not_significant():
    assert match_string("A  ", "A", 8)
    assert match_string(" ", "", 48)  # the value ' ' matches a blank field
    assert not match_string(" ", "Q", 48)


def test_embedded_and_leading_blanks_are_significant():
    assert match_string("A B", "A B", 8)
    assert not match_string("A B", "AB", 8)
    assert match_string(" A", " A", 8)
    assert not match_string(" A", "A", 8)


def test_question_mark_never_takes_a_trailing_blank():
    assert match_string("AB?", "ABC", 8)
    assert not match_string("AB?", "AB", 8)
    assert match_string("?", "X", 1)
    assert not match_string("??", "X", 8)


def test_field_exhausted_with_only_stars_left():
    assert match_string("ABCDEFGH*", "ABCDEFGH", 8)
    assert match_string("ABCDEFGH**", "ABCDEFGH", 8)
    assert not match_string("ABCDEFGH?", "ABCDEFGH", 8)


def test_integer_matching():
    assert match_integer(None, 2053)
    assert match_integer(2053, 2053)
    assert not match_integer(2053, 2051)


def test_blank_field_and_universal_helpers():
    assert matches_blank_field("*", 48)
    assert not matches_blank_field("?*", 48)
    assert matches_blank_field(" ", 48)
    assert is_universal("*", 48)
    assert is_universal("***", 8)
    assert not is_universal("?*", 48)
    assert not is_universal("A*", 48)


def test_pathological_pattern_is_linear():
    # The sample's recursion (and a backtracking regex) needs about C(n, k)
    # steps on this; the bit-parallel matcher does one pass per character.
    field = "A" * 20_000
    pattern = "*A" * 5_000 + "*B"
    assert not match_string(pattern, field, len(field))
    assert match_string(pattern[:-1] + "A", field, len(field))
    qs = "*?" * 4_000 + "*X"
    assert not match_string(qs, "Y" * 12_000, 12_000)


def test_pathological_pattern_in_a_real_field():
    # 24 '?' and 25 '*' fit the 48-character DestQName limit (stars do not
    # count); against 47 non-matching characters the recursion explodes.
    pattern = "*?" * 24 + "*Z"
    assert not match_string(pattern, "Y" * 47, 48)
    assert match_string(pattern, "Y" * 47 + "Z", 48)


patterns = st.text(alphabet="AB *?", max_size=7)
fields = st.text(alphabet="AB \0", max_size=7)


@settings(max_examples=1500, deadline=None)
@given(pattern=patterns, field=fields, extra=st.integers(0, 3))
def test_matches_reference_port(pattern, field, extra):
    length = len(field) + extra
    if length == 0:
        length = 1
    assert match_string(pattern, field, length) == reference_match(
        pattern, pad(field, length), length
    )


def brute_covers(outer: str, inner: str, length: int) -> bool:
    alphabet = sorted(set(outer + inner + "C \0") - {"*", "?"})
    for chars in itertools.product(alphabet, repeat=length):
        value = "".join(chars)
        if reference_match(inner, value, length) and not reference_match(outer, value, length):
            return False
    return True


small_patterns = st.text(alphabet="AB *?", max_size=4)


@settings(max_examples=400, deadline=None)
@given(outer=small_patterns, inner=small_patterns, length=st.integers(1, 3))
def test_containment_agrees_with_brute_force(outer, inner, length):
    assert pattern_covers(outer, inner, length) is brute_covers(outer, inner, length)


@pytest.mark.parametrize(
    "outer,inner,length,expected",
    [
        ("*", "APP.IN", 48, True),
        ("APP.*", "APP.IN", 48, True),
        ("APP.*", "APP.IN*", 48, True),
        ("APP.IN*", "APP.*", 48, False),
        ("APP.?N", "APP.IN", 48, True),
        ("APP.IN", "APP.?N", 48, False),
        ("?*", "A*", 48, True),
        ("A*", "?*", 48, False),
        ("*.IN", "APP.*.IN", 48, True),
        ("*", "?*", 48, True),
        ("?*", "*", 48, False),  # '*' also matches a blank field
        ("A*B", "A*C*B", 8, True),
        ("A*C*B", "A*B", 8, False),
        ("ABCDEFGH", "ABCDEFGH*", 8, True),  # a full field leaves nothing for '*'
        ("ABCDEFG", "ABCDEFG*", 8, False),
    ],
)
def test_containment_cases(outer, inner, length, expected):
    assert pattern_covers(outer, inner, length) is expected


def test_containment_gives_up_rather_than_explode():
    # 2**k subset states after a star followed by k '?'; a tiny budget
    # makes the search stop and say so (the answer is True: not refutable).
    assert pattern_covers("*A" + "?" * 9, "*A" + "?" * 8 + "C", 40, max_states=50) is None


# issue 19: a work budget per pattern pair, fast paths checked against brute force

from dlqlens.rules.match import COVER_BUDGET, Work, pattern_keys  # noqa: E402

longer_patterns = st.text(alphabet="AB *?", max_size=6)


@settings(max_examples=300, deadline=None)
@given(outer=longer_patterns, inner=longer_patterns, length=st.integers(3, 5))
def test_containment_fast_paths_agree_with_brute_force(outer, inner, length):
    assert pattern_covers(outer, inner, length) is brute_covers(outer, inner, length)


@pytest.mark.parametrize("k", [6, 9, 12, 20, 30])
def test_containment_work_is_bounded_by_the_budget(k):
    # was: '*A' + k '?' against '*A' + (k-1) '?' + 'C' explored ~4**k states (minutes)
    work = Work()
    got = pattern_covers("*A" + "?" * k, "*A" + "?" * (k - 1) + "C", 48, work=work)
    assert work.steps <= COVER_BUDGET
    assert got in (True, None)
    if got is None:
        assert work.undecided == 1
    small = Work()
    assert pattern_covers("*A" + "?" * k, "*A" + "?" * (k - 1) + "C", 48, budget=500,
                          work=small) in (True, None)
    assert small.steps <= 500


def test_pattern_keys():
    assert pattern_keys("APP.*.IN", 48) == ("APP.", ".IN", "APP.", ".IN")
    assert pattern_keys("Q1", 8) == ("Q1      ", "Q1", "Q1", "Q1")
    assert pattern_keys("AB*CD", 4) == ("ABCD", "ABCD", "ABCD", "ABCD")  # no room for '*'
    assert pattern_keys("ABCDE", 4) is None  # matches no 4-character field


def test_fast_refutations_take_no_search():
    work = Work()
    assert pattern_covers("APP.Q1.*", "APP.Q2.*", 48, work=work) is False  # prefix
    assert pattern_covers("*.IN", "*.OUT", 48, work=work) is False  # suffix
    assert pattern_covers("*A?????????", "*B?????????", 48, work=work) is False  # witness
    assert pattern_covers("APP.*", "APP.IN", 48, work=work) is True  # one field
    assert work.pairs == 4 and work.searched == 0 and work.steps == 0
