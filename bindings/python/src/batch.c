/*
 * nextok.sample_batch: one token per row of a [B, V] array on the thread
 * pool, the GIL released. A chain per row is needed (each keeps its own
 * workspace); building B chains per call would cost more than sampling, so
 * the module keeps the last call's chains and pool and rebuilds a row's chain
 * only when its SamplingParams object, that object's version (bumped by every
 * change) or V differ. A row is sampled statelessly at its `steps` position:
 * sample_batch never accepts, so no history carries from call to call.
 */
#include "ext.h"

#include <string.h>

struct batch_row {
    PyObject *params;      /* strong reference: its identity is the cache key */
    uint64_t version;
    int32_t n_vocab;
    bool masked;           /* built with a token-bitmask stage               */
    struct nextok_chain *chain;
};

struct nkpy_batch_cache {
    size_t cap;
    struct batch_row *rows;
    struct nextok_chain **chains;
    nextok_status *status;
    struct nextok_threadpool *pool;
    size_t pool_threads;   /* as asked: 0 = every CPU                         */
    bool busy;             /* a call is running without the GIL              */
};

void nkpy_batch_cache_free(struct nkpy_batch_cache *bc)
{
    if (!bc) return;
    for (size_t i = 0; i < bc->cap; i++) {
        Py_XDECREF(bc->rows[i].params);
        nextok_chain_free(bc->rows[i].chain);
    }
    PyMem_Free(bc->rows);
    PyMem_Free(bc->chains);
    PyMem_Free(bc->status);
    nextok_threadpool_free(bc->pool);
    PyMem_Free(bc);
}

static int grow(struct nkpy_batch_cache *bc, size_t n)
{
    if (n <= bc->cap) return 0;
    struct batch_row *rows = PyMem_Realloc(bc->rows, n * sizeof *rows);
    if (rows) bc->rows = rows;
    struct nextok_chain **chains = rows ? PyMem_Realloc(bc->chains, n * sizeof *chains) : NULL;
    if (chains) bc->chains = chains;
    nextok_status *status = chains ? PyMem_Realloc(bc->status, n * sizeof *status) : NULL;
    if (!status) {
        PyErr_NoMemory();
        return -1;
    }
    bc->status = status;
    memset(bc->rows + bc->cap, 0, (n - bc->cap) * sizeof *rows);
    bc->cap = n;
    return 0;
}

/* Row r's chain for params p at V = n_vocab: the cached one or a new one. */
static int row_chain(struct nkpy_state *st, struct batch_row *row, PyObject *p, int32_t n_vocab,
                     bool masked, Py_ssize_t r)
{
    uint64_t version = nkpy_params_version(p);
    if (row->chain && row->params == p && row->version == version && row->n_vocab == n_vocab &&
        row->masked == masked)
        return 0;
    struct nextok_sampling_params c;
    struct nextok_error err = {0};
    int32_t *scratch;
    struct nextok_chain *chain = NULL;
    if (nkpy_params_fill(p, n_vocab, &c, &scratch, NULL, 0) < 0) return -1;
    c.token_bitmask = masked;
    nextok_status rc = nextok_chain_init_sampling(&chain, &c, &err);
    PyMem_Free(scratch);
    if (rc != NEXTOK_OK) {
        char msg[NEXTOK_ERRMSG_MAX + 32];
        PyOS_snprintf(msg, sizeof msg, "params of row %zd: %s", r, err.msg);
        nkpy_raise(st, rc, msg);
        return -1;
    }
    nextok_chain_free(row->chain);
    Py_INCREF(p);
    Py_XSETREF(row->params, p);
    row->version = version;
    row->n_vocab = n_vocab;
    row->masked = masked;
    row->chain = chain;
    return 0;
}

/* steps: None, one int, or one per row. */
static int get_step(PyObject *steps, Py_ssize_t r, Py_ssize_t rows, uint64_t *out)
{
    *out = 0;
    if (steps == Py_None) return 0;
    PyObject *item = PyLong_Check(steps) ? (Py_INCREF(steps), steps) : PySequence_GetItem(steps, r);
    if (!item) {
        PyErr_Format(PyExc_ValueError, "steps: expected None, an int or %zd ints", rows);
        return -1;
    }
    *out = PyLong_AsUnsignedLongLong(item);
    Py_DECREF(item);
    return *out == (uint64_t)-1 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *params_of_row(struct nkpy_state *st, PyObject *params, Py_ssize_t r,
                               Py_ssize_t rows)
{
    if (nkpy_is_params(st, params)) {
        Py_INCREF(params);
        return params;
    }
    PyObject *p = PySequence_GetItem(params, r);
    if (p && !nkpy_is_params(st, p)) Py_CLEAR(p);
    if (!p) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "params: expected a SamplingParams or a list of %zd", rows);
    }
    return p;
}

static int prepare(struct nkpy_state *st, struct nkpy_batch_cache *bc, PyObject *params,
                   PyObject *steps, size_t threads, const struct nkpy_view *v, bool masked)
{
    Py_ssize_t rows = v->rows;
    if (!nkpy_is_params(st, params) && PySequence_Size(params) != rows) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "params: expected a SamplingParams or a list of %zd "
                     "(one per row)", rows);
        return -1;
    }
    if (steps != Py_None && !PyLong_Check(steps) && PySequence_Size(steps) != rows) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "steps: expected None, an int or %zd ints", rows);
        return -1;
    }
    if (grow(bc, (size_t)rows) < 0) return -1;
    for (Py_ssize_t r = 0; r < rows; r++) {
        uint64_t step;
        PyObject *p = params_of_row(st, params, r, rows);
        if (!p) return -1;
        int rc = row_chain(st, &bc->rows[r], p, (int32_t)v->cols, masked, r);
        Py_DECREF(p);
        if (rc < 0 || get_step(steps, r, rows, &step) < 0) return -1;
        nextok_chain_set_step(bc->rows[r].chain, step);
        bc->chains[r] = bc->rows[r].chain;
    }
    if (!bc->pool || bc->pool_threads != threads) {
        nextok_threadpool_free(bc->pool);
        bc->pool = NULL;
        nextok_status rc = nextok_threadpool_init(&bc->pool, threads);
        if (rc != NEXTOK_OK) {
            nkpy_raise(st, rc, "could not start the thread pool");
            return -1;
        }
        bc->pool_threads = threads;
    }
    return 0;
}

static PyObject *output(struct nkpy_state *st, PyObject *out, Py_ssize_t rows, int32_t **tokens)
{
    if (out == Py_None) return nkpy_new_int32_array(st, rows, tokens);
    struct nkpy_view ov;
    if (nkpy_view_get(out, NKPY_INT32 | NKPY_WRITABLE, "out", &ov) < 0) return NULL;
    bool ok = ov.ndim == 1 && ov.cols == rows;
    *tokens = (int32_t *)ov.data;
    nkpy_view_release(&ov); /* `out` itself keeps the memory: we hold it */
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "out: expected a 1-D int32 array of %zd", rows);
        return NULL;
    }
    Py_INCREF(out);
    return out;
}

/* bitmask: [B, W] int32 with W >= ceil(V / 32) (XGrammar's layout). */
static int get_bitmask(PyObject *obj, const struct nkpy_view *logits, struct nkpy_view *mv)
{
    if (nkpy_view_get(obj, NKPY_INT32, "bitmask", mv) < 0) return -1;
    size_t words = NEXTOK_BITMASK_WORDS(logits->cols);
    if (mv->rows != logits->rows || (size_t)mv->cols < words || (mv->ndim == 1 && mv->rows > 1)) {
        PyErr_Format(PyExc_ValueError, "bitmask: expected [%zd, >= %zu] int32 words, got "
                     "(%zd, %zd)", logits->rows, words, mv->rows, mv->cols);
        nkpy_view_release(mv);
        return -1;
    }
    return 0;
}

PyObject *nkpy_sample_batch(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"logits", "params", "steps", "threads", "out", "bitmask", NULL};
    PyObject *logits, *params, *steps = Py_None, *threads_obj = Py_None, *out = Py_None;
    PyObject *bitmask = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$OOOO:sample_batch", kw, &logits, &params,
                                     &steps, &threads_obj, &out, &bitmask))
        return NULL;
    struct nkpy_state *st = nkpy_state_of(module);
    size_t threads = 0;
    if (threads_obj != Py_None) {
        threads = PyLong_AsSize_t(threads_obj);
        if (threads == (size_t)-1 && PyErr_Occurred()) return NULL;
        if (threads == 0) {
            PyErr_SetString(PyExc_ValueError, "threads: must be >= 1 (None: every CPU)");
            return NULL;
        }
    }
    struct nkpy_view v, mv = {0};
    if (nkpy_view_get(logits, NKPY_FLOATS, "logits", &v) < 0) return NULL;
    if (v.ndim != 2 || v.rows < 1) {
        nkpy_view_release(&v);
        PyErr_SetString(PyExc_ValueError, "logits: expected a 2-D [B, V] array with B >= 1");
        return NULL;
    }
    if (bitmask != Py_None && get_bitmask(bitmask, &v, &mv) < 0) {
        nkpy_view_release(&v);
        return NULL;
    }
    /* another thread inside sample_batch holds the cache: use a private one */
    if (!st->batch && !(st->batch = PyMem_Calloc(1, sizeof *st->batch))) {
        nkpy_view_release(&v);
        return PyErr_NoMemory();
    }
    struct nkpy_batch_cache *bc = st->batch;
    if (bc->busy && !(bc = PyMem_Calloc(1, sizeof *bc))) {
        nkpy_view_release(&v);
        return PyErr_NoMemory();
    }
    int32_t *tokens = NULL;
    PyObject *result = NULL;
    if (prepare(st, bc, params, steps, threads, &v, mv.kind != 0) == 0 &&
        (result = output(st, out, v.rows, &tokens))) {
        nextok_status rc;
        bc->busy = true;
        Py_BEGIN_ALLOW_THREADS
        if (mv.kind)
            rc = nextok_batch_sample_bitmask(bc->pool, bc->chains, v.data, nkpy_dtype(v.elem),
                                             (size_t)v.rows, (size_t)v.row_stride,
                                             (const int32_t *)mv.data, (size_t)mv.row_stride,
                                             tokens, bc->status);
        else
            rc = nextok_batch_sample(bc->pool, bc->chains, v.data, nkpy_dtype(v.elem),
                                     (size_t)v.rows, (size_t)v.row_stride, tokens, bc->status);
        Py_END_ALLOW_THREADS
        bc->busy = false;
        if (rc != NEXTOK_OK) {
            Py_ssize_t bad = 0;
            while (bad < v.rows && bc->status[bad] == NEXTOK_OK) bad++;
            char msg[NEXTOK_ERRMSG_MAX + 32];
            PyOS_snprintf(msg, sizeof msg, "row %zd: %s", bad,
                          bad < v.rows ? nextok_chain_errmsg(bc->chains[bad]) : "");
            Py_CLEAR(result);
            nkpy_raise(st, rc, msg);
        }
    }
    nkpy_view_release(&v);
    if (mv.kind) nkpy_view_release(&mv);
    if (bc != st->batch) nkpy_batch_cache_free(bc);
    return result;
}

PyObject *nkpy_clear_batch_cache(PyObject *module, PyObject *unused)
{
    (void)unused;
    struct nkpy_state *st = nkpy_state_of(module);
    if (st->batch && st->batch->busy) {
        PyErr_SetString(PyExc_RuntimeError, "sample_batch is running in another thread");
        return NULL;
    }
    nkpy_batch_cache_free(st->batch);
    st->batch = NULL;
    Py_RETURN_NONE;
}
