"""Triggering explained: the trigger-condition evaluator and ``dlqlens triggers``.

:func:`evaluate` replays events (puts, gets, opens and closes, ALTERs,
trigger monitors starting) against MQSC queue definitions and says which
events make a trigger message and which condition of IBM's "Conditions for a
trigger event" stopped the others (:mod:`dlqlens.triggers.evaluator`). The
conditions themselves are :mod:`dlqlens.mq.triggering`, shared with the
simulator; the trigger detectors over captures are :mod:`dlqlens.detect.triggers`.
"""

from dlqlens.triggers.evaluator import (EVENTS, EventError, Outcome, evaluate, evaluate_files,
                                        parse_events, read_events)

__all__ = ["EVENTS", "EventError", "Outcome", "evaluate", "evaluate_files", "parse_events",
           "read_events"]
