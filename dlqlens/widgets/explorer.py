"""The DLQ explorer: a filterable, sortable, paged table of a capture's messages.

Built for DataFrames of millions of rows: only a page of the table and the
selected message ever travel to the driver.

* **Filters** (:class:`Filters`) are Spark predicates on the capture's
  columns (``F.col("Reason").isin(...)``, runmqdlq generic patterns through
  :func:`dlqlens.rules.compile.string_predicate`, a ``dlh_put_ts`` range,
  the replay's ``disposition`` / ``left_reason``); a finding's messages are a
  left-semi join with the findings' links (``finding_id, source,
  message_number``: :mod:`dlqlens.detect.findings`), the messages in no
  finding a left-anti join with them, in Spark and paged like any filter.
* **Pages** are ``orderBy(sort key, source, message_number)`` plus
  ``limit``: a total order, so pages are stable and complete. The next page
  after one already seen is a keyset query (rows after the last row's key),
  any other page an ``offset``; both give the same rows.
* **Filter choices** (reasons, destinations, queue managers, applications,
  fates) are the top ``top`` values of each by message count, from one
  bounded aggregation over the whole capture, with how many values were
  left out.
* **The selected message** is fetched alone (its payload cut to
  :data:`dlqlens.widgets.fields.TEXT_BYTES` bytes in Spark) and shown as its
  explanation (:func:`dlqlens.explain.explain`), its headers field by field
  (:func:`dlqlens.widgets.fields.header_fields`), its payload as text and
  hex, and, with a replay and its rules table, its rule trace
  (:func:`dlqlens.widgets.trace.rule_trace`).

The columns the table filters and sorts on (``source``, ``message_number``,
the put times, MQDLH ``Reason``, ``DestQName``, ``DestQMgrName``, MQMD
``PutApplName``, ``payload_length``, ``decode_status`` and the replay's fate)
form a narrow *index* DataFrame, persisted by default (``cache=True``,
released by :meth:`ExplorerModel.close`): the first query decodes the
capture once, and every filter, page and count after it reads the index.
The mqcapture source has no predicate push-down, so fetching the selected
message reads the capture again unless the caller cached ``df``.

:class:`ExplorerModel` holds all of this as plain, testable Python; the
ipywidgets view (:func:`explore`) is a thin layer over it, and both render a
static HTML twin (``to_html``; the view's ``_repr_mimebundle_`` carries it as
``text/html`` beside the widget) so that a notebook saved without a widget
frontend, nbval and the HTML report show what the explorer showed.
Everything that came from a capture is escaped.
"""

from __future__ import annotations

import datetime as _dt
import html
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from dlqlens.explain import explain
from dlqlens.mq.structs import MQDLH, MQMD
from dlqlens.safe import printable
from dlqlens.spark.caches import Caches
from dlqlens.widgets._render import esc, table, text_table
from dlqlens.widgets.fields import (TEXT_BYTES, PayloadView, fields_html, fields_text, header_fields,
                                    payload_view)
from dlqlens.widgets.progress import no_progress

#: Sort keys: name -> (label, index column). Every order ends with
#: ``source, message_number`` (unique per message), so it is total.
SORTS: dict[str, tuple[str, str | None]] = {
    "dlq_put": ("put on the DLQ (MQDLH PutDate/PutTime)", "dlh_put_ts"),
    "put": ("original put (MQMD PutDate/PutTime)", "put_ts"),
    "reason": ("reason (MQDLH Reason)", "Reason"),
    "destination": ("destination queue (MQDLH DestQName)", "DestQName"),
    "qmgr": ("destination queue manager (MQDLH DestQMgrName)", "DestQMgrName"),
    "application": ("putting application (MQMD PutApplName)", "PutApplName"),
    "size": ("payload length", "payload_length"),
    "message": ("capture file and message number", None),
}

#: Facets whose top values :meth:`ExplorerModel.choices` lists: name ->
#: (index column, label column or None, whether the facet needs a replay).
FACETS: dict[str, tuple[str, str | None, bool]] = {
    "reasons": ("Reason", "reason_name", False),
    "destinations": ("DestQName", None, False),
    "qmgrs": ("DestQMgrName", None, False),
    "applications": ("PutApplName", None, False),
    "dispositions": ("disposition", None, True),
    "left_reasons": ("left_reason", None, True),
}

#: The replay's columns kept in the index (``rules.replay.OUTPUT_COLUMNS``
#: but ``source``/``message_number``, plus ``matched``).
FATE_COLUMNS = ("tried", "rule_index", "action", "target_queue", "target_qmgr", "header_kept",
                "disposition", "left_reason", "seconds_to_disposition", "matched")

#: Columns of a page row (besides the sort key).
PAGE_COLUMNS = ("source", "message_number", "dlq_put", "Reason", "reason_name", "DestQName",
                "DestQMgrName", "PutApplName", "payload_length", "decode_status")
_FATE_PAGE = ("disposition", "left_reason", "rule_index")

_TS_FORMAT = "yyyy-MM-dd HH:mm:ss.SSS"

#: Elements of the selected message's lists kept (decode issues, RFH2 folders, header chain).
LIST_LIMIT = 32


def _utc(value) -> _dt.datetime | None:
    """A filter bound as an aware UTC datetime (naive values and ISO text are UTC)."""
    if value is None or value == "":
        return None
    from dlqlens.capture.reader import to_utc

    if isinstance(value, str):
        value = value.strip()
    elif not isinstance(value, _dt.datetime):
        to_py = getattr(value, "to_pydatetime", None)  # pandas.Timestamp
        if to_py is None:
            raise TypeError(f"a time bound must be a datetime or ISO text, not {type(value).__name__}")
        value = to_py()
    return to_utc(value).replace(tzinfo=_dt.timezone.utc)


def _tuple(values) -> tuple:
    if values is None:
        return ()
    if isinstance(values, (str, int)):
        return (values,)
    return tuple(values)


def _names_predicate(column: str, values: tuple, length: int):
    """Names and runmqdlq generic patterns (``*``, ``?``) over a trimmed
    character column; ``None`` matches a null (no MQDLH)."""
    from pyspark.sql import functions as F

    from dlqlens.rules.compile import string_predicate

    exact = [v for v in values if v is not None and not ("*" in v or "?" in v)]
    generic = [v for v in values if v is not None and ("*" in v or "?" in v)]
    parts = []
    if exact:
        parts.append(F.col(column).isin(exact))
    parts += [string_predicate(F.col(column), g, length, trimmed=True) for g in generic]
    if None in values:
        parts.append(F.col(column).isNull())
    pred = parts[0]
    for p in parts[1:]:
        pred = pred | p
    return pred


def _values_predicate(column: str, values: tuple):
    from pyspark.sql import functions as F

    known = [v for v in values if v is not None]
    pred = F.col(column).isin(known) if known else None
    if None in values:
        pred = F.col(column).isNull() if pred is None else pred | F.col(column).isNull()
    return pred


#: The ``finding`` filter's value for the messages in no finding.
NO_FINDING = 0


@dataclass(frozen=True)
class Filters:
    """What the explorer's table shows; every field empty means no filter.

    Attributes
    ----------
    reasons : tuple of int
        MQDLH ``Reason`` values (``None``: messages without an MQDLH).
    destinations, qmgrs : tuple of str
        MQDLH ``DestQName`` / ``DestQMgrName``: names, or runmqdlq generic
        patterns (``APP.*``, ``?*``) matched as the DLQ handler matches them.
    applications : tuple of str
        MQMD ``PutApplName`` (the original putter), names or patterns.
    dlq_put_from, dlq_put_to : datetime or None
        ``dlh_put_ts`` from (inclusive) and to (exclusive), UTC; ISO text and
        naive datetimes are taken as UTC.
    finding : int or None
        A finding's number (:meth:`ExplorerModel.findings`, from 1): its
        messages; :data:`NO_FINDING` (0): the messages in no finding.
    dispositions, left_reasons : tuple of str
        The replay's ``disposition`` / ``left_reason`` (needs ``replayed``).
    """

    reasons: tuple = ()
    destinations: tuple = ()
    qmgrs: tuple = ()
    applications: tuple = ()
    dlq_put_from: _dt.datetime | None = None
    dlq_put_to: _dt.datetime | None = None
    finding: int | None = None
    dispositions: tuple = ()
    left_reasons: tuple = ()

    def __post_init__(self):
        for name in ("reasons", "destinations", "qmgrs", "applications", "dispositions",
                     "left_reasons"):
            object.__setattr__(self, name, _tuple(getattr(self, name)))
        object.__setattr__(self, "reasons",
                           tuple(None if r is None else int(r) for r in self.reasons))
        object.__setattr__(self, "dlq_put_from", _utc(self.dlq_put_from))
        object.__setattr__(self, "dlq_put_to", _utc(self.dlq_put_to))
        if self.finding is not None:
            object.__setattr__(self, "finding", int(self.finding))
            if self.finding < 0:
                raise ValueError(f"finding must be a finding's number (1...) or NO_FINDING (0), "
                                 f"not {self.finding}")

    @property
    def needs_replay(self) -> bool:
        return bool(self.dispositions or self.left_reasons)

    def predicates(self) -> list:
        """``(label, Column)`` per active filter but ``finding`` (a join), over
        the explorer's index columns; combine them with ``&``."""
        from pyspark.sql import functions as F

        out = []
        if self.reasons:
            out.append(("reason", _values_predicate("Reason", self.reasons)))
        for name, column, length in (("destinations", "DestQName", MQDLH.field("DestQName").length),
                                     ("qmgrs", "DestQMgrName", MQDLH.field("DestQMgrName").length),
                                     ("applications", "PutApplName",
                                      MQMD.field("PutApplName").length)):
            values = getattr(self, name)
            if values:
                out.append((name, _names_predicate(column, values, length)))
        if self.dlq_put_from is not None:
            out.append(("dlq_put_from", F.col("dlh_put_ts") >= F.lit(self.dlq_put_from)))
        if self.dlq_put_to is not None:
            out.append(("dlq_put_to", F.col("dlh_put_ts") < F.lit(self.dlq_put_to)))
        if self.dispositions:
            out.append(("disposition", _values_predicate("disposition", self.dispositions)))
        if self.left_reasons:
            out.append(("left_reason", _values_predicate("left_reason", self.left_reasons)))
        return out

    def describe(self) -> str:
        """The active filters in words ("none" when there is none)."""
        def names(values):
            return ", ".join("(null)" if v is None else str(v) for v in values)

        parts = []
        if self.reasons:
            parts.append(f"reason in {names(self.reasons)}")
        if self.destinations:
            parts.append(f"DestQName in {names(self.destinations)}")
        if self.qmgrs:
            parts.append(f"DestQMgrName in {names(self.qmgrs)}")
        if self.applications:
            parts.append(f"PutApplName in {names(self.applications)}")
        if self.dlq_put_from is not None:
            parts.append(f"put on the DLQ from {self.dlq_put_from:%Y-%m-%d %H:%M:%S} UTC")
        if self.dlq_put_to is not None:
            parts.append(f"put on the DLQ before {self.dlq_put_to:%Y-%m-%d %H:%M:%S} UTC")
        if self.finding == NO_FINDING:
            parts.append("messages in no finding")
        elif self.finding is not None:
            parts.append(f"messages of finding {self.finding}")
        if self.dispositions:
            parts.append(f"disposition in {names(self.dispositions)}")
        if self.left_reasons:
            parts.append(f"left_reason in {names(self.left_reasons)}")
        return "; ".join(parts) or "none"


@dataclass(frozen=True)
class Choice:
    """One value of a facet: ``value`` (what a filter takes), ``label``, ``messages``."""

    value: object
    label: str
    messages: int


@dataclass
class Choices:
    """The top values of each facet over the whole capture.

    Attributes
    ----------
    facets : dict
        Facet name (:data:`FACETS`) -> list of :class:`Choice`, most messages first.
    distinct : dict
        Facet name -> how many distinct values it has (the list holds at most ``top``).
    messages : int
        Messages in the capture.
    dlq_put_range : (str, str) or (None, None)
        Oldest and newest ``dlh_put_ts``, as UTC text.
    """

    facets: dict
    distinct: dict
    messages: int
    dlq_put_range: tuple


@dataclass
class Page:
    """One page of the filtered, sorted table.

    Attributes
    ----------
    number : int
        0-based.
    size : int
        The page size asked for (``rows`` holds at most that many).
    rows : list of dict
        :data:`PAGE_COLUMNS` (plus the fate with a replay), display values.
    has_next : bool
        Whether a row follows this page.
    method : str
        ``keyset`` (rows after the previous page's last key) or ``offset``.
    keys : list of tuple
        ``(sort key, source, message_number)`` of each row.
    """

    number: int
    size: int
    rows: list
    has_next: bool
    method: str
    keys: list = field(default_factory=list)


@dataclass
class Selection:
    """The selected message: its bounded row and the views of it."""

    row: dict
    fate: dict | None = None
    trace: object = None

    @property
    def explanation(self):
        return explain(self.row)

    @property
    def fields(self):
        return header_fields(self.row)

    @property
    def payload(self) -> PayloadView:
        return payload_view(self.row)

    @property
    def key(self) -> tuple:
        return (self.row.get("source"), self.row.get("message_number"))

    def to_html(self) -> str:
        parts = ["<h4>Selected message</h4>", self.explanation._repr_html_()]
        if self.fate is not None:
            parts.append("<h4>Rules-table fate</h4>")
            parts.append(self.trace._repr_html_() if self.trace is not None else
                         table(("disposition", "left_reason", "rule", "action", "target"),
                               [(self.fate.get("disposition"), self.fate.get("left_reason"),
                                 self.fate.get("rule_index"), self.fate.get("action"),
                                 self.fate.get("target_queue"))]))
        parts.append("<h4>Headers, field by field</h4>")
        parts.append(fields_html(self.fields))
        parts.append("<h4>Payload</h4>")
        parts.append(self.payload._repr_html_())
        return "".join(parts)

    def to_text(self) -> str:
        out = [self.explanation.to_text()]
        if self.trace is not None:
            out.append(self.trace.to_text())
        out.append(fields_text(self.fields) + "\n")
        out.append(self.payload.to_text())
        return printable("\n".join(out))


class ExplorerModel:
    """The explorer's state and its Spark queries, without any widget.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (:func:`dlqlens.spark.load_capture`); columns it lacks are
        shown as null.
    findings : Findings, optional
        The ``(findings, links)`` of :func:`dlqlens.detect.run_detectors`
        over ``df``: enables the ``finding`` filter (a finding's messages,
        or those in no finding).
    replayed : pyspark.sql.DataFrame, optional
        :func:`dlqlens.rules.replay.replay` over ``df``: enables the
        ``dispositions`` / ``left_reasons`` filters and the fate columns.
    table : RulesTable, optional
        The table replayed: enables the rule trace of the selected message.
    world : World or str, optional
        The replay's world (names the reasons of failed attempts the replay
        does not record; see :func:`~dlqlens.widgets.trace.rule_trace`).
    page_size : int
    sort : str
        A key of :data:`SORTS`.
    ascending : bool
        Nulls come first ascending, last descending.
    cache : bool
        Persist the narrow index, the numbered findings and their links
        (``MEMORY_AND_DISK``); :meth:`close` releases them.
    top : int
        Values listed per facet by :meth:`choices`.
    findings_top : int
        Findings listed by :meth:`findings`.
    progress : callable, optional
        ``progress(description)`` returns a context manager wrapped around
        every Spark query (:class:`~dlqlens.widgets.progress.SparkProgress`).

    Attributes
    ----------
    fetches : list of (str, int)
        Every fetch to the driver: what, and how many rows came.
    """

    def __init__(self, df, *, findings=None, replayed=None, table=None, world=None,
                 page_size: int = 25, sort: str = "dlq_put", ascending: bool = True,
                 cache: bool = True, top: int = 20, findings_top: int = 100,
                 progress: Callable | None = None):
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.df = df
        self.table = table
        self.world = world
        self.page_size = int(page_size)
        self.top = int(top)
        self.findings_top = int(findings_top)
        self.progress = progress or no_progress
        self.fetches: list[tuple[str, int]] = []
        self._zone = df.sparkSession.conf.get("spark.sql.session.timeZone")
        self._cached = Caches()  # what close() unpersists
        self.has_replay = replayed is not None
        self._index = self._build_index(df, replayed)
        self._findings = self._links = None
        if findings is not None:
            from dlqlens.detect.findings import Findings

            if not isinstance(findings, Findings):
                raise TypeError("findings: expected the Findings of "
                                "dlqlens.detect.run_detectors (findings, links), not "
                                f"{type(findings).__name__}")
            self._findings = self._number_findings(findings.findings)
            self._links = findings.links.select("finding_id", "source", "message_number")
        if cache:
            from pyspark import StorageLevel

            self._index = self._index.persist(StorageLevel.MEMORY_AND_DISK)
            self._cached.append(self._index)
            if self._findings is not None:
                self._findings = self._findings.persist(StorageLevel.MEMORY_AND_DISK)
                self._links = self._links.persist(StorageLevel.MEMORY_AND_DISK)
                self._cached += [self._findings, self._links]
        self._filters = Filters()
        self._sort = "dlq_put"
        self._ascending = True
        self.set_sort(sort, ascending)
        self._count: int | None = None
        self._bounds: dict[int, tuple] = {}
        self._choices: Choices | None = None
        self._findings_list: list | None = None
        self.current: Page | None = None
        self.selection: Selection | None = None

    # ------------------------------------------------------------------
    # Spark plumbing
    # ------------------------------------------------------------------
    @staticmethod
    def _build_index(df, replayed):
        from pyspark.sql import functions as F

        cols = set(df.columns)

        def field(struct, name, dtype):
            if struct in cols:
                return F.col(f"{struct}.{name}").alias(name)
            return F.lit(None).cast(dtype).alias(name)

        def plain(name, dtype):
            return F.col(name) if name in cols else F.lit(None).cast(dtype).alias(name)

        index = df.select(
            F.col("source"), F.col("message_number"),
            plain("dlh_put_ts", "timestamp"), plain("put_ts", "timestamp"),
            field("dlh", "Reason", "int"), plain("reason_name", "string"),
            field("dlh", "DestQName", "string"), field("dlh", "DestQMgrName", "string"),
            field("md", "PutApplName", "string"),
            plain("payload_length", "long"), plain("decode_status", "string"))
        if replayed is not None:
            fate = replayed.select("source", "message_number",
                                   *[c for c in FATE_COLUMNS if c in replayed.columns])
            index = index.join(fate, ["source", "message_number"], "left")
        return index

    @staticmethod
    def _number_findings(findings):
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        order = Window.orderBy(F.asc_nulls_last("severity_rank"), F.asc_nulls_last("window_start"),
                               "kind", "finding_id")
        return findings.withColumn("finding", F.row_number().over(order))

    def _fetch(self, what: str, frame, limit: int) -> list:
        """The one way rows reach the driver: at most ``limit`` of them."""
        with self.progress(what):
            rows = frame.limit(int(limit)).collect()
        self.fetches.append((what, len(rows)))
        return rows

    def _ts_text(self, column: str):
        from pyspark.sql import functions as F

        return F.date_format(F.to_utc_timestamp(F.col(column), self._zone), _TS_FORMAT)

    def close(self) -> None:
        """Release what the model persisted (the index, the numbered findings, the links)."""
        self._cached.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ------------------------------------------------------------------
    # filters and sort
    # ------------------------------------------------------------------
    @property
    def filters(self) -> Filters:
        return self._filters

    @filters.setter
    def filters(self, value: Filters) -> None:
        if not isinstance(value, Filters):
            raise TypeError("filters must be a Filters")
        if value.needs_replay and not self.has_replay:
            raise ValueError("the disposition and left_reason filters need a replay (replayed=...)")
        if value.finding is not None and self._findings is None:
            raise ValueError("the finding filter needs findings (findings=run_detectors(df))")
        if value != self._filters:
            self._filters = value
            self._reset_pages(count=True)

    def set_filters(self, **changes) -> Filters:
        """Change some filters (``set_filters(reasons=[2053])``); returns the new ones."""
        self.filters = replace(self._filters, **changes)
        return self._filters

    def clear_filters(self) -> None:
        self.filters = Filters()

    @property
    def sort(self) -> tuple[str, bool]:
        return self._sort, self._ascending

    def set_sort(self, sort: str, ascending: bool = True) -> None:
        if sort not in SORTS:
            raise ValueError(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
        if (sort, bool(ascending)) != (self._sort, self._ascending):
            self._sort, self._ascending = sort, bool(ascending)
            self._reset_pages(count=False)

    def _reset_pages(self, *, count: bool) -> None:
        self._bounds = {}
        self.current = None
        if count:
            self._count = None

    def filtered(self):
        """The index with the filters applied (lazy; nothing runs)."""
        from pyspark.sql import functions as F

        frame = self._index
        for _label, pred in self._filters.predicates():
            frame = frame.where(pred)
        if self._filters.finding is not None:
            if self._filters.finding == NO_FINDING:
                frame = frame.join(self._links.select("source", "message_number"),
                                   ["source", "message_number"], "left_anti")
            else:
                chosen = self._findings.where(F.col("finding") == F.lit(self._filters.finding))
                refs = self._links.join(F.broadcast(chosen.select("finding_id")), "finding_id",
                                        "left_semi").select("source", "message_number")
                frame = frame.join(refs, ["source", "message_number"], "left_semi")
        return frame

    def count(self) -> int:
        """Messages that pass the filters (one Spark job, cached per filters)."""
        if self._count is None:
            with self.progress("counting"):
                self._count = int(self.filtered().count())
            self.fetches.append(("count", 1))
        return self._count

    # ------------------------------------------------------------------
    # pages
    # ------------------------------------------------------------------
    def _key(self):
        from pyspark.sql import functions as F

        column = SORTS[self._sort][1]
        if column is None:
            return None
        if column in ("dlh_put_ts", "put_ts"):
            return F.unix_micros(F.col(column))  # exact in Python, whatever the time zone
        return F.col(column)

    def _order(self, key) -> list:
        from pyspark.sql import functions as F

        order = []
        if key is not None:
            order.append(key.asc_nulls_first() if self._ascending else key.desc_nulls_last())
        return order + [F.col("source").asc(), F.col("message_number").asc()]

    def _after(self, key, last: tuple):
        """Rows that come after ``last`` = (key, source, message_number) in the order."""
        from pyspark.sql import functions as F

        value, source, number = last
        tail = (F.col("source") > F.lit(source)) | (
            (F.col("source") == F.lit(source)) & (F.col("message_number") > F.lit(number)))
        if key is None:
            return tail
        if self._ascending:  # nulls first
            if value is None:
                greater, equal = key.isNotNull(), key.isNull()
            else:
                greater, equal = key > F.lit(value), key == F.lit(value)
        else:  # descending, nulls last
            if value is None:
                greater, equal = F.lit(False), key.isNull()
            else:
                greater, equal = (key < F.lit(value)) | key.isNull(), key == F.lit(value)
        no = F.lit(False)
        return F.coalesce(greater, no) | (F.coalesce(equal, no) & tail)

    def page(self, number: int = 0) -> Page:
        """Page ``number`` (0-based) of the filtered table, sorted.

        At most ``page_size + 1`` rows reach the driver (the extra one says
        whether a next page exists). The page after one already fetched is
        a keyset query; any other is ``orderBy(...).offset(...)``.
        """
        from pyspark.sql import functions as F

        number = max(0, int(number))
        key = self._key()
        frame = self.filtered()
        if number > 0 and (number - 1) in self._bounds:
            frame, method = frame.where(self._after(key, self._bounds[number - 1])), "keyset"
            frame = frame.orderBy(*self._order(key))
        else:
            method = "offset"
            frame = frame.orderBy(*self._order(key))
            if number:
                frame = frame.offset(number * self.page_size)
        cols = [F.col("source"), F.col("message_number"),
                self._ts_text("dlh_put_ts").alias("dlq_put"),
                *[F.col(c) for c in PAGE_COLUMNS[3:]]]
        if self.has_replay:
            cols += [F.col(c) for c in _FATE_PAGE]
        cols.append((key if key is not None else F.lit(None)).alias("_key"))
        rows = self._fetch(f"page {number + 1}", frame.select(*cols), self.page_size + 1)
        has_next = len(rows) > self.page_size
        rows = rows[:self.page_size]
        keys = [(r["_key"], r["source"], r["message_number"]) for r in rows]
        if keys:
            self._bounds[number] = keys[-1]
        page = Page(number, self.page_size,
                    [{k: v for k, v in r.asDict().items() if k != "_key"} for r in rows],
                    has_next, method, keys)
        self.current = page
        return page

    def next_page(self) -> Page:
        if self.current is None:
            return self.page(0)
        return self.page(self.current.number + (1 if self.current.has_next else 0))

    def previous_page(self) -> Page:
        if self.current is None:
            return self.page(0)
        return self.page(max(0, self.current.number - 1))

    def page_count(self) -> int:
        """Pages of the filtered table (counts it)."""
        n = self.count()
        return max(1, -(-n // self.page_size))

    def pages(self) -> Iterable[Page]:
        """Every page in order, each fetched as the next (keyset) page."""
        page = self.page(0)
        yield page
        while page.has_next:
            page = self.page(page.number + 1)
            yield page

    # ------------------------------------------------------------------
    # the selected message
    # ------------------------------------------------------------------
    def _detail_columns(self) -> list:
        from pyspark.sql import functions as F

        cols = set(self.df.columns)
        out = []
        for name in ("source", "message_number", "capture_format", "source_offset", "source_line",
                     "layout", "md", "dlh", "xqh", "tm", "headers", "payload_length",
                     "payload_format", "payload_encoding", "payload_ccsid", "data_length",
                     "data_truncated", "reason_name", "feedback_name", "decode_status"):
            if name in cols:
                out.append(F.col(name))
        if "rfh2" in cols:
            folders = F.slice(F.transform(F.col("rfh2.NameValueData"),
                                          lambda x: F.substring(x, 1, TEXT_BYTES)), 1, LIST_LIMIT)
            out.append(F.col("rfh2").withField("NameValueData", folders).alias("rfh2"))
        if "header_chain" in cols:
            out.append(F.slice("header_chain", 1, LIST_LIMIT).alias("header_chain"))
        if "decode_issues" in cols:
            out.append(F.slice("decode_issues", 1, LIST_LIMIT).alias("decode_issues"))
        if "payload" in cols:
            out.append(F.substring("payload", 1, TEXT_BYTES).alias("payload"))
            out.append(F.length("payload").cast("long").alias("payload_kept"))
        if "payload_text" in cols:
            out.append(F.substring("payload_text", 1, TEXT_BYTES).alias("payload_text"))
        for name in ("put_ts", "dlh_put_ts"):
            if name in cols:
                out.append(self._ts_text(name).alias(name))
        return out

    def select(self, source=None, message_number: int | None = None) -> Selection | None:
        """Select a message: ``select(source, number)``, or ``select(i)`` for the
        ``i``-th row of the current page (default 0). Fetches that one row
        (payload cut to :data:`~dlqlens.widgets.fields.TEXT_BYTES` bytes in
        Spark) and its fate. Returns None when there is no such message."""
        from pyspark.sql import functions as F

        if message_number is None:
            page = self.current or self.page(0)
            i = 0 if source is None else int(source)
            if not 0 <= i < len(page.rows):
                self.selection = None
                return None
            source, message_number = page.rows[i]["source"], page.rows[i]["message_number"]
        where = (F.col("source") == F.lit(str(source))) & (
            F.col("message_number") == F.lit(int(message_number)))
        rows = self._fetch("message", self.df.where(where).select(*self._detail_columns()), 1)
        if not rows:
            self.selection = None
            return None
        row = rows[0].asDict(recursive=True)
        fate = trace = None
        if self.has_replay:
            fates = self._fetch("fate", self._index.where(where).select(
                "source", "message_number", *[c for c in FATE_COLUMNS if c in self._index.columns]), 1)
            if fates:
                fate = fates[0].asDict(recursive=True)
                if self.table is not None:
                    from dlqlens.widgets.trace import rule_trace

                    trace = rule_trace(fate, self.table, row, world=self.world)
        self.selection = Selection(row, fate, trace)
        return self.selection

    # ------------------------------------------------------------------
    # choices and findings
    # ------------------------------------------------------------------
    def choices(self) -> Choices:
        """The top :attr:`top` values of each facet over the whole capture (two
        Spark jobs, at most ``facets x top`` rows to the driver; cached)."""
        if self._choices is not None:
            return self._choices
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        facets = {k: v for k, v in FACETS.items() if self.has_replay or not v[2]}
        items = F.array(*[
            F.struct(F.lit(name).alias("facet"), F.col(column).cast("string").alias("value"),
                     (F.col(label) if label else F.lit(None).cast("string")).alias("label"))
            for name, (column, label, _r) in facets.items()])
        counted = (self._index.select(F.explode(items).alias("f")).select("f.*")
                   .groupBy("facet", "value").agg(F.count("*").alias("messages"),
                                                  F.max("label").alias("label")))
        by_facet = Window.partitionBy("facet")
        ranked = (counted
                  .withColumn("rank", F.row_number().over(
                      by_facet.orderBy(F.desc("messages"), F.asc_nulls_first("value"))))
                  .withColumn("distinct", F.count("*").over(by_facet))
                  .where(F.col("rank") <= self.top))
        rows = self._fetch("filter choices", ranked.orderBy("facet", "rank"),
                           len(facets) * self.top)
        totals = self._fetch("capture span", self._index.agg(
            F.count("*").alias("messages"),
            F.date_format(F.to_utc_timestamp(F.min("dlh_put_ts"), self._zone), _TS_FORMAT).alias("first"),
            F.date_format(F.to_utc_timestamp(F.max("dlh_put_ts"), self._zone), _TS_FORMAT).alias("last")),
            1)[0]
        out: dict[str, list] = {name: [] for name in facets}
        distinct: dict[str, int] = {name: 0 for name in facets}
        for r in rows:
            value = r["value"]
            if r["facet"] == "reasons" and value is not None:
                value = int(value)
            label = ("(null)" if r["value"] is None else
                     f"{r['value']} {r['label']}" if r["label"] else str(r["value"]))
            out[r["facet"]].append(Choice(value, label, int(r["messages"])))
            distinct[r["facet"]] = int(r["distinct"])
        self._choices = Choices(out, distinct, int(totals["messages"]),
                                (totals["first"], totals["last"]))
        return self._choices

    def findings(self) -> list[dict]:
        """The first :attr:`findings_top` findings, most severe first, without their
        messages: ``finding`` (the number the filter takes), ``finding_id``, ``kind``,
        ``severity``, ``queues``, ``window_start``/``window_end`` (UTC text),
        ``message_count``, ``statement``."""
        if self._findings is None:
            return []
        if self._findings_list is None:
            frame = self._findings.select(
                "finding", "finding_id", "kind", "severity", "queues",
                self._ts_text("window_start").alias("window_start"),
                self._ts_text("window_end").alias("window_end"),
                "message_count", "statement").orderBy("finding")
            self._findings_list = [r.asDict(recursive=True)
                                   for r in self._fetch("findings", frame, self.findings_top)]
        return self._findings_list

    # ------------------------------------------------------------------
    # static twin
    # ------------------------------------------------------------------
    def status(self) -> str:
        """One line: how many messages match, the sort, the page."""
        n = self.count()
        total = self.choices().messages
        label, _ = SORTS[self._sort]
        page = self.current
        where = (f"page {page.number + 1} of {self.page_count()}" if page is not None else "no page")
        return (f"{n} of {total} messages match (filters: {self._filters.describe()}); "
                f"sorted by {label} {'ascending' if self._ascending else 'descending'}; {where}")

    def page_rows(self) -> tuple[tuple, list]:
        """Headers and rows of the current page for a table."""
        page = self.current if self.current is not None else self.page(0)
        headers = ["#", "capture", "message", "put on the DLQ (UTC)", "reason", "DestQName",
                   "DestQMgrName", "PutApplName", "bytes", "status"]
        if self.has_replay:
            headers += ["fate", "rule"]
        rows = []
        start = page.number * page.size
        for i, r in enumerate(page.rows):
            reason = ("" if r["Reason"] is None else
                      f"{r['Reason']} {r['reason_name'] or ''}".strip())
            row = [start + i + 1, r["source"], r["message_number"], r["dlq_put"], reason,
                   r["DestQName"], r["DestQMgrName"], r["PutApplName"], r["payload_length"],
                   r["decode_status"]]
            if self.has_replay:
                fate = r.get("disposition") or ""
                if r.get("left_reason"):
                    fate += f"/{r['left_reason']}"
                row += [fate, r.get("rule_index")]
            rows.append(row)
        return headers, rows

    def _choices_html(self) -> str:
        ch = self.choices()
        items = []
        for name, values in ch.facets.items():
            if not values:
                continue
            shown = ", ".join(f"{c.label} ({c.messages})" for c in values[:8])
            more = ch.distinct[name] - min(len(values), 8)
            items.append(f"<li><b>{esc(name)}</b>: {esc(shown)}"
                         f"{esc(f' and {more} more') if more > 0 else ''}</li>")
        first, last = ch.dlq_put_range
        if first:
            items.append(f"<li><b>put on the DLQ</b>: {esc(first)} to {esc(last)} UTC</li>")
        return f"<ul>{''.join(items)}</ul>"

    def to_html(self) -> str:
        """The explorer as static HTML: status, filter choices, the page, the
        selected message (explanation, fate, headers, payload)."""
        headers, rows = self.page_rows()
        parts = ["<div class='dlqlens-explorer'><h3>DLQ explorer</h3>",
                 f"<p>{esc(self.status())}</p>", self._choices_html(),
                 table(headers, rows)]
        if self.selection is None and self.current is not None and self.current.rows:
            self.select(0)
        if self.selection is not None:
            parts.append(self.selection.to_html())
        parts.append("<p><i>Static view: in a notebook with ipywidgets the explorer is "
                     "interactive.</i></p></div>")
        return "".join(parts)

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_text(self) -> str:
        headers, rows = self.page_rows()
        out = ["DLQ explorer", self.status(), "", text_table(headers, rows)]
        if self.selection is not None:
            out += ["", self.selection.to_text()]
        return printable("\n".join(out)) + "\n"

    def __repr__(self) -> str:
        return (f"<ExplorerModel filters={self._filters.describe()!r} sort={self._sort!r} "
                f"page_size={self.page_size}>")


# ---------------------------------------------------------------------------
# the ipywidgets view
# ---------------------------------------------------------------------------

class Explorer:
    """The ipywidgets view of an :class:`ExplorerModel` (see :func:`explore`).

    Attributes
    ----------
    model : ExplorerModel
    widget : ipywidgets.VBox
        The whole view; ``status``, ``progress_bar``, the filter widgets
        (``reasons``, ``destinations``, ``destination_pattern``, ``qmgrs``,
        ``applications``, ``dlq_put_from``, ``dlq_put_to``, ``finding``,
        ``dispositions``, ``left_reasons``), ``apply``/``clear``, ``sort`` /
        ``order``, ``first``/``previous``/``next``, ``table``, ``pick`` and the
        detail tabs ``explanation``, ``headers``, ``payload``, ``trace`` are
        attributes.
    """

    def __init__(self, model: ExplorerModel):
        import ipywidgets as W

        from dlqlens.widgets.progress import SparkProgress

        self.model = model
        self.status = W.HTML()
        self.progress_bar = W.IntProgress(min=0, max=1, value=0, layout=W.Layout(width="160px"))
        try:
            sc = model.df.sparkSession.sparkContext
        except Exception:  # noqa: BLE001 - Spark Connect: no SparkContext, no status tracker
            sc = None

        def report(text, done, total):
            self.status.value = f"<i>{html.escape(text)}</i>"
            self.progress_bar.max = max(total, 1)
            self.progress_bar.value = min(done, self.progress_bar.max)

        model.progress = lambda what: SparkProgress(sc, report, what)
        ch = model.choices()

        def multi(name, description):
            return W.SelectMultiple(options=[(f"{c.label} ({c.messages})", c.value)
                                             for c in ch.facets.get(name, [])],
                                    description=description, rows=5,
                                    layout=W.Layout(width="auto"),
                                    style={"description_width": "initial"})

        self.reasons = multi("reasons", "reason")
        self.destinations = multi("destinations", "DestQName")
        self.destination_pattern = W.Text(placeholder="or a pattern: APP.*", description="",
                                          layout=W.Layout(width="160px"))
        self.qmgrs = multi("qmgrs", "DestQMgrName")
        self.applications = multi("applications", "PutApplName")
        first, last = ch.dlq_put_range
        self.dlq_put_from = W.Text(placeholder=first or "", description="DLQ put from",
                                   style={"description_width": "initial"})
        self.dlq_put_to = W.Text(placeholder=last or "", description="before",
                                 style={"description_width": "initial"})
        filters_row = [self.reasons, W.VBox([self.destinations, self.destination_pattern]),
                       self.qmgrs, self.applications]
        second_row = [self.dlq_put_from, self.dlq_put_to]
        self.finding = None
        if model._findings is not None:
            self.finding = W.Dropdown(
                options=[("(all messages)", None), ("(messages in no finding)", NO_FINDING)] + [
                    (f"{f['finding']}. [{f['severity']}] {f['kind']} "
                     f"{', '.join(f['queues'] or [])} ({f['message_count']})", f["finding"])
                    for f in model.findings()],
                description="finding", layout=W.Layout(width="auto"))
            second_row.append(self.finding)
        self.dispositions = self.left_reasons = None
        if model.has_replay:
            self.dispositions = multi("dispositions", "fate")
            self.left_reasons = multi("left_reasons", "left_reason")
            filters_row += [self.dispositions, self.left_reasons]
        self.apply = W.Button(description="Apply filters", button_style="primary")
        self.clear = W.Button(description="Clear")
        self.sort = W.Dropdown(options=[(label, name) for name, (label, _c) in SORTS.items()],
                               value=model.sort[0], description="sort by",
                               layout=W.Layout(width="auto"))
        self.order = W.ToggleButtons(options=[("ascending", True), ("descending", False)],
                                     value=model.sort[1])
        self.first = W.Button(description="⏮ first", layout=W.Layout(width="90px"))
        self.previous = W.Button(description="◀ previous", layout=W.Layout(width="100px"))
        self.next = W.Button(description="next ▶", layout=W.Layout(width="90px"))
        self.page_label = W.Label()
        self.table = W.HTML()
        self.pick = W.Select(options=[], rows=min(model.page_size, 12),
                             layout=W.Layout(width="100%"))
        self.explanation, self.headers, self.payload, self.trace = (W.HTML() for _ in range(4))
        self.tabs = W.Tab(children=[self.explanation, self.trace, self.headers, self.payload])
        for i, title in enumerate(("Explanation", "Rules table", "Headers", "Payload")):
            self.tabs.set_title(i, title)

        self.apply.on_click(lambda _b: self._apply())
        self.clear.on_click(lambda _b: self._clear())
        self.first.on_click(lambda _b: self._show_page(0))
        self.previous.on_click(lambda _b: self._turn(-1))
        self.next.on_click(lambda _b: self._turn(+1))
        self.sort.observe(lambda _c: self._resort(), names="value")
        self.order.observe(lambda _c: self._resort(), names="value")
        self.pick.observe(lambda _c: None if self._quiet else self._select(), names="value")
        self._quiet = False

        self.widget = W.VBox([
            W.HBox([W.HTML("<b>DLQ explorer</b>"), self.progress_bar, self.status]),
            W.HBox(filters_row), W.HBox(second_row + [self.apply, self.clear]),
            W.HBox([self.sort, self.order]),
            W.HBox([self.first, self.previous, self.page_label, self.next]),
            W.HBox([W.VBox([self.table, self.pick], layout=W.Layout(width="55%")),
                    W.VBox([self.tabs], layout=W.Layout(width="45%"))]),
        ])
        self.refresh()

    # -- actions -------------------------------------------------------------
    def _filters_from_widgets(self) -> Filters:
        destinations = tuple(self.destinations.value)
        pattern = self.destination_pattern.value.strip()
        if pattern:
            destinations += (pattern,)
        return Filters(
            reasons=self.reasons.value, destinations=destinations, qmgrs=self.qmgrs.value,
            applications=self.applications.value,
            dlq_put_from=self.dlq_put_from.value.strip() or None,
            dlq_put_to=self.dlq_put_to.value.strip() or None,
            finding=self.finding.value if self.finding is not None else None,
            dispositions=self.dispositions.value if self.dispositions is not None else (),
            left_reasons=self.left_reasons.value if self.left_reasons is not None else ())

    def _apply(self) -> None:
        try:
            self.model.filters = self._filters_from_widgets()
        except (ValueError, TypeError) as exc:
            self.status.value = f"<b>filter not applied</b>: {html.escape(str(exc))}"
            return
        self.refresh()

    def _clear(self) -> None:
        for w in (self.reasons, self.destinations, self.qmgrs, self.applications,
                  self.dispositions, self.left_reasons):
            if w is not None:
                w.value = ()
        for w in (self.destination_pattern, self.dlq_put_from, self.dlq_put_to):
            w.value = ""
        if self.finding is not None:
            self.finding.value = None
        self._apply()

    def _resort(self) -> None:
        self.model.set_sort(self.sort.value, self.order.value)
        self._show_page(0)

    def _turn(self, step: int) -> None:
        page = self.model.current
        if page is None:
            self._show_page(0)
        elif step > 0 and page.has_next:
            self._show_page(page.number + 1)
        elif step < 0 and page.number > 0:
            self._show_page(page.number - 1)

    def _show_page(self, number: int) -> None:
        page = self.model.page(number)
        headers, rows = self.model.page_rows()
        self.table.value = table(headers, rows)
        self.page_label.value = (f"page {page.number + 1} of {self.model.page_count()} "
                                 f"({self.model.count()} messages)")
        self.previous.disabled = page.number == 0
        self.next.disabled = not page.has_next
        options = [(f"{page.number * page.size + i + 1}. {r['source'].rsplit('/', 1)[-1]} "
                    f"#{r['message_number']} {r['reason_name'] or ''} {r['DestQName'] or ''}",
                    i) for i, r in enumerate(page.rows)]
        self._quiet = True  # the options and value set here must not select twice
        try:
            self.pick.options = [(printable(label), i) for label, i in options]
            self.pick.value = 0 if options else None
        finally:
            self._quiet = False
        self._select()

    def _select(self) -> None:
        i = self.pick.value
        sel = self.model.select(i) if i is not None else None
        if sel is None:
            for w in (self.explanation, self.trace, self.headers, self.payload):
                w.value = "<p>No message.</p>"
            return
        self.explanation.value = sel.explanation._repr_html_()
        self.headers.value = fields_html(sel.fields)
        self.payload.value = sel.payload._repr_html_()
        if sel.trace is not None:
            self.trace.value = sel.trace._repr_html_()
        elif sel.fate is not None:
            self.trace.value = table(("disposition", "left_reason", "rule", "action", "target"),
                                     [(sel.fate.get("disposition"), sel.fate.get("left_reason"),
                                       sel.fate.get("rule_index"), sel.fate.get("action"),
                                       sel.fate.get("target_queue"))])
        else:
            self.trace.value = "<p>No replay given (explore(df, replayed=..., table=...)).</p>"

    def refresh(self) -> None:
        """Re-run the current filters from page 1."""
        self._show_page(0)

    # -- display -------------------------------------------------------------
    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/html"] = self.model.to_html()
        bundle["text/plain"] = printable(f"DLQ explorer: {self.model.status()}")
        return bundle

    def to_html(self) -> str:
        return self.model.to_html()

    def close(self) -> None:
        """Release the model's persisted index (:meth:`ExplorerModel.close`)."""
        self.model.close()


def explore(df, *, findings=None, replayed=None, table=None, world=None, page_size: int = 25,
            sort: str = "dlq_put", cache: bool = True) -> Explorer:
    """A DLQ explorer over a capture DataFrame, for a notebook.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (:func:`dlqlens.spark.load_capture`), any size.
    findings : Findings, optional
        :func:`dlqlens.detect.run_detectors` over ``df``: filter by finding
        (its messages, or those in no finding).
    replayed : pyspark.sql.DataFrame, optional
        :func:`dlqlens.rules.replay.replay` over ``df``: filter by fate.
    table : RulesTable, optional
        The replayed table: the selected message's rule trace.
    world : World or str, optional
        The replay's world (see :func:`~dlqlens.widgets.trace.rule_trace`).
    page_size : int
    sort : str
        A key of :data:`SORTS`.
    cache : bool
        Persist the explorer's narrow index (see :class:`ExplorerModel`).

    Returns
    -------
    Explorer
        Displays as the widget, with the static HTML twin as ``text/html``;
        ``.model`` is the :class:`ExplorerModel`; ``.close()`` releases the
        persisted index.
    """
    model = ExplorerModel(df, findings=findings, replayed=replayed, table=table, world=world,
                          page_size=page_size, sort=sort, cache=cache)
    return Explorer(model)


__all__ = ["NO_FINDING", "SORTS", "FACETS", "Filters", "Choice", "Choices", "Page", "Selection",
           "ExplorerModel", "Explorer", "explore"]
