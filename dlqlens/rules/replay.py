"""Replay a runmqdlq rules table over a capture, as a Spark transformation.

What the DLQ handler would do with every captured message, without a queue
manager: :func:`replay` matches the rules in Spark SQL (one boolean column
per distinct pattern, :mod:`dlqlens.rules.compile`) and decides each
message's fate with :func:`dlqlens.rules.handler.fate_of` (the decision the
simulator's DlqHandler also makes) once per distinct input: in a
vectorised Arrow UDF (:func:`process_batch`), or on the driver for a small
capture (looked up in Spark, no Python worker). :func:`rule_stats`,
:func:`summarize` and :func:`match_counts` count the result per rule and per
fate. The processing model (rule order, RETRY, IGNORE, targets, time) and
the output contract (:data:`OUTPUT_COLUMNS`, also ``rules replay --jsonl``)
are in ``docs/rules.md``, section "Replay model".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from dlqlens.errors import RulesError
from dlqlens.rules.handler import DISPOSITIONS, LEFT_REASONS, Fate, Message, fate_of, usable_rules
from dlqlens.rules.model import RulesTable
from dlqlens.rules.world import World
from dlqlens.spark.driver import local_frame, rows_at_hand
from dlqlens.spark.session import small_capture

__all__ = [
    "RuleAction",
    "ReplayPlan",
    "process_message",
    "replay",
    "INPUT_COLUMNS",
    "process_batch",
    "rule_stats",
    "fate_counts",
    "summarize",
    "ReplaySummary",
    "match_counts",
    "jsonl_column",
    "where_fate",
    "OUTPUT_COLUMNS",
    "DISPOSITIONS",
    "LEFT_REASONS",
]

#: The capture columns a replay, a diff and the unreached-rule lint read; a
#: capture loaded with only these (``load_capture(..., columns=INPUT_COLUMNS)``)
#: is decoded without payloads, raw bytes and the other headers.
INPUT_COLUMNS = ("source", "message_number", "md", "dlh", "decode_issues")

#: The columns of a replay, in contract order (``matched`` is extra, DataFrame only).
OUTPUT_COLUMNS = (
    "source", "message_number", "tried", "rule_index", "action", "target_queue",
    "target_qmgr", "header_kept", "disposition", "left_reason", "seconds_to_disposition",
)


# ---------------------------------------------------------------------------
# the plan of a table, and one message
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class RuleAction:
    """The action part of a rule, what processing needs (picklable, small).

    Attributes
    ----------
    index, line : int
        Rule index (from 1) and line in the table.
    action : str
        ``DISCARD``, ``IGNORE``, ``RETRY`` or ``FWD``.
    retry : int
        RETRY: attempts before the next matching rule is tried (>= 1).
    fwdq, fwdqm : str or None
        FWDQ and FWDQM as written (``&DESTQ`` ... kept for substitution).
    header : str
        HEADER, ``YES`` or ``NO``.
    """

    index: int
    line: int
    action: str
    retry: int = 1
    fwdq: str | None = None
    fwdqm: str = " "
    header: str = "YES"


@dataclass(frozen=True)
class ReplayPlan:
    """What the replay needs of a table: the usable rules and RETRYINT.

    Attributes
    ----------
    rules : tuple of RuleAction
        Table order. Rules with validation errors are not here.
    retryint : int
        RETRYINT of the control data, seconds (default 60).
    patterns : tuple of model.Rule
        The same rules with their patterns (for compiling predicates).
    """

    rules: tuple
    retryint: int
    patterns: tuple = ()

    @classmethod
    def from_table(cls, table: RulesTable, *, allow_errors: bool = False) -> ReplayPlan:
        """Plan a table.

        Raises
        ------
        dlqlens.errors.RulesError
            When the table has errors (the handler would refuse to start),
            unless ``allow_errors``; then rules with errors are left out.
        """
        if table.errors and not allow_errors:
            first = table.errors[0]
            raise RulesError(
                f"{table.source or 'rules table'}: {len(table.errors)} error(s), the DLQ handler "
                f"would not start; first: {first.format(table.source or '<rules>')}")
        usable = usable_rules(table)
        actions = tuple(
            RuleAction(r.index, r.line, r.action, r.retry, r.fwdq, r.fwdqm, r.header)
            for r in usable
        )
        return cls(actions, int(table.control.retryint), tuple(usable))

    def rule(self, index: int) -> RuleAction:
        """The :class:`RuleAction` with rule index ``index`` (KeyError if none)."""
        return self._by_index[index]

    @cached_property
    def _by_index(self) -> dict:
        return {r.index: r for r in self.rules}

    @property
    def uses_reply_to(self) -> bool:
        """True when some FWD rule substitutes ``&REPLYQ`` or ``&REPLYQM``."""
        return any(
            r.action == "FWD" and (r.fwdq == "&REPLYQ" or r.fwdqm == "&REPLYQM")
            for r in self.rules
        )


def process_message(matched: Sequence[int] | None, msg: Message, plan: ReplayPlan,
                    world: World) -> Fate:
    """The fate of one message: :func:`dlqlens.rules.handler.fate_of` on its matching rules.

    Parameters
    ----------
    matched : sequence of int or None
        Indexes of the rules whose patterns match the message, table order
        (the ``matched`` column); ``None`` without an MQDLH.
    msg : Message
    plan : ReplayPlan
    world : World

    Returns
    -------
    Fate

    Raises
    ------
    KeyError
        When ``matched`` names a rule that is not in ``plan``.

    Examples
    --------
    >>> from dlqlens.rules import parse
    >>> plan = ReplayPlan.from_table(parse(
    ...     "REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(5)\\nACTION(FWD) FWDQ(DEADQ)\\n"))
    >>> m = Message(reason=2053, dest_q="APP.IN", dest_qmgr="QM1")
    >>> f = process_message([1, 2], m, plan, World.pessimistic())
    >>> f.disposition, f.rule_index, f.target_queue, f.seconds_to_disposition
    ('forwarded', 2, 'DEADQ', 300)
    """
    rules = None if matched is None else tuple(plan.rule(i) for i in matched)
    return fate_of(rules, msg, world, plan.retryint)


# ---------------------------------------------------------------------------
# Spark
# ---------------------------------------------------------------------------

#: MQ fields processing reads (besides the ones the patterns test).
_PROCESS_FIELDS = ("dlh.Reason", "dlh.DestQName", "dlh.DestQMgrName", "md.ReplyToQ",
                   "md.ReplyToQMgr")


def _flat(field: str) -> str:
    return "_" + field.replace(".", "_")


def complete_dlh_column(capture):
    """Column: the message begins with a complete MQDLH, the only kind the DLQ handler
    processes (IBM "How the rules table is processed"; a dead letter whose MQDLH the
    capture cut short, a ``header_truncated`` issue on ``MQDLH``, stays as ``no_dlh``).
    Without a ``decode_issues`` column, a decoded ``dlh`` counts as complete."""
    from pyspark.sql import functions as F

    present = F.col("dlh").isNotNull()
    if "decode_issues" not in capture.columns:
        return present
    cut = F.coalesce(F.exists("decode_issues", lambda i: (i["code"] == "header_truncated")
                              & i["field"].startswith("MQDLH")), F.lit(False))
    return present & ~cut


def _project(capture, plans: Sequence[ReplayPlan]):
    """The columns a replay reads, each computed once per message.

    ``source``, ``message_number``, ``_has_dlh``, every MQ field the plans
    read as a flat column (string fields right-trimmed of blanks), and one
    boolean column per distinct pattern of the plans (``_p0``, ``_p1`` ...;
    :func:`~dlqlens.rules.compile.distinct_patterns`), so that a pattern
    shared by many rules (``REASON(MQRC_Q_FULL)``) is evaluated once and
    each rule is a conjunction of booleans.

    Returns
    -------
    (DataFrame, dict)
        The projection and the map pattern key -> predicate column name.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from dlqlens.rules.compile import distinct_patterns, pattern_key, pattern_predicate
    from dlqlens.spark.source import narrowed

    fields = set(_PROCESS_FIELDS)
    rules = [rule for plan in plans for rule in plan.patterns]
    patterns = distinct_patterns(rules)
    fields.update(p.field for p in patterns)
    # a capture the executors read as load_capture made it: only these columns and
    # fields decoded
    structs: dict[str, list[str]] = {}
    for f in sorted(fields):
        structs.setdefault(f.split(".", 1)[0], []).append(f.split(".", 1)[1])
    capture = narrowed(capture, [c for c in capture.columns if c in INPUT_COLUMNS],
                       {k: v for k, v in structs.items() if k in capture.columns})
    cols = [F.col("source"), F.col("message_number"), complete_dlh_column(capture).alias("_has_dlh")]
    for f in sorted(fields):
        parent, child = f.split(".", 1)
        dtype = capture.schema[parent].dataType[child].dataType
        c = F.col(f)
        cols.append((F.rtrim(c) if isinstance(dtype, T.StringType) else c).alias(_flat(f)))
    names = {pattern_key(p): f"_p{i}" for i, p in enumerate(patterns)}
    flat = capture.select(*cols)
    preds = [pattern_predicate(p, _col_for, trimmed=True).alias(names[pattern_key(p)])
             for p in patterns]
    return flat.select("*", *preds), names


def _col_for(field: str):
    from pyspark.sql import functions as F

    return F.col(_flat(field))


def _matched_column(plan: ReplayPlan, names: dict):
    from pyspark.sql import functions as F

    from dlqlens.rules.compile import matched_rules_column, pattern_key

    return F.when(F.col("_has_dlh"), matched_rules_column(
        plan.patterns, pattern_column=lambda p: F.col(names[pattern_key(p)])))


_FATE_FIELDS = ("tried", "rule_index", "action", "target_queue", "target_qmgr", "header_kept",
                "disposition", "left_reason", "seconds_to_disposition")


def _fate_arrow_type():
    import pyarrow as pa

    attempt = pa.struct([("rule_index", pa.int32()), ("attempts", pa.int32()),
                         ("outcome", pa.string()), ("reason", pa.int32())])
    return pa.struct([
        ("tried", pa.list_(attempt)), ("rule_index", pa.int32()), ("action", pa.string()),
        ("target_queue", pa.string()), ("target_qmgr", pa.string()),
        ("header_kept", pa.bool_()), ("disposition", pa.string()),
        ("left_reason", pa.string()), ("seconds_to_disposition", pa.int64()),
    ])


def _fate_spark_type():
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(_fate_arrow_type())


def _input_columns(plan: ReplayPlan, matched) -> list:
    """The inputs of :func:`process_message` as Spark columns, in :func:`process_batch` order.

    ``matched`` travels as text (``"1,4,9"``; ``""`` when no rule matches,
    null without an MQDLH); ReplyToQ/ReplyToQMgr only when some rule
    substitutes them (otherwise null, so they do not split the batch into
    more distinct inputs than needed).
    """
    from pyspark.sql import functions as F

    none = F.lit(None).cast("string")
    reply = plan.uses_reply_to
    return [
        F.array_join(matched, ","),
        F.col(_flat("dlh.Reason")),
        F.col(_flat("dlh.DestQName")),
        F.col(_flat("dlh.DestQMgrName")),
        F.col(_flat("md.ReplyToQ")) if reply else none,
        F.col(_flat("md.ReplyToQMgr")) if reply else none,
    ]


def _text(value) -> str:
    return "" if value is None else str(value).rstrip(" ")


def _inputs(matched: str | None, reason, dq, dqm, rq, rqm) -> tuple[list[int] | None, Message]:
    """:func:`process_message`'s arguments from one row of :func:`_input_columns`."""
    if matched is None:
        return None, Message(has_dlh=False)
    indexes = [int(x) for x in matched.split(",") if x]
    return indexes, Message(True, None if reason is None else int(reason), _text(dq), _text(dqm),
                            _text(rq), _text(rqm))


class FateCache:
    """The fates one Python worker has decided, over all the batches of its tasks.

    Each input column's values get ids of their own (a value is looked up
    once per batch, not once per message); a distinct row of ids is decided
    once (:func:`process_message`) and kept as a row of one Arrow array, so
    that a batch's fates are a ``take`` from it. At most ``limit`` fates are
    kept: past it, the cache starts again (memory stays bounded whatever the
    number of distinct inputs).
    """

    def __init__(self, limit: int = 200_000):
        self.limit = limit
        self.clear()

    def clear(self) -> None:
        import pyarrow as pa

        self.value_ids: list[dict] = []  # per input column: value -> id
        self.values: list[list] = []  # per input column: id -> value
        self.fate_ids: dict[tuple, int] = {}  # row of value ids -> row of ``fates``
        self.fates = pa.array([], type=_fate_arrow_type())

    def __len__(self) -> int:
        return len(self.fate_ids)

    def ids(self, j: int, column):
        """The value ids of the rows of input column ``j`` (an int64 numpy
        array); the values new to the cache are added to ``values[j]``."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        while len(self.value_ids) <= j:
            self.value_ids.append({})
            self.values.append([])
        known, values = self.value_ids[j], self.values[j]
        if pa.types.is_null(column.type):
            enc, batch_values = None, [None]
        else:
            enc = pc.dictionary_encode(column, null_encoding="encode")
            batch_values = enc.dictionary.to_pylist()
        ids = np.empty(len(batch_values), dtype=np.int64)
        for i, v in enumerate(batch_values):  # the batch's distinct values, not its rows
            at = known.get(v)
            if at is None:
                at = known[v] = len(values)
                values.append(v)
            ids[i] = at
        if enc is None:
            return np.full(len(column), ids[0], dtype=np.int64)
        return ids[enc.indices.to_numpy(zero_copy_only=False)]


def _row_keys(ids):
    """One int64 key per row of the (n, k) id matrix (rows equal iff keys equal),
    packing the columns' bits when they fit in 63, else ranking rows with
    ``numpy.unique``."""
    import numpy as np

    bits = [max(int(ids[:, j].max()), 1).bit_length() for j in range(ids.shape[1])]
    if sum(bits) <= 63:
        key = np.zeros(len(ids), dtype=np.int64)
        for j, b in enumerate(bits):
            key = (key << b) | ids[:, j]
        return key
    return np.unique(ids, axis=0, return_inverse=True)[1].reshape(-1)


def process_batch(plan: ReplayPlan, world: World, columns: Sequence,
                  cache: FateCache | None = None):
    """Fates of a batch of messages (the body of the vectorised UDF).

    No Python code runs per message: each input column's values are given
    ids (:class:`FateCache`), the rows of ids are made unique with numpy,
    :func:`process_message` runs once per distinct input (and, through
    ``cache``, once per distinct input over all the batches of a worker),
    and the fates are gathered with ``take``.

    Parameters
    ----------
    plan : ReplayPlan
    world : World
    columns : sequence of 6 pyarrow arrays, length n
        ``matched`` as text (``"1,4"``, ``""``, or null without an MQDLH),
        MQDLH ``Reason`` (int), ``DestQName``, ``DestQMgrName``, MQMD
        ``ReplyToQ``, ``ReplyToQMgr`` (strings, may be null).
    cache : FateCache, optional
        The fates decided so far, reused across batches.

    Returns
    -------
    pyarrow.StructArray
        n fates, fields in contract order (``tried`` ... ``seconds_to_disposition``).
    """
    import numpy as np
    import pyarrow as pa

    cache = FateCache() if cache is None else cache
    columns = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in columns]
    n = len(columns[0])
    if n == 0:
        return pa.array([], type=_fate_arrow_type())
    if len(cache) >= cache.limit:
        cache.clear()
    ids = np.stack([cache.ids(j, col) for j, col in enumerate(columns)], axis=1)
    _, first, inverse = np.unique(_row_keys(ids), return_index=True, return_inverse=True)
    values = cache.values
    rows = np.empty(len(first), dtype=np.int64)
    new = []
    for k, row in enumerate(ids[first].tolist()):
        key = tuple(row)
        at = cache.fate_ids.get(key)
        if at is None:
            at = cache.fate_ids[key] = len(cache.fates) + len(new)
            matched, msg = _inputs(*(values[j][v] for j, v in enumerate(row)))
            new.append(process_message(matched, msg, plan, world).to_dict())
        rows[k] = at
    if new:
        cache.fates = pa.concat_arrays([cache.fates, pa.array(new, type=_fate_arrow_type())])
    return cache.fates.take(pa.array(rows[inverse.reshape(-1)], type=pa.int64()))


def _fate_udf(plan: ReplayPlan, world: World):
    """A vectorised UDF (inputs -> fate struct): ``arrow_udf`` (Spark 4.1+),
    else a ``pandas_udf`` around the same :func:`process_batch`."""
    from pyspark.sql import functions as F

    cache = FateCache()
    spark_type = _fate_spark_type()
    # Explicit function types: this module's annotations are strings
    # (``from __future__ import annotations``), which Spark cannot inspect.
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*type hints.*", category=UserWarning)
        if hasattr(F, "arrow_udf"):
            from pyspark.sql.functions import ArrowUDFType

            def fate(*columns):
                return process_batch(plan, world, columns, cache)

            return F.arrow_udf(fate, spark_type, ArrowUDFType.SCALAR)

        from pyspark.sql.functions import PandasUDFType

        def fate_pd(*columns):  # pragma: no cover - Spark < 4.1
            import pyarrow as pa

            out = process_batch(plan, world, [pa.array(c, from_pandas=True) for c in columns],
                                cache)
            return pa.Table.from_struct_array(out).to_pandas()

        return F.pandas_udf(fate_pd, spark_type, PandasUDFType.SCALAR)


#: Distinct inputs up to which a small capture's fates are decided on the
#: driver (:func:`_fate_columns`); past it, in the executors' Python workers.
#: Their fates travel in the plan as one JSON text (a few hundred bytes each).
DRIVER_FATES = 2_000


def _small(capture, small: bool | None) -> bool:
    """Whether ``capture`` is small (:func:`_fate_columns`' ``small``): as the
    caller says; None: counted (:func:`~dlqlens.spark.session.small_capture`,
    one query) where reading the capture again decodes nothing
    (:func:`~dlqlens.spark.driver.rows_at_hand`), else False (a capture the
    executors decode: a count and the inputs' query would decode it twice
    more, and their Python workers decode it anyway). For :func:`replay` and
    :func:`dlqlens.rules.diff.diff`."""
    if small is not None:
        return small
    return rows_at_hand(capture) and small_capture(capture)


def _fate_columns(projected, sides, world: World, small: bool) -> list:
    """The fate struct column (:func:`_fate_spark_type`) of each ``(plan,
    matched)`` of ``sides`` over the rows of ``projected``.

    Every fate is decided by :func:`process_message`, once per distinct
    input (:func:`_input_columns`), either

    - on the driver, for a ``small`` capture of at most :data:`DRIVER_FATES`
      distinct inputs (of every side together): one Spark query brings the
      distinct inputs (as JSON texts, Spark's own ``to_json``) to the
      driver, and each row looks its fate up in a literal map keyed by the
      same text (:func:`dlqlens.spark.columns.literal_map`). No Python worker
      runs: its start is most of a small replay's time the first time in a
      session (``docs/performance.md``, nineteenth stop);
    - or in the executors, by the vectorised UDF (:func:`_fate_udf`,
      :func:`process_batch`): any capture, lazily.
    """
    import json

    from pyspark.sql import functions as F

    from dlqlens.spark.columns import literal_map

    if small:
        keys = [F.to_json(F.struct(*[c.alias(f"k{i}") for i, c in
                                     enumerate(_input_columns(plan, matched))]),
                          {"ignoreNullFields": "false"}) for plan, matched in sides]
        rows = (projected.select(*[k.alias(f"_key{i}") for i, k in enumerate(keys)]).distinct()
                .limit(DRIVER_FATES + 1).collect())
        # more rows than the limit: some inputs not brought, so none decided here
        if len(rows) <= DRIVER_FATES:
            distinct = [sorted({r[i] for r in rows}) for i in range(len(sides))]
            spark_type = _fate_spark_type().simpleString()
            out = []
            for (plan, _), texts, key in zip(sides, distinct, keys):
                fates = {}
                for text in texts:
                    given = json.loads(text)
                    matched, msg = _inputs(*(given[f"k{i}"] for i in range(len(given))))
                    fates[text] = process_message(matched, msg, plan, world).to_dict()
                out.append(literal_map(fates, "string", spark_type)[key])
            return out
    return [_fate_udf(plan, world)(*_input_columns(plan, matched)) for plan, matched in sides]


def replay(table: RulesTable | ReplayPlan, capture, world: World | str | None = "optimistic",
           *, allow_errors: bool = False, small: bool | None = None):
    """Replay a rules table over a capture DataFrame.

    A Spark transformation: no message's data comes to the driver. A small
    capture (``small``) has its fates decided there: one query here brings
    its distinct inputs (header fields, at most :data:`DRIVER_FATES`
    rows), each decided once,
    then the rows look their fate up in Spark (:func:`_fate_columns`);
    any other is lazy, its fates decided by a vectorised UDF in the
    executors' Python workers. The same :func:`process_message` either way,
    the same rows. The session's configuration is left as it is; for
    tables of more than about 100 rules, a session with
    ``spark.sql.codegen.hugeMethodLimit`` at 8000 matches several times
    faster (:func:`dlqlens.spark.session.get_spark` sets it).

    Parameters
    ----------
    table : RulesTable or ReplayPlan
        From :func:`dlqlens.rules.parse`.
    capture : pyspark.sql.DataFrame
        A capture (:func:`dlqlens.spark.load_capture`); needs ``source``,
        ``message_number``, ``md`` and ``dlh``.
    world : World or str, optional
        ``"optimistic"`` (default), ``"pessimistic"``, a world JSON file, or
        a :class:`~dlqlens.rules.world.World`.
    allow_errors : bool
        Replay a table with validation errors, leaving out the rules that
        have errors (the real handler would not start).
    small : bool, optional
        Whether the capture holds at most
        :data:`~dlqlens.spark.session.SMALL_CAPTURE_MESSAGES` messages, when
        the caller knows it (the report from its summary's count). None
        (the default): counted here
        (:func:`~dlqlens.spark.session.small_capture`, one query) when
        reading the capture again decodes nothing
        (:func:`~dlqlens.spark.driver.rows_at_hand`: cached, or decoded on
        the driver), else taken as False: the distinct inputs' query would
        decode the capture once more, and the executors' Python workers
        decode it anyway. False: nothing runs here.

    Returns
    -------
    pyspark.sql.DataFrame
        One row per capture row: :data:`OUTPUT_COLUMNS` then ``matched``
        (see the module docstring).

    Raises
    ------
    dlqlens.errors.RulesError
        When the table has errors and ``allow_errors`` is false.
    dlqlens.errors.UsageError
        When the world cannot be loaded.
    """
    from pyspark.sql import functions as F

    plan = table if isinstance(table, ReplayPlan) else ReplayPlan.from_table(
        table, allow_errors=allow_errors)
    world = World.load(world)
    projected, names = _project(capture, [plan])
    projected = projected.withColumn("matched", _matched_column(plan, names))
    fate, = _fate_columns(projected, [(plan, F.col("matched"))], world, _small(capture, small))
    return projected.select(
        "source", "message_number",
        fate.alias("_fate"), "matched",
    ).select("source", "message_number", *[F.col("_fate." + k).alias(k) for k in _FATE_FIELDS],
             "matched")


def where_fate(replayed, fates):
    """The replayed rows whose fate is one of ``fates``.

    Parameters
    ----------
    replayed : pyspark.sql.DataFrame
        From :func:`replay`.
    fates : iterable of str
        ``DISPOSITION`` or ``left:LEFT_REASON``: a value of
        :data:`DISPOSITIONS` (``retried``, ``forwarded``, ``discarded``,
        ``left``), ``left`` with one of :data:`LEFT_REASONS` (``ignore_rule``,
        ``rules_exhausted``, ``no_match``, ``no_dlh``). ``left`` alone is every
        message the handler would leave on the DLQ (the implicit
        ACTION(IGNORE) of ``rules_exhausted`` and ``no_match`` included).

    Returns
    -------
    pyspark.sql.DataFrame
        Those rows of ``replayed`` (a lazy transformation), e.g. for
        :func:`dlqlens.spark.export.select_messages`.

    Raises
    ------
    dlqlens.errors.UsageError
        For a fate that is not of that form.
    """
    from pyspark.sql import functions as F

    from dlqlens.errors import UsageError

    cond = None
    for fate in fates:
        disposition, _, why = str(fate).strip().partition(":")
        if disposition not in DISPOSITIONS or (why and (disposition != "left"
                                                        or why not in LEFT_REASONS)):
            raise UsageError(
                f"fate {fate!r}: expected one of {', '.join(DISPOSITIONS)}, or left:REASON "
                f"with REASON one of {', '.join(LEFT_REASONS)}")
        c = F.col("disposition") == disposition
        if why:
            c = c & (F.col("left_reason") == why)
        cond = c if cond is None else cond | c
    if cond is None:
        raise UsageError("fate: give at least one")
    return replayed.where(cond)


def jsonl_column(replayed):
    """One JSON text per message in the ``rules replay --jsonl`` contract.

    Keys in :data:`OUTPUT_COLUMNS` order, nulls written as ``null``.
    """
    from pyspark.sql import functions as F

    return F.to_json(F.struct(*[F.col(c) for c in OUTPUT_COLUMNS]),
                     {"ignoreNullFields": "false"})


# ---------------------------------------------------------------------------
# per-rule statistics
# ---------------------------------------------------------------------------

_RULE_COUNTS = ("matched", "first_match", "tried", "disposed", "ignored", "succeeded", "failed")


def _events(replayed):
    """``array<struct<rule_index:int, kind:string>>``: what happened to each rule."""
    from pyspark.sql import functions as F

    def ev(index_col, kind):
        return F.struct(index_col.cast("int").alias("rule_index"), F.lit(kind).alias("kind"))

    empty = F.array().cast("array<struct<rule_index:int,kind:string>>")
    matched = F.coalesce(F.col("matched"), F.array().cast("array<int>"))
    tried = F.coalesce(F.col("tried"), F.array())

    def outcome_events(outcome):
        # (a lambda of one argument: F.transform reads a second one as the index)
        return F.transform(F.filter(tried, lambda t: t["outcome"] == outcome),
                           lambda t: ev(t["rule_index"], outcome))

    return F.concat(
        F.transform(matched, lambda x: ev(x, "matched")),
        F.when(F.size(matched) > 0, F.array(ev(F.element_at(matched, 1), "first_match")))
        .otherwise(empty),
        F.transform(tried, lambda t: ev(t["rule_index"], "tried")),
        *[outcome_events(outcome) for outcome in ("ignored", "succeeded", "failed")],
        F.when(F.col("rule_index").isNotNull(), F.array(ev(F.col("rule_index"), "disposed")))
        .otherwise(empty),
    )


def rule_stats(replayed, table: RulesTable | ReplayPlan):
    """Per-rule counts of a replay, as a small DataFrame (one row per rule).

    Parameters
    ----------
    replayed : pyspark.sql.DataFrame
        The result of :func:`replay`.
    table : RulesTable or ReplayPlan
        The table replayed.

    Returns
    -------
    pyspark.sql.DataFrame
        ``rule_index`` (int), ``line`` (int), ``action`` (str), and the
        message counts (long): ``matched`` (the rule's patterns match),
        ``first_match`` (it is the first matching rule), ``tried`` (the
        handler applied it), ``disposed`` (it removed the message from the
        DLQ: retried, forwarded or discarded), ``ignored`` (its
        ACTION(IGNORE) left the message), ``succeeded`` and ``failed``
        (elements of ``tried`` for the rule with that outcome: its puts
        succeeded, or every attempt failed). One pass over ``replayed``.
    """
    from pyspark.sql import functions as F

    plan = table if isinstance(table, ReplayPlan) else ReplayPlan.from_table(
        table, allow_errors=True)
    spark = replayed.sparkSession
    counts = (
        replayed.select(F.explode(_events(replayed)).alias("e"))
        .groupBy(F.col("e.rule_index").alias("rule_index"))
        .agg(*[F.count_if(F.col("e.kind") == k).alias(k) for k in _RULE_COUNTS])
    )
    rules = local_frame(spark, [(r.index, r.line, r.action) for r in plan.rules],
                        "rule_index int, line int, action string")
    return (
        rules.join(counts, "rule_index", "left")
        .fillna(0, subset=list(_RULE_COUNTS))
        .orderBy("rule_index")
    )


def fate_counts(replayed):
    """Messages by ``disposition`` and ``left_reason`` (a small DataFrame)."""
    return replayed.groupBy("disposition", "left_reason").count().orderBy("disposition", "left_reason")


@dataclass(frozen=True)
class ReplaySummary:
    """Per-rule counts and counts by fate of one replay, on the driver.

    Attributes
    ----------
    rules : list of dict
        One per rule: ``rule_index``, ``line``, ``action``, ``matched``,
        ``first_match``, ``tried``, ``disposed``, ``ignored``, ``succeeded``,
        ``failed`` (as :func:`rule_stats`).
    fates : dict of (str, str or None) to int
        ``(disposition, left_reason)`` -> messages.
    messages : int
        Messages replayed.
    """

    rules: list
    fates: dict
    messages: int

    def to_text(self) -> str:
        """The per-rule table, then the counts by disposition and left_reason."""
        lines = [f"{'rule':>4} {'line':>5} {'action':<8} {'matched':>9} {'first':>9} "
                 f"{'tried':>9} {'disposed':>9} {'ignored':>9}"]
        for r in self.rules:
            lines.append(f"{r['rule_index']:>4} {r['line']:>5} {r['action']:<8} "
                         f"{r['matched']:>9} {r['first_match']:>9} {r['tried']:>9} "
                         f"{r['disposed']:>9} {r['ignored']:>9}")
        lines.append("")
        lines.append(f"{self.messages} message(s)")
        order = {d: i for i, d in enumerate(DISPOSITIONS)}
        lorder = {d: i for i, d in enumerate(LEFT_REASONS)}
        for (disp, why), n in sorted(self.fates.items(), key=lambda kv: (
                order.get(kv[0][0], 99), lorder.get(kv[0][1], -1))):
            label = disp if why is None else f"{disp}/{why}"
            lines.append(f"{n:>9}  {label}")
        return "\n".join(lines) + "\n"


def summarize(replayed, table: RulesTable | ReplayPlan) -> ReplaySummary:
    """Per-rule counts and counts by fate, brought to the driver in one job.

    The same numbers as :func:`rule_stats` and :func:`fate_counts`, from a
    single aggregation over ``replayed`` (so the capture is read once).
    """
    from pyspark.sql import functions as F

    plan = table if isinstance(table, ReplayPlan) else ReplayPlan.from_table(
        table, allow_errors=True)
    fate_event = F.array(F.struct(
        F.lit(-1).alias("rule_index"),
        F.concat(F.lit("fate:"), F.col("disposition"), F.lit("/"),
                 F.coalesce(F.col("left_reason"), F.lit(""))).alias("kind")))
    rows = (replayed.select(F.explode(F.concat(_events(replayed), fate_event)).alias("e"))
            .groupBy("e.rule_index", "e.kind").count().collect())
    per_rule: dict = {}
    fates: dict = {}
    for r in rows:
        if r["rule_index"] == -1:
            disposition, _, why = r["kind"][len("fate:"):].partition("/")
            fates[(disposition, why or None)] = r["count"]
        else:
            per_rule.setdefault(r["rule_index"], {})[r["kind"]] = r["count"]
    stats = []
    for rule in plan.rules:
        got = per_rule.get(rule.index, {})
        stats.append({"rule_index": rule.index, "line": rule.line, "action": rule.action,
                      **{k: got.get(k, 0) for k in _RULE_COUNTS}})
    return ReplaySummary(stats, fates, sum(fates.values()))


def match_counts(table: RulesTable | ReplayPlan, capture, *, allow_errors: bool = True):
    """Per rule: messages it matches and messages it matches first.

    Matching only (no processing, no world): the first-match counts do not
    depend on what puts would do.

    Returns
    -------
    dict of int to (int, int)
        ``rule_index -> (matched, first_match)`` for every usable rule.
    """
    from pyspark.sql import functions as F

    plan = table if isinstance(table, ReplayPlan) else ReplayPlan.from_table(
        table, allow_errors=allow_errors)
    projected, names = _project(capture, [plan])
    m = projected.select(_matched_column(plan, names).alias("matched"))
    events = F.concat(
        F.transform(F.coalesce("matched", F.array().cast("array<int>")),
                    lambda x: F.struct(x.alias("i"), F.lit(False).alias("first"))),
        F.when(F.size("matched") > 0,
               F.array(F.struct(F.element_at("matched", 1).alias("i"),
                                F.lit(True).alias("first"))))
        .otherwise(F.array().cast("array<struct<i:int,first:boolean>>")),
    )
    rows = (m.select(F.explode(events).alias("e"))
            .groupBy("e.i").agg(F.count_if(~F.col("e.first")).alias("matched"),
                                F.count_if(F.col("e.first")).alias("first"))
            .collect())
    got = {r["i"]: (r["matched"], r["first"]) for r in rows}
    return {r.index: got.get(r.index, (0, 0)) for r in plan.rules}
