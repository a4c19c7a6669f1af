"""Why did this message land on the dead-letter queue? One message, in words.

:func:`explain` turns one decoded message (a row of the message schema,
``docs/columns.md``) into an :class:`Explanation`: a headline and labelled
facts read from its MQDLH and MQMD: the reason and what it means, who put
the message on the DLQ and in which role (a channel's receiving agent, a
trigger monitor, an application), where it was going, the original put,
backouts, expiry, the header chain, the payload and any decode problem.
:func:`explain_messages` does it for the rows of a Spark DataFrame that a
filter selects, bringing only those rows to the driver.

The text is built from MQ's own names (``dlh.Reason``, ``md.BackoutCount``...)
and the meanings in ``spec/reason-codes.md`` (:func:`dlqlens.mq.constants.describe_code`).
Capture content is untrusted: :meth:`Explanation.to_text` escapes control
characters (:func:`dlqlens.safe.printable`), :meth:`Explanation._repr_html_`
escapes everything with :func:`html.escape`.
"""

from __future__ import annotations

import datetime as _dt
import html
from collections.abc import Mapping
from dataclasses import dataclass, field

from dlqlens.mq.constants import (MQAT, MQAT_NAMES, MQMT, MQMT_NAMES, MQPER_NAMES, NON_RETRYABLE_REASONS,
                                  RETRY_REASONING, RETRYABLE_REASONS, TEMPORARY_QUEUE_PREFIXES,
                                  code_name, describe_code)
from dlqlens.safe import printable

#: Characters of payload text shown.
PREVIEW_CHARS = 160

#: PutApplName values of the channel agents that dead-letter on arrival
#: (``amqrmppa`` the channel process pool, ``runmqchl`` a channel run by hand,
#: ``amqcrsta`` a channel started by inetd; IBM MQ: "Dead-letter queue
#: processing" of the receiving MCA). On z/OS the channel initiator
#: (``<ssid>CHIN``) is known by its PutApplType, MQAT_CHANNEL_INITIATOR.
_CHANNEL_AGENTS = ("amqrmppa", "runmqchl", "amqcrsta")


@dataclass
class Explanation:
    """Why one message is where it is.

    Attributes
    ----------
    source : str
        The capture file.
    message_number : int
        1-based position in the capture.
    headline : str
        One sentence: reason, by whom, where it was going.
    facts : list of (str, str)
        Label, text; in reading order.
    """

    source: str
    message_number: int
    headline: str
    facts: list = field(default_factory=list)

    def to_text(self) -> str:
        """Plain text, control characters from the capture escaped."""
        lines = [f"{self.source} #{self.message_number}", self.headline, ""]
        width = max((len(k) for k, _ in self.facts), default=0)
        lines += [f"{k:<{width}}  {v}" for k, v in self.facts]
        return printable("\n".join(lines)) + "\n"

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = "".join(f"<tr><th style='text-align:left;vertical-align:top'>{esc(k)}</th>"
                       f"<td style='text-align:left'>{esc(v)}</td></tr>" for k, v in self.facts)
        return (f"<div><p><code>{esc(self.source)} #{self.message_number}</code></p>"
                f"<p><b>{esc(self.headline)}</b></p><table>{rows}</table></div>")


def _get(d, key, default=None):
    return d.get(key, default) if isinstance(d, Mapping) else default


def _ts(value) -> str:
    """A put timestamp (UTC) as text; naive datetimes are taken as UTC."""
    if value is None:
        return "an unknown time"
    if isinstance(value, str):
        return value.replace("T", " ").rstrip("Z") + " UTC"
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat(sep=" ", timespec="milliseconds") + " UTC"
    return f"{value} UTC"


def _delay(put, dlq_put) -> str:
    """``; dead-lettered N s later`` when both put times are known."""
    try:
        a, b = (_dt.datetime.fromisoformat(v) if isinstance(v, str) else v for v in (put, dlq_put))
        if a.tzinfo is not None:
            a = a.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        if b.tzinfo is not None:
            b = b.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        seconds = (b - a).total_seconds()
    except (TypeError, ValueError, AttributeError):
        return ""
    return f"; dead-lettered {seconds:g} s later"


def _appl(name, appl_type) -> str:
    name = (name or "").strip() or "(blank)"
    if appl_type is None:
        return name
    return f"{name} ({MQAT_NAMES.get(appl_type, f'PutApplType {appl_type}')})"


def _role(dlh: Mapping, dlh_format: str) -> str:
    """Who put the message on the DLQ, from the MQDLH's putting application."""
    name = (_get(dlh, "PutApplName") or "").strip()
    base = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    if dlh_format == "MQTRIG":
        return ("a trigger monitor: this is a trigger message for an application it could not "
                "start (or could not hand the message to)")
    if base in _CHANNEL_AGENTS or _get(dlh, "PutApplType") == MQAT["MQAT_CHANNEL_INITIATOR"]:
        return ("the receiving end of a channel (message channel agent): the message arrived "
                "from another queue manager and could not be put to its destination")
    return "an application or a queue-manager process, when its put to the destination failed"


def _temporary(queue: str) -> bool:
    return any(queue.startswith(p.rstrip("*")) for p in TEMPORARY_QUEUE_PREFIXES)


def explain(row: Mapping) -> Explanation:
    """Explain one decoded message.

    Parameters
    ----------
    row : mapping
        One row of the message schema as a dict (``read_capture(...).table.to_pylist()``,
        or a Spark ``Row.asDict(recursive=True)``): at least ``source``,
        ``message_number``, ``md`` and ``dlh``; ``put_ts``, ``dlh_put_ts``
        (datetimes, naive ones taken as UTC, or strings), ``headers``,
        ``payload_format``, ``payload_length`` (bytes), ``payload_text``,
        ``decode_status`` and ``decode_issues`` are used when present.

    Returns
    -------
    Explanation

    Notes
    -----
    Follows the MQDLH field descriptions (IBM MQ: "MQDLH - Dead-letter
    header") and ``spec/reason-codes.md``: ``dlh.Reason`` says why the
    message could not be put to ``dlh.DestQName`` on ``dlh.DestQMgrName``;
    ``dlh.PutApplName``/``PutApplType`` name who put it on the DLQ;
    ``md.Expiry`` is the remaining lifetime in tenths of a second when the
    capture read it.
    """
    md = _get(row, "md") or {}
    dlh = _get(row, "dlh")
    facts: list[tuple[str, str]] = []
    headers = [h for h in (_get(row, "headers") or [])]
    dlh_format = ""
    if headers and headers[0] == "MQDEAD" and len(headers) > 1:
        dlh_format = headers[1]
    elif dlh:
        dlh_format = (_get(dlh, "Format") or "").strip()
    dest = (_get(dlh, "DestQName") or "").strip()
    dest_qm = (_get(dlh, "DestQMgrName") or "").strip()
    msg_type = _get(md, "MsgType")

    if dlh:
        reason = _get(dlh, "Reason")
        info = describe_code(reason) if isinstance(reason, int) else None
        name = info.name if info else "an unreadable reason"
        where = f"{dest or '(blank)'}" + (f" on {dest_qm}" if dest_qm else "")
        headline = (f"Dead-lettered with {name} ({reason}) while being put to {where}, "
                    f"by {_appl(_get(dlh, 'PutApplName'), _get(dlh, 'PutApplType'))} "
                    f"at {_ts(_get(row, 'dlh_put_ts'))}.")
        meaning = info.meaning if info and info.meaning else "no description known to dlqlens"
        facts.append(("Reason", f"{reason} {name}: {meaning}"))
        if isinstance(reason, int):
            if reason in RETRY_REASONING:
                facts.append(("Retry?", RETRY_REASONING[reason]))
            elif reason in RETRYABLE_REASONS:
                facts.append(("Retry?", "Retryable once the condition clears."))
            elif reason in NON_RETRYABLE_REASONS:
                facts.append(("Retry?", "Not curable by a retry."))
        facts.append(("Put on the DLQ by", f"{_appl(_get(dlh, 'PutApplName'), _get(dlh, 'PutApplType'))}"
                      f": {_role(dlh, dlh_format)}"))
        facts.append(("Was going to", where))
        if (isinstance(reason, int) and code_name(reason) in ("MQRC_UNKNOWN_OBJECT_NAME", "MQRC_Q_DELETED")
                and _temporary(dest)):
            facts.append(("Why that queue is gone",
                          f"{dest} has the name of a temporary dynamic queue: it existed while its "
                          "requester had it open; a reply that arrives after the requester gave up "
                          "finds it deleted (an orphaned reply)"))
        if (isinstance(reason, int) and code_name(reason) == "MQRC_PERSISTENT_NOT_ALLOWED"
                and _temporary(dest)):
            # IBM MQ: 2048 (RC2048) MQRC_PERSISTENT_NOT_ALLOWED, programmer response
            facts.append(("Why it was refused",
                          f"{dest} has the name of a temporary dynamic queue, and temporary dynamic "
                          "queues hold nonpersistent messages only: a persistent reply (the same "
                          "persistence as a persistent request, as IBM recommends) cannot go to "
                          "one; the requester needs a permanent dynamic or predefined reply queue"))
    else:
        headline = ("No MQDLH: not a dead letter with a dead-letter header (a message of an "
                    "application, backout or initiation queue; on a DLQ, one put there without a "
                    "header, which runmqdlq cannot process).")

    tm = _get(row, "tm")
    if tm:
        appl = (_get(tm, "ApplId") or "").strip() or "(blank)"
        at = _get(tm, "ApplType")
        facts.append(("Trigger message",
                      f"MQTM for queue {(_get(tm, 'QName') or '').strip() or '(blank)'}, process "
                      f"{(_get(tm, 'ProcessName') or '').strip() or '(blank)'}: start {appl}"
                      + (f" ({MQAT_NAMES.get(at, f'ApplType {at}')})" if at is not None else "")))
    # -- the original message ----------------------------------------------------
    mt = MQMT_NAMES.get(msg_type, f"MsgType {msg_type}") if msg_type is not None else "unknown"
    per = _get(md, "Persistence")
    facts.append(("Original put", f"{mt}, {MQPER_NAMES.get(per, f'Persistence {per}')}, "
                  f"priority {_get(md, 'Priority')}, by "
                  f"{_appl(_get(md, 'PutApplName'), _get(md, 'PutApplType'))} as user "
                  f"{(_get(md, 'UserIdentifier') or '').strip() or '(blank)'} at "
                  f"{_ts(_get(row, 'put_ts'))}{_delay(_get(row, 'put_ts'), _get(row, 'dlh_put_ts'))}"))
    if msg_type == MQMT["MQMT_REPORT"]:
        fb = _get(md, "Feedback")
        facts.append(("Report", f"a report message with feedback {code_name(fb or 0, kind='feedback')} "
                      f"({fb}): its ReplyToQ could not be reached"))
    reply_q = (_get(md, "ReplyToQ") or "").strip()
    if reply_q:
        reply_qm = (_get(md, "ReplyToQMgr") or "").strip()
        facts.append(("Replies go to", reply_q + (f" on {reply_qm}" if reply_qm else "")))
    boc = _get(md, "BackoutCount")
    if isinstance(boc, int) and boc > 0:
        facts.append(("Backouts", f"BackoutCount {boc}: a consumer got it under syncpoint and "
                      f"backed it out {boc} time(s) before it came here"))
    expiry = _get(md, "Expiry")
    if isinstance(expiry, int):
        if expiry < 0:
            facts.append(("Expiry", "unlimited (MQEI_UNLIMITED)"))
        else:
            facts.append(("Expiry", f"{expiry} tenths of a second ({expiry / 10:g} s) were left "
                          "when the capture read it; once expired it still counts in the queue's "
                          "depth until a get reaches it"))
    # -- structure and content --------------------------------------------------
    fmt = _get(row, "payload_format")
    chain = " → ".join([h for h in headers] + ([fmt] if fmt and fmt not in headers[-1:] else []))
    if chain:
        facts.append(("Headers", chain))
    length = _get(row, "payload_length")
    if length is not None:
        text = _get(row, "payload_text")
        preview = ""
        if text:
            preview = text[:PREVIEW_CHARS] + ("…" if len(text) > PREVIEW_CHARS else "")
            preview = f": {preview!r}"
        facts.append(("Payload", f"{length} bytes, format {fmt or '(none)'}{preview}"))
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
    return Explanation(str(_get(row, "source")), int(_get(row, "message_number") or 0),
                       headline, facts)


#: The columns :func:`explain` reads.
EXPLAIN_COLUMNS = ("source", "message_number", "source_line", "source_offset", "md", "dlh", "tm",
                   "headers", "payload_format", "payload_length", "payload_text",
                   "decode_status", "decode_issues", "put_ts", "dlh_put_ts")


def explain_messages(df, limit: int = 20) -> list[Explanation]:
    """Explain the first ``limit`` rows of a (filtered) capture DataFrame.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows, typically filtered first
        (``df.where("source LIKE '%dlq.dmp' AND message_number = 7")``).
    limit : int
        At most this many rows come to the driver, in (source,
        message_number) order.

    Returns
    -------
    list of Explanation

    Notes
    -----
    The timestamps are formatted as UTC in Spark before they reach Python,
    whatever the session's (``spark.sql.session.timeZone``) or the driver's
    time zone.
    """
    from pyspark.sql import functions as F

    zone = df.sparkSession.conf.get("spark.sql.session.timeZone")
    cols = [F.col(c) for c in EXPLAIN_COLUMNS if c not in ("put_ts", "dlh_put_ts")]
    # date_format shows the session's wall clock: shift the instant so that it shows UTC's
    cols += [F.date_format(F.to_utc_timestamp(F.col(c), zone), "yyyy-MM-dd HH:mm:ss.SSS").alias(c)
             for c in ("put_ts", "dlh_put_ts")]
    rows = df.select(*cols).orderBy("source", "message_number").limit(int(limit)).collect()
    return [explain(r.asDict(recursive=True)) for r in rows]
