"""A detector's finding, explained: what, why the detector believes it, how severe, what next.

:func:`explain_finding` turns one finding (a row of the findings DataFrame,
or its :func:`~dlqlens.detect.findings.finding_record` dict) into a
:class:`FindingExplanation`: the statement; the evidence as named facts with
their units in words (one small table per detector kind, :data:`EVIDENCE`,
mapping the evidence keys the detectors emit to labels); the severity and
why (the scale is :data:`dlqlens.detect.findings.SEVERITY_SCALE`); what to
check or do next, with the finding's real queue and queue-manager names
(:mod:`dlqlens.mq.remedies`); its ``finding_id``, the key of the links
DataFrame that holds all its messages (:mod:`dlqlens.detect.findings`); and
the sample of its messages the record carries as a filter
(:class:`MessageFilter`: a Spark column expression and a
``(source, message_number)`` predicate), not a list in the text.

Capture content is untrusted: :meth:`FindingExplanation.to_text` escapes
every character a terminal acts on (:func:`dlqlens.safe.one_line`),
:meth:`FindingExplanation._repr_html_` escapes everything with
:func:`html.escape`; :meth:`FindingExplanation.to_dict` is JSON-ready.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from dlqlens.detect.findings import SEVERITY_SCALE, finding_record
from dlqlens.explain.steps import NextStep, next_step
from dlqlens.mq.constants import MQAT_NAMES, code_name
from dlqlens.mq.remedies import REMEDIES, SITUATIONS, page_title
from dlqlens.safe import one_line

#: Ranges of message numbers shown per capture in the text before "... more".
SHOWN_RANGES = 4
#: Captures named in the text before "and N more".
SHOWN_SOURCES = 3
#: Ranges per capture up to which :meth:`MessageFilter.column` writes BETWEENs
#: (an IN list of the numbers above it).
MAX_BETWEENS = 16


@dataclass
class MessageFilter:
    """The messages of a finding, as a filter over a capture DataFrame.

    Attributes
    ----------
    ranges : dict
        ``source`` -> sorted list of inclusive ``(first, last)`` message
        number ranges.
    count : int
        Messages in the filter.
    """

    ranges: dict = field(default_factory=dict)
    count: int = 0

    @classmethod
    def from_refs(cls, refs) -> "MessageFilter":
        """From ``{source, message_number}`` references (a finding's ``messages``)."""
        numbers: dict[str, set] = {}
        for ref in refs or ():
            source, number = _get(ref, "source"), _get(ref, "message_number")
            if source is not None and number is not None:
                numbers.setdefault(source, set()).add(int(number))
        ranges = {}
        for source, nums in sorted(numbers.items()):
            out = []
            for n in sorted(nums):
                if out and n == out[-1][1] + 1:
                    out[-1] = (out[-1][0], n)
                else:
                    out.append((n, n))
            ranges[source] = out
        return cls(ranges, sum(len(v) for v in numbers.values()))

    def __call__(self, source, message_number) -> bool:
        """True when the message ``(source, message_number)`` is in the filter."""
        return any(lo <= int(message_number) <= hi for lo, hi in self.ranges.get(source, ()))

    def column(self, source: str = "source", message_number: str = "message_number"):
        """A Spark boolean Column selecting the filter's messages
        (``df.where(f.column())``); false for an empty filter."""
        from pyspark.sql import functions as F

        number = F.col(message_number)
        cond = None
        for src, ranges in self.ranges.items():
            if len(ranges) <= MAX_BETWEENS:
                nums = None
                for lo, hi in ranges:
                    c = (number == lo) if lo == hi else number.between(lo, hi)
                    nums = c if nums is None else nums | c
            else:
                nums = number.isin([n for lo, hi in ranges for n in range(lo, hi + 1)])
            c = (F.col(source) == F.lit(src)) & nums
            cond = c if cond is None else cond | c
        return cond if cond is not None else F.lit(False)

    def describe(self) -> str:
        """The filter in words: per capture, its message number ranges."""
        if not self.ranges:
            return "none"
        parts = []
        for src, ranges in list(self.ranges.items())[:SHOWN_SOURCES]:
            shown = ", ".join(f"#{lo}" if lo == hi else f"#{lo}-#{hi}"
                              for lo, hi in ranges[:SHOWN_RANGES])
            if len(ranges) > SHOWN_RANGES:
                shown += (f" and {len(ranges) - SHOWN_RANGES} more range(s) up to "
                          f"#{ranges[-1][1]}")
            parts.append(f"{src} {shown}")
        more = len(self.ranges) - SHOWN_SOURCES
        return "; ".join(parts) + (f"; and {more} more capture(s)" if more > 0 else "")

    def to_dict(self) -> dict:
        return {"count": self.count,
                "ranges": {s: [[lo, hi] for lo, hi in r] for s, r in self.ranges.items()}}


def _get(d, key, default=None):
    if isinstance(d, Mapping):
        return d.get(key, default)
    return getattr(d, key, default) if d is not None else default


# -- evidence: how each key reads --------------------------------------------------------

def _num(v) -> str:
    if isinstance(v, float):
        return f"{v:,.3f}".rstrip("0").rstrip(".")
    return f"{v:,}" if isinstance(v, int) else str(v)


def _fmt(unit: str, v, ev: dict) -> str:
    """One evidence value in words; ``unit`` is ``kind[:words][|null text]``."""
    unit, _, null_text = unit.partition("|")
    kind, _, words = unit.partition(":")
    if v is None:
        return null_text or "unknown"
    if kind == "count":
        return f"{_num(v)} {words}".strip()
    if kind == "seconds":
        return f"{_num(v)} seconds"
    if kind == "ms":
        return f"{_num(v)} milliseconds"
    if kind == "rate":
        return f"{_num(v)} {words}"
    if kind == "percent":
        return f"{v * 100:.1f} % of the depth"
    if kind == "qmgr":
        return str(v).strip() or "blank: the local queue manager"
    if kind == "name":
        return str(v).strip() or "(blank)"
    if kind == "prefix":
        return f"{v}*"
    if kind == "reason":
        name = ev.get("reason_name") or (code_name(v) if isinstance(v, int) else None)
        return f"{v} {name}" if name else str(v)
    if kind == "appltype":
        return f"{v} {MQAT_NAMES.get(v, '')}".strip()
    if kind == "ref":
        return f"{_get(v, 'source')} #{_get(v, 'message_number')}"
    if kind == "ongoing":
        return {True: "yes: its last dead letter came within the gap that ends a burst, before "
                      "a known capture time",
                False: "no: it had ended before the capture"}.get(
                    v, "unknown: the capture's time cannot show it")
    if kind == "timestamp":
        return str(v).replace("T", " ").replace("Z", " UTC")
    if kind == "curve":
        return ", ".join(f"{_num(p.get('expired_in_depth'))} after {_num(p.get('after_seconds'))} s"
                         for p in v)
    if kind == "reasons":
        return ", ".join(f"{_num(n)} with {k} {code_name(int(k))}" for k, n in v.items())
    if kind == "list":
        return ", ".join(str(x) for x in v) or "none"
    if kind == "item":
        return f"item {v} of \"Conditions for a trigger event\": {ITEM_WORDS.get(v, '')}".rstrip(
            ": ")
    if kind == "signal":
        return f"{v}: {SIGNAL_WORDS.get(v, '')}".rstrip(": ")
    return json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else str(v)


#: What each backout_loop signal means.
SIGNAL_WORDS = {
    "threshold_reached": "dead letters with MQRC_BACKOUT_THRESHOLD_REACHED (2362)",
    "backout_count": "messages whose BackoutCount is at or past the threshold",
    "backed_out": "messages backed out, below the threshold",
    "backout_queue": "messages waiting on a backout queue",
    "redelivered": "the same message back on the DLQ or a backout queue more than once",
    "ping_pong": "messages going round between backouts and a DLQ handler's RETRY",
}

#: What a trigger storm's ``item`` blames (IBM MQ, "Conditions for a trigger event").
ITEM_WORDS = {
    11: "re-triggers on puts once TRIGINT has passed: TRIGINT too low (TRIGTYPE(FIRST))",
    12: "re-triggers on every close that leaves messages: a server that does not drain its queue",
    13: "TRIGGER turned back on while TRIGDPTH or more messages wait (TRIGTYPE(DEPTH), whose "
        "TRIGGER the queue manager turns off after each trigger message)",
}

#: Per detector kind: evidence key -> (label, unit). Units: ``count:<what>``,
#: ``seconds``, ``ms``, ``rate:<per what>``, ``percent``, ``name``, ``qmgr``,
#: ``prefix``, ``reason``, ``appltype``, ``ref`` (a message), ``ongoing``,
#: ``timestamp``, ``curve``, ``reasons``, ``list``, ``signal``, ``item``; ``|text`` is
#: how a null reads. Keys a detector emits that are not here are shown under
#: their own name (nothing is hidden); ``reason_name`` is read with ``reason``.
EVIDENCE: dict[str, dict[str, tuple[str, str]]] = {
    "reason_burst": {
        "reason": ("Reason", "reason"),
        "dest_queue": ("Destination queue", "name"),
        "dest_qmgr": ("Destination queue manager", "qmgr"),
        "messages": ("Dead letters", "count:messages"),
        "first_message": ("First", "ref"),
        "last_message": ("Last", "ref"),
        "duration_seconds": ("Duration", "seconds"),
        "rate_per_second": ("Mean rate", "rate:dead letters a second"),
        "peak_per_minute": ("Busiest minute", "count:dead letters"),
        "quiet_before_seconds": ("Quiet before it", "seconds|none earlier in the capture"),
        "ongoing_at_capture": ("Still going at the capture", "ongoing"),
    },
    "backout_loop": {
        "signal": ("Signal", "signal"),
        "queue": ("Queue", "name"),
        "messages": ("Messages", "count:messages"),
        "max_backout_count": ("Highest BackoutCount", "count:backouts on the queue the capture "
                              "read (MQPUT ignores the field)"),
        "threshold": ("Threshold used", "count:backouts"),
        "bothresh": ("BOTHRESH", "count:backouts|not known (no queue definition given)"),
        "boqname": ("BOQNAME", "name|none, or no queue definition given"),
        "distinct_msgids": ("Distinct MsgIds", "count:"),
    },
    "expiry_buildup": {
        "queue": ("Queue", "name"),
        "source": ("Capture", "name"),
        "capture_time": ("Capture time", "timestamp"),
        "depth": ("Depth", "count:messages"),
        "finite_expiry": ("With a finite expiry", "count:messages"),
        "expired_at_capture": ("Already expired at the capture", "count:messages"),
        "expiring_soon": ("Expiring within the horizon", "count:messages"),
        "soon_seconds": ("Horizon", "seconds"),
        "expired_fraction_soon": ("Share expiring within the horizon", "percent"),
        "report_requested": ("Asking for expiration reports", "count:messages"),
        "first_expiry": ("First expiry", "timestamp"),
        "last_expiry": ("Last expiry", "timestamp"),
        "curve": ("Expired yet in the depth, after the capture", "curve"),
        "dead_letters": ("Dead letters among them", "count:messages"),
        "next_capture": ("Next snapshot of the queue", "name|none"),
        "vanished_by_expiry": ("Gone by then after expiring", "count:messages"),
        "vanished_otherwise": ("Gone by then while alive", "count:messages"),
    },
    "orphaned_reply": {
        "reply_qmgr": ("Reply queues' queue manager", "qmgr"),
        "queue_prefix": ("Reply queue names", "prefix"),
        "requester_qmgr": ("Requests made on", "qmgr"),
        "reasons": ("By reason", "reasons"),
        "replies": ("Replies", "count:messages"),
        "reports": ("Reports", "count:messages"),
        "other": ("Other messages", "count:messages"),
        "distinct_queues": ("Distinct reply queues", "count:queues"),
        "responders": ("Responding applications", "list"),
        "users": ("User ids", "list"),
    },
    "trigger_storm": {
        "count": ("Trigger messages", "count:messages"),
        "span_seconds": ("Over", "seconds"),
        "rate_per_minute": ("Rate", "rate:trigger messages a minute"),
        "process": ("Process", "name"),
        "applid": ("Program", "name"),
        "trigtype": ("TRIGTYPE", "name|not known (no queue definition given)"),
        "trigint_ms": ("TRIGINT", "ms|not known"),
        "allowed": ("Most that TRIGINT allows over that time", "count:trigger messages|not "
                    "known (TRIGTYPE(FIRST) and TRIGINT needed: TRIGINT applies to FIRST only)"),
        "item": ("Condition blamed", "item|not known (no queue definition given)"),
        "dead_lettered": ("Of them on a dead-letter queue", "count:messages"),
    },
    "unknown_destination": {
        "reason": ("Reason", "reason"),
        "dest_queue": ("Destination queue", "name"),
        "dest_qmgr": ("Destination queue manager", "qmgr"),
        "messages": ("Dead letters", "count:messages"),
        "span_seconds": ("Over", "seconds"),
        "rate_per_minute": ("Rate", "rate:dead letters a minute"),
        "senders": ("Sending applications (PutApplName)", "list"),
        "users": ("User ids", "list"),
    },
    "persistent_reply": {
        "reason": ("Reason", "reason"),
        "reply_qmgr": ("Reply queues' queue manager", "qmgr"),
        "queue_prefix": ("Reply queue names", "prefix"),
        "messages": ("Dead letters", "count:messages"),
        "replies": ("Replies", "count:messages"),
        "reports": ("Reports", "count:messages"),
        "other": ("Other messages", "count:messages"),
        "persistent": ("Persistent (MQMD Persistence 1)", "count:messages"),
        "distinct_queues": ("Distinct reply queues", "count:queues"),
        "senders": ("Responding applications (PutApplName)", "list"),
        "users": ("User ids", "list"),
    },
    "trigger_failure": {
        "count": ("Dead-lettered trigger messages", "count:messages"),
        "reason": ("Reason", "reason"),
        "process": ("Process", "name"),
        "applid": ("Program", "name"),
        "appltype": ("Application type", "appltype"),
        "initq": ("Initiation queue", "name"),
        "rate_per_minute": ("Rate", "rate:trigger messages a minute"),
    },
}
_READ_WITH = {"reason_name"}


def evidence_facts(kind: str, evidence: Mapping) -> list[dict]:
    """The evidence of a finding as named facts: ``key``, ``label``,
    ``value`` (as emitted) and ``text`` (in words, with units)."""
    table = EVIDENCE.get(kind, {})
    facts = []
    for key, value in evidence.items():
        if key in _READ_WITH and "reason" in evidence:
            continue
        label, unit = table.get(key, (key, "text"))
        facts.append({"key": key, "label": label, "value": value,
                      "text": _fmt(unit, value, dict(evidence))})
    return facts


# -- severity --------------------------------------------------------------------------

def severity_reason(kind: str, severity: str, ev: Mapping) -> str:
    """Why the finding has its severity, in words, by :data:`SEVERITY_SCALE`."""
    why = ""
    if kind == "reason_burst":
        why = {True: "the burst had not ended when the capture was taken",
               False: "the burst had ended before the capture"}.get(
                   ev.get("ongoing_at_capture"),
                   "the capture holds no time of its own, so it cannot show whether the burst "
                   "went on")
    elif kind == "expiry_buildup":
        why = (f"{ev.get('expiring_soon')} of {ev.get('depth')} messages expire within "
               f"{_num(ev.get('soon_seconds'))} seconds of the capture")
    elif kind == "backout_loop":
        why = {"threshold_reached": "poison messages parked on the DLQ"
                                    + (" and still arriving at the capture"
                                       if severity == "high" else ""),
               "ping_pong": "messages in the capture are still going round",
               "redelivered": "the same messages came back: a loop",
               "backout_count": "messages backed out to the threshold"
                                + (" with no BOQNAME to move them to" if severity == "high"
                                   else ""),
               "backed_out": "backed out below the threshold",
               "backout_queue": "poison messages parked on a backout queue"}.get(
                   ev.get("signal"), "")
    elif kind == "trigger_failure":
        why = ("trigger messages were still being dead-lettered at the capture"
               if severity == "high" else
               "an application was not started; not shown still failing at the capture")
    elif kind == "trigger_storm":
        why = ("the storm was still going at the capture" if severity == "high" else
               f"{_num(ev.get('rate_per_minute'))} trigger messages a minute, not shown still "
               "going at the capture")
    elif kind == "orphaned_reply":
        why = ("replies were still arriving at the capture" if severity == "high" else
               f"{ev.get('replies', 0) or 0} replies and {ev.get('reports', 0) or 0} reports "
               "whose requesters had gone")
    elif kind in ("unknown_destination", "persistent_reply"):
        why = ("such dead letters were still arriving at the capture" if severity == "high" else
               f"{ev.get('messages', 0) or 0} message(s) that can never reach their queue "
               "until the application or the definitions are fixed, not shown still arriving "
               "at the capture")
    scale = SEVERITY_SCALE.get(severity, "")
    return f"{severity}: {why}" + (f" ({severity} means {scale})" if scale else "")


# -- next steps ------------------------------------------------------------------------

_BACKOUT_SITUATION = {"backout_count": "BACKOUT_COUNT", "backed_out": "BACKED_OUT",
                      "backout_queue": "BACKOUT_QUEUE", "redelivered": "RETRY_LOOP",
                      "ping_pong": "RETRY_LOOP"}


def _reason_step(code, name, names, title=None) -> NextStep:
    if not name and isinstance(code, int):
        name = code_name(code)
    entry = REMEDIES.get(name or "")
    if entry is None:
        entry = SITUATIONS["GENERIC"]
        names = dict(names, reason_text=f"{name or 'reason'} ({code})")
    return next_step(entry, dict(names, reason=name),
                     title=title or f"{name} ({code})",
                     page_title=page_title(code, name) if isinstance(code, int) and name else "")


def finding_steps(kind: str, queues: list, ev: Mapping, *, qmgr=None, dlq=None,
                  dlq_qmgr=None) -> list[NextStep]:
    """What to check or do next for a finding, with its names put in."""
    queue = queues[0] if queues else None
    base = {"queue": queue, "qmgr": qmgr, "dlq": dlq, "dlq_qmgr": dlq_qmgr}
    if kind == "reason_burst":
        names = dict(base, queue=ev.get("dest_queue", queue), qmgr=ev.get("dest_qmgr"))
        return [_reason_step(ev.get("reason"), ev.get("reason_name"), names)]
    if kind == "backout_loop":
        signal = ev.get("signal")
        if signal == "threshold_reached":
            return [_reason_step(ev.get("reason", 2362), "MQRC_BACKOUT_THRESHOLD_REACHED", base,
                                 title="MQRC_BACKOUT_THRESHOLD_REACHED (2362)")]
        entry = SITUATIONS[_BACKOUT_SITUATION.get(signal, "BACKOUT_COUNT")]
        return [next_step(entry, base, title=f"backout_loop: {signal}")]
    if kind == "expiry_buildup":
        return [next_step(SITUATIONS["EXPIRY_BUILDUP"], dict(base, queue=ev.get("queue", queue)),
                          title="Expiring messages")]
    if kind == "orphaned_reply":
        prefix = ev.get("queue_prefix")
        names = dict(base, queue=f"{prefix}*" if prefix is not None else queue,
                     qmgr=ev.get("reply_qmgr"))
        return [next_step(SITUATIONS["ORPHANED_REPLY"], names, title="Orphaned replies")]
    if kind == "trigger_storm":
        names = dict(base, app_queue=queue, process=ev.get("process"), applid=ev.get("applid"))
        if ev.get("trigtype") == "DEPTH":  # TRIGGER off after every DEPTH trigger message
            return [next_step(SITUATIONS["TRIGGER_STORM_DEPTH"], names,
                              title="Trigger storm (TRIGTYPE(DEPTH))")]
        return [next_step(SITUATIONS["TRIGGER_STORM"], names, title="Trigger storm")]
    if kind == "unknown_destination":
        names = dict(base, queue=ev.get("dest_queue", queue), qmgr=ev.get("dest_qmgr"))
        return [_reason_step(ev.get("reason", 2085), "MQRC_UNKNOWN_OBJECT_NAME", names)]
    if kind == "persistent_reply":
        prefix = ev.get("queue_prefix")
        names = dict(base, queue=f"{prefix}*" if prefix is not None else queue,
                     qmgr=ev.get("reply_qmgr"))
        return [next_step(SITUATIONS["PERSISTENT_REPLY"], names,
                          title="Persistent replies to temporary dynamic queues")]
    if kind == "trigger_failure":
        names = dict(base, app_queue=queue, process=ev.get("process"), applid=ev.get("applid"),
                     initq=ev.get("initq"), queue=ev.get("initq") or queue)
        name = ev.get("reason_name")
        return [_reason_step(ev.get("reason"), name, names)]
    return []


# -- the explanation -------------------------------------------------------------------

@dataclass
class FindingExplanation:
    """One finding, explained.

    Attributes
    ----------
    kind, severity, statement : str
        As in the finding.
    severity_reason : str
        Why it has that severity, by the scale.
    queues : list of str
    window_start, window_end : str or None
        ISO 8601 UTC.
    message_count : int
    evidence : list of dict
        ``key``, ``label``, ``value``, ``text`` (:func:`evidence_facts`).
    next_steps : list of NextStep
    messages : MessageFilter
        The messages the record listed (a sample: at most
        :data:`dlqlens.detect.findings.SAMPLE_SIZE` by default), as a filter.
        All of them: the links with this ``finding_id``
        (``Findings.messages(df, finding_id)``).
    finding_id : str or None
        The finding's stable id (:func:`dlqlens.detect.findings.finding_id_column`).
    """

    kind: str
    severity: str
    statement: str
    severity_reason: str
    queues: list = field(default_factory=list)
    window_start: str | None = None
    window_end: str | None = None
    message_count: int = 0
    evidence: list = field(default_factory=list)
    next_steps: list = field(default_factory=list)
    messages: MessageFilter = field(default_factory=MessageFilter)
    finding_id: str | None = None

    def _messages_text(self) -> str:
        listed = self.messages.count
        if listed >= self.message_count:
            head = f"Messages ({listed}, as a filter)"
        else:
            head = f"Messages (the first {listed} of {self.message_count}, as a filter)"
        rest = (f"; all of them: the links of finding {self.finding_id}"
                if self.finding_id and listed < self.message_count else "")
        return f"{head}: {self.messages.describe()}{rest}"

    def heading(self) -> str:
        """``[SEVERITY] kind  queues  start .. end  N message(s)`` (escaped)."""
        def when(v):
            return (v[:10] + " " + v[11:23] + "Z") if v else "?"  # milliseconds are enough

        return (f"[{self.severity.upper()}] {self.kind}  {one_line(', '.join(self.queues))}  "
                f"{when(self.window_start)} .. {when(self.window_end)}  "
                f"{self.message_count} message(s)")

    def to_text(self) -> str:
        """Several lines, no blank line inside, no trailing newline; ends with
        what to check or do next. Capture values are escaped."""
        lines = [self.heading(), "    " + one_line(self.statement),
                 "    Severity " + one_line(self.severity_reason)]
        if self.evidence:
            lines.append("    Why the detector says so:")
            width = max(len(f["label"]) for f in self.evidence)
            lines += [f"      {one_line(f['label']):<{width}}  {one_line(f['text'])}"
                      for f in self.evidence]
        lines.append("    " + one_line(self._messages_text()))
        if self.next_steps:
            lines.append("    What to check or do next:")
            for step in self.next_steps:
                lines += step.text_lines("      ")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = "".join(f"<tr><th style='text-align:left'>{esc(f['label'])}</th>"
                       f"<td style='text-align:left'>{esc(f['text'])}</td></tr>"
                       for f in self.evidence)
        steps = "".join(s.to_html() for s in self.next_steps)
        return (f"<div><p><b>{esc(self.severity.upper())}</b> <code>{esc(self.kind)}</code> "
                f"{esc(', '.join(self.queues))} — {self.message_count} message(s)</p>"
                f"<p>{esc(self.statement)}</p><p><i>Severity {esc(self.severity_reason)}</i></p>"
                f"<table>{rows}</table><p>{esc(self._messages_text())}</p>"
                + (f"<h4>What to check or do next</h4>{steps}" if steps else "") + "</div>")

    def to_dict(self) -> dict:
        return {"finding_id": self.finding_id, "kind": self.kind, "severity": self.severity,
                "severity_reason": self.severity_reason, "statement": self.statement,
                "queues": list(self.queues), "window_start": self.window_start,
                "window_end": self.window_end, "message_count": self.message_count,
                "evidence": [dict(f) for f in self.evidence],
                "next_steps": [s.to_dict() for s in self.next_steps],
                "messages": self.messages.to_dict()}


def explain_finding(record, *, qmgr: str | None = None, capture_queues: Mapping | None = None,
                    dlq: str | None = None, dlq_qmgr: str | None = None) -> FindingExplanation:
    """Explain one finding.

    Parameters
    ----------
    record : mapping or Row
        A :func:`~dlqlens.detect.findings.finding_record` dict (its
        ``messages`` a sample), or a row of a findings DataFrame (no messages:
        the filter is empty, the count and ``finding_id`` say where they are).
    qmgr : str, optional
        The queue manager of the finding's queue when the finding does not
        name it (backout loops, storms, trigger failures); commands then run
        on it, else on "the destination's queue manager".
    capture_queues : mapping, optional
        ``{source: (qmgr, queue)}`` (:func:`dlqlens.capture.reader.captured_queues`):
        the capture of the finding's first message names the dead-letter queue
        and its queue manager (for the DLQ handler's commands), and, for the
        findings made of dead letters that do not name a queue manager
        (trigger failures, backout-threshold dead letters), the queue manager
        of their queue: a trigger monitor and a JMS consumer dead-letter to
        the DLQ of the queue manager they are connected to.
    dlq, dlq_qmgr : str, optional
        The dead-letter queue and its queue manager, for the DLQ handler's commands.

    Returns
    -------
    FindingExplanation
    """
    if not isinstance(record, Mapping):
        record = finding_record(record)
    kind = record.get("kind") or ""
    severity = record.get("severity") or ""
    ev = dict(record.get("evidence") or {})
    queues = [str(q) for q in (record.get("queues") or [])]
    if capture_queues:
        first = next(iter(record.get("messages") or ()), None)
        source = ev.get("source") if kind == "expiry_buildup" else _get(first, "source")
        entry = capture_queues.get(source)
        if isinstance(entry, (tuple, list)) and len(entry) == 2:
            dlq, dlq_qmgr = dlq or entry[1], dlq_qmgr or entry[0]
            dead_letters = kind == "trigger_failure" or (
                kind == "backout_loop" and ev.get("signal") == "threshold_reached")
            if qmgr is None and (kind == "expiry_buildup" or dead_letters):
                qmgr = entry[0]
    return FindingExplanation(
        kind=kind, severity=severity, statement=record.get("statement") or "",
        severity_reason=severity_reason(kind, severity, ev), queues=queues,
        window_start=record.get("window_start"), window_end=record.get("window_end"),
        message_count=int(record.get("message_count") or 0),
        evidence=evidence_facts(kind, ev),
        next_steps=finding_steps(kind, queues, ev, qmgr=qmgr, dlq=dlq, dlq_qmgr=dlq_qmgr),
        messages=MessageFilter.from_refs(record.get("messages")),
        finding_id=record.get("finding_id"))


__all__ = ["EVIDENCE", "FindingExplanation", "MessageFilter", "SIGNAL_WORDS", "evidence_facts",
           "explain_finding", "finding_steps", "severity_reason"]
