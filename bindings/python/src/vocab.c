/*
 * nextok.Vocab: a loaded vocabulary (GGUF, tokenizer.json, tiktoken). It is
 * immutable once loaded and may be shared by any number of threads: decode
 * and encode release the GIL on long inputs. The Vocab also keeps what is
 * built from it on demand: the token table every grammar compiled against
 * it shares (made once, ~60 ms for 128k tokens), and one encoder per option
 * set (the scratch an encode needs; a second thread encoding at the same
 * time gets a temporary one).
 */
#include "vocab.h"

#include <string.h>

static struct nkpy_state *state_of(PyObject *self)
{
    return nkpy_state_from_type(Py_TYPE(self));
}

static const char *const roles[NEXTOK_VOCAB_SPECIAL_COUNT] = {"bos", "eos", "eot",
                                                              "eom", "pad", "unk"};

/* ---- construction ------------------------------------------------------------ */

static PyObject *vocab_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)type;
    (void)args;
    (void)kwargs;
    PyErr_SetString(PyExc_TypeError,
                    "use nextok.Vocab.load(path) or nextok.Vocab.from_bytes(data)");
    return NULL;
}

static PyObject *vocab_wrap(PyTypeObject *type, struct nextok_vocab *v)
{
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    struct nkpy_vocab *o = (struct nkpy_vocab *)alloc(type, 0);
    if (!o) {
        nextok_vocab_free(v);
        return NULL;
    }
    o->v = v;
    return (PyObject *)o;
}

enum vformat { F_AUTO, F_GGUF, F_HF, F_TIKTOKEN };

static int parse_format(PyObject *obj, enum vformat *f)
{
    static const struct { const char *name; enum vformat f; } names[] = {
        {"gguf", F_GGUF}, {"hf", F_HF}, {"tokenizer.json", F_HF}, {"tiktoken", F_TIKTOKEN},
    };
    *f = F_AUTO;
    if (obj == Py_None) return 0;
    for (size_t i = 0; PyUnicode_Check(obj) && i < sizeof names / sizeof names[0]; i++) {
        if (PyUnicode_CompareWithASCIIString(obj, names[i].name) == 0) {
            *f = names[i].f;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError,
                 "type: expected None, 'gguf', 'hf' (tokenizer.json) or 'tiktoken', got %R", obj);
    return -1;
}

/* special_tokens={text: id} for tiktoken files: C structs pointing into
 * the keys' UTF-8 (kept alive by *keep, a list). */
static int parse_specials(PyObject *dict, struct nextok_special_token **out, size_t *n,
                          PyObject **keep)
{
    *out = NULL;
    *n = 0;
    *keep = NULL;
    if (dict == Py_None) return 0;
    if (!PyDict_Check(dict)) {
        PyErr_SetString(PyExc_TypeError, "special_tokens: expected a dict {text: id}");
        return -1;
    }
    Py_ssize_t len = PyDict_Size(dict), pos = 0, i = 0;
    struct nextok_special_token *sp = PyMem_Malloc((size_t)(len ? len : 1) * sizeof *sp);
    PyObject *list = PyList_New(0);
    PyObject *key, *val;
    if (!sp || !list) goto nomem;
    while (PyDict_Next(dict, &pos, &key, &val)) {
        PyObject *utf8 = PyUnicode_Check(key) ? PyUnicode_AsUTF8String(key) : NULL;
        long id = PyLong_Check(val) ? PyLong_AsLong(val) : -1;
        if (!utf8 || !PyLong_Check(val) || (id == -1 && PyErr_Occurred()) ||
            PyList_Append(list, utf8) < 0) {
            Py_XDECREF(utf8);
            if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "special_tokens: %R: expected a str key and an "
                             "int id", key);
            }
            goto fail;
        }
        Py_DECREF(utf8);
        if (id < INT32_MIN || id > INT32_MAX) id = -1; /* the library names the range */
        sp[i].text = PyBytes_AsString(utf8);
        sp[i].id = (int32_t)id;
        i++;
    }
    *out = sp;
    *n = (size_t)i;
    *keep = list;
    return 0;
nomem:
    PyErr_NoMemory();
fail:
    PyMem_Free(sp);
    Py_XDECREF(list);
    return -1;
}

static PyObject *vocab_load(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"path", "type", "special_tokens", NULL};
    PyObject *path_bytes = NULL, *type_obj = Py_None, *spec_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|$OO:load", kw, PyUnicode_FSConverter,
                                     &path_bytes, &type_obj, &spec_obj))
        return NULL;
    enum vformat f;
    struct nextok_special_token *specials = NULL;
    size_t n_specials = 0;
    PyObject *keep = NULL, *out = NULL;
    if (parse_format(type_obj, &f) < 0 ||
        parse_specials(spec_obj, &specials, &n_specials, &keep) < 0)
        goto done;
    if (spec_obj != Py_None && f != F_AUTO && f != F_TIKTOKEN) {
        PyErr_SetString(PyExc_ValueError, "special_tokens: only for tiktoken files");
        goto done;
    }
    if (spec_obj != Py_None) f = F_TIKTOKEN;
    const char *path = PyBytes_AsString(path_bytes);
    struct nextok_vocab *v = NULL;
    struct nextok_error err = {0};
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    switch (f) {
    case F_GGUF: rc = nextok_vocab_load_gguf(&v, path, &err); break;
    case F_HF: rc = nextok_vocab_load_hf_json(&v, path, &err); break;
    case F_TIKTOKEN:
        rc = nextok_vocab_load_tiktoken(&v, path, specials, n_specials, &err);
        break;
    default: rc = nextok_vocab_load_file_ex(&v, path, NULL, &err); break;
    }
    Py_END_ALLOW_THREADS
    if (rc != NEXTOK_OK) {
        /* the path in the message (the library's names the place in the
         * file, and the path only for I/O errors); invalid UTF-8 replaced */
        const char *why = err.msg[0] ? err.msg : nextok_strerror(rc);
        PyObject *msg = strstr(why, path) ? PyUnicode_FromFormat("%s", why)
                                          : PyUnicode_FromFormat("%s: %s", path, why);
        PyObject *utf8 = msg ? PyUnicode_AsUTF8String(msg) : NULL;
        if (utf8) nkpy_raise(nkpy_state_from_type((PyTypeObject *)cls), rc,
                             PyBytes_AsString(utf8));
        Py_XDECREF(msg);
        Py_XDECREF(utf8);
        goto done;
    }
    out = vocab_wrap((PyTypeObject *)cls, v);
done:
    PyMem_Free(specials);
    Py_XDECREF(keep);
    Py_DECREF(path_bytes);
    return out;
}

static PyObject *vocab_from_bytes(PyObject *cls, PyObject *arg)
{
    PyObject *owner;
    const char *data;
    Py_ssize_t len;
    if (nkpy_text_get(arg, "data", &owner, &data, &len) < 0) return NULL;
    struct nextok_vocab *v = NULL;
    struct nextok_error err = {0};
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_vocab_load_mem_ex(&v, data, (size_t)len, NULL, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(owner);
    if (rc != NEXTOK_OK)
        return nkpy_raise(nkpy_state_from_type((PyTypeObject *)cls), rc, err.msg);
    return vocab_wrap((PyTypeObject *)cls, v);
}

static void vocab_dealloc(PyObject *self)
{
    struct nkpy_vocab *o = (struct nkpy_vocab *)self;
    PyTypeObject *tp = Py_TYPE(self);
    for (int i = 0; i < N_ENC; i++) nextok_encoder_free(o->enc[i].e);
    nextok_token_table_free(o->tt);
    nextok_vocab_free(o->v);
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

/* ---- single tokens ------------------------------------------------------------------ */

static int token_arg(PyObject *self, PyObject *arg, int32_t *id)
{
    struct nkpy_vocab *o = (struct nkpy_vocab *)self;
    long x = PyLong_AsLong(arg);
    if (x == -1 && PyErr_Occurred()) return -1;
    int32_t n = nextok_vocab_n_tokens(o->v);
    if (x < 0 || x >= n) {
        char msg[96];
        PyOS_snprintf(msg, sizeof msg, "token id %ld out of range [0, %ld)", x, (long)n);
        nkpy_raise(state_of(self), NEXTOK_ERR_TOKEN_RANGE, msg);
        return -1;
    }
    *id = (int32_t)x;
    return 0;
}

static PyObject *vocab_token_bytes(PyObject *self, PyObject *arg)
{
    int32_t id;
    if (token_arg(self, arg, &id) < 0) return NULL;
    size_t len = 0;
    const char *p = nextok_vocab_token_bytes(((struct nkpy_vocab *)self)->v, id, &len);
    return PyBytes_FromStringAndSize(p ? p : "", (Py_ssize_t)len);
}

static PyObject *vocab_token_text(PyObject *self, PyObject *arg)
{
    int32_t id;
    if (token_arg(self, arg, &id) < 0) return NULL;
    size_t len = 0;
    const char *p = nextok_vocab_token_text(((struct nkpy_vocab *)self)->v, id, &len);
    return PyBytes_FromStringAndSize(p ? p : "", (Py_ssize_t)len);
}

static PyObject *vocab_is_eog(PyObject *self, PyObject *arg)
{
    int32_t id;
    if (token_arg(self, arg, &id) < 0) return NULL;
    return PyBool_FromLong(nextok_vocab_is_eog(((struct nkpy_vocab *)self)->v, id));
}

static PyObject *vocab_is_special(PyObject *self, PyObject *arg)
{
    int32_t id;
    if (token_arg(self, arg, &id) < 0) return NULL;
    uint32_t a = nextok_vocab_token_attrs(((struct nkpy_vocab *)self)->v, id);
    return PyBool_FromLong((a & NEXTOK_TOKEN_ATTR_SPECIAL) != 0);
}

static PyObject *vocab_find(PyObject *self, PyObject *arg)
{
    PyObject *owner;
    const char *text;
    Py_ssize_t len;
    if (nkpy_text_get(arg, "text", &owner, &text, &len) < 0) return NULL;
    int32_t id = nextok_vocab_find(((struct nkpy_vocab *)self)->v, text, (size_t)len);
    Py_DECREF(owner);
    if (id < 0) Py_RETURN_NONE;
    return PyLong_FromLong(id);
}

static PyObject *vocab_special_id(PyObject *self, PyObject *arg)
{
    for (int i = 0; PyUnicode_Check(arg) && i < NEXTOK_VOCAB_SPECIAL_COUNT; i++) {
        if (PyUnicode_CompareWithASCIIString(arg, roles[i]) != 0) continue;
        int32_t id = nextok_vocab_special_id(((struct nkpy_vocab *)self)->v,
                                             (enum nextok_vocab_special)i);
        if (id < 0) Py_RETURN_NONE;
        return PyLong_FromLong(id);
    }
    PyErr_Format(PyExc_ValueError,
                 "special_id: expected 'bos', 'eos', 'eot', 'eom', 'pad' or 'unk', got %R", arg);
    return NULL;
}

/* ---- properties ------------------------------------------------------------------ */

static PyObject *get_n_vocab(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(nextok_vocab_n_tokens(((struct nkpy_vocab *)self)->v));
}

static PyObject *get_eog_ids(PyObject *self, void *c)
{
    (void)c;
    size_t n = 0;
    const int32_t *ids = nextok_vocab_eog_ids(((struct nkpy_vocab *)self)->v, &n);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *x = PyLong_FromLong(ids[i]);
        if (!x) Py_CLEAR(list);
        else PyList_SetItem(list, (Py_ssize_t)i, x);
    }
    return list;
}

static PyObject *get_vocab_type(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(
        nextok_vocab_type_name(nextok_vocab_get_type(((struct nkpy_vocab *)self)->v)));
}

static PyObject *get_adds_bos(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(nextok_vocab_adds_bos(((struct nkpy_vocab *)self)->v));
}

static PyObject *get_adds_eos(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(nextok_vocab_adds_eos(((struct nkpy_vocab *)self)->v));
}

static Py_ssize_t vocab_len(PyObject *self)
{
    return nextok_vocab_n_tokens(((struct nkpy_vocab *)self)->v);
}

static PyObject *vocab_repr(PyObject *self)
{
    struct nkpy_vocab *o = (struct nkpy_vocab *)self;
    return PyUnicode_FromFormat("<nextok.Vocab %s, n_vocab=%d>",
                                nextok_vocab_type_name(nextok_vocab_get_type(o->v)),
                                (int)nextok_vocab_n_tokens(o->v));
}

static PyMethodDef vocab_methods[] = {
    {"load", (PyCFunction)(void (*)(void))vocab_load, METH_CLASS | METH_VARARGS | METH_KEYWORDS,
     "load(path, *, type=None, special_tokens=None) -> Vocab\n\n"
     "Load a vocabulary. type None: by content (the GGUF magic -> GGUF; a directory, a\n"
     "name ending in .json or text starting with '{' -> tokenizer.json, with the\n"
     "tokenizer_config.json and generation_config.json next to it; else a tiktoken\n"
     "ranks file, with OpenAI's special tokens when its name is r50k_base, p50k_base,\n"
     "cl100k_base or o200k_base). type 'gguf', 'hf' (or 'tokenizer.json'), 'tiktoken'\n"
     "forces the format. special_tokens: {text: id} added to a tiktoken file.\n"
     "Failures raise nextok.Error (status ERR_IO, ERR_FORMAT, ERR_UNSUPPORTED, ...)\n"
     "whose message names the place in the file."},
    {"from_bytes", vocab_from_bytes, METH_CLASS | METH_O,
     "from_bytes(data) -> Vocab: load from memory by content (GGUF, a tokenizer.json\n"
     "alone, or tiktoken ranks without special tokens)."},
    {"decode", (PyCFunction)(void (*)(void))nkpy_vocab_decode, METH_VARARGS | METH_KEYWORDS,
     "decode(ids, *, skip_special_tokens=False, spaces_between_special_tokens=False) -> bytes\n\n"
     "The text of the ids as HF tokenizers' decode gives it, as UTF-8 bytes (always\n"
     "valid UTF-8: bytes that are not become U+FFFD). ids: any sequence of ints, or a\n"
     "1-D int32 array (read in place). An id outside [0, n_vocab) raises nextok.Error\n"
     "ERR_TOKEN_RANGE."},
    {"encode", (PyCFunction)(void (*)(void))nkpy_vocab_encode, METH_VARARGS | METH_KEYWORDS,
     "encode(text, *, add_special_tokens=True, parse_special=False) -> list[int]\n\n"
     "Token ids of text (str, or UTF-8 bytes) as the vocabulary's own tokenizer gives\n"
     "them (HF tokenizers for tokenizer.json, llama.cpp for GGUF, tiktoken).\n"
     "add_special_tokens: add BOS/EOS as the vocabulary says (HF's default), False:\n"
     "never. parse_special: special-token text in the input ('<|eot_id|>') becomes\n"
     "its id; off by default, so user text cannot inject control tokens (HF's\n"
     "default is on: pass True for its ids on chat-template text). Added tokens that\n"
     "are not special are always split out. A vocabulary nextok cannot encode raises\n"
     "nextok.Error ERR_UNSUPPORTED; invalid UTF-8 bytes ERR_INVALID_ARG."},
    {"token_bytes", vocab_token_bytes, METH_O,
     "token_bytes(id) -> bytes: what the token adds to decoded text when it is not the\n"
     "first (b' world' for 'Ġworld'); may be part of a UTF-8 character."},
    {"token_text", vocab_token_text, METH_O,
     "token_text(id) -> bytes: the token as the file spells it (b'\\xc4\\xa0world')."},
    {"find", vocab_find, METH_O,
     "find(text) -> int | None: the (lowest) id whose stored text (token_text) is text."},
    {"special_id", vocab_special_id, METH_O,
     "special_id(role) -> int | None: the id of 'bos', 'eos', 'eot', 'eom', 'pad' or\n"
     "'unk' (from the file, else found by well-known names), None when there is none."},
    {"is_eog", vocab_is_eog, METH_O, "is_eog(id) -> bool: in the end-of-generation set."},
    {"is_special", vocab_is_special, METH_O,
     "is_special(id) -> bool: left out by skip_special_tokens."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef vocab_getset[] = {
    {"n_vocab", get_n_vocab, NULL, "number of ids: every id in [0, n_vocab) is valid", NULL},
    {"eog_ids", get_eog_ids, NULL,
     "end-of-generation ids, ascending (eos, eot, eom, generation_config's eos_token_id, ...)",
     NULL},
    {"vocab_type", get_vocab_type, NULL, "'spm', 'bpe', 'wpm', 'ugm' or 'tiktoken'", NULL},
    {"adds_bos", get_adds_bos, NULL, "encode(add_special_tokens=True) adds BOS", NULL},
    {"adds_eos", get_adds_eos, NULL, "encode(add_special_tokens=True) adds EOS", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot vocab_slots[] = {
    {Py_tp_new, vocab_new},
    {Py_tp_dealloc, vocab_dealloc},
    {Py_tp_methods, vocab_methods},
    {Py_tp_getset, vocab_getset},
    {Py_tp_repr, vocab_repr},
    {Py_sq_length, vocab_len},
    {Py_tp_doc,
     "A tokenizer vocabulary: ids to text (decode), text to ids (encode), end ids.\n"
     "Made by Vocab.load(path) or Vocab.from_bytes(data). Immutable: one Vocab may be\n"
     "shared by any number of threads, Sessions and compiled grammars; long decodes\n"
     "and encodes release the GIL. len(vocab) == vocab.n_vocab."},
    {0, NULL},
};

static PyType_Spec vocab_spec = {
    "nextok.Vocab", sizeof(struct nkpy_vocab), 0, Py_TPFLAGS_DEFAULT, vocab_slots,
};

/* ---- what the other files use ------------------------------------------------------ */

int nkpy_is_vocab(struct nkpy_state *st, PyObject *obj)
{
    return PyObject_TypeCheck(obj, (PyTypeObject *)st->vocab_type);
}

const struct nextok_vocab *nkpy_vocab_ptr(PyObject *vocab)
{
    return ((struct nkpy_vocab *)vocab)->v;
}

const struct nextok_token_table *nkpy_vocab_token_table(PyObject *vocab)
{
    struct nkpy_vocab *o = (struct nkpy_vocab *)vocab;
    if (o->tt) return o->tt;
    struct nextok_token_table *tt = NULL;
    struct nextok_error err = {0};
    nextok_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nextok_token_table_init(&tt, o->v, NULL, &err);
    Py_END_ALLOW_THREADS
    if (rc != NEXTOK_OK) {
        nkpy_raise(state_of(vocab), rc, err.msg);
        return NULL;
    }
    if (o->tt) nextok_token_table_free(tt); /* another thread made one meanwhile */
    else o->tt = tt;
    return o->tt;
}

int nkpy_add_vocab(PyObject *m, struct nkpy_state *st)
{
    st->vocab_type = PyType_FromSpec(&vocab_spec);
    if (!st->vocab_type) return -1;
    Py_INCREF(st->vocab_type);
    return PyModule_AddObject(m, "Vocab", st->vocab_type);
}
