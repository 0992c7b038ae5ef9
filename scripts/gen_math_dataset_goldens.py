#!/usr/bin/env python3
"""Goldens for leaderboard_math's `exact_match` on real MATH solutions
(tests/tasks/functions/math_dataset_goldens.jsonl, read by tests/tasks/functions/math_expr_test.cpp).

MATH-lighteval is not available here; Hendrycks' MATH test problems are (MIT licence), e.g. the
1200-problem JSONL split {"question", "answer": full solution} at
github.com/yyin-dev/cs336-a5, data/math/test.jsonl (commit dbfa512). From a seeded sample of its
solutions, each gold solution is paired with responses written the ways a model writes its answer:

  self      the solution itself (every gold answer must match itself)
  minerva   "Final Answer: The final answer is $A$. I hope it is correct." with A the solution's
            last \\boxed{} content (the leaderboard's few-shot format)
  boxed     "... so the answer is $\\boxed{A}$."
  plain     "The answer is A" (no math delimiters: math-verify's plain-expression extraction)
  normalized  the Minerva line with A passed through the reference's normalize_final_answer
            (lm_eval/tasks/leaderboard/math/utils.py), a simplified writing of the same answer
  other     the Minerva line with another problem's answer (mostly a wrong answer)

and, where latex2sympy2_extended reads the answer A as a sympy object E, near misses and
rewritings of it in the Minerva line: sympy's own LaTeX for E (`sympy`), E rounded to 6 and to 2
decimals (`decimal6`, `decimal2`), -E, E + 1, 1/E, 2E (`negated`, `plus_one`, `reciprocal`,
`doubled`), and a tuple, set or interval with its elements reversed (`reversed`).

Short writings of A that exercise the extraction and the reader: "Answer: A", $\\text{A}$,
A with a unit, with ^\\circ, with spaces around operators, in \\left( \\right) with \\dfrac, two
boxed answers (A last or first), "x \\approx A", "x = A", "the final answer is A" without
delimiters. Whole-solution variants, stored as the edit the test re-applies: the solution cut
at 60% of its length (`truncate_60`, "keep_bytes" its UTF-8 length), without its dollar signs
(`strip_dollars`), and followed by a Minerva line with A or with another answer
(`append_minerva_same`/`_other`, "appended" holding the line).

Two long, chain-of-thought-like responses as well: another problem's whole solution
(`other_solution`, stored as "response_solution_of": its problem) and this problem's solution
with its last \\boxed{} content replaced by the first near miss above (`edited_solution`, stored
as "boxed_replacement"); the test rebuilds them.

Each case is scored as the reference scores a document (and, where the response is stored as
text, `exact_match_original` too: process_result_v1 on the document the reference's
process_docs makes of the solution):
verify(parse(solution, [LatexExtractionConfig()]), parse(response)) with math-verify 0.9.0.

Usage, in the reference's pinned environment (lm-eval[math]==0.4.13: math-verify 0.9.0,
antlr4-python3-runtime 4.11; e.g. the venv scripts/gen_standin_goldens.sh makes):
    .venv-standin/bin/python \
        scripts/gen_math_dataset_goldens.py MATH_test.jsonl tests/tasks/functions/math_dataset_goldens.jsonl 100
"""

import json
import random
import re
import sys

from math_verify import LatexExtractionConfig, parse, verify


def last_boxed(s):
    idx = s.rfind("\\boxed")
    if idx < 0:
        return None
    i, depth, start = idx, 0, None
    while i < len(s):
        if s[i] == "{":
            depth += 1
            if start is None:
                start = i
        elif s[i] == "}":
            depth -= 1
            if depth == 0 and start is not None:
                return s[start + 1:i]
        i += 1
    return None


def normalize_final_answer(final_answer):
    # The reference's leaderboard/math normalize_final_answer, imported from the installed harness.
    from lm_eval.tasks.leaderboard.math.utils import normalize_final_answer as f
    return f(final_answer)


def mutations(ans):
    import sympy as sp
    from latex2sympy2_extended.latex2sympy2 import latex2sympy
    from latex2sympy2_extended.math_normalization import NormalizationConfig
    try:
        e = latex2sympy(ans, normalization_config=NormalizationConfig(basic_latex=True, units=True,
                                                                      malformed_operators=True, nits=True))
    except Exception:
        return {}
    out = {}

    def put(name, f):
        try:
            v = f()
            if v:
                out[name] = v
        except Exception:
            pass

    if isinstance(e, (sp.Tuple, sp.FiniteSet)) and len(e.args) > 1:
        put("reversed", lambda: ", ".join(sp.latex(a) for a in reversed(getattr(e, "_unsorted_args", e.args))))
    elif isinstance(e, sp.Interval):
        put("reversed", lambda: "(%s, %s)" % (sp.latex(e.end), sp.latex(e.start)))
    elif isinstance(e, sp.Expr):
        put("sympy", lambda: sp.latex(e))
        if not e.free_symbols and e.is_real:
            put("decimal6", lambda: "%.6f" % float(sp.N(e)))
            put("decimal2", lambda: "%.2f" % float(sp.N(e)))
        put("negated", lambda: sp.latex(-e))
        put("plus_one", lambda: sp.latex(e + 1))
        put("reciprocal", lambda: sp.latex(1 / e) if e != 0 else None)
        put("doubled", lambda: sp.latex(2 * e))
    return out


def exact_match_original(solution, response):
    # The reference's process_result_v1 on the document its process_docs makes of the solution.
    from lm_eval.tasks.leaderboard.math import utils
    try:
        answer = utils.remove_boxed(utils.last_boxed_only_string(solution))
        return utils.process_result_v1({"solution": solution, "answer": answer}, response)
    except Exception:  # the reference's process_results scores any exception 0
        return 0


def exact_match(solution, response):
    return int(bool(verify(parse(solution, extraction_config=[LatexExtractionConfig()]), parse(response))))


def main():
    src, out_path = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    rows = [json.loads(line) for line in open(src, encoding="utf-8")]
    rng = random.Random(20240601)
    rows = [r for r in rows if last_boxed(r["answer"])]
    sample = rng.sample(rows, min(n, len(rows)))
    answers = [last_boxed(r["answer"]) for r in sample]
    out = []
    for i, r in enumerate(sample):
        sol, ans = r["answer"], answers[i]
        other = answers[(i + 1 + rng.randrange(len(answers) - 1)) % len(answers)]
        minerva = "Final Answer: The final answer is ${}$. I hope it is correct."
        forms = {
            "self": sol,
            "minerva": minerva.format(ans),
            "boxed": "Putting it together, the answer is $\\boxed{%s}$." % ans,
            "plain": "The answer is " + ans,
            "normalized": minerva.format(normalize_final_answer(ans)),
            "other": minerva.format(other),
        }
        for name, text in mutations(ans).items():
            forms[name] = minerva.format(text)
        forms.update({
            "answer_colon": "Answer: " + ans,
            "text": "The answer is $\\text{%s}$." % ans,
            "units": "It is $%s \\text{ cm}$." % ans,
            "degrees": "The angle is $%s^\\circ$." % ans,
            "spaced": "$" + re.sub(r"([,+=-])", r" \1 ", ans) + "$",
            "dfrac": "$\\left(" + ans.replace("\\frac", "\\dfrac") + "\\right)$",
            "two_boxed": "First $\\boxed{%s}$ and then $\\boxed{%s}$." % (other, ans),
            "two_boxed_rev": "First $\\boxed{%s}$ and then $\\boxed{%s}$." % (ans, other),
            "approx": "$x \\approx %s$" % ans,
            "eq": "$x = %s$" % ans,
            "is": "So the final answer is %s." % ans,
        })
        cases = [{"problem": i, "form": "self", "solution": sol, "exact_match": exact_match(sol, sol)}]
        for form, resp in forms.items():
            if form != "self":
                cases.append({"problem": i, "form": form, "response": resp, "exact_match": exact_match(sol, resp)})
        # Whole-solution variants, stored as the edit the test re-applies.
        for edit, resp in (("truncate_60", sol[: int(len(sol) * 0.6)]), ("strip_dollars", sol.replace("$", "")),
                           ("append_minerva_same", sol + "\n" + minerva.format(ans)),
                           ("append_minerva_other", sol + "\n" + minerva.format(other))):
            case = {"problem": i, "form": edit, "edit": edit, "exact_match": exact_match(sol, resp)}
            if edit == "truncate_60":
                case["keep_bytes"] = len(resp.encode("utf-8"))
            if edit.startswith("append"):
                case["appended"] = "\n" + minerva.format(ans if edit.endswith("same") else other)
            cases.append(case)
        j = (i + 1 + rng.randrange(len(sample) - 1)) % len(sample)
        cases.append({"problem": i, "form": "other_solution", "response_solution_of": j,
                      "exact_match": exact_match(sol, sample[j]["answer"])})
        near = [v for k, v in mutations(ans).items() if k in ("negated", "plus_one", "reversed", "doubled")]
        k = sol.rfind("\\boxed{")
        if near and k == sol.rfind("\\boxed"):
            depth, e = 0, k + len("\\boxed")
            while True:  # the brace closing \boxed{
                depth += {"{": 1, "}": -1}.get(sol[e], 0)
                if depth == 0:
                    break
                e += 1
            edited = sol[:k] + "\\boxed{" + near[0] + "}" + sol[e + 1:]
            cases.append({"problem": i, "form": "edited_solution", "boxed_replacement": near[0],
                          "exact_match": exact_match(sol, edited)})
        for case in cases:  # exact_match_original where the response is stored as text
            if "response" in case:
                case["exact_match_original"] = exact_match_original(sol, case["response"])
        out += cases
    with open(out_path, "w", encoding="utf-8") as f:
        for line in out:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"{len(out)} cases from {len(sample)} solutions -> {out_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
