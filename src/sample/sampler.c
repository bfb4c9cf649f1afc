/* The generic sampler object: NULL-tolerant wrappers around the vtable. */
#include "builtin.h"

#include <stdio.h>

nextok_status nextok__builtin_new(struct nextok_sampler **out, const struct nextok__mem *mem,
                                  const struct nextok_sampler_i *iface, enum nextok__kind kind,
                                  const struct nextok__stage_ops *ops, void *ctx,
                                  struct nextok_error *err)
{
    struct nextok_sampler *s = nextok__calloc(mem, 1, sizeof *s);
    if (!s) {
        if (iface->free) {
            struct nextok_sampler tmp = {iface, ctx, (int)kind, ops, *mem, {0}};
            iface->free(&tmp);
        }
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory creating sampler %s",
                           iface->name ? iface->name(NULL) : "?");
    }
    s->iface = iface;
    s->ctx = ctx;
    s->kind = (int)kind;
    s->ops = ops;
    s->mem = *mem;
    *out = s;
    return NEXTOK_OK;
}

nextok_status nextok_sampler_init(struct nextok_sampler **out, const struct nextok_sampler_i *iface,
                                  void *ctx)
{
    if (!out) return NEXTOK_ERR_INVALID_ARG;
    *out = NULL;
    if (!iface || !iface->apply) return NEXTOK_ERR_INVALID_ARG;
    return nextok__builtin_new(out, &nextok__mem_libc, iface, NEXTOK__K_USER, NULL, ctx, NULL);
}

void *nextok_sampler_ctx(const struct nextok_sampler *s) { return s ? s->ctx : NULL; }

nextok_status nextok_sampler_set_error(struct nextok_sampler *s, nextok_status status,
                                       const char *fmt, ...)
{
    if (s && fmt) {
        va_list ap;
        va_start(ap, fmt);
        nextok__vfmt(s->errmsg, sizeof s->errmsg, fmt, ap);
        va_end(ap);
    }
    return status;
}

nextok_status nextok_sampler_set_errmsg(struct nextok_sampler *s, nextok_status status, const char *msg)
{
    return nextok_sampler_set_error(s, status, "%s", msg ? msg : "");
}

const char *nextok_sampler_errmsg(const struct nextok_sampler *s) { return s ? s->errmsg : ""; }

const char *nextok_sampler_name(const struct nextok_sampler *s)
{
    if (!s || !s->iface->name) return "?";
    return s->iface->name(s);
}

nextok_status nextok_sampler_accept(struct nextok_sampler *s, int32_t token)
{
    if (!s) return NEXTOK_ERR_INVALID_ARG;
    if (token < 0)
        return nextok_sampler_set_error(s, NEXTOK_ERR_TOKEN_RANGE, "token: %d is negative",
                                        (int)token);
    return s->iface->accept ? s->iface->accept(s, token) : NEXTOK_OK;
}

nextok_status nextok_sampler_set_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n)
{
    if (!s || (!ids && n > 0)) return NEXTOK_ERR_INVALID_ARG;
    return s->iface->set_prompt ? s->iface->set_prompt(s, ids, n) : NEXTOK_OK;
}

nextok_status nextok_sampler_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                   uint64_t step)
{
    if (!s || !cur) return NEXTOK_ERR_INVALID_ARG;
    nextok_status rc = nextok_candidates_prepare(cur, NEXTOK_NAN_ERROR);
    if (rc != NEXTOK_OK)
        return nextok_sampler_set_error(s, rc, "%s: input rejected: %s", nextok_sampler_name(s),
                                        nextok_strerror(rc));
    cur->selected = -1;
    return s->iface->apply(s, cur, step);
}

void nextok_sampler_reset(struct nextok_sampler *s)
{
    if (s && s->iface->reset) s->iface->reset(s);
}

nextok_status nextok_sampler_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    if (!s || !out) return NEXTOK_ERR_INVALID_ARG;
    *out = NULL;
    struct nextok_sampler *m = (struct nextok_sampler *)s; /* for the message only */
    if (!s->iface->clone)
        return nextok_sampler_set_error(m, NEXTOK_ERR_UNSUPPORTED, "%s: cannot be cloned",
                                        nextok_sampler_name(s));
    nextok_status rc = s->iface->clone(s, out);
    if (rc != NEXTOK_OK) {
        /* the message goes on the original: the caller has no other handle */
        *out = NULL;
        nextok_sampler_set_error(m, rc, "%s: clone failed: %s", nextok_sampler_name(s),
                                 nextok_strerror(rc));
    }
    return rc;
}

void nextok_sampler_free(struct nextok_sampler *s)
{
    if (!s) return;
    if (s->iface->free) s->iface->free(s);
    const struct nextok__mem mem = s->mem;
    nextok__free(&mem, s);
}

nextok_status nextok__clone_params(const struct nextok_sampler *s, size_t size,
                                   struct nextok_sampler **out)
{
    void *c = nextok__memdup(&s->mem, s->ctx, size);
    if (!c) return NEXTOK_ERR_NOMEM;
    return nextok__builtin_new(out, &s->mem, s->iface, (enum nextok__kind)s->kind, s->ops, c, NULL);
}

void nextok__free_ctx(struct nextok_sampler *s) { nextok__free(&s->mem, s->ctx); }
