#!/usr/bin/env python3
"""Makes tests/fixtures/hf_quant: one tiny Llama quantised in each pre-quantised format lm-eval
dequantises natively (src/models/hf/quant_weights.cpp), each folder a config.json with its
quantization_config, a model.safetensors of a few dozen KB, and a golden.json with

  dequantised: for every quantised weight, the sha256 of its dequantised values as float32
               little-endian bytes (and the first few values), computed by the package that reads
               the format (see each fixture's meta.dequantised_by);
  inputs / next_token_logprobs / last_row_logprobs: transformers' log-softmax, float32 on the
               CPU, loading the checkpoint itself where transformers can on the CPU, else a float
               twin holding the package's dequantised weights (meta.logprobs_by says which).

Independent sources: transformers' FineGrainedFP8 dequantisation (dequantize=True) and
compressed-tensors' decompression (through transformers' CompressedTensorsHfQuantizer) load the
checkpoints themselves; AutoAWQ's own awq.utils.packing_utils.dequantize_gemm dequantises the AWQ
one; bitsandbytes' CPU backend quantises, serialises and dequantises the bitsandbytes ones
(transformers loading them in float32; where transformers' own forward is not a product with
the dequantised weight, a 4-bit compute dtype other than float32 or LLM.int8(), the log-probs
are a float twin's and that forward's are kept apart as transformers_forward). GPTQ's kernels (gptqmodel, auto-gptq) do not install without CUDA, so the GPTQ weights are
unpacked here by a re-implementation of their unpacking (AutoGPTQ's QuantLinear: qweight's
fields down the input rows, 3-bit ones straddling words, qzeros across the output columns, v1
zero points stored less one), written from their sources and stated as such.

Usage: python scripts/gen_quant_fixtures.py tests/fixtures/hf_quant
Needs torch, transformers, safetensors, compressed-tensors, bitsandbytes (its CPU backend), autoawq
(installed --no-deps: only its pure-torch packing_utils is used).
"""
import hashlib
import importlib.util
import json
import os
import shutil
import sys

import numpy as np
import torch
import transformers
from safetensors.torch import save_file

LINEARS = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
           "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"]
INPUTS = [[1, 17, 93, 4, 56, 120, 33, 8, 71], [1, 5, 5, 64, 99, 2, 42], [1, 127, 3, 88, 19, 60]]


def base_model():
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=64,
        rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2,
        pad_token_id=0, initializer_range=0.15, attn_implementation="eager")
    model = transformers.LlamaForCausalLM(cfg).eval()
    # Norm weights away from 1 so that a wrong row or column shows.
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "norm" in n:
                p.copy_(1 + 0.2 * torch.randn_like(p))
    return model


def linear_names(model):
    return [f"model.layers.{i}.{m}" for i in range(model.config.num_hidden_layers) for m in LINEARS]


def r7(x):
    return float(f"{x:.7g}")


def sha(t):
    return hashlib.sha256(t.detach().to(torch.float32).contiguous().numpy().tobytes()).hexdigest()


def logprobs_of(model):
    out = {"inputs": INPUTS, "next_token_logprobs": [], "last_row_logprobs": []}
    with torch.no_grad():
        for ids in INPUTS:
            lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
            out["next_token_logprobs"].append([r7(lp[i, ids[i + 1]]) for i in range(len(ids) - 1)])
            out["last_row_logprobs"].append([r7(v) for v in lp[-1].tolist()])
    return out


def write(outdir, name, cfg, tensors, golden):
    d = os.path.join(outdir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    save_file(tensors, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    # save_pretrained would write it; the dict of an unsaved model's config lacks it.
    cfg["architectures"] = cfg.get("architectures") or ["LlamaForCausalLM"]
    with open(os.path.join(d, "config.json"), "w") as fh:
        json.dump(cfg, fh, indent=2)
    with open(os.path.join(d, "golden.json"), "w") as fh:
        json.dump(golden, fh, separators=(",", ":"))
    print(name, os.path.getsize(os.path.join(d, "model.safetensors")), "bytes", flush=True)
    return d


def float_tensors(model, dtype, skip):
    """The model's tensors other than the quantised linears', in the checkpoint's dtype."""
    return {k: v.to(dtype).contiguous() for k, v in model.state_dict().items()
            if not any(k == s + ".weight" for s in skip)}


def config_of(model, dtype, qcfg):
    cfg = model.config.to_dict()
    cfg["dtype"] = dtype
    cfg["quantization_config"] = qcfg
    cfg.pop("attn_implementation", None)
    return cfg


def twin_logprobs(model, dtype, dequantised):
    """transformers on a float twin: the checkpoint's float tensors and the dequantised weights."""
    twin = transformers.LlamaForCausalLM(model.config).eval()
    sd = {k: v.to(dtype).float() for k, v in model.state_dict().items()}
    sd.update({k: v.float() for k, v in dequantised.items()})
    twin.load_state_dict(sd)
    return logprobs_of(twin)


def dequantised_entry(dequantised):
    return {k: {"sha256": sha(v), "head": [r7(x) for x in v.flatten()[:4].float().tolist()]}
            for k, v in sorted(dequantised.items())}


def meta(name, by, logprobs_by, **extra):
    return {"fixture": name, "dequantised_by": by, "logprobs_by": logprobs_by,
            "torch": torch.__version__, "transformers": transformers.__version__,
            "logprob_rounding": "7 significant digits",
            "positions": "next_token_logprobs[i] = log p(input_ids[i+1] | input_ids[:i+1])", **extra}


# ---- GPTQ ------------------------------------------------------------------------------------

def asym_quant(w, groups_of_cols, n_groups, bits):
    """Asymmetric min/max quantisation of w [out, in] with column c in group groups_of_cols[c]:
    q [out, in], zero and scale [out, groups] (scale float16, zero in 1 .. 2^bits-1)."""
    top = 2 ** bits - 1
    out = w.shape[0]
    scale = np.zeros((out, n_groups), np.float16)
    zero = np.zeros((out, n_groups), np.int64)
    q = np.zeros(w.shape, np.int64)
    for g in range(n_groups):
        cols = np.nonzero(groups_of_cols == g)[0]
        lo, hi = w[:, cols].min(1), w[:, cols].max(1)
        s = np.maximum((hi - lo) / top, 1e-4).astype(np.float16)
        z = np.clip(np.round(-lo / s.astype(np.float32)), 1, top)
        scale[:, g], zero[:, g] = s, z
        q[:, cols] = np.clip(np.round(w[:, cols] / s[:, None].astype(np.float32)) + z[:, None], 0, top)
    return q, zero, scale


def pack_stream(values, bits):
    """Fields of `bits` bits laid end to end, little-endian, into int32 words (the last padded)."""
    n_words = -(-len(values) * bits // 32)
    acc = 0
    for i, v in enumerate(values):
        acc |= int(v) << (i * bits)
    return [((acc >> (32 * k)) & 0xFFFFFFFF) for k in range(n_words)]


def unpack_stream(words, bits, n):
    acc = 0
    for k, w in enumerate(words):
        acc |= (int(w) & 0xFFFFFFFF) << (32 * k)
    return [(acc >> (i * bits)) & ((1 << bits) - 1) for i in range(n)]


def as_i32(words):
    return np.array(words, dtype=np.uint32).view(np.int32)


def gptq_fixture(outdir, model, name, bits, group_size, desc_act, v2):
    rng = np.random.default_rng(bits * 10 + int(desc_act))
    tensors = float_tensors(model, torch.float16, linear_names(model))
    dequantised = {}
    for lin in linear_names(model):
        w = model.state_dict()[lin + ".weight"].numpy().astype(np.float32)
        out, inn = w.shape
        n_groups = 1 if group_size == -1 else -(-inn // group_size)
        gsz = inn if group_size == -1 else group_size
        order = rng.permutation(inn) if desc_act else np.arange(inn)
        g_idx = np.empty(inn, np.int64)
        g_idx[order] = np.arange(inn) // gsz
        q, zero, scale = asym_quant(w, g_idx, n_groups, bits)
        # qweight [in·bits/32, out]: each output column's fields run down the input rows.
        cols = [pack_stream(q[o, :], bits) for o in range(out)]
        qweight = as_i32(np.array(cols, dtype=np.uint64).T.copy())
        stored = zero if v2 else zero - 1
        qzeros = as_i32([pack_stream(stored[:, g], bits) for g in range(n_groups)])
        tensors[lin + ".qweight"] = torch.from_numpy(qweight.copy())
        tensors[lin + ".qzeros"] = torch.from_numpy(qzeros.copy())
        tensors[lin + ".scales"] = torch.from_numpy(scale.T.copy())
        tensors[lin + ".g_idx"] = torch.from_numpy(g_idx.astype(np.int32))
        # AutoGPTQ's QuantLinear dequantisation, re-implemented: unpack both, zeros + 1 for the v1
        # format, then scales[g_idx] * (weight - zeros[g_idx]) in float16.
        qw = np.array([unpack_stream(qweight[:, o].view(np.uint32), bits, inn)
                       for o in range(out)]).T  # [in, out]
        qz = np.array([unpack_stream(qzeros[g].view(np.uint32), bits, out)
                       for g in range(n_groups)])  # [groups, out]
        if not v2:
            qz = qz + 1
        sc = scale.T  # [groups, out]
        wt = sc[g_idx] * (qw - qz[g_idx]).astype(np.float16)
        dequantised[lin + ".weight"] = torch.from_numpy(wt.T.astype(np.float16).copy())
    qcfg = {"quant_method": "gptq", "bits": bits, "group_size": group_size, "desc_act": desc_act,
            "sym": False, "damp_percent": 0.01, "true_sequential": True,
            "checkpoint_format": "gptq_v2" if v2 else "gptq"}
    golden = {"meta": meta(name, "this script's re-implementation of AutoGPTQ's unpacking "
                                 "(gptqmodel/auto-gptq need CUDA to install)",
                           "transformers on a float twin holding those weights"),
              "dequantised": dequantised_entry(dequantised),
              **twin_logprobs(model, torch.float16, dequantised)}
    write(outdir, name, config_of(model, "float16", qcfg), tensors, golden)


# ---- AWQ -------------------------------------------------------------------------------------

def awq_module():
    spec = importlib.util.find_spec("awq")
    path = os.path.join(os.path.dirname(spec.origin), "utils", "packing_utils.py")
    s = importlib.util.spec_from_file_location("awq_packing_utils", path)
    mod = importlib.util.module_from_spec(s)
    s.loader.exec_module(mod)
    return mod


def awq_fixture(outdir, model, name, group_size):
    awq = awq_module()
    order = [0, 2, 4, 6, 1, 3, 5, 7]  # WQLinear_GEMM.from_linear's order_map
    tensors = float_tensors(model, torch.float16, linear_names(model))
    dequantised = {}
    for lin in linear_names(model):
        w = model.state_dict()[lin + ".weight"].numpy().astype(np.float32)
        out, inn = w.shape
        q, zero, scale = asym_quant(w, np.arange(inn) // group_size, inn // group_size, 4)
        qt, zt = q.T, zero.T  # [in, out], [groups, out]

        def pack(m):
            packed = np.zeros((m.shape[0], m.shape[1] // 8), np.uint32)
            for col in range(m.shape[1] // 8):
                for i in range(8):
                    packed[:, col] |= (m[:, col * 8 + order[i]].astype(np.uint32) << (4 * i))
            return packed.view(np.int32)

        qweight, qzeros = torch.from_numpy(pack(qt)), torch.from_numpy(pack(zt))
        scales = torch.from_numpy(scale.T.copy())
        tensors[lin + ".qweight"], tensors[lin + ".qzeros"] = qweight, qzeros
        tensors[lin + ".scales"] = scales
        dq = awq.dequantize_gemm(qweight, qzeros, scales, 4, group_size)  # [in, out] float16
        dequantised[lin + ".weight"] = dq.T.contiguous()
    qcfg = {"quant_method": "awq", "bits": 4, "group_size": group_size, "zero_point": True,
            "version": "gemm", "modules_to_not_convert": None}
    golden = {"meta": meta(name, "AutoAWQ (awq.utils.packing_utils.dequantize_gemm)",
                           "transformers on a float twin holding those weights"),
              "dequantised": dequantised_entry(dequantised),
              **twin_logprobs(model, torch.float16, dequantised)}
    write(outdir, name, config_of(model, "float16", qcfg), tensors, golden)


# ---- transformers loading the checkpoint itself ----------------------------------------------

def loaded_golden(d, name, by, quantization_config, dtype):
    """transformers loads the checkpoint in its own dtype (dtype=float32 fails: the dequantised
    weights keep the checkpoint's dtype while the rest becomes float32), and the loaded model,
    cast to float32, gives the log-probs."""
    m = transformers.AutoModelForCausalLM.from_pretrained(
        d, dtype=dtype, quantization_config=quantization_config,
        attn_implementation="eager").eval()
    sd = m.state_dict()
    quantised = json.load(open(os.path.join(d, "golden.json")))["quantised"]
    golden = {"meta": meta(name, by, f"transformers loading the checkpoint in {dtype} (CPU), "
                                     "then cast to float32", loaded_dtype=str(dtype)),
              "dequantised": dequantised_entry({k: sd[k] for k in quantised}),
              **logprobs_of(m.float())}
    with open(os.path.join(d, "golden.json"), "w") as fh:
        json.dump(golden, fh, separators=(",", ":"))


def fp8_fixture(outdir, model, name, block):
    tensors = float_tensors(model, torch.bfloat16, linear_names(model))
    for lin in linear_names(model):
        w = model.state_dict()[lin + ".weight"].float()
        out, inn = w.shape
        if block:
            br, bc = block
            blocks = w.reshape(out // br, br, inn // bc, bc)
            s = blocks.abs().amax(dim=(1, 3)) / 448.0
            q = (blocks / s[:, None, :, None]).reshape(out, inn).to(torch.float8_e4m3fn)
        else:
            s = w.abs().max() / 448.0
            q = (w / s).to(torch.float8_e4m3fn)
        tensors[lin + ".weight"] = q
        tensors[lin + ".weight_scale_inv"] = s.to(torch.float32).contiguous()
    qcfg = {"quant_method": "fp8", "activation_scheme": "dynamic",
            "weight_block_size": list(block) if block else None}
    d = write(outdir, name, config_of(model, "bfloat16", qcfg), tensors,
              {"quantised": [lin + ".weight" for lin in linear_names(model)]})
    loaded_golden(d, name, "transformers (FineGrainedFP8, dequantize=True, CPU)",
                  transformers.FineGrainedFP8Config(dequantize=True,
                                                    weight_block_size=tuple(block) if block else None),
                  torch.bfloat16)


def ct_fixture(outdir, model, name, fmt, bits, kind, strategy, group_size, symmetric, scale_dtype):
    from compressed_tensors.compressors.pack_quantized.helpers import pack_to_int32
    tensors = float_tensors(model, scale_dtype, linear_names(model))
    for lin in linear_names(model):
        w = model.state_dict()[lin + ".weight"].float()
        out, inn = w.shape
        gs = group_size if strategy == "group" else inn
        wg = w.reshape(out, inn // gs, gs)
        if kind == "float":
            scale = (wg.abs().amax(-1) / 448.0).to(scale_dtype)
            q = (wg / scale.float()[..., None]).reshape(out, inn).to(torch.float8_e4m3fn)
            zp = None
        elif symmetric:
            top = 2 ** (bits - 1) - 1
            scale = (wg.abs().amax(-1) / top).clamp(min=1e-4).to(scale_dtype)
            q = torch.clamp(torch.round(wg / scale.float()[..., None]), -top - 1, top)
            q = q.reshape(out, inn).to(torch.int8)
            zp = None
        else:
            lo, hi = wg.amin(-1), wg.amax(-1)
            qmin, qmax = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
            scale = ((hi - lo) / (qmax - qmin)).clamp(min=1e-4).to(scale_dtype)
            zp = torch.clamp(torch.round(qmin - lo / scale.float()), qmin, qmax).to(torch.int8)
            q = torch.clamp(torch.round(wg / scale.float()[..., None]) + zp[..., None], qmin, qmax)
            q = q.reshape(out, inn).to(torch.int8)
        if fmt == "pack-quantized":
            tensors[lin + ".weight_packed"] = pack_to_int32(q, bits)
            tensors[lin + ".weight_shape"] = torch.tensor([out, inn], dtype=torch.int32)
            if zp is not None:
                tensors[lin + ".weight_zero_point"] = pack_to_int32(zp, bits, packed_dim=0)
        else:
            tensors[lin + ".weight"] = q
            if zp is not None:
                tensors[lin + ".weight_zero_point"] = zp
        tensors[lin + ".weight_scale"] = scale.contiguous()
    weights = {"num_bits": bits, "type": kind, "symmetric": symmetric, "strategy": strategy,
               "group_size": group_size if strategy == "group" else None, "dynamic": False,
               "actorder": None, "observer": "minmax", "block_structure": None}
    qcfg = {"quant_method": "compressed-tensors", "format": fmt,
            "quantization_status": "compressed", "ignore": ["lm_head"],
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights,
                                          "input_activations": None, "output_activations": None,
                                          "format": fmt}}}
    dtype = {torch.bfloat16: "bfloat16", torch.float16: "float16"}[scale_dtype]
    d = write(outdir, name, config_of(model, dtype, qcfg), tensors,
              {"quantised": [lin + ".weight" for lin in linear_names(model)]})
    loaded_golden(d, name, "compressed-tensors (decompressed by transformers' "
                           "CompressedTensorsHfQuantizer, run_compressed=False, CPU)",
                  transformers.CompressedTensorsConfig(run_compressed=False), scale_dtype)


def bnb_quantised(outdir, model, name, kwargs):
    """bitsandbytes quantises the float16 model on the CPU and transformers serialises it
    (save_pretrained: Linear4bit's quant_state tensors, Linear8bitLt's SCB and weight_format)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base")
        model.save_pretrained(base)
        q = transformers.AutoModelForCausalLM.from_pretrained(
            base, dtype=torch.float16, device_map="cpu",
            quantization_config=transformers.BitsAndBytesConfig(**kwargs))
        d = os.path.join(outdir, name)
        shutil.rmtree(d, ignore_errors=True)
        q.save_pretrained(d)
    for extra in ("generation_config.json",):
        if os.path.exists(os.path.join(d, extra)):
            os.remove(os.path.join(d, extra))
    m = transformers.AutoModelForCausalLM.from_pretrained(
        d, dtype=torch.float32, device_map="cpu", attn_implementation="eager").eval()
    # transformers 5.23 keeps a pre-quantised bitsandbytes checkpoint's float tensors (norms,
    # embeddings, lm_head) in the checkpoint's float16 whatever dtype= says, so the model as
    # loaded runs in float16 around the quantised layers: how far that is from float32 is
    # measured (as_loaded_max_abs_diff), then those tensors are made float32 for the goldens.
    as_loaded = logprobs_of(m)
    bnb_nn = importlib.import_module("bitsandbytes.nn")
    for mod in m.modules():
        if isinstance(mod, (bnb_nn.Linear4bit, bnb_nn.Linear8bitLt)):
            continue
        for prm in mod.parameters(recurse=False):
            if prm.is_floating_point():
                prm.data = prm.data.float()
    return d, m, as_loaded


def max_abs_diff(a, b):
    return float(f"{max(abs(x - y) for key in ('next_token_logprobs', 'last_row_logprobs') for ra, rb in zip(a[key], b[key]) for x, y in zip(ra, rb)):.3g}")


def bnb_cpu_meta():
    bnb_f = importlib.import_module("bitsandbytes.functional")
    return {"bitsandbytes": importlib.import_module("bitsandbytes").__version__,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "avx512bf16": bool(bnb_f.has_avx512bf16())}


def bnb_twin_golden(m, dequantised):
    """The log-probs of a float32 twin of the loaded model holding the dequantised weights (what
    a native dequantisation reaches), and apart those of transformers' own forward with its
    largest difference from them."""
    twin = transformers.LlamaForCausalLM(m.config).eval()
    sd = {k: v.float() for k, v in m.state_dict().items() if k in twin.state_dict()}
    sd.update({k: v.float() for k, v in dequantised.items()})
    twin.load_state_dict(sd)
    twin_lp, own_lp = logprobs_of(twin), logprobs_of(m)
    own = {k: own_lp[k] for k in ("next_token_logprobs", "last_row_logprobs")}
    return twin_lp, own, max_abs_diff(twin_lp, own_lp)


def bnb4_dequantised(layer):
    """The weight as Linear4bit's forward dequantises it on the CPU (matmul_4bit ->
    torch.ops.bitsandbytes.gemm_4bit, default backend): the nested absmax through
    dequantize_blockwise (blocks of 256) plus the offset, then dequantize_4bit to the compute
    dtype. Read through the ops themselves, not through a product with an identity matrix,
    which would turn fp4's -0.0 codes into +0.0."""
    ops = torch.ops.bitsandbytes
    qs = layer.weight.quant_state
    absmax = qs.absmax
    if qs.nested:
        absmax = ops.dequantize_blockwise.default(qs.absmax, qs.state2.absmax, qs.state2.code,
                                                  256, torch.float32) + qs.offset
    return ops.dequantize_4bit.default(layer.weight.data, absmax, qs.blocksize, qs.quant_type,
                                       qs.shape, layer.compute_dtype)


def bnb4_fixture(outdir, model, name, kwargs):
    """The goldens are transformers loading the checkpoint in float32 on the CPU. On a CPU with
    AVX512-BF16 bitsandbytes' Linear4bit.forward repacks the weight and runs gemv_4bit in
    bfloat16 (inputs, table and absmax rounded to bfloat16) instead: that path is switched off
    here (support_avx512bf16_for_cpu = False) so that the goldens are the dequantise-then-matmul
    arithmetic every CPU without it, and CUDA, run; meta.avx512bf16 says what this CPU has."""
    d, m, as_loaded = bnb_quantised(outdir, model, name, kwargs)
    dequantised = {}
    with torch.no_grad():
        for lin in linear_names(model):
            layer = m.get_submodule(lin)
            layer.support_avx512bf16_for_cpu = False
            w = bnb4_dequantised(layer)
            # The layer's own forward gives the same numbers (an identity matrix reads them).
            eye = torch.eye(layer.in_features, dtype=torch.float32)
            assert torch.equal(layer(eye).T, w.float()), lin
            dequantised[lin + ".weight"] = w
    by = ("bitsandbytes' CPU ops as Linear4bit.forward runs them (dequantize_blockwise + "
          "offset, dequantize_4bit to the compute dtype)")
    loaded = ("transformers loading the checkpoint (dtype=float32, CPU, "
              "support_avx512bf16_for_cpu off, the float tensors then made float32)")
    if kwargs["bnb_4bit_compute_dtype"] == torch.float32:
        # The dequantised float32 weights times float32 inputs: the twin's numbers exactly.
        lp = logprobs_of(m)
        golden = {"meta": meta(name, by, loaded, weights_dtype="float32",
                               as_loaded_max_abs_diff=max_abs_diff(lp, as_loaded),
                               **bnb_cpu_meta()),
                  "dequantised": dequantised_entry(dequantised), **lp}
    else:
        # Linear4bit casts its input to the compute dtype too: that forward is kept apart.
        twin_lp, own, diff = bnb_twin_golden(m, dequantised)
        golden = {"meta": meta(name, by, "transformers on a float32 twin holding those weights; "
                                         "transformers_forward: " + loaded,
                               weights_dtype="float32", transformers_forward_max_abs_diff=diff,
                               as_loaded_max_abs_diff=max_abs_diff(twin_lp, as_loaded),
                               **bnb_cpu_meta()),
                  "dequantised": dequantised_entry(dequantised), **twin_lp,
                  "transformers_forward": own}
    with open(os.path.join(d, "golden.json"), "w") as fh:
        json.dump(golden, fh, separators=(",", ":"))
    print(name, os.path.getsize(os.path.join(d, "model.safetensors")), "bytes; transformers'"
          " forward vs the dequantised weights:", golden["meta"].get(
              "transformers_forward_max_abs_diff", 0), flush=True)


def bnb8_fixture(outdir, model, name):
    """LLM.int8(): the weights dequantised by bitsandbytes' int8_vectorwise_dequant (what its
    int8_mixed_scaled_mm applies to the weight columns of outlier activations); the log-probs
    of a float twin holding them (what a native dequantisation can reach) and, apart, those of
    transformers' own Linear8bitLt forward, which also quantises the activations to int8."""
    d, m, as_loaded = bnb_quantised(outdir, model, name, dict(load_in_8bit=True))
    bnb_f = importlib.import_module("bitsandbytes.functional")
    dequantised = {}
    with torch.no_grad():
        for lin in linear_names(model):
            layer = m.get_submodule(lin)
            cb = layer.weight.data if layer.state.CB is None else layer.state.CB
            scb = layer.weight.SCB if layer.state.SCB is None else layer.state.SCB
            dequantised[lin + ".weight"] = bnb_f.int8_vectorwise_dequant(cb, scb)
    twin_lp, own, diff = bnb_twin_golden(m, dequantised)
    golden = {"meta": meta(name, "bitsandbytes' int8_vectorwise_dequant (weight · SCB · 1/127)",
                           "transformers on a float32 twin holding those weights; "
                           "transformers_forward: transformers loading the checkpoint (dtype="
                           "float32, CPU, the float tensors then made float32: LLM.int8() "
                           "quantises the activations too)",
                           weights_dtype="float32", transformers_forward_max_abs_diff=diff,
                           as_loaded_max_abs_diff=max_abs_diff(twin_lp, as_loaded),
                           **bnb_cpu_meta()),
              "dequantised": dequantised_entry(dequantised), **twin_lp,
              "transformers_forward": own}
    with open(os.path.join(d, "golden.json"), "w") as fh:
        json.dump(golden, fh, separators=(",", ":"))
    print(name, os.path.getsize(os.path.join(d, "model.safetensors")), "bytes; transformers'"
          " forward vs the dequantised weights:", diff, flush=True)


def main():
    outdir = sys.argv[1]
    only = set(sys.argv[2:])
    model = base_model()
    makers = {
        "gptq_4bit": lambda: gptq_fixture(outdir, model, "gptq_4bit", 4, 32, False, False),
        "gptq_4bit_act_v2": lambda: gptq_fixture(outdir, model, "gptq_4bit_act_v2", 4, 32, True, True),
        "gptq_3bit": lambda: gptq_fixture(outdir, model, "gptq_3bit", 3, -1, False, False),
        "gptq_2bit": lambda: gptq_fixture(outdir, model, "gptq_2bit", 2, 16, False, False),
        "gptq_8bit": lambda: gptq_fixture(outdir, model, "gptq_8bit", 8, 64, False, False),
        "awq_gemm": lambda: awq_fixture(outdir, model, "awq_gemm", 32),
        "fp8_block": lambda: fp8_fixture(outdir, model, "fp8_block", (32, 32)),
        "fp8_tensor": lambda: fp8_fixture(outdir, model, "fp8_tensor", None),
        "ct_int4_group_asym": lambda: ct_fixture(outdir, model, "ct_int4_group_asym",
                                                 "pack-quantized", 4, "int", "group", 32, False,
                                                 torch.bfloat16),
        "ct_int8_channel": lambda: ct_fixture(outdir, model, "ct_int8_channel", "int-quantized",
                                              8, "int", "channel", None, True, torch.float16),
        "ct_fp8_channel": lambda: ct_fixture(outdir, model, "ct_fp8_channel", "float-quantized",
                                             8, "float", "channel", None, True, torch.bfloat16),
        "bnb_nf4_double": lambda: bnb4_fixture(outdir, model, "bnb_nf4_double", dict(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.float32)),
        "bnb_fp4": lambda: bnb4_fixture(outdir, model, "bnb_fp4", dict(
            load_in_4bit=True, bnb_4bit_quant_type="fp4", bnb_4bit_compute_dtype=torch.float32)),
        "bnb_nf4_bf16": lambda: bnb4_fixture(outdir, model, "bnb_nf4_bf16", dict(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16)),
        "bnb_fp4_fp16": lambda: bnb4_fixture(outdir, model, "bnb_fp4_fp16", dict(
            load_in_4bit=True, bnb_4bit_quant_type="fp4", bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.float16)),
        "bnb_int8": lambda: bnb8_fixture(outdir, model, "bnb_int8"),
    }
    for name, make in makers.items():
        if not only or name in only:
            make()


if __name__ == "__main__":
    main()
