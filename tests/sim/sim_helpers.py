"""Small worlds for the simulator's rule tests (imported by the test_sim_* modules)."""

from __future__ import annotations

import json
import os

from dlqlens import read_capture
from dlqlens.sim import Actor, QueueManager, Simulation
from dlqlens.sim.capture import Capturer
from dlqlens.sim.qmgr import MQAT_UNIX, SimMessage
from dlqlens.sim.script import datagram

DLQ = "SYSTEM.DEAD.LETTER.QUEUE"
APP = Actor("tester", MQAT_UNIX, "tester", "appuser", 546, 1208)


def world(*, platform: str = "linux", seed: int = 1, name: str = "QM1", deadq: str = DLQ,
          **qm) -> tuple:
    """A simulation with one queue manager and an in-memory dead-letter queue (none if '')."""
    sim = Simulation(seed)
    q = QueueManager(sim, name, platform=platform, deadq=deadq, **qm)
    if deadq:
        q.define_qlocal(deadq, maxdepth=999999)
    return sim, q


def msg(body: bytes = b"hello", **md) -> SimMessage:
    """A fresh MQSTR datagram (:func:`dlqlens.sim.script.datagram`) with a ``created`` event."""
    m = datagram(body, **md)
    m.events.append({"t": "", "qmgr": "", "actor": "tester", "event": "created"})
    return m


def put(qm: QueueManager, queue: str, n: int = 1, *, actor: Actor = APP, **md) -> list[int]:
    """Put ``n`` messages; returns the reason codes."""
    return [qm.put(queue, msg(**md), actor=actor) for _ in range(n)]


def triggered(qm: QueueManager, name: str = "APP.Q", *, initq: str = "INITQ",
              monitor: bool = True, process: str = "PROC", **attrs):
    """An application queue with triggering, its initiation queue and process.

    With ``monitor`` the initiation queue is opened for input (condition 8)
    by a monitor that does not consume, so trigger messages stay countable.
    """
    iq = qm.objects.get(initq) or qm.define_qlocal(initq)
    if process and process not in qm.processes:
        qm.define_process(process, applicid="/bin/server")
    attrs.setdefault("trigger", True)
    q = qm.define_qlocal(name, initq=initq, process=process, **attrs)
    if monitor and iq.ipprocs == 0:
        qm.open_input(iq, Actor("monitor", MQAT_UNIX, "runmqtrm"))
    return q, iq


def trigger_messages(qm: QueueManager, initq: str = "INITQ") -> list[SimMessage]:
    return [m for m in qm.queue(initq).messages()]


def capture(sim: Simulation, out, queues, fmt: str = "raw") -> list[dict]:
    """Capture ``queues`` ([(qmgr, queue)]) into ``out``; return (ground truth, decoded rows)."""
    cap = Capturer(sim, str(out), fmt)
    try:
        infos = [cap.capture(sim.qmgrs[qm], q) for qm, q in queues]
    finally:
        cap.close()
    with open(os.path.join(out, "ground_truth.jsonl"), encoding="utf-8") as fh:
        gt = [json.loads(line) for line in fh]
    rows = []
    for info in infos:
        rows.extend(read_capture(os.path.join(out, info["file"])).table.to_pylist())
    return gt, rows
