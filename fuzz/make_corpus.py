#!/usr/bin/env python3
"""Write the structured seeds of the fuzz corpora (standard library only).

    python3 fuzz/make_corpus.py [fuzz/corpus]

fuzz_sampling and fuzz_fused_diff read their parameters from the first bytes
of the input; random bytes rarely make a chain that does anything, so these
seeds spell out configurations that do: every profile, every fusable stage,
each dtype and selector, penalties and DRY with a history, masks, custom
orders, and rows with ties, huge and tiny values and flat stretches. Seeds are
named gen_*; other corpus files (hand-made, or merged from libFuzzer runs with
-merge=1) are left alone. The byte layouts mirror pick_params() in
fuzz_sampling.c and pick_setup()/make_row() in fuzz_fused_diff.c: change them
together. Rows never sit wholly in -66 .. -44: the fused path has known
defects there (fuzz/crashers/README.md) and the targets skip such inputs.
"""
import math
import os
import random
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
PROFILES = {"vllm": 0, "hf": 1, "llama": 2}
DTYPES = {"f32": 0, "f16": 1, "bf16": 2}


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "gen_" + name), "wb") as f:
        f.write(bytes(data))


def rows(kind, v, rng):
    """A few row shapes as float lists."""
    if kind == "peaked":
        r = [rng.uniform(-2, 2) for _ in range(v)]
        for i in rng.sample(range(v), min(v, 3)):
            r[i] += 8 + rng.random() * 4
        return r
    if kind == "ties":
        pal = [3.0, 1.5, 1.5, 0.0, -2.0]
        return [pal[rng.randrange(len(pal))] for _ in range(v)]
    if kind == "flat":
        return [0.25] * v
    if kind == "mags":
        pal = [1e30, -1e30, 3e38, -3e38, 1e-30, 0.0, 60000.0, -60000.0, 88.0, -88.0]
        return [pal[rng.randrange(len(pal))] for _ in range(v)]
    if kind == "ramp":
        return [i * 0.05 for i in range(v)]
    if kind == "neginf":
        r = [float("-inf")] * v
        r[rng.randrange(v)] = 1.0
        return r
    raise ValueError(kind)


def pack_row(vals, dtype):
    if dtype == "f32":
        return struct.pack("<%df" % len(vals), *vals)
    if dtype == "f16":
        out = b""
        for x in vals:
            try:
                out += struct.pack("<e", x)
            except OverflowError:
                out += struct.pack("<e", math.copysign(math.inf, x))
        return out
    out = b""  # bf16: the top half of the f32 bits (truncation is fine for seeds)
    for x in vals:
        out += struct.pack("<f", x)[2:]
    return out


# ---- fuzz_sampling: 24 header bytes, then the row ----------------------------

def sampling_header(profile="vllm", seed=1, selector=0, temp=64, top_k=4, ties=0, top_p=0,
                    min_p=0, typical=0, sigma=0, xtc=0, xtc_thr=0, repeat=0, freq=0, pres=0,
                    mirostat=0, dry=0, eps=0, eta=0, dynatemp=0, min_keep=1, nan=0, dtype="f32",
                    hist=1):
    """Bytes for pick_params(): 0 = the field's off value (top_k byte 4 -> 0)."""
    prof = PROFILES.get(profile, 7)  # 7: the invalid profile
    mir = {0: 0, 1: 5, 2: 6, 3: 7}[mirostat]
    return [prof, seed, selector, temp, top_k, ties, top_p, min_p, typical, sigma, xtc, xtc_thr,
            repeat, freq & 255, pres & 255, mir, dry, eps, eta, dynatemp, min_keep, nan,
            DTYPES[dtype], hist]


def gen_sampling():
    rng = random.Random(14)
    cases = {
        "vllm_plain": {},
        "vllm_topk": dict(top_k=44),
        "vllm_topp": dict(top_p=230),
        "vllm_minp": dict(min_p=20, temp=52),
        "vllm_typical": dict(typical=200),
        "vllm_sigma": dict(sigma=160),
        "vllm_all": dict(top_k=44, top_p=240, min_p=10, temp=51),
        "vllm_penalties": dict(top_k=24, repeat=60, freq=20, pres=-30 & 255),
        "vllm_greedy": dict(temp=0),
        "vllm_gumbel": dict(selector=1, top_p=200),
        "vllm_mirostat2": dict(mirostat=2),
        "vllm_xtc": dict(xtc=200, xtc_thr=40),
        "hf_topk_ties": dict(profile="hf", top_k=8),
        "hf_typical": dict(profile="hf", typical=170, temp=80),
        "hf_eps_eta": dict(profile="hf", eps=101, eta=77),
        "hf_dry": dict(profile="hf", dry=161, top_p=220),
        "llama_default": dict(profile="llama", top_k=44, top_p=242, min_p=13, temp=51),
        "llama_exact_ties": dict(profile="llama", top_k=7, ties=1),
        "llama_dynatemp": dict(profile="llama", dynatemp=129, temp=60),
        "llama_mirostat1": dict(profile="llama", mirostat=1, temp=51),
        "llama_mirostat2": dict(profile="llama", mirostat=2),
        "llama_dry_pen": dict(profile="llama", dry=201, repeat=40, top_k=44),
        "llama_negative_temp": dict(profile="llama", temp=255),
        "min_keep": dict(top_p=20, min_keep=3),
        "nan_skip": dict(nan=1, top_k=10),
        # validation: each should be rejected at init, with a message
        "bad_profile": dict(profile="bad"),
        "bad_top_p": dict(top_p=255),
        "bad_min_p": dict(min_p=255),
        "bad_typical": dict(typical=255),
        "bad_temp_vllm": dict(temp=255),
        "bad_mirostat": dict(mirostat=3),
        "bad_repeat": dict(repeat=255),
    }
    shapes = ["peaked", "ties", "flat", "mags", "ramp", "neginf"]
    dtypes = ["f32", "f16", "bf16"]
    for i, (name, kw) in enumerate(sorted(cases.items())):
        dtype = dtypes[i % 3]
        shape = shapes[i % len(shapes)]
        v = [1, 2, 7, 40, 300, 1000][i % 6] if not name.startswith("bad") else 16
        hdr = sampling_header(dtype=dtype, **kw)
        write("fuzz_sampling", "%s_%s_%s_%d" % (name, dtype, shape, v),
              hdr + list(pack_row(rows(shape, v, rng), dtype)))
    # NaN in the row: rejected (nan=0) or skipped (nan=1)
    row = [1.0, float("nan"), 2.0, 0.5]
    write("fuzz_sampling", "nan_error", sampling_header() + list(pack_row(row, "f32")))
    write("fuzz_sampling", "nan_skip", sampling_header(nan=1) + list(pack_row(row, "f32")))
    write("fuzz_sampling", "empty_row", sampling_header())


# ---- fuzz_fused_diff: pick_setup(), make_row() ------------------------------------

def u16(x):
    return [x & 255, (x >> 8) & 255]


def diff_input(profile="vllm", V=200, dtype="f32", all_off=True, temp=None, top_k=None,
               top_p=None, min_p=None, typical=None, sigma=None, xtc=None, eps=None, eta=None,
               dynatemp=None, ties=0, min_keep=1, penalties=None, dry=None, mirostat=0,
               mirostat_params=(160, 25), selector=0, seed=7, nan=0, bias=(), banned=(),
               allowed=None, min_tokens=None, ngram=None, order=None, prompt=(), hist=(),
               steps=3, draws=3, probe=0, mode=5, pal=(12, 4, 4, -8), rng_seed=1, row=b""):
    b = [PROFILES[profile]]
    if V <= 64:
        b += [V - 1]
    else:
        b += [0x80] + u16(V - 1)
    b += [DTYPES[dtype], 1 if all_off else 0]
    # pick_filters: a flag byte, then its parameters
    for val in (temp, top_k, top_p, min_p, typical, sigma):
        b += [0] if val is None else [1, val]
    for val in (xtc,):
        b += [0] if val is None else [1, val[0], val[1]]
    for val in (eps, eta):
        b += [0] if val is None else [1, val]
    b += [0] if dynatemp is None else [1, dynatemp[0], dynatemp[1]]
    b += [ties, min_keep]
    # pick_penalties
    b += [0] if penalties is None else [1] + list(penalties)
    b += [0] if dry is None else [1] + list(dry)
    b += [{0: 0, 1: 6, 2: 7}[mirostat]]
    if mirostat:
        b += list(mirostat_params)
    b += [selector, seed, nan]
    # pick_masks
    b += [len(bias)]
    for tok, bb in bias:
        b += u16(tok) + [bb & 255]
    b += [len(banned)]
    for tok in banned:
        b += u16(tok)
    if allowed is None:
        b += [0]
    else:
        b += [1, len(allowed) - 1]
        for tok in allowed:
            b += u16(tok)
    b += [0] if min_tokens is None else [1, min_tokens[0] - 1] + u16(min_tokens[1])
    b += [0] if ngram is None else [1, ngram - 1]
    # pick_order
    names = ["penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc",
             "temperature", "epsilon", "eta"]
    b += [0] if order is None else [1, len(order)] + [names.index(n) for n in order]
    b += [len(prompt)]
    for tok in prompt:
        b += u16(tok)
    b += [len(hist)]
    for tok in hist:
        b += u16(tok)
    b += [steps - 1, draws] + u16(probe)
    b += [mode] + [x & 255 for x in pal] + [rng_seed]
    return bytes(b) + row


def gen_fused_diff():
    rng = random.Random(1414)
    routes = {
        "topk": dict(top_k=30),
        "minp": dict(min_p=20),
        "topp": dict(top_p=220),
        "typical": dict(typical=150),
        "sigma": dict(sigma=60),
        "mirostat2": dict(mirostat=2),
        "dist": dict(),
        "greedy": dict(temp=0),
        "greedy_selector": dict(selector=2, top_k=10),
        "temp_topk": dict(temp=40, top_k=12),
        "temp_minp": dict(temp=51, min_p=13),
        "minp_temp_llama": dict(profile="llama", temp=51, min_p=13,
                                order=["min_p", "temperature"]),
        "topk_topp_minp": dict(top_k=40, top_p=242, min_p=13, temp=51),
    }
    extras = {
        "": {},
        "_pen": dict(penalties=(40, 20, 230, 32), prompt=(1, 2, 3, 2, 1), hist=(5, 1)),
        "_pen_fresh": dict(penalties=(70, 0, 0, 64)),  # a repetition penalty, no history
        "_dry": dict(dry=(160, 48, 1, 20), prompt=(3, 4, 5, 3, 4), hist=(5, 3)),
        "_bias": dict(bias=((3, 40), (9, 255), (0, -40)), banned=(4, 5)),
        "_allowed": dict(allowed=(1, 2, 3, 9, 11, 150)),
        "_mintok": dict(min_tokens=(2, 0), ngram=2, prompt=(0, 1, 0)),
    }
    modes = [(5, "peaks"), (1, "ties"), (3, "flat"), (4, "mags"), (0, "halves"), (6, "bell"),
             (7, "ints")]
    dtypes = ["f32", "f16", "bf16"]
    i = 0
    for rname, rkw in sorted(routes.items()):
        for ename, ekw in extras.items():
            for profile in ("vllm", "hf", "llama"):
                kw = dict(rkw)
                kw.update(ekw)
                kw.setdefault("profile", profile)
                if kw["profile"] != profile:
                    continue
                mode, mname = modes[i % len(modes)]
                if "typical" in rname and mode in (3,):  # flat rows: fine, but vary
                    mode, mname = 5, "peaks"
                V = [1, 2, 5, 64, 200, 1000, 4096][i % 7] if ename else [40, 300, 2000][i % 3]
                if ename == "_bias" and V < 16:  # its ids would all be token 0, banned
                    V = 64
                if mode == 0:  # raw halves hold NaNs: skip them rather than fail the row
                    kw["nan"] = 1
                dtype = dtypes[i % 3]
                kw.update(V=V, dtype=dtype, mode=mode, rng_seed=i & 255,
                          probe=rng.randrange(V), seed=i & 255)
                write("fuzz_fused_diff", "%s%s_%s_%s_%s_%d" % (rname, ename, profile, dtype,
                                                               mname, V), diff_input(**kw))
                i += 1
    # near -60 .. -48 spread out (no hang) with the other routes; order variety
    write("fuzz_fused_diff", "band_topk_f32", diff_input(top_k=20, mode=2, V=256))
    write("fuzz_fused_diff", "band_minp_bf16", diff_input(min_p=30, mode=2, V=256, dtype="bf16"))
    write("fuzz_fused_diff", "order_xtc_tail", diff_input(profile="llama", top_k=30,
          xtc=(255, 20), order=["top_k", "xtc", "temperature"], temp=60))
    write("fuzz_fused_diff", "order_sigma_first", diff_input(profile="llama", sigma=50,
          top_k=40, order=["penalties", "dry", "top_n_sigma", "top_k", "temperature"],
          penalties=(40, 0, 0, 10), hist=(1, 1, 1)))
    write("fuzz_fused_diff", "eps_eta_hf", diff_input(profile="hf", eps=40, eta=40))
    write("fuzz_fused_diff", "dynatemp_llama", diff_input(profile="llama", dynatemp=(64, 64),
                                                          temp=64, top_k=20))
    write("fuzz_fused_diff", "mirostat1", diff_input(mirostat=1, V=300))
    write("fuzz_fused_diff", "gumbel", diff_input(selector=1, top_p=200))
    write("fuzz_fused_diff", "nan_skip", diff_input(nan=1, top_k=5, mode=0, V=64,
                                                    row=bytes([0x01, 0x7e, 0x00, 0x3c] * 32)))
    write("fuzz_fused_diff", "nan_error", diff_input(top_k=5, mode=0, V=64,
                                                     row=bytes([0x01, 0x7e] * 64)))
    write("fuzz_fused_diff", "empty_order", diff_input(order=[]))
    write("fuzz_fused_diff", "empty", b"")


# ---- fuzz_gguf: small, valid GGUF vocabularies of each model --------------------

def gguf_str(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gguf_kv(key, vtype, value):
    """vtype: 'u8' 'i8' 'u16' 'i16' 'u32' 'i32' 'f32' 'bool' 'str' 'u64' 'i64' 'f64'
    or ('arr', elem_type, values)."""
    codes = {"u8": 0, "i8": 1, "u16": 2, "i16": 3, "u32": 4, "i32": 5, "f32": 6, "bool": 7,
             "str": 8, "u64": 10, "i64": 11, "f64": 12}
    fmts = {"u8": "<B", "i8": "<b", "u16": "<H", "i16": "<h", "u32": "<I", "i32": "<i",
            "f32": "<f", "bool": "<B", "u64": "<Q", "i64": "<q", "f64": "<d"}

    def val(t, x):
        return gguf_str(x) if t == "str" else struct.pack(fmts[t], x)
    out = gguf_str(key)
    if isinstance(vtype, tuple):
        _, et, xs = vtype
        return out + struct.pack("<IIQ", 9, codes[et], len(xs)) + b"".join(val(et, x) for x in xs)
    return out + struct.pack("<I", codes[vtype]) + val(vtype, value)


def gguf_file(kvs, version=3):
    return b"GGUF" + struct.pack("<IQQ", version, 0, len(kvs)) + b"".join(kvs)


def byte_level(b):
    """GPT-2's byte-to-unicode map for one byte."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    if b in keep:
        return chr(b)
    return chr(256 + [x for x in range(256) if x not in keep].index(b))


def gen_gguf():
    noise = [gguf_kv("general.architecture", "str", "llama"), gguf_kv("general.u8", "u8", 7),
             gguf_kv("general.i16", "i16", -3), gguf_kv("general.f64", "f64", 0.5),
             gguf_kv("general.u64", "u64", 1 << 40), gguf_kv("general.flag", "bool", 1),
             gguf_kv("general.tags", ("arr", "str", ["a", "bb"]), None),
             gguf_kv("general.ints", ("arr", "i32", [1, -2, 3]), None)]
    # llama (SentencePiece): <unk> <s> </s>, byte tokens, pieces
    spm = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + \
          ["\u2581a", "b", "\u2581", "\u2581\u2581", "\u00e9", "\u2581hello", "<tool>", "\u4e2d"]
    types = [2, 3, 3] + [6] * 256 + [1, 1, 1, 1, 1, 1, 4, 1]
    for name, extra, prefix in (("spm_prefix", [], 1), ("spm_noprefix", [], 0),
                                ("spm_noise_v2", noise, 1)):
        kvs = [gguf_kv("tokenizer.ggml.model", "str", "llama"),
               gguf_kv("tokenizer.ggml.tokens", ("arr", "str", spm), None),
               gguf_kv("tokenizer.ggml.token_type", ("arr", "i32", types), None),
               gguf_kv("tokenizer.ggml.scores", ("arr", "f32", [-float(i) for i in range(len(spm))]), None),
               gguf_kv("tokenizer.ggml.add_space_prefix", "bool", prefix),
               gguf_kv("tokenizer.ggml.bos_token_id", "u32", 1),
               gguf_kv("tokenizer.ggml.eos_token_id", "u32", 2),
               gguf_kv("tokenizer.ggml.unknown_token_id", "u32", 0),
               gguf_kv("tokenizer.ggml.add_bos_token", "bool", 1)] + extra
        write("fuzz_gguf", name + ".gguf", gguf_file(kvs, 2 if "v2" in name else 3))
    # gpt2 (byte-level BPE)
    bpe = [byte_level(b) for b in range(256)] + ["\u0120t", "he", "\u0120the", "<|endoftext|>"]
    kvs = [gguf_kv("tokenizer.ggml.model", "str", "gpt2"),
           gguf_kv("tokenizer.ggml.tokens", ("arr", "str", bpe), None),
           gguf_kv("tokenizer.ggml.token_type", ("arr", "i32", [1] * 259 + [3]), None),
           gguf_kv("tokenizer.ggml.merges", ("arr", "str", ["\u0120 t", "h e", "\u0120t he"]), None),
           gguf_kv("tokenizer.ggml.eos_token_id", "u32", 259),
           gguf_kv("tokenizer.ggml.eot_token_id", "u32", 259),
           gguf_kv("tokenizer.ggml.padding_token_id", "i32", -1)]
    write("fuzz_gguf", "gpt2.gguf", gguf_file(kvs))
    write("fuzz_gguf", "gpt2_no_types.gguf", gguf_file([kvs[0], kvs[1], kvs[3]]))
    # bert (WordPiece) and t5 (Unigram)
    wpm = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hug", "##ging", "the", "##s", ".", "\u00e9t\u00e9"]
    write("fuzz_gguf", "bert.gguf", gguf_file([
        gguf_kv("tokenizer.ggml.model", "str", "bert"),
        gguf_kv("tokenizer.ggml.tokens", ("arr", "str", wpm), None),
        gguf_kv("tokenizer.ggml.token_type", ("arr", "i32", [3, 2, 3, 3] + [1] * 6), None),
        gguf_kv("tokenizer.ggml.unknown_token_id", "u32", 1),
        gguf_kv("tokenizer.ggml.padding_token_id", "u32", 0)]))
    ugm = ["<pad>", "</s>", "<unk>", "\u2581", "\u2581the", "s", "\u2581a", "<0xC3>", "\u00e9"]
    for prefix in (0, 1):
        write("fuzz_gguf", "t5_prefix%d.gguf" % prefix, gguf_file([
            gguf_kv("tokenizer.ggml.model", "str", "t5"),
            gguf_kv("tokenizer.ggml.tokens", ("arr", "str", ugm), None),
            gguf_kv("tokenizer.ggml.scores", ("arr", "f32", [0.0, 0.0, 0.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0]), None),
            gguf_kv("tokenizer.ggml.token_type", ("arr", "i32", [3, 3, 2, 1, 1, 1, 1, 6, 1]), None),
            gguf_kv("tokenizer.ggml.add_space_prefix", "bool", prefix),
            gguf_kv("tokenizer.ggml.eos_token_id", "u32", 1)]))


# ---- fuzz_tiktoken: byte 0 picks the specials, then "base64 rank" lines --------

def gen_tiktoken():
    import base64
    singles = [bytes([b]) for b in range(256)]
    merged = [b" t", b"he", b" the", b"\xc3\xa9", b"\xe4\xb8\xad", b"\xf0\x9f\x98\x80", b"  "]
    lines = [base64.b64encode(t).decode() + " %d" % i for i, t in enumerate(singles + merged)]
    body = ("\n".join(lines) + "\n").encode()
    write("fuzz_tiktoken", "bytes_plain", b"\x00" + body)
    write("fuzz_tiktoken", "bytes_eot", b"\x01" + body)
    write("fuzz_tiktoken", "bytes_crlf", b"\x00" + body.replace(b"\n", b"\r\n"))
    write("fuzz_tiktoken", "bytes_no_final_newline", b"\x01" + body[:-1])
    # rank 2 absent, so the special <|x|> may take id 2
    gap = [l for l in lines if not l.endswith(" 2")]
    write("fuzz_tiktoken", "gap_specials", b"\x03" + ("\n".join(gap) + "\n").encode())


# ---- fuzz_tokenizer_json: small valid tokenizer.json files ----------------------

def gen_tokenizer_json():
    import json
    blevel = {b: byte_level(b) for b in range(256)}
    bpe_vocab = {blevel[b]: b for b in range(256)}
    bpe_vocab.update({"\u0120t": 256, "he": 257, "\u0120the": 258})
    docs = {
        "gpt2_bytelevel": {
            "added_tokens": [{"id": 259, "content": "<|endoftext|>", "special": True}],
            "model": {"type": "BPE", "vocab": bpe_vocab, "merges": ["\u0120 t", "h e", "\u0120t he"]},
            "decoder": {"type": "ByteLevel", "add_prefix_space": False},
            "post_processor": {"type": "ByteLevel"}},
        "bpe_pair_merges": {
            "model": {"type": "BPE", "vocab": bpe_vocab, "merges": [["\u0120", "t"], ["h", "e"]]},
            "decoder": {"type": "ByteLevel"}},
        "llama_spm_fallback": {
            "added_tokens": [{"id": 0, "content": "<unk>", "special": True},
                             {"id": 1, "content": "<s>", "special": True},
                             {"id": 2, "content": "</s>", "special": True}],
            "model": {"type": "BPE", "byte_fallback": True, "unk_token": "<unk>",
                      "vocab": dict([("<unk>", 0), ("<s>", 1), ("</s>", 2)] +
                                    [("<0x%02X>" % b, 3 + b) for b in range(256)] +
                                    [("\u2581a", 259), ("\u2581", 260), ("b", 261)]),
                      "merges": ["\u2581 a"]},
            "decoder": {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}}],
                               "special_tokens": {"<s>": {"id": "<s>", "ids": [1]}}}},
        "unigram_metaspace": {
            "added_tokens": [{"id": 4, "content": "</s>", "special": True}],
            "model": {"type": "Unigram", "unk_id": 0,
                      "vocab": [["<unk>", 0.0], ["\u2581", -1.0], ["\u2581a", -2.0], ["b", -3.0]]},
            "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"}},
        "wordpiece": {
            "added_tokens": [{"id": 0, "content": "[UNK]", "special": True},
                             {"id": 5, "content": "[SEP]", "special": True}],
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "vocab": {"[UNK]": 0, "hug": 1, "##ging": 2, ".": 3, "\u00e9": 4, "[SEP]": 5}},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True}},
    }
    for name, doc in docs.items():
        write("fuzz_tokenizer_json", name + ".json", json.dumps(doc).encode())
    # with tokenizer_config.json and generation_config.json after NUL bytes
    cfg = json.dumps({"bos_token": "<s>", "eos_token": {"content": "</s>"}, "add_bos_token": True,
                      "pad_token": None}).encode()
    gen = json.dumps({"bos_token_id": 1, "eos_token_id": [2, 0], "pad_token_id": 0}).encode()
    write("fuzz_tokenizer_json", "llama_with_configs",
          json.dumps(docs["llama_spm_fallback"]).encode() + b"\0" + cfg + b"\0" + gen)


# ---- fuzz_stop: flags, strings, min/max tokens, then (token, len, bytes) pushes -----

def gen_stop():
    def stop_input(flags, strings, min_tokens, max_tokens, pushes):
        b = [flags, len(strings)]
        for st in strings:
            b += [len(st) - 1] + list(st)
        b += [min_tokens, max_tokens]
        for tok, text in pushes:
            b += [tok, len(text)] + list(text)
        return bytes(b)
    words = [(5, b"Hello"), (6, b" wor"), (5, b"ld, "), (4, b"end "), (1, b"123-"),
             (1, b"4567"), (6, b"\n\n"), (0, b"\xc3"), (1, b"\xa9!")]
    write("fuzz_stop", "string_hit", stop_input(0, [b"o w"], 0, 0, words))
    write("fuzz_stop", "string_include", stop_input(1, [b"ld", b"xyz"], 0, 0, words))
    write("fuzz_stop", "string_utf8", stop_input(0, [b"\xc3\xa9"], 0, 0, words))
    write("fuzz_stop", "eos_token", stop_input(0, [], 0, 0, [(5, b"a"), (2, b""), (5, b"b")]))
    write("fuzz_stop", "eos_ignored_min", stop_input(2, [], 2, 0, [(2, b"x"), (2, b"y"), (3, b"z")]))
    write("fuzz_stop", "max_tokens", stop_input(0, [b"never"], 0, 3, words))
    write("fuzz_stop", "end_directive", stop_input(0, [b"wor"], 0, 0, [(5, b"Hel"), (0xf5, b"lo")]))
    write("fuzz_stop", "max_hold", stop_input(0x20, [b"aaaaaaaaaaaaaa"], 0, 0, [(5, b"a" * 15)] * 4))
    for k, name in enumerate(["phone", "blank_lines", "a_then_b", "lookbehind", "word"], 1):
        write("fuzz_stop", "regex_" + name, stop_input(k << 2, [], 0, 0,
              words + [(5, b"xyz"), (5, b" end "), (5, b"a..b")]))


if __name__ == "__main__":
    gen_sampling()
    gen_fused_diff()
    gen_gguf()
    gen_tiktoken()
    gen_tokenizer_json()
    gen_stop()
