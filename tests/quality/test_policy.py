"""The audit policy file: defaults, overrides, and errors that name file, line, key."""

from __future__ import annotations

import pytest

from dlqlens.errors import UsageError
from dlqlens.quality.policy import DEFAULTS, Policy, load_policy


def write(tmp_path, text):
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_documented_ones():
    assert DEFAULTS == {"max_age_seconds": 86400.0, "max_fall_through": 0, "max_without_dlh": 0,
                        "forbidden_findings": ["backout_loop", "trigger_storm", "trigger_failure",
                                               "expiry_buildup", "orphaned_reply"],
                        "min_persistent_share": 0.0, "max_depth_fraction": 0.8}


def test_keys_override_the_defaults(tmp_path):
    p = load_policy(write(tmp_path, "# shop policy\nmax_age_seconds = 3600\n"
                                    "forbidden_findings = ['expiry_buildup']\n"))
    assert p.max_age_seconds == 3600
    assert p.forbidden_findings == ("expiry_buildup",)
    assert p.max_depth_fraction == 0.8  # left out: the default
    assert p.source.endswith("policy.toml")


def test_unknown_key_names_file_line_and_the_nearest_key(tmp_path):
    path = write(tmp_path, "max_age_seconds = 60\n\nmax_age_second = 3600\n")
    with pytest.raises(UsageError) as err:
        load_policy(path)
    msg = str(err.value)
    assert f"{path}:3:" in msg
    assert "unknown key 'max_age_second'" in msg
    assert "did you mean 'max_age_seconds'?" in msg


@pytest.mark.parametrize("line, expected", [
    ("max_fall_through = 1.5", "expected an integer, found 1.5"),
    ("min_persistent_share = 2", "expected a value from 0 to 1, found 2"),
    ("max_age_seconds = 'a day'", "expected a number, found 'a day'"),
    ("forbidden_findings = ['backout_loops']", "expected finding kinds among"),
    ("max_without_dlh = true", "expected an integer, found True"),
])
def test_bad_values_name_line_expected_and_found(tmp_path, line, expected):
    path = write(tmp_path, "# policy\n" + line + "\n")
    with pytest.raises(UsageError) as err:
        load_policy(path)
    assert f"{path}:2:" in str(err.value)
    assert expected in str(err.value)


def test_a_table_is_not_a_policy_key(tmp_path):
    with pytest.raises(UsageError, match=r"policy.toml:1: unknown key 'hygiene'"):
        load_policy(write(tmp_path, "[hygiene]\nmax_age_seconds = 1\n"))


def test_not_toml_and_missing_file(tmp_path):
    with pytest.raises(UsageError, match="not a TOML policy file"):
        load_policy(write(tmp_path, "max_age_seconds = = 1\n"))
    with pytest.raises(UsageError, match="No such file"):
        load_policy(tmp_path / "absent.toml")


def test_policy_in_code_is_checked_too():
    with pytest.raises(UsageError, match="max_depth_fraction: expected a value from 0 to 1"):
        Policy(max_depth_fraction=1.5)
