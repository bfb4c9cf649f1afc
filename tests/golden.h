/*
 * The golden encodings (../shared/data/vocab/golden/encodings.json), read
 * with the library's own JSON reader (src/common/json.h). The file's values
 * are ids, hex strings and sample texts; test_json.c checks the reader
 * itself.
 */
#ifndef NEXTOK_TEST_GOLDEN_H
#define NEXTOK_TEST_GOLDEN_H

#include "common/file.h"
#include "common/json.h"

struct golden {
    char *text;
    size_t size;
    struct nextok__json doc;
};

/* 1 when the file was read and parsed; otherwise g is empty. */
static inline int golden_load(struct golden *g, const char *path)
{
    memset(g, 0, sizeof *g);
    struct nextok_error e;
    if (nextok__read_file(&nextok__mem_libc, path, &g->text, &g->size, &e) != NEXTOK_OK) return 0;
    if (nextok__json_parse_object(&g->doc, &nextok__mem_libc, g->text, g->size, NULL, "golden",
                                  &e) == NEXTOK_OK)
        return 1;
    printf("  %s: %s\n", path, e.msg);
    nextok__json_free(&g->doc);
    free(g->text);
    g->text = NULL;
    return 0;
}

static inline void golden_free(struct golden *g)
{
    nextok__json_free(&g->doc);
    free(g->text);
    memset(g, 0, sizeof *g);
}

/* Member key of object o (o = 0: the top level); NO_NODE when absent. */
static inline uint32_t golden_get(const struct golden *g, uint32_t o, const char *key)
{
    return nextok__json_get(&g->doc, o, key);
}

static inline size_t golden_len(const struct golden *g, uint32_t v)
{
    return nextok__json_len(&g->doc, v);
}

/* Element i of array a. */
static inline uint32_t golden_at(const struct golden *g, uint32_t a, size_t i)
{
    uint32_t e = nextok__json_first(&g->doc, a);
    while (i-- > 0 && e != NEXTOK__JSON_NO_NODE) e = nextok__json_next(&g->doc, e);
    return e;
}

static inline int32_t golden_int(const struct golden *g, uint32_t v)
{
    int64_t x = -1;
    return nextok__json_int(&g->doc, v, &x) ? (int32_t)x : -1;
}

static inline const char *golden_str(const struct golden *g, uint32_t v)
{
    const char *s = nextok__json_str(&g->doc, v, NULL);
    return s ? s : "";
}

#endif /* NEXTOK_TEST_GOLDEN_H */
