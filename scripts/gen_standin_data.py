#!/usr/bin/env python3
"""Write the stand-in datasets for the two leaderboard families whose real data is absent here.

NOT the real data. DigitalLearningGmbH/MATH-lighteval and TAUR-Lab/MuSR are not in ../shared
(shared/data/MANIFEST.md). These few rows are our own text in the Hub's row schema (MATH-lighteval:
problem, level, solution, type; MuSR: narrative, question, choices, answer_index, answer_choice, in
that key order) so that the reference harness and lm-eval can be run side by side on them
(scripts/gen_standin_goldens.sh, tests/e2e/standin_goldens_test.cpp). See docs/tasks.md, "Stand-in
data".

Rows exercise what the tasks' doc functions and metrics read: Level 5 rows next to other levels
(and "Level ?") that process_docs must drop; \\boxed{} with nested braces, `\\boxed 5`, `\\fbox`,
several boxes, no box; unicode; MuSR choices written as Python literals with quotes, apostrophes,
commas, escapes and three or more options; a narrative with braces; answer_choice values that are
digit strings (the reference turns a rendered target such as '1' into the index 1, not into the
position of the choice '1').

The fake model's generation for a document is a pure function of its prompt (shared/goldens/README.md,
hashfake: " The answer is N.\\n\\n#### N" with N = int(sha256("gen\\x1f" + prompt)[:8], 16) % 100).
For the rows marked HIT, and the GALLERY rows, the answer is written from N, in many forms right
and wrong, so that math-verify's reading of the gold is exercised beyond "no match" (the prompt does not contain the solution, so the
answer can be chosen after the prompt is known). The prompt is rebuilt here from the reference's
fixed 4-shot exemplars (imported from the installed reference package) the way its first_n sampler
joins them; whether the hit really happens is read off the reference's own outputs (the goldens),
not assumed.

Usage: python scripts/gen_standin_data.py [OUT_DIR]   (default tests/fixtures/standin_data)
Needs the reference package with its math extra (lm-eval[math]==0.4.13) importable.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

from lm_eval.tasks.leaderboard.math.utils import list_fewshot_samples

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hashfake_number(prompt: str) -> int:
    h = hashlib.sha256(("gen\x1f" + prompt).encode("utf-8")).hexdigest()
    return int(h[0:8], 16) % 100


def math_prompt(problem: str) -> str:
    shots = "".join(
        "Problem:\n" + s["problem"] + "\n\nSolution:" + " " + s["solution"] + "\n\n"
        for s in list_fewshot_samples()
    )
    return shots + "Problem:\n" + problem + "\n\nSolution:"


# HIT forms: how the boxed answer is written from the fake model's number n.
HIT_FORMS = {
    "int": lambda n: f"\\boxed{{{n}}}",
    "frac": lambda n: f"\\boxed{{\\frac{{{2 * n}}}{{2}}}}",
    "dfrac_sum": lambda n: f"\\boxed{{\\dfrac{{{3 * n}}}{{6}} + \\frac{{{n}}}{{2}}}}",
    "decimal": lambda n: f"\\boxed{{{n}.0}}",
    "miss": lambda n: f"\\boxed{{{n + 1}}}",  # one off: must score 0
}

# subject config -> (type field, train rows, test rows). A test row is
# (level, problem, solution) with "{HIT:form}" in the solution where the answer is written from n.
MATH = {
    "algebra": ("Algebra", [
        ("Level 2", "Solve $2x + 3 = 11$.", "Subtract 3 and halve: $x = \\boxed{4}$."),
    ], [
        ("Level 5", "If $f(x) = \\frac{x^2 - 1}{x - 1}$ for $x \\ne 1$, what is $f(2)$?",
         "For $x \\ne 1$, $f(x) = x + 1$, so the answer is {HIT:int}.\nFinal Answer: The final answer is $3$. I hope it is correct."),
        ("Level 3", "What is $3 + 4$?", "It is $\\boxed{7}$."),
        ("Level 5", "Find all $x$ with $|x - 2| \\le 3$; give the interval.",
         "The inequality means $-3 \\le x - 2 \\le 3$, i.e. $x \\in \\boxed{[-1, 5]}$."),
        ("Level 5", "Simplify $\\left(\\frac{a^{2}}{b}\\right)^{\\frac{1}{2}}$ for $a, b > 0$.",
         "Both factors are positive, so the square root is $\\boxed{\\frac{a}{\\sqrt{b}}}$."),
    ]),
    "counting_and_probability": ("Counting & Probability", [
        ("Level 1", "How many ways can 2 books be ordered?", "There are $\\boxed{2}$ ways."),
    ], [
        ("Level 5", "Zoë rolls two fair dice. What is the probability that the sum is 7?",
         "Six of the 36 outcomes give 7, so the probability is $\\boxed{\\dfrac{1}{6}}$."),
        ("Level 5", "How many subsets of $\\{1, 2, \\ldots, 10\\}$ contain no two consecutive integers?",
         "Counting directly gives {HIT:frac}."),
        ("Level 4", "In how many ways can 3 people sit in a row?", "$3! = \\boxed{6}$."),
    ]),
    "geometry": ("Geometry", [
        ("Level 2", "A square has side 3. What is its area?", "The area is $\\boxed{9}$."),
    ], [
        ("Level ?", "A circle has radius 2. What is its area?", "The area is $\\boxed{4\\pi}$."),
        ("Level 5", "A right triangle has legs 5 and 12. What is its hypotenuse — in centimetres?",
         "By Pythagoras, $\\sqrt{5^2 + 12^2} = \\boxed 13$ cm."),
        ("Level 5", "The angles of a triangle are $x^\\circ$, $2x^\\circ$ and $3x^\\circ$. Find $x$.",
         "First guess: $\\boxed{20}$. Correcting: $6x = 180$, so $x = \\boxed{30}$."),
        ("Level 5", "Find the area of the triangle with vertices $(0,0)$, $(4,0)$, $(0,9)$.",
         "Half base times height: {HIT:decimal}"),
    ]),
    "intermediate_algebra": ("Intermediate Algebra", [
        ("Level 3", "Find the roots of $x^2 - 1$.", "They are $\\boxed{\\pm 1}$."),
    ], [
        ("Level 5", "Let $p(x) = x^3 - 6x^2 + 11x - 6$. Find the sum of the squares of its roots.",
         "By Vieta, $r_1 + r_2 + r_3 = 6$ and $\\sum r_i r_j = 11$, so the sum is $36 - 22 = \\boxed{14}$."),
        ("Level 5", "Find the minimum of $x^2 + \\frac{16}{x^2}$ over real $x \\neq 0$.",
         "By AM–GM it is $\\fbox{8}$, reached at $x = \\pm 2$."),
        ("Level 1", "Compute $i^2$.", "$i^2 = \\boxed{-1}$."),
    ]),
    "number_theory": ("Number Theory", [
        ("Level 2", "What is $10 \\bmod 3$?", "$\\boxed{1}$"),
    ], [
        ("Level 5", "What is the remainder when $2^{100}$ is divided by 7?",
         "Since $2^3 \\equiv 1$, $2^{100} = 2 \\cdot (2^3)^{33} \\equiv \\boxed{2} \\pmod 7$."),
        ("Level 5", "Write $\\frac{1}{7}$ as a repeating decimal; what is the sum of the first 12 digits after the point?",
         "A careful count gives {HIT:miss}."),
        ("Level 5", "Which primes $p$ make $p^2 + 2$ prime?",
         "Only $p = 3$ works, since otherwise $p^2 \\equiv 1 \\pmod 3$. Answer: $\\boxed{3}$"),
    ]),
    "prealgebra": ("Prealgebra", [
        ("Level 1", "What is $1 + 1$?", "$\\boxed{2}$"),
    ], [
        ("Level 5", "A café sells tea for \\$2.50 and coffee for \\$3.25. What do 2 teas and 1 coffee cost, in dollars?",
         "$2 \\cdot 2.50 + 3.25 = \\boxed{\\$8.25}$."),
        ("Level 5", "What is $\\frac{3}{4}$ of 40%, as a percent?", "$0.75 \\cdot 40 = \\boxed{30\\%}$."),
        ("Level 5", "Compute $\\frac{1}{2} + \\frac{1}{3}$.", "No box here: the answer is 5/6."),
        ("Level 2", "Round 3.14159 to the nearest hundredth.", "$\\boxed{3.14}$"),
    ]),
    "precalculus": ("Precalculus", [
        ("Level 4", "Compute $\\cos 0$.", "$\\boxed{1}$"),
    ], [
        ("Level 5", "Find $\\sin \\frac{\\pi}{3}$.", "It is $\\boxed{\\frac{\\sqrt{3}}{2}}$."),
        ("Level 5", "Compute $\\det \\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}$ times $-\\frac{9}{2}$.",
         "The determinant is $-2$, so the product is {HIT:dfrac_sum}."),
        ("Level 5", "Convert the point $(1, 1)$ to polar coordinates $(r, \\theta)$ with $0 \\le \\theta < 2\\pi$.",
         "$r = \\sqrt{2}$ and $\\theta = \\frac{\\pi}{4}$: $\\boxed{\\left( \\sqrt{2}, \\frac{\\pi}{4} \\right)}$."),
    ]),
}


# More Level 5 rows, spread over the subjects after their own rows: whole solutions written from
# the fake model's number n, each a different way of writing (or not writing) the answer, so that
# math-verify's reading of the gold (extraction, normalisation, comparison with the response's n)
# is compared on many forms, right and wrong.
GALLERY = [
    lambda n: f"So the value is $\\boxed{{{n}}}$.",
    lambda n: f"The angle measures $\\boxed{{{n}^\\circ}}$.",
    lambda n: f"The rate is $\\boxed{{{n}\\%}}$.",
    lambda n: f"It costs $\\boxed{{\\${n}}}$.",
    lambda n: f"The side is $\\boxed{{{n} \\text{{ cm}}}}$ long.",
    lambda n: f"Solving gives $\\boxed{{x = {n}}}$.",
    lambda n: f"Hence $\\boxed{{\\sqrt{{{n * n}}}}}$.",
    lambda n: f"Rounded: $\\boxed{{{n}.00}}$.",
    lambda n: f"The only solution is $\\boxed{{\\{{{n}\\}}}}$.",
    lambda n: f"The pair is $\\boxed{{({n}, 1)}}$.",
    lambda n: f"Both roots equal $\\boxed{{{n}, {n}}}$.",
    lambda n: f"The answer is $\\boxed{{\\text{{{n}}}}}$.",
    lambda n: f"No box: the answer is ${n}$.",
    lambda n: f"We get $\\boxed{{{n}}}$ at first, but the count is really $\\boxed{{{n + 2}}}$.",
    lambda n: f"The total is $\\boxed{{{n}{{,}}000}}$.",
    lambda n: f"The value is $\\boxed{{-{n}}}$.",
    lambda n: f"So $\\boxed{{\\textbf{{(C) }} {n}}}$.",
    lambda n: f"The product is $\\boxed{{\\dfrac{{{n}}}{{2}} \\cdot 2}}$.",
    lambda n: f"The limit equals $\\boxed{{{n} + 0.0000001}}$.",
    lambda n: f"The answer is $\\boxed{{{n}}}$ and $\\boxed{{{n}}}$.",
    lambda n: f"Final Answer: The final answer is ${n}$. I hope it is correct.",
]


def math_rows():
    out = {}
    subjects = list(MATH)
    for config, (typ, train, test) in MATH.items():
        rows_test = []
        k = subjects.index(config)
        gallery = [("Level 5", f"Stand-in exercise {i + 1}: evaluate the expression of part {i + 1}.", GALLERY[i])
                   for i in range(k, len(GALLERY), len(subjects))]
        for level, problem, solution in test + gallery:
            if callable(solution):
                solution = solution(hashfake_number(math_prompt(problem)))
            n = hashfake_number(math_prompt(problem))
            for form, make in HIT_FORMS.items():
                solution = solution.replace("{HIT:" + form + "}", "$" + make(n) + "$")
            rows_test.append({"problem": problem, "level": level, "solution": solution, "type": typ})
        rows_train = [{"problem": p, "level": lv, "solution": s, "type": typ} for lv, p, s in train]
        out[("DigitalLearningGmbH/MATH-lighteval", config, "train")] = rows_train
        out[("DigitalLearningGmbH/MATH-lighteval", config, "test")] = rows_test
    return out


# MuSR: split -> rows of (narrative, question, choices as a Python literal string, answer_index).
MUSR = {
    "murder_mysteries": [
        ("In the quiet town of Ashford, the florist Ms. O'Neill was found in her greenhouse. "
         "Detective Rao spoke first with Mackenzie, who had a key {and a grudge}, then with Ana, "
         "who said she was at the café until nine — the barista agreed.",
         "Who is the most likely murderer?",
         "['Mackenzie', 'Ana']", 0),
        ("Old Mr. Finch's library held a locked cabinet. \"Nobody touches it,\" he'd said. "
         "Jonas, his nephew, needed money; Priya, the archivist, had catalogued every book.\n\n"
         "On Tuesday the cabinet stood open.",
         "Who is the most likely murderer?",
         "[\"Jonas\", 'Priya']", 1),
        ("A storm cut the island's ferry. Of the two guests, D'Arcy had quarrelled with the host, "
         "and Élodie had left early — or said she had.",
         "Who is the most likely murderer?",
         "[\"D'Arcy\", 'Élodie']", 0),
    ],
    "object_placements": [
        ("Sam put the keys in the blue bowl, then left for work. Later, Lee moved them to the "
         "drawer, under the napkins, so the cat wouldn't knock them down. Sam did not see this.",
         "Which location is the most likely place Sam would look to find the keys given the story?",
         "['blue bowl', 'drawer, under the napkins', 'coat pocket']", 0),
        ("The recipe book sat on the shelf. Maria carried it to the kitchen table, and Tom, "
         "watching, later put it back on the shelf.",
         "Which location is the most likely place Maria would look to find the recipe book given the story?",
         "['shelf', 'kitchen table', \"Tom's bag\"]", 1),
        ("Three boxes were stacked in the hall. Kai counted them twice and wrote the number on a note.",
         "How many boxes did Kai write on the note?",
         "['2', '3']", 1),
        # The fake model prefers '3' here; the reference reads the target '1' as index 1.
        ("Boxes were stacked in the hall. Kai counted them twice and wrote the number on a note.",
         "How many boxes did Kai write on the note?",
         "['2', '3', '1']", 2),
    ],
    "team_allocation": [
        ("The studio needs one person on sound and two on lighting. Alice is a trained audio "
         "engineer but dislikes ladders; Bob and Chen have rigged lights together for years.",
         "Given the story, how would you uniquely allocate each person to make sure both tasks are accomplished efficiently?",
         "['Sound: Alice, Lighting: Bob and Chen', 'Sound: Bob, Lighting: Alice and Chen', 'Sound: Chen, Lighting: Alice and Bob']", 0),
        ("A bakery needs one baker and two cashiers. Dana's bread won prizes; Eli and Fatima "
         "argue constantly at the till, and Eli can't tell rye from wheat.",
         "Given the story, how would you uniquely allocate each person to make sure both tasks are accomplished efficiently?",
         "['Baker: Eli, Cashiers: Dana and Fatima', 'Baker: Dana, Cashiers: Eli and Fatima', 'Baker: Fatima, Cashiers: Dana and Eli']", 1),
        ("A field trip needs a driver and two guides. Gus has no licence; Hana drives the school "
         "bus, and Ivo knows every trail by heart, with Gus.",
         "Given the story, how would you uniquely allocate each person to make sure both tasks are accomplished efficiently?",
         "['Driver: Hana, Guides: Gus and Ivo', 'Driver: Ivo, Guides: Gus and Hana', "
         "'Driver: Gus, Guides: Hana and Ivo', 'Driver: Hana, Guides: Ivo and the \\'map\\'']", 0),
    ],
}


def musr_rows():
    import ast
    out = {}
    for split, rows in MUSR.items():
        out[("TAUR-Lab/MuSR", "default", split)] = [
            {"narrative": nar, "question": q, "choices": ch, "answer_index": i,
             "answer_choice": ast.literal_eval(ch)[i]}
            for nar, q, ch, i in rows
        ]
    return out


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "fixtures", "standin_data")
    files = {**math_rows(), **musr_rows()}
    for (dataset, config, split), rows in files.items():
        d = os.path.join(out_dir, dataset, config)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, split + ".jsonl"), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {sum(len(r) for r in files.values())} rows in {len(files)} files under {out_dir}")


if __name__ == "__main__":
    main()
