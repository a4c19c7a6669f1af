"""The main job and the analyses on a Spark standalone cluster (issue 22, 1).

A master and two workers (1 core, 1 GiB each) on 127.0.0.1, started from
PySpark's own ``bin/spark-class`` (``tests.cluster.loopback``): ``dlqlens
report`` of the sample with ``--master spark://127.0.0.1:PORT`` and the
analyses in the same application (:mod:`tests.cluster.cluster_job`) give what
the ``local[*]`` run gives, and the capture read in slices was decoded by the
executors of both workers (their Python workers run in the workers' work
directories, not the driver's: relative paths still find the files).
"""

from __future__ import annotations

import pytest

from tests.cluster.conftest import check_conf_and_export, run_job, same_report, same_results

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


@pytest.fixture(scope="module")
def cluster_job(loopback_cluster, tmp_path_factory):
    return run_job(tmp_path_factory.mktemp("job-cluster"), master=loopback_cluster.master_url)


def test_local_job_plans_several_partitions_per_file(local_job):
    r = local_job["results"]
    assert r["files"] == 7
    assert r["sliced_partitions"] > 2 * r["files"]  # every file cut at message boundaries
    assert r["sliced_rows"] == r["rows"] and len(r["rows"]) == 669
    assert r["decoded_rows"] == len(r["rows"])
    assert r["parquet_rows"] == r["rows"]  # the cluster's and Connect's equal these
    assert r["parquet_partitions"] >= 7
    assert r["results_back"] == {"findings": r["findings"], "links": r["links"]}
    check_conf_and_export(local_job)


def test_cluster_report_equals_local(cluster_job, local_job):
    same_report(local_job, cluster_job)


def test_cluster_analyses_equal_local(cluster_job, local_job):
    same_results(local_job, cluster_job)
    check_conf_and_export(cluster_job)
    assert cluster_job["results"]["session"] == "pyspark.sql.session"


def test_cluster_decodes_on_both_workers(cluster_job, loopback_cluster):
    """The slices were read by Python workers in each worker's directory
    (``work/app-.../N``), none in the driver's."""
    where = cluster_job["results"]["decoded_in"]
    dirs = [str(d) for d in loopback_cluster.worker_dirs]
    assert len(dirs) == 2
    for d in dirs:
        assert any(w.startswith(d + "/") for w in where), (d, where)
    assert all(any(w.startswith(d + "/") for d in dirs) for w in where), where
