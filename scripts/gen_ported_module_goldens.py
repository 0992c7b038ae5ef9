#!/usr/bin/env python3
"""Expected values for lm-eval's C++ ports of the reference's task helper modules (issue 15 point
6; src/tasks/functions/*_functions.cpp), computed by calling the reference's own module files
(lm_eval/tasks/<family>/...py of the installed lm-eval 0.4.13) on real rows from ../shared/hf_data,
stand-in rows of scripts/gen_standin_library_data.py and crafted edge cases. Each function is
called as the reference calls it: doc hooks with the document, process_docs with a
datasets.Dataset, process_results with the doc and its results, metric callables with
references=[gold], predictions=[result], aggregations with the metric's per-document values.

Writes tests/tasks/functions/ported_modules/<family>.jsonl, one call a line:
  {"family": port family, "fn": "module.function", "call": doc|docs|results|metric|aggregation,
   "args": ..., "out": value} or, where the reference raises, "error": exception class name.

Run with the Python of an environment holding lm-eval 0.4.13, scikit-learn and transformers 4.x
(super_glue/record/util.py imports transformers.data.metrics.squad_metrics, gone in 5.x):
  VENV/bin/python scripts/gen_ported_module_goldens.py [--shared ../shared] [FAMILY ...]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "tasks", "functions", "ported_modules")

sys.path.insert(0, HERE)
import gen_standin_library_data as standin  # noqa: E402

import datasets  # noqa: E402
import lm_eval  # noqa: E402

TASKS = os.path.join(os.path.dirname(lm_eval.__file__), "tasks")
datasets.disable_progress_bars()


def module(rel):
    path = os.path.join(TASKS, rel)
    spec = importlib.util.spec_from_file_location(rel.replace("/", ".")[:-3], path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def plain(v):
    """The JSON form the reference writes (tuples as lists, numpy scalars as Python ones)."""
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        return plain(v.item())
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return v


class Golden:
    def __init__(self, family):
        self.family, self.lines = family, []

    def call(self, fn_name, call, args, thunk):
        rec = {"family": self.family, "fn": fn_name, "call": call, "args": args}
        try:
            rec["out"] = plain(thunk())
        except Exception as e:  # the reference's exception stops its run: the port must throw
            rec["error"] = type(e).__name__
        self.lines.append(rec)

    def doc(self, mod, name, docs):
        fn = getattr(mod, name.split(".")[1])
        for d in docs:
            self.call(name, "doc", d, lambda: fn(dict(d)))

    def docs(self, mod, name, docs):
        fn = getattr(mod, name.split(".")[1])
        self.call(name, "docs", docs, lambda: list(fn(datasets.Dataset.from_list(docs))))

    def results(self, mod, name, doc, results):
        fn = getattr(mod, name.split(".")[1])
        self.call(name, "results", {"doc": doc, "results": results},
                  lambda: fn(dict(doc), [tuple(r) if isinstance(r, list) else r for r in results]))

    def metric(self, mod, name, gold, result):
        fn = getattr(mod, name.split(".")[1])
        self.call(name, "metric", {"gold": gold, "result": result},
                  lambda: fn(references=[gold], predictions=[result]))
        return self.lines[-1].get("out")

    def aggregation(self, mod, name, items):
        fn = getattr(mod, name.split(".")[1])
        self.call(name, "aggregation", items,
                  lambda: float(fn([tuple(i) if isinstance(i, list) else i for i in items])))

    def write(self):
        os.makedirs(OUT, exist_ok=True)
        with open(os.path.join(OUT, self.family + ".jsonl"), "w", encoding="utf-8") as f:
            for rec in self.lines:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        print(f"{self.family}: {len(self.lines)} calls")


def jsonl(shared, path, n=None):
    out = []
    with open(os.path.join(shared, "hf_data", path), encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line))
            if n and len(out) >= n:
                break
    return out


def standin_rows(path, cfg, split, n=25):
    r = random.Random(f"{path}/{cfg}/{split}")
    if path == "aps/super_glue":
        return [standin.super_glue(cfg)(r, i) for i in range(n)]
    if path == "nyu-mll/glue":
        return [standin.glue(cfg)(r, i) for i in range(n)]
    return [standin.DATASETS[path][2](r, i) for i in range(n)]


# ------------------------------------------------------------------------------------ super_glue

def super_glue(shared):
    g = Golden("super_glue")
    rng = random.Random(15)

    copa = module("super_glue/copa/utils.py")
    docs = standin_rows("aps/super_glue", "copa", "validation", 10)
    docs += [
        {"premise": "  Élan était là.  ", "choice1": "Über alles.", "choice2": "İstanbul fell.",
         "question": "cause", "label": 1, "idx": 90},
        {"premise": "Ça", "choice1": "ǅemal left.", "choice2": "x", "question": "effect",
         "label": -1, "idx": 91},
        {"premise": "", "choice1": "A", "choice2": "B", "question": "effect", "label": 0, "idx": 92},
        {"premise": "P.", "choice1": "A", "choice2": "B", "question": "result", "label": 0},
        {"premise": "P.", "choice1": "", "choice2": "B", "question": "cause", "label": 0},
    ]
    for fn in ("utils.doc_to_text", "utils.doc_to_target", "utils.doc_to_choice"):
        g.family = "super_glue_copa"
        g.doc(copa, fn, docs)

    g.family = "super_glue_cb"
    agg = module("super_glue/cb/aggregate.py")
    for n in (1, 2, 5, 20, 57):
        g.aggregation(agg, "aggregate.cb_multi_fi",
                      [[rng.randint(0, 2), rng.randint(0, 2)] for _ in range(n)])
    g.aggregation(agg, "aggregate.cb_multi_fi", [[0, 0], [0, 0]])
    g.aggregation(agg, "aggregate.cb_multi_fi", [[1, 2], [2, 1], [1, 1]])
    g.aggregation(agg, "aggregate.cb_multi_fi", [])

    g.family = "super_glue_cb_t5"
    t5 = module("super_glue/cb/t5_utils.py")
    labels = ["entailment", "contradiction", "neutral"]
    outs = ["entailment", "contradiction", "neutral", "Entailment", "", "neutral ", "yes"]
    items = [g.metric(t5, "t5_utils.mean_3class_f1", gold, res) for gold in labels for res in outs]
    g.metric(t5, "t5_utils.mean_3class_f1", "maybe", "neutral")
    for n in (1, 3, 10, len(items)):
        g.aggregation(t5, "t5_utils.agg_mean_3class_f1", rng.sample(items, n))
    g.aggregation(t5, "t5_utils.agg_mean_3class_f1", [[0, 0]])
    g.aggregation(t5, "t5_utils.agg_mean_3class_f1", [[2, 1], [1, 2]])
    g.aggregation(t5, "t5_utils.agg_mean_3class_f1", [])

    g.family = "super_glue_multirc_t5"
    mr = module("super_glue/multirc/t5_utils.py")
    f1_items, em_items = [], []
    for q in range(12):
        for a in range(rng.randint(1, 4)):
            gold = f"{q}_{rng.choice(['False', 'True'])}"
            res = rng.choice(["True", "False", "true", "", "xyz"])
            f1_items.append(g.metric(mr, "t5_utils.f1", gold, res))
            em_items.append(g.metric(mr, "t5_utils.em", gold, res))
    g.metric(mr, "t5_utils.f1", "1_2_True", "True")
    g.metric(mr, "t5_utils.em", "1_2_True", "True")
    g.metric(mr, "t5_utils.f1", "3_maybe", "True")
    for n in (1, 4, 12, len(f1_items)):
        g.aggregation(mr, "t5_utils.agg_f1", f1_items[:n])
        g.aggregation(mr, "t5_utils.agg_em", em_items[:n])
    g.aggregation(mr, "t5_utils.agg_f1", [[True, 0], [True, 0]])
    g.aggregation(mr, "t5_utils.agg_f1", [[False, 1], [1, 1], [0, 0]])
    g.aggregation(mr, "t5_utils.agg_f1", [[0, 0]])
    g.aggregation(mr, "t5_utils.agg_em", [["1", True, 0], ["1", 0, 0], ["2", 1, 1]])
    g.aggregation(mr, "t5_utils.agg_em", [])

    g.family = "super_glue_record"
    rec = module("super_glue/record/util.py")
    docs = standin_rows("aps/super_glue", "record", "validation", 16)
    docs.append({"passage": "  Lead.\n@highlight\nOne\n@highlight\n\n@highlight\nTwo  ",
                 "query": "No placeholder", "entities": ["b", "a", "b", "ä", "Z"],
                 "entity_spans": {"text": [], "start": [], "end": []}, "answers": ["b", "b"],
                 "idx": {"passage": 99, "query": 99}})
    g.docs(rec, "util.process_docs", docs)
    processed = [dict(d) for d in rec.process_docs(datasets.Dataset.from_list(docs))]
    for fn in ("util.doc_to_text", "util.doc_to_target", "util.doc_to_choice"):
        g.doc(rec, fn, processed)
    g.doc(rec, "util.doc_to_target", [dict(processed[0], answers=[])])
    for d in processed:
        for _ in range(2):
            lls = [[round(rng.uniform(-30, -1), 3), False] for _ in d["entities"]]
            g.results(rec, "util.process_results", d, lls)
    tricky = ["The  Times!", "times", "an apple", "A", "the", "", "Über-Straße", "ÜBER straße",
              "U.S.", "us", "Dr. Who's", "dr whos", "a_b", "ab", "Anna anna ANNA", "anna"]
    for p in tricky:
        d = {"passage": "x", "query": "@placeholder", "entities": [p, "zzz"],
             "answers": [t for t in tricky if t != p][:5] + [p.upper()]}
        g.results(rec, "util.process_results", d, [[-1.0, False], [-2.0, False]])
    g.results(rec, "util.process_results", {"passage": "x", "query": "q", "entities": ["a", "b"],
                                            "answers": ["b"]}, [[-1.0, False], [-1.0, True]])

    g.family = "super_glue_record_t5"
    rt5 = module("super_glue/record/t5_utils.py")
    docs = standin_rows("aps/super_glue", "record", "validation", 12)
    docs.append(dict(docs[0], answers=[]))
    docs.append(dict(docs[1], passage='Said "so."\n@highlight\nA!\n@highlight\nB\n@highlight\nC\'',
                     answers=["x", "x", "y"]))
    g.doc(rt5, "t5_utils.doc_to_text", docs)
    g.docs(rt5, "t5_utils.process_docs", docs)
    items = []
    for d in docs:
        for a in d["answers"]:
            gold = f"{d['idx']['passage']}+{d['idx']['query']}_{a}"
            res = rng.choice([a, a.lower() + ".", "the " + a, rng.choice(tricky), "", "zzz yy"])
            items.append(g.metric(rt5, "t5_utils.em", gold, res))
            g.metric(rt5, "t5_utils.f1", gold, res)
    for n in (1, 5, len(items)):
        g.aggregation(rt5, "t5_utils.squad_em_agg", items[:n])
        g.aggregation(rt5, "t5_utils.squad_f1_agg", items[:n])
    pairs = [[p, f"0+0_{t}"] for p in tricky[:6] for t in tricky[:4]]
    g.aggregation(rt5, "t5_utils.squad_em_agg", pairs)
    g.aggregation(rt5, "t5_utils.squad_f1_agg", pairs)
    g.aggregation(rt5, "t5_utils.squad_f1_agg", [["a b c d", "1_b c d e f"], ["x", "2_x"],
                                                 ["a a b", "3_a b b"], ["", "4_x"]])
    g.aggregation(rt5, "t5_utils.squad_em_agg", [["a", "1+2_a_b"]])
    g.aggregation(rt5, "t5_utils.squad_f1_agg", [["a", "nogroup"]])
    g.aggregation(rt5, "t5_utils.squad_em_agg", [])

    g.family = "super_glue_wsc_t5"
    wsc = module("super_glue/wsc/t5_utils.py")
    docs = jsonl(shared, "aps/super_glue/wsc.fixed/validation.jsonl")
    train = jsonl(shared, "aps/super_glue/wsc.fixed/train.jsonl")
    special = [d for d in train if d["text"].startswith(("The boy continued to whip the pony",
                                                         "When they had eventually calmed"))]
    docs += train[:40] + special + jsonl(shared, "aps/super_glue/wsc.fixed/test.jsonl", 20)
    bad = dict(docs[0], span2_index=0)
    g.doc(wsc, "t5_utils.doc_to_text", docs + [bad, dict(docs[0], span2_index=999),
                                               dict(docs[0], span2_text="zzz")])
    responses = lambda d: [d["span1_text"], d["span1_text"].upper() + " ", "the " + d["span2_text"],
                           "his " + d["span1_text"].split(" ")[-1], "Bob's hat", "", "  "]
    for d in docs[:16] + special:
        for resp in responses(d):
            g.results(wsc, "t5_utils.process_results", d, [resp])
    g.results(wsc, "t5_utils.process_results", dict(docs[0], span1_text="Bob's hat"), ["bob's"])
    g.results(wsc, "t5_utils.process_results", dict(docs[0], span1_text="the fuzzy bunny"),
              ["Bunny"])
    g.family = "super_glue"
    return g


# ------------------------------------------------------------------------------------------ glue

def glue(shared):
    g = Golden("glue_mnli")
    mnli = module("glue/mnli/utils.py")
    docs = standin_rows("nyu-mll/glue", "mnli", "validation_matched", 10)
    docs += [{"premise": "P", "hypothesis": h, "label": 0, "idx": i}
             for i, h in enumerate(["  ends with a dot.  ", "no dot", "", "   ", "dots...",
                                    "Ünïcode\u3000", "trailing\n", "x ."])]
    docs.append({"premise": "P", "label": 0, "idx": 9})
    g.doc(mnli, "utils.doc_to_text", docs)
    return g


# ------------------------------------------------------------------------------------------ race

def race(shared):
    g = Golden("race")
    mod = module("race/preprocess_race.py")
    docs = standin_rows("EleutherAI/race", "high", "test", 16)

    def problems(*ps):
        return repr([{"answer": a, "options": o, "question": q} for a, o, q in ps])
    opts = ["it's \"quoted\"", "back\\slash", "new\nline", "tab\tand é ü 日本"]
    crafted = [
        problems(("B", opts, "Fill  _  ."), ("A", opts, "Short?")),
        problems(("C", opts, "  _  ."), ("D", opts, "x  _  ."), ("A", opts, "Last  _  .")),
        problems(("A", opts, "single _ ."), ("B", opts, "Last")),
        problems(("A", opts, "Only one")),
        '[{"answer": "A", "options": ["a", "b", "c", "d", "e"], "question": "q"}]',
        "[{'answer': 'B', 'options': ('t1', 't2', 't3', 't4'), 'question': 'tuple'}]",
        "[]",
        problems(("E", opts, "bad answer")),
        problems(("A", opts[:3], "three options")),
        "not a literal",
    ]
    docs += [{"example_id": f"x{i}", "article": "Art  icle\n", "problems": p}
             for i, p in enumerate(crafted)]
    for fn in ("preprocess_race.doc_to_text", "preprocess_race.doc_to_target",
               "preprocess_race.doc_to_choice"):
        g.doc(mod, fn, docs)
    return g


# ----------------------------------------------------------------------------------------- xcopa

XCOPA_LANGS = ["et", "ht", "it", "id", "qu", "sw", "zh", "ta", "th", "tr", "vi"]


def xcopa(shared):
    g = Golden("xcopa")
    mod = module("xcopa/utils.py")
    docs = standin_rows("cambridgeltl/xcopa", "et", "validation", 6)
    docs += [
        {"premise": " 我的身体投下了阴影。 ", "choice1": "太阳正在升起。", "choice2": "Über",
         "question": "cause", "label": 0, "idx": 90, "changed": False},
        {"premise": "x", "choice1": "İstanbul", "choice2": "ǅ", "question": "effect",
         "label": 1, "idx": 91, "changed": False},
        {"premise": "", "choice1": "A", "choice2": "B", "question": "cause", "label": 1},
        {"premise": "P.", "choice1": "A", "choice2": "B", "question": "neither", "label": 1},
        {"premise": "P.", "choice1": "", "choice2": "B", "question": "cause", "label": 1},
    ]
    for lang in XCOPA_LANGS:
        g.doc(mod, "utils.doc_to_text_" + lang, docs)
    g.doc(mod, "utils.doc_to_choice", docs)
    return g


# ------------------------------------------------------------------------------------- xwinograd

def xwinograd(shared):
    g = Golden("xwinograd")
    mod = module("xwinograd/utils.py")
    docs = standin_rows("Muennighoff/xwinograd", "en", "test", 8)
    docs += [
        {"sentence": "日本の_は  美しい。 ", "option1": "山", "option2": "川", "answer": "2"},
        {"sentence": "a _ b _ c", "option1": "x", "option2": "y", "answer": "1"},
        {"sentence": "_", "option1": "x", "option2": "y", "answer": "1"},
        {"sentence": "no blank", "option1": "x", "option2": "y", "answer": "1"},
        {"sentence": "a _ b", "option1": "x", "option2": "y", "answer": "3"},
    ]
    for fn in ("utils.doc_to_text", "utils.doc_to_target", "utils.doc_to_choice"):
        g.doc(mod, fn, docs)
    return g


# --------------------------------------------------- squad_metrics helpers: xquad, norquad, coqa

# Generations against answers: exact, case and punctuation, articles, partial overlaps, empty,
# non-ASCII, several lines (coqa keeps the first of the stripped text).
SQUAD_PREDS = [" The answer is 42.", "the answer", "The Answer!", "an answer is", "", "  ",
               "Über-Straße", "über straße", "日本 語", "a the an", "x\ny", "\n\nsecond line",
               "answer answer answer is is"]


def xquad(shared):
    g = Golden("xquad")
    mod = module("xquad/utils.py")
    docs = standin_rows("google/xquad", "xquad.en", "validation", 8)
    docs += [dict(docs[0], answers={"text": [t], "answer_start": [0]})
             for t in ("The answer", "Über straße", "the", "", "42", "日本 語")]
    for d in docs:
        for p in SQUAD_PREDS[:8] if d is not docs[-1] else SQUAD_PREDS:
            g.results(mod, "utils.process_results_qa", d, [p])
    g.results(mod, "utils.process_results_qa", dict(docs[0], answers={"text": [],
                                                                      "answer_start": []}), ["x"])
    return g


def norquad(shared):
    g = Golden("norquad")
    mod = module("noreval/norquad/utils.py")
    docs = standin_rows("ltg/norquad", "default", "validation", 12)
    crafted = [dict(docs[0], context=c, question=q) for c, q in [
        ("Bare tittel", "Ett\u3000to  tre?"),
        ("\u2003Tittel\u2003\n\n Avsnitt én. \n\nTo.\u2028\n", "\tHva\n er det? "),
        ("", ""), ("\n\nTittel\n", " "), ("A\r\nB\rC", "q\x1cq")]]
    g.docs(mod, "utils.process_docs", docs + crafted)
    processed = [dict(d) for d in mod.process_docs(datasets.Dataset.from_list(docs + crafted))]
    for p in ("p0", "p1", "p2", "p3", "p4"):
        g.doc(mod, "utils." + p, processed)
    for d in processed[:8]:
        for p in SQUAD_PREDS[:6]:
            g.results(mod, "utils.process_results", d, [p])
    return g


def coqa(shared):
    g = Golden("coqa")
    mod = module("coqa/utils.py")
    docs = standin_rows("EleutherAI/coqa", "default", "validation", 12)
    base = docs[0]
    turns = lambda texts: {"span_start": [0] * len(texts), "span_end": [1] * len(texts),
                           "span_text": list(texts), "input_text": list(texts),
                           "turn_id": list(range(1, len(texts) + 1))}
    crafted = [
        dict(base, questions={"input_text": ["Q1?", "Q2?"], "turn_id": [1, 2]},
             answers=turns(["Yes", "The answer"]),
             additional_answers={"0": turns(["y", "the ANSWER"]), "1": turns(["n", "answer is"]),
                                 "2": turns(["x", "The Answer"])}),
        dict(base, questions={"input_text": ["Q1?", "Q2?", "Q3?"], "turn_id": [1, 2, 3]},
             answers=turns(["İ", "ß", "Straße"]),
             additional_answers={"0": turns(["i̇", "SS", "STRASSE"]), "1": turns(["a", "b", "c"]),
                                 "2": turns(["a", "b", "straße"])}),
        dict(base, questions={"input_text": ["Only?"], "turn_id": [1]}, answers=turns(["Solo"]),
             additional_answers={}),
        {k: v for k, v in base.items() if k != "additional_answers"},
        dict(base, questions={"input_text": ["Q1?", "Q2?", "Q3?"], "turn_id": [1, 2, 3]},
             answers=turns(["a1"]), additional_answers=None),
        dict(base, questions={"input_text": ["Q1?"], "turn_id": [1]}, answers=turns(["a", "b"]),
             additional_answers=None),
        dict(base, questions={"input_text": [], "turn_id": []}, answers=turns(["last"]),
             additional_answers=None),
        dict(base, questions={"input_text": [], "turn_id": []}, answers=turns([]),
             additional_answers=None),
    ]
    for fn in ("utils.doc_to_text", "utils.doc_to_target"):
        g.doc(mod, fn, docs + crafted)
    for d in docs[:6] + crafted:
        for p in SQUAD_PREDS:
            g.results(mod, "utils.process_results", d, [p])
    return g


# ------------------------------------------- catalan_bench, spanish_bench, galician_bench utils

# Sentences for general_detokenize and the punctuation rules: tokenised spacing, final marks,
# leading whitespace, non-ASCII first letters, whitespace only.
IBERIAN_SENTENCES = ["Hola , com va ?", "  L ' home n't ve .  ", "Ésser o no ésser!", "Àlex ( a ) b;",
                     "x,", "İstanbul és gran", "¿Qué tal ?", "Ǆemal  -  ok", "a", ".", "  ",
                     "Ser o no ser\n.", "ÉS TOT."]


def nli_docs(first, second, label_key, labels):
    return [{first: a, second: b, label_key: labels[i % len(labels)]}
            for i, (a, b) in enumerate(zip(IBERIAN_SENTENCES, IBERIAN_SENTENCES[3:] +
                                           IBERIAN_SENTENCES[:3]))]


def paraphrase_docs(first, second):
    docs = [{first: a, second: b, "label": i % 2} for i, (a, b) in
            enumerate(zip(IBERIAN_SENTENCES, IBERIAN_SENTENCES[5:] + IBERIAN_SENTENCES[:5]))]
    docs += [{first: "", second: "Kept?", "label": 0}, {first: "Uno", second: None, "label": 1},
             {first: None, second: "", "label": 1}]
    return docs


def catalan_bench(shared):
    g = Golden("catalan_bench")
    mod = module("catalan_bench/utils.py")
    nli = standin_rows("projecte-aina/xnli-ca", "default", "validation", 10)
    g.docs(mod, "utils.process_doc_nli", nli)
    g.docs(mod, "utils.process_doc_nli", nli_docs("premise", "hypothesis", "label", [0, 1, 2]))
    good = [d for d in nli_docs("premise", "hypothesis", "label", [0]) if d["hypothesis"].strip()]
    g.docs(mod, "utils.process_doc_nli", good)
    for d in nli_docs("premise", "hypothesis", "label", [0]):  # one row each: which ones raise
        g.docs(mod, "utils.process_doc_nli", [d])
    para = standin_rows("projecte-aina/PAWS-ca", "default", "test", 12)
    g.docs(mod, "utils.process_docs_paraphrases", para)
    for d in paraphrase_docs("sentence1", "sentence2"):
        g.docs(mod, "utils.process_docs_paraphrases", [d])
    copa = standin_rows("projecte-aina/COPA-ca", "default", "validation", 8)
    g.docs(mod, "utils.process_docs_copa_ca", copa)
    for c in ("Ésser", "İx", "ǅ", "", "a"):
        g.docs(mod, "utils.process_docs_copa_ca", [dict(copa[0], choice1=c)])
    cab = standin_rows("projecte-aina/caBreu", "default", "test", 6)
    g.docs(mod, "utils.process_doc_cabreu", cab)
    g.docs(mod, "utils.process_doc_cabreu", [dict(cab[0], content="  a   b\t  c \u00a0 d  ")])
    qa = standin_rows("projecte-aina/catalanqa", "default", "test", 6)
    qa += [dict(qa[0], answers=[{"text": t, "answer_start": 0}]) for t in ("L'home", "el", "")]
    for d in qa:
        for p in SQUAD_PREDS[:7]:
            g.results(mod, "utils.process_results_qa", d, [p])
    g.results(mod, "utils.process_results_qa", dict(qa[0], answers=[]), ["x"])
    cc = standin_rows("projecte-aina/CoQCat", "default", "validation", 8)
    cc += [dict(cc[0], additional_answers={}), dict(cc[0], additional_answers=None),
           {k: v for k, v in cc[0].items() if k != "additional_answers"},
           dict(cc[0], questions=[], answers={"input_text": ["només"]}, additional_answers=None),
           dict(cc[0], questions=["a", "b"], answers={"input_text": ["Sí", "İ"]},
                additional_answers={"0": {"input_text": ["x", "i̇"]},
                                    "1": {"input_text": ["y", "SÍ"]}})]
    for d in cc:
        for p in SQUAD_PREDS:
            g.results(mod, "utils.process_results_coqcat", d, [p])
    return g


def spanish_bench(shared):
    g = Golden("spanish_bench")
    mod = module("spanish_bench/utils.py")
    g.docs(mod, "utils.process_doc_nli", standin_rows("xnli", "es", "validation", 10))
    for d in nli_docs("premise", "hypothesis", "label", [0]):
        g.docs(mod, "utils.process_doc_nli", [d])
    g.docs(mod, "utils.process_docs_paraphrases", standin_rows("paws-x", "es", "test", 12))
    for d in paraphrase_docs("sentence1", "sentence2"):
        g.docs(mod, "utils.process_docs_paraphrases", [d])
    copa = standin_rows("BSC-LT/COPA-es", "default", "validation", 8)
    g.docs(mod, "utils.process_docs_copa_es", copa)
    for c in ("Ésser", "İx", "", "a"):
        g.docs(mod, "utils.process_docs_copa_es", [dict(copa[0], choice2=c)])
    xl = standin_rows("csebuetnlp/xlsum", "spanish", "test", 6)
    g.docs(mod, "utils.process_xlsum", xl + [dict(xl[0], text="  a \t  b\n  c ", summary=" ")])
    return g


def galician_bench(shared):
    g = Golden("galician_bench")
    mod = module("galician_bench/utils.py")
    xl = standin_rows("proxectonos/summarization_gl", "default", "test", 6)
    g.docs(mod, "utils.process_summarization", xl + [dict(xl[0], text="a   b", summary="  ")])
    g.docs(mod, "utils.process_docs_paraphrases",
           standin_rows("proxectonos/parafrases_gl", "default", "test", 12))
    for d in paraphrase_docs("Frase", "Paráfrase"):
        g.docs(mod, "utils.process_docs_paraphrases", [dict(d, Avaliación=d.pop("label"))])
    g.docs(mod, "utils.process_docs_paws", standin_rows("proxectonos/PAWS-gl", "default", "test", 12))
    for d in paraphrase_docs("sentence1", "sentence2"):
        g.docs(mod, "utils.process_docs_paws", [d])
    g.docs(mod, "utils.process_doc_nli", standin_rows("proxectonos/xnli_gl", "default", "test", 10))
    for d in nli_docs("sentence1", "sentence2", "gold_label",
                      ["entailment", "neutral", "contradiction", "other"]):
        g.docs(mod, "utils.process_doc_nli", [d])
    rng = random.Random(7)
    gen = [standin.truthfulqa_gl_gen(rng, i) for i in range(8)]
    gen.append(dict(gen[0], correct_answers=["  ", "Sí", "Non teño ningún comentario"],
                    incorrect_answers=[]))
    g.docs(mod, "utils.process_docs_gen", gen)
    mc = [standin.truthfulqa_gl_mc(rng, i) for i in range(10)]
    for d in mc:
        n = len(d["mc2_targets"]["choices"])
        for _ in range(2):
            g.results(mod, "utils.process_results_mc2", d,
                      [[round(rng.uniform(-40, -0.5), 4), False] for _ in range(n)])
    lab = lambda labels: dict(mc[0], mc2_targets={"choices": ["c"] * len(labels), "labels": labels})
    g.results(mod, "utils.process_results_mc2", lab([0, 1, 0]), [[-1.0, False]] * 3)
    g.results(mod, "utils.process_results_mc2", lab([1, 1]), [[-1.0, False]] * 2)
    g.results(mod, "utils.process_results_mc2", lab([1, 0, 0]), [[-1.0, False]])
    g.results(mod, "utils.process_results_mc2", lab([1, 1, 0]), [[-800.0, False]] * 3)
    g.results(mod, "utils.process_results_mc2", lab([1, 0]), [[0.0, True], [-1e-9, False]])
    # process_results_gen (truthfulqa_gl_gen) on processed rows: completions that copy a true or a
    # false answer, mix them, are empty, carry accents (rouge_score's tokenizer keeps [a-z0-9]
    # only) or the " . " its rouge turns into a newline.
    rng = random.Random(11)
    for i, raw in enumerate(standin.truthfulqa_gl_gen(rng, 100 + j) for j in range(6)):
        d = mod.preprocess_function_gen(raw)
        true, false = d["correct_answers"], d["incorrect_answers"]
        for completion in (true[0], false[0] if false else "", true[-1] + " " + (false or [""])[0],
                           "", " Non sei . Quizais " + true[0].lower(), "Á é í ó ú ñ ç 1992"):
            g.results(mod, "utils.process_results_gen", d, [completion])
    return g


FAMILIES = {"super_glue": super_glue, "glue_mnli": glue, "race": race, "xcopa": xcopa,
            "xwinograd": xwinograd, "xquad": xquad, "norquad": norquad, "coqa": coqa,
            "catalan_bench": catalan_bench, "spanish_bench": spanish_bench,
            "galician_bench": galician_bench}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    ap.add_argument("families", nargs="*", default=sorted(FAMILIES))
    args = ap.parse_args()
    for fam in args.families:
        FAMILIES[fam](args.shared).write()


if __name__ == "__main__":
    main()
