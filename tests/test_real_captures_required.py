"""CI never passes without the real captures: DLQLENS_REQUIRE_REAL_CAPTURES (issue 19)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT


def _pytest(tmp_path, real, *args):
    env = {**os.environ, "DLQLENS_REAL_CAPTURES": str(real),
           "DLQLENS_REQUIRE_REAL_CAPTURES": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False)


def test_a_missing_folder_stops_the_run(tmp_path):
    proc = _pytest(tmp_path, tmp_path / "absent", "tests/test_architecture.py")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert (f"DLQLENS_REQUIRE_REAL_CAPTURES is set but the real captures folder "
            f"{tmp_path / 'absent'} does not exist") in proc.stderr


def test_a_missing_file_fails_instead_of_skipping(tmp_path):
    (tmp_path / "partial" / "rules").mkdir(parents=True)
    proc = _pytest(tmp_path, tmp_path / "partial",
                   "tests/capture/test_real_captures.py::test_real_amqsbcg_directory_reads_in_one_go",
                   "tests/rules/test_rules_real_captures.py::test_yukun_continuation_and_keyword_space_paren")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 failed" in proc.stdout and "skipped" not in proc.stdout
    assert "DLQLENS_REQUIRE_REAL_CAPTURES is set, so this is a failure" in proc.stdout


def test_ci_sets_it_and_runs_exactly_the_readme_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = "python3 -m pip install -e '.[test]' && python3 -m pytest"
    assert ci[-1] == command and f"    {command}\n" in readme
    lines = [line.strip() for line in ci]
    assert "export DLQLENS_REQUIRE_REAL_CAPTURES=1" in lines
    assert 'if [ -d ../shared ] || [ -n "${DLQLENS_REAL_CAPTURES:-}" ]; then' in lines
    assert "DLQLENS_REAL_CAPTURES" in readme and "DLQLENS_REQUIRE_REAL_CAPTURES" in readme
