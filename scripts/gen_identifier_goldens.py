#!/usr/bin/env python3
"""CPython's identifier and word-character classes, for lmeval::unicode's py_is_id_start,
py_is_id_continue and py_is_word_char (tests/core/unicode_test.cpp).

Writes tests/core/goldens/py_identifier_ranges.json: the non-ASCII code-point ranges [first, last]
where chr(c).isidentifier() ("start"), ("a" + chr(c)).isidentifier() ("continue") and
chr(c).isalnum() ("word", re's \\w for a str pattern) hold, with the Unicode version of the
Python that made them (it must match PCRE2's tables that lm-eval uses: Unicode 14 for CPython
3.11 and Debian 12's PCRE2 10.42).

Usage: python3 scripts/gen_identifier_goldens.py
"""
import json
import os
import sys
import unicodedata

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "core",
                   "goldens", "py_identifier_ranges.json")


def ranges(pred):
    out = []
    for c in range(0x80, 0x110000):
        if 0xD800 <= c <= 0xDFFF or not pred(chr(c)):
            continue
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def main():
    data = {
        "python": sys.version.split()[0],
        "unicode": unicodedata.unidata_version,
        "start": ranges(lambda ch: ch.isidentifier()),
        "continue": ranges(lambda ch: ("a" + ch).isidentifier()),
        "word": ranges(lambda ch: ch.isalnum()),
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(data, f, separators=(",", ":"))
        f.write("\n")
    print(OUT, {k: len(v) for k, v in data.items() if isinstance(v, list)})


if __name__ == "__main__":
    main()
