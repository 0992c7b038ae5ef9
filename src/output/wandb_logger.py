# lm-eval's W&B logging, run by the active Python environment's interpreter (output/wandb_log.cpp)
# with the run's results and samples. It logs what the reference's WandbLogger
# (lm_eval/loggers/wandb_logger.py) logs: wandb.init(**wandb_args) and config.update with
# wandb_config_args, the task and CLI configs, string results in the summary, the numeric ones
# as metrics, the results and groups tables, the results JSON artifact, and with samples one
# table and one JSON artifact per task (tasks of a group share the group's table).
import json


def _metric_key(name):
    return name[: -len(",none")] if name.endswith(",none") else name


def _split_results(results):
    summary, metrics = {}, {}
    for task, scores in results.get("results", {}).items():
        for name, value in scores.items():
            key = f"{task}/{_metric_key(name)}"
            if isinstance(value, str):
                summary[key] = value
            else:
                metrics[key] = value
    return summary, metrics


def _results_table(wandb, results, key, first_column):
    columns = [first_column, "Version", "Filter", "num_fewshot", "Metric", "Value", "Stderr"]
    table = wandb.Table(columns=columns)
    groups = set(results.get("groups", {}))
    versions = results.get("versions", {})
    n_shot = results.get("n-shot", {})
    for task, scores in results.get(key, {}).items():
        if key != "groups" and task in groups:
            continue
        version = versions.get(task)
        version = None if version == "N/A" else version
        for metric_filter, value in scores.items():
            metric, _, filt = metric_filter.partition(",")
            if metric.endswith("_stderr") or metric == "alias":
                continue
            stderr_key = f"{metric}_stderr,{filt}"
            stderr = ""
            if stderr_key in scores:
                se = scores[stderr_key]
                stderr = str(se if se == "N/A" else "%.4f" % se)
            table.add_data(task, version, filt, n_shot.get(task), metric, str(value), stderr)
    return table


def _artifact(wandb, run, name, kind, file_name, value):
    artifact = wandb.Artifact(name, type=kind)
    with artifact.new_file(file_name, mode="w", encoding="utf-8") as f:
        f.write(json.dumps(value, indent=2, ensure_ascii=False))
    run.log_artifact(artifact)


def _arguments(sample):
    # The samples file writes arguments as {"gen_args_i": {"arg_j": value}}; the reference's
    # logger sees them as the request's argument lists.
    args = sample.get("arguments", [])
    if isinstance(args, dict):
        return [list(a.values()) if isinstance(a, dict) else a for a in args.values()]
    return args


def _argmax(values):
    return max(range(len(values)), key=lambda i: (values[i], -i)) if values else None


def _sample_rows(data, config):
    output_type = config.get("output_type")
    columns = ["id", "data"] + (["choices"] if output_type == "multiple_choice" else [])
    columns += ["input_len", "labels", "output_type", "raw_predictions", "filtered_predictions"]
    metric_columns = []
    for entry in config.get("metric_list", []):
        m = entry.get("metric")
        if m in ("word_perplexity", "byte_perplexity", "bits_per_byte"):
            unit = "_words" if m == "word_perplexity" else "_bytes"
            metric_columns += [(m + "_loglikelihood", m, 0), (m + unit, m, 1)]
        else:
            metric_columns.append((m, m, None))
    columns += [c for c, _, _ in metric_columns]
    rows = []
    for x in data:
        args = _arguments(x)
        instance = args[0][0] if args and args[0] else ""
        label = x.get("target")
        resps, filtered = x.get("resps", []), x.get("filtered_resps", [])
        raw, filt, choices = "", "", None
        greedy = "continuation will {} generated with greedy sampling"
        if output_type == "loglikelihood":
            label = args[0][1]
            raw = (f"log probability of continuation is {resps[0][0][0]} \n\n"
                   + greedy.format("not be" if not resps[0][0][1] else "be"))
            filt = (f"log probability of continuation is {filtered[0][0]} \n\n"
                    + greedy.format("not be" if not filtered[0][1] else "be"))
        elif output_type == "multiple_choice":
            choices = "\n".join(f"{i}. {a[1]}" for i, a in enumerate(args))
            raw = _argmax([r[0][0] for r in resps])
            filt = _argmax([r[0] for r in filtered])
        elif output_type in ("loglikelihood_rolling", "generate_until"):
            raw, filt = resps[0][0], filtered[0]
        row = [x.get("doc_id"), instance] + ([choices] if choices is not None else [])
        row += [len(instance), label, output_type, raw, filt]
        for _, m, i in metric_columns:
            v = x.get(m)
            row.append(v[i] if i is not None and isinstance(v, list) else v)
        rows.append(row)
    return columns, rows


def _log_samples(wandb, run, results, samples, step):
    groups = set(results.get("groups", {}))
    configs = results.get("configs", {})
    ungrouped, by_group = [], {}
    for task in results.get("results", {}):
        if task in groups or task not in samples:
            continue
        names = configs.get(task, {}).get("group")
        names = [names] if isinstance(names, str) else names
        if not names:
            ungrouped.append(task)
        for g in names or []:
            by_group.setdefault(g, []).append(task)
    for task in ungrouped:
        columns, rows = _sample_rows(samples[task], configs.get(task, {}))
        run.log({f"{task}_eval_results": wandb.Table(columns=columns, data=rows)}, step=step)
        _artifact(wandb, run, task, "samples_by_task", f"{task}_eval_samples.json", samples[task])
    for group, tasks in by_group.items():
        all_columns, all_rows = None, []
        for task in tasks:
            columns, rows = _sample_rows(samples[task], configs.get(task, {}))
            all_columns = all_columns or columns + ["group", "task"]
            all_rows += [r + [group, task] for r in rows]
            _artifact(wandb, run, task, "samples_by_task", f"{task}_eval_samples.json",
                      samples[task])
        run.log({f"{group}_eval_results": wandb.Table(columns=all_columns, data=all_rows)},
                step=step)


def log_run(payload_path, status_path):
    with open(payload_path, encoding="utf-8") as f:
        payload = json.load(f)
    status = {"ok": True}
    try:
        import wandb

        init_args = dict(payload["wandb_args"])
        step = init_args.pop("step", None)
        run = wandb.run
        if run is None:
            run = wandb.init(**init_args)
            if payload["wandb_config_args"]:
                run.config.update(payload["wandb_config_args"])
        try:
            results = payload["results"]
            run.config.update({"task_configs": results.get("configs", {}),
                               "cli_configs": results.get("config", {})},
                              allow_val_change=step is not None)
            summary, metrics = _split_results(results)
            run.summary.update(summary)
            run.log(metrics, step=step)
            run.log({"evaluation/eval_results": _results_table(wandb, results, "results", "Tasks")},
                    step=step)
            if "groups" in results:
                run.log({"evaluation/group_eval_results":
                         _results_table(wandb, results, "groups", "Groups")}, step=step)
            _artifact(wandb, run, "results", "eval_results", "results.json", results)
            if payload["samples"] is not None:
                _log_samples(wandb, run, results, payload["samples"], step)
            status["url"] = getattr(run, "url", None)
        except Exception as e:  # noqa: BLE001 - reported to lm-eval, which logs it
            status = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        run.finish()
    except Exception as e:  # noqa: BLE001
        status = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    with open(status_path, "w", encoding="utf-8") as f:
        json.dump(status, f)
