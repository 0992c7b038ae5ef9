#!/usr/bin/env python3
"""Tiny random-weight encoder-decoder models for the hf backend's seq2seq path, with
transformers' own outputs as goldens (tests/fixtures/hf_arch/<name>/), and the T5-style tokenizer
the zoo (scripts/compare_hf_zoo.py) gives them.

Two shapes, written as the Hub's checkpoints are (config.json and model.safetensors by hand,
since transformers 5 always ties T5's LM head when it saves):
  t5       v1.0 (t5-small's layout): ReLU feed-forward, tied embeddings (no lm_head tensor), the
           decoder output scaled by d_model**-0.5 before the LM head.
  flan_t5  v1.1 / Flan-T5: gated-gelu feed-forward, an lm_head.weight of its own
           (tie_word_embeddings false: no scaling). (transformers 5.23 sizes the decoder's cache
           by num_layers, so a num_decoder_layers other than num_layers fails there.)
Both with 8 relative-position buckets up to distance 20, so the 60-token inputs reach the
logarithmic buckets.

golden.json: "inputs": for each case, the encoder ids and the decoder labels, the log-prob of
each label given the encoder input and the labels before it (the decoder fed
[decoder_start] + labels[:-1], as T5's _shift_right does when HFLM passes labels=), the argmax
at each decoder position and the full log-softmax row of the last position; "batched": the cases
in one call, encoder inputs and labels right-padded with 0 and the encoder's padding masked (as
HFLM._loglikelihood_tokens batches them), the real positions' log-probs; "generate": greedy
generations (max_new_tokens 20) of two prompts alone and of both left-padded in one batch (as
HFLM's generate_until encodes them).

Each fixture also gets a T5-style tokenizer (t5_tokenizer: a Unigram model trained here on a
fixed English text, Metaspace pieces, no BOS, </s> appended by the post-processor, <pad> 0, </s> 1,
<unk> 2) and reference.json: what the reference itself (lm_eval 0.4.13's HFLM, which picks its
seq2seq backend from config.json) answers for the requests of REQUESTS, with batch_size 1 and
max_length 32 (so the rolling texts take several windows).

Usage (torch 2.15.0, transformers 5.23.0, tokenizers 0.23, CPU):
    python scripts/gen_hf_seq2seq_fixtures.py tests/fixtures/hf_arch [name ...]
"""
import json
import math
import os
import shutil
import sys

import torch
import transformers
from safetensors.torch import save_file
from transformers import AutoModelForSeq2SeqLM

TEXT = ("Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
        "Tom and Sue went to the store. They bought apples, bananas and milk. Then they went home and ate "
        "lunch together. It was a happy day for everyone. The cat sat on the mat and looked at the bird. "
        "One day, a little bird flew to the tree. Question: What is 2+2?\nAnswer: 4. The end.")
REQUESTS = {
    "loglikelihood": [["Once upon a time", ", there was a little girl named Lily."],
                      ["Once upon a time ", "there was a cat."],  # trailing space moves
                      ["", "Once upon a time"],                  # empty context: the prefix token
                      ["Question: What is 2+2?\nAnswer:", " 4"],
                      ["</s>Lily went", " to the park."],          # starts with the prefix token's text
                      ["The cat sat on the mat and looked at the bird. " * 3, " The end."]],
    "rolling": ["Once upon a time, there was a little girl named Lily.", "The end.",
                "Tom and Sue went to the store. They bought apples, bananas and milk. Then they went home."],
    "generate": [["Once upon a time", {"until": ["."], "max_gen_toks": 12}],
                 ["Lily went to the park", {"until": ["\n\n"], "max_gen_toks": 10}],
                 ["Tom had a big red ball. He", {"until": [], "max_gen_toks": 8, "do_sample": False}]],
}


def t5_tokenizer(vocab, d, texts=None):
    """A T5-style tokenizer.json (and tokenizer_config.json) of at most `vocab` pieces in folder d,
    trained on `texts` (default: TEXT)."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(vocab_size=vocab, special_tokens=["<pad>", "</s>", "<unk>"],
                                      unk_token="<unk>", shrinking_factor=0.75, max_piece_length=8)
    tok.train_from_iterator(texts or [TEXT] * 4, trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                       special_tokens=[("</s>", 1)])
    assert tok.token_to_id("<pad>") == 0 and tok.token_to_id("</s>") == 1 and tok.token_to_id("<unk>") == 2
    tok.save(os.path.join(d, "tokenizer.json"))
    with open(os.path.join(d, "tokenizer_config.json"), "w") as fh:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "</s>", "pad_token": "<pad>",
                   "unk_token": "<unk>", "model_max_length": 512}, fh, indent=2)
    return tok.get_vocab_size()


def reference_answers(d, max_length=32):
    """The reference's HFLM (seq2seq backend from config.json) on REQUESTS."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    lm = HFLM(pretrained=d, device="cpu", dtype="float32", batch_size=1, max_length=max_length)
    assert lm.backend == "seq2seq"
    mk = lambda t, args: Instance(request_type=t, doc={}, arguments=args, idx=0)
    ll = lm.loglikelihood([mk("loglikelihood", tuple(r)) for r in REQUESTS["loglikelihood"]], disable_tqdm=True)
    roll = lm.loglikelihood_rolling([mk("loglikelihood_rolling", (t,)) for t in REQUESTS["rolling"]],
                                    disable_tqdm=True)
    gen = lm.generate_until([mk("generate_until", (c, dict(k))) for c, k in REQUESTS["generate"]],
                            disable_tqdm=True)
    return {"max_length": max_length, "batch_size": 1, "requests": REQUESTS,
            "loglikelihood": [[float(a), bool(b)] for a, b in ll], "rolling": [float(x) for x in roll],
            "generate": gen}

VOCAB = 128
ENC_LENGTHS, DEC_LENGTHS = (7, 20, 60), (5, 12, 30)
COMMON = dict(d_model=64, d_kv=16, num_heads=4, relative_attention_num_buckets=8,
              relative_attention_max_distance=20, layer_norm_epsilon=1e-6, pad_token_id=0,
              eos_token_id=1, decoder_start_token_id=0, is_encoder_decoder=True)

SPECS = {
    "t5": dict(COMMON, d_ff=96, num_layers=2, feed_forward_proj="relu"),
    "flan_t5": dict(COMMON, d_ff=64, num_layers=2,
                    feed_forward_proj="gated-gelu", tie_word_embeddings=False),
}


def hub_config(kw, vocab):
    """config.json as the Hub's T5 checkpoints have it (no scale_decoder_outputs key)."""
    c = {"architectures": ["T5ForConditionalGeneration"], "model_type": "t5", "vocab_size": vocab,
         "n_positions": 512, "dropout_rate": 0.1, "initializer_factor": 1.0, "use_cache": True,
         "torch_dtype": "float16"}
    c.update(kw)
    return c


def randomize(model, seed, separate_head):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if name.endswith("layer_norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif "relative_attention_bias" in name:
                p.copy_(0.5 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.15 * torch.randn(p.shape, generator=g))
            p.copy_(p.half().float())
    head = None
    if separate_head:
        head = (0.15 * torch.randn(model.shared.weight.shape, generator=g)).half()
    return head


def write_checkpoint(model, head, cfg_json, d):
    os.makedirs(d, exist_ok=True)
    sd = {k: v.detach().half().contiguous() for k, v in model.state_dict().items()
          if k not in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")}
    if head is not None:
        sd["lm_head.weight"] = head
    save_file(sd, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(d, "config.json"), "w") as fh:
        json.dump(cfg_json, fh, indent=2)
    with open(os.path.join(d, "generation_config.json"), "w") as fh:
        json.dump({"decoder_start_token_id": cfg_json["decoder_start_token_id"],
                   "eos_token_id": cfg_json["eos_token_id"], "pad_token_id": cfg_json["pad_token_id"]}, fh)


def load(d):
    return AutoModelForSeq2SeqLM.from_pretrained(d, dtype=torch.float32, attn_implementation="eager").eval()


def r7(x):
    return float(f"{x:.7g}")


def margins(logits):
    top2 = logits.topk(2, dim=-1).values
    return (top2[..., 0] - top2[..., 1]).min().item()


def golden_for(model, cases, prompts):
    out = {"inputs": [], "batched": None, "generate": []}
    mm = math.inf
    start = model.config.decoder_start_token_id
    with torch.no_grad():
        for enc, labels in cases:
            logits = model(input_ids=torch.tensor([enc]), attention_mask=torch.ones(1, len(enc), dtype=torch.long),
                           labels=torch.tensor([labels])).logits[0].float()
            lp = logits.log_softmax(-1)
            mm = min(mm, margins(logits))
            out["inputs"].append({
                "encoder_ids": enc, "labels": labels, "decoder_input_ids": [start] + labels[:-1],
                "label_logprobs": [r7(lp[i, t].item()) for i, t in enumerate(labels)],
                "sum_logprob": r7(sum(lp[i, t].item() for i, t in enumerate(labels))),
                "argmax": lp.argmax(-1).tolist(),
                "last_row_logprobs": [r7(v) for v in lp[-1].tolist()]})
        S = max(len(e) for e, _ in cases)
        T = max(len(l) for _, l in cases)
        ids = torch.tensor([e + [0] * (S - len(e)) for e, _ in cases])
        mask = torch.tensor([[1] * len(e) + [0] * (S - len(e)) for e, _ in cases])
        labels = torch.tensor([l + [0] * (T - len(l)) for _, l in cases])
        lp = model(input_ids=ids, attention_mask=mask, labels=labels).logits.float().log_softmax(-1)
        rows, maxdiff = [], 0.0
        for b, (_, l) in enumerate(cases):
            vals = [lp[b, i, t].item() for i, t in enumerate(l)]
            maxdiff = max(maxdiff, max(abs(a - r) for a, r in zip(vals, out["inputs"][b]["label_logprobs"])))
            rows.append([r7(v) for v in vals])
        out["batched"] = {"padding_side": "right", "encoder_ids": ids.tolist(), "attention_mask": mask.tolist(),
                          "labels": labels.tolist(), "label_logprobs_real": rows,
                          "max_abs_diff_vs_unbatched": float(f"{maxdiff:.3g}")}
        kw = dict(max_new_tokens=20, do_sample=False, num_beams=1, eos_token_id=model.config.eos_token_id,
                  pad_token_id=model.config.pad_token_id)
        alone = []
        for p in prompts:
            g = model.generate(torch.tensor([p]), attention_mask=torch.ones(1, len(p), dtype=torch.long), **kw)
            alone.append(g[0, 1:].tolist())
            full = model(input_ids=torch.tensor([p]), decoder_input_ids=g).logits[0].float()
            mm = min(mm, margins(full[: g.shape[1] - 1]))
        L = max(len(p) for p in prompts)
        ids = torch.tensor([[0] * (L - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (L - len(p)) + [1] * len(p) for p in prompts])
        g = model.generate(ids, attention_mask=mask, **kw)
        batched = []
        for row in g[:, 1:].tolist():
            new = []
            for t in row:  # a finished row is padded after its EOS
                new.append(t)
                if t == model.config.eos_token_id:
                    break
            batched.append(new)
        for p, a, b in zip(prompts, alone, batched):
            out["generate"].append({"prompt_ids": p, "max_new_tokens": 20, "new_ids": a, "batched_new_ids": b,
                                    "stopped_on_eos": bool(len(a) < 20)})
    out["min_top2_logit_margin_all"] = r7(mm)
    return out, mm


def make_cases(seed):
    g = torch.Generator().manual_seed(2000 + seed)
    cases = []
    for n, m in zip(ENC_LENGTHS, DEC_LENGTHS):
        enc = torch.randint(3, VOCAB, (n - 1,), generator=g).tolist() + [1]  # </s> as T5 appends it
        labels = torch.randint(3, VOCAB, (m,), generator=g).tolist()
        cases.append((enc, labels))
    return cases, [cases[0][0], cases[1][0]]


def main():
    outdir, only = sys.argv[1], set(sys.argv[2:])
    for name, kw in SPECS.items():
        if only and name not in only:
            continue
        tmp = os.path.join(outdir, name + ".tmp")
        for seed in range(100):
            torch.manual_seed(seed)
            cfg_json = hub_config(kw, VOCAB)
            cfg = transformers.T5Config(**{k: v for k, v in cfg_json.items() if k not in ("architectures", "model_type", "torch_dtype")})
            model = transformers.T5ForConditionalGeneration(cfg).float().eval()
            head = randomize(model, seed, separate_head=not kw.get("tie_word_embeddings", True))
            shutil.rmtree(tmp, ignore_errors=True)
            write_checkpoint(model, head, cfg_json, tmp)
            re = load(tmp)  # what the reference's AutoModelForSeq2SeqLM loads
            cases, prompts = make_cases(seed)
            gold, mm = golden_for(re, cases, prompts)
            if mm > 3e-3:
                break
        d = os.path.join(outdir, name)
        shutil.rmtree(d, ignore_errors=True)
        os.rename(tmp, d)
        gold["meta"] = {"fixture": name, "architecture": "T5ForConditionalGeneration", "seed": seed,
                        "weights": "float16 on disk, float32 model", "attn_implementation": "eager",
                        "scale_decoder_outputs": re.config.scale_decoder_outputs,
                        "lm_head_is_shared": bool(torch.equal(re.lm_head.weight, re.shared.weight)),
                        "torch": torch.__version__, "transformers": transformers.__version__,
                        "logprob_rounding": "7 significant digits",
                        "positions": "label_logprobs[i] = log p(labels[i] | encoder_ids, labels[:i])"}
        with open(os.path.join(d, "golden.json"), "w") as fh:
            json.dump(gold, fh, separators=(",", ":"))
        assert t5_tokenizer(VOCAB, d) <= VOCAB
        with open(os.path.join(d, "reference.json"), "w") as fh:
            json.dump(reference_answers(d), fh, indent=1)
        print(name, {"seed": seed, "min_margin": gold["min_top2_logit_margin_all"],
                     "n_params": sum(p.numel() for p in re.parameters())}, flush=True)


if __name__ == "__main__":
    main()
