/*
 * DRY, "Don't Repeat Yourself" (p-e-w's sampler from text-generation-webui, as
 * llama.cpp's llama_sampler_dry has it; docs/semantics.md): penalise the token
 * that would extend a repetition of the history's suffix.
 *
 * With h the last last_n tokens of prompt||output (length n) and lim the number
 * of tokens after the last complete sequence breaker in h, a candidate t gets
 * L(t) = the longest k <= lim such that some earlier h[i+1] = t is preceded by
 * a copy of the last k tokens; if L(t) >= allowed_length,
 *     logit -= multiplier * base^(L(t) - allowed_length).
 *
 * The match lengths for every i at once are a Z-function over the reversed
 * window (Gusfield 1997, Z-algorithm; llama.cpp uses the same idea), capped at
 * lim, so apply costs O(n) plus O(penalised tokens) on a full row. The scratch
 * arrays grow with the history in accept/set_prompt, never in apply.
 */
#include "proc_common.h"

#include <float.h>

static nextok_status dry_reserve(struct nextok_sampler *s, int32_t token);
static nextok_status dry_reserve_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n);

static const struct nextok__stage_ops dry_ops = {
    .touched = nextok__dry_touched,
    .reserve = dry_reserve,
    .reserve_prompt = dry_reserve_prompt,
};

/* One penalised token: its longest match and its slot in the scratch index. */
struct dry_pen {
    int32_t  tok;
    uint32_t len;
    uint32_t slot;
};

struct dry_ctx {
    int32_t n_vocab;
    float   multiplier, base;
    int32_t allowed_length, last_n;
    float   max_exp;     /* exponent cap: base^max_exp about FLT_MAX at most  */
    int32_t *brk_ids;    /* breakers, concatenated                            */
    size_t  *brk_off;    /* n_brk + 1 offsets into brk_ids, starting at 0     */
    size_t   n_brk;
    uint64_t brk_filter; /* bit (last id & 63) of every breaker               */
    /* prompt||output; a bounded window keeps at most 2 * last_n tokens */
    int32_t *hist;
    size_t   len, cap, n_prompt;
    /* apply scratch for windows of up to win_cap tokens (not state) */
    uint32_t       *z;
    struct dry_pen *pen;
    int32_t        *pslot; /* 2^pbits entries: index into pen, -1 empty */
    unsigned        pbits;
    size_t          win_cap, n_pen;
};

static bool dry_active(const struct dry_ctx *c) { return c->multiplier != 0.0f && c->last_n != 0; }

/* The window h: the last last_n tokens (all for last_n = -1). */
static size_t window_len(const struct dry_ctx *c, size_t len)
{
    return c->last_n > 0 && len > (size_t)c->last_n ? (size_t)c->last_n : len;
}

/* ---- sequence breakers ------------------------------------------------------- */

static bool breaker_ends_at(const struct dry_ctx *c, const int32_t *h, size_t p)
{
    for (size_t b = 0; b < c->n_brk; b++) {
        const size_t blen = c->brk_off[b + 1] - c->brk_off[b];
        const int32_t *ids = c->brk_ids + c->brk_off[b];
        if (blen <= p + 1 && ids[blen - 1] == h[p] &&
            memcmp(h + p + 1 - blen, ids, blen * sizeof *ids) == 0)
            return true;
    }
    return false;
}

/* Tokens after the end of the last complete breaker in h[0..n) (n if none). */
static size_t dry_lim(const struct dry_ctx *c, const int32_t *h, size_t n)
{
    if (c->n_brk == 0) return n;
    for (size_t p = n; p-- > 0;) {
        if (!((c->brk_filter >> ((uint32_t)h[p] & 63)) & 1)) continue;
        if (breaker_ends_at(c, h, p)) return n - 1 - p;
    }
    return n;
}

/* ---- match lengths ------------------------------------------------------------ */

/*
 * z[j] = min(lim, longest common prefix of r and r[j..]) for r[j] = h[n-1-j],
 * i.e. the length of the common suffix of h[0..n-1-j] and h. Capping every
 * value at lim keeps the Z-box argument intact: a capped z[j-l] below r-j is
 * exact, one at or above it sends j to the extension loop. O(n).
 */
static void dry_z(const int32_t *h, size_t n, size_t lim, uint32_t *z)
{
    size_t l = 0, r = 0;
    for (size_t j = 1; j < n; j++) {
        size_t k = 0;
        if (j < r) k = r - j < z[j - l] ? r - j : z[j - l];
        while (k < lim && j + k < n && h[n - 1 - j - k] == h[n - 1 - k]) k++;
        z[j] = (uint32_t)k;
        if (j + k > r) {
            l = j;
            r = j + k;
        }
    }
}

static void pen_clear(struct dry_ctx *c)
{
    for (size_t k = 0; k < c->n_pen; k++) c->pslot[c->pen[k].slot] = -1;
    c->n_pen = 0;
}

static int32_t pen_find(const struct dry_ctx *c, int32_t tok)
{
    const uint32_t mask = ((uint32_t)1 << c->pbits) - 1;
    for (uint32_t h = nextok__slot_of((uint32_t)tok, c->pbits);; h = (h + 1) & mask) {
        int32_t k = c->pslot[h];
        if (k < 0 || c->pen[k].tok == tok) return k;
    }
}

/* Keep the longest match per token. */
static void pen_record(struct dry_ctx *c, int32_t tok, uint32_t len)
{
    const uint32_t mask = ((uint32_t)1 << c->pbits) - 1;
    uint32_t h = nextok__slot_of((uint32_t)tok, c->pbits);
    for (; c->pslot[h] >= 0; h = (h + 1) & mask) {
        struct dry_pen *e = &c->pen[c->pslot[h]];
        if (e->tok != tok) continue;
        if (len > e->len) e->len = len;
        return;
    }
    c->pslot[h] = (int32_t)c->n_pen;
    c->pen[c->n_pen++] = (struct dry_pen){tok, len, h};
}

/* Fill c->pen with every token that gets a penalty now (L(t) >= allowed_length). */
static void dry_compute(struct dry_ctx *c)
{
    pen_clear(c);
    const size_t n = window_len(c, c->len);
    const size_t allowed = (size_t)c->allowed_length;
    if (n < 2) return;
    const int32_t *h = c->hist + (c->len - n);
    const size_t lim = dry_lim(c, h, n);
    if (lim < allowed) return;
    dry_z(h, n, lim, c->z);
    for (size_t j = 1; j < n; j++) /* match ends at i = n-1-j; t = h[i+1] = h[n-j] */
        if (c->z[j] >= allowed) pen_record(c, h[n - j], c->z[j]);
}

/* ---- apply ------------------------------------------------------------------ */

/* multiplier * base^(L - allowed_length) with llama.cpp's exponent cap. */
static void dry_penalize(const struct dry_ctx *c, const struct dry_pen *e,
                         struct nextok_token_data *d)
{
    float x = (float)(e->len - (uint32_t)c->allowed_length);
    if (x > c->max_exp) x = c->max_exp;
    d->logit = nextok__sat(d->logit - c->multiplier * powf(c->base, x));
}

static bool pen_identity(const struct dry_ctx *c, const struct nextok_token_data_array *cur)
{
    for (size_t k = 0; k < c->n_pen; k++)
        if (!nextok__at_identity(cur, c->pen[k].tok)) return false;
    return true;
}

static nextok_status dry_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                               uint64_t step)
{
    (void)step;
    struct dry_ctx *c = s->ctx;
    if (!dry_active(c)) return NEXTOK_OK;
    dry_compute(c);
    if (c->n_pen == 0) return NEXTOK_OK;
    if (pen_identity(c, cur)) {
        for (size_t k = 0; k < c->n_pen; k++) dry_penalize(c, &c->pen[k], &cur->data[c->pen[k].tok]);
    } else {
        for (size_t i = 0; i < cur->size; i++) {
            int32_t k = pen_find(c, cur->data[i].id);
            if (k >= 0) dry_penalize(c, &c->pen[k], &cur->data[i]);
        }
    }
    cur->sorted = false;
    cur->selected = -1;
    return NEXTOK_OK;
}

/* ---- memory --------------------------------------------------------------------- */

/* Scratch for windows of w tokens; unchanged on failure. */
static nextok_status scratch_reserve(const struct nextok__mem *mem, struct dry_ctx *c, size_t w)
{
    if (w <= c->win_cap) return NEXTOK_OK;
    size_t cap = c->win_cap < 32 ? 64 : 2 * c->win_cap;
    if (c->last_n > 0 && cap > (size_t)c->last_n) cap = (size_t)c->last_n;
    if (cap < w) cap = w;
    if (cap > NEXTOK__TABLE_MAX) return NEXTOK_ERR_NOMEM;
    unsigned bits = nextok__table_bits(cap);
    uint32_t *z = nextok__alloc_array(mem, cap, sizeof *z);
    struct dry_pen *pen = nextok__alloc_array(mem, cap, sizeof *pen);
    int32_t *pslot = nextok__alloc_array(mem, (size_t)1 << bits, sizeof *pslot);
    if (!z || !pen || !pslot) {
        nextok__free(mem, z);
        nextok__free(mem, pen);
        nextok__free(mem, pslot);
        return NEXTOK_ERR_NOMEM;
    }
    memset(pslot, 0xff, ((size_t)1 << bits) * sizeof *pslot);
    nextok__free(mem, c->z);
    nextok__free(mem, c->pen);
    nextok__free(mem, c->pslot);
    c->z = z;
    c->pen = pen;
    c->pslot = pslot;
    c->pbits = bits;
    c->win_cap = cap;
    c->n_pen = 0;
    return NEXTOK_OK;
}

/* Keep only the last k history tokens (the rest slid out of the window). */
static void hist_trim(struct dry_ctx *c, size_t k)
{
    const size_t dropped = c->len - k;
    memmove(c->hist, c->hist + dropped, k * sizeof *c->hist);
    c->n_prompt = c->n_prompt > dropped ? c->n_prompt - dropped : 0;
    c->len = k;
}

/* A full bounded window (capacity 2 * last_n) makes room by dropping the
 * tokens that slid out, amortised O(1), instead of growing. */
static bool hist_trims(const struct dry_ctx *c)
{
    return c->last_n > 0 && c->cap >= 2 * (size_t)c->last_n;
}

/* Room for one more token: grow geometrically, unless a full window will
 * trim instead (hist_push). Unchanged on failure. */
static nextok_status hist_reserve(const struct nextok__mem *mem, struct dry_ctx *c)
{
    if (c->len < c->cap || hist_trims(c)) return NEXTOK_OK;
    const size_t keep = c->last_n > 0 ? (size_t)c->last_n : 0;
    size_t cap = c->cap < 32 ? 64 : 2 * c->cap;
    if (keep && cap > 2 * keep) cap = 2 * keep;
    if (cap > UINT32_MAX) return NEXTOK_ERR_NOMEM;
    int32_t *h = nextok__realloc(mem, c->hist, cap * sizeof *h);
    if (!h) return NEXTOK_ERR_NOMEM;
    c->hist = h;
    c->cap = cap;
    return NEXTOK_OK;
}

/* Append token (room reserved by hist_reserve). */
static void hist_push(struct dry_ctx *c, int32_t token)
{
    if (c->len == c->cap) hist_trim(c, (size_t)c->last_n - 1);
    c->hist[c->len++] = token;
}

/* ---- state slots ---------------------------------------------------------------- */

static const char *dry_name(const struct nextok_sampler *s)
{
    (void)s;
    return "dry";
}

static nextok_status dry_reserve(struct nextok_sampler *s, int32_t token)
{
    struct dry_ctx *c = s->ctx;
    NEXTOK_FORWARD(nextok__proc_check_token(s, c->n_vocab, token));
    if (!dry_active(c)) return NEXTOK_OK;
    nextok_status rc = scratch_reserve(&s->mem, c, window_len(c, c->len + 1));
    if (rc == NEXTOK_OK) rc = hist_reserve(&s->mem, c);
    if (rc != NEXTOK_OK)
        return nextok_sampler_set_error(s, rc, "dry: out of memory recording token %d", (int)token);
    return NEXTOK_OK;
}

static nextok_status dry_accept(struct nextok_sampler *s, int32_t token)
{
    struct dry_ctx *c = s->ctx;
    NEXTOK_FORWARD(dry_reserve(s, token));
    if (dry_active(c)) hist_push(c, token);
    return NEXTOK_OK;
}

/* The new history: the last m of the prompt's n ids, then the k outputs
 * from *outs on (each cut to the window). */
static void rebuild_sizes(const struct dry_ctx *c, size_t n, size_t *m, size_t *k, size_t *outs)
{
    *outs = c->n_prompt;
    *k = c->len - c->n_prompt;
    *m = n;
    if (c->last_n > 0) {
        const size_t keep = (size_t)c->last_n;
        if (*k > keep) {
            *outs += *k - keep;
            *k = keep;
        }
        if (*m > keep - *k) *m = keep - *k;
    }
}

/* Room to rebuild the history for a prompt of n ids (scratch, history
 * capacity); unchanged meaning on failure. */
static nextok_status rebuild_reserve(const struct nextok__mem *mem, struct dry_ctx *c, size_t n)
{
    size_t m, k, outs;
    rebuild_sizes(c, n, &m, &k, &outs);
    const size_t total = m + k;
    if (total > UINT32_MAX) return NEXTOK_ERR_NOMEM;
    NEXTOK_FORWARD(scratch_reserve(mem, c, total));
    if (total <= c->cap) return NEXTOK_OK;
    int32_t *h = nextok__realloc(mem, c->hist, (total > 64 ? total : 64) * sizeof *h);
    if (!h) return NEXTOK_ERR_NOMEM;
    c->hist = h;
    c->cap = total > 64 ? total : 64;
    return NEXTOK_OK;
}

/* New history in place: the new prompt, then the outputs kept so far
 * (room reserved by rebuild_reserve). */
static void dry_rebuild(struct dry_ctx *c, const int32_t *ids, size_t n)
{
    size_t m, k, outs;
    rebuild_sizes(c, n, &m, &k, &outs);
    if (k) memmove(c->hist + m, c->hist + outs, k * sizeof *c->hist);
    if (m) memcpy(c->hist, ids + (n - m), m * sizeof *c->hist);
    c->len = m + k;
    c->n_prompt = m;
}

static nextok_status dry_reserve_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n)
{
    struct dry_ctx *c = s->ctx;
    NEXTOK_FORWARD(nextok__proc_check_prompt(s, c->n_vocab, ids, n));
    if (!dry_active(c) || rebuild_reserve(&s->mem, c, n) == NEXTOK_OK) return NEXTOK_OK;
    return nextok_sampler_set_error(s, NEXTOK_ERR_NOMEM,
                                    "dry: out of memory for a %zu-token prompt", n);
}

static nextok_status dry_set_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n)
{
    struct dry_ctx *c = s->ctx;
    NEXTOK_FORWARD(dry_reserve_prompt(s, ids, n));
    if (dry_active(c)) dry_rebuild(c, ids, n);
    return NEXTOK_OK;
}

static void dry_reset(struct nextok_sampler *s)
{
    struct dry_ctx *c = s->ctx;
    pen_clear(c);
    c->len = c->n_prompt = 0;
}

static void dry_free_ctx(const struct nextok__mem *mem, struct dry_ctx *c)
{
    if (!c) return;
    nextok__free(mem, c->brk_ids);
    nextok__free(mem, c->brk_off);
    nextok__free(mem, c->hist);
    nextok__free(mem, c->z);
    nextok__free(mem, c->pen);
    nextok__free(mem, c->pslot);
    nextok__free(mem, c);
}

static void dry_free(struct nextok_sampler *s) { dry_free_ctx(&s->mem, s->ctx); }

static nextok_status dry_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    const struct nextok__mem *mem = &s->mem;
    const struct dry_ctx *c = s->ctx;
    struct dry_ctx *d = nextok__calloc(mem, 1, sizeof *d);
    if (!d) return NEXTOK_ERR_NOMEM;
    *d = *c;
    d->z = NULL;
    d->pen = NULL;
    d->pslot = NULL;
    d->win_cap = d->n_pen = 0;
    d->brk_ids = nextok__memdup(mem, c->brk_ids, c->brk_off[c->n_brk] * sizeof *c->brk_ids);
    d->brk_off = nextok__memdup(mem, c->brk_off, (c->n_brk + 1) * sizeof *c->brk_off);
    d->hist = c->cap ? nextok__memdup(mem, c->hist, c->cap * sizeof *c->hist) : NULL;
    if (!d->brk_ids || !d->brk_off || (c->cap && !d->hist) ||
        scratch_reserve(mem, d, c->win_cap) != NEXTOK_OK) {
        dry_free_ctx(mem, d);
        return NEXTOK_ERR_NOMEM;
    }
    return nextok__builtin_new(out, mem, s->iface, (enum nextok__kind)s->kind, s->ops, d, NULL);
}

const struct nextok_sampler_i nextok__iface_dry = {
    dry_name, dry_accept, dry_apply, dry_reset, dry_clone, dry_free, dry_set_prompt,
};

/* ---- construction ---------------------------------------------------------------- */

struct nextok_dry_params nextok_dry_default_params(int32_t n_vocab)
{
    struct nextok_dry_params p;
    memset(&p, 0, sizeof p);
    p.n_vocab = n_vocab;
    p.multiplier = 0.0f; /* llama.cpp defaults: off */
    p.base = 1.75f;
    p.allowed_length = 2;
    p.last_n = -1;
    p.breaker_ids = NULL;
    p.breaker_off = NULL;
    p.n_breakers = 0;
    return p;
}

static nextok_status check_scalars(const struct nextok_dry_params *p, struct nextok_error *err)
{
    NEXTOK_FORWARD(nextok__check_vocab(p->n_vocab, err));
    NEXTOK_RETURN_IF(!(p->multiplier >= 0.0f && isfinite(p->multiplier)), err,
                     NEXTOK_ERR_INVALID_ARG, "multiplier: must be >= 0 and finite, got %g",
                     (double)p->multiplier);
    NEXTOK_RETURN_IF(!(p->base > 1.0f && isfinite(p->base)), err, NEXTOK_ERR_INVALID_ARG,
                     "base: must be > 1 and finite, got %g", (double)p->base);
    NEXTOK_RETURN_IF(p->allowed_length < 1, err, NEXTOK_ERR_INVALID_ARG,
                     "allowed_length: must be >= 1, got %d", (int)p->allowed_length);
    NEXTOK_RETURN_IF(p->last_n < -1, err, NEXTOK_ERR_INVALID_ARG,
                     "last_n: must be >= -1 (-1: whole history, 0: off), got %d", (int)p->last_n);
    return NEXTOK_OK;
}

static nextok_status check_breakers(const struct nextok_dry_params *p, struct nextok_error *err)
{
    if (p->n_breakers == 0) return NEXTOK_OK;
    const size_t *off = p->breaker_off;
    NEXTOK_RETURN_IF(!off, err, NEXTOK_ERR_INVALID_ARG, "breaker_off: NULL with n_breakers = %zu",
                     p->n_breakers);
    for (size_t b = 0; b < p->n_breakers; b++)
        NEXTOK_RETURN_IF(off[b + 1] <= off[b], err, NEXTOK_ERR_INVALID_ARG,
                         "breaker_off[%zu]: %zu after %zu (breaker %zu is empty or offsets decrease)",
                         b + 1, off[b + 1], off[b], b);
    NEXTOK_RETURN_IF(!p->breaker_ids, err, NEXTOK_ERR_INVALID_ARG,
                     "breaker_ids: NULL with %zu breaker tokens", off[p->n_breakers] - off[0]);
    for (size_t j = off[0]; j < off[p->n_breakers]; j++)
        NEXTOK_RETURN_IF(p->breaker_ids[j] < 0 || p->breaker_ids[j] >= p->n_vocab, err,
                         NEXTOK_ERR_TOKEN_RANGE, "breaker_ids[%zu]: %d outside [0, %d)", j,
                         (int)p->breaker_ids[j], (int)p->n_vocab);
    return NEXTOK_OK;
}

/* Copy the breakers with offsets rebased to 0; build the last-token filter. */
static nextok_status copy_breakers(const struct nextok__mem *mem, struct dry_ctx *c,
                                   const struct nextok_dry_params *p)
{
    const size_t n = p->n_breakers, base = n ? p->breaker_off[0] : 0;
    const size_t total = n ? p->breaker_off[n] - base : 0;
    c->brk_off = nextok__alloc_array(mem, n + 1, sizeof *c->brk_off);
    c->brk_ids = nextok__alloc_array(mem, total ? total : 1, sizeof *c->brk_ids);
    if (!c->brk_off || !c->brk_ids) return NEXTOK_ERR_NOMEM;
    c->n_brk = n;
    c->brk_off[0] = 0;
    for (size_t b = 0; b < n; b++) c->brk_off[b + 1] = p->breaker_off[b + 1] - base;
    if (total) memcpy(c->brk_ids, p->breaker_ids + base, total * sizeof *c->brk_ids);
    for (size_t b = 0; b < n; b++)
        c->brk_filter |= (uint64_t)1 << ((uint32_t)c->brk_ids[c->brk_off[b + 1] - 1] & 63);
    return NEXTOK_OK;
}

nextok_status nextok__init_dry(struct nextok_sampler **out, const struct nextok__mem *mem,
                               const struct nextok_dry_params *params, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!params, err, NEXTOK_ERR_INVALID_ARG, "params: must be non-NULL");
    NEXTOK_FORWARD(check_scalars(params, err));
    NEXTOK_FORWARD(check_breakers(params, err));
    struct dry_ctx *c = nextok__calloc(mem, 1, sizeof *c);
    if (!c || copy_breakers(mem, c, params) != NEXTOK_OK) {
        dry_free_ctx(mem, c);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory creating dry");
    }
    c->n_vocab = params->n_vocab;
    c->multiplier = params->multiplier;
    c->base = params->base;
    c->allowed_length = params->allowed_length;
    c->last_n = params->last_n;
    /* llama.cpp caps the exponent at ln(FLT_MAX) / ln(base); whole steps only here */
    c->max_exp = (float)floor(log((double)FLT_MAX) / log((double)params->base));
    return nextok__builtin_new(out, mem, &nextok__iface_dry, NEXTOK__K_DRY, &dry_ops, c, err);
}

nextok_status nextok_sampler_init_dry(struct nextok_sampler **out,
                                      const struct nextok_dry_params *params,
                                      struct nextok_error *err)
{
    return nextok__init_dry(out, &nextok__mem_libc, params, err);
}

size_t nextok__dry_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap)
{
    if (!s || s->iface != &nextok__iface_dry) return 0;
    struct dry_ctx *c = s->ctx; /* the scratch is not state: computing here is fine */
    if (!dry_active(c)) return 0;
    dry_compute(c);
    for (size_t k = 0; k < c->n_pen && k < cap; k++) ids[k] = c->pen[k].tok;
    return c->n_pen;
}
