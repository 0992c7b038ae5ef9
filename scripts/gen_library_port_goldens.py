#!/usr/bin/env python3
"""Goldens for lm-eval's C++ ports of reference helper modules (issue 15 point 6): the reference's
own functions (PyPI lm-eval 0.4.13, imported from the venv that runs this script) called on chosen
inputs. Writes tests/tasks/functions/<family>_port_goldens.jsonl, one case a line, read by
tests/tasks/functions/<family>_port_test.cpp.

Inputs: crafted strings for each helper's edge cases (its exceptions, Unicode), and the real MATH
solutions and model-like responses of tests/tasks/functions/math_dataset_goldens.jsonl (30 of its
problems; correct answers among them), so correct and wrong answers are both covered.

Usage: VENV/bin/python scripts/gen_library_port_goldens.py FAMILY...   (FAMILY: hendrycks_math)
with VENV holding lm-eval[math]==0.4.13 (e.g. the reference venv of docs/fidelity.md).
"""
import importlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests", "tasks", "functions")


def math_rows():
    with open(os.path.join(TESTS, "math_dataset_goldens.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    solutions = {r["problem"]: r["solution"] for r in rows if "solution" in r}
    responses = [(r["problem"], r["response"]) for r in rows if "response" in r]
    return solutions, responses


def raises(fn, *args):
    try:
        return {"out": fn(*args)}
    except Exception as e:  # noqa: BLE001  the exception's type is the golden
        return {"raises": type(e).__name__}


# Strings that reach each branch of Hendrycks' strip_string / is_equiv, including the ones where
# it raises (is_equiv then compares the raw strings).
STRIP_CASES = [
    "", " ", ".5", " .5", "{.5}", "0.5", "1/2", "01/2", "+1/2", "-1/2", "1/-2", "1/2/3", "a/b",
    "1_0/2", "1__0/2", "\t1/2", "1/2\t", "\u0663/\u0664", "\u00b2/3", "1/\u2080", "1 / 2",
    "10/4", "0/5", "-0/5", "k=3", "k = 3", "abc=3", "x=y=3", "\u00e9\u00e9=3", "\u00e9\u00e9\u00e9=3",
    "\\frac12", "\\frac1{72}", "\\frac{72}1", "\\frac1", "\\frac", "x\\frac", "\\frac\\frac12",
    "\\dfrac{1}{2}", "\\tfrac12", "\\frac\u00e9b", "\\frac{\u00e9}\u00e9", "\\frac1\u00e9x",
    "\\sqrt3", "\\sqrt{3}", "2\\sqrt", "\\sqrt\\sqrt2", "\\sqrt\u00e9", "\\sqrt 3",
    "5\\text{ cm}", "5\\text{ cm}\\text{ m}", "5\\text{cm}", "90^\\circ", "90^{\\circ}",
    "50\\%", "\\$5", "\\left( 1, 2 \\right)", "a\\!b", "a\\\\b", "1\n2", "1,000", "\\infty",
    "x^2+1", "\\frac{1}{2}", "\\boxed{5}", "3.50", "3.5", "-.5", "1.5/2", "1/2.0",
    "9" * 4300 + "/1", "9" * 4301 + "/1",
]

IS_EQUIV_PAIRS = [
    ("0.5", "\\frac12"), ("1/2", "\\frac{1}{2}"), ("\\dfrac{1}{2}", "\\frac12"), (".5", "0.5"),
    ("k=3", "3"), ("x=y=3", "3"), ("90^\\circ", "90"), ("5\\text{ cm}", "5"), ("50\\%", "50"),
    ("\\$5", "5"), ("2\\sqrt", "2\\sqrt"), ("2\\sqrt", "2 \\sqrt"), ("\\frac", "\\frac"),
    ("a/b", "a/b"), ("a/b", "a / b"), ("1_0/2", "1_0/2"), ("1_0/2", "10/2"),
    ("\u0663/\u0664", "\u0663/\u0664"), ("\\sqrt3", "\\sqrt{3}"), ("(1, 2)", "(1,2)"),
    ("\\left( 1, 2 \\right)", "(1,2)"), ("x\\!+1", "x+1"), ("1\n2", "12"), ("", ""),
    ("5\\text{ cm}\\text{ m}", "5\\text{ cm}\\text{ m}"), ("5\\text{ cm}\\text{ m}", "5"),
]

# Responses whose '$' positions select other parts (process_results' slicing).
DOLLAR_RESPONSES = [
    "", "$", "no dollars 5", "$5$", "the answer is $5", "$1$ and $2$", "$$\\frac12$$",
    " The answer is 7.\n\n#### 7", "x $\\boxed{5}$ y", "\u00e9 $5$ \u00e9 $", "$ 0.5 $",
]


def hendrycks_math():
    hm = importlib.import_module("lm_eval.tasks.hendrycks_math.utils")
    import datasets

    out = []
    for s in STRIP_CASES:
        out.append({"fn": "strip_string", "in": s, **raises(hm.strip_string, s)})
    for a, b in IS_EQUIV_PAIRS:
        out.append({"fn": "is_equiv", "a": a, "b": b, "out": hm.is_equiv(a, b)})
    solutions, responses = math_rows()
    chosen = sorted(solutions)[:30]
    for s in ["x \\boxed 5$ y", "\\boxed 7", "\\fbox{3}", "a\\boxed{b", "\\boxed 7 \\boxed{8}",
              "\\fbox{1}\\boxed{2}", "\\boxed{3}\\fbox{4}", "\\boxed{}", "\\boxed{a}}", ""]:
        b = hm.last_boxed_only_string(s)
        out.append({"fn": "last_boxed_only_string", "in": s, "out": b,
                    **({"remove_boxed": raises(hm.remove_boxed, b)} if b is not None else {})})
    for k in chosen:
        doc = {"problem": f"Problem {k}.", "level": "Level 3", "type": "Algebra",
               "solution": solutions[k]}
        got = hm.process_docs(datasets.Dataset.from_list([doc]))
        out.append({"fn": "process_docs", "doc": doc, "out": got[0]})
    math500 = {"problem": "P", "solution": "So $\\boxed{\\frac{1}{2}}$.", "answer": "\\frac12",
               "subject": "Algebra", "level": 2, "unique_id": "test/algebra/1.json"}
    out.append({"fn": "process_docs", "doc": math500,
                "out": hm.process_docs(datasets.Dataset.from_list([math500]))[0]})
    for k, r in responses:
        if k not in chosen:
            continue
        doc = {"solution": solutions[k]}
        out.append({"fn": "process_results", "problem": k, "response": r,
                    "out": hm.process_results(doc, [r])})
    for r in DOLLAR_RESPONSES:
        for sol in ["$\\boxed{5}$", "$\\boxed{\\frac{1}{2}}$", "\\boxed 7$"]:
            out.append({"fn": "process_results", "solution": sol, "response": r,
                        "out": hm.process_results({"solution": sol}, [r])})
    return out


# Final answers for minerva's normalize_final_answer: unit words with and without word
# boundaries, LaTeX commands holding a unit's letters (\\left, \\ft...), indexed roots, thousands
# separators and bare tuples, \\text/\\boxed/\\overline wrappers, and "=" chains.
NORMALIZE_CASES = [
    "", "5", "x = 5", "a = b = 7", "5 cm", "5cm", "2\\pi cm", "2\\picm", "\\left( 1, 2 \\right)",
    "\\left(1,2\\right) feet", "10 square units", "5 ways", "3 inches", "1,000", "1,000,000",
    "-1,000", "0,1", "12,34", "1,0000", "\\text{(A)}", "\\textbf{B}", "\\overline{AB}",
    "\\boxed{\\frac{1}{2}}", "\\fracab", "\\frac12", "\\fracabc", "\\sqrt3", "\\sqrtab",
    "\\sqrt[3]8", "\\sqrt[3]{8}", "\\sqrt[n]x", "$5$", "the answer is $5$ dollars", "$a$ and $b$",
    "90^\\circ", "90^{\\circ}", "an apple", "a 5", "5.$", "\\$5", "5\\ \\text{m}",
    "\\mbox{5}", "1,\\text{and}2", "1\\text{and}2", "\\text{m}", "5\\text{ s}", "\\ldots",
    "\\dots", "1\\;000", "1,\\!000", "1{,}000", '"5"', "5 \\mathrm{th}", "5th", "\\infty",
    "ft", "left", "\\ft", "edges", "students", "childrentickets", "5 hours", "mph", "km/h",
    "\\text{\ns}", "\\text{}^2", "x\\text{}^3", "sue", "issue", "units\\cdot", "gm",
    "centimeters", "\\frac{\\sqrt{3}}{2}", "\\dfrac{3}{4}", "\\tfrac34", "[2,5)",
    "\u00e9t\u00e9 5 cm", "5 \u00e9cm", "[invalidanswer]",
]

GET_ANSWER_CASES = [
    "", "Final Answer: The final answer is $5$. I hope it is correct.",
    "Final Answer: The final answer is 5. I hope it is correct.",
    "Final Answer: The final answer is $5$.", "Final Answer: The final answer is $5$",
    "Final Answer: The final answer is",
    "Final Answer: The final answer is $1$. I hope it is correct. Final Answer: The final answer is $2$. I hope it is correct.",
    " The answer is 7.\n\n#### 7", "Final Answer: The final answer is\n$5$ . I hope it is correct.",
    "Final Answer: The final answer is $5$XI hope it is correct.",
]

# Answer pairs for is_equiv (sympy's parse_latex and simplify), normalised as the reference
# normalises both sides.
EQUIV_PAIRS = [
    ("5", "5"), ("5", "5.0"), ("0.5", "\\frac{1}{2}"), ("\\frac12", "\\dfrac{1}{2}"), ("1/2", "0.5"),
    ("(1,2)", "(1,2)"), ("(1,2)", "(2,1)"), ("[2,5)", "[2,5)"), ("x^2+1", "1+x^2"), ("2x", "x2"),
    ("\\sqrt{8}", "2\\sqrt{2}"), ("\\pi", "3.14159"), ("0.1+0.2", "0.3"), ("", ""), ("[invalidanswer]", "7"),
    ("\\infty", "\\infty"), ("1000", "1,000"), ("10\\%", "10"), ("\\frac{3}{4}", "0.75"), ("e", "e"),
    ("-\\frac{2}{3}", "\\frac{-2}{3}"), ("\\frac{1}{3}", "0.333333"), ("x", "y"), ("2", "3"),
    ("c", "C"), ("2\\frac{1}{2}", "\\frac{5}{2}"), ("2\\frac{1}{2}", "1"), ("2(3)", "6"), ("2(3)", "5"),
    ("10^{12}", "10^{12}+1"), ("1000000000000", "999999999999"), ("\\frac{1}{3}+\\frac{1}{3}+\\frac{1}{3}", "1"),
    ("e", "2.718281828459045"), ("i^2", "-1"), ("\\frac{\\sqrt{2}}{2}", "\\sqrt{2}/2"), ("0.5x", "\\frac{x}{2}"),
    ("x^2-1", "(x-1)(x+1)"), ("\\pir^2", "r^2\\pi"), ("\\infty", "-\\infty"), ("0.6", "\\frac{3}{5}"),
    ("0.1+0.2", "\\frac{3}{10}"), ("1.5", "\\frac{3}{2}"), ("2^{10}", "1024"), ("2^{-1}", "0.5"),
    ("\\sqrt{2}\\cdot\\sqrt{2}", "2"), ("\\sin^2x+\\cos^2x", "1"), ("\\frac{1}{0}", "\\infty"), ("x<3", "x<3"),
    ("x<3", "3>x"), ("\\{1,2\\}", "\\{2,1\\}"), ("3+4i", "4i+3"), ("\\$5", "5"), ("5\\%", "0.05"),
    ("AB", "BA"), ("\\text{A}", "A"), ("-0", "0"), ("1.0", "1"), ("0.30", "0.3"),
]


def minerva_math():
    mm = importlib.import_module("lm_eval.tasks.minerva_math.utils")
    import datasets

    out = [{"fn": "list_fewshot_samples", "out": mm.list_fewshot_samples()}]
    for s in NORMALIZE_CASES:
        out.append({"fn": "normalize_final_answer", "in": s, "out": mm.normalize_final_answer(s)})
    for s in GET_ANSWER_CASES:
        out.append({"fn": "get_unnormalized_answer", "in": s, "out": mm.get_unnormalized_answer(s)})
    for a, b in EQUIV_PAIRS:
        out.append({"fn": "is_equiv", "a": a, "b": b, "out": bool(mm.is_equiv(a, b))})
    solutions, responses = math_rows()
    # is_equiv on every distinct (normalised response answer, normalised gold) pair of the 100
    # problems: sympy's verdicts on the answers models write.
    gold = {k: mm.normalize_final_answer(mm.remove_boxed(mm.last_boxed_only_string(v)))
            for k, v in solutions.items()}
    seen = set()
    for k, r in responses:
        a = mm.normalize_final_answer(mm.get_unnormalized_answer(r))
        if a == "[invalidanswer]" or (a, gold[k]) in seen:
            continue
        seen.add((a, gold[k]))
        out.append({"fn": "is_equiv", "a": a, "b": gold[k], "out": bool(mm.is_equiv(a, gold[k]))})
    chosen = sorted(solutions)[:30]
    for k in chosen:
        doc = {"problem": f"Problem {k}.", "level": "Level 3", "type": "Algebra",
               "solution": solutions[k]}
        got = mm.process_docs(datasets.Dataset.from_list([doc]))[0]
        out.append({"fn": "process_docs", "doc": doc, "out": got,
                    "doc_to_text": mm.doc_to_text(got)})
    docs = {k: mm.process_docs(datasets.Dataset.from_list([{"problem": "", "solution": v}]))[0]
            for k, v in solutions.items() if k in chosen}
    for k, r in responses:
        if k not in chosen:
            continue
        out.append({"fn": "process_results", "problem": k, "response": r,
                    "answer": mm.normalize_final_answer(mm.get_unnormalized_answer(r)),
                    "out": mm.process_results(docs[k], [r])})
    return out


AGIEVAL_PARSE_CASES = [
    "", "5", "x = 5", "x = 5.", "x = 5...", "x =  7\\nmore", "x = 7\nmore", "a=b=  3", "$5$", "$x = 5$",
    "$x =   5$", "$a$ and $b$", "first $1$\nsecond $2$ line", "$1$\nno dollars 7", "one $ only",
    "$$", "$ $", "\\boxed{5}", "\\boxed{x = 5}", "\\boxed{x =  5}", "\\boxed 5", "\\boxed{5",
    "\\fbox{5} \\boxed{6}", "\\boxed{1} \\fbox{2}", "\\boxed{\\frac{1}{2}}", "the answer is 3.5",
    "12 apples and 7.25", "$12", "x5 and 7a and 8", "\u0663\u0664 apples", "3.", "1.2.3", "abc",
    " The answer is 42.\n\n#### 42", " The answer is 7.\n\n", "\\frac{1}{2}", "(A)",
]

AGIEVAL_EQUIV_PAIRS = [
    ("5", "5"), ("\\boxed{5}", "5"), ("$\\frac12$", "\\frac{1}{2}"), ("0.5", "\\frac{1}{2}"),
    ("abc", "xyz"), ("abc", None), ("abc", "abc"), ("\\boxed{5", "\\boxed{6"), ("a/b", "a/b"),
    ("$a/b$", "$a/b$"), ("x = 1/2", "\\frac{1}{2}"), ("$2\\sqrt$", "2\\sqrt"), ("$2\\sqrt$", "$2 \\sqrt$"),
    ("$5\\text{ cm}\\text{ m}$", "5"), ("k = 3", "3"), ("The answer is 42.\n\n#### 42", "42"),
    ("The answer is 7.", "7"), ("$10\\%$", "10"), ("$90^\\circ$", "90"), ("1_0/2", "1_0/2"),
]


def agieval():
    ag = importlib.import_module("lm_eval.tasks.agieval.utils")
    import random

    out = []
    for s in AGIEVAL_PARSE_CASES:
        out.append({"fn": "parse_math_answer", "in": s, "out": ag.parse_math_answer(s)})
    for a, b in AGIEVAL_EQUIV_PAIRS:
        out.append({"fn": "is_equiv", "a": a, "b": b, "out": bool(ag.is_equiv(a, b))})
    solutions, responses = math_rows()
    hm = importlib.import_module("lm_eval.tasks.hendrycks_math.utils")
    chosen = sorted(solutions)[:20]
    for k, r in responses:
        if k not in chosen:
            continue
        doc = {"query": "Q", "answer": hm.remove_boxed(hm.last_boxed_only_string(solutions[k]))}
        out.append({"fn": "process_results", "doc": doc, "response": r,
                    "out": ag.process_results(doc, [r])})
    rnd = random.Random(15)
    choice_sets = [["(A)x", "(B)yy", "(C)zzz", "(D)w"], ["(A)\u00e9\u00e9", "(B)a", "(C)bbbb"],
                   ["", "(B)b", "(C)c", "(D)d"], ["(A)a", "(B)b"]]
    for i in range(60):
        choices = choice_sets[i % len(choice_sets)]
        lls = [-rnd.random() * 10 for _ in choices]
        if i % 7 == 3:
            lls[1] = lls[0]  # a tie: the first maximum
        if i % 11 == 5:
            lls[-1] = float("nan")
        if i % 13 == 6:
            lls[0] = 0.0  # 0/0 under acc_norm for an empty choice
        gold = sorted(rnd.sample(range(len(choices)), 1 + (i % 3 == 0)))
        doc = {"query": "Q", "choices": choices, "gold": gold}
        res = ag.process_results_mcqa(doc, [(x, False) for x in lls])
        out.append({"fn": "process_results_mcqa", "doc": doc,
                    "lls": [x if x == x else "nan" for x in lls], "out": res})
    return out


DROP_TOKENS = [
    "", " ", "The", "a", "an", "the cat", "U.S.", "don't", "5", "5.0", "-3", "+3", "1,000", "1_000",
    "1__0", "_1", "1.", ".5", "1e5", "1E-2", "1e", "inf", "Infinity", "-inf", "nan", "NaN", "$5",
    "5%", "\u0663\u0664", "\u00b2", "\u00c9cole", "ANTHEM", "the-the", "a-b-c", "1-2", "--",
    "  two  spaces  ", "tab\there", "12.50", "007", "0.1", "1e400", "x\u00a0y", "(b)", "\u0130",
]


def drop():
    dr = importlib.import_module("lm_eval.tasks.drop.utils")
    import random
    import datasets
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    out = []
    for t in DROP_TOKENS:
        out.append({"fn": "normalize", "in": t, "out": dr._normalize(t),
                    "is_number": dr._is_number(t)})
    rnd = random.Random(6)
    pool = ["the cat", "cat", "a dog", "dogs", "5", "5.0", "five", "12", "1,000", "1000",
            "New York", "new york city", "May 1999", "1999", "the U.S.", "US", "3-4", "3", "4",
            "", "nan", "two hundred"]
    for i in range(300):
        pred = [rnd.choice(pool) for _ in range(1 if i % 3 else rnd.randint(1, 3))]
        gold = [rnd.choice(pool) for _ in range(rnd.randint(1, 3))]
        em, f1 = dr.get_metrics(pred, gold)
        out.append({"fn": "get_metrics", "pred": pred, "gold": gold, "em": float(em),
                    "f1": float(f1)})
    # scipy's assignment on random matrices (continuous: one optimum) and on small integers (ties:
    # the optimal total only).
    rng = np.random.default_rng(6)
    for i in range(200):
        r, c = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        m = rng.random((r, c)) if i % 2 == 0 else rng.integers(0, 4, (r, c)).astype(float)
        rows, cols = linear_sum_assignment(m)
        out.append({"fn": "linear_sum_assignment", "cost": m.tolist(), "rows": rows.tolist(),
                    "cols": cols.tolist(), "total": float(m[rows, cols].sum()),
                    "unique": i % 2 == 0})

    def answer(kind, r):
        date = {"day": "", "month": "", "year": ""}
        if kind == "number":
            return {"number": str(r.randint(1, 12)), "date": date, "spans": []}
        if kind == "date":
            return {"number": "", "date": {"day": str(r.randint(1, 3)), "month": "May",
                                           "year": r.choice(["1999", ""])}, "spans": []}
        if kind == "empty":
            return {"number": "", "date": date, "spans": []}
        return {"number": "", "date": date, "spans": r.sample(pool[:12], r.randint(1, 2))}

    rows = []
    for i in range(40):
        kinds = [rnd.choice(["number", "date", "spans", "empty"]) for _ in range(3)]
        main, extra = answer(kinds[0], rnd), [answer(k, rnd) for k in kinds[1:]]
        if i % 4 == 1:
            extra[0] = dict(main)  # a validated answer equal to the main one
        rows.append({"section_id": f"s{i}", "query_id": f"q{i}", "passage": "P " + str(i),
                     "question": "Q?", "answer": {**main, "worker_id": "", "hit_id": ""},
                     "validated_answers": {"number": [a["number"] for a in extra],
                                           "date": [a["date"] for a in extra],
                                           "spans": [a["spans"] for a in extra],
                                           "worker_id": ["", ""], "hit_id": ["", ""]}})
    processed = dr.process_docs(datasets.Dataset.from_list(rows))
    for row, got in zip(rows, processed):
        out.append({"fn": "process_docs", "doc": row, "out": got})
        for pred in [" " + rnd.choice(pool), " The answer is 5", got["answers"][0][0], ""]:
            out.append({"fn": "process_results", "answers": got["answers"], "pred": pred,
                        "out": dr.process_results(got, [pred])})
    return out


FAMILIES = {"hendrycks_math": hendrycks_math, "minerva_math": minerva_math, "agieval": agieval,
            "drop": drop}


def main():
    for fam in sys.argv[1:] or sorted(FAMILIES):
        cases = FAMILIES[fam]()
        dest = os.path.join(TESTS, f"{fam}_port_goldens.jsonl")
        with open(dest, "w", encoding="utf-8") as f:
            for c in cases:
                f.write(json.dumps(c, ensure_ascii=False) + "\n")
        print(f"{fam}: {len(cases)} cases -> {os.path.relpath(dest)}")


if __name__ == "__main__":
    main()
