"""The main job and the analyses through Spark Connect (issue 22, 2).

A Spark Connect server (PySpark's ``sbin/start-connect-server.sh``, on
``local[2]``) on 127.0.0.1: the job (:mod:`tests.cluster.cluster_job`) run with
``SPARK_REMOTE=sc://127.0.0.1:PORT`` and no ``--master`` makes a Connect
session (``dlqlens.spark.session.spark_session``): the ``mqcapture`` source
registered from the client and planned on the server, the Arrow UDFs of the
rules replay, the detectors, the quality suites and the report give what the
``local[*]`` run gives.
"""

from __future__ import annotations

import pytest

from tests.cluster.conftest import check_conf_and_export, run_job, same_report, same_results

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


@pytest.fixture(scope="module")
def connect_job(connect_server, tmp_path_factory):
    return run_job(tmp_path_factory.mktemp("job-connect"), remote=connect_server.connect_url)


def test_connect_report_equals_local(connect_job, local_job):
    same_report(local_job, connect_job)


def test_connect_analyses_equal_local(connect_job, local_job):
    same_results(local_job, connect_job)
    check_conf_and_export(connect_job)
    assert connect_job["results"]["session"] == "pyspark.sql.connect.session"
    assert connect_job["results"]["sliced_partitions"] > 2 * connect_job["results"]["files"]


def test_connect_refuses_a_static_conf_by_name(connect_server):
    """``--conf`` of a setting a Connect session cannot take at run time (the
    server's executors' memory): exit status 2, naming it, before any job."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = dict(os.environ, SPARK_REMOTE=connect_server.connect_url,
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", ""))
                                          if p))
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    proc = subprocess.run([sys.executable, "-m", "dlqlens.cli", "summary", "datasets/dlq-sample",
                           "--conf", "spark.executor.memory=2g"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert ("dlqlens: error: --conf spark.executor.memory=2g: the Spark Connect server "
            f"{connect_server.connect_url} does not take it at run time") in proc.stderr
    assert "start-connect-server.sh --conf" in proc.stderr
