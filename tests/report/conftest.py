"""Reports built once per test run (each is a few Spark jobs over a capture):
the bundled sample through the command line, and the hostile capture
(:mod:`tests.report.hostile`) through the Python API with its payloads shown."""

from __future__ import annotations

import contextlib
import io

import pytest

from tests.conftest import DATASETS, ROOT

HUGE = "spark.sql.codegen.hugeMethodLimit"


@pytest.fixture(scope="session")
def sample_report(spark, tmp_path_factory):
    """``dlqlens report datasets/dlq-sample --rules ... --queue-defs ...``: (path, stdout,
    the session's hugeMethodLimit before and after)."""
    from dlqlens.cli import main

    out = tmp_path_factory.mktemp("report") / "sample.html"
    before = spark.conf.get(HUGE, None)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(["report", str(DATASETS), "--rules", str(ROOT / "datasets/rules/shop.rul"),
                       "--queue-defs", str(ROOT / "datasets/mqsc/qm.mqsc"), "--out", str(out),
                       "--master", "local[2]"])
    assert status == 0
    return {"path": out, "stdout": buf.getvalue(), "conf": (before, spark.conf.get(HUGE, None))}


@pytest.fixture(scope="session")
def hostile_report(spark, tmp_path_factory):
    """The hostile capture's report, payloads shown: (path, Report, files, df)."""
    from dlqlens.report import build_report
    from dlqlens.spark.session import load_capture

    from tests.report.hostile import write_hostile

    folder = tmp_path_factory.mktemp("hostile")
    files = write_hostile(folder)
    df = load_capture(spark, str(files["capture"]))
    report = build_report(df, rules=files["rules"], queue_defs=files["mqsc"],
                          show_payloads=True, title="Hostile <script>alert(1)</script>")
    path = report.write(folder / "hostile.html")
    return {"path": path, "report": report, "files": files, "cached_after": df.is_cached}
