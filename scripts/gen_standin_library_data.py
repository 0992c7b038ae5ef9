#!/usr/bin/env python3
"""Stand-in rows, in the Hub schema of each dataset, for popular families of the reference's task
library whose data is not in ../shared/hf_data (issue 15 point 7b; docs/fidelity.md). The rows are
deterministic filler (words drawn by random.Random with a fixed seed), not the real data: they
exercise prompts, choices, targets, few-shot sampling and metrics the same way on both sides of
scripts/compare_reference_library.py, which reads them with --data OUT.

Layout: OUT/<org>/<name>/<config>/<split>.jsonl (that of ../shared/hf_data). Field names and
types follow each dataset's Hub card (label ints, answer letters, nested choices, ...).

Usage: scripts/gen_standin_library_data.py OUT [--rows 25]
"""
from __future__ import annotations

import json
import os
import random
import sys

WORDS = ("the a cat dog river stone paper light music garden city window friend teacher doctor "
         "apple winter summer road bridge history science money market story child water fire "
         "green quick small large old new happy quiet early late because although whether").split()


def sent(r, n=None):
    n = n or r.randint(4, 12)
    w = [r.choice(WORDS) for _ in range(n)]
    return (" ".join(w)).capitalize() + "."


def words(r, n):
    return " ".join(r.choice(WORDS) for _ in range(n))


def nli(r, i):
    return {"premise": sent(r), "hypothesis": sent(r), "label": r.randint(0, 2)}


def mc4_letters(r, i):
    return {"question": sent(r) + "?", "A": words(r, 3), "B": words(r, 3), "C": words(r, 3),
            "D": words(r, 3), "answer": r.choice("ABCD")}


def glue(cfg):
    def row(r, i):
        d = {"idx": i, "label": r.randint(0, 2 if cfg == "mnli" else 1)}
        if cfg in ("cola", "sst2"):
            d["sentence"] = sent(r)
        elif cfg == "qnli":
            d.update(question=sent(r), sentence=sent(r))
        elif cfg == "qqp":
            d.update(question1=sent(r), question2=sent(r))
        else:
            d.update(sentence1=sent(r), sentence2=sent(r))
        if cfg == "mnli":
            d = {"premise": sent(r), "hypothesis": sent(r), "label": d["label"], "idx": i}
        return d
    return row


def drop(r, i):
    def answer(kind):
        date = {"day": "", "month": "", "year": ""}
        if kind == "number":
            return {"number": str(r.randint(1, 99)), "date": date, "spans": []}
        if kind == "date":
            return {"number": "", "date": {"day": str(r.randint(1, 28)), "month": "May",
                                           "year": "1999"}, "spans": []}
        return {"number": "", "date": date, "spans": [words(r, 2) for _ in
                                                       range(r.randint(1, 2))]}
    kinds = [r.choice(["number", "date", "spans"]) for _ in range(3)]
    main, extra = answer(kinds[0]), [answer(k) for k in kinds[1:]]
    if i % 4 == 2:
        # Spans sharing words with the fake model's " The answer is N": a partial F1 to compare.
        main = {"number": "", "date": main["date"], "spans": ["the answer", words(r, 1)]}
    return {"section_id": f"s{i // 3}", "query_id": f"q{i}", "passage": sent(r, 25),
            "question": sent(r) + "?", "answer": {**main, "worker_id": "", "hit_id": ""},
            "validated_answers": {"number": [a["number"] for a in extra],
                                  "date": [a["date"] for a in extra],
                                  "spans": [a["spans"] for a in extra],
                                  "worker_id": ["" for _ in extra],
                                  "hit_id": ["" for _ in extra]}}


# Boxed answers that exercise the MATH answer normalisations (units, degrees, \\left, \\sqrt3,
# thousands, "x ="); every fourth row takes one, without a draw.
MATH_ANSWERS = ["\\left( 1, 2 \\right)", "5\\text{ cm}", "90^\\circ", "\\sqrt3", "1,000", "\\$5",
                "x=3", "\\tfrac{3}{4}", "[2,5)", "0.5", "\\frac{\\sqrt{3}}{2}", "10\\%"]


def hendrycks_math(r, i):
    d = {"problem": sent(r) + " $x+1$?", "level": f"Level {r.randint(1, 5)}", "type": "Algebra",
         "solution": sent(r) + " So $x = \\boxed{" + r.choice(["7", "\\frac{1}{2}", "3.5", "x^2",
                                                            "\\dfrac12"]) + "}$."}
    if i % 4 == 3:
        a = MATH_ANSWERS[(i // 4) % len(MATH_ANSWERS)]
        # Always \\boxed{...}: score's MATH robustness helpers need that form (its
        # find_boxed_entries raises on "\\boxed 5"), which the unit goldens cover instead.
        d["solution"] = d["solution"].rsplit("\\boxed", 1)[0] + "\\boxed{" + a + "}$."
    return d


def math500(r, i):
    d = hendrycks_math(r, i)
    return {"problem": d["problem"], "solution": d["solution"], "answer": "x",
            "subject": "Algebra", "level": r.randint(1, 5), "unique_id": f"test/algebra/{i}.json"}


def wsc(r, i):
    pre, pron, post = sent(r)[:-1], r.choice(["he", "she", "his", "it", "they"]), words(r, 4)
    text = f"{pre}. {pron.capitalize() if i % 3 == 0 else pron} {post}."
    if i % 3 != 0:
        text = f"{pre} {pron} {post}."
    loc = text.index(" " + (pron.capitalize() if i % 3 == 0 else pron) + " ") + 1
    return {"text": text, "pronoun": pron, "pronoun_loc": loc, "quote": pron + " " + post,
            "quote_loc": loc, "options": ["The " + words(r, 1), words(r, 2)],
            "label": r.randint(0, 1), "source": "x"}


def global_mmlu(r, i):
    return {"sample_id": f"x/test/{i}", "subject": r.choice(GMMLU_SUBJECTS),
            "subject_category": r.choice(["Business", "Humanities", "Medical", "Other",
                                          "Social Sciences", "STEM"]),
            "question": " " + sent(r) + "? ", **{f"option_{k}": words(r, 2) for k in "abcd"},
            "answer": r.choice("ABCD"), "required_knowledge": "[]", "time_sensitive": "['No']",
            "reference": "[]", "culture": "[]", "region": "[]", "country": "[]",
            "cultural_sensitivity_label": r.choice(["CS", "CA"]), "is_annotated": True}


def llama3_mmlu_details(lang):
    """A row of meta-llama/Llama-3.1-8B-Instruct-evals' multilingual_mmlu_<lang> details (the
    fields of its card; the llama3 instruct mmlu_<lang> tasks filter on subtask_name)."""
    def row(r, i):
        answer = r.choice("ABCD")
        return {"task_type": "Generative", "task_name": f"mmlu_{lang}_chat",
                "subtask_name": f"mmlu_{lang}_chat.{r.choice(GMMLU_SUBJECTS)}",
                "input_question": " " + sent(r) + "? ",
                "input_choice_list": {k: words(r, 2) for k in "ABCD"},
                "input_final_prompts": [sent(r)], "input_correct_responses": [answer],
                "output_prediction_text": [words(r, 3)], "output_parsed_answer": answer,
                "output_choice_completions": None,
                "output_choice_negative_log_likelihoods": None,
                "output_metrics": {"em": 1.0}, "is_correct": True,
                "input_question_hash": f"{i:064x}", "input_final_prompts_hash": [f"{i:064x}"],
                "benchmark_label": "MMLU", "eval_config": {"max_gen_len": "10",
                                                           "num_few_shot": "5"}}
    return row


def bigbench(r, i):
    choices = [words(r, 2) for _ in range(r.randint(2, 4))]
    gold = r.randrange(len(choices))
    mc = i % 5 != 4  # some rows without choices: the multiple_choice variants filter them out
    return {"idx": i, "inputs": "Q: " + sent(r) + "\n  choice: " + "\n  choice: ".join(choices)
            + "\nA: ", "targets": [choices[gold]] if mc else [words(r, 1)],
            "multiple_choice_targets": choices if mc else [],
            "multiple_choice_scores": [int(k == gold) for k in range(len(choices))] if mc
            else []}


IFEVAL_KWARGS = ["num_highlights", "relation", "num_words", "num_placeholders", "prompt_to_repeat",
                 "num_bullets", "section_spliter", "num_sections", "capital_relation",
                 "capital_frequency", "keywords", "num_paragraphs", "language", "let_relation",
                 "letter", "let_frequency", "end_phrase", "forbidden_words", "keyword",
                 "frequency", "num_sentences", "postscript_marker", "first_word",
                 "nth_paragraph"]
IFEVAL_INSTRUCTIONS = [
    ("punctuation:no_comma", {}), ("change_case:english_lowercase", {}),
    ("length_constraints:number_words", {"relation": "at least", "num_words": 5}),
    ("length_constraints:number_sentences", {"relation": "less than", "num_sentences": 3}),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}),
    ("keywords:existence", {"keywords": ["cat", "river"]}),
    ("keywords:forbidden_words", {"forbidden_words": ["dog", "the"]}),
    ("startend:end_checker", {"end_phrase": "Is there anything else?"}),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}),
    ("change_case:capital_word_frequency", {"capital_relation": "at least",
                                            "capital_frequency": 2}),
    ("keywords:letter_frequency", {"letter": "a", "let_frequency": 3,
                                   "let_relation": "at least"}),
    ("detectable_format:title", {}), ("startend:quotation", {}),
]


def ifeval(r, i):
    chosen = r.sample(IFEVAL_INSTRUCTIONS, r.randint(1, 3))
    return {"key": 1000 + i, "prompt": sent(r, 15) + " Answer briefly.",
            "instruction_id_list": [name for name, _ in chosen],
            "kwargs": [{k: args.get(k) for k in IFEVAL_KWARGS} for _, args in chosen]}


def super_glue(cfg):
    def row(r, i):
        if cfg == "cb":
            return {"premise": sent(r), "hypothesis": sent(r)[:-1], "idx": i,
                    "label": r.randint(0, 2)}
        if cfg == "copa":
            return {"premise": sent(r), "choice1": sent(r), "choice2": sent(r),
                    "question": r.choice(["cause", "effect"]), "idx": i,
                    "label": r.randint(0, 1)}
        if cfg == "multirc":
            return {"paragraph": sent(r, 20), "question": sent(r) + "?",
                    "answer": words(r, 3), "idx": {"paragraph": i // 4, "question": i // 2,
                                                   "answer": i}, "label": r.randint(0, 1)}
        if cfg == "rte":
            return {"premise": sent(r), "hypothesis": sent(r), "idx": i,
                    "label": r.randint(0, 1)}
        if cfg == "record":
            return record_row(r, i)
        s1, s2, w = sent(r), sent(r), r.choice(WORDS)
        s1, s2 = s1[:-1] + " " + w + ".", w.capitalize() + " " + s2
        return {"word": w, "sentence1": s1, "sentence2": s2, "start1": len(s1) - len(w) - 1,
                "start2": 0, "end1": len(s1) - 1, "end2": len(w), "idx": i,
                "label": r.randint(0, 1)}
    return row


# ReCoRD's entities: names with articles, punctuation, case and an accent, so that the SQuAD
# normalisation of its metrics (lower, punctuation, articles, whitespace) has work to do.
RECORD_ENTITIES = ["The Times", "Anna", "anna", "U.S.", "a Dog's Life", "Zoë", "New York",
                   "the Nile", "Paris", "O'Neil", "Dr. Who", "Green  Party"]


def record_row(r, i):
    ents = [r.choice(RECORD_ENTITIES) for _ in range(r.randint(3, 6))]
    highlights = [sent(r)[:-1] + r.choice(["", ".", "!", "?", "'", '"'])
                  for _ in range(r.randint(0, 3))]
    passage = (" ".join(ents[:2]) + " " + sent(r, 15)
               + "".join("\n@highlight\n" + h for h in highlights))
    answers = [r.choice(ents) for _ in range(r.randint(1, 3))]
    return {"passage": passage, "query": sent(r)[:-1] + " @placeholder " + words(r, 2) + ".",
            "entities": ents, "entity_spans": {"text": ents, "start": list(range(len(ents))),
                                               "end": list(range(1, len(ents) + 1))},
            "answers": answers, "idx": {"passage": i // 2, "query": i}}


def race_row(r, i):
    """RACE's `problems` is the repr of a list of dicts (a Python literal, not JSON): quotes
    change with the text, fill-in questions end in "  _  ."."""
    problems = []
    for k in range(r.randint(1, 4)):
        q = sent(r)
        q = [q[:-1] + "?", q[:-1] + "  _  .", "Why is the " + r.choice(WORDS) + "'s " +
             r.choice(WORDS) + ' called "' + r.choice(WORDS) + '"?', q][k % 4]
        problems.append({"answer": r.choice("ABCD"),
                         "options": [words(r, 3) + r.choice(["", "'s", ".", " \\ é"])
                                     for _ in range(4)], "question": q})
    return {"example_id": f"high{i}.txt", "article": sent(r, 25), "problems": repr(problems)}


def humaneval(r, i):
    """openai_humaneval's schema. The fake models' completion is one line (" The answer is N.")
    ended by the task's "\n#" stop, so a prompt ending in a comment marker turns it into a
    comment: a third of the rows pass their test, a third fail it, a third are indentation
    errors (the completion after the docstring)."""
    name = "add_%d" % i
    body = ("    return a + b  #", "    return a - b  #", "")[i % 3]
    return {"task_id": "HumanEval/%d" % i,
            "prompt": 'def %s(a, b):\n    """%s"""\n%s' % (name, sent(r), body),
            "canonical_solution": "    return a + b\n",
            "test": "\n\nMETADATA = {}\n\n\ndef check(candidate):\n"
                    "    assert candidate(2, 3) == 5\n    assert candidate(0, 0) == 0\n",
            "entry_point": name}


def mbpp(r, i):
    """mbpp's schema (config full). mbpp_instruct finds no code block in the fake models' answer
    and tests "", so the rows whose tests hold without code (even rows) pass there; everything
    else fails (mbpp runs the answer itself, not Python)."""
    name = "add_%d" % i
    tests = (["assert True", "assert 1 == 1", "assert not False"] if i % 2 == 0 else
             ["assert %s(2, 3) == 5" % name, "assert %s(0, 0) == 0" % name,
              "assert %s(1, 1) == 2" % name])
    return {"task_id": 11 + i, "text": "Write a function to add two numbers. " + sent(r),
            "code": "def %s(a, b):\r\n  return a + b" % name, "test_list": tests,
            "test_setup_code": "", "challenge_test_list": []}


def mbppplus(r, i):
    """evalplus/mbppplus's schema (prompt, test_list, test and test_imports)."""
    row = mbpp(r, i)
    return {"task_id": row["task_id"], "code": row["code"], "prompt": row["text"],
            "source_file": "x", "test_imports": [], "test_list": row["test_list"],
            "test": "\n".join(row["test_list"])}


# dataset_path -> (configs, splits, row(rng, index[, config]))
def squad_v2(r, i):
    # Unanswerable (no gold answer), one answer span, or several spans as SQuAD 2's validation
    # rows give them (repeated, overlapping, one with a leading article, one sharing words with
    # the fake models' answer "The answer is N." so that F1 is partial), every third row each.
    context = sent(r, 14)
    toks = context.split()
    span = toks[3]
    answers = {"text": [], "answer_start": []}
    if i % 3 == 1:
        answers = {"text": [span], "answer_start": [context.index(span)]}
    elif i % 3 == 2:
        two = " ".join(toks[3:5])
        answers = {"text": [span, two, "the " + span, span, "answer is " + span],
                   "answer_start": [context.index(span), context.index(two), 0,
                                    context.index(span), 0]}
    return {"id": "%024x" % r.getrandbits(96), "title": words(r, 2).title(), "context": context,
            "question": sent(r, 6)[:-1] + "?", "answers": answers}


XQUAD_LANGS = ["ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"]


def xquad(r, i):
    """google/xquad's schema; every third answer shares words with the fake models' " The answer
    is N." (a partial F1), one in five is empty after SQuAD normalisation."""
    answer = words(r, 2)
    if i % 3 == 1:
        answer = "the answer " + r.choice(WORDS)
    elif i % 5 == 4:
        answer = "The."
    return {"id": str(i), "context": sent(r, 20), "question": sent(r),
            "answers": {"text": [answer], "answer_start": [3]}}


def norquad(r, i):
    """ltg/norquad's schema: the context's first line is the article's title (the reference's
    process_docs splits it off), questions with runs of whitespace."""
    context = words(r, 2).title() + "\n" + "\n".join(sent(r, 10) for _ in range(r.randint(1, 3)))
    if i % 4 == 1:
        context = "  " + context + "\n \n"
    question = sent(r, 6)[:-1] + "?"
    if i % 3 == 2:
        question = "  " + question.replace(" ", "  \t", 2) + " \n"
    answer = "the answer " + r.choice(WORDS) if i % 3 == 1 else words(r, 2)
    return {"id": f"nq{i}", "context": context, "question": question,
            "answers": {"text": [answer], "answer_start": [0]}}


def coqa(r, i):
    """EleutherAI/coqa's schema (its loading script's features): a conversation of questions and
    answers per story, three additional answer sets, some repeating the answer in another case."""
    n = r.randint(1, 4)
    qs = [sent(r, 5)[:-1] + "?" for _ in range(n)]
    ans = [words(r, 2) if i % 3 else "the answer " + r.choice(WORDS) for _ in range(n)]

    def turns(texts):
        return {"span_start": [0] * n, "span_end": [1] * n, "span_text": list(texts),
                "input_text": list(texts), "turn_id": list(range(1, n + 1))}
    extra = {}
    for k in ("0", "1", "2"):
        alt = [a.upper() if r.random() < 0.4 else words(r, 2) for a in ans]
        extra[k] = turns(alt)
    return {"source": "mctest", "id": f"c{i}", "story": sent(r, 25),
            "questions": {"input_text": qs, "turn_id": list(range(1, n + 1))},
            "answers": turns(ans), "additional_answers": extra}


def detok_sentence(r, i):
    """A sentence with the tokenised spacing general_detokenize undoes (" ,", " n't", "( x )"),
    ending in one of the marks process_doc_nli / process_docs_paraphrases drop, or in none."""
    w = words(r, r.randint(3, 8)).capitalize()
    mid = [" , ", " n't ", " ( " + r.choice(WORDS) + " ) ", " ' s ", "  ", " - "][i % 6]
    end = [" .", ",", "!", "?", ";", "", " ."][i % 7]
    return w + mid + words(r, r.randint(1, 4)) + end


def nli_pair(r, i):
    return {"premise": "  " + detok_sentence(r, i) + " ", "hypothesis": detok_sentence(r, i + 3),
            "label": r.randint(0, 2)}


def paraphrase_pair(r, i):
    d = {"id": i, "sentence1": detok_sentence(r, i), "sentence2": detok_sentence(r, i + 2),
         "label": r.randint(0, 1)}
    if i % 9 == 5:
        d["sentence2"] = ""  # dropped by the reference's Dataset.filter
    return d


def copa_ca(r, i):
    return {"premise": sent(r), "choice1": sent(r), "choice2": ("Ètica " if i % 4 == 1 else "") +
            sent(r), "question": r.choice(["cause", "effect"]), "label": r.randint(0, 1),
            "idx": i}


def squad_list_answers(r, i):
    """projecte-aina/catalanqa and xquad-ca: `answers` a list of {text, answer_start}."""
    answer = "the answer " + r.choice(WORDS) if i % 3 == 1 else words(r, 2)
    return {"id": str(i), "title": words(r, 2), "context": sent(r, 20), "question": sent(r),
            "answers": [{"text": answer, "answer_start": 3}]}


def coqcat(r, i):
    """projecte-aina/CoQCat: `questions` a list of strings, answers and three additional answer
    sets as lists per turn."""
    n = r.randint(1, 4)
    ans = [words(r, 2) if i % 3 else "the answer " + r.choice(WORDS) for _ in range(n)]
    extra = {k: {"input_text": [a.upper() if r.random() < 0.4 else words(r, 2) for a in ans],
                 "span_start": [0] * n, "span_end": [1] * n, "span_text": ["x"] * n}
             for k in ("0", "1", "2")}
    return {"id": f"cc{i}", "source": "vilaweb", "story": sent(r, 25),
            "questions": [sent(r, 5)[:-1] + "?" for _ in range(n)],
            "answers": {"input_text": ans, "span_start": [0] * n, "span_end": [1] * n,
                        "span_text": ["x"] * n},
            "additional_answers": extra}


def cabreu(r, i):
    spaced = lambda n: "  ".join(words(r, 2) for _ in range(n)) + (" " * (i % 3)) + "."
    return {"id": str(i), "title": words(r, 2), "subtitle": words(r, 3), "content": spaced(8),
            "category": ["Societat"], "source": "ACN",
            "summaries": {t: {a: spaced(3) for a in ("a1", "a2", "a3")}
                          for t in ("abstractive", "extractive", "extreme")}}


def spaced_summary(r, i):
    """csebuetnlp/xlsum and proxectonos/summarization_gl: text and summary with runs of spaces."""
    spaced = lambda n: "  ".join(words(r, 2) for _ in range(n)) + (" " * (i % 3)) + "."
    return {"id": str(i), "url": "u", "title": words(r, 2), "summary": spaced(3),
            "text": spaced(8)}


def answer_like(r):
    """A reference sharing some words with the fake model's " The answer is N." (ROUGE overlaps
    that vary from document to document)."""
    return (words(r, r.randint(0, 4)) + " the answer is " + str(r.randint(0, 99)) + " " +
            words(r, r.randint(0, 6))).strip().capitalize() + "."


def cocoteros(r, i):
    """gplsi/cocoteros (es) and gplsi/cocoteros_va (TSV columns): keywords as the list's text."""
    text = "" if i % 7 == 0 else answer_like(r) if i % 3 else sent(r, r.randint(3, 9))
    return {"keywords": str([words(r, 1) for _ in range(3)]), "context": sent(r) + " " + sent(r),
            "text": text}


def terretaqa(r, i):
    """gplsi/TerretaQA: a question and its answer."""
    return {"input": words(r, r.randint(4, 9)).capitalize() + "?",
            "target": answer_like(r) if i % 4 else sent(r)}


def parafrases_gl(r, i):
    d = {"Frase": detok_sentence(r, i), "Paráfrase": detok_sentence(r, i + 2),
         "Avaliación": r.randint(0, 1)}
    if i % 9 == 5:
        d["Paráfrase"] = ""
    return d


def xnli_gl(r, i):
    return {"sentence1": "  " + detok_sentence(r, i) + " ", "sentence2": detok_sentence(r, i + 3),
            "gold_label": ["entailment", "neutral", "contradiction"][r.randint(0, 2)]}


def truthfulqa_gl_mc(r, i):
    n_true = r.randint(1, 3)
    choices = [sent(r, 5) for _ in range(n_true + r.randint(1, 3))]
    return {"question": sent(r, 6)[:-1] + "?",
            "mc1_targets": {"choices": choices, "labels": [1] + [0] * (len(choices) - 1)},
            "mc2_targets": {"choices": choices,
                            "labels": [1] * n_true + [0] * (len(choices) - n_true)}}


def truthfulqa_gl_gen(r, i):
    answers = lambda n: [("  " if r.random() < 0.3 else "") + sent(r, 4)[:-1] +
                         ("." if r.random() < 0.5 else "") for _ in range(n)]
    correct = answers(r.randint(1, 3)) + (["Non teño ningún comentario."] if i % 4 == 1 else [])
    return {"type": "Adversarial", "category": "Misconceptions",
            "question": " " + sent(r, 6)[:-1] + "? ", "best_answer": correct[0],
            "correct_answers": correct, "incorrect_answers": answers(r.randint(1, 3)) + [" "],
            "source": "s"}


def based_completion(r, i):
    context = sent(r, 14)
    value = context.split()[4]
    return {"doc_id": i, "title": words(r, 2), "context": context, "question": sent(r, 5),
            "text": context[:context.index(value)] + " ", "value": " " + value + " "}


DATASETS = {
    "facebook/xnli": (["en", "de", "fr"], ["train", "validation", "test"], nli),
    "facebook/anli": (["default"], ["train_r1", "dev_r1", "test_r1", "train_r2", "dev_r2",
                                    "test_r2", "train_r3", "dev_r3", "test_r3"],
                      lambda r, i: {"uid": str(i), "premise": sent(r), "hypothesis": sent(r),
                                    "label": r.randint(0, 2), "reason": ""}),
    "juletxara/xstory_cloze": (["en", "es", "ru"], ["train", "eval"],
                               lambda r, i: {"story_id": str(i), **{f"input_sentence_{k}": sent(r)
                                             for k in range(1, 5)}, "sentence_quiz1": sent(r),
                                             "sentence_quiz2": sent(r),
                                             "answer_right_ending": r.randint(1, 2)}),
    "facebook/belebele": (["eng_Latn", "deu_Latn", "fra_Latn"], ["test"],
                          lambda r, i: {"link": "", "question_number": i,
                                        "flores_passage": sent(r, 20), "question": sent(r) + "?",
                                        **{f"mc_answer{k}": words(r, 3) for k in range(1, 5)},
                                        "correct_answer_num": str(r.randint(1, 4)),
                                        "dialect": "eng_Latn", "ds": "2023-05-03"}),
    "tau/commonsense_qa": (["default"], ["train", "validation"],
                           lambda r, i: {"id": str(i), "question": sent(r) + "?",
                                         "question_concept": r.choice(WORDS),
                                         "choices": {"label": list("ABCDE"),
                                                     "text": [words(r, 2) for _ in range(5)]},
                                         "answerKey": r.choice("ABCDE")}),
    "lighteval/siqa": (["default"], ["train", "validation"],
                       lambda r, i: {"context": sent(r), "question": sent(r) + "?",
                                     "answerA": words(r, 3), "answerB": words(r, 3),
                                     "answerC": words(r, 3), "label": str(r.randint(1, 3))}),
    "mandarjoshi/trivia_qa": (["rc.nocontext"], ["train", "validation"],
                              lambda r, i: {"question": sent(r), "question_id": str(i),
                                            "answer": {"aliases": [str(r.randint(0, 99)),
                                                                   words(r, 2)],
                                                       "value": str(r.randint(0, 99))}}),
    "google-research-datasets/nq_open": (["default"], ["train", "validation"],
                                         lambda r, i: {"question": sent(r).lower()[:-1],
                                                       "answer": [str(r.randint(0, 99)),
                                                                  words(r, 2)]}),
    "nyu-mll/blimp": (["adjunct_island", "anaphor_gender_agreement", "wh_island"], ["train"],
                      lambda r, i: {"sentence_good": sent(r), "sentence_bad": sent(r),
                                    "field": "syntax", "linguistics_term": "island_effects",
                                    "UID": "x", "simple_LM_method": True,
                                    "one_prefix_method": False, "two_prefix_method": False,
                                    "lexically_identical": False, "pair_id": i}),
    "cimec/lambada": (["default"], ["validation", "test"], lambda r, i: {"text": sent(r, 15)[:-1],
                                                                         "domain": None}),
    "google-research-datasets/paws-x": (["en", "de", "fr"], ["train", "validation", "test"],
                                        lambda r, i: {"id": i, "sentence1": sent(r),
                                                      "sentence2": sent(r),
                                                      "label": r.randint(0, 1)}),
    "CogComp/mc_taco": (["default"], ["validation", "test"],
                        lambda r, i: {"sentence": sent(r), "question": sent(r) + "?",
                                      "answer": words(r, 2), "label": r.randint(0, 1),
                                      "category": "Event Duration"}),
    "community-datasets/qa4mre": (["2011.main.EN", "2012.main.EN", "2013.main.EN"], ["train"],
                                  lambda r, i: {"topic_id": "1", "topic_name": "x",
                                                "test_id": "1", "document_id": "1",
                                                "document_str": " " + sent(r, 20) + " ",
                                                "question_id": str(i), "question_str": sent(r),
                                                "answer_options": {"answer_id": list("12345"),
                                                                   "answer_str": [words(r, 2) for
                                                                                  _ in range(5)]},
                                                "correct_answer_id": str(r.randint(1, 5)),
                                                "correct_answer_str": ""}),
    "allenai/swag": (["regular"], ["train", "validation"],
                     lambda r, i: {"video-id": str(i), "fold-ind": str(i), "startphrase": sent(r),
                                   "sent1": sent(r), "sent2": words(r, 2), "gold-source": "gold",
                                   **{f"ending{k}": words(r, 4) for k in range(4)},
                                   "label": r.randint(0, 3)}),
    "EleutherAI/asdiv": (["default"], ["validation"],
                         lambda r, i: {"body": sent(r), "question": sent(r) + "?",
                                       "solution_type": "Addition",
                                       "answer": f"{r.randint(1, 99)} (apples)",
                                       "formula": "1+1"}),
    "EleutherAI/headqa": (["en", "es"], ["train", "validation", "test"],
                          lambda r, i: {"name": "x", "year": "2013", "category": "biology",
                                        "qid": i, "qtext": sent(r), "ra": r.randint(1, 4),
                                        "image": None, "answers": [{"aid": k, "atext": words(r, 3)}
                                                                   for k in range(1, 5)]}),
    "EleutherAI/hendrycks_ethics": (["commonsense", "deontology", "justice"], ["train", "test"],
                                    lambda r, i: {"label": r.randint(0, 1), "input": sent(r),
                                                  "is_short": True, "edited": False,
                                                  "scenario": sent(r), "excuse": sent(r),
                                                  "group_id": i // 4}),
    "EleutherAI/unscramble": (["mid_word_1_anagrams", "cycle_letters_in_word",
                               "reversed_words"], ["validation"],
                              lambda r, i: {"context": "Please unscramble the letters into a "
                                                       f"word: {r.choice(WORDS)[::-1]}\n Answer:",
                                            "completion": r.choice(WORDS)}),
    "cais/wmdp": (["wmdp-bio", "wmdp-chem", "wmdp-cyber"], ["test"],
                  lambda r, i: {"answer": r.randint(0, 3), "question": sent(r) + "?",
                                "choices": [words(r, 3) for _ in range(4)]}),
    "LSDSem/story_cloze": (["2016", "2018"], ["validation", "test"],
                           lambda r, i: {"story_id": str(i), **{f"input_sentence_{k}": sent(r)
                                         for k in range(1, 5)}, "sentence_quiz1": sent(r),
                                         "sentence_quiz2": sent(r),
                                         "answer_right_ending": r.randint(1, 2)}),
    "ceval/ceval-exam": (["accountant", "art_studies", "law"], ["dev", "val", "test"],
                         lambda r, i: {"id": i, **mc4_letters(r, i), "explanation": ""}),
    "haonan-li/cmmlu": (["agronomy", "anatomy", "virology"], ["dev", "test"],
                        lambda r, i: {"Question": sent(r), "A": words(r, 3), "B": words(r, 3),
                                      "C": words(r, 3), "D": words(r, 3),
                                      "Answer": r.choice("ABCD")}),
    "HAERAE-HUB/KMMLU": (["Accounting", "Biology", "Law"], ["train", "dev", "test"],
                         lambda r, i: {"question": sent(r), "answer": r.randint(1, 4),
                                       "A": words(r, 3), "B": words(r, 3), "C": words(r, 3),
                                       "D": words(r, 3), "Category": "x",
                                       "Human Accuracy": 0.5}),
    "juletxara/mgsm": (["en", "es", "fr"], ["train", "test"],
                       lambda r, i: {"question": sent(r) + "?", "answer": None if i % 2 else
                                     f"Step-by-Step Answer: {sent(r)} The answer is 7.",
                                     "answer_number": r.randint(0, 99),
                                     "equation_solution": None}),
    "EleutherAI/advanced_ai_risk": (["fewshot-coordinate-itself", "human-corrigible-more-HHH"],
                                    ["validation"],
                                    lambda r, i: {"question": sent(r) + "\n\nChoices:\n (A) Yes\n"
                                                  " (B) No", "answer_matching_behavior": " (A)",
                                                  "answer_not_matching_behavior": " (B)"}),
    "EleutherAI/persona": (["acts-like-it-wants-to-help-humans-but-does-not-care-about-that",
                            "agreeableness", "conscientiousness"], ["validation"],
                           lambda r, i: {"question": sent(r), "statement": sent(r),
                                         "label_confidence": 0.9,
                                         "answer_matching_behavior": " Yes",
                                         "answer_not_matching_behavior": " No"}),
    "Muennighoff/xwinograd": (["en", "fr", "jp", "pt", "ru", "zh"], ["test"],
                              lambda r, i: {"sentence": words(r, 5) + " _ " + words(r, 5) + ".",
                                            "option1": words(r, 1), "option2": words(r, 1),
                                            "answer": str(r.randint(1, 2))}),
    "cambridgeltl/xcopa": (["et", "ht", "id", "it", "qu", "sw", "ta", "th", "tr", "vi", "zh"],
                           ["validation", "test"],
                           lambda r, i: {"premise": sent(r), "choice1": sent(r),
                                         "choice2": sent(r), "question": r.choice(["cause",
                                                                                   "effect"]),
                                         "label": r.randint(0, 1), "idx": i, "changed": False}),
    "EleutherAI/race": (["high"], ["test"],
                        race_row),
    "regisss/math_qa": (["default"], ["train", "validation", "test"],
                        lambda r, i: {"Problem": sent(r), "Rationale": sent(r),
                                      "options": "a ) 1 , b ) 2 , c ) 3 , d ) 4 , e ) 5",
                                      "correct": r.choice("abcde"), "annotated_formula": "",
                                      "linear_formula": "", "category": "general"}),
    "stanfordnlp/web_questions": (["default"], ["train", "test"],
                                  lambda r, i: {"url": "", "question": sent(r).lower()[:-1] + "?",
                                                "answers": [words(r, 2), words(r, 1)]}),
    "bigbio/pubmed_qa": (["pubmed_qa_labeled_fold0_source"], ["train", "validation", "test"],
                         lambda r, i: {"QUESTION": sent(r) + "?", "CONTEXTS": [sent(r), sent(r)],
                                       "LABELS": ["A", "B"], "MESHES": [], "YEAR": "2000",
                                       "reasoning_required_pred": "yes",
                                       "reasoning_free_pred": "yes",
                                       "final_decision": r.choice(["yes", "no", "maybe"]),
                                       "LONG_ANSWER": sent(r)}),
    "HAERAE-HUB/HAE_RAE_BENCH": (["general_knowledge", "history", "loan_words"], ["test"],
                                 lambda r, i: {"query": sent(r) + "\n(A) x (B) y (C) z (D) w "
                                               "(E) v\n정답:", "answer": "(" + r.choice("ABCDE") + ")",
                                               "options": ""}),
    "openlifescienceai/medmcqa": (["default"], ["train", "validation"],
                                  lambda r, i: {"id": str(i), "question": sent(r) + "?",
                                                "opa": words(r, 2), "opb": words(r, 2),
                                                "opc": words(r, 2), "opd": words(r, 2),
                                                "cop": r.randint(0, 3), "choice_type": "single",
                                                "exp": sent(r), "subject_name": "Anatomy",
                                                "topic_name": None}),
    "GBaker/MedQA-USMLE-4-options-hf": (["default"], ["train", "validation", "test"],
                                        lambda r, i: {"id": str(i), "sent1": sent(r), "sent2": "",
                                                      **{f"ending{k}": words(r, 2)
                                                         for k in range(4)},
                                                      "label": r.randint(0, 3)}),
    "haryoaw/COPAL": (["id"], ["test", "test_colloquial"],
                      lambda r, i: {"premise": sent(r), "choice1": sent(r), "choice2": sent(r),
                                    "question": r.choice(["cause", "effect"]), "idx": i,
                                    "label": r.randint(0, 1), "terminology": 0, "culture": 0,
                                    "language": 0}),
    "skt/kobest_v1": (["boolq", "copa", "hellaswag", "sentineg", "wic"],
                      ["train", "validation", "test"],
                      lambda r, i: {"paragraph": sent(r), "question": r.choice(["원인", "결과"]),
                                    "premise": sent(r),
                                    "alternative_1": sent(r), "alternative_2": sent(r),
                                    "context": sent(r), **{f"ending_{k}": words(r, 3)
                                                          for k in range(1, 5)},
                                    "sentence": sent(r), "word": r.choice(WORDS),
                                    "context_1": sent(r), "context_2": sent(r),
                                    "label": r.randint(0, 1)}),
    "skg/toxigen-data": (["annotated"], ["train", "test"],
                         lambda r, i: {"text": sent(r), "target_group": "asian",
                                       "factual?": "neither factual nor opinion",
                                       "ingroup_effect": "doesn't use in-group language",
                                       "lewd": "doesn't contain lewd content",
                                       "framing": "disagreement", "predicted_group": "x",
                                       "stereotyping": "doesn't use positive stereotyping",
                                       "intent": 1.0, "toxicity_ai": r.uniform(1, 5),
                                       "toxicity_human": r.uniform(1, 5),
                                       "predicted_author": "human", "actual_method": "topk"}),
    "jannalu/crows_pairs_multilingual": (["english", "french"], ["test"],
                                         lambda r, i: {"sent_more": sent(r), "sent_less": sent(r),
                                                       "stereo_antistereo": "stereo",
                                                       "bias_type": CROWS_PAIRS_BIAS[i % 10]}),
    "EleutherAI/mutual": (["mutual", "mutual_plus"], ["train", "validation"],
                          lambda r, i: {"answers": r.choice("ABCD"),
                                        "options": ["m : " + sent(r) for _ in range(4)],
                                        "article": "f : " + sent(r) + " m : " + sent(r),
                                        "id": str(i)}),
    "google/xquad": (["xquad." + lang for lang in XQUAD_LANGS], ["validation"], xquad),
    "ltg/norquad": (["default"], ["train", "validation", "test"], norquad),
    "EleutherAI/coqa": (["default"], ["train", "validation"], coqa),
    "projecte-aina/xnli-ca": (["default"], ["validation", "test"], nli_pair),
    "gplsi/xnli_va": (["default"], ["test"], nli_pair),
    "projecte-aina/teca": (["default"], ["train", "validation", "test"], nli_pair),
    "projecte-aina/Parafraseja": (["default"], ["train", "validation", "test"], paraphrase_pair),
    "projecte-aina/PAWS-ca": (["default"], ["train", "validation", "test"], paraphrase_pair),
    "projecte-aina/COPA-ca": (["default"], ["train", "validation", "test"], copa_ca),
    "projecte-aina/catalanqa": (["default"], ["train", "validation", "test"], squad_list_answers),
    "projecte-aina/xquad-ca": (["default"], ["test"], squad_list_answers),
    "projecte-aina/CoQCat": (["default"], ["train", "validation", "test"], coqcat),
    "projecte-aina/caBreu": (["default"], ["train", "validation", "test"], cabreu),
    "xnli": (["es"], ["train", "validation", "test"], nli_pair),
    "paws-x": (["es"], ["train", "validation", "test"], paraphrase_pair),
    "BSC-LT/COPA-es": (["default"], ["validation", "test"], copa_ca),
    "csebuetnlp/xlsum": (["spanish"], ["train", "validation", "test"], spaced_summary),
    "proxectonos/parafrases_gl": (["default"], ["train", "validation", "test"], parafrases_gl),
    "proxectonos/PAWS-gl": (["default"], ["test"], paraphrase_pair),
    "proxectonos/xnli_gl": (["default"], ["test"], xnli_gl),
    "proxectonos/summarization_gl": (["default"], ["train", "validation", "test"], spaced_summary),
    "gplsi/cocoteros": (["default"], ["train", "test"], cocoteros),
    "gplsi/cocoteros_va": (["default"], ["test"], cocoteros),
    "gplsi/TerretaQA": (["default"], ["test"], terretaqa),
    "proxectonos/truthfulqa_gl": None,  # per-config schemas: truthfulqa_gl_* above
    "nyu-mll/glue": None,  # per-config schemas: glue() below
    "aps/super_glue": None,  # per-config schemas: super_glue() below
    "meta-llama/Llama-3.1-8B-Instruct-evals": None,  # per-language: llama3_mmlu_details() below
    "EleutherAI/drop": (["default"], ["train", "validation"], drop),
    "EleutherAI/hendrycks_math": (["algebra", "counting_and_probability", "geometry",
                                   "intermediate_algebra", "number_theory", "prealgebra",
                                   "precalculus"], ["train", "test"], hendrycks_math),
    "HuggingFaceH4/MATH-500": (["default"], ["test"], math500),
    "EleutherAI/lambada_multilingual_stablelm": (["de", "en", "fr"], ["test"],
                                                 lambda r, i: {"text": sent(r, 15)[:-1]}),
    "EleutherAI/lambada_openai": (["de", "fr"], ["test"], lambda r, i: {"text": sent(r, 15)[:-1]}),
    "alexandrainst/m_arc": (["de", "fr"], ["train", "validation", "test"],
                            lambda r, i: {"id": str(i), "instruction": sent(r) + " [title]?",
                                          **{f"option_{k}": words(r, 3) for k in "abcd"},
                                          "option_e": words(r, 2) if i % 3 == 0 else None,
                                          "answer": r.choice("ABCD")}),
    "alexandrainst/m_hellaswag": (["de", "fr"], ["val"],
                                  lambda r, i: {"ind": i, "activity_label": words(r, 2),
                                                "ctx_a": sent(r), "ctx_b": words(r, 3),
                                                "ctx": sent(r), "endings": [words(r, 4) + " [x]"
                                                                            for _ in range(4)],
                                                "source_id": "x", "split": "val",
                                                "split_type": "indomain",
                                                "label": str(r.randint(0, 3))}),
    "alexandrainst/m_mmlu": (["de", "fr"], ["train", "test"],
                             lambda r, i: {"id": str(i), "instruction": sent(r) + "?",
                                           **{f"option_{k}": words(r, 3) for k in "abcd"},
                                           "answer": r.choice("ABCD")}),
    "LumiOpen/arc_challenge_mt": (["da", "de", "fi"], ["train", "validation", "test"],
                                  lambda r, i: {"id": str(i), "question": sent(r) + "?",
                                                "choices": {"text": [words(r, 2) for _ in
                                                                     range(4)],
                                                            "label": list("ABCD")},
                                                "answerKey": r.choice("ABCD")}),
    "baber/logiqa2": (["logiqa2", "logieval"], ["train", "validation", "test"],
                      lambda r, i: {"id": i, "answer": r.randint(0, 3), "text": sent(r, 20),
                                    "type": {"x": True}, "question": sent(r) + "?",
                                    "options": [sent(r) for _ in range(4)],
                                    "content": sent(r, 20) + "\nA. x\nB. y\nC. z\nD. w",
                                    "ideal": r.choice("ABCD")}),
    "lighteval/winograd_wsc": (["wsc273"], ["test"], wsc),
    "qintongli/GSM-Plus": (["default"], ["test", "testmini"],
                           lambda r, i: {"question": sent(r) + "?",
                                         "solution": sent(r) + f" #### {r.randint(1, 999)}",
                                         "answer": str(r.randint(1, 999)),
                                         "perturbation_type": "numerical substitution",
                                         "seed_question": sent(r), "seed_solution": sent(r),
                                         "seed_answer": str(r.randint(1, 99))}),
    "allenai/paloma": (["c4_en", "gab", "m2d2_wikipedia_unsplit"], ["val", "test"],
                       lambda r, i: {"text": sent(r, 30), "id": str(i), "source": "x"}),
    "EleutherAI/pile": (["pile_arxiv", "pile_enron", "pile_github"], ["train", "validation",
                                                                     "test"],
                        lambda r, i: {"text": sent(r, 30), "meta": {"pile_set_name": "x"}}),
    "li-lab/MMLU-ProX": (["en", "de"], ["validation", "test"],
                         lambda r, i: {"question_id": i, "question": sent(r) + "?",
                                       **{f"option_{k}": (words(r, 2) if k < 6 + i % 5 else
                                                          "N/A") for k in range(10)},
                                       "answer": r.choice("ABCDEF"), "answer_index": 0,
                                       "cot_content": "A: Let's think step by step. "
                                       + sent(r) + " The answer is (A).",
                                       "category": r.choice(["biology", "law", "math"]),
                                       "src": "x"}),
    "ikala/tmmluplus": (["accounting", "geography_of_taiwan", "physics"], ["train",
                                                                           "validation", "test"],
                        lambda r, i: {"question": sent(r) + "?", "A": words(r, 2),
                                      "B": words(r, 2), "C": words(r, 2), "D": words(r, 2),
                                      "answer": r.choice("ABCD"), "subject_name": "x"}),
    "mrlbenchmarks/global-piqa-nonparallel": (["acm_arab", "deu_latn", "fra_latn"], ["test"],
                                              lambda r, i: {"prompt": sent(r),
                                                            "solution0": sent(r),
                                                            "solution1": sent(r),
                                                            "label": r.randint(0, 1)}),
    "oskarvanderwal/winogender": (["all", "gotcha"], ["test"],
                                  lambda r, i: {"sentid": str(i), "sentence": sent(r),
                                                "pronoun": r.choice(["he", "she", "they"]),
                                                "occupation": words(r, 1),
                                                "participant": words(r, 1),
                                                "gender": r.choice(["male", "female",
                                                                    "neutral"]),
                                                "target": words(r, 1),
                                                "label": r.randint(0, 1)}),
    "tyouisen/aclue": (["ancient_chinese_culture", "ancient_literature", "poetry_appreciate"],
                       ["dev", "test"],
                       lambda r, i: {"Question": sent(r) + "?", "A": words(r, 2),
                                     "B": words(r, 2), "C": words(r, 2), "D": words(r, 2),
                                     "Answer": r.choice("ABCD")}),
    "AYueksel/TurkishMMLU": (["Biology", "History", "Physics"], ["dev", "test"],
                             lambda r, i: {"question": " " + sent(r) + "? ",
                                           "choices": [words(r, 2) for _ in range(5)],
                                           "answer": r.choice("ABCDE") + " ",
                                           "explanation": sent(r), "difficulty": 3,
                                           "subject": "x"}),
    "ofir408/MedConceptsQA": (["atc_easy", "icd10cm_hard", "icd9proc_medium"], ["dev", "test"],
                              lambda r, i: {"question_id": i, "answer": words(r, 2),
                                            "answer_id": r.choice("ABCD"),
                                            **{f"option{k}": words(r, 2) for k in range(1, 5)},
                                            "question": sent(r) + "?\nA. x\nB. y\nC. z\nD. w",
                                            "vocab": "ATC", "level": "easy"}),
    "CohereForAI/Global-MMLU": (["en", "pl"], ["dev", "test"], global_mmlu),
    "CohereForAI/Global-MMLU-Lite": (["it", "pt"], ["dev", "test"], global_mmlu),
    "CohereLabs/Global-MMLU-Lite": (["de", "en"], ["dev", "test"], global_mmlu),
    "openai/MMMLU": (["DE_DE", "FR_FR"], ["test"],
                     lambda r, i: {"Unnamed: 0": i, "Question": sent(r) + "? ",
                                   "A": words(r, 2), "B": words(r, 2), "C": words(r, 2),
                                   "D": words(r, 2), "Answer": r.choice("ABCD"),
                                   "Subject": r.choice(GMMLU_SUBJECTS[:3])
                                   + ("_test.csv_de-DE.csv" if i % 4 == 0 else "")}),
    "hails/bigbench": (["abstract_narrative_understanding_zero_shot", "anachronisms_zero_shot",
                        "arithmetic_zero_shot"], ["default", "train", "validation"], bigbench),
    "CohereForAI/include-base-44": (["Albanian", "Dutch"], ["validation", "test"],
                                    lambda r, i: {"language": "x", "country": "x",
                                                  "domain": INCLUDE_DOMAINS[i % 6],
                                                  "subject": "x", "regional_feature": "x",
                                                  "level": "x", "question": " " + sent(r) + "?",
                                                  **{f"option_{k}": words(r, 2) for k in "abcd"},
                                                  "answer": r.randint(0, 3)}),
    "HiTZ/EusExams": (["es_ejadministrativo", "eu_opeehuadmineu"], ["test"],
                      lambda r, i: {"id": i, "question": sent(r) + "?",
                                    "candidates": ["", "", "", ""] if i % 7 == 3 else
                                    [words(r, 2) for _ in range(4)],
                                    "answer": 4 if i % 9 == 5 else r.randint(0, 3),
                                    "link": ""}),
    "facebook/mlqa": (["mlqa.en.en", "mlqa.de.de", "mlqa.zh.zh"], ["validation", "test"],
                      lambda r, i: {"context": sent(r, 20), "question": sent(r) + "?",
                                    "answers": {"answer_start": [3],
                                                "text": [words(r, 2)]}, "id": str(i)}),
    "google/IFEval": (["default"], ["train"], ifeval),
    "fxmarty/mmlu-redux-2.0-ok": (["abstract_algebra", "anatomy", "virology"], ["test"],
                                  lambda r, i: {"question": " " + sent(r) + "?",
                                                "choices": [words(r, 2) for _ in range(4)],
                                                "answer": r.randint(0, 3), "error_type": "ok",
                                                "source": "x", "correct_answer": None,
                                                "potential_reason": None}),
    "HiTZ/BertaQA": (["en", "eu"], ["test"],
                     lambda r, i: {"id": i, "category": "x", "group": "local",
                                   "difficulty": r.randint(1, 3), "question": sent(r) + "?",
                                   "candidates": [words(r, 2) for _ in range(3)],
                                   "answer": r.randint(0, 2)}),
    "sean0042/KorMedMCQA": (["dentist", "doctor"], ["fewshot", "test"],
                            lambda r, i: {"subject": "doctor", "year": 2023, "period": 1,
                                          "q_number": i, "question": sent(r) + "?",
                                          **{k: words(r, 2) for k in "ABCDE"},
                                          "answer": r.randint(1, 5), "cot": sent(r),
                                          "exp": ""}),
    "dascim/GreekMMLU": (["Accounting", "Biology"], ["dev", "test"],
                         lambda r, i: {"question": sent(r) + "?",
                                       "choices": [words(r, 2) for _ in range(3 + i % 2)],
                                       "answer": r.randint(0, 2), "subject": "Biology",
                                       "level": "x", "type": "x"}),
    # Python-class tasks (squadv2's SQuAD2 reads lighteval/squad_v2; squad_completion, fda and swde
    # the hazyresearch "based" sets): an answer span of the context, or none (SQuAD 2 unanswerable).
    "lighteval/squad_v2": (["default"], ["train", "validation"], squad_v2),
    "hazyresearch/based-squad": (["default"], ["validation"], based_completion),
    "hazyresearch/based-fda": (["default"], ["validation"], based_completion),
    "hazyresearch/based-swde-v2": (["default"], ["validation"], based_completion),
    "openai/openai_humaneval": (["default"], ["test"], humaneval),
    "evalplus/humanevalplus": (["default"], ["test"], humaneval),
    "google-research-datasets/mbpp": (["full"], ["train", "test", "validation", "prompt"], mbpp),
    "evalplus/mbppplus": (["default"], ["test"], mbppplus),
}
# AGIEval: the choice tasks' rows ({query, choices, gold list}; jec-qa rows may have two golds)
# and the cloze tasks' ({query, answer}), answers in the forms its parse_math_answer reads.
AGIEVAL_MCQA = ["aqua-rat", "logiqa-en", "lsat-ar", "lsat-lr", "sat-math", "gaokao-biology",
                "gaokao-chemistry", "gaokao-chinese", "gaokao-english", "gaokao-geography",
                "gaokao-history", "gaokao-mathqa", "gaokao-physics", "jec-qa-ca", "jec-qa-kd",
                "logiqa-zh", "lsat-rc", "sat-en", "sat-en-without-passage"]
AGIEVAL_ANSWERS = ["7", "\\frac{1}{2}", "x = 3", "$5$", "\\boxed{12}", "0.5", "42", "\\sqrt{2}",
                   "1/2", "90^\\circ"]


def agieval_mcqa(name):
    def row(r, i):
        d = {"query": sent(r) + " Answer Choices: (A)x (B)y",
             "choices": ["(A)" + words(r, 2), "(B)" + words(r, 2), "(C)" + words(r, 2),
                         "(D)" + words(r, 2)],
             "gold": [r.randint(0, 3)]}
        if name.startswith("jec-qa") and i % 3 == 1:
            d["gold"] = sorted({d["gold"][0], (d["gold"][0] + 1) % 4})
        return d
    return row


def agieval_cloze(r, i):
    return {"query": "Q: " + sent(r) + " $x+1$?\nA: The answer is",
            "answer": AGIEVAL_ANSWERS[i % len(AGIEVAL_ANSWERS)] if i % 5 else str(r.randint(0, 99))}


GMMLU_SUBJECTS = ["abstract_algebra", "anatomy", "formal_logic", "high_school_physics",
                  "marketing", "professional_law"]
# The domains of include-base-44's Albanian and Dutch tasks (each task filters on one).
INCLUDE_DOMAINS = ["Applied Science", "Arts & Humanities", "Business & Commerce",
                   "Health oriented education", "STEM", "Social Science"]
# Every bias type, so that each crows_pairs_* subset filter keeps rows.
CROWS_PAIRS_BIAS = ["race-color", "gender", "age", "religion", "socioeconomic", "disability",
                    "nationality", "sexual-orientation", "physical-appearance", "autre"]
GLUE_CONFIGS = ["cola", "mnli", "mrpc", "qnli", "qqp", "rte", "sst2", "wnli"]
# aps/super_glue's boolq and wsc.fixed are in ../shared/hf_data; these are the others.
SUPER_GLUE_CONFIGS = ["cb", "copa", "multirc", "record", "rte", "wic"]


LLAMA3_EVALS = "meta-llama/Llama-3.1-8B-Instruct-evals"
LLAMA3_MMLU_LANGS = ["de", "es", "fr", "hi", "it", "pt", "th"]


def write(out, path, cfg, split, rows):
    d = os.path.join(out, path, cfg)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, split + ".jsonl"), "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


for _name in AGIEVAL_MCQA:
    DATASETS["hails/agieval-" + _name] = (["default"], ["test"], agieval_mcqa(_name))
for _name in ["gaokao-mathcloze", "math"]:
    DATASETS["hails/agieval-" + _name] = (["default"], ["test"], agieval_cloze)


def main():
    out = sys.argv[1]
    n = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--rows" else 25
    for path, spec in sorted(DATASETS.items()):
        if path == "nyu-mll/glue":
            for cfg in GLUE_CONFIGS:
                splits = ["train", "validation", "validation_matched", "validation_mismatched"] \
                    if cfg == "mnli" else ["train", "validation"]
                for split in splits:
                    r = random.Random(f"{path}/{cfg}/{split}")
                    write(out, path, cfg, split, [glue(cfg)(r, i) for i in range(n)])
            continue
        if path == "aps/super_glue":
            for cfg in SUPER_GLUE_CONFIGS:
                for split in ["train", "validation"]:
                    r = random.Random(f"{path}/{cfg}/{split}")
                    write(out, path, cfg, split, [super_glue(cfg)(r, i) for i in range(n)])
            continue
        if path == "proxectonos/truthfulqa_gl":
            for cfg, row in (("multiple_choice", truthfulqa_gl_mc), ("generation", truthfulqa_gl_gen)):
                r = random.Random(f"{path}/{cfg}/validation")
                write(out, path, cfg, "validation", [row(r, i) for i in range(n)])
            continue
        if path == LLAMA3_EVALS:
            for lang in LLAMA3_MMLU_LANGS:
                cfg = f"Llama-3.1-8B-Instruct-evals__multilingual_mmlu_{lang}__details"
                r = random.Random(f"{path}/{cfg}/latest")
                write(out, path, cfg, "latest", [llama3_mmlu_details(lang)(r, i) for i in range(n)])
            continue
        configs, splits, row = spec
        for cfg in configs:
            for split in splits:
                r = random.Random(f"{path}/{cfg}/{split}")
                write(out, path, cfg, split, [row(r, i) for i in range(n)])


if __name__ == "__main__":
    main()
