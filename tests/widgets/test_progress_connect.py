"""The explorer's progress over Spark Connect (issue 22, 2): a Connect session has
no SparkContext and so no status tracker; the progress then says the block
started and ended, with no task counts, instead of failing the widget."""

from __future__ import annotations

import pytest

from dlqlens.widgets.progress import SparkProgress


def test_progress_without_a_spark_context_reports_start_and_end():
    reports = []
    with SparkProgress(None, lambda *a: reports.append(a), "counting", interval=0.01) as p:
        pass
    assert reports[0] == ("counting…", 0, 0)
    assert reports[-1][0].startswith("done in ") and "Spark Connect: no task counts" in reports[-1][0]
    assert p.jobs == [] and p.done == p.total == 0


def test_progress_without_a_spark_context_says_what_failed():
    reports = []
    with pytest.raises(ZeroDivisionError):
        with SparkProgress(None, lambda *a: reports.append(a), "paging"):
            1 / 0
    assert reports[-1][0].startswith("failed after ") and "ZeroDivisionError" in reports[-1][0]
