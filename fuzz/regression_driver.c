/* Replays every file of the corpus directories given on the command line
 * through LLVMFuzzerTestOneInput (for CI without libFuzzer). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    size_t n_files = 0;
    for (int a = 1; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st) != 0) {
            fprintf(stderr, "corpus %s: not found\n", argv[a]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[a]) == 0) n_files++;
            continue;
        }
        DIR *d = opendir(argv[a]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
            if (run_file(path) == 0) n_files++;
        }
        if (d) closedir(d);
    }
    printf("replayed %zu inputs\n", n_files);
    return n_files > 0 ? 0 : 1;
}
