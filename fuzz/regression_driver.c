/* Replays every file of the corpus directories given on the command line
 * through LLVMFuzzerTestOneInput (for CI without libFuzzer), in name order,
 * and reports how many inputs reached each fuzz_reached() tag.
 *
 *   fuzz_x [--expect TAG:N | --expect TAG:N%]... CORPUS_DIR_OR_FILE...
 *
 * --expect fails the run unless at least N inputs (or N percent of them)
 * reached TAG; "*" stands for any tag. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_reach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TAGS 64

struct tag {
    const char *name;
    size_t inputs; /* inputs that reached it */
    int seen;      /* by the current input */
};
static struct tag tags[MAX_TAGS];
static size_t n_tags, n_inputs, n_any;

void fuzz_reached(const char *tag)
{
    for (size_t i = 0; i < n_tags; i++)
        if (strcmp(tags[i].name, tag) == 0) {
            tags[i].seen = 1;
            return;
        }
    if (n_tags < MAX_TAGS) tags[n_tags++] = (struct tag){tag, 0, 1};
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    for (size_t i = 0; i < n_tags; i++) tags[i].seen = 0;
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    int any = 0;
    for (size_t i = 0; i < n_tags; i++) {
        tags[i].inputs += (size_t)tags[i].seen;
        any |= tags[i].seen;
    }
    n_any += (size_t)any;
    n_inputs++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char **nn = realloc(names, (n + 1) * sizeof *names);
        if (!nn) break;
        names = nn;
        names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (!names[n]) break;
        sprintf(names[n++], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        if (run_file(names[i]) != 0) fprintf(stderr, "%s: cannot read\n", names[i]);
        free(names[i]);
    }
    free(names);
    return 0;
}

/* "TAG:N" or "TAG:N%": did enough inputs reach TAG? */
static int check_expect(const char *spec)
{
    const char *colon = strrchr(spec, ':');
    char *end = NULL;
    double want = colon ? strtod(colon + 1, &end) : -1;
    if (!colon || end == colon + 1 || (*end && strcmp(end, "%") != 0) || want < 0) {
        fprintf(stderr, "--expect %s: want TAG:N or TAG:N%%\n", spec);
        return 1;
    }
    size_t len = (size_t)(colon - spec), got = 0;
    if (len == 1 && spec[0] == '*') got = n_any;
    for (size_t i = 0; i < n_tags; i++)
        if (strlen(tags[i].name) == len && strncmp(tags[i].name, spec, len) == 0) got = tags[i].inputs;
    double need = *end == '%' ? want / 100.0 * (double)n_inputs : want;
    if ((double)got >= need) return 0;
    fprintf(stderr, "FAIL: %.*s reached by %zu of %zu inputs, expected at least %s\n", (int)len,
            spec, got, n_inputs, colon + 1);
    return 1;
}

int main(int argc, char **argv)
{
    const char *expect[MAX_TAGS];
    size_t n_expect = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--expect") == 0 && a + 1 < argc && n_expect < MAX_TAGS) {
            expect[n_expect++] = argv[++a];
            continue;
        }
        struct stat st;
        if (stat(argv[a], &st) != 0) {
            fprintf(stderr, "corpus %s: not found\n", argv[a]);
            return 1;
        }
        if (S_ISDIR(st.st_mode) ? run_dir(argv[a]) : run_file(argv[a])) {
            fprintf(stderr, "corpus %s: cannot read\n", argv[a]);
            return 1;
        }
    }
    printf("replayed %zu inputs; %zu reached a tag", n_inputs, n_any);
    for (size_t i = 0; i < n_tags; i++) printf("%s %s %zu", i ? "," : ":", tags[i].name, tags[i].inputs);
    printf("\n");
    int bad = n_inputs == 0;
    for (size_t i = 0; i < n_expect; i++) bad |= check_expect(expect[i]);
    return bad;
}
