/*
 * nextok.Session: one generation stream (nextok_session): sampling chain,
 * detokenizer and stop rules, one step per token. This file: construction,
 * properties and the type; the steps are in session_step.c, stream() in
 * session_stream.c.
 *
 * A Session is used by one thread at a time (a second thread calling it
 * meanwhile gets a RuntimeError); the Vocab and CompiledGrammar it holds may
 * be shared.
 */
#include "session.h"

#include <string.h>

PyObject *nkpy_session_error(struct nkpy_session *o, nextok_status rc)
{
    return nkpy_raise(nkpy_session_state((PyObject *)o), rc, nextok_session_errmsg(o->s));
}

int nkpy_session_claim(struct nkpy_session *o)
{
    if (o->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "this Session is in use by another thread (use one Session per thread)");
        return -1;
    }
    o->busy = true;
    return 0;
}

/* ---- construction -------------------------------------------------------------- */

/* The grammar argument as a CompiledGrammar for vocab (a new reference). */
static PyObject *grammar_arg(struct nkpy_state *st, PyObject *g, PyObject *vocab)
{
    if (nkpy_is_grammar(st, g)) return nkpy_grammar_compile(g, vocab);
    if (!nkpy_is_compiled(st, g)) {
        PyErr_SetString(PyExc_TypeError,
                        "grammar: expected a nextok.CompiledGrammar, a nextok.Grammar or None");
        return NULL;
    }
    if (nkpy_compiled_vocab(g) != vocab) {
        PyErr_SetString(PyExc_ValueError, "grammar: compiled for another Vocab object "
                                          "(compile it with this session's vocab)");
        return NULL;
    }
    Py_INCREF(g);
    return g;
}

struct build {
    PyObject *utf8;          /* list keeping the stop strings' bytes alive */
    const char **strs;
    size_t *lens;
    int32_t *scratch;
};

static int stop_strings(PyObject *stop, struct build *b)
{
    Py_ssize_t n = PyTuple_Size(stop);
    b->utf8 = PyList_New(0);
    b->strs = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *b->strs);
    b->lens = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *b->lens);
    if (!b->utf8 || !b->strs || !b->lens) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *owner;
        const char *p;
        Py_ssize_t len;
        if (nkpy_text_get(PyTuple_GetItem(stop, i), "stop", &owner, &p, &len) < 0) return -1;
        int rc = PyList_Append(b->utf8, owner);
        Py_DECREF(owner);
        if (rc < 0) return -1;
        b->strs[i] = p;
        b->lens[i] = (size_t)len;
    }
    return 0;
}

static int parse_source(PyObject *obj, enum nextok_logprobs_source *out)
{
    if (PyUnicode_Check(obj) && PyUnicode_CompareWithASCIIString(obj, "raw") == 0) {
        *out = NEXTOK_LOGPROBS_RAW;
        return 0;
    }
    if (PyUnicode_Check(obj) && PyUnicode_CompareWithASCIIString(obj, "processed") == 0) {
        *out = NEXTOK_LOGPROBS_PROCESSED;
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "logprobs_source: expected 'raw' or 'processed', got %R", obj);
    return -1;
}

static PyObject *session_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"vocab", "params", "prompt", "grammar", "n_vocab", "skip_special_tokens",
                         "spaces_between_special_tokens", "logprobs_source", NULL};
    PyObject *vocab, *params, *prompt = Py_None, *grammar = Py_None, *nv_obj = Py_None;
    PyObject *source_obj = NULL;
    int skip = 0, spaces = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$OOOppO:Session", kw, &vocab, &params,
                                     &prompt, &grammar, &nv_obj, &skip, &spaces, &source_obj))
        return NULL;
    struct nkpy_state *st = nkpy_state_from_type(type);
    if (!nkpy_is_vocab(st, vocab)) {
        PyErr_SetString(PyExc_TypeError, "Session: vocab must be a nextok.Vocab");
        return NULL;
    }
    if (!nkpy_is_params(st, params)) {
        PyErr_SetString(PyExc_TypeError, "Session: params must be a nextok.SamplingParams");
        return NULL;
    }
    const struct nextok_vocab *v = nkpy_vocab_ptr(vocab);
    long n_vocab = nextok_vocab_n_tokens(v);
    if (nv_obj != Py_None) {
        n_vocab = PyLong_AsLong(nv_obj);
        if (n_vocab == -1 && PyErr_Occurred()) return NULL;
        if (n_vocab <= 0 || n_vocab > INT32_MAX) {
            PyErr_Format(PyExc_ValueError, "n_vocab: must be in [1, 2**31), got %ld", n_vocab);
            return NULL;
        }
    }
    enum nextok_logprobs_source source = NEXTOK_LOGPROBS_RAW;
    if (source_obj && parse_source(source_obj, &source) < 0) return NULL;
    PyObject *compiled = grammar == Py_None ? NULL : grammar_arg(st, grammar, vocab);
    if (grammar != Py_None && !compiled) return NULL;

    struct build b = {0};
    struct nkpy_session_opts so;
    nkpy_params_session(params, &so);
    struct nkpy_session *o = NULL;
    struct nextok_session *s = NULL;
    struct nextok_sampling_params sp;
    if (stop_strings(so.stop, &b) < 0 ||
        nkpy_params_fill(params, (int32_t)n_vocab, &sp, &b.scratch, NULL, 0) < 0)
        goto done;
    struct nextok_stop_params stop = nextok_stop_default_params();
    stop.strings = b.strs;
    stop.string_lens = b.lens;
    stop.n_strings = (size_t)PyTuple_Size(so.stop);
    stop.include_stop = so.include_stop;
    stop.ignore_eos = so.ignore_eos;
    stop.stop_ids = so.stop_ids;
    stop.n_stop_ids = so.n_stop_ids;
    stop.max_tokens = so.max_tokens;
    struct nextok_decode_params dp = nextok_decode_default_params();
    dp.skip_special_tokens = skip;
    dp.spaces_between_special_tokens = spaces;
    struct nextok_session_params p = nextok_session_default_params();
    p.sampling = &sp;
    p.stop = &stop;
    p.decode = &dp;
    p.vocab = v;
    p.logprobs = so.logprobs >= 0;
    p.top_logprobs = so.logprobs > 0 ? (size_t)so.logprobs : 0;
    p.logprobs_source = source;
    p.grammar = compiled ? nkpy_compiled_ptr(compiled) : NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_session_init(&s, &p, &err);
    if (rc != NEXTOK_OK) {
        nkpy_raise(st, rc, err.msg);
        goto done;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    o = (struct nkpy_session *)alloc(type, 0);
    if (!o) goto done;
    o->s = s;
    s = NULL;
    Py_INCREF(vocab);
    o->vocab = vocab;
    o->grammar = compiled;
    compiled = NULL;
    Py_INCREF(so.stop); /* a tuple: the params replace it, never change it */
    o->stop = so.stop;
    o->n_vocab = (int32_t)n_vocab;
    o->logprobs = p.logprobs;
    o->which = -1;
    o->finish_token = -1;
    Py_INCREF(Py_None);
    o->last_logprobs = Py_None;
    if (prompt != Py_None && nkpy_session_apply_prompt(o, prompt) < 0) Py_CLEAR(o);
done:
    nextok_session_free(s);
    Py_XDECREF(compiled);
    Py_XDECREF(b.utf8);
    PyMem_Free(b.strs);
    PyMem_Free(b.lens);
    PyMem_Free(b.scratch);
    return (PyObject *)o;
}

static void session_dealloc(PyObject *self)
{
    struct nkpy_session *o = (struct nkpy_session *)self;
    PyTypeObject *tp = Py_TYPE(self);
    nextok_session_free(o->s); /* before the vocabulary and grammar it borrows */
    PyMem_Free(o->prompt);
    PyMem_Free(o->mask);
    Py_XDECREF(o->last_logprobs);
    Py_XDECREF(o->stop);
    Py_XDECREF(o->grammar);
    Py_XDECREF(o->vocab);
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

/* ---- properties ------------------------------------------------------------------ */

static PyObject *get_n_tokens(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(nextok_session_n_tokens(((struct nkpy_session *)self)->s));
}

static PyObject *get_n_vocab(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((struct nkpy_session *)self)->n_vocab);
}

static PyObject *get_vocab(PyObject *self, void *c)
{
    (void)c;
    PyObject *v = ((struct nkpy_session *)self)->vocab;
    Py_INCREF(v);
    return v;
}

static PyObject *get_grammar(PyObject *self, void *c)
{
    (void)c;
    PyObject *g = ((struct nkpy_session *)self)->grammar;
    if (!g) g = Py_None;
    Py_INCREF(g);
    return g;
}

static PyObject *get_finished(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(((struct nkpy_session *)self)->finished);
}

static PyObject *get_finish_reason(PyObject *self, void *c)
{
    (void)c;
    return nkpy_finish_obj(((struct nkpy_session *)self)->finish);
}

static PyObject *get_finish_detail(PyObject *self, void *c)
{
    (void)c;
    struct nkpy_session *o = (struct nkpy_session *)self;
    if (o->finish == NEXTOK_FINISH_NONE) Py_RETURN_NONE;
    return PyUnicode_FromString(nextok_finish_name(o->finish));
}

static PyObject *get_stop_reason(PyObject *self, void *c)
{
    (void)c;
    struct nkpy_session *o = (struct nkpy_session *)self;
    if (o->finish == NEXTOK_FINISH_STOP_STRING && o->which >= 0 &&
        o->which < PyTuple_Size(o->stop)) {
        PyObject *s = PyTuple_GetItem(o->stop, o->which);
        Py_INCREF(s);
        return s;
    }
    if (o->finish == NEXTOK_FINISH_STOP_TOKEN) return PyLong_FromLong(o->finish_token);
    Py_RETURN_NONE;
}

static PyObject *get_last_logprobs(PyObject *self, void *c)
{
    (void)c;
    PyObject *lp = ((struct nkpy_session *)self)->last_logprobs;
    Py_INCREF(lp);
    return lp;
}

static PyObject *session_repr(PyObject *self)
{
    struct nkpy_session *o = (struct nkpy_session *)self;
    const char *w = nkpy_finish_word(o->finish);
    return PyUnicode_FromFormat("<nextok.Session n_vocab=%d, n_tokens=%d, %s%s>", (int)o->n_vocab,
                                (int)nextok_session_n_tokens(o->s),
                                o->finished ? "finished: " : "running",
                                o->finished ? (w ? w : "None") : "");
}

static PyMethodDef session_methods[] = {
    {"step", nkpy_session_step, METH_O,
     "step(logits) -> (token, text_delta, finish_reason)\n\n"
     "Sample a token from one row of n_vocab logits (float32, float16 or bfloat16,\n"
     "read in place; the GIL is released), accept it, decode it and apply the stop\n"
     "rules. text_delta: the text a client should see now (str; possibly empty; a\n"
     "stop string and what follows it are left out unless include_stop_str_in_output).\n"
     "finish_reason: None while generating, else 'stop' (an end-of-generation id, a\n"
     "stop token or stop string, the grammar complete) or 'length' (max_tokens);\n"
     "finish_detail and stop_reason say more. After the finishing step, step raises\n"
     "nextok.Error ERR_STATE until reset(). A failed step changes nothing."},
    {"finish", nkpy_session_finish, METH_NOARGS,
     "finish() -> (text, finish_reason): end the stream now (the caller stops early):\n"
     "the text still held back (a possible start of a stop string, a partial\n"
     "character as U+FFFD). finish_reason is None unless that text completes a stop\n"
     "string. After a step that finished, returns ('', its finish_reason)."},
    {"stream", (PyCFunction)(void (*)(void))nkpy_session_stream, METH_VARARGS | METH_KEYWORDS,
     "stream(logits, *, finish=True) -> iterator of (token, text_delta)\n\n"
     "step() over each row of an iterable of logits rows (a [steps, V] array, a\n"
     "generator of rows) until the session finishes; then finish_reason says why.\n"
     "If the rows run out first and finish is True, finish() is called and its text,\n"
     "if any, comes as a last (None, text); finish=False leaves the session open\n"
     "for more rows."},
    {"reset", nkpy_session_reset, METH_NOARGS,
     "reset(): start a new generation: no output, step 0; the prompt (constructor or\n"
     "last set_prompt) is set again (set_prompt([]) drops it)."},
    {"set_prompt", nkpy_session_set_prompt, METH_O,
     "set_prompt(ids): the prompt tokens (penalties, DRY, n-gram bans; the last one is\n"
     "the detokenizer's context so the first output token decodes as a continuation).\n"
     "Only before the first step (nextok.Error ERR_STATE after)."},
    {"set_token_bitmask", nkpy_session_set_token_bitmask, METH_O,
     "set_token_bitmask(words): this step's allowed tokens as an int32 bitmask of at\n"
     "least ceil(n_vocab / 32) words (copied), for params with token_bitmask=True.\n"
     "Holds until the next step accepts a token; a step without one raises ERR_STATE."},
    {"clone", nkpy_session_clone, METH_NOARGS,
     "clone() -> Session: an independent copy in the same state (beams, parallel\n"
     "samples)."},
    {"__copy__", nkpy_session_clone, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef session_getset[] = {
    {"n_tokens", get_n_tokens, NULL, "tokens generated so far", NULL},
    {"n_vocab", get_n_vocab, NULL, "the logits row length", NULL},
    {"vocab", get_vocab, NULL, "the Vocab", NULL},
    {"grammar", get_grammar, NULL, "the CompiledGrammar constraining it, or None", NULL},
    {"finished", get_finished, NULL, "a step finished, or finish() was called", NULL},
    {"finish_reason", get_finish_reason, NULL,
     "'stop', 'length' or None (vLLM's finish_reason)", NULL},
    {"finish_detail", get_finish_detail, NULL,
     "nextok's finish name: 'eos', 'stop_token', 'stop_string', 'length', 'grammar', or None",
     NULL},
    {"stop_reason", get_stop_reason, NULL,
     "vLLM's stop_reason: the stop string (as given) or stop token id that ended it; None "
     "otherwise (an end-of-generation id, length)", NULL},
    {"last_logprobs", get_last_logprobs, NULL,
     "params.logprobs set: (logprob, rank, [(id, logprob, token_bytes), ...]) of the last "
     "step's token and its top alternatives; None otherwise", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot session_slots[] = {
    {Py_tp_new, session_new},
    {Py_tp_dealloc, session_dealloc},
    {Py_tp_methods, session_methods},
    {Py_tp_getset, session_getset},
    {Py_tp_repr, session_repr},
    {Py_tp_doc,
     "Session(vocab, params, *, prompt=None, grammar=None, n_vocab=None,\n"
     "        skip_special_tokens=False, spaces_between_special_tokens=False,\n"
     "        logprobs_source='raw')\n\n"
     "One generation stream: the sampling chain of params (a SamplingParams, read\n"
     "once), the detokenizer and the stop rules (params.stop, stop_token_ids,\n"
     "max_tokens, min_tokens, ignore_eos, include_stop_str_in_output; the vocabulary's\n"
     "end-of-generation ids). n_vocab: the logits row length (default vocab.n_vocab;\n"
     "a model's rows may be wider: ids past the vocabulary decode to nothing).\n"
     "grammar: a CompiledGrammar of this vocab (or a Grammar, compiled here):\n"
     "every step is masked by it and the stream ends when it is complete.\n"
     "params.logprobs = N fills last_logprobs each step (logprobs_source 'raw':\n"
     "log_softmax of the row, vLLM's default; 'processed': the final distribution)."},
    {0, NULL},
};

static PyType_Spec session_spec = {
    "nextok.Session", sizeof(struct nkpy_session), 0, Py_TPFLAGS_DEFAULT, session_slots,
};

int nkpy_add_session(PyObject *m, struct nkpy_state *st)
{
    if (nkpy_add_session_stream(st) < 0) return -1;
    st->session_type = PyType_FromSpec(&session_spec);
    if (!st->session_type) return -1;
    Py_INCREF(st->session_type);
    return PyModule_AddObject(m, "Session", st->session_type);
}
