/*
 * `format` and `pattern` through the regex front end (regex.c).
 *
 * format is an assertion here (the specification lets a validator choose):
 * each known format is a full-match regular expression that accepts only
 * strings its RFC allows, sometimes fewer (documented per format below and in
 * docs/grammars.md); an unknown format is refused, or in lenient mode
 * ignored. pattern has ECMA-262 search semantics (unanchored).
 */
#include "schema_internal.h"

#include <stdio.h>

#define OCTET "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
#define IPV4  OCTET "(\\." OCTET "){3}"
#define H16   "[0-9A-Fa-f]{1,4}"
#define LS32  "(" H16 ":" H16 "|" IPV4 ")"
/* RFC 3986's IPv6address (RFC 4291 section 2.2), no zone. */
#define IPV6                                                                                      \
    "((" H16 ":){6}" LS32 "|::(" H16 ":){5}" LS32 "|(" H16 ")?::(" H16 ":){4}" LS32 "|((" H16     \
    ":)?" H16 ")?::(" H16 ":){3}" LS32 "|((" H16 ":){0,2}" H16 ")?::(" H16 ":){2}" LS32 "|((" H16 \
    ":){0,3}" H16 ")?::" H16 ":" LS32 "|((" H16 ":){0,4}" H16 ")?::" LS32 "|((" H16 ":){0,5}" H16 \
    ")?::" H16 "|((" H16 ":){0,6}" H16 ")?::)"
/* RFC 3339 full-date, with the days of each month and leap years; not year
 * 0000 (which the RFC allows but Python's datetime, say, refuses). */
#define YEAR "([0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
#define DATE                                                                                   \
    "(" YEAR "-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|" YEAR "-(0[13-9]|1[0-2])-(29|30)|" YEAR \
    "-(0[13578]|1[02])-31|([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|"        \
    "[13579][26])00)-02-29)"
/* RFC 3339 full-time without leap seconds, upper-case Z. */
#define TIME \
    "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?(Z|[+\\-]([01][0-9]|2[0-3]):[0-5][0-9])"
/* RFC 3339 appendix A. */
#define DUR_TIME "T([0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S)"
#define DUR_DATE "([0-9]+D|[0-9]+M([0-9]+D)?|[0-9]+Y([0-9]+M([0-9]+D)?)?)"
/* RFC 1123 labels (no "--" in positions 3 and 4, as RFC 5891 reserves it):
 * up to 4 labels of up to 62 characters or 12 of up to 20, at most 251 in
 * all (RFC 1123 allows 253). */
#define LD  "[A-Za-z0-9]"
#define LDH "[A-Za-z0-9\\-]"
#define LABEL(rest) \
    LD "(" LD "|" LDH LD "|" LDH LDH LD "|" LDH "(" LD LDH "|-" LD ")" LDH rest LD ")?"
#define HOSTNAME                                                                       \
    "(" LABEL("{0,57}") "(\\." LABEL("{0,57}") "){0,3}|" LABEL("{0,15}") "(\\." LABEL( \
        "{0,15}") "){0,11})"
/* RFC 5321 Mailbox: a dot-atom local part (no quoted strings), a domain of
 * RFC 1123 labels or an address literal. */
#define ATEXT     "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-]"
#define SUBDOMAIN LD "(" LDH "*" LD ")?"
#define EMAIL                                                                                      \
    ATEXT "+(\\." ATEXT "+)*@(" SUBDOMAIN "(\\." SUBDOMAIN ")*|\\[" IPV4 "\\]|\\[IPv6:" IPV6 "\\]" \
          ")"
/* RFC 3986 URI (IPvFuture hosts left out). */
#define PCT     "%[0-9A-Fa-f]{2}"
#define PCHAR   "([A-Za-z0-9._~!$&'()*+,;=:@\\-]|" PCT ")"
#define REGNAME "([A-Za-z0-9._~!$&'()*+,;=\\-]|" PCT ")*"
#define URI                                                                                    \
    "[A-Za-z][A-Za-z0-9+.\\-]*:(//(([A-Za-z0-9._~!$&'()*+,;=:\\-]|" PCT ")*@)?(\\[" IPV6       \
    "\\]|" REGNAME ")(:[0-9]*)?(/" PCHAR "*)*|/(" PCHAR "+(/" PCHAR "*)*)?|" PCHAR "+(/" PCHAR \
    "*)*)?(\\?(" PCHAR "|[/?])*)?(#(" PCHAR "|[/?])*)?"

static const struct {
    const char *name, *re;
    uint64_t lo, hi; /* lengths of the strings it accepts */
} formats[] = {
    {"date", DATE, 10, 10},
    {"time", TIME, 9, UINT64_MAX},
    {"date-time", DATE "T" TIME, 20, UINT64_MAX},
    {"duration", "P(" DUR_DATE "(" DUR_TIME ")?|" DUR_TIME "|[0-9]+W)", 3, UINT64_MAX},
    {"email", EMAIL, 3, UINT64_MAX},
    {"uuid", "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", 36, 36},
    {"ipv4", IPV4, 7, 15},
    {"ipv6", IPV6, 2, 45},
    {"hostname", HOSTNAME, 1, 251},
    {"uri", URI, 2, UINT64_MAX},
};

/* Run regex.c, counting what it writes against the budget. */
static nextok_status regex(struct nextok__sch *c, const char *name, const char *re, size_t n,
                           unsigned flags, struct nextok_error *e)
{
    size_t before = c->out.len;
    nextok_status st = nextok__regex_to_gbnf(&c->out, name, re, n, flags, e);
    c->d->n_bytes += c->out.len - before;
    if (st == NEXTOK_OK && c->d->n_bytes > NEXTOK__SCH_MAX_GBNF)
        return nextok__err(e, NEXTOK_ERR_LIMIT, "the grammar would be larger than %u MiB",
                           NEXTOK__SCH_MAX_GBNF >> 20);
    return st;
}

bool nextok__sch_format(struct nextok__sch *c, struct nextok__buf *b, uint32_t node, uint32_t fmt,
                        uint64_t *lo, uint64_t *hi, bool *ignored)
{
    struct nextok__sch_doc *d = c->d;
    size_t n = 0;
    const char *s = nextok__json_str(&d->json, fmt, &n);
    *ignored = false;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        if (strlen(formats[i].name) != n || memcmp(formats[i].name, s, n) != 0) continue;
        char name[16];
        snprintf(name, sizeof name, "fmt%zu", i);
        if (!(c->formats & (1u << i))) {
            struct nextok_error e = {NEXTOK_OK, ""};
            nextok_status st =
                regex(c, name, formats[i].re, strlen(formats[i].re), NEXTOK__RE_JSON_STRING, &e);
            if (st == NEXTOK_ERR_NOMEM) return nextok__sch_nomem(d);
            if (st != NEXTOK_OK)
                return nextok__sch_fail(d, st == NEXTOK_ERR_LIMIT ? st : NEXTOK_ERR_INTERNAL,
                                        "schema: format '%s': %s", formats[i].name, e.msg);
            c->formats |= 1u << i;
        }
        nextok__sch_fmt(c, b, " %s", name);
        *lo = formats[i].lo;
        *hi = formats[i].hi;
        return true;
    }
    char why[160], quoted[64];
    nextok__quote(quoted, sizeof quoted, s, n);
    snprintf(why, sizeof why, "cannot be enforced: unknown format \"%s\"", quoted);
    *ignored = nextok__sch_refuse(d, node, "format", why);
    return false;
}

bool nextok__sch_pattern(struct nextok__sch *c, struct nextok__buf *b, uint32_t node, uint32_t re,
                         bool *ignored)
{
    struct nextok__sch_doc *d = c->d;
    size_t n = 0;
    const char *s = nextok__json_str(&d->json, re, &n);
    nextok__sch_name name;
    nextok__sch_newname(c, name);
    struct nextok_error e = {NEXTOK_OK, ""};
    *ignored = false;
    nextok_status st = regex(c, name, s, n, NEXTOK__RE_SEARCH | NEXTOK__RE_JSON_STRING, &e);
    if (st == NEXTOK_OK) {
        nextok__sch_fmt(c, b, " %s", name);
        return true;
    }
    if (st == NEXTOK_ERR_NOMEM) return nextok__sch_nomem(d);
    if (st == NEXTOK_ERR_FORMAT) return nextok__sch_bad(d, node, "pattern", e.msg);
    if (st == NEXTOK_ERR_UNSUPPORTED) {
        char why[NEXTOK_ERRMSG_MAX];
        snprintf(why, sizeof why, "cannot be enforced (%.200s)", e.msg);
        *ignored = nextok__sch_refuse(d, node, "pattern", why);
        return false;
    }
    return nextok__sch_fail(d, st, "schema: pattern: %s", e.msg);
}
