/*
 * Static id-list processors (docs/semantics.md, Processors): logit bias,
 * allowed (whitelist) and banned ids.
 *
 * Each keeps its ids sorted and unique with an open-addressing index. On a
 * full row (token t at index t, as the chain loads it) apply reaches the
 * listed ids directly, O(listed); otherwise it makes one O(size) pass with
 * O(1) lookups. llama.cpp's logit bias instead looks up every vocabulary
 * entry per step. None of the three has state: accept and set_prompt only
 * validate their ids.
 */
#include "proc_common.h"

#include <float.h>

static nextok_status list_accept(struct nextok_sampler *s, int32_t token);
static nextok_status list_set_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n);

/* What the fused path and the chain call on them (builtin.h). accept and
 * set_prompt only check ids, so they are their own reserve steps. */
static const struct nextok__stage_ops ops_bias = {
    .touched = nextok__bias_touched, .reserve = list_accept, .reserve_prompt = list_set_prompt};
static const struct nextok__stage_ops ops_allowed = {
    .allowed = nextok__allowed_ids, .reserve = list_accept, .reserve_prompt = list_set_prompt};
static const struct nextok__stage_ops ops_banned = {
    .touched = nextok__banned_touched, .reserve = list_accept, .reserve_prompt = list_set_prompt};

/* Sorted unique ids, their biases (logit bias only) and a hash index. */
struct idlist {
    int32_t  n_vocab;
    int32_t *ids;  /* ascending, unique                               */
    float   *bias; /* parallel to ids, -INFINITY = remove; NULL if none */
    size_t   n;
    int32_t *slot; /* 2^bits entries: index into ids, -1 empty         */
    unsigned bits;
};

/* ---- the list -------------------------------------------------------------- */

static int cmp_i32(const void *pa, const void *pb)
{
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return (a > b) - (a < b);
}

static int32_t idlist_find(const struct idlist *l, int32_t id)
{
    if (l->n == 0 || id < l->ids[0] || id > l->ids[l->n - 1]) return -1;
    const uint32_t mask = ((uint32_t)1 << l->bits) - 1;
    for (uint32_t h = nextok__slot_of((uint32_t)id, l->bits);; h = (h + 1) & mask) {
        int32_t k = l->slot[h];
        if (k < 0 || l->ids[k] == id) return k;
    }
}

static void idlist_index(struct idlist *l)
{
    const uint32_t mask = ((uint32_t)1 << l->bits) - 1;
    memset(l->slot, 0xff, ((size_t)1 << l->bits) * sizeof *l->slot);
    for (size_t k = 0; k < l->n; k++) {
        uint32_t h = nextok__slot_of((uint32_t)l->ids[k], l->bits);
        while (l->slot[h] >= 0) h = (h + 1) & mask;
        l->slot[h] = (int32_t)k;
    }
}

/* Take ownership of ids[0..n) (allocated with mem, valid); sort, dedupe and
 * index them. */
static nextok_status idlist_build(const struct nextok__mem *mem, struct idlist *l, int32_t *ids,
                                  size_t n, struct nextok_error *err)
{
    nextok__sort(ids, n, sizeof *ids, cmp_i32);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || ids[i] != ids[u - 1]) ids[u++] = ids[i];
    l->ids = ids;
    l->n = u;
    l->bits = nextok__table_bits(u);
    l->slot = nextok__alloc_array(mem, (size_t)1 << l->bits, sizeof *l->slot);
    if (!l->slot)
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory indexing %zu ids", u);
    idlist_index(l);
    return NEXTOK_OK;
}

static void idlist_free(const struct nextok__mem *mem, struct idlist *l)
{
    if (!l) return;
    nextok__free(mem, l->ids);
    nextok__free(mem, l->bias);
    nextok__free(mem, l->slot);
    nextok__free(mem, l);
}

static struct idlist *idlist_clone(const struct nextok__mem *mem, const struct idlist *l)
{
    struct idlist *c = nextok__calloc(mem, 1, sizeof *c);
    if (!c) return NULL;
    *c = *l;
    c->ids = nextok__memdup(mem, l->ids, l->n * sizeof *l->ids);
    c->bias = l->bias ? nextok__memdup(mem, l->bias, l->n * sizeof *l->bias) : NULL;
    c->slot = nextok__memdup(mem, l->slot, ((size_t)1 << l->bits) * sizeof *l->slot);
    if (!c->ids || (l->bias && !c->bias) || !c->slot) {
        idlist_free(mem, c);
        return NULL;
    }
    return c;
}

/* True if every listed id sits at its own index (the ids are ascending). */
static bool idlist_identity(const struct idlist *l, const struct nextok_token_data_array *cur)
{
    if (l->n == 0 || (size_t)l->ids[l->n - 1] >= cur->size) return l->n == 0;
    for (size_t k = 0; k < l->n; k++)
        if (cur->data[l->ids[k]].id != l->ids[k]) return false;
    return true;
}

/* ---- shared slots ---------------------------------------------------------- */

static nextok_status list_accept(struct nextok_sampler *s, int32_t token)
{
    const struct idlist *l = s->ctx;
    return nextok__proc_check_token(s, l->n_vocab, token);
}

static nextok_status list_set_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n)
{
    const struct idlist *l = s->ctx;
    return nextok__proc_check_prompt(s, l->n_vocab, ids, n);
}

static nextok_status list_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    struct idlist *c = idlist_clone(&s->mem, s->ctx);
    if (!c) return NEXTOK_ERR_NOMEM;
    return nextok__builtin_new(out, &s->mem, s->iface, (enum nextok__kind)s->kind, s->ops, c, NULL);
}

static void list_free(struct nextok_sampler *s) { idlist_free(&s->mem, s->ctx); }

/* Common constructor tail: copy, sort and index ids; wrap in a sampler. */
static nextok_status list_new(struct nextok_sampler **out, const struct nextok__mem *mem,
                              const struct nextok_sampler_i *iface, enum nextok__kind kind,
                              const struct nextok__stage_ops *ops, struct idlist *l, int32_t *ids,
                              size_t n, struct nextok_error *err)
{
    nextok_status rc = idlist_build(mem, l, ids, n, err);
    if (rc != NEXTOK_OK) {
        idlist_free(mem, l);
        return rc;
    }
    return nextok__builtin_new(out, mem, iface, kind, ops, l, err);
}

/* Validate ids[0..n) and return a copy allocated with mem in *copy. */
static nextok_status copy_ids(const struct nextok__mem *mem, int32_t n_vocab, const int32_t *ids,
                              size_t n, const char *what, int32_t **copy, struct nextok_error *err)
{
    NEXTOK_FORWARD(nextok__check_vocab(n_vocab, err));
    NEXTOK_RETURN_IF(!ids && n > 0, err, NEXTOK_ERR_INVALID_ARG, "%s: NULL with n = %zu", what, n);
    for (size_t i = 0; i < n; i++)
        NEXTOK_RETURN_IF(ids[i] < 0 || ids[i] >= n_vocab, err, NEXTOK_ERR_TOKEN_RANGE,
                         "%s[%zu]: %d outside [0, %d)", what, i, (int)ids[i], (int)n_vocab);
    NEXTOK_RETURN_IF(n >= NEXTOK__TABLE_MAX, err, NEXTOK_ERR_NOMEM, "%s: %zu ids is too many", what, n);
    *copy = nextok__alloc_array(mem, n ? n : 1, sizeof **copy);
    NEXTOK_RETURN_IF(!*copy, err, NEXTOK_ERR_NOMEM, "out of memory copying %zu ids", n);
    if (n) memcpy(*copy, ids, n * sizeof **copy);
    return NEXTOK_OK;
}

/* ---- logit bias -------------------------------------------------------------- */

static const char *bias_name(const struct nextok_sampler *s)
{
    (void)s;
    return "logit_bias";
}

/* Full row: bias the listed ids in place, then squeeze out the removed ones. */
static bool bias_fast(const struct idlist *l, struct nextok_token_data_array *cur)
{
    size_t first_rm = SIZE_MAX;
    bool changed = false;
    for (size_t k = 0; k < l->n; k++) {
        struct nextok_token_data *d = &cur->data[l->ids[k]];
        if (isinf(l->bias[k])) {
            d->id = NEXTOK__REMOVED;
            if (first_rm == SIZE_MAX) first_rm = (size_t)l->ids[k];
        } else if (l->bias[k] != 0.0f) {
            d->logit = nextok__sat(d->logit + l->bias[k]);
            changed = true;
        }
    }
    if (first_rm != SIZE_MAX) nextok__compact_marked(cur, first_rm);
    return changed;
}

static bool bias_scan(const struct idlist *l, struct nextok_token_data_array *cur)
{
    size_t w = 0;
    bool changed = false;
    for (size_t i = 0; i < cur->size; i++) {
        struct nextok_token_data d = cur->data[i];
        int32_t k = idlist_find(l, d.id);
        if (k >= 0 && isinf(l->bias[k])) continue;
        if (k >= 0 && l->bias[k] != 0.0f) {
            d.logit = nextok__sat(d.logit + l->bias[k]);
            changed = true;
        }
        cur->data[w++] = d;
    }
    cur->size = w;
    return changed;
}

static nextok_status bias_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                uint64_t step)
{
    (void)step;
    const struct idlist *l = s->ctx;
    if (l->n == 0) return NEXTOK_OK;
    bool changed = idlist_identity(l, cur) ? bias_fast(l, cur) : bias_scan(l, cur);
    if (changed) cur->sorted = false;
    cur->selected = -1;
    return NEXTOK_OK;
}

const struct nextok_sampler_i nextok__iface_logit_bias = {
    bias_name, list_accept, bias_apply, NULL, list_clone, list_free, list_set_prompt,
};

static nextok_status check_bias(int32_t n_vocab, const struct nextok_logit_bias *bias, size_t n,
                                struct nextok_error *err)
{
    NEXTOK_FORWARD(nextok__check_vocab(n_vocab, err));
    NEXTOK_RETURN_IF(!bias && n > 0, err, NEXTOK_ERR_INVALID_ARG, "bias: NULL with n = %zu", n);
    for (size_t i = 0; i < n; i++) {
        NEXTOK_RETURN_IF(bias[i].token < 0 || bias[i].token >= n_vocab, err, NEXTOK_ERR_TOKEN_RANGE,
                         "bias[%zu].token: %d outside [0, %d)", i, (int)bias[i].token,
                         (int)n_vocab);
        NEXTOK_RETURN_IF(isnan(bias[i].bias) || bias[i].bias == INFINITY, err,
                         NEXTOK_ERR_INVALID_ARG, "bias[%zu].bias: must be finite or -inf, got %g",
                         i, (double)bias[i].bias);
    }
    return NEXTOK_OK;
}

/*
 * Sum the biases per unique id in list order, in double so that two large
 * finite biases cannot overflow into a removal; the sum is then clamped to
 * ±FLT_MAX. Any -inf entry removes the token.
 */
static nextok_status bias_sum(const struct nextok__mem *mem, struct idlist *l,
                              const struct nextok_logit_bias *bias, size_t n,
                              struct nextok_error *err)
{
    double *acc = nextok__calloc(mem, l->n ? l->n : 1, sizeof *acc);
    l->bias = nextok__alloc_array(mem, l->n ? l->n : 1, sizeof *l->bias);
    if (!acc || !l->bias) {
        nextok__free(mem, acc);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory for %zu biases", n);
    }
    for (size_t i = 0; i < n; i++) acc[idlist_find(l, bias[i].token)] += (double)bias[i].bias;
    for (size_t k = 0; k < l->n; k++) {
        double a = acc[k]; /* finite or -inf: no +inf entry exists, so no NaN either */
        l->bias[k] = a == -INFINITY ? -INFINITY : (float)fmax(fmin(a, FLT_MAX), -FLT_MAX);
    }
    nextok__free(mem, acc);
    return NEXTOK_OK;
}

nextok_status nextok__init_logit_bias(struct nextok_sampler **out, const struct nextok__mem *mem,
                                      int32_t n_vocab, const struct nextok_logit_bias *bias,
                                      size_t n, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(check_bias(n_vocab, bias, n, err));
    NEXTOK_RETURN_IF(n >= NEXTOK__TABLE_MAX, err, NEXTOK_ERR_NOMEM, "bias: %zu entries is too many", n);
    struct idlist *l = nextok__calloc(mem, 1, sizeof *l);
    int32_t *ids = nextok__alloc_array(mem, n ? n : 1, sizeof *ids);
    if (!l || !ids) {
        nextok__free(mem, l);
        nextok__free(mem, ids);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory for %zu biases", n);
    }
    l->n_vocab = n_vocab;
    for (size_t i = 0; i < n; i++) ids[i] = bias[i].token;
    nextok_status rc = idlist_build(mem, l, ids, n, err);
    if (rc == NEXTOK_OK) rc = bias_sum(mem, l, bias, n, err);
    if (rc != NEXTOK_OK) {
        idlist_free(mem, l);
        return rc;
    }
    return nextok__builtin_new(out, mem, &nextok__iface_logit_bias, NEXTOK__K_LOGIT_BIAS, &ops_bias,
                               l, err);
}

nextok_status nextok_sampler_init_logit_bias(struct nextok_sampler **out, int32_t n_vocab,
                                             const struct nextok_logit_bias *bias, size_t n,
                                             struct nextok_error *err)
{
    return nextok__init_logit_bias(out, &nextok__mem_libc, n_vocab, bias, n, err);
}

size_t nextok__bias_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap)
{
    if (!s || s->iface != &nextok__iface_logit_bias) return 0;
    const struct idlist *l = s->ctx;
    size_t m = 0;
    for (size_t k = 0; k < l->n; k++) {
        if (l->bias[k] == 0.0f) continue; /* a zero bias changes nothing */
        if (m < cap) ids[m] = l->ids[k];
        m++;
    }
    return m;
}

/* ---- allowed (whitelist) ----------------------------------------------------- */

static const char *allowed_name(const struct nextok_sampler *s)
{
    (void)s;
    return "allowed";
}

/* Full row: the survivors are exactly data[ids[j]], already in index order. */
static void allowed_fast(const struct idlist *l, struct nextok_token_data_array *cur)
{
    /* ids[j] >= j (ascending, unique, >= 0): the read is never behind the write */
    for (size_t j = 0; j < l->n; j++) cur->data[j] = cur->data[l->ids[j]];
    cur->size = l->n;
}

static void allowed_scan(const struct idlist *l, struct nextok_token_data_array *cur)
{
    size_t w = 0;
    for (size_t i = 0; i < cur->size; i++)
        if (idlist_find(l, cur->data[i].id) >= 0) cur->data[w++] = cur->data[i];
    cur->size = w;
}

static nextok_status allowed_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                   uint64_t step)
{
    (void)step;
    const struct idlist *l = s->ctx;
    if (idlist_identity(l, cur))
        allowed_fast(l, cur);
    else
        allowed_scan(l, cur);
    cur->selected = -1;
    return NEXTOK_OK;
}

const struct nextok_sampler_i nextok__iface_allowed = {
    allowed_name, list_accept, allowed_apply, NULL, list_clone, list_free, list_set_prompt,
};

nextok_status nextok__init_allowed(struct nextok_sampler **out, const struct nextok__mem *mem,
                                   int32_t n_vocab, const int32_t *ids, size_t n,
                                   struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(nextok__check_vocab(n_vocab, err));
    NEXTOK_RETURN_IF(n == 0, err, NEXTOK_ERR_INVALID_ARG,
                     "ids: the allowed list is empty (it would remove every token)");
    int32_t *copy = NULL;
    NEXTOK_FORWARD(copy_ids(mem, n_vocab, ids, n, "ids", &copy, err));
    struct idlist *l = nextok__calloc(mem, 1, sizeof *l);
    if (!l) {
        nextok__free(mem, copy);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory creating allowed");
    }
    l->n_vocab = n_vocab;
    return list_new(out, mem, &nextok__iface_allowed, NEXTOK__K_ALLOWED, &ops_allowed, l, copy, n,
                    err);
}

nextok_status nextok_sampler_init_allowed(struct nextok_sampler **out, int32_t n_vocab,
                                          const int32_t *ids, size_t n, struct nextok_error *err)
{
    return nextok__init_allowed(out, &nextok__mem_libc, n_vocab, ids, n, err);
}

const int32_t *nextok__allowed_ids(const struct nextok_sampler *s, size_t *n)
{
    if (!s || s->iface != &nextok__iface_allowed) {
        if (n) *n = 0;
        return NULL;
    }
    const struct idlist *l = s->ctx;
    if (n) *n = l->n;
    return l->ids;
}

/* ---- banned -------------------------------------------------------------------- */

static const char *banned_name(const struct nextok_sampler *s)
{
    (void)s;
    return "banned";
}

static void banned_fast(const struct idlist *l, struct nextok_token_data_array *cur)
{
    for (size_t k = 0; k < l->n; k++) cur->data[l->ids[k]].id = NEXTOK__REMOVED;
    nextok__compact_marked(cur, (size_t)l->ids[0]);
}

static void banned_scan(const struct idlist *l, struct nextok_token_data_array *cur)
{
    size_t w = 0;
    for (size_t i = 0; i < cur->size; i++)
        if (idlist_find(l, cur->data[i].id) < 0) cur->data[w++] = cur->data[i];
    cur->size = w;
}

static nextok_status banned_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                  uint64_t step)
{
    (void)step;
    const struct idlist *l = s->ctx;
    if (l->n == 0) return NEXTOK_OK;
    if (idlist_identity(l, cur))
        banned_fast(l, cur);
    else
        banned_scan(l, cur);
    cur->selected = -1;
    return NEXTOK_OK;
}

const struct nextok_sampler_i nextok__iface_banned = {
    banned_name, list_accept, banned_apply, NULL, list_clone, list_free, list_set_prompt,
};

nextok_status nextok__init_banned(struct nextok_sampler **out, const struct nextok__mem *mem,
                                  int32_t n_vocab, const int32_t *ids, size_t n,
                                  struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    int32_t *copy = NULL;
    NEXTOK_FORWARD(copy_ids(mem, n_vocab, ids, n, "ids", &copy, err));
    struct idlist *l = nextok__calloc(mem, 1, sizeof *l);
    if (!l) {
        nextok__free(mem, copy);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory creating banned");
    }
    l->n_vocab = n_vocab;
    return list_new(out, mem, &nextok__iface_banned, NEXTOK__K_BANNED, &ops_banned, l, copy, n,
                    err);
}

nextok_status nextok_sampler_init_banned(struct nextok_sampler **out, int32_t n_vocab,
                                         const int32_t *ids, size_t n, struct nextok_error *err)
{
    return nextok__init_banned(out, &nextok__mem_libc, n_vocab, ids, n, err);
}

size_t nextok__banned_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap)
{
    if (!s || s->iface != &nextok__iface_banned) return 0;
    const struct idlist *l = s->ctx;
    size_t m = l->n < cap ? l->n : cap;
    if (m) memcpy(ids, l->ids, m * sizeof *ids);
    return l->n;
}
