// Tokenization speed of llama.cpp's llama_tokenize, for bench/llama_cpp/compare.sh.
//
// usage: tokenize_bench [--dump-ids | --json-ids] VOCAB.gguf TEXTFILE [RUNS]
//
// Loads the vocabulary only (vocab_only), reads TEXTFILE whole (exactly its
// bytes) and tokenizes it as ONE string with add_special = false (no BOS/EOS)
// and parse_special = false (special tokens written in the text are plain
// text). One untimed call learns the token count (and warms up); then RUNS
// (default 7) timed calls into a buffer of that size. Prints one JSON line:
//   {"tool":"llama.cpp","commit":"...","vocab":"...","text":"...","bytes":N,
//    "ids":N,"runs":R,"median_s":x,"min_s":y,"mb_per_s":z}
// with mb_per_s = bytes / 10^6 / median_s.
// --dump-ids: tokenize once and print the ids comma-separated on one line
// instead (the format of `nextok encode --no-bos`), for comparing ids.
// --json-ids: tokenize once and print {"ids":[...],"pieces":[...],
// "offsets":[...]}: pieces as the vocabulary spells them
// (llama_vocab_get_text), offsets the byte offset in TEXTFILE where each
// token's decoded bytes begin (cumulative llama_token_to_piece lengths, less
// the leading space an SPM vocabulary adds); check_ids.py uses them to show
// where two tokenizations differ.
//
// Built by bench/llama_cpp/build.sh against the llama.cpp it builds.

#include "llama.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef LLAMA_BENCH_COMMIT
#define LLAMA_BENCH_COMMIT "unknown"
#endif

static void quiet_log(enum ggml_log_level, const char *, void *) {}

static std::string json_str(const std::string & s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            o += '\\';
            o += (char) c;
        } else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            o += b;
        } else {
            o += (char) c;
        }
    }
    return o + "\"";
}

static bool read_file(const char * path, std::string & out) {
    FILE * f = std::fopen(path, "rb");
    if (!f) {
        return false;
    }
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
        out.append(buf, n);
    }
    bool ok = !std::ferror(f);
    std::fclose(f);
    return ok;
}

static int usage() {
    std::fprintf(stderr, "usage: tokenize_bench [--dump-ids | --json-ids] VOCAB.gguf TEXTFILE [RUNS]\n");
    return 2;
}

int main(int argc, char ** argv) {
    bool dump = false;
    bool json_ids = false;
    std::vector<const char *> pos;
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--dump-ids") == 0) {
            dump = true;
        } else if (std::strcmp(argv[i], "--json-ids") == 0) {
            json_ids = true;
        } else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
            usage();
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            return usage();
        } else {
            pos.push_back(argv[i]);
        }
    }
    if (pos.size() < 2 || pos.size() > 3) {
        return usage();
    }
    const char * vocab_path = pos[0];
    const char * text_path  = pos[1];
    int runs = 7;
    if (pos.size() == 3) {
        char * end = nullptr;
        long r = std::strtol(pos[2], &end, 10);
        if (*end || r < 1 || r > 1000000) {
            return usage();
        }
        runs = (int) r;
    }

    std::string text;
    if (!read_file(text_path, text)) {
        std::fprintf(stderr, "tokenize_bench: cannot read %s\n", text_path);
        return 1;
    }
    if (text.size() > (size_t) INT32_MAX) {
        std::fprintf(stderr, "tokenize_bench: %s is too large for llama_tokenize\n", text_path);
        return 1;
    }

    llama_log_set(quiet_log, nullptr);
    llama_backend_init();

    llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    llama_model * model = llama_model_load_from_file(vocab_path, mp);
    if (!model) {
        std::fprintf(stderr, "tokenize_bench: cannot load vocabulary %s\n", vocab_path);
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int32_t len = (int32_t) text.size();

    // untimed: learn the count (a negative return is minus the count needed)
    int32_t n = llama_tokenize(vocab, text.data(), len, nullptr, 0, false, false);
    if (n < 0) {
        n = -n;
    }
    std::vector<llama_token> ids((size_t) n + 1);

    if (dump || json_ids) {
        int32_t got = llama_tokenize(vocab, text.data(), len, ids.data(), (int32_t) ids.size(), false, false);
        if (got < 0) {
            std::fprintf(stderr, "tokenize_bench: llama_tokenize failed (%d)\n", got);
            return 1;
        }
        std::string line;
        line.reserve((size_t) got * (json_ids ? 24 : 6));
        char b[32];
        line += json_ids ? "{\"ids\":[" : "";
        for (int32_t i = 0; i < got; i++) {
            std::snprintf(b, sizeof b, i ? ",%d" : "%d", ids[(size_t) i]);
            line += b;
        }
        if (json_ids) {
            line += "],\"pieces\":[";
            for (int32_t i = 0; i < got; i++) {
                const char * t = llama_vocab_get_text(vocab, ids[(size_t) i]);
                line += i ? "," : "";
                line += json_str(t ? t : "");
            }
            std::vector<long long> off((size_t) got);
            long long pos = 0;
            std::vector<char> piece(256);
            for (int32_t i = 0; i < got; i++) {
                off[(size_t) i] = pos;
                int32_t k = llama_token_to_piece(vocab, ids[(size_t) i], piece.data(), (int32_t) piece.size(), 0, false);
                if (k < 0) {
                    piece.resize((size_t) -k);
                    k = llama_token_to_piece(vocab, ids[(size_t) i], piece.data(), (int32_t) piece.size(), 0, false);
                }
                pos += k > 0 ? k : 0;
            }
            long long shift = pos > (long long) text.size() ? pos - (long long) text.size() : 0;
            line += "],\"offsets\":[";
            for (int32_t i = 0; i < got; i++) {
                long long o = off[(size_t) i] - shift;
                std::snprintf(b, sizeof b, i ? ",%lld" : "%lld", o < 0 ? 0 : o);
                line += b;
            }
            line += "]}";
        }
        line += '\n';
        std::fwrite(line.data(), 1, line.size(), stdout);
        llama_model_free(model);
        llama_backend_free();
        return 0;
    }

    std::vector<double> secs;
    secs.reserve((size_t) runs);
    for (int r = 0; r < runs; r++) {
        auto t0 = std::chrono::steady_clock::now();
        int32_t got = llama_tokenize(vocab, text.data(), len, ids.data(), (int32_t) ids.size(), false, false);
        auto t1 = std::chrono::steady_clock::now();
        if (got != n) {
            std::fprintf(stderr, "tokenize_bench: run %d gave %d ids, expected %d\n", r, got, n);
            return 1;
        }
        secs.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    std::vector<double> s = secs;
    std::sort(s.begin(), s.end());
    double median = (s.size() % 2) ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
    double min = s.front();
    double mbps = median > 0 ? (double) text.size() / 1e6 / median : 0;

    std::printf("{\"tool\":\"llama.cpp\",\"commit\":%s,\"vocab\":%s,\"text\":%s,\"bytes\":%zu,"
                "\"ids\":%d,\"runs\":%d,\"median_s\":%.6f,\"min_s\":%.6f,\"mb_per_s\":%.3f}\n",
                json_str(LLAMA_BENCH_COMMIT).c_str(), json_str(vocab_path).c_str(),
                json_str(text_path).c_str(), text.size(), n, runs, median, min, mbps);

    llama_model_free(model);
    llama_backend_free();
    return 0;
}
