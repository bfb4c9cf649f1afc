/*
 * Session.stream(logits): an iterator of (token, text_delta), one step per
 * row of an iterable of logits rows, until the session finishes.
 */
#include "session.h"

struct nkpy_stream {
    PyObject_HEAD
    PyObject *session;
    PyObject *it;
    bool finish;
    bool done;
};

PyObject *nkpy_session_stream(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"logits", "finish", NULL};
    PyObject *logits;
    int finish = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$p:stream", kw, &logits, &finish))
        return NULL;
    PyObject *it = PyObject_GetIter(logits);
    if (!it) return NULL;
    PyTypeObject *type = (PyTypeObject *)nkpy_session_state(self)->stream_type;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    struct nkpy_stream *s = (struct nkpy_stream *)alloc(type, 0);
    if (!s) {
        Py_DECREF(it);
        return NULL;
    }
    Py_INCREF(self);
    s->session = self;
    s->it = it;
    s->finish = finish;
    return (PyObject *)s;
}

static PyObject *stream_next(PyObject *self)
{
    struct nkpy_stream *s = (struct nkpy_stream *)self;
    struct nkpy_session *o = (struct nkpy_session *)s->session;
    if (s->done || o->finished) {
        s->done = true;
        return NULL;
    }
    PyObject *row = PyIter_Next(s->it);
    if (!row) {
        s->done = true;
        if (PyErr_Occurred() || !s->finish) return NULL;
        /* out of logits: end the stream, and hand over what was held */
        PyObject *r = nkpy_session_do_finish(o);
        if (!r) return NULL;
        PyObject *text = PyTuple_GetItem(r, 0);
        PyObject *out = PyUnicode_GetLength(text) > 0 ? Py_BuildValue("(OO)", Py_None, text)
                                                      : NULL;
        Py_DECREF(r);
        return out;
    }
    PyObject *r = nkpy_session_do_step(o, row);
    Py_DECREF(row);
    if (!r) {
        s->done = true;
        return NULL;
    }
    PyObject *out = Py_BuildValue("(OO)", PyTuple_GetItem(r, 0), PyTuple_GetItem(r, 1));
    Py_DECREF(r);
    if (o->finished) s->done = true;
    return out;
}

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)type;
    (void)args;
    (void)kwargs;
    PyErr_SetString(PyExc_TypeError, "use Session.stream(logits)");
    return NULL;
}

static PyObject *stream_iter(PyObject *self)
{
    Py_INCREF(self);
    return self;
}

static void stream_dealloc(PyObject *self)
{
    struct nkpy_stream *s = (struct nkpy_stream *)self;
    PyTypeObject *tp = Py_TYPE(self);
    Py_XDECREF(s->session);
    Py_XDECREF(s->it);
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

static PyType_Slot stream_slots[] = {
    {Py_tp_new, stream_new},
    {Py_tp_dealloc, stream_dealloc},
    {Py_tp_iter, stream_iter},
    {Py_tp_iternext, stream_next},
    {Py_tp_doc, "The iterator Session.stream(logits) returns: (token, text_delta) per step."},
    {0, NULL},
};

static PyType_Spec stream_spec = {
    "nextok.SessionStream", sizeof(struct nkpy_stream), 0, Py_TPFLAGS_DEFAULT, stream_slots,
};

int nkpy_add_session_stream(struct nkpy_state *st)
{
    st->stream_type = PyType_FromSpec(&stream_spec);
    return st->stream_type ? 0 : -1;
}
