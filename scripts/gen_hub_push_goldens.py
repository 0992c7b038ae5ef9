#!/usr/bin/env python3
"""Goldens for `--hf_hub_log_args`: the reference's own EvaluationTracker (lm-eval 0.4.13) saving
and pushing a small two-task run, with huggingface_hub's HfApi replaced by an in-memory Hub that
records every call (repo, visibility, paths in the repo, commit messages) and the dataset card
it is given (DatasetCard.push_to_hub patched; the card's YAML front matter and summary are what
lm-eval compares, the body below is huggingface_hub's template).

The run's files as the tracker writes them (results_<date>.json, samples_<task>_<date>.jsonl)
are kept too: tests/output/hub_push_test.cpp pushes exactly those files with lm-eval and checks
that the Hub ends up as the golden says.

Environment: the tests' .venv-standin (lm-eval 0.4.13 with huggingface_hub and datasets).
Usage (from the repository root):
    .venv-standin/bin/python scripts/gen_hub_push_goldens.py tests/output/goldens/hub_push
"""
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

# The card's links use the endpoint; the test substitutes its fake Hub's address for this one.
os.environ["HF_ENDPOINT"] = "http://hub.invalid"

import huggingface_hub  # noqa: E402
import lm_eval.loggers.evaluation_tracker as et  # noqa: E402
from datasets import load_dataset  # noqa: E402

FIXED = dt.datetime(2026, 1, 2, 3, 4, 5, 678901)


class FixedDatetime(dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return FIXED


class FakeApi:
    """The HfApi methods EvaluationTracker calls, over a dict of repos."""

    def __init__(self):
        self.repos = {}
        self.calls = []

    def whoami(self):
        self.calls.append({"call": "whoami"})
        return {"name": "tester"}

    def create_repo(self, repo_id, repo_type, private, exist_ok):
        self.calls.append({"call": "create_repo", "repo_id": repo_id, "private": private})
        self.repos.setdefault(repo_id, {})

    def upload_file(self, repo_id, path_or_fileobj, path_in_repo, repo_type, commit_message=None):
        content = Path(path_or_fileobj).read_bytes()
        self.repos[repo_id][path_in_repo] = content
        self.calls.append({"call": "commit", "repo_id": repo_id, "message": commit_message,
                           "files": [path_in_repo]})

    def upload_folder(self, repo_id, folder_path, path_in_repo, repo_type, commit_message):
        files = []
        for p in sorted(Path(folder_path).rglob("*")):
            if p.is_file():
                name = f"{path_in_repo}/{p.relative_to(folder_path).as_posix()}"
                self.repos[repo_id][name] = p.read_bytes()
                files.append(name)
        self.calls.append({"call": "commit", "repo_id": repo_id, "message": commit_message,
                           "files": files})

    def list_repo_files(self, repo_id, repo_type):
        return sorted(self.repos[repo_id])


def main(out_dir):
    out_dir = Path(out_dir)
    api = FakeApi()
    et.EvaluationTracker._api = staticmethod(lambda token=None: api if token else None)
    et.datetime = FixedDatetime
    cards = []

    def push_card(self, repo_id, repo_type=None, **kw):
        cards.append({"repo_id": repo_id, "text": str(self)})

    huggingface_hub.RepoCard.push_to_hub = push_card

    def load_from_fake(kind, data_files, split):
        prefix = f"http://hub.invalid/datasets/"
        repo_and_file = data_files[len(prefix):]
        repo_id = "/".join(repo_and_file.split("/")[:2])
        name = repo_and_file.split("/resolve/main/", 1)[1]
        local = Path(tmp) / "dl" / name
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(api.repos[repo_id][name])
        return load_dataset(kind, data_files=str(local), split=split)

    et.load_dataset = load_from_fake

    tmp = tempfile.mkdtemp()
    try:
        output = Path(tmp) / "out"
        tracker = et.EvaluationTracker(
            output_path=str(output), hub_results_org="", details_repo_name="details",
            results_repo_name="scores", push_results_to_hub=True, push_samples_to_hub=True,
            public_repo=False, token="hf_fake", leaderboard_url="https://lb.example",
            point_of_contact="me@example.com")
        tracker.general_config_tracker.log_experiment_args(
            model_source="hf", model_args="pretrained=org/tiny-model,dtype=float32",
            system_instruction=None, chat_template=None, fewshot_as_multiturn=False)
        results = {
            "results": {
                "arc_easy": {"alias": "arc_easy", "acc,none": 0.5, "acc_stderr,none": 0.25},
                "gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.0,
                          "exact_match_stderr,strict-match": 0.0},
            },
            "configs": {"arc_easy": {"task": "arc_easy"}, "gsm8k": {"task": "gsm8k"}},
            "versions": {"arc_easy": 1.0, "gsm8k": 3.0},
            "config": {"model": "hf", "model_args": "pretrained=org/tiny-model,dtype=float32"},
        }
        samples = {
            "arc_easy": [{"doc_id": 0, "doc": {"q": "é?"}, "target": 1,
                          "arguments": [["Q: é?", " yes"], ["Q: é?", " no"]],
                          "resps": [[[-1.5, False]], [[-0.5, True]]],
                          "filtered_resps": [[-1.5, False], [-0.5, True]], "acc": 1.0,
                          "doc_hash": "a1", "prompt_hash": "b1", "target_hash": "c1"}],
            "gsm8k": [{"doc_id": 0, "doc": {"q": "1+1"}, "target": "2",
                       "arguments": [["Q: 1+1", {"until": ["\n"]}]],
                       "resps": [["3"]], "filtered_resps": ["3"], "exact_match": 0.0,
                       "doc_hash": "a2", "prompt_hash": "b2", "target_hash": "c2"}],
        }
        tracker.save_results_aggregated(results=results, samples=samples)
        for task in results["configs"]:
            tracker.save_results_samples(task_name=task, samples=samples[task])
        tracker.recreate_metadata_card()

        if out_dir.exists():
            shutil.rmtree(out_dir)
        run_dir = out_dir / "run"
        shutil.copytree(output, run_dir)
        golden = {
            "date_id": tracker.date_id,
            "model_name": tracker.general_config_tracker.model_name,
            "calls": api.calls,
            "repos": {r: sorted(files) for r, files in api.repos.items()},
            "cards": cards,
        }
        (out_dir / "golden.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main(sys.argv[1])
