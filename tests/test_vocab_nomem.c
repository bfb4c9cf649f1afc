/*
 * Allocation failure in the vocabulary loaders: for every N, the N-th
 * allocation fails (once, then also from N on), and the load must return
 * NEXTOK_ERR_NOMEM with a message, no vocabulary, and every byte it
 * allocated freed ("nothing lost": no load that succeeds with a key quietly
 * dropped, no FORMAT or IO standing in for NOMEM). Linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free (CMakeLists):
 * the library's calls come here. Leaks are also counted here, so the test
 * means the same without ASan; `make test-asan` adds LeakSanitizer.
 *
 * Also: a path that cannot be read is NEXTOK_ERR_IO.
 */
#include "harness.h"
#include "nextok.h"

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the failing allocator ----------------------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void  __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void  __wrap_free(void *p);

static struct {
    int    on;        /* count and fail only inside a measured call */
    long   calls;     /* allocations so far in this call */
    long   fail_at;   /* 0: none; else this call fails ... */
    int    sticky;    /* ... and, if set, every later one too */
    long   live;      /* blocks allocated and not freed */
} fa;

static int fa_fail(void)
{
    if (!fa.on) return 0;
    fa.calls++;
    return fa.fail_at && (fa.calls == fa.fail_at || (fa.sticky && fa.calls > fa.fail_at));
}

void *__wrap_malloc(size_t n)
{
    if (fa_fail()) return NULL;
    void *p = __real_malloc(n);
    if (p && fa.on) fa.live++;
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (fa_fail()) return NULL;
    void *p = __real_calloc(n, size);
    if (p && fa.on) fa.live++;
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    if (fa_fail()) return NULL;
    void *q = __real_realloc(p, n);
    if (q && !p && fa.on) fa.live++;
    return q;
}

void __wrap_free(void *p)
{
    if (p && fa.on) fa.live--;
    __real_free(p);
}

/* ---- one load, every failure point --------------------------------------------------- */

typedef nextok_status (*load_fn)(struct nextok_vocab **out, const void *arg, struct nextok_error *err);

/* Run load with allocation fail_at failing (0: none); the vocabulary is
 * freed inside the measured window, so live must come back to 0. */
static nextok_status run_load(load_fn load, const void *arg, long fail_at, int sticky,
                              struct nextok_error *err, long *calls, long *live, int *got_vocab)
{
    struct nextok_vocab *v = NULL;
    err->status = NEXTOK_OK;
    err->msg[0] = '\0';
    fa.calls = fa.live = 0;
    fa.fail_at = fail_at;
    fa.sticky = sticky;
    fa.on = 1;
    nextok_status rc = load(&v, arg, err);
    *got_vocab = v != NULL;
    nextok_vocab_free(v);
    fa.on = 0;
    *calls = fa.calls;
    *live = fa.live;
    return rc;
}

/* Every allocation of a successful load, failed in turn. Returns how many. */
static long every_failure(const char *what, load_fn load, const void *arg)
{
    struct nextok_error e;
    long n = 0, live = 0, calls;
    int got;
    nextok_status rc = run_load(load, arg, 0, 0, &e, &n, &live, &got);
    CHECK_MSG(rc == NEXTOK_OK && got && live == 0, "%s: clean load: %s %s (live %ld)", what,
              nextok_status_name(rc), e.msg, live);
    if (rc != NEXTOK_OK) return 0;
    CHECK_MSG(n > 0, "%s: no allocation counted (is the wrapper linked?)", what);
    for (int sticky = 0; sticky < 2; sticky++) {
        for (long k = 1; k <= n; k++) {
            rc = run_load(load, arg, k, sticky, &e, &calls, &live, &got);
            CHECK_MSG(rc == NEXTOK_ERR_NOMEM && e.status == NEXTOK_ERR_NOMEM && e.msg[0] && !got,
                      "%s: allocation %ld of %ld failing%s: %s \"%s\"%s", what, k, n,
                      sticky ? " (and all after it)" : "", nextok_status_name(rc), e.msg,
                      got ? ", with a vocabulary" : "");
            CHECK_MSG(live == 0, "%s: allocation %ld of %ld failing%s: %ld blocks leaked", what, k,
                      n, sticky ? " (and all after it)" : "", live);
        }
    }
    rc = run_load(load, arg, n + 1, 1, &e, &calls, &live, &got);
    CHECK_MSG(rc == NEXTOK_OK && calls == n && live == 0, "%s: load after the sweep: %s", what,
              nextok_status_name(rc));
    return n;
}

/* ---- inputs ------------------------------------------------------------------------------ */

/* Every reader path: model vocab and merges (both spellings), added tokens,
 * a decoder Sequence, a post_processor, both config files (with a number
 * too long for the stack buffer, an escaped key, a list of eos ids). */
static const char bpe_json[] =
    "\xef\xbb\xbf{\"version\": \"1.0\", \"added_tokens\": [{\"id\": 5, \"content\": \"<s>\", "
    "\"special\": true}, {\"id\": 6, \"content\": \"</s>\", \"special\": true}, {\"id\": 7, "
    "\"content\": \"<t\\u00e9>\", \"special\": false}], \"normalizer\": null, \"post_processor\": "
    "{\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}}, "
    "{\"Sequence\": {\"id\": \"A\"}}]}, \"decoder\": {\"type\": \"Sequence\", \"decoders\": "
    "[{\"type\": \"Replace\", \"pattern\": {\"String\": \"\\u2581\"}, \"content\": \" \"}, "
    "{\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", "
    "\"start\": 1, \"stop\": 0}]}, \"model\": {\"type\": \"BPE\", \"byte_fallback\": true, "
    "\"unk_token\": \"<unk>\", \"vocab\": {\"<unk>\": 0, \"<0x41>\": 1, \"\\u2581a\": 2, \"b\": 3, "
    "\"\\u2581ab\": 4}, \"merges\": [\"\\u2581a b\", [\"a\", \"b\"]]}}";
static const char bpe_cfg[] =
    "{\"bos_token\": {\"content\": \"<s>\", \"lstrip\": false}, \"eos_token\": \"</s>\", "
    "\"pad_token\": null, \"add_bos_token\": true, \"model_max_length\": "
    "1000000000000000019884624838656, \"x\": 1.00000000000000000000000000000000000000000000000000"
    "000000000000000000001, \"chat\\ttemplate\": \"{{ x }}\"}";
static const char bpe_gen[] = "{\"eos_token_id\": [6, 0], \"bos_token_id\": 5, \"pad_token_id\": 0}";

static const char unigram_json[] =
    "{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"<unk>\", 0], "
    "[\"\\u2581a\", -1.5], [\"b\", -2e1], [\"<0xC3>\", -3]]}, \"decoder\": {\"type\": "
    "\"Metaspace\", \"replacement\": \"\\u2581\", \"prepend_scheme\": \"always\"}}";

static const char wordpiece_json[] =
    "{\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"vocab\": {\"[UNK]\": 0, "
    "\"hug\": 1, \"##ging\": 2, \".\": 3}}, \"added_tokens\": [{\"id\": 4, \"content\": "
    "\"[SEP]\", \"special\": true}], \"decoder\": {\"type\": \"WordPiece\", \"prefix\": \"##\"}}";

struct hf_args {
    const char *tok, *cfg, *gen;
};

static nextok_status load_hf_mem(struct nextok_vocab **out, const void *arg, struct nextok_error *err)
{
    const struct hf_args *a = arg;
    struct nextok_hf_json_mem m = {a->tok, strlen(a->tok), a->cfg, a->cfg ? strlen(a->cfg) : 0,
                                   a->gen, a->gen ? strlen(a->gen) : 0};
    return nextok_vocab_load_hf_json_mem(out, &m, err);
}

static nextok_status load_by_path(struct nextok_vocab **out, const void *arg, struct nextok_error *err)
{
    return nextok_vocab_load_file(out, arg, err);
}

struct mem_args {
    const char *data;
    size_t size;
};

static nextok_status load_gguf_mem(struct nextok_vocab **out, const void *arg, struct nextok_error *err)
{
    const struct mem_args *a = arg;
    return nextok_vocab_load_gguf_mem(out, a->data, a->size, err);
}

static nextok_status load_tiktoken_mem(struct nextok_vocab **out, const void *arg,
                                       struct nextok_error *err)
{
    static const struct nextok_special_token sp[] = {{"<|endoftext|>", 1000}};
    const struct mem_args *a = arg;
    return nextok_vocab_load_tiktoken_mem(out, a->data, a->size, sp, 1, err);
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)len + 1);
    if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return p;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f != NULL, "%s: %s", path, strerror(errno));
    if (!f) return;
    fwrite(text, 1, strlen(text), f);
    fclose(f);
}

/* ---- tests ---------------------------------------------------------------------------- */

TEST(nomem_hf_json_mem)
{
    struct hf_args bpe = {bpe_json, bpe_cfg, bpe_gen}, uni = {unigram_json, NULL, NULL},
                   wp = {wordpiece_json, NULL, NULL};
    long n = every_failure("tokenizer.json (BPE) + configs", load_hf_mem, &bpe);
    printf("  tokenizer.json (BPE) + configs: %ld allocations, each failed\n", n);
    every_failure("tokenizer.json (Unigram)", load_hf_mem, &uni);
    every_failure("tokenizer.json (WordPiece)", load_hf_mem, &wp);
}

TEST(nomem_hf_json_files)
{
    char dir[] = "/tmp/nextok_nomem_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    write_file(dir, "tokenizer.json", bpe_json);
    write_file(dir, "tokenizer_config.json", bpe_cfg);
    write_file(dir, "generation_config.json", bpe_gen);
    every_failure("tokenizer.json directory", load_by_path, dir);
    char path[1024];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    every_failure("tokenizer.json file", load_by_path, path);
    static const char *const names[] = {"tokenizer.json", "tokenizer_config.json",
                                        "generation_config.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* A real file: GPT-2's tokenizer.json (in the repository). */
TEST(nomem_gpt2)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/gpt2-tokenizer.json", NEXTOK_SOURCE_DIR);
    long n = every_failure("examples/gpt2-tokenizer.json", load_by_path, path);
    printf("  examples/gpt2-tokenizer.json: %ld allocations, each failed\n", n);
}

TEST(nomem_gguf_tiktoken)
{
    static const char *const gguf[] = {"bpe.gguf", "spm.gguf", "bert.gguf", "t5.gguf"};
    for (size_t i = 0; i < sizeof gguf / sizeof gguf[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/fuzz/corpus/fuzz_gguf/%s", NEXTOK_SOURCE_DIR, gguf[i]);
        struct mem_args a = {NULL, 0};
        a.data = read_all(path, &a.size);
        CHECK_MSG(a.data != NULL, "%s: not readable", path);
        if (!a.data) continue;
        every_failure(gguf[i], load_gguf_mem, &a);
        every_failure(gguf[i], load_by_path, path);
        free((void *)a.data);
    }
    /* The first lines of o200k_base (the fuzz input's first byte is not
     * part of the file). */
    char path[1024];
    snprintf(path, sizeof path, "%s/fuzz/corpus/fuzz_tiktoken/o200k_head", NEXTOK_SOURCE_DIR);
    size_t size = 0;
    char *data = read_all(path, &size);
    CHECK_MSG(data != NULL && size > 1, "%s: not readable", path);
    if (!data || size < 2) return;
    struct mem_args a = {data + 1, size - 1};
    every_failure("tiktoken", load_tiktoken_mem, &a);
    char dir[] = "/tmp/nextok_nomem_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/vocab.tiktoken", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(a.data, 1, a.size, f) == a.size);
    if (f) fclose(f);
    every_failure("tiktoken file", load_by_path, path);
    unlink(path);
    rmdir(dir);
    free(data);
}

/* Growing the end-of-generation set fails cleanly: NOMEM, nothing changed. */
TEST(nomem_add_eog)
{
    struct hf_args wp = {wordpiece_json, NULL, NULL};
    struct nextok_vocab *v = NULL;
    struct nextok_error e;
    CHECK_OK(load_hf_mem(&v, &wp, &e));
    if (!v) return;
    size_t n0;
    nextok_vocab_eog_ids(v, &n0);
    fa.calls = 0;
    fa.fail_at = 1;
    fa.sticky = 1;
    fa.on = 1;
    nextok_status rc = nextok_vocab_add_eog(v, 1);
    nextok_status rc2 = nextok_vocab_set_special_id(v, NEXTOK_VOCAB_EOT, 2);
    fa.on = 0;
    size_t n1;
    nextok_vocab_eog_ids(v, &n1);
    CHECK_EQ_INT(rc, NEXTOK_ERR_NOMEM);
    CHECK_EQ_INT(rc2, NEXTOK_ERR_NOMEM);
    CHECK(n1 == n0 && !nextok_vocab_is_eog(v, 1) && !nextok_vocab_is_eog(v, 2));
    CHECK_EQ_INT(nextok_vocab_special_id(v, NEXTOK_VOCAB_EOT), -1);
    CHECK_OK(nextok_vocab_add_eog(v, 1));
    CHECK(nextok_vocab_is_eog(v, 1));
    nextok_vocab_free(v);
}

/* Paths that exist but cannot be read as a file: IO, with the path named. */
TEST(io_unreadable)
{
    char dir[] = "/tmp/nextok_io_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[1024], fifo[1024];
    struct nextok_vocab *v = NULL;
    struct nextok_error e;
    /* A directory where tokenizer.json should be. */
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    CHECK(mkdir(path, 0700) == 0);
    CHECK_EQ_INT(nextok_vocab_load_hf_json(&v, dir, &e), NEXTOK_ERR_IO);
    CHECK(v == NULL && strstr(e.msg, "tokenizer.json") && strstr(e.msg, "not a regular file"));
    CHECK_EQ_INT(nextok_vocab_load_hf_json(&v, path, &e), NEXTOK_ERR_IO);
    rmdir(path);
    /* A FIFO: refused without opening it (opening would block). */
    snprintf(fifo, sizeof fifo, "%s/fifo.json", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_EQ_INT(nextok_vocab_load_file(&v, fifo, &e), NEXTOK_ERR_IO);
    CHECK(v == NULL && strstr(e.msg, "fifo.json"));
    CHECK_EQ_INT(nextok_vocab_load_gguf(&v, fifo, &e), NEXTOK_ERR_IO);
    CHECK_EQ_INT(nextok_vocab_load_tiktoken(&v, fifo, NULL, 0, &e), NEXTOK_ERR_IO);
    unlink(fifo);
    /* A config file next to tokenizer.json that is not a file. */
    write_file(dir, "tokenizer.json", wordpiece_json);
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    CHECK(mkdir(path, 0700) == 0);
    CHECK_EQ_INT(nextok_vocab_load_hf_json(&v, dir, &e), NEXTOK_ERR_IO);
    CHECK(v == NULL && strstr(e.msg, "tokenizer_config.json"));
    rmdir(path);
    CHECK_OK(nextok_vocab_load_hf_json(&v, dir, &e));
    nextok_vocab_free(v);
    v = NULL;
    /* No permission to read (root may read anything: then it loads). */
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    CHECK(chmod(path, 0) == 0);
    nextok_status rc = nextok_vocab_load_file(&v, path, &e);
    if (geteuid() != 0) CHECK(rc == NEXTOK_ERR_IO && strstr(e.msg, "Permission denied"));
    else CHECK_OK(rc);
    nextok_vocab_free(v);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    RUN(nomem_hf_json_mem);
    RUN(nomem_hf_json_files);
    RUN(nomem_gpt2);
    RUN(nomem_gguf_tiktoken);
    RUN(nomem_add_eog);
    RUN(io_unreadable);
    return harness_done();
}
