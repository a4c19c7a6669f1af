"""Running a named scenario and writing its captures (the ``dlqlens simulate`` engine)."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
from dataclasses import dataclass

from dlqlens.errors import UsageError
from dlqlens.sim.capture import FORMATS, Capturer
from dlqlens.sim.engine import DEFAULT_START, Simulation, SimulationError
from dlqlens.sim.scenarios import SCENARIOS, Layout, Plan
from dlqlens.sim.wire import header_codec


@dataclass
class Run:
    """A scenario built and run in memory (for tests, notebooks and teaching).

    Attributes
    ----------
    sim : Simulation
    plan : Plan
    layout : Layout
    """

    sim: Simulation
    plan: Plan
    layout: Layout

    def qmgr(self, name: str):
        """The queue manager ``name``."""
        return self.sim.qmgrs[name]

    def close(self) -> None:
        """Close (and delete) the spool files of spooled queues."""
        close_stores(self.sim)


def close_stores(sim: Simulation) -> None:
    """Close the message stores of every queue (spool files are deleted)."""
    for qm in sim.qmgrs.values():
        for obj in qm.objects.values():
            store = getattr(obj, "store", None)
            if store is not None:
                store.close()


def _check(scenario: str, size: int, encoding: int, ccsid: int | None,
           qmgr: str | None = None) -> Layout:
    if scenario not in SCENARIOS:
        raise UsageError(f"unknown scenario {scenario!r}: expected one of {', '.join(SCENARIOS)}")
    if int(size) < 1:
        raise UsageError(f"--size must be 1 or more, not {size}")
    try:
        layout = Layout.of(int(encoding), ccsid, qmgr)
        header_codec(layout.ccsid)
    except Exception as exc:  # SimulationError: bad encoding or CCSID
        raise UsageError(str(exc)) from None
    return layout


def _start(start) -> "dt.datetime":
    if start is None:
        return DEFAULT_START
    from dlqlens.capture.reader import to_utc

    try:
        return to_utc(start).replace(tzinfo=dt.timezone.utc)
    except ValueError:
        raise UsageError(f"--start {start!r}: expected an ISO 8601 time such as "
                         "2024-03-15T08:00:00Z") from None


def run_scenario(scenario: str, size: int, *, seed: int = 0, encoding: int = 546,
                 ccsid: int | None = None, spool_dir: str | None = None,
                 start: "dt.datetime | str | None" = None, qmgr: str | None = None) -> Run:
    """Build ``scenario`` at ``size`` and run it to the end of its plan (nothing captured).

    With ``spool_dir=None`` every queue stays in memory, so the queues can be
    inspected afterwards; give a directory to spool the queues the scenario
    marks ``spool=True`` (large sizes), and call :meth:`Run.close` when done.
    ``start`` is the simulated time at which the run begins (UTC; a naive
    datetime is taken as UTC; default 2024-03-15 08:00:00). ``qmgr`` renames the
    captured queue manager.
    """
    layout = _check(scenario, size, encoding, ccsid, qmgr)
    sim = Simulation(seed, _start(start))
    sim.spool_dir = spool_dir
    try:
        plan = SCENARIOS[scenario].build(sim, int(size), layout)
    except SimulationError as exc:
        raise UsageError(str(exc)) from None
    sim.run(plan.duration)
    return Run(sim, plan, layout)


def simulate(scenario: str, size: int, out: str, *, format: str = "amqsbcg",
             encoding: int = 546, ccsid: int | None = None, seed: int = 0,
             dlh_block: bool = True, start: "dt.datetime | str | None" = None,
             writer_options: dict | None = None, expected: bool = False,
             qmgr: str | None = None, snapshots=()) -> dict:
    """Run ``scenario``; write its captures, ``ground_truth.jsonl``, ``manifest.json`` in ``out``.

    Parameters
    ----------
    scenario : str
        A name of :data:`dlqlens.sim.scenarios.SCENARIOS`.
    size : int
        Messages the scenario's main workload puts.
    out : str
        Output directory (created; files of the same names are replaced).
    format : {'amqsbcg', 'dmpmqmsg', 'raw'}
    encoding : {546, 273, 785}
        MQENC_NATIVE of the captured queue manager (Linux x86-64, AIX, z/OS).
    ccsid : int, optional
        Its CCSID (default 1208, 819, 500 respectively).
    seed : int
    dlh_block : bool
        amqsbcg only: the MQ 9.3.4+ layout with a formatted MQDLH block
        (False: the older layout, the MQDLH only in the hex dump).
    start : datetime or str, optional
        Simulated time the run begins (UTC; ISO 8601 text accepted; default
        2024-03-15T08:00:00Z).
    writer_options : dict, optional
        Extra keyword arguments of the capture writer (``newline``,
        dmpmqmsg ``ascii_column``), see :class:`dlqlens.sim.capture.Capturer`.
    expected : bool
        Also write ``<capture>.expected.jsonl`` golden decodes beside each
        capture (:func:`dlqlens.sim.capture.expected_record`).
    qmgr : str, optional
        Name of the captured queue manager (default: the scenario's, such as
        QM.HUB); z/OS names are usually 4 characters (the subsystem name).
    snapshots : sequence of float, optional
        Seconds after the start at which the scenario's queues are also
        browsed before the end of the run, as an administrator captures a
        DLQ more than once during an incident. The captures of snapshot
        ``k`` (1-based, in time order) and their ``ground_truth.jsonl`` are
        written into ``out/snapshot-<k>/``; the end-of-run captures go to
        ``out`` as without snapshots (the same bytes: browsing changes no
        queue). The manifest lists them under ``snapshots`` (``captured_at``,
        ``captures``).

    Returns
    -------
    dict
        The manifest (also written as ``manifest.json``).

    Raises
    ------
    dlqlens.errors.UsageError
        Unknown scenario or format, size below 1, an encoding other than
        546/273/785, a CCSID an MQ header cannot be written in, a start
        time that is not ISO 8601, or a queue manager name MQ would refuse or
        the scenario already uses.

    Notes
    -----
    Memory stays bounded at any size for the queues a scenario spools (those
    nothing reads during the run: dead-letter and backout queues without a
    handler): their messages go to a spool file in ``out`` (removed at the end)
    and the captures and ground truth are streamed from it, one message at a
    time.
    """
    if format not in FORMATS:
        raise UsageError(f"unknown format {format!r}: expected one of {', '.join(FORMATS)}")
    layout = _check(scenario, size, encoding, ccsid, qmgr)
    begin = _start(start)
    os.makedirs(out, exist_ok=True)
    spool = tempfile.mkdtemp(prefix=".dlqlens-sim-", dir=out)
    try:
        sim = Simulation(seed, begin)
        sim.spool_dir = spool
        try:
            plan = SCENARIOS[scenario].build(sim, int(size), layout)
        except SimulationError as exc:
            raise UsageError(str(exc)) from None
        times = sorted(float(t) for t in snapshots)
        if times and not 0 <= times[0] <= times[-1] < plan.duration:
            raise UsageError(f"snapshots: expected times from 0 to before the end of the run "
                             f"({plan.duration:g} s), found {times[0]:g} to {times[-1]:g}")
        taken = []
        for k, t in enumerate(times, 1):
            sim.run(t)
            snap = Capturer(sim, os.path.join(out, f"snapshot-{k}"), format, dlh_block=dlh_block,
                            writer_options=writer_options, expected=expected)
            try:
                for qmgr, queue in plan.captures:
                    snap.capture(sim.qmgrs[qmgr], queue)
            finally:
                snap.close()
            taken.append({"captured_at": sim.iso(), "captures": snap.captures})
        sim.run(plan.duration)
        cap = Capturer(sim, out, format, dlh_block=dlh_block, writer_options=writer_options,
                       expected=expected)
        try:
            for qmgr, queue in plan.captures:
                cap.capture(sim.qmgrs[qmgr], queue)
        finally:
            cap.close()
        close_stores(sim)
    finally:
        shutil.rmtree(spool, ignore_errors=True)
    manifest = {
        "scenario": scenario, "size": int(size), "seed": seed, "format": format,
        **({"amqsbcg_layout": "9.3.4" if dlh_block else "classic"} if format == "amqsbcg" else {}),
        "encoding": layout.encoding, "ccsid": layout.ccsid, "platform": layout.platform,
        "start": sim.iso(0), "captured_at": sim.iso(),
        "captures": cap.captures,
        "patterns": {("null" if k is None else k): v
                     for k, v in sorted(cap.patterns.items(), key=lambda kv: str(kv[0]))},
        "stats": dict(sorted(sim.stats.items())),
        **({"snapshots": taken} if taken else {}),
    }
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8", newline="\n") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")
    return manifest
