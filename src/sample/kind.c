/* Identify built-in samplers by their interface table. */
#include "builtin.h"

enum nextok__kind nextok__sampler_kind(const struct nextok_sampler *s)
{
    static const struct {
        const struct nextok_sampler_i *iface;
        enum nextok__kind kind;
    } table[] = {
        {&nextok__iface_logit_bias, NEXTOK__K_LOGIT_BIAS},
        {&nextok__iface_allowed, NEXTOK__K_ALLOWED},
        {&nextok__iface_banned, NEXTOK__K_BANNED},
        {&nextok__iface_penalties, NEXTOK__K_PENALTIES},
        {&nextok__iface_dry, NEXTOK__K_DRY},
        {&nextok__iface_no_repeat_ngram, NEXTOK__K_NO_REPEAT_NGRAM},
        {&nextok__iface_min_tokens, NEXTOK__K_MIN_TOKENS},
        {&nextok__iface_temp, NEXTOK__K_TEMP},
        {&nextok__iface_temp_ext, NEXTOK__K_TEMP_EXT},
        {&nextok__iface_top_k, NEXTOK__K_TOP_K},
        {&nextok__iface_top_p, NEXTOK__K_TOP_P},
        {&nextok__iface_min_p, NEXTOK__K_MIN_P},
        {&nextok__iface_typical, NEXTOK__K_TYPICAL},
        {&nextok__iface_top_n_sigma, NEXTOK__K_TOP_N_SIGMA},
        {&nextok__iface_xtc, NEXTOK__K_XTC},
        {&nextok__iface_epsilon, NEXTOK__K_EPSILON},
        {&nextok__iface_eta, NEXTOK__K_ETA},
        {&nextok__iface_greedy, NEXTOK__K_GREEDY},
        {&nextok__iface_dist, NEXTOK__K_DIST},
        {&nextok__iface_gumbel, NEXTOK__K_GUMBEL},
        {&nextok__iface_mirostat, NEXTOK__K_MIROSTAT},
        {&nextok__iface_mirostat_v2, NEXTOK__K_MIROSTAT_V2},
    };
    if (!s) return NEXTOK__K_USER;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (s->iface == table[i].iface) return table[i].kind;
    return NEXTOK__K_USER;
}

bool nextok__processor_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap, size_t *n)
{
    switch (nextok__sampler_kind(s)) {
    case NEXTOK__K_LOGIT_BIAS: *n = nextok__bias_touched(s, ids, cap); return true;
    case NEXTOK__K_BANNED: *n = nextok__banned_touched(s, ids, cap); return true;
    case NEXTOK__K_MIN_TOKENS: *n = nextok__min_tokens_touched(s, ids, cap); return true;
    case NEXTOK__K_PENALTIES: *n = nextok__penalties_touched(s, ids, cap); return true;
    case NEXTOK__K_DRY: *n = nextok__dry_touched(s, ids, cap); return true;
    case NEXTOK__K_NO_REPEAT_NGRAM: *n = nextok__ngram_touched(s, ids, cap); return true;
    default: *n = 0; return false;
    }
}
