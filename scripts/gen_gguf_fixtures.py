#!/usr/bin/env python3
"""Tiny GGUF files and transformers' own numbers for them (tests/fixtures/gguf).

Usage: VENV/bin/python scripts/gen_gguf_fixtures.py SHARED/fixtures tests/fixtures/gguf [--moe-only]

Writes, with PyPI's `gguf` package (gguf.GGUFWriter, gguf.quants.quantize / dequantize):
  * <name>.gguf: shared/fixtures' tiny llama, mistral, qwen2, phi3, gemma2 and gpt2 models and
    tests/fixtures/hf_arch's gemma3, stablelm and starcoder2 converted as llama.cpp's
    convert_hf_to_gguf.py lays them out (its tensor names, 2-D weights quantised, norms and
    biases F32, Q and K rows of the llama architecture permuted as its LlamaModel.permute does),
    at the quantisation types named in MODELS below.
  * golden.json: for each file, what transformers computes after loading it with
    AutoModelForCausalLM.from_pretrained(folder, gguf_file=name) in float32 and tie_weights()
    (as HFLM loads it): next-token log-probs, argmaxes and last-row log-softmax of the
    fixture's three inputs, and the log-likelihoods of a few text requests encoded as HFLM
    encodes them (with the llama fixture's tokenizer; none for the 128-token vocabularies), and
    an 8-token greedy generation (generate(do_sample=False)) from the first input.
  * dequant.json: for every ggml type gguf.quants can dequantise, random blocks (hex) and
    gguf.quants.dequantize's float32 output of them (hex, little-endian).
  * falcon_q8_0.gguf and bloom_q8_0.gguf: tests/fixtures/hf_arch's falcon_7b and bloom
    written as llama.cpp's FalconModel / BloomModel convert them (write_falcon, write_bloom),
    their vocabularies padded to the llama fixture's 512 tokens so that text requests run.
  * llama_block256.gguf: a random llama of 256-wide rows whose 2-D tensors are random blocks
    of every K-quant and IQ type (BLOCK256; gguf.quants has no quantiser for them), with its
    transformers goldens as above.
  * qwen3moe_q8_0.gguf and qwen2moe_q4_0.gguf: random one-layer MoE models laid out as
    llama.cpp's Qwen3MoeModel / Qwen2MoeModel write them (3-D ffn_*_exps expert tensors, the
    router ffn_gate_inp, qwen2moe's shared expert *_shexp and its vector gate), their expert
    sizes transformers' config defaults (768; 1408 and 5632), with transformers' goldens as
    above (write_moe; --moe-only rewrites these two and their golden.json entries alone).
  * Tokenizers in the GGUFs' metadata, written as llama.cpp's converter writes them
    (tokenizer.ggml.*): the llama fixture's sentencepiece model (tokens, scores, token types) in
    the llama and mistral files, a 512-token cut of GPT-2's byte-level BPE (tokens, merges,
    pre-tokenizer "qwen2") in the qwen2 file, and tokenizer-only files (tok_*.gguf) for the
    other builders and token kinds: a Gemma-shaped sentencepiece vocabulary (also in the gemma2
    file: gemma_tokenizer's respelling and position-ordered merges), a Llama-3-like byte-level vocabulary (pre "llama-bpe",
    add_bos_token, user-defined and mislabelled control tokens) and a Phi-3 sentencepiece one.
    tokenizer_golden.json: AutoTokenizer.from_pretrained(folder, gguf_file=name)'s encodings
    (with and without special tokens) and decodings of a sample of
    SHARED/../tokenizers/corpus.jsonl, and golden.json's own_tokenizer_requests: the reference's
    HFLM(pretrained=folder, gguf_file=name) log-likelihoods with that tokenizer.
"""

import json
import sys
from pathlib import Path

import gguf
import numpy as np
import torch
from gguf import GGMLQuantizationType as T
from safetensors.numpy import load_file
import sentencepiece
from transformers import AutoModelForCausalLM, AutoTokenizer

# name: (fixture, GGUF architecture, general.name, {tensor-name pattern: type}, default type)
MODELS = {
    "llama_q4_0": ("llama", "llama", "tiny llama", {}, T.Q4_0),
    # Every block-32 type and the float types in one file, layer by layer.
    "llama_mixed": ("llama", "llama", "tiny llama mixed", {
        "token_embd": T.Q8_0, "output.weight": T.Q4_1,
        "blk.0.attn_q": T.Q5_0, "blk.0.attn_k": T.Q5_1, "blk.0.attn_v": T.Q8_0,
        "blk.0.attn_output": T.Q4_0, "blk.0.ffn_up": T.BF16, "blk.0.ffn_gate": T.Q5_1,
        "blk.0.ffn_down": T.Q4_1, "blk.1.attn_q": T.F16, "blk.1.attn_k": T.BF16,
        "blk.1.attn_v": T.Q4_1, "blk.1.attn_output": T.Q5_0, "blk.1.ffn_down": T.F16,
        "blk.1.ffn_up": T.Q8_0, "blk.1.ffn_gate": T.Q4_0,
    }, T.Q4_0),
    # A Mistral converted by llama.cpp is a llama GGUF, and transformers reads it as Llama
    # (LlamaConfig: no sliding window) unless general.name is exactly "mistral":
    # load_gguf_checkpoint tests `"mistral" in model_name`, model_name being a list.
    "mistral_q5_1": ("mistral", "llama", "Mistral tiny", {}, T.Q5_1),
    "qwen2_q5_0": ("qwen2", "qwen2", "tiny qwen2", {}, T.Q5_0),
    # Phi-3 keeps its fused qkv_proj (attn_qkv) and gate_up_proj (ffn_up).
    "phi3_q8_0": ("phi3", "phi3", "tiny phi3", {"blk.1": T.Q4_1}, T.Q8_0),
    # Gemma2: norms stored plus one (llama.cpp's Gemma2Model), the sliding window and head_dim
    # from the metadata, soft-capping and query_pre_attn_scalar from Gemma2Config's defaults.
    "gemma2_q8_0": ("gemma2", "gemma2", "tiny gemma2", {"blk.0": T.Q5_1}, T.Q8_0),
    # Gemma3 (tests/fixtures/hf_arch/gemma3, a 128-token vocabulary: no text requests): norms
    # stored plus one, q/k norms included; Gemma3TextConfig's defaults for what no key maps to.
    "gemma3_q8_0": ("hf_arch/gemma3", "gemma3", "tiny gemma3", {"blk.1": T.Q4_0}, T.Q8_0),
    # StableLM (LayerNorms with biases, partial rotary, parallel residual): the fixture's
    # per-head q/k LayerNorms are left out, since no GGUF key maps to qk_layernorm.
    "stablelm_q5_0": ("hf_arch/stablelm", "stablelm", "tiny stablelm", {"blk.0": T.Q8_0}, T.Q5_0),
    # Starcoder2 (LayerNorms, biases everywhere, c_fc/c_proj as ffn_up/ffn_down): the mapping
    # reads no vocab_size, so the file carries a token list ("tokens") for transformers to count.
    "starcoder2_q8_0": ("hf_arch/starcoder2", "starcoder2", "tiny starcoder2", {"blk.1": T.Q4_1},
                        T.Q8_0),
}
# SHARED/fixtures/llama, set by main (the requests' tokenizer).
LLAMA_TOKENIZER = []
# Fixtures under tests/fixtures (the others are SHARED/fixtures').
REPO_FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"

REQUESTS = [
    ("Once upon a time", " there was a little girl"),
    ("The cat sat on the", " mat."),
    ("Tom and Lily", " went to the park to play"),
]

ARCH = {"llama": gguf.MODEL_ARCH.LLAMA, "qwen2": gguf.MODEL_ARCH.QWEN2,
        "phi3": gguf.MODEL_ARCH.PHI3, "gemma2": gguf.MODEL_ARCH.GEMMA2,
        "gemma3": gguf.MODEL_ARCH.GEMMA3, "stablelm": gguf.MODEL_ARCH.STABLELM,
        "starcoder2": gguf.MODEL_ARCH.STARCODER2}

# A llama of 256-wide rows (K-quants and the IQ types need 256-element blocks) with random
# blocks of each of those types, layer by layer (gguf.quants cannot quantise to them).
BLOCK256 = {
    "token_embd": T.Q4_K,
    "blk.0.attn_q": T.Q2_K, "blk.0.attn_k": T.Q3_K, "blk.0.attn_v": T.Q5_K,
    "blk.0.attn_output": T.Q6_K, "blk.0.ffn_gate": T.IQ2_XXS, "blk.0.ffn_up": T.IQ3_S,
    "blk.1.attn_q": T.IQ2_XS, "blk.1.attn_k": T.IQ2_S, "blk.1.attn_v": T.IQ3_XXS,
    "blk.1.attn_output": T.IQ1_S, "blk.1.ffn_gate": T.IQ1_M, "blk.1.ffn_up": T.IQ4_XS,
}
# ffn_down's rows are the 32-wide intermediate size (a small file): Q8_0 of random values.
# Where each type keeps its f16 scales (byte offsets in a block), set so that the weights come
# out small: random bytes elsewhere.
SCALE_OFFSETS = {T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208]}
SCALES = {T.Q2_K: 0.002, T.Q3_K: 0.0005, T.Q4_K: 0.00005, T.Q5_K: 0.00003, T.Q6_K: 0.00001,
          T.IQ2_XXS: 0.0005, T.IQ2_XS: 0.0005, T.IQ2_S: 0.0005, T.IQ3_XXS: 0.0005,
          T.IQ3_S: 0.002, T.IQ1_S: 0.005, T.IQ1_M: 0.005, T.IQ4_XS: 0.00005}

# Which tokenizer each file carries (write_tokenizer's kinds).
TOKENIZERS = {"llama_q4_0": "sentencepiece", "llama_mixed": "sentencepiece",
              "llama_block256": "sentencepiece", "phi3_q8_0": "sentencepiece",
              "gemma2_q8_0": "gemma", "gemma3_q8_0": None, "stablelm_q5_0": None,
              "starcoder2_q8_0": "tokens",
              "mistral_q5_1": "sentencepiece", "qwen2_q5_0": "qwen2"}
# Tokenizer-only files: name -> (architecture, kind).
TOKENIZER_FILES = {"tok_llama3": ("llama", "llama3"), "tok_phi3": ("phi3", "phi3"),
                   "tok_gemma3": ("gemma3", "gemma")}
# Strings that exercise the added tokens, besides the corpus sample.
EXTRA_STRINGS = ["<s>Hello</s>", "<|endoftext|>The end.<|endoftext|>", "a <think>b</think> c",
                 "<|begin_of_text|>Hi<|end_of_text|>", "a b", "<|end|><|user|>ok",
                 "  two spaces", " leading", "x\n\n  y\t", "Once upon a time<unk>",
                 "<start_of_turn>user\nhi<end_of_turn>", "a   b    c", "<bos>x<eos>", "tab\tend "]


def sentencepiece_vocab(fixtures):
    # llama.cpp's LlamaModel._create_vocab_sentencepiece: pieces, scores and token types.
    sp = sentencepiece.SentencePieceProcessor(model_file=str(fixtures / "llama" / "tokenizer.model"))
    tokens, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        kind = gguf.TokenType.NORMAL
        if sp.is_unknown(i):
            kind = gguf.TokenType.UNKNOWN
        elif sp.is_control(i):
            kind = gguf.TokenType.CONTROL
        elif sp.is_unused(i):
            kind = gguf.TokenType.UNUSED
        elif sp.is_byte(i):
            kind = gguf.TokenType.BYTE
        tokens.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        types.append(int(kind))
    return tokens, scores, types


def gpt2_vocab(fixtures, size):
    # GPT-2's first size-1 tokens (its 256 byte tokens, then one per merge in merge order) and
    # the merges that make them, then <|endoftext|>.
    tok_dir = fixtures.parent / "tokenizers" / "gpt2"
    vocab = json.loads((tok_dir / "vocab.json").read_text())
    by_id = {i: t for t, i in vocab.items()}
    merges = (tok_dir / "merges.txt").read_text().split("\n")[1:size - 256]
    return [by_id[i] for i in range(size - 1)] + ["<|endoftext|>"], merges


def gemma_vocab(fixtures):
    # A Gemma-shaped sentencepiece vocabulary on the llama fixture's pieces, as llama.cpp's
    # GemmaModel writes one: <pad> <eos> <bos> <unk> first, runs of spaces stored as real
    # spaces (which GemmaTokenizer looks up as "\u2581\u2581"), control turn markers, no merges,
    # and scores that do not follow the pieces' order (transformers sorts by position instead).
    tokens, scores, types = sentencepiece_vocab(fixtures)
    control, normal = int(gguf.TokenType.CONTROL), int(gguf.TokenType.NORMAL)
    swaps = {0: ("<pad>", control), 1: ("<eos>", control), 2: ("<bos>", control),
             3: ("<unk>", int(gguf.TokenType.UNKNOWN)), 4: ("<mask>", control),
             5: ("<start_of_turn>", control), 6: ("<end_of_turn>", control),
             7: ("  ", normal), 8: ("   ", normal), 9: ("\n\n", normal)}
    for i, (t, kind) in swaps.items():
        tokens[i], types[i] = t, kind
    rng = np.random.default_rng(3)
    scores = [float(x) for x in -rng.permutation(len(tokens))]
    return tokens, scores, types


def write_tokenizer(w, kind, fixtures, vocab_size=0):
    if kind == "tokens":
        # Only a token list of the model's size (no tokenizer is built from it here).
        w.add_token_list([f"<t{i}>" for i in range(vocab_size)])
        return
    if kind == "gemma":
        tokens, scores, types = gemma_vocab(fixtures)
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_bos_token_id(2)
        w.add_eos_token_id(1)
        w.add_unk_token_id(3)
        w.add_pad_token_id(0)
        w.add_add_bos_token(True)
        w.add_add_eos_token(False)
        return
    if kind in ("sentencepiece", "phi3"):
        tokens, scores, types = sentencepiece_vocab(fixtures)
        if kind == "phi3":
            tokens += ["<|end|>", "<|user|>"]
            scores += [0.0, 0.0]
            types += [int(gguf.TokenType.CONTROL)] * 2
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_unk_token_id(0)
        if kind == "phi3":
            w.add_bos_token_id(1)
            w.add_eos_token_id(512)
            w.add_add_bos_token(False)
        return
    tokens, merges = gpt2_vocab(fixtures, 512)
    types = [int(gguf.TokenType.NORMAL)] * (len(tokens) - 1) + [int(gguf.TokenType.CONTROL)]
    w.add_tokenizer_model("gpt2")
    if kind == "qwen2":
        w.add_tokenizer_pre("qwen2")
        w.add_bos_token_id(511)
        w.add_eos_token_id(511)
        w.add_pad_token_id(511)
        w.add_add_bos_token(False)
    else:
        # A Llama 3 file: its own control tokens (BOS, EOS), a user-defined one, and a control
        # token written with a space, which transformers leaves out of a byte-level vocabulary.
        tokens[-1] = "<|begin_of_text|>"
        tokens += ["<|end_of_text|>", "<think>", "a b"]
        types += [int(gguf.TokenType.CONTROL), int(gguf.TokenType.USER_DEFINED),
                  int(gguf.TokenType.CONTROL)]
        w.add_tokenizer_pre("llama-bpe")
        w.add_bos_token_id(511)
        w.add_eos_token_id(512)
        w.add_add_bos_token(True)
        w.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)


def random_blocks(rng, qtype, shape):
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    n = shape[0] * shape[1] // block
    raw = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    scale = np.float16(SCALES[qtype]).view(np.uint16)
    if qtype == T.IQ1_M:
        # The f16 scale is the top nibbles of the four scale words ending the block.
        words = raw[:, 48:56].copy().view(np.uint16)
        for i in range(4):
            words[:, i] = (words[:, i] & 0x0FFF) | (((scale >> (4 * i)) & 0xF) << 12)
        raw[:, 48:56] = words.view(np.uint8)
    else:
        for off in SCALE_OFFSETS.get(qtype, [0]):
            raw[:, off:off + 2] = np.array([scale], dtype=np.uint16).view(np.uint8)
    return raw.reshape(shape[0], -1)


def write_block256(path, fixtures):
    rng = np.random.default_rng(256)
    hidden, inter, heads, kv_heads, layers, vocab = 256, 32, 2, 1, 2, 512
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny llama k-quants and iq")
    w.add_context_length(128)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    w.add_feed_forward_length(inter)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(hidden // heads)
    w.add_vocab_size(vocab)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    write_tokenizer(w, "sentencepiece", fixtures)
    head_dim = hidden // heads
    shapes = {"attn_q": (hidden, hidden), "attn_k": (kv_heads * head_dim, hidden),
              "attn_v": (kv_heads * head_dim, hidden), "attn_output": (hidden, hidden),
              "ffn_gate": (inter, hidden), "ffn_up": (inter, hidden)}
    # numpy shapes (rows, row width); the embedding is tied (no output.weight).
    w.add_tensor("token_embd.weight", random_blocks(rng, BLOCK256["token_embd"], (vocab, hidden)),
                 raw_dtype=BLOCK256["token_embd"])
    w.add_tensor("output_norm.weight", (1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32))
    for i in range(layers):
        for norm in ("attn_norm", "ffn_norm"):
            w.add_tensor(f"blk.{i}.{norm}.weight",
                         (1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32))
        for t, shape in shapes.items():
            qtype = BLOCK256[f"blk.{i}.{t}"]
            w.add_tensor(f"blk.{i}.{t}.weight", random_blocks(rng, qtype, shape), raw_dtype=qtype)
        down = (0.05 * rng.standard_normal((hidden, inter))).astype(np.float32)
        w.add_tensor(f"blk.{i}.ffn_down.weight", gguf.quants.quantize(down, T.Q8_0),
                     raw_dtype=T.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# Random qwen2moe / qwen3moe models as llama.cpp's Qwen2MoeModel / Qwen3MoeModel write them,
# whose expert sizes are the config classes' defaults (transformers maps no key to them): one
# layer, two experts of which one is used, 32-wide rows (block-32 types only).
# name: (architecture, {tensor-name pattern: type}, default type, expert size, shared size)
MOE = {
    "qwen3moe_q8_0": ("qwen3moe", {}, T.Q8_0, 768, 0),
    "qwen2moe_q4_0": ("qwen2moe", {"blk.0.ffn_gate_inp.": T.Q8_0, "blk.0.attn": T.Q8_0}, T.Q4_0,
                      1408, 5632),
}


def write_moe(path, name, fixtures):
    arch, types, default, expert, shared = MOE[name]
    rng = np.random.default_rng(len(name) * 1000 + expert)
    hidden, heads, kv_heads, head_dim, layers, vocab, experts = 32, 2, 1, 16, 1, 512, 2
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name("tiny " + arch)
    w.add_context_length(128)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    w.add_feed_forward_length(shared or expert)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(vocab)
    w.add_expert_count(experts)
    w.add_expert_used_count(1)
    w.add_expert_feed_forward_length(expert)
    if shared:
        w.add_expert_shared_feed_forward_length(shared)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    write_tokenizer(w, "sentencepiece", fixtures)

    def rand(shape, std):
        return (std * rng.standard_normal(shape)).astype(np.float32)

    # numpy shapes; the embedding is tied (no output.weight).
    tensors = {"token_embd.weight": rand((vocab, hidden), 0.15),
               "output_norm.weight": 1 + rand(hidden, 0.1)}
    for i in range(layers):
        b = f"blk.{i}."
        tensors.update({
            b + "attn_norm.weight": 1 + rand(hidden, 0.1),
            b + "ffn_norm.weight": 1 + rand(hidden, 0.1),
            b + "attn_q.weight": rand((heads * head_dim, hidden), 0.2),
            b + "attn_k.weight": rand((kv_heads * head_dim, hidden), 0.2),
            b + "attn_v.weight": rand((kv_heads * head_dim, hidden), 0.2),
            b + "attn_output.weight": rand((hidden, heads * head_dim), 0.2),
            b + "ffn_gate_inp.weight": rand((experts, hidden), 0.5),
            b + "ffn_gate_exps.weight": rand((experts, expert, hidden), 0.1),
            b + "ffn_up_exps.weight": rand((experts, expert, hidden), 0.1),
            b + "ffn_down_exps.weight": rand((experts, hidden, expert), 0.05),
        })
        if arch == "qwen3moe":
            tensors[b + "attn_q_norm.weight"] = 1 + rand(head_dim, 0.1)
            tensors[b + "attn_k_norm.weight"] = 1 + rand(head_dim, 0.1)
        else:
            # Qwen2MoeConfig's qkv_bias; the shared expert's gate a vector, as llama.cpp writes it.
            tensors[b + "attn_q.bias"] = rand(heads * head_dim, 0.1)
            tensors[b + "attn_k.bias"] = rand(kv_heads * head_dim, 0.1)
            tensors[b + "attn_v.bias"] = rand(kv_heads * head_dim, 0.1)
            tensors[b + "ffn_gate_inp_shexp.weight"] = rand(hidden, 0.5)
            tensors[b + "ffn_gate_shexp.weight"] = rand((shared, hidden), 0.1)
            tensors[b + "ffn_up_shexp.weight"] = rand((shared, hidden), 0.1)
            tensors[b + "ffn_down_shexp.weight"] = rand((hidden, shared), 0.03)
    for gname, t in tensors.items():
        qtype = T.F32
        if t.ndim >= 2:
            qtype = default
            for pat, qt in types.items():
                if gname.startswith(pat):
                    qtype = qt
        if qtype == T.F32:
            w.add_tensor(gname, t)
        else:
            w.add_tensor(gname, gguf.quants.quantize(t, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_tokenizer_file(path, arch, kind, fixtures):
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name("tokenizer only")
    w.add_context_length(64)
    w.add_embedding_length(8)
    w.add_block_count(1)
    w.add_feed_forward_length(8)
    w.add_head_count(2)
    w.add_head_count_kv(2)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(4)
    write_tokenizer(w, kind, fixtures)
    w.add_tensor("token_embd.weight", np.zeros((8, 8), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def corpus_sample(fixtures):
    # The first 6 strings of each category of the shared corpus, and EXTRA_STRINGS.
    rows = [json.loads(line) for line in
            (fixtures.parent / "tokenizers" / "corpus.jsonl").read_text().split("\n") if line]
    taken, out = {}, []
    for r in rows:
        if taken.get(r["category"], 0) < 6:
            taken[r["category"]] = taken.get(r["category"], 0) + 1
            out.append(r["text"])
    return out + EXTRA_STRINGS


def tokenizer_golden(out_dir, names, strings):
    g = {"strings": strings, "files": {}}
    for name in names:
        tok = AutoTokenizer.from_pretrained(str(out_dir), gguf_file=name + ".gguf")
        ids = [tok(s)["input_ids"] for s in strings]
        g["files"][name] = {
            "vocab_size": len(tok),
            "special": {k: getattr(tok, k) for k in ("bos_token", "eos_token", "unk_token",
                                                     "pad_token")},
            "chat_template": tok.chat_template,
            "ids": ids,
            "ids_no_special": [tok(s, add_special_tokens=False)["input_ids"] for s in strings],
            "decoded": [tok.decode(i) for i in ids],
            "decoded_skip_special": [tok.decode(i, skip_special_tokens=True) for i in ids],
        }
    return g


def own_tokenizer_requests(out_dir, name):
    # The reference's HFLM with no tokenizer=: AutoTokenizer(pretrained, gguf_file=...).
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    lm = HFLM(pretrained=str(out_dir), gguf_file=name + ".gguf", device="cpu", batch_size=1)
    reqs = [Instance("loglikelihood", {}, (c, x), 0) for c, x in REQUESTS]
    out = lm.loglikelihood(reqs, disable_tqdm=True)
    return [{"context": c, "continuation": x, "ids": lm.tok_encode(c + x), "logprob": o[0],
             "is_greedy": o[1]} for (c, x), o in zip(REQUESTS, out)]


def permute(w, n_head):
    # llama.cpp's convert_hf_to_gguf.py LlamaModel.permute: rotary pairs interleaved.
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def write_gguf(path, fixture_dir, arch, name, types, default, tokenizer):
    cfg = json.loads((fixture_dir / "config.json").read_text())
    weights = load_file(str(fixture_dir / "model.safetensors"))
    n_layers = cfg["num_hidden_layers"]
    name_map = gguf.get_tensor_name_map(ARCH[arch], n_layers)
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(n_layers)
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    if arch in ("stablelm", "starcoder2"):
        w.add_layer_norm_eps(cfg.get("layer_norm_eps") or cfg["norm_epsilon"])
    else:
        w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    rope = cfg["rope_parameters"]
    w.add_rope_freq_base((rope.get("full_attention") or rope)["rope_theta"])
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    w.add_rope_dimension_count(head_dim)
    w.add_vocab_size(cfg["vocab_size"])
    if arch in ("gemma2", "gemma3"):
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
        w.add_sliding_window(cfg["sliding_window"])
    if tokenizer not in ("qwen2", "gemma"):
        w.add_bos_token_id(cfg["bos_token_id"])
        w.add_eos_token_id(cfg["eos_token_id"])
        w.add_pad_token_id(cfg["pad_token_id"])
    w.add_file_type(int(gguf.LlamaFileType.MOSTLY_Q4_0))
    if tokenizer:
        write_tokenizer(w, tokenizer, LLAMA_TOKENIZER[0].parent, cfg["vocab_size"])
    for hf_name, t in weights.items():
        base, suffix = hf_name.rsplit(".", 1)
        if name_map.get_name(base) is None:
            continue  # no GGUF tensor (StableLM's per-head q/k norms)
        gname = name_map.get_name(base) + "." + suffix
        t = t.astype(np.float32)
        if arch in ("gemma2", "gemma3") and gname.endswith("norm.weight"):
            t = t + 1
        if arch == "llama" and gname.endswith("attn_q.weight"):
            t = permute(t, cfg["num_attention_heads"])
        if arch == "llama" and gname.endswith("attn_k.weight"):
            t = permute(t, cfg["num_key_value_heads"])
        qtype = T.F32
        if t.ndim == 2:
            qtype = default
            for pat, qt in types.items():
                if gname.startswith(pat):
                    qtype = qt
        if qtype == T.F32:
            w.add_tensor(gname, t)
        elif qtype == T.F16:
            w.add_tensor(gname, t.astype(np.float16))
        else:
            w.add_tensor(gname, gguf.quants.quantize(t, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_gpt2(path, fixture_dir, fixtures):
    # llama.cpp's GPT2Model: Conv1D weights transposed to [out, in]. transformers reads no
    # n_positions and no n_inner from a GGUF (GPT2Config's 1024 and 4 * n_embd), so the
    # fixture's 256 positions and 128-wide MLP are zero-padded to those sizes: the same function.
    cfg = json.loads((fixture_dir / "config.json").read_text())
    weights = {k: v.astype(np.float32) for k, v in
               load_file(str(fixture_dir / "model.safetensors")).items()}
    n_embd, n_layer = cfg["n_embd"], cfg["n_layer"]
    inner, full = cfg["n_inner"], 4 * cfg["n_embd"]
    name_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.GPT2, n_layer)
    w = gguf.GGUFWriter(str(path), "gpt2")
    w.add_name("tiny gpt2")
    w.add_context_length(1024)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(full)
    w.add_head_count(cfg["n_head"])
    w.add_layer_norm_eps(cfg["layer_norm_epsilon"])
    w.add_bos_token_id(cfg["bos_token_id"])
    w.add_eos_token_id(cfg["eos_token_id"])
    write_tokenizer(w, "tokens", fixtures, cfg["vocab_size"])
    for hf_name, t in weights.items():
        if hf_name.endswith(".attn.bias") or hf_name.endswith(".attn.masked_bias"):
            continue
        base, suffix = hf_name.rsplit(".", 1)
        gname = name_map.get_name(base) + "." + suffix
        if base == "transformer.wpe":
            t = np.concatenate([t, np.zeros((1024 - t.shape[0], n_embd), np.float32)])
        if base.endswith("mlp.c_fc"):
            pad = np.zeros(t.shape[:-1] + (full - inner,), np.float32)
            t = np.concatenate([t, pad], axis=-1)
        if base.endswith("mlp.c_proj") and suffix == "weight":
            t = np.concatenate([t, np.zeros((full - inner, n_embd), np.float32)])
        if t.ndim == 2 and base.split(".")[-1] in ("c_attn", "c_proj", "c_fc"):
            t = np.ascontiguousarray(t.T)
        if t.ndim == 2:
            qtype = T.Q4_1 if ".h.1." in hf_name else T.Q8_0
            w.add_tensor(gname, gguf.quants.quantize(t, qtype), raw_dtype=qtype)
        else:
            w.add_tensor(gname, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def pad_rows(t, rows, rng):
    # More vocabulary rows (random, as the fixtures' init), so the llama tokenizer's ids fit.
    extra = (0.02 * rng.standard_normal((rows - t.shape[0],) + t.shape[1:])).astype(np.float32)
    return np.concatenate([t, extra])


def add_quantised(w, gname, t, qtype):
    if t.ndim != 2 or qtype == T.F32:
        w.add_tensor(gname, t)
    else:
        w.add_tensor(gname, gguf.quants.quantize(t, qtype), raw_dtype=qtype)


def write_falcon(path, fixture_dir, fixtures):
    # llama.cpp's FalconModel (a Falcon-7B: multi-query, parallel attention from one norm), whose
    # metadata is all transformers has: FalconConfig's multi_query layout, ffn_hidden_size
    # 4 * hidden_size and no linear biases whatever the file says. So the fixture's 64-wide MLP
    # is zero-padded to 256 (the same function), and random attn_qkv biases are added that
    # transformers has no parameter for (it drops them: so must lm-eval). The fixture's own
    # lm_head is written as output.weight, which HFLM's tie_weights() replaces by the
    # embeddings. rope.freq_base, which llama.cpp does not write for Falcon but transformers
    # maps, is set to a non-default value.
    rng = np.random.default_rng(7)
    cfg = json.loads((fixture_dir / "config.json").read_text())
    weights = {k: v.astype(np.float32) for k, v in
               load_file(str(fixture_dir / "model.safetensors")).items()}
    hidden, n_head, n_layer = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    n_head_kv, head_dim, full = 1, hidden // n_head, 4 * hidden
    name_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.FALCON, n_layer)
    w = gguf.GGUFWriter(str(path), "falcon")
    w.add_name("tiny falcon")
    w.add_context_length(2048)
    w.add_tensor_data_layout("jploski")
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(full)
    w.add_block_count(n_layer)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_layer_norm_eps(cfg["layer_norm_epsilon"])
    w.add_rope_freq_base(20000.0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    write_tokenizer(w, "sentencepiece", fixtures)
    for hf_name, t in weights.items():
        base, suffix = hf_name.rsplit(".", 1)
        gname = name_map.get_name(base) + "." + suffix
        if base in ("transformer.word_embeddings", "lm_head"):
            t = pad_rows(t, 512, rng)
        if base.endswith("dense_h_to_4h"):
            t = np.concatenate([t, np.zeros((full - t.shape[0],) + t.shape[1:], np.float32)])
        if base.endswith("dense_4h_to_h") and suffix == "weight":
            t = np.concatenate([t, np.zeros((hidden, full - t.shape[1]), np.float32)], axis=1)
        if base.endswith("query_key_value"):
            # FalconModel.modify_tensors: kv groups [q..., k, v] to [q heads; k; v] (the same
            # rows for one kv group).
            qkv = t.reshape(n_head_kv, n_head // n_head_kv + 2, head_dim, hidden)
            t = np.concatenate([qkv[:, :-2].reshape(-1, hidden), qkv[:, [-2]].reshape(-1, hidden),
                                qkv[:, [-1]].reshape(-1, hidden)])
            w.add_tensor(gname.replace(".weight", ".bias"),
                         rng.standard_normal(t.shape[0]).astype(np.float32))
        add_quantised(w, gname, t, T.Q4_1 if ".h.1." in hf_name else T.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_bloom(path, fixture_dir, fixtures):
    # llama.cpp's BloomModel: query_key_value's rows per head [q, k, v] regrouped to
    # [q heads; k heads; v heads] (weight and bias), and the word embeddings written a second
    # time as output.weight (transformers then finds equal values and ties them).
    rng = np.random.default_rng(8)
    cfg = json.loads((fixture_dir / "config.json").read_text())
    weights = {k: v.astype(np.float32) for k, v in
               load_file(str(fixture_dir / "model.safetensors")).items()}
    hidden, n_head, n_layer = cfg["hidden_size"], cfg["n_head"], cfg["n_layer"]
    name_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BLOOM, n_layer)
    w = gguf.GGUFWriter(str(path), "bloom")
    w.add_name("tiny bloom")
    w.add_context_length(hidden)
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(4 * hidden)
    w.add_block_count(n_layer)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_layer_norm_eps(cfg["layer_norm_epsilon"])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    write_tokenizer(w, "sentencepiece", fixtures)
    for hf_name, t in weights.items():
        base, suffix = hf_name.rsplit(".", 1)
        gname = name_map.get_name(base.removeprefix("transformer.")) + "." + suffix
        if base == "transformer.word_embeddings":
            t = pad_rows(t, 512, rng)
        if base.endswith("query_key_value"):
            qkv = t.reshape((n_head, 3, hidden // n_head) + t.shape[1:])
            t = np.concatenate([qkv[:, i].reshape((-1,) + t.shape[1:]) for i in range(3)])
        qtype = T.Q5_1 if ".h.0." in hf_name else T.Q8_0
        add_quantised(w, gname, t, qtype)
        if base == "transformer.word_embeddings":
            add_quantised(w, "output.weight", t, qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def goldens(out_dir, name, fixture_dir):
    model = AutoModelForCausalLM.from_pretrained(str(out_dir), gguf_file=name + ".gguf",
                                                 dtype=torch.float32)
    model.eval()
    # As HFLM._create_model: tie_weights() after from_pretrained, which makes lm_head the
    # embeddings whenever the config says tied (falcon and bloom files always:
    # load_gguf_checkpoint's "exceptions"), even where from_pretrained kept an output.weight of
    # other values.
    model.tie_weights()
    fixture_golden = json.loads((fixture_dir / "golden.json").read_text())
    # Every fixture has the same tokenizer files; the llama folder's is read for all, since
    # transformers 5's AutoTokenizer builds another tokenizer from the same files in the qwen2
    # folder (its config.json's model_type chooses the class).
    tok = AutoTokenizer.from_pretrained(str(LLAMA_TOKENIZER[0]))
    g = {"config": {k: v for k, v in model.config.to_dict().items()
                    if k in ("model_type", "head_dim", "sliding_window", "tie_word_embeddings",
                             "layer_types", "query_pre_attn_scalar", "final_logit_softcapping",
                             "attn_logit_softcapping", "layer_norm_eps", "norm_epsilon", "layer_norm_epsilon",
                             "n_positions", "n_inner", "use_qkv_bias", "n_head", "n_layer",
                             "multi_query", "new_decoder_architecture", "parallel_attn", "bias",
                             "ffn_hidden_size", "num_kv_heads", "num_experts",
                             "num_experts_per_tok", "moe_intermediate_size",
                             "shared_expert_intermediate_size", "norm_topk_prob",
                             "use_parallel_residual",
                             "num_key_value_heads", "max_position_embeddings", "rope_parameters",
                             "rms_norm_eps", "vocab_size", "bos_token_id", "eos_token_id")},
         "inputs": [], "requests": []}
    with torch.no_grad():
        for inp in fixture_golden["inputs"]:
            ids = inp["input_ids"]
            lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
            nxt = [lp[i, ids[i + 1]].item() for i in range(len(ids) - 1)]
            g["inputs"].append({"input_ids": ids, "next_token_logprobs": nxt,
                                "argmax": lp.argmax(-1).tolist(),
                                "last_row_logprobs": lp[-1].tolist()})
        # A short greedy generation from the first input.
        first = fixture_golden["inputs"][0]["input_ids"]
        out = model.generate(torch.tensor([first]), max_new_tokens=8, do_sample=False,
                             eos_token_id=None, pad_token_id=0)
        g["generation"] = {"prompt": first, "new_tokens": out[0, len(first):].tolist()}
        for ctx, cont in (REQUESTS if model.config.vocab_size >= 512 else []):
            # HFLM._encode_pair: the whole encoded, the context's tokens cut off its front.
            whole = tok(ctx + cont)["input_ids"]
            ctx_ids = tok(ctx)["input_ids"]
            cont_ids = whole[len(ctx_ids):]
            lp = torch.log_softmax(model(torch.tensor([whole])).logits[0].float(), -1)
            n = len(ctx_ids)
            total = sum(lp[n - 1 + i, c].item() for i, c in enumerate(cont_ids))
            greedy = all(lp[n - 1 + i].argmax().item() == c for i, c in enumerate(cont_ids))
            g["requests"].append({"context": ctx, "continuation": cont, "context_ids": ctx_ids,
                                  "continuation_ids": cont_ids, "logprob": total,
                                  "is_greedy": greedy})
    return g


def dequant_goldens():
    rng = np.random.default_rng(29)
    out = {}
    for qtype in T:
        if qtype in (T.F64, T.I8, T.I16, T.I32, T.I64):
            continue
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        nblocks = 4 if block < 256 else 2
        if block == 1:
            nblocks = 64
        for _ in range(100):
            raw = rng.integers(0, 256, size=nblocks * size, dtype=np.uint8)
            try:
                vals = gguf.quants.dequantize(raw, qtype).astype(np.float32)
            except NotImplementedError:
                vals = None
                break
            if np.all(np.isfinite(vals)):
                break
        if vals is None:
            continue
        out[qtype.name] = {"type": int(qtype), "elements": int(vals.size),
                           "blocks_hex": raw.tobytes().hex(),
                           "float32_hex": vals.astype("<f4").tobytes().hex()}
    return out


def main():
    fixtures, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    LLAMA_TOKENIZER.append(fixtures / "llama")
    if sys.argv[3:] == ["--moe-only"]:
        # The MoE files and their goldens alone, the other entries of golden.json kept.
        golden = json.loads((out_dir / "golden.json").read_text())
        for name in MOE:
            write_moe(out_dir / (name + ".gguf"), name, fixtures)
            golden["models"][name] = goldens(out_dir, name, fixtures / "llama")
            golden["models"][name]["fixture"] = "llama"
        (out_dir / "golden.json").write_text(json.dumps(golden, separators=(",", ":")) + "\n")
        return
    golden = {"meta": {"gguf": gguf.__version__ if hasattr(gguf, "__version__") else "",
                       "transformers": __import__("transformers").__version__,
                       "torch": torch.__version__}, "models": {}}
    for name, (fixture, arch, gname, types, default) in MODELS.items():
        fixture_dir = fixtures / fixture if (fixtures / fixture).is_dir() else REPO_FIXTURES / fixture
        write_gguf(out_dir / (name + ".gguf"), fixture_dir, arch, gname, types, default,
                   TOKENIZERS[name])
        golden["models"][name] = goldens(out_dir, name, fixture_dir)
        golden["models"][name]["fixture"] = fixture
        if TOKENIZERS[name] not in (None, "tokens"):
            golden["models"][name]["own_tokenizer_requests"] = own_tokenizer_requests(out_dir,
                                                                                       name)
    write_gpt2(out_dir / "gpt2_q8_0.gguf", fixtures / "gpt2", fixtures)
    golden["models"]["gpt2_q8_0"] = goldens(out_dir, "gpt2_q8_0", fixtures / "gpt2")
    golden["models"]["gpt2_q8_0"]["fixture"] = "gpt2"
    for name, writer, fixture in (("falcon_q8_0", write_falcon, "falcon_7b"),
                                  ("bloom_q8_0", write_bloom, "bloom")):
        writer(out_dir / (name + ".gguf"), REPO_FIXTURES / "hf_arch" / fixture, fixtures)
        golden["models"][name] = goldens(out_dir, name, REPO_FIXTURES / "hf_arch" / fixture)
        golden["models"][name]["fixture"] = "hf_arch/" + fixture
        golden["models"][name]["own_tokenizer_requests"] = own_tokenizer_requests(out_dir, name)
    write_block256(out_dir / "llama_block256.gguf", fixtures)
    golden["models"]["llama_block256"] = goldens(out_dir, "llama_block256", fixtures / "llama")
    golden["models"]["llama_block256"]["fixture"] = "llama"
    golden["models"]["llama_block256"]["own_tokenizer_requests"] = own_tokenizer_requests(
        out_dir, "llama_block256")
    for name in MOE:
        write_moe(out_dir / (name + ".gguf"), name, fixtures)
        golden["models"][name] = goldens(out_dir, name, fixtures / "llama")
        golden["models"][name]["fixture"] = "llama"
    for name, (arch, kind) in TOKENIZER_FILES.items():
        write_tokenizer_file(out_dir / (name + ".gguf"), arch, kind, fixtures)
    tok_golden = tokenizer_golden(out_dir, ["llama_q4_0", "qwen2_q5_0", "gemma2_q8_0",
                                            *TOKENIZER_FILES],
                                  corpus_sample(fixtures))
    (out_dir / "tokenizer_golden.json").write_text(
        json.dumps(tok_golden, ensure_ascii=False, separators=(",", ":")) + "\n")
    (out_dir / "golden.json").write_text(json.dumps(golden, separators=(",", ":")) + "\n")
    (out_dir / "dequant.json").write_text(json.dumps(dequant_goldens(), indent=0) + "\n")


if __name__ == "__main__":
    main()
