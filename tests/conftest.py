"""Shared fixtures: paths to the shared real captures and one local Spark session.

Spark tests carry the ``spark`` marker and use the session-scoped ``spark``
fixture, so the JVM starts once per test run (a few seconds), never in the
unit tests' inner loop.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# No hypothesis test may fail because the machine is busy (issue 19): no
# per-example deadline (200 ms by default) and no "too slow" health check,
# for every test, also those with their own @settings (they start from this).
settings.register_profile("dlqlens", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dlqlens")

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT / "datasets" / "dlq-sample"
REAL = Path(os.environ.get("DLQLENS_REAL_CAPTURES", ROOT.parent / "shared" / "real-captures"))


@pytest.fixture(scope="session")
def real_captures() -> Path:
    """The folder of real third-party captures; tests skip when it is absent."""
    if not REAL.is_dir():
        pytest.skip(f"real captures not found at {REAL} (set DLQLENS_REAL_CAPTURES)")
    return REAL


@pytest.fixture(scope="session")
def datasets() -> Path:
    return DATASETS


@pytest.fixture(scope="session")
def spark():
    """A local Spark session (2 cores, UI off, 2 shuffle partitions)."""
    from dlqlens.spark.session import check_java, get_spark

    try:
        check_java()
    except Exception as exc:  # a clear failure, not a skip: Spark is part of the product
        pytest.fail(f"Spark tests need Java 17+: {exc}", pytrace=False)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = get_spark("local[2]", app_name="dlqlens-tests", spark_sql_shuffle_partitions=2)
    yield session
    session.stop()
