/*
 * nextok.Vocab's decode and encode. Both release the GIL on long inputs
 * (the vocabulary is read-only). Encoding needs scratch (an encoder): the
 * Vocab keeps one per option set, and a second thread encoding with the same
 * options meanwhile gets a temporary one.
 */
#include "vocab.h"

#include <string.h>

static struct nkpy_state *state_of(PyObject *self)
{
    return nkpy_state_from_type(Py_TYPE(self));
}

PyObject *nkpy_vocab_decode(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"ids", "skip_special_tokens", "spaces_between_special_tokens", NULL};
    struct nkpy_vocab *o = (struct nkpy_vocab *)self;
    PyObject *ids_obj;
    int skip = 0, spaces = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$pp:decode", kw, &ids_obj, &skip, &spaces))
        return NULL;
    struct nkpy_ids ids;
    if (nkpy_ids_get(ids_obj, "ids", &ids) < 0) return NULL;
    struct nextok_decode_params dp = nextok_decode_default_params();
    dp.skip_special_tokens = skip;
    dp.spaces_between_special_tokens = spaces;
    char small[1024];
    size_t n = 0;
    nextok_status rc;
    if (ids.n < NOGIL_MIN) {
        rc = nextok_vocab_decode(o->v, ids.data, ids.n, &dp, small, sizeof small, &n);
    } else {
        Py_BEGIN_ALLOW_THREADS
        rc = nextok_vocab_decode(o->v, ids.data, ids.n, &dp, small, sizeof small, &n);
        Py_END_ALLOW_THREADS
    }
    PyObject *out = NULL;
    if (rc == NEXTOK_OK) {
        out = PyBytes_FromStringAndSize(small, (Py_ssize_t)n);
    } else if (rc == NEXTOK_ERR_BUFFER_TOO_SMALL) {
        out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
        char *buf = out ? PyBytes_AsString(out) : NULL;
        size_t cap = n;
        if (buf) {
            Py_BEGIN_ALLOW_THREADS
            rc = nextok_vocab_decode(o->v, ids.data, ids.n, &dp, buf, cap, &n);
            Py_END_ALLOW_THREADS
            if (rc != NEXTOK_OK) Py_CLEAR(out);
        }
    }
    if (!out && !PyErr_Occurred()) {
        if (rc == NEXTOK_ERR_TOKEN_RANGE) {
            size_t bad = 0;
            int32_t nv = nextok_vocab_n_tokens(o->v);
            while (bad < ids.n && ids.data[bad] >= 0 && ids.data[bad] < nv) bad++;
            char msg[128];
            PyOS_snprintf(msg, sizeof msg, "ids[%zu] = %ld: token id out of range [0, %ld)", bad,
                          bad < ids.n ? (long)ids.data[bad] : -1L, (long)nv);
            nkpy_raise(state_of(self), rc, msg);
        } else {
            nkpy_raise(state_of(self), rc, NULL);
        }
    }
    nkpy_ids_release(&ids);
    return out;
}

/* A cached encoder for the slot, or a temporary one (*temp) when the slot
 * is in use by another thread. */
static struct nextok_encoder *take_encoder(struct nkpy_vocab *o, int slot, bool parse_special,
                                           bool add_special, bool *temp)
{
    struct nkpy_encoder_slot *s = &o->enc[slot];
    *temp = s->busy;
    if (!*temp && s->e) {
        s->busy = true;
        return s->e;
    }
    struct nextok_encode_params ep = nextok_encode_default_params();
    ep.parse_special = parse_special;
    ep.add_bos = ep.add_eos = add_special ? -1 : 0;
    struct nextok_encoder *e = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_encoder_init(&e, o->v, &ep, &err);
    if (rc != NEXTOK_OK) {
        nkpy_raise(state_of((PyObject *)o), rc, err.msg);
        return NULL;
    }
    if (!*temp) {
        s->e = e;
        s->busy = true;
    }
    return e;
}

PyObject *nkpy_vocab_encode(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"text", "add_special_tokens", "parse_special", NULL};
    struct nkpy_vocab *o = (struct nkpy_vocab *)self;
    PyObject *text_obj;
    int add_special = 1, parse_special = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$pp:encode", kw, &text_obj, &add_special,
                                     &parse_special))
        return NULL;
    PyObject *owner;
    const char *text;
    Py_ssize_t len;
    if (nkpy_text_get(text_obj, "text", &owner, &text, &len) < 0) return NULL;
    int slot = parse_special * 2 + add_special;
    bool temp;
    struct nextok_encoder *e = take_encoder(o, slot, parse_special, add_special, &temp);
    if (!e) {
        Py_DECREF(owner);
        return NULL;
    }
    int32_t small[256];
    int32_t *ids = small, *heap = NULL;
    size_t cap = sizeof small / sizeof small[0], n = 0;
    nextok_status rc;
    for (;;) {
        if (len < NOGIL_MIN) {
            rc = nextok_encoder_encode(e, text, (size_t)len, ids, cap, &n);
        } else {
            Py_BEGIN_ALLOW_THREADS
            rc = nextok_encoder_encode(e, text, (size_t)len, ids, cap, &n);
            Py_END_ALLOW_THREADS
        }
        if (rc != NEXTOK_ERR_BUFFER_TOO_SMALL || ids == heap) break;
        heap = PyMem_Malloc(n * sizeof *heap);
        if (!heap) break;
        ids = heap;
        cap = n;
    }
    PyObject *out = NULL;
    if (rc == NEXTOK_OK) {
        out = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; out && i < n; i++) {
            PyObject *x = PyLong_FromLong(ids[i]);
            if (!x) Py_CLEAR(out);
            else PyList_SetItem(out, (Py_ssize_t)i, x);
        }
    } else if (rc == NEXTOK_ERR_BUFFER_TOO_SMALL && !heap) {
        PyErr_NoMemory();
    } else {
        nkpy_raise(state_of(self), rc, nextok_encoder_errmsg(e));
    }
    PyMem_Free(heap);
    if (temp) nextok_encoder_free(e);
    else o->enc[slot].busy = false;
    Py_DECREF(owner);
    return out;
}

