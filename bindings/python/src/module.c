/*
 * The module: its state (types, the exception, sample_batch's cache), the
 * exception every library failure raises, and init.
 */
#include "ext.h"

#include <stdlib.h>
#include <string.h>

static struct PyModuleDef nextok_module;

struct nkpy_state *nkpy_state_of(PyObject *module)
{
    return (struct nkpy_state *)PyModule_GetState(module);
}

struct nkpy_state *nkpy_state_from_type(PyTypeObject *type)
{
    /* PyType_GetModule is 3.10+; the module is one per interpreter here, so
     * find it by its definition (single-phase init). */
    (void)type;
    PyObject *m = PyState_FindModule(&nextok_module);
    return m ? nkpy_state_of(m) : NULL;
}

PyObject *nkpy_raise(struct nkpy_state *st, nextok_status status, const char *msg)
{
    if (status == NEXTOK_ERR_NOMEM && (!msg || !*msg)) return PyErr_NoMemory();
    if (!msg || !*msg) msg = nextok_strerror(status);
    PyObject *exc = PyObject_CallFunction(st->error, "s", msg);
    if (!exc) return NULL;
    PyObject *name = PyUnicode_FromString(nextok_status_name(status));
    PyObject *code = PyLong_FromLong((long)status);
    if (name && code && PyObject_SetAttrString(exc, "status", name) == 0 &&
        PyObject_SetAttrString(exc, "code", code) == 0)
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_XDECREF(name);
    Py_XDECREF(code);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *py_status_name(PyObject *module, PyObject *arg)
{
    (void)module;
    long code = PyLong_AsLong(arg);
    if (code == -1 && PyErr_Occurred()) return NULL;
    return PyUnicode_FromString(nextok_status_name((nextok_status)code));
}

static PyMethodDef module_methods[] = {
    {"sample_batch", (PyCFunction)(void (*)(void))nkpy_sample_batch, METH_VARARGS | METH_KEYWORDS,
     "sample_batch(logits, params, *, steps=None, threads=None, out=None) -> numpy.ndarray\n\n"
     "One token per row of a [B, V] logits array (float32, float16 or bfloat16), on a\n"
     "thread pool with the GIL released. params: one SamplingParams for every row or a\n"
     "list of B. steps: None (0), an int or B ints: the seed position of each row, as\n"
     "Sampler.sample after that many accepted tokens (no history: penalties see none).\n"
     "threads: pool size (None: every CPU). out: an int32 array of B to write into.\n"
     "bitmask: [B, ceil(V / 32)] int32 allowed-token words per row (XGrammar's layout).\n"
     "The chains (one per row) are kept for the next call: clear_batch_cache() frees them.\n"
     "Returns the int32 tokens (out when given; on an error its contents are unspecified)."},
    {"clear_batch_cache", nkpy_clear_batch_cache, METH_NOARGS,
     "clear_batch_cache(): free the chains and thread pool sample_batch keeps between\n"
     "calls (they hold one chain, with its workspace, per row of the last batch)."},
    {"status_name", py_status_name, METH_O, "status_name(code) -> str"},
    {NULL, NULL, 0, NULL},
};

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
    struct nkpy_state *st = nkpy_state_of(m);
    if (!st) return 0;
    Py_VISIT(st->error);
    Py_VISIT(st->params_type);
    Py_VISIT(st->sampler_type);
    Py_VISIT(st->vocab_type);
    Py_VISIT(st->session_type);
    Py_VISIT(st->grammar_type);
    Py_VISIT(st->matcher_type);
    Py_VISIT(st->compiled_type);
    Py_VISIT(st->stream_type);
    Py_VISIT(st->numpy_empty);
    return 0;
}

static int module_clear(PyObject *m)
{
    struct nkpy_state *st = nkpy_state_of(m);
    if (!st) return 0;
    Py_CLEAR(st->error);
    Py_CLEAR(st->params_type);
    Py_CLEAR(st->sampler_type);
    Py_CLEAR(st->vocab_type);
    Py_CLEAR(st->session_type);
    Py_CLEAR(st->grammar_type);
    Py_CLEAR(st->matcher_type);
    Py_CLEAR(st->compiled_type);
    Py_CLEAR(st->stream_type);
    Py_CLEAR(st->numpy_empty);
    nkpy_batch_cache_free(st->batch);
    st->batch = NULL;
    return 0;
}

static void module_free(void *m)
{
    module_clear((PyObject *)m);
}

static struct PyModuleDef nextok_module = {
    PyModuleDef_HEAD_INIT, "nextok._nextok",
    "The C extension behind the nextok package (see nextok/__init__.py).",
    sizeof(struct nkpy_state), module_methods, NULL, module_traverse, module_clear, module_free,
};

/* The buffer protocol is in the stable ABI from 3.11 (buffer311.c). */
static bool runtime_is_311(void)
{
    PyObject *vi = PySys_GetObject("version_info"); /* borrowed */
    PyObject *major = vi ? PySequence_GetItem(vi, 0) : NULL;
    PyObject *minor = vi ? PySequence_GetItem(vi, 1) : NULL;
    long a = major ? PyLong_AsLong(major) : 0, b = minor ? PyLong_AsLong(minor) : 0;
    Py_XDECREF(major);
    Py_XDECREF(minor);
    PyErr_Clear();
    return a > 3 || (a == 3 && b >= 11);
}

static int add_error(PyObject *m, struct nkpy_state *st)
{
    st->error = PyErr_NewExceptionWithDoc(
        "nextok.Error",
        "A failure reported by the nextok library: str(e) is its message, e.status the\n"
        "status name ('ERR_INVALID_ARG', ...), e.code its number. The call that\n"
        "raised it changed nothing.",
        PyExc_Exception, NULL);
    if (!st->error) return -1;
    Py_INCREF(st->error);
    return PyModule_AddObject(m, "Error", st->error);
}

PyMODINIT_FUNC PyInit__nextok(void)
{
    PyObject *m = PyModule_Create(&nextok_module);
    if (!m) return NULL;
    struct nkpy_state *st = nkpy_state_of(m);
    memset(st, 0, sizeof *st);
    nkpy_have_buffer_api = runtime_is_311(); /* the same for the whole process */
    if (PyState_AddModule(m, &nextok_module) < 0 || add_error(m, st) < 0 ||
        nkpy_add_params(m, st) < 0 || nkpy_add_sampler(m, st) < 0 || nkpy_add_vocab(m, st) < 0 ||
        nkpy_add_session(m, st) < 0 || nkpy_add_grammar(m, st) < 0 ||
        PyModule_AddStringConstant(m, "__version__", nextok_version()) < 0 ||
        PyModule_AddStringConstant(m, "library_version", nextok_version()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
