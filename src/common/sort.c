/*
 * In-place introsort (quicksort, median of three; heapsort past 2 log2 n
 * levels; insertion sort below 16 elements). glibc's qsort() is a merge sort
 * that mallocs a buffer for arrays over 1 KiB, which would make every sorting
 * stage allocate per call; this never allocates.
 */
#include "internal.h"

typedef int (*cmp_fn)(const void *, const void *);

#define SWAP_MAX 64

/* Swap size bytes; sizes of 4, 8 and 12 (ids, keys, candidates: every
 * caller's) as constants, so the copies are a few moves instead of three
 * calls to memcpy (which made a sort of 100k candidates cost tens of ms). */
#define SWAP_N(n)                                                          \
    do {                                                                   \
        unsigned char t_[n];                                               \
        memcpy(t_, a, n);                                                  \
        memcpy(a, b, n);                                                   \
        memcpy(b, t_, n);                                                  \
    } while (0)

static inline void swap_bytes(unsigned char *a, unsigned char *b, size_t size)
{
    if (a == b || size > SWAP_MAX) return; /* callers never pass larger sizes */
    switch (size) {
    case 4: SWAP_N(4); break;
    case 8: SWAP_N(8); break;
    case 12: SWAP_N(12); break;
    default: {
        unsigned char t[SWAP_MAX];
        memcpy(t, a, size);
        memcpy(a, b, size);
        memcpy(b, t, size);
    }
    }
}

#define AT(i) (base + (i) * size)

static void insertion_sort(unsigned char *base, size_t n, size_t size, cmp_fn cmp)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && cmp(AT(j - 1), AT(j)) > 0; j--) swap_bytes(AT(j - 1), AT(j), size);
}

static void sift_down(unsigned char *base, size_t n, size_t i, size_t size, cmp_fn cmp)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && cmp(AT(l), AT(m)) > 0) m = l;
        if (r < n && cmp(AT(r), AT(m)) > 0) m = r;
        if (m == i) return;
        swap_bytes(AT(i), AT(m), size);
        i = m;
    }
}

static void heap_sort(unsigned char *base, size_t n, size_t size, cmp_fn cmp)
{
    for (size_t i = n / 2; i-- > 0;) sift_down(base, n, i, size, cmp);
    for (size_t end = n; end > 1; end--) {
        swap_bytes(AT(0), AT(end - 1), size);
        sift_down(base, end - 1, 0, size, cmp);
    }
}

/* Hoare partition around the median of first, middle and last; returns the
 * split point p (0 < p < n): [0, p) <= pivot <= [p, n). */
static size_t partition(unsigned char *base, size_t n, size_t size, cmp_fn cmp)
{
    size_t mid = n / 2;
    if (cmp(AT(mid), AT(0)) < 0) swap_bytes(AT(mid), AT(0), size);
    if (cmp(AT(n - 1), AT(0)) < 0) swap_bytes(AT(n - 1), AT(0), size);
    if (cmp(AT(n - 1), AT(mid)) < 0) swap_bytes(AT(n - 1), AT(mid), size);
    unsigned char pivot[SWAP_MAX];
    memcpy(pivot, AT(mid), size);
    size_t i = 0, j = n - 1;
    for (;;) {
        while (cmp(AT(i), pivot) < 0) i++;
        while (cmp(AT(j), pivot) > 0) j--;
        if (i >= j) return j + 1;
        swap_bytes(AT(i), AT(j), size);
        i++;
        j--;
    }
}

static void intro(unsigned char *base, size_t n, size_t size, cmp_fn cmp, int depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            heap_sort(base, n, size, cmp);
            return;
        }
        size_t p = partition(base, n, size, cmp);
        /* recurse into the smaller side, loop on the larger: O(log n) stack */
        if (p < n - p) {
            intro(base, p, size, cmp, depth);
            base += p * size;
            n -= p;
        } else {
            intro(base + p * size, n - p, size, cmp, depth);
            n = p;
        }
    }
    insertion_sort(base, n, size, cmp);
}

void nextok__sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n < 2 || size == 0) return;
    if (size > SWAP_MAX) { /* no caller does this; stay correct anyway */
        insertion_sort(base, n, size, cmp);
        return;
    }
    int depth = 0;
    for (size_t m = n; m > 1; m >>= 1) depth += 2;
    intro(base, n, size, cmp, depth);
}
