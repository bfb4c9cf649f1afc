/*
 * nextok.CompiledGrammar: a Grammar bound to a Vocab's token table
 * (Grammar.compile). The table is built once per Vocab object and kept by
 * it (nkpy_vocab_token_table), so compiling several grammars over one
 * vocabulary pays for it once. Immutable: shared by any number of matchers
 * (matcher.c) and sessions, on any threads.
 */
#include "ext.h"

struct nkpy_compiled {
    PyObject_HEAD
    struct nextok_compiled_grammar *cg;
    PyObject *vocab;         /* owns the token table cg uses */
    PyObject *grammar;
    const char *kind;        /* the grammar's (a static string) */
};

PyObject *nkpy_compiled_new(PyObject *grammar, const struct nextok_grammar *g, const char *kind,
                            PyObject *vocab, const struct nextok_compile_params *cp)
{
    struct nkpy_state *st = nkpy_state_from_type(Py_TYPE(grammar));
    if (!nkpy_is_vocab(st, vocab)) {
        PyErr_SetString(PyExc_TypeError, "compile: vocab must be a nextok.Vocab");
        return NULL;
    }
    const struct nextok_token_table *tt = nkpy_vocab_token_table(vocab);
    if (!tt) return NULL;
    struct nextok_compiled_grammar *cg = NULL;
    struct nextok_error err = {0};
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_compiled_grammar_init(&cg, g, tt, cp, &err);
    Py_END_ALLOW_THREADS
    if (rc != NEXTOK_OK) return nkpy_raise(st, rc, err.msg);
    PyTypeObject *type = (PyTypeObject *)st->compiled_type;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    struct nkpy_compiled *o = (struct nkpy_compiled *)alloc(type, 0);
    if (!o) {
        nextok_compiled_grammar_free(cg);
        return NULL;
    }
    o->cg = cg;
    Py_INCREF(vocab);
    o->vocab = vocab;
    Py_INCREF(grammar);
    o->grammar = grammar;
    o->kind = kind;
    return (PyObject *)o;
}

static PyObject *compiled_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)type;
    (void)args;
    (void)kwargs;
    PyErr_SetString(PyExc_TypeError, "use Grammar.compile(vocab)");
    return NULL;
}

static void compiled_dealloc(PyObject *self)
{
    struct nkpy_compiled *o = (struct nkpy_compiled *)self;
    PyTypeObject *tp = Py_TYPE(self);
    nextok_compiled_grammar_free(o->cg);
    Py_XDECREF(o->grammar);
    Py_XDECREF(o->vocab); /* after cg: it owns the token table */
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

static PyObject *compiled_matcher(PyObject *self, PyObject *unused)
{
    (void)unused;
    struct nkpy_state *st = nkpy_state_from_type(Py_TYPE(self));
    return PyObject_CallFunctionObjArgs(st->matcher_type, self, NULL);
}

static PyObject *compiled_get_n_vocab(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(nextok_compiled_grammar_n_vocab(((struct nkpy_compiled *)self)->cg));
}

static PyObject *compiled_get_vocab(PyObject *self, void *c)
{
    (void)c;
    PyObject *v = ((struct nkpy_compiled *)self)->vocab;
    Py_INCREF(v);
    return v;
}

static PyObject *compiled_get_grammar(PyObject *self, void *c)
{
    (void)c;
    PyObject *g = ((struct nkpy_compiled *)self)->grammar;
    Py_INCREF(g);
    return g;
}

static PyObject *compiled_repr(PyObject *self)
{
    struct nkpy_compiled *o = (struct nkpy_compiled *)self;
    return PyUnicode_FromFormat("<nextok.CompiledGrammar %s, n_vocab=%d>",
                                o->kind,
                                (int)nextok_compiled_grammar_n_vocab(o->cg));
}

static PyMethodDef compiled_methods[] = {
    {"matcher", compiled_matcher, METH_NOARGS, "matcher() -> Matcher: Matcher(self)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef compiled_getset[] = {
    {"n_vocab", compiled_get_n_vocab, NULL,
     "the vocabulary's size: masks cover ids [0, n_vocab)", NULL},
    {"vocab", compiled_get_vocab, NULL, "the Vocab it was compiled for", NULL},
    {"grammar", compiled_get_grammar, NULL, "the Grammar it was compiled from", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot compiled_slots[] = {
    {Py_tp_new, compiled_new},
    {Py_tp_dealloc, compiled_dealloc},
    {Py_tp_methods, compiled_methods},
    {Py_tp_getset, compiled_getset},
    {Py_tp_repr, compiled_repr},
    {Py_tp_doc,
     "A Grammar bound to a Vocab's tokens (Grammar.compile(vocab)): immutable, shared\n"
     "by any number of Matchers and Sessions on any threads."},
    {0, NULL},
};

static PyType_Spec compiled_spec = {
    "nextok.CompiledGrammar", sizeof(struct nkpy_compiled), 0, Py_TPFLAGS_DEFAULT, compiled_slots,
};

/* ---- what the other files use ---------------------------------------------------- */

int nkpy_is_compiled(struct nkpy_state *st, PyObject *obj)
{
    return PyObject_TypeCheck(obj, (PyTypeObject *)st->compiled_type);
}

const struct nextok_compiled_grammar *nkpy_compiled_ptr(PyObject *compiled)
{
    return ((struct nkpy_compiled *)compiled)->cg;
}

PyObject *nkpy_compiled_vocab(PyObject *compiled)
{
    return ((struct nkpy_compiled *)compiled)->vocab;
}

int nkpy_add_compiled(PyObject *m, struct nkpy_state *st)
{
    st->compiled_type = PyType_FromSpec(&compiled_spec);
    if (!st->compiled_type) return -1;
    Py_INCREF(st->compiled_type);
    return PyModule_AddObject(m, "CompiledGrammar", st->compiled_type);
}
