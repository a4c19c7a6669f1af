"""The discrete-event core: a clock in hundredths of a second and cooperative processes.

Time is an integer count of hundredths of a second since the simulation's
``start`` (a UTC datetime), the resolution of MQ's ``PutTime`` (``HHMMSSTH``).
Every public duration is in seconds (floats are rounded to the nearest
hundredth; a process's successive sleeps are rounded on its own exact
timeline, so their sum, and the rate of anything paced by them, stays exact);
MQ's own attributes keep MQ's units (``Expiry`` in tenths of a
second, ``TRIGINT`` and ``MRTMR`` in milliseconds).

Actors are Python generators run by :class:`Process`. A generator yields

* a number ``dt`` — sleep ``dt`` seconds;
* :class:`Wait` ``(queue, timeout)`` — sleep until a message is made available
  on ``queue`` (a put, a backout, a get-enable) or ``timeout`` seconds pass;
  the ``yield`` returns True when woken by the queue, False on timeout;
* :class:`Join` ``(process)`` — sleep until ``process`` ends.

Determinism: the only source of randomness is :attr:`Simulation.rng`
(``random.Random(seed)``); simultaneous events run in the order they were
scheduled (a sequence number breaks ties), so a seed gives the same run.
"""

from __future__ import annotations

import datetime as dt
import heapq
import itertools
import random
from collections import Counter
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from dlqlens.errors import DlqlensError

#: Default start of a simulation (UTC).
DEFAULT_START = dt.datetime(2024, 3, 15, 8, 0, 0, tzinfo=dt.timezone.utc)


class SimulationError(DlqlensError):
    """A simulation cannot be built or run as configured (unknown object, bad option)."""


def ticks(seconds: float) -> int:
    """Seconds -> hundredths of a second (the clock unit), rounded."""
    return int(round(float(seconds) * 100))


@dataclass(frozen=True)
class Wait:
    """Yielded by a process: wait for a message on ``queue`` for at most ``timeout`` s.

    ``timeout=None`` waits without limit (``MQWI_UNLIMITED``).
    """

    queue: Any
    timeout: float | None = None


@dataclass(frozen=True)
class Join:
    """Yielded by a process: wait until ``process`` has ended."""

    process: "Process"


class Process:
    """A running actor: drives a generator through the simulation's clock.

    Attributes
    ----------
    name : str
    done : bool
        True once the generator has returned.
    result : Any
        The generator's return value.
    """

    def __init__(self, sim: "Simulation", gen: Generator, name: str):
        self.sim = sim
        self.gen = gen
        self.name = name
        self.done = False
        self.result = None
        self._token = 0
        self._joiners: list[Process] = []
        #: seconds of sleep still owed to (or taken early from) this process's
        #: exact timeline by rounding its sleeps to the clock (within half a tick)
        self._carry = 0.0

    def _resume(self, token: int, value: Any = None) -> None:
        if self.done or token != self._token:
            return  # a stale wake-up (already woken by something else)
        self._token += 1
        try:
            cmd = self.gen.send(value)
        except StopIteration as stop:
            self.done = True
            self.result = stop.value
            for p in self._joiners:
                self.sim._call(0, p._resume, p._token, True)
            self._joiners.clear()
            return
        self._dispatch(cmd)

    def _dispatch(self, cmd: Any) -> None:
        token = self._token
        if isinstance(cmd, (int, float)):
            # sleep on the process's own exact timeline: the part of each sleep
            # lost (or gained) by rounding to the clock is carried into the next,
            # so a process that sleeps 0.0025 s a thousand times sleeps 2.5 s
            # (rounding each sleep alone would make it 0: rates above about 50
            # per second would be wrong)
            exact = max(0.0, float(cmd)) + self._carry
            delay = max(0, ticks(exact))
            self._carry = exact - delay / 100
            self.sim._call(delay, self._resume, token, None)
        elif isinstance(cmd, Wait):
            cmd.queue.waiters.append((self, token))
            if cmd.timeout is not None:
                self.sim._call(max(0, ticks(cmd.timeout)), self._resume, token, False)
        elif isinstance(cmd, Join):
            if cmd.process.done:
                self.sim._call(0, self._resume, token, True)
            else:
                cmd.process._joiners.append(self)
        else:
            raise SimulationError(f"process {self.name}: cannot yield {cmd!r}")

    def wake(self, token: int) -> None:
        """Resume a process waiting on a queue (called by the queue)."""
        self.sim._call(0, self._resume, token, True)


class Simulation:
    """A seeded discrete-event simulation of one or more queue managers.

    Parameters
    ----------
    seed : int
        Seed of :attr:`rng`, the only source of randomness.
    start : datetime.datetime
        UTC time of tick 0.

    Attributes
    ----------
    now : int
        Current time in hundredths of a second since ``start``.
    rng : random.Random
    qmgrs : dict
        Queue managers by name (:class:`dlqlens.sim.qmgr.QueueManager`).
    programs : dict
        Programs a trigger monitor can start, by ApplId.
    stats : collections.Counter
        Counts of what happened (``"expired_discarded"``, ``"trigger_messages"``...).
    """

    def __init__(self, seed: int = 0, start: dt.datetime = DEFAULT_START):
        if start.tzinfo is None:
            raise SimulationError("start must be a timezone-aware UTC datetime")
        self.seed = seed
        self.rng = random.Random(seed)
        self.start = start.astimezone(dt.timezone.utc)
        midnight = self.start.replace(hour=0, minute=0, second=0, microsecond=0)
        self._day_offset = int((self.start - midnight).total_seconds() * 100)
        self.start = midnight + dt.timedelta(milliseconds=10 * self._day_offset)
        self._dates: dict = {}
        self._iso_tick = -1
        self._iso_text = ""
        self.now = 0
        self._events: list = []
        self._seq = itertools.count()
        self.qmgrs: dict = {}
        self.programs: dict = {}
        self.labels: list = []
        self.stats: Counter = Counter()
        self._pids = itertools.count(1)
        #: Directory for queues defined with ``spool=True`` (set by the scenario
        #: runner); None keeps every queue in memory.
        self.spool_dir: str | None = None

    # -- scheduling ---------------------------------------------------------------
    def _call(self, delay: int, fn: Callable, *args) -> None:
        heapq.heappush(self._events, (self.now + delay, next(self._seq), fn, args))

    def at(self, seconds: float, fn: Callable, *args) -> None:
        """Run ``fn(*args)`` at ``seconds`` after the start (not before now)."""
        self._call(max(0, ticks(seconds) - self.now), fn, *args)

    def after(self, seconds: float, fn: Callable, *args) -> None:
        """Run ``fn(*args)`` ``seconds`` from now."""
        self._call(max(0, ticks(seconds)), fn, *args)

    def process(self, gen: Generator, name: str = "process", delay: float = 0.0) -> Process:
        """Start a generator as a :class:`Process` after ``delay`` seconds."""
        p = Process(self, gen, name)
        self._call(max(0, ticks(delay)), p._resume, 0, None)
        return p

    def run(self, until: float) -> None:
        """Run events until ``until`` seconds after the start (inclusive)."""
        limit = ticks(until)
        events = self._events
        while events and events[0][0] <= limit:
            t, _, fn, args = heapq.heappop(events)
            self.now = t
            fn(*args)
        self.now = max(self.now, limit)

    def pid(self) -> int:
        """A fresh operating-system-like process id (for temporary queue names)."""
        return next(self._pids)

    # -- time ---------------------------------------------------------------------
    @property
    def seconds(self) -> float:
        """Current time in seconds since the start."""
        return self.now / 100

    def datetime(self, t: int | None = None) -> dt.datetime:
        """UTC datetime of tick ``t`` (default now)."""
        return self.start + dt.timedelta(milliseconds=10 * (self.now if t is None else t))

    def _clock(self, t: int | None) -> tuple[tuple[str, str], int, int, int, int]:
        """(date strings, hours, minutes, seconds, hundredths) of tick ``t``, UTC."""
        t = self.now if t is None else t
        day, rem = divmod(t + self._day_offset, 8640000)
        dates = self._dates.get(day)
        if dates is None:
            d = (self.start + dt.timedelta(days=day)).date()
            dates = self._dates[day] = (d.strftime("%Y%m%d"), d.strftime("%Y-%m-%d"))
        h, rem = divmod(rem, 360000)
        m, rem = divmod(rem, 6000)
        s, hs = divmod(rem, 100)
        return dates, h, m, s, hs

    def put_date_time(self, t: int | None = None) -> tuple[str, str]:
        """``(PutDate, PutTime)`` of tick ``t``: ``YYYYMMDD`` and ``HHMMSSTH``, UTC."""
        dates, h, m, s, hs = self._clock(t)
        return dates[0], f"{h:02d}{m:02d}{s:02d}{hs:02d}"

    def iso(self, t: int | None = None) -> str:
        """ISO 8601 UTC time of tick ``t`` with hundredths, e.g. ``2024-03-15T08:00:01.25Z``."""
        t = self.now if t is None else t
        if t == self._iso_tick:
            return self._iso_text
        dates, h, m, s, hs = self._clock(t)
        self._iso_tick = t
        self._iso_text = f"{dates[1]}T{h:02d}:{m:02d}:{s:02d}.{hs:02d}Z"
        return self._iso_text

    # -- ground truth ----------------------------------------------------------------
    def label(self, pattern: str, when: Callable[..., bool]) -> None:
        """Register a ground-truth pattern for captured messages.

        When a message is captured and ``when(message, dlh)`` is true, it
        belongs to ``pattern`` as well as to the patterns its history set
        and those of earlier matching labels (``patterns`` of the ground
        truth); the first of them is its primary ``pattern``. ``dlh`` is the
        MQDLH field dict, or None for a message without one.
        """
        self.labels.append((pattern, when))
