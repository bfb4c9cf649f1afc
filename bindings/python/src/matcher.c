/*
 * nextok.Matcher: one generation's walk through a CompiledGrammar, giving
 * the exact token mask of each step in the layout XGrammar, llguidance and
 * vLLM use (int32 words, token i allowed iff bit i % 32 of word i / 32).
 * fill_bitmask writes into the caller's array in place (numpy, torch,
 * DLPack) with the GIL released. Every call either succeeds or changes
 * nothing. A Matcher is used by one thread at a time (a second thread
 * calling it meanwhile gets a RuntimeError); its clones share a parser-state
 * cache under a lock and may live on other threads.
 */
#include "ext.h"

#include <string.h>

struct nkpy_matcher {
    PyObject_HEAD
    struct nextok_matcher *m;
    PyObject *compiled;
    int32_t n_vocab;
    bool busy;
    Py_ssize_t last_n_allowed;       /* -1 before the first fill */
};

static struct nkpy_state *state_of(PyObject *self)
{
    return nkpy_state_from_type(Py_TYPE(self));
}

static int claim(struct nkpy_matcher *o)
{
    if (o->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "this Matcher is in use by another thread (clone() one per thread)");
        return -1;
    }
    o->busy = true;
    return 0;
}

static PyObject *wrap(PyTypeObject *type, struct nextok_matcher *m, PyObject *compiled)
{
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    struct nkpy_matcher *o = (struct nkpy_matcher *)alloc(type, 0);
    if (!o) {
        nextok_matcher_free(m);
        return NULL;
    }
    o->m = m;
    Py_INCREF(compiled);
    o->compiled = compiled;
    o->n_vocab = nextok_compiled_grammar_n_vocab(nkpy_compiled_ptr(compiled));
    o->last_n_allowed = -1;
    return (PyObject *)o;
}

static PyObject *matcher_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"compiled", NULL};
    PyObject *compiled;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Matcher", kw, &compiled)) return NULL;
    struct nkpy_state *st = nkpy_state_from_type(type);
    if (!nkpy_is_compiled(st, compiled)) {
        PyErr_SetString(PyExc_TypeError,
                        "Matcher: expected a nextok.CompiledGrammar (Grammar.compile(vocab))");
        return NULL;
    }
    struct nextok_matcher *m = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_matcher_init(&m, nkpy_compiled_ptr(compiled), &err);
    if (rc != NEXTOK_OK) return nkpy_raise(st, rc, err.msg);
    return wrap(type, m, compiled);
}

static void matcher_dealloc(PyObject *self)
{
    struct nkpy_matcher *o = (struct nkpy_matcher *)self;
    PyTypeObject *tp = Py_TYPE(self);
    nextok_matcher_free(o->m);
    Py_XDECREF(o->compiled);
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

static PyObject *fail(PyObject *self, nextok_status rc, const struct nextok_error *err)
{
    return nkpy_raise(state_of(self), rc, err->msg);
}

/* ---- masks -------------------------------------------------------------------------- */

static PyObject *matcher_fill_bitmask(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"out", "index", NULL};
    struct nkpy_matcher *o = (struct nkpy_matcher *)self;
    PyObject *out = Py_None, *index_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$O:fill_bitmask", kw, &out, &index_obj))
        return NULL;
    size_t need = NEXTOK_BITMASK_WORDS(o->n_vocab);
    struct nkpy_view v;
    int32_t *words;
    size_t n_words;
    PyObject *result;
    bool have_view = false;
    if (out == Py_None) {
        if (index_obj != Py_None) {
            PyErr_SetString(PyExc_ValueError, "fill_bitmask: index= goes with out=");
            return NULL;
        }
        result = nkpy_new_int32_array(state_of(self), (Py_ssize_t)need, &words);
        if (!result) return NULL;
        n_words = need;
    } else {
        if (nkpy_view_get(out, NKPY_INT32 | NKPY_WRITABLE, "out", &v) < 0) return NULL;
        have_view = true;
        Py_ssize_t row = 0;
        if (index_obj != Py_None) {
            row = PyLong_AsSsize_t(index_obj);
            if (row == -1 && PyErr_Occurred()) goto bad;
            if (row < 0 || row >= v.rows) {
                PyErr_Format(PyExc_IndexError, "fill_bitmask: index %zd out of range for %zd rows",
                             row, v.rows);
                goto bad;
            }
        } else if (v.rows != 1) {
            PyErr_Format(PyExc_ValueError, "out: a [%zd, %zd] array needs index= (the row to fill)",
                         v.rows, v.cols);
            goto bad;
        }
        if ((size_t)v.cols < need) {
            PyErr_Format(PyExc_ValueError,
                         "out: %zd words per row, need at least %zu (ceil(n_vocab / 32), n_vocab %d)",
                         v.cols, need, (int)o->n_vocab);
            goto bad;
        }
        words = (int32_t *)v.data + row * v.row_stride;
        n_words = (size_t)v.cols;
        Py_INCREF(out);
        result = out;
    }
    if (claim(o) < 0) {
        Py_DECREF(result);
        goto bad;
    }
    size_t n_allowed = 0;
    struct nextok_error err = {0};
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_matcher_fill_bitmask(o->m, words, n_words, &n_allowed, &err);
    Py_END_ALLOW_THREADS
    o->busy = false;
    if (have_view) nkpy_view_release(&v);
    if (rc != NEXTOK_OK) {
        Py_DECREF(result);
        return fail(self, rc, &err);
    }
    o->last_n_allowed = (Py_ssize_t)n_allowed;
    return result;
bad:
    if (have_view) nkpy_view_release(&v);
    return NULL;
}

static int token_of(PyObject *arg, int32_t *token)
{
    long t = PyLong_AsLong(arg);
    if (t == -1 && PyErr_Occurred()) return -1;
    *token = t < INT32_MIN || t > INT32_MAX ? -1 : (int32_t)t; /* the library names the range */
    return 0;
}

static PyObject *matcher_is_allowed(PyObject *self, PyObject *arg)
{
    struct nkpy_matcher *o = (struct nkpy_matcher *)self;
    int32_t token;
    if (token_of(arg, &token) < 0 || claim(o) < 0) return NULL;
    bool allowed = false;
    struct nextok_error err = {0};
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_matcher_is_allowed(o->m, token, &allowed, &err);
    Py_END_ALLOW_THREADS
    o->busy = false;
    if (rc != NEXTOK_OK) return fail(self, rc, &err);
    return PyBool_FromLong(allowed);
}

static PyObject *matcher_accept_token(PyObject *self, PyObject *arg)
{
    struct nkpy_matcher *o = (struct nkpy_matcher *)self;
    int32_t token;
    if (token_of(arg, &token) < 0 || claim(o) < 0) return NULL;
    struct nextok_error err = {0};
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_matcher_accept_token(o->m, token, &err);
    Py_END_ALLOW_THREADS
    o->busy = false;
    if (rc != NEXTOK_OK) return fail(self, rc, &err);
    Py_RETURN_NONE;
}

static PyObject *matcher_accept_bytes(PyObject *self, PyObject *arg)
{
    struct nkpy_matcher *o = (struct nkpy_matcher *)self;
    PyObject *owner;
    const char *data;
    Py_ssize_t len;
    if (nkpy_text_get(arg, "bytes", &owner, &data, &len) < 0) return NULL;
    if (claim(o) < 0) {
        Py_DECREF(owner);
        return NULL;
    }
    struct nextok_error err = {0};
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_matcher_accept_bytes(o->m, data, (size_t)len, &err);
    Py_END_ALLOW_THREADS
    o->busy = false;
    Py_DECREF(owner);
    if (rc != NEXTOK_OK) return fail(self, rc, &err);
    Py_RETURN_NONE;
}

static PyObject *matcher_rollback(PyObject *self, PyObject *args)
{
    struct nkpy_matcher *o = (struct nkpy_matcher *)self;
    Py_ssize_t n = 1;
    if (!PyArg_ParseTuple(args, "|n:rollback", &n)) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "rollback: n must be >= 0");
        return NULL;
    }
    if (claim(o) < 0) return NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_matcher_rollback(o->m, (size_t)n, &err);
    o->busy = false;
    if (rc != NEXTOK_OK) return fail(self, rc, &err);
    Py_RETURN_NONE;
}

static PyObject *matcher_reset(PyObject *self, PyObject *unused)
{
    (void)unused;
    struct nkpy_matcher *o = (struct nkpy_matcher *)self;
    if (claim(o) < 0) return NULL;
    nextok_matcher_reset(o->m);
    o->busy = false;
    Py_RETURN_NONE;
}

static PyObject *matcher_clone(PyObject *self, PyObject *unused)
{
    (void)unused;
    struct nkpy_matcher *o = (struct nkpy_matcher *)self;
    if (claim(o) < 0) return NULL;
    struct nextok_matcher *copy = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_matcher_clone(&copy, o->m, &err);
    o->busy = false;
    if (rc != NEXTOK_OK) return fail(self, rc, &err);
    return wrap(Py_TYPE(self), copy, o->compiled);
}

/* is_accepting, is_terminated, is_complete */
static PyObject *matcher_bool(PyObject *self, int which)
{
    struct nkpy_matcher *o = (struct nkpy_matcher *)self;
    if (claim(o) < 0) return NULL;
    bool b;
    if (which == 0) {
        b = nextok_matcher_is_accepting(o->m);
    } else if (which == 1) {
        b = nextok_matcher_is_terminated(o->m);
    } else {
        Py_BEGIN_ALLOW_THREADS
        b = nextok_matcher_is_complete(o->m);
        Py_END_ALLOW_THREADS
    }
    o->busy = false;
    return PyBool_FromLong(b);
}

static PyObject *matcher_is_accepting(PyObject *self, PyObject *unused)
{
    (void)unused;
    return matcher_bool(self, 0);
}

static PyObject *matcher_is_terminated(PyObject *self, PyObject *unused)
{
    (void)unused;
    return matcher_bool(self, 1);
}

static PyObject *matcher_is_complete(PyObject *self, PyObject *unused)
{
    (void)unused;
    return matcher_bool(self, 2);
}

static PyObject *matcher_forced_bytes(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"limit", NULL};
    struct nkpy_matcher *o = (struct nkpy_matcher *)self;
    Py_ssize_t limit = 4096;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|n:forced_bytes", kw, &limit)) return NULL;
    if (limit < 0) {
        PyErr_SetString(PyExc_ValueError, "forced_bytes: limit must be >= 0");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, limit);
    if (!out) return NULL;
    if (claim(o) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    size_t len = 0;
    struct nextok_error err = {0};
    nextok_status rc;
    char *buf = PyBytes_AsString(out);
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_matcher_forced_bytes(o->m, buf, (size_t)limit, &len, &err);
    Py_END_ALLOW_THREADS
    o->busy = false;
    if (rc != NEXTOK_OK) {
        Py_DECREF(out);
        return fail(self, rc, &err);
    }
    PyObject *exact = PyBytes_FromStringAndSize(buf, (Py_ssize_t)len);
    Py_DECREF(out);
    return exact;
}

static PyObject *get_n_steps(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(nextok_matcher_n_steps(((struct nkpy_matcher *)self)->m));
}

static PyObject *get_n_vocab(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((struct nkpy_matcher *)self)->n_vocab);
}

static PyObject *get_n_words(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(NEXTOK_BITMASK_WORDS(((struct nkpy_matcher *)self)->n_vocab));
}

static PyObject *get_last_n_allowed(PyObject *self, void *c)
{
    (void)c;
    Py_ssize_t n = ((struct nkpy_matcher *)self)->last_n_allowed;
    if (n < 0) Py_RETURN_NONE;
    return PyLong_FromSsize_t(n);
}

static PyObject *get_compiled(PyObject *self, void *c)
{
    (void)c;
    PyObject *g = ((struct nkpy_matcher *)self)->compiled;
    Py_INCREF(g);
    return g;
}

static PyMethodDef matcher_methods[] = {
    {"fill_bitmask", (PyCFunction)(void (*)(void))matcher_fill_bitmask,
     METH_VARARGS | METH_KEYWORDS,
     "fill_bitmask(out=None, *, index=None) -> array\n\n"
     "This step's mask: token i is allowed iff bit i % 32 of word i // 32 is set.\n"
     "out None: a new numpy int32 array of n_words = ceil(n_vocab / 32) words.\n"
     "Otherwise written in place into out and out returned: an int32 numpy array or\n"
     "torch tensor (anything DLPack), 1-D with at least n_words words (words past\n"
     "n_words are zeroed: a model whose rows are wider than the vocabulary gets them\n"
     "masked), or 2-D [B, W] with index= the row to fill. The GIL is released.\n"
     "Raises nextok.Error ERR_STATE once terminated."},
    {"is_allowed", matcher_is_allowed, METH_O,
     "is_allowed(token) -> bool: whether the mask allows token now (cheaper than a mask)."},
    {"accept_token", matcher_accept_token, METH_O,
     "accept_token(token): advance by one token. Raises nextok.Error ERR_REJECTED when\n"
     "the mask does not allow it (ERR_TOKEN_RANGE outside the vocabulary); the matcher\n"
     "is then unchanged. Accepting an end-of-generation token terminates it."},
    {"accept_bytes", matcher_accept_bytes, METH_O,
     "accept_bytes(data): advance by text (str as UTF-8, or bytes), all or nothing\n"
     "(ERR_REJECTED); one step for rollback. For text the engine inserts itself (forced\n"
     "bytes)."},
    {"rollback", matcher_rollback, METH_VARARGS,
     "rollback(n=1): undo the last n accept calls (speculative decoding). ERR_INVALID_ARG\n"
     "when fewer were made since construction or reset."},
    {"reset", matcher_reset, METH_NOARGS, "reset(): back to the start (the state cache stays)."},
    {"clone", matcher_clone, METH_NOARGS,
     "clone() -> Matcher: an independent matcher in the same state (the state cache is\n"
     "shared, so clones are cheap; a clone may be used on another thread)."},
    {"__copy__", matcher_clone, METH_NOARGS, NULL},
    {"is_accepting", matcher_is_accepting, METH_NOARGS,
     "is_accepting() -> bool: the text so far is a sentence (end ids are allowed)."},
    {"is_terminated", matcher_is_terminated, METH_NOARGS,
     "is_terminated() -> bool: an end-of-generation token was accepted."},
    {"is_complete", matcher_is_complete, METH_NOARGS,
     "is_complete() -> bool: accepting, and nothing but the end can follow."},
    {"forced_bytes", (PyCFunction)(void (*)(void))matcher_forced_bytes,
     METH_VARARGS | METH_KEYWORDS,
     "forced_bytes(limit=4096) -> bytes: the bytes every continuation starts with, up\n"
     "to where the grammar may end or branches (jump-forward decoding); at most limit."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef matcher_getset[] = {
    {"n_steps", get_n_steps, NULL, "accept calls since construction or reset", NULL},
    {"n_vocab", get_n_vocab, NULL, "the vocabulary's size", NULL},
    {"n_words", get_n_words, NULL, "words in a mask: ceil(n_vocab / 32)", NULL},
    {"last_n_allowed", get_last_n_allowed, NULL,
     "tokens the last fill_bitmask allowed (None before the first)", NULL},
    {"compiled", get_compiled, NULL, "the CompiledGrammar", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot matcher_slots[] = {
    {Py_tp_new, matcher_new},
    {Py_tp_dealloc, matcher_dealloc},
    {Py_tp_methods, matcher_methods},
    {Py_tp_getset, matcher_getset},
    {Py_tp_doc,
     "Matcher(compiled)\n\n"
     "Follows one generation through a CompiledGrammar: fill_bitmask() before each\n"
     "step, accept_token() after it. Token t is allowed iff its bytes extend the text\n"
     "so far to a prefix of a sentence; end-of-generation tokens exactly when the\n"
     "grammar can end. Every call either succeeds or changes nothing."},
    {0, NULL},
};

static PyType_Spec matcher_spec = {
    "nextok.Matcher", sizeof(struct nkpy_matcher), 0, Py_TPFLAGS_DEFAULT, matcher_slots,
};

int nkpy_add_matcher(PyObject *m, struct nkpy_state *st)
{
    st->matcher_type = PyType_FromSpec(&matcher_spec);
    if (!st->matcher_type) return -1;
    Py_INCREF(st->matcher_type);
    return PyModule_AddObject(m, "Matcher", st->matcher_type);
}
