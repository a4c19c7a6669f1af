"""Trigger events replayed against queue definitions (``dlqlens triggers evaluate``).

:func:`evaluate` replays events (puts, gets, opens and closes, ALTERs,
trigger monitors starting) against MQSC queue definitions and says which
events make a trigger message and which condition of IBM's "Conditions for a
trigger event" stopped the others (:mod:`dlqlens.trigger_events.evaluator`). The
conditions themselves are :mod:`dlqlens.mq.trigger_conditions`, shared with the
simulator; the trigger detectors over captures are :mod:`dlqlens.detect.trigger_messages`.
"""

from dlqlens.trigger_events.evaluator import (EVENTS, EventError, Outcome, evaluate,
                                              evaluate_files, parse_events, read_events)

__all__ = ["EVENTS", "EventError", "Outcome", "evaluate", "evaluate_files", "parse_events",
           "read_events"]
