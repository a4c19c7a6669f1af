"""A Spark standalone cluster and a Spark Connect server on the loopback address.

Started from the scripts PySpark ships (``SPARK_HOME`` is the ``pyspark``
package directory: ``bin/spark-class`` and ``sbin/start-connect-server.sh``),
each daemon in a process group of its own, bound to 127.0.0.1 on ports chosen
free at run time, its logs and work directories in a directory the caller
gives. :meth:`Daemons.stop` ends every group (SIGTERM, then SIGKILL) whatever
state the daemons are in; the test fixtures and ``benchmarks/cluster.py`` call
it in a ``finally``.

The daemons' Python processes (executors' workers, the Connect server's
planner and UDF workers) run this interpreter (``PYSPARK_PYTHON``) with this
checkout first on ``PYTHONPATH``, so they import the same dlqlens and
pyarrow as the driver: what docs/scale.md asks of a real cluster.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: How long a daemon may take to come up (a loaded 2-core machine: JVM start-up
#: takes tens of seconds when eight test runs share it).
START_TIMEOUT = 240.0


def spark_home() -> str:
    """The ``pyspark`` package directory: PySpark's own ``SPARK_HOME``."""
    import pyspark

    return os.path.dirname(pyspark.__file__)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def daemon_env(workdir: Path) -> dict:
    """The environment of the daemons: loopback only, this interpreter and
    checkout for every Python worker, logs and pid files under ``workdir``,
    no configuration directory but an empty one."""
    conf_dir = workdir / "conf"
    conf_dir.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, SPARK_HOME=spark_home(), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_CONF_DIR=str(conf_dir), SPARK_LOG_DIR=str(workdir / "logs"),
               SPARK_PID_DIR=str(workdir / "pids"), PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, PYTHONPATH=path)
    for name in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "MASTER"):
        env.pop(name, None)
    return env


@dataclass
class Daemon:
    name: str
    proc: subprocess.Popen
    log: Path

    def text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""


@dataclass
class Daemons:
    """Started daemons, stopped together (:meth:`stop`)."""

    workdir: Path
    daemons: list[Daemon] = field(default_factory=list)
    master_url: str | None = None
    connect_url: str | None = None
    worker_dirs: list[Path] = field(default_factory=list)

    def start(self, name: str, args: list[str], env: dict) -> Daemon:
        log = self.workdir / f"{name}.log"
        fh = open(log, "wb")
        try:
            proc = subprocess.Popen(args, stdout=fh, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, cwd=self.workdir,
                                    start_new_session=True)  # its own process group
        finally:
            fh.close()
        d = Daemon(name, proc, log)
        self.daemons.append(d)
        return d

    def wait_for(self, daemon: Daemon, text: str, timeout: float = START_TIMEOUT,
                 count: int = 1) -> None:
        """Wait until ``daemon``'s log holds ``text`` (``count`` times).

        Raises
        ------
        RuntimeError
            When the daemon ends or ``timeout`` seconds pass first, with the
            end of its log.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if daemon.text().count(text) >= count:
                return
            if daemon.proc.poll() is not None:
                break
            time.sleep(0.5)
        raise RuntimeError(f"{daemon.name} did not log {text!r} within {timeout:.0f} s "
                           f"(exit status {daemon.proc.poll()}); its log ends:\n"
                           f"{daemon.text()[-3000:]}")

    def stop(self) -> None:
        """End every daemon's process group: SIGTERM, then SIGKILL after 20 s."""
        for d in reversed(self.daemons):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(d.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for d in reversed(self.daemons):
            with contextlib.suppress(subprocess.TimeoutExpired):
                d.proc.wait(max(0.1, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(d.proc.pid, signal.SIGKILL)  # what is left of the group
            with contextlib.suppress(subprocess.TimeoutExpired):
                d.proc.wait(5)
        self.daemons.clear()

    def logs(self) -> str:
        """The end of every daemon's log (for a failure message)."""
        return "\n".join(f"--- {d.name} ({d.log})\n{d.text()[-2000:]}" for d in self.daemons)

    # -- standalone cluster ---------------------------------------------------
    def start_master(self) -> str:
        """A standalone master on 127.0.0.1; returns its ``spark://`` URL."""
        env = daemon_env(self.workdir)
        props = self.workdir / "master.properties"
        # no REST submission server (it would take the fixed port 6066)
        props.write_text("spark.master.rest.enabled false\n")
        port = free_port()
        master = self.start("master", [
            os.path.join(spark_home(), "bin", "spark-class"), "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(free_port()),
            "--properties-file", str(props)], env)
        self.wait_for(master, "I have been elected leader")
        self.master_url = f"spark://127.0.0.1:{port}"
        return self.master_url

    def start_workers(self, n: int, cores: int = 1, memory: str = "1g") -> None:
        """``n`` more workers of ``cores`` cores and ``memory`` each,
        registered with the master before this returns."""
        assert self.master_url, "start_master first"
        env = daemon_env(self.workdir)
        master = self.daemons[0]
        before = master.text().count("Registering worker")
        for _ in range(n):
            i = len(self.worker_dirs) + 1
            work = self.workdir / f"worker{i}"
            work.mkdir(parents=True, exist_ok=True)
            self.worker_dirs.append(work)
            self.start(f"worker{i}", [
                os.path.join(spark_home(), "bin", "spark-class"),
                "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                "--port", str(free_port()), "--webui-port", str(free_port()),
                "--cores", str(cores), "--memory", memory, "--work-dir", str(work),
                self.master_url], env)
        self.wait_for(master, "Registering worker", count=before + n)

    # -- Spark Connect --------------------------------------------------------
    def start_connect(self, master: str = "local[2]") -> str:
        """A Spark Connect server (``sbin/start-connect-server.sh --wait``, in
        the foreground) on ``master``; returns its ``sc://`` URL."""
        env = daemon_env(self.workdir)
        port = free_port()
        server = self.start("connect", [
            os.path.join(spark_home(), "sbin", "start-connect-server.sh"), "--wait",
            "--master", master,
            "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf", f"spark.connect.grpc.binding.port={port}",
            "--conf", "spark.ui.enabled=false",
            "--conf", "spark.driver.bindAddress=127.0.0.1",
            "--conf", "spark.driver.host=127.0.0.1",
            # the server's Python workers (the mqcapture source, Arrow UDFs)
            "--conf", f"spark.pyspark.python={sys.executable}"], env)
        self.wait_for(server, "Spark Connect server started at")
        self.connect_url = f"sc://127.0.0.1:{port}"
        return self.connect_url


def cluster(workdir: Path, workers: int = 2, cores: int = 1, memory: str = "1g") -> Daemons:
    """A master and ``workers`` workers, started (stop them with ``.stop()``;
    a failure to start stops what was started, then raises)."""
    d = Daemons(Path(workdir))
    try:
        d.start_master()
        d.start_workers(workers, cores, memory)
    except BaseException:
        d.stop()
        raise
    return d
