/*
 * Arrays in and out without copies: the buffer protocol (3.11+), DLPack
 * capsules (the legacy "dltensor" that Debian's numpy 1.24 and torch 1.13
 * export, and "dltensor_versioned"), and numpy's __array_interface__.
 *
 * Every path asks the same of an array: 1-D or 2-D, the last axis
 * contiguous, rows at any stride that is a whole number of elements, host
 * memory, native byte order, aligned to its element size. Anything else is
 * a TypeError or ValueError that says what to pass instead (a copy is the
 * caller's decision: numpy.ascontiguousarray, tensor.contiguous()).
 */
#include "ext.h"

#include <string.h>

bool nkpy_have_buffer_api;

/* ---- DLPack: the structs as the DLPack specification defines them ------- */

struct dl_device { int32_t device_type; int32_t device_id; };
struct dl_dtype { uint8_t code; uint8_t bits; uint16_t lanes; };
struct dl_tensor {
    void *data;
    struct dl_device device;
    int32_t ndim;
    struct dl_dtype dtype;
    int64_t *shape;
    int64_t *strides;      /* in elements; NULL: compact row-major */
    uint64_t byte_offset;
};
struct dl_managed {
    struct dl_tensor t;
    void *manager_ctx;
    void (*deleter)(struct dl_managed *self);
};
struct dl_managed_versioned {
    struct { uint32_t major, minor; } version;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_versioned *self);
    uint64_t flags;
    struct dl_tensor t;
};
enum { DL_INT = 0, DL_FLOAT = 2, DL_BFLOAT = 4, DL_CPU = 1, DL_FLAG_READ_ONLY = 1 };

enum nextok_dtype nkpy_dtype(enum nkpy_elem e)
{
    return e == NKPY_F16 ? NEXTOK_DTYPE_F16 : e == NKPY_BF16 ? NEXTOK_DTYPE_BF16
                                                             : NEXTOK_DTYPE_F32;
}

static const char *elem_name(enum nkpy_elem e)
{
    static const char *names[] = {"float32", "float16", "bfloat16", "int32"};
    return names[e];
}

/* Check the element type against flags and fill shape and strides; every
 * path ends here. strides in bytes (NULL: compact). */
int nkpy_view_finish(struct nkpy_view *v, int flags, const char *what, int ndim,
                       const int64_t *shape, const int64_t *byte_strides, size_t itemsize)
{
    bool want_float = flags & NKPY_FLOATS, want_int = flags & NKPY_INT32;
    bool is_float = v->elem != NKPY_I32;
    if ((is_float && !want_float) || (!is_float && !want_int)) {
        PyErr_Format(PyExc_TypeError, "%s: expected %s, got %s", what,
                     want_float ? (want_int ? "float32, float16, bfloat16 or int32"
                                            : "float32, float16 or bfloat16")
                                : "int32",
                     elem_name(v->elem));
        return -1;
    }
    if (ndim != 1 && ndim != 2) {
        PyErr_Format(PyExc_ValueError, "%s: expected a 1-D row or a 2-D batch, got %d dimensions",
                     what, ndim);
        return -1;
    }
    int64_t cols = shape[ndim - 1], rows = ndim == 2 ? shape[0] : 1;
    int64_t last = byte_strides ? byte_strides[ndim - 1] : (int64_t)itemsize;
    int64_t row = ndim == 2 ? (byte_strides ? byte_strides[0] : cols * (int64_t)itemsize) : 0;
    if (cols > 1 && last != (int64_t)itemsize) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the last axis is not contiguous (stride %lld bytes, element %zu); "
                     "pass numpy.ascontiguousarray(x) or x.contiguous()",
                     what, (long long)last, itemsize);
        return -1;
    }
    if (rows > 1 && (row < cols * (int64_t)itemsize || row % (int64_t)itemsize)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: rows overlap or are not a whole number of elements apart "
                     "(row stride %lld bytes)", what, (long long)row);
        return -1;
    }
    if ((uintptr_t)v->data % itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: data not aligned to its element size", what);
        return -1;
    }
    v->ndim = ndim;
    v->rows = (Py_ssize_t)rows;
    v->cols = (Py_ssize_t)cols;
    v->row_stride = rows > 1 ? (Py_ssize_t)(row / (int64_t)itemsize) : (Py_ssize_t)cols;
    return 0;
}

static int dl_elem(struct dl_dtype t, enum nkpy_elem *e)
{
    if (t.lanes != 1) return -1;
    if (t.code == DL_FLOAT && t.bits == 32) *e = NKPY_F32;
    else if (t.code == DL_FLOAT && t.bits == 16) *e = NKPY_F16;
    else if (t.code == DL_BFLOAT && t.bits == 16) *e = NKPY_BF16;
    else if (t.code == DL_INT && t.bits == 32) *e = NKPY_I32;
    else return -1;
    return 0;
}

static int dl_view(const struct dl_tensor *t, bool read_only, int flags, const char *what,
                   struct nkpy_view *v)
{
    if (t->device.device_type != DL_CPU) {
        PyErr_Format(PyExc_ValueError, "%s: the tensor is not in CPU memory (DLPack device %d)",
                     what, (int)t->device.device_type);
        return -1;
    }
    if (dl_elem(t->dtype, &v->elem) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported DLPack dtype (code %d, %d bits, %d lanes)",
                     what, t->dtype.code, t->dtype.bits, t->dtype.lanes);
        return -1;
    }
    if ((flags & NKPY_WRITABLE) && read_only) {
        PyErr_Format(PyExc_ValueError, "%s: the tensor is read-only", what);
        return -1;
    }
    size_t itemsize = t->dtype.bits / 8;
    int64_t bst[2];
    if (t->ndim < 1 || t->ndim > 2) return nkpy_view_finish(v, flags, what, t->ndim, NULL, NULL, itemsize);
    for (int i = 0; t->strides && i < t->ndim; i++) bst[i] = t->strides[i] * (int64_t)itemsize;
    v->data = (char *)t->data + t->byte_offset;
    return nkpy_view_finish(v, flags, what, t->ndim, t->shape, t->strides ? bst : NULL, itemsize);
}

/* Take a capsule's tensor. On success the capsule is renamed used_* (the
 * DLPack rule: its consumer now owns the tensor and calls the deleter). */
static int dl_capsule(PyObject *cap, int flags, const char *what, struct nkpy_view *v)
{
    if (PyCapsule_IsValid(cap, "dltensor")) {
        struct dl_managed *m = PyCapsule_GetPointer(cap, "dltensor");
        if (!m || dl_view(&m->t, false, flags, what, v) < 0) return -1;
        if (PyCapsule_SetName(cap, "used_dltensor") < 0) return -1;
        v->kind = 2;
        v->managed = m;
        return 0;
    }
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        struct dl_managed_versioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (!m) return -1;
        if (m->version.major != 1) {
            PyErr_Format(PyExc_ValueError, "%s: DLPack version %u.%u is not supported (1.x is)",
                         what, m->version.major, m->version.minor);
            return -1;
        }
        if (dl_view(&m->t, m->flags & DL_FLAG_READ_ONLY, flags, what, v) < 0) return -1;
        if (PyCapsule_SetName(cap, "used_dltensor_versioned") < 0) return -1;
        v->kind = 3;
        v->managed = m;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s: a capsule that is not an unused DLPack tensor", what);
    return -1;
}

/* ---- __array_interface__ (version 3) ------------------------------------- */

static int ai_elem(PyObject *typestr, enum nkpy_elem *e, size_t *itemsize)
{
    static const struct { const char *s; enum nkpy_elem e; size_t size; } known[] = {
        {"<f4", NKPY_F32, 4}, {"<f2", NKPY_F16, 2}, {"<i4", NKPY_I32, 4},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (PyUnicode_CompareWithASCIIString(typestr, known[i].s) == 0) {
            *e = known[i].e;
            *itemsize = known[i].size;
            return 0;
        }
    }
    return -1;
}

static int ai_ints(PyObject *tuple, int64_t *out, int n)
{
    for (int i = 0; i < n; i++) {
        out[i] = PyLong_AsLongLong(PyTuple_GetItem(tuple, i));
        if (out[i] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

static int array_interface(PyObject *obj, PyObject *ai, int flags, const char *what,
                           struct nkpy_view *v)
{
    PyObject *typestr = PyDict_GetItemString(ai, "typestr");
    PyObject *shape = PyDict_GetItemString(ai, "shape");
    PyObject *data = PyDict_GetItemString(ai, "data");
    PyObject *strides = PyDict_GetItemString(ai, "strides");
    size_t itemsize = 0;
    if (!typestr || !shape || !data || !PyTuple_Check(shape) || !PyTuple_Check(data) ||
        PyTuple_Size(data) != 2 || PyDict_GetItemString(ai, "mask")) {
        PyErr_Format(PyExc_TypeError, "%s: an __array_interface__ this module cannot read "
                     "(no data pointer, or a mask)", what);
        return -1;
    }
    if (!PyUnicode_Check(typestr) || ai_elem(typestr, &v->elem, &itemsize) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported element type %R (float32, float16, "
                     "bfloat16 or int32 in native byte order)", what, typestr);
        return -1;
    }
    if ((flags & NKPY_WRITABLE) && PyObject_IsTrue(PyTuple_GetItem(data, 1))) {
        PyErr_Format(PyExc_ValueError, "%s: the array is read-only", what);
        return -1;
    }
    int ndim = (int)PyTuple_Size(shape);
    int64_t dims[2], st[2];
    if (ndim < 1 || ndim > 2) return nkpy_view_finish(v, flags, what, ndim, NULL, NULL, itemsize);
    if (ai_ints(shape, dims, ndim) < 0) return -1;
    bool has_strides = strides && strides != Py_None;
    if (has_strides && (!PyTuple_Check(strides) || PyTuple_Size(strides) != ndim ||
                        ai_ints(strides, st, ndim) < 0)) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s: bad strides", what);
        return -1;
    }
    v->data = PyLong_AsVoidPtr(PyTuple_GetItem(data, 0));
    if (!v->data && PyErr_Occurred()) return -1;
    if (nkpy_view_finish(v, flags, what, ndim, dims, has_strides ? st : NULL, itemsize) < 0) return -1;
    v->kind = 4;
    Py_INCREF(obj);
    v->owner = obj; /* keeps the memory alive while we use it */
    return 0;
}

/* ---- the entry points ---------------------------------------------------- */

int nkpy_view_get(PyObject *obj, int flags, const char *what, struct nkpy_view *v)
{
    memset(v, 0, offsetof(struct nkpy_view, buffer));
    if (nkpy_have_buffer_api) {
        int rc = nkpy_buffer_get(obj, flags, what, v);
        if (rc != 0) return rc < 0 ? -1 : 0;
    }
    if (PyCapsule_CheckExact(obj)) return dl_capsule(obj, flags, what, v);
    /* torch tensors, and numpy on 3.8-3.10 when __array_interface__ is absent */
    PyObject *ai = PyObject_GetAttrString(obj, "__array_interface__");
    if (ai) {
        int rc = PyDict_Check(ai) ? array_interface(obj, ai, flags, what, v)
                                  : (PyErr_Format(PyExc_TypeError, "%s: __array_interface__ "
                                                  "is not a dict", what), -1);
        Py_DECREF(ai);
        return rc;
    }
    PyErr_Clear();
    PyObject *method = PyObject_GetAttrString(obj, "__dlpack__");
    if (method) {
        PyObject *cap = PyObject_CallObject(method, NULL);
        Py_DECREF(method);
        if (!cap) return -1;
        int rc = PyCapsule_CheckExact(cap) ? dl_capsule(cap, flags, what, v)
                                           : (PyErr_Format(PyExc_TypeError, "%s: __dlpack__() "
                                                           "did not return a capsule", what), -1);
        if (rc == 0) {
            v->owner = cap; /* the capsule, renamed used_*: we call the deleter */
        } else {
            Py_DECREF(cap);
        }
        return rc;
    }
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%s: expected a numpy array, a torch tensor, a DLPack capsule or an object "
                 "with the buffer protocol, got %R", what, (PyObject *)Py_TYPE(obj));
    return -1;
}

void nkpy_view_release(struct nkpy_view *v)
{
    if (v->kind == 1) {
        nkpy_buffer_release(v);
    } else if (v->kind == 2) {
        struct dl_managed *m = v->managed;
        if (m->deleter) m->deleter(m);
    } else if (v->kind == 3) {
        struct dl_managed_versioned *m = v->managed;
        if (m->deleter) m->deleter(m);
    }
    Py_CLEAR(v->owner);
    v->kind = 0;
}

PyObject *nkpy_new_int32_array(struct nkpy_state *st, Py_ssize_t n, int32_t **data)
{
    if (!st->numpy_empty) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (!np) return NULL;
        st->numpy_empty = PyObject_GetAttrString(np, "empty");
        Py_DECREF(np);
        if (!st->numpy_empty) return NULL;
    }
    PyObject *arr = PyObject_CallFunction(st->numpy_empty, "(n)s", n, "int32");
    if (!arr) return NULL;
    struct nkpy_view v;
    if (nkpy_view_get(arr, NKPY_INT32 | NKPY_WRITABLE, "numpy.empty", &v) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    *data = (int32_t *)v.data;
    nkpy_view_release(&v); /* arr holds the memory */
    return arr;
}
