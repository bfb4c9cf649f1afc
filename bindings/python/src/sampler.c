/*
 * nextok.Sampler: one request's chain (nextok_chain_init_sampling) and the
 * calls an engine makes on it per token. sample() reads the row in place and
 * releases the GIL while the chain runs; a Sampler is used by one thread at
 * a time (a second thread calling it meanwhile gets a RuntimeError, never a
 * race).
 */
#include "ext.h"

#include <math.h>
#include <string.h>

struct nkpy_sampler {
    PyObject_HEAD
    struct nextok_chain *chain;
    int32_t n_vocab;
    bool busy;                         /* a call is running without the GIL */
    struct nextok_token_data *probs;   /* n_vocab entries, made on first use */
    PyObject *params;                  /* a copy: what the chain was built from */
    struct nkpy_view mask;             /* this step's token bitmask (borrowed by
                                          the chain until accept or reset)      */
    PyObject *mask_obj;                /* the object it came from (for clone)  */
};

static void drop_mask(struct nkpy_sampler *s)
{
    if (s->mask.kind) nkpy_view_release(&s->mask);
    Py_CLEAR(s->mask_obj);
}

static struct nkpy_state *state_of(PyObject *self)
{
    return nkpy_state_from_type(Py_TYPE(self));
}

static PyObject *chain_error(PyObject *self, nextok_status rc)
{
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    return nkpy_raise(state_of(self), rc, nextok_chain_errmsg(s->chain));
}

/* Claim the sampler for a call that releases the GIL. */
static int claim(struct nkpy_sampler *s)
{
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "this Sampler is in use by another thread (use one Sampler per thread)");
        return -1;
    }
    s->busy = true;
    return 0;
}

/* A 1-D row of n_vocab logits (a [1, V] batch is also a row). */
static int get_row(struct nkpy_sampler *s, PyObject *obj, struct nkpy_view *v)
{
    if (nkpy_view_get(obj, NKPY_FLOATS, "logits", v) < 0) return -1;
    if (v->rows != 1 || v->cols != s->n_vocab) {
        PyErr_Format(PyExc_ValueError,
                     "logits: expected one row of %d (the Sampler's n_vocab), got shape "
                     "%s(%zd, %zd)", (int)s->n_vocab, v->ndim == 1 ? "1-D " : "", v->rows, v->cols);
        nkpy_view_release(v);
        return -1;
    }
    return 0;
}

/* ---- construction --------------------------------------------------------- */

static PyObject *sampler_wrap(PyTypeObject *type, struct nextok_chain *chain, int32_t n_vocab,
                              PyObject *params)
{
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    struct nkpy_sampler *s = (struct nkpy_sampler *)alloc(type, 0);
    if (!s) {
        nextok_chain_free(chain);
        return NULL;
    }
    s->chain = chain;
    s->n_vocab = n_vocab;
    Py_INCREF(params);
    s->params = params;
    return (PyObject *)s;
}

static PyObject *sampler_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"params", "n_vocab", "eog_ids", NULL};
    PyObject *params, *eog_obj = Py_None;
    int n_vocab;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oi|$O:Sampler", kw, &params, &n_vocab,
                                     &eog_obj))
        return NULL;
    struct nkpy_state *st = nkpy_state_from_type(type);
    if (!nkpy_is_params(st, params)) {
        PyErr_SetString(PyExc_TypeError, "Sampler: params must be a nextok.SamplingParams");
        return NULL;
    }
    int32_t *eog = NULL, *scratch = NULL;
    size_t n_eog = 0;
    if (nkpy_int32_seq(eog_obj, "eog_ids", &eog, &n_eog) < 0) return NULL;
    struct nextok_sampling_params c;
    struct nextok_error err = {0};
    struct nextok_chain *chain = NULL;
    PyObject *copy = NULL, *out = NULL;
    if (nkpy_params_fill(params, n_vocab, &c, &scratch, eog, n_eog) == 0) {
        nextok_status rc = nextok_chain_init_sampling(&chain, &c, &err);
        if (rc != NEXTOK_OK) {
            nkpy_raise(st, rc, err.msg);
        } else if ((copy = PyObject_CallMethod(params, "copy", NULL))) {
            out = sampler_wrap(type, chain, n_vocab, copy);
            chain = NULL;
        }
    }
    nextok_chain_free(chain);
    Py_XDECREF(copy);
    PyMem_Free(scratch);
    PyMem_Free(eog);
    return out;
}

static void sampler_dealloc(PyObject *self)
{
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    PyTypeObject *tp = Py_TYPE(self);
    nextok_chain_free(s->chain);
    drop_mask(s);
    PyMem_Free(s->probs);
    Py_XDECREF(s->params);
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

/* ---- per token ------------------------------------------------------------------ */

static PyObject *sampler_sample(PyObject *self, PyObject *logits)
{
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    struct nkpy_view v;
    if (get_row(s, logits, &v) < 0) return NULL;
    if (claim(s) < 0) {
        nkpy_view_release(&v);
        return NULL;
    }
    int32_t token = -1;
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_chain_sample(s->chain, v.data, nkpy_dtype(v.elem), &token);
    Py_END_ALLOW_THREADS
    s->busy = false;
    nkpy_view_release(&v);
    if (rc != NEXTOK_OK) return chain_error(self, rc);
    return PyLong_FromLong(token);
}

static PyObject *sampler_accept(PyObject *self, PyObject *arg)
{
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    long token = PyLong_AsLong(arg);
    if (token == -1 && PyErr_Occurred()) return NULL;
    if (token < INT32_MIN || token > INT32_MAX) token = -1; /* the library names the range */
    if (claim(s) < 0) return NULL;
    nextok_status rc = nextok_chain_accept(s->chain, (int32_t)token);
    s->busy = false;
    if (rc != NEXTOK_OK) return chain_error(self, rc);
    drop_mask(s); /* the chain forgot it */
    Py_RETURN_NONE;
}

static PyObject *sampler_set_prompt(PyObject *self, PyObject *arg)
{
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    int32_t *ids;
    size_t n;
    if (nkpy_int32_seq(arg, "prompt ids", &ids, &n) < 0) return NULL;
    if (claim(s) < 0) {
        PyMem_Free(ids);
        return NULL;
    }
    nextok_status rc = nextok_chain_set_prompt(s->chain, ids, n);
    s->busy = false;
    PyMem_Free(ids);
    if (rc != NEXTOK_OK) return chain_error(self, rc);
    Py_RETURN_NONE;
}

/* The final distribution: [(id, p), ...] sorted by p descending, and the token
 * sample() would return. Fills s->probs; *n survivors. */
static int run_probs(struct nkpy_sampler *s, PyObject *logits, size_t *n, int32_t *token)
{
    if (!s->probs && !(s->probs = PyMem_Malloc((size_t)s->n_vocab * sizeof *s->probs))) {
        PyErr_NoMemory();
        return -1;
    }
    struct nkpy_view v;
    if (get_row(s, logits, &v) < 0) return -1;
    if (claim(s) < 0) {
        nkpy_view_release(&v);
        return -1;
    }
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_chain_probs(s->chain, v.data, nkpy_dtype(v.elem), s->probs, (size_t)s->n_vocab,
                            n, token);
    Py_END_ALLOW_THREADS
    s->busy = false;
    nkpy_view_release(&v);
    if (rc != NEXTOK_OK) {
        chain_error((PyObject *)s, rc);
        return -1;
    }
    return 0;
}

static PyObject *sampler_probs(PyObject *self, PyObject *logits)
{
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    size_t n;
    int32_t token;
    if (run_probs(s, logits, &n, &token) < 0) return NULL;
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *pair = Py_BuildValue("(if)", s->probs[i].id, (double)s->probs[i].p);
        if (!pair) Py_CLEAR(list);
        else PyList_SetItem(list, (Py_ssize_t)i, pair);
    }
    return list;
}

static PyObject *sampler_logprobs(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"logits", "n", "processed", "token", NULL};
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    PyObject *logits, *token_obj = Py_None;
    Py_ssize_t top_n = 0;
    int processed = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|n$pO:logprobs", kw, &logits, &top_n,
                                     &processed, &token_obj))
        return NULL;
    if (top_n < 0 || top_n > s->n_vocab) {
        PyErr_Format(PyExc_ValueError, "logprobs: n must be in [0, %d]", (int)s->n_vocab);
        return NULL;
    }
    long want = -1;
    if (token_obj != Py_None) {
        want = PyLong_AsLong(token_obj);
        if (want == -1 && PyErr_Occurred()) return NULL;
        if (want < 0 || want >= s->n_vocab) {
            PyErr_Format(PyExc_ValueError, "logprobs: token %ld out of range [0, %d)", want,
                         (int)s->n_vocab);
            return NULL;
        }
    }
    /* the chain's distribution at this step (and the token sample() picks):
     * needed unless the raw row's logprobs of a given token are asked */
    size_t n_surv;
    int32_t token = (int32_t)want;
    if ((processed || want < 0) && run_probs(s, logits, &n_surv, &token) < 0) return NULL;
    if (want >= 0) token = (int32_t)want;
    struct nextok_logprob *top = top_n ? PyMem_Malloc((size_t)top_n * sizeof *top) : NULL;
    if (top_n && !top) return PyErr_NoMemory();
    struct nkpy_view v = {0};
    if (!processed && get_row(s, logits, &v) < 0) {
        PyMem_Free(top);
        return NULL;
    }
    size_t n_top = 0;
    float lp = NAN;
    int32_t rank = 0;
    nextok_status rc = nextok_chain_logprobs(
        s->chain, processed ? NEXTOK_LOGPROBS_PROCESSED : NEXTOK_LOGPROBS_RAW,
        processed ? NULL : v.data, processed ? NEXTOK_DTYPE_F32 : nkpy_dtype(v.elem), token,
        (size_t)top_n, top, &n_top, &lp, &rank);
    if (!processed) nkpy_view_release(&v);
    PyObject *list = rc == NEXTOK_OK ? PyList_New((Py_ssize_t)n_top) : NULL;
    for (size_t i = 0; list && i < n_top; i++) {
        PyObject *pair = Py_BuildValue("(if)", top[i].id, (double)top[i].logprob);
        if (!pair) Py_CLEAR(list);
        else PyList_SetItem(list, (Py_ssize_t)i, pair);
    }
    PyMem_Free(top);
    if (rc != NEXTOK_OK) return chain_error(self, rc);
    if (!list) return NULL;
    return Py_BuildValue("(ifiN)", token, (double)lp, rank, list);
}

static PyObject *sampler_reset(PyObject *self, PyObject *unused)
{
    (void)unused;
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    if (claim(s) < 0) return NULL;
    nextok_chain_reset(s->chain);
    s->busy = false;
    drop_mask(s);
    Py_RETURN_NONE;
}

static PyObject *sampler_set_token_bitmask(PyObject *self, PyObject *arg)
{
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    struct nkpy_view v;
    if (nkpy_view_get(arg, NKPY_INT32, "bitmask", &v) < 0) return NULL;
    size_t words = NEXTOK_BITMASK_WORDS(s->n_vocab);
    if (v.rows != 1 || (size_t)v.cols < words) {
        PyErr_Format(PyExc_ValueError, "bitmask: expected one row of at least %zu int32 words "
                     "(ceil(n_vocab / 32)), got (%zd, %zd)", words, v.rows, v.cols);
        nkpy_view_release(&v);
        return NULL;
    }
    if (claim(s) < 0) {
        nkpy_view_release(&v);
        return NULL;
    }
    nextok_status rc = nextok_chain_set_token_bitmask(s->chain, (const int32_t *)v.data,
                                                      (size_t)v.cols);
    s->busy = false;
    if (rc != NEXTOK_OK) {
        nkpy_view_release(&v);
        return chain_error(self, rc);
    }
    drop_mask(s);
    s->mask = v; /* held (and the array kept alive) until accept or reset */
    Py_INCREF(arg);
    s->mask_obj = arg;
    Py_RETURN_NONE;
}

static PyObject *sampler_clone(PyObject *self, PyObject *unused)
{
    (void)unused;
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    struct nextok_chain *copy = NULL;
    if (claim(s) < 0) return NULL;
    nextok_status rc = nextok_chain_clone(s->chain, &copy);
    s->busy = false;
    if (rc != NEXTOK_OK) return chain_error(self, rc);
    PyObject *clone = sampler_wrap(Py_TYPE(self), copy, s->n_vocab, s->params);
    /* a mask set for this step is borrowed by the copy's chain too: it holds
     * its own view of the same array */
    if (clone && s->mask_obj) {
        PyObject *r = sampler_set_token_bitmask(clone, s->mask_obj);
        if (!r) Py_CLEAR(clone);
        Py_XDECREF(r);
    }
    return clone;
}

static PyObject *get_step(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(nextok_chain_step(((struct nkpy_sampler *)self)->chain));
}

static int set_step(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    struct nkpy_sampler *s = (struct nkpy_sampler *)self;
    unsigned long long step = v ? PyLong_AsUnsignedLongLong(v) : 0;
    if (!v) PyErr_SetString(PyExc_AttributeError, "step cannot be deleted");
    if (PyErr_Occurred() || claim(s) < 0) return -1;
    nextok_chain_set_step(s->chain, step);
    s->busy = false;
    return 0;
}

static PyObject *get_n_vocab(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((struct nkpy_sampler *)self)->n_vocab);
}

static PyObject *get_params(PyObject *self, void *c)
{
    (void)c;
    /* a copy again: changing it cannot change this sampler's chain */
    return PyObject_CallMethod(((struct nkpy_sampler *)self)->params, "copy", NULL);
}

static PyObject *get_stages(PyObject *self, void *c)
{
    (void)c;
    struct nextok_chain *chain = ((struct nkpy_sampler *)self)->chain;
    size_t n = nextok_chain_n(chain);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *name = PyUnicode_FromString(nextok_sampler_name(nextok_chain_get(chain, i)));
        if (!name) Py_CLEAR(list);
        else PyList_SetItem(list, (Py_ssize_t)i, name);
    }
    return list;
}

static PyMethodDef sampler_methods[] = {
    {"sample", sampler_sample, METH_O,
     "sample(logits) -> int: a token from one row of n_vocab logits (float32, float16 or\n"
     "bfloat16; read in place). Does not accept it: call accept(token)."},
    {"accept", sampler_accept, METH_O,
     "accept(token): the token was emitted (penalty history, step += 1)."},
    {"set_prompt", sampler_set_prompt, METH_O,
     "set_prompt(ids): the prompt tokens, for penalties, DRY and n-gram bans."},
    {"probs", sampler_probs, METH_O,
     "probs(logits) -> [(id, p), ...]: the distribution sample() draws from at this step,\n"
     "by p descending then id."},
    {"logprobs", (PyCFunction)(void (*)(void))sampler_logprobs, METH_VARARGS | METH_KEYWORDS,
     "logprobs(logits, n=0, *, processed=True, token=None) -> (token, logprob, rank, top)\n\n"
     "token: the one sample() would return at this step, or the one given; logprob and\n"
     "rank (1-based, 0 outside the distribution) of it; top: the n best [(id, logprob)].\n"
     "processed=True: of the final distribution (after every stage); False: log_softmax\n"
     "of the raw row (vLLM's default)."},
    {"set_token_bitmask", sampler_set_token_bitmask, METH_O,
     "set_token_bitmask(words): this step's allowed tokens as an int32 array of\n"
     "ceil(n_vocab / 32) words (bit i % 32 of word i // 32; XGrammar's and vLLM's layout),\n"
     "e.g. from Matcher.fill_bitmask. Needs SamplingParams(token_bitmask=True). Read in\n"
     "place: keep it unchanged until accept() or reset(), which release it."},
    {"reset", sampler_reset, METH_NOARGS, "reset(): forget history and prompt; step = 0."},
    {"clone", sampler_clone, METH_NOARGS,
     "clone() -> Sampler: an independent copy with the same history and step."},
    {"__copy__", sampler_clone, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef sampler_getset[] = {
    {"step", get_step, set_step, "the seed position: accepted tokens since reset", NULL},
    {"n_vocab", get_n_vocab, NULL, "the row length", NULL},
    {"params", get_params, NULL, "a copy of the SamplingParams it was built from", NULL},
    {"stages", get_stages, NULL, "the chain's stage names, in order", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot sampler_slots[] = {
    {Py_tp_new, sampler_new},
    {Py_tp_dealloc, sampler_dealloc},
    {Py_tp_methods, sampler_methods},
    {Py_tp_getset, sampler_getset},
    {Py_tp_doc,
     "Sampler(params, n_vocab, *, eog_ids=None)\n\n"
     "The sampling chain for one request, built from a SamplingParams (copied). eog_ids:\n"
     "the ids min_tokens suppresses besides params.stop_token_ids. At step 0 with\n"
     "seed=S, sample(row) returns what `nextok sample --logits row.npy --seed S -n 1`\n"
     "does with the same settings."},
    {0, NULL},
};

static PyType_Spec sampler_spec = {
    "nextok.Sampler", sizeof(struct nkpy_sampler), 0, Py_TPFLAGS_DEFAULT, sampler_slots,
};

int nkpy_add_sampler(PyObject *m, struct nkpy_state *st)
{
    st->sampler_type = PyType_FromSpec(&sampler_spec);
    if (!st->sampler_type) return -1;
    Py_INCREF(st->sampler_type);
    return PyModule_AddObject(m, "Sampler", st->sampler_type);
}
