/*
 * Minimal test harness (tests/README.md says how the suite is organised).
 *
 * A test file defines TEST(name) functions and runs them with RUN(name) from
 * main(). CHECK* record failures with file:line and keep going; every case
 * prints one line (ok / FAIL / SKIP, with its time); harness_done() prints
 * "N passed, N failed, N skipped" and returns the exit status:
 *
 *   0   every case that was run passed, and none was skipped
 *   1   a failure
 *   77  nothing could run (ctest's SKIP_RETURN_CODE: reported as skipped)
 *
 * One run is one ctest test, so a run never mixes "some cases ran, some were
 * skipped": that is reported as a failure of the test's organisation. Cases
 * that may have to skip (data kept outside the repo, an instruction set, a
 * build option) go in a group of their own, selected by the program's first
 * argument and registered as its own ctest test:
 *
 *     int main(int argc, char **argv)
 *     {
 *         harness_init(argc, argv);
 *         if (GROUP("")) { RUN(a); RUN(b); }          // `test_x`
 *         if (GROUP("external") && need_external(FILES)) RUN(c); // `test_x external`
 *         return harness_done();
 *     }
 *
 * SKIP("why") inside a case: the case cannot run here (no AVX-512, built
 * without PCRE2). need_external(): the group needs files from the data folder
 * outside the repo; when one is missing the group is skipped, and with
 * NEXTOK_REQUIRE_DATA=1 in the environment (CI) that is a failure instead.
 * Fixtures in tests/data/ are always there: a missing one is a failure.
 */
#ifndef NEXTOK_TEST_HARNESS_H
#define NEXTOK_TEST_HARNESS_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int h_pass, h_fail, h_skip, h_cur_failed, h_cur_skipped;
static const char *h_cur;
static const char *h_group = ""; /* the group asked for ("" = the default one) */
static int h_group_found = 1;    /* cleared by harness_init when a group is named */

static inline double h_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define TEST(name) static void name(void)
#define RUN(name)                                                        \
    do {                                                                 \
        h_cur = #name;                                                   \
        h_cur_failed = h_cur_skipped = 0;                                \
        double h_t0_ = h_now();                                          \
        name();                                                          \
        double h_dt_ = h_now() - h_t0_;                                  \
        if (h_cur_skipped) h_skip++;                                     \
        else if (h_cur_failed) { h_fail++; printf("FAIL %s (%.2f s)\n", #name, h_dt_); } \
        else { h_pass++; printf("ok   %s (%.2f s)\n", #name, h_dt_); } \
        fflush(stdout);                                                  \
    } while (0)

#define SKIP(why)                                                        \
    do {                                                                 \
        printf("SKIP %s: %s\n", h_cur, why);                             \
        h_cur_skipped = 1;                                               \
        return;                                                          \
    } while (0)

#define CHECK(cond)                                                      \
    do {                                                                 \
        if (!(cond)) {                                                   \
            printf("  %s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, h_cur, #cond); \
            h_cur_failed = 1;                                            \
        }                                                                \
    } while (0)

#define CHECK_MSG(cond, ...)                                             \
    do {                                                                 \
        if (!(cond)) {                                                   \
            printf("  %s:%d: %s: CHECK(%s) failed: ", __FILE__, __LINE__, h_cur, #cond); \
            printf(__VA_ARGS__);                                         \
            printf("\n");                                                \
            h_cur_failed = 1;                                            \
        }                                                                \
    } while (0)

#define CHECK_EQ_INT(a, b)                                               \
    do {                                                                 \
        long long a_ = (long long)(a), b_ = (long long)(b);              \
        CHECK_MSG(a_ == b_, "%s = %lld, %s = %lld", #a, a_, #b, b_);     \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                            \
    do {                                                                 \
        double a_ = (double)(a), b_ = (double)(b);                       \
        CHECK_MSG(fabs(a_ - b_) <= (tol), "%s = %.9g, %s = %.9g (tol %g)", #a, a_, #b, b_, (double)(tol)); \
    } while (0)

#define CHECK_OK(expr)                                                   \
    do {                                                                 \
        nextok_status rc_ = (expr);                                      \
        CHECK_MSG(rc_ == NEXTOK_OK, "%s returned %s", #expr, nextok_status_name(rc_)); \
    } while (0)

/* ---- groups ----------------------------------------------------------------- */

/* The first argument names the group to run; none runs the default group "".
 * A program with one group may skip this and keep `int main(void)`. */
static inline void harness_init(int argc, char **argv)
{
    if (argc > 1) {
        h_group = argv[1];
        h_group_found = 0;
    }
}

/* Whether this run is group `name` (used in main() to pick the cases, and in
 * cases whose data depend on the group). */
static inline int h_group_is(const char *name)
{
    if (strcmp(h_group, name) != 0) return 0;
    h_group_found = 1;
    return 1;
}
#define GROUP(name) h_group_is(name)

/* ---- data ------------------------------------------------------------------- */

/* tests/data/<rel>: the fixtures shipped with the repo. */
static inline const char *fixture_path(char *buf, size_t cap, const char *rel)
{
#ifdef NEXTOK_FIXTURE_DIR
    snprintf(buf, cap, "%s/%s", NEXTOK_FIXTURE_DIR, rel);
#else
    snprintf(buf, cap, "tests/data/%s", rel);
#endif
    return buf;
}

/* The data folder outside the repo (vocabularies whose licence forbids
 * redistribution, large files): $NEXTOK_DATA_DIR, else the configured
 * default (../shared/data beside the source tree). */
static inline const char *external_dir(void)
{
    const char *env = getenv("NEXTOK_DATA_DIR");
    if (env && env[0]) return env;
#ifdef NEXTOK_DATA_DIR
    return NEXTOK_DATA_DIR;
#else
    return "../shared/data";
#endif
}

static inline const char *external_path(char *buf, size_t cap, const char *rel)
{
    snprintf(buf, cap, "%s/%s", external_dir(), rel);
    return buf;
}

static inline int h_readable(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* Whether every file (paths relative to the external folder, NULL-terminated)
 * is there. When one is not, the run is reported as skipped, or as failed
 * under NEXTOK_REQUIRE_DATA=1; either way the caller runs none of its cases. */
static inline int need_external(const char *rel, ...)
{
    const char *req = getenv("NEXTOK_REQUIRE_DATA");
    int required = req && strcmp(req, "1") == 0;
    char path[1024];
    va_list ap;
    va_start(ap, rel);
    for (const char *r = rel; r; r = va_arg(ap, const char *)) {
        if (h_readable(external_path(path, sizeof path, r))) continue;
        printf("%s group \"%s\": %s not found (NEXTOK_DATA_DIR=%s)%s\n",
               required ? "FAIL" : "SKIP", h_group, path, external_dir(),
               required ? " and NEXTOK_REQUIRE_DATA=1" : "");
        if (required) h_fail++;
        else h_skip++;
        va_end(ap);
        return 0;
    }
    va_end(ap);
    return 1;
}

static inline int harness_done(void)
{
    printf("%d passed, %d failed, %d skipped\n", h_pass, h_fail, h_skip);
    if (!h_group_found) {
        printf("FAIL: this program has no test group \"%s\"\n", h_group);
        return 1;
    }
    if (h_fail) return 1;
    if (h_skip && h_pass) {
        printf("FAIL: %d case(s) skipped in a run where %d passed: cases that may skip "
               "belong in a group of their own (tests/README.md)\n", h_skip, h_pass);
        return 1;
    }
    if (h_skip) return 77;
    if (!h_pass) {
        printf("FAIL: no case ran\n");
        return 1;
    }
    return 0;
}

#endif
