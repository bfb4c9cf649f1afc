/*
 * nextok.Session's steps: step() reads the logits row in place and releases
 * the GIL while the library samples, accepts, decodes and checks the stop
 * rules; it returns the token, the text a client should see now, and why
 * generation ended (None while it goes on). Also finish, reset, set_prompt,
 * set_token_bitmask and clone.
 *
 * Text deltas are str. The library releases text a character at a time (a
 * partial UTF-8 character is held until it completes or can no longer, then
 * becomes U+FFFD), but a stop string given as bytes or a held prefix of one
 * can still cut a character; so this binding also holds back an incomplete
 * UTF-8 tail (at most 3 bytes) until the next step and decodes with
 * errors="replace": "".join(deltas) is the session's text, and no character
 * is ever split across two deltas.
 */
#include "session.h"

#include <string.h>

/* ---- text and finish reasons ---------------------------------------------------- */

/* Bytes at the end of p[0, n) that start a UTF-8 character still missing
 * bytes (0 to 3). */
static size_t incomplete_tail(const unsigned char *p, size_t n)
{
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        unsigned char c = p[n - k];
        if ((c & 0xC0) == 0x80) continue; /* a continuation byte: look further back */
        size_t need = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3
                                            : c >= 0xC2 && c <= 0xDF     ? 2 : 1;
        return need > k ? k : 0;
    }
    return 0;
}

/* The delta as str: held bytes + text, less an incomplete tail unless flush. */
static PyObject *take_text(struct nkpy_session *o, const char *text, size_t len, bool flush)
{
    const unsigned char *p = (const unsigned char *)text;
    unsigned char *tmp = NULL;
    size_t n = len;
    if (o->n_pending) {
        tmp = PyMem_Malloc(o->n_pending + len);
        if (!tmp) return PyErr_NoMemory();
        memcpy(tmp, o->pending, o->n_pending);
        if (len) memcpy(tmp + o->n_pending, text, len);
        p = tmp;
        n = o->n_pending + len;
    }
    size_t hold = flush ? 0 : incomplete_tail(p, n);
    PyObject *s = PyUnicode_DecodeUTF8((const char *)p, (Py_ssize_t)(n - hold), "replace");
    if (s) {
        memcpy(o->pending, p + n - hold, hold);
        o->n_pending = hold;
    }
    PyMem_Free(tmp);
    return s;
}

/* vLLM's finish_reason: "stop" (end id, stop token, stop string, grammar
 * complete), "length"; NULL while running. */
const char *nkpy_finish_word(enum nextok_finish f)
{
    switch (f) {
    case NEXTOK_FINISH_NONE: return NULL;
    case NEXTOK_FINISH_LENGTH: return "length";
    default: return "stop";
    }
}

PyObject *nkpy_finish_obj(enum nextok_finish f)
{
    const char *w = nkpy_finish_word(f);
    if (!w) Py_RETURN_NONE;
    return PyUnicode_FromString(w);
}

static PyObject *logprobs_tuple(const struct nextok_step_result *r)
{
    PyObject *top = PyList_New((Py_ssize_t)r->n_top);
    for (size_t i = 0; top && i < r->n_top; i++) {
        const struct nextok_top_logprob *t = &r->top[i];
        PyObject *e = Py_BuildValue("(ify#)", t->id, (double)t->logprob, t->bytes,
                                    (Py_ssize_t)t->len);
        if (!e) Py_CLEAR(top);
        else PyList_SetItem(top, (Py_ssize_t)i, e);
    }
    if (!top) return NULL;
    return Py_BuildValue("(diN)", (double)r->logprob, r->rank, top);
}

/* After a step or finish: the Python-side state and the (token, text,
 * reason) tuple. */
static PyObject *step_result(struct nkpy_session *o, const struct nextok_step_result *r,
                             bool from_finish)
{
    bool ended = from_finish || r->finish != NEXTOK_FINISH_NONE;
    if (ended) {
        o->finished = true;
        o->finish = r->finish;
        o->which = r->which;
        o->finish_token = r->token;
    }
    PyObject *text = take_text(o, r->text, r->text_len, ended);
    if (!text) return NULL;
    if (o->logprobs && !from_finish) {
        PyObject *lp = logprobs_tuple(r);
        if (!lp) {
            Py_DECREF(text);
            return NULL;
        }
        Py_XSETREF(o->last_logprobs, lp);
    }
    if (from_finish) return Py_BuildValue("(NN)", text, nkpy_finish_obj(r->finish));
    return Py_BuildValue("(iNN)", r->token, text, nkpy_finish_obj(r->finish));
}

/* ---- prompt -------------------------------------------------------------------- */

static int copy_ids(const int32_t *ids, size_t n, int32_t **out)
{
    int32_t *a = PyMem_Malloc((n ? n : 1) * sizeof *a);
    if (!a) {
        PyErr_NoMemory();
        return -1;
    }
    if (n) memcpy(a, ids, n * sizeof *a);
    *out = a;
    return 0;
}

/* set_prompt on the C session and keep a copy for reset(). */
int nkpy_session_apply_prompt(struct nkpy_session *o, PyObject *obj)
{
    struct nkpy_ids ids;
    if (nkpy_ids_get(obj, "prompt", &ids) < 0) return -1;
    int32_t *copy;
    if (copy_ids(ids.data, ids.n, &copy) < 0) {
        nkpy_ids_release(&ids);
        return -1;
    }
    nextok_status rc = nextok_session_set_prompt(o->s, ids.data, ids.n);
    nkpy_ids_release(&ids);
    if (rc != NEXTOK_OK) {
        PyMem_Free(copy);
        nkpy_session_error(o, rc);
        return -1;
    }
    PyMem_Free(o->prompt);
    o->prompt = copy;
    o->n_prompt = ids.n;
    return 0;
}

/* ---- per token ------------------------------------------------------------------- */

PyObject *nkpy_session_do_step(struct nkpy_session *o, PyObject *logits)
{
    struct nkpy_view v;
    if (nkpy_view_get(logits, NKPY_FLOATS, "logits", &v) < 0) return NULL;
    if (v.rows != 1 || v.cols != o->n_vocab) {
        PyErr_Format(PyExc_ValueError,
                     "logits: expected one row of %d (the Session's n_vocab), got shape "
                     "%s(%zd, %zd)", (int)o->n_vocab, v.ndim == 1 ? "1-D " : "", v.rows, v.cols);
        nkpy_view_release(&v);
        return NULL;
    }
    if (nkpy_session_claim(o) < 0) {
        nkpy_view_release(&v);
        return NULL;
    }
    struct nextok_step_result r;
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_session_step(o->s, v.data, nkpy_dtype(v.elem), &r);
    Py_END_ALLOW_THREADS
    o->busy = false;
    nkpy_view_release(&v);
    if (rc != NEXTOK_OK) return nkpy_session_error(o, rc);
    o->mask_set = false; /* the chain accepted a token: it forgot the mask */
    return step_result(o, &r, false);
}

PyObject *nkpy_session_step(PyObject *self, PyObject *logits)
{
    return nkpy_session_do_step((struct nkpy_session *)self, logits);
}

PyObject *nkpy_session_do_finish(struct nkpy_session *o)
{
    if (o->finished) { /* the finishing step released everything already */
        PyObject *empty = PyUnicode_FromStringAndSize("", 0);
        return empty ? Py_BuildValue("(NN)", empty, nkpy_finish_obj(o->finish)) : NULL;
    }
    if (nkpy_session_claim(o) < 0) return NULL;
    struct nextok_step_result r;
    nextok_status rc = nextok_session_finish(o->s, &r);
    o->busy = false;
    if (rc != NEXTOK_OK) return nkpy_session_error(o, rc);
    return step_result(o, &r, true);
}

PyObject *nkpy_session_finish(PyObject *self, PyObject *unused)
{
    (void)unused;
    return nkpy_session_do_finish((struct nkpy_session *)self);
}

static void clear_run_state(struct nkpy_session *o)
{
    o->finished = false;
    o->finish = NEXTOK_FINISH_NONE;
    o->which = -1;
    o->finish_token = -1;
    o->n_pending = 0;
    o->mask_set = false;
    Py_INCREF(Py_None);
    Py_XSETREF(o->last_logprobs, Py_None);
}

PyObject *nkpy_session_reset(PyObject *self, PyObject *unused)
{
    (void)unused;
    struct nkpy_session *o = (struct nkpy_session *)self;
    if (nkpy_session_claim(o) < 0) return NULL;
    nextok_session_reset(o->s);
    nextok_status rc = o->n_prompt ? nextok_session_set_prompt(o->s, o->prompt, o->n_prompt)
                                   : NEXTOK_OK;
    o->busy = false;
    clear_run_state(o);
    if (rc != NEXTOK_OK) {
        o->n_prompt = 0; /* the session has none now */
        return nkpy_session_error(o, rc);
    }
    Py_RETURN_NONE;
}

PyObject *nkpy_session_set_prompt(PyObject *self, PyObject *arg)
{
    struct nkpy_session *o = (struct nkpy_session *)self;
    if (nkpy_session_claim(o) < 0) return NULL;
    int rc = nkpy_session_apply_prompt(o, arg);
    o->busy = false;
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

PyObject *nkpy_session_set_token_bitmask(PyObject *self, PyObject *arg)
{
    struct nkpy_session *o = (struct nkpy_session *)self;
    size_t need = NEXTOK_BITMASK_WORDS(o->n_vocab);
    struct nkpy_view v;
    if (nkpy_view_get(arg, NKPY_INT32, "words", &v) < 0) return NULL;
    if (v.rows != 1 || (size_t)v.cols < need) {
        PyErr_Format(PyExc_ValueError, "words: expected one row of at least %zu int32 words "
                     "(ceil(n_vocab / 32)), got shape (%zd, %zd)", need, v.rows, v.cols);
        nkpy_view_release(&v);
        return NULL;
    }
    if (!o->mask && !(o->mask = PyMem_Malloc(need * sizeof *o->mask))) {
        nkpy_view_release(&v);
        return PyErr_NoMemory();
    }
    if (nkpy_session_claim(o) < 0) {
        nkpy_view_release(&v);
        return NULL;
    }
    /* a copy: the chain borrows it until the next step accepts a token */
    memcpy(o->mask, v.data, need * sizeof *o->mask);
    nkpy_view_release(&v);
    nextok_status rc = nextok_session_set_token_bitmask(o->s, o->mask, need);
    o->busy = false;
    if (rc != NEXTOK_OK) return nkpy_session_error(o, rc);
    o->mask_set = true;
    Py_RETURN_NONE;
}

PyObject *nkpy_session_clone(PyObject *self, PyObject *unused)
{
    (void)unused;
    struct nkpy_session *o = (struct nkpy_session *)self;
    if (nkpy_session_claim(o) < 0) return NULL;
    struct nextok_session *copy = NULL;
    nextok_status rc = nextok_session_clone(o->s, &copy);
    o->busy = false;
    if (rc != NEXTOK_OK) return nkpy_session_error(o, rc);
    PyTypeObject *type = Py_TYPE(self);
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    struct nkpy_session *c = (struct nkpy_session *)alloc(type, 0);
    if (!c) {
        nextok_session_free(copy);
        return NULL;
    }
    c->s = copy;
    Py_INCREF(o->vocab);
    c->vocab = o->vocab;
    Py_XINCREF(o->grammar);
    c->grammar = o->grammar;
    Py_INCREF(o->stop);
    c->stop = o->stop;
    c->n_vocab = o->n_vocab;
    c->logprobs = o->logprobs;
    c->finished = o->finished;
    c->finish = o->finish;
    c->which = o->which;
    c->finish_token = o->finish_token;
    memcpy(c->pending, o->pending, sizeof c->pending);
    c->n_pending = o->n_pending;
    Py_INCREF(o->last_logprobs);
    c->last_logprobs = o->last_logprobs;
    if (o->n_prompt && copy_ids(o->prompt, o->n_prompt, &c->prompt) < 0) goto fail;
    c->n_prompt = c->prompt ? o->n_prompt : 0;
    if (o->mask_set) { /* the clone's chain gets its own copy of the pending mask */
        size_t need = NEXTOK_BITMASK_WORDS(o->n_vocab);
        if (copy_ids(o->mask, need, &c->mask) < 0) goto fail;
        rc = nextok_session_set_token_bitmask(c->s, c->mask, need);
        if (rc != NEXTOK_OK) {
            nkpy_session_error(c, rc);
            goto fail;
        }
        c->mask_set = true;
    }
    return (PyObject *)c;
fail:
    Py_DECREF(c);
    return NULL;
}

