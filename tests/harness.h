/*
 * Minimal test harness. A test file defines TEST(name) functions and lists
 * them in main() with RUN(name); CHECK* record failures with file:line and
 * keep going; harness_done() prints "N passed, N failed" and returns the exit
 * code. Data-dependent tests call SKIP("why") which is reported as skipped,
 * never as passed.
 */
#ifndef NEXTOK_TEST_HARNESS_H
#define NEXTOK_TEST_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int h_pass, h_fail, h_skip, h_cur_failed, h_cur_skipped;
static const char *h_cur;

#define TEST(name) static void name(void)
#define RUN(name)                                                        \
    do {                                                                 \
        h_cur = #name;                                                   \
        h_cur_failed = h_cur_skipped = 0;                                \
        name();                                                          \
        if (h_cur_skipped) h_skip++;                                     \
        else if (h_cur_failed) { h_fail++; printf("FAIL %s\n", #name); } \
        else h_pass++;                                                   \
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

static inline int harness_done(void)
{
    printf("%d passed, %d failed, %d skipped\n", h_pass, h_fail, h_skip);
    return h_fail ? 1 : 0;
}

#endif
