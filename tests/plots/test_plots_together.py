"""The figures computed together (dlqlens.plots.figures, two Spark queries for
any number of figures) show exactly what each figure showed when every
aggregate was its own query: their texts and drawn numbers are compared with
golden files written by the code before that change (``figure_data.py``), on
the bundled sample and on three simulated scenarios (trigger storm, expiry
build-up, poison message ping-pong), with each figure's defaults and with top
values that fold categories into "other" on both keys."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from dlqlens import plots
from tests.builders import spark_jobs
from tests.conftest import ROOT
from tests.plots.figure_data import CAPTURES, cases, figure_data, load

pytestmark = pytest.mark.spark

GOLDEN = Path(__file__).parent / "golden"


def _golden(name):
    return json.loads((GOLDEN / f"figures-{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", list(CAPTURES))
def test_figures_together_show_what_each_showed_before(spark, name):
    df = load(spark, ROOT, name)
    try:
        golden = _golden(name)
        fns = cases()
        assert set(golden) == set(fns)
        before = spark_jobs(spark)
        figs = plots.figures(df, list(fns.values()))
        jobs = spark_jobs(spark) - before
        for case, fig in zip(fns, figs):
            assert figure_data(fig) == golden[case], case
        # ten figures, two queries: a few jobs each (one per query stage), not one per aggregate
        assert jobs <= 10, f"{jobs} Spark jobs for {len(fns)} figures"
    finally:
        df.unpersist()


def test_each_figure_alone_shows_what_it_showed_before(spark):
    df = load(spark, ROOT, "sample")
    try:
        golden = _golden("sample")
        for case, fn in cases().items():
            assert figure_data(fn(df)) == golden[case], case
    finally:
        df.unpersist()


def test_a_function_that_is_not_a_plan_is_called_as_it_is(spark):
    df = load(spark, ROOT, "sample")
    try:
        called = []

        def own(frame):
            called.append(frame)
            return plots.backout_counts(frame)

        figs = plots.figures(df, [own, functools.partial(plots.arrivals, top=2)])
        assert len(called) == 1 and called[0] is df and len(figs) == 2
        assert figure_data(figs[0]) == _golden("sample")["backout_counts"]
    finally:
        df.unpersist()


def test_bad_arguments_are_refused_before_any_job(spark):
    df = load(spark, ROOT, "sample")
    try:
        before = spark_jobs(spark)
        with pytest.raises(ValueError):
            plots.figures(df, [plots.ages, functools.partial(plots.arrivals, top=0)])
        with pytest.raises(ValueError):
            plots.figures(df, [functools.partial(plots.trigger_rate, by="nowhere")])
        assert spark_jobs(spark) == before
    finally:
        df.unpersist()
