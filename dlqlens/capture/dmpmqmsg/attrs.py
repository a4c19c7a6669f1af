"""dmpmqmsg files: the attribute lines of the fast reader's units.

The units the fast reader (:mod:`dlqlens.capture.dmpmqmsg.fast`) frames have
their ``A xxx value`` lines read here into MQMD rows, columnwise: units with
the same codes in the same order (a "layout") are read together
(:func:`_fill_group`), a value the same in every row is read once, and rows
whose lines sit at the same offsets as the first row's are compared with it
as one block of bytes. A value the line reader would report clears the
unit's ``ok`` flag (it then goes to the line reader).
"""

from __future__ import annotations

import re

import numpy as np

from dlqlens.capture.dmpmqmsg.lines import _ALWAYS, _V2, CODES
from dlqlens.capture.scan import compiled, rows_like_first, rows_of, template_fields
from dlqlens.capture.text import _MD_CHAR_COLUMNS, decimals, hex_values, pack_text_md, windows
from dlqlens.mq.structs import MQMD

_KIND_INT, _KIND_CHAR, _KIND_HEX, _KIND_HEXCHAR, _KIND_VER = range(5)


def _code_key(code: str) -> int:
    b = code.encode("ascii")
    return (b[0] << 16) | (b[1] << 8) | b[2]


#: code key -> (offset, length, kind) of the MQMD field it sets.
_FAST_CODES: dict[int, tuple[int, int, int]] = {}
for _code, (_field, _kind) in CODES.items():
    _f = MQMD.field(_field)
    _k = {"int": _KIND_INT, "char": _KIND_CHAR, "hex": _KIND_HEX, "hexchar": _KIND_HEXCHAR}[_kind]
    if _code == "VER":
        _k = _KIND_VER
    _FAST_CODES[_code_key(_code)] = (MQMD.offsets[_field], _f.length, _k)
#: The MQMD of a message without attribute lines (version 1, defaults).
_MD_TEMPLATE = np.frombuffer(pack_text_md({})[0], dtype=np.uint8)


def _same(win: np.ndarray, vl: np.ndarray) -> bool:
    """True when every row holds the same value as the first."""
    return bool((vl == vl[0]).all() and (win == win[0]).all())


#: Attribute sections (first A line to the end of the last) at most this long
#: are read as one row of bytes per unit by :func:`_fill_group`.
_MAX_TEMPLATE = 4096


def _fill_group(p, at, ce, allowed: bool, crlf: bool):
    """Read the units (rows: ``at``/``ce``, the start and text end of their
    ``k`` A lines, each at least 6 characters) with the codes of row 0.

    Returns ``(rows, got)``: which rows have the codes of row 0 (row 0 among
    them), and for those rows ``(md, version, ok)`` as :func:`_fill_layout`
    gives them, or None when they are not for the fast reader (``allowed``
    False: too many layouts in the block already).

    Rows whose lines also sit at the same offsets as those of row 0 (in
    dmpmqmsg's own files, nearly all) are read as one block of bytes per unit
    (:func:`_fill_template`): their bytes are compared with row 0's in one
    pass (:func:`~dlqlens.capture.scan.rows_like_first`), what is the same in
    every row is read once, from row 0, and only the other values column by
    column. ``crlf`` False (no line of the block ends in CR LF) spares the
    test that such rows have no CR where row 0 has none.
    """
    n, k = at.shape
    rel0, ln0 = at[0] - at[0, 0], ce[0] - at[0]
    length = int(ce[0, -1] - at[0, 0])
    t_rows = np.zeros(0, dtype=np.int64)
    head = p[at[0, 0] + rel0[:, None] + np.arange(2, 6)]  # row 0: code and blank
    layout = ((head[:, 0].astype(np.int32) << 16) | (head[:, 1].astype(np.int32) << 8)
              | head[:, 2])
    spec = _layout_spec(tuple(layout.tolist())) if allowed else None
    if spec is not None and spec is not _PER_CODE and length <= _MAX_TEMPLATE and \
            (head[:, 3] == 32).all():
        # rows laid out as row 0: as long, with row 0's codes and blanks, and
        # their lines ending where row 0's do (the LF, and the byte before it
        # a CR where row 0 has one, and only there). Their k lines then start
        # and end where row 0's do.
        at0 = at[:, 0]
        cand = np.flatnonzero(ce[:, -1] - at0 == length)
        row0 = p[at0[0]:at0[0] + length]
        lf = np.flatnonzero(row0 == 10)
        cr = row0[lf - 1] == 13
        must = np.concatenate([lf, lf[cr] - 1, (rel0[:, None] + np.arange(2, 6)).ravel()])
        if crlf and not cr.all():
            no_cr = (p[at0[cand][:, None] + lf[~cr] - 1] != 13).all(axis=1)
            cand = cand[no_cr]
        same, match = rows_like_first(p, at0[cand], length, must)
        t_rows = cand if match.all() else cand[match]
    rows = np.zeros(n, dtype=bool)
    rows[t_rows] = True
    rest = np.flatnonzero(~rows)
    if len(rest):
        a = at[rest]
        keys = (p[a + 2].astype(np.int32) << 16) | (p[a + 3].astype(np.int32) << 8) | p[a + 4]
        k_rows = rest[(keys == layout).all(axis=1)]
        rows[k_rows] = True
    else:
        k_rows = rest
    if spec is None:
        return rows, None
    if not len(k_rows):
        return rows, _fill_template(p, at[t_rows, 0], same, rel0, ln0, spec)
    # rows at other offsets: value by value (the blank after each code too)
    blank = (p[at[k_rows] + 5] == 32).all(axis=1)
    got_k = _fill_layout(p, at[k_rows], ce[k_rows], layout, spec)
    if not len(t_rows):
        md, ver, good = got_k
        return rows, (md, ver, good & blank)
    got_t = _fill_template(p, at[t_rows, 0], same, rel0, ln0, spec)
    where = np.cumsum(rows) - 1  # row -> its place among the rows read
    md = np.empty((int(rows.sum()), len(_MD_TEMPLATE)), dtype=np.uint8)
    ver = np.empty(len(md), dtype=np.int32)
    good = np.empty(len(md), dtype=bool)
    for r, (g_md, g_ver, g_ok) in ((where[t_rows], got_t), (where[k_rows], got_k)):
        md[r], ver[r], good[r] = g_md, g_ver, g_ok
    good[where[k_rows]] &= blank
    return rows, (md, ver, good)


_HEX_DIGITS = re.compile(rb"[0-9A-Fa-f]*")
_DECIMAL = re.compile(rb"-?[0-9]{1,10}")


_POW10_INT = 10 ** np.arange(11, dtype=np.int64)[::-1]


def _fixed_decimals(p, at, length: int):
    """:func:`decimals` of the values ``p[at[i]:at[i] + length]`` (all
    ``length`` characters long)."""
    n = len(at)
    if not 1 <= length <= 11:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    w = windows(p, at, length)
    d = w - np.uint8(48)
    neg = w[:, 0] == 45
    valid = d < 10
    valid[:, 0] |= neg
    ok = valid.all(axis=1) & (length - neg >= 1) & (length - neg <= 10)
    d = d.astype(np.int64)
    d[:, 0] *= ~neg
    v = d @ _POW10_INT[11 - length:]
    v = np.where(neg, -v, v)
    ok &= (v >= -2**31) & (v < 2**31)
    return v, ok


#: The kinds of :func:`dlqlens.capture.scan.template_fields`.
_LATE_KINDS = {"int": 0, "ver": 1, "char": 2, "hex": 3, "hexchar": 4}


def _fill_template(p, at0, same, rel, ln, spec):
    """:func:`_fill_layout` for units whose attribute sections start at
    ``at0``, all with their lines at offsets ``rel`` and of lengths ``ln``
    (those of row 0), and the codes and blanks of row 0, valid (``spec``);
    ``same`` tells the bytes of the section that are row 0's in every row."""
    n = len(at0)
    # bytes of each value that differ from row 0's somewhere
    csum = np.concatenate([[0], np.cumsum(~same)])
    vo = rel + 6
    vl = ln - 6
    diff = csum[vo + vl] - csum[vo]
    row = _MD_TEMPLATE.copy()
    ok = True
    version = 1
    ints, int_at4, ver_i, chars, hexes = spec
    code_kind = {}
    for j, a4 in zip(ints.tolist(), int_at4.tolist()):
        code_kind[j] = ("int", a4 * 4, 4)
    if ver_i >= 0:
        code_kind[int(ints[ver_i])] = ("ver", int(int_at4[ver_i]) * 4, 4)
    for size, js, ats in chars:
        for j, a in zip(js.tolist(), ats):
            code_kind[j] = ("char", a, size)
    for width, js, ats, hexchar in hexes:
        hc = set(hexchar.tolist())
        for i, (j, a) in enumerate(zip(js.tolist(), ats)):
            code_kind[j] = ("hexchar" if i in hc else "hex", a, width // 2)
    row0 = p[at0[0]:at0[0] + len(same)].tobytes()
    late_int, late = [], []
    for j, (kind, a, size) in code_kind.items():
        o, length = int(vo[j]), int(vl[j])
        if diff[j]:
            if kind in ("int", "ver"):
                late_int.append((j, kind, a))
            else:
                late.append((j, kind, a, size))
            continue
        v = row0[o:o + length]
        if kind in ("int", "ver"):
            good = _DECIMAL.fullmatch(v) is not None
            x = int(v) if good else 0
            good = good and -2**31 <= x < 2**31
            if kind == "ver":
                x = x if x in (1, 2) else 2
                version = x
            if good:
                row[a:a + 4] = np.frombuffer(x.to_bytes(4, "little", signed=True), np.uint8)
            ok &= good
        elif kind == "char":
            row[a:a + size] = np.frombuffer(v[:size].ljust(size, b" "), np.uint8)
        else:
            good = length == 2 * size and _HEX_DIGITS.fullmatch(v) is not None
            if good:
                raw = bytes.fromhex(v.decode("ascii"))
                good = kind == "hex" or raw.isascii()
                row[a:a + size] = np.frombuffer(raw, np.uint8)
            ok &= good
    md = np.empty((n, len(_MD_TEMPLATE)), dtype=np.uint8)
    md[:] = row
    okv = np.full(n, ok)
    ver = np.full(n, version, dtype=np.int32)
    if (late_int or late) and compiled("template_fields"):
        # every unit's late values in one C pass (the numpy steps below are
        # the reference: tests/capture/test_text_fast_readers.py reads with
        # each, against the line reader)
        fields = [(_LATE_KINDS[kind], int(vo[j]), int(vl[j]), a, 4) for j, kind, a in late_int]
        fields += [(_LATE_KINDS[kind], int(vo[j]), int(vl[j]), a, size)
                   for j, kind, a, size in late]
        template_fields(p, at0, np.array(fields, dtype=np.int64), md, okv.view(np.uint8), ver)
        return md, ver, okv
    if late_int:
        md32 = md.view("<i4")
        for j, kind, a in late_int:
            v, good = _fixed_decimals(p, at0 + vo[j], int(vl[j]))
            okv &= good
            if kind == "ver":
                v = np.where((v == 1) | (v == 2), v, 2)
                ver = v.astype(np.int32)
            md32[:, a // 4] = v
    for j, kind, a, size in late:
        o, length = int(vo[j]), int(vl[j])
        if kind == "char":
            use = min(length, size)
            md[:, a:a + use] = windows(p, at0 + o, use)
            md[:, a + use:a + size] = 0x20
            continue
        if length != 2 * size:
            okv[:] = False
            continue
        raw, good = hex_values(windows(p, at0 + o, length))
        if kind == "hexchar":
            good &= (raw < 0x80).all(axis=1)
        okv &= good
        md[:, a:a + size] = raw
    return md, ver, okv


def _fill_layout(p, at, ce, layout, spec):
    """The MQMD block, version and ok flag of the units whose attribute lines
    start at bytes ``at`` (their text ending at ``ce``; one row per unit) and
    have the code sequence ``layout``, whose :func:`_layout_spec` is
    ``spec`` (not None); ``ok`` is False for rows with a value the line
    reader would report.

    The values of each kind (MQLONG, characters, hex of one width) are read
    together; a column holding the same text in every row is read once.
    """
    if spec is _PER_CODE:
        return _fill_layout_codes(p, at, ce, layout)
    ints, int_at4, ver, chars, hexes = spec
    md, md32, version, ok, value_starts, value_lengths = _layout_rows(at, ce)
    if len(ints):
        vl = value_lengths[:, ints]
        w = _values(p, value_starts[:, ints], 12)
        vals, good = _columns(w, vl, decimals)
        ok &= good
        if ver >= 0:
            v = vals[:, ver]
            v = np.where((v == 1) | (v == 2), v, 2)
            vals[:, ver] = v
            version = v.astype(np.int32)
        md32[:, int_at4] = vals
    for size, js, ats in chars:
        vl = value_lengths[:, js]
        w = _values(p, value_starts[:, js], size)
        if (vl < size).any():
            w = np.where(np.arange(size) < vl[:, :, None], w, np.uint8(0x20))
        for i, a in enumerate(ats):
            md[:, a:a + size] = w[:, i]
    for width, js, ats, hexchar in hexes:
        vl = value_lengths[:, js]
        w = _values(p, value_starts[:, js], width)
        raw, good = _columns(w, vl, hex_values)
        good &= (vl == width).all(axis=1)
        if len(hexchar):
            good &= (raw[:, hexchar] < 0x80).all(axis=(1, 2))
        ok &= good
        for i, a in enumerate(ats):
            md[:, a:a + width // 2] = raw[:, i]
    return md, version, ok


def _values(p: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """``(n, k, width)`` bytes from ``at`` (``(n, k)`` offsets)."""
    n, k = at.shape
    return rows_of(p, at.ravel(), width).view(np.uint8).reshape(n, k, width)


def _columns(w: np.ndarray, vl: np.ndarray, read):
    """``read`` (:func:`decimals` or :func:`hex_values`) over the values
    ``w`` ``(n, k, width)`` of lengths ``vl`` ``(n, k)``: ``(values (n, k,
    ...), ok (n,))``. A column whose text is the same in every row is read
    once (and its verdict holds for every row)."""
    n, k, width = w.shape
    args = (vl,) if read is decimals else ()
    # (the bytes after a value, from the next line, do not count)
    flat = w.reshape(n, k * width)
    eq = np.logical_and.reduce(flat == flat[0], axis=0).reshape(k, width)
    eq |= np.arange(width) >= vl[0][:, None]
    same = eq.all(axis=1) & (vl == vl[0]).all(axis=0)
    if same.all():
        v0, g0 = read(w[0], *(a[0] for a in args))
        return np.broadcast_to(v0, (n,) + v0.shape).copy(), np.full(n, bool(g0.all()))
    ok = np.ones(n, dtype=bool)
    c, d = np.flatnonzero(same), np.flatnonzero(~same)
    v, g = read(w[:, d].reshape(n * len(d), width), *(a[:, d].reshape(-1) for a in args))
    v = v.reshape((n, len(d)) + v.shape[1:])
    ok &= g.reshape(n, len(d)).all(axis=1)
    if not len(c):
        return v, ok
    out = np.empty((n, k) + v.shape[2:], dtype=v.dtype)
    out[:, d] = v
    v0, g0 = read(w[0, c], *(a[0, c] for a in args))
    out[:, c] = v0
    if not g0.all():
        ok[:] = False
    return out, ok


#: layout (code keys) -> how :func:`_fill_layout` reads it (None: not at
#: all; _PER_CODE: code by code, two codes setting one field)
_SPECS: dict[tuple, object] = {}
_PER_CODE = object()


_ALWAYS_KEYS = [frozenset(_code_key(c) for c in group) for group in _ALWAYS]
_V2_KEYS = [frozenset([_code_key(c)]) for c in _V2]
_VER_KEY = _code_key("VER")


def _c_tables() -> tuple:
    """What :func:`dlqlens.capture.scan.dmp_units` reads the attribute lines
    with (the same codes, kinds and rules as :func:`_layout_spec`)."""
    kinds = {_KIND_INT: 0, _KIND_VER: 1, _KIND_CHAR: 2, _KIND_HEX: 3, _KIND_HEXCHAR: 4}
    keys = list(_FAST_CODES)
    codes = np.array([(k, _FAST_CODES[k][0], _FAST_CODES[k][1], kinds[_FAST_CODES[k][2]])
                      for k in keys], dtype=np.int64)

    def masks(groups):
        return np.array([sum(1 << keys.index(k) for k in g) for g in groups], dtype=np.uint32)

    next_col = np.full(len(_MD_TEMPLATE), -1, dtype=np.int32)
    next_col[_MD_CHAR_COLUMNS[:-1]] = _MD_CHAR_COLUMNS[1:]
    return (codes, masks(_ALWAYS_KEYS), masks(_V2_KEYS), keys.index(_VER_KEY),
            np.ascontiguousarray(_MD_TEMPLATE), next_col)


def _complete(layout: tuple) -> bool:
    """Does ``layout`` hold every line dmpmqmsg writes (those of MQMD version
    2 too when it has a ``VER`` line)? A unit without one goes to the line
    reader, which says which field the capture does not hold."""
    have = set(layout)
    need = _ALWAYS_KEYS + (_V2_KEYS if _VER_KEY in have else [])
    return all(not have.isdisjoint(g) for g in need)


def _layout_spec(layout: tuple):
    if layout in _SPECS:
        return _SPECS[layout]
    spec = None
    if len(set(layout)) == len(layout) and all(c in _FAST_CODES for c in layout) and \
            _complete(layout):
        fields = [_FAST_CODES[c][0] for c in layout]
        if len(set(fields)) != len(fields):
            spec = _PER_CODE
        else:
            ints, int_at4, ver = [], [], -1
            chars: dict[int, tuple[list, list]] = {}
            hexes: dict[int, tuple[list, list, list]] = {}
            for j, c in enumerate(layout):
                at, size, kind = _FAST_CODES[c]
                if kind in (_KIND_INT, _KIND_VER):
                    if kind == _KIND_VER:
                        ver = len(ints)
                    ints.append(j)
                    int_at4.append(at // 4)
                elif kind == _KIND_CHAR:
                    js, ats = chars.setdefault(size, ([], []))
                    js.append(j)
                    ats.append(at)
                else:
                    js, ats, hc = hexes.setdefault(2 * size, ([], [], []))
                    if kind == _KIND_HEXCHAR:
                        hc.append(len(js))
                    js.append(j)
                    ats.append(at)
            spec = (np.array(ints, dtype=np.intp), np.array(int_at4, dtype=np.intp), ver,
                    [(s, np.array(js, dtype=np.intp), ats) for s, (js, ats) in chars.items()],
                    [(w, np.array(js, dtype=np.intp), ats, np.array(hc, dtype=np.intp))
                     for w, (js, ats, hc) in hexes.items()])
    if len(_SPECS) >= 4096:
        _SPECS.clear()
    _SPECS[layout] = spec
    return spec


def _layout_rows(at: np.ndarray, ce: np.ndarray):
    """What the layout fillers start from, for units whose A lines start at
    ``at`` and whose text ends at ``ce`` (``(n, lines)``): MQMD rows set to the
    defaults, their int32 view (MQLONG fields are at multiples of 4),
    versions (1), ok flags, and where each attribute value starts (after
    ``'A xxx '``) and how long it is."""
    n = len(at)
    md = np.empty((n, len(_MD_TEMPLATE)), dtype=np.uint8)
    md[:] = _MD_TEMPLATE
    value_starts = at + 6
    return (md, md.view("<i4"), np.ones(n, dtype=np.int32), np.ones(n, dtype=bool),
            value_starts, ce - value_starts)


def _fill_layout_codes(p, at, ce, layout):
    """:func:`_fill_layout` code by code, in the order of ``layout`` (for
    layouts in which two codes set the same field: the last one counts)."""
    layout = [int(c) for c in layout]
    n = len(at)
    md, md32, version, ok, value_starts, value_lengths = _layout_rows(at, ce)
    for j, c in enumerate(layout):
        at, size, kind = _FAST_CODES[c]
        vs = value_starts[:, j]
        vl = value_lengths[:, j]
        if kind in (_KIND_INT, _KIND_VER):
            w = windows(p, vs, int(min(max(vl.max(), 1), 12)))
            if _same(w, vl):
                val, good = decimals(w[:1], vl[:1])
                if not good[0]:
                    ok[:] = False
                val = np.repeat(val, n)
            else:
                val, good = decimals(w, vl)
                ok &= good
            if kind == _KIND_VER:
                val = np.where((val == 1) | (val == 2), val, 2)
                version = val.astype(np.int32)
            md32[:, at // 4] = val
        elif kind == _KIND_CHAR:
            w = windows(p, vs, size)
            if (vl >= size).all():
                md[:, at:at + size] = w
            else:
                md[:, at:at + size] = np.where(np.arange(size) < vl[:, None], w, 0x20)
        else:
            w = windows(p, vs, 2 * size)
            good = vl == 2 * size
            if _same(w, vl):
                raw, g = hex_values(w[:1])
                good &= g[0]
                raw = np.broadcast_to(raw, (n, size))
            else:
                raw, g = hex_values(w)
                good &= g
            if kind == _KIND_HEXCHAR:
                good &= (raw < 0x80).all(axis=1)
            ok &= good
            md[:, at:at + size] = raw
    return md, version, ok


#: The tables of :func:`dlqlens.capture.scan.dmp_units` (:func:`_c_tables`).
C_TABLES = _c_tables()
