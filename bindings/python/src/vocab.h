/*
 * What the files of nextok.Vocab share (vocab.c: loading, token queries,
 * the type; vocab_codec.c: decode and encode).
 */
#ifndef NEXTOK_PY_VOCAB_H
#define NEXTOK_PY_VOCAB_H

#include "ext.h"

#define N_ENC 4 /* (parse_special, add_special_tokens) */

struct nkpy_encoder_slot {
    struct nextok_encoder *e;
    bool busy;
};

struct nkpy_vocab {
    PyObject_HEAD
    struct nextok_vocab *v;
    struct nextok_token_table *tt;      /* made by the first compile */
    struct nkpy_encoder_slot enc[N_ENC];
};

/* Calls longer than this release the GIL (ids or bytes). */
#define NOGIL_MIN 256

PyObject *nkpy_vocab_decode(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *nkpy_vocab_encode(PyObject *self, PyObject *args, PyObject *kwargs);

#endif
