#!/usr/bin/env python3
"""Goldens for jinja2's built-in filters and tests as the reference's task environment has them
(lm_eval/utils.py: Environment(loader=BaseLoader, undefined=StrictUndefined,
keep_trailing_newline=True) + regex_replace): jinja2's own tables jinja2.filters.FILTERS and
jinja2.tests.TESTS, and renderings of the filters added for issue 31 and of literal rules
(non-string dict keys, tuples, sets). Output: tests/template/goldens/jinja_builtins.json.
Usage: <venv with jinja2>/bin/python scripts/gen_jinja_builtin_goldens.py
"""
import json
import os

import jinja2
import jinja2.filters
import jinja2.tests
from jinja2 import BaseLoader, Environment, StrictUndefined

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "template", "goldens",
                   "jinja_builtins.json")
env = Environment(loader=BaseLoader, undefined=StrictUndefined, keep_trailing_newline=True)
CASES = [
    ("{{ 'foo bar baz qux'|truncate(9) }}", {}),
    ("{{ 'foo bar baz qux'|truncate(9, True) }}", {}),
    ("{{ 'foo bar baz qux'|truncate(11) }}", {}),
    ("{{ 'foo bar baz qux'|truncate(11, False, '...', 0) }}", {}),
    ("{{ s|truncate(5) }}|{{ s|truncate(20) }}|{{ s|truncate(10, end='…') }}", {"s": "héllo wörld, ça va très bien"}),
    ("{{ s|truncate(length=12, killwords=true, leeway=0) }}", {"s": "abcdefghijklmnopqrstuvwxyz"}),
    ("{{ 'nospaceshere_at_all_long'|truncate(10, leeway=0) }}", {}),
    ("{{ 1|filesizeformat }}|{{ 0|filesizeformat }}|{{ 999|filesizeformat }}|{{ 1000|filesizeformat }}", {}),
    ("{{ 123456789|filesizeformat }}|{{ 123456789|filesizeformat(true) }}|{{ '2048'|filesizeformat(binary=true) }}", {}),
    ("{{ 1e30|filesizeformat }}|{{ 1.5|filesizeformat }}|{{ 1023.9|filesizeformat(true) }}", {}),
    ("{{ s|striptags }}", {"s": "<p>Main &raquo;\t<em>About</em></p>  <!-- c --> x &amp; y &lt;z&gt;"}),
    ("{{ s|striptags }}", {"s": "  a <b>bold</b>\n\n line <br/>end <unclosed"}),
    ("{{ {1: 'a', True: 'b', None: 'c', 2.5: 'd'} }}", {}),
    ("{{ {1: 'one'}[1] }}", {}),
    ("{{ (1, 'a') }}|{{ (1,) }}|{{ () }}", {}),
    ("{{ [1, 2, 3, 4, 5]|batch(2)|list }}|{{ 'abcde'|batch(3, 'x')|list }}", {}),
    ("{{ [1, 2, 3, 4, 5]|slice(3)|list }}|{{ [1, 2, 3, 4]|slice(3, 0)|list }}", {}),
    ("{% for row in [1, 2, 3]|batch(2) %}{{ row|join(',') }};{% endfor %}", {}),
]
cases = []
for template, vars_ in CASES:
    c = {"template": template, "vars": vars_}
    try:
        c["expected"] = env.from_string(template).render(**vars_)
    except Exception as e:
        c["error"] = f"{type(e).__name__}: {e}"
    cases.append(c)
with open(OUT, "w") as f:
    json.dump({"jinja2": jinja2.__version__, "filters": sorted(jinja2.filters.FILTERS),
               "tests": sorted(jinja2.tests.TESTS), "cases": cases}, f, indent=1, ensure_ascii=False)
    f.write("\n")
for c in cases:
    print(c["template"], "->", c.get("expected", c.get("error")))
