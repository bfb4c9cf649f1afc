/*
 * The nextok Python extension: what its files share.
 *
 * Built against the limited API of CPython 3.8 (abi3), so one build serves
 * every CPython from 3.8 on. The exception is buffer311.c, compiled against
 * the 3.11 limited API (where the buffer protocol joined the stable ABI) and
 * called only when the running interpreter is 3.11 or newer.
 *
 * The extension uses only include/nextok.h, like every other consumer.
 */
#ifndef NEXTOK_PY_EXT_H
#define NEXTOK_PY_EXT_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x03080000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "nextok.h"

#ifndef Py_XSETREF /* not in the limited API before 3.12 */
#define Py_XSETREF(dst, src)          \
    do {                              \
        PyObject *old_ = (PyObject *)(dst); \
        (dst) = (src);                \
        Py_XDECREF(old_);             \
    } while (0)
#endif

/* ---- module state ------------------------------------------------------- */

struct nkpy_batch_cache;

struct nkpy_state {
    PyObject *error;          /* nextok.Error                               */
    PyObject *params_type;    /* nextok.SamplingParams                      */
    PyObject *sampler_type;   /* nextok.Sampler                             */
    PyObject *vocab_type;     /* nextok.Vocab                               */
    PyObject *session_type;   /* nextok.Session                             */
    PyObject *grammar_type;   /* nextok.Grammar                             */
    PyObject *matcher_type;   /* nextok.Matcher                             */
    PyObject *compiled_type;  /* nextok.CompiledGrammar                     */
    PyObject *stream_type;    /* the iterator Session.stream returns        */
    PyObject *numpy_empty;    /* numpy.empty, imported on first use         */
    struct nkpy_batch_cache *batch; /* sample_batch's chains and pool       */
};

struct nkpy_state *nkpy_state_of(PyObject *module);
/* The state of the module a heap type (or instance of one) belongs to. */
struct nkpy_state *nkpy_state_from_type(PyTypeObject *type);

/* Raise nextok.Error(msg) with .status (the status name) and .code. msg may
 * be NULL or empty: the status's generic text is used. Returns NULL. */
PyObject *nkpy_raise(struct nkpy_state *st, nextok_status status, const char *msg);

/* ---- arrays in and out (views.c, buffer311.c) --------------------------- */

enum nkpy_elem { NKPY_F32, NKPY_F16, NKPY_BF16, NKPY_I32 };

/* A borrowed view of a 1-D or 2-D array whose last axis is contiguous. */
struct nkpy_view {
    char    *data;
    enum nkpy_elem elem;
    int      ndim;           /* 1 or 2                                        */
    Py_ssize_t rows;         /* 1 for a 1-D array                             */
    Py_ssize_t cols;         /* elements per row                              */
    Py_ssize_t row_stride;   /* elements between rows (cols for 1-D)          */
    /* how to let go of it */
    int      kind;           /* 0 none, 1 buffer, 2 DLPack, 3 DLPack versioned,
                                4 __array_interface__                         */
    PyObject *owner;         /* a strong reference kept while in use           */
    void    *managed;        /* the DLPack managed tensor                      */
    _Alignas(16) unsigned char buffer[128]; /* a Py_buffer (buffer311.c)       */
};

/* Flags for nkpy_view_get. */
enum {
    NKPY_WRITABLE = 1,       /* the caller writes through the view            */
    NKPY_FLOATS   = 2,       /* f32, f16 or bf16                              */
    NKPY_INT32    = 4,       /* int32                                         */
};

/* Fill v from obj (numpy array, torch tensor, DLPack capsule, any object
 * with the buffer protocol on 3.11+ or __array_interface__). `what` names
 * the argument in error messages. Returns 0, or -1 with an exception set. */
int  nkpy_view_get(PyObject *obj, int flags, const char *what, struct nkpy_view *v);
void nkpy_view_release(struct nkpy_view *v);
/* The checks every path shares: element type against flags, 1-D or 2-D, the
 * last axis contiguous, rows apart by whole elements, alignment; sets ndim,
 * rows, cols and row_stride. strides in bytes (NULL: compact). */
int  nkpy_view_finish(struct nkpy_view *v, int flags, const char *what, int ndim,
                      const int64_t *shape, const int64_t *strides, size_t itemsize);
enum nextok_dtype nkpy_dtype(enum nkpy_elem e);

/* buffer311.c: 1 if obj has the buffer protocol and v was filled, 0 if it has
 * none, -1 with an exception set. */
int  nkpy_buffer_get(PyObject *obj, int flags, const char *what, struct nkpy_view *v);
void nkpy_buffer_release(struct nkpy_view *v);
extern bool nkpy_have_buffer_api;  /* set once at import: the runtime is 3.11+ */

/* A new numpy.ndarray of n int32 (uninitialised) and a pointer to its data. */
PyObject *nkpy_new_int32_array(struct nkpy_state *st, Py_ssize_t n, int32_t **data);

/* ---- conversions --------------------------------------------------------- */

/* args.c: None, or a sequence of integers (anything with __index__), to a
 * new int32 array (PyMem; *out NULL and *n 0 for None). */
int nkpy_int32_seq(PyObject *obj, const char *what, int32_t **out, size_t *n);

/* Token ids in: a 1-D int32 array read in place (numpy, torch, DLPack,
 * buffer protocol), else any iterable of integers (Python ints, numpy
 * integers: anything with __index__), copied. */
struct nkpy_ids {
    const int32_t *data;
    size_t   n;
    int32_t *owned;          /* PyMem, when copied                            */
    bool     has_view;
    struct nkpy_view view;
};
int  nkpy_ids_get(PyObject *obj, const char *what, struct nkpy_ids *ids);
void nkpy_ids_release(struct nkpy_ids *ids);

/* Text in: str (as UTF-8) or a bytes-like object (bytes, bytearray,
 * memoryview; as is). *owner keeps *data alive until Py_DECREF. */
int nkpy_text_get(PyObject *obj, const char *what, PyObject **owner, const char **data,
                  Py_ssize_t *len);

/* ---- vocabularies and grammars (vocab.c, grammar.c) ----------------------- */

int nkpy_is_vocab(struct nkpy_state *st, PyObject *obj);
const struct nextok_vocab *nkpy_vocab_ptr(PyObject *vocab);
/* The vocabulary's token table (for grammar masks): built on the first call
 * with the GIL released, then kept by the Vocab. NULL with an exception. */
const struct nextok_token_table *nkpy_vocab_token_table(PyObject *vocab);

int nkpy_is_grammar(struct nkpy_state *st, PyObject *obj);
int nkpy_is_compiled(struct nkpy_state *st, PyObject *obj);
const struct nextok_compiled_grammar *nkpy_compiled_ptr(PyObject *compiled);
PyObject *nkpy_compiled_vocab(PyObject *compiled); /* borrowed */
/* grammar.compile(vocab) with the default limits: a new CompiledGrammar. */
PyObject *nkpy_grammar_compile(PyObject *grammar, PyObject *vocab);
/* compiled.c: a CompiledGrammar binding g (owned by the Grammar object
 * grammar, whose kind is kind) to vocab's token table. */
PyObject *nkpy_compiled_new(PyObject *grammar, const struct nextok_grammar *g, const char *kind,
                            PyObject *vocab, const struct nextok_compile_params *cp);

/* ---- types ----------------------------------------------------------------- */

struct nkpy_params;
/* The C sampling params of a SamplingParams, with its arrays (borrowed from
 * the object: valid while it lives and is not changed). extra_eog are added
 * to its stop_token_ids as the ids min_tokens suppresses. */
int nkpy_params_fill(PyObject *params, int32_t n_vocab, struct nextok_sampling_params *out,
                     int32_t **eog_scratch, const int32_t *extra_eog, size_t n_extra_eog);
/* What a Session takes from a SamplingParams besides the chain's fields
 * (borrowed from it). */
struct nkpy_session_opts {
    PyObject *stop;             /* tuple of str (or bytes)                    */
    const int32_t *stop_ids;
    size_t   n_stop_ids;
    int32_t  max_tokens;        /* <= 0: none                                 */
    int32_t  logprobs;          /* < 0: off                                   */
    bool     ignore_eos;
    bool     include_stop;
};
void nkpy_params_session(PyObject *params, struct nkpy_session_opts *out);
/* Bumped by every change to a SamplingParams (for caches). */
uint64_t nkpy_params_version(PyObject *params);
int nkpy_is_params(struct nkpy_state *st, PyObject *obj);

int nkpy_add_params(PyObject *m, struct nkpy_state *st);
int nkpy_add_sampler(PyObject *m, struct nkpy_state *st);
int nkpy_add_vocab(PyObject *m, struct nkpy_state *st);
int nkpy_add_session(PyObject *m, struct nkpy_state *st);
int nkpy_add_grammar(PyObject *m, struct nkpy_state *st);
int nkpy_add_compiled(PyObject *m, struct nkpy_state *st);  /* from nkpy_add_grammar */
int nkpy_add_matcher(PyObject *m, struct nkpy_state *st);   /* from nkpy_add_grammar */

PyObject *nkpy_sample_batch(PyObject *module, PyObject *args, PyObject *kwargs);
void nkpy_batch_cache_free(struct nkpy_batch_cache *bc);
PyObject *nkpy_clear_batch_cache(PyObject *module, PyObject *unused);

#endif
