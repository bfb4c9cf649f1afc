/*
 * The JSON Schema front end, shared by its files. Not installed, not API.
 *
 * The files are layered: each uses only files listed above it, never one
 * below (tools/check_deps.py allows no circle between files).
 *
 *   schema_base.c     failures, JSON pointers, keyword lookup, writing GBNF
 *                     text and rule names, shared rules, repetitions,
 *                     compiling GBNF written here
 *   schema_numbers.c  exact decimals
 *   schema_refs.c     the document: parents, number spellings, $id / $anchor
 *                     resources, $ref resolution
 *   schema_formats.c  `format` and `pattern` through regex.c
 *   schema_values.c   strings, enum / const values, checks of values against
 *                     a schema
 *   schema_views.c    keywords, views (conjunctions of schemas), $ref / allOf
 *   schema_ranges.c   integer ranges, bounded numbers with fractions
 *   schema_combine.c  anyOf, oneOf, if/then/else, dependent*: alternatives;
 *                     the scope of unevaluated*
 *   schema_arrays.c   arrays, container punctuation
 *   schema_keys.c     additional keys, patternProperties, propertyNames
 *   schema_objects.c  objects: names, the member state machine
 *   schema_merge.c    one view's keywords merged, one branch per type; the
 *                     number branch, multipleOf
 *   schema.c          entry point, the work list that writes views
 *
 * The schema becomes GBNF text (llama.cpp's dialect), compiled by
 * nextok__grammar_from_gbnf. A "view" is a conjunction of schema nodes (and a
 * few virtual constraints); each distinct view becomes one rule s<id>, written
 * once, so recursion through $ref is a recursive rule, never an inline copy.
 *
 * Writing is recursive (a value's schema holds objects, arrays, combinators
 * whose members are values again), but within one grammar that recursion
 * goes through the work list: a nested schema becomes the name of its view,
 * written later by schema.c. The one call back up is nextok__sch_check
 * (schema_values.c), which writes a grammar of its own: it calls
 * nextok__sch_build through the document's `build` pointer, set by schema.c.
 */
#ifndef NEXTOK_SCHEMA_INTERNAL_H
#define NEXTOK_SCHEMA_INTERNAL_H

#include "../common/json.h"
#include "grammar_internal.h"

#include <stdbool.h>
#include <stdint.h>

#define NEXTOK__SCH_NONE NEXTOK__JSON_NO_NODE

/* Instance types as a bit set. "number" is INT | FRAC. */
enum {
    NEXTOK__ST_NULL = 1,
    NEXTOK__ST_BOOL = 2,
    NEXTOK__ST_OBJ = 4,
    NEXTOK__ST_ARR = 8,
    NEXTOK__ST_STR = 16,
    NEXTOK__ST_INT = 32,  /* integer-valued numbers          */
    NEXTOK__ST_FRAC = 64, /* numbers with a fractional part  */
    NEXTOK__ST_ALL = 127,
};

/* Limits: past them the call fails with NEXTOK_ERR_LIMIT, never runs on. */
#define NEXTOK__SCH_MAX_TEXT   (16u << 20) /* schema bytes                      */
#define NEXTOK__SCH_MAX_GBNF   (16u << 20) /* GBNF bytes written, all grammars  */
#define NEXTOK__SCH_MAX_VIEWS  20000u      /* rules s<id>, all grammars         */
#define NEXTOK__SCH_MAX_CONJ   64u         /* schemas in one conjunction        */
#define NEXTOK__SCH_MAX_ALTS   1024u       /* alternatives of one distribution  */
#define NEXTOK__SCH_MAX_NAMES  4096u       /* property names of one object      */
#define NEXTOK__SCH_MAX_STATES 50000u      /* member states of one object       */
#define NEXTOK__SCH_MAX_NEST   4           /* value checks inside value checks  */
#define NEXTOK__DEC_MAX        512u        /* significant digits of a number    */
#define NEXTOK__DEC_DIGITS     400         /* integer / fraction digits of a bound */

/* ---- the document ------------------------------------------------------------ */

struct nextok__sch_span {
    uint32_t off, len;
};

struct nextok__sch_anchor {
    uint32_t res;  /* resource root node                                 */
    uint32_t name; /* string node holding the name (after `skip` bytes)  */
    uint32_t skip; /* 1 for a draft-07 "$id": "#name", else 0            */
    uint32_t node; /* the schema it names                                */
};

struct nextok__sch_ignored {
    uint32_t node;
    const char *keyword; /* static text */
};

struct nextok__sch;
struct nextok__sch_el;

/* Everything one call shares: the parsed schema, its indexes, the limits'
 * counters, the sticky status and the keywords ignored in lenient mode. */
struct nextok__sch_doc {
    const struct nextok__mem *mem;
    struct nextok__json json;
    const char *src;
    size_t src_len;
    uint32_t *parent;             /* container of each node; NONE for the root      */
    struct nextok__sch_span *num; /* spelling of each number node in src            */
    uint32_t *res;                /* resource roots: offset + 1 of the URI in uris  */
    struct nextok__buf uris;      /* absolute URIs of the resources, NUL-terminated */
    uint32_t *resources;          /* the resource roots                             */
    size_t n_res, cap_res;
    struct nextok__sch_anchor *anchors;
    size_t n_anchors, cap_anchors;
    bool draft4; /* the root declares draft-04 (or 03): "id" names base URIs */
    struct nextok_json_schema_params sp;
    const struct nextok_grammar_params *gp;
    struct nextok_error *err;
    nextok_status rc; /* the first failure; everything stops at it */
    struct nextok__sch_ignored *ign;
    size_t n_ign, cap_ign;
    size_t n_views, n_bytes; /* over every grammar of the call */
    int nest;                /* value checks in progress          */
    const struct nextok__sch_el *checking[NEXTOK__SCH_MAX_NEST];
    uint32_t n_checking[NEXTOK__SCH_MAX_NEST];
    /* nextok__sch_build, set by schema.c (the top file) when it creates the
     * document: nextok__sch_check, below it, calls it through here to write
     * the grammar that checks values (see the top of this file). */
    bool (*build)(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                  struct nextok__buf *text);
};

/* ---- views ------------------------------------------------------------------- */

enum {
    NEXTOK__SK_NODE = 0,    /* a schema node                         */
    NEXTOK__SK_TYPES = 1,   /* node: a type mask the instance is in  */
    NEXTOK__SK_REQUIRE = 2, /* node: a string node, a required name  */
    NEXTOK__SK_FORBID = 3,  /* node: a string node, a forbidden name */
};
/* Parts of a schema node already dealt with (distributed) in this view. */
enum {
    NEXTOK__SKIP_ANYOF = 1,
    NEXTOK__SKIP_ONEOF = 2,
    NEXTOK__SKIP_VALUES = 4, /* enum, const */
    NEXTOK__SKIP_IF = 8,
    NEXTOK__SKIP_DEPS = 16, /* dependentRequired, dependentSchemas, dependencies */
};

struct nextok__sch_el {
    uint32_t node;
    uint16_t kind;
    uint16_t skip;
};

/* One grammar being written (the result, or one written to check values). */
struct nextok__sch {
    struct nextok__sch_doc *d;
    struct nextok__buf out; /* complete rules only */
    struct nextok__sch_el *els;
    size_t n_els, cap_els;
    struct {
        uint32_t first, n;
    } * views;
    uint32_t n_views, cap_views, done;
    uint32_t *hash; /* view id + 1 */
    uint32_t hcap;
    unsigned helpers; /* shared rules already written (bits) */
    unsigned formats; /* format rules already written (bits) */
    uint32_t cur;     /* the view being written */
    uint32_t sub;     /* its helper rules so far */
};

/* A rule name: s<view>-<n>, a shared name, or one from regex.c. */
typedef char nextok__sch_name[40];

/* ---- schema_base.c ----------------------------------------------------------- */

/* Record a failure (the first one wins); returns false. */
bool nextok__sch_fail(struct nextok__sch_doc *d, nextok_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
bool nextok__sch_nomem(struct nextok__sch_doc *d);
/* A keyword of node that cannot be enforced: UNSUPPORTED, or in lenient mode
 * a report and true (the caller then goes on without it). why: NULL for
 * "cannot be enforced". */
bool nextok__sch_refuse(struct nextok__sch_doc *d, uint32_t node, const char *kw, const char *why);
/* FORMAT: the value of node's keyword kw is not valid. */
bool nextok__sch_bad(struct nextok__sch_doc *d, uint32_t node, const char *kw, const char *why);
/* The JSON pointer of node (into buf, truncated with "..."). */
void nextok__sch_pointer(const struct nextok__sch_doc *d, uint32_t node, char *buf, size_t cap);
/* The member of object node obj named key (NONE if absent or not an object). */
uint32_t nextok__sch_get(const struct nextok__sch_doc *d, uint32_t obj, const char *key);
/* A fresh helper rule name of the view being written. */
void nextok__sch_newname(struct nextok__sch *c, nextok__sch_name name);
/* Append to a rule being assembled in b (failures go to the document). */
void nextok__sch_put(struct nextok__sch *c, struct nextok__buf *b, const char *s);
void nextok__sch_putn(struct nextok__sch *c, struct nextok__buf *b, const char *s, size_t n);
void nextok__sch_fmt(struct nextok__sch *c, struct nextok__buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A GBNF literal of the bytes s[0, n) (valid UTF-8), with a space before. */
void nextok__sch_lit(struct nextok__sch *c, struct nextok__buf *b, const char *s, size_t n);
/* " ws" in flexible mode, nothing in compact mode. */
void nextok__sch_ws(struct nextok__sch *c, struct nextok__buf *b);
/* Write the rule "name ::= body" (body b, then freed) to the grammar. */
void nextok__sch_rule(struct nextok__sch *c, const char *name, struct nextok__buf *b);
/* A shared rule, written once per grammar: "jv" any value, "js" any string,
 * "jc" one string character, "jn" any number, "ji" any integer, "ws", "nv"
 * (nothing), "kc" a raw key character, "fany" [0-9]*. */
const char *nextok__sch_helper(struct nextok__sch *c, const char *which);
/* Append " item{lo,hi}" (hi UINT64_MAX: no bound) for any counts. */
void nextok__sch_rep(struct nextok__sch *c, struct nextok__buf *b, const char *item, uint64_t lo,
                     uint64_t hi);
/* Compile GBNF text written here into *g; GBNF's errors as the schema's
 * (its limits: LIMIT; left recursion, from a schema that refers back to
 * itself through anyOf and the like: UNSUPPORTED; anything else: INTERNAL). */
bool nextok__sch_compile(struct nextok__sch_doc *d, const struct nextok__buf *text,
                         struct nextok_grammar **g);
void nextok__sch_free(struct nextok__sch *c);

/* ---- schema_numbers.c -------------------------------------------------------- */

/* An exact decimal: (-1)^neg * d[0..n) * 10^e, digits without leading or
 * trailing zeros (zero: n = 0, e = 0, !neg). */
struct nextok__dec {
    bool neg;
    uint32_t n;
    int64_t e;
    char d[NEXTOK__DEC_MAX];
};

struct nextok__sch_bound {
    bool has, open;
    uint32_t node; /* the number node, for messages */
    struct nextok__dec v;
};

struct nextok__sch_num {
    struct nextok__sch_bound lo, hi;
    bool has_mult;
    uint32_t mult_node;
    struct nextok__dec mult;
};

/* The value of number node v. LIMIT past NEXTOK__DEC_MAX digits. */
bool nextok__sch_dec(struct nextok__sch_doc *d, uint32_t v, struct nextok__dec *out);
int nextok__dec_cmp(const struct nextok__dec *a, const struct nextok__dec *b);
int nextok__dec_mag_cmp(const struct nextok__dec *a, const struct nextok__dec *b); /* |a| vs |b| */
static inline bool nextok__dec_is_int(const struct nextok__dec *a) { return a->e >= 0; }
/* The least common multiple of a and b (> 0); false when it does not fit
 * in 18 digits (or either has more). */
bool nextok__dec_lcm(const struct nextok__dec *a, const struct nextok__dec *b,
                     struct nextok__dec *out);
/* Canonical JSON spelling of a (integers without fraction or exponent). */
void nextok__sch_dec_text(struct nextok__sch *c, struct nextok__buf *b,
                          const struct nextok__dec *a);

/* ---- schema_refs.c ----------------------------------------------------------- */

/* Parents, number spellings, resources and anchors of d->json. */
bool nextok__sch_index(struct nextok__sch_doc *d);
/* The schema node $ref node ref (a string, member of schema node from)
 * points to; false with the status set (UNSUPPORTED for a remote reference,
 * FORMAT when it points to nothing). */
bool nextok__sch_resolve(struct nextok__sch_doc *d, uint32_t from, uint32_t ref, uint32_t *out);

/* ---- schema_formats.c -------------------------------------------------------- */

/* Append " name" of the body of strings of format fmt[0, n) or of pattern
 * re (node) to b; *lo / *hi: the lengths those strings have (code points;
 * hi UINT64_MAX: unbounded). false: status set, or (lenient) *ignored. */
bool nextok__sch_format(struct nextok__sch *c, struct nextok__buf *b, uint32_t node, uint32_t fmt,
                        uint64_t *lo, uint64_t *hi, bool *ignored);
bool nextok__sch_pattern(struct nextok__sch *c, struct nextok__buf *b, uint32_t node, uint32_t re,
                         bool *ignored);

/* ---- schema_values.c --------------------------------------------------------- */

/* Append the minimal JSON spelling of the string s[0, n) (with quotes). */
void nextok__sch_json_string(struct nextok__sch *c, struct nextok__buf *b, const char *s, size_t n);
/* Append the compact JSON text of value node v (canonical numbers). */
void nextok__sch_json_text(struct nextok__sch *c, struct nextok__buf *b, uint32_t v);
/* Append the GBNF of value node v (whitespace between tokens when flexible). */
void nextok__sch_value_gbnf(struct nextok__sch *c, struct nextok__buf *b, uint32_t v);
/* Whether two value nodes are equal as JSON values (numbers by value). */
bool nextok__sch_equal(struct nextok__sch_doc *d, uint32_t a, uint32_t b);
/* The instance type bit of value node v. */
unsigned nextok__sch_value_type(struct nextok__sch_doc *d, uint32_t v);
/* keep[i] &= whether the JSON text texts[i] is accepted by the conjunction
 * els[0, n) (a grammar of its own is written, through d->build, and
 * compiled for it). */
bool nextok__sch_check(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                       const struct nextok__buf *texts, size_t n_texts, bool *keep);
/* The string branch: "\"" chars "\"" within the length bounds. */
bool nextok__sch_string(struct nextok__sch *c, struct nextok__buf *b, uint64_t min, uint64_t max);
/* The value of the last member of object node obj whose key has the bytes of
 * string node str (NONE: none, or obj is no object). */
uint32_t nextok__sch_member(const struct nextok__json *j, uint32_t obj, uint32_t str);
/* Whether string nodes a and b have the same bytes. */
bool nextok__sch_same_str(const struct nextok__json *j, uint32_t a, uint32_t b);

/* ---- schema_views.c ---------------------------------------------------------- */

/* Whether node only tests the type (annotations aside), *mask the types. */
bool nextok__sch_type_only(struct nextok__sch_doc *d, uint32_t node, unsigned *mask);
/* The rule of the conjunction els[0, n) (written later, or already). */
bool nextok__sch_view(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                      nextok__sch_name name);
/* The same for schema nodes. */
bool nextok__sch_view_nodes(struct nextok__sch *c, const uint32_t *nodes, size_t n,
                            nextok__sch_name name);
/* Type mask of a "type" value; false (FORMAT) if malformed. */
bool nextok__sch_types(struct nextok__sch_doc *d, uint32_t node, unsigned *mask);
/* A non-negative integer keyword (integer-valued numbers too) into *v
 * (saturates at UINT64_MAX); absent: true, *v untouched. */
bool nextok__sch_count(struct nextok__sch_doc *d, uint32_t node, const char *kw, uint64_t *v);

/* ---- schema_ranges.c --------------------------------------------------------- */

/* " name" of the integers within nm's bounds; false when none. */
bool nextok__sch_int_bounds(struct nextok__sch *c, struct nextok__buf *b,
                            struct nextok__sch_num *nm);
/* " name" of the magnitudes (no sign) in [lo, hi] (hi NULL: unbounded; open
 * ends excluded) without exponent, with at most lim digits after the point
 * that are not 0 (UINT32_MAX: any); false when none. The nodes: for messages. */
bool nextok__sch_magnitudes(struct nextok__sch *c, struct nextok__buf *out,
                            const struct nextok__dec *lo, bool lo_open, uint32_t lo_node,
                            const struct nextok__dec *hi, bool hi_open, uint32_t hi_node,
                            uint32_t lim);

/* ---- schema_combine.c -------------------------------------------------------- */

/* If the view els[0, n) has anyOf, oneOf, if/then/else or dependent* left to
 * distribute, write its body (one view per alternative) to b, *done. */
bool nextok__sch_combine(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                         struct nextok__buf *b, bool *done);

/* The unevaluatedProperties (items: unevaluatedItems) of node as the schema
 * the properties it does not evaluate (the items from *from on) must
 * satisfy: *out, NONE when absent or when everything is evaluated; s / *n_s
 * the schemas of its scope that the view holds (s: MAX_CONJ entries). */
bool nextok__sch_unevaluated(struct nextok__sch_doc *d, uint32_t node, bool items,
                             const struct nextok__sch_el *els, size_t n, uint32_t *out, uint32_t *s,
                             size_t *n_s, size_t *from);

/* ---- schema_arrays.c --------------------------------------------------------- */

bool nextok__sch_array(struct nextok__sch *c, struct nextok__buf *b,
                       const struct nextok__sch_el *els, size_t n);
/* Container punctuation: " WS close" (WS only if any member came before),
 * " WS , WS" (only if any), and " item (WS , WS item){lo,hi} WS close". */
void nextok__sch_close(struct nextok__sch *c, struct nextok__buf *b, bool any, const char *close);
void nextok__sch_comma(struct nextok__sch *c, struct nextok__buf *b, bool any);
void nextok__sch_more(struct nextok__sch *c, struct nextok__buf *b, const char *item, uint64_t lo,
                      uint64_t hi, const char *close);

/* ---- schema_objects.c, schema_keys.c ----------------------------------------- */

/* One property name of an object view. */
struct nextok__sch_pname {
    uint32_t str; /* string node */
    uint32_t pos; /* the first key of it in a `properties`, UINT32_MAX: none */
    uint32_t idx; /* order of first sight */
    bool required, forbidden;
};

/* The object keywords of a view (schema_objects.c, schema_keys.c). */
struct nextok__sch_obj {
    uint32_t node[NEXTOK__SCH_MAX_CONJ], props[NEXTOK__SCH_MAX_CONJ], addl[NEXTOK__SCH_MAX_CONJ];
    uint32_t *scope;                      /* per conjunct with unevaluatedProperties: its scope */
    size_t n_scope[NEXTOK__SCH_MAX_CONJ]; /* (MAX_CONJ nodes each)                             */
    size_t n;
    struct nextok__sch_pname *names;
    size_t n_names;
    uint64_t min, max;
    bool strict, addl_ok, any_addl;
    uint32_t pn[NEXTOK__SCH_MAX_CONJ], pn_node[NEXTOK__SCH_MAX_CONJ]; /* propertyNames to check */
    size_t n_pn;
    size_t pp;                 /* the conjunct with patternProperties, SIZE_MAX: none */
    uint32_t pp_re, pp_schema; /* its one pattern (string node) and schema            */
};

/* The object branch of the conjunction els[0, n): " name" appended, or false
 * when no object can satisfy it. */
bool nextok__sch_object(struct nextok__sch *c, struct nextok__buf *b,
                        const struct nextok__sch_el *els, size_t n);
/* The rule of one additional member (key and value) of o. */
bool nextok__sch_additional(struct nextok__sch *c, struct nextok__sch_obj *o,
                            nextok__sch_name name);
/* patternProperties and propertyNames of o: set up, or refused. */
bool nextok__sch_pattern_keys(struct nextok__sch *c, struct nextok__sch_obj *o);
bool nextok__sch_property_names(struct nextok__sch *c, struct nextok__sch_obj *o);

/* ---- schema_merge.c ---------------------------------------------------------- */

/* The body of a view without combinators left: per type, or its values. */
bool nextok__sch_write(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                       struct nextok__buf *b);
/* Append the alternatives of the numbers the types (INT, FRAC bits) and the
 * bounds allow, as one rule reference (" name"); false when none. */
bool nextok__sch_number(struct nextok__sch *c, struct nextok__buf *b, unsigned types,
                        struct nextok__sch_num *nm);

/* ---- schema.c ---------------------------------------------------------------- */

/* The GBNF text nextok_grammar_init_json_schema compiles (appended to text,
 * which allocates with its mem); lenient reports are not made. For tests and
 * tools. */
nextok_status nextok__schema_gbnf(const char *schema, size_t len,
                                  const struct nextok_json_schema_params *sp,
                                  const struct nextok_grammar_params *params,
                                  struct nextok__buf *text, struct nextok_error *err);
/* Write the grammar of the conjunction els[0, n) into c (zeroed but for d
 * and out) and its whole GBNF text ("root ::= ...", the rules) into text. */
bool nextok__sch_build(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                       struct nextok__buf *text);

#endif /* NEXTOK_SCHEMA_INTERNAL_H */
