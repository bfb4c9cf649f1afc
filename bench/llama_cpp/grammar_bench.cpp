// Per-mask time of llama.cpp's grammar sampler, for bench/llama_cpp/grammar_compare.sh.
//
// usage: grammar_bench [--print-ids | --counts] VOCAB.gguf GRAMMAR.gbnf TEXTFILE [RUNS]
//
// Loads the vocabulary only (vocab_only), reads the GBNF grammar and TEXTFILE
// (exactly its bytes), and tokenizes the text with llama_tokenize
// (add_special = false: no BOS/EOS; parse_special = false). Then walks the
// ids as an engine would, RUNS times (default 3), each walk with a fresh
// sampler from llama_sampler_init_grammar(vocab, grammar, "root"):
//   for each id: fill a llama_token_data_array over the FULL vocabulary (all V
//   ids, logit 0, sorted = false, selected = -1; not timed), time
//   llama_sampler_apply on it (the full-vocabulary mask), check that the id's
//   logit is not -inf afterwards (allowed), then llama_sampler_accept the id.
// A walk stops at the first id that is not allowed (accepting it would throw).
// Prints one JSON line:
//   {"impl":"llama.cpp","vocab":"...","V":N,"masks":n,"p50_us":..,"p90_us":..,
//    "p99_us":..,"max_us":..,"mean_us":..,"allowed_all":true|false, ...}
// (percentiles: nearest rank over all masks of all walks).
//
// SentencePiece vocabularies (phi-3) put a space before the text
// (add_space_prefix), so the first id would spell " {" where the text has
// "{", and a grammar whose root starts with "{" rejects it. When the pieces
// of the ids spell " " + TEXT, the first id is replaced by the greedy longest
// match of its piece without the space over the vocabulary's pieces, so that
// the ids spell TEXT exactly (reported as "first_id_fixed":true).
//
// --print-ids: print the ids the walk uses, comma-separated, and exit.
// --counts: one walk; print the number of allowed ids after each mask,
// comma-separated, and exit.
//
// Built by bench/llama_cpp/build_grammar_bench.sh against the llama.cpp that
// bench/llama_cpp/build.sh builds.

#include "llama.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
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

static std::string piece_of(const llama_vocab * vocab, llama_token id) {
    char buf[256];
    int32_t k = llama_token_to_piece(vocab, id, buf, (int32_t) sizeof buf, 0, true);
    if (k >= 0) {
        return std::string(buf, (size_t) k);
    }
    std::string big((size_t) -k, '\0');
    k = llama_token_to_piece(vocab, id, &big[0], (int32_t) big.size(), 0, true);
    big.resize(k > 0 ? (size_t) k : 0);
    return big;
}

static int usage() {
    std::fprintf(stderr,
                 "usage: grammar_bench [--print-ids | --counts] VOCAB.gguf GRAMMAR.gbnf TEXTFILE [RUNS]\n");
    return 2;
}

int main(int argc, char ** argv) {
    bool print_ids = false;
    bool counts    = false;
    std::vector<const char *> pos;
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--print-ids") == 0) {
            print_ids = true;
        } else if (std::strcmp(argv[i], "--counts") == 0) {
            counts = true;
        } else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
            usage();
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            return usage();
        } else {
            pos.push_back(argv[i]);
        }
    }
    if (pos.size() < 3 || pos.size() > 4) {
        return usage();
    }
    const char * vocab_path   = pos[0];
    const char * grammar_path = pos[1];
    const char * text_path    = pos[2];
    int runs = 3;
    if (pos.size() == 4) {
        char * end = nullptr;
        long r = std::strtol(pos[3], &end, 10);
        if (*end || r < 1 || r > 100000) {
            return usage();
        }
        runs = (int) r;
    }

    std::string grammar, text;
    if (!read_file(grammar_path, grammar)) {
        std::fprintf(stderr, "grammar_bench: cannot read %s\n", grammar_path);
        return 1;
    }
    if (!read_file(text_path, text)) {
        std::fprintf(stderr, "grammar_bench: cannot read %s\n", text_path);
        return 1;
    }

    llama_log_set(quiet_log, nullptr);
    llama_backend_init();

    llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    llama_model * model = llama_model_load_from_file(vocab_path, mp);
    if (!model) {
        std::fprintf(stderr, "grammar_bench: cannot load vocabulary %s\n", vocab_path);
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int32_t V = llama_vocab_n_tokens(vocab);

    // tokenize (no BOS/EOS, special tokens as plain text)
    const int32_t len = (int32_t) text.size();
    int32_t n = llama_tokenize(vocab, text.data(), len, nullptr, 0, false, false);
    if (n < 0) {
        n = -n;
    }
    std::vector<llama_token> ids((size_t) n + 1);
    n = llama_tokenize(vocab, text.data(), len, ids.data(), (int32_t) ids.size(), false, false);
    if (n < 0) {
        std::fprintf(stderr, "grammar_bench: llama_tokenize failed (%d)\n", n);
        return 1;
    }
    ids.resize((size_t) n);

    // SPM space prefix: make the ids spell TEXT exactly
    bool fixed = false;
    {
        std::string spelled;
        for (llama_token id : ids) {
            spelled += piece_of(vocab, id);
        }
        if (!ids.empty() && spelled != text && spelled == " " + text) {
            std::string p0 = piece_of(vocab, ids[0]);
            if (!p0.empty() && p0[0] == ' ') {
                std::unordered_map<std::string, llama_token> by_piece;
                size_t longest = 0;
                for (llama_token id = 0; id < V; id++) {
                    if (llama_vocab_is_control(vocab, id) || llama_vocab_is_eog(vocab, id)) {
                        continue;
                    }
                    std::string p = piece_of(vocab, id);
                    if (p.empty()) {
                        continue;
                    }
                    longest = std::max(longest, p.size());
                    by_piece.emplace(p, id);  // first (lowest) id for a piece
                }
                std::string rest = p0.substr(1);
                std::vector<llama_token> repl;
                size_t at = 0;
                bool ok = true;
                while (at < rest.size()) {
                    size_t k = std::min(longest, rest.size() - at);
                    for (; k > 0; k--) {
                        auto it = by_piece.find(rest.substr(at, k));
                        if (it != by_piece.end()) {
                            repl.push_back(it->second);
                            break;
                        }
                    }
                    if (k == 0) {
                        ok = false;
                        break;
                    }
                    at += k;
                }
                if (ok) {
                    ids.erase(ids.begin());
                    ids.insert(ids.begin(), repl.begin(), repl.end());
                    fixed = true;
                }
            }
        }
    }

    if (print_ids) {
        std::string line;
        char b[16];
        for (size_t i = 0; i < ids.size(); i++) {
            std::snprintf(b, sizeof b, i ? ",%d" : "%d", ids[i]);
            line += b;
        }
        line += '\n';
        std::fwrite(line.data(), 1, line.size(), stdout);
        llama_model_free(model);
        llama_backend_free();
        return 0;
    }

    std::vector<llama_token_data> cur((size_t) V);
    std::vector<double> us;
    us.reserve(ids.size() * (size_t) runs);
    std::vector<int> allowed_counts;
    bool allowed_all = true;
    size_t stopped_at = ids.size();
    double init_us_sum = 0;
    if (counts) {
        runs = 1;
    }

    for (int r = 0; r < runs; r++) {
        auto ti0 = std::chrono::steady_clock::now();
        llama_sampler * smpl = llama_sampler_init_grammar(vocab, grammar.c_str(), "root");
        auto ti1 = std::chrono::steady_clock::now();
        if (!smpl) {
            std::fprintf(stderr, "grammar_bench: llama_sampler_init_grammar failed for %s\n", grammar_path);
            return 1;
        }
        init_us_sum += std::chrono::duration<double, std::micro>(ti1 - ti0).count();
        for (size_t i = 0; i < ids.size(); i++) {
            for (int32_t t = 0; t < V; t++) {
                cur[(size_t) t] = llama_token_data{ t, 0.0f, 0.0f };
            }
            llama_token_data_array arr = { cur.data(), cur.size(), -1, false };
            auto t0 = std::chrono::steady_clock::now();
            llama_sampler_apply(smpl, &arr);
            auto t1 = std::chrono::steady_clock::now();
            us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            if (counts) {
                int c = 0;
                for (size_t k = 0; k < arr.size; k++) {
                    c += !std::isinf(arr.data[k].logit);
                }
                allowed_counts.push_back(c);
            }
            // the sampler keeps the array in place (it only sets logits)
            const llama_token id = ids[i];
            bool ok = arr.data == cur.data() ? !std::isinf(cur[(size_t) id].logit) : false;
            if (arr.data != cur.data()) {
                for (size_t k = 0; k < arr.size; k++) {
                    if (arr.data[k].id == id) {
                        ok = !std::isinf(arr.data[k].logit);
                        break;
                    }
                }
            }
            if (!ok) {
                allowed_all = false;
                stopped_at = std::min(stopped_at, i);
                break;
            }
            try {
                llama_sampler_accept(smpl, id);
            } catch (const std::exception & e) {
                std::fprintf(stderr, "grammar_bench: accept of id %d at %zu threw: %s\n", id, i, e.what());
                allowed_all = false;
                stopped_at = std::min(stopped_at, i);
                break;
            }
        }
        llama_sampler_free(smpl);
    }

    if (counts) {
        std::string line;
        char b[16];
        for (size_t i = 0; i < allowed_counts.size(); i++) {
            std::snprintf(b, sizeof b, i ? ",%d" : "%d", allowed_counts[i]);
            line += b;
        }
        line += '\n';
        std::fwrite(line.data(), 1, line.size(), stdout);
        llama_model_free(model);
        llama_backend_free();
        return allowed_all ? 0 : 1;
    }

    std::vector<double> s = us;
    std::sort(s.begin(), s.end());
    auto pct = [&](double p) {  // nearest rank
        if (s.empty()) {
            return 0.0;
        }
        size_t k = (size_t) std::ceil(p / 100.0 * (double) s.size());
        k = k < 1 ? 1 : (k > s.size() ? s.size() : k);
        return s[k - 1];
    };
    double mean = 0;
    for (double x : s) {
        mean += x;
    }
    mean = s.empty() ? 0 : mean / (double) s.size();

    std::printf("{\"impl\":\"llama.cpp\",\"commit\":%s,\"vocab\":%s,\"grammar\":%s,\"text\":%s,\"V\":%d,"
                "\"ids\":%zu,\"runs\":%d,\"masks\":%zu,\"p50_us\":%.2f,\"p90_us\":%.2f,\"p99_us\":%.2f,"
                "\"max_us\":%.2f,\"mean_us\":%.2f,\"init_us\":%.1f,\"allowed_all\":%s,\"first_id_fixed\":%s",
                json_str(LLAMA_BENCH_COMMIT).c_str(), json_str(vocab_path).c_str(),
                json_str(grammar_path).c_str(), json_str(text_path).c_str(), V, ids.size(), runs,
                s.size(), pct(50), pct(90), pct(99), s.empty() ? 0.0 : s.back(), mean,
                init_us_sum / runs, allowed_all ? "true" : "false", fixed ? "true" : "false");
    if (!allowed_all) {
        std::printf(",\"stopped_at\":%zu", stopped_at);
    }
    std::printf("}\n");

    llama_model_free(model);
    llama_backend_free();
    return allowed_all ? 0 : 1;
}
