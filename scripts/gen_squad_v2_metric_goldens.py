#!/usr/bin/env python3
"""Writes tests/tasks/functions/squad_v2_metric_goldens.json: evaluate's `squad_v2` metric (the
real module, scripts/evaluate_metrics/squad_v2: huggingface/evaluate's metrics/squad_v2 files, which
evaluate.load("squad_v2") fetches from the Hub) run through `evaluate` on small cases, for the unit
test of lm-eval's native port (src/tasks/functions/squad_v2_metric.cpp, the squadv2 task's
aggregation).

Usage: scripts/gen_squad_v2_metric_goldens.py [--venv DIR]   (default .venv-ref in the repo; DIR
must have `evaluate` and `datasets`, e.g. lm-eval==0.4.13's environment)."""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
METRIC = os.path.join(HERE, "evaluate_metrics", "squad_v2")
DEST = os.path.join(ROOT, "tests", "tasks", "functions", "squad_v2_metric_goldens.json")


def p(qid, text, prob):
    return {"id": qid, "prediction_text": text, "no_answer_probability": prob}


def r(qid, *texts):
    return {"id": qid, "answers": {"text": list(texts), "answer_start": [0] * len(texts)}}


# (name, predictions, references, no_answer_threshold or None for the default 1.0)
CASES = [
    ("mixed answerable and unanswerable",
     [p("a", "the Eiffel Tower", 0.1), p("b", "Paris, France", 0.25), p("c", "", 0.7),
      p("d", "nothing here", 0.4), p("e", "1976", 0.05)],
     [r("a", "Eiffel Tower", "The Eiffel Tower"), r("b", "Paris"), r("c"), r("d"),
      r("e", "in 1976", "1976", "1976")], None),
    ("only unanswerable questions (no HasAns keys)",
     [p("x", "", 0.9), p("y", "something", 0.3), p("z", "  ", 0.3)],
     [r("x"), r("y"), r("z")], None),
    ("only answerable questions (no NoAns keys)",
     [p("x", "a cat sat", 0.2), p("y", "", 0.6), p("z", "dog", 0.2)],
     [r("x", "the cat sat down"), r("y", "river"), r("z", "Dog!")], None),
    ("gold answers that normalise to nothing count as answerable, scored against ''",
     [p("q1", "", 0.3), p("q2", "The.", 0.3), p("q3", "word", 0.3)],
     [r("q1", "the"), r("q2", ".", "an"), r("q3", "a")], None),
    ("punctuation-only prediction of an unanswerable question: exact, but not empty for best_*",
     [p("u1", ".", 0.5), p("u2", "", 0.6), p("h1", "blue whale", 0.55)],
     [r("u1"), r("u2"), r("h1", "the blue whale")], None),
    ("no-answer probabilities at and around the default threshold 1.0 (float32 feature)",
     [p("t1", "wrong", 1.0), p("t2", "wrong", 1.0000001), p("t3", "wrong", 0.99999999),
      p("t4", "right answer", 1.5), p("t5", "wrong", 1.00000006), p("t6", "right answer", 2.0)],
     [r("t1"), r("t2"), r("t3", "x"), r("t4", "right answer"), r("t5"), r("t6")], None),
    ("a threshold of 0.5 with probabilities just below, at and above it",
     [p("s1", "yes", 0.5), p("s2", "yes", 0.50000001), p("s3", "yes", 0.5000001),
      p("s4", "no", 0.49999999), p("s5", "", 0.7)],
     [r("s1"), r("s2", "yes"), r("s3"), r("s4", "no"), r("s5", "maybe")], 0.5),
    ("ties in no-answer probability keep the predictions' order (stable sort)",
     [p("k1", "alpha", 0.3), p("k2", "x", 0.3), p("k3", "gamma", 0.3), p("k4", "", 0.3),
      p("k5", "delta", 0.1)],
     [r("k1", "alpha"), r("k2"), r("k3", "gamma ray"), r("k4"), r("k5", "epsilon")], None),
    ("a repeated id counts once, with its last entry",
     [p("d1", "one", 0.2), p("d2", "two", 0.4), p("d1", "uno", 0.6)],
     [r("d1", "one"), r("d2"), r("d1", "uno", "one")], None),
    ("partial token overlap, repeated tokens, articles and case (F1 max over golds)",
     [p("f1", "The quick brown fox fox", 0.15), p("f2", "an apple a day", 0.35),
      p("f3", "Übermäßig GROß", 0.45), p("f4", "rock and roll music", 0.01)],
     [r("f1", "quick fox", "brown fox jumps", "fox fox"), r("f2", "apple day keeps"),
      r("f3", "übermäßig groß"), r("f4", "roll", "rock music", "")], None),
    ("probabilities from a model's log-likelihoods (exp of logprobs), best thresholds inside",
     [p("m%d" % i, ["", "answer %d" % i, "the answer"][i % 3], prob)
      for i, prob in enumerate([0.2593007197003958, 0.0009540142371983453, 0.09447485141893225,
                                0.7310585786300049, 0.018315638888734182, 0.36787944117144233,
                                0.1353352832366127, 0.6065306597126334, 0.0497870683678639])],
     [r("m%d" % i, *([] if i % 2 else ["answer %d" % i, "the answer"])) for i in range(9)], None),
    ("one question", [p("only", "Denver Broncos", 0.0)], [r("only", "Denver Broncos")], None),
]


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
    import evaluate
    metric = evaluate.load(METRIC)
    out = []
    for name, preds, refs, thresh in CASES:
        kwargs = {} if thresh is None else {"no_answer_threshold": thresh}
        result = metric.compute(predictions=preds, references=refs, **kwargs)
        out.append({"name": name, "predictions": preds, "references": refs,
                    "no_answer_threshold": thresh, "result": result})
    with open(DEST, "w", encoding="utf-8") as f:
        json.dump({"generator": "scripts/gen_squad_v2_metric_goldens.py",
                   "evaluate": evaluate.__version__, "cases": out}, f, indent=1,
                  ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(out)} cases to {os.path.relpath(DEST, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
