#!/usr/bin/env python3
"""Writes tests/tasks/squadv2_class_goldens.json: the reference's own squadv2 task class
(lm_eval/tasks/squadv2/task.py SQuAD2) built on fixture rows and driven as lm-eval's Python plugin
drives a class task (src/python_plugin/python_plugin.cpp, ClassTask: simple_evaluate's settings,
get_sample_size + build_all_requests, responses handed back, apply_filters, process_results per
document, the sample records as evaluate() and EvaluationTracker write them,
_compute_task_aggregations), with fixed model responses; its aggregation loads evaluate's squad_v2
module from scripts/evaluate_metrics/squad_v2. For the unit test of lm-eval's native port
(src/tasks/class_tasks/squadv2_task.cpp, tests/tasks/class_task_test.cpp).

Usage: scripts/gen_squadv2_class_goldens.py [--venv DIR]   (default .venv-ref in the repo; DIR
must have lm-eval==0.4.13 and evaluate)."""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
METRIC = os.path.join(HERE, "evaluate_metrics", "squad_v2")
DEST = os.path.join(ROOT, "tests", "tasks", "squadv2_class_goldens.json")


def row(qid, title, context, question, *answers):
    return {"id": qid, "title": title, "context": context, "question": question,
            "answers": {"text": list(answers), "answer_start": [0] * len(answers)}}


ROWS = [
    row("q0", "Super Bowl 50", "The game was played on February 7, 2016.",
        "Who won Super Bowl 51?"),
    row("q1", "Super Bowl 50", "The Denver Broncos defeated the Carolina Panthers.",
        "Which team won?", "Denver Broncos", "The Denver Broncos", "Denver Broncos"),
    row("q2", "Stadium", "It was held at Levi's Stadium in Santa Clara, California.",
        "Where was it held?", "Santa Clara, California", "Levi's Stadium"),
    row("q3", "Normans", "The Normans were a people of Normandy.", "Who were the Danes?"),
    row("q4", "Articles", "A word that is only an article.", "Which word?", "the"),
    row("q5", "Medals", "She won the gold medal in Tokyo — a first.", "What did she win?",
        "gold", "the gold medal"),
]
# Per document: the continuation and the log-likelihood of " unanswerable" (exp: the no-answer
# probability; 0.0 gives 1.0, at the threshold, not above it).
RESPONSES = [("", -0.1), (" Denver Broncos", -3.0), (" Levi's Stadium in Santa Clara", -1.2),
             (" nothing", -0.5), (".", -2.0), (" The gold medal!", 0.0)]
CASES = [
    {"name": "every document", "limit": None, "samples": None, "system_instruction": None},
    {"name": "--limit 4 and a system instruction", "limit": 4, "samples": None,
     "system_instruction": "Answer briefly."},
    {"name": "--limit 0.5 (rounded up by get_sample_size)", "limit": 0.5, "samples": None,
     "system_instruction": None},
    {"name": "--samples out of order (the logged doc_id is samples[i])", "limit": None,
     "samples": [4, 1], "system_instruction": None},
]


def run_case(case):
    from lm_eval.evaluator_utils import _compute_task_aggregations, get_sample_size
    from lm_eval.tasks.squadv2.task import SQuAD2
    from lm_eval.utils import handle_non_serializable, hash_string, sanitize_list
    task = SQuAD2(config={"task": "squadv2"})
    task.config.task = "squadv2"
    # ClassTask.configure with no settings
    if task.get_config("num_fewshot") is None:
        task.set_config(key="num_fewshot", value=0)
    task.set_fewshot_seed(seed=1234)
    limit = get_sample_size(task, case["limit"])
    task.build_all_requests(limit=limit, samples=case["samples"], rank=0, world_size=1,
                            cache_requests=False, rewrite_requests_cache=False,
                            system_instruction=case["system_instruction"],
                            apply_chat_template=False, fewshot_as_multiturn=False,
                            chat_template=None, tokenizer_name="")
    built = [[i.request_type, i.doc_id, i.idx, list(i.arguments), i.repeats]
             for i in task.instances]
    resps = []
    for inst in task.instances:
        doc_pos = ROWS.index(dict(inst.doc))
        cont, ll = RESPONSES[doc_pos]
        resps.append([cont] if inst.request_type == "generate_until" else [[ll, False]])
        inst.resps = [cont] if inst.request_type == "generate_until" else [(ll, False)]
    task.apply_filters()
    by_doc = {}
    for inst in task.instances:
        by_doc.setdefault(inst.doc_id, []).append(inst)
    raw, samples = {}, []
    for doc_id, doc in task.doc_iterator(rank=0, limit=limit, world_size=1,
                                         samples=case["samples"]):
        requests = sorted(by_doc[doc_id], key=lambda x: x.idx)
        metrics = task.process_results(doc, [r.filtered_resps["none"] for r in requests])
        target = task.doc_to_target(doc)
        example = {
            "doc_id": case["samples"][doc_id] if case["samples"] else doc_id, "doc": doc,
            "target": target, "arguments": [r.args for r in requests],
            "resps": [r.resps for r in requests],
            "filtered_resps": [r.filtered_resps["none"] for r in requests], "filter": "none",
            "metrics": list(metrics.keys()),
            "doc_hash": hash_string(json.dumps(requests[0].doc, indent=2,
                                               default=handle_non_serializable,
                                               ensure_ascii=False)),
            "prompt_hash": hash_string(requests[0].arguments[0]),
            "target_hash": hash_string(str(target)),
        }
        example.update(metrics)
        example["arguments"] = {f"gen_args_{i}": {f"arg_{j}": a for j, a in enumerate(arg)}
                                for i, arg in enumerate(example["arguments"])}
        example["resps"] = sanitize_list(example["resps"])
        example["filtered_resps"] = sanitize_list(example["filtered_resps"])
        example["target"] = str(example["target"])
        samples.append(json.loads(json.dumps(example, default=handle_non_serializable,
                                             ensure_ascii=False)))
        for metric, value in metrics.items():
            raw.setdefault((metric, "none"), []).append(value)
    agg, sample_len = _compute_task_aggregations(task, raw, 100000)
    config = dict(task.dump_config())
    out = {"results": {"name": "squadv2", "alias": config.get("task_alias", "squadv2"),
                       "sample_len": sample_len, **agg},
           "config": config, "version": task.VERSION,
           "num_fewshot": config.get("num_fewshot", 0),
           "higher_is_better": task.higher_is_better(),
           "n_samples": {"original": len(task.eval_docs), "effective": sample_len}}
    out = json.loads(json.dumps(out, default=handle_non_serializable, ensure_ascii=False))
    out["samples"] = samples
    return {**case, "requests": built, "resps": resps, "score": out}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-ref"))
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.inside:
        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
        subprocess.run([os.path.join(args.venv, "bin", "python"), os.path.abspath(__file__),
                        "--inside"], env=env, check=True)
        return
    import datasets
    import evaluate
    load_metric = evaluate.load
    evaluate.load = lambda name, *a, **k: load_metric(METRIC if name == "squad_v2" else name,
                                                      *a, **k)

    def load_dataset(path=None, name=None, **kwargs):
        assert path == "lighteval/squad_v2" and name is None, (path, name)
        return datasets.DatasetDict({"train": datasets.Dataset.from_list(ROWS[:2]),
                                     "validation": datasets.Dataset.from_list(ROWS)})

    datasets.load_dataset = load_dataset
    out = {"generator": "scripts/gen_squadv2_class_goldens.py", "rows": ROWS,
           "cases": [run_case(c) for c in CASES]}
    with open(DEST, "w", encoding="utf-8") as f:
        # one line per case (the samples repeat each document's prediction under 8 metrics)
        f.write("{\"generator\": %s, \"rows\": %s, \"cases\": [\n" % (
            json.dumps(out["generator"]), json.dumps(ROWS, ensure_ascii=False)))
        f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in out["cases"]))
        f.write("\n]}\n")
    print(f"wrote {len(out['cases'])} cases to {os.path.relpath(DEST, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
