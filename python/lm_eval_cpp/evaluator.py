"""``simple_evaluate``: the reference's lm_eval.evaluator.simple_evaluate (0.4.13) arguments and
returned dict, run by lm-eval's C++ evaluator (the same run as `lm-eval run`)."""

import json
import logging

from . import _lmeval
from .tasks import TaskManager

logger = logging.getLogger("lm_eval_cpp")

# The results file's keys that EvaluationTracker adds after simple_evaluate returns (from
# task_hashes on), and lm-eval's own additions after them: not in the returned dict.
_FILE_ONLY_FROM = "task_hashes"


def _refuse_model_object(model):
    raise TypeError(
        f"lm_eval_cpp.simple_evaluate takes a model by name and path, not a {type(model).__name__} "
        "object: the C++ evaluator cannot run a model held by this Python process. Save it "
        "(model.save_pretrained(folder); tokenizer.save_pretrained(folder)) and pass "
        "model='hf', model_args={'pretrained': folder}")


def _run_keys(model, model_args, tasks, num_fewshot, batch_size, max_batch_size, device,
              use_cache, cache_requests, limit, samples, bootstrap_iters, write_out, log_samples,
              system_instruction, apply_chat_template, fewshot_as_multiturn, gen_kwargs,
              task_manager, verbosity, predict_only, seeds, confirm_run_unsafe_code, metadata):
    """The run settings as an eval.yaml would hold them (src/config/run_options.cpp)."""
    keys = {
        "model": model,
        "model_args": model_args if model_args is not None else "",
        "tasks": list(tasks),
        "num_fewshot": num_fewshot,
        "max_batch_size": max_batch_size,
        "limit": limit,
        "bootstrap_iters": bootstrap_iters,
        "write_out": bool(write_out),
        "log_samples": bool(log_samples),
        "apply_chat_template": apply_chat_template,
        "predict_only": bool(predict_only),
        "seed": list(seeds),
        "confirm_run_unsafe_code": bool(confirm_run_unsafe_code),
        "cache_requests": cache_requests,
    }
    # Multi-turn few-shot applies to chat templates only; the CLI's check that refuses it
    # without one (EvaluatorConfig._configure) is not simple_evaluate's.
    if apply_chat_template:
        keys["fewshot_as_multiturn"] = bool(fewshot_as_multiturn)
    if batch_size is not None:
        keys["batch_size"] = batch_size
    if device is not None:
        keys["device"] = device
    for name, value in (("use_cache", use_cache), ("samples", samples),
                        ("system_instruction", system_instruction), ("verbosity", verbosity)):
        if value is not None:
            keys[name] = value
    if gen_kwargs:
        keys["gen_kwargs"] = gen_kwargs
    if metadata:
        keys["metadata"] = metadata
    if task_manager is not None and task_manager._paths:
        keys["include_path"] = ":".join(task_manager._paths)
    return keys


def simple_evaluate(
    model,
    model_args=None,
    tasks=None,
    num_fewshot=None,
    batch_size=None,
    max_batch_size=None,
    device=None,
    use_cache=None,
    cache_requests=False,
    rewrite_requests_cache=False,
    delete_requests_cache=False,
    limit=None,
    samples=None,
    bootstrap_iters=100000,
    check_integrity=False,
    write_out=False,
    log_samples=True,
    evaluation_tracker=None,
    system_instruction=None,
    apply_chat_template=False,
    fewshot_as_multiturn=True,
    gen_kwargs=None,
    task_manager=None,
    verbosity=None,
    predict_only=False,
    random_seed=0,
    numpy_random_seed=1234,
    torch_random_seed=1234,
    fewshot_random_seed=1234,
    confirm_run_unsafe_code=False,
    metadata=None,
):
    """Evaluates `model` on `tasks`; returns the reference's results dict (see its docstring)."""
    if limit is not None and samples is not None:
        raise ValueError("Either 'limit' or 'samples' must be None, but both are not None.")
    if not isinstance(model, str):
        _refuse_model_object(model)
    if not tasks:
        raise ValueError("No tasks specified, or no tasks found. Please verify the task names.")
    if isinstance(tasks, str):
        tasks = [tasks]
    for t in tasks:
        if not isinstance(t, str):
            raise TypeError(
                f"lm_eval_cpp.simple_evaluate takes tasks by name or YAML path, not a "
                f"{type(t).__name__}: write the config to a YAML file and pass its path")
    if evaluation_tracker is not None:
        raise TypeError(
            "lm_eval_cpp.simple_evaluate writes no files, so it takes no evaluation_tracker: "
            "json.dump the returned dict, or run `lm-eval run --output_path DIR`")
    if check_integrity:
        raise ValueError("check_integrity runs the reference's Python test suite and is not "
                         "supported (`lm-eval validate` checks task configs)")
    if task_manager is not None and not isinstance(task_manager, TaskManager):
        raise TypeError("task_manager must be an lm_eval_cpp.TaskManager")
    requests_cache = {}
    if cache_requests:
        requests_cache["cache_requests"] = True
    if rewrite_requests_cache:
        requests_cache["rewrite_requests_cache"] = True
    if delete_requests_cache:
        requests_cache["delete_requests_cache"] = True
    seeds = (random_seed, numpy_random_seed, torch_random_seed, fewshot_random_seed)
    keys = _run_keys(model, model_args, tasks, num_fewshot, batch_size, max_batch_size, device,
                     use_cache, requests_cache, limit, samples, bootstrap_iters, write_out,
                     log_samples or predict_only, system_instruction, apply_chat_template,
                     fewshot_as_multiturn, gen_kwargs, task_manager, verbosity, predict_only,
                     seeds, confirm_run_unsafe_code, metadata)
    results_text, samples_by_task = _lmeval.evaluate(json.dumps(keys))
    full = json.loads(results_text)
    return _returned_dict(full, samples_by_task, log_samples or predict_only, {
        "model_args": model_args if model_args is not None else "",
        "batch_size": batch_size,
        "device": device,
        "use_cache": use_cache,
        "limit": limit,
        "bootstrap_iters": bootstrap_iters,
        "random_seed": random_seed,
        "numpy_seed": numpy_random_seed,
        "torch_seed": torch_random_seed,
        "fewshot_seed": fewshot_random_seed,
    })


def _returned_dict(full, samples_by_task, with_samples, echoed):
    """simple_evaluate's dict from the results file's: evaluate()'s keys, `samples` after
    n-samples when logged, then the config block and environment keys."""
    out = {}
    for key, value in full.items():
        if key == _FILE_ONLY_FROM:
            break
        if key == "config":
            if with_samples:
                # In the order evaluate() ran the tasks, which n-samples keeps too.
                by_task = dict(samples_by_task)
                order = [t for t in full.get("n-samples", {}) if t in by_task]
                order += [t for t in by_task if t not in order]
                out["samples"] = {t: json.loads(by_task[t]) for t in order}
            # The reference echoes these arguments as they were passed.
            for k, v in echoed.items():
                if k in value:
                    value[k] = v
            # simple_evaluate keeps its gen_kwargs argument as parsed, None when empty.
            if "gen_kwargs" in value and not value["gen_kwargs"]:
                value["gen_kwargs"] = None
        out[key] = value
    return out
