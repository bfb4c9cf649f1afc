/*
 * Arguments the vocabulary, session and grammar types share: token ids (an
 * int32 array read in place, or any iterable of integers) and text (str as
 * UTF-8, or bytes).
 */
#include "ext.h"

#include <string.h>

int nkpy_int32_seq(PyObject *obj, const char *what, int32_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (obj == Py_None) return 0;
    PyObject *seq = PySequence_Fast(obj, "");
    if (!seq) {
        PyErr_Format(PyExc_TypeError,
                     "%s: expected a sequence of ints or a 1-D int32 array, got %R", what,
                     (PyObject *)Py_TYPE(obj));
        return -1;
    }
    Py_ssize_t len = PySequence_Size(seq);
    int32_t *a = PyMem_Malloc((size_t)(len > 0 ? len : 1) * sizeof *a);
    if (len < 0 || !a) {
        Py_DECREF(seq);
        PyMem_Free(a);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PySequence_GetItem(seq, i);
        PyObject *index = item ? PyNumber_Index(item) : NULL;
        long x = index ? PyLong_AsLong(index) : -1;
        Py_XDECREF(item);
        Py_XDECREF(index);
        if (x == -1 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "%s: item %zd is not an integer", what, i);
            }
            goto fail;
        }
        if (x < INT32_MIN || x > INT32_MAX) {
            PyErr_Format(PyExc_OverflowError, "%s: item %zd (%ld) is outside the int32 range",
                         what, i, x);
            goto fail;
        }
        a[i] = (int32_t)x;
    }
    Py_DECREF(seq);
    *out = a;
    *n = (size_t)len;
    return 0;
fail:
    Py_DECREF(seq);
    PyMem_Free(a);
    return -1;
}

static int ids_copy(PyObject *obj, const char *what, struct nkpy_ids *ids)
{
    int32_t *a;
    if (nkpy_int32_seq(obj, what, &a, &ids->n) < 0) return -1;
    ids->owned = a;
    ids->data = a;
    return 0;
}

int nkpy_ids_get(PyObject *obj, const char *what, struct nkpy_ids *ids)
{
    ids->data = NULL;
    ids->n = 0;
    ids->owned = NULL;
    ids->has_view = false;
    if (PyList_Check(obj) || PyTuple_Check(obj)) return ids_copy(obj, what, ids);
    if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected token ids, got %R", what,
                     (PyObject *)Py_TYPE(obj));
        return -1;
    }
    /* an int32 array in place; anything else (int64 arrays, ranges, ...) is
     * read item by item */
    if (nkpy_view_get(obj, NKPY_INT32, what, &ids->view) == 0) {
        if (ids->view.rows != 1) {
            PyErr_Format(PyExc_ValueError, "%s: expected a 1-D array of ids, got shape (%zd, %zd)",
                         what, ids->view.rows, ids->view.cols);
            nkpy_view_release(&ids->view);
            return -1;
        }
        ids->has_view = true;
        ids->data = (const int32_t *)ids->view.data;
        ids->n = (size_t)ids->view.cols;
        return 0;
    }
    if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError))
        return -1;
    PyErr_Clear();
    return ids_copy(obj, what, ids);
}

void nkpy_ids_release(struct nkpy_ids *ids)
{
    if (ids->has_view) nkpy_view_release(&ids->view);
    ids->has_view = false;
    PyMem_Free(ids->owned);
    ids->owned = NULL;
}

int nkpy_text_get(PyObject *obj, const char *what, PyObject **owner, const char **data,
                  Py_ssize_t *len)
{
    PyObject *b = NULL;
    if (PyUnicode_Check(obj)) {
        b = PyUnicode_AsUTF8String(obj);
    } else if (PyBytes_Check(obj)) {
        Py_INCREF(obj);
        b = obj;
    } else if (PyByteArray_Check(obj) || PyMemoryView_Check(obj)) {
        b = PyBytes_FromObject(obj);
    } else {
        PyErr_Format(PyExc_TypeError, "%s: expected str or bytes, got %R", what,
                     (PyObject *)Py_TYPE(obj));
        return -1;
    }
    char *p;
    if (!b || PyBytes_AsStringAndSize(b, &p, len) < 0) {
        Py_XDECREF(b);
        return -1;
    }
    *data = p;
    *owner = b;
    return 0;
}
