"""A loopback Spark standalone cluster (a master and two workers of 1 core and
1 GiB), a Spark Connect server and the job's ``local[*]`` results, each made
once for the tests of this folder and stopped after them, whatever happens
(:mod:`tests.cluster.loopback`).

The job (:mod:`tests.cluster.cluster_job`) runs in a process of its own each
time: one Python process holds one Spark driver, and a Connect client cannot
share a process with a classic session (the ``spark`` fixture's).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cluster import loopback
from tests.conftest import ROOT

#: The longest a job may run before it is ended (a loaded 2-core machine).
JOB_TIMEOUT = 1200


def _check_java():
    from dlqlens.spark.session import check_java

    try:
        check_java()
    except Exception as exc:  # a failure, not a skip: Spark is part of the product
        pytest.fail(f"cluster tests need Java 17+: {exc}", pytrace=False)


def run_job(out: Path, master: str | None = None, remote: str | None = None) -> dict:
    """Run :mod:`tests.cluster.cluster_job` into ``out`` (from the checkout, so
    the paths are the README's relative ones); return what it wrote and how
    long it took."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "MASTER")}
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    if remote:
        env["SPARK_REMOTE"] = remote
    args = [sys.executable, "-m", "tests.cluster.cluster_job", str(out)]
    if master:
        args += ["--master", master]
    start = time.monotonic()
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=JOB_TIMEOUT)
    finally:  # a timeout, an interrupt: the job's group goes (its JVM driver with it)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    seconds = time.monotonic() - start
    assert proc.returncode == 0, (f"{' '.join(args)} (SPARK_REMOTE={remote}): exit status "
                                  f"{proc.returncode}\n{stderr[-6000:]}")
    return {"results": json.loads((out / "results.json").read_text(encoding="utf-8")),
            "text": (out / "report.txt").read_text(encoding="utf-8"),
            "html": (out / "report.html").read_text(encoding="utf-8"),
            "seconds": seconds, "stderr": stderr}


@pytest.fixture(scope="package")
def local_job(tmp_path_factory):
    """The job on ``local[*]``: what the cluster and Connect runs must equal."""
    _check_java()
    return run_job(tmp_path_factory.mktemp("job-local"), master="local[*]")


@pytest.fixture(scope="package")
def loopback_cluster(tmp_path_factory):
    """A standalone master and 2 workers (1 core, 1g each) on 127.0.0.1."""
    _check_java()
    daemons = loopback.cluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1,
                               memory="1g")
    try:
        yield daemons
    finally:
        daemons.stop()


@pytest.fixture(scope="package")
def connect_server(tmp_path_factory):
    """A Spark Connect server (``start-connect-server.sh``) on 127.0.0.1, on ``local[2]``."""
    _check_java()
    try:
        from pyspark.sql.connect.utils import check_dependencies

        check_dependencies()
    except Exception as exc:  # noqa: BLE001 - the client's packages are in the test extra
        pytest.fail(f"Spark Connect client packages missing ({exc}); install the test extra: "
                    "pip install '.[test]'", pytrace=False)
    daemons = loopback.Daemons(tmp_path_factory.mktemp("connect"))
    try:
        daemons.start_connect("local[2]")
        yield daemons
    finally:
        daemons.stop()


def same_report(local: dict, other: dict) -> None:
    """The report's text and page equal the local run's, but for the file's path
    and the time the page was generated."""
    def text(t):
        return [line for line in t.splitlines() if not line.startswith("report written to")]

    def page(h):
        return [line for line in h.splitlines() if 'class="meta">Generated ' not in line]

    assert text(other["text"]) == text(local["text"])
    assert text(local["text"]), "the report printed nothing"
    a, b = page(local["html"]), page(other["html"])
    assert len(a) == len(b) and len(a) > 100
    differ = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    assert not differ, f"report pages differ at lines {differ[:10]}: {b[differ[0]][:300]!r}"


#: Keys of results.json that say where the job ran, not what it found.
WHERE = ("session", "decoded_in")


def same_results(local: dict, other: dict) -> None:
    """Every analysis's result equals the local run's."""
    a, b = local["results"], other["results"]
    assert sorted(a) == sorted(b)
    for key in sorted(a):
        if key in WHERE:
            continue
        assert b[key] == a[key], f"{key} differs from the local[*] run"


def check_conf_and_export(job: dict) -> None:
    """The command's ``--conf`` reached the session it made, and the export wrote
    the messages of its two reasons."""
    r = job["results"]
    assert r["conf"] == "set by --conf"
    e = r["export"]
    assert e["selected"] == 102 + 207  # MQRC_Q_FULL and MQRC_UNKNOWN_OBJECT_NAME
    assert e["written"] > 0 and e["text"].count("\nA VER ") == e["written"]
    assert e["written"] + e["duplicates"] + sum(e["skipped"].values()) == e["selected"]
