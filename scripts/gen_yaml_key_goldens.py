#!/usr/bin/env python3
"""Goldens for YAML mapping keys that PyYAML reads as other types than str (yes/no -> bool,
1 -> int, 1.5 -> float, ~ -> None): the mapping's repr() (as a prompt or str() shows it) and
json.dumps (as the reference writes task configs into results). Output:
tests/config/goldens/yaml_keys.json. Usage: <python with PyYAML>/bin/python scripts/gen_yaml_key_goldens.py
"""
import json
import os

import yaml

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "config", "goldens",
                   "yaml_keys.json")
DOCS = [
    "m:\n  no: \"No\"\n  yes: \"Yes\"\n",
    "m: {on: a, off: b, True: c}\n",
    "m:\n  1: one\n  -2: minus two\n  0x10: hex\n  1.5: x\n  .inf: inf\n  ~: n\n  null: m\n  s: plain\n",
    "m: {'yes': quoted, yes: unquoted}\n",
]
out = []
for d in DOCS:
    m = yaml.safe_load(d)["m"]
    out.append({"yaml": d, "repr": repr(m), "json": json.dumps(m), "values": list(m.values())})
with open(OUT, "w") as f:
    json.dump(out, f, indent=1, default=str)
    f.write("\n")
for e in out:
    print(e["repr"], e["json"])
