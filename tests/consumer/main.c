/* A program built against an installed nextok: links and runs a chain. */
#include <nextok.h>
#include <stdio.h>

int main(void)
{
    struct nextok_sampling_params p = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    p.n_vocab = 4;
    p.seed = 1;
    struct nextok_chain *c = NULL;
    if (nextok_chain_init_sampling(&c, &p, NULL) != NEXTOK_OK) return 1;
    const float row[4] = {0.0f, 5.0f, 1.0f, 0.5f};
    int32_t tok = -1;
    nextok_status rc = nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok);
    nextok_chain_free(c);
    printf("nextok %s: token %d\n", nextok_version(), (int)tok);
    return rc == NEXTOK_OK && tok == 1 ? 0 : 1;
}
