"""amqsbcg output: its descriptor lines as templates, and the matcher.

The fast reader (:mod:`dlqlens.capture.amqsbcg.fast`) matches the content
lines of all its units at once against these templates (:class:`_Matcher`):
literal text, integers, quoted and hex values at fixed places. Values go
straight into each unit's MQMD row or into per-unit arrays; units whose
lines do not match are left to the line reader. :class:`_CMatcher` matches
the same templates unit by unit in C (:func:`dlqlens.capture.scan.match_lines`,
the templates compiled by :func:`_program`) where the C loops were built.
"""

from __future__ import annotations

import numpy as np

from dlqlens.capture.scan import compiled, match_lines, probe_lines, rows_of
from dlqlens.capture.text import PAD, decimals, hex_values, pack_text_md, windows
from dlqlens.mq.structs import MQLONG, MQMD


def _lit(text: str):
    raw = text.encode("ascii")
    return ("lit", np.frombuffer(raw, dtype=np.uint8),
            np.frombuffer(raw, dtype=np.dtype((np.void, len(raw))))[0])


def _pair(a: str, fa: str, b: str, fb: str):
    return [_lit(a), ("int", fa), _lit(b), ("int", fb)]


def _quoted(label: str, name: str, size: int):
    return [_lit(label + "'"), ("q", name, size), _lit("'")]


def _hexline(label: str, name: str, size: int):
    return [_lit(label + "X'"), ("hex", name, size), _lit("'")]


def _qint(label: str, name: str):
    return [_lit(label + "'"), ("int", name), _lit("'")]


_MD_LINES = [
    [_lit("****Message descriptor****")],
    [_lit("  StrucId  : '"), ("q", "StrucId", 4), _lit("'  Version : "), ("int", "Version")],
    _pair("  Report   : ", "Report", "  MsgType : ", "MsgType"),
    _pair("  Expiry   : ", "Expiry", "  Feedback : ", "Feedback"),
    _pair("  Encoding : ", "Encoding", "  CodedCharSetId : ", "CodedCharSetId"),
    _quoted("  Format : ", "Format", 8),
    _pair("  Priority : ", "Priority", "  Persistence : ", "Persistence"),
    _hexline("  MsgId : ", "MsgId", 24),
    _hexline("  CorrelId : ", "CorrelId", 24),
    [_lit("  BackoutCount : "), ("int", "BackoutCount")],
    _quoted("  ReplyToQ       : ", "ReplyToQ", 48),
    _quoted("  ReplyToQMgr    : ", "ReplyToQMgr", 48),
    [_lit("  ** Identity Context")],
    _quoted("  UserIdentifier : ", "UserIdentifier", 12),
    [_lit("  AccountingToken :")],
    _hexline("   ", "AccountingToken", 32),
    _quoted("  ApplIdentityData : ", "ApplIdentityData", 32),
    [_lit("  ** Origin Context")],
    _qint("  PutApplType    : ", "PutApplType"),
    _quoted("  PutApplName    : ", "PutApplName", 28),
    [_lit("  PutDate  : '"), ("q", "PutDate", 8), _lit("'    PutTime  : '"), ("q", "PutTime", 8),
     _lit("'")],
    _quoted("  ApplOriginData : ", "ApplOriginData", 4),
]
_MD_V2_LINES = [
    _hexline("  GroupId : ", "GroupId", 24),
    _qint("  MsgSeqNumber   : ", "MsgSeqNumber"),
    _qint("  Offset         : ", "Offset"),
    _qint("  MsgFlags       : ", "MsgFlags"),
    _qint("  OriginalLength : ", "OriginalLength"),
]
_DLH_LINES = [
    [_lit("****Dead Letter Header****")],
    [_lit("  StrucId  : '"), ("q", "d.StrucId", 4), _lit("'  Version : "), ("int", "d.Version")],
    [_lit("  Reason   : "), ("int", "d.Reason"), _lit(" ["), ("bracket",)],
    _quoted("  DestQName      : ", "d.DestQName", 48),
    _quoted("  DestQMgrName   : ", "d.DestQMgrName", 48),
    _pair("  Encoding : ", "d.Encoding", "  CodedCharSetId : ", "d.CodedCharSetId"),
    _quoted("  Format : ", "d.Format", 8),
    _qint("  PutApplType    : ", "d.PutApplType"),
    _quoted("  PutApplName    : ", "d.PutApplName", 28),
    [_lit("  PutDate  : '"), ("q", "d.PutDate", 8), _lit("'    PutTime  : '"),
     ("q", "d.PutTime", 8), _lit("'")],
]
_DATA_LINES = [[_lit("****   Message      ****")]]
_LENGTH_OF = [_lit(" length - "), ("uint", "shown"), _lit(" of "), ("uint", "total"),
              _lit(" bytes")]
_LENGTH_ONLY = [_lit(" length - "), ("uint", "shown"), _lit(" bytes")]

_MD_TEMPLATE = np.frombuffer(pack_text_md({})[0], dtype=np.uint8)
_MD_AT = {f.name: (MQMD.offsets[f.name], f.length, f.type) for f in MQMD.fields}


#: judged on a sample of this many units, and put together while this part of
#: the sample prints them all as the first unit does.
_GROUP_MIN = 64
_GROUP_SAMPLE = 64
_GROUP_SAME = 0.75
#: A single line is looked at as a run (units printing it alike) when this
#: part of the sample prints it as the first unit does.
_GROUP_ALIKE = 0.25
#: References tried per run of lines (:meth:`_Matcher._run`).
_MAX_REFS = 8
#: Values of lines matched as a reference, by template and text (of at most
#: _REF_WIDTH bytes: far more than the lines amqsbcg prints; _REF_COUNT of
#: them at most, then forgotten).
_REFERENCES: dict = {}
_REF_WIDTH = 8192
_REF_COUNT = 1024


class _Matcher:
    """Matches the content lines of many units against line templates, the
    units advancing each at its own pace (optional lines)."""

    def __init__(self, block, rend, content, cfirst, ncont, clean, ok):
        self.buf, self.p, self.starts, self.rend = block.buf, block.p, block.starts, rend
        self.content, self.cfirst, self.ncont, self.clean = content, cfirst, ncont, clean
        self.ok = ok
        self.ci = np.zeros(len(ok), dtype=np.int64)
        #: the MQMD of every unit, filled in as its lines are matched
        self.md = np.empty((len(ok), len(_MD_TEMPLATE)), dtype=np.uint8)
        self.md[:] = _MD_TEMPLATE
        self.version = np.ones(len(ok), dtype=np.int32)
        #: other values (length line, DLH fields) of every unit
        self.values: dict[str, np.ndarray] = {}

    def _lines(self, rows, j=0):
        """The content line ``j`` lines after the current one of the units
        ``rows``, and whether the unit has it."""
        ci = self.ci[rows] + j if j else self.ci[rows]
        valid = ci < self.ncont[rows]
        at = np.minimum(self.cfirst[rows] + ci, max(len(self.content) - 1, 0))
        return (self.content[at] if len(self.content) else np.zeros(len(rows), np.int64)), valid

    def probe(self, lit: np.ndarray, after: bool = False) -> np.ndarray:
        """Units whose current line starts with ``lit`` (with ``after``: holds
        ``lit`` after the number that follows ``' length - '``)."""
        rows = np.flatnonzero(self.ok)
        out = np.zeros(len(self.ok), dtype=bool)
        ln, valid = self._lines(rows)
        pos = self.starts[ln]
        if after:  # ' length - N of M bytes': ' of ' after N
            pos = pos + 10
            w = windows(self.p, pos, 12)
            digit = (w - np.uint8(48)) < 10
            nd = np.argmax(~digit, axis=1)
            pos = pos + nd
        w = windows(self.p, pos, len(lit))
        out[rows] = valid & (w == lit).all(axis=1)
        return out

    def lines(self, section, active=None, depth=0):
        """:meth:`line` for each template of ``section`` in turn.

        Units print most lines as many other units do: runs of lines that
        most of a sample of the units print as the first unit does are
        matched as one (:meth:`_run`), and so are single lines that do not
        differ from unit to unit; the rest are matched unit by unit."""
        sel = self.ok if active is None else self.ok & active
        rows = np.flatnonzero(sel)
        if len(rows) < _GROUP_MIN:
            for tokens in section:
                self.line(tokens, active)
            return
        for j0, j1, alike in self._runs(len(section), rows):
            if alike:
                self._run(section[j0:j1], active, depth)
            else:
                self._plain(section[j0], active)

    def _runs(self, count, rows):
        """``(j0, j1, alike)`` runs of the next ``count`` lines of ``rows``:
        lines that most of a sample of the units print as the first unit does
        are put together; ``alike`` is False for a line that most units print
        differently."""
        sample = rows[np.linspace(0, len(rows) - 1, min(len(rows), _GROUP_SAMPLE)).astype(np.int64)]
        # the next count lines of each unit of the sample, compared with the first's
        ci = self.ci[sample][:, None] + np.arange(count)
        valid = ci < self.ncont[sample][:, None]
        ln = self.content[np.minimum(self.cfirst[sample][:, None] + ci, len(self.content) - 1)]
        start = self.starts[ln]
        length = self.rend[ln] - start
        l0 = length[0]
        width = int(min(l0.max(), PAD))
        w = windows(self.p, start.ravel(), width).reshape(len(sample), count, width)
        same = ((w == w[0]) | (np.arange(width) >= l0[:, None])).all(axis=2)
        same &= valid & (length == l0) & (valid[0] & (l0 > 0) & (l0 <= PAD))
        same = same.T
        out = []
        j = 0
        while j < count:
            acc = same[j]
            k = j + 1
            while k < count and (acc & same[k]).mean() >= _GROUP_SAME:
                acc = acc & same[k]
                k += 1
            out.append((j, k, k > j + 1 or acc.mean() >= _GROUP_ALIKE))
            j = k
        return out

    def _run(self, section, active, depth=0):
        """Match the lines ``section`` (see :meth:`lines`): a unit's lines
        that are byte for byte those of a reference unit (the first unit not
        matched yet, its lines matched template by template) take its
        values; a few references are tried, and the units left are matched
        as a section of their own (once), then line by line."""
        sel = self.ok.copy() if active is None else self.ok & active
        rows = np.flatnonzero(sel)
        g = len(section)
        first, _ = self._lines(rows, 0)
        last, valid = self._lines(rows, g - 1)
        start = self.starts[first]
        width = self.rend[last] - start
        # (the trailing blanks and line end of the last line are not compared:
        # they make it unclean or are no part of the text)
        left = valid & self.clean[last]
        for _ in range(_MAX_REFS):
            cand = np.flatnonzero(left)
            if not len(cand):
                break
            r = int(cand[0])
            w0 = int(width[r])
            if w0 > _REF_WIDTH:  # (not remembered: line by line)
                break
            found = self._reference(section, int(start[r]), w0, rows[r:r + 1])
            if found is None:  # the reference fails: its likes with it, line by line
                break
            cand = cand[width[cand] == w0]
            w = rows_of(self.p, start[cand], w0)
            like = cand[w == w[0]]
            rows_like = rows[like]
            for values in found:
                for name, v in values.items():
                    self._store(name, rows_like, v)
            self.ci[rows_like] += g
            left[like] = False
            sel[rows_like] = False
            if len(like) * 8 < len(cand):  # few alike: the rest are likely all different
                break
        if sel.any():
            if depth < 1 and len(section) > 1:
                self.lines(section, sel, depth + 1)
            else:
                for tokens in section:
                    self._plain(tokens, sel)

    def _reference(self, section, start, width, row):
        """The values of the lines ``section`` of the unit ``row`` (which span
        ``width`` bytes from ``start``), template by template; None when one
        does not match. Remembered by the lines' text (a unit's match depends
        on it alone: see :meth:`_run`)."""
        key = (tuple(map(id, section)), bytes(self.buf[start:start + width]))
        found = _REFERENCES.get(key, False)
        if found is not False:
            return found
        found = []
        for j, tokens in enumerate(section):
            ln, valid = self._lines(row, j)
            good, values = self._match(tokens, ln, valid)
            if not good[0]:
                found = None
                break
            for v in values.values():  # shared through the cache: never written
                if isinstance(v, np.ndarray):
                    v.setflags(write=False)
            found.append(values)
        if len(_REFERENCES) >= _REF_COUNT:
            _REFERENCES.clear()
        _REFERENCES[key] = found
        return found

    def _plain(self, tokens, active):
        """:meth:`line` without looking for units that print the line alike."""
        sel = self.ok if active is None else self.ok & active
        rows = np.flatnonzero(sel)
        if not len(rows):
            return
        ln, valid = self._lines(rows)
        good, values = self._match(tokens, ln, valid)
        for name, v in values.items():
            self._store(name, rows, v)
        self.ok[rows] &= good
        self.ci[rows] += 1

    def line(self, tokens, active=None):
        """Match the current line of the ``active`` units (default: all)
        against ``tokens``; units that do not match are no longer ok."""
        sel = self.ok if active is None else self.ok & active
        rows = np.flatnonzero(sel)
        if not len(rows):
            return
        ln, valid = self._lines(rows)
        start = self.starts[ln]
        length = self.rend[ln] - start
        # lines with the same text as the first one are matched once
        same = np.zeros(len(rows), dtype=bool)
        first = np.flatnonzero(valid)
        r0 = int(first[0]) if len(first) else 0
        if len(first) and 0 < length[r0] <= PAD:
            w = rows_of(self.p, start, int(length[r0]))
            same = valid & (length == length[r0]) & (w == w[r0])
            same[r0] = False
        todo = np.flatnonzero(~same)
        good_t, values = self._match(tokens, ln[todo], valid[todo])
        good = np.empty(len(rows), dtype=bool)
        good[todo] = good_t
        i0 = int(np.searchsorted(todo, r0))
        good[same] = good_t[i0]
        rows_todo = rows[todo]
        same_units = None
        if same.any():
            same_units = np.zeros(len(self.ok), dtype=bool)
            same_units[rows[same]] = True
        for name, v in values.items():
            self._store(name, rows_todo, v)
            if same_units is not None:
                self._store_same(name, same_units, v[i0:i0 + 1])
        self.ok[rows] &= good
        self.ci[rows] += 1

    def _match(self, tokens, ln, valid):
        p = self.p
        good = valid & self.clean[ln]
        pos = self.starts[ln].copy()
        end = self.rend[ln]
        r = np.arange(len(ln))
        values = {}
        for tok in tokens:
            kind = tok[0]
            if kind == "lit":
                lit = tok[1]
                good &= rows_of(self.p, pos, len(lit)) == tok[2]
                pos += len(lit)
            elif kind in ("int", "uint"):
                w = windows(self.p, pos, 12)
                digit = (w - np.uint8(48)) < 10
                if kind == "int":
                    digit[:, 0] |= w[:, 0] == 45
                nd = np.argmax(~digit, axis=1)
                nd = np.where(digit[r, nd], 12, nd)
                val, g = decimals(w, nd)
                good &= g
                pos += nd
                values[tok[1]] = val
            elif kind == "q":
                size = tok[2]
                w = windows(self.p, pos, size + 1)
                quote = w == 39
                n = np.argmax(quote, axis=1)
                good &= quote[r, n]
                values[tok[1]] = np.where(np.arange(size) < n[:, None], w[:, :size],
                                          0x20).astype(np.uint8)
                pos += n
            elif kind == "hex":
                size = tok[2]
                raw, g = hex_values(windows(self.p, pos, 2 * size))
                good &= g
                pos += 2 * size
                values[tok[1]] = raw
            else:  # bracket: anything up to a ']' ending the line
                good &= (pos < end) & (p[np.maximum(end - 1, 0)] == 93)
                pos = end.copy()
            good &= pos <= end
            pos = np.minimum(pos, end)
        good &= pos == end
        return good, values

    def _target(self, name, val):
        """Where the values of ``name`` go: a column block of the MQMD (the
        value as its bytes) or a per-unit array of :attr:`values`."""
        if name in _MD_AT:
            at, size, kind = _MD_AT[name]
            if kind == MQLONG:  # at a multiple of 4: one int32 column
                if name == "Version":
                    val = np.where((val == 1) | (val == 2), val, 2)
                return self.md.view("<i4")[:, at // 4], val.astype("<i4")
            return self.md[:, at:at + size], val
        if name not in self.values:
            self.values[name] = np.zeros((len(self.ok),) + val.shape[1:], dtype=val.dtype)
        return self.values[name], val

    def _store(self, name, rows, val):
        """The values ``val`` of the units ``rows``."""
        if name == "Version":
            self.version[rows] = np.where((val == 1) | (val == 2), val, 2)
        target, val = self._target(name, val)
        target[rows] = val

    def _store_same(self, name, units, val):
        """One value ``val`` (a row) for the units where ``units`` is True."""
        if name == "Version":
            np.copyto(self.version, np.where((val == 1) | (val == 2), val, 2), where=units)
        target, val = self._target(name, val)
        np.copyto(target, val, where=units.reshape((-1,) + (1,) * (target.ndim - 1)))


# ---------------------------------------------------------------------------
# the same matching in C (dlqlens.capture._scan.match_lines), unit by unit
# ---------------------------------------------------------------------------

_OP_END, _OP_LIT, _OP_INT, _OP_UINT, _OP_Q, _OP_HEX, _OP_BRACKET = range(7)
#: Where a value goes (see ``_scan.c``): an MQMD int32, a values int64, MQMD
#: bytes, values bytes, the MQMD Version.
_TO_MD_INT, _TO_VAL_INT, _TO_MD_BYTES, _TO_VAL_BYTES, _TO_VERSION = 1, 2, 3, 4, 5


def _value_layout() -> tuple[dict[str, tuple[int, int, bool]], int]:
    """The values that are not MQMD fields (MQDLH fields, the length line),
    as columns of one row of bytes a unit: name -> (offset, size, integer),
    and the row's width."""
    layout, width = {}, 0
    for section in (_DLH_LINES, [_LENGTH_OF], [_LENGTH_ONLY]):
        for tokens in section:
            for tok in tokens:
                if tok[0] in ("int", "uint", "q", "hex") and tok[1] not in _MD_AT \
                        and tok[1] not in layout:
                    size = 8 if tok[0] in ("int", "uint") else tok[2]
                    layout[tok[1]] = (width, size, tok[0] in ("int", "uint"))
                    width += size
    return layout, width


_VALUES, _VALUES_WIDTH = _value_layout()


def _program(section) -> np.ndarray:
    """The templates ``section`` (lines of tokens) as a ``match_lines`` program."""
    prog = []
    for tokens in section:
        for tok in tokens:
            kind = tok[0]
            if kind == "lit":
                prog += [_OP_LIT, len(tok[1])] + tok[1].tolist()
            elif kind == "bracket":
                prog.append(_OP_BRACKET)
            else:
                name = tok[1]
                integer = kind in ("int", "uint")
                if name in _MD_AT:
                    off = _MD_AT[name][0]
                    to = (_TO_VERSION if name == "Version" else _TO_MD_INT) if integer \
                        else _TO_MD_BYTES
                else:
                    off = _VALUES[name][0]
                    to = _TO_VAL_INT if integer else _TO_VAL_BYTES
                if integer:
                    prog += [_OP_INT if kind == "int" else _OP_UINT, to, off]
                else:
                    prog += [_OP_Q if kind == "q" else _OP_HEX, tok[2], to, off]
        prog.append(_OP_END)
    return np.array(prog, dtype=np.int32)


_PROGRAMS: dict = {}


def _program_of(section) -> np.ndarray:
    key = tuple(map(id, section))
    prog = _PROGRAMS.get(key)
    if prog is None:
        prog = _PROGRAMS[key] = _program(section)
    return prog


class _CMatcher(_Matcher):
    """:class:`_Matcher` with each unit's lines matched in C
    (:func:`dlqlens.capture.scan.match_lines`): the same values and the same
    units matched, line by line, without looking for units alike."""

    def __init__(self, block, rend, content, cfirst, ncont, clean, ok):
        super().__init__(block, rend, content, cfirst, ncont, clean, ok)
        self._cstart = np.ascontiguousarray(self.starts[content], dtype=np.int64)
        self._crend = np.ascontiguousarray(rend[content], dtype=np.int64)
        self._cclean = np.ascontiguousarray(clean[content], dtype=np.uint8)
        self._cfirst = np.ascontiguousarray(cfirst, dtype=np.int64)
        self._ncont = np.ascontiguousarray(ncont, dtype=np.int64)
        self._vals = np.zeros((len(ok), _VALUES_WIDTH), dtype=np.uint8)
        for name, (off, size, integer) in _VALUES.items():
            col = self._vals[:, off:off + size]
            self.values[name] = col.view(np.int64)[:, 0] if integer else col

    def _match_units(self, section, active):
        ok = self.ok.view(np.uint8)
        act = b"" if active is None else np.ascontiguousarray(active, dtype=np.uint8)
        match_lines(self.buf, self._cstart, self._crend, self._cclean, self._cfirst,
                    self._ncont, self.ci, ok, act, _program_of(section), self.md, self._vals)
        self.version = self.md.view("<i4")[:, _MD_AT["Version"][0] // 4].astype(np.int32)

    def probe(self, lit: np.ndarray, after: bool = False) -> np.ndarray:
        if not compiled("probe_lines"):  # an extension built before probe_lines
            return super().probe(lit, after)
        return probe_lines(self.buf, self._cstart, self._cfirst, self._ncont, self.ci,
                           self.ok, lit.tobytes(), after)

    def lines(self, section, active=None, depth=0):
        self._match_units(section, active)

    def line(self, tokens, active=None):
        self._match_units([tokens], active)
