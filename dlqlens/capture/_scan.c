/*
 * dlqlens.capture._scan: the byte loops of the fast text readers (a block's
 * line table, hex runs, rows compared with a first row, the offsets of a
 * short needle).
 *
 * Built when a C compiler is present at install (setup.py marks it optional);
 * dlqlens.capture.scan falls back to numpy versions of the same functions,
 * which are the reference the tests compare this module against.
 *
 * Only the buffer protocol is used (no numpy headers): arrays are passed as
 * buffers, and results come back as bytearrays the caller views with numpy.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* How many LFs base[0:n] holds: the compare results are summed per byte
 * lane (255 steps at most, then added up with a SAD). */
static Py_ssize_t
count_lfs(const uint8_t *base, Py_ssize_t n)
{
    Py_ssize_t count = 0, i = 0;
#ifdef __SSE2__
    const __m128i lf = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (i + 16 <= n) {
        __m128i acc = zero;
        Py_ssize_t stop = i + 255 * 16 < n ? i + 255 * 16 : n;
        for (; i + 16 <= stop; i += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(base + i)), lf));
        __m128i sums = _mm_sad_epu8(acc, zero);
        count += _mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4);
    }
#endif
    for (; i < n; i++)
        count += base[i] == '\n';
    return count;
}

/* The byte at, or 0 past the buffer. */
#define BYTE_AT(at) ((at) < len ? base[at] : 0)

/* line_table(buf, n, eof) -> (starts, ends, words, crlf).
 *
 * The lines of buf[0:n]: ends are the offsets of their LFs (and n for a last
 * line without one when eof is true), starts the offsets of their first
 * bytes (int64 bytearrays); words the little-endian 16-bit word at each start
 * (uint16 bytearray; bytes past the buffer read as 0); crlf whether a CR
 * comes before some line's end. Two passes: count the LFs, then fill. */
static PyObject *
line_table(PyObject *self, PyObject *args)
{
    Py_buffer b;
    Py_ssize_t n;
    int eof;
    if (!PyArg_ParseTuple(args, "y*np", &b, &n, &eof))
        return NULL;
    if (n < 0 || n > b.len) {
        PyBuffer_Release(&b);
        PyErr_Format(PyExc_ValueError, "line_table: n=%zd outside the buffer (%zd bytes)", n, b.len);
        return NULL;
    }
    const uint8_t *base = (const uint8_t *)b.buf;
    Py_ssize_t len = b.len, count;
    Py_BEGIN_ALLOW_THREADS
    count = count_lfs(base, n);
    Py_END_ALLOW_THREADS
    int last = eof && n > 0 && base[n - 1] != '\n';  /* a last line without LF */
    Py_ssize_t lines = count + last;
    PyObject *so = PyByteArray_FromStringAndSize(NULL, lines * 8);
    PyObject *eo = PyByteArray_FromStringAndSize(NULL, lines * 8);
    PyObject *wo = PyByteArray_FromStringAndSize(NULL, lines * 2);
    if (so == NULL || eo == NULL || wo == NULL) {
        Py_XDECREF(so);
        Py_XDECREF(eo);
        Py_XDECREF(wo);
        PyBuffer_Release(&b);
        return NULL;
    }
    int64_t *starts = (int64_t *)PyByteArray_AS_STRING(so);
    int64_t *ends = (int64_t *)PyByteArray_AS_STRING(eo);
    uint16_t *words = (uint16_t *)PyByteArray_AS_STRING(wo);
    int crlf = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t k = 0, i = 0;
    if (lines) {
        starts[0] = 0;
        words[0] = (uint16_t)(BYTE_AT(0) | BYTE_AT(1) << 8);
    }
    /* an LF at e ends line k, and starts line k + 1 (no more LFs than counted
     * are taken, should the buffer change between the passes) */
#define AT_LF(e) do { \
        Py_ssize_t e_ = (e); \
        if (k == count) \
            goto counted; \
        ends[k] = e_; \
        crlf |= e_ > 0 && base[e_ - 1] == '\r'; \
        if (++k < lines) { \
            starts[k] = e_ + 1; \
            words[k] = (uint16_t)(BYTE_AT(e_ + 1) | BYTE_AT(e_ + 2) << 8); \
        } \
    } while (0)
    /* the LFs, 16 bytes at a time */
#ifdef __SSE2__
    const __m128i lf = _mm_set1_epi8('\n');
    for (; i + 16 <= n; i += 16) {
        unsigned mask = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(base + i)), lf));
        while (mask) {
            AT_LF(i + __builtin_ctz(mask));
            mask &= mask - 1;
        }
    }
#endif
    for (; i < n; i++)
        if (base[i] == '\n')
            AT_LF(i);
#undef AT_LF
counted:
    if (last) {
        ends[count] = n;
        crlf |= base[n - 1] == '\r';
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    return Py_BuildValue("(NNNO)", so, eo, wo, crlf ? Py_True : Py_False);
}
#undef BYTE_AT

static uint8_t HEX[256];
/* The byte two hex digits stand for, by the 16-bit word they make in memory;
 * 0xFFFF when either is not a hex digit. */
static uint16_t HEX_PAIR[65536];
/* amqsbcg dump lines as amqsbcg prints n bytes (n = 0..16): the bytes its
 * first 52 columns must hold where they are not hex digits (':' and two
 * blanks after the offset, blanks between the groups of four digits and
 * after the last digit, a blank and the quote), and the mask of those
 * columns; 56 bytes each (7 words, the last 4 bytes outside the line). The
 * offset (columns 0-7) and the digits are checked on their own. */
static uint8_t DUMP_WANT[17][56];
static uint8_t DUMP_MASK[17][56];

/* The whole pairs of hex digits at p[0:n] decoded into out, up to the
 * first pair that is not two hex digits: the digits read (even). Sixteen
 * digits at a time with SSE2 (either case: a digit d - '0' < 10, a letter
 * (c | 0x20) - 'a' < 6), the rest and the pair that stops it pair by pair. */
static inline int64_t
hex_pairs(const uint8_t *p, int64_t n, uint8_t *out)
{
    int64_t i = 0;
#ifdef __SSE2__
    const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9), a = _mm_set1_epi8('a'),
                  five = _mm_set1_epi8(5), ten = _mm_set1_epi8(10), low = _mm_set1_epi16(0xFF),
                  blank = _mm_set1_epi8(0x20);
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        __m128i d = _mm_sub_epi8(v, zero), l = _mm_sub_epi8(_mm_or_si128(v, blank), a);
        __m128i is_d = _mm_cmpeq_epi8(_mm_min_epu8(d, nine), d);
        __m128i is_l = _mm_cmpeq_epi8(_mm_min_epu8(l, five), l);
        if (_mm_movemask_epi8(_mm_or_si128(is_d, is_l)) != 0xFFFF)
            break;
        __m128i nib = _mm_or_si128(_mm_and_si128(is_d, d),
                                   _mm_and_si128(is_l, _mm_add_epi8(l, ten)));
        /* each 16-bit word: its first digit in the low byte, the second above */
        __m128i byte = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(nib, low), 4),
                                    _mm_srli_epi16(nib, 8));
        _mm_storel_epi64((__m128i *)(out + i / 2), _mm_packus_epi16(byte, byte));
    }
#endif
    for (; n - i >= 2; i += 2) {
        uint16_t pair;
        memcpy(&pair, p + i, 2);
        uint16_t v = HEX_PAIR[pair];
        if (v > 0xFF)
            break;
        out[i / 2] = (uint8_t)v;
    }
    return i;
}

/* hex_runs(buf, starts, ends, out, digits) -> bytes written.
 *
 * For each run i (int64 starts[i] <= ends[i], offsets into buf): the hex
 * digits at its start, up to the first byte that is not one (or ends[i]),
 * are counted into digits[i] (int64); their whole pairs are decoded into out,
 * run after run. out must hold sum((ends - starts) // 2) bytes. */
static PyObject *
hex_runs(PyObject *self, PyObject *args)
{
    Py_buffer b, s, e, o, d;
    if (!PyArg_ParseTuple(args, "y*y*y*w*w*", &b, &s, &e, &o, &d))
        return NULL;
    Py_ssize_t nrun = s.len / (Py_ssize_t)sizeof(int64_t);
    const char *err = NULL;
    if (e.len != s.len || d.len != s.len)
        err = "starts, ends and digits differ in length";
    const uint8_t *buf = (const uint8_t *)b.buf;
    const int64_t *st = (const int64_t *)s.buf, *en = (const int64_t *)e.buf;
    int64_t *dig = (int64_t *)d.buf;
    uint8_t *out = (uint8_t *)o.buf;
    Py_ssize_t cap = o.len, w = 0;
    if (err == NULL) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < nrun; i++) {
            int64_t a = st[i], z = en[i];
            if (a < 0 || z > b.len || z < a || w + (z - a) / 2 > cap) {
                err = "a run lies outside the buffer, or out is too small";
                break;
            }
            int64_t j = a + hex_pairs(buf + a, z - a, out + w);
            w += (j - a) / 2;
            if (j < z && !(HEX[buf[j]] & 0xF0))
                j++;
            dig[i] = j - a;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&b);
    PyBuffer_Release(&s);
    PyBuffer_Release(&e);
    PyBuffer_Release(&o);
    PyBuffer_Release(&d);
    if (err != NULL) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    return PyLong_FromSsize_t(w);
}

/* NULL with ValueError(err), or MemoryError for an empty err. */
static PyObject *
raise_error(const char *err)
{
    if (*err)
        PyErr_SetString(PyExc_ValueError, err);
    else
        PyErr_NoMemory();
    return NULL;
}

/* What a matcher returns: the count, or raise_error(err) when err is set. */
static PyObject *
count_or_error(const char *err, Py_ssize_t count)
{
    return err != NULL ? raise_error(err) : PyLong_FromSsize_t(count);
}

/* rows_like_first(buf, at, width, must, same, match) -> rows matching.
 *
 * Rows buf[at[i]:at[i] + width] (int64 at) are compared with row 0: match[i]
 * (uint8) is 1 when row i has row 0's bytes at every column where must
 * (uint8, width) is not 0, and same[c] (uint8, width) is 1 when every
 * matching row has row 0's byte at column c. Compared 8 bytes at a time. */
static PyObject *
rows_like_first(PyObject *self, PyObject *args)
{
    Py_buffer b, a, m, s, t;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "y*y*ny*w*w*", &b, &a, &width, &m, &s, &t))
        return NULL;
    Py_ssize_t n = a.len / (Py_ssize_t)sizeof(int64_t);
    const uint8_t *buf = (const uint8_t *)b.buf;
    const int64_t *at = (const int64_t *)a.buf;
    uint8_t *same = (uint8_t *)s.buf, *match = (uint8_t *)t.buf;
    const char *err = NULL;
    Py_ssize_t matched = 0;
    Py_ssize_t words = 0;
    uint64_t *acc = NULL, *must = NULL;
    if (width < 0 || s.len != width || m.len != width || t.len != n
            || a.len % (Py_ssize_t)sizeof(int64_t))
        err = "must and same must hold width bytes, and match one byte a row";
    else
        words = width / 8 + (width % 8 != 0);  /* (width + 7) / 8 without overflow */
    /* at[i] + width <= b.len, written so that it cannot overflow: 0 <= width
     * and 0 <= b.len, so b.len - width does not; an at[i] near 2**63 used to
     * wrap around to a negative end and pass */
    for (Py_ssize_t i = 0; err == NULL && i < n; i++)
        if (at[i] < 0 || at[i] > (int64_t)(b.len - width))
            err = "a row lies outside the buffer";
    if (err == NULL && n > 0) {
        /* acc: the bytes where a matching row differs from row 0; must as
         * words. Both padded to whole words with zero bytes. */
        acc = PyMem_RawCalloc(words ? words : 1, sizeof(uint64_t));
        must = PyMem_RawCalloc(words ? words : 1, sizeof(uint64_t));
        if (acc == NULL || must == NULL)
            err = "";
        else
            for (Py_ssize_t c = 0; c < width; c++)
                ((uint8_t *)must)[c] = ((const uint8_t *)m.buf)[c] ? 0xFF : 0;
    }
    if (err == NULL && n > 0) {
        Py_BEGIN_ALLOW_THREADS
        const uint8_t *row0 = buf + at[0];
        Py_ssize_t whole = width / 8, tail = width - whole * 8;
        for (Py_ssize_t i = 0; i < n; i++) {
            const uint8_t *r = buf + at[i];
            uint64_t bad = 0, x, y;
            for (Py_ssize_t w = 0; w < whole; w++) {
                memcpy(&x, r + 8 * w, 8);
                memcpy(&y, row0 + 8 * w, 8);
                bad |= (x ^ y) & must[w];
            }
            x = y = 0;
            if (tail) {
                memcpy(&x, r + 8 * whole, (size_t)tail);
                memcpy(&y, row0 + 8 * whole, (size_t)tail);
                bad |= (x ^ y) & must[whole];
            }
            match[i] = bad == 0;
            if (bad)
                continue;
            matched++;
            for (Py_ssize_t w = 0; w < whole; w++) {
                uint64_t u, v;
                memcpy(&u, r + 8 * w, 8);
                memcpy(&v, row0 + 8 * w, 8);
                acc[w] |= u ^ v;
            }
            if (tail)
                acc[whole] |= x ^ y;
        }
        for (Py_ssize_t c = 0; c < width; c++)
            same[c] = ((const uint8_t *)acc)[c] == 0;
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(acc);
    PyMem_RawFree(must);
    PyBuffer_Release(&b);
    PyBuffer_Release(&a);
    PyBuffer_Release(&m);
    PyBuffer_Release(&s);
    PyBuffer_Release(&t);
    return count_or_error(err, matched);
}

/* find_all(buf, needle, end) -> offsets.
 *
 * The offsets of needle in buf[0:end], in order, overlapping ones too (an
 * int64 bytearray). memchr on the first byte, then a compare: the needles
 * of the text readers are short and their first bytes rare. */
static PyObject *
find_all(PyObject *self, PyObject *args)
{
    Py_buffer b, nd;
    Py_ssize_t end;
    if (!PyArg_ParseTuple(args, "y*y*n", &b, &nd, &end))
        return NULL;
    if (end < 0 || end > b.len || nd.len == 0) {
        PyBuffer_Release(&b);
        PyBuffer_Release(&nd);
        PyErr_SetString(PyExc_ValueError, "find_all: end outside the buffer, or an empty needle");
        return NULL;
    }
    const uint8_t *buf = (const uint8_t *)b.buf, *needle = (const uint8_t *)nd.buf;
    Py_ssize_t m = nd.len, cap = 1024, count = 0;
    int64_t *out = PyMem_RawMalloc((size_t)cap * sizeof(int64_t));
    int nomem = out == NULL;
    if (!nomem) {
        Py_BEGIN_ALLOW_THREADS
        Py_ssize_t i = 0;
        while (i + m <= end) {
            const uint8_t *hit = memchr(buf + i, needle[0], (size_t)(end - m + 1 - i));
            if (hit == NULL)
                break;
            i = hit - buf;
            if (memcmp(hit + 1, needle + 1, (size_t)(m - 1)) == 0) {
                if (count == cap) {
                    int64_t *more = PyMem_RawRealloc(out, (size_t)cap * 2 * sizeof(int64_t));
                    if (more == NULL) {
                        nomem = 1;
                        break;
                    }
                    out = more;
                    cap *= 2;
                }
                out[count++] = i;
            }
            i++;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&b);
    PyBuffer_Release(&nd);
    if (nomem) {
        PyMem_RawFree(out);
        return PyErr_NoMemory();
    }
    PyObject *res = PyByteArray_FromStringAndSize((const char *)out, count * (Py_ssize_t)sizeof(int64_t));
    PyMem_RawFree(out);
    return res;
}

/* Template matching of the amqsbcg fast reader (match_lines).
 *
 * A program is an int32 array: the templates of a section's lines, one after
 * another, each ending with OP_END. Tokens (see layout.py, _Matcher._match):
 *   OP_LIT n b1..bn        the n bytes, literally
 *   OP_INT kind off        -?[0-9]{1,10} in the MQLONG range (up to 12 columns)
 *   OP_UINT kind off       [0-9]{1,10}, the same way
 *   OP_Q size kind off     up to a quote within size + 1 columns; the value
 *                          is the size bytes before it, blank-padded
 *   OP_HEX size kind off   2 * size hex digits (either case)
 *   OP_BRACKET             anything up to a ']' ending the line
 * Where a value goes (kind): 0 nowhere; 1 an int32 (little-endian) at off in
 * the unit's MQMD row; 2 an int64 (native) at off in its values row; 3 bytes
 * at off in its MQMD row; 4 bytes at off in its values row; 5 the MQMD
 * Version (an int32 at off: 1 or 2 as printed, 2 for anything else). */
enum { OP_END = 0, OP_LIT = 1, OP_INT = 2, OP_UINT = 3, OP_Q = 4, OP_HEX = 5, OP_BRACKET = 6 };

/* The byte at, or 0 past the buffer (the text readers' blocks are padded
 * with zero bytes: the numpy matcher's windows read those). */
#define AT(i) ((i) >= 0 && (i) < blen ? buf[i] : 0)

static void
put_int(uint8_t *md, uint8_t *vals, int kind, int32_t off, int64_t v)
{
    if (kind == 1 || kind == 5) {
        int32_t x = (int32_t)v;
        if (kind == 5 && v != 1 && v != 2)
            x = 2;
        uint8_t le[4] = {(uint8_t)x, (uint8_t)(x >> 8), (uint8_t)(x >> 16), (uint8_t)(x >> 24)};
        memcpy(md + off, le, 4);
    } else if (kind == 2)
        memcpy(vals + off, &v, 8);
}

/* One line of text buf[start:end] against the template prog[0:...] (up to
 * OP_END): whether it matches; values written as the template says.
 * *next is set to the template's OP_END. */
static inline int
match_one(const uint8_t *buf, Py_ssize_t blen, int64_t start, int64_t end,
          const int32_t *prog, const uint8_t *lits, Py_ssize_t plen, Py_ssize_t *pc_io,
          uint8_t *md, uint8_t *vals, int good)
{
    Py_ssize_t pc = *pc_io;
    int64_t pos = start;
    while (pc < plen && prog[pc] != OP_END) {
        int op = prog[pc];
        if (op == OP_LIT) {
            int32_t n = prog[pc + 1];
            const int32_t *lit = prog + pc + 2;
            if (good && pos >= 0 && pos + n <= blen)
                good = memcmp(buf + pos, lits + pc + 2, (size_t)n) == 0;
            else
                for (int32_t c = 0; c < n && good; c++)
                    good = AT(pos + c) == (uint8_t)lit[c];
            pos += n;
            pc += 2 + n;
        } else if (op == OP_INT || op == OP_UINT) {
            int kind = prog[pc + 1];
            int32_t off = prog[pc + 2];
            pc += 3;
            /* the digits (a '-' first for OP_INT) in 12 columns */
            uint8_t win[12];
            if (pos >= 0 && blen >= 12 && pos <= blen - 12)
                memcpy(win, buf + pos, 12);
            else
                for (int c = 0; c < 12; c++)
                    win[c] = AT(pos + c);
            int nd = 0;
            while (nd < 12) {
                uint8_t b = win[nd];
                if ((uint8_t)(b - '0') < 10 || (nd == 0 && op == OP_INT && b == '-'))
                    nd++;
                else
                    break;
            }
            int neg = win[0] == '-';
            int digits = nd - neg;
            int64_t x = 0;
            int ok = digits >= 1 && digits <= 10;
            for (int c = neg; c < nd; c++) {
                uint8_t d = (uint8_t)(win[c] - '0');
                if (d >= 10)
                    ok = 0;
                else
                    x = x * 10 + d;
            }
            int64_t v = neg ? -x : x;
            ok = ok && v >= -2147483648LL && v < 2147483648LL;
            good = good && ok;
            if (good)
                put_int(md, vals, kind, off, v);
            pos += nd;
        } else if (op == OP_Q) {
            int32_t size = prog[pc + 1];
            int kind = prog[pc + 2];
            int32_t off = prog[pc + 3];
            pc += 4;
            int32_t q = 0;
            if (pos >= 0 && pos + size + 1 <= blen) {
                const uint8_t *hit = memchr(buf + pos, '\'', (size_t)size + 1);
                q = hit == NULL ? size + 1 : (int32_t)(hit - (buf + pos));
            } else
                while (q <= size && AT(pos + q) != '\'')
                    q++;
            if (q > size) {
                good = 0;
                q = 0;
            }
            if (good) {
                uint8_t *dst = kind == 3 ? md + off : kind == 4 ? vals + off : NULL;
                if (dst != NULL) {
                    if (pos >= 0 && pos + q <= blen)
                        memcpy(dst, buf + pos, (size_t)q);
                    else
                        for (int32_t c = 0; c < q; c++)
                            dst[c] = AT(pos + c);
                    memset(dst + q, 0x20, (size_t)(size - q));
                }
            }
            pos += q;
        } else if (op == OP_HEX) {
            int32_t size = prog[pc + 1];
            int kind = prog[pc + 2];
            int32_t off = prog[pc + 3];
            pc += 4;
            uint8_t *dst = kind == 3 ? md + off : kind == 4 ? vals + off : NULL;
            if (good && pos >= 0 && pos <= blen - 2 * (int64_t)size) {
                /* (size <= 2**24 by the program's check: no overflow) */
                for (int32_t c = 0; c < size && good; c++) {
                    uint16_t pair;
                    memcpy(&pair, buf + pos + 2 * c, 2);
                    uint16_t v = HEX_PAIR[pair];
                    if (v > 0xFF)
                        good = 0;
                    else if (dst != NULL)
                        dst[c] = (uint8_t)v;
                }
            } else
                for (int32_t c = 0; c < size && good; c++) {
                    uint8_t hi = HEX[AT(pos + 2 * c)], lo = HEX[AT(pos + 2 * c + 1)];
                    if ((hi | lo) & 0xF0)
                        good = 0;
                    else if (dst != NULL)
                        dst[c] = (uint8_t)(hi << 4 | lo);
                }
            pos += 2 * (int64_t)size;
        } else if (op == OP_BRACKET) {
            pc += 1;
            good = good && pos < end && AT(end > 0 ? end - 1 : 0) == ']';
            pos = end;
        } else {
            return -1;  /* not a program: refused by the caller */
        }
        good = good && pos <= end;
        if (pos > end)
            pos = end;
    }
    *pc_io = pc;
    return good && pos == end;
}

/* trimmed_ends(buf, starts, cend) -> rend.
 *
 * Per line (int64 starts, cend: its first byte and the end of its text), the
 * end of its text without trailing blanks (0x20 only): an int64 bytearray.
 * The amqsbcg fast reader's line ends, one pass. */
static PyObject *
trimmed_ends(PyObject *self, PyObject *args)
{
    Py_buffer b, s, e;
    if (!PyArg_ParseTuple(args, "y*y*y*", &b, &s, &e))
        return NULL;
    const char *err = NULL;
    Py_ssize_t n = s.len / 8;
    const int64_t *st = s.buf, *ce = e.buf;
    const uint8_t *buf = b.buf;
    if (s.len % 8 || e.len != s.len)
        err = "trimmed_ends: starts and cend differ in length";
    for (Py_ssize_t i = 0; err == NULL && i < n; i++)
        if (st[i] < 0 || ce[i] < st[i] || ce[i] > b.len)
            err = "trimmed_ends: a line outside the buffer";
    PyObject *res = NULL;
    if (err == NULL) {
        res = PyByteArray_FromStringAndSize(NULL, n * 8);
        if (res != NULL) {
            int64_t *out = (int64_t *)PyByteArray_AS_STRING(res);
            Py_BEGIN_ALLOW_THREADS
            for (Py_ssize_t i = 0; i < n; i++) {
                int64_t z = ce[i], a = st[i];
                while (z > a && buf[z - 1] == ' ')
                    z--;
                out[i] = z;
            }
            Py_END_ALLOW_THREADS
        }
    }
    PyBuffer_Release(&b);
    PyBuffer_Release(&s);
    PyBuffer_Release(&e);
    return err != NULL ? raise_error(err) : res;
}

/* probe_lines(buf, cstart, cfirst, ncont, ci, ok, lit, after) -> match.
 *
 * For each unit i (its content lines cfirst[i] .. cfirst[i] + ncont[i] - 1
 * of cstart, int64; ci[i] its current line; ok[i], uint8), match[i] (a
 * uint8 bytearray) is 1 when the unit is ok, has its current line, and the
 * line holds lit at its start; with after, at 10 bytes past its start and
 * past the digits there (up to 12 columns: twelve digits count as none, as
 * the numpy matcher's argmax does). Bytes past the buffer read as 0; a line
 * is checked to lie in the buffer when probed (ValueError if not). */
static PyObject *
probe_lines(PyObject *self, PyObject *args)
{
    Py_buffer b, cs, cf, nc, ci_b, ok_b, lt;
    int after;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*p", &b, &cs, &cf, &nc, &ci_b, &ok_b, &lt,
                          &after))
        return NULL;
    const char *err = NULL;
    Py_ssize_t nl = cs.len / 8, n = cf.len / 8, m = lt.len, blen = b.len;
    const int64_t *cstart = cs.buf, *cfirst = cf.buf, *ncont = nc.buf, *ci = ci_b.buf;
    const uint8_t *ok = ok_b.buf, *lit = lt.buf, *buf = b.buf;
    if (cs.len % 8 || cf.len % 8 || nc.len != cf.len || ci_b.len != cf.len || ok_b.len != n)
        err = "probe_lines: buffers of inconsistent sizes";
    for (Py_ssize_t i = 0; err == NULL && i < n; i++)
        if (ncont[i] < 0 || cfirst[i] < 0 || cfirst[i] > nl - ncont[i])
            err = "probe_lines: a unit's lines outside the content lines";
    PyObject *res = NULL;
    if (err == NULL) {
        res = PyByteArray_FromStringAndSize(NULL, n);
        if (res != NULL) {
            uint8_t *out = (uint8_t *)PyByteArray_AS_STRING(res);
            Py_BEGIN_ALLOW_THREADS
            for (Py_ssize_t i = 0; i < n; i++) {
                int64_t j = ci[i];
                int good = ok[i] && j >= 0 && j < ncont[i];
                if (good) {
                    int64_t pos = cstart[cfirst[i] + j];
                    if (pos < 0 || pos > blen) {
                        err = "probe_lines: a line outside the buffer";
                        break;
                    }
                    if (after) {
                        pos += 10;
                        int nd = 0;
                        while (nd < 12 && (uint8_t)(AT(pos + nd) - '0') < 10)
                            nd++;
                        pos += nd < 12 ? nd : 0;
                    }
                    if (pos <= blen - m)
                        good = memcmp(buf + pos, lit, (size_t)m) == 0;
                    else
                        for (Py_ssize_t c = 0; c < m && good; c++)
                            good = AT(pos + c) == lit[c];
                }
                out[i] = (uint8_t)good;
            }
            Py_END_ALLOW_THREADS
        }
    }
    PyBuffer_Release(&b); PyBuffer_Release(&cs); PyBuffer_Release(&cf); PyBuffer_Release(&nc);
    PyBuffer_Release(&ci_b); PyBuffer_Release(&ok_b); PyBuffer_Release(&lt);
    if (err != NULL) {
        Py_XDECREF(res);
        return raise_error(err);
    }
    return res;
}

/* mqget_lines(buf, n, starts, cend) -> (special, units).
 *
 * The amqsbcg lines where its line reader starts afresh. Lines (int64 starts,
 * cend: first byte and end of text; starts in order) of buf[0:n]: special
 * (an int64 bytearray) the line of each 'MQGET' of buf[0:n] that ends inside
 * its line's text; units the line of each of those that reads 'MQGET of
 * message number', one or more blanks or tabs (up to 25 columns: a run of
 * 25 counts as none) and a digit inside the line's text. Bytes past the
 * buffer read as 0. */
static PyObject *
mqget_lines(PyObject *self, PyObject *args)
{
    Py_buffer b, s, e;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y*ny*y*", &b, &n, &s, &e))
        return NULL;
    static const char GET_OF[] = "MQGET of message number";  /* 23 bytes */
    const char *err = NULL;
    Py_ssize_t nl = s.len / 8, blen = b.len;
    const int64_t *st = s.buf, *ce = e.buf;
    const uint8_t *buf = b.buf;
    if (n < 0 || n > blen || s.len % 8 || e.len != s.len)
        err = "mqget_lines: n outside the buffer, or starts and cend of different lengths";
    for (Py_ssize_t i = 0; err == NULL && i < nl; i++)
        if (st[i] < 0 || ce[i] < st[i] || ce[i] > blen || (i && st[i] < st[i - 1]))
            err = "mqget_lines: a line outside the buffer, or lines out of order";
    Py_ssize_t cap = 256, ns = 0, nu = 0;
    int64_t *sp = NULL, *un = NULL;
    if (err == NULL) {
        sp = PyMem_RawMalloc((size_t)cap * sizeof(int64_t));
        un = PyMem_RawMalloc((size_t)cap * sizeof(int64_t));
        if (sp == NULL || un == NULL)
            err = "";
    }
    if (err == NULL) {
        Py_BEGIN_ALLOW_THREADS
        Py_ssize_t i = 0, k = -1;
        while (i + 5 <= n) {
            const uint8_t *hit = memchr(buf + i, 'M', (size_t)(n - 4 - i));
            if (hit == NULL)
                break;
            int64_t pos = hit - buf;
            i = pos + 1;
            if (memcmp(hit + 1, "QGET", 4) != 0)
                continue;
            while (k + 1 < nl && st[k + 1] <= pos)
                k++;
            if (k < 0 || pos + 5 > ce[k])
                continue;
            if (ns == cap) {  /* (special and units grow together) */
                int64_t *s2 = PyMem_RawRealloc(sp, (size_t)cap * 2 * sizeof(int64_t));
                if (s2 != NULL)
                    sp = s2;
                int64_t *u2 = s2 == NULL ? NULL : PyMem_RawRealloc(un, (size_t)cap * 2 * sizeof(int64_t));
                if (u2 == NULL) {
                    err = "";
                    break;
                }
                un = u2;
                cap *= 2;
            }
            sp[ns++] = k;
            int get = 1;
            for (int c = 0; c < 23 && get; c++)
                get = AT(pos + c) == (uint8_t)GET_OF[c];
            if (!get)
                continue;
            int first = 0;
            while (first < 25 && (AT(pos + 23 + first) == ' ' || AT(pos + 23 + first) == '\t'))
                first++;
            if (first == 25)
                first = 0;
            if (first > 0 && (uint8_t)(AT(pos + 23 + first) - '0') < 10
                    && pos + 24 + first <= ce[k])
                un[nu++] = k;
        }
        Py_END_ALLOW_THREADS
    }
    PyObject *res = NULL;
    if (err == NULL) {
        PyObject *so = PyByteArray_FromStringAndSize((const char *)sp, ns * (Py_ssize_t)sizeof(int64_t));
        PyObject *uo = PyByteArray_FromStringAndSize((const char *)un, nu * (Py_ssize_t)sizeof(int64_t));
        if (so != NULL && uo != NULL)
            res = PyTuple_Pack(2, so, uo);
        Py_XDECREF(so);
        Py_XDECREF(uo);
    }
    PyMem_RawFree(sp);
    PyMem_RawFree(un);
    PyBuffer_Release(&b);
    PyBuffer_Release(&s);
    PyBuffer_Release(&e);
    return err != NULL ? raise_error(err) : res;
}
#undef AT

/* match_lines(buf, cstart, crend, cclean, cfirst, ncont, ci, ok, active,
 *             prog, md, mdw, vals, vw) -> units matched.
 *
 * Content lines (int64 cstart, crend: first byte and end of text without
 * trailing blanks; uint8 cclean: ASCII and not ending in more than one CR);
 * units (int64 cfirst, ncont: their first content line and how many; int64
 * ci: the unit's current line, advanced; uint8 ok: cleared when a line does
 * not match; uint8 active, or an empty buffer for every unit). For each ok
 * and active unit, its next lines are matched against the templates of prog
 * in turn, values written into its rows of md (mdw bytes a row) and vals (vw
 * bytes a row); a unit stops at the first line that does not match (or is
 * missing), and is no longer ok. Each line matched advances ci. A line is
 * checked to lie in the buffer when a unit reaches it (ValueError if not:
 * units before it may have been matched).
 *
 * Units print most lines as other units do: a clean line with the same bytes
 * as the line that last matched the same template (in this call), and the
 * same byte after its end, matches too, with the same values, which are
 * copied rather than parsed again (what a match reads past its line's end
 * is only that byte, where a number stops or runs on). */
static PyObject *
match_lines(PyObject *self, PyObject *args)
{
    Py_buffer b, cs, cr, cc, cf, nc, ci_b, ok_b, act, pr, mdb, vb;
    Py_ssize_t mdw, vw;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*w*w*y*y*w*nw*n", &b, &cs, &cr, &cc, &cf, &nc,
                          &ci_b, &ok_b, &act, &pr, &mdb, &mdw, &vb, &vw))
        return NULL;
    const char *err = NULL;
    Py_ssize_t nl = cs.len / 8, n = cf.len / 8, plen = pr.len / 4, matched = 0;
    const int64_t *cstart = cs.buf, *crend = cr.buf, *cfirst = cf.buf, *ncont = nc.buf;
    const uint8_t *cclean = cc.buf, *active = act.buf, *buf = b.buf;
    int64_t *ci = ci_b.buf;
    uint8_t *ok = ok_b.buf;
    const int32_t *prog = pr.buf;
    if (cs.len % 8 || cr.len != cs.len || cc.len != nl || cf.len % 8 || nc.len != cf.len
            || ci_b.len != cf.len || ok_b.len != n || (act.len != 0 && act.len != n)
            || pr.len % 4 || mdw < 0 || vw < 0
            || (mdw && n > PY_SSIZE_T_MAX / mdw) || (vw && n > PY_SSIZE_T_MAX / vw)
            || mdb.len != n * mdw || vb.len != n * vw)
        err = "match_lines: buffers of inconsistent sizes";
    /* the program: every op known, every value inside a row */
    for (Py_ssize_t pc = 0; err == NULL && pc < plen;) {
        int op = prog[pc], kind = 0;
        int64_t off = 0, size = 0;
        if (op == OP_END || op == OP_BRACKET)
            pc += 1;
        else if (op == OP_LIT && pc + 1 < plen && prog[pc + 1] >= 0 && prog[pc + 1] <= plen - pc - 2)
            pc += 2 + prog[pc + 1];
        else if ((op == OP_INT || op == OP_UINT) && pc + 2 < plen) {
            kind = prog[pc + 1], off = prog[pc + 2], size = kind == 2 ? 8 : 4;
            pc += 3;
        } else if ((op == OP_Q || op == OP_HEX) && pc + 3 < plen) {
            size = prog[pc + 1], kind = prog[pc + 2], off = prog[pc + 3];
            pc += 4;
            /* whatever the value's destination: a width the matcher can add to a
               position without overflow (a field of amqsbcg's is at most 96
               characters; 16 MiB whatever the buffer, so that a program is valid
               or not whatever text it is run on) */
            if (size < 0 || size > (1 << 24)) {
                err = "match_lines: a field width outside the buffer";
                break;
            }
        } else {
            err = "match_lines: not a program";
            break;
        }
        if (kind != 0) {
            int64_t width = (kind == 2 || kind == 4) ? vw : mdw;
            int okind = (op == OP_INT || op == OP_UINT) ? (kind == 1 || kind == 2 || kind == 5)
                                                        : (kind == 3 || kind == 4);
            if (!okind || size < 0 || off < 0 || off + size > width)
                err = "match_lines: a value outside its row";
        }
    }
    for (Py_ssize_t i = 0; err == NULL && i < n; i++)
        if (ncont[i] < 0 || cfirst[i] < 0 || cfirst[i] > nl - ncont[i])
            err = "match_lines: a unit's lines outside the content lines";
    /* the program's bytes (its literals, compared with memcmp) */
    uint8_t *lits = NULL;
    if (err == NULL) {
        lits = PyMem_RawMalloc(plen ? (size_t)plen : 1);
        if (lits == NULL)
            err = "";
        else
            for (Py_ssize_t pc = 0; pc < plen; pc++)
                lits[pc] = (uint8_t)prog[pc];
    }
    /* the templates (each up to its OP_END, the last up to the program's end):
     * where each ends, the bytes of the rows its values go to (spans: 0 the
     * MQMD row, 1 the values row; offset; size), and the last line it matched
     * with those bytes (cache) */
    Py_ssize_t ntpl = 0, nspan = 0, cbytes = 0;
    Py_ssize_t *tend = NULL, *tspan = NULL, *tcache = NULL;
    int64_t *tline = NULL, *sp_row = NULL, *sp_off = NULL, *sp_size = NULL;
    uint8_t *cache = NULL;
    if (err == NULL) {
        tend = PyMem_RawMalloc(((size_t)plen + 2) * sizeof(Py_ssize_t));
        tspan = PyMem_RawMalloc(((size_t)plen + 2) * sizeof(Py_ssize_t));
        tcache = PyMem_RawMalloc(((size_t)plen + 2) * sizeof(Py_ssize_t));
        tline = PyMem_RawMalloc(((size_t)plen + 2) * sizeof(int64_t));
        sp_row = PyMem_RawMalloc(((size_t)plen + 1) * sizeof(int64_t));
        sp_off = PyMem_RawMalloc(((size_t)plen + 1) * sizeof(int64_t));
        sp_size = PyMem_RawMalloc(((size_t)plen + 1) * sizeof(int64_t));
        if (!tend || !tspan || !tcache || !tline || !sp_row || !sp_off || !sp_size)
            err = "";
    }
    if (err == NULL) {
        Py_ssize_t pc = 0;
        tspan[0] = 0;
        tcache[0] = 0;
        while (pc < plen) {
            int op = prog[pc];
            int64_t row = -1, off = 0, size = 0;
            if (op == OP_END) {
                tend[ntpl] = pc;
                tline[ntpl] = -1;
                ntpl++;
                tspan[ntpl] = nspan;
                tcache[ntpl] = cbytes;
                pc += 1;
                continue;
            }
            if (op == OP_BRACKET)
                pc += 1;
            else if (op == OP_LIT)
                pc += 2 + prog[pc + 1];
            else if (op == OP_INT || op == OP_UINT) {
                int kind = prog[pc + 1];
                off = prog[pc + 2];
                row = (kind == 1 || kind == 5) ? 0 : kind == 2 ? 1 : -1;
                size = kind == 2 ? 8 : 4;
                pc += 3;
            } else {  /* OP_Q, OP_HEX (the program was checked above) */
                int kind = prog[pc + 2];
                size = prog[pc + 1];
                off = prog[pc + 3];
                row = kind == 3 ? 0 : kind == 4 ? 1 : -1;
                pc += 4;
            }
            if (row >= 0 && size > 0) {
                sp_row[nspan] = row;
                sp_off[nspan] = off;
                sp_size[nspan] = size;
                nspan++;
                cbytes += (Py_ssize_t)size;
            }
        }
        if (plen == 0 || prog[plen - 1] != OP_END) {  /* a last template without OP_END */
            tend[ntpl] = plen;
            tline[ntpl] = -1;
            ntpl++;
            tspan[ntpl] = nspan;
            tcache[ntpl] = cbytes;
        }
        cache = PyMem_RawMalloc(cbytes ? (size_t)cbytes : 1);
        if (cache == NULL)
            err = "";
    }
    if (err == NULL) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            if (!ok[i] || (act.len && !active[i]))
                continue;
            uint8_t *mdrow = (uint8_t *)mdb.buf + i * mdw, *vrow = (uint8_t *)vb.buf + i * vw;
            Py_ssize_t pc = 0, t = 0;
            while (pc < plen) {
                int64_t j = ci[i];
                int good = 0;
                if (j >= 0 && j < ncont[i]) {
                    int64_t k = cfirst[i] + j;
                    if (cstart[k] < 0 || crend[k] < cstart[k] || crend[k] > b.len) {
                        err = "match_lines: a line outside the buffer";
                        break;
                    }
                    int64_t last = t < ntpl ? tline[t] : -1, len = crend[k] - cstart[k];
                    if (last >= 0 && cclean[k] && crend[last] - cstart[last] == len
                            && (crend[k] < b.len ? buf[crend[k]] : 0)
                               == (crend[last] < b.len ? buf[crend[last]] : 0)
                            && memcmp(buf + cstart[k], buf + cstart[last], (size_t)len) == 0) {
                        /* the line the template last matched: its values */
                        uint8_t *c = cache + tcache[t];
                        for (Py_ssize_t q = tspan[t]; q < tspan[t + 1]; q++) {
                            memcpy((sp_row[q] ? vrow : mdrow) + sp_off[q], c, (size_t)sp_size[q]);
                            c += sp_size[q];
                        }
                        pc = tend[t];
                        good = 1;
                    } else {
                        good = match_one(buf, b.len, cstart[k], crend[k], prog, lits, plen, &pc,
                                         mdrow, vrow, cclean[k] != 0);
                        if (good == 1 && t < ntpl) {  /* remembered: the line and its values */
                            uint8_t *c = cache + tcache[t];
                            for (Py_ssize_t q = tspan[t]; q < tspan[t + 1]; q++) {
                                memcpy(c, (sp_row[q] ? vrow : mdrow) + sp_off[q], (size_t)sp_size[q]);
                                c += sp_size[q];
                            }
                            tline[t] = k;
                        }
                    }
                }
                ci[i] = j < INT64_MAX ? j + 1 : j;
                if (good != 1) {
                    ok[i] = 0;
                    break;
                }
                pc++;  /* past OP_END */
                t++;
            }
            if (err != NULL)
                break;
            matched += ok[i] != 0;
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(lits);
    PyMem_RawFree(tend); PyMem_RawFree(tspan); PyMem_RawFree(tcache); PyMem_RawFree(tline);
    PyMem_RawFree(sp_row); PyMem_RawFree(sp_off); PyMem_RawFree(sp_size); PyMem_RawFree(cache);
    PyBuffer_Release(&b); PyBuffer_Release(&cs); PyBuffer_Release(&cr); PyBuffer_Release(&cc);
    PyBuffer_Release(&cf); PyBuffer_Release(&nc); PyBuffer_Release(&ci_b); PyBuffer_Release(&ok_b);
    PyBuffer_Release(&act); PyBuffer_Release(&pr); PyBuffer_Release(&mdb); PyBuffer_Release(&vb);
    return count_or_error(err, matched);
}

/* dump_lines(buf, at, length, nbytes, k, out, std, hexok) -> None.
 *
 * amqsbcg dump lines 'OOOOOOOO:  XXXX XXXX ... 'chars'' (int64 at: first
 * byte, length: bytes of text; nbytes: bytes the line shows, 1 to 16; k:
 * its offset is 16 * k). std[i] (uint8) is 1 when line i is exactly as
 * amqsbcg prints it: more than 51 bytes, the offset in 8 upper-case hex
 * digits, ':' and two blanks, the 39 columns of the hex area (groups of four
 * digits, either case, and a blank; blanks past 2 * nbytes digits), a blank
 * and a quote. hexok[i] is 1 when every digit column of its hex area holds
 * a hex digit; then its bytes are written to out, line after line
 * (sum(nbytes) bytes; zeros for a line without hexok). Bytes past the
 * buffer read as 0. */
static PyObject *
dump_lines(PyObject *self, PyObject *args)
{
    Py_buffer b, a, l, nb, kb, o, sb, hb;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*w*w*", &b, &a, &l, &nb, &kb, &o, &sb, &hb))
        return NULL;
    const char *err = NULL;
    Py_ssize_t n = a.len / 8;
    const int64_t *at = a.buf, *length = l.buf, *nbytes = nb.buf, *k = kb.buf;
    uint8_t *out = o.buf, *std = sb.buf, *hexok = hb.buf;
    const uint8_t *buf = b.buf;
    Py_ssize_t blen = b.len, total = 0;
    if (a.len % 8 || l.len != a.len || nb.len != a.len || kb.len != a.len || sb.len != n
            || hb.len != n)
        err = "dump_lines: buffers of inconsistent sizes";
    for (Py_ssize_t i = 0; err == NULL && i < n; i++) {
        if (nbytes[i] < 0 || nbytes[i] > 16 || k[i] < 0 || k[i] > ((int64_t)1 << 58))
            err = "dump_lines: a line of more than 16 bytes, or a negative offset";
        total += nbytes[i];
    }
    if (err == NULL && total != o.len)
        err = "dump_lines: out must hold sum(nbytes) bytes";
    if (err == NULL) {
        Py_BEGIN_ALLOW_THREADS
        Py_ssize_t w = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            uint8_t line[56];
            int64_t s = at[i];
            /* (written so that nothing overflows: s may be near +-2**63) */
            if (s >= 0 && blen >= 52 && s <= blen - 52)
                memcpy(line, buf + s, 52);
            else {
                memset(line, 0, 52);
                if (s >= 0 && s < blen)
                    memcpy(line, buf + s, (size_t)(blen - s < 52 ? blen - s : 52));
            }
            memset(line + 52, 0, 4);
            int nb = (int)nbytes[i];
            /* the bytes that are no digit: fixed ones and blanks, a word at a time */
            uint64_t bad = 0;
            for (int w8 = 0; w8 < 7; w8++) {
                uint64_t x, want, mask;
                memcpy(&x, line + 8 * w8, 8);
                memcpy(&want, DUMP_WANT[nb] + 8 * w8, 8);
                memcpy(&mask, DUMP_MASK[nb] + 8 * w8, 8);
                bad |= (x ^ want) & mask;
            }
            /* the offset: 16 * k in eight upper-case hex digits (its low 32 bits) */
            uint32_t off = (uint32_t)((uint64_t)k[i] * 16);
            uint8_t digits[8];
            for (int c = 0; c < 8; c++)
                digits[c] = (uint8_t)"0123456789ABCDEF"[(off >> (28 - 4 * c)) & 15];
            int ok = length[i] > 51 && bad == 0 && memcmp(line, digits, 8) == 0;
            /* byte j: digits 2j and 2j + 1, side by side in a group of four
             * (the digit columns of the pattern: the others are checked above) */
            int hex = 1;
            const uint8_t *area = line + 11;
            for (int j = 0; j < nb; j++) {
                uint16_t pair;
                memcpy(&pair, area + 2 * j + j / 2, 2);
                uint16_t v = HEX_PAIR[pair];
                hex &= v <= 0xFF;
                out[w + j] = (uint8_t)v;
            }
            if (!hex)
                memset(out + w, 0, (size_t)nb);
            std[i] = (uint8_t)(ok && hex);
            hexok[i] = (uint8_t)hex;
            w += nb;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&b); PyBuffer_Release(&a); PyBuffer_Release(&l); PyBuffer_Release(&nb);
    PyBuffer_Release(&kb); PyBuffer_Release(&o); PyBuffer_Release(&sb); PyBuffer_Release(&hb);
    if (err != NULL) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* One dmpmqmsg attribute value v[0:len] of kind (template_fields' kinds)
 * into out (size bytes; *ver for kind 1): 1 when it reads, 0 when the line
 * reader would report it (out then holds what it holds: the unit is not the
 * fast readers'). The one reading of a value for template_fields and
 * dmp_units. */
static inline int
dmp_value(const uint8_t *v, int64_t len, int kind, int64_t size, uint8_t *out, int32_t *ver)
{
    if (kind <= 1) {
        int neg = len > 0 && v[0] == '-';
        int64_t x = 0;
        if (len - neg < 1 || len - neg > 10)
            return 0;
        for (int64_t c = neg; c < len; c++) {
            unsigned d = (unsigned)v[c] - '0';
            if (d >= 10)
                return 0;
            x = x * 10 + d;
        }
        x = neg ? -x : x;
        if (x < -((int64_t)1 << 31) || x >= ((int64_t)1 << 31))
            return 0;
        if (kind == 1) {
            x = x == 1 || x == 2 ? x : 2;
            *ver = (int32_t)x;
        }
        uint32_t u = (uint32_t)(int32_t)x;
        uint8_t le[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
        memcpy(out, le, 4);
        return 1;
    }
    if (kind == 2) {
        int64_t use = len < size ? len : size;
        memcpy(out, v, (size_t)use);
        memset(out + use, ' ', (size_t)(size - use));
        return 1;
    }
    if (len != 2 * size || hex_pairs(v, len, out) != len)
        return 0;
    unsigned hi = 0;
    for (int64_t c = 0; kind == 4 && c < size; c++)
        hi |= out[c];
    return !(hi & 0x80);
}

/* template_fields(buf, at0, fields, md, ok, version) -> None.
 *
 * dmpmqmsg attribute values that differ from unit to unit, read into the
 * units' MQMD rows (dlqlens.capture.dmpmqmsg.attrs._fill_template's late
 * fields; its numpy steps are the reference). Units start at at0 (int64, n);
 * fields (int64, m rows of kind, src, length, dst, size): the value of each
 * unit is buf[at0[i] + src : at0[i] + src + length]; md (uint8, n rows of
 * the MQMD), ok (uint8, n: cleared where a value is one the line reader
 * would report), version (int32, n: set by a VER field). Kinds:
 *   0 MQLONG: -?[0-9]{1,10} filling the value, in the MQLONG range, written
 *     little-endian at dst (0 where not);
 *   1 the VER line: as 0; the version is the value when 1 or 2, else 2;
 *   2 characters: the first min(length, size) bytes, blanks after;
 *   3 hex: exactly 2 * size digits (else ok is cleared for every unit);
 *   4 hex of characters: as 3, and no byte of 0x80 or more.
 * Raises ValueError when a value lies outside buf, a field outside the MQMD
 * row or a buffer has the wrong size; nothing is written then. */
static PyObject *
template_fields(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer b, a, f, m, o, v;
    if (!PyArg_ParseTuple(args, "y*y*y*w*w*w*", &b, &a, &f, &m, &o, &v))
        return NULL;
    const char *err = NULL;
    Py_ssize_t n = a.len / 8, nf = f.len / 40, blen = b.len, width = 0;
    const uint8_t *buf = b.buf;
    uint8_t *md = m.buf, *ok = o.buf;
    if (a.len % 8 || f.len % 40 || o.len != n || v.len != 4 * n || (n && m.len % n)
            || (!n && m.len))
        err = "template_fields: buffers of inconsistent sizes";
    else
        width = n ? m.len / n : 0;
    int64_t hi = 0;  /* the last unit start */
    for (Py_ssize_t i = 0; err == NULL && i < n; i++) {
        int64_t x;
        memcpy(&x, (const uint8_t *)a.buf + 8 * i, 8);
        if (x < 0 || x > blen)
            err = "template_fields: a unit starts outside the buffer";
        hi = x > hi ? x : hi;
    }
    for (Py_ssize_t j = 0; err == NULL && j < nf; j++) {
        int64_t q[5];
        memcpy(q, (const uint8_t *)f.buf + 40 * j, 40);
        int64_t kind = q[0], src = q[1], len = q[2], dst = q[3], size = q[4];
        if (kind < 0 || kind > 4 || src < 0 || len < 0 || dst < 0 || size < 0
                || (kind <= 1 && size != 4))
            err = "template_fields: a field of an unknown kind, or a negative offset or size";
        else if (n && (src > blen || len > blen - src || hi > blen - src - len))
            err = "template_fields: a value lies outside the buffer";
        else if (n && (dst > width || size > width - dst))  /* (no rows: nothing written) */
            err = "template_fields: a field lies outside the MQMD row";
    }
    if (err == NULL && n) {  /* (no units: nothing to write, and sizes unchecked) */
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t j = 0; j < nf; j++) {
            int64_t q[5];
            memcpy(q, (const uint8_t *)f.buf + 40 * j, 40);
            int kind = (int)q[0];
            Py_ssize_t src = (Py_ssize_t)q[1], len = (Py_ssize_t)q[2], dst = (Py_ssize_t)q[3],
                       size = (Py_ssize_t)q[4];
            if (kind >= 3 && len != 2 * size) {  /* not the field's width: never fast */
                memset(ok, 0, (size_t)n);
                continue;
            }
            for (Py_ssize_t i = 0; i < n; i++) {
                int64_t at;
                memcpy(&at, (const uint8_t *)a.buf + 8 * i, 8);
                const uint8_t *val = buf + at + src;
                uint8_t *row = md + i * width + dst;
                int32_t ver = 2;  /* a VER that is no number: version 2, as 2 or more */
                if (!dmp_value(val, len, kind, size, row, &ver)) {
                    ok[i] = 0;
                    if (kind <= 1) {  /* an MQLONG that is no number: 0 (a VER: 2) */
                        memset(row, 0, 4);
                        row[0] = kind == 1 ? 2 : 0;
                    }
                }
                if (kind == 1)
                    memcpy((uint8_t *)v.buf + 4 * i, &ver, 4);
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&b); PyBuffer_Release(&a); PyBuffer_Release(&f);
    PyBuffer_Release(&m); PyBuffer_Release(&o); PyBuffer_Release(&v);
    if (err != NULL)
        return raise_error(err);
    Py_RETURN_NONE;
}

/* dmp_units(buf, starts, cend, cls, us, ue, codes, always, v2, ver_code,
 *           template, next_col) -> (nok, ok, md, version, first_a, dl, data).
 *
 * The dmpmqmsg fast reader's units in one pass (dlqlens.capture.dmpmqmsg.fast;
 * its numpy steps, _Block.fast_units with attrs._fill_group, are the
 * reference). Lines: starts, cend (int64: first byte, end of the text) and
 * cls (int8: 0 E, 1 A, 2 X, others not for the fast reader). Unit u is
 * lines us[u] .. ue[u] - 1 (int64). A unit is read when it is [E] A.. [E]
 * X.. [E] and:
 *   - every A line is 'A ccc value', at least 6 bytes, ASCII, its code one of
 *     codes (int64 rows of key, dst, size, kind; key the three bytes of the
 *     code, big-endian; kinds as template_fields': 0 MQLONG, 1 VER, 2
 *     characters, 3 hex, 4 hex of characters), no code twice; the codes
 *     present meet every mask of always (uint32 bit masks over the rows of
 *     codes: one of each mask's codes present) and, with the code ver_code
 *     (a row index, or -1) present, every mask of v2;
 *   - each value reads as template_fields reads it (written into the unit's
 *     MQMD row, a copy of template, in line order: a later code setting the
 *     same field wins);
 *   - no two neighbouring character columns (next_col, int32 per MQMD byte:
 *     the next character column, -1 when none) hold '**' or '..';
 *   - every X line is an even number of hex digits after 'X ', then
 *     nothing, blanks, or blanks and a '<' column after at least one digit.
 * Values of an A line the same (code and value) as the same line of the
 * unit before are copied, not read again.
 * Returns nok (units read), ok (uint8 per unit), md (nok rows of the MQMD
 * first, then unused rows), version (int32), first_a (int64: each read
 * unit's first A line), dl (int64: its data length; per read unit), data
 * (the read units' data, concatenated). ValueError for buffers of
 * inconsistent sizes, a line or unit outside them, or a bad code table. */
#define DMP_MAX_CODES 32
#define DMP_MAX_VALUE 48
#define DMP_CACHED 64

typedef struct {
    const uint8_t *line;  /* the code and value: buf[at + 2 : ce] */
    int64_t len;
    int code;
    int32_t ver;
    uint8_t val[DMP_MAX_VALUE];
} dmp_seen;

/* a[0:n] == b[0:n] for the short lines of a dmpmqmsg file: 8 bytes at a
 * time, the last 8 (or 4) overlapping, no call to memcmp. */
static inline int
same_bytes(const uint8_t *a, const uint8_t *b, int64_t n)
{
    uint64_t diff = 0, x, y;
    if (n >= 8) {
        for (int64_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            diff |= x ^ y;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return (diff | (x ^ y)) == 0;
    }
    if (n >= 4) {
        uint32_t p, q, r, t;
        memcpy(&p, a, 4);
        memcpy(&q, b, 4);
        memcpy(&r, a + n - 4, 4);
        memcpy(&t, b + n - 4, 4);
        return ((p ^ q) | (r ^ t)) == 0;
    }
    for (int64_t i = 0; i < n; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}

/* dst[0:n] = src[0:n] for an MQMD field (4 to 48 bytes): as same_bytes. */
static inline void
copy_field(uint8_t *dst, const uint8_t *src, int64_t n)
{
    if (n >= 8) {
        for (int64_t i = 0; i + 8 < n; i += 8)
            memcpy(dst + i, src + i, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4) {
        memcpy(dst, src, 4);
        memcpy(dst + n - 4, src + n - 4, 4);
    } else
        for (int64_t i = 0; i < n; i++)
            dst[i] = src[i];
}

static PyObject *
dmp_units(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer b, s, e, c, u0, u1, cd, al, vb, tp, nc;
    int ver_code;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*iy*y*", &b, &s, &e, &c, &u0, &u1, &cd,
                          &al, &vb, &ver_code, &tp, &nc))
        return NULL;
    const char *err = NULL;
    const uint8_t *buf = b.buf;
    const int64_t *st = s.buf, *ce = e.buf, *us = u0.buf, *ue = u1.buf;
    const int8_t *cls = c.buf;
    const uint32_t *always = al.buf, *v2 = vb.buf;
    const int32_t *next_col = nc.buf;
    Py_ssize_t nl = s.len / 8, nu = u0.len / 8, ncode = cd.len / 32, width = tp.len;
    Py_ssize_t nalways = al.len / 4, nv2 = vb.len / 4;
    int64_t dst_of[DMP_MAX_CODES], size_of[DMP_MAX_CODES];
    int kind_of[DMP_MAX_CODES];
    int8_t code_index[26 * 26 * 26];
    if (s.len % 8 || e.len != s.len || c.len != nl || u0.len % 8 || u1.len != u0.len
            || cd.len % 32 || al.len % 4 || vb.len % 4 || nc.len != 4 * width)
        err = "dmp_units: buffers of inconsistent sizes";
    else if (ncode > DMP_MAX_CODES || ver_code < -1 || ver_code >= ncode)
        err = "dmp_units: more codes than the loop holds, or a VER code outside them";
    for (Py_ssize_t i = 0; err == NULL && i < nl; i++)
        if (st[i] < 0 || ce[i] < st[i] || ce[i] > b.len)
            err = "dmp_units: a line outside the buffer";
    for (Py_ssize_t u = 0; err == NULL && u < nu; u++)
        if (us[u] < 0 || ue[u] < us[u] || ue[u] > nl)
            err = "dmp_units: a unit outside the lines";
    for (Py_ssize_t i = 0; err == NULL && i < width; i++)
        if (next_col[i] < -1 || next_col[i] >= width)
            err = "dmp_units: a character column outside the MQMD row";
    if (err == NULL) {
        memset(code_index, -1, sizeof code_index);
        for (Py_ssize_t j = 0; err == NULL && j < ncode; j++) {
            int64_t q[4];
            memcpy(q, (const uint8_t *)cd.buf + 32 * j, 32);
            int l0 = (int)(q[0] >> 16 & 0xFF) - 'A', l1 = (int)(q[0] >> 8 & 0xFF) - 'A',
                l2 = (int)(q[0] & 0xFF) - 'A';
            if (q[0] >> 24 || l0 < 0 || l0 >= 26 || l1 < 0 || l1 >= 26 || l2 < 0 || l2 >= 26)
                err = "dmp_units: a code that is not three capital letters";
            else if (q[3] < 0 || q[3] > 4 || q[2] < 0 || q[2] > DMP_MAX_VALUE
                     || (q[3] <= 1 && q[2] != 4) || q[1] < 0 || q[1] > width - q[2])
                err = "dmp_units: a code of an unknown kind, or its field outside the MQMD row";
            else {
                code_index[(l0 * 26 + l1) * 26 + l2] = (int8_t)j;
                dst_of[j] = q[1];
                size_of[j] = q[2];
                kind_of[j] = (int)q[3];
            }
        }
    }
    PyObject *ok_o = NULL, *md_o = NULL, *ver_o = NULL, *fa_o = NULL, *dl_o = NULL, *data_o = NULL;
    Py_ssize_t nok = 0;
    if (err == NULL) {
        ok_o = PyByteArray_FromStringAndSize(NULL, nu);
        md_o = PyByteArray_FromStringAndSize(NULL, nu * width);
        ver_o = PyByteArray_FromStringAndSize(NULL, 4 * nu);
        fa_o = PyByteArray_FromStringAndSize(NULL, 8 * nu);
        dl_o = PyByteArray_FromStringAndSize(NULL, 8 * nu);
        data_o = PyByteArray_FromStringAndSize(NULL, b.len / 2 + 1);
        if (!ok_o || !md_o || !ver_o || !fa_o || !dl_o || !data_o)
            err = "";
    }
    if (err == NULL) {
        uint8_t *ok = (uint8_t *)PyByteArray_AS_STRING(ok_o);
        uint8_t *md = (uint8_t *)PyByteArray_AS_STRING(md_o);
        int32_t *ver_out = (int32_t *)PyByteArray_AS_STRING(ver_o);
        int64_t *first_a = (int64_t *)PyByteArray_AS_STRING(fa_o);
        int64_t *dl = (int64_t *)PyByteArray_AS_STRING(dl_o);
        uint8_t *data = (uint8_t *)PyByteArray_AS_STRING(data_o);
        const uint8_t *template = tp.buf;
        Py_ssize_t dpos = 0;
        Py_BEGIN_ALLOW_THREADS
        dmp_seen seen_line[DMP_CACHED];
        for (int k = 0; k < DMP_CACHED; k++)
            seen_line[k].line = NULL;
        for (Py_ssize_t u = 0; u < nu; u++) {
            int64_t l = us[u], end = ue[u];
            int good = 1;
            ok[u] = 0;
            while (l < end && cls[l] == 0)
                l++;
            int64_t a0 = l;
            while (l < end && cls[l] == 1)
                l++;
            int64_t a1 = l;
            while (l < end && cls[l] == 0)
                l++;
            int64_t x0 = l;
            while (l < end && cls[l] == 2)
                l++;
            int64_t x1 = l;
            while (l < end && cls[l] == 0)
                l++;
            if (a1 == a0 || x1 == x0 || l != end)
                continue;
            uint8_t *row = md + nok * width;
            memcpy(row, template, (size_t)width);
            int32_t version = 1;
            uint32_t present = 0;
            for (int64_t j = a0; good && j < a1; j++) {
                int64_t at = st[j], len = ce[j] - at;
                if (len < 6 || buf[at + 5] != ' ') {
                    good = 0;
                    break;
                }
                int64_t k = j - a0;
                dmp_seen *sl = k < DMP_CACHED ? &seen_line[k] : NULL;
                int code;
                if (sl != NULL && sl->line != NULL && sl->len == len - 2
                        && same_bytes(sl->line, buf + at + 2, len - 2)) {
                    code = sl->code;  /* the same line as the unit before's: its value */
                    copy_field(row + dst_of[code], sl->val, size_of[code]);
                    if (kind_of[code] == 1)
                        version = sl->ver;
                } else {
                    uint64_t hi = 0;  /* any byte of 0x80 or more: not ASCII */
                    int64_t q = at;
                    for (; q + 8 <= at + len; q += 8) {
                        uint64_t w;
                        memcpy(&w, buf + q, 8);
                        hi |= w;
                    }
                    for (; q < at + len; q++)
                        hi |= buf[q];
                    hi &= 0x8080808080808080ULL;
                    int l0 = buf[at + 2] - 'A', l1 = buf[at + 3] - 'A', l2 = buf[at + 4] - 'A';
                    if (hi || l0 < 0 || l0 >= 26 || l1 < 0 || l1 >= 26 || l2 < 0
                            || l2 >= 26 || (code = code_index[(l0 * 26 + l1) * 26 + l2]) < 0) {
                        good = 0;
                        break;
                    }
                    uint8_t val[DMP_MAX_VALUE];
                    int32_t v = 0;
                    if (!dmp_value(buf + at + 6, len - 6, kind_of[code], size_of[code], val, &v)) {
                        good = 0;
                        break;
                    }
                    copy_field(row + dst_of[code], val, size_of[code]);
                    if (kind_of[code] == 1)
                        version = v;
                    if (sl != NULL) {
                        sl->line = buf + at + 2;
                        sl->len = len - 2;
                        sl->code = code;
                        sl->ver = v;
                        copy_field(sl->val, val, size_of[code]);
                    }
                }
                if (present >> code & 1)
                    good = 0;  /* a code twice: two messages for the line reader */
                present |= (uint32_t)1 << code;
            }
            for (Py_ssize_t g = 0; good && g < nalways; g++)
                good = (present & always[g]) != 0;
            if (good && ver_code >= 0 && present >> ver_code & 1)
                for (Py_ssize_t g = 0; good && g < nv2; g++)
                    good = (present & v2[g]) != 0;
            for (int m = 0; good && m < 2; m++) {  /* '**', '..': masked by hand? */
                const uint8_t mark = m ? '.' : '*', *hit = row, *stop = row + width;
                while (good && (hit = memchr(hit, mark, (size_t)(stop - hit))) != NULL) {
                    int32_t nx = next_col[hit - row];
                    good = nx < 0 || row[nx] != mark;
                    hit++;
                }
            }
            Py_ssize_t d0 = dpos;
            for (int64_t j = x0; good && j < x1; j++) {
                int64_t xs = st[j] + 2, xe = ce[j] > xs ? ce[j] : xs;
                int64_t q = xe > xs ? xs + hex_pairs(buf + xs, xe - xs, data + dpos) : xs;
                dpos += (q - xs) / 2;
                if (q < xe) {
                    /* an odd digit, or what follows the digits: blanks, then
                     * the end or (after a digit) the -da '<' column */
                    int64_t r = q;
                    while (r < xe && buf[r] == ' ')
                        r++;
                    good = HEX[buf[q]] > 15 && buf[q] == ' '
                        && (r == xe || (q > xs && buf[r] == '<'));
                }
            }
            if (!good) {
                dpos = d0;
                continue;
            }
            ok[u] = 1;
            ver_out[nok] = version;
            first_a[nok] = a0;
            dl[nok] = dpos - d0;
            nok++;
        }
        Py_END_ALLOW_THREADS
        if (PyByteArray_Resize(data_o, dpos) < 0)
            err = "";
    }
    PyBuffer_Release(&b); PyBuffer_Release(&s); PyBuffer_Release(&e); PyBuffer_Release(&c);
    PyBuffer_Release(&u0); PyBuffer_Release(&u1); PyBuffer_Release(&cd); PyBuffer_Release(&al);
    PyBuffer_Release(&vb); PyBuffer_Release(&tp); PyBuffer_Release(&nc);
    if (err != NULL) {
        Py_XDECREF(ok_o); Py_XDECREF(md_o); Py_XDECREF(ver_o); Py_XDECREF(fa_o);
        Py_XDECREF(dl_o); Py_XDECREF(data_o);
        return raise_error(err);
    }
    return Py_BuildValue("nNNNNNN", nok, ok_o, md_o, ver_o, fa_o, dl_o, data_o);
}

static PyMethodDef methods[] = {
    {"line_table", line_table, METH_VARARGS, "Starts, ends and first words of the lines of buf[0:n]."},
    {"hex_runs", hex_runs, METH_VARARGS, "Decode the leading hex digits of many runs of a buffer."},
    {"rows_like_first", rows_like_first, METH_VARARGS,
     "Compare fixed-width rows of a buffer with the first row."},
    {"find_all", find_all, METH_VARARGS, "Offsets of a needle in buf[0:end], overlapping ones too."},
    {"match_lines", match_lines, METH_VARARGS,
     "Match the content lines of many units against line templates (amqsbcg)."},
    {"trimmed_ends", trimmed_ends, METH_VARARGS,
     "Per line, the end of its text without trailing blanks."},
    {"probe_lines", probe_lines, METH_VARARGS,
     "Units whose current content line holds a literal (amqsbcg)."},
    {"mqget_lines", mqget_lines, METH_VARARGS,
     "The lines of 'MQGET' and of 'MQGET of message number N' (amqsbcg)."},
    {"template_fields", template_fields, METH_VARARGS,
     "dmpmqmsg attribute values that differ from unit to unit, into MQMD rows."},
    {"dmp_units", dmp_units, METH_VARARGS,
     "Read the well-formed units of a dmpmqmsg block: MQMD rows and data, one pass."},
    {"dump_lines", dump_lines, METH_VARARGS,
     "Check amqsbcg dump lines against the layout amqsbcg prints, and decode their hex."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scan", "Byte loops of the fast text readers.", -1, methods,
    NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    memset(HEX, 0xFF, sizeof HEX);
    for (int i = 0; i < 10; i++)
        HEX['0' + i] = (uint8_t)i;
    for (int i = 0; i < 6; i++) {
        HEX['A' + i] = (uint8_t)(10 + i);
        HEX['a' + i] = (uint8_t)(10 + i);
    }
    for (int hi = 0; hi < 256; hi++)
        for (int lo = 0; lo < 256; lo++) {
            uint8_t two[2] = {(uint8_t)hi, (uint8_t)lo};
            uint16_t pair;
            memcpy(&pair, two, 2);
            HEX_PAIR[pair] = (HEX[hi] | HEX[lo]) & 0xF0 ? 0xFFFF : (uint16_t)(HEX[hi] << 4 | HEX[lo]);
        }
    for (int n = 0; n <= 16; n++) {
        uint8_t *want = DUMP_WANT[n], *mask = DUMP_MASK[n];
        memset(want, 0, 56);
        memset(mask, 0, 56);
        want[8] = ':';
        want[9] = want[10] = ' ';
        for (int c = 0; c < 39; c++)
            if (!(c % 5 != 4 && c - c / 5 < 2 * n))  /* not a digit column */
                want[11 + c] = ' ';
        want[50] = ' ';
        want[51] = '\'';
        for (int c = 8; c < 52; c++)
            mask[c] = want[c] ? 0xFF : 0;
    }
    return PyModule_Create(&module);
}
