/*
 * Profiles: build a whole chain from nextok_sampling_params in the order of
 * vLLM, HF transformers or llama.cpp (docs/semantics.md, "Profiles").
 */
#include "chain_internal.h"

#include <stdio.h>

/* ---- defaults ------------------------------------------------------------ */

static void common_defaults(struct nextok_sampling_params *p)
{
    memset(p, 0, sizeof *p);
    p->seed = NEXTOK_DEFAULT_SEED;
    p->selector = NEXTOK_SELECTOR_CATEGORICAL;
    p->temperature = 1.0f;
    p->dynatemp_exponent = 1.0f;
    p->top_p = 1.0f;
    p->typical_p = 1.0f;
    p->top_n_sigma = -1.0f;
    p->xtc_threshold = 0.1f;
    p->min_keep = 1;
    p->repeat_penalty = 1.0f;
    p->penalty_last_n = 64;
    p->dry_base = 1.75f;
    p->dry_allowed_length = 2;
    p->dry_penalty_last_n = -1;
    p->mirostat_tau = 5.0f;
    p->mirostat_eta = 0.1f;
    p->nan_policy = NEXTOK_NAN_ERROR;
}

struct nextok_sampling_params nextok_sampling_default_params(enum nextok_profile profile)
{
    struct nextok_sampling_params p;
    common_defaults(&p);
    p.profile = profile;
    switch (profile) {
    case NEXTOK_PROFILE_HF: /* transformers GenerationConfig defaults */
        p.top_k = 50;
        p.top_k_ties = NEXTOK_TIES_KEEP;
        break;
    case NEXTOK_PROFILE_LLAMA: /* llama.cpp common_params_sampling defaults */
        p.temperature = 0.8f;
        p.top_k = 40;
        p.top_p = 0.95f;
        p.min_p = 0.05f;
        p.top_k_ties = NEXTOK_TIES_EXACT;
        break;
    case NEXTOK_PROFILE_VLLM: /* vLLM SamplingParams defaults */
    default:
        p.top_k_ties = NEXTOK_TIES_KEEP;
        break;
    }
    return p;
}

const char *nextok_profile_name(enum nextok_profile p)
{
    switch (p) {
    case NEXTOK_PROFILE_VLLM: return "vllm";
    case NEXTOK_PROFILE_HF: return "hf";
    case NEXTOK_PROFILE_LLAMA: return "llama";
    }
    return "?";
}

nextok_status nextok_profile_from_name(const char *name, enum nextok_profile *out)
{
    if (!name || !out) return NEXTOK_ERR_INVALID_ARG;
    static const enum nextok_profile all[] = {NEXTOK_PROFILE_VLLM, NEXTOK_PROFILE_HF,
                                              NEXTOK_PROFILE_LLAMA};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(name, nextok_profile_name(all[i])) == 0) {
            *out = all[i];
            return NEXTOK_OK;
        }
    }
    return NEXTOK_ERR_INVALID_ARG;
}

/* ---- validation of the fields the builder itself interprets ------------- */

static nextok_status bad(struct nextok_error *err, const char *field, const char *range, double v)
{
    return nextok__err(err, NEXTOK_ERR_INVALID_ARG, "%s: must be %s, got %g", field, range, v);
}

static nextok_status validate_floats(const struct nextok_sampling_params *p, struct nextok_error *err)
{
    bool strict_temp = p->profile != NEXTOK_PROFILE_LLAMA;
    if (!isfinite(p->temperature) || (strict_temp && p->temperature < 0))
        return bad(err, "temperature", strict_temp ? ">= 0 and finite" : "finite", p->temperature);
    if (!(p->top_p > 0 && p->top_p <= 1)) return bad(err, "top_p", "in (0, 1]", p->top_p);
    if (!(p->min_p >= 0 && p->min_p <= 1)) return bad(err, "min_p", "in [0, 1]", p->min_p);
    if (!(p->typical_p > 0 && p->typical_p <= 1))
        return bad(err, "typical_p", "in (0, 1]", p->typical_p);
    if (!isfinite(p->top_n_sigma)) return bad(err, "top_n_sigma", "finite", p->top_n_sigma);
    if (!(p->xtc_probability >= 0 && p->xtc_probability <= 1))
        return bad(err, "xtc_probability", "in [0, 1]", p->xtc_probability);
    if (!(p->xtc_threshold >= 0 && p->xtc_threshold <= 1))
        return bad(err, "xtc_threshold", "in [0, 1]", p->xtc_threshold);
    if (!(p->epsilon_cutoff >= 0 && p->epsilon_cutoff < 1))
        return bad(err, "epsilon_cutoff", "in [0, 1)", p->epsilon_cutoff);
    if (!(p->eta_cutoff >= 0 && p->eta_cutoff < 1))
        return bad(err, "eta_cutoff", "in [0, 1)", p->eta_cutoff);
    if (!(p->dynatemp_range >= 0 && isfinite(p->dynatemp_range)))
        return bad(err, "dynatemp_range", ">= 0 and finite", p->dynatemp_range);
    if (!(p->dynatemp_exponent >= 0 && isfinite(p->dynatemp_exponent)))
        return bad(err, "dynatemp_exponent", ">= 0 and finite", p->dynatemp_exponent);
    if (!(p->repeat_penalty > 0 && isfinite(p->repeat_penalty)))
        return bad(err, "repeat_penalty", "> 0 and finite", p->repeat_penalty);
    if (!isfinite(p->frequency_penalty))
        return bad(err, "frequency_penalty", "finite", p->frequency_penalty);
    if (!isfinite(p->presence_penalty))
        return bad(err, "presence_penalty", "finite", p->presence_penalty);
    if (!(p->dry_multiplier >= 0 && isfinite(p->dry_multiplier)))
        return bad(err, "dry_multiplier", ">= 0 and finite", p->dry_multiplier);
    if (!(p->mirostat_tau >= 0 && isfinite(p->mirostat_tau)))
        return bad(err, "mirostat_tau", ">= 0 and finite", p->mirostat_tau);
    if (!(p->mirostat_eta >= 0 && isfinite(p->mirostat_eta)))
        return bad(err, "mirostat_eta", ">= 0 and finite", p->mirostat_eta);
    return NEXTOK_OK;
}

static nextok_status validate(const struct nextok_sampling_params *p, struct nextok_error *err)
{
    NEXTOK_FORWARD(nextok__check_vocab(p->n_vocab, err));
    NEXTOK_RETURN_IF((unsigned)p->profile > NEXTOK_PROFILE_LLAMA, err, NEXTOK_ERR_INVALID_ARG,
                     "profile: unknown value %d", (int)p->profile);
    NEXTOK_RETURN_IF((unsigned)p->selector > NEXTOK_SELECTOR_GREEDY, err, NEXTOK_ERR_INVALID_ARG,
                     "selector: unknown value %d", (int)p->selector);
    NEXTOK_RETURN_IF((unsigned)p->top_k_ties > NEXTOK_TIES_EXACT, err, NEXTOK_ERR_INVALID_ARG,
                     "top_k_ties: unknown value %d", (int)p->top_k_ties);
    NEXTOK_RETURN_IF(p->mirostat < 0 || p->mirostat > 2, err, NEXTOK_ERR_INVALID_ARG,
                     "mirostat: must be 0, 1 or 2, got %d", (int)p->mirostat);
    NEXTOK_RETURN_IF(p->penalty_last_n < 0, err, NEXTOK_ERR_INVALID_ARG,
                     "penalty_last_n: must be >= 0 (pass the context size for 'all'), got %d",
                     (int)p->penalty_last_n);
    NEXTOK_RETURN_IF((p->n_logit_bias && !p->logit_bias) || (p->n_allowed && !p->allowed_ids) ||
                         (p->n_banned && !p->banned_ids) || (p->n_eog && !p->eog_ids),
                     err, NEXTOK_ERR_INVALID_ARG, "logit_bias/allowed_ids/banned_ids/eog_ids: "
                     "NULL array with a non-zero count");
    return validate_floats(p, err);
}

/* ---- building ------------------------------------------------------------ */

/* Add a freshly constructed sampler (or forward its construction error, prefixed). */
/* `ps` is read only here, after the constructor call in the argument list ran. */
static nextok_status add(struct nextok_chain *c, nextok_status rc, struct nextok_sampler **ps,
                         const char *field, struct nextok_error *err)
{
    struct nextok_sampler *s = *ps;
    if (rc != NEXTOK_OK) {
        if (err) {
            char inner[NEXTOK_ERRMSG_MAX];
            memcpy(inner, err->msg, sizeof inner);
            inner[sizeof inner - 1] = '\0';
            return nextok__err(err, rc, "%s: %s", field, inner);
        }
        return rc;
    }
    rc = nextok_chain_add(c, s);
    if (rc != NEXTOK_OK) {
        nextok_sampler_free(s);
        return nextok__err(err, rc, "out of memory building the chain");
    }
    return NEXTOK_OK;
}

static nextok_status add_masks(struct nextok_chain *c, const struct nextok_sampling_params *p,
                               struct nextok_error *err)
{
    struct nextok_sampler *s = NULL;
    if (p->token_bitmask)
        NEXTOK_FORWARD(add(c, nextok__init_token_bitmask(&s, &c->mem, p->n_vocab, err), &s,
                           "token_bitmask", err));
    if (p->n_logit_bias)
        NEXTOK_FORWARD(add(
            c,
            nextok__init_logit_bias(&s, &c->mem, p->n_vocab, p->logit_bias, p->n_logit_bias, err),
            &s, "logit_bias", err));
    if (p->allowed_ids)
        NEXTOK_FORWARD(
            add(c, nextok__init_allowed(&s, &c->mem, p->n_vocab, p->allowed_ids, p->n_allowed, err),
                &s, "allowed_ids", err));
    if (p->n_banned)
        NEXTOK_FORWARD(
            add(c, nextok__init_banned(&s, &c->mem, p->n_vocab, p->banned_ids, p->n_banned, err),
                &s, "banned_ids", err));
    if (p->min_tokens > 0 && p->n_eog)
        NEXTOK_FORWARD(add(c,
                           nextok__init_min_tokens(&s, &c->mem, p->n_vocab, p->min_tokens,
                                                   p->eog_ids, p->n_eog, err),
                           &s, "min_tokens", err));
    if (p->no_repeat_ngram > 0)
        NEXTOK_FORWARD(
            add(c, nextok__init_no_repeat_ngram(&s, &c->mem, p->n_vocab, p->no_repeat_ngram, err),
                &s, "no_repeat_ngram", err));
    return NEXTOK_OK;
}

static bool penalties_active(const struct nextok_sampling_params *p)
{
    return p->repeat_penalty != 1.0f || p->frequency_penalty != 0.0f || p->presence_penalty != 0.0f;
}

static nextok_status add_penalties(struct nextok_chain *c, const struct nextok_sampling_params *p,
                                   struct nextok_error *err)
{
    if (!penalties_active(p)) return NEXTOK_OK;
    struct nextok_penalty_params pp = nextok_penalty_default_params(p->n_vocab);
    pp.scope = p->profile == NEXTOK_PROFILE_LLAMA ? NEXTOK_SCOPE_WINDOW
             : p->profile == NEXTOK_PROFILE_HF    ? NEXTOK_SCOPE_HISTORY
                                                  : NEXTOK_SCOPE_PROMPT_OUTPUT;
    pp.last_n = p->penalty_last_n;
    pp.repeat = p->repeat_penalty;
    pp.frequency = p->frequency_penalty;
    pp.presence = p->presence_penalty;
    struct nextok_sampler *s = NULL;
    return add(c, nextok__init_penalties(&s, &c->mem, &pp, err), &s, "penalties", err);
}

/* Name the nextok_sampling_params field in a DRY constructor message
 * ("base: ..." -> "dry_base: ...", "last_n: ..." -> "dry_penalty_last_n: ..."). */
static nextok_status dry_error(nextok_status rc, const struct nextok_error *inner,
                               struct nextok_error *err)
{
    static const struct {
        const char *ctor, *field;
    } names[] = {{"multiplier", "dry_multiplier"}, {"base", "dry_base"},
                 {"allowed_length", "dry_allowed_length"}, {"last_n", "dry_penalty_last_n"},
                 {"breaker_ids", "dry_breaker_ids"}, {"breaker_off", "dry_breaker_off"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t len = strlen(names[i].ctor);
        if (strncmp(inner->msg, names[i].ctor, len) == 0 &&
            (inner->msg[len] == ':' || inner->msg[len] == '['))
            return nextok__err(err, rc, "%s%s", names[i].field, inner->msg + len);
    }
    return nextok__err(err, rc, "dry: %s", inner->msg);
}

static nextok_status add_dry(struct nextok_chain *c, const struct nextok_sampling_params *p,
                             struct nextok_error *err)
{
    if (p->dry_multiplier == 0.0f) return NEXTOK_OK;
    struct nextok_dry_params dp = nextok_dry_default_params(p->n_vocab);
    dp.multiplier = p->dry_multiplier;
    dp.base = p->dry_base;
    dp.allowed_length = p->dry_allowed_length;
    dp.last_n = p->dry_penalty_last_n;
    dp.breaker_ids = p->dry_breaker_ids;
    dp.breaker_off = p->dry_breaker_off;
    dp.n_breakers = p->dry_n_breakers;
    struct nextok_sampler *s = NULL;
    struct nextok_error inner = {NEXTOK_OK, ""};
    nextok_status rc = nextok__init_dry(&s, &c->mem, &dp, &inner);
    if (rc != NEXTOK_OK) return dry_error(rc, &inner, err);
    return add(c, rc, &s, "dry", err);
}

static nextok_status add_temperature(struct nextok_chain *c, const struct nextok_sampling_params *p,
                                     struct nextok_error *err)
{
    struct nextok_sampler *s = NULL;
    if (p->profile == NEXTOK_PROFILE_LLAMA && p->dynatemp_range > 0)
        return add(c,
                   nextok__init_temp_ext(&s, &c->mem, p->temperature, p->dynatemp_range,
                                         p->dynatemp_exponent, err),
                   &s, "dynatemp", err);
    if (p->temperature == 1.0f) return NEXTOK_OK;
    return add(c, nextok__init_temp(&s, &c->mem, p->temperature, err), &s, "temperature", err);
}

/* Stage names (llama.cpp's --samplers names plus aliases). */
enum stage {
    ST_PENALTIES, ST_DRY, ST_TOP_N_SIGMA, ST_TOP_K, ST_TYPICAL, ST_TOP_P, ST_MIN_P, ST_XTC,
    ST_TEMPERATURE, ST_EPSILON, ST_ETA, ST_COUNT
};

static const struct {
    const char *name;
    enum stage stage;
} stage_names[] = {
    {"penalties", ST_PENALTIES}, {"dry", ST_DRY}, {"top_n_sigma", ST_TOP_N_SIGMA},
    {"top-n-sigma", ST_TOP_N_SIGMA}, {"top_k", ST_TOP_K}, {"top-k", ST_TOP_K},
    {"typ_p", ST_TYPICAL}, {"typ-p", ST_TYPICAL}, {"typical", ST_TYPICAL}, {"typical_p", ST_TYPICAL},
    {"top_p", ST_TOP_P}, {"top-p", ST_TOP_P}, {"nucleus", ST_TOP_P}, {"min_p", ST_MIN_P},
    {"min-p", ST_MIN_P}, {"xtc", ST_XTC}, {"temperature", ST_TEMPERATURE}, {"temp", ST_TEMPERATURE},
    {"epsilon", ST_EPSILON}, {"eta", ST_ETA},
};

static nextok_status add_stage(struct nextok_chain *c, enum stage st,
                               const struct nextok_sampling_params *p, struct nextok_error *err)
{
    struct nextok_sampler *s = NULL;
    switch (st) {
    case ST_PENALTIES: return add_penalties(c, p, err);
    case ST_DRY: return add_dry(c, p, err);
    case ST_TEMPERATURE: return add_temperature(c, p, err);
    case ST_TOP_N_SIGMA:
        if (p->top_n_sigma <= 0) return NEXTOK_OK;
        return add(c, nextok__init_top_n_sigma(&s, &c->mem, p->top_n_sigma, err), &s, "top_n_sigma",
                   err);
    case ST_TOP_K:
        if (p->top_k <= 0) return NEXTOK_OK;
        return add(c, nextok__init_top_k(&s, &c->mem, p->top_k, p->top_k_ties, err), &s, "top_k",
                   err);
    case ST_TYPICAL:
        if (p->typical_p >= 1) return NEXTOK_OK;
        return add(c, nextok__init_typical(&s, &c->mem, p->typical_p, p->min_keep, err), &s,
                   "typical_p", err);
    case ST_TOP_P:
        if (p->top_p >= 1) return NEXTOK_OK;
        return add(c, nextok__init_top_p(&s, &c->mem, p->top_p, p->top_k_ties, p->min_keep, err),
                   &s, "top_p", err);
    case ST_MIN_P:
        if (p->min_p <= 0) return NEXTOK_OK;
        return add(c, nextok__init_min_p(&s, &c->mem, p->min_p, p->min_keep, err), &s, "min_p",
                   err);
    case ST_XTC:
        if (p->xtc_probability <= 0) return NEXTOK_OK;
        return add(c,
                   nextok__init_xtc(&s, &c->mem, p->xtc_probability, p->xtc_threshold, p->min_keep,
                                    p->seed, err),
                   &s, "xtc", err);
    case ST_EPSILON:
        if (p->epsilon_cutoff <= 0) return NEXTOK_OK;
        return add(c, nextok__init_epsilon(&s, &c->mem, p->epsilon_cutoff, p->min_keep, err), &s,
                   "epsilon_cutoff", err);
    case ST_ETA:
        if (p->eta_cutoff <= 0) return NEXTOK_OK;
        return add(c, nextok__init_eta(&s, &c->mem, p->eta_cutoff, p->min_keep, err), &s,
                   "eta_cutoff", err);
    case ST_COUNT: break;
    }
    return NEXTOK_OK;
}

/* Parse "a;b;c" into stages. */
static nextok_status parse_order(const char *spec, enum stage *order, size_t *n, struct nextok_error *err)
{
    *n = 0;
    const char *q = spec;
    while (*q) {
        size_t len = strcspn(q, ";,");
        bool found = false;
        for (size_t i = 0; len && i < sizeof stage_names / sizeof stage_names[0]; i++) {
            if (strlen(stage_names[i].name) == len && strncmp(q, stage_names[i].name, len) == 0) {
                NEXTOK_RETURN_IF(*n >= 32, err, NEXTOK_ERR_INVALID_ARG, "samplers: too many entries");
                order[(*n)++] = stage_names[i].stage;
                found = true;
                break;
            }
        }
        NEXTOK_RETURN_IF(len && !found, err, NEXTOK_ERR_INVALID_ARG,
                         "samplers: unknown sampler '%.*s'", (int)(len < 64 ? len : 64), q);
        q += len;
        if (*q) q++;
    }
    return NEXTOK_OK;
}

static size_t default_order(const struct nextok_sampling_params *p, enum stage *o)
{
    size_t n = 0;
    switch (p->profile) {
    case NEXTOK_PROFILE_LLAMA: {
        static const enum stage llama[] = {ST_PENALTIES, ST_DRY, ST_TOP_N_SIGMA, ST_TOP_K, ST_TYPICAL,
                                           ST_TOP_P, ST_MIN_P, ST_XTC, ST_TEMPERATURE};
        for (; n < sizeof llama / sizeof llama[0]; n++) o[n] = llama[n];
        break;
    }
    case NEXTOK_PROFILE_HF: {
        static const enum stage hf[] = {ST_PENALTIES, ST_DRY, ST_TEMPERATURE, ST_TOP_K, ST_TOP_P,
                                        ST_MIN_P, ST_TYPICAL, ST_EPSILON, ST_ETA, ST_TOP_N_SIGMA, ST_XTC};
        for (; n < sizeof hf / sizeof hf[0]; n++) o[n] = hf[n];
        break;
    }
    default: {
        static const enum stage vllm[] = {ST_PENALTIES, ST_DRY, ST_TEMPERATURE, ST_MIN_P, ST_TOP_K,
                                          ST_TOP_P, ST_TYPICAL, ST_EPSILON, ST_ETA, ST_TOP_N_SIGMA, ST_XTC};
        for (; n < sizeof vllm / sizeof vllm[0]; n++) o[n] = vllm[n];
        break;
    }
    }
    return n;
}

static nextok_status add_selector(struct nextok_chain *c, const struct nextok_sampling_params *p,
                                  struct nextok_error *err)
{
    struct nextok_sampler *s = NULL;
    if (p->mirostat == 1)
        return add(c,
                   nextok__init_mirostat(&s, &c->mem, p->n_vocab, p->seed, p->mirostat_tau,
                                         p->mirostat_eta, 100, err),
                   &s, "mirostat", err);
    if (p->mirostat == 2)
        return add(
            c,
            nextok__init_mirostat_v2(&s, &c->mem, p->seed, p->mirostat_tau, p->mirostat_eta, err),
            &s, "mirostat", err);
    if (p->temperature <= 0 || p->selector == NEXTOK_SELECTOR_GREEDY)
        return add(c, nextok__init_greedy(&s, &c->mem, err), &s, "selector", err);
    if (p->selector == NEXTOK_SELECTOR_GUMBEL)
        return add(c, nextok__init_gumbel(&s, &c->mem, p->seed, err), &s, "selector", err);
    return add(c, nextok__init_dist(&s, &c->mem, p->seed, err), &s, "selector", err);
}

/* Stages of the chain proper (between the masks and the selector). */
static nextok_status add_stages(struct nextok_chain *c, const struct nextok_sampling_params *p,
                                struct nextok_error *err)
{
    if (p->mirostat && p->profile == NEXTOK_PROFILE_LLAMA) /* llama.cpp: temp -> mirostat */
        return add_temperature(c, p, err);
    enum stage order[32];
    size_t n;
    if (p->samplers) {
        NEXTOK_FORWARD(parse_order(p->samplers, order, &n, err));
    } else {
        n = default_order(p, order);
    }
    /* vllm/hf apply penalties as processors even when a custom order omits them */
    bool has_pen = false, has_dry = false;
    for (size_t i = 0; i < n; i++) {
        has_pen |= order[i] == ST_PENALTIES;
        has_dry |= order[i] == ST_DRY;
    }
    if (p->profile != NEXTOK_PROFILE_LLAMA) {
        if (!has_pen) NEXTOK_FORWARD(add_penalties(c, p, err));
        if (!has_dry) NEXTOK_FORWARD(add_dry(c, p, err));
    }
    for (size_t i = 0; i < n; i++) NEXTOK_FORWARD(add_stage(c, order[i], p, err));
    return NEXTOK_OK;
}

nextok_status nextok_chain_init_sampling(struct nextok_chain **out,
                                         const struct nextok_sampling_params *params,
                                         struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !params, err, NEXTOK_ERR_INVALID_ARG, "out and params must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(validate(params, err));
    struct nextok_sampling_params p = *params;
    p.seed = nextok__resolve_seed(p.seed); /* one seed for every random stage */

    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = p.n_vocab;
    cp.nan_policy = p.nan_policy;
    cp.allocator = p.allocator; /* the chain's; its samplers are built with c->mem */
    struct nextok_chain *c;
    NEXTOK_FORWARD(nextok_chain_init(&c, &cp, err));
    nextok_status rc = add_masks(c, &p, err);
    if (rc == NEXTOK_OK) rc = add_stages(c, &p, err);
    if (rc == NEXTOK_OK) rc = add_selector(c, &p, err);
    if (rc != NEXTOK_OK) {
        nextok_chain_free(c);
        return rc;
    }
    *out = c;
    return NEXTOK_OK;
}
