"""A stand-in for the Hub's `squad_v2` evaluate metric, for comparisons on a machine without
network (scripts/compare_reference_library.py run from scripts/standin_metrics: evaluate.load
finds ./squad_v2/squad_v2.py before the Hub). It scores as the SQuAD 2.0 definition does
(normalised exact match and token F1; a question with no gold answer is right when the prediction
is empty; the no-answer probability thresholded at 1.0), and best_exact / best_f1 are the scores at
the threshold that maximises them over the predictions' no-answer probabilities. The same file
serves both sides of a comparison, so what it proves is that both sides give it the same inputs.
"""
import collections
import re
import string

import datasets
import evaluate


def normalize(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def f1(gold, pred):
    g, p = normalize(gold).split(), normalize(pred).split()
    if not g or not p:
        return float(g == p)
    same = sum((collections.Counter(g) & collections.Counter(p)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


class SquadV2(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="SQuAD v2 stand-in", citation="", inputs_description="",
            features=datasets.Features({
                "predictions": {"id": datasets.Value("string"),
                                "prediction_text": datasets.Value("string"),
                                "no_answer_probability": datasets.Value("float32")},
                "references": {"id": datasets.Value("string"),
                               "answers": datasets.features.Sequence(
                                   {"text": datasets.Value("string"),
                                    "answer_start": datasets.Value("int32")})},
            }))

    def _compute(self, predictions, references):
        gold = {r["id"]: [t for t in r["answers"]["text"] if normalize(t)] or [""]
                for r in references}
        pred = {p["id"]: p["prediction_text"] for p in predictions}
        na = {p["id"]: p["no_answer_probability"] for p in predictions}
        exact = {q: max(float(normalize(g) == normalize(pred[q])) for g in gold[q]) for q in gold}
        f1s = {q: max(f1(g, pred[q]) for g in gold[q]) for q in gold}
        has = {q: gold[q] != [""] for q in gold}

        def thresholded(raw, t):
            return {q: (float(not has[q]) if na[q] > t else raw[q]) for q in raw}

        def mean(d, qs):
            return 100.0 * sum(d[q] for q in qs) / len(qs) if qs else 0.0

        out = {}
        qs = list(gold)
        e1, f_1 = thresholded(exact, 1.0), thresholded(f1s, 1.0)
        out["exact"], out["f1"], out["total"] = mean(e1, qs), mean(f_1, qs), len(qs)
        for name, sel in (("HasAns", [q for q in qs if has[q]]),
                          ("NoAns", [q for q in qs if not has[q]])):
            if sel:
                out[name + "_exact"], out[name + "_f1"] = mean(e1, sel), mean(f_1, sel)
                out[name + "_total"] = len(sel)
        for key, raw in (("exact", exact), ("f1", f1s)):
            best = max((mean(thresholded(raw, t), qs), -t) for t in [-1.0] + sorted(na.values()))
            out["best_" + key], out["best_" + key + "_thresh"] = best[0], -best[1]
        return out
