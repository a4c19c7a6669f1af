"""Translation of rules-table patterns to predicates over trimmed fields
(dlqlens/rules/compile.py), checked against the handler's matcher without Spark.

The Spark rendering of the same plans is checked in test_rules_replay_spark.py.
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlqlens.rules.compile import (
    Alternative,
    distinct_patterns,
    java_regex,
    pattern_key,
    plan_matches,
    plan_string,
)
from dlqlens.rules.match import match_string
from dlqlens.rules.parser import parse

# Blanks and wildcards are what the translation is about; '.', '\\', '$' and
# friends are regex metacharacters that must stay literal.
PATTERN_CHARS = "AB *?.\\$"
VALUE_CHARS = "AB .\\$"


@st.composite
def pattern_value_length(draw):
    length = draw(st.integers(1, 10))
    pattern = draw(st.text(PATTERN_CHARS, min_size=1, max_size=12))
    value = draw(st.text(VALUE_CHARS, max_size=length))
    return pattern, value, length


@settings(max_examples=int(os.environ.get("DLQLENS_EXAMPLES", 800)), deadline=None)
@given(pattern_value_length())
def test_plan_is_the_handlers_matching_on_trimmed_values(case):
    pattern, value, length = case
    # The capture holds the trimmed value; the handler sees it blank-padded.
    assert plan_matches(plan_string(pattern, length), value.rstrip(" ")) == match_string(
        pattern, value, length
    ), (pattern, value, length, plan_string(pattern, length))


@pytest.mark.parametrize(
    "pattern,value,length,expected",
    [
        # test vectors derived from amqsdlq's odqMatchString (field shown trimmed)
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
        ("AAAA.*", "AAAA.QM", 48, True),
        ("AAAA.*", "AAAA", 48, False),
        ("A*C*E", "ACE", 8, True),
        ("A*E", "ABCDEX", 8, False),
        # blanks in the pattern's tail reach into the field's padding
        ("A *", "A", 8, True),
        ("A *", "A B", 8, True),
        ("ABCDEFGH *", "ABCDEFGH", 8, False),
        ("ABCDEFG *", "ABCDEFG", 8, True),
        (" ", "", 8, True),
        (" ", "X", 8, False),
    ],
)
def test_spec_vectors(pattern, value, length, expected):
    assert plan_matches(plan_string(pattern, length), value) is expected
    assert match_string(pattern, value, length) is expected


def test_plan_shapes():
    assert plan_string("APP.*", 48) == (Alternative("APP.*"),)
    assert plan_string("APP.**", 48) == (Alternative("APP.*"),)  # runs of * collapsed
    assert plan_string("Q1   ", 48) == (Alternative("Q1"),)  # trailing blanks not significant
    # one alternative per number of blanks that must fit in the padding
    assert plan_string("A * *", 8) == (
        Alternative("A", 6), Alternative("A *", 7), Alternative("A * *"),
    )


def test_java_regex_is_anchored_dotall_and_escapes_everything_else():
    assert java_regex("APP.?N*") == "(?s)\\AAPP\\..N.*\\z"
    assert java_regex("a$b\\c") == "(?s)\\Aa\\$b\\\\c\\z"
    assert java_regex("é\n") == "(?s)\\A\\x{e9}\\x{a}\\z"
    # The same escapes read back by Python's engine (Java syntax aside) match literally.
    body = java_regex("(x)+[y]").removeprefix("(?s)\\A").removesuffix("\\z")
    assert re.fullmatch(body, "(x)+[y]")


def test_distinct_patterns_share_symbolic_and_numeric_forms():
    table = parse(
        "REASON(MQRC_Q_FULL) ACTION(RETRY)\n"
        "REASON(2053) DESTQ(APP.*) ACTION(DISCARD)\n"
        "DESTQ(APP.*) DESTQM(*) ACTION(FWD) FWDQ(X)\n"
    )
    pats = distinct_patterns(table.rules)
    assert [p.keyword for p in pats] == ["REASON", "DESTQ"]  # DESTQM(*) is no test
    assert pattern_key(table.rules[0].patterns[0]) == pattern_key(table.rules[1].patterns[0])
