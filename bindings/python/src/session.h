/*
 * What the files of nextok.Session share (session.c: construction,
 * properties, the type; session_step.c: steps, text deltas, finish, reset,
 * prompt, masks, clone; session_stream.c: Session.stream's iterator).
 */
#ifndef NEXTOK_PY_SESSION_H
#define NEXTOK_PY_SESSION_H

#include "ext.h"

struct nkpy_session {
    PyObject_HEAD
    struct nextok_session *s;
    PyObject *vocab;
    PyObject *grammar;              /* CompiledGrammar or NULL                */
    PyObject *stop;                 /* tuple: the stop strings as given      */
    int32_t n_vocab;
    bool busy;
    bool logprobs;                  /* last_logprobs is filled per step      */
    bool finished;
    enum nextok_finish finish;
    int32_t which;
    int32_t finish_token;
    unsigned char pending[4];       /* an incomplete UTF-8 tail              */
    size_t n_pending;
    PyObject *last_logprobs;        /* tuple or None                         */
    int32_t *prompt;                /* what reset() sets again (PyMem)       */
    size_t n_prompt;
    int32_t *mask;                  /* set_token_bitmask's copy (PyMem)      */
    bool mask_set;
};

static inline struct nkpy_state *nkpy_session_state(PyObject *self)
{
    return nkpy_state_from_type(Py_TYPE(self));
}

/* Raise the session's failure (its errmsg). Returns NULL. */
PyObject *nkpy_session_error(struct nkpy_session *o, nextok_status rc);
/* The one-thread-at-a-time claim (RuntimeError when taken); release with
 * o->busy = false. */
int nkpy_session_claim(struct nkpy_session *o);
/* vLLM's finish_reason word, or NULL while running; and as an object. */
const char *nkpy_finish_word(enum nextok_finish f);
PyObject *nkpy_finish_obj(enum nextok_finish f);
/* set_prompt on the C session, keeping a copy for reset(). */
int nkpy_session_apply_prompt(struct nkpy_session *o, PyObject *ids);

/* The methods (session_step.c, session_stream.c). */
PyObject *nkpy_session_do_step(struct nkpy_session *o, PyObject *logits);
PyObject *nkpy_session_do_finish(struct nkpy_session *o);
PyObject *nkpy_session_step(PyObject *self, PyObject *logits);
PyObject *nkpy_session_finish(PyObject *self, PyObject *unused);
PyObject *nkpy_session_reset(PyObject *self, PyObject *unused);
PyObject *nkpy_session_set_prompt(PyObject *self, PyObject *arg);
PyObject *nkpy_session_set_token_bitmask(PyObject *self, PyObject *arg);
PyObject *nkpy_session_clone(PyObject *self, PyObject *unused);
PyObject *nkpy_session_stream(PyObject *self, PyObject *args, PyObject *kwargs);
/* Make st->stream_type. */
int nkpy_add_session_stream(struct nkpy_state *st);

#endif
