/*
 * dlqlens.decode._fixed: the byte loops of the structure decoder.
 *
 * fields (dlqlens.decode.fixed.decode_fixed): one pass over the rows of a block of
 * structures (an MQMD, an MQDLH per row) takes every wanted field out of each
 * row while the row is in the cache: MQLONG fields as native int32 in the
 * row's byte order, MQBYTE fields copied, MQCHAR fields translated to ASCII
 * and cut of their trailing blanks, ready to be an Arrow string array.
 * put_times (dlqlens.decode.records.put_timestamp): PutDate and PutTime
 * strings to UTC microseconds.
 *
 * Built when a C compiler is present at install (setup.py marks it optional);
 * dlqlens.decode.fixed keeps the numpy version of each step, which is the
 * reference the tests compare this module against.
 *
 * Only the buffer protocol is used (no numpy headers): the caller allocates
 * every output and passes it as a writable buffer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { KIND_LONG = 0, KIND_BYTES = 1, KIND_CHARS = 2 };

typedef struct {
    Py_ssize_t offset, length;
    int kind;
    Py_buffer out, offsets;   /* offsets: KIND_CHARS only */
    int has_out, has_offsets;
    Py_ssize_t cursor;        /* KIND_CHARS: bytes written so far */
    int failed;               /* KIND_CHARS: a byte with no ASCII character */
} Spec;

static const uint64_t ONES = 0x0101010101010101ULL, HIGHS = 0x8080808080808080ULL,
                      BLANKS = 0x2020202020202020ULL;

static inline uint64_t
load64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* Unaligned loads and stores: a caller's buffer need not be aligned. */
static inline int32_t
get_i32(const void *base, Py_ssize_t i)
{
    int32_t v;
    memcpy(&v, (const uint8_t *)base + 4 * i, 4);
    return v;
}

static inline void
put_i32(void *base, Py_ssize_t i, int32_t v)
{
    memcpy((uint8_t *)base + 4 * i, &v, 4);
}

static inline void
put_i64(void *base, Py_ssize_t i, int64_t v)
{
    memcpy((uint8_t *)base + 8 * i, &v, 8);
}

static inline uint32_t
load_long(const uint8_t *p, int big)
{
    uint32_t v;
    memcpy(&v, p, 4);
    /* the host is little-endian or big-endian; swap when the row's order is
     * not the host's */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    int swap = !big;
#else
    int swap = big;
#endif
    if (swap)
        v = ((v & 0xFFu) << 24) | ((v & 0xFF00u) << 8) | ((v >> 8) & 0xFF00u) | (v >> 24);
    return v;
}

/* The end (1..8) of the last byte of the 8-byte word w (as loaded from
 * memory) that is not an ASCII blank; 0 when all eight are blanks. */
static inline Py_ssize_t
word_end(uint64_t w)
{
    uint64_t x = w ^ BLANKS;   /* a blank byte becomes 0 */
    if (x == 0)
        return 0;
#if defined(__GNUC__)
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return 8 - (__builtin_ctzll(x) >> 3);
#else
    return 8 - (__builtin_clzll(x) >> 3);
#endif
#else
    uint8_t b[8];
    memcpy(b, &w, 8);
    Py_ssize_t e = 8;
    while (b[e - 1] == 0x20)
        e--;
    return e;
#endif
}

/* One MQCHAR field of one row into dst: translated to ASCII (the identity
 * below 0x80 when ident), its length without trailing ASCII blanks returned;
 * *bad set when a byte has no ASCII character or is a NUL (the caller then
 * decodes the field the general way). The blanks are found a word at a time
 * as the bytes are written: the end is that of the last word not all blank. */
static inline Py_ssize_t
chars_into(uint8_t *dst, const uint8_t *src, Py_ssize_t len, const uint8_t *table,
           int ident, int *bad)
{
    Py_ssize_t i = 0, end = 0;
    uint64_t flags = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        if (ident) {
            w = load64(src + i);
            /* a high bit (no ASCII character) or a zero byte */
            flags |= (w | ((w - ONES) & ~w)) & HIGHS;
        } else {
            uint8_t t[8];
            for (int c = 0; c < 8; c++)
                t[c] = table[src[i + c]];
            memcpy(&w, t, 8);
            flags |= ((w - ONES) & ~w) & HIGHS;   /* a zero byte: none */
        }
        memcpy(dst + i, &w, 8);
        Py_ssize_t e = word_end(w);
        end = e ? i + e : end;
    }
    for (; i < len; i++) {
        uint8_t c = ident ? (src[i] < 0x80 ? src[i] : 0) : table[src[i]];
        flags |= c == 0;
        dst[i] = c;
        end = c != 0x20 ? i + 1 : end;
    }
    if (flags)
        *bad = 1;
    return end;
}

static void
release_specs(Spec *specs, Py_ssize_t k)
{
    for (Py_ssize_t j = 0; j < k; j++) {
        if (specs[j].has_out)
            PyBuffer_Release(&specs[j].out);
        if (specs[j].has_offsets)
            PyBuffer_Release(&specs[j].offsets);
    }
    PyMem_Free(specs);
}

/* fields(block, big_endian, table, specs) -> list of int.
 *
 * block: an (n, width) uint8 buffer whose rows may be strided but whose
 * bytes within a row are adjacent. big_endian: n bytes, nonzero where the
 * row's integers are big-endian. table: 256 bytes, the ASCII byte of each
 * byte of the rows' character set (0 where none), or None (ASCII: bytes of
 * 0x80 and up have none). specs: a sequence of (offset, length, kind, out)
 * or, for KIND_CHARS, (offset, length, kind, out, offsets):
 *   KIND_LONG  out int32[n], the field's value in the row's byte order
 *   KIND_BYTES out uint8[n * length], the field's bytes, row after row
 *   KIND_CHARS out uint8[n * length] and offsets int32[n + 1]: the values
 *              (translated, trailing blanks cut) one after another, as an
 *              Arrow string array's data and offsets
 * Returns, per spec, the bytes written for KIND_CHARS (or -1 when some row's
 * field holds a NUL or a byte without an ASCII character: decode that field
 * the general way) and 0 for the others.
 *
 * Raises ValueError when a buffer is too small, a field lies outside the
 * rows, the block is not 2-D bytes with adjacent bytes in a row, or a kind
 * is unknown; nothing is written then. */
static PyObject *
fields(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *block_obj, *big_obj, *table_obj, *spec_seq;
    if (!PyArg_ParseTuple(args, "OOOO", &block_obj, &big_obj, &table_obj, &spec_seq))
        return NULL;
    Py_buffer block, big, table;
    if (PyObject_GetBuffer(block_obj, &block, PyBUF_STRIDED_RO) < 0)
        return NULL;
    if (block.ndim != 2 || block.itemsize != 1 || block.strides[1] != 1) {
        PyBuffer_Release(&block);
        PyErr_SetString(PyExc_ValueError,
                        "fields: block must be 2-D bytes with the bytes of a row adjacent");
        return NULL;
    }
    Py_ssize_t n = block.shape[0], width = block.shape[1], rstride = block.strides[0];
    if (PyObject_GetBuffer(big_obj, &big, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&block);
        return NULL;
    }
    int has_table = table_obj != Py_None;
    if (has_table && PyObject_GetBuffer(table_obj, &table, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&block);
        PyBuffer_Release(&big);
        return NULL;
    }
    /* a tuple of the specs: nothing a spec's __index__ runs can change it */
    PyObject *seq = PySequence_Tuple(spec_seq);
    Py_ssize_t k = seq ? PyTuple_GET_SIZE(seq) : 0;
    Spec *specs = seq ? PyMem_Calloc(k ? k : 1, sizeof(Spec)) : NULL;
    PyObject *result = NULL;
    if (seq == NULL || specs == NULL) {
        if (seq != NULL)
            PyErr_NoMemory();
        goto done;
    }
    if (big.len < n) {
        PyErr_Format(PyExc_ValueError, "fields: big_endian holds %zd bytes, %zd rows", big.len, n);
        goto done;
    }
    if (has_table && table.len != 256) {
        PyErr_Format(PyExc_ValueError, "fields: table holds %zd bytes, not 256", table.len);
        goto done;
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *t = PyTuple_GET_ITEM(seq, j);
        Spec *s = &specs[j];
        PyObject *out, *offs = NULL;
        if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "nniO|O", &s->offset, &s->length, &s->kind,
                                                    &out, &offs)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "fields: spec %zd is not a tuple", j);
            goto done;
        }
        if (s->offset < 0 || s->length < 0 || s->offset > width || s->length > width - s->offset) {
            PyErr_Format(PyExc_ValueError,
                         "fields: spec %zd: %zd bytes at %zd lie outside rows of %zd bytes",
                         j, s->length, s->offset, width);
            goto done;
        }
        if (s->kind < KIND_LONG || s->kind > KIND_CHARS || (s->kind == KIND_LONG && s->length != 4)
            || (s->kind == KIND_CHARS) != (offs != NULL)) {
            PyErr_Format(PyExc_ValueError, "fields: spec %zd: kind %d with length %zd%s",
                         j, s->kind, s->length,
                         offs != NULL ? " and offsets" : " and no offsets");
            goto done;
        }
        if (PyObject_GetBuffer(out, &s->out, PyBUF_WRITABLE) < 0)
            goto done;
        s->has_out = 1;
        if (n && s->length > PY_SSIZE_T_MAX / n) {
            PyErr_Format(PyExc_ValueError, "fields: spec %zd: %zd rows of %zd bytes overflow",
                         j, n, s->length);
            goto done;
        }
        Py_ssize_t need = s->length * n;   /* KIND_LONG: length 4 */
        if (s->out.len < need) {
            PyErr_Format(PyExc_ValueError, "fields: spec %zd: out holds %zd bytes, %zd needed",
                         j, s->out.len, need);
            goto done;
        }
        if (offs != NULL) {
            if (PyObject_GetBuffer(offs, &s->offsets, PyBUF_WRITABLE) < 0)
                goto done;
            s->has_offsets = 1;
            if (s->offsets.len / 4 < n + 1) {
                PyErr_Format(PyExc_ValueError,
                             "fields: spec %zd: offsets hold %zd bytes, %zd needed",
                             j, s->offsets.len, 4 * (n + 1));
                goto done;
            }
            if (need > INT32_MAX) {
                PyErr_Format(PyExc_ValueError,
                             "fields: spec %zd: %zd bytes do not fit int32 offsets", j, s->length * n);
                goto done;
            }
        }
    }
    const uint8_t *tab = has_table ? (const uint8_t *)table.buf : NULL;
    uint8_t ascii[256];
    if (tab == NULL) {
        for (int c = 0; c < 256; c++)
            ascii[c] = c < 0x80 ? (uint8_t)c : 0;
        tab = ascii;
    }
    int ident = 1;
    for (int c = 0; c < 256 && ident; c++)
        ident = tab[c] == (c < 0x80 ? c : 0);
    const uint8_t *rows = (const uint8_t *)block.buf, *bigs = (const uint8_t *)big.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = 0; j < k; j++)
        if (specs[j].kind == KIND_CHARS)
            put_i32(specs[j].offsets.buf, 0, 0);
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint8_t *row = rows + i * rstride;
        int b = bigs[i] != 0;
        for (Py_ssize_t j = 0; j < k; j++) {
            Spec *s = &specs[j];
            const uint8_t *src = row + s->offset;
            switch (s->kind) {
            case KIND_LONG:
                put_i32(s->out.buf, i, (int32_t)load_long(src, b));
                break;
            case KIND_BYTES:
                memcpy((uint8_t *)s->out.buf + i * s->length, src, s->length);
                break;
            default: {
                uint8_t *dst = (uint8_t *)s->out.buf + s->cursor;
                if (!s->failed)
                    s->cursor += chars_into(dst, src, s->length, tab, ident, &s->failed);
                put_i32(s->offsets.buf, i + 1, (int32_t)s->cursor);
            }
            }
        }
    }
    Py_END_ALLOW_THREADS
    result = PyList_New(k);
    if (result == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < k; j++) {
        Py_ssize_t v = specs[j].kind != KIND_CHARS ? 0 : specs[j].failed ? -1 : specs[j].cursor;
        PyObject *o = PyLong_FromSsize_t(v);
        if (o == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, j, o);
    }
done:
    if (specs != NULL)
        release_specs(specs, k);
    Py_XDECREF(seq);
    if (has_table)
        PyBuffer_Release(&table);
    PyBuffer_Release(&big);
    PyBuffer_Release(&block);
    return result;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (as
 * numpy's datetime64 counts them). */
static inline int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static inline int
leap_year(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* The value of the two ASCII digits at p, or -1 when either is no digit. */
static inline int
two_digits(const uint8_t *p)
{
    unsigned a = (unsigned)p[0] - '0', b = (unsigned)p[1] - '0';
    return a < 10 && b < 10 ? (int)(a * 10 + b) : -1;
}

/* Get the int32 offsets and the data of a string array as buffers; check
 * that the offsets rise and stay inside the data. */
static int
string_array(PyObject *pair, Py_ssize_t n, const char *what, Py_buffer *offs, Py_buffer *data)
{
    PyObject *o, *d;
    if (!PyTuple_Check(pair) || !PyArg_ParseTuple(pair, "OO", &o, &d)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "put_times: %s is not (offsets, data)", what);
        return -1;
    }
    if (PyObject_GetBuffer(o, offs, PyBUF_SIMPLE) < 0)
        return -1;
    if (PyObject_GetBuffer(d, data, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(offs);
        return -1;
    }
    const void *off = offs->buf;
    Py_ssize_t bad = -1;
    int short_offsets = offs->len / 4 < n + 1;
    if (short_offsets)
        bad = n;
    else
        for (Py_ssize_t i = 0; i < n && bad < 0; i++) {
            int32_t a = get_i32(off, i), b = get_i32(off, i + 1);
            if (a < 0 || a > b || b > data->len)
                bad = i;
        }
    if (bad >= 0) {
        if (short_offsets)
            PyErr_Format(PyExc_ValueError, "put_times: %s offsets hold %zd bytes, %zd needed",
                         what, offs->len, 4 * (n + 1));
        else
            PyErr_Format(PyExc_ValueError,
                         "put_times: %s value %zd spans %d..%d, outside the %zd bytes of data",
                         what, bad, (int)get_i32(off, bad), (int)get_i32(off, bad + 1), data->len);
        PyBuffer_Release(offs);
        PyBuffer_Release(data);
        return -1;
    }
    return 0;
}

/* put_times(date, time, micros, ok) -> None.
 *
 * date, time: (offsets, data) of n PutDate and PutTime strings (int32
 * offsets, n + 1 of them; a null is an empty string). micros: int64[n]
 * written with the microseconds since 1970-01-01 00:00 UTC; ok: uint8[n]
 * written 1 where the pair is a time, 0 (micros 0) where not. PutDate is
 * YYYYMMDD, PutTime HHMMSSTH or HHMMSS (IBM MQ, MQMD PutDate and PutTime:
 * both UTC); a day the month does not have, an hour past 23, a minute past
 * 59 or a second past 61 is no time; seconds 60 and 61 (leap seconds) are
 * read as 59.99. Raises ValueError when an output is too small or the
 * offsets do not rise inside their data. */
static PyObject *
put_times(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *date_obj, *time_obj;
    Py_buffer micros, ok, doff, ddata, toff, tdata;
    if (!PyArg_ParseTuple(args, "OOw*w*", &date_obj, &time_obj, &micros, &ok))
        return NULL;
    Py_ssize_t n = ok.len;
    PyObject *result = NULL;
    if (micros.len / 8 < n) {
        PyErr_Format(PyExc_ValueError, "put_times: micros hold %zd bytes, %zd needed",
                     micros.len, 8 * n);
        goto out;
    }
    if (string_array(date_obj, n, "date", &doff, &ddata) < 0)
        goto out;
    if (string_array(time_obj, n, "time", &toff, &tdata) < 0) {
        PyBuffer_Release(&doff);
        PyBuffer_Release(&ddata);
        goto out;
    }
    const void *dof = doff.buf, *tof = toff.buf;
    const uint8_t *dd = (const uint8_t *)ddata.buf, *td = (const uint8_t *)tdata.buf;
    uint8_t *good = (uint8_t *)ok.buf;
    static const int MONTH_DAYS[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t d0 = get_i32(dof, i), t0 = get_i32(tof, i);
        int32_t dlen = get_i32(dof, i + 1) - d0, tlen = get_i32(tof, i + 1) - t0;
        /* read only where a value of 6 or 8 bytes lies (an empty buffer may be NULL) */
        const uint8_t *d = dlen == 8 ? dd + d0 : NULL, *t = tlen == 8 || tlen == 6 ? td + t0 : NULL;
        int c1 = -1, c2 = -1, mo = -1, dy = -1, hh = -1, mi = -1, ss = -1, hs = 0;
        if (dlen == 8) {
            c1 = two_digits(d);
            c2 = two_digits(d + 2);
            mo = two_digits(d + 4);
            dy = two_digits(d + 6);
        }
        if (tlen == 8 || tlen == 6) {
            hh = two_digits(t);
            mi = two_digits(t + 2);
            ss = two_digits(t + 4);
            if (tlen == 8)
                hs = two_digits(t + 6);
        }
        int64_t year = (int64_t)c1 * 100 + c2;
        int fine = c1 >= 0 && c2 >= 0 && mo >= 1 && mo <= 12 && dy >= 1 && hh >= 0 && hh < 24
                   && mi >= 0 && mi < 60 && ss >= 0 && ss < 62 && hs >= 0;
        if (fine)
            fine = dy <= MONTH_DAYS[mo - 1] + (mo == 2 && leap_year(year));
        if (fine) {
            if (ss >= 60) {
                ss = 59;
                hs = 99;
            }
            put_i64(micros.buf, i, ((days_from_civil(year, mo, dy) * 86400 + hh * 3600 + mi * 60
                                     + ss) * 1000000) + (int64_t)hs * 10000);
        } else
            put_i64(micros.buf, i, 0);
        good[i] = (uint8_t)fine;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&doff);
    PyBuffer_Release(&ddata);
    PyBuffer_Release(&toff);
    PyBuffer_Release(&tdata);
    Py_INCREF(Py_None);
    result = Py_None;
out:
    PyBuffer_Release(&micros);
    PyBuffer_Release(&ok);
    return result;
}

static PyMethodDef methods[] = {
    {"fields", fields, METH_VARARGS,
     "Take fixed fields out of every row of a block of structures in one pass."},
    {"put_times", put_times, METH_VARARGS,
     "Microseconds since the epoch (UTC) of MQ PutDate and PutTime strings."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fixed", "The byte loop of the fixed-structure decoder.", -1, methods,
    NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC
PyInit__fixed(void)
{
    return PyModule_Create(&module);
}
