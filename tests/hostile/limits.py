"""A guard against hangs that does not fail because the machine is busy.

The hostile tests run pathological inputs; one that loops must fail the
suite rather than hang it. A wall-clock alarm also fires when other
processes take the CPU (a shared machine), so the limit counts this
process's own CPU time (``ITIMER_PROF``: user + system time of all its
threads), which waiting for a core does not consume. A hang that burns no
CPU (a wait on Spark's JVM) is caught by a wall-clock alarm set
:data:`WALL_FACTOR` times later, a last resort only.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager

#: The wall-clock alarm fires after this many times the CPU-time limit.
WALL_FACTOR = 20


@contextmanager
def time_limit(seconds: float):
    """Raise ``TimeoutError`` inside the block once it has used ``seconds`` of
    CPU time (or ``WALL_FACTOR * seconds`` of wall-clock time)."""
    def cpu(*_):
        raise TimeoutError(f"used more than {seconds} s of CPU time")

    def wall(*_):
        raise TimeoutError(f"took longer than {WALL_FACTOR * seconds} s (wall clock)")

    old_prof = signal.signal(signal.SIGPROF, cpu)
    old_alrm = signal.signal(signal.SIGALRM, wall)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, WALL_FACTOR * seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, old_prof)
        signal.signal(signal.SIGALRM, old_alrm)
