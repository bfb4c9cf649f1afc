/*
 * SamplingParams' object (params.c: scalars, named choices, the type;
 * params_lists.c: the fields that hold lists and their C arrays).
 */
#ifndef NEXTOK_PY_PARAMS_H
#define NEXTOK_PY_PARAMS_H

#include "ext.h"

struct nkpy_params {
    PyObject_HEAD
    struct nextok_sampling_params c;   /* arrays point into the fields below */
    uint64_t version;
    /* lists, as the user gave them (tuples), and their C arrays (PyMem) */
    PyObject *logit_bias;              /* dict {id: bias} or None            */
    struct nextok_logit_bias *bias_c;
    PyObject *allowed;                 /* tuple or None                      */
    int32_t  *allowed_c;
    PyObject *banned;                  /* tuple or None                      */
    int32_t  *banned_c;
    PyObject *breakers;                /* tuple of tuples or None            */
    int32_t  *breaker_ids;
    size_t   *breaker_off;
    PyObject *samplers;                /* str or None                        */
    PyObject *samplers_utf8;           /* its UTF-8 (bytes), what c points to */
    /* for Session */
    PyObject *stop;                    /* tuple of str                       */
    PyObject *stop_token_ids;          /* tuple of int                       */
    int32_t  *stop_ids_c;
    size_t    n_stop_ids;
    int32_t   max_tokens;              /* <= 0: none                         */
    int32_t   logprobs;                /* < 0: off (None)                    */
    bool      ignore_eos;
    bool      include_stop_str_in_output;
};

/* An int that must fit int32 (OverflowError naming `name`). */
int nkpy_set_i32(PyObject *v, const char *name, int32_t *out);

/* The list fields' getters and setters, NULL-terminated. */
extern const PyGetSetDef nkpy_params_lists[];

#endif
