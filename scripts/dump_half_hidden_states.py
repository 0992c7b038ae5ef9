#!/usr/bin/env python3
"""Finds the first operation at which lm-eval's float16/bfloat16 forward leaves transformers'.

lm-eval's hf backend dumps its intermediate tensors when LMEVAL_HF_DUMP names a folder
(src/models/hf/debug_dump.hpp: one safetensors file per forward call, canonical names). This
script runs scripts/hf_reference_driver (scripts/compare_hf_reference.py builds it) on rolling
requests of the given texts with that set, then runs transformers on the same token ids with
forward hooks that record the same canonical intermediates, and prints, per forward call, every
intermediate in execution order with how many of its elements differ and by how many units in
the last place of the dtype, and the first that differs.

Canonical names (per layer i: L{i}.): embed (the first layer's input), norm{k}_in / norm{k}
(the layer's k-th norm, the qk-norms excluded, in execution order), qkv (the q, k, v projections,
concatenated), q_rope / k_rope ([B, heads, T, head_dim] after the rotary embedding), attn (the
output projection's input), attn_out (the attention block's output), gate_up (gate and up
projections, concatenated), mlp_act (the down projection's input), mlp_out, out (the layer's
output); then final_norm, logits and log_softmax (HFLM's log_softmax of the logits in their
dtype).

Environment: torch 2.15.0, transformers 5.23.0 (CPU), as scripts/compare_half_precision.py,
whose checkpoints (ZOO_DIR/ARCH_float16, ZOO_DIR/ARCH_bfloat16) it reads.
Usage: python scripts/dump_half_hidden_states.py BUILD_DIR MODEL_DIR [--generate N] [TEXT ...]
(--generate N: the decoding steps of a greedy generation of N tokens from the first text, each
step against transformers' forward over its own cache.)
Or: python scripts/dump_half_hidden_states.py --dumps DIR [--dtype DTYPE] MODEL_DIR: a dump
folder lm-eval already wrote (e.g. LMEVAL_HF_DUMP=DIR over a test) of one generation, its calls
replayed over transformers' cache; the model loaded in DTYPE (default: auto). With
--independent, each dumped call is a forward of its own (e.g. the scoring calls of a test).
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

# torch's AVX2 kernels, which lm-eval reproduces (compare_half_precision.py), unless set.
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")  # before torch is imported
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXTS = ["Once upon a time, there was a little girl named Lily. She loved to play outside.",
         "Tom had a big red ball. He liked to play with it."]
ATTN_NAMES = ("self_attn", "attn", "attention", "self_attention", "mixer")
MLP_NAMES = ("mlp", "feed_forward", "block_sparse_moe", "ffn")


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ours(build, model, texts, generate=0):
    """lm-eval's dumps of rolling requests over `texts` (batch_size 1, dtype=auto), or with
    `generate` > 0 of a greedy generation of that many tokens from the first text (the prompt's
    forward call, then one call per decoding step)."""
    cmp = load_script("compare_hf_reference")
    exe = cmp.build_driver(build)
    out = tempfile.mkdtemp(prefix="half_dump_")
    req = {"model_args": {"pretrained": model, "device": "cpu", "dtype": "auto", "batch_size": 1},
           "loglikelihood": [], "rolling": [] if generate else texts,
           "generate": [[texts[0], {"until": [], "max_gen_toks": generate}]] if generate else []}
    subprocess.run([exe], input=json.dumps(req), capture_output=True, text=True, check=True,
                   env=dict(os.environ, LMEVAL_HF_DUMP=out))
    return [load_file(os.path.join(out, f)) for f in sorted(os.listdir(out))]


def decoder_layers(model):
    n = model.config.get_text_config().num_hidden_layers
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.ModuleList) and len(mod) == n and name.split(".")[-1] in (
                "layers", "h", "blocks"):
            return mod
    raise SystemExit("no decoder layer list found")


class Recorder:
    """transformers' intermediates under the canonical names, for one forward call."""

    def __init__(self, model):
        self.model, self.rec, self.layer, self.norms, self.hooks = model, {}, -1, 0, []
        self.linears = {}
        layers = decoder_layers(model)
        for i, layer in enumerate(layers):
            self.hooks.append(layer.register_forward_pre_hook(self.layer_in(i), with_kwargs=True))
            self.hooks.append(layer.register_forward_hook(self.put_output("out")))
            for cname, child in layer.named_children():
                if "norm" in type(child).__name__.lower() or "ln" in cname:
                    self.hooks.append(child.register_forward_hook(self.norm_hook))
                elif cname in ATTN_NAMES:
                    self.hooks.append(child.register_forward_hook(self.put_output("attn_out")))
                    self.watch_linears(child, "attn")
                elif cname in MLP_NAMES:
                    self.hooks.append(child.register_forward_hook(self.put_output("mlp_out")))
                    self.watch_linears(child, "mlp")
        self.hooks.append(layers[-1].register_forward_hook(self.after_layers))
        head = model.get_output_embeddings()
        self.hooks.append(head.register_forward_pre_hook(self.head_in))
        self.hooks.append(head.register_forward_hook(self.put_output("logits")))
        # The rotary embedding is a module-level function of the family's modeling file.
        self.modeling = sys.modules[type(model).__module__]
        self.rope = getattr(self.modeling, "apply_rotary_pos_emb", None)
        if self.rope is not None:
            def recorded(q, k, *a, **kw):
                qe, ke = self.rope(q, k, *a, **kw)
                self.put("q_rope", qe)
                self.put("k_rope", ke)
                return qe, ke
            self.modeling.apply_rotary_pos_emb = recorded

    def close(self):
        for h in self.hooks:
            h.remove()
        if self.rope is not None:
            self.modeling.apply_rotary_pos_emb = self.rope

    def put(self, name, t):
        full = f"L{self.layer}.{name}" if self.layer >= 0 else name
        if full not in self.rec and isinstance(t, torch.Tensor):
            self.rec[full] = t.detach().float().clone()

    def put_output(self, name):
        def hook(_mod, _args, out):
            self.put(name, out[0] if isinstance(out, tuple) else out)
        return hook

    def layer_in(self, i):
        def hook(_mod, args, kwargs):
            self.layer, self.norms, self.linears = i, 0, {"attn": [], "mlp": []}
            x = args[0] if args else kwargs["hidden_states"]
            if i == 0:
                self.layer = -1
                self.put("embed", x)
                self.layer = 0
        return hook

    def norm_hook(self, _mod, args, out):
        self.put(f"norm{self.norms}_in", args[0])
        self.put(f"norm{self.norms}", out)
        self.norms += 1

    def watch_linears(self, block, kind):
        for lname, lin in block.named_modules():
            # GPT-2's projections are Conv1D (x @ W + b) rather than nn.Linear.
            if isinstance(lin, (torch.nn.Linear, transformers.pytorch_utils.Conv1D)) and \
                    "gate" != lname:  # a router is no projection
                def hook(_mod, args, out, lname=lname):
                    self.linears[kind].append((lname, args[0], out))
                    self.collect(kind)
                self.hooks.append(lin.register_forward_hook(hook))

    def collect(self, kind):
        seen = self.linears[kind]
        if kind == "attn":
            # q, k, v (or one fused projection) first; the output projection's input is the
            # attention's result.
            names = [n for n, _, _ in seen]
            if (len(seen) == 3 and len({o.dim() for _, _, o in seen}) == 1) or (
                    len(seen) == 1 and any(
                        s in names[0] for s in ("qkv", "query_key_value", "c_attn", "Wqkv"))):
                self.put("qkv", torch.cat([o for _, _, o in seen], -1))
            if len(seen) >= 2 and names[-1].split(".")[-1] in ("o_proj", "dense", "c_proj",
                                                              "out_proj", "wo", "o"):
                self.put("attn", seen[-1][1])
        else:
            names = [n.split(".")[-1] for n, _, _ in seen]
            if names[-1] in ("down_proj", "c_proj", "fc2", "dense_4h_to_h", "w2", "fc_out"):
                self.put("mlp_act", seen[-1][1])
                gu = [o for n, _, o in seen if n.split(".")[-1] in ("gate_proj", "up_proj")]
                if len(gu) == 2:
                    self.put("gate_up", torch.cat(gu, -1))
                elif names[0] in ("gate_up_proj",):
                    self.put("gate_up", seen[0][2])

    def after_layers(self, *_):
        self.layer = -1

    def head_in(self, _mod, args):
        self.layer = -1
        self.put("final_norm", args[0])


def ulps(a, b, dtype):
    """|a - b| in units of the last place of dtype at the larger magnitude."""
    frac = 10 if dtype == torch.float16 else 7
    m = torch.maximum(a.abs(), b.abs()).clamp_min(2.0 ** -24)
    return (a - b).abs() / torch.exp2(torch.floor(torch.log2(m)) - frac)


def main():
    args = sys.argv[1:]
    generate = 0
    if "--generate" in args:
        i = args.index("--generate")
        generate = int(args[i + 1])
        del args[i:i + 2]
    load_dtype = "auto"
    if "--dtype" in args:
        i = args.index("--dtype")
        load_dtype = getattr(torch, args[i + 1])
        del args[i:i + 2]
    independent = "--independent" in args
    if independent:
        args.remove("--independent")
    if "--dumps" in args:
        i = args.index("--dumps")
        folder = args[i + 1]
        del args[i:i + 2]
        model_dir, generate = args[0], 0 if independent else 1
        dumps = [load_file(os.path.join(folder, f)) for f in sorted(os.listdir(folder))]
    else:
        build, model_dir, texts = args[0], args[1], args[2:] or TEXTS
        dumps = ours(build, model_dir, texts, generate)
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=load_dtype).eval()
    dtype = model.dtype
    print(f"{model_dir}: {type(model).__name__} {dtype}, {len(dumps)} forward calls")
    # lm-eval prefills all but the last prompt token and feeds that one with the decoding steps,
    # where transformers' generate prefills the whole prompt at once: that token attends to every
    # prompt key, which a sliding-window cache would have dropped after a prefill of the others.
    # So the first two calls run over a cache that keeps everything, then the sliding-window
    # layers keep only their last window - 1 keys, as after generate's prefill.
    cache = transformers.DynamicCache() if generate else None
    for call, ref in enumerate(dumps):
        rec = Recorder(model)
        with torch.no_grad():
            ids = ref["ids"].long()
            if generate and call == 2:
                windowed = transformers.DynamicCache(config=model.config)
                for full, layer in zip(cache.layers, windowed.layers):
                    layer.update(full.keys, full.values)
                cache = windowed
            if generate:  # the same calls over transformers' own cache, as generate() makes them
                logits = model(input_ids=ids, past_key_values=cache, use_cache=True).logits
            else:
                logits = model(input_ids=ids, use_cache=False).logits
            rec.put("log_softmax", torch.log_softmax(logits, -1))
        rec.close()
        first = None
        print(f"forward {call}: {ids.shape[1]} tokens")
        for name, ours_t in ref.items():
            if name == "ids":
                continue
            theirs = rec.rec.get(name)
            if theirs is None:
                print(f"  {name:16s} (not recorded on transformers' side)")
                continue
            ours_t = ours_t.reshape(-1, ours_t.shape[-1])
            if name == "log_softmax" or name in ("logits", "final_norm"):
                theirs = theirs.reshape(-1, theirs.shape[-1])[-ours_t.shape[0]:]
            if theirs.numel() != ours_t.numel():  # e.g. a partial rotary: transformers rotates a slice
                print(f"  {name:16s} (shapes differ: ours {list(ours_t.shape)}, transformers' "
                      f"{list(theirs.shape)})")
                continue
            theirs = theirs.reshape(ours_t.shape)
            diff = (ours_t != theirs)
            n = int(diff.sum())
            u = float(ulps(ours_t, theirs, dtype).max()) if n else 0.0
            print(f"  {name:16s} {n:6d}/{ours_t.numel():<7d} differ, max {u:.3g} ulps"
                  + (f", max abs {float((ours_t - theirs).abs().max()):.3g}" if n else ""))
            if n and first is None:
                first = name
        print(f"  first difference: {first}")


if __name__ == "__main__":
    main()
