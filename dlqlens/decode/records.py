"""Decode a batch of framed messages into one Arrow record batch.

The MQMD of every row is decoded at once (:func:`dlqlens.decode.fixed.decode_fixed`);
then the header chain is walked level by level: at each level the rows whose
current format announces the same header are decoded together, each with the
integer encoding and CCSID that the structure in front of it names
(:mod:`dlqlens.mq.chaining`). A header that does not check out (StrucId,
Version, StrucLength) ends the walk for that row; the rest of its data is kept
as opaque payload and an issue says why.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dlqlens.decode import fixed
from dlqlens.decode.fixed import (Decoded, _validity, concat_ranges, copy_rows, decode_fixed,
                                  gather, one_value)
from dlqlens.decode.frames import Frames, labels
from dlqlens.decode.issues import Issue, make_issue, worst_status
from dlqlens.decode.schema import (HEADER_CHAIN_ITEM, ISSUE_ITEM, LAYOUT, NETWORK, TS, message_schema,
                                   narrow_schema, only_fields)
from dlqlens.mq import chaining
from dlqlens.mq.ccsid import ASCII, EBCDIC, HEADER_CODEC, charset, codec_family
from dlqlens.mq.constants import MQFMT
from dlqlens.mq.structs import MQDLH, MQHEADER_PREFIX, MQMD, MQRFH2, MQTM, MQXQH, Struct

#: How many headers a chain may have before the walk gives up.
MAX_CHAIN = 16

_MQSTR = MQFMT["MQFMT_STRING"].rstrip()

#: Headers decoded whole (they have columns); any other chained header is read
#: as far as its common prefix, which is all the walk needs.
_DECODED = frozenset(s.name for s in (MQDLH, MQXQH, MQTM, MQRFH2))
_VALID_VERSIONS = {"MQDLH": (1,), "MQXQH": (1,), "MQTM": (1,), "MQRFH2": (1, 2),
                   "MQHEADER": tuple(range(1, 10))}


#: ``header_chain.status`` values, by code.
HEADER_STATUS = ("ok", "bad_length", "truncated")
_OK, _BAD_LENGTH, _TRUNCATED = range(3)


class _Chain:
    """Per-row state of the header walk and what it found."""

    def __init__(self, n: int, fields: dict[str, frozenset] | None = None):
        #: structure name -> the character/byte fields to decode (absent: all)
        self.fields = fields or {}
        self.rows: list[np.ndarray] = []
        self.depth: list[np.ndarray] = []
        self.cols: dict[str, list] = {k: [] for k in
                                      ("format", "struc_id", "offset", "length",
                                       "encoding", "ccsid", "status")}
        self.typed: dict[str, tuple[np.ndarray, Decoded]] = {}
        self.rfh2_folders: dict[int, list[str]] = {}
        #: format and StrucId labels -> their codes in ``cols``
        self.labels: dict[str, int] = {}

    def record(self, rows, depth, fmt, struc_id, offset, length, enc, ccsid, status):
        """One level's headers of ``rows``: ``fmt`` and ``struc_id`` are the
        same for all of them; ``status`` is a code of :data:`HEADER_STATUS` per row."""
        k = len(rows)
        self.rows.append(rows)
        self.depth.append(np.full(k, depth, dtype=np.int32))
        c = self.cols
        c["format"].append(np.full(k, self._code(fmt.rstrip()), dtype=np.int32))
        c["struc_id"].append(np.full(k, self._code(struc_id), dtype=np.int32))
        c["offset"].append(offset.astype(np.int32))
        c["length"].append(np.broadcast_to(np.asarray(length, dtype=np.int32), (k,)).copy())
        c["encoding"].append(enc.astype(np.int32))
        c["ccsid"].append(ccsid.astype(np.int32))
        c["status"].append(status.astype(np.int32))

    def _code(self, label: str) -> int:
        return self.labels.setdefault(label, len(self.labels))

    def lists(self, n: int) -> tuple[pa.Array, pa.Array]:
        if not self.rows:
            empty_off = pa.array(np.zeros(n + 1, dtype=np.int32))
            return (pa.ListArray.from_arrays(empty_off, pa.array([], pa.string())),
                    pa.ListArray.from_arrays(empty_off, pa.array([], HEADER_CHAIN_ITEM)))
        rows = np.concatenate(self.rows)
        depth = np.concatenate(self.depth)
        order = np.lexsort((depth, rows))
        counts = np.bincount(rows, minlength=n)
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(counts, out=offsets[1:])
        cols = {k: np.concatenate(v)[order] for k, v in self.cols.items()}
        labels = pa.array(list(self.labels), pa.string())
        statuses = pa.array(HEADER_STATUS, pa.string())

        def text(codes, dictionary):
            return pa.DictionaryArray.from_arrays(pa.array(codes), dictionary).cast(pa.string())

        items = pa.StructArray.from_arrays(
            [text(cols["format"], labels), text(cols["struc_id"], labels),
             pa.array(cols["offset"]), pa.array(cols["length"]),
             pa.array(cols["encoding"]), pa.array(cols["ccsid"]),
             text(cols["status"], statuses)],
            fields=list(HEADER_CHAIN_ITEM))
        off = pa.array(offsets)
        return (pa.ListArray.from_arrays(off, items.field("format")),
                pa.ListArray.from_arrays(off, items))


def _factorize(values: np.ndarray) -> tuple[list, np.ndarray]:
    """(distinct values, index of each row's value); one comparison pass when
    every row has the same value, the usual case."""
    n = len(values)
    if n == 0:
        return [], np.zeros(0, np.int64)
    if (values == values[0]).all():
        return [values[0]], np.zeros(n, np.int64)
    uniq, inverse = np.unique(values.astype(str) if values.dtype == object else values,
                              return_inverse=True)
    return uniq.tolist(), inverse.ravel().astype(np.int64)


def _labels(values: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """A string array from an object array of few distinct strings (null where
    not ``valid``), built from the distinct values and an index: no Python
    string per row."""
    uniq, inverse = _factorize(np.asarray(values, dtype=object))
    if not uniq:
        return pa.array([], pa.string())
    dictionary = pa.array([str(u) for u in uniq], pa.string())
    mask = None if valid is None else ~np.asarray(valid, dtype=bool)
    indices = pa.array(inverse.astype(np.int32), mask=mask)
    return pa.DictionaryArray.from_arrays(indices, dictionary).cast(pa.string())


def _masked(values: np.ndarray, valid: np.ndarray, typ: pa.DataType) -> pa.Array:
    """``values`` as an Arrow array of ``typ``, null where not ``valid``."""
    valid = np.asarray(valid, dtype=bool)
    return pa.array(values, typ, mask=None if valid.all() else ~valid)


def _codecs_for(ccsids: np.ndarray, ebcdic: np.ndarray | None = None):
    """Codec, blank, EBCDIC flag and known flag per row, looked up once per
    distinct (CCSID, family) pair.

    Parameters
    ----------
    ccsids : numpy.ndarray of int, shape (n,)
    ebcdic : numpy.ndarray of bool, shape (n,), optional
        The family each row's CCSID is read in when the CCSID alone does not
        say (the family of the MQMD's character set); default ASCII.

    Returns
    -------
    codecs : numpy.ndarray of object, blanks : uint8, ebcdic : bool, known : bool
        Each shape (n,).
    """
    n = len(ccsids)
    fam = np.zeros(n, np.int64) if ebcdic is None else np.asarray(ebcdic, dtype=np.int64)
    keys = np.asarray(ccsids, dtype=np.int64) * 2 + fam
    uniq, inverse = _factorize(keys)
    table = []
    for key in uniq:
        cs = charset(int(key) // 2, EBCDIC if int(key) % 2 else ASCII)
        if cs.family not in (ASCII, EBCDIC):  # UTF-16 headers: read as ASCII
            cs = charset(819)
        table.append((cs.codec, cs.blank, cs.family == EBCDIC, cs.known))
    if len(table) == 1:  # one character set for every row (the usual case)
        codec, blank, is_e, known = table[0]
        return (labels(n, codec), np.full(n, blank, np.uint8), np.full(n, is_e),
                np.full(n, known))
    codecs = np.array([t[0] for t in table] or [""], dtype=object)[inverse] if n else np.empty(0, object)
    blanks = np.array([t[1] for t in table] or [0], dtype=np.uint8)[inverse] if n else np.empty(0, np.uint8)
    is_e = np.array([t[2] for t in table] or [False], dtype=bool)[inverse] if n else np.empty(0, bool)
    known = np.array([t[3] for t in table] or [True], dtype=bool)[inverse] if n else np.empty(0, bool)
    return codecs, blanks, is_e, known


def _hex(b: bytes) -> str:
    return b.hex().upper()


#: Character and byte fields the decoder itself needs from each structure
#: (the header walk, the timestamps whose problems are decode issues).
_INTERNAL_FIELDS = {"MQMD": frozenset({"Format", "PutDate", "PutTime"}),
                    "MQDLH": frozenset({"Format", "PutDate", "PutTime"})}


def decode_frames(fr: Frames, columns=None, fields=None) -> pa.RecordBatch:
    """Decode every framed message of ``fr`` into a record batch.

    Parameters
    ----------
    fr : Frames
        Messages framed by a capture reader.
    columns : collection of str, optional
        The top-level columns wanted (default: all). Structures whose column
        is not wanted are decoded only as far as the header walk and the
        decode issues need; payloads, payload text and timestamps are made
        only for their own columns or for the issues. ``decode_status`` and
        ``decode_issues``, when asked for, are the same whatever else is.
    fields : mapping of str to collection of str, optional
        Of the ``md``, ``dlh`` and ``tm`` columns, only these fields (in the
        structure's order); the MQMD's and MQDLH's character fields not asked
        for (nor needed by the walk and the timestamps) are not decoded.

    Returns
    -------
    pyarrow.RecordBatch
        One row per frame, with :func:`dlqlens.decode.schema.message_schema`
        (only ``columns``, in the schema's order, when given; its structs
        narrowed to ``fields``, :func:`~dlqlens.decode.schema.narrow_schema`).
        Nothing is dropped here; reader modes are applied by the caller.
    """
    wanted = None if columns is None else frozenset(columns)

    def want(col: str) -> bool:
        return wanted is None or col in wanted

    fields = {k: frozenset(v) for k, v in (fields or {}).items()}

    def decoded_fields(column: str, struct: str):
        """The character and byte fields of ``struct`` to decode (None: all)."""
        if not want(column):
            return _INTERNAL_FIELDS[struct]
        return _INTERNAL_FIELDS[struct] | fields[column] if column in fields else None

    n = len(fr)
    src = fr.source
    issues: dict[int, list[Issue]] = {k: list(v) for k, v in fr.issues.items()}

    data_offset = fr.data_offset if fr.data_offset is not None else np.full(n, -1, np.int64)

    def add_issue(row: int, code: str, field: str, expected: str, found: str,
                  offset: int | None = None, note: str = ""):
        """``offset`` is counted from the start of the message data; the issue
        names the file offset (binary captures) or the line (text captures)."""
        line = int(fr.source_line[row]) if fr.source_line[row] >= 0 else None
        off = None
        if offset is not None:
            note = f"byte {offset} of the message data" + (f"; {note}" if note else "")
            if line is None and data_offset[row] >= 0:
                off = int(data_offset[row]) + offset
        if line is None and off is None and fr.source_offset[row] >= 0:
            off = int(fr.source_offset[row])  # at least where the message is
        issues.setdefault(row, []).append(make_issue(
            code, source=src, message_number=int(fr.message_number[row]), field=field,
            expected=expected, found=found, offset=off, line=line, note=note))

    # ---- MQMD -------------------------------------------------------------
    codec_values, codec_idx = _factorize(np.asarray(fr.md_codec, dtype=object))
    one_codec = len(codec_values) == 1 and bool((fr.md_blank == fr.md_blank[0]).all())
    md = decode_fixed(MQMD, fr.md, big_endian=fr.md_big_endian,
                      codecs=str(codec_values[0]) if one_codec else fr.md_codec,
                      blanks=int(fr.md_blank[0]) if one_codec else fr.md_blank,
                      version_of_row=fr.md_version,
                      fields=decoded_fields("md", "MQMD"))
    md_valid = fr.md_valid
    unknown_md = _unknown_rows(fr.unknown, "md.")
    for name, rows in unknown_md.items():
        if name in md.columns:  # a field the capture does not hold: null
            md.columns[name] = _null_rows(md.columns[name], rows, n)

    starts = fr.starts.astype(np.int64)
    ends = fr.ends.astype(np.int64)
    pos = starts.copy()
    enc = md.ints["Encoding"].copy()
    ccsid = md.ints["CodedCharSetId"].copy()
    fmt = _format8(md.columns["Format"])
    # the family of each row's MQMD character set: what a header's CCSID is
    # read in when the CCSID alone does not say
    ebcdic = np.array([codec_family(c) == EBCDIC for c in codec_values] or [False])[codec_idx]
    # rows whose data starts with a header no MQMD announces (a hex dump that
    # starts at an MQDLH, MQXQH, MQTM, MQRFH2): the walk starts there
    walked = md_valid.copy()
    if fr.start_format is not None:
        lead = np.array([bool(f) and bool(str(f).strip()) for f in fr.start_format], dtype=bool)
        if lead.any():
            fmt = fmt.copy()
            fmt[lead] = fr.start_format[lead]
            enc[lead] = fr.start_encoding[lead]
            ccsid[lead] = fr.start_ccsid[lead]
            walked |= lead
    active = walked.copy()
    dlh_fields = decoded_fields("dlh", "MQDLH")
    chain = _Chain(n, None if dlh_fields is None else {"MQDLH": dlh_fields})

    for depth in range(MAX_CHAIN + 1):
        if not active.any():
            break
        if depth == MAX_CHAIN:
            for r in np.flatnonzero(active):
                add_issue(int(r), "chain_too_deep", "header chain",
                          f"at most {MAX_CHAIN} headers", f"more than {MAX_CHAIN}",
                          int(pos[r] - starts[r]))
            active[:] = False
            break
        cur = fmt[active]
        for f in set(cur.tolist()):
            h = chaining.HEADERS.get(f)
            if h is None:
                continue
            st = h.struct if h.name in _DECODED else MQHEADER_PREFIX
            rows = np.flatnonzero(active & (fmt == f))
            _walk_one(fr, rows, f, h, st, st.length(), depth, pos, ends, starts, enc, ccsid,
                      fmt, ebcdic, active, chain, add_issue)
        # rows whose format is not a header stop here: the rest is payload
        is_header = np.zeros(n, dtype=bool)
        for f in set(fmt[active].tolist()):
            if f in chaining.HEADERS:
                is_header |= fmt == f
        active &= is_header


    # Work whose only products are columns not asked for is skipped; the
    # issues it could add (text_not_decodable, bad_timestamp) are seen only
    # through decode_status and decode_issues, and are made whenever those are
    # asked for.
    issues_wanted = want("decode_status") or want("decode_issues")

    # ---- payload -----------------------------------------------------------
    pay_len = np.maximum(ends - pos, 0)
    text_wanted = want("payload_text") or issues_wanted
    payload = None
    if want("payload") or text_wanted:
        pay_off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(pay_len, out=pay_off[1:])
        pay_data = concat_ranges(fr.data, pos, pay_len)
        payload = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(), n, [None, pa.py_buffer(pay_off), pa.py_buffer(pay_data)]
        ).cast(pa.binary())
    header_bytes = None
    if want("header_bytes"):
        head_len = np.where(walked, np.maximum(pos - starts, 0), 0)
        head_off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(head_len, out=head_off[1:])
        head_data = concat_ranges(fr.data, starts, head_len)
        header_bytes = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(), n, [pa.py_buffer(np.packbits(walked, bitorder="little")),
                                   pa.py_buffer(head_off), pa.py_buffer(head_data)]
        ).cast(pa.binary())
    data_truncated = fr.data_length > (ends - starts)
    if fr.open_end is not None:
        data_truncated = data_truncated | fr.open_end
    stated_payload = np.maximum(fr.data_length - (pos - starts), 0)
    for r in np.flatnonzero(data_truncated & walked):
        if not any(i.code in ("data_truncated", "header_truncated") for i in issues.get(r, [])):
            add_issue(int(r), "data_truncated", "message data",
                      f"{int(fr.data_length[r])} bytes", f"{int(ends[r] - starts[r])} bytes",
                      note="the capture kept only part of the message")
    fmt_values, fmt_idx = _factorize(fmt)
    pay_fmt = np.array([str(f).rstrip() for f in fmt_values] or [""], dtype=object)[fmt_idx]
    payload_text = (_payload_text(payload, pay_fmt, ccsid, n, add_issue, ebcdic, enc)
                    if text_wanted else None)

    # ---- derived -----------------------------------------------------------
    dlh_rows, dlh_dec = chain.typed.get("MQDLH", (np.zeros(0, np.int64), None))
    dlh_struct = _scatter_struct(MQDLH, dlh_rows, dlh_dec, n)
    unknown_dlh = _unknown_rows(fr.unknown, "dlh.")
    if unknown_dlh:
        names = [f.name for f in dlh_struct.type]
        dlh_struct = pa.StructArray.from_arrays(
            [_null_rows(dlh_struct.field(k), unknown_dlh[k], n) if k in unknown_dlh
             else dlh_struct.field(k) for k in names], names=names,
            mask=pc.is_null(dlh_struct))

    from dlqlens.mq.constants import code_name

    put_ts = dlh_put_ts = None
    if want("put_ts") or issues_wanted:
        put_ts = put_timestamp(md.columns["PutDate"], md.columns["PutTime"])
    if want("dlh_put_ts") or issues_wanted:
        dlh_put_ts = put_timestamp(dlh_struct.field("PutDate"), dlh_struct.field("PutTime"))
    for name, ts, d, t in (("md", put_ts, md.columns["PutDate"], md.columns["PutTime"]),
                           ("dlh", dlh_put_ts, dlh_struct.field("PutDate"),
                            dlh_struct.field("PutTime"))):
        if ts is None:
            continue
        bad = pc.and_(pc.is_null(ts), pc.is_valid(d)).to_numpy(zero_copy_only=False)
        if name == "md":
            bad &= md_valid
        for r in np.flatnonzero(bad):
            add_issue(int(r), "bad_timestamp", f"{name}.PutDate/{name}.PutTime",
                      "YYYYMMDD HHMMSSTH (UTC)", f"{d[r].as_py()!r} {t[r].as_py()!r}")

    for r in np.flatnonzero(fr.dlh_reconstructed):
        add_issue(int(r), "dlh_reconstructed", "dlh", "MQDLH bytes in the capture",
                  "a formatted Dead Letter Header block",
                  note=f"the {MQDLH.length()} bytes were rebuilt from the printed fields; "
                       "NUL padding and original bytes cannot be recovered")
    memo: dict = {}

    def issue_columns():
        if "issues" not in memo:
            memo["issues"] = _issues_columns(issues, n)
        return memo["issues"]

    def chain_lists():
        if "lists" not in memo:
            memo["lists"] = chain.lists(n)
        return memo["lists"]

    cols = {
        "source": lambda: pa.repeat(pa.scalar(src, pa.string()), n),
        "capture_format": lambda: pa.repeat(pa.scalar(fr.capture_format, pa.string()), n),
        "message_number": lambda: pa.array(fr.message_number, pa.int32()),
        "source_offset": lambda: _masked(fr.source_offset, fr.source_offset >= 0, pa.int64()),
        "source_line": lambda: _masked(fr.source_line, fr.source_line >= 0, pa.int32()),
        "layout": lambda: _layout(fr, n, md_valid),
        "md": lambda: pa.StructArray.from_arrays(
            [md.columns[f.name] for f in md_fields], names=[f.name for f in md_fields],
            mask=pa.array(~md_valid)),
        "dlh": lambda: only_fields(dlh_struct, fields["dlh"]) if "dlh" in fields
        else dlh_struct,
        "xqh": lambda: _scatter_struct(
            MQXQH, *chain.typed.get("MQXQH", (np.zeros(0, np.int64), None)), n),
        "tm": lambda: _tm_struct(chain, n, fields.get("tm")),
        "rfh2": lambda: _rfh2_struct(chain, n),
        "headers": lambda: chain_lists()[0],
        "header_chain": lambda: chain_lists()[1],
        "header_bytes": lambda: header_bytes,
        "payload": lambda: payload,
        "payload_length": lambda: pa.array(stated_payload, pa.int64()),
        "payload_format": lambda: _labels(pay_fmt, walked),
        "payload_encoding": lambda: _masked(enc, walked, pa.int32()),
        "payload_ccsid": lambda: _masked(ccsid, walked, pa.int32()),
        "payload_text": lambda: payload_text,
        "data_length": lambda: pa.array(fr.data_length, pa.int64()),
        "data_truncated": lambda: pa.array(data_truncated),
        "reason_name": lambda: _names(dlh_struct.field("Reason"), "reason", code_name),
        "feedback_name": lambda: _names(
            pa.array(md.ints["Feedback"], mask=~md_valid | (md.ints["Feedback"] == 0)
                     | _row_mask(unknown_md.get("Feedback", ()), n)),
            "feedback", code_name),
        "put_ts": lambda: put_ts,
        "dlh_put_ts": lambda: dlh_put_ts,
        "decode_status": lambda: issue_columns()[0],
        "decode_issues": lambda: issue_columns()[1],
        "raw": lambda: (pa.array([fr.raw.get(i) for i in range(n)], pa.binary()) if fr.raw
                        else pa.nulls(n, pa.binary())),
        "network": lambda: (pa.array(fr.network, NETWORK) if fr.network is not None
                            else pa.nulls(n, NETWORK)),
    }
    md_fields = [f for f in MQMD.fields if "md" not in fields or f.name in fields["md"]]
    schema = narrow_schema(message_schema(), fields)
    if wanted is not None:
        schema = pa.schema([f for f in schema if f.name in wanted])
    # a capture that holds no message data (a piece of a text capture without
    # its data section): the data's columns are null, not empty
    no_data = [int(r) for r, names in fr.unknown.items() if "payload" in names]
    arrays = []
    for f in schema:
        a = cols[f.name]()
        if no_data and f.name in _DATA_COLUMNS:
            a = _null_rows(a, no_data, n)
        arrays.append(a.cast(f.type) if a.type != f.type else a)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


#: The columns made null for a row whose frame lists ``payload`` as unknown.
_DATA_COLUMNS = frozenset({"payload", "payload_length", "payload_text", "data_length"})


def _unknown_rows(unknown: dict, prefix: str) -> dict[str, list[int]]:
    """Field name (``prefix`` removed) -> the rows whose capture does not hold it."""
    out: dict[str, list[int]] = {}
    for row, names in unknown.items():
        for name in names:
            if name.startswith(prefix):
                out.setdefault(name[len(prefix):], []).append(int(row))
    return out


def _row_mask(rows, n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[list(rows)] = True
    return mask


def _null_rows(col: pa.Array, rows, n: int) -> pa.Array:
    """``col`` with the values of ``rows`` null."""
    return pc.if_else(pa.array(_row_mask(rows, n)), pa.scalar(None, col.type), col)


def _layout(fr: Frames, n: int, md_valid: np.ndarray) -> pa.StructArray:
    """The ``layout`` column: how each message's MQMD was found."""
    return pa.StructArray.from_arrays([
        pa.repeat(pa.scalar(fr.md_origin, pa.string()), n),
        pa.DictionaryArray.from_arrays(
            pa.array(np.asarray(fr.md_big_endian, dtype=np.int8), mask=~md_valid),
            pa.array(["little", "big"])).cast(pa.string()),
        _labels(fr.md_codec, md_valid),
        _masked(fr.md_version, md_valid, pa.int32()),
        pa.array(fr.dlh_reconstructed),
    ], fields=list(LAYOUT))


def _walk_one(fr, rows, f, h, st, size, depth, pos, ends, starts, enc, ccsid, fmt,
              ebcdic, active, chain, add_issue):
    """Decode the header ``h`` (a :class:`dlqlens.mq.chaining.ChainedHeader`)
    announced by format ``f`` in ``rows`` (one level), reading it as ``st``
    (its own table, or the common prefix alone)."""
    block, avail = gather(fr.data, pos[rows], size, ends[rows])
    codecs, blanks, labelled_e, known = _codecs_for(ccsid[rows], ebcdic[rows])
    for i in np.flatnonzero(~known):
        r = rows[i]
        add_issue(int(r), "unknown_ccsid", f"{st.name} CodedCharSetId", "a known CCSID",
                  str(int(ccsid[r])), int(pos[r] - starts[r]),
                  note=f"read as {codecs[i]}")
    # -- StrucId, in the labelled character set or the other family ----------
    sid = h.struc_id
    got = block[:, :4]
    word = copy_rows(got).view(">u4").ravel()  # the StrucId as one word
    is_a = (word == int.from_bytes(sid.encode("latin-1"), "big")) & (avail >= 4)
    is_e = (word == int.from_bytes(sid.encode("cp500"), "big")) & (avail >= 4)
    ok = np.where(labelled_e, is_e, is_a)
    flipped = ~ok & np.where(labelled_e, is_a, is_e)
    for i in np.flatnonzero(flipped):
        r = rows[i]
        labelled, other = (EBCDIC, ASCII) if labelled_e[i] else (ASCII, EBCDIC)
        add_issue(int(r), "charset_mismatch", f"{st.name}.StrucId",
                  f"{sid!r} in CCSID {int(ccsid[r])} ({labelled})",
                  f"{sid!r} in {other}", int(pos[r] - starts[r]),
                  note=f"header read as {other}")
        codecs[i] = HEADER_CODEC[other]
        blanks[i] = 0x40 if other == EBCDIC else 0x20
    good = ok | flipped
    for i in np.flatnonzero(~good):
        r = rows[i]
        off = int(pos[r] - starts[r])
        if avail[i] < 4:
            add_issue(int(r), "header_truncated", f"{st.name}.StrucId", f"{sid!r}",
                      f"{int(avail[i])} bytes left", off,
                      note=f"format {f.rstrip()!r} announces a {st.name}")
        else:
            add_issue(int(r), "bad_struc_id", f"{st.name}.StrucId", repr(sid),
                      f"X'{_hex(bytes(got[i]))}'", off,
                      note=f"format {f.rstrip()!r} announces a {st.name}; the rest is kept as payload")
        active[r] = False
    if not good.all():
        rows, block, avail = rows[good], block[good], avail[good]
        codecs, blanks, labelled_e = codecs[good], blanks[good], labelled_e[good]
    if not len(rows):
        return
    # -- integer byte order: the Encoding in front, checked against Version ---
    nib = enc[rows] & 0x0F
    big = nib == 1
    has_version = st.fields[1].name == "Version" and st.fields[1].type == "MQLONG"
    if has_version:
        valid_versions = np.array(_VALID_VERSIONS.get(st.name, (1,)))
        raw = copy_rows(block[:, 4:8])
        v_be = raw.view(">i4").ravel()
        v_le = raw.view("<i4").ravel()
        ok_be = np.isin(v_be, valid_versions)
        ok_le = np.isin(v_le, valid_versions)
        undefined = (nib != 1) & (nib != 2)
        labelled_ok = np.where(big, ok_be, ok_le)
        other_ok = np.where(big, ok_le, ok_be)
        switch = (~labelled_ok & other_ok) | (undefined & (ok_be != ok_le))
        for i in np.flatnonzero(switch):
            r = rows[i]
            code = "encoding_undefined" if undefined[i] else "encoding_mismatch"
            add_issue(int(r), code, f"{st.name}.Version",
                      f"Version in {'big' if big[i] else 'little'}-endian (Encoding {int(enc[r])})",
                      f"Version readable only as {'little' if big[i] else 'big'}-endian",
                      int(pos[r] - starts[r]), note="byte order taken from the header itself")
        big = np.where(switch, ~big, big)
        if undefined.any():
            big = np.where(undefined & ~switch & ok_be, True, big)
        bad_v = ~(labelled_ok | other_ok) & (avail >= 8)
        for i in np.flatnonzero(bad_v):
            r = rows[i]
            add_issue(int(r), "bad_version", f"{st.name}.Version",
                      " or ".join(str(v) for v in valid_versions[:3]),
                      f"X'{_hex(bytes(block[i, 4:8]))}'", int(pos[r] - starts[r]) + 4,
                      note="the rest is kept as payload")
            active[r] = False
        if bad_v.any():
            keep = ~bad_v
            rows, block, avail, big = rows[keep], block[keep], avail[keep], big[keep]
            codecs, blanks, labelled_e = codecs[keep], blanks[keep], labelled_e[keep]
        if not len(rows):
            return
    keys = ccsid[rows].astype(np.int64) * 2 + labelled_e
    if not flipped.any() and bool((keys == keys[0]).all()):
        # one (CCSID, family) pair, so one codec and pad byte for every row
        codecs, blanks = str(codecs[0]), int(blanks[0])
    dec = decode_fixed(st, block, big_endian=big, codecs=codecs, blanks=blanks, available=avail,
                       fields=chain.fields.get(st.name))
    hdr_off = pos[rows] - starts[rows]
    length = np.full(len(rows), size, dtype=np.int64)
    status = np.full(len(rows), _OK, dtype=np.int8)
    if h.prefixed:
        sl = dec.ints["StrucLength"]
        remaining = ends[rows] - pos[rows]
        bad_len = (sl < size) | (sl > remaining)
        # a record the capture cut at an unknown length (a screen's last
        # column): a StrucLength past the cut is the capture's, not the header's
        cut_off = np.zeros(len(rows), dtype=bool)
        if fr.open_end is not None:
            cut_off = fr.open_end[rows] & (sl >= size) & (sl > remaining) & (avail >= size)
            bad_len &= ~cut_off
        for i in np.flatnonzero(cut_off):
            r = rows[i]
            add_issue(int(r), "header_truncated", f"{st.name}.StrucLength",
                      f"{int(sl[i])} bytes", f"{int(remaining[i])} bytes before the capture's cut",
                      int(hdr_off[i]) + 8, note="the rest of the header was not captured")
        for i in np.flatnonzero(bad_len & (avail >= 12)):
            r = rows[i]
            add_issue(int(r), "bad_struc_length", f"{st.name if st is not MQHEADER_PREFIX else sid.strip()}.StrucLength",
                      f"{size} to {int(remaining[i])} bytes", str(int(sl[i])),
                      int(hdr_off[i]) + 8, note="the rest is kept as payload")
        length = np.where(bad_len, size, sl).astype(np.int64)
        status[bad_len] = _BAD_LENGTH
        status[cut_off] = _TRUNCATED
    short = avail < size
    for i in np.flatnonzero(short):
        r = rows[i]
        missing = [fld.name for fld in st.fields if st.offsets[fld.name] + fld.length > avail[i]]
        add_issue(int(r), "header_truncated", f"{st.name}",
                  f"{size} bytes", f"{int(avail[i])} bytes", int(hdr_off[i]),
                  note="fields cut off: " + ", ".join(missing[:6]) + ("..." if len(missing) > 6 else ""))
        status[i] = _TRUNCATED
    chain.record(rows, depth, f, sid, hdr_off, length, enc[rows], ccsid[rows], status)
    if st.name not in chain.typed and st is not MQHEADER_PREFIX:
        chain.typed[st.name] = (rows, dec)
    elif st.name in chain.typed and st is not MQHEADER_PREFIX:
        first_rows, _ = chain.typed[st.name]
        new = ~np.isin(rows, first_rows)
        if new.any():  # same header type at a new depth for other rows: keep first per row
            prev_rows, prev_dec = chain.typed[st.name]
            sub = _take_decoded(dec, np.flatnonzero(new))
            chain.typed[st.name] = (np.concatenate([prev_rows, rows[new]]),
                                    _concat_decoded(prev_dec, sub))
    if st is MQRFH2:
        for i, r in enumerate(rows):
            if status[i] == _OK:
                chain.rfh2_folders.setdefault(int(r), _rfh2_folders(
                    fr.data, int(pos[r]) + size, int(pos[r]) + int(length[i]),
                    bool(big[i]), int(dec.ints["NameValueCCSID"][i])))
    # -- what comes next ------------------------------------------------------
    stop = short | (status != _OK)
    pos[rows] = np.where(stop, pos[rows], pos[rows] + length)
    pre = h.next_fields
    if pre is None:  # nothing is chained after it (an MQTM)
        active[rows] = False
        fmt[rows] = chaining.MQFMT_NONE
        return
    n_enc = dec.ints[pre + "Encoding"]
    n_ccsid = dec.ints[pre + "CodedCharSetId"]
    n_fmt = _format8(dec.columns[pre + "Format"])
    go = ~stop
    r_go = rows[go]
    enc[r_go] = chaining.following_encoding(n_enc[go], enc[r_go])
    ccsid[r_go] = chaining.following_ccsid(n_ccsid[go], ccsid[r_go])
    fmt[r_go] = n_fmt[go]
    active[rows[stop]] = False


def _format8(col: pa.Array) -> np.ndarray:
    """Format names as 8-character (blank padded) Python strings."""
    one = _one_string(col)
    if one is not None:  # one format in every row (the usual case): no hashing
        return labels(len(col), one.ljust(8)[:8])
    enc = pc.dictionary_encode(col.fill_null(""))
    values = [(v or "").ljust(8)[:8] for v in enc.dictionary.to_pylist()]
    if not values:
        return np.empty(0, dtype=object)
    return np.array(values, dtype=object)[enc.indices.to_numpy(zero_copy_only=False)]


def _one_string(col: pa.Array) -> str | None:
    """The value of a string array whose every row holds that one value
    (no nulls), else None; read from the array's buffers."""
    n = len(col)
    if n == 0 or col.type != pa.string() or col.null_count or col.offset:
        return None
    offsets = np.frombuffer(col.buffers()[1], dtype=np.int32, count=n + 1)
    width = int(offsets[1] - offsets[0])
    if not (np.diff(offsets) == width).all():
        return None
    if width:
        data = np.frombuffer(col.buffers()[2], dtype=np.uint8, count=n * width,
                             offset=int(offsets[0])).reshape(n, width)
        if not one_value(data):
            return None
    return col[0].as_py()


def _names(values: pa.Array, kind: str, code_name) -> pa.Array:
    """Names of reason/feedback codes, looked up once per distinct value."""
    uniq = pc.unique(values).drop_null()
    names = pa.array([code_name(v, kind=kind) for v in uniq.to_pylist()], pa.string())
    return names.take(pc.index_in(values, value_set=uniq))


def _take_decoded(dec: Decoded, idx: np.ndarray) -> Decoded:
    ia = pa.array(idx)
    return Decoded({k: v.take(ia) for k, v in dec.columns.items()},
                   {k: v[idx] for k, v in dec.partial.items()},
                   {k: v[idx] for k, v in dec.ints.items()})


def _concat_decoded(a: Decoded, b: Decoded) -> Decoded:
    return Decoded({k: pa.concat_arrays([a.columns[k], b.columns[k]]) for k in a.columns},
                   {}, {k: np.concatenate([a.ints[k], b.ints[k]]) for k in a.ints})


def _tm_struct(chain, n: int, names=None) -> pa.StructArray:
    """The ``tm`` column: each row's MQTM (null without one), only ``names`` when given."""
    tm = _scatter_struct(MQTM, *chain.typed.get("MQTM", (np.zeros(0, np.int64), None)), n)
    return tm if names is None else only_fields(tm, names)


def _scatter_struct(st: Struct, rows: np.ndarray, dec: Decoded | None, n: int) -> pa.StructArray:
    """Place decoded rows at their positions in an ``n``-row struct array (nulls elsewhere).

    Fields that were not decoded (``decode_fixed(fields=...)``) are left out
    of the struct."""
    from dlqlens.decode.schema import struct_type

    t = struct_type(st)
    if dec is not None and any(
            (f.name not in dec.columns) for f in t if not pa.types.is_struct(f.type)):
        t = pa.struct([f for f in t if pa.types.is_struct(f.type) or f.name in dec.columns])
    if dec is None or not len(rows):
        return pa.nulls(n, t)
    if len(rows) == n and (rows == np.arange(n)).all():  # every row has one, in order
        children = []
        for fld in t:
            if pa.types.is_struct(fld.type):
                children.append(pa.StructArray.from_arrays(
                    [dec.columns[f"{fld.name}.{c.name}"] for c in fld.type], fields=list(fld.type)))
            else:
                children.append(dec.columns[fld.name])
        return pa.StructArray.from_arrays(children, fields=list(t))
    index = np.full(n, -1, dtype=np.int64)
    index[rows] = np.arange(len(rows))
    # null indices give null children too: code that reads a child array
    # (reason_name, dlh_put_ts) must not see another row's values
    take = pa.array(np.where(index >= 0, index, 0), mask=index < 0)
    mask = pa.array(index < 0)
    children = []
    for fld in t:
        if pa.types.is_struct(fld.type):
            sub = [dec.columns[f"{fld.name}.{c.name}"].take(take) for c in fld.type]
            children.append(pa.StructArray.from_arrays(sub, fields=list(fld.type)))
        else:
            children.append(dec.columns[fld.name].take(take))
    return pa.StructArray.from_arrays(children, fields=list(t), mask=mask)


def _rfh2_struct(chain: _Chain, n: int) -> pa.StructArray:
    t = message_schema().field("rfh2").type
    rows, dec = chain.typed.get("MQRFH2", (np.zeros(0, np.int64), None))
    base = _scatter_struct(MQRFH2, rows, dec, n)
    if chain.rfh2_folders:
        folders = pa.array([chain.rfh2_folders.get(i) for i in range(n)], pa.list_(pa.string()))
    else:
        folders = pa.nulls(n, pa.list_(pa.string()))
    children = [base.field(i) for i in range(base.type.num_fields)] + [folders]
    return pa.StructArray.from_arrays(children, fields=list(t), mask=pc.is_null(base))


def _rfh2_folders(data: np.ndarray, start: int, end: int, big: bool, ccsid: int) -> list[str]:
    """The NameValueData folders of an MQRFH2 (length-prefixed strings)."""
    out = []
    buf = data[start:end].tobytes()
    codec = _utf16_codec(charset(ccsid if ccsid > 0 else 1208).codec, big)
    p = 0
    while p + 4 <= len(buf):
        ln = int.from_bytes(buf[p:p + 4], "big" if big else "little", signed=True)
        p += 4
        if ln < 0 or p + ln > len(buf):
            break
        out.append(buf[p:p + ln].decode(codec, errors="replace").rstrip(" \0"))
        p += ln
    return out


def _utf16_codec(codec: str, big_endian: bool | None) -> str:
    """UTF-16 data is in the byte order of its integer encoding (IBM MQ, MQRFH2
    "NameValueCCSID (MQLONG)": UTF-16 data has the byte order of the integers
    around it; we read message data the same way)."""
    if codec != "utf-16" or big_endian is None:
        return codec
    return "utf-16-be" if big_endian else "utf-16-le"


def _payload_text(payload: pa.Array, pay_fmt, ccsid, n, add_issue, ebcdic, enc) -> pa.Array:
    """Decode MQSTR payloads with their CCSID, one character set at a time.

    Rows are grouped by (CCSID, family, integer byte order); a group whose
    bytes are valid UTF-8 (or ASCII under an ASCII-compatible single-byte
    code page) is converted in Arrow without a per-row Python step.
    """
    is_str = pay_fmt == _MQSTR
    if not is_str.any():
        return pa.nulls(n, pa.string())
    rows = np.flatnonzero(is_str)
    nib = (np.asarray(enc)[rows] & 0x0F).astype(np.int64)
    fam_values = [ASCII, EBCDIC]
    fam_idx = np.asarray(ebcdic, dtype=np.int64)[rows]
    keys = (np.asarray(ccsid)[rows].astype(np.int64) * 64 + fam_idx) * 16 + nib
    uniq, inverse = _factorize(keys)
    parts: list[pa.Array] = []
    order: list[np.ndarray] = []
    for gi, key in enumerate(uniq):
        key = int(key)
        c, fam, nb = key // 1024, str(fam_values[(key // 16) % 64]), str(key % 16)
        cs = charset(int(c), fam)
        codec = _utf16_codec(cs.codec, True if nb == "1" else False if nb == "2" else None)
        rs = rows if len(uniq) == 1 else rows[inverse == gi]
        if not cs.known:
            # no character set for this CCSID: no text rather than another
            # code page's reading of the bytes
            for r in rs.tolist():
                add_issue(r, "unknown_ccsid", "payload_text",
                          "a CCSID whose character set dlqlens knows", str(int(c)),
                          note="the payload is shown as bytes only")
            parts.append(pa.nulls(len(rs), pa.string()))
            order.append(rs)
            continue
        sub = payload if len(rs) == n else payload.take(pa.array(rs))
        decoded = None
        if codec in ("utf-8", "ascii", "latin-1", "iso8859-1", "cp1252", "cp850", "cp437"):
            data = sub.buffers()[2]
            arr = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
            if codec == "utf-8" or arr.size == 0 or arr.max() < 0x80:
                try:
                    decoded = sub.cast(pa.string())
                except pa.ArrowInvalid:
                    decoded = None
        if decoded is None:
            values = []
            for r, b in zip(rs.tolist(), sub.to_pylist()):
                try:
                    values.append(b.decode(codec))
                except UnicodeDecodeError as exc:
                    add_issue(r, "text_not_decodable", "payload_text", f"text in {codec}",
                              f"X'{b[exc.start:exc.start + 8].hex().upper()}' at payload byte {exc.start}",
                              note="undecodable bytes replaced")
                    values.append(b.decode(codec, errors="replace"))
            decoded = pa.array(values, pa.string())
        parts.append(decoded)
        order.append(rs)
    if len(parts) == 1 and len(order[0]) == n:
        return parts[0]
    merged = pa.concat_arrays(parts + [pa.nulls(1, pa.string())])
    index = np.full(n, len(merged) - 1, dtype=np.int64)
    index[np.concatenate(order)] = np.arange(len(merged) - 1)
    return merged.take(pa.array(index))


def _offsets_and_data(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The int32 offsets (n + 1) and the data bytes of a string array, a null
    read as an empty string."""
    arr = arr.fill_null("")
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.string():
        arr = arr.cast(pa.string())
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=n + 1, offset=arr.offset * 4)
    data_buf = arr.buffers()[2]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return offsets, data


def _char_block(arr: pa.Array, width: int) -> tuple[np.ndarray, np.ndarray]:
    """An Arrow string array as an ``(n, width)`` byte block (zero-padded) and lengths."""
    offsets, data = _offsets_and_data(arr)
    n = len(offsets) - 1
    lengths = np.diff(offsets).astype(np.int64)
    if n and (lengths == width).all():  # every value exactly ``width`` bytes: a view
        return data[offsets[0]:offsets[0] + n * width].reshape(n, width), lengths
    starts = offsets[:-1].astype(np.int64)
    block, _ = gather(data, starts, width, starts + np.minimum(lengths, width))
    return block, lengths


_HIGH8 = np.uint64(0x8080808080808080)
_HIGH6 = np.uint64(0x0000808080808080)  # the first six bytes, little-endian
_PLUS_118 = np.uint64(0x7676767676767676)


def _all_digits(d: np.ndarray, high: np.uint64) -> np.ndarray:
    """Rows of an ``(n, 8)`` block of ``byte - 48`` values whose bytes (those
    under ``high``) are all 0..9: eight bytes tested at once as one uint64 (a
    byte of 10..127 gets its high bit from +118; 128..255 has it already)."""
    x = np.ascontiguousarray(d).view("<u8").reshape(len(d))
    return ((x | (x + _PLUS_118)) & high) == 0


def put_timestamp(date: pa.Array, time: pa.Array) -> pa.Array:
    """UTC timestamps from MQ ``PutDate`` (``YYYYMMDD``) and ``PutTime`` (``HHMMSSTH``).

    Follows IBM MQ, MQMD "PutDate (MQCHAR8)" and "PutTime (MQCHAR8)": both are
    UTC (GMT); ``HHMMSS`` without the
    hundredths is accepted; anything else (blanks, non-digits, impossible
    dates such as 20230229) gives null. Leap seconds (60, 61) are clamped to
    59.99. One C loop over the characters' bytes
    (:mod:`dlqlens.decode._fixed` ``put_times``) when it was built; else
    vectorised in numpy over them (the reference the tests compare it with).

    Parameters
    ----------
    date, time : pyarrow.Array of string, shape (n,)
        ``PutDate`` and ``PutTime`` values (null: no time).

    Returns
    -------
    pyarrow.Array of timestamp[us, tz=UTC], shape (n,)
        Null where the pair is not a time.
    """
    n = len(date)
    if n == 0:
        return pa.array([], TS)
    if fixed._fixed is not None:  # the same rules in one C loop
        micros = np.empty(n, np.int64)
        ok = np.empty(n, np.uint8)
        fixed._fixed.put_times(_offsets_and_data(date), _offsets_and_data(time), micros, ok)
        return pa.Array.from_buffers(TS, n, [_validity(ok.view(bool)), pa.py_buffer(micros)])
    db, dlen = _char_block(date, 8)
    tb, tlen = _char_block(time, 8)
    dd = db - np.uint8(48)  # digits 0..9; anything else wraps to 10..255
    td = tb - np.uint8(48)
    ok_d = (dlen == 8) & _all_digits(dd, _HIGH8)
    has_h = tlen == 8
    ok_t = np.where(has_h, _all_digits(td, _HIGH8), (tlen == 6) & _all_digits(td, _HIGH6))
    # pairs of digits as numbers: YY YY MM DD and HH MM SS TH
    dp = dd[:, 0::2].astype(np.int64) * 10 + dd[:, 1::2]
    tp = td[:, 0::2].astype(np.int64) * 10 + td[:, 1::2]
    year = dp[:, 0] * 100 + dp[:, 1]
    month, day = dp[:, 2], dp[:, 3]
    hh, mi, ss = tp[:, 0], tp[:, 1], tp[:, 2]
    hs = np.where(has_h, tp[:, 3], 0)
    # checked before the leap seconds (60, 61) are read as 59.99: 62 and up are no second
    ok = ok_d & ok_t & (month >= 1) & (month <= 12) & (day >= 1) & (hh < 24) & (mi < 60) & (ss < 62)
    leap = ss >= 60
    ss = np.where(leap, 59, ss)
    hs = np.where(leap, 99, hs)
    ym = np.where(ok, (year - 1970) * 12 + month - 1, 0)
    first = ym.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    nxt = (ym + 1).astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    ok &= day <= (nxt - first)
    micros = ((first + day - 1) * 86400 + hh * 3600 + mi * 60 + ss) * 1_000_000 + hs * 10_000
    micros = np.where(ok, micros, 0)
    return pa.Array.from_buffers(TS, n, [pa.py_buffer(np.packbits(ok, bitorder="little")),
                                         pa.py_buffer(micros.astype(np.int64))])


def _issues_columns(issues: dict[int, list[Issue]], n: int):
    names = ["ok"]
    code = np.zeros(n, dtype=np.int32)  # index into names
    counts = np.zeros(n, dtype=np.int32)
    items = []
    for i in sorted(issues):
        its = issues[i]
        if its:
            worst = worst_status(x.code for x in its)
            if worst not in names:
                names.append(worst)
            code[i] = names.index(worst)
            counts[i] = len(its)
            items.extend(x.as_dict() for x in its)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    status = pa.DictionaryArray.from_arrays(pa.array(code), pa.array(names, pa.string()))
    return (status.cast(pa.string()),
            pa.ListArray.from_arrays(pa.array(offsets), pa.array(items, ISSUE_ITEM)))
