/*
 * nextok.SamplingParams: every field of struct nextok_sampling_params under
 * vLLM's names where vLLM has one (repetition_penalty, allowed_token_ids,
 * ...) and nextok's own otherwise, plus what a Session needs (stop strings,
 * max_tokens, logprobs).
 *
 * The C struct lives inside the object and every list is converted to its C
 * array when it is set, so handing the params to a chain costs a copy of a
 * struct: sample_batch can check a row's params by pointer and version.
 * Ranges are checked by the library when a chain is built (the error names
 * the field); types are checked here, when a field is set.
 */
#include "ext.h"
#include "params.h"

#include <math.h>
#include <stddef.h>
#include <string.h>



/* ---- scalar fields: one table, one getter and one setter ------------------- */

enum kind { K_F32, K_I32, K_SIZE, K_U64, K_BOOL };

struct scalar {
    const char *name;
    enum kind kind;
    size_t off;           /* in struct nextok_sampling_params, or in nkpy_params */
    bool own;             /* the offset is in struct nkpy_params                 */
    const char *doc;
};

#define C_OFF(f) offsetof(struct nextok_sampling_params, f)
#define O_OFF(f) offsetof(struct nkpy_params, f)

static const struct scalar scalars[] = {
    {"temperature", K_F32, C_OFF(temperature), 0, "<= 0: greedy"},
    {"top_k", K_I32, C_OFF(top_k), 0, "keep the k most likely tokens; <= 0 off (vLLM -1)"},
    {"top_p", K_F32, C_OFF(top_p), 0, "nucleus sampling; 1 off"},
    {"min_p", K_F32, C_OFF(min_p), 0, "keep p >= min_p * p_max; 0 off"},
    {"typical_p", K_F32, C_OFF(typical_p), 0, "locally typical sampling; 1 off"},
    {"top_n_sigma", K_F32, C_OFF(top_n_sigma), 0, "keep logits >= max - n * sigma; <= 0 off"},
    {"xtc_probability", K_F32, C_OFF(xtc_probability), 0, "XTC; 0 off"},
    {"xtc_threshold", K_F32, C_OFF(xtc_threshold), 0, "XTC threshold"},
    {"epsilon_cutoff", K_F32, C_OFF(epsilon_cutoff), 0, "HF epsilon cutoff; 0 off"},
    {"eta_cutoff", K_F32, C_OFF(eta_cutoff), 0, "HF eta cutoff; 0 off"},
    {"min_keep", K_SIZE, C_OFF(min_keep), 0, "filters keep at least this many tokens"},
    {"repetition_penalty", K_F32, C_OFF(repeat_penalty), 0, "1 off"},
    {"frequency_penalty", K_F32, C_OFF(frequency_penalty), 0, "0 off"},
    {"presence_penalty", K_F32, C_OFF(presence_penalty), 0, "0 off"},
    {"penalty_last_n", K_I32, C_OFF(penalty_last_n), 0, "penalty window (llama profile)"},
    {"dry_multiplier", K_F32, C_OFF(dry_multiplier), 0, "DRY strength; 0 off"},
    {"dry_base", K_F32, C_OFF(dry_base), 0, "DRY base (> 1)"},
    {"dry_allowed_length", K_I32, C_OFF(dry_allowed_length), 0, "DRY allowed length"},
    {"dry_penalty_last_n", K_I32, C_OFF(dry_penalty_last_n), 0, "DRY window; -1 whole"},
    {"dynatemp_range", K_F32, C_OFF(dynatemp_range), 0, "llama.cpp dynamic temperature"},
    {"dynatemp_exponent", K_F32, C_OFF(dynatemp_exponent), 0, "dynamic temperature exponent"},
    {"no_repeat_ngram_size", K_I32, C_OFF(no_repeat_ngram), 0, "HF no_repeat_ngram_size"},
    {"mirostat", K_I32, C_OFF(mirostat), 0, "0 off, 1 or 2"},
    {"mirostat_tau", K_F32, C_OFF(mirostat_tau), 0, "mirostat target entropy"},
    {"mirostat_eta", K_F32, C_OFF(mirostat_eta), 0, "mirostat learning rate"},
    {"min_tokens", K_I32, C_OFF(min_tokens), 0, "end ids suppressed until this many"},
    {"seed", K_U64, C_OFF(seed), 0, "the stream of random draws"},
    {"token_bitmask", K_BOOL, C_OFF(token_bitmask), 0,
     "add a token-bitmask stage (Sampler.set_token_bitmask, sample_batch(bitmask=))"},
    {"max_tokens", K_I32, O_OFF(max_tokens), 1, "Session: stop after this many; <= 0 none"},
    {"ignore_eos", K_BOOL, O_OFF(ignore_eos), 1, "Session: end ids do not stop"},
    {"include_stop_str_in_output", K_BOOL, O_OFF(include_stop_str_in_output), 1,
     "Session: keep the stop string in the text"},
};
#define N_SCALARS (sizeof scalars / sizeof scalars[0])

static void *field_ptr(struct nkpy_params *p, const struct scalar *f)
{
    return f->own ? (char *)p + f->off : (char *)&p->c + f->off;
}

/* A float32 field as the shortest decimal that reads back as the same
 * float32, so that SamplingParams(top_p=0.9).top_p == 0.9 holds. */
static PyObject *float32_value(float f)
{
    char buf[32];
    for (int digits = 1; isfinite(f) && digits <= 9; digits++) {
        PyOS_snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        double d = PyOS_string_to_double(buf, NULL, NULL);
        if (d == -1.0 && PyErr_Occurred()) return NULL;
        if ((float)d == f) return PyFloat_FromDouble(d);
    }
    return PyFloat_FromDouble((double)f);
}

static PyObject *scalar_get(PyObject *self, void *closure)
{
    const struct scalar *f = closure;
    void *ptr = field_ptr((struct nkpy_params *)self, f);
    switch (f->kind) {
    case K_F32: return float32_value(*(float *)ptr);
    case K_I32: return PyLong_FromLong(*(int32_t *)ptr);
    case K_SIZE: return PyLong_FromSize_t(*(size_t *)ptr);
    case K_U64: return PyLong_FromUnsignedLongLong(*(uint64_t *)ptr);
    case K_BOOL: return PyBool_FromLong(*(bool *)ptr);
    }
    return NULL;
}

static int scalar_set(PyObject *self, PyObject *v, void *closure)
{
    const struct scalar *f = closure;
    struct nkpy_params *p = (struct nkpy_params *)self;
    if (!v) {
        PyErr_Format(PyExc_AttributeError, "%s cannot be deleted", f->name);
        return -1;
    }
    void *ptr = field_ptr(p, f);
    if (f->kind == K_BOOL) {
        int b = PyObject_IsTrue(v);
        if (b < 0) return -1;
        *(bool *)ptr = b;
    } else if (f->kind == K_F32) {
        if (!PyFloat_Check(v) && !PyLong_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: expected a number", f->name);
            return -1;
        }
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) return -1;
        *(float *)ptr = (float)d;
    } else {
        /* None means "off" for the optional integers (vLLM's max_tokens=None) */
        if (v == Py_None && f->kind == K_I32) {
            *(int32_t *)ptr = 0;
        } else if (!PyLong_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: expected an int", f->name);
            return -1;
        } else if (f->kind == K_I32) {
            if (nkpy_set_i32(v, f->name, ptr) < 0) return -1;
        } else if (f->kind == K_SIZE) {
            size_t x = PyLong_AsSize_t(v);
            if (x == (size_t)-1 && PyErr_Occurred()) return -1;
            *(size_t *)ptr = x;
        } else {
            /* seeds: any int, taken modulo 2**64 (negative seeds included) */
            unsigned long long x = PyLong_AsUnsignedLongLongMask(v);
            if (x == (unsigned long long)-1 && PyErr_Occurred()) return -1;
            *(uint64_t *)ptr = x;
        }
    }
    p->version++;
    return 0;
}

/* ---- named choices ----------------------------------------------------------- */

struct choice { const char *name; int value; };

static const struct choice selectors[] = {
    {"categorical", NEXTOK_SELECTOR_CATEGORICAL}, {"gumbel", NEXTOK_SELECTOR_GUMBEL},
    {"greedy", NEXTOK_SELECTOR_GREEDY}, {NULL, 0}};
static const struct choice ties[] = {
    {"keep", NEXTOK_TIES_KEEP}, {"exact", NEXTOK_TIES_EXACT}, {NULL, 0}};
static const struct choice nan_policies[] = {
    {"error", NEXTOK_NAN_ERROR}, {"neg_inf", NEXTOK_NAN_AS_NEG_INF}, {NULL, 0}};
static const struct choice profiles[] = {
    {"vllm", NEXTOK_PROFILE_VLLM}, {"hf", NEXTOK_PROFILE_HF}, {"llama", NEXTOK_PROFILE_LLAMA},
    {NULL, 0}};

static int choose(PyObject *v, const struct choice *list, const char *what, int *out)
{
    if (!PyUnicode_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a str", what);
        return -1;
    }
    for (const struct choice *c = list; c->name; c++) {
        if (PyUnicode_CompareWithASCIIString(v, c->name) == 0) {
            *out = c->value;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "%s: unknown value %R", what, v);
    return -1;
}

static PyObject *choice_name(const struct choice *list, int value)
{
    for (const struct choice *c = list; c->name; c++)
        if (c->value == value) return PyUnicode_FromString(c->name);
    Py_RETURN_NONE;
}

#define CHOICE_FIELD(fname, list, cfield, ctype)                                   \
    static PyObject *get_##fname(PyObject *self, void *closure)                    \
    {                                                                              \
        (void)closure;                                                             \
        return choice_name(list, (int)((struct nkpy_params *)self)->c.cfield);     \
    }                                                                              \
    static int set_##fname(PyObject *self, PyObject *v, void *closure)             \
    {                                                                              \
        (void)closure;                                                             \
        int x;                                                                     \
        if (!v) {                                                                  \
            PyErr_SetString(PyExc_AttributeError, #fname " cannot be deleted");   \
            return -1;                                                             \
        }                                                                          \
        if (choose(v, list, #fname, &x) < 0) return -1;                            \
        ((struct nkpy_params *)self)->c.cfield = (ctype)x;                         \
        ((struct nkpy_params *)self)->version++;                                   \
        return 0;                                                                  \
    }

CHOICE_FIELD(selector, selectors, selector, enum nextok_selector)
CHOICE_FIELD(top_k_ties, ties, top_k_ties, enum nextok_ties)
CHOICE_FIELD(nan_policy, nan_policies, nan_policy, enum nextok_nan_policy)

static PyObject *get_profile(PyObject *self, void *closure)
{
    (void)closure;
    return choice_name(profiles, (int)((struct nkpy_params *)self)->c.profile);
}

/* ---- the type ------------------------------------------------------------------ */

#define GETSET(name, get, set, doc) {name, get, set, doc, NULL}

static PyGetSetDef params_getset[N_SCALARS + 32];

static const PyGetSetDef choice_fields[] = {
    GETSET("profile", get_profile, NULL, "'vllm', 'hf' or 'llama' (set at construction)"),
    GETSET("selector", get_selector, set_selector, "'categorical', 'gumbel' or 'greedy'"),
    GETSET("top_k_ties", get_top_k_ties, set_top_k_ties, "'keep' (vLLM, HF) or 'exact' (llama.cpp)"),
    GETSET("nan_policy", get_nan_policy, set_nan_policy, "'error' or 'neg_inf'"),
};
#define N_CHOICE (sizeof choice_fields / sizeof choice_fields[0])

static void build_getset(void)
{
    /* Filled once, at module init, before the type exists; never changed. */
    size_t k = 0;
    for (size_t i = 0; i < N_SCALARS; i++)
        params_getset[k++] = (PyGetSetDef){(char *)scalars[i].name, scalar_get, scalar_set,
                                           (char *)scalars[i].doc, (void *)&scalars[i]};
    for (size_t i = 0; i < N_CHOICE; i++) params_getset[k++] = choice_fields[i];
    for (size_t i = 0; nkpy_params_lists[i].name; i++) params_getset[k++] = nkpy_params_lists[i];
    params_getset[k] = (PyGetSetDef){NULL, NULL, NULL, NULL, NULL};
}

static int set_defaults(struct nkpy_params *p, enum nextok_profile profile)
{
    p->c = nextok_sampling_default_params(profile);
    p->logprobs = -1;
    Py_INCREF(Py_None);
    p->logit_bias = Py_None;
    Py_INCREF(Py_None);
    p->allowed = Py_None;
    Py_INCREF(Py_None);
    p->banned = Py_None;
    Py_INCREF(Py_None);
    p->breakers = Py_None;
    Py_INCREF(Py_None);
    p->samplers = Py_None;
    p->stop = PyTuple_New(0);
    p->stop_token_ids = PyTuple_New(0);
    return p->stop && p->stop_token_ids ? 0 : -1;
}

static PyObject *params_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kw_profile[] = {"profile", NULL};
    if (PyTuple_Size(args) != 0) {
        PyErr_SetString(PyExc_TypeError, "SamplingParams takes keyword arguments only");
        return NULL;
    }
    /* the profile first: the other fields start from its defaults */
    PyObject *prof = kwargs ? PyDict_GetItemString(kwargs, "profile") : NULL;
    int profile = NEXTOK_PROFILE_VLLM;
    if (prof && choose(prof, profiles, "profile", &profile) < 0) return NULL;
    (void)kw_profile;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    struct nkpy_params *p = (struct nkpy_params *)alloc(type, 0);
    if (!p) return NULL;
    if (set_defaults(p, (enum nextok_profile)profile) < 0) {
        Py_DECREF(p);
        return NULL;
    }
    if (kwargs) {
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kwargs, &pos, &key, &val)) {
            if (PyUnicode_CompareWithASCIIString(key, "profile") == 0) continue;
            bool known = false;
            for (PyGetSetDef *g = params_getset; g->name; g++)
                known |= g->set && PyUnicode_CompareWithASCIIString(key, g->name) == 0;
            if (!known) {
                PyErr_Format(PyExc_TypeError, "SamplingParams: unexpected keyword %R", key);
                Py_DECREF(p);
                return NULL;
            }
            if (PyObject_SetAttr((PyObject *)p, key, val) < 0) {
                Py_DECREF(p);
                return NULL;
            }
        }
    }
    return (PyObject *)p;
}

static void params_dealloc(PyObject *self)
{
    struct nkpy_params *p = (struct nkpy_params *)self;
    PyTypeObject *tp = Py_TYPE(self);
    Py_XDECREF(p->logit_bias);
    Py_XDECREF(p->allowed);
    Py_XDECREF(p->banned);
    Py_XDECREF(p->breakers);
    Py_XDECREF(p->samplers);
    Py_XDECREF(p->samplers_utf8);
    Py_XDECREF(p->stop);
    Py_XDECREF(p->stop_token_ids);
    PyMem_Free(p->bias_c);
    PyMem_Free(p->allowed_c);
    PyMem_Free(p->banned_c);
    PyMem_Free(p->breaker_ids);
    PyMem_Free(p->breaker_off);
    PyMem_Free(p->stop_ids_c);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* "SamplingParams(profile='vllm', temperature=0.7, ...)": every field that
 * differs from the profile's default. */
static PyObject *params_repr(PyObject *self)
{
    struct nkpy_params *p = (struct nkpy_params *)self;
    PyObject *type = (PyObject *)Py_TYPE(self);
    PyObject *args = PyTuple_New(0), *kw = Py_BuildValue("{s:N}", "profile", get_profile(self, NULL));
    PyObject *def = args && kw ? PyObject_Call(type, args, kw) : NULL;
    PyObject *parts = def ? PyList_New(0) : NULL;
    PyObject *out = NULL;
    if (parts) {
        PyObject *s = PyUnicode_FromFormat("profile=%R", PyDict_GetItemString(kw, "profile"));
        if (s && PyList_Append(parts, s) == 0) out = parts;
        Py_XDECREF(s);
    }
    for (PyGetSetDef *g = params_getset; out && g->name; g++) {
        if (!g->set) continue;
        PyObject *a = g->get(self, g->closure), *b = g->get(def, g->closure);
        int same = a && b ? PyObject_RichCompareBool(a, b, Py_EQ) : -1;
        PyObject *s = same == 0 ? PyUnicode_FromFormat("%s=%R", g->name, a) : NULL;
        if (same < 0 || (same == 0 && (!s || PyList_Append(parts, s) < 0))) out = NULL;
        Py_XDECREF(s);
        Py_XDECREF(a);
        Py_XDECREF(b);
    }
    PyObject *result = NULL;
    if (out) {
        PyObject *sep = PyUnicode_FromString(", ");
        PyObject *joined = sep ? PyUnicode_Join(sep, parts) : NULL;
        if (joined) result = PyUnicode_FromFormat("SamplingParams(%U)", joined);
        Py_XDECREF(sep);
        Py_XDECREF(joined);
    }
    (void)p;
    Py_XDECREF(parts);
    Py_XDECREF(def);
    Py_XDECREF(args);
    Py_XDECREF(kw);
    return result;
}

/* copy(): a new SamplingParams with the same fields. */
static PyObject *params_copy(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *args = PyTuple_New(0), *kw = Py_BuildValue("{s:N}", "profile", get_profile(self, NULL));
    PyObject *copy = args && kw ? PyObject_Call((PyObject *)Py_TYPE(self), args, kw) : NULL;
    for (PyGetSetDef *g = params_getset; copy && g->name; g++) {
        if (!g->set) continue;
        PyObject *v = g->get(self, g->closure);
        if (!v || g->set(copy, v, g->closure) < 0) Py_CLEAR(copy);
        Py_XDECREF(v);
    }
    Py_XDECREF(args);
    Py_XDECREF(kw);
    return copy;
}

static PyMethodDef params_methods[] = {
    {"copy", params_copy, METH_NOARGS, "copy() -> SamplingParams: an independent copy."},
    {"__copy__", params_copy, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot params_slots[] = {
    {Py_tp_new, params_new},
    {Py_tp_dealloc, params_dealloc},
    {Py_tp_repr, params_repr},
    {Py_tp_getset, params_getset},
    {Py_tp_methods, params_methods},
    {Py_tp_doc,
     "SamplingParams(*, profile='vllm', **fields)\n\n"
     "Everything a request sets: vLLM's field names (temperature, top_k, top_p, min_p,\n"
     "repetition_penalty, frequency_penalty, presence_penalty, seed, logit_bias,\n"
     "allowed_token_ids, bad_words_ids, min_tokens, max_tokens, stop, stop_token_ids,\n"
     "logprobs, ...) and nextok's own (typical_p, top_n_sigma, xtc_*, dry_*, mirostat*,\n"
     "selector, ...). Fields start from the profile's defaults ('vllm', 'hf' or 'llama').\n"
     "Ranges are checked when a Sampler or Session is built from it."},
    {0, NULL},
};

static PyType_Spec params_spec = {
    "nextok.SamplingParams", sizeof(struct nkpy_params), 0, Py_TPFLAGS_DEFAULT, params_slots,
};

/* ---- what the other files use ------------------------------------------------- */

int nkpy_is_params(struct nkpy_state *st, PyObject *obj)
{
    return PyObject_TypeCheck(obj, (PyTypeObject *)st->params_type);
}

uint64_t nkpy_params_version(PyObject *params)
{
    return ((struct nkpy_params *)params)->version;
}

int nkpy_params_fill(PyObject *params, int32_t n_vocab, struct nextok_sampling_params *out,
                     int32_t **eog_scratch, const int32_t *extra_eog, size_t n_extra_eog)
{
    struct nkpy_params *p = (struct nkpy_params *)params;
    *out = p->c;
    out->n_vocab = n_vocab;
    *eog_scratch = NULL;
    /* min_tokens suppresses the stop ids and the caller's end ids (vLLM) */
    size_t n = p->n_stop_ids + n_extra_eog;
    if (n) {
        int32_t *e = PyMem_Malloc(n * sizeof *e);
        if (!e) {
            PyErr_NoMemory();
            return -1;
        }
        if (p->n_stop_ids) memcpy(e, p->stop_ids_c, p->n_stop_ids * sizeof *e);
        if (n_extra_eog) memcpy(e + p->n_stop_ids, extra_eog, n_extra_eog * sizeof *e);
        *eog_scratch = e;
        out->eog_ids = e;
        out->n_eog = n;
    }
    return 0;
}

void nkpy_params_session(PyObject *params, struct nkpy_session_opts *out)
{
    struct nkpy_params *p = (struct nkpy_params *)params;
    out->stop = p->stop;
    out->stop_ids = p->stop_ids_c;
    out->n_stop_ids = p->n_stop_ids;
    out->max_tokens = p->max_tokens;
    out->logprobs = p->logprobs;
    out->ignore_eos = p->ignore_eos;
    out->include_stop = p->include_stop_str_in_output;
}

int nkpy_add_params(PyObject *m, struct nkpy_state *st)
{
    build_getset();
    st->params_type = PyType_FromSpec(&params_spec);
    if (!st->params_type) return -1;
    Py_INCREF(st->params_type);
    return PyModule_AddObject(m, "SamplingParams", st->params_type);
}
