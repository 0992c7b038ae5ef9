#!/usr/bin/env python3
"""Goldens for `k=v` flags from the reference's own parsers (lm_eval 0.4.13): split_top_level and
MergeDictAction (key_val_to_dict + handle_cli_value_string) as `--model_args`, `--gen_kwargs`,
`--metadata` etc. parse them, and utils.simple_parse_args_string (the config / evaluator form).
Output: tests/config/goldens/kv_flags.json; each value is json.dumps(result, default=str) or the
error the reference gives. Usage: <venv with lm_eval 0.4.13>/bin/python scripts/gen_kv_flag_goldens.py
"""
import argparse
import json
import logging
import os

from lm_eval._cli.utils import MergeDictAction, split_top_level
from lm_eval.utils import simple_parse_args_string

logging.disable(logging.WARNING)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "config", "goldens",
                   "kv_flags.json")

FLAG_VALUES = [
    ['until=["Question:","</s>"],max_gen_toks=128'],
    ["max_seq_lengths=[64]", "foo=bar"],
    ["pretrained=gpt2,dtype=float32", "max_length=128"],
    ["a=1,b=x=y,c=True"],
    ["a=(1,2),b={'k': [1, 2]},c=2.5"],
    ["temperature=0,do_sample=false,top_p=0.9"],
    ["until=['\\n\\n', 'Q:'],x=1"],
    ["a='x,y',b=\"p,q\",c=3"],
    ["a=[1,2,,b=3"],
    ["a=1,,b=2,"],
    [",a=1"],
    ["a=1e3,b=inf,c=-5,d=007,e=None,f=none"],
    ["a=1", "a=2,b=3"],
    ['{"pretrained":"gpt2","x":1}', "y=2"],
    ["k=v=w,empty="],
    ["a=[1, 2], b=3"],
    ["x=]],y=1"],
    ["path=/a/b,c=d"],
    ["a=\"unclosed,b=2"],
    ["a={'x': 1, 'y': (2, 3)}"],
    ["pretrained"],
    ["a=1,bad"],
]

SIMPLE = [
    "until=Question:,max_gen_toks=128",
    "a=1,b=x=y,c=True",
    "a='1',b=\"x\",c=none,d=-3,e=+4,f=1.5e2",
    "a=[1,2],b=3",
    "  a=1 ,b= 2 ",
    "a,b=1",
    "a=,b=",
    ",,a=1,,",
    "",
    "a=--1,b=+-2,c=inf,d=nan",
]


def main():
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.error = lambda msg: (_ for _ in ()).throw(ValueError(msg))
    parser.add_argument("--flag", nargs="+", action=MergeDictAction, default=None)
    flags = []
    for values in FLAG_VALUES:
        entry = {"values": values, "split_top_level": [split_top_level(v) for v in values]}
        try:
            ns = parser.parse_args(["--flag", *values])
            entry["result"] = json.dumps(ns.flag, default=str)
        except Exception as e:
            entry["error"] = f"{type(e).__name__}: {e}"
        flags.append(entry)
    simple = []
    for s in SIMPLE:
        entry = {"text": s}
        try:
            entry["result"] = json.dumps(simple_parse_args_string(s), default=str)
        except Exception as e:
            entry["error"] = f"{type(e).__name__}: {e}"
        simple.append(entry)
    with open(OUT, "w") as f:
        json.dump({"merge_dict_flag": flags, "simple_parse_args_string": simple}, f, indent=1,
                  ensure_ascii=False)
        f.write("\n")
    print(len(flags), "flag cases,", len(simple), "simple cases")


if __name__ == "__main__":
    main()
