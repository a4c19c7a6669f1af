"""Build the HTML audit report of a capture DataFrame.

:func:`build_report` runs the analyses of the layers below (the capture
summary, the detectors, the rules-table lint and replay, the queue
definitions) and arranges their results in sections; :class:`Report` holds
the page. Every figure is a Spark aggregation over the capture: only
bounded results reach the driver (tables of at most ``top`` rows, at most
``max_findings`` findings, ``examples`` explained messages per finding and
per group), never the capture itself.

A section is a list of items, each a view with ``_repr_html_()`` (the
report's own in :mod:`dlqlens.report.views`, or the explanation objects of
:mod:`dlqlens.explain`) or a matplotlib ``Figure``; the page is rendered by
an autoescaping jinja2 template shipped with the package
(``templates/report.html.j2``). It is one self-contained file: styles
inline, figures as PNG ``data:`` URIs, no script, no external URL.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from markupsafe import Markup, escape

from dlqlens.detect.findings import SEVERITIES
from dlqlens.explain.coverage import unexplained_messages
from dlqlens.explain.summary import destination_group
from dlqlens.report.views import (ExplanationView, FigurePngs, FindingView, Group, KeyFigures,
                                  Listing, Note, Table, environment)
from dlqlens.spark.driver import local_frame

#: The text that stands for a payload left out of the report.
REDACTED = "payload redacted: {n} bytes; --show-payloads to include"

#: The captures named in the report's header before "and N more".
SHOWN_SOURCES = 12
#: Messages named under a finding.
#: Messages of a finding brought to the driver (the first, by capture and message
#: number, from the findings' links) to list it as ranges of message numbers per
#: capture; beyond that the page says how many more there are and how to list them.
#: Bounded so that the report's driver memory does not grow with the capture.
LISTED_REFS = 1_000
#: Lines of a rules table listed.
LISTED_LINES = 400


@dataclass
class Section:
    """One section of the report.

    Attributes
    ----------
    id : str
        Its anchor in the page (``#findings``).
    title : str
    items : list
        Views with ``_repr_html_()``, matplotlib Figures or text (see
        :func:`dlqlens.report.views.render_item`), in order.
    intro : str, optional
        A sentence under the title.
    """

    id: str
    title: str
    items: list = field(default_factory=list)
    intro: str | None = None


@dataclass
class Report:
    """The audit report.

    Attributes
    ----------
    html : str
        The page: one self-contained HTML document.
    text : str
        A short plain-text summary (what the command line prints), control
        characters from the inputs escaped.
    title : str
    sections : list of Section
    """

    html: str
    text: str
    title: str
    sections: list = field(default_factory=list)

    def write(self, path) -> Path:
        """Write the page to ``path`` (UTF-8); return the path."""
        path = Path(path)
        path.write_text(self.html, encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        # in a notebook: the page in a frame of its own (its styles stay inside)
        return (f'<iframe srcdoc="{escape(self.html)}" title="{escape(self.title)}" '
                'style="width:100%;height:640px;border:1px solid #ccc" '
                'sandbox=""></iframe>')


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _missing(value) -> bool:
    """A null of a table row from Spark: None, or NaN where a pandas column of
    numbers holds nulls (``toPandas`` makes such a column float)."""
    return value is None or value != value  # (NaN != NaN)


def _held(value) -> str:
    """A name as the capture holds it: ``unknown`` when it does not hold it (null:
    no MQDLH, or a field elided or masked); never a blank standing in for it."""
    return "unknown" if _missing(value) else value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dlqlens")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "(source tree)"


def _utc(micros) -> _dt.datetime | None:
    if _missing(micros):
        return None
    return _dt.datetime.fromtimestamp(micros / 1e6, _dt.timezone.utc).replace(tzinfo=None)


def _ts(value) -> str:
    return "—" if value is None else value.isoformat(sep=" ", timespec="seconds")


def _span(start, end) -> str:
    """``2024-03-11 09:12:06 → 09:12:15 UTC`` (the date once when it is the same)."""
    if start is None and end is None:
        return "no time known"
    if start is None or end is None:
        return f"{_ts(start or end)} UTC"
    if start.date() == end.date():
        return f"{_ts(start)} → {end.time().isoformat(timespec='seconds')} UTC"
    return f"{_ts(start)} → {_ts(end)} UTC"


def _reason_of(value) -> int | None:
    """``dlh.Reason`` as a table row from Spark holds it: an int, or None for a
    message without an MQDLH (a pandas column of integers with nulls holds
    those as NaN)."""
    return None if _missing(value) else int(value)


def _meaning(reason) -> str:
    from dlqlens.mq.constants import describe_code

    reason = _reason_of(reason)
    if reason is None:
        return "no MQDLH: not a dead letter with a header (runmqdlq leaves it alone)"
    info = describe_code(reason)
    return info.meaning or ""


def _reason_label(reason, name) -> str:
    reason = _reason_of(reason)
    if reason is None:
        return "(no MQDLH)"
    return f"{reason} {name or ''}".strip()


def _read_text(path) -> str:
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


# ---------------------------------------------------------------------------
# the parts, each computed in Spark
# ---------------------------------------------------------------------------

def _time_span(summary) -> dict:
    """The oldest and newest puts (MQMD and MQDLH) as naive UTC datetimes: the
    summary's totals (computed with its tables, in the same aggregation)."""
    return {k: None if v is None else v.to_pydatetime() for k, v in summary.times.items()}


def _collect_findings(findings, links, max_findings: int, examples: int,
                      capture_queues=None) -> tuple[list[dict], int, dict]:
    """The first ``max_findings`` findings (most severe first), each with its
    first listed messages and its explanation; the number of findings and
    that number by severity (:data:`dlqlens.detect.findings.SEVERITIES`), counted over every
    finding in the listing's own query (window counts over the findings,
    which :func:`dlqlens.detect.run_detectors` left in one partition: no
    query of their own)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from dlqlens.detect import sample_links
    from dlqlens.explain import explain_finding

    every = Window.partitionBy()
    counts = [F.count(F.lit(1)).over(every).alias("_total")] + [
        F.count(F.when(F.col("severity") == s, 1)).over(every).alias(f"_n_{s}")
        for s in SEVERITIES]
    rows = (findings.select(
        "finding_id", "kind", "severity", "severity_rank", "queues",
        F.unix_micros("window_start").alias("start"), F.unix_micros("window_end").alias("end"),
        "message_count", "evidence", "statement", "window_start", *counts)
        .orderBy("severity_rank", "window_start", "kind", "finding_id")
        .limit(max(int(max_findings), 1)).collect())  # (one row at least: the counts)
    total = int(rows[0]["_total"]) if rows else 0
    by_severity = {s: int(rows[0][f"_n_{s}"]) for s in SEVERITIES
                   if rows and rows[0][f"_n_{s}"]}
    rows = rows[:max(int(max_findings), 0)]
    # the first LISTED_REFS messages of each finding shown: the only links that come here
    listed = ({r["finding_id"]: r["messages"] for r in sample_links(
        links, LISTED_REFS, [r["finding_id"] for r in rows]).collect()} if rows else {})
    out = []
    for r in rows:
        out.append({
            "finding_id": r["finding_id"],
            "kind": r["kind"], "severity": r["severity"], "queues": list(r["queues"] or []),
            "start": _utc(r["start"]), "end": _utc(r["end"]),
            "message_count": int(r["message_count"] or 0),
            "messages": [(m["source"], m["message_number"])
                         for m in listed.get(r["finding_id"]) or []],
            "evidence": json.loads(r["evidence"]) if r["evidence"] else {},
            "statement": r["statement"] or "",
        })
        # the finding in words (severity's reason, evidence, next steps): dlqlens.explain's
        out[-1]["explanation"] = explain_finding(
            {**out[-1], "window_start": None, "window_end": None,
             "messages": [{"source": s, "message_number": n} for s, n in out[-1]["messages"]]},
            capture_queues=capture_queues)
    return out, total, by_severity


def _group_columns():
    from pyspark.sql import functions as F

    return [F.col("dlh.Reason").alias("Reason"), F.col("reason_name"),
            F.col("dlh.DestQMgrName").alias("DestQMgrName"), destination_group().alias("DestQName")]


_GROUP_KEYS = ("Reason", "reason_name", "DestQMgrName", "DestQName")


def _no_finding(df, findings, top: int, examples: int):
    """Messages in no finding: the count, the groups (reason, destination) and
    the first ``examples`` messages of each of the first groups.

    One query: the groups aggregated (each with its first ``examples``
    messages by capture and message number: ``min_by`` of at most
    ``examples`` values, bounded), ranked over all groups with the totals
    alongside; only the first ``top`` groups reach the driver."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    left = unexplained_messages(df, findings).select(
        "source", "message_number", *_group_columns(), F.col("dlh.DestQName").alias("queue"),
        "dlh_put_ts")
    ref = F.struct("source", "message_number")
    aggs = [F.count("*").alias("messages"), F.countDistinct("queue").alias("queues"),
            F.unix_micros(F.min("dlh_put_ts")).alias("first"),
            F.unix_micros(F.max("dlh_put_ts")).alias("last")]
    if examples > 0:
        aggs.append(F.min_by(ref, ref, int(examples)).alias("examples"))
    every = Window.partitionBy()
    ranked = (left.groupBy(*_GROUP_KEYS).agg(*aggs)
              .withColumn("group", F.row_number().over(every.orderBy(
                  F.desc("messages"), *[F.col(k).asc_nulls_first() for k in _GROUP_KEYS])))
              .withColumn("total", F.sum("messages").over(every))
              .withColumn("groups", F.count(F.lit(1)).over(every)))
    # bounded (top groups, examples each): sorted on the driver, not by a global sort
    frame = (ranked.where(F.col("group") <= max(int(top), 1)).toPandas()
             .sort_values("group").reset_index(drop=True))
    total = int(frame["total"].iloc[0]) if len(frame) else 0
    group_count = int(frame["groups"].iloc[0]) if len(frame) else 0
    frame = frame[frame["group"] <= int(top)]
    samples = []
    if examples > 0:
        for g, picked in zip(frame["group"], frame["examples"]):
            refs = sorted((r["source"], int(r["message_number"])) for r in picked)
            samples += [(int(g), s, n) for s, n in refs]
    shown = frame[[*_GROUP_KEYS, "messages", "queues", "first", "last", "group"]]
    return total, group_count, shown.reset_index(drop=True), samples


def _explain_refs(df, refs, show_payloads: bool) -> dict:
    """Explanations of the messages named by ``refs`` (key, source, message_number),
    brought to the driver in one job: ``{(source, message_number): Explanation}``."""
    from pyspark.sql import functions as F

    from dlqlens.explain import EXPLAIN_COLUMNS, explain

    wanted = sorted({(s, int(n)) for _, s, n in refs})
    if not wanted:
        return {}
    spark = df.sparkSession
    keys = local_frame(spark, wanted, "source string, message_number int")  # no Python worker
    zone = spark.conf.get("spark.sql.session.timeZone")
    cols = []
    for c in EXPLAIN_COLUMNS:
        if c in ("put_ts", "dlh_put_ts"):
            # date_format shows the session's wall clock: shift the instant to show UTC's
            cols.append(F.date_format(F.to_utc_timestamp(F.col(c), zone),
                                      "yyyy-MM-dd HH:mm:ss.SSS").alias(c))
        elif c == "payload_text" and not show_payloads:
            cols.append(F.lit(None).cast("string").alias(c))  # never leaves Spark
        elif c in df.columns:
            cols.append(F.col(c))
    rows = sorted(df.join(F.broadcast(keys), ["source", "message_number"]).select(*cols)
                  .collect(),  # at most len(wanted) rows: sorted here, not by a global sort
                  key=lambda r: (r["source"], r["message_number"]))
    out = {}
    for row in rows:
        data = row.asDict(recursive=True)
        explanation = explain(data)
        if not show_payloads:
            _redact(explanation, data.get("payload_length"))
        out[(data["source"], int(data["message_number"]))] = explanation
    return out


def _redact(explanation, length) -> None:
    """Replace the payload fact of an explanation by the redaction notice."""
    if not length:  # nothing to hide: the fact says 0 bytes
        return
    facts = []
    for label, text in explanation.facts:
        if label == "Payload":
            text = REDACTED.format(n=length)
        facts.append((label, text))
    explanation.facts = facts


def _rules_part(table, df, world, top, small):
    """Lint, per-rule coverage, fates and the fall-through groups of a rules table
    (``small``: the capture's fates are decided on the driver, :func:`replay`)."""
    from pyspark.sql import functions as F

    from dlqlens.rules.lint import lint
    from dlqlens.rules.replay import replay, summarize as replay_summary
    from dlqlens.spark.caches import Caches

    from dlqlens.plots import rule_coverage

    findings = lint(table)
    with Caches() as caches:
        replayed = caches.cache(replay(table, df, world, allow_errors=True, small=small))
        stats = replay_summary(replayed, table)
        coverage = rule_coverage(stats, table)  # its counts are the summary's: no job
        left = (replayed.where(F.col("disposition") == "left")
                .select("source", "message_number", "left_reason"))
        fall = (df.join(left, ["source", "message_number"])
                .groupBy("left_reason", *_group_columns())
                .agg(F.count("*").alias("messages"),
                     F.countDistinct("dlh.DestQName").alias("queues"))
                .orderBy(F.desc("messages"), "left_reason", "Reason").limit(int(top))
                .toPandas())
    return findings, stats, fall, coverage


def _destinations(df, limit: int = 500):
    """Messages per destination (temporary queues grouped), with their reasons."""
    from pyspark.sql import functions as F

    return (df.where(F.col("dlh").isNotNull())
            .groupBy(F.col("dlh.DestQMgrName").alias("DestQMgrName"),
                     destination_group().alias("DestQName"))
            .agg(F.count("*").alias("messages"),
                 F.countDistinct("dlh.DestQName").alias("queues"),
                 F.array_sort(F.collect_set("dlh.Reason")).alias("reasons"))
            .orderBy(F.desc("messages"), "DestQMgrName", "DestQName").limit(int(limit))
            .toPandas())


def _quality(df, quality, table, defs, world, capture_time, capture_queues):
    """The quality suites' results: ``quality`` itself when computed already, the
    suites run under it when it is a Policy (or True: the default policy), else None."""
    from dlqlens.quality import Policy, QualityResults, audit

    if quality is None or quality is False or isinstance(quality, QualityResults):
        return quality or None
    policy = quality if isinstance(quality, Policy) else None
    return audit(df, policy=policy, rules=table, world=world, queue_defs=defs,
                 capture_time=capture_time, capture_queues=capture_queues)


# ---------------------------------------------------------------------------
# sections
# ---------------------------------------------------------------------------

def _summary_section(summary, span, figures, findings_total, by_severity, no_finding_total):
    from dlqlens.report.views import render_item

    severities = ", ".join(f"{by_severity[s]} {s}" for s in SEVERITIES if by_severity.get(s))
    boxes = [
        ("Messages", f"{summary.messages:,}",
         f"of {summary.framed:,} framed" if summary.framed != summary.messages else None),
        ("Capture files", f"{len(summary.sources):,}", None),
        ("Decode problems", f"{summary.problem_count:,}",
         f"{summary.without_dlh:,} without an MQDLH"),
        ("Findings", f"{findings_total:,}", severities or None),
        ("In no finding", f"{no_finding_total:,}", "messages no detector grouped"),
        ("Put on the DLQ", _span(span["oldest_dlq_put"], span["newest_dlq_put"]),
         "MQDLH put time"),
        ("Originally put", _span(span["oldest_put"], span["newest_put"]), "MQMD put time"),
    ]
    wrapped = _Wrapped("summary-tables", render_item(summary))
    return Section("summary", "Summary",
                   [KeyFigures(boxes[:5]),
                    KeyFigures(boxes[5:], wide=("Put on the DLQ", "Originally put")),
                    *figures, wrapped],
                   intro="What is on the dead-letter queue: messages by reason, destination and "
                         "putting application, when they came, and how well they decoded.")


@dataclass
class _Wrapped:
    css_class: str
    html: object

    def _repr_html_(self) -> str:
        return f'<div class="{escape(self.css_class)}">{self.html}</div>'


def _finding_views(findings):
    views = []
    for i, f in enumerate(findings, 1):
        window = _span(f["start"], f["end"])
        explained = f["explanation"]
        listed = explained.messages  # a MessageFilter of the messages brought here
        shown = [f"{src} " + ", ".join(f"#{lo}" if lo == hi else f"#{lo}-#{hi}" for lo, hi in r)
                 for src, r in listed.ranges.items()]
        views.append(FindingView(
            number=i, severity=f["severity"], kind=f["kind"], queues=", ".join(f["queues"]),
            window=window, message_count=f["message_count"], statement=f["statement"],
            severity_reason=explained.severity_reason,
            next_steps=[Markup(step.to_html()) for step in explained.next_steps],
            evidence=[(e["label"], e["text"]) for e in explained.evidence],
            messages=shown, more_messages=max(f["message_count"] - listed.count, 0),
            finding_id=f["finding_id"]))
    return views


def _findings_section(findings, total, examples):
    items: list = _finding_views(findings)
    if not findings:
        items = [Note("The detectors found nothing: no burst, backout loop, trigger failure, "
                      "expiry build-up or orphaned reply.", "none")]
    if total > len(findings):
        items.append(Note(f"{total - len(findings)} more finding(s) not shown: "
                          "dlqlens detect CAPTURE --jsonl lists them all."))
    return Section("findings", "Findings", items,
                   intro=f"{total} finding(s) of the detectors, most severe first: what pattern "
                         "put these messages on the DLQ, what to do next, the evidence, and the "
                         "messages each groups (explained below).")


def _quality_section(results):
    failed = results.failed
    items: list = []
    if failed:
        items.append(Note(f"{len(failed)} expectation(s) failed: "
                          + ", ".join(r.name for r in failed)
                          + ". Each failed one's messages are a filter over the capture "
                            "(results.failing(name).apply(df)).", "warning"))
    items.append(results)
    source = getattr(results.policy, "source", None)
    return Section("quality", "Data quality: structural and hygiene expectations", items,
                   intro=f"great-expectations suites (docs/quality.md), policy "
                         f"{source or 'defaults'}: {results.summary()}.")


def _lint_section(table, source, text, lint_findings):
    rows, classes = [], []
    for d in table.diagnostics:
        rows.append([d.line, d.severity, d.code, d.rule_index or "", d.message])
        classes.append("error" if d.severity == "error" else "")
    for f in lint_findings:
        rows.append([f.line or "", f.severity, f.code, f.rule_index or "", f.message])
        classes.append("")
    items: list = []
    if table.errors:
        items.append(Note(f"The DLQ handler would not start with this table: {len(table.errors)} "
                          "error(s). The replay below leaves out the rules that have errors.",
                          "warning"))
    items.append(Table(["line", "severity", "code", "rule", "message"], rows,
                       caption=f"Diagnostics and lint ({len(rows)})", empty="none: the handler "
                       "would accept the table and the lint has nothing to say",
                       numeric=("line", "rule"), row_classes=classes))
    if text is not None:
        lines = text.splitlines()
        listed = [(i, line) for i, line in enumerate(lines[:LISTED_LINES], 1)]
        items.append(Listing(listed, caption="The table",
                             note=(f"{len(lines) - LISTED_LINES} more line(s) not shown"
                                   if len(lines) > LISTED_LINES else None)))
    return Section("rules-lint", "Rules table: diagnostics and lint", items,
                   intro=f"{source}: {len(table.rules)} rule(s), {len(table.errors)} error(s), "
                         f"{len(table.warnings)} warning(s), {len(lint_findings)} lint "
                         "finding(s): what the handler would reject at start-up and what an "
                         "auditor should look at.")


_FATE_WORDS = {
    ("retried", None): "put to its original destination again (RETRY)",
    ("forwarded", None): "forwarded (FWD)",
    ("discarded", None): "removed (DISCARD)",
    ("left", "ignore_rule"): "left by an ACTION(IGNORE) rule",
    ("left", "rules_exhausted"): "left: every matching rule failed all its attempts "
                                 "(falls through to the implicit IGNORE)",
    ("left", "no_match"): "left: no rule matches (falls through to the implicit IGNORE)",
    ("left", "no_dlh"): "left: no MQDLH, the handler cannot process it",
}


def _coverage_section(table, text, stats, fall, world, top, figure=None):
    lines = text.splitlines() if text is not None else []

    def rule_text(rule_line):
        if 0 < rule_line <= len(lines):
            t = lines[rule_line - 1].strip()
            return t if len(t) <= 110 else t[:109] + "…"
        return ""

    rows, classes = [], []
    for r in stats.rules:
        rows.append([r["rule_index"], r["line"], r["action"] or "", rule_text(r["line"]),
                     r["matched"], r["first_match"], r["tried"], r["disposed"], r["ignored"]])
        classes.append("fall-through" if r["first_match"] == 0 else "")
    per_rule = Table(["rule", "line", "action", "as written", "matched", "first match", "tried",
                      "disposed", "ignored"], rows, caption="Per rule",
                     numeric=("rule", "line", "matched", "first match", "tried", "disposed",
                              "ignored"),
                     row_classes=classes,
                     note="matched: the rule's patterns match; first match: it is the first "
                          "rule that does; tried: the handler got to it; disposed: it took the "
                          "message off the DLQ. A rule first for no message is highlighted.")
    fate_rows = []
    for (disposition, why), n in sorted(stats.fates.items(), key=lambda kv: -kv[1]):
        fate_rows.append([disposition + (f"/{why}" if why else ""),
                          _FATE_WORDS.get((disposition, why), ""), n])
    fates = Table(["fate", "meaning", "messages"], fate_rows,
                  caption=f"What the handler would do with the {stats.messages:,} message(s)",
                  numeric=("messages",),
                  row_classes=["fall-through" if f[0].startswith("left/") else ""
                               for f in fate_rows])
    fall_rows = []
    for r in fall.itertuples(index=False):
        fall_rows.append([r.left_reason or "", _reason_label(r.Reason, r.reason_name),
                          _held(r.DestQMgrName), _held(r.DestQName),
                          int(r.queues), int(r.messages)])
    fallthrough = Table(["why left", "reason", "DestQMgrName", "DestQName", "queues", "messages"],
                        fall_rows, caption="Messages left on the DLQ, by reason and destination",
                        empty="none: every message is taken by a rule",
                        numeric=("queues", "messages"),
                        note=(f"The first {top} groups. " if len(fall_rows) >= top else "")
                        + "Temporary dynamic queues (AMQ.*, CSQ.*) are grouped by prefix; "
                        "queues counts the names in a row.")
    left = sum(n for (d, _), n in stats.fates.items() if d == "left")
    return Section("rules-coverage", "Rules table: coverage and fall-through",
                   [figure, per_rule, fates, fallthrough],
                   intro=f"The table replayed over the capture in the {world} world "
                         "(what runmqdlq would do, without a queue manager; "
                         + ("every put succeeds" if world == "optimistic" else
                            "puts to a message's original destination fail again"
                            if world == "pessimistic" else "puts as the world file says")
                         + f"): {left:,} of {stats.messages:,} message(s) would stay on the DLQ.")


def _queue_defs_section(defs, source, destinations):
    from dlqlens.mq.constants import MQAT_NAMES

    named = {}
    for r in destinations.itertuples(index=False):
        named[r.DestQName] = named.get(r.DestQName, 0) + int(r.messages)
    rows = []
    for name, q in sorted(defs.items()):
        a = q.attributes
        inhibited = ", ".join(k.upper() for k in ("put", "get") if a.get(k) == "DISABLED")
        if q.type in ("QLOCAL", "QMODEL"):
            trigger = (f"{a.get('trigtype')} → {a.get('initq') or '(no INITQ)'}, process "
                       f"{a.get('process') or '(none)'}" if a.get("trigger") else "off")
            backout = (f"{a.get('bothresh')} → {a.get('boqname') or '(no BOQNAME)'}"
                       if a.get("bothresh") else "—")
            rows.append([name, q.type, named.get(name, 0), a.get("maxdepth", ""),
                         inhibited or "—", backout, trigger, a.get("defpsist", ""),
                         a.get("descr", "")])
        else:
            target = a.get("target") or a.get("rname") or ""
            rows.append([name, q.type, named.get(name, 0), "", inhibited or "—", "",
                         f"→ {target}" if target else "", a.get("defpsist", ""),
                         a.get("descr", "")])
    queues = Table(["queue", "type", "dead letters for it", "MAXDEPTH", "inhibited",
                    "BOTHRESH → BOQNAME", "trigger", "DEFPSIST", "DESCR"], rows,
                   caption=f"Queues ({len(rows)})", numeric=("dead letters for it", "MAXDEPTH"),
                   row_classes=["fall-through" if r[4] != "—" else "" for r in rows],
                   note="Highlighted: put or get inhibited.")
    items: list = [queues]
    processes = getattr(defs, "processes", {})
    if processes:
        items.append(Table(["process", "APPLTYPE", "APPLICID", "DESCR"],
                           [[p.name, MQAT_NAMES.get(p.get("appltype"), p.get("appltype")),
                             p.get("applicid", ""), p.get("descr", "")]
                            for _, p in sorted(processes.items())],
                           caption=f"Processes ({len(processes)})"))
    qmgr = getattr(defs, "qmgr", None)
    if qmgr:
        items.append(Table(["attribute", "value"],
                           [["TRIGINT", f"{qmgr.get('trigint')} ms"],
                            ["DEADQ", qmgr.get("deadq") or "—"]], caption="Queue manager"))
    missing = [[_held(r.DestQMgrName), _held(r.DestQName), int(r.queues),
                ", ".join(str(x) for x in (r.reasons if r.reasons is not None else [])),
                int(r.messages)]
               for r in destinations.itertuples(index=False) if r.DestQName not in defs]
    items.append(Table(["DestQMgrName", "DestQName", "queues", "reasons", "messages"], missing,
                       caption="Destinations of dead letters with no definition in the file",
                       empty="none: every destination is defined",
                       numeric=("queues", "messages"),
                       note="A dead letter with reason 2085 (MQRC_UNKNOWN_OBJECT_NAME) names a "
                            "queue its queue manager did not have; others may simply be defined "
                            "on a queue manager the file does not cover."))
    warnings = getattr(defs, "warnings", [])
    if warnings:
        items.append(Table(["warning"], [[w] for w in warnings[:100]],
                           caption=f"Read but not used ({len(warnings)})"))
    return Section("queue-definitions", "Queue definitions used", items,
                   intro=f"{source}: {len(defs)} queue(s), {len(processes)} process(es), "
                         "as the detectors read them (BOTHRESH and BOQNAME for backout loops, "
                         "the trigger attributes for trigger failures and storms).")


def _no_finding_section(total, group_count, shown, top):
    rows = []
    for r in shown.itertuples(index=False):
        rows.append([_reason_label(r.Reason, r.reason_name), _meaning(r.Reason),
                     _held(r.DestQMgrName), _held(r.DestQName), int(r.queues), int(r.messages),
                     _span(_utc(r.first), _utc(r.last))])
    note = None
    if group_count > len(rows):
        note = f"The first {len(rows)} of {group_count} groups."
    table = Table(["reason", "meaning", "DestQMgrName", "DestQName", "queues", "messages",
                   "put on the DLQ"], rows, numeric=("queues", "messages"), note=note,
                  empty="none: every message is in a finding")
    intro = (f"{total:,} message(s) are in no finding, in {group_count} group(s) by reason and "
             "destination. No detector recognised a pattern in them: look at them one group at "
             "a time (explained below)." if total else
             "Every message is in at least one finding: the detectors recognised a pattern in "
             "each.")
    return Section("no-finding", "Messages in no finding", [Note(intro, "intro"), table])


def _short(headline: str) -> str:
    """The reason part of an explanation's headline (``MQRC_Q_FULL (2053)``)."""
    if headline.startswith("Dead-lettered with "):
        return headline[len("Dead-lettered with "):].split(" while ")[0]
    return headline if len(headline) <= 60 else headline[:59] + "…"


def _explanations_section(findings, samples, shown, explanations, examples):
    items = []
    seen: dict = {}  # message -> the group it was explained in

    def views(refs, where):
        out = []
        for s, n in refs:
            e = explanations.get((s, int(n)))
            if e is None:
                continue
            if (s, int(n)) in seen:
                out.append(Note(f"{s} #{n}: explained above, under {seen[(s, int(n))]}."))
                continue
            seen[(s, int(n))] = where
            first = not any(isinstance(v, ExplanationView) for v in out)
            out.append(ExplanationView(f"{s} #{n}", _short(e.headline), e, open=first))
        return out

    for i, f in enumerate(findings, 1):
        refs = f["messages"][:examples]
        items.append(Group(f"Finding {i}: {f['kind']} {', '.join(f['queues'])}",
                           views(refs, f"finding {i}"),
                           intro=f"{len(refs)} of {f['message_count']} message(s)."))
    by_group: dict = {}
    for g, s, n in samples:
        by_group.setdefault(g, []).append((s, n))
    for r in shown.itertuples(index=False):
        refs = by_group.get(r.group, [])
        if not refs:
            continue
        label = _reason_label(r.Reason, r.reason_name)
        items.append(Group(f"No finding: {label} for "
                           f"{r.DestQName or '(blank)'} on {r.DestQMgrName or '(blank)'}",
                           views(refs, f"the group {label}"),
                           intro=f"{len(refs)} of {int(r.messages)} message(s)."))
    if not items:
        items = [Note("No message to explain.", "none")]
    return Section("explanations", "Explanations of the messages that need action", items,
                   intro=f"Why each message is on the DLQ, in words: the first {examples} "
                         "message(s) of every finding and of every group in no finding (never "
                         "the whole capture). dlqlens explain CAPTURE -m N explains any other.")


# ---------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------

@dataclass
class ReportData:
    """Everything the report shows, on the driver (bounded: see :func:`gather`).

    Rendering (:func:`render`) needs no Spark, so the same data can be
    rendered again (another title, a test). ``pngs`` holds the PNGs of the
    figures, rendered while the analyses ran (:class:`FigurePngs`); a
    figure changed after :func:`gather` must be submitted to it again (or
    ``pngs`` set to None: every figure is then rendered with the page).
    """

    summary: object
    span: dict
    figures: list
    findings: list
    findings_total: int
    by_severity: dict
    no_finding_total: int
    no_finding_groups: int
    no_finding_shown: object
    no_finding_samples: list
    explanations: dict
    examples: int
    top: int
    show_payloads: bool
    table: object = None
    rules_source: str | None = None
    rules_text: str | None = None
    lint: list | None = None
    replay: object = None
    fall_through: object = None
    coverage_figure: object = None
    world: str = "optimistic"
    defs: object = None
    defs_source: str | None = None
    destinations: object = None
    quality: object = None
    pngs: FigurePngs | None = None


def default_figures() -> tuple:
    """The summary's figures: functions of :mod:`dlqlens.plots` taking the capture DataFrame."""
    from dlqlens import plots

    return (plots.arrivals, plots.reasons_by_destination, plots.ages, plots.remaining_expiry,
            plots.backout_counts, plots.trigger_rate)


def gather(df, *, rules=None, queue_defs=None, show_payloads: bool = False,
           capture_queues=None, world="optimistic", top: int = 20, examples: int = 3,
           max_findings: int = 50, figures=None, capture_time=None,
           quality=None) -> ReportData:
    """Run the analyses for the report in Spark and bring their bounded results
    to the driver (the parameters are :func:`build_report`'s)."""
    from dlqlens.detect import Findings, analysis_input, detector_input, run_detectors
    from dlqlens.detect.common import newest_put_times
    from dlqlens.explain import summarize
    from dlqlens.plots import figures as draw_figures
    from dlqlens.rules.model import RulesTable
    from dlqlens.rules.parser import parse_file
    from dlqlens.spark.caches import Caches
    from dlqlens.spark import session as spark_session
    from dlqlens.spark.session import short_run, small_capture

    rules_text = rules_source = None
    table = None
    if rules is not None:
        if isinstance(rules, RulesTable):
            table, rules_source = rules, rules.source or "(rules table)"
        else:
            table, rules_source = parse_file(rules), os.fspath(rules)
            rules_text = _read_text(rules)
    defs = defs_source = None
    if queue_defs is not None:
        if isinstance(queue_defs, dict):
            defs, defs_source = queue_defs, "(queue definitions)"
        else:
            from dlqlens.mq.mqsc import read_queue_defs

            defs, defs_source = read_queue_defs(queue_defs), os.fspath(queue_defs)

    # a capture handed over cached is read as it is; otherwise what the analyses read is
    # cached without the messages' bytes (a 10M capture's bytes ran the 1 GB heap out); the
    # few messages explained are read from that cache too, unless their payloads are shown
    # (payload_text is the one byte column an explanation reads): then from the capture
    was_cached = df.is_cached
    capture = df
    # the figures' PNGs are made in a thread of their own while the analyses wait on Spark
    pngs = FigurePngs()
    with Caches() as caches, ExitStack() as scope:
        scope.callback(pngs.close)
        if not was_cached:
            df = caches.cache(analysis_input(df))
        # a small capture in a session dlqlens made: the short run's settings until the
        # page's data is gathered (the session's own again after)
        scope.enter_context(short_run(df, partial(small_capture, df)))
        detected = df
        summary = summarize(df, top=top)
        span = _time_span(summary)
        # every figure's aggregates computed together (two queries for the six figures)
        figs = draw_figures(df, figures if figures is not None else default_figures())
        # each capture's newest put (the capture's time where none is given) came with the
        # summary's aggregation: the detectors and the audit run no query of their own for it
        capture_time = newest_put_times(capture_time, summary.newest_puts)
        timing = {} if capture_time is None else {"capture_time": capture_time}
        large = summary.messages > spark_session.SMALL_CAPTURE_MESSAGES
        if large and not was_cached:
            # the detectors read a cache of their own, of the few fields they read: a
            # struct is read whole from a cache, and the analyses' cache holds every MQMD
            # field (a million messages: the findings in 28 s instead of 47-53 s)
            detected = caches.cache(detector_input(df))
        # on a large capture each detector's findings are cached for its links; on a small
        # one, whose detectors run in one partition, that only adds Spark jobs
        findings_df, links = run_detectors(detected, queue_defs=defs,
                                           persisted=caches if large else None,
                                           small=not large,
                                           capture_queues=capture_queues or None, **timing)
        # the figures' PNGs made from here on, while the queries below run (not while the
        # detectors' plans were built: that is the interpreter's work too, FigurePngs)
        pngs.submit(*figs)
        # both read twice below (the listed messages, the messages in no finding):
        # cached, the detectors run once (each planned as it is cached: side by side)
        findings_df, links = caches.cache_all(findings_df, links)
        findings, findings_total, by_severity = _collect_findings(
            findings_df, links, max_findings, examples, capture_queues)
        nf_total, nf_groups, nf_shown, nf_samples = _no_finding(
            df, Findings(findings_df, links), top, examples)
        rules_part = (_rules_part(table, df, world, top, small=not large) if table is not None
                      else None)
        if rules_part is not None:
            pngs.submit(rules_part[3])  # the coverage figure
        destinations = _destinations(df) if defs is not None else None
        refs = [(None, s, n) for f in findings for s, n in f["messages"][:examples]]
        explanations = _explain_refs(capture if show_payloads else df,
                                     refs + list(nf_samples), show_payloads)
        quality_results = _quality(df, quality, table, defs, world, capture_time,
                                   capture_queues)
    data = ReportData(
        summary=summary, span=span, figures=figs, findings=findings,
        findings_total=findings_total, by_severity=by_severity,
        no_finding_total=nf_total, no_finding_groups=nf_groups, no_finding_shown=nf_shown,
        no_finding_samples=nf_samples, explanations=explanations, examples=examples, top=top,
        show_payloads=show_payloads, table=table, rules_source=rules_source,
        rules_text=rules_text, world=getattr(world, "name", world), defs=defs,
        defs_source=defs_source, destinations=destinations, quality=quality_results, pngs=pngs)
    if rules_part is not None:
        data.lint, data.replay, data.fall_through, data.coverage_figure = rules_part
    return data


def render(data: ReportData, title: str | None = None) -> Report:
    """The report of gathered data: the sections, the page and the text summary."""
    from dlqlens.safe import printable

    summary, span, by_severity = data.summary, data.span, data.by_severity
    sections = [_summary_section(summary, span, data.figures, data.findings_total, by_severity,
                                 data.no_finding_total),
                _findings_section(data.findings, data.findings_total, data.examples)]
    if data.quality is not None:
        sections.append(_quality_section(data.quality))
    if data.table is not None:
        sections.append(_lint_section(data.table, data.rules_source, data.rules_text, data.lint))
        sections.append(_coverage_section(data.table, data.rules_text, data.replay,
                                          data.fall_through, data.world, data.top,
                                          data.coverage_figure))
    if data.defs is not None:
        sections.append(_queue_defs_section(data.defs, data.defs_source, data.destinations))
    sections.append(_no_finding_section(data.no_finding_total, data.no_finding_groups,
                                        data.no_finding_shown, data.top))
    sections.append(_explanations_section(data.findings, data.no_finding_samples,
                                          data.no_finding_shown, data.explanations,
                                          data.examples))

    title = title or "DLQ audit report"
    sources = list(summary.sources)
    page = environment().get_template("report.html.j2").render(
        title=title, version=_version(),
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
        sources=sources[:SHOWN_SOURCES], more_sources=max(len(sources) - SHOWN_SOURCES, 0),
        rules_source=data.rules_source, queue_defs_source=data.defs_source,
        payloads=("shown (show_payloads)" if data.show_payloads else
                  "redacted: each payload is shown as its length only (--show-payloads to "
                  "include them)"),
        sections=sections, pngs=data.pngs)

    # the short text summary
    lines = [f"{title}: {summary.messages:,} message(s) in {len(sources)} capture file(s); "
             f"put on the DLQ {_span(span['oldest_dlq_put'], span['newest_dlq_put'])}"]
    top_reasons = ", ".join(f"{int(r.messages)} × {_reason_label(r.Reason, r.reason_name)}"
                            for r in summary.by_reason.head(5).itertuples(index=False))
    if top_reasons:
        lines.append(f"  by reason: {top_reasons}")
    lines.append(f"  decode problems: {summary.problem_count}; without an MQDLH: "
                 f"{summary.without_dlh}")
    severities = ", ".join(f"{by_severity[s]} {s}" for s in SEVERITIES if by_severity.get(s))
    lines.append(f"findings: {data.findings_total}" + (f" ({severities})" if severities else "")
                 + f"; {data.no_finding_total:,} message(s) in no finding")
    if data.table is not None:
        left = {why: n for (d, why), n in data.replay.fates.items() if d == "left"}
        lines.append(f"rules table {data.rules_source}: {len(data.table.rules)} rule(s), "
                     f"{len(data.table.errors)} error(s), {len(data.lint)} lint finding(s); "
                     f"replayed ({data.world}): "
                     f"{left.get('no_match', 0):,} message(s) match no rule, "
                     f"{left.get('rules_exhausted', 0):,} exhaust their rules "
                     "(both stay on the DLQ: implicit IGNORE)")
    if data.quality is not None:
        failed = ", ".join(r.name for r in data.quality.failed)
        lines.append(f"quality: {data.quality.summary()}" + (f" ({failed})" if failed else ""))
    if data.defs is not None:
        undefined = sum(1 for r in data.destinations.itertuples(index=False)
                        if r.DestQName not in data.defs)
        lines.append(f"queue definitions {data.defs_source}: {len(data.defs)} queue(s), "
                     f"{len(getattr(data.defs, 'processes', {}))} process(es); "
                     f"{undefined} destination(s) of dead letters not defined there")
    text = printable("\n".join(lines)) + "\n"
    return Report(html=page, text=text, title=title, sections=sections)


def build_report(df, *, rules=None, queue_defs=None, show_payloads: bool = False,
                 capture_queues=None, title: str | None = None, world="optimistic",
                 top: int = 20, examples: int = 3, max_findings: int = 50,
                 figures=None, capture_time=None, quality=None) -> Report:
    """The HTML audit report of a capture DataFrame.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (:func:`dlqlens.spark.load_capture`, ``PERMISSIVE``
        mode, every column). Cached for the report's duration without the
        messages' bytes (:func:`dlqlens.detect.analysis_input`; the few
        messages explained are read from that cache too, or from ``df``
        itself when ``show_payloads`` needs their text) unless the caller
        has cached it. Past :data:`dlqlens.detect.SMALL_CAPTURE_MESSAGES`
        messages, each detector's findings are cached for its links
        (``run_detectors``' ``persisted``) and, unless the caller cached
        ``df``, the detectors read a cache of their own
        (:func:`dlqlens.detect.detector_input` of the report's).
    rules : str, path or RulesTable, optional
        A runmqdlq rules table: adds its diagnostics and lint, and its
        coverage and fall-through (the table replayed over the capture).
    queue_defs : str, path or dict, optional
        Queue definitions (an MQSC file, or
        :func:`dlqlens.mq.mqsc.read_queue_defs`' result): given to the
        detectors and shown.
    show_payloads : bool
        Include payload text in the explanations; by default each payload
        is replaced by ``payload redacted: N bytes; ...`` and no payload
        text leaves Spark.
    capture_queues : dict, optional
        The queue each capture file was taken from
        (:func:`dlqlens.capture.reader.captured_queues`), for the detectors.
    title : str, optional
        The page's title (default ``DLQ audit report``).
    world : str or World
        The world of the rules replay (``optimistic``, ``pessimistic`` or a
        world file; :mod:`dlqlens.rules.world`).
    top : int
        Rows of each grouped table, and groups of messages in no finding.
    examples : int
        Messages explained per finding and per group in no finding.
    max_findings : int
        Findings shown (most severe first); the rest are counted.
    figures : list of callable, optional
        Functions ``f(df) -> matplotlib.figure.Figure`` (aggregating in
        Spark) whose figures the summary shows, in order; default
        :func:`default_figures` (arrivals by reason, reasons by destination,
        ages, remaining expiry, backout counts, trigger-message rate). The
        functions of :mod:`dlqlens.plots` (and partials of them) are computed
        together (:func:`dlqlens.plots.figures`: two Spark queries). With a
        rules table, the coverage section also shows
        :func:`dlqlens.plots.rule_coverage`.
    capture_time : datetime or CaptureTimes, optional
        When the captures were taken (UTC), passed to the detectors
        (:func:`dlqlens.detect.run`): a burst is said to be still going only
        when this time shows it. Default: each capture's newest put, and the
        findings say so.
    quality : Policy, QualityResults or bool, optional
        Adds the section of the data-quality suites
        (:func:`dlqlens.quality.audit`): run under this policy (True: the
        default policy) with the rules table, queue definitions and capture
        time above, every capture audited as the DLQ; or results computed
        already. Default: no such section.

    Returns
    -------
    Report

    Notes
    -----
    The session's configuration is left as it was found.
    """
    return render(gather(df, rules=rules, queue_defs=queue_defs, show_payloads=show_payloads,
                         capture_queues=capture_queues, world=world, top=top,
                         examples=examples, max_findings=max_findings, figures=figures,
                         capture_time=capture_time, quality=quality), title)


__all__ = ["REDACTED", "Report", "ReportData", "Section", "build_report", "gather", "render"]
