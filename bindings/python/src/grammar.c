/*
 * nextok.Grammar (CompiledGrammar is in compiled.c, Matcher in matcher.c).
 *
 * A Grammar is a parsed grammar (GBNF, JSON Schema, regex, the built-in
 * JSON grammar, or a lazy one), immutable, independent of any vocabulary.
 * compile(vocab) binds it to the vocabulary's token table (compiled.c).
 */
#include "ext.h"

#include <string.h>

struct nkpy_grammar {
    PyObject_HEAD
    struct nextok_grammar *g;
    const char *kind;        /* "gbnf", "json_schema", "regex", "json", "lazy" */
    PyObject *ignored;       /* list of (pointer, keyword): lenient JSON Schema */
};

static struct nkpy_state *state_of_type(PyObject *cls)
{
    return nkpy_state_from_type((PyTypeObject *)cls);
}

/* ---- Grammar: construction ------------------------------------------------------- */

static PyObject *grammar_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)type;
    (void)args;
    (void)kwargs;
    PyErr_SetString(PyExc_TypeError, "use Grammar.gbnf(text), Grammar.json_schema(schema), "
                                     "Grammar.regex(pattern), Grammar.json() or Grammar.lazy(...)");
    return NULL;
}

/* Wrap g (taken) or raise the failure. */
static PyObject *grammar_wrap(PyObject *cls, nextok_status rc, struct nextok_grammar *g,
                              const struct nextok_error *err, const char *kind, PyObject *ignored)
{
    if (rc != NEXTOK_OK) {
        nextok_grammar_free(g);
        return nkpy_raise(state_of_type(cls), rc, err->msg);
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    struct nkpy_grammar *o = (struct nkpy_grammar *)alloc(type, 0);
    PyObject *list = ignored ? ignored : PyList_New(0);
    if (!o || !list) {
        nextok_grammar_free(g);
        Py_XDECREF(o);
        return NULL;
    }
    if (ignored) Py_INCREF(ignored);
    o->g = g;
    o->kind = kind;
    o->ignored = list;
    return (PyObject *)o;
}

/* grammar params with an optional vocab (for <token> references) */
static int grammar_params(PyObject *cls, PyObject *vocab, struct nextok_grammar_params *gp)
{
    *gp = nextok_grammar_default_params();
    if (vocab == Py_None) return 0;
    if (!nkpy_is_vocab(state_of_type(cls), vocab)) {
        PyErr_SetString(PyExc_TypeError, "vocab: expected a nextok.Vocab or None");
        return -1;
    }
    gp->vocab = nkpy_vocab_ptr(vocab);
    return 0;
}

static bool is_rule_name(const char *s, Py_ssize_t n)
{
    if (n == 0) return false;
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-'))
            return false;
    }
    return true;
}

static PyObject *grammar_gbnf(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"text", "root", "vocab", NULL};
    PyObject *text_obj, *root_obj = NULL, *vocab = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$UO:gbnf", kw, &text_obj, &root_obj, &vocab))
        return NULL;
    struct nextok_grammar_params gp;
    PyObject *owner;
    const char *text;
    Py_ssize_t len;
    if (grammar_params(cls, vocab, &gp) < 0 || nkpy_text_get(text_obj, "text", &owner, &text, &len) < 0)
        return NULL;
    PyObject *root = root_obj ? PyUnicode_AsUTF8String(root_obj) : NULL;
    if (root_obj && !root) {
        Py_DECREF(owner);
        return NULL;
    }
    /* Another root: one more rule at the end, "root ::= NAME" (a rule defined
     * twice keeps its last definition); places in error messages stay. */
    if (root && strcmp(PyBytes_AsString(root), "root") != 0) {
        if (!is_rule_name(PyBytes_AsString(root), PyBytes_Size(root))) {
            PyErr_Format(PyExc_ValueError, "root: %R is not a GBNF rule name (letters, digits, "
                         "'-')", root_obj);
            Py_DECREF(root);
            Py_DECREF(owner);
            return NULL;
        }
        PyObject *joined = PyBytes_FromFormat("\nroot ::= %s\n", PyBytes_AsString(root));
        PyObject *whole = joined ? PyBytes_FromStringAndSize(text, len) : NULL;
        if (whole) PyBytes_ConcatAndDel(&whole, joined);
        else Py_XDECREF(joined);
        Py_DECREF(owner);
        if (!whole) {
            Py_DECREF(root);
            return NULL;
        }
        owner = whole;
        text = PyBytes_AsString(whole);
        len = PyBytes_Size(whole);
    }
    Py_XDECREF(root);
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_grammar_init_gbnf(&g, text, (size_t)len, &gp, &err);
    Py_DECREF(owner);
    return grammar_wrap(cls, rc, g, &err, "gbnf", NULL);
}

struct ignored_ctx {
    PyObject *list;
    bool failed;
};

static void on_ignored(void *user, const char *pointer, const char *keyword)
{
    struct ignored_ctx *c = user;
    PyObject *t = c->failed ? NULL : Py_BuildValue("(ss)", pointer, keyword);
    if (!t || PyList_Append(c->list, t) < 0) c->failed = true;
    Py_XDECREF(t);
}

static int parse_ws(PyObject *obj, struct nextok_json_schema_params *sp)
{
    if (PyUnicode_Check(obj) && PyUnicode_CompareWithASCIIString(obj, "flexible") == 0) {
        sp->whitespace = NEXTOK_JSON_WS_FLEXIBLE;
        return 0;
    }
    if (PyUnicode_Check(obj) && PyUnicode_CompareWithASCIIString(obj, "compact") == 0) {
        sp->whitespace = NEXTOK_JSON_WS_COMPACT;
        return 0;
    }
    if (PyLong_Check(obj)) {
        long n = PyLong_AsLong(obj);
        if (n == -1 && PyErr_Occurred()) return -1;
        if (n >= 0 && n <= 64) {
            sp->whitespace = NEXTOK_JSON_WS_FLEXIBLE;
            sp->max_ws = (unsigned)n;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "whitespace: expected 'flexible', 'compact' or an int in "
                 "[0, 64] (at most that many characters per place), got %R", obj);
    return -1;
}

static PyObject *grammar_json_schema(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"schema", "strict", "whitespace", "lenient", "property_order", NULL};
    PyObject *schema, *ws = NULL;
    const char *order = "schema";
    int strict = 0, lenient = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$pOps:json_schema", kw, &schema, &strict, &ws,
                                     &lenient, &order))
        return NULL;
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.strict = strict;
    sp.lenient = lenient;
    if (strcmp(order, "any") == 0) {
        sp.order = NEXTOK_JSON_ORDER_ANY;
    } else if (strcmp(order, "schema") != 0) {
        PyErr_Format(PyExc_ValueError, "property_order: expected 'schema' or 'any', got '%s'",
                     order);
        return NULL;
    }
    if (ws && parse_ws(ws, &sp) < 0) return NULL;
    PyObject *text_obj;
    if (PyUnicode_Check(schema) || PyBytes_Check(schema)) {
        Py_INCREF(schema);
        text_obj = schema;
    } else { /* a dict (or list, bool): json.dumps */
        PyObject *json = PyImport_ImportModule("json");
        text_obj = json ? PyObject_CallMethod(json, "dumps", "O", schema) : NULL;
        Py_XDECREF(json);
        if (!text_obj) return NULL;
    }
    PyObject *owner;
    const char *text;
    Py_ssize_t len;
    int got = nkpy_text_get(text_obj, "schema", &owner, &text, &len);
    Py_DECREF(text_obj);
    if (got < 0) return NULL;
    struct ignored_ctx ctx = {PyList_New(0), false};
    if (!ctx.list) {
        Py_DECREF(owner);
        return NULL;
    }
    sp.on_ignored = on_ignored;
    sp.user = &ctx;
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_grammar_init_json_schema(&g, text, (size_t)len, &sp, NULL, &err);
    Py_DECREF(owner);
    PyObject *out = NULL;
    if (ctx.failed) nextok_grammar_free(g);
    else out = grammar_wrap(cls, rc, g, &err, "json_schema", ctx.list);
    Py_DECREF(ctx.list);
    return out;
}

static PyObject *grammar_regex(PyObject *cls, PyObject *arg)
{
    PyObject *owner;
    const char *text;
    Py_ssize_t len;
    if (nkpy_text_get(arg, "pattern", &owner, &text, &len) < 0) return NULL;
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_grammar_init_regex(&g, text, (size_t)len, NULL, &err);
    Py_DECREF(owner);
    return grammar_wrap(cls, rc, g, &err, "regex", NULL);
}

static PyObject *grammar_json(PyObject *cls, PyObject *unused)
{
    (void)unused;
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_grammar_init_json(&g, NULL, &err);
    return grammar_wrap(cls, rc, g, &err, "json", NULL);
}

/* Strings (str as UTF-8, or bytes) for the C API: None, one, or a sequence.
 * Pointers and lengths in PyMem arrays; owners keeps their bytes alive. */
struct texts {
    PyObject *owners;
    const char **p;
    size_t *len;
    size_t n;
};

static void texts_free(struct texts *t)
{
    Py_XDECREF(t->owners);
    PyMem_Free(t->p);
    PyMem_Free(t->len);
}

static int texts_get(PyObject *obj, const char *what, struct texts *t)
{
    memset(t, 0, sizeof *t);
    PyObject *items = obj == Py_None ? PyTuple_New(0)
                      : PyUnicode_Check(obj) || PyBytes_Check(obj) ? PyTuple_Pack(1, obj)
                                                                   : PySequence_Tuple(obj);
    if (!items) return -1;
    Py_ssize_t n = PyTuple_Size(items);
    t->owners = PyList_New(0);
    t->p = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *t->p);
    t->len = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *t->len);
    int rc = t->owners && t->p && t->len ? 0 : (PyErr_NoMemory(), -1);
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *owner;
        Py_ssize_t len;
        rc = nkpy_text_get(PyTuple_GetItem(items, i), what, &owner, &t->p[i], &len);
        if (rc < 0) break;
        rc = PyList_Append(t->owners, owner);
        Py_DECREF(owner); /* the list keeps it */
        t->len[i] = (size_t)len;
    }
    Py_DECREF(items);
    if (rc < 0) {
        texts_free(t);
        return -1;
    }
    t->n = (size_t)n;
    return 0;
}

static PyObject *grammar_lazy(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"grammar", "triggers", "trigger_tokens", "trigger_patterns", "vocab",
                         NULL};
    PyObject *inner, *words_obj = Py_None, *tokens_obj = Py_None, *patterns_obj = Py_None;
    PyObject *vocab = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOO:lazy", kw, &inner, &words_obj,
                                     &tokens_obj, &patterns_obj, &vocab))
        return NULL;
    struct nkpy_state *st = state_of_type(cls);
    if (!nkpy_is_grammar(st, inner)) {
        PyErr_SetString(PyExc_TypeError, "lazy: grammar must be a nextok.Grammar");
        return NULL;
    }
    struct nextok_grammar_params gp;
    if (grammar_params(cls, vocab, &gp) < 0) return NULL;
    struct texts words, patterns = {0};
    struct nkpy_ids tokens = {0};
    PyObject *out = NULL;
    if (texts_get(words_obj, "triggers", &words) < 0) return NULL;
    if (texts_get(patterns_obj, "trigger_patterns", &patterns) < 0) goto done;
    if (tokens_obj != Py_None && nkpy_ids_get(tokens_obj, "trigger_tokens", &tokens) < 0) goto done;
    struct nextok_lazy_params lp = nextok_lazy_default_params();
    lp.words = words.p;
    lp.word_lens = words.len;
    lp.n_words = words.n;
    lp.patterns = patterns.p;
    lp.pattern_lens = patterns.len;
    lp.n_patterns = patterns.n;
    lp.tokens = tokens.data;
    lp.n_tokens = tokens.n;
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_grammar_init_lazy(&g, ((struct nkpy_grammar *)inner)->g, &lp, &gp,
                                                &err);
    out = grammar_wrap(cls, rc, g, &err, "lazy", NULL);
done:
    nkpy_ids_release(&tokens);
    texts_free(&words);
    texts_free(&patterns);
    return out;
}

static void grammar_dealloc(PyObject *self)
{
    struct nkpy_grammar *o = (struct nkpy_grammar *)self;
    PyTypeObject *tp = Py_TYPE(self);
    nextok_grammar_free(o->g);
    Py_XDECREF(o->ignored);
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

/* ---- Grammar: use ------------------------------------------------------------------- */

static PyObject *grammar_accepts(PyObject *self, PyObject *arg)
{
    struct nkpy_grammar *o = (struct nkpy_grammar *)self;
    PyObject *owner;
    const char *text;
    Py_ssize_t len;
    if (nkpy_text_get(arg, "text", &owner, &text, &len) < 0) return NULL;
    bool accepted = false;
    struct nextok_error err = {0};
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS /* the grammar is immutable: any thread may use it */
    rc = nextok_grammar_accepts(o->g, text, (size_t)len, &accepted, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(owner);
    if (rc != NEXTOK_OK) return nkpy_raise(nkpy_state_from_type(Py_TYPE(self)), rc, err.msg);
    return PyBool_FromLong(accepted);
}

static int size_kw(PyObject *obj, const char *what, size_t *out)
{
    if (!obj || obj == Py_None) return 0;
    size_t v = PyLong_AsSize_t(obj);
    if (v == (size_t)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: expected a non-negative int or None", what);
        }
        return -1;
    }
    *out = v;
    return 0;
}

static PyObject *compile_with(PyObject *self, PyObject *vocab,
                              const struct nextok_compile_params *cp)
{
    struct nkpy_grammar *o = (struct nkpy_grammar *)self;
    return nkpy_compiled_new(self, o->g, o->kind, vocab, cp);
}

static PyObject *grammar_compile(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"vocab", "max_cache_bytes", "max_stacks", "max_work", NULL};
    PyObject *vocab, *cache = NULL, *stacks = NULL, *work = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOO:compile", kw, &vocab, &cache, &stacks,
                                     &work))
        return NULL;
    struct nextok_compile_params cp = nextok_compile_default_params();
    size_t s = cp.max_stacks, w = cp.max_work;
    if (size_kw(cache, "max_cache_bytes", &cp.max_cache_bytes) < 0 ||
        size_kw(stacks, "max_stacks", &s) < 0 || size_kw(work, "max_work", &w) < 0)
        return NULL;
    if (s > UINT32_MAX || w > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "max_stacks and max_work: at most 2**32 - 1");
        return NULL;
    }
    cp.max_stacks = (uint32_t)s;
    cp.max_work = (uint32_t)w;
    return compile_with(self, vocab, &cp);
}

static PyObject *grammar_get_kind(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(((struct nkpy_grammar *)self)->kind);
}

static PyObject *grammar_get_n_rules(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(nextok_grammar_n_rules(((struct nkpy_grammar *)self)->g));
}

static PyObject *grammar_get_ignored(PyObject *self, void *c)
{
    (void)c;
    return PySequence_List(((struct nkpy_grammar *)self)->ignored);
}

static PyObject *grammar_repr(PyObject *self)
{
    struct nkpy_grammar *o = (struct nkpy_grammar *)self;
    return PyUnicode_FromFormat("<nextok.Grammar %s, %zu rules>", o->kind,
                                nextok_grammar_n_rules(o->g));
}

static PyMethodDef grammar_methods[] = {
    {"gbnf", (PyCFunction)(void (*)(void))grammar_gbnf, METH_CLASS | METH_VARARGS | METH_KEYWORDS,
     "gbnf(text, *, root='root', vocab=None) -> Grammar\n\n"
     "A GBNF grammar, read exactly as llama.cpp reads it. root: the start rule.\n"
     "vocab: for <token> references. Errors raise nextok.Error ERR_FORMAT with the\n"
     "place ('line 3, column 14: expecting ::=')."},
    {"json_schema", (PyCFunction)(void (*)(void))grammar_json_schema,
     METH_CLASS | METH_VARARGS | METH_KEYWORDS,
     "json_schema(schema, *, strict=False, whitespace='flexible', lenient=False,\n"
     "            property_order='schema') -> Grammar\n\n"
     "The JSON texts that are instances of schema (a str, or a dict etc. given to\n"
     "json.dumps). property_order: 'schema' (as the schema lists them) or 'any'\n"
     "(each once, in any order; objects of at most 10 properties). strict: objects without\n"
     "additionalProperties allow none. whitespace: 'flexible' (at most 20 characters\n"
     "where JSON allows them), 'compact' (none) or an int N in [0, 64] (at most N).\n"
     "lenient: keywords that cannot be enforced exactly are ignored (listed in\n"
     ".ignored as (JSON pointer, keyword)) instead of raising ERR_UNSUPPORTED."},
    {"regex", grammar_regex, METH_CLASS | METH_O,
     "regex(pattern) -> Grammar: texts the regular expression matches whole (the\n"
     "ECMA-262 subset JSON Schema's pattern uses)."},
    {"json", grammar_json, METH_CLASS | METH_NOARGS,
     "json() -> Grammar: any JSON value (RFC 8259)."},
    {"lazy", (PyCFunction)(void (*)(void))grammar_lazy, METH_CLASS | METH_VARARGS | METH_KEYWORDS,
     "lazy(grammar, *, triggers=(), trigger_tokens=(), trigger_patterns=(), vocab=None)\n"
     "    -> Grammar\n\n"
     "Free text until a trigger, then grammar (how a tool call after '<tool_call>' is\n"
     "constrained). A trigger fires where the text first ends with a trigger word (str),\n"
     "or with a match of a trigger pattern (a regex as Grammar.regex takes, without ^\n"
     "and $; the earliest end wins), or at a trigger token id. Special tokens other\n"
     "than the triggers are not allowed before the trigger. At least one trigger."},
    {"accepts", grammar_accepts, METH_O,
     "accepts(text) -> bool: text (str or UTF-8 bytes) is a sentence of the grammar\n"
     "(a reference recognizer; token references never match text)."},
    {"compile", (PyCFunction)(void (*)(void))grammar_compile, METH_VARARGS | METH_KEYWORDS,
     "compile(vocab, *, max_cache_bytes=None, max_stacks=None, max_work=None)\n"
     "-> CompiledGrammar\n\n"
     "Bind the grammar to vocab's tokens, for masks. The vocabulary's token table is\n"
     "built on its first compile and kept by the Vocab. Limits: None for the\n"
     "library's defaults (256 MiB of parser-state cache per matcher family, 4096\n"
     "stacks, 10**6 expansion steps per byte)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef grammar_getset[] = {
    {"kind", grammar_get_kind, NULL, "'gbnf', 'json_schema', 'regex', 'json' or 'lazy'", NULL},
    {"n_rules", grammar_get_n_rules, NULL, "rules, generated ones included", NULL},
    {"ignored", grammar_get_ignored, NULL,
     "json_schema(lenient=True): the keywords ignored, [(JSON pointer, keyword)]", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot grammar_slots[] = {
    {Py_tp_new, grammar_new},
    {Py_tp_dealloc, grammar_dealloc},
    {Py_tp_methods, grammar_methods},
    {Py_tp_getset, grammar_getset},
    {Py_tp_repr, grammar_repr},
    {Py_tp_doc,
     "A grammar (GBNF, JSON Schema, regex, JSON, lazy), independent of any vocabulary.\n"
     "Made by the class methods; immutable and shareable across threads.\n"
     "compile(vocab) binds it to a vocabulary for token masks (Matcher, Session)."},
    {0, NULL},
};

static PyType_Spec grammar_spec = {
    "nextok.Grammar", sizeof(struct nkpy_grammar), 0, Py_TPFLAGS_DEFAULT, grammar_slots,
};

/* ---- what the other files use ---------------------------------------------------- */

int nkpy_is_grammar(struct nkpy_state *st, PyObject *obj)
{
    return PyObject_TypeCheck(obj, (PyTypeObject *)st->grammar_type);
}

PyObject *nkpy_grammar_compile(PyObject *grammar, PyObject *vocab)
{
    struct nextok_compile_params cp = nextok_compile_default_params();
    return compile_with(grammar, vocab, &cp);
}

int nkpy_add_grammar(PyObject *m, struct nkpy_state *st)
{
    st->grammar_type = PyType_FromSpec(&grammar_spec);
    if (!st->grammar_type) return -1;
    Py_INCREF(st->grammar_type);
    if (PyModule_AddObject(m, "Grammar", st->grammar_type) < 0) return -1;
    if (nkpy_add_compiled(m, st) < 0) return -1;
    return nkpy_add_matcher(m, st);
}
