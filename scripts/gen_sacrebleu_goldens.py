#!/usr/bin/env python3
"""Writes tests/metrics/goldens/sacrebleu.json: sacrebleu's corpus_bleu, corpus_chrf (chrF and
chrF++, word_order=2) and corpus_ter with their defaults, as the reference's bleu/chrf/chrf++/ter
aggregations call them, over small corpora with tricky text.

Usage: scripts/gen_sacrebleu_goldens.py [--venv DIR]   (default .venv-ref in the repo; DIR must
have sacrebleu)."""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CORPORA = [
    {"hyps": ["The cat sat on the mat."], "refs": [["The cat sat on the mat."]]},
    {"hyps": ["The cat is on the mat.", "There is a dog in the garden"],
     "refs": [["The cat sat on the mat.", "A dog is in the garden."]]},
    {"hyps": ["It is a guide to action which ensures that the military always obeys the commands of the party.",
              "he read the book because he was interested in world history"],
     "refs": [["It is a guide to action that ensures that the military will forever heed Party commands.",
               "he was interested in world history because he read the book"],
              ["It is the guiding principle which guarantees the military forces always being under the command of the Party.",
               "he read a book about world history because he was interested"]]},
    {"hyps": ["Prices rose 3.5% in 2023, to $1,200-$1,500 per unit.", "Tom's e-mail: tom@example.com!"],
     "refs": [["Prices rose by 3.5 % in 2023 to $1,200 - $1,500 a unit.", "Tom's email is tom@example.com."]]},
    {"hyps": ["A &amp; B &lt;tag&gt; &quot;quoted&quot; <skipped> co-\noperate  spaced   out  "],
     "refs": [["A & B <tag> \"quoted\" cooperate spaced out"]]},
    {"hyps": ["", "nothing matches here"], "refs": [["something", "completely different words"]]},
    {"hyps": ["Das ist ein Häuschen — «très» bien, naïve café.", "日本語のテキストです。"],
     "refs": [["Das ist ein kleines Häuschen, «très» bien; naive Café.", "日本語のテキスト。"]]},
    {"hyps": ["short"], "refs": [["a much longer reference sentence than the hypothesis"]]},
    {"hyps": ["a b c d e f g h", "x y"], "refs": [["a b c d", "x y z w"], ["a b c d e f g h i j", "x"]]},
    {"hyps": ["Hello, world!", "(Parenthesised) words; and: more?"],
     "refs": [["Hello world", "Parenthesised words and more"]]},
    {"hyps": ["1,000 people, 2.5 km-long road, 10-20 cars."], "refs": [["1,000 people, a 2.5 km long road, 10 - 20 cars."]]},
    {"hyps": ["UPPER case Words", "MiXeD CaSe"], "refs": [["upper case words", "Mixed Case"]]},
]


def stress_corpora():
    """TER's shift search on hard cases: few distinct words (many matching runs, ties broken by the
    shifted word lists), long segments (the 1,000-candidate limit), very unequal lengths (a wider
    beam). Seeded, so the file is reproducible."""
    import random
    rng = random.Random(20261125)
    out = []
    for n_words, vocab, n_segs in [(8, 3, 6), (25, 4, 4), (60, 6, 2), (120, 5, 1), (40, 30, 3)]:
        words = [f"w{k}" for k in range(vocab)]
        hyps, refs = [], []
        for _ in range(n_segs):
            ref = [rng.choice(words) for _ in range(n_words)]
            hyp = list(ref)
            for _ in range(max(1, n_words // 4)):  # moves, swaps and edits of runs
                a = rng.randrange(len(hyp))
                b = min(len(hyp), a + rng.randint(1, 6))
                run = hyp[a:b]
                del hyp[a:b]
                hyp[rng.randrange(len(hyp) + 1):0] = run
                if rng.random() < 0.3:
                    hyp[rng.randrange(len(hyp))] = rng.choice(words + ["Other"])
            hyps.append(" ".join(hyp))
            refs.append(" ".join(ref))
        out.append({"hyps": hyps, "refs": [refs]})
    out.append({"hyps": ["a b", "one two three"], "refs": [[" ".join(["a", "b", "c"] * 40), "three two one"]]})
    out.append({"hyps": [" ".join(["x", "y"] * 60)], "refs": [["y x"]]})
    return out


def main():
    import sacrebleu
    out = []
    for c in CORPORA + stress_corpora():
        hyps, refs = c["hyps"], c["refs"]
        out.append({
            "hyps": hyps, "refs": refs,
            "bleu": sacrebleu.corpus_bleu(hyps, refs).score,
            "chrf": sacrebleu.corpus_chrf(hyps, refs).score,
            "chrfpp": sacrebleu.corpus_chrf(hyps, refs, word_order=2).score,
            "ter": sacrebleu.corpus_ter(hyps, refs).score,
            "tokens_13a": [sacrebleu.tokenizers.tokenizer_13a.Tokenizer13a()(h.rstrip()).split() for h in hyps],
        })
    dest = os.path.join(ROOT, "tests", "metrics", "goldens", "sacrebleu.json")
    with open(dest, "w", encoding="utf-8") as f:
        json.dump({"generator": "scripts/gen_sacrebleu_goldens.py", "sacrebleu": sacrebleu.__version__,
                   "cases": out}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(out)} corpora to {os.path.relpath(dest, ROOT)}")


if __name__ == "__main__":
    if "--inner" in sys.argv:
        main()
    else:
        ap = argparse.ArgumentParser()
        ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-ref"))
        args = ap.parse_args()
        sys.exit(subprocess.call([os.path.join(args.venv, "bin", "python"), os.path.abspath(__file__), "--inner"]))
