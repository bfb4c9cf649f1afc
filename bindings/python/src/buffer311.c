/*
 * The buffer protocol, compiled against the 3.11 limited API (where it
 * joined the stable ABI) and called only on a 3.11+ interpreter
 * (nkpy_have_buffer_api). It is the fast path for numpy arrays: no
 * dictionary is built, as __array_interface__ builds one per call.
 */
#define Py_LIMITED_API 0x030B0000
#include "ext.h"

#include <string.h>

_Static_assert(sizeof(Py_buffer) <= sizeof(((struct nkpy_view *)0)->buffer),
               "struct nkpy_view.buffer is too small for a Py_buffer");

/* struct-module format of one element: native or little-endian only */
static int format_elem(const char *f, enum nkpy_elem *e)
{
    if (!f) return -1;
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (f[1] != '\0') return -1;
    switch (*f) {
    case 'f': *e = NKPY_F32; return 0;
    case 'e': *e = NKPY_F16; return 0;
    case 'i': *e = NKPY_I32; return 0;
    case 'l': if (sizeof(long) == 4) { *e = NKPY_I32; return 0; } return -1;
    default: return -1;
    }
}

int nkpy_buffer_get(PyObject *obj, int flags, const char *what, struct nkpy_view *v)
{
    /* No PyObject_CheckBuffer: a macro before 3.9, so no symbol to call in
     * an abi3 build that must load on 3.8. An object without the protocol
     * raises TypeError here, and the other ways are tried. */
    Py_buffer *b = (Py_buffer *)v->buffer;
    int req = PyBUF_FORMAT | PyBUF_STRIDES | ((flags & NKPY_WRITABLE) ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, b, req) < 0) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
        PyErr_Clear();
        return 0;
    }
    v->kind = 1;
    v->data = b->buf;
    if (format_elem(b->format, &v->elem) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported element format '%s' (float32, float16 or "
                     "int32 in native byte order; bfloat16 through DLPack)",
                     what, b->format ? b->format : "?");
        goto fail;
    }
    size_t itemsize = (size_t)b->itemsize;
    if ((v->elem == NKPY_I32 || v->elem == NKPY_F32) ? itemsize != 4 : itemsize != 2) {
        PyErr_Format(PyExc_TypeError, "%s: element size %zu does not match its format", what,
                     itemsize);
        goto fail;
    }
    int ndim = b->ndim;
    int64_t shape[2] = {0, 0}, strides[2] = {0, 0};
    for (int i = 0; i < ndim && i < 2; i++) {
        shape[i] = b->shape[i];
        strides[i] = b->strides[i];
    }
    if (nkpy_view_finish(v, flags, what, ndim, shape, strides, itemsize) < 0) goto fail;
    return 1;
fail:
    PyBuffer_Release(b);
    v->kind = 0;
    return -1;
}

void nkpy_buffer_release(struct nkpy_view *v)
{
    PyBuffer_Release((Py_buffer *)v->buffer);
}
