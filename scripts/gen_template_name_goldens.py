#!/usr/bin/env python3
"""Goldens for non-ASCII names in lm-eval's Jinja engine: jinja2 takes a name as a run of
jinja2/_identifier.py's characters (Python's \\w plus the rest of XID_Continue) and rejects a run
that is no Python identifier. Task YAMLs of the reference use such names
(`{{Instrucción}}`, `{{0 if Avaliación == 0 else 1}}`).

Writes tests/template/goldens/template_name_goldens.jsonl in template_goldens.jsonl's format
(render_case of scripts/gen_template_goldens.py, the reference's task environment).

Usage: VENV/bin/python scripts/gen_template_name_goldens.py   (VENV with jinja2)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_template_goldens import render_case  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                   "template", "goldens", "template_name_goldens.jsonl")

VARS = {"Avaliación": 0, "Instrucción": "Traduce", "número_1": 7, "日本": "Tokio",
        "naïve·x": "dot", "℘": "weier", "x": {"Instrucción": "attr"}, "Ñandú": [1, 2],
        "ǅemal": "title", "x̃": "mark"}

CASES = [
    "{{0 if Avaliación == 0 else 1}}",
    "{{Instrucción}}: {{ número_1 }}",
    "{{ 日本 }}|{{ naïve·x }}|{{ ℘ }}|{{ ǅemal }}|{{ x̃ }}",
    "{{ x.Instrucción }}|{{ Ñandú|length }}|{{ Ñandú[1] }}",
    "{% for í in Ñandú %}{{ í }}{% endfor %}",
    "{% set café = 'c' %}{{ café }}",
    # errors: a non-name character, a \w run that is no identifier
    "{{ a€b }}",
    "{{ ١٢ }}",
    "{{ x\u2e2f }}",
    "{{ Instrucción\u00a0}}",
    "line one\n{{ ok }}{{ b\u00a7 }}",
]


def main():
    with open(OUT, "w", encoding="utf-8") as f:
        for i, tpl in enumerate(CASES):
            case = {"kind": "render", "id": f"names:task:{i}", "env": "task", "template": tpl,
                    "vars": VARS}
            case.update(render_case("task", tpl, VARS))
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(OUT)


if __name__ == "__main__":
    main()
