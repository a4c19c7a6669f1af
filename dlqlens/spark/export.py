"""Export messages of a capture as a dmpmqmsg file an administrator can reload.

The file is the dmpmqmsg (QLOAD) format of ``docs/capture-formats.md``
(written by :mod:`dlqlens.capture.dmpmqmsg.writer`): IBM MQ "dmpmqmsg (queue
load and unload)" puts its messages onto a queue with
``dmpmqmsg -m QMGR -f FILE -o QUEUE`` (``-i``/``-I`` name an input *queue*:
they unload, not load). Each message is written with its MQMD fields (the 30
attribute codes, ``VER`` and the version-2 fields only for a version-2 MQMD)
and its message data byte for byte (``header_bytes + payload``).

Nothing is invented. A message whose bytes the capture did not fully hold is
**not exported**; it is counted under one of :data:`SKIP_REASONS`:

``unreadable``
    the MQMD or the message data could not be read (``decode_status``
    ``bad_descriptor``, ``bad_data`` or ``bad_framing``);
``truncated``
    the capture kept only part of the message (``data_truncated``, or a
    ``data_truncated``/``header_truncated`` issue: amqsbcg shows at most
    65,536 bytes, a raw dump may be cut);
``dlh_rebuilt``
    the MQDLH was rebuilt from amqsbcg's formatted "Dead Letter Header"
    block (MQ 9.3.4 and later): its original bytes (NUL or blank padding)
    are not in the capture. With ``strip_dlh`` these messages are exported,
    as the MQDLH's bytes are then not written;
``lossy_text``
    the message came from ``T`` lines of a ``dmpmqmsg -dt`` file, which do
    not keep line ends byte for byte;
``no_dlh``
    ``strip_dlh`` was asked and the message does not begin with a complete
    MQDLH (there is nothing to strip);
``unwritable``
    an MQMD value the dmpmqmsg text cannot hold faithfully (a character
    outside printable ASCII, a value the capture does not hold); the count
    names the field.

``strip_dlh`` does what runmqdlq does for ACTION(RETRY) and ACTION(FWD)
HEADER(NO) (IBM MQ "DLQ rules (patterns and actions)", HEADER keyword; "Dead-letter
queue processing": the MQDLH's Encoding, CodedCharSetId and Format "have to be
reinstated in the message descriptor before the message is put to the
destination queue"; ``spec/runmqdlq-rules.md`` §7 from the handler's
source): the first 172 bytes (the MQDLH) are removed from the data, and the
MQMD's ``Format``, ``Encoding`` and ``CodedCharSetId`` become the MQDLH's
``Format``, ``Encoding`` and ``CodedCharSetId``. Every other MQMD field
(MsgId, CorrelId, BackoutCount, Expiry, context) and every header after the
MQDLH (an MQRFH2, an MQXQH) stay as they are.

A message seen in several captures (snapshots of one DLQ) is written once:
rows with the same message data and the same MQMD but for ``Expiry`` (the
remaining lifetime, which counts down while the message waits: IBM MQ,
"Expiry (MQLONG)") are copies of one message; the copy with the least
remaining Expiry, the latest snapshot's, is written (then the first in
``(source, message_number)`` order); ``dedupe=False`` writes every copy.

The messages are formatted in the executors, one Arrow batch of the sorted
selection at a time (``mapInArrow``); the text comes to the driver one
partition at a time (:func:`dlqlens.spark.driver.local_rows`) and is written
as it comes; the DataFrame is never collected.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from dlqlens.errors import ExportError, UsageError
from dlqlens.spark.driver import local_rows

#: Why a selected message was not exported (see the module docstring).
SKIP_REASONS = {
    "unreadable": "the MQMD or the message data could not be read",
    "truncated": "the capture kept only part of the message",
    "dlh_rebuilt": "the MQDLH was rebuilt from amqsbcg's formatted block (original bytes unknown)",
    "lossy_text": "dmpmqmsg -dt text lines do not keep the bytes exactly",
    "no_dlh": "--strip-dlh: the message does not begin with a complete MQDLH",
    "unwritable": "an MQMD value the dmpmqmsg text cannot hold",
}

#: The columns an export reads.
EXPORT_COLUMNS = ("source", "message_number", "md", "dlh", "header_chain", "header_bytes",
                  "payload", "data_truncated", "decode_status", "decode_issues")

#: Skipped messages listed per reason in :class:`ExportResult` (the rest counted).
SHOWN_SKIPPED = 3

_MQDLH_LENGTH = 172
_V2_FIELDS = ("GroupId", "MsgSeqNumber", "Offset", "MsgFlags", "OriginalLength")
_UNREADABLE = ("bad_descriptor", "bad_data", "bad_framing")


@dataclass
class ExportResult:
    """What an export wrote and what it did not.

    Attributes
    ----------
    path : str
        The file written.
    selected : int
        Rows of the DataFrame given.
    written : int
        Messages written to the file.
    duplicates : int
        Rows left out as copies of a message written (same data, same MQMD
        but for the remaining Expiry: the message in two snapshots).
    skipped : dict of str to int
        Messages not written, by :data:`SKIP_REASONS` key.
    skipped_messages : list of (str, int, str, str)
        The first :data:`SHOWN_SKIPPED` skipped messages of each reason:
        source, message_number, reason key and detail (naming the file and
        the message).
    bytes : int
        Size of the file (bytes).
    data_bytes : int
        Message data written (bytes, MQMDs not counted).
    strip_dlh : bool
        Whether the MQDLH was removed.
    """

    path: str
    selected: int = 0
    written: int = 0
    duplicates: int = 0
    skipped: dict = field(default_factory=dict)
    skipped_messages: list = field(default_factory=list)
    bytes: int = 0
    data_bytes: int = 0
    strip_dlh: bool = False

    def to_text(self) -> str:
        """Several lines: the counts, then each skip reason and its first messages.
        Capture values (file names) are escaped for a terminal."""
        from dlqlens.safe import one_line

        how = " without their MQDLH (MQMD Format/Encoding/CodedCharSetId from it)" \
            if self.strip_dlh else ""
        if not self.selected:
            return (f"no message matched the selection: {one_line(self.path)} holds only the "
                    f"banner ({self.bytes} bytes)")
        lines = [f"{self.written} of {self.selected} selected message(s) written to "
                 f"{one_line(self.path)}{how} ({self.bytes} bytes)"]
        if self.duplicates:
            lines.append(f"  {self.duplicates} duplicate(s) left out: copies of a message "
                         "written, seen in another snapshot (same MQMD but for the remaining "
                         "Expiry, same data)")
        for key, n in sorted(self.skipped.items()):
            reason, _, name = key.partition(":")
            lines.append(f"  {n} not written: {SKIP_REASONS[reason]}"
                         + (f" ({name})" if name else ""))
            shown = [m for m in self.skipped_messages if m[2] == key]
            lines += [f"    {one_line(detail)}" for _, _, _, detail in shown]
            if n > len(shown):
                lines.append(f"    ... and {n - len(shown)} more")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def _numbers(values, table_names: tuple, what: str) -> list[int]:
    from dlqlens.mq import constants

    out = []
    for v in values:
        if isinstance(v, int):
            out.append(v)
            continue
        text = str(v).strip()
        try:
            out.append(int(text))
            continue
        except ValueError:
            pass
        for name in table_names:
            table = getattr(constants, name)
            if text.upper() in table:
                out.append(int(table[text.upper()]))
                break
        else:
            raise UsageError(f"{what} {text!r}: expected a number or a name such as MQRC_Q_FULL")
    return out


def reason_codes(values: Iterable) -> list[int]:
    """MQDLH Reason values from numbers or names (``2053``, ``"MQRC_Q_FULL"``,
    ``"MQFB_EXPIRATION"``).

    Raises
    ------
    dlqlens.errors.UsageError
        For a value that is neither a number nor an MQRC_/MQFB_ name.
    """
    return _numbers(values, ("MQRC", "MQFB"), "reason")


def _refs(messages):
    """``(source, message_number)`` rows of a reference DataFrame: the links of
    findings (``dlqlens.detect.run_detectors``: the ``Findings`` pair, or its
    ``links`` filtered as you like) or any DataFrame with ``source`` and
    ``message_number`` (a filtered replay)."""
    links = getattr(messages, "links", None)
    if links is not None and not callable(links):  # the Findings pair
        messages = links
    missing = [c for c in ("source", "message_number") if c not in messages.columns]
    if missing:
        what = (" (a findings DataFrame holds no messages: pass its links, or the Findings "
                "pair)" if "finding_id" in messages.columns else "")
        raise UsageError("messages: expected the links of findings or rows with 'source' and "
                         f"'message_number'; missing {', '.join(missing)}{what}")
    return messages.select("source", "message_number").distinct()


def select_messages(df, *, reasons=None, dest_queues=None, dest_qmgrs=None, messages=None):
    """The rows of ``df`` that need replaying, by the criteria given.

    Criteria combine with AND; the values of one criterion with OR. No
    criterion: every row.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Capture rows (:func:`dlqlens.spark.load_capture`).
    reasons : iterable of int or str, optional
        ``dlh.Reason`` values, as numbers or MQRC_/MQFB_ names.
    dest_queues, dest_qmgrs : iterable of str, optional
        ``dlh.DestQName`` / ``dlh.DestQMgrName`` values; a value ending in
        ``*`` matches names that begin with the rest (as in a rules table).
    messages : pyspark.sql.DataFrame or Findings, optional
        The messages to keep: the links of findings
        (:func:`dlqlens.detect.run_detectors`: the ``(findings, links)``
        pair, or ``links`` filtered as you like, e.g. semi-joined with some
        findings), or any rows with ``source`` and ``message_number`` (a
        replay filtered by fate: :func:`dlqlens.rules.replay.where_fate`).

    Returns
    -------
    pyspark.sql.DataFrame
        The selected rows of ``df``, same columns (a lazy transformation).

    Raises
    ------
    dlqlens.errors.UsageError
        For a reason that is neither a number nor a known name, or a
        ``messages`` DataFrame without the reference columns.
    """
    from pyspark.sql import functions as F

    out = df
    if reasons:
        out = out.where(F.col("dlh.Reason").isin(reason_codes(reasons)))
    for column, names in (("dlh.DestQName", dest_queues), ("dlh.DestQMgrName", dest_qmgrs)):
        if not names:
            continue
        cond = None
        for name in names:
            name = str(name).strip()
            c = (F.col(column).startswith(name[:-1]) if name.endswith("*")
                 else F.col(column) == name)
            cond = c if cond is None else cond | c
        out = out.where(cond)
    if messages is not None:
        out = out.join(_refs(messages), ["source", "message_number"], "left_semi")
    return out


def _skip_column(strip_dlh: bool):
    """The skip reason of each row (null: exportable), in Spark."""
    from pyspark.sql import functions as F

    codes = F.transform("decode_issues", lambda i: i["code"])
    has = lambda code: F.coalesce(F.array_contains(codes, code), F.lit(False))  # noqa: E731
    first = F.col("header_chain")[0]
    whole_dlh = (F.col("dlh").isNotNull() & (first["format"] == "MQDEAD")
                 & (first["status"] == "ok") & (first["offset"] == 0)
                 & (F.length("header_bytes") >= _MQDLH_LENGTH))
    c = F.when(F.col("decode_status").isin(*_UNREADABLE) | F.col("md").isNull()
               | F.col("header_bytes").isNull() | F.col("payload").isNull(), "unreadable")
    c = c.when(F.coalesce(F.col("data_truncated"), F.lit(False)) | has("data_truncated")
               | has("header_truncated"), "truncated")
    c = c.when(has("lossy_capture"), "lossy_text")
    if strip_dlh:
        c = c.when(~whole_dlh, "no_dlh")
    else:
        c = c.when(has("dlh_reconstructed"), "dlh_rebuilt")
    return c


def _ctime(now: _dt.datetime) -> str:
    """C ``ctime()`` text (``Fri Mar 15 10:20:00 2024``, day space-padded)."""
    return f"{now:%a %b} {now.day:2d} {now:%H:%M:%S %Y}"


def export_dmpmqmsg(df, path, *, strip_dlh: bool = False, dedupe: bool = True,
                    created: _dt.datetime | None = None) -> ExportResult:
    """Write the messages of ``df`` as a dmpmqmsg file (``dmpmqmsg -m QMGR -f FILE -o QUEUE``
    loads it).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The messages to export, with the columns of :data:`EXPORT_COLUMNS`
        (a capture from :func:`dlqlens.spark.load_capture`, filtered, e.g. by
        :func:`select_messages`). Written in ``(source, message_number)`` order.
    path : str or os.PathLike
        The file to write (replaced if it exists; written under a temporary
        name and renamed when complete, so nothing is left under ``path``
        on failure).
    strip_dlh : bool
        Remove the MQDLH and take the MQMD's Format, Encoding and
        CodedCharSetId from it, as runmqdlq's RETRY and FWD HEADER(NO) do
        (module docstring). Messages that do not begin with a complete MQDLH
        are then skipped (``no_dlh``).
    dedupe : bool
        Write a message found in several captures once (same data, same
        MQMD but for Expiry; the copy with the least remaining Expiry).
    created : datetime, optional
        The banner's ``Created:`` time (UTC); default now.

    Returns
    -------
    ExportResult
        Counts of messages selected, written, left out as duplicates and
        skipped by reason, the file's size in bytes. An export that writes
        no message still writes the banner, and says so.

    Raises
    ------
    dlqlens.errors.ExportError
        When ``df`` lacks a column the export needs.
    OSError
        When the file cannot be written.

    Notes
    -----
    The file is ASCII (MQMD character fields must be printable ASCII, else
    the message is skipped as ``unwritable``); a dmpmqmsg on z/OS expects
    EBCDIC: transfer the file in text mode. The message data is hex and is
    written as captured, in the Encoding and CodedCharSetId its MQMD states.
    The banner has no ``* Qmgr``/``* Queue`` line: the file was not unloaded
    from a queue.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from dlqlens.capture.dmpmqmsg.writer import banner

    missing = [c for c in EXPORT_COLUMNS if c not in df.columns]
    if missing:
        raise ExportError(f"export: the DataFrame lacks column(s) {', '.join(missing)}; load "
                          "the capture with them (load_capture(..., columns=None) reads all)",
                          missing[0])
    path = os.fspath(path)
    result = ExportResult(path=path, strip_dlh=strip_dlh)
    rows = df.select(*EXPORT_COLUMNS).withColumn("_skip", _skip_column(strip_dlh))
    data = F.concat("header_bytes", "payload")
    if dedupe:
        key = [F.col("md").dropFields("Expiry"), F.sha2(data, 256)]
        # copies to write are ranked among themselves only (a skipped first copy must not
        # make the good ones duplicates); an unknown Expiry ranks last
        first = Window.partitionBy(*key, F.col("_skip").isNull()).orderBy(
            F.col("md.Expiry").asc_nulls_last(), "source", "message_number")
        rows = rows.withColumn("_dup", F.when(F.col("_skip").isNull(),
                                              F.row_number().over(first) > 1)
                               .otherwise(F.lit(False)))
    else:
        rows = rows.withColumn("_dup", F.lit(False))
    keep = F.col("_skip").isNull() & ~F.col("_dup")
    # the bytes go to the formatter only for the messages written
    out = rows.select(
        "source", "message_number", "_skip", "_dup",
        F.when(keep, F.col("md")).alias("md"),
        F.when(keep, F.col("dlh")).alias("dlh"),
        F.when(keep, data).alias("data"),
        # the issue that says why (none, for some: the formatter says the skip reason)
        F.when(F.col("_skip").isNotNull(), F.try_element_at(F.filter(
            "decode_issues", lambda i: i["code"].isin(
                "data_truncated", "header_truncated", "dlh_reconstructed", "lossy_capture",
                "bad_md", "bad_md_field", "bad_hex", "length_mismatch", "bad_length",
                "unframed", "not_captured")), F.lit(1))["message"]).alias("_issue"),
    ).orderBy("source", "message_number")

    formatted = out.mapInArrow(_formatter(strip_dlh), _CHUNK_SCHEMA)
    skipped: Counter = Counter()
    now = created or _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
    part = path + ".part"
    try:
        with open(part, "w", encoding="ascii", newline="\n") as fh:
            fh.write(banner(created=_ctime(now), strict=True))
            for chunk in local_rows(formatted):
                fh.write(chunk["text"])
                result.selected += chunk["selected"]
                result.written += chunk["written"]
                result.duplicates += chunk["duplicates"]
                result.data_bytes += chunk["data_bytes"]
                for key, n in json.loads(chunk["skipped"]).items():
                    skipped[key] += n
                for source, number, key, detail in json.loads(chunk["examples"]):
                    if sum(1 for m in result.skipped_messages if m[2] == key) < SHOWN_SKIPPED:
                        result.skipped_messages.append((source, number, key, detail))
        os.replace(part, path)
    finally:
        if os.path.exists(part):
            os.remove(part)
    result.skipped = dict(skipped)
    result.bytes = os.path.getsize(path)
    return result


#: One row per Arrow batch of the sorted selection: its dmpmqmsg text and its counts.
_CHUNK_SCHEMA = ("text string, selected long, written long, duplicates long, data_bytes long, "
                 "skipped string, examples string")


def _formatter(strip_dlh: bool):
    """The ``mapInArrow`` function: each batch of sorted rows becomes one chunk of
    dmpmqmsg text (formatted in the executors, in order) with its counts; the
    skipped messages are counted by reason, the first :data:`SHOWN_SKIPPED` of
    each reason kept as examples."""

    def run(batches):
        import pyarrow as pa

        from dlqlens.capture.dmpmqmsg.writer import format_message
        from dlqlens.capture.message import CaptureMessage

        for batch in batches:
            text, skipped, examples = [], Counter(), []
            counts = {"selected": 0, "written": 0, "duplicates": 0, "data_bytes": 0}

            def skip(r, key, detail):
                skipped[key] += 1
                if skipped[key] <= SHOWN_SKIPPED:
                    examples.append((r["source"], r["message_number"], key, detail))

            for r in batch.to_pylist():
                counts["selected"] += 1
                if r["_skip"] is not None:
                    skip(r, r["_skip"], r["_issue"] or f"{r['source']}: message "
                         f"{r['message_number']}: {SKIP_REASONS[r['_skip']]}")
                    continue
                if r["_dup"]:
                    counts["duplicates"] += 1
                    continue
                md = dict(r["md"])
                body = bytes(r["data"])
                if strip_dlh:
                    dlh = r["dlh"]
                    md.update(Format=dlh["Format"], Encoding=dlh["Encoding"],
                              CodedCharSetId=dlh["CodedCharSetId"])
                    body = body[_MQDLH_LENGTH:]
                md.pop("StrucId", None)
                if int(md.get("Version") or 0) < 2:
                    for name in _V2_FIELDS:
                        md.pop(name, None)
                try:
                    text.append(format_message(CaptureMessage(md=md, data=body), strict=True))
                except ExportError as exc:
                    skip(r, f"unwritable:{exc.field}",
                         f"{r['source']}: message {r['message_number']}: {exc}")
                    continue
                counts["written"] += 1
                counts["data_bytes"] += len(body)
            yield pa.RecordBatch.from_pylist([{
                "text": "".join(text), **counts, "skipped": json.dumps(dict(skipped)),
                "examples": json.dumps(examples)}])

    return run
