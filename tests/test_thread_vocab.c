/*
 * A loaded vocabulary is read-only and may be shared by threads (nextok.h).
 * Four threads each stream their own id sequence through their own
 * detokenizer and session built on ONE shared vocabulary, at the same time;
 * each thread's text must equal the single-threaded whole decode of the same
 * ids. Run under TSan by `make test-tsan` (the name matches 'thread').
 */
#include "nextok.h"
#include "harness.h"

#include <pthread.h>
#include <stdint.h>

#define N_THREADS 4
#define N_IDS 4000

struct job {
    const struct nextok_vocab *vocab;
    int32_t ids[N_IDS];
    char *streamed;
    size_t streamed_len;
    nextok_status rc;
};

static void *stream_ids(void *arg)
{
    struct job *j = arg;
    struct nextok_detok *d = NULL;
    j->rc = nextok_detok_init(&d, j->vocab, NULL, NULL);
    if (j->rc != NEXTOK_OK) return NULL;
    size_t cap = nextok_detok_bound(d, 1), got = 0, total = 0;
    j->streamed = malloc(cap * (N_IDS + 1));
    for (size_t i = 0; j->streamed && i <= N_IDS && j->rc == NEXTOK_OK; i++) {
        j->rc = i < N_IDS ? nextok_detok_feed(d, &j->ids[i], 1, j->streamed + total, cap, &got)
                          : nextok_detok_flush(d, j->streamed + total, cap, &got);
        total += got;
    }
    j->streamed_len = total;
    nextok_detok_free(d);
    return NULL;
}

TEST(shared_vocab_concurrent_detok)
{
    char path[1024];
    fixture_path(path, sizeof path, "vocab/gguf/ggml-vocab-phi-3.gguf");
    struct nextok_vocab *v = NULL;
    struct nextok_error e = {NEXTOK_OK, ""};
    nextok_status rc = nextok_vocab_load_file(&v, path, &e);
    CHECK_MSG(rc == NEXTOK_OK, "%s: %s: %s", path, nextok_status_name(rc), e.msg);
    if (rc != NEXTOK_OK) return;
    static struct job jobs[N_THREADS];
    pthread_t th[N_THREADS];
    uint64_t s = 99;
    int32_t n = nextok_vocab_n_tokens(v);
    for (int t = 0; t < N_THREADS; t++) {
        jobs[t].vocab = v;
        for (int i = 0; i < N_IDS; i++) { /* random ids, byte tokens included */
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            jobs[t].ids[i] = (int32_t)((s >> 33) % (uint64_t)n);
        }
    }
    for (int t = 0; t < N_THREADS; t++) CHECK(pthread_create(&th[t], NULL, stream_ids, &jobs[t]) == 0);
    for (int t = 0; t < N_THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < N_THREADS; t++) {
        CHECK_OK(jobs[t].rc);
        size_t need = 0;
        nextok_vocab_decode(v, jobs[t].ids, N_IDS, NULL, NULL, 0, &need);
        char *whole = malloc(need + 1);
        CHECK_OK(nextok_vocab_decode(v, jobs[t].ids, N_IDS, NULL, whole, need, &need));
        CHECK_EQ_INT(jobs[t].streamed_len, need);
        CHECK(jobs[t].streamed && memcmp(whole, jobs[t].streamed, need) == 0);
        free(whole);
        free(jobs[t].streamed);
    }
    nextok_vocab_free(v);
}

int main(void)
{
    RUN(shared_vocab_concurrent_detok);
    return harness_done();
}
