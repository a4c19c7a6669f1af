"""Why did this message land on the dead-letter queue? One message, data first.

:func:`explain` turns one decoded message (a row of the message schema,
``docs/columns.md``) into an :class:`Explanation`: plain data saying what
happened (the reason in words for this message, MQRC or MQFB, and a report's
own feedback), who put it on the DLQ (the MQDLH's PutApplName/PutApplType: a
channel agent, a channel initiator, a trigger monitor, the queue manager, a
JMS consumer, a broker, an application) and who put the original (the
MQMD's), where it was going (DestQName at DestQMgrName, and what the header
chain adds: MQXQH, MQTM, MQRFH2), when (original put, DLQ put, age at the
capture, remaining expiry), its BackoutCount, the findings it belongs to and
the rules-table replay of it when given, and what to check or do next: the
usual causes of its reason and the commands that confirm them, with its
queue and queue-manager names put in (:mod:`dlqlens.mq.remedies`,
:mod:`dlqlens.explain.steps`). :func:`explain_messages` does it for the rows
of a Spark DataFrame that a filter selects, bringing only those rows (and
their findings and replay rows) to the driver.

Values the capture does not hold (null fields) read "unknown", never 0 or
blank; a DestQMgrName that is present and blank reads "the local queue
manager". Capture content is untrusted: :meth:`Explanation.to_text`
escapes every character a terminal acts on, line feeds included (each fact
and command is one line: :func:`dlqlens.safe.one_line`), :meth:`Explanation._repr_html_`
escapes everything with :func:`html.escape`, and :meth:`Explanation.to_dict`
is JSON-ready.
"""

from __future__ import annotations

import datetime as _dt
import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from dlqlens.explain.steps import NextStep, next_step, prose_name
from dlqlens.mq.constants import (MQAT, MQAT_NAMES, MQMT, MQMT_NAMES, MQPER_NAMES,
                                  NON_RETRYABLE_REASONS, RETRY_REASONING, RETRYABLE_REASONS,
                                  TEMPORARY_QUEUE_PREFIXES, code_name, describe_code)
from dlqlens.mq.remedies import (DLH_REASON_PAGE, MD_FEEDBACK_PAGE, REASON_CODES_PAGE,
                                 REMEDIES, REPORT_FEEDBACK, SITUATIONS, page_title)
from dlqlens.safe import one_line

#: Characters of payload text shown.
PREVIEW_CHARS = 160

#: PutApplName values of the channel agents that dead-letter on arrival
#: (``amqrmppa`` the channel process pool, ``runmqchl`` a channel run by hand,
#: ``amqcrsta`` a channel started by inetd; IBM MQ: "Dead-letter queue
#: processing" of the receiving MCA). On z/OS the channel initiator
#: (``<ssid>CHIN``) is known by its PutApplType, MQAT_CHANNEL_INITIATOR.
_CHANNEL_AGENTS = ("amqrmppa", "runmqchl", "amqcrsta")

#: The columns :func:`explain` reads.
EXPLAIN_COLUMNS = ("source", "message_number", "source_line", "source_offset", "md", "dlh", "tm",
                   "xqh", "rfh2", "headers", "payload_format", "payload_length", "payload_text",
                   "data_length", "decode_status", "decode_issues", "put_ts", "dlh_put_ts")


def _iso(value) -> str | None:
    return None if value is None else value.isoformat(timespec="milliseconds") + "Z"


@dataclass
class Explanation:
    """Why one message is where it is, as data.

    Attributes
    ----------
    source : str
        The capture file.
    message_number : int
        1-based position in the capture.
    headline : str
        One sentence: reason, by whom, where it was going.
    facts : list of (str, str)
        Label, text; in reading order (the text view's table).
    reason : dict or None
        ``code``, ``name``, ``family`` (``MQRC``, ``MQFB``...), ``meaning``
        (the code's general meaning), ``happened`` (what it means for this
        message), ``failed_put`` (whether the reason is a put that failed);
        None without an MQDLH.
    report : dict or None
        For a report message (MsgType MQMT_REPORT): ``feedback`` (code),
        ``name``, ``meaning``: what the report is; the MQDLH reason says why
        it could not be delivered.
    dead_lettered_by : dict or None
        ``name``, ``appl_type``, ``appl_type_name``, ``role`` (``channel_agent``,
        ``channel_initiator``, ``trigger_monitor``, ``queue_manager``,
        ``jms``, ``broker``, ``application``) and ``role_text``; None without
        an MQDLH.
    original_put_by : dict
        ``name``, ``appl_type``, ``appl_type_name``, ``user`` of the MQMD
        (the original put's context).
    destination : dict
        ``queue``, ``qmgr`` (None when not in the capture, ``""`` when
        blank), ``qmgr_text`` (in words: blank means the local queue
        manager) and ``route`` (list of ``{header, text}`` from MQXQH, MQTM,
        MQRFH2).
    times : dict
        ``put``, ``dlq_put``, ``capture`` (UTC datetimes or None),
        ``capture_origin`` (``given``, ``banner`` or None),
        ``seconds_to_dead_letter``, ``age_seconds`` (capture - original put),
        ``on_dlq_seconds`` (capture - DLQ put), ``expiry_seconds``
        (``md.Expiry`` / 10 when the capture read it; None for unlimited or
        unknown), ``expiry_unlimited`` (bool or None), ``expires_at``.
    backout : dict
        ``count`` (``md.BackoutCount``, None when unknown) and ``text``.
    findings : list of dict
        ``kind``, ``severity``, ``queues``, ``statement`` of the findings
        that point at this message (when given).
    replay : dict or None
        The rules-table replay row of this message (``dlqlens.rules.replay``
        output) and ``text``, when given.
    next_steps : list of NextStep
        What to check or do next, most relevant first.
    """

    source: str
    message_number: int
    headline: str
    facts: list = field(default_factory=list)
    reason: dict | None = None
    report: dict | None = None
    dead_lettered_by: dict | None = None
    original_put_by: dict = field(default_factory=dict)
    destination: dict = field(default_factory=dict)
    times: dict = field(default_factory=dict)
    backout: dict = field(default_factory=dict)
    findings: list = field(default_factory=list)
    replay: dict | None = None
    next_steps: list = field(default_factory=list)

    def to_text(self) -> str:
        """Plain text: the facts, then what to check or do next; control
        characters from the capture escaped."""
        lines = [f"{one_line(self.source)} #{self.message_number}", one_line(self.headline), ""]
        width = max((len(k) for k, _ in self.facts), default=0)
        # every fact is one line: a name holding a line feed must not start a new one
        lines += [f"{k:<{width}}  {one_line(v)}" for k, v in self.facts]
        text = "\n".join(lines) + "\n"
        if self.next_steps:
            steps = ["", "What to check or do next"]
            for i, step in enumerate(self.next_steps):
                # the reason's step: "What happened" above says it already
                steps += step.text_lines("  ", happened=not (i == 0 and self.reason))
            text += "\n".join(steps) + "\n"  # text_lines escapes with one_line
        return text

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = "".join(f"<tr><th style='text-align:left;vertical-align:top'>{esc(k)}</th>"
                       f"<td style='text-align:left'>{esc(v)}</td></tr>" for k, v in self.facts)
        steps = "".join(s.to_html() for s in self.next_steps)
        return (f"<div><p><code>{esc(self.source)} #{self.message_number}</code></p>"
                f"<p><b>{esc(self.headline)}</b></p><table>{rows}</table>"
                + (f"<h4>What to check or do next</h4>{steps}" if steps else "") + "</div>")

    def to_dict(self) -> dict:
        """Everything as JSON-ready values (datetimes as ISO 8601 UTC with ``Z``)."""
        times = {k: (_iso(v) if isinstance(v, _dt.datetime) else v)
                 for k, v in self.times.items()}
        return {
            "source": self.source, "message_number": self.message_number,
            "headline": self.headline, "facts": [[k, v] for k, v in self.facts],
            "reason": self.reason, "report": self.report,
            "dead_lettered_by": self.dead_lettered_by, "original_put_by": self.original_put_by,
            "destination": self.destination, "times": times, "backout": self.backout,
            "findings": self.findings, "replay": self.replay,
            "next_steps": [s.to_dict() for s in self.next_steps],
        }


def _get(d, key, default=None):
    if isinstance(d, Mapping):
        return d.get(key, default)
    if d is not None and hasattr(d, "asDict"):
        return d.asDict(recursive=True).get(key, default)
    return default


def utc(value) -> _dt.datetime | None:
    """A timestamp (datetime, aware or naive-taken-as-UTC, or ISO-like text) as
    a naive UTC datetime; None when absent or unreadable."""
    from dlqlens.capture.reader import to_utc

    if isinstance(value, str):
        value = value.strip().removesuffix(" UTC")
    elif not isinstance(value, _dt.datetime):
        return None
    try:
        return to_utc(value)
    except ValueError:
        return None


def _ts(value) -> str:
    """A put timestamp (UTC) as text."""
    value = utc(value)
    if value is None:
        return "an unknown time"
    return value.isoformat(sep=" ", timespec="milliseconds") + " UTC"


def _seconds(a, b) -> float | None:
    a, b = utc(a), utc(b)
    if a is None or b is None:
        return None
    return round((b - a).total_seconds(), 3)


def _duration(seconds: float) -> str:
    """``12.5 s``, ``3 min 20 s``, ``2 h 5 min``, ``3 days 4 h``."""
    s = abs(seconds)
    if s < 120:
        text = f"{s:g} s"
    elif s < 7200:
        text = f"{int(s // 60)} min {int(s % 60)} s"
    elif s < 172800:
        text = f"{int(s // 3600)} h {int(s % 3600 // 60)} min"
    else:
        text = f"{int(s // 86400)} days {int(s % 86400 // 3600)} h"
    return text if seconds >= 0 else f"-{text}"


def _name(value) -> str:
    """A name field in words: itself, "(blank)" or "unknown"."""
    if value is None:
        return "unknown"
    return str(value).strip() or "(blank)"


def _appl(name, appl_type) -> str:
    if appl_type is None:
        return f"{_name(name)} (PutApplType unknown)"
    return f"{_name(name)} ({MQAT_NAMES.get(appl_type, f'PutApplType {appl_type}')})"


def _temporary(queue) -> bool:
    return bool(queue) and any(queue.startswith(p.rstrip("*")) for p in TEMPORARY_QUEUE_PREFIXES)


def _role(dlh: Mapping, trigger: bool) -> tuple[str, str]:
    """Who put the message on the DLQ, from the MQDLH's putting application:
    (role key, words)."""
    name = (_get(dlh, "PutApplName") or "").strip()
    appl_type = _get(dlh, "PutApplType")
    base = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    if trigger:
        return ("trigger_monitor", "a trigger monitor: this is a trigger message for an "
                "application it could not start (or could not hand the message to)")
    if appl_type == MQAT["MQAT_CHANNEL_INITIATOR"]:
        return ("channel_initiator", "the channel initiator (z/OS), the receiving end of a "
                "channel: the message arrived from another queue manager and could not be put "
                "to its destination")
    if base in _CHANNEL_AGENTS:
        return ("channel_agent", "the receiving end of a channel (message channel agent): the "
                "message arrived from another queue manager and could not be put to its "
                "destination")
    if appl_type == MQAT["MQAT_QMGR"]:
        return ("queue_manager", "the queue manager itself, when it could not deliver the "
                "message (a trigger message, a report, a publication)")
    if appl_type == MQAT["MQAT_BROKER"]:
        return ("broker", "a publish/subscribe broker or integration node (e.g. an input "
                "node's failure handling)")
    if appl_type == MQAT["MQAT_JAVA"]:
        return ("jms", "a Java application: for 2362-2364 the JMS ConnectionConsumer of "
                "application server facilities (an MDB's listener)")
    if name or appl_type is not None:
        return ("application", "an application (or a DLQ handler forwarding with HEADER(YES)) "
                "that put the dead-letter header itself")
    return ("unknown", "unknown: the MQDLH names no putting application")


def _route(row) -> list[dict]:
    """What the header chain adds about the destination."""
    route = []
    xqh = _get(row, "xqh")
    if xqh:
        route.append({"header": "MQXQH", "text": (
            f"it was on a transmission queue, addressed to {_name(_get(xqh, 'RemoteQName'))} on "
            f"{_name(_get(xqh, 'RemoteQMgrName'))}")})
    tm = _get(row, "tm")
    if tm:
        route.append({"header": "MQTM", "text": (
            f"a trigger message for queue {_name(_get(tm, 'QName'))}, process "
            f"{_name(_get(tm, 'ProcessName'))}, program {_name(_get(tm, 'ApplId'))}")})
    rfh2 = _get(row, "rfh2")
    if rfh2:
        folders = " ".join(str(f) for f in (_get(rfh2, "NameValueData") or []))
        dst = re.search(r"<Dst>([^<]*)</Dst>", folders)
        text = "an MQRFH2 (JMS or message properties)"
        if dst:
            text += f"; its JMS destination was {dst.group(1)}"
        route.append({"header": "MQRFH2", "text": text})
    return route


def _capture_time(capture_time, source):
    """``capture_time`` for ``source``: one time, or a mapping by source or base name."""
    if capture_time is None:
        return None
    if isinstance(capture_time, Mapping):
        base = re.split(r"[/\\]", str(source))[-1]
        value = capture_time.get(source, capture_time.get(base))
        return utc(value)
    return utc(capture_time)


def _in_finding(record, source, number) -> bool:
    for m in _get(record, "messages") or ():
        if _get(m, "source") == source and _get(m, "message_number") == number:
            return True
    return False


def _replay_text(replay: Mapping) -> str:
    tried = _get(replay, "tried") or []
    parts = []
    for t in tried:
        outcome = _get(t, "outcome")
        reason = _get(t, "reason")
        parts.append(f"rule {_get(t, 'rule_index')}: {_get(t, 'attempts')} attempt(s), {outcome}"
                     + (f" ({code_name(reason)})" if reason is not None else ""))
    disposition = _get(replay, "disposition")
    action = _get(replay, "action")
    if disposition in ("retried", "forwarded"):
        target = _name(_get(replay, "target_queue"))
        qm = _get(replay, "target_qmgr")
        end = (f"{disposition} by rule {_get(replay, 'rule_index')} ({action}) to {target}"
               + (f" on {qm}" if qm else ""))
    elif disposition == "discarded":
        end = f"discarded by rule {_get(replay, 'rule_index')}"
    elif disposition == "left":
        end = f"left on the DLQ ({_get(replay, 'left_reason')})"
    else:
        end = "unknown outcome"
    secs = _get(replay, "seconds_to_disposition")
    if secs is not None:
        end += f" after {secs} s"
    if not tried:
        return "no rule tried; " + end
    return "; ".join(parts) + "; " + end


def explain(row: Mapping, *, findings=None, replay: Mapping | None = None, capture_time=None,
            capture_time_origin: str = "given", dlq: str | None = None,
            dlq_qmgr: str | None = None) -> Explanation:
    """Explain one decoded message.

    Parameters
    ----------
    row : mapping
        One row of the message schema as a dict (``read_capture(...).table.to_pylist()``,
        or a Spark ``Row.asDict(recursive=True)``): at least ``source``,
        ``message_number``, ``md`` and ``dlh``; ``put_ts``, ``dlh_put_ts``
        (datetimes, naive ones taken as UTC, or strings), ``headers``,
        ``tm``, ``xqh``, ``rfh2``, ``payload_format``, ``payload_length``
        (bytes), ``payload_text``, ``data_length``, ``decode_status`` and
        ``decode_issues`` are used when present.
    findings : iterable of mapping, optional
        Finding records (:func:`dlqlens.detect.findings.finding_record`); those
        whose ``messages`` hold this message are named (a record's
        ``messages`` is a sample: :func:`explain_messages`, given the
        Findings, picks each message's own findings in Spark).
    replay : mapping, optional
        This message's row of a rules-table replay (:mod:`dlqlens.rules.replay`:
        ``tried``, ``rule_index``, ``action``, ``target_queue``...).
    capture_time : datetime, str or mapping, optional
        When the capture was taken (UTC): one time, or one per source (full
        or base name). Without it, the age at the capture reads "unknown".
    capture_time_origin : str
        ``given`` or ``banner`` (dmpmqmsg's ``Created:``).
    dlq, dlq_qmgr : str, optional
        The queue the capture read and its queue manager (from its banner),
        for the commands that act on the dead-letter queue.

    Returns
    -------
    Explanation

    Notes
    -----
    Follows the MQDLH field descriptions (IBM MQ: "MQDLH - Dead-letter
    header") and ``spec/reason-codes.md``: ``dlh.Reason`` says why the
    message could not be put to ``dlh.DestQName`` on ``dlh.DestQMgrName``
    (or, for 2362 and the trigger monitor's feedback codes, why it was taken
    off its queue); ``dlh.PutApplName``/``PutApplType`` name who put it on
    the DLQ; ``md.Expiry`` is the remaining lifetime in tenths of a second
    when the capture read it; ``md.BackoutCount`` counts backouts on the
    queue the capture read it from (MQPUT ignores it).
    """
    source = str(_get(row, "source"))
    number = int(_get(row, "message_number") or 0)
    md = _get(row, "md") or {}
    dlh = _get(row, "dlh")
    facts: list[tuple[str, str]] = []
    headers = list(_get(row, "headers") or [])
    dlh_format = ""
    if headers and headers[0] == "MQDEAD" and len(headers) > 1:
        dlh_format = headers[1]
    elif dlh:
        dlh_format = (_get(dlh, "Format") or "").strip()
    tm = _get(row, "tm")
    trigger = bool(dlh) and (dlh_format == "MQTRIG" or bool(tm))

    def field_text(struct, key):
        value = _get(struct, key)
        return None if value is None else str(value).strip()

    dest = field_text(dlh, "DestQName") if dlh else None
    dest_qm = field_text(dlh, "DestQMgrName") if dlh else None
    if dest_qm is None:
        qmgr_text = "an unknown queue manager (DestQMgrName is not in the capture)"
    elif dest_qm == "":
        qmgr_text = ("the local queue manager (DestQMgrName is blank: the queue manager that "
                     "dead-lettered it)")
    else:
        qmgr_text = dest_qm
    msg_type = _get(md, "MsgType")
    user = field_text(md, "UserIdentifier")
    names = {"queue": dest, "qmgr": dest_qm, "user": user, "dlq": dlq, "dlq_qmgr": dlq_qmgr,
             "process": field_text(tm, "ProcessName") if tm else None,
             "applid": field_text(tm, "ApplId") if tm else None,
             "app_queue": field_text(tm, "QName") if tm else None,
             "initq": dest if trigger else None}
    length = _get(row, "data_length")
    if length is None:
        length = _get(row, "payload_length")
    names["length"] = f"{length} bytes" if length is not None else None

    # -- times -------------------------------------------------------------------------
    put, dlq_put = utc(_get(row, "put_ts")), utc(_get(row, "dlh_put_ts"))
    captured = _capture_time(capture_time, source)
    expiry = _get(md, "Expiry")
    expiry_seconds = expiry / 10 if isinstance(expiry, int) and expiry >= 0 else None
    times = {
        "put": put, "dlq_put": dlq_put, "capture": captured,
        "capture_origin": capture_time_origin if captured is not None else None,
        "seconds_to_dead_letter": _seconds(put, dlq_put),
        "age_seconds": _seconds(put, captured), "on_dlq_seconds": _seconds(dlq_put, captured),
        "expiry_seconds": expiry_seconds,
        "expiry_unlimited": (expiry < 0) if isinstance(expiry, int) else None,
        "expires_at": (captured + _dt.timedelta(seconds=expiry_seconds)
                       if captured is not None and expiry_seconds is not None else None),
    }

    # -- reason ------------------------------------------------------------------------
    reason_info = None
    next_steps: list[NextStep] = []
    dead_lettered_by = None
    if dlh:
        reason = _get(dlh, "Reason")
        info = describe_code(reason) if isinstance(reason, int) else None
        name = info.name if info else "an unreadable reason"
        names["reason"] = name if info else None
        entry = REMEDIES.get(name)
        family = info.family if info else None
        if entry is None:
            entry = SITUATIONS["GENERIC"]
            names["reason_text"] = (f"{name} ({reason})" if family in ("MQRC", "MQFB")
                                    else f"reason {reason} ({info.meaning.rstrip('.')})" if info
                                    else "an unreadable reason")
        orphan = (name in ("MQRC_UNKNOWN_OBJECT_NAME", "MQRC_Q_DELETED") and _temporary(dest))
        happened = next_step(entry, names).happened
        if orphan:
            happened = (f"{dest} on {prose_name('qmgr', dest_qm)} no longer existed: a temporary "
                        "dynamic queue, gone with the requester that opened it, before this "
                        "message came back to it")
        failed_put = entry.failed_put
        reason_info = {"code": reason, "name": name, "family": info.family if info else None,
                       "meaning": (info.meaning if info and info.meaning else None),
                       "happened": happened, "failed_put": failed_put}
        putter = _appl(_get(dlh, "PutApplName"), _get(dlh, "PutApplType"))
        where = f"{_name(dest)} on {qmgr_text}"
        if name == "MQRC_BACKOUT_THRESHOLD_REACHED":
            headline = (f"Dead-lettered with {name} ({reason}) after being backed out to the "
                        f"backout threshold on {_name(dest)} ({qmgr_text}), by {putter} at "
                        f"{_ts(dlq_put)}.")
        elif trigger and not failed_put:
            headline = (f"Dead-lettered with {name} ({reason}) by {putter} at {_ts(dlq_put)}: a "
                        f"trigger message from initiation queue {where} that the trigger monitor "
                        "could not act on.")
        elif not failed_put:
            headline = (f"Dead-lettered with {name} ({reason}) while bound for {where}, by "
                        f"{putter} at {_ts(dlq_put)}.")
        else:
            headline = (f"Dead-lettered with {name} ({reason}) while being put to {where}, "
                        f"by {putter} at {_ts(dlq_put)}.")
        meaning = info.meaning if info and info.meaning else "no description known to dlqlens"
        facts.append(("Reason", f"{reason} {name}: {meaning}"))
        facts.append(("What happened", happened[0].upper() + happened[1:] + "."))
        if isinstance(reason, int):
            if reason in RETRY_REASONING:
                facts.append(("Retry?", RETRY_REASONING[reason]))
            elif reason in RETRYABLE_REASONS:
                facts.append(("Retry?", "Retryable once the condition clears."))
            elif reason in NON_RETRYABLE_REASONS:
                facts.append(("Retry?", "Not curable by a retry."))
        role, role_text = _role(dlh, trigger)
        dead_lettered_by = {"name": field_text(dlh, "PutApplName"),
                            "appl_type": _get(dlh, "PutApplType"),
                            "appl_type_name": MQAT_NAMES.get(_get(dlh, "PutApplType")),
                            "role": role, "role_text": role_text}
        facts.append(("Put on the DLQ by", f"{putter}: {role_text}"))
        facts.append(("Was going to", where))
        if orphan:
            facts.append(("Why that queue is gone",
                          f"{dest} has the name of a temporary dynamic queue: it existed while its "
                          "requester had it open; a reply that arrives after the requester gave up "
                          "finds it deleted (an orphaned reply)"))
        if name == "MQRC_PERSISTENT_NOT_ALLOWED" and _temporary(dest):
            # IBM MQ: 2048 (RC2048) MQRC_PERSISTENT_NOT_ALLOWED, programmer response
            facts.append(("Why it was refused",
                          f"{dest} has the name of a temporary dynamic queue, and temporary dynamic "
                          "queues hold nonpersistent messages only: a persistent reply (the same "
                          "persistence as a persistent request, as IBM recommends) cannot go to "
                          "one; the requester needs a permanent dynamic or predefined reply queue"))
        # what to check next: the reason's remedy (an orphaned reply's own)
        if orphan:
            # the requester's reply queues by their name pattern (AMQ.*): one rule for them all
            prefix = next(p for p in TEMPORARY_QUEUE_PREFIXES if dest.startswith(p.rstrip("*")))
            names_orphan = dict(names, queue=prefix)
            next_steps.append(next_step(SITUATIONS["ORPHANED_REPLY"], names_orphan,
                                        title=f"{name} ({reason}): an orphaned reply",
                                        page_title=page_title(reason, name)))
        else:
            page, title = entry.page, ""
            if family in ("MQRC", "MQFB"):
                title = page_title(reason, name)
            if entry is SITUATIONS["GENERIC"]:
                # IBM's list of MQRC codes; the MQMD Feedback page for MQFB values; the MQDLH
                # Reason page for the IMS ranges; the reason-code list (its rules for exit and
                # application codes) otherwise
                page = {"MQFB": MD_FEEDBACK_PAGE, "IMS_SENSE": DLH_REASON_PAGE,
                        "IMS_NACK": DLH_REASON_PAGE}.get(family, REASON_CODES_PAGE)
            step = next_step(entry, names, title=f"{name} ({reason})", page_title=title)
            step.page = page
            next_steps.append(step)
    else:
        headline = ("No MQDLH: not a dead letter with a dead-letter header (a message of an "
                    "application, backout or initiation queue; on a DLQ, one put there without a "
                    "header, which runmqdlq cannot process).")
        next_steps.append(next_step(SITUATIONS["NO_DLH"], names, title="No MQDLH"))

    route = _route(row)
    if tm:
        appl = _name(_get(tm, "ApplId"))
        at = _get(tm, "ApplType")
        facts.append(("Trigger message",
                      f"MQTM for queue {_name(_get(tm, 'QName'))}, process "
                      f"{_name(_get(tm, 'ProcessName'))}: start {appl}"
                      + (f" ({MQAT_NAMES.get(at, f'ApplType {at}')})" if at is not None else "")))
    for r in route:
        if r["header"] != "MQTM":
            facts.append(("Route", f"{r['header']}: {r['text']}"))

    # -- the original message ----------------------------------------------------------
    mt = (MQMT_NAMES.get(msg_type, f"MsgType {msg_type}") if msg_type is not None
          else "MsgType unknown")
    per = _get(md, "Persistence")
    per_text = (MQPER_NAMES.get(per, f"Persistence {per}") if per is not None
                else "persistence unknown")
    priority = _get(md, "Priority")
    delay = times["seconds_to_dead_letter"]
    facts.append(("Original put", f"{mt}, {per_text}, priority "
                  f"{priority if priority is not None else 'unknown'}, by "
                  f"{_appl(_get(md, 'PutApplName'), _get(md, 'PutApplType'))} as user "
                  f"{_name(user)} at {_ts(put)}"
                  + (f"; dead-lettered {delay:g} s later" if delay is not None else "")))
    original_put_by = {"name": field_text(md, "PutApplName"), "appl_type": _get(md, "PutApplType"),
                       "appl_type_name": MQAT_NAMES.get(_get(md, "PutApplType")), "user": user}
    report = None
    if msg_type == MQMT["MQMT_REPORT"]:
        fb = _get(md, "Feedback")
        fb_name = code_name(fb, kind="feedback") if isinstance(fb, int) else "unknown"
        what = REPORT_FEEDBACK.get(fb_name)
        if what is None and isinstance(fb, int):
            what = describe_code(fb, kind="feedback").meaning or "a report"
        report = {"feedback": fb, "name": fb_name, "meaning": what or "unknown"}
        facts.append(("Report", f"a report message with feedback {fb_name} "
                      f"({fb if fb is not None else 'unknown'}): {what or 'unknown'}; it was "
                      f"going back to its sender's ReplyToQ, {_name(dest)}, and could not be "
                      "delivered there (the reason above says why)"))
    reply_q = field_text(md, "ReplyToQ")
    if reply_q:
        reply_qm = field_text(md, "ReplyToQMgr")
        facts.append(("Replies go to", reply_q + (f" on {reply_qm}" if reply_qm else "")))

    # -- backouts ----------------------------------------------------------------------
    boc = _get(md, "BackoutCount")
    if boc is None:
        backout_text = "BackoutCount unknown (not in the capture)"
    elif boc > 0:
        backout_text = (f"BackoutCount {boc}: it was got under syncpoint and backed out {boc} "
                        "time(s) on the queue the capture read it from (for a dead letter, the "
                        "dead-letter queue itself: a DLQ handler or another program got it and "
                        "backed out); MQPUT ignores the field, so backouts before it was "
                        "dead-lettered are not counted here")
    else:
        backout_text = ("BackoutCount 0: not backed out on the queue the capture read it from; "
                        "MQPUT ignores the field, so backouts on the queue it came from (those "
                        "that reached the threshold) are not counted here")
    backout = {"count": boc, "text": backout_text}
    if boc is None or boc > 0 or (reason_info and reason_info["name"]
                                  == "MQRC_BACKOUT_THRESHOLD_REACHED"):
        facts.append(("Backouts", backout_text))

    # -- expiry and times --------------------------------------------------------------
    if isinstance(expiry, int):
        if expiry < 0:
            facts.append(("Expiry", "unlimited (MQEI_UNLIMITED)"))
        else:
            when = (f"; it expires at {_ts(times['expires_at'])}" if times["expires_at"]
                    else "; when it expires is unknown: the capture's time is unknown")
            facts.append(("Expiry", f"{expiry} tenths of a second ({expiry_seconds:g} s) were left "
                          "when the capture read it" + when + "; once expired it still counts "
                          "in the queue's depth until a get reaches it, which discards it"))
    else:
        facts.append(("Expiry", "unknown (not in the capture)"))
    if captured is not None:
        origin = ("from the dmpmqmsg banner, taken as UTC" if capture_time_origin == "banner"
                  else "as given")
        parts = [f"taken {_ts(captured)} ({origin})"]
        if times["age_seconds"] is not None:
            parts.append(f"{_duration(times['age_seconds'])} after the original put")
        if times["on_dlq_seconds"] is not None:
            parts.append(f"{_duration(times['on_dlq_seconds'])} after it was dead-lettered")
        facts.append(("At the capture", ", ".join(parts)))
    else:
        facts.append(("At the capture", "unknown: the capture holds no time of its own "
                      "(give one: --capture-time)"))

    # -- findings and replay -----------------------------------------------------------
    found = []
    for record in findings or ():
        if _in_finding(record, source, number):
            found.append({"kind": _get(record, "kind"), "severity": _get(record, "severity"),
                          "queues": list(_get(record, "queues") or []),
                          "statement": _get(record, "statement")})
    if findings is not None:
        facts.append(("Findings", "; ".join(f"{f['kind']} ({f['severity']}): {f['statement']}"
                                            for f in found) or "in no finding"))
    replay_info = None
    if replay is not None:
        replay_info = dict(replay if isinstance(replay, Mapping) else replay.asDict(recursive=True))
        replay_info["text"] = _replay_text(replay_info)
        facts.append(("Rules replay", replay_info["text"]))

    # -- structure and content ---------------------------------------------------------
    fmt = _get(row, "payload_format")
    chain = " → ".join(headers + ([fmt] if fmt and fmt not in headers[-1:] else []))
    if chain:
        facts.append(("Headers", chain))
    plen = _get(row, "payload_length")
    if plen is not None:
        text = _get(row, "payload_text")
        preview = ""
        if text:
            preview = text[:PREVIEW_CHARS] + ("…" if len(text) > PREVIEW_CHARS else "")
            preview = f": {preview!r}"
        facts.append(("Payload", f"{plen} bytes, format {fmt or '(none)'}{preview}"))
    status = _get(row, "decode_status")
    if status and status != "ok":
        issues = _get(row, "decode_issues") or []
        facts.append(("Decoding", f"{status}: " + "; ".join(
            str(_get(i, "message") or _get(i, "code")) for i in issues[:3])))
    where = []
    if _get(row, "source_line") is not None:
        where.append(f"line {_get(row, 'source_line')}")
    if _get(row, "source_offset") is not None:
        where.append(f"byte offset {_get(row, 'source_offset')}")
    if where:
        facts.append(("In the capture", ", ".join(where)))

    # a finite expiry: the message is lost when it expires
    if dlh and expiry_seconds is not None:
        if times["expires_at"] is not None:
            names["expires"] = (f"at {_ts(times['expires_at'])}, "
                                f"{_duration(expiry_seconds)} after the capture")
        else:
            names["expires"] = f"{_duration(expiry_seconds)} after the capture read it"
        next_steps.append(next_step(SITUATIONS["EXPIRING"], names,
                                    title="Expiry: lost when it expires"))

    destination = {"queue": dest, "qmgr": dest_qm, "qmgr_text": qmgr_text, "route": route}
    return Explanation(source, number, headline, facts, reason=reason_info, report=report,
                       dead_lettered_by=dead_lettered_by, original_put_by=original_put_by,
                       destination=destination, times=times, backout=backout, findings=found,
                       replay=replay_info, next_steps=next_steps)


def explain_messages(df, limit: int = 20, *, findings=None, replay=None, capture_time=None,
                     capture_time_origin: str = "given", dlq: str | None = None,
                     dlq_qmgr: str | None = None) -> list[Explanation]:
    """Explain the first ``limit`` rows of a (filtered) capture DataFrame.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows, typically filtered first
        (``df.where("source LIKE '%dlq.dmp' AND message_number = 7")``, or a
        finding's filter, :meth:`dlqlens.explain.finding.MessageFilter.column`).
    limit : int
        At most this many rows come to the driver, in (source,
        message_number) order.
    findings : Findings or list, optional
        The ``(findings, links)`` of :func:`dlqlens.detect.run_detectors`, or
        finding records: each explanation names the findings its message
        belongs to. The links are joined to the selected rows in Spark; only
        those rows' links and findings come back.
    replay : pyspark.sql.DataFrame, optional
        A rules-table replay (:func:`dlqlens.rules.replay.replay`) of the
        capture: each explanation shows its message's row.
    capture_time, capture_time_origin, dlq, dlq_qmgr
        As for :func:`explain`.

    Returns
    -------
    list of Explanation

    Notes
    -----
    The timestamps reach Python as microseconds since the epoch, so they
    are UTC whatever the session's (``spark.sql.session.timeZone``) or the
    driver's time zone.
    """
    from pyspark.sql import functions as F

    cols = [F.col(c) for c in EXPLAIN_COLUMNS
            if c not in ("put_ts", "dlh_put_ts") and c in df.columns]
    cols += [F.unix_micros(F.col(c)).alias(c) for c in ("put_ts", "dlh_put_ts")]
    picked = df.select(*cols).orderBy("source", "message_number").limit(int(limit))
    rows = picked.collect()
    keys = [(r["source"], r["message_number"]) for r in rows]

    records = None
    if findings is not None and not isinstance(findings, list):
        from dlqlens.detect.findings import Findings, finding_record

        if not isinstance(findings, Findings):
            raise TypeError("findings: expected the Findings of dlqlens.detect.run_detectors "
                            f"or a list of finding records, not {type(findings).__name__}")
        wanted = picked.select("source", "message_number")
        hits = (findings.links.join(wanted, ["source", "message_number"], "left_semi")
                .join(F.broadcast(findings.findings), "finding_id"))
        by_id: dict = {}
        refs: dict = {}
        for r in hits.collect():
            by_id.setdefault(r["finding_id"], r)
            refs.setdefault(r["finding_id"], []).append(
                {"source": r["source"], "message_number": r["message_number"]})
        # most severe first, as the findings are listed
        order = sorted(by_id, key=lambda i: (by_id[i]["severity_rank"], by_id[i]["window_start"]
                                             is None, by_id[i]["window_start"] or 0,
                                             by_id[i]["kind"], i))
        records = [finding_record(by_id[i], messages=refs[i]) for i in order]
    elif findings is not None:
        records = list(findings)
    replays = {}
    if replay is not None:
        wanted = picked.select("source", "message_number")
        for r in replay.join(wanted, ["source", "message_number"], "left_semi").collect():
            replays[(r["source"], r["message_number"])] = r.asDict(recursive=True)

    def as_ts(us):
        return None if us is None else (_dt.datetime(1970, 1, 1)
                                        + _dt.timedelta(microseconds=int(us)))

    out = []
    for r, key in zip(rows, keys):
        row = r.asDict(recursive=True)
        row["put_ts"], row["dlh_put_ts"] = as_ts(row["put_ts"]), as_ts(row["dlh_put_ts"])
        out.append(explain(row, findings=records, replay=replays.get(key) if replay is not None
                           else None, capture_time=capture_time,
                           capture_time_origin=capture_time_origin, dlq=dlq, dlq_qmgr=dlq_qmgr))
    return out


__all__ = ["EXPLAIN_COLUMNS", "Explanation", "explain", "explain_messages", "utc"]
