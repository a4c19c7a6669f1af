"""Every bundled scenario through the commands a person runs on it first: the
audit, the summary and the explanations (the report of each is
``tests/report/test_report.py::test_every_bundled_scenario_gets_its_report``).

Three scenarios hold messages without an MQDLH (an initiation queue's trigger
messages, a backout queue's messages beside the DLQ); running every command
over every dataset by hand found the report stopping on them (eleventh stop,
``docs/performance.md``). Here each command must end with one of its
documented exit statuses (the audit's 1 exactly when it counts a failed
expectation, each named), write no traceback, and never show a missing
value as ``nan``.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from dlqlens.cli import main
from tests.conftest import ROOT

SCENARIOS = sorted(p.name for p in (ROOT / "datasets/scenarios").iterdir() if p.is_dir())
RULES = str(ROOT / "datasets/rules/shop.rul")
MQSC = str(ROOT / "datasets/mqsc/qm.mqsc")


def _run(argv):
    with contextlib.redirect_stdout(io.StringIO()) as out, \
            contextlib.redirect_stderr(io.StringIO()) as err:
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.spark
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_bundled_scenario_is_audited_summarised_and_explained(spark, scenario):
    path = str(ROOT / "datasets/scenarios" / scenario)
    # the audit exits 1 when an expectation fails (a scenario is a failure on purpose)
    for argv, statuses in ((["audit", path, "--rules", RULES, "--queue-defs", MQSC], {0, 1}),
                           (["summary", path], {0}),
                           (["explain", path, "--limit", "20"], {0})):
        status, out, err = _run(argv)
        assert status in statuses, (argv, status, err[-3000:])
        assert "Traceback" not in err, err[-3000:]
        words = out.split()
        assert out.strip() and "nan" not in words and "NaN" not in words, (argv, out[:2000])
        if argv[0] == "audit":
            # exit 1 exactly when an expectation failed, each failed one named on stderr
            tally = re.search(r"(\d+) expectation\(s\): (\d+) passed, (\d+) failed, "
                              r"(\d+) unknown", out)
            assert tally, out[-2000:]
            total, passed, failed, unknown = map(int, tally.groups())
            assert total == passed + failed + unknown and (status == 1) == (failed > 0)
            failing = re.findall(r"^FAIL +(\S+)", out, flags=re.M)
            assert len(failing) == failed
            assert all(name in err for name in failing), err
