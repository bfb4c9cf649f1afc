/*
 * The plan: for each stage of a chain, what the fused path does with it.
 * One table maps a stage kind to its role and its route; it is the only
 * place that decides what fuses. The plan is built once per chain
 * configuration (stages added or removed invalidate it) from the kinds and
 * their parameters; the driver then walks it row after row without deciding
 * anything again. What a route finds only on the row (top-k's k above the
 * set's size, a min-p that keeps everything) it reports itself
 * (NEXTOK__FZ_NEXT).
 *
 * Adding a fusable stage: a row in `routes` and a file with its route
 * function (CONTRIBUTING.md, "Adding a sampler").
 */
#include "internal.h"

enum role {
    ROLE_NONE,      /* no fused route: the prefix stops before it          */
    ROLE_PROCESSOR, /* touches a few ids (or is the whitelist)             */
    ROLE_TEMP,      /* a monotone transform                                */
    ROLE_FILTER,    /* reduces the set; the stages after it run as usual   */
    ROLE_SELECTOR,  /* picks the token                                     */
};

struct route {
    enum role role;
    bool masked; /* applies a token bitmask in its passes (the _masked kernels) */
    /* false: the stage is disabled by its parameters (ctx: its params) */
    bool (*active)(const void *params);
    nextok__fz_route_fn run;
};

static bool top_k_on(const void *p) { return ((const struct nextok__p_top_k *)p)->k > 0; }
static bool top_p_on(const void *p) { return ((const struct nextok__p_top_p *)p)->p < 1.0f; }
static bool min_p_on(const void *p) { return ((const struct nextok__p_min_p *)p)->p > 0.0f; }
static bool typical_on(const void *p) { return ((const struct nextok__p_typical *)p)->p < 1.0f; }
static bool sigma_on(const void *p) { return ((const struct nextok__p_sigma *)p)->n > 0.0f; }
/* temp_ext with range <= 0 is plain temperature (both start with t) */
static bool temp_ext_plain(const void *p) { return ((const struct nextok__p_temp_ext *)p)->range <= 0.0f; }

static const struct route routes[NEXTOK__K_COUNT] = {
    [NEXTOK__K_LOGIT_BIAS] = {ROLE_PROCESSOR, false, NULL, NULL},
    [NEXTOK__K_ALLOWED] = {ROLE_PROCESSOR, false, NULL, NULL},
    [NEXTOK__K_BANNED] = {ROLE_PROCESSOR, false, NULL, NULL},
    [NEXTOK__K_PENALTIES] = {ROLE_PROCESSOR, false, NULL, NULL},
    [NEXTOK__K_DRY] = {ROLE_PROCESSOR, false, NULL, NULL},
    [NEXTOK__K_NO_REPEAT_NGRAM] = {ROLE_PROCESSOR, false, NULL, NULL},
    [NEXTOK__K_MIN_TOKENS] = {ROLE_PROCESSOR, false, NULL, NULL},
    [NEXTOK__K_TOKEN_BITMASK] = {ROLE_PROCESSOR, false, NULL, NULL},
    [NEXTOK__K_TEMP] = {ROLE_TEMP, true, NULL, nextok__fz_route_temp0},
    [NEXTOK__K_TEMP_EXT] = {ROLE_TEMP, true, temp_ext_plain, nextok__fz_route_temp0},
    [NEXTOK__K_TOP_K] = {ROLE_FILTER, true, top_k_on, nextok__fz_route_top_k},
    [NEXTOK__K_TOP_P] = {ROLE_FILTER, false, top_p_on, nextok__fz_route_top_p},
    [NEXTOK__K_MIN_P] = {ROLE_FILTER, true, min_p_on, nextok__fz_route_min_p},
    [NEXTOK__K_TYPICAL] = {ROLE_FILTER, false, typical_on, nextok__fz_route_typical},
    [NEXTOK__K_TOP_N_SIGMA] = {ROLE_FILTER, false, sigma_on, nextok__fz_route_sigma},
    [NEXTOK__K_GREEDY] = {ROLE_SELECTOR, true, NULL, nextok__fz_route_greedy},
    [NEXTOK__K_DIST] = {ROLE_SELECTOR, true, NULL, nextok__fz_route_dist},
    [NEXTOK__K_MIROSTAT_V2] = {ROLE_SELECTOR, true, NULL, nextok__fz_route_miro2},
};

static const struct route *route_of(const struct nextok_sampler *s)
{
    return &routes[nextok__sampler_kind(s)];
}

/* A plain temperature t > 0 (monotone in the row alone), or 0. */
static float plain_temp(const struct nextok_sampler *s)
{
    const enum nextok__kind k = nextok__sampler_kind(s);
    if (k != NEXTOK__K_TEMP && !(k == NEXTOK__K_TEMP_EXT && temp_ext_plain(s->ctx))) return 0.0f;
    const float t = *(const float *)s->ctx;
    return t > 0.0f ? t : 0.0f;
}

/* Whether a dist ends the chain after stage i with at most a plain
 * temperature between them (*t, 1 for none), which is allowed only when no
 * temperature came before stage i (have_t): the values' one map. *seed: the
 * dist's. */
static bool draw_after(struct nextok_sampler *const *st, size_t n, size_t i, bool have_t,
                       uint64_t *seed, float *t)
{
    size_t j = i + 1;
    *t = 1.0f;
    if (j + 1 < n && !have_t && plain_temp(st[j]) > 0.0f) *t = plain_temp(st[j++]);
    if (j + 1 != n || nextok__sampler_kind(st[j]) != NEXTOK__K_DIST) return false;
    *seed = ((const struct nextok__p_seed *)st[j]->ctx)->seed;
    return true;
}

/* The step for stage i (have_t: a temperature was folded in before it;
 * stopped: the prefix ended before it). */
static struct nextok__fz_step plan_step(struct nextok_sampler *const *st, size_t n, size_t i,
                                        bool *have_t, bool *stopped)
{
    struct nextok__fz_step s = {NEXTOK__FZ_STOP, NULL, false, 1.0f, false, 0, 1.0f};
    const struct route *rt = route_of(st[i]);
    const void *p = st[i]->ctx;
    if (*stopped || rt->role == ROLE_NONE || rt->role == ROLE_PROCESSOR) return s;
    if (rt->active && !rt->active(p)) {
        /* a disabled filter changes nothing; a dynamic temperature with a
         * range is not monotone in the row alone: the prefix ends there */
        s.action = rt->role == ROLE_TEMP ? NEXTOK__FZ_STOP : NEXTOK__FZ_SKIP;
        *stopped = s.action == NEXTOK__FZ_STOP;
        return s;
    }
    if (rt->role == ROLE_TEMP && *(const float *)p > 0.0f) {
        if (*have_t) { /* two temperatures: sat(sat(x / a) / b) is not one map */
            *stopped = true;
            return s;
        }
        *have_t = true;
        s.action = NEXTOK__FZ_TEMP;
        s.t = *(const float *)p;
        return s;
    }
    /* a route: temperature <= 0 (top-1), a filter, a selector */
    if (nextok__sampler_kind(st[i]) == NEXTOK__K_DIST && i + 1 != n) { /* a stage after the selector needs the array */
        *stopped = true;
        return s;
    }
    s.action = NEXTOK__FZ_ROUTE;
    s.route = rt->run;
    s.masked = rt->masked;
    s.draw_after = draw_after(st, n, i, *have_t, &s.draw_seed, &s.draw_t);
    /* the walk goes past a route only when it changed nothing on the row
     * (NEXTOK__FZ_NEXT), so the stages after it are planned on */
    return s;
}

/* The plan of the chain's stages: processors first, then steps up to the
 * first route. A plan is fusable when a route may be reached, or when a
 * whitelist or a token bitmask says which ids are candidates (the driver
 * gathers them). */
bool nextok__fz_plan_build(const struct nextok__mem *mem, struct nextok__fz_plan *pl,
                           struct nextok_sampler *const *st, size_t n)
{
    if (!nextok__fz_grow(mem, (void **)&pl->steps, &pl->cap, n ? n : 1, sizeof *pl->steps))
        return false;
    size_t i = 0;
    pl->has_allowed = pl->has_mask = false;
    for (; i < n && route_of(st[i])->role == ROLE_PROCESSOR; i++) {
        pl->steps[i] = (struct nextok__fz_step){NEXTOK__FZ_PROCESS, NULL, false, 1.0f, false, 0, 1.0f};
        pl->has_allowed |= nextok__sampler_kind(st[i]) == NEXTOK__K_ALLOWED;
        if (nextok__sampler_kind(st[i]) == NEXTOK__K_TOKEN_BITMASK) pl->mask_stage = i, pl->has_mask = true;
    }
    pl->n_proc = i;
    bool have_t = false, stopped = false, route = false;
    for (; i < n; i++) {
        pl->steps[i] = plan_step(st, n, i, &have_t, &stopped);
        route |= pl->steps[i].action == NEXTOK__FZ_ROUTE;
    }
    pl->fusable = pl->has_allowed || pl->has_mask || route;
    /* a token bitmask rides in the passes when the first route applies it
     * (top-k, top-1, min-p, Mirostat v2, dist); otherwise its allowed ids
     * are gathered (and the walk gathers them too when it comes to a route
     * that does not, after the first changed nothing) */
    pl->mask_kernels = false;
    for (size_t j = pl->n_proc; j < n && pl->has_mask && !pl->has_allowed; j++)
        if (pl->steps[j].action == NEXTOK__FZ_ROUTE) {
            pl->mask_kernels = pl->steps[j].masked;
            break;
        }
    pl->valid = true;
    return true;
}
