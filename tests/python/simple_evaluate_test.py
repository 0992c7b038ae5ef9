"""lm_eval_cpp.simple_evaluate and TaskManager against the reference's own (lm_eval 0.4.13) on
the goldens' `hashfake` model (issue 33, point 5): the whole returned dicts, key order included.

Needs an interpreter with the reference installed (ctest runs it with .venv-standin's), the
built package (PYTHONPATH=build/python) and ../shared/goldens/tools/hashfake_plugin.py; skips
with a message otherwise.
"""

import glob
import json
import os
import sys
import tempfile
import unittest

SHARED = os.environ.get("LMEVAL_SHARED_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared")
HASHFAKE = os.path.join(SHARED, "goldens", "tools")

try:
    import lm_eval
    import lm_eval.evaluator
    import lm_eval.tasks
    from lm_eval.loggers import EvaluationTracker
    REFERENCE = getattr(lm_eval, "__version__", "")
except ImportError as e:  # the environment lacks the reference
    REFERENCE = None
    WHY = f"the reference's lm_eval does not import here ({e}); run with .venv-standin's python"

try:
    import lm_eval_cpp
except ImportError as e:
    lm_eval_cpp = None
    WHY_CPP = f"lm_eval_cpp does not import ({e}); build lmeval_pymodule, PYTHONPATH=build/python"

# Facts of the machine and the program, not of the evaluation.
ENVIRONMENT_KEYS = ("date", "git_hash", "upper_git_hash", "pretty_env_info",
                    "transformers_version", "lm_eval_version")

MC_TASK = """task: mc_probe
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
    train: {data}
output_type: multiple_choice
test_split: test
fewshot_split: train
doc_to_text: "Q: {{{{q}}}}\\nA:"
doc_to_choice: choices
doc_to_target: label
metric_list:
  - metric: acc
  - metric: acc_norm
metadata:
  version: 1.0
"""

GEN_TASK = """task: gen_probe
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
output_type: generate_until
test_split: test
doc_to_text: "Q: {{{{q}}}}\\nA:"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n\\n"]
filter_list:
  - name: strict
    filter:
      - function: regex
        regex_pattern: "#### (\\\\d+)"
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 2.0
"""

ROWS = [
    {"q": "1+1?", "choices": ["1", "2", "3"], "label": 1, "answer": "2"},
    {"q": "2+2?", "choices": ["4", "5", "6"], "label": 0, "answer": "4"},
    {"q": "3+3?", "choices": ["5", "6", "7"], "label": 1, "answer": "6"},
    {"q": "4+4?", "choices": ["8", "9", "7"], "label": 0, "answer": "8"},
    {"q": "5+5?", "choices": ["9", "11", "10"], "label": 2, "answer": "10"},
]


def file_form_samples(samples, scratch):
    """The reference's in-memory samples as its EvaluationTracker writes them (JSONL)."""
    out = {}
    for task, records in samples.items():
        folder = tempfile.mkdtemp(dir=scratch)
        tracker = EvaluationTracker(output_path=folder + "/r.json")
        tracker.date_id = "d"  # set by save_results_aggregated, which is not called here
        tracker.save_results_samples(task_name=task, samples=records)
        (path,) = glob.glob(folder + "/samples_*.jsonl")
        with open(path) as f:
            out[task] = [json.loads(line) for line in f if line.strip()]
    return out


@unittest.skipIf(REFERENCE is None, "" if REFERENCE is not None else WHY)
@unittest.skipIf(lm_eval_cpp is None, "" if lm_eval_cpp is not None else WHY_CPP)
@unittest.skipUnless(os.path.exists(os.path.join(HASHFAKE, "hashfake_plugin.py")),
                     f"{HASHFAKE}/hashfake_plugin.py is absent (set LMEVAL_SHARED_DIR)")
class SimpleEvaluate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, HASHFAKE)
        import hashfake_plugin  # noqa: F401  registers "hashfake" with the reference

        cls.tmp = tempfile.TemporaryDirectory(prefix="lmeval_pyapi_")
        d = cls.tmp.name
        os.environ.setdefault("HF_DATASETS_CACHE", os.path.join(d, "hf_cache"))
        os.environ["HF_DATASETS_OFFLINE"] = "1"
        os.environ["HF_HUB_OFFLINE"] = "1"
        data = os.path.join(d, "rows.jsonl")
        with open(data, "w") as f:
            for r in ROWS:
                f.write(json.dumps(r) + "\n")
        cls.tasks = os.path.join(d, "tasks")
        os.makedirs(cls.tasks)
        for name, text in (("mc_probe.yaml", MC_TASK), ("gen_probe.yaml", GEN_TASK)):
            with open(os.path.join(cls.tasks, name), "w") as f:
                f.write(text.format(data=data))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def both(self, **kwargs):
        ref = lm_eval.evaluator.simple_evaluate(
            model="hashfake", task_manager=lm_eval.tasks.TaskManager(include_path=self.tasks),
            **kwargs)
        ours = lm_eval_cpp.simple_evaluate(
            model="hashfake", task_manager=lm_eval_cpp.TaskManager(include_path=self.tasks),
            **kwargs)
        for d in (ref, ours):
            for k in ENVIRONMENT_KEYS:
                self.assertIn(k, d)
                d[k] = "<environment>"
        if "samples" in ref:
            ref["samples"] = file_form_samples(ref["samples"], self.tmp.name)
        return ref, ours

    maxDiff = None

    def assert_same(self, ref, ours):
        # Key order matters (results files and tables are written in it): compare as dumped.
        self.assertEqual(json.dumps(ours, indent=1, default=str),
                         json.dumps(ref, indent=1, default=str))

    def test_multiple_choice_with_fewshot_and_samples(self):
        ref, ours = self.both(tasks=["mc_probe"], num_fewshot=2)
        self.assertIn("samples", ours)
        self.assert_same(ref, ours)

    def test_generate_until_with_gen_kwargs_without_samples(self):
        ref, ours = self.both(tasks=["gen_probe"], log_samples=False, gen_kwargs="temperature=0",
                              limit=3)
        self.assertNotIn("samples", ours)
        self.assert_same(ref, ours)

    def test_predict_only(self):
        ref, ours = self.both(tasks=["mc_probe", "gen_probe"], predict_only=True)
        self.assert_same(ref, ours)


@unittest.skipIf(lm_eval_cpp is None, "" if lm_eval_cpp is not None else WHY_CPP)
class PackageSurface(unittest.TestCase):
    def test_an_in_memory_model_is_refused_with_what_to_do(self):
        with self.assertRaisesRegex(TypeError, "save_pretrained"):
            lm_eval_cpp.simple_evaluate(model=object(), tasks=["arc_easy"])

    def test_bad_settings_name_the_argument(self):
        with self.assertRaisesRegex(lm_eval_cpp.UserError, r"simple_evaluate\(num_fewshot=...\)"):
            lm_eval_cpp.simple_evaluate(model="dummy", tasks=["arc_easy"], num_fewshot="two")
        with self.assertRaisesRegex(lm_eval_cpp.UserError, "Tasks not found: no_such_task_xyz"):
            lm_eval_cpp.simple_evaluate(model="dummy", tasks=["no_such_task_xyz"])
        with self.assertRaisesRegex(ValueError, "Either 'limit' or 'samples'"):
            lm_eval_cpp.simple_evaluate(model="dummy", tasks=["arc_easy"], limit=1,
                                        samples={"arc_easy": [0]})

    def test_python_helpers_are_refused_inside_python(self):
        # The embedded interpreter (another libpython) must not start in this process.
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "rows.jsonl"), "w") as f:
                f.write(json.dumps(ROWS[0]) + "\n")
            with open(os.path.join(d, "py_probe.yaml"), "w") as f:
                f.write(MC_TASK.format(data=os.path.join(d, "rows.jsonl"))
                        .replace("mc_probe", "py_probe") + "process_docs: !function utils.keep\n")
            with open(os.path.join(d, "utils.py"), "w") as f:
                f.write("def keep(ds):\n    return ds\n")
            with self.assertRaisesRegex(lm_eval_cpp.UserError,
                                        "py_probe.yaml:.*inside a Python process"):
                lm_eval_cpp.simple_evaluate(
                    model="dummy", tasks=["py_probe"],
                    task_manager=lm_eval_cpp.TaskManager(include_path=d))

    def test_task_manager_lists_and_matches_as_the_reference_does(self):
        tm = lm_eval_cpp.TaskManager()
        self.assertIn("arc_easy", tm.all_subtasks)
        self.assertIn("arc_easy", tm.all_tasks)
        self.assertEqual(tm.all_tasks, sorted(tm.all_tasks))
        self.assertEqual(tm.match_tasks(["arc_e*", "arc_easy"]), ["arc_easy"])
        self.assertEqual(tm.match_tasks("no_such_*"), [])


@unittest.skipIf(REFERENCE is None, "" if REFERENCE is not None else WHY)
@unittest.skipIf(lm_eval_cpp is None, "" if lm_eval_cpp is not None else WHY_CPP)
class TaskManagerAgainstReference(unittest.TestCase):
    def test_an_include_path_alone_lists_the_same_names(self):
        with tempfile.TemporaryDirectory() as d:
            for name, extra in (("t_one", "tag: [tag_x]\n"), ("t_two", "tag: [tag_x]\n")):
                with open(os.path.join(d, name + ".yaml"), "w") as f:
                    f.write(f"task: {name}\ndataset_path: json\noutput_type: multiple_choice\n"
                            "test_split: test\ndoc_to_text: q\ndoc_to_choice: c\n"
                            "doc_to_target: 0\n" + extra)
            with open(os.path.join(d, "g.yaml"), "w") as f:
                f.write("group: g_probe\ntask: [t_one, t_two]\n")
            ref = lm_eval.tasks.TaskManager(include_path=d, include_defaults=False)
            ours = lm_eval_cpp.TaskManager(include_path=d, include_defaults=False)
            for attr in ("all_tasks", "all_subtasks", "all_groups", "all_tags"):
                self.assertEqual(getattr(ours, attr), getattr(ref, attr), attr)
            self.assertEqual(ours.match_tasks(["t_*", "g_*"]), ref.match_tasks(["t_*", "g_*"]))


FIXTURE = os.path.join(SHARED, "fixtures", "llama")
BINARY = os.environ.get("LMEVAL_BINARY", "")


@unittest.skipIf(lm_eval_cpp is None, "" if lm_eval_cpp is not None else WHY_CPP)
@unittest.skipUnless(os.path.isdir(FIXTURE), f"{FIXTURE} is absent (set LMEVAL_SHARED_DIR)")
@unittest.skipUnless(BINARY and os.path.exists(BINARY), "LMEVAL_BINARY (the lm-eval binary) unset")
class HfModelByPath(unittest.TestCase):
    """A training loop's checkpoint folder, evaluated in this process twice (as a loop would)
    and by `lm-eval run`: the hf plugin loads inside Python and gives the command's numbers."""

    def test_a_checkpoint_folder_evaluates_as_the_command_does(self):
        import subprocess

        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "rows.jsonl")
            with open(data, "w") as f:
                for r in ROWS:
                    f.write(json.dumps(r) + "\n")
            with open(os.path.join(d, "mc_probe.yaml"), "w") as f:
                f.write(MC_TASK.format(data=data))
            args = {"pretrained": FIXTURE, "dtype": "float32"}
            try:
                runs = [lm_eval_cpp.simple_evaluate(
                    model="hf", model_args=args, tasks=["mc_probe"], device="cpu",
                    log_samples=False, task_manager=lm_eval_cpp.TaskManager(include_path=d))
                    for _ in range(2)]
            except lm_eval_cpp.UserError as e:
                if "hf" in str(e) and "plugin" in str(e):
                    self.skipTest(f"this build has no hf backend: {e}")
                raise
            self.assertEqual(runs[0]["results"], runs[1]["results"])
            out = os.path.join(d, "out")
            r = subprocess.run([BINARY, "run", "--model", "hf", "--model_args",
                                f"pretrained={FIXTURE},dtype=float32", "--tasks", "mc_probe",
                                "--device", "cpu", "--include_path", d, "--output_path", out],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            (path,) = glob.glob(out + "/**/results_*.json", recursive=True)
            with open(path) as f:
                self.assertEqual(runs[0]["results"], json.load(f)["results"])


if __name__ == "__main__":
    unittest.main()
