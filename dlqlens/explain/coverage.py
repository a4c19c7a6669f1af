"""Messages in no finding: nothing on the dead-letter queue is silent.

The detectors explain patterns; a message that is in no finding (a lone
misaddressed message, a reason no detector looks for) would otherwise be
seen only in the summary's counts. :func:`unexplained` returns, as a Spark
DataFrame, the messages no finding covers grouped by reason and destination
with counts (a left-anti join of the capture on ``(source, message_number)``
against the findings' links: nothing is collected);
:func:`coverage` brings the small aggregate to the driver as a
:class:`Coverage` (covered, unexplained, total, the groups, and for each
group what to check first) with ``to_text()``, ``_repr_html_()`` and
``to_dict()``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from dlqlens.detect.findings import links_of
from dlqlens.explain.steps import NextStep, next_step
from dlqlens.explain.summary import destination_group
from dlqlens.mq.constants import TEMPORARY_QUEUE_PREFIXES
from dlqlens.mq.remedies import REMEDIES, SITUATIONS, page_title
from dlqlens.safe import one_line

#: The columns of :func:`unexplained`, in order.
UNEXPLAINED_COLUMNS = ("Reason", "reason_name", "DestQMgrName", "DestQName", "queues",
                       "messages", "first_dlq_put", "last_dlq_put")


def covered_messages(findings):
    """The ``(source, message_number)`` of every finding's messages (a lazy
    DataFrame; a message in several findings appears once per finding, which
    a semi or anti join does not mind).

    ``findings`` is the :class:`~dlqlens.detect.findings.Findings` of
    :func:`dlqlens.detect.run_detectors`, or its links DataFrame; TypeError
    otherwise (:func:`dlqlens.detect.findings.links_of`).
    """
    return links_of(findings).select("source", "message_number")


def unexplained_messages(df, findings):
    """The rows of ``df`` that no finding points at (a left-anti join with the
    findings' links; lazy)."""
    return df.join(covered_messages(findings), ["source", "message_number"], "left_anti")


def unexplained(df, findings):
    """The messages no finding covers, grouped by reason and destination.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (``source``, ``message_number``, ``dlh``, ``reason_name``,
        ``dlh_put_ts``).
    findings : Findings or pyspark.sql.DataFrame
        :func:`dlqlens.detect.run_detectors` over ``df``, or its links.

    Returns
    -------
    pyspark.sql.DataFrame
        :data:`UNEXPLAINED_COLUMNS`: ``Reason`` (int, null for messages
        without an MQDLH), ``reason_name``, ``DestQMgrName``, ``DestQName``
        (temporary dynamic queues grouped under their prefix, ``AMQ.*``, as in
        the summary), ``queues`` (distinct names in the group), ``messages``
        (count), ``first_dlq_put``, ``last_dlq_put``; most messages first.
        Their ``messages`` add up to the capture's messages minus those in
        a finding.
    """
    from pyspark.sql import functions as F

    rest = unexplained_messages(df, findings)
    dest = F.col("dlh.DestQName")
    group = destination_group(dest)
    return (rest.groupBy(F.col("dlh.Reason").alias("Reason"), F.col("reason_name"),
                         F.col("dlh.DestQMgrName").alias("DestQMgrName"),
                         group.alias("DestQName"))
            .agg(F.countDistinct(dest).alias("queues"), F.count(F.lit(1)).alias("messages"),
                 F.min("dlh_put_ts").alias("first_dlq_put"),
                 F.max("dlh_put_ts").alias("last_dlq_put"))
            .orderBy(F.desc("messages"), "Reason", "DestQMgrName", "DestQName"))


def group_step(reason, reason_name, qmgr, queue, *, dlq=None, dlq_qmgr=None) -> NextStep:
    """What to check for one group of unexplained messages."""
    names = {"queue": queue, "qmgr": qmgr, "reason": reason_name, "dlq": dlq,
             "dlq_qmgr": dlq_qmgr}
    if reason is None:
        return next_step(SITUATIONS["NO_DLH"], names, title="No MQDLH")
    temporary = queue in TEMPORARY_QUEUE_PREFIXES
    if temporary and reason_name in ("MQRC_UNKNOWN_OBJECT_NAME", "MQRC_Q_DELETED"):
        return next_step(SITUATIONS["ORPHANED_REPLY"], names,
                         title=f"{reason_name} ({reason}): orphaned replies",
                         page_title=page_title(reason, reason_name))
    entry = REMEDIES.get(reason_name or "")
    if entry is None:
        entry = SITUATIONS["GENERIC"]
        names["reason_text"] = f"{reason_name or 'reason'} ({reason})"
    return next_step(entry, names, title=f"{reason_name} ({reason})",
                     page_title=page_title(reason, reason_name) if reason_name else "")


@dataclass
class Coverage:
    """How many messages the findings cover, and the others by reason and destination.

    Attributes
    ----------
    total, covered, unexplained : int
        Messages in the capture, in at least one finding, in none
        (``covered + unexplained == total``).
    groups : list of dict
        The rows of :func:`unexplained` (``first_dlq_put``/``last_dlq_put`` as
        ISO text), each with ``next_step`` (a :class:`NextStep`).
    """

    total: int
    covered: int
    unexplained: int
    groups: list = field(default_factory=list)

    def to_text(self) -> str:
        title = f"Messages in no finding ({self.unexplained} of {self.total}; {self.covered} in " \
                "at least one finding)"
        lines = [title, "-" * len(title)]
        if not self.groups:
            lines.append("  none: every message is in a finding")
        for g in self.groups:
            qm = g["DestQMgrName"]
            where = (f"{g['DestQName'] if g['DestQName'] is not None else 'unknown queue'} on "
                     + ("an unknown queue manager" if qm is None else
                        (qm.strip() or "the local queue manager")))
            reason = (f"{g['Reason']} {g['reason_name'] or ''}".strip()
                      if g["Reason"] is not None else "no MQDLH")
            queues = f", {g['queues']} queues" if (g["queues"] or 0) > 1 else ""
            lines.append(f"  {g['messages']:>6}  {one_line(reason)} for {one_line(where)}"
                         f"{queues} (dead-lettered {g['first_dlq_put'] or '?'} .. "
                         f"{g['last_dlq_put'] or '?'} UTC)")
            step = g["next_step"]
            first = next((c for c in step.commands if not c.change), None)
            if first is not None:
                lines.append(f"          check: {one_line(first.purpose)} "
                             f"({one_line(first.where)}): {one_line(first.text)}")
        return "\n".join(lines) + "\n"

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = "".join(
            f"<tr><td>{g['messages']}</td><td>{esc(str(g['Reason']))} "
            f"{esc(str(g['reason_name'] or ''))}</td><td>{esc(str(g['DestQMgrName']))}</td>"
            f"<td>{esc(str(g['DestQName']))}</td><td>{g['next_step'].to_html()}</td></tr>"
            for g in self.groups)
        return (f"<h4>Messages in no finding</h4><p>{self.unexplained} of {self.total} "
                f"({self.covered} in at least one finding)</p><table><tr><th>messages</th>"
                f"<th>reason</th><th>DestQMgrName</th><th>DestQName</th><th>next</th></tr>"
                f"{rows}</table>")

    def to_dict(self) -> dict:
        return {"total": self.total, "covered": self.covered, "unexplained": self.unexplained,
                "groups": [{**{k: v for k, v in g.items() if k != "next_step"},
                            "next_step": g["next_step"].to_dict()} for g in self.groups]}


def coverage(df, findings, *, top: int | None = 50, dlq=None, dlq_qmgr=None) -> Coverage:
    """Count the messages the findings cover and group the others (Spark aggregates only).

    Parameters
    ----------
    df, findings
        As for :func:`unexplained` (the capture rows; the Findings or their links).
    top : int, optional
        Groups brought to the driver (most messages first); all when None.
        The counts are always over every message.
    dlq, dlq_qmgr : str, optional
        The dead-letter queue and its queue manager, for commands that act on it.

    Returns
    -------
    Coverage
    """
    from pyspark.sql import functions as F

    total = df.count()
    covered = (df.select("source", "message_number")
               .join(covered_messages(findings), ["source", "message_number"], "left_semi")
               .count())
    groups_df = unexplained(df, findings)
    if top is not None:
        groups_df = groups_df.limit(int(top))
    zone = df.sparkSession.conf.get("spark.sql.session.timeZone")
    # date_format shows the session's wall clock: shift the instant so that it shows UTC's
    rows = groups_df.select(
        *[c for c in UNEXPLAINED_COLUMNS if c not in ("first_dlq_put", "last_dlq_put")],
        *[F.date_format(F.to_utc_timestamp(c, zone), "yyyy-MM-dd HH:mm:ss").alias(c)
          for c in ("first_dlq_put", "last_dlq_put")]).collect()
    groups = []
    for r in rows:
        g = r.asDict()
        g["next_step"] = group_step(g["Reason"], g["reason_name"], g["DestQMgrName"],
                                    g["DestQName"], dlq=dlq, dlq_qmgr=dlq_qmgr)
        groups.append(g)
    return Coverage(total=total, covered=covered, unexplained=total - covered, groups=groups)


__all__ = ["Coverage", "UNEXPLAINED_COLUMNS", "coverage", "covered_messages", "group_step",
           "unexplained", "unexplained_messages"]
