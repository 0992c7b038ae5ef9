#!/usr/bin/env python3
"""Goldens for jinja2's built-in filters and tests as the reference's task environment has them
(lm_eval/utils.py: Environment(loader=BaseLoader, undefined=StrictUndefined,
keep_trailing_newline=True) + regex_replace): jinja2's own tables jinja2.filters.FILTERS and
jinja2.tests.TESTS, and renderings of the filters added for issue 31 and of literal rules
(non-string dict keys, tuples, sets), tuples inside lists and dicts. Each case renders after
random.seed(0) (the `random` filter draws from Python's global generator; the test gives each
rendering a fresh random.Random(0)). Output: tests/template/goldens/jinja_builtins.json.
Usage: <venv with jinja2>/bin/python scripts/gen_jinja_builtin_goldens.py
"""
import json
import os
import random

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
LOREM = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
         "incididunt ut labore et dolore magna aliqua.")
WRAP_TEXTS = [
    LOREM,
    "a well-known long-term state-of-the-art approach to co-operation",
    "supercalifragilisticexpialidocious is a very long word indeed",
    "Look, goof-ball -- use the -b option!",
    "word--word--word another--thing x---y -- --lead trail--",
    "a  b   c    d     e      f",
    "   leading spaces and trailing   ",
    "line one is long enough\n\nline two\r\nthree\x0bfour\u2028five",
    "a\tb\tc tab\ttext with\ttabs\t\there",
    "héllo wörld ça va très bien naïve café déjà-vu",
    "日本語のテキストです 長い文章を折り返す",
    "ideographic\u3000space and\u00a0no-break space here",
    "1-2-3-4-5 a-b-c-d ab-cd-ef 12-ab x-1",
    "foo-bar@example.com http://example.com/a-b-c-d-e-f",
    "--leading dashes ---- and -- x - y",
    "",
    "\n\n",
    "end with newline\n",
    "hyphen-at-the-very-end-",
    "a-b",
    "well—em dash – en dash",
]
for text in WRAP_TEXTS:
    for args in ["", "(10)", "(5)", "(1)", "(8, false)", "(8, true, '|')", "(6, true, none, false)",
                 "(12, break_on_hyphens=false)", "(7, false, break_on_hyphens=false)",
                 "(9, wrapstring='<br>')", "(4, true, none, 1)"]:
        CASES.append(("{{ s|wordwrap%s }}" % args, {"s": text}))
# Random texts of words, hyphens, em-dashes, punctuation and whitespace (fixed seed) at random
# widths: textwrap's chunk regex decides where lines break.
_rng = random.Random(31)
_PIECES = ["a", "ab", "abc", "word", "long-word", "x-y-z", "--", "---", "-", "é", "ça", "12",
           "1-2", "co-op", "re-", "-ish", "end.", "(paren)", '"q"', "supercalifragilistic",
           "naïve—café", "日本", " ", "  ", "\t", "\n", "\u00a0", ",", "!", "a--b", "--x"]
for _ in range(150):
    text = "".join(_rng.choice(_PIECES) + (" " if _rng.random() < 0.6 else "")
                   for _ in range(_rng.randint(1, 14)))
    width = _rng.randint(1, 16)
    flags = _rng.choice(["", ", false", ", true, none, false", ", false, none, false"])
    CASES.append(("{{ s|wordwrap(%d%s) }}" % (width, flags), {"s": text}))
CASES += [
    ("{{ s|wordwrap(0) }}", {"s": "abc"}),
    ("{{ s|wordwrap(0) }}", {"s": ""}),
    ("{{ 12345|wordwrap }}", {}),
    ("{{ s|wordwrap(width=3) }}", {"s": "ab cd ef gh"}),
]
URL_TEXTS = [
    "Visit http://example.com, or www.example.org. (see https://x.y/z?a=1&b=2)",
    "me@example.com mailto:me@example.com @a@b a@b x@y.co.uk www.a@b.com c:d@e.com",
    "http://192.168.0.1:8080/path http://[::1]/ http://[2001:db8::1]:80 http://1.2.3/",
    "(http://example.com/foo_(bar)) <http://example.com> [http://e.com]",
    "example.com foo.net bar.io www.x sub.domain.org/path?q#frag a.info:99 HTTP://UP.COM",
    'He said "hi" & left http://a.com/?q="x"&y=<z>',
    "ftp://files.example.com/x ssh://host irc: tel:+123 ftp://",
    "trailing punctuation http://example.com/x..., http://example.com/y)).",
    "xn--bcher-kva.example http://xn--bcher-kva.xn--p1ai/ www.xn--p1ai",
    "multi\n\nline http://a.com\nwww.b.com\ttab",
    "unicode http://例え.jp/パス www.müller.de ünï@cödé.de",
    "",
]
for text in URL_TEXTS:
    for args in ["", "(10)", "(trim_url_limit=5, nofollow=true)", "(none, false, '_blank')",
                 "(rel='ugc  noopener external')", "(extra_schemes=['ftp://', 'tel:'])",
                 "(3, true, '_self', 'me', ['ssh://'])", "(-3)", "(0)"]:
        CASES.append(("{{ s|urlize%s }}" % args, {"s": text}))
# Random words of URL parts, brackets and punctuation (fixed seed).
_URL_PIECES = ["http://", "https://", "www.", "ftp://", "mailto:", "example", ".com", ".org",
               ".io", ".xn--p1ai", "a@b", "@", "user@host.net", "/", "path", "?q=1", "&x=2", "#f",
               ":8080", "(", ")", "<", ">", ".", ",", "\n", "192.168.1.1", "[::1]", "é", "-", "_",
               "%20", '"', "'", " ", "  ", "\t"]
for _ in range(120):
    text = "".join(_rng.choice(_URL_PIECES) for _ in range(_rng.randint(1, 12)))
    args = _rng.choice(["", "(6)", "(none, true)", "(extra_schemes=['ftp://'])", "(4, true, '_t')"])
    CASES.append(("{{ s|urlize%s }}" % args, {"s": text}))
CASES += [
    ("{{ s|urlize(extra_schemes=['bad']) }}", {"s": "x"}),
    ("{{ s|urlize(extra_schemes=['a:']) }}", {"s": "x"}),
    ("{{ 5|urlize }}|{{ none|urlize }}|{{ [1, 'http://a.com']|urlize }}", {}),
    ("{{ {'class': 'my list', 'missing': none, 'id': 'list-42', 'data': '<\"&\'>'}|xmlattr }}", {}),
    ("{{ {'a': 1, 'b': 2.5, 'l': [1, 'x'], 'c': true, 't': (1, 2)}|xmlattr(false) }}", {}),
    ("<ul{{ d|xmlattr }}>|<ul{{ {}|xmlattr }}>|{{ {'x': none}|xmlattr }}|", {"d": {"k": "v", "n": None}}),
    ("{{ {'a': nope, 'b': 1}|xmlattr }}", {}),
    ("{{ {'a b': 1}|xmlattr }}", {}),
    ("{{ {'a/b': 1}|xmlattr }}", {}),
    ("{{ {'a>': 1}|xmlattr }}", {}),
    ("{{ {'a=b': 1}|xmlattr }}", {}),
    ("{{ {'a\tb': 1}|xmlattr }}", {}),
    ("{{ {'data-ü': 'é', 'aria-x': 'y'}|xmlattr(autospace=false) }}", {}),
    ("{{ {1: 'a'}|xmlattr }}", {}),
    ("{{ 'abc'|xmlattr }}", {}),
    ("{{ s|urlencode }}", {"s": "a b/c?d=é&f+g~h_i.j-k%"}),
    ("{{ {'a b': 'c/d', 'e': 1, 'f': none, 'g': 'é'}|urlencode }}", {}),
    ("{{ [('a', 1), ('b', 'x y'), ('c/d', [1, 2])]|urlencode }}", {}),
    ("{{ 42|urlencode }}|{{ none|urlencode }}|{{ 1.5|urlencode }}|{{ true|urlencode }}", {}),
    ("{{ ['ab', 'cd']|urlencode }}|{{ [['k', (1, 'x')]]|urlencode }}", {}),
    ("{{ [('a', 1, 2)]|urlencode }}", {}),
    ("{{ ['a']|urlencode }}", {}),
    ("{{ {1: 2, none: true}|urlencode }}", {}),
    ("{{ d|urlencode }}", {"d": {"q": "lm eval & co", "page": 2}}),
    ("{{ ''|urlencode }}|{{ []|urlencode }}|{{ {}|urlencode }}", {}),
    ("{{ nope|urlencode }}", {}),
]
USERS = [
    {"name": "ann", "city": "NY", "age": 30, "address": {"city": "b"}},
    {"name": "bob", "city": "CA", "age": 25, "address": {"city": "a"}},
    {"name": "cid", "city": "ca", "age": 30, "address": {"city": "A"}},
    {"name": "dee", "age": 41, "address": {"city": "b"}},
    {"name": "eve", "city": "NY", "age": 25, "address": {"city": "c"}},
]
CASES += [
    ("{% for city, items in users|groupby('city', default='NY') %}{{ city }}: "
     "{{ items|map(attribute='name')|join(', ') }};{% endfor %}", {"users": USERS}),
    ("{% for g in users|groupby('city', 'zz', true) %}{{ g.grouper }}={{ g.list|length }} "
     "{{ g[0] }};{% endfor %}", {"users": USERS}),
    ("{% for g in users|groupby('address.city') %}{{ g.grouper }}:{{ g.list|map(attribute='name')|list }};"
     "{% endfor %}", {"users": USERS}),
    ("{% for g in users|groupby('address.city', case_sensitive=true) %}{{ g.grouper }}:"
     "{{ g.list|map(attribute='name')|join }};{% endfor %}", {"users": USERS}),
    ("{% for age, us in users|groupby('age') %}{{ age }}:{{ us|length }};{% endfor %}", {"users": USERS}),
    ("{{ users[:3]|groupby('city') }}", {"users": USERS}),
    ("{{ [[1, 'a'], [2, 'b'], [1, 'c']]|groupby(0) }}|{{ [[1, 'a'], [2, 'b']]|groupby('1') }}", {}),
    ("{{ ['b', 'A', 'a', 'B']|groupby(0) }}", {}),
    ("{{ (users|groupby('age'))[0].list|length }}|{{ (users|groupby('age')|first).grouper }}|"
     "{{ users|groupby('age')|length }}|{{ (users|groupby('age')|last)|string }}", {"users": USERS}),
    ("{{ [{'k': 1}, {'k': 2}]|groupby('k')|tojson }}|{{ []|groupby('k') }}", {}),
    ("{{ users|groupby('city') }}", {"users": USERS}),
    ("{{ users|groupby('nope') }}", {"users": USERS[:1]}),
    ("{{ [{'k': 1}, {'k': 'a'}]|groupby('k') }}", {}),
    ("{{ ([{'k': 1}]|groupby('k'))[0] == (1, [{'k': 1}]) }}", {}),
    ("{{ [1, 2, 3, 4, 5]|random }}|{{ 'abcdefghij'|random }}|{{ range(1000)|random }}", {}),
    ("{% for i in range(8) %}{{ 'abcdefghijklmnopqrstuvwxyz'|random }}{% endfor %}", {}),
    ("{% for i in range(5) %}{{ choices|random }} {% endfor %}", {"choices": ["A", "B", "C", "D"]}),
    ("{{ [(1, 2), (3, 4)]|random }}", {}),
    ("{{ []|random }}", {}),
    ("{{ ''|random }}", {}),
    ("{{ {'a': 1}|random }}", {}),
    ("{{ {0: 'x', 1: 'y'}|random }}", {}),
    ("{{ 5|random }}", {}),
    # tuples inside lists and dicts print as Python prints them
    ("{{ [(1, 2)] }}|{{ [(1, 2), [3, 4], (5,)] }}|{{ [[(1, 2)]] }}|{{ [((1, 2), 3)] }}", {}),
    ("{{ {'a': (1, 2), 'b': [(3, 'x')], 'c': {'d': ()}} }}|{{ ((1, [2, (3, 4)]),) }}", {}),
    ("{{ [(1, 2)]|string }}|{{ [(1, 2)]|pprint }}|{{ [(1, 2)]|tojson }}|{{ {'a': (1,)}|tojson }}", {}),
    ("{{ [(1, 2)] == [[1, 2]] }}|{{ [(1, 2)] == [(1, 2)] }}|{{ {'a': (1,)} == {'a': [1]} }}", {}),
    ("{% set x = [(1, 2), (3, 4)] %}{{ x[0] }}|{{ x[1:] }}|{{ x|first }}|{{ x|last }}|"
     "{{ x|reverse|list }}|{{ x + [(5, 6)] }}|{{ x|list }}|{{ x|sort(reverse=true) }}", {}),
    ("{{ {'a': 1, 'b': (2, 3)}.items()|list }}|{{ {'a': (1, 2)}|dictsort }}|{{ {'a': (1, 2)}.values()|list }}", {}),
    ("{% for a, b in [(1, (2, 3)), (4, [5])] %}{{ a }}:{{ b }};{% endfor %}", {}),
    ("{{ [(2, 1), (1, 2)]|sort }}|{{ [(1, 2), (1, 2)]|unique|list }}|{{ [(1, 2), [3]]|map('first')|list }}", {}),
    ("{% set ns = namespace(t=[(1, 2)]) %}{{ ns.t }}|{{ [[1, (2,)]]|join(',') }}", {}),
    ("{{ '%s|%s'|format([(1, 2)], {'k': (3,)}) }}|{{ [(1, 2)]|batch(1)|list }}", {}),
    ("{{ {'a': (1, 2), 'a': [3]} }}|{{ {'a': [3], 'a': (1, 2)} }}|{{ {1: (1,), 1.0: (2,)} }}", {}),
    ("{{ [{'a': (1, 2)}]|map(attribute='a')|list }}|{{ dict(a=(1, 2)) }}|{{ [(1, 2)] * 2 }}", {}),
    ("{{ (1, 2) in [(1, 2)] }}|{{ [1, 2] in [(1, 2)] }}|{{ [(1, 2)]|join }}|{{ [[(1, 2)]]|sum(start=[]) }}", {}),
    ("{% set x = {'k': [(1, 2)]} %}{{ x.k }}|{{ x['k'][0] }}|{{ x.get('k') }}|{{ [(1, 2), (0, 5)]|min }}", {}),
    ("{% for x in [(1, 2)] %}{{ loop.cycle((1,), [2]) }}{{ x }}{% endfor %}|{{ [(1, 2)]|batch(2, (0,))|list }}|"
     "{{ [(1, 2), (3,)]|slice(2)|list }}", {}),
    ("{{ [(1, 2)]|selectattr('0')|list }}|{{ [(1, none)]|items|list if false else [(1, 2)]|select|list }}", {}),
]
cases = []
for template, vars_ in CASES:
    c = {"template": template, "vars": vars_}
    try:
        random.seed(0)
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
