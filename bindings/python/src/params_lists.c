/*
 * SamplingParams' fields that hold lists (allowed and banned ids, logit
 * bias, DRY breakers, stop strings and ids) and the samplers order and
 * logprobs: each converted to its C array when set, so a chain is built
 * from the object with no conversion.
 */
#include "params.h"

#include <string.h>

int nkpy_set_i32(PyObject *v, const char *name, int32_t *out)
{
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (overflow || x < INT32_MIN || x > INT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s: does not fit in int32", name);
        return -1;
    }
    *out = (int32_t)x;
    return 0;
}

/* ---- list fields ---------------------------------------------------------------- */

/* A tuple of the ints (for the getters: what was set, as a value). */
static PyObject *int32_tuple(const int32_t *a, size_t n)
{
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++) {
        PyObject *x = PyLong_FromLong(a[i]);
        if (!x) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SetItem(t, (Py_ssize_t)i, x);
    }
    return t;
}

/* Replace *slot (a Python value) and *arr (its C array); takes both. */
static void replace(PyObject **slot, PyObject *value, void **arr, void *new_arr)
{
    Py_XSETREF(*slot, value);
    PyMem_Free(*arr);
    *arr = new_arr;
}

static PyObject *get_slot(PyObject *value)
{
    if (!value) Py_RETURN_NONE;
    Py_INCREF(value);
    return value;
}

static int no_delete(PyObject *v, const char *name)
{
    if (v) return 0;
    PyErr_Format(PyExc_AttributeError, "%s cannot be deleted (set it to None)", name);
    return -1;
}

/* allowed_token_ids, banned_token_ids: None or a sequence of ids */
static int set_ids_field(struct nkpy_params *p, PyObject *v, const char *name, PyObject **slot,
                         int32_t **arr, const int32_t **c_ptr, size_t *c_n)
{
    int32_t *a;
    size_t n;
    if (no_delete(v, name) < 0 || nkpy_int32_seq(v, name, &a, &n) < 0) return -1;
    PyObject *value = Py_None;
    if (v != Py_None && !(value = int32_tuple(a, n))) {
        PyMem_Free(a);
        return -1;
    }
    if (v == Py_None) Py_INCREF(value);
    replace(slot, value, (void **)arr, a);
    /* an empty whitelist is a whitelist (everything masked), so keep non-NULL */
    *c_ptr = v == Py_None ? NULL : (a ? a : (const int32_t *)&p->version);
    *c_n = n;
    p->version++;
    return 0;
}

static PyObject *get_allowed(PyObject *self, void *c) { (void)c; return get_slot(((struct nkpy_params *)self)->allowed); }
static PyObject *get_banned(PyObject *self, void *c) { (void)c; return get_slot(((struct nkpy_params *)self)->banned); }

static int set_allowed(PyObject *self, PyObject *v, void *closure)
{
    (void)closure;
    struct nkpy_params *p = (struct nkpy_params *)self;
    return set_ids_field(p, v, "allowed_token_ids", &p->allowed, &p->allowed_c,
                         &p->c.allowed_ids, &p->c.n_allowed);
}

static int set_banned(PyObject *self, PyObject *v, void *closure)
{
    (void)closure;
    struct nkpy_params *p = (struct nkpy_params *)self;
    return set_ids_field(p, v, "banned_token_ids", &p->banned, &p->banned_c, &p->c.banned_ids,
                         &p->c.n_banned);
}

/* bad_words_ids (HF's name): a list of id lists. nextok bans single tokens;
 * a longer sequence would need a stage that bans its last token only after
 * its prefix, which the library does not have: refused, not approximated. */
static int set_bad_words(PyObject *self, PyObject *v, void *closure)
{
    (void)closure;
    if (no_delete(v, "bad_words_ids") < 0) return -1;
    if (v == Py_None) return set_banned(self, v, NULL);
    PyObject *seq = PySequence_Fast(v, "bad_words_ids: expected a list of id lists");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Size(seq);
    PyObject *flat = PyList_New(0);
    for (Py_ssize_t i = 0; flat && i < n; i++) {
        PyObject *word = PySequence_GetItem(seq, i);
        Py_ssize_t len = word ? PySequence_Size(word) : -1;
        if (len != 1) {
            if (len >= 0 || !PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_ValueError,
                             "bad_words_ids: item %zd is not a list of one id (sequences of "
                             "several tokens are not supported)", i);
            }
            Py_XDECREF(word);
            Py_CLEAR(flat);
            break;
        }
        PyObject *id = PySequence_GetItem(word, 0);
        Py_DECREF(word);
        if (!id || PyList_Append(flat, id) < 0) Py_CLEAR(flat);
        Py_XDECREF(id);
    }
    Py_DECREF(seq);
    if (!flat) return -1;
    int rc = set_banned(self, flat, NULL);
    Py_DECREF(flat);
    return rc;
}

static PyObject *get_bad_words(PyObject *self, void *closure)
{
    (void)closure;
    struct nkpy_params *p = (struct nkpy_params *)self;
    if (!p->banned || p->banned == Py_None) Py_RETURN_NONE;
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out && i < p->c.n_banned; i++) {
        PyObject *one = Py_BuildValue("[i]", p->c.banned_ids[i]);
        if (!one || PyList_Append(out, one) < 0) Py_CLEAR(out);
        Py_XDECREF(one);
    }
    return out;
}

/* logit_bias: None or {id: bias}; -inf bans a token. */
static int set_logit_bias(PyObject *self, PyObject *v, void *closure)
{
    (void)closure;
    struct nkpy_params *p = (struct nkpy_params *)self;
    if (no_delete(v, "logit_bias") < 0) return -1;
    struct nextok_logit_bias *a = NULL;
    Py_ssize_t n = 0;
    PyObject *copy = NULL;
    if (v != Py_None) {
        if (!PyDict_Check(v)) {
            PyErr_SetString(PyExc_TypeError, "logit_bias: expected a dict {token id: bias}");
            return -1;
        }
        if (!(copy = PyDict_Copy(v))) return -1;
        n = PyDict_Size(copy);
        if (n > 0 && !(a = PyMem_Malloc((size_t)n * sizeof *a))) {
            Py_DECREF(copy);
            PyErr_NoMemory();
            return -1;
        }
        PyObject *key, *val;
        Py_ssize_t pos = 0, i = 0;
        while (PyDict_Next(copy, &pos, &key, &val)) {
            double b = PyLong_Check(key) ? PyFloat_AsDouble(val) : -1.0;
            if (!PyLong_Check(key) || (b == -1.0 && PyErr_Occurred()) ||
                nkpy_set_i32(key, "logit_bias", &a[i].token) < 0) {
                if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
                    PyErr_Clear();
                    PyErr_SetString(PyExc_TypeError,
                                    "logit_bias: expected int keys and float values");
                }
                PyMem_Free(a);
                Py_DECREF(copy);
                return -1;
            }
            a[i++].bias = (float)b;
        }
    } else {
        Py_INCREF(Py_None);
        copy = Py_None;
    }
    replace(&p->logit_bias, copy, (void **)&p->bias_c, a);
    p->c.logit_bias = a;
    p->c.n_logit_bias = (size_t)n;
    p->version++;
    return 0;
}

static PyObject *get_logit_bias(PyObject *self, void *c)
{
    (void)c;
    PyObject *d = ((struct nkpy_params *)self)->logit_bias;
    if (!d || d == Py_None) Py_RETURN_NONE;
    return PyDict_Copy(d); /* a copy: changing it must go through the setter */
}

/* dry_sequence_breakers: None or a list of token-id sequences. */
static int set_breakers(PyObject *self, PyObject *v, void *closure)
{
    (void)closure;
    struct nkpy_params *p = (struct nkpy_params *)self;
    if (no_delete(v, "dry_sequence_breakers") < 0) return -1;
    if (v == Py_None) {
        Py_INCREF(Py_None);
        replace(&p->breakers, Py_None, (void **)&p->breaker_ids, NULL);
        PyMem_Free(p->breaker_off);
        p->breaker_off = NULL;
        p->c.dry_breaker_ids = NULL;
        p->c.dry_breaker_off = NULL;
        p->c.dry_n_breakers = 0;
        p->version++;
        return 0;
    }
    PyObject *seq = PySequence_Fast(v, "dry_sequence_breakers: expected a list of id lists");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Size(seq);
    size_t *off = PyMem_Malloc(((size_t)n + 1) * sizeof *off);
    int32_t *ids = NULL;
    PyObject *value = PyTuple_New(n);
    int rc = off && value ? 0 : -1;
    if (rc < 0 && !PyErr_Occurred()) PyErr_NoMemory();
    if (off) off[0] = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        int32_t *one;
        size_t len;
        PyObject *item = PySequence_GetItem(seq, i);
        rc = item ? nkpy_int32_seq(item, "dry_sequence_breakers", &one, &len) : -1;
        Py_XDECREF(item);
        if (rc < 0) break;
        int32_t *grown = PyMem_Realloc(ids, (off[i] + len + 1) * sizeof *ids);
        PyObject *t = grown ? int32_tuple(one, len) : NULL;
        if (!grown || !t) {
            if (grown) ids = grown;
            PyMem_Free(one);
            if (!PyErr_Occurred()) PyErr_NoMemory();
            rc = -1;
            break;
        }
        ids = grown;
        if (len) memcpy(ids + off[i], one, len * sizeof *one);
        PyMem_Free(one);
        off[i + 1] = off[i] + len;
        PyTuple_SetItem(value, i, t);
    }
    Py_DECREF(seq);
    if (rc < 0) {
        PyMem_Free(off);
        PyMem_Free(ids);
        Py_XDECREF(value);
        return -1;
    }
    replace(&p->breakers, value, (void **)&p->breaker_ids, ids);
    PyMem_Free(p->breaker_off);
    p->breaker_off = off;
    p->c.dry_breaker_ids = ids;
    p->c.dry_breaker_off = off;
    p->c.dry_n_breakers = (size_t)n;
    p->version++;
    return 0;
}

static PyObject *get_breakers(PyObject *self, void *c) { (void)c; return get_slot(((struct nkpy_params *)self)->breakers); }

/* samplers: llama.cpp's stage order, "top_k;top_p;..." or None */
static int set_samplers(PyObject *self, PyObject *v, void *closure)
{
    (void)closure;
    struct nkpy_params *p = (struct nkpy_params *)self;
    if (no_delete(v, "samplers") < 0) return -1;
    PyObject *utf8 = NULL;
    if (v != Py_None) {
        if (!PyUnicode_Check(v)) {
            PyErr_SetString(PyExc_TypeError, "samplers: expected a str or None");
            return -1;
        }
        if (!(utf8 = PyUnicode_AsUTF8String(v))) return -1;
    }
    Py_INCREF(v);
    Py_XSETREF(p->samplers, v);
    Py_XSETREF(p->samplers_utf8, utf8);
    p->c.samplers = utf8 ? PyBytes_AsString(utf8) : NULL; /* kept alive by samplers_utf8 */
    p->version++;
    return 0;
}

static PyObject *get_samplers(PyObject *self, void *c) { (void)c; return get_slot(((struct nkpy_params *)self)->samplers); }

/* stop: None, a str or a list of str (Session) */
static int set_stop(PyObject *self, PyObject *v, void *closure)
{
    (void)closure;
    struct nkpy_params *p = (struct nkpy_params *)self;
    if (no_delete(v, "stop") < 0) return -1;
    PyObject *t;
    if (v == Py_None) {
        t = PyTuple_New(0);
    } else if (PyUnicode_Check(v)) {
        t = PyTuple_Pack(1, v);
    } else {
        t = PySequence_Tuple(v);
        for (Py_ssize_t i = 0; t && i < PyTuple_Size(t); i++) {
            PyObject *s = PyTuple_GetItem(t, i);
            if (!PyUnicode_Check(s) && !PyBytes_Check(s)) {
                PyErr_Format(PyExc_TypeError, "stop: item %zd is not a str", i);
                Py_CLEAR(t);
            } else if ((PyUnicode_Check(s) ? PyUnicode_GetLength(s) : PyBytes_Size(s)) == 0) {
                PyErr_Format(PyExc_ValueError, "stop: item %zd is empty", i);
                Py_CLEAR(t);
            }
        }
    }
    if (!t) return -1;
    Py_XSETREF(p->stop, t);
    p->version++;
    return 0;
}

static PyObject *get_stop(PyObject *self, void *c)
{
    (void)c;
    struct nkpy_params *p = (struct nkpy_params *)self;
    return PySequence_List(p->stop);
}

static int set_stop_token_ids(PyObject *self, PyObject *v, void *closure)
{
    (void)closure;
    struct nkpy_params *p = (struct nkpy_params *)self;
    int32_t *a;
    size_t n;
    if (no_delete(v, "stop_token_ids") < 0 || nkpy_int32_seq(v, "stop_token_ids", &a, &n) < 0)
        return -1;
    PyObject *t = int32_tuple(a, n);
    if (!t) {
        PyMem_Free(a);
        return -1;
    }
    replace(&p->stop_token_ids, t, (void **)&p->stop_ids_c, a);
    p->n_stop_ids = n;
    p->version++;
    return 0;
}

static PyObject *get_stop_token_ids(PyObject *self, void *c)
{
    (void)c;
    return PySequence_List(((struct nkpy_params *)self)->stop_token_ids);
}

/* logprobs: None (off) or the number of alternatives per step (Session) */
static int set_logprobs(PyObject *self, PyObject *v, void *closure)
{
    (void)closure;
    struct nkpy_params *p = (struct nkpy_params *)self;
    int32_t n = -1;
    if (no_delete(v, "logprobs") < 0) return -1;
    if (v != Py_None) {
        if (!PyLong_Check(v)) {
            PyErr_SetString(PyExc_TypeError, "logprobs: expected an int or None");
            return -1;
        }
        if (nkpy_set_i32(v, "logprobs", &n) < 0) return -1;
        if (n < 0) {
            PyErr_SetString(PyExc_ValueError, "logprobs: must be >= 0 or None");
            return -1;
        }
    }
    p->logprobs = n;
    p->version++;
    return 0;
}

static PyObject *get_logprobs(PyObject *self, void *c)
{
    (void)c;
    int32_t n = ((struct nkpy_params *)self)->logprobs;
    if (n < 0) Py_RETURN_NONE;
    return PyLong_FromLong(n);
}


#define GETSET(name, get, set, doc) {name, get, set, doc, NULL}

const PyGetSetDef nkpy_params_lists[] = {
    GETSET("samplers", get_samplers, set_samplers, "llama.cpp stage order ('top_k;top_p;...') or None"),
    GETSET("logit_bias", get_logit_bias, set_logit_bias, "{token id: bias} or None"),
    GETSET("allowed_token_ids", get_allowed, set_allowed, "only these ids (None: all)"),
    GETSET("banned_token_ids", get_banned, set_banned, "these ids never (None: none)"),
    GETSET("bad_words_ids", get_bad_words, set_bad_words, "HF's form of banned ids: [[id], ...]"),
    GETSET("dry_sequence_breakers", get_breakers, set_breakers, "DRY breakers: id sequences"),
    GETSET("stop", get_stop, set_stop, "Session: stop strings"),
    GETSET("stop_token_ids", get_stop_token_ids, set_stop_token_ids, "Session: stop ids"),
    GETSET("logprobs", get_logprobs, set_logprobs, "Session: alternatives per step (None: off)"),
    {NULL, NULL, NULL, NULL, NULL},
};
