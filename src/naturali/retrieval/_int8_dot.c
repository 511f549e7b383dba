/* The vector scan's int8 kernel (retrieval/int8_scan.py): for each row of int8 codes, its dot
 * product with the query's int8 codes, plus the row's offset times a scale, as a float32.
 *
 * numkong's cdist, the library kernel used otherwise, costs ~40 ns a row here whatever its width,
 * about 1.4x the time memory takes to bring the rows in; this one runs at the memory's speed.
 * It needs AVX-512 with VNNI (vpdpbusd: unsigned bytes times signed bytes, summed in int32):
 * the rows' codes are made unsigned by flipping their top bit (c + 128), and 128 times the sum
 * of the query's codes is taken off again, so every sum is the exact integer product.
 * Elsewhere (another CPU, another architecture) `supported()` says no and numkong is used. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NATURALI_VNNI 1
#include <immintrin.h>
#endif

#define BLOCK 64    /* bytes of a row in one 512-bit register */
#define MAX_DIM 1024 /* int32 sums of int8 products are exact in float32 up to 1,040 */
#define AHEAD 16    /* rows prefetched ahead of the ones being summed (measured: 8-32 alike) */

#ifdef NATURALI_VNNI
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void
scan_vnni(const int8_t *codes, Py_ssize_t n, Py_ssize_t d, const int8_t *query,
          const float *offsets, float units, float *out)
{
    __m512i q[MAX_DIM / BLOCK];
    const Py_ssize_t blocks = d / BLOCK;
    int32_t query_sum = 0;
    for (Py_ssize_t b = 0; b < blocks; b++)
        q[b] = _mm512_loadu_si512((const void *)(query + BLOCK * b));
    for (Py_ssize_t j = 0; j < d; j++)
        query_sum += query[j];
    const int32_t shift = 128 * query_sum;
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    Py_ssize_t i = 0;
    for (; i + 4 <= n; i += 4) { /* four rows at a time: four sums in flight */
        const int8_t *row = codes + i * d;
        if (i + AHEAD + 4 <= n) /* rows further on, while these are summed */
            for (Py_ssize_t p = 0; p < 4 * d; p += BLOCK)
                _mm_prefetch((const char *)(row + AHEAD * d + p), _MM_HINT_T0);
        __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
        for (Py_ssize_t b = 0; b < blocks; b++) {
            const int8_t *x = row + BLOCK * b;
            s0 = _mm512_dpbusd_epi32(s0, _mm512_xor_si512(_mm512_loadu_si512(x), flip), q[b]);
            s1 = _mm512_dpbusd_epi32(s1, _mm512_xor_si512(_mm512_loadu_si512(x + d), flip), q[b]);
            s2 = _mm512_dpbusd_epi32(s2, _mm512_xor_si512(_mm512_loadu_si512(x + 2 * d), flip), q[b]);
            s3 = _mm512_dpbusd_epi32(s3, _mm512_xor_si512(_mm512_loadu_si512(x + 3 * d), flip), q[b]);
        }
        out[i] = (float)(_mm512_reduce_add_epi32(s0) - shift) + offsets[i] * units;
        out[i + 1] = (float)(_mm512_reduce_add_epi32(s1) - shift) + offsets[i + 1] * units;
        out[i + 2] = (float)(_mm512_reduce_add_epi32(s2) - shift) + offsets[i + 2] * units;
        out[i + 3] = (float)(_mm512_reduce_add_epi32(s3) - shift) + offsets[i + 3] * units;
    }
    for (; i < n; i++) {
        __m512i s = _mm512_setzero_si512();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            __m512i x = _mm512_loadu_si512((const void *)(codes + i * d + BLOCK * b));
            s = _mm512_dpbusd_epi32(s, _mm512_xor_si512(x, flip), q[b]);
        }
        out[i] = (float)(_mm512_reduce_add_epi32(s) - shift) + offsets[i] * units;
    }
}
#endif

static int vnni; /* whether this CPU runs scan_vnni: found once, when the module loads */

static int
vnni_supported(void)
{
#ifdef NATURALI_VNNI
    __builtin_cpu_init();
    /* These also check that the operating system saves the 512-bit registers. */
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
#else
    return 0;
#endif
}

static PyObject *
supported(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return PyBool_FromLong(vnni);
}

static PyObject *
scan(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer codes, query, offsets, out;
    Py_ssize_t d;
    float units;
    if (!PyArg_ParseTuple(args, "y*ny*y*fw*", &codes, &d, &query, &offsets, &units, &out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = d > 0 ? codes.len / d : 0;
    if (!vnni)
        PyErr_SetString(PyExc_RuntimeError, "this CPU has no AVX-512 VNNI");
    else if (d <= 0 || d % BLOCK || d > MAX_DIM || codes.len != n * d || query.len != d)
        PyErr_SetString(PyExc_ValueError, "codes must be n rows of d bytes, d a multiple of 64 "
                                          "up to 1024, and the query d bytes");
    else if (offsets.len != n * (Py_ssize_t)sizeof(float) ||
             out.len != n * (Py_ssize_t)sizeof(float))
        PyErr_SetString(PyExc_ValueError, "offsets and out must hold one float32 a row");
    else {
#ifdef NATURALI_VNNI
        Py_BEGIN_ALLOW_THREADS /* the scan's other share runs on another thread meanwhile */
        scan_vnni((const int8_t *)codes.buf, n, d, (const int8_t *)query.buf,
                  (const float *)offsets.buf, units, (float *)out.buf);
        Py_END_ALLOW_THREADS
#endif
        result = Py_None;
        Py_INCREF(result);
    }
    PyBuffer_Release(&codes);
    PyBuffer_Release(&query);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef methods[] = {
    {"supported", supported, METH_NOARGS, "Whether this CPU runs the kernel (AVX-512 VNNI)."},
    {"scan", scan, METH_VARARGS,
     "scan(codes, d, query, offsets, units, out): out[i] = codes[i] . query + offsets[i] * units"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_int8_dot", "The vector scan's int8 kernel (int8_scan.py).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__int8_dot(void)
{
    vnni = vnni_supported();
    PyObject *m = PyModule_Create(&module);
    /* The rows it takes, for int8_scan.py to choose by: whole registers, sums exact in float32. */
    if (m && (PyModule_AddIntConstant(m, "BLOCK", BLOCK) < 0 ||
              PyModule_AddIntConstant(m, "MAX_DIMENSION", MAX_DIM) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
