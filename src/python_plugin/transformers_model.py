# The hf backend's transformers path (embedded in liblmeval_python.so): a model that lm-eval does
# not run natively, built from the model_args as the reference's HFLM builds it
# (lm_eval/models/huggingface.py: _get_config, _get_backend, _get_accelerate_args, _create_model)
# and called for what HFLM asks of its model: the log-probs of right-padded token rows
# (HFLM._loglikelihood_tokens over _model_call) and generation (HFLM._model_generate). lm-eval keeps
# its own tokenizer, requests, batching, caching and outputs (models/hf/python_model.cpp).
import importlib


class MissingPackages(Exception):
    """Packages the model needs that the environment lacks (lm-eval: exit 2 with how to install)."""


def _require(*names):
    missing = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as e:
            missing.append(f"{name} ({e})")
    if missing:
        raise MissingPackages(", ".join(missing))


def _get_dtype(torch, dtype):
    # lm_eval.models.utils_hf.get_dtype: a name other than "auto" is getattr(torch, name).
    if isinstance(dtype, str) and dtype != "auto":
        return getattr(torch, dtype)
    return dtype


def _accelerate_args(torch, device, parallelize, device_map, max_memory_per_gpu, max_cpu_memory,
                     offload_folder):
    # HFLM._get_accelerate_args for one process (no `accelerate launch`). Without parallelize a
    # device_map the user gave is replaced by None, as there (model_kwargs.update after reading it).
    if parallelize:
        if max_memory_per_gpu is not None:
            max_memory = {i: max_memory_per_gpu for i in range(torch.cuda.device_count())}
        else:
            from accelerate.utils import get_max_memory
            max_memory = get_max_memory()
            max_memory.pop("cpu", None)
        max_memory = dict(max_memory)
        if max_cpu_memory is not None:
            max_memory["cpu"] = max_cpu_memory
        return {"max_memory": max_memory,
                "device_map": "auto" if device_map is None else device_map,
                "offload_folder": offload_folder}
    if device_map is None:
        return {"max_memory": None, "device_map": {"": str(device)}}
    return {"max_memory": None, "device_map": None}


def _max_length(config):
    # lm_eval.models.utils.resolve_max_length's config part: the text_config first.
    cfg = getattr(config, "text_config", None) or config
    for attr in ("n_positions", "max_position_embeddings", "n_ctx"):
        value = getattr(cfg, attr, None)
        if value is not None:
            return int(value)
    return None


class TransformersModel:
    def __init__(self, spec):
        _require("torch", "transformers")
        import torch
        import transformers

        self.torch = torch
        self.transformers = transformers
        a = dict(spec["model_args"])
        pretrained = a.pop("pretrained")
        revision = str(a.pop("revision", "main"))
        subfolder = a.pop("subfolder", "")
        trust_remote_code = bool(a.pop("trust_remote_code", False))
        dtype = a.pop("dtype", "auto")
        parallelize = bool(a.pop("parallelize", False))
        max_memory_per_gpu = a.pop("max_memory_per_gpu", None)
        max_cpu_memory = a.pop("max_cpu_memory", None)
        offload_folder = a.pop("offload_folder", "./offload")
        peft = a.pop("peft", None)
        delta = a.pop("delta", None)
        gguf_file = a.pop("gguf_file", None)
        backend = a.pop("backend", "default")
        # What is left goes to from_pretrained, as HFLM's **kwargs (load_in_4bit, attn_implementation,
        # device_map, ...).
        model_kwargs = a

        device = spec.get("device") or ""
        if device in ("", "cuda") and not torch.cuda.is_available():
            device = "cpu"  # lm-eval's rule on a machine without CUDA (docs/models.md)
        self.device = torch.device(device or "cuda")
        if spec.get("seed") is not None:
            torch.manual_seed(int(spec["seed"]))  # simple_evaluate's torch seed

        # HFLM._get_config and _get_backend.
        self.config = transformers.AutoConfig.from_pretrained(
            pretrained, revision=revision, trust_remote_code=trust_remote_code, gguf_file=gguf_file,
            subfolder=subfolder)
        from transformers.models.auto.modeling_auto import (
            MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES)
        model_type = getattr(self.config, "model_type", None)
        if backend == "seq2seq" or (backend == "default" and
                                    model_type in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES):
            raise ValueError(f"model_type {model_type!r} is an encoder-decoder (seq2seq) model; "
                             "lm-eval's transformers path runs causal models only")
        self.known_model_type = model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

        # HFLM._create_model.
        quantization_config = getattr(self.config, "quantization_config", None)
        if isinstance(quantization_config, dict):
            from transformers.quantizers import AutoQuantizationConfig
            quantization_config = AutoQuantizationConfig.from_dict(quantization_config)
        model_kwargs.update(_accelerate_args(torch, self.device, parallelize,
                                             model_kwargs.get("device_map"), max_memory_per_gpu,
                                             max_cpu_memory, offload_folder))
        if model_kwargs.get("load_in_4bit"):
            if compute_dtype := model_kwargs.get("bnb_4bit_compute_dtype"):
                model_kwargs["bnb_4bit_compute_dtype"] = _get_dtype(torch, compute_dtype)
        if peft and delta:
            raise ValueError("Cannot use both 'peft' and 'delta' options at the same time.")
        if peft:
            _require("peft")
        auto = transformers.AutoModelForCausalLM
        self.from_pretrained_kwargs = dict(
            revision=revision, dtype=_get_dtype(torch, dtype), trust_remote_code=trust_remote_code,
            gguf_file=gguf_file, quantization_config=quantization_config, subfolder=subfolder,
            **model_kwargs)
        model = auto.from_pretrained(pretrained, **self.from_pretrained_kwargs)
        if peft:
            from peft import PeftModel
            vocab = spec.get("tokenizer_size")
            text = getattr(model.config, "text_config", None)
            size = (text.vocab_size if text is not None and hasattr(text, "vocab_size")
                    else model.config.vocab_size)
            if vocab is not None and size != vocab:
                model.resize_token_embeddings(vocab)  # HFLM: for LoRAs with added tokens
            model = PeftModel.from_pretrained(model, peft, revision=revision)
        elif delta:
            delta_model = auto.from_pretrained(delta, revision=revision,
                                               dtype=_get_dtype(torch, dtype),
                                               trust_remote_code=trust_remote_code, **model_kwargs)
            delta_state = delta_model.state_dict()
            for name, param in model.state_dict().items():
                if name not in delta_state:
                    raise KeyError(f"Delta model is missing weights for layer: {name}")
                param.data += delta_state[name]
            del delta_model
        if isinstance(model, torch.nn.Module):
            model.eval()
            model.tie_weights()
        self.model = model
        self.softmax_dtype = (_get_dtype(torch, spec["softmax_dtype"])
                              if spec.get("softmax_dtype") else None)

    def info(self):
        config = self.config
        params = (self.model.num_parameters() if hasattr(self.model, "num_parameters")
                  else sum(p.numel() for p in self.model.parameters()))
        eos = getattr(config, "eos_token_id", None)
        archs = getattr(config, "architectures", None) or [type(self.model).__name__]
        return {
            "architecture": archs[0],
            "model_class": type(self.model).__name__,
            "model_type": getattr(config, "model_type", None),
            "known_model_type": self.known_model_type,
            "vocab_size": getattr(getattr(config, "text_config", None) or config, "vocab_size",
                                  None),
            "max_length": _max_length(config),
            "eos_token_id": eos,
            "num_parameters": int(params),
            "dtype": str(getattr(self.model, "dtype", "")),
            "device": str(getattr(self.model, "device", self.device)),
        }

    def score(self, rows):
        # HFLM._loglikelihood_tokens: the rows right-padded with 0 and fed without a mask
        # (_model_call: self.model(inps).logits), log_softmax in softmax_dtype (None: the logits'),
        # each span's target log-probs gathered and summed, greedy when the argmax is the target at
        # every position.
        torch = self.torch
        width = max(len(r["tokens"]) for r in rows)
        ids = torch.tensor([r["tokens"] + [0] * (width - len(r["tokens"])) for r in rows],
                           dtype=torch.long).to(self.device)
        out = []
        with torch.no_grad():
            logits = self.model(ids).logits
            logprobs = torch.nn.functional.log_softmax(logits, dim=-1, dtype=self.softmax_dtype)
            for b, r in enumerate(rows):
                spans = []
                for first, targets in r["spans"]:
                    seg = logprobs[b, first:first + len(targets)]
                    cont = torch.tensor(targets, dtype=torch.long).to(seg.device)
                    greedy = bool((seg.argmax(dim=-1) == cont).all())
                    picked = torch.gather(seg, 1, cont.unsqueeze(-1)).squeeze(-1)
                    spans.append([float(picked.sum()), greedy])
                out.append(spans)
        return out

    def generate(self, prompts, max_new_tokens, pad_id, eos_ids, do_sample, temperature, top_p,
                 top_k, stop):
        # HFLM.generate_until over _model_generate: left-padded prompts with their attention mask,
        # max_length = the padded width + max_gen_toks, the stop test after every step (lm-eval's
        # stop_sequences_criteria), pad_token_id, use_cache, and the sampling settings as
        # _model_generate leaves them (temperature dropped when greedy). A row's tokens end where it
        # finished (its EOS kept), as lm-eval's native generate returns them.
        torch = self.torch
        transformers = self.transformers
        width = max(len(p) for p in prompts)
        ids = torch.tensor([[pad_id] * (width - len(p)) + p for p in prompts],
                           dtype=torch.long).to(self.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts],
                            dtype=torch.long).to(self.device)
        eos = set(eos_ids)
        ended = [None] * len(prompts)

        class Stop(transformers.StoppingCriteria):
            def __call__(self, input_ids, scores, **kwargs):
                new = input_ids[:, width:].tolist()
                for r, toks in enumerate(new):
                    if ended[r] is None and toks and (toks[-1] in eos or stop(r, toks)):
                        ended[r] = len(toks)
                return torch.tensor([e is not None for e in ended], dtype=torch.bool,
                                    device=input_ids.device)

        kwargs = {"do_sample": do_sample}
        if do_sample:
            kwargs["temperature"] = temperature
        if top_p is not None:
            kwargs["top_p"] = top_p
        if top_k is not None:
            kwargs["top_k"] = top_k
        with torch.no_grad():
            out = self.model.generate(
                input_ids=ids, attention_mask=mask, max_length=width + max_new_tokens,
                stopping_criteria=transformers.StoppingCriteriaList([Stop()]),
                pad_token_id=pad_id, use_cache=True, **kwargs)
        rows = out[:, width:].tolist()
        return [row[:ended[r]] if ended[r] is not None else row for r, row in enumerate(rows)]


def build(spec):
    model = TransformersModel(spec)
    return model, model.info()
