"""What gen_vllm_goldens.py and gen_sglang_goldens.py share: the fake engine package of the C++
tests put first on sys.path (before the reference's backend imports it) with its record file,
the records read back, the requests both send, and the goldens file written with the model's
path relative to the checkout."""
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "models", "stories260K")

LL = [("Once upon a time", " there was"), ("The cat", " sat on the mat"), ("", "Hello"),
      ("Lily liked ", "to play"), ("A", " B C D E F G H I J K L M N O P Q R S T U V W X Y Z")]
ROLL = ["Once upon a time there was a little girl named Lily. She liked to play outside.",
        "", "One day"]


class Fake:
    """The fake package tests/models/api/<folder> first on sys.path, recording to a fresh file
    named by $<env>."""

    def __init__(self, folder, env):
        sys.path.insert(0, os.path.join(ROOT, "tests", "models", "api", folder))
        self.record = tempfile.mktemp()
        os.environ[env] = self.record

    def records(self):
        """The records since the last call (JSON lines), the file then removed."""
        if not os.path.exists(self.record):
            return []
        with open(self.record) as f:
            out = [json.loads(line) for line in f]
        os.remove(self.record)
        return out

    def make(self, backend, args, kind):
        """The reference's `backend` built as a model_args string `args` asks, and the keywords
        of the engines it built (the records of `kind`)."""
        from lm_eval.utils import simple_parse_args_string

        lm = backend(pretrained=MODEL, **simple_parse_args_string(args))
        return lm, [r["kwargs"] for r in self.records() if r["kind"] == kind]


def inst(kind, args):
    from lm_eval.api.instance import Instance  # after the fake is first on sys.path

    return Instance(request_type=kind, doc={}, arguments=args, idx=0)


def dump(gen, cases, mappings, kwargs_key, model_key):
    """The goldens to stdout, each engine keywords' `model_key` relative to the checkout."""
    for c in cases + mappings:
        for kw in c[kwargs_key]:
            kw[model_key] = os.path.relpath(kw[model_key], ROOT)
    json.dump({"requests": {"loglikelihood": LL, "loglikelihood_rolling": ROLL,
                            "generate_until": gen},
               "cases": cases, "mappings": mappings}, sys.stdout, indent=1)
    print()
