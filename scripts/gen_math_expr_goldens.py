#!/usr/bin/env python3
"""Goldens for lm-eval's LaTeX expression reading and math-verify comparison
(tests/tasks/functions/math_expr_goldens.jsonl, read by tests/tasks/functions/math_expr_test.cpp).

Two kinds of lines, all expected values computed here by the reference's own libraries
(latex2sympy2_extended, sympy, math-verify 0.9.0), never by lm-eval:

  {"kind": "parse", "latex": ..., "parses": bool, "shape": ..., "symbols": {...}, "value": [re, im]}
      latex2sympy2_extended as math-verify calls it (no normalisation, real symbols unless the
      text looks complex). "shape" is expr / relation / set / tuple / interval / matrix; for
      an expression, "value" is its numeric value (sympy N) with the free symbols bound to
      "symbols" (null when not a finite number there).

  {"kind": "verify", "solution": ..., "response": ..., "exact_match": 0 or 1}
      verify(parse(solution, [LatexExtractionConfig()]), parse(response)), the reference's
      leaderboard_math exact_match, on answer pairs built from sympy: each base answer printed
      in equivalent forms (expand, factor, together, apart, trigsimp, decimals, ...) and in
      non-equivalent ones (perturbed, re-ordered tuples, other endpoints), inside the usual
      response phrasings, and 1000 random expressions and answers with random rewrites
      (random_pairs). These cases were not used to develop lm-eval's comparison: they measure it.

Usage, in the reference's pinned environment (lm-eval[math]==0.4.13: math-verify 0.9.0,
antlr4-python3-runtime 4.11; e.g. the venv scripts/gen_standin_goldens.sh makes):
    .venv-standin/bin/python scripts/gen_math_expr_goldens.py \
        tests/tasks/functions/math_expr_goldens.jsonl
"""

import json
import random
import sys

import sympy as sp
from latex2sympy2_extended.latex2sympy2 import latex2sympy
from math_verify import LatexExtractionConfig, parse, verify
from math_verify.grader import should_treat_as_complex

x, y, n = sp.symbols("x y n", real=True)

PARSE_CASES = [
    # numbers and arithmetic
    "42", "-7", "3.25", "1,000", "12,345.5", "\\frac{3}{4}", "\\dfrac{-5}{8}", "2\\frac{1}{3}",
    "\\frac12", "1/2", "6 \\div 3", "5 \\times 6", "5 \\cdot 6", "2^{10}", "2^10", "-2^2", "2^3^2",
    "10^{-3}", "3!", "\\binom{5}{2}", "\\sqrt{2}", "\\sqrt[3]{8}", "\\sqrt[4]{16}x", "2\\sqrt{3}",
    "\\frac{\\sqrt{3}}{2}", "\\pi", "2\\pi", "\\frac{\\pi}{3}", "e", "e^{2}", "\\exp(2)", "\\ln 5",
    "\\log_2 8", "\\log_{3}{81}", "\\log 100", "|{-3}|", "\\lfloor 2.5 \\rfloor",
    "\\lceil 2.1 \\rceil", "\\sin \\frac{\\pi}{6}", "\\cos(\\pi)", "\\tan^2 x + 1", "\\sec^2 x",
    "\\sin^{-1} x", "\\arctan 1", "\\max(1, 2)", "5\\%", "1:2", "90^\\circ", "\\infty",
    "-\\infty", "0.5", "\\frac{1}{3\\sqrt[3]{x}^2}", "3x^{2/3}", "x^2y", "xy", "2x + 3y",
    "\\frac{x+2}{7}", "\\frac{x}{7}+\\frac{2}{7}", "\\sqrt{x^2}", "(x+1)(x-1)", "x^2-1",
    "\\frac{1}{x} + \\frac{1}{y}", "\\sin x \\cos x", "2\\sin x", "\\sin 2x", "\\alpha + 1",
    "x_1 + x_{2}", "\\left( x + 1 \\right)^2", "\\dfrac{x^2 - 4}{x - 2}", "2i", "i^2", "3+4i",
    # shapes
    "(1,2)", "[1,2]", "(1,2]", "[3,1]", "(2,1)", "(1,2,3)", "\\{1,2\\}", "1,2", "1,2;3,4",
    "(-\\infty, 2]", "(1,2)\\cup(3,4)", "\\emptyset", "x = 1", "x=1,y=2", "1 < x < 2",
    "x \\geq 2", "2 \\le x", "x \\neq 3", "x \\approx 2", "x \\in [-2,7]", "1 \\pm 2", "\\pm 2",
    "(p,q)=(3,2)", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}",
    "x = 1, 2", "x = 111, 111, 111", "12_5", "\\phantom{2}", "\\text{-2}", "\\text{C}",
    "(3i,-3i)", "\\frac{1}{i}", "x != 3", "n!", "\\log_2 8", "x\\quadx",
    # not understood by the reference either
    "\\frac{1}{}", "(1,2", "x^", "3.", "\\foo{2}", "(1,8)^\\circ", "2(1,2)", "(1,2)+1",
    "x \\approx (1,8)", "x < (1,2)", "\\log_\\frac{1}{3}9",
]

SYMBOLS = {"x": 0.7, "y": -1.3, "n": 2.5}


def shape_of(v):
    from sympy.core.relational import Relational
    from latex2sympy2_extended.logic import And
    if isinstance(v, sp.MatrixBase):
        return "matrix"
    if isinstance(v, (Relational, And)):
        return "relation"
    if isinstance(v, sp.Interval):
        return "interval"
    if isinstance(v, sp.Tuple):
        return "tuple"
    if isinstance(v, sp.Set):
        return "set"
    return "expr"


def parse_case(latex):
    try:
        v = latex2sympy(latex, is_real=not should_treat_as_complex(latex), convert_degrees=False,
                        normalization_config=None)
    except Exception:
        return {"kind": "parse", "latex": latex, "parses": False}
    out = {"kind": "parse", "latex": latex, "parses": True, "shape": shape_of(v)}
    if out["shape"] == "expr":
        subs = {s: SYMBOLS[s.name] for s in v.free_symbols if s.name in SYMBOLS}
        try:
            val = complex(sp.N(v.doit().subs(subs), 30))
            if val != val or abs(val) == float("inf"):
                raise ValueError
            out["symbols"] = {s.name: SYMBOLS[s.name] for s in subs}
            out["value"] = [val.real, val.imag]
        except Exception:
            out["value"] = None
    return out


def reference_exact_match(solution, response):
    # lm_eval/tasks/leaderboard/math/utils.py process_results
    return int(bool(verify(parse(solution, extraction_config=[LatexExtractionConfig()]), parse(response))))


def forms(e):
    """Equivalent printings of a sympy expression (as a model might write them)."""
    out = [sp.latex(e)]
    for f in (sp.expand, sp.factor, sp.together, sp.apart, sp.trigsimp, sp.expand_trig, sp.simplify):
        try:
            out.append(sp.latex(f(e)))
        except Exception:
            pass
    if not e.free_symbols:
        try:
            out.append(f"{float(sp.N(e)):.6f}")
        except Exception:
            pass
    return list(dict.fromkeys(out))


def wrong_forms(e):
    out = [sp.latex(e + 1), sp.latex(2 * e), sp.latex(-e)]
    if e.free_symbols:
        out.append(sp.latex(e.subs(x, x + 1)))
    else:
        try:
            out.append(f"{float(sp.N(e)):.2f}")
        except Exception:
            pass
    return list(dict.fromkeys(out))


BASES = [
    sp.Rational(3, 4), sp.Rational(-22, 7), sp.Integer(2024), sp.sqrt(2) / 2, 3 * sp.sqrt(5),
    1 + sp.sqrt(3), sp.pi / 6, 2 * sp.pi, sp.E ** 2, sp.log(8, 2), sp.Rational(1, 3) + sp.sqrt(7),
    (x + 2) / 7, x ** 2 - 1, (x + 1) ** 2, 1 / (x * (x + 1)), sp.sin(x) ** 2 + sp.cos(x) ** 2,
    sp.tan(y) ** 2 + 1, sp.sin(2 * x), 2 * x + 3 * y, (x ** 2 - 4) / (x - 2), sp.sqrt(x) * sp.sqrt(x),
    x ** sp.Rational(2, 3), sp.exp(x) * sp.exp(y), n * (n + 1) / 2, 4 * n ** 2 - 1,
]

TEMPLATES_SOLUTION = ["$\\boxed{%s}$", "The answer is $%s$.", "so we get \\[%s\\]"]
TEMPLATES_RESPONSE = ["$\\boxed{%s}$", "Final Answer: The final answer is $%s$. I hope it is correct.",
                      "Thus the result is \\(%s\\).", "%s"]


def structured_pairs():
    """Sets, tuples, intervals and relations: equal and unequal writings."""
    return [
        ("\\{1, 2, 3\\}", "3, 2, 1"), ("\\{1, 2, 3\\}", "\\{1, 2, 4\\}"), ("1, -1", "\\pm 1"),
        ("(1, 2)", "(2, 1)"), ("(3, -4)", "\\left(3, -4\\right)"), ("(1, \\frac{1}{2})", "(1, 0.5)"),
        ("[2, 5)", "[2, 5)"), ("[2, 5)", "[2, 5]"), ("(-\\infty, 3]", "x \\le 3"),
        ("(-\\infty, 3]", "(-\\infty, 3)"), ("(0, 1) \\cup (2, 3)", "(2, 3) \\cup (0, 1)"),
        ("x = 3", "3"), ("x = 3", "y = 3"), ("y = 2x + 1", "y = 1 + 2x"), ("2x - y + 1 = 0", "y = 2x + 1"),
        ("x < 4", "4 > x"), ("x \\geq 1", "x > 1"), ("x = 1, y = 2", "1, 2"), ("x = 2 \\text{ or } x = 5", "5, 2"),
        ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}"),
        ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 2 \\\\ 1 \\end{pmatrix}"),
        ("50\\%", "50"), ("50\\%", "0.5"), ("\\text{(B)}", "\\text{B}"), ("\\text{odd}", "odd"),
        ("5 \\text{ cm}", "5"), ("12 \\text{ inches}", "12"), ("\\$ 3.50", "3.5"), ("1,000", "1000"),
        ("\\frac{1}{3}", "0.333333"), ("\\frac{1}{3}", "0.33"), ("\\sqrt{2}", "1.414214"),
        ("\\sqrt{2}", "1.41"), ("10^{3}", "1000"), ("\\dfrac{3}{2}", "1\\frac{1}{2}"),
    ]


def random_pairs(rng, count):
    """Random expressions and answers with random rewrites (some equal, most not): the corners
    of reading and comparison that hand-picked cases miss."""
    def num():
        return rng.choice(["1", "2", "3", "4", "5", "7", "10", "12", "0.5", "1.5", "0.25", "-1", "-2", "100"])

    def var():
        return rng.choice(["x", "y", "a", "n", "\\pi", "e", "t"])

    def expr(d=0):
        if d > 2 or rng.random() < 0.3:
            return rng.choice([num, var])()
        a, b = expr(d + 1), expr(d + 1)
        return rng.choice([f"{a}+{b}", f"{a}-{b}", f"{a}\\cdot {b}", f"\\frac{{{a}}}{{{b}}}", f"\\sqrt{{{a}}}",
                           f"({a})^{{2}}", f"{a}^{{{b}}}", f"\\sin({a})", f"-({a})"])

    def rewrite(t):
        r = rng.randrange(8)
        if r == 4 and "+" in t:
            i = t.index("+")
            return t[i + 1:] + "+" + t[:i]
        return [t.replace("+", "-", 1), t.replace("1", "2", 1), t.replace("x", "y", 1),
                t.replace("\\frac", "\\dfrac"), t, t + "+0", "2(" + t + ")/2",
                t.replace("0.5", "\\frac{1}{2}")][r]

    def answer():
        k = rng.randrange(7)
        return [lambda: f"({expr(2)}, {expr(2)})", lambda: f"\\{{{expr(2)}, {expr(2)}\\}}",
                lambda: f"x = {expr(1)}", lambda: f"[{num()}, {num()})", lambda: f"x \\le {num()}",
                expr, expr][k]()

    out = []
    for _ in range(count):
        g = answer()
        p = g if rng.random() < 0.1 else rewrite(g)
        if rng.random() < 0.3:
            p = rewrite(p)
        if rng.random() < 0.15:
            p = answer()
        out.append((g, p))
    return out


def main():
    out_path = sys.argv[1]
    rng = random.Random(1234)
    lines = [parse_case(s) for s in PARSE_CASES]
    pairs = []
    for e in BASES:
        good, bad = forms(e), wrong_forms(e)
        gold = good[0]
        for g in good:
            pairs.append((gold, g))
        for b in bad:
            pairs.append((gold, b))
    pairs += structured_pairs()
    pairs += random_pairs(random.Random(99), 1000)
    seen = set()
    for gold, pred in pairs:
        sol = rng.choice(TEMPLATES_SOLUTION) % gold
        resp = rng.choice(TEMPLATES_RESPONSE) % pred
        if (sol, resp) in seen:
            continue
        seen.add((sol, resp))
        lines.append({"kind": "verify", "solution": sol, "response": resp,
                      "exact_match": reference_exact_match(sol, resp)})
    with open(out_path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    n_verify = sum(1 for line in lines if line["kind"] == "verify")
    print(f"{len(lines) - n_verify} parse cases, {n_verify} verify cases -> {out_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
